//! Adapter function engines behind one seam.
//!
//! An engine is one PCI function's DMA engine with the workload that drives
//! it: it reacts to its own events ([`EngineEv`]: a DMA it started has
//! finished, CPU work it queued is done, a timer it set has fired), to frames
//! arriving at the ends of its wires, and it feeds its wires. It reaches the
//! rest of the machine only through the platform's services
//! ([`super::platform::Ctx`]).
//!
//! The dispatch over engine kinds sits here and nowhere else. To add an
//! engine: write its file (state, its event enum, `start`, `handle`, and, if
//! it drives a link, `next_frame` and `frame_arrived`), then add a variant
//! to [`Engine`] and [`EngineEv`] and an arm to each match below.

pub mod hba;
pub mod nic;
pub mod raw_dma;
pub mod veth;

use super::config::FunctionCfg;
use super::wire::{Frame, Way};
use crate::units::BytesPerSec;

/// The platform's services as the engines see them: its context with their
/// event type.
pub type Ctx<'a> = super::platform::Ctx<'a, EngineEv>;

/// An event of one engine kind, namespaced by its engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineEv {
    /// An Ethernet NIC's event.
    Nic(nic::NicEv),
    /// A Fibre Channel HBA's event.
    Hba(hba::HbaEv),
    /// A raw DMA test function's event.
    RawDma(raw_dma::RawDmaEv),
    /// A virtual Ethernet function's event.
    Veth(veth::VethEv),
}

/// One adapter function's engine.
// One engine per function, held in a Vec for the whole run: the unused bytes
// of the smaller variants cost nothing, a Box would cost an indirection on
// every event.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Engine {
    /// Ethernet NIC carrying TCP.
    Nic(nic::Nic),
    /// Fibre Channel HBA carrying diskbench I/Os.
    Hba(hba::Hba),
    /// A bus-test function moving data between itself and host memory.
    RawDma(raw_dma::RawDma),
    /// Virtual Ethernet between two partitions carrying TCP.
    Veth(veth::Veth),
}

impl Engine {
    /// The engine of a function's configuration.
    pub fn new(cfg: &FunctionCfg) -> Engine {
        match cfg {
            FunctionCfg::Nic {
                nic,
                eth,
                streams,
                message,
                route,
            } => Engine::Nic(
                nic::Nic::new(nic.clone(), eth.clone(), *streams, *message).routed(*route),
            ),
            FunctionCfg::Hba { hba, fc, streams } => {
                Engine::Hba(hba::Hba::new(hba.clone(), fc.clone(), *streams))
            }
            FunctionCfg::RawDma(c) => Engine::RawDma(raw_dma::RawDma::new(c.test)),
            FunctionCfg::Veth(c) => Engine::Veth(veth::Veth::new(c.clone())),
        }
    }

    /// Starts the engine's workload.
    pub fn start(&mut self, cx: &mut Ctx) {
        match self {
            Engine::Nic(e) => e.start(cx),
            Engine::Hba(e) => e.start(cx),
            Engine::RawDma(e) => e.start(cx),
            Engine::Veth(e) => e.start(cx),
        }
    }

    /// Handles one of the engine's own events.
    pub fn handle(&mut self, ev: EngineEv, cx: &mut Ctx) {
        match (self, ev) {
            (Engine::Nic(e), EngineEv::Nic(ev)) => e.handle(ev, cx),
            (Engine::Hba(e), EngineEv::Hba(ev)) => e.handle(ev, cx),
            (Engine::RawDma(e), EngineEv::RawDma(ev)) => e.handle(ev, cx),
            (Engine::Veth(e), EngineEv::Veth(ev)) => e.handle(ev, cx),
            // An event always goes back to the engine that made it.
            _ => {}
        }
    }

    /// A frame reached the end of wire `way`.
    pub fn frame_arrived(&mut self, way: Way, frame: Frame, cx: &mut Ctx) {
        match self {
            Engine::Nic(e) => e.frame_arrived(way, frame, cx),
            Engine::Hba(e) => e.frame_arrived(way, frame, cx),
            Engine::RawDma(_) | Engine::Veth(_) => {}
        }
    }

    /// Starts the next frame on wire `way` if the wire is idle and the
    /// engine (or the far end, for the inbound wire) has one.
    pub fn kick(&mut self, way: Way, cx: &mut Ctx) {
        match self {
            Engine::Nic(e) => e.kick(way, cx),
            Engine::Hba(e) => e.kick(way, cx),
            Engine::RawDma(_) | Engine::Veth(_) => {}
        }
    }

    /// Payload (out of the server, into the server) since the last reset.
    pub fn delivered(&self) -> (u64, u64) {
        match self {
            Engine::Nic(e) => (e.delivered_out, e.delivered_in),
            Engine::Hba(e) => (e.delivered_out, e.delivered_in),
            Engine::RawDma(e) => (e.delivered_out, e.delivered_in),
            Engine::Veth(e) => (e.delivered_out, e.delivered_in),
        }
    }

    /// Forgets the payload counters (end of warm-up).
    pub fn reset_counters(&mut self) {
        match self {
            Engine::Nic(e) => (e.delivered_out, e.delivered_in) = (0, 0),
            Engine::Hba(e) => (e.delivered_out, e.delivered_in) = (0, 0),
            Engine::RawDma(e) => (e.delivered_out, e.delivered_in) = (0, 0),
            Engine::Veth(e) => (e.delivered_out, e.delivered_in) = (0, 0),
        }
    }

    /// Payload ceiling per direction of what the function drives (its link;
    /// for a function without a link, none: zero; virtual Ethernet has no
    /// line rate).
    pub fn ceiling(&self) -> BytesPerSec {
        match self {
            Engine::Nic(e) => e.eth.goodput_ceiling(),
            Engine::Hba(e) => e.fc.goodput_ceiling(),
            Engine::RawDma(_) | Engine::Veth(_) => BytesPerSec(0.0),
        }
    }
}

/// Starts the next frame on wire `way` if it is idle and `next` gives one.
pub(super) fn kick_wire(cx: &mut Ctx, way: Way, next: impl FnOnce() -> Option<Frame>) {
    if !cx.wire_idle(way) {
        return;
    }
    if let Some(frame) = next() {
        cx.wire_send(way, frame);
    }
}
