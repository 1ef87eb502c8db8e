//! `iosim validate --cross-validate`: each figure predicted by a fit that
//! left its fold out (every figure of one simulated run with its paper
//! figure or table), at three seeds (`--seed` and the next two): the
//! held-out MAPE per paper at each seed and their mean (`papers`); the first
//! seed's figures, folds' parameters and objectives (`figures`, `folds`,
//! `fold_objectives`). It reports; it never chooses a mechanism.

use std::path::PathBuf;
use std::time::Instant;

use iosim::app::Runner;
use iosim::calibrate::{cross_validate, CrossValidation};
use iosim::report::{Cell, Report, Section};
use iosim::sections::{figure_cells, FIGURE_COLUMNS};
use iosim::validate::{summarise, FigureRow, PaperSummary};

use super::fit::{bound_cell, objective_of, objective_text, progress_on, settings_of, Setup};
use super::{diag, Common};

/// `iosim validate --cross-validate`.
pub fn execute(
    common: &Common,
    file: &Option<PathBuf>,
    cold: bool,
    spread_out: Option<&iosim::report::Output>,
    runner: &Runner,
) -> iosim::Result<String> {
    let setup = Setup::load(common, file)?;
    let spec = &setup.spec;
    let start: Vec<f64> = spec.free.iter().map(|f| f.initial).collect();
    // The full fit: near the fit in use, unless asked cold or there is none.
    let cold = cold || common.hand_set;
    let from = (!cold).then_some(&setup.in_use[..]);
    let settings = settings_of(spec);
    let show = progress_on();
    let seeds: Vec<u64> = (0..CV_SEEDS).map(|k| common.seed.wrapping_add(k)).collect();
    let mut cvs: Vec<CrossValidation> = Vec::new();
    for &seed in &seeds {
        let t0 = Instant::now();
        let pb = setup.problem_at(seed, runner);
        let cv = cross_validate(
            &pb,
            &start,
            from,
            settings,
            objective_of(spec),
            |g, i, n| {
                if show {
                    diag(&format!(
                        "cross-validate: seed {seed}, fitting without {g} ({i}/{n})"
                    ));
                }
            },
        )?;
        diag(&format!(
            "cross-validate: seed {seed}, {} figures held out in turn, {} experiment runs, {:.1} s",
            cv.held.len(),
            pb.memo.runs(),
            t0.elapsed().as_secs_f64()
        ));
        cvs.push(cv);
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
        "each figure by a fit that left out its fold (its paper figure or table with every figure of the same simulated run), from the initial values across each parameter's range; structural choices are not refit per fold".into(),
    ));
    rep.meta.push((
        "seeds".into(),
        format!(
            "{} (papers: the held-out MAPE at each and their mean; figures, folds and fold_objectives: seed {})",
            seeds
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            common.seed
        ),
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
    // The full fit's figures at each seed: each figure's mechanism family
    // and the parameter part of its interval.
    let (used, _) = common.registry()?;
    let mut at_seed = Vec::new();
    for &seed in &seeds {
        at_seed.push(iosim::app::validation(&used, None, seed, runner)?.rows);
    }
    let cov = coverage(&cvs, &at_seed, &seeds);
    // The first seed's figures carry the intervals the coverage judged.
    if let Some(first) = cvs.first_mut() {
        for h in &mut first.held {
            if let Some(iv) = cov.first_seed.get(&h.row.id) {
                h.row.interval = *iv;
            }
        }
    }
    rep.sections.extend(held_out_sections(&cvs, &seeds));
    rep.meta.push((
        "coverage".into(),
        format!(
            "the share of held-out figures inside their 90% prediction interval: the fold's prediction, the parameter part of the full fit at that seed, and the structural part by mechanism family estimated from the held-out figures of the other papers at that seed (leave one paper out; a family with fewer than {} such figures takes {} times the spread of all of them); the target for a 90% interval is 85-95%",
            iosim::interval::MIN_FAMILY_FIGURES,
            iosim::interval::DEFAULT_SPREAD_FACTOR
        ),
    ));
    rep.sections.push(cov.section);
    rep.sections.push(spread_section(&cov.spread));
    if let Some(out) = spread_out {
        let comment = format!(
            "Written by iosim {} validate --cross-validate (seeds {}) from {}.\nThe structural spread of the model by mechanism family: the root mean square of ln(published / predicted)\nover the figures held out of the fit, every paper, every seed; a family with fewer than {} held-out figures\ntakes the default, {} times the spread of all of them. Read by the prediction intervals (--spread FILE).",
            env!("CARGO_PKG_VERSION"),
            seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
            spec.file.display(),
            iosim::interval::MIN_FAMILY_FIGURES,
            iosim::interval::DEFAULT_SPREAD_FACTOR
        );
        out.write(iosim::loader::spread_file_text(&comment, &cov.spread)?.as_bytes())?;
    }
    if let Some(cv) = cvs.first() {
        rep.sections.push(folds_section(cv));
        rep.sections.push(fold_objectives_section(cv));
    }
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

/// Seeds a cross-validation runs: `--seed` and the next two.
const CV_SEEDS: u64 = 3;

/// The `figures` and `papers` sections of `validate --cross-validate`: each
/// figure as predicted by the fold that left it out at the first seed,
/// beside its error in the full fit, with the 90% interval its coverage
/// judged; per paper, the held-out MAPE at each
/// seed, their mean, the worst held-out error at any seed and the fitted
/// MAPE's mean.
fn held_out_sections(cvs: &[CrossValidation], seeds: &[u64]) -> Vec<Section> {
    let Some(first) = cvs.first() else {
        return Vec::new();
    };
    let mut s = Section::new(
        "figures",
        &[
            &FIGURE_COLUMNS[..],
            &["fitted_error_pct", "held_out_group", "paper"],
        ]
        .concat(),
    );
    for h in &first.held {
        let mut cells = figure_cells(&h.row);
        cells.extend([
            Cell::Num(h.fitted_error_pct, 1),
            Cell::Text(h.group.clone()),
            Cell::Text(h.row.paper.clone()),
        ]);
        s.rows.push(cells);
    }
    // Per seed: the held-out and the fitted summaries per paper.
    let per_seed: Vec<(Vec<PaperSummary>, Vec<PaperSummary>)> = cvs
        .iter()
        .map(|cv| {
            let rows: Vec<FigureRow> = cv.held.iter().map(|h| h.row.clone()).collect();
            let fitted: Vec<FigureRow> = cv
                .held
                .iter()
                .map(|h| FigureRow {
                    error_pct: h.fitted_error_pct,
                    ..h.row.clone()
                })
                .collect();
            (summarise(&rows), summarise(&fitted))
        })
        .collect();
    let seed_columns: Vec<String> = seeds
        .iter()
        .map(|k| format!("held_out_mape_seed{k}_pct"))
        .collect();
    let mut columns: Vec<&str> = vec!["paper", "figures"];
    columns.extend(seed_columns.iter().map(String::as_str));
    columns.extend(["held_out_mape_pct", "held_out_worst_pct", "fitted_mape_pct"]);
    let mut p = Section::new("papers", &columns);
    let find = |xs: &[PaperSummary], paper: &str| xs.iter().find(|y| y.paper == paper).cloned();
    for x in &per_seed[0].0 {
        let held: Vec<PaperSummary> = per_seed
            .iter()
            .filter_map(|(h, _)| find(h, &x.paper))
            .collect();
        let fitted: Vec<f64> = per_seed
            .iter()
            .filter_map(|(_, f)| find(f, &x.paper))
            .map(|y| y.mape)
            .collect();
        let mean = |v: &[f64]| {
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let mapes: Vec<f64> = held.iter().map(|y| y.mape).collect();
        let mut cells = vec![Cell::Text(x.paper.clone()), Cell::Int(x.figures as u64)];
        cells.extend(mapes.iter().map(|m| Cell::Num(*m, 2)));
        cells.extend([
            Cell::Num(mean(&mapes), 2),
            Cell::Num(
                held.iter().map(|y| y.worst_pct).fold(f64::NAN, |a, b| {
                    if a.abs() >= b.abs() {
                        a
                    } else {
                        b
                    }
                }),
                1,
            ),
            Cell::Num(mean(&fitted), 2),
        ]);
        p.rows.push(cells);
    }
    vec![s, p]
}

/// What the coverage of the held-out figures found.
struct Coverage {
    /// Per paper and in all, the share inside the interval at each seed
    /// and their mean.
    section: Section,
    /// The structural spread of every paper's held-out figures at every
    /// seed (what `--spread-out` writes).
    spread: iosim::model::StructuralSpread,
    /// Each held-out figure's interval at the first seed, by id.
    first_seed: std::collections::HashMap<String, iosim::interval::Interval>,
}

/// The log residual `ln(published / predicted)` of a row (NaN if either
/// is not positive).
fn log_residual(r: &FigureRow) -> f64 {
    if r.published > 0.0 && r.predicted > 0.0 {
        (r.published / r.predicted).ln()
    } else {
        f64::NAN
    }
}

/// The share of held-out figures inside their 90% interval per paper and
/// in all, at each seed and the mean: each figure's interval is its
/// fold's prediction with the parameter part of the full fit at that seed
/// (`at_seed`: the full fit's rows at each seed, with their families) and
/// the structural spread estimated from the other papers' held-out
/// figures at that seed.
fn coverage(cvs: &[CrossValidation], at_seed: &[Vec<FigureRow>], seeds: &[u64]) -> Coverage {
    use iosim::interval::{spread_from, Interval, Z90};
    use std::collections::HashMap;
    let mut columns: Vec<String> = vec!["paper".into(), "figures".into()];
    columns.extend(seeds.iter().map(|k| format!("coverage_seed{k}_pct")));
    columns.extend(["coverage_pct".into(), "mean_pi90_half_pct".into()]);
    let cols: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut section = Section::new("coverage", &cols);
    let mut pooled: Vec<(iosim::model::Family, f64)> = Vec::new();
    // Per seed, per paper: (inside, counted, sum of half widths in log %).
    let mut per_seed: Vec<HashMap<String, (usize, usize, f64)>> = Vec::new();
    let mut papers: Vec<String> = Vec::new();
    let mut first_seed = HashMap::new();
    for (k, (cv, full)) in cvs.iter().zip(at_seed).enumerate() {
        let by_id: HashMap<&str, &FigureRow> = full.iter().map(|r| (r.id.as_str(), r)).collect();
        let held: Vec<(&FigureRow, iosim::model::Family, f64)> = cv
            .held
            .iter()
            .filter_map(|h| {
                let f = by_id.get(h.row.id.as_str())?;
                let sigma_p = f.interval.param_pct / (100.0 * Z90);
                Some((&h.row, f.interval.family, sigma_p))
            })
            .collect();
        pooled.extend(held.iter().map(|(r, f, _)| (*f, log_residual(r))));
        let mut counts: HashMap<String, (usize, usize, f64)> = HashMap::new();
        for (r, family, sigma_p) in &held {
            if !papers.contains(&r.paper) {
                papers.push(r.paper.clone());
            }
            let others: Vec<(iosim::model::Family, f64)> = held
                .iter()
                .filter(|(o, _, _)| o.paper != r.paper)
                .map(|(o, f, _)| (*f, log_residual(o)))
                .collect();
            let Some(spread) = spread_from(&others, 1, "leave one paper out") else {
                continue;
            };
            if !log_residual(r).is_finite() {
                continue;
            }
            let sigma_p = if sigma_p.is_finite() { *sigma_p } else { 0.0 };
            let iv = Interval::of(r.predicted, Some(sigma_p), *family, &spread);
            if k == 0 {
                first_seed.insert(r.id.clone(), iv);
            }
            let half = 100.0 * (iv.high / r.predicted).ln();
            let c = counts.entry(r.paper.clone()).or_default();
            c.0 += usize::from(iv.covers(r.published));
            c.1 += 1;
            c.2 += half;
        }
        per_seed.push(counts);
    }
    let share = |c: Option<&(usize, usize, f64)>| {
        c.filter(|c| c.1 > 0)
            .map_or(f64::NAN, |c| 100.0 * c.0 as f64 / c.1 as f64)
    };
    let mean = |v: &[f64]| {
        let v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let mut row = |name: String, cs: Vec<Option<(usize, usize, f64)>>| {
        let shares: Vec<f64> = cs.iter().map(|c| share(c.as_ref())).collect();
        let halves: Vec<f64> = cs
            .iter()
            .flatten()
            .filter(|c| c.1 > 0)
            .map(|c| c.2 / c.1 as f64)
            .collect();
        let n = cs.first().cloned().flatten().map_or(0, |c| c.1);
        let mut cells = vec![Cell::Text(name), Cell::Int(n as u64)];
        cells.extend(shares.iter().map(|s| Cell::Num(*s, 1)));
        cells.push(Cell::Num(mean(&shares), 1));
        cells.push(Cell::Num(mean(&halves), 1));
        section.rows.push(cells);
    };
    for p in &papers {
        row(
            p.clone(),
            per_seed.iter().map(|m| m.get(p).cloned()).collect(),
        );
    }
    let all: Vec<Option<(usize, usize, f64)>> = per_seed
        .iter()
        .map(|m| {
            Some(
                m.values()
                    .fold((0, 0, 0.0), |a, c| (a.0 + c.0, a.1 + c.1, a.2 + c.2)),
            )
        })
        .collect();
    row("all".into(), all);
    let spread = spread_from(&pooled, seeds.len(), "validate --cross-validate").unwrap_or_default();
    Coverage {
        section,
        spread,
        first_seed,
    }
}

/// The structural spread of every paper's held-out figures (what
/// `--spread-out` writes): per family its standard deviation in log space,
/// the 90% half width it gives, and the figures behind it.
fn spread_section(s: &iosim::model::StructuralSpread) -> Section {
    let mut sec = Section::new(
        "spread",
        &["family", "sigma_log", "structural_pct", "figures"],
    );
    for f in iosim::model::Family::ALL {
        let (sigma, pinned) = s.sigma_of(f);
        let n = s
            .families
            .iter()
            .find(|x| x.family == f)
            .map_or(0, |x| x.figures);
        sec.rows.push(vec![
            Cell::Text(if pinned {
                f.name().to_string()
            } else {
                format!("{} (default)", f.name())
            }),
            Cell::Num(sigma, 4),
            Cell::Num(100.0 * iosim::interval::Z90 * sigma, 1),
            Cell::Int(n as u64),
        ]);
    }
    sec
}
