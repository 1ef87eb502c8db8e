//! The text of a calibration file and of a fitted-parameter file: each input
//! goes through both `loader::parse_calibration` and
//! `loader::apply_fitted_text`, each on a fresh copy of the bundled models;
//! both must return a value or an error, never panic or hang.
#![no_main]

use iosim_fuzz::{bundled, text};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Some(text) = text(data) {
        let path = Path::new("fuzz.toml");
        let _ = iosim::loader::parse_calibration(path, text, &mut bundled().clone());
        let _ = iosim::loader::apply_fitted_text(path, text, &mut bundled().clone());
    }
});
