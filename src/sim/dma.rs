//! DMA operations of adapter functions: what each is for, and how a read is
//! split into bus read requests with a bounded number in flight.

use std::collections::{BTreeMap, VecDeque};

use super::wire::FrameKind;

/// Why a function moves data; tells the function what to do when it is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// NIC reads a transmit descriptor.
    NicTxDesc,
    /// NIC reads a frame to transmit.
    NicTxData,
    /// NIC writes back a transmit descriptor.
    NicTxWriteback,
    /// NIC reads a batch of receive descriptors.
    NicRxDesc,
    /// NIC writes a received frame into host memory.
    NicRxData,
    /// NIC writes a receive status descriptor for a frame.
    NicRxStatus(FrameKind),
    /// HBA reads an I/O control block.
    HbaCmd(usize),
    /// HBA reads one frame of write data.
    HbaWriteData(usize, u64),
    /// HBA writes one frame of read data into host memory.
    HbaReadData(usize, u64),
    /// HBA writes an I/O's completion entry.
    HbaCompletion(usize),
}

/// A read in progress: bytes still to arrive and its purpose.
#[derive(Debug, Clone, Copy)]
pub struct ReadOp {
    /// Bytes not yet delivered.
    pub remaining: u64,
    /// What it is for.
    pub purpose: Purpose,
}

/// The DMA bookkeeping of one function.
#[derive(Debug, Default)]
pub struct DmaPort {
    next_op: u64,
    /// Reads in progress.
    pub reads: BTreeMap<u64, ReadOp>,
    /// Writes in progress.
    pub writes: BTreeMap<u64, Purpose>,
    /// PCI-X read requests not yet issued: (op, bytes).
    pub unissued: VecDeque<(u64, u64)>,
    /// PCI-X read requests issued and not yet completed.
    pub outstanding: u32,
}

impl DmaPort {
    /// A fresh operation id.
    pub fn new_op(&mut self) -> u64 {
        self.next_op += 1;
        self.next_op
    }
}
