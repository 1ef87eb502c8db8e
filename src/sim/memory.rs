//! Memory's bandwidth as a shared node: every DMA read's data and every
//! posted write that reaches memory occupy it for their bytes at the
//! partition's memory bandwidth (the cells' memories are interleaved by
//! line, so DMA sees the sum over the partition's cells), one after the
//! other. A read's data is ready when both its latency (`path::memory_time`)
//! and its turn at the memory have passed; a write only occupies it. The
//! CPUs' own memory traffic (copies, cache misses) is not counted: their
//! cost is time in the CPU model, so the utilisation reported is DMA's.
//! A server without `memory_bandwidth` has no such node: DMA sees latency
//! only and no memory utilisation is reported.

use crate::units::{BytesPerSec, MoveRate, Picos};

/// The memory's bandwidth, served first come, first served.
#[derive(Debug, Clone)]
pub struct MemoryNode {
    rate: Option<MoveRate>,
    /// When the memory has served everything booked so far.
    free_at: Picos,
    /// Service booked since the last reset.
    busy: Picos,
}

impl MemoryNode {
    /// A node of `rate` (none: not modelled).
    pub fn new(rate: Option<BytesPerSec>) -> MemoryNode {
        MemoryNode {
            rate: rate.map(MoveRate::new),
            free_at: Picos(0),
            busy: Picos(0),
        }
    }

    /// Books `bytes` arriving at `now`: when they are through (`now` when
    /// bandwidth is not modelled).
    pub fn serve(&mut self, now: Picos, bytes: u64) -> Picos {
        let Some(rate) = self.rate else {
            return now;
        };
        let t = rate.time(bytes);
        self.free_at = self.free_at.max(now) + t;
        self.busy += t;
        self.free_at
    }

    /// Starts a new measurement at `now`: what is still booked beyond it
    /// counts in the new window.
    pub fn reset(&mut self, now: Picos) {
        self.busy = Picos(self.free_at.0.saturating_sub(now.0));
    }

    /// Fraction of `window` busy (service booked in it, so at most one
    /// queue's worth beyond its end); `None` when not modelled.
    pub fn util(&self, window: Picos) -> Option<f64> {
        self.rate
            .map(|_| self.busy.0 as f64 / (window.0.max(1)) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_queue_at_the_rate_and_the_idle_time_is_not_counted() {
        // 1000 MB/s: 1000 bytes take 1 us.
        let mut m = MemoryNode::new(Some(BytesPerSec(1e9)));
        let us = |v: u64| Picos(v * 1_000_000);
        assert_eq!(m.serve(us(0), 1000), us(1));
        // A second arrival at once waits its turn.
        assert_eq!(m.serve(us(0), 1000), us(2));
        // After an idle gap, served at once.
        assert_eq!(m.serve(us(10), 500), Picos(10_500_000));
        assert_eq!(m.util(us(20)), Some(2.5 / 20.0));
        m.reset(us(10));
        assert_eq!(m.util(us(10)), Some(0.05));
    }

    #[test]
    fn without_a_rate_nothing_waits_and_nothing_is_reported() {
        let mut m = MemoryNode::new(None);
        assert_eq!(m.serve(Picos(5), 1 << 20), Picos(5));
        assert_eq!(m.util(Picos(100)), None);
    }
}
