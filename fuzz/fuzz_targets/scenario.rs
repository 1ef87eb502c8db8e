//! A scenario file resolved against the bundled models:
//! `loader::parse_scenario` must return a value or an error, never panic or
//! hang.
#![no_main]

use iosim_fuzz::{bundled, text};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

fuzz_target!(|data: &[u8]| {
    if let Some(text) = text(data) {
        let _ = iosim::loader::parse_scenario(PathBuf::from("fuzz.toml"), text, bundled());
    }
});
