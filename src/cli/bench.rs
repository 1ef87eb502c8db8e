//! `iosim bench`: engine benchmarks, one line of `key=value` figures each
//! (the only output that reports wall-clock time).

use clap::builder::RangedU64ValueParser;
use clap::Subcommand;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub which: BenchCmd,
}

#[derive(Subcommand)]
pub enum BenchCmd {
    /// K DMA masters sharing one bus (compare with shared/bench/bus_contention_simpy.py).
    BusContention {
        /// Number of masters, 1 to 100000.
        #[arg(long, default_value_t = 4, value_parser = RangedU64ValueParser::<usize>::new().range(1..=100_000))]
        masters: usize,
        /// Simulated seconds, more than 0 and at most 100.
        #[arg(long, default_value_t = 0.05, value_parser = sim_seconds)]
        sim_seconds: f64,
        /// Seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

/// `--sim-seconds`: more than 0 and at most 100 simulated seconds.
fn sim_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 100.0 => Ok(v),
        _ => Err("expected simulated seconds, more than 0 and at most 100".into()),
    }
}

/// `iosim bench`.
pub fn execute(a: Args) -> String {
    let BenchCmd::BusContention {
        masters,
        sim_seconds,
        seed,
    } = a.which;
    let r = iosim::bench::bus_contention(masters, sim_seconds, seed);
    format!(
        "masters={} sim_seconds={} seed={} transactions={} wall_s={:.3} tx_per_wall_s={:.0} bus_MB_s={:.1} per_master_MB_s={:.1}\n",
        r.masters, r.sim_seconds, r.seed, r.transactions, r.wall_s, r.tx_per_wall_s, r.bus_mb_s, r.per_master_mb_s
    )
}
