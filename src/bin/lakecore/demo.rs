//! `lakecore demo`: generated data through every format, with throughput figures.
//!
//! Runs without arguments on embedded defaults so a newcomer sees what each layer does. The
//! headline section writes a Paimon table with many manifests and sidecars (see
//! `table_gen`) to a temporary directory (or `--keep DIR`) and plans typical scans with
//! `lakecore::io::scan` exactly as `lakecore scan` does, with and without the sidecars.
//! The other sections: codecs, one sidecar in both layouts, BLOB layers, modular footers.
//! A closing summary repeats the key figures.

use crate::table_gen::{self, Generated, Rng, Spec};
use crate::util::{CliResult, Failure};
use lakecore::codec::bitpack::{self, BitPacked};
use lakecore::codec::varint::{self, DeltaIter, VarintFormat};
use lakecore::io::scan::{DataFile, ScanOptions, ScanQuery, Table};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options of `lakecore demo`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Values in the synthetic delta stream.
    #[arg(long, default_value_t = 4_000_000)]
    pub values: usize,
    /// Manifests in the generated Paimon table.
    #[arg(long, default_value_t = 300)]
    pub manifests: usize,
    /// Keep the generated table in DIR (created; must not exist yet) instead of a temporary
    /// directory, e.g. to run `lakecore scan DIR` on it afterwards.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

/// Key figures collected by the sections for the closing summary.
pub type Summary = Vec<String>;

/// Runs every demo section.
pub fn run(args: &Args) -> CliResult {
    let start = Instant::now();
    println!(
        "lakecore demo (kernels: {})",
        lakecore::arch::active_kernels().name
    );
    let mut summary = Summary::new();
    table_scan(args.manifests, args.keep.as_deref(), &mut summary)?;
    codecs(args.values, &mut summary)?;
    crate::sidecar::demo(50_000, 200, &mut summary)?;
    crate::blob::demo(1_000_000, &mut summary)?;
    crate::footer::demo(&mut summary)?;
    println!("\n== summary ({:.1} s)", start.elapsed().as_secs_f64());
    for line in &summary {
        println!("  {line}");
    }
    Ok(())
}

/// Removes the generated table when dropped (unless kept).
struct TempTable(Option<PathBuf>);

impl Drop for TempTable {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn megabytes(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MB", bytes as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.0} kB", bytes as f64 / 1024.0)
    }
}

/// One timed scan through `lakecore::io::scan` (parallel, as `lakecore scan` runs it):
/// the plan, how many manifests had a block read, and the seconds taken.
fn timed_scan(
    table: &Table,
    query: &ScanQuery,
    read_sidecars: bool,
) -> Result<(lakecore::io::scan::ScanPlan, usize, f64), Failure> {
    let t = Instant::now();
    let prepared = table
        .prepare_with(None, query, ScanOptions { read_sidecars })
        .map_err(crate::scan::failure)?;
    let scans = crate::scan::scan_parallel(&prepared, false).map_err(crate::scan::failure)?;
    let touched = scans.iter().filter(|s| s.blocks_read > 0).count();
    let plan = prepared.finish(scans);
    Ok((plan, touched, t.elapsed().as_secs_f64()))
}

fn file_set(files: &[DataFile]) -> Vec<(&[u8], i32, &str)> {
    files
        .iter()
        .map(|f| (f.partition.as_slice(), f.bucket, f.file_name.as_str()))
        .collect()
}

/// The headline: a generated Paimon table with many manifests, scanned with and without
/// sidecars for typical queries.
fn table_scan(manifests: usize, keep: Option<&Path>, summary: &mut Summary) -> CliResult {
    let spec = Spec {
        manifests: manifests.max(1),
        ..Spec::default()
    };
    println!(
        "\n== table scan: a generated Paimon table with {} manifests, planned by lakecore::io::scan (= `lakecore scan`)",
        spec.manifests
    );
    let (dir, _guard) = match keep {
        Some(dir) => {
            if dir.exists() {
                return Err(Failure::Usage(format!(
                    "--keep {}: already exists",
                    dir.display()
                )));
            }
            (dir.to_path_buf(), TempTable(None))
        }
        None => {
            let dir =
                std::env::temp_dir().join(format!("lakecore-demo-table-{}", std::process::id()));
            (dir.clone(), TempTable(Some(dir)))
        }
    };
    let t = Instant::now();
    let generated: Generated =
        table_gen::generate(&dir, &spec).map_err(|e| Failure::Usage(format!("demo: {e}")))?;
    let gen_s = t.elapsed().as_secs_f64();
    let deletes = generated.entries.iter().filter(|e| e.delete).count();
    let live = generated.live().len();
    println!(
        "generated in {gen_s:.1} s: {} manifests with {} Avro blocks (zstandard), {} entries ({} DELETE), {} live data files, {} row IDs",
        generated.manifests,
        generated.blocks,
        generated.entries.len(),
        deletes,
        live,
        generated.rows
    );
    println!(
        "partitions dt x hr = {} x {}, {} fixed buckets; manifests {} + sidecars {} ({:.1}%), each sidecar named in the manifest list's _EXTRA_FILES",
        spec.days,
        spec.hours.len(),
        spec.buckets,
        megabytes(generated.manifest_bytes),
        megabytes(generated.sidecar_bytes),
        100.0 * generated.sidecar_bytes as f64 / generated.manifest_bytes.max(1) as f64
    );
    println!(
        "each query runs twice: through the sidecars (select the Avro blocks, read only those) and with them switched off (read every manifest in full), best of two runs each:"
    );
    let table = Table::open(&dir).map_err(crate::scan::failure)?;
    // A partition that has data: the one of the middle entry.
    let (day, hour) = generated
        .entries
        .get(generated.entries.len() / 2)
        .map_or_else(|| (table_gen::day_text(0), 0), |e| (e.dt.clone(), e.hr));
    let row_a = (generated.rows / 2).max(0) as u64;
    let queries: Vec<(String, ScanQuery)> = vec![
        (
            format!("--partition dt={day},hr={hour}"),
            ScanQuery {
                partition: vec![("dt".into(), day.clone()), ("hr".into(), hour.to_string())],
                ..ScanQuery::default()
            },
        ),
        (
            format!("--partition dt={day}"),
            ScanQuery {
                partition: vec![("dt".into(), day.clone())],
                ..ScanQuery::default()
            },
        ),
        (
            "--bucket 3".into(),
            ScanQuery {
                buckets: Some(vec![(3, None)]),
                ..ScanQuery::default()
            },
        ),
        (
            format!("--rows {row_a}-{}", row_a + 1_000_000),
            ScanQuery {
                rows: Some(vec![(row_a, row_a + 1_000_000)]),
                ..ScanQuery::default()
            },
        ),
        ("(no filter)".into(), ScanQuery::default()),
    ];
    let mut lines = Vec::new();
    for (name, query) in &queries {
        // Best of two runs each way, sidecars first.
        let (with, touched, t1) = timed_scan(&table, query, true)?;
        let (_, _, t2) = timed_scan(&table, query, true)?;
        let (full, _, f1) = timed_scan(&table, query, false)?;
        let (_, _, f2) = timed_scan(&table, query, false)?;
        let (t_with, t_full) = (t1.min(t2), f1.min(f2));
        let same = file_set(&with.files) == file_set(&full.files);
        if !same {
            return Err(Failure::Usage(format!(
                "demo: {name}: sidecar scan and full read disagree"
            )));
        }
        let s = with.stats;
        let speedup = t_full / t_with.max(1e-9);
        println!(
            "  {name:<28} {:>6} live files (same as full read: {same})",
            with.files.len()
        );
        println!(
            "      sidecars: {touched}/{} manifests, {}/{} blocks, {} of {} manifest bytes (+{} sidecars), {:.0} ms | full read: {:.0} ms ({speedup:.1}x)",
            s.manifests,
            s.blocks_read,
            s.blocks_total,
            megabytes(s.manifest_bytes_read),
            megabytes(full.stats.manifest_bytes_read),
            megabytes(s.sidecar_bytes_read),
            t_with * 1e3,
            t_full * 1e3
        );
        lines.push(format!(
            "scan {name}: {}/{} blocks, {:.0} ms with sidecars vs {:.0} ms full read ({speedup:.1}x), same {} files",
            s.blocks_read,
            s.blocks_total,
            t_with * 1e3,
            t_full * 1e3,
            with.files.len()
        ));
    }
    summary.push(format!(
        "table: {} manifests, {} blocks, {} entries generated in {gen_s:.1} s",
        generated.manifests,
        generated.blocks,
        generated.entries.len()
    ));
    // The most selective partition query, the row range and the unfiltered overhead.
    for i in [0, 3, 4] {
        if let Some(line) = lines.get(i) {
            summary.push(line.clone());
        }
    }
    if keep.is_some() {
        println!(
            "kept: {} (try `lakecore scan {} --partition dt={day},hr={hour}`)",
            dir.display(),
            dir.display()
        );
    }
    Ok(())
}

fn rate(count: usize, seconds: f64) -> String {
    let per_second = count as f64 / seconds.max(1e-9);
    if per_second >= 1e9 {
        format!("{:.2} G/s", per_second / 1e9)
    } else {
        format!("{:.1} M/s", per_second / 1e6)
    }
}

/// Encodes and decodes a synthetic sorted stream (mostly one-byte deltas) and a bit-packed
/// array, timing the lazy iterator, the bulk decoder and the unpacker.
fn codecs(n: usize, summary: &mut Summary) -> CliResult {
    println!("\n== codecs: delta varints and bit packing ({n} values)");
    let mut rng = Rng::new(42);
    let mut values = Vec::with_capacity(n);
    let mut v = 0u64;
    for _ in 0..n {
        // 7 in 8 deltas fit in one byte, the rest take two or three.
        let r = rng.next_u64();
        v += if r & 7 == 0 {
            (r >> 8) % 100_000
        } else {
            (r >> 8) % 128
        };
        values.push(v);
    }
    let mut stream = Vec::new();
    varint::push_deltas(&mut stream, 0, &values)
        .map_err(|e| crate::util::Failure::invalid("demo", e))?;
    println!(
        "encoded {} values into {} bytes ({:.2} B/value)",
        n,
        stream.len(),
        stream.len() as f64 / n as f64
    );

    let start = Instant::now();
    let mut sum = 0u64;
    for item in DeltaIter::new(&stream, 0, VarintFormat::SIDECAR).with_count(n as u64) {
        sum = sum.wrapping_add(item.map_err(|e| crate::util::Failure::invalid("demo", e))?);
    }
    let lazy = start.elapsed().as_secs_f64();
    black_box(sum);

    // Filled, not zeroed: a zeroed Vec is lazily mapped, and page faults would be timed.
    let mut out = vec![u64::MAX; n];
    let start = Instant::now();
    let mut it = DeltaIter::new(&stream, 0, VarintFormat::SIDECAR).with_count(n as u64);
    it.decode_into(&mut out)
        .map_err(|e| crate::util::Failure::invalid("demo", e))?;
    let bulk = start.elapsed().as_secs_f64();
    let checked = out == values;
    println!(
        "lazy DeltaIter:  {}  |  bulk decode_into: {}  |  round trip equal: {checked}",
        rate(n, lazy),
        rate(n, bulk)
    );

    let width = 17u8;
    let packed_values: Vec<u64> = values.iter().map(|v| v & ((1 << width) - 1)).collect();
    let packed = bitpack::pack(&packed_values, width)
        .map_err(|e| crate::util::Failure::invalid("demo", e))?;
    let view =
        BitPacked::new(&packed, width, n).map_err(|e| crate::util::Failure::invalid("demo", e))?;
    let mut unpacked = vec![u64::MAX; n];
    let start = Instant::now();
    view.unpack_u64(0, &mut unpacked)
        .map_err(|e| crate::util::Failure::invalid("demo", e))?;
    let unpack = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let mut acc = 0u64;
    let mut index = 0usize;
    for _ in 0..n {
        index = (index + 7919) % n;
        acc = acc.wrapping_add(view.get(index).unwrap_or(0));
    }
    let random = start.elapsed().as_secs_f64();
    black_box(acc);
    println!(
        "bit-unpack width {width}: {}  |  random get(i): {:.2} ns/lookup  |  round trip equal: {}",
        rate(n, unpack),
        random * 1e9 / n as f64,
        unpacked == packed_values
    );
    summary.push(format!(
        "codecs: delta varints {} (lazy) / {} (bulk), bit-unpack {}",
        rate(n, lazy),
        rate(n, bulk),
        rate(n, unpack)
    ));
    Ok(())
}
