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
    AdapterSpec, BusSpec, EngineKind, Framing, FunctionSpec, IoControllerSpec, LinkSpec, Protocol,
    Registry, ServerSpec, SlotSpec, TestbedSpec,
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
        add_model(&mut reg, &src, false)?;
    }
    for dir in dirs {
        if !dir.is_dir() {
            return Err(Error::Io {
                path: dir.clone(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "not a directory"),
            });
        }
        // Within one directory, two files may not define the same model:
        // which one won would depend on the file names alone.
        let mut seen: std::collections::HashMap<(&'static str, String), Location> =
            Default::default();
        for f in collect_toml(dir)? {
            let text = read(&f)?;
            let src = Source {
                file: f,
                text: &text,
            };
            if let Some((kind, name, at)) = add_model(&mut reg, &src, true)? {
                if let Some(first) = seen.get(&(kind, name.clone())) {
                    return Err(Error::Invalid {
                        at,
                        message: format!(
                            "{kind} `{name}` is also defined in {}:{}; two files under one --models directory may not define the same {kind}",
                            first.file.display(),
                            first.line
                        ),
                    });
                }
                seen.insert((kind, name), at);
            }
        }
    }
    check_registry(&reg)?;
    Ok(reg)
}

/// The largest input file iosim reads (4 MiB); the bundled files are a few KiB.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// Reads an input file, mapping failure to [`Error::Io`]. Only a regular
/// file (or a symlink to one) is read, so a FIFO or a device cannot block
/// the run, and only up to [`MAX_FILE_BYTES`].
pub fn read(path: &Path) -> Result<String> {
    use std::io::Read as _;
    let io_err = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io_err)?;
    check_regular(path, &meta)?;
    let file = std::fs::File::open(path).map_err(io_err)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big(path));
    }
    String::from_utf8(bytes).map_err(|_| {
        io_err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not UTF-8 text",
        ))
    })
}

/// An [`Error::Io`] for a file over [`MAX_FILE_BYTES`].
fn too_big(path: &Path) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "larger than 4 MiB, the limit for an input file",
        ),
    }
}

/// Refuses anything but a regular file of at most [`MAX_FILE_BYTES`].
fn check_regular(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    if !meta.is_file() {
        let what = file_type_name(&meta.file_type());
        return Err(Error::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("not a regular file ({what})"),
            ),
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_big(path));
    }
    Ok(())
}

/// What a file that is not regular is, in words.
fn file_type_name(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "a special file"
    }
}

/// Deepest directory nesting walked under a `--models` directory.
const MAX_DEPTH: usize = 32;

/// The `*.toml` files under `root`, sorted by path within each directory.
/// Directory symlinks are followed only when they lead to a directory inside
/// `root` not yet walked (so a loop is walked once); one leading out of the
/// tree is an error. Each file is listed once, even when symlinks reach it
/// twice.
fn collect_toml(root: &Path) -> Result<Vec<PathBuf>> {
    let canon = std::fs::canonicalize(root).map_err(|source| Error::Io {
        path: root.to_path_buf(),
        source,
    })?;
    let mut walk = Walk {
        root: canon.clone(),
        dirs: vec![canon].into_iter().collect(),
        files: Default::default(),
        out: Vec::new(),
    };
    walk.dir(root, 0)?;
    Ok(walk.out)
}

struct Walk {
    /// The canonical root.
    root: PathBuf,
    /// Canonical directories already walked.
    dirs: std::collections::HashSet<PathBuf>,
    /// Canonical files already listed.
    files: std::collections::HashSet<PathBuf>,
    out: Vec<PathBuf>,
}

impl Walk {
    fn dir(&mut self, dir: &Path, depth: usize) -> Result<()> {
        let io_err = |source| Error::Io {
            path: dir.to_path_buf(),
            source,
        };
        if depth > MAX_DEPTH {
            return Err(io_err(std::io::Error::other(format!(
                "directories nested more than {MAX_DEPTH} deep"
            ))));
        }
        let mut paths = Vec::new();
        for e in std::fs::read_dir(dir).map_err(io_err)? {
            paths.push(e.map_err(io_err)?.path());
        }
        paths.sort();
        for p in paths {
            let io_err = |source| Error::Io {
                path: p.clone(),
                source,
            };
            let lmeta = std::fs::symlink_metadata(&p).map_err(io_err)?;
            let is_link = lmeta.file_type().is_symlink();
            let is_dir = if is_link {
                // A dangling link or a loop of links: an error only when named *.toml.
                std::fs::metadata(&p).map(|m| m.is_dir()).unwrap_or(false)
            } else {
                lmeta.is_dir()
            };
            if is_dir {
                let c = std::fs::canonicalize(&p).map_err(io_err)?;
                if is_link && !c.starts_with(&self.root) {
                    return Err(io_err(std::io::Error::other(format!(
                        "a symlink to {}, outside the models directory: not followed (copy the files in instead)",
                        c.display()
                    ))));
                }
                if self.dirs.insert(c) {
                    self.dir(&p, depth + 1)?;
                }
            } else if p.extension().is_some_and(|e| e == "toml") {
                // Special files and broken links are refused when read.
                let key = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
                if self.files.insert(key) {
                    self.out.push(p);
                }
            }
        }
        Ok(())
    }
}

/// Parses one model file and adds it to the registry; returns its kind, name
/// and the location of its name. A calibration or fitted-parameter file is
/// skipped among the bundled models (`user` false) and refused in a
/// `--models` directory (`user` true), pointing at the flag that reads it.
fn add_model(
    reg: &mut Registry,
    src: &Source,
    user: bool,
) -> Result<Option<(&'static str, String, Location)>> {
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
    let mut added = None;
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
            added = Some(("bus", name.clone(), at.clone()));
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
            added = Some(("link", name.clone(), at.clone()));
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
            let mut io_controllers: Vec<IoControllerSpec> = Vec::new();
            for (i, raw) in s.io_controller.iter().enumerate() {
                let key = format!("io_controller[{i}]");
                let cname = check_name(src, &format!("{key}.name"), &raw.name)?;
                if io_controllers.iter().any(|c| c.name == cname) {
                    return Err(src.invalid(
                        &format!("{key}.name"),
                        raw.name.span(),
                        format!("I/O controller `{cname}` is defined twice"),
                    ));
                }
                let params = convert_params(
                    src,
                    &format!("{key}.param"),
                    &raw.param,
                    schema::IO_CONTROLLER,
                )?;
                io_controllers.push(IoControllerSpec {
                    name: cname,
                    params,
                    at: src.at(&format!("{key}.name"), raw.name.span()),
                });
            }
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
                let segment = match &raw.segment {
                    Some(seg) => Some(check_name(src, &format!("{key}.segment"), seg)?),
                    None => None,
                };
                let controller = match &raw.controller {
                    Some(c) => {
                        let cname = check_name(src, &format!("{key}.controller"), c)?;
                        let known: Vec<&str> =
                            io_controllers.iter().map(|c| c.name.as_str()).collect();
                        Some(known.iter().position(|k| *k == cname).ok_or_else(|| {
                            src.invalid(
                                &format!("{key}.controller"),
                                c.span(),
                                format!(
                                    "unknown I/O controller `{cname}`; the server defines: {}",
                                    if known.is_empty() {
                                        "none".to_string()
                                    } else {
                                        known.join(", ")
                                    }
                                ),
                            )
                        })?)
                    }
                    None => None,
                };
                slots.push(SlotSpec {
                    name: sname,
                    modes,
                    modes_at: modes_at(src, &format!("{key}.modes"), &raw.modes),
                    ropes: ropes as u32,
                    segment,
                    controller,
                    at: src.at(&format!("{key}.name"), raw.name.span()),
                });
            }
            let at = src.at("name", s.name.span());
            added = Some(("server", name.clone(), at.clone()));
            reg.servers.insert(
                name.clone(),
                ServerSpec {
                    name,
                    params,
                    bridge,
                    io_controllers,
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
            added = Some(("adapter", name.clone(), at.clone()));
            reg.adapters.insert(
                name.clone(),
                AdapterSpec {
                    name,
                    modes,
                    modes_at: modes_at(src, "modes", &a.modes),
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
            added = Some(("testbed", name.clone(), at.clone()));
            reg.testbeds
                .insert(name.clone(), TestbedSpec { name, params, at });
        }
        // The bundled calibration and fitted-parameter files live beside the
        // models; they have loaders of their own.
        "calibration" | "fitted" if !user => {}
        k @ ("calibration" | "fitted") => {
            let flag = if k == "fitted" {
                "--params"
            } else {
                "--calibration"
            };
            return Err(src.invalid(
                "kind",
                kind.span(),
                format!("a `{k}` file is not a model and is not read from a --models directory: give it with {flag} FILE instead"),
            ));
        }
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
    Ok(added)
}

/// The location of each entry of a `modes` list (`key[i]`, its line).
fn modes_at(
    src: &Source,
    key: &str,
    list: &toml::Spanned<Vec<toml::Spanned<String>>>,
) -> Vec<Location> {
    list.get_ref()
        .iter()
        .enumerate()
        .map(|(i, m)| src.at(&format!("{key}[{i}]"), m.span()))
        .collect()
}

/// Cross-file checks: every bus mode and link a model names exists, and
/// adapter functions drive links of a framing their engine understands.
fn check_registry(reg: &Registry) -> Result<()> {
    let buses = known(reg.buses.keys());
    for s in reg.servers.values() {
        for slot in &s.slots {
            for (i, m) in slot.modes.iter().enumerate() {
                if !reg.buses.contains_key(m) {
                    return Err(Error::Unknown {
                        at: slot.modes_at.get(i).unwrap_or(&slot.at).clone(),
                        what: "bus mode",
                        name: m.clone(),
                        known: buses.clone(),
                    });
                }
            }
        }
    }
    for a in reg.adapters.values() {
        for (i, m) in a.modes.iter().enumerate() {
            if !reg.buses.contains_key(m) {
                return Err(Error::Unknown {
                    at: a.modes_at.get(i).unwrap_or(&a.at).clone(),
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
