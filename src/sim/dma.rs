//! The DMA front end of adapter functions: a function's DMA read or write
//! becomes bus work (posted writes; PCI-X read requests of `max_read` bytes
//! with at most `max_outstanding_reads` in flight; PCI delayed reads), and
//! its bookkeeping (operation ids, what each operation tells the engine when
//! it is done).
//!
//! The component: [`DmaCfg`] (how a function's DMA engine uses the bus) and
//! each port's bookkeeping ([`DmaPort`]), whose completions carry the
//! engine's event as an opaque token `T` ([`DmaDone`]). The platform
//! (`platform::dma`) turns operations into bus work and completions into
//! engine events.
//!
//! A hardware file: it uses only other hardware (`path`'s packets); never
//! the platform, an engine, a workload, the assembly or the top-level
//! event.

use std::collections::VecDeque;

use super::path::RopeItem;

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

/// Whom a DMA operation tells when it is done (`T`: the engine's event
/// token).
#[derive(Debug, Clone, Copy)]
pub enum DmaDone<T> {
    /// The function's engine, with this event.
    Engine(T),
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
pub struct ReadOp<T> {
    /// Bytes not yet delivered.
    pub remaining: u64,
    /// Whom to tell when done.
    pub done: DmaDone<T>,
    /// A watermark: once no more than `.0` bytes remain (and some still
    /// do), the engine hears `.1` at every delivery (a done read tells
    /// `done` instead).
    pub watch: Option<(u64, T)>,
}

impl<T: Copy> ReadOp<T> {
    /// `bytes` more delivered: the watermark's event, if the read is past
    /// it and not done.
    pub fn delivered(&mut self, bytes: u64) -> Option<T> {
        self.remaining = self.remaining.saturating_sub(bytes);
        match self.watch {
            Some((left, ev)) if self.remaining <= left && self.remaining > 0 => Some(ev),
            _ => None,
        }
    }
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
#[derive(Debug)]
pub struct DmaPort<T> {
    next_op: u64,
    /// Reads in progress.
    pub reads: InFlight<ReadOp<T>>,
    /// Writes in progress.
    pub writes: InFlight<DmaDone<T>>,
    /// PCI-X read requests not yet issued: (op, bytes).
    pub unissued: VecDeque<(u64, u64)>,
    /// PCI-X read requests issued and not yet completed.
    pub outstanding: u32,
    /// Bytes still to arrive of the read whose watermark event the engine
    /// is hearing.
    pub watched_left: u64,
}

impl<T> Default for DmaPort<T> {
    fn default() -> Self {
        DmaPort {
            next_op: 0,
            reads: InFlight::default(),
            writes: InFlight::default(),
            unissued: VecDeque::new(),
            outstanding: 0,
            watched_left: 0,
        }
    }
}

impl<T> DmaPort<T> {
    /// A fresh operation id.
    pub fn new_op(&mut self) -> u64 {
        self.next_op += 1;
        self.next_op
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watermark_tells_every_delivery_past_it_until_the_read_is_done() {
        let mut r = ReadOp {
            remaining: 1000,
            done: DmaDone::Engine(0u8),
            watch: Some((1000 - 128, 7u8)),
        };
        assert_eq!(r.delivered(100), None, "100 of 1000 bytes: below 128");
        assert_eq!(r.delivered(100), Some(7), "200 bytes: past the watermark");
        assert_eq!(r.delivered(500), Some(7), "700 bytes: still past it");
        assert_eq!(r.delivered(300), None, "done: the read's own event tells");
        assert_eq!(r.remaining, 0);
    }
}
