//! Links as wires: one serial server per direction per function. The
//! function's engine puts the next frame on an idle wire (its own on the way
//! out, the far end's, netperf peer or disk array, on the way in) and hears
//! when it has arrived.
//!
//! The component: [`Wire`] (one direction of a link) and what it carries
//! ([`Frame`], [`FrameKind`], [`Way`]). Its interface: [`Wire::start`]
//! (the crossing time, whose end the platform schedules) and
//! [`Wire::arrive`]; the platform (`platform::wire`) hands the frame to the
//! engine.
//!
//! A hardware file: it uses only other hardware (the meters) and the
//! units; never the platform, an engine, a workload, the assembly or the
//! top-level event.

use super::meter::BusyMeter;
use crate::units::{BytesPerSec, MoveRate, Picos};

/// What a frame carries (the upper layer's unit: a TCP segment or ACK, an
/// FCP information unit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A TCP data segment ending at stream byte `end`.
    TcpData {
        /// Stream offset after this segment.
        end: u64,
    },
    /// A pure TCP ACK up to stream byte `ack`.
    TcpAck {
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
    /// Wire bytes per second, worked out for the hot path.
    moves: MoveRate,
    current: Option<Frame>,
    /// Busy time.
    pub meter: BusyMeter,
}

impl Wire {
    /// An idle wire.
    pub fn new(rate: BytesPerSec) -> Wire {
        Wire {
            moves: MoveRate::new(rate),
            current: None,
            meter: BusyMeter::default(),
        }
    }

    /// Whether no frame is on the wire.
    pub fn is_idle(&self) -> bool {
        self.current.is_none()
    }

    /// Puts `frame` on the wire at `now`; how long it takes to cross.
    pub fn start(&mut self, frame: Frame, now: Picos) -> Picos {
        self.current = Some(frame);
        self.meter.start(now);
        self.moves.time(frame.wire_bytes)
    }

    /// The frame on the wire has arrived at the other end at `now`: the
    /// frame, taken off the wire.
    #[inline]
    pub fn arrive(&mut self, now: Picos) -> Option<Frame> {
        let frame = self.current.take()?;
        self.meter.stop(now);
        Some(frame)
    }
}
