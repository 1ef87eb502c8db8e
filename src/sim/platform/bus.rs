//! The platform's side of the buses. Each [`crate::sim::bus::Bus`]
//! arbitrates, grants, cuts a burst, retries and replays its retries on its
//! own, scheduling its own events; the platform settles a bridge's
//! posted-write buffer as the ropes empty it, sends up the delayed read a
//! grant latches, queues completions and register reads at a bridge, and
//! hands a transaction's end on (up the ropes, to the function's DMA, to
//! the next bus down).

use super::ctx::Engines;
use super::event::Ev;
use super::state::Platform;
use crate::engine::Scheduler;
use crate::sim::bus::{BusItem, Tx};
use crate::sim::path::{Fetch, FetchKind, RopeItem};
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
        if self.buses[b].posted_left_by(last) {
            self.bus_settle_posted_due(b, last);
        }
    }

    /// [`Platform::bus_settle_posted`] once a write is due: those that have
    /// left by `last`.
    fn bus_settle_posted_due(&mut self, b: usize, last: Picos) {
        while let Some(bytes) = self.buses[b].take_posted_left(last) {
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
    /// the bus when the next booked posted write leaves the ropes.
    #[inline(always)]
    pub(crate) fn bus_watch_posted(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        self.buses[b].watch_posted(b, s);
    }

    /// Turns a lazy bus `b` back to events (see [`Bus::sync`]).
    #[inline]
    pub(crate) fn bus_sync(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        self.buses[b].sync(b, s);
    }

    /// A booked posted write of bus `b` leaves the ropes while a master
    /// waits for room: the bus catches up and arbitrates.
    pub(crate) fn bus_posted_free(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        self.buses[b].posted_wakes += 1;
        self.bus_arbitrate(b, s);
    }

    /// [`Platform::bus_arbitrate`] once the buffer is settled: an idle bus
    /// starts its next grant (a delayed read it latches sent up first); a
    /// busy one may cut its burst at the latency timer.
    fn bus_grant(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        let bus = &mut self.buses[b];
        if bus.is_busy() {
            bus.cut_at_latency_timer(b, s);
            return;
        }
        let Some(grant) = bus.choose(b, s.now()) else {
            return;
        };
        if let Some(fetch) = grant.fetch {
            self.up_push(b, RopeItem::ReadReq(fetch), s);
        }
        self.buses[b].start(b, grant, s);
    }

    /// A retried master of bus `b` may ask again: a lazy bus replays its
    /// retries, one on events arbitrates.
    pub(crate) fn bus_wake(&mut self, b: usize, s: &mut Scheduler<Ev<T>>) {
        if self.buses[b].is_lazy() {
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
        if !self.buses[b].is_current(generation) {
            // The transaction was cut short and ends at another event.
            return;
        }
        self.bus_settle_posted(b, now, false);
        let Some(tx) = self.buses[b].end(now) else {
            return;
        };
        match tx {
            Tx::Write { m, op, bytes, last } => {
                self.buses[b].data_bytes += bytes;
                self.totals.bus_write_bytes += bytes;
                let head = self.buses[b].write_head(bytes, self.cfg.memory.line, now);
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
                if self.buses[b].retried(b, m, s) {
                    // A writer waiting for room wakes it when room frees.
                    self.bus_watch_posted(b, s);
                    return;
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
        match sys.p.buses[0].current() {
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
        assert!(matches!(sys.p.buses[0].current(), Some(Tx::PciData { .. })));
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
