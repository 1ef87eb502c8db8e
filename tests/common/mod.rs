//! Fixtures and helpers shared by the integration tests: a user's own model
//! files (`--models`) and a run of the binary with a time limit.
#![allow(dead_code)] // each test crate uses its own part

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The 1-based line of the first line of `text` that starts with `prefix`.
pub fn line_of(text: &str, prefix: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting with `{prefix}` in:\n{text}"))
        + 1
}

/// Runs the iosim binary with `args` and returns what it did.
pub fn iosim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iosim"))
        .args(args)
        .output()
        .expect("the iosim binary runs")
}

/// The standard output of a run that must have succeeded (else its exit
/// code and standard error in the panic).
pub fn succeeded(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A valid bus-mode model named `name` (a PCI-X 66 under another name).
pub fn bus_toml(name: &str) -> String {
    format!(
        r#"kind = "bus"
name = "{name}"
description = "PCI-X 66 MHz, 64 bit, for tests"
protocol = "pcix"

[param]
clock = {{ value = 66.67, unit = "MHz", source = "PCI-X Addendum 1.0" }}
transfers_per_clock = {{ value = 1, unit = "count", source = "PCI-X Addendum 1.0" }}
width = {{ value = 64, unit = "bit", source = "PCI-X Addendum 1.0" }}
write_overhead_clocks = {{ value = 6, unit = "clocks", source = "PCI-X 1.0" }}
read_request_clocks = {{ value = 6, unit = "clocks", source = "PCI-X 1.0" }}
completion_overhead_clocks = {{ value = 6, unit = "clocks", source = "PCI-X 1.0" }}
latency_timer_clocks = {{ value = 64, unit = "clocks", source = "assumed" }}
max_burst = {{ value = 4096, unit = "bytes", source = "PCI-X 1.0" }}
"#
    )
}

/// Runs iosim with `args` in `dir`, no standard input, reading its output as
/// it runs (a full pipe cannot stall it); a run still going after `limit` is
/// killed and fails the test as a hang. Returns the output and the time taken.
pub fn run_within(dir: &Path, args: &[&str], limit: Duration) -> (Output, Duration) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_iosim"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the iosim binary runs");
    let mut so = child.stdout.take().expect("piped");
    let mut se = child.stderr.take().expect("piped");
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let err = String::from_utf8_lossy(&t_err.join().unwrap_or_default()).into_owned();
            panic!("iosim {args:?} ran past {limit:?} (a hang); stderr:\n{err}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = t0.elapsed();
    let out = Output {
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
    };
    (out, elapsed)
}

/// A test server model file: `name`, the base parameters below with the
/// values of `overrides` (key, `value` and `unit` as written) put in their
/// place, and `slots` (`[[slot]]` tables) appended.
pub fn server_toml(name: &str, overrides: &[(&str, &str)], slots: &str) -> String {
    const PARAM: [(&str, &str); 16] = [
        ("cells_max", "value = 2, unit = \"cells\""),
        ("cpus_per_cell", "value = 2, unit = \"cpus\""),
        ("memory_local_latency", "value = 180, unit = \"ns\""),
        ("memory_remote_latency", "value = 400, unit = \"ns\""),
        ("cache_line", "value = 64, unit = \"bytes\""),
        ("line_fetches_in_flight", "value = 8, unit = \"lines\""),
        ("io_read_latency", "value = 900, unit = \"ns\""),
        ("rope_bandwidth", "value = 250, unit = \"MB/s\""),
        ("rope_packet_overhead", "value = 8, unit = \"bytes\""),
        ("cpu_per_packet", "value = 5, unit = \"us\""),
        ("cpu_per_segment_sent", "value = 5, unit = \"us\""),
        ("cpu_misses_per_packet", "value = 0, unit = \"count\""),
        ("cpu_remote_memory_latency", "value = 300, unit = \"ns\""),
        ("cpu_per_kb", "value = 0, unit = \"us\""),
        ("cpu_per_io", "value = 20, unit = \"us\""),
        ("tcp_ack_every", "value = 2, unit = \"count\""),
    ];
    const BRIDGE: [(&str, &str); 6] = [
        ("posted_write_buffer", "value = 2048, unit = \"bytes\""),
        ("delayed_read_slots", "value = 1, unit = \"count\""),
        ("delayed_read_prefetch", "value = 1024, unit = \"bytes\""),
        ("retry_interval", "value = 100, unit = \"ns\""),
        (
            "register_reads_use_delayed_slots",
            "value = 0, unit = \"count\"",
        ),
        ("posted_writes_cut_through", "value = 0, unit = \"count\""),
    ];
    let line = |(key, value): &(&str, &str)| {
        let value = overrides
            .iter()
            .find(|(k, _)| k == key)
            .map_or(*value, |(_, v)| *v);
        format!("{key} = {{ {value}, source = \"test\" }}\n")
    };
    let mut s = format!(
        "kind = \"server\"\nname = \"{name}\"\ndescription = \"A test server\"\n\n[param]\n"
    );
    s.extend(PARAM.iter().map(line));
    // Optional parameters appear only when given.
    for (key, value) in overrides {
        if !PARAM.iter().chain(&BRIDGE).any(|(k, _)| k == key) {
            s.push_str(&format!("{key} = {{ {value}, source = \"test\" }}\n"));
        }
    }
    s.push_str("\n[bridge]\n");
    s.extend(BRIDGE.iter().map(line));
    s.push('\n');
    s.push_str(slots);
    s
}

/// Makes a FIFO at `path` (with the `mkfifo` command).
pub fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

/// `iosim run --format json SCENARIO` (with `--models DIR` if given): the
/// parsed output; a failed run fails the test with iosim's message.
#[allow(dead_code)]
pub fn run_json(models: Option<&Path>, scenario: &Path) -> serde_json::Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iosim"));
    cmd.args(["run", "--format", "json"]);
    if let Some(dir) = models {
        cmd.arg("--models").arg(dir);
    }
    let out = cmd.arg(scenario).output().expect("iosim runs");
    assert!(
        out.status.success(),
        "{}: {}",
        scenario.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json output")
}

/// Per bus of a `run --format json` output: (label, mode, data MB/s, peak MB/s).
#[allow(dead_code)]
pub fn bus_rows(v: &serde_json::Value) -> Vec<(String, String, f64, f64)> {
    v["buses"]
        .as_array()
        .expect("buses")
        .iter()
        .map(|b| {
            (
                b["bus"].as_str().expect("label").to_string(),
                b["mode"].as_str().expect("mode").to_string(),
                b["data_MB_s"].as_f64().expect("data"),
                b["peak_MB_s"].as_f64().expect("peak"),
            )
        })
        .collect()
}

/// One `[[experiment]]` of ATM adapters `cards` (adapter, slot) on `server` against the
/// 1999 ATM lab, each card (`c0`, `c1`, ...) over `link` running netperf `direction` with
/// `sizes_kib`: its socket and its sends, in KiB.
#[allow(dead_code)]
pub fn atm_experiment(
    id: &str,
    server: &str,
    cards: &[(&str, &str)],
    link: &str,
    direction: &str,
    sizes_kib: (u32, u32),
) -> String {
    let (socket_kib, message_kib) = sizes_kib;
    let mut s = format!(
        "\n[[experiment]]\nid = \"{id}\"\nserver = \"{server}\"\ntestbed = \"hp-1999-atm-lab\"\ncells = 1\n"
    );
    for (i, (adapter, slot)) in cards.iter().enumerate() {
        s += &format!(
            "\n[[experiment.card]]\nname = \"c{i}\"\nadapter = \"{adapter}\"\nslot = \"{slot}\"\nlink = \"{link}\"\n"
        );
    }
    for i in 0..cards.len() {
        s += &format!(
            "\n[[experiment.workload]]\ncard = \"c{i}\"\nfunction = \"atm\"\nkind = \"netperf-tcp-stream\"\ndirection = \"{direction}\"\nsocket_kib = {socket_kib}\nmessage_kib = {message_kib}\n"
        );
    }
    s
}

/// The JSON of `iosim validate --format json` (the bundled fit, seed 1),
/// which must have succeeded.
pub fn validate_json() -> serde_json::Value {
    let out = iosim(&["validate", "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// The names in `dir`, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A scenario `name` of one experiment `rx`: GigE receive (netperf TCP
/// stream, 128 KiB socket, 32 KiB messages) on the A9782A in the SEU's
/// first slot of `server` (an rp8400 + SEU or a model extending it), one
/// cell, `duration_ms` measured.
pub fn gige_receive_scenario(name: &str, server: &str, duration_ms: u32) -> String {
    format!(
        r#"[scenario]
name = "{name}"

[run]
warmup_ms = 2
duration_ms = {duration_ms}

[[experiment]]
id = "rx"
server = "{server}"
testbed = "hp-2004-lab"
cells = 1

[[experiment.card]]
adapter = "a9782a"
slot = "seu-1"

[[experiment.workload]]
card = "a9782a"
function = "gige"
kind = "netperf-tcp-stream"
direction = "receive"
socket_kib = 128
message_kib = 32
"#
    )
}
