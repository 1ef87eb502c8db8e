//! Virtual Ethernet between two logical partitions of one machine: a TCP
//! connection ([`TcpConn`]) driven by netperf TCP_STREAM whose frames cross
//! no bus and no wire. The POWER Hypervisor copies each frame from the
//! sending partition's memory straight into the receiving partition's
//! receive buffer (docs/sources.md#hmc-ve), and it does so on the
//! sending partition's CPU, inside that partition's hypervisor call: the
//! whole cost of the link is CPU time on the two partitions.
//!
//! The partition under test is the experiment's partition (its CPU pool,
//! with the usual interrupt, send and reader roles, see `cpu`). The other
//! partition, at the far end, is one CPU of the same kind running the same
//! stack: it is this function's own processor server (the one an adapter's
//! firmware would use), reported as the function's `card_cpu_util_pct` and
//! in the bottleneck as "processor of" the function. Both partitions pay the
//! server's stack costs (see `workloads::tcp`).
//!
//! What one full-size data frame costs (MSS payload, frame = `mtu` +
//! `header`, no FCS, no preamble, no gap), from this partition to the other:
//! 1. the send CPU of the sender: `cpu_per_segment_sent` (+ `cpu_per_kb` of
//!    payload, + `cpu_per_send_call` per send() call starting in the
//!    segment), then the hypervisor call: `hypervisor_per_frame` plus
//!    `hypervisor_per_kb` for each KiB of the frame copied;
//! 2. the receiving partition's CPU: `cpu_per_packet` (+ `cpu_per_kb` of
//!    payload);
//! 3. every `tcp_ack_every` segments the receiver's reader sends an ACK:
//!    `cpu_per_packet` plus the hypervisor call and copy of the ACK frame
//!    (`header` + `tcp_ip_headers`) on the receiver's CPU, then
//!    `cpu_per_packet` on the sender's interrupt CPU.
//!
//! The same list holds the other way for the stream into this partition
//! (the far partition's send calls are not charged: its netperf is not the
//! one measured). No bus transactions, no DMA, no interrupts of a card, no
//! register reads. Left out: the hypervisor's own time apart from the calls
//! (it runs on the partitions' CPUs), receive calls of the receiving
//! application, and loss (a full receive buffer would be a dropped frame;
//! the TCP window keeps the sender within the socket).

use super::seam::inherent_behaviour;
use super::seam::{Ctx, DmaCfg, EngineType, FunctionInput, Reads, Token};
use crate::error::Result;
use crate::model::schema::param_kind;
use crate::model::{Demand, EngineDef, Shape};
use crate::sim::cpu::CpuCfg;
use crate::sim::cpu::CpuRole;
use crate::sim::workloads::tcp::{check_socket, packet_cost, segment_sent_cost, PeerCost, TcpConn};
use crate::units::{round_u64, Picos};

/// A virtual Ethernet adapter's frames and the hypervisor's cost of
/// moving one.
#[derive(Debug, Clone, PartialEq)]
pub struct VethCfg {
    /// TCP payload per full segment.
    pub mss: u64,
    /// Frame bytes of a full segment (MAC header to payload).
    pub frame: u64,
    /// Frame bytes of a pure ACK.
    pub ack_frame: u64,
    /// The sending CPU's hypervisor call per frame.
    pub per_frame: Picos,
    /// The sending CPU's copy per KiB of frame, in ps.
    pub ps_per_kib: f64,
    /// TCP window (socket size) of the (out, in) streams, if netperf runs
    /// that way.
    pub streams: (Option<u64>, Option<u64>),
    /// Bytes per send() call of the sending application.
    pub message: u64,
}

impl VethCfg {
    /// The configuration of a virtual Ethernet function with parameters
    /// `p`, carrying the netperf workloads `work`; `ack_every` is the
    /// server's `tcp_ack_every`. An error when a socket is smaller than the
    /// segments one ACK covers.
    pub fn assemble<'w>(
        p: &VethParams,
        work: impl Iterator<Item = &'w crate::model::Workload>,
        ack_every: u32,
    ) -> Result<VethCfg> {
        let whole = |v: f64| v.round().max(0.0) as u64;
        let mtu = whole(p.mtu);
        let hdrs = whole(p.tcp_ip_headers);
        let mut cfg = VethCfg {
            mss: mtu.saturating_sub(hdrs).max(1),
            frame: mtu + whole(p.header),
            ack_frame: whole(p.header) + hdrs,
            per_frame: Picos::from_ns(p.hypervisor_per_frame),
            ps_per_kib: p.hypervisor_per_kb * 1e3,
            streams: (None, None),
            message: u64::MAX,
        };
        for w in work {
            let Demand::NetperfTcpStream {
                socket_bytes,
                message_bytes,
            } = w.demand
            else {
                continue;
            };
            check_socket(socket_bytes, cfg.mss, ack_every, &w.at)?;
            cfg.message = message_bytes.max(1);
            w.direction.set(&mut cfg.streams, Some(socket_bytes));
        }
        Ok(cfg)
    }

    /// The sending CPU's hypervisor call that copies a frame of `bytes`.
    pub fn copy(&self, bytes: u64) -> Picos {
        self.per_frame + Picos(round_u64(self.ps_per_kib * bytes as f64 / 1024.0))
    }
}

/// What a virtual Ethernet function waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VethEv {
    /// Send CPU: a data segment is built and copied into the other partition.
    SegmentSent,
    /// Other partition: a data segment ending here is received.
    PeerReceived(u64),
    /// Other partition: an ACK up to here is built and copied to this one.
    PeerAckSent(u64),
    /// Interrupt CPU: an ACK up to here is received.
    AckReceived(u64),
    /// Other partition: a data segment ending here is built and copied.
    PeerSent(u64),
    /// Interrupt CPU: a data segment ending here is received.
    SegmentReceived(u64),
    /// Reader CPU: an ACK up to here is built and copied to the other partition.
    AckSent(u64),
    /// Other partition: an ACK up to here is received.
    PeerAckReceived(u64),
}

fn ev<T: From<VethEv>>(e: VethEv) -> T {
    T::from(e)
}

/// Virtual Ethernet state: one TCP connection between the partitions.
#[derive(Debug)]
pub struct Veth {
    /// Frames and costs.
    pub cfg: VethCfg,
    tcp: TcpConn,
    peer_building: bool,
    /// Payload delivered to the other partition since the last reset.
    pub delivered_out: u64,
    /// Payload delivered to this partition's application since the last reset.
    pub delivered_in: u64,
}

impl Veth {
    /// A virtual Ethernet function.
    pub fn new(cfg: VethCfg) -> Veth {
        Veth {
            tcp: TcpConn::new(cfg.mss, cfg.streams, cfg.message),
            cfg,
            peer_building: false,
            delivered_out: 0,
            delivered_in: 0,
        }
    }

    /// Starts the streams.
    pub fn start<T: Token<VethEv>>(&mut self, cx: &mut Ctx<'_, T>) {
        self.try_send(cx);
        self.peer_try_send(cx);
    }

    fn ack_cost(&self, stack: &CpuCfg) -> Picos {
        packet_cost(stack, 0) + self.cfg.copy(self.cfg.ack_frame)
    }

    /// This partition builds and copies another segment if the window allows.
    fn try_send<T: Token<VethEv>>(&mut self, cx: &mut Ctx<'_, T>) {
        if !self.tcp.may_build() {
            return;
        }
        let calls = self.tcp.send_calls_in_next_segment();
        self.tcp.start_build();
        let s = cx.stack();
        let cost = segment_sent_cost(s, self.cfg.mss)
            + s.per_send_call * calls
            + self.cfg.copy(self.cfg.frame);
        cx.cpu(CpuRole::Send, cost, ev(VethEv::SegmentSent), 0);
    }

    /// The other partition builds and copies its next segment, one at a
    /// time, if its window allows.
    fn peer_try_send<T: Token<VethEv>>(&mut self, cx: &mut Ctx<'_, T>) {
        if self.peer_building || !self.tcp.peer_may_send() {
            return;
        }
        self.peer_building = true;
        let end = self.tcp.peer_send();
        let cost = segment_sent_cost(cx.stack(), self.cfg.mss) + self.cfg.copy(self.cfg.frame);
        cx.card_processor(cost, ev(VethEv::PeerSent(end)));
    }

    /// Handles one of the function's events.
    pub fn handle<T: Token<VethEv>>(&mut self, e: VethEv, cx: &mut Ctx<'_, T>) {
        match e {
            VethEv::SegmentSent => {
                if let Some(end) = self.tcp.built() {
                    let cost = packet_cost(cx.stack(), self.cfg.mss);
                    cx.card_processor(cost, ev(VethEv::PeerReceived(end)));
                }
                self.try_send(cx);
            }
            VethEv::PeerReceived(end) => {
                self.delivered_out += self.cfg.mss;
                let ack_every = cx.stack().ack_every;
                let now = cx.now();
                if self
                    .tcp
                    .peer_segment_arrived(now, &PeerCost::default(), 0, ack_every)
                    .is_some()
                {
                    let cost = self.ack_cost(cx.stack());
                    cx.card_processor(cost, ev(VethEv::PeerAckSent(end)));
                }
            }
            VethEv::PeerAckSent(ack) => {
                let cost = packet_cost(cx.stack(), 0);
                cx.cpu(CpuRole::Interrupt, cost, ev(VethEv::AckReceived(ack)), 0);
            }
            VethEv::AckReceived(ack) => {
                self.tcp.ack_received(ack);
                self.try_send(cx);
            }
            VethEv::PeerSent(end) => {
                self.peer_building = false;
                let cost = packet_cost(cx.stack(), self.cfg.mss);
                cx.cpu(
                    CpuRole::Interrupt,
                    cost,
                    ev(VethEv::SegmentReceived(end)),
                    0,
                );
                self.peer_try_send(cx);
            }
            VethEv::SegmentReceived(end) => {
                self.delivered_in += self.cfg.mss;
                if self.tcp.segment_received(cx.stack().ack_every) {
                    let cost = self.ack_cost(cx.stack());
                    cx.cpu(CpuRole::Reader, cost, ev(VethEv::AckSent(end)), 0);
                }
            }
            VethEv::AckSent(ack) => {
                let cost = packet_cost(cx.stack(), 0);
                cx.card_processor(cost, ev(VethEv::PeerAckReceived(ack)));
            }
            VethEv::PeerAckReceived(ack) => {
                self.tcp.peer_ack_arrived(ack);
                self.peer_try_send(cx);
            }
        }
    }
}

param_kind! {
    /// Parameters of a virtual Ethernet function (a partition's adapter on
    /// the hypervisor's virtual LAN): its frames and the hypervisor call that
    /// moves one, on the sending partition's CPU. No bus, no wire.
    VETH, VethParams {
        mtu: Size whole, 576.0, 65394.0,
            "largest IP packet of the virtual adapter";
        header: Size whole, 14.0, 22.0,
            "MAC header of a virtual frame (no FCS, preamble or gap)";
        tcp_ip_headers: Size whole, 40.0, 80.0,
            "IPv4 and TCP headers with options, per segment";
        hypervisor_per_frame: Time, 0.0, 1e6,
            "the sending partition's CPU time per frame in the hypervisor call that moves it (call, virtual switch, the receiver's buffer)";
        hypervisor_per_kb: Time, 0.0, 1e5,
            "the sending partition's CPU time per KiB of frame the hypervisor copies into the receiving partition's memory";
    }
}

/// What model files know of the virtual Ethernet engine.
pub static KIND: EngineDef = EngineDef {
    name: "veth",
    rules: VETH,
    framings: &[],
    carries: &[Shape::TcpStream],
};

impl EngineType for Veth {
    type Ev = VethEv;
    type Cfg = VethCfg;
    const KIND: &'static EngineDef = &KIND;

    fn assemble(input: &FunctionInput) -> Result<VethCfg> {
        let f = input.spec;
        VethCfg::assemble(
            &VethParams::from_set(&f.params, &f.at)?,
            input.work(),
            input.cpu.ack_every,
        )
    }

    fn build(c: &VethCfg) -> Veth {
        Veth::new(c.clone())
    }
    inherent_behaviour!(Veth, VethEv);
    // It never masters its bus.
    fn dma(_: &VethCfg) -> DmaCfg {
        DmaCfg {
            max_read: 0,
            max_outstanding: 1,
            write_burst: 0,
        }
    }
    fn busy(c: &VethCfg) -> bool {
        c.streams.0.is_some() || c.streams.1.is_some()
    }
    fn processes(c: &VethCfg) -> [bool; 2] {
        [c.streams.0.is_some(), c.streams.1.is_some()]
    }
    // It reads the TCP stack costs as a NIC does; the other partition runs
    // the same stack, so either direction reads the costs of both, and the
    // test bed's peer is never read.
    fn reads(_: &VethCfg) -> Reads {
        Reads {
            tcp: true,
            tcp_sends: true,
            tcp_receives: true,
            peer_receives: false,
            disk: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jumbo_frame_costs_one_call_and_six_times_the_copy() {
        let cfg = |mtu: u64| VethCfg {
            mss: mtu - 40,
            frame: mtu + 14,
            ack_frame: 54,
            per_frame: Picos::from_ns(2000.0),
            ps_per_kib: 400_000.0,
            streams: (Some(1 << 17), None),
            message: 1 << 16,
        };
        let (std, jumbo) = (cfg(1500), cfg(9000));
        assert_eq!(std.copy(0), Picos::from_ns(2000.0));
        let copy = |c: &VethCfg| (c.copy(c.frame) - c.per_frame).0 as f64;
        // Each copy is rounded to a picosecond.
        assert!((copy(&jumbo) / copy(&std) - 9014.0 / 1514.0).abs() < 1e-4);
    }
}
