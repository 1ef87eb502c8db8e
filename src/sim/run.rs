//! The run of one experiment: warm-up, then the measured window in
//! batches until the throughputs are known to the precision asked for (or
//! the window is over), and the result. A window that starts before the
//! steady state ([`StartDrift`]) becomes warm-up, and the run is measured
//! again after it, once.
//!
//! Direction of use: above the [`System`]; uses the assembly, the engine
//! and the statistics.

use crate::engine::{run_until, Limits, Scheduler, Stop};
use crate::error::{Error, Result};
use crate::model::{Experiment, Registry, RunSpec};
use crate::sim::config::{self, SystemCfg};
use crate::sim::engines::Engine;
use crate::sim::result::{ExperimentResult, StartDrift};
use crate::sim::system::{Ev, System};
use crate::units::Picos;

/// Batches of the batch means.
const BATCHES: usize = 10;

/// `v` milliseconds of simulated time.
fn ms(v: f64) -> Picos {
    Picos::from_secs(v / 1e3)
}

/// A precision-driven run checks its intervals each time its measured window
/// has grown by this ratio (5/4): often enough that a run stops at most a
/// quarter past the point where it first could (doubling, the rule before,
/// let it run up to twice as long). Each check is a look at a noisy estimate
/// (ten batch means), so more checks give a run more chances to stop on a
/// passing dip of it; about three per doubling keeps that small.
const CHECK_GROWTH: (u64, u64) = (5, 4);

/// Events simulated between two looks at the wall clock (a few
/// milliseconds of work): a run stops this soon after its deadline.
const EVENTS_PER_CLOCK_CHECK: u64 = 1 << 18;

/// A wall-clock deadline of a run: the instant, and the bound it came from
/// in seconds (for [`Error::WallClock`]).
pub type Deadline = Option<(std::time::Instant, f64)>;

/// [`run_until`] in slices of [`EVENTS_PER_CLOCK_CHECK`] events, looking at
/// the wall clock between them: the same events in the same order as one
/// call, but [`Error::WallClock`] once `deadline` has passed (looked at
/// after each slice and on return).
fn run_bounded(
    sys: &mut System,
    s: &mut Scheduler<Ev>,
    until: Picos,
    limits: Limits,
    deadline: Deadline,
) -> Result<Stop> {
    let Some((at, seconds)) = deadline else {
        return Ok(run_until(sys, s, until, limits));
    };
    loop {
        let slice = Limits {
            max_events: limits
                .max_events
                .min(s.events_processed().saturating_add(EVENTS_PER_CLOCK_CHECK)),
            ..limits
        };
        let stop = run_until(sys, s, until, slice);
        // Looked at after every slice and every batch (a batch may hold
        // fewer events than a slice).
        if std::time::Instant::now() >= at {
            return Err(Error::WallClock { seconds });
        }
        if stop != Stop::EventLimit || s.events_processed() >= limits.max_events {
            return Ok(stop);
        }
    }
}

/// Per function, (out, in) payload bytes since the last reset.
type Delivered = Vec<(u64, u64)>;

/// What a precision-driven run must know to its precision: the throughputs
/// whose 95% intervals decide when it stops (see [`RunSpec`]), and whose
/// widest interval its result reports.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Watch {
    /// Every function's throughput each way (what `iosim run` reports of an
    /// experiment without published figures).
    #[default]
    EachWay,
    /// These throughputs alone: what the experiment's published figures
    /// read (see `validate::figure_watch`). Each is the throughput of some
    /// functions (indices among the system's functions), both ways, added.
    Only(Vec<Vec<usize>>),
}

/// The series of every function's throughput in each direction, in
/// sub-batches of `batch_ms`, and the widest relative 95% interval of the
/// batch means of the watched throughputs, over [`BATCHES`] batches of equal
/// length (sub-batches merged), so that a batch spans many cycles of any
/// periodic pattern as the window grows.
#[derive(Debug, Default)]
struct Batches {
    /// Per metric (function and direction): bytes moved in each batch.
    series: Vec<Vec<f64>>,
    last: Delivered,
}

impl Batches {
    fn record(&mut self, now: Delivered) {
        if self.series.is_empty() {
            self.series = vec![Vec::new(); 2 * now.len()];
            self.last = vec![(0, 0); now.len()];
        }
        for (i, (cur, prev)) in now.iter().zip(&self.last).enumerate() {
            self.series[2 * i].push((cur.0 - prev.0) as f64);
            self.series[2 * i + 1].push((cur.1 - prev.1) as f64);
        }
        self.last = now;
    }

    /// The series of each throughput `watch` names, one value per
    /// sub-batch (the bytes it moved).
    fn watched(&self, watch: &Watch) -> Vec<std::borrow::Cow<'_, [f64]>> {
        match watch {
            Watch::EachWay => self.series.iter().map(|xs| xs.as_slice().into()).collect(),
            Watch::Only(sums) => sums
                .iter()
                .map(|fs| {
                    let batches = self.series.first().map_or(0, Vec::len);
                    let mut xs = vec![0.0; batches];
                    for way in fs.iter().flat_map(|f| [2 * f, 2 * f + 1]) {
                        for (x, y) in xs
                            .iter_mut()
                            .zip(self.series.get(way).into_iter().flatten())
                        {
                            *x += y;
                        }
                    }
                    xs.into()
                })
                .collect(),
        }
    }

    /// The worst relative half-width in percent of the throughputs `watch`
    /// names (0 with no moving one; infinite with fewer than two batches).
    fn worst_ci95_pct(&self, watch: &Watch) -> f64 {
        self.watched(watch)
            .iter()
            .map(|xs| relative_ci95_pct(xs))
            .fold(0.0, f64::max)
    }

    /// The largest [`StartDrift`] of the throughputs `watch` names, over
    /// their first `whole` sub-batches of `batch_ms` each, of a run asked
    /// for `precision_pct` (see [`start_drift`]).
    fn start_drift(
        &self,
        watch: &Watch,
        whole: usize,
        batch_ms: f64,
        precision_pct: Option<f64>,
    ) -> Option<StartDrift> {
        self.watched(watch)
            .iter()
            .filter_map(|xs| start_drift(&xs[..whole.min(xs.len())], batch_ms, precision_pct))
            .max_by(|a, b| a.bias_pct.abs().total_cmp(&b.bias_pct.abs()))
    }
}

/// The [`StartDrift`] of the sub-batch series `xs` (each `batch_ms` long),
/// if it has one that also moves the mean by more than the `precision_pct`
/// the run was asked for (a run measured to its precision keeps smaller
/// transients within what it promises).
fn start_drift(xs: &[f64], batch_ms: f64, precision_pct: Option<f64>) -> Option<StartDrift> {
    let k = xs.len() / 5;
    if k < 2 {
        return None;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (first, rest) = xs.split_at(k);
    let (a, b) = (mean(first), mean(rest));
    if b <= 0.0 {
        return None;
    }
    let (first_pct, rest_pct) = (relative_ci95_pct(first), relative_ci95_pct(rest));
    // Apart by more than the two intervals added (never when one is unknown).
    let noise = (first_pct * a + rest_pct * b) / 100.0;
    if (a - b).abs().partial_cmp(&noise) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let bias_pct = 100.0 * (mean(xs) - b) / b;
    (bias_pct.abs() > rest_pct.max(precision_pct.unwrap_or(0.0))).then_some(StartDrift {
        bias_pct,
        ci95_pct: rest_pct,
        first_ms: k as f64 * batch_ms,
    })
}

/// The relative half-width in percent of the 95% interval of the batch means
/// of the sub-batch series `xs` (merged into [`BATCHES`] batches of equal
/// length, a short last one left out): 0 when its mean is not positive (a
/// throughput that does not move), infinite with fewer than two batches.
fn relative_ci95_pct(xs: &[f64]) -> f64 {
    let per = (xs.len() / BATCHES).max(1);
    let means: Vec<f64> = xs.chunks(per).map(|c| c.iter().sum::<f64>()).collect();
    // A short last batch would weigh as much as a whole one.
    let whole = if means.len() > 1 && !xs.len().is_multiple_of(per) {
        &means[..means.len() - 1]
    } else {
        &means[..]
    };
    let (mean, half) = crate::stats::mean_ci95(whole);
    if mean <= 0.0 {
        0.0
    } else if half.is_nan() {
        f64::INFINITY
    } else {
        100.0 * half / mean
    }
}

/// Simulates one experiment: warm-up, then the measured window, in batches
/// (see [`RunSpec`]: a fixed window, or until every throughput is known to
/// the precision asked for).
pub fn simulate(
    reg: &Registry,
    exp: &Experiment,
    run: &RunSpec,
    seed: u64,
) -> Result<ExperimentResult> {
    simulate_assembled(config::assemble(reg, exp)?, exp, run, &Watch::EachWay, seed)
}

/// [`simulate`] of an experiment already assembled into `cfg` (see
/// [`config::assemble`]: a caller running many checks them all first),
/// its precision judged on `watch`.
pub fn simulate_assembled(
    cfg: SystemCfg,
    exp: &Experiment,
    run: &RunSpec,
    watch: &Watch,
    seed: u64,
) -> Result<ExperimentResult> {
    simulate_within(cfg, exp, run, watch, seed, None)
}

/// [`simulate_assembled`] that gives up with [`Error::WallClock`] once
/// `deadline` has passed, looking at the clock every few milliseconds of
/// simulation; a run that finishes gives the same result.
pub fn simulate_within(
    cfg: SystemCfg,
    exp: &Experiment,
    run: &RunSpec,
    watch: &Watch,
    seed: u64,
    deadline: Deadline,
) -> Result<ExperimentResult> {
    let mut sys = System::new(cfg, seed);
    let mut s = Scheduler::new();
    let warm = ms(run.warmup_ms);
    let limits = Limits {
        max_time: warm + ms(run.duration_ms),
        max_events: run.max_events,
    };
    sys.start(&mut s);
    let hit = |s: &Scheduler<Ev>| Error::EventLimit {
        experiment: exp.id.clone(),
        shared: String::new(),
        events: s.events_processed(),
        at_ms: s.now().secs() * 1e3,
    };
    if run_bounded(&mut sys, &mut s, warm, limits, deadline)? == Stop::EventLimit {
        return Err(hit(&s));
    }
    let window = Window {
        run,
        watch,
        deadline,
        batch: Picos(ms(run.batch_ms).0.max(1)),
    };
    let mut start = warm;
    let (mut end, mut batches) = window.measure(&mut sys, &mut s, start, &hit)?;
    let mut drift = window.drift(&batches, start, end);
    // A window that starts before the steady state joins the warm-up, and
    // the run is measured again after it, once.
    let mut remeasured_from = None;
    if drift.is_some() {
        start = end;
        remeasured_from = Some(start);
        (end, batches) = window.measure(&mut sys, &mut s, start, &hit)?;
        drift = window.drift(&batches, start, end);
    }
    let (functions, buses, cpus) = sys.results(end, end - start);
    Ok(ExperimentResult::new(
        exp.id.clone(),
        functions,
        buses,
        cpus,
        sys.p.memory.util(end - start),
        s.events_processed(),
        sys.totals(),
    )
    .measured(end - start, batches.worst_ci95_pct(watch))
    .with_start_drift(drift, remeasured_from))
}

/// How a run measures its windows: its settings, what it watches, its
/// wall-clock deadline and its sub-batch.
struct Window<'a> {
    run: &'a RunSpec,
    watch: &'a Watch,
    deadline: Deadline,
    batch: Picos,
}

impl Window<'_> {
    /// Resets the meters at `start` and measures a window from there in
    /// batches (see [`RunSpec`]: a fixed window, or until every watched
    /// throughput is known to the precision asked for); returns the
    /// window's end and its batches. Running in batches changes nothing in
    /// the simulation: the events are the same, in the same order.
    fn measure(
        &self,
        sys: &mut System,
        s: &mut Scheduler<Ev>,
        start: Picos,
        hit: &dyn Fn(&Scheduler<Ev>) -> Error,
    ) -> Result<(Picos, Batches)> {
        let run = self.run;
        let ceiling = start + ms(run.duration_ms);
        let floor = start + ms(run.min_ms.min(run.duration_ms));
        let limits = Limits {
            max_time: ceiling,
            max_events: run.max_events,
        };
        sys.reset_measurements(start);
        // The precision is checked when the window reaches the floor, then
        // each time it has grown by a quarter ([`CHECK_GROWTH`]).
        let mut batches = Batches::default();
        let mut end = start;
        let mut check = floor;
        while end < ceiling {
            end = (end + self.batch).min(ceiling);
            if run_bounded(sys, s, end, limits, self.deadline)? == Stop::EventLimit {
                return Err(hit(s));
            }
            batches.record(sys.engines.iter().map(Engine::delivered).collect());
            if let Some(p) = run.precision_pct {
                if end >= check {
                    if batches.worst_ci95_pct(self.watch) <= p {
                        break;
                    }
                    check = start + Picos((end - start).0 / CHECK_GROWTH.1 * CHECK_GROWTH.0);
                }
            }
        }
        Ok((end, batches))
    }

    /// The [`StartDrift`] of the window from `start` to `end` measured in
    /// `batches`.
    fn drift(&self, batches: &Batches, start: Picos, end: Picos) -> Option<StartDrift> {
        // A short last sub-batch (a window cut by its ceiling) would weigh
        // as much as a whole one.
        let recorded = batches.series.first().map_or(0, Vec::len);
        let whole = recorded - usize::from(!(end - start).0.is_multiple_of(self.batch.0));
        batches.start_drift(
            self.watch,
            whole,
            self.batch.0 as f64 / 1e9,
            self.run.precision_pct,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` sub-batches about `level`, each off by up to ±3% (uniform, from
    /// a fixed linear congruential stream).
    fn steady(n: usize, level: f64) -> Vec<f64> {
        let mut state: u64 = 12_345;
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let u = (state >> 11) as f64 / (1u64 << 53) as f64;
                level * (1.0 + 0.06 * (u - 0.5))
            })
            .collect()
    }

    #[test]
    fn a_steady_window_has_no_start_drift() {
        assert_eq!(start_drift(&steady(100, 1000.0), 1.0, None), None);
        assert_eq!(start_drift(&steady(100, 1000.0), 1.0, Some(1.0)), None);
    }

    #[test]
    fn a_window_that_starts_low_has_a_start_drift_of_its_size() {
        // The first fifth at half the rate: the whole window's mean is 10%
        // below the rest's.
        let mut xs = steady(100, 1000.0);
        for x in &mut xs[..20] {
            *x *= 0.5;
        }
        let d = start_drift(&xs, 0.5, None).expect("a drift");
        assert!((d.bias_pct + 10.0).abs() < 0.1, "{d:?}");
        assert!(d.ci95_pct < 1.0, "{d:?}");
        assert_eq!(d.first_ms, 10.0);
        // Larger than a precision of 5%, not than one of 20%.
        assert!(start_drift(&xs, 0.5, Some(5.0)).is_some());
        assert_eq!(start_drift(&xs, 0.5, Some(20.0)), None);
    }

    #[test]
    fn a_start_within_the_noise_or_too_short_a_window_has_none() {
        // The first fifth 0.5% high, within the noise.
        let mut xs = steady(100, 1000.0);
        for x in &mut xs[..20] {
            *x *= 1.005;
        }
        assert_eq!(start_drift(&xs, 1.0, None), None);
        // Nine sub-batches leave a first fifth of one: none is judged.
        let mut short = steady(9, 1000.0);
        short[0] = 0.0;
        assert_eq!(start_drift(&short, 1.0, None), None);
        // Nothing moving after the start: nothing to compare with.
        let mut idle = vec![0.0; 50];
        idle[0] = 5.0;
        assert_eq!(start_drift(&idle, 1.0, None), None);
    }
}
