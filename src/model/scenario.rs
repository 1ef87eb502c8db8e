//! Experiments: a server, cards in slots, workloads on their functions, and
//! the published figures each experiment reproduces.

use std::fmt;
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
    /// IP forwarding: a TCP stream from the client of this function's port
    /// to the client of port `to` (a function of the same card), through
    /// the server's stack; the clients' sockets and send size.
    IpForward {
        /// Function index, on the same card, of the port the packets leave by.
        to: usize,
        /// Socket size (window) of the clients' connection.
        socket_bytes: u64,
        /// Send size of the sending client.
        message_bytes: u64,
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
    /// Where it is written (its `socket_kib` for netperf when given, else
    /// its `kind`), for checks made when the experiment is assembled.
    pub at: crate::error::Location,
    /// The CPU the scenario pins the function's interrupts to, and where.
    pub interrupt_cpu: Option<(u32, crate::error::Location)>,
    /// The CPU the scenario pins the workload's netperf processes to, and
    /// where.
    pub process_cpu: Option<(u32, crate::error::Location)>,
}

impl Direction {
    /// Sets `v` as the (out, in) pair's value for this direction: its out
    /// side, its in side, or both.
    pub fn set<T: Copy>(self, pair: &mut (T, T), v: T) {
        match self {
            Direction::Out => pair.0 = v,
            Direction::In => pair.1 = v,
            Direction::Both => *pair = (v, v),
        }
    }
}

/// `out`, `in` or `both ways`.
impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Out => "out",
            Direction::In => "in",
            Direction::Both => "both ways",
        })
    }
}

/// A size in KiB as a reader writes it: `128 KiB`, `0.5 KiB`.
fn kib(bytes: u64) -> String {
    format!("{} KiB", bytes as f64 / 1024.0)
}

impl WorkloadKind {
    /// The word for `direction` in this benchmark's terms: transmit or
    /// receive for netperf, write or read for diskbench, both ways for either.
    pub fn direction_word(&self, direction: Direction) -> &'static str {
        match (self, direction) {
            (_, Direction::Both) => "both ways",
            (WorkloadKind::NetperfTcpStream { .. }, Direction::Out) => "transmit",
            (WorkloadKind::NetperfTcpStream { .. }, Direction::In) => "receive",
            (WorkloadKind::Diskbench { .. }, Direction::Out) => "write",
            (WorkloadKind::Diskbench { .. }, Direction::In) => "read",
            (WorkloadKind::RawDma { .. }, Direction::Out) => "DMA reads of host memory",
            (WorkloadKind::RawDma { .. }, Direction::In) => "DMA writes to host memory",
            (WorkloadKind::IpForward { .. }, _) => "forwarded",
        }
    }
}

/// `netperf TCP stream, socket 128 KiB, send 32 KiB` or
/// `diskbench 128 KiB blocks, outstanding 4` (`outstanding (test bed
/// default)` when the scenario leaves it to the test bed).
impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkloadKind::NetperfTcpStream {
                socket_bytes,
                message_bytes,
            } => write!(
                f,
                "netperf TCP stream, socket {}, send {}",
                kib(*socket_bytes),
                kib(*message_bytes)
            ),
            WorkloadKind::Diskbench {
                block_bytes,
                outstanding,
            } => {
                write!(f, "diskbench {} blocks, outstanding ", kib(*block_bytes))?;
                match outstanding {
                    Some(n) => write!(f, "{n}"),
                    None => f.write_str("(test bed default)"),
                }
            }
            WorkloadKind::IpForward {
                to,
                socket_bytes,
                message_bytes,
            } => write!(
                f,
                "IP forwarding of a TCP stream to function {to}, socket {}, send {}",
                kib(*socket_bytes),
                kib(*message_bytes)
            ),
            WorkloadKind::RawDma {
                block_bytes,
                outstanding,
            } => write!(
                f,
                "raw DMA {} blocks, {outstanding} in flight",
                kib(*block_bytes)
            ),
        }
    }
}

/// The benchmark and its direction in its own terms:
/// `netperf TCP stream, socket 128 KiB, send 32 KiB, receive`.
impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, {}",
            self.kind,
            self.kind.direction_word(self.direction)
        )
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

    fn workload(kind: WorkloadKind, direction: Direction) -> String {
        Workload {
            card: 0,
            function: 0,
            kind,
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
        let netperf = WorkloadKind::NetperfTcpStream {
            socket_bytes: 131_072,
            message_bytes: 512,
        };
        assert_eq!(
            workload(netperf, Direction::Both),
            "netperf TCP stream, socket 128 KiB, send 0.5 KiB, both ways"
        );
        assert!(workload(netperf, Direction::Out).ends_with(", transmit"));
        assert!(workload(netperf, Direction::In).ends_with(", receive"));
        let disk = WorkloadKind::Diskbench {
            block_bytes: 131_072,
            outstanding: None,
        };
        assert_eq!(
            workload(disk, Direction::In),
            "diskbench 128 KiB blocks, outstanding (test bed default), read"
        );
        let disk4 = WorkloadKind::Diskbench {
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
