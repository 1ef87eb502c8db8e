//! The event queue: a 4-ary min-heap of `(time, sequence)`-keyed events.
//!
//! A node's four children sit side by side, so a pop visits half the
//! levels of a binary heap and compares children within a cache line or
//! two; sifting moves entries by copy into a hole rather than by swaps.
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

/// An event with its time and its sequence (ties in time fire in the order
/// they were scheduled).
#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    time: u64,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    /// Whether `self` fires before `other`.
    #[inline]
    fn before(&self, other: &Entry<E>) -> bool {
        self.time < other.time || (self.time == other.time && self.seq < other.seq)
    }
}

/// A priority queue of events by `(time, sequence)`, earliest first.
#[derive(Debug)]
pub(crate) struct EventQueue<E> {
    heap: Vec<Entry<E>>,
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        EventQueue { heap: Vec::new() }
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
        let entry = Entry { time, seq, event };
        let mut i = self.heap.len();
        // Most events land at the leaf they are appended to: written once.
        if i == 0 || !entry.before(&self.heap[(i - 1) / ARITY]) {
            self.heap.push(entry);
            return;
        }
        // Otherwise the parent moves down into the new slot, opening a hole.
        let parent = (i - 1) / ARITY;
        self.heap.push(self.heap[parent]);
        i = parent;
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if entry.before(&self.heap[parent]) {
                self.heap[i] = self.heap[parent];
                i = parent;
            } else {
                break;
            }
        }
        self.heap[i] = entry;
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
        Some((top.time, top.event))
    }

    /// Puts `entry` at the root's place, moving it down past earlier children.
    #[inline]
    fn sift_down_from_root(&mut self, entry: Entry<E>) {
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
            if self.heap[best].before(&entry) {
                self.heap[i] = self.heap[best];
                i = best;
            } else {
                break;
            }
        }
        self.heap[i] = entry;
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
