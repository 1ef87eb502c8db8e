//! Hardware descriptions: buses, links, servers, adapters and test beds.

use std::collections::BTreeMap;

use super::schema::{
    ParamRule, ATM, BRIDGE, BUS, CARD_BRIDGE, CPU, ETHERNET, FIBRE_CHANNEL, IO_CONTROLLER,
    PARALLEL_SCSI, SERVER, TESTBED,
};
use super::ParamSet;
use crate::error::Location;

/// The signalling protocol of a bus mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Conventional PCI: delayed reads with retries, posted writes.
    Pci,
    /// PCI-X: split reads, posted writes, attribute phase.
    PciX,
    /// HP's HSC / GSC+ system I/O bus (32-bit, about 40 MHz) under a
    /// system bus converter (the U2/UTurn I/O adapter): a bus of its own
    /// name and parameters whose reads are split transactions (the
    /// converter fetches and returns the data, the card does not retry),
    /// like PCI-X's; posted writes.
    Hsc,
}

/// A bus mode (e.g. `pcix133`): one parameterised mechanism for every bus.
#[derive(Debug, Clone, PartialEq)]
pub struct BusSpec {
    /// Name used by slots and adapters.
    pub name: String,
    /// What it is, in the model file's words (`description`).
    pub description: String,
    /// PCI or PCI-X protocol.
    pub protocol: Protocol,
    /// clock, transfers_per_clock, width, overhead clocks, latency timer, max burst.
    pub params: ParamSet,
    /// Where it was defined.
    pub at: Location,
}

/// How a link frames data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// IEEE 802.3 frames with preamble and inter-frame gap.
    Ethernet,
    /// Fibre Channel frames, 8b/10b, idles between frames.
    FibreChannel,
    /// ATM: frames carried in AAL5 over 53-byte cells on a SONET payload
    /// (LAN Emulation or Classical IP encapsulation).
    Atm,
    /// Parallel SCSI: one half-duplex bus shared by the host adapter's
    /// channel and its devices, each bus tenure opened by arbitration and
    /// selection.
    ParallelScsi,
}

/// A network or storage link.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSpec {
    /// Name used by adapter functions.
    pub name: String,
    /// What it is, in the model file's words (`description`).
    pub description: String,
    /// Its framing.
    pub framing: Framing,
    /// Line rate and framing sizes.
    pub params: ParamSet,
    /// Where it was defined.
    pub at: Location,
}

/// One I/O slot of a server.
#[derive(Debug, Clone, PartialEq)]
pub struct SlotSpec {
    /// Slot name, unique in the server.
    pub name: String,
    /// Bus modes the slot can run, fastest first.
    pub modes: Vec<String>,
    /// Where each of `modes` is written.
    pub modes_at: Vec<Location>,
    /// Ropes between the slot's bus adapter and the system bus adapter.
    pub ropes: u32,
    /// The bus segment the slot is on, shared with every slot naming the
    /// same segment (one bus, one bridge, its ropes); `None`: a segment of
    /// its own.
    pub segment: Option<String>,
    /// The I/O controller the slot's ropes end at (an index into the
    /// server's `io_controllers`); `None`: straight to memory, shared with
    /// no other slot.
    pub controller: Option<usize>,
    /// The I/O chassis the slot is in, when the server declares its slots as
    /// copies of a `[[chassis]]` template (copy 0, 1, ...); `None`: a slot
    /// written on its own.
    pub chassis: Option<u32>,
    /// The cell whose cell-I/O link the slot's chassis hangs from (a
    /// `per_cell` chassis template): a partition of n cells (cells 0 to
    /// n - 1) may use the slot only if this is below n. `None`: any
    /// partition may use it.
    pub cell: Option<u32>,
    /// Where it was defined.
    pub at: Location,
}

impl SlotSpec {
    /// Whether a partition of `cells` cells owns the slot (see
    /// [`SlotSpec::cell`]).
    pub fn owned_by(&self, cells: u32) -> bool {
        self.cell.is_none_or(|c| c < cells)
    }
}

/// An I/O controller (system bus adapter): the link from the ropes of the
/// slots under it to memory.
#[derive(Debug, Clone, PartialEq)]
pub struct IoControllerSpec {
    /// Name, unique in the server.
    pub name: String,
    /// The cell whose I/O it is (the `cell` key, or the cell a `per_cell`
    /// chassis copy hangs from): `iosim place` gives a partition of n cells
    /// (cells 0 to n - 1) only the slots under its own cells' controllers.
    /// `None`: any partition's.
    pub cell: Option<u32>,
    /// Its link's parameters.
    pub params: ParamSet,
    /// Where it was defined.
    pub at: Location,
}

/// A server: its cells, memory, I/O path, CPUs and protocol stack costs, and slots.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// Name used by scenarios.
    pub name: String,
    /// What it is, in the model file's words (`description`).
    pub description: String,
    /// Memory, I/O path, CPU and stack parameters.
    pub params: ParamSet,
    /// Parameters of the bus adapter (bridge) above each slot.
    pub bridge: ParamSet,
    /// The I/O controllers the slots' ropes end at (none: each slot's
    /// ropes go straight to memory).
    pub io_controllers: Vec<IoControllerSpec>,
    /// Its CPU model (a `cpu` file), where one is given, and where it is
    /// named.
    pub cpu: Option<(String, Location)>,
    /// The server whose CPU costs this one's absent costs are scaled from,
    /// by the ratio of the two CPUs' speed ratings, and where it is named.
    pub costs_from: Option<(String, Location)>,
    /// The server this one `extends`: it takes every parameter of that
    /// server not stated here, and its I/O tree unless it states its own.
    pub extends: Option<Extends>,
    /// The slots.
    pub slots: Vec<SlotSpec>,
    /// Where it was defined.
    pub at: Location,
}

impl ServerSpec {
    /// Whether a partition of `cells` cells owns `slot`'s I/O for a
    /// placement: it owns the slot ([`SlotSpec::owned_by`]) and the slot's
    /// I/O controller belongs to one of its cells. Scenarios are not held
    /// to it: they name the slots the papers' set-ups used.
    pub fn io_owned_by(&self, slot: &SlotSpec, cells: u32) -> bool {
        slot.owned_by(cells)
            && slot
                .controller
                .and_then(|c| self.io_controllers.get(c))
                .and_then(|c| c.cell)
                .is_none_or(|c| c < cells)
    }

    /// Why a partition of `cells` cells of `server` may not use `slot` (its
    /// chassis hangs from a cell the partition does not have), or `None`.
    pub fn not_owned(&self, slot: &SlotSpec, cells: u32) -> Option<String> {
        let server = self;
        if slot.owned_by(cells) {
            return None;
        }
        let owned: Vec<u32> = {
            let mut v: Vec<u32> = server
                .slots
                .iter()
                .filter(|s| s.owned_by(cells))
                .filter_map(|s| s.chassis)
                .collect();
            v.dedup();
            v
        };
        Some(format!(
            "slot `{}` is in chassis {} of server `{}`, which hangs from cell {}; a partition of {cells} cell(s) owns only the chassis of its cells ({})",
            slot.name,
            slot.chassis.map_or("?".into(), |k| k.to_string()),
            server.name,
            slot.cell.unwrap_or(0),
            match (owned.first(), owned.last()) {
                (Some(a), Some(b)) if a == b => format!("chassis {a}"),
                (Some(a), Some(b)) => format!("chassis {a} to {b}"),
                _ => "none".into(),
            }
        ))
    }
}

/// What model and scenario files know of an adapter engine kind: its name,
/// its parameter rules, the link framings it drives and the shapes of
/// workload it carries. Each engine of `sim::engines` states its own; the loader finds
/// it by name there.
#[derive(Debug)]
pub struct EngineDef {
    /// The name model files use for it (`engine = "nic"`).
    pub name: &'static str,
    /// The rules of its functions' parameters.
    pub rules: &'static [super::schema::ParamRule],
    /// The link framings it drives; none: it drives no link.
    pub framings: &'static [Framing],
    /// The shapes of workload it carries: it carries every workload kind
    /// of those shapes.
    pub carries: &'static [super::Shape],
}

/// An adapter function's engine kind: a handle on its [`EngineDef`].
#[derive(Clone, Copy)]
pub struct EngineKind(&'static EngineDef);

impl EngineKind {
    /// The kind described by `def`.
    pub const fn new(def: &'static EngineDef) -> EngineKind {
        EngineKind(def)
    }
    /// The name model files use for it.
    pub fn name(self) -> &'static str {
        self.0.name
    }
    /// The rules of its functions' parameters.
    pub fn rules(self) -> &'static [super::schema::ParamRule] {
        self.0.rules
    }
    /// Whether it drives a link at all.
    pub fn drives_a_link(self) -> bool {
        !self.0.framings.is_empty()
    }
    /// Whether it can drive a link of `framing`.
    pub fn drives(self, framing: Framing) -> bool {
        self.0.framings.contains(&framing)
    }
    /// Whether it carries workloads of shape `shape`.
    pub fn carries(self, shape: super::Shape) -> bool {
        self.0.carries.contains(&shape)
    }
}

/// Two kinds are one when they have one name (names are unique in the list
/// of engines).
impl PartialEq for EngineKind {
    fn eq(&self, other: &EngineKind) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for EngineKind {}

/// Its name.
impl std::fmt::Debug for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

/// One PCI function of an adapter.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionSpec {
    /// Function name within the adapter (e.g. `fc`, `gige`).
    pub name: String,
    /// Its engine.
    pub engine: EngineKind,
    /// The link it drives (none for a raw DMA function).
    pub link: Option<String>,
    /// DMA engine parameters.
    pub params: ParamSet,
    /// Where it was defined.
    pub at: Location,
}

/// An adapter card: one or more functions sharing a slot.
#[derive(Debug, Clone, PartialEq)]
pub struct AdapterSpec {
    /// Name used by scenarios.
    pub name: String,
    /// What it is, in the model file's words (`description`).
    pub description: String,
    /// Bus modes the card can run, fastest first.
    pub modes: Vec<String>,
    /// Where each of `modes` is written.
    pub modes_at: Vec<Location>,
    /// Its PCI functions.
    pub functions: Vec<FunctionSpec>,
    /// Its on-card PCI-to-PCI bridge, if the functions sit behind one.
    pub bridge: Option<CardBridgeSpec>,
    /// The adapter this one `extends`: it takes that adapter's modes,
    /// bridge and functions, overriding only what it states.
    pub extends: Option<Extends>,
    /// Where it was defined.
    pub at: Location,
}

/// A model's `extends = "NAME"`: the model of the same kind it takes every
/// parameter from, overriding only what its own file states.
#[derive(Debug, Clone, PartialEq)]
pub struct Extends {
    /// The model it extends.
    pub name: String,
    /// Where `extends` is written.
    pub at: Location,
    /// Whether the parent's values have been merged in (the loader merges
    /// once, after every file of a load is read).
    pub resolved: bool,
    /// What the file stated itself, before the merge: its I/O tree (a
    /// server), its modes (an adapter), its bridge.
    pub own: OwnParts,
}

/// The parts of a model that `extends` another which its own file states
/// (each part not stated is taken whole from the parent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OwnParts {
    /// A server's slots, chassis and I/O controllers.
    pub io_tree: bool,
    /// An adapter's bus modes.
    pub modes: bool,
    /// An adapter's on-card bridge.
    pub bridge: bool,
}

/// An adapter's own PCI-to-PCI bridge: the card's functions share its
/// secondary bus, and the bridge alone masters the slot's bus for them (a
/// quad-port Ethernet card).
#[derive(Debug, Clone, PartialEq)]
pub struct CardBridgeSpec {
    /// Bus mode of the secondary bus (the card's own, fixed by its design).
    pub secondary_mode: String,
    /// Where `secondary_mode` is written.
    pub secondary_mode_at: Location,
    /// The bridge as the secondary bus sees it (posted-write buffer,
    /// delayed reads): [`super::schema::BRIDGE`] rules.
    pub secondary: ParamSet,
    /// The bridge as a master on the slot's bus (read requests, write
    /// bursts): [`super::schema::CARD_BRIDGE`] rules.
    pub primary: ParamSet,
    /// Where it was defined.
    pub at: Location,
}

/// The bus mode a card runs in a slot: the card's first mode (it lists them
/// fastest first) that the slot offers; `None` when they share none.
pub fn negotiate_mode(adapter: &AdapterSpec, slot: &SlotSpec) -> Option<String> {
    adapter
        .modes
        .iter()
        .find(|m| slot.modes.contains(m))
        .cloned()
}

/// A CPU model: its clock and a published speed rating, through which a
/// CPU cost measured (or fitted) on one CPU carries to another rated on
/// the same benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuSpec {
    /// Name used by servers.
    pub name: String,
    /// What it is, in the model file's words (`description`).
    pub description: String,
    /// The benchmark its rating is on (`SPECint95`, `iCOMP 2.0`, ...):
    /// ratings on different benchmarks are never compared.
    pub benchmark: String,
    /// Clock and rating.
    pub params: ParamSet,
    /// Where it was defined.
    pub at: Location,
}

/// The machines at the far end of the links (netperf peer, disk arrays).
#[derive(Debug, Clone, PartialEq)]
pub struct TestbedSpec {
    /// Name used by scenarios.
    pub name: String,
    /// What it is, in the model file's words (`description`).
    pub description: String,
    /// Peer and target parameters.
    pub params: ParamSet,
    /// Where it was defined.
    pub at: Location,
}

/// Every model known to a run, by kind and name.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    /// Bus modes.
    pub buses: BTreeMap<String, BusSpec>,
    /// Links.
    pub links: BTreeMap<String, LinkSpec>,
    /// Servers.
    pub servers: BTreeMap<String, ServerSpec>,
    /// Adapters.
    pub adapters: BTreeMap<String, AdapterSpec>,
    /// Test beds.
    pub testbeds: BTreeMap<String, TestbedSpec>,
    /// CPU models.
    pub cpus: BTreeMap<String, CpuSpec>,
    /// The model's structural error by mechanism family (the prediction
    /// intervals' structural part), from `models/spread.toml`.
    pub spread: super::StructuralSpread,
}

/// Parameter rules by dotted path, found by the kind of model each names.
impl Registry {
    /// The rules of the model kind of the parameter set at dotted `prefix` in
    /// the registry (`bus.pcix133`, `server.rp8400-seu.bridge`,
    /// `adapter.a9782a.gige`, ...), found by its kind and, for links and adapter
    /// functions, by its framing or engine.
    pub fn rules_of(&self, prefix: &str) -> Option<&'static [ParamRule]> {
        let reg = self;
        let (kind, rest) = prefix.split_once('.')?;
        match kind {
            "bus" => reg.buses.contains_key(rest).then_some(BUS),
            "link" => reg.links.get(rest).map(|l| match l.framing {
                Framing::Ethernet => ETHERNET,
                Framing::FibreChannel => FIBRE_CHANNEL,
                Framing::Atm => ATM,
                Framing::ParallelScsi => PARALLEL_SCSI,
            }),
            "server" => match rest.strip_suffix(".bridge") {
                Some(name) if reg.servers.contains_key(name) => Some(BRIDGE),
                _ => match rest.split_once(".controller.") {
                    Some((server, c)) => reg
                        .servers
                        .get(server)
                        .filter(|s| s.io_controllers.iter().any(|x| x.name == c))
                        .map(|_| IO_CONTROLLER),
                    None => reg.servers.contains_key(rest).then_some(SERVER),
                },
            },
            "adapter" => reg.adapters.values().find_map(|a| {
                let f = rest.strip_prefix(a.name.as_str())?.strip_prefix('.')?;
                if a.bridge.is_some() {
                    match f {
                        "bridge.secondary" => return Some(BRIDGE),
                        "bridge.primary" => return Some(CARD_BRIDGE),
                        _ => {}
                    }
                }
                let f = a.functions.iter().find(|x| x.name == f)?;
                Some(f.engine.rules())
            }),
            "testbed" => reg.testbeds.contains_key(rest).then_some(TESTBED),
            "cpu" => reg.cpus.contains_key(rest).then_some(CPU),
            _ => None,
        }
    }

    /// The rule of the parameter at dotted `path`
    /// (`server.rp8400-seu.io_read_latency`), from the rules of its model kind.
    pub fn rule_of(&self, path: &str) -> Option<&'static ParamRule> {
        let (prefix, key) = path.rsplit_once('.')?;
        self.rules_of(prefix)?.iter().find(|r| r.key == key)
    }

    /// The plausible range (base unit) of the parameter at dotted `path`
    /// (`server.rp8400-seu.io_read_latency`), from the rules of its model kind.
    pub fn range_of(&self, path: &str) -> Option<(f64, f64)> {
        self.rule_of(path).map(|r| (r.min, r.max))
    }
}

impl Registry {
    /// Why link `link` cannot replace the links of `adapter`'s functions (a
    /// scenario's per-card `link`), or `None` when it can: each function
    /// must drive a link of the same framing.
    pub fn link_mismatch(&self, adapter: &AdapterSpec, link: &LinkSpec) -> Option<String> {
        let own: Vec<_> = adapter
            .functions
            .iter()
            .filter_map(|f| f.link.as_ref().and_then(|n| self.links.get(n)))
            .collect();
        (own.is_empty() || own.iter().any(|o| o.framing != link.framing)).then(|| {
            format!(
                "link `{}` ({:?} framing) cannot replace the links of adapter `{}`: each of its functions must drive a link of that framing",
                link.name, link.framing, adapter.name
            )
        })
    }

    /// Every parameter set with its dotted prefix (`server.rp8400-seu`, ...).
    pub fn param_sets_mut(&mut self) -> Vec<(String, &mut ParamSet)> {
        let mut v: Vec<(String, &mut ParamSet)> = Vec::new();
        for (n, b) in self.buses.iter_mut() {
            v.push((format!("bus.{n}"), &mut b.params));
        }
        for (n, l) in self.links.iter_mut() {
            v.push((format!("link.{n}"), &mut l.params));
        }
        for (n, s) in self.servers.iter_mut() {
            v.push((format!("server.{n}"), &mut s.params));
            v.push((format!("server.{n}.bridge"), &mut s.bridge));
            for c in s.io_controllers.iter_mut() {
                v.push((format!("server.{n}.controller.{}", c.name), &mut c.params));
            }
        }
        for (n, a) in self.adapters.iter_mut() {
            for f in a.functions.iter_mut() {
                v.push((format!("adapter.{n}.{}", f.name), &mut f.params));
            }
            if let Some(b) = a.bridge.as_mut() {
                v.push((format!("adapter.{n}.bridge.secondary"), &mut b.secondary));
                v.push((format!("adapter.{n}.bridge.primary"), &mut b.primary));
            }
        }
        for (n, t) in self.testbeds.iter_mut() {
            v.push((format!("testbed.{n}"), &mut t.params));
        }
        for (n, c) in self.cpus.iter_mut() {
            v.push((format!("cpu.{n}"), &mut c.params));
        }
        v
    }

    /// Sets the parameter named `path` (`server.rp8400-seu.io_read_latency`)
    /// to `base` (in its base unit), and with it every copy a model that
    /// `extends` its model took of it. False when no such parameter exists.
    pub fn set_param(&mut self, path: &str, base: f64) -> bool {
        self.update_param(path, |p| {
            p.base = base;
            if let Some((_, per_unit)) = crate::units::to_base(1.0, &p.unit) {
                p.written = base / per_unit;
            }
        })
    }

    /// Applies `change` to the parameter named `path` and to every copy of
    /// it that a model extending its model inherited; false when absent.
    fn update_param(&mut self, path: &str, change: impl Fn(&mut super::ParamValue)) -> bool {
        let mut owner: Option<(String, String)> = None;
        for (prefix, set) in self.param_sets_mut() {
            if let Some(key) = path.strip_prefix(&prefix).and_then(|k| k.strip_prefix('.')) {
                if let Some(p) = set.map.get_mut(key) {
                    change(p);
                    owner = Some((prefix, key.to_string()));
                    break;
                }
            }
        }
        let Some((prefix, key)) = owner else {
            return false;
        };
        for (_, set) in self.param_sets_mut() {
            if let Some(p) = set.map.get_mut(&key) {
                if p.inherited.as_deref() == Some(prefix.as_str()) {
                    change(p);
                }
            }
        }
        true
    }

    /// Replaces the value of `path` and records where the new value comes
    /// from (a fitted-parameter file); false if absent.
    pub fn set_param_from(
        &mut self,
        path: &str,
        base: f64,
        source: &str,
        at: &crate::error::Location,
    ) -> bool {
        if !self.set_param(path, base) {
            return false;
        }
        self.update_param(path, |p| {
            p.source = source.to_string();
            p.at = at.clone();
        })
    }

    /// Sets the standard error (base unit) of the fitted value at `path`
    /// and of every copy a model extending its model inherited; false when
    /// absent.
    pub fn set_param_sigma(&mut self, path: &str, sigma: Option<f64>) -> bool {
        self.update_param(path, |p| p.sigma = sigma)
    }

    /// Adds the optional parameter named `path`, absent from its model, so
    /// that a what-if can set it: written in the usual unit of its
    /// dimension, with `source` saying where its value comes from, and
    /// its value for now what its rule allows least (each sweep point sets
    /// its own). False when `path` is not an optional parameter of a model
    /// that lacks it.
    pub fn add_absent_param(&mut self, path: &str, source: &str) -> bool {
        let Some(rule) = self.rule_of(path).filter(|r| r.absent.is_some()) else {
            return false;
        };
        let unit = rule.dim.usual_unit();
        let Some((_, per_unit)) = crate::units::to_base(1.0, unit) else {
            return false;
        };
        let Some((prefix, key)) = path.rsplit_once('.') else {
            return false;
        };
        for (p, set) in self.param_sets_mut() {
            if p != prefix || set.map.contains_key(key) {
                continue;
            }
            let file = set
                .map
                .values()
                .next()
                .map(|v| v.at.file.clone())
                .unwrap_or_default();
            set.map.insert(
                key.to_string(),
                super::ParamValue {
                    base: rule.min,
                    written: rule.min / per_unit,
                    unit: unit.to_string(),
                    source: source.to_string(),
                    meaning: rule.meaning,
                    at: crate::error::Location {
                        file,
                        key: key.to_string(),
                        line: 0,
                        column: 0,
                    },
                    inherited: None,
                    sigma: None,
                    range: None,
                },
            );
            return true;
        }
        false
    }

    /// The parameter named `path`, if any.
    pub fn param(&mut self, path: &str) -> Option<super::ParamValue> {
        for (prefix, set) in self.param_sets_mut() {
            if let Some(key) = path.strip_prefix(&prefix).and_then(|k| k.strip_prefix('.')) {
                if let Some(p) = set.map.get(key) {
                    return Some(p.clone());
                }
            }
        }
        None
    }
}
