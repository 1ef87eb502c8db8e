//! `iosim sweep FILE --vary WHAT=LIST`: one scenario run at every point of
//! one or two varied quantities, every metric of each point with its 95%
//! interval over the replications (`sweep`, `bottlenecks`), its warnings
//! (on standard error too), and with `--plot DIR` one chart per experiment
//! and metric across all points. Points are written to a part as they
//! finish (a temporary spool file, or with `--shard I/N` standard output)
//! and the report is rendered from it, so memory does not grow with the
//! grid.

use std::path::PathBuf;

use iosim::app::Runner;
use iosim::loader::load_scenario;
use iosim::part::{FileParts, PartHead, PartWriter};
use iosim::report::{self, Cell, Section};
use iosim::sweep::PointResult;
use iosim::Error;

use super::{positive_seconds, Common};

#[derive(clap::Args)]
pub struct Args {
    /// Scenario TOML file.
    pub scenario: PathBuf,
    /// WHAT=LIST: WHAT is cells, socket_kib, message_kib, block_kib,
    /// outstanding or a model parameter's dotted path (as `iosim params`
    /// names it); LIST is `a,b,c`, `a..b` (whole steps) or `a:b:step`,
    /// values of a parameter with or without a unit (`500ns`). A card
    /// (CARD: its name; omitted: the experiment's only card):
    /// `slot:CARD=SLOT,SLOT,...` moves it, `link:CARD=LINK,LINK,...`
    /// runs it over other links (MTU, encapsulation),
    /// `adapters:CARD[@SLOT,SLOT,...]=COUNTS` repeats it with its
    /// workloads into the listed slots or the free slots in order.
    /// Twice for a grid.
    #[arg(long = "vary", value_name = "WHAT=LIST", required = true)]
    pub vary: Vec<String>,
    /// Only this experiment of the scenario.
    #[arg(long, value_name = "ID")]
    pub experiment: Option<String>,
    #[command(flatten)]
    pub common: Common,
    /// Independent replications per point, 1 to 1000 (seeds derived from --seed); mean and 95% CI.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub replications: u32,
    /// The point throughputs are compared with in `vs_baseline_pct`
    /// (default: the first): KNOB=VALUE for every --vary, as the `point`
    /// column names it, e.g. `slot:ab379b=slot-5` or `cells=4,socket_kib=64`.
    #[arg(long, value_name = "KNOB=VALUE[,...]")]
    pub baseline: Option<String>,
    /// Also write charts into DIR, each as an SVG and a PNG file: one per
    /// experiment and metric against the first varied quantity, across all
    /// points (a bus's, rope's or controller's utilisation: the busiest's).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Also write a self-contained HTML report to FILE: the header facts,
    /// warnings, the charts of --plot inline and every section.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// With --plot: write into a directory that already holds charts,
    /// replacing those of the same names; with --html: replace the file
    /// (regular files only).
    #[arg(long)]
    pub force: bool,
    /// Stop with exit code 5 if the run takes longer than this many
    /// wall-clock seconds (checked as the simulations run).
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub max_wall_seconds: Option<f64>,
    /// Run only part I of N equal parts of the grid (in point order) and
    /// write it to standard output as a part file; `iosim merge` joins the
    /// N parts into the output one run gives, byte for byte.
    #[arg(long, value_name = "I/N", value_parser = super::shard)]
    pub shard: Option<(u64, u64)>,
    /// Also the calibration status of the baseline point's experiments
    /// (`calibration`, `assumed`): each assumed value they read moved over
    /// its range, two runs more per value (with --shard, part 1 writes it).
    #[arg(long)]
    pub sensitivity: bool,
}

/// `iosim sweep`.
pub fn execute(a: Args, runner: &Runner) -> iosim::Result<String> {
    let common = &a.common;
    if a.shard.is_some() && (a.plot.is_some() || a.html.is_some()) {
        return Err(Error::Usage(
            "--plot or --html with --shard: not supported yet (charts need every point; draw them with an unsharded run)".into(),
        ));
    }
    let plot = a
        .plot
        .as_deref()
        .map(|d| super::plot::chart_dir(d, a.force, common, Some(&a.scenario)))
        .transpose()?;
    let html = super::html_output(
        a.html.as_deref(),
        a.force,
        a.plot.is_some(),
        common,
        &a.scenario,
    )?;
    let (mut reg, parameters) = common.registry()?;
    let sc = load_scenario(&a.scenario, &reg)?;
    if a.vary.len() > 2 {
        return Err(Error::Usage(
            "--vary: at most two (one line per value of the second)".into(),
        ));
    }
    let axes = a
        .vary
        .iter()
        .map(|v| iosim::sweep::parse_vary(&mut reg, v))
        .collect::<iosim::Result<Vec<_>>>()?;
    let plan = iosim::sweep::plan_sweep(
        &reg,
        &sc,
        a.experiment.as_deref(),
        axes,
        a.baseline.as_deref(),
        a.replications,
        runner,
    )?;
    let (part, parts) = a.shard.unwrap_or((1, 1));
    let status = if a.sensitivity && part == 1 {
        let (values, effects) = plan.baseline_status(common.seed, runner)?;
        iosim::sections::calibration_sections(&values, &effects).to_vec()
    } else {
        Vec::new()
    };
    let mut sections = vec![
        ("sweep".to_string(), strings(&SWEEP_FIELDS)),
        ("bottlenecks".to_string(), strings(&BOTTLENECK_FIELDS)),
    ];
    if a.sensitivity {
        sections.push((
            "calibration".into(),
            strings(&iosim::sections::CALIBRATION_COLUMNS),
        ));
        sections.push(("assumed".into(), strings(&iosim::sections::ASSUMED_COLUMNS)));
    }
    let head = PartHead {
        command: format!("sweep {}", a.scenario.display()),
        seed: common.seed,
        meta: meta(&a, &plan, &sc, parameters),
        warnings: Some(plan.warnings.clone()),
        sections,
        identity: format!(
            "sweep {:?}",
            (
                &a.scenario,
                &a.vary,
                &a.experiment,
                a.replications,
                &a.baseline,
                &common.models,
                &common.params,
                common.hand_set,
                a.sensitivity
            )
        ),
        part,
        parts,
    };
    for w in &plan.warnings {
        super::diag(&format!("warning: {w}"));
    }
    let mut charts = (plot.is_some() || html.is_some()).then(|| SweepCharts::new(&plan.axes));
    let range = plan.shard(part, parts);
    let sharded = a.shard.is_some();
    let name = sc.name.clone();
    if a.shard.is_some() {
        super::part_to_stdout(&head, |w| {
            plan.run(range, common.seed, runner, &mut |p| {
                emit_point(w, &name, p, &mut charts, sharded)
            })?;
            write_status(w, &status).map_err(super::stdout_error)
        })?;
        return Ok(String::new());
    }
    let spool_err = |source| Error::Write {
        path: "<temporary spool file>".into(),
        source,
    };
    let spool = std::io::BufWriter::new(report::spool()?);
    let mut w = PartWriter::new(spool, &head).map_err(spool_err)?;
    plan.run(range, common.seed, runner, &mut |p| {
        emit_point(&mut w, &name, p, &mut charts, sharded)
    })?;
    write_status(&mut w, &status).map_err(spool_err)?;
    let spool = w
        .finish()
        .map_err(spool_err)?
        .into_inner()
        .map_err(|e| spool_err(e.into_error()))?;
    let mut parts = FileParts::new(vec![("<temporary spool file>".into(), spool)]);
    if let Some(c) = charts {
        let charts = c
            .charts(&sc.name, common.seed)
            .iter()
            .map(|(stem, chart)| iosim::charts::render(stem, chart))
            .collect::<iosim::Result<Vec<_>>>()?;
        if let Some(out) = plot {
            out.write_files(&report::chart_files(&charts))?;
        }
        if let Some(out) = html {
            let rep = in_memory(&head, &mut parts)?;
            out.write(iosim::html::command_html(&rep, &[], &charts).as_bytes())?;
        }
    }
    super::stream_out(&head, &mut parts, common.out_format())?;
    Ok(String::new())
}

/// The whole report `head` and `records` make, in memory (for the HTML
/// page, which shows every row).
fn in_memory(
    head: &PartHead,
    records: &mut dyn iosim::part::Records,
) -> iosim::Result<report::Report> {
    let mut sections: Vec<Section> = head
        .sections
        .iter()
        .map(|(name, fields)| Section {
            name: name.clone(),
            fields: fields.clone(),
            rows: Vec::new(),
        })
        .collect();
    let mut warnings = head.warnings.clone().unwrap_or_default();
    records.each(iosim::part::Want::All, &mut |r| {
        match r {
            iosim::part::Record::Row(k, cells) => {
                if let Some(s) = sections.get_mut(k) {
                    s.rows.push(cells);
                }
            }
            iosim::part::Record::Warning(w) => warnings.push(w),
        }
        Ok(())
    })?;
    Ok(report::Report {
        command: head.command.clone(),
        seed: head.seed,
        meta: head.meta.clone(),
        warnings: Some(warnings),
        sections,
    })
}

/// Writes the rows of the calibration status (`status`: its
/// `calibration` and `assumed` sections, or none) to the part `w`, after
/// the sweep's two sections.
fn write_status<W: std::io::Write>(
    w: &mut PartWriter<W>,
    status: &[Section],
) -> std::io::Result<()> {
    for (k, s) in status.iter().enumerate() {
        for row in &s.rows {
            w.row(2 + k, row)?;
        }
    }
    Ok(())
}

/// Writes one point to the part `w` (standard output when `sharded`, else
/// the spool), its warnings to standard error, and its values to the charts.
fn emit_point<W: std::io::Write>(
    w: &mut PartWriter<W>,
    scenario: &str,
    p: PointResult,
    charts: &mut Option<SweepCharts>,
    sharded: bool,
) -> iosim::Result<()> {
    write_point(w, scenario, &p).map_err(|source| Error::Write {
        path: if sharded {
            "<standard output>".into()
        } else {
            "<temporary spool file>".into()
        },
        source,
    })?;
    for w in &p.warnings {
        super::diag(&format!("warning: {w}"));
    }
    if let Some(c) = charts.as_mut() {
        c.add(&p);
    }
    Ok(())
}

const SWEEP_FIELDS: [&str; 15] = [
    "scenario",
    "experiment",
    "point",
    "metric",
    "unit",
    "mean",
    "ci_low",
    "ci_high",
    "n",
    "vs_baseline_pct",
    "pi90_low",
    "pi90_high",
    "param_pct",
    "structural_pct",
    "family",
];

const BOTTLENECK_FIELDS: [&str; 4] = ["scenario", "experiment", "point", "bottleneck"];

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The header facts of `iosim sweep`.
fn meta(
    a: &Args,
    plan: &iosim::sweep::Plan<'_>,
    sc: &iosim::model::Scenario,
    parameters: String,
) -> Vec<(String, String)> {
    let mut meta = vec![
        ("parameters".into(), parameters),
        ("scenario".into(), sc.name.clone()),
    ];
    for ax in &plan.axes {
        meta.push((
            format!("vary {}", ax.name),
            format!(
                "{} ({})",
                (0..ax.labels.len())
                    .map(|i| ax.shown(i))
                    .collect::<Vec<_>>()
                    .join(", "),
                ax.unit
            ),
        ));
    }
    meta.push((
        "baseline".into(),
        format!(
            "{}, {}; vs_baseline_pct: each throughput's change against it, in percent",
            plan.label(plan.baseline),
            if a.baseline.is_some() {
                "named by --baseline"
            } else {
                "the first point (--baseline names another)"
            }
        ),
    ));
    meta.push((
        "run".into(),
        format!(
            "warm-up {} ms discarded, {} ms measured; {} replication(s) per point, 95% intervals (ci_low = ci_high = mean with one)",
            sc.run.warmup_ms, sc.run.duration_ms, a.replications
        ),
    ));
    meta.push((
        "prediction_interval".into(),
        "pi90_low, pi90_high: each throughput's 90% prediction interval; structural_pct by the family of the experiment's bottleneck at the point (models/spread.toml or --spread), param_pct the baseline point's parameter part (each fitted value it reads moved by one standard error, run once), carried to every point as a relative width".into(),
    ));
    meta
}

/// One point's rows: in `sweep`, one per (experiment, metric) with the mean
/// and 95% interval over the replications; in `bottlenecks`, one per
/// experiment; then its warnings.
fn write_point<W: std::io::Write>(
    w: &mut PartWriter<W>,
    scenario: &str,
    p: &PointResult,
) -> std::io::Result<()> {
    for m in &p.metrics {
        let mut cells = vec![
            Cell::Text(scenario.into()),
            Cell::Text(m.experiment.clone()),
            Cell::Text(p.label.clone()),
            Cell::Text(m.metric.clone()),
            Cell::Text(m.unit.clone()),
            Cell::Num(m.mean, 3),
            Cell::Num(m.ci_low, 3),
            Cell::Num(m.ci_high, 3),
            Cell::Int(m.n as u64),
            m.vs_baseline_pct.map_or(Cell::Blank, |c| Cell::Num(c, 2)),
        ];
        match &m.interval {
            Some(iv) => cells.extend(iosim::sections::interval_cells(iv, 3)),
            None => cells.extend([
                Cell::Blank,
                Cell::Blank,
                Cell::Blank,
                Cell::Blank,
                Cell::Blank,
            ]),
        }
        w.row(0, &cells)?;
    }
    for (e, text) in &p.bottlenecks {
        w.row(
            1,
            &[
                Cell::Text(scenario.into()),
                Cell::Text(e.clone()),
                Cell::Text(p.label.clone()),
                Cell::Text(text.clone()),
            ],
        )?;
    }
    for text in &p.warnings {
        w.warning(text)?;
    }
    Ok(())
}

/// At most this many lines in one chart (values of the second axis): a
/// longer axis is drawn at evenly spaced values, and the title says so.
const MAX_LINES: usize = 16;

/// The charts of `sweep --plot`, gathered a point at a time: one per
/// experiment and metric across all points, the metric against the first
/// axis, one line per value of the second axis if any, with error bars: a
/// throughput's 90% prediction interval, another metric's 95% interval
/// over the replications. A metric of a bus, rope or controller is one
/// chart for the busiest of them at each point (a slot sweep moves its
/// card to another bus at each point). Holds one value per drawn point.
struct SweepCharts {
    axes: Vec<iosim::sweep::Axis>,
    /// Every `every`-th value of the second axis is drawn.
    every: usize,
    /// (experiment, metric, unit) and the lines of its chart.
    charts: Vec<(ChartKey, Vec<iosim::charts::Line>)>,
}

/// A chart's experiment, metric (or family) and unit.
type ChartKey = (String, String, String);

/// The chart a metric goes on: a bus's, rope's or controller's utilisation
/// on that of the busiest.
fn family(metric: &str) -> String {
    for kind in ["bus", "rope", "controller"] {
        if metric.starts_with(&format!("{kind} ")) && metric.ends_with(" utilisation") {
            return format!("busiest {kind} utilisation");
        }
    }
    metric.to_string()
}

impl SweepCharts {
    fn new(axes: &[iosim::sweep::Axis]) -> SweepCharts {
        let second = axes.get(1).map_or(1, |a| a.values.len());
        SweepCharts {
            axes: axes.to_vec(),
            every: second.div_ceil(MAX_LINES).max(1),
            charts: Vec::new(),
        }
    }

    fn add(&mut self, p: &PointResult) {
        let line_name = |metric: &str| match (self.axes.get(1), p.values.get(1)) {
            (Some(a), Some(v)) => {
                let i = a.values.iter().position(|x| x == v).unwrap_or(0);
                (i % self.every == 0).then(|| format!("{}={}", a.name, a.shown(i)))
            }
            _ => Some(metric.to_string()),
        };
        // The point's value of each chart: the busiest member of a family.
        let mut here: Vec<(ChartKey, (f64, f64, f64))> = Vec::new();
        for m in &p.metrics {
            let key = (m.experiment.clone(), family(&m.metric), m.unit.clone());
            // A throughput's bar is its 90% prediction interval; another
            // metric's, its 95% interval over the replications.
            let v = match &m.interval {
                Some(iv) if iv.low.is_finite() && iv.high.is_finite() => (m.mean, iv.low, iv.high),
                _ => (m.mean, m.ci_low, m.ci_high),
            };
            match here.iter_mut().find(|(k, _)| *k == key) {
                Some((_, old)) if old.0 < v.0 => *old = v,
                Some(_) => {}
                None => here.push((key, v)),
            }
        }
        for (key, (mean, lo, hi)) in here {
            let Some(name) = line_name(&key.1) else {
                continue;
            };
            let pos = match self.charts.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    self.charts.push((key, Vec::new()));
                    self.charts.len() - 1
                }
            };
            let lines = &mut self.charts[pos].1;
            let l = match lines.iter().position(|l| l.name == name) {
                Some(i) => i,
                None => {
                    lines.push(iosim::charts::Line {
                        name,
                        points: Vec::new(),
                    });
                    lines.len() - 1
                }
            };
            lines[l].points.push((p.values[0], mean, lo, hi));
        }
    }

    /// The (file stem, chart) pairs; the caller renders and writes them.
    fn charts(self, scenario: &str, seed: u64) -> Vec<(String, iosim::charts::Chart)> {
        let Some(x_axis) = self.axes.first() else {
            return Vec::new();
        };
        let thinned = match self.axes.get(1) {
            Some(a) if self.every > 1 => format!(
                ", every {}th value of {} of {}",
                self.every,
                a.name,
                a.values.len()
            ),
            _ => String::new(),
        };
        let mut files = Vec::new();
        for ((exp, metric, unit), lines) in self.charts {
            let title = format!("{scenario} {exp}: {metric} (seed {seed}{thinned})");
            let stem: String = format!("{exp}-{metric}")
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            files.push((
                stem,
                iosim::charts::Chart::Lines(iosim::charts::LineChart {
                    title,
                    x_label: format!("{} ({})", x_axis.name, x_axis.unit),
                    y_label: if unit == "MB/s" {
                        format!("{metric} ({unit}), bars: 90% prediction interval")
                    } else {
                        format!("{metric} ({unit})")
                    },
                    lines,
                    x_names: if x_axis.knob.categorical() {
                        (0..x_axis.labels.len()).map(|i| x_axis.shown(i)).collect()
                    } else {
                        Vec::new()
                    },
                }),
            ));
        }
        files
    }
}
