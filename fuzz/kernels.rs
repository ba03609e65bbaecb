//! Differential fuzzing of every kernel table against the scalar reference
//! (`lakecore::arch::scalar`): varint delta decode (unsigned and ZigZag), validate/count,
//! bit unpack to `u32`/`u64`, the BLOB merge-layer step. Same results, same error kind and
//! offset, same output buffers.
//!
//! Runs as a short `#[test]` under `cargo test --features expose-kernels --test fuzz_kernels`,
//! and as a real fuzz target under `cargo bolero test`. Skipped under Miri (bolero touches the
//! file system); `tests/kernels.rs` runs its small inputs there instead.

#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use lakecore::arch::{kernels, scalar, Kernels};
use lakecore::codec::varint::VarintFormat;

fn simd_tiers() -> impl Iterator<Item = &'static Kernels> {
    kernels::all().filter(|k| k.name != "scalar" && (k.available)())
}

/// Turns fuzzer bytes into varint-heavy input: the selector can clear high bits so that long
/// valid runs (which reach the SIMD fast paths) are common, and repeat the input.
fn shape(bytes: &[u8], style: u8) -> Vec<u8> {
    let shaped: Vec<u8> = match style % 4 {
        0 => bytes.to_vec(),
        1 => bytes.iter().map(|b| b & 0x7f).collect(),
        2 => bytes
            .iter()
            .enumerate()
            .map(|(i, b)| if i % 5 == 4 { *b } else { b & 0x7f })
            .collect(),
        _ => bytes.iter().map(|b| b & 0x83).collect(),
    };
    // Repeat short inputs so that the 64-byte SIMD blocks are reached.
    let copies = if style & 0x20 == 0 { 1 } else { 8 };
    shaped
        .iter()
        .cycle()
        .take(shaped.len() * copies)
        .copied()
        .collect()
}

fn format_of(selector: u8) -> VarintFormat {
    VarintFormat::new(1 + selector % 10, selector & 0x10 == 0).unwrap()
}

type VarintCase = (Vec<u8>, u8, u8, u64, u64, u64, u16);

fn check_varint(&(ref raw, style, fmt, prev, a, b, count): &VarintCase) {
    let bytes = shape(raw, style);
    let format = format_of(fmt);
    let (min, max) = if style & 0x80 == 0 {
        (0, u64::MAX)
    } else {
        (a.min(b), a.max(b))
    };
    let count = usize::from(count % 1024);
    let mut want = vec![7u64; count];
    let want_r = scalar::delta_decode_u64(&bytes, format, prev, min, max, &mut want);
    let (zmin, zmax) = if style & 0x40 == 0 {
        (i64::MIN, i64::MAX)
    } else {
        ((min as i64).min(max as i64), (min as i64).max(max as i64))
    };
    let mut want_z = vec![7i64; count];
    let want_zr = scalar::delta_decode_zigzag(&bytes, format, prev as i64, zmin, zmax, &mut want_z);
    let want_c = scalar::count_uvarints(&bytes, format);
    for tier in simd_tiers() {
        let mut got = vec![7u64; count];
        let r = tier
            .delta_decode_u64(&bytes, format, prev, min, max, &mut got)
            .unwrap();
        assert_eq!((r, &got), (want_r, &want), "{tier:?} u64");
        let mut got_z = vec![7i64; count];
        let r = tier
            .delta_decode_zigzag(&bytes, format, prev as i64, zmin, zmax, &mut got_z)
            .unwrap();
        assert_eq!((r, &got_z), (want_zr, &want_z), "{tier:?} zigzag");
        let c = tier.count_uvarints(&bytes, format).unwrap();
        assert_eq!(c, want_c, "{tier:?} count");
    }
}

type UnpackCase = (Vec<u8>, u8, u8, u16, u16);

fn check_unpack(&(ref raw, copies, width, start, count): &UnpackCase) {
    let bytes: Vec<u8> = raw
        .iter()
        .cycle()
        .take(raw.len() * (1 + usize::from(copies % 16)))
        .copied()
        .collect();
    let bytes = &bytes[..];
    let width = u32::from(width % 65);
    // Mostly ranges inside the packed values (where results are non-trivial), sometimes past.
    let values = (bytes.len() * 8)
        .checked_div(width as usize)
        .unwrap_or(1024);
    let start = usize::from(start) % (values + 1);
    let count = usize::from(count) % (values - start + 9);
    if width <= 32 {
        let mut want = vec![1u32; count];
        scalar::unpack_u32(bytes, width, start, &mut want);
        for tier in simd_tiers() {
            let mut got = vec![1u32; count];
            tier.unpack_u32(bytes, width, start, &mut got).unwrap();
            assert_eq!(got, want, "{tier:?} u32 width {width}");
        }
    }
    let mut want = vec![1u64; count];
    scalar::unpack_u64(bytes, width, start, &mut want);
    for tier in simd_tiers() {
        let mut got = vec![1u64; count];
        tier.unpack_u64(bytes, width, start, &mut got).unwrap();
        assert_eq!(got, want, "{tier:?} u64 width {width}");
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "bolero reads its corpus from the file system, which Miri isolates"
)]
fn varint_kernels_match_scalar() {
    bolero::check!()
        .with_type::<VarintCase>()
        .for_each(check_varint);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "bolero reads its corpus from the file system, which Miri isolates"
)]
fn unpack_kernels_match_scalar() {
    bolero::check!()
        .with_type::<UnpackCase>()
        .for_each(check_unpack);
}

/// (entries, slot entries, slot offsets, record, tag): entries and slots are reduced to the
/// kinds the merge meets (gap, placeholder, NULL, lengths) most of the time.
type MergeCase = (Vec<i64>, Vec<i64>, Vec<u64>, u64, u8);

fn check_merge_layer(&(ref entries, ref slots, ref offsets, record, tag): &MergeCase) {
    let kind = |v: i64| match v.rem_euclid(16) {
        0 => i64::MIN,
        1 => -2,
        2 => -1,
        3 => v,
        _ => 16 + (v >> 8).rem_euclid(1 << 24),
    };
    let entries: Vec<i64> = entries.iter().map(|&v| kind(v)).collect();
    let slots: Vec<i64> = slots.iter().map(|&v| kind(v)).collect();
    let n = entries.len().min(slots.len()).min(offsets.len());
    let tags: Vec<u64> = (0..n as u64).collect();
    let tag = u64::from(tag);
    let (mut e, mut o, mut t) = (slots.clone(), offsets.clone(), tags.clone());
    let want = scalar::merge_layer(&entries, record, tag, &mut e, &mut o, &mut t);
    for tier in simd_tiers() {
        let (mut e2, mut o2, mut t2) = (slots.clone(), offsets.clone(), tags.clone());
        let got = tier.merge_layer(&entries, record, tag, &mut e2, &mut o2, &mut t2);
        assert_eq!(got, Some(want), "{tier:?}");
        assert_eq!((&e2, &o2, &t2), (&e, &o, &t), "{tier:?}");
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "bolero reads its corpus from the file system, which Miri isolates"
)]
fn merge_layer_kernels_match_scalar() {
    bolero::check!()
        .with_type::<MergeCase>()
        .for_each(check_merge_layer);
}
