//! Outputs never clobber (issue 47): every command that writes a file
//! (`calibrate --output`, `report --out`, `plot --out`, `validate --plot`,
//! `sweep --plot`, `sweep --html`, `place --html`) refuses, before any work, a target that is not a regular
//! file, an existing file without `--force`, an input of the same run, and a
//! path whose directory is missing; a refused run leaves its directory as it
//! was. Each case names what it gives and what the message must say.

mod common;

use common::names_in;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

fn run(dir: &Path, args: &[&str]) -> Output {
    common::run_within(dir, args, Duration::from_secs(120)).0
}

/// A short scenario for `sweep --plot`.
const SWEEP: &[&str] = &[
    "sweep",
    "scenarios/hp2g/fig3-gige-transmit.toml",
    "--experiment",
    "gige-tx.pcix.c1",
    "--vary",
    "socket_kib=4,8",
];

/// A scratch directory with the special files the cases name: a FIFO, a
/// symbolic link to /dev/null and one to nothing, a directory, a regular
/// file, a chart directory holding one chart, and a cross-validation file.
fn scratch() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    common::mkfifo(&t.join("fifo"));
    std::os::unix::fs::symlink("/dev/null", t.join("null-link")).unwrap();
    std::os::unix::fs::symlink(t.join("nothing"), t.join("dangling")).unwrap();
    std::fs::create_dir(t.join("dir")).unwrap();
    std::fs::write(t.join("plain"), "keep me\n").unwrap();
    std::fs::create_dir(t.join("charts")).unwrap();
    std::fs::write(t.join("charts/old.svg"), "<svg/>").unwrap();
    std::fs::write(t.join("cv.json"), "{\"figures\": []}").unwrap();
    tmp
}

#[test]
fn every_output_refuses_what_it_must_not_replace_before_any_work() {
    let repo = env!("CARGO_MANIFEST_DIR");
    // (command before the output flag, output flag, target, extra flags,
    // what the message says)
    let request = format!("{repo}/tests/place/rx6600-ab379b.toml");
    let file_commands: Vec<Vec<&str>> = vec![
        vec!["calibrate", "--output"],
        vec!["report", "--out"],
        [SWEEP, &["--html"]].concat(),
        vec!["place", &request, "--html"],
    ];
    let dir_commands: Vec<Vec<&str>> = vec![
        vec!["plot", "--out"],
        vec!["validate", "--plot"],
        [SWEEP, &["--plot"]].concat(),
    ];
    let mut cases: Vec<(Vec<String>, &str)> = Vec::new();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    for c in &file_commands {
        for (target, extra, says) in [
            ("fifo", None, "not a regular file (a FIFO)"),
            ("null-link", Some("--force"), "a symbolic link to a device"),
            ("dangling", Some("--force"), "a symbolic link to nothing"),
            ("dir", Some("--force"), "not a regular file (a directory)"),
            ("plain", None, "already exists; pass --force to replace it"),
            ("newdir/", None, "names a directory, not a file"),
            (
                "no/such/dir/f",
                None,
                "its directory `no/such/dir` does not exist",
            ),
            ("plain/f", None, "`plain` is not a directory"),
        ] {
            let mut a = s(c);
            a.push(target.to_string());
            a.extend(extra.map(String::from));
            cases.push((a, says));
        }
    }
    // An input of the same run, even with --force.
    cases.push((
        s(&[
            "report",
            "--out",
            "cv.json",
            "--cross-validation",
            "cv.json",
            "--force",
        ]),
        "an input of this run",
    ));
    cases.push((
        s(&[
            "calibrate",
            "--output",
            "plain",
            "--params",
            "plain",
            "--force",
        ]),
        "an input of this run",
    ));
    cases.push((
        s(&[SWEEP, &["--html", SWEEP[1], "--force"]].concat()),
        "an input of this run",
    ));
    cases.push((
        s(&["place", &request, "--html", &request, "--force"]),
        "an input of this run",
    ));
    for c in &dir_commands {
        for (target, extra, says) in [
            ("fifo", None, "not a directory (a FIFO)"),
            ("plain", Some("--force"), "not a directory (a file)"),
            ("dangling", Some("--force"), "a symbolic link to nothing"),
            (
                "charts",
                None,
                "already holds 1 chart or CSV file; pass --force",
            ),
            (
                "no/such/dir",
                None,
                "its directory `no/such` does not exist",
            ),
        ] {
            let mut a = s(c);
            a.push(target.to_string());
            a.extend(extra.map(String::from));
            cases.push((a, says));
        }
    }
    let mut failures = Vec::new();
    for (mut args, says) in cases {
        let tmp = scratch();
        let t = tmp.path();
        std::os::unix::fs::symlink(Path::new(repo).join("scenarios"), t.join("scenarios")).unwrap();
        let before = names_in(t);
        // A --models directory that does not exist: checked after the
        // output, so its error would show that the output came second.
        args.extend(["--models".into(), "no-models".into()]);
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(t, &a);
        let err = String::from_utf8_lossy(&out.stderr);
        let mut why = Vec::new();
        if out.status.code() != Some(1) {
            why.push(format!("exit {:?}", out.status.code()));
        }
        if !err.contains("cannot write") || !err.contains(says) {
            why.push(format!("does not say `cannot write` and `{says}`"));
        }
        if err.contains("no-models") {
            why.push("checked its output after loading its models".into());
        }
        if names_in(t) != before {
            why.push(format!("left {:?} (was {before:?})", names_in(t)));
        }
        if std::fs::read_to_string(t.join("plain")).unwrap() != "keep me\n" {
            why.push("changed `plain`".into());
        }
        if !why.is_empty() {
            failures.push(format!(
                "{a:?}: {}\n  stderr: {}",
                why.join("; "),
                err.trim()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn force_writes_into_a_chart_directory_and_a_new_one_is_made() {
    let tmp = scratch();
    let t = tmp.path();
    let repo = env!("CARGO_MANIFEST_DIR");
    std::os::unix::fs::symlink(Path::new(repo).join("scenarios"), t.join("scenarios")).unwrap();
    // A chart directory that holds charts: written into with --force, the
    // old chart left, the new ones beside it.
    let args: Vec<&str> = [SWEEP, &["--plot", "charts", "--force"]].concat();
    let out = run(t, &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names = names_in(&t.join("charts"));
    assert!(names.contains(&"old.svg".to_string()), "{names:?}");
    assert!(
        names.len() > 3 && names.iter().all(|n| !n.ends_with(".tmp")),
        "{names:?}"
    );
    // A new directory whose parent exists is made.
    let out = run(t, &[SWEEP, &["--plot", "new"]].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(t.join("new").is_dir());
}
