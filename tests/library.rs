//! Plausibility of the library's servers and cards: every smoke scenario of
//! a library server (`scenarios/smoke/lib-*.toml`, no published figures)
//! gives results that no capacity forbids. Written before the scenarios
//! were first run:
//!
//! - no throughput above any link, bus, rope or I/O controller capacity;
//! - a lone card in an unshared slot (an experiment whose id starts with
//!   `lone.`) reaches its link's rate or names another limit that stops it;
//! - every CPU's utilisation is within 0-100%;
//! - an rx4640 with an A6826A doing 1 KB reads is limited by the card's
//!   processor or a host CPU, and the output names which;
//! - a parallel SCSI link is one half-duplex bus: what a channel reads and
//!   writes together stays within its bus's ceiling, and a lone channel
//!   reaches that ceiling (less its connections) or names another limit;
//!   small I/Os name the bus or the channel's processor.

use std::path::PathBuf;

use serde_json::Value;

mod common;

/// Slack for a measured mean against a capacity (batch-means noise).
const SLACK: f64 = 1.02;

fn library_scenarios() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/smoke");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("scenarios/smoke")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("lib-") && n.ends_with(".toml"))
        })
        .collect();
    v.sort();
    v
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("`{key}` is not a number in {v}"))
}

/// The rows of section `key` that belong to experiment `e`.
fn rows<'a>(v: &'a Value, key: &str, e: &str) -> Vec<&'a Value> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no `{key}`"))
        .iter()
        .filter(|r| r["experiment"] == e)
        .collect()
}

/// Checks one experiment of one scenario's `run --format json` output.
fn check_experiment(file: &str, v: &Value, exp: &Value) {
    let e = exp["experiment"].as_str().expect("experiment id");
    let at = format!("{file}: {e}");
    let bottleneck = exp["bottleneck"].as_str().unwrap_or("").to_string();
    let util = num(exp, "cpu_util_pct");
    assert!((0.0..=100.0).contains(&util), "{at}: CPU {util}%");
    for c in rows(v, "cpus", e) {
        let u = num(c, "util_pct");
        assert!((0.0..=100.0).contains(&u), "{at}: a CPU at {u}%");
    }
    for b in rows(v, "buses", e) {
        let name = b["bus"].as_str().unwrap_or("?");
        let (data, peak) = (num(b, "data_MB_s"), num(b, "peak_MB_s"));
        assert!(data <= peak * SLACK, "{at}: bus {name} {data} > {peak}");
        assert!(num(b, "bus_util_pct") <= 100.0 + 1e-9, "{at}: bus {name}");
        // No rope capacity: a bus converter on a system bus (what it
        // moves crosses the I/O controller, checked below).
        let rope = num(b, "rope_capacity_MB_s");
        for dir in ["rope_down_MB_s", "rope_up_MB_s"] {
            let x = num(b, dir);
            assert!(
                rope == 0.0 || x <= rope * SLACK,
                "{at}: {name} {dir} {x} > {rope}"
            );
        }
        assert!(
            num(b, "rope_util_pct") <= 100.0 + 1e-9,
            "{at}: ropes of {name}"
        );
        assert!(
            num(b, "io_controller_util_pct") <= 100.0 + 1e-9,
            "{at}: I/O controller above {name}"
        );
    }
    let functions = rows(v, "functions", e);
    assert!(!functions.is_empty(), "{at}: no function");
    for f in &functions {
        let name = f["function"].as_str().unwrap_or("?");
        let ceiling = f["link_ceiling_MB_s"].as_f64().unwrap_or(0.0);
        let (inn, out) = (num(f, "in_MB_s"), num(f, "out_MB_s"));
        if ceiling > 0.0 {
            assert!(inn <= ceiling * SLACK, "{at}: {name} in {inn} > {ceiling}");
            assert!(out <= ceiling * SLACK, "{at}: {name} out {out} > {ceiling}");
        }
        for k in ["card_cpu_util_pct", "cpu_util_pct", "app_cpu_util_pct"] {
            if let Some(u) = f[k].as_f64() {
                assert!((0.0..=100.0 + 1e-9).contains(&u), "{at}: {name} {k} {u}");
            }
        }
        if e.starts_with("lone.") && ceiling > 0.0 {
            let moved = inn.max(out);
            let first = bottleneck.split(';').next().unwrap_or("").trim();
            assert!(
                moved >= 0.95 * ceiling
                    || (!first.is_empty() && !first.starts_with(&format!("link {name}"))),
                "{at}: {name} moves {moved} of its link's {ceiling} MB/s and names no other limit ({bottleneck})"
            );
        }
    }
}

#[test]
fn library_smoke_scenarios_are_plausible() {
    let files = library_scenarios();
    assert!(files.len() >= 10, "library smoke scenarios: {files:?}");
    for path in &files {
        let v = common::run_json(None, path);
        let file = path.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        let exps = v["experiments"].as_array().expect("experiments");
        assert!(!exps.is_empty(), "{file}: no experiment");
        for exp in exps {
            check_experiment(file, &v, exp);
        }
    }
}

#[test]
fn an_rx4640_a6826a_doing_1k_reads_is_bound_by_a_processor_and_says_which() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/smoke/lib-rx4640.toml");
    let v = common::run_json(None, &path);
    let exp = v["experiments"]
        .as_array()
        .expect("experiments")
        .iter()
        .find(|x| x["experiment"] == "a6826a.1k-read")
        .expect("the experiment a6826a.1k-read");
    let bottleneck = exp["bottleneck"].as_str().expect("a bottleneck");
    let first = bottleneck.split(';').next().unwrap_or("").trim();
    assert!(
        first.starts_with("processor of a6826a.") || first.starts_with("CPU "),
        "the first limit is neither the card's processor nor a host CPU: {bottleneck}"
    );
    let busy: f64 = first
        .rsplit_once('(')
        .and_then(|(_, b)| b.strip_suffix("% busy)"))
        .and_then(|p| p.parse().ok())
        .expect("a busy percentage");
    assert!(busy >= 90.0, "{bottleneck}");
}

#[test]
fn a_k580_with_an_hsc_atm622_runs_on_its_hsc_bus() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/smoke/lib-k580.toml");
    let v = common::run_json(None, &path);
    let bus = rows(&v, "buses", "lone.atm622-tx");
    assert_eq!(bus.len(), 1);
    assert_eq!(bus[0]["mode"], "hsc");
    assert!(num(bus[0], "peak_MB_s") <= 160.0 + 1e-6, "{}", bus[0]);
    let f = rows(&v, "functions", "lone.atm622-tx");
    let out = num(f[0], "out_MB_s");
    assert!(out > 0.0);
    // No ropes: the HSC bus's converter sits on Runway, the I/O controller
    // every slot shares, which carries what the card sends.
    assert_eq!(num(bus[0], "rope_capacity_MB_s"), 0.0, "{}", bus[0]);
    assert_eq!(bus[0]["io_controller"], "k580/runway", "{}", bus[0]);
    let runway = num(bus[0], "io_controller_util_pct");
    assert!(runway > 0.0 && runway <= 100.0, "{}", bus[0]);
    // `show server` prints the converter.
    let out = common::iosim(&["show", "server", "k580"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("no ropes: its bus converter sits on the I/O controller above"),
        "{text}"
    );
}

/// The rx2600 smoke run's lone GigE sender, on the A9900A and on a copy of
/// it (through `extends`) whose port `p0` sets `param` to `value`: for
/// each, the experiment row and the port's outbound MB/s.
fn rx2600_sender_with(param: &str, value: u32) -> [(Value, f64); 2] {
    let dir = tempfile::tempdir().expect("tempdir");
    let models = dir.path().join("models/adapters");
    std::fs::create_dir_all(&models).expect("mkdir");
    std::fs::write(
        models.join("derived.toml"),
        format!("kind = \"adapter\"\nname = \"a9900a-derived\"\nextends = \"a9900a\"\n\n[[function]]\nname = \"p0\"\nengine = \"nic\"\n\n[function.param]\n{param} = {{ value = {value}, unit = \"count\", source = \"test: no offload\" }}\n"),
    )
    .expect("write");
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/smoke/lib-rx2600.toml"),
    )
    .expect("the rx2600 smoke scenario");
    ["a9900a", "a9900a-derived"].map(|adapter| {
        let scen = dir.path().join(format!("{adapter}.toml"));
        std::fs::write(
            &scen,
            text.replace("adapter = \"a9900a\"", &format!("adapter = \"{adapter}\"")),
        )
        .expect("write");
        let v = common::run_json(Some(&dir.path().join("models")), &scen);
        let out = num(rows(&v, "functions", "lone.gige-tx")[0], "out_MB_s");
        (experiment(&v, "lone.gige-tx").clone(), out)
    })
}

/// TCP segmentation offload cuts the host's CPU per segment sent: the
/// A9900A with TSO against a copy of it (through `extends`) without, on
/// the same rx2600 sending one stream at the link's rate.
#[test]
fn segmentation_offload_cuts_the_senders_cpu() {
    let [(tso, out_tso), (plain, out_plain)] = rx2600_sender_with("tso_segments", 1);
    let (cpu_tso, cpu_plain) = (num(&tso, "cpu_util_pct"), num(&plain, "cpu_util_pct"));
    assert!(
        (out_tso - out_plain).abs() <= 0.02 * out_plain,
        "{out_tso} vs {out_plain}"
    );
    assert!(
        cpu_tso < 0.9 * cpu_plain,
        "TSO {cpu_tso}% against {cpu_plain}% without"
    );
}

/// The `experiment` row of `id` in a run's JSON output.
fn experiment<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["experiments"]
        .as_array()
        .expect("experiments")
        .iter()
        .find(|x| x["experiment"] == id)
        .unwrap_or_else(|| panic!("the experiment {id}"))
}

/// A parallel SCSI link is one half-duplex bus shared by the channel and its
/// devices: reads and writes on one channel share its ceiling (a Fibre
/// Channel port would carry each direction at its own), each channel of a
/// dual-channel card has a bus of its own, and a lone channel doing large
/// reads comes within its connections' cost of its bus's ceiling.
#[test]
fn a_parallel_scsi_channel_shares_one_half_duplex_bus() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/smoke/lib-scsi.toml");
    let v = common::run_json(None, &path);
    // Large reads on one U320 channel: the bus's ceiling, less about one
    // connection (4 us) per 256 KiB I/O besides the command's and status's.
    let f = &rows(&v, "functions", "lone.a7173a-read")[0];
    let ceiling = num(f, "link_ceiling_MB_s");
    assert!(ceiling > 300.0 && ceiling <= 320.0, "{f}");
    let read = num(f, "in_MB_s");
    assert!(read >= 0.9 * ceiling && read <= ceiling * SLACK, "{f}");
    // Reads and writes at once on one channel: their sum within the bus.
    let f = &rows(&v, "functions", "a7173a.read+write-one-bus")[0];
    let (inn, out) = (num(f, "in_MB_s"), num(f, "out_MB_s"));
    assert!(inn > 0.0 && out > 0.0, "{f}");
    assert!(
        inn + out <= ceiling * SLACK,
        "half duplex: {inn} + {out} > {ceiling}"
    );
    // Two channels, two buses: together more than one bus carries.
    let both: f64 = rows(&v, "functions", "a7173a.two-channels")
        .iter()
        .map(|f| num(f, "in_MB_s") + num(f, "out_MB_s"))
        .sum();
    assert!(both > 1.5 * ceiling, "two channels move {both} MB/s");
    // 1 KB reads: bound by the bus (its connections) or the channel's
    // processor, and the output says which.
    let exp = experiment(&v, "a7173a.1k-read");
    let bottleneck = exp["bottleneck"].as_str().expect("a bottleneck");
    let first = bottleneck.split(';').next().unwrap_or("").trim();
    assert!(
        first.starts_with("link a7173a.ch0") || first.starts_with("processor of a7173a.ch0"),
        "1 KB reads on a U320 channel: {bottleneck}"
    );
    // The A6829A's U160 channel in a PCI slot: within 160 MB/s.
    let f = &rows(&v, "functions", "lone.a6829a-read")[0];
    let ceiling = num(f, "link_ceiling_MB_s");
    assert!(ceiling > 150.0 && ceiling <= 160.0, "{f}");
    assert!(num(f, "in_MB_s") <= ceiling * SLACK, "{f}");
}

/// Checksum offload takes the software checksum off the host: the same
/// rx2600 stream sent by the A9900A (which offloads it) and by a copy of
/// it that does not costs the host the server's `cpu_checksum_per_kb` per
/// KiB more without, at the same throughput. The rx2600 takes it scaled
/// from the rp8400's 0.17 us by the CPUs' ratings (51.4 / 68.5): 0.1276 us
/// a KiB, 0.1246 us a KB of service demand.
#[test]
fn checksum_offload_takes_the_software_checksum_off_the_host() {
    let [(offload, out_offload), (host, out_host)] = rx2600_sender_with("tx_checksum_offload", 0);
    let (sd_offload, sd_host) = (
        num(&offload, "service_demand_us_per_KB"),
        num(&host, "service_demand_us_per_KB"),
    );
    assert!(
        (out_offload - out_host).abs() <= 0.02 * out_host,
        "{out_offload} vs {out_host}"
    );
    let extra = sd_host - sd_offload;
    assert!(
        (extra - 0.1246).abs() <= 0.15 * 0.1246,
        "the host's checksum costs {extra} us a KB (expected 0.1246): {sd_host} against {sd_offload}"
    );
}

/// An experiment may set the N4000's (any server's) CPUs per cell within
/// the server's own: the N4000 at 2 CPUs per cell runs as the n4000-2cpu
/// file does, at 3 (no file) it runs on 3, and 9 (above its 8) is refused
/// with the range.
#[test]
fn an_experiment_sets_the_servers_cpus_per_cell_within_its_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/smoke/lib-n4000-2cpu.toml"),
    )
    .expect("the n4000-2cpu smoke scenario");
    let with = |n: &str| {
        let scen = dir.path().join(format!("n4000-{n}.toml"));
        std::fs::write(
            &scen,
            text.replace(
                "server = \"n4000-2cpu\"",
                &format!("server = \"n4000\"\ncpus_per_cell = {n}"),
            ),
        )
        .expect("write");
        scen
    };
    let file = common::run_json(
        None,
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/smoke/lib-n4000-2cpu.toml"),
    );
    let two = common::run_json(None, &with("2"));
    for id in ["lone.gige-tx", "dma.read+myrinet-write"] {
        let (a, b) = (experiment(&file, id), experiment(&two, id));
        assert_eq!(num(a, "cpus"), 2.0, "{a}");
        assert_eq!(num(b, "cpus"), 2.0, "{b}");
        let (ca, cb) = (num(a, "cpu_util_pct"), num(b, "cpu_util_pct"));
        assert!(
            (ca - cb).abs() <= 0.02 * ca.max(1.0),
            "{id}: CPU {ca} vs {cb}"
        );
        for (fa, fb) in rows(&file, "functions", id)
            .iter()
            .zip(rows(&two, "functions", id))
        {
            let (ta, tb) = (num(fa, "total_MB_s"), num(fb, "total_MB_s"));
            assert!((ta - tb).abs() <= 0.02 * ta.max(1.0), "{id}: {ta} vs {tb}");
        }
    }
    let three = common::run_json(None, &with("3"));
    let e = experiment(&three, "lone.gige-tx");
    assert_eq!(num(e, "cpus"), 3.0, "{e}");
    assert_eq!(rows(&three, "cpus", "lone.gige-tx").len(), 3);
    let out = common::iosim(&["run", with("9").to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cpus_per_cell")
            && err.contains("9 CPUs per cell; server `n4000` takes 1 to 8 CPUs per cell"),
        "{err}"
    );
}
