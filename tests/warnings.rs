//! Warnings of `run` and `sweep`, driven through the real binary: a run that
//! ends at its ceiling short of its precision, a measured window that starts
//! before the steady state, a test bed without a netperf peer or a disk
//! array; on standard error, as `# warning:` header lines of
//! the table and CSV, and as the JSON `warnings` array (empty when there is
//! none).

mod common;
use common::{iosim, succeeded as stdout};

/// A scenario file `name.toml` in `dir`: one experiment `id` with an A9782A
/// in the rp8400's slot seu-1 on test bed `testbed`, its `[run]` table's
/// body `run` and the workload of its function `function` (the lines after
/// `function = ...`); returns the file.
fn one_card(
    dir: &std::path::Path,
    name: &str,
    id: &str,
    testbed: &str,
    run: &str,
    function: &str,
    workload: &str,
) -> String {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            r#"[scenario]
name = "{name}"
title = "{name}"

[run]
{run}

[[experiment]]
id = "{id}"
server = "rp8400-seu"
testbed = "{testbed}"
cells = 1

[[experiment.card]]
adapter = "a9782a"
slot = "seu-1"

[[experiment.workload]]
card = "a9782a"
function = "{function}"
{workload}
"#
        ),
    )
    .expect("the scenario");
    path.to_str().expect("a UTF-8 path").to_string()
}

/// A GigE transmit experiment on the rp8400 with test bed `testbed`, in a
/// scratch directory; returns the directory and the file.
fn gige_on(testbed: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let file = one_card(
        dir.path(),
        &format!("gige-on-{testbed}"),
        "gige-tx",
        testbed,
        "warmup_ms = 5\nduration_ms = 20",
        "gige",
        "kind = \"netperf-tcp-stream\"\ndirection = \"transmit\"\nsocket_kib = 128\nmessage_kib = 32",
    );
    (dir, file)
}

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o)).expect("JSON")
}

fn warnings(v: &serde_json::Value) -> Vec<String> {
    v["warnings"]
        .as_array()
        .expect("a warnings array")
        .iter()
        .map(|w| w.as_str().expect("text").to_string())
        .collect()
}

#[test]
fn a_run_short_of_its_precision_is_warned_about_everywhere() {
    // Matrox IP forwarding at 10 Mbit/s half duplex: the collisions keep its
    // throughput's interval near 5% of the mean after the 3 s ceiling, where
    // the scenario asks for 1%.
    let f = "scenarios/matrox/table5-ipfwd.toml";
    let says = "experiment `ipfwd.10half` ran to its ceiling (duration_ms = 3000) short of its precision: the widest 95% interval of its throughputs is 5.05% of the mean, above precision_pct = 1";
    let o = iosim(&["run", f, "--format", "json"]);
    let w = warnings(&json(&o));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].starts_with(says), "{w:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("warning: {says}")), "{err}");
    // The table wraps the header line at 160 columns; the CSV keeps it whole.
    let csv = stdout(&iosim(&["run", f, "--format", "csv"]));
    assert!(csv.contains(&format!("\n# warning: {says}")), "{csv}");
    let table = stdout(&iosim(&["run", f]));
    assert!(
        table.contains("\n# warning: experiment `ipfwd.10half` ran to its ceiling"),
        "{table}"
    );
    // The experiments that reach their precision are not named.
    assert!(!w[0].contains("100full"));
    // The same in a sweep, at the point.
    let o = iosim(&[
        "sweep",
        f,
        "--experiment",
        "ipfwd.10half",
        "--vary",
        "cells=1",
        "--format",
        "json",
    ]);
    let w = warnings(&json(&o));
    assert_eq!(
        w,
        [format!(
            "point `cells=1`: {}",
            warnings(&json(&iosim(&["run", f, "--format", "json"])))[0]
        )]
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("warning: point `cells=1`: experiment"));
}

#[test]
fn a_run_without_doubt_has_an_empty_warnings_array_and_a_quiet_stderr() {
    let (_dir, f) = gige_on("hp-2004-lab");
    let o = iosim(&["run", &f, "--format", "json"]);
    assert!(warnings(&json(&o)).is_empty());
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!stdout(&iosim(&["run", &f])).contains("# warning:"));
    let o = iosim(&[
        "sweep",
        &f,
        "--vary",
        "socket_kib=64,128",
        "--format",
        "json",
    ]);
    assert!(warnings(&json(&o)).is_empty());
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_netperf_workload_on_a_test_bed_without_a_peer_is_warned_about() {
    // The MSA1500 lab ran no network test: its netperf peer costs are 0, so
    // GigE would run as fast as the server lets it.
    let (_dir, f) = gige_on("hp-2006-msa1500-lab");
    let says = "experiment `gige-tx`: test bed `hp-2006-msa1500-lab` models no netperf peer (every peer cost is 0)";
    let o = iosim(&["run", &f, "--format", "json"]);
    let w = warnings(&json(&o));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with(says) && w[0].contains("card `a9782a`"),
        "{w:?}"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("warning: {says}")));
    let csv = stdout(&iosim(&["run", &f, "--format", "csv"]));
    assert!(csv.contains(&format!("\n# warning: {says}")), "{csv}");
    // A sweep says it once, not once per point.
    let o = iosim(&[
        "sweep",
        &f,
        "--vary",
        "socket_kib=64,128",
        "--format",
        "csv",
    ]);
    let csv = stdout(&o);
    assert_eq!(csv.matches("# warning: ").count(), 1, "{csv}");
    assert!(csv.contains(&format!("# warning: {says}")), "{csv}");
    assert_eq!(
        String::from_utf8_lossy(&o.stderr)
            .matches("warning: ")
            .count(),
        1
    );
}

#[test]
fn a_diskbench_workload_on_a_test_bed_without_an_array_is_warned_about() {
    // A what-if that takes the disk array's latency to 0 is warned about at
    // that point of the parameter only: the array then costs nothing.
    let o = iosim(&[
        "sweep",
        "scenarios/ab379b/rx6600-slot-types.toml",
        "--experiment",
        "slot3.pcix266",
        "--vary",
        "testbed.hp-2006-msa1500-lab.target_latency=0,100us",
        "--format",
        "json",
    ]);
    let w = warnings(&json(&o));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("points with `testbed.hp-2006-msa1500-lab.target_latency=0`: experiment `slot3.pcix266`: test bed `hp-2006-msa1500-lab` models no disk array (target_latency is 0)"),
        "{w:?}"
    );
}

#[test]
fn validate_warns_of_the_runs_short_of_their_precision() {
    let says =
        "experiment `ipfwd.10half` ran to its ceiling (duration_ms = 3000) short of its precision";
    let o = iosim(&["validate", "--paper", "matrox", "--format", "json"]);
    let w = warnings(&json(&o));
    assert!(w.iter().any(|w| w.starts_with(says)), "{w:?}");
    // Only runs short of their precision: the full-duplex ones are not named.
    assert!(w.iter().all(|w| w.contains("half`")), "{w:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("warning: ").count(), w.len(), "{err}");
    assert!(err.contains(&format!("warning: {says}")), "{err}");
    let csv = stdout(&iosim(&[
        "validate", "--paper", "matrox", "--format", "csv",
    ]));
    assert!(csv.contains(&format!("\n# warning: {says}")), "{csv}");
}

#[test]
fn place_warns_of_a_test_bed_without_a_netperf_peer_and_is_quiet_without_doubt() {
    // The MSA1500 lab has a disk array but no netperf peer: the GigE card's
    // placement is judged with its far end free.
    let o = iosim(&[
        "place",
        "tests/place/rx6600-ab379b-gige.toml",
        "--format",
        "json",
    ]);
    let w = warnings(&json(&o));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with(
            "request `rx6600-ab379b-gige`: test bed `hp-2006-msa1500-lab` models no netperf peer"
        ) && w[0].contains("card `g`"),
        "{w:?}"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("warning: {}", w[0])));
    let table = stdout(&iosim(&["place", "tests/place/rx6600-ab379b-gige.toml"]));
    assert!(
        table.contains("\n# warning: request `rx6600-ab379b-gige`"),
        "{table}"
    );
    // Disk workloads alone on the same lab: nothing to say.
    let o = iosim(&[
        "place",
        "tests/place/rx6600-ab379b.toml",
        "--format",
        "json",
    ]);
    assert!(warnings(&json(&o)).is_empty());
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_html_report_has_a_warnings_section() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let out = dir.path().join("r.html");
    let o = iosim(&[
        "report",
        "--out",
        out.to_str().expect("UTF-8"),
        "--format",
        "json",
    ]);
    let w = warnings(&json(&o));
    assert!(
        !w.is_empty(),
        "the Matrox half-duplex runs end short of their precision"
    );
    let html = std::fs::read_to_string(&out).expect("the report");
    assert!(html.contains(">Warnings</h2>"), "no warnings section");
    for x in &w {
        let x = iosim::html::escape(x);
        assert!(
            html.contains(&format!("<p>Warning: {x}</p>")),
            "{x} not in the report"
        );
    }
    assert_eq!(
        String::from_utf8_lossy(&o.stderr)
            .matches("warning: ")
            .count(),
        w.len()
    );
}

/// A scratch directory with a test bed whose disk array answers a 128 KB
/// read in 3 ms with 16 reads outstanding, and an FC read on the rp8400
/// against it with `warmup_ms` of warm-up and a fixed 15 ms window: the
/// array answers nothing for the first 3 ms, then the link runs full.
fn slow_array_read(warmup_ms: u32) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let models = dir.path().join("models");
    std::fs::create_dir(&models).expect("a models directory");
    std::fs::write(
        models.join("slow-array-lab.toml"),
        r#"kind = "testbed"
name = "slow-array-lab"
description = "A disk array slow to answer, with many reads outstanding"

[param]
peer_turnaround = { value = 20, unit = "us", source = "assumed" }
peer_cpu_per_segment = { value = 0, unit = "us", source = "assumed" }
target_latency = { value = 3000, unit = "us", source = "assumed" }
diskbench_outstanding = { value = 16, unit = "count", source = "assumed" }
"#,
    )
    .expect("the test bed");
    let file = one_card(
        dir.path(),
        "slow-array-read",
        "fc-rd",
        "slow-array-lab",
        &format!("warmup_ms = {warmup_ms}\nduration_ms = 15\nbatch_ms = 0.5"),
        "fc",
        "kind = \"diskbench\"\ndirection = \"read\"\nblock_kib = 128",
    );
    let models = models.to_str().expect("a UTF-8 path").to_string();
    (dir, models, file)
}

#[test]
fn a_window_that_starts_before_the_steady_state_is_measured_again_and_warned_of() {
    // `run` of the slow array read warmed up for `warmup_ms`: its warnings,
    // standard error and the FC port's throughput in MB/s.
    let run = |warmup_ms| {
        let (_dir, models, file) = slow_array_read(warmup_ms);
        let args = ["run", "--no-sensitivity", "--format", "json", "--models"];
        let o = iosim(&[&args[..], &[models.as_str(), file.as_str()]].concat());
        let v = json(&o);
        let fc = v["functions"]
            .as_array()
            .expect("functions")
            .iter()
            .find(|f| f["function"] == "a9782a.fc")
            .and_then(|f| f["total_MB_s"].as_f64())
            .expect("the FC port's throughput");
        let stderr = String::from_utf8_lossy(&o.stderr).to_string();
        (warnings(&v), stderr, fc)
    };
    let (w, stderr, cold) = run(0);
    assert_eq!(
        w,
        ["experiment `fc-rd` had not settled when its measurement began: its first window became warm-up and it was measured again from 15 ms; warmup_ms = 15 (now 0) saves that window"]
    );
    assert!(stderr.contains("had not settled"));
    // Warmed up past the array's first answers, the window is steady and
    // measures what the window measured again does (the link's 206.5 MB/s
    // less its frames' overhead), not the 165 MB/s of a window whose first
    // 3 ms carry nothing.
    let (w, _, warm) = run(5);
    assert_eq!(w, Vec::<String>::new());
    assert!(
        (cold - warm).abs() < 0.01 * warm && warm > 200.0,
        "{cold} {warm}"
    );
}
