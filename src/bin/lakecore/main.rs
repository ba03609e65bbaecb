//! `lakecore`: inspect, validate, select from and build lakehouse metadata files.
//!
//! Every subcommand with `--json` prints exactly the documented JSON document on stdout.
//! Exit statuses: 0 success (also when a reader closes stdout early, as `| head` does), 1 an
//! I/O error, 2 invalid input data (one line on stderr: the file, the error kind and where,
//! what the bytes look like and the command that reads them), 3 a usage error.

mod blob;
mod demo;
mod footer;
mod footer_crypt;
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
    /// Print a shell completion script to stdout (e.g. `lakecore completions bash >
    /// /etc/bash_completion.d/lakecore`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the man page (roff) to stdout (e.g. `lakecore man | man -l -`).
    Man,
}

/// The shells `lakecore completions` writes for.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Shell {
    Bash,
    Zsh,
    Fish,
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
        Command::Demo(_) | Command::Scan(_) | Command::Completions { .. } | Command::Man => {
            lakecore::sniff::Format::Unknown
        }
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
        Command::Completions { shell } => completions(shell),
        Command::Man => man(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

/// Writes the completion script of `shell`, generated from the clap definitions.
fn completions(shell: Shell) -> util::CliResult {
    use clap::CommandFactory as _;
    let mut out = Vec::new();
    let shell = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    clap_complete::generate(shell, &mut Cli::command(), "lakecore", &mut out);
    util::write_stdout(format_args!("{}", String::from_utf8_lossy(&out)));
    Ok(())
}

/// Writes the man page, generated from the clap definitions.
fn man() -> util::CliResult {
    use clap::CommandFactory as _;
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .map_err(|e| util::Failure::io("man page", e))?;
    util::write_stdout(format_args!("{}", String::from_utf8_lossy(&out)));
    Ok(())
}
