//! Output: the same records as an aligned table, CSV or JSON. The only module
//! that writes files (plots and reports); everything else returns data.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

/// One cell of a record.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Text.
    Text(String),
    /// A number printed with this many decimals (JSON keeps full precision).
    Num(f64, usize),
    /// A whole number.
    Int(u64),
    /// No number: empty in the table and CSV, `null` in JSON.
    Blank,
}

impl Cell {
    /// The cell as terminal text: control characters escaped, and a number
    /// of 10^15 or more in scientific notation rather than in 16 to 309 digits.
    pub(crate) fn text(&self) -> String {
        match self {
            Cell::Text(s) => escape_control(s).into_owned(),
            Cell::Num(v, d) if v.is_finite() && v.abs() >= 1e15 => format!("{v:.d$e}"),
            Cell::Num(v, d) if v.is_finite() => format!("{v:.d$}"),
            Cell::Num(_, _) => "NaN".into(),
            Cell::Int(i) => i.to_string(),
            Cell::Blank => String::new(),
        }
    }
    pub(crate) fn json(&self) -> Value {
        match self {
            Cell::Text(s) => Value::String(s.clone()),
            // Rounded to 6 significant decimals so output is stable and readable.
            Cell::Num(v, _) if v.is_finite() => json!((v * 1e6).round() / 1e6),
            Cell::Num(_, _) | Cell::Blank => Value::Null,
            Cell::Int(i) => json!(i),
        }
    }
}

/// A named list of records with the same fields.
#[derive(Debug, Clone, Default)]
pub struct Section {
    /// JSON key and table title.
    pub name: String,
    /// Field names; units go in the name, e.g. `throughput_MB_s`.
    pub fields: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<Cell>>,
}

impl Section {
    /// An empty section with these fields.
    pub fn new(name: &str, fields: &[&str]) -> Section {
        Section {
            name: name.into(),
            fields: fields.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }
}

/// A whole output: header facts (seed, version, units) and sections.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The command that produced it.
    pub command: String,
    /// The seed.
    pub seed: u64,
    /// Extra header facts (key, value).
    pub meta: Vec<(String, String)>,
    /// Warnings about the answer, for a command that looks for them (`None`
    /// for one that does not): a `warning:` header line each in the table
    /// and CSV, and a `warnings` array of text in JSON (empty when there is
    /// none).
    pub warnings: Option<Vec<String>>,
    /// Sections, in print order.
    pub sections: Vec<Section>,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned text whose lines fit [`TABLE_WIDTH`] characters: header
    /// facts wrapped, and a section too wide for it prints its widest text
    /// fields under each row instead of in a column.
    Table,
    /// Aligned text, each row on one line however wide (`--wide`).
    Wide,
    /// Comma-separated values, one block per section.
    Csv,
    /// One JSON object.
    Json,
}

/// Units line printed in every header.
pub const UNITS: &str =
    "MB/s = 10^6 bytes/s; Mbit/s = 10^6 bit/s; Mibit/s = 2^20 bit/s (the Mbit of TTCP); utilisation in percent of time busy (cpu_util_pct: mean over every CPU of the partition; memory_util_pct: the time DMA reads and writes keep the partition memory busy at its bandwidth, NaN where the server does not model it); service demand in CPU microseconds (all CPUs) per KB = 10^3 bytes of payload";

impl Report {
    /// Renders the report.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Table => self.table(Some(TABLE_WIDTH)),
            Format::Wide => self.table(None),
            Format::Csv => self.csv(),
            Format::Json => self.json(),
        }
    }

    pub(crate) fn header_lines(&self) -> Vec<String> {
        let mut v = vec![
            format!("iosim {} {}", env!("CARGO_PKG_VERSION"), self.command),
            format!("seed: {}", self.seed),
            format!("units: {UNITS}"),
        ];
        for (k, val) in &self.meta {
            v.push(format!("{k}: {}", escape_control(val)));
        }
        for w in self.warnings.iter().flatten() {
            v.push(format!("warning: {}", escape_control(w)));
        }
        v[0] = escape_control(&v[0]).into_owned();
        v
    }

    fn table(&self, limit: Option<usize>) -> String {
        let mut out = String::new();
        self.table_head(&mut out, limit);
        for s in &self.sections {
            let _ = writeln!(out, "\n## {}", s.name);
            let cells: Vec<Vec<String>> = s
                .rows
                .iter()
                .map(|r| r.iter().map(|c| c.text()).collect())
                .collect();
            let mut stats = ColumnStats::new(s.fields.len());
            for (r, c) in s.rows.iter().zip(&cells) {
                stats.add(r, c);
            }
            let layout = Layout::new(&s.fields, &stats, limit);
            layout.head(&mut out);
            for r in &cells {
                layout.row(&mut out, r);
            }
        }
        out
    }

    /// The table's header lines (`# ...`), wrapped to `limit`.
    pub(crate) fn table_head(&self, out: &mut String, limit: Option<usize>) {
        for l in self.header_lines() {
            table_header_line(out, &l, limit);
        }
    }

    fn csv(&self) -> String {
        let mut out = String::new();
        for l in self.header_lines() {
            let _ = writeln!(out, "# {l}");
        }
        for s in &self.sections {
            let _ = writeln!(out, "# section: {}", s.name);
            let _ = writeln!(
                out,
                "{}",
                s.fields
                    .iter()
                    .map(|f| csv_quote(f))
                    .collect::<Vec<_>>()
                    .join(",")
            );
            for r in &s.rows {
                let _ = writeln!(
                    out,
                    "{}",
                    r.iter()
                        .map(|c| csv_quote(&csv_text(c)))
                        .collect::<Vec<_>>()
                        .join(",")
                );
            }
        }
        out
    }

    fn json(&self) -> String {
        let mut root = Map::new();
        root.insert("schema_version".into(), json!(1));
        root.insert("tool".into(), json!("iosim"));
        root.insert("version".into(), json!(env!("CARGO_PKG_VERSION")));
        root.insert("command".into(), json!(self.command));
        root.insert("seed".into(), json!(self.seed));
        root.insert("units".into(), json!(UNITS));
        for (k, v) in &self.meta {
            root.insert(k.clone(), json!(v));
        }
        if let Some(w) = &self.warnings {
            root.insert("warnings".into(), json!(w));
        }
        for s in &self.sections {
            let rows: Vec<Value> = s
                .rows
                .iter()
                .map(|r| {
                    let mut m = Map::new();
                    for (f, c) in s.fields.iter().zip(r) {
                        m.insert(f.clone(), c.json());
                    }
                    Value::Object(m)
                })
                .collect();
            root.insert(s.name.clone(), Value::Array(rows));
        }
        let mut text =
            serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_else(|_| "{}".into());
        text.push('\n');
        text
    }
}

/// The widest line of the default table output, in characters.
pub const TABLE_WIDTH: usize = 160;

/// Appends `first` then `text` to `out` as lines of at most `width`
/// characters, broken at spaces (a word longer than a line stays whole),
/// every line after the first starting with `indent`.
fn wrap_into(out: &mut String, first: &str, text: &str, width: usize, indent: &str) {
    let mut line = first.to_string();
    let mut len = first.chars().count();
    let mut fresh = true;
    for word in text.split(' ') {
        let wl = word.chars().count();
        if !fresh && len + 1 + wl > width {
            let _ = writeln!(out, "{}", line.trim_end());
            line = indent.to_string();
            len = indent.chars().count();
            fresh = true;
        }
        if !fresh {
            line.push(' ');
            len += 1;
        }
        line.push_str(word);
        len += wl;
        fresh = false;
    }
    let _ = writeln!(out, "{}", line.trim_end());
}

/// A field name in lines of at most `width` characters, broken after its
/// underscores (`link_ceiling_MB_s` in 8: `link_`, `ceiling_`, `MB_s`).
fn name_lines(name: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![String::new()];
    let parts: Vec<&str> = name.split_inclusive('_').collect();
    for p in parts {
        let last = lines.last_mut().expect("a line");
        if !last.is_empty() && last.chars().count() + p.chars().count() > width {
            lines.push(p.to_string());
        } else {
            last.push_str(p);
        }
    }
    lines
}

/// One header line of the table (`# ` before it), wrapped to `limit`.
pub(crate) fn table_header_line(out: &mut String, l: &str, limit: Option<usize>) {
    match limit {
        Some(lim) => wrap_into(out, "# ", l, lim, "#   "),
        None => {
            let _ = writeln!(out, "# {l}");
        }
    }
}

/// What the table's layout needs to know of a section's values, gathered
/// one row at a time (so that rows streamed from a file need not be held).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ColumnStats {
    /// Widest value of each column, in bytes (the `--wide` table).
    bytes: Vec<usize>,
    /// Widest value of each column, in characters.
    chars: Vec<usize>,
    /// Whether any value of the column is text.
    text: Vec<bool>,
    /// Whether the column's first value that is not blank is a number
    /// (`None`: none yet).
    num: Vec<Option<bool>>,
}

impl ColumnStats {
    /// No rows yet, `n` fields.
    pub(crate) fn new(n: usize) -> ColumnStats {
        ColumnStats {
            bytes: vec![0; n],
            chars: vec![0; n],
            text: vec![false; n],
            num: vec![None; n],
        }
    }

    /// Counts one row: its cells and their text.
    pub(crate) fn add(&mut self, row: &[Cell], texts: &[String]) {
        let n = self.bytes.len();
        for (i, t) in texts.iter().enumerate().take(n) {
            self.bytes[i] = self.bytes[i].max(t.len());
            self.chars[i] = self.chars[i].max(t.chars().count());
        }
        for (i, c) in row.iter().enumerate().take(n) {
            self.text[i] |= matches!(c, Cell::Text(_));
            if self.num[i].is_none() && *c != Cell::Blank {
                self.num[i] = Some(matches!(c, Cell::Num(..) | Cell::Int(_)));
            }
        }
    }
}

/// How a section is laid out in the table: in lines of at most `limit`
/// characters where it can (`None`: each row on one line). A table too
/// wide breaks its field names over lines (after underscores) down to its
/// values' widths, and while it is still too wide its widest text field
/// (never the first) leaves the columns and is printed under each row as
/// `field: value`, wrapped.
pub(crate) struct Layout {
    fields: Vec<String>,
    cols: Vec<usize>,
    w: Vec<usize>,
    num: Vec<bool>,
    beneath: Vec<usize>,
    heads: Vec<Vec<String>>,
    limit: usize,
}

impl Layout {
    /// The layout of a section of `fields` whose values `stats` describes.
    pub(crate) fn new(fields: &[String], stats: &ColumnStats, limit: Option<usize>) -> Layout {
        let n = fields.len();
        let num: Vec<bool> = (0..n).map(|i| stats.num[i] == Some(true)).collect();
        let Some(limit) = limit else {
            return Layout {
                fields: fields.to_vec(),
                cols: (0..n).collect(),
                w: (0..n)
                    .map(|i| fields[i].len().max(stats.bytes[i]))
                    .collect(),
                num,
                beneath: Vec::new(),
                heads: fields.iter().map(|f| vec![f.clone()]).collect(),
                limit: usize::MAX,
            };
        };
        let vw = &stats.chars;
        let full: Vec<usize> = (0..n)
            .map(|i| vw[i].max(fields[i].chars().count()))
            .collect();
        // Broken names: each column as wide as its values or its longest piece.
        let broken: Vec<usize> = (0..n)
            .map(|i| {
                let piece = fields[i]
                    .split_inclusive('_')
                    .map(|p| p.chars().count())
                    .max()
                    .unwrap_or(0);
                vw[i].max(piece).max(1)
            })
            .collect();
        let width = |cols: &[usize], w: &[usize]| {
            cols.iter().map(|&i| w[i]).sum::<usize>() + 2 * cols.len().saturating_sub(1)
        };
        // Whole names if they fit, else broken names, else the widest text
        // field under the rows, and again.
        let mut cols: Vec<usize> = (0..n).collect();
        let w = loop {
            if width(&cols, &full) <= limit {
                break full;
            }
            if width(&cols, &broken) <= limit {
                break broken;
            }
            let Some(&widest) = cols
                .iter()
                .skip(1)
                .filter(|&&i| stats.text[i])
                .max_by_key(|&&i| (broken[i], std::cmp::Reverse(i)))
            else {
                break broken;
            };
            cols.retain(|&i| i != widest);
        };
        let beneath: Vec<usize> = (0..n).filter(|i| !cols.contains(i)).collect();
        let heads = (0..n).map(|i| name_lines(&fields[i], w[i])).collect();
        Layout {
            fields: fields.to_vec(),
            cols,
            w,
            num,
            beneath,
            heads,
            limit,
        }
    }

    fn line(&self, vals: &[&str]) -> String {
        let mut l = String::new();
        for (k, (&i, v)) in self.cols.iter().zip(vals).enumerate() {
            if k > 0 {
                l.push_str("  ");
            }
            pad_into(&mut l, v, self.w[i], self.num[i]);
        }
        l.trim_end().to_string()
    }

    /// Appends the field names' line(s).
    pub(crate) fn head(&self, out: &mut String) {
        let rows = self
            .cols
            .iter()
            .map(|&i| self.heads[i].len())
            .max()
            .unwrap_or(1);
        for k in 0..rows {
            // Names end on the last header line, as numbers end on the right.
            let vals: Vec<&str> = self
                .cols
                .iter()
                .map(|&i| {
                    let h = &self.heads[i];
                    let skip = rows - h.len();
                    if k >= skip {
                        h[k - skip].as_str()
                    } else {
                        ""
                    }
                })
                .collect();
            let _ = writeln!(out, "{}", self.line(&vals));
        }
    }

    /// Appends one row, given as its cells' text.
    pub(crate) fn row(&self, out: &mut String, r: &[String]) {
        let vals: Vec<&str> = self
            .cols
            .iter()
            .map(|&i| r.get(i).map_or("", |x| x.as_str()))
            .collect();
        let _ = writeln!(out, "{}", self.line(&vals));
        for &i in &self.beneath {
            let v = r.get(i).map_or("", |x| x.as_str());
            if !v.is_empty() {
                wrap_into(
                    out,
                    &format!("    {}: ", self.fields[i]),
                    v,
                    self.limit,
                    "        ",
                );
            }
        }
    }
}

/// Appends `v` to `l` padded with spaces to `width` characters, on the left
/// (`right`-aligned) or the right, as `{v:>width$}` / `{v:<width$}` would;
/// by hand, since the formatter's width is limited to 65,535 and a longer
/// cell (a long name from an input file) would panic there.
fn pad_into(l: &mut String, v: &str, width: usize, right: bool) {
    let fill = width.saturating_sub(v.chars().count());
    if !right {
        l.push_str(v);
    }
    l.extend(std::iter::repeat_n(' ', fill));
    if right {
        l.push_str(v);
    }
}

/// A cell's CSV text: as in the table, and a text cell that a spreadsheet
/// would take for a formula (starting with `=`, `+`, `-` or `@`) prefixed with
/// a single quote. Numbers are never prefixed: a negative number stays one.
pub(crate) fn csv_text(c: &Cell) -> String {
    let t = c.text();
    match c {
        Cell::Text(_) if t.starts_with(['=', '+', '-', '@']) => format!("'{t}"),
        _ => t,
    }
}

/// `s` with every control character (C0, DEL and C1: ESC, CR, LF, ...)
/// written as an escape, `\x1b` below 0x80 and `\u{9b}` above, so that text
/// taken from input files cannot move the cursor, clear the screen or break a
/// line of a table or a diagnostic.
pub fn escape_control(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !c.is_control() {
            out.push(c);
        } else if (c as u32) < 0x80 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    std::borrow::Cow::Owned(out)
}

pub(crate) fn csv_quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// An anonymous temporary file (removed by the operating system when it is
/// closed, however the run ends) that a streamed report spools its rows to
/// ([`crate::part`]).
pub fn spool() -> crate::Result<std::fs::File> {
    tempfile::tempfile().map_err(|source| crate::Error::Write {
        path: "<temporary spool file>".into(),
        source,
    })
}

/// The temporary files of [`AtomicFile`]s not yet committed or dropped, so
/// that a signal that ends the run can remove them ([`remove_temporaries`]).
static TEMPORARIES: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// The list of temporary files, even if a thread panicked holding it.
fn temporaries() -> std::sync::MutexGuard<'static, Vec<std::path::PathBuf>> {
    TEMPORARIES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes every temporary file of an `AtomicFile` in progress, for a
/// signal handler that is about to end the process. The list stays locked
/// (the guard is leaked), so no new temporary file is made after it.
pub fn remove_temporaries() {
    let list = temporaries();
    for p in list.iter() {
        let _ = std::fs::remove_file(p);
    }
    std::mem::forget(list);
}

/// A file written whole or not at all: the text goes to a temporary file in
/// the target's directory (tempfile's `NamedTempFile`), which is persisted
/// over the target once complete, so a reader never sees half a file and a
/// failed run leaves the target as it was. Dropped without
/// [`AtomicFile::commit_bytes`], it removes its temporary file; a signal
/// that ends the run removes it too ([`remove_temporaries`]).
#[derive(Debug)]
struct AtomicFile {
    target: std::path::PathBuf,
    temp: Option<tempfile::NamedTempFile>,
    replace: bool,
}

impl AtomicFile {
    /// The temporary file beside `target`, in `target`'s directory, which
    /// must exist (its permissions those of a new file, under the umask).
    fn create(target: &std::path::Path, replace: bool) -> std::io::Result<AtomicFile> {
        use std::os::unix::fs::PermissionsExt as _;
        let name = target.file_name().unwrap_or_default();
        let mut list = temporaries();
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{}.", name.to_string_lossy()))
            .suffix(".tmp")
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(parent_of(target))?;
        list.push(temp.path().to_path_buf());
        Ok(AtomicFile {
            target: target.to_path_buf(),
            temp: Some(temp),
            replace,
        })
    }

    /// Writes `bytes` to the temporary file, flushes it to disk and persists
    /// it over the target. Unless the file was created to replace the
    /// target, a target that appeared meanwhile is left as it is: an error of
    /// kind `AlreadyExists`.
    fn commit_bytes(mut self, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write as _;
        let mut temp = self
            .temp
            .take()
            .expect("an uncommitted file has its temporary");
        temp.write_all(bytes)?;
        temp.as_file().sync_all()?;
        let mut list = temporaries();
        let at = temp.path().to_path_buf();
        let persisted = if self.replace {
            temp.persist(&self.target)
        } else {
            temp.persist_noclobber(&self.target)
        };
        // Persisted, it is the target; not persisted, tempfile removes it.
        list.retain(|p| *p != at);
        persisted.map(drop).map_err(|e| e.error)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let mut list = temporaries();
            list.retain(|p| p != temp.path());
            drop(temp);
        }
    }
}

/// The directory `path` is in (`.` for a bare name).
fn parent_of(path: &std::path::Path) -> std::path::PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    }
}

/// Extensions of the files written into an output directory.
const DIR_FILE_EXTENSIONS: [&str; 3] = ["svg", "png", "csv"];

/// A file or a directory of charts that a command writes, checked when the
/// command starts ([`Output::file`], [`Output::dir`]), before any work, and
/// again for each file when it is written. iosim writes only regular files:
/// anything else in a target's place (a directory, a FIFO, a device, a
/// socket, a symbolic link to one or to nothing) is refused, never
/// replaced; an existing regular file is replaced only with `--force`
/// (through a symbolic link, the file it names is replaced, not the link);
/// and no output is an input of the same run. A directory that does not
/// exist is created only when its files are written, so a run that fails
/// leaves none behind; its parent must exist.
#[derive(Debug, Clone)]
pub struct Output {
    /// The path as given (what messages name).
    path: std::path::PathBuf,
    /// Replace existing regular files.
    force: bool,
    /// The run's input files (compared by identity, not by name).
    inputs: Vec<std::path::PathBuf>,
}

/// An output refused: [`crate::Error::Write`] of `path`, for `why`.
fn refused(path: &std::path::Path, kind: std::io::ErrorKind, why: String) -> crate::Error {
    crate::Error::Write {
        path: path.to_path_buf(),
        source: std::io::Error::new(kind, why),
    }
}

/// Whether two existing paths are the same file.
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

impl Output {
    /// A file to write at `path`: refused now unless it can be written.
    /// `inputs` are the files the run reads (a path that is not given is
    /// left out), which it must not replace.
    pub fn file(
        path: &std::path::Path,
        force: bool,
        inputs: &[&std::path::Path],
    ) -> crate::Result<Output> {
        let out = Output::new(path, force, inputs);
        if path.as_os_str().as_encoded_bytes().ends_with(b"/") || path.file_name().is_none() {
            return Err(refused(
                path,
                std::io::ErrorKind::InvalidInput,
                "names a directory, not a file (give a file name)".into(),
            ));
        }
        out.check_file(path)?;
        out.check_parent(path)?;
        Ok(out)
    }

    /// A directory to write files into at `path` (created when they are
    /// written, if it does not exist): refused now unless it can be
    /// written; an existing one that holds charts or CSV files (the names
    /// iosim writes there) needs `force`.
    pub fn dir(
        path: &std::path::Path,
        force: bool,
        inputs: &[&std::path::Path],
    ) -> crate::Result<Output> {
        use std::io::ErrorKind;
        let out = Output::new(path, force, inputs);
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                out.probe(path)?;
                let held = std::fs::read_dir(path)
                    .map_err(|source| crate::Error::Write {
                        path: path.to_path_buf(),
                        source,
                    })?
                    .filter_map(|e| e.ok())
                    .filter(|e| {
                        let p = e.path();
                        p.extension()
                            .is_some_and(|x| DIR_FILE_EXTENSIONS.iter().any(|w| x == *w))
                    })
                    .collect::<Vec<_>>();
                for e in &held {
                    if let Some(i) = out.inputs.iter().find(|i| same_file(i, &e.path())) {
                        return Err(refused(
                            path,
                            ErrorKind::InvalidInput,
                            format!(
                                "holds `{}`, an input of this run, which a chart or CSV file of the same name would replace; write elsewhere",
                                i.display()
                            ),
                        ));
                    }
                }
                if !force && !held.is_empty() {
                    return Err(refused(
                        path,
                        ErrorKind::AlreadyExists,
                        format!(
                            "already holds {} chart or CSV {}; pass --force to replace those of the same names",
                            held.len(),
                            if held.len() == 1 { "file" } else { "files" }
                        ),
                    ));
                }
                Ok(out)
            }
            Ok(m) => Err(refused(
                path,
                ErrorKind::NotADirectory,
                format!(
                    "not a directory ({}); give a directory for the charts",
                    file_type_name_or_file(&m)
                ),
            )),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                if std::fs::symlink_metadata(path).is_ok() {
                    return Err(refused(
                        path,
                        ErrorKind::InvalidInput,
                        "a symbolic link to nothing; iosim does not write through it".into(),
                    ));
                }
                out.check_parent(path)?;
                Ok(out)
            }
            Err(source) => Err(crate::Error::Write {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    fn new(path: &std::path::Path, force: bool, inputs: &[&std::path::Path]) -> Output {
        Output {
            path: path.to_path_buf(),
            force,
            inputs: inputs.iter().map(|p| p.to_path_buf()).collect(),
        }
    }

    /// The path as given.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Refuses an existing `target` that is not a regular file, is an input
    /// of the run, or (without `force`) exists at all; returns the file to
    /// replace (through a symbolic link, the file it names), if any.
    fn check_file(&self, target: &std::path::Path) -> crate::Result<Option<std::path::PathBuf>> {
        use std::io::ErrorKind;
        let Ok(link) = std::fs::symlink_metadata(target) else {
            return Ok(None);
        };
        let is_link = link.file_type().is_symlink();
        let meta = match std::fs::metadata(target) {
            Ok(m) => m,
            Err(_) if is_link => {
                return Err(refused(
                    target,
                    ErrorKind::InvalidInput,
                    "a symbolic link to nothing; iosim does not write through it".into(),
                ))
            }
            Err(source) => {
                return Err(crate::Error::Write {
                    path: target.to_path_buf(),
                    source,
                })
            }
        };
        if !meta.is_file() {
            return Err(refused(
                target,
                if meta.is_dir() {
                    ErrorKind::IsADirectory
                } else {
                    ErrorKind::InvalidInput
                },
                {
                    let what = crate::error::file_type_name(&meta.file_type());
                    if is_link {
                        format!("a symbolic link to {what}, not to a regular file; iosim writes only regular files")
                    } else {
                        format!("not a regular file ({what}); iosim writes only regular files")
                    }
                },
            ));
        }
        if let Some(i) = self.inputs.iter().find(|i| same_file(i, target)) {
            return Err(refused(
                target,
                ErrorKind::InvalidInput,
                format!(
                    "the same file as `{}`, an input of this run; write the output elsewhere",
                    i.display()
                ),
            ));
        }
        if !self.force {
            return Err(refused(
                target,
                ErrorKind::AlreadyExists,
                "already exists; pass --force to replace it".into(),
            ));
        }
        if is_link {
            return std::fs::canonicalize(target)
                .map(Some)
                .map_err(|source| crate::Error::Write {
                    path: target.to_path_buf(),
                    source,
                });
        }
        Ok(Some(target.to_path_buf()))
    }

    /// Refuses a target whose directory does not exist, is not a directory
    /// or cannot be written.
    fn check_parent(&self, target: &std::path::Path) -> crate::Result<()> {
        use std::io::ErrorKind;
        let dir = parent_of(target);
        match std::fs::metadata(&dir) {
            Ok(m) if m.is_dir() => self.probe(&dir).map_err(|e| match e {
                crate::Error::Write { source, .. } => crate::Error::Write {
                    path: target.to_path_buf(),
                    source: std::io::Error::new(
                        source.kind(),
                        format!(
                            "its directory `{}` cannot be written: {source}",
                            dir.display()
                        ),
                    ),
                },
                other => other,
            }),
            Ok(_) => Err(refused(
                target,
                ErrorKind::NotADirectory,
                format!("`{}` is not a directory", dir.display()),
            )),
            Err(e) if e.kind() == ErrorKind::NotFound => Err(refused(
                target,
                ErrorKind::NotFound,
                format!(
                    "its directory `{}` does not exist (iosim creates no parent directories)",
                    dir.display()
                ),
            )),
            Err(source) => Err(crate::Error::Write {
                path: target.to_path_buf(),
                source,
            }),
        }
    }

    /// Whether a file can be made in directory `dir`: one is made and
    /// removed at once.
    fn probe(&self, dir: &std::path::Path) -> crate::Result<()> {
        tempfile::Builder::new()
            .prefix(".iosim-probe.")
            .tempfile_in(dir)
            .map(drop)
            .map_err(|source| crate::Error::Write {
                path: dir.to_path_buf(),
                source,
            })
    }

    /// Writes the file (an output made by [`Output::file`]) whole, checked
    /// again first.
    pub fn write(&self, bytes: &[u8]) -> crate::Result<()> {
        write_checked(self, &self.path, bytes)
    }

    /// Writes `files` (name, bytes) into the directory (an output made by
    /// [`Output::dir`]), creating it if it does not exist; returns the
    /// paths written, in order. Every target is checked before any is
    /// written; if one fails, those written and a directory created are
    /// removed.
    pub fn write_files(&self, files: &[(String, &[u8])]) -> crate::Result<Vec<std::path::PathBuf>> {
        let created = match std::fs::create_dir(&self.path) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
            Err(source) => {
                return Err(crate::Error::Write {
                    path: self.path.clone(),
                    source,
                })
            }
        };
        let paths: Vec<std::path::PathBuf> = files.iter().map(|(n, _)| self.path.join(n)).collect();
        let mut written = Vec::new();
        let result = paths
            .iter()
            .try_for_each(|p| self.check_file(p).map(drop))
            .and_then(|()| {
                paths.iter().zip(files).try_for_each(|(p, (_, bytes))| {
                    write_checked(self, p, bytes)?;
                    written.push(p.clone());
                    Ok(())
                })
            });
        if let Err(e) = result {
            for p in &written {
                let _ = std::fs::remove_file(p);
            }
            if created {
                let _ = std::fs::remove_dir(&self.path);
            }
            return Err(e);
        }
        Ok(paths)
    }
}

/// What a file's metadata says it is, in words.
fn file_type_name_or_file(m: &std::fs::Metadata) -> &'static str {
    if m.is_file() {
        "a file"
    } else {
        crate::error::file_type_name(&m.file_type())
    }
}

/// Writes `bytes` to `target` for `out`: checked, then atomically.
fn write_checked(out: &Output, target: &std::path::Path, bytes: &[u8]) -> crate::Result<()> {
    let err = |source| crate::Error::Write {
        path: target.to_path_buf(),
        source,
    };
    let replace = out.check_file(target)?;
    let at = replace.as_deref().unwrap_or(target);
    AtomicFile::create(at, replace.is_some())
        .and_then(|f| f.commit_bytes(bytes))
        .map_err(|source| {
            if source.kind() == std::io::ErrorKind::AlreadyExists {
                err(std::io::Error::new(
                    source.kind(),
                    "already exists (it appeared during the run); pass --force to replace it",
                ))
            } else {
                err(source)
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        let mut s = Section::new("figures", &["id", "published", "unit"]);
        s.rows.push(vec![
            Cell::Text("a,b".into()),
            Cell::Num(1.23456, 1),
            Cell::Text("MB/s".into()),
        ]);
        Report {
            command: "validate".into(),
            seed: 7,
            meta: vec![],
            warnings: None,
            sections: vec![s],
        }
    }

    #[test]
    fn warnings_are_header_lines_and_a_json_array() {
        let mut r = sample();
        assert!(!r.render(Format::Json).contains("\"warnings\""));
        r.warnings = Some(Vec::new());
        let j: Value = serde_json::from_str(&r.render(Format::Json)).expect("JSON");
        assert_eq!(j["warnings"], json!([]));
        r.warnings = Some(vec!["a run short of its precision".into()]);
        for f in [Format::Table, Format::Wide, Format::Csv] {
            assert!(r
                .render(f)
                .contains("\n# warning: a run short of its precision\n"));
        }
        let j: Value = serde_json::from_str(&r.render(Format::Json)).expect("JSON");
        assert_eq!(j["warnings"], json!(["a run short of its precision"]));
    }

    #[test]
    fn every_format_carries_the_seed_and_the_same_fields() {
        let r = sample();
        for f in [Format::Table, Format::Csv] {
            let t = r.render(f);
            assert!(t.contains("seed: 7"), "{t}");
            assert!(t.contains("published"), "{t}");
            assert!(t.contains("10^6 bytes/s"));
        }
        let j: Value = serde_json::from_str(&r.render(Format::Json)).expect("valid JSON");
        assert_eq!(j["seed"], 7);
        assert_eq!(j["figures"][0]["id"], "a,b");
        assert_eq!(j["figures"][0]["published"], 1.23456);
    }

    #[test]
    fn a_cell_longer_than_the_formatters_width_limit_is_padded_not_a_panic() {
        let mut r = sample();
        let long = "x".repeat(70_000);
        r.sections[0].rows.push(vec![
            Cell::Text(long.clone()),
            Cell::Num(2.0, 1),
            Cell::Text("MB/s".into()),
        ]);
        let t = r.render(Format::Wide);
        // The short id is padded to the long one's width.
        assert!(
            t.contains(&format!("a,b{}  ", " ".repeat(70_000 - 3))),
            "padded"
        );
        assert!(t.contains(&format!("{long}  ")));
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape_control("plain"), "plain");
        assert_eq!(
            escape_control("a\x1b[2Jb\r\n\u{9b}\x7f"),
            r"a\x1b[2Jb\x0d\x0a\u{9b}\x7f"
        );
    }

    #[test]
    fn csv_guards_text_formulas_but_not_negative_numbers() {
        let mut s = Section::new("s", &["a", "b", "c", "d"]);
        s.rows.push(vec![
            Cell::Text("=1+1".into()),
            Cell::Text("-x".into()),
            Cell::Num(-1.5, 1),
            Cell::Text("@a".into()),
        ]);
        let r = Report {
            sections: vec![s],
            ..Default::default()
        };
        assert!(r.render(Format::Csv).ends_with("\n'=1+1,'-x,-1.5,'@a\n"));
        assert!(!r.render(Format::Table).contains('\''));
    }

    #[test]
    fn huge_numbers_print_in_scientific_notation() {
        assert_eq!(Cell::Num(1e300, 2).text(), "1.00e300");
        assert_eq!(Cell::Num(-2.5e15, 1).text(), "-2.5e15");
        assert_eq!(
            Cell::Num(999_999_999_999_999.0, 0).text(),
            "999999999999999"
        );
    }

    #[test]
    fn a_file_is_written_whole_and_never_over_one_that_appeared_meanwhile() {
        let dir = tempfile::TempDir::new().unwrap();
        let names = || {
            let mut v: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        let target = dir.path().join("out.txt");
        Output::file(&target, false, &[])
            .unwrap()
            .write(b"one\n")
            .unwrap();
        let kind = |r: crate::Result<Output>| match r.map(drop).unwrap_err() {
            crate::Error::Write { source, .. } => source.kind(),
            other => panic!("{other}"),
        };
        assert_eq!(
            kind(Output::file(&target, false, &[])),
            std::io::ErrorKind::AlreadyExists
        );
        Output::file(&target, true, &[])
            .unwrap()
            .write(b"two\n")
            .unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "two\n");
        // An input of the run is never replaced, even with force.
        assert!(Output::file(&target, true, &[&target]).is_err());
        // A file that appeared after the check is left as it is.
        let other = dir.path().join("new.txt");
        let out = Output::file(&other, false, &[]).unwrap();
        std::fs::write(&other, "first\n").unwrap();
        assert!(out.write(b"late\n").is_err());
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "first\n");
        // Dropped uncommitted: no temporary file is left, and none is listed.
        drop(AtomicFile::create(&dir.path().join("gone.txt"), true).unwrap());
        assert_eq!(names(), ["new.txt", "out.txt"]);
        assert!(temporaries().is_empty());
        // No parent: refused before anything is made.
        assert_eq!(
            kind(Output::file(&dir.path().join("no/such/f.txt"), false, &[])),
            std::io::ErrorKind::NotFound
        );
        assert!(Output::file(&dir.path().join("d/"), false, &[]).is_err());
        // A directory that fails to fill is removed.
        let charts = dir.path().join("charts");
        let out = Output::dir(&charts, false, &[]).unwrap();
        assert!(!charts.exists());
        let files = [
            ("a.svg".to_string(), &b"x"[..]),
            ("..".to_string(), &b"y"[..]),
        ];
        assert!(out.write_files(&files).is_err());
        assert!(!charts.exists());
        assert_eq!(
            out.write_files(&files[..1]).unwrap(),
            [charts.join("a.svg")]
        );
        assert_eq!(
            kind(Output::dir(&charts, false, &[])),
            std::io::ErrorKind::AlreadyExists
        );
        assert!(Output::dir(&charts, true, &[]).is_ok());
    }

    #[test]
    fn csv_quotes_commas() {
        assert!(sample().render(Format::Csv).contains("\"a,b\",1.2,MB/s"));
    }
}

/// One chart as SVG text and PNG bytes (the same drawing), as
/// `crate::charts::render` draws it.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// File stem (`hp2g-figure-2`): the files are `STEM.svg` and `STEM.png`.
    pub stem: String,
    /// Title, for a caption.
    pub title: String,
    /// SVG text.
    pub svg: String,
    /// PNG file bytes.
    pub png: Vec<u8>,
}

/// Each chart's files, `STEM.svg` and `STEM.png`, as (name, bytes) for
/// [`Output::write_files`]. Charts are rendered before this is called, so a
/// chart that failed to draw has no file at all.
pub fn chart_files(charts: &[Rendered]) -> Vec<(String, &[u8])> {
    charts
        .iter()
        .flat_map(|c| {
            [
                (format!("{}.svg", c.stem), c.svg.as_bytes()),
                (format!("{}.png", c.stem), c.png.as_slice()),
            ]
        })
        .collect()
}
