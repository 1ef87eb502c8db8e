//! Conversion of `{ value, unit, source }` tables into checked parameters.

use toml::Spanned;

use super::input::Source;
use super::raw::{RawParam, RawParams};
use crate::error::{Errors, Result};
use crate::model::schema::ParamRule;
use crate::model::{ParamSet, ParamValue};
use crate::units::{range_text, readable, to_base};

/// Checks a parameter table against `rules`: every rule present, no unknown
/// key, a unit of the right dimension, a value in the plausible range, a
/// whole number for a parameter that counts whole things, and a non-empty
/// source. Every error of the table is reported, in file order.
pub(crate) fn convert_params(
    src: &Source,
    table: &str,
    raw: &Spanned<RawParams>,
    rules: &[ParamRule],
) -> Result<ParamSet> {
    convert_some_params(src, table, Some(raw), raw.span(), rules, true)
}

/// [`convert_params`] of a table that may be absent (`at` is where its
/// absence is reported), requiring every rule only when `require` (a model
/// that `extends` another states only what it overrides).
pub(crate) fn convert_some_params(
    src: &Source,
    table: &str,
    raw: Option<&Spanned<RawParams>>,
    at: std::ops::Range<usize>,
    rules: &[ParamRule],
    require: bool,
) -> Result<ParamSet> {
    let empty = RawParams::default();
    let (map, span) = match raw {
        Some(r) => (r.get_ref(), r.span()),
        None => (&empty, at),
    };
    let mut set = ParamSet::default();
    let mut errs = Errors::default();
    // The map is sorted by key; messages follow the file.
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    for (key, p) in entries {
        let path = format!("{table}.{}", key.get_ref());
        if let Some(v) = errs.take(convert_param(src, &path, key, p, rules)) {
            set.map.insert(key.get_ref().clone(), v);
        }
    }
    for rule in rules.iter().filter(|_| require) {
        if rule.absent.is_none() && !map.contains_key(rule.key) {
            errs.push(src.invalid(
                &format!("{table}.{}", rule.key),
                span.clone(),
                format!(
                    "missing parameter `{}` ({}, {})",
                    rule.key, rule.meaning, rule.dim
                ),
            ));
        }
    }
    errs.finish(set)
}

/// One parameter of a table, checked against its rule in `rules`. Each
/// error points at what is wrong: the key, the value or the unit.
fn convert_param(
    src: &Source,
    path: &str,
    key: &Spanned<String>,
    p: &Spanned<RawParam>,
    rules: &[ParamRule],
) -> Result<ParamValue> {
    let Some(rule) = rules.iter().find(|r| r.key == key.get_ref()) else {
        let names: Vec<&str> = rules.iter().map(|r| r.key).collect();
        return Err(src.invalid(
            path,
            key.span(),
            format!("unknown parameter; expected one of: {}", names.join(", ")),
        ));
    };
    let v = p.get_ref();
    let (value, unit) = (*v.value.get_ref(), v.unit.get_ref());
    if !value.is_finite() {
        return Err(src.invalid(path, v.value.span(), "value is not a finite number"));
    }
    let Some((dim, base)) = to_base(value, unit) else {
        return Err(src.invalid(
            path,
            v.unit.span(),
            crate::units::unknown_unit(unit, Some(rule.dim)),
        ));
    };
    if dim != rule.dim {
        return Err(src.invalid(
            path,
            v.unit.span(),
            format!("unit `{unit}` is not {}", rule.dim),
        ));
    }
    check_value(rule, base, unit).map_err(|why| {
        src.invalid(
            path,
            v.value.span(),
            format!("{} {unit} {why}", readable(value)),
        )
    })?;
    if v.source.trim().is_empty() {
        return Err(src.invalid(
            path,
            p.span(),
            "empty `source`: say which spec or document, or \"assumed\", or \"fitted\"",
        ));
    }
    let range = match &v.range {
        Some(r) => Some(convert_range(src, path, r, rule, unit, value)?),
        None => None,
    };
    Ok(ParamValue {
        base,
        written: value,
        unit: unit.clone(),
        source: v.source.clone(),
        meaning: rule.meaning,
        at: src.at(path, p.span()),
        inherited: None,
        sigma: None,
        range,
    })
}

/// A parameter's `range = [low, high]` (in the value's `unit`), in the base
/// unit: two numbers, low below high, the value between them, each end a
/// value the rule allows.
fn convert_range(
    src: &Source,
    path: &str,
    r: &Spanned<Vec<f64>>,
    rule: &ParamRule,
    unit: &str,
    value: f64,
) -> Result<(f64, f64)> {
    let bad = |why: String| src.invalid(&format!("{path}.range"), r.span(), why);
    let &[low, high] = r.get_ref().as_slice() else {
        return Err(bad(format!(
            "a range is two numbers `[low, high]` in `{unit}`, not {}",
            r.get_ref().len()
        )));
    };
    if !(low.is_finite() && high.is_finite() && low < high && low <= value && value <= high) {
        return Err(bad(format!(
            "[{}, {}] {unit} is not a range around the value {}: low < high, low <= value <= high",
            readable(low),
            readable(high),
            readable(value)
        )));
    }
    let mut ends = [0.0; 2];
    for (end, x) in ends.iter_mut().zip([low, high]) {
        let base = to_base(x, unit).map_or(f64::NAN, |(_, b)| b);
        check_value(rule, base, unit)
            .map_err(|why| bad(format!("the range's end {} {unit} {why}", readable(x))))?;
        *end = base;
    }
    Ok((ends[0], ends[1]))
}

/// Whether `base` (in the base unit of `rule`'s dimension) is a value the
/// rule allows: inside its plausible range, and a whole number if it counts
/// whole things (never rounded). `Err` says why not, to follow the value as
/// written in `unit`: `is outside the plausible range ...` (in `unit`),
/// `is not a whole number ...`.
pub(crate) fn check_value(
    rule: &ParamRule,
    base: f64,
    unit: &str,
) -> std::result::Result<(), String> {
    if !in_range(rule, base) {
        return Err(format!(
            "is outside the plausible range {} for {}",
            range_text(rule.min, rule.max, rule.dim, unit),
            rule.meaning
        ));
    }
    if rule.whole && !is_whole(base) {
        let unit = rule.dim.base_unit();
        let what = if unit.is_empty() {
            "not a whole number".to_string()
        } else {
            format!("{} {unit}, not a whole number of {unit}", readable(base))
        };
        return Err(format!(
            "is {what}: `{}` counts whole things and is used as written, never rounded",
            rule.key
        ));
    }
    Ok(())
}

/// Whether `base` (in the base unit of `rule`'s dimension) lies in the
/// rule's plausible range, within a rounding tolerance.
pub(crate) fn in_range(rule: &ParamRule, base: f64) -> bool {
    let tol = 1e-9 * rule.max.abs().max(1.0);
    base.is_finite() && base >= rule.min - tol && base <= rule.max + tol
}

/// True when `x` is a whole number, but for the last bits of a unit
/// conversion (`0.001 KB` is 1 byte).
pub(crate) fn is_whole(x: f64) -> bool {
    x.is_finite() && (x - x.round()).abs() <= 1e-9 * x.abs().max(1.0)
}

/// The value of a key that counts whole things (`cells`, `outstanding`,
/// `ropes`, ...): written as an integer, or as a number with no fraction;
/// anything else is an error, never rounded. `what` names the things counted.
pub(crate) fn whole_number(src: &Source, key: &str, v: &Spanned<f64>, what: &str) -> Result<f64> {
    let x = *v.get_ref();
    if !x.is_finite() || x.fract() != 0.0 {
        return Err(src.invalid(
            key,
            v.span(),
            format!(
                "{} is not a whole number: it counts {what}, and is never rounded",
                readable(x)
            ),
        ));
    }
    Ok(x)
}

/// A non-empty name made of letters, digits, `-`, `_` and `.`.
pub(crate) fn check_name(src: &Source, key: &str, name: &Spanned<String>) -> Result<String> {
    let n = name.get_ref();
    if n.is_empty()
        || !n
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c))
    {
        return Err(src.invalid(
            key,
            name.span(),
            format!("`{n}` is not a valid name (letters, digits, - _ . + only)"),
        ));
    }
    Ok(n.clone())
}

/// A non-empty list of names, none given twice.
pub(crate) fn spanned_list(
    src: &Source,
    key: &str,
    list: &Spanned<Vec<Spanned<String>>>,
) -> Result<Vec<String>> {
    if list.get_ref().is_empty() {
        return Err(src.invalid(key, list.span(), "the list is empty"));
    }
    let mut seen = std::collections::HashSet::new();
    list.get_ref()
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let name = check_name(src, key, s)?;
            if !seen.insert(name.clone()) {
                return Err(src.invalid(
                    &format!("{key}[{i}]"),
                    s.span(),
                    format!("`{name}` is given twice in the list"),
                ));
            }
            Ok(name)
        })
        .collect()
}
