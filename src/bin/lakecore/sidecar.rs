//! `lakecore sidecar …`: inspect, select from and build Paimon manifest sidecars, and the
//! sidecar section of `lakecore demo`.

use crate::util::{parse_range, split_list, CliResult, Failure};
use lakecore::codec::avro::Container;
use lakecore::paimon::manifest::build_from_manifest;
use lakecore::sidecar::{
    BuildSettings, Layout, ManifestFacts, PartitionMask, Query, RowRanges, Sidecar,
};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

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
        /// The `.avro.sidecar` file.
        sidecar: PathBuf,
        /// The manifest's size in bytes.
        #[arg(long)]
        manifest_size: u64,
        /// The manifest's entry count (ADD + DELETE).
        #[arg(long)]
        entries: u64,
        /// Inclusive row-ID ranges `A-B[,A-B...]` (`--rows=` is the empty list).
        #[arg(long)]
        rows: Option<String>,
        /// Buckets `B/T` (that pair) or `B` (any total), comma-separated.
        #[arg(long)]
        bucket: Option<String>,
        /// Partitions as `_PARTITION` hex strings, comma-separated.
        #[arg(long)]
        partition: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Build the sidecar of a manifest file.
    Build {
        /// The Avro manifest file.
        manifest: PathBuf,
        /// Container layout.
        #[arg(long, value_enum, default_value_t = LayoutArg::Fixed)]
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
            json,
        } => select(
            sidecar,
            ManifestFacts {
                length: *manifest_size,
                entries: *entries,
            },
            rows.as_deref(),
            bucket.as_deref(),
            partition.as_deref(),
            *json,
        ),
        SidecarCommand::Build {
            manifest,
            layout,
            no_row_ids,
            no_buckets,
            out,
        } => build(manifest, *layout, !*no_row_ids, !*no_buckets, out),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure::io(path.display(), e))
}

fn open<'a>(
    path: &Path,
    bytes: &'a [u8],
    facts: Option<ManifestFacts>,
) -> Result<Sidecar<'a>, Failure> {
    match facts {
        Some(f) => Sidecar::validate(bytes, f),
        None => Sidecar::validate_self_described(bytes),
    }
    .map_err(|e| Failure::invalid(path.display(), e))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
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
    let bytes = read(path)?;
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
        println!("{value}");
        return Ok(());
    }
    println!(
        "{}: {} layout, {} bytes; manifest {} bytes, {} entries; Avro header {} bytes",
        path.display(),
        s.layout().name(),
        bytes.len(),
        s.manifest_length(),
        s.entry_count(),
        s.avro_header().len()
    );
    println!("partitions: {}", s.partition_count());
    for (id, t) in s.partitions().enumerate() {
        println!("  [{id}] {}", hex(t));
    }
    println!("blocks: {}", s.block_count());
    for (b, ids, rows, buckets) in &blocks {
        println!(
            "  #{} offset {} length {} records {}..{}",
            b.id,
            b.offset,
            b.length,
            b.first_record,
            b.first_record + b.record_count
        );
        match ids {
            Some(ids) => println!("    partitions {ids:?}"),
            None => println!("    partitions: unavailable"),
        }
        match rows {
            Some(r) => println!("    row ids {r:?}"),
            None => println!("    row ids: unavailable"),
        }
        match buckets {
            Some(p) => println!("    buckets {p:?}"),
            None => println!("    buckets: unavailable"),
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
    partition: Option<&str>,
    json: bool,
) -> CliResult {
    let bytes = read(path)?;
    let s = open(path, &bytes, Some(facts))?;
    let mut ranges = rows
        .map(|r| {
            split_list(r)
                .map(parse_range)
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
    let partitions = partition
        .map(|p| split_list(p).map(unhex).collect::<Result<Vec<_>, _>>())
        .transpose()?;
    let mask = partitions
        .as_ref()
        .map(|wanted| s.partition_mask_vec(|t| wanted.iter().any(|w| w == t)));
    let bucket_pred = |b: i32, t: i32| {
        buckets.as_ref().is_some_and(|l| {
            l.iter()
                .any(|&(wb, wt)| wb == b && wt.is_none_or(|wt| wt == t))
        })
    };
    let mut q = Query::new();
    if let Some(r) = ranges.as_mut() {
        q = q.rows(RowRanges::normalize(r));
    }
    if let Some(m) = mask.as_ref() {
        q = q.partitions(PartitionMask::new(m));
    }
    if buckets.is_some() {
        q = q.buckets(&bucket_pred);
    }
    let selected = s
        .select(&q)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure::invalid(path.display(), e))?;
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
        println!("{out}");
    } else {
        println!(
            "{} of {} blocks selected ({} layout)",
            selected.len(),
            s.block_count(),
            s.layout().name()
        );
        for b in &selected {
            println!(
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
    let bytes = read(manifest)?;
    let settings = BuildSettings {
        layout: match layout {
            LayoutArg::Fixed => Layout::Fixed,
            LayoutArg::Compact => Layout::Compact,
        },
        row_ids: rows,
        buckets,
        write: true,
    };
    let sidecar = build_from_manifest(&bytes, settings)
        .map_err(|e| Failure::invalid(manifest.display(), e))?
        .unwrap_or_default();
    std::fs::write(out, &sidecar).map_err(|e| Failure::io(out.display(), e))?;
    let s = Sidecar::validate_self_described(&sidecar)
        .map_err(|e| Failure::invalid(out.display(), e))?;
    println!(
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

/// The demo section: a synthetic manifest (real Avro, many blocks), its sidecars in both
/// layouts, mapped from disk, and timed selections.
pub fn demo(entries: usize, per_block: usize, summary: &mut crate::demo::Summary) -> CliResult {
    use apache_avro::types::Value;
    use lakecore::paimon::synth::Rng;
    println!("\n== sidecar: synthetic manifest, {entries} entries, {per_block} per block");
    let schema_text = r#"{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[
        {"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},
        {"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},
        {"name":"_TOTAL_BUCKETS","type":"int"},
        {"name":"_FILE","type":{"type":"record","name":"file","fields":[
            {"name":"_FILE_NAME","type":"string"},{"name":"_ROW_COUNT","type":"long"},
            {"name":"_FIRST_ROW_ID","type":["null","long"],"default":null}]}}]}"#;
    let fail = |what: &str| Failure::Usage(format!("demo: {what}"));
    let schema = apache_avro::Schema::parse_str(schema_text).map_err(|_| fail("schema"))?;
    let mut writer = apache_avro::Writer::with_codec(&schema, Vec::new(), apache_avro::Codec::Null);
    let mut rng = Rng::new(7);
    let mut next_row = 0i64;
    let t0 = Instant::now();
    for i in 0..entries {
        // 28 date partitions, entries grouped by date as writers produce them; the date is
        // one 10-byte string field (in the row's variable part).
        let day = format!("2024-03-{:02}", 1 + i * 28 / entries.max(1));
        let mut partition = vec![0, 0, 0, 1];
        partition.extend_from_slice(&[0u8; 8]);
        partition.extend_from_slice(&((16u64 << 32) | 10).to_le_bytes());
        partition.extend_from_slice(day.as_bytes());
        partition.extend_from_slice(&[0u8; 6]);
        let rows = 1 + (rng.next_u64() % 5000) as i64;
        let record = Value::Record(vec![
            ("_VERSION".into(), Value::Int(2)),
            ("_KIND".into(), Value::Int(0)),
            ("_PARTITION".into(), Value::Bytes(partition)),
            ("_BUCKET".into(), Value::Int((rng.next_u64() % 16) as i32)),
            ("_TOTAL_BUCKETS".into(), Value::Int(16)),
            (
                "_FILE".into(),
                Value::Record(vec![
                    (
                        "_FILE_NAME".into(),
                        Value::String(format!("data-{i}.parquet")),
                    ),
                    ("_ROW_COUNT".into(), Value::Long(rows)),
                    (
                        "_FIRST_ROW_ID".into(),
                        Value::Union(1, Box::new(Value::Long(next_row))),
                    ),
                ]),
            ),
        ]);
        next_row += rows;
        writer.append(record).map_err(|_| fail("append"))?;
        if (i + 1) % per_block.max(1) == 0 {
            writer.flush().map_err(|_| fail("flush"))?;
        }
    }
    let manifest = writer.into_inner().map_err(|_| fail("finish"))?;
    let container =
        Container::parse(&manifest).map_err(|e| Failure::invalid("demo manifest", e))?;
    let blocks = container.blocks().count();
    println!(
        "manifest: {} bytes, {} Avro blocks, {} rows, written in {:.1} ms",
        manifest.len(),
        blocks,
        next_row,
        t0.elapsed().as_secs_f64() * 1e3
    );
    let dir = std::env::temp_dir().join(format!("lakecore-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Failure::io(dir.display(), e))?;
    let facts = ManifestFacts {
        length: manifest.len() as u64,
        entries: entries as u64,
    };
    for layout in [Layout::Fixed, Layout::Compact] {
        let settings = BuildSettings {
            layout,
            ..BuildSettings::default()
        };
        let t = Instant::now();
        let bytes = build_from_manifest(&manifest, settings)
            .map_err(|e| Failure::invalid("demo manifest", e))?
            .unwrap_or_default();
        let build_ms = t.elapsed().as_secs_f64() * 1e3;
        let path = dir.join(format!("manifest-demo.{}.avro.sidecar", layout.name()));
        std::fs::write(&path, &bytes).map_err(|e| Failure::io(path.display(), e))?;
        // SAFETY: the file was just written by this process and nobody modifies it while
        // mapped (it is removed after the map is dropped).
        #[allow(unsafe_code)]
        let map =
            unsafe { lakecore::io::map_file(&path) }.map_err(|e| Failure::io(path.display(), e))?;
        let t = Instant::now();
        let s = Sidecar::validate(&map, facts).map_err(|e| Failure::invalid(path.display(), e))?;
        let validate_us = t.elapsed().as_secs_f64() * 1e6;
        if layout == Layout::Compact {
            summary.push(format!(
                "sidecar: {} layout {:.1}% of a {} kB manifest, mapped + validated in {validate_us:.0} µs",
                layout.name(),
                100.0 * map.len() as f64 / manifest.len() as f64,
                manifest.len() / 1024
            ));
        }
        println!(
            "{:>7} sidecar: {} bytes ({:.1}% of the manifest), built in {:.1} ms, mapped + validated in {:.0} µs",
            layout.name(),
            map.len(),
            100.0 * map.len() as f64 / manifest.len() as f64,
            build_ms,
            validate_us
        );
        let probe = (next_row / 3) as u64;
        let mut ranges = [(probe, probe)];
        let mask = s.partition_mask_vec(|t| {
            lakecore::sidecar::BinaryRow::from_partition(t, 0)
                .and_then(|row| row.get_str(0))
                .is_ok_and(|day| day == Some("2024-03-07"))
        });
        let bucket5 = |b: i32, _t: i32| b == 5;
        let queries: [(&str, Query<'_>); 3] = [
            (
                "row id point",
                Query::new().rows(RowRanges::normalize(&mut ranges)),
            ),
            (
                "partition dt=2024-03-07",
                Query::new().partitions(PartitionMask::new(&mask)),
            ),
            ("bucket 5", Query::new().buckets(&bucket5)),
        ];
        for (name, q) in &queries {
            let t = Instant::now();
            let mut kept = 0usize;
            let mut bytes_kept = 0u64;
            for b in s.select(q) {
                let b = b.map_err(|e| Failure::invalid(path.display(), e))?;
                kept += 1;
                bytes_kept += b.length;
            }
            println!(
                "    select {:<24} {:>5}/{} blocks, {:>9} manifest bytes to read, {:.1} µs",
                name,
                kept,
                s.block_count(),
                bytes_kept,
                t.elapsed().as_secs_f64() * 1e6
            );
        }
        drop(map);
        let _ = std::fs::remove_file(&path);
    }
    let _ = std::fs::remove_dir(&dir);
    Ok(())
}
