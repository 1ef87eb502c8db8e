//! The platform's side of the path to memory: packets across the ropes
//! (booked ahead or on events), handed on to and from the I/O controllers'
//! links, to memory and back, and through on-card bridges.

use super::event::Ev;
use super::state::Platform;
use crate::engine::Scheduler;
use crate::sim::dma::DmaDone;
use crate::sim::memory::memory_time;
use crate::sim::path::{handoff_time, Fetch, FetchKind, RopeItem};
use crate::units::Picos;

impl<T: Copy> Platform<T> {
    /// Queues a packet on the ropes above bus `b`.
    pub(crate) fn rope_push(&mut self, b: usize, item: RopeItem, s: &mut Scheduler<Ev<T>>) {
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
    pub(crate) fn rope_wake(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        self.rope_start(b, 0, s);
    }

    /// Books packet `item` across the ropes above bus `b` going up (see
    /// [`Rope::booked_up`]): it starts when they have carried the packets
    /// before it and, under a controller, when the last of those has
    /// started across the controller's link (flow control); a posted write
    /// frees its bridge's buffer when it is through (the bus settles it,
    /// and a master waiting for room is woken then); it joins the
    /// controller at its hand-off time, or arrives.
    fn rope_book_up(&mut self, b: usize, item: RopeItem, s: &mut Scheduler<Ev<T>>) {
        let now = s.now();
        let r = &mut self.ropes[b];
        let time = r.moves.time(item.payload() + r.cfg.rope_overhead);
        let dir = &mut r.dirs[0];
        let (start, end) = dir.book(now, now.max(dir.ctrl_start), time);
        if let RopeItem::Write { bytes, .. } = item {
            self.buses[b].book_posted_leaving(end, bytes);
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
    fn rope_book_down(&mut self, b: usize, item: RopeItem, at: Picos, s: &mut Scheduler<Ev<T>>) {
        let r = &mut self.ropes[b];
        let time = r.moves.time(item.payload() + r.cfg.rope_overhead);
        let dir = &mut r.dirs[1];
        let (_, end) = dir.book(s.now(), at, time);
        dir.queue.push_back(item);
        s.schedule_at(end, Ev::RopeDone(b, 1));
    }

    fn rope_start(&mut self, b: usize, d: usize, s: &mut Scheduler<Ev<T>>) {
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
    fn hand_on(&mut self, b: usize, d: usize, item: RopeItem, at: Picos, s: &mut Scheduler<Ev<T>>) {
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
    pub(crate) fn handoff(&mut self, b: usize, d: usize, s: &mut Scheduler<Ev<T>>) {
        if let Some(item) = self.ropes[b].dirs[d].handoff.pop_front() {
            self.handoff_enter(b, d, item, s);
        }
    }

    fn handoff_enter(&mut self, b: usize, d: usize, item: RopeItem, s: &mut Scheduler<Ev<T>>) {
        match self.cfg.buses[b].controller {
            Some(c) if d == 0 => self.ctrl_push(c, b, item, s.now(), s),
            _ => self.rope_push(b, item, s),
        }
    }

    /// The packet on direction `d` of the ropes above bus `b` has crossed:
    /// going up, on to the I/O controller if the bus has one, else it has
    /// arrived; going down, it reaches the bus.
    pub(crate) fn rope_done(&mut self, b: usize, d: usize, s: &mut Scheduler<Ev<T>>) {
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
    pub(crate) fn posted_write_left_bridge(
        &mut self,
        b: usize,
        bytes: u64,
        s: &mut Scheduler<Ev<T>>,
    ) {
        self.bus_sync(b, s);
        self.free_posted(b, bytes);
        self.bus_arbitrate(b, s);
    }

    /// Queues a packet going down towards bus `b`: through its I/O
    /// controller, if any, then its ropes; towards the secondary bus of an
    /// on-card bridge, down to the slot's bus first.
    pub(crate) fn down_push(&mut self, b: usize, item: RopeItem, s: &mut Scheduler<Ev<T>>) {
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
    pub(crate) fn up_push(&mut self, b: usize, item: RopeItem, s: &mut Scheduler<Ev<T>>) {
        let Some(cb) = self.cfg.buses[b].upstream else {
            return self.rope_push(b, item, s);
        };
        let port = self.cfg.functions.len() + cb;
        let forwarded = |item| DmaDone::Forwarded { bus: b, item };
        match item {
            RopeItem::Write { bytes, .. } => self.dma_write(port, bytes, forwarded(item), s),
            RopeItem::ReadReq(f) => {
                self.dma_read(port, f.bytes, forwarded(RopeItem::ReadData(f)), None, s)
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
    fn ctrl_push(
        &mut self,
        c: usize,
        b: usize,
        item: RopeItem,
        at: Picos,
        s: &mut Scheduler<Ev<T>>,
    ) {
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
    fn arrive_up(&mut self, b: usize, item: RopeItem, at: Picos, s: &mut Scheduler<Ev<T>>) {
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
    pub(crate) fn mem_ask(&mut self, f: Fetch, s: &mut Scheduler<Ev<T>>) {
        self.path_arrived(f.bus, RopeItem::ReadReq(f), s);
    }

    /// A packet of bus `b` has crossed the whole path: a posted write is in
    /// memory (its bridge's buffer freed at the ropes), a read request goes to memory, read data and a
    /// register read reach the bus, a register's value heads for its CPU.
    pub(crate) fn path_arrived(&mut self, b: usize, item: RopeItem, s: &mut Scheduler<Ev<T>>) {
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
    pub(crate) fn mem_done(&mut self, f: Fetch, s: &mut Scheduler<Ev<T>>) {
        self.down_push(f.bus, RopeItem::ReadData(f), s);
    }
}
