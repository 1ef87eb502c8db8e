//! The report's sections: what each command prints, as [`Section`]s built from
//! the library's results (figures, experiments, fits, replications). The
//! binary only chooses which sections a command shows; [`crate::report`]
//! renders them and knows nothing of what they hold.

use crate::calibrate::{CrossValidation, Fit};
use crate::error::Result;
use crate::loader::{fitted_file_text, FittedEntry};
use crate::model::{negotiate_mode, CalibrationSpec, Registry, Scenario};
use crate::report::{escape_control, Cell, Format, Report, Section};
use crate::show::{NodeKind, ServerTree};
use crate::sim::ExperimentResult;
use crate::stats::mean_ci95;
use crate::units::BytesPerSec;
use crate::validate::{run_scenario, summarise, FigureRow, PaperSummary};

/// The columns every `figures` section starts with (the JSON contract).
pub const FIGURE_COLUMNS: [&str; 5] = ["id", "published", "predicted", "unit", "error_pct"];

/// Decimals that show a published value as written (at least 1, at most 3),
/// so a CPU figure of 2.75 % is not printed as 2.8.
fn published_decimals(v: f64) -> usize {
    (1..3)
        .find(|&d| {
            let scale = 10f64.powi(d as i32);
            ((v * scale).round() - v * scale).abs() < 1e-6
        })
        .unwrap_or(3)
}

/// A figure's cells under [`FIGURE_COLUMNS`]: a CPU utilisation (`%`) or a
/// service demand (`ms CPU per MB`) with two decimals, a throughput with one.
pub fn figure_cells(r: &FigureRow) -> Vec<Cell> {
    let predicted_decimals = if r.unit == "%" || r.unit == "ms CPU per MB" {
        2
    } else {
        1
    };
    vec![
        Cell::Text(r.id.clone()),
        Cell::Num(r.published, published_decimals(r.published)),
        Cell::Num(r.predicted, predicted_decimals),
        Cell::Text(r.unit.clone()),
        Cell::Num(r.error_pct, 1),
    ]
}

/// Each published figure beside its prediction, with its experiment, source and paper.
pub fn figures_section(rows: &[FigureRow]) -> Section {
    let mut s = Section::new(
        "figures",
        &[&FIGURE_COLUMNS[..], &["experiment", "source", "paper"]].concat(),
    );
    for r in rows {
        let mut cells = figure_cells(r);
        cells.extend([
            Cell::Text(r.experiment.clone()),
            Cell::Text(r.source.clone()),
            Cell::Text(r.paper.clone()),
        ]);
        s.rows.push(cells);
    }
    s
}

/// MAPE and worst error per paper.
pub fn papers_section(rows: &[FigureRow]) -> Section {
    let mut s = Section::new(
        "papers",
        &["paper", "figures", "mape_pct", "worst_pct", "worst_id"],
    );
    for p in summarise(rows) {
        s.rows.push(vec![
            Cell::Text(p.paper),
            Cell::Int(p.figures as u64),
            Cell::Num(p.mape, 2),
            Cell::Num(p.worst_pct, 1),
            Cell::Text(p.worst_id),
        ]);
    }
    s
}

/// What each experiment of a scenario puts where: server, cells, each card
/// in its slot and bus mode, and the workloads on its functions.
pub fn inputs_section(reg: &Registry, sc: &Scenario) -> Section {
    let mut s = Section::new(
        "inputs",
        &[
            "experiment",
            "server",
            "cells",
            "card",
            "adapter",
            "slot",
            "bus_mode",
            "workloads",
        ],
    );
    for e in &sc.experiments {
        for (ci, (label, adapter, slot)) in e.cards.iter().enumerate() {
            let mode = reg
                .servers
                .get(&e.server)
                .and_then(|srv| srv.slots.iter().find(|x| &x.name == slot))
                .and_then(|sl| {
                    reg.adapters
                        .get(adapter)
                        .and_then(|a| negotiate_mode(a, sl))
                })
                .unwrap_or_default();
            let a = &reg.adapters[adapter];
            let w: Vec<String> = e
                .workloads
                .iter()
                .filter(|w| w.card == ci)
                .map(|w| format!("{}: {w}", a.functions[w.function].name))
                .collect();
            s.rows.push(vec![
                Cell::Text(e.id.clone()),
                Cell::Text(e.server.clone()),
                Cell::Int(e.cells as u64),
                Cell::Text(label.clone()),
                Cell::Text(adapter.clone()),
                Cell::Text(slot.clone()),
                Cell::Text(mode),
                Cell::Text(w.join("; ")),
            ]);
        }
    }
    s
}

/// Throughput, link ceiling and utilisations of every adapter function.
pub fn functions_section(all: &[(&Scenario, Vec<ExperimentResult>)]) -> Section {
    let mut s = Section::new(
        "functions",
        &[
            "experiment",
            "function",
            "link",
            "out_MB_s",
            "in_MB_s",
            "total_MB_s",
            "total_Mbit_s",
            "link_ceiling_MB_s",
            "cpu_util_pct",
            "app_cpu_util_pct",
            "card_cpu_util_pct",
            "register_read_us",
            "link_out_util_pct",
            "link_in_util_pct",
        ],
    );
    for (_, results) in all {
        for r in results {
            for f in &r.functions {
                s.rows.push(vec![
                    Cell::Text(r.id.clone()),
                    Cell::Text(f.label.clone()),
                    Cell::Text(f.link.clone()),
                    Cell::Num(f.out.mb_s(), 1),
                    Cell::Num(f.inn.mb_s(), 1),
                    Cell::Num(f.total().mb_s(), 1),
                    Cell::Num(f.total().mbit_s(), 0),
                    Cell::Num(f.ceiling.mb_s(), 1),
                    Cell::Num(f.cpu_util * 100.0, 1),
                    Cell::Num(f.app_cpu_util * 100.0, 1),
                    Cell::Num(f.card_cpu_util * 100.0, 1),
                    Cell::Num(f.register_read.secs() * 1e6, 2),
                    Cell::Num(f.wire_out_util * 100.0, 1),
                    Cell::Num(f.wire_in_util * 100.0, 1),
                ]);
            }
        }
    }
    s
}

/// Every bus: mode, peak, data rate, utilisation, retries and the ropes above it.
pub fn buses_section(all: &[(&Scenario, Vec<ExperimentResult>)]) -> Section {
    let mut s = Section::new(
        "buses",
        &[
            "experiment",
            "bus",
            "mode",
            "peak_MB_s",
            "data_MB_s",
            "bus_util_pct",
            "retries_per_s",
            "rope_capacity_MB_s",
            "rope_up_MB_s",
            "rope_down_MB_s",
            "rope_util_pct",
            "io_controller",
            "io_controller_util_pct",
        ],
    );
    for (_, results) in all {
        for r in results {
            for b in &r.buses {
                s.rows.push(vec![
                    Cell::Text(r.id.clone()),
                    Cell::Text(b.label.clone()),
                    Cell::Text(b.mode.clone()),
                    Cell::Num(b.peak.mb_s(), 0),
                    Cell::Num(b.data.mb_s(), 1),
                    Cell::Num(b.util * 100.0, 1),
                    Cell::Num(b.retries_per_s, 0),
                    Cell::Num(b.rope_capacity.mb_s(), 0),
                    Cell::Num(b.rope_up.mb_s(), 1),
                    Cell::Num(b.rope_down.mb_s(), 1),
                    Cell::Num(b.rope_util * 100.0, 1),
                    Cell::Text(
                        b.controller
                            .as_ref()
                            .map_or_else(|| "none".to_string(), |c| c.0.clone()),
                    ),
                    Cell::Num(b.controller.as_ref().map_or(0.0, |c| c.1 * 100.0), 1),
                ]);
            }
        }
    }
    s
}

/// Every CPU of the partition: its utilisation and what runs there.
pub fn cpus_section(all: &[(&Scenario, Vec<ExperimentResult>)]) -> Section {
    let mut s = Section::new("cpus", &["experiment", "cpu", "util_pct", "work"]);
    for (_, results) in all {
        for r in results {
            for c in &r.cpu_list {
                s.rows.push(vec![
                    Cell::Text(r.id.clone()),
                    Cell::Int(c.cpu as u64),
                    Cell::Num(c.util * 100.0, 1),
                    Cell::Text(c.work.clone()),
                ]);
            }
        }
    }
    s
}

/// Each experiment's bottleneck, whole-machine CPU, and event count.
pub fn experiments_section(all: &[(&Scenario, Vec<ExperimentResult>)]) -> Section {
    let mut s = Section::new(
        "experiments",
        &[
            "scenario",
            "experiment",
            "bottleneck",
            "cpus",
            "cpu_util_pct",
            "memory_util_pct",
            "service_demand_us_per_KB",
            "events",
            "measured_ms",
            "throughput_ci95_pct",
        ],
    );
    for (sc, results) in all {
        for r in results {
            s.rows.push(vec![
                Cell::Text(sc.name.clone()),
                Cell::Text(r.id.clone()),
                Cell::Text(r.bottleneck.clone()),
                Cell::Int(u64::from(r.cpus)),
                Cell::Num(r.cpu_util * 100.0, 1),
                Cell::Num(r.memory_util.map_or(f64::NAN, |u| u * 100.0), 1),
                Cell::Num(r.service_demand_us_per_kb, 3),
                Cell::Int(r.events),
                Cell::Num(r.measured.secs() * 1e3, 1),
                Cell::Num(r.ci95_pct, 2),
            ]);
        }
    }
    s
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

/// Each free parameter: initial and fitted values, 95% interval, bound,
/// whether the figures pin it and by which.
pub fn parameters_section(f: &Fit) -> Section {
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

/// A discrete parameter's place among its choices, in words.
fn bound_word(b: Option<&str>) -> &str {
    match b {
        Some("min") => "its smallest choice",
        Some(_) => "its largest choice",
        None => "an inner choice",
    }
}

/// The pairs of fitted parameters whose estimates correlate strongly.
pub fn correlations_section(f: &Fit) -> Section {
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
pub fn unpinned_section(f: &Fit) -> Section {
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
pub fn compare_section(initial: &[FigureRow], hand: &[FigureRow], fitted: &[FigureRow]) -> Section {
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

/// Each free parameter as the full fit and every fold found it: a value that
/// moves far when a group is left out is one that group alone pins.
pub fn folds_section(cv: &CrossValidation) -> Section {
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
pub fn fold_objectives_section(cv: &CrossValidation) -> Section {
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

/// Every model parameter: value and unit as written, source, meaning and
/// `file:line` (`iosim params`).
pub fn params_section(reg: &mut Registry) -> Section {
    let mut s = Section::new(
        "parameters",
        &["parameter", "value", "unit", "source", "meaning", "file"],
    );
    for (prefix, set) in reg.param_sets_mut() {
        for (k, p) in &set.map {
            s.rows.push(vec![
                Cell::Text(format!("{prefix}.{k}")),
                Cell::Num(p.written, 4),
                Cell::Text(p.unit.clone()),
                Cell::Text(p.source.clone()),
                Cell::Text(p.meaning.into()),
                Cell::Text(format!("{}:{}", p.at.file.display(), p.at.line)),
            ]);
        }
    }
    s
}

/// The CSV files behind the charts of `iosim plot`, per paper:
/// `<paper>.csv`, the figures of the paper (the `figures` section). Returns
/// (file name, text) pairs; the caller writes them.
pub fn plot_files(rows: &[FigureRow], seed: u64) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for p in summarise(rows) {
        let mine: Vec<FigureRow> = rows
            .iter()
            .filter(|r| r.paper == p.paper)
            .cloned()
            .collect();
        let stem = p.paper.trim_end_matches(".txt").to_string();
        let rep = Report {
            command: "plot".into(),
            seed,
            meta: vec![],
            sections: vec![figures_section(&mine)],
        };
        files.push((format!("{stem}.csv"), rep.render(Format::Csv)));
    }
    files
}

/// The `figures` and `papers` sections of `validate --cross-validate`: each
/// figure as predicted by the fold that left its group out, beside its error
/// in the full fit, and the held-out and fitted MAPE per paper.
pub fn held_out_sections(cv: &CrossValidation) -> Vec<Section> {
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

/// The fitted-parameter file `iosim calibrate` writes (read back with
/// `--params`): each free parameter, and each further parameter it also
/// sets, with its value in the calibration's unit, its 95% interval and notes.
/// The values are rounded to six decimals. A value that is not finite is an
/// error ([`crate::Error::Internal`]: the fit went wrong), never written.
/// `search` (in words: from the initial values, or a refit from which values)
/// goes into the header, so that the file says how to reproduce it.
pub fn fitted_file(fit: &Fit, seed: u64, calibration: &str, search: &str) -> Result<String> {
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
        for path in p.free.paths() {
            let mut n = notes.clone();
            if path != p.free.path {
                n.push(format!("the same value as {}", p.free.path));
            }
            entries.push(FittedEntry {
                path: path.to_string(),
                value: p.value / k,
                unit: p.free.unit.clone(),
                ci95: p.ci95.map(|(lo, hi)| (lo / k, hi / k)),
                note: n.join("; "),
            });
        }
    }
    fitted_file_text(&comment, &entries)
}

/// What `run --replications` reports.
#[derive(Debug, Clone)]
pub struct Replications {
    /// Mean, 95% interval half-width and relative width of every function's
    /// throughput and every bus's utilisation.
    pub table: Section,
    /// The metrics whose interval is wider than the precision asked for
    /// (empty when none is).
    pub warnings: Section,
}

/// Runs `n` independent replications of `sc` (seeds derived from `seed`)
/// and reports the mean and 95% CI of every function's throughput and every
/// bus's utilisation, and the metrics whose interval is wider than
/// `precision` percent of the mean.
pub fn replications(
    reg: &Registry,
    sc: &Scenario,
    seed: u64,
    threads: usize,
    n: u32,
    precision: f64,
) -> Result<Replications> {
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
    let Some(first) = runs.first() else {
        return Ok(Replications {
            table,
            warnings: warn,
        });
    };
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
    Ok(Replications {
        table,
        warnings: warn,
    })
}

/// A node's facts in words: what the capacity column leaves out.
fn node_detail(tree: &ServerTree, i: usize) -> String {
    match &tree.nodes[i].kind {
        NodeKind::Memory {
            cells_max,
            cpus_per_cell,
            local_ns,
            remote_ns,
            cpu,
        } => match remote_ns {
            Some(remote_ns) => format!(
                "1 to {cells_max} cells x {cpus_per_cell} CPUs per cell; memory latency {local_ns} ns local, {remote_ns} ns remote; {cpu}"
            ),
            None => format!(
                "one memory, {cpus_per_cell} CPUs; memory latency {local_ns} ns; {cpu}"
            ),
        },
        NodeKind::IoController {
            packet_overhead,
            both_ways_mb_s,
            chassis,
        } => {
            let owner = match chassis {
                Some((k, Some(c))) => format!(
                    "; chassis {k}, on cell {c} (a partition of {} or more cells owns it)",
                    c + 1
                ),
                Some((k, None)) => format!("; chassis {k}"),
                None => String::new(),
            };
            let both = match both_ways_mb_s {
                Some(b) => format!(", {b:.0} MB/s both ways together"),
                None => String::new(),
            };
            format!(
                "link to memory, each way{both}; {packet_overhead} bytes overhead per packet{owner}"
            )
        }
        NodeKind::Segment {
            shared,
            mode,
            bridge,
        } => {
            let slots = tree
                .nodes
                .iter()
                .filter(|c| c.parent == Some(i))
                .count();
            let on = match shared {
                Some(_) => format!("bus shared by {slots} slots"),
                None => "the slot's own bus".to_string(),
            };
            let mode = mode.as_deref().unwrap_or("no mode common to its slots");
            format!(
                "{on}, {mode}; bridge: {} bytes posted-write buffer, {} delayed-read slots of {} bytes, retry after {} ns",
                bridge.posted_write_buffer,
                bridge.delayed_read_slots,
                bridge.delayed_read_prefetch,
                bridge.retry_interval
            )
        }
        NodeKind::Slot {
            modes,
            ropes,
            rope_capacity,
        } => format!(
            "modes {}; {ropes} ropes, {:.0} MB/s each way",
            modes.join(" "),
            rope_capacity.mb_s()
        ),
    }
}

/// A server's I/O tree, one row per node, parents first: node, kind, parent,
/// capacity and detail. With `indent`, each node's name is indented two
/// spaces per level (the text tree).
pub fn server_tree_section(tree: &ServerTree, indent: bool) -> Section {
    let mut s = Section::new(
        "server_tree",
        &["node", "kind", "parent", "capacity_MB_s", "detail"],
    );
    for (i, n) in tree.nodes.iter().enumerate() {
        let pad = if indent {
            "  ".repeat(n.depth)
        } else {
            String::new()
        };
        s.rows.push(vec![
            Cell::Text(format!("{pad}{}", n.id)),
            Cell::Text(n.kind.name().into()),
            Cell::Text(
                n.parent
                    .map_or_else(String::new, |p| tree.nodes[p].id.clone()),
            ),
            Cell::Num(n.capacity.map_or(f64::NAN, BytesPerSec::mb_s), 0),
            Cell::Text(node_detail(tree, i)),
        ]);
    }
    s
}

/// `s` as the inside of a Graphviz quoted string: control characters
/// written as escapes (as in the table), then backslashes and quotes escaped.
fn dot_quote(s: &str) -> String {
    escape_control(s).replace('\\', "\\\\").replace('"', "\\\"")
}

/// A server's I/O tree as a Graphviz digraph: memory at the top, an edge
/// from each node to each node under it, each node labelled with its name,
/// capacity and detail.
pub fn server_tree_dot(tree: &ServerTree) -> String {
    let mut out = format!(
        "digraph \"{}\" {{\n  node [shape=box];\n",
        dot_quote(&tree.server)
    );
    for (i, n) in tree.nodes.iter().enumerate() {
        let capacity = n
            .capacity
            .map_or_else(String::new, |c| format!("\\n{:.0} MB/s", c.mb_s()));
        out.push_str(&format!(
            "  \"{}\" [label=\"{}{capacity}\\n{}\"];\n",
            dot_quote(&n.id),
            dot_quote(&n.id),
            dot_quote(&node_detail(tree, i))
        ));
    }
    for n in &tree.nodes {
        if let Some(p) = n.parent {
            out.push_str(&format!(
                "  \"{}\" -> \"{}\";\n",
                dot_quote(&tree.nodes[p].id),
                dot_quote(&n.id)
            ));
        }
    }
    out.push_str("}\n");
    out
}

/// The sections of `iosim sweep`: `sweep`, one tidy row per (experiment,
/// point, metric) with the mean and 95% interval over the replications, and
/// `bottlenecks`, the bottleneck of each (experiment, point).
pub fn sweep_sections(scenario: &str, s: &crate::sweep::Sweep) -> Vec<Section> {
    let mut t = Section::new(
        "sweep",
        &[
            "scenario",
            "experiment",
            "point",
            "metric",
            "unit",
            "mean",
            "ci_low",
            "ci_high",
            "n",
        ],
    );
    for m in &s.metrics {
        t.rows.push(vec![
            Cell::Text(scenario.into()),
            Cell::Text(m.experiment.clone()),
            Cell::Text(s.points[m.point].label(&s.axes)),
            Cell::Text(m.metric.clone()),
            Cell::Text(m.unit.clone()),
            Cell::Num(m.mean, 3),
            Cell::Num(m.ci_low, 3),
            Cell::Num(m.ci_high, 3),
            Cell::Int(m.n as u64),
        ]);
    }
    let mut b = Section::new(
        "bottlenecks",
        &["scenario", "experiment", "point", "bottleneck"],
    );
    for (p, e, text) in &s.bottlenecks {
        b.rows.push(vec![
            Cell::Text(scenario.into()),
            Cell::Text(e.clone()),
            Cell::Text(s.points[*p].label(&s.axes)),
            Cell::Text(text.clone()),
        ]);
    }
    vec![t, b]
}

/// The charts of `sweep --plot`: one per (experiment, metric), the metric
/// against the first axis, one line per value of the second axis if any,
/// with the 95% interval as error bars. Returns (file stem, chart) pairs;
/// the caller renders and writes them.
pub fn sweep_plot_files(
    scenario: &str,
    s: &crate::sweep::Sweep,
    seed: u64,
) -> Vec<(String, crate::charts::Chart)> {
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for m in &s.metrics {
        let k = (m.experiment.clone(), m.metric.clone(), m.unit.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let Some(x_axis) = s.axes.first() else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for (exp, metric, unit) in keys {
        let mut lines: Vec<crate::charts::Line> = Vec::new();
        for m in s
            .metrics
            .iter()
            .filter(|m| m.experiment == exp && m.metric == metric)
        {
            let p = &s.points[m.point];
            let name = match (s.axes.get(1), p.values.get(1)) {
                (Some(a), Some(v)) => format!("{}={}", a.name, a.label_of(*v)),
                _ => metric.clone(),
            };
            let pos = match lines.iter().position(|l| l.name == name) {
                Some(i) => i,
                None => {
                    lines.push(crate::charts::Line {
                        name,
                        points: Vec::new(),
                    });
                    lines.len() - 1
                }
            };
            lines[pos]
                .points
                .push((p.values[0], m.mean, m.ci_low, m.ci_high));
        }
        let title = format!("{scenario} {exp}: {metric} (seed {seed})");
        let stem: String = format!("{exp}-{metric}")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        files.push((
            stem,
            crate::charts::Chart::Lines(crate::charts::LineChart {
                title,
                x_label: format!("{} ({})", x_axis.name, x_axis.unit),
                y_label: format!("{metric} ({unit})"),
                lines,
                x_names: if x_axis.knob.categorical() {
                    x_axis.labels.clone()
                } else {
                    Vec::new()
                },
            }),
        ));
    }
    files
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_published_value_is_shown_as_written() {
        assert_eq!(published_decimals(929.0), 1);
        assert_eq!(published_decimals(6.8), 1);
        assert_eq!(published_decimals(2.75), 2);
        assert_eq!(published_decimals(14.36), 2);
        assert_eq!(published_decimals(0.125), 3);
    }
    use super::*;
    use crate::calibrate::Unpinned;
    use crate::show::Node;

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
            spent: crate::calibrate::lm::Spent::default(),
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

    #[test]
    fn dot_names_are_escaped() {
        let tree = ServerTree {
            server: "a\"b\\c".into(),
            nodes: vec![Node {
                id: "x\"\\\n\x1b".into(),
                parent: None,
                depth: 0,
                capacity: Some(BytesPerSec(1e6)),
                kind: NodeKind::IoController {
                    packet_overhead: 8,
                    both_ways_mb_s: None,
                    chassis: None,
                },
            }],
        };
        let dot = server_tree_dot(&tree);
        assert!(dot.starts_with("digraph \"a\\\"b\\\\c\" {\n"), "{dot}");
        assert!(
            dot.contains("  \"x\\\"\\\\\\\\x0a\\\\x1b\" [label="),
            "{dot}"
        );
        assert!(!dot.contains('\x1b') && dot.lines().count() == 4, "{dot}");
    }
}
