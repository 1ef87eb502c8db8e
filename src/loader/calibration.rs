//! Calibration files (free parameters) and fitted-parameter files.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::input::{read, Source};
use super::params::{check_value, in_range, whole_number};
use super::raw::Shape::{self, Any, Table, Tables};
use crate::error::{line_of, Error, Errors, Result};
use crate::model::{
    id_matches, CalibrationSpec, Choice, FittedValue, FreeParam, PaperDef, Registry,
    SameMeasurement,
};
use crate::units::{range_text, readable, to_base, unknown_unit};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCalibration {
    kind: Spanned<String>,
    #[serde(default)]
    #[allow(dead_code)]
    description: String,
    calibration: Option<RawSettings>,
    free: Spanned<Vec<RawFree>>,
    #[serde(default)]
    paper: Vec<RawPaper>,
    #[serde(default)]
    same_measurement: Vec<RawSame>,
    #[serde(default)]
    choice: Vec<RawChoice>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPaper {
    name: Spanned<String>,
    sources: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSame {
    figures: Spanned<Vec<String>>,
    why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChoice {
    id: Spanned<String>,
    paper: Spanned<String>,
    choice: String,
    evidence: String,
    #[serde(default)]
    params: Vec<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSettings {
    max_iterations: Option<Spanned<f64>>,
    difference_step: Option<Spanned<f64>>,
    search_evaluations: Option<Spanned<f64>>,
    search_precision_pct: Option<Spanned<f64>>,
    polish_tolerance_pct: Option<Spanned<f64>>,
    prior_weight: Option<Spanned<f64>>,
    robust_above_pct: Option<Spanned<f64>>,
    pair_moves: Option<bool>,
    fine_scans: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFree {
    param: Spanned<String>,
    #[serde(default)]
    also: Vec<Spanned<String>>,
    unit: Spanned<String>,
    min: Option<Spanned<f64>>,
    max: Option<Spanned<f64>>,
    choices: Option<Spanned<Vec<f64>>>,
    scale: Option<Spanned<String>>,
    initial: Spanned<f64>,
    meaning: Spanned<String>,
}

/// The keys of [`RawCalibration`] (see [`Shape`]).
const CALIBRATION: Shape = Table(&[
    ("kind", Any),
    ("description", Any),
    (
        "calibration",
        Table(&[
            ("max_iterations", Any),
            ("difference_step", Any),
            ("search_evaluations", Any),
            ("search_precision_pct", Any),
            ("polish_tolerance_pct", Any),
            ("prior_weight", Any),
            ("robust_above_pct", Any),
            ("pair_moves", Any),
            ("fine_scans", Any),
        ]),
    ),
    ("paper", Tables(&Table(&[("name", Any), ("sources", Any)]))),
    (
        "same_measurement",
        Tables(&Table(&[("figures", Any), ("why", Any)])),
    ),
    (
        "choice",
        Tables(&Table(&[
            ("id", Any),
            ("paper", Any),
            ("choice", Any),
            ("evidence", Any),
            ("params", Any),
        ])),
    ),
    (
        "free",
        Tables(&Table(&[
            ("param", Any),
            ("also", Any),
            ("unit", Any),
            ("min", Any),
            ("max", Any),
            ("choices", Any),
            ("scale", Any),
            ("initial", Any),
            ("meaning", Any),
        ])),
    ),
]);

/// The keys of [`RawFitted`] (see [`Shape`]).
const FITTED: Shape = Table(&[
    ("kind", Any),
    ("note", Any),
    (
        "param",
        Tables(&Table(&[
            ("path", Any),
            ("value", Any),
            ("unit", Any),
            ("ci95_low", Any),
            ("ci95_high", Any),
            ("note", Any),
        ])),
    ),
]);

/// A fitted-parameter file: what `iosim calibrate` writes ([`fitted_file_text`])
/// and `--params` reads, one struct for both.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawFitted {
    kind: Spanned<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[allow(dead_code)]
    note: String,
    param: Vec<RawFittedParam>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawFittedParam {
    path: Spanned<String>,
    value: Spanned<f64>,
    unit: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ci95_low: Option<Spanned<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ci95_high: Option<Spanned<f64>>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[allow(dead_code)]
    note: String,
}

/// One value of a fitted-parameter file, as [`fitted_file_text`] writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedEntry {
    /// Dotted parameter path (`server.rp8400-seu.io_read_latency`).
    pub path: String,
    /// The value in `unit`.
    pub value: f64,
    /// The unit of `value` and of the interval.
    pub unit: String,
    /// 95% confidence interval in `unit`, if the fit has one.
    pub ci95: Option<(f64, f64)>,
    /// A remark for the reader (empty: none).
    pub note: String,
}

/// `v` rounded to six decimals (what the file shows, and what is read back).
fn six_decimals(v: f64) -> f64 {
    format!("{v:.6}").parse().unwrap_or(v)
}

/// The text of a fitted-parameter file (`kind = "fitted"`) holding `entries`,
/// serialised from the struct [`apply_fitted`] reads, so that what is written
/// is what is read back. Each line of `comment` becomes a TOML comment at the
/// top. Values and intervals are rounded to six decimals. A value that is
/// not finite is an error ([`Error::Internal`]: the fit went wrong), never
/// written; an interval that is not finite is left out and said so in the note.
pub fn fitted_file_text(comment: &str, entries: &[FittedEntry]) -> Result<String> {
    let mut param = Vec::with_capacity(entries.len());
    for e in entries {
        if !e.value.is_finite() {
            return Err(Error::Internal(format!(
                "the fitted value of `{}` is {}: no fitted-parameter file written",
                e.path, e.value
            )));
        }
        let mut note = e.note.clone();
        let ci95 = match e.ci95 {
            Some((lo, hi)) if lo.is_finite() && hi.is_finite() => {
                Some((six_decimals(lo), six_decimals(hi)))
            }
            Some(_) => {
                if !note.is_empty() {
                    note.push_str("; ");
                }
                note.push_str("95% interval not finite");
                None
            }
            None => None,
        };
        param.push(RawFittedParam {
            path: Spanned::new(0..0, e.path.clone()),
            value: Spanned::new(0..0, six_decimals(e.value)),
            unit: Spanned::new(0..0, e.unit.clone()),
            ci95_low: ci95.map(|c| Spanned::new(0..0, c.0)),
            ci95_high: ci95.map(|c| Spanned::new(0..0, c.1)),
            note,
        });
    }
    let raw = RawFitted {
        kind: Spanned::new(0..0, "fitted".into()),
        note: String::new(),
        param,
    };
    commented_toml(comment, &raw, "a fitted-parameter file")
}

/// `value` as TOML under `comment`, each of its lines a `# ` comment;
/// `what` names the file in the error.
pub(crate) fn commented_toml<T: serde::Serialize>(
    comment: &str,
    value: &T,
    what: &str,
) -> Result<String> {
    let body =
        toml::to_string(value).map_err(|e| Error::Internal(format!("cannot write {what}: {e}")))?;
    let mut text = String::new();
    for line in comment.lines() {
        text.push_str("# ");
        text.push_str(line);
        text.push('\n');
    }
    text.push_str(&body);
    Ok(text)
}

/// Reads a calibration file, checking every free parameter against the
/// registry: it exists, its unit has the parameter's dimension, its bounds
/// lie inside the parameter's plausible range, and the initial value inside them.
pub fn load_calibration(path: &Path, reg: &mut Registry) -> Result<CalibrationSpec> {
    let text = read(path)?;
    parse_calibration(path, &text, reg)
}

/// Parses a calibration file's text; `path` is used in messages.
pub fn parse_calibration(path: &Path, text: &str, reg: &mut Registry) -> Result<CalibrationSpec> {
    let src = Source::new(path.to_path_buf(), text);
    let raw: RawCalibration = src.parse(&CALIBRATION)?;
    let mut errs = Errors::default();
    if raw.kind.get_ref() != "calibration" {
        errs.push(src.invalid("kind", raw.kind.span(), "expected kind = \"calibration\""));
    }
    let absent = RawSettings::default();
    let c = raw.calibration.as_ref().unwrap_or(&absent);
    let mut setting = |v: Option<&Spanned<f64>>, rule: &SettingRule| {
        errs.take(setting(&src, v, rule)).unwrap_or(rule.default)
    };
    let max_iterations = setting(c.max_iterations.as_ref(), &MAX_ITERATIONS) as u32;
    let difference_step = setting(c.difference_step.as_ref(), &DIFFERENCE_STEP);
    let search_evaluations = setting(c.search_evaluations.as_ref(), &SEARCH_EVALUATIONS) as u32;
    let search_precision_pct = c
        .search_precision_pct
        .as_ref()
        .map(|p| setting(Some(p), &SEARCH_PRECISION_PCT));
    let polish_tolerance_pct = setting(c.polish_tolerance_pct.as_ref(), &POLISH_TOLERANCE_PCT);
    let prior_weight = setting(c.prior_weight.as_ref(), &PRIOR_WEIGHT);
    let robust_above_pct = setting(c.robust_above_pct.as_ref(), &ROBUST_ABOVE_PCT);
    if raw.free.get_ref().is_empty() {
        errs.push(src.invalid(
            "free",
            raw.free.span(),
            "a calibration needs at least one [[free]] parameter",
        ));
    }
    let mut free: Vec<FreeParam> = Vec::new();
    for (i, f) in raw.free.get_ref().iter().enumerate() {
        if let Some(p) = errs.take(free_param(&src, reg, i, f, &free)) {
            free.push(p);
        }
    }
    let papers = papers(&src, &raw.paper, &mut errs);
    let same_measurement = raw
        .same_measurement
        .iter()
        .enumerate()
        .filter_map(|(i, g)| {
            let key = format!("same_measurement[{i}].figures");
            if g.figures.get_ref().is_empty() {
                errs.push(src.invalid(
                    &key,
                    g.figures.span(),
                    "a same_measurement group names at least one figure id or pattern",
                ));
                return None;
            }
            Some(SameMeasurement {
                figures: g.figures.get_ref().clone(),
                why: g.why.clone(),
                at: src.at(&key, g.figures.span()),
            })
        })
        .collect();
    let choices = choices(&src, &raw.choice, &papers, reg, &mut errs);
    errs.finish(CalibrationSpec {
        file: path.to_path_buf(),
        free,
        max_iterations,
        difference_step,
        search_evaluations,
        search_precision_pct,
        polish_tolerance_pct,
        prior_weight,
        robust_above_pct,
        pair_moves: c.pair_moves.unwrap_or(true),
        fine_scans: c.fine_scans.unwrap_or(true),
        papers,
        same_measurement,
        choices,
    })
}

/// The `[[paper]]` tables: names unique.
fn papers(src: &Source, raw: &[RawPaper], errs: &mut Errors) -> Vec<PaperDef> {
    let mut out: Vec<PaperDef> = Vec::new();
    for (i, p) in raw.iter().enumerate() {
        let key = format!("paper[{i}].name");
        let name = p.name.get_ref().clone();
        if out.iter().any(|q| q.name == name) {
            errs.push(src.invalid(
                &key,
                p.name.span(),
                format!("paper `{name}` is declared twice"),
            ));
            continue;
        }
        out.push(PaperDef {
            name,
            sources: p.sources.clone(),
            at: src.at(&key, p.name.span()),
        });
    }
    out
}

/// The `[[choice]]` tables: ids unique, each of a declared paper, each
/// parameter pattern naming at least one model parameter.
fn choices(
    src: &Source,
    raw: &[RawChoice],
    papers: &[PaperDef],
    reg: &Registry,
    errs: &mut Errors,
) -> Vec<Choice> {
    let mut paths: Vec<String> = Vec::new();
    let mut reg = reg.clone();
    for (prefix, set) in reg.param_sets_mut() {
        paths.extend(set.map.keys().map(|k| format!("{prefix}.{k}")));
    }
    let mut out: Vec<Choice> = Vec::new();
    for (i, c) in raw.iter().enumerate() {
        let k = |s: &str| format!("choice[{i}].{s}");
        let id = c.id.get_ref().clone();
        let well_formed = !id.is_empty()
            && id
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-');
        if !well_formed {
            errs.push(src.invalid(
                &k("id"),
                c.id.span(),
                "a choice id is lower-case letters, digits and `-`",
            ));
            continue;
        }
        if out.iter().any(|x| x.id == id) {
            errs.push(src.invalid(
                &k("id"),
                c.id.span(),
                format!("choice `{id}` is declared twice"),
            ));
            continue;
        }
        if !papers.iter().any(|p| &p.name == c.paper.get_ref()) {
            errs.push(src.invalid(
                &k("paper"),
                c.paper.span(),
                format!("no [[paper]] named `{}`", c.paper.get_ref()),
            ));
            continue;
        }
        let mut ok = true;
        for p in &c.params {
            if !paths.iter().any(|q| id_matches(p.get_ref(), q)) {
                errs.push(src.invalid(
                    &k("params"),
                    p.span(),
                    format!(
                        "no model parameter matches `{}` (see `iosim params`)",
                        p.get_ref()
                    ),
                ));
                ok = false;
            }
        }
        if ok {
            out.push(Choice {
                id,
                paper: c.paper.get_ref().clone(),
                choice: c.choice.clone(),
                evidence: c.evidence.clone(),
                params: c.params.iter().map(|p| p.get_ref().clone()).collect(),
                at: src.at(&k("id"), c.id.span()),
            });
        }
    }
    out
}

/// Free parameter `i` of a calibration file, checked against the registry
/// and the free parameters before it.
fn free_param(
    src: &Source,
    reg: &mut Registry,
    i: usize,
    f: &RawFree,
    free: &[FreeParam],
) -> Result<FreeParam> {
    let k = |s: &str| format!("free[{i}].{s}");
    let pth = f.param.get_ref().clone();
    let Some(target) = reg.param(&pth) else {
        return Err(src.invalid(
            &k("param"),
            f.param.span(),
            format!("no model parameter `{pth}` (see `iosim params`)"),
        ));
    };
    if free.iter().any(|x| x.paths().any(|q| q == pth)) {
        return Err(src.invalid(
            &k("param"),
            f.param.span(),
            format!("`{pth}` is declared free twice"),
        ));
    }
    if let Some(from) = &target.inherited {
        return Err(src.invalid(&k("param"), f.param.span(), inherited_message(&pth, from)));
    }
    if !target.is_fitted() {
        return Err(not_fitted(
            src,
            &k("param"),
            f.param.span(),
            &pth,
            &target.source,
        ));
    }
    let mut also = Vec::new();
    for a in &f.also {
        let ap = a.get_ref();
        let Some(other) = reg.param(ap) else {
            return Err(src.invalid(
                &k("also"),
                a.span(),
                format!("no model parameter `{ap}` (see `iosim params`)"),
            ));
        };
        if !other.is_fitted() {
            return Err(not_fitted(src, &k("also"), a.span(), ap, &other.source));
        }
        let declared = free.iter().any(|x: &FreeParam| x.paths().any(|q| q == ap));
        if ap == &pth || also.contains(ap) || declared {
            return Err(src.invalid(
                &k("also"),
                a.span(),
                format!("`{ap}` is declared free twice"),
            ));
        }
        if to_base(1.0, &other.unit).map(|d| d.0) != to_base(1.0, &target.unit).map(|d| d.0) {
            return Err(src.invalid(
                &k("also"),
                a.span(),
                format!("`{ap}` has another dimension than `{pth}`"),
            ));
        }
        also.push(ap.clone());
    }
    let unit = f.unit.get_ref();
    let (Some((dim, scale)), Some((tdim, _))) = (to_base(1.0, unit), to_base(1.0, &target.unit))
    else {
        return Err(src.invalid(
            &k("unit"),
            f.unit.span(),
            unknown_unit(unit, to_base(1.0, &target.unit).map(|(d, _)| d)),
        ));
    };
    if dim != tdim {
        return Err(src.invalid(
            &k("unit"),
            f.unit.span(),
            format!("unit `{unit}` is not {tdim}, the dimension of `{pth}`"),
        ));
    }
    let init = *f.initial.get_ref() * scale;
    let mut choices: Vec<f64> = Vec::new();
    let (lo, hi) = match (&f.choices, &f.min, &f.max) {
        (Some(c), None, None) => {
            let list = c.get_ref();
            let ascending = list.windows(2).all(|w| w[0] < w[1]);
            if list.len() < 2 || !ascending || list.iter().any(|v| !v.is_finite()) {
                return Err(src.invalid(
                    &k("choices"),
                    c.span(),
                    "choices must be at least two finite numbers in ascending order",
                ));
            }
            choices = list.iter().map(|v| v * scale).collect();
            (choices[0], choices[choices.len() - 1])
        }
        (None, Some(mn), Some(mx)) => (*mn.get_ref() * scale, *mx.get_ref() * scale),
        (Some(c), _, _) => {
            return Err(src.invalid(
                &k("choices"),
                c.span(),
                "give either `choices` (a discrete parameter) or `min` and `max`, not both",
            ));
        }
        _ => {
            return Err(src.invalid(
                &k("param"),
                f.param.span(),
                "a free parameter needs `min` and `max`, or `choices`",
            ));
        }
    };
    if !(lo.is_finite() && hi.is_finite() && init.is_finite()) || lo >= hi {
        let span = f.min.as_ref().map_or(f.param.span(), |m| m.span());
        return Err(src.invalid(
            &k("min"),
            span,
            "bounds must be finite numbers with min < max",
        ));
    }
    // A parameter that counts whole things moves only between whole choices:
    // a fit never sets a fraction of a slot.
    for p in std::iter::once(&pth).chain(&also) {
        let Some(rule) = reg.rule_of(p) else {
            continue;
        };
        if !rule.whole {
            continue;
        }
        if choices.is_empty() {
            return Err(src.invalid(
                &k("param"),
                f.param.span(),
                format!("`{p}` counts whole things: give it `choices` of whole values, not `min` and `max`"),
            ));
        }
        if let Some(bad) = choices
            .iter()
            .find(|&&c| check_value(rule, c, unit).is_err())
        {
            let span = f.choices.as_ref().map_or(f.param.span(), |c| c.span());
            return Err(src.invalid(
                &k("choices"),
                span,
                format!(
                    "{} {unit} {}",
                    readable(bad / scale),
                    check_value(rule, *bad, unit).err().unwrap_or_default()
                ),
            ));
        }
    }
    for p in std::iter::once(&pth).chain(&also) {
        let Some((rmin, rmax)) = reg.range_of(p) else {
            continue;
        };
        let tol = 1e-9 * rmax.abs().max(1.0);
        if lo < rmin - tol || hi > rmax + tol {
            let (key, span) = if p != &pth {
                ("also", f.param.span())
            } else if choices.is_empty() {
                ("max", f.max.as_ref().map_or(f.param.span(), |m| m.span()))
            } else {
                (
                    "choices",
                    f.choices.as_ref().map_or(f.param.span(), |c| c.span()),
                )
            };
            return Err(src.invalid(
                &k(key),
                span,
                format!(
                    "bounds {} leave the plausible range {} of `{p}`",
                    range_text(lo, hi, dim, unit),
                    range_text(rmin, rmax, dim, unit)
                ),
            ));
        }
        if p == &pth && (init < lo || init > hi) {
            return Err(src.invalid(
                &k("initial"),
                f.initial.span(),
                "the initial value lies outside min to max",
            ));
        }
    }
    let log_scale = match f.scale.as_ref() {
        None => false,
        Some(sc) => match sc.get_ref().as_str() {
            "linear" => false,
            "log" if choices.is_empty() && lo > 0.0 => true,
            "log" => {
                return Err(src.invalid(
                    &k("scale"),
                    sc.span(),
                    "a log scale needs a continuous parameter with min > 0",
                ));
            }
            other => {
                return Err(src.invalid(
                    &k("scale"),
                    sc.span(),
                    format!("unknown scale `{other}` (linear or log)"),
                ));
            }
        },
    };
    if !choices.is_empty()
        && !choices
            .iter()
            .any(|c| (c - init).abs() <= 1e-9 * c.abs().max(1.0))
    {
        return Err(src.invalid(
            &k("initial"),
            f.initial.span(),
            "the initial value of a discrete parameter must be one of its choices",
        ));
    }
    if f.meaning.get_ref().trim().is_empty() {
        return Err(src.invalid(
            &k("meaning"),
            f.meaning.span(),
            "say what the parameter means physically",
        ));
    }
    Ok(FreeParam {
        path: pth,
        also,
        unit: unit.clone(),
        unit_scale: scale,
        min: lo,
        max: hi,
        initial: init,
        meaning: f.meaning.get_ref().clone(),
        choices,
        log_scale,
        at: src.at(&k("param"), f.param.span()),
    })
}

/// A `[calibration]` setting: its key, allowed range, default, what it
/// counts if it counts whole things, and a hint for the message when it is
/// out of range.
struct SettingRule {
    key: &'static str,
    range: (f64, f64),
    default: f64,
    counts: Option<&'static str>,
    hint: &'static str,
}

const fn rule(
    key: &'static str,
    lo: f64,
    hi: f64,
    default: f64,
    hint: &'static str,
) -> SettingRule {
    SettingRule {
        key,
        range: (lo, hi),
        default,
        counts: None,
        hint,
    }
}

/// A setting that counts whole things (iterations, evaluations).
const fn count(
    key: &'static str,
    lo: f64,
    hi: f64,
    default: f64,
    counts: &'static str,
) -> SettingRule {
    SettingRule {
        counts: Some(counts),
        ..rule(key, lo, hi, default, "")
    }
}

const MAX_ITERATIONS: SettingRule = count(
    "calibration.max_iterations",
    1.0,
    1000.0,
    30.0,
    "iterations",
);
const DIFFERENCE_STEP: SettingRule = rule(
    "calibration.difference_step",
    0.001,
    0.25,
    0.02,
    " (a fraction of each parameter's range)",
);
const SEARCH_EVALUATIONS: SettingRule = count(
    "calibration.search_evaluations",
    0.0,
    100_000.0,
    400.0,
    "evaluations",
);
const SEARCH_PRECISION_PCT: SettingRule = rule(
    "calibration.search_precision_pct",
    0.01,
    50.0,
    0.0,
    " (percent: the 95% interval of every throughput during the search)",
);
const POLISH_TOLERANCE_PCT: SettingRule = rule(
    "calibration.polish_tolerance_pct",
    0.0,
    50.0,
    0.01,
    " (percent: the polish stops once a step lowers the objective by less)",
);
const PRIOR_WEIGHT: SettingRule = rule(
    "calibration.prior_weight",
    0.0,
    1.0,
    0.0,
    " (a relative error per whole range)",
);
const ROBUST_ABOVE_PCT: SettingRule = rule(
    "calibration.robust_above_pct",
    0.0,
    100.0,
    0.0,
    " (percent; 0 for plain least squares)",
);

/// A free parameter whose model file does not call it fitted: its fit
/// would write a file that `--params` refuses, so it is refused first.
fn not_fitted(
    src: &Source,
    key: &str,
    span: std::ops::Range<usize>,
    path: &str,
    source: &str,
) -> Error {
    src.invalid(
        key,
        span,
        format!(
            "`{path}` is not a fitted parameter (its model file gives its source as \"{source}\"): only a parameter whose source says \"fitted\" can be freed, as a fitted file sets only those"
        ),
    )
}

/// Why `path`, a value its model takes from `from` through `extends`,
/// cannot be freed or set by a fit on its own.
fn inherited_message(path: &str, from: &str) -> String {
    format!(
        "`{path}` is inherited from `{from}` through `extends`: free or fit `{from}`'s value, which the model takes, or give the model a value of its own"
    )
}

/// The value of setting `rule`, its default when absent, checked against
/// its range (and, for a count, to be a whole number).
fn setting(src: &Source, value: Option<&Spanned<f64>>, rule: &SettingRule) -> Result<f64> {
    let Some(v) = value else {
        return Ok(rule.default);
    };
    let x = match rule.counts {
        Some(what) => whole_number(src, rule.key, v, what)?,
        None => *v.get_ref(),
    };
    let (lo, hi) = rule.range;
    if !(x.is_finite() && (lo..=hi).contains(&x)) {
        return Err(src.invalid(
            rule.key,
            v.span(),
            format!("{} is outside {lo} to {hi}{}", readable(x), rule.hint),
        ));
    }
    Ok(x)
}

/// The bundled calibration file (`models/calibration.toml`).
pub fn load_bundled_calibration(reg: &mut Registry) -> Result<CalibrationSpec> {
    let Some((p, text)) = super::input::bundled_files("models/calibration.toml")
        .into_iter()
        .next()
    else {
        return Err(Error::Usage(
            "no bundled models/calibration.toml: give --calibration FILE".into(),
        ));
    };
    parse_calibration(Path::new(&format!("<bundled>/{p}")), text, reg)
}

/// Reads a file written by `iosim calibrate` and applies its values to the registry.
pub fn apply_fitted(path: &Path, reg: &mut Registry) -> Result<Vec<FittedValue>> {
    let text = read(path)?;
    apply_fitted_text(path, &text, reg)
}

/// What the bundled fit did to a registry.
#[derive(Debug, Clone, PartialEq)]
pub struct BundledFit {
    /// The fit's name (`<bundled>/models/fitted.toml`).
    pub name: String,
    /// The values applied.
    pub applied: Vec<FittedValue>,
    /// Fitted parameters left alone because a `--models` file replaced their
    /// model and still gives them as "fitted" (its value is then the guess
    /// made before a fit): dotted paths, in the fit file's order.
    pub kept: Vec<String>,
}

/// Applies the bundled fit (`models/fitted.toml`, written by `iosim calibrate`)
/// if there is one, to the parameters that still come from the bundled model
/// files: a model a `--models` file replaced keeps that file's values, and
/// those parameters are listed in [`BundledFit::kept`] so the caller can say so.
pub fn apply_bundled_fitted(reg: &mut Registry) -> Result<Option<BundledFit>> {
    let Some((p, text)) = super::input::bundled_files("models/fitted.toml")
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    let name = format!("<bundled>/{p}");
    let mut kept = Vec::new();
    let applied = apply_fitted_inner(Path::new(&name), text, reg, Some(&mut kept))?;
    Ok(Some(BundledFit {
        name,
        applied,
        kept,
    }))
}

/// Applies the text of a fitted-parameter file; `path` is used in messages.
pub fn apply_fitted_text(path: &Path, text: &str, reg: &mut Registry) -> Result<Vec<FittedValue>> {
    apply_fitted_inner(path, text, reg, None)
}

fn apply_fitted_inner(
    path: &Path,
    text: &str,
    reg: &mut Registry,
    mut only_bundled: Option<&mut Vec<String>>,
) -> Result<Vec<FittedValue>> {
    let src = Source::new(path.to_path_buf(), text);
    let raw: RawFitted = src.parse(&FITTED)?;
    if raw.kind.get_ref() != "fitted" {
        return Err(src.invalid(
            "kind",
            raw.kind.span(),
            "expected kind = \"fitted\" (a file written by `iosim calibrate`)",
        ));
    }
    let mut errs = Errors::default();
    let mut out = Vec::new();
    let mut first_of: HashMap<&str, usize> = HashMap::new();
    for (i, p) in raw.param.iter().enumerate() {
        let k = |s: &str| format!("param[{i}].{s}");
        if let Some(j) = first_of.insert(p.path.get_ref(), i) {
            first_of.insert(p.path.get_ref(), j);
            errs.push(src.invalid(
                &k("path"),
                p.path.span(),
                format!(
                    "`{}` is set twice (first at param[{j}], line {}): give each parameter once",
                    p.path.get_ref(),
                    line_of(text, raw.param[j].path.span().start)
                ),
            ));
            continue;
        }
        if let (Some(lo), Some(hi)) = (&p.ci95_low, &p.ci95_high) {
            if lo
                .get_ref()
                .partial_cmp(hi.get_ref())
                .is_none_or(|o| o.is_gt())
            {
                errs.push(src.invalid(
                    &k("ci95_low"),
                    lo.span(),
                    format!(
                        "ci95_low {} is above ci95_high {}: a 95% interval runs from low to high",
                        readable(*lo.get_ref()),
                        readable(*hi.get_ref())
                    ),
                ));
            }
        }
        let Some((target, base)) = errs.take(fitted_value(&src, reg, i, p)) else {
            continue;
        };
        // The interval's ends, in the value's unit, within the parameter's
        // plausible range (an interval reaching a negative latency, or a
        // cost of 10^19 us, is no interval of a fit).
        let written = *p.value.get_ref();
        if let Some(rule) = reg.rule_of(p.path.get_ref()).filter(|_| written != 0.0) {
            let scale = base / written;
            for (key, end) in [("ci95_low", &p.ci95_low), ("ci95_high", &p.ci95_high)] {
                let Some(end) = end else { continue };
                if !in_range(rule, *end.get_ref() * scale) {
                    errs.push(src.invalid(
                        &k(key),
                        end.span(),
                        format!(
                            "{key} {} {} is outside the plausible range {} of `{}`",
                            readable(*end.get_ref()),
                            p.unit.get_ref(),
                            crate::units::range_text(
                                rule.min,
                                rule.max,
                                rule.dim,
                                p.unit.get_ref()
                            ),
                            p.path.get_ref()
                        ),
                    ));
                }
            }
        }
        let at = src.at(&k("value"), p.value.span());
        if let Some(kept) = only_bundled.as_deref_mut() {
            if !target.at.file.starts_with("<bundled>") {
                // A value the replacing file calls fitted is its guess made
                // before a fit: worth a warning. Its own values are not.
                if target.is_fitted() {
                    kept.push(p.path.get_ref().clone());
                }
                continue;
            }
        }
        if let Some(from) = &target.inherited {
            errs.push(src.invalid(
                &k("path"),
                p.path.span(),
                inherited_message(p.path.get_ref(), from),
            ));
            continue;
        }
        if !target.is_fitted() {
            // A value fitted once must not outlive the decision to fix it.
            errs.push(Error::Invalid {
                at: src.at(&k("path"), p.path.span()),
                message: format!(
                    "`{}` is not a fitted parameter (its model file gives its source as \"{}\"): a fitted file sets only parameters whose source says \"fitted\"",
                    p.path.get_ref(),
                    target.source
                ),
            });
            continue;
        }
        reg.set_param_from(
            p.path.get_ref(),
            base,
            &format!("fitted: iosim calibrate ({})", path.display()),
            &at,
        );
        // The standard error, from the 95% interval (its half width over
        // 1.96), in the base unit.
        let sigma = match (&p.ci95_low, &p.ci95_high) {
            (Some(lo), Some(hi)) if *p.value.get_ref() != 0.0 => {
                let scale = base / *p.value.get_ref();
                Some((hi.get_ref() - lo.get_ref()) * scale.abs() / (2.0 * 1.96))
                    .filter(|s| s.is_finite() && *s > 0.0)
            }
            _ => None,
        };
        reg.set_param_sigma(p.path.get_ref(), sigma);
        out.push(FittedValue {
            path: p.path.get_ref().clone(),
            base,
            at,
        });
    }
    errs.finish(out)
}

/// Entry `i` of a fitted-parameter file: the parameter it sets and its new
/// value in the base unit, checked for unit, range and, for a parameter
/// that counts whole things, a whole value.
fn fitted_value(
    src: &Source,
    reg: &mut Registry,
    i: usize,
    p: &RawFittedParam,
) -> Result<(crate::model::ParamValue, f64)> {
    let k = |s: &str| format!("param[{i}].{s}");
    let Some(target) = reg.param(p.path.get_ref()) else {
        return Err(Error::Invalid {
            at: src.at(&k("path"), p.path.span()),
            message: format!("no model parameter `{}`", p.path.get_ref()),
        });
    };
    let (Some((dim, base)), Some((tdim, _))) = (
        to_base(*p.value.get_ref(), p.unit.get_ref()),
        to_base(1.0, &target.unit),
    ) else {
        return Err(src.invalid(
            &k("unit"),
            p.unit.span(),
            unknown_unit(p.unit.get_ref(), to_base(1.0, &target.unit).map(|(d, _)| d)),
        ));
    };
    if dim != tdim {
        return Err(src.invalid(
            &k("unit"),
            p.unit.span(),
            format!("unit `{}` is not {tdim}", p.unit.get_ref()),
        ));
    }
    if let Some(rule) = reg.rule_of(p.path.get_ref()) {
        if let Err(why) = check_value(rule, base, p.unit.get_ref()) {
            return Err(src.invalid(
                &k("value"),
                p.value.span(),
                format!(
                    "{} {} {why}",
                    readable(*p.value.get_ref()),
                    p.unit.get_ref()
                ),
            ));
        }
    }
    Ok((target, base))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, value: f64, unit: &str) -> FittedEntry {
        FittedEntry {
            path: path.into(),
            value,
            unit: unit.into(),
            ci95: None,
            note: String::new(),
        }
    }

    #[test]
    fn the_bundled_fit_written_again_reads_back_the_same_values() {
        let (_, text) = super::super::input::bundled_files("models/fitted.toml")[0];
        let raw: RawFitted = toml::from_str(text).unwrap();
        let entries: Vec<FittedEntry> = raw
            .param
            .iter()
            .map(|p| FittedEntry {
                path: p.path.get_ref().clone(),
                value: *p.value.get_ref(),
                unit: p.unit.get_ref().clone(),
                ci95: p
                    .ci95_low
                    .as_ref()
                    .map(|l| *l.get_ref())
                    .zip(p.ci95_high.as_ref().map(|h| *h.get_ref())),
                note: p.note.clone(),
            })
            .collect();
        let written = fitted_file_text("a comment\nand another", &entries).unwrap();
        assert!(
            written.starts_with("# a comment\n# and another\n"),
            "{written}"
        );
        let again: RawFitted = toml::from_str(&written).unwrap();
        assert_eq!(again.param.len(), raw.param.len());
        for (a, b) in raw.param.iter().zip(&again.param) {
            assert_eq!(a.path.get_ref(), b.path.get_ref());
            assert_eq!(a.value.get_ref(), b.value.get_ref(), "{}", a.path.get_ref());
            assert_eq!(a.unit.get_ref(), b.unit.get_ref());
            let ci = |x: &RawFittedParam| {
                (
                    x.ci95_low.as_ref().map(|v| *v.get_ref()),
                    x.ci95_high.as_ref().map(|v| *v.get_ref()),
                )
            };
            assert_eq!(ci(a), ci(b));
            assert_eq!(a.note, b.note);
        }
        let mut one = super::super::load_registry(&[]).unwrap();
        let mut two = one.clone();
        let x = apply_fitted_text(Path::new("bundled"), text, &mut one).unwrap();
        let y = apply_fitted_text(Path::new("written"), &written, &mut two).unwrap();
        let base = |v: &[FittedValue]| {
            v.iter()
                .map(|f| (f.path.clone(), f.base))
                .collect::<Vec<_>>()
        };
        assert_eq!(base(&x), base(&y));
    }

    #[test]
    fn values_are_rounded_to_six_decimals_and_a_value_not_finite_is_an_error() {
        let mut e = entry("server.rp8400-seu.io_read_latency", 524.616_309_87, "ns");
        e.ci95 = Some((f64::NAN, 600.0));
        let text = fitted_file_text("", &[e.clone()]).unwrap();
        assert!(text.contains("value = 524.61631\n"), "{text}");
        assert!(!text.contains("ci95"), "{text}");
        assert!(text.contains("95% interval not finite"), "{text}");
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            e.value = bad;
            let err = fitted_file_text("", &[e.clone()]).unwrap_err();
            assert!(matches!(err, Error::Internal(_)), "{err}");
            assert!(err.to_string().contains("io_read_latency"), "{err}");
        }
    }
}
