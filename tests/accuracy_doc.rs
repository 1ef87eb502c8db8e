//! `docs/accuracy.md` is what `iosim validate` (seed 1, the bundled fit)
//! gives: per figure set (the first part of the figures' ids), the MAPE of
//! its throughputs, of its CPU utilisations and of its service demands, and
//! its worst figure; then the napkin beside the model per paper and table.
//! Regenerate it with `IOSIM_BLESS=1 cargo test --release --test accuracy_doc`.

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use common::validate_json;

/// The kind of a figure by its unit.
fn kind(unit: &str) -> usize {
    match unit {
        "%" => 1,
        "ms CPU per MB" => 2,
        _ => 0,
    }
}

/// Per kind of figure (throughput, CPU, service demand) the sum of the
/// absolute errors and their count, and the worst figure (|error|, id).
type SetErrors = ([(f64, usize); 3], (f64, String));

fn render(v: &serde_json::Value) -> String {
    let mut md = String::from(
        "# Accuracy\n\nWhat `iosim validate` gives today (seed 1, the bundled fit in \
         `models/fitted.toml`), generated from its output by `tests/accuracy_doc.rs`, \
         which fails when this file and the tool disagree. MAPE is the mean absolute \
         percentage error; a set is the first part of the figures' ids. Held-out errors \
         (figures predicted by a fit that did not see them) come from \
         `iosim validate --cross-validate`.\n\n\
         | set | figures | throughput MAPE % (n) | CPU MAPE % (n) | service demand MAPE % (n) | worst figure | its error % |\n\
         |---|---:|---:|---:|---:|---|---:|\n",
    );
    let mut sets: BTreeMap<String, SetErrors> = BTreeMap::new();
    for f in v["figures"].as_array().expect("figures") {
        let id = f["id"].as_str().expect("id");
        let set = id.split('.').next().unwrap_or(id).to_string();
        let e = f["error_pct"].as_f64().unwrap_or(f64::NAN).abs();
        let k = kind(f["unit"].as_str().expect("unit"));
        let s = sets.entry(set).or_default();
        s.0[k].0 += e;
        s.0[k].1 += 1;
        if e > s.1 .0 || s.1 .1.is_empty() {
            s.1 = (e, id.to_string());
        }
    }
    for (set, (kinds, worst)) in &sets {
        let n: usize = kinds.iter().map(|k| k.1).sum();
        let cell = |(sum, n): (f64, usize)| {
            if n == 0 {
                "-".to_string()
            } else {
                format!("{:.1} ({n})", sum / n as f64)
            }
        };
        let _ = writeln!(
            md,
            "| {set} | {n} | {} | {} | {} | `{}` | {:.1} |",
            cell(kinds[0]),
            cell(kinds[1]),
            cell(kinds[2]),
            worst.1,
            worst.0
        );
    }
    if let Some(rows) = v["napkin"].as_array() {
        md.push_str(
            "\n## Beside the napkin\n\nThe napkin is each port at its link's payload rate \
             in each direction it moves, times the ports, capped by each slot bus's peak: \
             no fitted value, no simulation. Over the throughput figures it can estimate, \
             the model's MAPE beside the napkin's; the model must do at least twice as well \
             wherever the napkin is off by more than 5%.\n\n\
             | paper | table | figures | model MAPE % | napkin MAPE % | model at most half |\n\
             |---|---|---:|---:|---:|---|\n",
        );
        for r in rows {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.2} | {:.2} | {} |",
                r["paper"].as_str().unwrap_or_default(),
                r["table"].as_str().unwrap_or_default(),
                r["figures"],
                r["model_mape_pct"].as_f64().unwrap_or(f64::NAN),
                r["napkin_mape_pct"].as_f64().unwrap_or(f64::NAN),
                r["model_at_most_half"].as_str().unwrap_or_default(),
            );
        }
    }
    md
}

#[test]
fn docs_accuracy_md_is_what_validate_gives() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/accuracy.md");
    let md = render(&validate_json());
    if std::env::var_os("IOSIM_BLESS").is_some() {
        std::fs::write(&path, &md).expect("write docs/accuracy.md");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == md,
        "docs/accuracy.md differs from what `iosim validate` gives: regenerate it with \
         IOSIM_BLESS=1 cargo test --release --test accuracy_doc\n--- expected ---\n{md}"
    );
}
