//! Drives the real `iosim` binary: output formats, the published figures it
//! compares against, determinism, and every subcommand on bundled inputs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

/// The 223 published figures: the 50 of HP's April 2004 rp8400 + A9782A
/// paper, the 24 of HP's 1999 ATM adapter paper (Tables 8 and 9:
/// aggregate throughput and whole-system CPU %), the 83 of Matrox's
/// NS-FNIC/4 paper (Tables 2, 3, 5 and 10), the 36 of the ATM paper's page 2
/// (Tables 2 and 3: one adapter, 1-CPU N4000), the 17 of the AB379B paper's
/// charts (with the A6826A's service demand), the 4 of the HP-UX 11i v3 mass
/// storage paper and the 9 of the rp7410 GigE paper, as (stable id,
/// published value). These are the papers' numbers: they must never change, whatever
/// the model predicts.
// 6.28 Mibit/s is a published figure, not an approximation of tau.
#[allow(clippy::approx_constant)]
const PUBLISHED: [(&str, f64); 223] = [
    ("hp2g.gige-rx.pcix.c1", 929.0),
    ("hp2g.gige-rx.pcix.c2", 924.0),
    ("hp2g.gige-rx.pcix.c4", 921.0),
    ("hp2g.gige-rx+fc-bd.pcix.c1", 837.0),
    ("hp2g.gige-rx+fc-bd.pcix.c2", 830.0),
    ("hp2g.gige-rx+fc-bd.pcix.c4", 837.0),
    ("hp2g.gige-rx.pci66.c1", 929.0),
    ("hp2g.gige-rx.pci66.c4", 921.0),
    ("hp2g.gige-rx+fc-bd.pci66.c1", 585.0),
    ("hp2g.gige-rx+fc-bd.pci66.c4", 585.0),
    ("hp2g.gige-tx.pcix.c1", 900.0),
    ("hp2g.gige-tx.pcix.c2", 890.0),
    ("hp2g.gige-tx.pcix.c4", 868.0),
    ("hp2g.gige-tx+fc-bd.pcix.c1", 700.0),
    ("hp2g.gige-tx+fc-bd.pcix.c2", 658.0),
    ("hp2g.gige-tx+fc-bd.pcix.c4", 638.0),
    ("hp2g.gige-tx.pci66.c1", 900.0),
    ("hp2g.gige-tx.pci66.c4", 868.0),
    ("hp2g.gige-tx+fc-bd.pci66.c1", 440.0),
    ("hp2g.gige-tx+fc-bd.pci66.c4", 440.0),
    ("hp2g.gige-bd.pcix.c1", 1250.0),
    ("hp2g.gige-bd.pcix.c2", 1206.0),
    ("hp2g.gige-bd.pcix.c4", 1175.0),
    ("hp2g.gige-bd+fc-bd.pcix.c1", 884.0),
    ("hp2g.gige-bd+fc-bd.pcix.c2", 881.0),
    ("hp2g.gige-bd+fc-bd.pcix.c4", 865.0),
    ("hp2g.gige-bd.pci66.c1", 1250.0),
    ("hp2g.gige-bd.pci66.c4", 1175.0),
    ("hp2g.gige-bd+fc-bd.pci66.c1", 592.0),
    ("hp2g.gige-bd+fc-bd.pci66.c4", 592.0),
    ("hp2g.fc-rd.pcix.c1", 191.0),
    ("hp2g.fc-rd.pcix.c2", 191.0),
    ("hp2g.fc-rd.pcix.c4", 191.0),
    ("hp2g.fc-rd+gige-bd.pcix.c1", 191.0),
    ("hp2g.fc-rd+gige-bd.pcix.c2", 191.0),
    ("hp2g.fc-rd+gige-bd.pcix.c4", 191.0),
    ("hp2g.fc-rd.pci66.c1", 191.0),
    ("hp2g.fc-rd.pci66.c4", 191.0),
    ("hp2g.fc-rd+gige-bd.pci66.c1", 157.0),
    ("hp2g.fc-rd+gige-bd.pci66.c4", 157.0),
    ("hp2g.fc-wr.pcix.c1", 184.0),
    ("hp2g.fc-wr.pcix.c2", 169.0),
    ("hp2g.fc-wr.pcix.c4", 168.0),
    ("hp2g.fc-wr+gige-bd.pcix.c1", 160.0),
    ("hp2g.fc-wr+gige-bd.pcix.c2", 145.0),
    ("hp2g.fc-wr+gige-bd.pcix.c4", 143.0),
    ("hp2g.fc-wr.pci66.c1", 184.0),
    ("hp2g.fc-wr.pci66.c4", 168.0),
    ("hp2g.fc-wr+gige-bd.pci66.c1", 117.0),
    ("hp2g.fc-wr+gige-bd.pci66.c4", 90.0),
    ("atm.atm155.out.mtu9218", 538.0),
    ("atm.atm155.out.mtu9218.cpu", 2.75),
    ("atm.atm155.in.mtu9218", 529.0),
    ("atm.atm155.in.mtu9218.cpu", 4.04),
    ("atm.atm155.bd.mtu9218", 772.0),
    ("atm.atm155.bd.mtu9218.cpu", 6.8),
    ("atm.atm155.out.mtu1516", 475.0),
    ("atm.atm155.out.mtu1516.cpu", 6.3),
    ("atm.atm155.in.mtu1516", 268.0),
    ("atm.atm155.in.mtu1516.cpu", 3.28),
    ("atm.atm155.bd.mtu1516", 338.0),
    ("atm.atm155.bd.mtu1516.cpu", 4.9),
    ("atm.atm622.out.mtu9218", 1567.0),
    ("atm.atm622.out.mtu9218.cpu", 14.36),
    ("atm.atm622.in.mtu9218", 1221.0),
    ("atm.atm622.in.mtu9218.cpu", 11.91),
    ("atm.atm622.bd.mtu9218", 1529.0),
    ("atm.atm622.bd.mtu9218.cpu", 23.54),
    ("atm.atm622.out.mtu1516", 598.0),
    ("atm.atm622.out.mtu1516.cpu", 11.83),
    ("atm.atm622.in.mtu1516", 444.0),
    ("atm.atm622.in.mtu1516.cpu", 6.91),
    ("atm.atm622.bd.mtu1516", 680.0),
    ("atm.atm622.bd.mtu1516.cpu", 20.88),
    // Matrox, NS-FNIC/4 under Red Hat Linux: Tables 2, 3, 5 and 10.
    ("matrox.netperf.10half.port1", 6.86),
    ("matrox.netperf.10half.port1.cpu", 1.85),
    ("matrox.netperf.10full.port1", 9.38),
    ("matrox.netperf.10full.port1.cpu", 2.59),
    ("matrox.netperf.100half.port1", 65.98),
    ("matrox.netperf.100half.port1.cpu", 17.5),
    ("matrox.netperf.100full.port1", 88.81),
    ("matrox.netperf.100full.port1.cpu", 23.97),
    ("matrox.netperf.10half.port2", 6.87),
    ("matrox.netperf.10half.port2.cpu", 1.86),
    ("matrox.netperf.10full.port2", 9.38),
    ("matrox.netperf.10full.port2.cpu", 2.51),
    ("matrox.netperf.100half.port2", 66.14),
    ("matrox.netperf.100half.port2.cpu", 17.06),
    ("matrox.netperf.100full.port2", 88.37),
    ("matrox.netperf.100full.port2.cpu", 22.98),
    ("matrox.netperf.10half.port3", 6.89),
    ("matrox.netperf.10half.port3.cpu", 1.85),
    ("matrox.netperf.10full.port3", 9.38),
    ("matrox.netperf.10full.port3.cpu", 2.59),
    ("matrox.netperf.100half.port3", 66.02),
    ("matrox.netperf.100half.port3.cpu", 17.51),
    ("matrox.netperf.100full.port3", 89.43),
    ("matrox.netperf.100full.port3.cpu", 24.33),
    ("matrox.netperf.10half.port4", 6.89),
    ("matrox.netperf.10half.port4.cpu", 1.85),
    ("matrox.netperf.10full.port4", 9.38),
    ("matrox.netperf.10full.port4.cpu", 2.66),
    ("matrox.netperf.100half.port4", 66.03),
    ("matrox.netperf.100half.port4.cpu", 17.56),
    ("matrox.netperf.100full.port4", 89.51),
    ("matrox.netperf.100full.port4.cpu", 24.11),
    ("matrox.ttcp.10half.port1", 6.49),
    ("matrox.ttcp.10full.port1", 8.94),
    ("matrox.ttcp.100half.port1", 62.34),
    ("matrox.ttcp.100full.port1", 89.24),
    ("matrox.ttcp.10half.port2", 6.51),
    ("matrox.ttcp.10full.port2", 8.94),
    ("matrox.ttcp.100half.port2", 61.56),
    ("matrox.ttcp.100full.port2", 89.14),
    ("matrox.ttcp.10half.port3", 6.54),
    ("matrox.ttcp.10full.port3", 8.94),
    ("matrox.ttcp.100half.port3", 62.29),
    ("matrox.ttcp.100full.port3", 89.26),
    ("matrox.ttcp.10half.port4", 6.53),
    ("matrox.ttcp.10full.port4", 8.94),
    ("matrox.ttcp.100half.port4", 62.05),
    ("matrox.ttcp.100full.port4", 88.51),
    ("matrox.ipfwd.10half.port1", 6.32),
    ("matrox.ipfwd.10full.port1", 8.94),
    ("matrox.ipfwd.100half.port1", 61.14),
    ("matrox.ipfwd.100full.port1", 61.17),
    ("matrox.ipfwd.10half.port2", 6.32),
    ("matrox.ipfwd.10full.port2", 8.94),
    ("matrox.ipfwd.100half.port2", 61.13),
    ("matrox.ipfwd.100full.port2", 61.54),
    ("matrox.ipfwd.10half.port3", 6.28),
    ("matrox.ipfwd.10full.port3", 8.94),
    ("matrox.ipfwd.100half.port3", 61.32),
    ("matrox.ipfwd.100full.port3", 63.47),
    ("matrox.ipfwd.10half.port4", 6.28),
    ("matrox.ipfwd.10full.port4", 8.94),
    ("matrox.ipfwd.100half.port4", 62.0),
    ("matrox.ipfwd.100full.port4", 64.59),
    ("matrox.twocards.100full.port1", 34.44),
    ("matrox.twocards.100full.port2", 35.12),
    ("matrox.twocards.100full.port3", 34.23),
    ("matrox.twocards.100full.port4", 35.0),
    ("matrox.twocards.100full.port5", 34.52),
    ("matrox.twocards.100full.port6", 34.67),
    ("matrox.twocards.100full.port7", 34.84),
    ("matrox.twocards.100full.port8", 53.98),
    ("matrox.twocards.100full.total", 296.8),
    ("matrox.twocards.100half.port1", 39.88),
    ("matrox.twocards.100half.port2", 39.4),
    ("matrox.twocards.100half.port3", 39.82),
    ("matrox.twocards.100half.port4", 39.65),
    ("matrox.twocards.100half.port5", 36.42),
    ("matrox.twocards.100half.port6", 39.43),
    ("matrox.twocards.100half.port7", 39.73),
    ("matrox.twocards.100half.port8", 46.23),
    ("matrox.twocards.100half.total", 320.56),
    ("matrox.twocards.100full.cpu", 99.0),
    ("atm1.atm155.out.clip9180", 134.45),
    ("atm1.atm155.out.clip9180.cpu", 6.5),
    ("atm1.atm155.in.clip9180", 132.03),
    ("atm1.atm155.in.clip9180.cpu", 5.65),
    ("atm1.atm155.bd.clip9180", 260.12),
    ("atm1.atm155.bd.clip9180.cpu", 11.17),
    ("atm1.atm155.out.lane9218", 134.13),
    ("atm1.atm155.out.lane9218.cpu", 8.4),
    ("atm1.atm155.in.lane9218", 132.38),
    ("atm1.atm155.in.lane9218.cpu", 6.42),
    ("atm1.atm155.bd.lane9218", 258.14),
    ("atm1.atm155.bd.lane9218.cpu", 12.24),
    ("atm1.atm155.out.lane1516", 128.4),
    ("atm1.atm155.out.lane1516.cpu", 10.4),
    ("atm1.atm155.in.lane1516", 128.22),
    ("atm1.atm155.in.lane1516.cpu", 8.49),
    ("atm1.atm155.bd.lane1516", 240.25),
    ("atm1.atm155.bd.lane1516.cpu", 17.8),
    ("atm1.atm622.out.clip9180", 538.14),
    ("atm1.atm622.out.clip9180.cpu", 26.85),
    ("atm1.atm622.in.clip9180", 535.42),
    ("atm1.atm622.in.clip9180.cpu", 23.61),
    ("atm1.atm622.bd.clip9180", 1005.0),
    ("atm1.atm622.bd.clip9180.cpu", 57.1),
    ("atm1.atm622.out.lane9218", 533.0),
    ("atm1.atm622.out.lane9218.cpu", 28.58),
    ("atm1.atm622.in.lane9218", 537.0),
    ("atm1.atm622.in.lane9218.cpu", 25.52),
    ("atm1.atm622.bd.lane9218", 965.0),
    ("atm1.atm622.bd.lane9218.cpu", 77.14),
    ("atm1.atm622.out.lane1516", 448.0),
    ("atm1.atm622.out.lane1516.cpu", 88.79),
    ("atm1.atm622.in.lane1516", 454.48),
    ("atm1.atm622.in.lane1516.cpu", 20.05),
    ("atm1.atm622.bd.lane1516", 453.15),
    ("atm1.atm622.bd.lane1516.cpu", 71.27),
    ("ab379b.seq256.1port", 410.0),
    ("ab379b.seq256.2port", 820.0),
    ("ab379b.sd.1k", 14.8),
    ("ab379b.sd.1k.tput", 106.0),
    ("ab379b.sd.1k.cpu", 19.7),
    ("ab379b.sd.4k", 3.5),
    ("ab379b.sd.4k.tput", 380.0),
    ("ab379b.sd.4k.cpu", 16.8),
    ("ab379b.sd.8k", 1.9),
    ("ab379b.sd.8k.tput", 392.0),
    ("ab379b.sd.8k.cpu", 9.1),
    ("a6826a.sd.rd.1k", 18.0),
    ("a6826a.sd.wr.1k", 21.0),
    ("a6826a.sd.rd.4k", 4.2),
    ("a6826a.sd.wr.4k", 4.7),
    ("a6826a.sd.rd.8k", 2.4),
    ("a6826a.sd.wr.8k", 2.8),
    ("hpuxms.ab379b.1port.rd", 412.0),
    ("hpuxms.ab379b.1port.wr", 410.0),
    ("hpuxms.ab379b.4port.rd", 1470.0),
    ("hpuxms.ab379b.4port.wr", 1465.0),
    ("rp7410.gige-tx.1card.cpu", 12.82),
    ("rp7410.gige-tx.2card.cpu", 26.9),
    ("rp7410.gige-tx.4card.cpu", 63.96),
    ("rp7410.gige-rx.1card.cpu", 28.17),
    ("rp7410.gige-rx.2card.cpu", 45.13),
    ("rp7410.gige-rx.4card.cpu", 91.16),
    ("rp7410.gige-bd.1card.cpu", 38.91),
    ("rp7410.gige-bd.2card.cpu", 68.76),
    ("rp7410.gige-bd.4card.cpu", 99.87),
];

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_iosim")
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `iosim args...` in `dir` (the repository root when `None`).
fn iosim_in(dir: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args);
    cmd.current_dir(dir.map(Path::to_path_buf).unwrap_or_else(repo));
    cmd.output().expect("the iosim binary runs")
}

/// Runs `iosim args...`, asserts success and returns stdout.
fn ok_stdout(args: &[&str]) -> String {
    ok_stdout_in(None, args)
}

fn ok_stdout_in(dir: Option<&Path>, args: &[&str]) -> String {
    let out = iosim_in(dir, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "iosim {args:?} failed with {:?}\nstderr:\n{stderr}",
        out.status.code()
    );
    assert!(
        !stderr.contains("panicked"),
        "iosim {args:?} panicked:\n{stderr}"
    );
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

fn parse_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("output is not JSON ({e}):\n{text}"))
}

/// `iosim validate --format json` with the default seed, run once per test binary.
fn validate_json_default() -> &'static str {
    static CELL: OnceLock<String> = OnceLock::new();
    CELL.get_or_init(|| ok_stdout(&["validate", "--format", "json"]))
}

/// `iosim validate --format json --seed 7`, run once per test binary.
fn validate_json_seed7() -> &'static str {
    static CELL: OnceLock<String> = OnceLock::new();
    CELL.get_or_init(|| ok_stdout(&["validate", "--format", "json", "--seed", "7"]))
}

/// The `figures` array of a validate JSON report.
fn figures(v: &Value) -> &Vec<Value> {
    v.get("figures")
        .and_then(Value::as_array)
        .expect("report has a `figures` array")
}

/// (id, predicted) of every figure.
fn predictions(v: &Value) -> Vec<(String, f64)> {
    figures(v)
        .iter()
        .map(|f| {
            let id = f["id"].as_str().expect("id is a string").to_string();
            let p = f["predicted"]
                .as_f64()
                .unwrap_or_else(|| panic!("{id}: predicted is not a number: {}", f["predicted"]));
            (id, p)
        })
        .collect()
}

/// Splits one CSV record (RFC 4180 quoting, no embedded newlines).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', true) => quoted = false,
            ('"', false) if cur.is_empty() => quoted = true,
            (',', false) => fields.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    fields.push(cur);
    fields
}

/// The header and rows of CSV section `name` (`# section: name` blocks).
fn csv_section(text: &str, name: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let marker = format!("# section: {name}");
    let mut lines = text.lines().skip_while(|l| l.trim() != marker);
    assert!(
        lines.next().is_some(),
        "no `{marker}` in CSV output:\n{text}"
    );
    let header = csv_fields(lines.next().expect("a header follows the section marker"));
    let rows: Vec<Vec<String>> = lines
        .take_while(|l| !l.starts_with('#'))
        .filter(|l| !l.is_empty())
        .map(csv_fields)
        .collect();
    for r in &rows {
        assert_eq!(
            r.len(),
            header.len(),
            "row {r:?} does not match header {header:?}"
        );
    }
    (header, rows)
}

fn column(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column `{name}` in {header:?}"))
}

#[test]
fn published_table_names_no_id_twice() {
    // The table below is a copy of the reference table's 223 rows; an id
    // written twice (a copy error) would let a figure go unchecked.
    let ids: BTreeSet<&str> = PUBLISHED.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids.len(), PUBLISHED.len());
}

#[test]
fn validate_json_reports_every_published_figure_unchanged() {
    let v = parse_json(validate_json_default());
    let obj = v.as_object().expect("the JSON report is an object");
    for key in ["seed", "schema_version", "units", "figures"] {
        assert!(
            obj.contains_key(key),
            "JSON report lacks `{key}`: keys {:?}",
            obj.keys().collect::<Vec<_>>()
        );
    }
    assert_eq!(v["seed"], 1, "default seed is 1");
    assert!(
        v["schema_version"].is_number(),
        "schema_version is a number"
    );
    assert!(
        v["units"]
            .as_str()
            .is_some_and(|u| u.contains("10^6 bytes/s")),
        "units: {}",
        v["units"]
    );

    let figs = figures(&v);
    assert_eq!(figs.len(), 223, "exactly 223 figures");
    let mut seen = BTreeSet::new();
    for f in figs {
        for key in ["id", "published", "predicted", "unit", "error_pct"] {
            assert!(f.get(key).is_some(), "figure lacks `{key}`: {f}");
        }
        let id = f["id"].as_str().expect("id is a string");
        assert!(
            ["hp2g.", "atm.", "matrox.", "atm1.", "ab379b.", "a6826a.", "hpuxms.", "rp7410."]
                .iter()
                .any(|p| id.starts_with(p)),
            "id `{id}` is not a figure of a bundled paper"
        );
        assert!(seen.insert(id.to_string()), "id `{id}` appears twice");
        let unit = f["unit"].as_str().expect("unit is a string");
        assert!(
            unit == "Mbit/s"
                || unit == "MB/s"
                || (unit == "Mibit/s" && id.starts_with("matrox."))
                || (unit == "%" && id.ends_with(".cpu"))
                || (unit == "ms CPU per MB" && id.contains(".sd.")),
            "{id}: unit `{unit}`"
        );
        assert!(
            f["predicted"].is_number(),
            "{id}: predicted is not a finite number: {}",
            f["predicted"]
        );
        assert!(
            f["error_pct"].is_number(),
            "{id}: error_pct is not a finite number: {}",
            f["error_pct"]
        );
        let published = f["published"].as_f64().expect("published is a number");
        let (_, want) = PUBLISHED
            .iter()
            .find(|(pid, _)| *pid == id)
            .unwrap_or_else(|| panic!("`{id}` is not one of the paper's figures"));
        assert_eq!(published, *want, "{id}: published value changed");
    }
    let expected: BTreeSet<String> = PUBLISHED.iter().map(|(id, _)| id.to_string()).collect();
    assert_eq!(seen, expected, "the figure ids are exactly the paper's");
}

#[test]
fn validate_error_pct_is_relative_to_the_published_value() {
    let v = parse_json(validate_json_default());
    for f in figures(&v) {
        let published = f["published"].as_f64().unwrap();
        let predicted = f["predicted"].as_f64().unwrap();
        let err = f["error_pct"].as_f64().unwrap();
        let want = (predicted - published) / published * 100.0;
        assert!(
            (err - want).abs() < 1e-3,
            "{}: error_pct {err}, expected {want}",
            f["id"]
        );
    }
}

#[test]
fn validate_csv_carries_seed_units_and_the_same_figures_as_json() {
    let csv = ok_stdout(&["validate", "--format", "csv"]);
    assert!(
        csv.lines().any(|l| l.contains("seed: 1")),
        "no seed line in CSV:\n{csv}"
    );
    assert!(
        csv.lines()
            .any(|l| l.contains("units:") && l.contains("10^6 bytes/s")),
        "no units line in CSV"
    );

    let (header, rows) = csv_section(&csv, "figures");
    for key in ["id", "published", "predicted", "unit", "error_pct"] {
        column(&header, key);
    }
    let (id_col, pub_col) = (column(&header, "id"), column(&header, "published"));
    let csv_ids: Vec<String> = rows.iter().map(|r| r[id_col].clone()).collect();
    for r in &rows {
        let id = &r[id_col];
        let (_, want) = PUBLISHED
            .iter()
            .find(|(pid, _)| pid == id)
            .unwrap_or_else(|| panic!("`{id}` is not one of the paper's figures"));
        let got: f64 = r[pub_col].parse().expect("published parses as a number");
        assert_eq!(got, *want, "{id}: published value changed in CSV");
    }

    let json = parse_json(validate_json_default());
    let json_ids: Vec<String> = predictions(&json).into_iter().map(|(id, _)| id).collect();
    assert_eq!(
        csv_ids, json_ids,
        "CSV and JSON list the same figures in the same order"
    );
}

#[test]
fn validate_csv_honours_the_given_seed() {
    let csv = ok_stdout(&["validate", "--format", "csv", "--seed", "42"]);
    assert!(
        csv.lines().any(|l| l.contains("seed: 42")),
        "no `seed: 42` in CSV header"
    );
}

#[test]
fn validate_table_carries_seed_units_and_every_figure() {
    let table = ok_stdout(&["validate", "--format", "table", "--seed", "3"]);
    assert!(
        table.lines().any(|l| l.contains("seed: 3")),
        "no `seed: 3` in table:\n{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.contains("units:") && l.contains("10^6 bytes/s")),
        "no units line"
    );
    for (id, _) in PUBLISHED {
        assert!(
            table
                .lines()
                .any(|l| l.split_whitespace().next() == Some(id)),
            "table has no row for `{id}`"
        );
    }
}

#[test]
fn validate_is_byte_identical_for_the_same_seed() {
    let again = ok_stdout(&["validate", "--format", "json", "--seed", "7"]);
    assert!(
        validate_json_seed7() == again,
        "two runs with --seed 7 differ"
    );
}

#[test]
fn validate_does_not_depend_on_the_thread_count() {
    let one = ok_stdout(&[
        "validate",
        "--format",
        "json",
        "--seed",
        "7",
        "--threads",
        "1",
    ]);
    let two = ok_stdout(&[
        "validate",
        "--format",
        "json",
        "--seed",
        "7",
        "--threads",
        "2",
    ]);
    assert!(one == two, "--threads 1 and --threads 2 differ");
    assert!(
        one == validate_json_seed7(),
        "--threads 1 differs from the default thread count"
    );
}

#[test]
fn another_seed_moves_predictions_only_by_sampling_noise() {
    let a = parse_json(validate_json_seed7());
    let b = parse_json(&ok_stdout(&["validate", "--format", "json", "--seed", "8"]));
    assert_eq!(b["seed"], 8);
    let (pa, pb) = (predictions(&a), predictions(&b));
    assert_eq!(pa.len(), pb.len());
    // Each experiment's widest 95% interval, in percent: a run that hit its
    // ceiling before its precision (a 10 Mbit/s half-duplex port, whose
    // collisions make long bursts) says how far it is from sure.
    let widest = |v: &Value| -> std::collections::BTreeMap<String, f64> {
        v["experiments"]
            .as_array()
            .expect("experiments")
            .iter()
            .fold(std::collections::BTreeMap::new(), |mut m, e| {
                // Keyed by experiment id (a figure names no scenario): the
                // widest of same-named experiments.
                let key = e["experiment"].to_string();
                let ci = e["throughput_ci95_pct"].as_f64().unwrap_or(0.0);
                let w: &mut f64 = m.entry(key).or_insert(0.0);
                *w = w.max(ci);
                m
            })
    };
    let (wa, wb) = (widest(&a), widest(&b));
    let mut moved = 0;
    for (((ida, va), (idb, vb)), f) in pa.iter().zip(&pb).zip(figures(&a)) {
        assert_eq!(ida, idb, "figures in the same order");
        let key = f["experiment"].to_string();
        let ci = wa
            .get(&key)
            .copied()
            .unwrap_or(0.0)
            .max(wb.get(&key).copied().unwrap_or(0.0));
        // Two independent estimates: 3%, or their intervals' width.
        let tolerance = (0.03f64).max(1.5 * ci / 100.0);
        let rel = (va - vb).abs() / va.abs().max(1e-9);
        assert!(
            rel < tolerance,
            "{ida}: seed 7 gives {va}, seed 8 gives {vb} ({:.2}% apart, intervals {ci:.2}%)",
            rel * 100.0
        );
        if va != vb {
            moved += 1;
        }
    }
    // Multi-cell partitions draw remote memory lines at random: the seed must reach them.
    assert!(moved > 0, "no prediction depends on the seed");
}

/// Every scenario file under `scenarios/`, found at test time.
fn bundled_scenarios() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
            .map(|e| e.expect("directory entry").path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "toml") {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(&repo().join("scenarios"), &mut v);
    v
}

#[test]
fn run_succeeds_on_every_bundled_scenario() {
    let files = bundled_scenarios();
    assert!(!files.is_empty(), "no scenarios found");
    for f in &files {
        let path = f.to_str().expect("UTF-8 path");
        let table = ok_stdout(&["run", path]);
        for section in ["functions", "buses", "experiments"] {
            assert!(
                table.lines().any(|l| l.trim() == format!("## {section}")),
                "{path}: no `{section}` section in:\n{table}"
            );
        }
        let v = parse_json(&ok_stdout(&["run", path, "--format", "json"]));
        for section in ["functions", "buses", "experiments"] {
            let rows = v[section]
                .as_array()
                .unwrap_or_else(|| panic!("{path}: JSON has no `{section}` array"));
            assert!(!rows.is_empty(), "{path}: `{section}` is empty");
        }
    }
}

#[test]
fn run_works_from_any_directory_because_models_are_compiled_in() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let scenario = bundled_scenarios()
        .into_iter()
        .next()
        .expect("a bundled scenario");
    let abs = scenario.canonicalize().expect("absolute path");
    let out = ok_stdout_in(Some(tmp.path()), &["run", abs.to_str().unwrap()]);
    for section in ["functions", "buses", "experiments"] {
        assert!(
            out.contains(&format!("## {section}")),
            "no `{section}` section:\n{out}"
        );
    }

    // A scenario copied next to nothing else, given by a relative path.
    let copy = tmp.path().join("copy.toml");
    std::fs::copy(&abs, &copy).expect("copy scenario");
    let out2 = ok_stdout_in(Some(tmp.path()), &["run", "copy.toml"]);
    assert!(out2.contains("## functions"), "relative path run:\n{out2}");
}

/// `key=value` pairs of a one-line report.
fn kv(line: &str) -> Vec<(String, String)> {
    line.split_whitespace()
        .filter_map(|t| {
            t.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect()
}

#[test]
fn bench_bus_contention_prints_its_measurements() {
    let out = ok_stdout(&[
        "bench",
        "bus-contention",
        "--masters",
        "4",
        "--sim-seconds",
        "0.01",
        "--seed",
        "1",
    ]);
    for key in [
        "transactions=",
        "wall_s=",
        "tx_per_wall_s=",
        "bus_MB_s=",
        "per_master_MB_s=",
    ] {
        assert!(out.contains(key), "no `{key}` in:\n{out}");
    }
    let pairs = kv(&out);
    let get = |k: &str| -> f64 {
        pairs
            .iter()
            .find(|(key, _)| key == k)
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or_else(|| panic!("`{k}` has no numeric value in:\n{out}"))
    };
    assert!(get("transactions") > 0.0);
    let bus = get("bus_MB_s");
    // 512 bytes at 1066 MB/s plus 30 ns per transaction bounds the bus below 1066 MB/s.
    assert!(bus > 0.0 && bus <= 1066.0, "bus_MB_s = {bus}");
    let per = get("per_master_MB_s");
    assert!(
        (per * 4.0 - bus).abs() <= 0.2 + bus * 1e-3,
        "per-master {per} x 4 != bus {bus}"
    );
}

#[test]
fn bench_is_deterministic_apart_from_wall_clock() {
    let strip = |s: String| -> Vec<(String, String)> {
        kv(&s)
            .into_iter()
            .filter(|(k, _)| k != "wall_s" && k != "tx_per_wall_s")
            .collect()
    };
    let args = [
        "bench",
        "bus-contention",
        "--masters",
        "3",
        "--sim-seconds",
        "0.005",
        "--seed",
        "9",
    ];
    assert_eq!(strip(ok_stdout(&args)), strip(ok_stdout(&args)));
}

#[test]
fn params_csv_gives_a_source_for_every_parameter() {
    let csv = ok_stdout(&["params", "--format", "csv"]);
    let (header, rows) = csv_section(&csv, "parameters");
    assert!(!rows.is_empty(), "no parameters listed");
    let (p, s, f) = (
        column(&header, "parameter"),
        column(&header, "source"),
        column(&header, "file"),
    );
    for r in &rows {
        assert!(
            !r[s].trim().is_empty(),
            "parameter `{}` has an empty source",
            r[p]
        );
        let (_, line) = r[f]
            .rsplit_once(':')
            .unwrap_or_else(|| panic!("`{}` has no :LINE", r[f]));
        assert!(
            line.parse::<usize>().is_ok_and(|n| n > 0),
            "`{}`: bad line in `{}`",
            r[p],
            r[f]
        );
    }
    for want in [
        "server.rp8400-seu.io_read_latency",
        "bus.pcix133.clock",
        "link.gige.mtu",
    ] {
        assert!(rows.iter().any(|r| r[p] == want), "`{want}` not listed");
    }
}

#[test]
fn run_describes_each_workload_in_words() {
    let out = ok_stdout(&[
        "run",
        "scenarios/hp2g/fig4-gige-bidirectional.toml",
        "--format",
        "csv",
    ]);
    let (header, rows) = csv_section(&out, "inputs");
    let w = column(&header, "workloads");
    assert!(!rows.is_empty());
    for r in &rows {
        let text = &r[w];
        assert!(
            !text.contains('{') && !text.contains("Netperf") && !text.contains("Both"),
            "Rust debug text in the inputs: {text}"
        );
    }
    let both = "gige: netperf TCP stream, socket 128 KiB, send 32 KiB, both ways; \
                fc: diskbench 128 KiB blocks, outstanding (test bed default), both ways";
    assert!(
        rows.iter().any(|r| r[w] == both),
        "no workloads cell reads `{both}` in:\n{rows:?}"
    );
}

#[test]
fn validate_of_one_paper_gives_that_papers_figures_as_the_whole_validation_does() {
    let whole = parse_json(validate_json_default());
    for (name, paper, count) in [
        ("hp-rp8400", "hp-rp8400-pcix-2gb-fc-gige-2004.txt", 50),
        ("matrox-ns-fnic4-linux.txt", "matrox-ns-fnic4-linux.txt", 83),
    ] {
        let one = parse_json(&ok_stdout(&[
            "validate", "--paper", name, "--format", "json",
        ]));
        assert_eq!(one["paper"], paper, "--paper {name}: the paper is recorded");
        let papers = one["papers"].as_array().expect("a papers section");
        assert_eq!(papers.len(), 1, "--paper {name}: one paper, got {papers:?}");
        assert_eq!(papers[0]["paper"], paper);
        let mine = figures(&one);
        assert_eq!(mine.len(), count, "--paper {name}: its figures");
        // The same rows, to the last digit, as the whole validation's rows
        // of that paper (runs are seeded by what they simulate).
        let theirs: Vec<&Value> = figures(&whole)
            .iter()
            .filter(|f| f["paper"] == paper)
            .collect();
        assert_eq!(mine.iter().collect::<Vec<_>>(), theirs, "--paper {name}");
    }
}

#[test]
fn validate_of_an_unknown_or_ambiguous_paper_is_a_usage_error_naming_the_papers() {
    for (name, says) in [
        ("no-such-paper", "no bundled paper has that name"),
        ("hp-", "begins the names of 6 papers"),
    ] {
        let out = iosim_in(None, &["validate", "--paper", name]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--paper {name}: {stderr}");
        assert!(stderr.contains(says), "--paper {name}: {stderr}");
        assert!(
            stderr.contains("hp-rp8400-pcix-2gb-fc-gige-2004.txt"),
            "--paper {name}: the error lists the papers: {stderr}"
        );
        assert!(out.stdout.is_empty(), "--paper {name}: nothing on stdout");
    }
}
