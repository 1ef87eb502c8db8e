//! Experiments: a server, cards in slots, workloads on their functions, and
//! the published figures each experiment reproduces.

use std::fmt;
use std::path::PathBuf;

use super::workload::{Demand, Direction, WorkloadDef};
use crate::error::Location;

/// A workload on one function of one card.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// Index of the card in the experiment.
    pub card: usize,
    /// Index of the function in the card's adapter.
    pub function: usize,
    /// The workload kind.
    pub kind: &'static WorkloadDef,
    /// What it asks of the engine that carries it.
    pub demand: Demand,
    /// Its direction.
    pub direction: Direction,
    /// Where it is written (its `socket_kib` for netperf when given, else
    /// its `kind`), for checks made when the experiment is assembled.
    pub at: crate::error::Location,
    /// The CPU the scenario pins the function's interrupts to, and where.
    pub interrupt_cpu: Option<(u32, crate::error::Location)>,
    /// The CPU the scenario pins the workload's netperf processes to, and
    /// where.
    pub process_cpu: Option<(u32, crate::error::Location)>,
}

/// The benchmark and its direction in its own terms:
/// `netperf TCP stream, socket 128 KiB, send 32 KiB, receive`.
impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = match self.direction {
            Direction::Out => self.kind.words[0],
            Direction::In => self.kind.words[1],
            Direction::Both => "both ways",
        };
        write!(f, "{}, {word}", self.demand)
    }
}

/// A published figure an experiment reproduces.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureSpec {
    /// Stable id from the reference table (e.g. `hp2g.gige-rx.pcix.c1`).
    pub id: String,
    /// Card index.
    pub card: usize,
    /// Function index.
    pub function: usize,
    /// Published value, unchanged.
    pub published: f64,
    /// Unit of the published value (`Mbit/s` or `MB/s` for a throughput,
    /// `%` for the whole machine's CPU utilisation).
    pub unit: String,
    /// What the figure measures: the function's throughput, the sum over
    /// every card of the experiment, or the whole machine's CPU.
    pub scope: FigureScope,
    /// Where in the paper.
    pub source: String,
    /// Where the figure's id is written.
    pub at: crate::error::Location,
}

/// What a published figure measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureScope {
    /// The throughput of its card's function (both directions together).
    Function,
    /// The throughput of the function of that name summed over every card
    /// of the experiment (`card = "*"`): an aggregate of several adapters.
    AllCards,
    /// The throughput of every function of every card of the experiment
    /// added (`card = "*"` and `function = "*"`).
    AllFunctions,
    /// The utilisation of the whole machine's CPUs, in percent (mean over
    /// the partition's CPUs, as netperf reports it; unit `%`), or its
    /// service demand (unit `ms CPU per MB`: CPU time of the whole
    /// partition per 10^6 bytes moved).
    Cpu,
}

/// One experiment: a configuration that is simulated once.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    /// Experiment id, unique within its scenario.
    pub id: String,
    /// Server model name.
    pub server: String,
    /// Test bed model name.
    pub testbed: String,
    /// Cells in the partition.
    pub cells: u32,
    /// CPUs per cell of the partition, where the experiment sets them
    /// below the server's (`cpus_per_cell`); `None`: the server's.
    pub cpus_per_cell: Option<u32>,
    /// (card label, adapter name, slot name).
    pub cards: Vec<(String, String, String)>,
    /// Per card (same order), the link its functions run over instead of
    /// their adapter's (an interface setting such as the MTU), if the
    /// scenario names one.
    pub links: Vec<Option<String>>,
    /// Workloads.
    pub workloads: Vec<Workload>,
    /// Figures to compare against.
    pub figures: Vec<FigureSpec>,
    /// Where it was defined.
    pub at: Location,
}

/// Run-length settings.
///
/// The measured window is cut into batches of `batch_ms`; each throughput
/// the run watches is a batch-means series (`sim::Watch`: those the
/// experiment's figures read, a function's both ways added or a sum of
/// functions, or, for an experiment without such figures, each function's
/// each way). With `precision_pct` set, measuring stops at the first batch
/// boundary, at least `min_ms` in, where every such series' 95% interval is
/// within that percent of its mean, and at `duration_ms` at the latest;
/// without it, the window is `duration_ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSpec {
    /// Simulated time measured, after warm-up, in ms (the ceiling when
    /// `precision_pct` is set).
    pub duration_ms: f64,
    /// Simulated time discarded before measuring, in ms.
    pub warmup_ms: f64,
    /// Hard bound on events per experiment.
    pub max_events: u64,
    /// Stop measuring once every watched throughput's 95% interval is within
    /// this percent of its mean (None: measure `duration_ms`).
    pub precision_pct: Option<f64>,
    /// Shortest measured window when `precision_pct` is set, in ms.
    pub min_ms: f64,
    /// Length of one batch of the batch means, in ms.
    pub batch_ms: f64,
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            duration_ms: 100.0,
            warmup_ms: 10.0,
            max_events: 50_000_000,
            precision_pct: None,
            min_ms: 10.0,
            batch_ms: 1.0,
        }
    }
}

/// A scenario file.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Scenario name.
    pub name: String,
    /// One-line title.
    pub title: String,
    /// The paper it reproduces, if any.
    pub source: String,
    /// Whether the fit (`iosim calibrate`, `validate --cross-validate`) sees
    /// its figures, in its objective and its budget (`fit = false`: figures
    /// that `iosim validate` reports but no fit is asked to match yet).
    pub fit: bool,
    /// The file it came from.
    pub file: PathBuf,
    /// Run length.
    pub run: RunSpec,
    /// Its experiments.
    pub experiments: Vec<Experiment>,
}

impl Scenario {
    /// Whether any of its experiments has a published figure (what `validate`
    /// and the fit run; an example or what-if scenario has none).
    pub fn has_figures(&self) -> bool {
        self.experiments.iter().any(|e| !e.figures.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(demand: Demand, direction: Direction) -> String {
        let kind = match demand.shape() {
            super::super::Shape::DiskIo => &crate::sim::workloads::diskbench::KIND,
            _ => &crate::sim::workloads::netperf::KIND,
        };
        Workload {
            card: 0,
            function: 0,
            kind,
            demand,
            direction,
            at: crate::error::Location {
                file: "test.toml".into(),
                key: String::new(),
                line: 0,
                column: 0,
            },
            interrupt_cpu: None,
            process_cpu: None,
        }
        .to_string()
    }

    #[test]
    fn workloads_read_as_words() {
        let netperf = Demand::NetperfTcpStream {
            socket_bytes: 131_072,
            message_bytes: 512,
        };
        assert_eq!(
            workload(netperf, Direction::Both),
            "netperf TCP stream, socket 128 KiB, send 0.5 KiB, both ways"
        );
        assert!(workload(netperf, Direction::Out).ends_with(", transmit"));
        assert!(workload(netperf, Direction::In).ends_with(", receive"));
        let disk = Demand::Diskbench {
            block_bytes: 131_072,
            outstanding: None,
        };
        assert_eq!(
            workload(disk, Direction::In),
            "diskbench 128 KiB blocks, outstanding (test bed default), read"
        );
        let disk4 = Demand::Diskbench {
            block_bytes: 65_536,
            outstanding: Some(4),
        };
        assert_eq!(
            workload(disk4, Direction::Out),
            "diskbench 64 KiB blocks, outstanding 4, write"
        );
        assert_eq!(Direction::Both.to_string(), "both ways");
    }
}
