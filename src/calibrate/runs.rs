//! What the fit knows of its experiments without running them: which free
//! parameters change each experiment's assembled configuration
//! ([`relevant_params`]), and which figures come from one simulated run
//! ([`folds`], the cross-validation's folds).

use std::collections::HashMap;

use crate::model::{FreeParam, Registry, Scenario};

/// Per experiment of `scenarios` (in scenario then file order), the free
/// parameters (indices into `free`) that change its assembled configuration:
/// those whose lowest and highest values (or first and last choices), the
/// others at mid-range, give another configuration fingerprint
/// (`SystemCfg::fingerprint`: what its work reads); the others stay at
/// their mid-range values, exactly. An experiment that
/// cannot be assembled at a bound counts every parameter. Assembly only: no
/// simulation.
pub fn relevant_params(
    reg: &Registry,
    scenarios: &[Scenario],
    free: &[FreeParam],
) -> Vec<Vec<usize>> {
    let exps: Vec<&crate::model::Experiment> = scenarios
        .iter()
        .flat_map(|sc| sc.experiments.iter())
        .collect();
    let at = |x: &[f64]| {
        let mut r = reg.clone();
        for (p, v) in free.iter().zip(x) {
            for path in p.paths() {
                r.set_param(path, *v);
            }
        }
        r
    };
    let describe = |reg: &Registry| -> Vec<Option<String>> {
        exps.iter()
            .map(|e| {
                crate::sim::config::assemble(reg, e)
                    .ok()
                    .map(|c| c.fingerprint())
            })
            .collect()
    };
    let mid = unscale_in(free, &vec![0.5; free.len()]);
    let base = describe(&at(&mid));
    let mut relevant = vec![Vec::new(); exps.len()];
    for p in 0..free.len() {
        let mut changed = vec![false; exps.len()];
        for end in [0.0, 1.0] {
            // Only parameter p moves, in base units: a round trip through
            // the scaled values would move the others by a rounding error,
            // and an experiment that reads them would seem to read p.
            let mut x = mid.clone();
            x[p] = unscale_in(&free[p..=p], &[end])[0];
            let other = describe(&at(&x));
            for (i, (a, b)) in base.iter().zip(&other).enumerate() {
                changed[i] |= a.is_none() || b.is_none() || a != b;
            }
        }
        for (i, c) in changed.iter().enumerate() {
            if *c {
                relevant[i].push(p);
            }
        }
    }
    relevant
}

/// Base-unit values of `free` from scaled ones (see `Problem::unscale`).
pub(super) fn unscale_in(free: &[FreeParam], u: &[f64]) -> Vec<f64> {
    free.iter()
        .zip(u)
        .map(|(p, u)| {
            if p.is_discrete() {
                let last = p.choices.len() - 1;
                p.choices[((u.clamp(0.0, 1.0) * last as f64).round() as usize).min(last)]
            } else {
                p.at_scaled(*u)
            }
        })
        .collect()
}

/// Scaled values of `free` from base-unit ones (see `Problem::scale`).
pub(super) fn scale_in(free: &[FreeParam], x: &[f64]) -> Vec<f64> {
    free.iter()
        .zip(x)
        .map(|(p, x)| {
            if p.is_discrete() {
                let nearest = p
                    .choices
                    .iter()
                    .enumerate()
                    .min_by(|a, b| (a.1 - x).abs().total_cmp(&(b.1 - x).abs()))
                    .map_or(0, |(i, _)| i);
                nearest as f64 / (p.choices.len() - 1) as f64
            } else {
                p.scaled(*x)
            }
        })
        .collect()
}

/// The cross-validation fold of every figure of `scenarios` (by id): the
/// figures of one paper figure or table (`group_of`: paper and figure), joined with every
/// other figure of one simulated run: the figures of one experiment (a
/// table's total with its ports, a CPU stated in the text beside its
/// table) and those of experiments that simulate the same setup (Matrox
/// Table 3, TTCP, is Table 2's run). A fold is named by its paper and its
/// figures or tables (`paper Table 2 + Table 3`).
pub fn folds(scenarios: &[Scenario]) -> HashMap<String, String> {
    // Per figure: (id, paper, its figure or table, its run).
    let mut figs: Vec<(String, String, String, usize)> = Vec::new();
    let mut runs: Vec<String> = Vec::new();
    for sc in scenarios {
        for e in &sc.experiments {
            let setup = crate::validate::experiment_seed(0, e).to_string();
            let run = runs.iter().position(|r| *r == setup).unwrap_or_else(|| {
                runs.push(setup);
                runs.len() - 1
            });
            for f in &e.figures {
                figs.push((
                    f.id.clone(),
                    sc.source.clone(),
                    crate::validate::figure_of(&f.source),
                    run,
                ));
            }
        }
    }
    // Union-find over the figures: same paper figure, same run.
    let mut parent: Vec<usize> = (0..figs.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for i in 0..figs.len() {
        for j in 0..i {
            let same_figure = figs[i].1 == figs[j].1 && figs[i].2 == figs[j].2;
            if same_figure || figs[i].3 == figs[j].3 {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut names: HashMap<usize, (String, Vec<String>)> = HashMap::new();
    for i in 0..figs.len() {
        let r = root(&mut parent, i);
        let entry = names
            .entry(r)
            .or_insert_with(|| (figs[r].1.clone(), Vec::new()));
        if !entry.1.contains(&figs[i].2) {
            entry.1.push(figs[i].2.clone());
        }
    }
    (0..figs.len())
        .map(|i| {
            let (paper, parts) = &names[&root(&mut parent, i)];
            (figs[i].0.clone(), format!("{paper} {}", parts.join(" + ")))
        })
        .collect()
}
