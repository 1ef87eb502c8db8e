//! Every bundled server loads and prints its I/O tree, and every smoke
//! scenario (`scenarios/smoke/`, one or more per server, no published
//! figures) runs with a non-zero throughput in each experiment.

use std::path::PathBuf;
use std::process::Command;

mod common;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `.toml` files of a bundled directory, sorted.
fn tomls(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
        .expect("a bundled directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    v
}

/// The `name` of a model file (its first top-level `name = "..."` line).
fn model_name(path: &PathBuf) -> String {
    let text = std::fs::read_to_string(path).expect("a model file");
    text.lines()
        .find_map(|l| l.strip_prefix("name = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or_else(|| panic!("{}: no name", path.display()))
        .to_string()
}

#[test]
fn every_bundled_server_shows_its_tree() {
    let servers = tomls("models/servers");
    assert!(servers.len() >= 4, "the bundled servers: {servers:?}");
    for path in servers {
        let name = model_name(&path);
        let out = Command::new(env!("CARGO_BIN_EXE_iosim"))
            .args(["show", "server", &name, "--format", "csv"])
            .output()
            .expect("the iosim binary runs");
        assert!(
            out.status.success(),
            "iosim show server {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("UTF-8");
        assert!(
            text.lines().any(|l| l.starts_with("slot/")),
            "iosim show server {name} lists no slot:\n{text}"
        );
    }
}

#[test]
fn every_smoke_scenario_runs_with_throughput() {
    let scenarios = tomls("scenarios/smoke");
    let servers: Vec<String> = tomls("models/servers").iter().map(model_name).collect();
    let mut covered = Vec::new();
    for path in scenarios {
        let v = common::run_json(None, &path);
        let functions = v["functions"].as_array().expect("functions");
        let mut experiments: Vec<&str> = functions
            .iter()
            .map(|f| f["experiment"].as_str().expect("experiment"))
            .collect();
        experiments.dedup();
        assert!(!experiments.is_empty(), "{}: no experiment", path.display());
        for e in experiments {
            let total: f64 = functions
                .iter()
                .filter(|f| f["experiment"] == e)
                .map(|f| f["total_MB_s"].as_f64().expect("MB/s"))
                .sum();
            assert!(
                total > 0.0,
                "{}: experiment {e} moves nothing",
                path.display()
            );
        }
        let text = std::fs::read_to_string(&path).expect("the scenario");
        covered.extend(
            servers
                .iter()
                .filter(|s| text.contains(&format!("server = \"{s}\"")))
                .cloned(),
        );
    }
    for s in servers.iter().filter(|s| s.as_str() != "rp8400-seu") {
        assert!(covered.contains(s), "no smoke scenario runs server {s}");
    }
}
