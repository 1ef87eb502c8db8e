//! Sharded runs and `iosim merge`, driven through the real binary: the
//! parts of a sweep, a placement and a cross-validation split four ways
//! merge into exactly the unsharded output in every format; parts
//! missing, given twice, of another run, cut short, not parts at all or
//! (a placement's) written for inputs that changed since are refused.

mod common;
use common::{iosim, succeeded};

/// A small grid (6 points, 2 replications) that four shards split
/// unevenly (1, 2, 1, 2 points), with a warning-free scenario.
const SWEEP: [&str; 10] = [
    "sweep",
    "scenarios/hp2g/fig3-gige-transmit.toml",
    "--vary",
    "socket_kib=8,16,32",
    "--vary",
    "message_kib=4,8",
    "--replications",
    "2",
    "--seed",
    "3",
];

/// Writes the four parts of `args` into `dir`; their paths.
fn parts(dir: &std::path::Path, args: &[&str], n: usize) -> Vec<String> {
    (1..=n)
        .map(|i| {
            let shard = format!("{i}/{n}");
            let mut a = args.to_vec();
            a.extend(["--shard", &shard]);
            let out = iosim(&a);
            let path = dir.join(format!("part-{i}.jsonl"));
            std::fs::write(&path, succeeded(&out)).expect("a part file");
            path.to_str().expect("a UTF-8 path").to_string()
        })
        .collect()
}

fn merge(parts: &[&str], extra: &[&str]) -> std::process::Output {
    let mut a = vec!["merge"];
    a.extend(parts);
    a.extend(extra);
    iosim(&a)
}

#[test]
fn four_shards_merge_into_the_unsharded_output_byte_for_byte() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let p = parts(dir.path(), &SWEEP, 4);
    // In any order.
    let shuffled = [&p[2][..], &p[0], &p[3], &p[1]];
    for fmt in [
        &["--format", "table"][..],
        &["--wide"],
        &["--format", "csv"],
        &["--format", "json"],
    ] {
        let mut whole = SWEEP.to_vec();
        whole.extend(fmt);
        let one = succeeded(&iosim(&whole));
        let merged = succeeded(&merge(&shuffled, fmt));
        assert_eq!(merged, one, "{fmt:?}");
        assert!(one.contains("socket_kib=32 message_kib=8"), "{one}");
    }
    // A sweep whose points warn (the matrox 10 Mbit/s half-duplex run ends
    // short of its precision): the warnings come back in point order.
    let warn = [
        "sweep",
        "scenarios/matrox/table5-ipfwd.toml",
        "--vary",
        "cells=1",
        "--format",
        "csv",
    ];
    let sub = dir.path().join("warn");
    std::fs::create_dir(&sub).expect("a directory");
    let p = parts(&sub, &warn[..4], 1);
    let one = succeeded(&iosim(&warn));
    assert!(one.contains("# warning: point `cells=1`"), "{one}");
    assert_eq!(succeeded(&merge(&[&p[0]], &["--format", "csv"])), one);
}

#[test]
fn a_shard_runs_only_its_points_and_names_its_part() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let p = parts(dir.path(), &SWEEP, 4);
    let rows = |path: &str| {
        std::fs::read_to_string(path)
            .expect("a part")
            .lines()
            .filter(|l| l.starts_with("{\"c\":"))
            .count()
    };
    // 6 points of 2 functions... split 1, 2, 1, 2: every part holds rows,
    // the second twice the first's.
    let n: Vec<usize> = p.iter().map(|x| rows(x)).collect();
    assert!(n.iter().all(|&k| k > 0), "{n:?}");
    assert_eq!(n[1], 2 * n[0], "{n:?}");
    // More parts than points: the empty ones hold a header and an end
    // line, and merge all the same.
    let one = [
        "sweep",
        SWEEP[1],
        "--experiment",
        "gige-tx.pcix.c1",
        "--vary",
        "socket_kib=8,16",
    ];
    let sub = dir.path().join("many");
    std::fs::create_dir(&sub).expect("a directory");
    let many = parts(&sub, &one, 3);
    assert_eq!(rows(&many[0]), 0);
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_eq!(succeeded(&merge(&refs, &[])), succeeded(&iosim(&one)));
    let head = std::fs::read_to_string(&p[1]).expect("a part");
    assert!(
        head.starts_with('{') && head.contains("\"part\":2,\"parts\":4"),
        "{head}"
    );
}

#[test]
fn bad_merges_are_refused_with_clear_errors() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let p = parts(dir.path(), &SWEEP, 4);
    let refused = |parts: &[&str], says: &str| {
        let o = merge(parts, &[]);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(1), "{parts:?}: {err}");
        assert!(o.stdout.is_empty(), "{parts:?}: output written");
        assert!(err.contains(says), "{parts:?}: {err}");
    };
    refused(&[&p[0], &p[1], &p[3]], "part 3 of 4 missing");
    // Each refusal names the file and its header line.
    refused(&[&p[0], &p[1], &p[3]], &format!("{}:1: ", p[0]));
    refused(
        &[&p[0], &p[1], &p[1], &p[2], &p[3]],
        "part 2 of 4 is given twice",
    );
    // Another seed's part 2.
    let mut other = SWEEP.to_vec();
    other[9] = "4";
    other.extend(["--shard", "2/4"]);
    let o2 = dir.path().join("other-2.jsonl");
    std::fs::write(&o2, succeeded(&iosim(&other))).expect("a part");
    let o2 = o2.to_str().expect("UTF-8");
    refused(
        &[&p[0], o2, &p[2], &p[3]],
        "parts of different runs (seed 4 against 3)",
    );
    refused(&[&p[0], o2, &p[2], &p[3]], &format!("{o2}:1: "));
    // Another split.
    let mut two = SWEEP.to_vec();
    two.extend(["--shard", "1/2"]);
    let t1 = dir.path().join("half-1.jsonl");
    std::fs::write(&t1, succeeded(&iosim(&two))).expect("a part");
    let t1 = t1.to_str().expect("UTF-8");
    refused(&[&p[0], t1], "2 parts against 4");
    // A part cut short (a job killed while writing).
    let whole = std::fs::read(&p[1]).expect("a part");
    let cut = dir.path().join("cut.jsonl");
    let end = whole[..whole.len() - 1]
        .iter()
        .rposition(|b| *b == b'\n')
        .expect("lines");
    std::fs::write(&cut, &whole[..=end]).expect("a file");
    refused(
        &[&p[0], cut.to_str().expect("UTF-8"), &p[2], &p[3]],
        "cut short",
    );
    // Not a part at all: a directory, a TOML file, binary bytes.
    refused(&["scenarios"], "not a regular file");
    refused(&["README.md"], "not an iosim part file");
    let bin = dir.path().join("bin");
    std::fs::write(&bin, [0xffu8, 0xfe, 0, 1, 2]).expect("a file");
    refused(&[bin.to_str().expect("UTF-8")], "not an iosim part file");
}

#[test]
fn shard_flags_are_checked() {
    for bad in ["0/4", "5/4", "1/0", "a/b", "3", "1/2000000"] {
        let mut a = SWEEP.to_vec();
        a.extend(["--shard", bad]);
        let o = iosim(&a);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("expected I/N"),
            "{bad}"
        );
    }
    // Outputs that need every part: not from a shard.
    let mut a = SWEEP.to_vec();
    a.extend(["--shard", "1/2", "--plot", "charts"]);
    let o = iosim(&a);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not supported yet"));
    let mut a = PLACE.to_vec();
    a.extend(["--shard", "1/2", "--html", "page.html"]);
    let o = iosim(&a);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--html with --shard"), "{err}");
    let o = iosim(&[
        "validate",
        "--cross-validate",
        "--shard",
        "1/2",
        "--spread-out",
        "spread.toml",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("give --spread-out to `iosim merge`"), "{err}");
    // A spread only from a cross-validation's parts.
    let dir = tempfile::tempdir().expect("a scratch directory");
    let p = parts(dir.path(), &SWEEP[..4], 1);
    let o = merge(&[&p[0]], &["--spread-out", "spread.toml"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("only the parts of `validate --cross-validate`"),
        "{err}"
    );
}

/// A placement request on the command line: two AB379B cards and a GigE
/// card on an rx6600, every placement simulated (no split search); the
/// test bed has no netperf peer, which it warns about.
const PLACE: [&str; 15] = [
    "place",
    "--server",
    "rx6600",
    "--testbed",
    "hp-2006-msa1500-lab",
    "--card",
    "fc=ab379b*2",
    "--workload",
    "fc.port0=diskbench:bidirectional",
    "--card",
    "nic=a9782a",
    "--workload",
    "nic.gige=netperf-tcp-stream:transmit",
    "--seed",
    "5",
];

#[test]
fn place_parts_merge_into_the_unsharded_answer_byte_for_byte() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    // Every placement simulated: the shards split the pick.
    let p = parts(dir.path(), &PLACE, 4);
    let refs: Vec<&str> = p.iter().rev().map(String::as_str).collect();
    for fmt in [&["--format", "csv"][..], &["--format", "json"]] {
        let mut whole = PLACE.to_vec();
        whole.extend(fmt);
        let one = succeeded(&iosim(&whole));
        assert!(one.contains("every one simulated"), "{one}");
        assert!(one.contains("models no netperf peer"), "{one}");
        assert_eq!(succeeded(&merge(&refs, fmt)), one, "{fmt:?}");
    }
    // A split search, which one run simulates in rounds until the bound
    // shows no leader left can win: the shards simulate every leader, the
    // merge plays the rounds again and keeps what one run simulates.
    let request = dir.path().join("sx2000-12.toml");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/place/sx2000-12-ab379b.toml"
        ),
        &request,
    )
    .expect("a copy of the request");
    let request = request.to_str().expect("UTF-8");
    let sub = dir.path().join("split");
    std::fs::create_dir(&sub).expect("a directory");
    let split = parts(&sub, &["place", request], 4);
    let refs: Vec<&str> = split.iter().map(String::as_str).collect();
    let rows: usize = split
        .iter()
        .map(|x| {
            std::fs::read_to_string(x)
                .expect("a part")
                .lines()
                .filter(|l| l.starts_with("{\"c\":"))
                .count()
        })
        .sum();
    for fmt in [&["--format", "table"][..], &["--wide"]] {
        let mut whole = vec!["place", request];
        whole.extend(fmt);
        let one = succeeded(&iosim(&whole));
        assert!(
            one.contains("left unsimulated as their bound cannot"),
            "{one}"
        );
        assert_eq!(succeeded(&merge(&refs, fmt)), one, "{fmt:?}");
    }
    // The 24 leaders and the worst two, of which one run simulates 6.
    assert_eq!(rows, 26);
    // The request changed since the shards ran: refused.
    let text = std::fs::read_to_string(request).expect("the request");
    std::fs::write(request, text.replace("duration_ms = 6", "duration_ms = 7"))
        .expect("the request rewritten");
    let o = merge(&refs, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && o.stdout.is_empty(), "{err}");
    assert!(
        err.contains("the request, the models or the fitted values differ"),
        "{err}"
    );
}

/// A cross-validation of one paper's figures (AB379B charts: 17 figures).
const CROSS_VALIDATION: [&str; 4] = ["validate", "--cross-validate", "--paper", "hp-ab379b"];

#[test]
fn cross_validation_parts_merge_into_the_unsharded_output_byte_for_byte() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let p = parts(dir.path(), &CROSS_VALIDATION, 4);
    let refs: Vec<&str> = p.iter().map(String::as_str).collect();
    // The spread file too.
    let one_spread = dir.path().join("one.toml");
    let merged_spread = dir.path().join("merged.toml");
    let mut whole = CROSS_VALIDATION.to_vec();
    whole.extend(["--spread-out", one_spread.to_str().expect("UTF-8")]);
    let one = succeeded(&iosim(&whole));
    assert!(one.contains("## fold_objectives"), "{one}");
    let merged = succeeded(&merge(
        &refs,
        &["--spread-out", merged_spread.to_str().expect("UTF-8")],
    ));
    assert_eq!(merged, one);
    assert_eq!(
        std::fs::read(&merged_spread).expect("a spread file"),
        std::fs::read(&one_spread).expect("a spread file")
    );
    for fmt in [&["--format", "json"][..], &["--format", "csv"], &["--wide"]] {
        let mut whole = CROSS_VALIDATION.to_vec();
        whole.extend(fmt);
        let one = succeeded(&iosim(&whole));
        assert_eq!(succeeded(&merge(&refs, fmt)), one, "{fmt:?}");
        if fmt.contains(&"json") {
            // Every figure held out once at the first seed.
            let json: serde_json::Value = serde_json::from_str(&one).expect("JSON");
            assert_eq!(json["figures"].as_array().map(Vec::len), Some(17));
        }
    }
}
