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
    use crate::loader::{bundled_files, load_registry, parse_scenario};
    use std::path::PathBuf;

    /// The bundled raw DMA example's bidirectional workloads.
    const DMA: &str =
        "kind = \"dma\"\ndirection = \"bidirectional\"\nblock_kib = 4\noutstanding = 4";

    #[test]
    fn a_scenario_names_the_probe_workload_and_it_runs_as_what_it_asks() {
        let reg = load_registry(&[]).expect("bundled models");
        let (_, example) = bundled_files("scenarios/bus-tests/rp8400-raw-dma.toml")[0];
        let load = |text: &str| parse_scenario(PathBuf::from("probe.toml"), text, &reg);
        let probe = example.replace(
            DMA,
            "kind = \"probe\"\ndirection = \"bidirectional\"\nblock_kib = 4",
        );
        assert_ne!(probe, example);
        let (dma, probe) = (load(example).expect("loads"), load(&probe).expect("loads"));
        let both = |sc: &crate::model::Scenario| {
            let e = sc
                .experiments
                .iter()
                .find(|e| e.id.starts_with("dma-bidirectional"));
            e.expect("a bidirectional experiment").clone()
        };
        let (a, b) = (both(&probe), both(&dma));
        assert_eq!(a.workloads[0].kind.name, "probe");
        assert_eq!(
            a.workloads[0].to_string(),
            "raw DMA 4 KiB blocks, 4 in flight, both ways"
        );
        // What it asks is the dma workload's: the same run, to the byte.
        let run = |e| crate::sim::simulate(&reg, e, &dma.run, 1).expect("runs");
        let (fa, fb) = (&run(&a).functions[0], &run(&b).functions[0]);
        assert!(fa.out.0 > 0.0 && fa.inn.0 > 0.0, "{fa:?}");
        assert_eq!((fa.out.0, fa.inn.0), (fb.out.0, fb.inn.0));

        // Its own rules: a key or a direction of another kind is refused.
        for (from, to, says) in [
            (
                DMA,
                "kind = \"probe\"\noutstanding = 2\ndirection = \"bidirectional\"",
                "`outstanding` does not apply to a `probe` workload",
            ),
            (
                "kind = \"dma\"\ndirection = \"read\"",
                "kind = \"probe\"\ndirection = \"read\"",
                "a probe workload's direction is bidirectional",
            ),
        ] {
            let err = load(&example.replace(from, to))
                .expect_err("refused")
                .to_string();
            assert!(err.contains(says), "{err}");
        }
    }
}
