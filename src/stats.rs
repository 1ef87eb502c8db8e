//! Small statistics for replications and fits: mean and Student-t confidence
//! intervals.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The 0.975 quantile of Student's t with `df` degrees of freedom (the
/// multiplier of a two-sided 95% interval), from `statrs`; infinite for no
/// degree of freedom.
pub fn t975(df: usize) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    // Location 0, scale 1 and a positive, finite df are always valid.
    StudentsT::new(0.0, 1.0, df as f64).map_or(f64::NAN, |t| t.inverse_cdf(0.975))
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
    fn t_quantiles_match_the_published_table_and_approach_the_normal() {
        // Tables give three decimals: t(1) = 12.706, t(10) = 2.228, t(30) = 2.042.
        for (df, table) in [
            (1, 12.706),
            (3, 3.182),
            (10, 2.228),
            (30, 2.042),
            (120, 1.980),
        ] {
            assert!((t975(df) - table).abs() < 5e-4, "t({df}) = {}", t975(df));
        }
        assert!((t975(100_000) - 1.959964).abs() < 1e-4);
        assert_eq!(t975(0), f64::INFINITY);
    }

    #[test]
    fn interval_of_known_samples() {
        let (m, h) = mean_ci95(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m, 2.5);
        // s = 1.290994, n = 4, t(3) = 3.182446
        assert!((h - 3.182446 * 1.290994 / 2.0).abs() < 1e-5, "{h}");
    }
}
