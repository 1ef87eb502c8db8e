//! The fluid bound: an upper bound on what any placement's simulation can
//! reach, from capacities alone.
//!
//! Each card moves at most what it moved alone in a slot of the same path
//! class (contention only takes from it), raised by that run's 95%
//! interval; the cards whose every payload byte crosses their slot's bus,
//! ropes and I/O controller together move at most each shared node's
//! capacity: a shared bus segment its fastest mode's peak (and its ropes
//! both ways), a controller its link both ways. A placement's bound is the
//! largest flow these constraints allow (they nest: segment, controller,
//! memory, so the largest total is found bottom-up); it bounds the total,
//! the worst card's share of its demand and the worst card's throughput.
//! The CPUs and memory are left out, which only loosens it.

use crate::model::Objective;

/// At most how much one card moves in one slot class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CardCap {
    /// Payload both ways, bytes/s: what it moved alone, raised by its run's
    /// 95% interval (0 for a standby card).
    pub most: f64,
    /// Whether every payload byte crossed the slot's bus and ropes alone
    /// (then it counts against their capacity and its controller's).
    pub crosses: bool,
}

/// One card of a placement (or part of one) as the bound sees it.
#[derive(Debug, Clone, Copy)]
pub struct Placed {
    /// Its cap in the slot's class.
    pub cap: CardCap,
    /// Its demand, bytes/s (0: none).
    pub demand: f64,
    /// Whether the objective counts it (not standby).
    pub active: bool,
    /// Its slot's segment.
    pub seg: usize,
    /// Its slot's segment's controller, if any.
    pub ctrl: Option<usize>,
}

/// Upper bounds on a placement's (or a part's) simulated throughputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// The total of the active cards, bytes/s.
    pub total: f64,
    /// The worst active card's share of its demand (infinite with no
    /// active card).
    pub share: f64,
    /// The worst active card's throughput, bytes/s (infinite with no
    /// active card).
    pub worst: f64,
}

impl Bound {
    /// No card.
    pub const EMPTY: Bound = Bound {
        total: 0.0,
        share: f64::INFINITY,
        worst: f64::INFINITY,
    };

    /// Two disjoint parts together (sharing no node the bound counts).
    pub fn join(self, o: Bound) -> Bound {
        Bound {
            total: self.total + o.total,
            share: self.share.min(o.share),
            worst: self.worst.min(o.worst),
        }
    }

    /// The larger of two bounds, term by term (a bound on either).
    pub fn max(self, o: Bound) -> Bound {
        Bound {
            total: self.total.max(o.total),
            share: self.share.max(o.share),
            worst: self.worst.max(o.worst),
        }
    }

    /// The smaller of two bounds on the same placements, term by term.
    pub fn min(self, o: Bound) -> Bound {
        Bound {
            total: self.total.min(o.total),
            share: self.share.min(o.share),
            worst: self.worst.min(o.worst),
        }
    }
}

/// The shared nodes' capacities.
#[derive(Debug, Clone)]
pub struct Fluid {
    /// Per segment: payload it carries at most, bytes/s (its fastest
    /// mode's peak, and its ropes both ways).
    pub seg_cap: Vec<f64>,
    /// Per I/O controller: payload its link carries at most both ways.
    pub ctrl_cap: Vec<f64>,
}

impl Fluid {
    /// The bound of the cards `placed` (no two in one slot).
    pub fn bound(&self, placed: &[Placed]) -> Bound {
        let mut b = Bound::EMPTY;
        // Per segment: crossing flow at most, demand and active cards crossing.
        let mut seg: std::collections::BTreeMap<usize, (f64, f64, usize, Option<usize>)> =
            Default::default();
        for p in placed {
            if p.active {
                b.worst = b.worst.min(p.cap.most);
                let share = if p.demand > 0.0 {
                    p.cap.most / p.demand
                } else {
                    1.0
                };
                b.share = b.share.min(share);
            }
            if p.cap.crosses {
                let e = seg.entry(p.seg).or_insert((0.0, 0.0, 0, p.ctrl));
                e.0 += p.cap.most;
                if p.active {
                    e.1 += p.demand;
                    e.2 += 1;
                }
            } else {
                b.total += p.cap.most;
            }
        }
        let mut ctrl: std::collections::BTreeMap<usize, (f64, f64, usize)> = Default::default();
        let limit = |b: &mut Bound, cap: f64, demand: f64, n: usize| {
            if demand > 0.0 {
                b.share = b.share.min(cap / demand);
            }
            if n > 0 {
                b.worst = b.worst.min(cap / n as f64);
            }
        };
        for (&g, &(flow, demand, n, c)) in &seg {
            let cap = self.seg_cap.get(g).copied().unwrap_or(f64::INFINITY);
            limit(&mut b, cap, demand, n);
            let flow = flow.min(cap);
            match c {
                Some(c) => {
                    let e = ctrl.entry(c).or_insert((0.0, 0.0, 0));
                    e.0 += flow;
                    e.1 += demand;
                    e.2 += n;
                }
                None => b.total += flow,
            }
        }
        for (&c, &(flow, demand, n)) in &ctrl {
            let cap = self.ctrl_cap.get(c).copied().unwrap_or(f64::INFINITY);
            limit(&mut b, cap, demand, n);
            b.total += flow.min(cap);
        }
        b
    }
}

/// Whether a placement with bound `b` could do better than the simulated
/// score `best` by more than `tie_pct` percent of the objective.
pub fn can_beat(obj: Objective, b: &Bound, best: &[f64; 3], tie_pct: f64) -> bool {
    let above = |bound: f64, x: f64| bound > x + tie_pct / 100.0 * x.abs();
    match obj {
        Objective::Total => above(b.total, best[0]),
        Objective::WorstShare => above(b.share, best[0]),
        Objective::MinEach(m) => {
            if best[0] >= 1.0 {
                above(b.total, best[1])
            } else {
                b.worst >= m || above(b.worst, best[1])
            }
        }
    }
}

/// The bound in the objective's terms for the best simulated score `best`
/// (its scale as [`super::objective_value`]'s): `None` for `min-each` when
/// the best misses the minimum but the bound does not rule out a placement
/// that meets it (the two are not in one unit then).
pub fn objective_bound(obj: Objective, b: &Bound, best: &[f64; 3]) -> Option<f64> {
    match obj {
        Objective::Total => Some(b.total / 1e6),
        Objective::WorstShare => Some(b.share * 100.0),
        Objective::MinEach(m) => {
            if best[0] >= 1.0 {
                Some(b.total / 1e6)
            } else if b.worst >= m {
                None
            } else {
                Some(b.worst / 1e6)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(most: f64, seg: usize, ctrl: Option<usize>) -> Placed {
        Placed {
            cap: CardCap {
                most,
                crosses: true,
            },
            demand: most,
            active: true,
            seg,
            ctrl,
        }
    }

    #[test]
    fn the_bound_takes_each_nodes_capacity_bottom_up() {
        let f = Fluid {
            seg_cap: vec![100.0, 1000.0, 1000.0],
            ctrl_cap: vec![150.0],
        };
        // Two cards of 80 on a segment of 100: 100 at most, each at most
        // 50 if both get the same, a share of 5/8.
        let b = f.bound(&[card(80.0, 0, None), card(80.0, 0, None)]);
        assert_eq!(b.total, 100.0);
        assert_eq!(b.worst, 50.0);
        assert_eq!(b.share, 100.0 / 160.0);
        // Two segments under one controller of 150.
        let b = f.bound(&[card(80.0, 1, Some(0)), card(90.0, 2, Some(0))]);
        assert_eq!(b.total, 150.0);
        assert_eq!(b.worst, 75.0);
        // A card whose bytes do not cross the ropes is not limited by them;
        // a standby card counts for nothing.
        let mut free = card(500.0, 0, None);
        free.cap.crosses = false;
        let mut standby = card(0.0, 1, None);
        standby.active = false;
        let b = f.bound(&[free, standby]);
        assert_eq!(b.total, 500.0);
        assert_eq!(b.worst, 500.0);
        assert_eq!(f.bound(&[]), Bound::EMPTY);
    }

    #[test]
    fn a_bound_within_the_tie_cannot_beat_the_best() {
        let b = Bound {
            total: 1005.0,
            share: 1.0,
            worst: 100.0,
        };
        assert!(!can_beat(Objective::Total, &b, &[1000.0, 1.0, 0.0], 1.0));
        assert!(can_beat(Objective::Total, &b, &[990.0, 1.0, 0.0], 1.0));
        // min-each: a best that misses the minimum is beaten by any
        // placement that could meet it.
        assert!(can_beat(
            Objective::MinEach(100.0),
            &b,
            &[0.0, 99.0, 1000.0],
            1.0
        ));
        assert_eq!(
            objective_bound(Objective::MinEach(100.0), &b, &[0.0, 99.0, 0.0]),
            None
        );
    }
}
