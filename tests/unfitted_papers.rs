//! The bundled scenarios whose figures `iosim validate` reports but the fit leaves out
//! (`fit = false`), and the service-demand figures they brought: the fit sees the same
//! papers and the same budget as without them, and a figure in `ms CPU per MB` is the
//! run's service demand.

mod common;

use std::path::Path;

use iosim::calibrate::budget::account;
use iosim::loader::{load_bundled_calibration, load_bundled_scenarios, load_registry};

#[test]
fn scenarios_left_out_of_the_fit_have_figures_and_the_fit_sees_only_the_others() {
    let mut reg = load_registry(&[]).expect("bundled models load");
    let scenarios = load_bundled_scenarios(&reg).expect("bundled scenarios");
    let (fitted, left_out): (Vec<_>, Vec<_>) = scenarios
        .into_iter()
        .filter(|s| s.has_figures() || !s.fit)
        .partition(|s| s.fit);
    let mut papers: Vec<&str> = left_out.iter().map(|s| s.source.as_str()).collect();
    papers.dedup();
    assert_eq!(
        papers,
        [
            "hp-atm-a5483a-a5513a-a5515a-1999.txt",
            "hp-ab379b-charts-and-hpux-mass-storage.txt (B: HP-UX 11i v3 mass storage paper)",
            "hp-rp7410-gige-2002.txt",
        ]
    );
    for s in &left_out {
        assert!(s.has_figures(), "{}: fit = false but no figure", s.name);
    }
    let mut papers: Vec<&str> = fitted.iter().map(|s| s.source.as_str()).collect();
    papers.sort();
    papers.dedup();
    assert_eq!(
        papers,
        [
            "hp-ab379b-charts-and-hpux-mass-storage.txt (A: AB379B white paper charts)",
            "hp-atm-a5483a-a5513a-a5515a-1999-page2.txt",
            "hp-rp8400-pcix-2gb-fc-gige-2004.txt",
            "matrox-ns-fnic4-linux.txt",
        ]
    );
    // The budget the fit counts (src/calibrate/budget.rs): 36 + 36 + 17 + 17
    // independent figures of the rp8400 paper, the ATM report's page 2, the Matrox
    // paper and the AB379B charts; the figures left out (the ATM report's Tables 8-9,
    // the rp7410, the HP-UX mass storage paper) count in none of them.
    let spec = load_bundled_calibration(&mut reg).expect("bundled calibration");
    let b = account(&reg, &spec, &fitted).expect("the budget");
    let names: Vec<&str> = b.papers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["rp8400", "ATM report", "Matrox", "AB379B charts",]);
    assert_eq!(b.whole.independent, 106);
}

/// The entry of `js[array]` whose `key` is `id`.
fn item(js: &serde_json::Value, array: &str, key: &str, id: &str) -> serde_json::Value {
    js[array]
        .as_array()
        .unwrap_or_else(|| panic!("no {array}"))
        .iter()
        .find(|x| x[key] == id)
        .unwrap_or_else(|| panic!("no {array} entry {id}"))
        .clone()
}

#[test]
fn a_service_demand_figure_is_the_runs_cpu_per_megabyte() {
    let js = common::run_json(
        None,
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/ab379b/rx6600-charts.toml"),
    );
    let experiment = |id: &str| item(&js, "experiments", "experiment", id);
    let figure = |id: &str| item(&js, "figures", "id", id);
    for k in [1, 4, 8] {
        let e = experiment(&format!("sd.{k}k"));
        let sd = figure(&format!("ab379b.sd.{k}k"));
        assert_eq!(sd["unit"], "ms CPU per MB");
        let predicted = sd["predicted"].as_f64().expect("predicted");
        assert_eq!(Some(predicted), e["service_demand_us_per_KB"].as_f64());
        // CPU time of the whole partition per 10^6 bytes: the CPU figure's share of the
        // cpus over the throughput figure's MB/s.
        let cpu = figure(&format!("ab379b.sd.{k}k.cpu"))["predicted"]
            .as_f64()
            .expect("cpu");
        let mb_s = figure(&format!("ab379b.sd.{k}k.tput"))["predicted"]
            .as_f64()
            .expect("MB/s");
        let cpus = e["cpus"].as_f64().expect("cpus");
        let from_parts = cpu / 100.0 * cpus * 1e3 / mb_s;
        assert!(
            (predicted - from_parts).abs() <= 1e-3 * from_parts,
            "{k} KB: {predicted} ms per MB against {from_parts} from CPU and throughput"
        );
    }
}
