//! `iosim report`: one self-contained HTML file (inputs, parameters and
//! their sources, every redrawn figure, the validation and calibration and,
//! given a file, cross-validation tables, version and seed) written to
//! `--out`; the report lists the file written.

use std::path::PathBuf;

use iosim::app::{Runner, Validation};
use iosim::charts::{CvGroup, Rendered};
use iosim::error::Location;
use iosim::model::Registry;
use iosim::report::{self, Cell, Report, Section};
use iosim::sections::{experiments_section, figures_section, papers_section, params_section};

use super::plot::{drawn, Drawn};
use super::Common;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// The HTML file to write (a new file, unless --force).
    #[arg(long, value_name = "FILE", default_value = "report.html")]
    pub out: PathBuf,
    /// Replace the --out file if it exists (a regular file only).
    #[arg(long)]
    pub force: bool,
    /// JSON written by `iosim validate --cross-validate --format json`.
    #[arg(long, value_name = "FILE")]
    pub cross_validation: Option<PathBuf>,
    /// Also the calibration status of every experiment (each assumed value
    /// it reads moved over its range; slow: minutes for every bundled figure).
    #[arg(long)]
    pub sensitivity: bool,
}

/// `iosim report`.
pub fn execute(a: Args, runner: &Runner) -> iosim::Result<String> {
    let common = &a.common;
    let inputs: Vec<&std::path::Path> = [a.cross_validation.as_deref(), common.params.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    let out = report::Output::file(&a.out, a.force, &inputs)?;
    let Drawn {
        mut reg,
        parameters,
        v,
        cv,
        charts,
    } = drawn(common, a.cross_validation.as_deref(), runner)?;
    let fitted = match (&common.params, common.hand_set) {
        (Some(p), _) => Some((p.display().to_string(), iosim::loader::read(p)?)),
        (None, true) => None,
        (None, false) => iosim::loader::bundled_files("models/fitted.toml")
            .into_iter()
            .next()
            .map(|(p, t)| (format!("<bundled>/{p}"), t.to_string())),
    };
    let warnings = iosim::warnings::of_scenarios(&reg, &v.pairs());
    for w in &warnings {
        super::diag(&format!("warning: {w}"));
    }
    let status = if a.sensitivity {
        let (values, effects) = iosim::app::validation_effects(&reg, &v, common.seed, runner)?;
        Some(iosim::sections::calibration_sections(&values, &effects))
    } else {
        None
    };
    let html = report_page(
        &mut reg,
        &parameters,
        &v,
        common.seed,
        &charts,
        Extras {
            fitted,
            cv: cv.as_deref(),
            status,
        },
    );
    out.write(html.as_bytes())?;
    let mut s = Section::new("files", &["file", "bytes", "charts"]);
    s.rows.push(vec![
        Cell::Text(a.out.display().to_string()),
        Cell::Int(html.len() as u64),
        Cell::Int(charts.len() as u64),
    ]);
    let rep = Report {
        command: "report".into(),
        seed: common.seed,
        meta: vec![("parameters".into(), parameters)],
        warnings: Some(warnings),
        sections: vec![s],
    };
    Ok(rep.render(common.out_format()))
}

/// The HTML of `iosim report`.
/// What the page shows beside the validation when it was asked for or
/// found.
struct Extras<'a> {
    /// The fitted file in use (its name and text), `None` with --hand-set.
    fitted: Option<(String, String)>,
    /// The cross-validation read from --cross-validation.
    cv: Option<&'a [CvGroup]>,
    /// The calibration status (`calibration`, `assumed`), with --sensitivity.
    status: Option<[Section; 2]>,
}

fn report_page(
    reg: &mut Registry,
    parameters: &str,
    v: &Validation,
    seed: u64,
    charts: &[Rendered],
    extras: Extras,
) -> String {
    use iosim::html::Block;
    let Extras { fitted, cv, status } = extras;
    let facts = vec![
        (
            "tool".to_string(),
            format!("iosim {}", env!("CARGO_PKG_VERSION")),
        ),
        ("command".into(), "report".into()),
        ("seed".into(), seed.to_string()),
        ("parameters".into(), parameters.to_string()),
        ("units".into(), iosim::report::UNITS.to_string()),
        ("scenarios".into(), v.scenarios.len().to_string()),
        ("figures".into(), v.rows.len().to_string()),
    ];
    // Results first (what a reader looks at), the inputs after them.
    let mut inputs = vec![Block::Heading("Inputs: scenarios".into())];
    let b = &mut inputs;
    let mut sc = Section::new(
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
            Cell::Text(s.name.clone()),
            Cell::Text(s.title.clone()),
            Cell::Text(s.source.clone()),
            Cell::Text(s.file.display().to_string()),
            Cell::Int(s.experiments.len() as u64),
            Cell::Int(s.experiments.iter().map(|e| e.figures.len()).sum::<usize>() as u64),
        ]);
    }
    b.push(Block::Table(sc));
    b.push(Block::Heading("Inputs: models".into()));
    let mut m = Section::new("models", &["kind", "name", "file"]);
    let mut add = |kind: &str, name: &str, at: &Location| {
        m.rows.push(vec![
            Cell::Text(kind.into()),
            Cell::Text(name.into()),
            Cell::Text(format!("{}:{}", at.file.display(), at.line)),
        ]);
    };
    for (n, x) in &reg.servers {
        add("server", n, &x.at);
    }
    for (n, x) in &reg.adapters {
        add("adapter", n, &x.at);
    }
    for (n, x) in &reg.buses {
        add("bus", n, &x.at);
    }
    for (n, x) in &reg.links {
        add("link", n, &x.at);
    }
    for (n, x) in &reg.cpus {
        add("cpu", n, &x.at);
    }
    for (n, x) in &reg.testbeds {
        add("testbed", n, &x.at);
    }
    b.push(Block::Table(m));
    b.push(Block::Heading(
        "Inputs: model parameters and their sources".into(),
    ));
    b.push(Block::Text(format!(
        "Every parameter of every model, as written in its file, with the free parameters set from: {}.",
        parameters
    )));
    b.push(Block::Table(params_section(reg)));
    // The warnings of `execute`, computed again from the same results.
    let mut b = iosim::html::warning_blocks(&iosim::warnings::of_scenarios(reg, &v.pairs()));
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
    b.push(Block::Text(
        "Beside the napkin: each port at its link's payload rate, times the ports, capped by \
         each slot bus's peak (no fitted value, no simulation), against the model, over the \
         throughput figures it can estimate."
            .into(),
    ));
    b.push(Block::Table(iosim::napkin::section(
        &v.rows,
        &iosim::napkin::estimates(reg, &v.scenarios),
    )));
    b.push(Block::Table(figures_section(&v.rows)));
    b.push(Block::Table(experiments_section(&v.pairs())));
    b.push(Block::Heading("Calibration status".into()));
    match status {
        Some([status, assumed]) => {
            b.push(Block::Text(format!(
                "Each assumed value an experiment reads moved over its range (stated, or a factor of {} either way), one at a time: an experiment is uncalibrated when a predicted figure moves beyond its 90% interval. {} of {} experiments are uncalibrated.",
                iosim::sensitivity::DEFAULT_FACTOR,
                status.rows.iter().filter(|r| matches!(&r[1], Cell::Text(t) if t == "uncalibrated")).count(),
                status.rows.len()
            )));
            b.push(Block::Table(status));
            b.push(Block::Table(assumed));
        }
        None => b.push(Block::Text(
            "Not computed: `iosim report --sensitivity` moves each assumed value over its range and marks the experiments it moves beyond their intervals uncalibrated.".into(),
        )),
    }
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
        let mut t = Section::new(
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
                Cell::Text(g.paper.clone()),
                Cell::Text(g.group.clone()),
                Cell::Int(g.figures as u64),
                Cell::Num(g.fitted_mape, 2),
                Cell::Num(g.held_out_mape, 2),
                Cell::Num(at_fold, 6),
                Cell::Num(at_full, 6),
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
