//! Conversion of `{ value, unit, source }` tables into checked parameters.

use toml::Spanned;

use super::raw::RawParams;
use super::Source;
use crate::error::Result;
use crate::model::schema::ParamRule;
use crate::model::{ParamSet, ParamValue};
use crate::units::{range_text, readable, to_base};

/// Checks a parameter table against `rules`: every rule present, no unknown
/// key, a unit of the right dimension, a value in the plausible range, and a
/// non-empty source.
pub(crate) fn convert_params(
    src: &Source,
    table: &str,
    raw: &Spanned<RawParams>,
    rules: &[ParamRule],
) -> Result<ParamSet> {
    let mut set = ParamSet::default();
    for (key, p) in raw.get_ref() {
        let path = format!("{table}.{key}");
        let Some(rule) = rules.iter().find(|r| r.key == key) else {
            let names: Vec<&str> = rules.iter().map(|r| r.key).collect();
            return Err(src.invalid(
                &path,
                p.span(),
                format!("unknown parameter; expected one of: {}", names.join(", ")),
            ));
        };
        let v = p.get_ref();
        if !v.value.is_finite() {
            return Err(src.invalid(&path, p.span(), "value is not a finite number"));
        }
        let Some((dim, base)) = to_base(v.value, &v.unit) else {
            return Err(src.invalid(
                &path,
                p.span(),
                format!("unknown unit `{}`; expected {}", v.unit, rule.dim),
            ));
        };
        if dim != rule.dim {
            return Err(src.invalid(
                &path,
                p.span(),
                format!("unit `{}` is not {}", v.unit, rule.dim),
            ));
        }
        let tol = 1e-9 * rule.max.abs().max(1.0);
        if base < rule.min - tol || base > rule.max + tol {
            return Err(src.invalid(
                &path,
                p.span(),
                format!(
                    "{} {} is outside the plausible range {} for {}",
                    readable(v.value),
                    v.unit,
                    range_text(rule.min, rule.max, rule.dim),
                    rule.meaning
                ),
            ));
        }
        if v.source.trim().is_empty() {
            return Err(src.invalid(
                &path,
                p.span(),
                "empty `source`: say which spec or document, or \"assumed\", or \"fitted\"",
            ));
        }
        set.map.insert(
            key.clone(),
            ParamValue {
                base,
                written: v.value,
                unit: v.unit.clone(),
                source: v.source.clone(),
                meaning: rule.meaning,
                at: src.at(&path, p.span()),
            },
        );
    }
    for rule in rules {
        if rule.absent.is_none() && !set.map.contains_key(rule.key) {
            return Err(src.invalid(
                &format!("{table}.{}", rule.key),
                raw.span(),
                format!(
                    "missing parameter `{}` ({}, {})",
                    rule.key, rule.meaning, rule.dim
                ),
            ));
        }
    }
    Ok(set)
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

/// A non-empty list of names.
pub(crate) fn spanned_list(
    src: &Source,
    key: &str,
    list: &Spanned<Vec<Spanned<String>>>,
) -> Result<Vec<String>> {
    if list.get_ref().is_empty() {
        return Err(src.invalid(key, list.span(), "the list is empty"));
    }
    list.get_ref()
        .iter()
        .map(|s| check_name(src, key, s))
        .collect()
}
