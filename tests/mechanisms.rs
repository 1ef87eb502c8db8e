//! Mechanisms checked in isolation on the bundled rp8400 scenarios: each test
//! changes one model parameter and checks the direction and the shape of what
//! follows, not a published number.

use iosim::app::{run_scenario, Runner};
use iosim::loader::{apply_bundled_fitted, load_bundled_scenarios, load_registry};
use iosim::model::{Registry, Scenario};
use iosim::validate::figure_rows;

const PIO: &str = "adapter.a9782a.gige.pio_reads_per_interrupt";

fn registry_with(path: &str, value: f64) -> Registry {
    let mut reg = load_registry(&[]).expect("bundled models load");
    apply_bundled_fitted(&mut reg).expect("the bundled fit applies");
    assert!(reg.set_param(path, value), "{path} exists");
    reg
}

fn fig2(reg: &Registry) -> Scenario {
    load_bundled_scenarios(reg)
        .expect("bundled scenarios load")
        .into_iter()
        .find(|s| s.name == "hp2g-fig2-gige-receive")
        .expect("Figure 2 scenario")
}

/// GigE receive predicted by `reg` for the figures of Figure 2 named.
fn receive(reg: &Registry, ids: &[&str]) -> Vec<f64> {
    let sc = fig2(reg);
    let results =
        run_scenario(reg, &sc, 1, &Runner::new(2).expect("a pool")).expect("scenario runs");
    let rows = figure_rows(reg, &sc, &results);
    ids.iter()
        .map(|id| {
            rows.iter()
                .find(|r| r.id == *id)
                .unwrap_or_else(|| panic!("no figure {id}"))
                .predicted
        })
        .collect()
}

/// A register read returns behind the posted writes and waits for the bus:
/// it stalls the interrupt CPU longer when FC fills the PCI-66 bus and the
/// ropes, so GigE receive (limited by that CPU) loses more beside FC than
/// alone.
#[test]
fn register_reads_stall_the_interrupt_cpu_longer_on_a_busy_bus() {
    let ids = ["hp2g.gige-rx.pci66.c1", "hp2g.gige-rx+fc-bd.pci66.c1"];
    // Two reads per interrupt (the fitted count) against none. Alone, the
    // link may still be the limit (no loss); beside FC the stalls cost.
    let none = receive(&registry_with(PIO, 0.0), &ids);
    let two = receive(&registry_with(PIO, 2.0), &ids);
    let alone_loss = 1.0 - two[0] / none[0];
    let shared_loss = 1.0 - two[1] / none[1];
    assert!(
        alone_loss >= 0.0,
        "a register read never speeds receive up: {none:?} -> {two:?}"
    );
    assert!(
        shared_loss > 0.05 && shared_loss > 2.0 * alone_loss,
        "beside FC the read waits longer: loss alone {:.1}%, beside FC {:.1}%",
        100.0 * alone_loss,
        100.0 * shared_loss
    );
}

/// The mean stall of one register read of the GigE function, in us, in each
/// experiment of Figure 2 named (one run of the scenario).
fn register_reads_us(reg: &Registry, ids: &[&str]) -> Vec<f64> {
    let sc = fig2(reg);
    let results =
        run_scenario(reg, &sc, 1, &Runner::new(2).expect("a pool")).expect("scenario runs");
    ids.iter()
        .map(|id| {
            let exp = results
                .iter()
                .find(|r| r.id == *id)
                .unwrap_or_else(|| panic!("no experiment {id}"));
            let gige = exp
                .functions
                .iter()
                .find(|f| f.label == "a9782a.gige")
                .expect("GigE function");
            gige.register_read.secs() * 1e6
        })
        .collect()
}

/// `run` reports the mean register-read stall: none without reads, about a
/// microsecond alone (the fixed I/O latency and the ropes), and longer beside
/// FC in either slot (the bus and the posted writes ahead on the ropes).
#[test]
fn the_register_read_stall_is_measured() {
    assert_eq!(
        register_reads_us(&registry_with(PIO, 0.0), &["gige-rx.pcix.c1"]),
        [0.0]
    );
    let ids = [
        "gige-rx.pcix.c1",
        "gige-rx+fc-bd.pcix.c1",
        "gige-rx+fc-bd.pci66.c1",
    ];
    let reads = register_reads_us(&registry_with(PIO, 2.0), &ids);
    let alone = reads[0];
    assert!((0.5..2.0).contains(&alone), "alone: {alone:.2} us");
    for (id, shared) in ids.iter().zip(&reads).skip(1) {
        assert!(
            *shared > 1.5 * alone,
            "{id}: {shared:.2} us against {alone:.2} us alone"
        );
    }
}
