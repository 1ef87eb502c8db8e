//! A server's I/O tree as data (`iosim show server NAME`): memory, the I/O
//! controllers, the bus segments with their bridge, and the slots, each with
//! its capacity. Data only: [`crate::sections`] renders it.

use crate::error::{Error, Location, Result};
use crate::model::schema::{BridgeParams, IoControllerParams, ServerParams, SCALED_COSTS};
use crate::model::{ParamSet, Registry, ServerSpec, SlotSpec};
use crate::sim::config::BusCfg;
use crate::units::BytesPerSec;

/// What a node of the tree is, with what it holds.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// The partition's memory and CPUs.
    Memory {
        /// Cells a partition can have.
        cells_max: u64,
        /// CPUs in a cell.
        cpus_per_cell: u64,
        /// Latency of a line from the cell's own memory, ns.
        local_ns: f64,
        /// Latency of a line from another cell's memory, ns (None: a single
        /// memory).
        remote_ns: Option<f64>,
        /// The CPU model, its clock and rating, and where the CPU costs
        /// come from, in words.
        cpu: String,
    },
    /// An I/O controller: its link to memory, shared by the slots under it.
    IoController {
        /// Header bytes per packet on its link.
        packet_overhead: u64,
        /// MB/s its link sustains both ways together, if it has such a limit.
        both_ways_mb_s: Option<f64>,
        /// The chassis it is the controller of and the cell that chassis
        /// hangs from, when the server declares `[[chassis]]` copies.
        chassis: Option<(u32, Option<u32>)>,
    },
    /// A bus segment with its bridge: a slot's own, or shared by several.
    Segment {
        /// The segment's name when slots share it; `None`: one slot's own bus.
        shared: Option<String>,
        /// The fastest bus mode every slot of the segment can run (`None`
        /// when they share none).
        mode: Option<String>,
        /// The bridge (bus adapter) above it.
        bridge: BridgeParams,
    },
    /// A slot.
    Slot {
        /// Bus modes it can run, fastest first.
        modes: Vec<String>,
        /// Ropes from its bus adapter (0: a bus converter on its I/O
        /// controller, a system bus).
        ropes: u32,
        /// The ropes' data rate each way (ropes x rope bandwidth).
        rope_capacity: BytesPerSec,
    },
}

impl NodeKind {
    /// The kind's name (`memory`, `io_controller`, `segment`, `slot`).
    pub fn name(&self) -> &'static str {
        match self {
            NodeKind::Memory { .. } => "memory",
            NodeKind::IoController { .. } => "io_controller",
            NodeKind::Segment { .. } => "segment",
            NodeKind::Slot { .. } => "slot",
        }
    }
}

/// One node of a server's I/O tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Unique in the tree: the kind and the model's name (`memory`,
    /// `controller/sba`, `segment/pair-1`, `bus/seu-3` for a slot's own bus,
    /// `slot/seu-3`).
    pub id: String,
    /// Index of the parent node in [`ServerTree::nodes`]; `None` for memory.
    pub parent: Option<usize>,
    /// Depth in the tree (memory 0).
    pub depth: usize,
    /// Its data rate each way: a controller's bandwidth, a segment's or a
    /// slot's bus peak in its fastest mode, memory's bandwidth over all the
    /// cells; `None` when not modelled (a server without `memory_bandwidth`)
    /// or when a segment's slots share no mode.
    pub capacity: Option<BytesPerSec>,
    /// What it is.
    pub kind: NodeKind,
}

/// A server's I/O tree, parents before their children (depth first, in the
/// order of the server file).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerTree {
    /// The server's name.
    pub server: String,
    /// The nodes; `nodes[0]` is memory.
    pub nodes: Vec<Node>,
}

/// The server named `name` in `reg`. No name is a usage error and an unknown
/// one an unknown-name error, each listing the servers that exist.
pub fn find_server<'a>(reg: &'a Registry, name: Option<&str>) -> Result<&'a ServerSpec> {
    let known = || crate::loader::known(reg.servers.keys());
    let Some(name) = name else {
        return Err(Error::Usage(format!(
            "name a server: iosim show server NAME; known: {}",
            known()
        )));
    };
    reg.servers.get(name).ok_or_else(|| Error::Unknown {
        at: Location {
            file: "<command line>".into(),
            key: String::new(),
            line: 0,
            column: 0,
        },
        what: "server",
        name: name.to_string(),
        known: known().into(),
    })
}

/// The peak of bus mode `mode` (the simulator's own computation).
fn peak(reg: &Registry, mode: &str) -> Result<BytesPerSec> {
    let b = reg
        .buses
        .get(mode)
        .ok_or_else(|| Error::Internal(format!("bus mode `{mode}` lost after loading")))?;
    Ok(BusCfg::from_spec(b)?.peak())
}

/// The server's CPU model and the source of its CPU costs, in words.
fn cpu_words(reg: &Registry, server: &ServerSpec) -> Result<String> {
    let model = match &server.cpu {
        Some((name, at)) => match reg.cpus.get(name) {
            Some(c) => {
                let p = crate::model::schema::CpuParams::from_set(&c.params, at)?;
                format!("CPU {name} ({} MHz, {} {})", p.clock, c.benchmark, p.rating)
            }
            None => format!("CPU {name}"),
        },
        None => "CPU model not given".to_string(),
    };
    Ok(match &server.costs_from {
        Some((from, _)) => format!("{model}; CPU costs scaled from {from} by rating"),
        None => format!("{model}; CPU costs its own"),
    })
}

/// The I/O tree of `server`: memory, then each I/O controller with the
/// segments under it, then the segments whose ropes go straight to memory.
/// A shared segment hangs under the controller of its first slot (as the
/// simulator places it) and runs the fastest mode all its slots offer.
pub fn server_tree(reg: &Registry, server: &ServerSpec) -> Result<ServerTree> {
    let sp = ServerParams::from_set(&server.params, &server.at)?;
    let bridge = BridgeParams::from_set(&server.bridge, &server.at)?;
    let mut nodes = vec![Node {
        id: "memory".into(),
        parent: None,
        depth: 0,
        // Every cell's memory, interleaved: what a partition of all the cells sees.
        capacity: sp
            .memory_bandwidth
            .map(|b| BytesPerSec(b * sp.cells_max.round())),
        kind: NodeKind::Memory {
            cells_max: sp.cells_max.round() as u64,
            cpus_per_cell: sp.cpus_per_cell.round() as u64,
            local_ns: sp.memory_local_latency,
            remote_ns: sp.memory_remote_latency,
            cpu: cpu_words(reg, server)?,
        },
    }];
    // The segments, in order of their first slot: (shared name, slots).
    let mut segments: Vec<(Option<&str>, Vec<&SlotSpec>)> = Vec::new();
    for slot in &server.slots {
        match slot.segment.as_deref() {
            Some(seg) => match segments.iter_mut().find(|(n, _)| *n == Some(seg)) {
                Some((_, slots)) => slots.push(slot),
                None => segments.push((Some(seg), vec![slot])),
            },
            None => segments.push((None, vec![slot])),
        }
    }
    // Controllers in file order, then the segments straight to memory.
    let order = (0..server.io_controllers.len())
        .map(Some)
        .chain(std::iter::once(None));
    for under in order {
        let parent = match under {
            Some(c) => {
                let spec = &server.io_controllers[c];
                let cp = IoControllerParams::from_set(&spec.params, &spec.at)?;
                let chassis = server
                    .slots
                    .iter()
                    .find(|s| s.controller == Some(c))
                    .and_then(|s| s.chassis.map(|k| (k, s.cell)));
                nodes.push(Node {
                    id: format!("controller/{}", spec.name),
                    parent: Some(0),
                    depth: 1,
                    capacity: Some(BytesPerSec(cp.bandwidth)),
                    kind: NodeKind::IoController {
                        packet_overhead: cp.packet_overhead.round() as u64,
                        both_ways_mb_s: cp.bandwidth_both_ways.map(|b| b / 1e6),
                        chassis,
                    },
                });
                nodes.len() - 1
            }
            None => 0,
        };
        let depth = nodes[parent].depth + 1;
        for (shared, slots) in segments.iter().filter(|(_, s)| s[0].controller == under) {
            let mode = slots[0]
                .modes
                .iter()
                .find(|m| slots.iter().all(|s| s.modes.contains(m)))
                .cloned();
            let capacity = match &mode {
                Some(m) => Some(peak(reg, m)?),
                None => None,
            };
            nodes.push(Node {
                id: match shared {
                    Some(n) => format!("segment/{n}"),
                    None => format!("bus/{}", slots[0].name),
                },
                parent: Some(parent),
                depth,
                capacity,
                kind: NodeKind::Segment {
                    shared: shared.map(str::to_string),
                    mode,
                    bridge: bridge.clone(),
                },
            });
            let seg = nodes.len() - 1;
            for slot in slots {
                let capacity = match slot.modes.first() {
                    Some(m) => Some(peak(reg, m)?),
                    None => None,
                };
                nodes.push(Node {
                    id: format!("slot/{}", slot.name),
                    parent: Some(seg),
                    depth: depth + 1,
                    capacity,
                    kind: NodeKind::Slot {
                        modes: slot.modes.clone(),
                        ropes: slot.ropes,
                        rope_capacity: BytesPerSec(
                            sp.rope_bandwidth.unwrap_or(0.0) * f64::from(slot.ropes),
                        ),
                    },
                });
            }
        }
    }
    Ok(ServerTree {
        server: server.name.clone(),
        nodes,
    })
}

/// A kind of model `iosim list` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    /// Servers.
    Servers,
    /// Adapter cards.
    Adapters,
    /// Test beds (the far ends of the links).
    Testbeds,
    /// Links.
    Links,
    /// Bus modes.
    Buses,
    /// CPU models.
    Cpus,
}

/// The kinds `iosim list` takes, by the word that names them.
pub const MODEL_KINDS: [(&str, ModelKind); 6] = [
    ("servers", ModelKind::Servers),
    ("adapters", ModelKind::Adapters),
    ("testbeds", ModelKind::Testbeds),
    ("links", ModelKind::Links),
    ("buses", ModelKind::Buses),
    ("cpus", ModelKind::Cpus),
];

/// One model as `iosim list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogueEntry {
    /// Its name.
    pub name: String,
    /// The first sentence of its description.
    pub summary: String,
    /// Its calibration status in words: `fitted: 2 of 31 values (...)`,
    /// `assumed: 4 of 12 values`, `from documents`.
    pub status: String,
    /// The file it comes from.
    pub file: String,
}

/// The first sentence of `text` on one line, at most about 100 characters.
pub fn summary(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = one
        .find(". ")
        .or_else(|| one.find(": "))
        .map_or(one.len(), |i| i + 1);
    let first = one[..end].trim_end_matches([':', '.']).to_string();
    if first.chars().count() <= 100 {
        return first;
    }
    let cut: String = first.chars().take(97).collect();
    format!("{}...", cut.trim_end())
}

/// The calibration status of a model's parameters: how many are fitted to
/// the papers' figures, how many assumed, out of all.
pub fn status<'a>(sets: impl IntoIterator<Item = &'a ParamSet>) -> String {
    let (mut all, mut fitted, mut assumed) = (0, 0, 0);
    let mut names: Vec<String> = Vec::new();
    for s in sets {
        for (k, v) in &s.map {
            all += 1;
            let src = v.source.trim_start().to_ascii_lowercase();
            if src.starts_with("fitted") {
                fitted += 1;
                names.push(k.clone());
            } else if src.starts_with("assumed") {
                assumed += 1;
            }
        }
    }
    names.sort();
    names.dedup();
    let mut parts = Vec::new();
    if fitted > 0 {
        parts.push(format!(
            "fitted to the papers' figures: {fitted} of {all} values ({})",
            names.join(", ")
        ));
    }
    if assumed > 0 {
        parts.push(format!("assumed: {assumed} of {all} values"));
    }
    if parts.is_empty() {
        format!("from specifications and documents: all {all} values")
    } else {
        parts.join("; ")
    }
}

/// The CPU costs `server` leaves out and takes, scaled by the CPUs'
/// ratings, from the server it names in `costs_from`, with their status
/// there: a value fitted to the papers' figures stays fitted when it is
/// carried. `None` without such costs.
fn carried_costs(reg: &Registry, server: &ServerSpec) -> Option<String> {
    let (name, _) = server.costs_from.as_ref()?;
    let from = reg.servers.get(name)?;
    let carried = ParamSet {
        map: SCALED_COSTS
            .iter()
            .filter(|k| !server.params.map.contains_key(**k))
            .filter_map(|k| Some((k.to_string(), from.params.map.get(*k)?.clone())))
            .collect(),
    };
    (!carried.map.is_empty()).then(|| {
        format!(
            "CPU costs carried from {name} (costs_from, scaled by CPU rating): [{}]",
            status([&carried])
        )
    })
}

/// Every model of `kind` in `reg`, by name.
pub fn catalogue(reg: &Registry, kind: ModelKind) -> Vec<CatalogueEntry> {
    let entry =
        |name: &str, description: &str, sets: Vec<&ParamSet>, at: &Location| CatalogueEntry {
            name: name.to_string(),
            summary: summary(description),
            status: status(sets),
            file: at.file.display().to_string(),
        };
    match kind {
        ModelKind::Servers => reg
            .servers
            .values()
            .map(|s| {
                let mut sets = vec![&s.params, &s.bridge];
                sets.extend(s.io_controllers.iter().map(|c| &c.params));
                let mut e = entry(&s.name, &s.description, sets, &s.at);
                if let Some(carried) = carried_costs(reg, s) {
                    e.status = format!("{}; {carried}", e.status);
                }
                e
            })
            .collect(),
        ModelKind::Adapters => reg
            .adapters
            .values()
            .map(|a| {
                let mut sets: Vec<&ParamSet> = a.functions.iter().map(|f| &f.params).collect();
                if let Some(b) = &a.bridge {
                    sets.push(&b.secondary);
                    sets.push(&b.primary);
                }
                entry(&a.name, &a.description, sets, &a.at)
            })
            .collect(),
        ModelKind::Testbeds => reg
            .testbeds
            .values()
            .map(|t| entry(&t.name, &t.description, vec![&t.params], &t.at))
            .collect(),
        ModelKind::Links => reg
            .links
            .values()
            .map(|l| entry(&l.name, &l.description, vec![&l.params], &l.at))
            .collect(),
        ModelKind::Buses => reg
            .buses
            .values()
            .map(|b| entry(&b.name, &b.description, vec![&b.params], &b.at))
            .collect(),
        ModelKind::Cpus => reg
            .cpus
            .values()
            .map(|c| entry(&c.name, &c.description, vec![&c.params], &c.at))
            .collect(),
    }
}

/// The names of a kind of model as error messages list them.
pub fn known_names<'a>(names: impl Iterator<Item = &'a String>) -> String {
    crate::loader::known(names)
}
