//! `iosim run FILE`: one scenario file run, each experiment's throughput,
//! utilisations and bottleneck (`inputs`, `functions`, `buses`, `cpus`,
//! `experiments`, and `figures` and `papers` when it has published
//! figures); with `--replications N`, the mean and 95% interval of every
//! metric over N independent replications (`replications`, and
//! `wide_intervals`). Its warnings (a run short of its precision, a test bed
//! lacking what a workload needs, wide intervals) go to standard error and
//! into the report.

use std::path::PathBuf;

use iosim::app::Runner;
use iosim::loader::load_scenario;
use iosim::report::{Cell, Report, Section};
use iosim::sections::{
    buses_section, calibration_sections, cpus_section, experiments_section, figures_section,
    functions_section, inputs_section, papers_section, throughput_intervals_section,
};
use iosim::sim::ExperimentResult;
use iosim::stats::mean_ci95;

use super::{diag, positive_percent, positive_seconds, Common};

#[derive(clap::Args)]
pub struct Args {
    /// Scenario TOML file.
    pub scenario: PathBuf,
    #[command(flatten)]
    pub common: Common,
    /// Independent replications, 1 to 1000 (seeds derived from --seed); reports mean and 95% CI.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub replications: u32,
    /// Warn when a 95% CI half-width exceeds this percent of its mean (a positive percent).
    #[arg(long, default_value_t = 2.0, value_parser = positive_percent)]
    pub precision: f64,
    /// Stop with exit code 5 if the run takes longer than this many
    /// wall-clock seconds (checked as the simulations run).
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub max_wall_seconds: Option<f64>,
    /// Skip the calibration status (each assumed value the experiments
    /// read moved over its range, two runs more per value).
    #[arg(long)]
    pub no_sensitivity: bool,
}

/// `iosim run`.
pub fn execute(a: Args, runner: &Runner) -> iosim::Result<String> {
    let common = &a.common;
    let (reg, parameters) = common.registry()?;
    let sc = load_scenario(&a.scenario, &reg)?;
    let results = iosim::app::run_scenario(&reg, &sc, common.seed, runner)?;
    let mut warnings = iosim::warnings::of_scenario(&reg, &sc, &results);
    let mut rep = Report {
        command: format!("run {}", a.scenario.display()),
        seed: common.seed,
        ..Default::default()
    };
    rep.meta.push(("parameters".into(), parameters));
    rep.meta.push(("scenario".into(), sc.name.clone()));
    rep.meta.push((
        "run".into(),
        format!(
            "warm-up {} ms discarded, {} ms measured",
            sc.run.warmup_ms, sc.run.duration_ms
        ),
    ));
    rep.sections.push(inputs_section(&reg, &sc));
    let pairs = vec![(&sc, results)];
    rep.sections.push(functions_section(&pairs));
    rep.sections.push(buses_section(&pairs));
    rep.sections.push(cpus_section(&pairs));
    rep.sections.push(experiments_section(&pairs));
    let moved = iosim::app::scenario_moves(&reg, std::slice::from_ref(&sc), common.seed, runner)?;
    let moved = moved.into_iter().next().unwrap_or_default();
    rep.sections
        .push(throughput_intervals_section(&reg, &pairs[0].1, &moved));
    if !a.no_sensitivity {
        let runs = iosim::app::scenario_assumed_moves(
            &reg,
            std::slice::from_ref(&sc),
            common.seed,
            runner,
        )?;
        let exps = iosim::app::run_effects(&reg, &pairs[0].1, &moved, &runs);
        let uncalibrated: Vec<&str> = exps
            .iter()
            .filter(|(_, e)| iosim::sensitivity::status_of(e) == "uncalibrated")
            .map(|(id, _)| id.as_str())
            .collect();
        if !uncalibrated.is_empty() {
            warnings.push(format!(
                "{} moved beyond {} 90% interval when an assumed value moved over its range ({}; see `calibration` and `assumed`)",
                iosim::units::count_text(uncalibrated.len(), "experiment's throughput", "experiments' throughputs"),
                if uncalibrated.len() == 1 { "its" } else { "their" },
                uncalibrated.join(", ")
            ));
        }
        rep.sections
            .extend(calibration_sections(&runs.values, &exps));
    }
    let rows = iosim::app::rows_with_intervals(&reg, &sc, &pairs[0].1, &moved);
    if !rows.is_empty() {
        rep.sections.push(figures_section(&rows));
        rep.sections.push(papers_section(&rows));
    }
    let (n, precision) = (a.replications, a.precision);
    if n > 1 {
        rep.meta.push((
            "replications".into(),
            format!("{n}, 95% intervals; warn above {precision}% of the mean"),
        ));
        let runs = iosim::app::replications(&reg, &sc, common.seed, runner, n)?;
        let r = replications_sections(&runs, precision);
        if !r.wide.rows.is_empty() {
            let n = r.wide.rows.len();
            warnings.push(format!(
                "{} {} a 95% interval over the replications wider than {precision}% of {} mean (wide_intervals); add replications or lengthen [run] duration_ms",
                iosim::units::count_text(n, "metric", "metrics"),
                if n == 1 { "has" } else { "have" },
                if n == 1 { "its" } else { "their" }
            ));
        }
        rep.sections.push(r.table);
        rep.sections.push(r.wide);
    }
    for w in &warnings {
        diag(&format!("warning: {w}"));
    }
    rep.warnings = Some(warnings);
    Ok(rep.render(common.out_format()))
}

/// What `run --replications` reports.
#[derive(Debug, Clone)]
struct Replications {
    /// Mean, 95% interval half-width and relative width of every function's
    /// throughput and every bus's utilisation.
    table: Section,
    /// The metrics whose interval is wider than the precision asked for
    /// (empty when none is).
    wide: Section,
}

/// The mean and 95% CI of every function's throughput and every bus's
/// utilisation over `runs` (per replication, the results of one scenario
/// in file order, as [`iosim::app::replications`] gives them), and the
/// metrics whose interval is wider than `precision` percent of the mean.
fn replications_sections(runs: &[Vec<ExperimentResult>], precision: f64) -> Replications {
    let n = runs.len();
    let mut table = Section::new(
        "replications",
        &[
            "experiment",
            "metric",
            "unit",
            "mean",
            "ci95_half",
            "ci95_rel_pct",
            "replications",
        ],
    );
    let mut warn = Section::new(
        "wide_intervals",
        &["experiment", "metric", "ci95_rel_pct", "precision_pct"],
    );
    let Some(first) = runs.first() else {
        return Replications { table, wide: warn };
    };
    for (ei, e) in first.iter().enumerate() {
        let mut metrics: Vec<(String, &str, Vec<f64>)> = Vec::new();
        for (fi, f) in e.functions.iter().enumerate() {
            metrics.push((
                format!("{} total", f.label),
                "MB/s",
                runs.iter()
                    .map(|r| r[ei].functions[fi].total().mb_s())
                    .collect(),
            ));
        }
        for (bi, b) in e.buses.iter().enumerate() {
            metrics.push((
                format!("bus {} utilisation", b.label),
                "percent",
                runs.iter().map(|r| r[ei].buses[bi].util * 100.0).collect(),
            ));
        }
        for (name, unit, xs) in metrics {
            let (m, h) = mean_ci95(&xs);
            let rel = if m.abs() > 1e-12 {
                h / m.abs() * 100.0
            } else {
                0.0
            };
            table.rows.push(vec![
                Cell::Text(e.id.clone()),
                Cell::Text(name.clone()),
                Cell::Text(unit.into()),
                Cell::Num(m, 3),
                Cell::Num(h, 3),
                Cell::Num(rel, 2),
                Cell::Int(n as u64),
            ]);
            if rel.is_finite() && rel > precision {
                warn.rows.push(vec![
                    Cell::Text(e.id.clone()),
                    Cell::Text(name),
                    Cell::Num(rel, 2),
                    Cell::Num(precision, 2),
                ]);
            }
        }
    }
    Replications { table, wide: warn }
}
