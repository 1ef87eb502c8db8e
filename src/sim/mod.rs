//! The hardware simulation of one experiment, in layers, each using only
//! the layers below it (checked by `tests/architecture.rs`):
//! - hardware, each file one component's configuration, state and event
//!   handling: buses and bridges ([`bus`]), ropes and I/O controllers
//!   ([`path`]), [`memory`], [`cpu`]s, [`dma`] ports, [`wire`]s, half-duplex
//!   segments ([`csma`]), the far ends ([`testbed`]), [`meter`]s;
//! - the [`platform`], which coordinates the hardware (a DMA crossing bus,
//!   ropes, controller and memory) and offers the engines its services,
//!   generic over the engines' event token;
//! - the adapter function [`engines`] and the [`workloads`] they carry
//!   (the TCP and diskbench mechanisms, and the workload kinds of scenario
//!   files), each a list of one file per kind, configured by the assembly
//!   ([`config`]);
//! - the [`system`] (the platform monomorphised to the engines' events,
//!   and the engines) and the [`run`] of an experiment, with its
//!   [`result`].

pub mod bus;
pub mod config;
pub mod cpu;
pub mod csma;
pub mod dma;
pub mod engines;
pub mod memory;
pub mod meter;
pub mod path;
pub mod platform;
pub mod result;
pub mod run;
pub mod system;
pub mod testbed;
pub mod wire;
pub mod workloads;

pub use result::{BusResult, CpuResult, ExperimentResult, FunctionResult, StartDrift, Totals};
pub use run::{simulate, simulate_assembled, simulate_within, Deadline, Watch};
pub use system::{Ev, System};
