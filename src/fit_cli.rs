//! Command glue for `iosim calibrate` and `validate --cross-validate`: flags
//! in, library calls, report sections out.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use iosim::calibrate::{check_budget, cross_validate, fit, lm::LmSettings, Objective, Problem};
use iosim::loader::{
    load_bundled_calibration, load_bundled_scenarios, load_calibration, load_registry,
};
use iosim::model::{CalibrationSpec, Registry, Scenario};
use iosim::report::{self, Report};
use iosim::sections::{
    compare_section, correlations_section, figures_section, fitted_file, fold_objectives_section,
    folds_section, held_out_sections, objective_text, parameters_section, unpinned_section,
};
use iosim::Error;

use super::{diag, Common};

fn calibration(reg: &mut Registry, file: &Option<PathBuf>) -> iosim::Result<CalibrationSpec> {
    match file {
        Some(p) => load_calibration(p, reg),
        None => load_bundled_calibration(reg),
    }
}

/// What both fitting commands load: models, free parameters, scenarios.
struct Setup {
    /// The model files' values, no fit applied: every parameter the
    /// calibration does not free keeps what its file says, whatever a fitted
    /// file once set it to.
    reg: Registry,
    spec: CalibrationSpec,
    scenarios: Vec<Scenario>,
    /// The free parameters' values in use (`--params`, the bundled fit, or
    /// `--hand-set`), base units.
    in_use: Vec<f64>,
    /// Where those values come from, in words.
    in_use_label: String,
}

impl Setup {
    fn load(common: &Common, file: &Option<PathBuf>) -> iosim::Result<Setup> {
        let mut reg = load_registry(&common.models)?;
        let spec = calibration(&mut reg, file)?;
        let mut scenarios = load_bundled_scenarios(&reg)?;
        scenarios.retain(|s| s.has_figures() && s.fit);
        check_budget(&reg, &spec, &scenarios)?;
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
        })
    }

    /// The fit's view of the models, figures and free parameters.
    fn problem(&self, common: &Common) -> Problem<'_> {
        Problem {
            reg: &self.reg,
            scenarios: &self.scenarios,
            free: &self.spec.free,
            seed: common.seed,
            threads: common.threads,
            memo: Default::default(),
        }
    }
}

fn objective_of(spec: &CalibrationSpec) -> Objective {
    Objective {
        prior_weight: spec.prior_weight,
        robust_above: spec.robust_above_pct / 100.0,
    }
}

fn settings_of(spec: &CalibrationSpec) -> LmSettings {
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

fn progress_on() -> bool {
    std::io::stderr().is_terminal()
}

/// `iosim calibrate`.
pub fn calibrate_cmd(
    common: &Common,
    file: &Option<PathBuf>,
    output: &Path,
    force: bool,
    refit: bool,
) -> iosim::Result<String> {
    let setup = Setup::load(common, file)?;
    // Checked before the fit, which takes minutes: the file can be created,
    // and does not exist unless --force.
    let write_err = |source: std::io::Error| {
        let source = if source.kind() == std::io::ErrorKind::AlreadyExists {
            std::io::Error::new(source.kind(), "already exists; pass --force to replace it")
        } else {
            source
        };
        Error::Write {
            path: output.to_path_buf(),
            source,
        }
    };
    let out_file = report::AtomicFile::create(output, force).map_err(write_err)?;
    let spec = &setup.spec;
    let pb = setup.problem(common);
    let in_use_rows = pb.rows_at(&setup.in_use)?;
    let start: Vec<f64> = spec.free.iter().map(|f| f.initial).collect();
    let t0 = Instant::now();
    let settings = settings_of(spec);
    let show = progress_on();
    let f = fit(
        &pb,
        &start,
        refit.then_some(&setup.in_use[..]),
        |_| true,
        settings,
        objective_of(spec),
        |it, c| {
            if show {
                diag(&format!(
                    "calibrate: iteration {it}, sum of squared relative errors {c:.5}"
                ));
            }
        },
    )?;
    diag(&format!(
        "calibrate: {} iterations, {} model evaluations ({}), {} experiment runs ({} experiments), {:.1} s",
        f.iterations,
        f.spent.total(),
        f.spent.text(),
        pb.memo.runs(),
        pb.scenarios.iter().map(|s| s.experiments.len()).sum::<usize>(),
        t0.elapsed().as_secs_f64()
    ));
    let search = if refit {
        format!(
            "refit, from the values in use ({}), near them only",
            setup.in_use_label
        )
    } else {
        "from the initial values, across each parameter's range".to_string()
    };
    let text = fitted_file(&f, common.seed, &spec.file.display().to_string(), &search)?;
    out_file.commit(&text).map_err(write_err)?;
    let mut rep = Report {
        command: "calibrate".into(),
        seed: common.seed,
        ..Default::default()
    };
    rep.meta
        .push(("calibration".into(), spec.file.display().to_string()));
    rep.meta.push(("objective".into(), objective_text(spec)));
    for n in &spec.not_refit {
        rep.meta.push(("fitted_not_refit".into(), n.clone()));
    }
    rep.meta.push((
        "hand_set".into(),
        "the initial values of the calibration file (the guesses made before the fit)".into(),
    ));
    rep.meta.push(("in_use".into(), setup.in_use_label.clone()));
    rep.meta.push(("search".into(), search));
    rep.meta
        .push(("written".into(), output.display().to_string()));
    rep.meta
        .push(("iterations".into(), f.iterations.to_string()));
    rep.meta
        .push(("evaluations".into(), f.spent.total().to_string()));
    // Where they went: the search's phases at its coarse precision, the
    // polish at the scenarios' own.
    rep.meta
        .push(("evaluations_by_phase".into(), f.spent.text()));
    // The objective's value where the fit started from and where it ended,
    // so that two fits of one calibration compare by what they minimise.
    let u0 = pb.scale(&start);
    let fitted: Vec<f64> = f.params.iter().map(|p| p.value).collect();
    for (key, rows, x) in [
        ("objective_in_use", &in_use_rows, &setup.in_use),
        ("objective_fitted", &f.rows_fitted, &fitted),
    ] {
        let (figures, prior) = objective_of(spec).value(rows, &pb.scale(x), &u0);
        rep.meta.push((
            key.into(),
            format!(
                "{:.6} (figures {figures:.6}, prior {prior:.6})",
                figures + prior
            ),
        ));
    }
    rep.sections.push(parameters_section(&f));
    rep.sections.push(correlations_section(&f));
    rep.sections.push(unpinned_section(&f));
    rep.sections.push(figures_section(&f.rows_fitted));
    rep.sections.push(compare_section(
        &f.rows_initial,
        &in_use_rows,
        &f.rows_fitted,
    ));
    Ok(rep.render(common.format.into()))
}

/// `iosim validate --cross-validate`.
pub fn cross_validate_cmd(
    common: &Common,
    file: &Option<PathBuf>,
    cold: bool,
) -> iosim::Result<String> {
    let setup = Setup::load(common, file)?;
    let spec = &setup.spec;
    let pb = setup.problem(common);
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
