//! Why a table could not be read or a scan planned: the planner's error, owning the path it
//! names (feature `paimon`).

use crate::Error;
use alloc::string::String;
use core::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why a scan could not be planned.
#[derive(Debug)]
pub enum ScanError {
    /// A file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: io::Error,
    },
    /// A metadata file (manifest list, manifest) has invalid bytes.
    Invalid {
        /// The file.
        path: PathBuf,
        /// Kind and absolute offset.
        error: Error,
    },
    /// A JSON metadata file (snapshot, schema) is malformed or lacks a field, or the
    /// directory is not a table.
    Metadata {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The query does not fit the table (unknown partition key, untypable value).
    Query(String),
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScanError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            ScanError::Invalid { path, error } => write!(
                f,
                "{}: invalid input: {} at byte {}",
                path.display(),
                error.kind.name(),
                error.offset
            ),
            ScanError::Metadata { path, message } => write!(f, "{}: {message}", path.display()),
            ScanError::Query(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ScanError {}

pub(super) fn io_err(path: &Path) -> impl FnOnce(io::Error) -> ScanError + '_ {
    move |error| ScanError::Io {
        path: path.to_path_buf(),
        error,
    }
}

pub(super) fn invalid(path: &Path) -> impl FnOnce(Error) -> ScanError + '_ {
    move |error| ScanError::Invalid {
        path: path.to_path_buf(),
        error,
    }
}

pub(super) fn json_err(path: &Path, message: impl Into<String>) -> ScanError {
    ScanError::Metadata {
        path: path.to_path_buf(),
        message: message.into(),
    }
}
