//! Bounded least squares on parameters scaled to [0, 1]. A discrete-event
//! model's objective is piecewise flat at fine scales, so the fit first runs a
//! derivative-free compass search (each parameter up and down by a step that
//! halves when no move helps), then polishes with Levenberg-Marquardt
//! (projected: a step that leaves the box is clipped to it; each step solved
//! by SVD of the damped Jacobian, see `linalg::damped_step`), whose
//! Jacobian, by finite differences of a fixed step, also gives the confidence
//! intervals.

use std::collections::HashSet;

use super::linalg::damped_step;
use crate::error::Result;

/// Settings of one fit.
#[derive(Debug, Clone, Copy)]
pub struct LmSettings {
    /// Iterations at most.
    pub max_iterations: u32,
    /// Finite-difference step in scaled units.
    pub step: f64,
    /// Stop when the relative decrease of the cost falls below this.
    pub tolerance: f64,
    /// Model evaluations the compass search may spend (0: skip it).
    pub search_evaluations: u32,
    /// Precision (percent) every run is measured to during the compass
    /// search; the polish, and the reported fit, use each scenario's own
    /// (None: the scenarios' own throughout).
    pub search_precision_pct: Option<f64>,
    /// Whether the compass search looks across each parameter's whole range
    /// (its grid scans) before it narrows down; false for a refit, which
    /// searches only near where it starts (see [`compass`]).
    pub global: bool,
    /// Whether the compass search, when it stalls, tries moves of two
    /// parameters at once (see [`compass`]) before its fine scans.
    pub pair_moves: bool,
    /// Whether the compass search, when it stalls, scans each continuous
    /// parameter once more over a 17-point grid (see [`compass`]).
    pub fine_scans: bool,
    /// Whether the fit ends with what its intervals need: the Jacobian at
    /// the point it ends on (and, in `calibrate::fit`, each discrete
    /// parameter's fits one choice either way). A fit whose values alone are
    /// used (a cross-validation's) skips them; its values are the same.
    pub intervals: bool,
}

impl Default for LmSettings {
    fn default() -> Self {
        LmSettings {
            max_iterations: 30,
            step: 0.02,
            tolerance: 1e-4,
            search_evaluations: 400,
            search_precision_pct: None,
            global: true,
            pair_moves: true,
            fine_scans: true,
            intervals: true,
        }
    }
}

/// The phases of a fit (see [`compass`] and [`minimise`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The search's starting point.
    Start,
    /// The coordinate scans over each parameter's range.
    Scans,
    /// The compass and its pattern moves.
    Compass,
    /// Moves of two parameters at once.
    PairMoves,
    /// The 17-point scans when the compass stalls.
    FineScans,
    /// The Levenberg-Marquardt polish, its Jacobians included.
    Polish,
}

impl Phase {
    /// Every phase, in the order a fit first runs them.
    pub const ALL: [Phase; 6] = [
        Phase::Start,
        Phase::Scans,
        Phase::Compass,
        Phase::PairMoves,
        Phase::FineScans,
        Phase::Polish,
    ];

    /// The phase in words.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Start => "start",
            Phase::Scans => "scans",
            Phase::Compass => "compass",
            Phase::PairMoves => "pair moves",
            Phase::FineScans => "fine scans",
            Phase::Polish => "polish",
        }
    }
}

/// Model evaluations a fit spent, by phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent([u32; Phase::ALL.len()]);

impl Spent {
    /// `n` evaluations more in `phase`.
    pub fn add(&mut self, phase: Phase, n: u32) {
        self.0[phase as usize] += n;
    }

    /// The evaluations of `phase`.
    pub fn of(&self, phase: Phase) -> u32 {
        self.0[phase as usize]
    }

    /// Every evaluation.
    pub fn total(&self) -> u32 {
        self.0.iter().sum()
    }

    /// Each phase's evaluations in words: "start 1, scans 89, ...".
    pub fn text(&self) -> String {
        Phase::ALL
            .iter()
            .map(|p| format!("{} {}", p.name(), self.of(*p)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl std::ops::AddAssign for Spent {
    fn add_assign(&mut self, other: Spent) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }
}

/// Derivative-free search over `[0, 1]^k`, in two phases. First, coordinate
/// scans: each parameter in turn is tried at every point of a grid (nine
/// points, or every choice of a discrete parameter) and moved to the best,
/// twice over all parameters; this looks across the whole range, so a
/// parameter that matters only far from its start is found. Then a compass
/// search: each parameter up and down by a step that halves when no move
/// helps, from 1/16 to 1/256, each sweep that moved followed by a pattern move
/// along the sweep's net displacement; when it stalls, and if `s.pair_moves`,
/// moves of two continuous parameters at once, and the compass again after
/// any that helps; when that stalls too, and if `s.fine_scans`, one more
/// scan of each continuous parameter over a 17-point grid (the others now
/// settled), and the compass again if it helped. Without pair moves, a
/// valley along a diagonal is left to the Levenberg-Marquardt polish that
/// follows the search in [`minimise`], whose steps move every parameter at
/// once.
/// A discrete parameter (`min_step[p] > 0`, the
/// scaled distance between its choices) always moves by at least one choice.
/// A point already evaluated is not evaluated again, and the search stops
/// when `s.search_evaluations` evaluations are spent. Returns the point, its residuals and
/// the evaluations used, by phase.
///
/// Without `s.global` (a refit from a previous fit's values), the search skips
/// both grid scans and starts its compass at a step of [`LOCAL_FIRST_STEP`]:
/// it finds the minimum near where it starts, not one across the range.
///
/// `f` evaluates a batch of points at once (see [`Batch`]): the points of a
/// scan, the two directions of a compass move, the four signs of a pair move
/// are independent and are handed over together, so that their simulations
/// share the cores; the search then takes them in the order a one-at-a-time
/// search would, so the path does not depend on the batching (a direction a
/// one-at-a-time search would not have tried is evaluated, and counted, all
/// the same).
pub fn compass<F>(
    f: &mut F,
    u0: &[f64],
    min_step: &[f64],
    s: LmSettings,
) -> Result<(Vec<f64>, Vec<f64>, Spent)>
where
    F: Batch,
{
    let LmSettings {
        search_evaluations: budget,
        global,
        pair_moves,
        fine_scans,
        ..
    } = s;
    let u: Vec<f64> = u0.iter().map(|x| x.clamp(0.0, 1.0)).collect();
    let r = eval_one(f, &u)?;
    let mut spent = Spent::default();
    spent.add(Phase::Start, 1);
    let mut st = Search {
        c: cost(&r),
        seen: HashSet::from([key(&u)]),
        u,
        r,
        spent,
        phase: Phase::Scans,
        fine_scanned: !(global && fine_scans),
        local: !global,
    };
    // A local search has no range scans, and its fine scan counts as done
    // (as a global search's without `fine_scans`).
    let sweeps = if global { 2 } else { 0 };
    for _sweep in 0..sweeps {
        for p in 0..st.u.len() {
            let m = min_step.get(p).copied().unwrap_or(0.0);
            let points = if m > 0.0 {
                (1.0 / m).round() as usize
            } else {
                8
            };
            if !st.scan(f, p, points, budget)? {
                return Ok((st.u, st.r, st.spent));
            }
        }
    }
    let first_step = if global { 1.0 / 16.0 } else { LOCAL_FIRST_STEP };
    let mut first = first_step;
    loop {
        st.compass_phase(f, min_step, first, budget)?;
        if pair_moves && st.pair_phase(f, min_step, budget)? {
            first = first_step / 2.0;
            continue;
        }
        // Stalled: scan each continuous parameter again over a grid twice as
        // fine, now that the others have settled; a better valley of one
        // parameter, hidden while the others were far off, is found this way.
        if !st.fine_scan(f, min_step, budget)? {
            break;
        }
        first = first_step / 2.0;
    }
    Ok((st.u, st.r, st.spent))
}

/// The first compass step of a local search (scaled units): a refit expects
/// its parameters to move by a few percent of their range, not across it.
pub const LOCAL_FIRST_STEP: f64 = 1.0 / 64.0;

fn key(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Residuals of a batch of points, in their order. Implemented by any
/// `FnMut(&[Vec<f64>]) -> Result<Vec<Vec<f64>>>`; [`one_at_a_time`] makes one
/// from a function of one point.
pub trait Batch {
    /// The residuals at each of `points`.
    fn eval(&mut self, points: &[Vec<f64>]) -> Result<Vec<Vec<f64>>>;

    /// The residuals at each of `points`, or None for a point found to have
    /// a sum of squares of at least `limit`, that of `best` (where the
    /// search stands, evaluated before), before all its residuals were
    /// known: the search needs only the points better than `best`. By
    /// default every point is evaluated in full.
    fn eval_below(
        &mut self,
        points: &[Vec<f64>],
        best: &[f64],
        limit: f64,
    ) -> Result<Vec<Option<Vec<f64>>>> {
        let _ = (best, limit);
        Ok(self.eval(points)?.into_iter().map(Some).collect())
    }
}

/// A [`Batch`] from two functions: `all` gives every residual of each point,
/// `below` may give up a point whose sum of squares reaches the limit (see
/// [`Batch::eval_below`]).
pub struct Bounded<A, B> {
    /// The residuals at each point.
    pub all: A,
    /// The residuals at each point, or None for one given up.
    pub below: B,
}

impl<A, B> Batch for Bounded<A, B>
where
    A: FnMut(&[Vec<f64>]) -> Result<Vec<Vec<f64>>>,
    B: FnMut(&[Vec<f64>], &[f64], f64) -> Result<Vec<Option<Vec<f64>>>>,
{
    fn eval(&mut self, points: &[Vec<f64>]) -> Result<Vec<Vec<f64>>> {
        (self.all)(points)
    }

    fn eval_below(
        &mut self,
        points: &[Vec<f64>],
        best: &[f64],
        limit: f64,
    ) -> Result<Vec<Option<Vec<f64>>>> {
        (self.below)(points, best, limit)
    }
}

impl<F> Batch for F
where
    F: FnMut(&[Vec<f64>]) -> Result<Vec<Vec<f64>>>,
{
    fn eval(&mut self, points: &[Vec<f64>]) -> Result<Vec<Vec<f64>>> {
        self(points)
    }
}

/// A batch function from a function of one point (evaluated in turn).
pub fn one_at_a_time<G>(mut g: G) -> impl FnMut(&[Vec<f64>]) -> Result<Vec<Vec<f64>>>
where
    G: FnMut(&[f64]) -> Result<Vec<f64>>,
{
    move |points: &[Vec<f64>]| points.iter().map(|p| g(p)).collect()
}

/// The residuals at one point.
fn eval_one<F: Batch>(f: &mut F, u: &[f64]) -> Result<Vec<f64>> {
    f.eval(&[u.to_vec()])?
        .pop()
        .ok_or_else(|| crate::Error::Internal("a batch evaluation returned nothing".into()))
}

/// The state of a derivative-free search: the best point so far.
struct Search {
    u: Vec<f64>,
    r: Vec<f64>,
    c: f64,
    /// Evaluations so far, by phase.
    spent: Spent,
    /// The phase now running.
    phase: Phase,
    seen: HashSet<Vec<u64>>,
    fine_scanned: bool,
    /// A local search (see [`compass`]'s `global`).
    local: bool,
}

impl Search {
    /// Compass search from step `first` down to 1/256: each parameter up and
    /// down, the step halving when no move helps, each sweep that moved
    /// followed by a pattern move along its net displacement.
    fn compass_phase<F>(
        &mut self,
        f: &mut F,
        min_step: &[f64],
        first: f64,
        budget: u32,
    ) -> Result<()>
    where
        F: Batch,
    {
        self.phase = Phase::Compass;
        let mut step = first;
        while step >= 1.0 / 256.0 && self.spent.total() < budget {
            let base = self.u.clone();
            let mut moved = false;
            for p in 0..self.u.len() {
                let h = step.max(min_step.get(p).copied().unwrap_or(0.0));
                let points: Vec<Vec<f64>> = [1.0, -1.0]
                    .iter()
                    .map(|dir| {
                        let mut v = self.u.clone();
                        v[p] = (v[p] + dir * h).clamp(0.0, 1.0);
                        v
                    })
                    .collect();
                if self.try_points(f, points, budget, true)? {
                    moved = true;
                }
            }
            if moved {
                // Pattern move (Hooke-Jeeves): go on in the direction the
                // sweep went, which follows a valley across parameters.
                let v: Vec<f64> = self
                    .u
                    .iter()
                    .zip(&base)
                    .map(|(a, b)| (2.0 * a - b).clamp(0.0, 1.0))
                    .collect();
                self.try_points(f, vec![v], budget, true)?;
            } else {
                step /= 2.0;
            }
        }
        Ok(())
    }

    /// Moves two continuous parameters at once (every pair, every sign, steps
    /// 1/16 to 1/64, or 1/64 and 1/128 in a local search): a valley along a
    /// diagonal, where no single parameter can move alone, is left this way.
    /// True when it moved.
    fn pair_phase<F>(&mut self, f: &mut F, min_step: &[f64], budget: u32) -> Result<bool>
    where
        F: Batch,
    {
        self.phase = Phase::PairMoves;
        let steps: &[f64] = if self.local {
            &[LOCAL_FIRST_STEP, LOCAL_FIRST_STEP / 2.0]
        } else {
            &[1.0 / 16.0, 1.0 / 32.0, 1.0 / 64.0]
        };
        let cont: Vec<usize> = (0..self.u.len())
            .filter(|&p| min_step.get(p).copied().unwrap_or(0.0) == 0.0)
            .collect();
        for &step in steps {
            for (i, &p) in cont.iter().enumerate() {
                for &q in &cont[i + 1..] {
                    if self.spent.total() >= budget {
                        return Ok(false);
                    }
                    let points: Vec<Vec<f64>> =
                        [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)]
                            .iter()
                            .map(|(dp, dq)| {
                                let mut v = self.u.clone();
                                v[p] = (v[p] + dp * step).clamp(0.0, 1.0);
                                v[q] = (v[q] + dq * step).clamp(0.0, 1.0);
                                v
                            })
                            .collect();
                    if self.try_points(f, points, budget, true)? {
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }

    /// Each continuous parameter in turn at every point of a 17-point grid;
    /// true when it moved. Each parameter is scanned at most once per search.
    fn fine_scan<F>(&mut self, f: &mut F, min_step: &[f64], budget: u32) -> Result<bool>
    where
        F: Batch,
    {
        if self.fine_scanned {
            return Ok(false);
        }
        self.fine_scanned = true;
        self.phase = Phase::FineScans;
        let mut moved = false;
        for p in 0..self.u.len() {
            if min_step.get(p).copied().unwrap_or(0.0) > 0.0 {
                continue;
            }
            let before = self.c;
            let within = self.scan(f, p, 16, budget)?;
            moved |= self.c < before;
            if !within {
                return Ok(moved);
            }
        }
        Ok(moved)
    }

    /// Tries parameter `p` at every point of a grid of `points` intervals,
    /// moving to the best; false when the budget ran out.
    fn scan<F>(&mut self, f: &mut F, p: usize, points: usize, budget: u32) -> Result<bool>
    where
        F: Batch,
    {
        let grid: Vec<Vec<f64>> = (0..=points)
            .map(|i| {
                let mut v = self.u.clone();
                v[p] = i as f64 / points as f64;
                v
            })
            .collect();
        self.try_points(f, grid, budget, false)?;
        Ok(self.spent.total() < budget)
    }

    /// Evaluates together those of `points` not evaluated before (as many as
    /// the budget allows), then takes them in order, moving to the first
    /// that is better than where the search stands and, unless `first_only`,
    /// on to any later one better still: the moves a one-at-a-time search
    /// would make (a grid moves to its best point; alternatives stop at the
    /// first that helps). True when it moved.
    fn try_points<F>(
        &mut self,
        f: &mut F,
        points: Vec<Vec<f64>>,
        budget: u32,
        first_only: bool,
    ) -> Result<bool>
    where
        F: Batch,
    {
        let mut fresh = Vec::new();
        for v in points {
            if self.spent.total() + fresh.len() as u32 >= budget {
                break;
            }
            if self.seen.insert(key(&v)) {
                fresh.push(v);
            }
        }
        if fresh.is_empty() {
            return Ok(false);
        }
        // A point costing at least where the search stands is never moved
        // to (the search's cost only falls as it takes the points in
        // order), so its evaluation may stop as soon as that is known.
        let rs = f.eval_below(&fresh, &self.u, self.c)?;
        self.spent.add(self.phase, fresh.len() as u32);
        let mut moved = false;
        for (v, rv) in fresh.into_iter().zip(rs) {
            let Some(rv) = rv else { continue };
            let cv = cost(&rv);
            if cv < self.c {
                self.u = v;
                self.r = rv;
                self.c = cv;
                moved = true;
                if first_only {
                    break;
                }
            }
        }
        Ok(moved)
    }
}

/// Where a fit ended.
#[derive(Debug, Clone)]
pub struct LmOutcome {
    /// Scaled parameters.
    pub u: Vec<f64>,
    /// Residuals there.
    pub residuals: Vec<f64>,
    /// Jacobian there (residual by scaled parameter); empty when the
    /// settings ask for no intervals and the polish ended on a point it
    /// had not computed one at.
    pub jacobian: Vec<Vec<f64>>,
    /// Iterations done.
    pub iterations: u32,
    /// Residual evaluations done, by phase (without a search, the start
    /// counts as the polish's).
    pub spent: Spent,
}

fn cost(r: &[f64]) -> f64 {
    r.iter().map(|x| x * x).sum()
}

/// Of a search's `end` and its `start`, the one with the smaller sum of
/// squared residuals under `f` (both evaluated as one batch; `end` on a
/// tie). A search that judged its points at a coarse precision may end
/// where the fine precision finds it worse than where it began; the polish
/// starts from the better of the two, so that a fit never ends worse than
/// its start.
pub fn better_of<F: Batch>(f: &mut F, end: Vec<f64>, start: &[f64]) -> Result<Vec<f64>> {
    let r = f.eval(&[end.clone(), start.to_vec()])?;
    match (r.first(), r.get(1)) {
        (Some(a), Some(b)) if cost(b) < cost(a) => Ok(start.to_vec()),
        (Some(_), Some(_)) => Ok(end),
        _ => Err(crate::Error::Internal(
            "a batch evaluation returned too few points".into(),
        )),
    }
}

/// Forward-difference Jacobian at `u` (backward where the box ends), its
/// columns evaluated as one batch. The
/// columns of discrete parameters (`min_step[p] > 0`) are zero: the
/// Levenberg-Marquardt polish leaves them where the compass search put them.
pub fn jacobian<F>(
    f: &mut F,
    u: &[f64],
    r0: &[f64],
    step: f64,
    min_step: &[f64],
    evals: &mut u32,
) -> Result<Vec<Vec<f64>>>
where
    F: Batch,
{
    let k = u.len();
    let mut j = vec![vec![0.0; k]; r0.len()];
    let cols: Vec<(usize, f64)> = (0..k)
        .filter(|&p| !min_step.get(p).is_some_and(|m| *m > 0.0))
        .map(|p| (p, if u[p] + step <= 1.0 { step } else { -step }))
        .collect();
    let points: Vec<Vec<f64>> = cols
        .iter()
        .map(|&(p, h)| {
            let mut v = u.to_vec();
            v[p] += h;
            v
        })
        .collect();
    let rs = f.eval(&points)?;
    *evals += points.len() as u32;
    for (&(p, h), r) in cols.iter().zip(&rs) {
        for (i, row) in j.iter_mut().enumerate() {
            row[p] = (r[i] - r0[i]) / h;
        }
    }
    Ok(j)
}

/// The Jacobian at the point a polish ends on, which only the intervals
/// read: none (empty) when `s` asks for no intervals.
fn final_jacobian<F: Batch>(
    f: &mut F,
    u: &[f64],
    r: &[f64],
    s: LmSettings,
    min_step: &[f64],
    evals: &mut u32,
) -> Result<Vec<Vec<f64>>> {
    if s.intervals {
        jacobian(f, u, r, s.step, min_step, evals)
    } else {
        Ok(Vec::new())
    }
}

/// Minimises the sum of squared residuals of `f` over `[0, 1]^k` from `u0`.
/// `min_step` marks discrete parameters (see [`compass`]); it may be empty.
/// `progress` is told (iteration, cost) after each iteration.
pub fn minimise<F, P>(
    mut f: F,
    u0: &[f64],
    min_step: &[f64],
    s: LmSettings,
    mut progress: P,
) -> Result<LmOutcome>
where
    F: Batch,
    P: FnMut(u32, f64),
{
    let k = u0.len();
    // The polish's evaluations; the search's are in `searched`.
    let mut evals = 0;
    let (mut u, mut r, searched) = if s.search_evaluations > 0 {
        compass(&mut f, u0, min_step, s)?
    } else {
        let u: Vec<f64> = u0.iter().map(|x| x.clamp(0.0, 1.0)).collect();
        let r = eval_one(&mut f, &u)?;
        evals += 1;
        (u, r, Spent::default())
    };
    let spent = |polish: u32| {
        let mut all = searched;
        all.add(Phase::Polish, polish);
        all
    };
    let mut c = cost(&r);
    let mut lambda = 1e-2;
    let mut j = jacobian(&mut f, &u, &r, s.step, min_step, &mut evals)?;
    let mut it = 0;
    while it < s.max_iterations {
        it += 1;
        // Marquardt's scaling: the damping of each parameter grows with the
        // squared norm of its Jacobian column (the diagonal of JᵀJ, never
        // formed as a matrix); the step is the least-squares solution of the
        // augmented Jacobian, by SVD.
        let col2: Vec<f64> = (0..k)
            .map(|p| j.iter().map(|row| row[p] * row[p]).sum())
            .collect();
        let mut accepted = false;
        for _ in 0..8 {
            let damping: Vec<f64> = col2.iter().map(|c| lambda * c.max(1e-9) + 1e-12).collect();
            let Some(d) = damped_step(&j, &r, &damping) else {
                lambda *= 10.0;
                continue;
            };
            let un: Vec<f64> = u
                .iter()
                .zip(&d)
                .map(|(a, b)| (a + b).clamp(0.0, 1.0))
                .collect();
            if un.iter().zip(&u).all(|(a, b)| (a - b).abs() < 1e-9) {
                break;
            }
            // A try costing at least `c` is refused, so its evaluation may
            // stop as soon as that is known.
            let tried = f.eval_below(std::slice::from_ref(&un), &u, c)?;
            evals += 1;
            let Some(rn) = tried.into_iter().next().flatten() else {
                lambda *= 4.0;
                continue;
            };
            let cn = cost(&rn);
            if cn < c {
                let rel = (c - cn) / c.max(1e-300);
                u = un;
                r = rn;
                c = cn;
                lambda = (lambda / 3.0).max(1e-7);
                accepted = true;
                progress(it, c);
                if rel < s.tolerance {
                    j = final_jacobian(&mut f, &u, &r, s, min_step, &mut evals)?;
                    return Ok(LmOutcome {
                        u,
                        residuals: r,
                        jacobian: j,
                        iterations: it,
                        spent: spent(evals),
                    });
                }
                break;
            }
            lambda *= 4.0;
        }
        if !accepted {
            break;
        }
        j = if it < s.max_iterations {
            jacobian(&mut f, &u, &r, s.step, min_step, &mut evals)?
        } else {
            final_jacobian(&mut f, &u, &r, s, min_step, &mut evals)?
        };
    }
    Ok(LmOutcome {
        u,
        residuals: r,
        jacobian: j,
        iterations: it,
        spent: spent(evals),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `u` within 1e-3 of `want` in every coordinate.
    fn assert_near(u: &[f64], want: &[f64]) {
        assert!(
            u.len() == want.len() && u.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-3),
            "{u:?}, not {want:?}"
        );
    }

    /// A search of `budget` evaluations, global or local, with pair moves
    /// and fine scans.
    fn search(budget: u32, global: bool) -> LmSettings {
        LmSettings {
            search_evaluations: budget,
            global,
            pair_moves: true,
            fine_scans: true,
            ..LmSettings::default()
        }
    }

    #[test]
    fn fits_a_curve_inside_the_box() {
        // r_i = a * x_i + b - y_i with a = 0.3, b = 0.7 in scaled units.
        let xs = [0.0, 1.0, 2.0, 3.0];
        let f = |u: &[f64]| -> Result<Vec<f64>> {
            Ok(xs
                .iter()
                .map(|x| u[0] * x + u[1] - (0.3 * x + 0.7))
                .collect())
        };
        let out = minimise(
            one_at_a_time(f),
            &[0.5, 0.5],
            &[],
            LmSettings::default(),
            |_, _| {},
        )
        .expect("no model error");
        assert_near(&out.u, &[0.3, 0.7]);
    }

    #[test]
    fn a_fit_without_intervals_ends_on_the_same_point_without_the_last_jacobian() {
        // Figures that no point fits exactly: the cost's decrease falls
        // below the tolerance while steps are still accepted.
        let f = |u: &[f64]| -> Result<Vec<f64>> {
            Ok(vec![u[0] - 0.3, u[0] - 0.5, u[1] * u[1] - 0.36])
        };
        // Ended by the iteration bound (1), then by the tolerance (at the
        // fourth iteration).
        for max_iterations in [1, 30] {
            let run = |intervals: bool| {
                let s = LmSettings {
                    max_iterations,
                    search_evaluations: 0,
                    intervals,
                    ..LmSettings::default()
                };
                minimise(one_at_a_time(f), &[0.9, 0.9], &[], s, |_, _| {}).expect("no model error")
            };
            let (with, without) = (run(true), run(false));
            assert_eq!(with.u, without.u, "at most {max_iterations}");
            assert_eq!(with.residuals, without.residuals);
            assert_eq!(with.jacobian.len(), 3);
            assert!(without.jacobian.is_empty(), "at most {max_iterations}");
            // One evaluation per parameter fewer: the last Jacobian's.
            assert_eq!(
                with.spent.total(),
                without.spent.total() + 2,
                "at most {max_iterations}"
            );
        }
    }

    #[test]
    fn the_compass_search_finds_a_minimum_of_a_flat_stepped_cost() {
        // A staircase: no useful gradient, a clear minimum near 0.6.
        let mut f =
            |u: &[f64]| -> Result<Vec<f64>> { Ok(vec![((u[0] * 20.0).floor() / 20.0 - 0.6)]) };
        let (u, r, _) = compass(&mut one_at_a_time(&mut f), &[0.1], &[], search(400, true))
            .expect("no model error");
        assert!(r[0].abs() < 1e-9 && (u[0] - 0.6).abs() < 0.05, "{u:?}");
    }

    #[test]
    fn a_local_search_stays_in_the_valley_it_starts_in_and_costs_less() {
        // Two valleys: a shallow one at 0.2 (cost 0.01) and a deep one at 0.8
        // (cost 0); from 0.23 the global search finds the deep one, the local
        // one the minimum of its own valley, in fewer evaluations.
        let mut f = |u: &[f64]| -> Result<Vec<f64>> {
            let x = u[0];
            Ok(vec![((x - 0.2).abs() + 0.1).min((x - 0.8).abs())])
        };
        let (far, _, global_evals) =
            compass(&mut one_at_a_time(&mut f), &[0.23], &[], search(400, true))
                .expect("no model error");
        let (near, r, local_evals) =
            compass(&mut one_at_a_time(&mut f), &[0.23], &[], search(400, false))
                .expect("no model error");
        assert!((far[0] - 0.8).abs() < 0.01, "global: {far:?}");
        assert!(
            (near[0] - 0.2).abs() < 0.01 && (r[0] - 0.1).abs() < 0.01,
            "local: {near:?}"
        );
        assert!(
            local_evals.total() < global_evals.total(),
            "{local_evals:?} >= {global_evals:?}"
        );
    }

    #[test]
    fn a_discrete_parameter_moves_a_whole_choice_at_a_time() {
        // Five choices (0, 0.25, ..., 1); the cost is lowest at the fourth.
        let mut f = |u: &[f64]| -> Result<Vec<f64>> { Ok(vec![u[0] - 0.75]) };
        let (u, r, evals) = compass(
            &mut one_at_a_time(&mut f),
            &[0.0],
            &[0.25],
            search(400, true),
        )
        .expect("no model error");
        assert!(r[0].abs() < 1e-12 && (u[0] - 0.75).abs() < 1e-12, "{u:?}");
        assert!(evals.total() <= 5, "{evals:?}: points were evaluated twice");
    }

    /// A shallow bowl at 0.3, and a deeper well of half-width 0.02 at 13/16:
    /// the nine-point grid (multiples of 1/8) misses the well, and the
    /// compass from 0.3 never gets there.
    fn narrow_well(u: &[f64]) -> Result<Vec<f64>> {
        let well = 13.0 / 16.0;
        Ok(vec![if (u[0] - well).abs() < 0.02 {
            u[0] - well
        } else {
            0.1 + (u[0] - 0.3).abs()
        }])
    }

    #[test]
    fn the_fine_scan_finds_a_narrow_well_between_the_coarse_grid_points() {
        let (u, r, spent) = compass(
            &mut one_at_a_time(narrow_well),
            &[0.3],
            &[],
            search(400, true),
        )
        .expect("no model error");
        assert!(
            r[0].abs() < 1e-9 && (u[0] - 13.0 / 16.0).abs() < 1e-9,
            "{u:?} {r:?}"
        );
        assert!(spent.of(Phase::FineScans) > 0, "{spent:?}");
    }

    #[test]
    fn without_fine_scans_the_search_stays_in_the_coarse_grid_s_valley() {
        let settings = LmSettings {
            fine_scans: false,
            ..search(400, true)
        };
        let (u, _, spent) = compass(&mut one_at_a_time(narrow_well), &[0.3], &[], settings)
            .expect("no model error");
        assert!((u[0] - 0.3).abs() < 1e-9, "{u:?}");
        assert_eq!(spent.of(Phase::FineScans), 0, "{spent:?}");
    }

    #[test]
    fn the_scan_finds_a_narrow_well_far_from_the_start() {
        // Flat everywhere but near 0.875: a local search from 0.1 sees nothing.
        let mut f = |u: &[f64]| -> Result<Vec<f64>> {
            Ok(vec![if (u[0] - 0.875).abs() < 0.05 {
                u[0] - 0.875
            } else {
                1.0
            }])
        };
        let (u, r, _) = compass(&mut one_at_a_time(&mut f), &[0.1], &[], search(400, true))
            .expect("no model error");
        assert!(r[0].abs() < 1e-3 && (u[0] - 0.875).abs() < 1e-3, "{u:?}");
    }

    /// A batch that gives up (None) every point whose sum of squares
    /// reaches the limit, as a calibration does once the experiments it has
    /// heard add up to it: the search and the polish take the same path, for
    /// the same evaluations, as with every point evaluated in full.
    #[test]
    fn giving_up_the_points_no_better_than_the_best_changes_no_step() {
        let given_up = std::cell::Cell::new(0);
        let below = |points: &[Vec<f64>], _: &[f64], limit: f64| -> Result<Vec<Option<Vec<f64>>>> {
            points
                .iter()
                .map(|u| {
                    let r = diagonal_valley(u)?;
                    if cost(&r) >= limit {
                        given_up.set(given_up.get() + 1);
                        return Ok(None);
                    }
                    Ok(Some(r))
                })
                .collect()
        };
        let settings = search(300, true);
        let full = minimise(
            one_at_a_time(diagonal_valley),
            &[0.1, 0.9],
            &[],
            settings,
            |_, _| {},
        )
        .expect("no model error");
        let bounded = Bounded {
            all: one_at_a_time(diagonal_valley),
            below,
        };
        let cut = minimise(bounded, &[0.1, 0.9], &[], settings, |_, _| {}).expect("no model error");
        assert_eq!(cut.u, full.u);
        assert_eq!(cut.residuals, full.residuals);
        assert_eq!(cut.spent, full.spent);
        assert!(given_up.get() > 10, "{} points given up", given_up.get());
    }

    /// Steep across the diagonal u0 = u1, shallow along it to (0.6, 0.6).
    fn diagonal_valley(u: &[f64]) -> Result<Vec<f64>> {
        Ok(vec![10.0 * (u[0] - u[1]), u[0] + u[1] - 1.2])
    }

    #[test]
    fn a_diagonal_valley_is_followed_where_no_single_parameter_can_move() {
        let (u, _, _) = compass(
            &mut one_at_a_time(diagonal_valley),
            &[0.3, 0.3],
            &[],
            search(2000, true),
        )
        .expect("no model error");
        assert!(
            (u[0] - 0.6).abs() < 0.01 && (u[1] - 0.6).abs() < 0.01,
            "{u:?}"
        );
    }

    #[test]
    fn without_pair_moves_the_polish_follows_a_diagonal_valley_the_compass_cannot() {
        // The compass alone stalls on the diagonal short of (0.6, 0.6); the
        // search and polish together get there, on fewer evaluations than
        // the search with pair moves spends.
        let valley = diagonal_valley;
        let no_pairs = LmSettings {
            pair_moves: false,
            ..search(2000, true)
        };
        let (stalled, _, searched) =
            compass(&mut one_at_a_time(valley), &[0.3, 0.3], &[], no_pairs)
                .expect("no model error");
        assert!((stalled[0] - 0.6).abs() > 0.01, "{stalled:?}");
        let (_, _, with_pairs) = compass(
            &mut one_at_a_time(valley),
            &[0.3, 0.3],
            &[],
            search(2000, true),
        )
        .expect("no model error");
        assert!(
            searched.total() < with_pairs.total(),
            "{searched:?} >= {with_pairs:?}"
        );
        assert_eq!(searched.of(Phase::PairMoves), 0);
        assert!(with_pairs.of(Phase::PairMoves) > 0, "{with_pairs:?}");
        let settings = LmSettings {
            search_evaluations: 2000,
            pair_moves: false,
            ..LmSettings::default()
        };
        let out = minimise(one_at_a_time(valley), &[0.3, 0.3], &[], settings, |_, _| {})
            .expect("no model error");
        assert_near(&out.u, &[0.6, 0.6]);
    }

    #[test]
    fn the_evaluations_by_phase_add_up_to_the_evaluations_made() {
        // A bowl at (0.3, 0.7): every phase of a global search runs, then
        // the polish; each evaluation is counted once, in its phase.
        let made = std::cell::Cell::new(0u32);
        let bowl = |u: &[f64]| -> Result<Vec<f64>> {
            made.set(made.get() + 1);
            Ok(vec![u[0] - 0.3, u[1] - 0.7])
        };
        let settings = LmSettings {
            search_evaluations: 2000,
            ..LmSettings::default()
        };
        let out = minimise(one_at_a_time(bowl), &[0.9, 0.1], &[], settings, |_, _| {})
            .expect("no model error");
        let spent = out.spent;
        assert_eq!(spent.total(), made.get(), "{spent:?}");
        assert_eq!(spent.of(Phase::Start), 1);
        for phase in [
            Phase::Scans,
            Phase::Compass,
            Phase::PairMoves,
            Phase::FineScans,
            Phase::Polish,
        ] {
            assert!(spent.of(phase) > 0, "{phase:?} in {spent:?}");
        }
        assert!(
            spent.text().starts_with("start 1, scans "),
            "{}",
            spent.text()
        );
    }

    #[test]
    fn an_optimum_outside_the_box_ends_on_the_bound() {
        let f = |u: &[f64]| -> Result<Vec<f64>> { Ok(vec![u[0] - 1.5]) };
        let out = minimise(
            one_at_a_time(f),
            &[0.2],
            &[],
            LmSettings::default(),
            |_, _| {},
        )
        .expect("no model error");
        assert!((out.u[0] - 1.0).abs() < 1e-9, "{:?}", out.u);
    }

    #[test]
    fn the_polish_starts_from_the_better_of_the_search_end_and_its_start() {
        // At the fine precision, the end a coarse search chose is worse.
        let mut fine = |us: &[Vec<f64>]| -> Result<Vec<Vec<f64>>> {
            Ok(us.iter().map(|u| vec![u[0] - 0.2]).collect())
        };
        assert_eq!(
            better_of(&mut fine, vec![0.5], &[0.25]).unwrap(),
            vec![0.25]
        );
        assert_eq!(
            better_of(&mut fine, vec![0.21], &[0.25]).unwrap(),
            vec![0.21]
        );
        // A tie keeps the end.
        assert_eq!(better_of(&mut fine, vec![0.0], &[0.4]).unwrap(), vec![0.0]);
    }
}
