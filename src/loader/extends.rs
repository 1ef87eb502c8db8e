//! `extends = "NAME"`: a server or adapter that takes every parameter of
//! another of its kind (the values in use, a fit's included), overriding
//! only what its own file states.
//!
//! Each model file is read alone first (a file that extends another need
//! not state every parameter); once every file of a load is read, each
//! such model takes its parent's values, parents first. A value taken so
//! keeps its source and the place it is written, and names the parameter
//! set it comes from ([`crate::model::ParamValue::inherited`]), so that a
//! fit of the parent reaches it ([`Registry::set_param`]) and `params` and
//! `show` can say so. A server whose CPU differs from its parent's takes
//! its CPU costs through `costs_from`, scaled by the two CPUs' ratings.

use toml::Spanned;

use super::input::{known, Source};
use super::params::check_name;
use crate::error::{Error, Errors, Location, Result};
use crate::model::schema::SCALED_COSTS;
use crate::model::{AdapterSpec, FunctionSpec, ParamSet, Registry, ServerSpec};

/// The model named by a file's `extends` key, with where it is written.
pub(crate) fn extends_of(
    src: &Source,
    v: &Option<Spanned<String>>,
) -> Result<Option<(String, Location)>> {
    let Some(n) = v else {
        return Ok(None);
    };
    let name = check_name(src, "extends", n)?;
    Ok(Some((name, src.at("extends", n.span()))))
}

/// Merges every model that extends another and is not merged yet with
/// its parent, parents first. An unknown parent and a cycle of `extends`
/// are errors at the `extends` key; every one is reported.
pub(crate) fn resolve_extends(reg: &mut Registry) -> Result<()> {
    let mut errs = Errors::default();
    resolve_servers(reg, &mut errs);
    resolve_adapters(reg, &mut errs);
    errs.finish(())
}

/// The chain `a -> b -> ... -> a` that `start` begins, following `parent`.
fn cycle(start: &str, parent: impl Fn(&str) -> Option<String>) -> String {
    let mut chain = vec![start.to_string()];
    let mut at = start.to_string();
    while let Some(p) = parent(&at) {
        let seen = chain.contains(&p);
        chain.push(p.clone());
        if seen || chain.len() > 64 {
            break;
        }
        at = p;
    }
    chain.join(" -> ")
}

fn resolve_servers(reg: &mut Registry, errs: &mut Errors) {
    loop {
        let pending: Vec<String> = reg
            .servers
            .values()
            .filter(|s| s.extends.as_ref().is_some_and(|e| !e.resolved))
            .map(|s| s.name.clone())
            .collect();
        if pending.is_empty() {
            return;
        }
        let mut progress = false;
        for name in &pending {
            let Some(ext) = reg.servers.get(name).and_then(|s| s.extends.clone()) else {
                continue;
            };
            let parent = match reg.servers.get(&ext.name) {
                None => {
                    errs.push(Error::Unknown {
                        at: ext.at.clone(),
                        what: "server",
                        name: ext.name.clone(),
                        known: known(reg.servers.keys()).into(),
                    });
                    None
                }
                Some(p) if p.extends.as_ref().is_some_and(|e| !e.resolved) => continue,
                Some(p) => Some(p.clone()),
            };
            progress = true;
            if let Some(child) = reg.servers.get_mut(name) {
                if let Some(parent) = parent {
                    merge_server(child, &parent);
                }
                if let Some(e) = child.extends.as_mut() {
                    e.resolved = true;
                }
            }
        }
        if !progress {
            for name in &pending {
                let Some(ext) = reg.servers.get(name).and_then(|s| s.extends.clone()) else {
                    continue;
                };
                let chain = cycle(name, |n| {
                    reg.servers
                        .get(n)
                        .and_then(|s| s.extends.as_ref().map(|e| e.name.clone()))
                });
                errs.push(Error::Invalid {
                    at: ext.at,
                    message: format!(
                        "`extends` makes a cycle ({chain}): a model cannot take its values from itself"
                    ),
                });
            }
            for name in &pending {
                if let Some(e) = reg.servers.get_mut(name).and_then(|s| s.extends.as_mut()) {
                    e.resolved = true;
                }
            }
            return;
        }
    }
}

fn resolve_adapters(reg: &mut Registry, errs: &mut Errors) {
    loop {
        let pending: Vec<String> = reg
            .adapters
            .values()
            .filter(|a| a.extends.as_ref().is_some_and(|e| !e.resolved))
            .map(|a| a.name.clone())
            .collect();
        if pending.is_empty() {
            return;
        }
        let mut progress = false;
        for name in &pending {
            let Some(ext) = reg.adapters.get(name).and_then(|a| a.extends.clone()) else {
                continue;
            };
            let parent = match reg.adapters.get(&ext.name) {
                None => {
                    errs.push(Error::Unknown {
                        at: ext.at.clone(),
                        what: "adapter",
                        name: ext.name.clone(),
                        known: known(reg.adapters.keys()).into(),
                    });
                    None
                }
                Some(p) if p.extends.as_ref().is_some_and(|e| !e.resolved) => continue,
                Some(p) => Some(p.clone()),
            };
            progress = true;
            if let Some(child) = reg.adapters.get_mut(name) {
                if let Some(parent) = parent {
                    merge_adapter(child, &parent, errs);
                }
                if let Some(e) = child.extends.as_mut() {
                    e.resolved = true;
                }
            }
        }
        if !progress {
            for name in &pending {
                let Some(ext) = reg.adapters.get(name).and_then(|a| a.extends.clone()) else {
                    continue;
                };
                let chain = cycle(name, |n| {
                    reg.adapters
                        .get(n)
                        .and_then(|a| a.extends.as_ref().map(|e| e.name.clone()))
                });
                errs.push(Error::Invalid {
                    at: ext.at,
                    message: format!(
                        "`extends` makes a cycle ({chain}): a model cannot take its values from itself"
                    ),
                });
            }
            for name in &pending {
                if let Some(e) = reg.adapters.get_mut(name).and_then(|a| a.extends.as_mut()) {
                    e.resolved = true;
                }
            }
            return;
        }
    }
}

/// Copies into `child` every parameter of `parent` it does not state and
/// `skip` does not exclude, each marked as taken from `from` (or from
/// wherever the parent took it).
fn inherit(child: &mut ParamSet, parent: &ParamSet, from: &str, skip: impl Fn(&str) -> bool) {
    for (k, v) in &parent.map {
        if skip(k) || child.map.contains_key(k) {
            continue;
        }
        let mut v = v.clone();
        v.inherited = Some(v.inherited.clone().unwrap_or_else(|| from.to_string()));
        child.map.insert(k.clone(), v);
    }
}

/// `set` with every parameter marked as taken from `from`.
fn marked(set: &ParamSet, from: &str) -> ParamSet {
    let mut out = ParamSet::default();
    inherit(&mut out, set, from, |_| false);
    out
}

/// A server takes its parent's CPU model, cost source, parameters, bridge
/// and (unless it states its own) I/O tree. When it names another CPU, it
/// takes no CPU cost by copy: its costs are the parent's (or the server
/// the parent takes them from) scaled by the two CPUs' ratings.
fn merge_server(child: &mut ServerSpec, parent: &ServerSpec) {
    let Some(ext) = child.extends.clone() else {
        return;
    };
    let from = format!("server.{}", parent.name);
    let cpu_changes = match (&child.cpu, &parent.cpu) {
        (Some((mine, _)), Some((theirs, _))) => mine != theirs,
        (Some(_), None) => true,
        _ => false,
    };
    if child.cpu.is_none() {
        child.cpu = parent.cpu.clone();
    }
    if child.costs_from.is_none() {
        child.costs_from = match &parent.costs_from {
            Some(c) => Some(c.clone()),
            None if cpu_changes => Some((parent.name.clone(), ext.at.clone())),
            None => None,
        };
    }
    let scaled = child.costs_from.is_some();
    inherit(&mut child.params, &parent.params, &from, |k| {
        scaled && cpu_changes && SCALED_COSTS.contains(&k)
    });
    inherit(
        &mut child.bridge,
        &parent.bridge,
        &format!("{from}.bridge"),
        |_| false,
    );
    if !ext.own.io_tree {
        child.io_controllers = parent
            .io_controllers
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.params = marked(&c.params, &format!("{from}.controller.{}", c.name));
                c
            })
            .collect();
        child.slots = parent.slots.clone();
    }
}

/// An adapter takes its parent's modes and bridge unless it states its
/// own, and its functions: a function of a parent function's name keeps
/// that function's engine and takes its link and every parameter it does
/// not state; a function of a new name states everything.
fn merge_adapter(child: &mut AdapterSpec, parent: &AdapterSpec, errs: &mut Errors) {
    let Some(ext) = child.extends.clone() else {
        return;
    };
    let from = format!("adapter.{}", parent.name);
    if !ext.own.modes {
        child.modes = parent.modes.clone();
        child.modes_at = parent.modes_at.clone();
    }
    if !ext.own.bridge {
        child.bridge = parent.bridge.clone().map(|mut b| {
            b.secondary = marked(&b.secondary, &format!("{from}.bridge.secondary"));
            b.primary = marked(&b.primary, &format!("{from}.bridge.primary"));
            b
        });
    }
    let own = std::mem::take(&mut child.functions);
    let mut functions: Vec<FunctionSpec> = parent
        .functions
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.params = marked(&f.params, &format!("{from}.{}", f.name));
            f
        })
        .collect();
    for mut f in own {
        match functions.iter_mut().find(|p| p.name == f.name) {
            Some(p) => {
                if p.engine != f.engine {
                    errs.push(Error::Invalid {
                        at: f.at.clone(),
                        message: format!(
                            "function `{}` of adapter `{}` runs engine `{}`; a function of the same name in an adapter that extends it keeps its engine",
                            f.name,
                            parent.name,
                            p.engine.name()
                        ),
                    });
                    continue;
                }
                if f.link.is_none() {
                    f.link = p.link.clone();
                }
                inherit(&mut f.params, &p.params, "", |_| false);
                *p = f;
            }
            None => {
                for rule in f.engine.rules() {
                    if rule.absent.is_none() && !f.params.map.contains_key(rule.key) {
                        errs.push(Error::Invalid {
                            at: f.at.clone(),
                            message: format!(
                                "missing parameter `{}` of function `{}` ({}, {}): adapter `{}` has no function of that name to take it from",
                                rule.key, f.name, rule.meaning, rule.dim, parent.name
                            ),
                        });
                    }
                }
                if f.link.is_none() && f.engine.drives_a_link() {
                    errs.push(Error::Invalid {
                        at: f.at.clone(),
                        message: format!(
                            "missing `link`: a `{}` function drives a link, and adapter `{}` has no function `{}` to take it from",
                            f.engine.name(),
                            parent.name,
                            f.name
                        ),
                    });
                }
                functions.push(f);
            }
        }
    }
    child.functions = functions;
}
