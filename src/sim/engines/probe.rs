//! The registry's test engine, compiled only into the crate's unit tests
//! (its line in the list of engines and its `mod` line are under
//! `#[cfg(test)]`, so no build of the library or the binary offers it): a
//! function with no link that reads a block of host memory and then writes
//! it back, `outstanding` such chains at once. It exists to show that an
//! engine is one file plus one line in the list: its name, parameter rules,
//! links, workloads and assembly are all here, and the test below runs it
//! from a model file and a scenario through the public API.

use super::seam::{Ctx, DmaCfg, EngineType, FunctionInput, Reads, Token};
use crate::error::Result;
use crate::model::schema::dma_engine_kind;
use crate::model::{Demand, EngineDef, Shape};

/// What the probe waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeEv {
    /// A block read from host memory has arrived; write it back.
    Read,
    /// A block written to host memory has been posted; read the next.
    Written,
}

/// The probe's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeCfg {
    /// DMA engine.
    pub dma: DmaCfg,
    /// Bytes per block.
    pub block: u64,
    /// Chains of read-then-write in flight.
    pub chains: u32,
}

dma_engine_kind! {
    /// Parameters of the probe: a DMA engine's, nothing of its own.
    PROBE, ProbeParams {

    }
}

/// What model files know of the probe.
pub static KIND: EngineDef = EngineDef {
    name: "probe",
    rules: PROBE,
    framings: &[],
    carries: &[Shape::DmaBlocks],
};

/// Probe state.
#[derive(Debug)]
pub struct Probe {
    cfg: ProbeCfg,
    out: u64,
    inn: u64,
}

fn ev<T: From<ProbeEv>>(e: ProbeEv) -> T {
    T::from(e)
}

impl EngineType for Probe {
    type Ev = ProbeEv;
    type Cfg = ProbeCfg;
    const KIND: &'static EngineDef = &KIND;

    fn assemble(input: &FunctionInput) -> Result<ProbeCfg> {
        let p = ProbeParams::from_set(&input.spec.params, &input.spec.at)?;
        let mut cfg = ProbeCfg {
            dma: super::seam::dma_from_params(p.max_read, p.max_outstanding_reads, p.write_burst),
            block: 0,
            chains: 0,
        };
        for w in input.work() {
            if let Demand::RawDma {
                block_bytes,
                outstanding,
            } = w.demand
            {
                (cfg.block, cfg.chains) = (block_bytes, outstanding);
            }
        }
        Ok(cfg)
    }
    fn build(cfg: &ProbeCfg) -> Probe {
        Probe {
            cfg: cfg.clone(),
            out: 0,
            inn: 0,
        }
    }
    fn start<T: Token<ProbeEv>>(&mut self, cx: &mut Ctx<'_, T>) {
        for _ in 0..self.cfg.chains {
            cx.dma_read(self.cfg.block, ev(ProbeEv::Read));
        }
    }
    fn handle<T: Token<ProbeEv>>(&mut self, e: ProbeEv, cx: &mut Ctx<'_, T>) {
        match e {
            ProbeEv::Read => {
                self.out += self.cfg.block;
                cx.dma_write(self.cfg.block, ev(ProbeEv::Written));
            }
            ProbeEv::Written => {
                self.inn += self.cfg.block;
                cx.dma_read(self.cfg.block, ev(ProbeEv::Read));
            }
        }
    }
    fn delivered(&self) -> (u64, u64) {
        (self.out, self.inn)
    }
    fn reset_counters(&mut self) {
        (self.out, self.inn) = (0, 0);
    }
    fn dma(cfg: &ProbeCfg) -> DmaCfg {
        cfg.dma
    }
    fn busy(cfg: &ProbeCfg) -> bool {
        cfg.chains > 0
    }
    fn reads(_: &ProbeCfg) -> Reads {
        Reads::default()
    }
}

#[cfg(test)]
mod tests {
    use crate::loader::{load_registry, parse_model, parse_scenario};
    use std::path::PathBuf;

    #[test]
    fn a_model_file_names_the_probe_and_a_scenario_runs_it() {
        let base = load_registry(&[]).expect("bundled models");
        // The bundled DMA exerciser, its function driven by the probe.
        let (_, exerciser) = crate::loader::bundled_files("models/adapters/dma-exerciser.toml")[0];
        let card = exerciser
            .replace("name = \"dma-exerciser\"", "name = \"probe-card\"")
            .replace("engine = \"dma\"", "engine = \"probe\"");
        let reg = parse_model(PathBuf::from("probe.toml"), &card, &base).expect("a probe card");
        // The bundled raw DMA example, its card the probe's.
        let (_, example) =
            crate::loader::bundled_files("scenarios/bus-tests/rp8400-raw-dma.toml")[0];
        let scenario = example.replace("\"dma-exerciser\"", "\"probe-card\"");
        let sc = parse_scenario(PathBuf::from("probe-scenario.toml"), &scenario, &reg)
            .expect("a scenario on the probe");
        let r = crate::sim::simulate(&reg, &sc.experiments[0], &sc.run, 1).expect("runs");
        let f = &r.functions[0];
        assert!(f.out.0 > 0.0 && f.inn.0 > 0.0, "{f:?}");
        // Each chain reads a block, then writes it: as much each way.
        assert!((f.out.0 / f.inn.0 - 1.0).abs() < 0.05, "{f:?}");
    }
}
