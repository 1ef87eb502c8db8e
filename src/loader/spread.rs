//! The structural-spread file (`kind = "spread"`, `models/spread.toml`):
//! the model's error on held-out figures by mechanism family, written by
//! `iosim validate --cross-validate --spread-out FILE` ([`spread_file_text`])
//! and read here ([`parse_spread`]), one struct for both.

use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::input::Source;
use super::raw::Shape::{self, Any, Table, Tables};
use crate::error::{Error, Errors, Result};
use crate::model::{Family, FamilySpread, StructuralSpread};

/// The keys of [`RawSpread`] (see [`Shape`]).
const SPREAD: Shape = Table(&[
    ("kind", Any),
    ("default_sigma", Any),
    (
        "family",
        Tables(&Table(&[("name", Any), ("sigma", Any), ("figures", Any)])),
    ),
]);

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawSpread {
    kind: Spanned<String>,
    default_sigma: Spanned<f64>,
    #[serde(default)]
    family: Vec<RawFamily>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawFamily {
    name: Spanned<String>,
    sigma: Spanned<f64>,
    figures: Spanned<u64>,
}

/// The largest spread a file may state: a standard deviation of 2 in log
/// space is a factor of 27 at 90%, no interval of a model.
const MAX_SIGMA: f64 = 2.0;

/// Parses a structural-spread file's text; `path` is used in messages.
pub fn parse_spread(path: &Path, text: &str) -> Result<StructuralSpread> {
    let src = Source::new(path.to_path_buf(), text);
    let raw: RawSpread = src.parse(&SPREAD)?;
    let mut errs = Errors::default();
    if raw.kind.get_ref() != "spread" {
        errs.push(src.invalid("kind", raw.kind.span(), "expected kind = \"spread\""));
    }
    let sigma_ok = |v: f64| v.is_finite() && v > 0.0 && v <= MAX_SIGMA;
    if !sigma_ok(*raw.default_sigma.get_ref()) {
        errs.push(src.invalid(
            "default_sigma",
            raw.default_sigma.span(),
            format!("expected a standard deviation in log space above 0 and at most {MAX_SIGMA}"),
        ));
    }
    let mut families: Vec<FamilySpread> = Vec::new();
    for (i, f) in raw.family.iter().enumerate() {
        let k = |s: &str| format!("family[{i}].{s}");
        let Some(family) = Family::named(f.name.get_ref()) else {
            let names: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
            errs.push(src.invalid(
                &k("name"),
                f.name.span(),
                format!(
                    "unknown family `{}`; expected one of {}",
                    f.name.get_ref(),
                    names.join(", ")
                ),
            ));
            continue;
        };
        if families.iter().any(|g| g.family == family) {
            errs.push(src.invalid(
                &k("name"),
                f.name.span(),
                format!("family `{}` is given twice", f.name.get_ref()),
            ));
            continue;
        }
        if !sigma_ok(*f.sigma.get_ref()) {
            errs.push(src.invalid(
                &k("sigma"),
                f.sigma.span(),
                format!(
                    "expected a standard deviation in log space above 0 and at most {MAX_SIGMA}"
                ),
            ));
            continue;
        }
        families.push(FamilySpread {
            family,
            sigma: *f.sigma.get_ref(),
            figures: *f.figures.get_ref() as usize,
        });
    }
    families.sort_by_key(|f| f.family);
    errs.finish(StructuralSpread {
        families,
        default_sigma: *raw.default_sigma.get_ref(),
        basis: path.display().to_string(),
    })
}

/// Reads a structural-spread file (`--spread FILE`).
pub fn load_spread(path: &Path) -> Result<StructuralSpread> {
    let text = super::input::read(path)?;
    parse_spread(path, &text)
}

/// The bundled structural spread (`models/spread.toml`); none (every
/// family at a spread of zero) when the build has no such file.
pub fn bundled_spread() -> Result<StructuralSpread> {
    match super::input::bundled_files("models/spread.toml").first() {
        Some((p, text)) => parse_spread(Path::new(&format!("<bundled>/{p}")), text),
        None => Ok(StructuralSpread::default()),
    }
}

/// The text of a structural-spread file holding `spread`, serialised from
/// the struct [`parse_spread`] reads, each line of `comment` a TOML comment
/// at the top; sigmas rounded to four decimals. A spread that is not finite
/// is an error ([`Error::Internal`]), never written.
pub fn spread_file_text(comment: &str, spread: &StructuralSpread) -> Result<String> {
    let four = |v: f64| -> Result<f64> {
        if v.is_finite() {
            Ok(format!("{v:.4}").parse().unwrap_or(v))
        } else {
            Err(Error::Internal(format!(
                "a structural spread of {v}: no spread file written"
            )))
        }
    };
    let raw = RawSpread {
        kind: Spanned::new(0..0, "spread".into()),
        default_sigma: Spanned::new(0..0, four(spread.default_sigma)?),
        family: spread
            .families
            .iter()
            .map(|f| {
                Ok(RawFamily {
                    name: Spanned::new(0..0, f.family.name().into()),
                    sigma: Spanned::new(0..0, four(f.sigma)?),
                    figures: Spanned::new(0..0, f.figures as u64),
                })
            })
            .collect::<Result<Vec<_>>>()?,
    };
    super::calibration::commented_toml(comment, &raw, "a spread file")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_spread_reads_back() {
        let s = StructuralSpread {
            families: vec![
                FamilySpread {
                    family: Family::Bus,
                    sigma: 0.0712,
                    figures: 40,
                },
                FamilySpread {
                    family: Family::Cpu,
                    sigma: 0.1,
                    figures: 12,
                },
            ],
            default_sigma: 0.25,
            basis: "x.toml".into(),
        };
        let text = spread_file_text("a comment", &s).unwrap();
        assert!(text.starts_with("# a comment\n"));
        assert_eq!(parse_spread(Path::new("x.toml"), &text).unwrap(), s);
    }

    #[test]
    fn a_bad_spread_names_its_key() {
        let text = "kind = \"spread\"\ndefault_sigma = 0.2\n[[family]]\nname = \"bus\"\nsigma = -1\nfigures = 3\n[[family]]\nname = \"disk\"\nsigma = 0.1\nfigures = 3\n";
        let e = parse_spread(Path::new("x.toml"), text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("family[0].sigma"), "{e}");
        assert!(e.contains("unknown family `disk`"), "{e}");
    }
}
