//! Placement request files (`iosim place REQUEST.toml`): a server and
//! partition, cards with the workloads they carry (the scenario's
//! `[[experiment.workload]]` keys, checked by the scenario loader's own
//! code), constraints and an objective, resolved against the registry.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::input::{known, read, Source};
use super::params::{check_name, whole_number};
use super::raw::{RawRun, RawWorkload, Shape, RUN, WORKLOAD};
use super::scenario::{card_error, run_spec, workload};
use crate::error::{Error, Errors, Location, Result};
use crate::model::{
    fit_card, fit_link, negotiate_mode, Apart, CardProblem, CardRequest, Domain, Objective,
    PlaceCard, PlaceRequest, Registry, RunSpec, ServerSpec, Workload,
};
use crate::units::readable;

use Shape::{Any, Table, Tables};

/// The keys of a request file.
const PLACE: Shape = Table(&[
    (
        "place",
        Table(&[
            ("name", Any),
            ("title", Any),
            ("server", Any),
            ("testbed", Any),
            ("cells", Any),
            ("cpus_per_cell", Any),
            ("objective", Any),
            ("min_mb_s", Any),
            ("taken", Any),
        ]),
    ),
    ("run", RUN),
    (
        "card",
        Tables(&Table(&[
            ("name", Any),
            ("adapter", Any),
            ("count", Any),
            ("slot", Any),
            ("link", Any),
            ("role", Any),
        ])),
    ),
    ("workload", Tables(&WORKLOAD)),
    ("apart", Tables(&Table(&[("cards", Any), ("under", Any)]))),
    ("chassis", Tables(&Table(&[("name", Any), ("slots", Any)]))),
]);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHead {
    name: Option<Spanned<String>>,
    #[serde(default)]
    #[allow(dead_code)]
    title: String,
    server: Spanned<String>,
    testbed: Spanned<String>,
    cells: Spanned<f64>,
    cpus_per_cell: Option<Spanned<f64>>,
    objective: Option<Spanned<String>>,
    min_mb_s: Option<Spanned<f64>>,
    #[serde(default)]
    taken: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlaceCard {
    name: Option<Spanned<String>>,
    adapter: Spanned<String>,
    count: Option<Spanned<f64>>,
    slot: Option<Spanned<String>>,
    link: Option<Spanned<String>>,
    role: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawApart {
    cards: Spanned<Vec<Spanned<String>>>,
    under: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChassis {
    name: Spanned<String>,
    slots: Spanned<Vec<Spanned<String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlace {
    place: RawHead,
    run: Option<RawRun>,
    card: Spanned<Vec<RawPlaceCard>>,
    #[serde(default)]
    workload: Vec<RawWorkload>,
    #[serde(default)]
    apart: Vec<RawApart>,
    #[serde(default)]
    chassis: Vec<RawChassis>,
}

/// Loads a request file from any path.
pub fn load_place_request(path: &Path, reg: &Registry) -> Result<PlaceRequest> {
    let text = read(path)?;
    parse_place_request(path.to_path_buf(), &text, reg)
}

/// `*` matches any run of characters (the whole name must match).
fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(tail) = name.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len()).any(|i| tail.is_char_boundary(i) && glob(rest, &tail[i..]))
        }
    }
}

/// Parses and resolves a request's text; `file` is used in messages. Every
/// error of the file is reported (up to [`crate::error::MAX_ERRORS`]).
pub fn parse_place_request(file: PathBuf, text: &str, reg: &Registry) -> Result<PlaceRequest> {
    let src = Source::new(file.clone(), text);
    let raw: RawPlace = src.parse(&PLACE)?;
    let mut errs = Errors::default();
    let h = &raw.place;
    let name = match &h.name {
        Some(n) => errs.take(check_name(&src, "place.name", n)),
        None => Some(
            file.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "request".into()),
        ),
    };
    let server: Option<&ServerSpec> = reg.servers.get(h.server.get_ref());
    if server.is_none() {
        errs.push(Error::Unknown {
            at: src.at("place.server", h.server.span()),
            what: "server",
            name: h.server.get_ref().clone(),
            known: known(reg.servers.keys()).into(),
        });
    }
    if !reg.testbeds.contains_key(h.testbed.get_ref()) {
        errs.push(Error::Unknown {
            at: src.at("place.testbed", h.testbed.span()),
            what: "testbed",
            name: h.testbed.get_ref().clone(),
            known: known(reg.testbeds.keys()).into(),
        });
    }
    let run = match &raw.run {
        Some(r) => run_spec(&src, r, &mut errs),
        None => RunSpec {
            duration_ms: 40.0,
            warmup_ms: 10.0,
            ..RunSpec::default()
        },
    };
    // The partition.
    let cells = errs.take(whole_number(&src, "place.cells", &h.cells, "cells"));
    let mut cpus_per_cell = None;
    if let Some(server) = server {
        let sp = errs.take(crate::model::schema::ServerParams::from_set(
            &server.params,
            &server.at,
        ));
        if let (Some(c), Some(sp)) = (cells, &sp) {
            if c < 1.0 || c > sp.cells_max {
                errs.push(src.invalid(
                    "place.cells",
                    h.cells.span(),
                    format!(
                        "{} cells; server `{}` takes 1 to {}",
                        readable(c),
                        server.name,
                        readable(sp.cells_max)
                    ),
                ));
            }
        }
        if let Some(v) = &h.cpus_per_cell {
            if let Some(n) = errs.take(whole_number(&src, "place.cpus_per_cell", v, "CPUs")) {
                let path = format!("server.{}.cpus_per_cell", server.name);
                let (lo, hi) = reg.range_of(&path).unwrap_or((1.0, 4096.0));
                if n < lo.max(1.0) || n > hi {
                    errs.push(src.invalid(
                        "place.cpus_per_cell",
                        v.span(),
                        format!(
                            "{} CPUs per cell; expected {} to {}",
                            readable(n),
                            readable(lo.max(1.0)),
                            readable(hi)
                        ),
                    ));
                } else {
                    cpus_per_cell = Some(n as u32);
                }
            }
        }
    }
    // The objective.
    let objective_at = match &h.objective {
        Some(o) => src.at("place.objective", o.span()),
        None => Location {
            file: file.clone(),
            key: "place".into(),
            line: 1,
            column: 0,
        },
    };
    let objective = match h.objective.as_ref().map(|o| o.get_ref().as_str()) {
        None | Some("total") => Some(Objective::Total),
        Some("worst-share") => Some(Objective::WorstShare),
        Some("min-each") => match &h.min_mb_s {
            None => {
                errs.push(Error::Invalid {
                    at: objective_at.clone(),
                    message: "objective `min-each` needs `min_mb_s`, the throughput (MB/s = 10^6 bytes/s) every card must reach".into(),
                });
                None
            }
            Some(m) if !(m.get_ref().is_finite() && *m.get_ref() > 0.0 && *m.get_ref() <= 1e6) => {
                errs.push(src.invalid(
                    "place.min_mb_s",
                    m.span(),
                    format!(
                        "{} MB/s: expected more than 0, at most 1e6",
                        readable(*m.get_ref())
                    ),
                ));
                None
            }
            Some(m) => Some(Objective::MinEach(m.get_ref() * 1e6)),
        },
        Some(other) => {
            errs.push(Error::Invalid {
                at: objective_at.clone(),
                message: format!(
                    "unknown objective `{other}`; expected total, worst-share or min-each"
                ),
            });
            None
        }
    };
    if let (Some(m), false) = (
        &h.min_mb_s,
        matches!(objective, Some(Objective::MinEach(_))),
    ) {
        if objective.is_some() {
            errs.push(src.invalid(
                "place.min_mb_s",
                m.span(),
                "`min_mb_s` applies only to objective = \"min-each\"",
            ));
        }
    }
    let Some(server) = server else {
        return Err(errs.into_error());
    };
    let slot_names = || {
        server
            .slots
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let unknown_slot = |key: &str, s: &Spanned<String>| Error::Unknown {
        at: src.at(key, s.span()),
        what: "slot",
        name: s.get_ref().clone(),
        known: slot_names().into(),
    };
    // Slots already taken (`*` matches any run of characters).
    let mut taken: Vec<String> = Vec::new();
    for (i, t) in h.taken.iter().enumerate() {
        let key = format!("place.taken[{i}]");
        let hits: Vec<&str> = server
            .slots
            .iter()
            .filter(|s| glob(t.get_ref(), &s.name))
            .map(|s| s.name.as_str())
            .collect();
        if hits.is_empty() {
            errs.push(unknown_slot(&key, t));
        }
        for s in hits {
            if taken.iter().any(|x| x == s) {
                errs.push(src.invalid(&key, t.span(), format!("slot `{s}` is listed twice")));
            } else {
                taken.push(s.to_string());
            }
        }
    }
    // Slots whose I/O the partition does not own (a `per_cell` chassis of
    // a cell beyond it, or an I/O controller of such a cell) are not free.
    let part = cells.unwrap_or(1.0).max(1.0) as u32;
    let unowned: Vec<String> = server
        .slots
        .iter()
        .filter(|s| !server.io_owned_by(s, part) && !taken.contains(&s.name))
        .map(|s| s.name.clone())
        .collect();
    let n_taken = taken.len();
    taken.extend(unowned.iter().cloned());
    // Cards.
    if raw.card.get_ref().is_empty() {
        errs.push(src.invalid(
            "card",
            raw.card.span(),
            "a request needs at least one [[card]]",
        ));
    }
    // (entry name, adapter, "") as the scenario loader's workload check
    // wants them, and the copies of each entry.
    let mut entries: Vec<(String, String, String)> = Vec::new();
    let mut copies: Vec<Vec<usize>> = Vec::new();
    let mut cards: Vec<PlaceCard> = Vec::new();
    let mut entries_ok = true;
    // Per entry, whether its cards are standby.
    let mut standby_entry: Vec<bool> = Vec::new();
    for (j, c) in raw.card.get_ref().iter().enumerate() {
        let ck = |s: &str| format!("card[{j}].{s}");
        let mut ok = true;
        let adapter = reg.adapters.get(c.adapter.get_ref());
        if adapter.is_none() {
            errs.push(Error::Unknown {
                at: src.at(&ck("adapter"), c.adapter.span()),
                what: "adapter",
                name: c.adapter.get_ref().clone(),
                known: known(reg.adapters.keys()).into(),
            });
            ok = false;
        }
        let label = match &c.name {
            Some(n) => errs.take(check_name(&src, &ck("name"), n)),
            None => Some(c.adapter.get_ref().clone()),
        };
        let count = match &c.count {
            None => Some(1u32),
            Some(v) => match errs.take(whole_number(&src, &ck("count"), v, "cards")) {
                Some(n) if (1.0..=256.0).contains(&n) => Some(n as u32),
                Some(n) => {
                    errs.push(src.invalid(
                        &ck("count"),
                        v.span(),
                        format!("{} cards; expected 1 to 256", readable(n)),
                    ));
                    None
                }
                None => None,
            },
        };
        let mut fixed = None;
        if let (Some(s), Some(adapter)) = (&c.slot, adapter) {
            let earlier: Vec<&str> = cards.iter().filter_map(|x| x.fixed.as_deref()).collect();
            let request = CardRequest {
                adapter: &adapter.name,
                slot: s.get_ref(),
                link: None,
                cells: Some(part),
            };
            let problems = fit_card(reg, server, request, &earlier)
                .err()
                .unwrap_or_default();
            let found = |f: fn(&CardProblem) -> bool| problems.iter().find(|p| f(p));
            let invalid = |message: String| src.invalid(&ck("slot"), s.span(), message);
            let err = if found(|p| matches!(p, CardProblem::UnknownSlot(_))).is_some() {
                Some(unknown_slot(&ck("slot"), s))
            } else if count != Some(1) {
                Some(invalid(
                    "a card with a `slot` is one card: give each its own [[card]]".into(),
                ))
            } else if let Some(p) = found(|p| matches!(p, CardProblem::NotOwned(_))) {
                Some(invalid(p.to_string()))
            } else if let Some(why) = not_io_owned(server, s.get_ref(), part) {
                Some(invalid(why))
            } else if taken.contains(s.get_ref()) {
                Some(invalid(format!(
                    "slot `{}` is also listed in place.taken: constraints conflict",
                    s.get_ref()
                )))
            } else if found(|p| matches!(p, CardProblem::SlotTaken(_))).is_some() {
                Some(invalid(format!(
                    "slot `{}` already holds a card",
                    s.get_ref()
                )))
            } else {
                problems.first().map(|p| invalid(p.to_string()))
            };
            match err {
                Some(e) => {
                    errs.push(e);
                    ok = false;
                }
                None => fixed = Some(s.get_ref().clone()),
            }
        }
        let link = match (&c.link, adapter) {
            (Some(l), Some(adapter)) => match fit_link(reg, adapter, l.get_ref()) {
                Ok(spec) => Some(spec.name.clone()),
                Err(p) => {
                    let spans = [c.adapter.span(), c.adapter.span(), l.span()];
                    let key = format!("card[{j}]");
                    errs.push(card_error(
                        &src,
                        reg,
                        server,
                        &key,
                        spans,
                        &p,
                        p.to_string(),
                    ));
                    ok = false;
                    None
                }
            },
            _ => None,
        };
        let standby = match &c.role {
            None => false,
            Some(r) if r.get_ref() == "active" => false,
            Some(r) if r.get_ref() == "standby" => true,
            Some(r) => {
                errs.push(src.invalid(
                    &ck("role"),
                    r.span(),
                    format!(
                        "unknown role `{}`; expected active (carries its workloads) or standby (holds a slot, no load)",
                        r.get_ref()
                    ),
                ));
                ok = false;
                false
            }
        };
        let (Some(label), Some(count), Some(adapter), true) = (label, count, adapter, ok) else {
            entries_ok = false;
            continue;
        };
        if entries.iter().any(|(l, _, _)| *l == label) {
            let span = c.name.as_ref().map_or(c.adapter.span(), |n| n.span());
            errs.push(src.invalid(
                &ck("name"),
                span,
                format!("two cards are called `{label}`: give each a `name`"),
            ));
            entries_ok = false;
            continue;
        }
        let at = src.at(&ck("adapter"), c.adapter.span());
        // An adapter that fits no slot left free.
        if fixed.is_none()
            && !server
                .slots
                .iter()
                .any(|s| !taken.contains(&s.name) && negotiate_mode(adapter, s).is_some())
        {
            errs.push(Error::Invalid {
                at: at.clone(),
                message: format!(
                    "adapter `{}` (modes {}) fits no free slot of server `{}` (slots and modes: {})",
                    adapter.name,
                    adapter.modes.join(", "),
                    server.name,
                    server
                        .slots
                        .iter()
                        .filter(|s| !taken.contains(&s.name))
                        .map(|s| format!("{} {}", s.name, s.modes.join("/")))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
            entries_ok = false;
            continue;
        }
        let mut mine = Vec::new();
        for k in 0..count {
            mine.push(cards.len());
            cards.push(PlaceCard {
                label: if count == 1 {
                    label.clone()
                } else {
                    format!("{label}-{}", k + 1)
                },
                entry: label.clone(),
                adapter: adapter.name.clone(),
                link: link.clone(),
                fixed: fixed.clone(),
                standby,
                at: at.clone(),
            });
        }
        entries.push((label, adapter.name.clone(), String::new()));
        copies.push(mine);
        standby_entry.push(standby);
    }
    // More cards than free slots.
    let free = server
        .slots
        .iter()
        .filter(|s| {
            !taken.contains(&s.name) && !cards.iter().any(|c| c.fixed.as_ref() == Some(&s.name))
        })
        .count();
    let to_place = cards.iter().filter(|c| c.fixed.is_none()).count();
    if entries_ok && to_place > free {
        errs.push(src.invalid(
            "card",
            raw.card.span(),
            format!(
                "{} to place but server `{}` has only {} ({}, {} taken, {}{} held by cards with a `slot`)",
                crate::units::count_text(to_place, "card", "cards"),
                server.name,
                crate::units::count_text(free, "free slot", "free slots"),
                crate::units::count_text(server.slots.len(), "slot", "slots"),
                n_taken,
                if unowned.is_empty() {
                    String::new()
                } else {
                    format!(
                        "{} under I/O a partition of {part} cell(s) does not own, ",
                        unowned.len()
                    )
                },
                server.slots.len() - taken.len() - free
            ),
        ));
    }
    // Workloads, checked by the scenario loader against the card entries,
    // then given to every copy.
    let mut workloads: Vec<Workload> = Vec::new();
    if entries_ok {
        let mut per_entry: Vec<Workload> = Vec::new();
        // Cards given a workload that failed (its own error said why):
        // not also "carries no workload".
        let mut tried = vec![false; entries.len()];
        for (j, w) in raw.workload.iter().enumerate() {
            let key = format!("workload[{j}]");
            let x = workload(&src, reg, &entries, &key, w, &per_entry);
            if x.is_err() {
                if let Some(e) = entries.iter().position(|(l, _, _)| l == w.card.get_ref()) {
                    tried[e] = true;
                }
            }
            if let Some(x) = errs.take(x) {
                if standby_entry[x.card] {
                    errs.push(src.invalid(
                        &format!("{key}.card"),
                        w.card.span(),
                        format!(
                            "card `{}` is a standby card (role = \"standby\"): it holds a slot and carries no load; remove this [[workload]] or make the card active",
                            entries[x.card].0
                        ),
                    ));
                } else {
                    per_entry.push(x);
                }
            }
        }
        for (e, (label, _, _)) in entries.iter().enumerate() {
            if !standby_entry[e] && !tried[e] && !per_entry.iter().any(|w| w.card == e) {
                let at = &cards[copies[e][0]].at;
                errs.push(Error::Invalid {
                    at: at.clone(),
                    message: format!(
                        "card `{label}` carries no workload: give it a [[workload]] (its demand would be zero), or `role = \"standby\"` for a card that only holds a slot"
                    ),
                });
            }
        }
        for w in &per_entry {
            for &c in &copies[w.card] {
                let mut x = w.clone();
                x.card = c;
                workloads.push(x);
            }
        }
        workloads.sort_by_key(|w| (w.card, w.function));
    }
    // Chassis.
    let mut chassis: Vec<(String, Vec<String>)> = Vec::new();
    for (i, ch) in raw.chassis.iter().enumerate() {
        let key = format!("chassis[{i}]");
        let Some(n) = errs.take(check_name(&src, &format!("{key}.name"), &ch.name)) else {
            continue;
        };
        if chassis.iter().any(|(x, _)| *x == n) {
            errs.push(src.invalid(
                &format!("{key}.name"),
                ch.name.span(),
                format!("chassis `{n}` is defined twice"),
            ));
            continue;
        }
        let mut slots = Vec::new();
        for (k, p) in ch.slots.get_ref().iter().enumerate() {
            let pk = format!("{key}.slots[{k}]");
            let hits: Vec<&str> = server
                .slots
                .iter()
                .filter(|s| glob(p.get_ref(), &s.name))
                .map(|s| s.name.as_str())
                .collect();
            if hits.is_empty() {
                errs.push(src.invalid(
                    &pk,
                    p.span(),
                    format!(
                        "`{}` matches no slot of server `{}` (`*` matches any run of characters; slots: {})",
                        p.get_ref(),
                        server.name,
                        slot_names()
                    ),
                ));
            }
            for s in hits {
                if let Some((other, _)) = chassis.iter().find(|(_, v)| v.iter().any(|x| x == s)) {
                    errs.push(src.invalid(
                        &pk,
                        p.span(),
                        format!("slot `{s}` is already in chassis `{other}`"),
                    ));
                } else if !slots.iter().any(|x| x == s) {
                    slots.push(s.to_string());
                }
            }
        }
        chassis.push((n, slots));
    }
    // Without [[chassis]], a server declaring `[[chassis]]` copies gives
    // its own: `chassisK`, the slots of copy K.
    if raw.chassis.is_empty() {
        for s in &server.slots {
            if let Some(k) = s.chassis {
                let n = format!("chassis{k}");
                match chassis.iter_mut().find(|(x, _)| *x == n) {
                    Some((_, v)) => v.push(s.name.clone()),
                    None => chassis.push((n, vec![s.name.clone()])),
                }
            }
        }
    }
    // Failover groups.
    let mut apart: Vec<Apart> = Vec::new();
    for (i, a) in raw.apart.iter().enumerate() {
        let key = format!("apart[{i}]");
        let domain = match a.under.get_ref().as_str() {
            "bus" => Some(Domain::Bus),
            "controller" => Some(Domain::Controller),
            "chassis" => Some(Domain::Chassis),
            other => {
                errs.push(src.invalid(
                    &format!("{key}.under"),
                    a.under.span(),
                    format!("unknown domain `{other}`; expected bus, controller or chassis"),
                ));
                None
            }
        };
        let mut members: Vec<usize> = Vec::new();
        for (k, n) in a.cards.get_ref().iter().enumerate() {
            let hit: Vec<usize> = match entries.iter().position(|(l, _, _)| l == n.get_ref()) {
                Some(e) => copies[e].clone(),
                None => cards
                    .iter()
                    .position(|c| &c.label == n.get_ref())
                    .into_iter()
                    .collect(),
            };
            if hit.is_empty() && entries_ok {
                errs.push(Error::Unknown {
                    at: src.at(&format!("{key}.cards[{k}]"), n.span()),
                    what: "card",
                    name: n.get_ref().clone(),
                    known: cards
                        .iter()
                        .map(|c| c.label.as_str())
                        .chain(entries.iter().map(|e| e.0.as_str()))
                        .collect::<Vec<_>>()
                        .join(", ")
                        .into(),
                });
            }
            for c in hit {
                if !members.contains(&c) {
                    members.push(c);
                }
            }
        }
        let at = src.at(&format!("{key}.cards"), a.cards.span());
        if members.len() < 2 && entries_ok {
            errs.push(Error::Invalid {
                at: at.clone(),
                message: "a failover group names at least two cards (a card entry with a `count` names all its copies)".into(),
            });
            continue;
        }
        if let Some(domain) = domain {
            apart.push(Apart {
                cards: members,
                domain,
                at,
            });
        }
    }
    let (Some(name), Some(cells), Some(objective), true) =
        (name, cells, objective, errs.is_empty())
    else {
        return Err(errs.into_error());
    };
    Ok(PlaceRequest {
        name,
        file,
        server: server.name.clone(),
        testbed: h.testbed.get_ref().clone(),
        cells: cells as u32,
        cpus_per_cell,
        run,
        cards,
        workloads,
        taken,
        apart,
        chassis,
        objective,
        objective_at,
    })
}

/// Why a partition of `cells` cells may not place a card in `slot`: its
/// I/O controller belongs to a cell beyond the partition.
fn not_io_owned(server: &ServerSpec, slot: &str, cells: u32) -> Option<String> {
    let s = server.slots.iter().find(|s| s.name == slot)?;
    if server.io_owned_by(s, cells) {
        return None;
    }
    let c = &server.io_controllers[s.controller?];
    Some(format!(
        "slot `{slot}` hangs from I/O controller `{}` of cell {} of server `{}`; a partition of {cells} cell(s) (cells 0 to {}) owns only its own cells' I/O",
        c.name,
        c.cell.unwrap_or(0),
        server.name,
        cells - 1
    ))
}

/// A simple request from the command line (`iosim place --server rx6600
/// --testbed hp-2004-lab --card fc=a9782a*2 --workload fc.fc=diskbench:read`):
/// written as a request file's text and read as one, so the checks and
/// messages are the file's (the file is called `<command line>`). Cards are
/// `NAME=ADAPTER` or `NAME=ADAPTER*COUNT`; workloads `CARD.FUNCTION=KIND:DIRECTION`
/// with the workload's default sizes. A malformed one is a usage error.
#[allow(clippy::too_many_arguments)]
pub fn place_request_from_args(
    reg: &Registry,
    server: &str,
    testbed: &str,
    cells: u32,
    objective: &str,
    min_mb_s: Option<f64>,
    cards: &[String],
    workloads: &[String],
) -> Result<PlaceRequest> {
    let word = |flag: &str, s: &str| -> Result<String> {
        let ok = !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if ok {
            Ok(s.to_string())
        } else {
            Err(Error::Usage(format!(
                "{flag}: `{s}` is not a name (letters, digits, `-`, `_` and `.`)"
            )))
        }
    };
    // The request's text, and for each of its lines the flag it says.
    let mut text = String::new();
    let mut flags: Vec<String> = Vec::new();
    let mut add = |lines: String, flag: String| {
        flags.extend(lines.lines().map(|_| flag.clone()));
        text += &lines;
    };
    add(
        format!("[place]\nserver = \"{}\"\n", word("--server", server)?),
        format!("--server {server}"),
    );
    add(
        format!("testbed = \"{}\"\n", word("--testbed", testbed)?),
        format!("--testbed {testbed}"),
    );
    add(format!("cells = {cells}\n"), format!("--cells {cells}"));
    add(
        format!("objective = \"{}\"\n", word("--objective", objective)?),
        format!("--objective {objective}"),
    );
    if let Some(m) = min_mb_s {
        add(format!("min_mb_s = {m:?}\n"), format!("--min-mb-s {m}"));
    }
    for c in cards {
        let bad = || {
            Error::Usage(format!(
                "--card {c}: expected NAME=ADAPTER or NAME=ADAPTER*COUNT"
            ))
        };
        let (name, rest) = c.split_once('=').ok_or_else(bad)?;
        let (adapter, count) = match rest.split_once('*') {
            Some((a, n)) => (a, n.trim().parse::<u32>().map_err(|_| bad())?),
            None => (rest, 1),
        };
        add(
            format!(
                "\n[[card]]\nname = \"{}\"\nadapter = \"{}\"\ncount = {count}\n",
                word("--card", name.trim())?,
                word("--card", adapter.trim())?
            ),
            format!("--card {c}"),
        );
    }
    for w in workloads {
        let bad = || {
            Error::Usage(format!(
                "--workload {w}: expected CARD.FUNCTION=KIND:DIRECTION, e.g. fc.fc=diskbench:read"
            ))
        };
        let (at, what) = w.split_once('=').ok_or_else(bad)?;
        let (card, function) = at.rsplit_once('.').ok_or_else(bad)?;
        let (kind, direction) = what.split_once(':').ok_or_else(bad)?;
        add(
            format!(
                "\n[[workload]]\ncard = \"{}\"\nfunction = \"{}\"\nkind = \"{}\"\ndirection = \"{}\"\n",
                word("--workload", card.trim())?,
                word("--workload", function.trim())?,
                word("--workload", kind.trim())?,
                word("--workload", direction.trim())?
            ),
            format!("--workload {w}"),
        );
    }
    parse_place_request(PathBuf::from("<command line>"), &text, reg).map_err(|e| by_flag(e, &flags))
}

/// Error `e` of a request written from flags, each single error located by
/// the flag that wrote its line (`flags[line - 1]`) instead of a line of a
/// file the user never saw: `--card fc=ab379x: unknown adapter ...`.
fn by_flag(e: Error, flags: &[String]) -> Error {
    let relocate = |at: &mut Location| {
        let flag = at
            .line
            .checked_sub(1)
            .and_then(|i| flags.get(i))
            .map_or("the command line", String::as_str);
        *at = Location {
            file: PathBuf::from(flag),
            key: String::new(),
            line: 0,
            column: 0,
        };
    };
    let one = |mut e: Error| {
        match &mut e {
            Error::Syntax { at, .. } | Error::Invalid { at, .. } | Error::Unknown { at, .. } => {
                relocate(at)
            }
            _ => {}
        }
        e
    };
    match e {
        Error::Many { errors, omitted } => Error::Many {
            errors: errors.into_iter().map(one).collect(),
            omitted,
        },
        e => one(e),
    }
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs() {
        assert!(glob("seu-*", "seu-12"));
        assert!(glob("*", "x"));
        assert!(glob("a*b*c", "a-b-c"));
        assert!(!glob("seu-*", "internal-1"));
        assert!(glob("slot-3", "slot-3"));
        assert!(!glob("slot-3", "slot-30"));
    }
}
