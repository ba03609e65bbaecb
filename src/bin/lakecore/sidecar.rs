//! `lakecore sidecar …`: inspect, select from and build Paimon manifest sidecars, and the
//! sidecar section of `lakecore demo`.

use crate::util::outln;
use crate::util::{
    hex, parse_range, read, refuse_output_over_input, split_list, write_atomic, CliResult, Failure,
};
use lakecore::paimon::manifest::build_from_manifest;
use lakecore::paimon::{parse_conditions, Filter, PartitionPredicate, Table, TableSchema};
use lakecore::sidecar::{BuildSettings, Layout, ManifestFacts, RowRange, Sidecar, SidecarOptions};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Options of `lakecore sidecar`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: SidecarCommand,
}

#[derive(clap::Subcommand, Debug)]
enum SidecarCommand {
    /// Validate a sidecar and print its layout, dictionary and blocks.
    Inspect {
        /// The `.avro.sidecar` file.
        sidecar: PathBuf,
        /// The manifest's size in bytes (checked against the sidecar).
        #[arg(long, requires = "entries")]
        manifest_size: Option<u64>,
        /// The manifest's entry count, ADD + DELETE (checked against the sidecar).
        #[arg(long, requires = "manifest_size")]
        entries: Option<u64>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Select the manifest blocks a scan with the given filters must read.
    Select {
        /// The `MANIFEST.avro.sidecar` file, or the manifest `MANIFEST` beside which it lies.
        #[arg(value_name = "MANIFEST_OR_SIDECAR")]
        sidecar: PathBuf,
        /// The manifest's size in bytes (default: the size of the manifest file beside the
        /// sidecar).
        #[arg(long)]
        manifest_size: Option<u64>,
        /// The manifest's entry count, ADD + DELETE (default: counted in the manifest file
        /// beside the sidecar).
        #[arg(long)]
        entries: Option<u64>,
        /// Inclusive row-ID ranges `A-B[,A-B...]` (`--rows=` is the empty list).
        #[arg(long)]
        rows: Option<String>,
        /// Buckets `B/T` (that pair) or `B` (any total), comma-separated.
        #[arg(long)]
        bucket: Option<String>,
        /// Partition values `key=value[,key=value]` (all must hold, typed and quoted as in
        /// `scan --partition`; needs the table's schema), or `_PARTITION` hex strings,
        /// comma-separated (any may match).
        #[arg(long)]
        partition: Option<String>,
        /// A filter on partition keys in `scan --where`'s grammar (`=`, `!=`, `<`, `<=`, `>`,
        /// `>=`, `IN (..)`, `IS [NOT] NULL`, `AND`, `OR`, parentheses; needs the table's
        /// schema). It must hold together with `--partition`.
        #[arg(long = "where", value_name = "FILTER")]
        filter: Option<String>,
        /// The table whose schema types `--partition key=value` and `--where` (default: the
        /// table the sidecar lies in, `TABLE/manifest/…`).
        #[arg(long, value_name = "DIR")]
        table: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Build the sidecar of a manifest file.
    Build {
        /// The Avro manifest file.
        manifest: PathBuf,
        /// Container layout: `compact` (v1, the layout Java Paimon, paimon-rust and pypaimon
        /// read) or `fixed` (read by lakecore only).
        #[arg(long, value_enum, default_value_t = LayoutArg::Compact)]
        layout: LayoutArg,
        /// Do not generate row-ID coverage.
        #[arg(long)]
        no_row_ids: bool,
        /// Do not generate bucket coverage.
        #[arg(long)]
        no_buckets: bool,
        /// Output path.
        #[arg(short = 'o', long = "output")]
        out: PathBuf,
    },
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum LayoutArg {
    Fixed,
    Compact,
}

/// The format the subcommand reads: a manifest for `build`, a sidecar for the others.
pub fn expected_format(args: &Args) -> lakecore::sniff::Format {
    match args.command {
        SidecarCommand::Build { .. } => lakecore::sniff::Format::Avro,
        _ => lakecore::sniff::Format::Sidecar,
    }
}

/// Runs `lakecore sidecar …`.
pub fn run(args: &Args) -> CliResult {
    match &args.command {
        SidecarCommand::Inspect {
            sidecar,
            manifest_size,
            entries,
            json,
        } => {
            let facts = manifest_size
                .zip(*entries)
                .map(|(length, entries)| ManifestFacts { length, entries });
            inspect(sidecar, facts, *json)
        }
        SidecarCommand::Select {
            sidecar,
            manifest_size,
            entries,
            rows,
            bucket,
            partition,
            filter,
            table,
            json,
        } => {
            let (sidecar, facts) = locate(sidecar, *manifest_size, *entries)?;
            let mut filters = Vec::new();
            if let Some(p) = partition.as_deref() {
                filters.push(partition_filter(p, table.as_deref(), &sidecar)?);
            }
            if let Some(text) = filter.as_deref() {
                filters.push(where_filter(text, table.as_deref(), &sidecar)?);
            }
            let partition = (!filters.is_empty()).then_some(PartitionFilter::All(filters));
            select(
                &sidecar,
                facts,
                rows.as_deref(),
                bucket.as_deref(),
                partition.as_ref(),
                *json,
            )
        }
        SidecarCommand::Build {
            manifest,
            layout,
            no_row_ids,
            no_buckets,
            out,
        } => build(manifest, *layout, !*no_row_ids, !*no_buckets, out),
    }
}

/// The sidecar to read and the facts of its manifest: `path` is the sidecar
/// (`MANIFEST.avro.sidecar`) or the manifest; the facts the flags leave out come from the
/// manifest file (its size, and the object counts of its Avro blocks).
fn locate(
    path: &Path,
    length: Option<u64>,
    entries: Option<u64>,
) -> Result<(PathBuf, ManifestFacts), Failure> {
    const SUFFIX: &str = ".avro.sidecar";
    let text = path.to_string_lossy();
    // An Avro file is the manifest; anything else is read as the sidecar (whatever its name).
    let mut head = [0u8; 4];
    let is_manifest = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && lakecore::sniff::sniff(&head) == lakecore::sniff::Format::Avro;
    let (sidecar, manifest) = if is_manifest {
        (
            PathBuf::from(format!("{text}{SUFFIX}")),
            Some(path.to_path_buf()),
        )
    } else {
        (
            path.to_path_buf(),
            text.strip_suffix(SUFFIX).map(PathBuf::from),
        )
    };
    if let (Some(length), Some(entries)) = (length, entries) {
        return Ok((sidecar, ManifestFacts { length, entries }));
    }
    let Some(manifest) = manifest.filter(|m| m.is_file()) else {
        return Err(Failure::Usage(format!(
            "no manifest beside the sidecar {} (named as it without `{SUFFIX}`): give \
             --manifest-size and --entries",
            sidecar.display()
        )));
    };
    let bytes = read(&manifest)?;
    let counted = match entries {
        Some(n) => n,
        None => {
            let invalid = |e| Failure::invalid(manifest.display(), e);
            let container = lakecore::codec::avro::Container::parse(&bytes).map_err(invalid)?;
            let mut n = 0u64;
            for block in container.blocks() {
                n = n.saturating_add(block.map_err(invalid)?.object_count);
            }
            n
        }
    };
    let facts = ManifestFacts {
        length: length.unwrap_or(bytes.len() as u64),
        entries: counted,
    };
    Ok((sidecar, facts))
}

/// What `--partition` asks for: `_PARTITION` tuples given as hex (any may match), or
/// `key=value` conditions (all must hold) typed by a table's schema.
enum PartitionFilter {
    Hex(Vec<Vec<u8>>),
    Values {
        schema: Box<TableSchema>,
        conditions: Vec<(String, String)>,
    },
    Where(PartitionPredicate),
    /// Every one must hold.
    All(Vec<PartitionFilter>),
}

impl PartitionFilter {
    fn matches(&self, tuple: &[u8]) -> Result<bool, Failure> {
        match self {
            PartitionFilter::Hex(wanted) => Ok(wanted.iter().any(|w| w == tuple)),
            PartitionFilter::Where(p) => p
                .passes(tuple)
                .map_err(|e| Failure::invalid("a partition tuple of the sidecar", e)),
            PartitionFilter::All(all) => {
                for f in all {
                    if !f.matches(tuple)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            PartitionFilter::Values { schema, conditions } => schema
                .partition_matches(conditions, tuple)
                .map_err(|e| Failure::Usage(format!("--partition: {e}"))),
        }
    }
}

fn partition_filter(
    text: &str,
    table: Option<&Path>,
    sidecar: &Path,
) -> Result<PartitionFilter, Failure> {
    if !text.contains('=') {
        let tuples = split_list(text).map(unhex).collect::<Result<Vec<_>, _>>()?;
        return Ok(PartitionFilter::Hex(tuples));
    }
    let conditions = parse_conditions(text)
        .map_err(|e| Failure::Usage(format!("bad --partition {text:?}: {e}")))?;
    let schema = table_schema(table, sidecar, "--partition key=value")?;
    Ok(PartitionFilter::Values {
        schema: Box::new(schema),
        conditions,
    })
}

/// `--where FILTER`: typed through the table's schema; partition keys only.
fn where_filter(
    text: &str,
    table: Option<&Path>,
    sidecar: &Path,
) -> Result<PartitionFilter, Failure> {
    let filter =
        Filter::parse(text).map_err(|e| Failure::Usage(format!("bad --where {text:?}: {e}")))?;
    let schema = table_schema(table, sidecar, "--where")?;
    let predicate = PartitionPredicate::new(&schema, &filter)
        .map_err(|e| Failure::Usage(format!("bad --where {text:?}: {e}")))?;
    Ok(PartitionFilter::Where(predicate))
}

/// The schema of `table`, or of the table the sidecar lies in (`TABLE/manifest/…`), at its
/// latest snapshot; `what` names the option that needs it.
fn table_schema(table: Option<&Path>, sidecar: &Path, what: &str) -> Result<TableSchema, Failure> {
    // The sidecar's own table: TABLE/manifest/M.avro.sidecar.
    let beside = sidecar
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == "manifest"))
        .and_then(Path::parent);
    let Some(dir) = table.or(beside) else {
        return Err(Failure::Usage(format!(
            "{what} needs the table's schema: give --table DIR"
        )));
    };
    let fail = crate::scan::failure;
    let t = Table::open(dir).map_err(fail)?;
    let schema_id = match t.latest_snapshot_id().map_err(fail)? {
        Some(id) => t.snapshot(id).map_err(fail)?.schema_id,
        None => 0,
    };
    t.schema(schema_id).map_err(fail)
}

fn open<'a>(
    path: &Path,
    bytes: &'a [u8],
    facts: Option<ManifestFacts>,
) -> Result<Sidecar<'a>, Failure> {
    Sidecar::parse_with(bytes, &SidecarOptions { facts })
        .map_err(|e| Failure::invalid(path.display(), e))
}

fn unhex(text: &str) -> Result<Vec<u8>, Failure> {
    let bad = || Failure::Usage(format!("bad partition hex {text:?}"));
    if !text.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(bad)
        })
        .collect()
}

fn inspect(path: &Path, facts: Option<ManifestFacts>, json: bool) -> CliResult {
    let bytes = crate::util::read_owned(path)?;
    let s = open(path, &bytes, facts)?;
    let mut blocks = Vec::new();
    for b in s.blocks() {
        let ids = b
            .partition_ids()
            .map(|it| it.collect::<Result<Vec<u32>, _>>())
            .transpose()
            .map_err(|e| Failure::invalid(path.display(), e))?;
        let rows = b
            .row_ids()
            .map(|it| it.collect::<Result<Vec<(u64, u64)>, _>>())
            .transpose()
            .map_err(|e| Failure::invalid(path.display(), e))?;
        let buckets = b
            .buckets()
            .map(|it| it.collect::<Result<Vec<(i32, i32)>, _>>())
            .transpose()
            .map_err(|e| Failure::invalid(path.display(), e))?;
        blocks.push((b, ids, rows, buckets));
    }
    if json {
        let value = serde_json::json!({
            "layout": s.layout().name(),
            "size": bytes.len(),
            "manifest_length": s.manifest_length(),
            "entry_count": s.entry_count(),
            "avro_header_length": s.avro_header().len(),
            "partitions": s.partitions().map(hex).collect::<Vec<_>>(),
            "blocks": blocks.iter().map(|(b, ids, rows, buckets)| serde_json::json!({
                "offset": b.offset,
                "length": b.length,
                "first_record": b.first_record,
                "record_count": b.record_count,
                "encodings": b.encodings(),
                "partition_ids": ids,
                "row_ranges": rows,
                "bucket_pairs": buckets,
            })).collect::<Vec<_>>(),
        });
        outln!("{value}");
        return Ok(());
    }
    outln!(
        "{}: {} layout, {} bytes; manifest {} bytes, {} entries; Avro header {} bytes",
        path.display(),
        s.layout().name(),
        bytes.len(),
        s.manifest_length(),
        s.entry_count(),
        s.avro_header().len()
    );
    outln!("partitions: {}", s.partition_count());
    for (id, t) in s.partitions().enumerate() {
        outln!("  [{id}] {}", hex(t));
    }
    outln!("blocks: {}", s.block_count());
    for (b, ids, rows, buckets) in &blocks {
        outln!(
            "  #{} offset {} length {} records {}..{}",
            b.id,
            b.offset,
            b.length,
            b.first_record,
            b.first_record + b.record_count
        );
        match ids {
            Some(ids) => outln!("    partitions {ids:?}"),
            None => outln!("    partitions: unavailable"),
        }
        match rows {
            Some(r) => outln!("    row ids {r:?}"),
            None => outln!("    row ids: unavailable"),
        }
        match buckets {
            Some(p) => outln!("    buckets {p:?}"),
            None => outln!("    buckets: unavailable"),
        }
    }
    Ok(())
}

/// `B/T` (exact pair) or `B` (any total).
fn parse_bucket(text: &str) -> Result<(i32, Option<i32>), Failure> {
    let bad = || Failure::Usage(format!("bad bucket {text:?}: expected B/T or B"));
    match text.split_once('/') {
        Some((b, t)) => Ok((
            b.trim().parse().map_err(|_| bad())?,
            Some(t.trim().parse().map_err(|_| bad())?),
        )),
        None => Ok((text.trim().parse().map_err(|_| bad())?, None)),
    }
}

fn select(
    path: &Path,
    facts: ManifestFacts,
    rows: Option<&str>,
    bucket: Option<&str>,
    partition: Option<&PartitionFilter>,
    json: bool,
) -> CliResult {
    let bytes = crate::util::read_owned(path)?;
    // Selected once: validation is fused into the selection (one walk over the blocks).
    let head = Sidecar::parse_head(&bytes, &SidecarOptions { facts: Some(facts) })
        .map_err(|e| Failure::invalid(path.display(), e))?;
    let mut ranges = rows
        .map(|r| {
            split_list(r)
                .map(|t| parse_range(t).map(|(first, last)| RowRange::new(first, last)))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let buckets = bucket
        .map(|b| {
            split_list(b)
                .map(parse_bucket)
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let mut refused = None;
    let mut by_partition = |t: &[u8]| match partition.map(|filter| filter.matches(t)) {
        Some(Ok(m)) => m,
        Some(Err(e)) => {
            refused.get_or_insert(e);
            false
        }
        None => true,
    };
    let bucket_pred = |b: i32, t: i32| {
        buckets
            .as_deref()
            .is_some_and(|l| lakecore::sidecar::bucket_in(l, b, t))
    };
    let selected = head.select_filtered(
        ranges.as_deref_mut(),
        match partition.is_some() {
            true => Some(&mut by_partition),
            false => None,
        },
        match buckets.is_some() {
            true => Some(&bucket_pred),
            false => None,
        },
    );
    if let Some(e) = refused {
        return Err(e);
    }
    let (s, selected) = selected.map_err(|e| Failure::invalid(path.display(), e))?;
    if json {
        let mut out = format!("{{\"layout\":\"{}\",\"blocks\":[", s.layout().name());
        for (i, b) in selected.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(
                out,
                "{{\"offset\":{},\"length\":{},\"first_record\":{},\"record_count\":{}}}",
                b.offset, b.length, b.first_record, b.record_count
            );
        }
        out.push_str("]}");
        outln!("{out}");
    } else {
        outln!(
            "{} of {} blocks selected ({} layout)",
            selected.len(),
            s.block_count(),
            s.layout().name()
        );
        for b in &selected {
            outln!(
                "  #{} offset {} length {} records {}..{}",
                b.id,
                b.offset,
                b.length,
                b.first_record,
                b.first_record + b.record_count
            );
        }
    }
    Ok(())
}

fn build(manifest: &Path, layout: LayoutArg, rows: bool, buckets: bool, out: &Path) -> CliResult {
    refuse_output_over_input(out, &[manifest])?;
    let bytes = read(manifest)?;
    let settings = BuildSettings {
        layout: match layout {
            LayoutArg::Fixed => Layout::Fixed,
            LayoutArg::Compact => Layout::Compact,
        },
        row_ids: rows,
        buckets,
    };
    let sidecar = build_from_manifest(&bytes, settings)
        .map_err(|e| Failure::invalid(manifest.display(), e))?;
    write_atomic(out, &sidecar)?;
    let s = Sidecar::parse(&sidecar).map_err(|e| Failure::invalid(out.display(), e))?;
    outln!(
        "{}: {} layout, {} bytes, {} blocks, {} entries, {} partitions",
        out.display(),
        s.layout().name(),
        sidecar.len(),
        s.block_count(),
        s.entry_count(),
        s.partition_count()
    );
    Ok(())
}
