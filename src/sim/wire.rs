//! Links as wires: one serial server per direction per function, pulling the
//! next frame from whatever feeds that direction (the adapter on the way out,
//! the netperf peer or disk array on the way in).

use super::meter::BusyMeter;
use super::{Ev, System};
use crate::engine::Scheduler;
use crate::units::{BytesPerSec, Picos};

/// What a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A TCP data segment ending at stream byte `end`.
    EthData {
        /// Stream offset after this segment.
        end: u64,
    },
    /// A pure TCP ACK up to stream byte `ack`.
    EthAck {
        /// Acknowledged offset.
        ack: u64,
    },
    /// FCP_CMND of I/O `io`.
    FcCmd(usize),
    /// FCP XFER_RDY of I/O `io`.
    FcXferRdy(usize),
    /// FCP_DATA of I/O `io`.
    FcData(usize),
    /// FCP_RSP of I/O `io`.
    FcRsp(usize),
}

/// A frame on a wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// Bytes the adapter moves over the bus for it (frame or FC payload).
    pub bytes: u64,
    /// Application payload.
    pub payload: u64,
    /// Time on the wire in bytes (framing, preamble, gaps, idles).
    pub wire_bytes: u64,
    /// What it carries.
    pub kind: FrameKind,
}

/// Direction of a wire, seen from the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Server to far end.
    Out = 0,
    /// Far end to server.
    In = 1,
}

/// One direction of a link.
#[derive(Debug)]
pub struct Wire {
    /// Wire bytes per second.
    pub rate: BytesPerSec,
    current: Option<Frame>,
    /// Busy time.
    pub meter: BusyMeter,
}

impl Wire {
    /// An idle wire.
    pub fn new(rate: BytesPerSec) -> Wire {
        Wire {
            rate,
            current: None,
            meter: BusyMeter::default(),
        }
    }
}

impl System {
    /// Starts the next frame on wire `way` of function `f` if it is idle.
    pub(super) fn wire_kick(&mut self, f: usize, way: Way, s: &mut Scheduler<Ev>) {
        if self.wires[f][way as usize].current.is_some() {
            return;
        }
        let next = if self.is_nic(f) {
            self.nic_next_frame(f, way)
        } else {
            self.hba_next_frame(f, way)
        };
        let Some(frame) = next else {
            return;
        };
        let w = &mut self.wires[f][way as usize];
        w.current = Some(frame);
        w.meter.start(s.now());
        let t = Picos::to_move(frame.wire_bytes, w.rate);
        s.schedule_in(t, Ev::WireDone(f, way));
    }

    /// The frame on wire `way` of `f` has arrived at the other end.
    pub(super) fn wire_done(&mut self, f: usize, way: Way, s: &mut Scheduler<Ev>) {
        let w = &mut self.wires[f][way as usize];
        let Some(frame) = w.current.take() else {
            return;
        };
        w.meter.stop(s.now());
        if self.is_nic(f) {
            self.nic_frame_arrived(f, way, frame, s);
        } else {
            self.hba_frame_arrived(f, way, frame, s);
        }
        self.wire_kick(f, way, s);
    }
}
