//! `iosim place`: slot placement advice for a request (a file, or the
//! simple form on the command line): the placements searched, the best
//! simulated, ranked by the request's objective, the top ones in detail.

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
    /// Not supported yet: `place` runs whole on one machine (sharding its
    /// simulation phase is planned; `sweep` and `merge` shard today).
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
    if a.shard.is_some() {
        return Err(iosim::Error::Usage(
            "place --shard: not supported yet (place runs whole on one machine; `sweep --shard` and `iosim merge` split and join sweeps)".into(),
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
    place_cmd(
        &from,
        &a.common,
        a.top,
        a.simulate,
        a.sensitivity,
        html,
        runner,
    )
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

/// `iosim place`: loads the request, searches, and reports.
fn place_cmd(
    from: &PlaceFrom,
    common: &Common,
    top: usize,
    simulate: Option<usize>,
    sensitivity: bool,
    html: Option<iosim::report::Output>,
    runner: &Runner,
) -> iosim::Result<String> {
    let (reg, parameters) = common.registry()?;
    let (req, request) = match from {
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
    let opt = iosim::place::PlaceOptions {
        seed: common.seed,
        simulate,
        ..Default::default()
    };
    let p = iosim::place::place(&reg, &req, opt, runner)?;
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
    if sensitivity {
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
    Ok(rep.render(common.out_format()))
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
