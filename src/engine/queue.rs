//! The event queue: a 4-ary min-heap of `(time, sequence)`-keyed events.
//!
//! A node's four children sit side by side, so a pop visits half the
//! levels of a binary heap; sifting moves entries by copy into a hole
//! rather than by swaps. A small event (at most [`INLINE_BYTES`]) sits in
//! its heap entry; a larger one stays in a slot beside the heap, and the
//! heap sifts only its key (time, sequence, slot), 24 bytes. Measured
//! (CHANGELOG.md, benchmark history): the slots take 10 to 16% off the CPU time
//! of `validate` (48-byte events), and would add 11% to the bus-contention
//! benchmark's (8-byte events). The earliest event waits out of the heap
//! while it fires before all there: about half of `validate`'s events are
//! scheduled ahead of everything waiting and popped next (a transaction's
//! end, most often) and never enter the heap. The event taken is handed
//! out from where the queue holds it ([`EventQueue::taken`]), copied whole:
//! never inside an `Option` or an enum whose copy would split it.
//!
//! Keys are totally ordered by `(time, sequence)` and sequences are unique,
//! so events come out exactly in the order of any correct priority queue on
//! the same key: the choice of queue never changes a simulation's result.

/// What [`EventQueue::pop_before`] found.
pub(crate) enum Next {
    /// The earliest event was taken (see [`EventQueue::taken`]): its time.
    Event(u64),
    /// The earliest event fires at or after the bound.
    Later,
    /// No event is waiting.
    Empty,
}

/// Children per node.
const ARITY: usize = 4;

/// Events of at most this many bytes sit in the heap's entries.
const INLINE_BYTES: usize = 16;

/// When an event fires: its time, then its sequence (ties in time fire in
/// the order they were scheduled).
#[derive(Debug, Clone, Copy)]
struct Stamp {
    time: u64,
    seq: u64,
}

impl Stamp {
    /// Whether `self` fires before `other`.
    #[inline(always)]
    fn before(&self, other: &Stamp) -> bool {
        self.time < other.time || (self.time == other.time && self.seq < other.seq)
    }
}

/// A heap entry, ordered by its stamp.
trait Node: Copy {
    fn stamp(&self) -> &Stamp;
    /// Whether `self` fires before `other`.
    #[inline(always)]
    fn before(&self, other: &Self) -> bool {
        self.stamp().before(other.stamp())
    }
}

/// A small event in its heap entry.
#[derive(Debug, Clone, Copy)]
struct Inline<E> {
    stamp: Stamp,
    event: E,
}

impl<E: Copy> Node for Inline<E> {
    #[inline(always)]
    fn stamp(&self) -> &Stamp {
        &self.stamp
    }
}

/// The stamp of a large event held in slot `slot`.
#[derive(Debug, Clone, Copy)]
struct Keyed {
    stamp: Stamp,
    slot: u32,
}

impl Node for Keyed {
    #[inline(always)]
    fn stamp(&self) -> &Stamp {
        &self.stamp
    }
}

/// A priority queue of events by `(time, sequence)`, earliest first.
#[derive(Debug)]
pub(crate) struct EventQueue<E> {
    /// The earliest event, held out of the heap while it fires before every
    /// event there: an event scheduled to fire before everything waiting
    /// (a bus transaction's end, most often) and popped next never enters
    /// the heap.
    front: Option<Stamp>,
    /// The front's event when there is a front, else the event last
    /// taken (empty until the first push). Apart from its stamp, and
    /// handed out by [`EventQueue::taken`] rather than in an `Option` or
    /// an enum, so that it is copied whole and aligned, as it was stored:
    /// such an enum takes the event's tag for its niche, and the copy of
    /// the rest, in overlapping pieces, loads bytes of two stores at once,
    /// which the processor cannot forward from its store buffer (measured:
    /// a quarter of the event loop's time).
    front_event: Vec<E>,
    /// The heap, for small events.
    inline: Vec<Inline<E>>,
    /// The heap, for large events.
    keyed: Vec<Keyed>,
    /// Large events, by slot; a slot is free once its event is popped.
    events: Vec<E>,
    /// Slots free for reuse.
    free: Vec<u32>,
}

impl<E: Copy> EventQueue<E> {
    /// Whether the events sit in the heap's entries (decided at compile time).
    const INLINE: bool = std::mem::size_of::<E>() <= INLINE_BYTES;

    /// An empty queue.
    pub(crate) fn new() -> Self {
        EventQueue {
            front: None,
            front_event: Vec::new(),
            inline: Vec::new(),
            keyed: Vec::new(),
            events: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Events waiting.
    pub(crate) fn len(&self) -> usize {
        usize::from(self.front.is_some())
            + if Self::INLINE {
                self.inline.len()
            } else {
                self.keyed.len()
            }
    }

    /// The stamp of the heap's earliest event, if any.
    #[inline(always)]
    fn heap_first(&self) -> Option<&Stamp> {
        if Self::INLINE {
            self.inline.first().map(|e| &e.stamp)
        } else {
            self.keyed.first().map(|e| &e.stamp)
        }
    }

    /// The time of the earliest event, if any.
    #[inline]
    pub(crate) fn peek_time(&self) -> Option<u64> {
        match &self.front {
            Some(stamp) => Some(stamp.time),
            None => self.heap_first().map(|s| s.time),
        }
    }

    /// Queues `event` at `time` with sequence `seq` (unique, increasing).
    #[inline(always)]
    pub(crate) fn push(&mut self, time: u64, seq: u64, event: E) {
        let stamp = Stamp { time, seq };
        // The new event goes in front if it fires first (the one it
        // displaces, earlier than the whole heap, goes into the heap).
        let first = match &self.front {
            Some(f) => stamp.before(f),
            None => self.heap_first().is_none_or(|h| stamp.before(h)),
        };
        if first {
            match self.front.replace(stamp) {
                Some(f) => {
                    let e = std::mem::replace(&mut self.front_event[0], event);
                    self.heap_push(f, e);
                }
                None if self.front_event.is_empty() => self.front_event.push(event),
                None => self.front_event[0] = event,
            }
        } else {
            self.heap_push(stamp, event);
        }
    }

    /// Puts `event`, stamped `stamp`, into the heap.
    #[inline(always)]
    fn heap_push(&mut self, stamp: Stamp, event: E) {
        if Self::INLINE {
            return sift_up(&mut self.inline, Inline { stamp, event });
        }
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
        sift_up(&mut self.keyed, Keyed { stamp, slot });
    }

    /// Takes the earliest event if it fires before `until`: its time
    /// ([`EventQueue::taken`] is the event).
    #[inline(always)]
    pub(crate) fn pop_before(&mut self, until: u64) -> Next {
        // The front first: about half of the events leave from there.
        if let Some(stamp) = &self.front {
            if stamp.time >= until {
                return Next::Later;
            }
            let time = stamp.time;
            self.front = None;
            return Next::Event(time);
        }
        match self.heap_first() {
            None => Next::Empty,
            Some(stamp) if stamp.time >= until => Next::Later,
            Some(_) => match self.pop_heap() {
                Some(time) => Next::Event(time),
                None => Next::Empty,
            },
        }
    }

    /// The event last taken (by [`EventQueue::pop_before`]).
    #[inline(always)]
    pub(crate) fn taken(&self) -> E {
        self.front_event[0]
    }

    /// Takes the heap's earliest event into the front's place (there is no
    /// front): its time.
    #[inline]
    fn pop_heap(&mut self) -> Option<u64> {
        if Self::INLINE {
            let top = pop_root(&mut self.inline)?;
            self.front_event[0] = top.event;
            return Some(top.stamp.time);
        }
        let top = pop_root(&mut self.keyed)?;
        self.free.push(top.slot);
        self.front_event[0] = self.events[top.slot as usize];
        Some(top.stamp.time)
    }

    /// Takes the earliest event: its time and the event.
    #[cfg(test)]
    fn pop(&mut self) -> Option<(u64, E)> {
        let time = match self.front.take() {
            Some(stamp) => stamp.time,
            None => self.pop_heap()?,
        };
        Some((time, self.taken()))
    }
}

/// Adds `node` to `heap`.
#[inline(always)]
fn sift_up<N: Node>(heap: &mut Vec<N>, node: N) {
    let mut i = heap.len();
    // Most events land at the leaf they are appended to: written once.
    if i == 0 || !node.before(&heap[(i - 1) / ARITY]) {
        heap.push(node);
        return;
    }
    // Otherwise the parent moves down into the new slot, opening a hole.
    let parent = (i - 1) / ARITY;
    heap.push(heap[parent]);
    i = parent;
    while i > 0 {
        let parent = (i - 1) / ARITY;
        if node.before(&heap[parent]) {
            heap[i] = heap[parent];
            i = parent;
        } else {
            break;
        }
    }
    heap[i] = node;
}

/// Takes the earliest node of `heap`.
#[inline]
fn pop_root<N: Node>(heap: &mut Vec<N>) -> Option<N> {
    let last = heap.pop()?;
    Some(match heap.first() {
        None => last,
        Some(&top) => {
            sift_down_from_root(heap, last);
            top
        }
    })
}

/// Puts `node` at the root's place, moving it down past earlier children.
#[inline]
fn sift_down_from_root<N: Node>(heap: &mut [N], node: N) {
    let n = heap.len();
    let mut i = 0;
    loop {
        let first = ARITY * i + 1;
        if first >= n {
            break;
        }
        let end = (first + ARITY).min(n);
        let mut best = first;
        for c in first + 1..end {
            if heap[c].before(&heap[best]) {
                best = c;
            }
        }
        if heap[best].before(&node) {
            heap[i] = heap[best];
            i = best;
        } else {
            break;
        }
    }
    heap[i] = node;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Replays `ops` (push at a time, or pop) on a queue of events made by
    /// `event` from their sequence, checking every pop, and the earliest
    /// time after every step, against the standard binary heap ordered by
    /// (time, sequence).
    fn matches_reference<E: Copy + std::fmt::Debug + PartialEq>(
        ops: &[(bool, u64)],
        event: impl Fn(u64) -> E,
    ) -> Result<(), TestCaseError> {
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let mut seq = 0u64;
        for &(push, time) in ops {
            if push || q.len() == 0 {
                seq += 1;
                q.push(time, seq, event(seq));
                reference.push(Reverse((time, seq)));
            } else {
                let got = q.pop();
                let want = reference.pop().map(|Reverse((t, s))| (t, event(s)));
                prop_assert_eq!(got, want);
            }
            prop_assert_eq!(q.len(), reference.len());
            prop_assert_eq!(q.peek_time(), reference.peek().map(|Reverse((t, _))| *t));
        }
        while let Some(Reverse((t, s))) = reference.pop() {
            prop_assert_eq!(q.pop(), Some((t, event(s))));
        }
        prop_assert_eq!(q.pop(), None);
        Ok(())
    }

    // Small events sit in the heap's entries, large ones in slots (checked
    // when the tests compile), so the proptest below covers both layouts.
    const _: () = assert!(EventQueue::<u64>::INLINE && !EventQueue::<[u64; 6]>::INLINE);

    proptest! {
        /// Whatever the pushes and pops, events come out exactly as from
        /// the standard binary heap ordered by (time, sequence), small
        /// events in the heap's entries and large ones in reused slots.
        #[test]
        fn pops_in_the_order_of_a_reference_heap(
            ops in prop::collection::vec((any::<bool>(), 0u64..50), 1..400)
        ) {
            matches_reference(&ops, |seq| seq)?;
            matches_reference(&ops, |seq| [seq, !seq, seq / 3, 7, seq * 5, 1])?;
        }
    }
}
