//! The raw DMA workload (`kind = "dma"` on a bus-test function with no link),
//! run through the real binary from a user's model directory (`--models`)
//! and from the bundled example scenario: what a bus gives a DMA engine with
//! no protocol in the way.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod common;

/// A test bench with a PCI-X 133 slot whose path (eight ropes, a 16 KiB
/// posted-write buffer) does not limit the bus, and a PCI-66 slot.
fn bench_server() -> String {
    common::server_toml(
        "dma-bench",
        &[
            ("cells_max", "value = 1, unit = \"cells\""),
            ("cpus_per_cell", "value = 4, unit = \"cpus\""),
            ("posted_write_buffer", "value = 16, unit = \"KiB\""),
            ("retry_interval", "value = 30, unit = \"ns\""),
        ],
        "[[slot]]\nname = \"x133\"\nmodes = [\"pcix133\"]\nropes = 8\n\n\
         [[slot]]\nname = \"p66\"\nmodes = [\"pci66\"]\nropes = 8\n",
    )
}

/// A bus-test card whose read byte count is `{MAX_READ}`.
const ADAPTER: &str = r#"kind = "adapter"
name = "bench-dma"
description = "A DMA exerciser"
modes = ["pcix133", "pci66"]

[[function]]
name = "dma"
engine = "dma"

[function.param]
max_read = { value = {MAX_READ}, unit = "bytes", source = "test" }
max_outstanding_reads = { value = 4, unit = "count", source = "test" }
write_burst = { value = 4096, unit = "bytes", source = "test" }
"#;

/// One experiment per (slot, direction), 4 KB blocks, four in flight.
fn scenario() -> String {
    let mut s = String::from(
        "[scenario]\nname = \"bench-dma\"\ntitle = \"raw DMA on the bench\"\n\n[run]\nwarmup_ms = 0.5\nduration_ms = 4\n",
    );
    for slot in ["x133", "p66"] {
        for dir in ["read", "write"] {
            s.push_str(&format!(
                r#"
[[experiment]]
id = "{dir}.{slot}"
server = "dma-bench"
testbed = "hp-2004-lab"
cells = 1

[[experiment.card]]
adapter = "bench-dma"
slot = "{slot}"

[[experiment.workload]]
card = "bench-dma"
function = "dma"
kind = "dma"
direction = "{dir}"
block_kib = 4
outstanding = 4
"#
            ));
        }
    }
    s
}

/// Runs the bench with the given read byte count; per experiment id, (MB/s
/// moved, bus peak MB/s, bus utilisation percent).
fn run_bench(dir: &Path, max_read: u32) -> Vec<(String, f64, f64, f64)> {
    let models = dir.join(format!("models-{max_read}"));
    std::fs::create_dir_all(models.join("servers")).expect("models dir");
    std::fs::create_dir_all(models.join("adapters")).expect("models dir");
    std::fs::write(models.join("servers/dma-bench.toml"), bench_server()).expect("write");
    std::fs::write(
        models.join("adapters/bench-dma.toml"),
        ADAPTER.replace("{MAX_READ}", &max_read.to_string()),
    )
    .expect("write");
    let scenario_file = dir.join("bench.toml");
    std::fs::write(&scenario_file, scenario()).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_iosim"))
        .args(["run", "--format", "json", "--models"])
        .arg(&models)
        .arg(&scenario_file)
        .output()
        .expect("iosim runs");
    assert!(
        out.status.success(),
        "iosim run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let functions = v["functions"].as_array().expect("functions");
    let buses = v["buses"].as_array().expect("buses");
    functions
        .iter()
        .zip(buses)
        .map(|(f, b)| {
            (
                f["experiment"].as_str().expect("id").to_string(),
                f["total_MB_s"].as_f64().expect("MB/s"),
                b["peak_MB_s"].as_f64().expect("peak"),
                b["bus_util_pct"].as_f64().expect("util"),
            )
        })
        .collect()
}

fn get<'a>(rows: &'a [(String, f64, f64, f64)], id: &str) -> &'a (String, f64, f64, f64) {
    rows.iter()
        .find(|r| r.0 == id)
        .unwrap_or_else(|| panic!("no experiment {id} in {rows:?}"))
}

#[test]
fn on_pcix133_4k_writes_approach_the_bus_peak() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let rows = run_bench(tmp.path(), 4096);
    let (_, mbs, peak, util) = get(&rows, "write.x133");
    assert!((peak - 1066.7).abs() < 1.0, "PCI-X 133 peak {peak}");
    assert!(
        *mbs > 0.9 * peak && *mbs <= *peak,
        "4 KB writes move {mbs} MB/s of a {peak} MB/s bus"
    );
    assert!(*util > 95.0, "the bus is busy {util}% of the time");
}

#[test]
fn on_pcix133_reads_fall_with_a_smaller_read_byte_count() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let big = get(&run_bench(tmp.path(), 4096), "read.x133").1;
    let small = get(&run_bench(tmp.path(), 512), "read.x133").1;
    assert!(
        small < 0.95 * big,
        "reads: {small} MB/s with 512-byte requests, {big} with 4096-byte"
    );
    // Each 512-byte request costs a request and a completion's overhead: at
    // best 64 data clocks in 76.
    assert!(small < 1066.7 * 64.0 / 76.0, "{small} MB/s");
}

#[test]
fn on_pci66_reads_are_slower_than_writes() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let rows = run_bench(tmp.path(), 4096);
    let read = get(&rows, "read.p66").1;
    let write = get(&rows, "write.p66").1;
    assert!(
        read < 0.8 * write,
        "PCI-66 delayed reads {read} MB/s, posted writes {write} MB/s"
    );
}

#[test]
fn the_bundled_raw_dma_scenario_runs_and_reports_the_bus() {
    let out = Command::new(env!("CARGO_BIN_EXE_iosim"))
        .args([
            "run",
            "--format",
            "json",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/scenarios/bus-tests/rp8400-raw-dma.toml"
            ),
        ])
        .output()
        .expect("iosim runs");
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let functions = v["functions"].as_array().expect("functions");
    let buses = v["buses"].as_array().expect("buses");
    assert_eq!(functions.len(), 6);
    for (f, b) in functions.iter().zip(buses) {
        let mbs = f["total_MB_s"].as_f64().expect("MB/s");
        let data = b["data_MB_s"].as_f64().expect("bus data");
        let peak = b["peak_MB_s"].as_f64().expect("peak");
        assert!(mbs > 50.0, "{f}");
        assert!(mbs <= peak, "{mbs} MB/s above the bus peak {peak}");
        // Everything the function moved crossed its bus (the bus also counts
        // data of blocks not finished when the window closed).
        assert!(data >= 0.97 * mbs && data <= 1.03 * mbs + 5.0, "{f} {b}");
    }
}

#[test]
fn a_dma_workload_rejects_the_keys_of_a_netperf_workload() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let models = tmp.path().join("m");
    std::fs::create_dir_all(models.join("servers")).expect("dir");
    std::fs::create_dir_all(models.join("adapters")).expect("dir");
    std::fs::write(models.join("servers/dma-bench.toml"), bench_server()).expect("write");
    std::fs::write(
        models.join("adapters/bench-dma.toml"),
        ADAPTER.replace("{MAX_READ}", "512"),
    )
    .expect("write");
    let text = scenario().replacen("outstanding = 4\n", "outstanding = 4\nsocket_kib = 64\n", 1);
    let sc = tmp.path().join("s.toml");
    std::fs::write(&sc, text).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_iosim"))
        .args(["run", "--models"])
        .arg(&models)
        .arg(&sc)
        .output()
        .expect("iosim runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("socket_kib") && err.contains("s.toml:26:") && err.contains("dma"),
        "{err}"
    );
}
