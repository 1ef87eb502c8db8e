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
//! (`Platform::bus_sync`).

use std::collections::VecDeque;

use super::meter::BusyMeter;
use super::path::{Fetch, FetchKind, PIO_BYTES};
use super::platform::Platform;
use super::{Ev, System};
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
enum Tx {
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
    /// `posted_used` by [`Platform::bus_settle_posted`].
    pub(super) leaving: VecDeque<(Picos, u64)>,
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
    pub(super) lazy_retries: bool,
    /// Periods of retries [`Bus::catch_up`] skipped at once (for tests).
    pub(super) periods_skipped: u64,
    /// Wakes for a master waiting for room in the buffer (for tests).
    pub(super) posted_wakes: u64,
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

impl Platform {
    /// Grants the bus of `b` to the next waiting master, if it is idle
    /// (after the posted writes that have left the ropes free their room),
    /// and books a wake for a master still waiting for room.
    pub(super) fn bus_arbitrate(&mut self, b: usize, s: &mut Scheduler<Ev>) {
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
    pub(super) fn bus_settle_posted(&mut self, b: usize, now: Picos, strict: bool) {
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
    pub(super) fn free_posted(&mut self, b: usize, bytes: u64) {
        let bus = &mut self.buses[b];
        bus.posted_used = bus.posted_used.saturating_sub(bytes);
        self.totals.rope_write_bytes += bytes;
    }

    /// If a master of bus `b` waits for room in the bridge's buffer, wakes
    /// the bus when the next booked posted write leaves the ropes (the
    /// bus then arbitrates, as an event at its leaving would make it).
    #[inline(always)]
    pub(super) fn bus_watch_posted(&mut self, b: usize, s: &mut Scheduler<Ev>) {
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
    fn bus_watch_posted_full(&mut self, b: usize, s: &mut Scheduler<Ev>) {
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
    pub(super) fn bus_posted_free(&mut self, b: usize, s: &mut Scheduler<Ev>) {
        self.buses[b].posted_wakes += 1;
        self.bus_arbitrate(b, s);
    }

    /// [`Platform::bus_arbitrate`] once the buffer is settled.
    fn bus_grant(&mut self, b: usize, s: &mut Scheduler<Ev>) {
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
                            self.up_push(b, super::path::RopeItem::ReadReq(fetch), s);
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
    fn bus_cut_at_latency_timer(&mut self, b: usize, s: &mut Scheduler<Ev>) {
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
    pub(super) fn bus_sync(&mut self, b: usize, s: &mut Scheduler<Ev>) {
        if self.buses[b].lazy {
            self.bus_unlazy(b, s);
        }
    }

    /// [`Platform::bus_sync`] of a lazy bus.
    fn bus_unlazy(&mut self, b: usize, s: &mut Scheduler<Ev>) {
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
    pub(super) fn bus_wake(&mut self, b: usize, s: &mut Scheduler<Ev>) {
        if self.buses[b].lazy {
            self.buses[b].catch_up(s.now());
        } else {
            self.bus_arbitrate(b, s);
        }
    }

    /// Queues `item` at master `m` of bus `b` and arbitrates.
    pub(super) fn bus_enqueue(&mut self, b: usize, m: usize, item: BusItem, s: &mut Scheduler<Ev>) {
        self.bus_sync(b, s);
        self.buses[b].masters[m].queue.push_back(item);
        self.bus_arbitrate(b, s);
    }

    /// Queues a split completion at the bridge of bus `b`.
    pub(super) fn bus_push_completion(
        &mut self,
        b: usize,
        func: usize,
        op: u64,
        bytes: u64,
        s: &mut Scheduler<Ev>,
    ) {
        let bm = self.buses[b].completion_master();
        self.bus_enqueue(b, bm, BusItem::Completion { func, op, bytes }, s);
    }

    /// Queues a register read by CPU `cpu` of a card on bus `target` at the
    /// bridge of bus `b`.
    pub(super) fn bus_push_pio(
        &mut self,
        b: usize,
        cpu: usize,
        target: usize,
        s: &mut Scheduler<Ev>,
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
    pub(super) fn bus_delayed_ready(
        &mut self,
        b: usize,
        slot: usize,
        op: u64,
        s: &mut Scheduler<Ev>,
    ) {
        self.bus_sync(b, s);
        if let Some(d) = self.buses[b].delayed[slot].as_mut() {
            if d.op == op {
                d.ready = true;
            }
        }
    }
}

impl System {
    /// The transaction on bus `b` ends.
    pub(super) fn bus_done(&mut self, b: usize, generation: u64, s: &mut Scheduler<Ev>) {
        let now = s.now();
        if generation != self.p.buses[b].generation {
            // The transaction was cut short and ends at another event.
            return;
        }
        self.p.bus_settle_posted(b, now, false);
        let Some(tx) = self.p.buses[b].current.take() else {
            return;
        };
        self.p.buses[b].meter.stop(now);
        match tx {
            Tx::Write { m, op, bytes, last } => {
                self.p.buses[b].data_bytes += bytes;
                self.p.totals.bus_write_bytes += bytes;
                // Its first cache line reached the bridge one line's data
                // phases after the write's own clocks began (read only
                // behind a bridge that streams posted writes cut-through).
                let bus = &self.p.buses[b];
                let head = if bus.bridge.posted_writes_cut_through {
                    let unit = bytes.min(self.p.cfg.memory.line);
                    let clocks = bus.cfg.write_overhead + bus.cfg.data_clocks(unit);
                    (bus.started + bus.cfg.clocks(clocks)).min(now)
                } else {
                    now
                };
                let item = super::path::RopeItem::Write { bytes, head };
                self.p.up_push(b, item, s);
                if last {
                    if let Some(f) = self.p.buses[b].masters[m].func {
                        self.dma_write_done(f, op, s);
                    }
                }
            }
            Tx::ReadReq { op, bytes, func } => {
                let fetch = Fetch {
                    bus: b,
                    bytes,
                    kind: FetchKind::Split { func, op },
                };
                self.p.up_push(b, super::path::RopeItem::ReadReq(fetch), s);
            }
            Tx::Retry { m } => {
                let bus = &mut self.p.buses[b];
                bus.retries += 1;
                let wake = now + bus.bridge.retry_interval;
                bus.masters[m].wait_until = wake;
                if bus.retries_only(now) {
                    // Nothing but retries until something else changes.
                    bus.go_lazy(now);
                    // A writer waiting for room wakes it when room frees.
                    self.p.bus_watch_posted(b, s);
                    return;
                }
                if wake > now {
                    s.schedule_at(wake, Ev::BusWake(b));
                }
            }
            Tx::PciData {
                op, bytes, func, ..
            } => {
                self.p.buses[b].data_bytes += bytes;
                self.dma_read_data(func, op, bytes, false, s);
            }
            Tx::Completion {
                op,
                bytes,
                func,
                last,
            } => {
                self.p.buses[b].data_bytes += bytes;
                self.dma_read_data(func, op, bytes, last, s);
            }
            Tx::Pio { cpu, target } if target != b => {
                // On to the card's own bus, through its bridge.
                let next = self.p.bus_toward(b, target);
                self.p.bus_push_pio(next, cpu, target, s);
            }
            Tx::Pio { cpu, .. } => {
                self.p.up_push(b, super::path::RopeItem::PioData { cpu }, s);
            }
        }
        self.p.bus_arbitrate(b, s);
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
    use crate::engine::{run_until, Limits};

    /// The system of the first experiment of Figure 2 (GigE receive on PCI-X),
    /// not started: its buses are idle and empty.
    fn idle_system() -> System {
        idle_system_of("gige-rx.pcix.c1")
    }

    /// The system of experiment `id` of Figure 2, not started.
    fn idle_system_of(id: &str) -> System {
        System::new(
            super::super::tests::config_of("hp2g-fig2-gige-receive", id),
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
