//! The napkin: the line-rate estimate a planner makes without a simulator,
//! set beside the model so that what the simulation adds is measured.
//!
//! For a throughput figure, each port the figure reads moves its link's
//! payload rate (the link's goodput ceiling, from its line rate and frame
//! format) in each direction its workload moves, and the ports on one slot's
//! bus together move at most that bus's peak. No fitted value and no
//! simulation enter it: it is what "each port at line rate, times the ports,
//! capped by the slot" gives. A figure of the CPUs, and a function without a
//! link (virtual Ethernet, a bus exerciser), has no napkin value.

use std::collections::BTreeMap;

use crate::model::{Demand, Direction, Experiment, FigureSpec, Registry, Scenario};
use crate::sim::config::SystemCfg;
use crate::sim::engines::Engine;
use crate::units::BytesPerSec;
use crate::validate::{
    figure_function, figure_functions, figure_of, function_label, throughput_in, FigureRow,
};

/// The napkin value of figure `fig` of experiment `exp` (assembled into
/// `cfg`), in the figure's unit; `None` for a CPU figure, a figure of a
/// function without a link, or a unit the napkin does not speak.
pub fn estimate(
    reg: &Registry,
    exp: &Experiment,
    cfg: &SystemCfg,
    fig: &FigureSpec,
) -> Option<f64> {
    let labels: Vec<&str> = cfg.functions.iter().map(|f| f.label.as_str()).collect();
    let (fn_label, fname) = figure_function(reg, exp, fig);
    let fs = figure_functions(&labels, fig, &fn_label, &fname)?;
    if fs.is_empty() {
        return None;
    }
    let ways = directions(reg, exp);
    // Per slot bus: the payload its ports would move at line rate.
    let mut per_bus: BTreeMap<usize, f64> = BTreeMap::new();
    for &f in &fs {
        let pf = &cfg.functions[f];
        let ceiling = Engine::new(&pf.cfg).ceiling().0;
        if ceiling <= 0.0 {
            return None;
        }
        let n = ways.get(pf.label.as_str()).copied().unwrap_or(1);
        *per_bus.entry(slot_bus(cfg, pf.bus)).or_default() += ceiling * f64::from(n);
    }
    let bytes_per_s: f64 = per_bus
        .iter()
        .map(|(&b, &load)| load.min(cfg.buses[b].bus.peak().0))
        .sum();
    in_unit(bytes_per_s, &fig.unit)
}

/// The bus of the slot that bus `b` hangs from: `b` itself, or, for the
/// secondary bus of an on-card bridge, its slot's bus.
fn slot_bus(cfg: &SystemCfg, b: usize) -> usize {
    match cfg.buses[b].upstream {
        Some(cb) => slot_bus(cfg, cfg.card_bridges[cb].parent),
        None => b,
    }
}

/// Per `card.function` label, the directions its workloads move (1 or 2):
/// an IP forward's ingress port receives and its egress port sends.
fn directions(reg: &Registry, exp: &Experiment) -> BTreeMap<String, u32> {
    let mut ways: BTreeMap<String, (bool, bool)> = BTreeMap::new();
    let label = |card: usize, function: usize| function_label(reg, exp, card, function).0;
    for w in &exp.workloads {
        let (out, inn) = match w.direction {
            Direction::Out => (true, false),
            Direction::In => (false, true),
            Direction::Both => (true, true),
        };
        let e = ways.entry(label(w.card, w.function)).or_default();
        e.0 |= out;
        e.1 |= inn;
        if let Demand::IpForward { to, .. } = w.demand {
            // What one port receives the other sends, and the reverse.
            let e = ways.entry(label(w.card, to)).or_default();
            e.0 |= inn;
            e.1 |= out;
        }
    }
    ways.into_iter()
        .map(|(k, (o, i))| (k, u32::from(o) + u32::from(i)))
        .collect()
}

/// `bytes_per_s` in a figure's throughput unit; `None` for another unit.
fn in_unit(bytes_per_s: f64, unit: &str) -> Option<f64> {
    matches!(unit, "MB/s" | "Mbit/s" | "Mibit/s")
        .then(|| throughput_in(BytesPerSec(bytes_per_s), unit))
}

/// The napkin value of every figure of `scenarios` that has one, by figure id.
/// An experiment that does not assemble has none (validation reports it).
pub fn estimates(reg: &Registry, scenarios: &[Scenario]) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for sc in scenarios {
        for e in &sc.experiments {
            let Ok(cfg) = crate::sim::config::assemble(reg, e) else {
                continue;
            };
            for fig in &e.figures {
                if let Some(v) = estimate(reg, e, &cfg, fig) {
                    out.insert(fig.id.clone(), v);
                }
            }
        }
    }
    out
}

/// The model beside the napkin over the throughput figures of one table of
/// one paper.
#[derive(Debug, Clone, PartialEq)]
pub struct NapkinSummary {
    /// Paper (scenario source).
    pub paper: String,
    /// The table or figure of the paper (the figure source before its `:`).
    pub table: String,
    /// Throughput figures with a napkin value.
    pub figures: usize,
    /// The model's MAPE over them, percent.
    pub model_mape: f64,
    /// The napkin's MAPE over them, percent.
    pub napkin_mape: f64,
}

impl NapkinSummary {
    /// Whether the model does what it must beside the napkin: where the
    /// napkin is off by more than 5%, at most half its error.
    pub fn model_earns_its_keep(&self) -> bool {
        self.napkin_mape <= 5.0 || self.model_mape <= 0.5 * self.napkin_mape
    }
}

/// Per paper and table (rows `table = "*"`: the whole paper), in order of
/// first appearance, the model's and the napkin's MAPE over the figures of
/// `rows` that have a napkin value in `napkin`.
pub fn summarise(rows: &[FigureRow], napkin: &BTreeMap<String, f64>) -> Vec<NapkinSummary> {
    let mut groups: Vec<(String, String)> = Vec::new();
    for r in rows.iter().filter(|r| napkin.contains_key(&r.id)) {
        for g in [
            (r.paper.clone(), "*".to_string()),
            (r.paper.clone(), figure_of(&r.source)),
        ] {
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
    }
    groups
        .into_iter()
        .map(|(paper, table)| {
            let mut model = 0.0;
            let mut est = 0.0;
            let mut n = 0;
            for r in rows
                .iter()
                .filter(|r| r.paper == paper && (table == "*" || figure_of(&r.source) == table))
            {
                if let Some(v) = napkin.get(&r.id) {
                    model += r.error_pct.abs();
                    est += 100.0 * ((v - r.published) / r.published).abs();
                    n += 1;
                }
            }
            let d = n.max(1) as f64;
            NapkinSummary {
                paper,
                table,
                figures: n,
                model_mape: model / d,
                napkin_mape: est / d,
            }
        })
        .collect()
}

/// The `napkin` section of `validate`: per paper (`table` `*`) and per
/// table, the model's and the napkin's MAPE over the throughput figures the
/// napkin can estimate, and whether the model does at least twice as well
/// where the napkin is off by more than 5%.
pub fn section(rows: &[FigureRow], napkin: &BTreeMap<String, f64>) -> crate::report::Section {
    use crate::report::{Cell, Section};
    let mut s = Section::new(
        "napkin",
        &[
            "paper",
            "table",
            "figures",
            "model_mape_pct",
            "napkin_mape_pct",
            "model_at_most_half",
        ],
    );
    for n in summarise(rows, napkin) {
        let verdict = if n.napkin_mape <= 5.0 {
            "napkin within 5%"
        } else if n.model_earns_its_keep() {
            "yes"
        } else {
            "no"
        };
        s.rows.push(vec![
            Cell::Text(n.paper),
            Cell::Text(n.table),
            Cell::Int(n.figures as u64),
            Cell::Num(n.model_mape, 2),
            Cell::Num(n.napkin_mape, 2),
            Cell::Text(verdict.into()),
        ]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::{load_bundled_scenarios, load_registry};

    fn napkin_of(id: &str) -> f64 {
        let reg = load_registry(&[]).unwrap();
        let scenarios = load_bundled_scenarios(&reg).unwrap();
        estimates(&reg, &scenarios)[id]
    }

    #[test]
    fn one_gige_port_receiving_is_its_links_goodput() {
        // Gigabit Ethernet, MTU 1500: 1448 bytes of TCP payload per 1538
        // bytes on the wire (with preamble and gap) of 10^9 bit/s.
        let v = napkin_of("hp2g.gige-rx.pcix.c1");
        let goodput = 1e9 / 8.0 * 1448.0 / 1538.0 * 8.0 / 1e6;
        assert!(
            (v - goodput).abs() < 0.02 * goodput,
            "{v} against {goodput}"
        );
    }

    #[test]
    fn both_ways_doubles_and_a_pci66_slot_caps() {
        let one = napkin_of("hp2g.gige-rx.pcix.c1");
        let both = napkin_of("hp2g.gige-bd.pcix.c1");
        assert!((both - 2.0 * one).abs() < 1e-9, "{both} against 2 x {one}");
        // GigE and FC both ways on one PCI-66 slot: 2 x 118.7 + 2 x 206.5
        // MB/s of line rate, capped at the bus's 533 MB/s (the figure reads
        // GigE alone, so only its own 237 MB/s: under the cap).
        let gige = napkin_of("hp2g.gige-bd+fc-bd.pci66.c1");
        assert!((gige - both).abs() < 1e-9, "{gige}");
    }

    #[test]
    fn a_summary_counts_only_figures_with_a_napkin_value() {
        let row = |id: &str, published: f64, error_pct: f64| FigureRow {
            id: id.into(),
            paper: "p".into(),
            source: "Table 1: x".into(),
            experiment: "e".into(),
            published,
            predicted: published * (1.0 + error_pct / 100.0),
            unit: "MB/s".into(),
            error_pct,
            interval: crate::interval::Interval::of(
                published,
                None,
                crate::model::Family::Bus,
                &Default::default(),
            ),
        };
        let rows = [
            row("a", 100.0, 2.0),
            row("b", 100.0, -4.0),
            row("cpu", 50.0, 30.0),
        ];
        let napkin = BTreeMap::from([("a".to_string(), 120.0), ("b".to_string(), 90.0)]);
        let s = summarise(&rows, &napkin);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].table.as_str(), s[1].table.as_str()), ("*", "Table 1"));
        assert_eq!(s[1].figures, 2);
        assert!((s[1].model_mape - 3.0).abs() < 1e-12);
        assert!((s[1].napkin_mape - 15.0).abs() < 1e-12);
        assert!(s[1].model_earns_its_keep());
        let bad = NapkinSummary {
            model_mape: 8.0,
            napkin_mape: 15.0,
            ..s[1].clone()
        };
        assert!(!bad.model_earns_its_keep());
    }
}
