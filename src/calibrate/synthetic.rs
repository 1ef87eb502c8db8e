//! The prediction intervals checked against a model whose true parameters
//! are known: a saturation curve `y = a x / (b + x)` fitted by the same
//! machinery as the real fit ([`super::lm::minimise`] on relative
//! residuals, the covariance `s² (JᵀJ)⁻¹` of [`super::linalg::spread`],
//! each value's standard error as the fit file gives it: its 95% interval
//! over 1.96) to noisy synthetic figures, and the parameter part of each
//! prediction's 90% interval carried as [`crate::interval`] carries it
//! (one standard error of each value at a time, the moves combined with
//! the values' correlations). Over many seeds the intervals must cover the
//! true curve at about 90%.

use super::lm::{minimise, one_at_a_time, LmSettings};
use crate::engine::RngStream;
use crate::interval::{param_sigma_correlated, Interval};
use crate::model::{Family, StructuralSpread};

const A_TRUE: f64 = 100.0;
const B_TRUE: f64 = 2.0;
/// The figures' noise: a standard deviation of 5% in log space.
const NOISE: f64 = 0.05;
const SEEDS: u64 = 400;

fn curve(x: f64, a: f64, b: f64) -> f64 {
    a * x / (b + x)
}

/// Parameters from scaled values on [0, 1].
fn unscale(u: &[f64]) -> (f64, f64) {
    (10.0 + 990.0 * u[0], 0.1 + 19.9 * u[1])
}
const DX_DU: [f64; 2] = [990.0, 19.9];

fn normal(rng: &mut RngStream) -> f64 {
    let u1 = rng.uniform().max(1e-300);
    let u2 = rng.uniform();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Whether the 90% interval of the prediction at `x_new`, from a fit to
/// figures drawn with `seed`, covers the true curve there: with the
/// parameter part carried (`carried`), or with it set to zero.
fn covered(seed: u64, x_new: f64, carried: bool) -> bool {
    let mut rng = RngStream::new(seed, 0);
    let xs: Vec<f64> = (0..20)
        .map(|i| 0.25 * 2f64.powf(i as f64 * 8.0 / 19.0))
        .collect();
    let published: Vec<f64> = xs
        .iter()
        .map(|&x| curve(x, A_TRUE, B_TRUE) * (NOISE * normal(&mut rng)).exp())
        .collect();
    let residuals = |u: &[f64]| -> crate::Result<Vec<f64>> {
        let (a, b) = unscale(u);
        Ok(xs
            .iter()
            .zip(&published)
            .map(|(&x, &p)| (curve(x, a, b) - p) / p)
            .collect())
    };
    let settings = LmSettings {
        max_iterations: 200,
        step: 1e-5,
        tolerance: 1e-12,
        search_evaluations: 0,
        global: false,
        ..LmSettings::default()
    };
    let out = minimise(
        one_at_a_time(residuals),
        &[0.5, 0.5],
        &[],
        settings,
        |_, _| {},
    )
    .expect("an analytic fit");
    let df = xs.len() - 2;
    let s2 = out.residuals.iter().map(|r| r * r).sum::<f64>() / df as f64;
    let sp = super::linalg::spread(&out.jacobian, 2).expect("a pinned fit");
    let cov = |p: usize, q: usize| sp.inverse[p][q] * s2 * DX_DU[p] * DX_DU[q];
    let t = crate::stats::t975(df);
    // Each value's standard error as the fit file carries it.
    let sigma: Vec<f64> = (0..2).map(|p| t * cov(p, p).sqrt() / 1.96).collect();
    let corr: Vec<Vec<f64>> = (0..2)
        .map(|p| {
            (0..2)
                .map(|q| cov(p, q) / (cov(p, p) * cov(q, q)).sqrt())
                .collect()
        })
        .collect();
    let (a, b) = unscale(&out.u);
    let y = curve(x_new, a, b);
    let moves = [curve(x_new, a + sigma[0], b), curve(x_new, a, b + sigma[1])];
    let d: Vec<f64> = moves.iter().map(|m| (m / y).ln()).collect();
    let none = StructuralSpread::default();
    let sigma_p = if carried {
        param_sigma_correlated(&d, &corr)
    } else {
        0.0
    };
    let iv = Interval::of(y, Some(sigma_p), Family::Bus, &none);
    iv.covers(curve(x_new, A_TRUE, B_TRUE))
}

/// Of [`SEEDS`] fits, how many intervals cover the truth.
fn inside(carried: bool) -> f64 {
    let points = [0.1, 1.5, 5.0, 30.0, 200.0];
    (0..SEEDS)
        .filter(|&s| covered(s + 1, points[(s % points.len() as u64) as usize], carried))
        .count() as f64
}

#[test]
fn intervals_cover_the_true_curve_at_about_ninety_percent() {
    let inside = inside(true);
    // Binomial: 400 draws at 0.9 have a standard deviation of 6; three of
    // them either way is 85.5% to 94.5%.
    let n = SEEDS as f64;
    let sd = (n * 0.9 * 0.1).sqrt();
    assert!(
        (inside - 0.9 * n).abs() <= 3.0 * sd,
        "{inside} of {n} intervals cover the truth ({:.1}%)",
        100.0 * inside / n
    );
}

#[test]
fn without_the_parameter_part_the_intervals_cover_far_less() {
    // The check above can fail: an interval without the parameter part
    // (the structural part is zero here) is a point, which covers the
    // true curve almost never.
    let inside = inside(false);
    assert!(inside < 0.1 * SEEDS as f64, "{inside}");
}
