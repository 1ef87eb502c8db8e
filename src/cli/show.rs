//! `iosim show server NAME`: a server's I/O tree, memory down to slots,
//! with each node's capacity, as an indented table, CSV, JSON or a
//! Graphviz digraph.

use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};

use iosim::report::{Format, Report};
use iosim::sections::{server_tree_dot, server_tree_section};

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
        /// Extra directory of model files; repeatable.
        #[arg(long = "models", value_name = "DIR")]
        models: Vec<PathBuf>,
        /// Fitted parameters written by `iosim calibrate`, instead of the bundled fit.
        #[arg(long = "params", value_name = "FILE", conflicts_with = "hand_set")]
        params: Option<PathBuf>,
        /// Use the model files' own values of the free parameters, without the bundled fit.
        #[arg(long = "hand-set")]
        hand_set: bool,
        /// Output format: an indented tree, CSV, JSON or a Graphviz digraph.
        #[arg(long, value_enum, default_value = "table")]
        format: ShowFormat,
    },
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
    let ShowCmd::Server {
        name,
        models,
        params,
        hand_set,
        format,
    } = a.which;
    let (reg, parameters) = super::registry(&models, params.as_ref(), hand_set)?;
    let server = iosim::show::find_server(&reg, name.as_deref())?;
    let tree = iosim::show::server_tree(&reg, server)?;
    let format = match format {
        ShowFormat::Dot => return Ok(server_tree_dot(&tree)),
        ShowFormat::Table => Format::Table,
        ShowFormat::Csv => Format::Csv,
        ShowFormat::Json => Format::Json,
    };
    let rep = Report {
        command: format!("show server {}", tree.server),
        meta: vec![("parameters".into(), parameters)],
        sections: vec![server_tree_section(&tree, format == Format::Table)],
        ..Default::default()
    };
    Ok(rep.render(format))
}
