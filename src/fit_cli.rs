//! Command glue for `iosim calibrate`, `validate --cross-validate` and
//! `run --replications`: flags in, library calls, report sections out.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use iosim::calibrate::{
    cross_validate, fit, lm::LmSettings, CrossValidation, Fit, Objective, Problem,
};
use iosim::loader::{
    load_bundled_calibration, load_bundled_scenarios, load_calibration, load_registry,
};
use iosim::model::{CalibrationSpec, Registry, Scenario};
use iosim::report::{self, Cell, Report, Section};
use iosim::stats::mean_ci95;
use iosim::validate::{run_scenario, summarise, FigureRow};
use iosim::Error;

use super::{figure_cells, figures_section, Common, FIGURE_COLUMNS};

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
        scenarios.retain(Scenario::has_figures);
        check_budget(&spec, &scenarios)?;
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
        }
    }
}

/// The objective in words, for the report's header.
fn objective_text(spec: &CalibrationSpec) -> String {
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
) -> iosim::Result<String> {
    let setup = Setup::load(common, file)?;
    let spec = &setup.spec;
    let pb = setup.problem(common);
    let hand_rows = pb.rows_at(&setup.in_use)?;
    let start: Vec<f64> = spec.free.iter().map(|f| f.initial).collect();
    let t0 = Instant::now();
    let settings = settings_of(spec);
    let show = progress_on();
    let f = fit(
        &pb,
        &start,
        |_| true,
        settings,
        objective_of(spec),
        |it, c| {
            if show {
                eprintln!("calibrate: iteration {it}, sum of squared relative errors {c:.5}");
            }
        },
    )?;
    eprintln!(
        "calibrate: {} iterations, {} model evaluations, {:.1} s",
        f.iterations,
        f.evaluations,
        t0.elapsed().as_secs_f64()
    );
    let text = report::fitted_toml(&f, common.seed, &spec.file.display().to_string());
    report::write_file(output, &text).map_err(|source| Error::Io {
        path: output.to_path_buf(),
        source,
    })?;
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
    rep.meta
        .push(("written".into(), output.display().to_string()));
    rep.meta
        .push(("iterations".into(), f.iterations.to_string()));
    rep.meta
        .push(("evaluations".into(), f.evaluations.to_string()));
    rep.sections.push(parameters_section(&f));
    rep.sections.push(correlations_section(&f));
    rep.sections.push(figures_section(&f.rows_fitted));
    rep.sections
        .push(compare_section(&f.rows_initial, &hand_rows, &f.rows_fitted));
    Ok(rep.render(common.format.into()))
}

/// At most one fitted value (free parameters and the structural choices the
/// calibration names as not refit) per five published figures.
fn check_budget(spec: &CalibrationSpec, scenarios: &[Scenario]) -> iosim::Result<()> {
    let figures: usize = scenarios
        .iter()
        .flat_map(|s| &s.experiments)
        .map(|e| e.figures.len())
        .sum();
    let fitted = spec.free.len() + spec.not_refit.len();
    if fitted * 5 > figures {
        let at = spec
            .free
            .last()
            .map(|f| f.at.clone())
            .expect("a calibration has free parameters");
        return Err(Error::Invalid {
            at,
            message: format!(
                "{} free parameters and {} fitted values not refit for {figures} published figures: at most one fitted value per five figures",
                spec.free.len(),
                spec.not_refit.len()
            ),
        });
    }
    Ok(())
}

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
        let (lo, hi) = p.ci95.unwrap_or((f64::NAN, f64::NAN));
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

/// `at min`, `at max` or `inside`.
fn bound_cell(b: Option<&str>) -> Cell {
    Cell::Text(
        b.map(|b| format!("at {b}"))
            .unwrap_or_else(|| "inside".into()),
    )
}

fn bound_word(b: Option<&str>) -> &str {
    match b {
        Some("min") => "its smallest choice",
        Some(_) => "its largest choice",
        None => "an inner choice",
    }
}

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
    let of = |v: &[iosim::validate::PaperSummary], paper: &str| {
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

/// `iosim validate --cross-validate`.
pub fn cross_validate_cmd(common: &Common, file: &Option<PathBuf>) -> iosim::Result<String> {
    let setup = Setup::load(common, file)?;
    let spec = &setup.spec;
    let pb = setup.problem(common);
    let start: Vec<f64> = spec.free.iter().map(|f| f.initial).collect();
    let settings = settings_of(spec);
    let t0 = Instant::now();
    let show = progress_on();
    let cv = cross_validate(&pb, &start, settings, objective_of(spec), |g, i, n| {
        if show {
            eprintln!("cross-validate: fitting without {g} ({i}/{n})");
        }
    })?;
    let held = &cv.held;
    eprintln!(
        "cross-validate: {} figures held out in turn, {:.1} s",
        held.len(),
        t0.elapsed().as_secs_f64()
    );
    let mut s = Section::new(
        "figures",
        &[
            &FIGURE_COLUMNS[..],
            &["fitted_error_pct", "held_out_group", "paper"],
        ]
        .concat(),
    );
    for h in held {
        let mut cells = figure_cells(&h.row);
        cells.extend([
            Cell::Num(h.fitted_error_pct, 1),
            Cell::Text(h.group.clone()),
            Cell::Text(h.row.paper.clone()),
        ]);
        s.rows.push(cells);
    }
    let rows: Vec<FigureRow> = held.iter().map(|h| h.row.clone()).collect();
    let fitted: Vec<FigureRow> = held
        .iter()
        .map(|h| FigureRow {
            error_pct: h.fitted_error_pct,
            ..h.row.clone()
        })
        .collect();
    let mut p = Section::new(
        "papers",
        &[
            "paper",
            "figures",
            "held_out_mape_pct",
            "held_out_worst_pct",
            "fitted_mape_pct",
        ],
    );
    let fs = summarise(&fitted);
    for x in summarise(&rows) {
        let fm = fs
            .iter()
            .find(|y| y.paper == x.paper)
            .map(|y| y.mape)
            .unwrap_or(f64::NAN);
        p.rows.push(vec![
            Cell::Text(x.paper),
            Cell::Int(x.figures as u64),
            Cell::Num(x.mape, 2),
            Cell::Num(x.worst_pct, 1),
            Cell::Num(fm, 2),
        ]);
    }
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
        "each figure by a fit that left out its group (paper figure or table)".into(),
    ));
    rep.sections.push(s);
    rep.sections.push(p);
    rep.sections.push(folds_section(&cv));
    Ok(rep.render(common.format.into()))
}

/// Each free parameter as the full fit and every fold found it: a value that
/// moves far when a group is left out is one that group alone pins.
fn folds_section(cv: &CrossValidation) -> Section {
    let mut s = Section::new(
        "folds",
        &[
            "parameter",
            "unit",
            "fitted_all",
            "held_out_group",
            "fitted_without",
            "bound",
        ],
    );
    for (i, a) in cv.all.iter().enumerate() {
        let k = a.free.unit_scale;
        for fold in &cv.folds {
            let Some(p) = fold.params.get(i) else {
                continue;
            };
            s.rows.push(vec![
                Cell::Text(a.free.path.clone()),
                Cell::Text(a.free.unit.clone()),
                Cell::Num(a.value / k, 4),
                Cell::Text(fold.group.clone()),
                Cell::Num(p.value / k, 4),
                bound_cell(p.at_bound),
            ]);
        }
    }
    s
}

/// Mean and 95% CI of every function's throughput and every bus's
/// utilisation over independent replications, and the metrics whose
/// interval is wider than `precision` percent of the mean.
pub fn replications_sections(
    reg: &Registry,
    sc: &Scenario,
    seed: u64,
    threads: usize,
    n: u32,
    precision: f64,
) -> iosim::Result<Vec<Section>> {
    let mut runs = Vec::new();
    for r in 0..n as u64 {
        let s = seed ^ r.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        runs.push(run_scenario(reg, sc, s, threads)?);
    }
    let mut table = Section::new(
        "replications",
        &[
            "experiment",
            "metric",
            "unit",
            "mean",
            "ci95_half",
            "ci95_rel_pct",
            "replications",
        ],
    );
    let mut warn = Section::new(
        "warnings",
        &["experiment", "metric", "ci95_rel_pct", "precision_pct"],
    );
    let first = &runs[0];
    for (ei, e) in first.iter().enumerate() {
        let mut metrics: Vec<(String, &str, Vec<f64>)> = Vec::new();
        for (fi, f) in e.functions.iter().enumerate() {
            metrics.push((
                format!("{} total", f.label),
                "MB/s",
                runs.iter()
                    .map(|r| r[ei].functions[fi].total().mb_s())
                    .collect(),
            ));
        }
        for (bi, b) in e.buses.iter().enumerate() {
            metrics.push((
                format!("bus {} utilisation", b.label),
                "percent",
                runs.iter().map(|r| r[ei].buses[bi].util * 100.0).collect(),
            ));
        }
        for (name, unit, xs) in metrics {
            let (m, h) = mean_ci95(&xs);
            let rel = if m.abs() > 1e-12 {
                h / m.abs() * 100.0
            } else {
                0.0
            };
            table.rows.push(vec![
                Cell::Text(e.id.clone()),
                Cell::Text(name.clone()),
                Cell::Text(unit.into()),
                Cell::Num(m, 3),
                Cell::Num(h, 3),
                Cell::Num(rel, 2),
                Cell::Int(n as u64),
            ]);
            if rel.is_finite() && rel > precision {
                warn.rows.push(vec![
                    Cell::Text(e.id.clone()),
                    Cell::Text(name),
                    Cell::Num(rel, 2),
                    Cell::Num(precision, 2),
                ]);
            }
        }
    }
    if !warn.rows.is_empty() {
        eprintln!("warning: {} metrics have a 95% interval wider than {precision}% of their mean; add replications or lengthen [run] duration_ms", warn.rows.len());
    }
    Ok(vec![table, warn])
}
