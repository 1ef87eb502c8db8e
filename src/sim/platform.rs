//! The platform: everything an adapter function engine runs on (buses and
//! their bridges, the ropes above them, memory, CPUs, wires), and the
//! services it offers an engine through [`Ctx`]: DMA reads and writes, CPU
//! work, sending a frame on a wire, and timers.
//!
//! An engine sees only its own function's view ([`Ctx`] carries the function
//! index): it never reaches into another component's state, and the platform
//! never looks inside an engine except through the dispatch in
//! [`super::engines`].

use super::config::{CpuCfg, SystemCfg, TestbedCfg};
use super::cpu::{Cpu, CpuJob, CpuPlacement, CpuRole};
use super::engines::EngineEv;
use super::wire::{Frame, Way, Wire};
use super::{bus, dma, path, Ev, Totals};
use crate::engine::{RngStream, Scheduler};
use crate::units::Picos;

/// Where one DMA port sits (a function, or an on-card bridge mastering its
/// slot's bus) and how it reads.
#[derive(Debug, Clone, Copy)]
pub struct DmaPlace {
    /// Index of its bus.
    pub bus: usize,
    /// Its index among the functions on that bus.
    pub local: usize,
    /// Bytes per PCI-X read request.
    pub max_read: u64,
    /// PCI-X read requests in flight at most.
    pub max_outstanding: u32,
}

/// The shared hardware of one experiment, without the adapter engines.
pub struct Platform {
    pub(super) cfg: SystemCfg,
    pub(super) buses: Vec<bus::Bus>,
    pub(super) ropes: Vec<path::Rope>,
    /// The I/O controllers' links to memory.
    pub(super) ctrls: Vec<path::Controller>,
    /// The memory's bandwidth, shared by every DMA.
    pub(super) memory: super::memory::MemoryNode,
    pub(super) cpus: Vec<Cpu>,
    pub(super) placement: CpuPlacement,
    pub(super) wires: Vec<[Wire; 2]>,
    /// Per function: its half-duplex segment and the preamble each frame
    /// carries on it, if its link is half duplex (then its wires are unused).
    pub(super) media: Vec<Option<(super::csma::Medium<Frame>, u64)>>,
    pub(super) ports: Vec<dma::DmaPort>,
    pub(super) place: Vec<DmaPlace>,
    pub(super) rng: RngStream,
    pub(super) totals: Totals,
    /// Per function: register reads completed and their total stall, since
    /// the last reset.
    pub(super) register_reads: Vec<(u64, Picos)>,
}

/// The services the platform offers the engine of function `f` while it
/// handles one event.
pub struct Ctx<'a> {
    p: &'a mut Platform,
    s: &'a mut Scheduler<Ev>,
    f: usize,
}

impl<'a> Ctx<'a> {
    /// The view of function `f`.
    pub(super) fn new(p: &'a mut Platform, s: &'a mut Scheduler<Ev>, f: usize) -> Ctx<'a> {
        Ctx { p, s, f }
    }

    /// Simulated time now.
    pub fn now(&self) -> Picos {
        self.s.now()
    }

    /// Starts a DMA read of `bytes` from host memory; `done` comes back to
    /// the engine when the last byte has arrived.
    pub fn dma_read(&mut self, bytes: u64, done: EngineEv) {
        self.p
            .dma_read(self.f, bytes, dma::DmaDone::Engine(done), self.s);
    }

    /// Starts a posted DMA write of `bytes` to host memory; `done` comes back
    /// to the engine when its last burst has been posted.
    pub fn dma_write(&mut self, bytes: u64, done: EngineEv) {
        self.p
            .dma_write(self.f, bytes, dma::DmaDone::Engine(done), self.s);
    }

    /// Queues work costing `cost` on the CPU that plays `role` for this
    /// function; after it the CPU makes `register_reads` reads of the card's
    /// registers, one at a time, and then `done` comes back to the engine.
    pub fn cpu(&mut self, role: CpuRole, cost: Picos, done: EngineEv, register_reads: u32) {
        let c = self.p.placement.cpu(role, self.f);
        let job = CpuJob {
            func: self.f,
            done,
            register_reads,
        };
        self.p
            .cpu_submit(c, cost, job, role == CpuRole::Interrupt, self.s);
    }

    /// Queues work costing `cost` on this function's own on-card processor
    /// (firmware), one piece at a time; then `done` comes back to the engine.
    pub fn card_processor(&mut self, cost: Picos, done: EngineEv) {
        let c = self.p.placement.cpus() + self.f;
        let job = CpuJob {
            func: self.f,
            done,
            register_reads: 0,
        };
        self.p.cpu_submit(c, cost, job, false, self.s);
    }

    /// The host's protocol-stack costs.
    pub fn stack(&self) -> &CpuCfg {
        &self.p.cfg.cpu
    }

    /// The far ends of the links (netperf peer, disk array).
    pub fn testbed(&self) -> &TestbedCfg {
        &self.p.cfg.testbed
    }

    /// Whether wire `way` of this function is idle (ready for a frame).
    pub fn wire_idle(&self, way: Way) -> bool {
        match &self.p.media[self.f] {
            Some((m, _)) => m.free(way as usize),
            None => self.p.wires[self.f][way as usize].is_idle(),
        }
    }

    /// Puts `frame` on wire `way`; the engine hears of its arrival at the
    /// other end. The wire must be idle.
    pub fn wire_send(&mut self, way: Way, frame: Frame) {
        if let Some((m, preamble)) = &mut self.p.media[self.f] {
            // Half duplex: the function's MAC is station 0 of its segment,
            // the far end station 1.
            let mut out = Vec::new();
            m.offer(
                way as usize,
                frame,
                frame.bytes + *preamble,
                self.s.now(),
                &mut out,
            );
            for a in out {
                if let super::csma::Action::Schedule(at, ev) = a {
                    self.s.schedule_at(at, Ev::Medium(self.f, ev));
                }
            }
            return;
        }
        let t = self.p.wires[self.f][way as usize].start(frame, self.s.now());
        self.s.schedule_in(t, Ev::WireDone(self.f, way));
    }

    /// Hands `ev` to the engine of function `g` now (IP forwarding: the
    /// server's stack passes a packet from one port's driver to another's).
    pub fn to_function(&mut self, g: usize, ev: EngineEv) {
        self.s.schedule_in(Picos(0), Ev::Engine(g, ev));
    }

    /// Sends `ev` to this engine `delay` from now.
    pub fn after(&mut self, delay: Picos, ev: EngineEv) {
        self.s.schedule_in(delay, Ev::Engine(self.f, ev));
    }

    /// Sends `ev` to this engine at time `at`.
    pub fn at(&mut self, at: Picos, ev: EngineEv) {
        self.s.schedule_at(at, Ev::Engine(self.f, ev));
    }
}
