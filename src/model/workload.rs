//! Workload kinds as scenario files know them ([`WorkloadDef`]: name, keys,
//! direction words, the shape of what they ask of an engine, how they are
//! made from their keys) and what a workload asks of its engine
//! ([`Demand`]). Each kind is stated in its own file under
//! `sim::workloads`, whose list the loader reads; engines say which shapes
//! they carry ([`super::EngineDef`]), so the loader matches neither.

use std::fmt;

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

/// What a workload asks of the engine that carries it, in the terms engines
/// know: a TCP stream, IP forwarding, disk I/Os or raw DMA blocks. A
/// workload kind ([`WorkloadDef`]) makes one from its keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Demand {
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

/// The shape of a [`Demand`]: what an engine says it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// [`Demand::NetperfTcpStream`].
    TcpStream,
    /// [`Demand::IpForward`].
    IpForward,
    /// [`Demand::Diskbench`].
    DiskIo,
    /// [`Demand::RawDma`].
    DmaBlocks,
}

impl Demand {
    /// Its shape.
    pub fn shape(&self) -> Shape {
        match self {
            Demand::NetperfTcpStream { .. } => Shape::TcpStream,
            Demand::IpForward { .. } => Shape::IpForward,
            Demand::Diskbench { .. } => Shape::DiskIo,
            Demand::RawDma { .. } => Shape::DmaBlocks,
        }
    }
}

/// What a workload kind reads from a scenario's workload table, offered
/// by the loader (which reports each problem at its key, with its line).
pub trait WorkloadArgs {
    /// The size at `key` (`socket_kib`, `block_kib`, ...) in bytes,
    /// `default_kib` KiB when absent; `None` when it is refused.
    fn size(&mut self, key: &str, default_kib: f64) -> Option<u64>;
    /// `outstanding`: 1 to 256 `what` per direction, `Some(None)` when
    /// absent; `None` when it is refused.
    fn outstanding(&mut self, what: &str) -> Option<Option<u32>>;
    /// `to`: the function of the same card it names (`Some(None)` when
    /// absent); `None` when it is refused or the card is unknown.
    fn to(&mut self) -> Option<Option<usize>>;
    /// The function the workload runs on, once found.
    fn function(&self) -> Option<usize>;
    /// Its direction, when valid.
    fn direction(&self) -> Option<Direction>;
    /// Refuses the workload with `message`, at its key `key` (`kind`,
    /// `direction`, `to`, ...).
    fn refuse(&mut self, key: &str, message: &str);

    /// `block_kib` in bytes (`default_kib` KiB when absent) and
    /// `outstanding` (1 to 256 `what`, `None` when absent); `None` when
    /// either is refused.
    fn blocks(&mut self, default_kib: f64, what: &str) -> Option<(u64, Option<u32>)> {
        let block = self.size("block_kib", default_kib);
        let outstanding = self.outstanding(what);
        block.zip(outstanding)
    }
}

/// A workload kind: what scenario files know of it. Each is a `static` in
/// its file under `sim::workloads`, listed there once.
#[derive(Debug)]
pub struct WorkloadDef {
    /// Its name in scenario files (`kind = "diskbench"`).
    pub name: &'static str,
    /// The keys it takes besides `card`, `function`, `kind`, `direction`
    /// and the CPUs pinned, among `socket_kib`, `message_kib`, `block_kib`,
    /// `outstanding` and `to`; any other of those given is refused.
    pub keys: &'static [&'static str],
    /// The direction a word of `direction` means (`Err`: a word of another
    /// kind, with why; `None`: no word at all).
    pub direction: fn(&str) -> Option<Result<Direction, &'static str>>,
    /// Its directions in its own terms: (out of the server, into it).
    pub words: [&'static str; 2],
    /// The shape of what it asks: the engines that carry that shape carry it.
    pub shape: Shape,
    /// What it asks of its engine, read from its keys (a [`Demand`] of its
    /// shape); `None` when a key is refused.
    pub make: fn(&mut dyn WorkloadArgs) -> Option<Demand>,
}

/// Two kinds are one when they have one name (names are unique in the list).
impl PartialEq for WorkloadDef {
    fn eq(&self, other: &WorkloadDef) -> bool {
        self.name == other.name
    }
}

/// The usual direction words: `transmit` or `write` out of the server,
/// `receive` or `read` into it, `bidirectional` both.
pub fn usual_direction(word: &str) -> Option<Result<Direction, &'static str>> {
    match word {
        "transmit" | "write" => Some(Ok(Direction::Out)),
        "receive" | "read" => Some(Ok(Direction::In)),
        "bidirectional" => Some(Ok(Direction::Both)),
        _ => None,
    }
}

/// A size in KiB as a reader writes it: `128 KiB`, `0.5 KiB`.
fn kib(bytes: u64) -> String {
    format!("{} KiB", bytes as f64 / 1024.0)
}

/// `netperf TCP stream, socket 128 KiB, send 32 KiB` or
/// `diskbench 128 KiB blocks, outstanding 4` (`outstanding (test bed
/// default)` when the scenario leaves it to the test bed).
impl fmt::Display for Demand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Demand::NetperfTcpStream {
                socket_bytes,
                message_bytes,
            } => write!(
                f,
                "netperf TCP stream, socket {}, send {}",
                kib(*socket_bytes),
                kib(*message_bytes)
            ),
            Demand::Diskbench {
                block_bytes,
                outstanding,
            } => {
                write!(f, "diskbench {} blocks, outstanding ", kib(*block_bytes))?;
                match outstanding {
                    Some(n) => write!(f, "{n}"),
                    None => f.write_str("(test bed default)"),
                }
            }
            Demand::IpForward {
                to,
                socket_bytes,
                message_bytes,
            } => write!(
                f,
                "IP forwarding of a TCP stream to function {to}, socket {}, send {}",
                kib(*socket_bytes),
                kib(*message_bytes)
            ),
            Demand::RawDma {
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
