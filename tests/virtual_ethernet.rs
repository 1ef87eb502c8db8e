//! The IBM virtual Ethernet claims (docs/sources.md#ibm-i61-veth; stable
//! claim ids), checked against what the real binary predicts
//! for the bundled scenarios in `scenarios/ibm-veth/`: `ibm.cost-per-size`,
//! `ibm.jumbo`, and virtual Ethernet having less capacity than an external
//! Gigabit NIC. The paper's charts were lost: the claims are qualitative.
//!
//! A virtual Ethernet experiment's CPU time is that of both partitions: the
//! partition under test (`cpu_util_pct` of its one CPU) and the other one
//! (the veth function's `card_cpu_util_pct`, see `src/sim/engines/veth.rs`).
//! The paper's CPW per Mbit/s is that CPU time per Mbit/s times one
//! processor's CPW rating (`models/cpus/power5-i570.toml`), a constant.
//!
//! The paper's capacity comparisons (17.6.1) are of "point-to-point" virtual
//! Ethernet between the i570 and an iSCSI-attached server (footnote 17: an
//! HS20 blade with an iSCSI HBA): `scenarios/ibm-veth/iscsi.toml`, whose
//! frames cross the iSCSI HBAs' Gigabit Ethernet link (the i570's target HBA,
//! a NIC with its own processor, and the blade with its initiator HBA and
//! CPU, the test bed `ibm-2008-iscsi-blade`).

mod common;

use std::path::Path;

/// `iosim run --format json` of the bundled scenario `scenarios/ibm-veth/NAME`.
fn run(name: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/ibm-veth")
        .join(name);
    common::run_json(None, &path)
}

/// The one function row of experiment `id`.
fn function<'a>(v: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    v["functions"]
        .as_array()
        .expect("functions")
        .iter()
        .find(|f| f["experiment"] == id)
        .unwrap_or_else(|| panic!("no experiment {id}"))
}

fn mbit_s(v: &serde_json::Value, id: &str) -> f64 {
    function(v, id)["total_Mbit_s"].as_f64().expect("Mbit/s")
}

fn bottleneck(v: &serde_json::Value, id: &str) -> String {
    v["experiments"]
        .as_array()
        .expect("experiments")
        .iter()
        .find(|e| e["experiment"] == id)
        .and_then(|e| e["bottleneck"].as_str())
        .unwrap_or_else(|| panic!("no experiment {id}"))
        .to_string()
}

/// Processors busy (both partitions) per Mbit/s of experiment `id`.
fn cost_per_mbit(v: &serde_json::Value, id: &str) -> f64 {
    let f = function(v, id);
    let e = v["experiments"]
        .as_array()
        .expect("experiments")
        .iter()
        .find(|e| e["experiment"] == id)
        .expect("the experiment");
    let cpus = e["cpus"].as_f64().expect("cpus");
    let here = e["cpu_util_pct"].as_f64().expect("cpu") * cpus / 100.0;
    let there = f["card_cpu_util_pct"].as_f64().expect("card cpu") / 100.0;
    (here + there) / mbit_s(v, id)
}

#[test]
fn ibm_cost_per_size_cpu_per_mbit_falls_as_the_transaction_grows() {
    let v = run("cost-per-size.toml");
    let sizes = ["0.25", "1", "4", "16", "64"];
    let costs: Vec<f64> = sizes
        .iter()
        .map(|k| cost_per_mbit(&v, &format!("veth1500.tx.{k}k")))
        .collect();
    for (i, w) in costs.windows(2).enumerate() {
        assert!(
            w[1] < w[0],
            "cost per Mbit/s at {} KiB {:.3e} vs {} KiB {:.3e}",
            sizes[i + 1],
            w[1],
            sizes[i],
            w[0]
        );
    }
    // Higher for small transactions: the smallest costs far more than the
    // largest (the cost of each send call is spread over fewer bytes).
    assert!(costs[0] > 1.5 * costs[4], "{costs:?}");
}

#[test]
fn virtual_ethernet_moves_no_bus_data_and_is_bounded_by_partition_cpus() {
    let v = run("capacity.toml");
    for id in ["veth1500.transmit", "veth1500.receive", "veth9000.transmit"] {
        let b = bottleneck(&v, id);
        assert!(
            b.starts_with("CPU 0") || b.starts_with("processor of i570-veth"),
            "{id}: {b}"
        );
        let f = function(&v, id);
        assert_eq!(f["link_out_util_pct"].as_f64(), Some(0.0), "{id}: no wire");
    }
    let veth_buses: Vec<_> = common::bus_rows(&v)
        .into_iter()
        .filter(|b| b.0.contains("veth"))
        .collect();
    assert!(
        !veth_buses.is_empty(),
        "the virtual adapter's place is reported"
    );
    for (label, _, data, _) in veth_buses {
        assert_eq!(
            data, 0.0,
            "{label}: virtual Ethernet makes no bus transactions"
        );
    }
    // The external adapter is held by its wire.
    assert!(bottleneck(&v, "gige.transmit").starts_with("link ibm-gige.gige"));
}

#[test]
#[ignore = "no evidence either way: the comparison comes out as the paper says only \
            because the iSCSI HBAs' firmware time is assumed at 10 us a frame (no source \
            found), which bounds that path below the wire; below about 8.2 us a frame it \
            would not. Run with --ignored: it passes, through the assumption alone"]
fn ibm_virtual_ethernet_has_less_capacity_than_an_external_gigabit_nic() {
    // The paper's virtual Ethernet: point-to-point to the iSCSI-attached
    // server, with standard frames, against the external GigE adapter.
    let (iscsi, nic) = (run("iscsi.toml"), run("capacity.toml"));
    for d in ["transmit", "receive"] {
        let (ve, gige) = (
            mbit_s(&iscsi, &format!("iscsi1500.{d}")),
            mbit_s(&nic, &format!("gige.{d}")),
        );
        assert!(
            ve < gige,
            "{d}: virtual Ethernet to the iSCSI server {ve:.0}, GigE {gige:.0} Mbit/s"
        );
    }
}

#[test]
fn iscsi_virtual_ethernet_is_bounded_by_the_hba_processor_then_by_the_wire() {
    // Standard frames: the target HBA's firmware, one frame at a time for
    // data and ACKs, is the bound, below the link. Jumbo frames: six times
    // fewer frames for the same bytes, so the link is the bound.
    let v = run("iscsi.toml");
    for d in ["transmit", "receive"] {
        let std = format!("iscsi1500.{d}");
        let b = bottleneck(&v, &std);
        assert!(
            b.starts_with("processor of i570-iscsi-target"),
            "{std}: {b}"
        );
        let jumbo = format!("iscsi9000.{d}");
        let b = bottleneck(&v, &jumbo);
        assert!(b.starts_with("link i570-iscsi-target"), "{jumbo}: {b}");
        let link = if d == "transmit" {
            "link_out_util_pct"
        } else {
            "link_in_util_pct"
        };
        let util = function(&v, &std)[link].as_f64().expect("link util");
        assert!(util < 90.0, "{std}: the link is {util:.1}% busy");
    }
}

#[test]
#[ignore = "fails from the mechanisms, not the point-to-point VE the paper measured: between two partitions with the assumed costs (per frame: the rx6600's stack costs unscaled plus a 2 us hypervisor call; 0.4 us per KiB copied) virtual Ethernet is CPU-bound at 973 Mbit/s transmitting and 982 receiving with 1.5 KB frames, 2.4% and 3.4% above the external GigE adapter's wire-bound 950. The paper gives no basis for the i570's costs: its CPW-per-Mbit/s chart was lost and CPW shares no benchmark with the other CPU models"]
fn partition_to_partition_virtual_ethernet_has_less_capacity_than_an_external_gigabit_nic() {
    let v = run("capacity.toml");
    for d in ["transmit", "receive"] {
        let (ve, gige) = (
            mbit_s(&v, &format!("veth1500.{d}")),
            mbit_s(&v, &format!("gige.{d}")),
        );
        assert!(
            ve < gige,
            "{d}: virtual Ethernet {ve:.0}, GigE {gige:.0} Mbit/s"
        );
    }
}

#[test]
#[ignore = "fails from the mechanisms: over the iSCSI HBAs' Gigabit link, 1.5 KB frames are bound by the target HBA's firmware (assumed 10 us a frame, data or ACK: 15 us per segment) at 778 Mbit/s transmitting and 780 receiving, 9 KB frames by the wire at 996 and 989: +28% and +27%, not 15-20%. The band needs 13.5-14.1 us of the bounding stage per 1.5 KB segment (9.0-9.4 us a frame); nothing found sets it. Wire-bound at both sizes the gain would be 4.4% (949 -> 991)"]
fn ibm_jumbo_9k_frames_raise_capacity_15_to_20_percent() {
    let v = run("iscsi.toml");
    for d in ["transmit", "receive"] {
        let (jumbo, std) = (
            mbit_s(&v, &format!("iscsi9000.{d}")),
            mbit_s(&v, &format!("iscsi1500.{d}")),
        );
        let gain = jumbo / std - 1.0;
        assert!(
            (0.15..=0.20).contains(&gain),
            "{d}: 9 KB {jumbo:.0}, 1.5 KB {std:.0} Mbit/s, gain {:.1}%",
            gain * 100.0
        );
    }
}

#[test]
fn jumbo_frames_raise_virtual_ethernet_capacity() {
    // The direction of ibm.jumbo, which holds for both paths: fewer frames
    // for the same bytes, so fewer hypervisor calls, per-packet stack costs
    // and HBA firmware runs.
    let v = run("iscsi.toml");
    for d in ["transmit", "receive"] {
        let (jumbo, std) = (
            mbit_s(&v, &format!("iscsi9000.{d}")),
            mbit_s(&v, &format!("iscsi1500.{d}")),
        );
        assert!(jumbo > std, "{d}: 9 KB {jumbo:.0}, 1.5 KB {std:.0}");
    }
    let v = run("capacity.toml");
    for d in ["transmit", "receive"] {
        let (jumbo, std) = (
            mbit_s(&v, &format!("veth9000.{d}")),
            mbit_s(&v, &format!("veth1500.{d}")),
        );
        assert!(jumbo > 1.15 * std, "{d}: 9 KB {jumbo:.0}, 1.5 KB {std:.0}");
    }
}
