//! Links as wires: one serial server per direction per function. The
//! function's engine puts the next frame on an idle wire (its own on the way
//! out, the far end's, netperf peer or disk array, on the way in) and hears
//! when it has arrived. A parallel SCSI link is one [`SharedBus`] instead:
//! both directions and every device on it take turns on one half-duplex
//! bus, each turn (a connection) opened by arbitration and selection.
//!
//! The components: [`Wire`] (one direction of a link), [`SharedBus`] (a
//! half-duplex bus with arbitration) and what they carry ([`Frame`],
//! [`FrameKind`], [`Way`]). Their interface: [`Wire::start`] and
//! [`SharedBus::offer`] (the crossing time, whose end the platform
//! schedules), [`Wire::arrive`] and [`SharedBus::arrive`]; the platform
//! (`platform::wire`) hands the frame to the engine.
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

/// A half-duplex parallel bus shared by the stations on it (a parallel SCSI
/// bus: the host adapter's channel, station [`Way::Out`], and the target
/// devices, station [`Way::In`]): one frame on it at a time, in either
/// direction. Each station may offer one frame while another is on the bus.
///
/// A frame takes the bus for `connection` (bus free, arbitration and
/// selection or reselection) and then its bytes at the bus's data rate,
/// unless it continues the connection of the frame just before it: a data
/// frame of the same I/O from the same station with no other frame between
/// (the device kept its connection). When both stations wait, the host
/// adapter wins arbitration (it holds the highest SCSI ID, 7). A frame
/// offered to an idle bus takes it at once.
#[derive(Debug)]
pub struct SharedBus {
    moves: MoveRate,
    connection: Picos,
    offered: [Option<Frame>; 2],
    current: Option<(Way, Frame)>,
    last: Option<(Way, FrameKind)>,
    /// Busy time (connections and data).
    pub meter: BusyMeter,
}

impl SharedBus {
    /// An idle bus of data rate `rate` whose connections take `connection`.
    pub fn new(rate: BytesPerSec, connection: Picos) -> SharedBus {
        SharedBus {
            moves: MoveRate::new(rate),
            connection,
            offered: [None, None],
            current: None,
            last: None,
            meter: BusyMeter::default(),
        }
    }

    /// Whether station `way` may offer a frame (it has none waiting).
    pub fn free(&self, way: Way) -> bool {
        self.offered[way as usize].is_none()
    }

    /// Station `way` offers `frame` at `now`: if the bus is idle the frame
    /// takes it, and the time it holds it is returned (the platform
    /// schedules its arrival); else it waits for the bus.
    pub fn offer(&mut self, way: Way, frame: Frame, now: Picos) -> Option<Picos> {
        self.offered[way as usize] = Some(frame);
        match self.current {
            Some(_) => None,
            None => self.start_next(now).map(|(_, t)| t),
        }
    }

    /// The frame on the bus has arrived at `now`: it and its station's way,
    /// taken off the bus.
    pub fn arrive(&mut self, now: Picos) -> Option<(Way, Frame)> {
        let done = self.current.take()?;
        self.meter.stop(now);
        Some(done)
    }

    /// If the bus is idle, the waiting frame that wins arbitration takes
    /// it at `now`: its station's way and the time it holds the bus.
    pub fn start_next(&mut self, now: Picos) -> Option<(Way, Picos)> {
        if self.current.is_some() {
            return None;
        }
        let way = [Way::Out, Way::In]
            .into_iter()
            .find(|w| self.offered[*w as usize].is_some())?;
        let frame = self.offered[way as usize].take()?;
        let continues = match (self.last, frame.kind) {
            (Some((w, FrameKind::FcData(a))), FrameKind::FcData(b)) => w == way && a == b,
            _ => false,
        };
        let open = if continues { Picos(0) } else { self.connection };
        self.last = Some((way, frame.kind));
        self.current = Some((way, frame));
        self.meter.start(now);
        Some((way, open + self.moves.time(frame.wire_bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(io: usize, bytes: u64) -> Frame {
        Frame {
            bytes,
            payload: bytes,
            wire_bytes: bytes,
            kind: FrameKind::FcData(io),
        }
    }

    #[test]
    fn a_shared_bus_opens_a_connection_unless_the_same_data_continues() {
        // 100 MB/s: 10 ns a byte; connections of 1 us.
        let mut bus = SharedBus::new(BytesPerSec(1e8), Picos::from_ns(1000.0));
        let t = bus
            .offer(Way::In, data(1, 100), Picos(0))
            .expect("idle: starts");
        assert_eq!(t, Picos::from_ns(2000.0));
        // Both stations offer while it is busy: the host adapter wins.
        assert!(bus.offer(Way::In, data(1, 100), Picos(1)).is_none());
        assert!(bus.offer(Way::Out, data(2, 100), Picos(1)).is_none());
        assert!(!bus.free(Way::In) && !bus.free(Way::Out));
        assert_eq!(bus.arrive(t).map(|(w, _)| w), Some(Way::In));
        let (way, t2) = bus.start_next(t).expect("a frame waits");
        assert_eq!((way, t2), (Way::Out, Picos::from_ns(2000.0)));
        bus.arrive(t + t2);
        // The device's next frame of I/O 1 came after another frame: it
        // opens a new connection.
        let (way, t3) = bus.start_next(t + t2).expect("a frame waits");
        assert_eq!((way, t3), (Way::In, Picos::from_ns(2000.0)));
        bus.arrive(t + t2 + t3);
        // The same I/O's data straight after: no new connection.
        let t4 = bus.offer(Way::In, data(1, 100), t + t2 + t3).expect("idle");
        assert_eq!(t4, Picos::from_ns(1000.0));
    }
}
