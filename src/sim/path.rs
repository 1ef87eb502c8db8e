//! The path above a slot: the ropes from the bus adapter to the system bus
//! adapter (a FIFO byte server per direction per slot), the I/O controller's
//! link to memory where the server has one (a FIFO byte server per
//! direction, shared by every slot under the controller: what goes up
//! crosses the ropes and then the controller, what comes down the controller
//! and then the ropes; a posted write frees its bridge's buffer once it has
//! crossed the ropes, the controller buffering it from there), the fixed I/O read latency, and memory interleaved over
//! the partition's cells.
//!
//! The ropes and the controller's link are **cut-through** at the model's
//! granularity. A packet here is a whole burst or read (up to a few KiB),
//! where the real ropes and SBA links carry cache-line packets, so that a
//! real store-and-forward stage adds about one line's time, not a whole
//! burst's. So a packet may start on the second stage before it is through
//! the first: it finishes the second stage no earlier than the first
//! stage's end plus the second stage's time for one unit (one memory cache
//! line, the server's `cache_line`, plus that stage's packet header), and no
//! earlier than the second stage's FIFO allows. It joins the second stage's
//! FIFO at the latest time that still lets it finish so (`handoff_time`:
//! `first end + unit time - whole time`, both at the second stage's rate),
//! and never before its first unit is through the first stage. Each
//! stage still serves one packet at a time for its whole size, so its rate
//! is enforced exactly and its busy time is its bytes' time. A packet of at
//! most one line (a read request, a register read, a short write) is handed
//! on when it is through, as before. The order of one bus's packets is kept
//! (hand-off times rise with the packets), so a register's value still does
//! not pass the posted writes before it.
//!
//! From the bus onto the ropes a posted write is stored whole (the burst is
//! in the bridge's buffer before it goes up), unless the bridge is
//! `posted_writes_cut_through`: then the ropes, if they were idle, may have
//! started on it once its first line was in the bridge (retroactively, when
//! the burst ends: nothing else of the bus could have used them meanwhile),
//! and finish it no earlier than one line's time after its last byte, so
//! the buffer frees about a line after the burst when the ropes keep up.
//!
//! An I/O controller whose link has a `bandwidth_both_ways` also books
//! every packet's bytes at that rate, in the order packets join it in either
//! direction and from when they join: one way gets the link's rate each way,
//! a mix of both at most the shared one.
//!
//! The controller's link is booked, not stepped: a packet joins its FIFO at
//! a known time, so when it starts (when the link is free of the packets
//! that joined before it) and when it is through are worked out at once,
//! with no event for its crossing. Packets join in order of time: going
//! down, when memory answers; going up, at their hand-off, an event when
//! several buses' ropes end at the controller, and at once, when the
//! packet starts across the ropes, when only one bus's do (nothing else
//! can join between). What its end brings is booked with it: a posted
//! write's turn at the memory (`memory`), a register's value's return, a
//! packet's hand-off to its ropes going down; a read request arrives in an
//! event, which draws its memory time. The link's busy time is the booked
//! intervals up to the time asked about.
//!
//! The ropes going up are booked too, where nothing can come between their
//! packets (`Rope::booked_up`: they end at memory or at a controller only
//! they feed, and their bridge does not stream posted writes cut-through):
//! a packet pushed now starts when the ones before it are through and, under
//! a controller, once the last of them has started across its link; it then
//! joins the controller at its hand-off time, or arrives. A posted write's
//! leaving is booked on its bus (`Bus::leaving`): the bus applies it to its
//! bridge's buffer when it next arbitrates, and a master waiting for room is
//! woken by an event at the leaving that gives it room, as the rope's event
//! would have. Else (ropes under a controller several buses' ropes share)
//! each packet's crossing is an event.
//!
//! The ropes going down are booked as a packet joins them (when memory
//! answers, or at its hand-off from the controller: one bus's hand-off
//! times rise with its packets, so they join in order of time): it starts
//! when the ones before it are through, and its end, where it reaches the
//! bus, is an event. That event is scheduled when the packet joins, not
//! when it starts across, so where it falls on the very picosecond of
//! another event the two may be taken in the opposite order from when each
//! packet's start was an event (a tie that either order breaks rightly).
//!
//! Rope flow control: going up, a bus's ropes start their next packet only
//! while no packet of theirs waits in the controller's queue (the
//! controller holds one waiting packet per rope port, an assumption; the
//! real SBA's buffers were not found): that is, once the last one handed
//! on has started across the link (an event wakes the ropes then, if they
//! were held). So a controller whose link is full holds back the ropes,
//! and through their bridge's posted-write buffer the bus: what the slots
//! under it write is bounded by its rate.
//!
//! A DMA read crosses the ropes as a request packet, waits `io_read_latency`
//! plus the memory time of its lines, and returns across the ropes with its
//! data. Memory time: the read's cache lines are fetched `lines_in_flight` at a
//! time; each group waits for its slowest line, local or remote.
//!
//! The component: [`PathCfg`] and [`ControllerCfg`] (its configuration),
//! `Rope` and `Controller` (the two stages' state, crate-internal), the
//! packets that cross them ([`RopeItem`], [`Fetch`]) and the timing of a
//! hand-off from one stage to the next (`handoff_time`). The platform (`platform::path`)
//! moves packets through the stages, to memory and back, and schedules
//! their events.
//!
//! A hardware file: it uses only other hardware (the meters) and the
//! units; never the platform, an engine, a workload, the assembly or the
//! top-level event.

use std::collections::VecDeque;

use super::meter::BookedMeter;
use crate::units::{BytesPerSec, MoveRate, Picos};

/// The path from a slot's bridge to memory.
#[derive(Debug, Clone)]
pub struct PathCfg {
    /// Ropes of this slot times the rope rate (shared by both directions).
    pub rope_rate: BytesPerSec,
    /// Header bytes per rope packet.
    pub rope_overhead: u64,
    /// Fixed round trip of a DMA read outside memory.
    pub io_read_latency: Picos,
}

/// An I/O controller's link to memory, shared by the slots under it.
#[derive(Debug, Clone)]
pub struct ControllerCfg {
    /// `server/controller` label.
    pub label: String,
    /// Bytes per second each way.
    pub rate: BytesPerSec,
    /// Header bytes per packet.
    pub overhead: u64,
    /// Bytes per second both ways together, if the two directions share it.
    pub rate_both_ways: Option<BytesPerSec>,
}

/// Bytes of one register read (a 64-bit register).
pub(crate) const PIO_BYTES: u64 = 8;

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
        /// When its first unit (a cache line) had reached the bus adapter:
        /// the ropes may have started on it then (cut-through from the bus,
        /// see the module doc). Worked out only behind a bridge that
        /// streams posted writes cut-through, the only reader; elsewhere
        /// the write's end.
        head: Picos,
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
pub(crate) struct RopeDir {
    /// Packets waiting to cross; going down, booked ahead (see
    /// [`Rope::booked_down`]), the packets booked that have not yet
    /// arrived, in order.
    pub(crate) queue: VecDeque<RopeItem>,
    pub(crate) current: Option<RopeItem>,
    /// The packet crossing has already been handed on to the controller
    /// (going up, cut-through).
    pub(crate) current_handed: bool,
    /// Packets of this bus and direction waiting for their hand-off time to
    /// the next stage: going up, from these ropes into the controller;
    /// going down, from the controller onto these ropes.
    pub(crate) handoff: VecDeque<RopeItem>,
    /// Since when the ropes have been idle with nothing to send and free to
    /// send it (not held back by flow control), if they are.
    pub(crate) idle_since: Option<Picos>,
    /// Going up into a controller: when the last packet handed to it starts
    /// across its link (flow control holds the next one back till then).
    pub(crate) ctrl_start: Picos,
    /// The time of the last wake booked for the end of that hold.
    pub(crate) wake_at: Picos,
    /// Booked ahead (see [`RopeDir::book`]): when the ropes have carried
    /// every packet booked so far.
    free_at: Picos,
    /// Busy time.
    pub meter: BookedMeter,
}

impl RopeDir {
    /// Books a packet taking `time` across this direction (booked ahead,
    /// see [`Rope::booked_up`] and [`Rope::booked_down`]), joining at `at`
    /// (`now` or later): it starts once the packets booked before it are
    /// through. Its start and end.
    pub(crate) fn book(&mut self, now: Picos, at: Picos, time: Picos) -> (Picos, Picos) {
        let start = at.max(self.free_at);
        let end = start + time;
        self.free_at = end;
        self.meter.book(now, start, end);
        (start, end)
    }
}

/// The ropes of one slot: a link up (writes, read requests) and a link down
/// (read data), each at the slot's rope rate.
#[derive(Debug)]
pub(crate) struct Rope {
    /// Rate and latency.
    pub cfg: PathCfg,
    /// `cfg.rope_rate`, worked out for the hot path.
    pub(crate) moves: MoveRate,
    /// Up (0) and down (1).
    pub dirs: [RopeDir; 2],
    /// Packets going up are booked across when they are pushed, with no
    /// event (see the module doc): the ropes end at memory or at a
    /// controller only they feed, and their bridge does not stream posted
    /// writes cut-through.
    pub(crate) booked_up: bool,
    /// Packets going down are booked across when they join the ropes, their
    /// arrival at the bus an event (see the module doc).
    pub(crate) booked_down: bool,
    /// Payload bytes carried up since the last reset.
    pub up_bytes: u64,
    /// Payload bytes carried down since the last reset.
    pub down_bytes: u64,
}

impl Rope {
    /// The ropes as a stage of the path, for [`handoff_time`].
    pub(crate) fn stage(&self) -> Stage {
        Stage {
            rate: self.moves,
            overhead: self.cfg.rope_overhead,
        }
    }

    /// Idle ropes.
    pub fn new(cfg: PathCfg) -> Rope {
        Rope {
            moves: MoveRate::new(cfg.rope_rate),
            cfg,
            dirs: [RopeDir::default(), RopeDir::default()],
            booked_up: false,
            booked_down: true,
            up_bytes: 0,
            down_bytes: 0,
        }
    }
}

/// An I/O controller's link to memory: a FIFO byte server per direction
/// (0 up, 1 down), shared by the buses under it. A packet is booked across
/// it when it joins (see the module doc): no event marks its crossing.
#[derive(Debug)]
pub(crate) struct Controller {
    /// Rate and header.
    pub cfg: ControllerCfg,
    /// `cfg.rate` and `cfg.rate_both_ways`, worked out for the hot path.
    pub(crate) moves: MoveRate,
    pub(crate) moves_both_ways: Option<MoveRate>,
    /// Per direction: when the link is free, busy time.
    pub dirs: [CtrlDir; 2],
    /// Where the link's capacity both ways together (if it has one) is
    /// booked up to: packets of either direction take it in the order they
    /// join.
    pub(crate) both_ways_free: Picos,
    /// The ropes of one bus only end here: a packet joins the link's FIFO
    /// at its hand-off time when it starts across the ropes (no other
    /// bus's packet can come between).
    pub(crate) one_bus: bool,
}

/// One direction of an I/O controller's link.
#[derive(Debug, Default)]
pub(crate) struct CtrlDir {
    /// When it has carried every packet booked so far.
    pub(crate) free_at: Picos,
    /// Busy time, booked ahead.
    pub meter: BookedMeter,
}

impl Controller {
    /// The controller's link as a stage of the path, for [`handoff_time`].
    pub(crate) fn stage(&self) -> Stage {
        Stage {
            rate: self.moves,
            overhead: self.cfg.overhead,
        }
    }

    /// An idle link.
    pub fn new(cfg: ControllerCfg) -> Controller {
        Controller {
            moves: MoveRate::new(cfg.rate),
            moves_both_ways: cfg.rate_both_ways.map(MoveRate::new),
            cfg,
            dirs: [CtrlDir::default(), CtrlDir::default()],
            both_ways_free: Picos(0),
            one_bus: false,
        }
    }
}

impl RopeItem {
    /// Payload bytes of the packet.
    pub(crate) fn payload(&self) -> u64 {
        match self {
            RopeItem::Write { bytes, .. } => *bytes,
            RopeItem::ReadReq(_) | RopeItem::PioReq { .. } => 0,
            RopeItem::ReadData(f) => f.bytes,
            RopeItem::PioData { .. } => PIO_BYTES,
        }
    }

    pub(crate) fn dir(&self) -> usize {
        match self {
            RopeItem::Write { .. } | RopeItem::ReadReq(_) | RopeItem::PioData { .. } => 0,
            RopeItem::ReadData(_) | RopeItem::PioReq { .. } => 1,
        }
    }
}

/// One stage of the path for [`handoff_time`]: its rate and its header
/// bytes per packet.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stage {
    /// Bytes per second.
    pub rate: MoveRate,
    /// Header bytes per packet.
    pub overhead: u64,
}

impl Stage {
    /// Time to move `bytes` of payload and the header.
    fn time(&self, bytes: u64) -> Picos {
        self.rate.time(bytes + self.overhead)
    }
}

/// When a packet of `payload` bytes that crosses stage `first` from `start`
/// to `end` may join the FIFO of stage `second`, a unit being
/// `min(payload, line)` bytes: the latest time that still lets it finish
/// there one unit's time after `end`, and not before its first unit is
/// through `first`. A packet of at most one line gives `end`: store and
/// forward.
pub(crate) fn handoff_time(
    start: Picos,
    end: Picos,
    payload: u64,
    line: u64,
    first: Stage,
    second: Stage,
) -> Picos {
    let unit = payload.min(line);
    let head = (start + first.time(unit)).min(end);
    let whole = second.time(payload);
    let tail = second.time(unit);
    Picos(end.0.saturating_sub(whole.0 - tail.0.min(whole.0))).max(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_is_handed_on_to_finish_one_line_after_the_first_stage() {
        let stage = |mb_s: f64| Stage {
            rate: MoveRate::new(crate::units::BytesPerSec(mb_s * 1e6)),
            overhead: 8,
        };
        let (rope, link) = (stage(500.0), stage(1000.0));
        // 4096 bytes across 500 MB/s ropes from 0 to 8208 ns, then a
        // 1000 MB/s link: 4104 ns there in all, 72 ns for a line and its
        // header, so it may join at 8208 + 72 - 4104 ns, and finishes there
        // one line after the ropes.
        let at = handoff_time(Picos(0), Picos(8_208_000), 4096, 64, rope, link);
        assert_eq!(at, Picos(8_208_000 + 72_000 - 4_104_000));
        assert_eq!(at + link.time(4096), Picos(8_280_000));
        // Down, the link first: the ropes take it once its first line is
        // across the link (72 ns), and finish 72 ns later than alone.
        let at = handoff_time(Picos(0), Picos(4_104_000), 4096, 64, link, rope);
        assert_eq!(at, Picos(72_000));
        assert_eq!(at + rope.time(4096), Picos(72_000 + 8_208_000));
        // A packet of at most a line is stored and forwarded.
        for payload in [0, 8, 64] {
            let end = link.time(payload);
            let at = handoff_time(Picos(0), end, payload, 64, link, rope);
            assert_eq!(at, end, "{payload} bytes");
        }
    }
}
