//! What one simulated experiment measured.

use crate::units::{BytesPerSec, Picos};

/// Throughput and utilisations of one adapter function.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionResult {
    /// `card.function`.
    pub label: String,
    /// Link name.
    pub link: String,
    /// Payload the server sent (netperf transmit, disk write).
    pub out: BytesPerSec,
    /// Payload the server received (netperf receive, disk read).
    pub inn: BytesPerSec,
    /// Payload ceiling of the link per direction.
    pub ceiling: BytesPerSec,
    /// Utilisation of the function's interrupt CPU (0..1), whatever else
    /// runs there.
    pub cpu_util: f64,
    /// Utilisation of the busier of the CPUs its processes (netperf send,
    /// receive) run on; 0 without a process.
    pub app_cpu_util: f64,
    /// Utilisation of the function's own on-card processor (0 without one).
    pub card_cpu_util: f64,
    /// Mean time the interrupt CPU stalls on one of this function's register
    /// reads, from the read leaving the CPU to its value coming back (zero
    /// when the driver makes none).
    pub register_read: Picos,
    /// Frames per second the outbound wire sent with the transmit FIFO run
    /// dry under it (transmit underruns; zero for a store-and-forward MAC).
    pub tx_underruns_per_s: f64,
    /// Utilisation of the outbound wire.
    pub wire_out_util: f64,
    /// Utilisation of the inbound wire.
    pub wire_in_util: f64,
}

impl FunctionResult {
    /// Both directions together.
    pub fn total(&self) -> BytesPerSec {
        BytesPerSec(self.out.0 + self.inn.0)
    }
}

/// Utilisation of one bus and the ropes above it.
#[derive(Debug, Clone, PartialEq)]
pub struct BusResult {
    /// `card@slot`.
    pub label: String,
    /// Negotiated bus mode.
    pub mode: String,
    /// Peak data rate of the bus.
    pub peak: BytesPerSec,
    /// Fraction of time the bus carried a transaction.
    pub util: f64,
    /// Data moved over the bus.
    pub data: BytesPerSec,
    /// PCI retries per second.
    pub retries_per_s: f64,
    /// Fraction of time the busier rope direction was busy.
    pub rope_util: f64,
    /// Payload up the ropes (posted writes).
    pub rope_up: BytesPerSec,
    /// Payload down the ropes (read data).
    pub rope_down: BytesPerSec,
    /// Rope capacity per direction.
    pub rope_capacity: BytesPerSec,
    /// The I/O controller its ropes end at, and the utilisation of the
    /// busier direction of its link to memory (shared with the other buses
    /// under it).
    pub controller: Option<(String, f64)>,
}

/// Utilisation of one CPU of the partition.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuResult {
    /// Index in the partition.
    pub cpu: usize,
    /// Fraction of time busy (computing or stalled on a register read).
    pub util: f64,
    /// What runs there, in words.
    pub work: String,
}

/// Lifetime byte counters for conservation checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Bytes posted by masters on the buses.
    pub bus_write_bytes: u64,
    /// Posted bytes that crossed the ropes.
    pub rope_write_bytes: u64,
    /// Posted bytes still held in bridges.
    pub posted_in_bridges: u64,
    /// Read data bytes delivered to functions.
    pub read_bytes_delivered: u64,
}

/// A transient the warm-up left in a measured window: the first fifth of
/// the window (at least two sub-batches) differs from the rest by more than
/// their two 95% intervals (batch means) added, and moves the throughput's
/// mean over the whole window by more than the 95% interval of the rest and
/// than the precision the run was asked for. A transient widens the
/// interval of the window it is in, so that interval would hide it. A run
/// whose first window has one measures again after it (`sim::run`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StartDrift {
    /// How far the first fifth moves the mean over the whole window, in
    /// percent of the mean over the rest.
    pub bias_pct: f64,
    /// The 95% interval of the mean over the rest, in percent of it.
    pub ci95_pct: f64,
    /// The length of the first fifth (ms).
    pub first_ms: f64,
}

/// Everything measured in one experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentResult {
    /// Experiment id.
    pub id: String,
    /// Per function.
    pub functions: Vec<FunctionResult>,
    /// Per bus.
    pub buses: Vec<BusResult>,
    /// Every saturated resource (at least 90% busy), busiest first, with its
    /// utilisation; or, when none is, the busiest one.
    pub bottleneck: String,
    /// CPUs in the partition.
    pub cpus: u32,
    /// Per CPU of the partition.
    pub cpu_list: Vec<CpuResult>,
    /// Fraction of the time the memory was busy with DMA (reads' data and
    /// posted writes at its bandwidth), if the server models its bandwidth.
    pub memory_util: Option<f64>,
    /// Whole-machine CPU utilisation: the mean over every CPU of the
    /// partition (what netperf reports).
    pub cpu_util: f64,
    /// Service demand: CPU time of the whole partition per kilobyte
    /// (10^3 bytes) of payload the functions moved, in microseconds
    /// (infinite when nothing moved).
    pub service_demand_us_per_kb: f64,
    /// Events simulated.
    pub events: u64,
    /// Simulated time measured (after the warm-up).
    pub measured: Picos,
    /// The widest 95% interval of a throughput the run watched (batch means,
    /// see `sim::Watch`), in percent of its mean: infinite with fewer than
    /// two batches, 0 when nothing moved.
    pub ci95_pct: f64,
    /// The transient the warm-up left at the start of the measured window,
    /// if any (see [`StartDrift`]).
    pub start_drift: Option<StartDrift>,
    /// When the first window measured (after the scenario's warm-up)
    /// started before the steady state: the time the run was measured again
    /// from, that window joining the warm-up.
    pub remeasured_from: Option<Picos>,
    /// Lifetime counters.
    pub totals: Totals,
}

impl ExperimentResult {
    /// Assembles a result and names its bottleneck.
    pub fn new(
        id: String,
        functions: Vec<FunctionResult>,
        buses: Vec<BusResult>,
        cpu_list: Vec<CpuResult>,
        memory_util: Option<f64>,
        events: u64,
        totals: Totals,
    ) -> Self {
        let mut cands: Vec<(f64, String)> = Vec::new();
        for b in &buses {
            cands.push((b.util, format!("bus {} ({})", b.label, b.mode)));
            cands.push((b.rope_util, format!("ropes above {}", b.label)));
            if let Some((label, util)) = &b.controller {
                let name = format!("I/O controller {label}");
                if !cands.iter().any(|(_, n)| *n == name) {
                    cands.push((*util, name));
                }
            }
        }
        if let Some(u) = memory_util {
            cands.push((u, "memory (DMA)".to_string()));
        }
        for c in &cpu_list {
            cands.push((c.util, format!("CPU {}: {}", c.cpu, c.work)));
        }
        for f in &functions {
            cands.push((f.card_cpu_util, format!("processor of {}", f.label)));
            cands.push((f.wire_out_util, format!("link {} out", f.label)));
            cands.push((f.wire_in_util, format!("link {} in", f.label)));
        }
        let bottleneck = name_bottleneck(cands);
        let n = cpu_list.len().max(1) as f64;
        let busy: f64 = cpu_list.iter().map(|c| c.util).sum();
        let moved: f64 = functions.iter().map(|f| f.total().0).sum();
        let service_demand_us_per_kb = if moved > 0.0 {
            // CPU-seconds per second over kilobytes per second.
            busy * 1e6 / (moved / 1e3)
        } else {
            f64::INFINITY
        };
        ExperimentResult {
            id,
            functions,
            buses,
            bottleneck,
            cpus: cpu_list.len() as u32,
            cpu_util: busy / n,
            service_demand_us_per_kb,
            cpu_list,
            memory_util,
            events,
            measured: Picos(0),
            ci95_pct: f64::INFINITY,
            start_drift: None,
            remeasured_from: None,
            totals,
        }
    }

    /// The result with its measured window and the widest interval of the
    /// throughputs it watched.
    pub fn measured(mut self, window: Picos, ci95_pct: f64) -> Self {
        self.measured = window;
        self.ci95_pct = ci95_pct;
        self
    }

    /// The result with the transient its measured window starts with, and
    /// the time it was measured again from if its first window had not
    /// settled.
    pub fn with_start_drift(
        mut self,
        drift: Option<StartDrift>,
        remeasured_from: Option<Picos>,
    ) -> Self {
        self.start_drift = drift;
        self.remeasured_from = remeasured_from;
        self
    }
}

/// Names every resource at least 90% busy, busiest first (ties in the given
/// order), separated by "; "; when none is, says so and names the busiest.
fn name_bottleneck(mut cands: Vec<(f64, String)>) -> String {
    cands.sort_by(|a, b| b.0.total_cmp(&a.0));
    let saturated: Vec<String> = cands
        .iter()
        .filter(|c| c.0 >= 0.9)
        .map(|(u, name)| format!("{name} ({:.0}% busy)", u * 100.0))
        .collect();
    if !saturated.is_empty() {
        return saturated.join("; ");
    }
    let (u, name) = cands
        .first()
        .map_or((0.0, "none"), |(u, n)| (*u, n.as_str()));
    format!(
        "none saturated: latency or window bound (busiest: {name} {:.0}%)",
        u * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_saturated_resource_is_named_busiest_first() {
        let c = |u: f64, n: &str| (u, n.to_string());
        assert_eq!(
            name_bottleneck(vec![c(0.95, "bus b"), c(0.5, "link"), c(1.0, "cpu")]),
            "cpu (100% busy); bus b (95% busy)"
        );
        assert_eq!(
            name_bottleneck(vec![c(0.5, "link"), c(0.8, "bus b")]),
            "none saturated: latency or window bound (busiest: bus b 80%)"
        );
    }
}
