//! What the platform and the engines see of each other: [`Ctx`], the
//! services the platform offers the engine of one function while it handles
//! an event (DMA reads and writes, CPU work, sending a frame on a wire,
//! timers), and [`Engines`], the one thing the platform asks of the layer
//! above it: to hand an engine its event or an arrived frame.
//!
//! An engine sees only its own function's view ([`Ctx`] carries the function
//! index): it never reaches into another component's state, and the
//! platform never looks inside an engine: it knows an engine's events only
//! as a token `T` it carries back.
//!
//! Uses the platform's state and events and hardware types; never an
//! engine, a workload or the assembly.

use super::event::Ev;
use super::state::Platform;
use crate::engine::Scheduler;
use crate::sim::cpu::{CpuCfg, CpuJob, CpuRole};
use crate::sim::csma::Action;
use crate::sim::dma::DmaDone;
use crate::sim::testbed::TestbedCfg;
use crate::sim::wire::{Frame, Way};
use crate::units::Picos;

/// The adapter engines, as the platform sees them: whom it hands each
/// function's events and arrived frames (implemented by the layer above,
/// so that the platform names no engine).
pub trait Engines<T> {
    /// Hands `ev` to the engine of function `f`.
    fn event(&mut self, f: usize, ev: T, cx: &mut Ctx<'_, T>);
    /// A frame on wire `way` of function `f` has arrived at the other end:
    /// the engine takes it, then may put the next frame on that wire.
    fn frame_arrived(&mut self, f: usize, way: Way, frame: Frame, cx: &mut Ctx<'_, T>);
    /// The engine of function `f` may put its next frame on wire `way`.
    fn kick(&mut self, f: usize, way: Way, cx: &mut Ctx<'_, T>);
}

impl<T: Copy> Platform<T> {
    /// Hands `ev` to the engine of function `f` (through `e`), now.
    pub(crate) fn tell(
        &mut self,
        e: &mut impl Engines<T>,
        f: usize,
        ev: T,
        s: &mut Scheduler<Ev<T>>,
    ) {
        e.event(f, ev, &mut Ctx::new(self, s, f));
    }
}

/// The services the platform offers the engine of function `f` while it
/// handles one event.
pub struct Ctx<'a, T> {
    p: &'a mut Platform<T>,
    s: &'a mut Scheduler<Ev<T>>,
    f: usize,
}

impl<'a, T: Copy> Ctx<'a, T> {
    /// The view of function `f`.
    pub(crate) fn new(p: &'a mut Platform<T>, s: &'a mut Scheduler<Ev<T>>, f: usize) -> Ctx<'a, T> {
        Ctx { p, s, f }
    }

    /// Simulated time now.
    pub fn now(&self) -> Picos {
        self.s.now()
    }

    /// Starts a DMA read of `bytes` from host memory; `done` comes back to
    /// the engine when the last byte has arrived.
    pub fn dma_read(&mut self, bytes: u64, done: T) {
        self.p
            .dma_read(self.f, bytes, DmaDone::Engine(done), None, self.s);
    }

    /// As [`Ctx::dma_read`], and `at_watermark` comes back to the engine
    /// at every delivery of data once `watermark` bytes have arrived, until
    /// the read is done (a transmit FIFO's threshold, then its filling);
    /// [`Ctx::dma_read_left`] says how many bytes are still to come.
    pub fn dma_read_watched(&mut self, bytes: u64, watermark: u64, at_watermark: T, done: T) {
        let watch = Some((watermark, at_watermark));
        self.p
            .dma_read(self.f, bytes, DmaDone::Engine(done), watch, self.s);
    }

    /// Bytes still to arrive of the read whose watermark event the engine
    /// is handling (see [`Ctx::dma_read_watched`]).
    pub fn dma_read_left(&self) -> u64 {
        self.p.ports[self.f].watched_left
    }

    /// Starts a posted DMA write of `bytes` to host memory; `done` comes back
    /// to the engine when its last burst has been posted.
    pub fn dma_write(&mut self, bytes: u64, done: T) {
        self.p
            .dma_write(self.f, bytes, DmaDone::Engine(done), self.s);
    }

    /// Queues work costing `cost` on the CPU that plays `role` for this
    /// function; after it the CPU makes `register_reads` reads of the card's
    /// registers, one at a time, and then `done` comes back to the engine.
    pub fn cpu(&mut self, role: CpuRole, cost: Picos, done: T, register_reads: u32) {
        let c = self.p.placement.cpu(role, self.f);
        let job = CpuJob {
            func: self.f,
            done,
            register_reads,
            process: self.p.placement.movable_process(self.f, role),
        };
        self.p
            .cpu_submit(c, cost, job, role == CpuRole::Interrupt, self.s);
    }

    /// Queues work costing `cost` on this function's own on-card processor
    /// (firmware), one piece at a time; then `done` comes back to the engine.
    pub fn card_processor(&mut self, cost: Picos, done: T) {
        self.card_engine(0, cost, done);
    }

    /// Queues work costing `cost` on engine `engine` (0 or 1) of this
    /// function's on-card processor: engine 0 is [`Ctx::card_processor`]'s,
    /// engine 1 a second one working beside it (a reassembly engine beside
    /// a segmentation engine); then `done` comes back to the engine.
    pub fn card_engine(&mut self, engine: usize, cost: Picos, done: T) {
        let c = self.p.card_cpu(self.f, engine);
        let job = CpuJob {
            func: self.f,
            done,
            register_reads: 0,
            process: None,
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
        if let Some(bus) = &self.p.shared[self.f] {
            return bus.free(way);
        }
        match &self.p.media[self.f] {
            Some((m, _)) => m.free(way as usize),
            None => self.p.wires[self.f][way as usize].is_idle(),
        }
    }

    /// Puts `frame` on wire `way`; the engine hears of its arrival at the
    /// other end. The wire must be idle.
    pub fn wire_send(&mut self, way: Way, frame: Frame) {
        if let Some(bus) = &mut self.p.shared[self.f] {
            // A shared parallel bus: the function's channel is station Out,
            // the devices station In; the frame waits if the bus is busy.
            if let Some(t) = bus.offer(way, frame, self.s.now()) {
                self.s.schedule_in(t, Ev::WireDone(self.f, way));
            }
            return;
        }
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
                if let Action::Schedule(at, ev) = a {
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
    pub fn to_function(&mut self, g: usize, ev: T) {
        self.s.schedule_in(Picos(0), Ev::Engine(g, ev));
    }

    /// Sends `ev` to this engine `delay` from now.
    pub fn after(&mut self, delay: Picos, ev: T) {
        self.s.schedule_in(delay, Ev::Engine(self.f, ev));
    }

    /// Sends `ev` to this engine at time `at`.
    pub fn at(&mut self, at: Picos, ev: T) {
        self.s.schedule_at(at, Ev::Engine(self.f, ev));
    }
}
