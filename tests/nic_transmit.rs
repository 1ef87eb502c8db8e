//! A NIC's transmit FIFO gives a frame's room back as the wire sends it, so
//! the fetch of the next frame overlaps the wire: a Fast Ethernet port whose
//! FIFO holds one frame (the Matrox card's Tulip ports) sends TCP alone at
//! the line's TCP ceiling when its receiver keeps up, and no faster.

use std::path::PathBuf;

use iosim::app::{run_scenario, Runner};
use iosim::loader::{apply_bundled_fitted, load_registry, parse_scenario};

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
    let mut reg = load_registry(&[]).expect("bundled models load");
    apply_bundled_fitted(&mut reg).expect("the bundled fit applies");
    // The registry holds times in nanoseconds.
    assert!(reg.set_param(
        "testbed.matrox-1998-lab.peer_cpu_per_segment",
        peer_us * 1e3
    ));
    let sc = parse_scenario(PathBuf::from("tulip-transmit.toml"), SCENARIO, &reg)
        .expect("the scenario parses");
    let results = run_scenario(&reg, &sc, 1, &Runner::new(1).expect("a pool")).expect("it runs");
    let port = results[0]
        .functions
        .iter()
        .find(|f| f.label.ends_with("port1"))
        .expect("port 1");
    (port.out.0, port.ceiling.0)
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
