//! The path above a slot: the ropes from the bus adapter to the system bus
//! adapter (a FIFO byte server per direction per slot), the I/O controller's
//! link to memory where the server has one (a FIFO byte server per
//! direction, shared by every slot under the controller: what goes up
//! crosses the ropes and then the controller, what comes down the controller
//! and then the ropes; a posted write frees its bridge's buffer once it has
//! crossed the ropes, the controller buffering it from there), the fixed I/O read latency, and memory interleaved over
//! the partition's cells.
//!
//! A DMA read crosses the ropes as a request packet, waits `io_read_latency`
//! plus the memory time of its lines, and returns across the ropes with its
//! data. Memory time: the read's cache lines are fetched `lines_in_flight` at a
//! time; each group waits for its slowest line, local or remote.

use std::collections::VecDeque;

use super::config::{MemoryCfg, PathCfg};
use super::dma::DmaDone;
use super::meter::BusyMeter;
use super::platform::Platform;
use super::Ev;
use crate::engine::{RngStream, Scheduler};
use crate::units::Picos;

/// Bytes of one register read (a 64-bit register).
pub const PIO_BYTES: u64 = 8;

/// What a read fetch will deliver to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchKind {
    /// A PCI-X split read of op `op` of function `func`.
    Split {
        /// Global function.
        func: usize,
        /// Op.
        op: u64,
    },
    /// A PCI delayed read held in bridge slot `slot` for op `op`.
    Delayed {
        /// Bridge slot.
        slot: usize,
        /// Op.
        op: u64,
    },
}

/// A read of host memory by the bridge of bus `bus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fetch {
    /// Bus index.
    pub bus: usize,
    /// Bytes read.
    pub bytes: u64,
    /// Where the data goes.
    pub kind: FetchKind,
}

/// A packet on the ropes.
#[derive(Debug, Clone, Copy)]
pub enum RopeItem {
    /// Posted write data going up.
    Write {
        /// Bytes.
        bytes: u64,
    },
    /// A read request going up.
    ReadReq(Fetch),
    /// Read data coming down.
    ReadData(Fetch),
    /// A CPU's register read going down to the bus adapter, for a card on
    /// bus `target` (this bus, or a card's secondary bus below it).
    PioReq {
        /// The stalled CPU.
        cpu: usize,
        /// The bus of the card read.
        target: usize,
    },
    /// A register's value going up to CPU `cpu`: behind the posted writes
    /// (PCI ordering: a read completion does not pass posted writes).
    PioData {
        /// The stalled CPU.
        cpu: usize,
    },
}

/// One direction of the ropes of a slot: a FIFO byte server.
#[derive(Debug, Default)]
pub struct RopeDir {
    queue: VecDeque<RopeItem>,
    current: Option<RopeItem>,
    /// Busy time.
    pub meter: BusyMeter,
}

/// The ropes of one slot: a link up (writes, read requests) and a link down
/// (read data), each at the slot's rope rate.
#[derive(Debug)]
pub struct Rope {
    /// Rate and latency.
    pub cfg: PathCfg,
    /// Up (0) and down (1).
    pub dirs: [RopeDir; 2],
    /// Payload bytes carried up since the last reset.
    pub up_bytes: u64,
    /// Payload bytes carried down since the last reset.
    pub down_bytes: u64,
}

impl Rope {
    /// Idle ropes.
    pub fn new(cfg: PathCfg) -> Rope {
        Rope {
            cfg,
            dirs: [RopeDir::default(), RopeDir::default()],
            up_bytes: 0,
            down_bytes: 0,
        }
    }
}

/// An I/O controller's link to memory: a FIFO byte server per direction
/// (0 up, 1 down), shared by the buses under it; each packet remembers its
/// bus.
#[derive(Debug)]
pub struct Controller {
    /// Rate and header.
    pub cfg: super::config::ControllerCfg,
    /// Per direction: waiting packets, the one crossing, busy time.
    pub dirs: [CtrlDir; 2],
}

/// One direction of an I/O controller's link.
#[derive(Debug, Default)]
pub struct CtrlDir {
    queue: VecDeque<(usize, RopeItem)>,
    current: Option<(usize, RopeItem)>,
    /// Busy time.
    pub meter: BusyMeter,
}

impl Controller {
    /// An idle link.
    pub fn new(cfg: super::config::ControllerCfg) -> Controller {
        Controller {
            cfg,
            dirs: [CtrlDir::default(), CtrlDir::default()],
        }
    }
}

impl RopeItem {
    /// Payload bytes of the packet.
    fn payload(&self) -> u64 {
        match self {
            RopeItem::Write { bytes } => *bytes,
            RopeItem::ReadReq(_) | RopeItem::PioReq { .. } => 0,
            RopeItem::ReadData(f) => f.bytes,
            RopeItem::PioData { .. } => PIO_BYTES,
        }
    }

    fn dir(&self) -> usize {
        match self {
            RopeItem::Write { .. } | RopeItem::ReadReq(_) | RopeItem::PioData { .. } => 0,
            RopeItem::ReadData(_) | RopeItem::PioReq { .. } => 1,
        }
    }
}

/// Memory time of a read of `bytes`.
pub fn memory_time(m: &MemoryCfg, bytes: u64, rng: &mut RngStream) -> Picos {
    let lines = bytes.div_ceil(m.line).max(1);
    let mut t = Picos(0);
    let mut left = lines;
    while left > 0 {
        let g = left.min(m.lines_in_flight);
        left -= g;
        let mut worst = m.local;
        if m.p_remote > 0.0 {
            for _ in 0..g {
                if rng.chance(m.p_remote) {
                    worst = m.remote;
                    break;
                }
            }
        }
        t += worst;
    }
    t
}

impl Platform {
    /// Queues a packet on the ropes above bus `b`.
    pub(super) fn rope_push(&mut self, b: usize, item: RopeItem, s: &mut Scheduler<Ev>) {
        let d = item.dir();
        self.ropes[b].dirs[d].queue.push_back(item);
        self.rope_start(b, d, s);
    }

    fn rope_start(&mut self, b: usize, d: usize, s: &mut Scheduler<Ev>) {
        let r = &mut self.ropes[b];
        let rate = r.cfg.rope_rate;
        let overhead = r.cfg.rope_overhead;
        let dir = &mut r.dirs[d];
        if dir.current.is_some() {
            return;
        }
        let Some(item) = dir.queue.pop_front() else {
            return;
        };
        let payload = item.payload();
        dir.current = Some(item);
        dir.meter.start(s.now());
        let t = Picos::to_move(payload + overhead, rate);
        s.schedule_in(t, Ev::RopeDone(b, d));
    }

    /// The packet on direction `d` of the ropes above bus `b` has crossed:
    /// going up, on to the I/O controller if the bus has one, else it has
    /// arrived; going down, it reaches the bus.
    pub(super) fn rope_done(&mut self, b: usize, d: usize, s: &mut Scheduler<Ev>) {
        let Some(item) = self.ropes[b].dirs[d].current.take() else {
            return;
        };
        self.ropes[b].dirs[d].meter.stop(s.now());
        match item {
            RopeItem::Write { bytes } => {
                self.ropes[b].up_bytes += bytes;
                self.posted_write_left_bridge(b, bytes, s);
            }
            RopeItem::ReadData(f) => self.ropes[b].down_bytes += f.bytes,
            _ => {}
        }
        match self.cfg.buses[b].controller {
            Some(c) if d == 0 => self.ctrl_push(c, b, item, s),
            _ => self.path_arrived(b, item, s),
        }
        self.rope_start(b, d, s);
    }

    /// A posted write of bus `b` has crossed its ropes: the bus adapter's
    /// buffer is free again. Above the ropes an I/O controller (an SBA, an
    /// IKE) takes the packet into buffers of its own, as rope flow control
    /// returns a credit once the far end has taken a packet, so the
    /// bridge's window covers the ropes and not the controller's link too
    /// (the controller's queue is not bounded: its link rate is).
    pub(super) fn posted_write_left_bridge(&mut self, b: usize, bytes: u64, s: &mut Scheduler<Ev>) {
        self.totals.rope_write_bytes += bytes;
        self.bus_sync(b, s);
        let bus = &mut self.buses[b];
        bus.posted_used = bus.posted_used.saturating_sub(bytes);
        self.bus_arbitrate(b, s);
    }

    /// Queues a packet going down towards bus `b`: through its I/O
    /// controller, if any, then its ropes; towards the secondary bus of an
    /// on-card bridge, down to the slot's bus first.
    pub(super) fn down_push(&mut self, b: usize, item: RopeItem, s: &mut Scheduler<Ev>) {
        if let Some(cb) = self.cfg.buses[b].upstream {
            let parent = self.cfg.card_bridges[cb].parent;
            return self.down_push(parent, item, s);
        }
        match self.cfg.buses[b].controller {
            Some(c) => self.ctrl_push(c, b, item, s),
            None => self.rope_push(b, item, s),
        }
    }

    /// Sends a packet of bus `b` up: onto its ropes, or, from the secondary
    /// bus of an on-card bridge, through the bridge: a posted write becomes
    /// the bridge's write on the slot's bus, a read request its read there
    /// (the bus hears of either once the bridge is done), and a register's
    /// value goes on up from the slot's bus (not behind the bridge's posted
    /// writes: left out).
    pub(super) fn up_push(&mut self, b: usize, item: RopeItem, s: &mut Scheduler<Ev>) {
        let Some(cb) = self.cfg.buses[b].upstream else {
            return self.rope_push(b, item, s);
        };
        let port = self.cfg.functions.len() + cb;
        let forwarded = |item| DmaDone::Forwarded { bus: b, item };
        match item {
            RopeItem::Write { bytes } => self.dma_write(port, bytes, forwarded(item), s),
            RopeItem::ReadReq(f) => {
                self.dma_read(port, f.bytes, forwarded(RopeItem::ReadData(f)), s)
            }
            RopeItem::PioData { .. } => {
                let parent = self.cfg.card_bridges[cb].parent;
                self.up_push(parent, item, s)
            }
            // Nothing else goes up.
            RopeItem::ReadData(_) | RopeItem::PioReq { .. } => self.rope_push(b, item, s),
        }
    }

    fn ctrl_push(&mut self, c: usize, b: usize, item: RopeItem, s: &mut Scheduler<Ev>) {
        let d = item.dir();
        self.ctrls[c].dirs[d].queue.push_back((b, item));
        self.ctrl_start(c, d, s);
    }

    fn ctrl_start(&mut self, c: usize, d: usize, s: &mut Scheduler<Ev>) {
        let ctrl = &mut self.ctrls[c];
        let (rate, overhead) = (ctrl.cfg.rate, ctrl.cfg.overhead);
        let dir = &mut ctrl.dirs[d];
        if dir.current.is_some() {
            return;
        }
        let Some((b, item)) = dir.queue.pop_front() else {
            return;
        };
        dir.current = Some((b, item));
        dir.meter.start(s.now());
        let t = Picos::to_move(item.payload() + overhead, rate);
        s.schedule_in(t, Ev::CtrlDone(c, d));
    }

    /// The packet on direction `d` of I/O controller `c` has crossed: going
    /// up it has arrived, going down it goes on to its bus's ropes.
    pub(super) fn ctrl_done(&mut self, c: usize, d: usize, s: &mut Scheduler<Ev>) {
        let Some((b, item)) = self.ctrls[c].dirs[d].current.take() else {
            return;
        };
        self.ctrls[c].dirs[d].meter.stop(s.now());
        if d == 0 {
            self.path_arrived(b, item, s);
        } else {
            self.rope_push(b, item, s);
        }
        self.ctrl_start(c, d, s);
    }

    /// A packet of bus `b` has crossed the whole path: a posted write is in
    /// memory (its bridge's buffer freed at the ropes), a read request goes to memory, read data and a
    /// register read reach the bus, a register's value heads for its CPU.
    pub(super) fn path_arrived(&mut self, b: usize, item: RopeItem, s: &mut Scheduler<Ev>) {
        match item {
            // Its bridge's buffer was freed when it left the ropes; it
            // occupies the memory.
            RopeItem::Write { bytes } => {
                self.memory.serve(s.now(), bytes);
            }
            RopeItem::ReadReq(f) => {
                let t = self.ropes[b].cfg.io_read_latency
                    + memory_time(&self.cfg.memory, f.bytes, &mut self.rng);
                let now = s.now();
                let served = self.memory.serve(now, f.bytes);
                s.schedule_at((now + t).max(served), Ev::MemDone(f));
            }
            RopeItem::ReadData(f) => match f.kind {
                FetchKind::Split { func, op } => self.bus_push_completion(b, func, op, f.bytes, s),
                FetchKind::Delayed { slot, op } => self.bus_delayed_ready(b, slot, op, s),
            },
            RopeItem::PioReq { cpu, target } => self.bus_push_pio(b, cpu, target, s),
            RopeItem::PioData { cpu } => {
                // The fixed part of the round trip (bus adapters and cell
                // controller), as for a DMA read.
                s.schedule_in(self.ropes[b].cfg.io_read_latency, Ev::PioDone(cpu));
            }
        }
    }

    /// Memory has answered fetch `f`: its data goes down the ropes.
    pub(super) fn mem_done(&mut self, f: Fetch, s: &mut Scheduler<Ev>) {
        self.down_push(f.bus, RopeItem::ReadData(f), s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(p_remote: f64, in_flight: u64) -> MemoryCfg {
        MemoryCfg {
            local: Picos(200_000),
            remote: Picos(500_000),
            p_remote,
            line: 64,
            lines_in_flight: in_flight,
            bandwidth: None,
        }
    }

    #[test]
    fn one_cell_reads_are_all_local() {
        let mut r = RngStream::new(1, 1);
        assert_eq!(memory_time(&mem(0.0, 8), 512, &mut r), Picos(200_000));
        assert_eq!(memory_time(&mem(0.0, 4), 512, &mut r), Picos(400_000));
    }

    #[test]
    fn a_group_waits_for_its_slowest_line() {
        let mut r = RngStream::new(1, 1);
        let n = 10_000;
        let mean: f64 = (0..n)
            .map(|_| memory_time(&mem(0.5, 8), 512, &mut r).0 as f64)
            .sum::<f64>()
            / n as f64;
        // P(all 8 local) = 1/256.
        let expect = 500_000.0 - 300_000.0 / 256.0;
        assert!((mean - expect).abs() < 2_000.0, "{mean}");
    }
}
