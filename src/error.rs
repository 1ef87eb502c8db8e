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
    /// 1-based column (in characters) where the offending value or key
    /// starts on `line` (0 when unknown).
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if self.column > 0 {
                write!(f, ":{}", self.column)?;
            }
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
    #[error("{at}: unknown {what} `{name}`{}; known: {known}{}", crate::suggest::did_you_mean(name, known.split(", ")), models_hint(what))]
    Unknown {
        /// Where the name was used.
        at: Location,
        /// What kind of thing (server, adapter, bus, link, slot, ...).
        what: &'static str,
        /// The unknown name.
        name: String,
        /// The names that exist, comma-separated.
        known: Box<str>,
    },
    /// A simulation hit its event bound before its horizon.
    #[error("experiment `{experiment}`{shared} hit the event bound ({events} events) at {at_ms:.3} ms of simulated time")]
    EventLimit {
        /// The experiment.
        experiment: String,
        /// Empty, or the other experiments simulated in the same run (they
        /// set up the same thing; see `validate::run_experiments`), said as
        /// " (simulated once with `a`, `b`)".
        shared: String,
        /// Events processed.
        events: u64,
        /// Simulated time reached, in ms.
        at_ms: f64,
    },
    /// The run's wall-clock bound (`--max-wall-seconds`) passed before it finished.
    #[error("stopped: the wall-clock bound of {} s passed before the run finished (raise --max-wall-seconds, or shorten [run] duration_ms)", crate::units::readable(*seconds))]
    WallClock {
        /// The bound, in seconds.
        seconds: f64,
    },
    /// A defect in iosim itself (a simulation thread panicked).
    #[error("internal error: {0}")]
    Internal(String),
    /// A chart could not be drawn (no file is written for it).
    #[error("cannot draw chart `{chart}`: {message}")]
    Render {
        /// The chart's file stem.
        chart: String,
        /// What the drawing library said.
        message: String,
    },
    /// Bad command-line usage that the argument parser could not catch.
    #[error("{0}")]
    Usage(String),
    /// Several input errors found in one pass over the input (each an
    /// `Io`, `Syntax`, `Invalid` or `Unknown`), in file order; at most
    /// [`MAX_ERRORS`] are kept and `omitted` counts the rest. Never empty and
    /// never one: a single error is returned as itself ([`Error::from_list`]).
    #[error("{}", many_text(errors, *omitted))]
    Many {
        /// The errors, in the order found (file order within a file).
        errors: Vec<Error>,
        /// Errors found beyond the first [`MAX_ERRORS`], not kept.
        omitted: usize,
    },
}

/// The most errors of one input kept and reported at once.
pub const MAX_ERRORS: usize = 20;

fn many_text(errors: &[Error], omitted: usize) -> String {
    let mut s: Vec<String> = errors.iter().map(Error::to_string).collect();
    if omitted > 0 {
        s.push(omitted_text(omitted));
    }
    s.join("\n")
}

/// The line that says how many errors were not shown.
pub fn omitted_text(omitted: usize) -> String {
    format!(
        "... and {omitted} more error{} (only the first {MAX_ERRORS} are shown)",
        if omitted == 1 { "" } else { "s" }
    )
}

/// For an unknown model (not a card, slot or function of the input itself),
/// where a model of the user's own comes from.
fn models_hint(what: &str) -> &'static str {
    match what {
        "server" | "adapter" | "link" | "bus mode" | "testbed" | "CPU model" => {
            " (a model of your own: give its directory with --models DIR)"
        }
        _ => "",
    }
}

impl Error {
    /// One error for a list of errors: `None` for an empty list, the error
    /// itself for one, [`Error::Many`] (nested lists flattened, each mistake
    /// once however many runs met it, at most [`MAX_ERRORS`] kept) for more.
    pub fn from_list(list: Vec<Error>) -> Option<Error> {
        let mut errors = Vec::new();
        let mut omitted = 0;
        for e in list {
            match e {
                Error::Many {
                    errors: inner,
                    omitted: more,
                } => {
                    omitted += more;
                    errors.extend(inner);
                }
                e => errors.push(e),
            }
        }
        let mut said = std::collections::HashSet::new();
        errors.retain(|e| said.insert(e.to_string()));
        if errors.len() > MAX_ERRORS {
            omitted += errors.len() - MAX_ERRORS;
            errors.truncate(MAX_ERRORS);
        }
        match errors.len() {
            0 => None,
            1 if omitted == 0 => errors.pop(),
            _ => Some(Error::Many { errors, omitted }),
        }
    }

    /// The single errors this error stands for: the list of an
    /// [`Error::Many`], or the error itself.
    pub fn list(&self) -> &[Error] {
        match self {
            Error::Many { errors, .. } => errors,
            e => std::slice::from_ref(e),
        }
    }
}

/// Collects the errors of one pass over an input, so that one run reports
/// all of them (up to [`MAX_ERRORS`]) instead of the first.
#[derive(Debug, Default)]
pub struct Errors {
    list: Vec<Error>,
}

impl Errors {
    /// Adds an error (the errors of an [`Error::Many`] one by one).
    pub fn push(&mut self, e: Error) {
        self.list.push(e);
    }

    /// The value of `r`, or `None` with its error kept.
    pub fn take<T>(&mut self, r: Result<T>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.push(e);
                None
            }
        }
    }

    /// True when no error was kept.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// How many errors it holds.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// `Ok(value)` when no error was kept, else every error kept.
    pub fn finish<T>(self, value: T) -> Result<T> {
        match Error::from_list(self.list) {
            None => Ok(value),
            Some(e) => Err(e),
        }
    }

    /// Every error kept, as one error: for a caller that stops because a
    /// value it needs is missing (whose error it kept). Keeping none is a
    /// defect of iosim: [`Error::Internal`].
    pub fn into_error(self) -> Error {
        Error::from_list(self.list)
            .unwrap_or_else(|| Error::Internal("an input error was found but not kept".into()))
    }
}

/// The library's result type.
pub type Result<T> = std::result::Result<T, Error>;

/// What a file that is not regular is, in words.
pub fn file_type_name(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "a special file"
    }
}

/// 1-based line of byte offset `pos` in `text`.
pub fn line_of(text: &str, pos: usize) -> usize {
    text.as_bytes()[..pos.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// 1-based column, in characters, of byte offset `pos` in `text` (an
/// offset inside a character counts as that character).
pub fn column_of(text: &str, pos: usize) -> usize {
    let pos = pos.min(text.len());
    let start = text.as_bytes()[..pos]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    text.as_bytes()[start..pos]
        .iter()
        .filter(|&&b| (b & 0xC0) != 0x80)
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid(line: usize) -> Error {
        Error::Invalid {
            at: Location {
                file: "f.toml".into(),
                key: "k".into(),
                line,
                column: 3,
            },
            message: format!("bad {line}"),
        }
    }

    #[test]
    fn a_list_of_errors_is_none_one_or_many_flattened_and_capped() {
        assert!(Error::from_list(Vec::new()).is_none());
        let one = Error::from_list(vec![invalid(1)]).expect("one");
        assert_eq!(one.to_string(), "f.toml:1:3: key `k`: bad 1");
        let two = Error::from_list(vec![invalid(1), invalid(2)]).expect("two");
        let nested = Error::from_list(vec![two, invalid(3)]).expect("three");
        assert_eq!(nested.list().len(), 3);
        assert_eq!(
            nested.to_string(),
            "f.toml:1:3: key `k`: bad 1\nf.toml:2:3: key `k`: bad 2\nf.toml:3:3: key `k`: bad 3"
        );
        let many = Error::from_list((1..=MAX_ERRORS + 5).map(invalid).collect()).expect("many");
        let Error::Many { errors, omitted } = &many else {
            panic!("{many:?}");
        };
        assert_eq!((errors.len(), *omitted), (MAX_ERRORS, 5));
        assert!(many.to_string().ends_with(&omitted_text(5)), "{many}");
    }

    #[test]
    fn columns_count_characters_from_one() {
        let text = "ab = 1\n\u{e9}t\u{e9} = 2\n";
        assert_eq!(column_of(text, 0), 1);
        assert_eq!(column_of(text, 5), 6);
        // After two two-byte characters and a `t`: the fourth character.
        let eq = text.find(" = 2").expect("there");
        assert_eq!(line_of(text, eq), 2);
        assert_eq!(column_of(text, eq), 4);
        assert_eq!(column_of(text, text.len() + 10), 1);
    }
}
