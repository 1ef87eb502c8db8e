//! A PCI or PCI-X bus segment and its bridge, at bus-transaction level.
//!
//! Masters: each function on the bus has a write channel and a read channel
//! (two masters that arbitrate separately, as a DMA engine interleaves its
//! queues), and the bridge masters from two queues, its split completions and
//! its own downstream requests (register reads), which arbitrate as two
//! masters: PCI-X ordering lets a request pass a completion (and requires that
//! a completion can pass a request), so bridges buffer the two classes apart,
//! and a register read does not wait behind the completions queued before it.
//! Arbitration is round-robin; a burst ends at the latency timer when another
//! master waits, whether it waited at the grant or began to wait during the
//! burst (the arbiter then takes the grant away and the master stops when its
//! timer expires, PCI 2.2 3.5.4); the rest of the burst goes back to the front
//! of its master's queue. A register read waiting for the bridge's delayed-read
//! slot asks as soon as a read's data taken from that slot frees it, at that
//! read's grant, so that burst ends at the timer.
//!
//! Transactions:
//! - posted write: `write_overhead + ceil(bytes / bytes_per_clock)` clocks; the
//!   bridge must have posted-buffer room, else the master waits (the bridge
//!   would Retry it at once; that cost is not charged); room frees when the
//!   write leaves the ropes, booked ahead where they are (`leaving`, see
//!   `path`), and a master waiting for it is woken then;
//! - PCI-X read: a request answered with Split Response (`read_request`
//!   clocks), later a split completion mastered by the bridge
//!   (`completion_overhead + data` clocks);
//! - PCI delayed read: an attempt the bridge answers with Retry
//!   (`read_request` clocks) while it latches the request in one of its
//!   delayed-read slots and fetches `delayed_read_prefetch` bytes; the master
//!   asks again after `retry_interval` and, once the data is there, reads it
//!   (`completion_overhead + data` clocks). Attempts while every slot holds
//!   another master's read are retried too, and cost bus time;
//! - register read (programmed I/O by a CPU): mastered by the bridge's request
//!   queue in its round-robin turn, `completion_overhead` clocks plus one
//!   8-byte data phase; its value then goes up the ropes behind the posted writes (see
//!   `path`), and the CPU stalls until it is back. In PCI mode, on a bridge
//!   whose `register_reads_use_delayed_slots` is 1, the read asks for the bus
//!   only while a delayed-read slot is free: the bridge tracks one read at a
//!   time, whichever way it goes.
//!
//! Retries without events: while every master with work on a PCI bus would
//! only be retried (its delayed read latched and not ready, or no slot free
//! for it) or cannot ask (a write with no posted-buffer room, a register read
//! waiting for a slot), nothing but the retries themselves happens on the bus
//! until something outside it changes (data arrives, room frees, work is
//! queued). The bus then runs its retries lazily: [`Bus::catch_up`] replays
//! them, grant by grant with the same round-robin and timing, when anyone
//! next looks at the bus, and charges their bus time to the busy meter and
//! their count to `retries`, exactly as events would; no event is scheduled
//! for them. The replay looks only at the masters it retries: the others
//! cannot ask until something outside the bus changes. Every entry point
//! that changes the bus first catches up and turns the bus back to events
//! (the platform's `bus_sync`).
//!
//! The component: [`BusCfg`] and [`BridgeCfg`] (its configuration), [`Bus`]
//! (its masters, the transaction under way, the bridge's posted-write
//! buffer and delayed-read slots, the lazy replay of retries). Its
//! interface: the masters' queues and delayed-read slots, which the
//! platform fills; [`Bus::choose`] and [`Bus::start`] (a grant),
//! [`Bus::cut_at_latency_timer`], [`Bus::retried`], [`Bus::sync`],
//! [`Bus::watch_posted`] and the posted writes booked to leave the ropes;
//! the bus schedules its own events ([`BusEv`]) through any scheduler
//! whose event type converts from them, and the platform hands them back
//! and hands on what a transaction's end carries.
//!
//! A hardware file: it uses only other hardware (`path`'s fetches, the
//! meters), the engine's scheduler and the model's protocol; never the
//! platform, an engine, a workload, the assembly or the top-level event.

use std::collections::VecDeque;

use super::meter::BusyMeter;

use super::path::{Fetch, FetchKind, PIO_BYTES};
use crate::engine::Scheduler;
use crate::model::Protocol;
use crate::units::{BytesPerSec, Picos};

/// A bus in the mode negotiated between a card and its slot (its timing:
/// plain numbers, copied freely on the hot path).
#[derive(Debug, Clone, Copy)]
pub struct BusCfg {
    /// PCI or PCI-X.
    pub protocol: Protocol,
    /// One clock.
    pub clock: Picos,
    /// Bytes moved per clock (width x transfers per clock).
    pub bytes_per_clock: f64,
    /// Clocks of a posted write besides data.
    pub write_overhead: u64,
    /// Clocks of a read request (Retry or Split Response).
    pub read_request: u64,
    /// Clocks of a read-data transaction besides data.
    pub completion_overhead: u64,
    /// Burst cap, in clocks, when another master waits.
    pub latency_timer: u64,
    /// Largest burst of one transaction.
    pub max_burst: u64,
    /// Bytes a burst may move when another master waits: the latency
    /// timer's clocks of data, at least one clock's (derived, for the hot path).
    pub latency_timer_bytes: u64,
    /// `bytes_per_clock` when it is a whole number, else 0 (derived, for the
    /// hot path's integer arithmetic).
    pub whole_bytes_per_clock: u64,
}

impl BusCfg {
    /// Peak data rate.
    pub fn peak(&self) -> BytesPerSec {
        BytesPerSec(self.bytes_per_clock * 1e12 / self.clock.0 as f64)
    }
    /// Clocks to move `bytes` of data.
    #[inline]
    pub fn data_clocks(&self, bytes: u64) -> u64 {
        let whole = self.whole_bytes_per_clock;
        if whole > 0 {
            // Integer arithmetic for the usual whole number of bytes a clock.
            bytes.div_ceil(whole)
        } else {
            crate::units::ceil_u64((bytes as f64) / self.bytes_per_clock)
        }
    }
    /// Duration of `clocks` clocks.
    pub fn clocks(&self, clocks: u64) -> Picos {
        Picos(self.clock.0 * clocks)
    }
}

/// The bus adapter (bridge) above a slot.
#[derive(Debug, Clone)]
pub struct BridgeCfg {
    /// Posted-write buffer, bytes.
    pub posted_write_buffer: u64,
    /// Delayed-read slots (PCI mode).
    pub delayed_read_slots: usize,
    /// Bytes fetched per delayed read.
    pub delayed_read_prefetch: u64,
    /// Wait of a retried master before it asks again.
    pub retry_interval: Picos,
    /// In PCI mode a register read waits for a free delayed-read slot.
    pub register_reads_use_delayed_slots: bool,
    /// A posted write starts up the ropes once its first line is in.
    pub posted_writes_cut_through: bool,
}

/// Work queued at a master.
#[derive(Debug, Clone, Copy)]
pub enum BusItem {
    /// Posted write of `left` more bytes for op `op`.
    Write {
        /// Op id.
        op: u64,
        /// Bytes still to post.
        left: u64,
    },
    /// PCI-X read request of `bytes` for op `op`.
    ReadReq {
        /// Op id.
        op: u64,
        /// Bytes requested.
        bytes: u64,
    },
    /// PCI delayed read of `left` more bytes for op `op`.
    PciRead {
        /// Op id.
        op: u64,
        /// Bytes still to read.
        left: u64,
    },
    /// A CPU's read of a device register (programmed I/O), mastered by the
    /// bridge; CPU `cpu` is stalled until it returns.
    Pio {
        /// The stalled CPU.
        cpu: usize,
        /// The bus of the card read (this one, or a card's secondary bus
        /// below it, which the read goes on to).
        target: usize,
    },
    /// Split completion of `bytes` for op `op` of global function `func`.
    Completion {
        /// Global function.
        func: usize,
        /// Op id.
        op: u64,
        /// Bytes to deliver.
        bytes: u64,
    },
}

/// One bus master (a function's channel, or the bridge).
#[derive(Debug)]
pub struct Master {
    /// Global index of the function (None for the bridge).
    pub func: Option<usize>,
    /// Largest burst of this master (a function's write burst for its write
    /// channel; the bus's maximum for its read channel and the bridge).
    pub burst: u64,
    /// Queued work, served in order.
    pub queue: VecDeque<BusItem>,
    /// A retried master does not ask for the bus before this time.
    pub wait_until: Picos,
}

/// A latched delayed read in the bridge.
#[derive(Debug, Clone, Copy)]
pub struct DelayedRead {
    /// Master index on this bus.
    pub master: usize,
    /// Op it serves.
    pub op: u64,
    /// Bytes fetched.
    pub bytes: u64,
    /// Data has arrived from memory.
    pub ready: bool,
}

/// The transaction on the bus now.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Tx {
    Write {
        m: usize,
        op: u64,
        bytes: u64,
        last: bool,
    },
    ReadReq {
        op: u64,
        bytes: u64,
        func: usize,
    },
    Retry {
        m: usize,
    },
    PciData {
        m: usize,
        op: u64,
        bytes: u64,
        func: usize,
        last: bool,
    },
    Completion {
        op: u64,
        bytes: u64,
        func: usize,
        last: bool,
    },
    Pio {
        cpu: usize,
        target: usize,
    },
}

/// A bus segment with its bridge.
#[derive(Debug)]
pub struct Bus {
    /// Timing.
    pub cfg: BusCfg,
    /// Bridge.
    pub bridge: BridgeCfg,
    /// Masters: per local function a write then a read channel; then the
    /// bridge's completion queue and its request queue.
    pub masters: Vec<Master>,
    rr: usize,
    current: Option<Tx>,
    /// When the transaction on the bus began.
    started: Picos,
    /// Counts grants and cuts; a `BusDone` of an older one is stale.
    generation: u64,
    /// Busy time.
    pub meter: BusyMeter,
    /// Posted-write bytes held by the bridge.
    pub posted_used: u64,
    /// Posted writes booked across the ropes (see `path`): when each
    /// leaves them, freeing its bytes in the bridge, in order. Applied to
    /// `posted_used` by the platform (`bus_settle_posted`).
    leaving: VecDeque<(Picos, u64)>,
    /// The time of the last wake booked for a master waiting for room.
    posted_wake_at: Picos,
    /// The most room a write asks for: its masters' largest burst, within
    /// the bus's and the buffer's.
    largest_write: u64,
    /// Delayed-read slots.
    pub delayed: Vec<Option<DelayedRead>>,
    /// Data bytes moved (writes + read data) since the last reset.
    pub data_bytes: u64,
    /// Retries since the last reset.
    pub retries: u64,
    /// The bus runs its retries without events (see the module doc).
    lazy: bool,
    /// A lazy bus's state is that of this time.
    lazy_at: Picos,
    /// Whether retries may run without events (tests turn it off to check
    /// that the two ways agree).
    pub(crate) lazy_retries: bool,
    /// Periods of retries [`Bus::catch_up`] skipped at once (for tests).
    pub(crate) periods_skipped: u64,
    /// Wakes for a master waiting for room in the buffer (for tests).
    pub(crate) posted_wakes: u64,
    /// The retry starts one replay of [`Bus::catch_up`] has seen, kept
    /// between replays so that replaying allocates nothing.
    seen: SeenStarts,
    /// The masters a lazy bus retries (those with a delayed read at the
    /// front of their work), in order: set when it turns lazy (no master's
    /// work changes while it is), kept between replays so that replaying
    /// allocates nothing.
    retried: Vec<usize>,
}

/// Retry starts seen in one replay, oldest first, at most [`SeenStarts::CAP`]:
/// each start's state (the retried master, the round-robin pointer and each
/// retried master's remaining wait, `width` numbers in `states`) and its
/// time, bus time and retries.
#[derive(Debug, Default)]
struct SeenStarts {
    width: usize,
    states: Vec<u64>,
    marks: Vec<(Picos, Picos, u64)>,
    /// Room to build the state of the start at hand.
    scratch: Vec<u64>,
}

impl SeenStarts {
    /// Starts remembered at most.
    const CAP: usize = 8;

    /// Forgets every start.
    fn clear(&mut self) {
        self.states.clear();
        self.marks.clear();
    }

    /// The marks of the oldest start whose state is `state`.
    fn find(&self, state: &[u64]) -> Option<(Picos, Picos, u64)> {
        if self.marks.is_empty() || state.len() != self.width {
            return None;
        }
        self.states
            .chunks_exact(self.width)
            .position(|seen| seen == state)
            .map(|i| self.marks[i])
    }

    /// Remembers a start, forgetting the oldest when full.
    fn push(&mut self, state: &[u64], mark: (Picos, Picos, u64)) {
        if self.marks.is_empty() || state.len() != self.width {
            // One replay's states all have one width (the queues do not
            // change during it); never mix widths.
            self.clear();
            self.width = state.len();
        }
        if self.marks.len() == Self::CAP {
            self.marks.remove(0);
            self.states.drain(..self.width);
        }
        self.states.extend_from_slice(state);
        self.marks.push(mark);
    }
}

impl Bus {
    /// A bus for functions with the given (global index, write burst).
    pub fn new(cfg: BusCfg, bridge: BridgeCfg, funcs: &[(usize, u64)]) -> Bus {
        let mut masters = Vec::new();
        for &(f, burst) in funcs {
            // The write channel bursts at most `burst`; the read channel takes
            // what the bridge has fetched, up to the bus's own limits.
            for burst in [burst, cfg.max_burst] {
                masters.push(Master {
                    func: Some(f),
                    burst,
                    queue: VecDeque::new(),
                    wait_until: Picos(0),
                });
            }
        }
        // The bridge: its completion queue, then its request queue.
        for _ in 0..2 {
            masters.push(Master {
                func: None,
                burst: cfg.max_burst,
                queue: VecDeque::new(),
                wait_until: Picos(0),
            });
        }
        let slots = bridge.delayed_read_slots;
        // Only the functions' write channels post writes.
        let largest_write = funcs
            .iter()
            .map(|&(_, burst)| burst)
            .max()
            .unwrap_or(0)
            .min(cfg.max_burst)
            .min(bridge.posted_write_buffer);
        Bus {
            cfg,
            bridge,
            masters,
            rr: 0,
            current: None,
            started: Picos(0),
            generation: 0,
            meter: BusyMeter::default(),
            posted_used: 0,
            leaving: VecDeque::new(),
            posted_wake_at: Picos(0),
            largest_write,
            delayed: vec![None; slots],
            data_bytes: 0,
            retries: 0,
            lazy: false,
            lazy_at: Picos(0),
            lazy_retries: true,
            periods_skipped: 0,
            posted_wakes: 0,
            seen: SeenStarts::default(),
            retried: Vec::new(),
        }
    }

    /// Bytes of the posted write on the bus now (already counted in `posted_used`).
    pub fn in_flight_write(&self) -> u64 {
        match self.current {
            Some(Tx::Write { bytes, .. }) => bytes,
            _ => 0,
        }
    }

    /// Index of the bridge's completion queue (a master).
    pub fn completion_master(&self) -> usize {
        self.masters.len() - 2
    }

    /// Index of the bridge's downstream request queue (a master).
    pub fn request_master(&self) -> usize {
        self.masters.len() - 1
    }

    /// The first of `count` masters, in round-robin order from `from`, that
    /// asks for the bus at `now` (no division in this hot loop).
    #[inline]
    fn first_wanting(&self, from: usize, count: usize, now: Picos) -> Option<usize> {
        let n = self.masters.len();
        let mut m = from;
        for _ in 0..count {
            if self.wants(m, now) {
                return Some(m);
            }
            m = next_after(m, n);
        }
        None
    }

    /// Whether a master other than `m` asks for the bus at `now`.
    fn another_wants(&self, m: usize, now: Picos) -> bool {
        (0..self.masters.len()).any(|o| o != m && self.wants(o, now))
    }

    /// Largest data chunk the master may move now.
    fn chunk_cap(&self, m: usize, others_waiting: bool) -> u64 {
        let mut cap = self.cfg.max_burst.min(self.masters[m].burst);
        if others_waiting {
            cap = cap.min(self.cfg.latency_timer_bytes);
        }
        cap.max(1)
    }

    /// Largest chunk of a transfer of `want` bytes master `m` may move now:
    /// [`Bus::chunk_cap`], asking `others` (whether another master waits)
    /// only when the latency timer's cap could cut it.
    fn chunk_for(&self, m: usize, want: u64, others: impl FnOnce(&Bus) -> bool) -> u64 {
        let free = self.chunk_cap(m, false);
        if want.min(free) <= self.cfg.latency_timer_bytes {
            free
        } else {
            self.chunk_cap(m, others(self))
        }
    }

    /// Whether master `m` asks for the bus at `now`.
    fn wants(&self, m: usize, now: Picos) -> bool {
        let master = &self.masters[m];
        // Most masters have no work: looked at first.
        let Some(front) = master.queue.front() else {
            return false;
        };
        if master.wait_until > now {
            return false;
        }
        match front {
            BusItem::Write { left, .. } => {
                let need = (*left)
                    .min(self.cfg.max_burst)
                    .min(master.burst)
                    .min(self.bridge.posted_write_buffer);
                self.posted_used + need <= self.bridge.posted_write_buffer
            }
            BusItem::Pio { .. }
                if self.cfg.protocol == Protocol::Pci
                    && self.bridge.register_reads_use_delayed_slots =>
            {
                self.delayed.iter().any(|d| d.is_none())
            }
            _ => true,
        }
    }

    /// Whether a master that could ask has a posted write waiting for room
    /// in the bridge's buffer (a write at the front of its queue that does
    /// not ask only for want of room).
    fn waits_for_room(&self, now: Picos) -> bool {
        self.posted_used > 0
            && (0..self.masters.len()).any(|m| {
                let master = &self.masters[m];
                matches!(master.queue.front(), Some(BusItem::Write { .. }))
                    && master.wait_until <= now
                    && !self.wants(m, now)
            })
    }

    /// Whether the delayed read `op` of master `m` would be answered Retry
    /// with no other effect (its data not ready, or no slot for it).
    fn only_retried(&self, m: usize, op: u64) -> bool {
        match self
            .delayed
            .iter()
            .flatten()
            .find(|d| d.master == m && d.op == op)
        {
            Some(d) => !d.ready,
            None => self.delayed.iter().all(|d| d.is_some()),
        }
    }

    /// Whether nothing but retries can happen on this bus until something
    /// outside it changes: no transaction but a retry under way, and every
    /// master with work either only retried or unable to ask.
    fn retries_only(&self, now: Picos) -> bool {
        if !self.lazy_retries
            || !matches!(self.current, None | Some(Tx::Retry { .. }))
            || self.cfg.read_request == 0
            || self.cfg.protocol != Protocol::Pci
        {
            return false;
        }
        (0..self.masters.len()).all(|m| match self.masters[m].queue.front() {
            None => true,
            Some(BusItem::PciRead { op, .. }) => self.only_retried(m, *op),
            Some(BusItem::Write { .. }) | Some(BusItem::Pio { .. }) => {
                self.masters[m].wait_until <= now && !self.wants(m, now)
            }
            Some(_) => false,
        })
    }

    /// When the retry on the bus (granted at `started`) ends.
    fn retry_end(&self) -> Picos {
        self.started + self.cfg.clocks(self.cfg.read_request)
    }

    /// Replays the retries of a lazy bus up to and including `now` (see the
    /// module doc): each retry's end, its master's wait, and each grant to
    /// the next master in round-robin order whose wait is over, at the
    /// times events would have made them.
    ///
    /// Once the retries repeat (a retry starts with the round-robin pointer
    /// and every retried master's remaining wait as at an earlier start in
    /// this replay), the replay is periodic: it skips the whole periods up to
    /// `now` at once, adding each period's bus time and retries, and goes on
    /// grant by grant from there. Every decision of the replay depends only
    /// on those quantities (the other masters cannot ask while the bus is
    /// lazy), so the skip gives what replaying each period would.
    pub fn catch_up(&mut self, now: Picos) {
        if !self.lazy {
            return;
        }
        let n = self.masters.len();
        // Only the masters with a delayed read at the front of their work
        // ask for the bus while it is lazy (the others cannot, and nothing
        // in the replay changes what they wait for: room in the buffer, a
        // free slot), so the replay looks at those alone.
        let retried = std::mem::take(&mut self.retried);
        // Retry starts seen in this replay, recorded from the second start on.
        self.seen.clear();
        let mut starts = 0u32;
        loop {
            let was_idle = self.current.is_none();
            let t = match self.current {
                Some(Tx::Retry { m }) => {
                    let end = self.retry_end();
                    if end > now {
                        self.lazy_at = now;
                        break;
                    }
                    self.meter.stop(end);
                    self.retries += 1;
                    self.masters[m].wait_until = end + self.bridge.retry_interval;
                    self.current = None;
                    end
                }
                _ => {
                    // Idle: the next master whose wait ends (or has ended
                    // while the bus was busy).
                    let next = retried
                        .iter()
                        .map(|&m| self.masters[m].wait_until.max(self.lazy_at))
                        .min();
                    match next {
                        Some(t) if t <= now => t,
                        _ => {
                            self.lazy_at = now;
                            break;
                        }
                    }
                }
            };
            self.lazy_at = t;
            // The first of them in round-robin order from the pointer that
            // asks (what `first_wanting` over every master gives).
            let first = |from_pointer: bool| {
                retried
                    .iter()
                    .copied()
                    .filter(|&m| (m >= self.rr) == from_pointer)
                    .find(|&m| self.wants(m, t))
            };
            let Some(m) = first(true).or_else(|| first(false)) else {
                if was_idle {
                    // Cannot happen (a master whose wait is over wants
                    // the bus); never loop on it.
                    break;
                }
                continue;
            };
            self.rr = next_after(m, n);
            self.current = Some(Tx::Retry { m });
            self.started = t;
            self.meter.start(t);
            starts += 1;
            // One master retried repeats from its first start (see
            // `skip_periods`); several, once a start's state recurs.
            if starts >= 2 || retried.len() == 1 {
                self.skip_periods(now, &retried);
            }
        }
        self.retried = retried;
    }

    /// Turns the bus lazy at `now` (see the module doc): notes the masters
    /// it retries, and replays what is due.
    fn go_lazy(&mut self, now: Picos) {
        self.lazy = true;
        self.lazy_at = now;
        let mut retried = std::mem::take(&mut self.retried);
        retried.clear();
        retried.extend(
            (0..self.masters.len()).filter(|&m| {
                matches!(self.masters[m].queue.front(), Some(BusItem::PciRead { .. }))
            }),
        );
        self.retried = retried;
        self.catch_up(now);
    }

    /// At the start of a retry in [`Bus::catch_up`]: if the state (the
    /// retried master, the round-robin pointer, each retried master's wait
    /// left) was seen at an earlier start of this replay, skips every whole
    /// period that ends by `now`; else remembers the state (the last eight).
    ///
    /// With one master retried, every retry the replay starts begins in the
    /// same state (its wait just over, the pointer past it), so the replay
    /// repeats from the first, every retry and wait: the periods are skipped
    /// at once, which is what the search for a recurring state finds two
    /// starts later.
    fn skip_periods(&mut self, now: Picos, retried: &[usize]) {
        let (t, Some(Tx::Retry { m })) = (self.started, self.current) else {
            return;
        };
        if let [_] = retried {
            let busy = self.cfg.clocks(self.cfg.read_request);
            let period = busy + self.bridge.retry_interval;
            self.skip_whole_periods(now, retried, t, period, (1, busy));
            return;
        }
        let mut state = std::mem::take(&mut self.seen.scratch);
        state.clear();
        state.extend([m as u64, self.rr as u64]);
        state.extend(
            retried
                .iter()
                .map(|&r| self.masters[r].wait_until.0.saturating_sub(t.0)),
        );
        let busy = self.meter.total(t);
        match self.seen.find(&state) {
            Some((t0, busy0, retries0)) if t > t0 => {
                let per_period = (self.retries - retries0, busy - busy0);
                self.skip_whole_periods(now, retried, t, t - t0, per_period);
                self.seen.clear();
            }
            _ => self.seen.push(&state, (t, busy, self.retries)),
        }
        self.seen.scratch = state;
    }

    /// Skips every whole `period` of a lazy bus's replay from the retry
    /// started at `t` that ends by `now`, each adding `per_period` (retries,
    /// bus time): the retried masters' waits, the retry under way and the
    /// bus's time move on by the periods skipped.
    fn skip_whole_periods(
        &mut self,
        now: Picos,
        retried: &[usize],
        t: Picos,
        period: Picos,
        per_period: (u64, Picos),
    ) {
        let k = (now - t).0.checked_div(period.0).unwrap_or(0);
        if k == 0 {
            return;
        }
        let shift = Picos(period.0 * k);
        for &r in retried {
            let x = &mut self.masters[r];
            if x.wait_until > t {
                x.wait_until += shift;
            }
        }
        self.retries += per_period.0 * k;
        self.meter.skip(Picos(per_period.1 .0 * k), t + shift);
        self.started = t + shift;
        self.lazy_at = t + shift;
        self.periods_skipped += k;
    }
}

/// Puts the rest of a cut transfer back at the front of its master's queue:
/// onto the item it came from while that is still queued (`last` false),
/// An event of bus `bus`, for the platform to schedule (its event type
/// converts from this one).
#[derive(Debug, Clone, Copy)]
pub enum BusEv {
    /// The transaction on the bus ends.
    Done {
        /// The bus.
        bus: usize,
        /// The bus's grant count at its grant, to drop a stale end after a
        /// cut.
        generation: u64,
    },
    /// A retried master on the bus may ask again.
    Wake(usize),
    /// A posted write booked across the ropes above the bus leaves them
    /// while a master of the bus waits for room in its bridge.
    PostedFree(usize),
}

/// A grant of the bus: the master, its transaction and the transaction's
/// clocks, and the delayed read to fetch that it latched, if any.
#[derive(Debug, Clone, Copy)]
pub struct Grant {
    master: usize,
    tx: Tx,
    clocks: u64,
    /// A delayed read latched at this grant, for the platform to send up.
    pub fetch: Option<Fetch>,
}

impl Bus {
    /// If a master of bus `b` waits for room in the bridge's buffer, wakes
    /// the bus when the next booked posted write leaves the ropes (the
    /// bus then arbitrates, as an event at its leaving would make it).
    #[inline(always)]
    pub fn watch_posted<E: Copy + From<BusEv>>(&mut self, b: usize, s: &mut Scheduler<E>) {
        // Nothing booked to leave (a bus without ropes of its own, or none
        // under way), or no write asks for more than the room left: none
        // waits (the common cases, checked here, inline).
        let bus = &*self;
        if !bus.leaving.is_empty()
            && bus.posted_used + bus.largest_write > bus.bridge.posted_write_buffer
        {
            self.watch_posted_full(b, s);
        }
    }

    /// [`Bus::watch_posted`] once the buffer may be too full.
    fn watch_posted_full<E: Copy + From<BusEv>>(&mut self, b: usize, s: &mut Scheduler<E>) {
        let bus = &mut *self;
        let Some(&(t, _)) = bus.leaving.front() else {
            return;
        };
        if bus.posted_wake_at != t && bus.waits_for_room(s.now()) {
            bus.posted_wake_at = t;
            s.schedule_at(t, E::from(BusEv::PostedFree(b)));
        }
    }

    /// Another master asks for this bus (bus `b`) during a data transfer longer than the
    /// latency timer: the arbiter takes the grant away, so the transfer ends
    /// when the timer expires (or with the data phase under way, if it
    /// already has), and the rest goes back to the front of its master's
    /// queue (PCI 2.2 3.5.4; PCI-X 1.0 likewise, at the next 128-byte
    /// boundary, not modelled). A delayed read's data beyond the cut is
    /// discarded, as at a cut made at the grant.
    pub fn cut_at_latency_timer<E: Copy + From<BusEv>>(&mut self, b: usize, s: &mut Scheduler<E>) {
        let now = s.now();
        let bus = &mut *self;
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
        s.schedule_at(
            end.max(now),
            E::from(BusEv::Done {
                bus: b,
                generation: bus.generation,
            }),
        );
    }

    /// Turns a lazy bus `b` back to events (see the module doc): replays its
    /// retries up to now, then schedules the end of the retry under way and
    /// the wake of every master waiting to retry. Call before changing the
    /// bus's state.
    #[inline]
    pub fn sync<E: Copy + From<BusEv>>(&mut self, b: usize, s: &mut Scheduler<E>) {
        if self.lazy {
            self.unlazy(b, s);
        }
    }

    /// [`Bus::sync`] of a lazy bus.
    fn unlazy<E: Copy + From<BusEv>>(&mut self, b: usize, s: &mut Scheduler<E>) {
        let now = s.now();
        let bus = &mut *self;
        bus.catch_up(now);
        bus.lazy = false;
        if let Some(Tx::Retry { .. }) = bus.current {
            bus.generation += 1;
            s.schedule_at(
                bus.retry_end(),
                E::from(BusEv::Done {
                    bus: b,
                    generation: bus.generation,
                }),
            );
        }
        for m in &bus.masters {
            if m.wait_until > now && matches!(m.queue.front(), Some(BusItem::PciRead { .. })) {
                s.schedule_at(m.wait_until, E::from(BusEv::Wake(b)));
            }
        }
    }

    /// Whether a transaction is under way.
    #[inline]
    pub fn is_busy(&self) -> bool {
        self.current.is_some()
    }

    /// The grant the round robin makes next on this bus (bus `b`), at
    /// `now`, if a master wants it: its work is taken off the master's
    /// queue (a write's room taken in the bridge, a delayed read latched in
    /// a free slot, its fetch in the grant). Call when the bus is idle;
    /// [`Bus::start`] then starts it.
    #[inline]
    pub fn choose(&mut self, b: usize, now: Picos) -> Option<Grant> {
        let bus = &*self;
        let n = bus.masters.len();
        let m = bus.first_wanting(bus.rr, n, now)?;
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
        let item = self.masters[m].queue.front().copied();
        let func = self.masters[m].func;
        let mut fetch = None;
        let (tx, clocks) = match (item, func) {
            (Some(BusItem::Write { op, left }), Some(_)) => {
                let bus = &mut *self;
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
                self.masters[m].queue.pop_front();
                (Tx::ReadReq { op, bytes, func: f }, cfg.read_request)
            }
            (Some(BusItem::PciRead { op, left }), Some(f)) => {
                let bus = &mut *self;
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
                            fetch = Some(Fetch {
                                bus: b,
                                bytes,
                                kind: FetchKind::Delayed { slot, op },
                            });
                        }
                        (Tx::Retry { m }, cfg.read_request)
                    }
                }
            }
            (Some(BusItem::Pio { cpu, target }), None) => {
                self.masters[m].queue.pop_front();
                (
                    Tx::Pio { cpu, target },
                    cfg.completion_overhead + cfg.data_clocks(PIO_BYTES),
                )
            }
            (Some(BusItem::Completion { func, op, bytes }), None) => {
                let bus = &mut *self;
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
            _ => return None,
        };
        Some(Grant {
            master: m,
            tx,
            clocks,
            fetch,
        })
    }

    /// Starts grant `g` at `now` on this bus (bus `b`) and schedules its end.
    #[inline]
    pub fn start<E: Copy + From<BusEv>>(&mut self, b: usize, g: Grant, s: &mut Scheduler<E>) {
        let now = s.now();
        self.rr = next_after(g.master, self.masters.len());
        self.current = Some(g.tx);
        self.started = now;
        self.generation += 1;
        self.meter.start(now);
        let generation = self.generation;
        s.schedule_in(
            self.cfg.clocks(g.clocks),
            E::from(BusEv::Done { bus: b, generation }),
        );
    }

    /// The transaction that ends now on this bus (bus `b`) was a retry of
    /// master `m`: it may ask again after the retry interval (its wake
    /// scheduled), unless nothing but retries can happen on the bus until
    /// something else changes, when the bus turns lazy (see the module
    /// doc). Whether it did.
    #[inline]
    pub fn retried<E: Copy + From<BusEv>>(
        &mut self,
        b: usize,
        m: usize,
        s: &mut Scheduler<E>,
    ) -> bool {
        let now = s.now();
        self.retries += 1;
        let wake = now + self.bridge.retry_interval;
        self.masters[m].wait_until = wake;
        if self.retries_only(now) {
            // Nothing but retries until something else changes.
            self.go_lazy(now);
            return true;
        }
        if wake > now {
            s.schedule_at(wake, E::from(BusEv::Wake(b)));
        }
        false
    }

    /// Whether grant `generation` is the transaction under way (not one cut
    /// short, whose end is another event).
    #[inline]
    pub fn is_current(&self, generation: u64) -> bool {
        generation == self.generation
    }

    /// Ends the transaction under way at `now`, if any: what it was.
    #[inline]
    pub(crate) fn end(&mut self, now: Picos) -> Option<Tx> {
        let tx = self.current.take()?;
        self.meter.stop(now);
        Some(tx)
    }

    /// The transaction under way, if any.
    #[cfg(test)]
    pub(crate) fn current(&self) -> Option<Tx> {
        self.current
    }

    /// When the first unit (`min(bytes, line)`) of a posted write of
    /// `bytes` that ends `now` reached the bridge: one line's data phases
    /// after the write's own clocks began, behind a bridge that streams
    /// posted writes cut-through (the only reader); else `now`.
    #[inline]
    pub fn write_head(&self, bytes: u64, line: u64, now: Picos) -> Picos {
        if self.bridge.posted_writes_cut_through {
            let unit = bytes.min(line);
            let clocks = self.cfg.write_overhead + self.cfg.data_clocks(unit);
            (self.started + self.cfg.clocks(clocks)).min(now)
        } else {
            now
        }
    }

    /// Whether the bus runs its retries without events.
    #[inline]
    pub fn is_lazy(&self) -> bool {
        self.lazy
    }

    /// Whether a posted write booked across the ropes has left them by
    /// `last` (checked inline: most calls find none).
    #[inline(always)]
    pub fn posted_left_by(&self, last: Picos) -> bool {
        self.leaving.front().is_some_and(|&(t, _)| t <= last)
    }

    /// The next posted write booked across the ropes that has left them by
    /// `last`, taken off the booking: its bytes.
    #[inline]
    pub fn take_posted_left(&mut self, last: Picos) -> Option<u64> {
        match self.leaving.front() {
            Some(&(t, bytes)) if t <= last => {
                self.leaving.pop_front();
                Some(bytes)
            }
            _ => None,
        }
    }

    /// Books a posted write of `bytes` to leave the ropes at `at`, freeing
    /// its room in the bridge then.
    #[inline]
    pub fn book_posted_leaving(&mut self, at: Picos, bytes: u64) {
        self.leaving.push_back((at, bytes));
    }
}

/// else as a new item.
fn give_back(queue: &mut VecDeque<BusItem>, last: bool, rest: BusItem) {
    match (queue.front_mut(), rest) {
        (Some(BusItem::Write { left, .. }), BusItem::Write { left: r, .. })
        | (Some(BusItem::PciRead { left, .. }), BusItem::PciRead { left: r, .. })
        | (Some(BusItem::Completion { bytes: left, .. }), BusItem::Completion { bytes: r, .. })
            if !last =>
        {
            *left += r
        }
        _ => queue.push_front(rest),
    }
}

impl Tx {
    /// Splits a data transfer after its first `keep` bytes: the transfer cut
    /// there (no longer the last of its item), the queue item for the `rest`,
    /// and whether the transfer was the last of its item. None for anything
    /// but a write, a delayed read's data or a completion.
    fn split(self, keep: u64, rest: u64) -> Option<(Tx, BusItem, bool)> {
        Some(match self {
            Tx::Write { m, op, last, .. } => (
                Tx::Write {
                    m,
                    op,
                    bytes: keep,
                    last: false,
                },
                BusItem::Write { op, left: rest },
                last,
            ),
            Tx::PciData {
                m, op, func, last, ..
            } => (
                Tx::PciData {
                    m,
                    op,
                    bytes: keep,
                    func,
                    last: false,
                },
                BusItem::PciRead { op, left: rest },
                last,
            ),
            Tx::Completion { op, func, last, .. } => (
                Tx::Completion {
                    op,
                    bytes: keep,
                    func,
                    last: false,
                },
                BusItem::Completion {
                    func,
                    op,
                    bytes: rest,
                },
                last,
            ),
            _ => return None,
        })
    }
}

/// The master after `m` of `n`, round robin (without a division).
#[inline]
fn next_after(m: usize, n: usize) -> usize {
    if m + 1 >= n {
        0
    } else {
        m + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_remembers_its_last_eight_retry_starts_and_finds_the_oldest_match() {
        let mark = |t: u64| (Picos(t), Picos(2 * t), t);
        let mut seen = SeenStarts::default();
        for t in 0..9u64 {
            seen.push(&[t % 5, 1, 2], mark(t));
        }
        // Starts 1 to 8 are kept (0 forgotten): [0, 1, 2] was seen at 5.
        assert_eq!(seen.find(&[0, 1, 2]), Some(mark(5)));
        assert_eq!(seen.find(&[1, 1, 2]), Some(mark(1)));
        assert_eq!(seen.find(&[1, 1]), None);
        // A state of another width starts over.
        seen.push(&[7, 7], mark(20));
        assert_eq!(seen.find(&[7, 7]), Some(mark(20)));
        assert_eq!(seen.find(&[1, 1, 2]), None);
        seen.clear();
        assert_eq!(seen.find(&[7, 7]), None);
    }
}
