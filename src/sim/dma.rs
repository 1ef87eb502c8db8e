//! The DMA front end of adapter functions: a function's DMA read or write
//! becomes bus work (posted writes; PCI-X read requests of `max_read` bytes
//! with at most `max_outstanding_reads` in flight; PCI delayed reads), and
//! its bookkeeping (operation ids, what each operation tells the engine when
//! it is done).

use std::collections::VecDeque;

use super::bus::BusItem;
use super::engines::EngineEv;
use super::path::RopeItem;
use super::platform::Platform;
use super::{Ev, System};
use crate::engine::Scheduler;
use crate::model::Protocol;

/// How a function's DMA engine uses the bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaCfg {
    /// Bytes per read request.
    pub max_read: u64,
    /// Read requests in flight.
    pub max_outstanding: u32,
    /// Bytes per write burst.
    pub write_burst: u64,
}

/// Whom a DMA operation tells when it is done.
#[derive(Debug, Clone, Copy)]
pub enum DmaDone {
    /// The function's engine, with this event.
    Engine(EngineEv),
    /// An on-card bridge has carried `item` of its secondary bus `bus`
    /// across the slot's bus (a posted write posted there, a read's data
    /// fetched): the item goes on as if it had crossed the ropes.
    Forwarded {
        /// The secondary bus.
        bus: usize,
        /// What arrives there (or, for a write, leaves its bridge).
        item: RopeItem,
    },
}

/// A read in progress: bytes still to arrive and whom to tell when they
/// have.
#[derive(Debug, Clone, Copy)]
pub struct ReadOp {
    /// Bytes not yet delivered.
    pub remaining: u64,
    /// Whom to tell when done.
    pub done: DmaDone,
}

/// Operations in progress by id: few at a time, so a vector searched from
/// the front (oldest first) beats a tree.
#[derive(Debug)]
pub struct InFlight<T> {
    ops: Vec<(u64, T)>,
}

impl<T> Default for InFlight<T> {
    fn default() -> Self {
        InFlight { ops: Vec::new() }
    }
}

impl<T> InFlight<T> {
    /// Records operation `op`.
    pub fn insert(&mut self, op: u64, v: T) {
        self.ops.push((op, v));
    }

    /// Operation `op`, if in progress.
    pub fn get_mut(&mut self, op: u64) -> Option<&mut T> {
        self.ops.iter_mut().find(|(o, _)| *o == op).map(|(_, v)| v)
    }

    /// Forgets operation `op` and returns it, if it was in progress.
    pub fn remove(&mut self, op: u64) -> Option<T> {
        let i = self.ops.iter().position(|(o, _)| *o == op)?;
        Some(self.ops.remove(i).1)
    }
}

/// The DMA bookkeeping of one function.
#[derive(Debug, Default)]
pub struct DmaPort {
    next_op: u64,
    /// Reads in progress.
    pub reads: InFlight<ReadOp>,
    /// Writes in progress.
    pub writes: InFlight<DmaDone>,
    /// PCI-X read requests not yet issued: (op, bytes).
    pub unissued: VecDeque<(u64, u64)>,
    /// PCI-X read requests issued and not yet completed.
    pub outstanding: u32,
}

impl DmaPort {
    /// A fresh operation id.
    pub fn new_op(&mut self) -> u64 {
        self.next_op += 1;
        self.next_op
    }
}

impl Platform {
    /// Starts a posted DMA write of `bytes` by DMA port `f` (a function, or
    /// an on-card bridge after the functions).
    pub(super) fn dma_write(&mut self, f: usize, bytes: u64, done: DmaDone, s: &mut Scheduler<Ev>) {
        let op = self.ports[f].new_op();
        self.ports[f].writes.insert(op, done);
        let pl = self.place[f];
        let item = BusItem::Write {
            op,
            left: bytes.max(1),
        };
        self.bus_enqueue(pl.bus, 2 * pl.local, item, s);
    }

    /// Starts a DMA read of `bytes` by DMA port `f`.
    pub(super) fn dma_read(&mut self, f: usize, bytes: u64, done: DmaDone, s: &mut Scheduler<Ev>) {
        let bytes = bytes.max(1);
        let op = self.ports[f].new_op();
        self.ports[f].reads.insert(
            op,
            ReadOp {
                remaining: bytes,
                done,
            },
        );
        let pl = self.place[f];
        match self.buses[pl.bus].cfg.protocol {
            Protocol::Pci => {
                let item = BusItem::PciRead { op, left: bytes };
                self.bus_enqueue(pl.bus, 2 * pl.local + 1, item, s);
            }
            Protocol::PciX => {
                let max = pl.max_read.max(1);
                let mut left = bytes;
                while left > 0 {
                    let c = left.min(max);
                    self.ports[f].unissued.push_back((op, c));
                    left -= c;
                }
                self.dma_issue_reads(f, s);
            }
        }
    }

    /// Issues queued PCI-X read requests of `f` up to its outstanding limit.
    pub(super) fn dma_issue_reads(&mut self, f: usize, s: &mut Scheduler<Ev>) {
        let pl = self.place[f];
        self.bus_sync(pl.bus, s);
        let mut any = false;
        while self.ports[f].outstanding < pl.max_outstanding {
            let Some((op, bytes)) = self.ports[f].unissued.pop_front() else {
                break;
            };
            self.ports[f].outstanding += 1;
            self.buses[pl.bus].masters[2 * pl.local + 1]
                .queue
                .push_back(BusItem::ReadReq { op, bytes });
            any = true;
        }
        if any {
            self.bus_arbitrate(pl.bus, s);
        }
    }
}

impl System {
    /// Read data for op `op` of `f` arrived at the function.
    pub(super) fn dma_read_data(
        &mut self,
        f: usize,
        op: u64,
        bytes: u64,
        request_done: bool,
        s: &mut Scheduler<Ev>,
    ) {
        let p = &mut self.p;
        p.totals.read_bytes_delivered += bytes;
        if request_done && p.ports[f].outstanding > 0 {
            p.ports[f].outstanding -= 1;
        }
        let done = match p.ports[f].reads.get_mut(op) {
            Some(r) => {
                r.remaining = r.remaining.saturating_sub(bytes);
                r.remaining == 0
            }
            None => false,
        };
        if request_done {
            p.dma_issue_reads(f, s);
        }
        if done {
            if let Some(r) = self.p.ports[f].reads.remove(op) {
                self.dma_done(f, r.done, s);
            }
        }
    }

    /// The last burst of write op `op` of `f` was posted.
    pub(super) fn dma_write_done(&mut self, f: usize, op: u64, s: &mut Scheduler<Ev>) {
        if let Some(done) = self.p.ports[f].writes.remove(op) {
            self.dma_done(f, done, s);
        }
    }

    /// Operation of port `f` done: its engine hears of it, or what an
    /// on-card bridge forwarded goes on.
    fn dma_done(&mut self, f: usize, done: DmaDone, s: &mut Scheduler<Ev>) {
        match done {
            DmaDone::Engine(ev) => self.engine_event(f, ev, s),
            // A forwarded write has left the secondary bus's bridge.
            DmaDone::Forwarded {
                bus,
                item: RopeItem::Write { bytes, .. },
            } => self.p.posted_write_left_bridge(bus, bytes, s),
            DmaDone::Forwarded { bus, item } => self.p.path_arrived(bus, item, s),
        }
    }
}
