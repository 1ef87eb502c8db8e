//! The CPU pool: the functions of a partition share its CPUs. More busy
//! ports than CPUs run (never an error), the CPUs saturate, whole-machine
//! utilisation approaches 100%, and each port gets less as ports are added.

use serde_json::Value;

mod common;

/// A scenario of `n` A9782A cards in internal slots of a one-cell rp8400
/// (4 CPUs), each GigE port running netperf bidirectional; FC idle.
fn scenario(n: usize) -> String {
    scenario_pinned(n, "")
}

/// [`scenario`] with `pins` (e.g. `interrupt_cpu = 0`) added to every
/// workload.
fn scenario_pinned(n: usize, pins: &str) -> String {
    let mut s = String::from(
        r#"[scenario]
name = "cpu-pool"
title = "GigE bidirectional on n cards, one cell"

[run]
warmup_ms = 2
duration_ms = 8

[[experiment]]
id = "ports"
server = "rp8400-seu"
testbed = "hp-2004-lab"
cells = 1
"#,
    );
    for i in 1..=n {
        s += &format!(
            r#"
[[experiment.card]]
name = "g{i}"
adapter = "a9782a"
slot = "internal-{i}"

[[experiment.workload]]
card = "g{i}"
function = "gige"
kind = "netperf-tcp-stream"
direction = "bidirectional"
socket_kib = 128
message_kib = 32
{pins}
"#
        );
    }
    s
}

/// (GigE Mbit/s per port, whole-machine CPU %, bottleneck) with `n` ports.
fn run(n: usize) -> (Vec<f64>, f64, String) {
    run_text(&scenario(n))
}

/// [`run`] of a scenario's text.
fn run_text(text: &str) -> (Vec<f64>, f64, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("pool.toml");
    std::fs::write(&path, text).expect("write scenario");
    let v = common::run_json(None, &path);
    let section = |name: &str| -> Vec<Value> {
        v[name]
            .as_array()
            .unwrap_or_else(|| panic!("section {name}"))
            .clone()
    };
    let ports: Vec<f64> = section("functions")
        .iter()
        .filter(|f| f["function"].as_str().is_some_and(|l| l.ends_with(".gige")))
        .map(|f| f["total_Mbit_s"].as_f64().expect("Mbit/s"))
        .collect();
    let exp = &section("experiments")[0];
    (
        ports,
        exp["cpu_util_pct"].as_f64().expect("cpu"),
        exp["bottleneck"].as_str().expect("bottleneck").to_string(),
    )
}

#[test]
fn ports_outnumbering_cpus_share_them_and_saturate_the_partition() {
    let (one, cpu_one, _) = run(1);
    let (two, _, _) = run(2);
    let (four, cpu_four, bottleneck) = run(4);
    assert_eq!((one.len(), two.len(), four.len()), (1, 2, 4));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    // Alone a port uses about half the partition (its interrupt CPU
    // saturated, the netperf processes partly); four saturate it.
    assert!(cpu_one < 60.0, "one port: {cpu_one}% of the CPUs");
    assert!(cpu_four > 95.0, "four ports: {cpu_four}% of the CPUs");
    assert!(bottleneck.contains("CPU"), "{bottleneck}");
    assert!(
        mean(&four) < 0.75 * one[0] && mean(&two) <= 1.02 * one[0],
        "per-port Mbit/s falls as ports are added: 1 {one:?}, 2 {two:?}, 4 {four:?}"
    );
    // The partition's CPUs bound the sum: four ports together get no more
    // than one port gets per CPU it uses, times the partition's CPUs (one
    // port alone keeps `cpu_one`% of them busy), give or take 10%.
    let bound = one[0] * 100.0 / cpu_one;
    assert!(
        four.iter().sum::<f64>() < 1.1 * bound,
        "{four:?} vs {one:?}: the CPUs carry at most {bound:.0} Mbit/s"
    );
}

#[test]
fn interrupts_pinned_to_one_cpu_share_it() {
    let (spread, _, _) = run(2);
    let (pinned, _, bottleneck) = run_text(&scenario_pinned(2, "interrupt_cpu = 0"));
    assert!(
        bottleneck.starts_with("CPU 0: interrupts of") && bottleneck.contains("g1.gige, g2.gige"),
        "{bottleneck}"
    );
    let sum = |v: &[f64]| v.iter().sum::<f64>();
    // Spread, the two ports' processes share CPUs 0 and 2 (beside the idle
    // FC functions' interrupts), which limits them too: pinned loses 17%.
    assert!(
        sum(&pinned) < 0.9 * sum(&spread),
        "two ports' interrupts on one CPU: {pinned:?}, spread: {spread:?}"
    );
}

#[test]
fn eight_busy_functions_run_on_four_cpus_and_saturate_them() {
    // Four A9782A cards, both functions of each busy (FC 8 KiB reads, GigE
    // bidirectional), on a one-cell partition of 4 CPUs: eight functions'
    // interrupts and eight netperf processes share the four CPUs.
    let mut s = scenario(4);
    for i in 1..=4 {
        s += &format!(
            "\n[[experiment.workload]]\ncard = \"g{i}\"\nfunction = \"fc\"\nkind = \"diskbench\"\ndirection = \"read\"\nblock_kib = 8\n"
        );
    }
    let (gige, cpu, bottleneck) = run_text(&s);
    let (alone, _, _) = run(1);
    assert_eq!(gige.len(), 4);
    assert!(cpu > 95.0, "whole-machine CPU {cpu}%");
    assert!(bottleneck.starts_with("CPU"), "{bottleneck}");
    let mean = gige.iter().sum::<f64>() / 4.0;
    assert!(
        mean < 0.5 * alone[0],
        "each GigE port gets less beside seven busy functions: {gige:?} against {alone:?} alone"
    );
}

#[test]
fn no_card_starves_when_processes_outnumber_the_free_cpus() {
    // The rp7410's four GigE cards bidirectional on 8 CPUs: four interrupt
    // CPUs saturated by their cards and eight netperf processes, four of
    // them placed beside the interrupts. The CPUs left free take their work,
    // so every card moves data and the partition saturates (the paper:
    // 99.87%).
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/rp7410/gige-cpu.toml"
    );
    let out = common::iosim(&["run", "--no-sensitivity", "--format", "json", path]);
    let v: Value = serde_json::from_str(&common::succeeded(&out)).expect("json output");
    let rows = |section: &str| -> Vec<Value> {
        let all = v[section].as_array().unwrap_or_else(|| panic!("{section}"));
        all.iter()
            .filter(|r| r["experiment"] == "bd.4card")
            .cloned()
            .collect()
    };
    let cards: Vec<f64> = rows("functions")
        .iter()
        .map(|f| f["total_Mbit_s"].as_f64().expect("Mbit/s"))
        .collect();
    assert_eq!(cards.len(), 4);
    let mean = cards.iter().sum::<f64>() / 4.0;
    assert!(
        cards.iter().all(|&c| c > 0.5 * mean),
        "every card moves data: {cards:?}"
    );
    let cpu = rows("experiments")[0]["cpu_util_pct"]
        .as_f64()
        .expect("cpu");
    assert!(cpu > 95.0, "the CPUs saturate: {cpu}%");
    let taken = rows("cpus")
        .iter()
        .filter(|c| {
            c["work"]
                .as_str()
                .is_some_and(|w| w.contains("taken from busier CPUs"))
        })
        .count();
    assert!(taken > 0, "the per-CPU table says which CPUs took work");
}
