//! The ATM paper's claims (docs/sources.md#hp-atm-1999; stable claim ids),
//! checked against what the real binary predicts with
//! the bundled fit: `atm.mtu` from the bundled Table 8 and 9 scenarios,
//! `atm.socket-size`, `atm.vclass.per-controller` and
//! `atm.nclass.twin-turbo` from scenarios written here.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

/// Figure id -> prediction, from `iosim validate --format json`.
fn validated() -> &'static BTreeMap<String, f64> {
    static V: OnceLock<BTreeMap<String, f64>> = OnceLock::new();
    V.get_or_init(|| {
        let js = common::validate_json();
        js["figures"]
            .as_array()
            .expect("figures")
            .iter()
            .map(|f| {
                (
                    f["id"].as_str().expect("id").to_string(),
                    f["predicted"].as_f64().expect("predicted"),
                )
            })
            .collect()
    })
}

fn v(id: &str) -> f64 {
    *validated()
        .get(id)
        .unwrap_or_else(|| panic!("no prediction for {id}"))
}

#[test]
#[ignore = "model miss: the ATM/155 outbound at LANE 1516 reaches its link (513.9 Mbit/s for \
            four cards against 536.3 at 9218, seed 1; Table 8: 475 against 538), so the large \
            MTU's gain outbound is 4% where the report has 13%; the other five pairs hold; run \
            with --ignored to see it fail"]
fn atm_mtu_9218_beats_1516_most_of_all_inbound_and_bidirectional() {
    for card in ["atm155", "atm622"] {
        for d in ["out", "in", "bd"] {
            let (big, small) = (
                v(&format!("atm.{card}.{d}.mtu9218")),
                v(&format!("atm.{card}.{d}.mtu1516")),
            );
            assert!(
                big > small * 1.1,
                "{card} {d}: MTU 9218 {big} vs 1516 {small}"
            );
        }
    }
    // The gain of the large MTU is larger inbound and bidirectional than
    // outbound, summed over both adapters' tables.
    let gain = |d: &str| -> f64 {
        ["atm155", "atm622"]
            .iter()
            .map(|c| v(&format!("atm.{c}.{d}.mtu9218")) / v(&format!("atm.{c}.{d}.mtu1516")))
            .sum::<f64>()
    };
    let (out, inn, bd) = (gain("out"), gain("in"), gain("bd"));
    assert!(
        inn > out && bd > out,
        "gain 9218/1516 out {out}, in {inn}, bd {bd}"
    );
}

/// One experiment: `cards` (adapter, slot) on `server`, each running netperf
/// `direction` with `socket_kib` over `link` (sends of the socket's size).
fn experiment(
    id: &str,
    server: &str,
    cards: &[(&str, &str)],
    link: &str,
    direction: &str,
    socket_kib: u32,
) -> String {
    common::atm_experiment(id, server, cards, link, direction, (socket_kib, socket_kib))
}

/// Runs the experiments; experiment id -> mean throughput per adapter
/// (Mbit/s, both directions).
fn run(experiments: &[String]) -> BTreeMap<String, f64> {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("atm.toml");
    let text = format!(
        "[scenario]\nname = \"atm-claims\"\ntitle = \"ATM claims\"\n\n[run]\nwarmup_ms = 20\nduration_ms = 100\n{}",
        experiments.concat()
    );
    std::fs::write(&file, text).expect("scenario");
    per_adapter(&common::run_json(None, Path::new(&file)))
}

fn per_adapter(js: &serde_json::Value) -> BTreeMap<String, f64> {
    let mut sum: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for f in js["functions"].as_array().expect("functions") {
        let e = sum
            .entry(f["experiment"].as_str().expect("experiment").to_string())
            .or_default();
        e.0 += f["total_Mbit_s"].as_f64().expect("total_Mbit_s");
        e.1 += 1;
    }
    sum.into_iter()
        .map(|(k, (t, n))| (k, t / n as f64))
        .collect()
}

/// One ATM/622 receiving over `link` in an N4000's first Twin Turbo slot,
/// at each socket size of `sizes` (KiB, messages as large): experiment
/// `sSIZE` -> its throughput (Mbit/s, both directions).
fn one_622_receiving(link: &str, sizes: &[u32]) -> BTreeMap<String, f64> {
    let exps: Vec<String> = sizes
        .iter()
        .map(|s| {
            experiment(
                &format!("s{s}"),
                "n4000",
                &[("a5513a", "ike0-twin-turbo-1")],
                link,
                "receive",
                *s,
            )
        })
        .collect();
    run(&exps)
}

#[test]
fn atm_socket_size_knee_at_or_below_144_kib() {
    // "Socket (TCP window) size ... of at least 144 KB on the receiver ...
    // are needed for best throughput": one ATM/622 receiving (the receiver's
    // socket is the window) over LANE MTU 9218 and 1516: throughput against
    // socket size rises, then is flat from 144 KiB on (the other side of the
    // claim, that less than 144 KiB falls short, is
    // `atm_socket_size_below_144_kib_falls_short`).
    for (link, sizes) in [
        (
            "atm622-lane9218",
            &[24, 32, 48, 64, 96, 128, 144, 256, 512][..],
        ),
        ("atm622-lane1516", &[4, 8, 16, 32, 64, 144, 512][..]),
    ] {
        let t = one_622_receiving(link, sizes);
        let at = |s: u32| t[&format!("s{s}")];
        let top = at(512);
        assert!(
            at(144) >= 0.98 * top,
            "{link}: 144 KiB gives {} of {top}: the knee is above 144 KiB ({t:?})",
            at(144)
        );
        let least = sizes[0];
        assert!(
            at(least) < 0.9 * top,
            "{link}: a {least} KiB socket gives {} of {top}: no knee ({t:?})",
            at(least)
        );
        for w in sizes.windows(2) {
            assert!(
                at(w[1]) >= at(w[0]) * 0.99,
                "{link}: throughput falls from {} to {} KiB ({t:?})",
                w[0],
                w[1]
            );
        }
    }
}

#[test]
#[ignore = "model miss: one ATM/622 receiving alone over LANE 9218 reaches its link, 537.5 \
            Mbit/s (seed 1; the ATM report measures 537), with the 64 KiB default as with 144 and \
            512 KiB: the model's round trip (the peer's assumed 100 us turnaround, the cells and \
            the stacks) is too short for a 64 KiB window to bind; run with --ignored to see it fail"]
fn atm_socket_size_below_144_kib_falls_short() {
    // The claim's other side ("at least 144 KB ... needed"; page 2: "the
    // default is 64 KB"): one ATM/622 receiving over LANE MTU 9218 with the
    // 64 KiB default socket falls short of its best.
    let t = one_622_receiving("atm622-lane9218", &[64, 144, 512]);
    let (default, top) = (t["s64"], t["s512"]);
    assert!(
        default < 0.95 * top,
        "the 64 KiB default gives {default} of {top}: 144 KiB is not needed ({t:?})"
    );
}

#[test]
#[ignore = "model gap: the N4000's stack has no cost per send() call (its model sets no \
            cpu_per_send_call), so netperf's send size changes nothing: one ATM/622 sending \
            over LANE 9218 with a 144 KiB socket moves the same with 4, 16, 64 and 144 \
            KiB messages alike (537.5 Mbit/s, its link's rate, seed 1); run with --ignored to see it fail"]
fn atm_larger_messages_are_better() {
    // "... and message length of at least 144 KB ... larger messages are
    // better": one ATM/622 sending over LANE MTU 9218 with a 144 KiB socket,
    // netperf's send size from 4 to 144 KiB. Throughput never falls as the
    // message grows, and small messages fall short of 144 KiB ones.
    let sizes = [4, 16, 64, 144];
    let exps: Vec<String> = sizes
        .iter()
        .map(|m| {
            common::atm_experiment(
                &format!("m{m}"),
                "n4000",
                &[("a5513a", "ike0-twin-turbo-1")],
                "atm622-lane9218",
                "transmit",
                (144, *m),
            )
        })
        .collect();
    let t = run(&exps);
    let at = |m: u32| t[&format!("m{m}")];
    for w in sizes.windows(2) {
        assert!(
            at(w[1]) >= at(w[0]) * 0.99,
            "throughput falls from {} to {} KiB messages ({t:?})",
            w[0],
            w[1]
        );
    }
    assert!(
        at(4) < 0.95 * at(144),
        "4 KiB messages give {} of {}: larger messages are not better ({t:?})",
        at(4),
        at(144)
    );
}

#[test]
fn atm_vclass_per_controller_a_fourth_155_and_a_second_622_get_less() {
    // On one V2500 EPIC (one shared 64-bit 33 MHz PCI bus), outbound TCP over
    // LANE MTU 9218, where the cards' DMA reads load the bus most.
    let slots = ["epic0-1", "epic0-2", "epic0-3", "epic0-4"];
    let on = |adapter: &'static str, n: usize| -> Vec<(&'static str, &'static str)> {
        slots[..n].iter().map(|s| (adapter, *s)).collect()
    };
    let t = run(&[
        experiment(
            "155x3",
            "v2500",
            &on("a5483a", 3),
            "atm155-lane9218",
            "transmit",
            144,
        ),
        experiment(
            "155x4",
            "v2500",
            &on("a5483a", 4),
            "atm155-lane9218",
            "transmit",
            144,
        ),
        experiment(
            "622x1",
            "v2500",
            &on("a5513a", 1),
            "atm622-lane9218",
            "transmit",
            144,
        ),
        experiment(
            "622x2",
            "v2500",
            &on("a5513a", 2),
            "atm622-lane9218",
            "transmit",
            144,
        ),
    ]);
    assert!(
        t["155x4"] < 0.95 * t["155x3"],
        "a fourth ATM/155: {} per adapter against {} with three",
        t["155x4"],
        t["155x3"]
    );
    assert!(
        t["622x2"] < 0.95 * t["622x1"],
        "a second ATM/622: {} per adapter against {} alone",
        t["622x2"],
        t["622x1"]
    );
}

#[test]
#[ignore = "model gap: four ATM/622 on the N4000 reach their links and their cards' engines, \
            not limited by the slots or IKEs, so Twin Turbo or Turbo slots, one IKE or two, predict the same \
            throughput (1069.1 Mbit/s per adapter bidirectional, LANE 9218, seed 1, in each of \
            the three: spread over Twin Turbo, in Turbo slots, on one IKE); the shared limit of the \
            report's four-card tables is not modelled (docs/model.md); `iosim place` prefers the \
            spread by headroom among such ties (tests/place.rs), not by throughput; run with \
            --ignored to see it fail"]
fn atm_nclass_twin_turbo_spread_beats_turbo_and_one_controller() {
    let cards = |slots: [&'static str; 4]| -> Vec<(&'static str, &'static str)> {
        slots.iter().map(|s| ("a5513a", *s)).collect()
    };
    let spread = cards([
        "ike0-twin-turbo-1",
        "ike1-twin-turbo-1",
        "ike0-twin-turbo-2",
        "ike1-twin-turbo-2",
    ]);
    let turbo = cards([
        "ike0-turbo-1",
        "ike1-turbo-1",
        "ike0-turbo-2",
        "ike1-turbo-2",
    ]);
    let one = cards([
        "ike0-twin-turbo-1",
        "ike0-twin-turbo-2",
        "ike0-turbo-1",
        "ike0-turbo-2",
    ]);
    for (link, dir) in [
        ("atm622-lane9218", "bidirectional"),
        ("atm622-lane9218", "transmit"),
    ] {
        let t = run(&[
            experiment("spread", "n4000", &spread, link, dir, 144),
            experiment("turbo", "n4000", &turbo, link, dir, 144),
            experiment("one", "n4000", &one, link, dir, 144),
        ]);
        assert!(
            t["spread"] > 1.02 * t["turbo"] && t["spread"] > 1.02 * t["one"],
            "{link} {dir}: {t:?}"
        );
    }
}
