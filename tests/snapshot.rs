//! Locks the model's predictions: the full output of `iosim validate` (with
//! the bundled fit and with the hand-set values) and of `iosim run` on every
//! bundled scenario must equal the committed snapshots in `tests/snapshots/`,
//! byte for byte. A change that moves a number does so in its own commit,
//! which says why and regenerates the snapshots with
//! `IOSIM_BLESS=1 cargo test --release --test snapshot`.

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `iosim args...` from the repository root and returns standard output.
fn iosim(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_iosim"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the iosim binary runs");
    assert!(
        out.status.success(),
        "iosim {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Compares `actual` with the snapshot `name`, or rewrites it when blessing.
fn check(name: &str, actual: &str) {
    let path = repo().join("tests/snapshots").join(name);
    if std::env::var_os("IOSIM_BLESS").is_some() {
        std::fs::write(&path, actual).expect("write the snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("snapshot {name}: {e} (bless it with IOSIM_BLESS=1)"));
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .enumerate()
            .find(|(_, (e, a))| e != a);
        match first {
            Some((i, (e, a))) => panic!(
                "{name} differs from the snapshot first at line {}:\n  expected: {e}\n  actual:   {a}",
                i + 1
            ),
            None => panic!(
                "{name} differs from the snapshot in length ({} lines expected, {} actual)",
                expected.lines().count(),
                actual.lines().count()
            ),
        }
    }
}

#[test]
fn validate_output_is_the_snapshot() {
    check("validate.csv", &iosim(&["validate", "--format", "csv"]));
}

#[test]
fn hand_set_validate_output_is_the_snapshot() {
    check(
        "validate-hand-set.csv",
        &iosim(&["validate", "--hand-set", "--format", "csv"]),
    );
}

/// Every bundled scenario file, `scenarios/DIR/NAME.toml`, sorted.
fn bundled_scenarios() -> Vec<PathBuf> {
    let mut scenarios = Vec::new();
    for dir in std::fs::read_dir(repo().join("scenarios")).expect("bundled scenarios") {
        let dir = dir.expect("a directory entry").path();
        if !dir.is_dir() {
            continue;
        }
        for e in std::fs::read_dir(&dir).expect("a scenario directory") {
            let path = e.expect("a directory entry").path();
            if path.extension().is_some_and(|e| e == "toml") {
                scenarios.push(path);
            }
        }
    }
    scenarios.sort();
    scenarios
}

/// The snapshot name of a bundled scenario's run: `run-DIR-NAME.EXT`.
fn run_snapshot_name(path: &std::path::Path, ext: &str) -> String {
    let stem = path.file_stem().expect("a file name").to_string_lossy();
    let dir = path
        .parent()
        .and_then(|d| d.file_name())
        .expect("a scenario directory")
        .to_string_lossy();
    format!("run-{dir}-{stem}.{ext}")
}

/// The table of each run carries its calibration status (every assumed
/// value moved over its range); the JSON skips it (`--no-sensitivity`).
#[test]
fn run_output_of_every_bundled_scenario_is_the_snapshot() {
    let scenarios = bundled_scenarios();
    // Every directory under scenarios/ with its files: a scenario added
    // without a snapshot fails below (the snapshot does not exist).
    assert!(
        scenarios.len() >= 26,
        "{} bundled scenarios",
        scenarios.len()
    );
    for path in scenarios {
        let rel = path.strip_prefix(repo()).expect("under the repository");
        let rel = rel.to_string_lossy();
        check(
            &run_snapshot_name(&path, "txt"),
            &iosim(&["run", &rel, "--format", "table"]),
        );
        check(
            &run_snapshot_name(&path, "json"),
            &iosim(&["run", &rel, "--format", "json", "--no-sensitivity"]),
        );
    }
}
