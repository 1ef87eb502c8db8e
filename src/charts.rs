//! Charts drawn with `plotters`: each paper figure or table redrawn as grouped
//! bars (paper beside model), the calibration residuals, the cross-validation
//! and the lines of a sweep. Every chart is a plain description (the types
//! here, built from data, never from a paper's name) rendered to SVG text and
//! PNG bytes by [`render`]. Text is drawn with ab_glyph from the DejaVu Sans
//! font compiled into the binary (`assets/fonts`), never a system font, so
//! the same chart gives the same bytes on every machine. Pure: nothing here
//! writes a file ([`crate::report`] does).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::{Error, Result};
use crate::validate::FigureRow;

/// The font every chart is drawn with (DejaVu Sans 2.37, Bitstream Vera
/// licence: `assets/fonts/DejaVuSans-LICENSE.txt`).
pub const FONT: &[u8] = include_bytes!("../assets/fonts/DejaVuSans.ttf");

/// The family name the font is registered under.
const FAMILY: &str = "sans-serif";

/// Colours: paper (grey), model (blue), and the accents.
const PAPER: RGBColor = RGBColor(0x99, 0xa3, 0xa4);
const MODEL: RGBColor = RGBColor(0x24, 0x71, 0xa3);
const ALERT: RGBColor = RGBColor(0xc0, 0x39, 0x2b);
const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
const BAND: RGBColor = RGBColor(0xee, 0xf2, 0xf7);
const LINES: [RGBColor; 6] = [
    RGBColor(0xc0, 0x39, 0x2b),
    RGBColor(0x24, 0x71, 0xa3),
    RGBColor(0x22, 0x99, 0x54),
    RGBColor(0x7d, 0x3c, 0x98),
    RGBColor(0xd6, 0x89, 0x10),
    RGBColor(0x61, 0x6a, 0x6b),
];

/// Registers [`FONT`] with plotters once; an error if it cannot be parsed.
fn font() -> Result<()> {
    static DONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *DONE
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err(Error::Render {
            chart: "(font)".into(),
            message: "the bundled font cannot be parsed".into(),
        })
    }
}

fn style(size: f64) -> TextStyle<'static> {
    TextStyle::from((FAMILY, size).into_font()).color(&INK)
}

pub use crate::report::Rendered;

/// A chart description.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    /// Grouped bars.
    Bars(BarChart),
    /// One labelled point per figure.
    Residuals(ResidualChart),
    /// Lines with error bars.
    Lines(LineChart),
}

impl Chart {
    fn title(&self) -> &str {
        match self {
            Chart::Bars(c) => &c.title,
            Chart::Residuals(c) => &c.title,
            Chart::Lines(c) => &c.title,
        }
    }
    fn size(&self) -> (u32, u32) {
        match self {
            Chart::Bars(c) => {
                let slots = c.panels.iter().map(slots_of).max().unwrap_or(1);
                (
                    (170 + 64 * slots as u32).clamp(760, 2400),
                    90 + 400 * c.panels.len().max(1) as u32,
                )
            }
            Chart::Residuals(c) => (1000, 150 + 17 * c.points.len().max(1) as u32),
            Chart::Lines(_) => (760, 500),
        }
    }
}

/// Bars: two series side by side per category, one panel per unit.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// Title.
    pub title: String,
    /// The two series' names (e.g. `paper` and `model`).
    pub series: [String; 2],
    /// Panels, drawn one above the other.
    pub panels: Vec<Panel>,
    /// A line of explanation under the chart.
    pub note: String,
}

/// One panel of a [`BarChart`]: a y axis and its categories.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Panel heading.
    pub title: String,
    /// Y axis description (with its unit).
    pub y_label: String,
    /// Categories, in drawing order.
    pub categories: Vec<Category>,
}

/// One category of a [`Panel`]: two bars.
#[derive(Debug, Clone, PartialEq)]
pub struct Category {
    /// The cluster it is drawn in (categories of one cluster stand together,
    /// its name under them); empty: none.
    pub cluster: String,
    /// The label under its bars.
    pub label: String,
    /// The two series' values.
    pub values: [f64; 2],
    /// A whisker on the second bar (low, high).
    pub whisker: Option<(f64, f64)>,
    /// Text written on the second bar (e.g. its error).
    pub annotation: String,
}

/// Residuals: one labelled point per figure, grouped.
#[derive(Debug, Clone, PartialEq)]
pub struct ResidualChart {
    /// Title.
    pub title: String,
    /// X axis description.
    pub x_label: String,
    /// Points, top to bottom.
    pub points: Vec<Residual>,
    /// How many of the largest |value| to name beside their points.
    pub worst: usize,
}

/// One point of a [`ResidualChart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Residual {
    /// Group (e.g. the paper figure): consecutive points of one group share a band.
    pub group: String,
    /// The point's label.
    pub label: String,
    /// The value (e.g. error in percent).
    pub value: f64,
}

/// Lines against one x axis, with error bars.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// Title.
    pub title: String,
    /// X axis description.
    pub x_label: String,
    /// Y axis description.
    pub y_label: String,
    /// The lines.
    pub lines: Vec<Line>,
    /// For a categorical x axis (slots, links), the name of each x value
    /// 0, 1, ...: the axis shows these instead of numbers. Empty: numbers.
    pub x_names: Vec<String>,
}

/// One line of a [`LineChart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Legend text.
    pub name: String,
    /// (x, y, y low, y high) in x order.
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// Renders `chart` as SVG and PNG. A drawing that fails is
/// [`Error::Render`], never a blank file.
pub fn render(stem: &str, chart: &Chart) -> Result<Rendered> {
    font()?;
    let (w, h) = chart.size();
    let fail = |message: String| Error::Render {
        chart: stem.to_string(),
        message,
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        draw(&root, chart).map_err(fail)?;
        root.present().map_err(|e| fail(e.to_string()))?;
    }
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw(&root, chart).map_err(fail)?;
        root.present().map_err(|e| fail(e.to_string()))?;
    }
    let png = encode_png(w, h, &rgb).map_err(|e| fail(format!("PNG encoding: {e}")))?;
    Ok(Rendered {
        stem: stem.to_string(),
        title: chart.title().to_string(),
        svg: xml_safe(svg),
        png,
    })
}

/// `svg` with every control character of its text but tab, line feed and
/// carriage return (an ESC from a group name in an input file) written as
/// [`crate::report::escape_control`] writes it, so the SVG stays valid XML,
/// which allows no other C0 character.
fn xml_safe(svg: String) -> String {
    if !svg
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    {
        return svg;
    }
    let mut out = String::with_capacity(svg.len() + 16);
    let mut buf = [0u8; 4];
    for c in svg.chars() {
        if c.is_control() && !matches!(c, '\t' | '\n' | '\r') {
            out.push_str(&crate::report::escape_control(c.encode_utf8(&mut buf)));
        } else {
            out.push(c);
        }
    }
    out
}

/// RGB pixels to PNG bytes (fixed settings, so the bytes depend only on the pixels).
fn encode_png(w: u32, h: u32, rgb: &[u8]) -> std::result::Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Default);
        let mut writer = enc.write_header()?;
        writer.write_image_data(rgb)?;
        writer.finish()?;
    }
    Ok(out)
}

type Drawn = std::result::Result<(), String>;

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &Chart) -> Drawn {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let body = root
        .titled(chart.title(), style(19.0))
        .map_err(|e| e.to_string())?;
    match chart {
        Chart::Bars(c) => draw_bars(root, &body, c),
        Chart::Residuals(c) => draw_residuals(root, &body, c),
        Chart::Lines(c) => draw_lines(&body, c),
    }
}

/// Slots a panel takes on its x axis: one per category, one more between clusters.
fn slots_of(p: &Panel) -> usize {
    layout(p).1
}

/// Each category's slot, and the slot count: a gap of half a slot between clusters.
fn layout(p: &Panel) -> (Vec<f64>, usize) {
    let mut at = Vec::new();
    let mut x = 0.0;
    for (i, c) in p.categories.iter().enumerate() {
        if i > 0 && c.cluster != p.categories[i - 1].cluster {
            x += 0.5;
        }
        at.push(x);
        x += 1.0;
    }
    (at, x.ceil() as usize)
}

/// `label` as one line, or as two split at the space nearest its middle when
/// it is wider than `width` pixels at `size` (a label without a space stays
/// one line).
fn wrap_label<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    label: &str,
    size: f64,
    width: u32,
) -> Vec<String> {
    let fits = area
        .estimate_text_size(label, &style(size))
        .map_or(true, |(w, _)| w + 4 <= width);
    let middle = label.len() / 2;
    let split = label
        .match_indices(' ')
        .map(|(i, _)| i)
        .min_by_key(|i| i.abs_diff(middle));
    match split {
        Some(i) if !fits => vec![label[..i].to_string(), label[i + 1..].to_string()],
        _ => vec![label.to_string()],
    }
}

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    c: &BarChart,
) -> Drawn {
    let (_, h) = body.dim_in_pixel();
    let (main, foot) = body.split_vertically(h.saturating_sub(26));
    foot.draw(&Text::new(
        c.note.clone(),
        (foot.dim_in_pixel().0 as i32 / 2, 4),
        style(12.0).pos(Pos::new(HPos::Center, VPos::Top)),
    ))
    .map_err(err)?;
    let panels = main.split_evenly((c.panels.len().max(1), 1));
    for (p, area) in c.panels.iter().zip(&panels) {
        draw_panel(root, area, c, p)?;
    }
    Ok(())
}

fn draw_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    c: &BarChart,
    p: &Panel,
) -> Drawn {
    let (at, slots) = layout(p);
    let top = p
        .categories
        .iter()
        .flat_map(|k| {
            [
                k.values[0],
                k.values[1],
                k.whisker.map(|w| w.1).unwrap_or(0.0),
            ]
        })
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let top = if top > 0.0 { top * 1.22 } else { 1.0 };
    let has_clusters = p.categories.iter().any(|k| !k.cluster.is_empty());
    // Each category's label, on two lines when it is wider than its slot
    // (the slot's width estimated from the area, before the chart is built).
    let (margin_left, margin_right, y_label_area) = (10, 20, 74);
    let slot_guess = area
        .dim_in_pixel()
        .0
        .saturating_sub(margin_left + margin_right + y_label_area)
        / slots.max(1) as u32;
    let label_size = if slot_guess >= 48 { 11.0 } else { 9.0 };
    let line_height = label_size as i32 + 3;
    let labels: Vec<Vec<String>> = p
        .categories
        .iter()
        .map(|k| wrap_label(area, &k.label, label_size, slot_guess))
        .collect();
    // The height a second line of labels adds below the axis.
    let second_line = if labels.iter().any(|l| l.len() > 1) {
        line_height
    } else {
        0
    };
    let mut chart = ChartBuilder::on(area)
        .margin_left(margin_left)
        .margin_right(margin_right)
        .margin_top(6)
        .caption(&p.title, style(15.0))
        .x_label_area_size(if has_clusters { 46 } else { 26 } + second_line)
        .y_label_area_size(y_label_area)
        .build_cartesian_2d(0f64..(slots.max(1) as f64), 0f64..top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(6)
        .y_label_formatter(&|v| crate::units::readable((v * 100.0).round() / 100.0))
        .y_desc(p.y_label.clone())
        .axis_desc_style(style(13.0))
        .label_style(style(12.0))
        .max_light_lines(1)
        .light_line_style(RGBColor(0xf2, 0xf2, 0xf2))
        .draw()
        .map_err(err)?;
    let slot_px = {
        let (a, _) = chart.backend_coord(&(0.0, 0.0));
        let (b, _) = chart.backend_coord(&(1.0, 0.0));
        (b - a).max(1)
    };
    let clean = |v: f64| if v.is_finite() { v.max(0.0) } else { 0.0 };
    for (s, colour) in [(0usize, PAPER), (1, MODEL)] {
        let bars = p.categories.iter().zip(&at).map(move |(k, &x)| {
            let x0 = x + 0.08 + 0.42 * s as f64;
            Rectangle::new(
                [(x0, 0.0), (x0 + 0.42, clean(k.values[s]))],
                colour.filled(),
            )
        });
        chart
            .draw_series(bars)
            .map_err(err)?
            .label(c.series[s].clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled()));
    }
    for ((k, &x), label) in p.categories.iter().zip(&at).zip(&labels) {
        let mx = x + 0.71;
        if let Some((lo, hi)) = k.whisker {
            if lo.is_finite() && hi.is_finite() {
                let (lo, hi) = (clean(lo), clean(hi));
                for seg in [
                    vec![(mx, lo), (mx, hi)],
                    vec![(mx - 0.08, lo), (mx + 0.08, lo)],
                    vec![(mx - 0.08, hi), (mx + 0.08, hi)],
                ] {
                    chart
                        .draw_series(std::iter::once(PathElement::new(seg, INK.stroke_width(1))))
                        .map_err(err)?;
                }
            }
        }
        // Text is drawn on the whole image at the pixel the chart maps a
        // point to, so nothing is clipped by the plotting area.
        let bar_top = clean(k.values[1]).max(k.whisker.map(|w| clean(w.1)).unwrap_or(0.0));
        let (px, py) = chart.backend_coord(&(mx, bar_top));
        if !k.annotation.is_empty() {
            let size = if slot_px >= 56 { 11.0 } else { 9.0 };
            let st = style(size).color(&ALERT);
            if slot_px >= 40 {
                root.draw(&Text::new(
                    k.annotation.clone(),
                    (px, py - 3),
                    st.pos(Pos::new(HPos::Center, VPos::Bottom)),
                ))
                .map_err(err)?;
            } else {
                root.draw(&Text::new(
                    k.annotation.clone(),
                    (px, py - 3),
                    st.transform(FontTransform::Rotate270)
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .map_err(err)?;
            }
        }
        let (lx, ly) = chart.backend_coord(&(x + 0.5, 0.0));
        for (i, line) in label.iter().enumerate() {
            root.draw(&Text::new(
                line.clone(),
                (lx, ly + 5 + i as i32 * line_height),
                style(label_size).pos(Pos::new(HPos::Center, VPos::Top)),
            ))
            .map_err(err)?;
        }
    }
    // Cluster names, centred under their categories.
    let mut i = 0;
    while i < p.categories.len() {
        let name = &p.categories[i].cluster;
        let mut j = i;
        while j + 1 < p.categories.len() && &p.categories[j + 1].cluster == name {
            j += 1;
        }
        if !name.is_empty() {
            let mid = (at[i] + at[j] + 1.0) / 2.0;
            let (cx, cy) = chart.backend_coord(&(mid, 0.0));
            let (x0, _) = chart.backend_coord(&(at[i] + 0.05, 0.0));
            let (x1, _) = chart.backend_coord(&(at[j] + 0.95, 0.0));
            let cy = cy + second_line;
            root.draw(&PathElement::new(
                vec![(x0, cy + 21), (x1, cy + 21)],
                RGBColor(0x88, 0x88, 0x88).stroke_width(1),
            ))
            .map_err(err)?;
            root.draw(&Text::new(
                name.clone(),
                (cx, cy + 25),
                style(12.0).pos(Pos::new(HPos::Center, VPos::Top)),
            ))
            .map_err(err)?;
        }
        i = j + 1;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font(style(12.0))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(0xbb, 0xbb, 0xbb))
        .draw()
        .map_err(err)?;
    Ok(())
}

fn draw_residuals<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    c: &ResidualChart,
) -> Drawn {
    let n = c.points.len().max(1);
    let vals = c.points.iter().map(|p| p.value).filter(|v| v.is_finite());
    let lo = vals.clone().fold(-10.0f64, f64::min);
    let hi = vals.fold(10.0f64, f64::max);
    let span = hi - lo;
    let (lo, hi) = (lo - span * 0.05, hi + span * 0.45);
    let worst = worst_indices(&c.points, c.worst);
    let (_, h) = body.dim_in_pixel();
    let (main, foot) = body.split_vertically(h.saturating_sub(24));
    let names: Vec<String> = worst
        .iter()
        .map(|&i| format!("{} ({:+.1}%)", c.points[i].label, c.points[i].value))
        .collect();
    foot.draw(&Text::new(
        format!("worst: {}", names.join(", ")),
        (foot.dim_in_pixel().0 as i32 / 2, 2),
        style(12.0)
            .color(&ALERT)
            .pos(Pos::new(HPos::Center, VPos::Top)),
    ))
    .map_err(err)?;
    let mut chart = ChartBuilder::on(&main)
        .margin_left(10)
        .margin_right(20)
        .margin_top(24)
        .x_label_area_size(40)
        .y_label_area_size(250)
        .build_cartesian_2d(lo..hi, -0.5f64..(n as f64 - 0.5))
        .map_err(err)?;
    // Groups: alternate bands, the group's name at its top right.
    let mut i = 0;
    let mut band = 0;
    while i < c.points.len() {
        let mut j = i;
        while j + 1 < c.points.len() && c.points[j + 1].group == c.points[i].group {
            j += 1;
        }
        let (y0, y1) = (row_y(n, j) - 0.5, row_y(n, i) + 0.5);
        if band % 2 == 0 {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(lo, y0), (hi, y1)],
                    BAND.filled(),
                )))
                .map_err(err)?;
        }
        let (gx, gy) = chart.backend_coord(&(hi, y1));
        root.draw(&Text::new(
            c.points[i].group.clone(),
            (gx - 6, gy + 3),
            style(12.0).pos(Pos::new(HPos::Right, VPos::Top)),
        ))
        .map_err(err)?;
        band += 1;
        i = j + 1;
    }
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(10)
        .x_desc(c.x_label.clone())
        .x_label_formatter(&|v| format!("{v:.0}%"))
        .axis_desc_style(style(13.0))
        .label_style(style(12.0))
        .max_light_lines(1)
        .light_line_style(RGBColor(0xf2, 0xf2, 0xf2))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(0.0, -0.5), (0.0, n as f64 - 0.5)],
            INK.stroke_width(1),
        )))
        .map_err(err)?;
    for (k, p) in c.points.iter().enumerate() {
        let y = row_y(n, k);
        let v = if p.value.is_finite() { p.value } else { 0.0 };
        let bad = worst.contains(&k);
        let colour = if bad { ALERT } else { MODEL };
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, y), (v, y)],
                colour.mix(0.5).stroke_width(1),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Circle::new((v, y), 4, colour.filled())))
            .map_err(err)?;
        let (lx, ly) = chart.backend_coord(&(lo, y));
        root.draw(&Text::new(
            p.label.clone(),
            (lx - 6, ly),
            style(11.0)
                .color(if bad { &ALERT } else { &INK })
                .pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(err)?;
        if bad {
            let (px, py) = chart.backend_coord(&(v, y));
            // Named to the right of the point, or of the zero line for a
            // point left of it, so the name never runs into the labels.
            let (zx, _) = chart.backend_coord(&(0.0, y));
            root.draw(&Text::new(
                format!("{} {:+.1}%", p.label, p.value),
                (px.max(zx) + 8, py),
                style(11.0)
                    .color(&ALERT)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(err)?;
        }
    }
    Ok(())
}

/// Row k's y: the first point on top.
fn row_y(n: usize, k: usize) -> f64 {
    (n - 1 - k) as f64
}

/// The indices of the `k` largest |value|, largest first (ties: first first).
pub fn worst_indices(points: &[Residual], k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..points.len()).collect();
    let mag = |i: usize| {
        let v = points[i].value.abs();
        if v.is_finite() {
            v
        } else {
            f64::INFINITY
        }
    };
    idx.sort_by(|&a, &b| mag(b).total_cmp(&mag(a)).then(a.cmp(&b)));
    idx.truncate(k);
    idx
}

fn draw_lines<DB: DrawingBackend>(body: &DrawingArea<DB, Shift>, c: &LineChart) -> Drawn {
    let fin = |v: f64| if v.is_finite() { v } else { 0.0 };
    let all = c.lines.iter().flat_map(|l| l.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64, 0.0f64);
    for &(x, y, lo, hi) in all {
        x0 = x0.min(fin(x));
        x1 = x1.max(fin(x));
        y1 = y1.max(fin(hi)).max(fin(y));
        y0 = y0.min(fin(lo)).min(fin(y));
    }
    if !x0.is_finite() || !x1.is_finite() || x1 <= x0 {
        x0 = if x0.is_finite() { x0 - 0.5 } else { 0.0 };
        x1 = x0 + 1.0;
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    let pad = (x1 - x0) * 0.04;
    let mut chart = ChartBuilder::on(body)
        .margin_left(10)
        .margin_right(24)
        .margin_top(10)
        .x_label_area_size(46)
        .y_label_area_size(78)
        .build_cartesian_2d((x0 - pad)..(x1 + pad), y0..(y1 * 1.08))
        .map_err(err)?;
    let names = &c.x_names;
    let x_text = |v: &f64| {
        if names.is_empty() {
            return crate::units::readable(*v);
        }
        let i = v.round();
        if (v - i).abs() < 1e-6 && i >= 0.0 {
            names.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let mut mesh = chart.configure_mesh();
    if !names.is_empty() {
        // One label per name: the ticks fall on the whole x values.
        mesh.x_labels(names.len() * 4 + 1);
    }
    mesh.x_desc(c.x_label.clone())
        .y_desc(c.y_label.clone())
        .x_label_formatter(&x_text)
        .y_label_formatter(&|v| crate::units::readable((v * 100.0).round() / 100.0))
        .axis_desc_style(style(13.0))
        .label_style(style(12.0))
        .max_light_lines(1)
        .light_line_style(RGBColor(0xf2, 0xf2, 0xf2))
        .draw()
        .map_err(err)?;
    for (i, l) in c.lines.iter().enumerate() {
        let colour = LINES[i % LINES.len()];
        let pts: Vec<(f64, f64)> = l.points.iter().map(|p| (fin(p.0), fin(p.1))).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
            .map_err(err)?
            .label(l.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))
            .map_err(err)?;
        for p in &l.points {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(fin(p.0), fin(p.2)), (fin(p.0), fin(p.3))],
                    colour.stroke_width(1),
                )))
                .map_err(err)?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font(style(12.0))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(0xbb, 0xbb, 0xbb))
        .draw()
        .map_err(err)?;
    Ok(())
}

// ---------------------------------------------------------------------------
// Charts from data.

/// The figure or table a figure's source names (see [`crate::validate::figure_of`]).
pub use crate::validate::figure_of;

/// A file-name-safe form of `s`: lower case, runs of anything but ASCII
/// letters and digits as one `-`.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// The short name of a paper for file names: the first dotted part its
/// figure ids share (`hp2g`), or the paper's file stem.
fn paper_short(rows: &[&FigureRow]) -> String {
    let first = |r: &FigureRow| r.id.split('.').next().unwrap_or("").to_string();
    match rows.first() {
        Some(r) if rows.iter().all(|x| first(x) == first(r)) && r.id.contains('.') => {
            slug(&first(r))
        }
        Some(r) => slug(r.paper.trim_end_matches(".txt")),
        None => "paper".into(),
    }
}

/// Each paper (in order of first appearance) with its short name for file
/// names; papers whose ids share a short name are named by their file
/// stems instead, so no two papers' charts share a file.
pub fn paper_shorts(rows: &[FigureRow]) -> Vec<(String, String)> {
    let mut short: Vec<(String, String)> = Vec::new();
    for r in rows {
        if !short.iter().any(|(p, _)| *p == r.paper) {
            let mine: Vec<&FigureRow> = rows.iter().filter(|x| x.paper == r.paper).collect();
            short.push((r.paper.clone(), paper_short(&mine)));
        }
    }
    let taken: Vec<String> = short.iter().map(|(_, s)| s.clone()).collect();
    for (paper, s) in &mut short {
        if taken.iter().filter(|t| *t == s).count() > 1 {
            *s = slug(paper.trim_end_matches(".txt"));
        }
    }
    short
}

/// The figures of one paper figure or table, in file order.
#[derive(Debug, Clone)]
pub struct FigureGroup<'a> {
    /// Paper file name.
    pub paper: String,
    /// Figure or table (`Figure 2`).
    pub figure: String,
    /// File stem: short paper name and figure (`hp2g-figure-2`).
    pub stem: String,
    /// The rows.
    pub rows: Vec<&'a FigureRow>,
}

/// `rows` grouped by paper and figure (in order of first appearance).
pub fn figure_groups(rows: &[FigureRow]) -> Vec<FigureGroup<'_>> {
    let mut groups: Vec<FigureGroup> = Vec::new();
    for r in rows {
        let fig = figure_of(&r.source);
        match groups
            .iter_mut()
            .find(|g| g.paper == r.paper && g.figure == fig)
        {
            Some(g) => g.rows.push(r),
            None => groups.push(FigureGroup {
                paper: r.paper.clone(),
                figure: fig,
                stem: String::new(),
                rows: vec![r],
            }),
        }
    }
    let short = paper_shorts(rows);
    for g in &mut groups {
        let s = short
            .iter()
            .find(|(p, _)| *p == g.paper)
            .map(|(_, s)| s.clone())
            .unwrap_or_default();
        let fig = slug(&g.figure);
        g.stem = if fig.is_empty() {
            s
        } else {
            format!("{s}-{fig}")
        };
    }
    groups
}

/// Labels for ids: the dotted parts every id shares at the start and at the
/// end dropped; the last remaining part is the label, the parts before it
/// the cluster. One id alone keeps its last part.
pub fn id_labels(ids: &[&str]) -> Vec<(String, String)> {
    let parts: Vec<Vec<&str>> = ids.iter().map(|i| i.split('.').collect()).collect();
    let min = parts.iter().map(Vec::len).min().unwrap_or(0);
    let same_from_start = |k: usize| parts.iter().all(|p| p[k] == parts[0][k]);
    let same_from_end = |k: usize| {
        let last = |p: &Vec<&str>| p[p.len() - 1 - k].to_string();
        parts.iter().all(|p| last(p) == last(&parts[0]))
    };
    let mut lead = 0;
    while lead + 1 < min && same_from_start(lead) {
        lead += 1;
    }
    let mut trail = 0;
    while lead + trail + 1 < min && same_from_end(trail) {
        trail += 1;
    }
    parts
        .iter()
        .map(|p| {
            let mid = &p[lead..p.len() - trail];
            match mid.split_last() {
                Some((last, rest)) => (rest.join("."), last.to_string()),
                None => (String::new(), p.last().unwrap_or(&"").to_string()),
            }
        })
        .collect()
}

/// A figure's model interval: its prediction plus or minus `ci95_pct`
/// percent (the widest 95% interval of its experiment's throughputs).
pub type Intervals<'a> = &'a dyn Fn(&FigureRow) -> Option<f64>;

/// The bar chart of one paper figure or table: one panel per unit, the
/// paper's value beside the model's for each figure, the error written on
/// the model's bar, a whisker for the model's 90% prediction interval
/// ([`crate::interval`]; where it has none, the 95% interval `ci` gives). Categories of a cluster stand together (the ids' dotted parts).
pub fn figure_chart(g: &FigureGroup, ci: Intervals, seed: u64) -> BarChart {
    let mut units: Vec<&str> = Vec::new();
    for r in &g.rows {
        if !units.contains(&r.unit.as_str()) {
            units.push(&r.unit);
        }
    }
    let panels = units
        .iter()
        .map(|u| {
            let rows: Vec<&FigureRow> = g.rows.iter().copied().filter(|r| r.unit == *u).collect();
            let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
            let labels = id_labels(&ids);
            // Clusters in order of first appearance, each gathering its figures.
            let mut order: Vec<String> = Vec::new();
            for (c, _) in &labels {
                if !order.contains(c) {
                    order.push(c.clone());
                }
            }
            let mut categories = Vec::new();
            for c in &order {
                for (r, (cl, label)) in rows.iter().zip(&labels) {
                    if cl != c {
                        continue;
                    }
                    let iv = &r.interval;
                    let whisker = if iv.low.is_finite() && iv.high.is_finite() {
                        Some((iv.low, iv.high))
                    } else {
                        ci(r).map(|pct| {
                            let h = r.predicted * pct / 100.0;
                            (r.predicted - h, r.predicted + h)
                        })
                    };
                    categories.push(Category {
                        cluster: cl.clone(),
                        label: label.clone(),
                        values: [r.published, r.predicted],
                        whisker,
                        annotation: format!("{:+.1}%", r.error_pct),
                    });
                }
            }
            let mape =
                rows.iter().map(|r| r.error_pct.abs()).sum::<f64>() / rows.len().max(1) as f64;
            let what = if *u == "%" {
                "CPU utilisation"
            } else if *u == "ms CPU per MB" {
                "service demand"
            } else {
                "throughput"
            };
            Panel {
                title: format!("{what} ({u}), {} figures, MAPE {mape:.1}%", rows.len()),
                y_label: format!("{what} ({u})"),
                categories,
            }
        })
        .collect();
    let paper = g.paper.trim_end_matches(".txt");
    BarChart {
        title: format!("{paper}, {}: paper and model", g.figure),
        series: ["paper".into(), "model".into()],
        panels,
        note: format!(
            "model: iosim, seed {seed}; red: (model - paper) / paper; whisker: the model's 90% prediction interval (parameter and structural parts)"
        ),
    }
}

/// The calibration residuals of one paper: each figure's error, grouped by
/// paper figure, the `worst` largest named.
pub fn residual_chart(paper: &str, rows: &[&FigureRow], worst: usize) -> ResidualChart {
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    let labels = id_labels(&ids);
    let mut order: Vec<String> = Vec::new();
    for r in rows {
        let f = figure_of(&r.source);
        if !order.contains(&f) {
            order.push(f);
        }
    }
    let mut points = Vec::new();
    for f in &order {
        for (r, (cl, l)) in rows.iter().zip(&labels) {
            if figure_of(&r.source) == *f {
                let label = if cl.is_empty() {
                    l.clone()
                } else {
                    format!("{cl}.{l}")
                };
                points.push(Residual {
                    group: f.clone(),
                    label,
                    value: r.error_pct,
                });
            }
        }
    }
    let mape = rows.iter().map(|r| r.error_pct.abs()).sum::<f64>() / rows.len().max(1) as f64;
    ResidualChart {
        title: format!(
            "{}: calibration residuals, {} figures, MAPE {mape:.2}%",
            paper.trim_end_matches(".txt"),
            rows.len()
        ),
        x_label: "(model - paper) / paper, percent".into(),
        points,
        worst,
    }
}

/// One held-out group of a cross-validation: its figures' MAPE in the full
/// fit and when the fit left the group out.
#[derive(Debug, Clone, PartialEq)]
pub struct CvGroup {
    /// Paper.
    pub paper: String,
    /// The group left out.
    pub group: String,
    /// Figures in it.
    pub figures: usize,
    /// MAPE in the full fit.
    pub fitted_mape: f64,
    /// MAPE predicted without the group.
    pub held_out_mape: f64,
    /// The fold's own objective at its fit and at the full fit's values,
    /// from the file's `fold_objectives` section (None where the file has
    /// none, or the fold refit nothing).
    pub objectives: Option<(f64, f64)>,
}

/// Reads the `figures` section of `validate --cross-validate --format json`
/// (each figure's `error_pct` held out, `fitted_error_pct`,
/// `held_out_group`, `paper`) into one [`CvGroup`] per group, in order of
/// first appearance. `file` names the file in errors.
pub fn cv_groups(file: &std::path::Path, text: &str) -> Result<Vec<CvGroup>> {
    let bad = |message: String| Error::Invalid {
        at: crate::error::Location {
            file: file.to_path_buf(),
            key: "figures".into(),
            line: 0,
            column: 0,
        },
        message,
    };
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| bad(format!("not the JSON of validate --cross-validate: {e}")))?;
    let figs = v["figures"].as_array().ok_or_else(|| {
        bad(
            "no `figures` array: write it with `iosim validate --cross-validate --format json`"
                .into(),
        )
    })?;
    let mut out: Vec<(CvGroup, f64, f64)> = Vec::new();
    for (i, f) in figs.iter().enumerate() {
        let s = |k: &str| {
            f[k].as_str()
                .map(str::to_string)
                .ok_or_else(|| bad(format!("figures[{i}]: no text `{k}`")))
        };
        let n = |k: &str| {
            f[k].as_f64()
                .filter(|x| x.is_finite())
                .ok_or_else(|| bad(format!("figures[{i}]: no number `{k}`")))
        };
        let (paper, group) = (s("paper")?, s("held_out_group")?);
        let (held, fitted) = (n("error_pct")?.abs(), n("fitted_error_pct")?.abs());
        match out
            .iter_mut()
            .find(|(g, _, _)| g.paper == paper && g.group == group)
        {
            Some((g, h, ft)) => {
                g.figures += 1;
                *h += held;
                *ft += fitted;
            }
            None => out.push((
                CvGroup {
                    paper,
                    group,
                    figures: 1,
                    fitted_mape: 0.0,
                    held_out_mape: 0.0,
                    objectives: None,
                },
                held,
                fitted,
            )),
        }
    }
    if out.is_empty() {
        return Err(bad("the `figures` array is empty".into()));
    }
    // Each fold's objectives, where the file has them (older files do not).
    let objectives = |group: &str| {
        v["fold_objectives"].as_array()?.iter().find_map(|r| {
            (r["held_out_group"].as_str()? == group).then_some(())?;
            let n = |k: &str| r[k].as_f64().filter(|x| x.is_finite());
            Some((n("objective_fold_fit")?, n("objective_full_fit")?))
        })
    };
    Ok(out
        .into_iter()
        .map(|(mut g, h, f)| {
            g.held_out_mape = h / g.figures as f64;
            g.fitted_mape = f / g.figures as f64;
            g.objectives = objectives(&g.group);
            g
        })
        .collect())
}

/// Held-out against fitted MAPE per group, clustered by paper.
pub fn cv_chart(groups: &[CvGroup]) -> BarChart {
    let categories = groups
        .iter()
        .map(|g| {
            let label = g
                .group
                .strip_prefix(&g.paper)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .unwrap_or(&g.group)
                .to_string();
            Category {
                cluster: g.paper.trim_end_matches(".txt").to_string(),
                label,
                values: [g.fitted_mape, g.held_out_mape],
                whisker: None,
                annotation: format!("{:.1}%", g.held_out_mape),
            }
        })
        .collect();
    BarChart {
        title: "Cross-validation: each figure group predicted by a fit that left it out".into(),
        series: ["fitted (all groups)".into(), "held out".into()],
        panels: vec![Panel {
            title: "MAPE per group".into(),
            y_label: "MAPE (%)".into(),
            categories,
        }],
        note: "fitted: the full fit's error on the group; held out: the error of the fit made without it".into(),
    }
}

/// Every chart of `iosim plot` from validation rows: one per paper figure or
/// table, then one residual chart per paper (`SHORT-residuals`), and the
/// cross-validation (`cross-validation`) if given. (stem, chart) pairs in
/// that order.
pub fn validation_charts(
    rows: &[FigureRow],
    ci: Intervals,
    cv: Option<&[CvGroup]>,
    seed: u64,
) -> Vec<(String, Chart)> {
    let groups = figure_groups(rows);
    let mut out: Vec<(String, Chart)> = groups
        .iter()
        .map(|g| (g.stem.clone(), Chart::Bars(figure_chart(g, ci, seed))))
        .collect();
    for (paper, short) in paper_shorts(rows) {
        let mine: Vec<&FigureRow> = rows.iter().filter(|r| r.paper == paper).collect();
        out.push((
            format!("{short}-residuals"),
            Chart::Residuals(residual_chart(&paper, &mine, 5)),
        ));
    }
    if let Some(cv) = cv {
        out.push(("cross-validation".into(), Chart::Bars(cv_chart(cv))));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, source: &str, unit: &str, published: f64, predicted: f64) -> FigureRow {
        FigureRow {
            id: id.into(),
            paper: "paper-x.txt".into(),
            source: source.into(),
            experiment: "e".into(),
            published,
            predicted,
            unit: unit.into(),
            error_pct: (predicted - published) / published * 100.0,
            interval: crate::interval::Interval::of(
                predicted,
                Some(0.01),
                crate::model::Family::Bus,
                &Default::default(),
            ),
        }
    }

    #[test]
    fn labels_drop_the_shared_parts_and_split_clusters() {
        let l = id_labels(&[
            "hp2g.gige-rx.pcix.c1",
            "hp2g.gige-rx.pcix.c2",
            "hp2g.gige-rx.pci66.c1",
        ]);
        assert_eq!(l[0], ("pcix".into(), "c1".into()));
        assert_eq!(l[2], ("pci66".into(), "c1".into()));
        let l = id_labels(&["atm.a.out.m1.cpu", "atm.a.in.m1.cpu", "atm.a.in.m2.cpu"]);
        assert_eq!(l[1], ("in".into(), "m1".into()));
        assert_eq!(
            id_labels(&["only.one"]),
            vec![(String::new(), "one".into())]
        );
        assert_eq!(
            id_labels(&["plain", "other"])[1],
            (String::new(), "other".into())
        );
    }

    #[test]
    fn groups_join_a_figure_and_its_text() {
        let rows = vec![
            row("p.a.c1", "Figure 2", "MB/s", 10.0, 11.0),
            row("p.b.c1", "Figure 2 text: same", "MB/s", 10.0, 9.0),
            row("p.c.c1", "Table 8: cpu", "%", 10.0, 9.0),
        ];
        let g = figure_groups(&rows);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].stem, "p-figure-2");
        assert_eq!(g[0].rows.len(), 2);
        assert_eq!(g[1].stem, "p-table-8");
        // A second paper whose ids start the same: both named by file.
        let mut two = rows.clone();
        two.push(FigureRow {
            paper: "Other Paper.txt".into(),
            ..rows[0].clone()
        });
        let stems: Vec<String> = figure_groups(&two).into_iter().map(|g| g.stem).collect();
        assert_eq!(
            stems,
            [
                "paper-x-figure-2",
                "paper-x-table-8",
                "other-paper-figure-2"
            ]
        );
    }

    #[test]
    fn a_chart_renders_the_same_bytes_twice_and_names_its_bars() {
        let rows = vec![
            row("p.a.c1", "Figure 2", "MB/s", 100.0, 110.0),
            row("p.a.c2", "Figure 2", "MB/s", 90.0, 81.0),
            row("p.b.c1", "Figure 2", "%", 20.0, 21.0),
        ];
        let g = figure_groups(&rows);
        let chart = Chart::Bars(figure_chart(&g[0], &|_| Some(1.0), 7));
        let a = render("t", &chart).expect("renders");
        let b = render("t", &chart).expect("renders");
        assert_eq!(a.svg, b.svg);
        assert_eq!(a.png, b.png);
        assert!(a.png.starts_with(b"\x89PNG"));
        for text in ["+10.0%", "-10.0%", "+5.0%", "c1", "c2", "paper", "model"] {
            assert!(a.svg.contains(text), "{text} missing");
        }
    }

    #[test]
    fn a_label_wider_than_its_slot_goes_on_two_lines() {
        font().expect("the bundled font");
        let mut svg = String::new();
        let area = SVGBackend::with_string(&mut svg, (400, 300)).into_drawing_area();
        let long = "Table 2 (server CPU utilisation)";
        assert_eq!(
            wrap_label(&area, long, 11.0, 60),
            ["Table 2 (server", "CPU utilisation)"]
        );
        assert_eq!(wrap_label(&area, long, 11.0, 400), [long]);
        assert_eq!(wrap_label(&area, "Figure 2", 11.0, 60), ["Figure 2"]);
        // No space to split at: one line, however narrow the slot.
        assert_eq!(wrap_label(&area, "c1", 11.0, 1), ["c1"]);
    }

    #[test]
    fn cross_validation_json_is_read_per_group() {
        let text = r#"{"figures": [
          {"id": "a", "error_pct": -4, "fitted_error_pct": 2, "held_out_group": "p.txt Figure 2", "paper": "p.txt"},
          {"id": "b", "error_pct": 8, "fitted_error_pct": -1, "held_out_group": "p.txt Figure 2", "paper": "p.txt"}]}"#;
        let g = cv_groups(std::path::Path::new("cv.json"), text).expect("reads");
        assert_eq!(g.len(), 1);
        assert_eq!((g[0].held_out_mape, g[0].fitted_mape), (6.0, 1.5));
        // A file without `fold_objectives` (older ones) has none; one with
        // it gives each group its fold's objectives.
        assert_eq!(g[0].objectives, None);
        let with = text.replace(
            "}]}",
            r#"}], "fold_objectives": [{"held_out_group": "p.txt Figure 2",
              "objective_fold_fit": 0.18, "objective_full_fit": 0.12}]}"#,
        );
        let g = cv_groups(std::path::Path::new("cv.json"), &with).expect("reads");
        assert_eq!(g[0].objectives, Some((0.18, 0.12)));
        let e = cv_groups(std::path::Path::new("cv.json"), "{}").unwrap_err();
        assert!(e.to_string().contains("cv.json"), "{e}");
        assert_eq!(cv_chart(&g).panels[0].categories[0].label, "Figure 2");
    }

    #[test]
    fn an_esc_in_a_group_name_is_escaped_so_the_svg_stays_valid_xml() {
        let text = r#"{"figures": [
          {"id": "a", "error_pct": -4, "fitted_error_pct": 2, "held_out_group": "p.txt Figure \u001b[2J2", "paper": "p.txt"}]}"#;
        let g = cv_groups(std::path::Path::new("cv.json"), text).expect("reads");
        let r = render("cross-validation", &Chart::Bars(cv_chart(&g))).expect("draws");
        assert!(
            !r.svg
                .chars()
                .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r')),
            "a raw control character in the SVG"
        );
        assert!(r.svg.contains(r"\x1b[2J2"), "the ESC is written as \\x1b");
    }

    #[test]
    fn a_wide_table_of_a_new_paper_gets_its_chart_from_the_ids() {
        let mut rows = Vec::new();
        for speed in ["10half", "10full", "100half", "100full"] {
            for port in 1..=6 {
                let id = format!("newp.twocards.{speed}.port{port}");
                rows.push(row(&id, "Table 10", "Mbit/s", 30.0 + port as f64, 31.0));
                rows.push(row(&format!("{id}.cpu"), "Table 10", "%", 20.0, 19.0));
            }
        }
        let g = figure_groups(&rows);
        assert_eq!((g.len(), g[0].stem.as_str()), (1, "newp-table-10"));
        let bars = figure_chart(&g[0], &|_| None, 1);
        assert_eq!(bars.panels.len(), 2);
        assert_eq!(bars.panels[0].categories.len(), 24);
        assert_eq!(bars.panels[0].categories[0].cluster, "10half");
        assert_eq!(bars.panels[1].categories[23].label, "port6");
        let r = render("wide", &Chart::Bars(bars)).expect("renders");
        assert_eq!(
            r.svg.matches("fill=\"#2471A3\" stroke=\"none\"").count(),
            48 + 2
        );
        let res = render(
            "res",
            &Chart::Residuals(residual_chart(
                "newp.txt",
                &rows.iter().collect::<Vec<_>>(),
                5,
            )),
        )
        .expect("renders");
        assert!(res.svg.contains("worst: "));
    }

    #[test]
    fn degenerate_charts_draw_without_panicking() {
        let nan = Category {
            cluster: String::new(),
            label: "x".into(),
            values: [f64::NAN, f64::INFINITY],
            whisker: Some((f64::NAN, 1.0)),
            annotation: "NaN%".into(),
        };
        let charts = [
            Chart::Bars(BarChart {
                title: String::new(),
                series: ["a".into(), "b".into()],
                panels: Vec::new(),
                note: String::new(),
            }),
            Chart::Bars(BarChart {
                title: "t".into(),
                series: ["a".into(), "b".into()],
                panels: vec![Panel {
                    title: "p".into(),
                    y_label: "y".into(),
                    categories: vec![nan],
                }],
                note: String::new(),
            }),
            Chart::Residuals(ResidualChart {
                title: "r".into(),
                x_label: "x".into(),
                points: Vec::new(),
                worst: 3,
            }),
            Chart::Lines(LineChart {
                title: "l".into(),
                x_label: "x".into(),
                x_names: Vec::new(),
                y_label: "y".into(),
                lines: vec![Line {
                    name: "n".into(),
                    points: vec![(f64::NAN, 1.0, 0.0, 2.0)],
                }],
            }),
        ];
        for c in &charts {
            let r = render("d", c).expect("draws");
            assert!(r.svg.starts_with("<svg") && r.png.starts_with(b"\x89PNG"));
        }
    }

    #[test]
    fn the_worst_are_the_largest_magnitudes() {
        let p = |v| Residual {
            group: "g".into(),
            label: "l".into(),
            value: v,
        };
        assert_eq!(
            worst_indices(&[p(1.0), p(-9.0), p(5.0), p(9.0)], 2),
            vec![1, 3]
        );
    }
}
