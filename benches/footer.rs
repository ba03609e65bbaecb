//! Modular footer vs the `parquet` crate's standard footer decoding.
//!
//! - `parquet_decode_standard/10000x20`: `ParquetMetaDataReader::decode_metadata` of a
//!   standard footer of 10,000 INT64 columns x 20 row groups with statistics (the peer).
//! - `modular_open_and_1_column/10000x20`: open the converted modular footer (same file) and
//!   read one column's placement in every row group.
//! - `modular_open_and_all_columns/10000x20`: open and bulk-unpack every placement array
//!   (checked values) through the kernels; `..._per_chunk`: the same with one
//!   `chunk_placement` call per chunk.
//! - `modular_open_and_1_column_scaling/{1000,10000,100000}x20`: placement-only footers, to
//!   show the projected read does not grow with the column count.
//!
//! Byte sizes are printed once at start-up.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lakecore::codec::thrift::{FieldType, Writer};
use lakecore::footer::{
    convert, encode_page, standard_footer_range, synthetic_standard_file, MetadataArray as A,
    ModularFooter, Module, Values,
};
use parquet::file::metadata::ParquetMetaDataReader;
use std::hint::black_box;

const G: u32 = 20;

/// A footer with SCHEMA and PLACEMENT only, assembled from pages (the writer's input
/// structs would need hundreds of MB at 100,000 columns x 20 row groups).
fn placement_only(c: usize, g: usize) -> Vec<u8> {
    let k = c * g;
    let mut out = b"PAR1\0\0\0\0".to_vec();
    let mut dir: Vec<(Module, i32, u64, u64)> = Vec::new();
    let mut w = Writer::new();
    w.struct_begin();
    w.field_list(1, FieldType::Struct, c + 1);
    w.struct_begin();
    w.field_binary(4, b"schema");
    w.field_i32(5, c as i32);
    w.struct_end();
    for i in 0..c {
        w.struct_begin();
        w.field_i32(1, 2);
        w.field_binary(4, format!("c{i}").as_bytes());
        w.struct_end();
    }
    w.struct_end();
    dir.push((Module::Schema, 0, out.len() as u64, w.len() as u64));
    out.extend_from_slice(w.as_bytes());
    let arrays: [(A, Vec<Option<u64>>); 9] = [
        (
            A::DataPageOffset,
            (0..k as u64).map(|i| Some(4 + i * 4096)).collect(),
        ),
        (A::FirstDictionaryPage, (0..=k as u64).map(Some).collect()),
        (
            A::DictionaryPageOffset,
            (0..k as u64)
                .map(|i| Some(4 + i * 4096 - (i > 0) as u64))
                .collect(),
        ),
        (A::TotalCompressedSize, vec![Some(4096); k]),
        (A::TotalUncompressedSize, vec![Some(5000); k]),
        (A::NumValues, vec![Some(100_000); k]),
        (A::Codec, vec![Some(1); k]),
        (A::PhysicalType, vec![Some(2); c]),
        (A::IsFullyDictionaryEncoded, vec![Some(1); k]),
    ];
    let mut locs = Vec::new();
    for (array, vals) in &arrays {
        let page = encode_page(Module::Placement, *array, &Values::Ints(vals), None, true).unwrap();
        locs.push((*array, out.len() as i64, page.len() as i32));
        out.extend_from_slice(&page);
    }
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, 1);
    w.field_i32(2, 1);
    w.field_list(3, FieldType::Struct, locs.len());
    for (a, o, l) in &locs {
        w.struct_begin();
        w.field_i32(1, *a as i32);
        w.field_i32(2, 0);
        w.field_i64(5, *o);
        w.field_i32(6, *l);
        w.struct_end();
    }
    w.struct_end();
    dir.push((Module::Placement, 1, out.len() as u64, w.len() as u64));
    out.extend_from_slice(w.as_bytes());
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, 1);
    w.field_i32(2, g as i32);
    w.field_i32(3, c as i32);
    w.field_i64(4, 100 * g as i64);
    w.field_list(5, FieldType::I64, g);
    for _ in 0..g {
        w.i64(100);
    }
    w.field_list(6, FieldType::Struct, dir.len());
    for (m, e, o, l) in &dir {
        w.struct_begin();
        w.field_i32(1, *m as i32);
        w.field_i32(2, *e);
        w.field_i64(3, *o as i64);
        w.field_i64(4, *l as i64);
        w.struct_end();
    }
    w.struct_end();
    out.extend_from_slice(w.as_bytes());
    out.extend_from_slice(&(w.len() as u32).to_le_bytes());
    out.extend_from_slice(b"PARM");
    out
}

fn read_one_column(file: &[u8], column: u32) -> u64 {
    let f = ModularFooter::parse(file).unwrap();
    let mut sum = 0;
    for g in 0..f.num_row_groups() {
        let p = f.chunk_placement(column, g).unwrap();
        sum += p.data_page_offset + p.total_compressed_size + p.dictionary_pages.len() as u64;
    }
    sum
}

fn bench(c: &mut Criterion) {
    let columns = 10_000usize;
    let standard = synthetic_standard_file(columns, G as usize, 11);
    let (start, len) = standard_footer_range(&standard).unwrap();
    let footer_bytes = &standard[start..start + len];
    let modular = convert(&standard).unwrap();
    let mf = ModularFooter::parse(&modular).unwrap();
    let modular_meta = mf.file_len() - mf.metadata_start();
    // The peer decodes the same metadata: check one chunk agrees.
    let md = ParquetMetaDataReader::decode_metadata(footer_bytes).unwrap();
    let cc = md.row_group(7).column(1234);
    let p = mf.chunk_placement(1234, 7).unwrap();
    assert_eq!(p.data_page_offset as i64, cc.data_page_offset());
    assert_eq!(p.total_uncompressed_size as i64, cc.uncompressed_size());
    eprintln!(
        "sizes at {columns}x{G}: standard footer {len} B, modular metadata {modular_meta} B, ratio {:.3}",
        modular_meta as f64 / len as f64
    );

    let mut group = c.benchmark_group("footer");
    group.throughput(Throughput::Bytes(len as u64));
    group.bench_function(
        BenchmarkId::new("parquet_decode_standard", format!("{columns}x{G}")),
        |b| b.iter(|| ParquetMetaDataReader::decode_metadata(black_box(footer_bytes)).unwrap()),
    );
    group.throughput(Throughput::Elements(u64::from(G)));
    group.bench_function(
        BenchmarkId::new("modular_open_and_1_column", format!("{columns}x{G}")),
        |b| b.iter(|| read_one_column(black_box(&modular), 5_000)),
    );
    group.bench_function(
        BenchmarkId::new("modular_open", format!("{columns}x{G}")),
        |b| {
            b.iter(|| {
                ModularFooter::parse(black_box(&modular))
                    .unwrap()
                    .num_rows()
            })
        },
    );
    group.bench_function(
        BenchmarkId::new("modular_1_column_preopened", format!("{columns}x{G}")),
        |b| {
            b.iter(|| {
                let mut sum = 0u64;
                for g in 0..G {
                    sum += black_box(&mf)
                        .chunk_placement(5_000, g)
                        .unwrap()
                        .data_page_offset;
                }
                sum
            })
        },
    );
    group.throughput(Throughput::Elements(columns as u64 * u64::from(G)));
    group.bench_function(
        BenchmarkId::new("modular_open_and_all_columns", format!("{columns}x{G}")),
        |b| {
            let k = columns * G as usize;
            let mut bufs = vec![vec![0u64; k + 1]; 7];
            b.iter(|| {
                let f = ModularFooter::parse(black_box(&modular)).unwrap();
                let p = f.placement_arrays().unwrap();
                let pages = [
                    p.data_page_offset,
                    p.total_compressed_size,
                    p.total_uncompressed_size,
                    p.num_values,
                    p.codec,
                    p.is_fully_dictionary_encoded,
                ];
                for (page, buf) in pages.iter().zip(bufs.iter_mut()) {
                    page.unpack_checked_u64(0, &mut buf[..k]).unwrap();
                }
                p.first_dictionary_page
                    .unpack_checked_u64(0, &mut bufs[6])
                    .unwrap();
                let d = p.dictionary_page_offset.len();
                let mut dict = vec![0u64; d];
                p.dictionary_page_offset
                    .unpack_checked_u64(0, &mut dict)
                    .unwrap();
                bufs[0][k / 2] + dict.last().copied().unwrap_or(0)
            })
        },
    );
    group.bench_function(
        BenchmarkId::new(
            "modular_open_and_all_columns_per_chunk",
            format!("{columns}x{G}"),
        ),
        |b| {
            b.iter(|| {
                let f = ModularFooter::parse(black_box(&modular)).unwrap();
                let mut sum = 0u64;
                for col in 0..f.num_columns() {
                    for g in 0..f.num_row_groups() {
                        sum = sum.wrapping_add(f.chunk_placement(col, g).unwrap().data_page_offset);
                    }
                }
                sum
            })
        },
    );
    group.throughput(Throughput::Elements(u64::from(G)));
    for cols in [1_000usize, 10_000, 100_000] {
        let file = placement_only(cols, G as usize);
        let f = ModularFooter::parse(&file).unwrap();
        eprintln!(
            "placement-only footer {cols}x{G}: {} B",
            f.file_len() - f.metadata_start()
        );
        group.bench_function(
            BenchmarkId::new("modular_open_and_1_column_scaling", format!("{cols}x{G}")),
            |b| b.iter(|| read_one_column(black_box(&file), (cols / 2) as u32)),
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
