//! `iosim report`, driven through the real binary: one self-contained HTML
//! file (no script, no address, no file it loads) that escapes every string
//! taken from an input file.

use std::process::Command;

/// A bus model whose description and sources carry markup, quotes and an
/// ampersand, as a user's file might.
const HOSTILE_BUS: &str = r#"kind = "bus"
name = "pcix-hostile"
description = "<script>alert(1)</script>&\"desc"
protocol = "pcix"

[param]
clock = { value = 66.67, unit = "MHz", source = "<script>alert(2)</script>&\"src" }
transfers_per_clock = { value = 1, unit = "count", source = "PCI-X Addendum 1.0" }
width = { value = 64, unit = "bit", source = "PCI-X Addendum 1.0" }
write_overhead_clocks = { value = 6, unit = "clocks", source = "PCI-X 1.0" }
read_request_clocks = { value = 6, unit = "clocks", source = "PCI-X 1.0" }
completion_overhead_clocks = { value = 6, unit = "clocks", source = "PCI-X 1.0" }
latency_timer_clocks = { value = 64, unit = "clocks", source = "assumed" }
max_burst = { value = 4096, unit = "bytes", source = "PCI-X 1.0" }
"#;

#[test]
fn the_report_is_self_contained_and_escapes_input_strings() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let models = tmp.path().join("models");
    std::fs::create_dir_all(models.join("buses")).unwrap();
    std::fs::write(models.join("buses/hostile.toml"), HOSTILE_BUS).unwrap();
    let out = tmp.path().join("report.html");
    // A cross-validation file (its strings are input too).
    let cv = tmp.path().join("cv.json");
    std::fs::write(
        &cv,
        r#"{"figures": [{"id": "x", "error_pct": -4.0, "fitted_error_pct": 2.0,
            "held_out_group": "p.txt <i>Figure 9</i>", "paper": "p.txt"}]}"#,
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_iosim"))
        .args([
            "report",
            "--models",
            models.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--cross-validation",
            cv.to_str().unwrap(),
        ])
        .output()
        .expect("the iosim binary runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&out).expect("the report");
    assert!(html.starts_with("<!DOCTYPE html>"));

    // The hostile source is there, escaped; no markup of it survives.
    assert!(
        html.contains("&lt;script&gt;alert(2)&lt;/script&gt;&amp;&quot;src"),
        "the parameter's source is not shown escaped"
    );
    assert!(!html.contains("alert(2)</script>"));
    assert!(html.contains("p.txt &lt;i&gt;Figure 9&lt;/i&gt;") && !html.contains("<i>"));
    assert!(html.contains("id=\"chart-cross-validation\""));

    // Nothing external: no script, no address, no file loaded, no import.
    let lower = html.to_ascii_lowercase();
    for bad in [
        "<script", "http:", "https:", "src=", "@import", "url(", "<link", "<iframe", "<object",
        "<embed", "<img",
    ] {
        assert!(!lower.contains(bad), "the report contains {bad}");
    }
    // Links only to its own sections.
    for (i, _) in lower.match_indices("href=") {
        assert!(lower[i..].starts_with("href=\"#"), "{}", &lower[i..i + 40]);
    }

    // Version, seed, the inputs, every redrawn figure inline, the tables.
    for want in [
        concat!("iosim ", env!("CARGO_PKG_VERSION")),
        "<dt>seed</dt><dd>1</dd>",
        "Inputs: model parameters and their sources",
        "bus.pcix-hostile.clock",
        "id=\"chart-hp2g-figure-2\"",
        "id=\"chart-atm-table-9\"",
        "id=\"chart-hp2g-residuals\"",
        "<th>mape_pct</th>",
        "models/fitted.toml",
    ] {
        assert!(html.contains(want), "no {want}");
    }
    assert!(html.matches("<svg").count() >= 9);
}
