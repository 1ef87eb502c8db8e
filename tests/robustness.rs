//! Robustness against the environment (issue 19): a closed or full standard
//! output, special files and directory loops under `--models`, clashing model
//! files, output files and wall-clock bounds. Each case runs the real binary.

mod common;

use common::names_in;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

fn iosim_cmd(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iosim"));
    c.args(args).current_dir(dir);
    c
}

#[allow(dead_code)]
fn iosim(dir: &Path, args: &[&str]) -> Output {
    iosim_cmd(dir, args)
        .output()
        .expect("the iosim binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_closed_pipe_on_standard_output_ends_quietly_with_exit_0() {
    let dir = TempDir::new().unwrap();
    for args in [&["params"][..], &["params", "--format", "json"][..]] {
        let mut child = iosim_cmd(dir.path(), args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the iosim binary runs");
        // Close the reading end before iosim writes anything, as `| head -0` would.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.is_empty(), "a closed pipe is not an error: {err}");
    }
}

#[test]
fn a_full_disk_on_standard_output_is_a_write_error_with_exit_1() {
    // Help and version too: they are output like any other.
    for args in [
        &["params"][..],
        &["--help"][..],
        &["--version"][..],
        &["help", "run"][..],
    ] {
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            eprintln!("no /dev/full on this system: skipped");
            return;
        };
        let dir = TempDir::new().unwrap();
        let out = iosim_cmd(dir.path(), args).stdout(full).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.contains("cannot write"), "{args:?}: {err}");
        assert!(err.contains("standard output"), "{args:?}: {err}");
    }
}

/// Runs iosim with a bound of `secs` seconds: a run that takes longer is
/// killed and the test fails (a hang, not an error). Its output is read while
/// it runs, so a full pipe cannot stall it.
fn iosim_within(dir: &Path, args: &[&str], secs: u64) -> Output {
    common::run_within(dir, args, std::time::Duration::from_secs(secs)).0
}

fn mkfifo(path: &Path) {
    common::mkfifo(path)
}

/// A valid bus model of its own name (not a bundled one).
fn bus() -> String {
    common::bus_toml("robust-bus")
}

/// Asserts exit code 1 with no panic and a message containing each of `needles`.
fn expect_fail(out: &Output, needles: &[&str]) -> String {
    let err = stderr(out);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks `{n}`:\n{err}");
    }
    err
}

#[test]
fn a_fifo_named_toml_is_refused_without_blocking() {
    let tmp = TempDir::new().unwrap();
    let models = tmp.path().join("models");
    std::fs::create_dir(&models).unwrap();
    let fifo = models.join("pipe.toml");
    mkfifo(&fifo);
    let (m, f) = (models.to_str().unwrap(), fifo.to_str().unwrap());
    let out = iosim_within(tmp.path(), &["params", "--models", m], 15);
    expect_fail(&out, &[f, "not a regular file"]);
    // The same FIFO as a scenario, a fitted file and a calibration file.
    for args in [
        vec!["run", f],
        vec!["params", "--params", f],
        vec!["calibrate", "--calibration", f, "--output", "fitted.toml"],
    ] {
        let out = iosim_within(tmp.path(), &args, 15);
        expect_fail(&out, &[f, "not a regular file"]);
    }
}

#[test]
fn a_directory_given_as_a_file_is_refused() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path().join("scenario.toml");
    std::fs::create_dir(&d).unwrap();
    let out = iosim_within(tmp.path(), &["run", d.to_str().unwrap()], 15);
    expect_fail(&out, &[d.to_str().unwrap(), "not a regular file"]);
}

#[test]
fn an_input_file_over_the_size_cap_is_refused_naming_it() {
    let tmp = TempDir::new().unwrap();
    let models = tmp.path().join("models");
    std::fs::create_dir(&models).unwrap();
    let big = models.join("big.toml");
    // A valid model padded with comments to 5 MiB.
    let mut text = bus();
    let pad = format!("# {}\n", "x".repeat(1022));
    while text.len() < 5 << 20 {
        text.push_str(&pad);
    }
    std::fs::write(&big, &text).unwrap();
    let out = iosim_within(
        tmp.path(),
        &["params", "--models", models.to_str().unwrap()],
        15,
    );
    expect_fail(&out, &[big.to_str().unwrap(), "4 MiB"]);
    let out = iosim_within(tmp.path(), &["run", big.to_str().unwrap()], 15);
    expect_fail(&out, &[big.to_str().unwrap(), "4 MiB"]);
}

#[test]
fn a_directory_symlink_out_of_the_models_tree_is_not_followed() {
    let tmp = TempDir::new().unwrap();
    let models = tmp.path().join("models");
    let outside = tmp.path().join("elsewhere");
    std::fs::create_dir(&models).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(models.join("bus.toml"), bus()).unwrap();
    // Not a model file: reading it would be an error of its own.
    std::fs::write(outside.join("stray.toml"), "kind = \"stray\"\n").unwrap();
    let link = models.join("shared");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let out = iosim_within(
        tmp.path(),
        &["params", "--models", models.to_str().unwrap()],
        15,
    );
    let err = expect_fail(&out, &[link.to_str().unwrap(), "outside"]);
    assert!(!err.contains("stray"), "{err}");
}

#[test]
fn a_directory_symlink_loop_is_walked_once() {
    let tmp = TempDir::new().unwrap();
    let models = tmp.path().join("models");
    let sub = models.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("bus.toml"), bus()).unwrap();
    // models/sub/again -> models and models/sub/more -> models: two loops,
    // which a walk without a visited set takes 2^depth times.
    std::os::unix::fs::symlink(&models, sub.join("again")).unwrap();
    std::os::unix::fs::symlink(&models, sub.join("more")).unwrap();
    let out = iosim_within(
        tmp.path(),
        &["params", "--models", models.to_str().unwrap()],
        15,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    // Read once: the bus's parameters are listed once, from the real path.
    let rows = text.lines().filter(|l| l.contains("robust-bus")).count();
    assert_eq!(rows, 8, "{text}");
    assert!(!text.contains("sub/again"), "{text}");
    assert!(!text.contains("sub/more"), "{text}");
}

#[test]
fn two_files_in_models_defining_the_same_model_are_an_error_naming_both() {
    let tmp = TempDir::new().unwrap();
    let models = tmp.path().join("models");
    std::fs::create_dir_all(models.join("b")).unwrap();
    let first = models.join("a-bus.toml");
    let second = models.join("b/z-bus.toml");
    std::fs::write(&first, bus()).unwrap();
    std::fs::write(&second, bus().replace("66.67", "133.33")).unwrap();
    let out = iosim_within(
        tmp.path(),
        &["params", "--models", models.to_str().unwrap()],
        15,
    );
    expect_fail(
        &out,
        &[
            first.to_str().unwrap(),
            second.to_str().unwrap(),
            "robust-bus",
            "key `name`",
        ],
    );
}

#[test]
fn a_later_models_directory_still_replaces_an_earlier_one() {
    let tmp = TempDir::new().unwrap();
    for d in ["one", "two"] {
        std::fs::create_dir(tmp.path().join(d)).unwrap();
        std::fs::write(tmp.path().join(d).join("bus.toml"), bus()).unwrap();
    }
    let out = iosim_within(
        tmp.path(),
        &["params", "--models", "one", "--models", "two"],
        15,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("two/bus.toml"), "{text}");
}

#[test]
fn fitted_and_calibration_files_in_models_are_an_error_pointing_at_their_flag() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (name, flag) in [
        ("fitted.toml", "--params"),
        ("calibration.toml", "--calibration"),
    ] {
        let tmp = TempDir::new().unwrap();
        let models = tmp.path().join("models");
        std::fs::create_dir(&models).unwrap();
        let file = models.join(name);
        std::fs::copy(root.join("models").join(name), &file).unwrap();
        let out = iosim_within(
            tmp.path(),
            &["params", "--models", models.to_str().unwrap()],
            15,
        );
        expect_fail(&out, &[file.to_str().unwrap(), "key `kind`", flag]);
    }
}

/// A calibration with one free parameter and the least work: a fit of a few
/// model evaluations.
const QUICK_CALIBRATION: &str = r#"kind = "calibration"
description = "one free parameter, for output-file tests"

[calibration]
max_iterations = 1
search_evaluations = 0

[[free]]
param = "testbed.hp-2004-lab.target_latency"
unit = "us"
min = 10
max = 3000
scale = "log"
initial = 500
meaning = "disk array service time of a 128 KB I/O"
"#;

/// A directory holding [`QUICK_CALIBRATION`], and the arguments of its
/// cross-validation in `format`.
fn quick_cross_validation(format: &'static str) -> (TempDir, Vec<&'static str>) {
    let tmp = TempDir::new().unwrap();
    quick_calibration(tmp.path());
    let args = vec![
        "validate",
        "--cross-validate",
        "--calibration",
        "quick.toml",
        "--format",
        format,
    ];
    (tmp, args)
}

fn quick_calibration(dir: &Path) {
    std::fs::write(dir.join("quick.toml"), QUICK_CALIBRATION).unwrap();
}

/// The cross-validation's header says where its full fit started: near the
/// values in use, or, with `--cold` or `--hand-set` (no fit in use), from
/// the initial values; the folds from the initial values either way.
#[test]
fn the_cross_validation_says_where_its_full_fit_started() {
    let (tmp, base) = quick_cross_validation("csv");
    for (extra, want) in [
        (
            None,
            "refit from the values in use (<bundled>/models/fitted.toml)",
        ),
        (Some("--cold"), "from the initial values across"),
        (Some("--hand-set"), "from the initial values across"),
    ] {
        let args: Vec<&str> = base.iter().copied().chain(extra).collect();
        let out = iosim_within(tmp.path(), &args, 360);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        let full = text
            .lines()
            .find(|l| l.starts_with("# full_fit"))
            .unwrap_or_else(|| panic!("{args:?}: no full_fit line in\n{text}"));
        assert!(full.contains(want), "{args:?}: {full}");
        assert!(
            text.contains("left out its fold (its paper figure or table with every figure of the same simulated run), from the initial values"),
            "{args:?}"
        );
    }
}

#[test]
fn calibrate_checks_its_output_before_the_fit_and_words_it_as_a_write() {
    let tmp = TempDir::new().unwrap();
    quick_calibration(tmp.path());
    std::fs::write(tmp.path().join("plain"), "a file, not a directory\n").unwrap();
    let args = [
        "calibrate",
        "--calibration",
        "quick.toml",
        "--output",
        "plain/fitted.toml",
    ];
    let out = iosim_within(tmp.path(), &args, 60);
    let err = expect_fail(&out, &["plain/fitted.toml", "cannot write"]);
    assert!(!err.contains("cannot read"), "{err}");
    assert!(
        !err.contains("model evaluations"),
        "the output is checked before the fit, not after:\n{err}"
    );
}

#[test]
fn calibrate_refuses_to_overwrite_without_force_and_writes_atomically() {
    let tmp = TempDir::new().unwrap();
    quick_calibration(tmp.path());
    let target = tmp.path().join("fitted.toml");
    std::fs::write(&target, "keep me\n").unwrap();
    let args = [
        "calibrate",
        "--calibration",
        "quick.toml",
        "--output",
        "fitted.toml",
    ];
    let out = iosim_within(tmp.path(), &args, 60);
    let err = expect_fail(&out, &["fitted.toml", "already exists", "--force"]);
    assert!(!err.contains("model evaluations"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me\n");
    assert_eq!(names_in(tmp.path()), ["fitted.toml", "quick.toml"]);

    let mut forced = args.to_vec();
    forced.push("--force");
    let out = iosim_within(tmp.path(), &forced, 120);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(text.contains("kind = \"fitted\""), "{text}");
    // No temporary file is left beside it.
    assert_eq!(names_in(tmp.path()), ["fitted.toml", "quick.toml"]);
    // Through a symbolic link to it, the file is replaced and the link stays.
    std::fs::write(&target, "keep me\n").unwrap();
    std::os::unix::fs::symlink("fitted.toml", tmp.path().join("link.toml")).unwrap();
    let mut linked = forced.clone();
    linked[4] = "link.toml";
    let out = iosim_within(tmp.path(), &linked, 120);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&target)
        .unwrap()
        .contains("kind = \"fitted\""));
    let link = std::fs::symlink_metadata(tmp.path().join("link.toml")).unwrap();
    assert!(link.file_type().is_symlink());
    assert_eq!(
        names_in(tmp.path()),
        ["fitted.toml", "link.toml", "quick.toml"]
    );
}

/// A calibrate stopped by SIGINT or SIGTERM during its fit leaves no
/// temporary file, and ends by the signal.
#[test]
fn an_interrupted_calibrate_leaves_no_temporary_file() {
    for sig in [libc_sig::SIGINT, libc_sig::SIGTERM] {
        let tmp = TempDir::new().unwrap();
        quick_calibration(tmp.path());
        let mut child = iosim_cmd(
            tmp.path(),
            &[
                "calibrate",
                "--calibration",
                "quick.toml",
                "--output",
                "fit.toml",
            ],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(700));
        let kill = Command::new("kill")
            .args([format!("-{sig}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt as _;
        assert_eq!(status.signal(), Some(sig), "{status:?}");
        assert_eq!(names_in(tmp.path()), ["quick.toml"], "signal {sig}");
    }
}

/// Signal numbers (Linux).
mod libc_sig {
    pub const SIGINT: i32 = 2;
    pub const SIGTERM: i32 = 15;
}

/// Whether `s` holds a control character (C0 but for nothing, DEL or C1).
fn has_control(s: &str) -> bool {
    s.chars()
        .any(|c| c.is_control() && c != '\n' || ('\u{80}'..='\u{9f}').contains(&c))
}

#[test]
fn control_characters_from_input_files_are_escaped_in_tables_and_errors() {
    let tmp = TempDir::new().unwrap();
    let models = tmp.path().join("models");
    std::fs::create_dir(&models).unwrap();
    let hostile = bus().replace(
        r#"source = "assumed""#,
        r#"source = "\u001b[2J\rcleared\u009b\u007f""#,
    );
    std::fs::write(models.join("bus.toml"), &hostile).unwrap();
    let m = models.to_str().unwrap();
    // The default table puts the long source under its row: escaped too.
    let narrow = iosim_within(tmp.path(), &["params", "--models", m], 15);
    assert!(!has_control(&String::from_utf8_lossy(&narrow.stdout)));
    for format in ["table", "csv"] {
        // One line per row (--wide) so that the row holds its source.
        let out = iosim_within(
            tmp.path(),
            &["params", "--models", m, "--format", format, "--wide"],
            15,
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = String::from_utf8(out.stdout).unwrap();
        let row = text
            .lines()
            .find(|l| l.contains("latency_timer_clocks") && l.contains("robust-bus"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            !has_control(&text),
            "{format}: raw control characters:\n{row:?}"
        );
        assert!(
            row.contains(r"\x1b[2J\x0dcleared\u{9b}\x7f"),
            "{format}: {row}"
        );
    }
    // In an error message: an unknown unit holding an escape sequence.
    let bad = bus().replace(r#"unit = "MHz""#, r#"unit = "M\u001b[31mHz""#);
    std::fs::write(models.join("bus.toml"), &bad).unwrap();
    let out = iosim_within(tmp.path(), &["params", "--models", m], 15);
    let err = expect_fail(&out, &[r"M\x1b[31mHz", "key `param.clock`"]);
    assert!(!has_control(&err), "{err:?}");
}

#[test]
fn csv_text_cells_cannot_start_a_formula_but_numbers_stay_numbers() {
    let tmp = TempDir::new().unwrap();
    let models = tmp.path().join("models");
    std::fs::create_dir(&models).unwrap();
    let hostile = bus()
        .replace(r#"source = "assumed""#, r#"source = "=HYPERLINK(1)""#)
        .replace(r#"source = "PCI-X 1.0""#, r#"source = "-1+2""#);
    std::fs::write(models.join("bus.toml"), &hostile).unwrap();
    let m = models.to_str().unwrap();
    let out = iosim_within(
        tmp.path(),
        &["params", "--models", m, "--format", "csv"],
        15,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(",'=HYPERLINK(1),"), "{text}");
    assert!(text.contains(",'-1+2,"), "{text}");
    assert!(!text.contains(",=HYPERLINK"), "{text}");
}

#[test]
fn huge_values_print_readably_and_ranges_name_their_unit() {
    let tmp = TempDir::new().unwrap();
    let models = tmp.path().join("models");
    std::fs::create_dir(&models).unwrap();
    let bad = bus().replace("value = 66.67", "value = 1e300");
    std::fs::write(models.join("bus.toml"), &bad).unwrap();
    let out = iosim_within(
        tmp.path(),
        &["params", "--models", models.to_str().unwrap()],
        15,
    );
    let err = expect_fail(&out, &["1e300 MHz", "10 to 600 MHz", "key `param.clock`"]);
    assert!(!err.contains("(base unit)"), "{err}");
    assert!(!err.contains("0000000000"), "a number of 301 digits: {err}");
}

#[test]
fn max_wall_seconds_stops_every_long_command_with_exit_5() {
    let tmp = TempDir::new().unwrap();
    quick_calibration(tmp.path());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sc = root.join("scenarios/hp2g/fig5-fc-read.toml");
    let sc = sc.to_str().unwrap();
    for args in [
        vec!["validate", "--max-wall-seconds", "0.2"],
        vec![
            "run",
            sc,
            "--replications",
            "50",
            "--max-wall-seconds",
            "0.2",
        ],
        vec![
            "calibrate",
            "--calibration",
            "quick.toml",
            "--output",
            "out.toml",
            "--max-wall-seconds",
            "0.5",
        ],
        vec![
            "validate",
            "--cross-validate",
            "--calibration",
            "quick.toml",
            "--max-wall-seconds",
            "0.5",
        ],
    ] {
        let out = iosim_within(tmp.path(), &args, 20);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(5), "{args:?}: {err}");
        assert!(err.contains("wall-clock bound"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert!(!tmp.path().join("out.toml").exists());
    assert_eq!(names_in(tmp.path()), ["quick.toml"]);
    let out = iosim_within(tmp.path(), &["validate", "--max-wall-seconds", "0"], 20);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// The cross-validation's `fold_objectives` section: one row per fold that
/// refits something, each objective finite and positive, and the group's
/// held-out MAPE the mean of its figures' held-out errors in `figures`.
#[test]
fn the_cross_validation_gives_each_folds_objectives_beside_its_held_out_error() {
    let (tmp, args) = quick_cross_validation("json");
    let out = iosim_within(tmp.path(), &args, 360);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = j["fold_objectives"].as_array().expect("fold_objectives");
    // The one free parameter is the FC array latency: the rp8400 paper's
    // five figures, all of whose experiments run FC, refit it.
    assert_eq!(rows.len(), 5, "{rows:?}");
    let figures = j["figures"].as_array().expect("figures");
    for r in rows {
        let group = r["held_out_group"].as_str().expect("group");
        for key in ["objective_fold_fit", "objective_full_fit"] {
            let v = r[key].as_f64().unwrap_or(f64::NAN);
            assert!(v.is_finite() && v > 0.0, "{group}: {key} {v}");
        }
        let errors: Vec<f64> = figures
            .iter()
            .filter(|f| f["held_out_group"] == group)
            .filter_map(|f| f["error_pct"].as_f64())
            .map(f64::abs)
            .collect();
        assert!(!errors.is_empty(), "{group}");
        let mape = errors.iter().sum::<f64>() / errors.len() as f64;
        let got = r["held_out_mape_pct"].as_f64().expect("mape");
        assert!((got - mape).abs() < 0.01, "{group}: {got} against {mape}");
    }
}

#[test]
fn no_progress_line_when_standard_error_is_not_a_terminal() {
    let tmp = TempDir::new().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sc = root.join("scenarios/hp2g/fig5-fc-read.toml");
    let out = iosim_within(tmp.path(), &["run", sc.to_str().unwrap()], 20);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

#[test]
fn an_unknown_bus_mode_is_located_at_its_entry_in_modes() {
    let tmp = TempDir::new().unwrap();
    let models = tmp.path().join("models");
    std::fs::create_dir(&models).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let card = std::fs::read_to_string(root.join("models/adapters/dma-exerciser.toml")).unwrap();
    let card = card.replacen(
        r#"modes = ["pcix133", "pcix100","#,
        "modes = [\n  \"pcix133\",\n  \"pcix999\",\n  \"pcix100\",",
        1,
    );
    let line = card.lines().position(|l| l.contains("pcix999")).unwrap() + 1;
    let col = col_of(&card, line, "\"pcix999\"");
    let file = models.join("card.toml");
    std::fs::write(&file, &card).unwrap();
    let out = iosim_within(
        tmp.path(),
        &["params", "--models", models.to_str().unwrap()],
        15,
    );
    let at = format!("{}:{line}:{col}: key `modes[1]`", file.display());
    expect_fail(&out, &[&at, "pcix999"]);

    let server = std::fs::read_to_string(root.join("models/servers/rp8400-seu.toml")).unwrap();
    let server = server.replacen(r#"modes = ["pci66""#, r#"modes = ["pci666""#, 1);
    let line = server.lines().position(|l| l.contains("pci666")).unwrap() + 1;
    let col = col_of(&server, line, "\"pci666\"");
    std::fs::remove_file(&file).unwrap();
    let file = models.join("server.toml");
    std::fs::write(&file, &server).unwrap();
    let out = iosim_within(
        tmp.path(),
        &["params", "--models", models.to_str().unwrap()],
        15,
    );
    let at = format!("{}:{line}:{col}: key `slot[0].modes[0]`", file.display());
    expect_fail(&out, &[&at, "pci666"]);
}

/// The 1-based column of `needle` on 1-based `line` of `text`.
fn col_of(text: &str, line: usize, needle: &str) -> usize {
    text.lines().nth(line - 1).unwrap().find(needle).unwrap() + 1
}

/// A valid scenario on the bundled models.
fn scenario_text() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("tests/bad_inputs/scenarios/unknown-server.toml"))
        .unwrap();
    text.replace("rp9999", "rp8400-seu")
}

#[test]
fn a_figure_id_given_twice_is_refused_not_counted_twice() {
    let tmp = TempDir::new().unwrap();
    let sc = scenario_text();
    let fig = &sc[sc.find("[[experiment.figure]]").unwrap()..];
    let text = format!("{sc}\n{fig}");
    let line = text.rfind("id = \"corpus.e1\"").unwrap();
    let line = text[..line].lines().count() + 1;
    let col = col_of(&text, line, "\"corpus.e1\"");
    let file = tmp.path().join("twice.toml");
    std::fs::write(&file, &text).unwrap();
    let out = iosim_within(tmp.path(), &["run", file.to_str().unwrap()], 20);
    let at = format!(
        "{}:{line}:{col}: key `experiment[0].figure[1].id`",
        file.display()
    );
    expect_fail(&out, &[&at, "corpus.e1", "twice"]);
}

#[test]
fn a_size_in_kib_that_is_no_whole_number_of_bytes_is_refused_not_rounded() {
    let tmp = TempDir::new().unwrap();
    let text = scenario_text().replace(
        "direction = \"receive\"\n",
        "direction = \"receive\"\nsocket_kib = 64.0001\n",
    );
    let line = common::line_of(&text, "socket_kib");
    let col = col_of(&text, line, "64.0001");
    let file = tmp.path().join("frac.toml");
    std::fs::write(&file, &text).unwrap();
    let out = iosim_within(tmp.path(), &["run", file.to_str().unwrap()], 20);
    let at = format!(
        "{}:{line}:{col}: key `experiment[0].workload[0].socket_kib`",
        file.display()
    );
    expect_fail(&out, &[&at, "whole number of bytes"]);
}

#[test]
fn a_calibration_whose_free_parameters_are_all_discrete_fits_without_a_panic() {
    let dir = TempDir::new().unwrap();
    std::fs::write(
        dir.path().join("cal.toml"),
        r#"kind = "calibration"
description = "one discrete parameter, nothing continuous"

[calibration]
max_iterations = 1
search_evaluations = 4

[[free]]
param = "adapter.a9782a.gige.pio_reads_per_interrupt"
unit = "count"
choices = [0, 1]
initial = 1
meaning = "register reads the GigE driver makes per interrupt"
"#,
    )
    .unwrap();
    let out = iosim_within(
        dir.path(),
        &[
            "calibrate",
            "--calibration",
            "cal.toml",
            "--output",
            "fit.toml",
        ],
        120,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let fit = std::fs::read_to_string(dir.path().join("fit.toml")).unwrap();
    assert!(fit.contains("pio_reads_per_interrupt"), "{fit}");
}

#[test]
fn messages_say_what_is_wrong_in_the_words_that_fit() {
    let dir = TempDir::new().unwrap();
    // A --models path that does not exist is not called "not a directory".
    let out = iosim(dir.path(), &["params", "--models", "no/such/dir"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no such directory"), "{err}");
    std::fs::write(dir.path().join("a-file"), "").unwrap();
    let out = iosim(dir.path(), &["params", "--models", "a-file"]);
    assert!(stderr(&out).contains("not a directory"), "{}", stderr(&out));
    // An unknown server says where a server of one's own comes from.
    std::fs::write(
        dir.path().join("s.toml"),
        "[scenario]\nname = \"s\"\n\n[[experiment]]\nid = \"e\"\nserver = \"rx3600\"\n\
         testbed = \"hp-2004-lab\"\ncells = 1\n\n[[experiment.card]]\nname = \"c\"\n\
         adapter = \"a9782a\"\nslot = \"s\"\n",
    )
    .unwrap();
    let out = iosim(dir.path(), &["run", "s.toml"]);
    let err = stderr(&out);
    assert!(err.contains("unknown server `rx3600`"), "{err}");
    assert!(err.contains("--models"), "{err}");
    // A slot on one rope says "1 rope".
    let out = iosim(dir.path(), &["show", "server", "rp8400-seu"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(" 1 rope, "), "{text}");
    assert!(!text.contains(" 1 ropes"), "{text}");
    // `--min-mb-s nan` is a bad flag value, as `abc` is: exit 2.
    for bad in ["nan", "abc", "inf", "-5"] {
        let out = iosim(
            dir.path(),
            &[
                "place",
                "--server",
                "rx6600",
                "--objective",
                "min-each",
                "--min-mb-s",
                bad,
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(2),
            "--min-mb-s {bad}: {}",
            stderr(&out)
        );
    }
    // A tiny wall-clock bound is echoed in a few characters, not 300 digits.
    let scenario =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/hp2g/fig3-gige-transmit.toml");
    let out = iosim(
        dir.path(),
        &[
            "run",
            scenario.to_str().unwrap(),
            "--max-wall-seconds",
            "1e-300",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("bound of 1e-300 s") && err.len() < 400,
        "{err}"
    );
    // Three cards that must sit under different chassis of two: "chassis",
    // never "chassiss".
    let req = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/place/hp2g-dual-function-chassis.toml"),
    )
    .unwrap()
    .replace("\ncount = 2\n", "\ncount = 3\n");
    std::fs::write(dir.path().join("p.toml"), req).unwrap();
    let out = iosim(dir.path(), &["place", "p.toml"]);
    let err = stderr(&out);
    assert!(
        err.contains(
            "3 cards must sit under different chassis, but server `rp8400-seu` has only 2 chassis"
        ),
        "{err}"
    );
}

/// The wall-clock bound holds inside one long experiment and inside
/// `place`'s search, not only between experiments; a far bound changes no
/// result; a sweep grid too large to keep is a usage error.
#[test]
fn the_wall_clock_bound_holds_inside_one_experiment_and_the_placement_search() {
    let tmp = TempDir::new().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fig3 = std::fs::read_to_string(root.join("scenarios/hp2g/fig3-gige-transmit.toml"))
        .unwrap()
        .replace(
            "duration_ms = 100\n",
            "duration_ms = 100000\nmax_events = 10000000000\n",
        )
        .replace("precision_pct = 1\n", "");
    std::fs::write(tmp.path().join("long.toml"), fig3).unwrap();
    let sx24 = root.join("tests/place/sx2000-24.toml");
    let sx24 = sx24.to_str().unwrap().to_string();
    for args in [
        vec!["run", "long.toml", "--max-wall-seconds", "1"],
        // Failover groups across chassis: the whole server searched (the
        // enumeration to its cap, then the local search), 20 s and more.
        vec!["place", &sx24, "--max-wall-seconds", "1"],
    ] {
        // Without the bound inside, each runs for minutes.
        let out = iosim_within(tmp.path(), &args, 20);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(5), "{args:?}: {err}");
        assert!(err.contains("wall-clock bound of 1 s"), "{args:?}: {err}");
    }
    let sc = root.join("scenarios/hp2g/fig5-fc-read.toml");
    let sc = sc.to_str().unwrap();
    let free = iosim_within(tmp.path(), &["run", sc], 60);
    let bounded = iosim_within(tmp.path(), &["run", sc, "--max-wall-seconds", "1000"], 60);
    assert_eq!(free.status.code(), Some(0), "{}", stderr(&free));
    assert_eq!(
        free.stdout, bounded.stdout,
        "a far bound changed the results"
    );
    let out = iosim_within(
        tmp.path(),
        &[
            "sweep",
            "long.toml",
            "--vary",
            "socket_kib=1..1000",
            "--vary",
            "server.rp8400-seu.io_read_latency=500:755:1",
            "--replications",
            "1000",
        ],
        20,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("a grid of 1000 x 256 = 256000 points x ")
            && err.contains(" simulations; at most 10000000"),
        "{err}"
    );
}
