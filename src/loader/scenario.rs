//! Scenario files: experiments resolved against the model registry.

use std::path::{Path, PathBuf};

use toml::Spanned;

use super::raw::{RawExperiment, RawScenario};
use super::{bundled_files, check_name, known, read, Source};
use crate::error::{Error, Result};
use crate::model::{
    negotiate_mode, Direction, Experiment, FigureSpec, Registry, RunSpec, Scenario, ServerSpec,
    Workload, WorkloadKind,
};

/// Loads a scenario file from any path.
pub fn load_scenario(path: &Path, reg: &Registry) -> Result<Scenario> {
    let text = read(path)?;
    parse_scenario(path.to_path_buf(), &text, reg)
}

/// Loads every bundled scenario, in path order.
pub fn load_bundled_scenarios(reg: &Registry) -> Result<Vec<Scenario>> {
    bundled_files("scenarios/")
        .into_iter()
        .map(|(p, text)| parse_scenario(PathBuf::from(format!("<bundled>/{p}")), text, reg))
        .collect()
}

/// Parses and resolves a scenario's text; `file` is used in messages.
pub fn parse_scenario(file: PathBuf, text: &str, reg: &Registry) -> Result<Scenario> {
    let src = Source {
        file: file.clone(),
        text,
    };
    let raw: RawScenario = src.parse()?;
    let name = check_name(&src, "scenario.name", &raw.scenario.name)?;
    let mut run = RunSpec::default();
    if let Some(r) = &raw.run {
        if let Some(d) = &r.duration_ms {
            run.duration_ms = positive(&src, "run.duration_ms", d, 0.01, 100_000.0)?;
        }
        if let Some(w) = &r.warmup_ms {
            run.warmup_ms = positive(&src, "run.warmup_ms", w, 0.0, 100_000.0)?;
        }
        if let Some(m) = &r.max_events {
            let v = *m.get_ref();
            if !(1000..=10_000_000_000).contains(&v) {
                return Err(src.invalid(
                    "run.max_events",
                    m.span(),
                    format!("{v} is outside 1000 to 1e10"),
                ));
            }
            run.max_events = v as u64;
        }
        if let Some(p) = &r.precision_pct {
            run.precision_pct = Some(positive(&src, "run.precision_pct", p, 0.01, 50.0)?);
        }
        if let Some(m) = &r.min_ms {
            run.min_ms = positive(&src, "run.min_ms", m, 0.01, 100_000.0)?;
        }
        if let Some(b) = &r.batch_ms {
            run.batch_ms = positive(&src, "run.batch_ms", b, 0.01, 100_000.0)?;
        }
        for (key, v, ok) in [
            ("run.min_ms", &r.min_ms, run.min_ms <= run.duration_ms),
            ("run.batch_ms", &r.batch_ms, run.batch_ms <= run.duration_ms),
        ] {
            if let (Some(v), false) = (v, ok) {
                return Err(src.invalid(
                    key,
                    v.span(),
                    format!(
                        "{} ms is longer than run.duration_ms ({} ms)",
                        v.get_ref(),
                        run.duration_ms
                    ),
                ));
            }
        }
    }
    if raw.experiment.get_ref().is_empty() {
        return Err(src.invalid(
            "experiment",
            raw.experiment.span(),
            "a scenario needs at least one [[experiment]]",
        ));
    }
    let mut experiments: Vec<Experiment> = Vec::new();
    // Each figure is compared once: an id given twice would count twice.
    let mut figure_ids: std::collections::HashMap<String, usize> = Default::default();
    for (i, e) in raw.experiment.get_ref().iter().enumerate() {
        for (j, f) in e.figure.iter().enumerate() {
            let key = format!("experiment[{i}].figure[{j}].id");
            let at = src.at(&key, f.id.span());
            if let Some(first) = figure_ids.insert(f.id.get_ref().clone(), at.line) {
                return Err(src.invalid(
                    &key,
                    f.id.span(),
                    format!(
                        "figure `{}` is given twice (first at line {first}); each figure is compared once",
                        f.id.get_ref()
                    ),
                ));
            }
        }
        let exp = experiment(&src, reg, i, e)?;
        if experiments.iter().any(|x| x.id == exp.id) {
            return Err(src.invalid(
                &format!("experiment[{i}].id"),
                e.id.span(),
                format!("experiment `{}` is defined twice", exp.id),
            ));
        }
        experiments.push(exp);
    }
    Ok(Scenario {
        name,
        title: raw.scenario.title,
        source: raw.scenario.source,
        file,
        run,
        experiments,
    })
}

fn positive(src: &Source, key: &str, v: &Spanned<f64>, min: f64, max: f64) -> Result<f64> {
    let x = *v.get_ref();
    if !x.is_finite() || x < min || x > max {
        return Err(src.invalid(key, v.span(), format!("{x} is outside {min} to {max}")));
    }
    Ok(x)
}

fn experiment(src: &Source, reg: &Registry, i: usize, e: &RawExperiment) -> Result<Experiment> {
    let k = |s: &str| format!("experiment[{i}].{s}");
    let id = check_name(src, &k("id"), &e.id)?;
    let server: &ServerSpec =
        reg.servers
            .get(e.server.get_ref())
            .ok_or_else(|| Error::Unknown {
                at: src.at(&k("server"), e.server.span()),
                what: "server",
                name: e.server.get_ref().clone(),
                known: known(reg.servers.keys()),
            })?;
    if !reg.testbeds.contains_key(e.testbed.get_ref()) {
        return Err(Error::Unknown {
            at: src.at(&k("testbed"), e.testbed.span()),
            what: "testbed",
            name: e.testbed.get_ref().clone(),
            known: known(reg.testbeds.keys()),
        });
    }
    let cells = *e.cells.get_ref();
    let max_cells = crate::model::schema::ServerParams::from_set(&server.params, &server.at)?
        .cells_max
        .round() as i64;
    if cells < 1 || cells > max_cells {
        return Err(src.invalid(
            &k("cells"),
            e.cells.span(),
            format!(
                "{cells} cells; server `{}` takes 1 to {max_cells}",
                server.name
            ),
        ));
    }
    if e.card.get_ref().is_empty() {
        return Err(src.invalid(
            &k("card"),
            e.card.span(),
            "an experiment needs at least one [[experiment.card]]",
        ));
    }
    let mut cards: Vec<(String, String, String)> = Vec::new();
    for (j, c) in e.card.get_ref().iter().enumerate() {
        let ck = |s: &str| k(&format!("card[{j}].{s}"));
        let adapter = reg
            .adapters
            .get(c.adapter.get_ref())
            .ok_or_else(|| Error::Unknown {
                at: src.at(&ck("adapter"), c.adapter.span()),
                what: "adapter",
                name: c.adapter.get_ref().clone(),
                known: known(reg.adapters.keys()),
            })?;
        let slot = server
            .slots
            .iter()
            .find(|s| &s.name == c.slot.get_ref())
            .ok_or_else(|| Error::Unknown {
                at: src.at(&ck("slot"), c.slot.span()),
                what: "slot",
                name: c.slot.get_ref().clone(),
                known: server
                    .slots
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        if negotiate_mode(adapter, slot).is_none() {
            return Err(src.invalid(
                &ck("slot"),
                c.slot.span(),
                format!(
                    "adapter `{}` (modes {}) cannot run in slot `{}` (modes {})",
                    adapter.name,
                    adapter.modes.join(", "),
                    slot.name,
                    slot.modes.join(", ")
                ),
            ));
        }
        let label = match &c.name {
            Some(n) => check_name(src, &ck("name"), n)?,
            None => adapter.name.clone(),
        };
        if cards.iter().any(|(l, _, _)| *l == label) {
            return Err(src.invalid(
                &ck("name"),
                c.adapter.span(),
                format!("two cards are called `{label}`: give each a `name`"),
            ));
        }
        if cards.iter().any(|(_, _, s)| s == &slot.name) {
            return Err(src.invalid(
                &ck("slot"),
                c.slot.span(),
                format!("slot `{}` already holds a card", slot.name),
            ));
        }
        cards.push((label, adapter.name.clone(), slot.name.clone()));
    }
    let find_fn = |key: String,
                   fkey: String,
                   card: &Spanned<String>,
                   func: &Spanned<String>|
     -> Result<(usize, usize)> {
        let ci = cards
            .iter()
            .position(|(l, _, _)| l == card.get_ref())
            .ok_or_else(|| Error::Unknown {
                at: src.at(&key, card.span()),
                what: "card",
                name: card.get_ref().clone(),
                known: cards
                    .iter()
                    .map(|c| c.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let adapter = &reg.adapters[&cards[ci].1];
        let fi = adapter
            .functions
            .iter()
            .position(|f| &f.name == func.get_ref())
            .ok_or_else(|| Error::Unknown {
                at: src.at(&fkey, func.span()),
                what: "function",
                name: func.get_ref().clone(),
                known: adapter
                    .functions
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        Ok((ci, fi))
    };
    let mut workloads: Vec<Workload> = Vec::new();
    for (j, w) in e.workload.iter().enumerate() {
        let wk = |s: &str| k(&format!("workload[{j}].{s}"));
        let (card, function) = find_fn(wk("card"), wk("function"), &w.card, &w.function)?;
        if workloads
            .iter()
            .any(|x| x.card == card && x.function == function)
        {
            return Err(src.invalid(
                &wk("function"),
                w.function.span(),
                "this function already has a workload: use direction = \"bidirectional\"",
            ));
        }
        let engine = reg.adapters[&cards[card].1].functions[function].engine;
        let raw_dma = w.kind.get_ref() == "dma";
        let direction = match w.direction.get_ref().as_str() {
            // For raw DMA, `read` is a DMA read of host memory: data out of it.
            "read" if raw_dma => Direction::Out,
            "write" if raw_dma => Direction::In,
            "transmit" | "receive" if raw_dma => {
                return Err(src.invalid(&wk("direction"), w.direction.span(), "a dma workload's direction is read (DMA reads of host memory), write (DMA writes to it) or bidirectional"))
            }
            "transmit" | "write" => Direction::Out,
            "receive" | "read" => Direction::In,
            "bidirectional" => Direction::Both,
            other => {
                return Err(src.invalid(&wk("direction"), w.direction.span(), format!("unknown direction `{other}`; expected transmit, receive, read, write or bidirectional")))
            }
        };
        // A size is used exactly as written: a KiB value that is no whole
        // number of bytes is refused, not rounded.
        let size = |v: &Option<Spanned<f64>>, key: &str, default: f64| -> Result<u64> {
            match v {
                None => Ok((default * 1024.0) as u64),
                Some(s) => {
                    let kib = positive(src, &wk(key), s, 0.0625, 65536.0)?;
                    let bytes = kib * 1024.0;
                    if bytes.fract() != 0.0 {
                        return Err(src.invalid(
                            &wk(key),
                            s.span(),
                            format!("{kib} KiB is {bytes} bytes, not a whole number of bytes"),
                        ));
                    }
                    Ok(bytes as u64)
                }
            }
        };
        // `outstanding`, 1 to 256 `what` per direction, if given.
        let in_flight = |what: &str| -> Result<Option<u32>> {
            let Some(o) = &w.outstanding else {
                return Ok(None);
            };
            let v = *o.get_ref();
            if !(1..=256).contains(&v) {
                return Err(src.invalid(
                    &wk("outstanding"),
                    o.span(),
                    format!("{v} {what}; expected 1 to 256"),
                ));
            }
            Ok(Some(v as u32))
        };
        // Keys of the other workload kind are refused, not ignored.
        let foreign: [(&str, Option<std::ops::Range<usize>>); 2] = match w.kind.get_ref().as_str() {
            "netperf-tcp-stream" => [
                ("block_kib", w.block_kib.as_ref().map(|v| v.span())),
                ("outstanding", w.outstanding.as_ref().map(|v| v.span())),
            ],
            "diskbench" | "dma" => [
                ("socket_kib", w.socket_kib.as_ref().map(|v| v.span())),
                ("message_kib", w.message_kib.as_ref().map(|v| v.span())),
            ],
            _ => [("", None), ("", None)],
        };
        if let Some((key, Some(span))) = foreign.into_iter().find(|(_, s)| s.is_some()) {
            return Err(src.invalid(
                &wk(key),
                span,
                format!(
                    "`{key}` does not apply to a `{}` workload",
                    w.kind.get_ref()
                ),
            ));
        }
        let kind = match (w.kind.get_ref().as_str(), engine) {
            ("netperf-tcp-stream", crate::model::EngineKind::Nic) => {
                WorkloadKind::NetperfTcpStream {
                    socket_bytes: size(&w.socket_kib, "socket_kib", 128.0)?,
                    message_bytes: size(&w.message_kib, "message_kib", 32.0)?,
                }
            }
            ("diskbench", crate::model::EngineKind::Hba) => WorkloadKind::Diskbench {
                block_bytes: size(&w.block_kib, "block_kib", 128.0)?,
                outstanding: in_flight("outstanding I/Os")?,
            },
            ("dma", crate::model::EngineKind::RawDma) => {
                let outstanding = in_flight("blocks in flight")?.unwrap_or(1);
                WorkloadKind::RawDma {
                    block_bytes: size(&w.block_kib, "block_kib", 4.0)?,
                    outstanding,
                }
            }
            ("netperf-tcp-stream", _) | ("diskbench", _) | ("dma", _) => {
                return Err(src.invalid(
                    &wk("kind"),
                    w.kind.span(),
                    format!(
                        "workload `{}` does not fit a `{}` function",
                        w.kind.get_ref(),
                        engine.name()
                    ),
                ))
            }
            (other, _) => {
                return Err(src.invalid(
                    &wk("kind"),
                    w.kind.span(),
                    format!(
                        "unknown workload `{other}`; expected netperf-tcp-stream, diskbench or dma"
                    ),
                ))
            }
        };
        workloads.push(Workload {
            card,
            function,
            kind,
            direction,
        });
    }
    let mut figures: Vec<FigureSpec> = Vec::new();
    for (j, f) in e.figure.iter().enumerate() {
        let fk = |s: &str| k(&format!("figure[{j}].{s}"));
        let (card, function) = find_fn(fk("card"), fk("function"), &f.card, &f.function)?;
        let unit = f.unit.get_ref().clone();
        if unit != "Mbit/s" && unit != "MB/s" {
            return Err(src.invalid(
                &fk("unit"),
                f.unit.span(),
                format!("unknown figure unit `{unit}`; expected Mbit/s or MB/s"),
            ));
        }
        let published = *f.published.get_ref();
        if !(published.is_finite() && published > 0.0 && published <= 1e7) {
            return Err(src.invalid(
                &fk("published"),
                f.published.span(),
                format!(
                    "{published} is not a published throughput: expected more than 0, at most 1e7"
                ),
            ));
        }
        figures.push(FigureSpec {
            id: check_name(src, &fk("id"), &f.id)?,
            card,
            function,
            published,
            unit,
            source: f.source.clone(),
        });
    }
    Ok(Experiment {
        id,
        server: server.name.clone(),
        testbed: e.testbed.get_ref().clone(),
        cells: cells as u32,
        cards,
        workloads,
        figures,
        at: src.at(&k("id"), e.id.span()),
    })
}
