//! Shared CLI plumbing: the failure type and its exit codes, the stdout writer that ends
//! quietly on a closed pipe, atomic output files, list parsing helpers.
//!
//! Exit statuses: 0 success (also when stdout is a pipe its reader closed early, as in
//! `lakecore scan T | head -2`), 1 I/O error, 2 invalid data, 3 usage error.

use lakecore::sniff::{sniff, Format};
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;

/// Exit status of an I/O error.
pub const EXIT_IO: u8 = 1;
/// Exit status of invalid input data.
pub const EXIT_INVALID: u8 = 2;
/// Exit status of a usage error (clap's and the CLI's own).
pub const EXIT_USAGE: u8 = 3;

/// Prints to stdout like `println!`, through [`write_stdout`].
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::util::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use outln;

/// Writes to stdout; a reader that closed the pipe (`| head`) ends the process quietly with
/// status 0, any other write error with one line and status 1. `println!` would panic.
pub fn write_stdout(args: fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args) {
        drop(out);
        exit_on_stdout_error(&e);
    }
}

/// Ends the process after a failed write to stdout: quietly with 0 on a broken pipe.
fn exit_on_stdout_error(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: stdout: {e}");
    std::process::exit(i32::from(EXIT_IO));
}

/// The format the running subcommand reads (set once by `main`), so an error can say which
/// command would take the file it was given instead.
static EXPECTED: OnceLock<Format> = OnceLock::new();

/// Records the format the running subcommand reads.
pub fn expect_format(format: Format) {
    let _ = EXPECTED.set(format);
}

/// Why a command failed; decides the exit status and the one stderr line.
#[derive(Debug)]
pub enum Failure {
    /// Invalid input: exit status 2, `error: <context>: invalid input: <kind> at <location> <n>`
    /// and, when the context is a file, what its bytes look like and the command that reads
    /// such a file.
    Invalid {
        context: String,
        error: lakecore::Error,
    },
    /// An I/O problem (missing file, permission): exit status 1; a broken pipe on stdout ends
    /// quietly with status 0.
    Io {
        context: String,
        error: std::io::Error,
    },
    /// A bad argument value that clap could not catch: exit status 3.
    Usage(String),
    /// Input the command cannot use, described by a message that names what (e.g. a column
    /// the file does not have): exit status 2, `error: <message>`.
    Rejected(String),
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
                eprintln!(
                    "error: {context}: invalid input: {error}{}",
                    file_hint(Path::new(context))
                );
                ExitCode::from(EXIT_INVALID)
            }
            Failure::Io { error, .. } if error.kind() == std::io::ErrorKind::BrokenPipe => {
                ExitCode::SUCCESS
            }
            Failure::Io { context, error } => {
                eprintln!("error: {context}: {error}");
                ExitCode::from(EXIT_IO)
            }
            Failure::Usage(message) => {
                eprintln!("error: {message}");
                ExitCode::from(EXIT_USAGE)
            }
            Failure::Rejected(message) => {
                eprintln!("error: {message}");
                ExitCode::from(EXIT_INVALID)
            }
        }
    }
}

/// `"; the bytes look like X"` and, when X is not what the command reads, `"; <command>"`
/// that reads X; empty when `path` is not a readable file.
fn file_hint(path: &Path) -> String {
    let Ok(bytes) = std::fs::read(path) else {
        return String::new();
    };
    let found = sniff(&bytes);
    let mut s = format!("; the bytes look like {}", found.description());
    if EXPECTED.get().is_some_and(|&want| want != found) {
        let file = path.display();
        let command = match found {
            Format::StandardParquet => Some(format!(
                "convert it with `lakecore footer convert {file} -o OUT.parquet`"
            )),
            Format::ModularParquet => {
                Some(format!("read it with `lakecore footer inspect {file}`"))
            }
            Format::Avro => Some(format!(
                "build its sidecar with `lakecore sidecar build {file} -o {file}.sidecar`"
            )),
            Format::Sidecar => Some(format!("read it with `lakecore sidecar inspect {file}`")),
            Format::Blob => Some(format!("read it with `lakecore blob inspect {file}`")),
            Format::Json => {
                Some("plan the table it belongs to with `lakecore scan TABLE_DIR`".into())
            }
            Format::Empty | Format::Unknown => None,
        };
        if let Some(command) = command {
            s.push_str("; ");
            s.push_str(&command);
        }
    }
    s
}

/// Refuses (usage error) an output path that names the same file as one of `inputs` (same
/// canonical path, or on Unix the same device and inode), before anything is written.
pub fn refuse_output_over_input(output: &Path, inputs: &[&Path]) -> Result<(), Failure> {
    for input in inputs {
        if same_file(output, input) {
            return Err(Failure::Usage(format!(
                "output {} is the input {}: refusing to overwrite it",
                output.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(ca), Ok(cb)) => ca == cb,
        _ => false,
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, written,
/// fsynced and renamed over `path` (then the directory fsynced), so a reader sees the old
/// file or the whole new one and a failure leaves no partial file behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let io = |e| Failure::io(path.display(), e);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| Failure::Usage(format!("output {} names no file", path.display())))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".lakecore-{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    // The rename is durable once the directory is synced (Unix; elsewhere best effort).
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
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

/// Reads a whole file into memory the process owns (like [`read`]: no mapping of the file
/// itself, so nothing another process does to it can fault this one), into an anonymous
/// mapping whose pages are populated in one call rather than faulted in one by one as the
/// read fills them (on a 4.6 MB sidecar, `sidecar select` took 1,371 page faults and 7.6 ms
/// that way, 227 and 6.6 ms this way). Files under 1 MiB are read into a `Vec`.
pub fn read_owned(path: &std::path::Path) -> Result<OwnedBytes, Failure> {
    use std::io::Read as _;
    let fail = |e| Failure::io(path.display(), e);
    let mut file = std::fs::File::open(path).map_err(fail)?;
    let len = file.metadata().map_err(fail)?.len();
    match usize::try_from(len) {
        Ok(len) if len >= 1 << 20 => {
            let mut map = memmap2::MmapOptions::new()
                .len(len)
                .populate()
                .map_anon()
                .map_err(fail)?;
            let mut filled = 0;
            while filled < len {
                match file.read(&mut map[filled..]) {
                    Ok(0) => break,
                    Ok(n) => filled += n,
                    // A signal before any byte was read: read again (as `fs::read` does).
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(fail(e)),
                }
            }
            // A file that shrank since its length was read: its bytes as they are now.
            Ok(OwnedBytes::Anon(map, filled))
        }
        // From the file already open, as `fs::read` would read it.
        len => {
            let mut bytes = Vec::with_capacity(len.unwrap_or(0));
            file.read_to_end(&mut bytes).map_err(fail)?;
            Ok(OwnedBytes::Vec(bytes))
        }
    }
}

/// A whole file's bytes, owned by the process ([`read_owned`]).
pub enum OwnedBytes {
    /// Read into a vector.
    Vec(Vec<u8>),
    /// Read into an anonymous mapping: the first `.1` bytes.
    Anon(memmap2::MmapMut, usize),
}

impl std::ops::Deref for OwnedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            OwnedBytes::Vec(v) => v,
            OwnedBytes::Anon(m, len) => m.get(..*len).unwrap_or_default(),
        }
    }
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
