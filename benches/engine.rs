//! Benchmarks out of CI timing (`cargo bench`): the event engine on the
//! bus-contention micro model, and one whole bundled experiment.

use iosim::loader::{apply_bundled_fitted, load_bundled_scenarios, load_registry};
use iosim::model::{Experiment, Registry, RunSpec};

fn main() {
    divan::main();
}

/// The bus-contention micro model (4 masters, 20 ms simulated): the engine
/// and its event queue with almost no model around them.
#[divan::bench]
fn bus_contention_4_masters_20ms() -> u64 {
    iosim::bench::bus_contention(divan::black_box(4), 0.02, 1).transactions
}

/// The bundled models with the bundled fit, and one bundled experiment.
fn experiment(scenario: &str, id: &str) -> (Registry, Experiment) {
    let mut reg = load_registry(&[]).expect("bundled models load");
    apply_bundled_fitted(&mut reg).expect("bundled fit applies");
    let exp = load_bundled_scenarios(&reg)
        .expect("bundled scenarios load")
        .into_iter()
        .find(|s| s.name == scenario)
        .and_then(|s| s.experiments.into_iter().find(|e| e.id == id))
        .expect("the experiment");
    (reg, exp)
}

/// Whole experiments, 2 ms warm-up and 10 ms measured: GigE and FC
/// bidirectional together on PCI-X, and on PCI-66 (delayed-read retries).
#[divan::bench(args = ["gige-bd+fc-bd.pcix.c1", "gige-bd+fc-bd.pci66.c1"])]
fn full_experiment_12ms(bencher: divan::Bencher, id: &str) {
    let (reg, exp) = experiment("hp2g-fig4-gige-bidirectional", id);
    let run = RunSpec {
        warmup_ms: 2.0,
        duration_ms: 10.0,
        min_ms: 10.0,
        precision_pct: None,
        ..RunSpec::default()
    };
    bencher.bench(|| {
        iosim::sim::simulate(&reg, &exp, &run, 1)
            .expect("runs")
            .events
    });
}
