//! Adapter function engines behind one seam, and the one list of them.
//!
//! An engine is one PCI function's DMA engine with the workload that drives
//! it: it reacts to its own events ([`EngineEv`]: a DMA it started has
//! finished, CPU work it queued is done, a timer it set has fired), to frames
//! arriving at the ends of its wires, and it feeds its wires. It reaches the
//! rest of the machine only through the platform's services
//! ([`super::platform::Ctx`]).
//!
//! Each engine kind is one file that implements [`EngineType`]: its
//! description for model files ([`EngineType::KIND`]: its name, its
//! parameter rules, the link framings it drives, the workloads it carries),
//! its configuration type and how it is assembled from a function's
//! description ([`EngineType::assemble`], given a [`FunctionInput`]), and
//! its behaviour. The list at the foot of this file (the `engines!` macro) names
//! every engine kind once; from it come the [`Engine`], [`EngineEv`] and
//! [`FunctionCfg`] enums with their dispatch (static: a `match`, never a
//! virtual call, on the hot path) and [`kinds`], which the loader reads to
//! know the engine names of model files. The loader, the schema, the
//! scenario's workload checks and assembly ask an engine kind what they need
//! to know ([`crate::model::EngineKind`], [`FunctionCfg`]'s methods) and
//! never match on one; only `System::new` (a NIC's half-duplex medium) and
//! the calibration's fingerprint (an idle function's placeholder) name one.
//!
//! To add an engine: write its file (state, its event enum, its
//! configuration, and `impl EngineType`), add its parameter rules to
//! `model::schema` (a `dma_engine_kind!` block, from which the README's
//! parameter table is generated), and add its `mod` line and one line to
//! the list below.

/// The behaviour methods of [`EngineType`] for an engine type `$ty` whose
/// own `start` and `handle` (and, with `link`, `frame_arrived` and `kick`)
/// do the work, and whose payload counters are its `delivered_out` and
/// `delivered_in` fields.
macro_rules! inherent_behaviour {
    ($ty:ident, $ev:ty) => {
        fn start(&mut self, cx: &mut Ctx) {
            $ty::start(self, cx)
        }
        #[inline]
        fn handle(&mut self, ev: $ev, cx: &mut Ctx) {
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
        fn frame_arrived(&mut self, way: Way, frame: Frame, cx: &mut Ctx) {
            $ty::frame_arrived(self, way, frame, cx)
        }
        fn kick(&mut self, way: Way, cx: &mut Ctx) {
            $ty::kick(self, way, cx)
        }
    };
}

pub mod framing;
pub mod hba;
pub mod nic;
#[cfg(test)]
pub mod probe;
pub mod raw_dma;
pub mod veth;

use super::cpu::CpuCfg;
pub use super::dma::DmaCfg;
use super::testbed::TestbedCfg;
use super::wire::{Frame, Way};
use crate::error::Result;
use crate::model::{EngineDef, EngineKind, FunctionSpec, LinkSpec, Workload};
use crate::units::BytesPerSec;

/// The platform's services as the engines see them: its context with their
/// event type.
pub type Ctx<'a> = super::platform::Ctx<'a, EngineEv>;

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
/// and disk array.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reads {
    /// The TCP stack costs and the netperf peer.
    pub tcp: bool,
    /// The CPU cost per disk I/O and the disk array.
    pub disk: bool,
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
    fn start(&mut self, cx: &mut Ctx);
    /// Handles one of its own events.
    fn handle(&mut self, ev: Self::Ev, cx: &mut Ctx);
    /// A frame reached the end of wire `way` (an engine with a link).
    fn frame_arrived(&mut self, _way: Way, _frame: Frame, _cx: &mut Ctx) {}
    /// Starts the next frame on wire `way` if the wire is idle and the
    /// engine (or the far end, for the inbound wire) has one.
    fn kick(&mut self, _way: Way, _cx: &mut Ctx) {}
    /// Payload (out of the server, into the server) since the last reset.
    fn delivered(&self) -> (u64, u64);
    /// Forgets the payload counters (end of warm-up).
    fn reset_counters(&mut self);
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
    /// Its netperf processes on the server: (send, receive).
    fn processes(_cfg: &Self::Cfg) -> [bool; 2] {
        [false, false]
    }
    /// The shared costs its work reads when busy.
    fn reads(cfg: &Self::Cfg) -> Reads;
    /// Its interrupt line is shared with `sharers` other functions: each
    /// interrupt runs their handlers too.
    fn share_interrupt_line(_cfg: &mut Self::Cfg, _sharers: u32) {}
}

/// Generates, from the one list of engine kinds, the enums of engines,
/// their events and their configurations, their dispatch, and [`kinds`].
macro_rules! engines {
    ($(
        $(#[doc = $doc:literal])*
        $(#[cfg($cfg:meta)])?
        $variant:ident($engine:ty),
    )*) => {
        /// An event of one engine kind, namespaced by its engine.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum EngineEv {
            $( $(#[doc = $doc])* $(#[cfg($cfg)])?
               $variant(<$engine as EngineType>::Ev), )*
        }

        /// One adapter function's engine.
        // One engine per function, held in a Vec for the whole run: the
        // unused bytes of the smaller variants cost nothing, a Box would
        // cost an indirection on every event.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug)]
        pub enum Engine {
            $( $(#[doc = $doc])* $(#[cfg($cfg)])? $variant($engine), )*
        }

        /// What drives one function: its engine kind's configuration.
        #[derive(Debug, Clone)]
        pub enum FunctionCfg {
            $( $(#[doc = $doc])* $(#[cfg($cfg)])?
               $variant(<$engine as EngineType>::Cfg), )*
        }

        /// Every engine kind, in the list's order.
        #[allow(clippy::vec_init_then_push)]
        pub fn kinds() -> Vec<EngineKind> {
            let mut v = Vec::new();
            $( $(#[cfg($cfg)])? v.push(EngineKind::new(<$engine as EngineType>::KIND)); )*
            v
        }

        impl FunctionCfg {
            /// The configuration of a function whose engine is `kind`.
            pub fn assemble(kind: EngineKind, input: &FunctionInput) -> Result<FunctionCfg> {
                $(
                    $(#[cfg($cfg)])?
                    if kind == EngineKind::new(<$engine as EngineType>::KIND) {
                        return Ok(FunctionCfg::$variant(<$engine as EngineType>::assemble(input)?));
                    }
                )*
                Err(crate::error::Error::Internal(format!(
                    "engine `{}` is in no list",
                    kind.name()
                )))
            }

            /// The function's DMA engine settings.
            pub fn dma(&self) -> DmaCfg {
                match self {
                    $( $(#[cfg($cfg)])? FunctionCfg::$variant(c) => <$engine as EngineType>::dma(c), )*
                }
            }

            /// Wire bytes per second of its link (zero without a link).
            pub fn wire_rate(&self) -> BytesPerSec {
                match self {
                    $( $(#[cfg($cfg)])? FunctionCfg::$variant(c) => <$engine as EngineType>::wire_rate(c), )*
                }
            }

            /// Whether a workload runs on the function.
            pub fn busy(&self) -> bool {
                match self {
                    $( $(#[cfg($cfg)])? FunctionCfg::$variant(c) => <$engine as EngineType>::busy(c), )*
                }
            }

            /// Its netperf processes on the server: (send, receive).
            pub fn processes(&self) -> [bool; 2] {
                match self {
                    $( $(#[cfg($cfg)])? FunctionCfg::$variant(c) => <$engine as EngineType>::processes(c), )*
                }
            }

            /// The shared costs its work reads when busy.
            pub fn reads(&self) -> Reads {
                match self {
                    $( $(#[cfg($cfg)])? FunctionCfg::$variant(c) => <$engine as EngineType>::reads(c), )*
                }
            }

            /// Its interrupt line is shared with `sharers` other functions.
            pub fn share_interrupt_line(&mut self, sharers: u32) {
                match self {
                    $( $(#[cfg($cfg)])? FunctionCfg::$variant(c) => <$engine as EngineType>::share_interrupt_line(c, sharers), )*
                }
            }
        }

        impl Engine {
            /// The engine of a function's configuration.
            pub fn new(cfg: &FunctionCfg) -> Engine {
                match cfg {
                    $( $(#[cfg($cfg)])? FunctionCfg::$variant(c) => Engine::$variant(<$engine as EngineType>::build(c)), )*
                }
            }

            /// Starts the engine's workload.
            pub fn start(&mut self, cx: &mut Ctx) {
                match self {
                    $( $(#[cfg($cfg)])? Engine::$variant(e) => EngineType::start(e, cx), )*
                }
            }

            /// Handles one of the engine's own events.
            #[inline]
            pub fn handle(&mut self, ev: EngineEv, cx: &mut Ctx) {
                #[allow(unreachable_patterns)]
                match (self, ev) {
                    $( $(#[cfg($cfg)])? (Engine::$variant(e), EngineEv::$variant(ev)) => EngineType::handle(e, ev, cx), )*
                    // An event always goes back to the engine that made it.
                    _ => {}
                }
            }

            /// A frame reached the end of wire `way`.
            pub fn frame_arrived(&mut self, way: Way, frame: Frame, cx: &mut Ctx) {
                match self {
                    $( $(#[cfg($cfg)])? Engine::$variant(e) => EngineType::frame_arrived(e, way, frame, cx), )*
                }
            }

            /// Starts the next frame on wire `way` if the wire is idle and the
            /// engine (or the far end, for the inbound wire) has one.
            pub fn kick(&mut self, way: Way, cx: &mut Ctx) {
                match self {
                    $( $(#[cfg($cfg)])? Engine::$variant(e) => EngineType::kick(e, way, cx), )*
                }
            }

            /// Payload (out of the server, into the server) since the last reset.
            pub fn delivered(&self) -> (u64, u64) {
                match self {
                    $( $(#[cfg($cfg)])? Engine::$variant(e) => EngineType::delivered(e), )*
                }
            }

            /// Forgets the payload counters (end of warm-up).
            pub fn reset_counters(&mut self) {
                match self {
                    $( $(#[cfg($cfg)])? Engine::$variant(e) => EngineType::reset_counters(e), )*
                }
            }

            /// Payload ceiling per direction of what the function drives (its
            /// link; for a function without a link, none: zero).
            pub fn ceiling(&self) -> BytesPerSec {
                match self {
                    $( $(#[cfg($cfg)])? Engine::$variant(e) => EngineType::ceiling(e), )*
                }
            }
        }
    };
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

/// The engine kind of model files named `name`, if one is listed.
pub fn kind_named(name: &str) -> Option<EngineKind> {
    kinds().into_iter().find(|k| k.name() == name)
}

// The one list of engine kinds: a variant name, and the type implementing
// `EngineType`. A line under `#[cfg(test)]` exists only in the crate's own
// unit tests.
engines! {
    /// An Ethernet or ATM NIC carrying TCP.
    Nic(nic::Nic),
    /// A Fibre Channel HBA carrying diskbench I/Os.
    Hba(hba::Hba),
    /// A bus-test function moving data between itself and host memory.
    RawDma(raw_dma::RawDma),
    /// Virtual Ethernet between two partitions carrying TCP.
    Veth(veth::Veth),
    /// The registry's test engine (unit tests only).
    #[cfg(test)]
    Probe(probe::Probe),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_kind_has_a_name_of_its_own() {
        let names: Vec<&str> = kinds().iter().map(|k| k.name()).collect();
        assert_eq!(names, ["nic", "hba", "dma", "veth", "probe"]);
        for k in kinds() {
            assert_eq!(kind_named(k.name()), Some(k));
        }
        assert_eq!(kind_named("token-ring"), None);
    }
}
