//! An Ethernet NIC function carrying a TCP connection ([`TcpConn`]) to an
//! ideal peer.
//!
//! Bus transactions per full-size transmitted segment:
//! 1. read of one transmit descriptor (`descriptor` bytes);
//! 2. read of the frame (MAC header to payload), in `max_read` requests;
//! 3. posted write of the descriptor back once the frame has left.
//!
//! The transmit engine fetches a frame once the transmit FIFO has room for
//! all of it. On a full-duplex link the frame on the wire gives its room
//! back as it is sent (at the line rate), so the next frame's fetch overlaps
//! the wire; on a half-duplex link a frame keeps its room until it has left,
//! since a collision sends it again from the FIFO. Without a transmit
//! threshold (`tx_threshold` absent) the wire starts a frame only once it is
//! whole in the FIFO (store and forward). With one, the wire may start the
//! frame once `tx_threshold` of its bytes have arrived, while the fetch goes
//! on. If a part of the frame arrived after the wire needed its first byte
//! (the wire's start, known at the frame's end as its end less its time on
//! the wire, plus the preamble and the bytes before it at the line rate),
//! the FIFO ran dry under the wire (an underrun): the peer discards the
//! frame, the port doubles its threshold (the Tulip driver's step: 128,
//! 256, 512, 1024 bytes, then store and forward once the threshold reaches
//! the frame), and the frame goes again: from the FIFO once whole if its
//! fetch is still going, else fetched again first. The frame sent again
//! stands for the drop and TCP retransmission the driver would cause (no
//! loss is modelled): it goes at once. The wire carries the spoilt frame
//! to its end (a real MAC cuts it short).
//!
//! Per received frame (data segment or ACK):
//! 1. posted write of the frame, in `write_burst` bursts;
//! 2. posted write of a status descriptor;
//! 3. every `rx_descriptor_batch` frames, a read of that many fresh descriptors;
//! 4. `pio_reads_per_interrupt` register reads by the interrupt CPU (one
//!    interrupt per frame), each mastered by the bridge, its value returning
//!    up the ropes behind the posted writes; the CPU stalls meanwhile.
//!
//! Over an ATM link (a card with a segmentation and reassembly processor,
//! `processor_clock`), the same transactions per frame, with the frame's
//! AAL5 segmentation between step 2 and the wire, and its reassembly between
//! the last cell's arrival and step 1 of the receive list: the card's own
//! processor spends `processor_tx_clocks_per_frame` or
//! `processor_rx_clocks_per_frame` plus `processor_clocks_per_cell` for each
//! of the frame's cells, at its clock, one frame at a time for both
//! directions (see `config::CardProcessorCfg`). The wire
//! carries the frame's cells: AAL5 trailer and padding to whole cells,
//! 53 bytes per 48 (see `config::EthCfg`).
//!
//! Over an Ethernet link, a card may have such a processor too (an iSCSI
//! HBA carrying virtual Ethernet frames through its offload firmware): the
//! same transactions per frame, and `processor_tx_clocks_per_frame` after
//! step 2 of the transmit list or `processor_rx_clocks_per_frame` before
//! step 1 of the receive list, no cells, one frame at a time for both
//! directions (data and ACKs).
//!
//! The driver queues at most `tx_ring_frames` data segments for transmission
//! (ACKs are always queued). CPU work: building a segment on the send CPU,
//! each received frame's protocol work on the interrupt CPU, the copy of a
//! received segment's payload to the application (its read()) and each ACK
//! the receiver sends on the reader CPU (see `cpu`); the costs are the TCP
//! transport's (see `workloads::tcp`). The peer's frames enter only while the receive FIFO
//! has room for them (802.3x flow control), when the MAC has it and the link
//! is full duplex; without it they enter whenever the peer sends, and the
//! FIFO holds them all (an overrun is not modelled). The peer receiving the
//! server's data (see `workloads::tcp::PeerCost`, from the test bed): its
//! adapter's processor per frame, then its CPU per segment and per KiB,
//! and, every `tcp_ack_every` segments, its CPU and its processor for the
//! ACK; the ACK leaves `peer_turnaround` later. The peer's sending costs
//! nothing.
//! Left out: interrupt coalescing, checksum work (offloaded).
//!
//! IP forwarding ([`Route`]): the server routes a connection between the
//! clients of two ports. Each frame received on one (the sending client's
//! data on the ingress port, the receiving client's ACKs on the egress
//! port) costs `cpu_per_packet` on the interrupt CPU (driver and IP, taken
//! as what a packet received for the server's own stack costs), then joins
//! the other port's transmit ring as it is, with no TCP work on the server:
//! the ingress port's client sends whenever its window allows, the egress
//! port's client receives and ACKs as the netperf peer does.

use std::collections::VecDeque;

use super::framing::{eth_cfg, EthCfg};
use super::seam::inherent_behaviour;
use super::seam::{
    dma_from_params, kick_wire, whole, Ctx, DmaCfg, EngineType, FunctionInput, Reads, Token,
};
use crate::error::{Error, Location, Result};
use crate::model::schema::dma_engine_kind;
use crate::model::{Demand, EngineDef, Framing, ParamSet, Shape};
use crate::sim::cpu::CpuRole;
use crate::sim::wire::{Frame, FrameKind, Way};
use crate::sim::workloads::tcp::{
    check_socket, checksum_cost, copy_cost, packet_cost, segment_sent_cost, TcpConn,
};
use crate::units::{BytesPerSec, MoveRate, Picos};

/// NIC engine parameters.
#[derive(Debug, Clone)]
pub struct NicCfg {
    /// DMA engine.
    pub dma: DmaCfg,
    /// Descriptor size.
    pub descriptor: u64,
    /// Receive descriptors per fetch.
    pub rx_desc_batch: u32,
    /// Frames queued for transmission at most.
    pub tx_ring: u32,
    /// Transmit FIFO bytes.
    pub tx_fifo: u64,
    /// Receive FIFO bytes.
    pub rx_fifo: u64,
    /// Register reads per interrupt (one interrupt per received frame).
    pub pio_reads: u32,
    /// On-card processor (an ATM card's SAR firmware): time per frame
    /// sent, per frame received, per cell either way; all zero without one.
    pub processor: CardProcessorCfg,
    /// Whether the far end sends only while the receive FIFO has room
    /// (802.3x PAUSE, full duplex only).
    pub flow_control: bool,
    /// Segments one large send carries (TCP segmentation offload): the
    /// host pays its per-segment protocol cost once per large send; 1 for
    /// no offload.
    pub tso_segments: u64,
    /// Whether the card checks received checksums (the host's copy is
    /// without the checksum's share).
    pub rx_checksum: bool,
    /// Whether the card computes sent checksums.
    pub tx_checksum: bool,
    /// Bytes of a frame in the transmit FIFO at which the wire may start
    /// it (`None`: store and forward).
    pub tx_threshold: Option<u64>,
}

/// An adapter's own processor: its time per frame each way and per cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CardProcessorCfg {
    /// Per frame transmitted.
    pub tx_per_frame: Picos,
    /// Per frame received.
    pub rx_per_frame: Picos,
    /// Per cell of a frame, either way.
    pub per_cell: Picos,
    /// Whether transmitted and received frames have an engine each
    /// (segmentation and reassembly at once) rather than sharing one.
    pub engine_per_direction: bool,
}

impl CardProcessorCfg {
    /// Whether the card has a processor in the frames' path.
    pub fn present(&self) -> bool {
        self.tx_per_frame != Picos(0) || self.rx_per_frame != Picos(0) || self.per_cell != Picos(0)
    }
    /// The engine that handles frames of the direction `transmit`: 0, or
    /// 1 for received frames when each direction has its own.
    pub fn engine(&self, transmit: bool) -> usize {
        usize::from(self.engine_per_direction && !transmit)
    }
    /// Its time for one frame of `cells` cells, transmitted or received.
    pub fn frame_cost(&self, transmit: bool, cells: u64) -> Picos {
        let per_frame = if transmit {
            self.tx_per_frame
        } else {
            self.rx_per_frame
        };
        per_frame + Picos(self.per_cell.0 * cells)
    }
}

/// An IP-forwarding port's partner: the server routes the packets of a
/// connection between two clients, entering by one port and leaving by the
/// other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// Global index of the other port's function.
    pub peer: usize,
    /// True on the port the data enters by (its client sends), false on the
    /// port it leaves by (its client receives).
    pub ingress: bool,
}

/// A NIC function: its engine, its link's framing and the TCP streams it
/// carries.
#[derive(Debug, Clone)]
pub struct NicFunction {
    /// Engine.
    pub nic: NicCfg,
    /// Link.
    pub eth: EthCfg,
    /// TCP window (socket size), if a netperf runs: (out, in) streams.
    pub streams: (Option<u64>, Option<u64>),
    /// Bytes per send() call of the sending application (netperf's send
    /// size).
    pub message: u64,
    /// IP forwarding: the port the function's packets are routed to or
    /// from (`None`: the server's own stack ends the connection).
    pub route: Option<Route>,
}

dma_engine_kind! {
    /// Parameters of a NIC function.
    NIC, NicParams {
        descriptor: Size whole, 8.0, 64.0,
            "size of one ring descriptor";
        rx_descriptor_batch: Count whole, 1.0, 64.0,
            "receive descriptors fetched by one read";
        tx_ring_frames: Count whole, 1.0, 4096.0,
            "frames the driver keeps queued for transmission (transmit ring)";
        tx_fifo: Size whole, 2048.0, 1048576.0,
            "on-chip transmit FIFO";
        rx_fifo: Size whole, 2048.0, 1048576.0,
            "on-chip receive FIFO";
        pio_reads_per_interrupt: Count whole, 0.0, 16.0,
            "register reads the driver makes per interrupt (one per received frame), each stalling the interrupt CPU for a round trip across the bus";
        processor_clock: Frequency, 1.0, 2000.0,
            "clock of the card's own processor (an ATM card's segmentation and reassembly firmware, an iSCSI HBA's offload firmware passing LAN frames), which runs the `processor_*` cycles below one frame at a time (see `processor_engines`)",
            absent = "no on-card processor in the frames' path: frames go between bus and link as fast as both let them";
        processor_engines: Count whole, 1.0, 2.0,
            "engines that run the `processor_*` cycles at `processor_clock`: 1, one processor serving both directions one frame at a time; 2, a segmentation engine for frames transmitted and a reassembly engine for frames received, working at once",
            absent = "1: one processor for both directions";
        processor_tx_clocks_per_frame: Count, 0.0, 1e7,
            "mean processor clocks of the card's firmware per frame transmitted (segmentation set-up), beside its clocks per cell",
            absent = "no firmware time per frame transmitted";
        processor_rx_clocks_per_frame: Count, 0.0, 1e7,
            "mean processor clocks of the card's firmware per frame received (reassembly done, checks, host buffer and status), beside its clocks per cell",
            absent = "no firmware time per frame received";
        processor_clocks_per_cell: Count, 0.0, 1e5,
            "mean processor clocks per cell of a frame transmitted or received (ATM segmentation and reassembly)",
            absent = "no time per cell";
        flow_control: Count whole, 0.0, 1.0,
            "1 if the MAC honours 802.3x PAUSE on a full-duplex link, so the far end sends only while the receive FIFO has room; 0 if the far end sends regardless (a receive-FIFO overrun is not modelled: the frame is kept)",
            absent = "802.3x flow control on a full-duplex link (a half-duplex link never has it: PAUSE is full duplex only)";
        rx_checksum_offload: Count whole, 0.0, 1.0,
            "1 if the card checks the TCP checksum of what it receives, so the host only copies it; 0: the host checksums each KiB received at the server's `cpu_checksum_per_kb`, beside its copy",
            absent = "0: the host checksums what it receives";
        tx_checksum_offload: Count whole, 0.0, 1.0,
            "1 if the card computes the TCP checksum of what it sends, so the host only copies it; 0: the host checksums each KiB sent at the server's `cpu_checksum_per_kb`, beside its copy",
            absent = "0: the host checksums what it sends";
        tx_threshold: Size whole, 16.0, 65536.0,
            "bytes of a frame in the transmit FIFO at which the MAC starts it on the wire while the rest is fetched; after an underrun (the frame's end reaches the wire before its fetch is done) the port doubles it, and at or above the frame's size the MAC stores the whole frame first",
            absent = "store and forward: the MAC starts a frame once it is whole in the transmit FIFO";
        tso_segments: Count whole, 1.0, 64.0,
            "TCP segmentation offload: segments one large send carries; the host's per-segment protocol cost (the server's `cpu_per_segment_sent`) is paid once per large send and the card cuts it into frames (the per-KiB copy cost stays per byte; descriptor reads stay per frame)",
            absent = "no segmentation offload: the host builds every segment";
    }
}

/// What model files know of the NIC engine.
pub static KIND: EngineDef = EngineDef {
    name: "nic",
    rules: NIC,
    framings: &[Framing::Ethernet, Framing::Atm],
    carries: &[Shape::TcpStream, Shape::IpForward],
};

impl EngineType for Nic {
    type Ev = NicEv;
    type Cfg = NicFunction;
    const KIND: &'static EngineDef = &KIND;

    fn assemble(input: &FunctionInput) -> Result<NicFunction> {
        let f = input.spec;
        let empty = ParamSet::default();
        let link_set = input.link.map_or(&empty, |l| &l.params);
        let eth = eth_cfg(input.link, link_set, &f.at)?;
        let fp = NicParams::from_set(&f.params, &f.at)?;
        let ack_every = input.cpu.ack_every;
        let fi = input.index;
        let mut streams = (None, None);
        let mut message = u64::MAX;
        let mut route = None;
        let busy = input.work().next().is_some();
        // The card's forwarding workloads through this port: entering by
        // it (its own), or leaving by it.
        for w in input.card_work {
            let Demand::IpForward {
                to,
                socket_bytes,
                message_bytes,
            } = w.demand
            else {
                continue;
            };
            let (ingress, other) = if w.function == fi {
                (true, to)
            } else if to == fi {
                (false, w.function)
            } else {
                continue;
            };
            if route.is_some() || (!ingress && busy) {
                return Err(Error::Invalid {
                    at: w.at.clone(),
                    message: "a port forwards one stream and runs nothing else".into(),
                });
            }
            check_socket(socket_bytes, eth.mss, ack_every, &w.at)?;
            message = message_bytes.max(1);
            route = Some(Route {
                peer: input.first + other,
                ingress,
            });
            if ingress {
                streams.1 = Some(socket_bytes);
            } else {
                streams.0 = Some(socket_bytes);
            }
        }
        for w in input.work() {
            if let Demand::NetperfTcpStream {
                socket_bytes,
                message_bytes,
            } = w.demand
            {
                message = message_bytes.max(1);
                check_socket(socket_bytes, eth.mss, ack_every, &w.at)?;
                w.direction.set(&mut streams, Some(socket_bytes));
            }
        }
        let nic = NicCfg {
            dma: dma_from_params(fp.max_read, fp.max_outstanding_reads, fp.write_burst),
            descriptor: whole(fp.descriptor),
            rx_desc_batch: whole(fp.rx_descriptor_batch).max(1) as u32,
            tx_ring: whole(fp.tx_ring_frames).max(1) as u32,
            tx_fifo: whole(fp.tx_fifo),
            rx_fifo: whole(fp.rx_fifo),
            pio_reads: whole(fp.pio_reads_per_interrupt) as u32,
            processor: card_processor(&fp, &f.at)?,
            flow_control: fp.flow_control.is_none_or(|v| v > 0.0) && eth.csma.is_none(),
            tso_segments: fp.tso_segments.map_or(1, whole).max(1),
            rx_checksum: fp.rx_checksum_offload.is_some_and(|v| v > 0.0),
            tx_checksum: fp.tx_checksum_offload.is_some_and(|v| v > 0.0),
            tx_threshold: fp.tx_threshold.map(whole),
        };
        if nic.tx_threshold.is_some() && nic.processor.present() {
            let at = f.params.map.get("tx_threshold").map_or(&f.at, |p| &p.at);
            return Err(Error::Invalid {
                at: at.clone(),
                message: "`tx_threshold` with an on-card processor: the processor takes each frame whole before the wire, so the wire never starts a frame as it is fetched; remove one of them".into(),
            });
        }
        if nic.tx_fifo < eth.frame || nic.rx_fifo < eth.frame {
            return Err(Error::Invalid {
                at: f.at.clone(),
                message: format!("NIC FIFOs must hold one {}-byte frame", eth.frame),
            });
        }
        Ok(NicFunction {
            nic,
            eth,
            streams,
            message,
            route,
        })
    }

    fn build(c: &NicFunction) -> Nic {
        Nic::new(c.nic.clone(), c.eth.clone(), c.streams, c.message).routed(c.route)
    }
    inherent_behaviour!(Nic, NicEv, link);
    fn underruns(&self) -> u64 {
        self.underruns
    }
    fn ceiling(&self) -> BytesPerSec {
        self.eth.goodput_ceiling()
    }
    fn dma(c: &NicFunction) -> DmaCfg {
        c.nic.dma
    }
    fn wire_rate(c: &NicFunction) -> BytesPerSec {
        c.eth.rate
    }
    fn busy(c: &NicFunction) -> bool {
        c.streams.0.is_some() || c.streams.1.is_some()
    }
    fn processes(c: &NicFunction) -> [bool; 2] {
        match c.route {
            None => [c.streams.0.is_some(), c.streams.1.is_some()],
            // A forwarded stream runs no process on the server.
            Some(_) => [false, false],
        }
    }
    fn reads(c: &NicFunction) -> Reads {
        // A routed port builds no segment of its own (`try_send`), copies
        // what it forwards through the stack, and sends data to a client
        // that receives as the netperf peer does.
        let (out, inn, routed) = (
            c.streams.0.is_some(),
            c.streams.1.is_some(),
            c.route.is_some(),
        );
        Reads {
            tcp: true,
            tcp_sends: out && !routed,
            tcp_receives: inn || routed,
            peer_receives: out || routed,
            disk: false,
        }
    }
    fn share_interrupt_line(c: &mut NicFunction, sharers: u32) {
        c.nic.pio_reads += sharers;
    }
}

/// A NIC's on-card processor: its clocks per frame and per cell at its
/// clock (all zero without a clock: no processor).
fn card_processor(fp: &NicParams, at: &Location) -> Result<CardProcessorCfg> {
    let clocks = [
        fp.processor_tx_clocks_per_frame,
        fp.processor_rx_clocks_per_frame,
        fp.processor_clocks_per_cell,
    ];
    let Some(mhz) = fp.processor_clock else {
        if clocks.iter().any(Option::is_some) {
            return Err(Error::Invalid {
                at: at.clone(),
                message: "the function gives its processor's clocks per frame or per cell but no `processor_clock`: without the clock they would mean nothing".into(),
            });
        }
        return Ok(CardProcessorCfg::default());
    };
    let time = |clocks: Option<f64>| Picos::from_ns(clocks.unwrap_or(0.0) * 1e3 / mhz);
    Ok(CardProcessorCfg {
        tx_per_frame: time(fp.processor_tx_clocks_per_frame),
        rx_per_frame: time(fp.processor_rx_clocks_per_frame),
        per_cell: time(fp.processor_clocks_per_cell),
        engine_per_direction: fp.processor_engines.is_some_and(|n| n >= 2.0),
    })
}

/// What a NIC waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NicEv {
    /// DMA: a transmit descriptor has been read.
    TxDesc,
    /// DMA: a frame to transmit has been read.
    TxData,
    /// DMA: the transmit threshold's bytes of the frame being read are in
    /// the FIFO.
    TxThreshold,
    /// Card processor: the oldest frame read for transmission is segmented.
    TxSegmented,
    /// Card processor: the oldest frame received is reassembled.
    RxReassembled,
    /// DMA: a transmit descriptor has been written back.
    TxWriteback,
    /// Timer: the frame on the wire has left room for the next fetch.
    TxRoom,
    /// DMA: a batch of receive descriptors has been read.
    RxDesc,
    /// DMA: a received frame has been written to host memory.
    RxData,
    /// DMA: the status descriptor of a received frame has been written.
    RxStatus(FrameKind),
    /// CPU: a data segment has been built.
    SegmentBuilt,
    /// CPU: a data segment ending here has been received (its protocol
    /// work done on the interrupt CPU).
    SegmentReceived(u64),
    /// CPU: the reader has copied the segment ending at `end` to the
    /// application and, if `ack`, built the ACK it owes.
    Read {
        /// Stream offset after the segment read.
        end: u64,
        /// Whether an ACK up to `end` was built with it.
        ack: bool,
    },
    /// CPU: an ACK up to this offset has been received.
    AckReceived(u64),
    /// CPU: a received frame has been routed to the partner port.
    Forwarded(FrameKind),
    /// A frame routed from the partner port joins the transmit ring.
    Inject(FrameKind),
    /// Timer: the peer sends an ACK up to this offset.
    PeerAck(u64),
}

fn ev<T: From<NicEv>>(e: NicEv) -> T {
    T::from(e)
}

/// A frame leaving the transmit FIFO as the wire sends it.
#[derive(Debug, Clone, Copy)]
struct Drain {
    /// When it started on the wire.
    start: Picos,
    /// Its bytes in the FIFO.
    bytes: u64,
    /// Its time on the wire.
    time: Picos,
}

impl Drain {
    /// Bytes sent by `now`.
    fn sent(&self, now: Picos) -> u64 {
        let elapsed = now.0.saturating_sub(self.start.0);
        if elapsed >= self.time.0 || self.time.0 == 0 {
            return self.bytes;
        }
        ((self.bytes as u128 * elapsed as u128) / self.time.0 as u128) as u64
    }

    /// When `bytes` of it have been sent (at most its end).
    fn sent_at(&self, bytes: u64) -> Picos {
        let bytes = bytes.min(self.bytes);
        let t = (self.time.0 as u128 * bytes as u128).div_ceil(self.bytes.max(1) as u128);
        Picos(self.start.0 + t as u64)
    }
}

/// Where the frame being fetched is, once the wire may start it before
/// its fetch is done (a transmit threshold).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Early {
    /// Not started early: it joins the FIFO's queue when whole.
    No,
    /// Queued for the wire, its fetch going on.
    Queued,
    /// On the wire, its fetch going on.
    OnWire,
}

/// Whether a wire that started a frame at `start` (its `preamble` first,
/// then the frame's bytes at `rate`) ran dry: a part of the frame arrived
/// in the FIFO after the wire needed that part's first byte. `pieces`: when
/// each part arrived and the frame's bytes in the FIFO then, from the part
/// that crossed the threshold (before the start) to the last.
fn fifo_ran_dry(pieces: &[(Picos, u64)], start: Picos, preamble: u64, rate: MoveRate) -> bool {
    pieces.windows(2).any(|w| {
        let needed = start.0 + rate.time(preamble + w[0].1).0;
        w[1].0 .0 > needed
    })
}

/// NIC state.
#[derive(Debug)]
pub struct Nic {
    /// Engine.
    pub cfg: NicCfg,
    /// Link framing.
    pub eth: EthCfg,
    tcp: TcpConn,
    tx_ring: VecDeque<Frame>,
    fetching: Option<Frame>,
    segmenting: VecDeque<Frame>,
    reassembling: VecDeque<Frame>,
    tx_fifo: VecDeque<Frame>,
    tx_fifo_used: u64,
    /// The frame leaving the transmit FIFO on a full-duplex wire.
    draining: Option<Drain>,
    /// A wake-up is set for when the draining frame leaves room.
    room_timer: bool,
    /// The transmit threshold now (it doubles after each underrun).
    threshold: Option<u64>,
    /// The frame being fetched, when the wire may start it early.
    early: Early,
    /// When each part of the frame being fetched arrived since its
    /// threshold, and the bytes in the FIFO then.
    pieces: Vec<(Picos, u64)>,
    /// The parts of the frame on the wire that started before its fetch
    /// was done, its fetch done since.
    on_wire_pieces: Option<Vec<(Picos, u64)>>,
    /// Frames the wire sent with their fetch not done (transmit underruns).
    underruns: u64,
    rx_fifo: VecDeque<Frame>,
    rx_fifo_used: u64,
    rx_dma_busy: bool,
    rx_desc: u32,
    rx_desc_fetching: bool,
    peer_acks: VecDeque<Frame>,
    route: Option<Route>,
    /// Payload delivered to the peer since the last reset.
    pub delivered_out: u64,
    /// Payload delivered to the server's application since the last reset.
    pub delivered_in: u64,
}

impl Nic {
    /// A NIC with the given streams' windows, its sending application
    /// writing `message` bytes per send() call.
    pub fn new(cfg: NicCfg, eth: EthCfg, streams: (Option<u64>, Option<u64>), message: u64) -> Nic {
        Nic {
            tcp: TcpConn::new(eth.mss, streams, message),
            threshold: cfg.tx_threshold,
            cfg,
            eth,
            tx_ring: VecDeque::new(),
            fetching: None,
            segmenting: VecDeque::new(),
            reassembling: VecDeque::new(),
            tx_fifo: VecDeque::new(),
            tx_fifo_used: 0,
            draining: None,
            room_timer: false,
            early: Early::No,
            pieces: Vec::new(),
            on_wire_pieces: None,
            underruns: 0,
            rx_fifo: VecDeque::new(),
            rx_fifo_used: 0,
            rx_dma_busy: false,
            rx_desc: 0,
            rx_desc_fetching: false,
            peer_acks: VecDeque::new(),
            route: None,
            delivered_out: 0,
            delivered_in: 0,
        }
    }

    /// The NIC as one port of an IP-forwarding route (`None`: the server's
    /// own stack ends its connection).
    pub fn routed(mut self, route: Option<Route>) -> Nic {
        self.route = route;
        self
    }

    /// Frames queued for transmission: in the ring, being fetched, or in the FIFO.
    fn queued_frames(&self) -> usize {
        self.tx_ring.len()
            + self.segmenting.len()
            + self.tx_fifo.len()
            + usize::from(self.fetching.is_some() && self.early != Early::Queued)
    }

    fn data_frame(&self, end: u64) -> Frame {
        Frame {
            bytes: self.eth.frame,
            payload: self.eth.mss,
            wire_bytes: self.eth.wire_bytes(self.eth.frame),
            kind: FrameKind::TcpData { end },
        }
    }

    fn ack_frame(&self, ack: u64) -> Frame {
        Frame {
            bytes: self.eth.ack_frame,
            payload: 0,
            wire_bytes: self.eth.wire_bytes(self.eth.ack_frame),
            kind: FrameKind::TcpAck { ack },
        }
    }

    /// Starts the streams.
    pub fn start<T: Token<NicEv>>(&mut self, cx: &mut Ctx<'_, T>) {
        self.try_send(cx);
        self.rx_pump(cx);
        self.kick(Way::In, cx);
    }

    /// Starts the next frame on wire `way` if it is idle.
    pub fn kick<T: Token<NicEv>>(&mut self, way: Way, cx: &mut Ctx<'_, T>) {
        let mut started = None;
        kick_wire(cx, way, || {
            let frame = self.next_frame(way);
            started = frame;
            frame
        });
        if way == Way::Out && started.is_some() && self.early == Early::Queued {
            // The early frame is the last queued: the fetch is one at a time.
            if self.tx_fifo.is_empty() {
                self.early = Early::OnWire;
            }
        }
        if let (Way::Out, Some(frame), None) = (way, started, &self.eth.csma) {
            self.draining = Some(Drain {
                start: cx.now(),
                bytes: frame.bytes,
                time: MoveRate::new(self.eth.rate).time(frame.wire_bytes),
            });
            self.tx_pump(cx);
        }
    }

    /// The sender builds another segment if the ring and the window allow.
    fn try_send<T: Token<NicEv>>(&mut self, cx: &mut Ctx<'_, T>) {
        let ring_full = self.queued_frames() >= self.cfg.tx_ring as usize;
        // A routed port sends what the partner port hands it, nothing of its own.
        if ring_full || self.route.is_some() || !self.tcp.may_build() {
            return;
        }
        let calls = self.tcp.send_calls_in_next_segment();
        self.tcp.start_build();
        // With segmentation offload the per-segment protocol work is done
        // once per large send: each segment bears its share.
        let per_segment = cx.stack().per_segment_sent;
        let offloaded = per_segment - Picos(per_segment.0 / self.cfg.tso_segments);
        // Without checksum offload the host sums the segment's payload.
        let checksum = match self.cfg.tx_checksum {
            true => Picos(0),
            false => checksum_cost(cx.stack(), self.tcp.mss()),
        };
        let cost = segment_sent_cost(cx.stack(), self.tcp.mss()) - offloaded
            + checksum
            + cx.stack().per_send_call * calls;
        cx.cpu(CpuRole::Send, cost, ev(NicEv::SegmentBuilt), 0);
    }

    /// The transmit engine fetches the next frame if it has FIFO room.
    fn tx_pump<T: Token<NicEv>>(&mut self, cx: &mut Ctx<'_, T>) {
        if self.fetching.is_some() {
            return;
        }
        let Some(&frame) = self.tx_ring.front() else {
            return;
        };
        let now = cx.now();
        let sent = self.draining.map_or(0, |d| d.sent(now));
        if self.tx_fifo_used - sent + frame.bytes > self.cfg.tx_fifo {
            // Wake when the frame on the wire has sent enough, if it can.
            let need = self.tx_fifo_used + frame.bytes - self.cfg.tx_fifo;
            if let Some(d) = self.draining {
                if need <= d.bytes && !self.room_timer {
                    self.room_timer = true;
                    cx.at(d.sent_at(need), ev(NicEv::TxRoom));
                }
            }
            return;
        }
        self.tx_ring.pop_front();
        self.tx_fifo_used += frame.bytes;
        self.fetching = Some(frame);
        cx.dma_read(self.cfg.descriptor, ev(NicEv::TxDesc));
    }

    /// The receive engine moves the next frame from its FIFO to host memory.
    fn rx_pump<T: Token<NicEv>>(&mut self, cx: &mut Ctx<'_, T>) {
        let batch = self.cfg.rx_desc_batch;
        if !self.rx_desc_fetching && self.rx_desc <= batch / 2 {
            self.rx_desc_fetching = true;
            cx.dma_read(batch as u64 * self.cfg.descriptor, ev(NicEv::RxDesc));
        }
        if self.rx_dma_busy || self.rx_desc == 0 {
            return;
        }
        let Some(&frame) = self.rx_fifo.front() else {
            return;
        };
        self.rx_desc -= 1;
        self.rx_dma_busy = true;
        cx.dma_write(frame.bytes, ev(NicEv::RxData));
    }

    /// Handles one of the NIC's events.
    pub fn handle<T: Token<NicEv>>(&mut self, e: NicEv, cx: &mut Ctx<'_, T>) {
        match e {
            NicEv::TxDesc => {
                let bytes = self.fetching.map(|fr| fr.bytes).unwrap_or(0);
                match self.threshold {
                    // `assemble` refuses a threshold beside a card processor.
                    Some(t) if t < bytes => {
                        cx.dma_read_watched(bytes, t, ev(NicEv::TxThreshold), ev(NicEv::TxData))
                    }
                    _ => cx.dma_read(bytes, ev(NicEv::TxData)),
                }
            }
            NicEv::TxThreshold => {
                let Some(frame) = self.fetching else {
                    return;
                };
                let arrived = frame.bytes - cx.dma_read_left().min(frame.bytes);
                self.pieces.push((cx.now(), arrived));
                if self.pieces.len() == 1 {
                    self.tx_fifo.push_back(frame);
                    self.early = Early::Queued;
                    self.kick(Way::Out, cx);
                }
            }
            NicEv::TxData => {
                if let Some(frame) = self.fetching.take() {
                    let p = self.cfg.processor;
                    let mut pieces = std::mem::take(&mut self.pieces);
                    if self.early != Early::No {
                        // Queued or on the wire already as its bytes came.
                        if self.early == Early::OnWire {
                            pieces.push((cx.now(), frame.bytes));
                            self.on_wire_pieces = Some(pieces);
                        }
                        self.early = Early::No;
                    } else if p.present() {
                        let cost = p.frame_cost(true, self.eth.cells_of(frame.bytes));
                        self.segmenting.push_back(frame);
                        cx.card_engine(p.engine(true), cost, ev(NicEv::TxSegmented));
                    } else {
                        self.tx_fifo.push_back(frame);
                    }
                }
                self.kick(Way::Out, cx);
                self.tx_pump(cx);
            }
            NicEv::TxSegmented => {
                if let Some(frame) = self.segmenting.pop_front() {
                    self.tx_fifo.push_back(frame);
                }
                self.kick(Way::Out, cx);
            }
            NicEv::RxReassembled => {
                if let Some(frame) = self.reassembling.pop_front() {
                    self.rx_fifo.push_back(frame);
                }
                self.rx_pump(cx);
            }
            NicEv::TxWriteback => {}
            NicEv::TxRoom => {
                self.room_timer = false;
                self.tx_pump(cx);
            }
            NicEv::RxDesc => {
                self.rx_desc += self.cfg.rx_desc_batch;
                self.rx_desc_fetching = false;
                self.rx_pump(cx);
            }
            NicEv::RxData => {
                self.rx_dma_busy = false;
                let Some(frame) = self.rx_fifo.pop_front() else {
                    return;
                };
                self.rx_fifo_used -= frame.bytes;
                cx.dma_write(self.cfg.descriptor, ev(NicEv::RxStatus(frame.kind)));
                self.rx_pump(cx);
                self.kick(Way::In, cx);
            }
            NicEv::RxStatus(kind) if self.route.is_some() => {
                let payload = match kind {
                    FrameKind::TcpData { .. } => self.eth.mss,
                    _ => 0,
                };
                let cost = packet_cost(cx.stack(), payload);
                cx.cpu(
                    CpuRole::Interrupt,
                    cost,
                    ev(NicEv::Forwarded(kind)),
                    self.cfg.pio_reads,
                );
            }
            NicEv::Forwarded(kind) => {
                let Some(route) = self.route else {
                    return;
                };
                if let FrameKind::TcpData { .. } = kind {
                    self.delivered_in += self.eth.mss;
                }
                cx.to_function(route.peer, ev(NicEv::Inject(kind)));
            }
            NicEv::Inject(kind) => {
                let frame = match kind {
                    FrameKind::TcpData { end } => self.data_frame(end),
                    FrameKind::TcpAck { ack } => self.ack_frame(ack),
                    _ => return,
                };
                self.tx_ring.push_back(frame);
                self.tx_pump(cx);
            }
            NicEv::RxStatus(kind) => {
                let (cost, done) = match kind {
                    FrameKind::TcpData { end } => {
                        (packet_cost(cx.stack(), 0), NicEv::SegmentReceived(end))
                    }
                    FrameKind::TcpAck { ack } => {
                        (packet_cost(cx.stack(), 0), NicEv::AckReceived(ack))
                    }
                    _ => return,
                };
                cx.cpu(CpuRole::Interrupt, cost, ev(done), self.cfg.pio_reads);
            }
            NicEv::SegmentBuilt => {
                let Some(end) = self.tcp.built() else {
                    return;
                };
                let frame = self.data_frame(end);
                self.tx_ring.push_back(frame);
                self.tx_pump(cx);
                self.try_send(cx);
            }
            NicEv::SegmentReceived(end) => {
                self.delivered_in += self.eth.mss;
                let ack = self.tcp.segment_received(cx.stack().ack_every);
                let mut cost = copy_cost(cx.stack(), self.eth.mss);
                if !self.cfg.rx_checksum {
                    cost += checksum_cost(cx.stack(), self.eth.mss);
                }
                if ack {
                    cost += packet_cost(cx.stack(), 0);
                }
                if ack || cost > Picos(0) {
                    cx.cpu(CpuRole::Reader, cost, ev(NicEv::Read { end, ack }), 0);
                }
            }
            NicEv::Read { end, ack } => {
                if ack {
                    self.ack_built(end, cx);
                }
            }
            NicEv::AckReceived(ack) => {
                self.tcp.ack_received(ack);
                self.try_send(cx);
            }
            NicEv::PeerAck(ack) => {
                let frame = self.ack_frame(ack);
                self.peer_acks.push_back(frame);
                self.kick(Way::In, cx);
            }
        }
    }

    /// The frame on the wire ran dry: the port raises its threshold.
    fn underrun(&mut self) {
        self.underruns += 1;
        self.threshold = self.threshold.map(|t| t.saturating_mul(2));
        self.draining = None;
    }

    /// Whether the frame ending on the wire `now`, if it started before its
    /// fetch was done, had a part arrive after the wire needed it (forgets
    /// the parts).
    fn ran_dry(&mut self, frame: Frame, now: Picos) -> bool {
        let Some(pieces) = self.on_wire_pieces.take() else {
            return false;
        };
        let rate = MoveRate::new(self.eth.rate);
        let start = Picos(now.0.saturating_sub(rate.time(frame.wire_bytes).0));
        fifo_ran_dry(&pieces, start, self.eth.preamble, rate)
    }

    /// An ACK up to `ack` is built: it joins the transmit ring.
    fn ack_built<T: Token<NicEv>>(&mut self, ack: u64, cx: &mut Ctx<'_, T>) {
        let frame = self.ack_frame(ack);
        self.tx_ring.push_back(frame);
        self.tx_pump(cx);
    }

    /// The next frame for wire `way`: from the transmit FIFO on the way out;
    /// from the peer on the way in (its ACKs first), while the receive FIFO
    /// has room.
    fn next_frame(&mut self, way: Way) -> Option<Frame> {
        match way {
            Way::Out => self.tx_fifo.pop_front(),
            Way::In => {
                let gated = self.cfg.flow_control;
                if let Some(&ack) = self.peer_acks.front() {
                    if !gated || self.rx_fifo_used + ack.bytes <= self.cfg.rx_fifo {
                        self.peer_acks.pop_front();
                        self.rx_fifo_used += ack.bytes;
                        return Some(ack);
                    }
                    return None;
                }
                if !self.tcp.peer_may_send()
                    || (gated && self.rx_fifo_used + self.eth.frame > self.cfg.rx_fifo)
                {
                    return None;
                }
                let end = self.tcp.peer_send();
                self.rx_fifo_used += self.eth.frame;
                Some(self.data_frame(end))
            }
        }
    }

    /// A frame reached the end of wire `way`.
    pub fn frame_arrived<T: Token<NicEv>>(&mut self, way: Way, frame: Frame, cx: &mut Ctx<'_, T>) {
        match way {
            Way::Out if self.early == Early::OnWire => {
                // Its end reached the wire before its fetch was done: the
                // peer discards it; it goes again from the FIFO once whole.
                self.underrun();
                self.early = Early::No;
            }
            Way::Out if self.ran_dry(frame, cx.now()) => {
                // A part came after the wire needed it: the peer discards
                // the frame; it is fetched again.
                self.underrun();
                self.tx_fifo_used -= frame.bytes;
                self.tx_ring.push_front(frame);
                self.tx_pump(cx);
            }
            Way::Out => {
                self.tx_fifo_used -= frame.bytes;
                self.draining = None;
                cx.dma_write(self.cfg.descriptor, ev(NicEv::TxWriteback));
                self.tx_pump(cx);
                self.try_send(cx);
                match frame.kind {
                    FrameKind::TcpData { end } => {
                        self.delivered_out += frame.payload;
                        let tb = cx.testbed();
                        let (peer, turnaround) = (tb.peer_cost(), tb.peer_turnaround);
                        let ack_every = cx.stack().ack_every;
                        if let Some(done) =
                            self.tcp
                                .peer_segment_arrived(cx.now(), &peer, frame.payload, ack_every)
                        {
                            cx.at(done + turnaround, ev(NicEv::PeerAck(end)));
                        }
                    }
                    FrameKind::TcpAck { ack } => {
                        self.tcp.peer_ack_arrived(ack);
                        self.kick(Way::In, cx);
                    }
                    _ => {}
                }
            }
            Way::In => {
                let p = self.cfg.processor;
                if p.present() {
                    let cost = p.frame_cost(false, self.eth.cells_of(frame.bytes));
                    self.reassembling.push_back(frame);
                    cx.card_engine(p.engine(false), cost, ev(NicEv::RxReassembled));
                } else {
                    self.rx_fifo.push_back(frame);
                    self.rx_pump(cx);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_on_the_wire_gives_its_fifo_room_back_at_the_line_rate() {
        let d = Drain {
            start: Picos(1_000),
            bytes: 1518,
            time: Picos(123_040_000),
        };
        assert_eq!(d.sent(Picos(0)), 0);
        assert_eq!(d.sent(Picos(1_000)), 0);
        assert_eq!(d.sent(Picos(1_000 + 61_520_000)), 759);
        assert_eq!(d.sent(Picos(u64::MAX)), 1518);
        // When a number of bytes has gone: never before, and the whole
        // frame at the wire's end.
        for bytes in [1, 100, 759, 988, 1517, 1518] {
            let t = d.sent_at(bytes);
            assert!(d.sent(t) >= bytes, "{bytes} bytes by {t:?}");
            assert!(d.sent(Picos(t.0 - 1)) < bytes, "{bytes} bytes before {t:?}");
        }
        assert_eq!(d.sent_at(5000), Picos(1_000 + 123_040_000));
    }

    #[test]
    fn a_wire_runs_dry_when_a_part_comes_after_the_wire_needs_it() {
        // 100 Mbit/s: a byte each 80 ns; 256-byte parts every 25.2 us
        // (the wire sends 256 bytes in 20.48 us).
        let rate = MoveRate::new(BytesPerSec(12.5e6));
        let us = |t: f64| Picos::from_ns(t * 1e3);
        let parts = |first: u64| -> Vec<(Picos, u64)> {
            let mut v = vec![(us(0.0), first)];
            let mut bytes = first;
            let mut t = 0.0;
            while bytes < 1518 {
                t += 25.2;
                bytes = (bytes + 256).min(1518);
                v.push((us(t), bytes));
            }
            v
        };
        // Started on 256 bytes: byte 256 is needed at 0.64 + 20.48 us,
        // before the second part at 25.2.
        assert!(fifo_ran_dry(&parts(256), us(0.0), 8, rate));
        // Started on 512: each part comes before the wire reaches it.
        assert!(!fifo_ran_dry(&parts(512), us(0.0), 8, rate));
        // The same parts with the wire started 20 us later: the fetch falls
        // 4.7 us further behind at each part and the last comes late
        // (needed at 123.0, arrives at 126.0); 40 us later, never.
        assert!(fifo_ran_dry(&parts(256), us(20.0), 8, rate));
        assert!(!fifo_ran_dry(&parts(256), us(40.0), 8, rate));
        // A whole frame in one part: nothing to run dry on.
        assert!(!fifo_ran_dry(&[(us(0.0), 1518)], us(0.0), 8, rate));
    }

    #[test]
    fn a_card_processor_costs_its_time_per_frame_and_per_cell() {
        let p = CardProcessorCfg {
            tx_per_frame: Picos::from_ns(1000.0),
            rx_per_frame: Picos::from_ns(5000.0),
            per_cell: Picos::from_ns(100.0),
            engine_per_direction: false,
        };
        assert!(p.present());
        assert_eq!(p.frame_cost(true, 32), Picos::from_ns(4200.0));
        assert_eq!(p.frame_cost(false, 2), Picos::from_ns(5200.0));
        assert!(!CardProcessorCfg::default().present());
        // One engine serves both directions; two split them.
        assert_eq!((p.engine(true), p.engine(false)), (0, 0));
        let two = CardProcessorCfg {
            engine_per_direction: true,
            ..p
        };
        assert_eq!((two.engine(true), two.engine(false)), (0, 1));
        assert!(!CardProcessorCfg {
            engine_per_direction: true,
            ..CardProcessorCfg::default()
        }
        .present());
    }
}
