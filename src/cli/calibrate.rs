//! `iosim calibrate`: the free parameters of a calibration file fitted to
//! every bundled published figure, the fitted values written to a new file
//! (`--output`, never a model file), and the fit reported (`parameters`,
//! `correlations`, `unpinned`, `figures`, `mape`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use iosim::app::Runner;
use iosim::calibrate::fit;
use iosim::report::{self, Report};
use iosim::sections::{
    compare_section, correlations_section, figures_section, fitted_file, objective_text,
    parameters_section, unpinned_section,
};
use iosim::Error;

use super::fit::{objective_of, progress_on, settings_of, Setup};
use super::{diag, positive_seconds, Common};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// Calibration file (default: the bundled models/calibration.toml).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Where to write the fitted values (a new file; models are never edited).
    #[arg(long, value_name = "FILE", default_value = "fitted.toml")]
    pub output: PathBuf,
    /// Replace the --output file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Refit: start from the values in use (the bundled fit, or --params)
    /// and search only near them, instead of from the calibration's
    /// initial values across each parameter's range. For a model change
    /// that moves the fit a little; the prior still pulls towards the
    /// initial values.
    #[arg(long, conflicts_with = "hand_set")]
    pub refit: bool,
    /// Stop with exit code 5 if the run takes longer than this many
    /// wall-clock seconds (checked before each experiment starts).
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub max_wall_seconds: Option<f64>,
}

/// `iosim calibrate`.
pub fn execute(a: Args, runner: &Runner) -> iosim::Result<String> {
    calibrate_cmd(
        &a.common,
        &a.calibration,
        &a.output,
        a.force,
        a.refit,
        runner,
    )
}

/// `iosim calibrate`.
fn calibrate_cmd(
    common: &Common,
    file: &Option<PathBuf>,
    output: &Path,
    force: bool,
    refit: bool,
    runner: &Runner,
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
    let pb = setup.problem(common, runner);
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
