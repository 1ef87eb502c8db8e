//! The registry's test workload, compiled only into the crate's unit tests
//! (its `mod` line and its line in the list of workload kinds are under
//! `#[cfg(test)]`): `probe`, raw DMA blocks of `block_kib` (8 KiB unless
//! given), four in flight each way, and no other key or direction. It
//! exists to show that a workload kind is one file plus one line in the
//! list: its name, keys, direction words, the engines it fits (by the shape
//! of what it asks) and how it is made are all here, and the test below
//! runs it from a scenario through the loader, assembly and a simulation.

use crate::model::{Demand, Direction, Shape, WorkloadArgs, WorkloadDef};

/// What scenario files know of the probe workload.
pub static KIND: WorkloadDef = WorkloadDef {
    name: "probe",
    keys: &["block_kib"],
    direction,
    words: ["probe reads", "probe writes"],
    shape: Shape::DmaBlocks,
    make,
};

/// Both ways only.
fn direction(word: &str) -> Option<Result<Direction, &'static str>> {
    match word {
        "bidirectional" => Some(Ok(Direction::Both)),
        "read" | "write" | "transmit" | "receive" => {
            Some(Err("a probe workload's direction is bidirectional"))
        }
        _ => None,
    }
}

fn make(a: &mut dyn WorkloadArgs) -> Option<Demand> {
    let block_bytes = a.size("block_kib", 8.0)?;
    Some(Demand::RawDma {
        block_bytes,
        outstanding: 4,
    })
}

#[cfg(test)]
mod tests {
    use crate::loader::{load_registry, parse_scenario};
    use std::path::PathBuf;

    /// A scenario of one experiment: the bundled DMA exerciser in an
    /// rp8400 slot, its function running `workload`.
    fn scenario(workload: &str) -> String {
        format!(
            r#"
[scenario]
name = "probe-workload"
title = "the registry's test workload"
source = "none: a test"

[run]
warmup_ms = 1
duration_ms = 5

[[experiment]]
id = "probe"
server = "rp8400-seu"
testbed = "hp-2004-lab"
cells = 1

[[experiment.card]]
adapter = "dma-exerciser"
slot = "seu-1"

[[experiment.workload]]
card = "dma-exerciser"
function = "dma"
{workload}
"#
        )
    }

    #[test]
    fn a_scenario_names_the_probe_workload_and_it_runs_as_what_it_asks() {
        let reg = load_registry(&[]).expect("bundled models");
        let probe = scenario("kind = \"probe\"\ndirection = \"bidirectional\"");
        let sc = parse_scenario(PathBuf::from("probe.toml"), &probe, &reg).expect("loads");
        let w = &sc.experiments[0].workloads[0];
        assert_eq!(w.kind.name, "probe");
        assert_eq!(
            w.to_string(),
            "raw DMA 8 KiB blocks, 4 in flight, both ways"
        );
        // What it asks is a dma workload's: the same run, to the byte.
        let dma = scenario(
            "kind = \"dma\"\ndirection = \"bidirectional\"\nblock_kib = 8\noutstanding = 4",
        );
        let same = parse_scenario(PathBuf::from("dma.toml"), &dma, &reg).expect("loads");
        let run = |sc: &crate::model::Scenario| {
            crate::sim::simulate(&reg, &sc.experiments[0], &sc.run, 1).expect("runs")
        };
        let (a, b) = (run(&sc), run(&same));
        let (fa, fb) = (&a.functions[0], &b.functions[0]);
        assert!(fa.out.0 > 0.0 && fa.inn.0 > 0.0, "{fa:?}");
        assert_eq!((fa.out.0, fa.inn.0), (fb.out.0, fb.inn.0));

        // Its own rules: a key or a direction of another kind is refused.
        for (extra, says) in [
            (
                "direction = \"read\"\noutstanding = 2",
                "`outstanding` does not apply to a `probe` workload",
            ),
            (
                "direction = \"read\"",
                "a probe workload's direction is bidirectional",
            ),
        ] {
            let text = scenario(&format!("kind = \"probe\"\n{extra}"));
            let err = parse_scenario(PathBuf::from("bad.toml"), &text, &reg)
                .expect_err("refused")
                .to_string();
            assert!(err.contains(says), "{err}");
        }
    }
}
