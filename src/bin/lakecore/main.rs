//! `lakecore`: inspect, validate, select from and build lakehouse metadata files.
//!
//! Every subcommand with `--json` prints exactly the documented JSON document on stdout.
//! Invalid input exits with status 2 and one line on stderr naming the error kind and the
//! byte offset; usage errors exit with clap's status.

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
#[command(name = "lakecore", version, about)]
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
    let cli = Cli::parse();
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
