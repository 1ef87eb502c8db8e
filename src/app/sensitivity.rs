//! The runs behind an experiment's calibration status
//! ([`crate::sensitivity`]): every `assumed` value of the models, the
//! experiments whose assembled configuration reads it (its fingerprint
//! changes when the value moves), and each such experiment simulated again
//! with the value at each end of its range, one value at a time, with the
//! same seed. An experiment runs twice more per assumed value it reads
//! (once where one end of the range is the value itself), and not at all
//! for the others. The moved runs are measured to [`SCREEN_PRECISION_PCT`]
//! and set beside the experiment run once more to that precision with the
//! same seed (common random numbers): a value that changes nothing gives
//! the same bytes, and a move is read from a paired difference.

use crate::error::Result;
use crate::interval::{run_throughputs, throughput_intervals};
use crate::model::{Experiment, Registry, Scenario};
use crate::sensitivity::{assumed_values, Assumed, Effect, ExperimentEffects};
use crate::sim::ExperimentResult;
use crate::validate::experiment_rows;

use super::intervals::{fingerprints, moved_registry, reads, Move};
use super::{run_experiments, Job, Runner};

/// The precision (percent, 95% interval of every watched throughput) the
/// runs of the calibration status are measured to: moves are set beside
/// prediction intervals at least ten times wider.
pub const SCREEN_PRECISION_PCT: f64 = 5.0;

/// How many assumed values are moved in one batch of runs: their moved
/// models are held in memory together.
const VALUES_PER_BATCH: usize = 24;

/// One assumed value an experiment reads, and its results at the ends of
/// the value's range.
#[derive(Debug, Clone)]
pub struct ValueRuns {
    /// Index of the value in [`AssumedRuns::values`].
    pub value: usize,
    /// The result with the value at the low end of its range (`None`: the
    /// range has no low end apart from the value, or none at all).
    pub low: Option<ExperimentResult>,
    /// The result with the value at the high end of its range.
    pub high: Option<ExperimentResult>,
}

impl ExperimentRuns {
    /// The [`Effect`] of each assumed value it reads on the throughputs
    /// `read` takes from a result, each with the log-space half width of
    /// its 90% interval in `half_log` (in `read`'s order).
    pub fn effects(
        &self,
        half_log: &[f64],
        read: impl Fn(&ExperimentResult) -> Vec<f64>,
    ) -> Vec<Effect> {
        let base = self.base.as_ref().map(&read).unwrap_or_default();
        self.values
            .iter()
            .map(|v| {
                let low = v.low.as_ref().map(&read);
                let high = v.high.as_ref().map(&read);
                Effect::of(v.value, &base, half_log, low.as_deref(), high.as_deref())
            })
            .collect()
    }
}

/// The assumed values of a registry and, per experiment asked, the runs
/// with each one it reads moved.
#[derive(Debug, Clone)]
pub struct AssumedRuns {
    /// Every assumed value of the models, in parameter order.
    pub values: Vec<Assumed>,
    /// Per experiment (in the order asked), its runs.
    pub per_experiment: Vec<ExperimentRuns>,
}

/// One experiment's runs for its calibration status.
#[derive(Debug, Clone, Default)]
pub struct ExperimentRuns {
    /// The experiment as it is, measured as the moved runs are (`None`
    /// when it reads no assumed value that has a range).
    pub base: Option<ExperimentResult>,
    /// The assumed values it reads, in [`AssumedRuns::values`] order.
    pub values: Vec<ValueRuns>,
}

/// `reg` with the value at `path` set to `base`.
fn with_value(reg: &Registry, path: &str, base: f64) -> Registry {
    moved_registry(
        reg,
        &Move {
            paths: vec![path.to_string()],
            to: base,
        },
    )
}

/// For each experiment of `exps` (each with its scenario and the
/// experiment whose setup seeds it), the assumed values of `reg` it reads,
/// each simulated again at the ends of its range (see the module doc), all
/// with `seed`. A value with no range (a zero with none stated) is found
/// read by a probe move to a value inside its plausible range, and not
/// simulated.
pub fn assumed_moves(
    reg: &Registry,
    exps: &[(&Scenario, &Experiment, &Experiment)],
    seed: u64,
    runner: &Runner,
) -> Result<AssumedRuns> {
    let values = assumed_values(reg);
    let base = fingerprints(reg, exps);
    let reads = |r: &Registry, i: usize| reads(r, exps[i].1, &base[i]);
    let mut per_experiment: Vec<ExperimentRuns> = vec![ExperimentRuns::default(); exps.len()];
    for (chunk_at, chunk) in values.chunks(VALUES_PER_BATCH).enumerate() {
        // Per value of the chunk: its moved models (low, high) where the
        // range has that end; the probe otherwise.
        let moved: Vec<[Option<Registry>; 2]> = chunk
            .iter()
            .map(|v| v.ends().map(|end| end.map(|x| with_value(reg, &v.path, x))))
            .collect();
        let probes: Vec<Option<Registry>> = chunk
            .iter()
            .map(|v| {
                (v.low.is_none() && v.high.is_none()).then(|| with_value(reg, &v.path, v.probe))
            })
            .collect();
        let mut jobs: Vec<Job> = Vec::new();
        let mut owner: Vec<(usize, usize, usize)> = Vec::new();
        for (i, &(sc, e, setup)) in exps.iter().enumerate() {
            for (k, ends) in moved.iter().enumerate() {
                let value = chunk_at * VALUES_PER_BATCH + k;
                let read_ends: Vec<usize> = (0..2)
                    .filter(|&end| ends[end].as_ref().is_some_and(|r| reads(r, i)))
                    .collect();
                let probed = probes[k].as_ref().is_some_and(|r| reads(r, i));
                if read_ends.is_empty() && !probed {
                    continue;
                }
                per_experiment[i].values.push(ValueRuns {
                    value,
                    low: None,
                    high: None,
                });
                for end in read_ends {
                    if let Some(r) = &ends[end] {
                        jobs.push(Job::new(r, sc, e, setup));
                        owner.push((i, per_experiment[i].values.len() - 1, end));
                    }
                }
            }
        }
        let results = run_experiments(&jobs, seed, runner, Some(SCREEN_PRECISION_PCT))?;
        for ((i, at, end), r) in owner.into_iter().zip(results) {
            let slot = &mut per_experiment[i].values[at];
            if end == 0 {
                slot.low = Some(r);
            } else {
                slot.high = Some(r);
            }
        }
    }
    let moved: Vec<usize> = (0..exps.len())
        .filter(|&i| {
            per_experiment[i]
                .values
                .iter()
                .any(|v| v.low.is_some() || v.high.is_some())
        })
        .collect();
    let jobs: Vec<Job> = moved
        .iter()
        .map(|&i| Job::new(reg, exps[i].0, exps[i].1, exps[i].2))
        .collect();
    let results = run_experiments(&jobs, seed, runner, Some(SCREEN_PRECISION_PCT))?;
    for (i, r) in moved.into_iter().zip(results) {
        per_experiment[i].base = Some(r);
    }
    Ok(AssumedRuns {
        values,
        per_experiment,
    })
}

/// [`assumed_moves`] of every experiment of `scenarios` (in file order),
/// each seeded as itself.
pub fn scenario_assumed_moves(
    reg: &Registry,
    scenarios: &[Scenario],
    seed: u64,
    runner: &Runner,
) -> Result<AssumedRuns> {
    let exps: Vec<(&Scenario, &Experiment, &Experiment)> = scenarios
        .iter()
        .flat_map(|sc| sc.experiments.iter().map(move |e| (sc, e, e)))
        .collect();
    assumed_moves(reg, &exps, seed, runner)
}

/// Per experiment of `results` (named by its id), the [`Effect`] of each
/// assumed value it reads (`runs`, in the same order) on the throughputs a
/// run reports ([`run_throughputs`]), each beside its 90% interval (whose
/// parameter part comes from `moved`, the runs with each fitted value
/// moved).
pub fn run_effects(
    reg: &Registry,
    results: &[ExperimentResult],
    moved: &[Vec<ExperimentResult>],
    runs: &AssumedRuns,
) -> ExperimentEffects {
    let read = |r: &ExperimentResult| -> Vec<f64> {
        run_throughputs(r).into_iter().map(|q| q.1).collect()
    };
    results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let ms: &[ExperimentResult] = moved.get(i).map_or(&[], |m| m.as_slice());
            let half: Vec<f64> = throughput_intervals(reg, r, ms)
                .iter()
                .map(|q| q.2.half_log())
                .collect();
            let effects = runs
                .per_experiment
                .get(i)
                .map(|x| x.effects(&half, read))
                .unwrap_or_default();
            (r.id.clone(), effects)
        })
        .collect()
}

/// The calibration status of every experiment of validation `v`: the
/// assumed values of `reg` each reads and their [`Effect`]s on its
/// predicted figures (each beside its 90% interval), per experiment in file
/// order, named `SCENARIO/EXPERIMENT`; with the list of assumed values the
/// effects index.
pub fn validation_effects(
    reg: &Registry,
    v: &super::Validation,
    seed: u64,
    runner: &Runner,
) -> Result<(Vec<Assumed>, ExperimentEffects)> {
    let runs = scenario_assumed_moves(reg, &v.scenarios, seed, runner)?;
    let mut out = Vec::new();
    let mut rows = v.rows.iter();
    let mut at = 0;
    for (sc, results) in v.scenarios.iter().zip(&v.results) {
        for (e, r) in sc.experiments.iter().zip(results) {
            let n = experiment_rows(reg, sc, e, r).len();
            let half: Vec<f64> = rows
                .by_ref()
                .take(n)
                .map(|r| r.interval.half_log())
                .collect();
            let read = |x: &ExperimentResult| -> Vec<f64> {
                experiment_rows(reg, sc, e, x)
                    .iter()
                    .map(|r| r.predicted)
                    .collect()
            };
            let effects = runs
                .per_experiment
                .get(at)
                .map(|x| x.effects(&half, read))
                .unwrap_or_default();
            out.push((format!("{}/{}", sc.name, e.id), effects));
            at += 1;
        }
    }
    Ok((runs.values, out))
}
