//! `iosim validate --cross-validate`: each figure predicted by a fit that
//! left its group out (`figures`, `papers` of the held-out predictions),
//! with the folds' parameters and objectives (`folds`, `fold_objectives`).

use std::path::PathBuf;
use std::time::Instant;

use iosim::app::Runner;
use iosim::calibrate::cross_validate;
use iosim::report::Report;
use iosim::sections::{fold_objectives_section, folds_section, held_out_sections, objective_text};

use super::fit::{objective_of, progress_on, settings_of, Setup};
use super::{diag, Common};

/// `iosim validate --cross-validate`.
pub fn execute(
    common: &Common,
    file: &Option<PathBuf>,
    cold: bool,
    runner: &Runner,
) -> iosim::Result<String> {
    let setup = Setup::load(common, file)?;
    let spec = &setup.spec;
    let pb = setup.problem(common, runner);
    let start: Vec<f64> = spec.free.iter().map(|f| f.initial).collect();
    // The full fit: near the fit in use, unless asked cold or there is none.
    let cold = cold || common.hand_set;
    let from = (!cold).then_some(&setup.in_use[..]);
    let settings = settings_of(spec);
    let t0 = Instant::now();
    let show = progress_on();
    let cv = cross_validate(
        &pb,
        &start,
        from,
        settings,
        objective_of(spec),
        |g, i, n| {
            if show {
                diag(&format!("cross-validate: fitting without {g} ({i}/{n})"));
            }
        },
    )?;
    diag(&format!(
        "cross-validate: {} figures held out in turn, {} experiment runs, {:.1} s",
        cv.held.len(),
        pb.memo.runs(),
        t0.elapsed().as_secs_f64()
    ));
    let mut rep = Report {
        command: "validate --cross-validate".into(),
        seed: common.seed,
        ..Default::default()
    };
    rep.meta
        .push(("calibration".into(), spec.file.display().to_string()));
    rep.meta.push(("objective".into(), objective_text(spec)));
    rep.meta.push((
        "predicted".into(),
        "each figure by a fit that left out its group (paper figure or table), from the initial values across each parameter's range".into(),
    ));
    rep.meta.push((
        "full_fit".into(),
        if cold {
            "every figure, from the initial values across each parameter's range".to_string()
        } else {
            format!(
                "every figure, refit from the values in use ({}), near them only",
                setup.in_use_label
            )
        },
    ));
    rep.sections.extend(held_out_sections(&cv));
    rep.sections.push(folds_section(&cv));
    rep.sections.push(fold_objectives_section(&cv));
    Ok(rep.render(common.format.into()))
}
