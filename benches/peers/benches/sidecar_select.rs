//! lakecore's sidecar validate + select against paimon-rust 0.4.0's `ManifestSidecar::select`
//! on the same compact-v1 (`PMSC` version 1) bytes, with the same query.
//!
//! Inputs:
//! - `real`: the 19 sidecars under `tests/data/paimon/warehouse/sc.db/*/manifest/`, written by
//!   pypaimon-rust 0.4.0 (paimon-rust). One iteration validates and selects all 19. Each one's
//!   manifest facts (size, entry count) come from the Avro manifest beside it (its length, and
//!   the object counts of its OCF blocks).
//! - `large`: 100 000 blocks x 3 entries with row IDs (gaps between files), 64 partitions,
//!   8 buckets, built with lakecore's `SidecarBuilder` (compact layout) as `benches/sidecar.rs`
//!   builds its inputs. paimon-rust's `select` must accept it (checked before timing).
//!
//! Queries: `point` = one row ID: for `real`, the middle of the sidecar's row-ID span (min
//! first row .. max last row over the blocks' envelopes; sidecars without row coverage get
//! row 0 and keep every block on both sides); for `large`, the first row ID of the middle
//! entry (entry 150 000), so exactly one block matches. `none` = no filter (every block).
//!
//! Timed: lakecore = `Sidecar::parse_with(bytes, facts)` then `select(query)` collected into a
//! `Vec`; `lakecore_fused` = `Sidecar::parse_head` then `select_vec(query)` (validation fused
//! into selection: one walk); `lakecore_par` = the two-pass form with `Sidecar::parse_parallel`
//! (large only; it spawns a thread for the checksum); paimon = `ManifestSidecar::select(bytes, meta, ranges)` (which
//! validates and selects in one pass and returns a `Vec` of blocks plus a copy of the Avro
//! header). Before timing, the selected (offset, length) lists must be equal, or the bench
//! panics.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lakecore::sidecar::{
    BuildSettings, EntryCoverage, Layout, ManifestFacts, Query, RowRange, RowRanges, SelectedBlock,
    Sidecar, SidecarBuilder, SidecarOptions,
};
use paimon::spec::{ManifestFileMeta, ManifestSidecar};
use paimon::table::RowRange as PaimonRange;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One sidecar and what both readers are told about its manifest.
struct Input {
    name: String,
    bytes: Vec<u8>,
    facts: ManifestFacts,
    meta: ManifestFileMeta,
    /// The point query's row ID.
    mid_row: u64,
}

/// paimon's `ManifestFileMeta` through its public constructor. Its `BinaryTableStats` type is
/// not reachable from outside the crate (module `spec::stats` is `pub(crate)`), so empty stats
/// come from its serde form, the type inferred from `ManifestFileMeta::new`'s parameter.
/// `select` reads only the file size and `num_added_files + num_deleted_files`.
fn paimon_meta(name: &str, facts: ManifestFacts) -> ManifestFileMeta {
    let stats =
        serde_json::from_str(r#"{"_MIN_VALUES":[],"_MAX_VALUES":[],"_NULL_COUNTS":[]}"#).unwrap();
    ManifestFileMeta::new(
        name.to_string(),
        facts.length as i64,
        facts.entries as i64,
        0,
        stats,
        0,
    )
}

fn read_varint(b: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let byte = b[*pos];
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return v;
        }
        shift += 7;
    }
}

fn read_long(b: &[u8], pos: &mut usize) -> i64 {
    let z = read_varint(b, pos);
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

/// The entry count of an Avro object container file: the sum of its blocks' object counts.
fn avro_entry_count(b: &[u8]) -> u64 {
    assert_eq!(&b[..4], b"Obj\x01", "not an Avro OCF");
    let mut pos = 4;
    // Metadata map: blocks of (count, [size,] key, value) until a zero count.
    loop {
        let mut n = read_long(b, &mut pos);
        if n == 0 {
            break;
        }
        if n < 0 {
            n = -n;
            read_long(b, &mut pos);
        }
        for _ in 0..n {
            for _ in 0..2 {
                let len = read_long(b, &mut pos) as usize;
                pos += len;
            }
        }
    }
    pos += 16; // sync marker
    let mut entries = 0u64;
    while pos < b.len() {
        entries += read_long(b, &mut pos) as u64;
        let size = read_long(b, &mut pos) as usize;
        pos += size + 16;
    }
    assert_eq!(pos, b.len(), "Avro OCF blocks do not end at the file's end");
    entries
}

/// The middle of the row-ID span the blocks' envelopes cover; 0 when none has row coverage.
fn mid_row(bytes: &[u8], facts: ManifestFacts) -> u64 {
    let s = Sidecar::parse_with(bytes, &SidecarOptions { facts: Some(facts) }).unwrap();
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for b in s.blocks() {
        if let Some((a, z)) = b.row_id_envelope() {
            lo = lo.min(a);
            hi = hi.max(z);
        }
    }
    if lo > hi {
        0
    } else {
        lo + (hi - lo) / 2
    }
}

fn real_inputs() -> Vec<Input> {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/paimon/warehouse/sc.db");
    let mut paths: Vec<PathBuf> = Vec::new();
    for table in std::fs::read_dir(&root).unwrap() {
        let dir = table.unwrap().path().join("manifest");
        let Ok(files) = std::fs::read_dir(&dir) else {
            continue;
        };
        for f in files {
            let p = f.unwrap().path();
            if p.to_str().unwrap().ends_with(".avro.sidecar") {
                paths.push(p);
            }
        }
    }
    paths.sort();
    assert!(!paths.is_empty(), "no sidecars under {}", root.display());
    paths
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            let manifest_path =
                PathBuf::from(p.to_str().unwrap().trim_end_matches(".avro.sidecar"));
            let manifest = std::fs::read(&manifest_path).unwrap();
            let facts = ManifestFacts {
                length: manifest.len() as u64,
                entries: avro_entry_count(&manifest),
            };
            let name = manifest_path
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            Input {
                meta: paimon_meta(&name, facts),
                mid_row: mid_row(&bytes, facts),
                name: format!(
                    "{}/{}",
                    p.parent()
                        .unwrap()
                        .parent()
                        .unwrap()
                        .file_name()
                        .unwrap()
                        .to_str()
                        .unwrap(),
                    name
                ),
                bytes,
                facts,
            }
        })
        .collect()
}

/// xorshift64*, deterministic.
struct Rng(u64);
impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// `blocks` blocks of `per_block` entries, compact layout, in the manner of
/// `benches/sidecar.rs`'s generator.
fn large_input(blocks: usize, per_block: usize) -> Input {
    let mut rng = Rng(0x1234_5678);
    let mut header = b"Obj\x01".to_vec();
    header.resize(64, 0);
    let partitions: Vec<Vec<u8>> = (0..64u64)
        .map(|i| {
            let mut p = vec![0, 0, 0, 1];
            p.extend_from_slice(&[0u8; 8]);
            p.extend_from_slice(&i.to_le_bytes());
            p
        })
        .collect();
    let settings = BuildSettings {
        layout: Layout::Compact,
        ..BuildSettings::default()
    };
    let mut b = SidecarBuilder::new(settings, &header);
    let mut offset = header.len() as u64;
    let mut row = 0i64;
    let mut entries = 0u64;
    let middle_entry = (blocks * per_block / 2) as u64;
    let mut middle_row = 0u64;
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
            if entries == middle_entry {
                middle_row = row as u64;
            }
            row += count + 1 + (rng.next_u64() % 50) as i64; // a gap after each file
            entries += 1;
        }
        b.end_block().unwrap();
        offset += len;
    }
    let bytes = b.serialize(offset, entries).unwrap();
    let facts = ManifestFacts {
        length: offset,
        entries,
    };
    let name = format!("manifest-large-{blocks}x{per_block}");
    Input {
        meta: paimon_meta(&name, facts),
        mid_row: middle_row,
        name,
        bytes,
        facts,
    }
}

/// How lakecore validates before selecting.
#[derive(Clone, Copy)]
enum Mode {
    /// `parse_with`, then `select` over the view (two walks).
    TwoPass,
    /// `parse_parallel` (checksum on a second thread), then `select`.
    Parallel,
    /// `parse_head`, then `select_into`: validation fused into selection (one walk).
    Fused,
}

fn lakecore_select(input: &Input, point: bool, mode: Mode) -> Vec<SelectedBlock> {
    let options = SidecarOptions {
        facts: Some(input.facts),
    };
    let mut r = [RowRange::single(input.mid_row)];
    let q = if point {
        Query::new().rows(RowRanges::normalize(&mut r))
    } else {
        Query::new()
    };
    let s = match mode {
        Mode::TwoPass => Sidecar::parse_with(black_box(&input.bytes), &options),
        Mode::Parallel => Sidecar::parse_parallel(black_box(&input.bytes), &options),
        Mode::Fused => {
            let head = Sidecar::parse_head(black_box(&input.bytes), &options).unwrap();
            return head.select_vec(&q).unwrap().1;
        }
    }
    .unwrap();
    s.select(&q).collect::<Result<Vec<_>, _>>().unwrap()
}

fn paimon_select(input: &Input, point: bool) -> paimon::spec::ManifestSidecarSelection {
    let ranges = [PaimonRange::new(input.mid_row as i64, input.mid_row as i64)];
    ManifestSidecar::select(
        black_box(&input.bytes),
        &input.meta,
        point.then_some(&ranges[..]),
    )
    .unwrap()
}

/// Both sides select the same blocks; returns the count.
fn check_same(input: &Input, point: bool) -> usize {
    let spans = |mode| -> Vec<(u64, u64)> {
        lakecore_select(input, point, mode)
            .iter()
            .map(|b| (b.offset, b.length))
            .collect()
    };
    let (ours, par, fused) = (spans(Mode::TwoPass), spans(Mode::Parallel), spans(Mode::Fused));
    let sel = ManifestSidecar::select(
        &input.bytes,
        &input.meta,
        point
            .then(|| vec![PaimonRange::new(input.mid_row as i64, input.mid_row as i64)])
            .as_deref(),
    )
    .unwrap_or_else(|e| panic!("paimon-rust rejects {}: {e}", input.name));
    let theirs: Vec<(u64, u64)> = sel
        .blocks()
        .iter()
        .map(|b| (b.offset(), b.length()))
        .collect();
    assert_eq!(
        ours, theirs,
        "{}: lakecore and paimon-rust select different blocks",
        input.name
    );
    assert_eq!(ours, par, "{}: parse_parallel differs", input.name);
    assert_eq!(ours, fused, "{}: the fused selection differs", input.name);
    ours.len()
}

fn queries() -> [(&'static str, bool); 2] {
    [("point", true), ("none", false)]
}

fn real(c: &mut Criterion) {
    let inputs = real_inputs();
    let total: usize = inputs.iter().map(|i| i.bytes.len()).sum();
    for (q, point) in queries() {
        let (mut blocks, mut selected) = (0u64, 0usize);
        for i in &inputs {
            selected += check_same(i, point);
            blocks += u64::from(Sidecar::parse(&i.bytes).unwrap().block_count());
        }
        eprintln!(
            "real/{q}: {} sidecars, {total} bytes, {blocks} blocks, {selected} selected",
            inputs.len()
        );
    }
    let mut g = c.benchmark_group("sidecar_select_real");
    g.throughput(Throughput::Bytes(total as u64));
    for (q, point) in queries() {
        g.bench_function(BenchmarkId::new("lakecore", q), |b| {
            b.iter(|| {
                inputs
                    .iter()
                    .map(|i| lakecore_select(i, point, Mode::TwoPass).len())
                    .sum::<usize>()
            })
        });
        g.bench_function(BenchmarkId::new("lakecore_fused", q), |b| {
            b.iter(|| {
                inputs
                    .iter()
                    .map(|i| lakecore_select(i, point, Mode::Fused).len())
                    .sum::<usize>()
            })
        });
        g.bench_function(BenchmarkId::new("paimon", q), |b| {
            b.iter(|| {
                inputs
                    .iter()
                    .map(|i| paimon_select(i, point).blocks().len())
                    .sum::<usize>()
            })
        });
    }
    g.finish();
}

fn large(c: &mut Criterion) {
    let input = large_input(100_000, 3);
    for (q, point) in queries() {
        let n = check_same(&input, point);
        eprintln!(
            "large/{q}: {} bytes, {} entries, manifest {} bytes, row {}, {n} selected",
            input.bytes.len(),
            input.facts.entries,
            input.facts.length,
            input.mid_row
        );
    }
    let mut g = c.benchmark_group("sidecar_select_100k_blocks_x3");
    g.throughput(Throughput::Bytes(input.bytes.len() as u64));
    for (q, point) in queries() {
        g.bench_function(BenchmarkId::new("lakecore", q), |b| {
            b.iter(|| lakecore_select(&input, point, Mode::TwoPass).len())
        });
        g.bench_function(BenchmarkId::new("lakecore_fused", q), |b| {
            b.iter(|| lakecore_select(&input, point, Mode::Fused).len())
        });
        g.bench_function(BenchmarkId::new("lakecore_par", q), |b| {
            b.iter(|| lakecore_select(&input, point, Mode::Parallel).len())
        });
        g.bench_function(BenchmarkId::new("paimon", q), |b| {
            b.iter(|| paimon_select(&input, point).blocks().len())
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = real, large
}
criterion_main!(benches);
