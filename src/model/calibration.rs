//! Calibration inputs: which parameters are free, within which physical bounds.

use std::path::PathBuf;

use crate::error::Location;

/// One free parameter, all values in the base unit of its dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct FreeParam {
    /// Dotted path of the model parameter (`server.rp8400-seu.io_read_latency`).
    pub path: String,
    /// Further parameters that take the same value (one physical quantity
    /// that several model files hold, such as a register the firmware sets
    /// alike in every slot).
    pub also: Vec<String>,
    /// Unit used in the calibration file and in reports.
    pub unit: String,
    /// Base-unit value of one `unit` (for printing).
    pub unit_scale: f64,
    /// Lower bound from physics.
    pub min: f64,
    /// Upper bound from physics.
    pub max: f64,
    /// Starting value.
    pub initial: f64,
    /// What it means physically.
    pub meaning: String,
    /// The values a discrete parameter may take, ascending (empty: continuous).
    pub choices: Vec<f64>,
    /// The fit moves a continuous parameter on a logarithmic scale (sizes and
    /// times that span decades), else on a linear one.
    pub log_scale: bool,
    /// Where it was declared.
    pub at: Location,
}

/// A calibration file.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationSpec {
    /// The file.
    pub file: PathBuf,
    /// Free parameters.
    pub free: Vec<FreeParam>,
    /// Levenberg-Marquardt iterations at most.
    pub max_iterations: u32,
    /// Finite-difference step of the Jacobian, as a fraction of each range.
    pub difference_step: f64,
    /// Model evaluations the compass search may spend before Levenberg-Marquardt.
    pub search_evaluations: u32,
    /// Precision (percent) of every run during the search (None: the
    /// scenarios' own); the polish and the report use the scenarios' own.
    pub search_precision_pct: Option<f64>,
    /// The Levenberg-Marquardt polish stops once a step lowers the
    /// objective by less than this percent of it (0.01 when absent).
    pub polish_tolerance_pct: f64,
    /// Weight of the pull towards the initial values: moving a parameter across
    /// its whole range costs as much as this relative error on one figure.
    pub prior_weight: f64,
    /// Relative error, in percent, beyond which a figure's cost grows
    /// linearly (Huber's loss); 0 for plain least squares.
    pub robust_above_pct: f64,
    /// Whether the compass search, when it stalls, tries moves of two
    /// parameters at once (`pair_moves`, true when absent; see
    /// `calibrate::lm::compass`).
    pub pair_moves: bool,
    /// Whether the compass search, when it stalls, scans each continuous
    /// parameter once more over a finer grid (`fine_scans`, true when
    /// absent; see `calibrate::lm::compass`).
    pub fine_scans: bool,
    /// Fitted values that are not free parameters (structural choices made
    /// with the figures in view, which cross-validation cannot refit); they
    /// count against the budget of one fitted value per five figures.
    pub not_refit: Vec<String>,
}

impl FreeParam {
    /// Every model parameter this free parameter sets.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.path.as_str()).chain(self.also.iter().map(String::as_str))
    }

    /// The value at `u` in [0, 1] of the continuous range.
    pub fn at_scaled(&self, u: f64) -> f64 {
        if self.log_scale {
            self.min * (self.max / self.min).powf(u)
        } else {
            self.min + u * (self.max - self.min)
        }
    }

    /// Where `x` lies in the continuous range, in [0, 1].
    pub fn scaled(&self, x: f64) -> f64 {
        if self.log_scale {
            (x / self.min).ln() / (self.max / self.min).ln()
        } else {
            (x - self.min) / (self.max - self.min)
        }
    }

    /// The slope of the value with its scaled position at `u`.
    pub fn dx_du(&self, u: f64) -> f64 {
        if self.log_scale {
            self.at_scaled(u) * (self.max / self.min).ln()
        } else {
            self.max - self.min
        }
    }

    /// True when the parameter takes one of a list of values.
    pub fn is_discrete(&self) -> bool {
        !self.choices.is_empty()
    }
}

/// A fitted value read back from a file written by `iosim calibrate`.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedValue {
    /// Dotted parameter path.
    pub path: String,
    /// Value in the base unit.
    pub base: f64,
    /// Where it was written.
    pub at: Location,
}
