//! Small statistics for replications: mean and Student-t confidence intervals.

/// The 0.975 quantile of Student's t with `df` degrees of freedom (the
/// multiplier of a two-sided 95% interval).
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        // Beyond the table: the normal quantile plus the first-order correction.
        _ => 1.959964 + 2.37 / df as f64,
    }
}

/// Mean and 95% confidence half-width of independent samples (NaN half-width
/// for fewer than two samples).
pub fn mean_ci95(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, f64::NAN);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, t975(n - 1) * (var / n as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_table_and_approach_the_normal() {
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(10), 2.228);
        assert!((t975(1000) - 1.962).abs() < 0.002);
    }

    #[test]
    fn interval_of_known_samples() {
        let (m, h) = mean_ci95(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m, 2.5);
        // s = 1.2910, n = 4, t(3) = 3.182
        assert!((h - 3.182 * 1.290994 / 2.0).abs() < 1e-4, "{h}");
    }
}
