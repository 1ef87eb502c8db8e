//! The event queue: a 4-ary min-heap of `(time, sequence)`-keyed events.
//!
//! A node's four children sit side by side, so a pop visits half the
//! levels of a binary heap; sifting moves small keys (time, sequence, slot)
//! by copy into a hole rather than by swaps, and the events stay in their
//! slots.
//! Keys are totally ordered by `(time, sequence)` and sequences are unique,
//! so events come out exactly in the order of any correct priority queue on
//! the same key: the choice of queue never changes a simulation's result.

/// What [`EventQueue::pop_before`] found.
pub(crate) enum Next<E> {
    /// The earliest event, at its time.
    Event(u64, E),
    /// The earliest event fires at or after the bound.
    Later,
    /// No event is waiting.
    Empty,
}

/// Children per node.
const ARITY: usize = 4;

/// A heap entry: an event's time, its sequence (ties in time fire in the
/// order they were scheduled) and the slot holding the event itself.
///
/// The events live apart, in `EventQueue::events`: sifting moves these 24
/// bytes, not the event, and a node's four children span a cache line and a
/// half.
#[derive(Debug, Clone, Copy)]
struct Key {
    time: u64,
    seq: u64,
    slot: u32,
}

impl Key {
    /// Whether `self` fires before `other`.
    #[inline(always)]
    fn before(&self, other: &Key) -> bool {
        self.time < other.time || (self.time == other.time && self.seq < other.seq)
    }
}

/// A priority queue of events by `(time, sequence)`, earliest first.
#[derive(Debug)]
pub(crate) struct EventQueue<E> {
    heap: Vec<Key>,
    /// The events, by slot; a slot is free once its event is popped.
    events: Vec<E>,
    /// Slots free for reuse.
    free: Vec<u32>,
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        EventQueue {
            heap: Vec::new(),
            events: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Events waiting.
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// The time of the earliest event, if any.
    #[inline]
    pub(crate) fn peek_time(&self) -> Option<u64> {
        self.heap.first().map(|e| e.time)
    }

    /// Queues `event` at `time` with sequence `seq` (unique, increasing).
    #[inline(always)]
    pub(crate) fn push(&mut self, time: u64, seq: u64, event: E) {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.events[slot as usize] = event;
                slot
            }
            None => {
                // More than 2^32 events waiting at once cannot fit in memory.
                let slot = u32::try_from(self.events.len()).expect("event slots exhausted");
                self.events.push(event);
                slot
            }
        };
        let key = Key { time, seq, slot };
        let mut i = self.heap.len();
        // Most events land at the leaf they are appended to: written once.
        if i == 0 || !key.before(&self.heap[(i - 1) / ARITY]) {
            self.heap.push(key);
            return;
        }
        // Otherwise the parent moves down into the new slot, opening a hole.
        let parent = (i - 1) / ARITY;
        self.heap.push(self.heap[parent]);
        i = parent;
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if key.before(&self.heap[parent]) {
                self.heap[i] = self.heap[parent];
                i = parent;
            } else {
                break;
            }
        }
        self.heap[i] = key;
    }

    /// Takes the earliest event if it fires before `until`.
    #[inline(always)]
    pub(crate) fn pop_before(&mut self, until: u64) -> Next<E> {
        match self.heap.first() {
            None => Next::Empty,
            Some(top) if top.time >= until => Next::Later,
            Some(_) => match self.pop() {
                Some((time, event)) => Next::Event(time, event),
                None => Next::Empty,
            },
        }
    }

    /// Takes the earliest event: its time and the event.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(u64, E)> {
        let last = self.heap.pop()?;
        let top = match self.heap.first() {
            None => last,
            Some(&top) => {
                self.sift_down_from_root(last);
                top
            }
        };
        self.free.push(top.slot);
        Some((top.time, self.events[top.slot as usize]))
    }

    /// Puts `key` at the root's place, moving it down past earlier children.
    #[inline]
    fn sift_down_from_root(&mut self, key: Key) {
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut best = first;
            for c in first + 1..end {
                if self.heap[c].before(&self.heap[best]) {
                    best = c;
                }
            }
            if self.heap[best].before(&key) {
                self.heap[i] = self.heap[best];
                i = best;
            } else {
                break;
            }
        }
        self.heap[i] = key;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    proptest! {
        /// Whatever the pushes and pops, events come out exactly as from
        /// the standard binary heap ordered by (time, sequence).
        #[test]
        fn pops_in_the_order_of_a_reference_heap(
            ops in prop::collection::vec((any::<bool>(), 0u64..50), 1..400)
        ) {
            let mut q = EventQueue::new();
            let mut reference = BinaryHeap::new();
            let mut seq = 0u64;
            for (push, time) in ops {
                if push || q.len() == 0 {
                    seq += 1;
                    q.push(time, seq, seq);
                    reference.push(Reverse((time, seq)));
                } else {
                    let got = q.pop();
                    let want = reference.pop().map(|Reverse((t, s))| (t, s));
                    prop_assert_eq!(got, want);
                }
                prop_assert_eq!(q.len(), reference.len());
            }
            while let Some(Reverse((t, s))) = reference.pop() {
                prop_assert_eq!(q.pop(), Some((t, s)));
            }
            prop_assert_eq!(q.pop(), None);
        }
    }
}
