//! Scenario files: experiments resolved against the model registry.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::input::{bundled_files, known, read, Source};
use super::params::check_name;
use super::params::whole_number;
use super::raw::{RawExperiment, RawFigure, RawScenario, RawWorkload, SCENARIO};
use crate::error::{Error, Errors, Location, Result};
use crate::model::{
    fit_card, fit_segments, usual_direction, CardFit, CardKey, CardProblem, CardRequest, Direction,
    Experiment, FigureScope, FigureSpec, Registry, RunSpec, Scenario, ServerSpec, Shape, Workload,
    WorkloadArgs,
};
use crate::units::readable;

/// Loads a scenario file from any path.
pub fn load_scenario(path: &Path, reg: &Registry) -> Result<Scenario> {
    let text = read(path)?;
    parse_scenario(path.to_path_buf(), &text, reg)
}

/// Loads every bundled scenario, in path order. A figure id given in two
/// scenarios is an error: each published figure is compared once.
pub fn load_bundled_scenarios(reg: &Registry) -> Result<Vec<Scenario>> {
    let scenarios = bundled_files("scenarios/")
        .into_iter()
        .map(|(p, text)| parse_scenario(PathBuf::from(format!("<bundled>/{p}")), text, reg))
        .collect::<Result<Vec<_>>>()?;
    check_figures_once(&scenarios)?;
    Ok(scenarios)
}

/// Each published figure id appears once among `scenarios`: a figure given
/// twice would count twice in every error summary and in the fit.
pub fn check_figures_once(scenarios: &[Scenario]) -> Result<()> {
    let mut errs = Errors::default();
    let mut first: HashMap<&str, &Location> = HashMap::new();
    for f in scenarios
        .iter()
        .flat_map(|sc| &sc.experiments)
        .flat_map(|e| &e.figures)
    {
        if let Some(at) = first.insert(&f.id, &f.at) {
            errs.push(Error::Invalid {
                at: f.at.clone(),
                message: format!(
                    "figure `{}` is also given at {}:{}; each figure is compared once",
                    f.id,
                    at.file.display(),
                    at.line
                ),
            });
        }
    }
    errs.finish(())
}

/// Parses and resolves a scenario's text; `file` is used in messages.
/// Every error of the file is reported (up to [`crate::error::MAX_ERRORS`]),
/// in file order.
pub fn parse_scenario(file: PathBuf, text: &str, reg: &Registry) -> Result<Scenario> {
    let src = Source::new(file.clone(), text);
    let raw: RawScenario = src.parse(&SCENARIO)?;
    let mut errs = Errors::default();
    let name = errs.take(check_name(&src, "scenario.name", &raw.scenario.name));
    let run = match &raw.run {
        Some(r) => run_spec(&src, r, &mut errs),
        None => RunSpec::default(),
    };
    if raw.experiment.get_ref().is_empty() {
        errs.push(src.invalid(
            "experiment",
            raw.experiment.span(),
            "a scenario needs at least one [[experiment]]",
        ));
    }
    let mut experiments: Vec<Experiment> = Vec::new();
    // Each figure is compared once: an id given twice would count twice.
    let mut figure_ids: HashMap<String, usize> = Default::default();
    let mut ids: HashMap<String, usize> = Default::default();
    for (i, e) in raw.experiment.get_ref().iter().enumerate() {
        let key = format!("experiment[{i}].id");
        if let Some(first) = ids.insert(e.id.get_ref().clone(), src.at(&key, e.id.span()).line) {
            errs.push(src.invalid(
                &key,
                e.id.span(),
                format!(
                    "experiment `{}` is defined twice (first at line {first})",
                    e.id.get_ref()
                ),
            ));
        }
        for (j, f) in e.figure.iter().enumerate() {
            let key = format!("experiment[{i}].figure[{j}].id");
            let at = src.at(&key, f.id.span());
            if let Some(first) = figure_ids.insert(f.id.get_ref().clone(), at.line) {
                errs.push(src.invalid(
                    &key,
                    f.id.span(),
                    format!(
                        "figure `{}` is given twice (first at line {first}); each figure is compared once",
                        f.id.get_ref()
                    ),
                ));
            }
        }
        if let Some(exp) = errs.take(experiment(&src, reg, i, e)) {
            experiments.push(exp);
        }
    }
    let (Some(name), true) = (name, errs.is_empty()) else {
        return Err(sorted(errs));
    };
    Ok(Scenario {
        name,
        title: raw.scenario.title,
        source: raw.scenario.source,
        fit: raw.scenario.fit.unwrap_or(true),
        file,
        run,
        experiments,
    })
}

/// The errors kept, in file order (by line, then column).
fn sorted(errs: Errors) -> Error {
    match errs.into_error() {
        Error::Many {
            mut errors,
            omitted,
        } => {
            errors.sort_by_key(|e| match e {
                Error::Invalid { at, .. }
                | Error::Unknown { at, .. }
                | Error::Syntax { at, .. } => (at.line, at.column),
                _ => (0, 0),
            });
            Error::Many { errors, omitted }
        }
        e => e,
    }
}

/// The `[run]` table; its errors are kept in `errs`.
pub(super) fn run_spec(src: &Source, r: &super::raw::RawRun, errs: &mut Errors) -> RunSpec {
    let mut run = RunSpec::default();
    let mut set = |key: &str, v: &Option<Spanned<f64>>, min: f64, max: f64, to: &mut f64| {
        if let Some(v) = v {
            if let Some(x) = errs.take(positive(src, key, v, min, max)) {
                *to = x;
            }
        }
    };
    set(
        "run.duration_ms",
        &r.duration_ms,
        0.01,
        100_000.0,
        &mut run.duration_ms,
    );
    set(
        "run.warmup_ms",
        &r.warmup_ms,
        0.0,
        100_000.0,
        &mut run.warmup_ms,
    );
    set("run.min_ms", &r.min_ms, 0.01, 100_000.0, &mut run.min_ms);
    set(
        "run.batch_ms",
        &r.batch_ms,
        0.01,
        100_000.0,
        &mut run.batch_ms,
    );
    if let Some(p) = &r.precision_pct {
        run.precision_pct = errs.take(positive(src, "run.precision_pct", p, 0.01, 50.0));
    }
    if let Some(m) = &r.max_events {
        let v = errs.take(
            whole_number(src, "run.max_events", m, "events").and_then(|v| {
                if (1000.0..=1e10).contains(&v) {
                    Ok(v as u64)
                } else {
                    Err(src.invalid(
                        "run.max_events",
                        m.span(),
                        format!("{} is outside 1000 to 1e10", readable(v)),
                    ))
                }
            }),
        );
        if let Some(v) = v {
            run.max_events = v;
        }
    }
    for (key, v, ok) in [
        ("run.min_ms", &r.min_ms, run.min_ms <= run.duration_ms),
        ("run.batch_ms", &r.batch_ms, run.batch_ms <= run.duration_ms),
    ] {
        if let (Some(v), false) = (v, ok) {
            errs.push(src.invalid(
                key,
                v.span(),
                format!(
                    "{} ms is longer than run.duration_ms ({} ms)",
                    readable(*v.get_ref()),
                    readable(run.duration_ms)
                ),
            ));
        }
    }
    run
}

fn positive(src: &Source, key: &str, v: &Spanned<f64>, min: f64, max: f64) -> Result<f64> {
    let x = *v.get_ref();
    if !x.is_finite() || x < min || x > max {
        return Err(src.invalid(
            key,
            v.span(),
            format!("{} is outside {min} to {max}", readable(x)),
        ));
    }
    Ok(x)
}

/// A card of an experiment: its label, adapter and slot.
type Card = (String, String, String);

fn experiment(src: &Source, reg: &Registry, i: usize, e: &RawExperiment) -> Result<Experiment> {
    let k = |s: &str| format!("experiment[{i}].{s}");
    let mut errs = Errors::default();
    let id = errs.take(check_name(src, &k("id"), &e.id));
    let server: Option<&ServerSpec> = reg.servers.get(e.server.get_ref());
    if server.is_none() {
        errs.push(Error::Unknown {
            at: src.at(&k("server"), e.server.span()),
            what: "server",
            name: e.server.get_ref().clone(),
            known: known(reg.servers.keys()).into(),
        });
    }
    if !reg.testbeds.contains_key(e.testbed.get_ref()) {
        errs.push(Error::Unknown {
            at: src.at(&k("testbed"), e.testbed.span()),
            what: "testbed",
            name: e.testbed.get_ref().clone(),
            known: known(reg.testbeds.keys()).into(),
        });
    }
    let cells = errs.take(whole_number(src, &k("cells"), &e.cells, "cells"));
    if let (Some(cells), Some(server)) = (cells, server) {
        let max_cells = crate::model::schema::ServerParams::from_set(&server.params, &server.at)
            .map(|p| p.cells_max);
        if let Some(max_cells) = errs.take(max_cells) {
            if cells < 1.0 || cells > max_cells {
                errs.push(src.invalid(
                    &k("cells"),
                    e.cells.span(),
                    format!(
                        "{} cells; server `{}` takes 1 to {}",
                        readable(cells),
                        server.name,
                        readable(max_cells)
                    ),
                ));
            }
        }
    }
    // CPUs per cell: a whole number within the server's own.
    let mut cpus_per_cell = None;
    if let (Some(v), Some(server)) = (&e.cpus_per_cell, server) {
        let most = crate::model::schema::ServerParams::from_set(&server.params, &server.at)
            .map(|p| p.cpus_per_cell);
        let n = errs.take(whole_number(src, &k("cpus_per_cell"), v, "CPUs"));
        if let (Some(n), Some(most)) = (n, errs.take(most)) {
            if n < 1.0 || n > most {
                errs.push(src.invalid(
                    &k("cpus_per_cell"),
                    v.span(),
                    format!(
                        "{} CPUs per cell; server `{}` takes 1 to {} CPUs per cell",
                        readable(n),
                        server.name,
                        readable(most)
                    ),
                ));
            } else {
                cpus_per_cell = Some(n as u32);
            }
        }
    }
    if e.card.get_ref().is_empty() {
        errs.push(src.invalid(
            &k("card"),
            e.card.span(),
            "an experiment needs at least one [[experiment.card]]",
        ));
    }
    let mut cards: Vec<Card> = Vec::new();
    let mut links: Vec<Option<String>> = Vec::new();
    let mut fits = Vec::new();
    let mut cards_ok = server.is_some();
    for (j, c) in e.card.get_ref().iter().enumerate() {
        let Some(server) = server else {
            break;
        };
        let owner = cells.map(|c| (e.id.get_ref().as_str(), c as u32));
        match card(
            src,
            reg,
            server,
            &k(&format!("card[{j}]")),
            c,
            &cards,
            owner,
        ) {
            Ok((c, l, fit)) => {
                cards.push(c);
                links.push(l);
                fits.push(fit);
            }
            Err(err) => {
                errs.push(err);
                cards_ok = false;
            }
        }
    }
    if cards_ok {
        if let Err(why) = fit_segments(&fits) {
            errs.push(src.invalid(&k("id"), e.id.span(), why));
        }
    }
    // Workloads and figures name cards: checked only when every card is known.
    let mut workloads: Vec<Workload> = Vec::new();
    let mut figures: Vec<FigureSpec> = Vec::new();
    if cards_ok {
        for (j, w) in e.workload.iter().enumerate() {
            let key = k(&format!("workload[{j}]"));
            if let Some(w) = errs.take(workload(src, reg, &cards, &key, w, &workloads)) {
                workloads.push(w);
            }
        }
        for (j, f) in e.figure.iter().enumerate() {
            let key = k(&format!("figure[{j}]"));
            let Some(fig) = errs.take(figure(src, reg, &cards, &key, f)) else {
                continue;
            };
            // A figure of a function that runs nothing would be compared
            // with a prediction of zero.
            let runs = workloads.iter().any(|w| match fig.scope {
                FigureScope::Function => w.card == fig.card && w.function == fig.function,
                FigureScope::AllCards => {
                    fn_name(reg, &cards, w.card, w.function)
                        == fn_name(reg, &cards, fig.card, fig.function)
                }
                FigureScope::AllFunctions | FigureScope::Cpu => true,
            });
            let all_known = workloads.len() == e.workload.len();
            if !runs && all_known {
                errs.push(src.invalid(
                    &format!("{key}.function"),
                    f.function.span(),
                    format!(
                        "figure `{}` measures `{}.{}`, which runs no workload in this experiment: its prediction would be zero",
                        fig.id,
                        f.card.get_ref(),
                        f.function.get_ref()
                    ),
                ));
                continue;
            }
            figures.push(fig);
        }
    }
    let (Some(id), Some(server), Some(cells), true) = (id, server, cells, errs.is_empty()) else {
        return Err(errs.into_error());
    };
    let exp = Experiment {
        id,
        server: server.name.clone(),
        testbed: e.testbed.get_ref().clone(),
        cells: cells as u32,
        cpus_per_cell,
        cards,
        links,
        workloads,
        figures,
        at: src.at(&k("id"), e.id.span()),
    };
    // What only the whole experiment shows (a socket too small for the
    // server's ACK rule, FIFOs smaller than the link's frame, a pinned CPU
    // beyond the partition) is found where it is resolved.
    crate::sim::config::Resolved::new(reg, &exp)?;
    Ok(exp)
}

/// One card of an experiment at `key` (`experiment[0].card[1]`), checked
/// against the server and the cards before it.
fn card<'a>(
    src: &Source,
    reg: &'a Registry,
    server: &'a ServerSpec,
    key: &str,
    c: &super::raw::RawCard,
    earlier: &[Card],
    partition: Option<(&str, u32)>,
) -> Result<(Card, Option<String>, CardFit<'a>)> {
    let ck = |s: &str| format!("{key}.{s}");
    let mut errs = Errors::default();
    let request = CardRequest {
        adapter: c.adapter.get_ref(),
        slot: c.slot.get_ref(),
        link: c.link.as_ref().map(|l| l.get_ref().as_str()),
        cells: partition.map(|(_, cells)| cells),
    };
    let earlier_slots: Vec<&str> = earlier.iter().map(|c| c.2.as_str()).collect();
    let fit = fit_card(reg, server, request, &earlier_slots);
    for p in fit.as_ref().err().into_iter().flatten() {
        let message = match p {
            CardProblem::NotOwned(why) => {
                format!("experiment `{}`: {why}", partition.map_or("", |(id, _)| id))
            }
            CardProblem::SlotTaken(_) => {
                format!("slot `{}` already holds a card", c.slot.get_ref())
            }
            p => p.to_string(),
        };
        let link = c.link.as_ref().map_or(c.adapter.span(), |l| l.span());
        let spans = [c.adapter.span(), c.slot.span(), link];
        errs.push(card_error(src, reg, server, key, spans, p, message));
    }
    let adapter = reg.adapters.get(c.adapter.get_ref());
    let label = match (&c.name, adapter) {
        (Some(n), _) => errs.take(check_name(src, &ck("name"), n)),
        (None, Some(a)) => Some(a.name.clone()),
        (None, None) => None,
    };
    if let Some(label) = &label {
        if earlier.iter().any(|(l, _, _)| l == label) {
            let span = c.name.as_ref().map_or(c.adapter.span(), |n| n.span());
            errs.push(src.invalid(
                &ck("name"),
                span,
                format!("two cards are called `{label}`: give each a `name`"),
            ));
        }
    }
    let (Some(label), Ok(fit), true) = (label, fit, errs.is_empty()) else {
        return Err(errs.into_error());
    };
    let card = (label, fit.adapter.name.clone(), fit.slot.name.clone());
    Ok((card, fit.link.map(|l| l.name.clone()), fit))
}

/// The error of card problem `p` at the card's key it is about (`key` is the
/// card's own, `experiment[0].card[1]`; `spans`, where its adapter, slot
/// and link are written): an unknown name lists the known ones; any other
/// problem reads `message`.
pub(super) fn card_error(
    src: &Source,
    reg: &Registry,
    server: &ServerSpec,
    key: &str,
    spans: [std::ops::Range<usize>; 3],
    p: &CardProblem,
    message: String,
) -> Error {
    let [adapter, slot, link] = spans;
    let (field, span) = match p.key() {
        CardKey::Adapter => ("adapter", adapter),
        CardKey::Slot => ("slot", slot),
        CardKey::Link => ("link", link),
    };
    let at = src.at(&format!("{key}.{field}"), span);
    let unknown = |what: &'static str, name: &String, known: String| Error::Unknown {
        at: at.clone(),
        what,
        name: name.clone(),
        known: known.into(),
    };
    match p {
        CardProblem::UnknownAdapter(a) => unknown("adapter", a, known(reg.adapters.keys())),
        CardProblem::UnknownSlot(s) => {
            let names: Vec<&str> = server.slots.iter().map(|s| s.name.as_str()).collect();
            unknown("slot", s, names.join(", "))
        }
        CardProblem::UnknownLink(l) => unknown("link", l, known(reg.links.keys())),
        _ => Error::Invalid { at, message },
    }
}

/// The name of function `fi` of card `ci`.
fn fn_name<'a>(reg: &'a Registry, cards: &[Card], ci: usize, fi: usize) -> Option<&'a str> {
    let c = cards.get(ci)?;
    reg.adapters
        .get(&c.1)?
        .functions
        .get(fi)
        .map(|f| f.name.as_str())
}

/// The card and function indices `card` and `func` name, at `key.card` and
/// `key.function`.
fn find_fn(
    src: &Source,
    reg: &Registry,
    cards: &[Card],
    key: &str,
    card: &Spanned<String>,
    func: &Spanned<String>,
) -> Result<(usize, usize)> {
    let ci = cards
        .iter()
        .position(|(l, _, _)| l == card.get_ref())
        .ok_or_else(|| Error::Unknown {
            at: src.at(&format!("{key}.card"), card.span()),
            what: "card",
            name: card.get_ref().clone(),
            known: cards
                .iter()
                .map(|c| c.0.as_str())
                .collect::<Vec<_>>()
                .join(", ")
                .into(),
        })?;
    let adapter = reg
        .adapters
        .get(&cards[ci].1)
        .ok_or_else(|| Error::Internal(format!("card `{}` lost its adapter", cards[ci].0)))?;
    let fi = adapter
        .functions
        .iter()
        .position(|f| &f.name == func.get_ref())
        .ok_or_else(|| Error::Unknown {
            at: src.at(&format!("{key}.function"), func.span()),
            what: "function",
            name: func.get_ref().clone(),
            known: adapter
                .functions
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
                .into(),
        })?;
    Ok((ci, fi))
}

/// One workload at `key` (`experiment[0].workload[1]`), checked against the
/// cards and the workloads before it.
pub(super) fn workload(
    src: &Source,
    reg: &Registry,
    cards: &[Card],
    key: &str,
    w: &RawWorkload,
    earlier: &[Workload],
) -> Result<Workload> {
    let wk = |s: &str| format!("{key}.{s}");
    let mut errs = Errors::default();
    let place = errs.take(find_fn(src, reg, cards, key, &w.card, &w.function));
    let mut engine = None;
    if let Some((card, function)) = place {
        if earlier
            .iter()
            .any(|x| x.card == card && x.function == function)
        {
            errs.push(src.invalid(
                &wk("function"),
                w.function.span(),
                "this function already has a workload: use direction = \"bidirectional\"",
            ));
        }
        engine = reg
            .adapters
            .get(&cards[card].1)
            .and_then(|a| a.functions.get(function))
            .map(|f| f.engine);
    }
    let def = crate::sim::workloads::kind_named(w.kind.get_ref());
    let words = def.map_or(usual_direction as fn(&str) -> _, |d| d.direction);
    let direction = match words(w.direction.get_ref()) {
        Some(Ok(d)) => Some(d),
        Some(Err(why)) => {
            errs.push(src.invalid(&wk("direction"), w.direction.span(), why));
            None
        }
        None => {
            errs.push(src.invalid(&wk("direction"), w.direction.span(), format!("unknown direction `{}`; expected transmit, receive, read, write or bidirectional", w.direction.get_ref())));
            None
        }
    };
    // Keys of another workload kind are refused, not ignored.
    let given = [
        ("socket_kib", w.socket_kib.as_ref().map(|v| v.span())),
        ("message_kib", w.message_kib.as_ref().map(|v| v.span())),
        ("block_kib", w.block_kib.as_ref().map(|v| v.span())),
        ("outstanding", w.outstanding.as_ref().map(|v| v.span())),
    ];
    let mut foreign_keys = false;
    for (fkey, span) in given {
        if let (Some(span), Some(def)) = (span, def) {
            if def.keys.contains(&fkey) {
                continue;
            }
            foreign_keys = true;
            errs.push(src.invalid(
                &wk(fkey),
                span,
                format!(
                    "`{fkey}` does not apply to a `{}` workload",
                    w.kind.get_ref()
                ),
            ));
        }
    }
    let demand = match (def, engine) {
        _ if foreign_keys => None,
        (Some(def), Some(engine)) if engine.carries(def.shape) => {
            let mut args = Args {
                src,
                reg,
                cards,
                key,
                w,
                place,
                direction,
                errs: &mut errs,
            };
            (def.make)(&mut args)
        }
        (Some(_), Some(engine)) => {
            errs.push(src.invalid(
                &wk("kind"),
                w.kind.span(),
                format!(
                    "workload `{}` does not fit a `{}` function",
                    w.kind.get_ref(),
                    engine.name()
                ),
            ));
            None
        }
        (Some(_), None) => None,
        (None, _) => {
            let names: Vec<&str> = crate::sim::workloads::kinds()
                .iter()
                .map(|k| k.name)
                .collect();
            let expected = match names.split_last() {
                Some((last, [])) => last.to_string(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => String::new(),
            };
            errs.push(src.invalid(
                &wk("kind"),
                w.kind.span(),
                format!(
                    "unknown workload `{}`; expected {expected}",
                    w.kind.get_ref()
                ),
            ));
            None
        }
    };
    let (Some((card, function)), Some(direction), Some(demand), Some(kind), true) =
        (place, direction, demand, def, errs.is_empty())
    else {
        return Err(errs.into_error());
    };
    // CPUs pinned by the scenario: whole numbers (checked against the
    // partition when the experiment is assembled); only netperf runs a
    // process.
    let mut cpu = |k: &str, v: &Option<Spanned<f64>>| -> Option<(u32, crate::error::Location)> {
        let v = v.as_ref()?;
        let key = wk(k);
        let n = errs.take(whole_number(src, &key, v, "CPUs"))?;
        if !(0.0..4096.0).contains(&n) {
            errs.push(src.invalid(
                &key,
                v.span(),
                format!(
                    "CPU {} is not plausible; CPUs are numbered from 0",
                    readable(n)
                ),
            ));
            return None;
        }
        Some((n as u32, src.at(&key, v.span())))
    };
    let interrupt_cpu = cpu("interrupt_cpu", &w.interrupt_cpu);
    let process_cpu = cpu("process_cpu", &w.process_cpu);
    if let (Some(p), false) = (&w.process_cpu, demand.shape() == Shape::TcpStream) {
        errs.push(src.invalid(
            &wk("process_cpu"),
            p.span(),
            format!(
                "`process_cpu` does not apply to a `{}` workload: only netperf runs a process",
                w.kind.get_ref()
            ),
        ));
    }
    if !errs.is_empty() {
        return Err(errs.into_error());
    }
    // Where a check made when the experiment is assembled points: the
    // socket size of a netperf workload (its size is checked against the
    // link's segments), else the workload's kind.
    if let (Some(to), false) = (&w.to, kind.keys.contains(&"to")) {
        return Err(src.invalid(
            &wk("to"),
            to.span(),
            format!("`to` does not apply to a `{}` workload", w.kind.get_ref()),
        ));
    }
    let at = match &w.socket_kib {
        Some(v) => src.at(&wk("socket_kib"), v.span()),
        None => src.at(&wk("kind"), w.kind.span()),
    };
    Ok(Workload {
        card,
        function,
        kind,
        demand,
        direction,
        at,
        interrupt_cpu,
        process_cpu,
    })
}

/// What a workload kind reads of one workload table, each problem kept in
/// `errs` at its key.
struct Args<'a, 'e> {
    src: &'a Source<'a>,
    reg: &'a Registry,
    cards: &'a [Card],
    /// The workload's key (`experiment[0].workload[1]`).
    key: &'a str,
    w: &'a RawWorkload,
    /// Its card and function, once found.
    place: Option<(usize, usize)>,
    direction: Option<Direction>,
    errs: &'e mut Errors,
}

impl Args<'_, '_> {
    /// The span of `k` in the table (its `kind` for a key not given).
    fn span(&self, k: &str) -> std::ops::Range<usize> {
        let w = self.w;
        let given = match k {
            "socket_kib" => w.socket_kib.as_ref().map(|v| v.span()),
            "message_kib" => w.message_kib.as_ref().map(|v| v.span()),
            "block_kib" => w.block_kib.as_ref().map(|v| v.span()),
            "outstanding" => w.outstanding.as_ref().map(|v| v.span()),
            "to" => w.to.as_ref().map(|v| v.span()),
            "direction" => Some(w.direction.span()),
            _ => None,
        };
        given.unwrap_or_else(|| w.kind.span())
    }
}

impl WorkloadArgs for Args<'_, '_> {
    fn size(&mut self, k: &str, default_kib: f64) -> Option<u64> {
        let v = match k {
            "socket_kib" => &self.w.socket_kib,
            "message_kib" => &self.w.message_kib,
            "block_kib" => &self.w.block_kib,
            _ => &None,
        };
        size(
            self.src,
            &format!("{}.{k}", self.key),
            v,
            default_kib,
            self.errs,
        )
    }

    fn outstanding(&mut self, what: &str) -> Option<Option<u32>> {
        let k = format!("{}.outstanding", self.key);
        in_flight(self.src, &k, self.w, what, self.errs)
    }

    fn to(&mut self) -> Option<Option<usize>> {
        let Some(to) = &self.w.to else {
            return Some(None);
        };
        let (card, _) = self.place?;
        let named = Spanned::new(self.w.card.span(), self.cards[card].0.clone());
        let found = find_fn(self.src, self.reg, self.cards, self.key, &named, to);
        let (_, t) = self.errs.take(found)?;
        Some(Some(t))
    }

    fn function(&self) -> Option<usize> {
        self.place.map(|(_, f)| f)
    }

    fn direction(&self) -> Option<Direction> {
        self.direction
    }

    fn refuse(&mut self, k: &str, message: &str) {
        let span = self.span(k);
        let e = self
            .src
            .invalid(&format!("{}.{k}", self.key), span, message);
        self.errs.push(e);
    }
}

/// A size in KiB at `key`, in bytes (`default` KiB when absent), used
/// exactly as written: a value that is no whole number of bytes is refused,
/// not rounded. `None` with the error kept in `errs`.
fn size(
    src: &Source,
    key: &str,
    v: &Option<Spanned<f64>>,
    default: f64,
    errs: &mut Errors,
) -> Option<u64> {
    let Some(s) = v else {
        return Some((default * 1024.0) as u64);
    };
    let kib = errs.take(positive(src, key, s, 0.0625, 65536.0))?;
    let bytes = kib * 1024.0;
    if bytes.fract() != 0.0 {
        errs.push(src.invalid(
            key,
            s.span(),
            format!(
                "{} KiB is {} bytes, not a whole number of bytes",
                readable(kib),
                readable(bytes)
            ),
        ));
        return None;
    }
    Some(bytes as u64)
}

/// `outstanding` at `key`, 1 to 256 `what` per direction, if given (`Some(None)`
/// when absent); `None` with the error kept in `errs`.
fn in_flight(
    src: &Source,
    key: &str,
    w: &RawWorkload,
    what: &str,
    errs: &mut Errors,
) -> Option<Option<u32>> {
    let Some(o) = &w.outstanding else {
        return Some(None);
    };
    let v = errs.take(whole_number(src, key, o, what))?;
    if !(1.0..=256.0).contains(&v) {
        errs.push(src.invalid(
            key,
            o.span(),
            format!("{} {what}; expected 1 to 256", readable(v)),
        ));
        return None;
    }
    Some(Some(v as u32))
}

/// One figure at `key` (`experiment[0].figure[1]`).
fn figure(
    src: &Source,
    reg: &Registry,
    cards: &[Card],
    key: &str,
    f: &RawFigure,
) -> Result<FigureSpec> {
    let fk = |s: &str| format!("{key}.{s}");
    let mut errs = Errors::default();
    let unit = f.unit.get_ref().clone();
    // `card = "*"`: the function of that name on every card that has it;
    // with `function = "*"` too, every function of every card.
    let all = f.card.get_ref() == "*";
    let every = all && f.function.get_ref() == "*";
    let place = if every {
        Some((0, 0))
    } else if all {
        let found = cards.iter().enumerate().find_map(|(ci, c)| {
            let a = reg.adapters.get(&c.1)?;
            let fi = a
                .functions
                .iter()
                .position(|x| &x.name == f.function.get_ref())?;
            Some((ci, fi))
        });
        if found.is_none() {
            errs.push(Error::Unknown {
                at: src.at(&fk("function"), f.function.span()),
                what: "function",
                name: f.function.get_ref().clone(),
                known: "no card of this experiment has it".into(),
            });
        }
        found
    } else {
        errs.take(find_fn(src, reg, cards, key, &f.card, &f.function))
    };
    let scope = match unit.as_str() {
        "%" | "ms CPU per MB" => FigureScope::Cpu,
        _ if every => FigureScope::AllFunctions,
        _ if all => FigureScope::AllCards,
        _ => FigureScope::Function,
    };
    if !["Mbit/s", "MB/s", "Mibit/s", "%", "ms CPU per MB"].contains(&unit.as_str()) {
        errs.push(src.invalid(
            &fk("unit"),
            f.unit.span(),
            format!("unknown figure unit `{unit}`; expected Mbit/s, MB/s, Mibit/s (2^20 bit/s, TTCP's Mbit), % (the whole machine's CPU utilisation) or ms CPU per MB (the whole machine's service demand, CPU time per 10^6 bytes moved)"),
        ));
    }
    let published = *f.published.get_ref();
    if unit == "%" && published > 100.0 {
        errs.push(src.invalid(
            &fk("published"),
            f.published.span(),
            format!(
                "{} % is not a CPU utilisation: expected more than 0, at most 100",
                readable(published)
            ),
        ));
    }
    // Below 0.001 (of any figure unit) no paper prints a figure: such a
    // value is a slip, and its relative error would not be a number.
    if !(published.is_finite() && (1e-3..=1e7).contains(&published)) {
        errs.push(src.invalid(
            &fk("published"),
            f.published.span(),
            format!(
                "{} is not a published figure: expected at least 0.001, at most 1e7",
                readable(published)
            ),
        ));
    }
    let id = errs.take(check_name(src, &fk("id"), &f.id));
    let (Some(id), Some((card, function)), true) = (id, place, errs.is_empty()) else {
        return Err(errs.into_error());
    };
    Ok(FigureSpec {
        id,
        card,
        function,
        published,
        unit,
        scope,
        source: f.source.clone(),
        at: src.at(&fk("id"), f.id.span()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::load_registry;

    #[test]
    fn a_figure_id_in_two_scenarios_is_an_error_naming_both_places() {
        let reg = load_registry(&[]).expect("bundled models");
        let bundled = load_bundled_scenarios(&reg).expect("bundled scenarios");
        let sc = bundled
            .iter()
            .find(|s| s.has_figures())
            .expect("a scenario with figures");
        let mut again = sc.clone();
        again.name.push_str("-again");
        again.file = PathBuf::from("again.toml");
        for f in again.experiments.iter_mut().flat_map(|e| &mut e.figures) {
            f.at.file = again.file.clone();
        }
        assert!(check_figures_once(std::slice::from_ref(sc)).is_ok());
        let err = check_figures_once(&[sc.clone(), again]).expect_err("counted twice");
        let first = &sc.experiments[0].figures[0];
        let text = err.to_string();
        assert!(text.starts_with("again.toml:"), "{text}");
        assert!(
            text.contains(&format!(
                "figure `{}` is also given at {}:{}",
                first.id,
                first.at.file.display(),
                first.at.line
            )),
            "{text}"
        );
        let figures: usize = sc.experiments.iter().map(|e| e.figures.len()).sum();
        assert_eq!(err.list().len(), figures.min(crate::error::MAX_ERRORS));
    }

    #[test]
    fn a_count_may_be_written_as_a_float_with_no_fraction() {
        let reg = load_registry(&[]).expect("bundled models");
        let (_, text) = bundled_files("scenarios/hp2g/fig5-fc-read.toml")[0];
        let text = text.replace("cells = 1\n", "cells = 1.0\n");
        assert!(text.contains("cells = 1.0"), "the scenario has one cell");
        let sc = parse_scenario(PathBuf::from("x.toml"), &text, &reg).expect("loads");
        assert_eq!(sc.experiments[0].cells, 1);
    }
}
