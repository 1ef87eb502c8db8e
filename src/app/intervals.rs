//! The runs behind the parameter part of the prediction intervals
//! ([`crate::interval`]): each fitted value with an interval moved by one
//! standard error, one at a time, and each experiment that reads it (its
//! assembled configuration's fingerprint changes) simulated again with the
//! same seed. An experiment runs once more per fitted value it reads, and
//! not at all for the others.

use crate::error::Result;
use crate::interval::{param_sigma, Interval};
use crate::model::{Experiment, Registry, Scenario};
use crate::sim::config::assemble;
use crate::sim::ExperimentResult;
use crate::validate::{experiment_rows, FigureRow};

use super::{run_experiments, Job, Runner};

/// One fitted value moved by its standard error: the paths it sets (the
/// values one free parameter sets through `also` share their value and
/// interval, and move together) and the value each moves to.
#[derive(Debug, Clone, PartialEq)]
pub struct Move {
    /// Dotted paths of the values moved.
    pub paths: Vec<String>,
    /// The value they move to (base unit).
    pub to: f64,
}

/// The moves of `reg`'s fitted values that have a standard error (values
/// a model takes through `extends` move with the value they copy), in
/// parameter order. Values written in one model with the same name, value
/// and standard error are one free parameter's (`also`) and move together.
pub fn fitted_moves(reg: &Registry) -> Vec<Move> {
    let mut r = reg.clone();
    let mut groups: Vec<(String, u64, u64, Move)> = Vec::new();
    for (prefix, set) in r.param_sets_mut() {
        for (key, p) in &set.map {
            let Some(sigma) = p.sigma.filter(|_| p.inherited.is_none() && p.is_fitted()) else {
                continue;
            };
            let path = format!("{prefix}.{key}");
            let id = (key.clone(), p.base.to_bits(), sigma.to_bits());
            match groups
                .iter_mut()
                .find(|g| (g.0.as_str(), g.1, g.2) == (id.0.as_str(), id.1, id.2))
            {
                Some(g) => g.3.paths.push(path),
                None => groups.push((
                    id.0,
                    id.1,
                    id.2,
                    Move {
                        paths: vec![path],
                        to: p.base + sigma,
                    },
                )),
            }
        }
    }
    groups.into_iter().map(|g| g.3).collect()
}

/// `reg` with `m` applied.
pub fn moved_registry(reg: &Registry, m: &Move) -> Registry {
    let mut r = reg.clone();
    for p in &m.paths {
        r.set_param(p, m.to);
    }
    r
}

/// The fingerprint of each experiment of `exps` assembled on `reg` (`None`
/// for one that does not assemble).
pub(crate) fn fingerprints(
    reg: &Registry,
    exps: &[(&Scenario, &Experiment, &Experiment)],
) -> Vec<Option<String>> {
    exps.iter()
        .map(|(_, e, _)| assemble(reg, e).ok().map(|c| c.fingerprint()))
        .collect()
}

/// Whether experiment `e` reads what `moved` changes: it assembles on
/// `moved` to another fingerprint than `base`, its fingerprint on the
/// models before the move.
pub(crate) fn reads(moved: &Registry, e: &Experiment, base: &Option<String>) -> bool {
    base.as_ref().is_some_and(|b| {
        assemble(moved, e)
            .ok()
            .is_some_and(|c| &c.fingerprint() != b)
    })
}

/// Per experiment of `exps` (each with its scenario, and the experiment
/// whose setup seeds it: itself, or the one a sweep's point changes), the
/// results of the experiment simulated again with each fitted value it
/// reads moved by its standard error (one result per such value, in
/// [`fitted_moves`] order; none for an experiment that reads no fitted
/// value with an interval), all in one pool, with `seed`.
pub fn parameter_moves(
    reg: &Registry,
    exps: &[(&Scenario, &Experiment, &Experiment)],
    seed: u64,
    runner: &Runner,
) -> Result<Vec<Vec<ExperimentResult>>> {
    let moves = fitted_moves(reg);
    let regs: Vec<Registry> = moves.iter().map(|m| moved_registry(reg, m)).collect();
    let base = fingerprints(reg, exps);
    let mut jobs: Vec<Job> = Vec::new();
    let mut owner: Vec<usize> = Vec::new();
    for (i, &(sc, e, setup)) in exps.iter().enumerate() {
        for r in &regs {
            if reads(r, e, &base[i]) {
                jobs.push(Job::new(r, sc, e, setup));
                owner.push(i);
            }
        }
    }
    let results = run_experiments(&jobs, seed, runner, None)?;
    let mut out: Vec<Vec<ExperimentResult>> = vec![Vec::new(); exps.len()];
    for (i, r) in owner.into_iter().zip(results) {
        out[i].push(r);
    }
    Ok(out)
}

/// Per scenario, its experiments' [`parameter_moves`] (experiments in
/// file order), each seeded as itself.
pub fn scenario_moves(
    reg: &Registry,
    scenarios: &[Scenario],
    seed: u64,
    runner: &Runner,
) -> Result<Vec<Vec<Vec<ExperimentResult>>>> {
    let exps: Vec<(&Scenario, &Experiment, &Experiment)> = scenarios
        .iter()
        .flat_map(|sc| sc.experiments.iter().map(move |e| (sc, e, e)))
        .collect();
    let mut all = parameter_moves(reg, &exps, seed, runner)?.into_iter();
    Ok(scenarios
        .iter()
        .map(|sc| all.by_ref().take(sc.experiments.len()).collect())
        .collect())
}

/// The figure rows of scenario `sc` from its `results` (experiment order),
/// each with its prediction interval's parameter part from `moved` (per
/// experiment, its [`parameter_moves`]).
pub fn rows_with_intervals(
    reg: &Registry,
    sc: &Scenario,
    results: &[ExperimentResult],
    moved: &[Vec<ExperimentResult>],
) -> Vec<FigureRow> {
    let mut rows = Vec::new();
    for (i, (e, r)) in sc.experiments.iter().zip(results).enumerate() {
        let mut base = experiment_rows(reg, sc, e, r);
        let others: Vec<Vec<FigureRow>> = moved
            .get(i)
            .map(|ms| ms.iter().map(|m| experiment_rows(reg, sc, e, m)).collect())
            .unwrap_or_default();
        for (k, row) in base.iter_mut().enumerate() {
            let ys: Vec<f64> = others.iter().map(|o| o[k].predicted).collect();
            row.interval = Interval::of(
                row.predicted,
                Some(param_sigma(row.predicted, &ys)),
                row.interval.family,
                &reg.spread,
            );
        }
        rows.extend(base);
    }
    rows
}
