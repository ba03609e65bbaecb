//! Demo section: a generated Paimon table with many manifests, planned with and without sidecars.

use super::Summary;
use crate::util::outln;
use crate::util::{CliResult, Failure};
use lakecore::paimon::synth::{self, Generated, Spec};
use lakecore::paimon::{DataFile, ScanOptions, ScanQuery, Table};
use std::path::{Path, PathBuf};
use std::time::Instant;

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

/// One timed scan through `lakecore::paimon`: the manifests in parallel through one
/// [`ManifestScanner`](lakecore::paimon::ManifestScanner), as `lakecore scan` scans them,
/// but each manifest's result kept until the end (to count the manifests that had a block
/// read) instead of reconciled as it comes. Returns the plan, that count and the seconds
/// taken.
fn timed_scan(
    table: &Table,
    query: &ScanQuery,
    read_sidecars: bool,
) -> Result<(lakecore::paimon::ScanPlan, usize, f64), Failure> {
    let t = Instant::now();
    let prepared = table
        .prepare_with(
            None,
            query,
            ScanOptions {
                read_sidecars,
                ..ScanOptions::default()
            },
        )
        .map_err(crate::scan::failure)?;
    let scans = crate::scan::scan_parallel(&prepared, false).map_err(crate::scan::failure)?;
    let touched = scans.iter().filter(|s| s.blocks_read > 0).count();
    let plan = prepared.finish(scans);
    Ok((plan, touched, t.elapsed().as_secs_f64()))
}

fn file_set(files: &[DataFile]) -> Vec<(&[u8], i32, &str)> {
    files
        .iter()
        .map(|f| (&*f.partition, f.bucket, &*f.file_name))
        .collect()
}

/// The headline: a generated Paimon table with many manifests, scanned with and without
/// sidecars for typical queries.
pub(super) fn run(manifests: usize, keep: Option<&Path>, summary: &mut Summary) -> CliResult {
    let spec = Spec {
        manifests: manifests.max(1),
        ..Spec::default()
    };
    outln!(
        "\n== table scan: a generated Paimon table with {} manifests, planned by lakecore::paimon (= `lakecore scan`)",
        spec.manifests
    );
    // `--keep DIR`: the table is built and planned in a temporary sibling of DIR and renamed
    // into place only when the demo succeeded, so DIR is either the whole table or absent.
    let (dir, mut guard) = match keep {
        Some(dir) => {
            if dir.exists() {
                return Err(Failure::Usage(format!(
                    "--keep {}: already exists",
                    dir.display()
                )));
            }
            let name = dir.file_name().ok_or_else(|| {
                Failure::Usage(format!("--keep {}: not a directory name", dir.display()))
            })?;
            let mut tmp_name = std::ffi::OsString::from(".");
            tmp_name.push(name);
            tmp_name.push(format!(".lakecore-tmp-{}", std::process::id()));
            let tmp = dir.with_file_name(tmp_name);
            (tmp.clone(), TempTable(Some(tmp)))
        }
        None => {
            let dir =
                std::env::temp_dir().join(format!("lakecore-demo-table-{}", std::process::id()));
            (dir.clone(), TempTable(Some(dir)))
        }
    };
    let t = Instant::now();
    let generated: Generated =
        synth::generate(&dir, &spec).map_err(|e| Failure::Usage(format!("demo: {e}")))?;
    let gen_s = t.elapsed().as_secs_f64();
    let deletes = generated.entries.iter().filter(|e| e.delete).count();
    let live = generated.live().len();
    outln!(
        "generated in {gen_s:.1} s: {} manifests with {} Avro blocks (zstandard), {} entries ({} DELETE), {} live data files, {} row IDs",
        generated.manifests,
        generated.blocks,
        generated.entries.len(),
        deletes,
        live,
        generated.rows
    );
    outln!(
        "partitions dt x hr = {} x {}, {} fixed buckets; manifests {} + sidecars {} ({:.1}%), each sidecar named in the manifest list's _EXTRA_FILES",
        spec.days,
        spec.hours.len(),
        spec.buckets,
        megabytes(generated.manifest_bytes),
        megabytes(generated.sidecar_bytes),
        100.0 * generated.sidecar_bytes as f64 / generated.manifest_bytes.max(1) as f64
    );
    outln!(
        "each query runs twice: through the sidecars (select the Avro blocks, read only those) and with them switched off (read every manifest in full), best of two runs each:"
    );
    let table = Table::open(&dir).map_err(crate::scan::failure)?;
    // A partition that has data: the one of the middle entry.
    let (day, hour) = generated
        .entries
        .get(generated.entries.len() / 2)
        .map_or_else(|| (synth::day_text(0), 0), |e| (e.dt.clone(), e.hr));
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
        outln!(
            "  {name:<28} {:>6} live files (same as full read: {same})",
            with.files.len()
        );
        outln!(
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
    if let Some(kept) = keep {
        std::fs::rename(&dir, kept).map_err(|error| Failure::Io {
            context: format!("moving the demo table into {}", kept.display()),
            error,
        })?;
        guard.0 = None;
        outln!(
            "kept: {} (try `lakecore scan {} --partition dt={day},hr={hour}`)",
            kept.display(),
            kept.display()
        );
    }
    Ok(())
}
