//! Prediction intervals: how far to trust a predicted number. A 90%
//! interval in log space with two parts, each reported:
//!
//! - the **parameter part**, the fit's uncertainty carried to the output:
//!   each fitted value with an interval moved by one standard error (its
//!   95% interval's half width over 1.96), one at a time, the experiment
//!   simulated again with the same seed, and the relative moves of the
//!   output added in quadrature (`sqrt(Σ ln(y_i / y)²)`). The fit file
//!   gives marginal intervals only, so correlations between fitted values
//!   are not carried; values one free parameter sets through `also` move
//!   together ([`crate::app::parameter_moves`]);
//! - the **structural part**, the model's own error: the spread of
//!   `ln(published / predicted)` over figures held out of the fit by
//!   cross-validation, by the mechanism family of the run's first-named
//!   bottleneck ([`crate::model::StructuralSpread`]); a family the
//!   cross-validation pinned too rarely takes the file's wider default.
//!
//! The two combine in quadrature: `y · exp(±1.645 · sqrt(σp² + σs²))`.
//! Each part is reported as its own 90% half width in log space, in
//! percent (`100 · 1.645 · σ`).

use crate::model::{Family, Registry, StructuralSpread};
use crate::sim::ExperimentResult;

/// The standard normal quantile of a two-sided 90% interval.
pub const Z90: f64 = 1.644_853_626_951_472_2;

/// A 90% prediction interval of one predicted value. Two intervals are
/// equal when every field is the same bits (a part not computed, NaN,
/// equals itself: the same run gives equal rows).
#[derive(Debug, Clone, Copy)]
pub struct Interval {
    /// Low end, in the value's unit.
    pub low: f64,
    /// High end, in the value's unit.
    pub high: f64,
    /// The parameter part's 90% half width in log space, in percent (NaN
    /// when not computed).
    pub param_pct: f64,
    /// The structural part's 90% half width in log space, in percent.
    pub structural_pct: f64,
    /// The mechanism family whose spread it takes.
    pub family: Family,
    /// Whether the cross-validation pinned that family's spread (false:
    /// the default for families the papers rarely pinned).
    pub pinned: bool,
}

impl PartialEq for Interval {
    fn eq(&self, other: &Interval) -> bool {
        let bits = |i: &Interval| [i.low, i.high, i.param_pct, i.structural_pct].map(f64::to_bits);
        bits(self) == bits(other) && self.family == other.family && self.pinned == other.pinned
    }
}

impl Interval {
    /// The 90% interval of `predicted` with a parameter part of standard
    /// deviation `param_sigma` (log space; None: not computed, taken as 0
    /// in the total and reported NaN) and the structural spread of
    /// `family`. A value that is not a positive finite number has no
    /// interval (NaN ends).
    pub fn of(
        predicted: f64,
        param_sigma: Option<f64>,
        family: Family,
        spread: &StructuralSpread,
    ) -> Interval {
        let (s, pinned) = spread.sigma_of(family);
        let p = param_sigma.unwrap_or(0.0);
        let total = (p * p + s * s).sqrt();
        let (low, high) = if predicted.is_finite() && predicted > 0.0 {
            (
                predicted * (-Z90 * total).exp(),
                predicted * (Z90 * total).exp(),
            )
        } else {
            (f64::NAN, f64::NAN)
        };
        Interval {
            low,
            high,
            param_pct: param_sigma.map_or(f64::NAN, |p| 100.0 * Z90 * p),
            structural_pct: 100.0 * Z90 * s,
            family,
            pinned,
        }
    }

    /// Whether `value` lies inside (ends included).
    pub fn covers(&self, value: f64) -> bool {
        value >= self.low && value <= self.high
    }

    /// The half width of the whole interval in log space (both parts in
    /// quadrature; a parameter part not computed counts as none).
    pub fn half_log(&self) -> f64 {
        let p = if self.param_pct.is_nan() {
            0.0
        } else {
            self.param_pct
        };
        (p * p + self.structural_pct * self.structural_pct).sqrt() / 100.0
    }

    /// The family's name, with ` (default)` when the cross-validation did
    /// not pin its spread.
    pub fn family_text(&self) -> String {
        if self.pinned {
            self.family.name().to_string()
        } else {
            format!("{} (default)", self.family.name())
        }
    }
}

/// The parameter part's standard deviation in log space of a value `base`
/// that moved to each of `moved` when one fitted value (or one group of
/// them) moved by its standard error: `sqrt(Σ ln(m / base)²)`, the moves
/// taken as independent. A move to a value that is not positive and
/// finite is left out; a base that is not is NaN. No move: 0.
pub fn param_sigma(base: f64, moved: &[f64]) -> f64 {
    if !(base.is_finite() && base > 0.0) {
        return f64::NAN;
    }
    moved
        .iter()
        .filter(|m| m.is_finite() && **m > 0.0)
        .map(|m| (m / base).ln().powi(2))
        .sum::<f64>()
        .sqrt()
}

/// The parameter part's standard deviation in log space from the moves
/// `d[i] = ln(y_i / y)` of one standard error of each parameter, with the
/// parameters' correlation matrix `corr`: `sqrt(dᵀ R d)` (the linear
/// propagation of the covariance; with `R = I` it is [`param_sigma`]).
pub fn param_sigma_correlated(d: &[f64], corr: &[Vec<f64>]) -> f64 {
    let mut v = 0.0;
    for (i, di) in d.iter().enumerate() {
        for (j, dj) in d.iter().enumerate() {
            v += di * dj * corr[i][j];
        }
    }
    v.max(0.0).sqrt()
}

/// Families with fewer held-out figures than this take the default spread.
pub const MIN_FAMILY_FIGURES: usize = 5;

/// The default spread, for a family the papers rarely pinned, is the
/// spread of every held-out figure together times this.
pub const DEFAULT_SPREAD_FACTOR: f64 = 1.5;

/// The structural spread from held-out log residuals `ln(published /
/// predicted)` with the family of each (those not finite left out): per
/// family with at least [`MIN_FAMILY_FIGURES`], the root mean square (so a
/// family's bias counts as spread); the default, the root mean square of
/// all of them times [`DEFAULT_SPREAD_FACTOR`]. `figures` counts the
/// residuals (a figure held out at several seeds counts once per seed
/// divided by `per_figure`, the number of seeds). None when no residual is
/// finite.
pub fn spread_from(
    residuals: &[(Family, f64)],
    per_figure: usize,
    basis: &str,
) -> Option<StructuralSpread> {
    let rms = |xs: &[f64]| (xs.iter().map(|x| x * x).sum::<f64>() / xs.len() as f64).sqrt();
    let all: Vec<f64> = residuals
        .iter()
        .map(|r| r.1)
        .filter(|r| r.is_finite())
        .collect();
    if all.is_empty() {
        return None;
    }
    let per = per_figure.max(1);
    let mut families = Vec::new();
    for f in Family::ALL {
        let xs: Vec<f64> = residuals
            .iter()
            .filter(|r| r.0 == f && r.1.is_finite())
            .map(|r| r.1)
            .collect();
        if xs.len() / per >= MIN_FAMILY_FIGURES && rms(&xs) > 0.0 {
            families.push(crate::model::FamilySpread {
                family: f,
                sigma: rms(&xs),
                figures: xs.len() / per,
            });
        }
    }
    Some(StructuralSpread {
        families,
        default_sigma: (rms(&all) * DEFAULT_SPREAD_FACTOR).max(1e-4),
        basis: basis.to_string(),
    })
}

/// The throughputs (MB/s) a run reports: each function's, then, when
/// there are several, all of them together (`all`).
pub fn run_throughputs(r: &ExperimentResult) -> Vec<(String, f64)> {
    let mut q: Vec<(String, f64)> = r
        .functions
        .iter()
        .map(|f| (f.label.clone(), f.total().mb_s()))
        .collect();
    if r.functions.len() > 1 {
        let all = r.functions.iter().map(|f| f.total().mb_s()).sum();
        q.push(("all".into(), all));
    }
    q
}

/// Each of [`run_throughputs`] of `r` with its 90% prediction interval,
/// whose parameter part comes from `moved` (the runs with each fitted
/// value it reads moved).
pub fn throughput_intervals(
    reg: &Registry,
    r: &ExperimentResult,
    moved: &[ExperimentResult],
) -> Vec<(String, f64, crate::interval::Interval)> {
    let family = crate::model::Family::of_bottleneck(&r.bottleneck);
    let others: Vec<Vec<(String, f64)>> = moved.iter().map(run_throughputs).collect();
    run_throughputs(r)
        .into_iter()
        .enumerate()
        .map(|(k, (name, y))| {
            let ys: Vec<f64> = others
                .iter()
                .map(|o| o.get(k).map_or(f64::NAN, |q| q.1))
                .collect();
            let iv = Interval::of(y, Some(param_sigma(y, &ys)), family, &reg.spread);
            (name, y, iv)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FamilySpread;

    fn spread() -> StructuralSpread {
        StructuralSpread {
            families: vec![FamilySpread {
                family: Family::Bus,
                sigma: 0.1,
                figures: 20,
            }],
            default_sigma: 0.3,
            basis: String::new(),
        }
    }

    #[test]
    fn parts_add_in_quadrature_in_log_space() {
        let i = Interval::of(100.0, Some(0.1), Family::Bus, &spread());
        let total = (0.02f64).sqrt();
        assert!((i.high - 100.0 * (Z90 * total).exp()).abs() < 1e-9);
        assert!((i.low * i.high - 100.0 * 100.0).abs() < 1e-6);
        assert!((i.param_pct - 16.448_536).abs() < 1e-5);
        assert!((i.structural_pct - 16.448_536).abs() < 1e-5);
        assert!(i.pinned && i.covers(100.0) && !i.covers(200.0));
    }

    #[test]
    fn an_unpinned_family_takes_the_wider_default() {
        let bus = Interval::of(100.0, None, Family::Bus, &spread());
        let card = Interval::of(100.0, None, Family::CardProcessor, &spread());
        assert!(!card.pinned && card.high > bus.high && bus.param_pct.is_nan());
        assert_eq!(card.family_text(), "card-processor (default)");
        assert!(Interval::of(0.0, None, Family::Bus, &spread()).low.is_nan());
        // A part not computed (NaN) still compares equal to itself.
        assert_eq!(bus, Interval::of(100.0, None, Family::Bus, &spread()));
        assert_ne!(bus, Interval::of(100.0, Some(0.0), Family::Bus, &spread()));
    }

    #[test]
    fn moves_add_in_quadrature() {
        let s = param_sigma(100.0, &[110.0, 100.0, 90.0, f64::NAN]);
        let want = ((1.1f64).ln().powi(2) + (0.9f64).ln().powi(2)).sqrt();
        assert!((s - want).abs() < 1e-12);
        assert_eq!(param_sigma(100.0, &[]), 0.0);
        let d = [0.1, 0.2];
        let eye = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
        assert!((param_sigma_correlated(&d, &eye) - (0.05f64).sqrt()).abs() < 1e-12);
        let one = vec![vec![1.0, 1.0], vec![1.0, 1.0]];
        assert!((param_sigma_correlated(&d, &one) - 0.3).abs() < 1e-12);
    }

    #[test]
    fn a_spread_pins_only_families_with_enough_figures() {
        let mut r: Vec<(Family, f64)> = (0..10)
            .map(|i| (Family::Bus, if i % 2 == 0 { 0.1 } else { -0.1 }))
            .collect();
        r.extend((0..4).map(|_| (Family::Cpu, 0.5)));
        r.push((Family::Link, f64::NAN));
        let s = spread_from(&r, 1, "t").unwrap();
        assert_eq!(s.families.len(), 1);
        assert!((s.sigma_of(Family::Bus).0 - 0.1).abs() < 1e-12);
        let all = ((10.0 * 0.01 + 4.0 * 0.25) / 14.0f64).sqrt();
        assert!((s.sigma_of(Family::Cpu).0 - 1.5 * all).abs() < 1e-12);
        assert!(!s.sigma_of(Family::Cpu).1);
        // Counted per seed: ten residuals at two seeds are five figures.
        assert_eq!(spread_from(&r, 2, "t").unwrap().families[0].figures, 5);
        assert!(spread_from(&[(Family::Bus, f64::NAN)], 1, "t").is_none());
    }

    #[test]
    fn families_follow_the_first_bottleneck() {
        let f = Family::of_bottleneck;
        assert_eq!(
            f("bus b0 (PCI-X 133) (97% busy); CPU 0: x (91% busy)"),
            Family::Bus
        );
        assert_eq!(f("CPU 1: netperf (99% busy)"), Family::Cpu);
        assert_eq!(f("processor of c.atm (95% busy)"), Family::CardProcessor);
        assert_eq!(f("link c.gige out (93% busy)"), Family::Link);
        assert_eq!(f("ropes above b0 (92% busy)"), Family::HostPath);
        assert_eq!(f("memory (DMA) (92% busy)"), Family::HostPath);
        assert_eq!(
            f("none saturated: latency or window bound (busiest: bus b0 40%)"),
            Family::Latency
        );
    }
}
