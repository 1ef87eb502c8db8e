//! `iosim validate`: every bundled scenario with published figures run, each
//! figure beside the model (`figures`, `papers`, the line-rate estimate
//! beside the model in `napkin`, `experiments`), the charts
//! of `plot` with `--plot DIR`; with `--cross-validate`, the
//! cross-validation of [`super::cross_validate`].

use std::path::PathBuf;

use iosim::app::Runner;
use iosim::report::Report;
use iosim::sections::{experiments_section, figures_section, papers_section};

use super::{positive_seconds, Common};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// Also write into DIR the charts `iosim plot --out DIR` draws (SVG
    /// and PNG: each paper figure or table, the residuals per paper) and
    /// per paper the CSV behind them.
    #[arg(long, value_name = "DIR", conflicts_with = "cross_validate")]
    pub plot: Option<PathBuf>,
    /// With --plot: write into a directory that already holds charts,
    /// replacing those of the same names (regular files only).
    #[arg(long, requires = "plot")]
    pub force: bool,
    /// Only the figures of this paper (its name as the papers section
    /// prints it, or the start of that name: hp-rp8400, hp-atm, matrox);
    /// each run and prediction is what the whole validation gives. With
    /// --cross-validate: the cross-validation of that paper's figures
    /// alone (its fit and folds see no other paper's figures; no coverage,
    /// which needs other papers; --spread-out writes the spread of that
    /// paper's held-out figures).
    #[arg(long, value_name = "NAME")]
    pub paper: Option<String>,
    /// Predict each figure group from a fit that left it out (slow: one fit per group).
    #[arg(long)]
    pub cross_validate: bool,
    /// With --cross-validate: also write the structural spread by
    /// mechanism family it measured (every paper's held-out figures at
    /// every seed) to FILE, a `kind = "spread"` file that `--spread FILE`
    /// reads (models/spread.toml is the bundled one).
    #[arg(long, value_name = "FILE", requires = "cross_validate")]
    pub spread_out: Option<PathBuf>,
    /// With --spread-out: replace FILE if it exists (a regular file only).
    #[arg(long, requires = "spread_out")]
    pub force_spread: bool,
    /// Calibration file for --cross-validate (default: the bundled models/calibration.toml).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// With --cross-validate: fit every figure from the calibration's
    /// initial values across each parameter's range (as `calibrate`),
    /// instead of refitting near the values in use (as `calibrate
    /// --refit`; with --hand-set there is no fit in use, and the full
    /// fit starts from the initial values). Slower; the folds start from
    /// the initial values either way.
    #[arg(long, requires = "cross_validate")]
    pub cold: bool,
    /// Also the calibration status of every experiment (`calibration`,
    /// `assumed`): each assumed value it reads moved over its range, two
    /// runs more per value (slow: minutes for every bundled figure).
    #[arg(long, conflicts_with = "cross_validate")]
    pub sensitivity: bool,
    /// Stop with exit code 5 if the run takes longer than this many
    /// wall-clock seconds (checked as the simulations run).
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub max_wall_seconds: Option<f64>,
    /// With --cross-validate: run the I-th of N equal parts of its work
    /// (each fold at each seed, then the validation at each seed) and
    /// write a part file to standard output; `iosim merge` joins the parts
    /// into the output one run gives, byte for byte.
    #[arg(long, value_name = "I/N", value_parser = super::shard, requires = "cross_validate")]
    pub shard: Option<(u64, u64)>,
}

/// `iosim validate`.
pub fn execute(a: Args, runner: &Runner) -> iosim::Result<String> {
    if a.cross_validate {
        let spread_out = a
            .spread_out
            .as_deref()
            .map(|p| {
                let inputs: Vec<&std::path::Path> = [
                    a.calibration.as_deref(),
                    a.common.params.as_deref(),
                    a.common.spread.as_deref(),
                ]
                .into_iter()
                .flatten()
                .collect();
                iosim::report::Output::file(p, a.force_spread, &inputs)
            })
            .transpose()?;
        return super::cross_validate::execute(
            &a.common,
            &a.calibration,
            a.cold,
            spread_out.as_ref(),
            a.paper.as_deref(),
            a.shard,
            runner,
        );
    }
    let common = &a.common;
    let plot = a
        .plot
        .as_deref()
        .map(|d| super::plot::chart_dir(d, a.force, common, None))
        .transpose()?;
    let (reg, parameters) = common.registry()?;
    let v = iosim::app::validation(&reg, a.paper.as_deref(), common.seed, runner)?;
    let mut rep = Report {
        command: "validate".into(),
        seed: common.seed,
        ..Default::default()
    };
    rep.meta.push(("parameters".into(), parameters));
    if let Some(sc) = a.paper.as_ref().and(v.scenarios.first()) {
        rep.meta.push(("paper".into(), sc.source.clone()));
    }
    rep.meta
        .push(("scenarios".into(), v.scenarios.len().to_string()));
    let warnings = iosim::warnings::of_scenarios(&reg, &v.pairs());
    for w in &warnings {
        super::diag(&format!("warning: {w}"));
    }
    rep.warnings = Some(warnings);
    rep.sections.push(figures_section(&v.rows));
    rep.sections.push(papers_section(&v.rows));
    rep.sections.push(iosim::napkin::section(
        &v.rows,
        &iosim::napkin::estimates(&reg, &v.scenarios),
    ));
    rep.sections.push(experiments_section(&v.pairs()));
    if a.sensitivity {
        let (values, effects) = iosim::app::validation_effects(&reg, &v, common.seed, runner)?;
        rep.sections
            .extend(iosim::sections::calibration_sections(&values, &effects));
    }
    if let Some(out) = plot {
        let charts = super::plot::charts(&v, None, common.seed)?;
        super::plot::write_charts_and_csvs(&out, &charts, &v.rows, common.seed)?;
    }
    Ok(rep.render(common.out_format()))
}
