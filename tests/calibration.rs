//! Calibration: the fit recovers parameters from figures the model itself
//! made, and bad calibration or fitted-parameter files are located errors.

use std::path::{Path, PathBuf};
use std::process::Command;

use iosim::calibrate::{cross_validate, fit, group_of, lm::LmSettings, Objective, Problem};
use iosim::loader::{load_registry, parse_calibration, parse_scenario};
use iosim::model::{CalibrationSpec, Registry, Scenario};

/// One experiment of the synthetic scenario: the card in slot seu-1 of an
/// rp8400 at the test lab, one workload, and its figure `syn.ID`.
struct Exp<'a> {
    id: &'a str,
    cells: u32,
    function: &'a str,
    kind: &'a str,
    direction: &'a str,
    published: f64,
    unit: &'a str,
    source: &'a str,
}

impl Exp<'_> {
    fn toml(&self) -> String {
        let Exp {
            id,
            cells,
            function,
            kind,
            direction,
            published,
            unit,
            source,
        } = self;
        format!(
            r#"
[[experiment]]
id = "{id}"
server = "rp8400-seu"
testbed = "hp-2004-lab"
cells = {cells}
[[experiment.card]]
adapter = "a9782a"
slot = "seu-1"
[[experiment.workload]]
card = "a9782a"
function = "{function}"
kind = "{kind}"
direction = "{direction}"
[[experiment.figure]]
id = "syn.{id}"
card = "a9782a"
function = "{function}"
published = {published:.6}
unit = "{unit}"
source = "{source}"
"#
        )
    }
}

/// A scenario of three short experiments whose figures depend on the two
/// parameters under test: GigE bidirectional (1 cell), FC on `fc_cells`
/// cells in `fc_direction`, GigE receive (2 cells), with the published values
/// `published`.
fn scenario_text(published: [f64; 3], fc_cells: u32, fc_direction: &str) -> String {
    let gige = |id, cells, direction, published, source| Exp {
        id,
        cells,
        function: "gige",
        kind: "netperf-tcp-stream",
        direction,
        published,
        unit: "Mbit/s",
        source,
    };
    let fc = Exp {
        id: "rd",
        cells: fc_cells,
        function: "fc",
        kind: "diskbench",
        direction: fc_direction,
        published: published[1],
        unit: "MB/s",
        source: "Figure 2",
    };
    let header = "[scenario]\nname = \"synthetic\"\nsource = \"synthetic\"\n\n[run]\nwarmup_ms = 5\nduration_ms = 150\n";
    [
        gige("bd", 1, "bidirectional", published[0], "Figure 1"),
        fc,
        gige("rx", 2, "receive", published[2], "Figure 3"),
    ]
    .iter()
    .fold(header.to_string(), |text, e| text + &e.toml())
}

const CALIBRATION: &str = r#"kind = "calibration"

[[free]]
param = "server.rp8400-seu.cpu_per_packet"
unit = "us"
min = 1
max = 20
initial = 8
meaning = "CPU per packet"

[[free]]
param = "testbed.hp-2004-lab.target_latency"
unit = "us"
min = 200
max = 2000
initial = 1100
meaning = "disk array service time"
"#;

fn scenario(reg: &Registry, published: [f64; 3]) -> Scenario {
    let text = scenario_text(published, 1, "read");
    parse_scenario(PathBuf::from("synthetic.toml"), &text, reg).expect("valid scenario")
}

/// The true parameters of the synthetic figures (ns: 12 us and 750 us). At
/// 12 us per packet the interrupt CPU, which takes both the received data and
/// the ACKs of the data sent, limits GigE bidirectional, so the figure moves
/// with it (below about 9 us other limits take over and it would not).
const TRUTH: [f64; 2] = [12.0e3, 750e3];

/// Models, the calibration, and a scenario whose published values are the
/// model's own predictions at [`TRUTH`].
fn synthetic() -> (Registry, CalibrationSpec, [Scenario; 1]) {
    let mut reg = load_registry(&[]).expect("bundled models");
    let spec = parse_calibration(
        Path::new("synthetic-calibration.toml"),
        CALIBRATION,
        &mut reg,
    )
    .expect("valid calibration");
    let placeholder = [scenario(&reg, [1.0, 1.0, 1.0])];
    let pb = problem(&reg, &spec, &placeholder);
    let made: Vec<f64> = pb
        .rows_at(&TRUTH)
        .expect("runs")
        .iter()
        .map(|r| r.predicted)
        .collect();
    let scenarios = [scenario(&reg, [made[0], made[1], made[2]])];
    (reg, spec, scenarios)
}

/// The fit's problem over `scenarios` (seed 5, two threads, a fresh memo).
fn problem<'a>(
    reg: &'a Registry,
    spec: &'a CalibrationSpec,
    scenarios: &'a [Scenario],
) -> Problem<'a> {
    Problem {
        reg,
        scenarios,
        free: &spec.free,
        seed: 5,
        runner: iosim::app::Runner::new(2).expect("a pool"),
        memo: Default::default(),
    }
}

/// The synthetic problem fitted from the calibration's initial values, or
/// refit from `from`.
fn fit_synthetic(from: Option<&[f64]>) -> iosim::calibrate::Fit {
    let (reg, spec, scenarios) = synthetic();
    let start: Vec<f64> = spec.free.iter().map(|f| f.initial).collect();
    fit(
        &problem(&reg, &spec, &scenarios),
        &start,
        from,
        |_| true,
        LmSettings::default(),
        Objective::default(),
        |_, _| {},
    )
    .expect("fit runs")
}

/// Each fitted value within 3% of [`TRUTH`].
fn assert_recovers_truth(f: &iosim::calibrate::Fit) {
    for (p, want) in f.params.iter().zip(TRUTH) {
        let err = (p.value - want).abs() / want;
        assert!(
            err < 0.03,
            "{} fitted {} vs true {want}",
            p.free.path,
            p.value
        );
    }
}

#[test]
fn the_fit_recovers_parameters_from_figures_the_model_made() {
    let f = fit_synthetic(None);
    assert_recovers_truth(&f);
    for r in &f.rows_fitted {
        assert!(r.error_pct.abs() < 1.0, "{}: {}%", r.id, r.error_pct);
    }
    // The objective's value (figures, prior) went down from the start: the
    // initial values are 0 from the prior's centre, the fit is not.
    let (reg, spec, scenarios) = synthetic();
    let pb = problem(&reg, &spec, &scenarios);
    let start: Vec<f64> = spec.free.iter().map(|f| f.initial).collect();
    let fitted: Vec<f64> = f.params.iter().map(|p| p.value).collect();
    let u0 = pb.scale(&start);
    let objective = Objective {
        prior_weight: 0.1,
        robust_above: 0.1,
    };
    let (fig0, prior0) = objective.value(&f.rows_initial, &u0, &u0);
    let (fig1, prior1) = objective.value(&f.rows_fitted, &pb.scale(&fitted), &u0);
    assert_eq!(prior0, 0.0);
    assert!(prior1 > 0.0, "the fit moved away from the initial values");
    assert!(fig1 < fig0 / 100.0, "figures {fig0} -> {fig1}");
}

#[test]
fn a_refit_from_near_the_truth_recovers_it_with_fewer_evaluations() {
    let cold = fit_synthetic(None);
    // A previous fit a few percent off each value, as after a small model change.
    let near: Vec<f64> = TRUTH.iter().map(|t| t * 1.04).collect();
    let warm = fit_synthetic(Some(&near));
    assert_recovers_truth(&warm);
    assert!(
        warm.spent.total() < cold.spent.total(),
        "refit {} evaluations, fit from the initial values {}",
        warm.spent.total(),
        cold.spent.total()
    );
}

fn iosim(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_iosim"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("runs")
}

/// The first line of `text` that starts with `prefix`.
fn row_of<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no row {prefix} in {text}"))
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle in text")
        + 1
}

/// A calibration file with `old` replaced by `new` must fail with file:line and key.
fn expect_calibration_error(old: &str, new: &str, key: &str) {
    expect_calibration_error_at(old, new, key, new.lines().next().unwrap_or(new));
}

/// As [`expect_calibration_error`], the line being the one holding `at`.
fn expect_calibration_error_at(old: &str, new: &str, key: &str, at: &str) {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let text = CALIBRATION.replacen(old, new, 1);
    assert_ne!(text, CALIBRATION, "the mutation applies");
    let line = line_of(&text, at);
    std::fs::write(dir.path().join("bad.toml"), &text).expect("write");
    let out = iosim(
        dir.path(),
        &[
            "calibrate",
            "--calibration",
            "bad.toml",
            "--output",
            "out.toml",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains(&format!("bad.toml:{line}")),
        "no bad.toml:{line} in {err}"
    );
    assert!(err.contains(key), "no key {key} in {err}");
    assert!(
        !dir.path().join("out.toml").exists(),
        "nothing is written on error"
    );
}

#[test]
fn an_unknown_parameter_is_located() {
    expect_calibration_error(
        "server.rp8400-seu.cpu_per_packet",
        "server.rp8400-seu.cpu_per_pakcet",
        "free[0].param",
    );
}

#[test]
fn a_unit_of_the_wrong_dimension_is_located() {
    expect_calibration_error(
        "unit = \"us\"\nmin = 1",
        "unit = \"MB/s\"\nmin = 1",
        "free[0].unit",
    );
}

#[test]
fn bounds_outside_the_physical_range_are_located() {
    expect_calibration_error("max = 20", "max = 9000000", "free[0].max");
}

#[test]
fn an_initial_value_outside_the_bounds_is_located() {
    expect_calibration_error("initial = 8", "initial = 80", "free[0].initial");
}

#[test]
fn discrete_choices_out_of_order_are_located() {
    expect_calibration_error(
        "min = 1\nmax = 20\ninitial = 8",
        "choices = [8, 2, 6]\ninitial = 8",
        "free[0].choices",
    );
}

#[test]
fn a_discrete_initial_value_that_is_no_choice_is_located() {
    expect_calibration_error(
        "min = 1\nmax = 20\ninitial = 8",
        "initial = 8\nchoices = [2, 4, 6]",
        "free[0].initial",
    );
}

#[test]
fn an_unknown_parameter_sharing_a_free_value_is_located() {
    expect_calibration_error(
        "param = \"server.rp8400-seu.cpu_per_packet\"",
        "also = [\"server.rp8400-seu.cpu_per_pakcet\"]\nparam = \"server.rp8400-seu.cpu_per_packet\"",
        "free[0].also",
    );
}

#[test]
fn an_unknown_scale_is_located() {
    expect_calibration_error(
        "initial = 8",
        "scale = \"loud\"\ninitial = 8",
        "free[0].scale",
    );
}

#[test]
fn a_robust_threshold_outside_its_range_is_located() {
    expect_calibration_error_at(
        "[[free]]",
        "[calibration]\nrobust_above_pct = 500\n\n[[free]]",
        "calibration.robust_above_pct",
        "robust_above_pct",
    );
}

#[test]
fn a_search_precision_outside_its_range_is_located() {
    expect_calibration_error_at(
        "[[free]]",
        "[calibration]\nsearch_precision_pct = 0\n\n[[free]]",
        "calibration.search_precision_pct",
        "search_precision_pct",
    );
}

#[test]
fn a_polish_tolerance_outside_its_range_is_located() {
    expect_calibration_error_at(
        "[[free]]",
        "[calibration]\npolish_tolerance_pct = 80\n\n[[free]]",
        "calibration.polish_tolerance_pct",
        "polish_tolerance_pct",
    );
}

#[test]
fn a_search_switch_that_is_not_a_boolean_is_located() {
    for key in ["pair_moves", "fine_scans"] {
        expect_calibration_error_at(
            "[[free]]",
            &format!("[calibration]\n{key} = \"no\"\n\n[[free]]"),
            key,
            key,
        );
    }
}

#[test]
fn malformed_calibration_toml_is_located() {
    expect_calibration_error("min = 200", "min = = 200", "min");
}

/// A calibration over budget is reported: `calibrate --budget` says which
/// counts are over, and every fitting command warns (the bundled calibration
/// is over budget until its refit, so the commands warn rather than refuse).
#[test]
fn too_many_free_parameters_for_the_figures_are_reported() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    // Thirty-one continuous parameters, more than the bundled figures allow
    // (the test checks the count; one that counts whole things could be free
    // only with `choices`).
    let keys = [
        "server.rp8400-seu.io_read_latency",
        "server.rp8400-seu.memory_remote_latency",
        "server.rp8400-seu.cpu_per_packet",
        "server.rp8400-seu.cpu_per_segment_sent",
        "server.rp8400-seu.cpu_misses_per_packet",
        "server.rp8400-seu.cpu_per_io",
        "server.rp8400-seu.bridge.retry_interval",
        "server.rp8400-seu.cpu_per_kb",
        "server.rp8400-seu.memory_local_latency",
        "server.rp8400-seu.cpu_remote_memory_latency",
        "server.rp8400-seu.rope_bandwidth",
        "server.n4000.io_read_latency",
        "server.n4000.memory_local_latency",
        "server.n4000.cpu_per_io",
        "server.n4000.rope_bandwidth",
        "server.v2500.io_read_latency",
        "server.v2500.memory_local_latency",
        "server.v2500.cpu_misses_per_packet",
        "server.v2500.rope_bandwidth",
        "server.n4000-1cpu.io_read_latency",
        "server.n4000-1cpu.memory_local_latency",
        "server.n4000-1cpu.rope_bandwidth",
        "server.rp7410.io_read_latency",
        "server.rp7410.memory_local_latency",
        "server.rp7410.rope_bandwidth",
        "server.rx6600.io_read_latency",
        "server.rx6600.memory_local_latency",
        "server.rx6600.rope_bandwidth",
        "server.sx2000.io_read_latency",
        "server.sx2000.memory_local_latency",
        "server.sx2000.rope_bandwidth",
    ];
    // More than one per five of the figures the fit sees.
    let fitted: Vec<_> =
        iosim::loader::load_bundled_scenarios(&load_registry(&[]).expect("bundled"))
            .expect("bundled scenarios")
            .into_iter()
            .filter(|s| s.fit)
            .collect();
    let mut bundled = load_registry(&[]).expect("bundled");
    let spec = iosim::loader::load_bundled_calibration(&mut bundled).expect("calibration");
    let allowed = iosim::calibrate::budget::account(&bundled, &spec, &fitted)
        .expect("the budget")
        .whole
        .allowed();
    assert!(
        keys.len() > allowed,
        "{} keys, {allowed} allowed",
        keys.len()
    );
    let mut text = String::from("kind = \"calibration\"\n");
    let mut reg = load_registry(&[]).expect("bundled");
    for k in keys {
        let p = reg.param(k).expect("exists");
        text.push_str(&format!(
            "[[free]]\nparam = \"{k}\"\nunit = \"{}\"\nmin = {}\nmax = {}\ninitial = {}\nmeaning = \"x\"\n",
            p.unit,
            p.written * 0.9,
            p.written * 1.1 + 1.0,
            p.written
        ));
    }
    // With the bundled accounting: its papers, measurements and choices.
    let bundled_text = include_str!("../models/calibration.toml");
    let accounting = bundled_text.find("[[paper]]").expect("the bundled papers");
    text.push_str(&bundled_text[accounting..]);
    std::fs::write(dir.path().join("many.toml"), &text).expect("write");
    // Only a parameter its model file calls fitted can be freed: the servers
    // again, every value called fitted.
    let models = dir.path().join("models");
    std::fs::create_dir(&models).expect("models");
    for server in [
        "rp8400-seu",
        "n4000",
        "v2500",
        "n4000-1cpu",
        "rp7410",
        "rx6600",
        "sx2000",
    ] {
        let file = format!("models/servers/{server}.toml");
        let text =
            std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(&file))
                .expect("a bundled server")
                .replace("source = \"", "source = \"fitted: for the test; ");
        std::fs::write(models.join(format!("{server}.toml")), text).expect("write");
    }
    let out = iosim(
        dir.path(),
        &[
            "calibrate",
            "--budget",
            "--calibration",
            "many.toml",
            "--models",
            "models",
            "--format",
            "csv",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: over budget (at most one fitted value per 5"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let whole = text
        .lines()
        .find(|l| l.starts_with("all papers,"))
        .unwrap_or_else(|| panic!("no whole row in {text}"));
    assert!(whole.ends_with(",no"), "{whole}");
    assert!(whole.contains(&format!(",{},", keys.len())), "{whole}");
}

#[test]
fn a_fitted_file_is_applied_with_params_and_a_bad_one_is_located() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let good = "kind = \"fitted\"\n\n[[param]]\npath = \"server.rp8400-seu.cpu_per_packet\"\nvalue = 7.25\nunit = \"us\"\n";
    std::fs::write(dir.path().join("fitted.toml"), good).expect("write");
    let out = iosim(
        dir.path(),
        &["params", "--params", "fitted.toml", "--format", "csv"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let row = row_of(&text, "server.rp8400-seu.cpu_per_packet,");
    assert!(
        row.starts_with("server.rp8400-seu.cpu_per_packet,7.2500,us"),
        "{row}"
    );
    let bad = good.replace("cpu_per_packet", "cpu_per_pocket");
    std::fs::write(dir.path().join("bad.toml"), bad).expect("write");
    let out = iosim(dir.path(), &["validate", "--params", "bad.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("bad.toml:4") && err.contains("param[0].path"),
        "{err}"
    );
}

#[test]
fn a_fitted_file_may_not_set_a_parameter_its_model_does_not_call_fitted() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let text = "kind = \"fitted\"\n\n[[param]]\npath = \"server.rp8400-seu.rope_bandwidth\"\nvalue = 300\nunit = \"MB/s\"\n";
    std::fs::write(dir.path().join("stale.toml"), text).expect("write");
    let out = iosim(dir.path(), &["validate", "--params", "stale.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("stale.toml:4")
            && err.contains("param[0].path")
            && err.contains("not a fitted parameter"),
        "{err}"
    );
}

#[test]
fn replications_report_a_mean_and_interval_per_metric() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let reg = load_registry(&[]).expect("bundled");
    let _ = reg;
    let text = scenario_text([1000.0, 190.0, 900.0], 2, "bidirectional");
    // FC bidirectional on 2 cells: its reads wait for local or remote lines at
    // random, so replications differ.
    assert!(text.contains("cells = 2") && text.contains("\"bidirectional\""));
    std::fs::write(dir.path().join("s.toml"), text).expect("write");
    let args = [
        "run",
        "s.toml",
        "--replications",
        "3",
        "--format",
        "json",
        "--precision",
        "0.000001",
    ];
    let out = iosim(dir.path(), &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let reps = j["replications"].as_array().expect("replications section");
    assert!(!reps.is_empty());
    for r in reps {
        assert_eq!(r["replications"], 3);
        assert!(r["ci95_half"].as_f64().is_some_and(|h| h >= 0.0), "{r}");
    }
    // A precision no interval can meet is warned about.
    assert!(!j["warnings"]
        .as_array()
        .expect("warnings section")
        .is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning:"));
    // Same seed, same replications: the same bytes.
    assert_eq!(iosim(dir.path(), &args).stdout, out.stdout);
}

#[test]
fn cross_validation_predicts_every_figure_from_a_fit_without_its_group() {
    let (reg, spec, scenarios) = synthetic();
    let pb = problem(&reg, &spec, &scenarios);
    let start: Vec<f64> = spec.free.iter().map(|f| f.initial).collect();
    let cv = cross_validate(
        &pb,
        &start,
        None,
        LmSettings::default(),
        Objective::default(),
        |_, _, _| {},
    )
    .expect("runs");
    // One fold per group, each with every free parameter.
    let groups: Vec<&str> = cv.folds.iter().map(|f| f.group.as_str()).collect();
    assert_eq!(groups.len(), 3, "{groups:?}");
    for f in &cv.folds {
        assert_eq!(f.params.len(), spec.free.len(), "{}", f.group);
    }
    assert_eq!(cv.all.len(), spec.free.len());
    let held = &cv.held;
    let ids: Vec<&str> = held.iter().map(|h| h.row.id.as_str()).collect();
    assert_eq!(ids, ["syn.bd", "syn.rd", "syn.rx"]);
    for h in held {
        assert_eq!(h.group, group_of(&h.row));
        assert!(
            h.fitted_error_pct.abs() < 1.0,
            "{}: {}",
            h.row.id,
            h.fitted_error_pct
        );
    }
    // Left out, syn.rd is the only figure that pins the array latency: the
    // fold keeps its initial value, and the held-out error says so.
    let rd = held
        .iter()
        .find(|h| h.row.id == "syn.rd")
        .expect("held out");
    assert!(
        rd.row.error_pct.abs() > rd.fitted_error_pct.abs(),
        "{:?}",
        rd.row
    );
    // Its fold reports the latency where it started (1100 us), the full fit
    // near the truth (750 us).
    let fold = cv
        .folds
        .iter()
        .find(|f| f.group == rd.group)
        .expect("a fold per group");
    // Base unit: ns.
    let latency = |ps: &[iosim::calibrate::ParamFit]| ps[1].value / 1e3;
    assert!(
        (latency(&fold.params) - 1100.0).abs() < 1.0,
        "{}",
        latency(&fold.params)
    );
    assert!(
        (latency(&cv.all) - 750.0).abs() < 15.0,
        "{}",
        latency(&cv.all)
    );
    // The parameters split in two parts that no experiment joins (the FC
    // read reads no TCP stack cost, the GigE runs no array latency): a fold
    // refits only its group's part and keeps the other at the full fit.
    assert_eq!(fold.params[0].value, cv.all[0].value, "CPU per packet kept");
    for f in cv.folds.iter().filter(|f| f.group != rd.group) {
        assert_eq!(
            f.params[1].value, cv.all[1].value,
            "{}: latency kept",
            f.group
        );
    }
    // Each fold's own objective at its fit and at the full fit's values:
    // on this smooth problem every fold's search finds a point its own
    // figures score no worse than the full fit (which also fits the group
    // left out), and the full fit scores worse where the group pulled it:
    // without syn.bd or syn.rx, the other fixes the CPU cost alone.
    for f in &cv.folds {
        let o = f.objectives.expect("every fold refits a part");
        assert!(
            o.at_fold_fit.is_finite() && o.at_fold_fit >= 0.0,
            "{}: {o:?}",
            f.group
        );
        // Within the search's resolution: an objective of 1e-6 is errors of
        // 0.1%, where the polish stops (the full fit may sit closer to the
        // synthetic truth by chance).
        assert!(
            o.at_fold_fit <= o.at_full_fit * (1.0 + 1e-9) + 1e-6,
            "{}: {o:?}",
            f.group
        );
    }
}

/// A cross-validation whose full fit refits near a previous fit's values
/// holds every figure out as one whose full fit starts from the initial
/// values: the folds start from the initial values either way, and the
/// values a fold does not refit are read by none of its experiments. Its
/// full fit ends near the cold one.
#[test]
fn a_cross_validation_refit_near_a_fit_holds_out_as_a_cold_one() {
    let (reg, spec, scenarios) = synthetic();
    let start: Vec<f64> = spec.free.iter().map(|f| f.initial).collect();
    let cv = |from: Option<&[f64]>| {
        cross_validate(
            &problem(&reg, &spec, &scenarios),
            &start,
            from,
            LmSettings::default(),
            Objective::default(),
            |_, _, _| {},
        )
        .expect("runs")
    };
    let cold = cv(None);
    let fitted: Vec<f64> = cold.all.iter().map(|p| p.value).collect();
    // Off the cold fit by a few percent, as a fit in use before a model change.
    let in_use: Vec<f64> = fitted.iter().map(|v| v * 1.03).collect();
    let warm = cv(Some(&in_use));
    let held = |c: &iosim::calibrate::CrossValidation| -> Vec<(String, f64)> {
        c.held
            .iter()
            .map(|h| (h.row.id.clone(), h.row.predicted))
            .collect()
    };
    assert_eq!(held(&warm), held(&cold));
    for ((w, c), u) in warm.all.iter().zip(&cold.all).zip(&in_use) {
        // Back towards the cold fit from 3% off it.
        assert!(
            (w.value / c.value - 1.0).abs() < 0.02,
            "{}: {} against {} (from {u})",
            w.free.path,
            w.value,
            c.value
        );
    }
}

/// The whole fit, its parts and every cross-validation fold share one memo:
/// a cross-validation after a fit of the same problem simulates what a
/// cross-validation alone simulates beyond that fit (its own whole fit comes
/// from the memo), and a second one simulates nothing. "What it simulates"
/// is exact but for the points given up: which runs a point had before its
/// figures showed it could not be taken depends on the order runs end in
/// (`lm::Batch::eval_below`), so the count may differ by a few runs, far
/// fewer than the fit's.
#[test]
fn folds_parts_and_the_whole_fit_share_their_runs() {
    let (reg, spec, scenarios) = synthetic();
    let start: Vec<f64> = spec.free.iter().map(|f| f.initial).collect();
    let cv = |pb: &Problem| {
        cross_validate(
            pb,
            &start,
            None,
            LmSettings::default(),
            Objective::default(),
            |_, _, _| {},
        )
        .expect("runs")
    };
    let alone = problem(&reg, &spec, &scenarios);
    let held_alone = cv(&alone).held;
    let after_fit = problem(&reg, &spec, &scenarios);
    fit(
        &after_fit,
        &start,
        None,
        |_| true,
        LmSettings::default(),
        Objective::default(),
        |_, _| {},
    )
    .expect("fits");
    let by_fit = after_fit.memo.runs();
    assert!(by_fit > 0);
    let held = cv(&after_fit).held;
    let (after, on_its_own) = (after_fit.memo.runs(), alone.memo.runs());
    // Without the shared memo it would be about `on_its_own + by_fit`.
    let slack = (on_its_own / 50).max(2);
    assert!(slack < by_fit, "{slack} against {by_fit}");
    assert!(
        after.abs_diff(on_its_own) <= slack,
        "{after} runs after the fit, {on_its_own} alone ({by_fit} by the fit)"
    );
    let again = cv(&after_fit).held;
    assert_eq!(after_fit.memo.runs(), after, "all from the memo");
    let predicted = |h: &[iosim::calibrate::HeldOut]| -> Vec<f64> {
        h.iter().map(|h| h.row.predicted).collect()
    };
    assert_eq!(predicted(&held), predicted(&held_alone));
    assert_eq!(predicted(&again), predicted(&held_alone));
}

/// Every free parameter of the bundled calibration is labelled fitted in its
/// model file, and every value or choice labelled fitted, or mentioned as
/// chosen with the figures in view, is counted (free or a `[[choice]]`: see
/// `calibrate::budget::uncounted_choices`, whose unit tests also read the
/// model and scenario files' text).
#[test]
fn every_fitted_value_is_declared_free_or_a_counted_choice() {
    let mut reg = load_registry(&[]).expect("bundled models load");
    let spec = iosim::loader::load_bundled_calibration(&mut reg).expect("bundled calibration");
    let mut labelled = Vec::new();
    for (prefix, set) in reg.param_sets_mut() {
        for (k, p) in &set.map {
            // A value a model takes through `extends` is its parent's, freed
            // (or named) there and counted once.
            if p.is_fitted() && p.inherited.is_none() {
                labelled.push(format!("{prefix}.{k}"));
            }
        }
    }
    for f in spec.free.iter().flat_map(|f| f.paths()) {
        assert!(
            labelled.iter().any(|l| l == f),
            "{f} is free but its model file does not label it fitted"
        );
    }
    let missing = iosim::calibrate::budget::uncounted_choices(&reg, &spec, &[]);
    assert!(missing.is_empty(), "{missing:#?}");
}

fn paper_mape(csv: &str) -> f64 {
    let line = csv
        .lines()
        .find(|l| l.starts_with("hp-rp8400-pcix-2gb-fc-gige-2004.txt,"))
        .expect("a papers row");
    line.split(',')
        .nth(2)
        .expect("mape")
        .parse()
        .expect("a number")
}

/// `validate` applies the bundled fit by default and says so; `--hand-set`
/// runs the model files' guesses instead, and the fit beats them.
#[test]
fn validate_uses_the_bundled_fit_which_beats_the_hand_set_values() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let fitted = iosim(dir.path(), &["validate", "--format", "csv"]);
    let hand = iosim(dir.path(), &["validate", "--format", "csv", "--hand-set"]);
    assert!(fitted.status.success() && hand.status.success());
    let (f, h) = (
        String::from_utf8_lossy(&fitted.stdout),
        String::from_utf8_lossy(&hand.stdout),
    );
    assert!(
        f.contains("# parameters: <bundled>/models/fitted.toml"),
        "{f}"
    );
    assert!(h.contains("# parameters: model files (--hand-set"), "{h}");
    assert!(
        paper_mape(&f) < paper_mape(&h),
        "fitted MAPE {} is not below hand-set {}",
        paper_mape(&f),
        paper_mape(&h)
    );
    let both = iosim(
        dir.path(),
        &["validate", "--hand-set", "--params", "x.toml"],
    );
    assert_eq!(
        both.status.code(),
        Some(2),
        "--params and --hand-set conflict"
    );
    // A refit starts from the values in use: with none (--hand-set) there is
    // nothing to refit from.
    let refit = iosim(dir.path(), &["calibrate", "--refit", "--hand-set"]);
    assert_eq!(
        refit.status.code(),
        Some(2),
        "--refit and --hand-set conflict"
    );
    assert!(
        String::from_utf8_lossy(&refit.stderr).contains("--hand-set"),
        "{}",
        String::from_utf8_lossy(&refit.stderr)
    );
}

/// A model a `--models` file replaces keeps that file's values: the bundled
/// fit does not overwrite what the user wrote.
#[test]
fn the_bundled_fit_leaves_a_user_replaced_model_alone() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let testbed = iosim::loader::bundled_files("models/testbeds/hp-2004-lab.toml")[0]
        .1
        .lines()
        .map(|l| {
            if l.starts_with("target_latency") {
                "target_latency = { value = 40, unit = \"us\", source = \"test\" }".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::create_dir(dir.path().join("m")).expect("mkdir");
    std::fs::write(dir.path().join("m/hp-2004-lab.toml"), testbed).expect("write");
    let out = iosim(dir.path(), &["params", "--models", "m", "--format", "csv"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = row_of(&text, "testbed.hp-2004-lab.target_latency,");
    assert!(
        row.starts_with("testbed.hp-2004-lab.target_latency,40.0000,"),
        "{row}"
    );
    // A fitted parameter of a model the user did not replace still takes the bundled fit.
    let other = row_of(&text, "server.rp8400-seu.cpu_per_packet,");
    assert!(other.contains("fitted: iosim calibrate"), "{other}");
}

#[test]
fn points_evaluated_together_give_what_each_gives_alone() {
    let (reg, spec, scenarios) = synthetic();
    let problem = || problem(&reg, &spec, &scenarios);
    let a = TRUTH.to_vec();
    let b = vec![6.0e3, 300e3];
    let alone: Vec<Vec<f64>> = [&a, &b]
        .iter()
        .map(|x| {
            problem()
                .rows_at(x)
                .expect("runs")
                .iter()
                .map(|r| r.predicted)
                .collect()
        })
        .collect();
    assert_ne!(alone[0], alone[1], "the two points differ");
    let pb = problem();
    // Together, one repeated, with the longest-first order learnt from the
    // first call; then again from the memo.
    for _ in 0..2 {
        let together: Vec<Vec<f64>> = pb
            .rows_at_points(&[a.clone(), b.clone(), a.clone()], None)
            .expect("runs")
            .iter()
            .map(|rows| rows.iter().map(|r| r.predicted).collect())
            .collect();
        assert_eq!(
            together,
            vec![alone[0].clone(), alone[1].clone(), alone[0].clone()]
        );
    }
}

/// A bundled experiment with its scenario, found by scenario name and id.
fn bundled_experiment(
    reg: &Registry,
    name: &str,
    id: &str,
) -> (iosim::model::Scenario, iosim::model::Experiment) {
    let scenarios = iosim::loader::load_bundled_scenarios(reg).expect("bundled scenarios");
    scenarios
        .iter()
        .find(|s| s.name == name)
        .and_then(|s| {
            s.experiments
                .iter()
                .find(|e| e.id == id)
                .map(|e| (s.clone(), e.clone()))
        })
        .expect("the bundled experiment")
}

/// `e`'s fingerprint assembled on `reg`.
fn fingerprint_on(reg: &Registry, e: &iosim::model::Experiment) -> String {
    iosim::sim::config::assemble(reg, e)
        .expect("assembles")
        .fingerprint()
}

/// `reg` with the value at `path` set to `v` (base unit).
fn with_value(reg: &Registry, path: &str, v: f64) -> Registry {
    let mut r = reg.clone();
    assert!(r.set_param(path, v), "{path}");
    r
}

/// The calibration reruns an experiment only when a parameter changes what
/// its work reads (`SystemCfg::fingerprint`): the TCP stack cost is not
/// read by an FC-only experiment, the disk array's latency is; an idle
/// GigE function's driver settings are not read at all.
#[test]
fn an_experiment_fingerprint_changes_only_with_what_its_work_reads() {
    let reg = load_registry(&[]).expect("bundled models");
    let (_, fc_read) = bundled_experiment(&reg, "hp2g-fig5-fc-read", "fc-rd.pcix.c1");
    let (_, gige_rx) = bundled_experiment(&reg, "hp2g-fig2-gige-receive", "gige-rx.pcix.c1");
    let print = fingerprint_on;
    let with = |path: &str, v: f64| with_value(&reg, path, v);
    let stack = with("server.rp8400-seu.cpu_per_packet", 33_000.0);
    let array = with("testbed.hp-2004-lab.target_latency", 3_000_000.0);
    let driver = with("adapter.a9782a.gige.pio_reads_per_interrupt", 7.0);
    assert_eq!(print(&reg, &fc_read), print(&stack, &fc_read));
    assert_eq!(print(&reg, &fc_read), print(&driver, &fc_read));
    assert_ne!(print(&reg, &fc_read), print(&array, &fc_read));
    assert_ne!(print(&reg, &gige_rx), print(&stack, &gige_rx));
    assert_ne!(print(&reg, &gige_rx), print(&driver, &gige_rx));
    assert_eq!(print(&reg, &gige_rx), print(&array, &gige_rx));
}

/// A server that only receives data sends no segment of its own and no
/// data reaches the netperf peer; one that only sends takes no payload in.
/// The fingerprint leaves out what each direction never reads, and the run
/// with such a value changed is the same run, figure for figure and event
/// for event (so leaving it out is sound, not only cheaper).
#[test]
fn an_experiment_fingerprint_leaves_out_the_costs_of_the_direction_it_does_not_run() {
    let reg = load_registry(&[]).expect("bundled models");
    let rx = bundled_experiment(&reg, "hp2g-fig2-gige-receive", "gige-rx.pcix.c1");
    let tx = bundled_experiment(&reg, "hp2g-fig3-gige-transmit", "gige-tx.pcix.c1");
    let print = fingerprint_on;
    let with = |path: &str, v: f64| with_value(&reg, path, v);
    let sent = with("server.rp8400-seu.cpu_per_segment_sent", 29_000.0);
    let peer = with("testbed.hp-2004-lab.peer_cpu_per_segment", 50_000.0);
    let turnaround = with("testbed.hp-2004-lab.peer_turnaround", 500_000.0);
    let copy = with("server.rp8400-seu.cpu_per_kb", 19_000.0);
    for (moved, reads_rx, reads_tx) in [
        (&sent, false, true),
        (&peer, false, true),
        (&turnaround, false, true),
        (&copy, true, false),
    ] {
        for ((sc, e), reads) in [(&rx, reads_rx), (&tx, reads_tx)] {
            let same = print(&reg, e) == print(moved, e);
            assert_eq!(same, !reads, "{}", e.id);
            let run = |r: &Registry| {
                let res = iosim::sim::simulate(r, e, &sc.run, 1).expect("runs");
                (
                    res.events,
                    res.measured,
                    format!("{:?}", res.functions),
                    res.cpu_util.to_bits(),
                )
            };
            let changed = run(&reg) != run(moved);
            assert_eq!(
                changed, reads,
                "{}: the run moved with a value it does not read, or not with one it does",
                e.id
            );
        }
    }
}

/// `calibrate --refit` of one free value (the N4000's cost per packet, whose
/// experiments are few): the report says which search ran and the
/// objective's value where it started and ended, and the fitted file's header
/// says it is a refit.
#[test]
fn a_refit_reports_its_search_and_the_objective_before_and_after() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let bundled = &iosim::loader::bundled_files("models/calibration.toml")[0].1;
    let head = &bundled[..bundled.find("[[free]]").expect("a free block")];
    let block = bundled
        .split("[[free]]")
        .find(|b| b.contains("param = \"server.n4000.cpu_per_packet\""))
        .expect("the N4000's free block");
    std::fs::write(
        dir.path().join("one.toml"),
        format!("{head}[[free]]{block}"),
    )
    .expect("write");
    let out = iosim(
        dir.path(),
        &[
            "calibrate",
            "--calibration",
            "one.toml",
            "--refit",
            "--output",
            "fit.toml",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("# search: refit, from the values in use (<bundled>/models/fitted.toml)"),
        "{text}"
    );
    let value = |key: &str| -> (f64, f64, f64) {
        let line = row_of(&text, &format!("# {key}: "));
        let nums: Vec<f64> = line
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter_map(|w| w.parse().ok())
            .collect();
        assert_eq!(nums.len(), 3, "{line}");
        (nums[0], nums[1], nums[2])
    };
    for key in ["objective_in_use", "objective_fitted"] {
        let (total, figures, prior) = value(key);
        assert!(
            figures > 0.0 && prior >= 0.0 && (total - figures - prior).abs() < 2e-6,
            "{key}: {total} {figures} {prior}"
        );
    }
    let fitted = std::fs::read_to_string(dir.path().join("fit.toml")).expect("written");
    assert!(
        fitted.contains("# Search: refit, from the values in use"),
        "{fitted}"
    );
}
