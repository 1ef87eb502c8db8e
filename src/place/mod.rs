//! Slot placement advice (`iosim place REQUEST.toml`): where to put a
//! request's cards so that the objective (total throughput, the worst
//! card's share of its demand, or a throughput every card must reach) is
//! best, as the simulator predicts it.
//!
//! 1. Each kind of card is simulated alone in one slot of each distinct
//!    path to memory it fits (slot modes and ropes, its segment, its
//!    controller): its throughput there, and its load on the bus, ropes,
//!    controller and CPUs. Its demand is its throughput alone in its best
//!    free slot.
//! 2. The placements are enumerated up to symmetry ([`search`]): cards of
//!    one kind are interchangeable, and so are slots with identical paths.
//!    Where there are more than [`SIMULATE_ALL`] and nothing ties the
//!    server's independent parts together (no failover group or fixed
//!    slot; the CPUs and memory below capacity whatever the placement), the
//!    parts are searched apart and combined ([`split`]). Otherwise, where
//!    there are too many, a local search on the estimate from many random
//!    starts stands in for the enumeration.
//! 3. Each placement gets an analytic estimate: every shared node (bus
//!    segment, ropes, I/O controller, CPUs) carries the sum of what its
//!    cards moved alone; a card gets its alone throughput divided by the
//!    worst load factor on its path. And a fluid bound ([`bound`]): what
//!    its simulation can reach at most; the largest over every placement
//!    (by the split, a relaxation where groups or fixed slots tie it)
//!    bounds what any placement could reach.
//! 4. The best placements by estimate (all of them where there are few)
//!    are simulated in one pool of threads ([`crate::app::run_experiments`]);
//!    after a split search in rounds of [`ROUND`], until no leader left
//!    could beat the best simulated by more than [`TIE_PCT`] by its bound.
//!    Each placement's seed comes from its own description, so results do
//!    not depend on the threads or on which other placements run. They are
//!    ranked by the simulated objective; the answer is proven best when
//!    every placement was simulated or the bound on all is within
//!    [`TIE_PCT`] of the best.
//!
//! The guidelines of the papers are not written in here: only the model's
//! predictions and the request's constraints decide.

pub mod bound;
pub mod search;
pub mod sections;
pub mod split;

use crate::app::{run_experiments, Job, Runner};
use crate::error::{Error, Result};
use crate::model::schema::{IoControllerParams, ServerParams};
use crate::model::{Domain, Experiment, Objective, PlaceRequest, Registry, Scenario, Workload};
use crate::sim::config::BusCfg;
use crate::sim::ExperimentResult;
use bound::{Bound, CardCap, Fluid, Placed};
use search::{Cards, Tree};
use split::Summary;

/// Random starts of the local search.
pub const LOCAL_STARTS: usize = 12;

/// Distinct placements at most that are all simulated by default.
pub const SIMULATE_ALL: usize = 64;

/// Placements simulated by default (the best by estimate) when there are
/// more than [`SIMULATE_ALL`].
pub const SIMULATE_MANY: usize = 24;

/// Leaders the split search keeps at most.
const MAX_LEADERS: usize = 64;

/// Leaders simulated together in one round of the split search (fixed, so
/// that which are simulated does not depend on the threads).
pub const ROUND: usize = 4;

/// Partial counts of cards at most that the split search combines.
const MAX_STATES: usize = 200_000;

/// How far the search and the simulations go.
#[derive(Debug, Clone, Copy)]
pub struct PlaceOptions {
    /// Run seed.
    pub seed: u64,
    /// Placements to simulate (the best by estimate, plus the worst two);
    /// `None`: every one when there are at most 64, else the best 24 (after
    /// a split search, at most that many, in rounds until the bound shows
    /// none left can win).
    pub simulate: Option<usize>,
    /// Distinct placements to enumerate at most before the local search
    /// takes over.
    pub max_placements: usize,
}

impl Default for PlaceOptions {
    fn default() -> Self {
        PlaceOptions {
            seed: 1,
            simulate: None,
            max_placements: 5_000,
        }
    }
}

/// What one card of the request did alone in one path class.
#[derive(Debug, Clone)]
struct Alone {
    /// Payload both ways, bytes/s.
    total: f64,
    /// Bus time it used, in bytes/s of its bus's peak (util x peak).
    bus: f64,
    /// Rope (and controller) load up and down, bytes/s, overhead included.
    up: f64,
    down: f64,
    /// CPU-seconds per second over the partition's CPUs.
    cpu: f64,
    /// Per function of the card (name, payload both ways, bytes/s).
    ports: Vec<(String, f64)>,
    /// Payload both ways at most in a placement: `total` raised by its
    /// run's 95% interval.
    most: f64,
    /// Whether every payload byte crossed its bus and ropes.
    crosses: bool,
    /// Memory utilisation.
    memory: f64,
}

/// A shared node on the way from the cards to memory, with its estimated
/// load (1 = full) in one placement.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeLoad {
    /// `bus segment/pair-7-8`, `ropes above bus/slot-3`, `controller ike0`, `cpus`.
    pub node: String,
    /// Load over capacity.
    pub load: f64,
}

/// One placement, estimated and maybe simulated.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The slot of each card (index into the server's slots).
    pub slots: Vec<usize>,
    /// `card@slot card@slot ...`.
    pub label: String,
    /// Estimated throughput of each card, bytes/s.
    pub est: Vec<f64>,
    /// Estimated loads of the nodes the placement uses, busiest first.
    pub loads: Vec<NodeLoad>,
    /// The estimate's score (higher is better).
    pub est_score: [f64; 3],
    /// The simulation, if run.
    pub result: Option<ExperimentResult>,
    /// Simulated throughput of each card, bytes/s (empty if not simulated).
    pub tput: Vec<f64>,
    /// The simulated score.
    pub score: [f64; 3],
    /// Pairs of cards that share a chassis, an I/O controller and a bus
    /// segment (fault and sharing domains), in that order: fewer is more
    /// spread.
    pub sharing: [usize; 3],
    /// The next placement ranked does as well within [`TIE_PCT`] (so this
    /// one is ahead of it by spread or headroom, not by its objective).
    pub tied_with_next: bool,
    /// Its fluid bound: what its simulation can reach at most.
    pub bound: Bound,
}

/// The domains a tie is settled over, widest first.
pub const SPREAD_DOMAINS: [Domain; 3] = [Domain::Chassis, Domain::Controller, Domain::Bus];

/// Pairs of cards of a placement (slot per card) under one domain of each
/// of [`SPREAD_DOMAINS`].
fn sharing(tree: &Tree, slots: &[usize]) -> [usize; 3] {
    SPREAD_DOMAINS.map(|d| {
        let mut n = 0;
        for (i, &a) in slots.iter().enumerate() {
            for &b in &slots[..i] {
                if tree.domain(a, d) == tree.domain(b, d) {
                    n += 1;
                }
            }
        }
        n
    })
}

/// Why a placement ranked just before another it ties with is ahead.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TieBreak {
    /// It spreads over the domain [`SPREAD_DOMAINS`]`[i]` more.
    Spread(usize),
    /// Equally spread, it leaves more headroom on its busiest shared node.
    Headroom,
    /// Equally spread and loaded: its objective is higher.
    Objective,
    /// Alike in all that: by name.
    Name,
}

/// What puts `a` ahead of `b` when they tie (as the ranking decides: spread,
/// then headroom, then the objective, then the name).
pub fn tie_break(a: &Candidate, b: &Candidate) -> TieBreak {
    if let Some(i) = (0..3).find(|&i| a.sharing[i] != b.sharing[i]) {
        return TieBreak::Spread(i);
    }
    if more_headroom(&a.loads, &b.loads) != std::cmp::Ordering::Equal {
        return TieBreak::Headroom;
    }
    if a.score != b.score {
        return TieBreak::Objective;
    }
    TieBreak::Name
}

/// How far the search went.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSummary {
    /// Every distinct placement was enumerated.
    pub enumerated_all: bool,
    /// Distinct placements estimated.
    pub distinct: usize,
    /// Steps of the enumeration.
    pub nodes: u64,
    /// Whether the local search ran (the enumeration stopped at its cap).
    pub local_search: bool,
    /// Placements simulated (the top by estimate, plus the worst two).
    pub simulated: usize,
    /// Of those, the best by estimate.
    pub best_simulated: usize,
    /// Alone runs (demand and estimate inputs).
    pub alone_runs: usize,
    /// Every distinct placement enumerated and simulated, or the bound on
    /// any placement within [`TIE_PCT`] of the best simulated: the answer is
    /// the best the model predicts.
    pub proven: bool,
    /// Every distinct placement enumerated and simulated.
    pub every_one_simulated: bool,
    /// The fluid bound on every placement of the request.
    pub bound: Bound,
    /// The best simulated score.
    pub best_score: [f64; 3],
    /// Leaders of the split search not simulated: their bound could not
    /// beat the best found by more than [`TIE_PCT`].
    pub pruned: usize,
    /// The split by independence, when the leaders came from it.
    pub split: Option<SplitSummary>,
}

/// How the split search went.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitSummary {
    /// Independent parts with a free slot.
    pub parts: usize,
    /// Distinct layouts among them (each enumerated once).
    pub layouts: usize,
    /// Sub-placements enumerated.
    pub enumerated: usize,
    /// Leaders kept by estimate (the worst kept besides them are not counted).
    pub leaders: usize,
    /// Whether every sub-placement of every count was enumerated.
    pub complete: bool,
    /// The CPUs' load at most, every card at its busiest alone (1 = full).
    pub cpu_most: f64,
    /// The memory's load at most, likewise.
    pub memory_most: f64,
}

/// The outcome of `iosim place`.
#[derive(Debug, Clone)]
pub struct Placement {
    /// The request.
    pub request: PlaceRequest,
    /// Slot names, in server order.
    pub slot_names: Vec<String>,
    /// Per card: its demand (bytes/s alone in its best free slot) and that slot.
    pub demand: Vec<(f64, String)>,
    /// The simulated placements, best first.
    pub ranked: Vec<Candidate>,
    /// The search.
    pub search: SearchSummary,
    /// Per card, per function with a workload: (function, demand bytes/s
    /// in the card's best slot).
    pub port_demand: Vec<Vec<(String, f64)>>,
    /// I/O controllers: name and bandwidth each way, bytes/s.
    pub controllers: Vec<(String, f64)>,
    /// CPUs in the partition.
    pub cpus: u32,
}

/// The experiment that puts `req`'s cards in `slots`.
fn experiment(req: &PlaceRequest, names: &[String], id: String, slots: &[usize]) -> Experiment {
    let slots = slots.iter().map(|&s| names[s].clone()).collect();
    request_experiment(req, id, slots)
}

/// The scenario a request's runs belong to: its name, file and run
/// settings, with no experiments of its own.
fn request_scenario(req: &PlaceRequest) -> Scenario {
    Scenario {
        name: req.name.clone(),
        title: String::new(),
        source: String::new(),
        fit: true,
        file: req.file.clone(),
        run: req.run,
        experiments: Vec::new(),
    }
}

/// The scenario (the request's run settings) and experiment that
/// simulated placement `c` of `p`: what its prediction interval's
/// parameter part runs again with each fitted value moved.
pub fn placement_experiment(p: &Placement, c: &Candidate) -> (Scenario, Experiment) {
    let req = &p.request;
    let sc = request_scenario(req);
    (
        sc,
        experiment(req, &p.slot_names, c.label.clone(), &c.slots),
    )
}

/// The experiment of `req`'s cards and workloads, card `i` in the slot
/// named `slots[i]` (empty: not placed yet).
pub(crate) fn request_experiment(req: &PlaceRequest, id: String, slots: Vec<String>) -> Experiment {
    Experiment {
        id,
        server: req.server.clone(),
        testbed: req.testbed.clone(),
        cells: req.cells,
        // A request's CPUs per cell are set on its server's model.
        cpus_per_cell: None,
        cards: req
            .cards
            .iter()
            .zip(slots)
            .map(|(c, s)| (c.label.clone(), c.adapter.clone(), s))
            .collect(),
        links: req.cards.iter().map(|c| c.link.clone()).collect(),
        workloads: req.workloads.clone(),
        figures: Vec::new(),
        at: req.objective_at.clone(),
    }
}

/// One card alone in one slot.
fn alone_experiment(req: &PlaceRequest, card: usize, slot: &str) -> Experiment {
    let c = &req.cards[card];
    let workloads: Vec<Workload> = req
        .workloads
        .iter()
        .filter(|w| w.card == card)
        .map(|w| Workload {
            card: 0,
            ..w.clone()
        })
        .collect();
    Experiment {
        id: format!("alone {}@{slot}", c.label),
        server: req.server.clone(),
        testbed: req.testbed.clone(),
        cells: req.cells,
        cpus_per_cell: None,
        cards: vec![(c.label.clone(), c.adapter.clone(), slot.to_string())],
        links: vec![c.link.clone()],
        workloads,
        figures: Vec::new(),
        at: c.at.clone(),
    }
}

/// `card@slot card@slot`, in card order.
fn label(req: &PlaceRequest, names: &[String], slots: &[usize]) -> String {
    req.cards
        .iter()
        .zip(slots)
        .map(|(c, &s)| format!("{}@{}", c.label, names[s]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Throughput per card (bytes/s, both ways) of a result, by label.
fn per_card(req: &PlaceRequest, r: &ExperimentResult) -> Vec<f64> {
    req.cards
        .iter()
        .map(|c| {
            let prefix = format!("{}.", c.label);
            r.functions
                .iter()
                .filter(|f| f.label.starts_with(&prefix))
                .map(|f| f.total().0)
                .sum()
        })
        .collect()
}

/// The score of per-card throughputs under `obj` (lexicographic, higher
/// is better).
pub fn score(obj: Objective, t: &[f64], demand: &[f64]) -> [f64; 3] {
    let total: f64 = t.iter().sum();
    let worst_share = t
        .iter()
        .zip(demand)
        .map(|(x, d)| if *d > 0.0 { x / d } else { 1.0 })
        .fold(f64::INFINITY, f64::min);
    let worst = t.iter().copied().fold(f64::INFINITY, f64::min);
    match obj {
        Objective::Total => [total, worst_share, 0.0],
        Objective::WorstShare => [worst_share, total, 0.0],
        Objective::MinEach(m) => {
            if worst >= m {
                [1.0, total, worst_share]
            } else {
                [0.0, worst, total]
            }
        }
    }
}

/// The objective's value of a score, in its unit (MB/s or percent).
pub fn objective_value(obj: Objective, s: &[f64; 3]) -> f64 {
    match obj {
        Objective::Total => s[0] / 1e6,
        Objective::WorstShare => s[0] * 100.0,
        Objective::MinEach(_) => s[1] / 1e6,
    }
}

/// Whether `a` ranks before `b`.
fn better(a: &[f64; 3], b: &[f64; 3]) -> std::cmp::Ordering {
    b.partial_cmp(a).unwrap_or(std::cmp::Ordering::Equal)
}

/// Simulated objectives closer than this, in percent, are a tie: below the
/// 1% every validated run is measured to, and far below the model's
/// accuracy against the papers (a few percent), so not a reason to prefer
/// one placement to another.
pub const TIE_PCT: f64 = 1.0;

/// Whether simulated scores `a` and `b` are the same within [`TIE_PCT`]:
/// the objective for `total` and `worst-share`; for `min-each`, the same
/// verdict and totals within it.
fn tied(obj: Objective, a: &[f64; 3], b: &[f64; 3]) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= TIE_PCT / 100.0 * x.abs().max(y.abs());
    match obj {
        Objective::Total | Objective::WorstShare => close(a[0], b[0]),
        Objective::MinEach(_) => a[0] == b[0] && close(a[1], b[1]),
    }
}

/// Ranks simulated placements: by simulated score, except that a run of
/// placements each within [`TIE_PCT`] of the first of the run is a tie,
/// which spread over fault and sharing domains decides (fewer pairs of
/// cards sharing a chassis, then a controller, then a bus), then headroom,
/// then the score, then the name.
fn rank_with_ties(obj: Objective, ranked: &mut [Candidate]) {
    ranked.sort_by(|x, y| better(&x.score, &y.score).then_with(|| x.label.cmp(&y.label)));
    let mut start = 0;
    while start < ranked.len() {
        let head = &ranked[start];
        let end = (start + 1..ranked.len())
            .find(|&j| !tied(obj, &head.score, &ranked[j].score))
            .unwrap_or(ranked.len());
        ranked[start..end].sort_by(|x, y| {
            x.sharing
                .cmp(&y.sharing)
                .then_with(|| more_headroom(&x.loads, &y.loads))
                .then_with(|| better(&x.score, &y.score))
                .then_with(|| x.label.cmp(&y.label))
        });
        for c in &mut ranked[start..end] {
            c.tied_with_next = true;
        }
        ranked[end - 1].tied_with_next = false;
        start = end;
    }
}

/// Estimated loads closer than this (half a percentage point) are alike
/// for headroom: the alone runs they are summed from are simulated, and a
/// difference below what the tables print is no reason to prefer one
/// placement.
pub const HEADROOM_ALIKE: f64 = 0.005;

/// Orders two placements' estimated loads (each busiest first) by headroom,
/// more first: the one whose busiest node is less loaded, then the next
/// busiest, and so on (a node the placement does not use counts as idle).
/// Among placements that do equally well, the one that leaves the most
/// room on what the cards share is the one to take. Loads within
/// [`HEADROOM_ALIKE`] of each other are alike.
pub fn more_headroom(a: &[NodeLoad], b: &[NodeLoad]) -> std::cmp::Ordering {
    let at = |l: &[NodeLoad], i: usize| l.get(i).map_or(0.0, |n| n.load);
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (at(a, i), at(b, i));
        if (x - y).abs() > HEADROOM_ALIKE {
            return x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
        }
    }
    std::cmp::Ordering::Equal
}

/// Answers a placement request on `reg`.
pub fn place(
    reg: &Registry,
    req: &PlaceRequest,
    opt: PlaceOptions,
    runner: &Runner,
) -> Result<Placement> {
    match place_with(reg, req, opt, runner, Sims::Run)? {
        Outcome::Whole(p) => Ok(*p),
        Outcome::Shard(_) => Err(Error::Internal("a whole placement ran as a shard".into())),
    }
}

/// One placement a shard of `place` simulated ([`place_shard`]).
#[derive(Debug, Clone)]
pub struct Simulated {
    /// Its index in the list of placements a sharded run simulates.
    pub index: usize,
    /// `card@slot card@slot ...`.
    pub label: String,
    /// A digest of the system it simulated (its assembled configuration)
    /// and the run's settings, which [`place_merged`] checks against its
    /// own.
    pub system: String,
    /// What its simulation measured.
    pub result: ExperimentResult,
}

/// The part `part` of `parts` (1-based) of a sharded `place`: the search
/// as [`place`] makes it (every shard makes it alike, with its alone
/// runs), then the simulations of the `part`-th of `parts` equal parts of
/// the list of placements a sharded run simulates, in list order.
///
/// That list is fixed before any simulation: the placements [`place`]
/// picks (the best by estimate and the worst two), or, after a split
/// search, every leader up to the cap and the worst two. There [`place`]
/// simulates in rounds and leaves out the leaders whose bound cannot beat
/// the best found, which depends on the rounds' results; a shard cannot
/// know the others' results, so the shards simulate every leader, and
/// [`place_merged`] plays the rounds again on the results and keeps what
/// [`place`] simulates. The leaders the rounds leave out are the cost of
/// sharding.
pub fn place_shard(
    reg: &Registry,
    req: &PlaceRequest,
    opt: PlaceOptions,
    runner: &Runner,
    part: u64,
    parts: u64,
) -> Result<Vec<Simulated>> {
    match place_with(reg, req, opt, runner, Sims::Shard(part, parts))? {
        Outcome::Shard(s) => Ok(s),
        Outcome::Whole(_) => Err(Error::Internal("a shard of a placement ran whole".into())),
    }
}

/// The answer [`place`] gives, with the simulations of the placements taken
/// from `given` (every part of a sharded run, [`place_shard`]) instead of
/// run: the search and the alone runs are made again, the rounds played on
/// the given results. Refused when `given` is not the list this search
/// makes, placement for placement and system for system (the parts were
/// written for another request, other models or other fitted values).
pub fn place_merged(
    reg: &Registry,
    req: &PlaceRequest,
    opt: PlaceOptions,
    runner: &Runner,
    given: &[Simulated],
) -> Result<Placement> {
    match place_with(reg, req, opt, runner, Sims::Given(given))? {
        Outcome::Whole(p) => Ok(*p),
        Outcome::Shard(_) => Err(Error::Internal("a merged placement ran as a shard".into())),
    }
}

/// Where the simulations of the placements come from.
enum Sims<'a> {
    /// Run here, in rounds where the search splits.
    Run,
    /// A shard: part `.0` of `.1` of the list is run, and nothing more.
    Shard(u64, u64),
    /// Given by every part of a sharded run.
    Given(&'a [Simulated]),
}

/// What [`place_with`] gives.
enum Outcome {
    /// The answer.
    Whole(Box<Placement>),
    /// A shard's simulations.
    Shard(Vec<Simulated>),
}

/// A digest of what the simulation of `e` in `sc` depends on (FNV-1a of
/// its assembled configuration's fingerprint and of the run's settings),
/// in hexadecimal.
fn system_of(reg: &Registry, sc: &Scenario, e: &Experiment) -> Result<String> {
    let text = format!(
        "{} {:?}",
        crate::sim::config::assemble(reg, e)?.fingerprint(),
        sc.run
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    Ok(format!("{h:016x}"))
}

/// The results of the placements of `list` from `given`, in list order,
/// each checked to be the placement and system of the list's entry.
fn given_results(
    reg: &Registry,
    sc: &Scenario,
    list: &[&Candidate],
    exp_of: &dyn Fn(usize) -> Experiment,
    given: &[Simulated],
) -> Result<Vec<ExperimentResult>> {
    let mut at: Vec<Option<&Simulated>> = vec![None; list.len()];
    // Refused at the request (it, or the models, changed since).
    let other = |why: String| Error::Invalid {
        at: crate::error::Location {
            file: sc.file.clone(),
            key: String::new(),
            line: 0,
            column: 0,
        },
        message: format!(
            "merge: the parts do not hold this request's placements ({why}): the request, \
             the models or the fitted values differ from those the shards read"
        ),
    };
    for s in given {
        match at.get_mut(s.index) {
            Some(slot @ None) => *slot = Some(s),
            Some(Some(_)) => return Err(other(format!("placement {} twice", s.index + 1))),
            None => {
                return Err(other(format!(
                    "{} placements simulated, this search has {}",
                    given.len(),
                    list.len()
                )))
            }
        }
    }
    at.iter()
        .enumerate()
        .map(|(i, s)| {
            let s = s.ok_or_else(|| other(format!("placement {} missing", i + 1)))?;
            if s.label != list[i].label {
                return Err(other(format!(
                    "placement {} is `{}` there, `{}` here",
                    i + 1,
                    s.label,
                    list[i].label
                )));
            }
            if s.system != system_of(reg, sc, &exp_of(i))? {
                return Err(other(format!(
                    "placement `{}` simulated another system",
                    s.label
                )));
            }
            Ok(s.result.clone())
        })
        .collect()
}

/// [`place`], [`place_shard`] and [`place_merged`]: the search, then the
/// simulations as `sims` says.
fn place_with(
    reg: &Registry,
    req: &PlaceRequest,
    opt: PlaceOptions,
    runner: &Runner,
    sims: Sims<'_>,
) -> Result<Outcome> {
    let mut reg = reg.clone();
    if let Some(n) = req.cpus_per_cell {
        let path = format!("server.{}.cpus_per_cell", req.server);
        if !reg.set_param(&path, f64::from(n)) {
            return Err(Error::Internal(format!("parameter {path} vanished")));
        }
    }
    let reg = &reg;
    let server = reg
        .servers
        .get(&req.server)
        .ok_or_else(|| Error::Internal(format!("server `{}` lost after loading", req.server)))?;
    let sp = ServerParams::from_set(&server.params, &server.at)?;
    let cpus = (sp.cpus_per_cell * f64::from(req.cells)).round() as u32;
    let tree = Tree::new(server, req);
    let cards = Cards::new(reg, server, &tree, req);
    let names: Vec<String> = tree.slots.iter().map(|s| s.name.clone()).collect();
    // Constraints that no placement can meet.
    for a in &req.apart {
        let have = tree.domains(a.domain);
        if a.cards.len() > have {
            return Err(Error::Invalid {
                at: a.at.clone(),
                message: format!(
                    "{} cards must sit under different {}, but server `{}` has only {} with a free slot: constraints conflict",
                    a.cards.len(),
                    a.domain.plural(),
                    req.server,
                    crate::units::count_text(have, a.domain.name(), a.domain.plural())
                ),
            });
        }
        let fixed: Vec<(usize, usize)> = a
            .cards
            .iter()
            .filter_map(|&c| cards.fixed[c].map(|s| (c, tree.domain(s, a.domain))))
            .collect();
        for (i, (c, d)) in fixed.iter().enumerate() {
            if let Some((o, _)) = fixed[..i].iter().find(|(_, e)| e == d) {
                return Err(Error::Invalid {
                    at: a.at.clone(),
                    message: format!(
                        "cards `{}` and `{}` must sit under different {} but their `slot`s share one: constraints conflict",
                        req.cards[*o].label,
                        req.cards[*c].label,
                        a.domain.plural()
                    ),
                });
            }
        }
    }
    // 1. Each kind of card alone in each path class it may use.
    let mut classes: Vec<String> = Vec::new();
    let mut class_of = vec![0usize; names.len()];
    let mut class_slot: Vec<usize> = Vec::new();
    for (s, class) in class_of.iter_mut().enumerate() {
        let k = tree.path_class(s);
        *class = match classes.iter().position(|x| *x == k) {
            Some(i) => i,
            None => {
                classes.push(k);
                class_slot.push(s);
                classes.len() - 1
            }
        };
    }
    let usable = |c: usize, s: usize| match cards.fixed[c] {
        Some(f) => f == s,
        None => !tree.slots[s].taken && cards.fits[c][s],
    };
    // (load kind, class): a run for every class some card of the kind may use.
    let mut alone_jobs: Vec<(usize, usize)> = Vec::new();
    let mut rep_card: Vec<usize> = vec![usize::MAX; cards.loads];
    for c in 0..req.cards.len() {
        if rep_card[cards.load[c]] == usize::MAX {
            rep_card[cards.load[c]] = c;
        }
    }
    for (k, &rep) in rep_card.iter().enumerate() {
        if req.cards[rep].standby {
            // A standby card moves nothing: no run needed.
            continue;
        }
        for cl in 0..classes.len() {
            let used = (0..req.cards.len())
                .filter(|&c| cards.load[c] == k)
                .any(|c| (0..names.len()).any(|s| class_of[s] == cl && usable(c, s)));
            if used {
                alone_jobs.push((k, cl));
            }
        }
    }
    let alone_exps: Vec<Experiment> = alone_jobs
        .iter()
        .map(|&(k, cl)| {
            // Any slot of the class will do, taken or not: the card is alone.
            let s = class_slot[cl];
            alone_experiment(req, rep_card[k], &names[s])
        })
        .collect();
    let sc = request_scenario(req);
    let alone_results = simulate(reg, &sc, &alone_exps, &opt, runner)?;
    let mut alone: Vec<Vec<Option<Alone>>> = vec![vec![None; classes.len()]; cards.loads];
    for (k, &rep) in rep_card.iter().enumerate() {
        if req.cards[rep].standby {
            alone[k] = vec![
                Some(Alone {
                    total: 0.0,
                    bus: 0.0,
                    up: 0.0,
                    down: 0.0,
                    cpu: 0.0,
                    ports: Vec::new(),
                    most: 0.0,
                    crosses: false,
                    memory: 0.0,
                });
                classes.len()
            ];
        }
    }
    for (&(k, cl), r) in alone_jobs.iter().zip(&alone_results) {
        let b = r.buses.first();
        let (bus, up, down) = match b {
            Some(b) => {
                let payload = b.rope_up.0.max(b.rope_down.0);
                let f = if payload > 0.0 {
                    (b.rope_util * b.rope_capacity.0 / payload).max(1.0)
                } else {
                    1.0
                };
                (b.util * b.peak.0, b.rope_up.0 * f, b.rope_down.0 * f)
            }
            None => (0.0, 0.0, 0.0),
        };
        let total: f64 = r.functions.iter().map(|f| f.total().0).sum();
        let ci = if r.ci95_pct.is_finite() {
            r.ci95_pct.max(0.0)
        } else {
            100.0
        };
        alone[k][cl] = Some(Alone {
            total,
            most: total * (1.0 + ci / 100.0),
            crosses: b.is_some_and(|b| b.data.0 >= total && b.rope_up.0 + b.rope_down.0 >= total),
            memory: r.memory_util.unwrap_or(0.0),
            bus,
            up,
            down,
            cpu: r.cpu_list.iter().map(|c| c.util).sum(),
            ports: r
                .functions
                .iter()
                .map(|f| {
                    let name = f.label.rsplit_once('.').map_or(f.label.as_str(), |x| x.1);
                    (name.to_string(), f.total().0)
                })
                .collect(),
        });
    }
    // Demand: alone in the best free slot.
    let demand: Vec<(f64, String)> = (0..req.cards.len())
        .map(|c| {
            let k = cards.load[c];
            let mut best = (0.0, String::new());
            for s in 0..names.len() {
                if !usable(c, s) {
                    continue;
                }
                if let Some(a) = &alone[k][class_of[s]] {
                    if a.total > best.0 || best.1.is_empty() {
                        best = (a.total, names[s].clone());
                    }
                }
            }
            best
        })
        .collect();
    let demand_bytes: Vec<f64> = demand.iter().map(|d| d.0).collect();
    // The objective counts the active cards only (a standby card carries no load).
    let active: Vec<bool> = req.cards.iter().map(|c| !c.standby).collect();
    let active_of = |v: &[f64]| -> Vec<f64> {
        v.iter()
            .zip(&active)
            .filter(|(_, a)| **a)
            .map(|(x, _)| *x)
            .collect()
    };
    let active_demand = active_of(&demand_bytes);
    let score_of = |t: &[f64]| score(req.objective, &active_of(t), &active_demand);
    let port_demand: Vec<Vec<(String, f64)>> = (0..req.cards.len())
        .map(|c| {
            let best = names.iter().position(|n| *n == demand[c].1);
            let ports = best
                .and_then(|s| alone[cards.load[c]][class_of[s]].as_ref())
                .map(|a| a.ports.clone())
                .unwrap_or_default();
            let adapter = &reg.adapters[&req.cards[c].adapter];
            ports
                .into_iter()
                .filter(|(f, _)| {
                    req.workloads.iter().any(|w| {
                        w.card == c
                            && adapter
                                .functions
                                .get(w.function)
                                .is_some_and(|x| x.name == *f)
                    })
                })
                .collect()
        })
        .collect();
    // Bus peaks by mode, controller bandwidths.
    let mut peaks: std::collections::HashMap<String, f64> = Default::default();
    for (m, b) in &reg.buses {
        peaks.insert(m.clone(), BusCfg::from_spec(b)?.peak().0);
    }
    let ctrl_bw: Vec<f64> = server
        .io_controllers
        .iter()
        .map(|c| IoControllerParams::from_set(&c.params, &c.at).map(|p| p.bandwidth))
        .collect::<Result<_>>()?;
    let ctrl_both: Vec<f64> = server
        .io_controllers
        .iter()
        .map(|c| {
            IoControllerParams::from_set(&c.params, &c.at)
                .map(|p| p.bandwidth_both_ways.unwrap_or(2.0 * p.bandwidth))
        })
        .collect::<Result<_>>()?;
    // 3. The estimate of one placement (or of some of its cards).
    let alone_of = |c: usize, s: usize| -> &Alone {
        alone[cards.load[c]][class_of[s]]
            .as_ref()
            .expect("an alone run for every usable slot")
    };
    let estimate = |pairs: &[(usize, usize)]| -> (Vec<f64>, Vec<NodeLoad>) {
        let n = pairs.len();
        let a: Vec<&Alone> = pairs.iter().map(|&(c, s)| alone_of(c, s)).collect();
        let mut factor = vec![1.0f64; n];
        let mut loads = Vec::new();
        let cpu: f64 = a.iter().map(|x| x.cpu).sum::<f64>() / f64::from(cpus.max(1));
        loads.push(NodeLoad {
            node: "cpus".into(),
            load: cpu,
        });
        for f in factor.iter_mut() {
            *f = f.max(cpu);
        }
        let mut ctrl_load = vec![(0.0f64, 0.0f64); ctrl_bw.len()];
        let mut by_seg: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for (i, &(_, s)) in pairs.iter().enumerate() {
            by_seg.entry(tree.slots[s].seg).or_default().push(i);
        }
        for (&g, on) in &by_seg {
            let seg = &tree.segs[g];
            let first = on[0];
            let (fc, fs) = pairs[first];
            // The fastest mode every card on the segment and its slot runs.
            let adapter = &reg.adapters[&req.cards[fc].adapter];
            let mode = adapter.modes.iter().find(|m| {
                on.iter().all(|&i| {
                    let (c, s) = pairs[i];
                    reg.adapters[&req.cards[c].adapter].modes.contains(m)
                        && server.slots[s].modes.contains(m)
                })
            });
            let peak = mode.and_then(|m| peaks.get(m)).copied().unwrap_or(1.0);
            let bus = on.iter().map(|&i| a[i].bus).sum::<f64>() / peak;
            let ropes = server.slots[fs].ropes;
            let rope_cap = sp.rope_bandwidth.unwrap_or(0.0) * f64::from(ropes);
            let up: f64 = on.iter().map(|&i| a[i].up).sum();
            let down: f64 = on.iter().map(|&i| a[i].down).sum();
            // A bus converter with no ropes: nothing to load but its controller.
            let rope = match ropes {
                0 => 0.0,
                _ => up.max(down) / rope_cap,
            };
            loads.push(NodeLoad {
                node: format!("bus {}", seg.name),
                load: bus,
            });
            loads.push(NodeLoad {
                node: format!("ropes above {}", seg.name),
                load: rope,
            });
            if let Some(ci) = server.slots[fs].controller {
                ctrl_load[ci].0 += up;
                ctrl_load[ci].1 += down;
            }
            for &i in on {
                factor[i] = factor[i].max(bus).max(rope);
            }
        }
        for (ci, (up, down)) in ctrl_load.iter().enumerate() {
            if *up == 0.0 && *down == 0.0 {
                continue;
            }
            let l = up.max(*down) / ctrl_bw[ci];
            loads.push(NodeLoad {
                node: format!("controller {}", server.io_controllers[ci].name),
                load: l,
            });
            for (i, &(_, s)) in pairs.iter().enumerate() {
                if server.slots[s].controller == Some(ci) {
                    factor[i] = factor[i].max(l);
                }
            }
        }
        loads.sort_by(|x, y| {
            y.load
                .partial_cmp(&x.load)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let est = (0..n).map(|i| a[i].total / factor[i]).collect();
        (est, loads)
    };
    let all_pairs =
        |slots: &[usize]| -> Vec<(usize, usize)> { slots.iter().copied().enumerate().collect() };
    let est_score = |slots: &[usize]| score_of(&estimate(&all_pairs(slots)).0);
    // Pairs sharing a domain as one number, fewer first: chassis, then
    // controllers, then buses.
    let weight = (req.cards.len() * req.cards.len() + 1) as f64;
    let spread = |slots: &[usize]| -> f64 {
        let [ch, ctrl, bus] = sharing(&tree, slots);
        -((ch as f64 * weight + ctrl as f64) * weight + bus as f64)
    };
    // The fluid bound's view of each card in each slot.
    let fluid = Fluid {
        seg_cap: tree
            .segs
            .iter()
            .map(|g| {
                let first = &server.slots[g.slots[0]];
                let peak = g
                    .slots
                    .iter()
                    .flat_map(|&s| server.slots[s].modes.iter())
                    .filter_map(|m| peaks.get(m))
                    .fold(0.0f64, |a, &b| a.max(b));
                // A bus converter with no ropes: the bus alone (its
                // controller is bounded apart).
                let ropes = match first.ropes {
                    0 => f64::INFINITY,
                    n => 2.0 * sp.rope_bandwidth.unwrap_or(0.0) * f64::from(n),
                };
                if peak > 0.0 {
                    peak.min(ropes)
                } else {
                    ropes
                }
            })
            .collect(),
        ctrl_cap: ctrl_both.clone(),
    };
    let placed = |c: usize, s: usize| -> Placed {
        let a = alone_of(c, s);
        Placed {
            cap: CardCap {
                most: a.most,
                crosses: a.crosses,
            },
            demand: demand_bytes[c],
            active: active[c],
            seg: tree.slots[s].seg,
            ctrl: tree.segs[tree.slots[s].seg].ctrl,
        }
    };
    let bound_of = |slots: &[usize]| -> Bound {
        let p: Vec<Placed> = slots
            .iter()
            .enumerate()
            .map(|(c, &s)| placed(c, s))
            .collect();
        fluid.bound(&p)
    };
    // The split by independence: parts sharing no bus, controller or
    // chassis, with the CPUs and memory below capacity whatever the
    // placement (each card at its busiest alone).
    let busiest = |f: &dyn Fn(&Alone) -> f64| -> f64 {
        (0..req.cards.len())
            .map(|c| {
                (0..names.len())
                    .filter(|&s| usable(c, s))
                    .filter_map(|s| alone[cards.load[c]][class_of[s]].as_ref())
                    .map(f)
                    .fold(0.0, f64::max)
            })
            .sum()
    };
    let cpu_most = busiest(&|a| a.cpu) / f64::from(cpus.max(1));
    let memory_most = busiest(&|a| a.memory);
    let rep_of_load: Vec<usize> = rep_card.clone();
    let load_count: Vec<usize> = (0..cards.loads)
        .map(|k| (0..req.cards.len()).filter(|&c| cards.load[c] == k).count())
        .collect();
    // A slot is usable by a kind where one of its cards may go (a card of
    // it fixed elsewhere does not make the others' slots usable to it).
    let usable_by_kind: Vec<Vec<bool>> = (0..cards.loads)
        .map(|k| {
            (0..names.len())
                .map(|s| (0..req.cards.len()).any(|c| cards.load[c] == k && usable(c, s)))
                .collect()
        })
        .collect();
    let usable_kind = |k: usize, s: usize| -> bool { usable_by_kind[k][s] };
    let placed_kind = |k: usize, s: usize| -> Placed {
        // The smallest demand of the kind: the largest share a card of it could reach.
        let mut p = placed(rep_of_load[k], s);
        p.demand = (0..req.cards.len())
            .filter(|&c| cards.load[c] == k)
            .map(|c| demand_bytes[c])
            .fold(f64::INFINITY, f64::min);
        p
    };
    let estimate_kind = |pairs: &[(usize, usize)]| -> Summary {
        let real: Vec<(usize, usize)> = pairs.iter().map(|&(k, s)| (rep_of_load[k], s)).collect();
        let est = estimate(&real).0;
        let mut sm = Summary::EMPTY;
        for (i, &(c, _)) in real.iter().enumerate() {
            if !active[c] {
                continue;
            }
            sm.sum += est[i];
            let d = demand_bytes[c];
            sm.min_share = sm.min_share.min(if d > 0.0 { est[i] / d } else { 1.0 });
            sm.min_est = sm.min_est.min(est[i]);
        }
        let slots: Vec<usize> = real.iter().map(|p| p.1).collect();
        sm.pairs = sharing(&tree, &slots);
        sm
    };
    let kinds = split::Kinds {
        count: load_count,
        usable: &usable_kind,
        placed: &placed_kind,
        estimate: &estimate_kind,
        fluid: &fluid,
    };
    // 2. The placements: every one where there are few.
    let deadline = runner.deadline().map(|d| d.0);
    let probe = search::enumerate(&tree, &cards, req, SIMULATE_ALL, 1_000_000, deadline);
    runner.check_deadline()?;
    let independent = req.apart.is_empty()
        && cards.fixed.iter().all(Option::is_none)
        && cpu_most <= 1.0
        && memory_most <= 1.0;
    let want = opt.simulate.unwrap_or(SIMULATE_MANY).min(MAX_LEADERS);
    let split_leaders = !probe.complete && independent;
    let sp_out = if probe.complete {
        None
    } else {
        let (lead, worst) = if split_leaders { (want, 2) } else { (0, 0) };
        split::split(
            &tree,
            req,
            &kinds,
            req.objective,
            weight,
            lead,
            worst,
            MAX_STATES,
            deadline,
        )
    };
    runner.check_deadline()?;
    let split_leaders = split_leaders && sp_out.as_ref().is_some_and(|s| s.parts > 1);
    // Each card at its cap in its best slot: a bound on any placement when
    // the split cannot combine the counts.
    let loose = {
        let mut b = Bound::EMPTY;
        for c in 0..req.cards.len() {
            let best = (0..names.len())
                .filter(|&s| usable(c, s))
                .map(|s| placed(c, s))
                .max_by(|x, y| x.cap.most.total_cmp(&y.cap.most));
            if let Some(p) = best.filter(|p| p.active) {
                b = b.join(Bound {
                    total: p.cap.most,
                    share: if p.demand > 0.0 {
                        p.cap.most / p.demand
                    } else {
                        1.0
                    },
                    worst: p.cap.most,
                });
            }
        }
        b
    };
    let mut bound = sp_out.as_ref().map_or(loose, |s| s.bound.min(loose));
    let (mut placements, en, local, worst): (
        Vec<Vec<usize>>,
        search::Enumerated,
        bool,
        Vec<Vec<usize>>,
    ) = if probe.complete {
        (probe.placements.clone(), probe, false, Vec::new())
    } else if split_leaders {
        let s = sp_out.as_ref().expect("the split ran");
        // Cards of a kind take the kind's slots in card order.
        let to_slots = |p: &Vec<(usize, usize)>| -> Vec<usize> {
            let mut next: Vec<std::collections::VecDeque<usize>> = (0..cards.loads)
                .map(|k| {
                    (0..req.cards.len())
                        .filter(|&c| cards.load[c] == k)
                        .collect()
                })
                .collect();
            let mut slots = vec![0; req.cards.len()];
            for &(k, s) in p {
                if let Some(c) = next[k].pop_front() {
                    slots[c] = s;
                }
            }
            slots
        };
        let leaders = s.leaders.iter().map(to_slots).collect();
        let worst = s.worst.iter().map(to_slots).collect();
        let en = search::Enumerated {
            placements: Vec::new(),
            complete: false,
            nodes: probe.nodes,
        };
        (leaders, en, false, worst)
    } else {
        let en = search::enumerate(&tree, &cards, req, opt.max_placements, 1_000_000, deadline);
        runner.check_deadline()?;
        let mut placements = en.placements.clone();
        let local = !en.complete;
        if local {
            // Seed the local search with the enumeration's best.
            let mut seeds: Vec<(usize, [f64; 3])> = placements
                .iter()
                .enumerate()
                .map(|(i, p)| (i, est_score(p)))
                .collect();
            seeds.sort_by(|x, y| better(&x.1, &y.1).then(x.0.cmp(&y.0)));
            let seeds: Vec<Vec<usize>> = seeds
                .iter()
                .take(4)
                .map(|(i, _)| placements[*i].clone())
                .collect();
            let more = search::local_search(
                &tree,
                &cards,
                req,
                &seeds,
                LOCAL_STARTS,
                opt.seed,
                100,
                &|p: &[usize]| {
                    let s = est_score(p);
                    (s[0], s[1], spread(p))
                },
                deadline,
            );
            runner.check_deadline()?;
            let mut seen: std::collections::HashSet<String> = placements
                .iter()
                .map(|p| search::canonical(&tree, &cards, p))
                .collect();
            for p in more {
                if seen.insert(search::canonical(&tree, &cards, &p)) {
                    placements.push(p);
                }
            }
        }
        (placements, en, local, Vec::new())
    };
    if en.complete {
        // Every placement at hand: the largest of their own bounds.
        let most = placements
            .iter()
            .map(|p| bound_of(p))
            .reduce(Bound::max)
            .unwrap_or(Bound::EMPTY);
        bound = bound.min(most);
    }
    if placements.is_empty() {
        let at = req
            .apart
            .first()
            .map(|a| a.at.clone())
            .unwrap_or_else(|| req.objective_at.clone());
        return Err(Error::Invalid {
            at,
            message: format!(
                "no placement of the {} cards in the free slots of `{}` keeps every failover group apart: constraints conflict",
                req.cards.len(),
                req.server
            ),
        });
    }
    let candidate = |slots: Vec<usize>| -> Candidate {
        let (est, loads) = estimate(&all_pairs(&slots));
        let s = score_of(&est);
        Candidate {
            label: label(req, &names, &slots),
            sharing: sharing(&tree, &slots),
            bound: bound_of(&slots),
            slots,
            est,
            loads,
            est_score: s,
            result: None,
            tput: Vec::new(),
            score: [f64::NEG_INFINITY; 3],
            tied_with_next: false,
        }
    };
    let by_estimate = |x: &Candidate, y: &Candidate| {
        better(&x.est_score, &y.est_score)
            .then_with(|| x.sharing.cmp(&y.sharing))
            .then_with(|| more_headroom(&x.loads, &y.loads))
            .then_with(|| x.label.cmp(&y.label))
    };
    let mut seen: std::collections::HashSet<String> = Default::default();
    placements.retain(|p| seen.insert(search::canonical(&tree, &cards, p)));
    let mut cands: Vec<Candidate> = placements.drain(..).map(candidate).collect();
    cands.sort_by(by_estimate);
    // The worst by estimate the split found, if not among the leaders.
    let mut worst: Vec<Candidate> = worst
        .into_iter()
        .filter(|p| seen.insert(search::canonical(&tree, &cards, p)))
        .map(candidate)
        .collect();
    worst.sort_by(|x, y| by_estimate(y, x));
    worst.truncate(2);
    worst.reverse();
    let distinct = cands.len() + worst.len();
    let leaders_kept = cands.len();
    // 4. Simulate the best by estimate, and the two worst (why they lose):
    // after a split search in rounds, from the leaders up to the cap;
    // else a fixed pick.
    let cap = want.min(cands.len());
    let (pick, best_picked): (Vec<usize>, usize) = if split_leaders {
        (Vec::new(), 0)
    } else {
        let k = match opt.simulate {
            Some(k) => k.max(1),
            None if distinct <= SIMULATE_ALL => distinct,
            None => SIMULATE_MANY,
        };
        let mut pick: Vec<usize> = (0..distinct.min(k)).collect();
        let best = pick.len();
        for i in distinct.saturating_sub(2)..distinct {
            if !pick.contains(&i) {
                pick.push(i);
            }
        }
        (pick, best)
    };
    // Every placement the run may simulate, in order: the leaders up to
    // the cap then the worst two, or the pick. A shard simulates its share
    // of all of them; the rounds may leave some of the leaders out.
    let list: Vec<&Candidate> = if split_leaders {
        cands[..cap].iter().chain(&worst).collect()
    } else {
        pick.iter().map(|&i| &cands[i]).collect()
    };
    let exp_of = |i: usize| experiment(req, &names, list[i].label.clone(), &list[i].slots);
    let given = match sims {
        Sims::Run => None,
        Sims::Shard(part, parts) => {
            let range = crate::part::share(list.len(), part, parts);
            let exps: Vec<Experiment> = range.clone().map(exp_of).collect();
            let results = simulate(reg, &sc, &exps, &opt, runner)?;
            return range
                .zip(exps)
                .zip(results)
                .map(|((index, e), result)| {
                    Ok(Simulated {
                        index,
                        label: e.id.clone(),
                        system: system_of(reg, &sc, &e)?,
                        result,
                    })
                })
                .collect::<Result<Vec<_>>>()
                .map(Outcome::Shard);
        }
        Sims::Given(given) => Some(given_results(reg, &sc, &list, &exp_of, given)?),
    };
    let mut ranked: Vec<Candidate> = Vec::new();
    let mut pruned = 0;
    // Simulates the placements `at` of the list (or takes their given
    // results) and adds them to `ranked`.
    let simulate_these = |at: Vec<usize>, ranked: &mut Vec<Candidate>| -> Result<()> {
        let results = match &given {
            Some(g) => at.iter().map(|&i| g[i].clone()).collect(),
            None => {
                let exps: Vec<Experiment> = at.iter().map(|&i| exp_of(i)).collect();
                simulate(reg, &sc, &exps, &opt, runner)?
            }
        };
        for (i, r) in at.into_iter().zip(results) {
            let mut c = list[i].clone();
            c.tput = per_card(req, &r);
            c.score = score_of(&c.tput);
            c.result = Some(r);
            ranked.push(c);
        }
        Ok(())
    };
    let best_simulated;
    if split_leaders {
        // In rounds of the leaders (and the worst two with the first),
        // until no leader left can beat the best found by its bound.
        let mut next = ROUND.min(cap);
        let mut first: Vec<usize> = (0..next).collect();
        first.extend(cap..list.len());
        simulate_these(first, &mut ranked)?;
        while next < cap {
            let top = ranked
                .iter()
                .map(|c| c.score)
                .max_by(|a, b| better(b, a))
                .unwrap_or([f64::NEG_INFINITY; 3]);
            let open: Vec<usize> = (next..cap)
                .filter(|&i| bound::can_beat(req.objective, &cands[i].bound, &top, TIE_PCT))
                .take(ROUND)
                .collect();
            let Some(&last) = open.last() else {
                pruned += cap - next;
                break;
            };
            pruned += last + 1 - next - open.len();
            next = last + 1;
            simulate_these(open, &mut ranked)?;
        }
        best_simulated = ranked.len() - worst.len();
    } else {
        best_simulated = best_picked;
        simulate_these((0..list.len()).collect(), &mut ranked)?;
    }
    rank_with_ties(req.objective, &mut ranked);
    let simulated = ranked.len();
    let top = ranked
        .iter()
        .map(|c| c.score)
        .max_by(|a, b| better(b, a))
        .unwrap_or([f64::NEG_INFINITY; 3]);
    let every_one = en.complete && simulated == distinct;
    let by_bound = !bound::can_beat(req.objective, &bound, &top, TIE_PCT);
    Ok(Outcome::Whole(Box::new(Placement {
        request: req.clone(),
        slot_names: names,
        demand,
        ranked,
        search: SearchSummary {
            enumerated_all: en.complete,
            distinct,
            nodes: en.nodes,
            local_search: local,
            simulated,
            best_simulated,
            alone_runs: alone_jobs.len(),
            proven: every_one || by_bound,
            every_one_simulated: every_one,
            bound,
            best_score: top,
            pruned,
            split: sp_out.filter(|_| split_leaders).map(|s| SplitSummary {
                parts: s.parts,
                layouts: s.groups,
                enumerated: s.enumerated,
                leaders: leaders_kept,
                complete: s.complete,
                cpu_most,
                memory_most,
            }),
        },
        port_demand,
        controllers: server
            .io_controllers
            .iter()
            .zip(&ctrl_bw)
            .map(|(c, b)| (c.name.clone(), *b))
            .collect(),
        cpus,
    })))
}

/// Simulates `exps` of the request's scenario `sc` in `runner`'s pool,
/// with the options' seed.
fn simulate(
    reg: &Registry,
    sc: &Scenario,
    exps: &[Experiment],
    opt: &PlaceOptions,
    runner: &Runner,
) -> Result<Vec<ExperimentResult>> {
    let jobs: Vec<Job> = exps.iter().map(|e| Job::new(reg, sc, e, e)).collect();
    run_experiments(&jobs, opt.seed, runner, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    fn loads(l: &[f64]) -> Vec<NodeLoad> {
        l.iter()
            .map(|&load| NodeLoad {
                node: String::new(),
                load,
            })
            .collect()
    }

    /// Places the request `text` (simulating every placement) and checks
    /// that no simulated placement reaches more than its own bound or the
    /// bound on every placement: total, worst card and worst share.
    fn check_bound(name: &str, text: &str) -> Placement {
        let reg = crate::loader::load_registry(&[]).expect("bundled models");
        let req = crate::loader::parse_place_request(format!("{name}.toml").into(), text, &reg)
            .expect("a valid request");
        let runner = Runner::new(2).expect("threads");
        let p = place(&reg, &req, PlaceOptions::default(), &runner).expect("placed");
        assert!(p.search.every_one_simulated, "{name}: {:?}", p.search);
        let demand: Vec<f64> = p.demand.iter().map(|d| d.0).collect();
        let mut most = [0.0f64; 3];
        for c in &p.ranked {
            let active: Vec<usize> = (0..req.cards.len())
                .filter(|&i| !req.cards[i].standby)
                .collect();
            let t: Vec<f64> = active.iter().map(|&i| c.tput[i]).collect();
            let d: Vec<f64> = active.iter().map(|&i| demand[i]).collect();
            let [total, share, _] = score(Objective::Total, &t, &d);
            let worst = t.iter().copied().fold(f64::INFINITY, f64::min);
            for (x, b, what) in [
                (total, c.bound.total, "total"),
                (share, c.bound.share, "worst share"),
                (worst, c.bound.worst, "worst card"),
            ] {
                // Within rounding (sums in another order).
                assert!(
                    x <= b * (1.0 + 1e-12),
                    "{name}: {} {what} {x} above its bound {b}",
                    c.label
                );
            }
            most = [most[0].max(total), most[1].max(share), most[2].max(worst)];
        }
        let b = p.search.bound;
        let slack = 1.0 + 1e-12;
        assert!(
            most[0] <= b.total * slack && most[1] <= b.share * slack && most[2] <= b.worst * slack,
            "{name}: {most:?} {b:?}"
        );
        // And it says something: the total within twice the best.
        assert!(b.total < 2.0 * most[0], "{name}: {most:?} {b:?}");
        p
    }

    fn request_file(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/place")
            .join(format!("{name}.toml"));
        std::fs::read_to_string(path).expect("a request file")
    }

    #[test]
    fn no_simulated_placement_exceeds_the_fluid_bound() {
        // Every placement of each simulated: the exhaustive best is within
        // the bound, whatever the objective and the limit (cards'
        // processors, buses, ropes, controllers, links, CPUs).
        for name in [
            "rx6600-four",
            "hp2g-dual-function",
            "vclass-atm155",
            "nclass-atm622",
            "rx6600-ab379b-gige",
        ] {
            check_bound(name, &request_file(name));
        }
        // min-each, with a minimum some placements miss.
        let text = request_file("vclass-atm155").replace(
            "objective = \"total\"",
            "objective = \"min-each\"\nmin_mb_s = 15",
        );
        check_bound("vclass-atm155-min-each", &text);
    }

    #[test]
    fn headroom_compares_the_busiest_node_then_the_next() {
        // Equal busiest nodes (two buses at 16%): the one whose next node is
        // less loaded (each controller 1% against one at 2%) comes first.
        let spread = loads(&[0.16, 0.16, 0.01, 0.01]);
        let together = loads(&[0.16, 0.16, 0.02]);
        assert_eq!(more_headroom(&spread, &together), Ordering::Less);
        assert_eq!(more_headroom(&together, &spread), Ordering::Greater);
        // A less loaded busiest node wins whatever follows.
        assert_eq!(
            more_headroom(&loads(&[0.5, 0.5]), &loads(&[0.6])),
            Ordering::Less
        );
        assert_eq!(more_headroom(&spread, &spread), Ordering::Equal);
    }
}
