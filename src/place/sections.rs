//! The report sections of `iosim place` (the same fields in table, CSV and
//! JSON): `placements` ranked, then for the best `top` of them `adapters`
//! (throughput per card and port against its demand) and `nodes` (every
//! shared node's utilisation), `losers` (why the worst placements simulated
//! lose) and `demand` (each card alone in its best slot).

use super::{
    bound, objective_value, tie_break, Candidate, Placement, TieBreak, SPREAD_DOMAINS, TIE_PCT,
};
use crate::model::{Objective, PlaceCard};
use crate::report::{Cell, Section};

/// `MB_s` or `pct`: the unit of the objective's value in field names.
fn unit(obj: Objective) -> &'static str {
    match obj {
        Objective::WorstShare => "pct",
        _ => "MB_s",
    }
}

/// The search in words, for the report's header.
pub fn search_text(p: &Placement) -> String {
    let s = &p.search;
    let space = match &s.split {
        Some(sp) => format!(
            "the slots split into {} independent parts (no bus, I/O controller or chassis shared; whatever the placement the CPUs at most {:.1}% and memory at most {:.1}% busy), {} enumerated alone ({} sub-placements up to symmetry{}) and combined: the best {} by estimate and the worst {}",
            sp.parts,
            sp.cpu_most * 100.0,
            sp.memory_most * 100.0,
            crate::units::count_text(sp.layouts, "layout", "layouts"),
            sp.enumerated,
            if sp.complete {
                ""
            } else {
                "; some counts stopped at the cap, bounded by the cards' own caps"
            },
            sp.leaders,
            s.distinct - sp.leaders
        ),
        None if s.enumerated_all => format!(
            "every distinct placement enumerated ({} after collapsing symmetric slots and identical cards; {} search steps)",
            s.distinct, s.nodes
        ),
        None => format!(
            "enumeration stopped at its cap ({} search steps), then a local search on the estimate from {} random starts and the 4 best enumerated: {} distinct placements estimated",
            s.nodes,
            super::LOCAL_STARTS,
            s.distinct
        ),
    };
    let simulated = if s.every_one_simulated {
        "every one simulated".to_string()
    } else if s.split.is_some() {
        format!(
            "the best {} by estimate (in rounds of {}, while a leader's bound could beat the best found by more than {TIE_PCT}%) and the worst two simulated, {} left unsimulated as their bound cannot",
            s.best_simulated,
            super::ROUND,
            s.pruned
        )
    } else {
        format!(
            "the best {} by estimate (and the worst two) simulated",
            s.best_simulated
        )
    };
    let verdict = if s.every_one_simulated {
        "proven best (within the simulation's noise, see throughput_ci95_pct)".to_string()
    } else if s.proven {
        format!("proven best within {TIE_PCT}% by the bound")
    } else {
        "not proven best (see bound)".to_string()
    };
    format!(
        "{space}; {simulated}: {verdict}; {} alone runs for the demands and the estimate",
        s.alone_runs
    )
}

/// The fluid bound and the verdict in words, for the report's header: the
/// bound on any placement, the best simulated, and "proven best" or the
/// gap between them.
pub fn bound_text(p: &Placement) -> String {
    let s = &p.search;
    let obj = p.request.objective;
    let u = match obj {
        Objective::WorstShare => "%",
        _ => " MB/s",
    };
    let what = "each card at most what it moves alone in a slot of its path, plus that run's 95% interval; each shared bus, rope and I/O controller at most its capacity";
    let best = objective_value(obj, &s.best_score);
    let head = match bound::objective_bound(obj, &s.bound, &s.best_score) {
        Some(b) => {
            let gap = if best != 0.0 {
                (b - best) / best.abs() * 100.0
            } else {
                f64::NAN
            };
            format!(
                "no placement can reach more than {b:.2}{u} ({what}); the best simulated, {best:.2}{u}, is {gap:.2}% below it"
            )
        }
        None => format!(
            "the best simulated misses the minimum, and the bound does not rule out a placement that meets it (the worst card could reach {:.2} MB/s; {what})",
            s.bound.worst / 1e6
        ),
    };
    let verdict = if s.every_one_simulated {
        "proven best: every distinct placement simulated".to_string()
    } else if s.proven {
        format!("proven best: no placement can beat it by more than {TIE_PCT}%")
    } else {
        "not proven best".to_string()
    };
    format!("{head}: {verdict}")
}

/// A card's share of its demand in a candidate (1 without demand).
fn share(c: &super::Candidate, demand: &[(f64, String)], i: usize) -> f64 {
    match (c.tput.get(i), demand.get(i)) {
        (Some(t), Some(d)) if d.0 > 0.0 => t / d.0,
        _ => 1.0,
    }
}

/// The active card with the smallest share of its demand (the first of
/// equals; standby cards carry no load).
fn worst_card(c: &super::Candidate, demand: &[(f64, String)], cards: &[PlaceCard]) -> usize {
    let active: Vec<usize> = (0..c.tput.len())
        .filter(|&i| cards.get(i).is_some_and(|x| !x.standby))
        .collect();
    let first = active.first().copied().unwrap_or(0);
    active.into_iter().fold(first, |w, i| {
        if share(c, demand, i) < share(c, demand, w) {
            i
        } else {
            w
        }
    })
}

/// The busiest resource on the path of card `label` in `r`: its bus and
/// ropes, its I/O controller, the CPUs its functions use, its processor
/// and links (`ropes above c@slot-15 83%`): why that card gets what it gets.
pub fn card_limit(r: &crate::sim::ExperimentResult, label: &str) -> String {
    let at = format!("{label}@");
    let prefix = format!("{label}.");
    let mut c: Vec<(f64, String)> = Vec::new();
    for b in &r.buses {
        let on = b.label.split('+').any(|x| x.starts_with(&at));
        if !on {
            continue;
        }
        c.push((b.util, format!("bus {}", b.label)));
        c.push((b.rope_util, format!("ropes above {}", b.label)));
        if let Some((n, u)) = &b.controller {
            c.push((*u, format!("I/O controller {n}")));
        }
    }
    for f in r.functions.iter().filter(|f| f.label.starts_with(&prefix)) {
        c.push((f.cpu_util, format!("interrupt CPU of {}", f.label)));
        c.push((f.app_cpu_util, format!("netperf CPU of {}", f.label)));
        c.push((f.card_cpu_util, format!("processor of {}", f.label)));
        c.push((f.wire_out_util, format!("link {} out", f.label)));
        c.push((f.wire_in_util, format!("link {} in", f.label)));
    }
    c.sort_by(|a, b| b.0.total_cmp(&a.0));
    c.first()
        .map_or(String::new(), |(u, n)| format!("{n} {:.0}%", u * 100.0))
}

/// `1 pair of cards shares a controller`, `no two cards share a bus`.
fn pairs_words(n: usize, domain: &str) -> String {
    match n {
        0 => format!("no two cards share a {domain}"),
        1 => format!("1 pair of cards shares a {domain}"),
        n => format!("{n} pairs of cards share a {domain}"),
    }
}

/// The first three items of a `;`-separated bottleneck, and how many more.
fn first_items(text: &str) -> String {
    let items: Vec<&str> = text.split("; ").collect();
    if items.len() <= 3 {
        return text.to_string();
    }
    format!("{} (and {} more)", items[..3].join("; "), items.len() - 3)
}

/// Why `a`, ranked just before `b`, is ahead of it though they tie.
pub fn tie_words(a: &Candidate, b: &Candidate, next_rank: usize) -> String {
    format!(
        "ties rank {next_rank} within {TIE_PCT}%; ahead because {}",
        tie_reason(a, b)
    )
}

/// Why `a` is ranked before `b` though they tie: `it spreads more (...)`.
fn tie_reason(a: &Candidate, b: &Candidate) -> String {
    match tie_break(a, b) {
        TieBreak::Spread(i) => {
            let d = SPREAD_DOMAINS[i].name();
            format!(
                "it spreads more ({} against {})",
                pairs_words(a.sharing[i], d),
                pairs_words(b.sharing[i], d)
            )
        }
        TieBreak::Headroom => {
            // The first of the nodes, busiest first, whose loads differ.
            let at = |c: &Candidate, i: usize| {
                c.loads
                    .get(i)
                    .map_or("nothing more shared".to_string(), |l| {
                        format!("{} at {:.1}%", l.node, l.load * 100.0)
                    })
            };
            let load = |c: &Candidate, i: usize| c.loads.get(i).map_or(0.0, |l| l.load);
            let i = (0..a.loads.len().max(b.loads.len()))
                .find(|&i| (load(a, i) - load(b, i)).abs() > super::HEADROOM_ALIKE)
                .unwrap_or(0);
            let which = if i == 0 {
                "its busiest shared node".to_string()
            } else {
                format!("its shared node {} by load (those before alike)", i + 1)
            };
            format!(
                "as spread, it leaves more headroom: {which}, {} against {}",
                at(a, i),
                at(b, i)
            )
        }
        TieBreak::Objective => "as spread and loaded, its objective is higher".to_string(),
        TieBreak::Name => "alike in spread and load, its name comes first".to_string(),
    }
}

/// The per-card throughputs of `a` and `b`: the card that loses most in
/// `b` against `a`, and how much (bytes/s).
fn biggest_loss(a: &Candidate, b: &Candidate) -> Option<(usize, f64)> {
    (0..a.tput.len().min(b.tput.len()))
        .map(|i| (i, a.tput[i] - b.tput[i]))
        .max_by(|x, y| x.1.total_cmp(&y.1))
}

/// A short paragraph on the choice: what limits the winner, and what the
/// runner-up loses and where.
pub fn why_text(p: &Placement) -> String {
    let obj = p.request.objective;
    let u = match obj {
        Objective::WorstShare => "%",
        _ => " MB/s",
    };
    let Some(best) = p.ranked.first() else {
        return String::new();
    };
    let Some(r) = &best.result else {
        return String::new();
    };
    let mut out = format!(
        "The best placement, {}, reaches {:.2}{u}; what binds it: {}.",
        best.label,
        objective_value(obj, &best.score),
        first_items(&r.bottleneck)
    );
    let Some(second) = p.ranked.get(1) else {
        out.push_str(" It is the only placement simulated.");
        return out;
    };
    let gap = objective_value(obj, &best.score) - objective_value(obj, &second.score);
    if best.tied_with_next {
        out.push_str(&format!(
            " The runner-up, {}, does as well within {TIE_PCT}% ({}); the best is first because {}.",
            second.label,
            if gap >= 0.0 {
                format!("{gap:.2}{u} behind")
            } else {
                format!("{:.2}{u} ahead, within the tie", -gap)
            },
            tie_reason(best, second)
        ));
    } else {
        out.push_str(&format!(
            " The runner-up, {}, gives {:.2}{u} less",
            second.label, gap
        ));
        if let (Some((i, loss)), Some(r2)) = (biggest_loss(best, second), &second.result) {
            if loss > 0.0 {
                let card = &p.request.cards[i].label;
                out.push_str(&format!(
                    ": card {card} gets {:.2} MB/s there against {:.2}, limited by {}",
                    second.tput[i] / 1e6,
                    best.tput[i] / 1e6,
                    card_limit(r2, card)
                ));
            }
        }
        out.push('.');
    }
    out
}

/// The sections of a placement answer, showing the best `top` in detail
/// and the last three simulated as losers.
pub fn place_sections(p: &Placement, top: usize) -> Vec<Section> {
    let req = &p.request;
    let obj = req.objective;
    let u = unit(obj);
    let f_obj = format!("objective_{u}");
    let f_margin = format!("margin_to_next_{u}");
    let mut placements = Section::new(
        "placements",
        &[
            "rank",
            "placement",
            &f_obj,
            "total_MB_s",
            "worst_share_pct",
            "worst_card",
            "worst_card_MB_s",
            "worst_card_busiest",
            "meets_min",
            &f_margin,
            "tied_with_next",
            "estimated_total_MB_s",
            "estimated_busiest",
            "throughput_ci95_pct",
            "tie",
            "bottleneck",
        ],
    );
    let n = p.ranked.len();
    for (i, c) in p.ranked.iter().enumerate() {
        let v = objective_value(obj, &c.score);
        let margin = p
            .ranked
            .get(i + 1)
            .map_or(f64::NAN, |next| v - objective_value(obj, &next.score));
        let wi = worst_card(c, &p.demand, &req.cards);
        let wshare = share(c, &p.demand, wi);
        // The smallest throughput of any card, which `min-each` judges.
        let least = c
            .tput
            .iter()
            .zip(&req.cards)
            .filter(|(_, card)| !card.standby)
            .map(|(t, _)| *t)
            .fold(f64::INFINITY, f64::min);
        let meets = match obj {
            Objective::MinEach(m) => {
                if least >= m {
                    "yes"
                } else {
                    "no"
                }
            }
            _ => "n/a",
        };
        let r = c.result.as_ref();
        placements.rows.push(vec![
            Cell::Int(i as u64 + 1),
            Cell::Text(c.label.clone()),
            Cell::Num(v, 2),
            Cell::Num(c.tput.iter().sum::<f64>() / 1e6, 2),
            Cell::Num(wshare * 100.0, 1),
            Cell::Text(req.cards.get(wi).map_or(String::new(), |x| x.label.clone())),
            Cell::Num(c.tput.get(wi).map_or(f64::NAN, |t| t / 1e6), 2),
            Cell::Text(match (r, req.cards.get(wi)) {
                (Some(r), Some(card)) => card_limit(r, &card.label),
                _ => String::new(),
            }),
            Cell::Text(meets.into()),
            Cell::Num(margin, 2),
            Cell::Text(if c.tied_with_next { "yes" } else { "no" }.into()),
            Cell::Num(c.est.iter().sum::<f64>() / 1e6, 2),
            Cell::Text(c.loads.first().map_or(String::new(), |l| {
                format!("{} {:.0}%", l.node, l.load * 100.0)
            })),
            Cell::Num(r.map_or(f64::NAN, |r| r.ci95_pct), 2),
            Cell::Text(match p.ranked.get(i + 1) {
                Some(next) if c.tied_with_next => tie_words(c, next, i + 2),
                _ => String::new(),
            }),
            Cell::Text(r.map_or(String::new(), |r| r.bottleneck.clone())),
        ]);
    }
    let mut adapters = Section::new(
        "adapters",
        &[
            "rank",
            "card",
            "adapter",
            "slot",
            "port",
            "out_MB_s",
            "in_MB_s",
            "total_MB_s",
            "demand_MB_s",
            "share_pct",
        ],
    );
    let mut nodes = Section::new(
        "nodes",
        &["rank", "node", "kind", "capacity_MB_s", "util_pct"],
    );
    for (i, c) in p.ranked.iter().enumerate().take(top) {
        let Some(r) = &c.result else { continue };
        for (ci, card) in req.cards.iter().enumerate() {
            let slot = p.slot_names[c.slots[ci]].clone();
            let prefix = format!("{}.", card.label);
            let d = p.demand[ci].0;
            adapters.rows.push(vec![
                Cell::Int(i as u64 + 1),
                Cell::Text(card.label.clone()),
                Cell::Text(card.adapter.clone()),
                Cell::Text(slot.clone()),
                Cell::Text("(card)".into()),
                Cell::Num(
                    r.functions
                        .iter()
                        .filter(|f| f.label.starts_with(&prefix))
                        .map(|f| f.out.0)
                        .sum::<f64>()
                        / 1e6,
                    2,
                ),
                Cell::Num(
                    r.functions
                        .iter()
                        .filter(|f| f.label.starts_with(&prefix))
                        .map(|f| f.inn.0)
                        .sum::<f64>()
                        / 1e6,
                    2,
                ),
                Cell::Num(c.tput[ci] / 1e6, 2),
                Cell::Num(d / 1e6, 2),
                Cell::Num(
                    if card.standby {
                        f64::NAN
                    } else if d > 0.0 {
                        c.tput[ci] / d * 100.0
                    } else {
                        100.0
                    },
                    1,
                ),
            ]);
            for (port, pd) in &p.port_demand[ci] {
                let Some(f) = r
                    .functions
                    .iter()
                    .find(|f| f.label == format!("{}.{port}", card.label))
                else {
                    continue;
                };
                adapters.rows.push(vec![
                    Cell::Int(i as u64 + 1),
                    Cell::Text(card.label.clone()),
                    Cell::Text(card.adapter.clone()),
                    Cell::Text(slot.clone()),
                    Cell::Text(port.clone()),
                    Cell::Num(f.out.mb_s(), 2),
                    Cell::Num(f.inn.mb_s(), 2),
                    Cell::Num(f.total().mb_s(), 2),
                    Cell::Num(pd / 1e6, 2),
                    Cell::Num(
                        if *pd > 0.0 {
                            f.total().0 / pd * 100.0
                        } else {
                            100.0
                        },
                        1,
                    ),
                ]);
            }
        }
        let rank = Cell::Int(i as u64 + 1);
        let mut controllers: Vec<String> = Vec::new();
        for b in &r.buses {
            nodes.rows.push(vec![
                rank.clone(),
                Cell::Text(format!("bus {}", b.label)),
                Cell::Text(format!("bus segment and its bridge ({})", b.mode)),
                Cell::Num(b.peak.mb_s(), 1),
                Cell::Num(b.util * 100.0, 1),
            ]);
            if b.rope_capacity.0 <= 0.0 {
                // A card's secondary bus: what goes up crosses its slot's bus.
                continue;
            }
            nodes.rows.push(vec![
                rank.clone(),
                Cell::Text(format!("ropes above {}", b.label)),
                Cell::Text("ropes (busier direction)".into()),
                Cell::Num(b.rope_capacity.mb_s(), 1),
                Cell::Num(b.rope_util * 100.0, 1),
            ]);
            if let Some((name, util)) = &b.controller {
                if controllers.contains(name) {
                    continue;
                }
                controllers.push(name.clone());
                let short = name.rsplit_once('/').map_or(name.as_str(), |x| x.1);
                let cap = p
                    .controllers
                    .iter()
                    .find(|(n, _)| n == short)
                    .map_or(f64::NAN, |x| x.1 / 1e6);
                nodes.rows.push(vec![
                    rank.clone(),
                    Cell::Text(format!("I/O controller {name}")),
                    Cell::Text("I/O controller link to memory (busier direction)".into()),
                    Cell::Num(cap, 1),
                    Cell::Num(util * 100.0, 1),
                ]);
            }
        }
        nodes.rows.push(vec![
            rank.clone(),
            Cell::Text("cpus".into()),
            Cell::Text(format!("mean over the partition's {} CPUs", p.cpus)),
            Cell::Num(f64::NAN, 1),
            Cell::Num(r.cpu_util * 100.0, 1),
        ]);
        for cpu in &r.cpu_list {
            if cpu.util <= 0.0 {
                continue;
            }
            nodes.rows.push(vec![
                rank.clone(),
                Cell::Text(format!("CPU {}", cpu.cpu)),
                Cell::Text(format!("CPU: {}", cpu.work)),
                Cell::Num(f64::NAN, 1),
                Cell::Num(cpu.util * 100.0, 1),
            ]);
        }
        for f in &r.functions {
            if f.card_cpu_util > 0.0 {
                nodes.rows.push(vec![
                    rank.clone(),
                    Cell::Text(format!("processor of {}", f.label)),
                    Cell::Text("on-card processor".into()),
                    Cell::Num(f64::NAN, 1),
                    Cell::Num(f.card_cpu_util * 100.0, 1),
                ]);
            }
            if f.ceiling.0 > 0.0 {
                nodes.rows.push(vec![
                    rank.clone(),
                    Cell::Text(format!("link {}", f.label)),
                    Cell::Text("link (busier direction)".into()),
                    Cell::Num(f.ceiling.mb_s(), 1),
                    Cell::Num(f.wire_out_util.max(f.wire_in_util) * 100.0, 1),
                ]);
            }
        }
    }
    let mut losers = Section::new(
        "losers",
        &[
            "rank",
            "placement",
            &f_obj,
            &format!("behind_best_{u}"),
            "worst_card",
            "worst_card_busiest",
            "verdict",
            "bottleneck",
        ],
    );
    let best = p.ranked.first().map(|c| objective_value(obj, &c.score));
    // The run of placements that tie the best.
    let tie_run = p.ranked.iter().take_while(|c| c.tied_with_next).count() + 1;
    // The last three (never the best).
    let from = n.saturating_sub(3).max(1);
    for (i, c) in p.ranked.iter().enumerate().skip(from) {
        let v = objective_value(obj, &c.score);
        let wi = worst_card(c, &p.demand, &req.cards);
        let worst = req.cards.get(wi).map_or(String::new(), |x| x.label.clone());
        losers.rows.push(vec![
            Cell::Int(i as u64 + 1),
            Cell::Text(c.label.clone()),
            Cell::Num(v, 2),
            Cell::Num(best.map_or(f64::NAN, |b| b - v), 2),
            Cell::Text(worst.clone()),
            Cell::Text(
                c.result
                    .as_ref()
                    .map_or(String::new(), |r| card_limit(r, &worst)),
            ),
            Cell::Text(if i < tie_run {
                format!(
                    "ties the best within {TIE_PCT}%: not a loser, ranked below it by spread, headroom, objective and name"
                )
            } else {
                match best {
                    Some(b) if b != 0.0 => format!(
                        "loses {:.2}{} ({:.1}% of the best)",
                        b - v,
                        if u == "pct" { " points" } else { " MB/s" },
                        (b - v) / b.abs() * 100.0
                    ),
                    _ => "loses".to_string(),
                }
            }),
            Cell::Text(
                c.result
                    .as_ref()
                    .map_or(String::new(), |r| r.bottleneck.clone()),
            ),
        ]);
    }
    let mut demand = Section::new(
        "demand",
        &["card", "adapter", "port", "best_slot", "demand_MB_s"],
    );
    for (ci, card) in req.cards.iter().enumerate() {
        demand.rows.push(vec![
            Cell::Text(card.label.clone()),
            Cell::Text(card.adapter.clone()),
            Cell::Text("(card)".into()),
            Cell::Text(if card.standby {
                "(standby: no load)".to_string()
            } else {
                p.demand[ci].1.clone()
            }),
            Cell::Num(p.demand[ci].0 / 1e6, 2),
        ]);
        for (port, d) in &p.port_demand[ci] {
            demand.rows.push(vec![
                Cell::Text(card.label.clone()),
                Cell::Text(card.adapter.clone()),
                Cell::Text(port.clone()),
                Cell::Text(p.demand[ci].1.clone()),
                Cell::Num(d / 1e6, 2),
            ]);
        }
    }
    vec![placements, adapters, nodes, losers, demand]
}
