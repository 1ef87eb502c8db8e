//! Sets the model beside the published figures: each experiment's seed,
//! what its run watches, each figure's prediction and error, and the error
//! per paper. The runs themselves are the application layer's
//! ([`crate::app`]).

use crate::error::Result;
use crate::model::{Registry, Scenario};
use crate::sim::config::SystemCfg;
use crate::sim::{ExperimentResult, Watch};

/// One published figure beside its prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureRow {
    /// Stable id.
    pub id: String,
    /// Paper (scenario source).
    pub paper: String,
    /// Where in the paper.
    pub source: String,
    /// Experiment that predicts it.
    pub experiment: String,
    /// Published value.
    pub published: f64,
    /// Model value in the same unit.
    pub predicted: f64,
    /// `Mbit/s` or `MB/s`.
    pub unit: String,
    /// (predicted - published) / published x 100.
    pub error_pct: f64,
    /// The prediction's 90% interval (its parameter part NaN until
    /// [`crate::app::rows_with_intervals`] computes it).
    pub interval: crate::interval::Interval,
}

/// Error summary of one paper.
#[derive(Debug, Clone, PartialEq)]
pub struct PaperSummary {
    /// Paper.
    pub paper: String,
    /// Figures compared.
    pub figures: usize,
    /// Mean absolute percentage error.
    pub mape: f64,
    /// Largest absolute error, in percent.
    pub worst_pct: f64,
    /// The figure with that error.
    pub worst_id: String,
}

/// The seed of an experiment's random streams: a hash (FNV-1a) of the run
/// seed and what the experiment sets up (server, test bed, cells, cards and
/// their slots and links, workloads), not of its name, its scenario, its
/// figures or the models' values. So results depend neither on which other
/// experiments run nor on what an experiment is called (one test reported
/// by two tables is one run), a fit's points share their random numbers,
/// and a run measured to a coarse precision (a fit's search) is the start
/// of the same run measured to a fine one.
pub fn experiment_seed(seed: u64, e: &crate::model::Experiment) -> u64 {
    let workloads: Vec<_> = e
        .workloads
        .iter()
        .map(|w| {
            (
                w.card,
                w.function,
                &w.demand,
                w.direction,
                w.interrupt_cpu.as_ref().map(|c| c.0),
                w.process_cpu.as_ref().map(|c| c.0),
            )
        })
        .collect();
    let mut setup = format!(
        "{:?}",
        (&e.server, &e.testbed, e.cells, &e.cards, &e.links, workloads)
    );
    // CPUs per cell set by the experiment (absent, the seed is as before).
    if let Some(n) = e.cpus_per_cell {
        setup.push_str(&format!(" cpus_per_cell {n}"));
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in setup.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A throughput `t` (or, for `%`, the server's CPU utilisation in `result`)
/// in the figure unit `unit`.
fn in_unit(t: crate::units::BytesPerSec, result: &ExperimentResult, unit: &str) -> f64 {
    match unit {
        "%" => result.cpu_util * 100.0,
        _ => throughput_in(t, unit),
    }
}

/// A throughput in a figure's throughput unit: `Mbit/s`, TTCP's `Mibit/s`,
/// or MB/s (any other unit).
pub(crate) fn throughput_in(t: crate::units::BytesPerSec, unit: &str) -> f64 {
    match unit {
        "Mbit/s" => t.mbit_s(),
        // TTCP's "Mbit" is 2^20 bits (ttcp.c, outfmt).
        "Mibit/s" => t.0 * 8.0 / 1_048_576.0,
        _ => t.mb_s(),
    }
}

/// The figure or table a figure's source names: the part before the first
/// `:`, without a trailing ` text` (`Figure 2 text: ...` is `Figure 2`).
pub fn figure_of(source: &str) -> String {
    let head = source.split(':').next().unwrap_or("").trim();
    head.strip_suffix(" text").unwrap_or(head).to_string()
}

/// The functions (indices among `labels`, the system's functions in order)
/// whose throughput, both ways added, is figure `fig`'s quantity; None for a
/// figure of the CPUs (scope `Cpu`, or unit `%`). `fn_label` is the
/// `card.function` label of the figure's card and function, `fname` the
/// function's name.
pub(crate) fn figure_functions(
    labels: &[&str],
    fig: &crate::model::FigureSpec,
    fn_label: &str,
    fname: &str,
) -> Option<Vec<usize>> {
    use crate::model::FigureScope;
    let which = |keep: &dyn Fn(&str) -> bool| -> Vec<usize> {
        (0..labels.len()).filter(|&i| keep(labels[i])).collect()
    };
    match fig.scope {
        FigureScope::Cpu => None,
        _ if fig.unit == "%" => None,
        // The first function of that label.
        FigureScope::Function => Some(
            labels
                .iter()
                .position(|l| *l == fn_label)
                .into_iter()
                .collect(),
        ),
        FigureScope::AllCards => {
            let suffix = format!(".{fname}");
            Some(which(&|l: &str| l.ends_with(&suffix)))
        }
        FigureScope::AllFunctions => Some(which(&|_: &str| true)),
    }
}

/// The model's value of a figure of any scope: its function's throughput,
/// the sum of that function over every card, the sum of every function,
/// or the whole machine's CPU utilisation in percent (or, in `ms CPU per
/// MB`, its service demand).
pub fn predicted_figure(
    result: &ExperimentResult,
    fig: &crate::model::FigureSpec,
    fn_label: &str,
    fname: &str,
) -> f64 {
    let labels: Vec<&str> = result.functions.iter().map(|f| f.label.as_str()).collect();
    match figure_functions(&labels, fig, fn_label, fname) {
        // Service demand: CPU microseconds per 10^3 bytes is CPU milliseconds
        // per 10^6 bytes.
        None if fig.unit == "ms CPU per MB" => result.service_demand_us_per_kb,
        None => result.cpu_util * 100.0,
        Some(fs) if fs.is_empty() && fig.scope == crate::model::FigureScope::Function => f64::NAN,
        Some(fs) => {
            let t: f64 = fs.iter().map(|&i| result.functions[i].total().0).sum();
            in_unit(crate::units::BytesPerSec(t), result, &fig.unit)
        }
    }
}

/// What a run of experiment `e` (assembled into `cfg`) must know to its
/// precision: the throughputs its published figures read (each figure's
/// functions, both ways added), or, for an experiment with no figure of a
/// throughput, every function's throughput each way (what `iosim run`
/// reports of it). A figure of the CPUs is not watched, as no throughput's
/// interval ever watched one.
pub fn figure_watch(reg: &Registry, e: &crate::model::Experiment, cfg: &SystemCfg) -> Watch {
    let labels: Vec<&str> = cfg.functions.iter().map(|f| f.label.as_str()).collect();
    let mut sums: Vec<Vec<usize>> = Vec::new();
    for fig in &e.figures {
        let (fn_label, fname) = figure_function(reg, e, fig);
        if let Some(fs) = figure_functions(&labels, fig, &fn_label, &fname) {
            if !fs.is_empty() && !sums.contains(&fs) {
                sums.push(fs);
            }
        }
    }
    if sums.is_empty() {
        Watch::EachWay
    } else {
        Watch::Only(sums)
    }
}

/// The function figure `fig` of experiment `e` names: its `card.function`
/// label and the function's name (empty if the adapter has no such function).
pub(crate) fn figure_function(
    reg: &Registry,
    e: &crate::model::Experiment,
    fig: &crate::model::FigureSpec,
) -> (String, String) {
    function_label(reg, e, fig.card, fig.function)
}

/// The `card.function` label of function `function` of card `card` of
/// experiment `e`, and the function's name (empty if the adapter has no
/// such function).
pub(crate) fn function_label(
    reg: &Registry,
    e: &crate::model::Experiment,
    card: usize,
    function: usize,
) -> (String, String) {
    let (card_label, adapter, _) = &e.cards[card];
    let fname = reg
        .adapters
        .get(adapter)
        .and_then(|a| a.functions.get(function))
        .map(|f| f.name.clone())
        .unwrap_or_default();
    (format!("{card_label}.{fname}"), fname)
}

/// Figure rows of one scenario given its results (in experiment order).
pub fn figure_rows(reg: &Registry, sc: &Scenario, results: &[ExperimentResult]) -> Vec<FigureRow> {
    sc.experiments
        .iter()
        .zip(results)
        .flat_map(|(e, r)| experiment_rows(reg, sc, e, r))
        .collect()
}

/// The figure rows of experiment `e` of `sc`, from its result `r`.
pub fn experiment_rows(
    reg: &Registry,
    sc: &Scenario,
    e: &crate::model::Experiment,
    r: &ExperimentResult,
) -> Vec<FigureRow> {
    e.figures
        .iter()
        .map(|fig| {
            let (fn_label, fname) = figure_function(reg, e, fig);
            let p = predicted_figure(r, fig, &fn_label, &fname);
            FigureRow {
                id: fig.id.clone(),
                paper: sc.source.clone(),
                source: fig.source.clone(),
                experiment: e.id.clone(),
                published: fig.published,
                predicted: p,
                unit: fig.unit.clone(),
                error_pct: (p - fig.published) / fig.published * 100.0,
                interval: crate::interval::Interval::of(
                    p,
                    None,
                    crate::model::Family::of_bottleneck(&r.bottleneck),
                    &reg.spread,
                ),
            }
        })
        .collect()
}

/// Keeps only the scenarios of one paper (`iosim validate --paper`): the
/// paper whose name (a scenario's `source`, as the `papers` section prints
/// it) is `name`, or the only one that begins with `name`. A name that
/// matches no paper, or begins several, is a usage error listing the papers.
pub fn keep_paper(scenarios: &mut Vec<Scenario>, name: &str) -> Result<()> {
    let mut papers: Vec<&str> = Vec::new();
    for sc in scenarios.iter() {
        if !sc.source.is_empty() && !papers.contains(&sc.source.as_str()) {
            papers.push(&sc.source);
        }
    }
    let exact = papers.iter().find(|p| **p == name);
    let begins: Vec<&str> = papers
        .iter()
        .copied()
        .filter(|p| !name.is_empty() && p.starts_with(name))
        .collect();
    let paper = match (exact, begins.as_slice()) {
        (Some(p), _) | (None, [p]) => p.to_string(),
        (None, []) => {
            return Err(crate::Error::Usage(format!(
                "--paper `{name}`: no bundled paper has that name; the papers: {}",
                papers.join(", ")
            )))
        }
        (None, several) => {
            return Err(crate::Error::Usage(format!(
                "--paper `{name}` begins the names of {} papers ({}); give more of the name",
                several.len(),
                several.join(", ")
            )))
        }
    };
    scenarios.retain(|sc| sc.source == paper);
    Ok(())
}

/// MAPE and worst error per paper, in order of first appearance.
pub fn summarise(rows: &[FigureRow]) -> Vec<PaperSummary> {
    let mut papers: Vec<String> = Vec::new();
    for r in rows {
        if !papers.contains(&r.paper) {
            papers.push(r.paper.clone());
        }
    }
    papers
        .into_iter()
        .map(|p| {
            let v: Vec<&FigureRow> = rows.iter().filter(|r| r.paper == p).collect();
            let mape = v.iter().map(|r| r.error_pct.abs()).sum::<f64>() / v.len().max(1) as f64;
            let worst = v.iter().copied().fold(None::<&FigureRow>, |a, r| match a {
                Some(a) if a.error_pct.abs() >= r.error_pct.abs() => Some(a),
                _ => Some(r),
            });
            PaperSummary {
                paper: p,
                figures: v.len(),
                mape,
                worst_pct: worst.map(|w| w.error_pct.abs()).unwrap_or(0.0),
                worst_id: worst.map(|w| w.id.clone()).unwrap_or_default(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunSpec;
    use crate::sim::config::assemble;

    fn scenario_of(source: &str) -> Scenario {
        Scenario {
            name: format!("of {source}"),
            title: String::new(),
            source: source.into(),
            fit: true,
            file: std::path::PathBuf::from("x.toml"),
            run: RunSpec::default(),
            experiments: Vec::new(),
        }
    }

    #[test]
    fn a_paper_is_kept_by_its_whole_name_before_any_longer_name_it_begins() {
        let all = || {
            ["a.txt", "a.txt.v2", "b.txt", "a.txt"]
                .map(scenario_of)
                .to_vec()
        };
        let kept = |name: &str| {
            let mut v = all();
            keep_paper(&mut v, name).map(|()| v.iter().map(|s| s.name.clone()).collect::<Vec<_>>())
        };
        assert_eq!(kept("a.txt").unwrap(), ["of a.txt", "of a.txt"]);
        assert_eq!(kept("a.txt.").unwrap(), ["of a.txt.v2"]);
        assert_eq!(kept("b").unwrap(), ["of b.txt"]);
        assert!(matches!(kept("a"), Err(crate::Error::Usage(m)) if m.contains("2 papers")));
        assert!(
            matches!(kept("c"), Err(crate::Error::Usage(m)) if m.contains("a.txt, a.txt.v2, b.txt"))
        );
        assert!(matches!(kept(""), Err(crate::Error::Usage(_))));
    }

    #[test]
    fn a_run_watches_the_throughputs_its_figures_read() {
        let reg = crate::loader::load_registry(&[]).unwrap();
        let all = crate::loader::load_bundled_scenarios(&reg).unwrap();
        let watch = |scenario: &str, id: &str| {
            let sc = all.iter().find(|s| s.name == scenario).unwrap();
            let e = sc.experiments.iter().find(|e| e.id == id).unwrap().clone();
            let cfg = assemble(&reg, &e).unwrap();
            let labels: Vec<String> = cfg.functions.iter().map(|f| f.label.clone()).collect();
            (figure_watch(&reg, &e, &cfg), labels)
        };
        // One function's figure: that function, both ways added (the FC
        // port beside it is not watched).
        let (w, labels) = watch("hp2g-fig4-gige-bidirectional", "gige-bd+fc-bd.pcix.c1");
        let gige = labels.iter().position(|l| l.ends_with(".gige")).unwrap();
        assert_eq!(labels.len(), 2);
        assert_eq!(w, Watch::Only(vec![vec![gige]]));
        // The four cards' aggregate, once, whatever the CPU figure beside it
        // (a CPU figure is not watched).
        let (w, labels) = watch("atm-atm155-n4000", "atm155.out.mtu9218");
        assert_eq!(labels.len(), 4);
        assert_eq!(w, Watch::Only(vec![vec![0, 1, 2, 3]]));
        // No figure: every function each way, as `iosim run` reports it.
        let (w, _) = watch("smoke-n4000", "dma-read.twin-turbo+turbo");
        assert_eq!(w, Watch::EachWay);
    }

    #[test]
    fn the_seed_follows_the_setup_not_the_names() {
        let reg = crate::loader::load_registry(&[]).unwrap();
        let all = crate::loader::load_bundled_scenarios(&reg).unwrap();
        let e = all[0].experiments[0].clone();
        let mut renamed = e.clone();
        renamed.id.push_str(".elsewhere");
        renamed.figures.clear();
        renamed.at.line += 100;
        for w in &mut renamed.workloads {
            w.at.line += 100;
        }
        assert_eq!(experiment_seed(1, &e), experiment_seed(1, &renamed));
        assert_ne!(experiment_seed(1, &e), experiment_seed(2, &e));
        let mut other = e.clone();
        other.cells += 1;
        assert_ne!(experiment_seed(1, &e), experiment_seed(1, &other));
        let mut other = e.clone();
        other.workloads.pop();
        assert_ne!(experiment_seed(1, &e), experiment_seed(1, &other));
    }
}
