//! `lakecore scan`: plan a scan of a Paimon table directory through its manifest sidecars.
//!
//! Argument parsing and printing only; the planning is `lakecore::paimon`. Manifests run
//! in parallel (rayon); a progress bar appears on stderr when the work takes long.

use crate::util::outln;
use crate::util::{hex, parse_range, split_list, CliResult, Failure};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lakecore::paimon::{
    condition_text, parse_conditions, parse_timestamp_millis, DataFile, Filter, ManifestScan,
    PartitionValue, PreparedScan, ScanError, ScanOptions, ScanPlan, ScanQuery, SnapshotSpec, Table,
    TableSchema,
};
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Show the progress bar once the manifests have taken this long.
const PROGRESS_AFTER: Duration = Duration::from_millis(500);

/// Arguments of `lakecore scan`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Partition values are typed through the table schema (BOOLEAN, TINYINT..BIGINT, FLOAT, DOUBLE, \
DATE as YYYY-MM-DD or a day number, CHAR/VARCHAR/STRING, BINARY as hex, DECIMAL(p<=18,s)) and \
compared on the decoded partition row. A null partition value is written as the table's \
`partition.default-name` (Paimon's default: __DEFAULT_PARTITION__), e.g. \
--partition hr=__DEFAULT_PARTITION__. A value holding a comma, a quote or `=` is quoted: \
--partition p='a,b' ('' for a quote inside; quote the argument for the shell).

Output: the live data files that can match (ADD/DELETE reconciled over the snapshot's base and \
delta manifests), then manifests / blocks / bytes read with sidecars versus a full read. \
Manifests without a sidecar, or with an unreadable or invalid one, are read in full.

--json prints exactly {\"files\":[{\"partition_hex\":H,\"bucket\":B,\"file_name\":N},...],\
\"manifests\":M,\"manifests_with_sidecar\":S,\"blocks_total\":T,\"blocks_read\":R,\
\"manifest_bytes_total\":X,\"manifest_bytes_read\":Y}")]
pub struct Args {
    /// The table directory (`<warehouse>/<db>.db/<table>`), or its URL in an object store
    /// (`s3://bucket/warehouse/db.db/table`, `gs://`, `az://`, `file://`; needs the
    /// `object-store` feature; credentials, region and endpoint from the usual environment
    /// variables, e.g. AWS_ACCESS_KEY_ID, AWS_REGION, AWS_ENDPOINT_URL, AWS_ALLOW_HTTP).
    table_dir: PathBuf,
    #[command(flatten)]
    remote: RemoteArgs,
    /// Snapshot id (default: the latest).
    #[arg(long, value_name = "N", conflicts_with_all = ["tag", "as_of"])]
    snapshot: Option<u64>,
    /// Plan the snapshot of tag NAME (`tag/tag-NAME`).
    #[arg(long, value_name = "NAME", conflicts_with = "as_of")]
    tag: Option<String>,
    /// Plan the latest snapshot committed at or before TIME: milliseconds since the epoch or
    /// a UTC date-time `YYYY-MM-DD[THH:MM[:SS[.fff]]]`.
    #[arg(long, value_name = "TIME")]
    as_of: Option<String>,
    /// Row-ID ranges, inclusive: `A-B[,A-B..]` (a single `A` is `A-A`).
    #[arg(long, value_name = "A-B[,A-B..]")]
    rows: Option<String>,
    /// Buckets: `B[/T][,..]` (`/T` also requires that total bucket count).
    #[arg(long, value_name = "B[/T][,..]")]
    bucket: Option<String>,
    /// Partition values: `key=value[,key=value]` (all must hold; repeatable). A value holding
    /// a comma or starting with a quote is written `'...'` with `''` for a quote (`p='a,b'`).
    #[arg(long, value_name = "key=value[,key=value]")]
    partition: Vec<String>,
    /// Column values: `column=value[,column=value]` on columns other than partition keys
    /// (all must hold; repeatable). Equality on the whole bucket key of a fixed-bucket table
    /// keeps only the bucket it hashes to; files whose value statistics exclude a value are
    /// dropped, as the Paimon clients plan.
    #[arg(long, value_name = "column=value[,column=value]")]
    column: Vec<String>,
    /// A filter: comparisons (=, !=, <, <=, >, >=), IN (..), IS [NOT] NULL, joined by AND
    /// and OR with parentheses, e.g. `dt >= 2024-01-02 AND (hr IN (3, 4) OR name = 'a, b')`.
    /// Values are bare words/numbers or '...' with '' for a quote. Exact on partition keys;
    /// on other columns, files whose statistics rule the filter out are dropped.
    #[arg(long = "where", value_name = "FILTER")]
    filter: Option<String>,
    /// Ignore the sidecars (the `read` switch off): read every manifest in full.
    #[arg(long)]
    no_sidecars: bool,
    /// Open every manifest of the snapshot, even those whose manifest-list statistics
    /// (partition min/max, bucket and row-ID ranges) rule the filters out.
    #[arg(long)]
    no_manifest_pruning: bool,
    /// Print the plan as Paimon splits (JSON): per partition and bucket, packed up to the
    /// table's `source.split.target-size` as the clients pack them, with the typed
    /// partition, data-evolution merge groups and, per file, its path, the DataFileMeta
    /// fields a reader needs and its deletion file (deletion vectors of the index manifest).
    #[arg(long, conflicts_with = "json")]
    splits: bool,
    /// Write the plan as Arrow IPC to PATH, one row per live data file with the typed
    /// partition (the columns of the Python package's `Table.plan()`): an IPC file, written
    /// atomically; `-` writes an IPC stream to stdout (`pyarrow.ipc.open_stream`)
    #[arg(long, value_name = "PATH", conflicts_with_all = ["splits", "json"])]
    arrow: Option<std::path::PathBuf>,
    /// Print the JSON document instead of the report.
    #[arg(long)]
    json: bool,
}

/// How manifests are fetched from an object store (ignored for a local table).
#[derive(clap::Args, Debug, Clone, Copy)]
pub(crate) struct RemoteArgs {
    /// Object stores: selected manifest spans closer than BYTES are fetched with one ranged
    /// GET.
    #[arg(long, value_name = "BYTES")]
    coalesce_gap: Option<u64>,
    /// Object stores: at most N ranged GETs of one manifest in flight.
    #[arg(long, value_name = "N")]
    fan_out: Option<usize>,
    /// Object stores: at most N manifests fetched at once.
    #[arg(long, value_name = "N")]
    manifests_in_flight: Option<usize>,
}

/// Opens the table at `dir`: a local directory, or an object-store URL (`scheme://...`).
pub(crate) fn open_table(dir: &std::path::Path, remote: RemoteArgs) -> Result<Table, Failure> {
    let text = dir.to_string_lossy();
    if !text.contains("://") {
        return Table::open(dir).map_err(failure);
    }
    #[cfg(feature = "object-store")]
    {
        let (storage, root) = lakecore::io::ObjectStorage::open(&text, &[])
            .map_err(|error| Failure::io(&text, error))?;
        let defaults = lakecore::io::RangeTuning::default();
        let tuning = lakecore::io::RangeTuning {
            coalesce_gap: remote.coalesce_gap.unwrap_or(defaults.coalesce_gap),
            max_fan_out: remote.fan_out.unwrap_or(defaults.max_fan_out).max(1),
            manifests_in_flight: remote
                .manifests_in_flight
                .unwrap_or(defaults.manifests_in_flight)
                .max(1),
            ..defaults
        };
        Table::open_in(std::sync::Arc::new(storage.with_tuning(tuning)), root).map_err(failure)
    }
    #[cfg(not(feature = "object-store"))]
    {
        let _ = remote;
        Err(Failure::Usage(format!(
            "{text}: object-store URLs need lakecore built with the `object-store` feature \
             (cargo install lakecore --features cli,object-store)"
        )))
    }
}

/// `--rows A-B[,A-B..]` (shared by `scan` and `blob read`).
pub(crate) fn rows_arg(rows: Option<&str>) -> Result<Option<Vec<(u64, u64)>>, Failure> {
    rows.map(|text| split_list(text).map(parse_range).collect())
        .transpose()
}

/// `(bucket, total buckets)` alternatives, as `ScanQuery::buckets` holds them.
type Buckets = Vec<(i32, Option<i32>)>;

/// `--bucket B[/T][,..]` (shared by `scan` and `blob read`).
pub(crate) fn buckets_arg(buckets: Option<&str>) -> Result<Option<Buckets>, Failure> {
    let one = |item: &str| {
        let bad = || Failure::Usage(format!("bad bucket {item:?}: expected B[/T]"));
        let (b, t) = match item.split_once('/') {
            Some((b, t)) => (b, Some(t)),
            None => (item, None),
        };
        let b: i32 = b.trim().parse().map_err(|_| bad())?;
        let t = t
            .map(|t| t.trim().parse::<i32>())
            .transpose()
            .map_err(|_| bad())?;
        Ok((b, t))
    };
    buckets
        .map(|text| split_list(text).map(one).collect())
        .transpose()
}

/// Repeatable `--partition`/`--column` lists of `key=value` conditions in the shared
/// grammar (quoting included), all of which must hold.
pub(crate) fn conditions_arg(
    list: &[String],
    what: &str,
) -> Result<Vec<(String, String)>, Failure> {
    let mut out = Vec::new();
    for text in list {
        out.extend(
            parse_conditions(text)
                .map_err(|e| Failure::Usage(format!("bad --{what} {text:?}: {e}")))?,
        );
    }
    Ok(out)
}

fn query_of(args: &Args) -> Result<ScanQuery, Failure> {
    let rows = rows_arg(args.rows.as_deref())?;
    let buckets = buckets_arg(args.bucket.as_deref())?;
    Ok(ScanQuery {
        rows,
        buckets,
        partition: conditions_arg(&args.partition, "partition")?,
        columns: conditions_arg(&args.column, "column")?,
        filter: where_arg(args.filter.as_deref())?,
    })
}

/// The `--where` filter of `scan` and `blob read` / `blob check` (one grammar).
pub(crate) fn where_arg(text: Option<&str>) -> Result<Option<Filter>, Failure> {
    text.map(|text| {
        Filter::parse(text).map_err(|e| Failure::Usage(format!("bad --where {text:?}: {e}")))
    })
    .transpose()
}

pub(crate) fn failure(e: ScanError) -> Failure {
    match e {
        ScanError::Io { path, error } => Failure::io(path.display(), error),
        ScanError::Invalid { path, error } => Failure::invalid(path.display(), error),
        other => Failure::Usage(other.to_string()),
    }
}

/// Scans every manifest of `prepared` in parallel (rayon, one compiled manifest schema),
/// results in manifest order; with `progress`, a progress bar appears on stderr once the
/// work takes long.
pub(crate) fn scan_parallel(
    prepared: &PreparedScan,
    progress: bool,
) -> Result<Vec<ManifestScan>, ScanError> {
    let manifests = prepared.manifests();
    let bar =
        ProgressBar::with_draw_target(Some(manifests.len() as u64), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("scanning manifests {bar:40} {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let shown = AtomicBool::new(false);
    let start = Instant::now();
    let scans = prepared.with_scanner(|scanner| {
        manifests
            .par_iter()
            .map(|m| {
                let scan = scanner.scan(m);
                bar.inc(1);
                if progress
                    && start.elapsed() > PROGRESS_AFTER
                    && !shown.swap(true, Ordering::Relaxed)
                {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                }
                scan
            })
            .collect::<Result<Vec<_>, _>>()
    });
    bar.finish_and_clear();
    scans
}

/// Plans `prepared` through [`PreparedScan::run`], with a progress bar on stderr once the
/// work takes long.
pub(crate) fn plan_parallel(
    prepared: &PreparedScan,
    progress: bool,
) -> Result<ScanPlan, ScanError> {
    let bar = ProgressBar::with_draw_target(
        Some(prepared.manifests().len() as u64),
        ProgressDrawTarget::hidden(),
    );
    bar.set_style(
        ProgressStyle::with_template("scanning manifests {bar:40} {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let start = Instant::now();
    let plan = prepared.run(|done, _| {
        bar.set_position(done);
        if progress && bar.is_hidden() && start.elapsed() > PROGRESS_AFTER {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    });
    bar.finish_and_clear();
    plan
}

/// Runs `lakecore scan`.
pub fn run(args: &Args) -> CliResult {
    let query = query_of(args)?;
    let table = open_table(&args.table_dir, args.remote)?;
    let options = ScanOptions {
        read_sidecars: !args.no_sidecars,
        prune_manifests: !args.no_manifest_pruning,
    };
    let spec = if let Some(id) = args.snapshot {
        SnapshotSpec::Id(id)
    } else if let Some(tag) = &args.tag {
        SnapshotSpec::Tag(tag.clone())
    } else if let Some(time) = &args.as_of {
        SnapshotSpec::AsOf(parse_timestamp_millis(time).ok_or_else(|| {
            Failure::Usage(format!(
                "bad --as-of {time:?}: expected milliseconds since the epoch or a UTC date-time YYYY-MM-DD[THH:MM[:SS[.fff]]]"
            ))
        })?)
    } else {
        SnapshotSpec::Latest
    };
    let prepared = table
        .prepare_snapshot(&spec, &query, options)
        .map_err(failure)?;
    let plan = plan_parallel(&prepared, !args.json).map_err(failure)?;

    if let Some(out) = &args.arrow {
        let batches = lakecore::paimon::arrow::plan_batches(&table, prepared.schema(), &plan)
            .map_err(failure)?;
        let arrow_err = |e: arrow_schema::ArrowError| Failure::Io {
            context: "writing the plan as Arrow IPC".into(),
            error: std::io::Error::other(e),
        };
        if out.as_os_str() == "-" {
            let stdout = std::io::stdout();
            let w = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
            return lakecore::paimon::arrow::write_ipc(&batches, w, true).map_err(arrow_err);
        }
        let mut bytes = Vec::new();
        lakecore::paimon::arrow::write_ipc(&batches, &mut bytes, false).map_err(arrow_err)?;
        return crate::util::write_atomic(out, &bytes);
    }
    if args.splits {
        let doc = splits_json(&table, plan)?;
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
        serde_json::to_writer(&mut out, &doc)
            .map_err(std::io::Error::from)
            .and_then(|()| std::io::Write::write_all(&mut out, b"\n"))
            .and_then(|()| std::io::Write::flush(&mut out))
            .map_err(|error| Failure::Io {
                context: "writing the splits to stdout".into(),
                error,
            })?;
        return Ok(());
    }
    if args.json {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
        write_json(&mut out, &plan)
            .and_then(|()| std::io::Write::flush(&mut out))
            .map_err(|error| Failure::Io {
                context: "writing the plan to stdout".into(),
                error,
            })?;
        exit_holding(plan);
        return Ok(());
    }
    report(args, &plan, prepared.schema());
    exit_holding(plan);
    Ok(())
}

/// Leaves `plan` to the process's exit instead of freeing it: the process ends next, and
/// freeing a plan of a million files (two heap blocks each) took about 0.2 s of `free`
/// calls whose memory the exit returns anyway.
fn exit_holding(plan: ScanPlan) {
    core::mem::forget(plan);
}

/// Files formatted per parallel task by [`write_json`].
const JSON_CHUNK: usize = 4096;

/// Files [`write_json`] formats per window: two chunks for each thread of the pool.
fn json_window() -> usize {
    JSON_CHUNK * 2 * rayon::current_num_threads().max(1)
}

/// Writes the `--json` document to `out` (buffered; hex and names written without
/// per-byte formatting, since a full plan can list millions of files).
///
/// The files are formatted in parallel (rayon), a window of [`JSON_CHUNK`]-file chunks at a
/// time, while this thread writes the window before: the output is the same bytes in the same
/// order, and what is held beyond the plan is two windows of text (a few MB), not the whole
/// document.
fn write_json(out: &mut impl std::io::Write, plan: &ScanPlan) -> std::io::Result<()> {
    out.write_all(b"{\"files\":[")?;
    let format = |files: &[DataFile], first: bool| -> Vec<Vec<u8>> {
        files
            .par_chunks(JSON_CHUNK)
            .enumerate()
            .map(|(c, chunk)| {
                let mut text = Vec::with_capacity(chunk.len() * 160);
                for (i, f) in chunk.iter().enumerate() {
                    if !(first && c == 0 && i == 0) {
                        text.push(b',');
                    }
                    json_file(&mut text, f);
                }
                text
            })
            .collect()
    };
    let mut windows = plan.files.chunks(json_window());
    let mut ready = windows.next().map(|w| format(w, true)).unwrap_or_default();
    for files in windows {
        // The next window is formatted by the pool while this thread writes the current
        // one (the output, a locked stdout, stays on this thread).
        let mut next = Vec::new();
        let written = rayon::in_place_scope(|scope| {
            scope.spawn(|_| next = format(files, false));
            ready.iter().try_for_each(|text| out.write_all(text))
        });
        written?;
        ready = next;
    }
    ready.iter().try_for_each(|text| out.write_all(text))?;
    let s = plan.stats;
    writeln!(
        out,
        "],\"manifests\":{},\"manifests_with_sidecar\":{},\"blocks_total\":{},\
         \"blocks_read\":{},\"manifest_bytes_total\":{},\"manifest_bytes_read\":{}}}",
        s.manifests,
        s.manifests_with_sidecar,
        s.blocks_total,
        s.blocks_read,
        s.manifest_bytes_total,
        s.manifest_bytes_read
    )
}

/// One file's `--json` object, appended to `text`.
fn json_file(text: &mut Vec<u8>, f: &DataFile) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    text.extend_from_slice(b"{\"partition_hex\":\"");
    for &b in f.partition.iter() {
        text.push(HEX[usize::from(b >> 4)]);
        text.push(HEX[usize::from(b & 15)]);
    }
    text.extend_from_slice(b"\",\"bucket\":");
    // Writing to a `Vec` cannot fail.
    let _ = std::io::Write::write_fmt(text, format_args!("{}", f.bucket));
    text.extend_from_slice(b",\"file_name\":");
    if f.file_name
        .bytes()
        .all(|c| c >= 0x20 && c != b'"' && c != b'\\' && c < 0x7f)
    {
        text.push(b'"');
        text.extend_from_slice(f.file_name.as_bytes());
        text.push(b'"');
    } else {
        // A string always serialises, and the writer is a `Vec`, which cannot fail.
        let _ = serde_json::to_writer(&mut *text, &f.file_name);
    }
    text.push(b'}');
}

/// `key=value, ...` of a partition tuple, typed through the schema in the form `--partition`
/// accepts back (hex when undecodable).
fn partition_text(bytes: &[u8], schema: Option<&TableSchema>) -> String {
    let Some(schema) = schema else {
        return hex(bytes);
    };
    if schema.partition_keys.is_empty() {
        return "(unpartitioned)".to_string();
    }
    match schema.partition_values(bytes) {
        Ok(values) => values
            .into_iter()
            .map(|(name, v)| match v {
                PartitionValue::Null => format!("{name}={}", schema.default_partition_name),
                v => condition_text(&name, &v.to_string()),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Err(_) => hex(bytes),
    }
}

/// The `--splits` document: the library's splits ([`Table::splits`]: one per partition and
/// bucket, data-evolution merge groups, deletion files from the index manifest), each file
/// with the `DataFileMeta` fields a reader needs, its path and its deletion file.
fn splits_json(table: &Table, plan: ScanPlan) -> Result<serde_json::Value, Failure> {
    use serde_json::{json, Map, Value};
    let snapshot = plan.snapshot;
    let splits = table.into_splits(plan).map_err(failure)?;
    let mut out = Vec::with_capacity(splits.len());
    for split in &splits {
        let mut partition = Map::new();
        for (name, v) in &split.partition_values {
            let v = match v {
                PartitionValue::Null => Value::Null,
                PartitionValue::Bool(b) => json!(b),
                PartitionValue::Int(n) => json!(n),
                PartitionValue::Float(x) => json!(x),
                PartitionValue::Text(t) => json!(t),
            };
            partition.insert(name.clone(), v);
        }
        let files: Vec<Value> = split
            .files
            .iter()
            .map(|sf| {
                let f = &sf.file;
                json!({
                    "file_name": f.file_name,
                    "path": sf.path,
                    "file_size": f.file_size,
                    "row_count": f.row_count,
                    "first_row_id": f.first_row_id,
                    "min_sequence_number": f.min_sequence_number,
                    "max_sequence_number": f.max_sequence_number,
                    "schema_id": f.schema_id,
                    "level": f.level,
                    "creation_time": f.creation_time,
                    "delete_row_count": f.delete_row_count,
                    "file_source": f.file_source,
                    "external_path": f.external_path,
                    "write_cols": f.write_cols,
                    "extra_files": f.extra_files,
                    "deletion_file": sf.deletion_file.as_ref().map(|d| json!({
                        "path": d.path,
                        "offset": d.offset,
                        "length": d.length,
                        "cardinality": d.cardinality,
                    })),
                })
            })
            .collect();
        let groups: Vec<Value> = split
            .groups
            .iter()
            .map(|g| json!([g.start, g.end]))
            .collect();
        out.push(json!({
            "partition": partition,
            "partition_hex": hex(&split.partition),
            "bucket": split.bucket,
            "total_buckets": split.total_buckets,
            "row_count": split.row_count,
            "merged_row_count": split.merged_row_count,
            "merge_groups": groups,
            "files": files,
        }));
    }
    Ok(json!({ "snapshot": snapshot, "splits": out }))
}

fn rows_text(f: &DataFile) -> String {
    match f.first_row_id {
        Some(first) => format!(
            "rows {first}..{} ({} rows)",
            first.saturating_add(f.row_count).saturating_sub(1),
            f.row_count
        ),
        None => format!("{} rows", f.row_count),
    }
}

fn report(args: &Args, plan: &ScanPlan, schema: Option<&TableSchema>) {
    let s = plan.stats;
    outln!("table: {}", args.table_dir.display());
    match plan.snapshot {
        Some(id) => outln!("snapshot: {id}"),
        None => outln!("snapshot: none (empty table)"),
    }
    outln!("live data files that can match: {}", plan.files.len());
    for f in &plan.files {
        outln!(
            "  [{}] bucket {}/{}  {}  {}",
            partition_text(&f.partition, schema),
            f.bucket,
            f.total_buckets,
            f.file_name,
            rows_text(f)
        );
    }
    let full = s.manifests - s.manifests_with_sidecar - s.manifests_pruned;
    if args.no_sidecars {
        outln!(
            "manifests: {} (sidecars switched off: all read in full)",
            s.manifests
        );
        outln!(
            "read: {} of {} blocks, {} of {} manifest bytes; {} entries matched",
            s.blocks_read,
            s.blocks_total,
            s.manifest_bytes_read,
            s.manifest_bytes_total,
            s.entries_matched
        );
        return;
    }
    outln!(
        "manifests: {} ({} pruned by the manifest list's statistics, {} through sidecars, {} read in full: {} without sidecar, {} with an invalid or unreadable sidecar)",
        s.manifests,
        s.manifests_pruned,
        s.manifests_with_sidecar,
        full,
        full - s.manifests_sidecar_invalid,
        s.manifests_sidecar_invalid
    );
    let pct = |a: u64, b: u64| {
        if b == 0 {
            0.0
        } else {
            100.0 * a as f64 / b as f64
        }
    };
    outln!(
        "with sidecars: {} of {} blocks, {} of {} manifest bytes ({:.1}%) + {} sidecar bytes; {} entries matched",
        s.blocks_read,
        s.blocks_total,
        s.manifest_bytes_read,
        s.manifest_bytes_total,
        pct(s.manifest_bytes_read, s.manifest_bytes_total),
        s.sidecar_bytes_read,
        s.entries_matched
    );
    outln!(
        "without sidecars: {} of {} blocks, {} of {} manifest bytes (100.0%)",
        s.blocks_total,
        s.blocks_total,
        s.manifest_bytes_total,
        s.manifest_bytes_total
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use lakecore::paimon::ScanStats;
    use serde_json::{json, Value};

    /// A plan of `n` files with varied partitions, buckets (negative too) and names (quotes,
    /// backslashes, control and non-ASCII characters among them).
    fn plan_of(n: usize) -> ScanPlan {
        let names = [
            "plain",
            "q\"uote",
            "back\\slash",
            "tab\there",
            "ünï",
            "\u{1}",
            "",
        ];
        let files = (0..n)
            .map(|i| DataFile {
                partition: std::sync::Arc::from(
                    (0..i % 23).map(|b| (b * 37 + i) as u8).collect::<Vec<u8>>(),
                ),
                bucket: (i as i32 % 19) - 3,
                file_name: format!("data-{i}-{}", names[i % names.len()]).into(),
                ..DataFile::default()
            })
            .collect();
        let stats = ScanStats {
            manifests: 7,
            manifests_with_sidecar: 3,
            blocks_total: 11,
            blocks_read: 5,
            manifest_bytes_total: 1 << 40,
            manifest_bytes_read: 12345,
            ..ScanStats::default()
        };
        ScanPlan {
            snapshot: Some(1),
            files,
            stats,
        }
    }

    /// The `--json` document as serde_json builds it from the plan: the oracle.
    fn expected(plan: &ScanPlan) -> Value {
        let s = plan.stats;
        json!({
            "files": plan.files.iter().map(|f| json!({
                "partition_hex": f.partition.iter().map(|b| format!("{b:02x}")).collect::<String>(),
                "bucket": f.bucket,
                "file_name": f.file_name,
            })).collect::<Vec<_>>(),
            "manifests": s.manifests,
            "manifests_with_sidecar": s.manifests_with_sidecar,
            "blocks_total": s.blocks_total,
            "blocks_read": s.blocks_read,
            "manifest_bytes_total": s.manifest_bytes_total,
            "manifest_bytes_read": s.manifest_bytes_read,
        })
    }

    /// Formatted in parallel windows, the document is the plan's files in order: empty, one
    /// file, within one chunk, at and across chunk and window boundaries.
    #[test]
    fn json_document_matches_serde_json_across_windows() {
        let window = json_window();
        for n in [
            0,
            1,
            2,
            JSON_CHUNK - 1,
            JSON_CHUNK,
            JSON_CHUNK + 1,
            window,
            window + 1,
            3 * window + JSON_CHUNK / 2,
        ] {
            let plan = plan_of(n);
            let mut out = Vec::new();
            write_json(&mut out, &plan).unwrap();
            assert_eq!(out.last(), Some(&b'\n'), "{n} files");
            let got: Value =
                serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{n} files: {e}"));
            assert_eq!(got, expected(&plan), "{n} files");
        }
    }
}
