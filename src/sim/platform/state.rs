//! The platform's state: the hardware of one experiment (buses and their
//! bridges, ropes, I/O controllers, memory, CPUs, wires and half-duplex
//! segments, the functions' DMA ports) and the configuration that wires
//! them, built from a [`PlatformCfg`].
//!
//! Uses hardware and results only: never an engine, a workload or the
//! assembly.

use crate::engine::RngStream;
use crate::sim::bus::{BridgeCfg, Bus, BusCfg};
use crate::sim::cpu::{Cpu, CpuCfg, CpuPlacement};
use crate::sim::csma::{CsmaCfg, Medium};
use crate::sim::dma::{DmaCfg, DmaPort};
use crate::sim::memory::{MemoryCfg, MemoryNode};
use crate::sim::path::{Controller, ControllerCfg, PathCfg, Rope};
use crate::sim::result::Totals;
use crate::sim::testbed::TestbedCfg;
use crate::sim::wire::{Frame, SharedBus, Wire};
use crate::units::{BytesPerSec, Picos};

/// Where one DMA port sits (a function, or an on-card bridge mastering its
/// slot's bus) and how it reads.
#[derive(Debug, Clone, Copy)]
pub struct DmaPlace {
    /// Index of its bus.
    pub bus: usize,
    /// Its index among the functions on that bus.
    pub local: usize,
    /// Bytes per PCI-X read request.
    pub max_read: u64,
    /// PCI-X read requests in flight at most.
    pub max_outstanding: u32,
}

/// One bus segment (the bus of one card, or of several sharing it), its
/// bridge and path.
#[derive(Debug, Clone)]
pub struct PlacedBus {
    /// `card@slot` label (`card@slot+card@slot` for a shared segment).
    pub label: String,
    /// Name of the negotiated bus mode.
    pub mode: String,
    /// The bus.
    pub bus: BusCfg,
    /// Its bridge.
    pub bridge: BridgeCfg,
    /// The path above it.
    pub path: PathCfg,
    /// The I/O controller its ropes end at (index into
    /// `SystemCfg::controllers`), if the server has one there.
    pub controller: Option<usize>,
    /// For the secondary bus of an on-card bridge: that bridge (index into
    /// `SystemCfg::card_bridges`), which carries everything the bus sends
    /// up across the slot's bus; `None` for a bus whose own ropes go up.
    pub upstream: Option<usize>,
}

/// An on-card PCI-to-PCI bridge: a master on the slot's bus (`parent`)
/// for the functions on its secondary bus.
#[derive(Debug, Clone)]
pub struct CardBridgeCfg {
    /// Index of the slot's bus (where it masters).
    pub parent: usize,
    /// How it reads and bursts on that bus.
    pub dma: DmaCfg,
}

/// What the platform needs of one adapter function: where it sits, how its
/// DMA engine uses the bus, and its link.
#[derive(Debug, Clone)]
pub struct PortCfg {
    /// Index of its bus.
    pub bus: usize,
    /// Its DMA engine.
    pub dma: DmaCfg,
    /// Wire bytes per second of its link (zero without a link).
    pub wire_rate: BytesPerSec,
    /// Its half-duplex segment and the preamble each frame carries on it,
    /// if its link is half duplex.
    pub half_duplex: Option<(CsmaCfg, u64)>,
    /// Its shared parallel bus's connection time (arbitration and
    /// selection), if its link is one (a parallel SCSI bus: both directions
    /// on one medium at `wire_rate`).
    pub shared_bus: Option<Picos>,
}

/// The hardware of one experiment, as assembled.
#[derive(Debug, Clone)]
pub struct PlatformCfg {
    /// Buses, one per segment.
    pub buses: Vec<PlacedBus>,
    /// The I/O controllers the buses' ropes end at.
    pub controllers: Vec<ControllerCfg>,
    /// On-card bridges, each between a slot's bus and its card's own.
    pub card_bridges: Vec<CardBridgeCfg>,
    /// The adapter functions, in card then function order.
    pub functions: Vec<PortCfg>,
    /// Memory.
    pub memory: MemoryCfg,
    /// CPU costs.
    pub cpu: CpuCfg,
    /// Test bed.
    pub testbed: TestbedCfg,
}

/// The shared hardware of one experiment, without the adapter engines;
/// `T` is the engines' event token, carried back to them.
pub struct Platform<T> {
    pub(crate) cfg: PlatformCfg,
    pub(crate) buses: Vec<Bus>,
    pub(crate) ropes: Vec<Rope>,
    /// The I/O controllers' links to memory.
    pub(crate) ctrls: Vec<Controller>,
    /// The memory's bandwidth, shared by every DMA.
    pub(crate) memory: MemoryNode,
    pub(crate) cpus: Vec<Cpu<T>>,
    pub(crate) placement: CpuPlacement,
    /// Per process ([`crate::sim::cpu::process_id`]): whether a CPU is
    /// running its work now (a process runs on one CPU at a time).
    pub(crate) running: Vec<bool>,
    pub(crate) wires: Vec<[Wire; 2]>,
    /// Per function: its half-duplex segment and the preamble each frame
    /// carries on it, if its link is half duplex (then its wires are unused).
    pub(crate) media: Vec<Option<(Medium<Frame>, u64)>>,
    /// Per function: its shared parallel bus, if its link is one (then its
    /// wires are unused).
    pub(crate) shared: Vec<Option<SharedBus>>,
    pub(crate) ports: Vec<DmaPort<T>>,
    pub(crate) place: Vec<DmaPlace>,
    pub(crate) rng: RngStream,
    pub(crate) totals: Totals,
    /// Per function: register reads completed and their total stall, since
    /// the last reset.
    pub(crate) register_reads: Vec<(u64, Picos)>,
}

impl<T: Copy> Platform<T> {
    /// The server that plays engine `engine` (0 or 1) of function `f`'s
    /// on-card processor: after the partition's CPUs come each function's
    /// first engine, then each function's second.
    pub(crate) fn card_cpu(&self, f: usize, engine: usize) -> usize {
        let functions = (self.cpus.len() - self.placement.cpus()) / 2;
        self.placement.cpus() + f + functions * engine.min(1)
    }

    /// Wires the hardware of `cfg`, the CPUs placed by `placement`; `seed`
    /// seeds the memory's stream and each half-duplex segment's.
    pub fn new(cfg: PlatformCfg, placement: CpuPlacement, seed: u64) -> Platform<T> {
        let mut per_bus: Vec<Vec<(usize, u64)>> = vec![Vec::new(); cfg.buses.len()];
        let n = cfg.functions.len();
        let mut wires = Vec::new();
        let mut media = Vec::new();
        let mut shared = Vec::new();
        let mut place = Vec::new();
        for (gi, pf) in cfg.functions.iter().enumerate() {
            let dma = pf.dma;
            place.push(DmaPlace {
                bus: pf.bus,
                local: per_bus[pf.bus].len(),
                max_read: dma.max_read,
                max_outstanding: dma.max_outstanding,
            });
            per_bus[pf.bus].push((gi, dma.write_burst));
            let rate = pf.wire_rate;
            wires.push([Wire::new(rate), Wire::new(rate)]);
            shared.push(pf.shared_bus.map(|c| SharedBus::new(rate, c)));
            media.push(pf.half_duplex.clone().map(|(c, preamble)| {
                // Each segment draws its backoffs from its own stream.
                let rng = RngStream::new(seed, 1000 + gi as u64);
                (Medium::new(c, 2, rng), preamble)
            }));
        }
        // Each on-card bridge is a DMA port after the functions, a master on
        // its slot's bus.
        for (j, cb) in cfg.card_bridges.iter().enumerate() {
            place.push(DmaPlace {
                bus: cb.parent,
                local: per_bus[cb.parent].len(),
                max_read: cb.dma.max_read,
                max_outstanding: cb.dma.max_outstanding,
            });
            per_bus[cb.parent].push((n + j, cb.dma.write_burst));
        }
        let buses = cfg
            .buses
            .iter()
            .zip(&per_bus)
            .map(|(pb, fs)| Bus::new(pb.bus, pb.bridge.clone(), fs))
            .collect();
        let mut ropes: Vec<Rope> = cfg
            .buses
            .iter()
            .map(|pb| Rope::new(pb.path.clone()))
            .collect();
        let ctrls = cfg
            .controllers
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut ctrl = Controller::new(c.clone());
                // Only one bus's ropes end here (a card's own bus sends up
                // through its slot's bus, not on ropes of its own).
                ctrl.one_bus = cfg
                    .buses
                    .iter()
                    .filter(|pb| pb.upstream.is_none() && pb.controller == Some(i))
                    .count()
                    == 1;
                ctrl
            })
            .collect::<Vec<Controller>>();
        for (rope, pb) in ropes.iter_mut().zip(&cfg.buses) {
            rope.booked_up = !pb.bridge.posted_writes_cut_through
                && pb.controller.is_none_or(|c| ctrls[c].one_bus);
        }
        // The partition's CPUs, then each function's on-card processor,
        // then each function's second processor engine.
        let cpus = (0..placement.cpus() + 2 * n)
            .map(|_| Cpu::default())
            .collect();
        let memory_bandwidth = cfg.memory.bandwidth;
        Platform {
            ports: (0..place.len()).map(|_| DmaPort::default()).collect(),
            cfg,
            buses,
            ropes,
            ctrls,
            memory: MemoryNode::new(memory_bandwidth),
            cpus,
            placement,
            running: vec![false; 2 * n],
            wires,
            media,
            shared,
            place,
            rng: RngStream::new(seed, 1),
            totals: Totals::default(),
            register_reads: vec![(0, Picos(0)); n],
        }
    }
}
