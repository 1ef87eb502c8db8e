//! Memory's bandwidth as a shared node: every DMA read's data and every
//! posted write that reaches memory occupy it for their bytes at the
//! partition's memory bandwidth (the cells' memories are interleaved by
//! line, so DMA sees the sum over the partition's cells), one after the
//! other. A read's data is ready when both its latency ([`memory_time`])
//! and its turn at the memory have passed; a write only occupies it. The
//! CPUs' own memory traffic (copies, cache misses) is not counted: their
//! cost is time in the CPU model, so the utilisation reported is DMA's.
//! A server without `memory_bandwidth` has no such node: DMA sees latency
//! only and no memory utilisation is reported.
//!
//! A posted write may be booked before it arrives (the I/O controller's
//! link knows when it will be through, see `path`): it waits among the
//! pending writes, in order of arrival, and takes its turn at the memory
//! once the simulation reaches its arrival, before anything that arrives
//! later. So first come, first served holds in order of arrival whatever
//! order the bookings are made in.
//!
//! The component: [`MemoryCfg`], a read's latency ([`memory_time`]) and the
//! bandwidth node ([`MemoryNode`]), which the platform asks when a read is
//! served and books writes on.
//!
//! A hardware file: it uses the engine's random stream and the units only.

use std::collections::VecDeque;

use crate::engine::RngStream;
use crate::units::{BytesPerSec, MoveRate, Picos};

/// Memory of the partition, as DMA sees it.
#[derive(Debug, Clone)]
pub struct MemoryCfg {
    /// Latency of a line from the local cell.
    pub local: Picos,
    /// Latency of a line from a remote cell.
    pub remote: Picos,
    /// Probability a line is remote: (cells - 1) / cells with interleaving.
    pub p_remote: f64,
    /// Interleave unit.
    pub line: u64,
    /// Line fetches in flight per DMA read.
    pub lines_in_flight: u64,
    /// The partition's memory bandwidth (each cell's times its cells), if
    /// modelled.
    pub bandwidth: Option<BytesPerSec>,
}

/// Memory time of a read of `bytes`.
pub fn memory_time(m: &MemoryCfg, bytes: u64, rng: &mut RngStream) -> Picos {
    let lines = bytes.div_ceil(m.line).max(1);
    let mut t = Picos(0);
    let mut left = lines;
    while left > 0 {
        let g = left.min(m.lines_in_flight);
        left -= g;
        let mut worst = m.local;
        if m.p_remote > 0.0 {
            for _ in 0..g {
                if rng.chance(m.p_remote) {
                    worst = m.remote;
                    break;
                }
            }
        }
        t += worst;
    }
    t
}

/// The memory's bandwidth, served first come, first served.
#[derive(Debug, Clone)]
pub struct MemoryNode {
    rate: Option<MoveRate>,
    /// When the memory has served everything booked so far.
    free_at: Picos,
    /// Service booked since the last reset.
    busy: Picos,
    /// Writes booked ahead: (arrival, bytes), in order of arrival.
    pending: VecDeque<(Picos, u64)>,
}

impl MemoryNode {
    /// A node of `rate` (none: not modelled).
    pub fn new(rate: Option<BytesPerSec>) -> MemoryNode {
        MemoryNode {
            rate: rate.map(MoveRate::new),
            free_at: Picos(0),
            busy: Picos(0),
            pending: VecDeque::new(),
        }
    }

    /// Books `bytes` arriving at `now`: when they are through (`now` when
    /// bandwidth is not modelled). The writes booked ahead that arrive by
    /// `now` take their turns first.
    pub fn serve(&mut self, now: Picos, bytes: u64) -> Picos {
        if self.rate.is_none() {
            return now;
        }
        self.settle(now);
        self.take_turn(now, bytes)
    }

    /// Books a posted write of `bytes` that arrives at `at`, now or later:
    /// it takes its turn when the simulation reaches `at` (see the module
    /// doc).
    pub fn book_write(&mut self, at: Picos, bytes: u64) {
        if self.rate.is_none() {
            return;
        }
        // In order of arrival; a booking out of order (from another path)
        // goes before the later ones.
        if self.pending.back().is_none_or(|&(t, _)| t <= at) {
            self.pending.push_back((at, bytes));
        } else {
            let i = self.pending.partition_point(|&(t, _)| t <= at);
            self.pending.insert(i, (at, bytes));
        }
    }

    /// Gives their turns to the writes booked ahead that arrive by `now`.
    pub fn settle(&mut self, now: Picos) {
        while let Some(&(at, bytes)) = self.pending.front() {
            if at > now {
                break;
            }
            self.pending.pop_front();
            self.take_turn(at, bytes);
        }
    }

    fn take_turn(&mut self, at: Picos, bytes: u64) -> Picos {
        let Some(rate) = self.rate else {
            return at;
        };
        let t = rate.time(bytes);
        self.free_at = self.free_at.max(at) + t;
        self.busy += t;
        self.free_at
    }

    /// Gives their turns to the writes booked ahead that arrive before
    /// `now`: those an event would have brought by the time the simulation
    /// stops at `now` (it stops before the events of `now`).
    pub fn settle_before(&mut self, now: Picos) {
        self.settle(Picos(now.0.saturating_sub(1)));
    }

    /// Starts a new measurement at `now`: what is still booked beyond it
    /// counts in the new window (what arrives at `now` too, as the events
    /// of `now` come after the reset).
    pub fn reset(&mut self, now: Picos) {
        self.settle_before(now);
        self.busy = Picos(self.free_at.0.saturating_sub(now.0));
    }

    /// Fraction of `window` busy (service booked in it, so at most one
    /// queue's worth beyond its end); `None` when not modelled. Call
    /// [`MemoryNode::settle_before`] the window's end first.
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
    fn a_write_booked_ahead_takes_its_turn_in_order_of_arrival() {
        // 1000 MB/s: 1000 bytes take 1 us.
        let us = |v: u64| Picos(v * 1_000_000);
        let mut ahead = MemoryNode::new(Some(BytesPerSec(1e9)));
        let mut on_time = ahead.clone();
        // Booked ahead out of order: writes arriving at 5 us and 2 us, then
        // one at 3 us; a read arrives at 4 us.
        ahead.book_write(us(5), 1000);
        ahead.book_write(us(2), 1000);
        ahead.book_write(us(3), 1000);
        on_time.serve(us(2), 1000);
        on_time.serve(us(3), 1000);
        // The writes of 2 and 3 us are served before the read of 4 us, the
        // one of 5 us after it.
        assert_eq!(ahead.serve(us(4), 1000), on_time.serve(us(4), 1000));
        assert_eq!(ahead.serve(us(4), 1000), Picos(6_000_000));
        on_time.serve(us(4), 1000);
        on_time.serve(us(5), 1000);
        ahead.settle(us(5));
        assert_eq!(ahead.free_at, on_time.free_at);
        assert_eq!(ahead.util(us(10)), on_time.util(us(10)));
        // Not yet arrived at a reset: counted in the new window once it is.
        ahead.book_write(us(20), 500);
        ahead.book_write(us(10), 500);
        ahead.reset(us(10));
        ahead.settle(us(30));
        // Both count in the new window: the one arriving at the reset too.
        assert_eq!(ahead.util(us(20)), Some(1.0 / 20.0));
    }

    #[test]
    fn without_a_rate_nothing_waits_and_nothing_is_reported() {
        let mut m = MemoryNode::new(None);
        assert_eq!(m.serve(Picos(5), 1 << 20), Picos(5));
        assert_eq!(m.util(Picos(100)), None);
    }

    fn mem(p_remote: f64, in_flight: u64) -> MemoryCfg {
        MemoryCfg {
            local: Picos(200_000),
            remote: Picos(500_000),
            p_remote,
            line: 64,
            lines_in_flight: in_flight,
            bandwidth: None,
        }
    }

    #[test]
    fn one_cell_reads_are_all_local() {
        let mut r = RngStream::new(1, 1);
        assert_eq!(memory_time(&mem(0.0, 8), 512, &mut r), Picos(200_000));
        assert_eq!(memory_time(&mem(0.0, 4), 512, &mut r), Picos(400_000));
    }

    #[test]
    fn a_group_waits_for_its_slowest_line() {
        let mut r = RngStream::new(1, 1);
        let n = 10_000;
        let mean: f64 = (0..n)
            .map(|_| memory_time(&mem(0.5, 8), 512, &mut r).0 as f64)
            .sum::<f64>()
            / n as f64;
        // P(all 8 local) = 1/256.
        let expect = 500_000.0 - 300_000.0 / 256.0;
        assert!((mean - expect).abs() < 2_000.0, "{mean}");
    }
}
