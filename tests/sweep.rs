//! `iosim sweep`, driven through the real binary: the rp8400 cell trend, the
//! socket-size knee, independence from the thread count, plots, bad input.

mod common;
use common::{iosim, succeeded as stdout};

/// The mean of `metric` of experiment `exp` at each point, in output order,
/// from the CSV `sweep` section.
fn means(csv: &str, exp: &str, metric: &str) -> Vec<(String, f64)> {
    csv.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.len() == 9 && f[1] == exp && f[3] == metric)
                .then(|| (f[2].to_string(), f[5].parse().expect("a number")))
        })
        .collect()
}

fn sweep_csv(file: &str, exp: &str, vary: &str) -> String {
    stdout(&iosim(&[
        "sweep",
        &format!("scenarios/hp2g/{file}.toml"),
        "--experiment",
        exp,
        "--vary",
        vary,
        "--format",
        "csv",
    ]))
}

#[test]
fn cells_sweep_reproduces_the_papers_cell_trend() {
    // hp2g.cells.writes-drop: adapter reads of host memory (GigE transmit, FC
    // write) are slower on 4 cells than on 1 (same threshold as tests/claims.rs).
    for (file, exp, metric) in [
        (
            "fig3-gige-transmit",
            "gige-tx.pcix.c1",
            "a9782a.gige throughput",
        ),
        ("fig6-fc-write", "fc-wr.pcix.c1", "a9782a.fc throughput"),
    ] {
        let m = means(&sweep_csv(file, exp, "cells=1,2,4"), exp, metric);
        let v: Vec<f64> = m.iter().map(|p| p.1).collect();
        assert_eq!(m.len(), 3, "{m:?}");
        assert_eq!(m[0].0, "cells=1");
        assert!(v[2] < v[0] * 0.99, "{exp}: {v:?} does not drop");
        assert!(v[1] <= v[0] && v[2] <= v[1] * 1.005, "{exp}: {v:?}");
    }
    // hp2g.cells.reads-flat: adapter writes into host memory (GigE receive,
    // FC read) stay within 2%.
    for (file, exp, metric) in [
        (
            "fig2-gige-receive",
            "gige-rx.pcix.c1",
            "a9782a.gige throughput",
        ),
        ("fig5-fc-read", "fc-rd.pcix.c1", "a9782a.fc throughput"),
    ] {
        let m = means(&sweep_csv(file, exp, "cells=1..4"), exp, metric);
        assert_eq!(m.len(), 4, "{m:?}");
        for (p, v) in &m {
            assert!(
                (v - m[0].1).abs() / m[0].1 < 0.02,
                "{exp} {p}: {m:?} not flat"
            );
        }
    }
}

#[test]
fn socket_size_sweep_shows_a_knee() {
    let exp = "gige-tx.pcix.c1";
    let m = means(
        &sweep_csv("fig3-gige-transmit", exp, "socket_kib=4,8,16,32,64,128,256"),
        exp,
        "a9782a.gige throughput",
    );
    let v: Vec<f64> = m.iter().map(|p| p.1).collect();
    assert_eq!(v.len(), 7, "{m:?}");
    // Rising at small sockets ...
    assert!(v[1] > v[0] * 1.5 && v[2] > v[1] * 1.1, "{v:?}");
    // ... then flat: beyond the knee more socket buys under 2%.
    for w in v[3..].iter() {
        assert!((w - v[2]).abs() / v[2] < 0.02, "{v:?}");
    }
}

#[test]
fn results_do_not_depend_on_threads_and_replications_give_intervals() {
    let run = |threads: &str| {
        stdout(&iosim(&[
            "sweep",
            "scenarios/hp2g/fig3-gige-transmit.toml",
            "--experiment",
            "gige-tx.pcix.c1",
            "--vary",
            "cells=1,2",
            "--vary",
            "server.rp8400-seu.io_read_latency=500ns,1us",
            "--replications",
            "3",
            "--threads",
            threads,
            "--format",
            "json",
        ]))
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    let v: serde_json::Value = serde_json::from_str(&one).expect("JSON");
    let rows = v["sweep"].as_array().expect("a sweep section");
    // 2 x 2 points.
    let points: std::collections::BTreeSet<&str> =
        rows.iter().filter_map(|r| r["point"].as_str()).collect();
    assert_eq!(points.len(), 4, "{points:?}");
    assert!(one.contains("io_read_latency=1000"), "{points:?}");
    for r in rows {
        assert_eq!(r["n"], 3);
        let (lo, m, hi) = (
            r["ci_low"].as_f64().unwrap_or(f64::NAN),
            r["mean"].as_f64().unwrap_or(f64::NAN),
            r["ci_high"].as_f64().unwrap_or(f64::NAN),
        );
        assert!(lo <= m && m <= hi, "{r}");
    }
    assert!(v["bottlenecks"].as_array().is_some_and(|b| b.len() == 4));
}

#[test]
fn plot_writes_one_svg_and_png_per_metric() {
    let dir = std::env::temp_dir().join(format!("iosim-sweep-plot-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = stdout(&iosim(&[
        "sweep",
        "scenarios/hp2g/fig3-gige-transmit.toml",
        "--experiment",
        "gige-tx.pcix.c1",
        "--vary",
        "socket_kib=4,8,16",
        "--plot",
        dir.to_str().expect("utf-8 path"),
    ]));
    assert!(out.contains("# seed: 1"), "{out}");
    let svg = std::fs::read_to_string(dir.join("gige-tx_pcix_c1-a9782a_gige_throughput.svg"))
        .expect("the throughput chart");
    assert!(svg.starts_with("<svg") && svg.contains("polyline"));
    let png = std::fs::read(dir.join("gige-tx_pcix_c1-a9782a_gige_throughput.png"))
        .expect("the same chart as PNG");
    assert!(png.starts_with(b"\x89PNG"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_a_clear_error_not_a_panic() {
    let f = "scenarios/hp2g/fig3-gige-transmit.toml";
    for (vary, says) in [
        ("mtu=1500", "neither a sweepable quantity"),
        ("server.rp8400-seu.no_such=1", "server.rp8400-seu.no_such"),
        ("cells=", "empty list"),
        ("cells=4..1", "malformed range"),
        ("cells=1:4", "malformed range"),
        ("cells=1,x", "`x` is not a number"),
        ("cells=1.5", "out of range"),
        ("cells=8", "takes 1 to"),
        ("outstanding=0", "out of range"),
        ("socket_kib=0", "out of range"),
        ("block_kib=64", "no workload it applies to"),
        (
            "server.rp8400-seu.io_read_latency=1e12ns",
            "plausible range",
        ),
        ("server.rp8400-seu.io_read_latency=5MHz", "not a unit"),
        ("cells", "expected WHAT=LIST"),
    ] {
        let o = iosim(&["sweep", f, "--vary", vary]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{vary}: {err}");
        assert!(err.contains(says), "{vary}: {err}");
        assert!(!err.contains("panicked"), "{vary}: {err}");
    }
    let o = iosim(&["sweep", f, "--vary", "cells=1", "--experiment", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--experiment nope"));
    // No --vary at all is a usage error from clap.
    assert_eq!(iosim(&["sweep", f]).status.code(), Some(2));
}
