//! A placement request (`iosim place`): a server and partition, the cards to
//! place with the workload each carries, the constraints, and the objective.
//! Validated by the loader (`loader/place.rs`); searched by [`crate::place`].

use std::path::PathBuf;

use super::{RunSpec, Workload};
use crate::error::Location;

/// What the search maximises.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Objective {
    /// The sum of every card's throughput (both directions).
    Total,
    /// The worst card's share of its demand (its throughput alone in its
    /// best slot).
    WorstShare,
    /// Every card at least this throughput (bytes/s); placements that meet
    /// it ranked by total throughput, the others after them by the worst
    /// card's throughput.
    MinEach(f64),
}

impl Objective {
    /// `total`, `worst-share`, `min-each 50 MB/s`.
    pub fn words(&self) -> String {
        match self {
            Objective::Total => "total throughput (MB/s, every card both ways)".into(),
            Objective::WorstShare => {
                "worst card's share of its demand (throughput alone in its best slot), percent"
                    .into()
            }
            Objective::MinEach(b) => format!(
                "every card at least {} MB/s, then total throughput",
                crate::units::readable(b / 1e6)
            ),
        }
    }
}

/// A failover domain: what the cards of a group must not share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Domain {
    /// The bus segment and its bus adapter (bridge).
    Bus,
    /// The I/O controller (a slot straight to memory is its own).
    Controller,
    /// The chassis (as the request's `[[chassis]]` define them; without
    /// them the whole server is one chassis).
    Chassis,
}

impl Domain {
    /// `bus`, `controller`, `chassis`.
    pub fn name(self) -> &'static str {
        match self {
            Domain::Bus => "bus",
            Domain::Controller => "controller",
            Domain::Chassis => "chassis",
        }
    }

    /// `buses`, `controllers`, `chassis`.
    pub fn plural(self) -> &'static str {
        match self {
            Domain::Bus => "buses",
            Domain::Controller => "controllers",
            Domain::Chassis => "chassis",
        }
    }
}

/// One card to place.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaceCard {
    /// Its label (`name`, or `name-1`, `name-2`, ... with a `count`).
    pub label: String,
    /// The `[[card]]` entry it comes from (its `name`).
    pub entry: String,
    /// Adapter model.
    pub adapter: String,
    /// The link its functions run over instead of their adapter's.
    pub link: Option<String>,
    /// A slot it is already in (not moved by the search).
    pub fixed: Option<String>,
    /// A standby card (`role = "standby"`): it holds a slot and counts in
    /// failover groups and spread, but carries no load and no objective.
    pub standby: bool,
    /// Where its `[[card]]` entry is.
    pub at: Location,
}

/// Cards that must sit under different buses, controllers or chassis.
#[derive(Debug, Clone, PartialEq)]
pub struct Apart {
    /// Indices into [`PlaceRequest::cards`].
    pub cards: Vec<usize>,
    /// What they must not share.
    pub domain: Domain,
    /// Where it is written.
    pub at: Location,
}

/// A validated placement request.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaceRequest {
    /// Its name (`[place] name`, or the file's stem).
    pub name: String,
    /// The file it came from.
    pub file: PathBuf,
    /// Server model.
    pub server: String,
    /// Test bed model (the far ends of the links).
    pub testbed: String,
    /// Cells in the partition.
    pub cells: u32,
    /// CPUs per cell, when the request sets the partition's CPUs.
    pub cpus_per_cell: Option<u32>,
    /// Run length of every simulation.
    pub run: RunSpec,
    /// The cards, each `count` expanded.
    pub cards: Vec<PlaceCard>,
    /// Workloads; `card` indexes [`PlaceRequest::cards`].
    pub workloads: Vec<Workload>,
    /// Slots already taken by cards not in the request.
    pub taken: Vec<String>,
    /// Failover groups.
    pub apart: Vec<Apart>,
    /// Chassis: name and the slots in it (every slot in at most one).
    pub chassis: Vec<(String, Vec<String>)>,
    /// What to maximise.
    pub objective: Objective,
    /// Where the objective is written (the `[place]` table when absent).
    pub objective_at: Location,
}
