//! CPU models and their speed ratings: a server that names its CPU and a
//! `costs_from` server takes that server's CPU costs scaled by the ratio of
//! the two CPUs' ratings (same benchmark only), so a server with a known CPU
//! needs no fit of its own; and the scaled costs follow a refit of the
//! server they come from.

use std::process::Command;

use iosim::loader::load_registry;
use iosim::model::schema::ServerParams;
use iosim::model::Registry;
use iosim::sim::config::StackCosts;

/// The CPU costs of server `name` (ns), as assembly reads them.
fn costs(reg: &Registry, name: &str) -> StackCosts {
    let s = &reg.servers[name];
    let own = ServerParams::from_set(&s.params, &s.at).expect("its parameters");
    StackCosts::of(reg, s, &own).expect("its costs")
}

#[test]
fn the_v2500_takes_the_n4000s_costs_scaled_by_specint95() {
    let mut reg = load_registry(&[]).expect("bundled models");
    let ratio = 38.0 / 27.5; // PA-8600 555 over PA-8500 440, SPECint95
    let (n, v) = (costs(&reg, "n4000"), costs(&reg, "v2500"));
    for (key, n4000, v2500) in [
        ("cpu_per_packet", n.per_packet, v.per_packet),
        (
            "cpu_per_segment_sent",
            n.per_segment_sent,
            v.per_segment_sent,
        ),
        ("cpu_per_io", n.per_io, v.per_io),
    ] {
        assert!(
            (v2500 / n4000 - ratio).abs() < 1e-9,
            "{key}: {v2500} ns on the V2500 against {n4000} on the N4000"
        );
    }
    // A refit of the N4000 (or any change of its costs) carries over.
    assert!(reg.set_param("server.n4000.cpu_per_packet", 20_000.0));
    let v2500 = costs(&reg, "v2500").per_packet;
    assert!((v2500 - 20_000.0 * ratio).abs() < 1e-6, "{v2500}");
    // A cost the V2500 states itself wins over the scaled one.
    assert!(!reg.set_param("server.v2500.cpu_per_packet", 1.0));
}

/// Writes `server` (a model file) into a models directory and runs `iosim
/// show server NAME` with it; returns (exit code, standard error).
fn show_with(server: &str, name: &str) -> (i32, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("s.toml"), server).expect("server");
    let out = Command::new(env!("CARGO_BIN_EXE_iosim"))
        .args(["show", "server", name, "--models"])
        .arg(dir.path())
        .output()
        .expect("iosim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The bundled V2500 with its `cpu` and `costs_from` lines replaced.
fn v2500_with(cpu: &str, costs_from: &str) -> String {
    include_str!("../models/servers/v2500.toml")
        .replacen("name = \"v2500\"", "name = \"v2500-test\"", 1)
        .replacen("cpu = \"pa8500-440\"", cpu, 1)
        .replacen("costs_from = \"n4000\"", costs_from, 1)
}

#[test]
fn costs_scale_only_between_cpus_rated_on_one_benchmark() {
    let (code, err) = show_with(
        &v2500_with("cpu = \"pentium-166\"", "costs_from = \"n4000\""),
        "v2500-test",
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("costs_from") && err.contains("different benchmarks"),
        "{err}"
    );
}

#[test]
fn a_server_without_costs_or_a_cost_source_is_refused() {
    let (code, err) = show_with(&v2500_with("cpu = \"pa8500-440\"", ""), "v2500-test");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("missing parameter `cpu_per_packet`") && err.contains("costs_from"),
        "{err}"
    );
    let (code, err) = show_with(
        &v2500_with("cpu = \"pa8500-440\"", "costs_from = \"no-such-server\""),
        "v2500-test",
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("unknown server `no-such-server`"), "{err}");
    let (code, err) = show_with(
        &v2500_with("cpu = \"pa9999\"", "costs_from = \"n4000\""),
        "v2500-test",
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("unknown CPU model `pa9999`"), "{err}");
}

#[test]
fn show_server_names_the_cpu_and_where_its_costs_come_from() {
    let out = Command::new(env!("CARGO_BIN_EXE_iosim"))
        .args(["show", "server", "v2500", "--format", "csv"])
        .output()
        .expect("iosim runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "CPU pa8500-440 (440 MHz, SPECint95 27.5); CPU costs scaled from n4000 by rating"
        ),
        "{text}"
    );
}
