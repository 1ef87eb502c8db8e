//! The platform: the coordination of the hardware an adapter function's
//! engine runs on. A DMA crosses its bus, the ropes, an I/O controller's
//! link and memory; a CPU's register read crosses them the other way; a
//! frame crosses a wire or a half-duplex segment. The hardware files
//! (`bus`, `path`, `memory`, `cpu`, `dma`, `wire`, `csma`) hold each
//! component's configuration and state; the platform holds one of each per
//! experiment ([`Platform`]), schedules their events ([`Ev`]) and offers
//! the engines its services through [`Ctx`].
//!
//! Direction of use: the platform uses hardware files (and the engine, the
//! units, the results); it never names an engine, a workload, the
//! assembly or the system above it. It is generic over the engines' event
//! token `T` (`Platform<T>`, `Ctx<'a, T>`, `Ev<T>`), which the system above
//! monomorphises to the engines' one event type: no dynamic dispatch. It
//! reaches the engines only through [`Engines`], which the system
//! implements.
//!
//! Within it: `event` (the events) and `state` (the hardware of one
//! experiment) at the bottom; `ctx` (the engines' view) above them; the
//! handlers of each family (`bus`, `path`, `dma`, `cpu`, `wire`) above
//! those.

mod bus;
mod cpu;
mod ctx;
mod dma;
mod event;
mod path;
mod state;
mod wire;

pub use ctx::{Ctx, Engines};
pub use event::Ev;
pub use state::{CardBridgeCfg, DmaPlace, PlacedBus, Platform, PlatformCfg, PortCfg};
