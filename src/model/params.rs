//! Physical parameters with their unit, meaning and source.

use std::collections::BTreeMap;

use crate::error::Location;

/// One parameter as read from a model file, converted to its base unit.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamValue {
    /// Value in the base unit of its dimension (ns, MHz, bytes, bytes/s, baud, count).
    pub base: f64,
    /// Value as written in the file.
    pub written: f64,
    /// Unit as written in the file.
    pub unit: String,
    /// Where the value comes from: a spec, a document, "assumed" or "fitted".
    pub source: String,
    /// What the parameter means physically (from the schema).
    pub meaning: &'static str,
    /// Where it was written.
    pub at: Location,
    /// The dotted prefix of the parameter set it is written in
    /// (`server.rp8400-seu`), when this set takes it from there through
    /// `extends`; `None`: written in this set's own file.
    pub inherited: Option<String>,
    /// The standard error of a fitted value in the base unit, from the
    /// 95% interval its fit file gives (half its width over 1.96); None
    /// for a value no fit file gave an interval for.
    pub sigma: Option<f64>,
    /// The range the file states the value may lie in (`range = [low,
    /// high]`), in the base unit; `None` when it states none.
    pub range: Option<(f64, f64)>,
}

impl ParamValue {
    /// True when the source says the value was fitted to published figures.
    pub fn is_fitted(&self) -> bool {
        self.source.trim_start().starts_with("fitted")
    }

    /// Its source as a reader should see it: for a value a model takes
    /// through `extends`, `inherited from PREFIX: SOURCE` (the parameter
    /// set it is written in, and that value's own basis).
    pub fn basis(&self) -> String {
        match &self.inherited {
            Some(from) => format!("inherited from {from}: {}", self.source),
            None => self.source.clone(),
        }
    }
}

/// A validated set of parameters of one component, keyed by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParamSet {
    /// The parameters.
    pub map: BTreeMap<String, ParamValue>,
}

impl ParamSet {
    /// The base-unit value of `key`, if the set has it. The simulator reads
    /// parameters through the typed structs of [`super::schema`], which make
    /// a missing required key an error.
    pub fn value(&self, key: &str) -> Option<f64> {
        self.map.get(key).map(|p| p.base)
    }

    /// Replaces the base value of `key` (used by calibration); false if absent.
    pub fn set(&mut self, key: &str, base: f64) -> bool {
        match self.map.get_mut(key) {
            Some(p) => {
                p.base = base;
                if let Some((_, per_unit)) = crate::units::to_base(1.0, &p.unit) {
                    p.written = base / per_unit;
                }
                true
            }
            None => false,
        }
    }
}
