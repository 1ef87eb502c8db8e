//! Batches of experiments: each experiment assembled (and so checked)
//! before any runs, experiments that simulate the same thing run once, the
//! rest in a [`Runner`]'s pool, the costliest first; results in the order
//! asked, whatever the threads or the timing. [`run_scenarios`] runs every
//! experiment of some scenarios, [`run_scenarios_at`] on several registries
//! at once (a sweep's points, a fit's), [`run_experiments`] a list of jobs,
//! and [`run_experiments_cut`] lets the caller give jobs up as results come
//! (a fit's search).

use crate::error::Result;
use crate::model::{Registry, RunSpec, Scenario};
use crate::sim::config::{assemble, SystemCfg};
use crate::sim::{simulate_within, ExperimentResult, Watch};
use crate::validate::{experiment_seed, figure_watch};

use super::Runner;

/// Simulates every experiment of `sc` in `runner`'s pool; results in file
/// order whatever the thread count. Each experiment first checks the
/// runner's wall-clock bound ([`Runner::with_wall_clock_bound`]).
pub fn run_scenario(
    reg: &Registry,
    sc: &Scenario,
    seed: u64,
    runner: &Runner,
) -> Result<Vec<ExperimentResult>> {
    let mut all = run_scenarios(reg, std::slice::from_ref(sc), seed, runner, None)?;
    Ok(all.pop().unwrap_or_default())
}

/// Simulates every experiment of every scenario in `runner`'s pool, each
/// thread taking the next experiment when it is free; results per
/// scenario in file order, whatever the thread count. With `precision_pct`, every run stops measuring at that
/// precision (see [`crate::model::RunSpec`]) instead of its scenario's.
pub fn run_scenarios(
    reg: &Registry,
    scenarios: &[Scenario],
    seed: u64,
    runner: &Runner,
    precision_pct: Option<f64>,
) -> Result<Vec<Vec<ExperimentResult>>> {
    let mut all = run_scenarios_at(&[reg], scenarios, None, seed, runner, precision_pct, &|_| 0)?;
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
    runner: &Runner,
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
    let mut done = run_experiments(&jobs, seed, runner, precision_pct)?.into_iter();
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

impl<'a> Job<'a> {
    /// Experiment `experiment` of `scenario` on `reg`, seeded by `setup`,
    /// with no cost to rank it by (the pool keeps the given order).
    pub fn new(
        reg: &'a Registry,
        scenario: &'a Scenario,
        experiment: &'a crate::model::Experiment,
        setup: &'a crate::model::Experiment,
    ) -> Job<'a> {
        Job {
            reg,
            scenario,
            experiment,
            setup,
            cost: 0,
        }
    }
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
    runner: &Runner,
    precision_pct: Option<f64>,
) -> Result<Vec<ExperimentResult>> {
    Ok(run_experiments_counted(jobs, seed, runner, precision_pct)?.0)
}

/// [`run_experiments`], with the number of runs simulated (the jobs less
/// those that shared another's run).
pub fn run_experiments_counted(
    jobs: &[Job],
    seed: u64,
    runner: &Runner,
    precision_pct: Option<f64>,
) -> Result<(Vec<ExperimentResult>, usize)> {
    let (results, simulated) = run_experiments_cut(jobs, seed, runner, precision_pct, &AllWanted)?;
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

/// [`run_experiments_counted`], with the jobs `wanted` gives up before they start
/// left out: None for them (a run shared by several jobs is left out only
/// when all of them are given up). The runs simulated, and so the results
/// given, depend on the order the jobs finish in when `wanted` gives any up;
/// each result given is the same whatever the threads.
pub fn run_experiments_cut(
    jobs: &[Job],
    seed: u64,
    runner: &Runner,
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
    runner.announce(order.len());
    let done = runner.run_parallel(order.len(), |k| {
        let i = order[k];
        let j = &jobs[i];
        if !sharing(i).any(|k| wanted.wanted(k)) {
            return Ok(None);
        }
        runner.check_deadline()?;
        let mut out = simulate_within(
            cfgs[i].clone(),
            j.experiment,
            &runs[i],
            &watches[i],
            seeds[i],
            runner.deadline(),
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
        runner.done_one();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A runner of `threads` simulations at once.
    fn runner(threads: usize) -> Runner {
        Runner::new(threads).unwrap()
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
        Job::new(reg, sc, e, e)
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
        let (r, simulated) = run_experiments_counted(&jobs, 7, &runner(2), None).unwrap();
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
        let (alone, n) = run_experiments_counted(&[job(&ttcp, &b)], 7, &runner(1), None).unwrap();
        assert_eq!((alone[0].clone(), n), (r[1].clone(), 1));
        // Other run settings are another run, on the same random stream: the
        // longer one measures more of it.
        let (r, simulated) =
            run_experiments_counted(&[job(&netperf, &a), job(&longer, &d)], 7, &runner(2), None)
                .unwrap();
        assert_eq!(simulated, 2);
        assert!(r[1].events > r[0].events, "{} {}", r[1].events, r[0].events);
        // Another seed is another stream (CSMA/CD backs off at random).
        let (other, _) =
            run_experiments_counted(&[job(&netperf, &a)], 8, &runner(1), None).unwrap();
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
        let e = run_experiments_counted(&[job(&netperf, &a), job(&ttcp, &b)], 7, &runner(2), None)
            .unwrap_err();
        assert!(matches!(e, crate::Error::EventLimit { .. }), "{e:?}");
        assert!(
            e.to_string().starts_with(
                "experiment `netperf.10half` (simulated once with `ttcp.10half`) hit the event bound (1000 events)"
            ),
            "{e}"
        );
        // Alone, it names itself only.
        let e = run_experiments_counted(&[job(&ttcp, &b)], 7, &runner(1), None).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("experiment `ttcp.10half` hit the event bound"),
            "{e}"
        );
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
            if let crate::model::Demand::NetperfTcpStream { socket_bytes, .. } = &mut w.demand {
                *socket_bytes /= 2;
            }
        }
        let run = |sc: &Scenario, seeded_as| {
            run_scenarios_at(
                &[&reg],
                std::slice::from_ref(sc),
                seeded_as,
                3,
                &runner(1),
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
        let job = Job::new(&reg, &point, &point.experiments[0], &base.experiments[0]);
        assert_eq!(
            run_experiments(&[job], 3, &runner(1), None).unwrap()[0],
            shared
        );
        // The base itself, seeded as itself, is what `run` gives.
        assert_eq!(run(&base, Some(&base)), run(&base, None));
    }
}
