//! Host CPUs: one FIFO server per CPU running protocol-stack and driver work.
//!
//! Each adapter function has three CPUs of the partition:
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

use super::meter::BusyMeter;
use super::{Ev, System};
use crate::engine::Scheduler;
use crate::units::Picos;

/// The interrupt CPU of function `f`.
pub fn interrupt_cpu(f: usize) -> usize {
    f
}

/// The send CPU of function `f` of `n`.
pub fn send_cpu(n: usize, f: usize) -> usize {
    n + f
}

/// The reader CPU of function `f` of `n`.
pub fn reader_cpu(n: usize, f: usize) -> usize {
    2 * n + f
}

/// Work a CPU finishes, and what follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuWork {
    /// Build and queue one TCP segment of function `f`.
    SendSegment(usize),
    /// Build and queue an ACK up to byte `ack` of function `f`.
    SendAck(usize, u64),
    /// Receive a segment ending at byte `end` of function `f`.
    ReceiveSegment(usize, u64),
    /// Process an ACK up to byte `ack` of function `f`.
    ReceiveAck(usize, u64),
    /// Issue disk I/O `io` of function `f`.
    IssueIo(usize, usize),
    /// Complete disk I/O `io` of function `f`.
    CompleteIo(usize, usize),
}

impl CpuWork {
    /// The function whose received frame this work handles, if it is one.
    fn received_by(self) -> Option<usize> {
        match self {
            CpuWork::ReceiveSegment(f, _) | CpuWork::ReceiveAck(f, _) => Some(f),
            _ => None,
        }
    }
}

/// One CPU.
#[derive(Debug, Default)]
pub struct Cpu {
    queue: VecDeque<(Picos, CpuWork)>,
    current: Option<CpuWork>,
    /// Register reads the current work still waits for (the CPU is stalled,
    /// and counted busy, while one is out).
    pio_left: u32,
    /// When the register read now out left the CPU.
    pio_since: Picos,
    /// Busy time.
    pub meter: BusyMeter,
}

impl System {
    /// Queues `work` costing `cost` on CPU `c`.
    pub(super) fn cpu_submit(
        &mut self,
        c: usize,
        cost: Picos,
        work: CpuWork,
        s: &mut Scheduler<Ev>,
    ) {
        self.cpus[c].queue.push_back((cost, work));
        self.cpu_start(c, s);
    }

    fn cpu_start(&mut self, c: usize, s: &mut Scheduler<Ev>) {
        let cpu = &mut self.cpus[c];
        if cpu.current.is_some() {
            return;
        }
        let Some((cost, work)) = cpu.queue.pop_front() else {
            return;
        };
        cpu.current = Some(work);
        cpu.meter.start(s.now());
        s.schedule_in(cost, Ev::CpuDone(c));
    }

    /// CPU `c` finished computing its current work: it reads the device's
    /// registers the work calls for, one at a time, then finishes.
    pub(super) fn cpu_done(&mut self, c: usize, s: &mut Scheduler<Ev>) {
        let Some(work) = self.cpus[c].current else {
            return;
        };
        let reads = self.register_reads(work);
        if reads > 0 {
            self.cpus[c].pio_left = reads;
            self.cpu_read_register(c, work, s);
        } else {
            self.cpu_finish(c, s);
        }
    }

    /// The register read CPU `c` was stalled on has returned.
    pub(super) fn cpu_pio_done(&mut self, c: usize, s: &mut Scheduler<Ev>) {
        let Some(work) = self.cpus[c].current else {
            return;
        };
        if let Some(f) = work.received_by() {
            let took = s.now() - self.cpus[c].pio_since;
            let stats = &mut self.register_reads[f];
            stats.0 += 1;
            stats.1 += took;
        }
        let cpu = &mut self.cpus[c];
        cpu.pio_left = cpu.pio_left.saturating_sub(1);
        if cpu.pio_left > 0 {
            self.cpu_read_register(c, work, s);
        } else {
            self.cpu_finish(c, s);
        }
    }

    /// Register reads that `work` makes: a NIC driver's per interrupt, one
    /// interrupt per received frame.
    fn register_reads(&self, work: CpuWork) -> u32 {
        match work.received_by() {
            Some(f) => match &self.funcs[f] {
                super::Func::Nic(n) => n.cfg.pio_reads,
                super::Func::Hba(_) => 0,
            },
            None => 0,
        }
    }

    /// CPU `c` reads a register of the function `work` belongs to.
    fn cpu_read_register(&mut self, c: usize, work: CpuWork, s: &mut Scheduler<Ev>) {
        let Some(f) = work.received_by() else {
            return self.cpu_finish(c, s);
        };
        let b = self.fn_place[f].0;
        self.cpus[c].pio_since = s.now();
        self.rope_push(b, super::path::RopeItem::PioReq { cpu: c }, s);
    }

    /// CPU `c` is done with its current work and starts the next.
    fn cpu_finish(&mut self, c: usize, s: &mut Scheduler<Ev>) {
        let Some(work) = self.cpus[c].current.take() else {
            return;
        };
        self.cpus[c].pio_left = 0;
        self.cpus[c].meter.stop(s.now());
        self.cpu_start(c, s);
        match work {
            CpuWork::SendSegment(f) => self.nic_segment_built(f, s),
            CpuWork::SendAck(f, ack) => self.nic_ack_built(f, ack, s),
            CpuWork::ReceiveSegment(f, end) => self.nic_segment_received(f, end, s),
            CpuWork::ReceiveAck(f, ack) => self.nic_ack_received(f, ack, s),
            CpuWork::IssueIo(f, io) => self.hba_issued(f, io, s),
            CpuWork::CompleteIo(f, io) => self.hba_completed(f, io, s),
        }
    }
}
