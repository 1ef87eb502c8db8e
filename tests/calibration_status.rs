//! Calibration status: an experiment whose throughput rests on an `assumed`
//! value that matters is marked uncalibrated. A user server derived from
//! the bundled rp8400 + SEU whose only per-packet CPU cost is an assumed
//! guess makes GigE receive CPU-bound on that guess; moved over its range
//! (by default a factor of 1.5 either way) the throughput leaves its 90%
//! interval. Stated narrow, the same value moves it too little to matter.

use serde_json::Value;

mod common;

/// A server whose per-packet CPU cost is an assumed guess, large enough to
/// make one GigE port's receive CPU-bound. `RANGE` is replaced by the
/// value's `range` key (or nothing).
const SERVER: &str = r#"kind = "server"
name = "cpu-guess"
extends = "rp8400-seu"

[param]
cpu_per_packet = { value = 60, unit = "us", source = "assumed: a what-if guess"RANGE }
"#;

/// `iosim run --format json` of the scenario on the server with `range`.
fn run(range: &str, extra: &[&str]) -> (Value, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let models = dir.path().join("models");
    std::fs::create_dir_all(&models).expect("mkdir");
    std::fs::write(models.join("guess.toml"), SERVER.replace("RANGE", range)).expect("write");
    let scen = dir.path().join("scen.toml");
    std::fs::write(
        &scen,
        common::gige_receive_scenario("status-test", "cpu-guess", 10),
    )
    .expect("write");
    let (m, s) = (models.to_string_lossy(), scen.to_string_lossy());
    let mut args = vec!["run", &*s, "--format", "json", "--models", &*m];
    args.extend_from_slice(extra);
    let out = common::iosim(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let json = serde_json::from_str(&common::succeeded(&out)).expect("json");
    (json, stderr)
}

/// The `assumed` row of `param` for experiment `rx`.
fn assumed_row<'a>(v: &'a Value, param: &str) -> &'a Value {
    v["assumed"]
        .as_array()
        .expect("an assumed section")
        .iter()
        .find(|r| r["experiment"] == "rx" && r["parameter"] == param)
        .unwrap_or_else(|| panic!("no row for {param}: {v}"))
}

#[test]
fn an_experiment_resting_on_an_assumed_cpu_cost_is_uncalibrated() {
    let (v, stderr) = run("", &[]);
    let status = &v["calibration"][0];
    assert_eq!(status["experiment"], "rx");
    assert_eq!(status["status"], "uncalibrated", "{status}");
    assert_eq!(status["largest_by"], "server.cpu-guess.cpu_per_packet");
    let row = assumed_row(&v, "server.cpu-guess.cpu_per_packet");
    assert_eq!(row["range"], "default x1.5");
    assert_eq!(row["range_low"].as_f64(), Some(40.0));
    assert_eq!(row["range_high"].as_f64(), Some(90.0));
    // CPU-bound: a dearer packet slows it, a cheaper one speeds it up,
    // each by more than a few percent.
    let (low, high) = (
        row["low_move_pct"].as_f64().expect("low"),
        row["high_move_pct"].as_f64().expect("high"),
    );
    assert!(low > 20.0 && high < -20.0, "{row}");
    assert_eq!(row["beyond_interval"], "yes");
    assert!(stderr.contains("moved beyond its 90% interval"), "{stderr}");
    // The inherited assumed values it reads are named under the model that
    // writes them.
    assumed_row(&v, "server.rp8400-seu.cpu_misses_per_packet");
}

#[test]
fn a_narrow_stated_range_keeps_the_same_value_inside_its_interval() {
    let (v, _) = run(", range = [58, 62]", &[]);
    let row = assumed_row(&v, "server.cpu-guess.cpu_per_packet");
    assert_eq!(row["range"], "stated");
    assert_eq!(row["beyond_interval"], "no", "{row}");
    let high = row["high_move_pct"].as_f64().expect("high");
    assert!(high < 0.0 && high > -10.0, "{row}");
}

#[test]
fn no_sensitivity_skips_the_calibration_status() {
    let (v, _) = run("", &["--no-sensitivity"]);
    assert!(v.get("calibration").is_none() && v.get("assumed").is_none());
}

#[test]
fn validate_with_sensitivity_gives_each_experiment_behind_the_figures_a_status() {
    let out = common::iosim(&[
        "validate",
        "--paper",
        "hp-rp7410",
        "--sensitivity",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&common::succeeded(&out)).expect("json");
    let status = v["calibration"].as_array().expect("a calibration section");
    let experiments: std::collections::BTreeSet<&str> = v["figures"]
        .as_array()
        .expect("figures")
        .iter()
        .map(|f| f["experiment"].as_str().expect("an experiment"))
        .collect();
    assert_eq!(status.len(), experiments.len(), "{status:?}");
    for s in status {
        let name = s["experiment"].as_str().expect("a name");
        let id = name.rsplit('/').next().expect("an id");
        assert!(experiments.contains(id), "{name}");
        assert!(
            ["calibrated", "uncalibrated"].contains(&s["status"].as_str().expect("status")),
            "{s}"
        );
        assert!(s["assumed_read"].as_u64().expect("a count") > 0, "{s}");
    }
    // Every assumed value read has a row, with both moves where it has both ends.
    let assumed = v["assumed"].as_array().expect("an assumed section");
    let read: u64 = status
        .iter()
        .map(|s| s["assumed_read"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(assumed.len() as u64, read);
}

/// `iosim sweep` of GigE transmit over cells 1 and 2 with `extra` flags.
fn sweep(extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "sweep",
        "scenarios/hp2g/fig3-gige-transmit.toml",
        "--experiment",
        "gige-tx.pcix.c1",
        "--vary",
        "cells=1,2",
    ];
    args.extend_from_slice(extra);
    common::iosim(&args)
}

#[test]
fn sweep_and_place_give_the_status_of_their_baseline_and_best() {
    let v: Value = serde_json::from_str(&common::succeeded(&sweep(&[
        "--sensitivity",
        "--format",
        "json",
    ])))
    .expect("json");
    let status = v["calibration"].as_array().expect("a calibration section");
    assert_eq!(
        status.len(),
        1,
        "the baseline point's one experiment: {status:?}"
    );
    assert_eq!(status[0]["experiment"], "gige-tx.pcix.c1");
    assert!(!v["assumed"].as_array().expect("assumed").is_empty());
    let plain: Value =
        serde_json::from_str(&common::succeeded(&sweep(&["--format", "json"]))).expect("json");
    assert!(plain.get("calibration").is_none());
    assert_eq!(plain["sweep"], v["sweep"], "the points do not change");

    let out = common::iosim(&[
        "place",
        "--server",
        "rx6600",
        "--testbed",
        "hp-2006-msa1500-lab",
        "--card",
        "f=ab379b",
        "--workload",
        "f.port0=diskbench:read",
        "--sensitivity",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&common::succeeded(&out)).expect("json");
    let best = v["placements"][0]["placement"]
        .as_str()
        .expect("a best placement");
    assert_eq!(v["calibration"][0]["experiment"], best, "{v}");
}

#[test]
fn a_sharded_sweep_with_its_status_merges_into_the_unsharded_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut parts = Vec::new();
    for i in 1..=2 {
        let shard = format!("{i}/2");
        let out = common::succeeded(&sweep(&["--sensitivity", "--shard", &shard]));
        let p = dir.path().join(format!("part-{i}.jsonl"));
        std::fs::write(&p, out).expect("write");
        parts.push(p.to_string_lossy().to_string());
    }
    let merged = common::iosim(&["merge", &parts[0], &parts[1]]);
    assert_eq!(
        common::succeeded(&merged),
        common::succeeded(&sweep(&["--sensitivity"]))
    );
}
