//! The loader's inputs: the files compiled into the binary, reading an input
//! file (only a regular file, at most [`MAX_FILE_BYTES`]), and [`Source`], a
//! file being loaded, which locates keys and turns serde's errors into
//! located ones. The other loader files use it; it uses none of them but
//! `raw`'s key shapes.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::raw::Shape;
use crate::error::{column_of, file_type_name, line_of, Error, Location, Result};

mod bundled {
    include!(concat!(env!("OUT_DIR"), "/bundled.rs"));
}

/// A file being loaded: its path (for messages) and its text (for line numbers).
pub(crate) struct Source<'a> {
    pub file: PathBuf,
    pub text: &'a str,
    /// Byte offset of each line's start, built the first time a location
    /// is asked for (a file's keys are located by the hundred).
    line_starts: std::cell::OnceCell<Vec<usize>>,
}

impl<'a> Source<'a> {
    /// The file at `file` whose text is `text`.
    pub fn new(file: PathBuf, text: &'a str) -> Source<'a> {
        Source {
            file,
            text,
            line_starts: std::cell::OnceCell::new(),
        }
    }

    /// The location of `key` whose value spans `span`: its line and its
    /// column in characters, 1-based (as `line_of` and `column_of` give).
    pub fn at(&self, key: &str, span: Range<usize>) -> Location {
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(
                    self.text
                        .bytes()
                        .enumerate()
                        .filter(|&(_, b)| b == b'\n')
                        .map(|(i, _)| i + 1),
                )
                .collect()
        });
        let pos = span.start.min(self.text.len());
        Location {
            file: self.file.clone(),
            key: key.to_string(),
            // The number of lines starting at or before `pos`.
            line: starts.partition_point(|&s| s <= pos),
            // Counted back to the line's start only.
            column: column_of(self.text, pos),
        }
    }

    /// An [`Error::Invalid`] at `key`.
    pub fn invalid(&self, key: &str, span: Range<usize>, message: impl Into<String>) -> Error {
        Error::Invalid {
            at: self.at(key, span),
            message: message.into(),
        }
    }

    /// Parses the whole text as `T`, turning serde errors into located
    /// errors. Every key that `shape` does not allow is reported first, all
    /// of them at once and in file order (serde stops at the first, and
    /// meets a table's keys in alphabetical order).
    pub fn parse<T: serde::de::DeserializeOwned>(&self, shape: &Shape) -> Result<T> {
        self.unknown_keys(shape)?;
        toml::from_str::<T>(self.text).map_err(|e| {
            let (line, column) = e
                .span()
                .map(|s| (line_of(self.text, s.start), column_of(self.text, s.start)))
                .unwrap_or((0, 0));
            let message = e.message().trim().to_string();
            let key = key_near(self.text, line);
            Error::Syntax {
                at: Location {
                    file: self.file.clone(),
                    key,
                    line,
                    column,
                },
                message,
            }
        })
    }

    /// Every key of the text that `shape` does not allow, in file order.
    /// Text that is not TOML passes: the parse that follows reports it.
    fn unknown_keys(&self, shape: &Shape) -> Result<()> {
        let Ok(doc) = toml::de::DeTable::parse(self.text) else {
            return Ok(());
        };
        let mut found = Vec::new();
        self.walk_table(shape, "", doc.get_ref(), &mut found);
        found.sort_by_key(|(pos, _)| *pos);
        match Error::from_list(found.into_iter().map(|(_, e)| e).collect()) {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }

    fn walk_table(
        &self,
        shape: &Shape,
        path: &str,
        table: &toml::de::DeTable,
        found: &mut Vec<(usize, Error)>,
    ) {
        let join = |k: &str| {
            if path.is_empty() {
                k.to_string()
            } else {
                format!("{path}.{k}")
            }
        };
        for (k, v) in table.iter() {
            let key = join(k.get_ref());
            let inner = match shape {
                Shape::Table(keys) => match keys.iter().find(|(name, _)| *name == k.get_ref()) {
                    Some((_, inner)) => inner,
                    None => {
                        let names: Vec<&str> = keys.iter().map(|(n, _)| *n).collect();
                        found.push((
                            k.span().start,
                            self.invalid(
                                &key,
                                k.span(),
                                format!(
                                    "unknown key `{}`; expected one of: {}",
                                    k.get_ref(),
                                    names.join(", ")
                                ),
                            ),
                        ));
                        continue;
                    }
                },
                Shape::Map(inner) => inner,
                Shape::Any | Shape::Tables(_) => return,
            };
            self.walk_value(inner, &key, v.get_ref(), found);
        }
    }

    fn walk_value(
        &self,
        shape: &Shape,
        path: &str,
        value: &toml::de::DeValue,
        found: &mut Vec<(usize, Error)>,
    ) {
        use toml::de::DeValue;
        match (shape, value) {
            (Shape::Table(_) | Shape::Map(_), DeValue::Table(t)) => {
                self.walk_table(shape, path, t, found)
            }
            (Shape::Tables(inner), DeValue::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    if let DeValue::Table(t) = item.get_ref() {
                        self.walk_table(inner, &format!("{path}[{i}]"), t, found);
                    }
                }
            }
            // A value of the wrong type: the parse that follows says so.
            _ => {}
        }
    }
}

/// The key written on `line` (1-based), if the line is `key = ...` or a table header.
fn key_near(text: &str, line: usize) -> String {
    let Some(l) = text.lines().nth(line.saturating_sub(1)) else {
        return String::new();
    };
    let l = l.trim();
    if let Some(h) = l.strip_prefix('[') {
        return h.trim_matches(|c| c == '[' || c == ']').trim().to_string();
    }
    match l.split_once('=') {
        Some((k, _)) => k.trim().to_string(),
        None => String::new(),
    }
}

/// Every bundled file whose path starts with `prefix` (e.g. `scenarios/`).
pub fn bundled_files(prefix: &str) -> Vec<(&'static str, &'static str)> {
    bundled::BUNDLED
        .iter()
        .filter(|(p, _)| p.starts_with(prefix))
        .copied()
        .collect()
}

/// The largest input file iosim reads (4 MiB); the bundled files are a few KiB.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// Reads an input file, mapping failure to [`Error::Io`]. Only a regular
/// file (or a symlink to one) is read, so a FIFO or a device cannot block
/// the run, and only up to [`MAX_FILE_BYTES`].
pub fn read(path: &Path) -> Result<String> {
    use std::io::Read as _;
    let io_err = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    // Opened without blocking (a FIFO put in a file's place between a check
    // and the open would otherwise block the open), then checked through
    // the open file itself, so what is checked is what is read.
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    check_regular(path, &meta)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big(path));
    }
    String::from_utf8(bytes).map_err(|_| {
        io_err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not UTF-8 text",
        ))
    })
}

/// An [`Error::Io`] for a file over [`MAX_FILE_BYTES`].
fn too_big(path: &Path) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "larger than 4 MiB, the limit for an input file",
        ),
    }
}

/// Refuses anything but a regular file of at most [`MAX_FILE_BYTES`].
fn check_regular(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    if !meta.is_file() {
        let what = file_type_name(&meta.file_type());
        return Err(Error::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("not a regular file ({what})"),
            ),
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_big(path));
    }
    Ok(())
}

/// Comma-separated list of known names, for error messages.
pub(crate) fn known<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let v: Vec<&str> = names.map(|s| s.as_str()).collect();
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(", ")
    }
}

#[cfg(test)]
mod source_tests {
    use super::*;
    use crate::error::{column_of, line_of};

    #[test]
    fn a_location_is_the_line_and_column_line_of_and_column_of_give() {
        let text = "a = 1\n\nb = \"\u{e9}t\u{e9}\"\nc = 2";
        let src = Source::new(PathBuf::from("f.toml"), text);
        for pos in 0..=text.len() + 3 {
            let at = src.at("k", pos..pos);
            assert_eq!(
                (at.line, at.column),
                (line_of(text, pos), column_of(text, pos)),
                "byte {pos}"
            );
        }
    }
}
