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

use std::collections::VecDeque;

use super::dma::DmaDone;
use super::memory::memory_time;
use super::meter::BookedMeter;
use super::platform::Platform;
use super::Ev;
use crate::engine::Scheduler;
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
pub struct RopeDir {
    /// Packets waiting to cross; going down, booked ahead (see
    /// [`Rope::booked_down`]), the packets booked that have not yet
    /// arrived, in order.
    queue: VecDeque<RopeItem>,
    current: Option<RopeItem>,
    /// The packet crossing has already been handed on to the controller
    /// (going up, cut-through).
    current_handed: bool,
    /// Packets of this bus and direction waiting for their hand-off time to
    /// the next stage: going up, from these ropes into the controller;
    /// going down, from the controller onto these ropes.
    handoff: VecDeque<RopeItem>,
    /// Since when the ropes have been idle with nothing to send and free to
    /// send it (not held back by flow control), if they are.
    idle_since: Option<Picos>,
    /// Going up into a controller: when the last packet handed to it starts
    /// across its link (flow control holds the next one back till then).
    ctrl_start: Picos,
    /// The time of the last wake booked for the end of that hold.
    wake_at: Picos,
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
    fn book(&mut self, now: Picos, at: Picos, time: Picos) -> (Picos, Picos) {
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
pub struct Rope {
    /// Rate and latency.
    pub cfg: PathCfg,
    /// `cfg.rope_rate`, worked out for the hot path.
    moves: MoveRate,
    /// Up (0) and down (1).
    pub dirs: [RopeDir; 2],
    /// Packets going up are booked across when they are pushed, with no
    /// event (see the module doc): the ropes end at memory or at a
    /// controller only they feed, and their bridge does not stream posted
    /// writes cut-through.
    pub(super) booked_up: bool,
    /// Packets going down are booked across when they join the ropes, their
    /// arrival at the bus an event (see the module doc).
    pub(super) booked_down: bool,
    /// Payload bytes carried up since the last reset.
    pub up_bytes: u64,
    /// Payload bytes carried down since the last reset.
    pub down_bytes: u64,
}

impl Rope {
    /// The ropes as a stage of the path, for [`handoff_time`].
    fn stage(&self) -> Stage {
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
pub struct Controller {
    /// Rate and header.
    pub cfg: ControllerCfg,
    /// `cfg.rate` and `cfg.rate_both_ways`, worked out for the hot path.
    moves: MoveRate,
    moves_both_ways: Option<MoveRate>,
    /// Per direction: when the link is free, busy time.
    pub dirs: [CtrlDir; 2],
    /// Where the link's capacity both ways together (if it has one) is
    /// booked up to: packets of either direction take it in the order they
    /// join.
    both_ways_free: Picos,
    /// The ropes of one bus only end here: a packet joins the link's FIFO
    /// at its hand-off time when it starts across the ropes (no other
    /// bus's packet can come between).
    pub(super) one_bus: bool,
}

/// One direction of an I/O controller's link.
#[derive(Debug, Default)]
pub struct CtrlDir {
    /// When it has carried every packet booked so far.
    free_at: Picos,
    /// Busy time, booked ahead.
    pub meter: BookedMeter,
}

impl Controller {
    /// The controller's link as a stage of the path, for [`handoff_time`].
    fn stage(&self) -> Stage {
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
    fn payload(&self) -> u64 {
        match self {
            RopeItem::Write { bytes, .. } => *bytes,
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

/// One stage of the path for [`handoff_time`]: its rate and its header
/// bytes per packet.
#[derive(Debug, Clone, Copy)]
pub struct Stage {
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
pub fn handoff_time(
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

impl Platform {
    /// Queues a packet on the ropes above bus `b`.
    pub(super) fn rope_push(&mut self, b: usize, item: RopeItem, s: &mut Scheduler<Ev>) {
        let d = item.dir();
        if d == 0 && self.ropes[b].booked_up {
            return self.rope_book_up(b, item, s);
        }
        if d == 1 && self.ropes[b].booked_down {
            return self.rope_book_down(b, item, s.now(), s);
        }
        self.ropes[b].dirs[d].queue.push_back(item);
        self.rope_start(b, d, s);
    }

    /// The ropes above bus `b` going up, held back by flow control, may send
    /// again.
    pub(super) fn rope_wake(&mut self, b: usize, s: &mut Scheduler<Ev>) {
        self.rope_start(b, 0, s);
    }

    /// Books packet `item` across the ropes above bus `b` going up (see
    /// [`Rope::booked_up`]): it starts when they have carried the packets
    /// before it and, under a controller, when the last of those has
    /// started across the controller's link (flow control); a posted write
    /// frees its bridge's buffer when it is through (the bus settles it,
    /// and a master waiting for room is woken then); it joins the
    /// controller at its hand-off time, or arrives.
    fn rope_book_up(&mut self, b: usize, item: RopeItem, s: &mut Scheduler<Ev>) {
        let now = s.now();
        let r = &mut self.ropes[b];
        let time = r.moves.time(item.payload() + r.cfg.rope_overhead);
        let dir = &mut r.dirs[0];
        let (start, end) = dir.book(now, now.max(dir.ctrl_start), time);
        if let RopeItem::Write { bytes, .. } = item {
            self.buses[b].leaving.push_back((end, bytes));
            self.bus_watch_posted(b, s);
        }
        match self.cfg.buses[b].controller {
            Some(c) => {
                let (first, second) = (self.ropes[b].stage(), self.ctrls[c].stage());
                let line = self.cfg.memory.line;
                let at = handoff_time(start, end, item.payload(), line, first, second);
                self.ctrl_push(c, b, item, at, s);
            }
            None => self.arrive_up(b, item, end, s),
        }
    }

    /// Books packet `item` across the ropes above bus `b` going down,
    /// joining them at `at` (now, or its hand-off from the controller): it
    /// starts when they have carried the packets before it, and reaches the
    /// bus in an event at its end. Packets join in order of time (one
    /// bus's hand-off times rise with its packets), so booking them as they
    /// come serves them first come, first served.
    fn rope_book_down(&mut self, b: usize, item: RopeItem, at: Picos, s: &mut Scheduler<Ev>) {
        let r = &mut self.ropes[b];
        let time = r.moves.time(item.payload() + r.cfg.rope_overhead);
        let dir = &mut r.dirs[1];
        let (_, end) = dir.book(s.now(), at, time);
        dir.queue.push_back(item);
        s.schedule_at(end, Ev::RopeDone(b, 1));
    }

    fn rope_start(&mut self, b: usize, d: usize, s: &mut Scheduler<Ev>) {
        let now = s.now();
        let r = &mut self.ropes[b];
        let rate = r.moves;
        let overhead = r.cfg.rope_overhead;
        let dir = &mut r.dirs[d];
        if dir.current.is_some() {
            return;
        }
        // Rope flow control: the controller takes the ropes' next packet up
        // only once the one before has started across its link.
        if d == 0 && dir.ctrl_start > now {
            dir.idle_since = None;
            if dir.wake_at != dir.ctrl_start {
                dir.wake_at = dir.ctrl_start;
                s.schedule_at(dir.ctrl_start, Ev::RopeWake(b));
            }
            return;
        }
        let Some(item) = dir.queue.pop_front() else {
            dir.idle_since.get_or_insert(now);
            return;
        };
        let payload = item.payload();
        let whole = rate.time(payload + overhead);
        // Behind a cut-through bridge a posted write streams from the bus:
        // the ropes, idle since `idle_since`, may have started on it once
        // its first line was in the bridge, and finish it no earlier than
        // one line's time after its last byte came off the bus (now).
        let idle = dir.idle_since.take();
        let (start, end) = match (item, idle) {
            (RopeItem::Write { bytes, head }, Some(idle))
                if self.buses[b].bridge.posted_writes_cut_through =>
            {
                let start = head.max(idle).min(now);
                let tail = rate.time(bytes.min(self.cfg.memory.line) + overhead);
                (start, (start + whole).max(now + tail))
            }
            _ => (now, now + whole),
        };
        dir.current = Some(item);
        dir.current_handed = false;
        dir.meter.book(now, start, end);
        s.schedule_at(end, Ev::RopeDone(b, d));
        // Going up into a controller: cut-through (see the module doc).
        if let (0, Some(c)) = (d, self.cfg.buses[b].controller) {
            let (first, second) = (self.ropes[b].stage(), self.ctrls[c].stage());
            let line = self.cfg.memory.line;
            let at = handoff_time(start, end, payload, line, first, second).max(now);
            let one_bus = self.ctrls[c].one_bus;
            if at < end {
                self.ropes[b].dirs[0].current_handed = true;
                if one_bus {
                    self.ctrl_push(c, b, item, at, s);
                } else {
                    self.hand_on(b, 0, item, at, s);
                }
            }
        }
    }

    /// Hands packet `item` of bus `b` going in direction `d` on to its next
    /// stage (up: the controller; down: the ropes) at time `at`: now, if
    /// nothing of the bus waits for its hand-off before it, else in order.
    fn hand_on(&mut self, b: usize, d: usize, item: RopeItem, at: Picos, s: &mut Scheduler<Ev>) {
        let waiting = &mut self.ropes[b].dirs[d].handoff;
        if at == s.now() && waiting.is_empty() {
            self.handoff_enter(b, d, item, s);
        } else {
            waiting.push_back(item);
            s.schedule_at(at, Ev::Handoff(b, d));
        }
    }

    /// The first packet of bus `b` waiting for its hand-off in direction
    /// `d` enters its next stage.
    pub(super) fn handoff(&mut self, b: usize, d: usize, s: &mut Scheduler<Ev>) {
        if let Some(item) = self.ropes[b].dirs[d].handoff.pop_front() {
            self.handoff_enter(b, d, item, s);
        }
    }

    fn handoff_enter(&mut self, b: usize, d: usize, item: RopeItem, s: &mut Scheduler<Ev>) {
        match self.cfg.buses[b].controller {
            Some(c) if d == 0 => self.ctrl_push(c, b, item, s.now(), s),
            _ => self.rope_push(b, item, s),
        }
    }

    /// The packet on direction `d` of the ropes above bus `b` has crossed:
    /// going up, on to the I/O controller if the bus has one, else it has
    /// arrived; going down, it reaches the bus.
    pub(super) fn rope_done(&mut self, b: usize, d: usize, s: &mut Scheduler<Ev>) {
        let booked = d == 1 && self.ropes[b].booked_down;
        let dir = &mut self.ropes[b].dirs[d];
        let Some(item) = (if booked {
            dir.queue.pop_front()
        } else {
            dir.current.take()
        }) else {
            return;
        };
        let handed = std::mem::take(&mut self.ropes[b].dirs[d].current_handed);
        match item {
            RopeItem::Write { bytes, .. } => {
                self.ropes[b].up_bytes += bytes;
                self.posted_write_left_bridge(b, bytes, s);
            }
            RopeItem::ReadData(f) => self.ropes[b].down_bytes += f.bytes,
            _ => {}
        }
        match self.cfg.buses[b].controller {
            // Already in the controller (cut-through).
            Some(_) if d == 0 && handed => {}
            Some(c) if d == 0 => self.ctrl_push(c, b, item, s.now(), s),
            _ => self.path_arrived(b, item, s),
        }
        if !booked {
            self.rope_start(b, d, s);
        }
    }

    /// A posted write of bus `b` has crossed its ropes: the bus adapter's
    /// buffer is free again. Above the ropes an I/O controller (an SBA, an
    /// IKE) takes the packet into buffers of its own, as rope flow control
    /// returns a credit once the far end has taken a packet, so the
    /// bridge's window covers the ropes and not the controller's link too
    /// (the controller's queue is not bounded: its link rate is).
    pub(super) fn posted_write_left_bridge(&mut self, b: usize, bytes: u64, s: &mut Scheduler<Ev>) {
        self.bus_sync(b, s);
        self.free_posted(b, bytes);
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
            Some(c) => self.ctrl_push(c, b, item, s.now(), s),
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
            RopeItem::Write { bytes, .. } => self.dma_write(port, bytes, forwarded(item), s),
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

    /// Packet `item` of bus `b` joins direction `item.dir()` of I/O
    /// controller `c` at `at` (now, or later for a hand-off from its only
    /// ropes): books its crossing, first come, first served, and what its
    /// end brings (see the module doc). Going up, flow control holds the
    /// bus's ropes back until it starts across.
    fn ctrl_push(&mut self, c: usize, b: usize, item: RopeItem, at: Picos, s: &mut Scheduler<Ev>) {
        let d = item.dir();
        let ctrl = &mut self.ctrls[c];
        let (rate, overhead) = (ctrl.moves, ctrl.cfg.overhead);
        let bytes = item.payload() + overhead;
        let start = at.max(ctrl.dirs[d].free_at);
        let mut end = start + rate.time(bytes);
        // A link whose two directions share one capacity: the packet also
        // books its bytes' time at that rate, from when it joins, after what
        // either direction booked before it (from its start instead, a
        // packet queued behind its own direction would leave the shared
        // capacity idle until then, and the other direction with it).
        if let Some(both) = ctrl.moves_both_ways {
            let from = ctrl.both_ways_free.max(at);
            ctrl.both_ways_free = from + both.time(bytes);
            end = end.max(ctrl.both_ways_free);
        }
        ctrl.dirs[d].free_at = end;
        ctrl.dirs[d].meter.book(s.now(), start, end);
        if d == 0 {
            self.ropes[b].dirs[0].ctrl_start = start;
            self.arrive_up(b, item, end, s);
        } else {
            // Onto the ropes: cut-through (see the module doc).
            let (first, second) = (self.ctrls[c].stage(), self.ropes[b].stage());
            let line = self.cfg.memory.line;
            let on = handoff_time(start, end, item.payload(), line, first, second);
            if self.ropes[b].booked_down {
                self.rope_book_down(b, item, on, s);
            } else {
                self.hand_on(b, 1, item, on, s);
            }
        }
    }

    /// Books what packet `item` of bus `b`, going up, brings when it has
    /// crossed the whole path at `at` (now or later): a posted write's turn
    /// at the memory, a register value's return to its CPU; a read request
    /// arrives in an event, which draws its memory time then.
    fn arrive_up(&mut self, b: usize, item: RopeItem, at: Picos, s: &mut Scheduler<Ev>) {
        match item {
            RopeItem::Write { bytes, .. } => self.memory.book_write(at, bytes),
            RopeItem::PioData { cpu } => {
                // The fixed part of the round trip (bus adapters and cell
                // controller), as for a DMA read.
                let back = at + self.ropes[b].cfg.io_read_latency;
                s.schedule_at(back, Ev::PioDone(cpu));
            }
            RopeItem::ReadReq(f) => s.schedule_at(at, Ev::MemAsk(f)),
            // Going down: never sent up (`RopeItem::dir`).
            RopeItem::ReadData(_) | RopeItem::PioReq { .. } => {}
        }
    }

    /// A read request of bus `f.bus` has crossed the path up to memory.
    pub(super) fn mem_ask(&mut self, f: Fetch, s: &mut Scheduler<Ev>) {
        self.path_arrived(f.bus, RopeItem::ReadReq(f), s);
    }

    /// A packet of bus `b` has crossed the whole path: a posted write is in
    /// memory (its bridge's buffer freed at the ropes), a read request goes to memory, read data and a
    /// register read reach the bus, a register's value heads for its CPU.
    pub(super) fn path_arrived(&mut self, b: usize, item: RopeItem, s: &mut Scheduler<Ev>) {
        match item {
            // Its bridge's buffer was freed when it left the ropes; it
            // occupies the memory. A register's value heads for its CPU.
            RopeItem::Write { .. } | RopeItem::PioData { .. } => {
                self.arrive_up(b, item, s.now(), s)
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
