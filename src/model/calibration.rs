//! Calibration inputs: which parameters are free, within which physical bounds.

use std::path::PathBuf;

use crate::error::Location;

/// One free parameter, all values in the base unit of its dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct FreeParam {
    /// Dotted path of the model parameter (`server.rp8400-seu.io_read_latency`).
    pub path: String,
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
