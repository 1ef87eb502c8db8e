//! The dense linear algebra of the fit, on `nalgebra`: the damped
//! least-squares step of Levenberg-Marquardt and the covariance of the
//! estimates, both from a singular value decomposition of a Jacobian (never
//! from the normal equations `JᵀJ`, whose condition number is the square of
//! the Jacobian's).

use nalgebra::{DMatrix, DVector};

/// Iterations the SVD may take before it is declared not to converge (a
/// dozen parameters converge in a few tens).
const SVD_ITERATIONS: usize = 10_000;

/// A singular value at most this fraction of the largest is taken as zero:
/// its combination of parameters moves the residuals too little, per unit of
/// scaled range, for a forward difference of a 2% step to measure it.
pub const RELATIVE_CUTOFF: f64 = 1e-6;

/// A right singular vector's weight (squared component) on a parameter above
/// which that parameter is said to share the vector's direction.
const SHARE: f64 = 1e-9;

/// A residual-by-parameter matrix as `nalgebra`'s; `None` when a value is not
/// finite.
fn matrix(rows: &[Vec<f64>], ncols: usize, pad_to: usize) -> Option<DMatrix<f64>> {
    let nrows = rows.len().max(pad_to);
    let mut m = DMatrix::zeros(nrows, ncols);
    for (i, row) in rows.iter().enumerate() {
        for (j, v) in row.iter().take(ncols).enumerate() {
            if !v.is_finite() {
                return None;
            }
            m[(i, j)] = *v;
        }
    }
    Some(m)
}

/// The Levenberg-Marquardt step `d` minimising `|J d + r|² + Σ damping[p] d[p]²`,
/// solved as the least-squares problem of the augmented Jacobian
/// `[J; diag(sqrt(damping))]` against `[-r; 0]` by SVD. A parameter whose
/// column of `J` is zero (a discrete one, or one no residual moves with)
/// takes no step, exactly. `None` when an entry is not finite or the SVD does
/// not converge.
pub fn damped_step(j: &[Vec<f64>], r: &[f64], damping: &[f64]) -> Option<Vec<f64>> {
    let k = damping.len();
    let n = r.len();
    let moved: Vec<usize> = (0..k)
        .filter(|&p| j.iter().any(|row| row.get(p).is_some_and(|v| *v != 0.0)))
        .collect();
    let m = moved.len();
    let mut d = vec![0.0; k];
    if m == 0 {
        return Some(d);
    }
    let mut a = DMatrix::zeros(n + m, m);
    let mut b = DVector::zeros(n + m);
    for (i, (row, ri)) in j.iter().zip(r).enumerate() {
        if !ri.is_finite() {
            return None;
        }
        b[i] = -ri;
        for (c, &p) in moved.iter().enumerate() {
            let v = row.get(p).copied().unwrap_or(0.0);
            if !v.is_finite() {
                return None;
            }
            a[(i, c)] = v;
        }
    }
    for (c, &p) in moved.iter().enumerate() {
        let dp = damping[p];
        if !dp.is_finite() || dp < 0.0 {
            return None;
        }
        a[(n + c, c)] = dp.sqrt();
    }
    let svd = a.try_svd(true, true, f64::EPSILON, SVD_ITERATIONS)?;
    let eps = svd.singular_values.max() * f64::EPSILON * (n + m) as f64;
    let x = svd.solve(&b, eps).ok()?;
    for (c, &p) in moved.iter().enumerate() {
        d[p] = x[c];
    }
    Some(d)
}

/// What the SVD of a Jacobian says about the estimates.
#[derive(Debug, Clone)]
pub struct Spread {
    /// `(JᵀJ)⁺`, the pseudo-inverse over the singular values above the
    /// cutoff (multiply by `s²` for the covariance); a row and column of NaN
    /// for a parameter that shares an unpinned direction.
    pub inverse: Vec<Vec<f64>>,
    /// The unpinned directions: each right singular vector whose singular
    /// value is below the cutoff (unit length, one weight per column of the
    /// Jacobian), with that singular value relative to the largest.
    pub unpinned: Vec<(Vec<f64>, f64)>,
}

/// The pseudo-inverse of `JᵀJ` and the unpinned directions of the
/// `n`-by-`k` Jacobian `j`, from its SVD `J = U S Vᵀ`: `(JᵀJ)⁺ = V S⁻² Vᵀ`
/// over the singular values above [`RELATIVE_CUTOFF`] times the largest (all
/// of them unpinned when the largest is zero). A parameter with weight on an
/// unpinned direction has no variance (NaN): the figures cannot tell it from
/// the other parameters of that direction. `None` when an entry is not finite
/// or the SVD does not converge. With no parameter (`k` = 0: a fit whose
/// free parameters are all discrete) the spread is empty.
pub fn spread(j: &[Vec<f64>], k: usize) -> Option<Spread> {
    if k == 0 {
        return Some(Spread {
            inverse: Vec::new(),
            unpinned: Vec::new(),
        });
    }
    // Zero rows up to k: the thin SVD then yields all k right singular
    // vectors, and JᵀJ is unchanged.
    let a = matrix(j, k, k)?;
    let svd = a.try_svd(false, true, f64::EPSILON, SVD_ITERATIONS)?;
    let v_t = svd.v_t?;
    let s = &svd.singular_values;
    let s_max = s.max();
    let pinned = |i: usize| s_max > 0.0 && s[i] > RELATIVE_CUTOFF * s_max;
    let mut inverse = vec![vec![0.0; k]; k];
    let mut unpinned = Vec::new();
    let mut shares = vec![false; k];
    for i in 0..s.len() {
        let v: Vec<f64> = v_t.row(i).iter().copied().collect();
        if pinned(i) {
            let w = 1.0 / (s[i] * s[i]);
            for (p, row) in inverse.iter_mut().enumerate() {
                for (q, x) in row.iter_mut().enumerate() {
                    *x += w * v[p] * v[q];
                }
            }
        } else {
            for (sh, vp) in shares.iter_mut().zip(&v) {
                *sh |= vp * vp > SHARE;
            }
            let rel = if s_max > 0.0 { s[i] / s_max } else { 0.0 };
            unpinned.push((v, rel));
        }
    }
    for (p, row) in inverse.iter_mut().enumerate() {
        for (q, x) in row.iter_mut().enumerate() {
            if shares[p] || shares[q] {
                *x = f64::NAN;
            }
        }
    }
    Some(Spread { inverse, unpinned })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_damped_step_solves_a_regular_system_without_damping() {
        // J d = -r with J = [[4, 1], [2, 3]], r = -(1, 2): d = (0.1, 0.6).
        let j = vec![vec![4.0, 1.0], vec![2.0, 3.0]];
        let d = damped_step(&j, &[-1.0, -2.0], &[0.0, 0.0]).expect("regular");
        assert!(
            (d[0] - 0.1).abs() < 1e-12 && (d[1] - 0.6).abs() < 1e-12,
            "{d:?}"
        );
    }

    #[test]
    fn damping_matches_the_normal_equations() {
        // The step solves (JᵀJ + diag(λ)) d = -Jᵀr: the gradient of the
        // damped sum of squares vanishes there.
        let j = vec![vec![1.0, 0.0], vec![1.0, 1.0], vec![0.0, 2.0]];
        let r = [1.0, -1.0, 0.5];
        let lam = [0.5, 2.0];
        let d = damped_step(&j, &r, &lam).expect("regular");
        for p in 0..2 {
            let grad: f64 = j
                .iter()
                .zip(&r)
                .map(|(row, ri)| row[p] * (row[0] * d[0] + row[1] * d[1] + ri))
                .sum::<f64>()
                + lam[p] * d[p];
            assert!(grad.abs() < 1e-12, "{p}: {grad}");
        }
    }

    #[test]
    fn a_zero_column_takes_no_step() {
        let j = vec![vec![1.0, 0.0], vec![2.0, 0.0]];
        let d = damped_step(&j, &[1.0, 1.0], &[1e-12, 1e-12]).expect("damped");
        assert_eq!(d[1], 0.0);
        assert!((d[0] + 0.6).abs() < 1e-9, "{d:?}");
    }

    #[test]
    fn the_spread_of_a_regular_jacobian_is_the_inverse_of_jtj() {
        // JᵀJ = [[20, 10], [10, 10]]; its inverse is [[0.1, -0.1], [-0.1, 0.2]].
        let j = vec![vec![4.0, 1.0], vec![2.0, 3.0]];
        let s = spread(&j, 2).expect("regular");
        assert!(s.unpinned.is_empty());
        let want = [[0.1, -0.1], [-0.1, 0.2]];
        for (got, want) in s.inverse.iter().flatten().zip(want.iter().flatten()) {
            assert!((got - want).abs() < 1e-12, "{:?}", s.inverse);
        }
    }

    #[test]
    fn collinear_parameters_are_one_unpinned_direction_and_others_keep_their_variance() {
        // Parameters 0 and 1 move every residual alike; parameter 2 alone.
        let j = vec![
            vec![1.0, 1.0, 0.0],
            vec![2.0, 2.0, 0.0],
            vec![0.0, 0.0, 2.0],
        ];
        let s = spread(&j, 3).expect("converges");
        assert_eq!(s.unpinned.len(), 1);
        let (v, rel) = &s.unpinned[0];
        assert!(*rel < 1e-12);
        assert!((v[0].abs() - 0.5f64.sqrt()).abs() < 1e-9 && (v[0] + v[1]).abs() < 1e-9);
        assert!(v[2].abs() < 1e-9, "{v:?}");
        assert!(s.inverse[0][0].is_nan() && s.inverse[1][1].is_nan());
        assert!((s.inverse[2][2] - 0.25).abs() < 1e-12, "{:?}", s.inverse);
    }

    #[test]
    fn fewer_residuals_than_parameters_still_finds_every_direction() {
        let s = spread(&[vec![1.0, 0.0, 0.0]], 3).expect("converges");
        assert_eq!(s.unpinned.len(), 2);
        assert!((s.inverse[0][0] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn an_all_zero_jacobian_takes_no_step() {
        let d = damped_step(&[vec![0.0, 0.0]], &[1.0], &[1e-12, 1e-12]).expect("trivial");
        assert_eq!(d, vec![0.0, 0.0]);
    }

    #[test]
    fn no_parameter_has_an_empty_spread() {
        // nalgebra's SVD panics on a matrix without columns.
        let s = spread(&[vec![], vec![]], 0).expect("a spread");
        assert!(s.inverse.is_empty() && s.unpinned.is_empty());
        let s = spread(&[], 0).expect("a spread");
        assert!(s.inverse.is_empty() && s.unpinned.is_empty());
    }

    #[test]
    fn a_non_finite_entry_gives_nothing() {
        assert!(spread(&[vec![f64::NAN]], 1).is_none());
        assert!(damped_step(&[vec![1.0]], &[f64::INFINITY], &[0.0]).is_none());
    }
}
