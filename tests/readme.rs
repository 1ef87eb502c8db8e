//! The README's recipes run as written: each `sh` block of its "Recipes"
//! section runs (with `iosim` the binary under test) in a scratch directory
//! that has the repository's `models/`, `scenarios/` and `tests/place/`, and
//! must succeed; each `text` block after it lists lines its output must hold
//! (a listed line may stop before the output line's end; runs of spaces are
//! compared as one).

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The recipes: (commands, expected line prefixes) per `sh` block.
fn recipes() -> Vec<(String, Vec<String>)> {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let start = readme.find("\n## Recipes").expect("a Recipes section");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    let section = &rest[..end];
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut lines = section.lines();
    while let Some(l) = lines.next() {
        let fence = l.trim();
        if fence != "```sh" && fence != "```text" {
            continue;
        }
        let body: Vec<String> = lines
            .by_ref()
            .take_while(|l| l.trim() != "```")
            .map(str::to_string)
            .collect();
        if fence == "```sh" {
            out.push((body.join("\n"), Vec::new()));
        } else if let Some(last) = out.last_mut() {
            last.1.extend(body);
        }
    }
    out
}

fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(unix)]
#[test]
fn every_readme_recipe_runs_and_shows_what_the_readme_shows() {
    let recipes = recipes();
    assert!(recipes.len() >= 5, "{} recipes", recipes.len());
    let dir = tempfile::tempdir().expect("a scratch directory");
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("bin");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_iosim"), bin.join("iosim")).expect("link");
    for d in ["models", "scenarios"] {
        std::os::unix::fs::symlink(repo().join(d), dir.path().join(d)).expect("link");
    }
    std::fs::create_dir(dir.path().join("tests")).expect("tests");
    std::os::unix::fs::symlink(repo().join("tests/place"), dir.path().join("tests/place"))
        .expect("link");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (commands, expected) in recipes {
        let out = Command::new("sh")
            .arg("-ec")
            .arg(&commands)
            .current_dir(dir.path())
            .env("PATH", &path)
            .output()
            .expect("sh runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{commands}\nfailed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<String> = stdout.lines().map(squeeze).collect();
        for want in expected.iter().map(|w| squeeze(w)) {
            assert!(
                lines.iter().any(|l| l.starts_with(&want)),
                "{commands}\nprints no line starting `{want}`"
            );
        }
    }
}

#[test]
fn the_readme_stays_short() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let n = readme.lines().count();
    assert!(n <= 300, "README.md has {n} lines: the details go to docs/");
}
