//! Shared nodes of a server's I/O tree. Bus segments: slots naming the same
//! `segment` share one bus, its bridge and its ropes; cards on one segment
//! arbitrate for it, and the segment runs at the mode of its slowest card.
//! I/O controllers: the slots naming one `controller` share its link to
//! memory, which a packet crosses cut-through (it adds about one cache
//! line's time to a read, not its whole size's) at no more than its rate.

use std::path::Path;

mod common;

/// Two conventional PCI-66 slots on one segment, two PCI-X 133 slots on
/// another, and one PCI-X 133 slot alone; eight ropes each, so that the
/// ropes never limit and the bus does.
const SLOTS: &str = r#"[[slot]]
name = "a1"
modes = ["pci66", "pci33-64"]
ropes = 8
segment = "pci66-pair"

[[slot]]
name = "a2"
modes = ["pci66", "pci33-64"]
ropes = 8
segment = "pci66-pair"

[[slot]]
name = "x1"
modes = ["pcix133", "pcix66", "pci66", "pci33-64"]
ropes = 8
segment = "pcix-pair"

[[slot]]
name = "x2"
modes = ["pcix133", "pcix66", "pci66", "pci33-64"]
ropes = 8
segment = "pcix-pair"

[[slot]]
name = "c1"
modes = ["pcix133", "pcix66", "pci66", "pci33-64"]
ropes = 8
controller = "sba"

[[slot]]
name = "c2"
modes = ["pcix133", "pcix66", "pci66", "pci33-64"]
ropes = 8
controller = "sba"

[[slot]]
name = "c3"
modes = ["pcix133", "pcix66", "pci66", "pci33-64"]
ropes = 8
controller = "sba"

[[slot]]
name = "f1"
modes = ["pcix133", "pcix66", "pci66", "pci33-64"]
ropes = 2
controller = "fast"

[[slot]]
name = "n1"
modes = ["pcix133", "pcix66", "pci66", "pci33-64"]
ropes = 2

[[slot]]
name = "b1"
modes = ["pcix133", "pcix66", "pci66", "pci33-64"]
ropes = 8
controller = "shared-ways"

[[slot]]
name = "b2"
modes = ["pcix133", "pcix66", "pci66", "pci33-64"]
ropes = 8
controller = "shared-ways"

[[slot]]
name = "b3"
modes = ["pcix133", "pcix66", "pci66", "pci33-64"]
ropes = 8
controller = "shared-ways"

[[io_controller]]
name = "shared-ways"

[io_controller.param]
bandwidth = { value = 600, unit = "MB/s", source = "test" }
bandwidth_both_ways = { value = 800, unit = "MB/s", source = "test" }
packet_overhead = { value = 8, unit = "bytes", source = "test" }

[[io_controller]]
name = "fast"

[io_controller.param]
bandwidth = { value = 1000, unit = "MB/s", source = "test" }
packet_overhead = { value = 8, unit = "bytes", source = "test" }

[[io_controller]]
name = "sba"

[io_controller.param]
bandwidth = { value = 600, unit = "MB/s", source = "test" }
packet_overhead = { value = 8, unit = "bytes", source = "test" }
"#;

/// A conventional (PCI-only) copy of the bundled DMA exerciser.
fn pci_only_exerciser() -> String {
    include_str!("../models/adapters/dma-exerciser.toml")
        .replacen("name = \"dma-exerciser\"", "name = \"pci-exerciser\"", 1)
        .replacen(
            "modes = [\"pcix133\", \"pcix100\", \"pcix66\", \"pci66\", \"pci33-64\"]",
            "modes = [\"pci66\", \"pci33-64\"]",
            1,
        )
}

/// A card: (name, adapter, slot, DMA-read workload or idle).
type Card<'a> = (&'a str, &'a str, &'a str, bool);

/// Busy DMA exercisers `e1`, `e2`, ... in `slots`, in order.
fn exercisers(slots: &[&'static str]) -> Vec<Card<'static>> {
    const NAMES: [&str; 3] = ["e1", "e2", "e3"];
    slots
        .iter()
        .zip(NAMES)
        .map(|(slot, name)| (name, "dma-exerciser", *slot, true))
        .collect()
}

/// A DMA workload's direction.
const READ: &str = "read";

/// Runs one experiment with `cards`; returns (per busy card its DMA MB/s,
/// per bus (label, mode, data MB/s, peak MB/s)).
#[allow(clippy::type_complexity)]
fn run(dir: &Path, cards: &[Card]) -> (Vec<f64>, Vec<(String, String, f64, f64)>) {
    run_dir(dir, cards, READ)
}

/// As [`run`], the busy cards' DMA going `direction`.
#[allow(clippy::type_complexity)]
fn run_dir(
    dir: &Path,
    cards: &[Card],
    direction: &str,
) -> (Vec<f64>, Vec<(String, String, f64, f64)>) {
    let (busy, buses, _) = run_with(dir, cards, direction, 4, 4);
    (busy, buses)
}

/// As [`run_dir`], each busy card keeping `outstanding` 4 KiB blocks in
/// flight, measured for `duration_ms`; also returns the run's JSON.
#[allow(clippy::type_complexity)]
fn run_with(
    dir: &Path,
    cards: &[Card],
    direction: &str,
    outstanding: u32,
    duration_ms: u32,
) -> (Vec<f64>, Vec<(String, String, f64, f64)>, serde_json::Value) {
    let mut s = format!(
        "[scenario]\nname = \"segments\"\ntitle = \"shared segments\"\n\n[run]\nwarmup_ms = 1\nduration_ms = {duration_ms}\n\n[[experiment]]\nid = \"e\"\nserver = \"seg-server\"\ntestbed = \"hp-2004-lab\"\ncells = 1\n",
    );
    for (name, adapter, slot, busy) in cards {
        s += &format!(
            "\n[[experiment.card]]\nname = \"{name}\"\nadapter = \"{adapter}\"\nslot = \"{slot}\"\n"
        );
        if *busy {
            s += &format!(
                "\n[[experiment.workload]]\ncard = \"{name}\"\nfunction = \"dma\"\nkind = \"dma\"\ndirection = \"{direction}\"\nblock_kib = 4\noutstanding = {outstanding}\n"
            );
        }
    }
    let sc = dir.join("s.toml");
    std::fs::write(&sc, s).expect("scenario");
    let v = common::run_json(Some(&dir.join("models")), &sc);
    let busy: Vec<f64> = cards
        .iter()
        .filter(|c| c.3)
        .map(|(name, ..)| {
            v["functions"]
                .as_array()
                .expect("functions")
                .iter()
                .find(|f| f["function"] == format!("{name}.dma"))
                .expect("the card's function")["total_MB_s"]
                .as_f64()
                .expect("MB/s")
        })
        .collect();
    let buses = common::bus_rows(&v);
    (busy, buses, v)
}

/// The test server, its bridge with four delayed-read slots (with one, the
/// two cards' delayed reads also contend for the slot, and together they get
/// less than one alone: 176 against 260 MB/s), and the PCI-only exerciser.
fn models() -> tempfile::TempDir {
    models_with(&[])
}

/// As [`models`], the server's parameters also set as `overrides` says.
fn models_with(overrides: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let models = dir.path().join("models");
    std::fs::create_dir(&models).expect("models dir");
    let mut all = vec![("delayed_read_slots", "value = 4, unit = \"count\"")];
    all.extend_from_slice(overrides);
    std::fs::write(
        models.join("server.toml"),
        common::server_toml("seg-server", &all, SLOTS),
    )
    .expect("server");
    std::fs::write(models.join("pci-exerciser.toml"), pci_only_exerciser()).expect("adapter");
    dir
}

/// The MB/s the busy `cards` move out of and into memory in all, DMA going
/// `direction` (4 blocks in flight, 4 ms), and the run's JSON.
fn both_ways(dir: &Path, cards: &[Card], direction: &str) -> (f64, f64, serde_json::Value) {
    let (_, _, v) = run_with(dir, cards, direction, 4, 4);
    let way = |key: &str| -> f64 {
        v["functions"]
            .as_array()
            .expect("functions")
            .iter()
            .map(|f| f[key].as_f64().expect("MB/s"))
            .sum()
    };
    (way("out_MB_s"), way("in_MB_s"), v)
}

#[test]
fn two_saturating_cards_on_one_segment_share_its_bus() {
    let dir = models();
    let (alone, buses_alone) = run(dir.path(), &[("e1", "dma-exerciser", "a1", true)]);
    let (both, buses) = run(
        dir.path(),
        &[
            ("e1", "dma-exerciser", "a1", true),
            ("e2", "dma-exerciser", "a2", true),
        ],
    );
    assert_eq!(buses_alone.len(), 1);
    assert_eq!(buses.len(), 1, "one bus for the two cards: {buses:?}");
    let (label, mode, data, peak) = &buses[0];
    assert_eq!(label, "e1@a1+e2@a2");
    assert_eq!(mode, "pci66");
    let sum: f64 = both.iter().sum();
    assert!(
        sum <= *peak && (sum - data).abs() < 0.01 * data,
        "{both:?} on {buses:?}"
    );
    for each in &both {
        assert!(
            (each / alone[0] - 0.5).abs() < 0.12,
            "each card gets about half of what one gets alone: {both:?} against {alone:?}"
        );
    }
}

#[test]
fn a_conventional_pci_card_slows_a_pcix_segment_to_pci() {
    let dir = models();
    let (alone, buses_alone) = run(dir.path(), &[("e1", "dma-exerciser", "x1", true)]);
    // The PCI-only card sits idle in the other slot of the segment.
    let (with_pci, buses) = run(
        dir.path(),
        &[
            ("e1", "dma-exerciser", "x1", true),
            ("p", "pci-exerciser", "x2", false),
        ],
    );
    assert_eq!(buses_alone[0].1, "pcix133");
    assert_eq!(buses[0].1, "pci66", "{buses:?}");
    assert!(
        with_pci[0] < 0.8 * alone[0],
        "the PCI-X card slows down: {alone:?} alone, {with_pci:?} beside a PCI card"
    );
}

#[test]
fn slots_under_one_io_controller_share_its_link_to_memory() {
    let dir = models();
    let (alone, buses_alone) = run(dir.path(), &[("e1", "dma-exerciser", "c1", true)]);
    let (three, buses) = run(dir.path(), &exercisers(&["c1", "c2", "c3"]));
    assert_eq!(buses_alone.len(), 1);
    assert_eq!(buses.len(), 3, "three buses, one controller: {buses:?}");
    let sum: f64 = three.iter().sum();
    // Read data crosses the controller's link with 8 bytes of header per
    // packet, so the payload stays under 600 MB/s.
    assert!(
        sum <= 600.0,
        "{three:?}: {sum} MB/s through a 600 MB/s link"
    );
    assert!(sum > 0.8 * 600.0, "three cards fill the link: {three:?}");
    assert!(
        sum < 0.9 * 3.0 * alone[0],
        "three cards get less than three times one: {three:?} against {alone:?}"
    );
}

#[test]
fn an_io_controller_with_room_does_not_shrink_a_bridges_posted_write_window() {
    // The same two-rope PCI-X 133 slot, under a controller whose link has
    // room to spare and under none: a card's 4 KiB posted writes fill the
    // bridge's 2 KiB buffer, which frees as each write leaves the ropes (the
    // controller buffers it from there), so both slots write alike. Freed
    // only once through the controller's 1000 MB/s link too, the slot under
    // it wrote 252 MB/s against 337.
    let dir = models();
    let (under, _) = run_dir(dir.path(), &[("e1", "dma-exerciser", "f1", true)], "write");
    let (none, _) = run_dir(dir.path(), &[("e1", "dma-exerciser", "n1", true)], "write");
    assert!(none[0] > 100.0, "the card writes: {none:?}");
    assert!(
        (under[0] - none[0]).abs() <= 0.01 * none[0],
        "under the controller {under:?} MB/s, under none {none:?}"
    );
}

#[test]
fn dma_beyond_the_memory_bandwidth_waits_for_it() {
    // The same two PCI-X 133 slots on eight ropes (2000 MB/s), reading: with
    // memory of 300 MB/s the two cards together get at most that; with no
    // memory bandwidth modelled, each card gets far more.
    let cards = [
        ("e1", "dma-exerciser", "x1", true),
        ("e2", "dma-exerciser", "c1", true),
    ];
    let (free, _) = run(models().path(), &cards);
    let dir = models_with(&[("memory_bandwidth", "value = 300, unit = \"MB/s\"")]);
    let (held, _) = run(dir.path(), &cards);
    let sum: f64 = held.iter().sum();
    assert!(
        sum <= 300.0 * 1.01,
        "{held:?}: {sum} MB/s from 300 MB/s of memory"
    );
    assert!(sum > 0.9 * 300.0, "the cards fill the memory: {held:?}");
    assert!(
        free.iter().all(|f| *f > 400.0),
        "without the memory's bandwidth each card reads more: {free:?}"
    );
}

#[test]
fn a_controller_with_room_adds_about_one_line_to_a_reads_latency() {
    // One 4 KiB read in flight at a time, so the card's throughput is one
    // block per read latency. Under the 1000 MB/s controller (twice the
    // slot's two ropes) each read also crosses the controller's link, its
    // request up and its data down, cut-through: the data may start down the
    // ropes as it starts across the link, and finishes one unit (a 64-byte
    // line and the 8-byte header, 72 ns at 1000 MB/s) after it. The request
    // (8 bytes of header) adds 8 ns. Store and forward, the data alone added
    // its whole 4104 bytes' time, 4.1 us.
    let dir = models();
    let block_us = |mb_s: f64| 4096.0 / mb_s;
    let (under, ..) = run_with(
        dir.path(),
        &[("e1", "dma-exerciser", "f1", true)],
        READ,
        1,
        20,
    );
    let (none, ..) = run_with(
        dir.path(),
        &[("e1", "dma-exerciser", "n1", true)],
        READ,
        1,
        20,
    );
    let added_ns = 1e3 * (block_us(under[0]) - block_us(none[0]));
    // One line and header, one request header, and the window's cut (about
    // 1500 reads in 20 ms: 0.07%, 10 ns a read).
    assert!(
        (0.0..=72.0 + 8.0 + 20.0).contains(&added_ns),
        "the controller adds {added_ns:.1} ns a read: {under:?} MB/s under it, {none:?} under none"
    );
}

#[test]
fn a_controller_carries_no_more_than_its_rate_each_way() {
    // Three cards reading and writing at once through the 600 MB/s
    // controller (eight ropes each, 4 GB/s above each slot): cut-through
    // packets still take the link one at a time for their whole size, so
    // neither direction's payload passes 600 MB/s and the link is never
    // busier than all the time.
    let dir = models();
    let cards = exercisers(&["c1", "c2", "c3"]);
    let (out, inn, v) = both_ways(dir.path(), &cards, "bidirectional");
    for (what, mb_s) in [("read", out), ("written", inn)] {
        assert!(
            mb_s <= 600.0 && mb_s > 0.7 * 600.0,
            "{mb_s:.1} MB/s {what} through a 600 MB/s link: {}",
            v["functions"]
        );
    }
    for bus in v["buses"].as_array().expect("buses") {
        let util = bus["io_controller_util_pct"]
            .as_f64()
            .expect("controller utilisation");
        assert!(util <= 100.0, "{bus}");
    }
}

#[test]
fn a_link_with_a_both_ways_limit_gives_one_way_its_rate_and_both_ways_that_limit() {
    // The same three cards under a controller of 600 MB/s each way and 800
    // both ways together: reading alone they fill one way (600), reading and
    // writing at once they share the 800 between the two ways.
    let dir = models();
    let cards = exercisers(&["b1", "b2", "b3"]);
    let (read, ..) = both_ways(dir.path(), &cards, READ);
    assert!(
        read <= 600.0 && read > 0.9 * 600.0,
        "{read:.1} MB/s read one way through 600 MB/s each way"
    );
    let (out, inn, _) = both_ways(dir.path(), &cards, "bidirectional");
    assert!(
        out + inn <= 800.0 && out + inn > 0.9 * 800.0,
        "{out:.1} + {inn:.1} MB/s both ways through 800 MB/s both ways together"
    );
}

#[test]
fn a_cut_through_bridge_streams_a_posted_write_onto_its_ropes() {
    // A PCI-X 133 slot (1067 MB/s) on two 250 MB/s ropes, writing 4 KiB
    // blocks through a 2 KiB posted-write buffer. A bridge that stores each
    // burst whole before sending it up lets the bus and the ropes take
    // turns (about 340 MB/s); a cut-through one starts the ropes once a
    // burst's first line is in, so the slot writes at the ropes' rate (500
    // MB/s, less 8 bytes of header per 2 KiB packet).
    let written = |cut_through: &str| {
        let value = format!("value = {cut_through}, unit = \"count\"");
        let dir = models_with(&[("posted_writes_cut_through", value.as_str())]);
        run_dir(dir.path(), &[("e1", "dma-exerciser", "n1", true)], "write").0[0]
    };
    let ropes = 500.0 * 2048.0 / 2056.0;
    let (stored, streamed) = (written("0"), written("1"));
    assert!(
        streamed <= ropes * 1.001 && streamed > 0.95 * ropes,
        "cut-through: {streamed:.1} MB/s written through {ropes:.1} MB/s of ropes"
    );
    assert!(
        stored < 0.75 * ropes,
        "store and forward: {stored:.1} MB/s, the bus and the ropes taking turns"
    );
}
