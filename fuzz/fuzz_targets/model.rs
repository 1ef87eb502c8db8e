//! A model file (bus, link, server, adapter, test bed) as if alone in a
//! `--models` directory: `loader::parse_model` must return a value or an
//! error, never panic or hang.
#![no_main]

use iosim_fuzz::{bundled, text};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

fuzz_target!(|data: &[u8]| {
    if let Some(text) = text(data) {
        let _ = iosim::loader::parse_model(PathBuf::from("fuzz.toml"), text, bundled());
    }
});
