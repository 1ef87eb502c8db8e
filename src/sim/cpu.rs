//! Host CPUs: one FIFO server per CPU running protocol-stack and driver work.
//!
//! Engines name the role a CPU plays for their function ([`CpuRole`]); the
//! placement ([`CpuPlacement`]) says which CPU that is. Today each adapter
//! function has three CPUs of the partition:
//! - its **interrupt CPU** runs the receive path: the driver, IP and TCP input
//!   of every frame received (data segment or ACK), and, for an HBA, the
//!   issue and completion of every I/O;
//! - its **send CPU** runs the sending application (netperf transmit): the
//!   socket copy, TCP output and driver transmit of every data segment;
//! - its **reader CPU** runs the receiving application (netperf receive),
//!   which sends the window-update ACKs as it drains the socket.
//!
//! So a NIC receiving and sending at once shares one CPU between received data
//! and received ACKs, while its two applications run elsewhere.
//!
//! A NIC's receive work ends with the driver's register reads (programmed
//! I/O, `pio_reads_per_interrupt` per received frame), one at a time: the CPU
//! stays busy, stalled, until each value is back (see `bus` and `path`).
//!
//! This placement is a structural choice made with the rp8400 figures in view,
//! so it counts as fitted (`not_refit` in `models/calibration.toml`). The
//! alternatives considered:
//! - everything on one CPU per function (the earlier model): GigE
//!   bidirectional then depends on how the cost splits between segments sent
//!   and packets received, which only Figure 4 pins; cross-validation with
//!   Figure 4 held out predicted it 35-37% low;
//! - ACKs sent on the interrupt CPU too: by arithmetic, if GigE receive alone
//!   is CPU-limited at 929 Mbit/s with 1.5 packets per segment, bidirectional
//!   is limited near 1390 Mbit/s, 11% above the paper (not simulated).

use std::collections::VecDeque;

use super::engines::EngineEv;
use super::meter::BusyMeter;
use super::platform::Platform;
use super::{Ev, System};
use crate::engine::Scheduler;
use crate::units::Picos;

/// The part a CPU plays for an adapter function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuRole {
    /// Takes the function's interrupts: its receive path and I/O completions.
    Interrupt,
    /// Runs the sending application (netperf transmit).
    Send,
    /// Runs the receiving application (netperf receive).
    Reader,
}

/// Which CPU plays each role for each function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuPlacement {
    /// Per function: its interrupt, send and reader CPUs.
    pub per_function: Vec<[usize; 3]>,
}

impl CpuPlacement {
    /// Three CPUs of its own per function, for `n` functions: interrupt CPUs
    /// 0..n, send CPUs n..2n, reader CPUs 2n..3n.
    pub fn private(n: usize) -> CpuPlacement {
        CpuPlacement {
            per_function: (0..n).map(|f| [f, n + f, 2 * n + f]).collect(),
        }
    }

    /// The CPU that plays `role` for function `f`.
    pub fn cpu(&self, role: CpuRole, f: usize) -> usize {
        self.per_function[f][role as usize]
    }

    /// CPUs the placement uses (one more than the highest index).
    pub fn cpus(&self) -> usize {
        self.per_function
            .iter()
            .flat_map(|c| c.iter())
            .max()
            .map_or(0, |m| m + 1)
    }
}

/// Work queued on a CPU for function `func`: when done, the CPU makes
/// `register_reads` reads of the card's registers, then `done` goes back to
/// the function's engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuJob {
    /// The function the work is for.
    pub func: usize,
    /// The engine's event when it is done.
    pub done: EngineEv,
    /// Register reads after the computing part (a driver's per interrupt).
    pub register_reads: u32,
}

/// One CPU.
#[derive(Debug, Default)]
pub struct Cpu {
    queue: VecDeque<(Picos, CpuJob)>,
    current: Option<CpuJob>,
    /// Register reads the current work still waits for (the CPU is stalled,
    /// and counted busy, while one is out).
    pio_left: u32,
    /// When the register read now out left the CPU.
    pio_since: Picos,
    /// Busy time.
    pub meter: BusyMeter,
}

impl Platform {
    /// Queues `job` costing `cost` on CPU `c`.
    pub(super) fn cpu_submit(&mut self, c: usize, cost: Picos, job: CpuJob, s: &mut Scheduler<Ev>) {
        self.cpus[c].queue.push_back((cost, job));
        self.cpu_start(c, s);
    }

    fn cpu_start(&mut self, c: usize, s: &mut Scheduler<Ev>) {
        let cpu = &mut self.cpus[c];
        if cpu.current.is_some() {
            return;
        }
        let Some((cost, job)) = cpu.queue.pop_front() else {
            return;
        };
        cpu.current = Some(job);
        cpu.meter.start(s.now());
        s.schedule_in(cost, Ev::CpuDone(c));
    }

    /// CPU `c` reads a register of the card of function `f`.
    fn cpu_read_register(&mut self, c: usize, f: usize, s: &mut Scheduler<Ev>) {
        let b = self.place[f].bus;
        self.cpus[c].pio_since = s.now();
        self.rope_push(b, super::path::RopeItem::PioReq { cpu: c }, s);
    }
}

impl System {
    /// CPU `c` finished computing its current work: it reads the device's
    /// registers the work calls for, one at a time, then finishes.
    pub(super) fn cpu_done(&mut self, c: usize, s: &mut Scheduler<Ev>) {
        let Some(job) = self.p.cpus[c].current else {
            return;
        };
        if job.register_reads > 0 {
            self.p.cpus[c].pio_left = job.register_reads;
            self.p.cpu_read_register(c, job.func, s);
        } else {
            self.cpu_finish(c, s);
        }
    }

    /// The register read CPU `c` was stalled on has returned.
    pub(super) fn cpu_pio_done(&mut self, c: usize, s: &mut Scheduler<Ev>) {
        let Some(job) = self.p.cpus[c].current else {
            return;
        };
        let took = s.now() - self.p.cpus[c].pio_since;
        let stats = &mut self.p.register_reads[job.func];
        stats.0 += 1;
        stats.1 += took;
        let cpu = &mut self.p.cpus[c];
        cpu.pio_left = cpu.pio_left.saturating_sub(1);
        if cpu.pio_left > 0 {
            self.p.cpu_read_register(c, job.func, s);
        } else {
            self.cpu_finish(c, s);
        }
    }

    /// CPU `c` is done with its current work and starts the next.
    fn cpu_finish(&mut self, c: usize, s: &mut Scheduler<Ev>) {
        let Some(job) = self.p.cpus[c].current.take() else {
            return;
        };
        self.p.cpus[c].pio_left = 0;
        self.p.cpus[c].meter.stop(s.now());
        self.p.cpu_start(c, s);
        self.engine_event(job.func, job.done, s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_placement_gives_each_function_three_cpus_of_its_own() {
        let p = CpuPlacement::private(2);
        assert_eq!(p.cpu(CpuRole::Interrupt, 0), 0);
        assert_eq!(p.cpu(CpuRole::Interrupt, 1), 1);
        assert_eq!(p.cpu(CpuRole::Send, 1), 3);
        assert_eq!(p.cpu(CpuRole::Reader, 0), 4);
        assert_eq!(p.cpus(), 6);
    }
}
