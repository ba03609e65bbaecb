//! In-process scan planning (`lakecore::paimon`): `plan` on whole tables, timed by criterion
//! as `benches/plan_peers.py` times the peers' `plan()`: the table opened before each timed
//! call and the plan dropped after it (freeing a million-file plan takes ~0.2 s of its own).
//!
//! Tables: `LAKECORE_PLAN_TABLES=dir[,dir..]` (e.g. the pypaimon-rust tables that
//! `benches/plan_peers.py` writes), else one generated table (`paimon::synth`, 300 manifests,
//! ~110k entries; `LAKECORE_PLAN_MANIFESTS=N` for another size) in a temporary directory.
//! Queries: none, the partition of the middle file (when partitioned), bucket 3, and the
//! middle 1,000 row IDs (when the table tracks row IDs).
//!
//! `cargo bench --bench plan --features paimon`

#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use lakecore::paimon::{synth, ScanQuery, Table};
use std::path::PathBuf;
use std::time::Duration;

struct Dir(PathBuf, bool);

impl Drop for Dir {
    fn drop(&mut self) {
        if self.1 {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn tables() -> Vec<Dir> {
    if let Ok(list) = std::env::var("LAKECORE_PLAN_TABLES") {
        return list
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| Dir(PathBuf::from(s), false))
            .collect();
    }
    let manifests = std::env::var("LAKECORE_PLAN_MANIFESTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let dir = std::env::temp_dir().join(format!("lakecore-plan-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let spec = synth::Spec {
        manifests,
        ..synth::Spec::default()
    };
    synth::generate(&dir, &spec).expect("generate the table");
    vec![Dir(dir, true)]
}

/// The queries for a table, from its latest plan: none, one partition, one bucket, rows.
fn queries(table: &Table) -> Vec<(String, ScanQuery)> {
    let all = table.plan(None, &ScanQuery::default()).expect("plan");
    let mut out = vec![("none".to_string(), ScanQuery::default())];
    let schema = table
        .schema(
            table
                .snapshot(all.snapshot.unwrap_or(0))
                .map_or(0, |s| s.schema_id),
        )
        .ok();
    if let (Some(schema), Some(mid)) = (&schema, all.files.get(all.files.len() / 2)) {
        if !schema.partition_keys.is_empty() {
            if let Ok(row) = lakecore::sidecar::BinaryRow::from_partition(&mid.partition, 0) {
                let mut partition = Vec::new();
                for (i, (key, ty)) in (0u32..).zip(&schema.partition_keys) {
                    let text = match ty {
                        lakecore::paimon::PartitionType::String => {
                            row.get_str(i).ok().flatten().map(str::to_string)
                        }
                        lakecore::paimon::PartitionType::Int
                        | lakecore::paimon::PartitionType::Date => {
                            row.get_i32(i).ok().flatten().map(|v| v.to_string())
                        }
                        lakecore::paimon::PartitionType::BigInt => {
                            row.get_i64(i).ok().flatten().map(|v| v.to_string())
                        }
                        _ => None,
                    };
                    if let Some(t) = text {
                        partition.push((key.clone(), t));
                    }
                }
                if partition.len() == schema.partition_keys.len() {
                    out.push((
                        "one partition".into(),
                        ScanQuery {
                            partition,
                            ..ScanQuery::default()
                        },
                    ));
                }
            }
        }
        out.push((
            "one bucket".into(),
            ScanQuery {
                buckets: Some(vec![(3.min(mid.total_buckets.max(1) - 1), None)]),
                ..ScanQuery::default()
            },
        ));
        if schema.row_tracking {
            if let Some(first) = mid.first_row_id {
                let a = u64::try_from(first).unwrap_or(0);
                out.push((
                    "1000 row IDs".into(),
                    ScanQuery {
                        rows: Some(vec![(a, a + 999)]),
                        ..ScanQuery::default()
                    },
                ));
            }
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    for dir in tables() {
        let name = dir
            .0
            .file_name()
            .map_or_else(|| "table".into(), |n| n.to_string_lossy().into_owned());
        let table = Table::open(&dir.0).expect("open the table");
        let mut group = c.benchmark_group(format!("plan/{name}"));
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(5));
        for (label, query) in queries(&table) {
            let files = table.plan(None, &query).expect("plan").files.len();
            group.bench_function(format!("{label} ({files} files)"), |b| {
                b.iter_batched(
                    || Table::open(&dir.0).expect("open"),
                    |t| t.plan(None, &query).expect("plan"),
                    BatchSize::PerIteration,
                )
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
