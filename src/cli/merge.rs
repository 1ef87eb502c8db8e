//! `iosim merge PART...`: joins the part files of a run split with
//! `--shard I/N` into the output the unsharded run gives, byte for byte
//! (same flags, same seed), in the format asked for. The parts are checked
//! first, whatever the command ([`iosim::loader::open_parts`]: one run,
//! every part once, none cut short); then a sweep's rows are rendered as
//! they stand, and a cross-validation's or a placement's report is built
//! from what its parts found by the command's own code
//! ([`super::cross_validate::merge`], [`super::place::merge`]).

use std::path::PathBuf;

use iosim::Error;

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
    /// With the parts of `validate --cross-validate`: also write the
    /// structural spread by mechanism family it measured to FILE, as its
    /// `--spread-out FILE` does.
    #[arg(long, value_name = "FILE")]
    pub spread_out: Option<PathBuf>,
    /// With --spread-out: replace FILE if it exists (a regular file only).
    #[arg(long, requires = "spread_out")]
    pub force_spread: bool,
    /// With the parts of `place`: threads for what the merge runs again,
    /// 1 to 256 (the search's alone runs and the best placement's
    /// parameter moves; the results do not depend on it).
    #[arg(long, default_value_t = 2, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=iosim::app::MAX_THREADS as u64))]
    pub threads: usize,
}

/// `iosim merge`.
pub fn execute(a: Args) -> iosim::Result<String> {
    let (head, mut parts) = iosim::loader::open_parts(&a.parts)?;
    let format = match (a.format, a.wide) {
        (FormatArg::Table, true) => iosim::report::Format::Wide,
        (f, _) => f.into(),
    };
    let cross_validation = head.command == super::cross_validate::COMMAND;
    if a.spread_out.is_some() && !cross_validation {
        return Err(Error::Usage(
            "merge --spread-out: only the parts of `validate --cross-validate` measure a spread"
                .into(),
        ));
    }
    if cross_validation {
        let inputs: Vec<&std::path::Path> = a.parts.iter().map(PathBuf::as_path).collect();
        let spread_out = a
            .spread_out
            .as_deref()
            .map(|p| iosim::report::Output::file(p, a.force_spread, &inputs))
            .transpose()?;
        return super::cross_validate::merge(&head, &mut parts, format, spread_out.as_ref());
    }
    if super::place::is_place_part(&head) {
        let runner = iosim::app::Runner::new(a.threads)?;
        return super::place::merge(&head, &mut parts, format, &runner);
    }
    super::stream_out(&head, &mut parts, format)?;
    Ok(String::new())
}
