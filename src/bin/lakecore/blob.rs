//! `lakecore blob`: inspect a `.blob` file, merge partial-update layers; the demo section.

use crate::util::{hex, parse_range, read, split_list, CliResult, Failure};
use lakecore::blob::{
    BlobFile, CrcCoverage, FallbackMerge, LayerFile, MergeOptions, Row, RowRange, RowRanges,
};
use lakecore::codec::checksum::sha256;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Layers `blob merge` accepts.
const MAX_LAYERS: usize = 64;

/// Options of `lakecore blob`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: BlobCommand,
}

#[derive(clap::Subcommand, Debug)]
enum BlobCommand {
    /// List every row of a `.blob` file (kind, payload offset and length).
    Inspect {
        /// The `.blob` file.
        file: PathBuf,
        /// Also check every record's magic, trailing length and CRC, and report the coverage.
        #[arg(long)]
        verify: bool,
        /// Print the JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Merge the partial-update layers of one BLOB field (newest sequence number wins).
    Merge {
        /// A file as `SEQ:FIRST_ROW_ID:PATH` (max sequence number, first row ID, path).
        #[arg(long = "file", required = true, value_name = "SEQ:FIRST_ROW_ID:PATH")]
        files: Vec<String>,
        /// Inclusive row-ID ranges `A-B[,A-B...]` (any order; overlaps are joined); default
        /// every row.
        #[arg(long)]
        rows: Option<String>,
        /// Fail on a placeholder that no older layer resolves (default: NULL with sequence
        /// number -1, as pypaimon and paimon-rust return).
        #[arg(long)]
        strict: bool,
        /// Print the JSON document.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `lakecore blob`.
pub fn run(args: &Args) -> CliResult {
    match &args.command {
        BlobCommand::Inspect { file, verify, json } => inspect(file, *verify, *json),
        BlobCommand::Merge {
            files,
            rows,
            strict,
            json,
        } => merge(files, rows.as_deref(), *strict, *json),
    }
}

fn print(text: &str) -> CliResult {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Failure::io("stdout", e))
}

fn inspect(path: &Path, verify: bool, json: bool) -> CliResult {
    let bytes = read(path)?;
    let file = BlobFile::parse(&bytes).map_err(|e| Failure::invalid(path.display(), e))?;
    let coverage = if verify {
        let report = file
            .verify()
            .map_err(|e| Failure::invalid(path.display(), e))?;
        Some(report.coverage())
    } else {
        None
    };
    let crc = coverage.map_or("unchecked", CrcCoverage::name);
    let mut out = String::new();
    if json {
        out.push_str("{\"rows\":[");
        for (i, row) in file.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = match row {
                Row::Null => write!(out, "{{\"row\":{i},\"kind\":\"null\"}}"),
                Row::Placeholder => write!(out, "{{\"row\":{i},\"kind\":\"placeholder\"}}"),
                Row::Value(p) => write!(
                    out,
                    "{{\"row\":{i},\"kind\":\"value\",\"offset\":{},\"length\":{}}}",
                    p.offset,
                    p.bytes.len()
                ),
            };
        }
        let _ = writeln!(out, "],\"crc\":\"{crc}\"}}");
    } else {
        let _ = writeln!(
            out,
            "{}: {} rows ({} values, {} null, {} placeholder), {} data bytes, index {} bytes, crc {crc}",
            path.display(),
            file.rows(),
            file.values(),
            file.nulls(),
            file.placeholders(),
            file.data_len(),
            file.index_bytes().len()
        );
        for (i, row) in file.iter().enumerate() {
            let _ = match row {
                Row::Null => writeln!(out, "{i:>8}  null"),
                Row::Placeholder => writeln!(out, "{i:>8}  placeholder"),
                Row::Value(p) => writeln!(
                    out,
                    "{i:>8}  value  offset {}  length {}",
                    p.offset,
                    p.bytes.len()
                ),
            };
        }
    }
    print(&out)
}

/// Parses `SEQ:FIRST_ROW_ID:PATH`.
fn parse_file_arg(text: &str) -> Result<(i64, u64, PathBuf), Failure> {
    let bad = || {
        Failure::Usage(format!(
            "bad --file {text:?}: expected SEQ:FIRST_ROW_ID:PATH"
        ))
    };
    let mut parts = text.splitn(3, ':');
    let seq = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
    let first = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
    let path = parts.next().filter(|p| !p.is_empty()).ok_or_else(bad)?;
    Ok((seq, first, PathBuf::from(path)))
}

fn merge(file_args: &[String], rows: Option<&str>, strict: bool, json: bool) -> CliResult {
    let mut inputs = Vec::with_capacity(file_args.len());
    for arg in file_args {
        let (seq, first, path) = parse_file_arg(arg)?;
        inputs.push((seq, first, read(&path)?, path));
    }
    let mut files = Vec::with_capacity(inputs.len());
    for (seq, first, bytes, path) in &inputs {
        let file = BlobFile::parse(bytes).map_err(|e| Failure::invalid(path.display(), e))?;
        files.push(LayerFile {
            file,
            first_row_id: *first,
            max_sequence_number: *seq,
        });
    }
    let mut ranges: Option<Vec<RowRange>> = rows
        .map(|text| {
            split_list(text)
                .map(|r| parse_range(r).map(|(first, last)| RowRange::new(first, last)))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    // The merge wants the ranges sorted and disjoint; the command line need not be: sort
    // them and join overlapping or adjacent ones.
    let options = MergeOptions {
        ranges: ranges
            .as_deref_mut()
            .map(|r| RowRanges::normalize(r).as_slice()),
        deleted: &[],
        strict,
    };
    let merged = FallbackMerge::<'_, '_, MAX_LAYERS>::with_max_layers(&mut files, options)
        .map_err(|e| Failure::invalid("merge", e))?;
    let mut out = String::new();
    if json {
        out.push_str("{\"rows\":[");
    }
    for (i, row) in merged.enumerate() {
        let row = row.map_err(|e| Failure::invalid("merge", e))?;
        if json {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(
                out,
                "{{\"row_id\":{},\"seq\":{},",
                row.row_id, row.sequence_number
            );
            let _ = match row.value {
                None => write!(out, "\"kind\":\"null\"}}"),
                Some(p) => write!(
                    out,
                    "\"kind\":\"value\",\"length\":{},\"sha256\":\"{}\"}}",
                    p.bytes.len(),
                    hex(&sha256(p.bytes))
                ),
            };
        } else {
            let _ = match row.value {
                None => writeln!(
                    out,
                    "{:>8}  seq {:>4}  null",
                    row.row_id, row.sequence_number
                ),
                Some(p) => writeln!(
                    out,
                    "{:>8}  seq {:>4}  value  length {}  sha256 {}",
                    row.row_id,
                    row.sequence_number,
                    p.bytes.len(),
                    hex(&sha256(p.bytes))
                ),
            };
        }
    }
    if json {
        out.push_str("]}\n");
    }
    print(&out)
}
