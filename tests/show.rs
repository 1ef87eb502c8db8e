//! `iosim show server NAME`: a server's I/O tree with each node's capacity,
//! in every format, for every bundled server and for a `--models` server with
//! shared segments and an I/O controller; and the errors for a missing or
//! unknown name.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

mod common;
use common::iosim;

/// Standard output of a run that must succeed.
fn ok(args: &[&str]) -> String {
    let out = iosim(args);
    assert!(
        out.status.success(),
        "iosim {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The rows of the JSON tree.
fn json_rows(text: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(text).expect("JSON");
    v["server_tree"]
        .as_array()
        .expect("server_tree rows")
        .clone()
}

fn field<'a>(row: &'a Value, key: &str) -> &'a str {
    row[key].as_str().unwrap_or_default()
}

/// Checks that `dot` is a well-formed digraph: one `digraph "NAME" {` line,
/// balanced braces outside quoted strings, every statement ending with `;`,
/// and every edge's ends declared as nodes. Returns (nodes, edges).
fn check_dot(dot: &str, server: &str) -> (BTreeSet<String>, Vec<(String, String)>) {
    let first = dot.lines().next().unwrap_or_default();
    assert_eq!(first, format!("digraph \"{server}\" {{"), "{dot}");
    let (mut depth, mut in_str, mut esc) = (0i32, false, false);
    for c in dot.chars() {
        match (in_str, esc, c) {
            (true, true, _) => esc = false,
            (true, false, '\\') => esc = true,
            (_, false, '"') => in_str = !in_str,
            (false, _, '{') => depth += 1,
            (false, _, '}') => {
                depth -= 1;
                assert!(depth >= 0, "unbalanced braces:\n{dot}");
            }
            _ => {}
        }
    }
    assert!(!in_str && depth == 0, "unbalanced quotes or braces:\n{dot}");
    assert_eq!(dot.lines().last(), Some("}"));
    let quoted = |s: &str| -> Vec<String> {
        s.split('"')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, x)| x.to_string())
            .collect()
    };
    let mut nodes = BTreeSet::new();
    let mut edges = Vec::new();
    let body: Vec<&str> = dot.lines().skip(1).collect();
    for line in &body[..body.len() - 1] {
        let line = line.trim();
        assert!(line.ends_with(';'), "statement without `;`: {line}");
        if line.starts_with("node ") {
            continue;
        }
        let q = quoted(line);
        if line.contains("\" -> \"") {
            edges.push((q[0].clone(), q[1].clone()));
        } else {
            assert!(line.contains("[label=\""), "{line}");
            nodes.insert(q[0].clone());
        }
    }
    for (a, b) in &edges {
        assert!(
            nodes.contains(a) && nodes.contains(b),
            "edge {a} -> {b} of undeclared nodes"
        );
    }
    (nodes, edges)
}

#[test]
fn every_bundled_server_shows_in_every_format() {
    let params = ok(&["params", "--format", "json"]);
    let servers: BTreeSet<String> = serde_json::from_str::<Value>(&params).expect("JSON")
        ["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .filter_map(|r| {
            r["parameter"]
                .as_str()?
                .strip_prefix("server.")?
                .split('.')
                .next()
                .map(String::from)
        })
        .collect();
    assert!(servers.contains("rp8400-seu"), "{servers:?}");
    for server in &servers {
        let rows = json_rows(&ok(&["show", "server", server, "--format", "json"]));
        let slots: Vec<&Value> = rows.iter().filter(|r| field(r, "kind") == "slot").collect();
        assert!(!slots.is_empty(), "{server}: no slots");
        assert_eq!(field(&rows[0], "node"), "memory");
        // Every parent is an earlier node.
        let mut seen = BTreeSet::new();
        for r in &rows {
            let p = field(r, "parent");
            assert!(
                p.is_empty() || seen.contains(p),
                "{server}: parent {p} not before {r}"
            );
            seen.insert(field(r, "node").to_string());
        }
        let table = ok(&["show", "server", server]);
        let csv = ok(&["show", "server", server, "--format", "csv"]);
        for s in &slots {
            let node = field(s, "node");
            assert!(
                table.contains(&format!("    {node} ")),
                "{server}: {node} not indented under its segment"
            );
            assert!(
                csv.contains(&format!("\n{node},slot,")),
                "{server}: {node} not in CSV"
            );
        }
        let (nodes, edges) = check_dot(&ok(&["show", "server", server, "--format", "dot"]), server);
        assert_eq!(nodes.len(), rows.len(), "{server}");
        assert_eq!(edges.len(), rows.len() - 1, "{server}");
    }
}

#[test]
fn rp8400_has_32_slots_with_their_peaks_and_ropes() {
    let rows = json_rows(&ok(&["show", "server", "rp8400-seu", "--format", "json"]));
    let kind = |k: &str| rows.iter().filter(|r| field(r, "kind") == k).count();
    assert_eq!(kind("slot"), 32);
    // No segment is shared: one bus per slot, eight under each of the four
    // system bus adapters.
    assert_eq!(kind("segment"), 32);
    assert_eq!(kind("io_controller"), 4);
    let seu1 = rows
        .iter()
        .find(|r| field(r, "node") == "slot/seu-1")
        .expect("seu-1");
    let peak = seu1["capacity_MB_s"].as_f64().expect("capacity");
    assert!((peak - 533.3).abs() < 0.5, "PCI-X 66 peak {peak}");
    assert!(
        field(seu1, "detail").contains("2 ropes, 500 MB/s"),
        "{seu1}"
    );
    assert_eq!(field(seu1, "parent"), "bus/seu-1");
    let bus = rows
        .iter()
        .find(|r| field(r, "node") == "bus/seu-1")
        .expect("its bus");
    assert_eq!(field(bus, "parent"), "controller/sba-cell2");
    assert!(field(bus, "detail").contains("pcix66"), "{bus}");
    let sba = rows
        .iter()
        .find(|r| field(r, "node") == "controller/sba-cell2")
        .expect("the SEU's first SBA");
    assert_eq!(field(sba, "parent"), "memory");
    assert_eq!(sba["capacity_MB_s"].as_f64(), Some(2000.0));
    let table = ok(&["show", "server", "rp8400-seu"]);
    assert!(table.contains("    slot/seu-1 "), "{table}");
    assert!(table.contains("533  modes pcix66 pci66 pci33-64; 2 ropes, 500 MB/s"));
}

#[test]
fn sx2000_is_sixteen_chassis_from_one_template() {
    // One [[chassis]] template with per_cell = 1 on a 16-cell server: 16
    // controllers of 12 slots, chassis K on cell K, copy 0 keeping its names.
    let rows = json_rows(&ok(&["show", "server", "sx2000", "--format", "json"]));
    let kind = |k: &str| rows.iter().filter(|r| field(r, "kind") == k).count();
    assert_eq!(kind("io_controller"), 16);
    assert_eq!(kind("slot"), 192);
    let node = |n: &str| {
        rows.iter()
            .find(|r| field(r, "node") == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    assert_eq!(field(node("bus/slot-5"), "parent"), "controller/sba");
    assert_eq!(
        field(node("bus/chassis15-slot-5"), "parent"),
        "controller/sba-15"
    );
    assert!(
        field(node("controller/sba-15"), "detail")
            .contains("chassis 15, on cell 15 (a partition of 16 or more cells owns it)"),
        "{}",
        node("controller/sba-15")
    );
    // Every copy's slot has the template's modes and ropes.
    assert_eq!(
        field(node("slot/chassis7-slot-6"), "detail"),
        field(node("slot/slot-6"), "detail")
    );
    let dot = ok(&["show", "server", "sx2000", "--format", "dot"]);
    let (nodes, _) = check_dot(&dot, "sx2000");
    assert!(nodes.contains("controller/sba-15"), "{dot}");
    assert!(nodes.contains("slot/chassis15-slot-11"), "{dot}");
}

/// A `[[slot]]` table; `more` adds `segment` and `controller` lines.
fn slot(name: &str, modes: &str, ropes: u32, more: &str) -> String {
    format!("[[slot]]\nname = \"{name}\"\nmodes = [{modes}]\nropes = {ropes}\n{more}\n")
}

/// Two PCI-X 133 slots sharing a segment under an I/O controller, two
/// PCI-66 slots sharing one straight to memory, one slot of its own under
/// the controller.
fn slots() -> String {
    let pci = r#""pci66", "pci33-64""#;
    let pcix = r#""pcix133", "pcix66", "pci66""#;
    let pair = "segment = \"pcix-pair\"\ncontroller = \"sba\"\n";
    [
        slot("a1", pci, 1, "segment = \"pci-pair\"\n"),
        slot("a2", pci, 1, "segment = \"pci-pair\"\n"),
        slot("x1", pcix, 4, pair),
        slot("x2", pcix, 4, pair),
        slot("c1", r#""pcix66", "pci66""#, 2, "controller = \"sba\"\n"),
        "[[io_controller]]\nname = \"sba\"\n\n[io_controller.param]\n".into(),
        "bandwidth = { value = 1200, unit = \"MB/s\", source = \"test\" }\n".into(),
        "packet_overhead = { value = 8, unit = \"bytes\", source = \"test\" }\n".into(),
    ]
    .concat()
}

fn models(dir: &Path) -> String {
    let models = dir.join("models");
    std::fs::create_dir(&models).expect("models dir");
    std::fs::write(
        models.join("server.toml"),
        common::server_toml("shared-test", &[], &slots()),
    )
    .expect("server");
    models.display().to_string()
}

#[test]
fn shared_segments_and_a_controller_form_the_tree() {
    let dir = tempfile::tempdir().expect("temp dir");
    let m = models(dir.path());
    let args = ["show", "server", "shared-test", "--models", m.as_str()];
    let rows = json_rows(&ok(&[&args[..], &["--format", "json"]].concat()));
    let parent = |n: &str| {
        rows.iter()
            .find(|r| field(r, "node") == n)
            .map(|r| field(r, "parent").to_string())
            .unwrap_or_else(|| panic!("no node {n}: {rows:?}"))
    };
    let capacity = |n: &str| {
        rows.iter()
            .find(|r| field(r, "node") == n)
            .and_then(|r| r["capacity_MB_s"].as_f64())
            .unwrap_or(f64::NAN)
    };
    assert_eq!(parent("controller/sba"), "memory");
    assert!((capacity("controller/sba") - 1200.0).abs() < 1e-6);
    assert_eq!(parent("segment/pcix-pair"), "controller/sba");
    assert_eq!(parent("slot/x1"), "segment/pcix-pair");
    assert_eq!(parent("slot/x2"), "segment/pcix-pair");
    assert_eq!(parent("bus/c1"), "controller/sba");
    assert_eq!(parent("slot/c1"), "bus/c1");
    assert_eq!(parent("segment/pci-pair"), "memory");
    assert_eq!(parent("slot/a1"), "segment/pci-pair");
    assert_eq!(parent("slot/a2"), "segment/pci-pair");
    assert!((capacity("segment/pcix-pair") - 1066.7).abs() < 1.0);
    assert!((capacity("segment/pci-pair") - 533.3).abs() < 1.0);
    assert_eq!(
        rows.iter()
            .filter(|r| field(r, "kind") == "segment")
            .count(),
        3
    );
    let shared = rows
        .iter()
        .find(|r| field(r, "node") == "segment/pcix-pair")
        .expect("segment");
    assert!(
        field(shared, "detail").contains("shared by 2 slots"),
        "{shared}"
    );
    let x1 = rows
        .iter()
        .find(|r| field(r, "node") == "slot/x1")
        .expect("x1");
    assert!(field(x1, "detail").contains("4 ropes, 1000 MB/s"), "{x1}");

    let table = ok(&args);
    let lines: Vec<&str> = table.lines().collect();
    let at = |n: &str| {
        lines
            .iter()
            .position(|l| l.trim_start().starts_with(&format!("{n} ")))
            .unwrap_or_else(|| panic!("{n} missing:\n{table}"))
    };
    let indent = |n: &str| lines[at(n)].len() - lines[at(n)].trim_start().len();
    assert_eq!(indent("controller/sba"), 2);
    assert_eq!(indent("segment/pcix-pair"), 4);
    assert_eq!(indent("slot/x1"), 6);
    assert_eq!(indent("segment/pci-pair"), 2);
    assert_eq!(indent("slot/a2"), 4);
    assert!(at("controller/sba") < at("segment/pcix-pair"));
    assert!(at("segment/pcix-pair") < at("slot/x2"));

    let csv = ok(&[&args[..], &["--format", "csv"]].concat());
    assert!(
        csv.contains("\nslot/x2,slot,segment/pcix-pair,1067,"),
        "{csv}"
    );

    let (nodes, edges) = check_dot(
        &ok(&[&args[..], &["--format", "dot"]].concat()),
        "shared-test",
    );
    assert_eq!(nodes.len(), rows.len());
    assert!(edges.contains(&("segment/pcix-pair".into(), "slot/x1".into())));
    assert!(edges.contains(&("controller/sba".into(), "segment/pcix-pair".into())));
}

/// The bundled servers, as `show server` lists them (sorted).
const KNOWN: &str = "known: i570, k580, n4000, n4000-1cpu, n4000-2cpu, n4000-4cpu, n4000-6cpu, \
     pc-440bx, rp4440, rp7410, rp7420, rp8400-seu, rp8420, rx2600, rx2620, rx2660, rx4640, rx6600, \
     rx7640, rx8620, rx8640, sx2000, v2500";

#[test]
fn a_missing_or_unknown_server_lists_the_known_ones() {
    let out = iosim(&["show", "server", "no-such-server"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown server `no-such-server`"), "{err}");
    assert!(err.contains(KNOWN), "{err}");
    assert!(out.stdout.is_empty());

    let out = iosim(&["show", "server"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(KNOWN), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_count_chassis_template_copies_slots_segments_and_controller() {
    // Two slots of its own, then a template copied three times whose two
    // slots share a segment: copy K renames the controller `cage-K` and the
    // slots and segment `chassisK-...`; a `count` chassis belongs to no cell.
    let pci = r#""pci66", "pci33-64""#;
    let own = slot("a1", pci, 1, "");
    let template = [
        "[[chassis]]\ncount = 3\n\n[chassis.io_controller]\nname = \"cage\"\n\n",
        "[chassis.io_controller.param]\n",
        "bandwidth = { value = 800, unit = \"MB/s\", source = \"test\" }\n",
        "packet_overhead = { value = 8, unit = \"bytes\", source = \"test\" }\n\n",
        &format!(
            "[[chassis.slot]]\nname = \"s1\"\nmodes = [{pci}]\nropes = 2\nsegment = \"pair\"\n\n"
        ),
        &format!(
            "[[chassis.slot]]\nname = \"s2\"\nmodes = [{pci}]\nropes = 2\nsegment = \"pair\"\n"
        ),
    ]
    .concat();
    let dir = tempfile::tempdir().expect("temp dir");
    let models = dir.path().join("models");
    std::fs::create_dir(&models).expect("models dir");
    std::fs::write(
        models.join("server.toml"),
        common::server_toml("cage-test", &[], &format!("{own}\n{template}")),
    )
    .expect("server");
    let m = models.display().to_string();
    let rows = json_rows(&ok(&[
        "show",
        "server",
        "cage-test",
        "--models",
        &m,
        "--format",
        "json",
    ]));
    let parent = |n: &str| {
        rows.iter()
            .find(|r| field(r, "node") == n)
            .map(|r| field(r, "parent").to_string())
            .unwrap_or_else(|| panic!("no node {n}: {rows:?}"))
    };
    assert_eq!(parent("bus/a1"), "memory");
    assert_eq!(parent("segment/pair"), "controller/cage");
    assert_eq!(parent("slot/s2"), "segment/pair");
    assert_eq!(parent("segment/chassis2-pair"), "controller/cage-2");
    assert_eq!(parent("slot/chassis2-s1"), "segment/chassis2-pair");
    assert_eq!(
        rows.iter().filter(|r| field(r, "kind") == "slot").count(),
        7
    );
    let cage2 = rows
        .iter()
        .find(|r| field(r, "node") == "controller/cage-2")
        .expect("cage-2");
    assert!(field(cage2, "detail").ends_with("; chassis 2"), "{cage2}");
    // Every copy's parameter has its own dotted path and the template's source.
    let params = ok(&["params", "--models", &m]);
    assert!(
        params.lines().any(
            |l| l.starts_with("server.cage-test.controller.cage-2.bandwidth") && l.contains("test")
        ),
        "{params}"
    );
}

#[test]
fn list_names_every_model_of_a_kind_with_its_calibration_and_source() {
    for (kind, some) in [
        ("servers", "rx6600"),
        ("adapters", "ab379b"),
        ("testbeds", "hp-2004-lab"),
        ("links", "fc-4g"),
        ("buses", "pcix266"),
        ("cpus", ""),
    ] {
        let out = common::iosim(&["list", kind, "--format", "json"]);
        assert!(
            out.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let js: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let rows = js[kind].as_array().expect(kind);
        assert!(!rows.is_empty(), "{kind}");
        for r in rows {
            for f in ["name", "description", "calibration", "source"] {
                assert!(!r[f].as_str().expect(f).is_empty(), "{kind}: {r}");
            }
            assert!(
                r["source"].as_str().expect("source").ends_with(".toml"),
                "{r}"
            );
        }
        if !some.is_empty() {
            assert!(
                rows.iter().any(|r| r["name"] == some),
                "{kind} lacks {some}"
            );
        }
    }
    // The calibration status `list KIND` gives model `name`.
    let status = |kind: &str, name: &str| -> String {
        let out = common::iosim(&["list", kind, "--format", "json"]);
        let js: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        js[kind]
            .as_array()
            .expect(kind)
            .iter()
            .find(|r| r["name"] == name)
            .and_then(|r| r["calibration"].as_str())
            .expect("calibration")
            .to_string()
    };
    // The A5513A's SAR processor is fitted; the AB379B's values are not.
    let a5513a = status("adapters", "a5513a");
    assert!(a5513a.starts_with("fitted"), "{a5513a}");
    let ab379b = status("adapters", "ab379b");
    assert!(!ab379b.contains("fitted"), "{ab379b}");
    // The rp7410 fits nothing of its own, but its CPU costs are the rp8400's,
    // two of them fitted: its status says so.
    let rp7410 = status("servers", "rp7410");
    assert!(
        rp7410.starts_with("assumed")
            && rp7410.contains("carried from rp8400-seu")
            && rp7410.contains("fitted to the papers' figures: 2 of 6 values (cpu_per_packet, cpu_per_segment_sent)"),
        "{rp7410}"
    );
    // An unknown kind is a usage error.
    assert_eq!(common::iosim(&["list", "widgets"]).status.code(), Some(2));
}

#[test]
fn show_adapter_and_testbed_print_their_parameters_with_sources() {
    let out = common::iosim(&["show", "adapter", "ab379b", "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let js: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        js["modes"].as_str().expect("modes").starts_with("pcix266"),
        "{js}"
    );
    let functions = js["functions"].as_array().expect("functions");
    assert_eq!(functions.len(), 2);
    assert_eq!(functions[0]["link"], "fc-4g");
    let params = js["parameters"].as_array().expect("parameters");
    assert!(params
        .iter()
        .all(|p| !p["source"].as_str().expect("source").is_empty()));
    let out = common::iosim(&["show", "testbed", "hp-2004-lab"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("## parameters"));
    // Unknown names list the known ones (exit 1); no name is a usage error.
    let bad = common::iosim(&["show", "adapter", "ab379c"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("ab379b"));
    assert_eq!(common::iosim(&["show", "testbed"]).status.code(), Some(2));
}
