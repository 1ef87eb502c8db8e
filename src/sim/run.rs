//! The run of one experiment: warm-up, then the measured window in
//! batches until the throughputs are known to the precision asked for (or
//! the window is over), and the result.
//!
//! Direction of use: above the [`System`]; uses the assembly, the engine
//! and the statistics.

use crate::engine::{run_until, Limits, Scheduler, Stop};
use crate::error::{Error, Result};
use crate::model::{Experiment, Registry, RunSpec};
use crate::sim::config::{self, SystemCfg};
use crate::sim::engines::Engine;
use crate::sim::result::ExperimentResult;
use crate::sim::system::{Ev, System};
use crate::units::Picos;

/// Batches of the batch means.
const BATCHES: usize = 10;

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

    /// The worst relative half-width in percent of the throughputs `watch`
    /// names (0 with no moving one; infinite with fewer than two batches).
    fn worst_ci95_pct(&self, watch: &Watch) -> f64 {
        match watch {
            Watch::EachWay => self
                .series
                .iter()
                .map(|xs| relative_ci95_pct(xs))
                .fold(0.0, f64::max),
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
                    relative_ci95_pct(&xs)
                })
                .fold(0.0, f64::max),
        }
    }
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
    let ms = |v: f64| Picos::from_secs(v / 1e3);
    let warm = ms(run.warmup_ms);
    let ceiling = warm + ms(run.duration_ms);
    let floor = warm + ms(run.min_ms.min(run.duration_ms));
    let batch = Picos(ms(run.batch_ms).0.max(1));
    let limits = Limits {
        max_time: ceiling,
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
    sys.reset_measurements(warm);
    // Running in batches changes nothing in the simulation: the events are
    // the same, in the same order.
    // The precision is checked when the window reaches the floor, then each
    // time it has grown by a quarter ([`CHECK_GROWTH`]).
    let mut batches = Batches::default();
    let mut end = warm;
    let mut check = floor;
    while end < ceiling {
        end = (end + batch).min(ceiling);
        if run_bounded(&mut sys, &mut s, end, limits, deadline)? == Stop::EventLimit {
            return Err(hit(&s));
        }
        batches.record(sys.engines.iter().map(Engine::delivered).collect());
        if let Some(p) = run.precision_pct {
            if end >= check {
                if batches.worst_ci95_pct(watch) <= p {
                    break;
                }
                check = warm + Picos((end - warm).0 / CHECK_GROWTH.1 * CHECK_GROWTH.0);
            }
        }
    }
    let (functions, buses, cpus) = sys.results(end, end - warm);
    Ok(ExperimentResult::new(
        exp.id.clone(),
        functions,
        buses,
        cpus,
        sys.p.memory.util(end - warm),
        s.events_processed(),
        sys.totals(),
    )
    .measured(end - warm, batches.worst_ci95_pct(watch)))
}
