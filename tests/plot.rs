//! `iosim plot`, driven through the real binary: one chart per paper figure
//! or table with its labels and one bar per figure and series, the residual
//! chart naming its worst figures, the cross-validation chart from a JSON
//! file, byte-identical output whatever the thread count, and `validate
//! --plot` drawing the same charts.

mod common;
use common::{iosim, succeeded as ok};
use std::path::Path;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The text of every `<text>` element of an SVG (plotters writes one per line).
fn texts(svg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = svg.lines();
    while let Some(l) = lines.next() {
        if l.starts_with("<text") {
            if let Some(t) = lines.next() {
                out.push(t.to_string());
            }
        }
    }
    out
}

/// A tiny stand-in for `validate --cross-validate --format json` (the real
/// one takes half an hour): two groups of one paper.
const CV_JSON: &str = r#"{
  "schema_version": 1, "tool": "iosim", "command": "validate --cross-validate", "seed": 1,
  "figures": [
    {"id": "hp2g.gige-rx.pcix.c1", "published": 929, "predicted": 950, "unit": "Mbit/s",
     "error_pct": 2.3, "fitted_error_pct": 2.2, "held_out_group": "hp-rp8400-pcix-2gb-fc-gige-2004.txt Figure 2",
     "paper": "hp-rp8400-pcix-2gb-fc-gige-2004.txt"},
    {"id": "hp2g.fc-rd.pcix.c1", "published": 190, "predicted": 150, "unit": "MB/s",
     "error_pct": -21.0, "fitted_error_pct": -1.5, "held_out_group": "hp-rp8400-pcix-2gb-fc-gige-2004.txt Figure 5",
     "paper": "hp-rp8400-pcix-2gb-fc-gige-2004.txt"}
  ]
}"#;

#[test]
fn plot_draws_every_paper_figure_with_its_labels_and_bars() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let cv = tmp.path().join("cv.json");
    std::fs::write(&cv, CV_JSON).unwrap();
    let listing = ok(&iosim(&[
        "plot",
        "--out",
        a.to_str().unwrap(),
        "--cross-validation",
        cv.to_str().unwrap(),
        "--threads",
        "1",
    ]));
    // Every file name is safe on any file system: letters, digits, '-' and
    // one '.' before the extension (no space, colon or bracket of a paper's
    // name).
    for entry in std::fs::read_dir(&a).expect("the chart directory") {
        let name = entry.expect("an entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
                && name.matches('.').count() == 1,
            "{name}"
        );
    }
    assert!(
        listing.contains("hp2g-figure-2") && listing.contains("# seed: 1"),
        "{listing}"
    );

    // Figure 2 of the rp8400 paper: 10 figures (6 PCI-X from the chart, 4
    // PCI-66 from its text), one paper bar and one model bar each.
    let svg = read(&a.join("hp2g-figure-2.svg"));
    assert!(svg.starts_with("<svg"));
    let model_bars = svg.matches("fill=\"#2471A3\" stroke=\"none\"").count();
    let paper_bars = svg.matches("fill=\"#99A3A4\" stroke=\"none\"").count();
    // One more of each: the legend's swatch.
    assert_eq!((paper_bars, model_bars), (11, 11), "{svg}");
    let t = texts(&svg);
    for want in [
        "hp-rp8400-pcix-2gb-fc-gige-2004, Figure 2: paper and model",
        "throughput (Mbit/s)",
        "gige-rx.pcix",
        "gige-rx+fc-bd.pci66",
        "c1",
        "c4",
        "paper",
        "model",
    ] {
        assert!(t.iter().any(|x| x == want), "no label {want:?} in {t:?}");
    }
    // The error on each model bar.
    let errors = t
        .iter()
        .filter(|x| x.ends_with('%') && (x.starts_with('+') || x.starts_with('-')))
        .count();
    assert_eq!(errors, 10, "{t:?}");

    // The ATM tables: throughput and CPU panels, 6 figures each.
    let atm = read(&a.join("atm-table-8.svg"));
    assert_eq!(
        atm.matches("fill=\"#2471A3\" stroke=\"none\"").count(),
        12 + 2
    );
    assert!(texts(&atm)
        .iter()
        .any(|x| x.starts_with("CPU utilisation (%)")));

    // The residuals name their worst figures in the picture.
    let res = texts(&read(&a.join("hp2g-residuals.svg")));
    assert!(res.iter().any(|x| x.starts_with("worst: ")), "{res:?}");
    assert!(res.iter().any(|x| x == "Figure 6"), "{res:?}");

    // Cross-validation: one pair of bars per group, the group named.
    let cvs = read(&a.join("cross-validation.svg"));
    assert_eq!(
        cvs.matches("fill=\"#2471A3\" stroke=\"none\"").count(),
        2 + 1
    );
    assert!(texts(&cvs).iter().any(|x| x == "Figure 5"));

    // Every SVG has its PNG, and a second run on two threads gives the same bytes.
    ok(&iosim(&[
        "plot",
        "--out",
        b.to_str().unwrap(),
        "--cross-validation",
        cv.to_str().unwrap(),
        "--threads",
        "2",
    ]));
    let mut names: Vec<_> = std::fs::read_dir(&a)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let svgs = names.iter().filter(|n| n.ends_with(".svg")).count();
    let pngs = names.iter().filter(|n| n.ends_with(".png")).count();
    assert!(svgs >= 10 && svgs == pngs, "{names:?}");
    // validate --plot draws the same charts (all but the cross-validation).
    let c = tmp.path().join("c");
    ok(&iosim(&["validate", "--plot", c.to_str().unwrap()]));
    assert!(!c.join("cross-validation.svg").exists());
    for n in names.iter().filter(|n| !n.starts_with("cross-validation")) {
        assert!(
            std::fs::read(c.join(n)).unwrap() == std::fs::read(a.join(n)).unwrap(),
            "{n}"
        );
    }
    for n in &names {
        let (x, y) = (
            std::fs::read(a.join(n)).unwrap(),
            std::fs::read(b.join(n)).unwrap(),
        );
        assert!(x == y, "{n} differs between runs");
        if n.ends_with(".png") {
            assert!(x.starts_with(b"\x89PNG\r\n\x1a\n") && x.len() > 5000, "{n}");
        }
    }
}

#[test]
fn a_bad_cross_validation_file_is_an_input_error_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let cv = tmp.path().join("cv.json");
    std::fs::write(&cv, "{\"figures\": 3}").unwrap();
    let out = tmp.path().join("out");
    let o = iosim(&[
        "plot",
        "--out",
        out.to_str().unwrap(),
        "--cross-validation",
        cv.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cv.json") && err.contains("figures"), "{err}");
    assert!(!out.exists());
}
