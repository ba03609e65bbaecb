//! `lakecore blob`: inspect a `.blob` file, merge partial-update layers; the demo section.

use crate::util::{hex, parse_range, read, split_list, CliResult, Failure};
use lakecore::blob::{
    BlobFile, CrcCoverage, FallbackMerge, LayerFile, MergeOptions, Row, RowRange, RowRanges,
};
use lakecore::codec::checksum::sha256;
use lakecore::paimon::blob::descriptor::{decode, DescriptorColumnRead};
use lakecore::paimon::blob::{
    column_kind, BlobColumnRead, BlobReadError, BlobRow, ColumnKind, ReadOptions,
};
use lakecore::paimon::ScanQuery;
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
    /// Read a BLOB column of a data-evolution table: plan, group the `.blob` files into
    /// bunches and layers, merge (newest sequence number wins; a row that is a placeholder in
    /// every layer is NULL with sequence number -1). A descriptor-mode field (table option
    /// `blob-descriptor-field`) is read from the Parquet data files that carry it: each value
    /// is the serialized BlobDescriptor (see --descriptors), the sequence number the
    /// providing file's.
    Read {
        #[command(flatten)]
        table: TableArgs,
        /// Fail on a placeholder that no older layer resolves (`.blob` columns only).
        #[arg(long)]
        strict: bool,
        /// What a descriptor field's values are: `bytes` (the serialized descriptor, as
        /// stored), `decode` (print uri, offset and length; not with --out) or `resolve` (read
        /// the payload each descriptor points at: length and sha256, or --out writes it).
        #[arg(long, value_enum, default_value_t = DescriptorMode::Bytes, value_name = "MODE")]
        descriptors: DescriptorMode,
        /// Print one JSON object per row: row_id, sequence_number, null, length, sha256.
        #[arg(long, conflicts_with = "out")]
        json: bool,
        /// Write each non-NULL value to DIR/<row_id> (atomically: a temporary file in DIR,
        /// then a rename).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Lint a BLOB column: rows whose partial update loses to a base file with a higher
    /// max_sequence_number (the clients return the old bytes). Exit status 1 when any is
    /// found.
    Check {
        #[command(flatten)]
        table: TableArgs,
        /// Print the JSON document.
        #[arg(long)]
        json: bool,
    },
}

/// How `blob read` shows a descriptor field's values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum DescriptorMode {
    /// The serialized descriptor bytes, as stored in the data file.
    Bytes,
    /// The descriptor's uri, offset and length.
    Decode,
    /// The payload the descriptor points at.
    Resolve,
}

/// The table and the planner's filters of `blob read` and `blob check`.
#[derive(clap::Args, Debug)]
struct TableArgs {
    /// The table directory (`<warehouse>/<db>.db/<table>`), or its object-store URL
    /// (`s3://...`; see `lakecore scan --help`).
    table_dir: PathBuf,
    #[command(flatten)]
    remote: crate::scan::RemoteArgs,
    /// The BLOB column (default: the table's only BLOB column in `.blob` files, or its only
    /// descriptor field when it has no other).
    #[arg(long, value_name = "NAME")]
    column: Option<String>,
    /// Row-ID ranges, inclusive: `A-B[,A-B..]` (a single `A` is `A-A`).
    #[arg(long, value_name = "A-B[,A-B..]")]
    rows: Option<String>,
    /// Partition values: `key=value[,key=value]` (all must hold; repeatable; `'a,b'` quotes
    /// a value, `''` a quote; the grammar of `scan --partition`).
    #[arg(long, value_name = "key=value[,key=value]")]
    partition: Vec<String>,
    /// Buckets: `B[/T][,..]` (`/T` also requires that total bucket count).
    #[arg(long, value_name = "B[/T][,..]")]
    bucket: Option<String>,
    /// A filter in the grammar of `scan --where` (comparisons, IN, IS [NOT] NULL, AND, OR,
    /// parentheses), e.g. `p >= 2 AND p IN (2, 5)`. Exact on partition keys; conditions on
    /// other columns keep every file (a row's BLOB layers must all be read), as in the
    /// clients' data-evolution reads.
    #[arg(long = "where", value_name = "FILTER")]
    filter: Option<String>,
    /// Snapshot id (default: the latest).
    #[arg(long, value_name = "N")]
    snapshot: Option<u64>,
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
        BlobCommand::Read {
            table,
            strict,
            descriptors,
            json,
            out,
        } => read_table(table, *strict, *descriptors, *json, out.as_deref()),
        BlobCommand::Check { table, json } => check_table(table, *json),
    }
}

/// A planned `blob read`: a column in `.blob` files or a descriptor field.
enum Planned {
    Files(BlobColumnRead),
    Descriptors(DescriptorColumnRead),
}

fn plan_any(args: &TableArgs) -> Result<Planned, Failure> {
    // The same row, bucket and partition grammar as `scan` (quoting included).
    let rows = crate::scan::rows_arg(args.rows.as_deref())?;
    let buckets = crate::scan::buckets_arg(args.bucket.as_deref())?;
    let partition = crate::scan::conditions_arg(&args.partition, "partition")?;
    let query = ScanQuery {
        rows,
        buckets,
        partition,
        filter: crate::scan::where_arg(args.filter.as_deref())?,
        ..ScanQuery::default()
    };
    let table = crate::scan::open_table(&args.table_dir, args.remote)?;
    let (name, kind) =
        column_kind(&table, args.snapshot, args.column.as_deref()).map_err(read_failure)?;
    match kind {
        ColumnKind::BlobFiles => {
            BlobColumnRead::plan(&table, args.snapshot, &query, args.column.as_deref())
                .map(Planned::Files)
        }
        ColumnKind::Descriptor => {
            DescriptorColumnRead::plan(&table, args.snapshot, &query, Some(&name))
                .map(Planned::Descriptors)
        }
    }
    .map_err(read_failure)
}

fn plan_column(args: &TableArgs) -> Result<BlobColumnRead, Failure> {
    match plan_any(args)? {
        Planned::Files(read) => Ok(read),
        Planned::Descriptors(read) => Err(Failure::Usage(format!(
            "column {} is a blob-descriptor-field: its values are descriptors in the data \
             files, with no partial-update layers to check",
            read.column()
        ))),
    }
}

/// Exit status 1 for I/O, 2 (with the file and what disagrees) for invalid data, 3 for a
/// column or query the table does not allow.
fn read_failure(e: BlobReadError) -> Failure {
    match e {
        BlobReadError::Scan(e) => crate::scan::failure(e),
        BlobReadError::Io { path, error } => Failure::io(path.display(), error),
        BlobReadError::Invalid { context, error } => Failure::invalid(context, error),
        e @ BlobReadError::Descriptor { .. } => Failure::Rejected(e.to_string()),
        other => Failure::Usage(other.to_string()),
    }
}

/// Runs `f` on every row of `read`: the stored bytes, or (`Resolve`) the payloads the
/// descriptors point at. A row value that is not a descriptor, or a payload outside its file,
/// fails naming the row.
fn for_each_value(
    read: &Planned,
    strict: bool,
    mode: DescriptorMode,
    mut f: impl FnMut(BlobRow<'_>) -> CliResult,
) -> CliResult {
    match read {
        Planned::Files(read) => read
            .for_each_row(ReadOptions { strict }, f)
            .map_err(read_failure)?,
        Planned::Descriptors(read) => read
            .for_each_row(|row| {
                if mode != DescriptorMode::Resolve {
                    return f(row);
                }
                let Some(bytes) = row.value else {
                    return f(row);
                };
                let context = || format!("{} row {}", row.file.unwrap_or(""), row.row_id);
                let d = decode(bytes)
                    .map_err(|e| Failure::invalid(format!("{} descriptor", context()), e))?;
                let payload = read.resolve(&d).map_err(|e| match read_failure(e) {
                    Failure::Rejected(m) => Failure::Rejected(format!("{}: {m}", context())),
                    other => other,
                })?;
                f(BlobRow {
                    value: Some(&payload),
                    ..row
                })
            })
            .map_err(read_failure)?,
    }
}

fn read_table(
    args: &TableArgs,
    strict: bool,
    mode: DescriptorMode,
    json: bool,
    out: Option<&Path>,
) -> CliResult {
    let read = plan_any(args)?;
    let column = match &read {
        Planned::Files(r) => r.column().to_string(),
        Planned::Descriptors(r) => r.column().to_string(),
    };
    if mode != DescriptorMode::Bytes && matches!(read, Planned::Files(_)) {
        return Err(Failure::Usage(format!(
            "--descriptors {}: column {column} is stored in .blob files, not a \
             blob-descriptor-field",
            if mode == DescriptorMode::Decode {
                "decode"
            } else {
                "resolve"
            }
        )));
    }
    if let Some(dir) = out {
        if mode == DescriptorMode::Decode {
            return Err(Failure::Usage(
                "--descriptors decode prints descriptors; with --out use bytes or resolve".into(),
            ));
        }
        let (mut values, mut nulls) = (0u64, 0u64);
        for_each_value(&read, strict, mode, |row| {
            let Some(bytes) = row.value else {
                nulls += 1;
                return Ok(());
            };
            values += 1;
            write_atomically(dir, row.row_id, bytes)
        })?;
        return print(&format!(
            "{}: column {column} -> {}: {values} values written, {nulls} null\n",
            args.table_dir.display(),
            dir.display()
        ));
    }
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut line = String::with_capacity(160);
    for_each_value(&read, strict, mode, |row| {
        line.clear();
        if mode == DescriptorMode::Decode {
            decoded_line(&mut line, &row, json)?;
        } else if json {
            let _ = write!(
                line,
                "{{\"row_id\":{},\"sequence_number\":{},",
                row.row_id, row.sequence_number
            );
            let _ = match row.value {
                None => writeln!(line, "\"null\":true,\"length\":null,\"sha256\":null}}"),
                Some(v) => writeln!(
                    line,
                    "\"null\":false,\"length\":{},\"sha256\":\"{}\"}}",
                    v.len(),
                    hex(&sha256(v))
                ),
            };
        } else {
            let _ = match row.value {
                None => writeln!(
                    line,
                    "{:>10}  seq {:>4}  null",
                    row.row_id, row.sequence_number
                ),
                Some(v) => writeln!(
                    line,
                    "{:>10}  seq {:>4}  length {:>8}  sha256 {}  {}",
                    row.row_id,
                    row.sequence_number,
                    v.len(),
                    hex(&sha256(v)),
                    row.file.unwrap_or("")
                ),
            };
        }
        w.write_all(line.as_bytes())
            .map_err(|e| Failure::io("stdout", e))
    })?;
    w.flush().map_err(|e| Failure::io("stdout", e))
}

/// One row of `--descriptors decode`: uri, offset, length (JSON or text); exit 2 naming the
/// row when the value is not a descriptor.
fn decoded_line(line: &mut String, row: &BlobRow<'_>, json: bool) -> CliResult {
    let Some(bytes) = row.value else {
        let _ = if json {
            writeln!(
                line,
                "{{\"row_id\":{},\"sequence_number\":{},\"null\":true,\"uri\":null,\"offset\":null,\"length\":null}}",
                row.row_id, row.sequence_number
            )
        } else {
            writeln!(
                line,
                "{:>10}  seq {:>4}  null",
                row.row_id, row.sequence_number
            )
        };
        return Ok(());
    };
    let d = decode(bytes).map_err(|e| {
        Failure::invalid(
            format!("{} row {} descriptor", row.file.unwrap_or(""), row.row_id),
            e,
        )
    })?;
    let _ = if json {
        writeln!(
            line,
            "{{\"row_id\":{},\"sequence_number\":{},\"null\":false,\"uri\":{},\"offset\":{},\"length\":{}}}",
            row.row_id,
            row.sequence_number,
            serde_json::Value::from(d.uri),
            d.offset,
            d.length
        )
    } else {
        writeln!(
            line,
            "{:>10}  seq {:>4}  offset {:>10}  length {:>8}  {}",
            row.row_id, row.sequence_number, d.offset, d.length, d.uri
        )
    };
    Ok(())
}

/// Writes `bytes` to `dir/<row_id>` through a temporary file in `dir` and a rename, so the
/// name never shows a partial value; the temporary file is removed on failure.
fn write_atomically(dir: &Path, row_id: u64, bytes: &[u8]) -> CliResult {
    let target = dir.join(row_id.to_string());
    let temp = dir.join(format!(".{row_id}.tmp-{}", std::process::id()));
    let written = std::fs::File::create(&temp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_data()
    });
    let renamed = written.and_then(|()| std::fs::rename(&temp, &target));
    renamed.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        Failure::io(target.display(), e)
    })
}

fn check_table(args: &TableArgs, json: bool) -> CliResult {
    let read = plan_column(args)?;
    let lost = read.check().map_err(read_failure)?;
    let mut out = String::new();
    if json {
        out.push_str("{\"lost_updates\":[");
        for (i, l) in lost.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(
                out,
                "{{\"row_id\":{},\"winner\":\"{}\",\"winner_sequence_number\":{},\"update\":\"{}\",\"update_sequence_number\":{}}}",
                l.row_id, l.winner, l.winner_sequence_number, l.update, l.update_sequence_number
            );
        }
        out.push_str("]}\n");
    } else {
        for l in &lost {
            let _ = writeln!(
                out,
                "row {}: the partial update in {} (max_sequence_number {}) loses to {} (max_sequence_number {})",
                l.row_id, l.update, l.update_sequence_number, l.winner, l.winner_sequence_number
            );
        }
        let _ = writeln!(
            out,
            "{}: column {}: {} rows whose partial update loses to an older base file",
            args.table_dir.display(),
            read.column(),
            lost.len()
        );
    }
    print(&out)?;
    if lost.is_empty() {
        Ok(())
    } else {
        Err(Failure::io(
            "blob check",
            std::io::Error::other(format!("{} lost partial updates", lost.len())),
        ))
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
