//! Independent replications of one scenario (`run --replications`, a
//! sweep's points): each replication is the whole scenario run again with
//! a seed derived from the run seed ([`replication_seed`]).

use crate::error::Result;
use crate::model::{Registry, Scenario};
use crate::sim::ExperimentResult;

use super::{run_scenario, Runner};

/// The seed of replication `r` (from 0) of a run seeded `seed`; replication
/// 0 is the run itself.
pub fn replication_seed(seed: u64, r: u32) -> u64 {
    seed ^ (r as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Runs `n` independent replications of `sc` (seeds from
/// [`replication_seed`]), one after the other, each in `runner`'s pool;
/// per replication, the results in file order.
pub fn replications(
    reg: &Registry,
    sc: &Scenario,
    seed: u64,
    runner: &Runner,
    n: u32,
) -> Result<Vec<Vec<ExperimentResult>>> {
    (0..n)
        .map(|r| run_scenario(reg, sc, replication_seed(seed, r), runner))
        .collect()
}
