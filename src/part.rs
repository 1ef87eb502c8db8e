//! Streamed reports and part files. A command whose rows would not fit in
//! memory (a sweep of a million points) writes them one at a time as
//! records of a *part*: a header line, then one JSON line per row or
//! warning, then an end line counting the rows. An unsharded run spools
//! its one part to an anonymous temporary file; a `--shard I/N` run writes
//! part I of N to standard output; `iosim merge` reads parts back. Either
//! way the final table, CSV or JSON is rendered from the parts in passes
//! over them ([`render`]), holding only what the table's column widths
//! need, and is byte for byte what [`Report::render`] gives for the same
//! rows held in memory.
//!
//! Numbers keep their exact bits (`f64::to_bits`) in a part, so a merge
//! prints what one run would.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::report::{
    csv_quote, csv_text, escape_control, Cell, ColumnStats, Format, Layout, Report,
};
use crate::sim::{BusResult, CpuResult, ExperimentResult, FunctionResult, StartDrift, Totals};
use crate::units::{BytesPerSec, Picos};

/// The longest line a part may have, in bytes.
const MAX_LINE: u64 = 64 << 20;

/// The version of the part format; parts of another are refused.
pub const PART_FORMAT: u64 = 1;

/// The items of the `part`-th of `parts` equal parts (1-based) of `total`
/// items in order: a deterministic split in which every item falls in one
/// part, the parts' sizes differing by at most one.
pub fn share(total: usize, part: u64, parts: u64) -> std::ops::Range<usize> {
    let at = |k: u64| (total as u128 * k as u128 / parts.max(1) as u128) as usize;
    at(part.saturating_sub(1))..at(part.min(parts))
}

/// The header of a part: everything the final output states before its
/// rows, which every part of one run states alike, and which part it is.
#[derive(Debug, Clone, PartialEq)]
pub struct PartHead {
    /// The command, as the report's first line names it.
    pub command: String,
    /// The seed.
    pub seed: u64,
    /// The report's header facts.
    pub meta: Vec<(String, String)>,
    /// The warnings known before any row (`None`: the command keeps no
    /// warnings); warnings of rows follow as records.
    pub warnings: Option<Vec<String>>,
    /// Each section's name and fields, in print order.
    pub sections: Vec<(String, Vec<String>)>,
    /// What else decides the rows (the flags of the run, without those
    /// that do not change them); parts of different runs differ here.
    pub identity: String,
    /// Which part, 1 to `parts`.
    pub part: u64,
    /// Of how many.
    pub parts: u64,
}

/// One record of a part after its header.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A row of section `.0`.
    Row(usize, Vec<Cell>),
    /// A warning, printed after the header's.
    Warning(String),
}

fn cell_json(c: &Cell) -> Value {
    match c {
        Cell::Text(s) => json!(["t", s]),
        Cell::Num(v, d) => json!(["n", v.to_bits(), d]),
        Cell::Int(i) => json!(["i", i]),
        Cell::Blank => Value::Null,
    }
}

fn cell_from(v: &Value) -> Option<Cell> {
    if v.is_null() {
        return Some(Cell::Blank);
    }
    let a = v.as_array()?;
    match (a.first()?.as_str()?, a.len()) {
        ("t", 2) => Some(Cell::Text(a[1].as_str()?.to_string())),
        ("n", 3) => Some(Cell::Num(
            f64::from_bits(a[1].as_u64()?),
            usize::try_from(a[2].as_u64()?).ok().filter(|d| *d <= 17)?,
        )),
        ("i", 2) => Some(Cell::Int(a[1].as_u64()?)),
        _ => None,
    }
}

/// A number as a part holds it: its bits.
fn bits(v: f64) -> Value {
    json!(v.to_bits())
}

/// The result of one simulated experiment as JSON, every number to the bit:
/// what a shard of `place` hands the merge.
pub fn result_json(r: &ExperimentResult) -> Value {
    let functions: Vec<Value> = r
        .functions
        .iter()
        .map(|f| {
            json!([
                f.label,
                f.link,
                bits(f.out.0),
                bits(f.inn.0),
                bits(f.ceiling.0),
                bits(f.cpu_util),
                bits(f.app_cpu_util),
                bits(f.card_cpu_util),
                f.register_read.0,
                bits(f.tx_underruns_per_s),
                bits(f.wire_out_util),
                bits(f.wire_in_util),
            ])
        })
        .collect();
    let buses: Vec<Value> = r
        .buses
        .iter()
        .map(|b| {
            json!([
                b.label,
                b.mode,
                bits(b.peak.0),
                bits(b.util),
                bits(b.data.0),
                bits(b.retries_per_s),
                bits(b.rope_util),
                bits(b.rope_up.0),
                bits(b.rope_down.0),
                bits(b.rope_capacity.0),
                b.controller.as_ref().map(|(n, u)| json!([n, bits(*u)])),
            ])
        })
        .collect();
    let cpus: Vec<Value> = r
        .cpu_list
        .iter()
        .map(|c| json!([c.cpu, bits(c.util), c.work]))
        .collect();
    let t = &r.totals;
    json!({
        "id": r.id,
        "functions": functions,
        "buses": buses,
        "bottleneck": r.bottleneck,
        "cpus": r.cpus,
        "cpu_list": cpus,
        "memory_util": r.memory_util.map(bits),
        "cpu_util": bits(r.cpu_util),
        "service_demand_us_per_kb": bits(r.service_demand_us_per_kb),
        "events": r.events,
        "measured": r.measured.0,
        "ci95_pct": bits(r.ci95_pct),
        "start_drift": r.start_drift.map(|d| json!([bits(d.bias_pct), bits(d.ci95_pct), bits(d.first_ms)])),
        "remeasured_from": r.remeasured_from.map(|t| t.0),
        "totals": [
            t.bus_write_bytes,
            t.rope_write_bytes,
            t.posted_in_bridges,
            t.read_bytes_delivered
        ],
    })
}

/// Reads [`result_json`] back; `None` if `v` is not one.
pub fn result_from_json(v: &Value) -> Option<ExperimentResult> {
    let num = |v: &Value| v.as_u64().map(f64::from_bits);
    let text = |v: &Value| v.as_str().map(str::to_string);
    let items = |v: &Value, n: usize| v.as_array().filter(|a| a.len() == n).cloned();
    let list = |k: &str| v.get(k).and_then(Value::as_array);
    let functions = list("functions")?
        .iter()
        .map(|f| {
            let f = items(f, 12)?;
            Some(FunctionResult {
                label: text(&f[0])?,
                link: text(&f[1])?,
                out: BytesPerSec(num(&f[2])?),
                inn: BytesPerSec(num(&f[3])?),
                ceiling: BytesPerSec(num(&f[4])?),
                cpu_util: num(&f[5])?,
                app_cpu_util: num(&f[6])?,
                card_cpu_util: num(&f[7])?,
                register_read: Picos(f[8].as_u64()?),
                tx_underruns_per_s: num(&f[9])?,
                wire_out_util: num(&f[10])?,
                wire_in_util: num(&f[11])?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let buses = list("buses")?
        .iter()
        .map(|b| {
            let b = items(b, 11)?;
            let controller = match &b[10] {
                Value::Null => None,
                c => {
                    let c = items(c, 2)?;
                    Some((text(&c[0])?, num(&c[1])?))
                }
            };
            Some(BusResult {
                label: text(&b[0])?,
                mode: text(&b[1])?,
                peak: BytesPerSec(num(&b[2])?),
                util: num(&b[3])?,
                data: BytesPerSec(num(&b[4])?),
                retries_per_s: num(&b[5])?,
                rope_util: num(&b[6])?,
                rope_up: BytesPerSec(num(&b[7])?),
                rope_down: BytesPerSec(num(&b[8])?),
                rope_capacity: BytesPerSec(num(&b[9])?),
                controller,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let cpu_list = list("cpu_list")?
        .iter()
        .map(|c| {
            let c = items(c, 3)?;
            Some(CpuResult {
                cpu: usize::try_from(c[0].as_u64()?).ok()?,
                util: num(&c[1])?,
                work: text(&c[2])?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let t = items(v.get("totals")?, 4)?;
    let field = |k: &str| v.get(k);
    Some(ExperimentResult {
        id: text(field("id")?)?,
        functions,
        buses,
        bottleneck: text(field("bottleneck")?)?,
        cpus: u32::try_from(field("cpus")?.as_u64()?).ok()?,
        cpu_list,
        memory_util: match field("memory_util")? {
            Value::Null => None,
            m => Some(num(m)?),
        },
        cpu_util: num(field("cpu_util")?)?,
        service_demand_us_per_kb: num(field("service_demand_us_per_kb")?)?,
        events: field("events")?.as_u64()?,
        measured: Picos(field("measured")?.as_u64()?),
        ci95_pct: num(field("ci95_pct")?)?,
        start_drift: match field("start_drift")? {
            Value::Null => None,
            d => {
                let d = items(d, 3)?;
                Some(StartDrift {
                    bias_pct: num(&d[0])?,
                    ci95_pct: num(&d[1])?,
                    first_ms: num(&d[2])?,
                })
            }
        },
        remeasured_from: match field("remeasured_from")? {
            Value::Null => None,
            t => Some(Picos(t.as_u64()?)),
        },
        totals: Totals {
            bus_write_bytes: t[0].as_u64()?,
            rope_write_bytes: t[1].as_u64()?,
            posted_in_bridges: t[2].as_u64()?,
            read_bytes_delivered: t[3].as_u64()?,
        },
    })
}

impl PartHead {
    /// The header line's JSON.
    fn to_json(&self) -> Value {
        json!({
            "iosim_part": PART_FORMAT,
            "version": env!("CARGO_PKG_VERSION"),
            "command": self.command,
            "seed": self.seed,
            "meta": self.meta,
            "warnings": self.warnings,
            "sections": self.sections,
            "identity": self.identity,
            "part": self.part,
            "parts": self.parts,
        })
    }

    /// Reads a header line; `None` if it is not one of this version.
    fn from_json(v: &Value) -> std::result::Result<PartHead, String> {
        let format = v.get("iosim_part").and_then(Value::as_u64);
        if format.is_none() {
            return Err("not an iosim part file (no `iosim_part` header line)".into());
        }
        if format != Some(PART_FORMAT) {
            return Err(format!(
                "part format {} (this iosim reads format {PART_FORMAT})",
                format.unwrap_or(0)
            ));
        }
        let version = v.get("version").and_then(Value::as_str).unwrap_or("");
        if version != env!("CARGO_PKG_VERSION") {
            return Err(format!(
                "written by iosim {version}; this is iosim {} (merge with the version that wrote it)",
                env!("CARGO_PKG_VERSION")
            ));
        }
        let bad = |what: &str| format!("a malformed header: `{what}`");
        let text = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| bad(k))
        };
        let num = |k: &str| v.get(k).and_then(Value::as_u64).ok_or_else(|| bad(k));
        let strings = |x: &Value| -> Option<Vec<String>> {
            x.as_array()?
                .iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect()
        };
        let meta = v
            .get("meta")
            .and_then(Value::as_array)
            .and_then(|a| {
                a.iter()
                    .map(|kv| {
                        let p = strings(kv)?;
                        let [k, val] = <[String; 2]>::try_from(p).ok()?;
                        Some((k, val))
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| bad("meta"))?;
        let warnings = match v.get("warnings") {
            Some(Value::Null) => None,
            Some(w) => Some(strings(w).ok_or_else(|| bad("warnings"))?),
            None => return Err(bad("warnings")),
        };
        let sections = v
            .get("sections")
            .and_then(Value::as_array)
            .and_then(|a| {
                a.iter()
                    .map(|s| {
                        let s = s.as_array()?;
                        Some((s.first()?.as_str()?.to_string(), strings(s.get(1)?)?))
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| bad("sections"))?;
        let head = PartHead {
            command: text("command")?,
            seed: num("seed")?,
            meta,
            warnings,
            sections,
            identity: text("identity")?,
            part: num("part")?,
            parts: num("parts")?,
        };
        if head.parts == 0 || head.part == 0 || head.part > head.parts {
            return Err(format!(
                "part {} of {}: no such part",
                head.part, head.parts
            ));
        }
        Ok(head)
    }

    /// Whether `other` is a part of the same run (all but the part number
    /// agree).
    pub fn same_run(&self, other: &PartHead) -> bool {
        PartHead {
            part: other.part,
            ..self.clone()
        } == *other
    }
}

/// Writes a part: its header, then rows and warnings one at a time, then
/// the end line ([`PartWriter::finish`]). Nothing is held.
pub struct PartWriter<W: Write> {
    out: W,
    sections: usize,
    rows: u64,
}

impl<W: Write> PartWriter<W> {
    /// Starts a part on `out` with its header line.
    pub fn new(mut out: W, head: &PartHead) -> std::io::Result<PartWriter<W>> {
        writeln!(out, "{}", head.to_json())?;
        Ok(PartWriter {
            out,
            sections: head.sections.len(),
            rows: 0,
        })
    }

    /// Appends a row of section `section`.
    pub fn row(&mut self, section: usize, cells: &[Cell]) -> std::io::Result<()> {
        debug_assert!(section < self.sections);
        let c: Vec<Value> = cells.iter().map(cell_json).collect();
        self.rows += 1;
        writeln!(self.out, "{}", json!({ "s": section, "c": c }))
    }

    /// Appends a warning.
    pub fn warning(&mut self, text: &str) -> std::io::Result<()> {
        writeln!(self.out, "{}", json!({ "w": text }))
    }

    /// Ends the part with its end line (the rows it holds, so that a part
    /// cut short is refused) and returns the writer, flushed.
    pub fn finish(mut self) -> std::io::Result<W> {
        writeln!(self.out, "{}", json!({ "end": self.rows }))?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Which records a pass over parts wants: the others are skipped without
/// being decoded (a part written by iosim; [`crate::loader::open_parts`]
/// decodes every record of a part given to `merge` once, first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Every record.
    All,
    /// The rows of one section.
    Rows(usize),
    /// The warnings.
    Warnings,
}

/// Whether a record line is one `want` skips: a row of another section, or
/// a row or warning when only the other kind is wanted.
fn skipped(line: &str, want: Want) -> bool {
    let row = line.starts_with("{\"c\":");
    match want {
        Want::All => false,
        Want::Warnings => row,
        Want::Rows(k) => {
            if !row {
                return line.starts_with("{\"w\":");
            }
            let section = line
                .trim_end()
                .strip_suffix('}')
                .and_then(|l| l.rsplit_once("\"s\":"))
                .and_then(|(_, n)| n.parse::<usize>().ok());
            section.is_some_and(|s| s != k)
        }
    }
}

/// A place parts are read from, any number of times: each call of `each`
/// gives the records `want` asks for of every part, in order.
pub trait Records {
    /// Calls `f` with every record `want` asks for, in order.
    fn each(&mut self, want: Want, f: &mut dyn FnMut(Record) -> Result<()>) -> Result<()>;
}

/// Reads one part from `r` (named `name` in errors): its header, and with
/// `f` each record; checks the end line. With `f` `None`, only the header
/// is read.
pub fn read_part(
    r: &mut dyn BufRead,
    name: &str,
    want: Want,
    mut f: Option<&mut dyn FnMut(Record) -> Result<()>>,
) -> Result<PartHead> {
    let bad = |line: usize, why: String| Error::Invalid {
        at: crate::error::Location {
            file: name.into(),
            key: String::new(),
            line,
            column: 0,
        },
        message: why,
    };
    let io = |source: std::io::Error| Error::Io {
        path: name.into(),
        source,
    };
    // One line, at most MAX_LINE bytes (a file that is no part may have
    // none); its length, 0 at the end.
    let mut read = |line: &mut String, n: usize| -> Result<usize> {
        let got = std::io::Read::take(&mut *r, MAX_LINE)
            .read_line(line)
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::InvalidData {
                    bad(n, "not an iosim part file (not UTF-8 text)".into())
                } else {
                    io(e)
                }
            })?;
        if got as u64 == MAX_LINE && !line.ends_with('\n') {
            return Err(bad(
                n,
                format!("a line longer than {MAX_LINE} bytes: not an iosim part file"),
            ));
        }
        Ok(got)
    };
    let mut line = String::new();
    let mut n = 1;
    read(&mut line, n)?;
    let head: Value = serde_json::from_str(&line).map_err(|_| {
        bad(
            1,
            "not an iosim part file (its first line is not JSON)".into(),
        )
    })?;
    let head = PartHead::from_json(&head).map_err(|why| bad(1, why))?;
    let Some(f) = f.as_mut() else {
        return Ok(head);
    };
    let mut rows = 0u64;
    loop {
        line.clear();
        n += 1;
        if read(&mut line, n)? == 0 {
            return Err(bad(
                n,
                "cut short: no end line (the run that wrote it did not finish)".into(),
            ));
        }
        if skipped(&line, want) {
            rows += u64::from(line.starts_with("{\"c\":"));
            continue;
        }
        let v: Value =
            serde_json::from_str(&line).map_err(|e| bad(n, format!("a malformed record: {e}")))?;
        if let Some(end) = v.get("end") {
            if end.as_u64() != Some(rows) {
                return Err(bad(
                    n,
                    format!("the end line counts {end} rows; the part holds {rows}"),
                ));
            }
            line.clear();
            if read(&mut line, n + 1)? != 0 {
                return Err(bad(n + 1, "records after the end line".into()));
            }
            return Ok(head);
        }
        let rec = if let Some(w) = v.get("w").and_then(Value::as_str) {
            Record::Warning(w.to_string())
        } else {
            let s = v
                .get("s")
                .and_then(Value::as_u64)
                .and_then(|s| usize::try_from(s).ok())
                .filter(|s| *s < head.sections.len());
            let cells = v
                .get("c")
                .and_then(Value::as_array)
                .and_then(|c| c.iter().map(cell_from).collect::<Option<Vec<_>>>());
            match (s, cells) {
                (Some(s), Some(c)) if c.len() == head.sections[s].1.len() => {
                    rows += 1;
                    Record::Row(s, c)
                }
                _ => return Err(bad(n, "a malformed record".into())),
            }
        };
        f(rec)?;
    }
}

/// Parts in files (opened by [`crate::loader::open_parts`], or a spool),
/// read from the start at each pass.
pub struct FileParts {
    files: Vec<(String, std::fs::File)>,
}

impl FileParts {
    /// Parts in these files (name in errors, file), in order.
    pub fn new(files: Vec<(String, std::fs::File)>) -> FileParts {
        FileParts { files }
    }
}

impl Records for FileParts {
    fn each(&mut self, want: Want, f: &mut dyn FnMut(Record) -> Result<()>) -> Result<()> {
        use std::io::Seek;
        for (name, file) in &self.files {
            let mut file: &std::fs::File = file;
            file.seek(std::io::SeekFrom::Start(0))
                .map_err(|source| Error::Io {
                    path: name.into(),
                    source,
                })?;
            read_part(
                &mut std::io::BufReader::new(file),
                name,
                want,
                Some(&mut *f),
            )?;
        }
        Ok(())
    }
}

/// Where rendered text goes: buffered, written out every so often.
struct Sink<'a> {
    out: &'a mut dyn Write,
    buf: String,
}

impl Sink<'_> {
    fn flush_if_big(&mut self) -> Result<()> {
        if self.buf.len() >= 1 << 16 {
            self.flush()?;
        }
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.out
            .write_all(self.buf.as_bytes())
            .map_err(|source| Error::Write {
                path: "<standard output>".into(),
                source,
            })?;
        self.buf.clear();
        Ok(())
    }
}

/// Renders the report `head` and `records` make in `format` to `out`
/// (standard output), in passes over the records: byte for byte what
/// [`Report::render`] gives with every row in memory.
pub fn render(
    head: &PartHead,
    records: &mut dyn Records,
    format: Format,
    out: &mut dyn Write,
) -> Result<()> {
    let mut sink = Sink {
        out,
        buf: String::new(),
    };
    let report = Report {
        command: head.command.clone(),
        seed: head.seed,
        meta: head.meta.clone(),
        warnings: head.warnings.clone(),
        sections: Vec::new(),
    };
    match format {
        Format::Table | Format::Wide => {
            let limit = (format == Format::Table).then_some(crate::report::TABLE_WIDTH);
            let mut stats: Vec<ColumnStats> = head
                .sections
                .iter()
                .map(|(_, f)| ColumnStats::new(f.len()))
                .collect();
            records.each(Want::All, &mut |r| {
                if let Record::Row(s, cells) = r {
                    let texts: Vec<String> = cells.iter().map(Cell::text).collect();
                    stats[s].add(&cells, &texts);
                }
                Ok(())
            })?;
            report.table_head(&mut sink.buf, limit);
            records.each(Want::Warnings, &mut |r| {
                if let Record::Warning(w) = r {
                    let l = format!("warning: {}", escape_control(&w));
                    crate::report::table_header_line(&mut sink.buf, &l, limit);
                    sink.flush_if_big()?;
                }
                Ok(())
            })?;
            for (k, (name, fields)) in head.sections.iter().enumerate() {
                sink.buf.push_str(&format!("\n## {name}\n"));
                let layout = Layout::new(fields, &stats[k], limit);
                layout.head(&mut sink.buf);
                records.each(Want::Rows(k), &mut |r| {
                    if let Record::Row(s, cells) = r {
                        if s == k {
                            let texts: Vec<String> = cells.iter().map(Cell::text).collect();
                            layout.row(&mut sink.buf, &texts);
                            sink.flush_if_big()?;
                        }
                    }
                    Ok(())
                })?;
            }
        }
        Format::Csv => {
            for l in report.header_lines() {
                sink.buf.push_str(&format!("# {l}\n"));
            }
            records.each(Want::Warnings, &mut |r| {
                if let Record::Warning(w) = r {
                    sink.buf
                        .push_str(&format!("# warning: {}\n", escape_control(&w)));
                    sink.flush_if_big()?;
                }
                Ok(())
            })?;
            for (k, (name, fields)) in head.sections.iter().enumerate() {
                sink.buf.push_str(&format!("# section: {name}\n"));
                let names: Vec<String> = fields.iter().map(|f| csv_quote(f)).collect();
                sink.buf.push_str(&names.join(","));
                sink.buf.push('\n');
                records.each(Want::Rows(k), &mut |r| {
                    if let Record::Row(s, cells) = r {
                        if s == k {
                            let t: Vec<String> =
                                cells.iter().map(|c| csv_quote(&csv_text(c))).collect();
                            sink.buf.push_str(&t.join(","));
                            sink.buf.push('\n');
                            sink.flush_if_big()?;
                        }
                    }
                    Ok(())
                })?;
            }
        }
        Format::Json => json_into(head, records, &mut sink)?,
    }
    sink.flush()
}

/// What goes under one key of the JSON object.
enum Slot {
    Value(Value),
    Warnings(Vec<String>),
    Section(usize),
}

/// The JSON form: the keys sorted as `serde_json`'s map sorts them, each
/// value as its pretty printer writes it, the sections' rows streamed.
fn json_into(head: &PartHead, records: &mut dyn Records, sink: &mut Sink<'_>) -> Result<()> {
    let mut root: BTreeMap<String, Slot> = BTreeMap::new();
    root.insert("schema_version".into(), Slot::Value(json!(1)));
    root.insert("tool".into(), Slot::Value(json!("iosim")));
    root.insert(
        "version".into(),
        Slot::Value(json!(env!("CARGO_PKG_VERSION"))),
    );
    root.insert("command".into(), Slot::Value(json!(head.command)));
    root.insert("seed".into(), Slot::Value(json!(head.seed)));
    root.insert("units".into(), Slot::Value(json!(crate::report::UNITS)));
    for (k, v) in &head.meta {
        root.insert(k.clone(), Slot::Value(json!(v)));
    }
    if let Some(w) = &head.warnings {
        root.insert("warnings".into(), Slot::Warnings(w.clone()));
    }
    for (i, (name, _)) in head.sections.iter().enumerate() {
        root.insert(name.clone(), Slot::Section(i));
    }
    let pretty = |v: &Value, indent: &str| {
        serde_json::to_string_pretty(v)
            .unwrap_or_else(|_| "null".into())
            .replace('\n', &format!("\n{indent}"))
    };
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    sink.buf.push('{');
    for (n, (key, slot)) in root.iter().enumerate() {
        sink.buf.push_str(if n == 0 { "\n  " } else { ",\n  " });
        sink.buf.push_str(&quoted(key));
        sink.buf.push_str(": ");
        // An array of items streamed from the records.
        let mut first = true;
        let mut item = |buf: &mut String, text: &str| {
            buf.push_str(if first { "[\n    " } else { ",\n    " });
            first = false;
            buf.push_str(text);
        };
        match slot {
            Slot::Value(v) => sink.buf.push_str(&pretty(v, "  ")),
            Slot::Warnings(known) => {
                for w in known {
                    item(&mut sink.buf, &quoted(w));
                }
                records.each(Want::Warnings, &mut |r| {
                    if let Record::Warning(w) = r {
                        item(&mut sink.buf, &quoted(&w));
                        sink.flush_if_big()?;
                    }
                    Ok(())
                })?;
            }
            Slot::Section(k) => {
                let fields = &head.sections[*k].1;
                records.each(Want::Rows(*k), &mut |r| {
                    if let Record::Row(s, cells) = r {
                        if s == *k {
                            let mut m = serde_json::Map::new();
                            for (f, c) in fields.iter().zip(&cells) {
                                m.insert(f.clone(), c.json());
                            }
                            item(&mut sink.buf, &pretty(&Value::Object(m), "    "));
                            sink.flush_if_big()?;
                        }
                    }
                    Ok(())
                })?;
            }
        }
        if !matches!(slot, Slot::Value(_)) {
            sink.buf.push_str(if first { "[]" } else { "\n  ]" });
        }
    }
    sink.buf
        .push_str(if root.is_empty() { "}\n" } else { "\n}\n" });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records held in memory, for the tests.
    struct Held(Vec<Record>);

    impl Records for Held {
        fn each(&mut self, _: Want, f: &mut dyn FnMut(Record) -> Result<()>) -> Result<()> {
            for r in &self.0 {
                f(r.clone())?;
            }
            Ok(())
        }
    }

    fn sample() -> (PartHead, Vec<Record>, Report) {
        let rows_a = vec![
            vec![
                Cell::Text("a, \"quoted\" =x".into()),
                Cell::Num(1.23456789, 3),
                Cell::Blank,
            ],
            vec![
                Cell::Text("b".repeat(170)),
                Cell::Num(f64::NAN, 2),
                Cell::Int(7),
            ],
        ];
        let rows_b = vec![vec![Cell::Text("esc \u{1b}".into())]];
        let head = PartHead {
            command: "sweep x.toml".into(),
            seed: 9,
            meta: vec![("scenario".into(), "s".into())],
            warnings: Some(vec!["first".into()]),
            sections: vec![
                (
                    "sweep".into(),
                    vec!["name".into(), "mean_value".into(), "n".into()],
                ),
                ("bottlenecks".into(), vec!["text".into()]),
            ],
            identity: "x".into(),
            part: 1,
            parts: 1,
        };
        let records = vec![
            Record::Row(0, rows_a[0].clone()),
            Record::Row(1, rows_b[0].clone()),
            Record::Warning("later".into()),
            Record::Row(0, rows_a[1].clone()),
        ];
        let report = Report {
            command: head.command.clone(),
            seed: 9,
            meta: head.meta.clone(),
            warnings: Some(vec!["first".into(), "later".into()]),
            sections: vec![
                crate::report::Section {
                    name: "sweep".into(),
                    fields: head.sections[0].1.clone(),
                    rows: rows_a,
                },
                crate::report::Section {
                    name: "bottlenecks".into(),
                    fields: head.sections[1].1.clone(),
                    rows: rows_b,
                },
            ],
        };
        (head, records, report)
    }

    #[test]
    fn streamed_output_is_the_held_reports_in_every_format() {
        let (head, records, report) = sample();
        for f in [Format::Table, Format::Wide, Format::Csv, Format::Json] {
            let mut out = Vec::new();
            render(&head, &mut Held(records.clone()), f, &mut out).expect("renders");
            assert_eq!(
                String::from_utf8(out).expect("utf-8"),
                report.render(f),
                "{f:?}"
            );
        }
    }

    #[test]
    fn a_result_reads_back_to_the_bit() {
        let r = ExperimentResult {
            id: "a@slot-1".into(),
            functions: vec![FunctionResult {
                label: "a.port0".into(),
                link: "fc-4g".into(),
                out: BytesPerSec(1.0 / 3.0),
                inn: BytesPerSec(f64::NAN),
                ceiling: BytesPerSec(f64::INFINITY),
                cpu_util: 0.1,
                app_cpu_util: 0.0,
                card_cpu_util: -0.0,
                register_read: Picos(u64::MAX),
                tx_underruns_per_s: 5.0,
                wire_out_util: 0.2,
                wire_in_util: 0.3,
            }],
            buses: vec![BusResult {
                label: "a@slot-1".into(),
                mode: "pcix133".into(),
                peak: BytesPerSec(1.066e9),
                util: 0.5,
                data: BytesPerSec(2.0),
                retries_per_s: 3.0,
                rope_util: 0.4,
                rope_up: BytesPerSec(4.0),
                rope_down: BytesPerSec(5.0),
                rope_capacity: BytesPerSec(6.0),
                controller: Some(("sba0".into(), 0.25)),
            }],
            bottleneck: "bus a@slot-1 (pcix133) 50%".into(),
            cpus: 8,
            cpu_list: vec![CpuResult {
                cpu: 3,
                util: 0.7,
                work: "interrupts of a.port0".into(),
            }],
            memory_util: None,
            cpu_util: 0.09,
            service_demand_us_per_kb: f64::INFINITY,
            events: 12_345,
            measured: Picos(7),
            ci95_pct: 0.8,
            start_drift: Some(StartDrift {
                bias_pct: -1.0 / 3.0,
                ci95_pct: 0.2,
                first_ms: 4.0,
            }),
            remeasured_from: Some(Picos(u64::MAX - 1)),
            totals: Totals {
                bus_write_bytes: 1,
                rope_write_bytes: 2,
                posted_in_bridges: 3,
                read_bytes_delivered: 4,
            },
        };
        let text = result_json(&r).to_string();
        let back = serde_json::from_str(&text)
            .ok()
            .and_then(|v| result_from_json(&v))
            .expect("reads back");
        // NaN is not equal to itself: compare the text, and the bits.
        assert_eq!(format!("{back:?}"), format!("{r:?}"));
        assert_eq!(
            back.functions[0].card_cpu_util.to_bits(),
            (-0.0f64).to_bits()
        );
        let mut v: Value = serde_json::from_str(&text).expect("JSON");
        v["buses"][0][10] = json!("sba0");
        assert!(result_from_json(&v).is_none());
        let mut v: Value = serde_json::from_str(&text).expect("JSON");
        v["start_drift"] = Value::Null;
        let none = result_from_json(&v).expect("reads back");
        assert_eq!(none.start_drift, None);
        v["start_drift"] = json!([1, 2]);
        assert!(result_from_json(&v).is_none());
        let mut v: Value = serde_json::from_str(&text).expect("JSON");
        v["remeasured_from"] = Value::Null;
        assert_eq!(
            result_from_json(&v).expect("reads back").remeasured_from,
            None
        );
    }

    #[test]
    fn a_part_reads_back_as_written_and_a_cut_one_is_refused() {
        let (head, records, _) = sample();
        let mut w = PartWriter::new(Vec::new(), &head).expect("writes");
        for r in &records {
            match r {
                Record::Row(s, c) => w.row(*s, c).expect("writes"),
                Record::Warning(t) => w.warning(t).expect("writes"),
            }
        }
        let bytes = w.finish().expect("writes");
        let mut back = Vec::new();
        let h = read_part(
            &mut &bytes[..],
            "p",
            Want::All,
            Some(&mut |r| {
                back.push(r);
                Ok(())
            }),
        )
        .expect("reads");
        assert_eq!(h, head);
        // NaN is not equal to itself: compare the text.
        assert_eq!(format!("{back:?}"), format!("{records:?}"));
        let cut = &bytes[..bytes.len() - 10];
        let err = read_part(&mut &cut[..], "p", Want::All, Some(&mut |_| Ok(()))).unwrap_err();
        assert!(
            err.to_string().contains("malformed") || err.to_string().contains("cut short"),
            "{err}"
        );
        let cut = &bytes[..bytes.iter().rposition(|b| *b == b'{').unwrap_or(0)];
        let err = read_part(&mut &cut[..], "p", Want::All, Some(&mut |_| Ok(()))).unwrap_err();
        assert!(err.to_string().contains("cut short"), "{err}");
    }
}
