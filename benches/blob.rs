//! BLOB benchmarks: index decode + validation of a 1M-row file (rows/s), the three-layer
//! fallback merge over 1M rows (rows/s), verify mode over a 256 MiB file against `crc32fast`
//! alone on the same bytes (bytes/s). Inputs are seeded; run with `cargo bench --bench blob`.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lakecore::blob::{BlobFile, BlobWriter, FallbackMerge, LayerFile, MergeOptions};
use lakecore::codec::varint::{DeltaIter, VarintFormat};
use std::hint::black_box;

const ROWS: u64 = 1_000_000;

use lakecore_testkit::rng::Rng;

/// A file of `rows` rows: 1 in `keep` rows is a value (8..72 bytes) or a null, the rest
/// placeholders.
fn layer(rows: u64, keep: u64, seed: u64) -> Vec<u8> {
    let mut rng = Rng::xorshift(seed);
    let payload = [0xa5u8; 72];
    let mut w = BlobWriter::new(Vec::new());
    for _ in 0..rows {
        let r = rng.next_u64();
        if !r.is_multiple_of(keep) {
            w.put_placeholder().unwrap();
        } else if r & 0x300 == 0 {
            w.put_null().unwrap();
        } else {
            w.put_value(&payload[..8 + (r >> 20) as usize % 64])
                .unwrap();
        }
    }
    w.finish().unwrap()
}

fn validation(c: &mut Criterion) {
    let bytes = layer(ROWS, 1, 1);
    let file = BlobFile::parse(&bytes).unwrap();
    let index = file.index_bytes();
    let mut g = c.benchmark_group("blob_validate_1M_rows");
    g.throughput(Throughput::Elements(ROWS));
    g.bench_function("BlobFile::new", |b| {
        b.iter(|| BlobFile::parse(black_box(&bytes)).unwrap().rows())
    });
    // Baseline: the index decode alone through the bulk varint path.
    let mut out = vec![0i64; ROWS as usize];
    g.bench_function("index decode_into only", |b| {
        b.iter(|| {
            let mut it = DeltaIter::zigzag(black_box(index), 0, VarintFormat::U64).with_count(ROWS);
            it.decode_into(&mut out).unwrap()
        })
    });
    g.bench_function("iterate rows", |b| {
        b.iter(|| {
            file.iter()
                .map(|r| r.payload().map_or(0, <[u8]>::len))
                .sum::<usize>()
        })
    });
    g.finish();
}

fn merge(c: &mut Criterion) {
    let layers = [layer(ROWS, 1, 11), layer(ROWS, 4, 12), layer(ROWS, 16, 13)];
    let mut g = c.benchmark_group("blob_merge_3_layers_1M_rows");
    g.throughput(Throughput::Elements(ROWS));
    // Files are validated once, outside the timed loop (the validation bench covers it).
    let mut files: Vec<LayerFile> = layers
        .iter()
        .enumerate()
        .map(|(i, bytes)| LayerFile {
            file: BlobFile::parse(bytes).unwrap(),
            first_row_id: 0,
            max_sequence_number: i as i64 + 1,
        })
        .collect();
    g.bench_function("FallbackMerge", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for row in FallbackMerge::new(&mut files, MergeOptions::default()).unwrap() {
                n += row.unwrap().value.map_or(1, |p| p.bytes.len());
            }
            n
        })
    });
    // The columnar form: what an engine building binary-view arrays reads per row (entry,
    // winning file, record offset), without a per-row `MergedRow`.
    g.bench_function("FallbackMerge::next_batch", |b| {
        b.iter(|| {
            let mut merge = FallbackMerge::new(&mut files, MergeOptions::default()).unwrap();
            let mut n = 0u64;
            while let Some(batch) = merge.next_batch() {
                let batch = batch.unwrap();
                let columns = batch
                    .entries()
                    .iter()
                    .zip(batch.record_offsets())
                    .zip(batch.file_indexes());
                for ((&entry, &offset), &file) in columns {
                    n = n.wrapping_add(entry as u64 ^ offset ^ file);
                }
            }
            n
        })
    });
    // Baseline: decoding the three indexes alone (what any merge must at least do).
    let indexes: Vec<&[u8]> = files.iter().map(|f| f.file.index_bytes()).collect();
    let mut out = vec![0i64; ROWS as usize];
    g.bench_function("3 index decodes only", |b| {
        b.iter(|| {
            for index in &indexes {
                let mut it = DeltaIter::zigzag(index, 0, VarintFormat::U64).with_count(ROWS);
                it.decode_into(&mut out).unwrap();
            }
        })
    });
    g.finish();
}

fn verify(c: &mut Criterion) {
    // 256 MiB of 64 KiB records.
    const RECORD: usize = 64 << 10;
    let mut rng = Rng::xorshift(99);
    let payload: Vec<u8> = (0..RECORD - 16).map(|_| rng.next_u64() as u8).collect();
    let mut w = BlobWriter::new(Vec::with_capacity(256 << 20));
    for _ in 0..(256 << 20) / RECORD {
        w.put_value(&payload).unwrap();
    }
    let bytes = w.finish().unwrap();
    let file = BlobFile::parse(&bytes).unwrap();
    let mut g = c.benchmark_group("blob_verify_256MiB");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("BlobFile::verify", |b| {
        b.iter(|| file.verify().unwrap().full)
    });
    g.bench_function("crc32fast::hash (peer)", |b| {
        b.iter(|| crc32fast::hash(black_box(&bytes)))
    });
    g.finish();
}

criterion_group!(benches, validation, merge, verify);
criterion_main!(benches);
