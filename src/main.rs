//! The `iosim` command line: glue between flags, the library and the report.
//! Exit codes: 0 success (also when standard output is a pipe whose reader
//! closed it), 1 bad input (file, key and line in the message) or a file or
//! standard output that cannot be written, 2 bad usage, 3 a simulation hit its
//! event bound, 4 an internal defect, 5 the wall-clock bound passed.

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::RangedU64ValueParser;
use clap::{Parser, Subcommand, ValueEnum};

mod fit_cli;

use iosim::loader::{load_bundled_scenarios, load_registry, load_scenario};
use iosim::model::Registry;
use iosim::report::{self, Format, Report};
use iosim::sections::{
    self, buses_section, cpus_section, experiments_section, figures_section, functions_section,
    inputs_section, papers_section,
};
use iosim::validate::{figure_rows, run_scenario, run_scenarios, FigureRow};
use iosim::Error;

#[derive(Parser)]
#[command(
    name = "iosim",
    version,
    about = "Simulate server I/O subsystems and compare with published figures"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Table,
    Csv,
    Json,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Table => Format::Table,
            FormatArg::Csv => Format::Csv,
            FormatArg::Json => Format::Json,
        }
    }
}

#[derive(clap::Args)]
struct Common {
    /// Seed of every random stream (recorded in the output).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: FormatArg,
    /// Extra directory of model files (servers, adapters, buses, links, testbeds); repeatable.
    #[arg(long = "models", value_name = "DIR")]
    models: Vec<PathBuf>,
    /// Threads used to run experiments in parallel, 1 to 256 (results do not depend on it).
    #[arg(long, default_value_t = 2, value_parser = RangedU64ValueParser::<usize>::new().range(1..=iosim::validate::MAX_THREADS as u64))]
    threads: usize,
    /// Fitted parameters written by `iosim calibrate`, applied over the models
    /// instead of the bundled fit (models/fitted.toml).
    #[arg(long = "params", value_name = "FILE", conflicts_with = "hand_set")]
    params: Option<PathBuf>,
    /// Use the model files' own values of the free parameters (the guesses
    /// made before the fit), without the bundled fit.
    #[arg(long = "hand-set")]
    hand_set: bool,
}

impl Common {
    /// The bundled models, those of `--models`, then the fitted values:
    /// `--params FILE`, or the bundled fit unless `--hand-set`. Also returns
    /// which values of the free parameters the run uses (recorded in every
    /// output). When a `--models` file replaced a model the bundled fit
    /// covers, and still calls some of its values fitted, those keep the
    /// file's values (its guesses): the label says so, and so does a warning.
    fn registry(&self) -> iosim::Result<(Registry, String)> {
        registry(&self.models, self.params.as_ref(), self.hand_set)
    }
}

/// The registry of [`Common::registry`], from the flags that choose it.
fn registry(
    models: &[PathBuf],
    params: Option<&PathBuf>,
    hand_set: bool,
) -> iosim::Result<(Registry, String)> {
    let mut reg = load_registry(models)?;
    let label = if let Some(p) = params {
        iosim::loader::apply_fitted(p, &mut reg)?;
        p.display().to_string()
    } else if hand_set {
        "model files (--hand-set: no fit applied)".into()
    } else {
        match iosim::loader::apply_bundled_fitted(&mut reg)? {
            None => "model files".into(),
            Some(fit) if fit.kept.is_empty() => fit.name,
            Some(fit) => {
                let kept = fit.kept.join(", ");
                diag(&format!(
                        "warning: {} fitted parameters of models replaced by --models keep that file's values (its guesses, not the bundled fit): {kept}; pass --params with a fit file to apply one",
                        fit.kept.len()
                    ));
                format!("{} except {kept} (from --models files)", fit.name)
            }
        }
    };
    Ok((reg, label))
}

#[derive(Subcommand)]
enum Command {
    /// Run every bundled scenario and print model beside paper for each published figure.
    Validate {
        #[command(flatten)]
        common: Common,
        /// Also write into DIR the charts `iosim plot --out DIR` draws (SVG
        /// and PNG: each paper figure or table, the residuals per paper) and
        /// per paper the CSV behind them.
        #[arg(long, value_name = "DIR")]
        plot: Option<PathBuf>,
        /// Only the figures of this paper (its name as the papers section
        /// prints it, or the start of that name: hp-rp8400, hp-atm, matrox);
        /// each run and prediction is what the whole validation gives.
        #[arg(long, value_name = "NAME", conflicts_with = "cross_validate")]
        paper: Option<String>,
        /// Predict each figure group from a fit that left it out (slow: one fit per group).
        #[arg(long)]
        cross_validate: bool,
        /// Calibration file for --cross-validate (default: the bundled models/calibration.toml).
        #[arg(long, value_name = "FILE")]
        calibration: Option<PathBuf>,
        /// With --cross-validate: fit every figure from the calibration's
        /// initial values across each parameter's range (as `calibrate`),
        /// instead of refitting near the values in use (as `calibrate
        /// --refit`; with --hand-set there is no fit in use, and the full
        /// fit starts from the initial values). Slower; the folds start from
        /// the initial values either way.
        #[arg(long, requires = "cross_validate")]
        cold: bool,
        /// Stop with exit code 5 if the run takes longer than this many
        /// wall-clock seconds (checked before each experiment starts).
        #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
        max_wall_seconds: Option<f64>,
    },
    /// Fit the free parameters of a calibration file to every bundled published figure.
    Calibrate {
        #[command(flatten)]
        common: Common,
        /// Calibration file (default: the bundled models/calibration.toml).
        #[arg(long, value_name = "FILE")]
        calibration: Option<PathBuf>,
        /// Where to write the fitted values (a new file; models are never edited).
        #[arg(long, value_name = "FILE", default_value = "fitted.toml")]
        output: PathBuf,
        /// Replace the --output file if it exists.
        #[arg(long)]
        force: bool,
        /// Refit: start from the values in use (the bundled fit, or --params)
        /// and search only near them, instead of from the calibration's
        /// initial values across each parameter's range. For a model change
        /// that moves the fit a little; the prior still pulls towards the
        /// initial values.
        #[arg(long, conflicts_with = "hand_set")]
        refit: bool,
        /// Stop with exit code 5 if the run takes longer than this many
        /// wall-clock seconds (checked before each experiment starts).
        #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
        max_wall_seconds: Option<f64>,
    },
    /// Run one scenario file (any path) and print throughput, utilisations and bottleneck.
    Run {
        /// Scenario TOML file.
        scenario: PathBuf,
        #[command(flatten)]
        common: Common,
        /// Independent replications, 1 to 1000 (seeds derived from --seed); reports mean and 95% CI.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
        replications: u32,
        /// Warn when a 95% CI half-width exceeds this percent of its mean (a positive percent).
        #[arg(long, default_value_t = 2.0, value_parser = positive_percent)]
        precision: f64,
        /// Stop with exit code 5 if the run takes longer than this many
        /// wall-clock seconds (checked before each experiment starts).
        #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
        max_wall_seconds: Option<f64>,
    },
    /// What-if sweep: run one scenario at every value of one or two varied
    /// quantities and report every metric at each point.
    Sweep {
        /// Scenario TOML file.
        scenario: PathBuf,
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
        vary: Vec<String>,
        /// Only this experiment of the scenario.
        #[arg(long, value_name = "ID")]
        experiment: Option<String>,
        #[command(flatten)]
        common: Common,
        /// Independent replications per point, 1 to 1000 (seeds derived from --seed); mean and 95% CI.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
        replications: u32,
        /// Also write one SVG per experiment and metric against the first varied quantity into DIR.
        #[arg(long, value_name = "DIR")]
        plot: Option<PathBuf>,
        /// Stop with exit code 5 if the run takes longer than this many
        /// wall-clock seconds (checked before each experiment starts).
        #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
        max_wall_seconds: Option<f64>,
    },
    /// Redraw every paper figure and table with published numbers (paper beside
    /// model), the calibration residuals and, given a file, the
    /// cross-validation: SVG and PNG into DIR, named by figure.
    Plot {
        #[command(flatten)]
        common: Common,
        /// Directory to write the charts into (created if needed).
        #[arg(long, value_name = "DIR", default_value = "plots")]
        out: PathBuf,
        /// JSON written by `iosim validate --cross-validate --format json`:
        /// also chart held-out against fitted error per group.
        #[arg(long, value_name = "FILE")]
        cross_validation: Option<PathBuf>,
    },
    /// Write one self-contained HTML file: inputs, parameters and sources,
    /// every redrawn figure, the validation and calibration (and, given a
    /// file, cross-validation) tables, version and seed.
    Report {
        #[command(flatten)]
        common: Common,
        /// The HTML file to write (replaced if it exists).
        #[arg(long, value_name = "FILE", default_value = "report.html")]
        out: PathBuf,
        /// JSON written by `iosim validate --cross-validate --format json`.
        #[arg(long, value_name = "FILE")]
        cross_validation: Option<PathBuf>,
    },
    /// Slot placement advice: where to put a request's cards for the best
    /// predicted throughput (see README, "Slot placement").
    Place {
        /// Request TOML file (server, partition, cards and workloads,
        /// constraints, objective); or give the request with --server.
        #[arg(required_unless_present = "server", conflicts_with = "server")]
        request: Option<PathBuf>,
        /// A simple request on the command line: the server.
        #[arg(long, requires_all = ["testbed", "card"])]
        server: Option<String>,
        /// With --server: the test bed at the far end of the links.
        #[arg(long)]
        testbed: Option<String>,
        /// With --server: cells in the partition.
        #[arg(long, default_value_t = 1)]
        cells: u32,
        /// With --server: total, worst-share or min-each.
        #[arg(long, default_value = "total")]
        objective: String,
        /// With --server and --objective min-each: the throughput every card must reach, MB/s.
        #[arg(long = "min-mb-s")]
        min_mb_s: Option<f64>,
        /// With --server: a card, NAME=ADAPTER or NAME=ADAPTER*COUNT; repeatable.
        #[arg(long = "card", value_name = "NAME=ADAPTER[*COUNT]")]
        card: Vec<String>,
        /// With --server: a workload, CARD.FUNCTION=KIND:DIRECTION (default sizes); repeatable.
        #[arg(long = "workload", value_name = "CARD.FUNCTION=KIND:DIRECTION")]
        workload: Vec<String>,
        #[command(flatten)]
        common: Common,
        /// Placements shown in detail (adapters and nodes), 1 to 1000.
        #[arg(long, default_value_t = 3, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1000))]
        top: usize,
        /// Placements simulated: the best by the analytic estimate, plus the
        /// worst two, 1 to 10000 (default: every one when there are at most
        /// 64 distinct placements, else 24).
        #[arg(long, value_parser = RangedU64ValueParser::<usize>::new().range(1..=10_000))]
        simulate: Option<usize>,
        /// Stop with exit code 5 if the run takes longer than this many
        /// wall-clock seconds (checked before each simulation starts).
        #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
        max_wall_seconds: Option<f64>,
    },
    /// List the bundled and given models, their parameters and sources.
    Params {
        #[command(flatten)]
        common: Common,
    },
    /// Print a model's structure.
    Show {
        #[command(subcommand)]
        which: ShowCmd,
    },
    /// Engine benchmarks.
    Bench {
        #[command(subcommand)]
        which: BenchCmd,
    },
}

#[derive(Subcommand)]
enum ShowCmd {
    /// A server's I/O tree, memory down to slots, with each node's capacity.
    Server {
        /// The server (without one, the known servers are listed).
        name: Option<String>,
        /// Extra directory of model files; repeatable.
        #[arg(long = "models", value_name = "DIR")]
        models: Vec<PathBuf>,
        /// Fitted parameters written by `iosim calibrate`, instead of the bundled fit.
        #[arg(long = "params", value_name = "FILE", conflicts_with = "hand_set")]
        params: Option<PathBuf>,
        /// Use the model files' own values of the free parameters, without the bundled fit.
        #[arg(long = "hand-set")]
        hand_set: bool,
        /// Output format: an indented tree, CSV, JSON or a Graphviz digraph.
        #[arg(long, value_enum, default_value = "table")]
        format: ShowFormat,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum ShowFormat {
    Table,
    Csv,
    Json,
    Dot,
}

#[derive(Subcommand)]
enum BenchCmd {
    /// K DMA masters sharing one bus (compare with shared/bench/bus_contention_simpy.py).
    BusContention {
        /// Number of masters, 1 to 100000.
        #[arg(long, default_value_t = 4, value_parser = RangedU64ValueParser::<usize>::new().range(1..=100_000))]
        masters: usize,
        /// Simulated seconds, more than 0 and at most 100.
        #[arg(long, default_value_t = 0.05, value_parser = sim_seconds)]
        sim_seconds: f64,
        /// Seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

/// `--precision`: a finite percent above zero.
fn positive_percent(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err("expected a positive percent, such as 2 or 0.5".into()),
    }
}

/// `--max-wall-seconds`: a finite number of seconds above zero.
fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err("expected a positive number of seconds, such as 600 or 0.5".into()),
    }
}

/// `--sim-seconds`: more than 0 and at most 100 simulated seconds.
fn sim_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 100.0 => Ok(v),
        _ => Err("expected simulated seconds, more than 0 and at most 100".into()),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (bound, progress) = match &cli.command {
        Command::Validate {
            max_wall_seconds,
            cross_validate,
            ..
        } => (*max_wall_seconds, !cross_validate),
        Command::Run {
            max_wall_seconds, ..
        } => (*max_wall_seconds, true),
        Command::Calibrate {
            max_wall_seconds, ..
        } => (*max_wall_seconds, false),
        Command::Sweep {
            max_wall_seconds, ..
        } => (*max_wall_seconds, true),
        Command::Place {
            max_wall_seconds, ..
        } => (*max_wall_seconds, false),
        _ => (None, false),
    };
    iosim::validate::set_wall_clock_bound(bound);
    if progress && std::io::stderr().is_terminal() {
        iosim::validate::set_progress_hook(Some(progress::tick));
    }
    let result = execute(cli);
    progress::end();
    match result.and_then(|text| emit(&text)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Several input errors: one line each, then how many.
            for one in e.list() {
                diag(&format!("error: {one}"));
            }
            if let Error::Many { errors, omitted } = &e {
                if *omitted > 0 {
                    diag(&iosim::error::omitted_text(*omitted));
                }
                diag(&format!("{} errors", errors.len() + omitted));
            }
            ExitCode::from(match e {
                Error::EventLimit { .. } => 3,
                Error::Usage(_) => 2,
                Error::Internal(_) | Error::Render { .. } => 4,
                Error::WallClock { .. } => 5,
                _ => 1,
            })
        }
    }
}

/// The progress line of `run` and `validate` on a terminal: experiments done
/// of the total, rewritten in place on standard error.
mod progress {
    use std::io::Write as _;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static TOTAL: AtomicUsize = AtomicUsize::new(0);
    static DONE: AtomicUsize = AtomicUsize::new(0);
    static SHOWN: AtomicUsize = AtomicUsize::new(0);

    /// Adds `n` experiments to the total announced.
    pub fn add_total(n: usize) {
        TOTAL.fetch_add(n, Ordering::Relaxed);
    }

    /// One experiment done (the hook given to the library).
    pub fn tick() {
        let done = DONE.fetch_add(1, Ordering::Relaxed) + 1;
        let total = TOTAL.load(Ordering::Relaxed).max(done);
        SHOWN.store(1, Ordering::Relaxed);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{done}/{total} experiments done");
        let _ = err.flush();
    }

    /// Clears the progress line, if one was shown.
    pub fn end() {
        if SHOWN.load(Ordering::Relaxed) == 1 {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}

/// Writes the command's output to standard output. A reader that went away
/// (a closed pipe, as in `iosim params | head -1`) ends the run quietly with
/// exit code 0: the reader has what it wanted. Any other failure (a full
/// disk) is an [`Error::Write`], exit code 1.
fn emit(text: &str) -> iosim::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(source) => Err(Error::Write {
            path: PathBuf::from("<standard output>"),
            source,
        }),
    }
}

/// Writes one diagnostic line to standard error. A standard error that cannot
/// be written (closed, full) is ignored: there is nowhere left to say so.
/// Control characters (from input files) are escaped.
pub(crate) fn diag(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", report::escape_control(line));
}

fn execute(cli: Cli) -> iosim::Result<String> {
    match cli.command {
        Command::Validate {
            common,
            cross_validate: true,
            calibration,
            cold,
            ..
        } => fit_cli::cross_validate_cmd(&common, &calibration, cold),
        Command::Calibrate {
            common,
            calibration,
            output,
            force,
            refit,
            ..
        } => fit_cli::calibrate_cmd(&common, &calibration, &output, force, refit),
        Command::Validate {
            common,
            plot,
            paper,
            ..
        } => {
            let v = run_validation(&common, paper.as_deref())?;
            let mut rep = Report {
                command: "validate".into(),
                seed: common.seed,
                ..Default::default()
            };
            rep.meta.push(("parameters".into(), v.parameters.clone()));
            if let Some(sc) = paper.as_ref().and(v.scenarios.first()) {
                rep.meta.push(("paper".into(), sc.source.clone()));
            }
            rep.meta
                .push(("scenarios".into(), v.scenarios.len().to_string()));
            rep.sections.push(figures_section(&v.rows));
            rep.sections.push(papers_section(&v.rows));
            rep.sections.push(experiments_section(&v.pairs()));
            if let Some(dir) = plot {
                let charts = v.charts(None, common.seed)?;
                report::write_charts(&dir, &charts)?;
                write_csvs(&dir, &v.rows, common.seed)?;
            }
            Ok(rep.render(common.format.into()))
        }
        Command::Plot {
            common,
            out,
            cross_validation,
        } => {
            let cv = read_cv(cross_validation.as_deref())?;
            let v = run_validation(&common, None)?;
            let charts = v.charts(cv.as_deref(), common.seed)?;
            report::write_charts(&out, &charts)?;
            write_csvs(&out, &v.rows, common.seed)?;
            let mut rep = Report {
                command: "plot".into(),
                seed: common.seed,
                ..Default::default()
            };
            rep.meta.push(("parameters".into(), v.parameters.clone()));
            rep.meta.push(("out".into(), out.display().to_string()));
            rep.sections.push(charts_section(&out, &charts));
            Ok(rep.render(common.format.into()))
        }
        Command::Report {
            common,
            out,
            cross_validation,
        } => {
            let cv = read_cv(cross_validation.as_deref())?;
            let mut v = run_validation(&common, None)?;
            let charts = v.charts(cv.as_deref(), common.seed)?;
            let fitted = match (&common.params, common.hand_set) {
                (Some(p), _) => Some((p.display().to_string(), iosim::loader::read(p)?)),
                (None, true) => None,
                (None, false) => iosim::loader::bundled_files("models/fitted.toml")
                    .into_iter()
                    .next()
                    .map(|(p, t)| (format!("<bundled>/{p}"), t.to_string())),
            };
            let html = report_page(&mut v, &common, &charts, fitted, cv.as_deref());
            report::write_file(&out, &html).map_err(|source| Error::Write {
                path: out.clone(),
                source,
            })?;
            let mut s = sections_new("files", &["file", "bytes", "charts"]);
            s.rows.push(vec![
                report::Cell::Text(out.display().to_string()),
                report::Cell::Int(html.len() as u64),
                report::Cell::Int(charts.len() as u64),
            ]);
            let rep = Report {
                command: "report".into(),
                seed: common.seed,
                meta: vec![("parameters".into(), v.parameters.clone())],
                sections: vec![s],
            };
            Ok(rep.render(common.format.into()))
        }
        Command::Run {
            scenario,
            common,
            replications,
            precision,
            ..
        } => {
            let (reg, parameters) = common.registry()?;
            let sc = load_scenario(&scenario, &reg)?;
            let runs = if replications > 1 {
                1 + replications
            } else {
                1
            };
            progress::add_total(sc.experiments.len() * runs as usize);
            let results = run_scenario(&reg, &sc, common.seed, common.threads)?;
            let mut rep = Report {
                command: format!("run {}", scenario.display()),
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
            let rows = figure_rows(&reg, &sc, &pairs[0].1);
            if !rows.is_empty() {
                rep.sections.push(figures_section(&rows));
                rep.sections.push(papers_section(&rows));
            }
            if replications > 1 {
                rep.meta.push((
                    "replications".into(),
                    format!("{replications}, 95% intervals; warn above {precision}% of the mean"),
                ));
                let r = sections::replications(
                    &reg,
                    &sc,
                    common.seed,
                    common.threads,
                    replications,
                    precision,
                )?;
                if !r.warnings.rows.is_empty() {
                    diag(&format!("warning: {} metrics have a 95% interval wider than {precision}% of their mean; add replications or lengthen [run] duration_ms", r.warnings.rows.len()));
                }
                rep.sections.push(r.table);
                rep.sections.push(r.warnings);
            }
            Ok(rep.render(common.format.into()))
        }
        Command::Sweep {
            scenario,
            vary,
            experiment,
            common,
            replications,
            plot,
            ..
        } => {
            let (mut reg, parameters) = common.registry()?;
            let sc = load_scenario(&scenario, &reg)?;
            if vary.len() > 2 {
                return Err(Error::Usage(
                    "--vary: at most two (one line per value of the second)".into(),
                ));
            }
            let axes = vary
                .iter()
                .map(|v| iosim::sweep::parse_vary(&mut reg, v))
                .collect::<iosim::Result<Vec<_>>>()?;
            let points: usize = axes.iter().map(|a| a.values.len()).product();
            let exps = match &experiment {
                Some(_) => 1,
                None => sc.experiments.len(),
            };
            progress::add_total(points * exps * replications as usize);
            let sweep = iosim::sweep::run_sweep(
                &reg,
                &sc,
                experiment.as_deref(),
                axes,
                replications,
                common.seed,
                common.threads,
            )?;
            let mut rep = Report {
                command: format!("sweep {}", scenario.display()),
                seed: common.seed,
                ..Default::default()
            };
            rep.meta.push(("parameters".into(), parameters));
            rep.meta.push(("scenario".into(), sc.name.clone()));
            for a in &sweep.axes {
                rep.meta.push((
                    format!("vary {}", a.name),
                    format!("{} ({})", a.labels.join(", "), a.unit),
                ));
            }
            rep.meta.push((
                "run".into(),
                format!(
                    "warm-up {} ms discarded, {} ms measured; {replications} replication(s) per point, 95% intervals (ci_low = ci_high = mean with one)",
                    sc.run.warmup_ms, sc.run.duration_ms
                ),
            ));
            rep.sections = sections::sweep_sections(&sc.name, &sweep);
            if let Some(dir) = plot {
                let charts = sections::sweep_plot_files(&sc.name, &sweep, common.seed)
                    .iter()
                    .map(|(stem, chart)| iosim::charts::render(stem, chart))
                    .collect::<iosim::Result<Vec<_>>>()?;
                report::write_charts(&dir, &charts)?;
            }
            Ok(rep.render(common.format.into()))
        }
        Command::Place {
            request,
            server,
            testbed,
            cells,
            objective,
            min_mb_s,
            card,
            workload,
            common,
            top,
            simulate,
            ..
        } => {
            let from = match (&request, &server) {
                (Some(file), _) => PlaceFrom::File(file.clone()),
                (None, Some(server)) => PlaceFrom::Args {
                    server: server.clone(),
                    testbed: testbed.unwrap_or_default(),
                    cells,
                    objective,
                    min_mb_s,
                    cards: card,
                    workloads: workload,
                },
                (None, None) => {
                    return Err(Error::Usage(
                        "place: give a request file or --server".into(),
                    ))
                }
            };
            place_cmd(&from, &common, top, simulate)
        }
        Command::Params { common } => {
            let (mut reg, parameters) = common.registry()?;
            let rep = Report {
                command: "params".into(),
                seed: common.seed,
                meta: vec![("parameters".into(), parameters)],
                sections: vec![sections::params_section(&mut reg)],
            };
            Ok(rep.render(common.format.into()))
        }
        Command::Show {
            which:
                ShowCmd::Server {
                    name,
                    models,
                    params,
                    hand_set,
                    format,
                },
        } => {
            let (reg, parameters) = registry(&models, params.as_ref(), hand_set)?;
            let server = iosim::show::find_server(&reg, name.as_deref())?;
            let tree = iosim::show::server_tree(&reg, server)?;
            let format = match format {
                ShowFormat::Dot => return Ok(sections::server_tree_dot(&tree)),
                ShowFormat::Table => Format::Table,
                ShowFormat::Csv => Format::Csv,
                ShowFormat::Json => Format::Json,
            };
            let rep = Report {
                command: format!("show server {}", tree.server),
                meta: vec![("parameters".into(), parameters)],
                sections: vec![sections::server_tree_section(
                    &tree,
                    format == Format::Table,
                )],
                ..Default::default()
            };
            Ok(rep.render(format))
        }
        Command::Bench {
            which:
                BenchCmd::BusContention {
                    masters,
                    sim_seconds,
                    seed,
                },
        } => {
            let r = iosim::bench::bus_contention(masters, sim_seconds, seed);
            Ok(format!(
                "masters={} sim_seconds={} seed={} transactions={} wall_s={:.3} tx_per_wall_s={:.0} bus_MB_s={:.1} per_master_MB_s={:.1}\n",
                r.masters, r.sim_seconds, r.seed, r.transactions, r.wall_s, r.tx_per_wall_s, r.bus_mb_s, r.per_master_mb_s
            ))
        }
    }
}

/// Writes `DIR/<paper>.csv`, the figures behind the charts, for each paper.
fn write_csvs(dir: &std::path::Path, rows: &[FigureRow], seed: u64) -> iosim::Result<()> {
    for (name, text) in sections::plot_files(rows, seed) {
        let path = dir.join(name);
        report::write_file(&path, &text).map_err(|source| Error::Write { path, source })?;
    }
    Ok(())
}

/// A section named `name` with these fields.
fn sections_new(name: &str, fields: &[&str]) -> report::Section {
    report::Section::new(name, fields)
}

/// The cross-validation groups of `--cross-validation FILE`, if given.
fn read_cv(path: Option<&std::path::Path>) -> iosim::Result<Option<Vec<iosim::charts::CvGroup>>> {
    match path {
        None => Ok(None),
        Some(p) => {
            let text = iosim::loader::read(p)?;
            iosim::charts::cv_groups(p, &text).map(Some)
        }
    }
}

/// One run of every bundled scenario with published figures.
struct Validation {
    reg: Registry,
    parameters: String,
    scenarios: Vec<iosim::model::Scenario>,
    results: Vec<Vec<iosim::sim::ExperimentResult>>,
    rows: Vec<FigureRow>,
}

impl Validation {
    fn pairs(&self) -> Vec<(&iosim::model::Scenario, Vec<iosim::sim::ExperimentResult>)> {
        self.scenarios
            .iter()
            .zip(self.results.iter().cloned())
            .collect()
    }

    /// The widest 95% interval of the throughputs of the experiment behind
    /// a throughput figure, in percent (none for a figure of the CPUs or a
    /// run of one batch).
    fn interval_pct(&self, r: &FigureRow) -> Option<f64> {
        if r.unit == "%" || r.unit == "ms CPU per MB" {
            return None;
        }
        self.scenarios
            .iter()
            .zip(&self.results)
            .filter(|(sc, _)| sc.source == r.paper)
            .flat_map(|(_, res)| res.iter())
            .find(|e| e.id == r.experiment)
            .map(|e| e.ci95_pct)
            .filter(|p| p.is_finite() && *p > 0.0)
    }

    /// Every chart of `iosim plot`, rendered.
    fn charts(
        &self,
        cv: Option<&[iosim::charts::CvGroup]>,
        seed: u64,
    ) -> iosim::Result<Vec<iosim::charts::Rendered>> {
        iosim::charts::validation_charts(&self.rows, &|r| self.interval_pct(r), cv, seed)
            .iter()
            .map(|(stem, chart)| iosim::charts::render(stem, chart))
            .collect()
    }
}

/// Runs the bundled scenarios that have published figures (only those of
/// `paper`, see [`iosim::validate::keep_paper`]) and sets the model beside
/// each figure.
fn run_validation(common: &Common, paper: Option<&str>) -> iosim::Result<Validation> {
    let (reg, parameters) = common.registry()?;
    let mut scenarios = load_bundled_scenarios(&reg)?;
    scenarios.retain(iosim::model::Scenario::has_figures);
    if let Some(name) = paper {
        iosim::validate::keep_paper(&mut scenarios, name)?;
    }
    progress::add_total(scenarios.iter().map(|sc| sc.experiments.len()).sum());
    let results = run_scenarios(&reg, &scenarios, common.seed, common.threads, None)?;
    let mut rows = Vec::new();
    for (sc, res) in scenarios.iter().zip(&results) {
        rows.extend(figure_rows(&reg, sc, res));
    }
    Ok(Validation {
        reg,
        parameters,
        scenarios,
        results,
        rows,
    })
}

/// The charts written, one row each.
fn charts_section(dir: &std::path::Path, charts: &[iosim::charts::Rendered]) -> report::Section {
    let mut s = sections_new("charts", &["chart", "title", "svg", "png"]);
    for c in charts {
        s.rows.push(vec![
            report::Cell::Text(c.stem.clone()),
            report::Cell::Text(c.title.clone()),
            report::Cell::Text(dir.join(format!("{}.svg", c.stem)).display().to_string()),
            report::Cell::Text(dir.join(format!("{}.png", c.stem)).display().to_string()),
        ]);
    }
    s
}

/// The HTML of `iosim report`.
fn report_page(
    v: &mut Validation,
    common: &Common,
    charts: &[iosim::charts::Rendered],
    fitted: Option<(String, String)>,
    cv: Option<&[iosim::charts::CvGroup]>,
) -> String {
    use iosim::html::Block;
    let facts = vec![
        (
            "tool".to_string(),
            format!("iosim {}", env!("CARGO_PKG_VERSION")),
        ),
        ("command".into(), "report".into()),
        ("seed".into(), common.seed.to_string()),
        ("parameters".into(), v.parameters.clone()),
        ("units".into(), report::UNITS.to_string()),
        ("scenarios".into(), v.scenarios.len().to_string()),
        ("figures".into(), v.rows.len().to_string()),
    ];
    // Results first (what a reader looks at), the inputs after them.
    let mut inputs = vec![Block::Heading("Inputs: scenarios".into())];
    let b = &mut inputs;
    let mut sc = sections_new(
        "scenarios",
        &[
            "scenario",
            "title",
            "paper",
            "file",
            "experiments",
            "figures",
        ],
    );
    for s in &v.scenarios {
        sc.rows.push(vec![
            report::Cell::Text(s.name.clone()),
            report::Cell::Text(s.title.clone()),
            report::Cell::Text(s.source.clone()),
            report::Cell::Text(s.file.display().to_string()),
            report::Cell::Int(s.experiments.len() as u64),
            report::Cell::Int(s.experiments.iter().map(|e| e.figures.len()).sum::<usize>() as u64),
        ]);
    }
    b.push(Block::Table(sc));
    b.push(Block::Heading("Inputs: models".into()));
    let mut m = sections_new("models", &["kind", "name", "file"]);
    let mut add = |kind: &str, name: &str, at: &iosim::error::Location| {
        m.rows.push(vec![
            report::Cell::Text(kind.into()),
            report::Cell::Text(name.into()),
            report::Cell::Text(format!("{}:{}", at.file.display(), at.line)),
        ]);
    };
    for (n, x) in &v.reg.servers {
        add("server", n, &x.at);
    }
    for (n, x) in &v.reg.adapters {
        add("adapter", n, &x.at);
    }
    for (n, x) in &v.reg.buses {
        add("bus", n, &x.at);
    }
    for (n, x) in &v.reg.links {
        add("link", n, &x.at);
    }
    for (n, x) in &v.reg.cpus {
        add("cpu", n, &x.at);
    }
    for (n, x) in &v.reg.testbeds {
        add("testbed", n, &x.at);
    }
    b.push(Block::Table(m));
    b.push(Block::Heading(
        "Inputs: model parameters and their sources".into(),
    ));
    b.push(Block::Text(format!(
        "Every parameter of every model, as written in its file, with the free parameters set from: {}.",
        v.parameters
    )));
    b.push(Block::Table(sections::params_section(&mut v.reg)));
    let mut b = Vec::new();
    let n_groups = charts
        .iter()
        .filter(|c| !c.stem.ends_with("-residuals") && c.stem != "cross-validation")
        .count();
    b.push(Block::Heading("Paper figures redrawn".into()));
    b.push(Block::Text(format!(
        "{n_groups} charts: each figure or table of each paper, the paper's value (grey) beside the model's (blue), the error on the model's bar."
    )));
    for c in charts
        .iter()
        .filter(|c| !c.stem.ends_with("-residuals") && c.stem != "cross-validation")
    {
        b.push(Block::Chart(c.clone()));
    }
    b.push(Block::Heading("Validation".into()));
    b.push(Block::Table(papers_section(&v.rows)));
    b.push(Block::Table(figures_section(&v.rows)));
    b.push(Block::Table(experiments_section(&v.pairs())));
    b.push(Block::Heading("Calibration".into()));
    for c in charts.iter().filter(|c| c.stem.ends_with("-residuals")) {
        b.push(Block::Chart(c.clone()));
    }
    match fitted {
        Some((name, text)) => {
            b.push(Block::Text(format!(
                "The fitted values in use ({name}), as iosim calibrate wrote them, with their 95% intervals:"
            )));
            b.push(Block::Pre(text));
        }
        None => b.push(Block::Text(
            "No fit applied (--hand-set): the model files' own values.".into(),
        )),
    }
    if let Some((p, text)) = iosim::loader::bundled_files("models/calibration.toml")
        .into_iter()
        .next()
    {
        b.push(Block::Text(format!(
            "The free parameters, their bounds and what the fit weighs (<bundled>/{p}):"
        )));
        b.push(Block::Pre(text.to_string()));
    }
    if let Some(cv) = cv {
        b.push(Block::Heading("Cross-validation".into()));
        let mut t = sections_new(
            "cross_validation",
            &[
                "paper",
                "group",
                "figures",
                "fitted_mape_pct",
                "held_out_mape_pct",
                "objective_fold_fit",
                "objective_full_fit",
            ],
        );
        for g in cv {
            // NaN where the fold refit nothing or the file has no objectives.
            let (at_fold, at_full) = g.objectives.unwrap_or((f64::NAN, f64::NAN));
            t.rows.push(vec![
                report::Cell::Text(g.paper.clone()),
                report::Cell::Text(g.group.clone()),
                report::Cell::Int(g.figures as u64),
                report::Cell::Num(g.fitted_mape, 2),
                report::Cell::Num(g.held_out_mape, 2),
                report::Cell::Num(at_fold, 6),
                report::Cell::Num(at_full, 6),
            ]);
        }
        b.push(Block::Table(t));
        for c in charts.iter().filter(|c| c.stem == "cross-validation") {
            b.push(Block::Chart(c.clone()));
        }
    }
    b.extend(inputs);
    iosim::html::report_html("iosim: model beside the published figures", &facts, &b)
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
        threads: common.threads,
        simulate,
        ..Default::default()
    };
    let p = iosim::place::place(&reg, &req, opt)?;
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
        .push(("search".into(), iosim::place::search_text(&p)));
    rep.meta.push((
        "run".into(),
        format!(
            "each placement simulated with warm-up {} ms discarded, {} ms measured; seed of a placement hashed from --seed and its description",
            req.run.warmup_ms, req.run.duration_ms
        ),
    ));
    rep.sections = iosim::place::place_sections(&p, top);
    Ok(rep.render(common.format.into()))
}
