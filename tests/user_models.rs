//! Hardware as data: a server, an adapter and a scenario written outside the
//! repository and given to `iosim run --models DIR`, with no code change.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

mod common;

/// The slots of the test server: one PCI-X slot and one PCI-66 slot.
const SLOTS: &str = r#"[[slot]]
name = "tslot-pcix"
modes = ["pcix133", "pcix66"]
ropes = 2

[[slot]]
name = "tslot-pci"
modes = ["pci66", "pci33-64"]
ropes = 1
"#;

/// A two-cell server with the structure of `rp8400-seu` but its own name
/// and slots; `extra` parameters set or added (key, value and unit).
fn server(extra: &[(&str, &str)]) -> String {
    common::server_toml("test-server", extra, SLOTS)
}

/// A single-function Gigabit Ethernet NIC that only runs PCI-X.
const ADAPTER: &str = r#"kind = "adapter"
name = "test-nic"
description = "A single-port GigE NIC, PCI-X only"
modes = ["pcix133", "pcix66"]

[[function]]
name = "eth0"
engine = "nic"
link = "gige"

[function.param]
max_read = { value = 1024, unit = "bytes", source = "test" }
max_outstanding_reads = { value = 2, unit = "count", source = "test" }
write_burst = { value = 512, unit = "bytes", source = "test" }
descriptor = { value = 16, unit = "bytes", source = "test" }
rx_descriptor_batch = { value = 8, unit = "count", source = "test" }
tx_ring_frames = { value = 64, unit = "frames", source = "test" }
tx_fifo = { value = 16, unit = "KiB", source = "test" }
rx_fifo = { value = 16, unit = "KiB", source = "test" }
pio_reads_per_interrupt = { value = 1, unit = "count", source = "test" }
"#;

/// A scenario on the test hardware; `{SLOT}` is replaced by the slot name.
const SCENARIO: &str = r#"[scenario]
name = "user-models"
title = "a user's own server and NIC"

[run]
warmup_ms = 1
duration_ms = 5

[[experiment]]
id = "tx-on-test-server"
server = "test-server"
testbed = "hp-2004-lab"
cells = 2

[[experiment.card]]
adapter = "test-nic"
slot = "{SLOT}"

[[experiment.workload]]
card = "test-nic"
function = "eth0"
kind = "netperf-tcp-stream"
direction = "transmit"
socket_kib = 64
message_kib = 32
"#;

/// Writes the model files under `dir/models/` and a scenario using `slot`;
/// returns (models dir, scenario path).
fn write_inputs(dir: &Path, slot: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let models = dir.join("models");
    std::fs::create_dir_all(models.join("servers")).unwrap();
    std::fs::create_dir_all(models.join("adapters")).unwrap();
    std::fs::write(models.join("servers/test-server.toml"), server(&[])).unwrap();
    std::fs::write(models.join("adapters/test-nic.toml"), ADAPTER).unwrap();
    let scenario = dir.join("scenario.toml");
    std::fs::write(&scenario, SCENARIO.replace("{SLOT}", slot)).unwrap();
    (models, scenario)
}

fn iosim(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iosim"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the iosim binary runs")
}

/// `iosim run --models MODELS SCENARIO --format json` in `dir`, which must
/// succeed; its standard output.
fn run_json(dir: &Path, models: &Path, scenario: &Path) -> String {
    let out = iosim(
        dir,
        &[
            "run",
            "--models",
            models.to_str().unwrap(),
            scenario.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn run_accepts_a_new_server_and_adapter_from_a_models_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (models, scenario) = write_inputs(tmp.path(), "tslot-pcix");
    let text = run_json(tmp.path(), &models, &scenario);
    for name in [
        "test-server",
        "test-nic",
        "tslot-pcix",
        "eth0",
        "user-models",
    ] {
        assert!(
            text.contains(name),
            "output does not mention `{name}`:\n{text}"
        );
    }
    let v: Value = serde_json::from_str(&text).expect("JSON output");
    let inputs = v["inputs"].as_array().expect("inputs section");
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0]["server"], "test-server");
    assert_eq!(inputs[0]["adapter"], "test-nic");
    assert_eq!(inputs[0]["slot"], "tslot-pcix");
    assert_eq!(
        inputs[0]["bus_mode"], "pcix133",
        "the card's first mode the slot offers"
    );
    assert_eq!(inputs[0]["cells"], 2);

    let funcs = v["functions"].as_array().expect("functions section");
    assert_eq!(funcs.len(), 1, "a single-function card: {funcs:?}");
    let f = &funcs[0];
    assert_eq!(f["function"], "test-nic.eth0");
    assert_eq!(f["link"], "gige");
    let out_mb = f["out_MB_s"].as_f64().expect("out_MB_s");
    let ceiling = f["link_ceiling_MB_s"].as_f64().expect("link ceiling");
    assert!(out_mb > 0.0, "transmit throughput is {out_mb} MB/s");
    assert!(
        out_mb <= ceiling * 1.005,
        "{out_mb} MB/s above the link ceiling {ceiling}"
    );

    let buses = v["buses"].as_array().expect("buses section");
    assert_eq!(buses.len(), 1);
    assert_eq!(buses[0]["bus"], "test-nic@tslot-pcix");
}

#[test]
fn run_with_user_models_prints_a_readable_table_too() {
    let tmp = tempfile::tempdir().unwrap();
    write_inputs(tmp.path(), "tslot-pcix");
    // Relative paths, resolved in the temp dir: nothing depends on the repository.
    let out = iosim(tmp.path(), &["run", "--models", "models", "scenario.toml"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("test-server") && text.contains("test-nic.eth0"),
        "{text}"
    );
    for section in ["inputs", "functions", "buses", "experiments"] {
        assert!(
            text.contains(&format!("## {section}")),
            "no `{section}` section:\n{text}"
        );
    }
}

#[test]
fn user_models_appear_in_params_with_their_files() {
    let tmp = tempfile::tempdir().unwrap();
    let (models, _) = write_inputs(tmp.path(), "tslot-pcix");
    let out = iosim(
        tmp.path(),
        &[
            "params",
            "--models",
            models.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["parameters"].as_array().expect("parameters section");
    let row = rows
        .iter()
        .find(|r| r["parameter"] == "server.test-server.io_read_latency")
        .expect("the new server's parameters are listed");
    assert_eq!(row["value"], 900.0);
    assert_eq!(row["unit"], "ns");
    assert!(
        row["file"].as_str().unwrap().contains("test-server.toml:"),
        "{row}"
    );
    assert!(rows
        .iter()
        .any(|r| r["parameter"] == "adapter.test-nic.eth0.max_read"));
}

#[test]
fn a_card_in_a_slot_without_a_common_mode_is_rejected_with_file_key_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let (models, scenario) = write_inputs(tmp.path(), "tslot-pci");
    let scenario_s = scenario.to_str().unwrap();
    let out = iosim(
        tmp.path(),
        &["run", "--models", models.to_str().unwrap(), scenario_s],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing on stdout on error");
    let line = common::line_of(SCENARIO, "slot = ");
    assert!(
        stderr.contains(&format!("{scenario_s}:{line}")),
        "stderr does not name {scenario_s}:{line}:\n{stderr}"
    );
    assert!(
        stderr.contains("key `experiment[0].card[0].slot`"),
        "stderr does not name the key:\n{stderr}"
    );
    assert!(
        stderr.contains("test-nic") && stderr.contains("tslot-pci"),
        "{stderr}"
    );
}

#[test]
fn cells_beyond_the_user_servers_maximum_are_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let (models, scenario) = write_inputs(tmp.path(), "tslot-pcix");
    let text = std::fs::read_to_string(&scenario)
        .unwrap()
        .replace("cells = 2", "cells = 3");
    std::fs::write(&scenario, &text).unwrap();
    let scenario_s = scenario.to_str().unwrap();
    let out = iosim(
        tmp.path(),
        &["run", "--models", models.to_str().unwrap(), scenario_s],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    let line = common::line_of(&text, "cells = ");
    assert!(stderr.contains(&format!("{scenario_s}:{line}")), "{stderr}");
    assert!(stderr.contains("key `experiment[0].cells`"), "{stderr}");
}

#[test]
fn user_models_are_unknown_without_the_models_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, scenario) = write_inputs(tmp.path(), "tslot-pcix");
    let out = iosim(tmp.path(), &["run", scenario.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(stderr.contains("unknown server `test-server`"), "{stderr}");
}

/// A copy of a bundled server given with `--models` replaces it, so the
/// bundled fit no longer reaches it: its values still marked "fitted" are its
/// guesses. The run must say which, in the output and on stderr, not print the
/// bundled fit's name alone.
#[test]
fn a_replaced_bundled_server_keeps_its_guesses_and_the_output_says_so() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let servers = tmp.path().join("models/servers");
    std::fs::create_dir_all(&servers).unwrap();
    std::fs::copy(
        root.join("models/servers/rp8400-seu.toml"),
        servers.join("rp8400-seu.toml"),
    )
    .unwrap();
    let scenario = root.join("scenarios/hp2g/fig2-gige-receive.toml");
    let parameters = |args: &[&str]| {
        let out = iosim(tmp.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
        (
            v["parameters"].as_str().unwrap_or_default().to_owned(),
            stderr,
        )
    };
    let sc = scenario.to_str().unwrap();

    let (label, stderr) = parameters(&["run", sc, "--format", "json"]);
    assert_eq!(label, "<bundled>/models/fitted.toml");
    assert!(!stderr.contains("warning"), "{stderr}");

    let (label, stderr) = parameters(&["run", "--models", "models", sc, "--format", "json"]);
    for text in [&label, &stderr] {
        assert!(
            text.contains("server.rp8400-seu.cpu_per_packet"),
            "the kept guess is not named:\n{text}"
        );
    }
    assert!(
        label.starts_with("<bundled>/models/fitted.toml except "),
        "{label}"
    );
    assert!(stderr.contains("warning"), "{stderr}");

    let fit = root.join("models/fitted.toml");
    let args = [
        "run",
        "--models",
        "models",
        "--params",
        fit.to_str().unwrap(),
        sc,
        "--format",
        "json",
    ];
    let (label, stderr) = parameters(&args);
    assert_eq!(
        label,
        fit.display().to_string(),
        "--params applies to every model"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// Runs GigE transmit on the test server with the optional
/// `cpu_per_send_call` given and netperf's send size `message_kib`; returns
/// (transmit MB/s, utilisation of the busier application CPU in percent).
fn transmit_with_send_calls(dir: &Path, per_call_us: f64, message_kib: u32) -> (f64, f64) {
    let (models, scenario) = write_inputs(dir, "tslot-pcix");
    let per_call = format!("value = {per_call_us}, unit = \"us\"");
    let server = server(&[("cpu_per_send_call", per_call.as_str())]);
    std::fs::write(models.join("servers/test-server.toml"), server).unwrap();
    let text = SCENARIO
        .replace("{SLOT}", "tslot-pcix")
        .replace("message_kib = 32", &format!("message_kib = {message_kib}"));
    std::fs::write(&scenario, text).unwrap();
    let v: Value = serde_json::from_str(&run_json(dir, &models, &scenario)).expect("JSON output");
    let f = &v["functions"][0];
    (
        f["out_MB_s"].as_f64().expect("out_MB_s"),
        f["app_cpu_util_pct"].as_f64().expect("app CPU"),
    )
}

#[test]
fn the_send_size_matters_through_the_cost_of_a_send_call() {
    let tmp = tempfile::tempdir().unwrap();
    // 20 us per call: with 1 KiB sends, more than one call per 1448-byte
    // segment on top of 5 us per segment saturates the sending CPU; with
    // 64 KiB sends, one call per 45 segments costs little.
    let (small_mbs, small_cpu) = transmit_with_send_calls(tmp.path(), 20.0, 1);
    let (big_mbs, big_cpu) = transmit_with_send_calls(tmp.path(), 20.0, 64);
    assert!(
        small_cpu > 99.0,
        "1 KiB sends: application CPU {small_cpu}%"
    );
    assert!(big_cpu < 60.0, "64 KiB sends: application CPU {big_cpu}%");
    // Sending CPU-bound: about 1448 bytes per (5 + 1.41 x 20) us.
    let bound = 1448.0 / (5.0 + 1448.0 / 1024.0 * 20.0);
    assert!(
        small_mbs < 1.05 * bound && small_mbs > 0.8 * bound,
        "1 KiB sends: {small_mbs} MB/s, CPU bound {bound:.1}"
    );
    assert!(big_mbs > 2.0 * small_mbs, "{big_mbs} against {small_mbs}");
    // With the call free, the send size does not matter.
    let (free_small, _) = transmit_with_send_calls(tmp.path(), 0.0, 1);
    let (free_big, _) = transmit_with_send_calls(tmp.path(), 0.0, 64);
    assert_eq!(free_small, free_big);
}
