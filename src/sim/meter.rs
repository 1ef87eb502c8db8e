//! Busy-time meters for utilisation, resettable at the end of warm-up.
//!
//! A leaf of the hardware: uses the units only.

use crate::units::Picos;

/// Accumulates the time a resource is busy.
#[derive(Debug, Clone, Default)]
pub struct BusyMeter {
    busy: bool,
    since: Picos,
    acc: Picos,
}

impl BusyMeter {
    /// The resource becomes busy at `now`.
    pub fn start(&mut self, now: Picos) {
        if !self.busy {
            self.busy = true;
            self.since = now;
        }
    }
    /// The resource became busy at `at`, a time that may have passed while
    /// it was idle (never before its last stop or reset).
    pub fn start_back(&mut self, at: Picos) {
        if !self.busy {
            self.busy = true;
            self.since = at.max(self.since);
        }
    }
    /// The resource becomes idle at `now`.
    pub fn stop(&mut self, now: Picos) {
        if self.busy {
            self.busy = false;
            self.acc += now - self.since;
        }
    }
    /// The resource, busy now, was also busy for `more` and has been busy
    /// again since `since` (a stretch of past work counted at once; `since`
    /// never before its current start).
    pub fn skip(&mut self, more: Picos, since: Picos) {
        if self.busy {
            self.acc += more;
            self.since = since.max(self.since);
        }
    }
    /// Whether it is busy.
    pub fn is_busy(&self) -> bool {
        self.busy
    }
    /// Forgets the past (end of warm-up).
    pub fn reset(&mut self, now: Picos) {
        self.acc = Picos(0);
        self.since = now;
    }
    /// Busy time up to `now`.
    pub fn total(&self, now: Picos) -> Picos {
        if self.busy {
            self.acc + (now - self.since)
        } else {
            self.acc
        }
    }
}

/// Busy time of a FIFO server whose every service is booked ahead, when it
/// arrives: the intervals booked follow one another, and only the part of
/// each up to the time asked about counts.
#[derive(Debug, Clone, Default)]
pub struct BookedMeter {
    /// Busy time booked since the last reset (the part after it).
    acc: Picos,
    /// Booked intervals that may not be over yet, in order.
    ahead: std::collections::VecDeque<(Picos, Picos)>,
}

impl BookedMeter {
    /// Books the busy interval from `start` to `end`, neither before the
    /// end of the last one booked; `now` is the time of the booking.
    pub fn book(&mut self, now: Picos, start: Picos, end: Picos) {
        while self.ahead.front().is_some_and(|&(_, e)| e <= now) {
            self.ahead.pop_front();
        }
        self.ahead.push_back((start, end));
        self.acc += end - start;
    }
    /// Busy time booked after `now`.
    fn beyond(&self, now: Picos) -> Picos {
        self.ahead
            .iter()
            .map(|&(start, end)| Picos(end.0.saturating_sub(start.max(now).0)))
            .fold(Picos(0), |a, b| a + b)
    }
    /// Forgets the past (end of warm-up): what is booked after `now` counts
    /// in the new window.
    pub fn reset(&mut self, now: Picos) {
        self.acc = self.beyond(now);
    }
    /// Busy time up to `now`.
    pub fn total(&self, now: Picos) -> Picos {
        self.acc - self.beyond(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booked_ahead_gives_what_starting_and_stopping_gives() {
        let mut ahead = BookedMeter::default();
        let mut live = BusyMeter::default();
        // Booked at 0: busy 10-30 and 30-35; booked at 32: 40-60. The live
        // meter starts and stops at those times; both are read on the way.
        ahead.book(Picos(0), Picos(10), Picos(30));
        ahead.book(Picos(0), Picos(30), Picos(35));
        live.start(Picos(10));
        assert_eq!(ahead.total(Picos(20)), live.total(Picos(20)));
        live.reset(Picos(25));
        ahead.reset(Picos(25));
        assert_eq!(ahead.total(Picos(30)), live.total(Picos(30)));
        ahead.book(Picos(32), Picos(40), Picos(60));
        assert_eq!(ahead.total(Picos(33)), live.total(Picos(33)));
        live.stop(Picos(35));
        assert_eq!(ahead.total(Picos(38)), live.total(Picos(38)));
        live.start(Picos(40));
        assert_eq!(ahead.total(Picos(45)), live.total(Picos(45)));
        live.stop(Picos(60));
        assert_eq!(ahead.total(Picos(100)), live.total(Picos(100)));
        assert_eq!(ahead.total(Picos(100)), Picos(10 + 20));
    }

    #[test]
    fn meters_busy_time_across_a_reset() {
        let mut m = BusyMeter::default();
        m.start(Picos(10));
        m.stop(Picos(30));
        assert_eq!(m.total(Picos(50)), Picos(20));
        m.start(Picos(40));
        m.reset(Picos(45));
        assert_eq!(m.total(Picos(50)), Picos(5));
        m.stop(Picos(60));
        assert_eq!(m.total(Picos(100)), Picos(15));
    }

    #[test]
    fn a_skip_adds_past_work_and_restarts_the_busy_stretch() {
        let mut m = BusyMeter::default();
        m.start(Picos(10));
        m.skip(Picos(30), Picos(100));
        assert_eq!(m.total(Picos(110)), Picos(40));
        m.stop(Picos(120));
        assert_eq!(m.total(Picos(200)), Picos(50));
        // Idle, a skip changes nothing.
        m.skip(Picos(1000), Picos(300));
        assert_eq!(m.total(Picos(400)), Picos(50));
    }
}
