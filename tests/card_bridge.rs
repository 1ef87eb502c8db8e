//! On-card PCI-to-PCI bridges: a card's functions on its own secondary bus,
//! behind a bridge that alone masters the slot's bus for them. Four GigE
//! ports behind one bridge share one slot; four one-port cards in four slots
//! do not.

use std::path::Path;

mod common;

/// Four 64-bit 33 MHz slots, each its own bus, with eight ropes so that the
/// ropes never limit and the slot's bus does.
const SLOTS: &str = r#"[[slot]]
name = "s1"
modes = ["pci33-64"]
ropes = 8

[[slot]]
name = "s2"
modes = ["pci33-64"]
ropes = 8

[[slot]]
name = "s3"
modes = ["pci33-64"]
ropes = 8

[[slot]]
name = "s4"
modes = ["pci33-64"]
ropes = 8
"#;

const QUAD: &str = include_str!("../models/adapters/quad-gige-bridged.toml");

/// The bundled quad card cut down to one port and no bridge: the same NIC
/// on the slot's bus.
fn one_port_card() -> String {
    let head = &QUAD[..QUAD.find("[bridge]").expect("the card has a bridge")];
    let first = &QUAD[QUAD.find("[[function]]").expect("a function")..];
    let first = &first[..first[1..].find("[[function]]").expect("a second function") + 1];
    head.replacen(
        "name = \"quad-gige-bridged\"",
        "name = \"one-port-gige\"",
        1,
    ) + first
}

/// A server with 16 CPUs (each port's interrupts and netperf process on a
/// CPU of its own) and cheap packets, so that the buses limit.
fn models() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let models = dir.path().join("models");
    std::fs::create_dir(&models).expect("models dir");
    let server = common::server_toml(
        "bridge-server",
        &[
            ("cells_max", "value = 1, unit = \"cells\""),
            ("cpus_per_cell", "value = 16, unit = \"cpus\""),
            ("cpu_per_packet", "value = 2, unit = \"us\""),
            ("cpu_per_segment_sent", "value = 2, unit = \"us\""),
        ],
        SLOTS,
    )
    .replace(
        "memory_remote_latency = { value = 400, unit = \"ns\", source = \"test\" }\n",
        "",
    )
    .replace(
        "cpu_remote_memory_latency = { value = 300, unit = \"ns\", source = \"test\" }\n",
        "",
    );
    std::fs::write(models.join("server.toml"), server).expect("server");
    std::fs::write(models.join("one-port.toml"), one_port_card()).expect("adapter");
    dir
}

/// Per port its receive MB/s and register-read stall; per bus (label, mode,
/// data MB/s, peak MB/s).
type Outcome = (Vec<(f64, f64)>, Vec<(String, String, f64, f64)>);

/// Runs netperf receive on `ports` ((card, adapter, slot, function)).
fn run(dir: &Path, ports: &[(&str, &str, &str, &str)]) -> Outcome {
    let mut s = String::from(
        "[scenario]\nname = \"bridge\"\ntitle = \"on-card bridge\"\n\n[run]\nwarmup_ms = 2\nduration_ms = 10\n\n[[experiment]]\nid = \"e\"\nserver = \"bridge-server\"\ntestbed = \"hp-2004-lab\"\ncells = 1\n",
    );
    let mut cards: Vec<&str> = Vec::new();
    for (card, adapter, slot, _) in ports {
        if !cards.contains(card) {
            cards.push(card);
            s += &format!(
                "\n[[experiment.card]]\nname = \"{card}\"\nadapter = \"{adapter}\"\nslot = \"{slot}\"\n"
            );
        }
    }
    for (card, _, _, function) in ports {
        s += &format!(
            "\n[[experiment.workload]]\ncard = \"{card}\"\nfunction = \"{function}\"\nkind = \"netperf-tcp-stream\"\ndirection = \"receive\"\nsocket_kib = 128\nmessage_kib = 32\n"
        );
    }
    let sc = dir.join("s.toml");
    std::fs::write(&sc, s).expect("scenario");
    let v = common::run_json(Some(&dir.join("models")), &sc);
    let functions = v["functions"].as_array().expect("functions");
    let per_port = ports
        .iter()
        .map(|(card, _, _, function)| {
            let f = functions
                .iter()
                .find(|f| f["function"] == format!("{card}.{function}"))
                .expect("the port's function");
            (
                f["in_MB_s"].as_f64().expect("MB/s"),
                f["register_read_us"].as_f64().expect("stall"),
            )
        })
        .collect();
    let buses = common::bus_rows(&v);
    (per_port, buses)
}

#[test]
fn four_ports_behind_one_bridge_share_one_slot_where_four_cards_do_not() {
    let dir = models();
    let quad = [
        ("q", "quad-gige-bridged", "s1", "p0"),
        ("q", "quad-gige-bridged", "s1", "p1"),
        ("q", "quad-gige-bridged", "s1", "p2"),
        ("q", "quad-gige-bridged", "s1", "p3"),
    ];
    let (bridged, buses) = run(dir.path(), &quad);
    assert_eq!(
        buses.len(),
        2,
        "the slot's bus and the card's own: {buses:?}"
    );
    let slot_bus = &buses[0];
    let secondary = &buses[1];
    assert_eq!(
        (slot_bus.0.as_str(), slot_bus.1.as_str()),
        ("q@s1", "pci33-64")
    );
    assert_eq!(
        (secondary.0.as_str(), secondary.1.as_str()),
        ("q@s1/bridge", "pcix133"),
        "the secondary bus runs the card's own mode whatever the slot runs"
    );
    let sum: f64 = bridged.iter().map(|p| p.0).sum();
    assert!(
        sum <= slot_bus.2 && slot_bus.2 <= slot_bus.3,
        "the ports' sum is carried by the slot's bus, within its peak: {bridged:?} on {buses:?}"
    );
    assert!(
        (secondary.2 - slot_bus.2).abs() < 0.02 * slot_bus.2,
        "what crosses the card's bus crosses the slot's: {buses:?}"
    );
    for (mb_s, stall) in &bridged {
        assert!(*mb_s > 0.1 * sum / 4.0, "every port moves: {bridged:?}");
        assert!(*stall > 0.0, "register reads reach the ports: {bridged:?}");
    }

    let singles = [
        ("c1", "one-port-gige", "s1", "p0"),
        ("c2", "one-port-gige", "s2", "p0"),
        ("c3", "one-port-gige", "s3", "p0"),
        ("c4", "one-port-gige", "s4", "p0"),
    ];
    let (spread, spread_buses) = run(dir.path(), &singles);
    assert_eq!(spread_buses.len(), 4, "{spread_buses:?}");
    let spread_sum: f64 = spread.iter().map(|p| p.0).sum();
    assert!(
        spread_sum > slot_bus.3 && spread_sum > 1.3 * sum,
        "four cards in four slots are not bounded by one slot: {spread_sum:.1} MB/s against \
         {sum:.1} behind one bridge (slot peak {:.0})",
        slot_bus.3
    );
}

#[test]
fn one_port_behind_a_bridge_pays_for_the_extra_hop_on_reads() {
    // Transmit: every frame is a DMA read that crosses both buses and the
    // bridge's forwarding, so one bridged port moves no more than the same
    // NIC alone in the slot.
    let dir = models();
    let mut alone = String::new();
    for (card, adapter) in [("q", "quad-gige-bridged"), ("c", "one-port-gige")] {
        alone += &format!(
            "\n[[experiment]]\nid = \"{card}\"\nserver = \"bridge-server\"\ntestbed = \"hp-2004-lab\"\ncells = 1\n\n[[experiment.card]]\nname = \"{card}\"\nadapter = \"{adapter}\"\nslot = \"s1\"\n\n[[experiment.workload]]\ncard = \"{card}\"\nfunction = \"p0\"\nkind = \"netperf-tcp-stream\"\ndirection = \"transmit\"\nsocket_kib = 128\nmessage_kib = 32\n"
        );
    }
    let s = format!(
        "[scenario]\nname = \"hop\"\ntitle = \"one port\"\n\n[run]\nwarmup_ms = 2\nduration_ms = 10\n{alone}"
    );
    let sc = dir.path().join("hop.toml");
    std::fs::write(&sc, s).expect("scenario");
    let v = common::run_json(Some(&dir.path().join("models")), &sc);
    let out = |id: &str| {
        v["functions"]
            .as_array()
            .expect("functions")
            .iter()
            .find(|f| f["experiment"] == id)
            .expect("the experiment's port")["out_MB_s"]
            .as_f64()
            .expect("MB/s")
    };
    let (bridged, direct) = (out("q"), out("c"));
    assert!(
        bridged > 0.0 && bridged <= direct * 1.01,
        "bridged {bridged:.1} MB/s against {direct:.1} on the slot's bus"
    );
}
