//! A BLOB column read through the table: 1M rows in 3 layers (a base write and two partial
//! updates by row ID, written by pypaimon 2.1.0), rows/s end to end after planning (map,
//! validate against the manifest, merge, hand out every value's slice), the batch form, the
//! bare merge over the same mapped files (the peer in the same run) and planning alone.
//!
//! The table comes from `benches/blob_table_peers.py make target/bench-blob` (pypaimon
//! writes it, so the peer reads the very same files); set `LAKECORE_BLOB_TABLE` to read
//! another. Without it the bench says so and measures nothing.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lakecore::paimon::blob::{BlobColumnRead, ReadOptions};
use lakecore::paimon::{ScanQuery, Table};
use std::hint::black_box;
use std::path::PathBuf;

fn table_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("LAKECORE_BLOB_TABLE").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/target/bench-blob/bench.db/blob3"
            ))
        },
        PathBuf::from,
    );
    if dir.join("snapshot").is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "blob_table: no table at {} (run `python benches/blob_table_peers.py make target/bench-blob`)",
            dir.display()
        );
        None
    }
}

fn table_read(c: &mut Criterion) {
    let Some(dir) = table_dir() else { return };
    let table = Table::open(&dir).unwrap();
    let read = BlobColumnRead::plan(&table, None, &ScanQuery::default(), None).unwrap();
    let rows: u64 = read.bunches().iter().map(|b| b.row_count()).sum();
    let layers = read.bunches()[0].files.len();
    let mut g = c.benchmark_group(format!("blob_table_read_{rows}_rows_{layers}_files"));
    g.throughput(Throughput::Elements(rows));
    g.bench_function("rows", |b| {
        b.iter(|| {
            let mut n = 0u64;
            let mut bytes = 0usize;
            read.for_each_row(ReadOptions::default(), |row| {
                n += 1;
                bytes += row.value.map_or(0, <[u8]>::len);
                Ok::<(), ()>(())
            })
            .unwrap()
            .unwrap();
            assert_eq!(n, rows);
            black_box(bytes)
        })
    });
    g.bench_function("batches", |b| {
        b.iter(|| {
            let mut n = 0usize;
            let mut sum = 0i64;
            read.for_each_batch(ReadOptions::default(), |batch| {
                n += batch.len();
                sum += batch.entries().iter().sum::<i64>();
                Ok::<(), ()>(())
            })
            .unwrap()
            .unwrap();
            black_box((n, sum))
        })
    });
    g.bench_function("map_and_validate", |b| {
        b.iter(|| {
            read.with_bunch(0, ReadOptions::default(), |m, _| black_box(m.files().len()))
                .unwrap()
        })
    });
    // Peer in the same run: the bare merge over the same mapped, validated files (what the
    // table read adds is mapping, validation against the manifest and the row hand-off).
    read.with_bunch(0, ReadOptions::default(), |merge, _| {
        g.bench_function("bare_merge_same_files", |b| {
            b.iter(|| {
                let mut n = 0u64;
                let mut bytes = 0usize;
                for row in merge.clone() {
                    let row = row.unwrap();
                    n += 1;
                    bytes += row.value.map_or(0, |p| p.bytes.len());
                }
                assert_eq!(n, rows);
                black_box(bytes)
            })
        });
    })
    .unwrap();
    g.finish();
    let mut g = c.benchmark_group("blob_table_plan");
    g.bench_function("plan_and_bunch", |b| {
        b.iter(|| {
            let read = BlobColumnRead::plan(&table, None, &ScanQuery::default(), None).unwrap();
            black_box(read.bunches().len())
        })
    });
    g.finish();
}

criterion_group!(benches, table_read);
criterion_main!(benches);
