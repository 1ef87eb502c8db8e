//! The default table output fits 160 columns: every line of `validate`,
//! `run` (every bundled scenario), `sweep` and `place` on bundled inputs
//! (long text goes under its row); `--wide` keeps each row on one line.

mod common;
use common::{iosim, succeeded};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Asserts that no line of `args`' table output is wider than 160.
fn fits(args: &[&str]) {
    let out = succeeded(&iosim(args));
    for (n, line) in out.lines().enumerate() {
        let w = line.chars().count();
        assert!(w <= 160, "{args:?} line {}: {w} characters\n{line}", n + 1);
    }
}

fn scenarios(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("scenarios") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            scenarios(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

#[test]
fn validate_and_every_bundled_scenario_run_fit_160_columns() {
    fits(&["validate"]);
    let mut all = Vec::new();
    scenarios(&repo().join("scenarios"), &mut all);
    all.sort();
    assert!(all.len() > 20);
    for s in &all {
        fits(&["run", s.to_str().expect("utf-8")]);
    }
}

#[test]
fn sweep_and_place_fit_160_columns() {
    let r = repo();
    let s = |p: &str| r.join(p).to_str().expect("utf-8").to_string();
    let ab = s("scenarios/ab379b/rx6600-throughput-256k.toml");
    fits(&[
        "sweep",
        &ab,
        "--experiment",
        "1port.bidirectional",
        "--vary",
        "slot:ab379b=slot-3,slot-5,slot-8",
    ]);
    let gige = s("scenarios/hp2g/fig3-gige-transmit.toml");
    fits(&["sweep", &gige, "--vary", "cells=1,2,4"]);
    for req in [
        "tests/place/rx6600-four.toml",
        "tests/place/hp2g-dual-function.toml",
        "tests/place/nclass-atm622.toml",
        "tests/place/sx2000-12-ab379b.toml",
        "tests/place/rx6600-ab379b-gige.toml",
    ] {
        fits(&["place", &s(req)]);
    }
}

#[test]
fn wide_keeps_each_row_on_one_line() {
    let ab = repo().join("scenarios/ab379b/rx6600-throughput-256k.toml");
    let out = succeeded(&iosim(&["run", ab.to_str().expect("utf-8"), "--wide"]));
    assert!(out.lines().any(|l| l.chars().count() > 160), "{out}");
    assert!(out
        .lines()
        .any(|l| l.starts_with("# units: ") && l.ends_with("of payload")));
}
