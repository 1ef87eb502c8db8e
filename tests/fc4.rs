//! The AB379B paper's claims (docs/sources.md#hp-ab379b-2006; stable claim
//! ids), checked against what the real binary predicts for
//! the bundled scenarios in `scenarios/ab379b/`. The paper's charts were
//! lost, so its claims are qualitative and these tests are all it has:
//! `ab379b.slot-266`, `ab379b.scaling-6` and `ab379b.service-demand`, each
//! with the mechanism that makes it hold (or not) in the model.

mod common;

use std::path::Path;

/// `iosim run --format json` of the bundled scenario `scenarios/ab379b/NAME`.
fn run(name: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/ab379b")
        .join(name);
    common::run_json(None, &path)
}

/// Throughput (MB/s, both directions, every function) of experiment `id`.
fn total_mb_s(v: &serde_json::Value, id: &str) -> f64 {
    let rows: Vec<f64> = v["functions"]
        .as_array()
        .expect("functions")
        .iter()
        .filter(|f| f["experiment"] == id)
        .map(|f| f["total_MB_s"].as_f64().expect("MB/s"))
        .collect();
    assert!(!rows.is_empty(), "no experiment {id}");
    rows.iter().sum()
}

/// The `experiments` row of experiment `id`.
fn experiment<'a>(v: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    v["experiments"]
        .as_array()
        .expect("experiments")
        .iter()
        .find(|e| e["experiment"] == id)
        .unwrap_or_else(|| panic!("no experiment {id}"))
}

fn bottleneck(v: &serde_json::Value, id: &str) -> String {
    experiment(v, id)["bottleneck"]
        .as_str()
        .expect("bottleneck")
        .to_string()
}

#[test]
fn ab379b_slot_266_the_266_slots_are_best_and_133_or_shared_66_clearly_slower() {
    let v = run("rx6600-slot-types.toml");
    let t266 = total_mb_s(&v, "slot3.pcix266");
    let t133 = total_mb_s(&v, "slot5.pcix133");
    let t66 = total_mb_s(&v, "slot7.pcix66-shared");
    // Clearly slower: at least a fifth below the 266 slot, each.
    assert!(
        t133 < 0.8 * t266 && t66 < 0.8 * t266,
        "dual-port bidirectional 256 KB: slot 3 {t266:.0}, slot 5 {t133:.0}, slot 7 {t66:.0} MB/s"
    );
    assert!(
        t66 < t133,
        "shared PCI-X 66 {t66:.0} vs PCI-X 133 {t133:.0}"
    );
    // The mechanism: in a PCI-X 266 slot the four 4 Gb links are the limit
    // (the card gets what its ports carry); in the slower slots, the bus.
    let b266 = bottleneck(&v, "slot3.pcix266");
    assert!(
        b266.starts_with("link") && !b266.contains("bus ab379b@"),
        "slot 3: {b266}"
    );
    for id in ["slot5.pcix133", "slot7.pcix66-shared"] {
        let b = bottleneck(&v, id);
        assert!(b.contains("bus ab379b@"), "{id}: {b}");
    }
    let buses = common::bus_rows(&v);
    let peak = |mode: &str| {
        buses
            .iter()
            .find(|b| b.1 == mode)
            .map(|b| b.3)
            .expect("the bus")
    };
    // What a slower slot delivers is near its bus's peak, not the links'.
    assert!(t133 > 0.8 * peak("pcix133") && t133 <= peak("pcix133"));
    assert!(t66 > 0.8 * peak("pcix66") && t66 <= peak("pcix66"));
}

#[test]
fn ab379b_in_a_266_slot_each_port_reaches_its_4gb_link_at_256_kb() {
    let v = run("rx6600-throughput-256k.toml");
    for f in v["functions"].as_array().expect("functions") {
        let (out, inn) = (
            f["out_MB_s"].as_f64().expect("out"),
            f["in_MB_s"].as_f64().expect("in"),
        );
        if out + inn == 0.0 {
            continue; // the idle port of a single-port experiment
        }
        let ceiling = f["link_ceiling_MB_s"].as_f64().expect("ceiling");
        for (way, mb) in [("out", out), ("in", inn)] {
            assert!(
                mb == 0.0 || mb > 0.97 * ceiling,
                "{} {}: {way} {mb:.1} MB/s of a {ceiling:.1} MB/s link",
                f["experiment"],
                f["function"]
            );
        }
    }
    // Two ports move twice what one does.
    for d in ["read", "write", "bidirectional"] {
        let (one, two) = (
            total_mb_s(&v, &format!("1port.{d}")),
            total_mb_s(&v, &format!("2port.{d}")),
        );
        assert!(
            (two / one - 2.0).abs() < 0.05,
            "{d}: one port {one:.0}, two {two:.0} MB/s"
        );
    }
}

/// Aggregate MB/s of n = 1..6 adapters on the sx2000.
fn scaling() -> Vec<f64> {
    let v = run("sx2000-scaling.toml");
    (1..=6).map(|n| total_mb_s(&v, &format!("n{n}"))).collect()
}

/// Each aggregate `agg[n - 1]` of n adapters is within 5% of n times one.
fn assert_within_5_percent_of_linear(agg: &[f64]) {
    for (i, a) in agg.iter().enumerate() {
        let n = (i + 1) as f64;
        let ideal = n * agg[0];
        assert!(
            (a - ideal).abs() <= 0.05 * ideal,
            "{n} adapters: {a:.0} MB/s, {n} x one = {ideal:.0}"
        );
    }
}

#[test]
fn ab379b_scaling_is_linear_while_the_adapters_are_in_pcix_266_slots() {
    // n = 1..4: every adapter in a PCI-X 266 slot (two per I/O chassis).
    assert_within_5_percent_of_linear(&scaling()[..4]);
}

#[test]
#[ignore = "fails from the mechanisms: the sx2000's two I/O chassis (a 16-way = 2 cells) have four PCI-X 266 slots, so adapters 5 and 6 go to PCI-X 133 slots (2 ropes, 1066 MB/s), where each gets 593 MB/s instead of 826: the LBA's 2 KB posted-write buffer (assumed) holds one 2 KB write burst (assumed) and stores it whole before it goes up the ropes, so the bus and the ropes take turns (bus 58% busy). Aggregate 3895 MB/s at n = 5 (5.7% below 5 x 825.6) and 4487 at n = 6 (9.4% below 6 x 825.6). The SBA is not the limit (53% busy, 4250 MB/s each way). An LBA that streamed its writes (`posted_writes_cut_through = 1`) would give 826 MB/s in those slots and linear scaling, but the rp8400's LBA refit that way to a MAPE of 4.65% against 3.97%, and the sx2000 LBA's behaviour is not in the facts"]
fn ab379b_scaling_6_aggregate_of_n_adapters_within_5_percent_of_n_times_one() {
    assert_within_5_percent_of_linear(&scaling());
}

#[test]
fn ab379b_service_demand_falls_steeply_from_1_to_8_kb_and_stays_low() {
    let v = run("rx6600-iops.toml");
    let sd = |id: &str| {
        experiment(&v, id)["service_demand_us_per_KB"]
            .as_f64()
            .expect("service demand")
    };
    for ports in ["1port", "2port"] {
        for d in ["read", "write"] {
            let [s1, s4, s8] = [1, 4, 8].map(|k| sd(&format!("{ports}.{d}.{k}k")));
            assert!(
                s1 > s4 && s4 > s8,
                "{ports} {d}: 1 KB {s1:.2}, 4 KB {s4:.2}, 8 KB {s8:.2} CPU ms per MB"
            );
            // Steeply: a fixed cost per I/O makes it fall about as the size
            // grows, by far more than half.
            assert!(s1 > 4.0 * s8, "{ports} {d}: 1 KB {s1:.2}, 8 KB {s8:.2}");
        }
    }
    // Stays low: at 256 KB, under a tenth of the 8 KB demand.
    let big = run("rx6600-throughput-256k.toml");
    let s256 = experiment(&big, "2port.read")["service_demand_us_per_KB"]
        .as_f64()
        .expect("service demand");
    let s8 = sd("2port.read.8k");
    assert!(s256 < 0.1 * s8, "256 KB {s256:.3}, 8 KB {s8:.3}");
}

#[test]
fn ab379b_small_block_iops_are_bounded_per_port_by_a_processor() {
    // One port's 1 KB IOPS are limited by a processor working on each I/O
    // (the host's interrupt CPU or the card's own), not by the link or bus,
    // and the second port, with its own interrupt CPU and card processor,
    // doubles them.
    let v = run("rx6600-iops.toml");
    let b = bottleneck(&v, "1port.read.1k");
    assert!(
        b.starts_with("CPU") || b.starts_with("processor of"),
        "1 KB read: {b}"
    );
    let (one, two) = (
        total_mb_s(&v, "1port.read.1k"),
        total_mb_s(&v, "2port.read.1k"),
    );
    assert!(
        (two / one - 2.0).abs() < 0.05,
        "1 KB: {one:.1}, {two:.1} MB/s"
    );
}
