//! The platform's side of the CPUs: work queued on a CPU of the pool or an
//! on-card processor, its end, and the register reads that stall a CPU
//! across the bus; the engine hears when its work is done.

use super::ctx::Engines;
use super::event::Ev;
use super::state::Platform;
use crate::engine::Scheduler;
use crate::sim::cpu::CpuJob;
use crate::sim::path::RopeItem;
use crate::units::Picos;

impl<T: Copy> Platform<T> {
    /// Queues `job` costing `cost` on CPU `c`, as interrupt work (served
    /// before waiting process work) or process work.
    pub(crate) fn cpu_submit(
        &mut self,
        c: usize,
        cost: Picos,
        job: CpuJob<T>,
        interrupt: bool,
        s: &mut Scheduler<Ev<T>>,
    ) {
        self.cpus[c].submit(cost, job, interrupt);
        self.cpu_start(c, s);
    }

    /// If CPU `c` is idle, it starts its next work; its end is scheduled.
    fn cpu_start(&mut self, c: usize, s: &mut Scheduler<Ev<T>>) {
        if let Some(cost) = self.cpus[c].start_next(s.now()) {
            s.schedule_in(cost, Ev::CpuDone(c));
        }
    }

    /// CPU `c` reads a register of the card of function `f`.
    fn cpu_read_register(&mut self, c: usize, f: usize, s: &mut Scheduler<Ev<T>>) {
        let b = self.place[f].bus;
        self.down_push(b, RopeItem::PioReq { cpu: c, target: b }, s);
    }

    /// CPU `c` finished computing its current work: it reads the device's
    /// registers the work calls for, one at a time, then finishes.
    pub(crate) fn cpu_done(&mut self, c: usize, e: &mut impl Engines<T>, s: &mut Scheduler<Ev<T>>) {
        let Some(job) = self.cpus[c].current() else {
            return;
        };
        if job.register_reads > 0 {
            self.cpus[c].begin_reads(job.register_reads, s.now());
            self.cpu_read_register(c, job.func, s);
        } else {
            self.cpu_finish(c, e, s);
        }
    }

    /// The register read CPU `c` was stalled on has returned.
    pub(crate) fn cpu_pio_done(
        &mut self,
        c: usize,
        e: &mut impl Engines<T>,
        s: &mut Scheduler<Ev<T>>,
    ) {
        let Some(job) = self.cpus[c].current() else {
            return;
        };
        let (took, more) = self.cpus[c].read_returned(s.now());
        let stats = &mut self.register_reads[job.func];
        stats.0 += 1;
        stats.1 += took;
        if more {
            self.cpu_read_register(c, job.func, s);
        } else {
            self.cpu_finish(c, e, s);
        }
    }

    /// CPU `c` is done with its current work and starts the next; the
    /// engine hears of the work done.
    fn cpu_finish(&mut self, c: usize, e: &mut impl Engines<T>, s: &mut Scheduler<Ev<T>>) {
        let Some(job) = self.cpus[c].finish(s.now()) else {
            return;
        };
        self.cpu_start(c, s);
        self.tell(e, job.func, job.done, s);
    }
}
