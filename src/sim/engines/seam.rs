//! What every engine file builds on, below the list of engines that
//! dispatches to them: the [`EngineType`] trait, the [`FunctionInput`] an
//! engine assembles from, the shared costs it [`Reads`], and helpers
//! (DMA settings from the common parameters, [`kick_wire`]).
//!
//! An engine names the platform's generic context ([`Ctx`]`<'_, T>`) and
//! its own event type only: `T` is any event token its events convert into
//! ([`Token`]), so an engine file never names the list's `EngineEv`, and
//! the list in `engines/mod.rs` is the only file that names every engine.

use crate::error::Result;
use crate::model::{EngineDef, FunctionSpec, LinkSpec, Workload};
use crate::sim::cpu::CpuCfg;
pub use crate::sim::dma::DmaCfg;
pub use crate::sim::platform::Ctx;
use crate::sim::testbed::TestbedCfg;
use crate::sim::wire::{Frame, Way};
use crate::units::BytesPerSec;

/// The event token the platform carries for the engines, as one engine
/// sees it: any copyable type its own events `E` convert into.
pub trait Token<E>: Copy + From<E> {}

impl<E, T: Copy + From<E>> Token<E> for T {}

/// The behaviour methods of [`EngineType`] for an engine type `$ty` whose
/// own `start` and `handle` (and, with `link`, `frame_arrived` and `kick`)
/// do the work, and whose payload counters are its `delivered_out` and
/// `delivered_in` fields.
macro_rules! inherent_behaviour {
    ($ty:ident, $ev:ty) => {
        fn start<T: Token<$ev>>(&mut self, cx: &mut Ctx<'_, T>) {
            $ty::start(self, cx)
        }
        #[inline]
        fn handle<T: Token<$ev>>(&mut self, ev: $ev, cx: &mut Ctx<'_, T>) {
            $ty::handle(self, ev, cx)
        }
        fn delivered(&self) -> (u64, u64) {
            (self.delivered_out, self.delivered_in)
        }
        fn reset_counters(&mut self) {
            (self.delivered_out, self.delivered_in) = (0, 0);
        }
    };
    ($ty:ident, $ev:ty, link) => {
        inherent_behaviour!($ty, $ev);
        fn frame_arrived<T: Token<$ev>>(&mut self, way: Way, frame: Frame, cx: &mut Ctx<'_, T>) {
            $ty::frame_arrived(self, way, frame, cx)
        }
        fn kick<T: Token<$ev>>(&mut self, way: Way, cx: &mut Ctx<'_, T>) {
            $ty::kick(self, way, cx)
        }
    };
}
pub(super) use inherent_behaviour;

/// A DMA engine's settings from the three parameters every engine kind has
/// (`max_read`, `max_outstanding_reads`, `write_burst`).
pub fn dma_from_params(max_read: f64, max_outstanding_reads: f64, write_burst: f64) -> DmaCfg {
    DmaCfg {
        max_read: whole(max_read),
        max_outstanding: whole(max_outstanding_reads).max(1) as u32,
        write_burst: whole(write_burst),
    }
}

/// A parameter that counts whole things (clocks, bytes, frames), rounded.
pub use crate::units::round_u64 as whole;

/// What one function's engine is assembled from: its description, the
/// link it drives, the workloads of its card, and the partition's CPU
/// costs and test bed (already assembled).
#[derive(Debug, Clone, Copy)]
pub struct FunctionInput<'a> {
    /// The function's description: its parameters and where it is written.
    pub spec: &'a FunctionSpec,
    /// The link it drives (the card's `link` when the scenario names one),
    /// if its engine drives one.
    pub link: Option<&'a LinkSpec>,
    /// Its index on its card.
    pub index: usize,
    /// The global index of its card's first function.
    pub first: usize,
    /// The workloads of its card (a forwarding port reads its partner's).
    pub card_work: &'a [&'a Workload],
    /// The partition's CPU and stack costs.
    pub cpu: &'a CpuCfg,
    /// The machines at the far end of the links.
    pub testbed: &'a TestbedCfg,
}

impl<'a> FunctionInput<'a> {
    /// The workloads on this function.
    pub fn work(&self) -> impl Iterator<Item = &'a Workload> + '_ {
        self.card_work
            .iter()
            .copied()
            .filter(|w| w.function == self.index)
    }
}

/// The shared costs a busy function's work reads (what the calibration's
/// fingerprint keeps): the TCP stack and netperf peer, or the disk I/O cost
/// and disk array. A value no busy function reads cannot change a run, so
/// runs that differ only in such values are one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reads {
    /// The TCP stack's costs per packet (received, or ACK sent), its ACK
    /// rule and its checksum cost.
    pub tcp: bool,
    /// The server sends data segments of its own: its costs per segment
    /// sent, per KiB sent and per send call.
    pub tcp_sends: bool,
    /// The server takes in data segments' payload (to an application, or
    /// forwarded): its cost per KiB received.
    pub tcp_receives: bool,
    /// Data segments reach the test bed's netperf peer: the peer's costs
    /// and its ACK turnaround.
    pub peer_receives: bool,
    /// The CPU cost per disk I/O and the disk array.
    pub disk: bool,
}

impl Reads {
    /// What either reads.
    pub fn or(self, o: Reads) -> Reads {
        Reads {
            tcp: self.tcp || o.tcp,
            tcp_sends: self.tcp_sends || o.tcp_sends,
            tcp_receives: self.tcp_receives || o.tcp_receives,
            peer_receives: self.peer_receives || o.peer_receives,
            disk: self.disk || o.disk,
        }
    }
}

/// An engine kind: its description, its configuration and its behaviour.
/// The methods on the configuration say what the platform needs to place
/// the function (its DMA settings, its wire rate, its netperf processes).
pub trait EngineType: Sized + std::fmt::Debug {
    /// Its events (copied into the event queue: keep it small).
    type Ev: Copy + std::fmt::Debug + PartialEq + Eq;
    /// Its assembled configuration.
    type Cfg: Clone + std::fmt::Debug;
    /// What model and scenario files know of it.
    const KIND: &'static EngineDef;

    /// The configuration of one function; an error for a combination the
    /// loader cannot see in one file (a socket too small for the server's
    /// ACK rule, FIFOs smaller than the link's frame).
    fn assemble(input: &FunctionInput) -> Result<Self::Cfg>;
    /// The engine of a configuration, before its workload starts.
    fn build(cfg: &Self::Cfg) -> Self;
    /// Starts its workload.
    fn start<T: Token<Self::Ev>>(&mut self, cx: &mut Ctx<'_, T>);
    /// Handles one of its own events.
    fn handle<T: Token<Self::Ev>>(&mut self, ev: Self::Ev, cx: &mut Ctx<'_, T>);
    /// A frame reached the end of wire `way` (an engine with a link).
    fn frame_arrived<T: Token<Self::Ev>>(
        &mut self,
        _way: Way,
        _frame: Frame,
        _cx: &mut Ctx<'_, T>,
    ) {
    }
    /// Starts the next frame on wire `way` if the wire is idle and the
    /// engine (or the far end, for the inbound wire) has one.
    fn kick<T: Token<Self::Ev>>(&mut self, _way: Way, _cx: &mut Ctx<'_, T>) {}
    /// Payload (out of the server, into the server) since the last reset.
    fn delivered(&self) -> (u64, u64);
    /// Forgets the payload counters (end of warm-up).
    fn reset_counters(&mut self);
    /// Frames its MAC sent with the transmit FIFO run dry under the wire
    /// (transmit underruns), since it was built.
    fn underruns(&self) -> u64 {
        0
    }
    /// Payload ceiling per direction of its link (zero without one).
    fn ceiling(&self) -> BytesPerSec {
        BytesPerSec(0.0)
    }

    /// Its DMA engine's settings.
    fn dma(cfg: &Self::Cfg) -> DmaCfg;
    /// Wire bytes per second of its link (zero without a link).
    fn wire_rate(_cfg: &Self::Cfg) -> BytesPerSec {
        BytesPerSec(0.0)
    }
    /// Whether a workload runs on it (an idle function never masters its
    /// bus, drives its link or asks for CPU time).
    fn busy(cfg: &Self::Cfg) -> bool;
    /// Its application processes on the server: (send, receive).
    fn processes(_cfg: &Self::Cfg) -> [bool; 2] {
        [false, false]
    }
    /// What its (send, receive) processes are called.
    fn process_names(_cfg: &Self::Cfg) -> [&'static str; 2] {
        crate::sim::cpu::NETPERF_PROCESSES
    }
    /// The shared costs its work reads when busy.
    fn reads(cfg: &Self::Cfg) -> Reads;
    /// Its interrupt line is shared with `sharers` other functions: each
    /// interrupt runs their handlers too.
    fn share_interrupt_line(_cfg: &mut Self::Cfg, _sharers: u32) {}
}

/// Starts the next frame on wire `way` if it is idle and `next` gives one.
pub fn kick_wire<T: Copy>(cx: &mut Ctx<'_, T>, way: Way, next: impl FnOnce() -> Option<Frame>) {
    if !cx.wire_idle(way) {
        return;
    }
    if let Some(frame) = next() {
        cx.wire_send(way, frame);
    }
}
