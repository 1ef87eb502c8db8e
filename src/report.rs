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
}

impl Cell {
    /// The cell as terminal text: control characters escaped, and a number
    /// of 10^15 or more in scientific notation rather than in 16 to 309 digits.
    fn text(&self) -> String {
        match self {
            Cell::Text(s) => escape_control(s).into_owned(),
            Cell::Num(v, d) if v.is_finite() && v.abs() >= 1e15 => format!("{v:.d$e}"),
            Cell::Num(v, d) if v.is_finite() => format!("{v:.d$}"),
            Cell::Num(_, _) => "NaN".into(),
            Cell::Int(i) => i.to_string(),
        }
    }
    fn json(&self) -> Value {
        match self {
            Cell::Text(s) => Value::String(s.clone()),
            // Rounded to 6 significant decimals so output is stable and readable.
            Cell::Num(v, _) if v.is_finite() => json!((v * 1e6).round() / 1e6),
            Cell::Num(_, _) => Value::Null,
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

    fn header_lines(&self) -> Vec<String> {
        let mut v = vec![
            format!("iosim {} {}", env!("CARGO_PKG_VERSION"), self.command),
            format!("seed: {}", self.seed),
            format!("units: {UNITS}"),
        ];
        for (k, val) in &self.meta {
            v.push(format!("{k}: {}", escape_control(val)));
        }
        v[0] = escape_control(&v[0]).into_owned();
        v
    }

    fn table(&self, limit: Option<usize>) -> String {
        let mut out = String::new();
        for l in self.header_lines() {
            match limit {
                Some(lim) => wrap_into(&mut out, "# ", &l, lim, "#   "),
                None => {
                    let _ = writeln!(out, "# {l}");
                }
            }
        }
        for s in &self.sections {
            let _ = writeln!(out, "\n## {}", s.name);
            let cells: Vec<Vec<String>> = s
                .rows
                .iter()
                .map(|r| r.iter().map(|c| c.text()).collect())
                .collect();
            if let Some(lim) = limit {
                narrow_section(&mut out, s, &cells, lim);
                continue;
            }
            let mut w: Vec<usize> = s.fields.iter().map(|f| f.len()).collect();
            for r in &cells {
                for (i, c) in r.iter().enumerate() {
                    if i < w.len() {
                        w[i] = w[i].max(c.len());
                    }
                }
            }
            let line = |vals: Vec<&str>, numeric: &dyn Fn(usize) -> bool| {
                let mut l = String::new();
                for (i, v) in vals.iter().enumerate() {
                    if i > 0 {
                        l.push_str("  ");
                    }
                    pad_into(&mut l, v, w[i], numeric(i));
                }
                l.trim_end().to_string()
            };
            let is_num = |i: usize| {
                s.rows
                    .first()
                    .is_some_and(|r| matches!(r.get(i), Some(Cell::Num(..)) | Some(Cell::Int(_))))
            };
            let _ = writeln!(
                out,
                "{}",
                line(s.fields.iter().map(|x| x.as_str()).collect(), &is_num)
            );
            for r in &cells {
                let _ = writeln!(
                    out,
                    "{}",
                    line(r.iter().map(|x| x.as_str()).collect(), &is_num)
                );
            }
        }
        out
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

/// Appends section `s` (its `cells` as text) to `out` in lines of at most
/// `limit` characters where it can: a table too wide breaks its field
/// names over lines (after underscores) down to its values' widths, and
/// while it is still too wide its widest text field (never the first)
/// leaves the columns and is printed under each row as `field: value`,
/// wrapped.
fn narrow_section(out: &mut String, s: &Section, cells: &[Vec<String>], limit: usize) {
    let n = s.fields.len();
    let mut vw: Vec<usize> = vec![0; n];
    for r in cells {
        for (i, c) in r.iter().enumerate().take(n) {
            vw[i] = vw[i].max(c.chars().count());
        }
    }
    let full: Vec<usize> = (0..n)
        .map(|i| vw[i].max(s.fields[i].chars().count()))
        .collect();
    // Broken names: each column as wide as its values or its longest piece.
    let broken: Vec<usize> = (0..n)
        .map(|i| {
            let piece = s.fields[i]
                .split_inclusive('_')
                .map(|p| p.chars().count())
                .max()
                .unwrap_or(0);
            vw[i].max(piece).max(1)
        })
        .collect();
    let is_text = |i: usize| {
        s.rows
            .iter()
            .any(|r| matches!(r.get(i), Some(Cell::Text(_))))
    };
    let is_num = |i: usize| {
        s.rows
            .first()
            .is_some_and(|r| matches!(r.get(i), Some(Cell::Num(..)) | Some(Cell::Int(_))))
    };
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
            .filter(|&&i| is_text(i))
            .max_by_key(|&&i| (broken[i], std::cmp::Reverse(i)))
        else {
            break broken;
        };
        cols.retain(|&i| i != widest);
    };
    let beneath: Vec<usize> = (0..n).filter(|i| !cols.contains(i)).collect();
    let line = |vals: &[String]| {
        let mut l = String::new();
        for (k, (&i, v)) in cols.iter().zip(vals).enumerate() {
            if k > 0 {
                l.push_str("  ");
            }
            pad_into(&mut l, v, w[i], is_num(i));
        }
        l.trim_end().to_string()
    };
    let heads: Vec<Vec<String>> = cols
        .iter()
        .map(|&i| name_lines(&s.fields[i], w[i]))
        .collect();
    let rows = heads.iter().map(Vec::len).max().unwrap_or(1);
    for k in 0..rows {
        // Names end on the last header line, as numbers end on the right.
        let vals: Vec<String> = heads
            .iter()
            .map(|h| {
                let skip = rows - h.len();
                if k >= skip {
                    h[k - skip].clone()
                } else {
                    String::new()
                }
            })
            .collect();
        let _ = writeln!(out, "{}", line(&vals));
    }
    for r in cells {
        let vals: Vec<String> = cols
            .iter()
            .map(|&i| r.get(i).cloned().unwrap_or_default())
            .collect();
        let _ = writeln!(out, "{}", line(&vals));
        for &i in &beneath {
            let v = r.get(i).map_or("", |x| x.as_str());
            if !v.is_empty() {
                wrap_into(out, &format!("    {}: ", s.fields[i]), v, limit, "        ");
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
fn csv_text(c: &Cell) -> String {
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

fn csv_quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes `text` to `path`, creating parent directories, atomically: see
/// [`AtomicFile`]. An existing file is replaced.
pub fn write_file(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    AtomicFile::create(path, true)?.commit(text)
}

/// A file written whole or not at all: the text goes to a temporary file in
/// the target's directory (tempfile's `NamedTempFile`), which is persisted
/// over the target once complete, so a reader never sees half a file and a
/// failed run leaves the target as it was. Creating it first checks, before
/// any long work, that the target can be written; dropped without
/// [`AtomicFile::commit`], it removes its temporary file.
#[derive(Debug)]
pub struct AtomicFile {
    target: std::path::PathBuf,
    temp: tempfile::NamedTempFile,
    replace: bool,
}

impl AtomicFile {
    /// Creates the target's directory if needed and the temporary file beside
    /// the target (its permissions those of a new file, under the umask).
    /// Unless `replace`, an existing target is an error of kind
    /// `AlreadyExists`; a target that is a directory is always one.
    pub fn create(target: &std::path::Path, replace: bool) -> std::io::Result<AtomicFile> {
        use std::io::{Error, ErrorKind};
        use std::os::unix::fs::PermissionsExt as _;
        if let Ok(meta) = std::fs::metadata(target) {
            if meta.is_dir() {
                return Err(Error::new(ErrorKind::IsADirectory, "is a directory"));
            }
            if !replace {
                return Err(Error::new(ErrorKind::AlreadyExists, "already exists"));
            }
        }
        let name = target
            .file_name()
            .ok_or_else(|| Error::new(ErrorKind::InvalidInput, "not a file name"))?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir)?;
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{}.", name.to_string_lossy()))
            .suffix(".tmp")
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(&dir)?;
        Ok(AtomicFile {
            target: target.to_path_buf(),
            temp,
            replace,
        })
    }

    /// Writes `text` to the temporary file, flushes it to disk and persists
    /// it over the target.
    pub fn commit(self, text: &str) -> std::io::Result<()> {
        self.commit_bytes(text.as_bytes())
    }

    /// [`AtomicFile::commit`] for bytes. Unless the file was created to
    /// replace the target, a target that appeared meanwhile is left as it
    /// is: an error of kind `AlreadyExists`.
    pub fn commit_bytes(mut self, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write as _;
        self.temp.write_all(bytes)?;
        self.temp.as_file().sync_all()?;
        let persisted = if self.replace {
            self.temp.persist(&self.target)
        } else {
            self.temp.persist_noclobber(&self.target)
        };
        persisted.map(drop).map_err(|e| e.error)
    }
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
            sections: vec![s],
        }
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
        let target = dir.path().join("sub").join("out.txt");
        let names = || {
            let mut v: Vec<String> = std::fs::read_dir(target.parent().unwrap())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        write_file(&target, "one\n").unwrap();
        write_file(&target, "two\n").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "two\n");
        let kind = |r: std::io::Result<AtomicFile>| r.map(drop).unwrap_err().kind();
        assert_eq!(
            kind(AtomicFile::create(&target, false)),
            std::io::ErrorKind::AlreadyExists
        );
        let other = dir.path().join("sub").join("new.txt");
        let file = AtomicFile::create(&other, false).unwrap();
        std::fs::write(&other, "first\n").unwrap();
        let e = file.commit("late\n").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "first\n");
        // Dropped uncommitted: no temporary file is left.
        drop(AtomicFile::create(&dir.path().join("sub").join("gone.txt"), true).unwrap());
        assert_eq!(names(), ["new.txt", "out.txt"]);
    }

    #[test]
    fn csv_quotes_commas() {
        assert!(sample().render(Format::Csv).contains("\"a,b\",1.2,MB/s"));
    }
}

/// Writes `bytes` to `path` as [`write_file`] writes text.
pub fn write_bytes(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    AtomicFile::create(path, true)?.commit_bytes(bytes)
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

/// Writes each chart as `DIR/STEM.svg` and `DIR/STEM.png`; returns the paths
/// written, in order. Charts are rendered before this is called, so a chart
/// that failed to draw has no file at all.
pub fn write_charts(
    dir: &std::path::Path,
    charts: &[Rendered],
) -> crate::Result<Vec<std::path::PathBuf>> {
    let mut written = Vec::new();
    for c in charts {
        for (ext, bytes) in [("svg", c.svg.as_bytes()), ("png", c.png.as_slice())] {
            let path = dir.join(format!("{}.{ext}", c.stem));
            write_bytes(&path, bytes).map_err(|source| crate::Error::Write {
                path: path.clone(),
                source,
            })?;
            written.push(path);
        }
    }
    Ok(written)
}
