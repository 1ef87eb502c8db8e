//! `iosim plot`: every paper figure and table redrawn (paper beside model),
//! the calibration residuals and, given a file, the cross-validation, as SVG
//! and PNG files, with the CSV per paper behind them; the report lists the
//! charts written. `validate --plot` and `report` draw the same charts.

use std::path::{Path, PathBuf};

use iosim::app::{Runner, Validation};
use iosim::charts::{CvGroup, Rendered};
use iosim::model::Registry;
use iosim::report::{self, Cell, Format, Report, Section};
use iosim::sections::figures_section;
use iosim::validate::summarise;
use iosim::validate::FigureRow;

use super::Common;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// Directory to write the charts into (created if needed; its parent
    /// must exist).
    #[arg(long, value_name = "DIR", default_value = "plots")]
    pub out: PathBuf,
    /// Write into a --out directory that already holds charts, replacing
    /// those of the same names (regular files only).
    #[arg(long)]
    pub force: bool,
    /// JSON written by `iosim validate --cross-validate --format json`:
    /// also chart held-out against fitted error per group.
    #[arg(long, value_name = "FILE")]
    pub cross_validation: Option<PathBuf>,
}

/// What `plot` and `report` draw: the validation of every bundled
/// scenario and its charts, with the cross-validation of a file.
pub struct Drawn {
    /// The models run.
    pub reg: Registry,
    /// Which values of the free parameters they use, in words.
    pub parameters: String,
    /// The validation.
    pub v: Validation,
    /// The cross-validation groups of `--cross-validation FILE`, if given.
    pub cv: Option<Vec<CvGroup>>,
    /// Every chart, rendered.
    pub charts: Vec<Rendered>,
}

/// Runs the validation and renders its charts (the cross-validation file
/// read first, so a bad one fails before any run).
pub fn drawn(
    common: &Common,
    cross_validation: Option<&Path>,
    runner: &Runner,
) -> iosim::Result<Drawn> {
    let cv = read_cv(cross_validation)?;
    let (reg, parameters) = common.registry()?;
    let v = iosim::app::validation(&reg, None, common.seed, runner)?;
    let charts = charts(&v, cv.as_deref(), common.seed)?;
    Ok(Drawn {
        reg,
        parameters,
        v,
        cv,
        charts,
    })
}

/// `iosim plot`.
pub fn execute(a: Args, runner: &Runner) -> iosim::Result<String> {
    let common = &a.common;
    let out = chart_dir(&a.out, a.force, common, a.cross_validation.as_deref())?;
    let Drawn {
        parameters,
        v,
        charts,
        ..
    } = drawn(common, a.cross_validation.as_deref(), runner)?;
    write_charts_and_csvs(&out, &charts, &v.rows, common.seed)?;
    let mut rep = Report {
        command: "plot".into(),
        seed: common.seed,
        ..Default::default()
    };
    rep.meta.push(("parameters".into(), parameters));
    rep.meta.push(("out".into(), a.out.display().to_string()));
    rep.sections.push(charts_section(&a.out, &charts));
    Ok(rep.render(common.out_format()))
}

/// Every chart of `iosim plot` of validation `v`, rendered.
pub fn charts(v: &Validation, cv: Option<&[CvGroup]>, seed: u64) -> iosim::Result<Vec<Rendered>> {
    iosim::charts::validation_charts(&v.rows, &|r| v.interval_pct(r), cv, seed)
        .iter()
        .map(|(stem, chart)| iosim::charts::render(stem, chart))
        .collect()
}

/// The chart directory `dir` of a command, checked before any work:
/// `--force` replaces charts in it; `--params` and `extra` are inputs it
/// must not replace.
pub fn chart_dir(
    dir: &Path,
    force: bool,
    common: &Common,
    extra: Option<&Path>,
) -> iosim::Result<report::Output> {
    let inputs: Vec<&Path> = [extra, common.params.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    report::Output::dir(dir, force, &inputs)
}

/// Writes the charts into `out` and, for each paper, `<paper>.csv`, the
/// figures behind them: all checked before any is written.
pub fn write_charts_and_csvs(
    out: &report::Output,
    charts: &[Rendered],
    rows: &[FigureRow],
    seed: u64,
) -> iosim::Result<()> {
    let csvs = plot_files(rows, seed);
    let mut files = report::chart_files(charts);
    files.extend(csvs.iter().map(|(n, t)| (n.clone(), t.as_bytes())));
    out.write_files(&files).map(drop)
}

/// The cross-validation groups of `--cross-validation FILE`, if given.
fn read_cv(path: Option<&Path>) -> iosim::Result<Option<Vec<CvGroup>>> {
    match path {
        None => Ok(None),
        Some(p) => {
            let text = iosim::loader::read(p)?;
            iosim::charts::cv_groups(p, &text).map(Some)
        }
    }
}

/// The charts written, one row each.
fn charts_section(dir: &Path, charts: &[Rendered]) -> Section {
    let mut s = Section::new("charts", &["chart", "title", "svg", "png"]);
    for c in charts {
        s.rows.push(vec![
            Cell::Text(c.stem.clone()),
            Cell::Text(c.title.clone()),
            Cell::Text(dir.join(format!("{}.svg", c.stem)).display().to_string()),
            Cell::Text(dir.join(format!("{}.png", c.stem)).display().to_string()),
        ]);
    }
    s
}

/// The CSV files behind the charts of `iosim plot`, per paper:
/// `<paper>.csv` (the paper's name made file-name safe: no spaces, colons
/// or brackets), the figures of the paper (the `figures` section). Returns
/// (file name, text) pairs; the caller writes them.
fn plot_files(rows: &[FigureRow], seed: u64) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for p in summarise(rows) {
        let mine: Vec<FigureRow> = rows
            .iter()
            .filter(|r| r.paper == p.paper)
            .cloned()
            .collect();
        let stem = iosim::charts::slug(&p.paper.replace(".txt", ""));
        let rep = Report {
            command: "plot".into(),
            seed,
            meta: vec![],
            warnings: None,
            sections: vec![figures_section(&mine)],
        };
        files.push((format!("{stem}.csv"), rep.render(Format::Csv)));
    }
    files
}
