//! Host CPUs: one FIFO server per CPU running protocol-stack and driver work.
//! Each adapter function's interrupts and protocol work run on its own CPU.

use std::collections::VecDeque;

use super::meter::BusyMeter;
use super::{Ev, System};
use crate::engine::Scheduler;
use crate::units::Picos;

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

/// One CPU.
#[derive(Debug, Default)]
pub struct Cpu {
    queue: VecDeque<(Picos, CpuWork)>,
    current: Option<CpuWork>,
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

    /// CPU `c` finished its current work.
    pub(super) fn cpu_done(&mut self, c: usize, s: &mut Scheduler<Ev>) {
        let Some(work) = self.cpus[c].current.take() else {
            return;
        };
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
