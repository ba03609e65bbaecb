//! Shared CLI plumbing: the failure type and its exit codes, list parsing helpers.

use std::fmt;
use std::process::ExitCode;

/// Why a command failed; decides the exit status and the one stderr line.
#[derive(Debug)]
pub enum Failure {
    /// Invalid input bytes: exit status 2, `error: <kind> at byte <offset>` (plus context).
    Invalid {
        context: String,
        error: lakecore::Error,
    },
    /// An I/O problem (missing file, permission): exit status 1.
    #[allow(dead_code)]
    Io {
        context: String,
        error: std::io::Error,
    },
    /// A bad argument value that clap could not catch: exit status 2.
    Usage(String),
}

impl Failure {
    /// An invalid-input failure for `context` (usually a path).
    pub fn invalid(context: impl fmt::Display, error: lakecore::Error) -> Self {
        Failure::Invalid {
            context: context.to_string(),
            error,
        }
    }

    /// An I/O failure for `context`.
    #[allow(dead_code)]
    pub fn io(context: impl fmt::Display, error: std::io::Error) -> Self {
        Failure::Io {
            context: context.to_string(),
            error,
        }
    }

    /// Prints the one-line message and returns the exit code.
    pub fn report(&self) -> ExitCode {
        match self {
            Failure::Invalid { context, error } => {
                eprintln!(
                    "error: {context}: invalid input: {} at byte {}",
                    error.kind.name(),
                    error.offset
                );
                ExitCode::from(2)
            }
            Failure::Io { context, error } => {
                eprintln!("error: {context}: {error}");
                ExitCode::from(1)
            }
            Failure::Usage(message) => {
                eprintln!("error: {message}");
                ExitCode::from(2)
            }
        }
    }
}

/// Result of a subcommand.
pub type CliResult = Result<(), Failure>;

/// Parses an inclusive range `A-B` (or a single number `A`) of unsigned integers.
#[allow(dead_code)]
pub fn parse_range(text: &str) -> Result<(u64, u64), Failure> {
    let bad = || Failure::Usage(format!("bad range {text:?}: expected A-B"));
    let (a, b) = match text.split_once('-') {
        Some((a, b)) => (a, b),
        None => (text, text),
    };
    let a: u64 = a.trim().parse().map_err(|_| bad())?;
    let b: u64 = b.trim().parse().map_err(|_| bad())?;
    if a > b {
        return Err(bad());
    }
    Ok((a, b))
}

/// Splits a comma-separated list; the empty string is the empty list.
#[allow(dead_code)]
pub fn split_list(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').filter(|s| !s.is_empty())
}
