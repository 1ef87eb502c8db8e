//! The search split by independence: the server's slots fall into parts
//! that share no bus segment, I/O controller or chassis (on a Superdome,
//! one I/O chassis each). Each part is enumerated alone, once per count of
//! each kind of card it holds (up to symmetry, [`super::search::enumerate`]),
//! and parts laid out alike share that work; the parts' answers are then
//! combined by dynamic programming over the parts, counting the cards
//! placed so far:
//!
//! - the fluid bound ([`super::bound`]) of the best placement: each part's
//!   largest bound for each count, combined (a sum for the total, the
//!   smaller for the worst card and share), an upper bound on every
//!   placement of the request;
//! - the leaders by the analytic estimate: each part's best few
//!   sub-placements for each count, combined keeping the best few partial
//!   placements per count (and the worst few, for the losers). The
//!   estimate of a placement is its parts' estimates together when the
//!   CPUs stay below their capacity whatever the placement (the caller
//!   checks), so the combination is the estimate's own order.
//!
//! Failover groups and fixed slots tie the parts together: the caller then
//! searches the whole server, and uses the split only for the bound,
//! which ignores them (a relaxation, so still an upper bound).

use std::collections::BTreeMap;

use super::bound::{Bound, Fluid, Placed};
use super::search::{enumerate, Cards, Tree};
use crate::model::{Objective, PlaceRequest};

/// A part of the server: slots sharing no bus segment, I/O controller or
/// chassis with the rest.
#[derive(Debug, Clone)]
pub struct Part {
    /// Its slots (indices into the tree's), in server order.
    pub slots: Vec<usize>,
    /// Parts laid out alike, slot for slot, share a group.
    pub group: usize,
}

/// The parts of `tree`, in order of their first slot.
pub fn parts(tree: &Tree) -> Vec<Part> {
    let n = tree.slots.len();
    let mut up: Vec<usize> = (0..n).collect();
    fn root(up: &mut [usize], mut i: usize) -> usize {
        while up[i] != i {
            up[i] = up[up[i]];
            i = up[i];
        }
        i
    }
    let mut first: BTreeMap<(u8, usize), usize> = BTreeMap::new();
    for (s, sl) in tree.slots.iter().enumerate() {
        let keys = [
            (0u8, sl.seg),
            (1, tree.segs[sl.seg].ctrl.map_or(usize::MAX, |c| c)),
            (2, sl.chassis),
        ];
        for key in keys {
            if key.1 == usize::MAX {
                continue;
            }
            let f = *first.entry(key).or_insert(s);
            let (a, b) = (root(&mut up, f), root(&mut up, s));
            if a != b {
                up[a.max(b)] = a.min(b);
            }
        }
    }
    let mut by_root: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for s in 0..n {
        let r = root(&mut up, s);
        by_root.entry(r).or_default().push(s);
    }
    let mut groups: Vec<String> = Vec::new();
    by_root
        .into_values()
        .map(|slots| {
            let sub = tree.restrict(&slots);
            let layout: Vec<String> = sub
                .slots
                .iter()
                .map(|s| {
                    let ctrl = sub.segs[s.seg]
                        .ctrl
                        .map_or("memory", |c| tree.ctrls[c].1.as_str());
                    format!("{}|{}|{}|{}|{ctrl}", s.sig, s.taken, s.seg, s.chassis)
                })
                .collect();
            let key = layout.join(";");
            let group = match groups.iter().position(|g| *g == key) {
                Some(g) => g,
                None => {
                    groups.push(key);
                    groups.len() - 1
                }
            };
            Part { slots, group }
        })
        .collect()
}

/// The analytic estimate of a (partial) placement, in the terms the
/// objective and the tie-break combine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Estimated total of the active cards, bytes/s.
    pub sum: f64,
    /// The worst active card's estimated share of its demand (infinite
    /// with none).
    pub min_share: f64,
    /// The worst active card's estimate (infinite with none).
    pub min_est: f64,
    /// Pairs of cards sharing a chassis, a controller, a bus.
    pub pairs: [usize; 3],
}

impl Summary {
    /// No card.
    pub const EMPTY: Summary = Summary {
        sum: 0.0,
        min_share: f64::INFINITY,
        min_est: f64::INFINITY,
        pairs: [0; 3],
    };

    fn join(&self, o: &Summary) -> Summary {
        Summary {
            sum: self.sum + o.sum,
            min_share: self.min_share.min(o.min_share),
            min_est: self.min_est.min(o.min_est),
            pairs: [
                self.pairs[0] + o.pairs[0],
                self.pairs[1] + o.pairs[1],
                self.pairs[2] + o.pairs[2],
            ],
        }
    }

    /// The order of the search (higher is better): the objective's score
    /// of the estimate (as [`super::score`] computes it), then spread.
    pub fn key(&self, obj: Objective, weight: f64) -> [f64; 4] {
        let [ch, ctrl, bus] = self.pairs.map(|p| p as f64);
        let spread = -((ch * weight + ctrl) * weight + bus);
        let s = match obj {
            Objective::Total => [self.sum, self.min_share, 0.0],
            Objective::WorstShare => [self.min_share, self.sum, 0.0],
            Objective::MinEach(m) => {
                if self.min_est >= m {
                    [1.0, self.sum, self.min_share]
                } else {
                    [0.0, self.min_est, self.sum]
                }
            }
        };
        [s[0], s[1], s[2], spread]
    }
}

/// The estimate of cards (kind, slot) together.
pub type EstimateFn<'a> = dyn Fn(&[(usize, usize)]) -> Summary + 'a;

/// What the split needs of the request: per kind of load (cards that load
/// the machine alike), how many, whether one fits a slot, its estimate and
/// its bound.
pub struct Kinds<'a> {
    /// Cards of each load kind.
    pub count: Vec<usize>,
    /// Whether a card of kind `k` may run in slot `s` (free and fitting).
    pub usable: &'a dyn Fn(usize, usize) -> bool,
    /// The bound's view of a card of kind `k` in slot `s`.
    pub placed: &'a dyn Fn(usize, usize) -> Placed,
    /// The estimate of cards (kind, slot) together in one part.
    pub estimate: &'a EstimateFn<'a>,
    /// The shared nodes' capacities.
    pub fluid: &'a Fluid,
}

/// One sub-placement of a part kept for the leaders.
#[derive(Debug, Clone)]
struct Choice {
    /// Its cards per kind.
    counts: Vec<usize>,
    /// Its estimate.
    summary: Summary,
    /// (kind, index into the part's slots) per card.
    cards: Vec<(usize, usize)>,
}

/// What the enumeration of one group's parts found.
struct Table {
    /// Per count of each kind: the largest bound of its sub-placements.
    bounds: Vec<(Vec<usize>, Bound)>,
    /// The best and worst few sub-placements per count, by estimate.
    best: Vec<Choice>,
    worst: Vec<Choice>,
    /// Sub-placements enumerated.
    enumerated: usize,
    /// Whether every count's sub-placements were all enumerated.
    complete: bool,
}

/// Sub-placements of one part kept per count of cards, best and worst.
const KEEP_PER_COUNT: usize = 3;

/// Sub-placements at most enumerated for one count of cards in one part
/// (beyond, the bound of that count is the cards' caps alone).
const MAX_SUB_PLACEMENTS: usize = 20_000;

/// Sub-placements at most enumerated in all, every layout and count
/// (beyond, the counts left are bounded by the cards' caps alone).
const MAX_ENUMERATED: usize = 200_000;

/// The outcome of the split search.
pub struct Split {
    /// Parts with a free slot.
    pub parts: usize,
    /// Distinct layouts among them.
    pub groups: usize,
    /// The bound on every placement.
    pub bound: Bound,
    /// Sub-placements enumerated, every part layout and count.
    pub enumerated: usize,
    /// Whether every sub-placement of every count was enumerated (else
    /// some counts' bounds are the cards' caps alone).
    pub complete: bool,
    /// The best placements by estimate, best first: (kind, slot) per card.
    pub leaders: Vec<Vec<(usize, usize)>>,
    /// The worst placements by estimate, worst first.
    pub worst: Vec<Vec<(usize, usize)>>,
}

/// Count vectors (per kind, at most `count[k]` and in all at most `room`).
fn counts(count: &[usize], fit: &[usize], room: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = vec![0; count.len()];
    fn go(
        k: usize,
        left: usize,
        count: &[usize],
        fit: &[usize],
        cur: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
    ) {
        if k == count.len() {
            out.push(cur.clone());
            return;
        }
        for m in 0..=count[k].min(fit[k]).min(left) {
            cur[k] = m;
            go(k + 1, left - m, count, fit, cur, out);
        }
        cur[k] = 0;
    }
    go(0, room, count, fit, &mut cur, &mut out);
    out
}

/// Splits the search of `tree` for the cards of `kinds`: the bound, and
/// with `leaders` > 0 the best `leaders` placements by estimate and the
/// worst `worst`. `None` when the counts are too many to combine (more
/// than `max_states` partial counts) or the wall clock passes `deadline`.
#[allow(clippy::too_many_arguments)]
pub fn split(
    tree: &Tree,
    req: &PlaceRequest,
    kinds: &Kinds,
    obj: Objective,
    weight: f64,
    leaders: usize,
    worst: usize,
    max_states: usize,
    deadline: Option<std::time::Instant>,
) -> Option<Split> {
    let nk = kinds.count.len();
    let radix: Vec<usize> = kinds.count.iter().map(|c| c + 1).collect();
    let states: usize = radix.iter().try_fold(1usize, |a, r| a.checked_mul(*r))?;
    if states > max_states {
        return None;
    }
    let stride: Vec<usize> = (0..nk)
        .map(|k| radix[..k].iter().product::<usize>())
        .collect();
    let index = |c: &[usize]| -> usize { c.iter().zip(&stride).map(|(a, s)| a * s).sum() };
    let all = parts(tree);
    let free_req = PlaceRequest {
        apart: Vec::new(),
        ..req.clone()
    };
    // One table per group of parts laid out alike.
    let mut tables: BTreeMap<usize, Table> = BTreeMap::new();
    let mut budget = MAX_ENUMERATED;
    for part in &all {
        if tables.contains_key(&part.group) {
            continue;
        }
        let sub = tree.restrict(&part.slots);
        let fit: Vec<usize> = (0..nk)
            .map(|k| part.slots.iter().filter(|&&s| (kinds.usable)(k, s)).count())
            .collect();
        let room = part
            .slots
            .iter()
            .filter(|&&s| (0..nk).any(|k| (kinds.usable)(k, s)))
            .count();
        let mut t = Table {
            bounds: Vec::new(),
            best: Vec::new(),
            worst: Vec::new(),
            enumerated: 0,
            complete: true,
        };
        for c in counts(&kinds.count, &fit, room) {
            let n: usize = c.iter().sum();
            let kind: Vec<usize> = (0..nk).flat_map(|k| vec![k; c[k]]).collect();
            let cards = Cards {
                kind: kind.clone(),
                kinds: (0..nk).map(|k| k.to_string()).collect(),
                load: kind.clone(),
                loads: nk,
                fits: kind
                    .iter()
                    .map(|&k| part.slots.iter().map(|&s| (kinds.usable)(k, s)).collect())
                    .collect(),
                fixed: vec![None; n],
                groups: vec![Vec::new(); n],
            };
            let en = if budget == 0 {
                super::search::Enumerated {
                    placements: Vec::new(),
                    complete: false,
                    nodes: 0,
                }
            } else {
                enumerate(
                    &sub,
                    &cards,
                    &free_req,
                    MAX_SUB_PLACEMENTS.min(budget),
                    20 * MAX_SUB_PLACEMENTS as u64,
                    deadline,
                )
            };
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return None;
            }
            budget = budget.saturating_sub(en.placements.len());
            t.enumerated += en.placements.len();
            let mut bound: Option<Bound> = None;
            let mut kept: Vec<Choice> = Vec::new();
            for p in &en.placements {
                let pairs: Vec<(usize, usize)> = kind
                    .iter()
                    .zip(p)
                    .map(|(&k, &s)| (k, part.slots[s]))
                    .collect();
                let placed: Vec<Placed> =
                    pairs.iter().map(|&(k, s)| (kinds.placed)(k, s)).collect();
                let b = kinds.fluid.bound(&placed);
                bound = Some(bound.map_or(b, |x| x.max(b)));
                if leaders > 0 {
                    kept.push(Choice {
                        counts: c.clone(),
                        summary: (kinds.estimate)(&pairs),
                        cards: kind.iter().zip(p).map(|(&k, &s)| (k, s)).collect(),
                    });
                }
            }
            if !en.complete || (n > 0 && en.placements.is_empty()) {
                t.complete &= en.complete;
                // The cards' caps alone: each kind in its best slots.
                let mut b = Bound::EMPTY;
                for (k, &m) in c.iter().enumerate() {
                    let mut caps: Vec<Placed> = part
                        .slots
                        .iter()
                        .filter(|&&s| (kinds.usable)(k, s))
                        .map(|&s| (kinds.placed)(k, s))
                        .collect();
                    caps.sort_by(|a, b| b.cap.most.total_cmp(&a.cap.most));
                    for p in caps.iter().take(m) {
                        b.total += p.cap.most;
                    }
                    if let Some(p) = caps
                        .iter()
                        .filter(|p| p.active)
                        .max_by(|a, b| a.cap.most.total_cmp(&b.cap.most))
                    {
                        if m > 0 {
                            b.worst = b.worst.min(p.cap.most);
                            let share = caps
                                .iter()
                                .map(|p| {
                                    if p.demand > 0.0 {
                                        p.cap.most / p.demand
                                    } else {
                                        1.0
                                    }
                                })
                                .fold(0.0, f64::max);
                            b.share = b.share.min(share);
                        }
                    }
                }
                if en.complete {
                    // No sub-placement at all: this count cannot be placed.
                    continue;
                }
                bound = Some(bound.map_or(b, |x| x.max(b)));
            }
            let Some(bound) = bound else { continue };
            t.bounds.push((c.clone(), bound));
            let order = |a: &Choice, b: &Choice| {
                let (x, y) = (a.summary.key(obj, weight), b.summary.key(obj, weight));
                y.partial_cmp(&x).unwrap_or(std::cmp::Ordering::Equal)
            };
            kept.sort_by(order);
            t.best.extend(kept.iter().take(KEEP_PER_COUNT).cloned());
            t.worst.extend(
                kept.iter()
                    .rev()
                    .take(KEEP_PER_COUNT.min(worst.max(1)))
                    .cloned(),
            );
        }
        tables.insert(part.group, t);
    }
    let used: Vec<&Part> = all
        .iter()
        .filter(|p| tables.get(&p.group).is_some_and(|t| t.bounds.len() > 1))
        .collect();
    // The bound: the largest of each term over every way of spreading the
    // counts over the parts.
    let none = Bound {
        total: f64::NEG_INFINITY,
        share: f64::NEG_INFINITY,
        worst: f64::NEG_INFINITY,
    };
    let fits_in = |s: usize, c: &[usize]| -> Option<usize> {
        let mut out = s;
        for k in 0..nk {
            let have = (s / stride[k]) % radix[k];
            if have + c[k] > kinds.count[k] {
                return None;
            }
            out += c[k] * stride[k];
        }
        Some(out)
    };
    let mut best = vec![none; states];
    best[0] = Bound::EMPTY;
    for part in &used {
        let t = &tables[&part.group];
        let mut next = vec![none; states];
        for (s, b) in best.iter().enumerate() {
            if b.total == f64::NEG_INFINITY {
                continue;
            }
            for (c, pb) in &t.bounds {
                if let Some(to) = fits_in(s, c) {
                    next[to] = next[to].max(b.join(*pb));
                }
            }
        }
        best = next;
    }
    let goal = index(&kinds.count);
    let bound = best[goal];
    let enumerated = tables.values().map(|t| t.enumerated).sum();
    let complete = tables.values().all(|t| t.complete);
    let pick = |want: usize, worst_first: bool| -> Vec<Vec<(usize, usize)>> {
        if want == 0 {
            return Vec::new();
        }
        combine(
            &used,
            &tables,
            states,
            &fits_in,
            goal,
            obj,
            weight,
            want,
            worst_first,
        )
    };
    Some(Split {
        parts: used.len(),
        groups: used
            .iter()
            .map(|p| p.group)
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        bound,
        enumerated,
        complete,
        leaders: pick(leaders, false),
        worst: pick(worst, true),
    })
}

/// A partial placement of the combination: its estimate, the choice made
/// in each part so far, and the same as a multiset over the groups (parts
/// laid out alike are interchangeable, so two partial placements with one
/// multiset are the same up to symmetry).
#[derive(Clone)]
struct Partial {
    summary: Summary,
    picks: Vec<(usize, usize)>,
    multiset: Vec<(usize, usize)>,
}

/// The best (or worst) `want` placements by estimate, combining the
/// parts' kept sub-placements count by count.
#[allow(clippy::too_many_arguments)]
fn combine(
    used: &[&Part],
    tables: &BTreeMap<usize, Table>,
    states: usize,
    fits_in: &dyn Fn(usize, &[usize]) -> Option<usize>,
    goal: usize,
    obj: Objective,
    weight: f64,
    want: usize,
    worst_first: bool,
) -> Vec<Vec<(usize, usize)>> {
    let better = |a: &Partial, b: &Partial| {
        let (x, y) = (a.summary.key(obj, weight), b.summary.key(obj, weight));
        let o = y.partial_cmp(&x).unwrap_or(std::cmp::Ordering::Equal);
        let o = if worst_first { o.reverse() } else { o };
        o.then_with(|| a.multiset.cmp(&b.multiset))
    };
    // The best `want` of a list, one per multiset.
    let shrink = |list: &mut Vec<Partial>| {
        list.sort_by(better);
        let mut seen = std::collections::HashSet::new();
        list.retain(|p| seen.len() < want && seen.insert(p.multiset.clone()));
    };
    // Whether key `k` ranks strictly after `floor`.
    let after = |k: &[f64; 4], floor: &[f64; 4]| {
        let o = floor.partial_cmp(k).unwrap_or(std::cmp::Ordering::Equal);
        if worst_first {
            o == std::cmp::Ordering::Less
        } else {
            o == std::cmp::Ordering::Greater
        }
    };
    let mut at: Vec<Vec<Partial>> = vec![Vec::new(); states];
    at[0].push(Partial {
        summary: Summary::EMPTY,
        picks: Vec::new(),
        multiset: Vec::new(),
    });
    for (pi, part) in used.iter().enumerate() {
        let t = &tables[&part.group];
        let choices = if worst_first { &t.worst } else { &t.best };
        let mut next: Vec<Vec<Partial>> = vec![Vec::new(); states];
        // Per state, the key of the last of a full list: what ranks after
        // it cannot be among the best `want`.
        let mut floor: Vec<Option<[f64; 4]>> = vec![None; states];
        let empty = Choice {
            counts: vec![0; t.bounds.first().map_or(0, |b| b.0.len())],
            summary: Summary::EMPTY,
            cards: Vec::new(),
        };
        // An empty part is a choice too (kept lists hold the count of no
        // card once).
        let has_empty = choices.iter().any(|c| c.cards.is_empty());
        let extra = (!has_empty).then_some(&empty);
        // From the most cards placed so far down: of placements alike up to
        // symmetry, the one kept fills the first parts first.
        for (s, list) in at.iter().enumerate().rev() {
            for p in list {
                for (ci, c) in choices
                    .iter()
                    .enumerate()
                    .chain(extra.map(|e| (usize::MAX, e)))
                {
                    let Some(to) = fits_in(s, &c.counts) else {
                        continue;
                    };
                    let summary = p.summary.join(&c.summary);
                    if floor[to].is_some_and(|f| after(&summary.key(obj, weight), &f)) {
                        continue;
                    }
                    let mut q = p.clone();
                    q.summary = summary;
                    q.picks.push((pi, ci));
                    let pos = q.multiset.partition_point(|x| *x < (part.group, ci));
                    q.multiset.insert(pos, (part.group, ci));
                    next[to].push(q);
                    if next[to].len() >= 4 * want {
                        shrink(&mut next[to]);
                        if next[to].len() == want {
                            floor[to] = next[to].last().map(|x| x.summary.key(obj, weight));
                        }
                    }
                }
            }
        }
        for list in &mut next {
            shrink(list);
        }
        at = next;
    }
    at[goal]
        .iter()
        .map(|p| {
            let mut cards = Vec::new();
            for &(pi, ci) in &p.picks {
                if ci == usize::MAX {
                    continue;
                }
                let part = used[pi];
                let t = &tables[&part.group];
                let c = if worst_first {
                    &t.worst[ci]
                } else {
                    &t.best[ci]
                };
                cards.extend(c.cards.iter().map(|&(k, s)| (k, part.slots[s])));
            }
            cards
        })
        .collect()
}
