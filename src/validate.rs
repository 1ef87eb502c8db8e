//! Runs scenarios and sets the model beside the published figures.

use crate::error::Result;
use crate::model::{Registry, Scenario};
use crate::sim::{simulate, ExperimentResult};

/// One published figure beside its prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureRow {
    /// Stable id.
    pub id: String,
    /// Paper (scenario source).
    pub paper: String,
    /// Where in the paper.
    pub source: String,
    /// Experiment that predicts it.
    pub experiment: String,
    /// Published value.
    pub published: f64,
    /// Model value in the same unit.
    pub predicted: f64,
    /// `Mbit/s` or `MB/s`.
    pub unit: String,
    /// (predicted - published) / published x 100.
    pub error_pct: f64,
}

/// Error summary of one paper.
#[derive(Debug, Clone, PartialEq)]
pub struct PaperSummary {
    /// Paper.
    pub paper: String,
    /// Figures compared.
    pub figures: usize,
    /// Mean absolute percentage error.
    pub mape: f64,
    /// Largest absolute error, in percent.
    pub worst_pct: f64,
    /// The figure with that error.
    pub worst_id: String,
}

/// The seed of one experiment: a hash of the run seed and the experiment id,
/// so that results do not depend on which other experiments run.
pub fn experiment_seed(seed: u64, scenario: &str, experiment: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in scenario.bytes().chain([0u8]).chain(experiment.bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Simulates every experiment of `sc`, on up to `threads` threads; results in
/// file order whatever the thread count.
pub fn run_scenario(
    reg: &Registry,
    sc: &Scenario,
    seed: u64,
    threads: usize,
) -> Result<Vec<ExperimentResult>> {
    let jobs: Vec<(usize, &crate::model::Experiment)> = sc.experiments.iter().enumerate().collect();
    run_jobs(reg, sc, &jobs, seed, threads)
}

fn run_jobs(
    reg: &Registry,
    sc: &Scenario,
    jobs: &[(usize, &crate::model::Experiment)],
    seed: u64,
    threads: usize,
) -> Result<Vec<ExperimentResult>> {
    let threads = threads.clamp(1, 64).min(jobs.len().max(1));
    let mut slots: Vec<Option<Result<ExperimentResult>>> = (0..jobs.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let chunks: Vec<Vec<usize>> = (0..threads)
            .map(|t| (t..jobs.len()).step_by(threads).collect())
            .collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|idx| {
                scope.spawn(move || {
                    idx.into_iter()
                        .map(|i| {
                            let e = jobs[i].1;
                            (
                                i,
                                simulate(reg, e, &sc.run, experiment_seed(seed, &sc.name, &e.id)),
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            if let Ok(v) = h.join() {
                for (i, r) in v {
                    slots[i] = Some(r);
                }
            }
        }
    });
    slots
        .into_iter()
        .map(|s| {
            s.unwrap_or_else(|| Err(crate::Error::Usage("a simulation thread panicked".into())))
        })
        .collect()
}

/// The model's value of a figure from its experiment's result.
pub fn predicted(result: &ExperimentResult, card_fn_label: &str, unit: &str) -> f64 {
    let Some(f) = result.functions.iter().find(|f| f.label == card_fn_label) else {
        return f64::NAN;
    };
    let t = f.total();
    if unit == "Mbit/s" {
        t.mbit_s()
    } else {
        t.mb_s()
    }
}

/// Figure rows of one scenario given its results (in experiment order).
pub fn figure_rows(reg: &Registry, sc: &Scenario, results: &[ExperimentResult]) -> Vec<FigureRow> {
    let mut rows = Vec::new();
    for (e, r) in sc.experiments.iter().zip(results) {
        for fig in &e.figures {
            let (card_label, adapter, _) = &e.cards[fig.card];
            let fname = reg
                .adapters
                .get(adapter)
                .and_then(|a| a.functions.get(fig.function))
                .map(|f| f.name.clone())
                .unwrap_or_default();
            let p = predicted(r, &format!("{card_label}.{fname}"), &fig.unit);
            rows.push(FigureRow {
                id: fig.id.clone(),
                paper: sc.source.clone(),
                source: fig.source.clone(),
                experiment: e.id.clone(),
                published: fig.published,
                predicted: p,
                unit: fig.unit.clone(),
                error_pct: (p - fig.published) / fig.published * 100.0,
            });
        }
    }
    rows
}

/// MAPE and worst error per paper, in order of first appearance.
pub fn summarise(rows: &[FigureRow]) -> Vec<PaperSummary> {
    let mut papers: Vec<String> = Vec::new();
    for r in rows {
        if !papers.contains(&r.paper) {
            papers.push(r.paper.clone());
        }
    }
    papers
        .into_iter()
        .map(|p| {
            let v: Vec<&FigureRow> = rows.iter().filter(|r| r.paper == p).collect();
            let mape = v.iter().map(|r| r.error_pct.abs()).sum::<f64>() / v.len().max(1) as f64;
            let worst = v.iter().copied().fold(None::<&FigureRow>, |a, r| match a {
                Some(a) if a.error_pct.abs() >= r.error_pct.abs() => Some(a),
                _ => Some(r),
            });
            PaperSummary {
                paper: p,
                figures: v.len(),
                mape,
                worst_pct: worst.map(|w| w.error_pct.abs()).unwrap_or(0.0),
                worst_id: worst.map(|w| w.id.clone()).unwrap_or_default(),
            }
        })
        .collect()
}
