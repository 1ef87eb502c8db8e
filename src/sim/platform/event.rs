//! The events the platform schedules: one flat enum over the hardware's
//! (bus transactions, ropes, memory, CPUs, wires, half-duplex segments) and
//! the engines' timers, generic over the engines' event token `T` so that
//! the platform never names the engines. Flat, so that an event stays as
//! small as its largest payload (the queue keeps small events inline).
//!
//! Uses only hardware types.

use crate::sim::bus::BusEv;
use crate::sim::csma::MediumEv;
use crate::sim::path::Fetch;
use crate::sim::wire::Way;

/// Every event of the simulation: the hardware's, and the timers of the
/// engines, whose token is `T` (the engines' event type).
#[derive(Debug, Clone, Copy)]
pub enum Ev<T> {
    /// The transaction on bus `b` ends (the bus's grant count, to drop a
    /// stale end after a cut).
    BusDone(usize, u64),
    /// A retried master on bus `b` may ask again.
    BusWake(usize),
    /// The packet on direction (0 up, 1 down) of the ropes above bus `b` has crossed.
    RopeDone(usize, usize),
    /// The ropes above bus `b`, held back by flow control, may send up again.
    RopeWake(usize),
    /// A posted write booked across the ropes above bus `b` leaves them while
    /// a master of the bus waits for room in its bridge.
    PostedFree(usize),
    /// The first packet of bus `b` waiting to be handed on in direction `d`
    /// (up: into its I/O controller; down: onto its ropes) may enter that
    /// stage (cut-through).
    Handoff(usize, usize),
    /// A read request has crossed its I/O controller's link to memory.
    MemAsk(Fetch),
    /// Memory has answered a fetch.
    MemDone(Fetch),
    /// CPU `c` finished its work.
    CpuDone(usize),
    /// The register read CPU `c` is stalled on has returned.
    PioDone(usize),
    /// A frame reached the end of a wire of function `f`.
    WireDone(usize, Way),
    /// An event of the half-duplex segment of function `f`.
    Medium(usize, MediumEv),
    /// A timer the engine of function `f` set has fired.
    Engine(usize, T),
}

impl<T> From<BusEv> for Ev<T> {
    #[inline]
    fn from(ev: BusEv) -> Self {
        match ev {
            BusEv::Done { bus, generation } => Ev::BusDone(bus, generation),
            BusEv::Wake(bus) => Ev::BusWake(bus),
            BusEv::PostedFree(bus) => Ev::PostedFree(bus),
        }
    }
}
