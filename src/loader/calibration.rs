//! Calibration files (free parameters) and fitted-parameter files.

use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::{read, Source};
use crate::error::{Error, Result};
use crate::model::{CalibrationSpec, FittedValue, FreeParam, Registry};
use crate::units::to_base;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCalibration {
    kind: Spanned<String>,
    #[serde(default)]
    #[allow(dead_code)]
    description: String,
    calibration: Option<RawSettings>,
    free: Spanned<Vec<RawFree>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSettings {
    max_iterations: Option<Spanned<i64>>,
    difference_step: Option<Spanned<f64>>,
    search_evaluations: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFree {
    param: Spanned<String>,
    unit: Spanned<String>,
    min: Spanned<f64>,
    max: Spanned<f64>,
    initial: Spanned<f64>,
    meaning: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFitted {
    kind: Spanned<String>,
    #[serde(default)]
    #[allow(dead_code)]
    note: String,
    param: Vec<RawFittedParam>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFittedParam {
    path: Spanned<String>,
    value: Spanned<f64>,
    unit: Spanned<String>,
    #[serde(default)]
    #[allow(dead_code)]
    ci95_low: Option<f64>,
    #[serde(default)]
    #[allow(dead_code)]
    ci95_high: Option<f64>,
    #[serde(default)]
    #[allow(dead_code)]
    note: String,
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
    let src = Source {
        file: path.to_path_buf(),
        text,
    };
    let raw: RawCalibration = src.parse()?;
    if raw.kind.get_ref() != "calibration" {
        return Err(src.invalid("kind", raw.kind.span(), "expected kind = \"calibration\""));
    }
    let mut max_iterations = 30;
    if let Some(m) = raw
        .calibration
        .as_ref()
        .and_then(|c| c.max_iterations.as_ref())
    {
        let v = *m.get_ref();
        if !(1..=1000).contains(&v) {
            return Err(src.invalid(
                "calibration.max_iterations",
                m.span(),
                format!("{v} is outside 1 to 1000"),
            ));
        }
        max_iterations = v as u32;
    }
    let mut difference_step = 0.02;
    if let Some(s) = raw
        .calibration
        .as_ref()
        .and_then(|c| c.difference_step.as_ref())
    {
        let v = *s.get_ref();
        if !(v.is_finite() && (0.001..=0.25).contains(&v)) {
            return Err(src.invalid(
                "calibration.difference_step",
                s.span(),
                format!("{v} is outside 0.001 to 0.25 (a fraction of each parameter's range)"),
            ));
        }
        difference_step = v;
    }
    let mut search_evaluations = 400;
    if let Some(s) = raw
        .calibration
        .as_ref()
        .and_then(|c| c.search_evaluations.as_ref())
    {
        let v = *s.get_ref();
        if !(0..=100_000).contains(&v) {
            return Err(src.invalid(
                "calibration.search_evaluations",
                s.span(),
                format!("{v} is outside 0 to 100000"),
            ));
        }
        search_evaluations = v as u32;
    }
    if raw.free.get_ref().is_empty() {
        return Err(src.invalid(
            "free",
            raw.free.span(),
            "a calibration needs at least one [[free]] parameter",
        ));
    }
    let mut free: Vec<FreeParam> = Vec::new();
    for (i, f) in raw.free.get_ref().iter().enumerate() {
        let k = |s: &str| format!("free[{i}].{s}");
        let pth = f.param.get_ref().clone();
        let Some(target) = reg.param(&pth) else {
            return Err(src.invalid(
                &k("param"),
                f.param.span(),
                format!("no model parameter `{pth}` (see `iosim params`)"),
            ));
        };
        if free.iter().any(|x| x.path == pth) {
            return Err(src.invalid(
                &k("param"),
                f.param.span(),
                format!("`{pth}` is declared free twice"),
            ));
        }
        let unit = f.unit.get_ref();
        let (Some((dim, scale)), Some((tdim, _))) =
            (to_base(1.0, unit), to_base(1.0, &target.unit))
        else {
            return Err(src.invalid(&k("unit"), f.unit.span(), format!("unknown unit `{unit}`")));
        };
        if dim != tdim {
            return Err(src.invalid(
                &k("unit"),
                f.unit.span(),
                format!("unit `{unit}` is not {tdim}, the dimension of `{pth}`"),
            ));
        }
        let (lo, hi, init) = (
            *f.min.get_ref() * scale,
            *f.max.get_ref() * scale,
            *f.initial.get_ref() * scale,
        );
        if !(lo.is_finite() && hi.is_finite() && init.is_finite()) || lo >= hi {
            return Err(src.invalid(
                &k("min"),
                f.min.span(),
                "bounds must be finite numbers with min < max",
            ));
        }
        if let Some((rmin, rmax)) = super::schema::range_of(&pth) {
            let tol = 1e-9 * rmax.abs().max(1.0);
            if lo < rmin - tol || hi > rmax + tol {
                return Err(src.invalid(
                    &k("max"),
                    f.max.span(),
                    format!("bounds {lo} to {hi} (base unit) leave the plausible range {rmin} to {rmax} of `{pth}`"),
                ));
            }
        }
        if init < lo || init > hi {
            return Err(src.invalid(
                &k("initial"),
                f.initial.span(),
                "the initial value lies outside min to max",
            ));
        }
        if f.meaning.get_ref().trim().is_empty() {
            return Err(src.invalid(
                &k("meaning"),
                f.meaning.span(),
                "say what the parameter means physically",
            ));
        }
        free.push(FreeParam {
            path: pth,
            unit: unit.clone(),
            unit_scale: scale,
            min: lo,
            max: hi,
            initial: init,
            meaning: f.meaning.get_ref().clone(),
            at: src.at(&k("param"), f.param.span()),
        });
    }
    Ok(CalibrationSpec {
        file: path.to_path_buf(),
        free,
        max_iterations,
        difference_step,
        search_evaluations,
    })
}

/// The bundled calibration file (`models/calibration.toml`).
pub fn load_bundled_calibration(reg: &mut Registry) -> Result<CalibrationSpec> {
    let Some((p, text)) = super::bundled_files("models/calibration.toml")
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
    let src = Source {
        file: path.to_path_buf(),
        text: &text,
    };
    let raw: RawFitted = src.parse()?;
    if raw.kind.get_ref() != "fitted" {
        return Err(src.invalid(
            "kind",
            raw.kind.span(),
            "expected kind = \"fitted\" (a file written by `iosim calibrate`)",
        ));
    }
    let mut out = Vec::new();
    for (i, p) in raw.param.iter().enumerate() {
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
                format!("unknown unit `{}`", p.unit.get_ref()),
            ));
        };
        if dim != tdim {
            return Err(src.invalid(
                &k("unit"),
                p.unit.span(),
                format!("unit `{}` is not {tdim}", p.unit.get_ref()),
            ));
        }
        if let Some((rmin, rmax)) = super::schema::range_of(p.path.get_ref()) {
            if !base.is_finite() || base < rmin || base > rmax {
                return Err(src.invalid(
                    &k("value"),
                    p.value.span(),
                    format!("{base} (base unit) is outside the plausible range {rmin} to {rmax}"),
                ));
            }
        }
        reg.set_param(p.path.get_ref(), base);
        out.push(FittedValue {
            path: p.path.get_ref().clone(),
            base,
            at: src.at(&k("path"), p.path.span()),
        });
    }
    Ok(out)
}
