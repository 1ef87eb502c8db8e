//! Host CPUs: the partition's pool of CPUs, each a server running
//! protocol-stack and driver work, interrupt work first.
//!
//! Engines name the role a CPU plays for their function ([`CpuRole`]); the
//! placement ([`CpuPlacement`]) says which CPU of the pool that is, by the
//! operating system's rules ([`CpuPlacement::os_rule`]):
//! - each function's **interrupt CPU** runs its receive path: the driver, IP
//!   and TCP input of every frame received (data segment or ACK), and, for an
//!   HBA, the issue and completion of every I/O. HP-UX hands out interrupts
//!   round robin over the CPUs, one function after another, so the functions
//!   of a partition share its CPUs when they outnumber them;
//! - the **send process** (netperf transmit: the socket copy, TCP output and
//!   driver transmit of every data segment) and the **reader process**
//!   (netperf receive, which sends the window-update ACKs as it drains the
//!   socket) run where the scheduler puts them: on the CPU with the least
//!   work placed on it so far (the lowest-numbered on a tie).
//!
//! A CPU serves its work one piece at a time, interrupt work before process
//! work that waits (an interrupt does not preempt work under way: each piece
//! is short beside a run); work waits when its CPU is busy, so functions that
//! outnumber the CPUs share them and the partition saturates.
//!
//! The scheduler balances the processes (choice:cpu-idle-takes in
//! `models/calibration.toml`): a CPU of the pool with nothing of its own to
//! run takes the first process work waiting on a busier CPU (the
//! lowest-numbered that has some), one piece at a time, and a process never
//! runs on two CPUs at once. Interrupt work stays on its CPU. So a process
//! placed beside interrupts that saturate their CPU still runs, on whatever
//! CPU comes free, rather than starving while others idle. A piece costs the
//! same on any CPU of the pool. A process the scenario pins (`process_cpu`)
//! stays on its CPU.
//!
//! So a NIC receiving and sending at once shares one CPU between received data
//! and received ACKs, while its two applications run elsewhere when the
//! partition has CPUs to spare.
//!
//! A NIC's receive work ends with the driver's register reads (programmed
//! I/O, `pio_reads_per_interrupt` per received frame), one at a time: the CPU
//! stays busy, stalled, until each value is back (see `bus` and `path`).
//!
//! This placement is a structural choice made with the rp8400 figures in view (choice:cpu-placement),
//! so it counts as fitted: choice:cpu-placement in `models/calibration.toml`. The
//! alternatives considered:
//! - everything on one CPU per function (the earlier model): GigE
//!   bidirectional then depends on how the cost splits between segments sent
//!   and packets received, which only Figure 4 pins; cross-validation with
//!   Figure 4 held out predicted it 35-37% low;
//! - ACKs sent on the interrupt CPU too: by arithmetic, if GigE receive alone
//!   is CPU-limited at 929 Mbit/s with 1.5 packets per segment, bidirectional
//!   is limited near 1390 Mbit/s, 11% above the paper (not simulated).
//!
//! The component: [`CpuCfg`] (the protocol stack's costs), the pool's
//! [`CpuPlacement`], and each [`Cpu`]'s queues of [`CpuJob`]s, whose
//! engine event it carries as an opaque token `T`. Its interface:
//! [`Cpu::submit`], [`Cpu::start_next`] (the cost of the work it starts,
//! whose end the platform schedules), [`Cpu::begin_reads`],
//! [`Cpu::read_returned`] and [`Cpu::finish`]; the platform
//! (`platform::cpu`) sends the register reads across the bus and hands the
//! finished job's event to the engine.
//!
//! A hardware file: it uses only other hardware (the meters) and the
//! units; never the platform, an engine, a workload, the assembly or the
//! top-level event.

use std::collections::VecDeque;

use super::meter::BusyMeter;
use crate::units::Picos;

/// Host CPU and protocol stack costs.
#[derive(Debug, Clone)]
pub struct CpuCfg {
    /// Per packet received and per ACK sent, memory stalls included.
    pub per_packet: Picos,
    /// Per data segment sent, memory stalls included.
    pub per_segment_sent: Picos,
    /// Per KiB of payload received, in ps.
    pub per_kib_ps: f64,
    /// Per KiB of payload sent, in ps.
    pub per_kib_sent_ps: f64,
    /// Per disk I/O.
    pub per_io: Picos,
    /// Segments per ACK.
    pub ack_every: u32,
    /// Per send() call of a sending application (zero when the server's
    /// model leaves `cpu_per_send_call` out).
    pub per_send_call: Picos,
    /// The software checksum per KiB in ps, on top of `per_kib_ps` and
    /// `per_kib_sent_ps`, for a NIC that does not offload it (zero when the
    /// server's model states none).
    pub checksum_kib_ps: f64,
}

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

/// Which CPU of the pool plays each role for each function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuPlacement {
    /// Per function: its interrupt, send and reader CPUs.
    pub per_function: Vec<[usize; 3]>,
    /// CPUs in the pool.
    pub count: usize,
    /// Per function: whether it has a send and a reader process.
    pub processes: Vec<[bool; 2]>,
    /// Per function: whether the scenario pins its processes to their CPU
    /// (no other CPU takes their work).
    pub bound: Vec<bool>,
    /// Per function: what its send and reader processes are called (e.g.
    /// "netperf send", "diskbench"); absent: netperf's.
    pub names: Vec<[&'static str; 2]>,
}

/// What netperf's processes are called: (send, receive).
pub const NETPERF_PROCESSES: [&str; 2] = ["netperf send", "netperf receive"];

impl CpuPlacement {
    /// Three CPUs of its own per function, for `n` functions: interrupt CPUs
    /// 0..n, send CPUs n..2n, reader CPUs 2n..3n.
    pub fn private(n: usize) -> CpuPlacement {
        CpuPlacement {
            per_function: (0..n).map(|f| [f, n + f, 2 * n + f]).collect(),
            count: 3 * n,
            processes: vec![[true, true]; n],
            bound: vec![false; n],
            names: Vec::new(),
        }
    }

    /// The operating system's placement on a pool of `cpus` CPUs (see the
    /// module doc): interrupts round robin over the CPUs in function order,
    /// then each process (`processes[f]`: whether function `f` has a send
    /// and a reader process) on the CPU with the least work placed on it so
    /// far. A role a function does not use is put on its interrupt CPU.
    pub fn os_rule(cpus: usize, processes: &[[bool; 2]]) -> CpuPlacement {
        let n = processes.len();
        Self::pinned(cpus, processes, &vec![[None, None]; n], &vec![true; n])
    }

    /// [`CpuPlacement::os_rule`] with the scenario's pins: `pins[f]` is the
    /// CPU function `f`'s interrupts and its processes are pinned to, if
    /// any (each below `cpus`). Pinned work is placed first; the round robin
    /// of interrupts goes over the functions not pinned, and the least-loaded
    /// rule sees the pinned work. The rule counts the interrupts of busy
    /// functions only (`busy[f]`: function `f` carries a workload): an idle
    /// port's interrupt assignment costs its CPU nothing, and the scheduler
    /// sees an idle CPU.
    pub fn pinned(
        cpus: usize,
        processes: &[[bool; 2]],
        pins: &[[Option<usize>; 2]],
        busy: &[bool],
    ) -> CpuPlacement {
        let cpus = cpus.max(1);
        let mut load = vec![0u32; cpus];
        let pin = |f: usize, i: usize| pins.get(f).and_then(|p| p[i]).map(|c| c.min(cpus - 1));
        let mut next = 0;
        let mut per_function: Vec<[usize; 3]> = (0..processes.len())
            .map(|f| {
                let c = pin(f, 0).unwrap_or_else(|| {
                    next += 1;
                    (next - 1) % cpus
                });
                load[c] += u32::from(busy.get(f).copied().unwrap_or(true));
                [c; 3]
            })
            .collect();
        // Pinned processes first, then the others where there is least work.
        for pinned_pass in [true, false] {
            for (f, used) in processes.iter().enumerate() {
                for (role, used) in [CpuRole::Send, CpuRole::Reader].into_iter().zip(used) {
                    if !*used || pin(f, 1).is_some() != pinned_pass {
                        continue;
                    }
                    let c = pin(f, 1)
                        .unwrap_or_else(|| (0..cpus).min_by_key(|&c| (load[c], c)).unwrap_or(0));
                    load[c] += 1;
                    per_function[f][role as usize] = c;
                }
            }
        }
        CpuPlacement {
            per_function,
            count: cpus,
            processes: processes.to_vec(),
            bound: (0..processes.len()).map(|f| pin(f, 1).is_some()).collect(),
            names: Vec::new(),
        }
    }

    /// The placement with each function's process names.
    pub fn named(mut self, names: Vec<[&'static str; 2]>) -> CpuPlacement {
        self.names = names;
        self
    }

    /// The number of function `f`'s process in `role` in the table of
    /// running processes ([`process_id`]), if another CPU may take its
    /// work: `None` for interrupt work and for a process the scenario pins.
    pub fn movable_process(&self, f: usize, role: CpuRole) -> Option<usize> {
        match self.bound.get(f) {
            Some(true) => None,
            _ => process_id(f, role),
        }
    }

    /// The CPU whose queue process `p` ([`process_id`]) has its work put on.
    pub fn process_cpu(&self, p: usize) -> usize {
        let role = match p % 2 {
            0 => CpuRole::Send,
            _ => CpuRole::Reader,
        };
        self.cpu(role, p / 2)
    }

    /// The CPU that plays `role` for function `f`.
    pub fn cpu(&self, role: CpuRole, f: usize) -> usize {
        self.per_function[f][role as usize]
    }

    /// CPUs in the pool.
    pub fn cpus(&self) -> usize {
        self.count
    }

    /// What runs on CPU `c`, in words, with `label(f)` naming function `f`:
    /// e.g. "interrupts of a.gige, a.fc + netperf send of a.gige"; "idle" for
    /// a CPU with nothing placed on it.
    pub fn describe(&self, c: usize, label: &dyn Fn(usize) -> String) -> String {
        let used = &self.processes;
        let name = |f: usize, i: usize| self.names.get(f).unwrap_or(&NETPERF_PROCESSES)[i];
        let on = |f: usize, role: CpuRole| {
            self.per_function[f][role as usize] == c
                && match role {
                    CpuRole::Interrupt => true,
                    CpuRole::Send => used.get(f).is_some_and(|u| u[0]),
                    CpuRole::Reader => used.get(f).is_some_and(|u| u[1]),
                }
        };
        let mut parts: Vec<(String, Vec<String>)> = Vec::new();
        for (role, what) in [
            (CpuRole::Interrupt, None),
            (CpuRole::Send, Some(0)),
            (CpuRole::Reader, Some(1)),
        ] {
            for f in (0..self.per_function.len()).filter(|&f| on(f, role)) {
                let what = what.map_or("interrupts", |i| name(f, i)).to_string();
                match parts.iter_mut().find(|(w, _)| *w == what) {
                    Some((_, fs)) => fs.push(label(f)),
                    None => parts.push((what, vec![label(f)])),
                }
            }
        }
        if parts.is_empty() {
            return "idle".into();
        }
        parts
            .iter()
            .map(|(what, fs)| format!("{what} of {}", fs.join(", ")))
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

/// Work queued on a CPU for function `func`: when done, the CPU makes
/// `register_reads` reads of the card's registers, then `done` goes back to
/// the function's engine.
/// `T` is the engine's event token (the CPU only carries it back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuJob<T> {
    /// The function the work is for.
    pub func: usize,
    /// The engine's event when it is done.
    pub done: T,
    /// Register reads after the computing part (a driver's per interrupt).
    pub register_reads: u32,
    /// The process whose work this is (see [`process_id`]); `None` for
    /// interrupt work and an on-card processor's, which stay on their CPU.
    pub process: Option<usize>,
}

/// The number that names function `f`'s process in `role` (send or reader)
/// in the pool's table of running processes; `None` for interrupt work.
pub fn process_id(f: usize, role: CpuRole) -> Option<usize> {
    match role {
        CpuRole::Interrupt => None,
        CpuRole::Send => Some(2 * f),
        CpuRole::Reader => Some(2 * f + 1),
    }
}

/// One CPU.
#[derive(Debug)]
pub struct Cpu<T> {
    /// Interrupt work waiting (served first).
    interrupts: VecDeque<(Picos, CpuJob<T>)>,
    /// Process work waiting.
    queue: VecDeque<(Picos, CpuJob<T>)>,
    /// The work under way.
    current: Option<CpuJob<T>>,
    /// Register reads the current work still waits for (the CPU is stalled,
    /// and counted busy, while one is out).
    pio_left: u32,
    /// When the register read now out left the CPU.
    pio_since: Picos,
    /// Busy time.
    pub meter: BusyMeter,
    /// Pieces of process work this CPU took from a busier CPU's queue.
    pub taken: u64,
}

impl<T> Default for Cpu<T> {
    fn default() -> Self {
        Cpu {
            interrupts: VecDeque::new(),
            queue: VecDeque::new(),
            current: None,
            pio_left: 0,
            pio_since: Picos(0),
            meter: BusyMeter::default(),
            taken: 0,
        }
    }
}

impl<T: Copy> Cpu<T> {
    /// Queues `job` costing `cost`, as interrupt work (served before waiting
    /// process work) or process work.
    #[inline]
    pub fn submit(&mut self, cost: Picos, job: CpuJob<T>, interrupt: bool) {
        if interrupt {
            self.interrupts.push_back((cost, job));
        } else {
            self.queue.push_back((cost, job));
        }
    }

    /// If the CPU is idle, starts the next work waiting at `now`: interrupt
    /// work first, then the first process work whose process is not running
    /// on another CPU (`running[p]`); its cost, for the platform to schedule
    /// its end.
    #[inline]
    pub fn start_next(&mut self, now: Picos, running: &[bool]) -> Option<Picos> {
        if self.current.is_some() {
            return None;
        }
        let (cost, job) = match self.interrupts.pop_front() {
            Some(work) => work,
            None => {
                let i = self.runnable(running)?;
                self.queue.remove(i)?
            }
        };
        self.current = Some(job);
        self.meter.start(now);
        Some(cost)
    }

    /// Whether the CPU has no work under way.
    #[inline]
    pub fn idle(&self) -> bool {
        self.current.is_none()
    }

    /// Where in the queue the first process work waits whose process is not
    /// running elsewhere (`running[p]`); work of no process always can run.
    #[inline]
    fn runnable(&self, running: &[bool]) -> Option<usize> {
        self.queue
            .iter()
            .position(|(_, j)| j.process.is_none_or(|p| !running[p]))
    }

    /// Takes, for another CPU, the first process work waiting here whose
    /// process is not running (`running[p]`): the work of an interrupt or of
    /// an on-card processor stays where it is.
    #[inline]
    pub fn give(&mut self, running: &[bool]) -> Option<(Picos, CpuJob<T>)> {
        let i = self
            .queue
            .iter()
            .position(|(_, j)| j.process.is_some_and(|p| !running[p]))?;
        self.queue.remove(i)
    }

    /// Starts `job` costing `cost`, taken from another CPU's queue, at
    /// `now` (the CPU is idle).
    #[inline]
    pub fn start_taken(&mut self, now: Picos, job: CpuJob<T>) {
        debug_assert!(self.current.is_none());
        self.current = Some(job);
        self.taken += 1;
        self.meter.start(now);
    }

    /// The work under way, if any.
    #[inline]
    pub fn current(&self) -> Option<CpuJob<T>> {
        self.current
    }

    /// The work under way has done its computing: it stalls for `reads`
    /// register reads, one at a time, the first leaving at `now`.
    #[inline]
    pub fn begin_reads(&mut self, reads: u32, now: Picos) {
        self.pio_left = reads;
        self.pio_since = now;
    }

    /// The register read out has returned at `now`: how long it took, and
    /// whether another must follow (leaving now).
    #[inline]
    pub fn read_returned(&mut self, now: Picos) -> (Picos, bool) {
        let took = now - self.pio_since;
        self.pio_left = self.pio_left.saturating_sub(1);
        let more = self.pio_left > 0;
        if more {
            self.pio_since = now;
        }
        (took, more)
    }

    /// Ends the work under way at `now`: the job it was.
    #[inline]
    pub fn finish(&mut self, now: Picos) -> Option<CpuJob<T>> {
        let job = self.current.take()?;
        self.pio_left = 0;
        self.meter.stop(now);
        Some(job)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupts_go_round_robin_and_processes_to_the_least_loaded_cpu() {
        // Two functions (FC, then GigE with both netperfs) on four CPUs:
        // each role its own CPU.
        let p = CpuPlacement::os_rule(4, &[[false, false], [true, true]]);
        assert_eq!(p.per_function, vec![[0, 0, 0], [1, 2, 3]]);
        // Eight GigE functions sending on four CPUs: interrupts 0,1,2,3,0,..
        // and the eight send processes spread two per CPU.
        let p = CpuPlacement::os_rule(4, &[[true, false]; 8]);
        assert_eq!(p.cpus(), 4);
        let mut load = [0; 4];
        for (f, r) in p.per_function.iter().enumerate() {
            assert_eq!(r[0], f % 4);
            load[r[0]] += 1;
            load[r[1]] += 1;
        }
        assert_eq!(load, [4, 4, 4, 4]);
        let label = |f: usize| format!("f{f}");
        assert_eq!(
            p.describe(0, &label),
            "interrupts of f0, f4 + netperf send of f0, f4"
        );
    }

    #[test]
    fn pinned_work_goes_where_the_scenario_says_and_the_rest_around_it() {
        // Three GigE functions sending on four CPUs; the first one's
        // interrupts and process pinned to CPU 3.
        let pins = [[Some(3), Some(3)], [None, None], [None, None]];
        let p = CpuPlacement::pinned(4, &[[true, false]; 3], &pins, &[true; 3]);
        assert_eq!(p.per_function[0][0], 3);
        assert_eq!(p.per_function[0][1], 3);
        // The round robin goes over the others: CPUs 0 and 1; their
        // processes go to the least loaded: CPU 2, then CPU 0.
        assert_eq!(p.per_function[1][0], 0);
        assert_eq!(p.per_function[2][0], 1);
        assert_eq!(p.per_function[1][1], 2);
        assert_eq!(p.per_function[2][1], 0);
        // No pins: the OS rule.
        let none = [[None, None]; 3];
        assert_eq!(
            CpuPlacement::pinned(4, &[[true, false]; 3], &none, &[true; 3]),
            CpuPlacement::os_rule(4, &[[true, false]; 3])
        );
    }

    #[test]
    fn processes_go_beside_idle_functions_not_busy_ones() {
        // Four dual-function cards, the first function of each idle, the
        // second receiving: eight CPUs, interrupts round robin, so the busy
        // functions' interrupts sit on the odd CPUs.
        let processes: Vec<[bool; 2]> =
            (0..8usize).map(|f| [false, !f.is_multiple_of(2)]).collect();
        let busy: Vec<bool> = (0..8usize).map(|f| !f.is_multiple_of(2)).collect();
        let p = CpuPlacement::pinned(8, &processes, &[[None, None]; 8], &busy);
        for f in [1, 3, 5, 7] {
            assert_eq!(p.cpu(CpuRole::Interrupt, f), f);
            let reader = p.cpu(CpuRole::Reader, f);
            assert!(
                reader.is_multiple_of(2),
                "function {f}'s process on CPU {reader}, beside a busy function's interrupts"
            );
        }
    }

    #[test]
    fn a_cpu_gives_away_waiting_process_work_but_never_interrupts_or_a_running_process() {
        let job = |func, process| CpuJob {
            func,
            done: func,
            register_reads: 0,
            process,
        };
        let mut cpu: Cpu<usize> = Cpu::default();
        cpu.submit(Picos(10), job(0, None), true);
        cpu.submit(Picos(20), job(1, Some(2)), false);
        cpu.submit(Picos(30), job(2, Some(4)), false);
        cpu.submit(Picos(40), job(3, Some(4)), false);
        let mut running = vec![false; 6];
        // Busy with its interrupt work, it gives the first process work
        // whose process is not running: process 2's, not the interrupt.
        assert_eq!(cpu.start_next(Picos(0), &running), Some(Picos(10)));
        running[2] = false;
        running[4] = true;
        assert_eq!(
            cpu.give(&running).map(|(c, j)| (c, j.func)),
            Some((Picos(20), 1))
        );
        // Process 4 runs elsewhere: none of its work is given or started.
        assert!(cpu.give(&running).is_none());
        cpu.finish(Picos(10));
        assert_eq!(cpu.start_next(Picos(10), &running), None);
        assert!(cpu.idle());
        // Once it stops running, its work starts here in order.
        running[4] = false;
        assert_eq!(cpu.start_next(Picos(10), &running), Some(Picos(30)));
        running[4] = true;
        assert!(cpu.give(&running).is_none());
        // Its piece done, process 4's next piece may go to an idle CPU.
        cpu.finish(Picos(40));
        running[4] = false;
        let mut idle: Cpu<usize> = Cpu::default();
        let (cost, taken) = cpu.give(&running).expect("process 4's next piece");
        assert_eq!((cost, taken.func), (Picos(40), 3));
        idle.start_taken(Picos(40), taken);
        assert_eq!((idle.taken, idle.idle()), (1, false));
    }

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
