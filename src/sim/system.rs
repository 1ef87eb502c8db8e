//! The top of the simulation: one experiment's [`System`], the platform
//! and one engine per adapter function, driven by the engine as a
//! [`Model`] of events [`Ev`]. It monomorphises the platform to the
//! engines' event type and hands the engines their events and frames
//! (the platform's [`Engines`]); it reads the measurements out.
//!
//! Direction of use: the system uses the assembly's configuration, the
//! engines, the platform and the hardware; nothing below it uses it.

use crate::engine::{Model, Scheduler};
use crate::sim::config::{FunctionCfg, PlacedFunction, SystemCfg};
use crate::sim::cpu::CpuRole;
use crate::sim::engines::{Engine, EngineEv};
use crate::sim::meter::{BookedMeter, BusyMeter};
use crate::sim::platform::{self, Ctx, Engines, Platform, PlatformCfg, PortCfg};
use crate::sim::result::{BusResult, CpuResult, FunctionResult, Totals};
use crate::sim::wire::{Frame, Way};
use crate::units::{BytesPerSec, Picos};

/// Every event of one experiment's simulation: the platform's events, the
/// engines' timers carrying [`EngineEv`].
pub type Ev = platform::Ev<EngineEv>;

/// The whole simulated system of one experiment: the platform and one engine
/// per adapter function.
pub struct System {
    pub(crate) p: Platform<EngineEv>,
    pub(crate) engines: Vec<Engine>,
    /// The functions as assembled (labels and links, for the results).
    functions: Vec<PlacedFunction>,
    /// Each engine's transmit underruns at the last reset of the counters.
    underruns_at_reset: Vec<u64>,
}

impl Model for System {
    type Event = Ev;
    fn handle(&mut self, ev: Ev, s: &mut Scheduler<Ev>) {
        match ev {
            Ev::BusDone(b, g) => self.p.bus_done(b, g, &mut self.engines, s),
            Ev::BusWake(b) => self.p.bus_wake(b, s),
            Ev::RopeDone(b, d) => self.p.rope_done(b, d, s),
            Ev::RopeWake(b) => self.p.rope_wake(b, s),
            Ev::PostedFree(b) => self.p.bus_posted_free(b, s),
            Ev::Handoff(b, d) => self.p.handoff(b, d, s),
            Ev::MemAsk(f) => self.p.mem_ask(f, s),
            Ev::MemDone(f) => self.p.mem_done(f, s),
            Ev::CpuDone(c) => self.p.cpu_done(c, &mut self.engines, s),
            Ev::PioDone(c) => self.p.cpu_pio_done(c, &mut self.engines, s),
            Ev::WireDone(f, w) => self.p.wire_done(f, w, &mut self.engines, s),
            Ev::Medium(f, e) => self.p.medium_event(f, e, &mut self.engines, s),
            Ev::Engine(f, ev) => self.engine_event(f, ev, s),
        }
    }
}

impl System {
    /// Wires the components of `cfg`; `seed` seeds the memory stream.
    pub fn new(cfg: SystemCfg, seed: u64) -> System {
        let engines: Vec<Engine> = cfg
            .functions
            .iter()
            .map(|pf| Engine::new(&pf.cfg))
            .collect();
        let ports = cfg
            .functions
            .iter()
            .map(|pf| PortCfg {
                bus: pf.bus,
                dma: pf.cfg.dma(),
                wire_rate: pf.cfg.wire_rate(),
                half_duplex: match &pf.cfg {
                    FunctionCfg::Nic(n) => n.eth.csma.clone().map(|c| (c, n.eth.preamble)),
                    _ => None,
                },
                shared_bus: match &pf.cfg {
                    FunctionCfg::Hba(h) => h.fc.shared_bus,
                    _ => None,
                },
            })
            .collect();
        let platform = PlatformCfg {
            buses: cfg.buses,
            controllers: cfg.controllers,
            card_bridges: cfg.card_bridges,
            functions: ports,
            memory: cfg.memory,
            cpu: cfg.cpu,
            testbed: cfg.testbed,
        };
        System {
            p: Platform::new(platform, cfg.placement, seed),
            underruns_at_reset: vec![0; engines.len()],
            engines,
            functions: cfg.functions,
        }
    }

    /// Hands `ev` to the engine of function `f`.
    pub(crate) fn engine_event(&mut self, f: usize, ev: EngineEv, s: &mut Scheduler<Ev>) {
        let mut cx = Ctx::new(&mut self.p, s, f);
        self.engines[f].handle(ev, &mut cx);
    }

    /// Starts every workload.
    pub fn start(&mut self, s: &mut Scheduler<Ev>) {
        for (f, e) in self.engines.iter_mut().enumerate() {
            e.start(&mut Ctx::new(&mut self.p, s, f));
        }
    }

    /// Forgets every measurement (end of warm-up).
    pub fn reset_measurements(&mut self, now: Picos) {
        for b in 0..self.p.buses.len() {
            self.p.bus_settle_posted(b, now, true);
        }
        let p = &mut self.p;
        for b in &mut p.buses {
            b.catch_up(now);
            b.meter.reset(now);
            b.data_bytes = 0;
            b.retries = 0;
        }
        for r in &mut p.ropes {
            r.dirs[0].meter.reset(now);
            r.dirs[1].meter.reset(now);
            r.up_bytes = 0;
            r.down_bytes = 0;
        }
        for c in &mut p.ctrls {
            c.dirs[0].meter.reset(now);
            c.dirs[1].meter.reset(now);
        }
        p.memory.reset(now);
        for c in &mut p.cpus {
            c.meter.reset(now);
        }
        for w in &mut p.wires {
            w[0].meter.reset(now);
            w[1].meter.reset(now);
        }
        for (m, _) in p.media.iter_mut().flatten() {
            m.reset(now);
        }
        for b in p.shared.iter_mut().flatten() {
            b.meter.reset(now);
        }
        for r in &mut p.register_reads {
            *r = (0, Picos(0));
        }
        for (e, u) in self.engines.iter_mut().zip(&mut self.underruns_at_reset) {
            e.reset_counters();
            *u = e.underruns();
        }
    }

    /// Measurements over the `window` that ends at `now` (lazy buses first
    /// replay their retries up to `now`, and the memory serves the writes
    /// booked ahead that arrive by then).
    pub fn results(
        &mut self,
        now: Picos,
        window: Picos,
    ) -> (Vec<FunctionResult>, Vec<BusResult>, Vec<CpuResult>) {
        for b in 0..self.p.buses.len() {
            self.p.buses[b].catch_up(now);
            self.p.bus_settle_posted(b, now, true);
        }
        self.p.memory.settle_before(now);
        let secs = window.secs().max(1e-12);
        let util = |m: &BusyMeter| m.total(now).secs() / secs;
        let booked = |m: &BookedMeter| m.total(now).secs() / secs;
        let p = &self.p;
        let cpu_util = |role, f| util(&p.cpus[p.placement.cpu(role, f)].meter);
        let app_cpu_util = |f: usize| {
            let [send, reader] = p.placement.processes[f];
            let u = |used: bool, role| if used { cpu_util(role, f) } else { 0.0 };
            u(send, CpuRole::Send).max(u(reader, CpuRole::Reader))
        };
        let functions = self
            .functions
            .iter()
            .enumerate()
            .map(|(i, pf)| {
                let (out, inn) = self.engines[i].delivered();
                FunctionResult {
                    label: pf.label.clone(),
                    link: pf.link.clone(),
                    out: BytesPerSec(out as f64 / secs),
                    inn: BytesPerSec(inn as f64 / secs),
                    ceiling: self.engines[i].ceiling(),
                    cpu_util: cpu_util(CpuRole::Interrupt, i),
                    app_cpu_util: app_cpu_util(i),
                    // The busier of the card processor's engines.
                    card_cpu_util: util(&p.cpus[p.card_cpu(i, 0)].meter)
                        .max(util(&p.cpus[p.card_cpu(i, 1)].meter)),
                    register_read: match p.register_reads[i] {
                        (0, _) => Picos(0),
                        (count, total) => Picos(total.0 / count),
                    },
                    tx_underruns_per_s: (self.engines[i].underruns() - self.underruns_at_reset[i])
                        as f64
                        / secs,
                    wire_out_util: match (&p.media[i], &p.shared[i]) {
                        (Some((m, _)), _) => util(&m.meter),
                        (_, Some(b)) => util(&b.meter),
                        _ => util(&p.wires[i][0].meter),
                    },
                    wire_in_util: match (&p.media[i], &p.shared[i]) {
                        (Some((m, _)), _) => util(&m.meter),
                        (_, Some(b)) => util(&b.meter),
                        _ => util(&p.wires[i][1].meter),
                    },
                }
            })
            .collect();
        let buses = p
            .cfg
            .buses
            .iter()
            .enumerate()
            .map(|(i, pb)| BusResult {
                label: pb.label.clone(),
                mode: pb.mode.clone(),
                peak: pb.bus.peak(),
                util: util(&p.buses[i].meter),
                data: BytesPerSec(p.buses[i].data_bytes as f64 / secs),
                retries_per_s: p.buses[i].retries as f64 / secs,
                rope_util: booked(&p.ropes[i].dirs[0].meter).max(booked(&p.ropes[i].dirs[1].meter)),
                controller: pb.controller.map(|c| {
                    let ctrl = &p.ctrls[c];
                    (
                        ctrl.cfg.label.clone(),
                        booked(&ctrl.dirs[0].meter).max(booked(&ctrl.dirs[1].meter)),
                    )
                }),
                rope_up: BytesPerSec(p.ropes[i].up_bytes as f64 / secs),
                rope_down: BytesPerSec(p.ropes[i].down_bytes as f64 / secs),
                // A bus converter's infinitely fast "ropes": none, no capacity.
                rope_capacity: match pb.path.rope_rate.0.is_finite() {
                    true => pb.path.rope_rate,
                    false => BytesPerSec(0.0),
                },
            })
            .collect();
        let label = |f: usize| self.functions[f].label.clone();
        let cpus = p
            .cpus
            .iter()
            .take(p.placement.cpus())
            .enumerate()
            .map(|(c, cpu)| CpuResult {
                cpu: c,
                util: util(&cpu.meter),
                work: match cpu.taken {
                    0 => p.placement.describe(c, &label),
                    _ => format!(
                        "{} + process work taken from busier CPUs",
                        p.placement.describe(c, &label)
                    ),
                },
            })
            .collect();
        (functions, buses, cpus)
    }

    /// Lifetime byte counters (never reset), for conservation checks.
    pub fn totals(&self) -> Totals {
        let mut t = self.p.totals;
        t.posted_in_bridges = self
            .p
            .buses
            .iter()
            .map(|b| b.posted_used - b.in_flight_write())
            .sum();
        t
    }
}

impl Engines<EngineEv> for Vec<Engine> {
    fn event(&mut self, f: usize, ev: EngineEv, cx: &mut Ctx<'_, EngineEv>) {
        self[f].handle(ev, cx);
    }

    fn frame_arrived(&mut self, f: usize, way: Way, frame: Frame, cx: &mut Ctx<'_, EngineEv>) {
        self[f].frame_arrived(way, frame, cx);
        self[f].kick(way, cx);
    }

    fn kick(&mut self, f: usize, way: Way, cx: &mut Ctx<'_, EngineEv>) {
        self[f].kick(way, cx);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::{run_until, Limits};
    use crate::loader::{load_bundled_scenarios, load_registry};
    use crate::model::{Experiment, Registry, RunSpec};
    use crate::sim::config;
    use crate::sim::cpu;
    use crate::sim::run::{simulate, simulate_assembled, Watch};

    /// The bundled models and experiment `id` of the bundled scenario
    /// `scenario`.
    pub(crate) fn bundled_experiment(scenario: &str, id: &str) -> (Registry, Experiment) {
        let reg = load_registry(&[]).expect("bundled models load");
        let sc = load_bundled_scenarios(&reg)
            .expect("bundled scenarios load")
            .into_iter()
            .find(|s| s.name == scenario)
            .expect("the scenario");
        let exp = sc
            .experiments
            .into_iter()
            .find(|e| e.id == id)
            .expect("the experiment");
        (reg, exp)
    }

    /// The configuration of experiment `id` of the bundled scenario `scenario`.
    pub(crate) fn config_of(scenario: &str, id: &str) -> SystemCfg {
        let (reg, exp) = bundled_experiment(scenario, id);
        config::assemble(&reg, &exp).expect("assembles")
    }

    #[test]
    fn an_event_takes_48_bytes() {
        // Its largest payload (a memory fetch: bus, bytes, and where the
        // data goes) and its tag: the platform's event, generic over the
        // engines' token, is as small as one naming the engines would be.
        assert_eq!(std::mem::size_of::<Ev>(), 48);
    }

    #[test]
    fn an_hba_runs_its_io_work_on_the_cpu_the_placement_names() {
        let mut cfg = config_of("hp2g-fig5-fc-read", "fc-rd.pcix.c1");
        let fc = cfg
            .functions
            .iter()
            .position(|f| f.label.ends_with(".fc"))
            .expect("an FC function");
        let own = cfg.placement.cpu(cpu::CpuRole::Interrupt, fc);
        // Move its interrupts to the last CPU (a netperf CPU of the idle GigE).
        let other = cfg.placement.cpus() - 1;
        assert_ne!(own, other);
        cfg.placement.per_function[fc][cpu::CpuRole::Interrupt as usize] = other;
        let mut sys = System::new(cfg, 1);
        let mut s = Scheduler::new();
        sys.start(&mut s);
        let end = Picos::from_ns(2e6);
        let limits = Limits {
            max_time: end,
            max_events: 10_000_000,
        };
        run_until(&mut sys, &mut s, end, limits);
        let busy = |c: usize| sys.p.cpus[c].meter.total(end);
        assert!(busy(other) > Picos(0), "the placed CPU did the I/O work");
        assert_eq!(busy(own), Picos(0), "the function's index is not its CPU");
    }

    /// The function and bus results, the memory's utilisation, the byte
    /// totals, the events processed, and the system itself.
    type Measured = (
        Vec<FunctionResult>,
        Vec<BusResult>,
        Option<f64>,
        Totals,
        u64,
        System,
    );
    /// What experiment `id` of the bundled scenario `scenario` measures from
    /// `warm_ms` to `end_ms` once `tweak` has set up its system.
    fn measured(
        scenario: &str,
        id: &str,
        (warm_ms, end_ms): (f64, f64),
        tweak: impl FnOnce(&mut System),
    ) -> Measured {
        let mut sys = System::new(config_of(scenario, id), 1);
        tweak(&mut sys);
        let mut s = Scheduler::new();
        sys.start(&mut s);
        let (warm, end) = (Picos::from_ns(warm_ms * 1e6), Picos::from_ns(end_ms * 1e6));
        let limits = Limits {
            max_time: end,
            max_events: 50_000_000,
        };
        run_until(&mut sys, &mut s, warm, limits);
        sys.reset_measurements(warm);
        run_until(&mut sys, &mut s, end, limits);
        let (functions, buses, _) = sys.results(end, end - warm);
        let memory = sys.p.memory.util(end - warm);
        let totals = sys.totals();
        (functions, buses, memory, totals, s.events_processed(), sys)
    }

    /// Experiment `id` of the bundled scenario `scenario` measured over
    /// `window` with a shortcut off and on (`set` turns it on or off in a
    /// system): asserts that both measured the same (every function, bus,
    /// the memory and the totals) and gives (stepped, shortcut).
    fn stepped_and_shortcut(
        scenario: &str,
        id: &str,
        window: (f64, f64),
        set: impl Fn(&mut System, bool),
    ) -> (Measured, Measured) {
        let run = |on: bool| measured(scenario, id, window, |sys| set(sys, on));
        let (stepped, shortcut) = (run(false), run(true));
        assert_eq!(shortcut.0, stepped.0, "{id}");
        assert_eq!(shortcut.1, stepped.1, "{id}");
        assert_eq!(shortcut.2, stepped.2, "{id}");
        assert_eq!(shortcut.3, stepped.3, "{id}");
        (stepped, shortcut)
    }

    /// Four like ATM cards bidirectional on the 8-CPU N4000 run in step, so
    /// their rope handoffs may fall on the same picosecond; events at one
    /// time run in the order they were scheduled, which the lazy replay and
    /// retry events need not share. These runs measure alike either way.
    #[test]
    fn retries_without_events_match_with_four_atm_cards_on_eight_cpus() {
        for (scenario, id) in [
            ("atm-atm622-n4000", "atm622.bd.mtu1516"),
            ("atm-atm155-n4000", "atm155.bd.mtu9218"),
            ("atm-atm155-n4000", "atm155.bd.mtu1516"),
        ] {
            stepped_and_shortcut(scenario, id, (1.0, 4.0), |sys, lazy| {
                for b in &mut sys.p.buses {
                    b.lazy_retries = lazy;
                }
            });
        }
    }

    #[test]
    fn retries_without_events_give_what_retry_events_give() {
        // PCI buses where delayed reads are retried: FC and GigE on a PCI-66
        // slot of the rp8400, the ATM/622 on the N4000, a Tulip port behind
        // the NS-FNIC/4's bridge; the replays skip whole periods of retries.
        for (scenario, id, min_retries) in [
            ("hp2g-fig6-fc-write", "fc-wr+gige-bd.pci66.c1", 1e6),
            ("atm-atm622-n4000-1cpu", "atm622.bd.lane1516", 1e5),
            ("matrox-table2-netperf", "netperf.100half", 1e5),
        ] {
            let (stepped, lazy) = stepped_and_shortcut(scenario, id, (1.0, 4.0), |sys, lazy| {
                for b in &mut sys.p.buses {
                    b.lazy_retries = lazy;
                }
            });
            let (n_events, n_lazy) = (stepped.4, lazy.4);
            let skipped: u64 = lazy.5.p.buses.iter().map(|b| b.periods_skipped).sum();
            let retries: f64 = stepped.1.iter().map(|b| b.retries_per_s).sum();
            assert!(
                retries > min_retries,
                "{id}: the buses retry reads ({retries}/s)"
            );
            assert!(skipped > 0, "{id}: no period of retries skipped");
            assert!(
                n_lazy < n_events,
                "{id}: {n_lazy} events without retry events, {n_events} with"
            );
        }
    }

    #[test]
    fn ropes_booked_ahead_give_what_rope_events_give() {
        // Going up, ropes under a controller only they feed (the rp8400 at
        // PCI-X and PCI-66: a register read waits for the bridge's one
        // delayed-read slot) and ropes straight to memory (the PC's one bus,
        // two NS-FNIC/4 cards at full and half duplex: masters wait for room
        // in the host bridge's buffer). The models' own values.
        let mut woken = 0;
        for (scenario, id) in [
            ("hp2g-fig4-gige-bidirectional", "gige-bd+fc-bd.pcix.c1"),
            ("hp2g-fig6-fc-write", "fc-wr+gige-bd.pci66.c1"),
            ("hp2g-fig2-gige-receive", "gige-rx+fc-bd.pci66.c1"),
            ("hp2g-fig4-gige-bidirectional", "gige-bd.pci66.c4"),
            ("matrox-table10-twocards", "twocards.100full"),
            ("matrox-table10-twocards", "twocards.100half"),
        ] {
            let (stepped, booked) = stepped_and_shortcut(scenario, id, (2.0, 8.0), |sys, on| {
                assert!(sys.p.ropes.iter().all(|r| r.booked_up), "{id}");
                for r in &mut sys.p.ropes {
                    r.booked_up = on;
                }
            });
            let (n_events, n_booked) = (stepped.4, booked.4);
            assert!(
                n_booked < n_events,
                "{id}: {n_booked} events booked ahead, {n_events} with rope events"
            );
            woken += booked.5.p.buses.iter().map(|b| b.posted_wakes).sum::<u64>();
        }
        assert!(woken > 0, "no master waited for room");
    }

    #[test]
    fn ropes_booked_down_give_what_rope_events_give() {
        // Going down under a controller (the rp8400's SBA, the N4000's)
        // and straight from memory (the PC). Booked, a packet's arrival at
        // the bus is scheduled when it joins the ropes, not when it starts
        // across them: where it falls on the very picosecond of another
        // event (a bus transaction's end), the two are taken in another
        // order, a tie that either order breaks rightly; the rp8400's GigE
        // both ways at PCI-X has such ties. These
        // runs have none in their 30 ms.
        let mut fewer = false;
        for (scenario, id) in [
            ("hp2g-fig6-fc-write", "fc-wr+gige-bd.pci66.c1"),
            ("hp2g-fig2-gige-receive", "gige-rx+fc-bd.pci66.c1"),
            ("hp2g-fig5-fc-read", "fc-rd+gige-bd.pcix.c2"),
            ("atm-atm622-n4000", "atm622.bd.mtu1516"),
            ("matrox-table10-twocards", "twocards.100full"),
        ] {
            let (stepped, booked) = stepped_and_shortcut(scenario, id, (2.0, 30.0), |sys, on| {
                for r in &mut sys.p.ropes {
                    r.booked_down = on;
                }
            });
            let (n_events, n_booked) = (stepped.4, booked.4);
            // Under a controller the hand-off onto the ropes is no longer
            // an event; from memory straight onto them, as many events.
            assert!(
                n_booked <= n_events,
                "{id}: {n_booked} events booked ahead, {n_events} with rope events"
            );
            fewer |= n_booked < n_events;
        }
        assert!(fewer, "booking the ropes going down saved no event");
    }

    #[test]
    fn a_run_watching_both_ways_added_stops_no_later_and_knows_them_to_the_precision() {
        // GigE both ways beside FC both ways: each way of the GigE port
        // swings more than the two ways added.
        let (reg, exp) =
            bundled_experiment("hp2g-fig4-gige-bidirectional", "gige-bd+fc-bd.pcix.c1");
        let run = RunSpec {
            warmup_ms: 2.0,
            duration_ms: 60.0,
            min_ms: 10.0,
            batch_ms: 1.0,
            precision_pct: Some(1.0),
            ..RunSpec::default()
        };
        let at = |watch: &Watch| {
            let cfg = config::assemble(&reg, &exp).expect("assembles");
            simulate_assembled(cfg, &exp, &run, watch, 1).expect("runs")
        };
        let each = at(&Watch::EachWay);
        let gige: Vec<usize> = each
            .functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.label.ends_with(".gige"))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(gige.len(), 1);
        let added = at(&Watch::Only(vec![gige]));
        assert!(added.measured <= each.measured);
        assert!(
            added.measured < each.measured,
            "the ways added are known sooner here"
        );
        assert!(added.ci95_pct <= 1.0, "{}", added.ci95_pct);
        assert!(each.ci95_pct > added.ci95_pct);
        // Watching changes when the run stops, nothing it simulates: the
        // window of the longer run, watched either way, gives one answer.
        let fixed = RunSpec {
            duration_ms: added.measured.0 as f64 / 1e9,
            precision_pct: None,
            ..run
        };
        let cfg = config::assemble(&reg, &exp).expect("assembles");
        let plain = simulate_assembled(cfg, &exp, &fixed, &Watch::EachWay, 1).expect("runs");
        assert_eq!(plain.functions, added.functions);
        // A sum of no throughput moves nothing: the run stops at its floor.
        let none = at(&Watch::Only(vec![vec![]]));
        assert_eq!(none.measured, Picos::from_ns(10e6));
        assert_eq!(none.ci95_pct, 0.0);
    }

    #[test]
    fn a_run_stops_when_its_throughputs_are_known_to_the_precision_asked() {
        let (reg, exp) = bundled_experiment("hp2g-fig5-fc-read", "fc-rd.pcix.c1");
        let exp = &exp;
        let run = |precision_pct| RunSpec {
            warmup_ms: 2.0,
            duration_ms: 40.0,
            min_ms: 10.0,
            batch_ms: 1.0,
            precision_pct,
            ..RunSpec::default()
        };
        let fixed = simulate(&reg, exp, &run(None), 1).expect("runs");
        assert_eq!(fixed.measured, Picos::from_ns(40e6));
        let loose = simulate(&reg, exp, &run(Some(20.0)), 1).expect("runs");
        assert_eq!(loose.measured, Picos::from_ns(10e6), "stops at the floor");
        assert!(loose.ci95_pct <= 20.0);
        assert!(loose.events < fixed.events);
        let strict = simulate(&reg, exp, &run(Some(1e-6)), 1).expect("runs");
        assert_eq!(strict.measured, fixed.measured, "runs to the ceiling");
        assert!(strict.ci95_pct > 1e-6);
        // The same window gives the same answer, precision or not.
        assert_eq!(strict.functions, fixed.functions);
        // In between, a run stops at a check: the floor, then each time the
        // window has grown by a quarter, at the next whole batch: 10, 13 (past
        // 12.5), 17 (past 16.25), 22, 28, 35 ms, then the ceiling.
        let checks = [10, 13, 17, 22, 28, 35, 40];
        for p in [0.5, 1.0, 2.0, 5.0] {
            let r = simulate(&reg, exp, &run(Some(p)), 1).expect("runs");
            let ms = (r.measured.0 as f64 / 1e9).round() as u64;
            assert!(checks.contains(&ms), "{p}%: stopped at {ms} ms");
            assert!(
                ms == 40 || r.ci95_pct <= p,
                "{p}%: {} at {ms} ms",
                r.ci95_pct
            );
        }
    }
}
