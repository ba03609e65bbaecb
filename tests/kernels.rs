//! Every available kernel tier against the scalar reference (`lakecore::arch::scalar`):
//! same values, same bytes consumed, same error kind and offset, same output buffer.
//!
//! Inputs sit inside larger buffers at every byte offset 0..64 with random bytes after them,
//! so a kernel that read past its slice would see garbage and disagree. Run with
//! `cargo test --features expose-kernels --test kernels`.

#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use lakecore::arch::{kernels, scalar, Kernels};
use lakecore::codec::varint::{encode_u64, encoded_len, zigzag_encode, VarintFormat};

use lakecore_testkit::rng::Rng;

/// The non-scalar kernel tables this machine runs (the comparison target is always scalar).
fn simd_tiers() -> Vec<&'static Kernels> {
    kernels::all()
        .filter(|k| k.name != "scalar" && (k.available)())
        .collect()
}

/// The available table called `name`, if this build has it and this machine runs it.
fn tier_named(name: &str) -> Option<&'static Kernels> {
    kernels::all().find(|k| k.name == name && (k.available)())
}

#[test]
fn tiers_report_availability_consistently() {
    let names: Vec<&str> = kernels::all().map(|k| k.name).collect();
    assert_eq!(names.first(), Some(&"scalar"), "{names:?}");
    for (i, name) in names.iter().enumerate() {
        assert!(!names[..i].contains(name), "{name} twice in {names:?}");
    }
    assert!(tier_named("scalar").is_some());
    let active = lakecore::arch::active_kernels();
    assert!((active.available)());
    // The active table is the last available one (the fastest).
    assert_eq!(
        kernels::all()
            .filter(|k| (k.available)())
            .last()
            .map(|k| k.name),
        Some(active.name)
    );
    for tier in kernels::all() {
        let mut out = [0u64; 1];
        let ran = tier.delta_decode_u64(&[1], VarintFormat::U64, 0, 0, 9, &mut out);
        assert_eq!(ran.is_some(), (tier.available)(), "{tier:?}");
    }
    // Printed so a run shows which tables it compared (`--nocapture`), e.g. under qemu.
    println!(
        "kernel tables: {:?}, active {}",
        kernels::all()
            .map(|k| (k.name, (k.available)()))
            .collect::<Vec<_>>(),
        active.name
    );
    // aarch64 always has NEON: with SIMD on, its table is compiled in, runs and is chosen
    // (so the suites below compare NEON against scalar there, e.g. under qemu-aarch64).
    #[cfg(target_arch = "aarch64")]
    if cfg!(all(feature = "simd", not(lakecore_backend = "scalar"))) {
        assert!(tier_named("neon").is_some(), "{names:?}");
        assert_eq!(active.name, "neon");
    }
    #[cfg(target_arch = "x86_64")]
    if cfg!(all(feature = "simd", not(lakecore_backend = "scalar")))
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("popcnt")
    {
        assert!(tier_named("avx2-nopext").is_some());
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && tier_named("avx2").is_some()
        {
            assert!(tier_named("avx512").is_some());
            if std::arch::is_x86_feature_detected!("avx512vbmi") {
                assert!(tier_named("avx512-vbmi").is_some());
                if std::arch::is_x86_feature_detected!("avx512vbmi2") {
                    assert!(tier_named("avx512-vbmi2").is_some());
                }
            }
        }
    }
    // On aarch64 NEON is baseline: the tier must be there (Miri runs it cross-interpreted).
    #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
    if cfg!(all(feature = "simd", not(lakecore_backend = "scalar"))) {
        assert!(tier_named("neon").is_some());
    }
    // Miri cannot run `cpuid`, but it must still reach the tiers compiled in with `-C
    // target-feature` (CI's Miri line checks the unsafe AVX2 kernels that way), with PEXT and
    // without.
    if cfg!(all(
        miri,
        target_arch = "x86_64",
        feature = "simd",
        not(lakecore_backend = "scalar"),
        target_feature = "avx2",
        target_feature = "bmi1",
        target_feature = "bmi2",
        target_feature = "popcnt"
    )) {
        assert!(tier_named("avx2").is_some(), "Miri must test the AVX2 tier");
        assert!(
            tier_named("avx2-nopext").is_some(),
            "Miri must test the AVX2 tier without PEXT"
        );
    }
    eprintln!(
        "tiers under test: {:?}, active {:?}",
        simd_tiers(),
        lakecore::arch::active_kernels()
    );
}

/// Value-length distributions of the generated streams.
#[derive(Clone, Copy, Debug)]
enum Dist {
    /// Mostly one-byte deltas (runs the SIMD prefix-sum path), a few longer ones.
    MostlyOne,
    /// Uniform encoded length 1..=9.
    Mixed,
    /// Every length up to 10 bytes (full `u64` range).
    Full,
    /// Only one-byte deltas.
    AllOne,
    /// Only 9-byte deltas.
    AllNine,
}

const DISTS: [Dist; 5] = [
    Dist::MostlyOne,
    Dist::Mixed,
    Dist::Full,
    Dist::AllOne,
    Dist::AllNine,
];

fn raw_of_len(rng: &mut Rng, len: u32) -> u64 {
    // A value whose shortest encoding has exactly `len` bytes.
    if len <= 1 {
        return rng.below(128);
    }
    let lo = 1u64 << (7 * (len - 1));
    let span = if len >= 10 {
        u64::MAX - lo
    } else {
        (1u64 << (7 * len)) - lo
    };
    lo + rng.below(span)
}

fn raw_delta(rng: &mut Rng, dist: Dist) -> u64 {
    let pick = rng.next_u64();
    match dist {
        Dist::MostlyOne => {
            if pick.is_multiple_of(16) {
                raw_of_len(rng, 2 + (pick >> 8) as u32 % 3)
            } else {
                rng.below(128)
            }
        }
        Dist::Mixed => raw_of_len(rng, 1 + (pick % 9) as u32),
        Dist::Full => raw_of_len(rng, 1 + (pick % 10) as u32),
        Dist::AllOne => rng.below(128),
        Dist::AllNine => raw_of_len(rng, 9),
    }
}

fn push(out: &mut Vec<u8>, raw: u64) {
    let mut buf = [0u8; 10];
    let n = encode_u64(raw, &mut buf);
    out.extend_from_slice(&buf[..n]);
}

/// A stream of `n` raw varints (deltas) of distribution `dist`.
fn stream(rng: &mut Rng, dist: Dist, n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..n {
        push(&mut out, raw_delta(rng, dist));
    }
    out
}

/// `bytes` placed at `offset` inside a buffer with random bytes around it.
fn embed(rng: &mut Rng, bytes: &[u8], offset: usize) -> Vec<u8> {
    let mut buf = rng.bytes(offset);
    buf.extend_from_slice(bytes);
    buf.extend(rng.bytes(80));
    buf
}

fn formats(rng: &mut Rng) -> [VarintFormat; 4] {
    let short = VarintFormat::new(1 + rng.below(10) as u8, rng.below(2) == 0).unwrap();
    [
        VarintFormat::SIDECAR,
        VarintFormat::U64,
        VarintFormat::U64_LENIENT,
        short,
    ]
}

/// Compares every tier with scalar on one unsigned and one ZigZag decode and one count of
/// `bytes`, decoding `count` values from `prev` within the given bounds.
#[allow(clippy::too_many_arguments)]
fn check_varint(
    bytes: &[u8],
    format: VarintFormat,
    count: usize,
    prev: u64,
    min: u64,
    max: u64,
    zprev: i64,
    zbounds: (i64, i64),
    what: &dyn Fn() -> String,
) {
    let tiers = simd_tiers();
    check_varint_on(
        &tiers, bytes, format, count, prev, min, max, zprev, zbounds, what,
    );
}

/// [`check_varint`] on the given tables only.
#[allow(clippy::too_many_arguments)]
fn check_varint_on(
    tiers: &[&Kernels],
    bytes: &[u8],
    format: VarintFormat,
    count: usize,
    prev: u64,
    min: u64,
    max: u64,
    zprev: i64,
    zbounds: (i64, i64),
    what: &dyn Fn() -> String,
) {
    let mut want_u = vec![0xA5A5_A5A5_A5A5_A5A5u64; count];
    let want = scalar::delta_decode_u64(bytes, format, prev, min, max, &mut want_u);
    let mut want_z = vec![0x5A5A_5A5A_5A5A_5A5Ai64; count];
    let want_zr =
        scalar::delta_decode_zigzag(bytes, format, zprev, zbounds.0, zbounds.1, &mut want_z);
    let want_count = scalar::count_uvarints(bytes, format);
    for &tier in tiers {
        let mut got_u = vec![0xA5A5_A5A5_A5A5_A5A5u64; count];
        let got = tier
            .delta_decode_u64(bytes, format, prev, min, max, &mut got_u)
            .unwrap();
        assert_eq!(got, want, "{tier:?} u64 {}", what());
        assert_eq!(got_u, want_u, "{tier:?} u64 out {}", what());
        let mut got_z = vec![0x5A5A_5A5A_5A5A_5A5Ai64; count];
        let got_zr = tier
            .delta_decode_zigzag(bytes, format, zprev, zbounds.0, zbounds.1, &mut got_z)
            .unwrap();
        assert_eq!(got_zr, want_zr, "{tier:?} zigzag {}", what());
        assert_eq!(got_z, want_z, "{tier:?} zigzag out {}", what());
        let got_count = tier.count_uvarints(bytes, format).unwrap();
        assert_eq!(got_count, want_count, "{tier:?} count {}", what());
    }
}

fn full_bounds() -> (u64, u64, (i64, i64)) {
    (0, u64::MAX, (i64::MIN, i64::MAX))
}

#[test]
fn varint_every_length_and_offset() {
    let (lens, offsets) = if cfg!(miri) {
        (0..=12usize, 0..3usize)
    } else {
        (0..=300, 0..64)
    };
    let mut rng = Rng::new(1);
    let (min, max, zb) = full_bounds();
    for n in lens {
        for offset in offsets.clone() {
            let dist = DISTS[(n + offset) % DISTS.len()];
            let fmts = formats(&mut rng);
            let format = fmts[(n / 3 + offset) % fmts.len()];
            let bytes = stream(&mut rng, dist, n);
            let buf = embed(&mut rng, &bytes, offset);
            let slice = &buf[offset..offset + bytes.len()];
            // Exactly n values, fewer, and one too many (runs off the end).
            for count in [n, n.saturating_sub(1 + offset % 9), n + 1] {
                check_varint(slice, format, count, 0, min, max, 0, zb, &|| {
                    format!("n={n} offset={offset} {dist:?} {format:?} count={count}")
                });
            }
        }
    }
}

#[test]
fn varint_long_streams_every_distribution() {
    let sizes: &[usize] = if cfg!(miri) {
        &[40]
    } else {
        &[500, 1000, 4096]
    };
    let mut rng = Rng::new(2);
    let (min, max, zb) = full_bounds();
    for &n in sizes {
        for dist in DISTS {
            for format in formats(&mut rng) {
                let bytes = stream(&mut rng, dist, n);
                let buf = embed(&mut rng, &bytes, 0);
                let slice = &buf[..bytes.len()];
                let prev = rng.below(1 << 40);
                let zprev = rng.below(1 << 40) as i64 - (1 << 39);
                check_varint(slice, format, n, prev, min, max, zprev, zb, &|| {
                    format!("n={n} {dist:?} {format:?}")
                });
            }
        }
    }
}

/// Streams of only 1..=3-byte deltas, long enough for the whole-block paths of the AVX2 and
/// AVX-512 tiers (`short3`), under full bounds and under bounds that cut through the stream
/// (so a block meets its bound: nothing past the first out-of-bounds value may be written).
/// Miri runs two of them (the AVX2 step reaches the AVX2 whole-block path).
#[test]
fn varint_short_blocks_near_bounds() {
    let mut rng = Rng::new(31);
    let rounds = if cfg!(miri) { 2 } else { 600 };
    for round in 0..rounds {
        let n = 150 + rng.below(100) as usize;
        let mut bytes = Vec::new();
        for _ in 0..n {
            let len = match rng.below(8) {
                0 => 2,
                1 => 3,
                _ => 1,
            };
            push(&mut bytes, raw_of_len(&mut rng, len));
        }
        let prev = rng.below(1 << 40);
        let zprev = rng.below(1 << 40) as i64 - (1 << 39);
        let mut values = vec![0u64; n];
        scalar::delta_decode_u64(
            &bytes,
            VarintFormat::SIDECAR,
            prev,
            0,
            u64::MAX,
            &mut values,
        )
        .unwrap();
        let mut zvalues = vec![0i64; n];
        let full = (i64::MIN, i64::MAX);
        scalar::delta_decode_zigzag(
            &bytes,
            VarintFormat::SIDECAR,
            zprev,
            full.0,
            full.1,
            &mut zvalues,
        )
        .unwrap();
        let cut = values[rng.below(n as u64) as usize];
        let zcut = zvalues[rng.below(n as u64) as usize];
        // Round 0 of every 3: full bounds; 1: an upper bound met inside; 2: a lower one.
        let (min, max, zbounds) = match round % 3 {
            0 => (0, u64::MAX, full),
            1 => (prev, cut, (i64::MIN, zcut)),
            _ => (cut, u64::MAX, (zcut, i64::MAX)),
        };
        for format in [VarintFormat::SIDECAR, VarintFormat::U64] {
            check_varint(&bytes, format, n, prev, min, max, zprev, zbounds, &|| {
                format!("round {round} n={n} {format:?} bounds {min}..={max} {zbounds:?}")
            });
        }
    }
}

/// Long streams for the AVX-512 VBMI2 stream path (64-byte chunks at fixed strides; on CPUs
/// without VBMI2 they check the other tiers' block paths): segments of 4..=9-byte varints
/// (its `Wide9` loop) alternate with segments of 1..=3-byte ones (its `Wide3` loop), with the
/// odd 10-byte varint or non-canonical zero (which stop it mid-run). Decoded with room for
/// fewer values than the stream holds, under bounds met inside the stream (streams that do
/// not overflow, cut at a value the reference reaches), from `prev` near the overflow limits,
/// and from `prev` just outside the short-varint margin (so a run of 1..=3-byte varints walks
/// into it), so every way out of a run is taken at positions chunk boundaries fall on.
#[test]
fn varint_wide_runs_every_exit() {
    let mut rng = Rng::new(47);
    let rounds = if cfg!(miri) { 2 } else { 500 };
    for round in 0..rounds {
        let kind = round % 6;
        // Bounds rounds: deltas of at most 7 bytes and no odd ones, so no running sum
        // overflows before the cut. Margin rounds: only 3-byte even deltas (positive as ZigZag
        // too), enough of them to run from outside the margin into an overflow.
        let (longest, odd) = if kind == 1 || kind == 2 {
            (7, false)
        } else {
            (9, kind != 5)
        };
        let mut bytes = Vec::new();
        let mut n = 0usize;
        let target = if kind == 5 {
            2400 + rng.below(1200) as usize
        } else {
            300 + rng.below(900) as usize
        };
        while bytes.len() < target {
            let long = rng.below(3) != 0 && kind != 5;
            for _ in 0..1 + rng.below(40) {
                let len = if long {
                    4 + rng.below(longest - 3) as u32
                } else if kind == 5 {
                    3
                } else {
                    1 + rng.below(3) as u32
                };
                let raw = raw_of_len(&mut rng, len);
                let raw = if kind == 5 { raw & !1 } else { raw };
                push(&mut bytes, raw);
                n += 1;
            }
            match rng.below(16) {
                0 if odd => {
                    push(&mut bytes, raw_of_len(&mut rng, 10));
                    n += 1;
                }
                1 if odd => {
                    // A non-canonical two-byte zero (rejected by canonical formats).
                    bytes.extend_from_slice(&[0x80, 0x00]);
                    n += 1;
                }
                _ => {}
            }
        }
        let room = match round % 4 {
            0 => n,
            _ => rng.below(n as u64 + 1) as usize,
        };
        let (mut min, mut max, mut zbounds) = full_bounds();
        let (mut prev, mut zprev) = (rng.below(1 << 40), rng.below(1 << 40) as i64 - (1 << 39));
        match kind {
            // Bounds met inside the stream: a value of a full-range decode, as the upper or
            // the lower bound.
            1 | 2 => {
                let format = VarintFormat::U64_LENIENT;
                let mut values = vec![0u64; n];
                scalar::delta_decode_u64(&bytes, format, prev, min, max, &mut values).unwrap();
                let mut zvalues = vec![0i64; n];
                let (zmin, zmax) = zbounds;
                scalar::delta_decode_zigzag(&bytes, format, zprev, zmin, zmax, &mut zvalues)
                    .unwrap();
                let cut = values[rng.below(n as u64) as usize];
                let zcut = zvalues[rng.below(n as u64) as usize];
                if kind == 1 {
                    (max, zbounds) = (cut, (i64::MIN, zcut));
                } else {
                    (min, zbounds) = (cut, (zcut, i64::MAX));
                }
            }
            // Near the overflow limits: the first long deltas overflow the running sum.
            3 => {
                (prev, zprev) = (
                    u64::MAX - rng.below(1 << 60),
                    i64::MAX - rng.below(1 << 60) as i64,
                )
            }
            4 => zprev = i64::MIN + rng.below(1 << 60) as i64,
            // Only short varints, from just outside the 2^28 margin: both sums walk into it
            // after a few chunks and overflow later.
            5 => {
                prev = u64::MAX - (1 << 28) - rng.below(1 << 16);
                zprev = i64::MAX - (1 << 28) - rng.below(1 << 16) as i64;
            }
            _ => {}
        }
        for format in [
            VarintFormat::SIDECAR,
            VarintFormat::U64,
            VarintFormat::U64_LENIENT,
        ] {
            check_varint(
                &bytes,
                format,
                room,
                prev,
                min,
                max,
                zprev,
                zbounds,
                &|| {
                    format!("round {round} room {room} of {n} {format:?} {min}..={max} {zbounds:?}")
                },
            );
        }
    }
}

/// The shift/mask gather used where PEXT is slow (AMD Zen 1/2) agrees with scalar too.
/// Raw varints of 4..=9 bytes (ZigZag `+x, -x` pairs, so the running value comes back to
/// where it started after each pair) filling exactly `len >= 4` bytes.
fn long_pairs(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut pending: Option<u32> = None;
    while out.len() < len {
        let rem = len - out.len();
        let n = if rem <= 9 {
            rem
        } else if rem < 13 {
            4
        } else {
            4 + rng.below(6).min(rem as u64 - 13) as usize
        };
        // The partner of the previous value when it has the same length, else a fresh value.
        let raw = match pending.take() {
            Some(x) if encoded_len(u64::from(x) << 1) == n => (u64::from(x) << 1) - 1,
            _ => {
                let raw = raw_of_len(rng, n as u32) & !1;
                pending = u32::try_from(raw >> 1).ok();
                raw.max(2)
            }
        };
        push(&mut out, raw);
    }
    out
}

/// The AVX-512 stream decoder finds varints of 10 bytes or more once per chunk, from the
/// continuation masks, and checks ZigZag running values against `-2^62..2^62` instead of
/// checking each sum for overflow. Deterministic cases for both: a long varint at every
/// offset after several chunks of 4..=9-byte varints, and running values at the overflow
/// edges, just inside them and crossing `±2^62`.
#[test]
fn varint_wide9_long_varints_and_range_edges() {
    let mut rng = Rng::new(59);
    let (shifts, leads) = if cfg!(miri) {
        (0..2, 0..2)
    } else {
        (0..72, 0..12)
    };
    let (_, _, zfull) = full_bounds();
    for long in [&[0x80u8; 9][..], &[0xffu8; 9][..]] {
        for shift in shifts.clone() {
            for format in [VarintFormat::SIDECAR, VarintFormat::U64] {
                let mut bytes = long_pairs(&mut rng, 200 + shift);
                bytes.extend_from_slice(long);
                bytes.push(if long[0] == 0x80 { 0x01 } else { 0x02 });
                bytes.extend(long_pairs(&mut rng, 300));
                let what = || format!("long varint after {} bytes, {format:?}", 200 + shift);
                check_varint(&bytes, format, 200, 0, 0, u64::MAX, 0, zfull, &what);
            }
        }
    }
    // (running value before the edge delta, the edge delta's raw varint)
    let top = 1i64 << 62;
    let edges = [
        (i64::MIN, (1u64 << 63) - 1), // -2^62: overflows, wraps to exactly 2^62
        (i64::MAX, (1u64 << 63) - 2), // 2^62 - 1: overflows, wraps to -2^62 - 2
        (i64::MIN + top, (1u64 << 63) - 1), // reaches i64::MIN exactly
        (i64::MAX - top + 1, (1u64 << 63) - 2), // reaches i64::MAX exactly
        (top - 5, zigzag_encode(1 << 40)), // crosses 2^62 upwards
        (-top + 5, zigzag_encode(-(1 << 40))), // crosses -2^62 downwards
        (top - 1, zigzag_encode(1)),  // steps onto 2^62
        (-top, zigzag_encode(-1)),    // steps below -2^62
    ];
    for (zprev, edge) in edges {
        for lead in leads.clone() {
            // `2 * lead` values that come back to `zprev`, the edge, then pairs again.
            let mut bytes = Vec::new();
            for _ in 0..lead {
                let x = raw_of_len(&mut rng, 9) >> 1;
                push(&mut bytes, x << 1);
                push(&mut bytes, (x << 1) - 1);
            }
            push(&mut bytes, edge);
            bytes.extend(long_pairs(&mut rng, 400));
            for &offset in if cfg!(miri) {
                &[0][..]
            } else {
                &[0, 7, 33][..]
            } {
                let buf = embed(&mut rng, &bytes, offset);
                let body = &buf[offset..offset + bytes.len()];
                let what = || format!("zprev {zprev}, edge raw {edge:#x} after {lead} pairs");
                check_varint(
                    body,
                    VarintFormat::SIDECAR,
                    90,
                    0,
                    0,
                    u64::MAX,
                    zprev,
                    zfull,
                    &what,
                );
                check_varint(
                    body,
                    VarintFormat::U64,
                    90,
                    0,
                    0,
                    u64::MAX,
                    zprev,
                    zfull,
                    &what,
                );
            }
        }
    }
}

/// The tables that gather varint bits with shifts and masks instead of PEXT (as on AMD Zen
/// 1/2) agree with scalar on every distribution. Every AVX2 machine runs `avx2-nopext`.
#[test]
fn varint_without_pext() {
    let tiers: Vec<_> = simd_tiers()
        .into_iter()
        .filter(|k| k.name.ends_with("-nopext"))
        .collect();
    let mut rng = Rng::new(12);
    let (min, max, zb) = full_bounds();
    let n = if cfg!(miri) { 40 } else { 2000 };
    for dist in DISTS {
        for format in formats(&mut rng) {
            let bytes = stream(&mut rng, dist, n);
            for count in [n, n + 1] {
                check_varint_on(&tiers, &bytes, format, count, 0, min, max, 0, zb, &|| {
                    format!("no pext {dist:?} {format:?}")
                });
            }
        }
    }
}

/// The AVX-512 tables without VBMI2 (`avx512`: Skylake-SP, Cascade Lake; `avx512-vbmi`:
/// the AVX2 tier's whole-block paths) agree with scalar too, on every distribution and near
/// bounds. On machines without AVX-512 there is nothing to run.
#[test]
fn varint_without_vbmi2() {
    let tiers: Vec<_> = simd_tiers()
        .into_iter()
        .filter(|k| k.name == "avx512" || k.name == "avx512-vbmi")
        .collect();
    let mut rng = Rng::new(13);
    let n = if cfg!(miri) { 40 } else { 2000 };
    for dist in DISTS {
        for format in formats(&mut rng) {
            let bytes = stream(&mut rng, dist, n);
            let mut values = vec![0u64; n];
            let cut = match scalar::delta_decode_u64(&bytes, format, 0, 0, u64::MAX, &mut values) {
                Ok(_) => values[n / 2],
                Err(_) => u64::MAX,
            };
            for (min, max) in [(0, u64::MAX), (0, cut), (cut, u64::MAX)] {
                let zb = (i64::MIN, i64::MAX);
                check_varint_on(&tiers, &bytes, format, n, 0, min, max, 0, zb, &|| {
                    format!("no vbmi2 {dist:?} {format:?} bounds {min}..={max}")
                });
            }
        }
    }
}

/// Every varint length 1..=10, alone in a long run of one-byte values, under every format.
#[test]
fn varint_every_encoded_length() {
    let mut rng = Rng::new(3);
    let (min, max, zb) = full_bounds();
    for len in 1..=10u32 {
        for format in formats(&mut rng) {
            let ats: &[usize] = if cfg!(miri) {
                &[0, 100]
            } else {
                &[0, 1, 7, 63, 64, 65, 100]
            };
            for &at in ats {
                let mut bytes = Vec::new();
                for i in 0..200 {
                    if i == at {
                        push(&mut bytes, raw_of_len(&mut rng, len));
                    } else {
                        push(&mut bytes, rng.below(128));
                    }
                }
                check_varint(&bytes, format, 200, 0, min, max, 0, zb, &|| {
                    format!("len={len} at={at} {format:?}")
                });
            }
        }
    }
}

/// Non-canonical padding, overlong varints (9th/10th byte), bad 10th bytes, at many places.
#[test]
fn varint_corrupt_encodings() {
    let mut rng = Rng::new(4);
    let (min, max, zb) = full_bounds();
    let corruptions: [&[u8]; 8] = [
        &[0x80, 0x00],                                                 // non-canonical zero
        &[0xff, 0x80, 0x00],                                           // padded 127
        &[0xff; 9],                                                    // 9 continuation bytes...
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02], // 10th byte 2
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], // 10th byte 1: u64::MAX
        &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], // 10 bytes, zero
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],       // 9 bytes, i64::MAX
        &[0xff; 12],                                                   // far too long
    ];
    let dists: &[Dist] = if cfg!(miri) {
        &[Dist::Mixed]
    } else {
        &[Dist::AllOne, Dist::Mixed, Dist::MostlyOne]
    };
    let ats: &[usize] = if cfg!(miri) {
        &[0, 64, 128]
    } else {
        &[0, 1, 5, 8, 30, 63, 64, 70, 127, 128, 150]
    };
    for &dist in dists {
        for (c, bad) in corruptions.iter().enumerate() {
            for &at in ats {
                let mut bytes = Vec::new();
                for i in 0..220 {
                    if i == at {
                        bytes.extend_from_slice(bad);
                    } else {
                        push(&mut bytes, raw_delta(&mut rng, dist));
                    }
                }
                for format in formats(&mut rng) {
                    check_varint(&bytes, format, 220, 0, min, max, 0, zb, &|| {
                        format!("corruption {c} at value {at} {dist:?} {format:?}")
                    });
                }
            }
        }
    }
}

/// Long and corrupt varints starting at every byte offset across the first two block
/// boundaries, after one-byte values: every split of a varint between two 64-byte blocks
/// (the SIMD loops check runs that cross a boundary separately from runs inside a block).
#[test]
fn varint_long_and_corrupt_at_every_split() {
    let mut rng = Rng::new(14);
    let (min, max, zb) = full_bounds();
    let cases: [&[u8]; 9] = [
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], // 9 bytes, valid
        &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], // 10 bytes, 2^63
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02], // 10th byte 2
        &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], // 10 bytes, zero
        &[0xff; 9],                                              // 9 continuation bytes
        &[0xff; 10],                                             // 10 continuation bytes
        &[0xff; 11],                                             // 11 continuation bytes
        &[0x80, 0x00],                                           // non-canonical zero
        &[0xff, 0xff, 0x80, 0x00],                               // padded
    ];
    let starts = if cfg!(miri) { 56..72 } else { 40..140 };
    for (c, case) in cases.iter().enumerate() {
        for at in starts.clone() {
            let mut bytes: Vec<u8> = (0..at).map(|_| rng.below(128) as u8).collect();
            bytes.extend_from_slice(case);
            bytes.extend((0..150).map(|_| rng.below(128) as u8));
            for format in formats(&mut rng) {
                check_varint(&bytes, format, at + 151, 0, min, max, 0, zb, &|| {
                    format!("case {c} at byte {at} {format:?}")
                });
            }
        }
    }
}

/// Truncation at every byte of a stream long enough for the SIMD blocks.
#[test]
fn varint_truncated_at_every_byte() {
    let mut rng = Rng::new(5);
    let (min, max, zb) = full_bounds();
    let n = if cfg!(miri) { 20 } else { 150 };
    for dist in [Dist::MostlyOne, Dist::Mixed, Dist::AllNine] {
        let bytes = stream(&mut rng, dist, n);
        let buf = embed(&mut rng, &bytes, 3);
        for cut in 0..=bytes.len() {
            let slice = &buf[3..3 + cut];
            for format in [VarintFormat::SIDECAR, VarintFormat::U64] {
                check_varint(slice, format, n, 0, min, max, 0, zb, &|| {
                    format!("cut={cut} {dist:?} {format:?}")
                });
            }
        }
    }
}

/// Bounds violations and running-sum overflow at every position.
#[test]
fn varint_bounds_and_overflow() {
    let mut rng = Rng::new(6);
    let n = if cfg!(miri) { 40 } else { 200 };
    for dist in [Dist::AllOne, Dist::MostlyOne, Dist::Mixed] {
        let bytes = stream(&mut rng, dist, n);
        // Decode once to learn the values, then put bounds just inside / outside them.
        let mut values = vec![0u64; n];
        let _ = scalar::delta_decode_u64(
            &bytes,
            VarintFormat::SIDECAR,
            1000,
            0,
            u64::MAX,
            &mut values,
        );
        let mut zvalues = vec![0i64; n];
        // Mixed ZigZag sums may overflow `i64`: the values before that are still good anchors.
        let _ = scalar::delta_decode_zigzag(
            &bytes,
            VarintFormat::SIDECAR,
            0,
            i64::MIN,
            i64::MAX,
            &mut zvalues,
        );
        for i in (0..n).step_by(if cfg!(miri) { 13 } else { 7 }) {
            let (v, z) = (values[i], zvalues[i]);
            for (min, max, zmin, zmax) in [
                (v.saturating_add(1), u64::MAX, z.saturating_add(1), i64::MAX),
                (0, v.saturating_sub(1), i64::MIN, z.saturating_sub(1)),
                (v, v, z, z),
                (1001, u64::MAX, -5, 5),
            ] {
                check_varint(
                    &bytes,
                    VarintFormat::SIDECAR,
                    n,
                    1000,
                    min,
                    max,
                    0,
                    (zmin, zmax),
                    &|| {
                        format!("{dist:?} bounds around value {i}: [{min}, {max}] [{zmin}, {zmax}]")
                    },
                );
            }
        }
        // Overflow of the running sum, starting close to the top (and bottom) of the range.
        for gap in [0u64, 1, 5, 64 * 127, 64 * 127 + 1, 20_000, 1 << 40] {
            let prev = u64::MAX - gap;
            let zprev_hi = i64::MAX - gap as i64;
            let zprev_lo = i64::MIN + gap as i64;
            for zprev in [zprev_hi, zprev_lo] {
                check_varint(
                    &bytes,
                    VarintFormat::U64,
                    n,
                    prev,
                    0,
                    u64::MAX,
                    zprev,
                    (i64::MIN, i64::MAX),
                    &|| format!("{dist:?} overflow gap {gap} zprev {zprev}"),
                );
            }
        }
    }
}

/// Random byte flips in valid streams: the tiers agree with scalar whatever happens.
#[test]
fn varint_random_mutations() {
    let mut rng = Rng::new(7);
    let (min, max, zb) = full_bounds();
    let rounds = if cfg!(miri) { 4 } else { 3000 };
    for round in 0..rounds {
        let dist = DISTS[round % DISTS.len()];
        let n = 20 + rng.below(300) as usize;
        let mut bytes = stream(&mut rng, dist, n);
        for _ in 0..1 + rng.below(3) {
            let i = rng.below(bytes.len() as u64) as usize;
            bytes[i] = match rng.below(4) {
                0 => 0x00,
                1 => 0x80,
                2 => bytes[i] ^ 0x80,
                _ => rng.next_u64() as u8,
            };
        }
        for format in formats(&mut rng) {
            check_varint(&bytes, format, n, 0, min, max, 0, zb, &|| {
                format!("round {round} {dist:?} {format:?}")
            });
        }
    }
}

/// Pure random bytes (mostly errors) of every length up to 300.
#[test]
fn varint_random_bytes() {
    let mut rng = Rng::new(8);
    let (min, max, zb) = full_bounds();
    let top = if cfg!(miri) { 20 } else { 300 };
    for len in 0..=top {
        for _ in 0..4 {
            // Bias towards small bytes so streams are mostly valid for a while.
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    let b = rng.next_u64() as u8;
                    if rng.below(4) == 0 {
                        b
                    } else {
                        b & 0x7f
                    }
                })
                .collect();
            for format in formats(&mut rng) {
                check_varint(&bytes, format, len, 0, min, max, 0, zb, &|| {
                    format!("len {len} {format:?}")
                });
            }
        }
    }
}

fn packed(rng: &mut Rng, width: u32, count: usize) -> Vec<u8> {
    // Random values of `width` bits, LSB-first.
    let mut bytes = vec![0u8; (count * width as usize).div_ceil(8)];
    let mask = scalar::low_mask(width);
    for i in 0..count {
        let v = rng.next_u64() & mask;
        for b in 0..width as usize {
            if v >> b & 1 == 1 {
                let bit = i * width as usize + b;
                bytes[bit / 8] |= 1 << (bit % 8);
            }
        }
    }
    bytes
}

fn check_unpack(bytes: &[u8], width: u32, start: usize, count: usize, what: &dyn Fn() -> String) {
    if width <= 32 {
        let mut want = vec![0xDEAD_BEEFu32; count];
        scalar::unpack_u32(bytes, width, start, &mut want);
        for tier in simd_tiers() {
            let mut got = vec![0xDEAD_BEEFu32; count];
            tier.unpack_u32(bytes, width, start, &mut got).unwrap();
            assert_eq!(got, want, "{tier:?} u32 width {width} {}", what());
        }
    }
    let mut want = vec![0xDEAD_BEEF_DEAD_BEEFu64; count];
    scalar::unpack_u64(bytes, width, start, &mut want);
    for tier in simd_tiers() {
        let mut got = vec![0xDEAD_BEEF_DEAD_BEEFu64; count];
        tier.unpack_u64(bytes, width, start, &mut got).unwrap();
        assert_eq!(got, want, "{tier:?} u64 width {width} {}", what());
    }
}

/// Every width 0..=64, every start 0..64, every count 0..=300 (u32 and u64).
#[test]
fn unpack_every_width_start_and_count() {
    let (widths, starts, top) = if cfg!(miri) {
        (vec![0, 3, 17, 32, 61], 0..3usize, 20usize)
    } else {
        ((0..=64).collect(), 0..64, 300)
    };
    let mut rng = Rng::new(9);
    for width in widths {
        let total = 64 + top;
        let bytes = packed(&mut rng, width, total);
        for start in starts.clone() {
            for count in 0..=top {
                // Every count at a quarter of the starts, and a sample of counts at the rest,
                // keeps the run to seconds while hitting every (start, count) residue.
                if !start.is_multiple_of(4) && count % 13 != start % 13 {
                    continue;
                }
                let align = (start + count) % 64;
                let used = (width as usize * (start + count)).div_ceil(8);
                let buf = embed(&mut rng, &bytes[..used], align);
                let slice = &buf[align..align + used];
                check_unpack(slice, width, start, count, &|| {
                    format!("start {start} count {count} align {align}")
                });
            }
        }
    }
}

/// Slices that end before the requested values (the reference reads zeros there).
#[test]
fn unpack_past_the_end_reads_zero() {
    let mut rng = Rng::new(10);
    let widths: &[u32] = if cfg!(miri) {
        &[7, 33]
    } else {
        &[1, 7, 8, 13, 25, 26, 31, 32, 33, 57, 58, 63, 64]
    };
    let cuts: &[usize] = if cfg!(miri) {
        &[0, 17, 64]
    } else {
        &[0, 1, 17, 63, 64, 65, 100, 200]
    };
    for &width in widths {
        let bytes = packed(&mut rng, width, 400);
        for &cut in cuts {
            let cut = cut.min(bytes.len());
            let buf = embed(&mut rng, &bytes[..cut], 5);
            let slice = &buf[5..5 + cut];
            for start in [0usize, 3, 8, 100] {
                check_unpack(slice, width, start, 300, &|| {
                    format!("cut {cut} start {start}")
                });
            }
        }
    }
}

/// Large start indices (the bit offset near the top of `usize`) stay total and agree.
#[test]
fn unpack_huge_start() {
    let mut rng = Rng::new(11);
    let bytes = packed(&mut rng, 13, 100);
    for start in [usize::MAX - 40, usize::MAX / 13 + 1, 1 << (usize::BITS - 4)] {
        check_unpack(&bytes, 13, start, 40, &|| format!("start {start}"));
    }
}

#[test]
fn zigzag_helpers_round_trip() {
    for v in [0i64, -1, 1, i64::MIN, i64::MAX, -64, 63] {
        assert_eq!(scalar::zigzag_decode(zigzag_encode(v)), v);
    }
}

/// The BLOB length-check kernel: every tier returns the scalar reference's flags and sums on
/// chunks of every length 0..=300 (so vector tails are hit), from entries around every rule
/// boundary; and the reference itself agrees with a naive per-entry model.
#[test]
fn check_lengths_matches_scalar_and_model() {
    let special = [
        i64::MIN,
        i64::MIN + 1,
        -3,
        -2,
        -1,
        0,
        1,
        15,
        16,
        17,
        1 << 40,
        (1 << 52) - 3,
        (1 << 52) - 2,
        1 << 52,
        i64::MAX,
    ];
    let mut rng = Rng::new(41);
    let top = if cfg!(miri) { 24 } else { 300 };
    for len in 0..=top {
        for round in 0..if cfg!(miri) { 2 } else { 6 } {
            let chunk: Vec<i64> = (0..len)
                .map(|_| match (round, rng.below(16)) {
                    // Rounds 0 and 1: valid entries only (lengths and NULL / placeholder).
                    (0 | 1, 0..=3) => -1 - rng.below(2) as i64,
                    (0 | 1, _) => 16 + rng.below(1 << 20) as i64,
                    (_, 0..=9) => special[rng.below(special.len() as u64) as usize],
                    _ => rng.next_u64() as i64 >> rng.below(64),
                })
                .collect();
            for (min_real, floor) in [(16, 2), (0, 1), (16, 1)] {
                let want = scalar::check_lengths(&chunk, min_real, floor);
                // The naive model: is any entry outside the rules (or huge)? the sums.
                let bad = chunk.iter().any(|&v| {
                    !(v >= min_real || (-floor..0).contains(&v)) || v >= (1 << 52) - floor
                });
                assert_eq!(want.flags >> 52 != 0, bad, "{chunk:?} {min_real} {floor}");
                let real = chunk
                    .iter()
                    .filter(|&&v| v >= 0)
                    .fold(0u64, |s, &v| s.wrapping_add(v as u64));
                let total = chunk.iter().fold(0u64, |s, &v| s.wrapping_add(v as u64));
                assert_eq!((want.real, want.total), (real, total));
                assert_eq!(
                    want.negatives,
                    chunk.iter().filter(|&&v| v < 0).count() as u64
                );
                for tier in simd_tiers() {
                    let got = tier.check_lengths(&chunk, min_real, floor).unwrap();
                    assert_eq!(got, want, "{tier:?} len {len}");
                }
            }
        }
    }
}

/// The BLOB merge-layer kernel: every tier leaves the same slots, record offset and
/// unresolved flag as the scalar reference on blocks of every length 0..=300 (vector tails),
/// from slots in every state (gap, placeholder, NULL, value) and entries of every kind
/// (including arbitrary `i64`s and offsets that wrap); and the reference agrees with a naive
/// per-row model (an explicit running offset and an `if` per slot).
#[test]
fn merge_layer_matches_scalar_and_model() {
    const GAP: i64 = i64::MIN;
    let mut rng = Rng::new(43);
    let top = if cfg!(miri) { 20 } else { 300 };
    for len in 0..=top {
        for round in 0..if cfg!(miri) { 2 } else { 5 } {
            let entry = |rng: &mut Rng| match rng.below(8) {
                0 => -2,
                1 => -1,
                2 if round > 2 => rng.next_u64() as i64,
                _ => 16 + rng.below(1 << 20) as i64,
            };
            let entries: Vec<i64> = (0..len).map(|_| entry(&mut rng)).collect();
            let slots: Vec<i64> = (0..len)
                .map(|_| match rng.below(4) {
                    0 => GAP,
                    1 => -2,
                    _ => entry(&mut rng),
                })
                .collect();
            let offsets: Vec<u64> = (0..len).map(|_| rng.next_u64()).collect();
            let tags: Vec<u64> = (0..len).map(|_| rng.below(5)).collect();
            let record = if round == 4 {
                u64::MAX - rng.below(1 << 20)
            } else {
                rng.below(1 << 40)
            };
            let tag = 7 + rng.below(3);

            // The naive model.
            let (mut want_e, mut want_o, mut want_t) =
                (slots.clone(), offsets.clone(), tags.clone());
            let mut at = record;
            for i in 0..len {
                if want_e[i] < -1 {
                    (want_e[i], want_o[i], want_t[i]) = (entries[i], at, tag);
                }
                if entries[i] > 0 {
                    at = at.wrapping_add(entries[i] as u64);
                }
            }
            let want_open = want_e.iter().any(|&e| e < -1);

            let (mut e, mut o, mut t) = (slots.clone(), offsets.clone(), tags.clone());
            let step = scalar::merge_layer(&entries, record, tag, &mut e, &mut o, &mut t);
            assert_eq!((&e, &o, &t), (&want_e, &want_o, &want_t), "len {len}");
            assert_eq!((step.record, step.unresolved), (at, want_open), "len {len}");
            for tier in simd_tiers() {
                let (mut e, mut o, mut t) = (slots.clone(), offsets.clone(), tags.clone());
                let got = tier
                    .merge_layer(&entries, record, tag, &mut e, &mut o, &mut t)
                    .unwrap();
                assert_eq!(
                    (&e, &o, &t),
                    (&want_e, &want_o, &want_t),
                    "{tier:?} len {len}"
                );
                assert_eq!(got, step, "{tier:?} len {len}");
            }
        }
    }
    // Slices of different lengths: the shortest bounds the walk, in every tier.
    let entries = [20i64; 40];
    for tier in kernels::all().filter(|k| (k.available)()) {
        let (mut e, mut o, mut t) = ([GAP; 40], [0u64; 40], [0u64; 40]);
        let step = tier
            .merge_layer(&entries, 0, 1, &mut e[..33], &mut o[..35], &mut t)
            .unwrap();
        assert_eq!(step.record, 33 * 20, "{tier:?}");
        assert!(e[..33].iter().all(|&x| x == 20) && e[33..].iter().all(|&x| x == GAP));
        assert_eq!(o[32], 32 * 20);
        assert_eq!(o[33], 0);
    }
}
