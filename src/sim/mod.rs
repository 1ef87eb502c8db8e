//! The hardware simulation: components wired from a [`config::SystemCfg`] and
//! driven by the engine. The [`platform`] (buses and bridges in [`bus`], ropes
//! and memory in [`path`], [`cpu`]s, [`wire`]s, the DMA front end in [`dma`])
//! offers services to the adapter function [`engines`]; the [`workloads`]
//! (TCP, diskbench) are apart from the engines that carry them.

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

pub use result::{BusResult, CpuResult, ExperimentResult, FunctionResult, Totals};
pub use run::{simulate, simulate_assembled, Watch};
pub use system::{Ev, System};
