//! `iosim show server NAME`: a server's I/O tree, memory down to slots,
//! with each node's capacity, as an indented table, CSV, JSON or a
//! Graphviz digraph.

use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};

use iosim::report::{escape_control, Cell, Format, Report, Section};
use iosim::show::{NodeKind, ServerTree};
use iosim::units::BytesPerSec;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub which: ShowCmd,
}

#[derive(Subcommand)]
pub enum ShowCmd {
    /// A server's I/O tree, memory down to slots, with each node's capacity.
    Server {
        /// The server (without one, the known servers are listed).
        name: Option<String>,
        #[command(flatten)]
        from: Registry,
        /// Output format: an indented tree, CSV, JSON or a Graphviz digraph.
        #[arg(long, value_enum, default_value = "table")]
        format: ShowFormat,
    },
    /// An adapter: its bus modes, functions (engine, link), on-card bridge
    /// and every parameter with its unit and source.
    Adapter(ModelArgs),
    /// A test bed (the far ends of the links): every parameter with its
    /// unit and source.
    Testbed(ModelArgs),
}

/// The models a `show` reads.
#[derive(clap::Args)]
pub struct Registry {
    /// Extra directory of model files; repeatable.
    #[arg(long = "models", value_name = "DIR")]
    models: Vec<PathBuf>,
    /// Fitted parameters written by `iosim calibrate`, instead of the bundled fit.
    #[arg(long = "params", value_name = "FILE", conflicts_with = "hand_set")]
    params: Option<PathBuf>,
    /// Use the model files' own values of the free parameters, without the bundled fit.
    #[arg(long = "hand-set")]
    hand_set: bool,
}

impl Registry {
    fn load(&self) -> iosim::Result<(iosim::model::Registry, String)> {
        super::registry(&self.models, self.params.as_ref(), self.hand_set)
    }
}

/// The flags of `show adapter` and `show testbed`.
#[derive(clap::Args)]
pub struct ModelArgs {
    /// Its name (without one, the known names are listed).
    name: Option<String>,
    #[command(flatten)]
    from: Registry,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: super::FormatArg,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ShowFormat {
    Table,
    Csv,
    Json,
    Dot,
}

/// `iosim show`.
pub fn execute(a: Args) -> iosim::Result<String> {
    let (name, from, format) = match a.which {
        ShowCmd::Server { name, from, format } => (name, from, format),
        ShowCmd::Adapter(m) => return show_model(m, true),
        ShowCmd::Testbed(m) => return show_model(m, false),
    };
    let (reg, parameters) = from.load()?;
    let server = iosim::show::find_server(&reg, name.as_deref())?;
    let tree = iosim::show::server_tree(&reg, server)?;
    let format = match format {
        ShowFormat::Dot => return Ok(server_tree_dot(&tree)),
        // The tree keeps one line per node, however wide.
        ShowFormat::Table => Format::Wide,
        ShowFormat::Csv => Format::Csv,
        ShowFormat::Json => Format::Json,
    };
    let mut meta = vec![("parameters".into(), parameters)];
    let mut sections = vec![server_tree_section(&tree, format == Format::Wide)];
    if let Some(e) = &server.extends {
        meta.push(("extends".into(), e.name.clone()));
        sections.push(inherited_section(server));
    }
    let rep = Report {
        command: format!("show server {}", tree.server),
        meta,
        sections,
        ..Default::default()
    };
    Ok(rep.render(format))
}

/// The values a server that `extends` another takes from it: each with
/// the parameter set it is written in and its basis there (spec, document,
/// assumed or fitted).
fn inherited_section(server: &iosim::model::ServerSpec) -> Section {
    let mut s = Section::new(
        "inherited",
        &["part", "parameter", "value", "unit", "from", "basis"],
    );
    let mut sets: Vec<(String, &iosim::model::ParamSet)> = vec![
        ("server".into(), &server.params),
        ("bridge".into(), &server.bridge),
    ];
    for c in &server.io_controllers {
        sets.push((format!("controller {}", c.name), &c.params));
    }
    for (part, set) in sets {
        for (k, v) in &set.map {
            let Some(from) = &v.inherited else { continue };
            s.rows.push(vec![
                Cell::Text(part.clone()),
                Cell::Text(k.clone()),
                Cell::Num(v.written, if v.written.fract() == 0.0 { 0 } else { 3 }),
                Cell::Text(v.unit.clone()),
                Cell::Text(format!("{from} ({}:{})", v.at.file.display(), v.at.line)),
                Cell::Text(v.source.clone()),
            ]);
        }
    }
    s
}

/// `iosim show adapter NAME` (`adapter`) or `iosim show testbed NAME`.
fn show_model(m: ModelArgs, adapter: bool) -> iosim::Result<String> {
    let (reg, parameters) = m.from.load()?;
    let what = if adapter { "adapter" } else { "test bed" };
    let known = if adapter {
        iosim::show::known_names(reg.adapters.keys())
    } else {
        iosim::show::known_names(reg.testbeds.keys())
    };
    let Some(name) = m.name else {
        return Err(iosim::Error::Usage(format!(
            "name a {what}: iosim show {} NAME; known: {known}",
            if adapter { "adapter" } else { "testbed" }
        )));
    };
    let unknown = || iosim::Error::Unknown {
        at: iosim::error::Location {
            file: "<command line>".into(),
            key: String::new(),
            line: 0,
            column: 0,
        },
        what: if adapter { "adapter" } else { "test bed" },
        name: name.clone(),
        known: known.clone().into(),
    };
    let mut meta: Vec<(String, String)> = vec![("parameters".into(), parameters)];
    let mut sets: Vec<(String, &iosim::model::ParamSet)> = Vec::new();
    let mut sections = Vec::new();
    let (description, file) = if adapter {
        let a = reg.adapters.get(&name).ok_or_else(unknown)?;
        if let Some(e) = &a.extends {
            meta.push(("extends".into(), e.name.clone()));
        }
        meta.push(("modes".into(), a.modes.join(", ")));
        let mut f = Section::new("functions", &["function", "engine", "link"]);
        for func in &a.functions {
            f.rows.push(vec![
                Cell::Text(func.name.clone()),
                Cell::Text(func.engine.name().to_string()),
                Cell::Text(func.link.clone().unwrap_or_else(|| "(none)".into())),
            ]);
            sets.push((func.name.clone(), &func.params));
        }
        if let Some(b) = &a.bridge {
            meta.push((
                "bridge".into(),
                format!(
                    "an on-card PCI-to-PCI bridge; secondary bus {}",
                    b.secondary_mode
                ),
            ));
            sets.push(("bridge (secondary)".into(), &b.secondary));
            sets.push(("bridge (primary)".into(), &b.primary));
        }
        sections.push(f);
        (a.description.clone(), a.at.file.display().to_string())
    } else {
        let t = reg.testbeds.get(&name).ok_or_else(unknown)?;
        sets.push(("testbed".into(), &t.params));
        (t.description.clone(), t.at.file.display().to_string())
    };
    meta.push((
        "description".into(),
        description.split_whitespace().collect::<Vec<_>>().join(" "),
    ));
    meta.push((
        "calibration".into(),
        iosim::show::status(sets.iter().map(|x| x.1)),
    ));
    meta.push(("file".into(), file));
    let mut p = Section::new(
        "parameters",
        &["part", "parameter", "value", "unit", "source"],
    );
    for (part, set) in &sets {
        for (k, v) in &set.map {
            p.rows.push(vec![
                Cell::Text(part.clone()),
                Cell::Text(k.clone()),
                Cell::Num(v.written, if v.written.fract() == 0.0 { 0 } else { 3 }),
                Cell::Text(v.unit.clone()),
                Cell::Text(v.basis()),
            ]);
        }
    }
    sections.push(p);
    let rep = Report {
        command: format!(
            "show {} {name}",
            if adapter { "adapter" } else { "testbed" }
        ),
        meta,
        sections,
        ..Default::default()
    };
    Ok(rep.render(m.format.into()))
}

/// A node's facts in words: what the capacity column leaves out.
fn node_detail(tree: &ServerTree, i: usize, children: &[usize]) -> String {
    match &tree.nodes[i].kind {
        NodeKind::Memory {
            cells_max,
            cpus_per_cell,
            local_ns,
            remote_ns,
            cpu,
        } => match remote_ns {
            Some(remote_ns) => format!(
                "1 to {cells_max} cells x {cpus_per_cell} CPUs per cell; memory latency {local_ns} ns local, {remote_ns} ns remote; {cpu}"
            ),
            None => format!(
                "one memory, {cpus_per_cell} CPUs; memory latency {local_ns} ns; {cpu}"
            ),
        },
        NodeKind::IoController {
            packet_overhead,
            both_ways_mb_s,
            chassis,
        } => {
            let owner = match chassis {
                Some((k, Some(c))) => format!(
                    "; chassis {k}, on cell {c} (a partition of {} or more cells owns it)",
                    c + 1
                ),
                Some((k, None)) => format!("; chassis {k}"),
                None => String::new(),
            };
            let both = match both_ways_mb_s {
                Some(b) => format!(", {b:.0} MB/s both ways together"),
                None => String::new(),
            };
            format!(
                "link to memory, each way{both}; {packet_overhead} bytes overhead per packet{owner}"
            )
        }
        NodeKind::Segment {
            shared,
            mode,
            bridge,
        } => {
            let slots = children[i];
            let on = match shared {
                Some(_) => format!("bus shared by {slots} slots"),
                None => "the slot's own bus".to_string(),
            };
            let mode = mode.as_deref().unwrap_or("no mode common to its slots");
            format!(
                "{on}, {mode}; bridge: {} bytes posted-write buffer, {} delayed-read slots of {} bytes, retry after {} ns",
                bridge.posted_write_buffer,
                bridge.delayed_read_slots,
                bridge.delayed_read_prefetch,
                bridge.retry_interval
            )
        }
        NodeKind::Slot {
            modes,
            ropes: 0,
            ..
        } => format!(
            "modes {}; no ropes: its bus converter sits on the I/O controller above",
            modes.join(" ")
        ),
        NodeKind::Slot {
            modes,
            ropes,
            rope_capacity,
        } => format!(
            "modes {}; {ropes} rope{}, {:.0} MB/s each way",
            modes.join(" "),
            if *ropes == 1 { "" } else { "s" },
            rope_capacity.mb_s()
        ),
    }
}

/// How many children each node of `tree` has, counted in one pass.
fn child_counts(tree: &ServerTree) -> Vec<usize> {
    let mut n = vec![0; tree.nodes.len()];
    for p in tree.nodes.iter().filter_map(|c| c.parent) {
        n[p] += 1;
    }
    n
}

/// A server's I/O tree, one row per node, parents first: node, kind, parent,
/// capacity and detail. With `indent`, each node's name is indented two
/// spaces per level (the text tree).
fn server_tree_section(tree: &ServerTree, indent: bool) -> Section {
    let mut s = Section::new(
        "server_tree",
        &["node", "kind", "parent", "capacity_MB_s", "detail"],
    );
    let children = child_counts(tree);
    for (i, n) in tree.nodes.iter().enumerate() {
        let pad = if indent {
            "  ".repeat(n.depth)
        } else {
            String::new()
        };
        s.rows.push(vec![
            Cell::Text(format!("{pad}{}", n.id)),
            Cell::Text(n.kind.name().into()),
            Cell::Text(
                n.parent
                    .map_or_else(String::new, |p| tree.nodes[p].id.clone()),
            ),
            Cell::Num(n.capacity.map_or(f64::NAN, BytesPerSec::mb_s), 0),
            Cell::Text(node_detail(tree, i, &children)),
        ]);
    }
    s
}

/// `s` as the inside of a Graphviz quoted string: control characters
/// written as escapes (as in the table), then backslashes and quotes escaped.
fn dot_quote(s: &str) -> String {
    escape_control(s).replace('\\', "\\\\").replace('"', "\\\"")
}

/// A server's I/O tree as a Graphviz digraph: memory at the top, an edge
/// from each node to each node under it, each node labelled with its name,
/// capacity and detail.
fn server_tree_dot(tree: &ServerTree) -> String {
    let mut out = format!(
        "digraph \"{}\" {{\n  node [shape=box];\n",
        dot_quote(&tree.server)
    );
    let children = child_counts(tree);
    for (i, n) in tree.nodes.iter().enumerate() {
        let capacity = n
            .capacity
            .map_or_else(String::new, |c| format!("\\n{:.0} MB/s", c.mb_s()));
        out.push_str(&format!(
            "  \"{}\" [label=\"{}{capacity}\\n{}\"];\n",
            dot_quote(&n.id),
            dot_quote(&n.id),
            dot_quote(&node_detail(tree, i, &children))
        ));
    }
    for n in &tree.nodes {
        if let Some(p) = n.parent {
            out.push_str(&format!(
                "  \"{}\" -> \"{}\";\n",
                dot_quote(&tree.nodes[p].id),
                dot_quote(&n.id)
            ));
        }
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosim::show::Node;

    #[test]
    fn dot_names_are_escaped() {
        let tree = ServerTree {
            server: "a\"b\\c".into(),
            nodes: vec![Node {
                id: "x\"\\\n\x1b".into(),
                parent: None,
                depth: 0,
                capacity: Some(BytesPerSec(1e6)),
                kind: NodeKind::IoController {
                    packet_overhead: 8,
                    both_ways_mb_s: None,
                    chassis: None,
                },
            }],
        };
        let dot = server_tree_dot(&tree);
        assert!(dot.starts_with("digraph \"a\\\"b\\\\c\" {\n"), "{dot}");
        assert!(
            dot.contains("  \"x\\\"\\\\\\\\x0a\\\\x1b\" [label="),
            "{dot}"
        );
        assert!(!dot.contains('\x1b') && dot.lines().count() == 4, "{dot}");
    }
}
