//! The engine list, the workload list and the one resolution of an
//! experiment, through the public API: the library offers the bundled
//! engine and workload kinds and nothing else (the test engine and test
//! workload live only in the crate's unit tests), a model file naming
//! another engine is refused with the list, and what only a whole
//! experiment shows is reported when its scenario is read, at its key and
//! line.

use std::path::PathBuf;

use iosim::loader::{bundled_files, load_registry, parse_model, parse_scenario};
use iosim::model::Shape;
use iosim::sim::config::Resolved;
use iosim::sim::engines::{kind_named, kinds};
use iosim::sim::workloads;

#[test]
fn the_library_offers_the_bundled_engines_only() {
    let names: Vec<&str> = kinds().iter().map(|k| k.name()).collect();
    assert_eq!(names, ["nic", "hba", "dma", "veth"]);
    assert!(
        kind_named("probe").is_none(),
        "the test engine is not offered"
    );
    let nic = kind_named("nic").expect("the NIC");
    assert!(nic.carries(Shape::TcpStream) && !nic.carries(Shape::DiskIo));
    assert!(nic.drives(iosim::model::Framing::Atm));
    assert!(!kind_named("dma").expect("raw DMA").drives_a_link());
}

#[test]
fn the_library_offers_the_bundled_workload_kinds_only() {
    let names: Vec<&str> = workloads::kinds().iter().map(|k| k.name).collect();
    assert_eq!(
        names,
        ["netperf-tcp-stream", "ip-forward", "diskbench", "dma"]
    );
    assert!(
        workloads::kind_named("probe").is_none(),
        "the test workload is not offered"
    );
    let disk = workloads::kind_named("diskbench").expect("diskbench");
    assert!(kind_named("hba").expect("the HBA").carries(disk.shape));
    assert!(!kind_named("nic").expect("the NIC").carries(disk.shape));
}

#[test]
fn a_model_naming_an_unlisted_engine_is_refused_with_the_list() {
    let base = load_registry(&[]).expect("bundled models");
    let (_, exerciser) = bundled_files("models/adapters/dma-exerciser.toml")[0];
    let card = exerciser.replace("engine = \"dma\"", "engine = \"probe\"");
    let err = parse_model(PathBuf::from("card.toml"), &card, &base).expect_err("no such engine");
    let text = err.to_string();
    assert!(text.contains("function[0].engine"), "{text}");
    assert!(
        text.contains("unknown engine `probe`; expected `nic`, `hba`, `dma` or `veth`"),
        "{text}"
    );
}

#[test]
fn every_bundled_experiment_resolves_and_a_whole_experiment_error_is_a_load_error() {
    let reg = load_registry(&[]).expect("bundled models");
    for sc in iosim::loader::load_bundled_scenarios(&reg).expect("bundled scenarios") {
        for e in &sc.experiments {
            let r = Resolved::new(&reg, e).expect("resolves");
            assert_eq!(r.assemble().functions.len(), {
                let adapters = e.cards.iter().map(|c| &reg.adapters[&c.1]);
                adapters.map(|a| a.functions.len()).sum::<usize>()
            });
        }
    }
    // A socket smaller than the segments one ACK covers is known only once
    // the link (its segment) and the server (its ACK rule) meet.
    let (_, text) = bundled_files("scenarios/hp2g/fig2-gige-receive.toml")[0];
    let small = text.replacen("socket_kib = 128", "socket_kib = 1", 1);
    assert_ne!(small, text);
    let err = parse_scenario(PathBuf::from("small.toml"), &small, &reg).expect_err("too small");
    let text = err.to_string();
    assert!(text.starts_with("small.toml:"), "{text}");
    assert!(text.contains("socket_kib"), "{text}");
    assert!(
        text.contains("socket of 1024 bytes is smaller than"),
        "{text}"
    );
}
