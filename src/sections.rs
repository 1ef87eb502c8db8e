//! The report's sections: what each command prints, as [`Section`]s built from
//! the library's results (figures, experiments, fits, replications). Pure
//! formatting: nothing here runs a simulation, writes or prints. The
//! binary's commands choose which sections they show; [`crate::report`]
//! renders them and knows nothing of what they hold.

use crate::model::{negotiate_mode, Registry, Scenario};
use crate::report::{Cell, Section};
use crate::sim::ExperimentResult;
use crate::validate::{summarise, FigureRow};

/// The columns every `figures` section starts with (the JSON contract):
/// the figure, the model's value and its error, and the prediction's 90%
/// interval (`pi90_low`, `pi90_high`), its parameter and structural parts
/// (each a 90% half width in log space, in percent) and the mechanism
/// family whose structural spread it takes (see [`crate::interval`]).
pub const FIGURE_COLUMNS: [&str; 10] = [
    "id",
    "published",
    "predicted",
    "unit",
    "error_pct",
    "pi90_low",
    "pi90_high",
    "param_pct",
    "structural_pct",
    "family",
];

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
    .into_iter()
    .chain(interval_cells(&r.interval, predicted_decimals))
    .collect()
}

/// The columns of a prediction interval (see [`FIGURE_COLUMNS`]).
pub const INTERVAL_COLUMNS: [&str; 5] = [
    "pi90_low",
    "pi90_high",
    "param_pct",
    "structural_pct",
    "family",
];

/// A prediction interval's cells under [`INTERVAL_COLUMNS`], its ends
/// with `decimals`.
pub fn interval_cells(i: &crate::interval::Interval, decimals: usize) -> Vec<Cell> {
    vec![
        Cell::Num(i.low, decimals),
        Cell::Num(i.high, decimals),
        Cell::Num(i.param_pct, 2),
        Cell::Num(i.structural_pct, 1),
        Cell::Text(i.family_text()),
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
            "tx_underruns_per_s",
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
                    Cell::Num(f.tx_underruns_per_s, 0),
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

/// The columns of [`throughput_intervals_section`].
pub const THROUGHPUT_INTERVAL_COLUMNS: [&str; 9] = [
    "experiment",
    "function",
    "throughput_MB_s",
    "pi90_low",
    "pi90_high",
    "param_pct",
    "structural_pct",
    "family",
    "fitted_values_moved",
];

/// Each experiment's throughput per function (both ways added) and all
/// functions together, with its 90% prediction interval
/// ([`crate::interval`]): the parameter part from `moved` (per experiment,
/// its results with each fitted value it reads moved by one standard
/// error, [`crate::app::parameter_moves`]), the structural part from the
/// family of its bottleneck.
pub fn throughput_intervals_section(
    reg: &Registry,
    results: &[ExperimentResult],
    moved: &[Vec<ExperimentResult>],
) -> Section {
    let mut s = Section::new("intervals", &THROUGHPUT_INTERVAL_COLUMNS);
    for (i, r) in results.iter().enumerate() {
        let ms: &[ExperimentResult] = moved.get(i).map_or(&[], |m| m.as_slice());
        for (name, y, iv) in crate::interval::throughput_intervals(reg, r, ms) {
            let mut cells = vec![Cell::Text(r.id.clone()), Cell::Text(name), Cell::Num(y, 1)];
            cells.extend(interval_cells(&iv, 1));
            cells.push(Cell::Int(ms.len() as u64));
            s.rows.push(cells);
        }
    }
    s
}

/// The calibration status of each experiment (`calibration`: the assumed
/// values it reads, how many were moved, its largest move and whether it
/// is `uncalibrated`) and every assumed value each reads with its range
/// and the moves it causes (`assumed`), from `exps`: per experiment, its
/// id, the assumed values it reads and their [`Effect`]s (in `values`
/// order).
///
/// [`Effect`]: crate::sensitivity::Effect
pub fn calibration_sections(
    values: &[crate::sensitivity::Assumed],
    exps: &[(String, Vec<crate::sensitivity::Effect>)],
) -> [Section; 2] {
    use crate::sensitivity::status_of;
    let mut status = Section::new("calibration", &CALIBRATION_COLUMNS);
    let mut assumed = Section::new("assumed", &ASSUMED_COLUMNS);
    let pct = |x: f64| {
        if x.is_nan() {
            Cell::Blank
        } else {
            Cell::Num(x, 2)
        }
    };
    for (id, effects) in exps {
        let moved = effects.iter().filter(|e| !e.largest_pct().is_nan()).count();
        // The value that moves a throughput most (none when none moves one).
        let top = effects.iter().filter(|e| e.largest_pct().abs() > 0.0).fold(
            None::<&crate::sensitivity::Effect>,
            |best, e| match best {
                Some(b) if b.largest_pct().abs() >= e.largest_pct().abs() => Some(b),
                _ => Some(e),
            },
        );
        status.rows.push(vec![
            Cell::Text(id.clone()),
            Cell::Text(status_of(effects).into()),
            Cell::Int(effects.len() as u64),
            Cell::Int(moved as u64),
            Cell::Int(effects.iter().filter(|e| e.beyond).count() as u64),
            match top {
                Some(e) => pct(e.largest_pct()),
                None if moved > 0 => Cell::Num(0.0, 2),
                None => Cell::Blank,
            },
            top.map_or(Cell::Blank, |e| Cell::Text(values[e.value].path.clone())),
        ]);
        for e in effects {
            let v = &values[e.value];
            let end = |x: Option<f64>| x.map_or(Cell::Blank, |b| Cell::Num(b / v.per_unit, 4));
            assumed.rows.push(vec![
                Cell::Text(id.clone()),
                Cell::Text(v.path.clone()),
                Cell::Num(v.base / v.per_unit, 4),
                Cell::Text(v.unit.clone()),
                end(v.low),
                end(v.high),
                Cell::Text(v.basis.name().into()),
                pct(e.low_pct),
                pct(e.high_pct),
                Cell::Text(if e.beyond { "yes" } else { "no" }.into()),
            ]);
        }
    }
    [status, assumed]
}

/// The fields of [`calibration_sections`]' `calibration` section.
pub const CALIBRATION_COLUMNS: [&str; 7] = [
    "experiment",
    "status",
    "assumed_read",
    "assumed_moved",
    "beyond_interval",
    "largest_move_pct",
    "largest_by",
];

/// The fields of [`calibration_sections`]' `assumed` section.
pub const ASSUMED_COLUMNS: [&str; 10] = [
    "experiment",
    "parameter",
    "value",
    "unit",
    "range_low",
    "range_high",
    "range",
    "low_move_pct",
    "high_move_pct",
    "beyond_interval",
];

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
                Cell::Text(p.basis()),
                Cell::Text(p.meaning.into()),
                Cell::Text(format!("{}:{}", p.at.file.display(), p.at.line)),
            ]);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_value_is_shown_as_written() {
        assert_eq!(published_decimals(929.0), 1);
        assert_eq!(published_decimals(6.8), 1);
        assert_eq!(published_decimals(2.75), 2);
        assert_eq!(published_decimals(14.36), 2);
        assert_eq!(published_decimals(0.125), 3);
    }
}
