//! Reading columns through the modular footer (feature `arrow`) vs the `parquet` crate's
//! standard path, same files, same run, page cache warm (in-memory `Bytes`).
//!
//! Each file is written by the `parquet` crate's `ArrowWriter` (INT64 columns, 20 row groups
//! of 50 rows, statistics and page index on, `ARROW:schema` embedded) and converted with
//! `footer::convert`. Every iteration opens the file and reads the first batch:
//!
//! - `standard/{C}x20/3_columns`: `ParquetRecordBatchReaderBuilder::try_new` (decodes the
//!   whole standard footer), projection of 3 leaves, `build`, first batch.
//! - `modular/{C}x20/3_columns`: `footer::arrow::reader_builder` (opens the modular footer,
//!   builds the projected `ParquetMetaData`), `build`, first batch.
//! - `modular_no_page_index/...`: the same with `Projection::without_page_index` (the
//!   standard path's default reader options load no page index either).
//! - `.../all_columns`: the same with every column (C = 100, 1,000).
//!
//! `C` is 100, 1,000 and 10,000. Byte sizes are printed at start-up.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use lakecore::footer::arrow::{reader_builder, Projection};
use lakecore::footer::convert;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::file::properties::WriterProperties;
use std::hint::black_box;
use std::sync::Arc;

const G: usize = 20;
const ROWS: usize = 50;

fn file(columns: usize) -> Vec<u8> {
    let arrays: Vec<(String, ArrayRef)> = (0..columns)
        .map(|c| {
            let v: Vec<i64> = (0..(G * ROWS) as i64).map(|r| r * 31 + c as i64).collect();
            (format!("c{c}"), Arc::new(Int64Array::from(v)) as ArrayRef)
        })
        .collect();
    let batch = RecordBatch::try_from_iter(arrays).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(ROWS))
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

fn standard(bytes: &Bytes, leaves: &[usize]) -> usize {
    let b = ParquetRecordBatchReaderBuilder::try_new(bytes.clone()).unwrap();
    let mask = ProjectionMask::leaves(b.parquet_schema(), leaves.iter().copied());
    let mut r = b.with_projection(mask).build().unwrap();
    r.next().unwrap().unwrap().num_rows()
}

fn modular(bytes: &Bytes, leaves: &[usize], page_index: bool) -> usize {
    let mut p = Projection::leaves(leaves.iter().copied());
    if !page_index {
        p = p.without_page_index();
    }
    let (b, _) = reader_builder(bytes.clone(), &p).unwrap();
    let mut r = b.build().unwrap();
    r.next().unwrap().unwrap().num_rows()
}

fn bench(c: &mut Criterion) {
    for columns in [100usize, 1_000, 10_000] {
        let std_bytes = Bytes::from(file(columns));
        let mod_bytes = Bytes::from(convert(&std_bytes).unwrap());
        eprintln!(
            "{columns}x{G}: standard file {} bytes, modular file {} bytes",
            std_bytes.len(),
            mod_bytes.len()
        );
        let three = [1, columns / 2, columns - 1];
        let all: Vec<usize> = (0..columns).collect();
        // Same rows either way (checked once, outside the timing).
        assert_eq!(
            standard(&std_bytes, &three),
            modular(&mod_bytes, &three, true)
        );
        let mut g = c.benchmark_group(format!("footer_read/{columns}x{G}"));
        g.sample_size(if columns >= 10_000 { 20 } else { 50 });
        let mut selections: Vec<(&str, &[usize])> = vec![("3_columns", &three)];
        if columns <= 1_000 {
            selections.push(("all_columns", &all));
        }
        for (name, leaves) in selections {
            g.bench_function(BenchmarkId::new("standard", name), |b| {
                b.iter(|| black_box(standard(&std_bytes, leaves)))
            });
            g.bench_function(BenchmarkId::new("modular", name), |b| {
                b.iter(|| black_box(modular(&mod_bytes, leaves, true)))
            });
            // Like the standard path's default: no page index in the metadata.
            g.bench_function(BenchmarkId::new("modular_no_page_index", name), |b| {
                b.iter(|| black_box(modular(&mod_bytes, leaves, false)))
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
