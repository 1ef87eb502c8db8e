//! Prediction intervals through the real binary: every figure of
//! `validate` and every throughput of `run` carries one, in every format;
//! its structural part follows the spread file in use (`--spread`), its
//! parameter part the fit's intervals (none with `--hand-set`).

mod common;

use common::{iosim, succeeded};

fn json(args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    serde_json::from_str(&succeeded(&iosim(&a))).expect("JSON")
}

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(f64::NAN)
}

#[test]
fn every_validate_figure_has_an_interval_around_its_prediction() {
    let v = json(&["validate", "--paper", "matrox"]);
    let figures = v["figures"].as_array().expect("figures");
    assert!(figures.len() > 50);
    let mut moved = 0;
    for f in figures {
        let (p, lo, hi) = (num(f, "predicted"), num(f, "pi90_low"), num(f, "pi90_high"));
        assert!(lo < p && p < hi, "{f}");
        // Symmetric in log space.
        assert!(((p / lo).ln() - (hi / p).ln()).abs() < 1e-3, "{f}");
        assert!(num(f, "structural_pct") > 0.0, "{f}");
        assert!(num(f, "param_pct") >= 0.0, "{f}");
        assert!(!f["family"].as_str().unwrap_or("").is_empty(), "{f}");
        if num(f, "param_pct") > 0.0 {
            moved += 1;
        }
    }
    // The Matrox fit's values have intervals, and its CPU-bound runs read them.
    assert!(moved > 10, "{moved} figures with a parameter part");
    // The CSV has the same fields.
    let csv = succeeded(&iosim(&[
        "validate", "--paper", "matrox", "--format", "csv",
    ]));
    assert!(csv.contains(
        "\nid,published,predicted,unit,error_pct,pi90_low,pi90_high,param_pct,structural_pct,family,"
    ));
}

#[test]
fn the_structural_part_follows_the_spread_file_and_hand_set_has_no_parameter_part() {
    let tmp = tempfile::tempdir().unwrap();
    let spread = tmp.path().join("spread.toml");
    std::fs::write(
        &spread,
        "kind = \"spread\"\ndefault_sigma = 0.01\n[[family]]\nname = \"cpu\"\nsigma = 0.2\nfigures = 9\n",
    )
    .unwrap();
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/matrox/table2-netperf.toml"
    );
    let s = spread.to_str().unwrap();
    let v = json(&["run", scenario, "--spread", s]);
    let rows = v["intervals"].as_array().expect("intervals");
    assert!(!rows.is_empty());
    for r in rows.iter().filter(|r| num(r, "throughput_MB_s") > 0.0) {
        let want = if r["family"] == "cpu" {
            100.0 * 1.644_853_6 * 0.2
        } else {
            100.0 * 1.644_853_6 * 0.01
        };
        assert!((num(r, "structural_pct") - want).abs() < 0.06, "{r}");
        assert!(num(r, "pi90_low") < num(r, "throughput_MB_s"), "{r}");
    }
    // No fit applied: no value has an interval, no parameter part.
    let h = json(&["run", scenario, "--spread", s, "--hand-set"]);
    for r in h["figures"].as_array().expect("figures") {
        assert_eq!(num(r, "param_pct"), 0.0, "{r}");
    }
    // A bad spread file is refused with its key.
    std::fs::write(&spread, "kind = \"spread\"\ndefault_sigma = 7\n").unwrap();
    let o = iosim(&["run", scenario, "--spread", s]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("default_sigma"));
}
