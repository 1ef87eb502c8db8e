//! Runs scenarios and sets the model beside the published figures.

use crate::error::Result;
use crate::model::{Registry, RunSpec, Scenario};
use crate::sim::config::{assemble, SystemCfg};
use crate::sim::{simulate_assembled, ExperimentResult, Watch};

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

/// The seed of an experiment's random streams: a hash (FNV-1a) of the run
/// seed and what the experiment sets up (server, test bed, cells, cards and
/// their slots and links, workloads), not of its name, its scenario, its
/// figures or the models' values. So results depend neither on which other
/// experiments run nor on what an experiment is called (one test reported
/// by two tables is one run), a fit's points share their random numbers,
/// and a run measured to a coarse precision (a fit's search) is the start
/// of the same run measured to a fine one.
pub fn experiment_seed(seed: u64, e: &crate::model::Experiment) -> u64 {
    let workloads: Vec<_> = e
        .workloads
        .iter()
        .map(|w| {
            (
                w.card,
                w.function,
                &w.kind,
                w.direction,
                w.interrupt_cpu.as_ref().map(|c| c.0),
                w.process_cpu.as_ref().map(|c| c.0),
            )
        })
        .collect();
    let setup = format!(
        "{:?}",
        (&e.server, &e.testbed, e.cells, &e.cards, &e.links, workloads)
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in setup.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Process-wide limits on the experiments that [`run_scenario`] starts: a
/// wall-clock deadline and a hook told when one is done. They reach every
/// caller of `run_scenario` (validation, replications, every model evaluation
/// of a fit or a cross-validation fold) without threading them through.
struct Limits {
    /// The deadline and the bound it came from, in seconds.
    deadline: Option<(std::time::Instant, f64)>,
    /// Called after each experiment.
    on_done: Option<fn()>,
}

static LIMITS: std::sync::Mutex<Limits> = std::sync::Mutex::new(Limits {
    deadline: None,
    on_done: None,
});

fn limits() -> std::sync::MutexGuard<'static, Limits> {
    LIMITS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Bounds the wall-clock time of everything [`run_scenario`] does from now
/// on: no experiment starts after `seconds` from this call; the one that
/// would is [`crate::Error::WallClock`]. `None` removes the bound.
pub fn set_wall_clock_bound(seconds: Option<f64>) {
    limits().deadline = seconds.map(|s| {
        let d = std::time::Duration::try_from_secs_f64(s).unwrap_or(std::time::Duration::MAX);
        let now = std::time::Instant::now();
        (
            now.checked_add(d)
                .unwrap_or(now + std::time::Duration::from_secs(1 << 40)),
            s,
        )
    });
}

/// Calls `hook` after every experiment [`run_scenario`] finishes, from the
/// thread that ran it (for a progress line); `None` removes it.
pub fn set_progress_hook(hook: Option<fn()>) {
    limits().on_done = hook;
}

/// [`crate::Error::WallClock`] if the bound set by [`set_wall_clock_bound`] is past.
fn check_deadline() -> Result<()> {
    match limits().deadline {
        Some((at, seconds)) if std::time::Instant::now() >= at => {
            Err(crate::Error::WallClock { seconds })
        }
        _ => Ok(()),
    }
}

/// Simulates every experiment of `sc`, on up to `threads` threads; results in
/// file order whatever the thread count. Each experiment first checks the
/// wall-clock bound ([`set_wall_clock_bound`]).
pub fn run_scenario(
    reg: &Registry,
    sc: &Scenario,
    seed: u64,
    threads: usize,
) -> Result<Vec<ExperimentResult>> {
    let mut all = run_scenarios(reg, std::slice::from_ref(sc), seed, threads, None)?;
    Ok(all.pop().unwrap_or_default())
}

/// Simulates every experiment of every scenario in one pool of `threads`
/// workers, each taking the next experiment when it is free; results per
/// scenario in file order, whatever the thread count. With `precision_pct`, every run stops measuring at that
/// precision (see [`crate::model::RunSpec`]) instead of its scenario's.
pub fn run_scenarios(
    reg: &Registry,
    scenarios: &[Scenario],
    seed: u64,
    threads: usize,
    precision_pct: Option<f64>,
) -> Result<Vec<Vec<ExperimentResult>>> {
    let mut all = run_scenarios_at(
        &[reg],
        scenarios,
        None,
        seed,
        threads,
        precision_pct,
        &|_| 0,
    )?;
    Ok(all.pop().unwrap_or_default())
}

/// [`run_scenarios`] for several registries at once (the points of a fit
/// evaluated together): every experiment of every registry in one pool, the
/// longest first by `cost` (a guess from the experiment's index among the
/// scenarios' experiments, e.g. its events in an earlier run; ties in file
/// order), so that no core idles at the end. With `seeded_as`, every
/// scenario is a copy of that one with its experiments changed (a sweep's
/// points), and each experiment is seeded by the original it changes, so
/// that the points share their random numbers. Results per registry, then
/// per scenario in file order; they do not depend on the order or the
/// threads.
pub fn run_scenarios_at(
    regs: &[&Registry],
    scenarios: &[Scenario],
    seeded_as: Option<&Scenario>,
    seed: u64,
    threads: usize,
    precision_pct: Option<f64>,
    cost: &dyn Fn(usize) -> u64,
) -> Result<Vec<Vec<Vec<ExperimentResult>>>> {
    let exps: Vec<(&Scenario, &crate::model::Experiment)> = scenarios
        .iter()
        .flat_map(|sc| sc.experiments.iter().map(move |e| (sc, e)))
        .collect();
    let jobs: Vec<Job> = regs
        .iter()
        .flat_map(|reg| {
            exps.iter().enumerate().map(move |(i, &(sc, e))| Job {
                reg,
                scenario: sc,
                experiment: e,
                setup: seeded_as
                    .and_then(|base| base.experiments.iter().find(|b| b.id == e.id))
                    .unwrap_or(e),
                cost: cost(i),
            })
        })
        .collect();
    let mut done = run_experiments(&jobs, seed, threads, precision_pct)?.into_iter();
    Ok(regs
        .iter()
        .map(|_| {
            scenarios
                .iter()
                .map(|sc| done.by_ref().take(sc.experiments.len()).collect())
                .collect()
        })
        .collect())
}

/// One experiment to run on a registry, with a guess of its cost (e.g. its
/// events in an earlier run) to order the pool.
#[derive(Clone, Copy)]
pub struct Job<'a> {
    /// The models it runs on.
    pub reg: &'a Registry,
    /// Its scenario (run settings).
    pub scenario: &'a Scenario,
    /// The experiment.
    pub experiment: &'a crate::model::Experiment,
    /// The experiment whose setup seeds the run ([`experiment_seed`]): the
    /// experiment itself, or the one a sweep's point changes.
    pub setup: &'a crate::model::Experiment,
    /// Larger runs first.
    pub cost: u64,
}

/// Runs `jobs` in one pool, the costliest first (ties in the given order),
/// each experiment assembled (and so checked) before any is simulated: one
/// that cannot run is refused at once, in the given order. Jobs with one
/// seed ([`experiment_seed`]), one assembled system (compared in full, in
/// its `Debug` form: every value the simulation reads), one run setting and
/// one watch ([`figure_watch`]: what decides when the run stops) (e.g. one
/// test reported by two tables) are simulated once and share the result, under
/// each one's own id. Results in the given order; they do not depend on the
/// order or the threads.
pub fn run_experiments(
    jobs: &[Job],
    seed: u64,
    threads: usize,
    precision_pct: Option<f64>,
) -> Result<Vec<ExperimentResult>> {
    Ok(run_experiments_counted(jobs, seed, threads, precision_pct)?.0)
}

/// [`run_experiments`], with the number of runs simulated (the jobs less
/// those that shared another's run).
pub fn run_experiments_counted(
    jobs: &[Job],
    seed: u64,
    threads: usize,
    precision_pct: Option<f64>,
) -> Result<(Vec<ExperimentResult>, usize)> {
    run_experiments_in(jobs, seed, &Pool::new(threads), precision_pct)
}

/// Simulation threads at most, whatever is asked; also the top of the
/// binary's `--threads` range, so that every count it accepts is given.
pub const MAX_THREADS: usize = 256;

/// At most `threads` simulations at once, among every caller sharing it:
/// the parts of a fit and the folds of a cross-validation each hand their
/// batches over from a thread of their own, and one pool keeps them to the
/// cores asked for (more would only take turns on the cores and crowd
/// their caches and memory).
#[derive(Debug)]
pub struct Pool {
    threads: usize,
    free: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
}

impl Pool {
    /// A pool of `threads` simulations at once (1 to [`MAX_THREADS`]).
    pub fn new(threads: usize) -> Pool {
        let threads = threads.clamp(1, MAX_THREADS);
        Pool {
            threads,
            free: std::sync::Mutex::new(threads),
            freed: std::sync::Condvar::new(),
        }
    }

    /// Waits for a free place, held until the returned guard goes.
    fn take(&self) -> PoolPlace<'_> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
        PoolPlace { pool: self }
    }
}

/// One simulation's place in a [`Pool`], given back when it goes (a panic
/// included).
struct PoolPlace<'a> {
    pool: &'a Pool,
}

impl Drop for PoolPlace<'_> {
    fn drop(&mut self) {
        *self.pool.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.pool.freed.notify_one();
    }
}

/// [`run_experiments_counted`] with its simulations in `pool`, shared with
/// other callers.
pub fn run_experiments_in(
    jobs: &[Job],
    seed: u64,
    pool: &Pool,
    precision_pct: Option<f64>,
) -> Result<(Vec<ExperimentResult>, usize)> {
    let (results, simulated) = run_experiments_cut(jobs, seed, pool, precision_pct, &AllWanted)?;
    let results = results
        .into_iter()
        .map(|r| r.ok_or_else(|| crate::Error::Internal("a simulation job gave no result".into())))
        .collect::<Result<Vec<_>>>()?;
    Ok((results, simulated))
}

/// What the caller of [`run_experiments_cut`] still wants: it hears each
/// result as it comes, and may give up jobs not yet started (a fit's search
/// gives up a point once what it has heard shows the point is no better
/// than the best so far).
pub trait Wanted: Sync {
    /// Whether job `i` is still wanted (asked just before it would start).
    fn wanted(&self, i: usize) -> bool;
    /// Job `i` has run and given `result`.
    fn heard(&self, i: usize, result: &ExperimentResult);
}

/// Every job wanted.
struct AllWanted;

impl Wanted for AllWanted {
    fn wanted(&self, _: usize) -> bool {
        true
    }
    fn heard(&self, _: usize, _: &ExperimentResult) {}
}

/// [`run_experiments_in`], with the jobs `wanted` gives up before they start
/// left out: None for them (a run shared by several jobs is left out only
/// when all of them are given up). The runs simulated, and so the results
/// given, depend on the order the jobs finish in when `wanted` gives any up;
/// each result given is the same whatever the threads.
pub fn run_experiments_cut(
    jobs: &[Job],
    seed: u64,
    pool: &Pool,
    precision_pct: Option<f64>,
    wanted: &dyn Wanted,
) -> Result<(Vec<Option<ExperimentResult>>, usize)> {
    let cfgs = jobs
        .iter()
        .map(|j| assemble(j.reg, j.experiment))
        .collect::<Result<Vec<SystemCfg>>>()?;
    let runs: Vec<RunSpec> = jobs
        .iter()
        .map(|j| RunSpec {
            precision_pct: precision_pct.or(j.scenario.run.precision_pct),
            ..j.scenario.run
        })
        .collect();
    let seeds: Vec<u64> = jobs
        .iter()
        .map(|j| experiment_seed(seed, j.setup))
        .collect();
    let watches: Vec<Watch> = jobs
        .iter()
        .zip(&cfgs)
        .map(|(j, cfg)| figure_watch(j.reg, j.experiment, cfg))
        .collect();
    // Per job, the first job with its seed, system, run settings and watch: the one
    // simulated. The whole system, not `SystemCfg::fingerprint` (what the
    // calibration compares): two systems with one fingerprint simulate the
    // same, but their results also report what the fingerprint leaves out
    // (an idle function's link, the costs no busy function reads).
    let mut first: std::collections::HashMap<(u64, String), usize> =
        std::collections::HashMap::new();
    let same_as: Vec<usize> = cfgs
        .iter()
        .zip(&runs)
        .zip(&seeds)
        .zip(&watches)
        .enumerate()
        .map(|(i, (((cfg, run), &s), watch))| {
            *first
                .entry((s, format!("{cfg:?}\n{run:?}\n{watch:?}")))
                .or_insert(i)
        })
        .collect();
    let mut order: Vec<usize> = (0..jobs.len()).filter(|&i| same_as[i] == i).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(jobs[i].cost));
    let same_as = &same_as;
    // The jobs that share job `i`'s run (`i` among them).
    let sharing = |i: usize| (0..jobs.len()).filter(move |&k| same_as[k] == i);
    let done = run_parallel(order.len(), pool.threads, |k| {
        let i = order[k];
        let j = &jobs[i];
        let _place = pool.take();
        if !sharing(i).any(|k| wanted.wanted(k)) {
            return Ok(None);
        }
        check_deadline()?;
        let mut out = simulate_assembled(
            cfgs[i].clone(),
            j.experiment,
            &runs[i],
            &watches[i],
            seeds[i],
        );
        // The run stands for every job that shares it: name them all.
        if let Err(crate::Error::EventLimit { shared, .. }) = &mut out {
            let others: Vec<String> = sharing(i)
                .filter(|&k| k != i)
                .map(|k| format!("`{}`", jobs[k].experiment.id))
                .collect();
            if !others.is_empty() {
                *shared = format!(" (simulated once with {})", others.join(", "));
            }
        }
        if let Some(hook) = limits().on_done {
            hook();
        }
        let out = out?;
        for k in sharing(i) {
            wanted.heard(k, &out);
        }
        Ok(Some(out))
    })?;
    let mut simulated: Vec<Option<ExperimentResult>> = (0..jobs.len()).map(|_| None).collect();
    for (&i, result) in order.iter().zip(done) {
        simulated[i] = result;
    }
    let runs_simulated = simulated.iter().filter(|r| r.is_some()).count();
    let results = same_as
        .iter()
        .zip(jobs)
        .map(|(&i, j)| {
            simulated[i].as_ref().map(|r| {
                let mut r = r.clone();
                r.id.clone_from(&j.experiment.id);
                r
            })
        })
        .collect();
    Ok((results, runs_simulated))
}

/// Runs `job(0)` to `job(n - 1)` on up to `threads` scoped threads, each
/// taking the next job when it is free, and returns their results in index
/// order, or the first error in that order. A job that panics is a defect
/// in iosim: the run fails with [`crate::Error::Internal`], whatever the
/// other jobs gave.
fn run_parallel<T, F>(n: usize, threads: usize, job: F) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(usize) -> Result<T> + Sync,
{
    let threads = threads.clamp(1, MAX_THREADS).min(n.max(1));
    let mut slots: Vec<Option<Result<T>>> = (0..n).map(|_| None).collect();
    let mut panicked: Option<String> = None;
    let job = &job;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let next = &next;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            return done;
                        }
                        done.push((i, job(i)));
                    }
                })
            })
            .collect();
        for h in handles {
            match h.join() {
                Ok(v) => {
                    for (i, r) in v {
                        slots[i] = Some(r);
                    }
                }
                Err(payload) => {
                    let what = payload
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| payload.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "no message".into());
                    panicked.get_or_insert(what);
                }
            }
        }
    });
    if let Some(what) = panicked {
        return Err(crate::Error::Internal(format!(
            "a simulation thread panicked: {what}"
        )));
    }
    slots
        .into_iter()
        .map(|s| {
            s.unwrap_or_else(|| {
                Err(crate::Error::Internal(
                    "a simulation job gave no result".into(),
                ))
            })
        })
        .collect()
}

/// A throughput `t` (or, for `%`, the server's CPU utilisation in `result`)
/// in the figure unit `unit`.
fn in_unit(t: crate::units::BytesPerSec, result: &ExperimentResult, unit: &str) -> f64 {
    match unit {
        "Mbit/s" => t.mbit_s(),
        // TTCP's "Mbit" is 2^20 bits (ttcp.c, outfmt).
        "Mibit/s" => t.0 * 8.0 / 1_048_576.0,
        "%" => result.cpu_util * 100.0,
        _ => t.mb_s(),
    }
}

/// The functions (indices among `labels`, the system's functions in order)
/// whose throughput, both ways added, is figure `fig`'s quantity; None for a
/// figure of the CPUs (scope `Cpu`, or unit `%`). `fn_label` is the
/// `card.function` label of the figure's card and function, `fname` the
/// function's name.
fn figure_functions(
    labels: &[&str],
    fig: &crate::model::FigureSpec,
    fn_label: &str,
    fname: &str,
) -> Option<Vec<usize>> {
    use crate::model::FigureScope;
    let which = |keep: &dyn Fn(&str) -> bool| -> Vec<usize> {
        (0..labels.len()).filter(|&i| keep(labels[i])).collect()
    };
    match fig.scope {
        FigureScope::Cpu => None,
        _ if fig.unit == "%" => None,
        // The first function of that label.
        FigureScope::Function => Some(
            labels
                .iter()
                .position(|l| *l == fn_label)
                .into_iter()
                .collect(),
        ),
        FigureScope::AllCards => {
            let suffix = format!(".{fname}");
            Some(which(&|l: &str| l.ends_with(&suffix)))
        }
        FigureScope::AllFunctions => Some(which(&|_: &str| true)),
    }
}

/// The model's value of a figure of any scope: its function's throughput,
/// the sum of that function over every card, the sum of every function,
/// or the whole machine's CPU utilisation in percent (or, in `ms CPU per
/// MB`, its service demand).
pub fn predicted_figure(
    result: &ExperimentResult,
    fig: &crate::model::FigureSpec,
    fn_label: &str,
    fname: &str,
) -> f64 {
    let labels: Vec<&str> = result.functions.iter().map(|f| f.label.as_str()).collect();
    match figure_functions(&labels, fig, fn_label, fname) {
        // Service demand: CPU microseconds per 10^3 bytes is CPU milliseconds
        // per 10^6 bytes.
        None if fig.unit == "ms CPU per MB" => result.service_demand_us_per_kb,
        None => result.cpu_util * 100.0,
        Some(fs) if fs.is_empty() && fig.scope == crate::model::FigureScope::Function => f64::NAN,
        Some(fs) => {
            let t: f64 = fs.iter().map(|&i| result.functions[i].total().0).sum();
            in_unit(crate::units::BytesPerSec(t), result, &fig.unit)
        }
    }
}

/// What a run of experiment `e` (assembled into `cfg`) must know to its
/// precision: the throughputs its published figures read (each figure's
/// functions, both ways added), or, for an experiment with no figure of a
/// throughput, every function's throughput each way (what `iosim run`
/// reports of it). A figure of the CPUs is not watched, as no throughput's
/// interval ever watched one.
pub fn figure_watch(reg: &Registry, e: &crate::model::Experiment, cfg: &SystemCfg) -> Watch {
    let labels: Vec<&str> = cfg.functions.iter().map(|f| f.label.as_str()).collect();
    let mut sums: Vec<Vec<usize>> = Vec::new();
    for fig in &e.figures {
        let (fn_label, fname) = figure_function(reg, e, fig);
        if let Some(fs) = figure_functions(&labels, fig, &fn_label, &fname) {
            if !fs.is_empty() && !sums.contains(&fs) {
                sums.push(fs);
            }
        }
    }
    if sums.is_empty() {
        Watch::EachWay
    } else {
        Watch::Only(sums)
    }
}

/// The function figure `fig` of experiment `e` names: its `card.function`
/// label and the function's name (empty if the adapter has no such function).
fn figure_function(
    reg: &Registry,
    e: &crate::model::Experiment,
    fig: &crate::model::FigureSpec,
) -> (String, String) {
    let (card_label, adapter, _) = &e.cards[fig.card];
    let fname = reg
        .adapters
        .get(adapter)
        .and_then(|a| a.functions.get(fig.function))
        .map(|f| f.name.clone())
        .unwrap_or_default();
    (format!("{card_label}.{fname}"), fname)
}

/// Figure rows of one scenario given its results (in experiment order).
pub fn figure_rows(reg: &Registry, sc: &Scenario, results: &[ExperimentResult]) -> Vec<FigureRow> {
    sc.experiments
        .iter()
        .zip(results)
        .flat_map(|(e, r)| experiment_rows(reg, sc, e, r))
        .collect()
}

/// The figure rows of experiment `e` of `sc`, from its result `r`.
pub fn experiment_rows(
    reg: &Registry,
    sc: &Scenario,
    e: &crate::model::Experiment,
    r: &ExperimentResult,
) -> Vec<FigureRow> {
    e.figures
        .iter()
        .map(|fig| {
            let (fn_label, fname) = figure_function(reg, e, fig);
            let p = predicted_figure(r, fig, &fn_label, &fname);
            FigureRow {
                id: fig.id.clone(),
                paper: sc.source.clone(),
                source: fig.source.clone(),
                experiment: e.id.clone(),
                published: fig.published,
                predicted: p,
                unit: fig.unit.clone(),
                error_pct: (p - fig.published) / fig.published * 100.0,
            }
        })
        .collect()
}

/// Keeps only the scenarios of one paper (`iosim validate --paper`): the
/// paper whose name (a scenario's `source`, as the `papers` section prints
/// it) is `name`, or the only one that begins with `name`. A name that
/// matches no paper, or begins several, is a usage error listing the papers.
pub fn keep_paper(scenarios: &mut Vec<Scenario>, name: &str) -> Result<()> {
    let mut papers: Vec<&str> = Vec::new();
    for sc in scenarios.iter() {
        if !sc.source.is_empty() && !papers.contains(&sc.source.as_str()) {
            papers.push(&sc.source);
        }
    }
    let exact = papers.iter().find(|p| **p == name);
    let begins: Vec<&str> = papers
        .iter()
        .copied()
        .filter(|p| !name.is_empty() && p.starts_with(name))
        .collect();
    let paper = match (exact, begins.as_slice()) {
        (Some(p), _) | (None, [p]) => p.to_string(),
        (None, []) => {
            return Err(crate::Error::Usage(format!(
                "--paper `{name}`: no bundled paper has that name; the papers: {}",
                papers.join(", ")
            )))
        }
        (None, several) => {
            return Err(crate::Error::Usage(format!(
                "--paper `{name}` begins the names of {} papers ({}); give more of the name",
                several.len(),
                several.join(", ")
            )))
        }
    };
    scenarios.retain(|sc| sc.source == paper);
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario_of(source: &str) -> Scenario {
        Scenario {
            name: format!("of {source}"),
            title: String::new(),
            source: source.into(),
            fit: true,
            file: std::path::PathBuf::from("x.toml"),
            run: RunSpec::default(),
            experiments: Vec::new(),
        }
    }

    #[test]
    fn a_paper_is_kept_by_its_whole_name_before_any_longer_name_it_begins() {
        let all = || {
            ["a.txt", "a.txt.v2", "b.txt", "a.txt"]
                .map(scenario_of)
                .to_vec()
        };
        let kept = |name: &str| {
            let mut v = all();
            keep_paper(&mut v, name).map(|()| v.iter().map(|s| s.name.clone()).collect::<Vec<_>>())
        };
        assert_eq!(kept("a.txt").unwrap(), ["of a.txt", "of a.txt"]);
        assert_eq!(kept("a.txt.").unwrap(), ["of a.txt.v2"]);
        assert_eq!(kept("b").unwrap(), ["of b.txt"]);
        assert!(matches!(kept("a"), Err(crate::Error::Usage(m)) if m.contains("2 papers")));
        assert!(
            matches!(kept("c"), Err(crate::Error::Usage(m)) if m.contains("a.txt, a.txt.v2, b.txt"))
        );
        assert!(matches!(kept(""), Err(crate::Error::Usage(_))));
    }

    #[test]
    fn parallel_jobs_come_back_in_index_order_whatever_the_thread_count() {
        for threads in [0, 1, 2, 3, 64, 1000] {
            let v = run_parallel(7, threads, |i| Ok(i * 10)).unwrap();
            assert_eq!(v, vec![0, 10, 20, 30, 40, 50, 60], "{threads} threads");
        }
        assert!(run_parallel(0, 2, Ok).unwrap().is_empty());
    }

    #[test]
    fn the_first_error_in_index_order_is_returned() {
        let e = run_parallel(5, 2, |i| {
            if i >= 3 {
                Err(crate::Error::Usage(format!("job {i}")))
            } else {
                Ok(i)
            }
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "job 3");
    }

    #[test]
    fn a_pool_runs_at_most_its_threads_at_once_whoever_asks() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let pool = Pool::new(2);
        let (inside, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        // Three callers, each with three threads of its own.
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    run_parallel(6, 3, |_| {
                        let _place = pool.take();
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(2));
                        inside.fetch_sub(1, Ordering::SeqCst);
                        Ok(())
                    })
                    .unwrap();
                });
            }
        });
        let most = most.load(Ordering::SeqCst);
        assert!((1..=2).contains(&most), "{most}");
        assert_eq!(*pool.free.lock().unwrap(), 2, "every place given back");
    }

    #[test]
    fn a_panicking_job_is_an_internal_defect() {
        for threads in [1, 2] {
            let e = run_parallel(4, threads, |i| {
                if i == 1 {
                    panic!("job {i} broke");
                }
                Ok(i)
            })
            .unwrap_err();
            assert!(matches!(e, crate::Error::Internal(_)), "{e:?}");
            assert!(e.to_string().contains("job 1 broke"), "{e}");
        }
    }

    /// A short run of the bundled Matrox tables, fixed length.
    fn short(mut sc: Scenario, duration_ms: f64) -> Scenario {
        sc.run.warmup_ms = 5.0;
        sc.run.duration_ms = duration_ms;
        sc.run.precision_pct = None;
        sc
    }

    /// Experiment `id` of `sc`.
    fn experiment(sc: &Scenario, id: &str) -> crate::model::Experiment {
        sc.experiments.iter().find(|e| e.id == id).unwrap().clone()
    }

    /// The job of experiment `e` of `sc`, seeded by itself.
    fn job<'a>(reg: &'a Registry, sc: &'a Scenario, e: &'a crate::model::Experiment) -> Job<'a> {
        Job {
            reg,
            scenario: sc,
            experiment: e,
            setup: e,
            cost: 0,
        }
    }

    #[test]
    fn a_run_watches_the_throughputs_its_figures_read() {
        let reg = crate::loader::load_registry(&[]).unwrap();
        let all = crate::loader::load_bundled_scenarios(&reg).unwrap();
        let watch = |scenario: &str, id: &str| {
            let sc = all.iter().find(|s| s.name == scenario).unwrap();
            let e = experiment(sc, id);
            let cfg = assemble(&reg, &e).unwrap();
            let labels: Vec<String> = cfg.functions.iter().map(|f| f.label.clone()).collect();
            (figure_watch(&reg, &e, &cfg), labels)
        };
        // One function's figure: that function, both ways added (the FC
        // port beside it is not watched).
        let (w, labels) = watch("hp2g-fig4-gige-bidirectional", "gige-bd+fc-bd.pcix.c1");
        let gige = labels.iter().position(|l| l.ends_with(".gige")).unwrap();
        assert_eq!(labels.len(), 2);
        assert_eq!(w, Watch::Only(vec![vec![gige]]));
        // The four cards' aggregate, once, whatever the CPU figure beside it
        // (a CPU figure is not watched).
        let (w, labels) = watch("atm-atm155-n4000", "atm155.out.mtu9218");
        assert_eq!(labels.len(), 4);
        assert_eq!(w, Watch::Only(vec![vec![0, 1, 2, 3]]));
        // No figure: every function each way, as `iosim run` reports it.
        let (w, _) = watch("smoke-n4000", "dma-read.twin-turbo+turbo");
        assert_eq!(w, Watch::EachWay);
    }

    #[test]
    fn experiments_that_simulate_the_same_thing_are_one_run() {
        let reg = crate::loader::load_registry(&[]).unwrap();
        let all = crate::loader::load_bundled_scenarios(&reg).unwrap();
        let named = |n: &str, ms: f64| short(all.iter().find(|s| s.name == n).unwrap().clone(), ms);
        let (netperf, ttcp) = (
            named("matrox-table2-netperf", 20.0),
            named("matrox-table3-ttcp", 20.0),
        );
        let longer = named("matrox-table2-netperf", 30.0);
        let (a, b, c, d) = (
            experiment(&netperf, "netperf.10half"),
            experiment(&ttcp, "ttcp.10half"),
            experiment(&netperf, "netperf.100half"),
            experiment(&longer, "netperf.10half"),
        );
        let job = |sc, e| job(&reg, sc, e);
        // Table 3's TTCP run is Table 2's netperf run under another name:
        // simulated once, each result under its own id.
        let jobs = [job(&netperf, &a), job(&ttcp, &b), job(&netperf, &c)];
        let (r, simulated) = run_experiments_counted(&jobs, 7, 2, None).unwrap();
        assert_eq!(simulated, 2);
        assert_eq!(
            (r[0].id.as_str(), r[1].id.as_str()),
            ("netperf.10half", "ttcp.10half")
        );
        let mut renamed = r[1].clone();
        renamed.id.clone_from(&r[0].id);
        assert_eq!(renamed, r[0]);
        assert!(r[0].events > 0 && r[2] != r[0]);
        // The same result when it runs alone: the seed follows what is
        // simulated, not the name nor the other jobs.
        let (alone, n) = run_experiments_counted(&[job(&ttcp, &b)], 7, 1, None).unwrap();
        assert_eq!((alone[0].clone(), n), (r[1].clone(), 1));
        // Other run settings are another run, on the same random stream: the
        // longer one measures more of it.
        let (r, simulated) =
            run_experiments_counted(&[job(&netperf, &a), job(&longer, &d)], 7, 2, None).unwrap();
        assert_eq!(simulated, 2);
        assert!(r[1].events > r[0].events, "{} {}", r[1].events, r[0].events);
        // Another seed is another stream (CSMA/CD backs off at random).
        let (other, _) = run_experiments_counted(&[job(&netperf, &a)], 8, 1, None).unwrap();
        assert_ne!(other[0], r[0]);
    }

    #[test]
    fn an_event_bound_hit_by_a_shared_run_names_every_experiment_it_stands_for() {
        let reg = crate::loader::load_registry(&[]).unwrap();
        let all = crate::loader::load_bundled_scenarios(&reg).unwrap();
        let bounded = |n: &str| {
            let mut sc = short(all.iter().find(|s| s.name == n).unwrap().clone(), 20.0);
            sc.run.max_events = 1000;
            sc
        };
        let (netperf, ttcp) = (
            bounded("matrox-table2-netperf"),
            bounded("matrox-table3-ttcp"),
        );
        let (a, b) = (
            experiment(&netperf, "netperf.10half"),
            experiment(&ttcp, "ttcp.10half"),
        );
        let job = |sc, e| job(&reg, sc, e);
        let e =
            run_experiments_counted(&[job(&netperf, &a), job(&ttcp, &b)], 7, 2, None).unwrap_err();
        assert!(matches!(e, crate::Error::EventLimit { .. }), "{e:?}");
        assert!(
            e.to_string().starts_with(
                "experiment `netperf.10half` (simulated once with `ttcp.10half`) hit the event bound (1000 events)"
            ),
            "{e}"
        );
        // Alone, it names itself only.
        let e = run_experiments_counted(&[job(&ttcp, &b)], 7, 1, None).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("experiment `ttcp.10half` hit the event bound"),
            "{e}"
        );
    }

    #[test]
    fn the_seed_follows_the_setup_not_the_names() {
        let reg = crate::loader::load_registry(&[]).unwrap();
        let all = crate::loader::load_bundled_scenarios(&reg).unwrap();
        let e = all[0].experiments[0].clone();
        let mut renamed = e.clone();
        renamed.id.push_str(".elsewhere");
        renamed.figures.clear();
        renamed.at.line += 100;
        for w in &mut renamed.workloads {
            w.at.line += 100;
        }
        assert_eq!(experiment_seed(1, &e), experiment_seed(1, &renamed));
        assert_ne!(experiment_seed(1, &e), experiment_seed(2, &e));
        let mut other = e.clone();
        other.cells += 1;
        assert_ne!(experiment_seed(1, &e), experiment_seed(1, &other));
        let mut other = e.clone();
        other.workloads.pop();
        assert_ne!(experiment_seed(1, &e), experiment_seed(1, &other));
    }

    #[test]
    fn a_sweep_point_is_seeded_as_the_experiment_it_changes() {
        let reg = crate::loader::load_registry(&[]).unwrap();
        let all = crate::loader::load_bundled_scenarios(&reg).unwrap();
        let mut base = short(
            all.iter()
                .find(|s| s.name == "matrox-table2-netperf")
                .unwrap()
                .clone(),
            20.0,
        );
        base.experiments.retain(|e| e.id == "netperf.100half");
        // A point: the socket buffer halved (CSMA/CD backs off at random).
        let mut point = base.clone();
        for w in &mut point.experiments[0].workloads {
            if let crate::model::WorkloadKind::NetperfTcpStream { socket_bytes, .. } = &mut w.kind {
                *socket_bytes /= 2;
            }
        }
        let run = |sc: &Scenario, seeded_as| {
            run_scenarios_at(
                &[&reg],
                std::slice::from_ref(sc),
                seeded_as,
                3,
                1,
                None,
                &|_| 0,
            )
            .unwrap()
            .remove(0)
            .remove(0)
            .remove(0)
        };
        let own = run(&point, None);
        let shared = run(&point, Some(&base));
        assert_ne!(own, shared, "the point's own stream and the base's differ");
        let job = Job {
            reg: &reg,
            scenario: &point,
            experiment: &point.experiments[0],
            setup: &base.experiments[0],
            cost: 0,
        };
        assert_eq!(run_experiments(&[job], 3, 1, None).unwrap()[0], shared);
        // The base itself, seeded as itself, is what `run` gives.
        assert_eq!(run(&base, Some(&base)), run(&base, None));
    }
}
