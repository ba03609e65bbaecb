//! Foundation codec benchmarks, each against peers decoding the same bytes in the same run:
//!
//! * `delta/<distribution>`: delta-varint decode through `DeltaIter::decode_into` vs
//!   `integer-encoding`, `unsigned-varint` and `leb128` (peer loops decode each varint and
//!   rebuild the running value, unchecked). Distributions: `mostly-1B` (sorted IDs, unsigned
//!   deltas, 95 % one-byte), `uniform-1-9B` and `all-9B` (ZigZag signed deltas of a random walk,
//!   encoded lengths uniform in 1..=9 or all 9 bytes).
//! * `unpack_u32/<width>`: `BitPacked::unpack_u32` vs `bitpacking::BitPacker4x/8x::decompress`
//!   for the same value count, widths 1..=32.
//! * `sha256/16MiB`: our wrapper vs `sha2` directly.
//!
//! Run: `cargo bench --bench codecs` (add `-- delta` etc. to filter).
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use bitpacking::{BitPacker, BitPacker4x, BitPacker8x};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use integer_encoding::VarInt;
use lakecore::codec::bitpack::{self, BitPacked};
use lakecore::codec::checksum;
use lakecore::codec::varint::{self, DeltaIter, VarintFormat, ZigZagDeltaIter};
use sha2::Digest;
use std::hint::black_box;
use std::time::Duration;

const VALUES: usize = 1 << 16;

use lakecore_testkit::rng::Rng;

/// A magnitude whose ZigZag form takes exactly `len` varint bytes (1..=9).
fn magnitude_of_len(rng: &mut Rng, len: u32) -> i64 {
    // ZigZag doubles the magnitude: |d| in [2^(7(len-1)-1), 2^(7len-1)).
    let lo = if len == 1 {
        0
    } else {
        1u64 << (7 * (len - 1) - 1)
    };
    let hi = 1u64 << (7 * len - 1);
    (lo + rng.next_u64() % (hi - lo)) as i64
}

/// Signed random walk whose deltas have ZigZag lengths drawn by `len_of`.
fn walk(rng: &mut Rng, mut len_of: impl FnMut(&mut Rng) -> u32) -> Vec<i64> {
    let mut v = 0i64;
    (0..VALUES)
        .map(|_| {
            let len = len_of(rng);
            let m = magnitude_of_len(rng, len);
            // Step towards zero so the walk stays far from overflow.
            v = if v > 0 { v - m } else { v + m };
            v
        })
        .collect()
}

fn bench_delta(c: &mut Criterion) {
    let mut rng = Rng::star(0x5eed);
    // Mostly one-byte unsigned deltas (sorted partition / row IDs).
    let mut v = 0u64;
    let sorted: Vec<u64> = (0..VALUES)
        .map(|_| {
            let r = rng.next_u64();
            v += if r.is_multiple_of(20) {
                128 + (r >> 8) % 16_000
            } else {
                (r >> 8) % 128
            };
            v
        })
        .collect();
    let mut unsigned_bytes = Vec::new();
    varint::push_deltas(&mut unsigned_bytes, 0, &sorted).unwrap();

    let uniform = walk(&mut rng, |r| 1 + (r.next_u64() % 9) as u32);
    let nine = walk(&mut rng, |_| 9);
    let mut uniform_bytes = Vec::new();
    varint::push_zigzag_deltas(&mut uniform_bytes, 0, &uniform).unwrap();
    let mut nine_bytes = Vec::new();
    varint::push_zigzag_deltas(&mut nine_bytes, 0, &nine).unwrap();
    assert_eq!(nine_bytes.len(), 9 * VALUES);

    let mut group = c.benchmark_group("delta");
    group.throughput(Throughput::Elements(VALUES as u64));
    let mut out_u = vec![0u64; VALUES];
    group.bench_function(BenchmarkId::new("lakecore", "mostly-1B"), |b| {
        b.iter(|| {
            let mut it = DeltaIter::new(black_box(&unsigned_bytes), 0, VarintFormat::SIDECAR)
                .with_count(VALUES as u64);
            it.decode_into(&mut out_u).unwrap()
        })
    });
    assert_eq!(out_u, sorted);
    peers_unsigned(&mut group, "mostly-1B", &unsigned_bytes, &sorted);

    for (name, bytes, expect) in [
        ("uniform-1-9B", &uniform_bytes, &uniform),
        ("all-9B", &nine_bytes, &nine),
    ] {
        let mut out = vec![0i64; VALUES];
        group.bench_function(BenchmarkId::new("lakecore", name), |b| {
            b.iter(|| {
                let mut it = ZigZagDeltaIter::zigzag(black_box(bytes), 0, VarintFormat::U64)
                    .with_count(VALUES as u64);
                it.decode_into(&mut out).unwrap()
            })
        });
        assert_eq!(&out, expect);
        peers_zigzag(&mut group, name, bytes, expect);
    }
    group.finish();
}

fn peers_unsigned(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    bytes: &[u8],
    expect: &[u64],
) {
    let mut out = vec![0u64; VALUES];
    group.bench_function(BenchmarkId::new("integer-encoding", name), |b| {
        b.iter(|| {
            let (mut pos, mut prev) = (0, 0u64);
            for slot in out.iter_mut() {
                let (d, n) = u64::decode_var(&bytes[pos..]).unwrap();
                prev = prev.wrapping_add(d);
                *slot = prev;
                pos += n;
            }
            pos
        })
    });
    assert_eq!(out, expect);
    group.bench_function(BenchmarkId::new("unsigned-varint", name), |b| {
        b.iter(|| {
            let (mut rest, mut prev) = (black_box(bytes), 0u64);
            for slot in out.iter_mut() {
                let (d, r) = unsigned_varint::decode::u64(rest).unwrap();
                prev = prev.wrapping_add(d);
                *slot = prev;
                rest = r;
            }
            rest.len()
        })
    });
    assert_eq!(out, expect);
    group.bench_function(BenchmarkId::new("leb128", name), |b| {
        b.iter(|| {
            let (mut rest, mut prev) = (black_box(bytes), 0u64);
            for slot in out.iter_mut() {
                let d = leb128::read::unsigned(&mut rest).unwrap();
                prev = prev.wrapping_add(d);
                *slot = prev;
            }
            rest.len()
        })
    });
    assert_eq!(out, expect);
}

fn unzig(raw: u64) -> i64 {
    ((raw >> 1) as i64) ^ -((raw & 1) as i64)
}

fn peers_zigzag(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    bytes: &[u8],
    expect: &[i64],
) {
    let mut out = vec![0i64; VALUES];
    group.bench_function(BenchmarkId::new("integer-encoding", name), |b| {
        b.iter(|| {
            let (mut pos, mut prev) = (0, 0i64);
            for slot in out.iter_mut() {
                let (d, n) = u64::decode_var(&bytes[pos..]).unwrap();
                prev = prev.wrapping_add(unzig(d));
                *slot = prev;
                pos += n;
            }
            pos
        })
    });
    assert_eq!(out, expect);
    group.bench_function(BenchmarkId::new("unsigned-varint", name), |b| {
        b.iter(|| {
            let (mut rest, mut prev) = (black_box(bytes), 0i64);
            for slot in out.iter_mut() {
                let (d, r) = unsigned_varint::decode::u64(rest).unwrap();
                prev = prev.wrapping_add(unzig(d));
                *slot = prev;
                rest = r;
            }
            rest.len()
        })
    });
    assert_eq!(out, expect);
    group.bench_function(BenchmarkId::new("leb128", name), |b| {
        b.iter(|| {
            let (mut rest, mut prev) = (black_box(bytes), 0i64);
            for slot in out.iter_mut() {
                let d = leb128::read::unsigned(&mut rest).unwrap();
                prev = prev.wrapping_add(unzig(d));
                *slot = prev;
            }
            rest.len()
        })
    });
    assert_eq!(out, expect);
}

fn bench_unpack(c: &mut Criterion) {
    let mut rng = Rng::star(0xb17);
    let mut group = c.benchmark_group("unpack_u32");
    group.throughput(Throughput::Elements(VALUES as u64));
    group
        .measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(300));
    let (p4, p8) = (BitPacker4x::new(), BitPacker8x::new());
    for width in 1..=32u8 {
        let mask = if width == 32 {
            u32::MAX
        } else {
            (1u32 << width) - 1
        };
        let values: Vec<u32> = (0..VALUES).map(|_| rng.next_u64() as u32 & mask).collect();
        let wide: Vec<u64> = values.iter().map(|&v| u64::from(v)).collect();
        let packed = bitpack::pack(&wide, width).unwrap();
        let view = BitPacked::new(&packed, width, VALUES).unwrap();
        let mut out = vec![0u32; VALUES];
        group.bench_function(BenchmarkId::new("lakecore", width), |b| {
            b.iter(|| view.unpack_u32(0, black_box(&mut out)).unwrap())
        });
        assert_eq!(out, values);

        for (peer, block, compress, decompress) in [
            (
                "bitpacking-4x",
                BitPacker4x::BLOCK_LEN,
                &(|d: &[u32], c: &mut [u8], w| p4.compress(d, c, w))
                    as &dyn Fn(&[u32], &mut [u8], u8) -> usize,
                &(|c: &[u8], d: &mut [u32], w| p4.decompress(c, d, w))
                    as &dyn Fn(&[u8], &mut [u32], u8) -> usize,
            ),
            (
                "bitpacking-8x",
                BitPacker8x::BLOCK_LEN,
                &|d: &[u32], c: &mut [u8], w| p8.compress(d, c, w),
                &|c: &[u8], d: &mut [u32], w| p8.decompress(c, d, w),
            ),
        ] {
            let block_bytes = block * usize::from(width) / 8;
            let mut compressed = vec![0u8; VALUES * 4];
            let mut at = 0;
            for chunk in values.chunks(block) {
                at += compress(chunk, &mut compressed[at..], width);
            }
            compressed.truncate(at);
            group.bench_function(BenchmarkId::new(peer, width), |b| {
                b.iter(|| {
                    for (src, dst) in compressed.chunks(block_bytes).zip(out.chunks_mut(block)) {
                        decompress(black_box(src), dst, width);
                    }
                })
            });
            assert_eq!(out, values);
        }
    }
    group.finish();
}

fn bench_sha256(c: &mut Criterion) {
    let mut rng = Rng::star(0x5a);
    let data: Vec<u8> = (0..16 << 20).map(|_| rng.next_u64() as u8).collect();
    let mut group = c.benchmark_group("sha256");
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.sample_size(10);
    group.bench_function(BenchmarkId::new("lakecore", "16MiB"), |b| {
        b.iter(|| checksum::sha256(black_box(&data)))
    });
    group.bench_function(BenchmarkId::new("sha2", "16MiB"), |b| {
        b.iter(|| sha2::Sha256::digest(black_box(&data)))
    });
    group.bench_function(BenchmarkId::new("lakecore-crc32", "16MiB"), |b| {
        b.iter(|| checksum::crc32(black_box(&data)))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = bench_delta, bench_unpack, bench_sha256
}
criterion_main!(benches);
