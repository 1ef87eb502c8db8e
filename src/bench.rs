//! The engine benchmark: K DMA masters sharing one bus (the micro model of the
//! SimPy baseline). Each master thinks for an exponential time (mean 100 ns),
//! queues FIFO for the bus, holds it 30 ns + 512 bytes at 1066 MB/s, releases.

use std::collections::VecDeque;
use std::time::Instant;

use crate::engine::{run_until, Limits, Model, RngStream, Scheduler};
use crate::units::Picos;

const THINK_NS: f64 = 100.0;
const OVERHEAD_NS: f64 = 30.0;
const BYTES: u64 = 512;
const BW_BYTES_PER_NS: f64 = 1.066;

#[derive(Debug, Clone, Copy)]
enum BenchEv {
    Request(u32),
    Release,
}

struct BusContention {
    rng: RngStream,
    hold: Picos,
    busy: bool,
    waiting: VecDeque<u32>,
    current: Option<u32>,
    done: u64,
}

impl BusContention {
    #[inline(always)]
    fn think(&mut self, m: u32, s: &mut Scheduler<BenchEv>) {
        let t = Picos::from_ns(self.rng.exponential(THINK_NS));
        s.schedule_in(t, BenchEv::Request(m));
    }
    #[inline(always)]
    fn grant(&mut self, m: u32, s: &mut Scheduler<BenchEv>) {
        self.busy = true;
        self.current = Some(m);
        s.schedule_in(self.hold, BenchEv::Release);
    }
}

impl Model for BusContention {
    type Event = BenchEv;
    #[inline(always)]
    fn handle(&mut self, ev: BenchEv, s: &mut Scheduler<BenchEv>) {
        match ev {
            BenchEv::Request(m) => {
                if self.busy {
                    self.waiting.push_back(m);
                } else {
                    self.grant(m, s);
                }
            }
            BenchEv::Release => {
                self.done += 1;
                self.busy = false;
                if let Some(m) = self.current.take() {
                    self.think(m, s);
                }
                if let Some(next) = self.waiting.pop_front() {
                    self.grant(next, s);
                }
            }
        }
    }
}

/// What one benchmark run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchResult {
    /// Masters.
    pub masters: usize,
    /// Simulated seconds.
    pub sim_seconds: f64,
    /// Seed.
    pub seed: u64,
    /// Bus transactions completed.
    pub transactions: u64,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// Transactions per wall-clock second.
    pub tx_per_wall_s: f64,
    /// Bus data rate, MB/s.
    pub bus_mb_s: f64,
    /// Per master, MB/s.
    pub per_master_mb_s: f64,
}

/// Runs the bus-contention model.
pub fn bus_contention(masters: usize, sim_seconds: f64, seed: u64) -> BenchResult {
    let masters = masters.max(1);
    let hold = Picos::from_ns(OVERHEAD_NS + BYTES as f64 / BW_BYTES_PER_NS);
    let mut m = BusContention {
        rng: RngStream::new(seed, 0),
        hold,
        busy: false,
        waiting: VecDeque::new(),
        current: None,
        done: 0,
    };
    let mut s = Scheduler::new();
    for k in 0..masters {
        m.think(k as u32, &mut s);
    }
    let end = Picos::from_secs(sim_seconds);
    let t0 = Instant::now();
    run_until(
        &mut m,
        &mut s,
        end,
        Limits {
            max_time: end,
            max_events: u64::MAX,
        },
    );
    let wall = t0.elapsed().as_secs_f64().max(1e-9);
    let mb_s = m.done as f64 * BYTES as f64 / (sim_seconds * 1e6);
    BenchResult {
        masters,
        sim_seconds,
        seed,
        transactions: m.done,
        wall_s: wall,
        tx_per_wall_s: m.done as f64 / wall,
        bus_mb_s: mb_s,
        per_master_mb_s: mb_s / masters as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_master_matches_the_renewal_formula() {
        // One master: cycle = think + hold; MB/s = 512 / cycle.
        let r = bus_contention(1, 0.02, 3);
        let cycle_ns = THINK_NS + OVERHEAD_NS + 512.0 / BW_BYTES_PER_NS;
        let expect = 512.0 / cycle_ns * 1e3;
        assert!(
            (r.bus_mb_s - expect).abs() / expect < 0.01,
            "{} vs {expect}",
            r.bus_mb_s
        );
    }

    #[test]
    fn many_masters_saturate_the_bus_at_its_hold_rate() {
        let r = bus_contention(16, 0.01, 3);
        let cap = 512.0 / (OVERHEAD_NS + 512.0 / BW_BYTES_PER_NS) * 1e3;
        assert!(
            r.bus_mb_s <= cap * 1.0001 && r.bus_mb_s > cap * 0.99,
            "{} vs {cap}",
            r.bus_mb_s
        );
    }
}
