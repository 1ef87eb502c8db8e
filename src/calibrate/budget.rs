//! The fitted-value budget: at most one fitted value per five published figures.

use crate::error::{Error, Location, Result};
use crate::model::{CalibrationSpec, Scenario};

/// Published figures per fitted value, at least.
pub const FIGURES_PER_FITTED_VALUE: usize = 5;

/// Checks that the free parameters of `spec` and the fitted values it names
/// as not refit number at most one per [`FIGURES_PER_FITTED_VALUE`] published
/// figures of `scenarios`. The error points at the last free parameter (or at
/// the calibration file when it frees none).
pub fn check_budget(spec: &CalibrationSpec, scenarios: &[Scenario]) -> Result<()> {
    let figures: usize = scenarios
        .iter()
        .flat_map(|s| &s.experiments)
        .map(|e| e.figures.len())
        .sum();
    let fitted = spec.free.len() + spec.not_refit.len();
    if fitted * FIGURES_PER_FITTED_VALUE <= figures {
        return Ok(());
    }
    let at = spec
        .free
        .last()
        .map(|f| f.at.clone())
        .unwrap_or_else(|| Location {
            file: spec.file.clone(),
            key: "calibration.not_refit".into(),
            line: 0,
            column: 0,
        });
    Err(Error::Invalid {
        at,
        message: format!(
            "{} free parameters and {} fitted values not refit for {figures} published figures: at most one fitted value per five figures",
            spec.free.len(),
            spec.not_refit.len()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::{load_bundled_calibration, load_bundled_scenarios, load_registry};

    #[test]
    fn the_bundled_calibration_is_within_budget_and_one_more_is_not() {
        let mut reg = load_registry(&[]).unwrap();
        let mut spec = load_bundled_calibration(&mut reg).unwrap();
        let scenarios = load_bundled_scenarios(&reg).unwrap();
        check_budget(&spec, &scenarios).unwrap();
        let figures: usize = scenarios
            .iter()
            .flat_map(|s| &s.experiments)
            .map(|e| e.figures.len())
            .sum();
        // Name enough structural choices to exceed one per five figures.
        let room = figures / FIGURES_PER_FITTED_VALUE + 1 - spec.free.len() - spec.not_refit.len();
        spec.not_refit
            .extend((0..room).map(|i| format!("extra-choice-{i}")));
        let e = check_budget(&spec, &scenarios).unwrap_err();
        assert!(matches!(e, Error::Invalid { .. }), "{e}");
        assert!(
            e.to_string()
                .contains("at most one fitted value per five figures"),
            "{e}"
        );
        // With no free parameter at all, the error still names the file.
        spec.free.clear();
        spec.not_refit = (0..figures).map(|i| format!("c{i}")).collect();
        let e = check_budget(&spec, &scenarios).unwrap_err();
        assert!(e.to_string().contains("calibration"), "{e}");
    }
}
