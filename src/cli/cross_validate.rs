//! `iosim validate --cross-validate`: each figure predicted by a fit that
//! left its group out (`figures`, `papers` of the held-out predictions),
//! with the folds' parameters and objectives (`folds`, `fold_objectives`).

use std::path::PathBuf;
use std::time::Instant;

use iosim::app::Runner;
use iosim::calibrate::{cross_validate, CrossValidation};
use iosim::report::{Cell, Report, Section};
use iosim::sections::{figure_cells, FIGURE_COLUMNS};
use iosim::validate::{summarise, FigureRow};

use super::fit::{bound_cell, objective_of, objective_text, progress_on, settings_of, Setup};
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
    Ok(rep.render(common.out_format()))
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

/// Each fold's own objective (its training figures and the prior over the
/// parameters it refits) at its fit and at the full fit's values, and how
/// much lower the latter is in percent: a positive `full_fit_lower_pct`
/// means the fold's search, from the initial values, ended in a basin its
/// own figures score worse than one that exists (which need not predict
/// the group better: see README.md). Beside them, the group's held-out
/// MAPE (its figures with a finite error). Folds that refit nothing are
/// left out.
fn fold_objectives_section(cv: &CrossValidation) -> Section {
    let mut s = Section::new(
        "fold_objectives",
        &[
            "held_out_group",
            "held_out_mape_pct",
            "objective_fold_fit",
            "objective_full_fit",
            "full_fit_lower_pct",
        ],
    );
    for fold in &cv.folds {
        let Some(o) = fold.objectives else {
            continue;
        };
        // One group is one paper's: its summary is the group's.
        let rows: Vec<FigureRow> = cv
            .held
            .iter()
            .filter(|h| h.group == fold.group && h.row.error_pct.is_finite())
            .map(|h| h.row.clone())
            .collect();
        let mape = summarise(&rows).first().map_or(f64::NAN, |x| x.mape);
        s.rows.push(vec![
            Cell::Text(fold.group.clone()),
            Cell::Num(mape, 2),
            Cell::Num(o.at_fold_fit, 6),
            Cell::Num(o.at_full_fit, 6),
            Cell::Num(
                if o.at_fold_fit > 0.0 {
                    100.0 * (o.at_fold_fit - o.at_full_fit) / o.at_fold_fit
                } else {
                    0.0
                },
                2,
            ),
        ]);
    }
    s
}

/// The `figures` and `papers` sections of `validate --cross-validate`: each
/// figure as predicted by the fold that left its group out, beside its error
/// in the full fit, and the held-out and fitted MAPE per paper.
fn held_out_sections(cv: &CrossValidation) -> Vec<Section> {
    let held = &cv.held;
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
    vec![s, p]
}
