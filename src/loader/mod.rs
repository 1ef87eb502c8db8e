//! The model loader: the only module that reads TOML.
//!
//! Files are parsed into serde structures that mirror them (`raw`), then
//! validated into the typed descriptions of [`crate::model`]: every parameter
//! checked for unit, range and source against [`crate::model::schema`], every name resolved.
//! Every error names the file, the key and the line.

mod calibration;
mod extends;
mod input;
mod params;
mod part;
mod place;
mod raw;
mod scenario;
mod spread;
pub use crate::model::schema;
pub use input::{bundled_files, read, MAX_FILE_BYTES};
pub(crate) use input::{known, Source};

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::error::{Error, Errors, Location, Result};
use crate::model::{
    AdapterSpec, BusSpec, CardBridgeSpec, CpuSpec, Extends, Framing, FunctionSpec,
    IoControllerSpec, LinkSpec, OwnParts, Protocol, Registry, ServerSpec, SlotSpec, TestbedSpec,
};
use crate::units::readable;
pub use calibration::{
    apply_bundled_fitted, apply_fitted, apply_fitted_text, fitted_file_text,
    load_bundled_calibration, load_calibration, parse_calibration, BundledFit, FittedEntry,
};
use extends::{extends_of, resolve_extends};
use params::{check_name, convert_params, convert_some_params, spanned_list, whole_number};
pub use part::open_parts;
pub use place::{load_place_request, parse_place_request, place_request_from_args};
pub use scenario::{load_bundled_scenarios, load_scenario, parse_scenario};
pub use spread::{bundled_spread, load_spread, parse_spread, spread_file_text};

/// Loads the bundled models, then every `*.toml` under each of `dirs`
/// (a model there replaces a bundled one of the same kind and name).
/// Every error of every file is reported (up to [`crate::error::MAX_ERRORS`]),
/// not just the first.
pub fn load_registry(dirs: &[PathBuf]) -> Result<Registry> {
    let mut reg = bundled_registry()?;
    let mut errs = Errors::default();
    for dir in dirs {
        if !dir.is_dir() {
            let why = if dir.exists() {
                "not a directory"
            } else {
                "no such directory"
            };
            return Err(Error::Io {
                path: dir.clone(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, why),
            });
        }
        let mut files = Vec::new();
        for f in collect_toml(dir)? {
            match read(&f) {
                Ok(text) => files.push((f, text)),
                Err(e) => errs.push(e),
            }
        }
        let texts: Vec<(PathBuf, &str)> =
            files.iter().map(|(f, t)| (f.clone(), t.as_str())).collect();
        if let Err(e) = add_user_models(&mut reg, &texts) {
            errs.push(e);
        }
    }
    errs.finish(())?;
    resolve_extends(&mut reg)?;
    check_registry(&reg)?;
    Ok(reg)
}

/// The models of `base` (the bundled ones: `load_registry(&[])`) and,
/// after them, one model file's `text` as if it were alone in a `--models`
/// directory; `file` is used in messages. The same checks as
/// [`load_registry`], with no file read (what the fuzzer drives).
pub fn parse_model(file: PathBuf, text: &str, base: &Registry) -> Result<Registry> {
    let mut reg = base.clone();
    add_user_models(&mut reg, &[(file, text)])?;
    resolve_extends(&mut reg)?;
    check_registry(&reg)?;
    Ok(reg)
}

/// The bundled models alone, unchecked across files.
fn bundled_registry() -> Result<Registry> {
    let mut reg = Registry {
        spread: bundled_spread()?,
        ..Registry::default()
    };
    for (path, text) in bundled_files("models/") {
        let src = Source::new(PathBuf::from(format!("<bundled>/{path}")), text);
        add_model(&mut reg, &src, false, &mut Vec::new())?;
    }
    resolve_extends(&mut reg)?;
    Ok(reg)
}

/// Adds the model files of one `--models` directory (path and text, in
/// path order) to `reg`, keeping every file's errors.
fn add_user_models(reg: &mut Registry, files: &[(PathBuf, &str)]) -> Result<()> {
    let mut errs = Errors::default();
    // Within one directory, two files may not define the same model:
    // which one won would depend on the file names alone.
    let mut seen: std::collections::HashMap<(&'static str, String), Location> = Default::default();
    // The files that failed, each with its error and the names it refers
    // to in other files, checked once every file is read.
    let mut failed: Vec<(Error, Vec<Reference>, &str)> = Vec::new();
    for (f, text) in files {
        let src = Source::new(f.clone(), text);
        let mut refs = Vec::new();
        match add_model(reg, &src, true, &mut refs) {
            Ok(Some((kind, name, at))) => {
                if let Some(first) = seen.get(&(kind, name.clone())) {
                    errs.push(Error::Invalid {
                        at,
                        message: format!(
                            "{kind} `{name}` is also defined in {}:{}; two files under one --models directory may not define the same {kind}",
                            first.file.display(),
                            first.line
                        ),
                    });
                    continue;
                }
                seen.insert((kind, name), at);
            }
            Ok(None) => {}
            Err(e) => failed.push((e, refs, text)),
        }
    }
    // A model named by a file that failed is not unknown: its own errors
    // say what is wrong with it.
    let declared: HashSet<(String, String)> = failed
        .iter()
        .filter_map(|(_, _, text)| {
            let t: toml::Table = toml::from_str(text).ok()?;
            let field = |k: &str| t.get(k)?.as_str().map(str::to_string);
            Some((field("kind")?, field("name")?))
        })
        .collect();
    for (e, refs, _) in failed {
        let mut list = match e {
            Error::Many { errors, omitted: 0 } => errors,
            Error::Many { .. } => {
                // Already more than can be shown.
                errs.push(e);
                continue;
            }
            e => vec![e],
        };
        for r in refs {
            let (kind, known_names): (&str, Vec<&String>) = match r.what {
                "bus mode" => ("bus", reg.buses.keys().collect()),
                _ => ("link", reg.links.keys().collect()),
            };
            if known_names.contains(&&r.name) || declared.contains(&(kind.into(), r.name.clone())) {
                continue;
            }
            list.push(Error::Unknown {
                at: r.at,
                what: r.what,
                name: r.name,
                known: known(known_names.into_iter()).into(),
            });
        }
        list.sort_by_key(|e| match e {
            Error::Syntax { at, .. } | Error::Invalid { at, .. } | Error::Unknown { at, .. } => {
                (at.line, at.column)
            }
            _ => (0, 0),
        });
        list.into_iter().for_each(|e| errs.push(e));
    }
    errs.finish(())
}

/// A name a model that failed to load refers to in another file: a bus
/// mode or a link. It is checked once every file of the directory is read
/// (a model that loads has it checked by `check_registry`), so that a
/// file's mistakes of both kinds are reported in one run.
struct Reference {
    /// `bus mode` or `link`.
    what: &'static str,
    /// The name referred to.
    name: String,
    /// Where.
    at: Location,
}

/// The references of a raw list of bus modes at `key` (`key[i]`).
fn mode_refs(
    src: &Source,
    key: &str,
    list: &toml::Spanned<Vec<toml::Spanned<String>>>,
) -> Vec<Reference> {
    list.get_ref()
        .iter()
        .enumerate()
        .map(|(i, m)| Reference {
            what: "bus mode",
            name: m.get_ref().clone(),
            at: src.at(&format!("{key}[{i}]"), m.span()),
        })
        .collect()
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
    refs: &mut Vec<Reference>,
) -> Result<Option<(&'static str, String, Location)>> {
    let head: raw::RawKind = src.parse(&raw::KIND)?;
    let Some(kind) = head.kind else {
        return Err(Error::Invalid {
            at: Location {
                file: src.file.clone(),
                key: "kind".into(),
                line: 1,
                column: 1,
            },
            message: "missing `kind` (one of bus, link, server, adapter, testbed, cpu)".into(),
        });
    };
    // Every error of the file is kept; the model is added only if none.
    let mut errs = Errors::default();
    let added = match kind.get_ref().as_str() {
        "bus" => {
            let b: raw::RawBus = src.parse(&raw::BUS)?;
            let name = errs.take(check_name(src, "name", &b.name));
            let protocol = match b.protocol.get_ref().as_str() {
                "pci" => Some(Protocol::Pci),
                "pcix" => Some(Protocol::PciX),
                "hsc" => Some(Protocol::Hsc),
                other => {
                    errs.push(src.invalid(
                        "protocol",
                        b.protocol.span(),
                        format!("unknown protocol `{other}`; expected `pci`, `pcix` or `hsc`"),
                    ));
                    None
                }
            };
            let params = errs.take(convert_params(src, "param", &b.param, schema::BUS));
            let (Some(name), Some(protocol), Some(params)) = (name, protocol, params) else {
                return Err(errs.into_error());
            };
            let at = src.at("name", b.name.span());
            reg.buses.insert(
                name.clone(),
                BusSpec {
                    name: name.clone(),
                    description: b.description.clone(),
                    protocol,
                    params,
                    at: at.clone(),
                },
            );
            ("bus", name, at)
        }
        "link" => {
            let l: raw::RawLink = src.parse(&raw::LINK)?;
            let name = errs.take(check_name(src, "name", &l.name));
            let framing = match l.framing.get_ref().as_str() {
                "ethernet" => Some((Framing::Ethernet, schema::ETHERNET)),
                "fibre-channel" => Some((Framing::FibreChannel, schema::FIBRE_CHANNEL)),
                "atm" => Some((Framing::Atm, schema::ATM)),
                "parallel-scsi" => Some((Framing::ParallelScsi, schema::PARALLEL_SCSI)),
                other => {
                    errs.push(src.invalid(
                        "framing",
                        l.framing.span(),
                        format!(
                            "unknown framing `{other}`; expected `ethernet`, `fibre-channel`, `atm` or `parallel-scsi`"
                        ),
                    ));
                    None
                }
            };
            let params = framing
                .and_then(|(_, rules)| errs.take(convert_params(src, "param", &l.param, rules)));
            let (Some(name), Some((framing, _)), Some(params)) = (name, framing, params) else {
                return Err(errs.into_error());
            };
            let at = src.at("name", l.name.span());
            reg.links.insert(
                name.clone(),
                LinkSpec {
                    name: name.clone(),
                    description: l.description.clone(),
                    framing,
                    params,
                    at: at.clone(),
                },
            );
            ("link", name, at)
        }
        "server" => {
            let s: raw::RawServer = src.parse(&raw::SERVER)?;
            let name = errs.take(check_name(src, "name", &s.name));
            let extends = errs.take(extends_of(src, &s.extends)).flatten();
            let whole = extends.is_none();
            let params = errs.take(convert_some_params(
                src,
                "param",
                s.param.as_ref(),
                s.name.span(),
                schema::SERVER,
                whole,
            ));
            let bridge = errs.take(convert_some_params(
                src,
                "bridge",
                s.bridge.as_ref(),
                s.name.span(),
                schema::BRIDGE,
                whole,
            ));
            let mut io_controllers: Vec<IoControllerSpec> = Vec::new();
            // Controllers named but not kept (their own error reported):
            // a slot under one is not also "unknown".
            let mut broken: HashSet<String> = HashSet::new();
            let server_cells_max = params.as_ref().and_then(|p| p.value("cells_max"));
            for (i, raw) in s.io_controller.iter().enumerate() {
                let key = format!("io_controller[{i}]");
                let taken = io_controllers.iter().map(|c| c.name.as_str());
                let cname = unique_name(src, &key, &raw.name, taken, "I/O controller", &mut errs);
                let params = errs.take(convert_params(
                    src,
                    &format!("{key}.param"),
                    &raw.param,
                    schema::IO_CONTROLLER,
                ));
                let cell = match &raw.cell {
                    None => Some(None),
                    Some(v) => errs
                        .take(whole_number(src, &format!("{key}.cell"), v, "cell"))
                        .and_then(|c| {
                            let max = server_cells_max;
                            if c < 0.0 || max.is_some_and(|m| c >= m) {
                                errs.push(src.invalid(
                                    &format!("{key}.cell"),
                                    v.span(),
                                    format!(
                                        "cell {}; the server's cells are 0 to {}",
                                        readable(c),
                                        max.map_or("cells_max - 1".into(), |m| readable(m - 1.0))
                                    ),
                                ));
                                None
                            } else {
                                Some(Some(c as u32))
                            }
                        }),
                };
                match (cname, params, cell) {
                    (Some(name), Some(params), Some(cell)) => {
                        io_controllers.push(IoControllerSpec {
                            name,
                            cell,
                            params,
                            at: src.at(&format!("{key}.name"), raw.name.span()),
                        })
                    }
                    _ => {
                        broken.insert(raw.name.get_ref().clone());
                    }
                }
            }
            let raw_slots: &[raw::RawSlot] = s.slot.as_ref().map_or(&[], |v| v.get_ref());
            let own_io =
                !raw_slots.is_empty() || !s.chassis.is_empty() || !s.io_controller.is_empty();
            if raw_slots.is_empty() && s.chassis.is_empty() && (whole || own_io) {
                errs.push(src.invalid(
                    "slot",
                    s.slot.as_ref().map_or(s.name.span(), |v| v.span()),
                    "a server needs at least one [[slot]] or [[chassis]]",
                ));
            }
            let mut slots: Vec<SlotSpec> = Vec::new();
            // The names of `slots`, so that a name given twice is found in
            // time linear in the file.
            let mut names: HashSet<String> = HashSet::new();
            let mut placed: Vec<(String, &raw::RawSlot)> = Vec::new();
            for (i, raw) in raw_slots.iter().enumerate() {
                let key = format!("slot[{i}]");
                if let Some(slot) = errs.take(slot_spec(
                    src,
                    &key,
                    raw,
                    &names,
                    (&io_controllers, &broken),
                    None,
                )) {
                    names.insert(slot.name.clone());
                    slots.push(slot);
                    placed.push((key, raw));
                }
            }
            // Chassis templates: each copy its own controller and slots,
            // numbered across the templates in file order.
            let cells_max = params.as_ref().and_then(|p| p.value("cells_max"));
            let mut next_chassis: u32 = 0;
            for (t, ch) in s.chassis.iter().enumerate() {
                let tkey = format!("chassis[{t}]");
                let Some((copies, per_cell)) = errs.take(chassis_copies(src, &tkey, ch, cells_max))
                else {
                    continue;
                };
                let rc = ch.io_controller.get_ref();
                let ckey = format!("{tkey}.io_controller");
                if let Some(c) = &rc.cell {
                    errs.push(src.invalid(
                        &format!("{ckey}.cell"),
                        c.span(),
                        "a chassis template's controller hangs from the cell its copy's `per_cell` gives: give it no `cell`",
                    ));
                }
                let Some(cname) = errs.take(check_name(src, &format!("{ckey}.name"), &rc.name))
                else {
                    continue;
                };
                let Some(cparams) = errs.take(convert_params(
                    src,
                    &format!("{ckey}.param"),
                    &rc.param,
                    schema::IO_CONTROLLER,
                )) else {
                    continue;
                };
                if ch.slot.get_ref().is_empty() {
                    errs.push(src.invalid(
                        &format!("{tkey}.slot"),
                        ch.slot.span(),
                        "a chassis needs at least one [[chassis.slot]]",
                    ));
                    continue;
                }
                for k in 0..copies {
                    let index = next_chassis + k;
                    let name = chassis_name(&cname, index, true);
                    if io_controllers.iter().any(|c| c.name == name) {
                        errs.push(src.invalid(
                            &format!("{ckey}.name"),
                            rc.name.span(),
                            format!("I/O controller `{name}` (chassis {index}) is defined twice"),
                        ));
                        break;
                    }
                    io_controllers.push(IoControllerSpec {
                        name,
                        cell: per_cell.map(|p| k / p),
                        params: cparams.clone(),
                        at: src.at(&format!("{ckey}.name"), rc.name.span()),
                    });
                    let copy = ChassisCopy {
                        index,
                        cell: per_cell.map(|p| k / p),
                        controller: io_controllers.len() - 1,
                    };
                    let before = errs.len();
                    for (i, raw) in ch.slot.get_ref().iter().enumerate() {
                        let key = format!("{tkey}.slot[{i}]");
                        let r = slot_spec(
                            src,
                            &key,
                            raw,
                            &names,
                            (&io_controllers, &broken),
                            Some(copy),
                        );
                        if let Some(slot) = errs.take(r) {
                            names.insert(slot.name.clone());
                            slots.push(slot);
                            placed.push((key, raw));
                        }
                    }
                    // A template's error is reported once, not once a copy.
                    if errs.len() > before {
                        break;
                    }
                }
                next_chassis += copies;
            }
            // The slots of one segment share its bus adapter: its ropes and
            // the controller they end at.
            let mut first_on: HashMap<&str, usize> = HashMap::new();
            for (i, slot) in slots.iter().enumerate() {
                let (key, raw) = &placed[i];
                let first = slot
                    .segment
                    .as_deref()
                    .map(|seg| &slots[*first_on.entry(seg).or_insert(i)])
                    .filter(|f| !std::ptr::eq(*f, slot));
                if let (Some(first), Some(seg)) = (first, raw.segment.as_ref()) {
                    if first.ropes != slot.ropes || first.controller != slot.controller {
                        errs.push(src.invalid(
                            &format!("{key}.segment"),
                            seg.span(),
                            format!(
                                "slot `{}` is on segment `{}` with slot `{}` but names other \
                                 ropes or another controller: the slots of one segment share \
                                 one bus adapter, its ropes and its controller",
                                slot.name,
                                seg.get_ref(),
                                first.name
                            ),
                        ));
                    }
                }
            }
            let (Some(name), Some(params), Some(bridge), true) =
                (name, params, bridge, errs.is_empty())
            else {
                for (i, raw) in raw_slots.iter().enumerate() {
                    refs.extend(mode_refs(src, &format!("slot[{i}].modes"), &raw.modes));
                }
                for (t, ch) in s.chassis.iter().enumerate() {
                    for (i, raw) in ch.slot.get_ref().iter().enumerate() {
                        let key = format!("chassis[{t}].slot[{i}].modes");
                        refs.extend(mode_refs(src, &key, &raw.modes));
                    }
                }
                return Err(errs.into_error());
            };
            let at = src.at("name", s.name.span());
            let named = |key: &str, v: &Option<toml::Spanned<String>>| {
                v.as_ref()
                    .map(|n| (n.get_ref().clone(), src.at(key, n.span())))
            };
            reg.servers.insert(
                name.clone(),
                ServerSpec {
                    name: name.clone(),
                    description: s.description.clone(),
                    params,
                    bridge,
                    io_controllers,
                    cpu: named("cpu", &s.cpu),
                    costs_from: named("costs_from", &s.costs_from),
                    extends: extends.map(|(name, at)| Extends {
                        name,
                        at,
                        resolved: false,
                        own: OwnParts {
                            io_tree: own_io,
                            ..OwnParts::default()
                        },
                    }),
                    slots,
                    at: at.clone(),
                },
            );
            ("server", name, at)
        }
        "adapter" => {
            let a: raw::RawAdapter = src.parse(&raw::ADAPTER)?;
            let name = errs.take(check_name(src, "name", &a.name));
            let extends = errs.take(extends_of(src, &a.extends)).flatten();
            let whole = extends.is_none();
            let modes = match &a.modes {
                Some(m) => errs.take(spanned_list(src, "modes", m)),
                None if whole => {
                    errs.push(src.invalid(
                        "modes",
                        a.name.span(),
                        "missing `modes` (the bus modes the card runs, fastest first)",
                    ));
                    None
                }
                None => Some(Vec::new()),
            };
            let raw_functions: &[raw::RawFunction] =
                a.function.as_ref().map_or(&[], |f| f.get_ref());
            if raw_functions.is_empty() && whole {
                errs.push(src.invalid(
                    "function",
                    a.function.as_ref().map_or(a.name.span(), |f| f.span()),
                    "an adapter needs at least one [[function]]",
                ));
            }
            let mut functions: Vec<FunctionSpec> = Vec::new();
            for (i, f) in raw_functions.iter().enumerate() {
                if let Some(f) = errs.take(function_spec(src, i, f, &functions, whole)) {
                    functions.push(f);
                }
            }
            let bridge = a.bridge.as_ref().and_then(|b| {
                let raw = b.get_ref();
                let secondary = errs.take(convert_params(
                    src,
                    "bridge.secondary",
                    &raw.secondary,
                    schema::CARD_SECONDARY_BRIDGE,
                ));
                let primary = errs.take(convert_params(
                    src,
                    "bridge.primary",
                    &raw.primary,
                    schema::CARD_BRIDGE,
                ));
                Some(CardBridgeSpec {
                    secondary_mode: raw.secondary_mode.get_ref().clone(),
                    secondary_mode_at: src.at("bridge.secondary_mode", raw.secondary_mode.span()),
                    secondary: secondary?,
                    primary: primary?,
                    at: src.at("bridge", b.span()),
                })
            });
            let (Some(name), Some(modes), true) = (name, modes, errs.is_empty()) else {
                if let Some(m) = &a.modes {
                    refs.extend(mode_refs(src, "modes", m));
                }
                if let Some(b) = &a.bridge {
                    let m = &b.get_ref().secondary_mode;
                    refs.push(Reference {
                        what: "bus mode",
                        name: m.get_ref().clone(),
                        at: src.at("bridge.secondary_mode", m.span()),
                    });
                }
                let functions = a
                    .function
                    .as_ref()
                    .map_or(&[][..], |f| f.get_ref().as_slice());
                for (i, f) in functions.iter().enumerate() {
                    if let Some(l) = &f.link {
                        refs.push(Reference {
                            what: "link",
                            name: l.get_ref().clone(),
                            at: src.at(&format!("function[{i}].link"), l.span()),
                        });
                    }
                }
                return Err(errs.into_error());
            };
            let at = src.at("name", a.name.span());
            reg.adapters.insert(
                name.clone(),
                AdapterSpec {
                    name: name.clone(),
                    description: a.description.clone(),
                    modes,
                    modes_at: a
                        .modes
                        .as_ref()
                        .map_or_else(Vec::new, |m| modes_at(src, "modes", m)),
                    extends: extends.map(|(name, at)| Extends {
                        name,
                        at,
                        resolved: false,
                        own: OwnParts {
                            modes: a.modes.is_some(),
                            bridge: bridge.is_some(),
                            ..OwnParts::default()
                        },
                    }),
                    bridge,
                    functions,
                    at: at.clone(),
                },
            );
            ("adapter", name, at)
        }
        "cpu" => {
            let c: raw::RawCpu = src.parse(&raw::CPU)?;
            let name = errs.take(check_name(src, "name", &c.name));
            let params = errs.take(convert_params(src, "param", &c.param, schema::CPU));
            let benchmark = c.benchmark.get_ref().trim().to_string();
            if benchmark.is_empty() {
                errs.push(src.invalid(
                    "benchmark",
                    c.benchmark.span(),
                    "name the benchmark the rating is on (e.g. SPECint95)",
                ));
            }
            let (Some(name), Some(params), true) = (name, params, errs.is_empty()) else {
                return Err(errs.into_error());
            };
            let at = src.at("name", c.name.span());
            reg.cpus.insert(
                name.clone(),
                CpuSpec {
                    name: name.clone(),
                    description: c.description.clone(),
                    benchmark,
                    params,
                    at: at.clone(),
                },
            );
            ("cpu", name, at)
        }
        "testbed" => {
            let t: raw::RawTestbed = src.parse(&raw::TESTBED)?;
            let name = errs.take(check_name(src, "name", &t.name));
            let params = errs.take(convert_params(src, "param", &t.param, schema::TESTBED));
            let (Some(name), Some(params)) = (name, params) else {
                return Err(errs.into_error());
            };
            let at = src.at("name", t.name.span());
            reg.testbeds.insert(
                name.clone(),
                TestbedSpec {
                    name: name.clone(),
                    description: t.description.clone(),
                    params,
                    at: at.clone(),
                },
            );
            ("testbed", name, at)
        }
        // The bundled calibration and fitted-parameter files live beside the
        // models; they have loaders of their own.
        "calibration" | "fitted" | "spread" if !user => return Ok(None),
        k @ ("calibration" | "fitted" | "spread") => {
            let flag = match k {
                "fitted" => "--params",
                "spread" => "--spread",
                _ => "--calibration",
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
                "unknown kind `{other}`; expected one of bus, link, server, adapter, testbed, cpu"
            ),
            ))
        }
    };
    Ok(Some(added))
}

/// The valid name at `key.name` of a `what` (slot, function), if it is
/// none of the names `taken` before it; `None` with its error kept.
fn unique_name<'a>(
    src: &Source,
    key: &str,
    name: &toml::Spanned<String>,
    mut taken: impl Iterator<Item = &'a str>,
    what: &str,
    errs: &mut Errors,
) -> Option<String> {
    let key = format!("{key}.name");
    let n = errs.take(check_name(src, &key, name))?;
    if taken.any(|t| t == n) {
        errs.push(src.invalid(&key, name.span(), format!("{what} `{n}` is defined twice")));
    }
    Some(n)
}

/// The number of copies of chassis template `key` and, for `per_cell`,
/// the copies per cell: exactly one of `count` (1 to 64) or `per_cell` (1 to
/// 4, times the server's `cells_max`).
fn chassis_copies(
    src: &Source,
    key: &str,
    ch: &raw::RawChassis,
    cells_max: Option<f64>,
) -> Result<(u32, Option<u32>)> {
    match (&ch.count, &ch.per_cell) {
        (Some(c), None) => {
            let k = format!("{key}.count");
            let n = whole_number(src, &k, c, "chassis")?;
            if !(1.0..=64.0).contains(&n) {
                return Err(src.invalid(
                    &k,
                    c.span(),
                    format!("{} chassis; expected 1 to 64", readable(n)),
                ));
            }
            Ok((n as u32, None))
        }
        (None, Some(p)) => {
            let k = format!("{key}.per_cell");
            let n = whole_number(src, &k, p, "chassis per cell")?;
            if !(1.0..=4.0).contains(&n) {
                return Err(src.invalid(
                    &k,
                    p.span(),
                    format!("{} chassis per cell; expected 1 to 4", readable(n)),
                ));
            }
            // Without a valid cells_max its own error is reported.
            let cells = cells_max.unwrap_or(1.0).max(1.0) as u32;
            Ok((cells * n as u32, Some(n as u32)))
        }
        (Some(c), Some(_)) => Err(src.invalid(
            &format!("{key}.count"),
            c.span(),
            "give a chassis `count` or `per_cell`, not both",
        )),
        (None, None) => Err(src.invalid(
            &format!("{key}.io_controller"),
            ch.io_controller.span(),
            "a chassis needs `count` (copies) or `per_cell` (copies per cell of the server's cells_max)",
        )),
    }
}

/// Which copy of a `[[chassis]]` template a slot is made for.
#[derive(Debug, Clone, Copy)]
struct ChassisCopy {
    /// The chassis number (0 keeps the template's names).
    index: u32,
    /// The cell it hangs from (`per_cell`), if any.
    cell: Option<u32>,
    /// Its I/O controller (an index into the server's).
    controller: usize,
}

/// The name of `name` (a slot, segment or I/O controller of a chassis
/// template) in chassis copy `k`: copy 0 keeps it; a slot or segment of copy
/// k is `chassisK-NAME`, a controller `NAME-K`.
fn chassis_name(name: &str, k: u32, controller: bool) -> String {
    match (k, controller) {
        (0, _) => name.to_string(),
        (k, true) => format!("{name}-{k}"),
        (k, false) => format!("chassis{k}-{name}"),
    }
}

/// Slot `key` (`slot[3]`, `chassis[0].slot[3]`) of a server, checked;
/// `earlier` are the names of the slots before it; `copy` when it is a copy of a chassis
/// template's slot (renamed, under the copy's controller). `controllers` are
/// the server's controllers and the names of those not kept for an error of
/// their own: a slot naming one of those fails with no error of its own.
fn slot_spec(
    src: &Source,
    key: &str,
    raw: &raw::RawSlot,
    earlier: &HashSet<String>,
    (controllers, broken): (&[IoControllerSpec], &HashSet<String>),
    copy: Option<ChassisCopy>,
) -> Result<SlotSpec> {
    let key = key.to_string();
    let mut errs = Errors::default();
    let sname = errs
        .take(check_name(src, &format!("{key}.name"), &raw.name))
        .map(|n| chassis_name(&n, copy.map_or(0, |c| c.index), false));
    if let Some(n) = &sname {
        if earlier.contains(n) {
            errs.push(src.invalid(
                &format!("{key}.name"),
                raw.name.span(),
                format!("slot `{n}` is defined twice"),
            ));
        }
    }
    let modes = errs.take(spanned_list(src, &format!("{key}.modes"), &raw.modes));
    let rkey = format!("{key}.ropes");
    let ropes = errs.take(
        whole_number(src, &rkey, &raw.ropes, "ropes").and_then(|ropes| {
            if (0.0..=8.0).contains(&ropes) {
                Ok(ropes as u32)
            } else {
                Err(src.invalid(
                    &rkey,
                    raw.ropes.span(),
                    format!(
                        "{} ropes is not plausible; expected 1 to 8 (or 0: a bus converter on an I/O controller)",
                        readable(ropes)
                    ),
                ))
            }
        }),
    );
    let segment = match &raw.segment {
        Some(seg) => errs
            .take(check_name(src, &format!("{key}.segment"), seg))
            .map(|n| chassis_name(&n, copy.map_or(0, |c| c.index), false)),
        None => None,
    };
    let controller = match (&raw.controller, copy) {
        (Some(c), Some(_)) => {
            errs.push(src.invalid(
                &format!("{key}.controller"),
                c.span(),
                "a chassis template's slot hangs from its chassis's io_controller: give it no `controller`",
            ));
            None
        }
        (None, Some(copy)) => Some(copy.controller),
        (Some(c), None) if broken.contains(c.get_ref()) => None,
        (Some(c), None) => {
            let ckey = format!("{key}.controller");
            errs.take(check_name(src, &ckey, c).and_then(|cname| {
                controllers
                    .iter()
                    .position(|k| k.name == cname)
                    .ok_or_else(|| {
                        let known: Vec<&str> =
                            controllers.iter().map(|c| c.name.as_str()).collect();
                        src.invalid(
                            &ckey,
                            c.span(),
                            format!(
                                "unknown I/O controller `{cname}`{}; the server defines: {}",
                                crate::suggest::did_you_mean(&cname, known.iter().copied()),
                                if known.is_empty() {
                                    "none".to_string()
                                } else {
                                    known.join(", ")
                                }
                            ),
                        )
                    })
            }))
        }
        (None, None) => None,
    };
    if ropes == Some(0) && raw.controller.is_none() && copy.is_none() {
        errs.push(src.invalid(
            &rkey,
            raw.ropes.span(),
            "a slot with no ropes hangs from a bus converter on a system bus: name that I/O controller in `controller`",
        ));
    }
    let (Some(name), Some(modes), Some(ropes), true) = (sname, modes, ropes, errs.is_empty())
    else {
        return Err(errs.into_error());
    };
    Ok(SlotSpec {
        name,
        modes,
        modes_at: modes_at(src, &format!("{key}.modes"), &raw.modes),
        ropes,
        segment,
        controller,
        chassis: copy.map(|c| c.index),
        cell: copy.and_then(|c| c.cell),
        at: src.at(&format!("{key}.name"), raw.name.span()),
    })
}

/// Function `i` of an adapter, checked; `earlier` are the functions before it.
fn function_spec(
    src: &Source,
    i: usize,
    f: &raw::RawFunction,
    earlier: &[FunctionSpec],
    whole: bool,
) -> Result<FunctionSpec> {
    let key = format!("function[{i}]");
    let mut errs = Errors::default();
    let taken = earlier.iter().map(|x| x.name.as_str());
    let fname = unique_name(src, &key, &f.name, taken, "function", &mut errs);
    let engine = crate::sim::engines::kind_named(f.engine.get_ref());
    if engine.is_none() {
        let names: Vec<String> = crate::sim::engines::kinds()
            .iter()
            .map(|k| format!("`{}`", k.name()))
            .collect();
        errs.push(src.invalid(
            &format!("{key}.engine"),
            f.engine.span(),
            format!(
                "unknown engine `{}`; expected {}",
                f.engine.get_ref(),
                one_of(&names)
            ),
        ));
    }
    let mut link = None;
    if let Some(engine) = engine {
        match (&f.link, engine.drives_a_link()) {
            (None, false) => {}
            (Some(l), false) => errs.push(src.invalid(
                &format!("{key}.link"),
                l.span(),
                format!(
                    "a `{}` function drives no link: remove `link`",
                    engine.name()
                ),
            )),
            (Some(l), _) => link = Some(l.clone()),
            // A function of an adapter that extends another may take the
            // link of the parent's function of its name.
            (None, _) if !whole => {}
            (None, _) => errs.push(src.invalid(
                &format!("{key}.engine"),
                f.engine.span(),
                format!(
                    "missing `link`: a `{}` function drives a link",
                    engine.name()
                ),
            )),
        }
    }
    let params = engine.and_then(|engine| {
        errs.take(convert_some_params(
            src,
            &format!("{key}.param"),
            f.param.as_ref(),
            f.name.span(),
            engine.rules(),
            whole,
        ))
    });
    let (Some(name), Some(engine), Some(params), true) = (fname, engine, params, errs.is_empty())
    else {
        return Err(errs.into_error());
    };
    let at = match &link {
        Some(l) => src.at(&format!("{key}.link"), l.span()),
        None => src.at(&format!("{key}.engine"), f.engine.span()),
    };
    Ok(FunctionSpec {
        name,
        engine,
        link: link.map(|l| l.get_ref().clone()),
        params,
        at,
    })
}

/// A server's CPU model and cost source: the CPU it names exists; the
/// server it takes costs from exists, is another, states its own costs,
/// and has a CPU rated on the same benchmark; and without such a server
/// every CPU cost is given.
fn check_cpu_costs(reg: &Registry, s: &ServerSpec, errs: &mut Errors) {
    let cpu_of = |server: &ServerSpec| server.cpu.as_ref().and_then(|(name, _)| reg.cpus.get(name));
    if let Some((name, at)) = &s.cpu {
        if !reg.cpus.contains_key(name) {
            errs.push(Error::Unknown {
                at: at.clone(),
                what: "CPU model",
                name: name.clone(),
                known: known(reg.cpus.keys()).into(),
            });
        }
    }
    let Some((from_name, at)) = &s.costs_from else {
        for key in schema::SCALED_COSTS {
            if !schema::OPTIONAL_COSTS.contains(&key) && s.params.value(key).is_none() {
                errs.push(Error::Invalid {
                    at: s.at.clone(),
                    message: format!(
                        "missing parameter `{key}` (give it, or `costs_from` a server whose costs scale to this one's CPU)"
                    ),
                });
            }
        }
        return;
    };
    let invalid = |message: String| Error::Invalid {
        at: at.clone(),
        message,
    };
    let Some(from) = reg.servers.get(from_name) else {
        errs.push(Error::Unknown {
            at: at.clone(),
            what: "server",
            name: from_name.clone(),
            known: known(reg.servers.keys()).into(),
        });
        return;
    };
    if from.name == s.name || from.costs_from.is_some() {
        errs.push(invalid(format!(
            "costs come from a server that states its own: `{from_name}` {}",
            if from.name == s.name {
                "is this server"
            } else {
                "takes its costs from another"
            }
        )));
        return;
    }
    match (cpu_of(s), cpu_of(from)) {
        (Some(mine), Some(theirs)) if mine.benchmark == theirs.benchmark => {}
        (Some(mine), Some(theirs)) => errs.push(invalid(format!(
            "`{}` is rated on {} and `{}` on {}: ratings on different benchmarks do not compare",
            mine.name, mine.benchmark, theirs.name, theirs.benchmark
        ))),
        _ => errs.push(invalid(format!(
            "costs scale by the ratio of two CPUs' ratings: this server and `{from_name}` must each name a known `cpu`"
        ))),
    }
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
/// Every failure is reported, in the order of the models' names.
fn check_registry(reg: &Registry) -> Result<()> {
    let mut errs = Errors::default();
    let buses = known(reg.buses.keys());
    let unknown_mode = |m: &String, at: &Location| Error::Unknown {
        at: at.clone(),
        what: "bus mode",
        name: m.clone(),
        known: buses.as_str().into(),
    };
    for s in reg.servers.values() {
        for slot in &s.slots {
            for (i, m) in slot.modes.iter().enumerate() {
                if !reg.buses.contains_key(m) {
                    errs.push(unknown_mode(m, slot.modes_at.get(i).unwrap_or(&slot.at)));
                }
            }
        }
    }
    for a in reg.adapters.values() {
        for (i, m) in a.modes.iter().enumerate() {
            if !reg.buses.contains_key(m) {
                errs.push(unknown_mode(m, a.modes_at.get(i).unwrap_or(&a.at)));
            }
        }
        if let Some(b) = &a.bridge {
            if !reg.buses.contains_key(&b.secondary_mode) {
                errs.push(unknown_mode(&b.secondary_mode, &b.secondary_mode_at));
            }
        }
        for f in &a.functions {
            let Some(link_name) = &f.link else {
                continue;
            };
            let Some(link) = reg.links.get(link_name) else {
                errs.push(Error::Unknown {
                    at: f.at.clone(),
                    what: "link",
                    name: link_name.clone(),
                    known: known(reg.links.keys()).into(),
                });
                continue;
            };
            if !f.engine.drives(link.framing) {
                errs.push(Error::Invalid {
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
        check_cpu_costs(reg, s, &mut errs);
        let Some(sp) = errs.take(schema::ServerParams::from_set(&s.params, &s.at)) else {
            continue;
        };
        // Ropes need their rate and header; a server of converters alone
        // needs neither.
        let roped = s.slots.iter().any(|slot| slot.ropes > 0);
        for (key, v) in [
            ("rope_bandwidth", sp.rope_bandwidth),
            ("rope_packet_overhead", sp.rope_packet_overhead),
        ] {
            if roped && v.is_none() {
                errs.push(Error::Invalid {
                    at: s.at.clone(),
                    message: format!("`{key}` is missing: a slot of the server has ropes"),
                });
            }
        }
        // A server of several cells must say how far the other cells are.
        if sp.cells_max > 1.0 {
            for (key, v) in [
                ("memory_remote_latency", sp.memory_remote_latency),
                ("cpu_remote_memory_latency", sp.cpu_remote_memory_latency),
            ] {
                if v.is_none() {
                    errs.push(Error::Invalid {
                        at: s.at.clone(),
                        message: format!(
                            "`{key}` is missing: a server of up to {} cells has remote memory",
                            readable(sp.cells_max)
                        ),
                    });
                }
            }
        }
        let local = sp.memory_local_latency;
        let Some(remote) = sp.memory_remote_latency else {
            continue;
        };
        if remote < local {
            let at = s
                .params
                .map
                .get("memory_remote_latency")
                .map(|p| p.at.clone())
                .unwrap_or_else(|| s.at.clone());
            errs.push(Error::Invalid {
                at,
                message: format!(
                    "remote memory latency {} ns is below local {} ns",
                    readable(remote),
                    readable(local)
                ),
            });
        }
    }
    errs.finish(())
}

/// `a`, `a or b`, `a, b or c`: a list of alternatives in words.
fn one_of(names: &[String]) -> String {
    match names.split_last() {
        None => "(none)".into(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_text_is_parsed_as_a_lone_models_file() {
        let (path, text) = bundled_files("models/buses/pcix66.toml")[0];
        let renamed = text.replacen("name = \"pcix66\"", "name = \"fuzz-bus\"", 1);
        let base = load_registry(&[]).expect("bundled models");
        let reg = parse_model(PathBuf::from(path), &renamed, &base).expect("a valid model");
        assert!(reg.buses.contains_key("fuzz-bus") && reg.buses.contains_key("pcix66"));
        let err = parse_model(PathBuf::from("x.toml"), "kind = \"bus\"\nname = 1\n", &base)
            .expect_err("not a bus");
        assert!(err.to_string().starts_with("x.toml:2:"), "{err}");
    }
}
