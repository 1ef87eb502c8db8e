//! `iosim sweep`, driven through the real binary: the rp8400 cell trend, the
//! socket-size knee, independence from the thread count, plots, the card
//! knobs (slot, link, number of adapters), bad input.

mod common;
use common::{iosim, succeeded as stdout};

/// The mean of `metric` of experiment `exp` at each point, in output order,
/// from the CSV `sweep` section.
fn means(csv: &str, exp: &str, metric: &str) -> Vec<(String, f64)> {
    csv.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.len() == 15 && f[1] == exp && f[3] == metric)
                .then(|| (f[2].to_string(), f[5].parse().expect("a number")))
        })
        .collect()
}

/// `iosim sweep scenarios/hp2g/FILE.toml --experiment EXP --vary VARY --format csv`.
fn sweep_csv(file: &str, exp: &str, vary: &str) -> String {
    sweep_at(&format!("scenarios/hp2g/{file}.toml"), exp, vary)
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

/// `iosim sweep FILE --experiment EXP --vary VARY --format csv`.
fn sweep_at(file: &str, exp: &str, vary: &str) -> String {
    stdout(&iosim(&[
        "sweep",
        file,
        "--experiment",
        exp,
        "--vary",
        vary,
        "--format",
        "csv",
    ]))
}

#[test]
fn slot_sweep_reproduces_the_slot_266_ordering() {
    // ab379b.slot-266: the AB379B reaches its throughput only in an rx6600
    // PCI-X 266 slot; slot 5 (PCI-X 133) and slot 7 (PCI-X 66, shared) fall
    // behind, in that order. One card moved over the three slots.
    let csv = sweep_at(
        "scenarios/ab379b/rx6600-slot-types.toml",
        "slot3.pcix266",
        "slot:ab379b=slot-3,slot-5,slot-7",
    );
    let m = means(&csv, "slot3.pcix266", "total throughput");
    let points: Vec<&str> = m.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(
        points,
        [
            "slot:ab379b=slot-3",
            "slot:ab379b=slot-5",
            "slot:ab379b=slot-7"
        ]
    );
    // The bus mode is named beside each slot in the header (points go by
    // the slot's name alone).
    assert!(
        csv.contains(
            "# vary slot:ab379b: slot-3 (pcix266), slot-5 (pcix133), slot-7 (pcix66) (slot)"
        ),
        "{csv}"
    );
    let v: Vec<f64> = m.iter().map(|p| p.1).collect();
    assert!(v[0] > v[1] * 1.2 && v[1] > v[2] * 1.2, "{v:?}");
}

#[test]
fn adapter_count_sweep_on_the_sx2000_scales_then_bends() {
    // The sx2000 scaling scenario's first experiment (one AB379B in slot 5
    // of chassis 0), repeated into the slots the scenario's n2..n6 use.
    let csv = sweep_at(
        "scenarios/ab379b/sx2000-scaling.toml",
        "n1",
        "adapters:hba1@chassis1-slot-5,slot-6,chassis1-slot-6,slot-3,chassis1-slot-3=1..6",
    );
    let v: Vec<f64> = means(&csv, "n1", "total throughput")
        .iter()
        .map(|p| p.1)
        .collect();
    assert_eq!(v.len(), 6, "{csv}");
    // Linear over the four PCI-X 266 slots (each adapter alone on its bus,
    // ropes and chassis link)...
    for (n, x) in v.iter().enumerate().take(4) {
        assert!((x / (v[0] * (n + 1) as f64) - 1.0).abs() < 0.01, "{v:?}");
    }
    // ...then each further adapter, in a PCI-X 133 slot, adds less.
    assert!(v[4] > v[3] && v[5] > v[4], "{v:?}");
    assert!(v[4] - v[3] < v[0] * 0.9, "{v:?}");
    // The copies are named after the card and carry its workloads.
    assert!(
        csv.contains(",adapters:hba1=6,hba1-6.port1 throughput,"),
        "{csv}"
    );
    // From the free slots in order (chassis 0's slot 0 first): 12 fit.
    let csv = sweep_at(
        "scenarios/ab379b/sx2000-scaling.toml",
        "n1",
        "adapters:hba1=12",
    );
    assert!(
        csv.contains(",adapters:hba1=12,hba1-12.port0 throughput,"),
        "{csv}"
    );
}

#[test]
fn an_optional_parameter_absent_from_the_model_can_be_swept() {
    // The sx2000 states no `posted_writes_cut_through` (absent: each write
    // burst is stored whole in the LBA); the what-if adds it. With six
    // adapters, two in PCI-X 133 slots, streaming LBAs let those two reach
    // their links too.
    let csv = sweep_at(
        "scenarios/ab379b/sx2000-scaling.toml",
        "n6",
        "server.sx2000.bridge.posted_writes_cut_through=0,1",
    );
    let v: Vec<f64> = means(&csv, "n6", "total throughput")
        .iter()
        .map(|p| p.1)
        .collect();
    assert_eq!(v.len(), 2, "{csv}");
    assert!(
        v[1] > 1.05 * v[0],
        "stored {:.0}, streamed {:.0} MB/s",
        v[0],
        v[1]
    );
    // Its rule still bounds it.
    let out = iosim(&[
        "sweep",
        "scenarios/ab379b/sx2000-scaling.toml",
        "--vary",
        "server.sx2000.bridge.posted_writes_cut_through=0,2",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("plausible range, 0 to 1"),
        "{out:?}"
    );
}

#[test]
fn mtu_sweep_on_atm_lane_9218_beats_1516() {
    // One ATM/622 receiving alone (the ATM report's Table 3) over the two
    // MTUs: the larger frames carry more per frame of SAR and CPU work (the
    // report: 537 against 454 Mbit/s, 1.18 times).
    let csv = sweep_at(
        "scenarios/atm/table3-atm622-n4000-1cpu.toml",
        "atm622.in.lane9218",
        "link:*=atm622-lane9218,atm622-lane1516",
    );
    let m = means(&csv, "atm622.in.lane9218", "total throughput");
    assert_eq!(m.len(), 2, "{csv}");
    assert_eq!(m[0].0, "link:*=atm622-lane9218");
    assert!(m[0].1 > m[1].1 * 1.1, "{m:?}");
    // A card named alone over the two links: only its throughput moves.
    let csv = sweep_at(
        "scenarios/atm/table9-atm622-n4000.toml",
        "atm622.out.mtu9218",
        "link:atm0=atm622-lane9218,atm622-lane1516",
    );
    let a0 = means(&csv, "atm622.out.mtu9218", "atm0.atm throughput");
    assert_eq!(a0.len(), 2, "{csv}");
    assert!(a0[0].1 > a0[1].1, "{a0:?}");
}

#[test]
fn plot_of_a_categorical_sweep_names_the_slots() {
    let dir = std::env::temp_dir().join(format!("iosim-sweep-slots-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    stdout(&iosim(&[
        "sweep",
        "scenarios/ab379b/rx6600-slot-types.toml",
        "--experiment",
        "slot3.pcix266",
        "--vary",
        "slot:ab379b=slot-3,slot-5,slot-7",
        "--plot",
        dir.to_str().expect("a UTF-8 path"),
    ]));
    let svg = std::fs::read_to_string(dir.join("slot3_pcix266-total_throughput.svg"))
        .expect("a chart of the total");
    for s in ["slot-3 (pcix266)", "slot-5 (pcix133)", "slot-7 (pcix66)"] {
        assert!(svg.contains(s), "{s} is not on the x axis");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_slot_sweep_draws_one_chart_per_metric_across_all_points() {
    // Each slot is on a bus (and rope) of its own: one chart of the busiest
    // bus across the three points, not one one-point chart per bus.
    let dir = tempfile::tempdir().expect("a scratch directory");
    let plot = dir.path().join("charts");
    stdout(&iosim(&[
        "sweep",
        "scenarios/ab379b/rx6600-slot-types.toml",
        "--experiment",
        "slot3.pcix266",
        "--vary",
        "slot:ab379b=slot-3,slot-5,slot-7",
        "--plot",
        plot.to_str().expect("a UTF-8 path"),
    ]));
    let mut names: Vec<String> = std::fs::read_dir(&plot)
        .expect("the charts")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".svg"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "slot3_pcix266-ab379b_port0_throughput.svg",
            "slot3_pcix266-ab379b_port1_throughput.svg",
            "slot3_pcix266-busiest_bus_utilisation.svg",
            "slot3_pcix266-busiest_rope_utilisation.svg",
            "slot3_pcix266-cpu_utilisation.svg",
            "slot3_pcix266-service_demand.svg",
            "slot3_pcix266-total_throughput.svg",
        ]
    );
    let svg = std::fs::read_to_string(plot.join("slot3_pcix266-busiest_bus_utilisation.svg"))
        .expect("the bus chart");
    for s in ["slot-3 (pcix266)", "slot-5 (pcix133)", "slot-7 (pcix66)"] {
        assert!(svg.contains(s), "{s} is not on the x axis");
    }
}

#[test]
fn bad_card_knobs_are_clear_errors_naming_the_point() {
    let rx = "scenarios/ab379b/rx6600-slot-types.toml";
    let atm = "scenarios/atm/table9-atm622-n4000.toml";
    let sx = "scenarios/ab379b/sx2000-scaling.toml";
    for (file, exp, vary, says) in [
        (
            rx,
            "slot3.pcix266",
            "slot:ab379b=slot-3,slot-99",
            "point `slot:ab379b=slot-99`",
        ),
        (
            rx,
            "slot3.pcix266",
            "slot:ab379b=slot-3,slot-99",
            "has no slot `slot-99`",
        ),
        (rx, "slot3.pcix266", "slot:nope=slot-3", "no card `nope`"),
        (
            rx,
            "slot3.pcix266",
            "slot:ab379b=slot-3,slot-3",
            "listed twice",
        ),
        (rx, "slot3.pcix266", "slot:ab379b=", "empty slot name"),
        (
            rx,
            "slot3.pcix266",
            "link:ab379b=atm622-lane9218",
            "cannot replace the links",
        ),
        (
            rx,
            "slot3.pcix266",
            "link:ab379b=nope",
            "unknown link `nope`",
        ),
        (
            rx,
            "slot3.pcix266",
            "adapters:ab379b@slot-5=1..3",
            "the list gives 1",
        ),
        (
            rx,
            "slot3.pcix266",
            "adapters:ab379b=0",
            "out of range for adapters",
        ),
        (
            rx,
            "slot3.pcix266",
            "slot:ab379b@slot-3=slot-4",
            "only adapters takes a list",
        ),
        (
            atm,
            "atm622.out.mtu9218",
            "slot=ike0-twin-turbo-2",
            "name the one to vary",
        ),
        (
            atm,
            "atm622.out.mtu9218",
            "slot:atm0=ike1-twin-turbo-1",
            "are both in slot",
        ),
        (
            atm,
            "atm622.out.mtu9218",
            "link:atm0=gige",
            "cannot replace the links",
        ),
        (sx, "n1", "adapters:hba1=30", "need 29 free slots"),
        (sx, "n2", "cells=1,2", "point `cells=1`"),
        (
            sx,
            "n2",
            "cells=1,2",
            "owns only the chassis of its cells (chassis 0)",
        ),
    ] {
        let o = iosim(&["sweep", file, "--experiment", exp, "--vary", vary]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{vary}: {err}");
        assert!(err.contains(says), "{vary}: {err}");
        assert!(!err.contains("panicked"), "{vary}: {err}");
        assert!(o.stdout.is_empty(), "{vary}: a bad point runs nothing");
    }
}

#[test]
fn a_knob_or_a_value_given_twice_is_a_usage_error() {
    let file = "scenarios/hp2g/fig3-gige-transmit.toml";
    for (args, says) in [
        (
            &["--vary", "cells=1,2", "--vary", "cells=4"][..],
            "--vary cells: given twice",
        ),
        (&["--vary", "cells=1,2,1"][..], "the value 1 is given twice"),
        (
            &["--vary", "server.rp8400-seu.io_read_latency=250ns,0.25us"][..],
            "is given twice",
        ),
    ] {
        let mut all = vec!["sweep", file, "--experiment", "gige-tx.pcix.c1"];
        all.extend_from_slice(args);
        let out = iosim(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// The slot sweep of the AB379B on the rx6600 with `args` added.
fn slot_sweep(args: &[&str]) -> std::process::Output {
    let mut all = vec![
        "sweep",
        "scenarios/ab379b/rx6600-slot-types.toml",
        "--experiment",
        "slot3.pcix266",
        "--vary",
        "slot:ab379b=slot-3,slot-5,slot-7",
    ];
    all.extend_from_slice(args);
    iosim(&all)
}

#[test]
fn every_format_compares_each_throughput_with_the_baseline_point() {
    // Against the first point by default, against --baseline's otherwise;
    // the same numbers in the table, CSV and JSON.
    for (baseline, at) in [(None, 0), (Some("slot:ab379b=slot-5"), 1)] {
        let extra: Vec<&str> = baseline.map_or(vec![], |b| vec!["--baseline", b]);
        let json = |extra: &[&str]| {
            let mut a = extra.to_vec();
            a.extend(["--format", "json"]);
            let v: serde_json::Value =
                serde_json::from_str(&stdout(&slot_sweep(&a))).expect("JSON");
            v
        };
        let v = json(&extra);
        let rows = v["sweep"].as_array().expect("a sweep section");
        let total: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r["metric"] == "total throughput")
            .map(|r| {
                let m = r["mean"].as_f64().expect("a mean");
                let c = r["vs_baseline_pct"]
                    .as_f64()
                    .expect("a change for a throughput");
                (m, c)
            })
            .collect();
        assert_eq!(total.len(), 3, "{total:?}");
        let base = total[at].0;
        for (m, c) in &total {
            assert!((c - (m - base) / base * 100.0).abs() < 1e-3, "{total:?}");
        }
        assert_eq!(total[at].1, 0.0);
        // Only throughputs are compared: a utilisation's change is null.
        for r in rows.iter().filter(|r| r["unit"] != "MB/s") {
            assert!(r["vs_baseline_pct"].is_null(), "{r}");
        }
        let named = if at == 0 { "slot-3" } else { "slot-5" };
        assert!(
            v["baseline"].as_str().is_some_and(|b| b.contains(named)),
            "{}",
            v["baseline"]
        );
        // CSV: the same field, the same numbers at 2 decimals, empty where
        // JSON has null.
        let mut a = extra.clone();
        a.extend(["--format", "csv"]);
        let csv = stdout(&slot_sweep(&a));
        assert!(
            csv.contains(
                ",ci_high,n,vs_baseline_pct,pi90_low,pi90_high,param_pct,structural_pct,family\n"
            ),
            "{csv}"
        );
        let csv_total: Vec<f64> = csv
            .lines()
            .filter(|l| l.contains(",total throughput,"))
            .map(|l| {
                l.split(',')
                    .nth(9)
                    .and_then(|c| c.parse().ok())
                    .expect("a change")
            })
            .collect();
        for (c, (_, j)) in csv_total.iter().zip(&total) {
            assert!((c - j).abs() < 0.006, "{csv_total:?} {total:?}");
        }
        assert!(
            csv.lines()
                .any(|l| l.contains(",cpu utilisation,") && l.ends_with(",1,,,,,,")),
            "{csv}"
        );
        // The table: the column and the baseline's header line.
        let table = stdout(&slot_sweep(&extra));
        assert!(table.contains("vs_baseline_pct"), "{table}");
        assert!(
            table.contains(&format!("# baseline: slot:ab379b={named}")),
            "{table}"
        );
    }
}

#[test]
fn a_baseline_that_is_no_point_of_the_sweep_is_a_usage_error() {
    for (baseline, says) in [
        (
            "cells=2",
            "`cells` is not varied by this sweep (it varies slot:ab379b)",
        ),
        (
            "slot:ab379b=slot-9",
            "slot:ab379b=slot-9 is not a point of the sweep",
        ),
        ("slot-5", "`slot-5` is not KNOB=VALUE"),
        ("slot:ab379b=slot-3,slot:ab379b=slot-5", "named twice"),
        ("", "names no value of slot:ab379b"),
    ] {
        let o = slot_sweep(&["--baseline", baseline]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{baseline}: {err}");
        assert!(err.contains(says), "{baseline}: {err}");
        assert!(o.stdout.is_empty());
    }
    // A grid's baseline names both knobs, in either order, with commas or
    // spaces; a number may be written as the point column writes it or not.
    let grid = |baseline: &str| {
        iosim(&[
            "sweep",
            "scenarios/hp2g/fig3-gige-transmit.toml",
            "--experiment",
            "gige-tx.pcix.c1",
            "--vary",
            "cells=1,2",
            "--vary",
            "socket_kib=8,16",
            "--baseline",
            baseline,
            "--format",
            "csv",
        ])
    };
    let o = grid("cells=2");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("names no value of socket_kib"));
    let a = stdout(&grid("socket_kib=16.0,cells=2"));
    assert!(
        a.contains("# baseline: cells=2 socket_kib=16, named by --baseline"),
        "{a}"
    );
    assert_eq!(a, stdout(&grid("cells=2 socket_kib=16")));
    let row = a
        .lines()
        .find(|l| l.contains(",cells=2 socket_kib=16,total throughput,"))
        .expect("the baseline's total");
    assert_eq!(row.split(',').nth(9), Some("0.00"), "{row}");
}

#[test]
fn sweep_help_says_plot_writes_svg_and_png() {
    let help = stdout(&iosim(&["sweep", "--help"]));
    assert!(help.contains("SVG") && help.contains("PNG"), "{help}");
    assert!(help.contains("--baseline"), "{help}");
}
