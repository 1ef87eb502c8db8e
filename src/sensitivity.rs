//! Calibration status: which of an experiment's answers rest on values no
//! published figure pins. Every model value whose source says `assumed`
//! has a range it may be off by: the one its file states (`range = [low,
//! high]`), or, where none is stated, a factor of [`DEFAULT_FACTOR`] either
//! way (clamped to the parameter's plausible range; a count is moved to
//! whole numbers). A zero with no stated range has none: it is named, not
//! moved. Each value an experiment reads is moved to each end of its range,
//! one at a time, with the same seed ([`crate::app::assumed_moves`]), and
//! the relative move of every throughput read is set beside that
//! throughput's 90% prediction interval: an experiment one of whose
//! throughputs moves beyond its interval on some assumed value is
//! **uncalibrated** (its interval, built from the fit and the
//! cross-validation, does not cover what nobody measured).

use crate::model::Registry;

/// The factor either way an assumed value with no stated range is taken
/// to be known within.
pub const DEFAULT_FACTOR: f64 = 1.5;

/// Where an assumed value's range comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeBasis {
    /// The model file states it (`range = [low, high]`).
    Stated,
    /// None stated: a factor of [`DEFAULT_FACTOR`] either way.
    Default,
    /// None: a zero with no range stated, or a value the plausible range
    /// leaves no room to move.
    None,
}

impl RangeBasis {
    /// How a report names it.
    pub fn name(self) -> &'static str {
        match self {
            RangeBasis::Stated => "stated",
            RangeBasis::Default => "default x1.5",
            RangeBasis::None => "none",
        }
    }
}

/// One assumed value of the models and the range it is moved over.
#[derive(Debug, Clone, PartialEq)]
pub struct Assumed {
    /// Dotted path (`server.rp8400-seu.io_read_latency`).
    pub path: String,
    /// The value, in the base unit.
    pub base: f64,
    /// The unit it is written in.
    pub unit: String,
    /// Base units per written unit.
    pub per_unit: f64,
    /// The low end (base unit), `None` where it is the value itself.
    pub low: Option<f64>,
    /// The high end (base unit), `None` where it is the value itself.
    pub high: Option<f64>,
    /// Where the range comes from.
    pub basis: RangeBasis,
    /// A value inside the plausible range other than the value, used only
    /// to find which experiments read a value that has no range.
    pub probe: f64,
}

impl Assumed {
    /// The ends of the range, low then high (`None`: no such end).
    pub fn ends(&self) -> [Option<f64>; 2] {
        [self.low, self.high]
    }
}

/// Every value of `reg` whose source says `assumed` and that its own file
/// writes (a value a model takes through `extends` moves with the one it
/// copies), in parameter order, each with its range.
pub fn assumed_values(reg: &Registry) -> Vec<Assumed> {
    let mut r = reg.clone();
    let mut out = Vec::new();
    for (prefix, set) in r.param_sets_mut() {
        for (key, p) in &set.map {
            if p.inherited.is_some() || !p.source.trim_start().starts_with("assumed") {
                continue;
            }
            let path = format!("{prefix}.{key}");
            let Some(rule) = reg.rule_of(&path) else {
                continue;
            };
            let per_unit = crate::units::to_base(1.0, &p.unit).map_or(1.0, |(_, u)| u);
            let (lo, hi, basis) = match p.range {
                Some((lo, hi)) => (lo, hi, RangeBasis::Stated),
                None if p.base != 0.0 => {
                    let (mut lo, mut hi) = (
                        (p.base / DEFAULT_FACTOR).max(rule.min),
                        (p.base * DEFAULT_FACTOR).min(rule.max),
                    );
                    if rule.whole {
                        (lo, hi) = (lo.floor().max(rule.min), hi.ceil().min(rule.max));
                    }
                    (lo, hi, RangeBasis::Default)
                }
                None => (p.base, p.base, RangeBasis::None),
            };
            let low = (lo < p.base).then_some(lo);
            let high = (hi > p.base).then_some(hi);
            let basis = if low.is_none() && high.is_none() {
                RangeBasis::None
            } else {
                basis
            };
            let probe = if p.base < rule.max {
                (p.base + 1.0).min(rule.max)
            } else {
                rule.min
            };
            out.push(Assumed {
                path,
                base: p.base,
                unit: p.unit.clone(),
                per_unit,
                low,
                high,
                basis,
                probe,
            });
        }
    }
    out
}

/// How far the throughputs an experiment reports move when one assumed
/// value goes to each end of its range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Effect {
    /// Index of the value in its list of [`Assumed`].
    pub value: usize,
    /// The largest relative move (percent, signed) of a throughput with
    /// the value at its low end; NaN when not moved there.
    pub low_pct: f64,
    /// The same at the high end.
    pub high_pct: f64,
    /// Whether some throughput moved beyond its 90% prediction interval.
    pub beyond: bool,
}

impl Effect {
    /// The effect of value `value` on throughputs `base`, each with the
    /// log-space half width of its 90% interval in `half_log`, from the
    /// same throughputs with the value at its low end (`low`) and its high
    /// end (`high`), where it was moved there.
    pub fn of(
        value: usize,
        base: &[f64],
        half_log: &[f64],
        low: Option<&[f64]>,
        high: Option<&[f64]>,
    ) -> Effect {
        let mut beyond = false;
        let mut largest = |moved: Option<&[f64]>| -> f64 {
            let Some(ys) = moved else { return f64::NAN };
            let mut worst = 0.0_f64;
            for ((&y, &m), &h) in base.iter().zip(ys).zip(half_log) {
                if !(y.is_finite() && y > 0.0 && m.is_finite() && m > 0.0) {
                    continue;
                }
                let l = (m / y).ln();
                if l.abs() > worst.abs() {
                    worst = l;
                }
                beyond |= h.is_finite() && l.abs() > h;
            }
            100.0 * worst.exp_m1()
        };
        let (low_pct, high_pct) = (largest(low), largest(high));
        Effect {
            value,
            low_pct,
            high_pct,
            beyond,
        }
    }

    /// The larger of its two moves in size (percent, signed; NaN when
    /// moved nowhere).
    pub fn largest_pct(&self) -> f64 {
        match (self.low_pct.is_nan(), self.high_pct.is_nan()) {
            (true, true) => f64::NAN,
            (true, false) => self.high_pct,
            (false, true) => self.low_pct,
            (false, false) if self.high_pct.abs() >= self.low_pct.abs() => self.high_pct,
            _ => self.low_pct,
        }
    }
}

/// Per experiment, its name and the [`Effect`] of each assumed value it
/// reads.
pub type ExperimentEffects = Vec<(String, Vec<Effect>)>;

/// An experiment's calibration status: `uncalibrated` when some assumed
/// value moves one of its throughputs beyond its interval, `calibrated`
/// otherwise (including an experiment that reads no assumed value).
pub fn status_of(effects: &[Effect]) -> &'static str {
    if effects.iter().any(|e| e.beyond) {
        "uncalibrated"
    } else {
        "calibrated"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_beyond_the_interval_marks_the_effect_and_the_status() {
        let half = [0.2_f64.ln_1p(), 0.2_f64.ln_1p()];
        let inside = Effect::of(0, &[100.0, 50.0], &half, Some(&[95.0, 49.0]), None);
        assert!(!inside.beyond);
        assert!((inside.low_pct + 5.0).abs() < 1e-9);
        assert!(inside.high_pct.is_nan());
        let beyond = Effect::of(
            1,
            &[100.0, 50.0],
            &half,
            Some(&[99.0, 50.0]),
            Some(&[100.0, 70.0]),
        );
        assert!(beyond.beyond);
        assert!((beyond.high_pct - 40.0).abs() < 1e-9);
        assert!((beyond.largest_pct() - 40.0).abs() < 1e-9);
        assert_eq!(status_of(&[inside]), "calibrated");
        assert_eq!(status_of(&[inside, beyond]), "uncalibrated");
        assert_eq!(status_of(&[]), "calibrated");
    }

    #[test]
    fn a_value_with_no_stated_range_moves_by_the_default_factor_and_a_zero_not_at_all() {
        let reg = crate::loader::load_registry(&[]).expect("the bundled models load");
        let values = assumed_values(&reg);
        assert!(values.len() > 100, "{} assumed values", values.len());
        for v in &values {
            if let (Some(lo), Some(hi)) = (v.low, v.high) {
                assert!(lo < v.base && v.base < hi, "{v:?}");
                if v.basis == RangeBasis::Default && !reg.rule_of(&v.path).is_some_and(|r| r.whole)
                {
                    assert!(lo >= v.base / DEFAULT_FACTOR - 1e-9 * v.base, "{v:?}");
                    assert!(hi <= v.base * DEFAULT_FACTOR + 1e-9 * v.base, "{v:?}");
                }
            }
            if v.base == 0.0 && v.basis != RangeBasis::Stated {
                assert_eq!((v.low, v.high, v.basis), (None, None, RangeBasis::None));
            }
            assert_ne!(v.probe, v.base, "{v:?}");
        }
    }
}
