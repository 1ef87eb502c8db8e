//! A TCP connection between the server and an ideal peer, driven by netperf
//! TCP_STREAM in one or both directions, independent of the link that
//! carries its segments.
//!
//! The sending application writes the stream in send() calls of `message`
//! bytes (netperf's send size); a blocking send copies what fits as the
//! socket buffer frees, so the data to send is never short, and each call
//! costs `cpu_per_send_call` on the sending CPU, charged with the segment
//! in which the call's first byte lies.
//! The sender keeps at most one socket's worth (the TCP window)
//! unacknowledged; the receiver ACKs every `tcp_ack_every` segments. The
//! peer processes the segments it receives one at a time
//! (`peer_cpu_per_segment` each) and ACKs `peer_turnaround` after it; it
//! sends whenever the window allows and the carrier has room (802.3x flow
//! control: no drops, no retransmits). Host stack costs: `cpu_per_segment_sent`
//! plus `cpu_per_kb_sent` of payload per data segment sent (on the sending
//! application's CPU, see [`segment_sent_cost`]); `cpu_per_packet` per
//! segment or ACK received (on the interrupt CPU) and per ACK sent (on the
//! reading application's CPU, see [`packet_cost`]); `cpu_per_kb` of payload
//! received, copied to the application by its read() on the reader's CPU
//! (see [`copy_cost`]). Left out: delayed-ACK timers, slow start, loss.

use crate::error::{Error, Location, Result};
use crate::sim::cpu::CpuCfg;
use crate::units::{round_u64, Picos};

/// What the peer spends on the data segments it receives: its adapter's
/// processor first (per frame), then its CPU (per segment, per KiB of
/// payload, and per ACK it sends). All zero: an ideal peer.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PeerCost {
    /// The peer's adapter processor per frame: each data segment received
    /// and each ACK sent.
    pub processor_per_frame: Picos,
    /// The peer's CPU per data segment received.
    pub per_segment: Picos,
    /// The peer's CPU per KiB of a segment's payload, in ps.
    pub per_kib_ps: f64,
    /// The peer's CPU per ACK it builds.
    pub per_ack: Picos,
}

/// The server sending to the peer.
#[derive(Debug, Default)]
struct TcpOut {
    window: u64,
    snd_nxt: u64,
    snd_una: u64,
    building: bool,
    peer_segments: u32,
    peer_busy_until: Picos,
    peer_processor_busy_until: Picos,
}

/// The peer sending to the server.
#[derive(Debug, Default)]
struct TcpIn {
    window: u64,
    peer_nxt: u64,
    peer_una: u64,
    segments: u32,
}

/// One TCP connection: the server's send and receive halves and the peer's.
#[derive(Debug)]
pub struct TcpConn {
    mss: u64,
    message: u64,
    out: Option<TcpOut>,
    inn: Option<TcpIn>,
}

/// CPU time of one data segment sent: stack cost plus its payload's.
pub fn segment_sent_cost(c: &CpuCfg, payload: u64) -> Picos {
    c.per_segment_sent + Picos(round_u64(c.per_kib_sent_ps * payload as f64 / 1024.0))
}

/// CPU time of one packet (segment or ACK) received, or of an ACK sent.
pub fn packet_cost(c: &CpuCfg, payload: u64) -> Picos {
    c.per_packet + copy_cost(c, payload)
}

/// CPU time of the software checksum of `payload` bytes (for a NIC that
/// does not offload it), on top of their copy.
pub fn checksum_cost(c: &CpuCfg, payload: u64) -> Picos {
    Picos(round_u64(c.checksum_kib_ps * payload as f64 / 1024.0))
}

/// CPU time of copying `payload` received bytes (`cpu_per_kb`): to the
/// application's buffer on the reader's CPU, or, when a packet is
/// forwarded, through the interrupt CPU's stack.
pub fn copy_cost(c: &CpuCfg, payload: u64) -> Picos {
    Picos(round_u64(c.per_kib_ps * payload as f64 / 1024.0))
}

/// A TCP socket (window) must hold the segments one ACK covers (`ack_every`
/// segments of `mss` bytes), or the connection stalls waiting for an ACK
/// that never comes; `at` is where the socket size is written.
pub fn check_socket(socket_bytes: u64, mss: u64, ack_every: u32, at: &Location) -> Result<()> {
    if socket_bytes < mss * u64::from(ack_every) {
        return Err(Error::Invalid {
            at: at.clone(),
            message: format!(
                "socket of {socket_bytes} bytes is smaller than {ack_every} segments of {mss} bytes"
            ),
        });
    }
    Ok(())
}

impl TcpConn {
    /// A connection with segments of `mss` payload bytes and the windows
    /// (socket sizes) of its (out, in) streams, each present if a netperf
    /// runs that way.
    pub fn new(mss: u64, windows: (Option<u64>, Option<u64>), message: u64) -> TcpConn {
        TcpConn {
            mss,
            message: message.max(1),
            out: windows.0.map(|w| TcpOut {
                window: w,
                ..Default::default()
            }),
            inn: windows.1.map(|w| TcpIn {
                window: w,
                ..Default::default()
            }),
        }
    }

    /// Payload bytes per segment.
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// Whether the sender may start building another segment: it sends, is
    /// not building one, and the window has room for it.
    pub fn may_build(&self) -> bool {
        match &self.out {
            Some(out) => !out.building && out.snd_nxt - out.snd_una + self.mss <= out.window,
            None => false,
        }
    }

    /// The send() calls whose first byte lies in the next segment to build:
    /// calls start at stream offsets 0, `message`, 2 `message`, ...
    pub fn send_calls_in_next_segment(&self) -> u64 {
        let Some(out) = &self.out else {
            return 0;
        };
        let starts_before = |offset: u64| offset.div_ceil(self.message);
        starts_before(out.snd_nxt + self.mss) - starts_before(out.snd_nxt)
    }

    /// The sender starts building a segment (on its CPU).
    pub fn start_build(&mut self) {
        if let Some(out) = self.out.as_mut() {
            out.building = true;
        }
    }

    /// The segment is built: the stream offset after it, if the server sends.
    pub fn built(&mut self) -> Option<u64> {
        let out = self.out.as_mut()?;
        out.building = false;
        out.snd_nxt += self.mss;
        Some(out.snd_nxt)
    }

    /// The server's stack has processed an ACK up to `ack`.
    pub fn ack_received(&mut self, ack: u64) {
        if let Some(out) = self.out.as_mut() {
            out.snd_una = out.snd_una.max(ack);
        }
    }

    /// The server's stack has processed a data segment; true when it is time
    /// to ACK (every `ack_every` segments).
    pub fn segment_received(&mut self, ack_every: u32) -> bool {
        let Some(inn) = self.inn.as_mut() else {
            return false;
        };
        inn.segments += 1;
        if inn.segments >= ack_every {
            inn.segments = 0;
            return true;
        }
        false
    }

    /// Whether the peer's window lets it send another segment.
    pub fn peer_may_send(&self) -> bool {
        match &self.inn {
            Some(inn) => inn.peer_nxt - inn.peer_una + self.mss <= inn.window,
            None => false,
        }
    }

    /// The peer sends a segment: the stream offset after it.
    pub fn peer_send(&mut self) -> u64 {
        match self.inn.as_mut() {
            Some(inn) => {
                inn.peer_nxt += self.mss;
                inn.peer_nxt
            }
            None => 0,
        }
    }

    /// An ACK from the server up to `ack` reached the peer.
    pub fn peer_ack_arrived(&mut self, ack: u64) {
        if let Some(inn) = self.inn.as_mut() {
            inn.peer_una = inn.peer_una.max(ack);
        }
    }

    /// A data segment of `payload` bytes reached the peer at `now`. The
    /// peer's adapter processor takes the frames one at a time
    /// (`processor_per_frame` each), then its CPU the segments one at a time
    /// (`per_segment` plus `per_kib_ps` of payload). When the peer then owes
    /// an ACK (every `ack_every` segments), its CPU builds it (`per_ack`)
    /// and its adapter processor sends it (`processor_per_frame`): the time
    /// the ACK is ready to leave. The ACK's processor time is booked with the
    /// segment that owes it, so the processor's busy time is exact; the ACK
    /// leaves one `processor_per_frame` after the CPU built it.
    pub fn peer_segment_arrived(
        &mut self,
        now: Picos,
        cost: &PeerCost,
        payload: u64,
        ack_every: u32,
    ) -> Option<Picos> {
        let out = self.out.as_mut()?;
        out.peer_segments += 1;
        let ack = out.peer_segments >= ack_every;
        let start = out.peer_processor_busy_until.max(now);
        let at_cpu = start + cost.processor_per_frame;
        out.peer_processor_busy_until = at_cpu
            + if ack {
                cost.processor_per_frame
            } else {
                Picos(0)
            };
        let cpu = cost.per_segment
            + Picos(round_u64(cost.per_kib_ps * payload as f64 / 1024.0))
            + if ack { cost.per_ack } else { Picos(0) };
        let done = out.peer_busy_until.max(at_cpu) + cpu;
        out.peer_busy_until = done;
        if ack {
            out.peer_segments = 0;
            return Some(done + cost.processor_per_frame);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(v: f64) -> Picos {
        Picos::from_ns(v * 1e3)
    }

    #[test]
    fn an_ideal_peer_acks_when_the_segment_arrives() {
        let mut c = TcpConn::new(1460, (Some(1 << 16), None), 1 << 16);
        let ideal = PeerCost::default();
        assert_eq!(c.peer_segment_arrived(us(1.0), &ideal, 1460, 2), None);
        assert_eq!(
            c.peer_segment_arrived(us(2.0), &ideal, 1460, 2),
            Some(us(2.0))
        );
    }

    #[test]
    fn the_peers_adapter_processor_and_cpu_serve_one_after_the_other() {
        let mut c = TcpConn::new(1024, (Some(1 << 16), None), 1 << 16);
        let cost = PeerCost {
            processor_per_frame: us(10.0),
            per_segment: us(4.0),
            per_kib_ps: 1e6,
            per_ack: us(3.0),
        };
        // Both segments arrive at once: the processor takes the first
        // (0-10), the CPU it (10-15); the processor the second (10-20) and
        // the ACK it owes (20-30), the CPU the second and the ACK (20-28);
        // the ACK leaves after the processor's time on it.
        assert_eq!(c.peer_segment_arrived(Picos(0), &cost, 1024, 2), None);
        assert_eq!(
            c.peer_segment_arrived(Picos(0), &cost, 1024, 2),
            Some(us(38.0))
        );
        // The next segment waits for the processor's time on that ACK.
        assert_eq!(c.peer_segment_arrived(us(21.0), &cost, 1024, 2), None);
        let out = c.out.as_ref().expect("out");
        assert_eq!(out.peer_processor_busy_until, us(40.0));
        assert_eq!(out.peer_busy_until, us(45.0));
    }
}
