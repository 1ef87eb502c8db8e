//! Doubts about an answer, in words: a run that ended at its ceiling short
//! of the precision its scenario asks for, a run measured again because
//! its first window started before the steady state (`sim::StartDrift`),
//! and a test bed that lacks what a workload needs (a netperf peer, a disk
//! array) as far as the model can tell. `run`, `sweep`, `validate`, `place`
//! and `report` print them on standard error and in their reports
//! (`# warning:` header lines, a `warnings` array in JSON; a section of the
//! HTML report).
//!
//! A test bed is known to lack a netperf peer when every cost of its peer
//! is zero (`peer_turnaround` and `peer_cpu_per_segment` 0, the optional
//! peer costs absent or 0): the model then has netperf's far end take and
//! acknowledge every segment at once, and the link runs as fast as the
//! server lets it. It lacks a disk array when the array's service time is
//! zero (`target_latency` 0, `target_per_kib` absent or 0). A test bed that
//! states costs for a peer or an array it does not have cannot be told
//! apart from one that has them.

use crate::model::schema::TestbedParams;
use crate::model::{Demand, Experiment, Registry, RunSpec, Scenario};
use crate::place::Placement;
use crate::sim::ExperimentResult;
use crate::units::readable;

/// The warning for result `r` of a run with settings `run`, if it ended at
/// its ceiling (`duration_ms`) with its widest throughput interval wider
/// than the `precision_pct` asked for. None when no precision is asked.
pub fn precision(run: &RunSpec, r: &ExperimentResult) -> Option<String> {
    short_of_precision(run, &r.id, r.ci95_pct)
}

/// The warning for experiment `id` run with settings `run` whose widest
/// throughput interval was `ci95_pct` percent of its mean, if that is wider
/// than the `precision_pct` asked for (the run then ended at its ceiling).
pub fn short_of_precision(run: &RunSpec, id: &str, ci95_pct: f64) -> Option<String> {
    short_of_precision_as(run, &format!("experiment `{id}`"), ci95_pct)
}

/// [`short_of_precision`] for a run named `what` in words (`experiment
/// `e1``, `placement `fc@slot-3``).
pub fn short_of_precision_as(run: &RunSpec, what: &str, ci95_pct: f64) -> Option<String> {
    let p = run.precision_pct?;
    if ci95_pct <= p {
        return None;
    }
    let width = if ci95_pct.is_finite() {
        format!("the widest 95% interval of its throughputs is {ci95_pct:.2}% of the mean")
    } else {
        "its throughputs' 95% intervals are unknown (fewer than two batches)".to_string()
    };
    Some(format!(
        "{} ran to its ceiling (duration_ms = {}) short of its precision: {width}, above precision_pct = {}; lengthen [run] duration_ms or use --replications",
        what,
        readable(run.duration_ms),
        readable(p)
    ))
}

/// The warning for result `r` of a run with settings `run`, if its first
/// measured window started before the steady state (see
/// [`crate::sim::StartDrift`]): the run was measured again after it, and
/// the window measured again may not have settled either.
pub fn start_drift(run: &RunSpec, r: &ExperimentResult) -> Option<String> {
    start_drift_as(run, &format!("experiment `{}`", r.id), r)
}

/// [`start_drift`] for a run named `what` in words.
pub fn start_drift_as(run: &RunSpec, what: &str, r: &ExperimentResult) -> Option<String> {
    let from = readable(r.remeasured_from?.secs() * 1e3);
    let now = readable(run.warmup_ms);
    Some(match r.start_drift {
        None => format!(
            "{what} had not settled when its measurement began: its first window became warm-up and it was measured again from {from} ms; warmup_ms = {from} (now {now}) saves that window"
        ),
        Some(d) => format!(
            "{what} had not settled even when measured again from {from} ms: the first {} ms of that window move the mean of a throughput it watched by {:+.2}%, more than the 95% interval of the rest of the window ({:.2}%); lengthen [run] warmup_ms (now {now}) or duration_ms",
            readable(d.first_ms),
            d.bias_pct,
            d.ci95_pct,
        ),
    })
}

/// What the test bed of experiment `e` lacks for its workloads, as far as
/// the model can tell (see the module's doc), one warning per lack.
pub fn testbed(reg: &Registry, e: &Experiment) -> Vec<String> {
    let Some(tb) = reg.testbeds.get(&e.testbed) else {
        return Vec::new();
    };
    let Ok(p) = TestbedParams::from_set(&tb.params, &tb.at) else {
        return Vec::new();
    };
    let zero = |v: Option<f64>| v.is_none_or(|x| x == 0.0);
    let no_peer = p.peer_turnaround == 0.0
        && p.peer_cpu_per_segment == 0.0
        && zero(p.peer_cpu_per_kib)
        && zero(p.peer_cpu_per_ack)
        && zero(p.peer_processor_per_frame);
    let no_array = p.target_latency == 0.0 && zero(p.target_per_kib);
    let cards = |f: &dyn Fn(&Demand) -> bool| {
        let mut names: Vec<String> = Vec::new();
        for w in e.workloads.iter().filter(|w| f(&w.demand)) {
            let name = e.cards.get(w.card).map_or("?", |c| c.0.as_str());
            let name = format!("`{name}`");
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names.join(", ")
    };
    let mut out = Vec::new();
    let netperf = cards(&|d| matches!(d, Demand::NetperfTcpStream { .. }));
    if no_peer && !netperf.is_empty() {
        out.push(format!(
            "experiment `{}`: test bed `{}` models no netperf peer (every peer cost is 0), so the far end of the netperf workloads of card {netperf} costs nothing and their throughput is the server's alone, up to line rate; use a test bed with a peer",
            e.id, e.testbed
        ));
    }
    let disk = cards(&|d| matches!(d, Demand::Diskbench { .. }));
    if no_array && !disk.is_empty() {
        out.push(format!(
            "experiment `{}`: test bed `{}` models no disk array (target_latency is 0), so the diskbench I/Os of card {disk} are served at once and their throughput is the server's alone; use a test bed with an array",
            e.id, e.testbed
        ));
    }
    out
}

/// Every warning of scenario `sc` run on `reg` with `results` (one per
/// experiment, in file order): the test beds' lacks, then the runs short of
/// their precision.
pub fn of_scenario(reg: &Registry, sc: &Scenario, results: &[ExperimentResult]) -> Vec<String> {
    let mut out: Vec<String> = sc
        .experiments
        .iter()
        .flat_map(|e| testbed(reg, e))
        .collect();
    for r in results {
        out.extend(precision(&sc.run, r));
        out.extend(start_drift(&sc.run, r));
    }
    out
}

/// Every warning of a validation: [`of_scenario`] for each scenario with
/// its results, in file order.
pub fn of_scenarios(reg: &Registry, runs: &[(&Scenario, Vec<ExperimentResult>)]) -> Vec<String> {
    runs.iter()
        .flat_map(|(sc, results)| of_scenario(reg, sc, results))
        .collect()
}

/// Every warning of a placement: what the request's test bed lacks for its
/// workloads, then each simulated placement (best first) that ran to its
/// ceiling short of the request's precision.
pub fn of_placement(reg: &Registry, p: &Placement) -> Vec<String> {
    let req = &p.request;
    let unplaced = vec![String::new(); req.cards.len()];
    let e = crate::place::request_experiment(req, req.name.clone(), unplaced);
    let mut out: Vec<String> = testbed(reg, &e)
        .into_iter()
        .map(|w| {
            w.replacen(
                &format!("experiment `{}`", e.id),
                &format!("request `{}`", e.id),
                1,
            )
        })
        .collect();
    for c in &p.ranked {
        let Some(r) = c.result.as_ref() else { continue };
        let what = format!("placement `{}`", c.label);
        out.extend(short_of_precision_as(&req.run, &what, r.ci95_pct));
        out.extend(start_drift_as(&req.run, &what, r));
    }
    out
}
