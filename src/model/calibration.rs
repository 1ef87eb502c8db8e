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
    /// The papers the budget counts apart (`[[paper]]`): each a name and
    /// the scenario sources that are its figures.
    pub papers: Vec<PaperDef>,
    /// Published figures that are one measured number (`[[same_measurement]]`).
    pub same_measurement: Vec<SameMeasurement>,
    /// Every value or structural choice made with the figures in view that
    /// is not a free parameter (`[[choice]]`); each counts against its
    /// paper's budget and the whole's.
    pub choices: Vec<Choice>,
}

/// A paper of the budget: a name and the scenario `source`s of its figures
/// (one document may be transcribed in several files).
#[derive(Debug, Clone, PartialEq)]
pub struct PaperDef {
    /// Short name, as reports print it.
    pub name: String,
    /// Scenario sources whose figures are this paper's.
    pub sources: Vec<String>,
    /// Where it was declared.
    pub at: Location,
}

/// Figures that are one measured number: a number the text repeats, one run
/// published in two units, ports of one test that differ by noise, a total
/// of published ports. They count as one independent figure.
#[derive(Debug, Clone, PartialEq)]
pub struct SameMeasurement {
    /// Figure ids; `*` stands for any text without a `.`.
    pub figures: Vec<String>,
    /// Why they are one number, in the paper's words.
    pub why: String,
    /// Where it was declared.
    pub at: Location,
}

/// A value or structural choice made with the figures in view.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// Short id, cited as `choice:ID` wherever a text mentions the choice.
    pub id: String,
    /// The paper (a [`PaperDef`] name) whose figures were in view.
    pub paper: String,
    /// What was chosen.
    pub choice: String,
    /// The figures or fits it was chosen on.
    pub evidence: String,
    /// The model parameters it sets (`*` stands for any text without a
    /// `.`); empty for a choice made in code or in a scenario.
    pub params: Vec<String>,
    /// Where it was declared.
    pub at: Location,
}

/// Whether `text` matches `pattern`, where `*` stands for any run of
/// characters without a `.`.
pub fn id_matches(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(tail) = text.strip_prefix(head) else {
                return false;
            };
            // The star takes 0..n characters before the first `.`.
            let stop = tail.find('.').unwrap_or(tail.len());
            (0..=stop).any(|k| id_matches(rest, &tail[k..]))
        }
    }
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
