//! The qualitative findings of page 2 of the ATM report (one adapter in a 1-CPU N4000, and
//! its highlights), of the rp7410 Gigabit Ethernet paper and of the HP-UX 11i v3 mass storage
//! paper (stable claim ids: `atm1.*`, `rp7410.*`, `hpuxms.*`), each checked as
//! the paper states it against what the real binary predicts with the bundled fit: the
//! bundled scenarios of those papers, and for `atm1.eight-622` and `atm1.window-144k`
//! scenarios written here. A claim the model misses is an ignored test whose reason gives
//! the model's numbers (seed 1).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What one experiment of `iosim run --format json` gives.
#[derive(Debug, Default)]
struct Exp {
    /// Function label -> (throughput both ways, the link's goodput ceiling one way), Mbit/s.
    functions: BTreeMap<String, (f64, f64)>,
    /// Whole-system CPU utilisation, percent.
    cpu_pct: f64,
    bottleneck: String,
}

impl Exp {
    /// The experiment's throughput summed over its functions, Mbit/s.
    fn total(&self) -> f64 {
        self.functions.values().map(|f| f.0).sum()
    }
}

/// Experiment id -> what it gives, for the scenario file `scenario`.
fn run(scenario: &Path) -> BTreeMap<String, Exp> {
    let js = common::run_json(None, scenario);
    let mut out: BTreeMap<String, Exp> = BTreeMap::new();
    for e in js["experiments"].as_array().expect("experiments") {
        let x = out
            .entry(e["experiment"].as_str().expect("id").to_string())
            .or_default();
        x.cpu_pct = e["cpu_util_pct"].as_f64().expect("cpu_util_pct");
        x.bottleneck = e["bottleneck"].as_str().expect("bottleneck").to_string();
    }
    for f in js["functions"].as_array().expect("functions") {
        let x = out
            .get_mut(f["experiment"].as_str().expect("experiment"))
            .expect("the function's experiment");
        x.functions.insert(
            f["function"].as_str().expect("function").to_string(),
            (
                f["total_Mbit_s"].as_f64().expect("total_Mbit_s"),
                f["link_ceiling_MB_s"].as_f64().expect("link_ceiling_MB_s") * 8.0,
            ),
        );
    }
    out
}

/// A bundled scenario file, by its path under `scenarios/`.
fn bundled(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(path)
}

/// Runs the experiments `body` (TOML of `[[experiment]]` tables) as one scenario.
fn run_written(body: &str) -> BTreeMap<String, Exp> {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("claims.toml");
    let text = format!(
        "[scenario]\nname = \"claims\"\ntitle = \"claims\"\n\n[run]\nwarmup_ms = 20\nduration_ms = 200\nprecision_pct = 1\nmin_ms = 20\nbatch_ms = 2\n{body}"
    );
    std::fs::write(&file, text).expect("scenario");
    run(&file)
}

#[test]
fn atm1_one_card_carries_its_line_rate_each_way_and_their_sum_bidirectional() {
    // ATM/622 Classical IP in the paper: 538 out, 535 in, 1005 bidirectional. "About its
    // line rate": at least 90% of the link's TCP goodput ceiling; "close to the sum": at
    // least 90% of out plus in. At large MTU: Classical IP 9180 and LANE 9218.
    for (file, card) in [
        ("atm/table2-atm155-n4000-1cpu.toml", "atm155"),
        ("atm/table3-atm622-n4000-1cpu.toml", "atm622"),
    ] {
        let r = run(&bundled(file));
        for interface in ["clip9180", "lane9218"] {
            let at = |d: &str| &r[&format!("{card}.{d}.{interface}")];
            let (out, inn, bd) = (at("out"), at("in"), at("bd"));
            let ceiling = out.functions["atm0.atm"].1;
            for (d, e) in [("out", out), ("in", inn)] {
                assert!(
                    e.total() >= 0.9 * ceiling,
                    "{card} {interface} {d}: {} Mbit/s against a ceiling of {ceiling}",
                    e.total()
                );
            }
            assert!(
                bd.total() >= 0.9 * (out.total() + inn.total()),
                "{card} {interface}: bidirectional {} against out {} + in {}",
                bd.total(),
                out.total(),
                inn.total()
            );
        }
    }
}

#[test]
fn atm1_eight_622_reach_about_4_2_gbit_unidirectional() {
    // Eight ATM/622 in one N4000: the four Twin Turbo slots and two Turbo slots under each
    // IKE, as the report's guidelines spread adapters over both I/O controllers. LANE MTU
    // 9218, the interface of the report's multi-adapter tables; 144 KiB sockets and sends.
    let slots = [
        "ike0-twin-turbo-1",
        "ike1-twin-turbo-1",
        "ike0-twin-turbo-2",
        "ike1-twin-turbo-2",
        "ike0-turbo-1",
        "ike1-turbo-1",
        "ike0-turbo-2",
        "ike1-turbo-2",
    ];
    let cards: Vec<(&str, &str)> = slots.iter().map(|s| ("a5513a", *s)).collect();
    let r = run_written(
        &[
            common::atm_experiment(
                "out",
                "n4000",
                &cards,
                "atm622-lane9218",
                "transmit",
                (144, 144),
            ),
            common::atm_experiment(
                "in",
                "n4000",
                &cards,
                "atm622-lane9218",
                "receive",
                (144, 144),
            ),
        ]
        .concat(),
    );
    let best = r["out"].total().max(r["in"].total());
    assert!(
        (best - 4200.0).abs() <= 0.15 * 4200.0,
        "eight ATM/622: {} Mbit/s outbound, {} inbound, against about 4200",
        r["out"].total(),
        r["in"].total()
    );
}

/// One ATM/622 in the 1-CPU N4000, outbound over Classical IP (the report's Figure 1
/// set-up), with a socket (the window) of `socket` KiB and sends of `message` KiB.
fn one_atm622_outbound(id: &str, socket: u32, message: u32) -> String {
    common::atm_experiment(
        id,
        "n4000-1cpu",
        &[("a5513a", "ike0-twin-turbo-1")],
        "atm622-clip9180",
        "transmit",
        (socket, message),
    )
}

#[test]
#[ignore = "model miss (seed 1): a 64 KiB window gives 538.0 Mbit/s, as 144 KiB does: the link, not \
            the window, limits one ATM/622 sending; the model's round trip (the peer's assumed \
            100 us turnaround, the cells and the stacks) is too short for 64 KiB to bind"]
fn atm1_window_144k_needed() {
    // The 64 KB default falls short of the 144 KB window: by more than the runs' 1%
    // precision allows either way.
    let r = run_written(
        &[
            one_atm622_outbound("w64", 64, 64),
            one_atm622_outbound("w144", 144, 144),
        ]
        .concat(),
    );
    let (w64, w144) = (r["w64"].total(), r["w144"].total());
    assert!(
        w64 < 0.97 * w144,
        "a 64 KiB window gives {w64} Mbit/s, 144 KiB {w144}"
    );
}

#[test]
fn atm1_window_144k_makes_message_size_irrelevant() {
    // At a 144 KB window the send size (256 bytes to 64 KB in the report's Figure 1; 8 to
    // 144 KiB here) does not change throughput: within 3%.
    let sizes = [8, 32, 64, 144];
    let body: String = sizes
        .iter()
        .map(|m| one_atm622_outbound(&format!("m{m}"), 144, *m))
        .collect();
    let r = run_written(&body);
    let top = r["m144"].total();
    for m in sizes {
        let t = r[&format!("m{m}")].total();
        assert!(
            (t - top).abs() <= 0.03 * top,
            "{m} KiB sends: {t} Mbit/s against {top} with 144 KiB sends"
        );
    }
}

/// The rp7410 scenario's experiments.
fn rp7410() -> BTreeMap<String, Exp> {
    run(&bundled("rp7410/gige-cpu.toml"))
}

#[test]
fn rp7410_four_cards_unidirectional_at_link_rate_without_saturating_the_cpus() {
    let r = rp7410();
    for d in ["tx", "rx"] {
        let e = &r[&format!("{d}.4card")];
        assert_eq!(e.functions.len(), 4, "{d}: {e:?}");
        for (f, (t, ceiling)) in &e.functions {
            assert!(
                *t >= 0.9 * ceiling,
                "{d}: {f} carries {t} Mbit/s of a {ceiling} ceiling"
            );
        }
        assert!(
            e.cpu_pct < 95.0,
            "{d}: four cards take {}% of the CPUs",
            e.cpu_pct
        );
    }
}

/// Bidirectional costs more than either direction with one, two and four
/// cards, and four cards bidirectional saturate the CPUs: each card's
/// interrupt CPU saturates, and the CPUs left free take the processes
/// placed beside them (src/sim/cpu.rs), as the paper's 99.9% says.
#[test]
fn rp7410_bidirectional_costs_more_and_saturates_the_cpus_with_four_cards() {
    let r = rp7410();
    for n in [1, 2, 4] {
        let cpu = |d: &str| r[&format!("{d}.{n}card")].cpu_pct;
        assert!(
            cpu("bd") > cpu("tx") && cpu("bd") > cpu("rx"),
            "{n} cards: bidirectional {}%, transmit {}%, receive {}%",
            cpu("bd"),
            cpu("tx"),
            cpu("rx")
        );
    }
    let bd = &r["bd.4card"];
    let ceiling: f64 = bd.functions.values().map(|f| 2.0 * f.1).sum();
    assert!(
        bd.cpu_pct >= 95.0 && bd.bottleneck.starts_with("CPU"),
        "four cards bidirectional: {}% of the CPUs, bottleneck {}",
        bd.cpu_pct,
        bd.bottleneck
    );
    assert!(
        bd.total() < 0.9 * ceiling,
        "four cards bidirectional carry {} Mbit/s of {ceiling}",
        bd.total()
    );
}

#[test]
#[ignore = "model miss (seed 1): four ports of two AB379B carry 1651.1 MB/s reading and 1650.7 writing, four \
            times one port's 412.7 (read) and 412.7 (write): nothing above the two PCI-X 266 slots' \
            ropes is shared in the rx6600 model"]
fn hpuxms_four_ports_deliver_well_below_four_times_one() {
    // About 1470 MB/s (within 10%), well below four times one port's 412 MB/s (less
    // than 92% of it; the paper's 1470 is 89%).
    let r = run(&bundled("hpuxms/rx6600-ab379b-throughput.toml"));
    for d in ["rd", "wr"] {
        let one = r[&format!("1port.{d}")].total() / 8.0;
        let four = r[&format!("4port.{d}")].total() / 8.0;
        assert!(
            four < 0.92 * 4.0 * one && (four - 1470.0).abs() <= 0.1 * 1470.0,
            "{d}: four ports {four} MB/s, one port {one}"
        );
    }
}
