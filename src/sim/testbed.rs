//! The far ends of the links (the netperf peer, the disk array): their
//! costs, which the engines read through the platform's context.
//!
//! A leaf: it uses nothing of the simulation.

use crate::units::{round_u64, Picos};

/// The far ends of the links.
#[derive(Debug, Clone)]
pub struct TestbedCfg {
    /// netperf peer ACK turnaround.
    pub peer_turnaround: Picos,
    /// netperf peer receive processing per segment.
    pub peer_per_segment: Picos,
    /// netperf peer receive processing per KiB of payload, picoseconds.
    pub peer_ps_per_kib: f64,
    /// netperf peer's time to build an ACK.
    pub peer_per_ack: Picos,
    /// The peer's adapter processor's time per frame (data in, ACK out).
    pub peer_processor_per_frame: Picos,
    /// Disk array service time besides transfer.
    pub target_latency: Picos,
    /// Disk array service time per KiB of the I/O, picoseconds.
    pub target_ps_per_kib: f64,
    /// Default outstanding I/Os per direction.
    pub outstanding: u32,
}

impl TestbedCfg {
    /// The disk array's service time for an I/O of `bytes`.
    pub fn target_service(&self, bytes: u64) -> Picos {
        self.target_latency + Picos(round_u64(self.target_ps_per_kib * bytes as f64 / 1024.0))
    }
}
