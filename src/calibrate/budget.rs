//! The fitted-value budget: at most one fitted value per five independent
//! published figures.
//!
//! Figures that differ only by noise carry one piece of information: the like
//! ports of one test (functions of one definition, in slots of one kind, under
//! the same workload, whether measured together or one experiment each) count
//! once, and a total of ports whose own figures are published counts nothing.

use std::collections::BTreeSet;

use crate::error::{Error, Location, Result};
use crate::model::{CalibrationSpec, Demand, FigureScope, Registry, Scenario};

/// Published figures per fitted value, at least.
pub const FIGURES_PER_FITTED_VALUE: usize = 5;

/// The number of independent published figures of `scenarios`: each figure
/// is keyed by what determines its value, with the names of like ports and
/// slots left out, and equal keys count once.
pub fn independent_figures(reg: &Registry, scenarios: &[Scenario]) -> usize {
    let mut keys = BTreeSet::new();
    for sc in scenarios {
        for e in &sc.experiments {
            // A port: its adapter, its function's definition (not its name),
            // its slot's kind (not its name) and its link.
            let port = |card: usize, function: usize| -> String {
                let Some((_, adapter, slot)) = e.cards.get(card) else {
                    return String::new();
                };
                let def = reg
                    .adapters
                    .get(adapter)
                    .and_then(|a| a.functions.get(function))
                    .map(|f| {
                        let values: Vec<(&String, u64)> = f
                            .params
                            .map
                            .iter()
                            .map(|(k, v)| (k, v.base.to_bits()))
                            .collect();
                        format!("{:?}/{:?}/{values:?}", f.engine, f.link)
                    })
                    .unwrap_or_default();
                let slot = reg
                    .servers
                    .get(&e.server)
                    .and_then(|s| s.slots.iter().find(|x| &x.name == slot))
                    .map(|x| {
                        format!(
                            "{:?}/{}/{:?}/{:?}",
                            x.modes, x.ropes, x.segment, x.controller
                        )
                    })
                    .unwrap_or_default();
                let link = e.links.get(card).cloned().flatten();
                format!("{adapter}|{def}|{slot}|{link:?}")
            };
            let mut work: Vec<String> = e
                .workloads
                .iter()
                .map(|w| {
                    let kind = match &w.demand {
                        Demand::IpForward {
                            to,
                            socket_bytes,
                            message_bytes,
                        } => format!(
                            "ip-forward to {} {socket_bytes} {message_bytes}",
                            port(w.card, *to)
                        ),
                        k => format!("{k:?}"),
                    };
                    format!("{}:{kind}:{}", port(w.card, w.function), w.direction)
                })
                .collect();
            work.sort();
            let setting = format!(
                "{}|{}|{}|{}|{}",
                sc.source,
                e.server,
                e.testbed,
                e.cells,
                work.join(";")
            );
            let has_ports = e
                .figures
                .iter()
                .any(|f| f.scope == FigureScope::Function && f.unit != "%");
            for f in &e.figures {
                let key = match f.scope {
                    FigureScope::Function => {
                        format!("{setting}|{}|{}", f.unit, port(f.card, f.function))
                    }
                    FigureScope::AllCards | FigureScope::AllFunctions if has_ports => continue,
                    FigureScope::AllCards | FigureScope::AllFunctions => {
                        format!("{setting}|{}|{}", f.unit, f.id)
                    }
                    FigureScope::Cpu => format!("{setting}|cpu"),
                };
                keys.insert(key);
            }
        }
    }
    keys.len()
}

/// Checks that the free parameters of `spec` and the fitted values it names
/// as not refit number at most one per [`FIGURES_PER_FITTED_VALUE`]
/// independent published figures of `scenarios` ([`independent_figures`]).
/// The error points at the last free parameter (or at the calibration file
/// when it frees none).
pub fn check_budget(reg: &Registry, spec: &CalibrationSpec, scenarios: &[Scenario]) -> Result<()> {
    let figures = independent_figures(reg, scenarios);
    let fitted = spec.free.len() + spec.not_refit.len();
    if fitted * FIGURES_PER_FITTED_VALUE <= figures {
        return Ok(());
    }
    let at = spec
        .free
        .last()
        .map(|f| f.at.clone())
        .unwrap_or_else(|| Location {
            file: spec.file.clone(),
            key: "calibration.not_refit".into(),
            line: 0,
            column: 0,
        });
    Err(Error::Invalid {
        at,
        message: format!(
            "{} free parameters and {} fitted values not refit for {figures} independent published figures: at most one fitted value per five figures",
            spec.free.len(),
            spec.not_refit.len()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::{load_bundled_calibration, load_bundled_scenarios, load_registry};

    #[test]
    fn the_bundled_calibration_is_within_budget_and_one_more_is_not() {
        let mut reg = load_registry(&[]).unwrap();
        let mut spec = load_bundled_calibration(&mut reg).unwrap();
        let scenarios = load_bundled_scenarios(&reg).unwrap();
        check_budget(&reg, &spec, &scenarios).unwrap();
        let figures = independent_figures(&reg, &scenarios);
        // Name enough structural choices to exceed one per five figures.
        let room = figures / FIGURES_PER_FITTED_VALUE + 1 - spec.free.len() - spec.not_refit.len();
        spec.not_refit
            .extend((0..room).map(|i| format!("extra-choice-{i}")));
        let e = check_budget(&reg, &spec, &scenarios).unwrap_err();
        assert!(matches!(e, Error::Invalid { .. }), "{e}");
        assert!(
            e.to_string()
                .contains("at most one fitted value per five figures"),
            "{e}"
        );
        // With no free parameter at all, the error still names the file.
        spec.free.clear();
        spec.not_refit = (0..figures).map(|i| format!("c{i}")).collect();
        let e = check_budget(&reg, &spec, &scenarios).unwrap_err();
        assert!(e.to_string().contains("calibration"), "{e}");
    }
}

#[cfg(test)]
mod counting {
    use super::*;
    use crate::loader::{load_bundled_scenarios, load_registry};

    /// Independent figures of each bundled paper.
    fn per_paper() -> Vec<(String, usize, usize)> {
        let reg = load_registry(&[]).unwrap();
        let scenarios = load_bundled_scenarios(&reg).unwrap();
        let mut papers: Vec<String> = scenarios.iter().map(|s| s.source.clone()).collect();
        papers.sort();
        papers.dedup();
        papers
            .into_iter()
            .map(|p| {
                let of: Vec<Scenario> = scenarios
                    .iter()
                    .filter(|s| s.source == p)
                    .cloned()
                    .collect();
                let all = of
                    .iter()
                    .flat_map(|s| &s.experiments)
                    .map(|e| e.figures.len())
                    .sum();
                (p, all, independent_figures(&reg, &of))
            })
            .collect()
    }

    #[test]
    fn like_ports_count_once_and_totals_of_published_ports_not_at_all() {
        let counts = per_paper();
        let get = |prefix: &str| {
            counts
                .iter()
                .find(|(p, _, _)| p.starts_with(prefix))
                .map(|&(_, all, ind)| (all, ind))
                .unwrap()
        };
        // The Matrox paper: 83 figures, most of them like ports of one test.
        let (all, ind) = get("matrox");
        assert_eq!(all, 83);
        // Table 2: throughput and CPU at four link settings (8); Tables 3 and
        // 5: four link settings each (8); Table 10: one port and the CPU at
        // full duplex, one port at half duplex (3).
        assert_eq!(ind, 19, "{counts:?}");
        // The ATM paper publishes aggregates and CPU only: all independent.
        assert_eq!(
            get("hp-atm-a5483a-a5513a-a5515a-1999.txt"),
            (24, 24),
            "{counts:?}"
        );
        let (all, ind) = get("hp-rp8400");
        assert_eq!(all, 50);
        // Every rp8400 figure has its own slot, cells or workload.
        assert_eq!(ind, all, "{counts:?}");
    }
}
