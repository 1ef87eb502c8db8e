//! The HTML reports of `iosim report`, `sweep --html` and `place --html`:
//! each one self-contained file, its charts
//! inline SVG, its style inline, no script and no reference to any other file
//! or address. Every string is escaped ([`escape`]): most come from input
//! files (model and scenario names, sources, notes). Pure: returns the text;
//! [`crate::report`] writes it.

use std::fmt::Write as _;

use crate::report::{Cell, Rendered, Report, Section};

/// `s` safe as HTML text and as a quoted attribute value: `&`, `<`, `>`,
/// `"` and `'` as character references, and control characters (but tab
/// and newline) as `\x..` escapes, so nothing from an input file can open
/// an element, close an attribute or hide text.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// One part of the report, in order.
#[derive(Debug, Clone)]
pub enum Block {
    /// A section heading (`h2`), also listed in the contents.
    Heading(String),
    /// A paragraph of text.
    Text(String),
    /// A table.
    Table(Section),
    /// A chart, inline SVG with its title as caption.
    Chart(Rendered),
    /// Preformatted text (a file as written).
    Pre(String),
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1300px;color:#222;line-height:1.4}\
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;font-size:.82em;margin:.5em 0 1.5em}\
th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f3f5f7}\
figure{margin:1em 0 2em}figure svg{max-width:100%;height:auto;border:1px solid #eee}\
figcaption{font-size:.9em;color:#555}pre{background:#f7f7f7;padding:.8em;overflow-x:auto;font-size:.8em}\
dl{display:grid;grid-template-columns:max-content auto;gap:2px 1em}dt{font-weight:bold}";

/// The whole report: `title`, the facts (key, value) as a list, a table of
/// contents of the headings, then the blocks.
pub fn report_html(title: &str, facts: &[(String, String)], blocks: &[Block]) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(h, "<title>{}</title>", escape(title));
    let _ = writeln!(h, "<style>{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(h, "<h1>{}</h1>\n<dl>", escape(title));
    for (k, v) in facts {
        let _ = writeln!(h, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
    }
    h.push_str("</dl>\n<h2>Contents</h2>\n<ol>\n");
    let mut n = 0;
    for b in blocks {
        if let Block::Heading(t) = b {
            n += 1;
            let _ = writeln!(h, "<li><a href=\"#s{n}\">{}</a></li>", escape(t));
        }
    }
    h.push_str("</ol>\n");
    let mut n = 0;
    for b in blocks {
        match b {
            Block::Heading(t) => {
                n += 1;
                let _ = writeln!(h, "<h2 id=\"s{n}\">{}</h2>", escape(t));
            }
            Block::Text(t) => {
                let _ = writeln!(h, "<p>{}</p>", escape(t));
            }
            Block::Pre(t) => {
                let _ = writeln!(h, "<pre>{}</pre>", escape(t));
            }
            Block::Table(s) => table(&mut h, s),
            Block::Chart(c) => {
                let _ = writeln!(
                    h,
                    "<figure id=\"chart-{}\">\n{}<figcaption>{} ({}.svg, {}.png)</figcaption>\n</figure>",
                    escape(&c.stem),
                    inline_svg(&c.svg),
                    escape(&c.title),
                    escape(&c.stem),
                    escape(&c.stem)
                );
            }
        }
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// The HTML report of a command's [`Report`] (`sweep --html`, `place
/// --html`): its header facts as the page's facts, its warnings, the
/// `paragraphs` (heading, text) given, the `charts`, then every section of
/// `rep` as a table under its name, in `rep`'s order, so the page holds
/// what the table output holds.
pub fn command_html(rep: &Report, paragraphs: &[(String, String)], charts: &[Rendered]) -> String {
    let mut facts = vec![
        (
            "tool".to_string(),
            format!("iosim {}", env!("CARGO_PKG_VERSION")),
        ),
        ("command".into(), rep.command.clone()),
        ("seed".into(), rep.seed.to_string()),
        ("units".into(), crate::report::UNITS.to_string()),
    ];
    facts.extend(rep.meta.iter().cloned());
    let mut b = warning_blocks(rep.warnings.as_deref().unwrap_or_default());
    for (heading, text) in paragraphs {
        b.push(Block::Heading(heading.clone()));
        b.push(Block::Text(text.clone()));
    }
    if !charts.is_empty() {
        b.push(Block::Heading("Charts".into()));
        b.extend(charts.iter().cloned().map(Block::Chart));
    }
    for s in &rep.sections {
        b.push(Block::Heading(s.name.clone()));
        b.push(Block::Table(s.clone()));
    }
    report_html(&format!("iosim {}", rep.command), &facts, &b)
}

/// The warnings section of a report: a heading and one paragraph per
/// warning, or one saying there is none.
pub fn warning_blocks(warnings: &[String]) -> Vec<Block> {
    let mut b = vec![Block::Heading("Warnings".into())];
    if warnings.is_empty() {
        b.push(Block::Text(
            "None: every run reached its precision, and every test bed has what its workloads need as far as the model can tell."
                .into(),
        ));
    }
    b.extend(
        warnings
            .iter()
            .map(|w| Block::Text(format!("Warning: {w}"))),
    );
    b
}

fn table(h: &mut String, s: &Section) {
    h.push_str("<table>\n<tr>");
    for f in &s.fields {
        let _ = write!(h, "<th>{}</th>", escape(f));
    }
    h.push_str("</tr>\n");
    for r in &s.rows {
        h.push_str("<tr>");
        for c in r {
            match c {
                Cell::Text(t) => {
                    let _ = write!(h, "<td>{}</td>", escape(t));
                }
                Cell::Num(v, d) if v.is_finite() => {
                    let _ = write!(h, "<td class=\"n\">{v:.d$}</td>");
                }
                Cell::Num(..) => h.push_str("<td class=\"n\">NaN</td>"),
                Cell::Blank => h.push_str("<td class=\"n\"></td>"),
                Cell::Int(i) => {
                    let _ = write!(h, "<td class=\"n\">{i}</td>");
                }
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
}

/// A chart's SVG for inlining in HTML: the XML namespace attribute (an
/// address, which HTML does not need) and any XML declaration dropped. The
/// text inside was escaped by the SVG backend.
fn inline_svg(svg: &str) -> String {
    let body = match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    };
    body.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_quotes_and_controls() {
        assert_eq!(escape("plain text"), "plain text");
        assert_eq!(escape("<script>&\"'"), "&lt;script&gt;&amp;&quot;&#39;");
        assert_eq!(escape("a\x1bb\r"), "a\\x1bb\\x0d");
        assert_eq!(escape("tab\tline\n"), "tab\tline\n");
        assert_eq!(escape("&amp;"), "&amp;amp;");
    }

    #[test]
    fn the_report_escapes_every_block_and_refers_to_nothing() {
        let mut s = Section::new("t<", &["f\"", "n"]);
        s.rows
            .push(vec![Cell::Text("<b>x</b>".into()), Cell::Num(1.25, 1)]);
        let chart = Rendered {
            stem: "a<b".into(),
            title: "t&".into(),
            svg: "<svg width=\"1\" height=\"1\" xmlns=\"http://www.w3.org/2000/svg\"></svg>".into(),
            png: Vec::new(),
        };
        let h = report_html(
            "r<",
            &[("k&".into(), "v\"".into())],
            &[
                Block::Heading("h<".into()),
                Block::Text("p<".into()),
                Block::Pre("</pre><script>".into()),
                Block::Table(s),
                Block::Chart(chart),
            ],
        );
        for bad in [
            "<b>",
            "r<",
            "h<",
            "p<",
            "</pre><script>",
            "f\"",
            "http:",
            "a<b",
            "t&<",
        ] {
            assert!(!h.contains(bad), "{bad} in {h}");
        }
        assert!(h.contains("&lt;b&gt;x&lt;/b&gt;") && h.contains("<svg width=\"1\""));
        assert!(h.contains("<td class=\"n\">1.2</td>") || h.contains("<td class=\"n\">1.3</td>"));
    }
}
