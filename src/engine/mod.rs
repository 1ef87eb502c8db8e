//! The discrete-event engine: a clock, an ordered event queue and hard bounds.
//!
//! **Architecture invariant:** this module knows nothing of buses, adapters or
//! any hardware. It orders opaque events by `(time, sequence)` so that ties
//! break the same way on every run, and it stops a run at a simulated-time or
//! event-count bound so that no model can hang the process.

mod queue;
mod rng;

pub use rng::RngStream;

use queue::{EventQueue, Next};

use crate::units::Picos;

/// The clock and the future-event list. Models schedule events through it.
pub struct Scheduler<E> {
    now: Picos,
    seq: u64,
    processed: u64,
    queue: EventQueue<E>,
}

impl<E: Copy> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> Scheduler<E> {
    /// An empty scheduler at time zero.
    pub fn new() -> Self {
        Scheduler {
            now: Picos(0),
            seq: 0,
            processed: 0,
            queue: EventQueue::new(),
        }
    }

    /// The current simulated time.
    pub fn now(&self) -> Picos {
        self.now
    }

    /// Number of events handled so far.
    pub fn events_processed(&self) -> u64 {
        self.processed
    }

    /// Number of events waiting in the queue.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Schedules `event` to fire `delay` after now.
    #[inline]
    pub fn schedule_in(&mut self, delay: Picos, event: E) {
        // Never in the past (the sum saturates), so no clamp to now.
        let time = self.now.0.saturating_add(delay.0);
        self.seq += 1;
        self.queue.push(time, self.seq, event);
    }

    /// Schedules `event` at absolute time `time` (clamped to now if in the past).
    #[inline]
    pub fn schedule_at(&mut self, time: Picos, event: E) {
        let time = if time < self.now { self.now } else { time };
        self.seq += 1;
        self.queue.push(time.0, self.seq, event);
    }
}

/// A model driven by the engine: it reacts to its own events.
pub trait Model {
    /// The model's event type.
    type Event: Copy;
    /// Handles one event at `sched.now()`, scheduling any consequences.
    fn handle(&mut self, event: Self::Event, sched: &mut Scheduler<Self::Event>);
}

/// Hard bounds on a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The run never advances past this simulated time.
    pub max_time: Picos,
    /// The run stops after this many events in total.
    pub max_events: u64,
}

/// Why a call to [`run_until`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The requested time was reached.
    ReachedTime,
    /// The queue ran dry before the requested time.
    Idle,
    /// The event-count bound was hit: the result is incomplete.
    EventLimit,
}

/// Runs `model` until simulated time `until` (or `limits.max_time`, whichever
/// is earlier), the queue empties, or the event bound is hit. Events at exactly
/// `until` are not processed; the clock is left at `until` on a normal stop.
pub fn run_until<M: Model>(
    model: &mut M,
    sched: &mut Scheduler<M::Event>,
    until: Picos,
    limits: Limits,
) -> Stop {
    let until = until.min(limits.max_time);
    loop {
        if sched.processed >= limits.max_events {
            // The bound counts only if an event would run before `until`.
            return match sched.queue.peek_time() {
                None => {
                    sched.now = until.max(sched.now);
                    Stop::Idle
                }
                Some(time) if time >= until.0 => {
                    sched.now = until;
                    Stop::ReachedTime
                }
                Some(_) => Stop::EventLimit,
            };
        }
        match sched.queue.pop_before(until.0) {
            Next::Event(time) => {
                sched.now = Picos(time);
                sched.processed += 1;
                let event = sched.queue.taken();
                model.handle(event, sched);
            }
            Next::Later => {
                sched.now = until;
                return Stop::ReachedTime;
            }
            Next::Empty => {
                sched.now = until.max(sched.now);
                return Stop::Idle;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Recorder {
        seen: Vec<(u64, u32)>,
        respawn: bool,
    }

    impl Model for Recorder {
        type Event = u32;
        fn handle(&mut self, ev: u32, sched: &mut Scheduler<u32>) {
            self.seen.push((sched.now().0, ev));
            if self.respawn {
                sched.schedule_in(Picos(10), ev + 1);
            }
        }
    }

    const BIG: Limits = Limits {
        max_time: Picos(u64::MAX),
        max_events: u64::MAX,
    };

    #[test]
    fn events_fire_in_time_then_insertion_order() {
        let mut m = Recorder {
            seen: vec![],
            respawn: false,
        };
        let mut s = Scheduler::new();
        s.schedule_at(Picos(5), 1);
        s.schedule_at(Picos(3), 2);
        s.schedule_at(Picos(5), 3);
        s.schedule_at(Picos(3), 4);
        assert_eq!(run_until(&mut m, &mut s, Picos(100), BIG), Stop::Idle);
        assert_eq!(m.seen, vec![(3, 2), (3, 4), (5, 1), (5, 3)]);
    }

    #[test]
    fn an_endless_model_stops_at_the_event_bound() {
        let mut m = Recorder {
            seen: vec![],
            respawn: true,
        };
        let mut s = Scheduler::new();
        s.schedule_at(Picos(0), 0);
        let lim = Limits {
            max_time: Picos(u64::MAX),
            max_events: 1000,
        };
        assert_eq!(
            run_until(&mut m, &mut s, Picos(u64::MAX), lim),
            Stop::EventLimit
        );
        assert_eq!(m.seen.len(), 1000);
    }

    #[test]
    fn run_until_stops_before_the_horizon_and_resumes() {
        let mut m = Recorder {
            seen: vec![],
            respawn: true,
        };
        let mut s = Scheduler::new();
        s.schedule_at(Picos(0), 0);
        assert_eq!(run_until(&mut m, &mut s, Picos(25), BIG), Stop::ReachedTime);
        assert_eq!(m.seen.len(), 3);
        assert_eq!(s.now(), Picos(25));
        run_until(&mut m, &mut s, Picos(45), BIG);
        assert_eq!(m.seen.len(), 5);
    }

    #[test]
    fn the_time_bound_caps_the_horizon() {
        let mut m = Recorder {
            seen: vec![],
            respawn: true,
        };
        let mut s = Scheduler::new();
        s.schedule_at(Picos(0), 0);
        let lim = Limits {
            max_time: Picos(100),
            max_events: u64::MAX,
        };
        assert_eq!(
            run_until(&mut m, &mut s, Picos(u64::MAX), lim),
            Stop::ReachedTime
        );
        assert_eq!(m.seen.last().map(|x| x.0), Some(90));
    }
}
