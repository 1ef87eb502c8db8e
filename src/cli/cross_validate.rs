//! `iosim validate --cross-validate`: each figure predicted by a fit that
//! left its fold out (every figure of one simulated run with its paper
//! figure or table), at three seeds (`--seed` and the next two): the
//! held-out MAPE per paper at each seed and their mean (`papers`); the first
//! seed's figures, folds' parameters and objectives (`figures`, `folds`,
//! `fold_objectives`). It reports; it never chooses a mechanism. With
//! `--paper NAME`, it sees only that paper's figures.
//!
//! Its work comes in units: each fold at each seed, then the validation
//! of the values in use at each seed (the families and parameter parts of
//! the coverage). `--shard I/N` runs the I-th of N equal parts of the units
//! in that order and writes what they found to standard output as a part
//! ([`iosim::part`]): each fold's parameters, objectives and held-out
//! figures, the full fit's values (by the shard holding the seed's first
//! fold) and the validation's figures, numbers to the bit. A shard
//! with a fold at a seed makes that seed's full fit itself (every fold
//! starts from its values), so the full fits are made once per shard that
//! needs them. `iosim merge` reads the parts back ([`merge`]) and builds
//! the report one run gives from them, byte for byte.

use std::path::PathBuf;
use std::time::Instant;

use iosim::app::Runner;
use iosim::calibrate::{cross_validate_folds, FoldObjectives, HeldOut};
use iosim::interval::Interval;
use iosim::model::{Family, StructuralSpread};
use iosim::part::{PartHead, PartWriter, Record, Records, Want};
use iosim::report::{Cell, Format, Report, Section};
use iosim::sections::{figure_cells, FIGURE_COLUMNS};
use iosim::validate::{summarise, FigureRow, PaperSummary};
use iosim::Error;

use super::fit::{bound_cell, objective_of, objective_text, progress_on, settings_of, Setup};
use super::{diag, Common};

/// The command a part of a cross-validation names (and its report's).
pub const COMMAND: &str = "validate --cross-validate";

/// `iosim validate --cross-validate`; with `shard`, the part of the units
/// it names, written to standard output.
pub fn execute(
    common: &Common,
    file: &Option<PathBuf>,
    cold: bool,
    spread_out: Option<&iosim::report::Output>,
    paper: Option<&str>,
    shard: Option<(u64, u64)>,
    runner: &Runner,
) -> iosim::Result<String> {
    if shard.is_some() && spread_out.is_some() {
        return Err(Error::Usage(
            "--spread-out with --shard: the spread needs every fold; give --spread-out to `iosim merge` with the parts".into(),
        ));
    }
    let mut setup = Setup::load(common, file)?;
    let paper = paper.map(|p| setup.keep_paper(p)).transpose()?;
    let setup = setup;
    let spec = &setup.spec;
    let start: Vec<f64> = spec.free.iter().map(|f| f.initial).collect();
    // The full fit: near the fit in use, unless asked cold or there is none.
    let cold = cold || common.hand_set;
    let from = (!cold).then_some(&setup.in_use[..]);
    let settings = settings_of(spec);
    let show = progress_on();
    let seeds: Vec<u64> = (0..CV_SEEDS).map(|k| common.seed.wrapping_add(k)).collect();
    let groups = setup.groups();
    let ids = setup.figure_ids();
    let units = Units {
        seeds: seeds.len(),
        folds: groups.len(),
    };
    let (part, parts) = shard.unwrap_or((1, 1));
    let mine = iosim::part::share(units.count(), part, parts);
    let mut results: Vec<SeedResult> = Vec::new();
    for (k, &seed) in seeds.iter().enumerate() {
        let only = |g: usize| mine.contains(&units.fold(k, g));
        let mut here = SeedResult::default();
        if (0..groups.len()).any(only) {
            let t0 = Instant::now();
            let pb = setup.problem_at(seed, runner);
            let cv = cross_validate_folds(
                &pb,
                &start,
                from,
                settings,
                objective_of(spec),
                &only,
                |g, i, n| {
                    if show {
                        diag(&format!(
                            "cross-validate: seed {seed}, fitting without {g} ({i}/{n})"
                        ));
                    }
                },
            )?;
            diag(&format!(
                "cross-validate: seed {seed}, {} figures held out in turn, {} experiment runs, {:.1} s",
                cv.held.len(),
                pb.memo.runs(),
                t0.elapsed().as_secs_f64()
            ));
            here = SeedResult::of(&cv, &groups, &ids, only(0))?;
        }
        results.push(here);
    }
    // The values in use at each seed: each figure's mechanism family and
    // the parameter part of its interval.
    let (used, _) = common.registry()?;
    let mut at_seed = Vec::new();
    for (k, &seed) in seeds.iter().enumerate() {
        at_seed.push(if mine.contains(&units.validation(k)) {
            iosim::app::validation(&used, paper.as_deref(), seed, runner)?.rows
        } else {
            Vec::new()
        });
    }
    let words = Words {
        paper,
        calibration: spec.file.display().to_string(),
        objective: objective_text(spec),
        full_fit: if cold {
            "every figure, from the initial values across each parameter's range".to_string()
        } else {
            format!(
                "every figure, refit from the values in use ({}), near them only",
                setup.in_use_label
            )
        },
    };
    if shard.is_some() {
        let head = PartHead {
            command: COMMAND.into(),
            seed: common.seed,
            meta: words.meta(groups.len()),
            warnings: None,
            sections: PART_SECTIONS
                .iter()
                .map(|&(name, fields, figures)| {
                    let tail: &[&str] = if figures { &FIGURE_FIELDS } else { &[] };
                    (
                        name.to_string(),
                        fields.iter().chain(tail).map(|f| f.to_string()).collect(),
                    )
                })
                .collect(),
            identity: format!(
                "{COMMAND} {:?}",
                (
                    file,
                    &words.paper,
                    cold,
                    &common.models,
                    &common.params,
                    common.hand_set,
                    &common.spread
                )
            ),
            part,
            parts,
        };
        super::part_to_stdout(&head, |w| {
            write_part(w, &seeds, &results, &at_seed).map_err(super::stdout_error)
        })?;
        return Ok(String::new());
    }
    let outcome = Outcome {
        words,
        seeds,
        results,
        at_seed,
    };
    finish(outcome, common.seed, common.out_format(), spread_out)
}

/// `iosim merge` of the parts of a cross-validation (`head`, `parts`, as
/// [`iosim::loader::open_parts`] checked them): the report one run gives,
/// in `format`, and with `spread_out` the spread file it writes.
pub fn merge(
    head: &PartHead,
    parts: &mut dyn Records,
    format: Format,
    spread_out: Option<&iosim::report::Output>,
) -> iosim::Result<String> {
    let bad = |what: String| Error::Usage(format!("merge: {what}"));
    let meta = |key: &str| {
        head.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| bad(format!("the parts' header has no `{key}`")))
    };
    let words = Words {
        paper: head
            .meta
            .iter()
            .find(|(k, _)| k == "paper")
            .map(|(_, v)| v.clone()),
        calibration: meta("calibration")?,
        objective: meta("objective")?,
        full_fit: meta("full_fit")?,
    };
    let folds: usize = meta("folds")?
        .parse()
        .map_err(|_| bad("the parts' header has a malformed `folds`".into()))?;
    let seeds: Vec<u64> = (0..CV_SEEDS).map(|k| head.seed.wrapping_add(k)).collect();
    let mut results: Vec<SeedResult> = seeds.iter().map(|_| SeedResult::default()).collect();
    let mut at_seed: Vec<Vec<FigureRow>> = seeds.iter().map(|_| Vec::new()).collect();
    let mut validated = vec![false; seeds.len()];
    parts.each(Want::All, &mut |r| {
        let Record::Row(s, cells) = r else {
            return Ok(());
        };
        let k = match cells.first() {
            Some(Cell::Int(seed)) => seeds.iter().position(|x| x == seed),
            _ => None,
        }
        .ok_or_else(|| bad("a record of a seed the run does not have".into()))?;
        read_record(
            s,
            &cells[1..],
            &mut results[k],
            &mut at_seed[k],
            &mut validated[k],
        )
        .ok_or_else(|| bad(format!("a malformed record of `{}`", PART_SECTIONS[s].0)))
    })?;
    for (k, r) in results.iter_mut().enumerate() {
        r.held.sort_by_key(|(at, _)| *at);
        r.folds.sort_by_key(|(g, _)| *g);
        let whole = r.folds.len() == folds
            && r.folds.iter().enumerate().all(|(i, (g, _))| i == *g)
            && (folds == 0 || !r.all.is_empty())
            && validated[k];
        if !whole {
            return Err(bad(format!(
                "the parts hold {} of the {folds} folds at seed {} (every part once is needed)",
                r.folds.len(),
                seeds[k]
            )));
        }
    }
    let outcome = Outcome {
        words,
        seeds,
        results,
        at_seed,
    };
    finish(outcome, head.seed, format, spread_out)
}

/// The units of work of a cross-validation, in the order shards split
/// them: every fold at the first seed, at the second, at the third; then
/// the validation of the values in use at each seed.
struct Units {
    seeds: usize,
    folds: usize,
}

impl Units {
    fn count(&self) -> usize {
        self.seeds * self.folds + self.seeds
    }
    /// Fold `g` at the `k`-th seed.
    fn fold(&self, k: usize, g: usize) -> usize {
        k * self.folds + g
    }
    /// The validation at the `k`-th seed.
    fn validation(&self, k: usize) -> usize {
        self.seeds * self.folds + k
    }
}

/// The header facts a cross-validation's report states beside its seeds.
struct Words {
    /// The paper whose figures alone it sees (`--paper`).
    paper: Option<String>,
    /// The calibration file.
    calibration: String,
    /// The objective, in words.
    objective: String,
    /// Where the full fit started, in words.
    full_fit: String,
}

impl Words {
    /// As a part's header facts, with the count of folds.
    fn meta(&self, folds: usize) -> Vec<(String, String)> {
        let mut meta: Vec<(String, String)> = self
            .paper
            .iter()
            .map(|p| ("paper".to_string(), p.clone()))
            .collect();
        meta.extend([
            ("calibration".into(), self.calibration.clone()),
            ("objective".into(), self.objective.clone()),
            ("full_fit".into(), self.full_fit.clone()),
            ("folds".into(), folds.to_string()),
        ]);
        meta
    }
}

/// A free parameter's value in the full fit.
struct FitValue {
    /// Its dotted path.
    path: String,
    /// Its unit in reports.
    unit: String,
    /// Base-unit value of one `unit`.
    unit_scale: f64,
    /// The value, base unit.
    value: f64,
    /// `min` or `max` when on a bound.
    at_bound: Option<&'static str>,
}

/// One fold as the report reads it.
struct FoldResult {
    /// The group left out.
    group: String,
    /// Each free parameter's value (base unit) and bound.
    params: Vec<(f64, Option<&'static str>)>,
    /// Its objectives, when it refit something.
    objectives: Option<FoldObjectives>,
}

/// One seed's cross-validation as the report reads it: whole, or the folds
/// a shard ran.
#[derive(Default)]
struct SeedResult {
    /// Held-out figures with their place among the fit's figures, in order.
    held: Vec<(usize, HeldOut)>,
    /// The full fit (empty in a shard without the seed's first fold).
    all: Vec<FitValue>,
    /// The folds with their index among the groups, in order.
    folds: Vec<(usize, FoldResult)>,
}

impl SeedResult {
    /// From a cross-validation of the folds of `groups` it ran (the full
    /// fit's values kept if `with_fit`); `ids` are the fit's figures in
    /// order.
    fn of(
        cv: &iosim::calibrate::CrossValidation,
        groups: &[String],
        ids: &[String],
        with_fit: bool,
    ) -> iosim::Result<SeedResult> {
        let lost = |what: &str| Error::Internal(format!("cross-validation: {what} lost"));
        let held = cv
            .held
            .iter()
            .map(|h| {
                let at = ids.iter().position(|id| *id == h.row.id);
                at.map(|at| (at, h.clone()))
                    .ok_or_else(|| lost(&format!("figure `{}`", h.row.id)))
            })
            .collect::<iosim::Result<_>>()?;
        let folds = cv
            .folds
            .iter()
            .map(|f| {
                let g = groups.iter().position(|g| *g == f.group);
                g.map(|g| {
                    (
                        g,
                        FoldResult {
                            group: f.group.clone(),
                            params: f.params.iter().map(|p| (p.value, p.at_bound)).collect(),
                            objectives: f.objectives,
                        },
                    )
                })
                .ok_or_else(|| lost(&format!("group `{}`", f.group)))
            })
            .collect::<iosim::Result<_>>()?;
        let all = if with_fit {
            cv.all
                .iter()
                .map(|a| FitValue {
                    path: a.free.path.clone(),
                    unit: a.free.unit.clone(),
                    unit_scale: a.free.unit_scale,
                    value: a.value,
                    at_bound: a.at_bound,
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(SeedResult { held, all, folds })
    }
}

/// What the report is made of: whole, from one run or from every part.
struct Outcome {
    words: Words,
    seeds: Vec<u64>,
    /// Per seed.
    results: Vec<SeedResult>,
    /// Per seed, the figures of the values in use.
    at_seed: Vec<Vec<FigureRow>>,
}

/// The sections of a part, and their fields: each record starts with its
/// seed; a section that holds figures ends with [`FIGURE_FIELDS`] (true).
const PART_SECTIONS: [(&str, &[&str], bool); 5] = [
    (
        "full_fit",
        &[
            "seed",
            "parameter",
            "path",
            "unit",
            "unit_scale",
            "value",
            "bound",
        ],
        false,
    ),
    (
        "folds",
        &[
            "seed",
            "fold",
            "group",
            "objective_fold_fit",
            "objective_full_fit",
        ],
        false,
    ),
    (
        "fold_values",
        &["seed", "fold", "parameter", "value", "bound"],
        false,
    ),
    (
        "held_out",
        &["seed", "figure", "group", "fitted_error_pct"],
        true,
    ),
    ("in_use", &["seed"], true),
];

/// The fields of a figure in a part's record.
const FIGURE_FIELDS: [&str; 14] = [
    "id",
    "paper",
    "source",
    "experiment",
    "published",
    "predicted",
    "unit",
    "error_pct",
    "pi90_low",
    "pi90_high",
    "param_pct",
    "structural_pct",
    "family",
    "family_pinned",
];

/// A number to the bit.
fn num(v: f64) -> Cell {
    Cell::Num(v, 0)
}

/// A bound: `min`, `max` or blank.
fn bound_of(b: Option<&'static str>) -> Cell {
    b.map_or(Cell::Blank, |b| Cell::Text(b.into()))
}

/// A figure row's cells in a part.
fn figure_record(r: &FigureRow) -> Vec<Cell> {
    let iv = &r.interval;
    vec![
        Cell::Text(r.id.clone()),
        Cell::Text(r.paper.clone()),
        Cell::Text(r.source.clone()),
        Cell::Text(r.experiment.clone()),
        num(r.published),
        num(r.predicted),
        Cell::Text(r.unit.clone()),
        num(r.error_pct),
        num(iv.low),
        num(iv.high),
        num(iv.param_pct),
        num(iv.structural_pct),
        Cell::Text(iv.family.name().into()),
        Cell::Int(u64::from(iv.pinned)),
    ]
}

/// Writes what a shard found: per seed its full fit, folds and held-out
/// figures, and the figures of the values in use it validated.
fn write_part<W: std::io::Write>(
    w: &mut PartWriter<W>,
    seeds: &[u64],
    results: &[SeedResult],
    at_seed: &[Vec<FigureRow>],
) -> std::io::Result<()> {
    for ((&seed, r), in_use) in seeds.iter().zip(results).zip(at_seed) {
        let s = Cell::Int(seed);
        for (i, a) in r.all.iter().enumerate() {
            w.row(
                0,
                &[
                    s.clone(),
                    Cell::Int(i as u64),
                    Cell::Text(a.path.clone()),
                    Cell::Text(a.unit.clone()),
                    num(a.unit_scale),
                    num(a.value),
                    bound_of(a.at_bound),
                ],
            )?;
        }
        for (g, f) in &r.folds {
            let (fold_fit, full_fit) = f.objectives.map_or((Cell::Blank, Cell::Blank), |o| {
                (num(o.at_fold_fit), num(o.at_full_fit))
            });
            w.row(
                1,
                &[
                    s.clone(),
                    Cell::Int(*g as u64),
                    Cell::Text(f.group.clone()),
                    fold_fit,
                    full_fit,
                ],
            )?;
            for (i, (value, at_bound)) in f.params.iter().enumerate() {
                w.row(
                    2,
                    &[
                        s.clone(),
                        Cell::Int(*g as u64),
                        Cell::Int(i as u64),
                        num(*value),
                        bound_of(*at_bound),
                    ],
                )?;
            }
        }
        for (at, h) in &r.held {
            let mut cells = vec![
                s.clone(),
                Cell::Int(*at as u64),
                Cell::Text(h.group.clone()),
                num(h.fitted_error_pct),
            ];
            cells.extend(figure_record(&h.row));
            w.row(3, &cells)?;
        }
        for row in in_use {
            let mut cells = vec![s.clone()];
            cells.extend(figure_record(row));
            w.row(4, &cells)?;
        }
    }
    Ok(())
}

/// Reads one record of section `s` (its cells after the seed) into its
/// seed's results; `None` if it is malformed.
fn read_record(
    s: usize,
    c: &[Cell],
    r: &mut SeedResult,
    in_use: &mut Vec<FigureRow>,
    validated: &mut bool,
) -> Option<()> {
    let text = |i: usize| match c.get(i)? {
        Cell::Text(t) => Some(t.clone()),
        _ => None,
    };
    let number = |i: usize| match c.get(i)? {
        Cell::Num(v, _) => Some(*v),
        _ => None,
    };
    let index = |i: usize| match c.get(i)? {
        Cell::Int(v) => usize::try_from(*v).ok(),
        _ => None,
    };
    let bound = |i: usize| match c.get(i)? {
        Cell::Blank => Some(None),
        Cell::Text(t) if t == "min" => Some(Some("min")),
        Cell::Text(t) if t == "max" => Some(Some("max")),
        _ => None,
    };
    let figure = |from: usize| -> Option<FigureRow> {
        let predicted = number(from + 5)?;
        let family = Family::named(&text(from + 12)?)?;
        Some(FigureRow {
            id: text(from)?,
            paper: text(from + 1)?,
            source: text(from + 2)?,
            experiment: text(from + 3)?,
            published: number(from + 4)?,
            predicted,
            unit: text(from + 6)?,
            error_pct: number(from + 7)?,
            interval: Interval {
                low: number(from + 8)?,
                high: number(from + 9)?,
                param_pct: number(from + 10)?,
                structural_pct: number(from + 11)?,
                family,
                pinned: index(from + 13)? == 1,
            },
        })
    };
    match s {
        0 => {
            if index(0)? != r.all.len() {
                return None;
            }
            r.all.push(FitValue {
                path: text(1)?,
                unit: text(2)?,
                unit_scale: number(3)?,
                value: number(4)?,
                at_bound: bound(5)?,
            });
        }
        1 => {
            let g = index(0)?;
            if r.folds.iter().any(|(x, _)| *x == g) {
                return None;
            }
            let objectives = match (c.get(2)?, c.get(3)?) {
                (Cell::Blank, Cell::Blank) => None,
                _ => Some(FoldObjectives {
                    at_fold_fit: number(2)?,
                    at_full_fit: number(3)?,
                }),
            };
            r.folds.push((
                g,
                FoldResult {
                    group: text(1)?,
                    params: Vec::new(),
                    objectives,
                },
            ));
        }
        2 => {
            let g = index(0)?;
            let (_, f) = r.folds.iter_mut().find(|(x, _)| *x == g)?;
            if index(1)? != f.params.len() {
                return None;
            }
            f.params.push((number(2)?, bound(3)?));
        }
        3 => r.held.push((
            index(0)?,
            HeldOut {
                row: figure(3)?,
                fitted_error_pct: number(2)?,
                group: text(1)?,
            },
        )),
        4 => {
            *validated = true;
            in_use.push(figure(0)?);
        }
        _ => return None,
    }
    Some(())
}

/// The report of a cross-validation from what it found, rendered in
/// `format`; with `spread_out`, the spread it measured written there.
fn finish(
    mut o: Outcome,
    seed: u64,
    format: Format,
    spread_out: Option<&iosim::report::Output>,
) -> iosim::Result<String> {
    let seeds = &o.seeds;
    let mut rep = Report {
        command: COMMAND.into(),
        seed,
        ..Default::default()
    };
    if let Some(p) = &o.words.paper {
        rep.meta.push((
            "paper".into(),
            format!("{p} (its figures alone: the full fit and every fold see no other paper's)"),
        ));
    }
    rep.meta
        .push(("calibration".into(), o.words.calibration.clone()));
    rep.meta
        .push(("objective".into(), o.words.objective.clone()));
    rep.meta.push((
        "predicted".into(),
        "each figure by a fit that left out its fold (its paper figure or table with every figure of the same simulated run), from the initial values across each parameter's range; structural choices are not refit per fold".into(),
    ));
    rep.meta.push((
        "seeds".into(),
        format!(
            "{} (papers: the held-out MAPE at each and their mean; figures, folds and fold_objectives: seed {})",
            seeds
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            seed
        ),
    ));
    rep.meta.push(("full_fit".into(), o.words.full_fit.clone()));
    let cov = coverage(&o.results, &o.at_seed, seeds);
    // The first seed's figures carry the intervals the coverage judged.
    if let Some(first) = o.results.first_mut() {
        for (_, h) in &mut first.held {
            if let Some(iv) = cov.first_seed.get(&h.row.id) {
                h.row.interval = *iv;
            }
        }
    }
    rep.sections.extend(held_out_sections(&o.results, seeds));
    rep.meta.push((
        "coverage".into(),
        format!(
            "the share of held-out figures inside their 90% prediction interval: the fold's prediction, the parameter part of the full fit at that seed, and the structural part by mechanism family estimated from the held-out figures of the other papers at that seed (leave one paper out; a family with fewer than {} such figures takes {} times the spread of all of them); the target for a 90% interval is 85-95%",
            iosim::interval::MIN_FAMILY_FIGURES,
            iosim::interval::DEFAULT_SPREAD_FACTOR
        ),
    ));
    rep.sections.push(cov.section);
    rep.sections.push(spread_section(&cov.spread));
    if let Some(out) = spread_out {
        out.write(spread_file(&o.words, seeds, &cov.spread)?.as_bytes())?;
    }
    if let Some(cv) = o.results.first() {
        rep.sections.push(folds_section(cv));
        rep.sections.push(fold_objectives_section(cv));
    }
    Ok(rep.render(format))
}

/// The text of the spread file `--spread-out` writes.
fn spread_file(words: &Words, seeds: &[u64], spread: &StructuralSpread) -> iosim::Result<String> {
    let (flag, papers) = match &words.paper {
        Some(p) => (format!(" --paper {p}"), "that paper's"),
        None => (String::new(), "every paper"),
    };
    let comment = format!(
        "Written by iosim {} validate --cross-validate{flag} (seeds {}) from {}.\nThe structural spread of the model by mechanism family: the root mean square of ln(published / predicted)\nover the figures held out of the fit, {papers}, every seed; a family with fewer than {} held-out figures\ntakes the default, {} times the spread of all of them. Read by the prediction intervals (--spread FILE).",
        env!("CARGO_PKG_VERSION"),
        seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
        words.calibration,
        iosim::interval::MIN_FAMILY_FIGURES,
        iosim::interval::DEFAULT_SPREAD_FACTOR
    );
    iosim::loader::spread_file_text(&comment, spread)
}

/// Each free parameter as the full fit and every fold found it: a value that
/// moves far when a group is left out is one that group alone pins.
fn folds_section(cv: &SeedResult) -> Section {
    let mut s = Section::new(
        "folds",
        &[
            "parameter",
            "unit",
            "fitted_all",
            "held_out_group",
            "fitted_without",
            "bound",
        ],
    );
    for (i, a) in cv.all.iter().enumerate() {
        let k = a.unit_scale;
        for (_, fold) in &cv.folds {
            let Some((value, at_bound)) = fold.params.get(i) else {
                continue;
            };
            s.rows.push(vec![
                Cell::Text(a.path.clone()),
                Cell::Text(a.unit.clone()),
                Cell::Num(a.value / k, 4),
                Cell::Text(fold.group.clone()),
                Cell::Num(value / k, 4),
                bound_cell(*at_bound),
            ]);
        }
    }
    s
}

/// Each fold's own objective (its training figures and the prior over the
/// parameters it refits) at its fit and at the full fit's values, and how
/// much lower the latter is in percent: a positive `full_fit_lower_pct`
/// means the fold's search, from the initial values, ended in a basin its
/// own figures score worse than one that exists (which need not predict
/// the group better: see README.md). Beside them, the group's held-out
/// MAPE (its figures with a finite error). Folds that refit nothing are
/// left out.
fn fold_objectives_section(cv: &SeedResult) -> Section {
    let mut s = Section::new(
        "fold_objectives",
        &[
            "held_out_group",
            "held_out_mape_pct",
            "objective_fold_fit",
            "objective_full_fit",
            "full_fit_lower_pct",
        ],
    );
    for (_, fold) in &cv.folds {
        let Some(o) = fold.objectives else {
            continue;
        };
        // One group is one paper's: its summary is the group's.
        let rows: Vec<FigureRow> = cv
            .held
            .iter()
            .map(|(_, h)| h)
            .filter(|h| h.group == fold.group && h.row.error_pct.is_finite())
            .map(|h| h.row.clone())
            .collect();
        let mape = summarise(&rows).first().map_or(f64::NAN, |x| x.mape);
        s.rows.push(vec![
            Cell::Text(fold.group.clone()),
            Cell::Num(mape, 2),
            Cell::Num(o.at_fold_fit, 6),
            Cell::Num(o.at_full_fit, 6),
            Cell::Num(
                if o.at_fold_fit > 0.0 {
                    100.0 * (o.at_fold_fit - o.at_full_fit) / o.at_fold_fit
                } else {
                    0.0
                },
                2,
            ),
        ]);
    }
    s
}

/// Seeds a cross-validation runs: `--seed` and the next two.
const CV_SEEDS: u64 = 3;

/// The `figures` and `papers` sections of `validate --cross-validate`: each
/// figure as predicted by the fold that left it out at the first seed,
/// beside its error in the full fit, with the 90% interval its coverage
/// judged; per paper, the held-out MAPE at each
/// seed, their mean, the worst held-out error at any seed and the fitted
/// MAPE's mean.
fn held_out_sections(cvs: &[SeedResult], seeds: &[u64]) -> Vec<Section> {
    let Some(first) = cvs.first() else {
        return Vec::new();
    };
    let mut s = Section::new(
        "figures",
        &[
            &FIGURE_COLUMNS[..],
            &["fitted_error_pct", "held_out_group", "paper"],
        ]
        .concat(),
    );
    for (_, h) in &first.held {
        let mut cells = figure_cells(&h.row);
        cells.extend([
            Cell::Num(h.fitted_error_pct, 1),
            Cell::Text(h.group.clone()),
            Cell::Text(h.row.paper.clone()),
        ]);
        s.rows.push(cells);
    }
    // Per seed: the held-out and the fitted summaries per paper.
    let per_seed: Vec<(Vec<PaperSummary>, Vec<PaperSummary>)> = cvs
        .iter()
        .map(|cv| {
            let rows: Vec<FigureRow> = cv.held.iter().map(|(_, h)| h.row.clone()).collect();
            let fitted: Vec<FigureRow> = cv
                .held
                .iter()
                .map(|(_, h)| FigureRow {
                    error_pct: h.fitted_error_pct,
                    ..h.row.clone()
                })
                .collect();
            (summarise(&rows), summarise(&fitted))
        })
        .collect();
    let seed_columns: Vec<String> = seeds
        .iter()
        .map(|k| format!("held_out_mape_seed{k}_pct"))
        .collect();
    let mut columns: Vec<&str> = vec!["paper", "figures"];
    columns.extend(seed_columns.iter().map(String::as_str));
    columns.extend(["held_out_mape_pct", "held_out_worst_pct", "fitted_mape_pct"]);
    let mut p = Section::new("papers", &columns);
    let find = |xs: &[PaperSummary], paper: &str| xs.iter().find(|y| y.paper == paper).cloned();
    for x in &per_seed[0].0 {
        let held: Vec<PaperSummary> = per_seed
            .iter()
            .filter_map(|(h, _)| find(h, &x.paper))
            .collect();
        let fitted: Vec<f64> = per_seed
            .iter()
            .filter_map(|(_, f)| find(f, &x.paper))
            .map(|y| y.mape)
            .collect();
        let mean = |v: &[f64]| {
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let mapes: Vec<f64> = held.iter().map(|y| y.mape).collect();
        let mut cells = vec![Cell::Text(x.paper.clone()), Cell::Int(x.figures as u64)];
        cells.extend(mapes.iter().map(|m| Cell::Num(*m, 2)));
        cells.extend([
            Cell::Num(mean(&mapes), 2),
            Cell::Num(
                held.iter().map(|y| y.worst_pct).fold(f64::NAN, |a, b| {
                    if a.abs() >= b.abs() {
                        a
                    } else {
                        b
                    }
                }),
                1,
            ),
            Cell::Num(mean(&fitted), 2),
        ]);
        p.rows.push(cells);
    }
    vec![s, p]
}

/// What the coverage of the held-out figures found.
struct Coverage {
    /// Per paper and in all, the share inside the interval at each seed
    /// and their mean.
    section: Section,
    /// The structural spread of every paper's held-out figures at every
    /// seed (what `--spread-out` writes).
    spread: iosim::model::StructuralSpread,
    /// Each held-out figure's interval at the first seed, by id.
    first_seed: std::collections::HashMap<String, iosim::interval::Interval>,
}

/// The log residual `ln(published / predicted)` of a row (NaN if either
/// is not positive).
fn log_residual(r: &FigureRow) -> f64 {
    if r.published > 0.0 && r.predicted > 0.0 {
        (r.published / r.predicted).ln()
    } else {
        f64::NAN
    }
}

/// The share of held-out figures inside their 90% interval per paper and
/// in all, at each seed and the mean: each figure's interval is its
/// fold's prediction with the parameter part of the full fit at that seed
/// (`at_seed`: the full fit's rows at each seed, with their families) and
/// the structural spread estimated from the other papers' held-out
/// figures at that seed.
fn coverage(cvs: &[SeedResult], at_seed: &[Vec<FigureRow>], seeds: &[u64]) -> Coverage {
    use iosim::interval::{spread_from, Interval, Z90};
    use std::collections::HashMap;
    let mut columns: Vec<String> = vec!["paper".into(), "figures".into()];
    columns.extend(seeds.iter().map(|k| format!("coverage_seed{k}_pct")));
    columns.extend(["coverage_pct".into(), "mean_pi90_half_pct".into()]);
    let cols: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut section = Section::new("coverage", &cols);
    let mut pooled: Vec<(iosim::model::Family, f64)> = Vec::new();
    // Per seed, per paper: (inside, counted, sum of half widths in log %).
    let mut per_seed: Vec<HashMap<String, (usize, usize, f64)>> = Vec::new();
    let mut papers: Vec<String> = Vec::new();
    let mut first_seed = HashMap::new();
    for (k, (cv, full)) in cvs.iter().zip(at_seed).enumerate() {
        let by_id: HashMap<&str, &FigureRow> = full.iter().map(|r| (r.id.as_str(), r)).collect();
        let held: Vec<(&FigureRow, iosim::model::Family, f64)> = cv
            .held
            .iter()
            .filter_map(|(_, h)| {
                let f = by_id.get(h.row.id.as_str())?;
                let sigma_p = f.interval.param_pct / (100.0 * Z90);
                Some((&h.row, f.interval.family, sigma_p))
            })
            .collect();
        pooled.extend(held.iter().map(|(r, f, _)| (*f, log_residual(r))));
        let mut counts: HashMap<String, (usize, usize, f64)> = HashMap::new();
        for (r, family, sigma_p) in &held {
            if !papers.contains(&r.paper) {
                papers.push(r.paper.clone());
            }
            let others: Vec<(iosim::model::Family, f64)> = held
                .iter()
                .filter(|(o, _, _)| o.paper != r.paper)
                .map(|(o, f, _)| (*f, log_residual(o)))
                .collect();
            let Some(spread) = spread_from(&others, 1, "leave one paper out") else {
                continue;
            };
            if !log_residual(r).is_finite() {
                continue;
            }
            let sigma_p = if sigma_p.is_finite() { *sigma_p } else { 0.0 };
            let iv = Interval::of(r.predicted, Some(sigma_p), *family, &spread);
            if k == 0 {
                first_seed.insert(r.id.clone(), iv);
            }
            let half = 100.0 * (iv.high / r.predicted).ln();
            let c = counts.entry(r.paper.clone()).or_default();
            c.0 += usize::from(iv.covers(r.published));
            c.1 += 1;
            c.2 += half;
        }
        per_seed.push(counts);
    }
    let share = |c: Option<&(usize, usize, f64)>| {
        c.filter(|c| c.1 > 0)
            .map_or(f64::NAN, |c| 100.0 * c.0 as f64 / c.1 as f64)
    };
    let mean = |v: &[f64]| {
        let v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let mut row = |name: String, cs: Vec<Option<(usize, usize, f64)>>| {
        let shares: Vec<f64> = cs.iter().map(|c| share(c.as_ref())).collect();
        let halves: Vec<f64> = cs
            .iter()
            .flatten()
            .filter(|c| c.1 > 0)
            .map(|c| c.2 / c.1 as f64)
            .collect();
        let n = cs.first().cloned().flatten().map_or(0, |c| c.1);
        let mut cells = vec![Cell::Text(name), Cell::Int(n as u64)];
        cells.extend(shares.iter().map(|s| Cell::Num(*s, 1)));
        cells.push(Cell::Num(mean(&shares), 1));
        cells.push(Cell::Num(mean(&halves), 1));
        section.rows.push(cells);
    };
    for p in &papers {
        row(
            p.clone(),
            per_seed.iter().map(|m| m.get(p).cloned()).collect(),
        );
    }
    let all: Vec<Option<(usize, usize, f64)>> = per_seed
        .iter()
        .map(|m| {
            Some(
                m.values()
                    .fold((0, 0, 0.0), |a, c| (a.0 + c.0, a.1 + c.1, a.2 + c.2)),
            )
        })
        .collect();
    row("all".into(), all);
    let spread = spread_from(&pooled, seeds.len(), "validate --cross-validate").unwrap_or_default();
    Coverage {
        section,
        spread,
        first_seed,
    }
}

/// The structural spread of every paper's held-out figures (what
/// `--spread-out` writes): per family its standard deviation in log space,
/// the 90% half width it gives, and the figures behind it.
fn spread_section(s: &iosim::model::StructuralSpread) -> Section {
    let mut sec = Section::new(
        "spread",
        &["family", "sigma_log", "structural_pct", "figures"],
    );
    for f in iosim::model::Family::ALL {
        let (sigma, pinned) = s.sigma_of(f);
        let n = s
            .families
            .iter()
            .find(|x| x.family == f)
            .map_or(0, |x| x.figures);
        sec.rows.push(vec![
            Cell::Text(if pinned {
                f.name().to_string()
            } else {
                format!("{} (default)", f.name())
            }),
            Cell::Num(sigma, 4),
            Cell::Num(100.0 * iosim::interval::Z90 * sigma, 1),
            Cell::Int(n as u64),
        ]);
    }
    sec
}
