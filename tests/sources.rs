//! Citations stay inside the repository: every `docs/sources.md#anchor` that
//! a model file (`models/**`), the code (`src/**`) or a document (`*.md`,
//! `docs/*.md`) cites names an anchor that `docs/sources.md` defines
//! (`<a id="...">`), each anchor is defined once, every in-page link of
//! `docs/sources.md` (`](#anchor)`) resolves, and no model file or source
//! file cites the project's working notes (`hardware-facts*.md`,
//! `published-claims*`) or a paper's text file (`*.txt` in `models/`).
//!
//! Seen to fail once each: a model source string citing
//! `docs/sources.md#no-such-entry`, a second `<a id="rp8400">`, and
//! `hardware-facts.md` in a model note.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` (recursively) whose extension is one of `exts`.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, exts, out);
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
        {
            out.push(p);
        }
    }
}

/// The anchors `docs/sources.md` defines, with how many times each is defined.
fn anchors() -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(repo().join("docs/sources.md")).expect("docs/sources.md");
    let mut out = BTreeMap::new();
    for part in text.split("<a id=\"").skip(1) {
        let id = part.split('"').next().unwrap_or_default().to_string();
        *out.entry(id).or_insert(0) += 1;
    }
    out
}

/// The anchors cited as `docs/sources.md#anchor` in `text`.
fn cited(text: &str) -> Vec<String> {
    text.split("docs/sources.md#")
        .skip(1)
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect()
        })
        .collect()
}

fn rel(p: &Path) -> String {
    p.strip_prefix(repo()).unwrap_or(p).display().to_string()
}

#[test]
fn every_anchor_is_defined_once_and_every_in_page_link_resolves() {
    let anchors = anchors();
    assert!(anchors.len() >= 60, "{} anchors", anchors.len());
    let twice: Vec<&String> = anchors
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(a, _)| a)
        .collect();
    assert!(
        twice.is_empty(),
        "anchors defined more than once: {twice:?}"
    );
    let text = std::fs::read_to_string(repo().join("docs/sources.md")).expect("docs/sources.md");
    let broken: Vec<&str> = text
        .split("](#")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|a| !anchors.contains_key(*a))
        .collect();
    assert!(broken.is_empty(), "in-page links to no anchor: {broken:?}");
}

#[test]
fn every_citation_of_docs_sources_names_an_anchor_it_defines() {
    let anchors = anchors();
    let mut paths = Vec::new();
    files(&repo().join("models"), &["toml"], &mut paths);
    files(&repo().join("src"), &["rs"], &mut paths);
    files(&repo().join("docs"), &["md"], &mut paths);
    for top in ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"] {
        paths.push(repo().join(top));
    }
    let mut count = 0;
    let mut missing = Vec::new();
    for p in &paths {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        for a in cited(&text) {
            count += 1;
            if !anchors.contains_key(&a) {
                missing.push(format!("{}: #{a}", rel(p)));
            }
        }
    }
    assert!(
        count >= 300,
        "only {count} citations of docs/sources.md found"
    );
    assert!(
        missing.is_empty(),
        "citations of no entry:\n{}",
        missing.join("\n")
    );
}

#[test]
fn models_and_code_cite_nothing_outside_the_repository() {
    let mut paths = Vec::new();
    files(&repo().join("models"), &["toml"], &mut paths);
    files(&repo().join("src"), &["rs"], &mut paths);
    assert!(paths.len() > 50, "{} files", paths.len());
    let mut bad = Vec::new();
    for p in &paths {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        let in_models = rel(p).starts_with("models");
        for (i, line) in text.lines().enumerate() {
            // A `[[paper]]`'s sources are the scenarios' paper ids (data
            // that names a paper, as `validate` prints it), not citations.
            let paper_ids = line.trim_start().starts_with("sources = [");
            if line.contains("hardware-facts")
                || line.contains("published-claims")
                || (in_models && line.contains(".txt") && !paper_ids)
            {
                bad.push(format!("{}:{}: {}", rel(p), i + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "citations outside the repository:\n{}",
        bad.join("\n")
    );
}
