//! The hardware simulation: components wired from a [`config::SystemCfg`] and
//! driven by the engine. Each file holds one component family:
//! [`bus`] (bus segments and bridges), [`path`] (ropes and memory), [`cpu`],
//! [`wire`] (links), [`nic`] and [`hba`] (adapter functions and their
//! benchmarks), [`dma`] (DMA bookkeeping).

pub mod bus;
pub mod config;
pub mod cpu;
pub mod dma;
pub mod hba;
pub mod meter;
pub mod nic;
pub mod path;
pub mod result;
pub mod wire;

use crate::engine::{run_until, Limits, Model, RngStream, Scheduler, Stop};
use crate::error::{Error, Result};
use crate::model::{Experiment, Registry, RunSpec};
use crate::units::{BytesPerSec, Picos};
use config::{FunctionCfg, SystemCfg};
pub use result::{BusResult, ExperimentResult, FunctionResult, Totals};

/// Every event of the hardware model.
#[derive(Debug, Clone, Copy)]
pub enum Ev {
    /// The transaction on bus `b` ends (the bus's grant count, to drop a
    /// stale end after a cut).
    BusDone(usize, u64),
    /// A retried master on bus `b` may ask again.
    BusWake(usize),
    /// The packet on direction (0 up, 1 down) of the ropes above bus `b` has crossed.
    RopeDone(usize, usize),
    /// Memory has answered a fetch.
    MemDone(path::Fetch),
    /// CPU `c` finished its work.
    CpuDone(usize),
    /// The register read CPU `c` is stalled on has returned.
    PioDone(usize),
    /// A frame reached the end of a wire of function `f`.
    WireDone(usize, wire::Way),
    /// The netperf peer of function `f` sends an ACK up to a byte.
    PeerAck(usize, u64),
    /// The disk array of function `f` is ready with an I/O.
    TargetReady(usize, usize),
    /// The disk array of function `f` has received all data of a write.
    TargetDone(usize, usize),
}

/// An adapter function's engine.
#[derive(Debug)]
pub enum Func {
    /// Ethernet NIC.
    Nic(nic::Nic),
    /// Fibre Channel HBA.
    Hba(hba::Hba),
}

/// The whole simulated system of one experiment.
pub struct System {
    cfg: SystemCfg,
    buses: Vec<bus::Bus>,
    ropes: Vec<path::Rope>,
    cpus: Vec<cpu::Cpu>,
    wires: Vec<[wire::Wire; 2]>,
    funcs: Vec<Func>,
    ports: Vec<dma::DmaPort>,
    fn_place: Vec<(usize, usize)>,
    max_read: Vec<u64>,
    max_outstanding: Vec<u32>,
    rng: RngStream,
    totals: Totals,
    /// Per function: register reads completed and their total stall, since
    /// the last reset.
    register_reads: Vec<(u64, Picos)>,
}

impl Model for System {
    type Event = Ev;
    fn handle(&mut self, ev: Ev, s: &mut Scheduler<Ev>) {
        match ev {
            Ev::BusDone(b, g) => self.bus_done(b, g, s),
            Ev::BusWake(b) => self.bus_arbitrate(b, s),
            Ev::RopeDone(b, d) => self.rope_done(b, d, s),
            Ev::MemDone(f) => self.mem_done(f, s),
            Ev::CpuDone(c) => self.cpu_done(c, s),
            Ev::PioDone(c) => self.cpu_pio_done(c, s),
            Ev::WireDone(f, w) => self.wire_done(f, w, s),
            Ev::PeerAck(f, ack) => self.nic_peer_ack(f, ack, s),
            Ev::TargetReady(f, io) => self.hba_target_ready(f, io, s),
            Ev::TargetDone(f, io) => self.hba_target_done(f, io, s),
        }
    }
}

impl System {
    /// Wires the components of `cfg`; `seed` seeds the memory stream.
    pub fn new(cfg: SystemCfg, seed: u64) -> System {
        let mut fn_place = Vec::new();
        let mut per_bus: Vec<Vec<(usize, u64)>> = vec![Vec::new(); cfg.buses.len()];
        let funcs_len = cfg.functions.len();
        let mut funcs = Vec::new();
        let mut wires = Vec::new();
        let mut max_read = Vec::new();
        let mut max_outstanding = Vec::new();
        for (gi, pf) in cfg.functions.iter().enumerate() {
            let (burst, rate, func, mr, mo) = match &pf.cfg {
                FunctionCfg::Nic { nic, eth, streams } => (
                    nic.write_burst,
                    eth.rate,
                    Func::Nic(nic::Nic::new(nic.clone(), eth.clone(), *streams)),
                    nic.max_read,
                    nic.max_outstanding,
                ),
                FunctionCfg::Hba { hba, fc, streams } => (
                    hba.write_burst,
                    fc.byte_rate,
                    Func::Hba(hba::Hba::new(hba.clone(), fc.clone(), *streams)),
                    hba.max_read,
                    hba.max_outstanding,
                ),
            };
            fn_place.push((pf.bus, per_bus[pf.bus].len()));
            per_bus[pf.bus].push((gi, burst));
            funcs.push(func);
            wires.push([wire::Wire::new(rate), wire::Wire::new(rate)]);
            max_read.push(mr);
            max_outstanding.push(mo);
        }
        let buses = cfg
            .buses
            .iter()
            .zip(&per_bus)
            .map(|(pb, fs)| bus::Bus::new(pb.bus.clone(), pb.bridge.clone(), fs))
            .collect();
        let ropes = cfg
            .buses
            .iter()
            .map(|pb| path::Rope::new(pb.path.clone()))
            .collect();
        let cpus = (0..3 * cfg.functions.len())
            .map(|_| cpu::Cpu::default())
            .collect();
        System {
            ports: (0..cfg.functions.len())
                .map(|_| dma::DmaPort::default())
                .collect(),
            cfg,
            buses,
            ropes,
            cpus,
            wires,
            funcs,
            fn_place,
            max_read,
            max_outstanding,
            rng: RngStream::new(seed, 1),
            totals: Totals::default(),
            register_reads: vec![(0, Picos(0)); funcs_len],
        }
    }

    fn is_nic(&self, f: usize) -> bool {
        matches!(self.funcs[f], Func::Nic(_))
    }

    /// Starts every workload.
    pub fn start(&mut self, s: &mut Scheduler<Ev>) {
        for f in 0..self.funcs.len() {
            if self.is_nic(f) {
                self.nic_start(f, s);
            } else {
                self.hba_start(f, s);
            }
        }
    }

    /// A function's DMA finished.
    fn on_dma_done(&mut self, f: usize, p: dma::Purpose, s: &mut Scheduler<Ev>) {
        if self.is_nic(f) {
            self.nic_dma_done(f, p, s)
        } else {
            self.hba_dma_done(f, p, s)
        }
    }

    /// Forgets every measurement (end of warm-up).
    pub fn reset_measurements(&mut self, now: Picos) {
        for b in &mut self.buses {
            b.meter.reset(now);
            b.data_bytes = 0;
            b.retries = 0;
        }
        for r in &mut self.ropes {
            r.dirs[0].meter.reset(now);
            r.dirs[1].meter.reset(now);
            r.up_bytes = 0;
            r.down_bytes = 0;
        }
        for c in &mut self.cpus {
            c.meter.reset(now);
        }
        for w in &mut self.wires {
            w[0].meter.reset(now);
            w[1].meter.reset(now);
        }
        for r in &mut self.register_reads {
            *r = (0, Picos(0));
        }
        for f in &mut self.funcs {
            match f {
                Func::Nic(n) => {
                    n.delivered_in = 0;
                    n.delivered_out = 0;
                }
                Func::Hba(h) => {
                    h.delivered_in = 0;
                    h.delivered_out = 0;
                }
            }
        }
    }

    /// Measurements over the `window` that ends at `now`.
    pub fn results(&self, now: Picos, window: Picos) -> (Vec<FunctionResult>, Vec<BusResult>) {
        let secs = window.secs().max(1e-12);
        let util = |m: &meter::BusyMeter| m.total(now).secs() / secs;
        let n = self.cfg.functions.len();
        let functions = self
            .cfg
            .functions
            .iter()
            .enumerate()
            .map(|(i, pf)| {
                let (out, inn, ceiling) = match (&self.funcs[i], &pf.cfg) {
                    (Func::Nic(n), FunctionCfg::Nic { eth, .. }) => {
                        (n.delivered_out, n.delivered_in, eth.goodput_ceiling())
                    }
                    (Func::Hba(h), FunctionCfg::Hba { fc, .. }) => {
                        (h.delivered_out, h.delivered_in, fc.goodput_ceiling())
                    }
                    _ => (0, 0, BytesPerSec(0.0)),
                };
                FunctionResult {
                    label: pf.label.clone(),
                    link: pf.link.clone(),
                    out: BytesPerSec(out as f64 / secs),
                    inn: BytesPerSec(inn as f64 / secs),
                    ceiling,
                    cpu_util: util(&self.cpus[cpu::interrupt_cpu(i)].meter),
                    app_cpu_util: util(&self.cpus[cpu::send_cpu(n, i)].meter)
                        .max(util(&self.cpus[cpu::reader_cpu(n, i)].meter)),
                    register_read: match self.register_reads[i] {
                        (0, _) => Picos(0),
                        (count, total) => Picos(total.0 / count),
                    },
                    wire_out_util: util(&self.wires[i][0].meter),
                    wire_in_util: util(&self.wires[i][1].meter),
                }
            })
            .collect();
        let buses = self
            .cfg
            .buses
            .iter()
            .enumerate()
            .map(|(i, pb)| BusResult {
                label: pb.label.clone(),
                mode: pb.bus.mode.clone(),
                peak: pb.bus.peak(),
                util: util(&self.buses[i].meter),
                data: BytesPerSec(self.buses[i].data_bytes as f64 / secs),
                retries_per_s: self.buses[i].retries as f64 / secs,
                rope_util: util(&self.ropes[i].dirs[0].meter)
                    .max(util(&self.ropes[i].dirs[1].meter)),
                rope_up: BytesPerSec(self.ropes[i].up_bytes as f64 / secs),
                rope_down: BytesPerSec(self.ropes[i].down_bytes as f64 / secs),
                rope_capacity: pb.path.rope_rate,
            })
            .collect();
        (functions, buses)
    }

    /// Lifetime byte counters (never reset), for conservation checks.
    pub fn totals(&self) -> Totals {
        let mut t = self.totals;
        t.posted_in_bridges = self
            .buses
            .iter()
            .map(|b| b.posted_used - b.in_flight_write())
            .sum();
        t
    }
}

/// Simulates one experiment: warm-up, then the measured window.
pub fn simulate(
    reg: &Registry,
    exp: &Experiment,
    run: &RunSpec,
    seed: u64,
) -> Result<ExperimentResult> {
    let cfg = config::assemble(reg, exp)?;
    let cpus = cfg.cpus;
    let mut sys = System::new(cfg, seed);
    let mut s = Scheduler::new();
    let warm = Picos::from_secs(run.warmup_ms / 1e3);
    let end = warm + Picos::from_secs(run.duration_ms / 1e3);
    let limits = Limits {
        max_time: end,
        max_events: run.max_events,
    };
    sys.start(&mut s);
    let hit = |s: &Scheduler<Ev>| Error::EventLimit {
        experiment: exp.id.clone(),
        events: s.events_processed(),
        at_ms: s.now().secs() * 1e3,
    };
    if run_until(&mut sys, &mut s, warm, limits) == Stop::EventLimit {
        return Err(hit(&s));
    }
    sys.reset_measurements(warm);
    if run_until(&mut sys, &mut s, end, limits) == Stop::EventLimit {
        return Err(hit(&s));
    }
    let (functions, buses) = sys.results(end, end - warm);
    Ok(ExperimentResult::new(
        exp.id.clone(),
        functions,
        buses,
        cpus,
        s.events_processed(),
        sys.totals(),
    ))
}
