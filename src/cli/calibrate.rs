//! `iosim calibrate`: the free parameters of a calibration file fitted to
//! every bundled published figure, the fitted values written to a new file
//! (`--output`, never a model file), and the fit reported (`parameters`,
//! `correlations`, `unpinned`, `figures`, `mape`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use iosim::app::Runner;
use iosim::calibrate::{fit, Fit};
use iosim::loader::{fitted_file_text, FittedEntry};
use iosim::report::{self, Cell, Report, Section};
use iosim::sections::figures_section;
use iosim::validate::{summarise, FigureRow, PaperSummary};

use super::fit::{
    bound_cell, bound_word, budget_section, objective_of, objective_text, progress_on, settings_of,
    Setup,
};
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
    /// Replace the --output file if it exists (a regular file only).
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
    /// wall-clock seconds (checked as the simulations run).
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub max_wall_seconds: Option<f64>,
    /// Print the fitted-value budget only (per paper: independent figures,
    /// free values, choices made with the figures in view), without a fit.
    #[arg(long, conflicts_with_all = ["refit", "force"])]
    pub budget: bool,
}

/// `iosim calibrate`.
pub fn execute(a: Args, runner: &Runner) -> iosim::Result<String> {
    if a.budget {
        return budget_cmd(&a.common, &a.calibration);
    }
    calibrate_cmd(
        &a.common,
        &a.calibration,
        &a.output,
        a.force,
        a.refit,
        runner,
    )
}

/// `iosim calibrate --budget`: the budget, no fit.
fn budget_cmd(common: &Common, file: &Option<PathBuf>) -> iosim::Result<String> {
    let setup = Setup::load(common, file)?;
    let mut rep = Report {
        command: "calibrate --budget".into(),
        seed: common.seed,
        ..Default::default()
    };
    rep.meta
        .push(("calibration".into(), setup.spec.file.display().to_string()));
    rep.meta.push((
        "rule".into(),
        "per paper and in all, at most one fitted value (a free value or a choice made with the figures in view) per five independent figures (distinct measured numbers)".into(),
    ));
    rep.sections.push(budget_section(&setup.budget));
    Ok(rep.render(common.out_format()))
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
    // Checked before the fit, which takes minutes.
    let inputs: Vec<&Path> = [file.as_deref(), common.params.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    let out_file = report::Output::file(output, force, &inputs)?;
    let setup = Setup::load(common, file)?;
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
    out_file.write(text.as_bytes())?;
    let mut rep = Report {
        command: "calibrate".into(),
        seed: common.seed,
        ..Default::default()
    };
    rep.meta
        .push(("calibration".into(), spec.file.display().to_string()));
    rep.meta.push(("objective".into(), objective_text(spec)));
    for c in &spec.choices {
        rep.meta.push((
            "choice".into(),
            format!("{} ({}): {}", c.id, c.paper, c.choice),
        ));
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
    Ok(rep.render(common.out_format()))
}

/// Each free parameter: initial and fitted values, 95% interval, bound,
/// whether the figures pin it and by which.
fn parameters_section(f: &Fit) -> Section {
    let mut s = Section::new(
        "parameters",
        &[
            "parameter",
            "unit",
            "initial",
            "fitted",
            "ci95_low",
            "ci95_high",
            "bound",
            "pinned",
            "pinned_by",
            "meaning",
        ],
    );
    for p in &f.params {
        let k = p.free.unit_scale;
        let ((lo, hi), clipped) = p.ci95_in_bounds().unwrap_or(((f64::NAN, f64::NAN), false));
        let pinned = match (p.neighbour_rise, p.at_bound, p.ci95) {
            (Some(r), _, _) if r.is_finite() && p.pinned() => format!(
                "yes (discrete, at {}: a neighbouring choice raises the sum of squares by {:.1}% or more)",
                bound_word(p.at_bound),
                100.0 * r
            ),
            (Some(r), _, _) if r.is_finite() => format!(
                "no (discrete, at {}: a neighbouring choice changes the sum of squares by {:+.1}%)",
                bound_word(p.at_bound),
                100.0 * r
            ),
            (Some(_), _, _) => "no (discrete: no neighbouring choice)".to_string(),
            (None, Some(b), _) => format!("no: the fit pushes it to its {b} bound"),
            (None, None, None) => "no: no figure moves with it".to_string(),
            (None, None, Some(_)) if !p.pinned() => {
                "no: its interval is wider than its bounds".to_string()
            }
            _ => "yes".to_string(),
        };
        let pinned = if clipped {
            format!("{pinned} (95% interval clipped to its bounds)")
        } else {
            pinned
        };
        let by: Vec<String> = p
            .pinned_by
            .iter()
            .map(|(id, d)| format!("{id} ({d:+.2}%)"))
            .collect();
        s.rows.push(vec![
            Cell::Text(p.free.path.clone()),
            Cell::Text(p.free.unit.clone()),
            Cell::Num(p.free.initial / k, 4),
            Cell::Num(p.value / k, 4),
            Cell::Num(lo / k, 4),
            Cell::Num(hi / k, 4),
            bound_cell(p.at_bound),
            Cell::Text(pinned),
            Cell::Text(by.join("; ")),
            Cell::Text(p.free.meaning.clone()),
        ]);
    }
    s
}

/// The pairs of fitted parameters whose estimates correlate strongly.
fn correlations_section(f: &Fit) -> Section {
    let mut s = Section::new(
        "correlations",
        &["parameter_a", "parameter_b", "correlation"],
    );
    for (a, b, r) in &f.correlations {
        s.rows.push(vec![
            Cell::Text(a.clone()),
            Cell::Text(b.clone()),
            Cell::Num(*r, 3),
        ]);
    }
    s
}

/// The combinations of free parameters the figures leave unpinned (near-zero
/// singular values of the Jacobian): one row per parameter of each, with its
/// weight in the direction (scaled units); empty when the figures pin every
/// direction.
fn unpinned_section(f: &Fit) -> Section {
    let mut s = Section::new(
        "unpinned",
        &[
            "combination",
            "relative_singular_value",
            "parameter",
            "weight",
        ],
    );
    for (i, u) in f.unpinned.iter().enumerate() {
        for (path, w) in &u.weights {
            s.rows.push(vec![
                Cell::Int(i as u64 + 1),
                Cell::Num(u.relative_singular_value, 9),
                Cell::Text(path.clone()),
                Cell::Num(*w, 3),
            ]);
        }
    }
    s
}

/// MAPE per paper at the hand-set values, the values in use and the fitted ones.
fn compare_section(initial: &[FigureRow], hand: &[FigureRow], fitted: &[FigureRow]) -> Section {
    let mut s = Section::new(
        "mape",
        &[
            "paper",
            "figures",
            "hand_set_mape_pct",
            "in_use_mape_pct",
            "fitted_mape_pct",
            "fitted_worst_pct",
        ],
    );
    let (i, h) = (summarise(initial), summarise(hand));
    let of = |v: &[PaperSummary], paper: &str| {
        v.iter()
            .find(|x| x.paper == paper)
            .map(|x| x.mape)
            .unwrap_or(f64::NAN)
    };
    for p in summarise(fitted) {
        s.rows.push(vec![
            Cell::Text(p.paper.clone()),
            Cell::Int(p.figures as u64),
            Cell::Num(of(&i, &p.paper), 2),
            Cell::Num(of(&h, &p.paper), 2),
            Cell::Num(p.mape, 2),
            Cell::Num(p.worst_pct, 1),
        ]);
    }
    s
}

/// The fitted-parameter file `iosim calibrate` writes (read back with
/// `--params`): each free parameter, and each further parameter it also
/// sets, with its value in the calibration's unit, its 95% interval and notes.
/// The values are rounded to six decimals. A value that is not finite is an
/// error ([`iosim::Error::Internal`]: the fit went wrong), never written.
/// `search` (in words: from the initial values, or a refit from which values)
/// goes into the header, so that the file says how to reproduce it.
fn fitted_file(fit: &Fit, seed: u64, calibration: &str, search: &str) -> iosim::Result<String> {
    let comment = format!(
        "Written by iosim {} calibrate (seed {seed}) from {calibration}.\n\
         Search: {search}.\n\
         Apply with: iosim validate --params THIS_FILE. Models are never edited.",
        env!("CARGO_PKG_VERSION")
    );
    let mut entries = Vec::new();
    for p in &fit.params {
        let k = p.free.unit_scale;
        let mut notes = Vec::new();
        if let Some(b) = p.at_bound {
            notes.push(format!("at its {b} bound"));
        }
        if !p.pinned() {
            notes.push("not pinned by the figures".into());
        }
        let ci95 = p.ci95_in_bounds();
        if ci95.is_some_and(|c| c.1) {
            notes.push(format!(
                "95% interval clipped to its bounds, {} to {} {}",
                iosim::units::readable(p.free.min / k),
                iosim::units::readable(p.free.max / k),
                p.free.unit
            ));
        }
        for path in p.free.paths() {
            let mut n = notes.clone();
            if path != p.free.path {
                n.push(format!("the same value as {}", p.free.path));
            }
            entries.push(FittedEntry {
                path: path.to_string(),
                value: p.value / k,
                unit: p.free.unit.clone(),
                ci95: ci95.map(|((lo, hi), _)| (lo / k, hi / k)),
                note: n.join("; "),
            });
        }
    }
    fitted_file_text(&comment, &entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosim::calibrate::Unpinned;

    #[test]
    fn each_unpinned_combination_lists_its_parameters_and_weights() {
        let fit = Fit {
            params: Vec::new(),
            correlations: Vec::new(),
            unpinned: vec![Unpinned {
                weights: vec![("server.a.x".into(), 0.8), ("server.a.y".into(), 0.6)],
                relative_singular_value: 1e-9,
            }],
            degrees_of_freedom: 3,
            rows_initial: Vec::new(),
            rows_fitted: Vec::new(),
            iterations: 0,
            spent: iosim::calibrate::lm::Spent::default(),
        };
        let s = unpinned_section(&fit);
        assert_eq!(s.rows.len(), 2);
        assert!(matches!(&s.rows[1][2], Cell::Text(p) if p == "server.a.y"));
        assert!(matches!(s.rows[1][0], Cell::Int(1)));
        let none = Fit {
            unpinned: Vec::new(),
            ..fit
        };
        assert!(unpinned_section(&none).rows.is_empty());
    }
}
