//! Workloads, apart from the engines that carry them, and the one list of
//! workload kinds.
//!
//! The mechanisms engines run: [`tcp`] (a TCP connection as netperf
//! TCP_STREAM drives it, with its ideal peer; any engine that carries IP
//! packets, Ethernet or ATM, can hold one) and [`diskbench`] (sequential
//! I/Os kept outstanding against a disk array; any storage engine can run
//! them).
//!
//! The workload kinds of scenario files, one file each ([`netperf`],
//! [`ip_forward`], [`diskbench`], [`dma`]; `probe.rs`, a test workload
//! compiled only into the unit tests): each states a
//! [`WorkloadDef`] (its name, keys, direction words, the shape of what it
//! asks of an engine and how it makes that from its keys). [`kinds`] lists
//! them once; the loader finds a kind by name ([`kind_named`]) and asks it
//! everything else. To add a workload kind: its file, its `mod` line and
//! one line in [`kinds`].

pub mod diskbench;
pub mod dma;
pub mod ip_forward;
pub mod netperf;
#[cfg(test)]
pub mod probe;
pub mod tcp;

use crate::model::WorkloadDef;

/// Every workload kind, in the order a scenario's errors name them. A line
/// under `#[cfg(test)]` exists only in the crate's own unit tests.
#[allow(clippy::vec_init_then_push)]
pub fn kinds() -> Vec<&'static WorkloadDef> {
    let mut v = Vec::new();
    v.push(&netperf::KIND);
    v.push(&ip_forward::KIND);
    v.push(&diskbench::KIND);
    v.push(&dma::KIND);
    #[cfg(test)]
    v.push(&probe::KIND);
    v
}

/// The workload kind of scenario files named `name`, if one is listed.
pub fn kind_named(name: &str) -> Option<&'static WorkloadDef> {
    kinds().into_iter().find(|k| k.name == name)
}
