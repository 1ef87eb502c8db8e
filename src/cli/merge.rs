//! `iosim merge PART...`: joins the part files of a run split with
//! `--shard I/N` into the output the unsharded run gives, byte for byte
//! (same flags, same seed), in the format asked for.

use std::path::PathBuf;

use super::FormatArg;

#[derive(clap::Args)]
pub struct Args {
    /// The part files, in any order: every part of one run, once each.
    #[arg(value_name = "PART", required = true)]
    pub parts: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    /// With the table format: each row on one line however wide.
    #[arg(long)]
    pub wide: bool,
}

/// `iosim merge`.
pub fn execute(a: Args) -> iosim::Result<String> {
    let (head, mut parts) = iosim::loader::open_parts(&a.parts)?;
    let format = match (a.format, a.wide) {
        (FormatArg::Table, true) => iosim::report::Format::Wide,
        (f, _) => f.into(),
    };
    super::stream_out(&head, &mut parts, format)?;
    Ok(String::new())
}
