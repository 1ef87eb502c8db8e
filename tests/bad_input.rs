//! Bad input never panics: every mistake in a model or scenario file exits
//! with code 1 and a message naming the file, the offending key and its line.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

/// A valid bus-mode model (a renamed PCI-X 66), mutated by the tests.
static BUS: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| common::bus_toml("test-bus"));

/// A valid test-bed model, mutated by the tests.
const TESTBED: &str = r#"kind = "testbed"
name = "test-bed"
description = "far ends for tests"

[param]
peer_turnaround = { value = 20, unit = "us", source = "assumed" }
peer_cpu_per_segment = { value = 0, unit = "us", source = "assumed" }
target_latency = { value = 30, unit = "us", source = "assumed" }
diskbench_outstanding = { value = 1, unit = "count", source = "assumed" }
"#;

/// A valid scenario on the bundled models, mutated by the tests.
const SCENARIO: &str = r#"[scenario]
name = "bad-input"
title = "a scenario for error tests"

[run]
warmup_ms = 1
duration_ms = 2

[[experiment]]
id = "e1"
server = "rp8400-seu"
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

[[experiment.figure]]
id = "bad.e1"
card = "a9782a"
function = "gige"
published = 900
unit = "Mbit/s"
"#;

fn iosim(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iosim"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the iosim binary runs")
}

/// `text` with the first line starting with `prefix` replaced by `new`.
fn replace_line(text: &str, prefix: &str, new: &str) -> String {
    let n = common::line_of(text, prefix);
    let mut out: Vec<&str> = text.lines().collect();
    out[n - 1] = new;
    out.join("\n") + "\n"
}

/// The key named in a diagnostic (`key `...``), if any.
fn key_in(stderr: &str) -> Option<&str> {
    let rest = &stderr[stderr.find("key `")? + 5..];
    Some(&rest[..rest.find('`')?])
}

/// Runs `iosim args...` in `dir` and checks that it fails with exit code 1,
/// no panic, nothing on stdout, and a message naming `file:LINE` and a key
/// containing `key`.
fn expect_error(dir: &Path, args: &[&str], file: &str, key: &str, line: usize) -> String {
    let out = iosim(dir, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stderr.contains("panicked"),
        "iosim {args:?} panicked:\n{stderr}"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "iosim {args:?}: exit code; stderr:\n{stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "iosim {args:?} printed on stdout despite the error"
    );
    assert!(
        stderr.contains(file),
        "iosim {args:?}: stderr does not name `{file}`:\n{stderr}"
    );
    assert!(
        stderr.contains(&format!("{file}:{line}:")),
        "iosim {args:?}: stderr does not point at `{file}:{line}`:\n{stderr}"
    );
    let named =
        key_in(&stderr).unwrap_or_else(|| panic!("iosim {args:?}: no key named in:\n{stderr}"));
    assert!(
        named.contains(key),
        "iosim {args:?}: key `{named}` is not `{key}`:\n{stderr}"
    );
    stderr
}

/// A temp dir holding `models/<name>` with `text`.
struct ModelDir {
    tmp: TempDir,
    file: PathBuf,
}

fn model_dir(name: &str, text: &str) -> ModelDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("models");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    ModelDir { tmp, file }
}

/// `iosim params --models <dir>` on a single bad model file must fail at `key`, `line`.
fn expect_model_error(name: &str, text: &str, key: &str, line: usize) -> String {
    let m = model_dir(name, text);
    let models = m.tmp.path().join("models");
    let file = m.file.to_str().unwrap().to_string();
    let msg = expect_error(
        m.tmp.path(),
        &["params", "--models", models.to_str().unwrap()],
        &file,
        key,
        line,
    );
    // `run` loads the same registry first and fails the same way.
    let sc = m.tmp.path().join("ok.toml");
    std::fs::write(&sc, SCENARIO).unwrap();
    expect_error(
        m.tmp.path(),
        &[
            "run",
            "--models",
            models.to_str().unwrap(),
            sc.to_str().unwrap(),
        ],
        &file,
        key,
        line,
    );
    msg
}

/// `iosim run <scenario>` on a bad scenario must fail at `key`, `line`.
fn expect_scenario_error(text: &str, key: &str, line: usize) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("scenario.toml");
    std::fs::write(&file, text).unwrap();
    let f = file.to_str().unwrap();
    expect_error(tmp.path(), &["run", f], f, key, line)
}

#[test]
fn the_unmodified_fixtures_are_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    std::fs::write(models.join("bus.toml"), BUS.as_str()).unwrap();
    std::fs::write(models.join("testbed.toml"), TESTBED).unwrap();
    std::fs::write(tmp.path().join("s.toml"), SCENARIO).unwrap();
    let out = iosim(tmp.path(), &["run", "--models", "models", "s.toml"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn malformed_toml_in_a_model_file_is_located() {
    // An unterminated string.
    let text = replace_line(&BUS, "protocol =", "protocol = \"pcix");
    expect_model_error(
        "bus.toml",
        &text,
        "protocol",
        common::line_of(&BUS, "protocol ="),
    );
    // A missing comma inside an inline table.
    let text = replace_line(
        &BUS,
        "clock =",
        r#"clock = { value = 66.67 unit = "MHz", source = "x" }"#,
    );
    expect_model_error("bus.toml", &text, "clock", common::line_of(&BUS, "clock ="));
    // An unclosed table header.
    let text = replace_line(&BUS, "[param]", "[param");
    expect_model_error("bus.toml", &text, "param", common::line_of(&BUS, "[param]"));
    // A key written twice.
    let text = format!(
        "{TESTBED}target_latency = {{ value = 30, unit = \"us\", source = \"assumed\" }}\n"
    );
    expect_model_error(
        "testbed.toml",
        &text,
        "target_latency",
        TESTBED.lines().count() + 1,
    );
}

#[test]
fn a_parameter_with_an_unknown_unit_is_located() {
    let text = replace_line(
        &BUS,
        "clock =",
        r#"clock = { value = 66.67, unit = "furlongs", source = "x" }"#,
    );
    let msg = expect_model_error(
        "bus.toml",
        &text,
        "param.clock",
        common::line_of(&BUS, "clock ="),
    );
    assert!(msg.contains("furlongs"), "{msg}");
}

#[test]
fn a_parameter_with_a_unit_of_the_wrong_dimension_is_located() {
    let text = replace_line(
        &BUS,
        "clock =",
        r#"clock = { value = 15, unit = "ns", source = "x" }"#,
    );
    expect_model_error(
        "bus.toml",
        &text,
        "param.clock",
        common::line_of(&BUS, "clock ="),
    );
    let text = replace_line(
        TESTBED,
        "target_latency =",
        r#"target_latency = { value = 30, unit = "MHz", source = "x" }"#,
    );
    expect_model_error(
        "testbed.toml",
        &text,
        "param.target_latency",
        common::line_of(TESTBED, "target_latency ="),
    );
}

#[test]
fn a_parameter_outside_its_plausible_range_is_located() {
    let text = replace_line(
        &BUS,
        "clock =",
        r#"clock = { value = 5000, unit = "MHz", source = "x" }"#,
    );
    let msg = expect_model_error(
        "bus.toml",
        &text,
        "param.clock",
        common::line_of(&BUS, "clock ="),
    );
    assert!(msg.contains("5000"), "{msg}");
    // A negative latency.
    let text = replace_line(
        TESTBED,
        "peer_turnaround =",
        r#"peer_turnaround = { value = -5, unit = "us", source = "x" }"#,
    );
    expect_model_error(
        "testbed.toml",
        &text,
        "param.peer_turnaround",
        common::line_of(TESTBED, "peer_turnaround ="),
    );
    // Not a number at all.
    let text = replace_line(
        &BUS,
        "width =",
        r#"width = { value = nan, unit = "bit", source = "x" }"#,
    );
    expect_model_error(
        "bus.toml",
        &text,
        "param.width",
        common::line_of(&BUS, "width ="),
    );
}

#[test]
fn a_missing_required_parameter_is_located_at_its_table() {
    let text = BUS
        .lines()
        .filter(|l| !l.starts_with("width ="))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let msg = expect_model_error(
        "bus.toml",
        &text,
        "param.width",
        common::line_of(&BUS, "[param]"),
    );
    assert!(msg.contains("missing"), "{msg}");
}

#[test]
fn an_unknown_parameter_key_is_located() {
    let text = format!(
        "{}bogus = {{ value = 1, unit = \"count\", source = \"x\" }}\n",
        *BUS
    );
    expect_model_error("bus.toml", &text, "param.bogus", BUS.lines().count() + 1);
}

#[test]
fn an_empty_source_is_located() {
    for empty in ["\"\"", "\"   \""] {
        let text = replace_line(
            &BUS,
            "max_burst =",
            &format!("max_burst = {{ value = 4096, unit = \"bytes\", source = {empty} }}"),
        );
        let msg = expect_model_error(
            "bus.toml",
            &text,
            "param.max_burst",
            common::line_of(&BUS, "max_burst ="),
        );
        assert!(msg.contains("source"), "{msg}");
    }
}

#[test]
fn an_unknown_model_kind_is_located() {
    let text = replace_line(TESTBED, "kind =", "kind = \"toaster\"");
    expect_model_error("testbed.toml", &text, "kind", 1);
}

#[test]
fn a_scenario_naming_an_unknown_server_is_located() {
    let text = replace_line(SCENARIO, "server =", "server = \"no-such-server\"");
    let msg = expect_scenario_error(
        &text,
        "experiment[0].server",
        common::line_of(SCENARIO, "server ="),
    );
    assert!(msg.contains("no-such-server"), "{msg}");
}

#[test]
fn a_scenario_naming_an_unknown_adapter_is_located() {
    let text = replace_line(SCENARIO, "adapter =", "adapter = \"no-such-card\"");
    let msg = expect_scenario_error(
        &text,
        "experiment[0].card[0].adapter",
        common::line_of(SCENARIO, "adapter ="),
    );
    assert!(msg.contains("no-such-card"), "{msg}");
}

#[test]
fn a_scenario_naming_an_unknown_slot_is_located() {
    let text = replace_line(SCENARIO, "slot =", "slot = \"seu-99\"");
    let msg = expect_scenario_error(
        &text,
        "experiment[0].card[0].slot",
        common::line_of(SCENARIO, "slot ="),
    );
    assert!(msg.contains("seu-99"), "{msg}");
}

#[test]
fn a_scenario_naming_an_unknown_function_is_located() {
    let text = replace_line(SCENARIO, "function = \"gige\"", "function = \"no-such-fn\"");
    let msg = expect_scenario_error(
        &text,
        "experiment[0].workload[0].function",
        common::line_of(SCENARIO, "function ="),
    );
    assert!(msg.contains("no-such-fn"), "{msg}");
}

#[test]
fn a_figure_naming_an_unknown_function_is_located() {
    let figure = common::line_of(SCENARIO, "[[experiment.figure]]");
    let mut lines: Vec<String> = SCENARIO.lines().map(String::from).collect();
    let at = lines
        .iter()
        .enumerate()
        .position(|(i, l)| i >= figure && l.starts_with("function ="))
        .unwrap();
    lines[at] = "function = \"no-such-fn\"".into();
    let text = lines.join("\n") + "\n";
    expect_scenario_error(&text, "experiment[0].figure[0].function", at + 1);
}

#[test]
fn an_unknown_function_is_at_least_reported_at_its_line() {
    // Companion of the ignored test above: file, line and exit code are right today.
    let text = replace_line(SCENARIO, "function = \"gige\"", "function = \"no-such-fn\"");
    let msg = expect_scenario_error(
        &text,
        "experiment[0].workload[0]",
        common::line_of(SCENARIO, "function ="),
    );
    assert!(msg.contains("unknown function `no-such-fn`"), "{msg}");
}

#[test]
fn a_scenario_naming_an_unknown_card_or_testbed_is_located() {
    let text = replace_line(SCENARIO, "card = \"a9782a\"", "card = \"no-such-label\"");
    expect_scenario_error(
        &text,
        "experiment[0].workload[0].card",
        common::line_of(SCENARIO, "card ="),
    );
    let text = replace_line(SCENARIO, "testbed =", "testbed = \"no-such-lab\"");
    expect_scenario_error(
        &text,
        "experiment[0].testbed",
        common::line_of(SCENARIO, "testbed ="),
    );
}

#[test]
fn a_scenario_with_more_cells_than_the_server_has_is_located() {
    for cells in ["9", "0", "-1"] {
        let text = replace_line(SCENARIO, "cells =", &format!("cells = {cells}"));
        let msg = expect_scenario_error(
            &text,
            "experiment[0].cells",
            common::line_of(SCENARIO, "cells ="),
        );
        assert!(msg.contains("rp8400-seu"), "{msg}");
    }
}

#[test]
fn a_scenario_with_an_absurd_run_length_is_located() {
    for v in ["-5", "0", "1e12", "nan", "inf"] {
        let text = replace_line(SCENARIO, "duration_ms =", &format!("duration_ms = {v}"));
        expect_scenario_error(
            &text,
            "run.duration_ms",
            common::line_of(SCENARIO, "duration_ms ="),
        );
    }
    let text = replace_line(SCENARIO, "warmup_ms =", "warmup_ms = -1");
    expect_scenario_error(
        &text,
        "run.warmup_ms",
        common::line_of(SCENARIO, "warmup_ms ="),
    );
    let text = replace_line(SCENARIO, "warmup_ms =", "max_events = 5");
    expect_scenario_error(
        &text,
        "run.max_events",
        common::line_of(SCENARIO, "warmup_ms ="),
    );
}

#[test]
fn a_scenario_with_a_bad_workload_is_located() {
    let text = replace_line(SCENARIO, "direction =", "direction = \"sideways\"");
    expect_scenario_error(
        &text,
        "experiment[0].workload[0].direction",
        common::line_of(SCENARIO, "direction ="),
    );
    let text = replace_line(SCENARIO, "kind =", "kind = \"diskbench\"");
    expect_scenario_error(
        &text,
        "experiment[0].workload[0].kind",
        common::line_of(SCENARIO, "kind ="),
    );
}

#[test]
fn malformed_toml_in_a_scenario_is_located() {
    let text = replace_line(SCENARIO, "cells =", "cells = ");
    expect_scenario_error(&text, "cells", common::line_of(SCENARIO, "cells ="));
    let text = replace_line(SCENARIO, "cells =", "cells = \"one\"");
    expect_scenario_error(&text, "cells", common::line_of(SCENARIO, "cells ="));
}

#[test]
fn a_nonexistent_scenario_path_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-scenario.toml");
    let m = missing.to_str().unwrap();
    let out = iosim(tmp.path(), &["run", m]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains(m), "stderr does not name {m}:\n{stderr}");
}

#[test]
fn a_nonexistent_models_directory_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-models");
    let m = missing.to_str().unwrap();
    for args in [
        vec!["params", "--models", m],
        vec!["validate", "--models", m],
    ] {
        let out = iosim(tmp.path(), &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: stderr:\n{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(stderr.contains(m), "stderr does not name {m}:\n{stderr}");
    }
}

#[test]
fn bad_usage_exits_with_code_2_without_panicking() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        vec!["bench", "bus-contention", "--sim-seconds", "-1"],
        vec!["bench", "bus-contention", "--masters", "0"],
        vec!["validate", "--format", "xml"],
        vec!["no-such-command"],
    ] {
        let out = iosim(tmp.path(), &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: stderr:\n{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn a_workload_key_of_the_other_workload_kind_is_located() {
    // netperf takes no block size or outstanding count...
    for key in ["block_kib = 64", "outstanding = 4"] {
        let text = replace_line(
            SCENARIO,
            "direction =",
            &format!("direction = \"receive\"\n{key}"),
        );
        let name = key.split(' ').next().unwrap();
        let msg = expect_scenario_error(
            &text,
            &format!("experiment[0].workload[0].{name}"),
            common::line_of(SCENARIO, "direction =") + 1,
        );
        assert!(msg.contains("netperf-tcp-stream"), "{msg}");
    }
    // ...and diskbench no socket or message size.
    let disk = replace_line(SCENARIO, "function =", "function = \"fc\"");
    let disk = replace_line(&disk, "kind =", "kind = \"diskbench\"");
    let disk = replace_line(&disk, "direction =", "direction = \"read\"");
    for key in ["socket_kib = 64", "message_kib = 8"] {
        let text = replace_line(
            &disk,
            "direction =",
            &format!("direction = \"read\"\n{key}"),
        );
        let name = key.split(' ').next().unwrap();
        let msg = expect_scenario_error(
            &text,
            &format!("experiment[0].workload[0].{name}"),
            common::line_of(SCENARIO, "direction =") + 1,
        );
        assert!(msg.contains("diskbench"), "{msg}");
    }
}

#[test]
fn a_published_value_that_is_not_positive_is_located() {
    for v in ["0", "0.0", "-900", "nan", "inf"] {
        let text = replace_line(SCENARIO, "published =", &format!("published = {v}"));
        expect_scenario_error(
            &text,
            "experiment[0].figure[0].published",
            common::line_of(SCENARIO, "published ="),
        );
    }
}

#[test]
fn flags_out_of_range_are_refused_by_the_parser_naming_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = tmp.path().join("ok.toml");
    std::fs::write(&sc, SCENARIO).unwrap();
    let sc = sc.to_str().unwrap();
    for (args, flag) in [
        (vec!["validate", "--threads", "0"], "--threads"),
        (vec!["validate", "--threads", "257"], "--threads"),
        // Only a cross-validation has a full fit to start cold.
        (vec!["validate", "--cold"], "--cross-validate"),
        (vec!["params", "--threads", "many"], "--threads"),
        (vec!["run", sc, "--replications", "0"], "--replications"),
        (vec!["run", sc, "--replications", "1001"], "--replications"),
        (vec!["run", sc, "--precision", "0"], "--precision"),
        (vec!["run", sc, "--precision", "nan"], "--precision"),
        (vec!["run", sc, "--precision", "inf"], "--precision"),
        (
            vec!["bench", "bus-contention", "--masters", "0"],
            "--masters",
        ),
        (
            vec!["bench", "bus-contention", "--masters", "100001"],
            "--masters",
        ),
        (
            vec!["bench", "bus-contention", "--sim-seconds", "0"],
            "--sim-seconds",
        ),
        (
            vec!["bench", "bus-contention", "--sim-seconds", "101"],
            "--sim-seconds",
        ),
    ] {
        let out = iosim(tmp.path(), &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: stderr:\n{stderr}");
        assert!(out.stdout.is_empty(), "{args:?} printed on stdout");
        assert!(
            stderr.contains(flag) && stderr.contains(args[args.len() - 1]),
            "{args:?}: stderr names neither {flag} nor the value:\n{stderr}"
        );
    }
}
