//! A NIC's transmit FIFO gives a frame's room back as the wire sends it, so
//! the fetch of the next frame overlaps the wire: a Fast Ethernet port whose
//! FIFO holds one frame (the Matrox card's Tulip ports) sends TCP alone at
//! the line's TCP ceiling when its receiver keeps up, and no faster. On a
//! half-duplex link the frame keeps its room until it has left, and the
//! transmit threshold lets the wire start a frame while its fetch goes on;
//! when the fetch cannot keep ahead of the wire, underruns raise the
//! threshold until the port stores whole frames first.

use std::path::PathBuf;

use iosim::app::{run_scenario, Runner};
use iosim::loader::{apply_bundled_fitted, load_registry, parse_scenario};
use iosim::sim::result::FunctionResult;

const SCENARIO: &str = r#"
[scenario]
name = "tulip-transmit"
title = "one Tulip port sending TCP alone"
source = "what-if"

[run]
warmup_ms = 20
duration_ms = 400
precision_pct = 1
min_ms = 100
batch_ms = 10

[[experiment]]
id = "tx.100full"
server = "pc-440bx"
testbed = "matrox-1998-lab"
cells = 1

[[experiment.card]]
adapter = "ns-fnic4"
slot = "pci-1"
link = "fe100"

[[experiment.workload]]
card = "ns-fnic4"
function = "port1"
kind = "netperf-tcp-stream"
direction = "transmit"
socket_kib = 64
message_kib = 8
"#;

/// Port 1's transmit throughput (bytes/s) and its TCP ceiling, with the
/// test bed's client spending `peer_us` microseconds per segment received.
fn transmit(peer_us: f64) -> (f64, f64) {
    transmit_with(peer_us, "fe100", &[])
}

/// As [`transmit`], over `link`, with model values `set` (path, value in
/// the registry's units) applied over the bundled fit.
fn transmit_with(peer_us: f64, link: &str, set: &[(&str, f64)]) -> (f64, f64) {
    let port = port1(peer_us, link, set, SCENARIO);
    (port.out.0, port.ceiling.0)
}

/// Port 1's results in `scenario` (its link replaced by `link`), as
/// [`transmit_with`] sets the models.
fn port1(peer_us: f64, link: &str, set: &[(&str, f64)], scenario: &str) -> FunctionResult {
    let mut reg = load_registry(&[]).expect("bundled models load");
    apply_bundled_fitted(&mut reg).expect("the bundled fit applies");
    // The registry holds times in nanoseconds.
    assert!(reg.set_param(
        "testbed.matrox-1998-lab.peer_cpu_per_segment",
        peer_us * 1e3
    ));
    for (path, value) in set {
        assert!(reg.set_param(path, *value), "{path} is a model value");
    }
    let text = scenario.replace("link = \"fe100\"", &format!("link = \"{link}\""));
    let sc = parse_scenario(PathBuf::from("tulip-transmit.toml"), &text, &reg)
        .expect("the scenario parses");
    let results = run_scenario(&reg, &sc, 1, &Runner::new(1).expect("a pool")).expect("it runs");
    results[0]
        .functions
        .iter()
        .find(|f| f.label.ends_with("port1"))
        .expect("port 1")
        .clone()
}

#[test]
fn a_fast_ethernet_port_with_a_one_frame_fifo_sends_at_the_tcp_ceiling() {
    let (out, ceiling) = transmit(5.0);
    assert!(
        out >= 0.98 * ceiling && out <= ceiling * 1.001,
        "transmit {:.2} MB/s against the ceiling {:.2}",
        out / 1e6,
        ceiling / 1e6
    );
}

#[test]
fn a_slow_receiver_still_bounds_the_sender() {
    // The Matrox paper's clients (fitted): about 180 us per segment, so
    // 1448 bytes per 180 us, about 8 MB/s, below the line.
    let (fast, _) = transmit(5.0);
    let (slow, _) = transmit(180.0);
    assert!(
        slow < 0.75 * fast && slow > 0.6 * fast,
        "slow client {:.2} MB/s, fast {:.2}",
        slow / 1e6,
        fast / 1e6
    );
}

/// Port 1's store-and-forward setting: a threshold the size of its FIFO.
const STORE_AND_FORWARD: (&str, f64) = ("adapter.ns-fnic4.port1.tx_threshold", 2048.0);

#[test]
fn on_half_duplex_the_threshold_overlaps_the_fetch_with_the_wire() {
    let (threshold, ceiling) = transmit_with(5.0, "fe100-half", &[]);
    let (whole, _) = transmit_with(5.0, "fe100-half", &[STORE_AND_FORWARD]);
    // The frame keeps its room until it has left, so a store-and-forward
    // port fetches and sends one after the other; with the threshold the
    // wire starts a frame some 128 bytes into its fetch. Only the
    // client's ACKs share the wire.
    assert!(
        threshold >= 0.9 * ceiling,
        "with the threshold {:.2} MB/s against the ceiling {:.2}",
        threshold / 1e6,
        ceiling / 1e6
    );
    assert!(
        whole < 0.85 * ceiling && whole < 0.9 * threshold,
        "store and forward {:.2} MB/s, with the threshold {:.2}, ceiling {:.2}",
        whole / 1e6,
        threshold / 1e6,
        ceiling / 1e6
    );
}

/// Port 1's transmit throughput over full-duplex Fast Ethernet to a fast
/// client, with the host's reads `read_ns` long: with the Tulip's
/// threshold, and storing whole frames.
fn with_and_without_threshold(read_ns: f64) -> (f64, f64) {
    let slow = ("server.pc-440bx.io_read_latency", read_ns);
    let (threshold, _) = transmit_with(5.0, "fe100", &[slow]);
    let (whole, _) = transmit_with(5.0, "fe100", &[slow, STORE_AND_FORWARD]);
    (threshold, whole)
}

#[test]
fn a_fetch_far_slower_than_the_wire_ends_in_store_and_forward() {
    // A host read 100 us long: the bridge fetches a frame in 256-byte
    // delayed reads, one about every 105 us, where the wire sends 256
    // bytes in 20 us. Even 1024 bytes ahead the wire runs dry before the
    // next part comes: after its underruns the port stores whole frames,
    // and sends no faster than a port that always did.
    let (threshold, whole) = with_and_without_threshold(100_000.0);
    assert!(
        (threshold - whole).abs() <= 0.03 * whole,
        "with the threshold {:.3} MB/s, store and forward {:.3}",
        threshold / 1e6,
        whole / 1e6
    );
}

#[test]
fn a_fetch_a_little_slower_than_the_wire_settles_on_a_threshold_it_keeps_ahead_of() {
    // A host read 20 us long: a 256-byte part about every 25 us, the wire
    // 256 bytes in 20 us. At 128 or 256 bytes ahead the wire runs dry; at
    // 512 the fetch stays ahead to the frame's end, so the port keeps that
    // threshold and sends faster than store and forward, but never faster
    // than the fetch brings frames (about 1448 bytes of payload per six
    // parts, 9.6 MB/s).
    let (threshold, whole) = with_and_without_threshold(20_000.0);
    assert!(
        threshold > 1.2 * whole && threshold < 9.6e6,
        "with the threshold {:.3} MB/s, store and forward {:.3}",
        threshold / 1e6,
        whole / 1e6
    );
}

#[test]
fn the_underruns_are_counted_where_they_happen() {
    // A host read 18 us long: a 256-byte part about every 23 us, the wire
    // 256 bytes in 20.5 us. The fetch of a frame ends before the frame's
    // end on the wire, but its last parts come after the wire needed them:
    // two underruns (at 128 and 256 bytes, which both start the wire on
    // the first 256-byte part) in the first frames, none once the
    // threshold is 512. Measured from the start they show; after the
    // warm-up, none.
    let slow = ("server.pc-440bx.io_read_latency", 18_000.0);
    // Measured from the start, over the whole 400 ms.
    let from_start = SCENARIO
        .replace("warmup_ms = 20", "warmup_ms = 0")
        .replace("min_ms = 100", "min_ms = 400");
    let early = port1(5.0, "fe100", &[slow], &from_start);
    let measured_s = 0.4;
    assert!(
        (early.tx_underruns_per_s * measured_s - 2.0).abs() < 1e-6,
        "{} underruns a second",
        early.tx_underruns_per_s
    );
    assert_eq!(
        port1(5.0, "fe100", &[slow], SCENARIO).tx_underruns_per_s,
        0.0
    );
    // A port that stores whole frames never underruns.
    let whole = port1(5.0, "fe100", &[slow, STORE_AND_FORWARD], &from_start);
    assert_eq!(whole.tx_underruns_per_s, 0.0);
}
