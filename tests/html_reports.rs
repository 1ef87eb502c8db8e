//! `sweep --html` and `place --html` (issue 46): the self-contained report
//! style of `iosim report` for a planner's sweep or placement, with its
//! charts, tables and words. (What the output path refuses is in
//! `tests/outputs.rs`.)

mod common;

use std::path::Path;

/// Runs iosim with `args` then `--html FILE` in a scratch directory; the
/// page written and the standard output.
fn page(args: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("r.html");
    let mut a = args.to_vec();
    a.extend(["--html", f.to_str().unwrap()]);
    let out = common::succeeded(&common::iosim(&a));
    (std::fs::read_to_string(&f).unwrap(), out)
}

/// Nothing on the page refers to another file or address, or runs.
fn self_contained(h: &str) {
    for bad in [
        "<script", "http:", "https:", "src=", "<link", "href=\"/", "href=\"h",
    ] {
        assert!(!h.contains(bad), "`{bad}` on the page");
    }
    assert!(h.starts_with("<!DOCTYPE html>") && h.ends_with("</html>\n"));
}

/// The `h2` headings of a page, in order.
fn headings(h: &str) -> Vec<String> {
    h.split("<h2")
        .skip(1)
        .filter_map(|s| Some(s[s.find('>')? + 1..s.find("</h2>")?].to_string()))
        .collect()
}

#[test]
fn place_html_has_the_why_the_placements_and_the_winners_utilisations() {
    let req = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/place/rx6600-ab379b-gige.toml");
    let req = req.to_str().unwrap();
    let (h, table) = page(&["place", req]);
    self_contained(&h);
    assert_eq!(
        headings(&h),
        [
            "Contents",
            "Warnings",
            "Why this placement",
            "placements",
            "winner_utilisations",
            "adapters",
            "nodes",
            "losers",
            "demand",
            "placement_intervals"
        ]
    );
    // The table output is unchanged by --html and its facts are on the page.
    let json: serde_json::Value = serde_json::from_str(&common::succeeded(&common::iosim(&[
        "place", req, "--format", "json",
    ])))
    .unwrap();
    let why = json["why"].as_str().unwrap();
    assert!(h.contains(&iosim::html::escape(why)), "the why paragraph");
    assert_eq!(table, common::succeeded(&common::iosim(&["place", req])));
    // The best placement is the first row, and its utilisations are all of
    // rank 1, busiest first.
    let best = json["placements"][0]["placement"].as_str().unwrap();
    assert!(
        h.contains(&format!("<td>{}</td>", iosim::html::escape(best))),
        "{best}"
    );
    let winner = &h[h.find(">winner_utilisations</h2>").unwrap()..];
    let winner = &winner[..winner.find("</table>").unwrap()];
    let rows: Vec<&str> = winner.split("<tr>").skip(2).collect();
    assert!(!rows.is_empty());
    let util = |r: &str| -> f64 {
        let last = r.rsplit("<td class=\"n\">").next().unwrap();
        last[..last.find('<').unwrap()].parse().unwrap()
    };
    for r in &rows {
        assert!(r.starts_with("<td class=\"n\">1</td>"), "{r}");
    }
    for w in rows.windows(2) {
        assert!(util(w[0]) >= util(w[1]), "{} before {}", w[0], w[1]);
    }
    // The request's test bed has no netperf peer: the page says so.
    assert!(h.contains("<p>Warning: request `rx6600-ab379b-gige`: test bed"));
}

#[test]
fn sweep_html_has_every_chart_of_plot_inline_and_every_section() {
    let args = [
        "sweep",
        "scenarios/hp2g/fig3-gige-transmit.toml",
        "--experiment",
        "gige-tx.pcix.c1",
        "--vary",
        "socket_kib=4,8,16",
    ];
    let (h, _) = page(&args);
    self_contained(&h);
    assert_eq!(
        headings(&h),
        ["Contents", "Warnings", "Charts", "sweep", "bottlenecks"]
    );
    // The same charts as --plot writes, inline.
    let dir = tempfile::tempdir().unwrap();
    let charts = dir.path().join("charts");
    let mut a = args.to_vec();
    a.extend(["--plot", charts.to_str().unwrap()]);
    common::succeeded(&common::iosim(&a));
    let svgs = common::names_in(&charts)
        .into_iter()
        .filter(|n| n.ends_with(".svg"))
        .collect::<Vec<_>>();
    assert!(!svgs.is_empty());
    assert_eq!(
        h.matches("<figure id=\"chart-").count(),
        svgs.len(),
        "{svgs:?}"
    );
    for s in &svgs {
        assert!(
            h.contains(&format!(
                "<figure id=\"chart-{}\">",
                s.trim_end_matches(".svg")
            )),
            "{s}"
        );
    }
    // A --force for no output at all is a usage error.
    let o = common::iosim(&[&args[..], &["--force"]].concat());
    assert_eq!(o.status.code(), Some(2));
}
