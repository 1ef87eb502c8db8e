//! Adapter processors and the array's service time by size: an HBA's own
//! processor caps its port's IOPS at about the inverse of its time per I/O,
//! and a per-KiB array service time slows large blocks more than small ones.

mod common;

/// The bundled A9782A, renamed, its FC function given `extra` parameters.
fn adapter(extra: &str) -> String {
    let text = include_str!("../models/adapters/a9782a.toml").replacen(
        "name = \"a9782a\"",
        "name = \"a9782a-test\"",
        1,
    );
    let fc_params = text
        .find("[function.param]")
        .expect("the FC function's parameters");
    let at = fc_params + "[function.param]\n".len();
    format!("{}{extra}\n{}", &text[..at], &text[at..])
}

/// FC read MB/s of diskbench with `block_kib` blocks and `outstanding` I/Os
/// on the test adapter, with `testbed_extra` parameters added to a copy of
/// the bundled test bed (500 us service time).
fn fc_read(adapter_extra: &str, testbed_extra: &str, block_kib: u32, outstanding: u32) -> f64 {
    let dir = tempfile::tempdir().expect("temp dir");
    let models = dir.path().join("models");
    std::fs::create_dir(&models).expect("models dir");
    std::fs::write(models.join("a.toml"), adapter(adapter_extra)).expect("adapter");
    let testbed = include_str!("../models/testbeds/hp-2004-lab.toml").replacen(
        "name = \"hp-2004-lab\"",
        "name = \"test-lab\"",
        1,
    );
    let at = testbed.find("[param]").expect("test bed parameters") + "[param]\n".len();
    let testbed = format!("{}{testbed_extra}\n{}", &testbed[..at], &testbed[at..]);
    std::fs::write(models.join("t.toml"), testbed).expect("testbed");
    let scenario = format!(
        r#"[scenario]
name = "card-processor"
title = "FC read, {block_kib} KiB"

[run]
warmup_ms = 2
duration_ms = 10

[[experiment]]
id = "rd"
server = "rp8400-seu"
testbed = "test-lab"
cells = 1

[[experiment.card]]
adapter = "a9782a-test"
slot = "seu-1"

[[experiment.workload]]
card = "a9782a-test"
function = "fc"
kind = "diskbench"
direction = "read"
block_kib = {block_kib}
outstanding = {outstanding}
"#
    );
    let sc = dir.path().join("s.toml");
    std::fs::write(&sc, scenario).expect("scenario");
    let v = common::run_json(Some(&models), &sc);
    v["functions"]
        .as_array()
        .expect("functions")
        .iter()
        .find(|f| f["function"] == "a9782a-test.fc")
        .expect("the FC function")["in_MB_s"]
        .as_f64()
        .expect("MB/s")
}

#[test]
fn a_card_processor_caps_iops_at_the_inverse_of_its_time_per_io() {
    let free = fc_read("", "", 1, 16);
    let per_io_us = 100.0;
    let capped = fc_read(
        &format!("processor_per_io = {{ value = {per_io_us}, unit = \"us\", source = \"test\" }}"),
        "",
        1,
        16,
    );
    let iops = capped * 1e6 / 1024.0;
    let cap = 1e6 / per_io_us;
    assert!(
        iops <= cap * 1.01 && iops > 0.9 * cap,
        "{iops:.0} IOPS with {per_io_us} us per I/O (cap {cap:.0}); {:.0} without",
        free * 1e6 / 1024.0
    );
    assert!(
        free > 1.2 * capped,
        "without it: {free} MB/s, with: {capped}"
    );
}

#[test]
fn the_array_service_time_grows_with_the_block() {
    let per_kib = "target_per_kib = { value = 20, unit = \"us\", source = \"test\" }";
    // One I/O at a time: each I/O waits for the array.
    let small = (fc_read("", "", 4, 1), fc_read("", per_kib, 4, 1));
    let large = (fc_read("", "", 128, 1), fc_read("", per_kib, 128, 1));
    let loss = |(a, b): (f64, f64)| 1.0 - b / a;
    assert!(
        loss(large) > 2.0 * loss(small).max(0.0) && loss(large) > 0.1,
        "4 KiB {small:?}, 128 KiB {large:?}"
    );
}
