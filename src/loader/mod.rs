//! The model loader: the only module that reads TOML.
//!
//! Files are parsed into serde structures that mirror them ([`raw`]), then
//! validated into the typed descriptions of [`crate::model`]: every parameter
//! checked for unit, range and source against [`crate::model::schema`], every name resolved.
//! Every error names the file, the key and the line.

mod calibration;
mod params;
mod raw;
mod scenario;
pub use crate::model::schema;

use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::error::{line_of, Error, Location, Result};
use crate::model::{
    AdapterSpec, BusSpec, EngineKind, Framing, FunctionSpec, LinkSpec, Protocol, Registry,
    ServerSpec, SlotSpec, TestbedSpec,
};
pub use calibration::{
    apply_bundled_fitted, apply_fitted, apply_fitted_text, fitted_file_text,
    load_bundled_calibration, load_calibration, parse_calibration, BundledFit, FittedEntry,
};
use params::{check_name, convert_params, spanned_list};
pub use scenario::{load_bundled_scenarios, load_scenario, parse_scenario};

mod bundled {
    include!(concat!(env!("OUT_DIR"), "/bundled.rs"));
}

/// A file being loaded: its path (for messages) and its text (for line numbers).
pub(crate) struct Source<'a> {
    pub file: PathBuf,
    pub text: &'a str,
}

impl Source<'_> {
    /// The location of `key` whose value spans `span`.
    pub fn at(&self, key: &str, span: Range<usize>) -> Location {
        Location {
            file: self.file.clone(),
            key: key.to_string(),
            line: line_of(self.text, span.start),
        }
    }

    /// An [`Error::Invalid`] at `key`.
    pub fn invalid(&self, key: &str, span: Range<usize>, message: impl Into<String>) -> Error {
        Error::Invalid {
            at: self.at(key, span),
            message: message.into(),
        }
    }

    /// Parses the whole text as `T`, turning serde errors into located errors.
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        toml::from_str::<T>(self.text).map_err(|e| {
            let line = e.span().map(|s| line_of(self.text, s.start)).unwrap_or(0);
            let message = e.message().trim().to_string();
            let key = key_near(self.text, line);
            Error::Syntax {
                at: Location {
                    file: self.file.clone(),
                    key,
                    line,
                },
                message,
            }
        })
    }
}

/// The key written on `line` (1-based), if the line is `key = ...` or a table header.
fn key_near(text: &str, line: usize) -> String {
    let Some(l) = text.lines().nth(line.saturating_sub(1)) else {
        return String::new();
    };
    let l = l.trim();
    if let Some(h) = l.strip_prefix('[') {
        return h.trim_matches(|c| c == '[' || c == ']').trim().to_string();
    }
    match l.split_once('=') {
        Some((k, _)) => k.trim().to_string(),
        None => String::new(),
    }
}

/// Every bundled file whose path starts with `prefix` (e.g. `scenarios/`).
pub fn bundled_files(prefix: &str) -> Vec<(&'static str, &'static str)> {
    bundled::BUNDLED
        .iter()
        .filter(|(p, _)| p.starts_with(prefix))
        .copied()
        .collect()
}

/// Loads the bundled models, then every `*.toml` under each of `dirs`
/// (a model there replaces a bundled one of the same kind and name).
pub fn load_registry(dirs: &[PathBuf]) -> Result<Registry> {
    let mut reg = Registry::default();
    for (path, text) in bundled_files("models/") {
        let src = Source {
            file: PathBuf::from(format!("<bundled>/{path}")),
            text,
        };
        add_model(&mut reg, &src)?;
    }
    for dir in dirs {
        if !dir.is_dir() {
            return Err(Error::Io {
                path: dir.clone(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "not a directory"),
            });
        }
        let mut files = Vec::new();
        collect_toml(dir, &mut files)?;
        for f in files {
            let text = read(&f)?;
            add_model(
                &mut reg,
                &Source {
                    file: f,
                    text: &text,
                },
            )?;
        }
    }
    check_registry(&reg)?;
    Ok(reg)
}

/// Reads a file, mapping failure to [`Error::Io`].
pub fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn collect_toml(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let rd = std::fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            collect_toml(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
    Ok(())
}

/// Parses one model file and adds it to the registry.
fn add_model(reg: &mut Registry, src: &Source) -> Result<()> {
    let head: raw::RawKind = src.parse()?;
    let Some(kind) = head.kind else {
        return Err(Error::Invalid {
            at: Location {
                file: src.file.clone(),
                key: "kind".into(),
                line: 1,
            },
            message: "missing `kind` (one of bus, link, server, adapter, testbed)".into(),
        });
    };
    match kind.get_ref().as_str() {
        "bus" => {
            let b: raw::RawBus = src.parse()?;
            let name = check_name(src, "name", &b.name)?;
            let protocol = match b.protocol.get_ref().as_str() {
                "pci" => Protocol::Pci,
                "pcix" => Protocol::PciX,
                other => {
                    return Err(src.invalid(
                        "protocol",
                        b.protocol.span(),
                        format!("unknown protocol `{other}`; expected `pci` or `pcix`"),
                    ))
                }
            };
            let params = convert_params(src, "param", &b.param, schema::BUS)?;
            let at = src.at("name", b.name.span());
            reg.buses.insert(
                name.clone(),
                BusSpec {
                    name,
                    protocol,
                    params,
                    at,
                },
            );
        }
        "link" => {
            let l: raw::RawLink = src.parse()?;
            let name = check_name(src, "name", &l.name)?;
            let (framing, rules) = match l.framing.get_ref().as_str() {
                "ethernet" => (Framing::Ethernet, schema::ETHERNET),
                "fibre-channel" => (Framing::FibreChannel, schema::FIBRE_CHANNEL),
                other => {
                    return Err(src.invalid(
                        "framing",
                        l.framing.span(),
                        format!(
                            "unknown framing `{other}`; expected `ethernet` or `fibre-channel`"
                        ),
                    ))
                }
            };
            let params = convert_params(src, "param", &l.param, rules)?;
            let at = src.at("name", l.name.span());
            reg.links.insert(
                name.clone(),
                LinkSpec {
                    name,
                    framing,
                    params,
                    at,
                },
            );
        }
        "server" => {
            let s: raw::RawServer = src.parse()?;
            let name = check_name(src, "name", &s.name)?;
            let params = convert_params(src, "param", &s.param, schema::SERVER)?;
            let bridge = convert_params(src, "bridge", &s.bridge, schema::BRIDGE)?;
            if s.slot.get_ref().is_empty() {
                return Err(src.invalid(
                    "slot",
                    s.slot.span(),
                    "a server needs at least one [[slot]]",
                ));
            }
            let mut slots: Vec<SlotSpec> = Vec::new();
            for (i, raw) in s.slot.get_ref().iter().enumerate() {
                let key = format!("slot[{i}]");
                let sname = check_name(src, &format!("{key}.name"), &raw.name)?;
                if slots.iter().any(|x| x.name == sname) {
                    return Err(src.invalid(
                        &format!("{key}.name"),
                        raw.name.span(),
                        format!("slot `{sname}` is defined twice"),
                    ));
                }
                let modes = spanned_list(src, &format!("{key}.modes"), &raw.modes)?;
                let ropes = *raw.ropes.get_ref();
                if !(1..=8).contains(&ropes) {
                    return Err(src.invalid(
                        &format!("{key}.ropes"),
                        raw.ropes.span(),
                        format!("{ropes} ropes is not plausible; expected 1 to 8"),
                    ));
                }
                slots.push(SlotSpec {
                    name: sname,
                    modes,
                    ropes: ropes as u32,
                    at: src.at(&format!("{key}.name"), raw.name.span()),
                });
            }
            let at = src.at("name", s.name.span());
            reg.servers.insert(
                name.clone(),
                ServerSpec {
                    name,
                    params,
                    bridge,
                    slots,
                    at,
                },
            );
        }
        "adapter" => {
            let a: raw::RawAdapter = src.parse()?;
            let name = check_name(src, "name", &a.name)?;
            let modes = spanned_list(src, "modes", &a.modes)?;
            if a.function.get_ref().is_empty() {
                return Err(src.invalid(
                    "function",
                    a.function.span(),
                    "an adapter needs at least one [[function]]",
                ));
            }
            let mut functions: Vec<FunctionSpec> = Vec::new();
            for (i, f) in a.function.get_ref().iter().enumerate() {
                let key = format!("function[{i}]");
                let fname = check_name(src, &format!("{key}.name"), &f.name)?;
                if functions.iter().any(|x| x.name == fname) {
                    return Err(src.invalid(
                        &format!("{key}.name"),
                        f.name.span(),
                        format!("function `{fname}` is defined twice"),
                    ));
                }
                let (engine, rules) = match f.engine.get_ref().as_str() {
                    "nic" => (EngineKind::Nic, schema::NIC),
                    "hba" => (EngineKind::Hba, schema::HBA),
                    "dma" => (EngineKind::RawDma, schema::RAW_DMA),
                    other => {
                        return Err(src.invalid(
                            &format!("{key}.engine"),
                            f.engine.span(),
                            format!("unknown engine `{other}`; expected `nic`, `hba` or `dma`"),
                        ))
                    }
                };
                let link = match (&f.link, engine) {
                    (None, EngineKind::RawDma) => None,
                    (Some(l), EngineKind::RawDma) => {
                        return Err(src.invalid(
                            &format!("{key}.link"),
                            l.span(),
                            "a `dma` function drives no link: remove `link`",
                        ))
                    }
                    (Some(l), _) => Some(l.clone()),
                    (None, _) => {
                        return Err(src.invalid(
                            &format!("{key}.engine"),
                            f.engine.span(),
                            format!(
                                "missing `link`: a `{}` function drives a link",
                                engine.name()
                            ),
                        ))
                    }
                };
                let params = convert_params(src, &format!("{key}.param"), &f.param, rules)?;
                let at = match &link {
                    Some(l) => src.at(&format!("{key}.link"), l.span()),
                    None => src.at(&format!("{key}.engine"), f.engine.span()),
                };
                functions.push(FunctionSpec {
                    name: fname,
                    engine,
                    link: link.map(|l| l.get_ref().clone()),
                    params,
                    at,
                });
            }
            let at = src.at("name", a.name.span());
            reg.adapters.insert(
                name.clone(),
                AdapterSpec {
                    name,
                    modes,
                    functions,
                    at,
                },
            );
        }
        "testbed" => {
            let t: raw::RawTestbed = src.parse()?;
            let name = check_name(src, "name", &t.name)?;
            let params = convert_params(src, "param", &t.param, schema::TESTBED)?;
            let at = src.at("name", t.name.span());
            reg.testbeds
                .insert(name.clone(), TestbedSpec { name, params, at });
        }
        // Calibration and fitted-parameter files may live beside the models;
        // they have loaders of their own.
        "calibration" | "fitted" => {}
        other => {
            return Err(src.invalid(
                "kind",
                kind.span(),
                format!(
                    "unknown kind `{other}`; expected one of bus, link, server, adapter, testbed"
                ),
            ))
        }
    }
    Ok(())
}

/// Cross-file checks: every bus mode and link a model names exists, and
/// adapter functions drive links of a framing their engine understands.
fn check_registry(reg: &Registry) -> Result<()> {
    let buses = known(reg.buses.keys());
    for s in reg.servers.values() {
        for slot in &s.slots {
            for m in &slot.modes {
                if !reg.buses.contains_key(m) {
                    return Err(Error::Unknown {
                        at: slot.at.clone(),
                        what: "bus mode",
                        name: m.clone(),
                        known: buses.clone(),
                    });
                }
            }
        }
    }
    for a in reg.adapters.values() {
        for m in &a.modes {
            if !reg.buses.contains_key(m) {
                return Err(Error::Unknown {
                    at: a.at.clone(),
                    what: "bus mode",
                    name: m.clone(),
                    known: buses.clone(),
                });
            }
        }
        for f in &a.functions {
            let Some(link_name) = &f.link else {
                continue;
            };
            let Some(link) = reg.links.get(link_name) else {
                return Err(Error::Unknown {
                    at: f.at.clone(),
                    what: "link",
                    name: link_name.clone(),
                    known: known(reg.links.keys()),
                });
            };
            let ok = matches!(
                (f.engine, link.framing),
                (EngineKind::Nic, Framing::Ethernet) | (EngineKind::Hba, Framing::FibreChannel)
            );
            if !ok {
                return Err(Error::Invalid {
                    at: f.at.clone(),
                    message: format!(
                        "engine `{}` cannot drive link `{link_name}` ({:?} framing)",
                        f.engine.name(),
                        link.framing
                    ),
                });
            }
        }
    }
    for s in reg.servers.values() {
        let sp = schema::ServerParams::from_set(&s.params, &s.at)?;
        let (local, remote) = (sp.memory_local_latency, sp.memory_remote_latency);
        if remote < local {
            let at = s
                .params
                .map
                .get("memory_remote_latency")
                .map(|p| p.at.clone())
                .unwrap_or_else(|| s.at.clone());
            return Err(Error::Invalid {
                at,
                message: format!("remote memory latency {remote} ns is below local {local} ns"),
            });
        }
    }
    Ok(())
}

/// Comma-separated list of known names, for error messages.
pub(crate) fn known<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let v: Vec<&str> = names.map(|s| s.as_str()).collect();
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(", ")
    }
}
