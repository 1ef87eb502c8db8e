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
        let waits = !self.cpus[c].idle();
        self.cpus[c].submit(cost, job, interrupt);
        self.cpu_start(c, s);
        if job.process.is_some() && waits {
            self.cpu_balance(s);
        }
    }

    /// If CPU `c` is idle, it starts its next work; its end is scheduled.
    /// A CPU of the pool with nothing of its own to run takes waiting
    /// process work from a busier one ([`Platform::cpu_balance`]).
    fn cpu_start(&mut self, c: usize, s: &mut Scheduler<Ev<T>>) {
        match self.cpus[c].start_next(s.now(), &self.running) {
            Some(cost) => {
                if let Some(p) = self.cpus[c].current().and_then(|j| j.process) {
                    self.running[p] = true;
                }
                s.schedule_in(cost, Ev::CpuDone(c));
            }
            None if c < self.placement.cpus() && self.cpus[c].idle() => self.cpu_take(c, s),
            None => {}
        }
    }

    /// The scheduler's balance: the lowest-numbered idle CPU of the pool, if
    /// any, takes process work waiting on a busy one.
    fn cpu_balance(&mut self, s: &mut Scheduler<Ev<T>>) {
        if let Some(c) = (0..self.placement.cpus()).find(|&c| self.cpus[c].idle()) {
            self.cpu_take(c, s);
        }
    }

    /// Idle CPU `c` of the pool takes the first process work waiting on the
    /// lowest-numbered CPU that has some whose process is not running, and
    /// starts it; its end is scheduled.
    fn cpu_take(&mut self, c: usize, s: &mut Scheduler<Ev<T>>) {
        for d in (0..self.placement.cpus()).filter(|&d| d != c) {
            if let Some((cost, job)) = self.cpus[d].give(&self.running) {
                if let Some(p) = job.process {
                    self.running[p] = true;
                }
                self.cpus[c].start_taken(s.now(), job);
                s.schedule_in(cost, Ev::CpuDone(c));
                return;
            }
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
        if let Some(p) = job.process {
            self.running[p] = false;
        }
        self.cpu_start(c, s);
        if let Some(p) = job.process {
            // The process's next work may wait on its own CPU, busy or
            // idle: the CPU starts it, or an idle one takes it.
            let home = self.placement.process_cpu(p);
            if home != c {
                self.cpu_start(home, s);
            }
            if !self.cpus[home].idle() {
                self.cpu_balance(s);
            }
        }
        self.tell(e, job.func, job.done, s);
    }
}
