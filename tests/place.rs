//! `iosim place`: the papers' placement guidelines as they come out of the
//! search on the bundled models (hp2g.dual-function,
//! atm.vclass.per-controller, ab379b.slot-266; stable claim ids;
//! atm.nclass.twin-turbo only as the advice a tie gives, see
//! `atm_nclass_four_atm622_go_in_the_twin_turbo_slots`), the output formats,
//! determinism, and the
//! errors of impossible requests. The request files are under
//! `tests/place/`. Nothing here states where a card should go: each test
//! reads the ranking the search and the simulations produced.

mod common;
use common::iosim;
use std::path::Path;

/// `iosim place FILE --format json` plus `extra`, parsed.
fn place(file: &str, extra: &[&str]) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/place")
        .join(file);
    let path = path.to_str().expect("utf-8 path");
    let mut args = vec!["place", path, "--format", "json"];
    args.extend_from_slice(extra);
    json_of(&iosim(&args), file)
}

/// The JSON output of a run that must have succeeded (`what` in the panic).
fn json_of(out: &std::process::Output, what: &str) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

/// The ranked placements: (placement, objective value, bottleneck).
fn ranked(js: &serde_json::Value) -> Vec<(String, f64, String)> {
    let obj = js["placements"][0]
        .as_object()
        .expect("a placement")
        .keys()
        .find(|k| k.starts_with("objective_"))
        .expect("an objective field")
        .clone();
    js["placements"]
        .as_array()
        .expect("placements")
        .iter()
        .map(|p| {
            (
                p["placement"].as_str().expect("placement").to_string(),
                p[&obj].as_f64().expect("objective"),
                p["bottleneck"].as_str().expect("bottleneck").to_string(),
            )
        })
        .collect()
}

/// The slots of a placement `card@slot card@slot`.
fn slots(placement: &str) -> Vec<String> {
    placement
        .split(' ')
        .map(|cs| cs.split_once('@').expect("card@slot").1.to_string())
        .collect()
}

/// The header line `key: value` of a JSON report.
fn meta(js: &serde_json::Value, key: &str) -> String {
    js[key]
        .as_str()
        .unwrap_or_else(|| panic!("no meta {key}: {js}"))
        .to_string()
}

/// Share of demand (percent) of every card and port of rank 1.
fn shares(js: &serde_json::Value) -> Vec<(String, String, f64)> {
    js["adapters"]
        .as_array()
        .expect("adapters")
        .iter()
        .filter(|a| a["rank"].as_u64() == Some(1))
        .map(|a| {
            (
                a["card"].as_str().expect("card").to_string(),
                a["port"].as_str().expect("port").to_string(),
                a["share_pct"].as_f64().expect("share"),
            )
        })
        .collect()
}

#[test]
fn hp2g_dual_function_two_cards_apart_each_port_as_if_alone() {
    // Two A9782A that must not share a bus adapter: the search puts both in
    // Server Expansion Unit PCI-X slots, and every one of the four ports
    // gets at least 90% of what it gets alone (the failover of four
    // single-port adapters in two slots). One-rope internal slots lose.
    let js = place("hp2g-dual-function.toml", &[]);
    assert!(meta(&js, "search").contains("proven best"), "{js}");
    let r = ranked(&js);
    let best = slots(&r[0].0);
    assert_eq!(best.len(), 2);
    assert_ne!(best[0], best[1]);
    assert!(
        best.iter().all(|s| s.starts_with("seu-")),
        "best placement {:?} (ranking {r:?})",
        r[0]
    );
    for (card, port, share) in shares(&js) {
        assert!(share >= 90.0, "{card} {port}: {share}% of its demand");
    }
    let worst = &r[r.len() - 1];
    assert!(
        slots(&worst.0)
            .iter()
            .any(|s| s == "internal-15" || s == "internal-16"),
        "worst {worst:?}"
    );
    assert!(worst.1 < r[0].1 * 0.9, "{r:?}");
}

#[test]
fn hp2g_dual_function_across_chassis_the_internal_card_gets_two_ropes() {
    // Apart by chassis (internal card cage against the SEU): one card in
    // each, and the internal one in a two-rope slot, as the simulation of
    // the distinct placements decides (under the SBAs, internal slots 1-8
    // and the two-rope slots of 9-16 are distinct placements, which tie).
    let js = place("hp2g-dual-function-chassis.toml", &[]);
    assert!(meta(&js, "search").contains("proven best"), "{js}");
    let r = ranked(&js);
    let best = slots(&r[0].0);
    let internal: Vec<&String> = best.iter().filter(|s| s.starts_with("internal-")).collect();
    assert_eq!(internal.len(), 1, "{r:?}");
    assert!(best.iter().any(|s| s.starts_with("seu-")), "{r:?}");
    assert!(
        internal[0] != "internal-15" && internal[0] != "internal-16",
        "{r:?}"
    );
    assert!(r.len() >= 2 && r[r.len() - 1].1 < r[0].1, "{r:?}");
}

#[test]
fn atm_vclass_no_fourth_atm155_under_one_controller_when_another_has_room() {
    // Free: the four slots of EPIC 0 and one of EPIC 1. Three on EPIC 0 and
    // one on EPIC 1 beats four on EPIC 0, whose shared bus saturates.
    let js = place("vclass-atm155.toml", &[]);
    assert!(meta(&js, "search").contains("proven best"), "{js}");
    let r = ranked(&js);
    let best = slots(&r[0].0);
    let on0 = best.iter().filter(|s| s.starts_with("epic0-")).count();
    assert_eq!(on0, 3, "best {:?}", r[0]);
    assert!(best.iter().any(|s| s.starts_with("epic1-")), "{r:?}");
    let four = r
        .iter()
        .find(|p| slots(&p.0).iter().all(|s| s.starts_with("epic0-")))
        .expect("four on EPIC 0 simulated");
    assert!(four.1 < 0.95 * r[0].1, "{r:?}");
    assert!(
        four.2.contains("bus"),
        "four on one EPIC lose to: {}",
        four.2
    );
}

#[test]
fn atm_vclass_no_second_atm622_under_one_controller_when_another_has_room() {
    let js = place("vclass-atm622.toml", &[]);
    let r = ranked(&js);
    let best = slots(&r[0].0);
    let epics: std::collections::BTreeSet<&str> = best
        .iter()
        .map(|s| s.split('-').next().unwrap_or(""))
        .collect();
    assert_eq!(epics.len(), 2, "best {:?}", r[0]);
    let shared = r
        .iter()
        .find(|p| slots(&p.0).iter().all(|s| s.starts_with("epic0-")))
        .expect("two on EPIC 0 simulated");
    assert!(shared.1 < 0.95 * r[0].1, "{r:?}");
}

#[test]
fn atm_nclass_four_atm622_go_in_the_twin_turbo_slots() {
    // Four ATM/622, every N4000 slot free. This checks the advice `place`
    // gives, not the claim atm.nclass.twin-turbo as the paper means it
    // (Twin Turbo slots spread over both IKEs carry more): the model's cards
    // are limited by their own SAR processors wherever they sit, so the
    // placements come out within 1% of each other and the advice comes from
    // the tie-break on headroom (the four Twin Turbo slots, PCI 66 on two
    // ropes, leave each card's bus and ropes least loaded). The claim itself
    // is `atm_nclass_twin_turbo_spread_beats_turbo_and_one_controller` in
    // tests/atm.rs, ignored with its numbers. Whether the best is tied is not
    // asserted: a model whose spread wins outright passes too.
    let js = place("nclass-atm622.toml", &[]);
    assert!(meta(&js, "search").contains("proven best"), "{js}");
    let r = ranked(&js);
    let best = slots(&r[0].0);
    assert!(
        best.iter().all(|s| s.contains("twin-turbo")),
        "best {:?}",
        r[0]
    );
    assert_eq!(best.iter().filter(|s| s.starts_with("ike0-")).count(), 2);
    let top = r.iter().map(|p| p.1).fold(0.0, f64::max);
    assert!(r[0].1 >= 0.99 * top, "{r:?}");
}

#[test]
fn atm_nclass_two_atm622_spread_over_both_io_controllers() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/place/nclass-atm622.toml"),
    )
    .expect("request");
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("two.toml");
    std::fs::write(&file, text.replace("count = 4", "count = 2")).expect("request");
    // Every rank in detail: spreading puts the placements on one IKE below
    // the top three.
    let out = iosim(&[
        "place",
        file.to_str().expect("utf-8"),
        "--format",
        "json",
        "--top",
        "1000",
    ]);
    assert!(out.status.success());
    let js: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let r = ranked(&js);
    let best = slots(&r[0].0);
    assert!(best.iter().all(|s| s.contains("twin-turbo")), "{r:?}");
    assert!(
        best.iter().any(|s| s.starts_with("ike0-")) && best.iter().any(|s| s.starts_with("ike1-")),
        "best {:?} ({r:?})",
        r[0]
    );
    // Two ATM/622 are bound by their own SAR processors wherever they sit,
    // so one IKE and both give the same throughput (95.76 MB/s with seed 1,
    // every placement within 1%): the guideline comes out as headroom, the
    // tie going to the placement that leaves its busiest shared node (then
    // the next) least loaded. Spread, each IKE carries one card; together,
    // one carries both.
    let top = r.iter().map(|p| p.1).fold(0.0, f64::max);
    assert!(r[0].1 >= 0.99 * top, "{r:?}");
    let busiest_controller = |rank: u64| -> f64 {
        js["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .filter(|n| n["rank"] == rank)
            .filter(|n| {
                n["node"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("I/O controller"))
            })
            .map(|n| n["util_pct"].as_f64().expect("util"))
            .fold(0.0, f64::max)
    };
    let together = r
        .iter()
        .position(|p| slots(&p.0).iter().all(|s| s.starts_with("ike0-twin-turbo")))
        .expect("both Twin Turbo slots of one IKE ranked") as u64
        + 1;
    assert!(
        busiest_controller(1) < 0.75 * busiest_controller(together),
        "spread {:.2}% against {:.2}% on one IKE ({r:?})",
        busiest_controller(1),
        busiest_controller(together)
    );
}

#[test]
fn ab379b_reaches_its_throughput_only_in_a_pcix266_slot() {
    let js = place("rx6600-ab379b.toml", &[]);
    assert!(meta(&js, "search").contains("proven best"), "{js}");
    let r = ranked(&js);
    let best = slots(&r[0].0);
    assert!(best == ["slot-3"] || best == ["slot-4"], "{r:?}");
    // Every other slot gives less.
    let others: Vec<&(String, f64, String)> = r
        .iter()
        .filter(|p| !["slot-3", "slot-4"].contains(&slots(&p.0)[0].as_str()))
        .collect();
    assert!(!others.is_empty(), "{r:?}");
    for p in others {
        assert!(p.1 < 0.95 * r[0].1, "{p:?} against {:?}", r[0]);
    }
}

#[test]
fn output_formats_carry_the_same_fields_and_the_seed() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/place/vclass-atm622.toml");
    let path = path.to_str().expect("utf-8");
    let json = iosim(&["place", path, "--format", "json", "--seed", "7"]);
    let csv = iosim(&["place", path, "--format", "csv", "--seed", "7"]);
    let table = iosim(&["place", path, "--seed", "7", "--wide"]);
    for o in [&json, &csv, &table] {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let js: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(js["seed"].as_u64(), Some(7), "{js}");
    let csv = String::from_utf8_lossy(&csv.stdout);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(csv.contains("seed: 7") && table.contains("seed: 7"));
    assert!(table.contains("MB/s = 10^6 bytes/s"));
    for section in ["placements", "adapters", "nodes", "losers", "demand"] {
        let rows = js[section].as_array().expect(section);
        assert!(table.contains(&format!("## {section}")), "{section}");
        assert!(csv.contains(&format!("# section: {section}")), "{section}");
        if let Some(first) = rows.first() {
            for field in first.as_object().expect("record").keys() {
                assert!(csv.contains(field.as_str()), "csv lacks {field}");
                assert!(table.contains(field.as_str()), "table lacks {field}");
            }
        }
    }
}

#[test]
fn the_answer_does_not_depend_on_the_threads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/place/vclass-atm155.toml");
    let path = path.to_str().expect("utf-8");
    let one = iosim(&["place", path, "--format", "json", "--threads", "1"]);
    let four = iosim(&["place", path, "--format", "json", "--threads", "4"]);
    assert!(one.status.success() && four.status.success());
    assert_eq!(one.stdout, four.stdout);
}

/// Runs `iosim place` on a request written from `text`: (exit code, stderr).
fn fails(text: &str) -> (i32, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("req.toml");
    std::fs::write(&file, text).expect("request");
    let out = iosim(&["place", file.to_str().expect("utf-8")]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!err.contains("panicked"), "{err}");
    (out.status.code().unwrap_or(-1), err)
}

const HEAD: &str = "[place]\nserver = \"rx6600\"\ntestbed = \"hp-2004-lab\"\ncells = 1\n";

fn dma_workload(card: &str) -> String {
    format!(
        "\n[[workload]]\ncard = \"{card}\"\nfunction = \"dma\"\nkind = \"dma\"\ndirection = \"read\"\n"
    )
}

#[test]
fn more_cards_than_free_slots_is_an_error_naming_the_counts() {
    let text = format!(
        "{HEAD}taken = [\"slot-3\"]\n\n[[card]]\nname = \"d\"\nadapter = \"dma-exerciser\"\ncount = 8\n{}",
        dma_workload("d")
    );
    let (code, err) = fails(&text);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("req.toml:7")
            && err.contains("8 cards to place but server `rx6600` has only 7 free slots"),
        "{err}"
    );
}

#[test]
fn an_adapter_that_fits_no_free_slot_is_an_error_at_its_key() {
    let text = format!(
        "{HEAD}\n[[card]]\nname = \"p\"\nadapter = \"pci32-exerciser\"\n{}",
        dma_workload("p")
    );
    let (code, err) = fails(&text);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("req.toml:8")
            && err.contains("card[0].adapter")
            && err.contains("fits no free slot"),
        "{err}"
    );
}

#[test]
fn unknown_adapter_and_server_are_errors_listing_the_known_ones() {
    let text = "[place]\nserver = \"rx9999\"\ntestbed = \"hp-2004-lab\"\ncells = 1\n\n[[card]]\nadapter = \"ab999\"\n";
    let (code, err) = fails(text);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("unknown server `rx9999`") && err.contains("rx6600"),
        "{err}"
    );
    let text = format!("{HEAD}\n[[card]]\nname = \"x\"\nadapter = \"ab999\"\n");
    let (code, err) = fails(&text);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("req.toml:8")
            && err.contains("unknown adapter `ab999`")
            && err.contains("a9782a"),
        "{err}"
    );
}

#[test]
fn slots_of_chassis_the_partition_does_not_own_are_not_free() {
    // A two-cell sx2000 partition owns chassis 0 and 1: 24 slots of 192.
    let head = "[place]\nserver = \"sx2000\"\ntestbed = \"hp-2004-lab\"\ncells = 2\n";
    let text = format!(
        "{head}\n[[card]]\nname = \"d\"\nadapter = \"dma-exerciser\"\ncount = 25\n{}",
        dma_workload("d")
    );
    let (code, err) = fails(&text);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("25 cards to place but server `sx2000` has only 24 free slots")
            && err.contains("168 under I/O a partition of 2 cell(s) does not own"),
        "{err}"
    );
    // A card fixed in a slot of chassis 2.
    let text = format!(
        "{head}\n[[card]]\nname = \"d\"\nadapter = \"dma-exerciser\"\nslot = \"chassis2-slot-3\"\n{}",
        dma_workload("d")
    );
    let (code, err) = fails(&text);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("card[0].slot") && err.contains("is in chassis 2 of server `sx2000`"),
        "{err}"
    );
}

#[test]
fn conflicting_constraints_are_errors() {
    // Two cards apart by chassis on a server that is one chassis.
    let text = format!(
        "{HEAD}\n[[card]]\nname = \"d\"\nadapter = \"dma-exerciser\"\ncount = 2\n{}\n[[apart]]\ncards = [\"d\"]\nunder = \"chassis\"\n",
        dma_workload("d")
    );
    let (code, err) = fails(&text);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("apart[0].cards") && err.contains("constraints conflict"),
        "{err}"
    );
    // A card fixed in a slot that is also taken.
    let text = format!(
        "{HEAD}taken = [\"slot-3\"]\n\n[[card]]\nname = \"d\"\nadapter = \"dma-exerciser\"\nslot = \"slot-3\"\n{}",
        dma_workload("d")
    );
    let (code, err) = fails(&text);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("card[0].slot") && err.contains("constraints conflict"),
        "{err}"
    );
    // Two fixed cards that must not share a bus, on one shared segment.
    let text = format!(
        "{HEAD}\n[[card]]\nname = \"a\"\nadapter = \"dma-exerciser\"\nslot = \"slot-7\"\n\n[[card]]\nname = \"b\"\nadapter = \"dma-exerciser\"\nslot = \"slot-8\"\n{}{}\n[[apart]]\ncards = [\"a\", \"b\"]\nunder = \"bus\"\n",
        dma_workload("a"),
        dma_workload("b")
    );
    let (code, err) = fails(&text);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("share one") && err.contains("constraints conflict"),
        "{err}"
    );
}

#[test]
fn every_error_of_a_request_is_reported_with_its_line() {
    let text = "[place]\nserver = \"rx6600\"\ntestbed = \"nowhere\"\ncells = 3\nobjective = \"fastest\"\n\n[[card]]\nadapter = \"a9782a\"\n\n[[workload]]\ncard = \"a9782a\"\nfunction = \"scsi\"\nkind = \"diskbench\"\ndirection = \"read\"\n";
    let (code, err) = fails(text);
    assert_eq!(code, 1, "{err}");
    for want in [
        "req.toml:3",
        "unknown testbed `nowhere`",
        "req.toml:4",
        "3 cells",
        "req.toml:5",
        "unknown objective `fastest`",
        "req.toml:12",
        "unknown function `scsi`",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
}

/// `iosim place` on `text` (a request written to a temporary file), parsed.
fn place_text(text: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("req.toml");
    std::fs::write(&file, text).expect("request");
    let out = iosim(&["place", file.to_str().expect("utf-8"), "--format", "json"]);
    json_of(&out, text)
}

#[test]
fn min_each_ranks_placements_that_meet_the_minimum_first() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/place/vclass-atm155.toml"),
    )
    .expect("request")
    .replace(
        "objective = \"total\"",
        "objective = \"min-each\"\nmin_mb_s = 16",
    );
    let js = place_text(&text);
    let p = js["placements"].as_array().expect("placements");
    assert_eq!(p[0]["meets_min"], "yes", "{js}");
    assert!(p[0]["worst_card_MB_s"].as_f64().expect("MB/s") >= 16.0);
    assert_eq!(p[p.len() - 1]["meets_min"], "no", "{js}");
}

#[test]
fn a_card_with_a_slot_stays_there_and_the_others_avoid_its_bus() {
    // A DMA exerciser already in slot 7 (the PCI-X 66 pair 7-8): a second
    // one goes in a slot of its own, and slot 8 beside it gives far less.
    let text = format!(
        "{HEAD}\n[[card]]\nname = \"old\"\nadapter = \"dma-exerciser\"\nslot = \"slot-7\"\n\n[[card]]\nname = \"new\"\nadapter = \"dma-exerciser\"\n{}{}",
        dma_workload("old"),
        dma_workload("new")
    );
    let js = place_text(&text);
    let r = ranked(&js);
    assert!(r.iter().all(|p| p.0.starts_with("old@slot-7 ")), "{r:?}");
    assert!(!r[0].0.ends_with("new@slot-8"), "{r:?}");
    let beside = r
        .iter()
        .find(|p| p.0.ends_with("new@slot-8"))
        .expect("slot 8 simulated");
    assert!(beside.1 < 0.7 * r[0].1, "{r:?}");
}

#[test]
fn a_simple_request_on_the_command_line() {
    let out = iosim(&[
        "place",
        "--server",
        "v2500",
        "--testbed",
        "hp-1999-atm-lab",
        "--card",
        "atm=a5513a*2",
        "--workload",
        "atm.atm=netperf-tcp-stream:transmit",
        "--format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let js: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let r = ranked(&js);
    let best = slots(&r[0].0);
    assert_ne!(
        best[0].split('-').next(),
        best[1].split('-').next(),
        "{r:?}"
    );
    // A malformed card is a usage error; an unknown function an input error.
    let bad = iosim(&[
        "place",
        "--server",
        "v2500",
        "--testbed",
        "x",
        "--card",
        "atm",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let bad = iosim(&[
        "place",
        "--server",
        "v2500",
        "--testbed",
        "hp-1999-atm-lab",
        "--card",
        "atm=a5513a",
        "--workload",
        "atm.scsi=diskbench:read",
    ]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown function `scsi`"));
}

/// `iosim place` on the command line with `args`, as JSON.
fn place_args(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["place"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    json_of(&iosim(&all), "place")
}

#[test]
fn the_worst_card_is_shown_with_its_own_throughput() {
    // An AB379B (825 MB/s) beside a GigE port (231 MB/s) under `total`: the
    // worst card by share of demand is named with its own figure, never the
    // smallest card's.
    let js = place("rx6600-ab379b-gige.toml", &["--top", "1000"]);
    let placements = js["placements"].as_array().expect("placements");
    assert!(placements.len() > 3, "{js}");
    for p in placements {
        let rank = p["rank"].as_u64().expect("rank");
        let worst = p["worst_card"].as_str().expect("worst card");
        let own = js["adapters"]
            .as_array()
            .expect("adapters")
            .iter()
            .find(|a| {
                a["rank"].as_u64() == Some(rank) && a["card"] == worst && a["port"] == "(card)"
            })
            .unwrap_or_else(|| panic!("rank {rank} card {worst} in adapters"));
        assert_eq!(
            p["worst_card_MB_s"].as_f64(),
            own["total_MB_s"].as_f64(),
            "rank {rank}: {p}"
        );
        assert_eq!(
            p["worst_share_pct"].as_f64(),
            own["share_pct"].as_f64(),
            "rank {rank}: {p}"
        );
    }
}

/// The chassis of a slot of the sx2000 (`chassis4-slot-5`; chassis 0's
/// slots are `slot-N`).
fn sx2000_chassis(slot: &str) -> String {
    slot.split_once("-slot-")
        .map_or("chassis0".to_string(), |x| x.0.to_string())
}

#[test]
fn sx2000_twelve_ab379b_spread_one_per_chassis_without_apart() {
    let js = place("sx2000-12-ab379b.toml", &[]);
    let r = ranked(&js);
    let best = slots(&r[0].0);
    let mut chassis: Vec<String> = best.iter().map(|s| sx2000_chassis(s)).collect();
    chassis.sort();
    chassis.dedup();
    assert_eq!(chassis.len(), 12, "one card per chassis: {:?}", r[0]);
    // It ties placements that pack cards into fewer chassis, and says so.
    let first = &js["placements"][0];
    assert_eq!(first["tied_with_next"], "yes", "{first}");
    let tie = first["tie"].as_str().expect("tie");
    assert!(
        tie.contains("ties rank 2 within 1%") && tie.contains("no two cards share a chassis"),
        "{tie}"
    );
    let why = meta(&js, "why");
    assert!(
        why.contains("what binds it") && why.contains("runner-up"),
        "{why}"
    );
    // Too many placements to simulate each (more than 64): the search
    // splits the 16 chassis, enumerates one, and the fluid bound proves
    // the best within the tie without simulating every leader.
    let search = meta(&js, "search");
    assert!(
        search.contains("split into 16 independent parts")
            && search.contains("1 layout enumerated"),
        "{search}"
    );
    let bound = meta(&js, "bound");
    assert!(
        bound.contains("proven best: no placement can beat it by more than 1%"),
        "{bound}"
    );
    // The bound is above the best, by less than the tie.
    let b: f64 = bound
        .split("no placement can reach more than ")
        .nth(1)
        .and_then(|x| x.split(" MB/s").next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("a bound in MB/s: {bound}"));
    assert!(b >= r[0].1 && b < 1.01 * r[0].1, "{b} against {}", r[0].1);
    assert!(
        js["placements"].as_array().expect("placements").len() < 26,
        "{search}"
    );
    // A loser that ties the best says so.
    for l in js["losers"].as_array().expect("losers") {
        let behind = l["behind_best_MB_s"].as_f64().expect("behind");
        let verdict = l["verdict"].as_str().expect("verdict");
        if behind.abs() < 0.01 * r[0].1 {
            assert!(verdict.starts_with("ties the best"), "{l}");
        } else {
            assert!(verdict.starts_with("loses"), "{l}");
        }
    }
}

#[test]
fn a_standby_card_holds_a_slot_keeps_apart_and_carries_no_load() {
    let fc = "\n[[workload]]\ncard = \"fc\"\nfunction = \"port0\"\nkind = \"diskbench\"\ndirection = \"bidirectional\"\n";
    let head = "[place]\nserver = \"rx6600\"\ntestbed = \"hp-2006-msa1500-lab\"\ncells = 1\n\n[[card]]\nname = \"fc\"\nadapter = \"ab379b\"\n";
    let text = format!(
        "{head}\n[[card]]\nname = \"spare\"\nadapter = \"ab379b\"\nrole = \"standby\"\n{fc}\n[[apart]]\ncards = [\"fc\", \"spare\"]\nunder = \"bus\"\n"
    );
    let js = place_text(&text);
    let r = ranked(&js);
    // The active card gets its PCI-X 266 slot and its whole demand; the
    // spare holds another slot and moves nothing.
    let best = slots(&r[0].0);
    assert_eq!(best[0], "slot-3", "{r:?}");
    assert_ne!(best[0], best[1]);
    let first = &js["placements"][0];
    assert_eq!(first["worst_card"], "fc", "{first}");
    assert!((first["objective_MB_s"].as_f64().expect("objective") - 824.0).abs() < 5.0);
    let spare = js["adapters"]
        .as_array()
        .expect("adapters")
        .iter()
        .find(|a| a["rank"] == 1 && a["card"] == "spare")
        .expect("the spare in adapters");
    assert_eq!(spare["total_MB_s"].as_f64(), Some(0.0), "{spare}");
    // Every placement keeps the two on different buses (none share a slot
    // pair: slot-7/8 would be one bus).
    for p in &r {
        let s = slots(&p.0);
        assert!(
            !(s.contains(&"slot-7".to_string()) && s.contains(&"slot-8".to_string())),
            "{r:?}"
        );
    }
    // A standby card with a workload, and an unknown role, are errors.
    let with_load = format!(
        "{head}\n[[card]]\nname = \"spare\"\nadapter = \"ab379b\"\nrole = \"standby\"\n{fc}{}",
        fc.replace("\"fc\"\nfunction", "\"spare\"\nfunction")
    );
    let (code, err) = fails(&with_load);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("standby card") && err.contains("workload[1].card"),
        "{err}"
    );
    let bad_role = format!("{head}role = \"spare\"\n{fc}");
    let (code, err) = fails(&bad_role);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("unknown role `spare`"), "{err}");
}

#[test]
fn a_one_cell_partition_places_cards_only_under_its_own_cells_io() {
    // rp8400: the internal slots 1-8 hang from cell 0's system bus adapter,
    // 9-16 from cell 1's, the SEU's from cells 2 and 3's. A 1-cell
    // partition owns cell 0's I/O only.
    let js = place_args(&[
        "--server",
        "rp8400-seu",
        "--testbed",
        "hp-2004-lab",
        "--cells",
        "1",
        "--card",
        "d=a9782a*2",
        "--workload",
        "d.fc=diskbench:read",
    ]);
    let r = ranked(&js);
    assert!(!r.is_empty());
    let own: Vec<String> = (1..=8).map(|i| format!("internal-{i}")).collect();
    for p in &r {
        for s in slots(&p.0) {
            assert!(own.contains(&s), "{s} is not under cell 0's I/O: {r:?}");
        }
    }
    // A card fixed in the SEU of a 1-cell partition is an error that says why.
    let (code, err) = fails(
        "[place]\nserver = \"rp8400-seu\"\ntestbed = \"hp-2004-lab\"\ncells = 1\n\n[[card]]\nname = \"d\"\nadapter = \"a9782a\"\nslot = \"seu-1\"\n\n[[workload]]\ncard = \"d\"\nfunction = \"fc\"\nkind = \"diskbench\"\ndirection = \"read\"\n",
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("I/O controller `sba-cell2` of cell 2")
            && err.contains("owns only its own cells' I/O"),
        "{err}"
    );
}

#[test]
fn a_fixed_card_ties_the_parts_together_and_the_bound_still_holds() {
    // A two-cell sx2000 (two chassis of 12 slots), six DMA exercisers, one
    // of them fixed in a slot of chassis 1: more than 64 placements, and
    // the fixed slot keeps the search whole. The bound (which ignores the
    // fixed slot) is above the best simulated.
    let head = "[place]\nserver = \"sx2000\"\ntestbed = \"hp-2004-lab\"\ncells = 2\n\n[run]\nwarmup_ms = 1\nduration_ms = 3\n";
    let text = format!(
        "{head}\n[[card]]\nname = \"pin\"\nadapter = \"dma-exerciser\"\nslot = \"chassis1-slot-0\"\n{}\n[[card]]\nname = \"d\"\nadapter = \"dma-exerciser\"\ncount = 5\n{}",
        dma_workload("pin"),
        dma_workload("d")
    );
    let js = place_text(&text);
    let r = ranked(&js);
    for (placement, _, _) in &r {
        assert!(placement.contains("pin@chassis1-slot-0"), "{placement}");
    }
    let search = meta(&js, "search");
    assert!(!search.contains("split into"), "{search}");
    let bound = meta(&js, "bound");
    let b: f64 = bound
        .split("no placement can reach more than ")
        .nth(1)
        .and_then(|x| x.split(" MB/s").next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("a bound in MB/s: {bound}"));
    let best = r.iter().map(|x| x.1).fold(0.0, f64::max);
    assert!(b >= best, "{b} below {best}: {bound}");
}
