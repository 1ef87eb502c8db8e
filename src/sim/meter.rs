//! Busy-time meters for utilisation, resettable at the end of warm-up.

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

#[cfg(test)]
mod tests {
    use super::*;

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
