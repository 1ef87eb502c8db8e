//! The application layer: everything that runs simulations in batches.
//! A [`Runner`] holds the pool of threads (rayon, `--threads`), the run's
//! limits as values (the wall-clock bound) and the progress bar (indicatif,
//! on a terminal only); [`batch`] runs experiments through it (validation,
//! replications, sweeps, placements and every model evaluation of a fit or
//! a cross-validation fold); [`validation()`] and [`replications()`] are the
//! runs of `validate`, `plot`, `report` and `run --replications`. Each
//! experiment is seeded by what it simulates, so results depend neither on
//! the threads nor on the timing. Nothing here formats or prints.

pub mod batch;
pub mod intervals;
pub mod replications;
pub mod runner;
pub mod sensitivity;
pub mod validation;

pub use batch::{
    run_experiments, run_experiments_counted, run_experiments_cut, run_scenario, run_scenarios,
    run_scenarios_at, Job, Wanted,
};
pub use intervals::{
    fitted_moves, moved_registry, parameter_moves, rows_with_intervals, scenario_moves, Move,
};
pub use replications::{replication_seed, replications};
pub use runner::{Runner, MAX_THREADS};
pub use sensitivity::{
    assumed_moves, run_effects, scenario_assumed_moves, validation_effects, AssumedRuns,
    ExperimentRuns, ValueRuns,
};
pub use validation::{validation, Validation};
