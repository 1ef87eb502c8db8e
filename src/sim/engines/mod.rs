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
//! parameter rules, stated in the file with `model::schema`'s
//! `dma_engine_kind!`, the link framings it drives, the workloads it
//! carries), its configuration type and how it is assembled from a
//! function's description ([`EngineType::assemble`], given a
//! [`FunctionInput`]), and its behaviour. An engine file builds on
//! [`seam`] and names the platform's context only at a generic event
//! token; the list at the foot of this file (the `engines!` macro) is the
//! one file that names every engine kind. From it come the [`Engine`],
//! [`EngineEv`] (with a conversion from each engine's events) and
//! [`FunctionCfg`] enums with their dispatch (static: a `match`, never a
//! virtual call, on the hot path) and [`kinds`], which the loader reads to
//! know the engine names of model files. The loader, the schema lookup,
//! the scenario's workload checks and assembly ask an engine kind what they
//! need to know ([`crate::model::EngineKind`], [`FunctionCfg`]'s methods)
//! and never match on one; only `System::new` (a NIC's half-duplex medium)
//! and the calibration's fingerprint (an idle function's placeholder) name
//! one.
//!
//! To add an engine: write its file (its rules, state, event enum,
//! configuration and `impl EngineType`), then its `mod` line and one line
//! in the list below. `probe.rs` is the worked example.

pub mod framing;
pub mod hba;
pub mod nic;
#[cfg(test)]
pub mod probe;
pub mod raw_dma;
pub mod seam;
pub mod veth;

use super::wire::{Frame, Way};
use crate::error::Result;
use crate::model::EngineKind;
use crate::units::BytesPerSec;
pub use seam::{dma_from_params, whole, DmaCfg, EngineType, FunctionInput, Reads};

/// The platform's services at the engines' one event type, as the dispatch
/// below hands them on.
pub type Ctx<'a> = super::platform::Ctx<'a, EngineEv>;

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

        $(
            $(#[cfg($cfg)])?
            impl From<<$engine as EngineType>::Ev> for EngineEv {
                #[inline]
                fn from(ev: <$engine as EngineType>::Ev) -> EngineEv {
                    EngineEv::$variant(ev)
                }
            }
        )*

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

            /// Its application processes on the server: (send, receive).
            pub fn processes(&self) -> [bool; 2] {
                match self {
                    $( $(#[cfg($cfg)])? FunctionCfg::$variant(c) => <$engine as EngineType>::processes(c), )*
                }
            }

            /// What its (send, receive) processes are called.
            pub fn process_names(&self) -> [&'static str; 2] {
                match self {
                    $( $(#[cfg($cfg)])? FunctionCfg::$variant(c) => <$engine as EngineType>::process_names(c), )*
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

            /// Transmit underruns since the engine was built.
            pub fn underruns(&self) -> u64 {
                match self {
                    $( $(#[cfg($cfg)])? Engine::$variant(e) => EngineType::underruns(e), )*
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
    /// A Fibre Channel or parallel SCSI HBA carrying diskbench I/Os.
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
