//! `iosim place`: slot placement advice for a request (a file, or the
//! simple form on the command line): the placements searched, the best
//! simulated, ranked by the request's objective, the top ones in detail.
//!
//! With `--shard I/N` it searches as one run does and simulates the I-th
//! of N equal parts of the placements a sharded run simulates
//! ([`iosim::place::place_shard`]: the pick, or every leader of a split
//! search up to the cap where one run would stop early by the bound),
//! then writes their results to standard output as a part: its header
//! names the flags that decide the answer, as JSON. `iosim merge` reads
//! them back ([`merge`]): it loads the same request and models, searches
//! again, takes the placements' simulations from the parts
//! ([`iosim::place::place_merged`]) and reports as one run does, byte for
//! byte; so it needs the files the shards read, at the same paths.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;

use iosim::app::Runner;
use iosim::report::Report;
use iosim::Error;

use super::{positive_seconds, Common};

#[derive(clap::Args)]
pub struct Args {
    /// Request TOML file (server, partition, cards and workloads,
    /// constraints, objective); or give the request with --server.
    #[arg(required_unless_present = "server", conflicts_with = "server")]
    pub request: Option<PathBuf>,
    /// A simple request on the command line: the server.
    #[arg(long, requires_all = ["testbed", "card"])]
    pub server: Option<String>,
    /// With --server: the test bed at the far end of the links.
    #[arg(long)]
    pub testbed: Option<String>,
    /// With --server: cells in the partition.
    #[arg(long, default_value_t = 1)]
    pub cells: u32,
    /// With --server: total, worst-share or min-each.
    #[arg(long, default_value = "total")]
    pub objective: String,
    /// With --server and --objective min-each: the throughput every card must reach, MB/s.
    #[arg(long = "min-mb-s", value_parser = super::positive_mb_s)]
    pub min_mb_s: Option<f64>,
    /// With --server: a card, NAME=ADAPTER or NAME=ADAPTER*COUNT; repeatable.
    #[arg(long = "card", value_name = "NAME=ADAPTER[*COUNT]")]
    pub card: Vec<String>,
    /// With --server: a workload, CARD.FUNCTION=KIND:DIRECTION (default sizes); repeatable.
    #[arg(long = "workload", value_name = "CARD.FUNCTION=KIND:DIRECTION")]
    pub workload: Vec<String>,
    #[command(flatten)]
    pub common: Common,
    /// Placements shown in detail (adapters and nodes), 1 to 1000.
    #[arg(long, default_value_t = 3, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub top: usize,
    /// Placements simulated: the best by the analytic estimate, plus the
    /// worst two, 1 to 10000 (default: every one when there are at most
    /// 64 distinct placements, else 24; after a split search at most that
    /// many, in rounds of 4 until the bound shows none left can win).
    #[arg(long, value_parser = RangedU64ValueParser::<usize>::new().range(1..=10_000))]
    pub simulate: Option<usize>,
    /// Stop with exit code 5 if the run takes longer than this many
    /// wall-clock seconds (checked as the search and the simulations run).
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub max_wall_seconds: Option<f64>,
    /// Search as one run does, simulate the I-th of N equal parts of the
    /// placements (after a split search, every leader up to the cap, which
    /// one run may stop short of) and write a part file to standard
    /// output; `iosim merge` joins the parts into the output one run gives,
    /// byte for byte (not with --html).
    #[arg(long, value_name = "I/N", value_parser = super::shard)]
    pub shard: Option<(u64, u64)>,
    /// Also the calibration status of the best placement (`calibration`,
    /// `assumed`): each assumed value its experiment reads moved over its
    /// range, two runs more per value.
    #[arg(long)]
    pub sensitivity: bool,
    /// Also write a self-contained HTML report to FILE: the placements
    /// table, why the best wins, the winner's utilisations and every
    /// section of the output (a new file, unless --force).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// With --html: replace the file if it exists (a regular file only).
    #[arg(long, requires = "html")]
    pub force: bool,
}

/// `iosim place`.
pub fn execute(a: Args, runner: &Runner) -> iosim::Result<String> {
    if a.shard.is_some() && a.html.is_some() {
        return Err(iosim::Error::Usage(
            "--html with --shard: not supported yet (the page needs every placement; write it with an unsharded run)".into(),
        ));
    }
    // The output is checked before any work, never over an input.
    let inputs: Vec<&std::path::Path> = [a.request.as_deref(), a.common.params.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    let html = a
        .html
        .as_deref()
        .map(|f| iosim::report::Output::file(f, a.force, &inputs))
        .transpose()?;
    let from = match (a.request, a.server) {
        (Some(file), _) => PlaceFrom::File(file),
        (None, Some(server)) => PlaceFrom::Args {
            server,
            testbed: a.testbed.unwrap_or_default(),
            cells: a.cells,
            objective: a.objective,
            min_mb_s: a.min_mb_s,
            cards: a.card,
            workloads: a.workload,
        },
        (None, None) => {
            return Err(Error::Usage(
                "place: give a request file or --server".into(),
            ))
        }
    };
    let how = How {
        from,
        common: a.common,
        top: a.top,
        simulate: a.simulate,
        sensitivity: a.sensitivity,
    };
    if let Some((part, parts)) = a.shard {
        return shard_cmd(&how, part, parts, runner);
    }
    let format = how.common.out_format();
    place_cmd(&how, html, None, format, runner)
}

/// What decides a placement answer: the request and the flags.
struct How {
    from: PlaceFrom,
    common: Common,
    top: usize,
    simulate: Option<usize>,
    sensitivity: bool,
}

/// The start of the identity of a part of `place`: the flags follow as
/// JSON.
const IDENTITY: &str = "place ";

/// The section of a part of `place`, and its fields.
const PART_SECTION: (&str, [&str; 4]) = (
    "placements_simulated",
    ["index", "label", "system", "result"],
);

/// Whether `head` is the header of a part of `place`.
pub fn is_place_part(head: &iosim::part::PartHead) -> bool {
    head.identity.starts_with(IDENTITY)
}

/// A path as JSON text (a part's header is text).
fn path_json(p: &std::path::Path) -> iosim::Result<serde_json::Value> {
    p.to_str().map(serde_json::Value::from).ok_or_else(|| {
        Error::Usage(format!(
            "--shard: `{}` is not UTF-8 text, which a part's header needs",
            p.display()
        ))
    })
}

impl How {
    /// The flags as JSON: what a part's identity holds and a merge reads.
    fn to_json(&self) -> iosim::Result<serde_json::Value> {
        use serde_json::json;
        let c = &self.common;
        let request = match &self.from {
            PlaceFrom::File(f) => json!({ "file": path_json(f)? }),
            PlaceFrom::Args {
                server,
                testbed,
                cells,
                objective,
                min_mb_s,
                cards,
                workloads,
            } => json!({
                "server": server,
                "testbed": testbed,
                "cells": cells,
                "objective": objective,
                "min_mb_s": min_mb_s.map(f64::to_bits),
                "cards": cards,
                "workloads": workloads,
            }),
        };
        Ok(json!({
            "request": request,
            "seed": c.seed,
            "models": c.models.iter().map(|m| path_json(m)).collect::<iosim::Result<Vec<_>>>()?,
            "params": c.params.as_deref().map(path_json).transpose()?,
            "hand_set": c.hand_set,
            "spread": c.spread.as_deref().map(path_json).transpose()?,
            "top": self.top,
            "simulate": self.simulate,
            "sensitivity": self.sensitivity,
        }))
    }

    /// Reads [`How::to_json`] back; `None` if `v` is not one.
    fn from_json(v: &serde_json::Value) -> Option<How> {
        use serde_json::Value;
        let text = |v: &Value| v.as_str().map(str::to_string);
        let texts = |v: &Value| -> Option<Vec<String>> { v.as_array()?.iter().map(text).collect() };
        let path = |v: &Value| -> Option<Option<PathBuf>> {
            match v {
                Value::Null => Some(None),
                v => Some(Some(PathBuf::from(v.as_str()?))),
            }
        };
        let r = v.get("request")?;
        let from = match r.get("file") {
            Some(f) => PlaceFrom::File(PathBuf::from(f.as_str()?)),
            None => PlaceFrom::Args {
                server: text(r.get("server")?)?,
                testbed: text(r.get("testbed")?)?,
                cells: u32::try_from(r.get("cells")?.as_u64()?).ok()?,
                objective: text(r.get("objective")?)?,
                min_mb_s: match r.get("min_mb_s")? {
                    Value::Null => None,
                    m => Some(f64::from_bits(m.as_u64()?)),
                },
                cards: texts(r.get("cards")?)?,
                workloads: texts(r.get("workloads")?)?,
            },
        };
        let common = Common {
            seed: v.get("seed")?.as_u64()?,
            format: super::FormatArg::Table,
            wide: false,
            models: texts(v.get("models")?)?
                .into_iter()
                .map(PathBuf::from)
                .collect(),
            threads: 1,
            params: path(v.get("params")?)?,
            hand_set: v.get("hand_set")?.as_bool()?,
            spread: path(v.get("spread")?)?,
        };
        Some(How {
            from,
            common,
            top: usize::try_from(v.get("top")?.as_u64()?).ok()?,
            simulate: match v.get("simulate")? {
                Value::Null => None,
                k => Some(usize::try_from(k.as_u64()?).ok()?),
            },
            sensitivity: v.get("sensitivity")?.as_bool()?,
        })
    }
}

/// `iosim place --shard I/N`: the search, the part's simulations, written
/// to standard output as a part.
fn shard_cmd(how: &How, part: u64, parts: u64, runner: &Runner) -> iosim::Result<String> {
    use iosim::report::Cell;
    let identity = format!("{IDENTITY}{}", how.to_json()?);
    let (reg, _, req, request) = load(how)?;
    let sims = iosim::place::place_shard(&reg, &req, options(how), runner, part, parts)?;
    let head = iosim::part::PartHead {
        command: format!("place {request}"),
        seed: how.common.seed,
        meta: Vec::new(),
        warnings: None,
        sections: vec![(
            PART_SECTION.0.into(),
            PART_SECTION.1.iter().map(|f| f.to_string()).collect(),
        )],
        identity,
        part,
        parts,
    };
    super::part_to_stdout(&head, |w| {
        for s in &sims {
            w.row(
                0,
                &[
                    Cell::Int(s.index as u64),
                    Cell::Text(s.label.clone()),
                    Cell::Text(s.system.clone()),
                    Cell::Text(iosim::part::result_json(&s.result).to_string()),
                ],
            )
            .map_err(super::stdout_error)?;
        }
        Ok(())
    })?;
    Ok(String::new())
}

/// `iosim merge` of the parts of a sharded `place` (`head`, `parts`, as
/// [`iosim::loader::open_parts`] checked them): the answer one run gives,
/// in `format`, from the request and models its flags name, read again.
pub fn merge(
    head: &iosim::part::PartHead,
    parts: &mut dyn iosim::part::Records,
    format: iosim::report::Format,
    runner: &Runner,
) -> iosim::Result<String> {
    use iosim::part::Record;
    use iosim::report::Cell;
    let bad = |what: &str| Error::Usage(format!("merge: {what} in the parts of `place`"));
    let how = head
        .identity
        .strip_prefix(IDENTITY)
        .and_then(|j| serde_json::from_str(j).ok())
        .and_then(|v| How::from_json(&v))
        .ok_or_else(|| bad("a malformed header"))?;
    let mut given = Vec::new();
    parts.each(iosim::part::Want::All, &mut |r| {
        let Record::Row(_, cells) = r else {
            return Ok(());
        };
        let one = match &cells[..] {
            [Cell::Int(index), Cell::Text(label), Cell::Text(system), Cell::Text(result)] => {
                serde_json::from_str(result)
                    .ok()
                    .and_then(|v| iosim::part::result_from_json(&v))
                    .and_then(|result| {
                        Some(iosim::place::Simulated {
                            index: usize::try_from(*index).ok()?,
                            label: label.clone(),
                            system: system.clone(),
                            result,
                        })
                    })
            }
            _ => None,
        };
        given.push(one.ok_or_else(|| bad("a malformed record"))?);
        Ok(())
    })?;
    place_cmd(&how, None, Some(&given), format, runner)
}

/// The placement options of the flags.
fn options(how: &How) -> iosim::place::PlaceOptions {
    iosim::place::PlaceOptions {
        seed: how.common.seed,
        simulate: how.simulate,
        ..Default::default()
    }
}

/// The registry (and which fitted values it holds), the request and how
/// the report names it.
fn load(
    how: &How,
) -> iosim::Result<(
    iosim::model::Registry,
    String,
    iosim::model::PlaceRequest,
    String,
)> {
    let (reg, parameters) = how.common.registry()?;
    let (req, request) = match &how.from {
        PlaceFrom::File(path) => (
            iosim::loader::load_place_request(path, &reg)?,
            path.display().to_string(),
        ),
        PlaceFrom::Args {
            server,
            testbed,
            cells,
            objective,
            min_mb_s,
            cards,
            workloads,
        } => (
            iosim::loader::place_request_from_args(
                &reg, server, testbed, *cells, objective, *min_mb_s, cards, workloads,
            )?,
            format!("--server {server}"),
        ),
    };
    Ok((reg, parameters, req, request))
}

/// Where `iosim place` takes its request from.
enum PlaceFrom {
    /// A request file.
    File(PathBuf),
    /// The simple command-line form.
    Args {
        server: String,
        testbed: String,
        cells: u32,
        objective: String,
        min_mb_s: Option<f64>,
        cards: Vec<String>,
        workloads: Vec<String>,
    },
}

/// `iosim place`: loads the request, searches, simulates (or, for a
/// merge, takes the simulations `given`) and reports in `format`.
fn place_cmd(
    how: &How,
    html: Option<iosim::report::Output>,
    given: Option<&[iosim::place::Simulated]>,
    format: iosim::report::Format,
    runner: &Runner,
) -> iosim::Result<String> {
    let common = &how.common;
    let top = how.top;
    let (reg, parameters, req, request) = load(how)?;
    let opt = options(how);
    let p = match given {
        Some(given) => iosim::place::place_merged(&reg, &req, opt, runner, given)?,
        None => iosim::place::place(&reg, &req, opt, runner)?,
    };
    let mut rep = Report {
        command: format!("place {request}"),
        seed: common.seed,
        ..Default::default()
    };
    rep.meta.push(("parameters".into(), parameters));
    rep.meta.push(("request".into(), req.name.clone()));
    rep.meta.push((
        "partition".into(),
        format!(
            "server {}, {} cell(s), {} CPUs, test bed {}",
            req.server, req.cells, p.cpus, req.testbed
        ),
    ));
    rep.meta.push(("objective".into(), req.objective.words()));
    rep.meta
        .push(("search".into(), iosim::place::sections::search_text(&p)));
    rep.meta
        .push(("bound".into(), iosim::place::sections::bound_text(&p)));
    rep.meta.push((
        "run".into(),
        format!(
            "each placement simulated with warm-up {} ms discarded, {} ms measured; seed of a placement hashed from --seed and its description",
            req.run.warmup_ms, req.run.duration_ms
        ),
    ));
    rep.meta
        .push(("why".into(), iosim::place::sections::why_text(&p)));
    rep.sections = iosim::place::sections::place_sections(&p, top);
    rep.meta.push((
        "prediction_interval".into(),
        "placement_intervals: each simulated placement's total throughput with its 90% prediction interval; structural_pct by the family of its bottleneck (models/spread.toml or --spread), param_pct the best placement's parameter part (each fitted value it reads moved by one standard error, run once), carried to every placement as a relative width".into(),
    ));
    rep.sections
        .push(placement_intervals(&reg, &p, common.seed, runner)?);
    if how.sensitivity {
        rep.sections
            .extend(best_status(&reg, &p, common.seed, runner)?);
    }
    let warnings = iosim::warnings::of_placement(&reg, &p);
    for w in &warnings {
        super::diag(&format!("warning: {w}"));
    }
    rep.warnings = Some(warnings);
    if let Some(out) = html {
        out.write(place_html(&rep, &p).as_bytes())?;
    }
    Ok(rep.render(format))
}

/// The HTML report of `place --html`: why the best wins, the winner's
/// utilisations (the `nodes` rows of rank 1) ahead of every section.
fn place_html(rep: &Report, p: &iosim::place::Placement) -> String {
    let mut page = rep.clone();
    if let Some(nodes) = rep.sections.iter().find(|s| s.name == "nodes") {
        let mut winner = iosim::report::Section {
            name: "winner_utilisations".into(),
            fields: nodes.fields.clone(),
            rows: nodes
                .rows
                .iter()
                .filter(|r| matches!(r.first(), Some(iosim::report::Cell::Int(1))))
                .cloned()
                .collect(),
        };
        winner.rows.sort_by(|a, b| {
            let util = |r: &Vec<iosim::report::Cell>| match r.last() {
                Some(iosim::report::Cell::Num(v, _)) if v.is_finite() => *v,
                _ => f64::NEG_INFINITY,
            };
            util(b).total_cmp(&util(a))
        });
        let at = rep
            .sections
            .iter()
            .position(|s| s.name == "placements")
            .map_or(0, |i| i + 1);
        page.sections.insert(at, winner);
    }
    let why = vec![(
        "Why this placement".to_string(),
        iosim::place::sections::why_text(p),
    )];
    iosim::html::command_html(&page, &why, &[])
}

/// The calibration status (`calibration`, `assumed`) of the best
/// placement's experiment, when it was simulated: each assumed value it
/// reads moved over its range, its throughputs beside their intervals.
fn best_status(
    reg: &iosim::model::Registry,
    p: &iosim::place::Placement,
    seed: u64,
    runner: &Runner,
) -> iosim::Result<Vec<iosim::report::Section>> {
    let Some((best, result)) = p
        .ranked
        .first()
        .and_then(|b| b.result.as_ref().map(|r| (b, r)))
    else {
        return Ok(Vec::new());
    };
    let (sc, e) = iosim::place::placement_experiment(p, best);
    let exps = [(&sc, &e, &e)];
    let moved = iosim::app::parameter_moves(reg, &exps, seed, runner)?;
    let runs = iosim::app::assumed_moves(reg, &exps, seed, runner)?;
    let effects = iosim::app::run_effects(reg, std::slice::from_ref(result), &moved, &runs);
    Ok(iosim::sections::calibration_sections(&runs.values, &effects).into())
}

/// Each simulated placement's total throughput (MB/s) with its 90%
/// prediction interval: the parameter part of the best placement (its
/// experiment run again with each fitted value it reads moved by one
/// standard error) carried to every placement as a relative width, the
/// structural part by the family of each one's bottleneck.
fn placement_intervals(
    reg: &iosim::model::Registry,
    p: &iosim::place::Placement,
    seed: u64,
    runner: &Runner,
) -> iosim::Result<iosim::report::Section> {
    use iosim::report::{Cell, Section};
    let total = |r: &iosim::sim::ExperimentResult| -> f64 {
        r.functions.iter().map(|f| f.total().mb_s()).sum()
    };
    let sigma = match p.ranked.first() {
        Some(best) if best.result.is_some() => {
            let (sc, e) = iosim::place::placement_experiment(p, best);
            let moved = iosim::app::parameter_moves(reg, &[(&sc, &e, &e)], seed, runner)?;
            let ys: Vec<f64> = moved.iter().flatten().map(total).collect();
            best.result
                .as_ref()
                .map_or(f64::NAN, |r| iosim::interval::param_sigma(total(r), &ys))
        }
        _ => f64::NAN,
    };
    let fields: Vec<&str> = [
        &["rank", "placement", "total_MB_s"][..],
        &iosim::sections::INTERVAL_COLUMNS[..],
    ]
    .concat();
    let mut s = Section::new("placement_intervals", &fields);
    for (i, c) in p.ranked.iter().enumerate() {
        let Some(r) = &c.result else { continue };
        let y = total(r);
        let iv = iosim::interval::Interval::of(
            y,
            Some(sigma),
            iosim::model::Family::of_bottleneck(&r.bottleneck),
            &reg.spread,
        );
        let mut cells = vec![
            Cell::Int(i as u64 + 1),
            Cell::Text(c.label.clone()),
            Cell::Num(y, 2),
        ];
        cells.extend(iosim::sections::interval_cells(&iv, 2));
        s.rows.push(cells);
    }
    Ok(s)
}
