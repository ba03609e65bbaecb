//! `lakecore`: inspect, validate, select from and build lakehouse metadata files.
//!
//! Every subcommand with `--json` prints exactly the documented JSON document on stdout.
//! Exit statuses: 0 success (also when a reader closes stdout early, as `| head` does), 1 an
//! I/O error, 2 invalid input data (one line on stderr: the file, the error kind and where,
//! what the bytes look like and the command that reads them), 3 a usage error.

mod blob;
mod demo;
mod footer;
mod scan;
mod sidecar;
mod util;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Zero-copy lakehouse metadata: Paimon manifest sidecars, Parquet modular footers, BLOB files.
#[derive(Parser, Debug)]
#[command(
    name = "lakecore",
    version,
    about,
    after_help = "Exit status: 0 success (also when a reader closes stdout early, as `| head` \
                  does), 1 I/O error, 2 invalid input data, 3 usage error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the built-in demonstration on generated data and print throughput figures.
    Demo(demo::Args),
    /// Paimon BLOB files: inspect rows, merge partial-update layers.
    Blob(blob::Args),
    /// Parquet modular footers: convert, inspect, read placement.
    Footer(footer::Args),
    /// Paimon manifest sidecars: inspect, select blocks, build from a manifest.
    Sidecar(sidecar::Args),
    /// Plan a scan of a Paimon table directory: the live data files that can match, read
    /// through the manifest sidecars.
    Scan(scan::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` are printed to stdout with status 0; every other
            // parse error is a usage error (status 3, not clap's 2, which means invalid data
            // here).
            let usage = e.use_stderr();
            if let Err(io) = e.print() {
                if io.kind() != std::io::ErrorKind::BrokenPipe {
                    return ExitCode::from(util::EXIT_IO);
                }
            }
            return if usage {
                ExitCode::from(util::EXIT_USAGE)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    util::expect_format(match &cli.command {
        Command::Demo(_) | Command::Scan(_) => lakecore::sniff::Format::Unknown,
        Command::Blob(_) => lakecore::sniff::Format::Blob,
        Command::Footer(args) => footer::expected_format(args),
        Command::Sidecar(args) => sidecar::expected_format(args),
    });
    let result = match cli.command {
        Command::Demo(args) => demo::run(&args),
        Command::Blob(args) => blob::run(&args),
        Command::Footer(args) => footer::run(&args),
        Command::Sidecar(args) => sidecar::run(&args),
        Command::Scan(args) => scan::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}
