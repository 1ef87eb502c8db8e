//! The bad-input corpus (issue 19): every file under `tests/bad_inputs/` is
//! one mistake, run through the real binary. Its first line says what must
//! happen, e.g.
//!
//! ```text
//! # expect: exit=1 line=9 key="param.clock" contains="unknown unit `MHzz`"
//! ```
//!
//! The run must exit with `exit`, print nothing on standard output, not
//! panic, finish within 20 s, and say `FILE:LINE:COLUMN: key `KEY``, FILE
//! being the path iosim was given, followed by every `contains` text. A
//! header may give `col=` (the column must be that one) and `errors=` (a
//! file with several mistakes: iosim must say `N errors` and report each on
//! its own `error:` line, the first 20 of them). The directory
//! decides the command: `models/` (alone in a `--models` directory, `iosim
//! params`), `scenarios/` (`iosim run FILE`), `calibration/` (`iosim calibrate
//! --calibration FILE`) and `fitted/` (`iosim params --params FILE`). Special
//! files (a FIFO, a symlink loop, a directory) are made at run time in a
//! temporary directory.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// Each case must finish within this bound.
const LIMIT: Duration = Duration::from_secs(20);

/// What a corpus file's header expects.
#[derive(Debug, Default)]
struct Expect {
    exit: i32,
    line: Option<usize>,
    col: Option<usize>,
    key: Option<String>,
    contains: Vec<String>,
    errors: Option<usize>,
}

/// Parses `# expect: exit=1 line=3 key="k" contains="a" contains="b"`.
fn parse_expect(path: &Path, text: &str) -> Expect {
    let first = text.lines().next().unwrap_or_default();
    let rest = first
        .strip_prefix("# expect:")
        .unwrap_or_else(|| panic!("{}: the first line must be `# expect: ...`", path.display()));
    let mut e = Expect {
        exit: -1,
        ..Default::default()
    };
    let mut s = rest.trim();
    while !s.is_empty() {
        let (name, after) = s
            .split_once('=')
            .unwrap_or_else(|| panic!("{}: bad header at `{s}`", path.display()));
        let (value, after) = if let Some(q) = after.strip_prefix('"') {
            let end = q
                .find('"')
                .unwrap_or_else(|| panic!("{}: unclosed quote", path.display()));
            (&q[..end], &q[end + 1..])
        } else {
            after.split_once(' ').unwrap_or((after, ""))
        };
        match name.trim() {
            "exit" => e.exit = value.parse().expect("exit code"),
            "line" => e.line = Some(value.parse().expect("line number")),
            "col" => e.col = Some(value.parse().expect("column number")),
            "errors" => e.errors = Some(value.parse().expect("error count")),
            "key" => e.key = Some(value.to_string()),
            "contains" => e.contains.push(value.to_string()),
            other => panic!("{}: unknown header field `{other}`", path.display()),
        }
        s = after.trim_start();
    }
    assert!(e.exit >= 0, "{}: no exit= in the header", path.display());
    e
}

/// Runs iosim in `dir`, reading its output as it runs; a run over [`LIMIT`] is
/// killed and fails the test.
fn run(dir: &Path, args: &[&str]) -> (Output, Duration) {
    common::run_within(dir, args, LIMIT)
}

/// The command that reads `file` of corpus directory `kind`, and the path
/// iosim is given for it (what its message must name).
fn command_for(kind: &str, file: &Path, tmp: &Path) -> (Vec<String>, PathBuf) {
    let f = file.to_str().unwrap().to_string();
    match kind {
        "models" => {
            let dir = tmp.join("models");
            std::fs::create_dir_all(&dir).unwrap();
            let copy = dir.join(file.file_name().unwrap());
            std::fs::copy(file, &copy).unwrap();
            let args = vec![
                "params".into(),
                "--models".into(),
                dir.display().to_string(),
            ];
            (args, copy)
        }
        "scenarios" => (vec!["run".into(), f], file.to_path_buf()),
        "calibration" => (
            vec![
                "calibrate".into(),
                "--calibration".into(),
                f,
                "--output".into(),
                tmp.join("out.toml").display().to_string(),
                // A file that loads by mistake fails fast instead of fitting.
                "--max-wall-seconds".into(),
                "10".into(),
            ],
            file.to_path_buf(),
        ),
        "fitted" => (
            vec!["params".into(), "--params".into(), f],
            file.to_path_buf(),
        ),
        other => panic!("unknown corpus directory {other}"),
    }
}

/// Checks one run against its expectations; returns a failure description.
fn check(label: &str, out: &Output, named: &Path, e: &Expect) -> Option<String> {
    let err = String::from_utf8_lossy(&out.stderr);
    let mut why = Vec::new();
    if out.status.code() != Some(e.exit) {
        why.push(format!("exit {:?}, expected {}", out.status.code(), e.exit));
    }
    if err.contains("panicked") {
        why.push("panicked".into());
    }
    if !out.stdout.is_empty() {
        why.push("printed on standard output".into());
    }
    let at = location(named, e);
    if !says_at(&err, named, e) {
        why.push(format!("does not say `{at}`"));
    }
    if let Some(n) = e.errors {
        let lines = err.lines().filter(|l| l.starts_with("error: ")).count();
        if lines != n.min(20) || !err.contains(&format!("\n{n} errors")) {
            why.push(format!("reports {lines} errors, expected {n}"));
        }
    }
    for c in &e.contains {
        if !err.contains(c.as_str()) {
            why.push(format!("does not say `{c}`"));
        }
    }
    if why.is_empty() {
        None
    } else {
        Some(format!(
            "{label}: {}\n  stderr: {}",
            why.join("; "),
            err.trim()
        ))
    }
}

/// `FILE:LINE:COL: key `KEY`` as expected, `COL` shown as `COL` when any.
fn location(named: &Path, e: &Expect) -> String {
    let mut at = named.display().to_string();
    if let Some(l) = e.line {
        at.push_str(&format!(":{l}:"));
        match e.col {
            Some(c) => at.push_str(&format!("{c}:")),
            None if e.key.is_some() => at.push_str("COL:"),
            None => {}
        }
    }
    if let Some(k) = &e.key {
        at.push_str(&format!(" key `{k}`"));
    }
    at
}

/// Whether `err` says `FILE:LINE:COL: key `KEY`` (any column unless the
/// header gives one; a key with no line is `FILE: key `KEY``).
fn says_at(err: &str, named: &Path, e: &Expect) -> bool {
    let file = named.display().to_string();
    let key = e.key.as_ref().map(|k| format!(" key `{k}`"));
    let Some(l) = e.line else {
        let at = format!("{file}{}", key.unwrap_or_default());
        return err.contains(&at);
    };
    let head = format!("{file}:{l}:");
    err.match_indices(&head).any(|(i, _)| {
        let rest = &err[i + head.len()..];
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        let (col, rest) = match rest[digits..].strip_prefix(':') {
            Some(r) if digits > 0 => (rest[..digits].parse().ok(), r),
            _ => (None, rest),
        };
        let col_ok = match e.col {
            Some(c) => col == Some(c),
            None => true,
        };
        col_ok && key.as_ref().is_none_or(|k| rest.starts_with(k.as_str()))
    })
}

#[test]
fn every_file_of_the_bad_input_corpus_fails_as_its_header_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_inputs");
    let mut failures = Vec::new();
    let mut count = 0;
    for kind in ["models", "scenarios", "calibration", "fitted"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(kind))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for file in files {
            count += 1;
            let text = std::fs::read_to_string(&file).unwrap();
            let e = parse_expect(&file, &text);
            assert!(
                e.exit == 0 || e.line.is_some() && e.key.is_some(),
                "{}: an error case names its line and key",
                file.display()
            );
            let tmp = tempfile::tempdir().unwrap();
            let (args, named) = command_for(kind, &file, tmp.path());
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (out, _) = run(tmp.path(), &args);
            let label = format!("{kind}/{}", file.file_name().unwrap().to_string_lossy());
            failures.extend(check(&label, &out, &named, &e));
        }
    }
    assert!(count >= 40, "the corpus has {count} files, fewer than 40");
    assert!(
        failures.is_empty(),
        "{} of {count} corpus files failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn mkfifo(path: &Path) {
    common::mkfifo(path)
}

#[test]
fn special_files_fail_naming_the_file_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let fifo = t.join("fifo.toml");
    mkfifo(&fifo);
    let looped = t.join("loop-a.toml");
    std::os::unix::fs::symlink(t.join("loop-b.toml"), &looped).unwrap();
    std::os::unix::fs::symlink(&looped, t.join("loop-b.toml")).unwrap();
    let dir = t.join("dir.toml");
    std::fs::create_dir(&dir).unwrap();
    let mut failures = Vec::new();
    for (special, says) in [
        (&fifo, "not a regular file (a FIFO)"),
        (&looped, "symbolic links"),
        (&dir, "not a regular file (a directory)"),
    ] {
        let s = special.to_str().unwrap();
        for kind in ["scenarios", "calibration", "fitted"] {
            let (args, named) = command_for(kind, special, t);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (out, _) = run(t, &args);
            let e = Expect {
                exit: 1,
                contains: vec![says.into()],
                ..Default::default()
            };
            failures.extend(check(&format!("{kind} {s}"), &out, &named, &e));
        }
    }
    // Under --models: the FIFO and the loop, each alone in a directory.
    for (name, make, says) in [
        ("fifo.toml", 0, "not a regular file (a FIFO)"),
        ("loop.toml", 1, "symbolic links"),
    ] {
        let m = t.join(format!("models-{make}"));
        std::fs::create_dir(&m).unwrap();
        let f = m.join(name);
        if make == 0 {
            mkfifo(&f);
        } else {
            std::os::unix::fs::symlink(&f, &f).unwrap();
        }
        let (out, _) = run(t, &["params", "--models", m.to_str().unwrap()]);
        let e = Expect {
            exit: 1,
            contains: vec![says.into()],
            ..Default::default()
        };
        failures.extend(check(&format!("models {name}"), &out, &f, &e));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
