//! The binary's commands, one file each: its flags (a clap `Args`), the
//! library calls it makes and the report it prints. This file holds what
//! they share: the common flags, the registry they choose, the flag value
//! parsers, and the two ways out (`emit` for the output, `diag` for
//! diagnostics).

use std::io::Write as _;
use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;
use clap::ValueEnum;

use iosim::loader::load_registry;
use iosim::model::Registry;
use iosim::report::{self, Format};
use iosim::Error;

pub mod bench;
pub mod calibrate;
pub mod cross_validate;
mod fit;
pub mod list;
pub mod merge;
pub mod params;
pub mod place;
pub mod plot;
pub mod report_cmd;
pub mod run;
pub mod show;
pub mod sweep;
pub mod validate;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Table,
    Csv,
    Json,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Table => Format::Table,
            FormatArg::Csv => Format::Csv,
            FormatArg::Json => Format::Json,
        }
    }
}

#[derive(clap::Args)]
pub struct Common {
    /// Seed of every random stream (recorded in the output).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    /// With the table format: each row on one line however wide (by
    /// default lines fit 160 characters, long text under its row).
    #[arg(long)]
    pub wide: bool,
    /// Extra directory of model files (servers, adapters, buses, links, testbeds); repeatable.
    #[arg(long = "models", value_name = "DIR")]
    pub models: Vec<PathBuf>,
    /// Threads used to run experiments in parallel, 1 to 256 (results do not depend on it).
    #[arg(long, default_value_t = 2, value_parser = RangedU64ValueParser::<usize>::new().range(1..=iosim::app::MAX_THREADS as u64))]
    pub threads: usize,
    /// Fitted parameters written by `iosim calibrate`, applied over the models
    /// instead of the bundled fit (models/fitted.toml).
    #[arg(long = "params", value_name = "FILE", conflicts_with = "hand_set")]
    pub params: Option<PathBuf>,
    /// Use the model files' own values of the free parameters (the guesses
    /// made before the fit), without the bundled fit.
    #[arg(long = "hand-set")]
    pub hand_set: bool,
    /// Structural spread by mechanism family written by `iosim validate
    /// --cross-validate --spread-out FILE`, used for the prediction
    /// intervals instead of the bundled one (models/spread.toml).
    #[arg(long = "spread", value_name = "FILE")]
    pub spread: Option<PathBuf>,
}

impl Common {
    /// The output format the flags ask for (`--format`, `--wide`).
    pub fn out_format(&self) -> Format {
        match (self.format, self.wide) {
            (FormatArg::Table, true) => Format::Wide,
            (f, _) => f.into(),
        }
    }

    /// The bundled models, those of `--models`, then the fitted values:
    /// `--params FILE`, or the bundled fit unless `--hand-set`. Also returns
    /// which values of the free parameters the run uses (recorded in every
    /// output). When a `--models` file replaced a model the bundled fit
    /// covers, and still calls some of its values fitted, those keep the
    /// file's values (its guesses): the label says so, and so does a warning.
    pub fn registry(&self) -> iosim::Result<(Registry, String)> {
        let (mut reg, label) = registry(&self.models, self.params.as_ref(), self.hand_set)?;
        if let Some(p) = &self.spread {
            reg.spread = iosim::loader::load_spread(p)?;
        }
        Ok((reg, label))
    }
}

/// The registry of [`Common::registry`], from the flags that choose it.
pub fn registry(
    models: &[PathBuf],
    params: Option<&PathBuf>,
    hand_set: bool,
) -> iosim::Result<(Registry, String)> {
    let mut reg = load_registry(models)?;
    let label = if let Some(p) = params {
        iosim::loader::apply_fitted(p, &mut reg)?;
        p.display().to_string()
    } else if hand_set {
        "model files (--hand-set: no fit applied)".into()
    } else {
        match iosim::loader::apply_bundled_fitted(&mut reg)? {
            None => "model files".into(),
            Some(fit) if fit.kept.is_empty() => fit.name,
            Some(fit) => {
                let kept = fit.kept.join(", ");
                diag(&format!(
                        "warning: {} fitted parameters of models replaced by --models keep that file's values (its guesses, not the bundled fit): {kept}; pass --params with a fit file to apply one",
                        fit.kept.len()
                    ));
                format!("{} except {kept} (from --models files)", fit.name)
            }
        }
    };
    Ok((reg, label))
}

/// `--precision`: a finite percent above zero.
pub fn positive_percent(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err("expected a positive percent, such as 2 or 0.5".into()),
    }
}

/// `--max-wall-seconds`: a finite number of seconds above zero.
pub fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err("expected a positive number of seconds, such as 600 or 0.5".into()),
    }
}

/// `--min-mb-s`: a finite throughput above zero, at most 10^6 MB/s.
pub fn positive_mb_s(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1e6 => Ok(v),
        _ => Err("expected a throughput in MB/s above 0 and at most 1e6, such as 150".into()),
    }
}

/// `--shard I/N`: part I of N, 1 <= I <= N <= 1,000,000.
pub fn shard(s: &str) -> Result<(u64, u64), String> {
    let bad = || {
        format!("`{s}`: expected I/N, part I of N equal parts, 1 <= I <= N <= 1000000 (e.g. 2/4)")
    };
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || i > n || n > 1_000_000 {
        return Err(bad());
    }
    Ok((i, n))
}

/// The error of a failed write to standard output.
pub fn stdout_error(source: std::io::Error) -> iosim::Error {
    iosim::Error::Write {
        path: "<standard output>".into(),
        source,
    }
}

/// A shard's part on standard output: the header `head`, what `body`
/// writes through the part writer, and the end line.
pub fn part_to_stdout(
    head: &iosim::part::PartHead,
    body: impl FnOnce(
        &mut iosim::part::PartWriter<std::io::BufWriter<std::io::StdoutLock<'static>>>,
    ) -> iosim::Result<()>,
) -> iosim::Result<()> {
    let stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let mut w = iosim::part::PartWriter::new(stdout, head).map_err(stdout_error)?;
    body(&mut w)?;
    w.finish().map_err(stdout_error)?;
    Ok(())
}

/// Renders a streamed report ([`iosim::part::render`]) to standard output;
/// a reader that went away ends it quietly, as [`emit`] does.
pub fn stream_out(
    head: &iosim::part::PartHead,
    records: &mut dyn iosim::part::Records,
    format: Format,
) -> iosim::Result<()> {
    let mut out = std::io::stdout().lock();
    match iosim::part::render(head, records, format, &mut out) {
        Err(Error::Write { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(())
        }
        Err(e) => Err(e),
        Ok(()) => match out.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Err(source) => Err(Error::Write {
                path: PathBuf::from("<standard output>"),
                source,
            }),
            Ok(()) => Ok(()),
        },
    }
}

/// Writes the command's output to standard output. A reader that went away
/// (a closed pipe, as in `iosim params | head -1`) ends the run quietly with
/// exit code 0: the reader has what it wanted. Any other failure (a full
/// disk) is an [`Error::Write`], exit code 1.
pub fn emit(text: &str) -> iosim::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(source) => Err(Error::Write {
            path: PathBuf::from("<standard output>"),
            source,
        }),
    }
}

/// Writes one diagnostic line to standard error. A standard error that cannot
/// be written (closed, full) is ignored: there is nowhere left to say so.
/// Control characters (from input files) are escaped.
pub fn diag(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", report::escape_control(line));
}

/// The `--html FILE` output of a command reading `input`, checked before
/// any work (never over an input, `force` to replace); `force` given with
/// neither it nor another output (`other`) is a usage error.
pub fn html_output(
    html: Option<&std::path::Path>,
    force: bool,
    other: bool,
    common: &Common,
    input: &std::path::Path,
) -> iosim::Result<Option<iosim::report::Output>> {
    if force && html.is_none() && !other {
        return Err(iosim::Error::Usage(
            "--force replaces an output: give it with the output it is for".into(),
        ));
    }
    let inputs: Vec<&std::path::Path> = [Some(input), common.params.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    html.map(|f| iosim::report::Output::file(f, force, &inputs))
        .transpose()
}
