//! The small dense linear algebra a fit with a dozen parameters needs.

/// Solves `a x = b` by Gaussian elimination with partial pivoting; `None`
/// when `a` is singular (to working precision).
pub fn solve(a: &[Vec<f64>], b: &[f64]) -> Option<Vec<f64>> {
    let n = b.len();
    let mut m: Vec<Vec<f64>> = a
        .iter()
        .zip(b)
        .map(|(row, &bi)| row.iter().copied().chain([bi]).collect())
        .collect();
    let scale = a
        .iter()
        .flat_map(|r| r.iter())
        .fold(0.0f64, |s, v| s.max(v.abs()))
        .max(1e-300);
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))?;
        if m[p][c].abs() <= 1e-13 * scale {
            return None;
        }
        m.swap(c, p);
        let pivot = m[c].clone();
        for (r, row) in m.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot[c];
                if f != 0.0 {
                    for (x, p) in row[c..].iter_mut().zip(&pivot[c..]) {
                        *x -= f * p;
                    }
                }
            }
        }
    }
    Some((0..n).map(|i| m[i][n] / m[i][i]).collect())
}

/// The inverse of `a`, column by column; `None` when singular.
pub fn inverse(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut cols = Vec::with_capacity(n);
    for j in 0..n {
        let e: Vec<f64> = (0..n).map(|i| if i == j { 1.0 } else { 0.0 }).collect();
        cols.push(solve(a, &e)?);
    }
    Some(
        (0..n)
            .map(|i| (0..n).map(|j| cols[j][i]).collect())
            .collect(),
    )
}

/// `jᵀ j` of a residual-by-parameter Jacobian.
pub fn jtj(j: &[Vec<f64>], k: usize) -> Vec<Vec<f64>> {
    let mut a = vec![vec![0.0; k]; k];
    for row in j {
        for p in 0..k {
            for q in 0..k {
                a[p][q] += row[p] * row[q];
            }
        }
    }
    a
}

/// `jᵀ r`.
pub fn jtr(j: &[Vec<f64>], r: &[f64], k: usize) -> Vec<f64> {
    let mut g = vec![0.0; k];
    for (row, ri) in j.iter().zip(r) {
        for p in 0..k {
            g[p] += row[p] * ri;
        }
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_and_inverts_a_small_system() {
        let a = vec![vec![4.0, 1.0], vec![2.0, 3.0]];
        let x = solve(&a, &[1.0, 2.0]).expect("regular");
        assert!((x[0] - 0.1).abs() < 1e-12 && (x[1] - 0.6).abs() < 1e-12);
        let inv = inverse(&a).expect("regular");
        assert!((inv[0][0] - 0.3).abs() < 1e-12 && (inv[0][1] + 0.1).abs() < 1e-12);
    }

    #[test]
    fn a_singular_matrix_has_no_solution() {
        assert!(solve(&[vec![1.0, 2.0], vec![2.0, 4.0]], &[1.0, 2.0]).is_none());
    }
}
