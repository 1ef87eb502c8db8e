//! Errors in one pass (issue 46): a file's independent mistakes come in one
//! run, a mistake is said once (no cascade of errors it causes), the nearest
//! known name and the accepted units are suggested, and a request given by
//! flags is answered by flag.

mod common;

use std::process::Output;

/// Standard error of a run that must fail with exit code 1.
fn failed(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(o.stdout.is_empty(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// The `error:` lines of standard error.
fn errors(err: &str) -> Vec<&str> {
    err.lines().filter(|l| l.starts_with("error: ")).collect()
}

/// `iosim params --models DIR` with `text` alone in DIR as `m.toml`.
fn params_with(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.toml"), text).unwrap();
    failed(&common::iosim(&[
        "params",
        "--models",
        dir.path().to_str().unwrap(),
    ]))
}

const SLOTS: &str = "[[slot]]\nname = \"a\"\nmodes = [\"pcix67\"]\nropes = 2\ncontroller = \"ioc\"\n\n\
                     [[slot]]\nname = \"b\"\nmodes = [\"pcix66\"]\nropes = 2.5\ncontroller = \"ioc\"\n\n\
                     [[slot]]\nname = \"c\"\nmodes = [\"pcix66\"]\nropes = 2\ncontroller = \"ioc\"\n\n";

const CONTROLLER: &str = "[[io_controller]]\nname = \"ioc\"\n\n[io_controller.param]\n\
                          bandwidth = { value = 2000, unit = \"MBs\", source = \"test\" }\n\
                          packet_overhead = { value = 8, unit = \"bytes\", source = \"test\" }\n\n";

#[test]
fn a_model_file_with_three_independent_mistakes_yields_three_errors_in_one_run() {
    let text = common::server_toml(
        "three",
        &[("cpus_per_cell", "value = 2, unit = \"CPUs\"")],
        &SLOTS.replace("controller = \"ioc\"\n", ""),
    );
    let err = params_with(&text);
    let lines = errors(&err);
    assert_eq!(lines.len(), 3, "{err}");
    assert!(err.contains("\n3 errors"), "{err}");
    // In file order, each with its key and line.
    assert!(lines[0].contains("key `param.cpus_per_cell`"), "{err}");
    assert!(
        lines[0].contains("unknown unit `CPUs` (did you mean `cpus`?)")
            && lines[0].contains("cpus"),
        "{err}"
    );
    assert!(lines[1].contains("key `slot[0].modes[0]`"), "{err}");
    assert!(
        lines[1].contains("unknown bus mode `pcix67` (did you mean `pcix66`?)"),
        "{err}"
    );
    assert!(lines[1].contains("--models DIR"), "{err}");
    assert!(lines[2].contains("key `slot[1].ropes`"), "{err}");
    assert!(lines[2].contains("2.5 is not a whole number"), "{err}");
}

#[test]
fn a_bad_io_controller_is_one_error_not_one_more_per_slot_under_it() {
    let slots = SLOTS
        .replace("pcix67", "pcix66")
        .replace("ropes = 2.5", "ropes = 2");
    let text = common::server_toml("ioc", &[], &format!("{CONTROLLER}{slots}"));
    let err = params_with(&text);
    let lines = errors(&err);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("key `io_controller[0].param.bandwidth`"),
        "{err}"
    );
    assert!(
        lines[0].contains("unknown unit `MBs` (did you mean `MB/s`?); a rate is in MB/s"),
        "{err}"
    );
    assert!(!err.contains("unknown I/O controller"), "{err}");
    // A controller that is really missing is still said, with the nearest name.
    let text = common::server_toml(
        "ioc",
        &[],
        &format!(
            "{}{}",
            CONTROLLER.replace("MBs", "MB/s"),
            slots.replacen("\"ioc\"", "\"ioc1\"", 1)
        ),
    );
    let err = params_with(&text);
    assert_eq!(errors(&err).len(), 1, "{err}");
    assert!(
        err.contains(
            "key `slot[0].controller`: unknown I/O controller `ioc1` (did you mean `ioc`?)"
        ),
        "{err}"
    );
}

/// `iosim place` on the rx6600 and the 2006 lab's test bed, with `flags`.
fn place_on_rx6600(flags: &[&str]) -> Output {
    let mut args = vec![
        "place",
        "--server",
        "rx6600",
        "--testbed",
        "hp-2006-msa1500-lab",
    ];
    args.extend_from_slice(flags);
    common::iosim(&args)
}

#[test]
fn a_place_request_given_by_flags_is_answered_by_flag_with_no_cascade() {
    let o = place_on_rx6600(&[
        "--card",
        "fc=ab379b",
        "--card",
        "g=a9782a",
        "--workload",
        "fc.port9=diskbench:read",
        "--workload",
        "g.gige=netperf-tcp-stream:sideways",
    ]);
    let err = failed(&o);
    let lines = errors(&err);
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("error: --workload fc.port9=diskbench:read: unknown function `port9` (did you mean `port0`?)"),
        "{err}"
    );
    assert!(
        lines[1].starts_with(
            "error: --workload g.gige=netperf-tcp-stream:sideways: unknown direction `sideways`"
        ),
        "{err}"
    );
    assert!(!err.contains("<command line>"), "{err}");
    assert!(!err.contains("carries no workload"), "{err}");
    // An unknown model named by a flag: the flag, the nearest name, --models.
    let o = place_on_rx6600(&[
        "--card",
        "fc=ab379x*2",
        "--workload",
        "fc.port0=diskbench:read",
    ]);
    let err = failed(&o);
    assert!(
        err.starts_with(
            "error: --card fc=ab379x*2: unknown adapter `ab379x` (did you mean `ab379b`?)"
        ),
        "{err}"
    );
    assert!(err.contains("--models DIR"), "{err}");
    // A card with no workload at all is still said, by its flag.
    let o = place_on_rx6600(&[
        "--card",
        "fc=ab379b",
        "--card",
        "g=a9782a",
        "--workload",
        "fc.port0=diskbench:read",
    ]);
    let err = failed(&o);
    assert!(
        err.starts_with("error: --card g=a9782a: card `g` carries no workload"),
        "{err}"
    );
}

#[test]
fn an_unknown_name_far_from_every_known_one_suggests_none() {
    let o = common::iosim(&[
        "place",
        "--server",
        "dl380",
        "--testbed",
        "hp-2006-msa1500-lab",
        "--card",
        "fc=ab379b",
        "--workload",
        "fc.port0=diskbench:read",
    ]);
    let err = failed(&o);
    assert!(
        err.starts_with("error: --server dl380: unknown server `dl380`; known: "),
        "{err}"
    );
    assert!(!err.contains("did you mean"), "{err}");
    assert!(
        err.contains("give its directory with --models DIR"),
        "{err}"
    );
}

#[test]
fn a_transmit_threshold_on_a_card_with_a_processor_is_one_error_at_its_key() {
    // The bundled iSCSI HBA (its firmware takes each frame whole) given a
    // transmit threshold, run by the bundled scenario of four experiments
    // that use it: one error, at the threshold's line, not one per run.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let adapter = read("models/adapters/i570-iscsi-target.toml")
        .replace("name = \"i570-iscsi-target\"", "name = \"iscsi-threshold\"")
        .replacen(
            "\ntx_fifo = ",
            "\ntx_threshold = { value = 128, unit = \"bytes\", source = \"test\" }\ntx_fifo = ",
            1,
        );
    let line = common::line_of(&adapter, "tx_threshold");
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    std::fs::write(models.join("a.toml"), adapter).unwrap();
    let scenario = dir.path().join("s.toml");
    let text =
        read("scenarios/ibm-veth/iscsi.toml").replace("i570-iscsi-target", "iscsi-threshold");
    assert!(text.matches("iscsi-threshold").count() >= 4, "{text}");
    std::fs::write(&scenario, text).unwrap();
    let err = failed(&common::iosim(&[
        "run",
        scenario.to_str().unwrap(),
        "--models",
        models.to_str().unwrap(),
    ]));
    let lines = errors(&err);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains(&format!("a.toml:{line}:"))
            && lines[0].contains("key `function[0].param.tx_threshold`")
            && lines[0].contains("with an on-card processor"),
        "{err}"
    );
}
