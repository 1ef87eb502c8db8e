//! The search space of a placement request: the server's I/O tree as slots,
//! segments and controllers; placements up to symmetry (a canonical key:
//! two placements with the same key put cards of the same kind on the same
//! paths to memory, so the model predicts the same for both); exhaustive
//! enumeration where the space is small, a local search on the analytic
//! estimate where it is not.

use std::collections::{BTreeMap, HashSet};

use crate::engine::RngStream;
use crate::model::{negotiate_mode, Domain, PlaceRequest, Registry, ServerSpec};

/// One slot of the server as the search sees it.
#[derive(Debug, Clone)]
pub struct SlotInfo {
    /// Slot name.
    pub name: String,
    /// Its segment (index into [`Tree::segs`]).
    pub seg: usize,
    /// Its I/O controller, if its ropes end at one.
    pub ctrl: Option<usize>,
    /// Its chassis (index into [`Tree::chassis`]).
    pub chassis: usize,
    /// Modes and ropes: slots with the same signature look the same to a card.
    pub sig: String,
    /// Taken by a card not in the request.
    pub taken: bool,
}

/// A bus segment (one slot's own bus, or shared by several slots).
#[derive(Debug, Clone)]
pub struct SegInfo {
    /// `segment/NAME` or `bus/SLOT`, as `iosim show server` names it.
    pub name: String,
    /// Its slots.
    pub slots: Vec<usize>,
    /// The controller of its first slot (where the simulator hangs it).
    pub ctrl: Option<usize>,
    /// Signature: shared or not and its slots' signatures.
    pub sig: String,
}

/// The server's I/O tree.
#[derive(Debug, Clone)]
pub struct Tree {
    /// Slots in file order.
    pub slots: Vec<SlotInfo>,
    /// Segments in order of their first slot.
    pub segs: Vec<SegInfo>,
    /// Controller names and signatures (their link's parameters).
    pub ctrls: Vec<(String, String)>,
    /// Chassis names (`server` when the request defines none).
    pub chassis: Vec<String>,
    /// Whether a failover group names chassis (then the chassis are part
    /// of the symmetry).
    pub chassis_matter: bool,
}

impl Tree {
    /// The tree of `server` for `req`.
    pub fn new(server: &ServerSpec, req: &PlaceRequest) -> Tree {
        let mut chassis: Vec<String> = req.chassis.iter().map(|c| c.0.clone()).collect();
        let rest = chassis.len();
        let mut segs: Vec<SegInfo> = Vec::new();
        // Each segment's index in `segs` by name: linear in the slots.
        let mut seg_of: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        let mut slots = Vec::new();
        for s in &server.slots {
            let ch = req
                .chassis
                .iter()
                .position(|(_, v)| v.contains(&s.name))
                .unwrap_or(rest);
            if ch == rest && chassis.len() == rest {
                chassis.push(if rest == 0 {
                    "server".into()
                } else {
                    "(other slots)".into()
                });
            }
            let key = match &s.segment {
                Some(n) => format!("segment/{n}"),
                None => format!("bus/{}", s.name),
            };
            let seg = *seg_of.entry(key.clone()).or_insert_with(|| {
                segs.push(SegInfo {
                    name: key,
                    slots: Vec::new(),
                    ctrl: s.controller,
                    sig: String::new(),
                });
                segs.len() - 1
            });
            segs[seg].slots.push(slots.len());
            slots.push(SlotInfo {
                name: s.name.clone(),
                seg,
                ctrl: s.controller,
                chassis: ch,
                sig: format!("{}x{}", s.modes.join("/"), s.ropes),
                taken: req.taken.contains(&s.name),
            });
        }
        // Chassis are part of the symmetry where a group names them, or
        // where one controller's slots span two chassis (elsewhere the
        // controllers tell the chassis apart, and spreading over chassis,
        // which breaks ties, needs no more).
        let mut chassis_of_ctrl: BTreeMap<(bool, usize), usize> = BTreeMap::new();
        let spans = slots.iter().any(|s: &SlotInfo| {
            // A segment straight to memory is a controller of its own.
            let key = s.ctrl.map_or((false, s.seg), |c| (true, c));
            *chassis_of_ctrl.entry(key).or_insert(s.chassis) != s.chassis
        });
        let chassis_matter = spans || req.apart.iter().any(|a| a.domain == Domain::Chassis);
        for g in segs.iter_mut() {
            let mut v: Vec<String> = g
                .slots
                .iter()
                .map(|&i| {
                    if chassis_matter {
                        format!("{}@{}", slots[i].sig, slots[i].chassis)
                    } else {
                        slots[i].sig.clone()
                    }
                })
                .collect();
            v.sort();
            g.sig = format!(
                "{}({})",
                if g.slots.len() > 1 { "shared" } else { "own" },
                v.join(",")
            );
        }
        let ctrls = server
            .io_controllers
            .iter()
            .map(|c| {
                let mut p: Vec<String> = c
                    .params
                    .map
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.base))
                    .collect();
                p.sort();
                (c.name.clone(), p.join(","))
            })
            .collect();
        Tree {
            slots,
            segs,
            ctrls,
            chassis,
            chassis_matter,
        }
    }

    /// The tree of the slots `keep` only (in that order), whole segments
    /// (every slot of a kept slot's segment is in `keep`), chassis numbered
    /// by first appearance; controllers keep their indices.
    pub fn restrict(&self, keep: &[usize]) -> Tree {
        let mut seg_map: BTreeMap<usize, usize> = BTreeMap::new();
        let mut ch_map: BTreeMap<usize, usize> = BTreeMap::new();
        let mut segs: Vec<SegInfo> = Vec::new();
        let mut chassis = Vec::new();
        let mut slots = Vec::new();
        for &s in keep {
            let sl = &self.slots[s];
            let n = seg_map.len();
            let seg = *seg_map.entry(sl.seg).or_insert_with(|| {
                let g = &self.segs[sl.seg];
                segs.push(SegInfo {
                    name: g.name.clone(),
                    slots: Vec::new(),
                    ctrl: g.ctrl,
                    sig: g.sig.clone(),
                });
                n
            });
            segs[seg].slots.push(slots.len());
            let n = ch_map.len();
            let ch = *ch_map.entry(sl.chassis).or_insert_with(|| {
                chassis.push(self.chassis[sl.chassis].clone());
                n
            });
            slots.push(SlotInfo {
                seg,
                chassis: ch,
                ..sl.clone()
            });
        }
        Tree {
            slots,
            segs,
            ctrls: self.ctrls.clone(),
            chassis,
            chassis_matter: self.chassis_matter,
        }
    }

    /// The path class of a slot: its signature, its segment's and its
    /// controller's (what a card alone in it sees).
    pub fn path_class(&self, s: usize) -> String {
        let sl = &self.slots[s];
        let seg = &self.segs[sl.seg];
        let ctrl = seg
            .ctrl
            .map_or("memory".to_string(), |c| self.ctrls[c].1.clone());
        // The segment's slots without their chassis: a card alone sees
        // only the path.
        let mut v: Vec<&str> = seg
            .slots
            .iter()
            .map(|&i| self.slots[i].sig.as_str())
            .collect();
        v.sort();
        format!("{} in [{}] under {}", sl.sig, v.join(","), ctrl)
    }

    /// The domain id of slot `s` for a failover group.
    pub fn domain(&self, s: usize, d: Domain) -> usize {
        let sl = &self.slots[s];
        match d {
            Domain::Bus => sl.seg,
            // A segment straight to memory is a controller of its own.
            Domain::Controller => match self.segs[sl.seg].ctrl {
                Some(c) => c,
                None => self.ctrls.len() + sl.seg,
            },
            Domain::Chassis => sl.chassis,
        }
    }

    /// How many distinct domains of kind `d` have a slot that is not taken.
    pub fn domains(&self, d: Domain) -> usize {
        let v: HashSet<usize> = (0..self.slots.len())
            .filter(|&s| !self.slots[s].taken)
            .map(|s| self.domain(s, d))
            .collect();
        v.len()
    }
}

/// What the search knows of the cards: the kind of each (cards of one kind
/// are interchangeable) and the slots each can run in.
#[derive(Debug, Clone)]
pub struct Cards {
    /// Kind of each card (index into `kinds`).
    pub kind: Vec<usize>,
    /// The kinds' descriptions.
    pub kinds: Vec<String>,
    /// What each card does (adapter, link, workloads), whatever its
    /// constraints: cards of one load kind load the machine alike.
    pub load: Vec<usize>,
    /// How many load kinds there are.
    pub loads: usize,
    /// Per card, whether it can run in each slot.
    pub fits: Vec<Vec<bool>>,
    /// Per card, its fixed slot.
    pub fixed: Vec<Option<usize>>,
    /// Per card, the failover groups it is in.
    pub groups: Vec<Vec<usize>>,
}

impl Cards {
    /// The cards of `req` on `tree`.
    pub fn new(reg: &Registry, server: &ServerSpec, tree: &Tree, req: &PlaceRequest) -> Cards {
        let mut kinds: Vec<String> = Vec::new();
        let mut kind = Vec::new();
        let mut fits = Vec::new();
        let mut fixed = Vec::new();
        let mut groups = Vec::new();
        let mut load_keys: Vec<String> = Vec::new();
        let mut load = Vec::new();
        for (i, c) in req.cards.iter().enumerate() {
            let g: Vec<usize> = (0..req.apart.len())
                .filter(|&a| req.apart[a].cards.contains(&i))
                .collect();
            let mut w: Vec<String> = req
                .workloads
                .iter()
                .filter(|w| w.card == i)
                .map(|w| format!("{}:{}", w.function, w))
                .collect();
            w.sort();
            let role = if c.standby { " standby" } else { "" };
            let lk = format!("{}{role} link {:?} [{}]", c.adapter, c.link, w.join("; "));
            load.push(match load_keys.iter().position(|x| *x == lk) {
                Some(k) => k,
                None => {
                    load_keys.push(lk);
                    load_keys.len() - 1
                }
            });
            let key = format!(
                "{}{role} link {:?} [{}] groups {:?} fixed {:?}",
                c.adapter,
                c.link,
                w.join("; "),
                g,
                c.fixed
            );
            let k = match kinds.iter().position(|x| *x == key) {
                Some(k) => k,
                None => {
                    kinds.push(key);
                    kinds.len() - 1
                }
            };
            kind.push(k);
            let adapter = &reg.adapters[&c.adapter];
            fits.push(
                server
                    .slots
                    .iter()
                    .map(|s| negotiate_mode(adapter, s).is_some())
                    .collect(),
            );
            fixed.push(
                c.fixed
                    .as_ref()
                    .and_then(|f| tree.slots.iter().position(|s| &s.name == f)),
            );
            groups.push(g);
        }
        Cards {
            kind,
            kinds,
            loads: load_keys.len(),
            load,
            fits,
            fixed,
            groups,
        }
    }
}

/// The canonical key of a placement (slot per card): equal keys, same
/// paths to memory for cards of the same kinds.
pub fn canonical(tree: &Tree, cards: &Cards, place: &[usize]) -> String {
    let mut content: Vec<String> = tree
        .slots
        .iter()
        .map(|s| if s.taken { "#".into() } else { "-".into() })
        .collect();
    for (c, &s) in place.iter().enumerate() {
        content[s] = format!("k{}", cards.kind[c]);
    }
    let seg_key = |g: usize| -> String {
        let seg = &tree.segs[g];
        let mut v: Vec<String> = seg
            .slots
            .iter()
            .map(|&s| {
                let ch = if tree.chassis_matter {
                    format!("@{}", tree.slots[s].chassis)
                } else {
                    String::new()
                };
                format!("{}{ch}:{}", tree.slots[s].sig, content[s])
            })
            .collect();
        v.sort();
        format!("{}[{}]", seg.sig, v.join(","))
    };
    let mut groups: BTreeMap<Option<usize>, Vec<String>> = BTreeMap::new();
    for g in 0..tree.segs.len() {
        groups
            .entry(tree.segs[g].ctrl)
            .or_default()
            .push(seg_key(g));
    }
    let mut under: Vec<String> = Vec::new();
    let mut direct = String::new();
    for (c, mut v) in groups {
        v.sort();
        match c {
            Some(c) => under.push(format!("{}{{{}}}", tree.ctrls[c].1, v.join(";"))),
            None => direct = v.join(";"),
        }
    }
    under.sort();
    format!("{}|memory{{{direct}}}", under.join("|"))
}

/// Whether the placement `place` (cards `0..place.len()` of `order`
/// placed) keeps every failover group apart.
fn apart_ok(tree: &Tree, req: &PlaceRequest, slot_of: &[Option<usize>]) -> bool {
    req.apart.iter().all(|a| {
        let mut seen = HashSet::new();
        a.cards
            .iter()
            .filter_map(|&c| slot_of[c])
            .all(|s| seen.insert(tree.domain(s, a.domain)))
    })
}

/// The outcome of enumerating placements.
pub struct Enumerated {
    /// Distinct placements (slot per card), in the order found.
    pub placements: Vec<Vec<usize>>,
    /// Whether every distinct placement was found.
    pub complete: bool,
    /// Search nodes visited.
    pub nodes: u64,
}

/// Enumerates the distinct placements of `cards` (up to symmetry), by
/// depth-first search: cards of one kind in increasing slot order, and of
/// the free slots that are interchangeable at a step (same signature, same
/// segment contents, same controller contents) only the first. Stops after
/// `max_placements` distinct placements or `max_nodes` steps, or once the
/// wall clock passes `deadline` (looked at every `NODES_PER_CLOCK_CHECK`
/// steps; the caller then reports the bound).
pub fn enumerate(
    tree: &Tree,
    cards: &Cards,
    req: &PlaceRequest,
    max_placements: usize,
    max_nodes: u64,
    deadline: Option<std::time::Instant>,
) -> Enumerated {
    let n = cards.kind.len();
    // Fixed cards first, then by kind so that cards of one kind follow each other.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&c| (cards.fixed[c].is_none(), cards.kind[c], c));
    let mut st = Dfs {
        tree,
        cards,
        req,
        order,
        slot_of: vec![None; n],
        occupant: vec![None; tree.slots.len()],
        seen: HashSet::new(),
        out: Vec::new(),
        nodes: 0,
        max_placements,
        max_nodes,
        deadline,
        stopped: false,
    };
    st.go(0);
    Enumerated {
        placements: st.out,
        complete: !st.stopped,
        nodes: st.nodes,
    }
}

struct Dfs<'a> {
    tree: &'a Tree,
    cards: &'a Cards,
    req: &'a PlaceRequest,
    order: Vec<usize>,
    slot_of: Vec<Option<usize>>,
    occupant: Vec<Option<usize>>,
    seen: HashSet<String>,
    out: Vec<Vec<usize>>,
    nodes: u64,
    max_placements: usize,
    max_nodes: u64,
    deadline: Option<std::time::Instant>,
    stopped: bool,
}

/// Search steps between two looks at the wall clock.
const NODES_PER_CLOCK_CHECK: u64 = 1 << 10;

/// Whether the wall clock has passed `deadline`.
fn late(deadline: Option<std::time::Instant>) -> bool {
    deadline.is_some_and(|d| std::time::Instant::now() >= d)
}

impl Dfs<'_> {
    fn content(&self, s: usize) -> String {
        match self.occupant[s] {
            Some(c) => format!("k{}", self.cards.kind[c]),
            None if self.tree.slots[s].taken => "#".into(),
            None => "-".into(),
        }
    }

    fn seg_state(&self, g: usize) -> String {
        let mut v: Vec<String> = self.tree.segs[g]
            .slots
            .iter()
            .map(|&s| format!("{}:{}", self.tree.slots[s].sig, self.content(s)))
            .collect();
        v.sort();
        format!("{}[{}]", self.tree.segs[g].sig, v.join(","))
    }

    /// What a free slot looks like now: two slots alike are interchangeable.
    fn state(&self, s: usize) -> String {
        let sl = &self.tree.slots[s];
        let seg = self.seg_state(sl.seg);
        let ctrl = match self.tree.segs[sl.seg].ctrl {
            Some(c) => {
                let mut v: Vec<String> = (0..self.tree.segs.len())
                    .filter(|&g| self.tree.segs[g].ctrl == Some(c))
                    .map(|g| self.seg_state(g))
                    .collect();
                v.sort();
                format!("{}{{{}}}", self.tree.ctrls[c].1, v.join(";"))
            }
            None => "memory".into(),
        };
        let ch = if self.tree.chassis_matter {
            sl.chassis.to_string()
        } else {
            String::new()
        };
        format!("{}|{seg}|{ctrl}|{ch}", sl.sig)
    }

    fn go(&mut self, k: usize) {
        if self.stopped {
            return;
        }
        self.nodes += 1;
        if self.nodes > self.max_nodes
            || self.nodes.is_multiple_of(NODES_PER_CLOCK_CHECK) && late(self.deadline)
        {
            self.stopped = true;
            return;
        }
        if k == self.order.len() {
            let place: Vec<usize> = self.slot_of.iter().map(|s| s.unwrap_or(0)).collect();
            let key = canonical(self.tree, self.cards, &place);
            if self.seen.insert(key) {
                self.out.push(place);
                if self.out.len() >= self.max_placements {
                    self.stopped = true;
                }
            }
            return;
        }
        let c = self.order[k];
        let candidates: Vec<usize> = match self.cards.fixed[c] {
            Some(s) => vec![s],
            None => {
                // Cards of one kind take slots in increasing order.
                let after = (k > 0
                    && self.cards.kind[self.order[k - 1]] == self.cards.kind[c]
                    && self.cards.fixed[self.order[k - 1]].is_none())
                .then(|| self.slot_of[self.order[k - 1]])
                .flatten();
                let mut reps: Vec<usize> = Vec::new();
                let mut states: HashSet<String> = HashSet::new();
                for s in 0..self.tree.slots.len() {
                    if self.tree.slots[s].taken
                        || self.occupant[s].is_some()
                        || !self.cards.fits[c][s]
                        || after.is_some_and(|a| s <= a)
                    {
                        continue;
                    }
                    if states.insert(self.state(s)) {
                        reps.push(s);
                    }
                }
                reps
            }
        };
        for s in candidates {
            self.slot_of[c] = Some(s);
            self.occupant[s] = Some(c);
            if apart_ok(self.tree, self.req, &self.slot_of) {
                self.go(k + 1);
            }
            self.slot_of[c] = None;
            self.occupant[s] = None;
            if self.stopped {
                return;
            }
        }
    }
}

/// A placement's score for the local search: the objective's two first
/// terms, then spread (higher is better, compared in order).
pub type Score = (f64, f64, f64);

/// A local search on `score` (higher is better) from `starts` random
/// feasible placements plus `seeds`: moves of one card to a free slot and
/// swaps of two cards of different kinds, the best improving move each
/// step. Returns every distinct feasible placement visited, those visited
/// so far once the wall clock passes `deadline` (looked at for each card
/// moved; the caller then reports the bound).
#[allow(clippy::too_many_arguments)]
pub fn local_search(
    tree: &Tree,
    cards: &Cards,
    req: &PlaceRequest,
    seeds: &[Vec<usize>],
    starts: usize,
    seed: u64,
    max_steps: usize,
    score: &dyn Fn(&[usize]) -> Score,
    deadline: Option<std::time::Instant>,
) -> Vec<Vec<usize>> {
    let n = cards.kind.len();
    let mut rng = RngStream::new(seed, 0x0070_6c61_6365);
    let mut visited: HashSet<String> = HashSet::new();
    let mut found: Vec<Vec<usize>> = Vec::new();
    let mut keep = |p: &Vec<usize>, found: &mut Vec<Vec<usize>>| {
        if visited.insert(canonical(tree, cards, p)) {
            found.push(p.clone());
        }
    };
    let feasible = |p: &[usize]| {
        let so: Vec<Option<usize>> = p.iter().map(|&s| Some(s)).collect();
        apart_ok(tree, req, &so)
    };
    let mut starts_list: Vec<Vec<usize>> = seeds.to_vec();
    let mut tries = 0;
    while starts_list.len() < seeds.len() + starts && tries < starts * 50 {
        tries += 1;
        if let Some(p) = random_placement(tree, cards, req, &mut rng) {
            starts_list.push(p);
        }
    }
    for start in starts_list {
        if !feasible(&start) {
            continue;
        }
        let mut cur = start;
        let mut cur_score = score(&cur);
        keep(&cur, &mut found);
        for _ in 0..max_steps {
            let mut best: Option<(Vec<usize>, Score)> = None;
            let mut occupied = vec![None; tree.slots.len()];
            for (c, &s) in cur.iter().enumerate() {
                occupied[s] = Some(c);
            }
            let consider = |p: Vec<usize>, best: &mut Option<(Vec<usize>, Score)>| {
                if !feasible(&p) {
                    return;
                }
                let sc = score(&p);
                if sc > cur_score && best.as_ref().is_none_or(|b| sc > b.1) {
                    *best = Some((p, sc));
                }
            };
            for c in 0..n {
                if late(deadline) {
                    return found;
                }
                if cards.fixed[c].is_some() {
                    continue;
                }
                for (s, &occupant) in occupied.iter().enumerate() {
                    if tree.slots[s].taken || !cards.fits[c][s] || s == cur[c] {
                        continue;
                    }
                    match occupant {
                        None => {
                            let mut p = cur.clone();
                            p[c] = s;
                            consider(p, &mut best);
                        }
                        Some(d)
                            if d > c
                                && cards.fixed[d].is_none()
                                && cards.kind[d] != cards.kind[c]
                                && cards.fits[d][cur[c]] =>
                        {
                            let mut p = cur.clone();
                            p[c] = s;
                            p[d] = cur[c];
                            consider(p, &mut best);
                        }
                        _ => {}
                    }
                }
            }
            match best {
                Some((p, sc)) => {
                    cur = p;
                    cur_score = sc;
                    keep(&cur, &mut found);
                }
                None => break,
            }
        }
    }
    found
}

/// A random feasible placement (cards in random order, each in a random
/// fitting free slot that keeps the groups apart), if one is found.
fn random_placement(
    tree: &Tree,
    cards: &Cards,
    req: &PlaceRequest,
    rng: &mut RngStream,
) -> Option<Vec<usize>> {
    let n = cards.kind.len();
    let mut slot_of: Vec<Option<usize>> = vec![None; n];
    let mut used = vec![false; tree.slots.len()];
    for (c, slot) in slot_of.iter_mut().enumerate() {
        if let Some(s) = cards.fixed[c] {
            *slot = Some(s);
            used[s] = true;
        }
    }
    let mut order: Vec<usize> = (0..n).filter(|&c| cards.fixed[c].is_none()).collect();
    for i in (1..order.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    for c in order {
        let mut options: Vec<usize> = (0..tree.slots.len())
            .filter(|&s| !tree.slots[s].taken && !used[s] && cards.fits[c][s])
            .filter(|&s| {
                slot_of[c] = Some(s);
                let ok = apart_ok(tree, req, &slot_of);
                slot_of[c] = None;
                ok
            })
            .collect();
        if options.is_empty() {
            return None;
        }
        let s = options.swap_remove((rng.next_u64() % options.len() as u64) as usize);
        slot_of[c] = Some(s);
        used[s] = true;
    }
    Some(slot_of.into_iter().map(|s| s.unwrap_or(0)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::{load_registry, parse_place_request};

    /// Every injective assignment of the cards to usable slots that keeps
    /// the groups apart, by canonical key.
    fn brute(tree: &Tree, cards: &Cards, req: &PlaceRequest) -> HashSet<String> {
        let n = cards.kind.len();
        let mut out = HashSet::new();
        let mut slot_of: Vec<Option<usize>> = vec![None; n];
        fn go(
            k: usize,
            tree: &Tree,
            cards: &Cards,
            req: &PlaceRequest,
            slot_of: &mut Vec<Option<usize>>,
            out: &mut HashSet<String>,
        ) {
            if k == slot_of.len() {
                if apart_ok(tree, req, slot_of) {
                    let p: Vec<usize> = slot_of.iter().map(|s| s.unwrap_or(0)).collect();
                    out.insert(canonical(tree, cards, &p));
                }
                return;
            }
            for s in 0..tree.slots.len() {
                let ok = match cards.fixed[k] {
                    Some(f) => f == s,
                    None => !tree.slots[s].taken && cards.fits[k][s],
                };
                if !ok || slot_of.contains(&Some(s)) {
                    continue;
                }
                slot_of[k] = Some(s);
                go(k + 1, tree, cards, req, slot_of, out);
                slot_of[k] = None;
            }
        }
        go(0, tree, cards, req, &mut slot_of, &mut out);
        out
    }

    fn check(text: &str) -> usize {
        let reg = load_registry(&[]).expect("bundled models");
        let req = parse_place_request("t.toml".into(), text, &reg).expect("a valid request");
        let server = &reg.servers[&req.server];
        let tree = Tree::new(server, &req);
        let cards = Cards::new(&reg, server, &tree, &req);
        let en = enumerate(&tree, &cards, &req, usize::MAX, u64::MAX, None);
        assert!(en.complete);
        let got: HashSet<String> = en
            .placements
            .iter()
            .map(|p| canonical(&tree, &cards, p))
            .collect();
        assert_eq!(got.len(), en.placements.len(), "each placement found once");
        let want = brute(&tree, &cards, &req);
        assert_eq!(got, want, "{text}");
        got.len()
    }

    fn request(head: &str, cards: &[(&str, &str, u32)], extra: &str) -> String {
        let mut s = format!("[place]\n{head}\n");
        for (name, adapter, count) in cards {
            let function = match *adapter {
                "a9782a" => "fc",
                "a5483a" | "a5513a" => "atm",
                _ => "dma",
            };
            let (kind, direction) = match function {
                "fc" => ("diskbench", "read"),
                "atm" => ("netperf-tcp-stream", "transmit"),
                _ => ("dma", "read"),
            };
            s += &format!(
                "\n[[card]]\nname = \"{name}\"\nadapter = \"{adapter}\"\ncount = {count}\n\n[[workload]]\ncard = \"{name}\"\nfunction = \"{function}\"\nkind = \"{kind}\"\ndirection = \"{direction}\"\n"
            );
        }
        s + extra
    }

    #[test]
    fn the_symmetric_enumeration_finds_every_distinct_placement_once() {
        // Shared PCI-X 66 pairs beside slots of their own.
        let rx = "server = \"rx6600\"\ntestbed = \"hp-2004-lab\"\ncells = 1";
        let n = check(&request(
            rx,
            &[("a", "a9782a", 2), ("d", "dma-exerciser", 1)],
            "",
        ));
        assert!(n > 10, "{n}");
        check(&request(rx, &[("d", "dma-exerciser", 3)], ""));
        check(&request(
            rx,
            &[("a", "a9782a", 2), ("d", "dma-exerciser", 2)],
            "\n[[apart]]\ncards = [\"a\"]\nunder = \"bus\"\n",
        ));
        // Slots under shared buses and taken slots (V2500).
        let v = "server = \"v2500\"\ntestbed = \"hp-1999-atm-lab\"\ncells = 1\ntaken = [\"epic3-*\", \"epic4-*\", \"epic5-*\", \"epic6-*\", \"epic2-2\", \"epic2-3\"]";
        check(&request(v, &[("s", "a5483a", 3)], ""));
        check(&request(v, &[("s", "a5483a", 2), ("t", "a5513a", 1)], ""));
        // Two I/O controllers with slots of two kinds (N4000), apart by controller.
        let nc = "server = \"n4000\"\ntestbed = \"hp-1999-atm-lab\"\ncells = 1";
        check(&request(nc, &[("t", "a5513a", 3)], ""));
        check(&request(
            nc,
            &[("t", "a5513a", 2), ("s", "a5483a", 1)],
            "\n[[apart]]\ncards = [\"t\"]\nunder = \"controller\"\n",
        ));
        // Chassis (rp8400: internal and SEU), apart by chassis, a fixed card.
        let rp = "server = \"rp8400-seu\"\ntestbed = \"hp-2004-lab\"\ncells = 1";
        check(&request(
            rp,
            &[("a", "a9782a", 2)],
            "\n[[apart]]\ncards = [\"a\"]\nunder = \"chassis\"\n\n[[chassis]]\nname = \"internal\"\nslots = [\"internal-*\"]\n\n[[chassis]]\nname = \"seu\"\nslots = [\"seu-*\"]\n",
        ));
    }
}
