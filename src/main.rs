//! The `iosim` command line: parses the flags, hands the command to its
//! file under `cli/` with the [`Runner`] its simulations run in, writes the
//! output and maps an error to an exit code.
//! Exit codes: 0 success (also when standard output is a pipe whose reader
//! closed it), 1 bad input (file, key and line in the message) or a file or
//! standard output that cannot be written, 2 bad usage, 3 a simulation hit its
//! event bound, 4 an internal defect, 5 the wall-clock bound passed.

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};

use iosim::app::Runner;
use iosim::Error;

mod cli;

use cli::diag;

#[derive(Parser)]
#[command(
    name = "iosim",
    version,
    about = "Simulate server I/O subsystems and compare with published figures"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run every bundled scenario and print model beside paper for each published figure.
    Validate(cli::validate::Args),
    /// Fit the free parameters of a calibration file to every bundled published figure.
    Calibrate(cli::calibrate::Args),
    /// Run one scenario file (any path) and print throughput, utilisations and bottleneck.
    Run(cli::run::Args),
    /// What-if sweep: run one scenario at every value of one or two varied
    /// quantities and report every metric at each point.
    Sweep(cli::sweep::Args),
    /// Join the part files of a run split with `--shard I/N` into the
    /// output one unsharded run gives, byte for byte.
    Merge(cli::merge::Args),
    /// Redraw every paper figure and table with published numbers (paper beside
    /// model), the calibration residuals and, given a file, the
    /// cross-validation: SVG and PNG into DIR, named by figure.
    Plot(cli::plot::Args),
    /// Write one self-contained HTML file: inputs, parameters and sources,
    /// every redrawn figure, the validation and calibration (and, given a
    /// file, cross-validation) tables, version and seed.
    Report(cli::report_cmd::Args),
    /// Slot placement advice: where to put a request's cards for the best
    /// predicted throughput (see README, "Slot placement").
    Place(cli::place::Args),
    /// List the bundled and given models, their parameters and sources.
    Params(cli::params::Args),
    /// Print a model's structure: a server's I/O tree, an adapter's
    /// functions, a test bed, each with its parameters' sources.
    Show(cli::show::Args),
    /// List the models of a kind (servers, adapters, testbeds, links,
    /// buses, cpus): a line of description, calibration status, source file.
    List(cli::list::Args),
    /// Engine benchmarks.
    Bench(cli::bench::Args),
}

impl Command {
    /// The runner of the command's simulations: its `--threads`, its
    /// `--max-wall-seconds` (counted from now) and, for `run`, `validate`
    /// and `sweep`, a progress bar on a terminal.
    fn runner(&self) -> iosim::Result<Runner> {
        let (threads, bound, progress) = match self {
            Command::Validate(a) => (a.common.threads, a.max_wall_seconds, !a.cross_validate),
            Command::Calibrate(a) => (a.common.threads, a.max_wall_seconds, false),
            Command::Run(a) => (a.common.threads, a.max_wall_seconds, true),
            Command::Sweep(a) => (a.common.threads, a.max_wall_seconds, true),
            Command::Place(a) => (a.common.threads, a.max_wall_seconds, false),
            Command::Plot(a) => (a.common.threads, None, false),
            Command::Report(a) => (a.common.threads, None, false),
            Command::Params(_)
            | Command::Show(_)
            | Command::List(_)
            | Command::Bench(_)
            | Command::Merge(_) => (1, None, false),
        };
        Ok(Runner::new(threads)?
            .with_wall_clock_bound(bound)
            .with_progress(progress))
    }

    /// Runs the command; its output text.
    fn execute(self, runner: &Runner) -> iosim::Result<String> {
        match self {
            Command::Validate(a) => cli::validate::execute(a, runner),
            Command::Calibrate(a) => cli::calibrate::execute(a, runner),
            Command::Run(a) => cli::run::execute(a, runner),
            Command::Sweep(a) => cli::sweep::execute(a, runner),
            Command::Plot(a) => cli::plot::execute(a, runner),
            Command::Report(a) => cli::report_cmd::execute(a, runner),
            Command::Place(a) => cli::place::execute(a, runner),
            Command::Params(a) => cli::params::execute(a),
            Command::Merge(a) => cli::merge::execute(a),
            Command::Show(a) => cli::show::execute(a),
            Command::List(a) => cli::list::execute(a),
            Command::Bench(a) => Ok(cli::bench::execute(a)),
        }
    }
}

/// On SIGINT, SIGTERM or SIGHUP, a thread of its own removes the temporary
/// files of outputs being written, then ends the process by the signal as
/// it would have ended without the handler.
fn end_on_signals_without_temporaries() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            iosim::report::remove_temporaries();
            let _ = signal_hook::low_level::emulate_default_handler(sig);
            std::process::exit(128 + sig);
        }
    });
}

fn main() -> ExitCode {
    let command = match Cli::try_parse() {
        Ok(cli) => cli.command,
        // Help and version go to standard output like any result, so that
        // one that cannot be written is an error (exit 1), not a success.
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return match e
                .print()
                .and_then(|()| std::io::Write::flush(&mut std::io::stdout()))
            {
                Ok(()) => ExitCode::SUCCESS,
                Err(w) if w.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(source) => {
                    let w = Error::Write {
                        path: "<standard output>".into(),
                        source,
                    };
                    diag(&format!("error: {w}"));
                    ExitCode::from(1)
                }
            };
        }
        Err(e) => e.exit(),
    };
    end_on_signals_without_temporaries();
    let result = command.runner().and_then(|runner| {
        let text = command.execute(&runner);
        runner.finish();
        text
    });
    match result.and_then(|text| cli::emit(&text)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Several input errors: one line each, then how many.
            for one in e.list() {
                diag(&format!("error: {one}"));
            }
            if let Error::Many { errors, omitted } = &e {
                if *omitted > 0 {
                    diag(&iosim::error::omitted_text(*omitted));
                }
                diag(&format!("{} errors", errors.len() + omitted));
            }
            ExitCode::from(match e {
                Error::EventLimit { .. } => 3,
                Error::Usage(_) => 2,
                Error::Internal(_) | Error::Render { .. } => 4,
                Error::WallClock { .. } => 5,
                _ => 1,
            })
        }
    }
}
