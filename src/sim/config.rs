//! Assembly: turns validated descriptions into the typed, unit-resolved
//! configuration the components run with. All defaults come from model files.

pub use super::bus::{BridgeCfg, BusCfg};
pub use super::cpu::{CpuCfg, CpuPlacement};
pub use super::dma::DmaCfg;
use super::engines::raw_dma::RawDmaTest;
pub use super::engines::veth::VethCfg;
pub use super::memory::MemoryCfg;
pub use super::path::{ControllerCfg, PathCfg};
pub use super::platform::{CardBridgeCfg, PlacedBus};
pub use super::testbed::TestbedCfg;
use crate::error::{Error, Result};
use crate::model::negotiate_mode;
use crate::model::schema::{
    AtmParams, BridgeParams, BusParams, CardBridgeParams, CpuParams, EthernetParams,
    FibreChannelParams, HbaParams, IoControllerParams, NicParams, RawDmaParams, ServerParams,
    TestbedParams, VethParams,
};
use crate::model::{
    BusSpec, EngineKind, Experiment, Framing, ParamSet, Registry, ServerSpec, WorkloadKind,
};
use crate::units::{BytesPerSec, Picos};

impl BusCfg {
    /// The timing of a bus mode, from its description.
    pub fn from_spec(b: &BusSpec) -> Result<BusCfg> {
        let p = BusParams::from_set(&b.params, &b.at)?;
        Ok(BusCfg {
            protocol: b.protocol,
            clock: Picos((1e6 / p.clock).round() as u64),
            bytes_per_clock: p.width * p.transfers_per_clock,
            write_overhead: whole(p.write_overhead_clocks),
            read_request: whole(p.read_request_clocks),
            completion_overhead: whole(p.completion_overhead_clocks),
            latency_timer: whole(p.latency_timer_clocks),
            max_burst: whole(p.max_burst),
            latency_timer_bytes: 0,
            whole_bytes_per_clock: 0,
        }
        .derived())
    }
    /// This timing with its derived fields computed from the others.
    fn derived(mut self) -> BusCfg {
        let bpc = self.bytes_per_clock;
        self.latency_timer_bytes = ((self.latency_timer as f64 * bpc) as u64).max(bpc as u64);
        let whole = bpc as u64;
        self.whole_bytes_per_clock = if whole as f64 == bpc && whole > 0 {
            whole
        } else {
            0
        };
        self
    }
}

impl BridgeCfg {
    /// A bridge's settings from its checked parameters.
    pub fn from_params(bp: &BridgeParams) -> BridgeCfg {
        BridgeCfg {
            posted_write_buffer: whole(bp.posted_write_buffer),
            delayed_read_slots: whole(bp.delayed_read_slots).max(1) as usize,
            delayed_read_prefetch: whole(bp.delayed_read_prefetch).max(1),
            retry_interval: Picos::from_ns(bp.retry_interval),
            register_reads_use_delayed_slots: whole(bp.register_reads_use_delayed_slots) > 0,
            posted_writes_cut_through: bp.posted_writes_cut_through.is_some_and(|c| c >= 0.5),
        }
    }
}

/// ATM cells under a frame: AAL5 pads the frame and its trailer to a whole
/// number of cell payloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellCfg {
    /// Bytes of a cell on the wire.
    pub cell: u64,
    /// Payload bytes of a cell.
    pub payload: u64,
    /// AAL5 trailer per frame.
    pub trailer: u64,
}

impl CellCfg {
    /// Cells carrying an AAL5 frame of `frame` bytes (its trailer and
    /// padding included).
    pub fn cells(&self, frame: u64) -> u64 {
        (frame + self.trailer).div_ceil(self.payload.max(1))
    }
}

/// A NIC's link framing: Ethernet frames, or frames in ATM cells (an
/// `Atm` link: `cells` is set, `rate` is the SONET payload rate and
/// `frame` the AAL5 frame, encapsulation to IP packet).
#[derive(Debug, Clone)]
pub struct EthCfg {
    /// Line rate.
    pub rate: BytesPerSec,
    /// TCP payload per full segment.
    pub mss: u64,
    /// Frame bytes (MAC header to FCS) of a full segment.
    pub frame: u64,
    /// Wire bytes of a full segment (frame + preamble + gap).
    pub wire_overhead: u64,
    /// Frame bytes of a pure ACK (at least the minimum frame).
    pub ack_frame: u64,
    /// ATM cells, for a link of ATM framing (None: Ethernet).
    pub cells: Option<CellCfg>,
    /// Preamble and start delimiter, on the medium before each frame.
    pub preamble: u64,
    /// Half duplex: the shared medium's timing (`None`: full duplex).
    pub csma: Option<super::csma::CsmaCfg>,
}

impl EthCfg {
    /// Wire bytes of a frame of `frame` bytes: the frame and its framing
    /// (preamble and gap), or the cells that carry it.
    pub fn wire_bytes(&self, frame: u64) -> u64 {
        match self.cells {
            Some(c) => c.cells(frame) * c.cell,
            None => frame + self.wire_overhead,
        }
    }
    /// Cells of a frame of `frame` bytes (zero on Ethernet).
    pub fn cells_of(&self, frame: u64) -> u64 {
        self.cells.map_or(0, |c| c.cells(frame))
    }
    /// TCP payload ceiling of the line.
    pub fn goodput_ceiling(&self) -> BytesPerSec {
        BytesPerSec(self.rate.0 * self.mss as f64 / self.wire_bytes(self.frame) as f64)
    }
}

/// Fibre Channel framing.
#[derive(Debug, Clone)]
pub struct FcCfg {
    /// Encoded byte rate (baud / bits per byte).
    pub byte_rate: BytesPerSec,
    /// Header, SOF, CRC, EOF.
    pub frame_overhead: u64,
    /// Idles between frames.
    pub idle: u64,
    /// Data payload per frame.
    pub max_payload: u64,
}

impl FcCfg {
    /// Wire bytes of a frame with `payload` bytes.
    pub fn wire_bytes(&self, payload: u64) -> u64 {
        payload + self.frame_overhead + self.idle
    }
    /// Payload ceiling of the link per direction.
    pub fn goodput_ceiling(&self) -> BytesPerSec {
        BytesPerSec(
            self.byte_rate.0 * self.max_payload as f64 / self.wire_bytes(self.max_payload) as f64,
        )
    }
}

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
}

impl CardProcessorCfg {
    /// Whether the card has a processor in the frames' path.
    pub fn present(&self) -> bool {
        *self != CardProcessorCfg::default()
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

/// HBA engine parameters.
#[derive(Debug, Clone)]
pub struct HbaCfg {
    /// DMA engine.
    pub dma: DmaCfg,
    /// Command block bytes.
    pub command: u64,
    /// Completion entry bytes.
    pub completion: u64,
    /// Receive frame buffers.
    pub rx_buffers: u32,
    /// Transmit frame buffers.
    pub tx_buffers: u32,
    /// On-card processor time per I/O (zero: no such limit).
    pub processor_per_io: Picos,
}

impl TestbedCfg {
    /// The netperf peer's costs for the data segments it receives.
    pub fn peer_cost(&self) -> crate::sim::workloads::tcp::PeerCost {
        crate::sim::workloads::tcp::PeerCost {
            processor_per_frame: self.peer_processor_per_frame,
            per_segment: self.peer_per_segment,
            per_kib_ps: self.peer_ps_per_kib,
            per_ack: self.peer_per_ack,
        }
    }
}

pub use super::workloads::diskbench::DiskStreams;

/// What drives one function.
#[derive(Debug, Clone)]
pub enum FunctionCfg {
    /// An Ethernet NIC.
    Nic {
        /// Engine.
        nic: NicCfg,
        /// Link.
        eth: EthCfg,
        /// TCP window (socket size), if a netperf runs: (out, in) streams.
        streams: (Option<u64>, Option<u64>),
        /// Bytes per send() call of the sending application (netperf's send
        /// size).
        message: u64,
        /// IP forwarding: the port the function's packets are routed to or
        /// from (`None`: the server's own stack ends the connection).
        route: Option<Route>,
    },
    /// A Fibre Channel HBA.
    Hba {
        /// Engine.
        hba: HbaCfg,
        /// Link.
        fc: FcCfg,
        /// diskbench streams.
        streams: DiskStreams,
    },
    /// A raw DMA test function (no link).
    RawDma(RawDmaCfg),
    /// Virtual Ethernet between partitions (no link, no bus).
    Veth(VethCfg),
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

impl FunctionCfg {
    /// The function's DMA engine settings.
    pub fn dma(&self) -> DmaCfg {
        match self {
            FunctionCfg::Nic { nic, .. } => nic.dma,
            FunctionCfg::Hba { hba, .. } => hba.dma,
            FunctionCfg::RawDma(r) => r.dma,
            // It never masters its bus.
            FunctionCfg::Veth(_) => DmaCfg {
                max_read: 0,
                max_outstanding: 1,
                write_burst: 0,
            },
        }
    }

    /// Wire bytes per second of its link (zero without a link).
    pub fn wire_rate(&self) -> BytesPerSec {
        match self {
            FunctionCfg::Nic { eth, .. } => eth.rate,
            FunctionCfg::Hba { fc, .. } => fc.byte_rate,
            FunctionCfg::RawDma(_) | FunctionCfg::Veth(_) => BytesPerSec(0.0),
        }
    }
}

/// A raw DMA test function: its DMA engine and the test it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawDmaCfg {
    /// DMA engine.
    pub dma: DmaCfg,
    /// The test.
    pub test: RawDmaTest,
}

/// One function, placed.
#[derive(Debug, Clone)]
pub struct PlacedFunction {
    /// `card.function` label.
    pub label: String,
    /// Link name.
    pub link: String,
    /// Index of its bus (its slot's segment, or its card's secondary bus
    /// behind an on-card bridge).
    pub bus: usize,
    /// Engine and workload.
    pub cfg: FunctionCfg,
}

/// Everything one experiment runs with.
#[derive(Debug, Clone)]
pub struct SystemCfg {
    /// Buses, one per segment.
    pub buses: Vec<PlacedBus>,
    /// The I/O controllers the buses' ropes end at.
    pub controllers: Vec<ControllerCfg>,
    /// On-card bridges, each between a slot's bus and its card's own.
    pub card_bridges: Vec<CardBridgeCfg>,
    /// Functions, in card then function order.
    pub functions: Vec<PlacedFunction>,
    /// Memory.
    pub memory: MemoryCfg,
    /// CPU costs.
    pub cpu: CpuCfg,
    /// Test bed.
    pub testbed: TestbedCfg,
    /// CPUs in the partition.
    pub cpus: u32,
    /// Which CPU plays which role for each function.
    pub placement: CpuPlacement,
}

/// The server's CPU cost `key` (ns; ns per KiB for `cpu_per_kb`): its own
/// value, or, when absent, the value of the server it names in
/// `costs_from` times that server's CPU rating over its own (a CPU twice as
/// fast on the same benchmark takes half the time). An error when neither
/// gives it (the loader reports that first).
pub fn stack_cost(reg: &Registry, server: &ServerSpec, key: &str) -> Result<f64> {
    if let Some(v) = server.params.value(key) {
        return Ok(v);
    }
    let missing = || Error::Invalid {
        at: server.at.clone(),
        message: format!("missing parameter `{key}` and no `costs_from` server to scale it from"),
    };
    let (from_name, _) = server.costs_from.as_ref().ok_or_else(missing)?;
    let from = reg.servers.get(from_name).ok_or_else(missing)?;
    let v = from.params.value(key).ok_or_else(missing)?;
    let rating = |s: &ServerSpec| -> Result<f64> {
        let (name, at) = s.cpu.as_ref().ok_or_else(missing)?;
        let cpu = reg.cpus.get(name).ok_or_else(missing)?;
        Ok(CpuParams::from_set(&cpu.params, at)?.rating)
    };
    Ok(v * rating(from)? / rating(server)?)
}

impl FunctionCfg {
    /// Whether a workload runs on the function (an idle one never masters
    /// its bus, drives its link or asks for CPU time).
    pub fn busy(&self) -> bool {
        match self {
            FunctionCfg::Nic { streams, .. } => streams.0.is_some() || streams.1.is_some(),
            FunctionCfg::Hba { streams, .. } => streams.0.is_some() || streams.1.is_some(),
            FunctionCfg::RawDma(r) => r.test.reads > 0 || r.test.writes > 0,
            FunctionCfg::Veth(v) => v.streams.0.is_some() || v.streams.1.is_some(),
        }
    }
}

impl SystemCfg {
    /// The configuration as text, without what this experiment's work never
    /// reads: the engine settings of idle functions, the TCP stack costs
    /// and netperf peer when no NIC is busy, the I/O cost and disk array
    /// when no HBA is busy. Two configurations with the same fingerprint
    /// give the same simulation (same seed), so the calibration reruns an
    /// experiment only when a parameter changes its fingerprint. Every
    /// engine kind is named here (no wildcard), so a new one must say what
    /// it reads.
    pub fn fingerprint(&self) -> String {
        let mut c = self.clone();
        let (mut nic, mut hba) = (false, false);
        for f in &mut c.functions {
            let busy = f.cfg.busy();
            match &f.cfg {
                // Virtual Ethernet reads the TCP stack costs as a NIC does.
                FunctionCfg::Nic { .. } | FunctionCfg::Veth(_) => nic |= busy,
                FunctionCfg::Hba { .. } => hba |= busy,
                FunctionCfg::RawDma(_) => {}
            }
            if !busy {
                // Only its place on the bus remains.
                f.cfg = FunctionCfg::RawDma(RawDmaCfg {
                    dma: DmaCfg {
                        max_read: 0,
                        max_outstanding: 0,
                        write_burst: 0,
                    },
                    test: RawDmaTest {
                        block: 0,
                        reads: 0,
                        writes: 0,
                    },
                });
            }
        }
        if !nic {
            c.cpu.per_packet = Picos(0);
            c.cpu.per_segment_sent = Picos(0);
            c.cpu.per_kib_ps = 0.0;
            c.cpu.per_send_call = Picos(0);
            c.cpu.ack_every = 0;
            c.testbed.peer_turnaround = Picos(0);
            c.testbed.peer_per_segment = Picos(0);
            c.testbed.peer_ps_per_kib = 0.0;
            c.testbed.peer_per_ack = Picos(0);
            c.testbed.peer_processor_per_frame = Picos(0);
        }
        if !hba {
            c.cpu.per_io = Picos(0);
            c.testbed.target_latency = Picos(0);
            c.testbed.target_ps_per_kib = 0.0;
            c.testbed.outstanding = 0;
        }
        format!("{c:?}")
    }
}

/// A NIC's on-card processor: its clocks per frame and per cell at its
/// clock (all zero without a clock: no processor).
fn card_processor(fp: &NicParams, at: &crate::error::Location) -> Result<CardProcessorCfg> {
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
    })
}

/// A NIC's framing from its link: Ethernet, or AAL5 frames in ATM cells.
fn eth_cfg(
    link: Option<&crate::model::LinkSpec>,
    set: &ParamSet,
    at: &crate::error::Location,
) -> Result<EthCfg> {
    if link.is_some_and(|l| l.framing == Framing::Atm) {
        let lp = AtmParams::from_set(set, at)?;
        let mtu = whole(lp.mtu);
        let hdrs = whole(lp.tcp_ip_headers);
        let encap = whole(lp.encapsulation);
        return Ok(EthCfg {
            rate: BytesPerSec(lp.payload_rate),
            mss: mtu.saturating_sub(hdrs).max(1),
            frame: mtu + encap,
            wire_overhead: 0,
            // AAL5 has no minimum frame: an ACK is its headers alone.
            ack_frame: encap + hdrs,
            preamble: 0,
            csma: None,
            cells: Some(CellCfg {
                cell: whole(lp.cell),
                payload: whole(lp.cell_payload).max(1),
                trailer: whole(lp.aal5_trailer),
            }),
        });
    }
    let lp = EthernetParams::from_set(set, at)?;
    let mtu = whole(lp.mtu);
    let hdrs = whole(lp.tcp_ip_headers);
    Ok(EthCfg {
        rate: BytesPerSec(lp.line_rate),
        mss: mtu.saturating_sub(hdrs).max(1),
        frame: mtu + whole(lp.header) + whole(lp.fcs),
        wire_overhead: whole(lp.preamble) + whole(lp.gap),
        ack_frame: (whole(lp.header) + hdrs + whole(lp.fcs)).max(whole(lp.min_frame)),
        preamble: whole(lp.preamble),
        csma: csma_cfg(&lp, link.map_or("", |l| l.name.as_str()), at)?,
        cells: None,
    })
}

/// Functions sharing `lines` interrupt lines, function g on line g mod
/// `lines` (as a PC's BIOS deals the slots' and bridged functions' INTA#
/// to INTD# over the chipset's PIRQ lines): every interrupt runs the handler
/// of each function on its line, whose driver reads that function's status
/// register. Each NIC's register reads per interrupt gain one per other
/// function on its line (an HBA's interrupt has no register reads in the
/// model, so sharing costs it nothing).
fn share_interrupt_lines(functions: &mut [PlacedFunction], lines: usize) {
    let n = functions.len();
    for (g, f) in functions.iter_mut().enumerate() {
        let sharers = (0..n).filter(|&h| h != g && h % lines == g % lines).count();
        if let FunctionCfg::Nic { nic, .. } = &mut f.cfg {
            nic.pio_reads += sharers as u32;
        }
    }
}

/// A TCP socket (window) must hold the segments one ACK covers, or the
/// connection stalls waiting for an ACK that never comes.
fn check_socket(
    socket_bytes: u64,
    eth: &EthCfg,
    cpu: &CpuCfg,
    at: &crate::error::Location,
) -> Result<()> {
    if socket_bytes < eth.mss * cpu.ack_every as u64 {
        return Err(Error::Invalid {
            at: at.clone(),
            message: format!(
                "socket of {socket_bytes} bytes is smaller than {} segments of {} bytes",
                cpu.ack_every, eth.mss
            ),
        });
    }
    Ok(())
}

/// A parameter that counts whole things (clocks, bytes, frames).
fn whole(v: f64) -> u64 {
    v.round().max(0.0) as u64
}

/// A DMA engine's settings from the three parameters every engine kind has.
fn dma_cfg(max_read: f64, max_outstanding_reads: f64, write_burst: f64) -> DmaCfg {
    DmaCfg {
        max_read: whole(max_read),
        max_outstanding: whole(max_outstanding_reads).max(1) as u32,
        write_burst: whole(write_burst),
    }
}

/// Builds the configuration of `exp` from the registry.
pub fn assemble(reg: &Registry, exp: &Experiment) -> Result<SystemCfg> {
    let invalid = |m: String| Error::Invalid {
        at: exp.at.clone(),
        message: m,
    };
    let server = reg
        .servers
        .get(&exp.server)
        .ok_or_else(|| invalid(format!("unknown server `{}`", exp.server)))?;
    let tb = reg
        .testbeds
        .get(&exp.testbed)
        .ok_or_else(|| invalid(format!("unknown testbed `{}`", exp.testbed)))?;
    let sp = ServerParams::from_set(&server.params, &server.at)?;
    let cells = exp.cells.max(1);
    let memory = MemoryCfg {
        local: Picos::from_ns(sp.memory_local_latency),
        remote: Picos::from_ns(sp.memory_remote_latency.unwrap_or(sp.memory_local_latency)),
        p_remote: (cells - 1) as f64 / cells as f64,
        line: whole(sp.cache_line).max(1),
        lines_in_flight: whole(sp.line_fetches_in_flight).max(1),
        bandwidth: sp.memory_bandwidth.map(|b| BytesPerSec(b * cells as f64)),
    };
    // A CPU's misses go to memory interleaved over the partition's cells.
    let cpu_latency_ns = (sp.memory_local_latency
        + sp.cpu_remote_memory_latency
            .unwrap_or(sp.memory_local_latency)
            * (cells - 1) as f64)
        / cells as f64;
    let stall = Picos::from_ns(sp.cpu_misses_per_packet * cpu_latency_ns);
    let cost = |key: &str| stack_cost(reg, server, key);
    let cpu = CpuCfg {
        per_packet: Picos::from_ns(cost("cpu_per_packet")?) + stall,
        per_segment_sent: Picos::from_ns(cost("cpu_per_segment_sent")?) + stall,
        per_kib_ps: cost("cpu_per_kb")? * 1e3,
        per_io: Picos::from_ns(cost("cpu_per_io")?),
        ack_every: whole(sp.tcp_ack_every).max(1) as u32,
        per_send_call: Picos::from_ns(stack_cost(reg, server, "cpu_per_send_call").unwrap_or(0.0)),
    };
    let tp = TestbedParams::from_set(&tb.params, &tb.at)?;
    let testbed = TestbedCfg {
        peer_turnaround: Picos::from_ns(tp.peer_turnaround),
        peer_per_segment: Picos::from_ns(tp.peer_cpu_per_segment),
        peer_ps_per_kib: tp.peer_cpu_per_kib.unwrap_or(0.0) * 1e3,
        peer_per_ack: Picos::from_ns(tp.peer_cpu_per_ack.unwrap_or(0.0)),
        peer_processor_per_frame: Picos::from_ns(tp.peer_processor_per_frame.unwrap_or(0.0)),
        target_latency: Picos::from_ns(tp.target_latency),
        target_ps_per_kib: tp.target_per_kib.unwrap_or(0.0) * 1e3,
        outstanding: whole(tp.diskbench_outstanding).max(1) as u32,
    };
    let bridge = BridgeCfg::from_params(&BridgeParams::from_set(&server.bridge, &server.at)?);
    // The bus segments the cards are on, in order of first appearance: a
    // slot naming a segment shares it with every other slot naming it.
    let mut seg_keys: Vec<String> = Vec::new();
    let mut seg_cards: Vec<Vec<usize>> = Vec::new();
    let mut card_seg = Vec::new();
    let mut card_slot = Vec::new();
    for (ci, (_, adapter_name, slot_name)) in exp.cards.iter().enumerate() {
        let adapter = &reg.adapters[adapter_name];
        let slot = server
            .slots
            .iter()
            .find(|s| &s.name == slot_name)
            .ok_or_else(|| invalid(format!("unknown slot `{slot_name}`")))?;
        negotiate_mode(adapter, slot)
            .ok_or_else(|| invalid(format!("`{adapter_name}` cannot run in slot `{slot_name}`")))?;
        let key = match &slot.segment {
            Some(seg) => format!("segment {seg}"),
            None => format!("slot {}", slot.name),
        };
        let seg = match seg_keys.iter().position(|k| *k == key) {
            Some(i) => i,
            None => {
                seg_keys.push(key);
                seg_cards.push(Vec::new());
                seg_keys.len() - 1
            }
        };
        seg_cards[seg].push(ci);
        card_seg.push(seg);
        card_slot.push(slot);
    }
    let mut buses = Vec::new();
    let mut controllers: Vec<ControllerCfg> = Vec::new();
    let mut controller_of: Vec<(usize, usize)> = Vec::new();
    for cards in &seg_cards {
        // The segment runs the fastest mode every card on it and every slot
        // of it can run: one conventional PCI card slows them all.
        let first = &reg.adapters[&exp.cards[cards[0]].1];
        let mode = first
            .modes
            .iter()
            .find(|m| {
                cards.iter().all(|&c| {
                    reg.adapters[&exp.cards[c].1].modes.contains(m)
                        && card_slot[c].modes.contains(m)
                })
            })
            .cloned()
            .ok_or_else(|| {
                let on: Vec<String> = cards
                    .iter()
                    .map(|&c| format!("`{}` in `{}`", exp.cards[c].1, exp.cards[c].2))
                    .collect();
                invalid(format!(
                    "the cards on one bus segment share no bus mode: {}",
                    on.join(", ")
                ))
            })?;
        let bus = BusCfg::from_spec(&reg.buses[&mode])?;
        // One bus adapter (bridge) serves the segment, with the ropes of
        // its first slot.
        let path = PathCfg {
            rope_rate: BytesPerSec(sp.rope_bandwidth * card_slot[cards[0]].ropes as f64),
            rope_overhead: whole(sp.rope_packet_overhead),
            io_read_latency: Picos::from_ns(sp.io_read_latency),
        };
        let label: Vec<String> = cards
            .iter()
            .map(|&c| format!("{}@{}", exp.cards[c].0, exp.cards[c].2))
            .collect();
        let controller = match card_slot[cards[0]].controller {
            Some(sc) => Some(match controller_of.iter().find(|(s, _)| *s == sc) {
                Some(&(_, local)) => local,
                None => {
                    let spec = &server.io_controllers[sc];
                    let cp = IoControllerParams::from_set(&spec.params, &spec.at)?;
                    controllers.push(ControllerCfg {
                        label: format!("{}/{}", server.name, spec.name),
                        rate: BytesPerSec(cp.bandwidth),
                        overhead: whole(cp.packet_overhead),
                        rate_both_ways: cp.bandwidth_both_ways.map(BytesPerSec),
                    });
                    controller_of.push((sc, controllers.len() - 1));
                    controllers.len() - 1
                }
            }),
            None => None,
        };
        buses.push(PlacedBus {
            label: label.join("+"),
            mode,
            bus,
            bridge: bridge.clone(),
            path,
            controller,
            upstream: None,
        });
    }
    // A card with its own bridge puts its functions on a secondary bus of
    // their own, in the card's mode, behind the bridge on the slot's bus.
    let mut card_bus = card_seg.clone();
    let mut card_bridges = Vec::new();
    for (ci, (label, adapter_name, slot_name)) in exp.cards.iter().enumerate() {
        let Some(cb) = &reg.adapters[adapter_name].bridge else {
            continue;
        };
        let spec = reg.buses.get(&cb.secondary_mode).ok_or_else(|| {
            invalid(format!(
                "unknown bus mode `{}` behind `{adapter_name}`",
                cb.secondary_mode
            ))
        })?;
        let pp = CardBridgeParams::from_set(&cb.primary, &cb.at)?;
        card_bridges.push(CardBridgeCfg {
            parent: card_seg[ci],
            dma: dma_cfg(pp.max_read, pp.max_outstanding_reads, pp.write_burst),
        });
        // It has no ropes (reported with no capacity): what goes up crosses
        // the bridge.
        let path = PathCfg {
            rope_rate: BytesPerSec(0.0),
            ..buses[card_seg[ci]].path.clone()
        };
        buses.push(PlacedBus {
            label: format!("{label}@{slot_name}/bridge"),
            mode: cb.secondary_mode.clone(),
            bus: BusCfg::from_spec(spec)?,
            bridge: BridgeCfg::from_params(&BridgeParams::from_set(&cb.secondary, &cb.at)?),
            path,
            controller: None,
            upstream: Some(card_bridges.len() - 1),
        });
        card_bus[ci] = buses.len() - 1;
    }
    let mut functions = Vec::new();
    // Per function (global index), the scenario's workloads on it.
    let mut workloads_of = Vec::new();
    for (ci, (label, adapter_name, _)) in exp.cards.iter().enumerate() {
        let adapter = &reg.adapters[adapter_name];
        for (fi, f) in adapter.functions.iter().enumerate() {
            let empty = ParamSet::default();
            // The scenario may run the card over another link of the same
            // framing (an interface setting: MTU, encapsulation).
            let link_name = match (&f.link, exp.links.get(ci).and_then(|l| l.as_ref())) {
                (Some(_), Some(over)) => Some(over.clone()),
                (l, _) => l.clone(),
            };
            let link = link_name.as_ref().and_then(|l| reg.links.get(l));
            let link_set = match link {
                Some(l) => &l.params,
                None => &empty,
            };
            let work: Vec<_> = exp
                .workloads
                .iter()
                .filter(|w| w.card == ci && w.function == fi)
                .collect();
            let cfg = match f.engine {
                EngineKind::Nic => {
                    let eth = eth_cfg(link, link_set, &f.at)?;
                    let fp = NicParams::from_set(&f.params, &f.at)?;
                    let mut streams = (None, None);
                    let mut message = u64::MAX;
                    let mut route = None;
                    // The card's forwarding workloads through this port:
                    // entering by it (its own), or leaving by it.
                    for w in exp.workloads.iter().filter(|w| w.card == ci) {
                        let WorkloadKind::IpForward {
                            to,
                            socket_bytes,
                            message_bytes,
                        } = w.kind
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
                        if route.is_some() || (!ingress && !work.is_empty()) {
                            return Err(Error::Invalid {
                                at: w.at.clone(),
                                message: "a port forwards one stream and runs nothing else".into(),
                            });
                        }
                        check_socket(socket_bytes, &eth, &cpu, &w.at)?;
                        message = message_bytes.max(1);
                        route = Some(Route {
                            peer: functions.len() - fi + other,
                            ingress,
                        });
                        if ingress {
                            streams.1 = Some(socket_bytes);
                        } else {
                            streams.0 = Some(socket_bytes);
                        }
                    }
                    for w in &work {
                        if let WorkloadKind::NetperfTcpStream {
                            socket_bytes,
                            message_bytes,
                        } = w.kind
                        {
                            message = message_bytes.max(1);
                            check_socket(socket_bytes, &eth, &cpu, &w.at)?;
                            use crate::model::Direction::*;
                            match w.direction {
                                Out => streams.0 = Some(socket_bytes),
                                In => streams.1 = Some(socket_bytes),
                                Both => streams = (Some(socket_bytes), Some(socket_bytes)),
                            }
                        }
                    }
                    let nic = NicCfg {
                        dma: dma_cfg(fp.max_read, fp.max_outstanding_reads, fp.write_burst),
                        descriptor: whole(fp.descriptor),
                        rx_desc_batch: whole(fp.rx_descriptor_batch).max(1) as u32,
                        tx_ring: whole(fp.tx_ring_frames).max(1) as u32,
                        tx_fifo: whole(fp.tx_fifo),
                        rx_fifo: whole(fp.rx_fifo),
                        pio_reads: whole(fp.pio_reads_per_interrupt) as u32,
                        processor: card_processor(&fp, &f.at)?,
                        flow_control: fp.flow_control.is_none_or(|v| v > 0.0) && eth.csma.is_none(),
                    };
                    if nic.tx_fifo < eth.frame || nic.rx_fifo < eth.frame {
                        return Err(Error::Invalid {
                            at: f.at.clone(),
                            message: format!("NIC FIFOs must hold one {}-byte frame", eth.frame),
                        });
                    }
                    FunctionCfg::Nic {
                        nic,
                        eth,
                        streams,
                        message,
                        route,
                    }
                }
                EngineKind::Hba => {
                    let lp = FibreChannelParams::from_set(link_set, &f.at)?;
                    let fp = HbaParams::from_set(&f.params, &f.at)?;
                    let fc = FcCfg {
                        byte_rate: BytesPerSec(lp.baud / lp.bits_per_byte),
                        frame_overhead: whole(lp.frame_overhead),
                        idle: whole(lp.idle_between_frames),
                        max_payload: whole(lp.max_payload),
                    };
                    let mut streams = (None, None);
                    for w in &work {
                        if let WorkloadKind::Diskbench {
                            block_bytes,
                            outstanding,
                        } = w.kind
                        {
                            let s = Some((block_bytes, outstanding.unwrap_or(testbed.outstanding)));
                            use crate::model::Direction::*;
                            match w.direction {
                                Out => streams.0 = s,
                                In => streams.1 = s,
                                Both => streams = (s, s),
                            }
                        }
                    }
                    let hba = HbaCfg {
                        dma: dma_cfg(fp.max_read, fp.max_outstanding_reads, fp.write_burst),
                        command: whole(fp.command_bytes),
                        completion: whole(fp.completion_bytes),
                        rx_buffers: whole(fp.rx_buffer_frames).max(1) as u32,
                        tx_buffers: whole(fp.tx_buffer_frames).max(1) as u32,
                        processor_per_io: Picos::from_ns(fp.processor_per_io.unwrap_or(0.0)),
                    };
                    FunctionCfg::Hba { hba, fc, streams }
                }
                EngineKind::Veth => FunctionCfg::Veth(VethCfg::assemble(
                    &VethParams::from_set(&f.params, &f.at)?,
                    &work,
                    cpu.ack_every,
                )?),
                EngineKind::RawDma => {
                    let fp = RawDmaParams::from_set(&f.params, &f.at)?;
                    let mut test = RawDmaTest {
                        block: 0,
                        reads: 0,
                        writes: 0,
                    };
                    for w in &work {
                        if let WorkloadKind::RawDma {
                            block_bytes,
                            outstanding,
                        } = w.kind
                        {
                            use crate::model::Direction::*;
                            test.block = block_bytes;
                            match w.direction {
                                Out => test.reads = outstanding,
                                In => test.writes = outstanding,
                                Both => (test.reads, test.writes) = (outstanding, outstanding),
                            }
                        }
                    }
                    FunctionCfg::RawDma(RawDmaCfg {
                        dma: dma_cfg(fp.max_read, fp.max_outstanding_reads, fp.write_burst),
                        test,
                    })
                }
            };
            workloads_of.push(work);
            functions.push(PlacedFunction {
                label: format!("{label}.{}", f.name),
                link: link_name.clone().unwrap_or_else(|| "none".into()),
                bus: card_bus[ci],
                cfg,
            });
        }
    }
    let cpus = (cells as u64 * whole(sp.cpus_per_cell)) as u32;
    if cpus == 0 {
        return Err(invalid("the partition has no CPU".to_string()));
    }
    // The netperf processes each function has: (send, receive).
    let processes: Vec<[bool; 2]> = functions
        .iter()
        .map(|pf| match &pf.cfg {
            FunctionCfg::Nic {
                streams,
                route: None,
                ..
            } => [streams.0.is_some(), streams.1.is_some()],
            // A forwarded stream runs no process on the server.
            FunctionCfg::Nic { route: Some(_), .. } => [false, false],
            FunctionCfg::Veth(v) => [v.streams.0.is_some(), v.streams.1.is_some()],
            FunctionCfg::Hba { .. } | FunctionCfg::RawDma(_) => [false, false],
        })
        .collect();
    // The scenario's pins, each on a CPU of the partition; one function's
    // interrupts pinned once.
    let mut pins: Vec<[Option<usize>; 2]> = vec![[None, None]; functions.len()];
    for (f, work) in workloads_of.iter().enumerate() {
        for w in work {
            for (i, pin) in [&w.interrupt_cpu, &w.process_cpu].into_iter().enumerate() {
                let Some((c, at)) = pin else {
                    continue;
                };
                if *c >= cpus {
                    return Err(Error::Invalid {
                        at: at.clone(),
                        message: format!(
                            "CPU {c} is not in the partition: it has {cpus} CPUs, numbered from 0"
                        ),
                    });
                }
                if pins[f][i].is_some_and(|p| p != *c as usize) {
                    return Err(Error::Invalid {
                        at: at.clone(),
                        message: "another workload of this function pins it to another CPU".into(),
                    });
                }
                pins[f][i] = Some(*c as usize);
            }
        }
    }
    if let Some(lines) = sp.interrupt_lines {
        share_interrupt_lines(&mut functions, whole(lines).max(1) as usize);
    }
    let busy: Vec<bool> = workloads_of.iter().map(|w| !w.is_empty()).collect();
    let placement = CpuPlacement::pinned(cpus as usize, &processes, &pins, &busy);
    Ok(SystemCfg {
        buses,
        controllers,
        card_bridges,
        functions,
        memory,
        cpu,
        testbed,
        cpus,
        placement,
    })
}

/// The half-duplex timing of an Ethernet link, if it is half duplex: all of
/// `slot_time`, `jam`, `backoff_limit`, `attempt_limit` and `propagation`, or
/// none of them (full duplex).
fn csma_cfg(
    lp: &EthernetParams,
    link: &str,
    at: &crate::error::Location,
) -> Result<Option<super::csma::CsmaCfg>> {
    let keys = [
        lp.slot_time,
        lp.jam,
        lp.backoff_limit,
        lp.attempt_limit,
        lp.propagation,
    ];
    match keys {
        [None, None, None, None, None] => Ok(None),
        [Some(slot), Some(jam), Some(backoff), Some(attempts), Some(prop)] => {
            let rate = BytesPerSec(lp.line_rate);
            Ok(Some(super::csma::CsmaCfg {
                slot: Picos::to_move(whole(slot), rate),
                jam: Picos::to_move(whole(jam), rate),
                ifg: Picos::to_move(whole(lp.gap), rate),
                propagation: Picos::from_ns(prop),
                backoff_limit: whole(backoff) as u32,
                attempt_limit: whole(attempts).max(1) as u32,
                rate,
            }))
        }
        _ => Err(Error::Invalid {
            at: at.clone(),
            message: format!(
                "link `{link}`: a half-duplex link needs all of slot_time, jam, backoff_limit, attempt_limit and propagation, a full-duplex one none"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::load_registry;

    /// The framing of a bundled link, as a NIC on it sees it.
    fn framing(link: &str) -> EthCfg {
        let reg = load_registry(&[]).expect("bundled models load");
        let l = &reg.links[link];
        eth_cfg(Some(l), &l.params, &l.at).expect("a complete link")
    }

    #[test]
    fn an_aal5_frame_is_padded_to_whole_cells_with_its_trailer() {
        let c = CellCfg {
            cell: 53,
            payload: 48,
            trailer: 8,
        };
        // 40 bytes + 8 = 48: one cell; one byte more needs a second.
        assert_eq!(c.cells(40), 1);
        assert_eq!(c.cells(41), 2);
        // LANE MTU 9218: 9234-byte frame + 8 = 9242 bytes, 193 cells.
        assert_eq!(c.cells(9234), 193);
        // LANE MTU 1500: 1516 + 8 = 1524 bytes, 32 cells.
        assert_eq!(c.cells(1516), 32);
    }

    #[test]
    fn atm_goodput_comes_from_the_cell_arithmetic() {
        let lane = framing("atm155-lane9218");
        assert_eq!((lane.frame, lane.mss), (9234, 9178));
        assert_eq!(lane.wire_bytes(lane.frame), 193 * 53);
        // 149.76 Mbit/s x 9178 / (193 x 53) = 134.37 Mbit/s of TCP payload
        // (the paper's four adapters: 538 outbound, 134.5 each).
        let g = lane.goodput_ceiling().0 * 8.0 / 1e6;
        assert!((g - 134.37).abs() < 0.01, "{g}");
        // The ACK: LE and Ethernet headers + TCP/IP, 56 bytes, two cells.
        assert_eq!(lane.wire_bytes(lane.ack_frame), 2 * 53);
        let small = framing("atm155-lane1516");
        let g = small.goodput_ceiling().0 * 8.0 / 1e6;
        // 149.76 x 1460 / (32 x 53) = 128.92 Mbit/s.
        assert!((g - 128.92).abs() < 0.01, "{g}");
        let clip = framing("atm622-clip9180");
        // 9180 + 8 LLC/SNAP + 8 trailer = 9196 bytes: 192 cells (9216).
        assert_eq!(clip.wire_bytes(clip.frame), 192 * 53);
        let g = clip.goodput_ceiling().0 * 8.0 / 1e6;
        assert!((g - 599.04 * 9140.0 / (192.0 * 53.0)).abs() < 0.01, "{g}");
        // Ethernet is unchanged: frame plus preamble and gap.
        let gige = framing("gige");
        assert_eq!(gige.wire_bytes(gige.frame), 1518 + 20);
        assert_eq!(gige.cells_of(gige.frame), 0);
    }

    #[test]
    fn processor_clocks_without_a_processor_clock_are_an_error_not_ignored() {
        let mut reg = load_registry(&[]).expect("bundled models load");
        let scenarios = crate::loader::load_bundled_scenarios(&reg).expect("scenarios load");
        let exp = scenarios
            .iter()
            .find(|s| s.name == "atm-atm155-n4000")
            .and_then(|s| s.experiments.first())
            .expect("the ATM/155 table")
            .clone();
        assert!(assemble(&reg, &exp).is_ok());
        let a = reg.adapters.get_mut("a5483a").expect("the ATM/155 card");
        for f in &mut a.functions {
            f.params.map.remove("processor_clock");
        }
        let e = assemble(&reg, &exp).expect_err("clocks without a clock");
        assert!(e.to_string().contains("processor_clock"), "{e}");
    }

    #[test]
    fn a_card_processor_costs_its_time_per_frame_and_per_cell() {
        let p = CardProcessorCfg {
            tx_per_frame: Picos::from_ns(1000.0),
            rx_per_frame: Picos::from_ns(5000.0),
            per_cell: Picos::from_ns(100.0),
        };
        assert!(p.present());
        assert_eq!(p.frame_cost(true, 32), Picos::from_ns(4200.0));
        assert_eq!(p.frame_cost(false, 2), Picos::from_ns(5200.0));
        assert!(!CardProcessorCfg::default().present());
    }
}
