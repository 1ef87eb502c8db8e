//! Typed errors of the library. The binary turns them into diagnostics and exit codes.

use std::fmt;
use std::path::PathBuf;

/// Where in which input file something went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file (a bundled model shows as `<bundled>/models/...`).
    pub file: PathBuf,
    /// The dotted key path, e.g. `slot[2].bus_modes` (empty when unknown).
    pub key: String,
    /// 1-based line number (0 when unknown).
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        if !self.key.is_empty() {
            write!(f, ": key `{}`", self.key)?;
        }
        Ok(())
    }
}

/// Every error the library can return.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A file (or standard output) could not be written.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The file (`<standard output>` for standard output).
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A file is not valid TOML or does not match the expected layout.
    #[error("{at}: {message}")]
    Syntax {
        /// Where.
        at: Location,
        /// What the parser said.
        message: String,
    },
    /// A value is out of range, inconsistent or refers to something unknown.
    #[error("{at}: {message}")]
    Invalid {
        /// Where.
        at: Location,
        /// What is wrong and what is expected.
        message: String,
    },
    /// A name that no model file defines.
    #[error("{at}: unknown {what} `{name}`; known: {known}")]
    Unknown {
        /// Where the name was used.
        at: Location,
        /// What kind of thing (server, adapter, bus, link, slot, ...).
        what: &'static str,
        /// The unknown name.
        name: String,
        /// The names that exist.
        known: String,
    },
    /// A simulation hit its event bound before its horizon.
    #[error("experiment `{experiment}` hit the event bound ({events} events) at {at_ms:.3} ms of simulated time")]
    EventLimit {
        /// The experiment.
        experiment: String,
        /// Events processed.
        events: u64,
        /// Simulated time reached, in ms.
        at_ms: f64,
    },
    /// The run's wall-clock bound (`--max-wall-seconds`) passed before it finished.
    #[error("stopped: the wall-clock bound of {seconds} s passed before the run finished (raise --max-wall-seconds, or shorten [run] duration_ms)")]
    WallClock {
        /// The bound, in seconds.
        seconds: f64,
    },
    /// A defect in iosim itself (a simulation thread panicked).
    #[error("internal error: {0}")]
    Internal(String),
    /// Bad command-line usage that the argument parser could not catch.
    #[error("{0}")]
    Usage(String),
}

/// The library's result type.
pub type Result<T> = std::result::Result<T, Error>;

/// 1-based line of byte offset `pos` in `text`.
pub fn line_of(text: &str, pos: usize) -> usize {
    text.as_bytes()[..pos.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
