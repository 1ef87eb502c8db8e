//! One validation: every bundled scenario with published figures (or those
//! of one paper) run in a [`Runner`]'s pool, and the model set beside each
//! figure. `validate`, `plot` and `report` show it each in their own way.

use crate::error::Result;
use crate::loader::load_bundled_scenarios;
use crate::model::{Registry, Scenario};
use crate::sim::ExperimentResult;
use crate::validate::{keep_paper, FigureRow};

use super::{rows_with_intervals, run_scenarios, scenario_moves, Runner};

/// One run of every bundled scenario with published figures.
#[derive(Debug, Clone)]
pub struct Validation {
    /// The scenarios run, in file order.
    pub scenarios: Vec<Scenario>,
    /// Per scenario, its experiments' results in file order.
    pub results: Vec<Vec<ExperimentResult>>,
    /// Every published figure beside the model's prediction and its 90%
    /// prediction interval ([`crate::interval`]).
    pub rows: Vec<FigureRow>,
}

impl Validation {
    /// Each scenario with its results.
    pub fn pairs(&self) -> Vec<(&Scenario, Vec<ExperimentResult>)> {
        self.scenarios
            .iter()
            .zip(self.results.iter().cloned())
            .collect()
    }

    /// The widest 95% interval of the throughputs of the experiment behind
    /// a throughput figure, in percent (none for a CPU figure or a run of
    /// one batch).
    pub fn interval_pct(&self, r: &FigureRow) -> Option<f64> {
        if r.unit == "%" || r.unit == "ms CPU per MB" {
            return None;
        }
        self.scenarios
            .iter()
            .zip(&self.results)
            .filter(|(sc, _)| sc.source == r.paper)
            .flat_map(|(_, res)| res.iter())
            .find(|e| e.id == r.experiment)
            .map(|e| e.ci95_pct)
            .filter(|p| p.is_finite() && *p > 0.0)
    }
}

/// Runs the bundled scenarios of `reg` that have published figures (only
/// those of `paper`, see [`keep_paper`]) and sets the model beside each
/// figure.
pub fn validation(
    reg: &Registry,
    paper: Option<&str>,
    seed: u64,
    runner: &Runner,
) -> Result<Validation> {
    let mut scenarios = load_bundled_scenarios(reg)?;
    scenarios.retain(Scenario::has_figures);
    if let Some(name) = paper {
        keep_paper(&mut scenarios, name)?;
    }
    let results = run_scenarios(reg, &scenarios, seed, runner, None)?;
    let moved = scenario_moves(reg, &scenarios, seed, runner)?;
    let mut rows = Vec::new();
    for ((sc, res), m) in scenarios.iter().zip(&results).zip(&moved) {
        rows.extend(rows_with_intervals(reg, sc, res, m));
    }
    Ok(Validation {
        scenarios,
        results,
        rows,
    })
}
