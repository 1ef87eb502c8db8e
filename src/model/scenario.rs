//! Experiments: a server, cards in slots, workloads on their functions, and
//! the published figures each experiment reproduces.

use std::path::PathBuf;

use crate::error::Location;

/// Which way data moves, seen from the server under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Server sends (netperf transmit; disk write: adapter reads host memory).
    Out,
    /// Server receives (netperf receive; disk read: adapter writes host memory).
    In,
    /// Both at once.
    Both,
}

/// A benchmark driving one adapter function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadKind {
    /// netperf TCP_STREAM.
    NetperfTcpStream {
        /// Socket buffer size (the TCP window), bytes.
        socket_bytes: u64,
        /// Send size, bytes.
        message_bytes: u64,
    },
    /// diskbench sequential I/O.
    Diskbench {
        /// Block size, bytes.
        block_bytes: u64,
        /// Outstanding I/Os per direction (None: the test bed's default).
        outstanding: Option<u32>,
    },
    /// Raw DMA: blocks moved back to back between a bus-test function and
    /// host memory. Direction `Out` is DMA reads of host memory (the data
    /// leaves the server's memory), `In` DMA writes to it.
    RawDma {
        /// Block size, bytes.
        block_bytes: u64,
        /// Blocks in flight per direction.
        outstanding: u32,
    },
}

/// A workload on one function of one card.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// Index of the card in the experiment.
    pub card: usize,
    /// Index of the function in the card's adapter.
    pub function: usize,
    /// The benchmark.
    pub kind: WorkloadKind,
    /// Its direction.
    pub direction: Direction,
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
    /// Unit of the published value (`Mbit/s` or `MB/s`).
    pub unit: String,
    /// Where in the paper.
    pub source: String,
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
    /// (card label, adapter name, slot name).
    pub cards: Vec<(String, String, String)>,
    /// Workloads.
    pub workloads: Vec<Workload>,
    /// Figures to compare against.
    pub figures: Vec<FigureSpec>,
    /// Where it was defined.
    pub at: Location,
}

/// Run-length settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSpec {
    /// Simulated time measured, after warm-up, in ms.
    pub duration_ms: f64,
    /// Simulated time discarded before measuring, in ms.
    pub warmup_ms: f64,
    /// Hard bound on events per experiment.
    pub max_events: u64,
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            duration_ms: 100.0,
            warmup_ms: 10.0,
            max_events: 50_000_000,
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
