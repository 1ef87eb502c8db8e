//! Assembly: turns validated descriptions into the typed, unit-resolved
//! configuration the components run with. All defaults come from model files.
//!
//! Assembly sits above the hardware and the engines: it resolves the
//! experiment's cards with the one card check ([`crate::model::fit_card`],
//! [`crate::model::fit_segments`]), builds the platform's part (buses,
//! bridges, ropes, controllers, memory, CPU and stack costs, test bed) and
//! asks each function's engine kind for its own configuration
//! ([`FunctionCfg::assemble`], dispatched over the list in
//! [`super::engines`]), then places the CPUs. The engines' configuration
//! types live in their own files and are re-exported here. A server's CPU
//! costs are read once, typed, through [`StackCosts`].

pub use super::bus::{BridgeCfg, BusCfg};
pub use super::cpu::{CpuCfg, CpuPlacement};
pub use super::dma::DmaCfg;
pub use super::engines::framing::{CellCfg, EthCfg, FcCfg};
pub use super::engines::hba::{HbaCfg, HbaFunction};
pub use super::engines::nic::{CardProcessorCfg, NicCfg, NicFunction, Route};
pub use super::engines::raw_dma::{RawDmaCfg, RawDmaTest};
pub use super::engines::veth::VethCfg;
pub use super::engines::FunctionCfg;
use super::engines::{whole, FunctionInput, Reads};
pub use super::memory::MemoryCfg;
pub use super::path::{ControllerCfg, PathCfg};
pub use super::platform::{CardBridgeCfg, PlacedBus};
pub use super::testbed::TestbedCfg;
pub use super::workloads::diskbench::DiskStreams;
use crate::error::{Error, Result};
use crate::model::schema::{
    BridgeParams, BusParams, CardBridgeParams, CpuParams, IoControllerParams, ServerParams,
    TestbedParams,
};
use crate::model::{
    fit_cards, fit_segments, BusSpec, CardFit, Experiment, LinkSpec, Registry, SegmentFit,
    ServerSpec,
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

/// A server's CPU costs, in nanoseconds (`per_kb`: per KiB of payload),
/// each its own value or, when its model leaves it out, the value of the
/// server it names in `costs_from` times that server's CPU rating over its
/// own (a CPU twice as fast on the same benchmark takes half the time).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StackCosts {
    /// `cpu_per_packet`.
    pub per_packet: f64,
    /// `cpu_per_segment_sent`.
    pub per_segment_sent: f64,
    /// `cpu_per_kb`.
    pub per_kb: f64,
    /// `cpu_per_kb_sent`, where this server or its `costs_from` server
    /// gives it.
    pub per_kb_sent: Option<f64>,
    /// `cpu_per_io`.
    pub per_io: f64,
    /// `cpu_per_send_call`, where this server or its `costs_from` server
    /// gives it.
    pub per_send_call: Option<f64>,
    /// `cpu_checksum_per_kb`, where this server or its `costs_from` server
    /// gives it.
    pub checksum_per_kb: Option<f64>,
}

impl StackCosts {
    /// The costs of `server` (whose parameters are `own`). An error when a
    /// required cost is neither given nor scalable (the loader reports that
    /// first).
    pub fn of(reg: &Registry, server: &ServerSpec, own: &ServerParams) -> Result<StackCosts> {
        let missing = |key: &str| Error::Invalid {
            at: server.at.clone(),
            message: format!(
                "missing parameter `{key}` and no `costs_from` server to scale it from"
            ),
        };
        // The `costs_from` server's parameters and the ratio of the ratings,
        // where there is such a server.
        let from = match &server.costs_from {
            Some((name, _)) => {
                let from = reg.servers.get(name).ok_or_else(|| missing("costs_from"))?;
                let rating = |s: &ServerSpec| -> Result<f64> {
                    let (name, at) = s.cpu.as_ref().ok_or_else(|| missing("cpu"))?;
                    let cpu = reg.cpus.get(name).ok_or_else(|| missing("cpu"))?;
                    Ok(CpuParams::from_set(&cpu.params, at)?.rating)
                };
                let fp = ServerParams::from_set(&from.params, &from.at)?;
                Some((fp, rating(from)? / rating(server)?))
            }
            None => None,
        };
        let pick = |mine: Option<f64>, theirs: fn(&ServerParams) -> Option<f64>| {
            mine.or_else(|| from.as_ref().and_then(|(fp, r)| theirs(fp).map(|v| v * r)))
        };
        let need = |v: Option<f64>, key: &str| v.ok_or_else(|| missing(key));
        Ok(StackCosts {
            per_packet: need(
                pick(own.cpu_per_packet, |p| p.cpu_per_packet),
                "cpu_per_packet",
            )?,
            per_segment_sent: need(
                pick(own.cpu_per_segment_sent, |p| p.cpu_per_segment_sent),
                "cpu_per_segment_sent",
            )?,
            per_kb: need(pick(own.cpu_per_kb, |p| p.cpu_per_kb), "cpu_per_kb")?,
            per_kb_sent: pick(own.cpu_per_kb_sent, |p| p.cpu_per_kb_sent),
            per_io: need(pick(own.cpu_per_io, |p| p.cpu_per_io), "cpu_per_io")?,
            per_send_call: pick(own.cpu_per_send_call, |p| p.cpu_per_send_call),
            checksum_per_kb: pick(own.cpu_checksum_per_kb, |p| p.cpu_checksum_per_kb),
        })
    }
}

impl SystemCfg {
    /// The configuration as text, without what this experiment's work never
    /// reads: the engine settings of idle functions; the TCP stack costs
    /// when no NIC is busy, its costs of sending data when no busy function
    /// sends any of its own, its cost per KiB received when none takes
    /// payload in, and the netperf peer when no data reaches it; the I/O
    /// cost and disk array when no HBA is busy. Two configurations with the
    /// same fingerprint give the same simulation (same seed), so the
    /// calibration reruns an experiment only when a parameter changes its
    /// fingerprint. Every engine kind says what it reads
    /// ([`super::engines::EngineType::reads`], no default).
    pub fn fingerprint(&self) -> String {
        let mut c = self.clone();
        let all = c
            .functions
            .iter()
            .filter(|f| f.cfg.busy())
            .fold(Reads::default(), |all, f| all.or(f.cfg.reads()));
        for f in &mut c.functions {
            if !f.cfg.busy() {
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
        if !all.tcp {
            c.cpu.per_packet = Picos(0);
            c.cpu.checksum_kib_ps = 0.0;
            c.cpu.ack_every = 0;
        }
        if !all.tcp_sends {
            c.cpu.per_segment_sent = Picos(0);
            c.cpu.per_kib_sent_ps = 0.0;
            c.cpu.per_send_call = Picos(0);
        }
        if !all.tcp_receives {
            c.cpu.per_kib_ps = 0.0;
        }
        if !all.peer_receives {
            c.testbed.peer_turnaround = Picos(0);
            c.testbed.peer_per_segment = Picos(0);
            c.testbed.peer_ps_per_kib = 0.0;
            c.testbed.peer_per_ack = Picos(0);
            c.testbed.peer_processor_per_frame = Picos(0);
        }
        if !all.disk {
            c.cpu.per_io = Picos(0);
            c.testbed.target_latency = Picos(0);
            c.testbed.target_ps_per_kib = 0.0;
            c.testbed.outstanding = 0;
        }
        format!("{c:?}")
    }
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
        f.cfg.share_interrupt_line(sharers as u32);
    }
}

/// Builds the configuration of `exp` from the registry: [`Resolved::new`],
/// then [`Resolved::assemble`].
pub fn assemble(reg: &Registry, exp: &Experiment) -> Result<SystemCfg> {
    Ok(Resolved::new(reg, exp)?.assemble())
}

/// An on-card bridge resolved: its secondary bus's mode and timing, the
/// bridge as that bus sees it, and its DMA on the slot's bus.
#[derive(Debug, Clone)]
struct CardBridgeFit<'a> {
    mode: &'a str,
    bus: BusCfg,
    bridge: BridgeCfg,
    dma: DmaCfg,
}

/// An experiment resolved against the registry, every check made: its
/// server's and test bed's parameters in unit types, its cards with their
/// adapter, slot, link and bus mode ([`fit_cards`], [`fit_segments`]), its
/// I/O controllers and on-card bridges, each function's engine
/// configuration ([`FunctionCfg::assemble`]) and the CPUs its workloads are
/// pinned to. The loader makes one of each experiment it reads (so an
/// input error of any of these is reported with its file, key and line),
/// a sweep one of each point, and every run one before it simulates;
/// [`Resolved::assemble`] then only wires it.
#[derive(Debug, Clone)]
pub struct Resolved<'a> {
    exp: &'a Experiment,
    sp: ServerParams,
    memory: MemoryCfg,
    cpu: CpuCfg,
    testbed: TestbedCfg,
    bridge: BridgeCfg,
    fits: Vec<CardFit<'a>>,
    segments: Vec<(SegmentFit<'a>, BusCfg)>,
    /// Per I/O controller of the server, its link, where a segment's ropes
    /// end at it.
    controllers: Vec<Option<ControllerCfg>>,
    /// Per card, its on-card bridge, if it has one.
    card_bridges: Vec<Option<CardBridgeFit<'a>>>,
    /// Per card, per function: its engine's configuration and its link.
    functions: Vec<Vec<(FunctionCfg, Option<&'a LinkSpec>)>>,
    cpus: u32,
    /// Per function (global index): its interrupts' and its processes'
    /// pinned CPU.
    pins: Vec<[Option<usize>; 2]>,
}

impl<'a> Resolved<'a> {
    /// Resolves and checks `exp` against `reg`. An error names where the
    /// input is wrong; an experiment the loaders have not checked (an
    /// unknown server, test bed, adapter or slot) is a defect
    /// (`Error::Internal`).
    pub fn new(reg: &'a Registry, exp: &'a Experiment) -> Result<Resolved<'a>> {
        let invalid = |m: String| Error::Invalid {
            at: exp.at.clone(),
            message: m,
        };
        // What the loaders check: its absence here is a defect.
        let unchecked = |m: String| Error::Internal(format!("experiment `{}`: {m}", exp.id));
        let server = reg
            .servers
            .get(&exp.server)
            .ok_or_else(|| unchecked(format!("unknown server `{}`", exp.server)))?;
        let tb = reg
            .testbeds
            .get(&exp.testbed)
            .ok_or_else(|| unchecked(format!("unknown testbed `{}`", exp.testbed)))?;
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
        let costs = StackCosts::of(reg, server, &sp)?;
        let cpu = CpuCfg {
            per_packet: Picos::from_ns(costs.per_packet) + stall,
            per_segment_sent: Picos::from_ns(costs.per_segment_sent) + stall,
            per_kib_ps: costs.per_kb * 1e3,
            per_kib_sent_ps: costs.per_kb_sent.unwrap_or(costs.per_kb) * 1e3,
            per_io: Picos::from_ns(costs.per_io),
            ack_every: whole(sp.tcp_ack_every).max(1) as u32,
            per_send_call: Picos::from_ns(costs.per_send_call.unwrap_or(0.0)),
            checksum_kib_ps: costs.checksum_per_kb.unwrap_or(0.0) * 1e3,
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
        // The loaders and a sweep's points check the cards (the partition
        // too): one that does not fit here is a defect.
        let fits = fit_cards(reg, server, exp, None).map_err(|(j, problems)| {
            let words: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
            unchecked(format!("card `{}`: {}", exp.cards[j].0, words.join("; ")))
        })?;
        let mut segments = Vec::new();
        let mut controllers = vec![None; server.io_controllers.len()];
        for seg in fit_segments(&fits).map_err(invalid)? {
            let bus = BusCfg::from_spec(&reg.buses[seg.mode])?;
            if let Some(sc) = fits[seg.cards[0]].slot.controller {
                let spec = &server.io_controllers[sc];
                let cp = IoControllerParams::from_set(&spec.params, &spec.at)?;
                controllers[sc] = Some(ControllerCfg {
                    label: format!("{}/{}", server.name, spec.name),
                    rate: BytesPerSec(cp.bandwidth),
                    overhead: whole(cp.packet_overhead),
                    rate_both_ways: cp.bandwidth_both_ways.map(BytesPerSec),
                });
            }
            segments.push((seg, bus));
        }
        let mut card_bridges = Vec::new();
        for fit in &fits {
            let Some(cb) = &fit.adapter.bridge else {
                card_bridges.push(None);
                continue;
            };
            let spec = reg.buses.get(&cb.secondary_mode).ok_or_else(|| {
                unchecked(format!(
                    "unknown bus mode `{}` behind `{}`",
                    cb.secondary_mode, fit.adapter.name
                ))
            })?;
            let pp = CardBridgeParams::from_set(&cb.primary, &cb.at)?;
            card_bridges.push(Some(CardBridgeFit {
                mode: &cb.secondary_mode,
                bus: BusCfg::from_spec(spec)?,
                bridge: BridgeCfg::from_params(&BridgeParams::from_set(&cb.secondary, &cb.at)?),
                dma: super::engines::dma_from_params(
                    pp.max_read,
                    pp.max_outstanding_reads,
                    pp.write_burst,
                ),
            }));
        }
        let mut functions = Vec::new();
        let mut first = 0;
        for (ci, fit) in fits.iter().enumerate() {
            let card_work: Vec<_> = exp.workloads.iter().filter(|w| w.card == ci).collect();
            let mut on_card = Vec::new();
            for (fi, f) in fit.adapter.functions.iter().enumerate() {
                // The scenario may run the card over another link of the
                // same framing (an interface setting: MTU, encapsulation).
                let link = match (&f.link, fit.link) {
                    (Some(_), Some(over)) => Some(over),
                    (l, _) => l.as_ref().and_then(|l| reg.links.get(l)),
                };
                let input = FunctionInput {
                    spec: f,
                    link,
                    index: fi,
                    first,
                    card_work: &card_work,
                    cpu: &cpu,
                    testbed: &testbed,
                };
                on_card.push((FunctionCfg::assemble(f.engine, &input)?, link));
            }
            first += on_card.len();
            functions.push(on_card);
        }
        let per_cell = exp
            .cpus_per_cell
            .map_or_else(|| whole(sp.cpus_per_cell), u64::from);
        let cpus = (cells as u64 * per_cell) as u32;
        if cpus == 0 {
            return Err(invalid("the partition has no CPU".to_string()));
        }
        // The scenario's pins, each on a CPU of the partition; one
        // function's interrupts pinned once.
        let mut pins: Vec<[Option<usize>; 2]> = vec![[None, None]; first];
        let base: Vec<usize> = functions
            .iter()
            .scan(0, |n, f| {
                let b = *n;
                *n += f.len();
                Some(b)
            })
            .collect();
        for w in &exp.workloads {
            let f = base[w.card] + w.function;
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
        Ok(Resolved {
            exp,
            sp,
            memory,
            cpu,
            testbed,
            bridge,
            fits,
            segments,
            controllers,
            card_bridges,
            functions,
            cpus,
            pins,
        })
    }

    /// Wires the resolved experiment into the configuration the components
    /// run with: buses in order of first appearance (a shared segment's
    /// first card gives its ropes and controller), the secondary buses of
    /// on-card bridges after them, the functions in card order, the
    /// interrupt lines shared, and the CPUs placed.
    pub fn assemble(&self) -> SystemCfg {
        let (exp, sp) = (self.exp, &self.sp);
        let mut card_seg = vec![0; self.fits.len()];
        let mut buses = Vec::new();
        let mut controllers: Vec<ControllerCfg> = Vec::new();
        let mut controller_of: Vec<(usize, usize)> = Vec::new();
        for (g, (seg, bus)) in self.segments.iter().enumerate() {
            let cards = &seg.cards;
            for &c in cards {
                card_seg[c] = g;
            }
            let slot = self.fits[cards[0]].slot;
            // One bus adapter (bridge) serves the segment, with the ropes
            // of its first slot; a bus converter with no ropes hands what
            // it moves straight to its I/O controller (a rope stage that
            // takes no time).
            let path = PathCfg {
                rope_rate: match slot.ropes {
                    0 => BytesPerSec(f64::INFINITY),
                    n => BytesPerSec(sp.rope_bandwidth.unwrap_or(0.0) * f64::from(n)),
                },
                rope_overhead: match slot.ropes {
                    0 => 0,
                    _ => whole(sp.rope_packet_overhead.unwrap_or(0.0)),
                },
                io_read_latency: Picos::from_ns(sp.io_read_latency),
            };
            let label: Vec<String> = cards
                .iter()
                .map(|&c| format!("{}@{}", exp.cards[c].0, exp.cards[c].2))
                .collect();
            let controller = slot.controller.and_then(|sc| {
                if let Some(&(_, local)) = controller_of.iter().find(|(s, _)| *s == sc) {
                    return Some(local);
                }
                controllers.push(self.controllers[sc].clone()?);
                controller_of.push((sc, controllers.len() - 1));
                Some(controllers.len() - 1)
            });
            buses.push(PlacedBus {
                label: label.join("+"),
                mode: seg.mode.to_string(),
                bus: *bus,
                bridge: self.bridge.clone(),
                path,
                controller,
                upstream: None,
            });
        }
        // A card with its own bridge puts its functions on a secondary bus
        // of their own, in the card's mode, behind the bridge on the slot's
        // bus.
        let mut card_bus = card_seg.clone();
        let mut card_bridges = Vec::new();
        for (ci, (label, _, slot_name)) in exp.cards.iter().enumerate() {
            let Some(cb) = &self.card_bridges[ci] else {
                continue;
            };
            card_bridges.push(CardBridgeCfg {
                parent: card_seg[ci],
                dma: cb.dma,
            });
            // It has no ropes (reported with no capacity): what goes up
            // crosses the bridge.
            let path = PathCfg {
                rope_rate: BytesPerSec(0.0),
                ..buses[card_seg[ci]].path.clone()
            };
            buses.push(PlacedBus {
                label: format!("{label}@{slot_name}/bridge"),
                mode: cb.mode.to_string(),
                bus: cb.bus,
                bridge: cb.bridge.clone(),
                path,
                controller: None,
                upstream: Some(card_bridges.len() - 1),
            });
            card_bus[ci] = buses.len() - 1;
        }
        let mut functions = Vec::new();
        // Per function (global index), whether a workload runs on it.
        let mut busy = Vec::new();
        for (ci, (label, _, _)) in exp.cards.iter().enumerate() {
            let specs = &self.fits[ci].adapter.functions;
            for (fi, ((cfg, link), f)) in self.functions[ci].iter().zip(specs).enumerate() {
                busy.push(
                    exp.workloads
                        .iter()
                        .any(|w| w.card == ci && w.function == fi),
                );
                functions.push(PlacedFunction {
                    label: format!("{label}.{}", f.name),
                    link: link.map_or_else(|| "none".into(), |l| l.name.clone()),
                    bus: card_bus[ci],
                    cfg: cfg.clone(),
                });
            }
        }
        // The processes each function has on the server: (send, receive).
        let processes: Vec<[bool; 2]> = functions.iter().map(|pf| pf.cfg.processes()).collect();
        if let Some(lines) = sp.interrupt_lines {
            share_interrupt_lines(&mut functions, whole(lines).max(1) as usize);
        }
        let names = functions.iter().map(|pf| pf.cfg.process_names()).collect();
        let placement =
            CpuPlacement::pinned(self.cpus as usize, &processes, &self.pins, &busy).named(names);
        SystemCfg {
            buses,
            controllers,
            card_bridges,
            functions,
            memory: self.memory.clone(),
            cpu: self.cpu.clone(),
            testbed: self.testbed.clone(),
            cpus: self.cpus,
            placement,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::load_registry;

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
}
