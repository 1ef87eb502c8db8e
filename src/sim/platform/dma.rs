//! The platform's side of DMA: a function's read or write becomes bus work
//! on its bus, and its completion goes back to its engine (or, for an
//! on-card bridge, on along the path).

use super::ctx::Engines;
use super::event::Ev;
use super::state::Platform;
use crate::engine::Scheduler;
use crate::model::Protocol;
use crate::sim::bus::BusItem;
use crate::sim::dma::{DmaDone, ReadOp};
use crate::sim::path::RopeItem;

impl<T: Copy> Platform<T> {
    /// Starts a posted DMA write of `bytes` by DMA port `f` (a function, or
    /// an on-card bridge after the functions).
    pub(crate) fn dma_write(
        &mut self,
        f: usize,
        bytes: u64,
        done: DmaDone<T>,
        s: &mut Scheduler<Ev<T>>,
    ) {
        let op = self.ports[f].new_op();
        self.ports[f].writes.insert(op, done);
        let pl = self.place[f];
        let item = BusItem::Write {
            op,
            left: bytes.max(1),
        };
        self.bus_enqueue(pl.bus, 2 * pl.local, item, s);
    }

    /// Starts a DMA read of `bytes` by DMA port `f`; `watch`: its engine
    /// hears the event at every delivery once `at` bytes have arrived,
    /// until the read is done.
    pub(crate) fn dma_read(
        &mut self,
        f: usize,
        bytes: u64,
        done: DmaDone<T>,
        watch: Option<(u64, T)>,
        s: &mut Scheduler<Ev<T>>,
    ) {
        let bytes = bytes.max(1);
        let op = self.ports[f].new_op();
        self.ports[f].reads.insert(
            op,
            ReadOp {
                remaining: bytes,
                done,
                watch: watch.map(|(at, ev)| (bytes.saturating_sub(at), ev)),
            },
        );
        let pl = self.place[f];
        match self.buses[pl.bus].cfg.protocol {
            Protocol::Pci => {
                let item = BusItem::PciRead { op, left: bytes };
                self.bus_enqueue(pl.bus, 2 * pl.local + 1, item, s);
            }
            Protocol::PciX | Protocol::Hsc => {
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
    pub(crate) fn dma_issue_reads(&mut self, f: usize, s: &mut Scheduler<Ev<T>>) {
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

    /// Read data for op `op` of `f` arrived at the function.
    pub(crate) fn dma_read_data(
        &mut self,
        f: usize,
        op: u64,
        bytes: u64,
        request_done: bool,
        e: &mut impl Engines<T>,
        s: &mut Scheduler<Ev<T>>,
    ) {
        self.totals.read_bytes_delivered += bytes;
        if request_done && self.ports[f].outstanding > 0 {
            self.ports[f].outstanding -= 1;
        }
        let (done, watched) = match self.ports[f].reads.get_mut(op) {
            Some(r) => {
                let watched = r.delivered(bytes).map(|ev| (ev, r.remaining));
                (r.remaining == 0, watched)
            }
            None => (false, None),
        };
        if request_done {
            self.dma_issue_reads(f, s);
        }
        if let Some((ev, left)) = watched {
            self.ports[f].watched_left = left;
            self.tell(e, f, ev, s);
        }
        if done {
            if let Some(r) = self.ports[f].reads.remove(op) {
                self.dma_done(f, r.done, e, s);
            }
        }
    }

    /// The last burst of write op `op` of `f` was posted.
    pub(crate) fn dma_write_done(
        &mut self,
        f: usize,
        op: u64,
        e: &mut impl Engines<T>,
        s: &mut Scheduler<Ev<T>>,
    ) {
        if let Some(done) = self.ports[f].writes.remove(op) {
            self.dma_done(f, done, e, s);
        }
    }

    /// Operation of port `f` done: its engine hears of it, or what an
    /// on-card bridge forwarded goes on.
    fn dma_done(
        &mut self,
        f: usize,
        done: DmaDone<T>,
        e: &mut impl Engines<T>,
        s: &mut Scheduler<Ev<T>>,
    ) {
        match done {
            DmaDone::Engine(ev) => self.tell(e, f, ev, s),
            // A forwarded write has left the secondary bus's bridge.
            DmaDone::Forwarded {
                bus,
                item: RopeItem::Write { bytes, .. },
            } => self.posted_write_left_bridge(bus, bytes, s),
            DmaDone::Forwarded { bus, item } => self.path_arrived(bus, item, s),
        }
    }
}
