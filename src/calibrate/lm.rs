//! Bounded Levenberg-Marquardt on parameters scaled to [0, 1] (projected:
//! a step that leaves the box is clipped to it). Jacobians by finite
//! differences of a fixed step, large enough to average over the sampling
//! jitter of a discrete-event model run with common random numbers.

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
}

impl Default for LmSettings {
    fn default() -> Self {
        LmSettings {
            max_iterations: 30,
            step: 0.02,
            tolerance: 1e-4,
        }
    }
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
    let mut u: Vec<f64> = u0.iter().map(|x| x.clamp(0.0, 1.0)).collect();
    let mut evals = 0;
    let mut r = f(&u)?;
    evals += 1;
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
    fn an_optimum_outside_the_box_ends_on_the_bound() {
        let f = |u: &[f64]| -> Result<Vec<f64>> { Ok(vec![u[0] - 1.5]) };
        let out = minimise(f, &[0.2], LmSettings::default(), |_, _| {}).expect("no model error");
        assert!((out.u[0] - 1.0).abs() < 1e-9, "{:?}", out.u);
    }
}
