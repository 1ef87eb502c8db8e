//! What the fuzz targets share: the bundled models, loaded once, and the
//! input as text.

use iosim::model::Registry;
use std::sync::OnceLock;

/// The bundled models, as `iosim` loads them with no `--models`.
pub fn bundled() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(|| iosim::loader::load_registry(&[]).expect("the bundled models load"))
}

/// The input as text: iosim reads only UTF-8 files and refuses any other
/// bytes before parsing, so only text reaches a loader.
pub fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}
