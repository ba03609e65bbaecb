//! Sidecar benchmarks: open + validate a 16 MiB sidecar against hashing the same bytes with
//! its checksum alone (`sha2` for the fixed layout, `crc32fast` for the compact one), and a
//! row-ID selection walking 100k blocks (bytes of sidecar walked per second).
//!
//! Inputs are generated deterministically with the crate's builder: blocks of 20 entries whose
//! row ranges leave gaps (20 intervals per block), 5 partitions and up to 8 bucket pairs each.
//! The row-ID selection also runs on the shape of 100k blocks of 3 entries each
//! (`sidecar_select_rows_100k_blocks_x3`).
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lakecore::sidecar::{
    BuildSettings, EntryCoverage, Layout, ManifestFacts, Query, RowRange, RowRanges, Sidecar,
    SidecarBuilder, SidecarOptions,
};
use sha2::Digest;
use std::hint::black_box;

use lakecore_testkit::rng::Rng;

/// A sidecar of `blocks` blocks of `per_block` entries; returns the bytes and the manifest
/// facts.
fn generate(layout: Layout, blocks: usize, per_block: usize) -> (Vec<u8>, ManifestFacts) {
    let mut rng = Rng::star(0x1234_5678);
    let header = {
        let mut h = b"Obj\x01".to_vec();
        h.resize(64, 0);
        h
    };
    let partitions: Vec<Vec<u8>> = (0..64u64)
        .map(lakecore_testkit::sidecar::long_tuple)
        .collect();
    let settings = BuildSettings {
        layout,
        ..BuildSettings::default()
    };
    let mut b = SidecarBuilder::new(settings, &header);
    let mut offset = header.len() as u64;
    let mut row = 0i64;
    let mut entries = 0u64;
    for i in 0..blocks {
        let len = 4000 + rng.next_u64() % 4000;
        b.begin_block(offset, len).unwrap();
        for _ in 0..per_block {
            let count = 1 + (rng.next_u64() % 300) as i64;
            let p = &partitions[(i / 8 + (rng.next_u64() % 5) as usize) % partitions.len()];
            b.add(EntryCoverage {
                partition: Some(p),
                bucket: Some((rng.next_u64() % 8) as i32),
                total_buckets: Some(8),
                first_row_id: Some(row),
                row_count: count,
            })
            .unwrap();
            row += count + 1 + (rng.next_u64() % 50) as i64; // a gap after each file
            entries += 1;
        }
        b.end_block().unwrap();
        offset += len;
    }
    let bytes = b.finish(offset).unwrap();
    (
        bytes,
        ManifestFacts {
            length: offset,
            entries,
        },
    )
}

/// Finds a block count whose sidecar is at least `target` bytes.
fn generate_at_least(layout: Layout, target: usize) -> (Vec<u8>, ManifestFacts) {
    let (probe, _) = generate(layout, 1000, 20);
    let blocks = target.div_ceil(probe.len() / 1000) + 16;
    generate(layout, blocks, 20)
}

fn open_validate(c: &mut Criterion) {
    let mut g = c.benchmark_group("sidecar_open_validate_16MiB");
    for layout in [Layout::Fixed, Layout::Compact] {
        let (bytes, facts) = generate_at_least(layout, 16 << 20);
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(
            BenchmarkId::new("lakecore_validate", layout.name()),
            &bytes,
            |b, bytes| {
                b.iter(|| {
                    Sidecar::parse_with(black_box(bytes), &SidecarOptions { facts: Some(facts) })
                        .unwrap()
                        .block_count()
                })
            },
        );
        g.bench_with_input(
            BenchmarkId::new("lakecore_parse_parallel", layout.name()),
            &bytes,
            |b, bytes| {
                b.iter(|| {
                    Sidecar::parse_parallel(
                        black_box(bytes),
                        &SidecarOptions { facts: Some(facts) },
                    )
                    .unwrap()
                    .block_count()
                })
            },
        );
        match layout {
            Layout::Fixed => g.bench_with_input(
                BenchmarkId::new("sha2_only", layout.name()),
                &bytes,
                |b, bytes| b.iter(|| sha2::Sha256::digest(black_box(&bytes[..bytes.len() - 32]))),
            ),
            Layout::Compact => g.bench_with_input(
                BenchmarkId::new("crc32fast_only", layout.name()),
                &bytes,
                |b, bytes| b.iter(|| crc32fast::hash(black_box(&bytes[..bytes.len() - 4]))),
            ),
        };
    }
    g.finish();
}

fn select_rows(c: &mut Criterion) {
    select_rows_of(c, "sidecar_select_rows_100k_blocks", 20, "select_100k");
    select_rows_of(c, "sidecar_select_rows_100k_blocks_x3", 3, "select_100k_x3");
}

/// The row-ID selections on 100k blocks of `per_block` entries; the compact sidecar is dumped
/// as `dump.*` for `benches/pypaimon_select.py` when `LAKECORE_DUMP_SIDECAR` names a folder.
fn select_rows_of(c: &mut Criterion, group: &str, per_block: usize, dump: &str) {
    let mut g = c.benchmark_group(group);
    for layout in [Layout::Fixed, Layout::Compact] {
        let (bytes, facts) = generate(layout, 100_000, per_block);
        let s = Sidecar::parse_with(&bytes, &SidecarOptions { facts: Some(facts) }).unwrap();
        // A row range inside block 60 000: every other block is rejected by its envelope.
        let target = s.blocks().nth(60_000).unwrap().row_id_envelope().unwrap().0 + 10;
        if let (Layout::Compact, Some(dir)) = (layout, std::env::var_os("LAKECORE_DUMP_SIDECAR")) {
            dump_for_pypaimon(std::path::Path::new(&dir), dump, &bytes, facts, &s, target);
        }
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(BenchmarkId::new("point_range", layout.name()), |b| {
            b.iter(|| {
                let mut r = [RowRange::new(target, target + 100)];
                let q = Query::new().rows(RowRanges::normalize(&mut r));
                s.select(black_box(&q)).filter(|x| x.is_ok()).count()
            })
        });
        // What pypaimon's `select` does per call: validate (CRC, structure) and select.
        g.bench_function(
            BenchmarkId::new("validate_then_point_range", layout.name()),
            |b| {
                b.iter(|| {
                    let s = Sidecar::parse_with(
                        black_box(&bytes),
                        &SidecarOptions { facts: Some(facts) },
                    )
                    .unwrap();
                    let mut r = [RowRange::new(target, target + 100)];
                    let q = Query::new().rows(RowRanges::normalize(&mut r));
                    s.select(&q).filter(|x| x.is_ok()).count()
                })
            },
        );
        // Many ranges spread over the file: intervals are decoded inside most envelopes.
        let mut spread: Vec<RowRange> = (0..1000u64)
            .map(|i| {
                let blk = s.blocks().nth((i * 97) as usize % 100_000).unwrap();
                let (lo, hi) = blk.row_id_envelope().unwrap();
                RowRange::single(lo + (hi - lo) / 2)
            })
            .collect();
        let spread = RowRanges::normalize(&mut spread).as_slice().to_vec();
        g.bench_function(BenchmarkId::new("1000_point_ranges", layout.name()), |b| {
            b.iter(|| {
                let q = Query::new().rows(RowRanges::new(&spread).unwrap());
                s.select(black_box(&q)).filter(|x| x.is_ok()).count()
            })
        });
    }
    g.finish();
}

/// Writes the compact 100k-block sidecar (`NAME.compact.sidecar`), and its manifest facts,
/// the point-range query and the blocks lakecore selects (`NAME.json`), for
/// `benches/pypaimon_select.py` (same file, same query).
fn dump_for_pypaimon(
    dir: &std::path::Path,
    name: &str,
    bytes: &[u8],
    facts: ManifestFacts,
    s: &Sidecar<'_>,
    target: u64,
) {
    let mut r = [RowRange::new(target, target + 100)];
    let q = Query::new().rows(RowRanges::normalize(&mut r));
    let offsets: Vec<String> = s
        .select(&q)
        .map(|b| b.unwrap().offset.to_string())
        .collect();
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(format!("{name}.compact.sidecar")), bytes).unwrap();
    let meta = format!(
        "{{\"manifest_length\":{},\"entries\":{},\"rows\":[{},{}],\"selected_offsets\":[{}]}}\n",
        facts.length,
        facts.entries,
        target,
        target + 100,
        offsets.join(",")
    );
    std::fs::write(dir.join(format!("{name}.json")), meta).unwrap();
}

criterion_group!(benches, open_validate, select_rows);
criterion_main!(benches);
