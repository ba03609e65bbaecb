//! Kernel benchmarks: every available kernel table of lakecore plus the dispatched entry,
//! with peer crates measured in the same run so the results read as ratios.
//!
//! * `varint_delta/mostly_1`, `varint_zigzag/{mostly_1,mixed_1_9,all_9}`: decode 65 536 LEB128
//!   deltas (unsigned, or ZigZag for the long ones so the sums stay in range; the ZigZag
//!   `mostly_1` row reads the same bytes as the unsigned one, as the BLOB index would) into running
//!   values (peers: `integer-encoding`, `unsigned-varint`, `leb128`, `varint-simd`, each
//!   decoding one varint at a time and adding the delta with `checked_add`);
//! * `varint_count/{...}`: validate + count the same streams (bytes/s);
//! * `unpack_u32/w{1..32}`: 65 536 values of each width (peers: `bitpacking` BitPacker4x and
//!   BitPacker8x, `fastlanes`, same widths and value counts, each in its own block layout);
//! * `get/1MiB`: random `BitPacked::get` on a 1 MiB packed array.
//!
//! `cargo bench --features expose-kernels --bench kernels` (add `-- varint_delta` etc. to
//! filter). `RUSTFLAGS="-C target-cpu=native"` lets `varint-simd` use its SSSE3/AVX2 paths
//! (they are compiled in only with those target features); see `BENCHMARKS.md`.

#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use bitpacking::{BitPacker, BitPacker4x, BitPacker8x};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lakecore::arch::{active_kernels, kernels, Kernels};
use lakecore::codec::bitpack::{pack, BitPacked};
use lakecore::codec::varint::{encode_u64, VarintFormat};
use std::hint::black_box;
use std::time::Duration;

const VALUES: usize = 1 << 16;

use lakecore_testkit::rng::Rng;

fn of_len(rng: &mut Rng, len: u32) -> u64 {
    if len <= 1 {
        return rng.next_u64() % 128;
    }
    let lo = 1u64 << (7 * (len - 1));
    lo + rng.next_u64() % ((1u64 << (7 * len)) - lo)
}

/// A stream of raw varints for a distribution, with `zigzag` = whether they are ZigZag
/// deltas. Mostly-one-byte streams are unsigned deltas (the sidecar case). Long varints are
/// ZigZag deltas in `+x, -x` pairs, so 65 536 of them never overflow the running `i64` (an
/// unsigned stream of 9-byte deltas overflows `u64` after 256 values).
fn stream(dist: &str, seed: u64) -> (Vec<u8>, bool) {
    let mut rng = Rng::xorshift(seed);
    let mut raws = Vec::with_capacity(VALUES);
    match dist {
        // 15 of 16 one-byte deltas, the rest 2..=3 bytes.
        "mostly_1" | "mostly_1_zigzag" => {
            while raws.len() < VALUES {
                let pick = rng.next_u64();
                let raw = if pick.is_multiple_of(16) {
                    of_len(&mut rng, 2 + ((pick >> 8) % 2) as u32)
                } else {
                    rng.next_u64() % 128
                };
                raws.push(raw);
            }
        }
        // Uniform encoded length 1..=9 (mixed_1_9) or exactly 9 bytes (all_9), in pairs.
        _ => {
            while raws.len() < VALUES {
                let len = if dist == "all_9" {
                    9
                } else {
                    1 + (rng.next_u64() % 9) as u32
                };
                let x = of_len(&mut rng, len) >> 1;
                raws.push(x << 1); // zigzag(+x)
                raws.push((x << 1).saturating_sub(1)); // zigzag(-x)
            }
        }
    }
    let mut out = Vec::new();
    let mut buf = [0u8; 10];
    for &raw in &raws {
        let n = encode_u64(raw, &mut buf);
        out.extend_from_slice(&buf[..n]);
    }
    (out, dist != "mostly_1")
}

/// A peer's one-varint decoder, driven over the whole stream with the same delta step as
/// lakecore (checked add, unsigned or ZigZag).
fn peer_loop(bytes: &[u8], zigzag: bool, out: &mut [u64], decode: impl Fn(&[u8]) -> (u64, usize)) {
    let mut rest = bytes;
    if zigzag {
        let mut prev = 0i64;
        for slot in out.iter_mut() {
            let (raw, n) = decode(rest);
            let d = ((raw >> 1) as i64) ^ -((raw & 1) as i64);
            prev = prev.checked_add(d).unwrap();
            *slot = prev as u64;
            rest = &rest[n..];
        }
    } else {
        let mut prev = 0u64;
        for slot in out.iter_mut() {
            let (d, n) = decode(rest);
            prev = prev.checked_add(d).unwrap();
            *slot = prev;
            rest = &rest[n..];
        }
    }
}

fn tiers() -> Vec<&'static Kernels> {
    kernels::all().filter(|k| (k.available)()).collect()
}

fn varint_benches(c: &mut Criterion) {
    for dist in ["mostly_1", "mostly_1_zigzag", "mixed_1_9", "all_9"] {
        let (bytes, zigzag) = stream(dist, 42);
        let kind = if zigzag {
            "varint_zigzag"
        } else {
            "varint_delta"
        };
        let name = dist.trim_end_matches("_zigzag");
        let mut group = c.benchmark_group(format!("{kind}/{name}"));
        group.throughput(Throughput::Elements(VALUES as u64));
        let mut out = vec![0u64; VALUES];
        let mut out_i = vec![0i64; VALUES];
        let format = VarintFormat::SIDECAR;
        for tier in tiers() {
            group.bench_function(BenchmarkId::new("lakecore", tier.name), |b| {
                b.iter(|| {
                    let bytes = black_box(&bytes[..]);
                    if zigzag {
                        tier.delta_decode_zigzag(bytes, format, 0, i64::MIN, i64::MAX, &mut out_i)
                    } else {
                        tier.delta_decode_u64(bytes, format, 0, 0, u64::MAX, &mut out)
                    }
                    .unwrap()
                    .unwrap()
                })
            });
        }
        group.bench_function("integer-encoding", |b| {
            use integer_encoding::VarInt;
            b.iter(|| {
                peer_loop(black_box(&bytes), zigzag, &mut out, |r| {
                    u64::decode_var(r).unwrap()
                })
            })
        });
        group.bench_function("unsigned-varint", |b| {
            b.iter(|| {
                peer_loop(black_box(&bytes), zigzag, &mut out, |r| {
                    let (v, rest) = unsigned_varint::decode::u64(r).unwrap();
                    (v, r.len() - rest.len())
                })
            })
        });
        group.bench_function("leb128", |b| {
            b.iter(|| {
                peer_loop(black_box(&bytes), zigzag, &mut out, |r| {
                    let mut rest = r;
                    let v = leb128::read::unsigned(&mut rest).unwrap();
                    (v, r.len() - rest.len())
                })
            })
        });
        #[cfg(target_arch = "x86_64")]
        group.bench_function("varint-simd", |b| {
            b.iter(|| {
                peer_loop(black_box(&bytes), zigzag, &mut out, |r| {
                    varint_simd::decode::<u64>(r).unwrap()
                })
            })
        });
        group.finish();

        if dist != name {
            continue; // the same bytes as the unsigned row: counted there
        }
        let mut group = c.benchmark_group(format!("varint_count/{dist}"));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        for tier in tiers() {
            group.bench_function(BenchmarkId::new("lakecore", tier.name), |b| {
                b.iter(|| {
                    tier.count_uvarints(black_box(&bytes), format)
                        .unwrap()
                        .unwrap()
                })
            });
        }
        #[cfg(target_arch = "x86_64")]
        group.bench_function("varint-simd decode_len", |b| {
            b.iter(|| {
                let mut rest = black_box(&bytes[..]);
                let mut n = 0usize;
                while !rest.is_empty() {
                    rest = &rest[varint_simd::decode_len::<u64>(rest).unwrap()..];
                    n += 1;
                }
                n
            })
        });
        group.finish();
    }
}

fn unpack_benches(c: &mut Criterion) {
    let mut rng = Rng::xorshift(7);
    for width in 1..=32u8 {
        let mask = if width == 32 {
            u32::MAX
        } else {
            (1u32 << width) - 1
        };
        let values: Vec<u32> = (0..VALUES).map(|_| rng.next_u64() as u32 & mask).collect();
        let wide: Vec<u64> = values.iter().map(|&v| u64::from(v)).collect();
        let ours = pack(&wide, width).unwrap();
        let view = BitPacked::new(&ours, width, VALUES).unwrap();

        let bp4 = BitPacker4x::new();
        let mut packed4 = vec![0u8; VALUES * usize::from(width) / 8 + 64];
        let mut len4 = 0;
        for chunk in values.chunks(BitPacker4x::BLOCK_LEN) {
            len4 += bp4.compress(chunk, &mut packed4[len4..], width);
        }
        let bp8 = BitPacker8x::new();
        let mut packed8 = vec![0u8; VALUES * usize::from(width) / 8 + 64];
        let mut len8 = 0;
        for chunk in values.chunks(BitPacker8x::BLOCK_LEN) {
            len8 += bp8.compress(chunk, &mut packed8[len8..], width);
        }
        let words = 1024 * usize::from(width) / 32;
        let mut packed_fl = vec![0u32; VALUES / 1024 * words];
        for (chunk, dst) in values.chunks(1024).zip(packed_fl.chunks_mut(words)) {
            // SAFETY: `chunk` has exactly 1024 values and `dst` exactly 1024 * width / 32
            // words, the lengths `unchecked_pack` requires.
            #[allow(unsafe_code)]
            unsafe {
                <u32 as fastlanes::BitPacking>::unchecked_pack(usize::from(width), chunk, dst)
            };
        }

        let mut group = c.benchmark_group("unpack_u32");
        group.throughput(Throughput::Elements(VALUES as u64));
        let mut out = vec![0u32; VALUES];
        for tier in tiers() {
            group.bench_function(
                BenchmarkId::new(format!("lakecore/{}", tier.name), width),
                |b| {
                    b.iter(|| {
                        tier.unpack_u32(black_box(&ours), u32::from(width), 0, &mut out)
                            .unwrap()
                    })
                },
            );
        }
        group.bench_function(BenchmarkId::new("lakecore/dispatched", width), |b| {
            b.iter(|| view.unpack_u32(0, black_box(&mut out)).unwrap())
        });
        group.bench_function(BenchmarkId::new("bitpacking/4x", width), |b| {
            b.iter(|| {
                let mut at = 0;
                for dst in out.chunks_mut(BitPacker4x::BLOCK_LEN) {
                    at += bp4.decompress(black_box(&packed4[at..len4]), dst, width);
                }
            })
        });
        group.bench_function(BenchmarkId::new("bitpacking/8x", width), |b| {
            b.iter(|| {
                let mut at = 0;
                for dst in out.chunks_mut(BitPacker8x::BLOCK_LEN) {
                    at += bp8.decompress(black_box(&packed8[at..len8]), dst, width);
                }
            })
        });
        group.bench_function(BenchmarkId::new("fastlanes", width), |b| {
            b.iter(|| {
                for (src, dst) in packed_fl.chunks(words).zip(out.chunks_mut(1024)) {
                    // SAFETY: `src` has exactly 1024 * width / 32 words and `dst` exactly 1024
                    // values, the lengths `unchecked_unpack` requires.
                    #[allow(unsafe_code)]
                    unsafe {
                        <u32 as fastlanes::BitPacking>::unchecked_unpack(
                            usize::from(width),
                            black_box(src),
                            dst,
                        )
                    };
                }
            })
        });
        group.finish();
        // The peers must agree on the values (guards against benchmarking a broken setup).
        view.unpack_u32(0, &mut out).unwrap();
        assert_eq!(out, values, "lakecore width {width}");
    }
}

fn get_benches(c: &mut Criterion) {
    let mut rng = Rng::xorshift(9);
    let width = 13u8;
    let count = (1usize << 20) * 8 / usize::from(width);
    let values: Vec<u64> = (0..count)
        .map(|_| rng.next_u64() & ((1 << width) - 1))
        .collect();
    let bytes = pack(&values, width).unwrap();
    let view = BitPacked::new(&bytes, width, count).unwrap();
    let indices: Vec<usize> = (0..4096)
        .map(|_| (rng.next_u64() as usize) % count)
        .collect();
    let mut group = c.benchmark_group("get");
    group.throughput(Throughput::Elements(indices.len() as u64));
    let lookups = |b: &mut criterion::Bencher, view: &BitPacked, indices: &[usize]| {
        b.iter(|| {
            let mut acc = 0u64;
            for &i in black_box(indices) {
                acc = acc.wrapping_add(view.get(i).unwrap());
            }
            acc
        })
    };
    group.bench_function("lakecore/1MiB_w13", |b| lookups(b, &view, &indices));
    // The same bytes in 2 MiB transparent huge pages (Linux, `madvise`): random lookups over
    // 1 MiB touch 256 4 KiB pages, more than the first-level TLB holds.
    #[cfg(target_os = "linux")]
    if let Some(huge) = huge_page_copy(&bytes) {
        let view = BitPacked::new(&huge[..bytes.len()], width, count).unwrap();
        group.bench_function("lakecore/1MiB_w13_hugepages", |b| {
            lookups(b, &view, &indices)
        });
    }
    // 32 KiB: the whole array stays in the first-level data cache; what is left is the code.
    let small = count / 32;
    let small_bytes = pack(&values[..small], width).unwrap();
    let small_view = BitPacked::new(&small_bytes, width, small).unwrap();
    let small_indices: Vec<usize> = indices.iter().map(|&i| i % small).collect();
    group.bench_function("lakecore/32KiB_w13", |b| {
        lookups(b, &small_view, &small_indices)
    });
    group.finish();
    eprintln!("active kernels: {}", active_kernels().name);
}

/// A copy of `bytes` at the start of an anonymous mapping's 2 MiB-aligned region, advised to
/// use transparent huge pages; `None` when the mapping or the advice fails.
#[cfg(target_os = "linux")]
fn huge_page_copy(bytes: &[u8]) -> Option<impl std::ops::Deref<Target = [u8]>> {
    const HUGE: usize = 2 << 20;
    let mut map = memmap2::MmapMut::map_anon(bytes.len() + 2 * HUGE).ok()?;
    let start = map.as_ptr().align_offset(HUGE);
    let len = bytes.len().div_ceil(HUGE) * HUGE;
    map.advise_range(memmap2::Advice::HugePage, start, len)
        .ok()?;
    map[start..start + bytes.len()].copy_from_slice(bytes);
    struct Window(memmap2::MmapMut, usize, usize);
    impl std::ops::Deref for Window {
        type Target = [u8];
        fn deref(&self) -> &[u8] {
            &self.0[self.1..self.1 + self.2]
        }
    }
    Some(Window(map, start, bytes.len()))
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = varint_benches, unpack_benches, get_benches
}
criterion_main!(benches);
