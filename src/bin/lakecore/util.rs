//! Shared CLI plumbing: the failure type and its exit codes, list parsing helpers.

use std::fmt;
use std::process::ExitCode;

/// Why a command failed; decides the exit status and the one stderr line.
#[derive(Debug)]
pub enum Failure {
    /// Invalid input: exit status 2, `error: <context>: invalid input: <kind> at <location> <n>`.
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
                // The error says what its number counts: a byte of the input, or the entry,
                // row, range or layer a writer or merge was given.
                eprintln!("error: {context}: invalid input: {error}");
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

/// Reads a whole file, naming it in the error.
pub fn read(path: &std::path::Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure::io(path.display(), e))
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// `count` items in `seconds` as a rate: `"1.23 G{unit}/s"` or `"45.6 M{unit}/s"`.
pub fn rate(count: u64, seconds: f64, unit: &str) -> String {
    let per_second = count as f64 / seconds.max(1e-9);
    if per_second >= 1e9 {
        format!("{:.2} G{unit}/s", per_second / 1e9)
    } else {
        format!("{:.1} M{unit}/s", per_second / 1e6)
    }
}
