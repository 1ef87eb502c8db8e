//! Calibration: a global least-squares fit of the declared free parameters
//! to every bundled published figure, with confidence intervals from the
//! Jacobian, and cross-validation by leaving out one figure group at a time.
//!
//! The objective is the vector of relative errors `(model - paper) / paper`.
//! Every evaluation runs every experiment with the same seed (common random
//! numbers), so the objective changes only with the parameters.

pub mod budget;
mod linalg;
pub mod lm;
mod runs;
#[cfg(test)]
mod synthetic;

use std::collections::HashMap;

use crate::app::{run_experiments_cut, Job, Runner, Wanted};
use crate::error::Result;
use crate::model::{FreeParam, Registry, Scenario};
use crate::validate::{experiment_rows, FigureRow};
use lm::{minimise, LmSettings};

pub use budget::check_budget;
pub use runs::{folds, relevant_params};
use runs::{scale_in, unscale_in};

/// The figures a fit sees, and how it runs the model.
pub struct Problem<'a> {
    /// Models (free parameters are overwritten on a private copy).
    pub reg: &'a Registry,
    /// Scenarios with figures.
    pub scenarios: &'a [Scenario],
    /// Free parameters.
    pub free: &'a [FreeParam],
    /// Seed of every run (common random numbers).
    pub seed: u64,
    /// Where its simulations run: the pool (shared with every problem made
    /// from this one, so they run at most its threads at once) and the
    /// run's limits.
    pub runner: Runner,
    /// What the problem has learnt while running: the rows of every point
    /// evaluated, and the cost of each experiment.
    pub memo: Memo,
}

/// An experiment (its index among the root problem's experiments, in
/// scenario then file order), the bits of the values of the free parameters
/// that change its assembled configuration, and the precision it was
/// measured to. The same key means the same simulation (same configuration
/// and seed), whichever problem asks: the whole fit, a part or a
/// cross-validation fold.
type ExperimentKey = (usize, Vec<u64>, Option<u64>);

/// An experiment's figure rows in the [`Memo`]: being simulated by one
/// problem (the others wait for it), or done.
#[derive(Debug)]
enum Slot {
    Running,
    Done(Vec<FigureRow>),
}

/// What a whole fit and every problem made from it (parts, folds) have
/// learnt while running; see [`Memo`].
#[derive(Debug, Default)]
struct Store {
    rows: std::sync::Mutex<HashMap<ExperimentKey, Slot>>,
    /// Signalled whenever a slot is done or given up.
    settled: std::sync::Condvar,
    /// Each experiment's events in its last run (root index).
    events: std::sync::Mutex<HashMap<usize, u64>>,
    /// The root problem's relevant parameters (see [`Problem::relevant`]).
    relevant: std::sync::OnceLock<std::sync::Arc<Vec<Vec<usize>>>>,
    /// Experiments simulated.
    runs: std::sync::atomic::AtomicUsize,
}

/// The memo's slots one problem has claimed (`Slot::Running`): those still
/// running when it goes (the run failed or panicked) are given up, and the
/// problems waiting for them woken.
struct Claims<'a> {
    store: &'a Store,
    keys: Vec<ExperimentKey>,
}

impl Drop for Claims<'_> {
    fn drop(&mut self) {
        let mut known = self.store.rows.lock().unwrap_or_else(|e| e.into_inner());
        for k in &self.keys {
            if matches!(known.get(k), Some(Slot::Running)) {
                known.remove(k);
            }
        }
        self.store.settled.notify_all();
    }
}

/// How a problem made from another ([`Problem::restricted`]) sees the root
/// problem's experiments and free parameters.
#[derive(Debug, Clone)]
struct View {
    /// Per experiment of this problem, its index in the root's.
    experiments: Vec<usize>,
    /// Per free parameter of this problem, its index in the root's.
    params: Vec<usize>,
    /// The root's free parameters at the values this problem holds fixed
    /// (base units); those of `params` are overwritten at each point.
    fixed: Vec<f64>,
    /// The root's relevant parameters per root experiment.
    root_relevant: std::sync::Arc<Vec<Vec<usize>>>,
}

/// What a [`Problem`] has learnt while running: the figure rows of every
/// experiment run, keyed by the values of only the free parameters that
/// change that experiment (an experiment is simulated again only when one of
/// them changes: same configuration and seed give the same result, so a
/// Jacobian column of a parameter that only the FC experiments see runs only
/// those), and each experiment's events in its last run (the pool runs the
/// longest first). The problems made from one (`Problem::restricted`: the
/// parts of a fit, the folds of a cross-validation and their parts) share
/// its memo: a point one fold has simulated, another fold, the whole fit or
/// its report does not simulate again, and an experiment one is simulating
/// the others wait for. So each distinct simulation runs once (two
/// experiments that simulate one setup, say Matrox Tables 2 and 3, run once
/// when they fall in one batch, see [`crate::app::run_experiments`]).
#[derive(Debug, Default)]
pub struct Memo {
    store: std::sync::Arc<Store>,
    /// None for the root problem.
    view: Option<View>,
    /// A part's or fold's relevant parameters, in its own indices (the
    /// root's are the store's).
    relevant: std::sync::OnceLock<Vec<Vec<usize>>>,
}

impl Memo {
    /// Experiments simulated so far (each at one set of the values it
    /// depends on, at one precision), by every problem sharing this memo.
    pub fn runs(&self) -> usize {
        self.store.runs.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Problem<'_> {
    /// Base-unit values from scaled ones (a discrete parameter takes the
    /// choice nearest its scaled value, the choices spread evenly on [0, 1]).
    pub fn unscale(&self, u: &[f64]) -> Vec<f64> {
        unscale_in(self.free, u)
    }

    /// Scaled values from base-unit ones.
    pub fn scale(&self, x: &[f64]) -> Vec<f64> {
        scale_in(self.free, x)
    }

    /// The scaled distance between neighbouring choices of each discrete
    /// parameter (0 for a continuous one).
    pub fn discrete_steps(&self) -> Vec<f64> {
        self.free
            .iter()
            .map(|p| {
                if p.is_discrete() {
                    1.0 / (p.choices.len() - 1) as f64
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// The registry with the free parameters set to `x` (base units).
    pub fn registry_at(&self, x: &[f64]) -> Registry {
        let mut reg = self.reg.clone();
        for (p, v) in self.free.iter().zip(x) {
            for path in p.paths() {
                reg.set_param(path, *v);
            }
        }
        reg
    }

    /// Every figure row with the free parameters at `x` (base units).
    pub fn rows_at(&self, x: &[f64]) -> Result<Vec<FigureRow>> {
        self.rows_at_precision(x, None)
    }

    /// Every figure row with the free parameters at `x`, every run measured
    /// to `precision_pct` if given (else to its scenario's own setting).
    pub fn rows_at_precision(
        &self,
        x: &[f64],
        precision_pct: Option<f64>,
    ) -> Result<Vec<FigureRow>> {
        Ok(self.rows_of_each_experiment_at(x, precision_pct)?.concat())
    }

    /// At `x`, every experiment's figure rows (in scenario then file order).
    fn rows_of_each_experiment_at(
        &self,
        x: &[f64],
        precision_pct: Option<f64>,
    ) -> Result<Vec<Vec<FigureRow>>> {
        self.rows_by_experiment(std::slice::from_ref(&x.to_vec()), precision_pct, None)?
            .pop()
            .ok_or_else(|| crate::Error::Internal("no rows for a point".into()))
    }

    /// [`Problem::rows_at_precision`] at each of `xs`, simulated together in
    /// one pool (experiments run before at the same values of the
    /// parameters they depend on come from the memo).
    pub fn rows_at_points(
        &self,
        xs: &[Vec<f64>],
        precision_pct: Option<f64>,
    ) -> Result<Vec<Vec<FigureRow>>> {
        Ok(self
            .rows_by_experiment(xs, precision_pct, None)?
            .into_iter()
            .map(|per_experiment| per_experiment.concat())
            .collect())
    }

    /// At each of `xs`, the figure rows of each experiment (in scenario then
    /// file order; none for an experiment `only` leaves out), simulated
    /// together in one pool. An experiment run before at the same values of
    /// the parameters it depends on comes from the memo; one another
    /// problem sharing the memo is simulating is waited for.
    fn rows_by_experiment(
        &self,
        xs: &[Vec<f64>],
        precision_pct: Option<f64>,
        only: Option<&[bool]>,
    ) -> Result<Vec<Vec<Vec<FigureRow>>>> {
        self.rows_by_experiment_below(xs, precision_pct, only, None)?
            .into_iter()
            .map(|p| p.ok_or_else(|| crate::Error::Internal("a point was given up".into())))
            .collect()
    }

    /// [`Problem::rows_by_experiment`], giving up (None) each point whose
    /// experiments known so far (from the memo, then as each run ends) add
    /// up to `bound`'s limit: its experiments not yet started are not run.
    /// A point is given up only if it costs at least the limit; one that
    /// does may be given up or not, and which runs a given-up point had,
    /// depending on the order runs end in. So which of the points cost less
    /// than the limit, and their rows, do not depend on it.
    fn rows_by_experiment_below(
        &self,
        xs: &[Vec<f64>],
        precision_pct: Option<f64>,
        only: Option<&[bool]>,
        bound: Option<&Bound>,
    ) -> Result<Vec<Option<Vec<Vec<FigureRow>>>>> {
        let exps: Vec<(&Scenario, &crate::model::Experiment)> = self
            .scenarios
            .iter()
            .flat_map(|sc| sc.experiments.iter().map(move |e| (sc, e)))
            .collect();
        let wanted = |i: usize| only.is_none_or(|o| o.get(i).copied().unwrap_or(false));
        let keys: Vec<Vec<Option<ExperimentKey>>> = xs
            .iter()
            .map(|x| {
                let full = self.root_point(x);
                (0..exps.len())
                    .map(|i| wanted(i).then(|| self.key(i, &full, precision_pct)))
                    .collect()
            })
            .collect();
        let store = &self.memo.store;
        let lock = || store.rows.lock().unwrap_or_else(|e| e.into_inner());
        let tally = bound.map(|b| Tally::new(b, keys.len(), exps.len()));
        loop {
            // Claim the (point, experiment) pairs nobody has run or is
            // running, each key once; note whether another problem is
            // running one of ours. A point given up claims nothing more.
            let mut todo: Vec<(usize, usize)> = Vec::new();
            let mut others_running = false;
            {
                let mut known = lock();
                for (j, point) in keys.iter().enumerate() {
                    if let Some(t) = &tally {
                        for (i, k) in point.iter().enumerate() {
                            if let Some(Some(Slot::Done(rows))) = k.as_ref().map(|k| known.get(k)) {
                                t.count(j, i, rows);
                            }
                        }
                        if t.given_up(j) {
                            continue;
                        }
                    }
                    for (i, k) in point.iter().enumerate() {
                        let Some(k) = k else { continue };
                        match known.get(k) {
                            Some(Slot::Done(_)) => {}
                            Some(Slot::Running) => others_running = true,
                            None => {
                                known.insert(k.clone(), Slot::Running);
                                todo.push((j, i));
                            }
                        }
                    }
                }
                if todo.is_empty() {
                    if !others_running {
                        break;
                    }
                    // Wait for another problem to settle one, then look again.
                    drop(store.settled.wait(known));
                    continue;
                }
            }
            // Whatever happens (an error, a panic), the claims not settled
            // are given up when `claims` goes: a problem waiting for one
            // then runs it itself (and meets the error itself), never hangs.
            let claims = Claims {
                store,
                keys: todo
                    .iter()
                    .filter_map(|&(j, i)| keys[j][i].clone())
                    .collect(),
            };
            let rows = self.simulate(&todo, xs, &exps, precision_pct, tally.as_ref())?;
            let mut known = lock();
            for (k, r) in claims.keys.iter().zip(rows) {
                if let Some(r) = r {
                    known.insert(k.clone(), Slot::Done(r));
                }
            }
            store.settled.notify_all();
        }
        let known = lock();
        keys.iter()
            .enumerate()
            .map(|(j, point)| {
                if tally.as_ref().is_some_and(|t| t.given_up(j)) {
                    return Ok(None);
                }
                point
                    .iter()
                    .map(|k| match k.as_ref().map(|k| known.get(k)) {
                        None => Ok(Vec::new()),
                        Some(Some(Slot::Done(rows))) => Ok(rows.clone()),
                        Some(_) => Err(crate::Error::Internal(
                            "an experiment's rows went missing".into(),
                        )),
                    })
                    .collect::<Result<Vec<_>>>()
                    .map(Some)
            })
            .collect()
    }

    /// Simulates experiment `i` at point `xs[j]` for each `(j, i)` of
    /// `todo` in one pool, and returns each one's figure rows (None for
    /// those of a point `tally` gives up before they start).
    fn simulate(
        &self,
        todo: &[(usize, usize)],
        xs: &[Vec<f64>],
        exps: &[(&Scenario, &crate::model::Experiment)],
        precision_pct: Option<f64>,
        tally: Option<&Tally>,
    ) -> Result<Vec<Option<Vec<FigureRow>>>> {
        let mut regs: HashMap<usize, Registry> = HashMap::new();
        for &(j, _) in todo {
            regs.entry(j).or_insert_with(|| self.registry_at(&xs[j]));
        }
        let costs = self
            .memo
            .store
            .events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let jobs: Vec<Job> = todo
            .iter()
            .map(|&(j, i)| Job {
                reg: &regs[&j],
                scenario: exps[i].0,
                experiment: exps[i].1,
                setup: exps[i].1,
                cost: {
                    let events = costs.get(&self.root_index(i)).copied().unwrap_or(0);
                    match tally {
                        // Non-negative, so the bits order as the values.
                        Some(t) => {
                            let part = t.bound.expected.get(i).copied().unwrap_or(0.0);
                            (part.max(0.0) / events.max(1) as f64).to_bits()
                        }
                        None => events,
                    }
                },
            })
            .collect();
        let wanted = TallyRuns {
            tally,
            todo,
            regs: &regs,
            exps,
            rows: std::sync::Mutex::new(vec![None; todo.len()]),
        };
        let (results, simulated) =
            run_experiments_cut(&jobs, self.seed, &self.runner, precision_pct, &wanted)?;
        self.memo
            .store
            .runs
            .fetch_add(simulated, std::sync::atomic::Ordering::Relaxed);
        let mut events = self
            .memo
            .store
            .events
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for (&(_, i), r) in todo.iter().zip(&results) {
            if let Some(r) = r {
                events.insert(self.root_index(i), r.events);
            }
        }
        Ok(wanted.rows.into_inner().unwrap_or_else(|e| e.into_inner()))
    }

    /// Point `x` (this problem's parameters) as the root problem's (its
    /// every parameter).
    fn root_point<'x>(&self, x: &'x [f64]) -> std::borrow::Cow<'x, [f64]> {
        match &self.memo.view {
            None => std::borrow::Cow::Borrowed(x),
            Some(v) => std::borrow::Cow::Owned(v.full(x)),
        }
    }

    /// The memo's key of experiment `i` (this problem's index) at the root's
    /// point `full` (see [`Problem::root_point`]) measured to
    /// `precision_pct`: the root's index of the experiment and the root's
    /// values of the parameters it depends on.
    fn key(&self, i: usize, full: &[f64], precision_pct: Option<f64>) -> ExperimentKey {
        let root = self.root_index(i);
        let bits = self.root_relevant()[root]
            .iter()
            .map(|&p| full[p].to_bits())
            .collect();
        (root, bits, precision_pct.map(f64::to_bits))
    }

    /// The root problem's index of this problem's experiment `i`.
    fn root_index(&self, i: usize) -> usize {
        self.memo.view.as_ref().map_or(i, |v| v.experiments[i])
    }

    /// The parts of the free parameters that no experiment joins: each a
    /// set of parameters (indices, in order) and the experiments with
    /// figures that read them (per experiment, in scenario then file
    /// order), closed both ways (every parameter such an experiment reads is
    /// in the part, every experiment with figures reading one of them too).
    /// Parameters no experiment with figures reads are in no part.
    pub fn parts(&self) -> Vec<(Vec<usize>, Vec<bool>)> {
        let relevant = self.relevant();
        let with_figures: Vec<bool> = self
            .scenarios
            .iter()
            .flat_map(|sc| sc.experiments.iter().map(|e| !e.figures.is_empty()))
            .collect();
        let mut taken = vec![false; self.free.len()];
        let mut parts = Vec::new();
        for seed in 0..self.free.len() {
            if taken[seed] {
                continue;
            }
            let mut params = vec![false; self.free.len()];
            params[seed] = true;
            let reached = self.reach(&mut params, vec![false; relevant.len()], &with_figures);
            if !reached.iter().any(|r| *r) {
                continue;
            }
            let part: Vec<usize> = (0..self.free.len()).filter(|&p| params[p]).collect();
            for &p in &part {
                taken[p] = true;
            }
            parts.push((part, reached));
        }
        parts
    }

    /// Closes `params` and `reached` (experiments) both ways over the
    /// experiments with figures; returns the experiments reached.
    fn reach(
        &self,
        params: &mut [bool],
        mut reached: Vec<bool>,
        with_figures: &[bool],
    ) -> Vec<bool> {
        let relevant = self.relevant();
        loop {
            for (i, _) in reached.iter().enumerate().filter(|(_, r)| **r) {
                for &p in &relevant[i] {
                    params[p] = true;
                }
            }
            let mut grew = false;
            for i in 0..relevant.len() {
                if !reached[i] && with_figures[i] && relevant[i].iter().any(|&p| params[p]) {
                    reached[i] = true;
                    grew = true;
                }
            }
            if !grew {
                return reached;
            }
        }
    }

    /// The problem of one part (or fold), made by [`Problem::restricted`]:
    /// the same seed and runner, and this one's memo.
    fn sub_problem<'s>(&self, r: &'s Restricted) -> Problem<'s> {
        Problem {
            reg: &r.reg,
            scenarios: &r.scenarios,
            free: &r.free,
            seed: self.seed,
            runner: self.runner.clone(),
            memo: Memo {
                store: self.memo.store.clone(),
                view: Some(r.view.clone()),
                relevant: std::sync::OnceLock::new(),
            },
        }
    }

    /// The models with every free parameter at `x`, the free parameters of
    /// `part`, and the scenarios cut to the `reached` experiments: a
    /// problem of that part alone.
    fn restricted(&self, part: &[usize], reached: &[bool], x: &[f64]) -> Restricted {
        let free: Vec<FreeParam> = part.iter().map(|&p| self.free[p].clone()).collect();
        let mut k = 0;
        let scenarios: Vec<Scenario> = self
            .scenarios
            .iter()
            .map(|sc| {
                let mut sc = sc.clone();
                sc.experiments.retain(|_| {
                    k += 1;
                    reached[k - 1]
                });
                sc
            })
            .filter(|sc| !sc.experiments.is_empty())
            .collect();
        let parent = self.memo.view.clone();
        let root_relevant = self.root_relevant().clone();
        let view = View {
            experiments: (0..reached.len())
                .filter(|&i| reached[i])
                .map(|i| self.root_index(i))
                .collect(),
            params: part
                .iter()
                .map(|&p| parent.as_ref().map_or(p, |v| v.params[p]))
                .collect(),
            fixed: parent.as_ref().map_or_else(|| x.to_vec(), |v| v.full(x)),
            root_relevant,
        };
        Restricted {
            reg: self.registry_at(x),
            free,
            scenarios,
            view,
        }
    }

    /// Per experiment (in scenario then file order), the free parameters
    /// that change its assembled configuration: those whose lowest and
    /// highest values (or first and last choices) give another
    /// configuration fingerprint (`SystemCfg::fingerprint`: what its work
    /// reads). An experiment that cannot be assembled at a bound
    /// counts every parameter (run checks refuse it later, if at all).
    /// Found once, on the root problem; a problem made from it sees the
    /// root's, in its own indices.
    fn relevant(&self) -> &Vec<Vec<usize>> {
        let Some(v) = &self.memo.view else {
            return self.root_relevant();
        };
        self.memo.relevant.get_or_init(|| {
            v.experiments
                .iter()
                .map(|&root| {
                    v.root_relevant[root]
                        .iter()
                        .filter_map(|p| v.params.iter().position(|q| q == p))
                        .collect()
                })
                .collect()
        })
    }

    /// The root problem's relevant parameters (see [`Problem::relevant`]),
    /// found on the root.
    fn root_relevant(&self) -> &std::sync::Arc<Vec<Vec<usize>>> {
        match &self.memo.view {
            Some(v) => &v.root_relevant,
            None => self
                .memo
                .store
                .relevant
                .get_or_init(|| std::sync::Arc::new(self.find_relevant())),
        }
    }

    /// [`Problem::relevant`] found from the fingerprints at the bounds.
    fn find_relevant(&self) -> Vec<Vec<usize>> {
        relevant_params(self.reg, self.scenarios, self.free)
    }
}

/// A search's bound on the points of one batch (see
/// [`Problem::rows_by_experiment_below`]): it needs only the points that
/// cost less than `limit`, and a point's cost is `base` (per point: the
/// prior's part) plus each experiment's part, which is never negative.
pub(crate) struct Bound<'b> {
    /// The cost at or above which a point is given up.
    pub limit: f64,
    /// Per point, its cost before any experiment's.
    pub base: Vec<f64>,
    /// An experiment's part of the cost, from its figure rows.
    pub cost_of: &'b (dyn Fn(&[FigureRow]) -> f64 + Sync),
    /// Per experiment (this problem's), its part of the cost where the
    /// search stands: the runs go in the order of this part per event of
    /// their last run, largest first, so that a point no better is seen to
    /// be so after few (it changes which runs are made, never a result).
    pub expected: Vec<f64>,
}

/// What one batch under a [`Bound`] knows: per point, the cost of the
/// experiments heard so far, and whether the point is given up.
struct Tally<'b> {
    bound: &'b Bound<'b>,
    state: std::sync::Mutex<TallyState>,
}

struct TallyState {
    /// Per point, the cost known so far.
    cost: Vec<f64>,
    /// Per point and experiment, whether its part is in `cost`.
    counted: Vec<Vec<bool>>,
}

impl<'b> Tally<'b> {
    fn new(bound: &'b Bound<'b>, points: usize, experiments: usize) -> Tally<'b> {
        Tally {
            bound,
            state: std::sync::Mutex::new(TallyState {
                cost: (0..points)
                    .map(|j| bound.base.get(j).copied().unwrap_or(0.0))
                    .collect(),
                counted: vec![vec![false; experiments]; points],
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TallyState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds experiment `i`'s part to point `j`'s cost, once.
    fn count(&self, j: usize, i: usize, rows: &[FigureRow]) {
        let part = (self.bound.cost_of)(rows);
        let mut st = self.lock();
        if !std::mem::replace(&mut st.counted[j][i], true) {
            st.cost[j] += part;
        }
    }

    /// Whether point `j` is known to cost at least the limit. A margin of
    /// 10^-9 of it covers the rounding of a sum taken in another order
    /// than the search's.
    fn given_up(&self, j: usize) -> bool {
        let limit = self.bound.limit;
        self.lock().cost[j] > limit + limit.abs() * 1e-9
    }
}

/// The jobs of one [`Problem::simulate`]: each one's figure rows as its run
/// ends, told to the [`Tally`] if there is one.
struct TallyRuns<'a, 'b> {
    tally: Option<&'a Tally<'b>>,
    todo: &'a [(usize, usize)],
    regs: &'a HashMap<usize, Registry>,
    exps: &'a [(&'a Scenario, &'a crate::model::Experiment)],
    /// Per job, its figure rows once run.
    rows: std::sync::Mutex<Vec<Option<Vec<FigureRow>>>>,
}

impl Wanted for TallyRuns<'_, '_> {
    fn wanted(&self, t: usize) -> bool {
        match (self.tally, self.todo.get(t)) {
            (Some(tally), Some(&(j, _))) => !tally.given_up(j),
            _ => true,
        }
    }

    fn heard(&self, t: usize, result: &crate::sim::ExperimentResult) {
        let Some(&(j, i)) = self.todo.get(t) else {
            return;
        };
        let (sc, e) = self.exps[i];
        let rows = experiment_rows(&self.regs[&j], sc, e, result);
        if let Some(tally) = self.tally {
            tally.count(j, i, &rows);
        }
        if let Some(slot) = self
            .rows
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(t)
        {
            *slot = Some(rows);
        }
    }
}

/// A problem of one part (or fold) of another: see [`Problem::restricted`].
struct Restricted {
    reg: Registry,
    free: Vec<FreeParam>,
    scenarios: Vec<Scenario>,
    view: View,
}

impl View {
    /// The root's free parameters with this problem's at `x`.
    fn full(&self, x: &[f64]) -> Vec<f64> {
        let mut full = self.fixed.clone();
        for (&p, v) in self.params.iter().zip(x) {
            full[p] = *v;
        }
        full
    }
}

/// A figure's group: its paper and figure or table (`Figure 2` and
/// `Figure 2 text` are one group).
pub fn group_of(row: &FigureRow) -> String {
    group_key(&row.paper, &row.source)
}

/// The group of a figure of `paper` whose source is `source`.
fn group_key(paper: &str, source: &str) -> String {
    format!("{paper} {}", crate::validate::figure_of(source))
}

/// One fitted parameter.
#[derive(Debug, Clone)]
pub struct ParamFit {
    /// The declaration.
    pub free: FreeParam,
    /// Fitted value, base unit.
    pub value: f64,
    /// 95% confidence interval, base unit: the value plus or minus Student's
    /// t(0.975, figures - free parameters inside their bounds) standard
    /// errors from `s² (JᵀJ)⁻¹` by SVD (None when the data cannot pin it, or
    /// when the value is on a bound or discrete).
    pub ci95: Option<(f64, f64)>,
    /// `min` or `max` when the fit ended on a bound.
    pub at_bound: Option<&'static str>,
    /// The figures whose prediction moves most with it: (id, change of
    /// error_pct over 10% of the range; for a discrete parameter, the largest
    /// change when it takes a neighbouring choice).
    pub pinned_by: Vec<(String, f64)>,
    /// For a discrete parameter: the smallest relative rise of the sum of
    /// squares when it moves to a neighbouring choice.
    pub neighbour_rise: Option<f64>,
}

impl ParamFit {
    /// [`ParamFit::ci95`] clipped to the bounds the parameter was fitted in
    /// (a latency's interval never reaches below its minimum), and whether
    /// it was clipped.
    pub fn ci95_in_bounds(&self) -> Option<((f64, f64), bool)> {
        self.ci95.map(|(lo, hi)| {
            let (a, b) = (lo.max(self.free.min), hi.min(self.free.max));
            ((a, b), a != lo || b != hi)
        })
    }

    /// True when the figures pin the value: a finite interval narrower than the
    /// bounds, or, for a discrete parameter, every neighbouring choice raising
    /// the sum of squares by more than 1%.
    pub fn pinned(&self) -> bool {
        if let Some(rise) = self.neighbour_rise {
            return rise > 0.01;
        }
        self.ci95
            .is_some_and(|(lo, hi)| hi - lo < self.free.max - self.free.min)
    }
}

/// A right singular vector's weights below this are left out of an
/// [`Unpinned`] combination.
const UNPINNED_WEIGHT: f64 = 0.01;

/// A combination of parameters the figures cannot pin: moving the
/// parameters together along it (each by its weight times a step, in
/// fractions of its range) changes no figure to first order.
#[derive(Debug, Clone, PartialEq)]
pub struct Unpinned {
    /// The parameters (dotted paths) and their weights in the unit-length
    /// direction, scaled units, largest first and positive; weights below
    /// 0.01 in size are left out.
    pub weights: Vec<(String, f64)>,
    /// Its singular value over the largest (below `1e-6`, the cutoff).
    pub relative_singular_value: f64,
}

/// A finished fit.
#[derive(Debug, Clone)]
pub struct Fit {
    /// Per parameter.
    pub params: Vec<ParamFit>,
    /// Pairs of parameters whose estimates correlate strongly (|r| > 0.8).
    pub correlations: Vec<(String, String, f64)>,
    /// The combinations of parameters the figures leave unpinned: the right
    /// singular vectors of the Jacobian (continuous parameters inside their
    /// bounds, scaled units) whose singular values are below the cutoff.
    /// Every parameter named in one has no interval. Empty when the figures
    /// pin every direction (or the SVD failed, when no parameter has one).
    pub unpinned: Vec<Unpinned>,
    /// Degrees of freedom of the intervals: the figures less the free
    /// parameters inside their bounds (at least 1). Each interval is the
    /// estimate plus or minus Student's t(0.975, this) standard errors, with
    /// `s²` the figures' sum of squares over this.
    pub degrees_of_freedom: usize,
    /// Figures at the initial values.
    pub rows_initial: Vec<FigureRow>,
    /// Figures at the fitted values.
    pub rows_fitted: Vec<FigureRow>,
    /// Iterations.
    pub iterations: u32,
    /// Model evaluations (each runs every experiment), by phase of the
    /// fit; the parts' summed.
    pub spent: lm::Spent,
}

/// What the fit minimises besides the figures' squared relative errors.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Objective {
    /// One residual per parameter, `prior_weight * (u - u0)` in scaled units:
    /// a weak pull towards the start that decides only the directions the
    /// figures leave flat (0: none).
    pub prior_weight: f64,
    /// A relative error (a fraction) beyond which a figure's cost grows
    /// linearly instead of quadratically (Huber's loss; 0: plain least
    /// squares). A figure the model cannot reach then pulls the fit no harder
    /// than one this far off, instead of dragging every parameter it touches.
    pub robust_above: f64,
}

impl Objective {
    /// The residual whose square is the figure's cost: the relative error up
    /// to `robust_above`, beyond it `sign(e) * sqrt(d * (2|e| - d))`.
    pub fn residual(&self, e: f64) -> f64 {
        let d = self.robust_above;
        if d <= 0.0 || e.abs() <= d {
            e
        } else {
            e.signum() * (d * (2.0 * e.abs() - d)).sqrt()
        }
    }

    /// The value of the objective at a point: (the figures' part, the
    /// prior's), from the point's figure rows and its scaled parameters `u`
    /// (the prior pulls towards `u0`, the scaled initial values). What the
    /// fit minimises is their sum, so two fits of the same calibration (say
    /// one from the initial values and a refit) compare by it.
    pub fn value(&self, rows: &[FigureRow], u: &[f64], u0: &[f64]) -> (f64, f64) {
        let figures = rows
            .iter()
            .filter(|r| r.error_pct.is_finite())
            .map(|r| self.residual(r.error_pct / 100.0).powi(2))
            .sum();
        let prior = self.prior_residuals(u, u0).map(|r| r * r).sum();
        (figures, prior)
    }

    /// The prior's residuals, one per parameter: `prior_weight * (u - u0)`.
    fn prior_residuals<'a>(&self, u: &'a [f64], u0: &'a [f64]) -> impl Iterator<Item = f64> + 'a {
        let w = self.prior_weight;
        u.iter().zip(u0).map(move |(a, b)| w * (a - b))
    }
}

/// Fits the free parameters to the figures for which `train` is true, from
/// `start` (base units: the calibration's initial values, which the prior
/// pulls towards), minimising the figures' costs (see [`Objective`]) plus the
/// prior's. Intervals and pinning come from the figures' residuals alone.
/// `progress` hears (iteration, sum of squares).
///
/// With `from` (base units, say a previous fit's values), the search starts
/// there instead and looks only near it (a refit, see [`lm::compass`]); the
/// prior still pulls towards `start`, so the objective is the same.
///
/// The parameters fall into parts that no experiment joins (see
/// [`Problem::parts`]: a paper's parameters, say, read by none of another
/// paper's experiments); each part is fitted on its own experiments, so
/// adding a paper neither moves another paper's fit nor costs its runs. The
/// fit of a single part is the whole fit.
pub fn fit<T, P>(
    pb: &Problem,
    start: &[f64],
    from: Option<&[f64]>,
    train: T,
    settings: LmSettings,
    objective: Objective,
    progress: P,
) -> Result<Fit>
where
    T: Fn(&FigureRow) -> bool + Sync,
    P: FnMut(u32, f64) + Send,
{
    let parts = pb.parts();
    if parts.len() <= 1 && parts.iter().all(|(ps, _)| ps.len() == pb.free.len()) {
        return fit_joint(pb, start, from, train, settings, objective, progress);
    }
    let mut params: Vec<Option<ParamFit>> = (0..pb.free.len()).map(|_| None).collect();
    let mut x = start.to_vec();
    let mut out = Fit {
        params: Vec::new(),
        correlations: Vec::new(),
        unpinned: Vec::new(),
        degrees_of_freedom: 0,
        rows_initial: Vec::new(),
        rows_fitted: Vec::new(),
        iterations: 0,
        spent: lm::Spent::default(),
    };
    // The parts are fitted at once, each in a thread of its own running its
    // batches through the pool (one part's serial phases leave the cores to
    // the others); each fit depends only on its part, so the result does
    // not depend on the order they finish in.
    let progress = std::sync::Mutex::new(progress);
    let fits = at_once(&parts, |_, (part, reached)| {
        let restricted = pb.restricted(part, reached, start);
        let sub_start: Vec<f64> = part.iter().map(|&p| start[p]).collect();
        let sub_from: Option<Vec<f64>> = from.map(|f| part.iter().map(|&p| f[p]).collect());
        fit_joint(
            &pb.sub_problem(&restricted),
            &sub_start,
            sub_from.as_deref(),
            &train,
            settings,
            objective,
            |it, c| {
                if let Ok(mut p) = progress.lock() {
                    (*p)(it, c);
                }
            },
        )
    });
    for ((part, _), f) in parts.iter().zip(fits) {
        let f = f?;
        for (j, &p) in part.iter().enumerate() {
            x[p] = f.params[j].value;
            params[p] = Some(f.params[j].clone());
        }
        out.correlations.extend(f.correlations);
        out.unpinned.extend(f.unpinned);
        out.degrees_of_freedom += f.degrees_of_freedom;
        out.iterations = out.iterations.max(f.iterations);
        out.spent += f.spent;
    }
    // A parameter no experiment with figures reads stays where it started.
    out.params = params
        .into_iter()
        .zip(pb.free)
        .zip(start)
        .map(|((p, free), &value)| {
            p.unwrap_or_else(|| ParamFit {
                free: free.clone(),
                value,
                ci95: None,
                at_bound: None,
                pinned_by: Vec::new(),
                neighbour_rise: None,
            })
        })
        .collect();
    out.degrees_of_freedom = out.degrees_of_freedom.max(1);
    out.rows_initial = pb.rows_at(start)?;
    out.rows_fitted = pb.rows_at(&x)?;
    Ok(out)
}

/// [`fit`] of every free parameter together.
fn fit_joint<T, P>(
    pb: &Problem,
    start: &[f64],
    from: Option<&[f64]>,
    train: T,
    settings: LmSettings,
    objective: Objective,
    progress: P,
) -> Result<Fit>
where
    T: Fn(&FigureRow) -> bool,
    P: FnMut(u32, f64),
{
    let by_experiment = pb.rows_of_each_experiment_at(start, None)?;
    // The experiments the fit reads: those with a training figure (one
    // whose figures a cross-validation fold left out all is run only for
    // the fit's report).
    let trained: Vec<bool> = by_experiment
        .iter()
        .map(|rows| rows.iter().any(&train))
        .collect();
    let rows_initial: Vec<FigureRow> = by_experiment.concat();
    // The precision runs are measured to: coarse during the search, the
    // scenarios' own for the polish and everything reported.
    let precision = std::cell::Cell::new(None);
    let ids: Vec<String> = rows_initial
        .iter()
        .filter(|r| train(r))
        .map(|r| r.id.clone())
        .collect();
    let u0 = pb.scale(start);
    // Residuals of the training figures at each point (scaled units), the
    // points simulated together.
    let figure_residuals = |per_experiment: &[Vec<FigureRow>]| -> Vec<f64> {
        let rows: Vec<&FigureRow> = per_experiment.iter().flatten().collect();
        ids.iter()
            .map(|id| {
                rows.iter()
                    .find(|r| &r.id == id)
                    .map(|r| objective.residual(r.error_pct / 100.0))
                    .unwrap_or(0.0)
            })
            .collect()
    };
    let data_residuals = |us: &[Vec<f64>]| -> Result<Vec<Vec<f64>>> {
        let xs: Vec<Vec<f64>> = us.iter().map(|u| pb.unscale(u)).collect();
        let all = pb.rows_by_experiment(&xs, precision.get(), Some(&trained))?;
        Ok(all.iter().map(|e| figure_residuals(e)).collect())
    };
    let with_prior = |mut r: Vec<f64>, u: &[f64]| -> Vec<f64> {
        if objective.prior_weight > 0.0 {
            r.extend(objective.prior_residuals(u, &u0));
        }
        r
    };
    let residuals = |us: &[Vec<f64>]| -> Result<Vec<Vec<f64>>> {
        let rs = data_residuals(us)?;
        Ok(rs
            .into_iter()
            .zip(us)
            .map(|(r, u)| with_prior(r, u))
            .collect())
    };
    // The search's evaluations give up a point once the training figures
    // heard so far and the prior cost at least `limit` (see
    // [`lm::Batch::eval_below`]). Figure ids are unique (the loader
    // refuses one given twice), so each figure counts once.
    let trained_ids: std::collections::HashSet<&str> = ids.iter().map(String::as_str).collect();
    let experiment_cost = |rows: &[FigureRow]| -> f64 {
        rows.iter()
            .filter(|r| trained_ids.contains(r.id.as_str()))
            .map(|r| objective.residual(r.error_pct / 100.0).powi(2))
            .sum()
    };
    let residuals_below =
        |us: &[Vec<f64>], best: &[f64], limit: f64| -> Result<Vec<Option<Vec<f64>>>> {
            // Where the search stands was evaluated before: its rows come from
            // the memo.
            let at_best =
                pb.rows_by_experiment(&[pb.unscale(best)], precision.get(), Some(&trained))?;
            let bound = Bound {
                expected: at_best
                    .first()
                    .map(|e| e.iter().map(|rows| experiment_cost(rows)).collect())
                    .unwrap_or_default(),
                limit,
                base: us
                    .iter()
                    .map(|u| with_prior(Vec::new(), u).iter().map(|r| r * r).sum())
                    .collect(),
                cost_of: &experiment_cost,
            };
            let xs: Vec<Vec<f64>> = us.iter().map(|u| pb.unscale(u)).collect();
            let all =
                pb.rows_by_experiment_below(&xs, precision.get(), Some(&trained), Some(&bound))?;
            Ok(all
                .iter()
                .zip(us)
                .map(|(e, u)| e.as_ref().map(|e| with_prior(figure_residuals(e), u)))
                .collect())
        };
    let steps = pb.discrete_steps();
    let settings = LmSettings {
        global: settings.global && from.is_none(),
        ..settings
    };
    let u_from = from.map_or_else(|| u0.clone(), |f| pb.scale(f));
    let mut f = lm::Bounded {
        all: &residuals,
        below: &residuals_below,
    };
    let mut out = match settings.search_precision_pct {
        Some(coarse) if settings.search_evaluations > 0 => {
            precision.set(Some(coarse));
            let (u1, _, searched) = lm::compass(&mut f, &u_from, &steps, settings)?;
            precision.set(None);
            // The polish starts from the search's end or, if the fine
            // precision finds it worse, from the search's start (one
            // evaluation at the fine precision more).
            let u1 = lm::better_of(&mut f, u1, &u_from)?;
            let polish = LmSettings {
                search_evaluations: 0,
                ..settings
            };
            let mut out = minimise(f, &u1, &steps, polish, progress)?;
            // The search's, and the point of the two `better_of` judged
            // that the polish does not start from.
            out.spent += searched;
            out.spent.add(lm::Phase::Polish, 1);
            out
        }
        _ => minimise(f, &u_from, &steps, settings, progress)?,
    };
    out.residuals.truncate(ids.len());
    out.jacobian.truncate(ids.len());
    let x = pb.unscale(&out.u);
    let ssr_data: f64 = out.residuals.iter().map(|r| r * r).sum();
    let mut neighbour_rises: Vec<Option<f64>> = Vec::new();
    // Per discrete parameter, each figure's largest move (in error points)
    // when the parameter takes a neighbouring choice.
    let mut neighbour_moves: Vec<Option<Vec<f64>>> = Vec::new();
    // Each discrete parameter one choice either way, all simulated together
    // (for its interval: none when the settings ask for none).
    let with_neighbours = |step: f64| settings.intervals && step > 0.0;
    let mut neighbours: Vec<(usize, Vec<f64>)> = Vec::new();
    for (p, step) in steps.iter().enumerate() {
        for dir in [-1.0, 1.0] {
            let mut v = out.u.clone();
            v[p] += dir * step;
            if with_neighbours(*step) && (-1e-9..=1.0 + 1e-9).contains(&v[p]) {
                neighbours.push((p, v));
            }
        }
    }
    let points: Vec<Vec<f64>> = neighbours.iter().map(|(_, v)| v.clone()).collect();
    let neighbour_residuals = data_residuals(&points)?;
    for (p, step) in steps.iter().enumerate() {
        if !with_neighbours(*step) {
            neighbour_rises.push(None);
            neighbour_moves.push(None);
            continue;
        }
        let mut rise = f64::INFINITY;
        let mut moves = vec![0.0_f64; ids.len()];
        for (_, rv) in neighbours
            .iter()
            .zip(&neighbour_residuals)
            .filter(|((q, _), _)| *q == p)
        {
            let c: f64 = rv.iter().map(|r| r * r).sum();
            rise = rise.min((c - ssr_data) / ssr_data.max(1e-300));
            for ((m, a), b) in moves.iter_mut().zip(rv).zip(&out.residuals) {
                let d = 100.0 * (a - b);
                if d.abs() > m.abs() {
                    *m = d;
                }
            }
        }
        neighbour_rises.push(Some(rise));
        neighbour_moves.push(Some(moves));
    }
    let rows_fitted = pb.rows_at(&x)?;
    let k = pb.free.len();
    let n = out.residuals.len();
    let inside: Vec<bool> = out.u.iter().map(|u| *u > 1e-6 && *u < 1.0 - 1e-6).collect();
    // Degrees of freedom: the figures less the free parameters the fit left
    // inside their bounds (one on a bound is fixed there, not estimated).
    let df = n
        .saturating_sub(inside.iter().filter(|i| **i).count())
        .max(1);
    let s2 = ssr_data / df as f64;
    let t = crate::stats::t975(df);
    // d x / d u per parameter, to carry scaled variances to base units.
    let dx_du: Vec<f64> = pb
        .free
        .iter()
        .zip(&out.u)
        .map(|(p, u)| p.dx_du(*u))
        .collect();
    // Covariance over the continuous parameters inside their bounds, from the
    // SVD of the Jacobian in scaled units (where a singular value's size
    // means the same for every parameter): s² V S⁻² Vᵀ over the pinned
    // directions; a parameter with weight on an unpinned direction, or on a
    // bound, or discrete, gets no interval.
    let active: Vec<usize> = (0..k).filter(|&p| inside[p] && steps[p] == 0.0).collect();
    let ja: Vec<Vec<f64>> = out
        .jacobian
        .iter()
        .map(|row| active.iter().map(|&p| row[p]).collect())
        .collect();
    let spread = if settings.intervals {
        linalg::spread(&ja, active.len())
    } else {
        None
    };
    let mut unpinned = Vec::new();
    let cov = spread.map(|sp| {
        let mut full = vec![vec![f64::NAN; k]; k];
        for (a, &p) in active.iter().enumerate() {
            for (b, &q) in active.iter().enumerate() {
                full[p][q] = sp.inverse[a][b] * s2 * dx_du[p] * dx_du[q];
            }
        }
        for (v, relative_singular_value) in sp.unpinned {
            let mut weights: Vec<(String, f64)> = active
                .iter()
                .zip(&v)
                .filter(|(_, w)| w.abs() >= UNPINNED_WEIGHT)
                .map(|(&p, w)| (pb.free[p].path.clone(), *w))
                .collect();
            weights.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0)));
            // The sign of a singular vector is arbitrary: make the largest
            // weight positive, so that a run reports the same vector.
            if weights.first().is_some_and(|w| w.1 < 0.0) {
                weights.iter_mut().for_each(|w| w.1 = -w.1);
            }
            unpinned.push(Unpinned {
                weights,
                relative_singular_value,
            });
        }
        full
    });
    let mut params = Vec::new();
    for (p, f) in pb.free.iter().enumerate() {
        let value = x[p];
        let ci95 = cov.as_ref().and_then(|c| {
            let var = c[p][p];
            (var.is_finite() && var > 0.0).then(|| (value - t * var.sqrt(), value + t * var.sqrt()))
        });
        let at_bound = if out.u[p] <= 1e-6 {
            Some("min")
        } else if out.u[p] >= 1.0 - 1e-6 {
            Some("max")
        } else {
            None
        };
        let mut by: Vec<(String, f64)> = match &neighbour_moves[p] {
            Some(moves) => ids.iter().cloned().zip(moves.iter().copied()).collect(),
            None => ids
                .iter()
                .zip(&out.jacobian)
                .map(|(id, row)| (id.clone(), row[p] * 0.1 * 100.0))
                .collect(),
        };
        by.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0)));
        by.truncate(3);
        params.push(ParamFit {
            free: f.clone(),
            value,
            ci95,
            at_bound,
            pinned_by: by,
            neighbour_rise: neighbour_rises[p],
        });
    }
    let mut correlations = Vec::new();
    if let Some(c) = &cov {
        for a in 0..k {
            for b in a + 1..k {
                let r = c[a][b] / (c[a][a] * c[b][b]).sqrt();
                if r.is_finite() && r.abs() > 0.8 {
                    correlations.push((pb.free[a].path.clone(), pb.free[b].path.clone(), r));
                }
            }
        }
    }
    Ok(Fit {
        params,
        correlations,
        unpinned,
        degrees_of_freedom: df,
        rows_initial,
        rows_fitted,
        iterations: out.iterations,
        spent: out.spent,
    })
}

/// One held-out figure: its prediction by a fit that did not see its group.
#[derive(Debug, Clone)]
pub struct HeldOut {
    /// The prediction without its group.
    pub row: FigureRow,
    /// Its error when the fit saw every figure.
    pub fitted_error_pct: f64,
    /// The group left out.
    pub group: String,
}

/// The parameters one cross-validation fold found without its group.
#[derive(Debug, Clone)]
pub struct Fold {
    /// The group left out.
    pub group: String,
    /// The fold's fit of every free parameter.
    pub params: Vec<ParamFit>,
    /// The fold's own objective (its training figures and the prior over
    /// the parameters it refits, see [`Objective::value`]) at its fit and
    /// at the full fit's values of those parameters; None where no free
    /// parameter touches the group (nothing refit). A full fit that scores
    /// lower shows the fold's search ended in a worse basin than one that
    /// exists; nearly equal scores in different basins show the fold's
    /// figures barely pin what the group left out needs. A diagnostic: the
    /// full fit, which saw the group, is never where a fold starts nor what
    /// it predicts with.
    pub objectives: Option<FoldObjectives>,
}

/// A fold's objective at two points (see [`Fold::objectives`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FoldObjectives {
    /// At the fold's fit.
    pub at_fold_fit: f64,
    /// At the full fit's values of the parameters the fold refits.
    pub at_full_fit: f64,
}

/// What leave-one-group-out cross-validation found.
#[derive(Debug, Clone)]
pub struct CrossValidation {
    /// Every figure, predicted by the fold that left its group out, in the
    /// order of the full fit's figures.
    pub held: Vec<HeldOut>,
    /// The fit of the free parameters with every figure.
    pub all: Vec<ParamFit>,
    /// Each fold's parameters, in the order the groups were left out.
    pub folds: Vec<Fold>,
}

/// Leave-one-group-out cross-validation. `progress` hears (group, index, count).
///
/// A group is a fold of [`folds`]: a paper figure or table with every
/// figure of the same simulated run, so no figure is held out while a
/// figure of its own run trains. Only the free parameters are refit per
/// fold; the structural choices (the calibration's `[[choice]]` tables)
/// stay as they are.
///
/// A fold refits, from the declared initial values, the free parameters
/// its left-out figures depend on and every parameter tied to them through
/// other figures (the connected part of the graph of parameters and the
/// experiments whose work they change), on the experiments with figures
/// that part reaches; every other parameter keeps its full-fit value, which
/// no figure of the group influenced (their experiments do not read the
/// part's parameters, nor the group's figures theirs). With one paper every
/// parameter is usually tied to every other, and a fold refits them all.
/// The cross-validation reports the full fit's and each fold's values, not
/// their intervals, so every fit it makes skips what only intervals read
/// (see [`LmSettings::intervals`]); their values are those of fits with them.
///
/// The full fit starts as [`fit`] does: from `start` across each
/// parameter's range, or, given `from` (the values in use, themselves a fit
/// of these figures), near `from` only, as `calibrate --refit`. The folds
/// always start from `start`: a fold must not begin where a fit that saw
/// its group ended.
pub fn cross_validate<P>(
    pb: &Problem,
    start: &[f64],
    from: Option<&[f64]>,
    settings: LmSettings,
    objective: Objective,
    progress: P,
) -> Result<CrossValidation>
where
    P: FnMut(&str, usize, usize) + Send,
{
    cross_validate_folds(pb, start, from, settings, objective, &|_| true, progress)
}

/// The groups a cross-validation of `scenarios` leaves out, in the order
/// it leaves them out (that of their first figure, scenario then file
/// order), each named as [`folds`] names it.
pub fn fold_groups(scenarios: &[Scenario]) -> Vec<String> {
    let fold_of = folds(scenarios);
    let mut groups: Vec<String> = Vec::new();
    for sc in scenarios {
        for f in sc.experiments.iter().flat_map(|e| &e.figures) {
            let g = fold_of
                .get(&f.id)
                .cloned()
                .unwrap_or_else(|| group_key(&sc.source, &f.source));
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
    }
    groups
}

/// [`cross_validate`] with only the folds `only` picks (by index into
/// [`fold_groups`]) refit: `held` holds the figures of those folds' groups
/// and `folds` those folds, each as the whole cross-validation finds it
/// (the full fit is made whole, and each fold depends only on it and on
/// its own group). What `validate --cross-validate --shard` runs.
pub fn cross_validate_folds<P>(
    pb: &Problem,
    start: &[f64],
    from: Option<&[f64]>,
    settings: LmSettings,
    objective: Objective,
    only: &dyn Fn(usize) -> bool,
    progress: P,
) -> Result<CrossValidation>
where
    P: FnMut(&str, usize, usize) + Send,
{
    // It reports values, not their intervals (see the doc above).
    let settings = LmSettings {
        intervals: false,
        ..settings
    };
    let all = fit(pb, start, from, |_| true, settings, objective, |_, _| {})?;
    let x_all: Vec<f64> = all.params.iter().map(|p| p.value).collect();
    let fold_of = folds(pb.scenarios);
    let group_of = |r: &FigureRow| fold_of.get(&r.id).cloned().unwrap_or_else(|| group_of(r));
    let groups = fold_groups(pb.scenarios);
    // Per experiment (scenario then file order): its figure groups, and
    // the free parameters its work reads.
    let exps: Vec<(usize, &crate::model::Experiment)> = pb
        .scenarios
        .iter()
        .enumerate()
        .flat_map(|(si, sc)| sc.experiments.iter().map(move |e| (si, e)))
        .collect();
    let exp_groups: Vec<Vec<String>> = exps
        .iter()
        .map(|(si, e)| {
            e.figures
                .iter()
                .map(|f| {
                    fold_of
                        .get(&f.id)
                        .cloned()
                        .unwrap_or_else(|| group_key(&pb.scenarios[*si].source, &f.source))
                })
                .collect()
        })
        .collect();
    let with_figures: Vec<bool> = exp_groups.iter().map(|g| !g.is_empty()).collect();
    // Each fold's part and the experiments it reaches.
    let fold_parts: Vec<(Vec<usize>, Vec<bool>)> = groups
        .iter()
        .map(|g| {
            let mut params = vec![false; pb.free.len()];
            let reached = pb.reach(
                &mut params,
                exp_groups.iter().map(|gs| gs.contains(g)).collect(),
                &with_figures,
            );
            ((0..pb.free.len()).filter(|&p| params[p]).collect(), reached)
        })
        .collect();
    // The folds are refit at once, each in a thread of its own (each fit
    // depends only on its fold, so the result does not depend on the order
    // they finish in).
    let progress = std::sync::Mutex::new(progress);
    let folds_of: Vec<_> = groups
        .iter()
        .zip(&fold_parts)
        .enumerate()
        .filter(|(gi, _)| only(*gi))
        .collect();
    let refits = at_once(&folds_of, |_, (gi, (g, (part, reached)))| {
        if let Ok(mut p) = progress.lock() {
            (*p)(g, gi + 1, groups.len());
        }
        if part.is_empty() {
            return Ok(None);
        }
        // The others at their full-fit values; the part's experiments only.
        let restricted = pb.restricted(part, reached, &x_all);
        let sub = pb.sub_problem(&restricted);
        let sub_start: Vec<f64> = part.iter().map(|&p| start[p]).collect();
        let train = |r: &FigureRow| &group_of(r) != *g;
        let f = fit(
            &sub,
            &sub_start,
            None,
            train,
            settings,
            objective,
            |_, _| {},
        )?;
        // The fold's objective at its fit and at the full fit's values (the
        // latter's runs come from the memo: the full fit ran them).
        let u0 = sub.scale(&sub_start);
        let value_at = |x: &[f64], rows: &[FigureRow]| {
            let trained: Vec<FigureRow> = rows.iter().filter(|r| train(r)).cloned().collect();
            let (figures, prior) = objective.value(&trained, &sub.scale(x), &u0);
            figures + prior
        };
        let x_fold: Vec<f64> = f.params.iter().map(|p| p.value).collect();
        let x_full: Vec<f64> = part.iter().map(|&p| x_all[p]).collect();
        let objectives = FoldObjectives {
            at_fold_fit: value_at(&x_fold, &f.rows_fitted),
            at_full_fit: value_at(&x_full, &sub.rows_at(&x_full)?),
        };
        Ok(Some((f, objectives)))
    });
    let mut held = Vec::new();
    let mut folds = Vec::new();
    for (&(_, (g, (part, _))), refit) in folds_of.iter().zip(refits) {
        let Some((f, objectives)) = refit? else {
            // No free parameter touches the group: the full fit's prediction
            // is already blind to it.
            for r in all.rows_fitted.iter().filter(|r| &group_of(r) == g) {
                held.push(HeldOut {
                    row: r.clone(),
                    fitted_error_pct: r.error_pct,
                    group: g.clone(),
                });
            }
            folds.push(Fold {
                group: g.clone(),
                params: all.params.clone(),
                objectives: None,
            });
            continue;
        };
        for r in f.rows_fitted.iter().filter(|r| &group_of(r) == g) {
            let fitted = all.rows_fitted.iter().find(|a| a.id == r.id);
            held.push(HeldOut {
                row: r.clone(),
                fitted_error_pct: fitted.map_or(f64::NAN, |a| a.error_pct),
                group: g.clone(),
            });
        }
        let mut params = all.params.clone();
        for (j, &p) in part.iter().enumerate() {
            params[p] = f.params[j].clone();
        }
        folds.push(Fold {
            group: g.clone(),
            params,
            objectives: Some(objectives),
        });
    }
    // Back in the order of the full fit's figures.
    held.sort_by_key(|h| all.rows_fitted.iter().position(|r| r.id == h.row.id));
    Ok(CrossValidation {
        held,
        all: all.params,
        folds,
    })
}

/// Runs `f` on every item at once, each in a scoped thread of its own
/// (whose simulations go through the runner's pool), and returns the results
/// in the items' order: each depends only on its item, so not on which
/// finishes first. A thread that panics gives an internal error. Each item
/// is a fit that waits for simulations other items run (the memo's
/// claims), so each has a thread of its own, outside the pool: a pool task
/// that waited so could hold up the very simulations it waits for.
fn at_once<I: Sync, R: Send>(
    items: &[I],
    f: impl Fn(usize, &I) -> Result<R> + Sync,
) -> Vec<Result<R>> {
    std::thread::scope(|scope| {
        let f = &f;
        let handles: Vec<_> = items
            .iter()
            .enumerate()
            .map(|(i, item)| scope.spawn(move || f(i, item)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(crate::Error::Internal("a parallel fit panicked".into()))
                })
            })
            .collect()
    })
}
#[cfg(test)]
mod tests {
    use super::{Bound, Claims, ExperimentKey, FigureRow, Objective, Problem, Slot, Store};
    use crate::loader::{load_bundled_calibration, load_bundled_scenarios, load_registry};

    /// A batch under a bound gives a point up once the experiments heard
    /// (each figure costs 1 here) pass the limit, and runs none of its
    /// experiments after that; a point the limit does not reach keeps
    /// every row, as a plain evaluation gives them.
    #[test]
    fn a_point_is_given_up_once_the_experiments_heard_pass_the_limit() {
        let mut reg = load_registry(&[]).expect("bundled models");
        let spec = load_bundled_calibration(&mut reg).expect("bundled calibration");
        let scenarios: Vec<_> = load_bundled_scenarios(&reg)
            .expect("bundled scenarios")
            .into_iter()
            .filter(|sc| sc.name == "hp2g-fig2-gige-receive")
            .collect();
        let figures: Vec<f64> = scenarios[0]
            .experiments
            .iter()
            .map(|e| e.figures.len() as f64)
            .collect();
        assert!(figures.len() > 2 && figures.iter().all(|&n| n >= 1.0));
        let pb = Problem {
            reg: &reg,
            scenarios: &scenarios,
            free: &spec.free,
            seed: 5,
            runner: crate::app::Runner::new(1).unwrap(),
            memo: Default::default(),
        };
        let x: Vec<f64> = spec.free.iter().map(|f| f.initial).collect();
        // Runs to 50%: each stops at its floor.
        let coarse = Some(50.0);
        let per_figure = |rows: &[FigureRow]| rows.len() as f64;
        let below = |limit: f64, base: f64| {
            let bound = Bound {
                limit,
                base: vec![base],
                cost_of: &per_figure,
                expected: Vec::new(),
            };
            pb.rows_by_experiment_below(std::slice::from_ref(&x), coarse, None, Some(&bound))
                .expect("runs")
                .pop()
                .expect("one point")
        };
        // The base alone passes the limit: nothing is run.
        assert_eq!(below(0.5, 1.0), None);
        assert_eq!(pb.memo.runs(), 0);
        // The first two experiments pass it: the others are not run (one
        // thread, the experiments in file order).
        assert_eq!(below(figures[0] + 0.5, 0.0), None);
        assert_eq!(pb.memo.runs(), 2);
        // Every figure does not reach the limit: the point is kept, its
        // first two experiments from the memo.
        let all: f64 = figures.iter().sum();
        let kept = below(all + 0.5, 0.0).expect("kept");
        assert_eq!(pb.memo.runs(), figures.len());
        let plain = pb
            .rows_by_experiment(std::slice::from_ref(&x), coarse, None)
            .expect("runs");
        assert_eq!(Some(&kept), plain.first());
        assert_eq!(kept.iter().map(Vec::len).sum::<usize>() as f64, all);
    }

    /// A problem that claimed experiments and stopped before settling them
    /// (an error, a panic) gives them up, so another waiting for them runs
    /// them itself instead of waiting for ever; those it settled stay.
    #[test]
    fn claims_not_settled_are_given_up_when_the_claimant_goes() {
        let store = Store::default();
        let (a, b): (ExperimentKey, ExperimentKey) = ((0, vec![1], None), (1, vec![2], None));
        {
            let mut known = store.rows.lock().unwrap();
            known.insert(a.clone(), Slot::Running);
            known.insert(b.clone(), Slot::Running);
        }
        let waiter = std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let mut known = store.rows.lock().unwrap();
                while matches!(known.get(&b), Some(Slot::Running)) {
                    known = store.settled.wait(known).unwrap();
                }
                known.contains_key(&b)
            });
            let claims = Claims {
                store: &store,
                keys: vec![a.clone(), b.clone()],
            };
            store
                .rows
                .lock()
                .unwrap()
                .insert(a.clone(), Slot::Done(Vec::new()));
            drop(claims);
            waiter.join().unwrap()
        });
        assert!(!waiter, "woken, and the slot is free to claim");
        let known = store.rows.lock().unwrap();
        assert!(matches!(known.get(&a), Some(Slot::Done(_))));
        assert!(!known.contains_key(&b));
    }

    #[test]
    fn plain_least_squares_keeps_the_error() {
        let o = Objective::default();
        assert_eq!(o.residual(0.42), 0.42);
        assert_eq!(o.residual(-0.03), -0.03);
    }

    #[test]
    fn beyond_the_threshold_the_cost_grows_linearly_and_continuously() {
        let o = Objective {
            prior_weight: 0.0,
            robust_above: 0.1,
        };
        // Inside: unchanged.
        assert_eq!(o.residual(0.05), 0.05);
        // Continuous at the threshold.
        assert!((o.residual(0.1 + 1e-12) - 0.1).abs() < 1e-9);
        // Huber: the squared residual is d * (2|e| - d), linear in |e|.
        for e in [0.2_f64, 0.4, 0.6] {
            let r = o.residual(e);
            assert!((r * r - 0.1 * (2.0 * e - 0.1)).abs() < 1e-12, "{e}: {r}");
            assert_eq!(o.residual(-e), -r);
        }
        // A 60% error costs 11 times a 10% one, not 36 times.
        let ratio = o.residual(0.6).powi(2) / o.residual(0.1).powi(2);
        assert!((ratio - 11.0).abs() < 1e-9, "{ratio}");
    }
}
