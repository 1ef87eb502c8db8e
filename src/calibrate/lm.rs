//! Bounded least squares on parameters scaled to [0, 1]. A discrete-event
//! model's objective is piecewise flat at fine scales, so the fit first runs a
//! derivative-free compass search (each parameter up and down by a step that
//! halves when no move helps), then polishes with Levenberg-Marquardt
//! (projected: a step that leaves the box is clipped to it), whose Jacobian,
//! by finite differences of a fixed step, also gives the confidence intervals.

use super::linalg::{jtj, jtr, solve};
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
}

impl Default for LmSettings {
    fn default() -> Self {
        LmSettings {
            max_iterations: 30,
            step: 0.02,
            tolerance: 1e-4,
            search_evaluations: 400,
        }
    }
}

/// Compass search: from `u0`, move one parameter at a time by `step` up or
/// down while that lowers the cost; halve the step when no move does; stop
/// below a step of 1/256 or when the evaluation budget is spent. Returns the
/// point, its residuals and the evaluations used.
pub fn compass<F>(f: &mut F, u0: &[f64], budget: u32) -> Result<(Vec<f64>, Vec<f64>, u32)>
where
    F: FnMut(&[f64]) -> Result<Vec<f64>>,
{
    let mut u: Vec<f64> = u0.iter().map(|x| x.clamp(0.0, 1.0)).collect();
    let mut r = f(&u)?;
    let mut c = cost(&r);
    let mut evals = 1;
    let mut step = 0.125;
    while step >= 1.0 / 256.0 && evals < budget {
        let mut moved = false;
        for p in 0..u.len() {
            for dir in [1.0, -1.0] {
                if evals >= budget {
                    break;
                }
                let mut v = u.clone();
                v[p] = (v[p] + dir * step).clamp(0.0, 1.0);
                if (v[p] - u[p]).abs() < 1e-12 {
                    continue;
                }
                let rv = f(&v)?;
                evals += 1;
                let cv = cost(&rv);
                if cv < c {
                    u = v;
                    r = rv;
                    c = cv;
                    moved = true;
                    break;
                }
            }
        }
        if !moved {
            step /= 2.0;
        }
    }
    Ok((u, r, evals))
}

/// Where a fit ended.
#[derive(Debug, Clone)]
pub struct LmOutcome {
    /// Scaled parameters.
    pub u: Vec<f64>,
    /// Residuals there.
    pub residuals: Vec<f64>,
    /// Jacobian there (residual by scaled parameter).
    pub jacobian: Vec<Vec<f64>>,
    /// Iterations done.
    pub iterations: u32,
    /// Residual evaluations done.
    pub evaluations: u32,
}

fn cost(r: &[f64]) -> f64 {
    r.iter().map(|x| x * x).sum()
}

/// Forward-difference Jacobian at `u` (backward where the box ends).
pub fn jacobian<F>(
    f: &mut F,
    u: &[f64],
    r0: &[f64],
    step: f64,
    evals: &mut u32,
) -> Result<Vec<Vec<f64>>>
where
    F: FnMut(&[f64]) -> Result<Vec<f64>>,
{
    let k = u.len();
    let mut j = vec![vec![0.0; k]; r0.len()];
    for p in 0..k {
        let mut v = u.to_vec();
        let h = if u[p] + step <= 1.0 { step } else { -step };
        v[p] += h;
        let r = f(&v)?;
        *evals += 1;
        for (i, row) in j.iter_mut().enumerate() {
            row[p] = (r[i] - r0[i]) / h;
        }
    }
    Ok(j)
}

/// Minimises the sum of squared residuals of `f` over `[0, 1]^k` from `u0`.
/// `progress` is told (iteration, cost) after each iteration.
pub fn minimise<F, P>(mut f: F, u0: &[f64], s: LmSettings, mut progress: P) -> Result<LmOutcome>
where
    F: FnMut(&[f64]) -> Result<Vec<f64>>,
    P: FnMut(u32, f64),
{
    let k = u0.len();
    let (mut u, mut r, mut evals) = if s.search_evaluations > 0 {
        compass(&mut f, u0, s.search_evaluations)?
    } else {
        let u: Vec<f64> = u0.iter().map(|x| x.clamp(0.0, 1.0)).collect();
        let r = f(&u)?;
        (u, r, 1)
    };
    let mut c = cost(&r);
    let mut lambda = 1e-2;
    let mut j = jacobian(&mut f, &u, &r, s.step, &mut evals)?;
    let mut it = 0;
    while it < s.max_iterations {
        it += 1;
        let a = jtj(&j, k);
        let g = jtr(&j, &r, k);
        let mut accepted = false;
        for _ in 0..8 {
            let mut m = a.clone();
            for p in 0..k {
                m[p][p] += lambda * a[p][p].max(1e-9) + 1e-12;
            }
            let neg: Vec<f64> = g.iter().map(|x| -x).collect();
            let Some(d) = solve(&m, &neg) else {
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
            let rn = f(&un)?;
            evals += 1;
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
                    j = jacobian(&mut f, &u, &r, s.step, &mut evals)?;
                    return Ok(LmOutcome {
                        u,
                        residuals: r,
                        jacobian: j,
                        iterations: it,
                        evaluations: evals,
                    });
                }
                break;
            }
            lambda *= 4.0;
        }
        if !accepted {
            break;
        }
        j = jacobian(&mut f, &u, &r, s.step, &mut evals)?;
    }
    Ok(LmOutcome {
        u,
        residuals: r,
        jacobian: j,
        iterations: it,
        evaluations: evals,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let out =
            minimise(f, &[0.5, 0.5], LmSettings::default(), |_, _| {}).expect("no model error");
        assert!(
            (out.u[0] - 0.3).abs() < 1e-3 && (out.u[1] - 0.7).abs() < 1e-3,
            "{:?}",
            out.u
        );
    }

    #[test]
    fn the_compass_search_finds_a_minimum_of_a_flat_stepped_cost() {
        // A staircase: no useful gradient, a clear minimum near 0.6.
        let mut f =
            |u: &[f64]| -> Result<Vec<f64>> { Ok(vec![((u[0] * 20.0).floor() / 20.0 - 0.6)]) };
        let (u, r, _) = compass(&mut f, &[0.1], 400).expect("no model error");
        assert!(r[0].abs() < 1e-9 && (u[0] - 0.6).abs() < 0.05, "{u:?}");
    }

    #[test]
    fn an_optimum_outside_the_box_ends_on_the_bound() {
        let f = |u: &[f64]| -> Result<Vec<f64>> { Ok(vec![u[0] - 1.5]) };
        let out = minimise(f, &[0.2], LmSettings::default(), |_, _| {}).expect("no model error");
        assert!((out.u[0] - 1.0).abs() < 1e-9, "{:?}", out.u);
    }
}
