//! `extends = "NAME"`: a user model derived from a bundled one takes its
//! values, the bundled fit's included, overrides only what it states, and
//! says which values are inherited; cycles and unknown parents are errors
//! at the `extends` key.

use std::path::Path;

use serde_json::Value;

mod common;

/// A server derived from the rp8400 + SEU with one value changed: the disk
/// I/O cost, which a network workload never spends.
const DERIVED: &str = r#"kind = "server"
name = "my-rp8400"
extends = "rp8400-seu"

[param]
cpu_per_io = { value = 35, unit = "us", source = "assumed: a what-if" }
"#;

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

/// `iosim params --format json` rows, by parameter path: (value, source, file).
fn params(args: &[&str]) -> std::collections::HashMap<String, (f64, String, String)> {
    let mut all = vec!["params", "--format", "json"];
    all.extend_from_slice(args);
    let out = common::succeeded(&common::iosim(&all));
    let v: Value = serde_json::from_str(&out).expect("json");
    let rows = v["parameters"].as_array().expect("rows").clone();
    rows.iter()
        .map(|r| {
            (
                r["parameter"].as_str().expect("path").to_string(),
                (
                    r["value"].as_f64().expect("value"),
                    r["source"].as_str().expect("source").to_string(),
                    r["file"].as_str().expect("file").to_string(),
                ),
            )
        })
        .collect()
}

/// The throughput of the run's only function (MB/s).
fn throughput(models: &Path, server: &str, extra: &[&str]) -> String {
    let scen = models.join(format!("../{server}.toml"));
    std::fs::write(
        &scen,
        common::gige_receive_scenario("extends-test", server, 6),
    )
    .expect("write");
    let mut args = vec!["run", "--format", "csv", "--models"];
    let m = models.to_str().expect("utf-8");
    args.push(m);
    args.extend_from_slice(extra);
    let s = scen.to_str().expect("utf-8");
    args.push(s);
    let out = common::succeeded(&common::iosim(&args));
    // The function rows: everything but the header facts differs only by name.
    out.lines()
        .filter(|l| l.contains("a9782a") && l.contains("gige"))
        .map(|l| l.replace(server, "SERVER"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_derived_server_takes_the_bundled_fit_and_marks_it_inherited() {
    let dir = tempfile::tempdir().expect("tempdir");
    let models = dir.path().join("models");
    write(&models, "servers/my.toml", DERIVED);
    let m = models.to_str().expect("utf-8");
    let p = params(&["--models", m]);
    let (mine, src, _) = &p["server.my-rp8400.cpu_per_io"];
    assert_eq!(*mine, 35.0);
    assert!(src.starts_with("assumed: a what-if"), "{src}");
    // The fitted values of the parent, as the fit sets them, marked inherited.
    for key in [
        "cpu_per_packet",
        "io_read_latency",
        "bridge.delayed_read_prefetch",
    ] {
        let (parent, psrc, pfile) = &p[&format!("server.rp8400-seu.{key}")];
        assert!(psrc.starts_with("fitted"), "{key}: {psrc}");
        let (child, csrc, cfile) = &p[&format!("server.my-rp8400.{key}")];
        assert_eq!(child, parent, "{key}");
        assert_eq!(cfile, pfile, "{key}: written where the parent's is");
        let from = if key.starts_with("bridge") {
            "server.rp8400-seu.bridge"
        } else {
            "server.rp8400-seu"
        };
        assert_eq!(*csrc, format!("inherited from {from}: {psrc}"), "{key}");
    }
    // Without the bundled fit the derived server has the parent's guesses.
    let hand = params(&["--models", m, "--hand-set"]);
    let (guess, _, _) = &hand["server.my-rp8400.cpu_per_packet"];
    assert_ne!(guess, &p["server.my-rp8400.cpu_per_packet"].0);
    assert_eq!(guess, &hand["server.rp8400-seu.cpu_per_packet"].0);

    // The simulation uses them: GigE receive (no disk I/O) on the derived
    // server is the parent's, and the fit matters to it.
    let parent = throughput(&models, "rp8400-seu", &[]);
    let child = throughput(&models, "my-rp8400", &[]);
    assert!(!parent.is_empty());
    assert_eq!(child, parent);
    let hand_set = throughput(&models, "my-rp8400", &["--hand-set"]);
    assert_ne!(hand_set, child, "the fit does not reach this run: no test");

    // `show server` lists what is inherited, from where and on what basis.
    let show = common::succeeded(&common::iosim(&[
        "show",
        "server",
        "my-rp8400",
        "--models",
        m,
        "--format",
        "csv",
    ]));
    assert!(show.contains("extends"), "{show}");
    let line = show
        .lines()
        .find(|l| l.contains("cpu_per_packet"))
        .expect("cpu_per_packet listed as inherited");
    assert!(
        line.contains("server.rp8400-seu") && line.contains("fitted"),
        "{line}"
    );
    assert!(!show.lines().any(|l| l.contains("cpu_per_io,")), "{show}");
}

#[test]
fn a_derived_server_with_another_cpu_scales_its_costs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let models = dir.path().join("models");
    write(
        &models,
        "servers/slow.toml",
        "kind = \"server\"\nname = \"slow-rp8400\"\nextends = \"rp8400-seu\"\ncpu = \"pa8600-555\"\n",
    );
    let m = models.to_str().expect("utf-8");
    let p = params(&["--models", m]);
    assert!(!p.contains_key("server.slow-rp8400.cpu_per_packet"));
    assert!(p.contains_key("server.slow-rp8400.io_read_latency"));
    let show = common::succeeded(&common::iosim(&[
        "show",
        "server",
        "slow-rp8400",
        "--models",
        m,
    ]));
    assert!(
        show.contains("CPU pa8600-555") && show.contains("scaled from rp8400-seu by rating"),
        "{show}"
    );
}

#[test]
fn a_derived_adapter_overrides_one_parameter_of_one_function() {
    let dir = tempfile::tempdir().expect("tempdir");
    let models = dir.path().join("models");
    write(
        &models,
        "adapters/mine.toml",
        "kind = \"adapter\"\nname = \"my-a9782a\"\nextends = \"a9782a\"\n\n[[function]]\nname = \"gige\"\nengine = \"nic\"\n\n[function.param]\nrx_fifo = { value = 32, unit = \"KiB\", source = \"assumed: a what-if\" }\n",
    );
    let m = models.to_str().expect("utf-8");
    let p = params(&["--models", m]);
    assert_eq!(p["adapter.my-a9782a.gige.rx_fifo"].0, 32.0);
    let (v, src, _) = &p["adapter.my-a9782a.gige.pio_reads_per_interrupt"];
    assert_eq!(*v, p["adapter.a9782a.gige.pio_reads_per_interrupt"].0);
    assert!(
        src.starts_with("inherited from adapter.a9782a.gige: fitted"),
        "{src}"
    );
    assert!(p.contains_key("adapter.my-a9782a.fc.max_read"));
    let show = common::succeeded(&common::iosim(&[
        "show",
        "adapter",
        "my-a9782a",
        "--models",
        m,
    ]));
    assert!(show.contains("link") && show.contains("fc-2g"), "{show}");
}

#[test]
fn a_cycle_or_an_unknown_parent_is_an_error_at_the_extends_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let models = dir.path().join("models");
    write(
        &models,
        "servers/a.toml",
        "kind = \"server\"\nname = \"loop-a\"\nextends = \"loop-b\"\n",
    );
    write(
        &models,
        "servers/b.toml",
        "kind = \"server\"\nname = \"loop-b\"\n\nextends = \"loop-a\"\n",
    );
    let m = models.to_str().expect("utf-8");
    let out = common::iosim(&["params", "--models", m]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a.toml:3:") && err.contains("key `extends`"),
        "{err}"
    );
    assert!(err.contains("b.toml:4:") && err.contains("cycle"), "{err}");

    std::fs::remove_file(models.join("servers/b.toml")).expect("rm");
    write(
        &models,
        "servers/a.toml",
        "kind = \"server\"\nname = \"orphan\"\nextends = \"no-such-server\"\n",
    );
    let out = common::iosim(&["params", "--models", m]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a.toml:3:") && err.contains("unknown server `no-such-server`"),
        "{err}"
    );
}

#[test]
fn a_fit_sets_an_inherited_value_only_through_its_parent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let models = dir.path().join("models");
    write(&models, "servers/my.toml", DERIVED);
    let fit = dir.path().join("fit.toml");
    std::fs::write(
        &fit,
        "kind = \"fitted\"\n\n[[param]]\npath = \"server.my-rp8400.cpu_per_packet\"\nvalue = 7.0\nunit = \"us\"\n",
    )
    .expect("write");
    let m = models.to_str().expect("utf-8");
    let f = fit.to_str().expect("utf-8");
    let out = common::iosim(&["params", "--models", m, "--params", f]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("fit.toml:4:") && err.contains("inherited from `server.rp8400-seu`"),
        "{err}"
    );
    // Through the parent, the derived server follows.
    std::fs::write(
        &fit,
        "kind = \"fitted\"\n\n[[param]]\npath = \"server.rp8400-seu.cpu_per_packet\"\nvalue = 7.0\nunit = \"us\"\n",
    )
    .expect("write");
    let p = params(&["--models", m, "--params", f]);
    assert_eq!(p["server.my-rp8400.cpu_per_packet"].0, 7.0);
}
