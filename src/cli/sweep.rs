//! `iosim sweep FILE --vary WHAT=LIST`: one scenario run at every point of
//! one or two varied quantities, every metric of each point with its 95%
//! interval over the replications (`sweep`, `bottlenecks`), its warnings
//! (on standard error too), and with `--plot DIR` one chart per experiment
//! and metric.

use std::path::PathBuf;

use iosim::app::Runner;
use iosim::loader::load_scenario;
use iosim::report::{self, Cell, Report, Section};
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
    /// experiment and metric against the first varied quantity.
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
}

/// `iosim sweep`.
pub fn execute(a: Args, runner: &Runner) -> iosim::Result<String> {
    let common = &a.common;
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
    let sweep = iosim::sweep::run_sweep(
        &reg,
        &sc,
        a.experiment.as_deref(),
        axes,
        a.baseline.as_deref(),
        a.replications,
        common.seed,
        runner,
    )?;
    let mut rep = Report {
        command: format!("sweep {}", a.scenario.display()),
        seed: common.seed,
        ..Default::default()
    };
    rep.meta.push(("parameters".into(), parameters));
    rep.meta.push(("scenario".into(), sc.name.clone()));
    for ax in &sweep.axes {
        rep.meta.push((
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
    rep.meta.push((
        "baseline".into(),
        format!(
            "{}, {}; vs_baseline_pct: each throughput's change against it, in percent",
            sweep.points[sweep.baseline].label(&sweep.axes),
            if a.baseline.is_some() {
                "named by --baseline"
            } else {
                "the first point (--baseline names another)"
            }
        ),
    ));
    rep.meta.push((
        "run".into(),
        format!(
            "warm-up {} ms discarded, {} ms measured; {} replication(s) per point, 95% intervals (ci_low = ci_high = mean with one)",
            sc.run.warmup_ms, sc.run.duration_ms, a.replications
        ),
    ));
    rep.sections = sweep_sections(&sc.name, &sweep);
    for w in &sweep.warnings {
        super::diag(&format!("warning: {w}"));
    }
    rep.warnings = Some(sweep.warnings.clone());
    if plot.is_some() || html.is_some() {
        let charts = sweep_plot_files(&sc.name, &sweep, common.seed)
            .iter()
            .map(|(stem, chart)| iosim::charts::render(stem, chart))
            .collect::<iosim::Result<Vec<_>>>()?;
        if let Some(out) = plot {
            out.write_files(&report::chart_files(&charts))?;
        }
        if let Some(out) = html {
            out.write(iosim::html::command_html(&rep, &[], &charts).as_bytes())?;
        }
    }
    Ok(rep.render(common.out_format()))
}

/// The sections of `iosim sweep`: `sweep`, one tidy row per (experiment,
/// point, metric) with the mean and 95% interval over the replications, and
/// `bottlenecks`, the bottleneck of each (experiment, point).
fn sweep_sections(scenario: &str, s: &iosim::sweep::Sweep) -> Vec<Section> {
    let mut t = Section::new(
        "sweep",
        &[
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
        ],
    );
    for m in &s.metrics {
        t.rows.push(vec![
            Cell::Text(scenario.into()),
            Cell::Text(m.experiment.clone()),
            Cell::Text(s.points[m.point].label(&s.axes)),
            Cell::Text(m.metric.clone()),
            Cell::Text(m.unit.clone()),
            Cell::Num(m.mean, 3),
            Cell::Num(m.ci_low, 3),
            Cell::Num(m.ci_high, 3),
            Cell::Int(m.n as u64),
            m.vs_baseline_pct.map_or(Cell::Blank, |c| Cell::Num(c, 2)),
        ]);
    }
    let mut b = Section::new(
        "bottlenecks",
        &["scenario", "experiment", "point", "bottleneck"],
    );
    for (p, e, text) in &s.bottlenecks {
        b.rows.push(vec![
            Cell::Text(scenario.into()),
            Cell::Text(e.clone()),
            Cell::Text(s.points[*p].label(&s.axes)),
            Cell::Text(text.clone()),
        ]);
    }
    vec![t, b]
}

/// The charts of `sweep --plot`: one per (experiment, metric), the metric
/// against the first axis, one line per value of the second axis if any,
/// with the 95% interval as error bars. Returns (file stem, chart) pairs;
/// the caller renders and writes them.
fn sweep_plot_files(
    scenario: &str,
    s: &iosim::sweep::Sweep,
    seed: u64,
) -> Vec<(String, iosim::charts::Chart)> {
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for m in &s.metrics {
        let k = (m.experiment.clone(), m.metric.clone(), m.unit.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let Some(x_axis) = s.axes.first() else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for (exp, metric, unit) in keys {
        let mut lines: Vec<iosim::charts::Line> = Vec::new();
        for m in s
            .metrics
            .iter()
            .filter(|m| m.experiment == exp && m.metric == metric)
        {
            let p = &s.points[m.point];
            let name = match (s.axes.get(1), p.values.get(1)) {
                (Some(a), Some(v)) => {
                    let i = a.values.iter().position(|x| x == v).unwrap_or(0);
                    format!("{}={}", a.name, a.shown(i))
                }
                _ => metric.clone(),
            };
            let pos = match lines.iter().position(|l| l.name == name) {
                Some(i) => i,
                None => {
                    lines.push(iosim::charts::Line {
                        name,
                        points: Vec::new(),
                    });
                    lines.len() - 1
                }
            };
            lines[pos]
                .points
                .push((p.values[0], m.mean, m.ci_low, m.ci_high));
        }
        let title = format!("{scenario} {exp}: {metric} (seed {seed})");
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
                y_label: format!("{metric} ({unit})"),
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
