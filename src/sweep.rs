//! What-if sweeps (`iosim sweep`): one scenario run at every point of one or
//! two varied quantities (cells, socket/send/block size, I/Os in flight, or
//! any model parameter by its dotted path), with every metric of each point
//! summarised over replications (mean and 95% interval).
//!
//! [`plan_sweep`] checks the sweep and every point of it before anything
//! runs; [`Plan::run`] runs the points (all, or one shard's range) in
//! chunks through [`crate::app::run_experiments`], each chunk's registries
//! and scenarios built as data and dropped once its points are handed on,
//! so memory does not grow with the grid. Results do not depend on the
//! number of threads or on the chunks: each point keeps its experiment's
//! seed (common random numbers), so differences between points are the
//! model's, not the noise's.

use std::collections::HashMap;

use crate::app::{replication_seed, run_experiments, Job, Runner};
use crate::error::{Error, Result};
use crate::model::{
    fit_cards, fit_segments, negotiate_mode, CardProblem, Demand, Experiment, Registry, Scenario,
    Workload,
};
use crate::sim::ExperimentResult;
use crate::stats::mean_ci95;
use crate::units::readable;

/// What one `--vary` changes.
#[derive(Debug, Clone, PartialEq)]
pub enum Knob {
    /// Cells in the partition.
    Cells,
    /// Socket buffer of every netperf workload, KiB.
    SocketKib,
    /// Send (message) size of every netperf workload, KiB.
    MessageKib,
    /// Block size of every diskbench or raw DMA workload, KiB.
    BlockKib,
    /// I/Os (blocks) in flight of every diskbench or raw DMA workload.
    Outstanding,
    /// A model parameter by its dotted path, values in its base unit.
    Param(String),
    /// The slot of one card (by its label; `None`: the experiment's only
    /// card), over the axis's labels (slot names; the values are their
    /// indices).
    Slot(Option<String>),
    /// The link one card's functions run over instead of their adapter's
    /// (the scenario's per-card `link`: an MTU or an encapsulation), over
    /// the axis's labels (link names); card `*`: every card's.
    Link(Option<String>),
    /// How many copies of one card the experiment has (values: counts, 1
    /// being the card alone), each with the card's workloads and link; the
    /// copies go into `slots` in order, or, when it is empty, into the
    /// server's free slots in order (held by no card, owned by the
    /// partition, and of a mode the adapter runs).
    Adapters {
        /// The card copied (`None`: the experiment's only card).
        card: Option<String>,
        /// The slots of copies 2, 3, ...
        slots: Vec<String>,
    },
}

impl Knob {
    /// Whether the values are names (slots, links) rather than numbers.
    pub fn categorical(&self) -> bool {
        matches!(self, Knob::Slot(_) | Knob::Link(_))
    }
}

/// One varied quantity and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The name as given (`cells`, `server.rp8400-seu.io_read_latency`).
    pub name: String,
    /// What it changes.
    pub knob: Knob,
    /// The values: KiB, counts, or the parameter's base unit; for a
    /// categorical knob, the index of each label.
    pub values: Vec<f64>,
    /// Each value as shown (`64`, `slot-5`, `atm622-lane9218`).
    pub labels: Vec<String>,
    /// The unit of `values` (`KiB`, `count`, `ns`, ...).
    pub unit: String,
    /// What a value means beside its label, shown in parentheses after it
    /// (a slot's bus mode, `pcix133`, once the sweep has fitted the card
    /// there); empty, or an empty string for a value without one.
    pub notes: Vec<String>,
}

/// The workload knobs `--vary` accepts by name.
pub const KNOBS: &str = "cells, socket_kib, message_kib, block_kib, outstanding, slot[:CARD], link[:CARD], adapters[:CARD][@SLOT,SLOT,...], or a model parameter's dotted path as `iosim params` names it";

fn bad(spec: &str, why: impl std::fmt::Display) -> Error {
    Error::Usage(format!("--vary {spec}: {why}"))
}

/// Splits `500ns` or `500 ns` into 500 and `ns` (an empty unit when none).
fn quantity(s: &str) -> Option<(f64, String)> {
    let s = s.trim();
    let b = s.as_bytes();
    let mut end = 0;
    while end < b.len() {
        let c = b[end] as char;
        let exp = (c == 'e' || c == 'E')
            && end > 0
            && b.get(end + 1)
                .is_some_and(|n| n.is_ascii_digit() || *n == b'-' || *n == b'+');
        if c.is_ascii_digit() || c == '.' || ((c == '-' || c == '+') && end == 0) || exp {
            end += if exp { 2 } else { 1 };
        } else {
            break;
        }
    }
    let v: f64 = s[..end].parse().ok()?;
    v.is_finite().then(|| (v, s[end..].trim().to_string()))
}

/// The values of a list `a,b,c`, a range `a..b` (whole steps of 1, both
/// ends included) or `a:b:step` (both ends included), each with its unit.
fn list(spec: &str, text: &str) -> Result<Vec<(f64, String)>> {
    let text = text.trim();
    if text.is_empty() {
        return Err(bad(spec, "an empty list of values"));
    }
    let q = |s: &str| quantity(s).ok_or_else(|| bad(spec, format!("`{s}` is not a number")));
    let span = |lo: (f64, String), hi: (f64, String), step: (f64, String)| {
        if lo.1 != hi.1 || lo.1 != step.1 && !step.1.is_empty() {
            return Err(bad(
                spec,
                "the ends and step of a range must have the same unit",
            ));
        }
        if step.0.is_nan() || step.0 <= 0.0 || hi.0 < lo.0 {
            return Err(bad(
                spec,
                "a malformed range: expected low..high or low:high:step with low <= high and a positive step",
            ));
        }
        let n = ((hi.0 - lo.0) / step.0 + 1e-9).floor() as u64 + 1;
        if n > 1000 {
            return Err(bad(spec, format!("{n} points; at most 1000")));
        }
        Ok((0..n)
            .map(|i| (lo.0 + i as f64 * step.0, lo.1.clone()))
            .collect())
    };
    if let Some((a, b)) = text.split_once("..") {
        return span(q(a)?, q(b)?, (1.0, String::new()));
    }
    if text.contains(':') {
        let parts: Vec<&str> = text.split(':').collect();
        let [a, b, s] = parts[..] else {
            return Err(bad(spec, "a malformed range: expected low:high:step"));
        };
        return span(q(a)?, q(b)?, q(s)?);
    }
    text.split(',').map(q).collect()
}

/// Parses one `--vary WHAT=LIST` against the registry: the name is known,
/// every value is in range (and a whole number where it must be).
pub fn parse_vary(reg: &mut Registry, spec: &str) -> Result<Axis> {
    let Some((what, values)) = spec.split_once('=') else {
        return Err(bad(spec, "expected WHAT=LIST, e.g. cells=1,2,4"));
    };
    let what = what.trim();
    if let Some(axis) = card_knob(reg, spec, what, values)? {
        return Ok(axis);
    }
    let raw = list(spec, values)?;
    let (knob, lo, hi, whole, unit) = match what {
        "cells" => (Knob::Cells, 1.0, 64.0, true, "count"),
        "socket_kib" => (Knob::SocketKib, 0.0625, 65536.0, false, "KiB"),
        "message_kib" => (Knob::MessageKib, 0.0625, 65536.0, false, "KiB"),
        "block_kib" => (Knob::BlockKib, 0.0625, 65536.0, false, "KiB"),
        "outstanding" => (Knob::Outstanding, 1.0, 256.0, true, "count"),
        path => {
            // An optional parameter the model lacks can be swept too: the
            // what-if adds it.
            if reg.param(path).is_none() {
                reg.add_absent_param(
                    path,
                    "iosim sweep: a what-if of a parameter absent from the model",
                );
            }
            let Some(p) = reg.param(path) else {
                return Err(bad(
                    spec,
                    format!(
                        "`{path}` is neither a sweepable quantity ({KNOBS}) nor a model parameter"
                    ),
                ));
            };
            let (lo, hi) = reg
                .range_of(path)
                .unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
            let (dim, _) = crate::units::to_base(1.0, &p.unit)
                .unwrap_or((crate::units::Dimension::Count, 1.0));
            let mut values = Vec::new();
            for (v, u) in raw {
                let u = if u.is_empty() { p.unit.clone() } else { u };
                let base = match crate::units::to_base(v, &u) {
                    Some((d, b)) if d == dim => b,
                    Some(_) => {
                        return Err(bad(
                            spec,
                            format!("`{u}` is not a unit of {path} (written in {})", p.unit),
                        ))
                    }
                    None if u == p.unit => v,
                    None => return Err(bad(spec, format!("unknown unit `{u}`"))),
                };
                if !(lo..=hi).contains(&base) {
                    return Err(bad(
                        spec,
                        format!(
                            "{} {u} is out of {path}'s plausible range, {}",
                            readable(v),
                            crate::units::range_text(lo, hi, dim, &u)
                        ),
                    ));
                }
                values.push(base);
            }
            return Ok(Axis {
                name: path.to_string(),
                knob: Knob::Param(path.to_string()),
                labels: values.iter().map(|v| readable(*v)).collect(),
                values,
                unit: dim.base_unit().to_string(),
                notes: Vec::new(),
            });
        }
    };
    let mut values = Vec::new();
    for (v, u) in raw {
        if !(u.is_empty() || u == unit || unit == "count" && u.is_empty()) {
            return Err(bad(
                spec,
                format!("{what} takes plain numbers ({unit}), not `{u}`"),
            ));
        }
        if !(lo..=hi).contains(&v) || (whole && v.fract() != 0.0) {
            return Err(bad(
                spec,
                format!(
                    "{} is out of range for {what}: expected {}{} to {}",
                    readable(v),
                    if whole { "a whole number from " } else { "" },
                    readable(lo),
                    readable(hi)
                ),
            ));
        }
        if unit == "KiB" && (v * 1024.0).fract() != 0.0 {
            return Err(bad(
                spec,
                format!("{} KiB is not a whole number of bytes", readable(v)),
            ));
        }
        values.push(v);
    }
    Ok(Axis {
        name: what.to_string(),
        knob,
        labels: values.iter().map(|v| readable(*v)).collect(),
        values,
        unit: unit.to_string(),
        notes: Vec::new(),
    })
}

/// The knobs of one card, `slot[:CARD]=S,S,...`, `link[:CARD]=L,L,...` and
/// `adapters[:CARD][@S,S,...]=COUNTS`; `None` for any other name.
fn card_knob(reg: &Registry, spec: &str, what: &str, values: &str) -> Result<Option<Axis>> {
    let (head, slots) = match what.split_once('@') {
        Some((h, s)) => (h.trim(), Some(s)),
        None => (what, None),
    };
    let (kind, card) = match head.split_once(':') {
        Some((k, c)) => (k.trim(), Some(c.trim())),
        None => (head, None),
    };
    if !matches!(kind, "slot" | "link" | "adapters") {
        return Ok(None);
    }
    if let Some(c) = card {
        if c.is_empty() || c.contains(char::is_whitespace) {
            return Err(bad(
                spec,
                format!("`{what}`: expected {kind}:CARD, a card's name"),
            ));
        }
    }
    if slots.is_some() && kind != "adapters" {
        return Err(bad(
            spec,
            "only adapters takes a list of slots (adapters:CARD@SLOT,SLOT,...=COUNTS)",
        ));
    }
    let names = |text: &str, what: &str| -> Result<Vec<String>> {
        let v: Vec<String> = text.split(',').map(|n| n.trim().to_string()).collect();
        if text.trim().is_empty() || v.iter().any(|n| n.is_empty()) {
            return Err(bad(spec, format!("an empty {what} name in the list")));
        }
        if let Some(d) = v.iter().enumerate().find(|(i, n)| v[..*i].contains(n)) {
            return Err(bad(spec, format!("{what} `{}` is listed twice", d.1)));
        }
        if v.len() > 1000 {
            return Err(bad(spec, format!("{} {what}s; at most 1000", v.len())));
        }
        Ok(v)
    };
    let card = card.map(str::to_string);
    let axis = match kind {
        "slot" | "link" => {
            let labels = names(values, kind)?;
            if kind == "link" {
                if let Some(l) = labels.iter().find(|l| !reg.links.contains_key(*l)) {
                    let known: Vec<&str> = reg.links.keys().map(String::as_str).collect();
                    return Err(bad(
                        spec,
                        format!("unknown link `{l}`; known: {}", known.join(", ")),
                    ));
                }
            }
            Axis {
                name: what.to_string(),
                knob: if kind == "slot" {
                    Knob::Slot(card)
                } else {
                    Knob::Link(card)
                },
                values: (0..labels.len()).map(|i| i as f64).collect(),
                labels,
                unit: if kind == "slot" { "slot" } else { "link" }.to_string(),
                notes: Vec::new(),
            }
        }
        _ => {
            let slots = match slots {
                Some(s) => names(s, "slot")?,
                None => Vec::new(),
            };
            let mut counts = Vec::new();
            for (v, u) in list(spec, values)? {
                if !u.is_empty() {
                    return Err(bad(spec, format!("adapters takes plain counts, not `{u}`")));
                }
                if !(1.0..=256.0).contains(&v) || v.fract() != 0.0 {
                    return Err(bad(
                        spec,
                        format!(
                            "{} is out of range for adapters: expected a whole number from 1 to 256",
                            readable(v)
                        ),
                    ));
                }
                counts.push(v);
            }
            Axis {
                name: head.to_string(),
                knob: Knob::Adapters { card, slots },
                labels: counts.iter().map(|v| readable(*v)).collect(),
                values: counts,
                unit: "count".to_string(),
                notes: Vec::new(),
            }
        }
    };
    Ok(Some(axis))
}

impl Axis {
    /// The label of `v`, one of the axis's values (without its note: the
    /// name points go by).
    pub fn label_of(&self, v: f64) -> String {
        self.values
            .iter()
            .position(|x| *x == v)
            .and_then(|i| self.labels.get(i).cloned())
            .unwrap_or_else(|| readable(v))
    }

    /// The label of value `i` with its note if it has one (`slot-5 (pcix133)`).
    pub fn shown(&self, i: usize) -> String {
        let label = self.labels.get(i).cloned().unwrap_or_default();
        match self.notes.get(i) {
            Some(n) if !n.is_empty() => format!("{label} ({n})"),
            _ => label,
        }
    }

    /// The index of the value `text` names: its label, or for a numeric
    /// axis a number equal to one of its values (a parameter's with a unit,
    /// `500ns`).
    fn index_of(&self, text: &str) -> Option<usize> {
        if let Some(i) = self.labels.iter().position(|l| l == text) {
            return Some(i);
        }
        if self.knob.categorical() {
            return None;
        }
        let (v, unit) = quantity(text)?;
        let v = if unit.is_empty() {
            v
        } else if matches!(self.knob, Knob::Param(_)) {
            crate::units::to_base(v, &unit)?.1
        } else if unit == self.unit {
            v
        } else {
            return None;
        };
        let close = |x: f64| (x - v).abs() <= 1e-9 * x.abs().max(v.abs()).max(1e-300);
        self.values.iter().position(|x| close(*x))
    }
}

/// The point `--baseline` names: `KNOB=VALUE` for every axis, separated by
/// commas or spaces, as the `point` column writes it (a note in parentheses,
/// `(pcix133)`, is allowed and ignored); its index among the points (the
/// last axis fastest). A knob the sweep does not vary, a value not on its
/// axis, an axis named twice or left out is a usage error.
pub fn baseline_point(axes: &[Axis], text: &str) -> Result<usize> {
    let bad = |why: String| Error::Usage(format!("--baseline {text}: {why}"));
    let names = || {
        axes.iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut chosen: Vec<Option<usize>> = vec![None; axes.len()];
    let tokens = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !(t.is_empty() || t.starts_with('(') && t.ends_with(')')));
    for t in tokens {
        let Some((what, value)) = t.split_once('=') else {
            return Err(bad(format!(
                "`{t}` is not KNOB=VALUE (the sweep varies {})",
                names()
            )));
        };
        let Some(k) = axes.iter().position(|a| a.name == what) else {
            return Err(bad(format!(
                "`{what}` is not varied by this sweep (it varies {})",
                names()
            )));
        };
        let a = &axes[k];
        let Some(i) = a.index_of(value) else {
            return Err(bad(format!(
                "{what}={value} is not a point of the sweep ({what} takes {})",
                a.labels.join(", ")
            )));
        };
        if chosen[k].is_some() {
            return Err(bad(format!("{what} is named twice")));
        }
        chosen[k] = Some(i);
    }
    let mut point = 0;
    for (a, c) in axes.iter().zip(&chosen) {
        let Some(i) = c else {
            return Err(bad(format!(
                "names no value of {} (a baseline names one value of every varied quantity: {})",
                a.name,
                names()
            )));
        };
        point = point * a.values.len() + i;
    }
    Ok(point)
}

/// One point of the sweep: the value of each axis, in axis order.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// One value per axis.
    pub values: Vec<f64>,
}

impl Point {
    /// `cells=2 socket_kib=64`.
    pub fn label(&self, axes: &[Axis]) -> String {
        axes.iter()
            .zip(&self.values)
            .map(|(a, v)| format!("{}={}", a.name, a.label_of(*v)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One metric of one experiment at one point, over the replications.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// Experiment id.
    pub experiment: String,
    /// Index of the point.
    pub point: usize,
    /// `card.fn throughput`, `cpu utilisation`, `bus X utilisation`, ...
    pub metric: String,
    /// `MB/s`, `percent`, `us/KB`.
    pub unit: String,
    /// Mean over the replications.
    pub mean: f64,
    /// Lower end of the 95% interval (the mean with one replication).
    pub ci_low: f64,
    /// Upper end of the 95% interval.
    pub ci_high: f64,
    /// Replications.
    pub n: u32,
    /// For a throughput (MB/s), the change of `mean` in percent against the
    /// same experiment's same throughput at the baseline point; `None` for
    /// other metrics, a throughput the baseline point lacks (a card copy's)
    /// or one the baseline point moves nothing of.
    pub vs_baseline_pct: Option<f64>,
    /// For a throughput (MB/s), the 90% prediction interval of `mean`
    /// ([`crate::interval`]): the structural part by the family of the
    /// experiment's bottleneck at this point, the parameter part the
    /// baseline point's (relative, for the same experiment and metric:
    /// see [`Plan::run`]); `None` for other metrics.
    pub interval: Option<crate::interval::Interval>,
}

/// One point's results, handed to the caller as soon as its chunk has run
/// and then dropped: a sweep holds no more than a chunk of points.
#[derive(Debug, Clone)]
pub struct PointResult {
    /// Index of the point (the last axis fastest).
    pub index: usize,
    /// Its label (`cells=2 socket_kib=64`).
    pub label: String,
    /// One value per axis.
    pub values: Vec<f64>,
    /// Every metric of every experiment at the point, by experiment, in a
    /// stable order.
    pub metrics: Vec<Metric>,
    /// The bottleneck text of each experiment (id, text) in the first
    /// replication.
    pub bottlenecks: Vec<(String, String)>,
    /// The point's experiments that ran to their ceiling short of their
    /// precision (in any replication: the widest), in words.
    pub warnings: Vec<String>,
}

/// A sweep checked and ready to run: every point's experiments were built
/// and assembled once (and dropped) before any runs, so a bad point is
/// refused at once; the points are then run in chunks
/// ([`Plan::run`]), in any range of them, each keeping the seed it has in
/// the whole grid.
pub struct Plan<'a> {
    reg: &'a Registry,
    base: Scenario,
    /// The axes, with the bus mode of each value of a slot axis in its notes.
    pub axes: Vec<Axis>,
    param_axes: Vec<usize>,
    work_axes: Vec<usize>,
    /// The index of the baseline point (the first unless `--baseline`
    /// names another), against which `vs_baseline_pct` is reckoned.
    pub baseline: usize,
    /// Replications per point.
    pub replications: u32,
    /// Each test bed's lack for the workloads, once (at the parameter
    /// values that make it): the warnings known before any point runs.
    pub warnings: Vec<String>,
    /// The number of points (the product of the axes' lengths).
    pub points: usize,
}

/// Simulations run together (a chunk of points times their experiments):
/// enough to keep a pool of threads busy, few enough that memory does not
/// grow with the grid (each is assembled before any of its batch runs).
const CHUNK: usize = 256;

/// Every combination of the axes' values, the last axis fastest, without
/// holding them.
fn combos(axes: &[Axis]) -> impl Iterator<Item = Vec<usize>> + '_ {
    let total: usize = axes.iter().map(|a| a.values.len()).product();
    (0..total).map(move |i| combo_at(axes, i))
}

/// The combination of point `i` (the last axis fastest).
fn combo_at(axes: &[Axis], mut i: usize) -> Vec<usize> {
    let mut c = vec![0; axes.len()];
    for (k, a) in axes.iter().enumerate().rev() {
        let n = a.values.len().max(1);
        c[k] = i % n;
        i /= n;
    }
    c
}

/// Runs `sc` (its experiment `only`, or all) at every point of `axes`, `n`
/// replications each: checks the sweep and every point of it, and returns
/// its plan, which runs the points ([`Plan::run`]). The checks look at
/// `runner`'s wall-clock bound as they go.
///
/// `baseline` names the point throughputs are compared with
/// ([`baseline_point`]; `None`: the first).
pub fn plan_sweep<'a>(
    reg: &'a Registry,
    sc: &Scenario,
    only: Option<&str>,
    axes: Vec<Axis>,
    baseline: Option<&str>,
    n: u32,
    runner: &Runner,
) -> Result<Plan<'a>> {
    if axes.is_empty() {
        return Err(Error::Usage(
            "sweep: give at least one --vary WHAT=LIST".into(),
        ));
    }
    check_axes(&axes)?;
    let baseline = match baseline {
        Some(text) => baseline_point(&axes, text)?,
        None => 0,
    };
    let mut base = sc.clone();
    if let Some(id) = only {
        base.experiments.retain(|e| e.id == id);
        if base.experiments.is_empty() {
            let ids: Vec<&str> = sc.experiments.iter().map(|e| e.id.as_str()).collect();
            return Err(Error::Usage(format!(
                "--experiment {id}: no such experiment in scenario `{}` (it has {})",
                sc.name,
                ids.join(", ")
            )));
        }
    }
    check_simulations(&axes, base.experiments.len(), n)?;
    let is_param = |a: &Axis| matches!(a.knob, Knob::Param(_));
    let param_axes: Vec<usize> = (0..axes.len()).filter(|&i| is_param(&axes[i])).collect();
    let work_axes: Vec<usize> = (0..axes.len()).filter(|&i| !is_param(&axes[i])).collect();
    let mut plan = Plan {
        reg,
        base,
        axes,
        param_axes,
        work_axes,
        baseline,
        replications: n,
        warnings: Vec::new(),
        points: 0,
    };
    plan.points = plan.axes.iter().map(|a| a.values.len()).product();
    // Each workload combination checked before anything runs, and the bus
    // modes each slot axis's card runs in, per value.
    let mut modes: Vec<Vec<Vec<String>>> = plan
        .axes
        .iter()
        .map(|a| vec![Vec::new(); a.values.len()])
        .collect();
    let work = plan.sub(&plan.work_axes);
    for combo in combos(&work) {
        runner.check_deadline()?;
        let s = plan.work_scenario(&combo)?;
        let label = plan.sub_label(&plan.work_axes, &combo);
        for e in &s.experiments {
            check_point(reg, e).map_err(|why| point_error(&label, &e.id, &sc.name, why))?;
            for (k, &vi) in combo.iter().enumerate() {
                let i = plan.work_axes[k];
                if let Knob::Slot(card) = &plan.axes[i].knob {
                    if let Some(m) = mode_of(reg, e, card) {
                        if !modes[i][vi].contains(&m) {
                            modes[i][vi].push(m);
                        }
                    }
                }
            }
        }
    }
    // What only assembly sees (FIFOs, sockets, CPUs), at every registry.
    let params = plan.sub(&plan.param_axes);
    for pc in combos(&params) {
        let r = plan.param_registry(&pc)?;
        for wc in combos(&work) {
            runner.check_deadline()?;
            let s = plan.work_scenario(&wc)?;
            for e in &s.experiments {
                if let Err(err) = crate::sim::config::assemble(&r, e) {
                    let mut parts: Vec<(usize, String)> = Vec::new();
                    for (k, &i) in plan.param_axes.iter().enumerate() {
                        let a = &plan.axes[i];
                        parts.push((i, format!("{}={}", a.name, a.labels[pc[k]])));
                    }
                    for (k, &i) in plan.work_axes.iter().enumerate() {
                        let a = &plan.axes[i];
                        parts.push((i, format!("{}={}", a.name, a.labels[wc[k]])));
                    }
                    parts.sort();
                    let label: Vec<String> = parts.into_iter().map(|p| p.1).collect();
                    return Err(point_error(
                        &label.join(" "),
                        &e.id,
                        &sc.name,
                        err.to_string(),
                    ));
                }
            }
        }
        // Each test bed's lack once (at the parameter values that make it,
        // if the sweep varies parameters).
        let at = plan.sub_label(&plan.param_axes, &pc);
        for e in &plan.base.experiments {
            for w in crate::warnings::testbed(&r, e) {
                let w = if at.is_empty() {
                    w
                } else {
                    format!("points with `{at}`: {w}")
                };
                if !plan.warnings.contains(&w) {
                    plan.warnings.push(w);
                }
            }
        }
    }
    for (a, m) in plan.axes.iter_mut().zip(modes) {
        if matches!(a.knob, Knob::Slot(_)) {
            a.notes = m.into_iter().map(|v| v.join("/")).collect();
        }
    }
    Ok(plan)
}

impl Plan<'_> {
    fn sub(&self, idx: &[usize]) -> Vec<Axis> {
        idx.iter().map(|&i| self.axes[i].clone()).collect()
    }

    /// `name=label ...` of a combination of the axes `idx`.
    fn sub_label(&self, idx: &[usize], combo: &[usize]) -> String {
        combo
            .iter()
            .enumerate()
            .map(|(k, &vi)| {
                let a = &self.axes[idx[k]];
                format!("{}={}", a.name, a.labels[vi])
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The registry at a combination of the parameter axes' values.
    fn param_registry(&self, combo: &[usize]) -> Result<Registry> {
        let mut r = self.reg.clone();
        for (k, &vi) in combo.iter().enumerate() {
            let a = &self.axes[self.param_axes[k]];
            if let Knob::Param(path) = &a.knob {
                if !r.set_param(path, a.values[vi]) {
                    return Err(Error::Internal(format!("parameter {path} vanished")));
                }
            }
        }
        Ok(r)
    }

    /// The scenario at a combination of the workload and card axes' values.
    fn work_scenario(&self, combo: &[usize]) -> Result<Scenario> {
        let mut s = self.base.clone();
        let label = self.sub_label(&self.work_axes, combo);
        // Copies of a card last: they take free slots once the other knobs
        // have moved the cards and set the cells.
        let copies_last =
            |k: &usize| matches!(self.axes[self.work_axes[*k]].knob, Knob::Adapters { .. });
        let mut order: Vec<usize> = (0..combo.len()).collect();
        order.sort_by_key(copies_last);
        for k in order {
            let a = &self.axes[self.work_axes[k]];
            let vi = combo[k];
            if a.knob == Knob::Cells {
                check_cells(self.reg, &s, a.values[vi])?;
            }
            apply_workload(&mut s, &a.knob, a.values[vi], &a.name)?;
            for e in s.experiments.iter_mut() {
                apply_card(self.reg, e, &a.knob, a.values[vi], &a.labels[vi])
                    .map_err(|why| point_error(&label, &e.id, &self.base.name, why))?;
            }
        }
        Ok(s)
    }

    /// The label of point `i` (`cells=2 socket_kib=64`).
    pub fn label(&self, i: usize) -> String {
        self.point(i).label(&self.axes)
    }

    /// Point `i`.
    pub fn point(&self, i: usize) -> Point {
        let c = combo_at(&self.axes, i);
        Point {
            values: c
                .iter()
                .enumerate()
                .map(|(k, &vi)| self.axes[k].values[vi])
                .collect(),
        }
    }

    /// The points `range` of the `part`-th of `parts` equal parts
    /// (1-based): a deterministic split of the grid in point order.
    pub fn shard(&self, part: u64, parts: u64) -> std::ops::Range<usize> {
        crate::part::share(self.points, part, parts)
    }

    /// Runs the points `range`, a chunk at a time in `runner`'s pool, and
    /// hands each point's results to `sink` in point order. Each point
    /// keeps its experiments' seeds, whatever the range (common random
    /// numbers across points); the baseline point is run first if the
    /// range does not start with it.
    pub fn run(
        &self,
        range: std::ops::Range<usize>,
        seed: u64,
        runner: &Runner,
        sink: &mut dyn FnMut(PointResult) -> Result<()>,
    ) -> Result<()> {
        let range = range.start..range.end.min(self.points);
        if range.is_empty() {
            return Ok(());
        }
        let chunk = (CHUNK / self.base.experiments.len().max(1)).max(1);
        let first = range.start..(range.start + chunk).min(range.end);
        let param_part = self.baseline_param_sigmas(seed, runner)?;
        let mut base: Option<HashMap<(String, String), f64>> = None;
        if !first.contains(&self.baseline) {
            let b = self.run_chunk(self.baseline..self.baseline + 1, seed, runner)?;
            base = Some(baseline_means(&b));
        }
        let mut at = range.start;
        while at < range.end {
            let end = (at + chunk).min(range.end);
            let mut points = self.run_chunk(at..end, seed, runner)?;
            if base.is_none() {
                let b: Vec<PointResult> = points
                    .iter()
                    .filter(|p| p.index == self.baseline)
                    .cloned()
                    .collect();
                base = Some(baseline_means(&b));
            }
            for p in points.iter_mut() {
                against_baseline(&mut p.metrics, base.as_ref());
                self.set_intervals(p, &param_part);
            }
            for p in points {
                sink(p)?;
            }
            at = end;
        }
        Ok(())
    }

    /// The parameter part of the prediction intervals at the baseline
    /// point, by (experiment, throughput metric): its standard deviation in
    /// log space, from the baseline point's experiments run (first
    /// replication's seed) with each fitted value they read moved by its
    /// standard error ([`crate::app::parameter_moves`]). Every point
    /// carries the baseline's relative part: a sweep of thousands of points
    /// runs these moves once, not per point.
    fn baseline_param_sigmas(
        &self,
        seed: u64,
        runner: &Runner,
    ) -> Result<HashMap<(String, String), f64>> {
        let (reg, sc) = self.baseline_point()?;
        let exps = self.with_setups(&sc);
        let s0 = replication_seed(seed, 0);
        let (base, moved) = base_and_moved(&reg, &exps, s0, runner)?;
        let mut out = HashMap::new();
        for ((e, b), ms) in sc.experiments.iter().zip(&base).zip(&moved) {
            let moved_metrics: Vec<Vec<(String, &'static str, f64)>> =
                ms.iter().map(metrics_of).collect();
            for (name, unit, y) in metrics_of(b) {
                if unit != THROUGHPUT_UNIT {
                    continue;
                }
                let ys: Vec<f64> = moved_metrics
                    .iter()
                    .filter_map(|m| m.iter().find(|x| x.0 == name).map(|x| x.2))
                    .collect();
                out.insert((e.id.clone(), name), crate::interval::param_sigma(y, &ys));
            }
        }
        Ok(out)
    }

    /// The models and scenario of the baseline point.
    fn baseline_point(&self) -> Result<(crate::model::Registry, Scenario)> {
        let combo = combo_at(&self.axes, self.baseline);
        let pc: Vec<usize> = self.param_axes.iter().map(|&i| combo[i]).collect();
        let wc: Vec<usize> = self.work_axes.iter().map(|&i| combo[i]).collect();
        Ok((self.param_registry(&pc)?, self.work_scenario(&wc)?))
    }

    /// Each experiment of a point's scenario `sc` with the experiment of
    /// the base scenario whose setup seeds it.
    fn with_setups<'a>(
        &'a self,
        sc: &'a Scenario,
    ) -> Vec<(
        &'a Scenario,
        &'a crate::model::Experiment,
        &'a crate::model::Experiment,
    )> {
        sc.experiments
            .iter()
            .map(|e| {
                let setup = self
                    .base
                    .experiments
                    .iter()
                    .find(|b| b.id == e.id)
                    .unwrap_or(e);
                (sc, e, setup)
            })
            .collect()
    }

    /// The calibration status of the baseline point's experiments (first
    /// replication's seed): each assumed value they read moved over its
    /// range ([`crate::app::assumed_moves`]), the throughputs of each run
    /// beside their 90% intervals; with the assumed values the effects
    /// index.
    pub fn baseline_status(
        &self,
        seed: u64,
        runner: &Runner,
    ) -> Result<(
        Vec<crate::sensitivity::Assumed>,
        crate::sensitivity::ExperimentEffects,
    )> {
        let (reg, sc) = self.baseline_point()?;
        let exps = self.with_setups(&sc);
        let s0 = replication_seed(seed, 0);
        let (base, moved) = base_and_moved(&reg, &exps, s0, runner)?;
        let runs = crate::app::assumed_moves(&reg, &exps, s0, runner)?;
        let effects = crate::app::run_effects(&reg, &base, &moved, &runs);
        Ok((runs.values, effects))
    }

    /// Sets the prediction interval of each throughput of point `p`.
    fn set_intervals(&self, p: &mut PointResult, param_part: &HashMap<(String, String), f64>) {
        for m in p.metrics.iter_mut().filter(|m| m.unit == THROUGHPUT_UNIT) {
            let family = p
                .bottlenecks
                .iter()
                .find(|(e, _)| *e == m.experiment)
                .map_or(crate::model::Family::Latency, |(_, b)| {
                    crate::model::Family::of_bottleneck(b)
                });
            let sigma = param_part
                .get(&(m.experiment.clone(), m.metric.clone()))
                .copied();
            m.interval = Some(crate::interval::Interval::of(
                m.mean,
                Some(sigma.unwrap_or(f64::NAN)),
                family,
                &self.reg.spread,
            ));
        }
    }

    /// Runs the points `range` (each experiment, each replication) in one
    /// batch; their results without `vs_baseline_pct`.
    fn run_chunk(
        &self,
        range: std::ops::Range<usize>,
        seed: u64,
        runner: &Runner,
    ) -> Result<Vec<PointResult>> {
        let n = self.replications;
        // The registries and scenarios the chunk needs, each built once.
        let mut regs: Vec<(usize, Registry)> = Vec::new();
        let mut scens: Vec<(usize, Scenario)> = Vec::new();
        let mut at: Vec<(usize, usize, Vec<usize>)> = Vec::new();
        for pi in range.clone() {
            let combo = combo_at(&self.axes, pi);
            let (mut ri, mut si) = (0usize, 0usize);
            let (mut pc, mut wc) = (Vec::new(), Vec::new());
            for &i in &self.param_axes {
                ri = ri * self.axes[i].values.len() + combo[i];
                pc.push(combo[i]);
            }
            for &i in &self.work_axes {
                si = si * self.axes[i].values.len() + combo[i];
                wc.push(combo[i]);
            }
            let r = match regs.iter().position(|(k, _)| *k == ri) {
                Some(x) => x,
                None => {
                    regs.push((ri, self.param_registry(&pc)?));
                    regs.len() - 1
                }
            };
            let s = match scens.iter().position(|(k, _)| *k == si) {
                Some(x) => x,
                None => {
                    scens.push((si, self.work_scenario(&wc)?));
                    scens.len() - 1
                }
            };
            at.push((r, s, combo));
        }
        let mut jobs = Vec::new();
        for (r, s, _) in &at {
            let sc = &scens[*s].1;
            for e in &sc.experiments {
                let setup = self.base.experiments.iter().find(|b| b.id == e.id);
                jobs.push(Job::new(&regs[*r].1, sc, e, setup.unwrap_or(e)));
            }
        }
        let reps: Vec<Vec<ExperimentResult>> = (0..n)
            .map(|r| run_experiments(&jobs, replication_seed(seed, r), runner, None))
            .collect::<Result<_>>()?;
        let mut out = Vec::new();
        let mut j = 0;
        for (pi, (_, s, combo)) in range.zip(at) {
            let sc = &scens[s].1;
            let label = combo
                .iter()
                .enumerate()
                .map(|(k, &vi)| format!("{}={}", self.axes[k].name, self.axes[k].labels[vi]))
                .collect::<Vec<_>>()
                .join(" ");
            let mut p = PointResult {
                index: pi,
                label,
                values: combo
                    .iter()
                    .enumerate()
                    .map(|(k, &vi)| self.axes[k].values[vi])
                    .collect(),
                metrics: Vec::new(),
                bottlenecks: Vec::new(),
                warnings: Vec::new(),
            };
            for e in &sc.experiments {
                let runs: Vec<Vec<(String, &'static str, f64)>> =
                    reps.iter().map(|rep| metrics_of(&rep[j])).collect();
                if let Some(first) = reps.first() {
                    p.bottlenecks
                        .push((e.id.clone(), first[j].bottleneck.clone()));
                }
                let widest = reps
                    .iter()
                    .map(|rep| rep[j].ci95_pct)
                    .fold(f64::NEG_INFINITY, f64::max);
                if let Some(w) = crate::warnings::short_of_precision(&sc.run, &e.id, widest) {
                    p.warnings.push(format!("point `{}`: {w}", p.label));
                }
                if let Some(w) = reps
                    .iter()
                    .find_map(|rep| crate::warnings::start_drift(&sc.run, &rep[j]))
                {
                    p.warnings.push(format!("point `{}`: {w}", p.label));
                }
                j += 1;
                let Some(names) = runs.first() else { continue };
                for (mi, (name, unit, _)) in names.iter().enumerate() {
                    let xs: Vec<f64> = runs.iter().filter_map(|r| r.get(mi).map(|m| m.2)).collect();
                    let (mean, half) = mean_ci95(&xs);
                    let half = if xs.len() > 1 { half } else { 0.0 };
                    p.metrics.push(Metric {
                        experiment: e.id.clone(),
                        point: pi,
                        metric: name.clone(),
                        unit: unit.to_string(),
                        mean,
                        ci_low: mean - half,
                        ci_high: mean + half,
                        n,
                        vs_baseline_pct: None,
                        interval: None,
                    });
                }
            }
            out.push(p);
        }
        Ok(out)
    }
}

/// The baseline point's throughputs, by (experiment, metric).
fn baseline_means(points: &[PointResult]) -> HashMap<(String, String), f64> {
    points
        .iter()
        .flat_map(|p| &p.metrics)
        .filter(|m| m.unit == THROUGHPUT_UNIT)
        .map(|m| ((m.experiment.clone(), m.metric.clone()), m.mean))
        .collect()
}

/// Sets each throughput's change against the same experiment's same
/// throughput at the baseline point (`base`, its throughputs).
fn against_baseline(metrics: &mut [Metric], base: Option<&HashMap<(String, String), f64>>) {
    for m in metrics.iter_mut().filter(|m| m.unit == THROUGHPUT_UNIT) {
        m.vs_baseline_pct =
            match base.and_then(|b| b.get(&(m.experiment.clone(), m.metric.clone()))) {
                Some(&b) if b > 0.0 => Some((m.mean - b) / b * 100.0),
                _ => None,
            };
    }
}

/// Applies a workload knob to every experiment of `sc`; an experiment with no
/// workload the knob applies to is an error naming it.
fn apply_workload(sc: &mut Scenario, knob: &Knob, v: f64, name: &str) -> Result<()> {
    for e in sc.experiments.iter_mut() {
        let mut hit = false;
        if *knob == Knob::Cells {
            e.cells = v as u32;
            continue;
        }
        if matches!(
            knob,
            Knob::Slot(_) | Knob::Link(_) | Knob::Adapters { .. } | Knob::Param(_)
        ) {
            continue;
        }
        let bytes = (v * 1024.0) as u64;
        for w in e.workloads.iter_mut() {
            match (&mut w.demand, knob) {
                (Demand::NetperfTcpStream { socket_bytes, .. }, Knob::SocketKib) => {
                    *socket_bytes = bytes;
                    hit = true;
                }
                (Demand::NetperfTcpStream { message_bytes, .. }, Knob::MessageKib) => {
                    *message_bytes = bytes;
                    hit = true;
                }
                (Demand::Diskbench { block_bytes, .. }, Knob::BlockKib)
                | (Demand::RawDma { block_bytes, .. }, Knob::BlockKib) => {
                    *block_bytes = bytes;
                    hit = true;
                }
                (Demand::Diskbench { outstanding, .. }, Knob::Outstanding) => {
                    *outstanding = Some(v as u32);
                    hit = true;
                }
                (Demand::RawDma { outstanding, .. }, Knob::Outstanding) => {
                    *outstanding = v as u32;
                    hit = true;
                }
                _ => {}
            }
        }
        if !hit {
            return Err(Error::Usage(format!(
                "--vary {name}: experiment `{}` of scenario `{}` has no workload it applies to (pick another with --experiment)",
                e.id, sc.name
            )));
        }
    }
    Ok(())
}

/// The metrics of one experiment result: (name, unit, value).
fn metrics_of(r: &ExperimentResult) -> Vec<(String, &'static str, f64)> {
    let mut m = Vec::new();
    for f in &r.functions {
        m.push((
            format!("{} throughput", f.label),
            THROUGHPUT_UNIT,
            f.total().mb_s(),
        ));
    }
    m.push((
        "total throughput".into(),
        THROUGHPUT_UNIT,
        r.functions.iter().map(|f| f.total().mb_s()).sum(),
    ));
    m.push(("cpu utilisation".into(), "percent", r.cpu_util * 100.0));
    m.push(("service demand".into(), "us/KB", r.service_demand_us_per_kb));
    let mut controllers: Vec<(String, f64)> = Vec::new();
    for b in &r.buses {
        m.push((
            format!("bus {} utilisation", b.label),
            "percent",
            b.util * 100.0,
        ));
        m.push((
            format!("rope {} utilisation", b.label),
            "percent",
            b.rope_util * 100.0,
        ));
        if let Some((name, u)) = &b.controller {
            if !controllers.iter().any(|(n, _)| n == name) {
                controllers.push((name.clone(), *u));
            }
        }
    }
    for (name, u) in controllers {
        m.push((
            format!("controller {name} utilisation"),
            "percent",
            u * 100.0,
        ));
    }
    m
}

/// The most simulations a sweep may ask for: points (the product of its
/// `--vary` lists) times experiments times replications. Points are
/// streamed (written as they finish, never held all at once), so the bound
/// is on the time a grid takes, not its memory.
pub const MAX_SIMULATIONS: u64 = 10_000_000;

/// A grid of more than [`MAX_SIMULATIONS`] simulations is a usage error.
fn check_simulations(axes: &[Axis], experiments: usize, replications: u32) -> Result<()> {
    let points = axes
        .iter()
        .fold(1u64, |n, a| n.saturating_mul(a.values.len() as u64));
    let sims = points
        .saturating_mul(experiments as u64)
        .saturating_mul(u64::from(replications));
    if sims > MAX_SIMULATIONS {
        let sizes: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
        return Err(Error::Usage(format!(
            "--vary: a grid of {} = {points} points x {} x {} = {sims} simulations; at most {MAX_SIMULATIONS} (sweep fewer values, or split the grid into several runs)",
            sizes.join(" x "),
            crate::units::count_text(experiments, "experiment", "experiments"),
            crate::units::count_text(replications as usize, "replication", "replications"),
        )));
    }
    Ok(())
}

/// A knob given twice, or a value given twice on one axis, would run the
/// same points again (or silently drop the first list): usage errors.
fn check_axes(axes: &[Axis]) -> Result<()> {
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.knob == a.knob) {
            return Err(Error::Usage(format!(
                "--vary {}: given twice (a grid takes two different knobs)",
                a.name
            )));
        }
        for (j, l) in a.labels.iter().enumerate() {
            if a.labels[..j].contains(l) {
                return Err(Error::Usage(format!(
                    "--vary {}: the value {l} is given twice",
                    a.name
                )));
            }
        }
    }
    Ok(())
}

/// The unit of the throughput metrics, the ones compared with the baseline.
const THROUGHPUT_UNIT: &str = "MB/s";

/// The bus mode the card `card` (`None`: the only one) of `e` runs in: its
/// segment's, shared with any other card there.
fn mode_of(reg: &Registry, e: &Experiment, card: &Option<String>) -> Option<String> {
    let i = card_of(e, card).ok()?;
    let server = reg.servers.get(&e.server)?;
    let fits = fit_cards(reg, server, e, Some(e.cells)).ok()?;
    let segments = fit_segments(&fits).ok()?;
    segments
        .iter()
        .find(|s| s.cards.contains(&i))
        .map(|s| s.mode.to_string())
}

/// A bad sweep point, named.
fn point_error(label: &str, exp: &str, scenario: &str, why: String) -> Error {
    Error::Usage(format!(
        "--vary: point `{label}`, experiment `{exp}` of scenario `{scenario}`: {why}"
    ))
}

/// The index of the card a knob names (`None`: the experiment's only card).
fn card_of(e: &Experiment, card: &Option<String>) -> std::result::Result<usize, String> {
    let labels = || {
        e.cards
            .iter()
            .map(|c| c.0.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match card {
        Some(c) => e
            .cards
            .iter()
            .position(|x| &x.0 == c)
            .ok_or_else(|| format!("no card `{c}` (its cards: {})", labels())),
        None if e.cards.len() == 1 => Ok(0),
        None => Err(format!(
            "{} cards ({}): name the one to vary, e.g. slot:{}",
            e.cards.len(),
            labels(),
            e.cards.first().map_or("CARD", |c| c.0.as_str())
        )),
    }
}

/// Applies a card knob (slot, link, copies) to experiment `e`; `v` is the
/// value and `label` its label. Other knobs leave `e` alone.
fn apply_card(
    reg: &Registry,
    e: &mut Experiment,
    knob: &Knob,
    v: f64,
    label: &str,
) -> std::result::Result<(), String> {
    match knob {
        Knob::Slot(card) => {
            let i = card_of(e, card)?;
            e.cards[i].2 = label.to_string();
        }
        Knob::Link(Some(all)) if all == "*" => {
            for l in e.links.iter_mut() {
                *l = Some(label.to_string());
            }
        }
        Knob::Link(card) => {
            let i = card_of(e, card)?;
            e.links[i] = Some(label.to_string());
        }
        Knob::Adapters { card, slots } => {
            let i = card_of(e, card)?;
            let n = v as usize;
            let (name, adapter, _) = e.cards[i].clone();
            let spec = reg
                .adapters
                .get(&adapter)
                .ok_or_else(|| format!("unknown adapter `{adapter}`"))?;
            let server = reg
                .servers
                .get(&e.server)
                .ok_or_else(|| format!("unknown server `{}`", e.server))?;
            if !slots.is_empty() && slots.len() < n.saturating_sub(1) {
                return Err(format!(
                    "{} `{name}` need {} for the copies beside its own; the list gives {}",
                    crate::units::count_text(n, "card", "cards"),
                    crate::units::count_text(n - 1, "slot", "slots"),
                    slots.len()
                ));
            }
            let free: Vec<String> = if slots.is_empty() {
                server
                    .slots
                    .iter()
                    .filter(|s| {
                        s.owned_by(e.cells)
                            && !e.cards.iter().any(|c| c.2 == s.name)
                            && negotiate_mode(spec, s).is_some()
                    })
                    .map(|s| s.name.clone())
                    .collect()
            } else {
                slots.clone()
            };
            if free.len() < n.saturating_sub(1) {
                return Err(format!(
                    "{} `{name}` (adapter `{adapter}`) need {} beside the experiment's cards; server `{}` has only {} that a partition of {} owns and the adapter runs in",
                    crate::units::count_text(n, "card", "cards"),
                    crate::units::count_text(n - 1, "free slot", "free slots"),
                    e.server,
                    free.len(),
                    crate::units::count_text(e.cells as usize, "cell", "cells")
                ));
            }
            let workloads: Vec<Workload> = e
                .workloads
                .iter()
                .filter(|w| w.card == i)
                .cloned()
                .collect();
            let link = e.links[i].clone();
            for (k, slot) in (2..=n).zip(free) {
                let label = format!("{name}-{k}");
                if e.cards.iter().any(|c| c.0 == label) {
                    return Err(format!(
                        "the copy `{label}` of card `{name}` would have the name of another card"
                    ));
                }
                let ci = e.cards.len();
                e.cards.push((label, adapter.clone(), slot));
                e.links.push(link.clone());
                e.workloads.extend(workloads.iter().cloned().map(|mut w| {
                    w.card = ci;
                    w
                }));
            }
            e.workloads.sort_by_key(|w| (w.card, w.function));
        }
        _ => {}
    }
    Ok(())
}

/// What the loader checks of an experiment's cards, again at a sweep point
/// (the one card check, [`fit_cards`] and [`fit_segments`]): each slot
/// exists, runs the adapter, holds one card and is owned by the partition;
/// each card's link can replace its adapter's; the cards of a shared
/// segment share a mode. The problem in the sweep's words.
fn check_point(reg: &Registry, e: &Experiment) -> std::result::Result<(), String> {
    let server = reg
        .servers
        .get(&e.server)
        .ok_or_else(|| format!("unknown server `{}`", e.server))?;
    let (j, problems) = match fit_cards(reg, server, e, Some(e.cells)) {
        Ok(fits) => return fit_segments(&fits).map(|_| ()),
        Err(first) => first,
    };
    let (label, slot) = (&e.cards[j].0, &e.cards[j].2);
    Err(match &problems[0] {
        p @ (CardProblem::UnknownAdapter(_) | CardProblem::UnknownLink(_)) => p.to_string(),
        CardProblem::UnknownSlot(_) => format!(
            "card `{label}`: server `{}` has no slot `{slot}`",
            server.name
        ),
        CardProblem::SlotTaken(k) => format!(
            "cards `{}` and `{label}` are both in slot `{slot}`",
            e.cards[*k].0
        ),
        p => format!("card `{label}`: {p}"),
    })
}

/// Cells beyond the server's range are refused before anything runs.
fn check_cells(reg: &Registry, sc: &Scenario, cells: f64) -> Result<()> {
    for e in &sc.experiments {
        let Some(server) = reg.servers.get(&e.server) else {
            continue;
        };
        let max =
            crate::model::schema::ServerParams::from_set(&server.params, &server.at)?.cells_max;
        if cells > max {
            return Err(Error::Usage(format!(
                "--vary cells: {} cells; server `{}` of experiment `{}` takes 1 to {}",
                readable(cells),
                e.server,
                e.id,
                readable(max)
            )));
        }
    }
    Ok(())
}

/// The results of some experiments, and per experiment its runs with each
/// fitted value it reads moved.
type BaseAndMoved = (Vec<ExperimentResult>, Vec<Vec<ExperimentResult>>);

/// Experiments `exps` (each with its scenario and the experiment whose
/// setup seeds it) run on `reg` with `seed`, and again with each fitted
/// value they read moved by its standard error
/// ([`crate::app::parameter_moves`]).
fn base_and_moved(
    reg: &crate::model::Registry,
    exps: &[(
        &Scenario,
        &crate::model::Experiment,
        &crate::model::Experiment,
    )],
    seed: u64,
    runner: &Runner,
) -> Result<BaseAndMoved> {
    let jobs: Vec<Job> = exps
        .iter()
        .map(|&(scenario, experiment, setup)| Job::new(reg, scenario, experiment, setup))
        .collect();
    let base = run_experiments(&jobs, seed, runner, None)?;
    let moved = crate::app::parameter_moves(reg, exps, seed, runner)?;
    Ok((base, moved))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges() {
        let v = |t: &str| list("x", t).map(|l| l.into_iter().map(|p| p.0).collect::<Vec<_>>());
        assert_eq!(v("1,2,4").unwrap(), vec![1.0, 2.0, 4.0]);
        assert_eq!(v("1..4").unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(v("8:32:8").unwrap(), vec![8.0, 16.0, 24.0, 32.0]);
        assert_eq!(
            list("x", "500ns,1e3ns").unwrap(),
            vec![(500.0, "ns".into()), (1000.0, "ns".into())]
        );
        for bad in ["", "4..1", "1:2", "1:4:0", "a,b", "1,,2", "1..x"] {
            assert!(v(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn grid_last_axis_fastest() {
        let a = |n: usize| Axis {
            name: "a".into(),
            knob: Knob::Cells,
            values: vec![0.0; n],
            labels: vec![String::new(); n],
            unit: "count".into(),
            notes: Vec::new(),
        };
        assert_eq!(
            combos(&[a(2), a(2)]).collect::<Vec<_>>(),
            vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]
        );
        assert_eq!(combo_at(&[a(3), a(2)], 5), vec![2, 1]);
    }
}
