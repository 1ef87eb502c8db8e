//! What `calibrate` and `validate --cross-validate` share: the models, free
//! parameters and scenarios they load ([`Setup`]), the fit's problem, its
//! objective and settings from the calibration file.

use std::io::IsTerminal;
use std::path::PathBuf;

use iosim::app::Runner;
use iosim::calibrate::budget::{account, Budget, FIGURES_PER_FITTED_VALUE};
use iosim::calibrate::{lm::LmSettings, Objective, Problem};
use iosim::loader::{
    load_bundled_calibration, load_bundled_scenarios, load_calibration, load_registry,
};
use iosim::model::{CalibrationSpec, Registry, Scenario};
use iosim::report::{Cell, Section};

use super::{diag, Common};

/// The calibration file: `--calibration FILE`, or the bundled one.
fn calibration(reg: &mut Registry, file: &Option<PathBuf>) -> iosim::Result<CalibrationSpec> {
    match file {
        Some(p) => load_calibration(p, reg),
        None => load_bundled_calibration(reg),
    }
}

/// What both fitting commands load: models, free parameters, scenarios.
pub struct Setup {
    /// The model files' values, no fit applied: every parameter the
    /// calibration does not free keeps what its file says, whatever a fitted
    /// file once set it to.
    pub reg: Registry,
    pub spec: CalibrationSpec,
    scenarios: Vec<Scenario>,
    /// The free parameters' values in use (`--params`, the bundled fit, or
    /// `--hand-set`), base units.
    pub in_use: Vec<f64>,
    /// Where those values come from, in words.
    pub in_use_label: String,
    /// The fitted-value budget of the calibration over the figures.
    pub budget: Budget,
}

impl Setup {
    /// Loads them from the flags.
    pub fn load(common: &Common, file: &Option<PathBuf>) -> iosim::Result<Setup> {
        let mut reg = load_registry(&common.models)?;
        let spec = calibration(&mut reg, file)?;
        let mut scenarios = load_bundled_scenarios(&reg)?;
        scenarios.retain(|s| s.has_figures() && s.fit);
        let budget = account(&reg, &spec, &scenarios)?;
        for p in budget.over() {
            diag(&format!(
                "warning: over budget (at most one fitted value per {FIGURES_PER_FITTED_VALUE} independent figures): {}",
                p.describe()
            ));
        }
        let (mut used, in_use_label) = common.registry()?;
        let in_use = spec
            .free
            .iter()
            .map(|f| used.param(&f.path).map(|p| p.base).unwrap_or(f.initial))
            .collect();
        Ok(Setup {
            reg,
            spec,
            scenarios,
            in_use,
            in_use_label,
            budget,
        })
    }

    /// Keeps only the figures of one paper (`validate --cross-validate
    /// --paper`, see [`iosim::validate::keep_paper`]); the paper's name.
    pub fn keep_paper(&mut self, name: &str) -> iosim::Result<String> {
        iosim::validate::keep_paper(&mut self.scenarios, name)?;
        Ok(self
            .scenarios
            .first()
            .map_or_else(String::new, |sc| sc.source.clone()))
    }

    /// The groups a cross-validation leaves out, in order.
    pub fn groups(&self) -> Vec<String> {
        iosim::calibrate::fold_groups(&self.scenarios)
    }

    /// Every figure's id in the order of a fit's figure rows (scenario,
    /// experiment, then file order).
    pub fn figure_ids(&self) -> Vec<String> {
        self.scenarios
            .iter()
            .flat_map(|sc| &sc.experiments)
            .flat_map(|e| e.figures.iter().map(|f| f.id.clone()))
            .collect()
    }

    /// The fit's view of the models, figures and free parameters.
    pub fn problem(&self, common: &Common, runner: &Runner) -> Problem<'_> {
        self.problem_at(common.seed, runner)
    }

    /// The fit's view at `seed`.
    pub fn problem_at(&self, seed: u64, runner: &Runner) -> Problem<'_> {
        Problem {
            reg: &self.reg,
            scenarios: &self.scenarios,
            free: &self.spec.free,
            seed,
            runner: runner.clone(),
            memo: Default::default(),
        }
    }
}

/// The objective the calibration file weighs.
pub fn objective_of(spec: &CalibrationSpec) -> Objective {
    Objective {
        prior_weight: spec.prior_weight,
        robust_above: spec.robust_above_pct / 100.0,
    }
}

/// The fit's settings from the calibration file.
pub fn settings_of(spec: &CalibrationSpec) -> LmSettings {
    LmSettings {
        max_iterations: spec.max_iterations,
        step: spec.difference_step,
        search_evaluations: spec.search_evaluations,
        search_precision_pct: spec.search_precision_pct,
        tolerance: spec.polish_tolerance_pct / 100.0,
        pair_moves: spec.pair_moves,
        fine_scans: spec.fine_scans,
        ..LmSettings::default()
    }
}

/// Whether to tell the fit's progress (standard error is a terminal).
pub fn progress_on() -> bool {
    std::io::stderr().is_terminal()
}

/// The objective in words, for the report's header.
pub fn objective_text(spec: &CalibrationSpec) -> String {
    let loss = if spec.robust_above_pct > 0.0 {
        format!(
            "squared relative errors, growing linearly beyond {}% (Huber)",
            spec.robust_above_pct
        )
    } else {
        "squared relative errors".to_string()
    };
    format!("{loss}; prior weight {}", spec.prior_weight)
}

/// `at min`, `at max` or `inside`.
pub fn bound_cell(b: Option<&str>) -> Cell {
    Cell::Text(
        b.map(|b| format!("at {b}"))
            .unwrap_or_else(|| "inside".into()),
    )
}

/// A discrete parameter's place among its choices, in words.
pub fn bound_word(b: Option<&str>) -> &str {
    match b {
        Some("min") => "its smallest choice",
        Some(_) => "its largest choice",
        None => "an inner choice",
    }
}

/// The budget's section: per paper and in all, the figures, the independent
/// figures, the fitted values they allow, the free values and choices that
/// count, and whether it holds.
pub fn budget_section(b: &Budget) -> Section {
    let mut s = Section::new(
        "budget",
        &[
            "paper",
            "figures",
            "independent",
            "allowed",
            "free",
            "choices",
            "fitted",
            "within",
        ],
    );
    for p in b.papers.iter().chain(std::iter::once(&b.whole)) {
        s.rows.push(vec![
            Cell::Text(p.name.clone()),
            Cell::Int(p.figures as u64),
            Cell::Int(p.independent as u64),
            Cell::Int(p.allowed() as u64),
            Cell::Int(p.free.len() as u64),
            Cell::Int(p.choices.len() as u64),
            Cell::Int(p.fitted() as u64),
            Cell::Text(if p.within() { "yes" } else { "no" }.into()),
        ]);
    }
    s
}
