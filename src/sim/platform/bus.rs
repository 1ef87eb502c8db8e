//! The platform's side of the buses: arbitration and grants, the bridge's
//! posted-write buffer as the ropes empty it, lazy retries turned back to
//! events, and what a transaction's end sets going (ropes, DMA
//! completions).

use super::ctx::Engines;
use super::event::Ev;
use super::state::Platform;
use crate::engine::Scheduler;
use crate::sim::bus::{give_back, next_after, Bus, BusItem, DelayedRead, Tx};
use crate::sim::path::{Fetch, FetchKind, RopeItem, PIO_BYTES};
use crate::units::Picos;

impl<T: Copy> Platform<T> {
    /// Grants the bus of `b` to the next waiting master, if it is idle
    /// (after the posted writes that have left the ropes free their room),
    /// and books a wake for a master still waiting for room.
    pub(crate) fn bus_arbitrate(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        self.bus_sync(b, s);
        self.bus_settle_posted(b, s.now(), false);
        self.bus_grant(b, s);
        self.bus_watch_posted(b, s);
    }

    /// Applies to the bridge's buffer of bus `b` the posted writes that have
    /// left the ropes by `now` (before `now` if `strict`: what events would
    /// have brought when the simulation stops at `now`), and counts their
    /// bytes as carried up.
    #[inline(always)]
    pub(crate) fn bus_settle_posted(&mut self, b: usize, now: Picos, strict: bool) {
        let last = if strict {
            Picos(now.0.saturating_sub(1))
        } else {
            now
        };
        // Checked here, inline: most calls find nothing due.
        if self.buses[b]
            .leaving
            .front()
            .is_some_and(|&(t, _)| t <= last)
        {
            self.bus_settle_posted_due(b, last);
        }
    }

    /// [`Platform::bus_settle_posted`] once a write is due: those that have
    /// left by `last`.
    fn bus_settle_posted_due(&mut self, b: usize, last: Picos) {
        while let Some(&(t, bytes)) = self.buses[b].leaving.front() {
            if t > last {
                break;
            }
            self.buses[b].leaving.pop_front();
            self.ropes[b].up_bytes += bytes;
            self.free_posted(b, bytes);
        }
    }

    /// A posted write of `bytes` has left the bridge of bus `b` (crossed its
    /// ropes, or the slot's bus for an on-card bridge): its room is free,
    /// and its bytes count as carried up.
    pub(crate) fn free_posted(&mut self, b: usize, bytes: u64) {
        let bus = &mut self.buses[b];
        bus.posted_used = bus.posted_used.saturating_sub(bytes);
        self.totals.rope_write_bytes += bytes;
    }

    /// If a master of bus `b` waits for room in the bridge's buffer, wakes
    /// the bus when the next booked posted write leaves the ropes (the
    /// bus then arbitrates, as an event at its leaving would make it).
    #[inline(always)]
    pub(crate) fn bus_watch_posted(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        // Nothing booked to leave (a bus without ropes of its own, or none
        // under way), or no write asks for more than the room left: none
        // waits (the common cases, checked here, inline).
        let bus = &self.buses[b];
        if !bus.leaving.is_empty()
            && bus.posted_used + bus.largest_write > bus.bridge.posted_write_buffer
        {
            self.bus_watch_posted_full(b, s);
        }
    }

    /// [`Platform::bus_watch_posted`] once the buffer may be too full.
    fn bus_watch_posted_full(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        let bus = &mut self.buses[b];
        let Some(&(t, _)) = bus.leaving.front() else {
            return;
        };
        if bus.posted_wake_at != t && bus.waits_for_room(s.now()) {
            bus.posted_wake_at = t;
            s.schedule_at(t, Ev::PostedFree(b));
        }
    }

    /// A booked posted write of bus `b` leaves the ropes while a master
    /// waits for room: the bus catches up and arbitrates.
    pub(crate) fn bus_posted_free(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        self.buses[b].posted_wakes += 1;
        self.bus_arbitrate(b, s);
    }

    /// [`Platform::bus_arbitrate`] once the buffer is settled.
    fn bus_grant(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        let now = s.now();
        let bus = &self.buses[b];
        if bus.current.is_some() {
            self.bus_cut_at_latency_timer(b, s);
            return;
        }
        let n = bus.masters.len();
        let Some(m) = bus.first_wanting(bus.rr, n, now) else {
            return;
        };
        // The masters before `m` in round-robin order do not want the bus: only
        // those after it, up to the round-robin start, may be waiting too
        // (looked at only where the latency timer could cut the transfer).
        let position = if m >= bus.rr {
            m - bus.rr
        } else {
            m + n - bus.rr
        };
        let others = |bus: &Bus| {
            bus.first_wanting(next_after(m, n), n - 1 - position, now)
                .is_some()
        };
        let cfg = bus.cfg;
        let item = self.buses[b].masters[m].queue.front().copied();
        let func = self.buses[b].masters[m].func;
        let (tx, clocks) = match (item, func) {
            (Some(BusItem::Write { op, left }), Some(_)) => {
                let bus = &mut self.buses[b];
                let cap = bus.chunk_for(m, left, others);
                let bytes = left.min(cap).min(bus.bridge.posted_write_buffer);
                bus.posted_used += bytes;
                let last = bytes == left;
                if last {
                    bus.masters[m].queue.pop_front();
                } else if let Some(BusItem::Write { left: l, .. }) =
                    bus.masters[m].queue.front_mut()
                {
                    *l -= bytes;
                }
                (
                    Tx::Write { m, op, bytes, last },
                    cfg.write_overhead + cfg.data_clocks(bytes),
                )
            }
            (Some(BusItem::ReadReq { op, bytes }), Some(f)) => {
                self.buses[b].masters[m].queue.pop_front();
                (Tx::ReadReq { op, bytes, func: f }, cfg.read_request)
            }
            (Some(BusItem::PciRead { op, left }), Some(f)) => {
                let bus = &mut self.buses[b];
                let mine = bus
                    .delayed
                    .iter()
                    .position(|d| matches!(d, Some(d) if d.master == m && d.op == op));
                match mine {
                    Some(slot) => {
                        let d = bus.delayed[slot].expect("slot found above");
                        if d.ready {
                            // Taking the data frees the slot: a register read
                            // waiting for one asks for the bus at once, so the
                            // arbiter ends this burst at the latency timer
                            // (as for a master that asked at the grant;
                            // freeing a slot only lets masters ask, so
                            // whether another waits is asked once, now).
                            bus.delayed[slot] = None;
                            let want = left.min(d.bytes);
                            let cap = bus.chunk_for(m, want, |bus| bus.another_wants(m, now));
                            let bytes = want.min(cap);
                            let last = bytes == left;
                            if last {
                                bus.masters[m].queue.pop_front();
                            } else if let Some(BusItem::PciRead { left: l, .. }) =
                                bus.masters[m].queue.front_mut()
                            {
                                *l -= bytes;
                            }
                            (
                                Tx::PciData {
                                    m,
                                    op,
                                    bytes,
                                    func: f,
                                    last,
                                },
                                cfg.completion_overhead + cfg.data_clocks(bytes),
                            )
                        } else {
                            (Tx::Retry { m }, cfg.read_request)
                        }
                    }
                    None => {
                        if let Some(slot) = bus.delayed.iter().position(|d| d.is_none()) {
                            let bytes = left.min(bus.bridge.delayed_read_prefetch);
                            bus.delayed[slot] = Some(DelayedRead {
                                master: m,
                                op,
                                bytes,
                                ready: false,
                            });
                            let fetch = Fetch {
                                bus: b,
                                bytes,
                                kind: FetchKind::Delayed { slot, op },
                            };
                            self.up_push(b, RopeItem::ReadReq(fetch), s);
                        }
                        (Tx::Retry { m }, cfg.read_request)
                    }
                }
            }
            (Some(BusItem::Pio { cpu, target }), None) => {
                self.buses[b].masters[m].queue.pop_front();
                (
                    Tx::Pio { cpu, target },
                    cfg.completion_overhead + cfg.data_clocks(PIO_BYTES),
                )
            }
            (Some(BusItem::Completion { func, op, bytes }), None) => {
                let bus = &mut self.buses[b];
                let chunk = bytes.min(bus.chunk_for(m, bytes, others));
                if chunk == bytes {
                    bus.masters[m].queue.pop_front();
                } else if let Some(BusItem::Completion { bytes: l, .. }) =
                    bus.masters[m].queue.front_mut()
                {
                    *l -= chunk;
                }
                (
                    Tx::Completion {
                        op,
                        bytes: chunk,
                        func,
                        last: chunk == bytes,
                    },
                    cfg.completion_overhead + cfg.data_clocks(chunk),
                )
            }
            _ => return,
        };
        let bus = &mut self.buses[b];
        bus.rr = next_after(m, n);
        bus.current = Some(tx);
        bus.started = now;
        bus.generation += 1;
        bus.meter.start(now);
        s.schedule_in(cfg.clocks(clocks), Ev::BusDone(b, bus.generation));
    }

    /// Another master asks for bus `b` during a data transfer longer than the
    /// latency timer: the arbiter takes the grant away, so the transfer ends
    /// when the timer expires (or with the data phase under way, if it
    /// already has), and the rest goes back to the front of its master's
    /// queue (PCI 2.2 3.5.4; PCI-X 1.0 likewise, at the next 128-byte
    /// boundary, not modelled). A delayed read's data beyond the cut is
    /// discarded, as at a cut made at the grant.
    fn bus_cut_at_latency_timer(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        let now = s.now();
        let bus = &mut self.buses[b];
        let Some(tx) = bus.current else {
            return;
        };
        let (m, bytes, overhead) = match tx {
            Tx::Write { m, bytes, .. } => (m, bytes, bus.cfg.write_overhead),
            Tx::PciData { m, bytes, .. } => (m, bytes, bus.cfg.completion_overhead),
            Tx::Completion { bytes, .. } => {
                (bus.completion_master(), bytes, bus.cfg.completion_overhead)
            }
            _ => return,
        };
        let bpc = bus.cfg.bytes_per_clock;
        let lt_bytes = bus.cfg.latency_timer_bytes;
        if bytes <= lt_bytes || !bus.another_wants(m, now) {
            return;
        }
        let clock = bus.cfg.clock.0.max(1);
        let elapsed = (now.0 - bus.started.0).div_ceil(clock);
        let data_clocks = elapsed
            .saturating_sub(overhead)
            .saturating_add(1)
            .max(bus.cfg.data_clocks(lt_bytes));
        let keep = ((data_clocks as f64 * bpc) as u64).min(bytes);
        if keep >= bytes {
            return;
        }
        let rest = bytes - keep;
        let Some((tx, rest_item, last)) = tx.split(keep, rest) else {
            return;
        };
        if matches!(tx, Tx::Write { .. }) {
            bus.posted_used -= rest;
        }
        give_back(&mut bus.masters[m].queue, last, rest_item);
        bus.current = Some(tx);
        bus.generation += 1;
        let end = bus.started + bus.cfg.clocks(overhead + bus.cfg.data_clocks(keep));
        s.schedule_at(end.max(now), Ev::BusDone(b, bus.generation));
    }

    /// Turns a lazy bus `b` back to events (see the module doc): replays its
    /// retries up to now, then schedules the end of the retry under way and
    /// the wake of every master waiting to retry. Call before changing the
    /// bus's state.
    #[inline]
    pub(crate) fn bus_sync(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        if self.buses[b].lazy {
            self.bus_unlazy(b, s);
        }
    }

    /// [`Platform::bus_sync`] of a lazy bus.
    fn bus_unlazy(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        let now = s.now();
        let bus = &mut self.buses[b];
        bus.catch_up(now);
        bus.lazy = false;
        if let Some(Tx::Retry { .. }) = bus.current {
            bus.generation += 1;
            s.schedule_at(bus.retry_end(), Ev::BusDone(b, bus.generation));
        }
        for m in &bus.masters {
            if m.wait_until > now && matches!(m.queue.front(), Some(BusItem::PciRead { .. })) {
                s.schedule_at(m.wait_until, Ev::BusWake(b));
            }
        }
    }

    /// A retried master of bus `b` may ask again: a lazy bus replays its
    /// retries, one on events arbitrates.
    pub(crate) fn bus_wake(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        if self.buses[b].lazy {
            self.buses[b].catch_up(s.now());
        } else {
            self.bus_arbitrate(b, s);
        }
    }

    /// Queues `item` at master `m` of bus `b` and arbitrates.
    pub(crate) fn bus_enqueue(
        &mut self,
        b: usize,
        m: usize,
        item: BusItem,
        s: &mut Scheduler<Ev<T>>,
    ) {
        self.bus_sync(b, s);
        self.buses[b].masters[m].queue.push_back(item);
        self.bus_arbitrate(b, s);
    }

    /// Queues a split completion at the bridge of bus `b`.
    pub(crate) fn bus_push_completion(
        &mut self,
        b: usize,
        func: usize,
        op: u64,
        bytes: u64,
        s: &mut Scheduler<Ev<T>>,
    ) {
        let bm = self.buses[b].completion_master();
        self.bus_enqueue(b, bm, BusItem::Completion { func, op, bytes }, s);
    }

    /// Queues a register read by CPU `cpu` of a card on bus `target` at the
    /// bridge of bus `b`.
    pub(crate) fn bus_push_pio(
        &mut self,
        b: usize,
        cpu: usize,
        target: usize,
        s: &mut Scheduler<Ev<T>>,
    ) {
        let bm = self.buses[b].request_master();
        self.bus_enqueue(b, bm, BusItem::Pio { cpu, target }, s);
    }

    /// The bus one step below `b` on the way to bus `target` (the secondary
    /// bus of the on-card bridge on `b` that `target` is, or sits behind).
    fn bus_toward(&self, b: usize, target: usize) -> usize {
        let mut t = target;
        while let Some(cb) = self.cfg.buses[t].upstream {
            let parent = self.cfg.card_bridges[cb].parent;
            if parent == b {
                return t;
            }
            t = parent;
        }
        target
    }

    /// Marks delayed-read slot `slot` of bus `b` ready.
    pub(crate) fn bus_delayed_ready(
        &mut self,
        b: usize,
        slot: usize,
        op: u64,
        s: &mut Scheduler<Ev<T>>,
    ) {
        self.bus_sync(b, s);
        if let Some(d) = self.buses[b].delayed[slot].as_mut() {
            if d.op == op {
                d.ready = true;
            }
        }
    }

    /// The transaction on bus `b` ends.
    pub(crate) fn bus_done(
        &mut self,
        b: usize,
        generation: u64,
        e: &mut impl Engines<T>,
        s: &mut Scheduler<Ev<T>>,
    ) {
        let now = s.now();
        if generation != self.buses[b].generation {
            // The transaction was cut short and ends at another event.
            return;
        }
        self.bus_settle_posted(b, now, false);
        let Some(tx) = self.buses[b].current.take() else {
            return;
        };
        self.buses[b].meter.stop(now);
        match tx {
            Tx::Write { m, op, bytes, last } => {
                self.buses[b].data_bytes += bytes;
                self.totals.bus_write_bytes += bytes;
                // Its first cache line reached the bridge one line's data
                // phases after the write's own clocks began (read only
                // behind a bridge that streams posted writes cut-through).
                let bus = &self.buses[b];
                let head = if bus.bridge.posted_writes_cut_through {
                    let unit = bytes.min(self.cfg.memory.line);
                    let clocks = bus.cfg.write_overhead + bus.cfg.data_clocks(unit);
                    (bus.started + bus.cfg.clocks(clocks)).min(now)
                } else {
                    now
                };
                let item = RopeItem::Write { bytes, head };
                self.up_push(b, item, s);
                if last {
                    if let Some(f) = self.buses[b].masters[m].func {
                        self.dma_write_done(f, op, e, s);
                    }
                }
            }
            Tx::ReadReq { op, bytes, func } => {
                let fetch = Fetch {
                    bus: b,
                    bytes,
                    kind: FetchKind::Split { func, op },
                };
                self.up_push(b, RopeItem::ReadReq(fetch), s);
            }
            Tx::Retry { m } => {
                let bus = &mut self.buses[b];
                bus.retries += 1;
                let wake = now + bus.bridge.retry_interval;
                bus.masters[m].wait_until = wake;
                if bus.retries_only(now) {
                    // Nothing but retries until something else changes.
                    bus.go_lazy(now);
                    // A writer waiting for room wakes it when room frees.
                    self.bus_watch_posted(b, s);
                    return;
                }
                if wake > now {
                    s.schedule_at(wake, Ev::BusWake(b));
                }
            }
            Tx::PciData {
                op, bytes, func, ..
            } => {
                self.buses[b].data_bytes += bytes;
                self.dma_read_data(func, op, bytes, false, e, s);
            }
            Tx::Completion {
                op,
                bytes,
                func,
                last,
            } => {
                self.buses[b].data_bytes += bytes;
                self.dma_read_data(func, op, bytes, last, e, s);
            }
            Tx::Pio { cpu, target } if target != b => {
                // On to the card's own bus, through its bridge.
                let next = self.bus_toward(b, target);
                self.bus_push_pio(next, cpu, target, s);
            }
            Tx::Pio { cpu, .. } => {
                self.up_push(b, RopeItem::PioData { cpu }, s);
            }
        }
        self.bus_arbitrate(b, s);
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{run_until, Limits, Scheduler};
    use crate::model::Protocol;
    use crate::sim::bus::{BusItem, DelayedRead, Tx};
    use crate::sim::system::System;
    use crate::units::Picos;

    /// The system of the first experiment of Figure 2 (GigE receive on PCI-X),
    /// not started: its buses are idle and empty.
    fn idle_system() -> System {
        idle_system_of("gige-rx.pcix.c1")
    }

    /// The system of experiment `id` of Figure 2, not started.
    fn idle_system_of(id: &str) -> System {
        System::new(
            crate::sim::system::tests::config_of("hp2g-fig2-gige-receive", id),
            1,
        )
    }

    /// The kind of transaction on bus 0 now.
    fn on_bus(sys: &System) -> &'static str {
        match sys.p.buses[0].current {
            Some(Tx::Completion { .. }) => "completion",
            Some(Tx::Pio { .. }) => "register read",
            Some(_) => "other",
            None => "idle",
        }
    }

    #[test]
    fn a_register_read_does_not_wait_behind_queued_completions() {
        let mut sys = idle_system();
        let mut s = Scheduler::new();
        // Three completions are queued at the bridge, then a register read.
        for op in 0..3 {
            sys.p.bus_push_completion(0, 0, op, 512, &mut s);
        }
        sys.p.bus_push_pio(0, 0, 0, &mut s);
        // What the bus carries, step by step (each tenure lasts far longer
        // than a step), consecutive repeats merged.
        let mut order = vec![on_bus(&sys)];
        let limits = Limits {
            max_time: Picos::from_ns(20_000.0),
            max_events: 10_000,
        };
        for step in 1..20_000u64 {
            run_until(&mut sys, &mut s, Picos::from_ns(step as f64), limits);
            let now = on_bus(&sys);
            if order.last() != Some(&now) {
                order.push(now);
            }
        }
        assert!(
            order.starts_with(&["completion", "register read", "completion", "idle"]),
            "the read goes between the completions: {order:?}"
        );
    }

    #[test]
    fn a_long_burst_ends_at_the_latency_timer_when_another_master_asks() {
        let mut sys = idle_system();
        let mut s = Scheduler::new();
        let cfg = sys.p.buses[0].cfg;
        // One completion of a whole bus burst: with nobody waiting at the
        // grant, it is granted in one tenure.
        sys.p.bus_push_completion(0, 0, 0, cfg.max_burst, &mut s);
        let limits = Limits {
            max_time: Picos::from_ns(50_000.0),
            max_events: 10_000,
        };
        run_until(&mut sys, &mut s, Picos::from_ns(100.0), limits);
        assert_eq!(on_bus(&sys), "completion");
        // A register read arrives 100 ns into it.
        sys.p.bus_push_pio(0, 0, 0, &mut s);
        let mut read_at = None;
        for step in 101..50_000u64 {
            run_until(&mut sys, &mut s, Picos::from_ns(step as f64), limits);
            if read_at.is_none() && on_bus(&sys) == "register read" {
                read_at = Some(step as f64);
            }
        }
        let timer_ns = cfg.clocks(cfg.completion_overhead + cfg.latency_timer).0 as f64 / 1e3;
        let whole_ns = cfg
            .clocks(cfg.completion_overhead + cfg.data_clocks(cfg.max_burst))
            .0 as f64
            / 1e3;
        let read_at = read_at.expect("the register read gets the bus");
        assert!(
            read_at >= timer_ns && read_at <= timer_ns + 20.0,
            "the read gets the bus at {read_at} ns: the timer expires at {timer_ns} ns, the whole burst ends at {whole_ns} ns"
        );
        assert_eq!(on_bus(&sys), "idle");
        assert_eq!(
            sys.p.buses[0].data_bytes, cfg.max_burst,
            "the rest of the burst follows the read"
        );
    }

    #[test]
    fn a_register_read_waiting_for_the_slot_ends_the_burst_that_frees_it_at_the_latency_timer() {
        let mut sys = idle_system_of("gige-rx.pci66.c1");
        let mut s = Scheduler::new();
        let cfg = sys.p.buses[0].cfg;
        let bus = &mut sys.p.buses[0];
        assert_eq!(bus.cfg.protocol, Protocol::Pci);
        assert_eq!(bus.delayed.len(), 1);
        bus.bridge.register_reads_use_delayed_slots = true;
        // The bridge's only slot holds a whole burst's data, ready for the
        // delayed read of master 1; a register read waits for the slot.
        let bytes = cfg.max_burst.min(bus.bridge.delayed_read_prefetch);
        assert!(bytes > cfg.latency_timer_bytes);
        bus.delayed[0] = Some(DelayedRead {
            master: 1,
            op: 99,
            bytes,
            ready: true,
        });
        bus.masters[1].queue.push_back(BusItem::PciRead {
            op: 99,
            left: bytes,
        });
        sys.p.bus_push_pio(0, 0, 0, &mut s);
        // The read's data has the bus; taking it frees the slot, so the
        // register read asks at once and has the bus when the timer expires,
        // with no other event to make the arbiter look.
        assert!(matches!(sys.p.buses[0].current, Some(Tx::PciData { .. })));
        let limits = Limits {
            max_time: Picos::from_ns(50_000.0),
            max_events: 10_000,
        };
        let read_at = (1..20_000u64)
            .find(|&step| {
                run_until(&mut sys, &mut s, Picos::from_ns(step as f64), limits);
                on_bus(&sys) == "register read"
            })
            .expect("the register read gets the bus") as f64;
        let timer_ns = cfg.clocks(cfg.completion_overhead + cfg.latency_timer).0 as f64 / 1e3;
        let whole_ns = cfg
            .clocks(cfg.completion_overhead + cfg.data_clocks(bytes))
            .0 as f64
            / 1e3;
        assert!(
            read_at >= timer_ns && read_at <= timer_ns + 20.0,
            "the read gets the bus at {read_at} ns: the timer expires at {timer_ns} ns, the whole burst ends at {whole_ns} ns"
        );
    }

    #[test]
    fn in_pci_mode_a_register_read_waits_for_a_free_delayed_read_slot() {
        let limits = Limits {
            max_time: Picos::from_ns(50_000.0),
            max_events: 10_000,
        };
        // When the register read first has the bus, within 5 us, with the
        // bridge's only slot held by a DMA read that never completes.
        let read_at = |use_slots: bool| {
            let mut sys = idle_system_of("gige-rx.pci66.c1");
            assert_eq!(sys.p.buses[0].cfg.protocol, Protocol::Pci);
            assert_eq!(sys.p.buses[0].delayed.len(), 1);
            sys.p.buses[0].bridge.register_reads_use_delayed_slots = use_slots;
            sys.p.buses[0].delayed[0] = Some(DelayedRead {
                master: 1,
                op: 99,
                bytes: 512,
                ready: false,
            });
            let mut s = Scheduler::new();
            sys.p.bus_push_pio(0, 0, 0, &mut s);
            (1..5_000u64).find(|&step| {
                run_until(&mut sys, &mut s, Picos::from_ns(step as f64), limits);
                on_bus(&sys) == "register read"
            })
        };
        assert!(read_at(false).is_some(), "a bridge tracking reads apart");
        assert_eq!(read_at(true), None, "the read waits for the slot");
    }
}
