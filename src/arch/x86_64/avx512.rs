//! AVX-512 kernels (F/BW/VL + AVX2 + BMI2): one 64-byte load and three mask compares per
//! varint block, 8-value `zmm` prefix sums for runs of one-byte deltas, and, where VBMI is
//! present, `vpermb` + `vpsrlvd`/`vpsrlvq` bit unpacking (16 `u32` or 8 `u64` values per
//! step); without VBMI the unpackers are the AVX2 ones.
//!
//! Every `unsafe fn` here requires AVX-512 F/BW/VL, AVX2 and BMI2 on the running CPU (checked
//! by [`Tier::is_available`](crate::arch::Tier::is_available) before any call).

use super::avx2::{self, prefix8};
use super::varint::{self, Block, Masks};
use crate::arch::scalar;
use crate::arch::unpack::{bit_range_fits, for_groups, U32X16, U32X16_SHIFT, U64X8, U64X8_SHIFT};
use crate::codec::varint::VarintFormat;
use crate::error::Result;
use core::arch::x86_64::*;

/// The AVX-512 block reader.
pub(super) struct Avx512;

impl Block for Avx512 {
    #[inline(always)]
    unsafe fn masks(p: *const u8) -> Masks {
        // SAFETY: the caller guarantees 64 readable bytes at `p` and AVX-512BW.
        unsafe { masks(p) }
    }

    #[inline(always)]
    unsafe fn ones_u64(
        p: *const u8,
        groups: usize,
        prev: u64,
        min: u64,
        max: u64,
        out: *mut u64,
    ) -> usize {
        // SAFETY: forwarded contract.
        unsafe { ones::<false>(p, groups, prev as i64, min as i64, max as i64, out.cast()) }
    }

    #[inline(always)]
    unsafe fn ones_zigzag(
        p: *const u8,
        groups: usize,
        prev: i64,
        min: i64,
        max: i64,
        out: *mut i64,
    ) -> usize {
        // SAFETY: forwarded contract.
        unsafe { ones::<true>(p, groups, prev, min, max, out) }
    }
}

/// # Safety
/// 64 readable bytes at `p`; AVX-512BW present.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn masks(p: *const u8) -> Masks {
    // SAFETY: 64 readable bytes at `p` (caller).
    let x = unsafe { _mm512_loadu_si512(p.cast()) };
    Masks {
        cont: _mm512_movepi8_mask(x),
        zero: _mm512_testn_epi8_mask(x, x),
        gt1: _mm512_test_epi8_mask(x, _mm512_set1_epi8(0xfe_u8 as i8)),
    }
}

/// Runs of one-byte deltas; `SIGNED` = ZigZag deltas and signed bounds, otherwise unsigned
/// deltas (as `i64` bit patterns) and unsigned bounds.
///
/// # Safety
/// The contract of [`Block::ones_u64`] / [`Block::ones_zigzag`]; AVX-512F and AVX2 present.
#[inline]
#[target_feature(enable = "avx2,avx512f")]
unsafe fn ones<const SIGNED: bool>(
    p: *const u8,
    groups: usize,
    prev: i64,
    min: i64,
    max: i64,
    out: *mut i64,
) -> usize {
    let minv = _mm512_set1_epi64(min);
    let maxv = _mm512_set1_epi64(max);
    let last = _mm512_set1_epi64(7);
    let mut prevv = _mm512_set1_epi64(prev);
    for g in 0..groups {
        // SAFETY: `8 * groups` readable bytes at `p` (caller); AVX2 present.
        let sums = unsafe { prefix8::<SIGNED>(p.add(8 * g)) };
        let x = if SIGNED {
            _mm512_cvtepi16_epi64(sums)
        } else {
            _mm512_cvtepu16_epi64(sums)
        };
        let v = _mm512_add_epi64(x, prevv);
        let bad = if SIGNED {
            _mm512_cmplt_epi64_mask(v, minv) | _mm512_cmpgt_epi64_mask(v, maxv)
        } else {
            _mm512_cmplt_epu64_mask(v, minv) | _mm512_cmpgt_epu64_mask(v, maxv)
        };
        if bad != 0 {
            return g;
        }
        // SAFETY: `8 * groups` writable slots at `out` (caller), `g < groups`.
        unsafe { _mm512_storeu_si512(out.add(8 * g).cast(), v) };
        prevv = _mm512_add_epi64(prevv, _mm512_permutexvar_epi64(last, x));
    }
    groups
}

/// AVX-512 [`scalar::delta_decode_u64`].
///
/// # Safety
/// AVX-512 F/BW/VL, AVX2 and BMI2 are present.
#[target_feature(enable = "avx2,bmi2,avx512f,avx512bw,avx512vl")]
pub(crate) unsafe fn delta_decode_u64(
    bytes: &[u8],
    format: VarintFormat,
    prev: u64,
    min: u64,
    max: u64,
    out: &mut [u64],
) -> Result<usize> {
    if super::pext_is_fast() {
        // SAFETY: features (caller), PEXT fast (checked).
        unsafe { varint::delta_u64::<Avx512, true>(bytes, format, prev, min, max, out) }
    } else {
        // SAFETY: features (caller).
        unsafe { varint::delta_u64::<Avx512, false>(bytes, format, prev, min, max, out) }
    }
}

/// AVX-512 [`scalar::delta_decode_zigzag`].
///
/// # Safety
/// AVX-512 F/BW/VL, AVX2 and BMI2 are present.
#[target_feature(enable = "avx2,bmi2,avx512f,avx512bw,avx512vl")]
pub(crate) unsafe fn delta_decode_zigzag(
    bytes: &[u8],
    format: VarintFormat,
    prev: i64,
    min: i64,
    max: i64,
    out: &mut [i64],
) -> Result<usize> {
    if super::pext_is_fast() {
        // SAFETY: features (caller), PEXT fast (checked).
        unsafe { varint::delta_zigzag::<Avx512, true>(bytes, format, prev, min, max, out) }
    } else {
        // SAFETY: features (caller).
        unsafe { varint::delta_zigzag::<Avx512, false>(bytes, format, prev, min, max, out) }
    }
}

/// AVX-512 [`scalar::count_uvarints`].
///
/// # Safety
/// AVX-512 F/BW/VL, AVX2 and BMI2 are present.
#[target_feature(enable = "avx2,bmi2,avx512f,avx512bw,avx512vl")]
pub(crate) unsafe fn count_uvarints(bytes: &[u8], format: VarintFormat) -> Result<usize> {
    // SAFETY: features (caller).
    unsafe { varint::count::<Avx512>(bytes, format) }
}

/// Loads a 64-byte table row.
///
/// # Safety
/// AVX-512F present.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn load64(row: &[u8; 64]) -> __m512i {
    // SAFETY: `row` is exactly 64 readable bytes.
    unsafe { _mm512_loadu_si512(row.as_ptr().cast()) }
}

/// Per-width constants of the VBMI unpackers.
struct Vbmi {
    idx_a: __m512i,
    idx_b: __m512i,
    shift: __m512i,
    back: __m512i,
    mask: __m512i,
    two: bool,
}

impl Vbmi {
    /// Constants for 16 `u32` values per group.
    ///
    /// # Safety
    /// AVX-512F present.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn u32x16(width: usize) -> Vbmi {
        let [a, b] = U32X16.get(width).copied().unwrap_or([[0; 64]; 2]);
        let shifts = U32X16_SHIFT.get(width).copied().unwrap_or([0; 16]);
        // SAFETY: AVX-512F (caller).
        let (idx_a, idx_b, shift) = unsafe {
            (
                load64(&a),
                load64(&b),
                load64(bytemuck::cast_ref::<[u32; 16], [u8; 64]>(&shifts)),
            )
        };
        Vbmi {
            idx_a,
            idx_b,
            shift,
            back: _mm512_sub_epi32(_mm512_set1_epi32(8), shift),
            mask: _mm512_set1_epi32(scalar::low_mask(width as u32) as u32 as i32),
            two: width > 25,
        }
    }

    /// Constants for 8 `u64` values per group.
    ///
    /// # Safety
    /// AVX-512F present.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn u64x8(width: usize) -> Vbmi {
        let [a, b] = U64X8.get(width).copied().unwrap_or([[0; 64]; 2]);
        let shifts = U64X8_SHIFT.get(width).copied().unwrap_or([0; 8]);
        // SAFETY: AVX-512F (caller).
        let (idx_a, idx_b, shift) = unsafe {
            (
                load64(&a),
                load64(&b),
                load64(bytemuck::cast_ref::<[u64; 8], [u8; 64]>(&shifts)),
            )
        };
        Vbmi {
            idx_a,
            idx_b,
            shift,
            back: _mm512_sub_epi64(_mm512_set1_epi64(8), shift),
            mask: _mm512_set1_epi64(scalar::low_mask(width as u32) as i64),
            two: width > 57,
        }
    }
}

/// AVX-512 [`scalar::unpack_u32`] (VBMI where present, otherwise the AVX2 kernel).
///
/// # Safety
/// AVX-512 F/BW/VL, AVX2 and BMI2 are present.
#[target_feature(enable = "avx2,bmi2,avx512f,avx512bw,avx512vl")]
pub(crate) unsafe fn unpack_u32(bytes: &[u8], width: u32, start: usize, out: &mut [u32]) {
    if !super::has_vbmi() {
        // SAFETY: AVX2 + BMI2 (caller).
        return unsafe { avx2::unpack_u32(bytes, width, start, out) };
    }
    // SAFETY: AVX-512 F/BW/VL + VBMI (checked above).
    unsafe { unpack_u32_vbmi(bytes, width, start, out) }
}

/// # Safety
/// AVX-512 F/BW/VL/VBMI present.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
unsafe fn unpack_u32_vbmi(bytes: &[u8], width: u32, start: usize, out: &mut [u32]) {
    let w = width as usize;
    if w == 0 || w > 32 || out.len() < 32 || !bit_range_fits(width, start, out.len()) {
        return scalar::unpack_u32(bytes, width, start, out);
    }
    let head = ((8 - start % 8) % 8).min(out.len());
    let (head_out, body) = out.split_at_mut(head);
    scalar::unpack_u32(bytes, width, start, head_out);
    let first = start + head;
    // SAFETY: AVX-512F (caller).
    let c = unsafe { Vbmi::u32x16(w) };
    let dst = body.as_mut_ptr();
    let done = for_groups(bytes, w, first, body.len(), 16, 64, |src, i| {
        // SAFETY: `for_groups` hands out `src` with 64 readable bytes and `i` with 16 values
        // left in `body`; AVX-512 F/VBMI (caller).
        unsafe {
            let x = _mm512_loadu_si512(src.cast());
            let mut r = _mm512_srlv_epi32(_mm512_permutexvar_epi8(c.idx_a, x), c.shift);
            if c.two {
                let b = _mm512_permutexvar_epi8(c.idx_b, x);
                r = _mm512_or_si512(r, _mm512_sllv_epi32(b, c.back));
            }
            _mm512_storeu_si512(dst.add(i).cast(), _mm512_and_si512(r, c.mask));
        }
    });
    let tail = body.get_mut(done..).unwrap_or_default();
    scalar::unpack_u32(bytes, width, first + done, tail);
}

/// AVX-512 [`scalar::unpack_u64`] (VBMI where present, otherwise the AVX2 kernel).
///
/// # Safety
/// AVX-512 F/BW/VL, AVX2 and BMI2 are present.
#[target_feature(enable = "avx2,bmi2,avx512f,avx512bw,avx512vl")]
pub(crate) unsafe fn unpack_u64(bytes: &[u8], width: u32, start: usize, out: &mut [u64]) {
    if !super::has_vbmi() {
        // SAFETY: AVX2 + BMI2 (caller).
        return unsafe { avx2::unpack_u64(bytes, width, start, out) };
    }
    // SAFETY: AVX-512 F/BW/VL + VBMI (checked above).
    unsafe { unpack_u64_vbmi(bytes, width, start, out) }
}

/// # Safety
/// AVX-512 F/BW/VL/VBMI present.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
unsafe fn unpack_u64_vbmi(bytes: &[u8], width: u32, start: usize, out: &mut [u64]) {
    let w = width as usize;
    if w == 0 || w > 64 || out.len() < 16 || !bit_range_fits(width, start, out.len()) {
        return scalar::unpack_u64(bytes, width, start, out);
    }
    let head = ((8 - start % 8) % 8).min(out.len());
    let (head_out, body) = out.split_at_mut(head);
    scalar::unpack_u64(bytes, width, start, head_out);
    let first = start + head;
    // SAFETY: AVX-512F (caller).
    let c = unsafe { Vbmi::u64x8(w) };
    let dst = body.as_mut_ptr();
    let done = for_groups(bytes, w, first, body.len(), 8, 64, |src, i| {
        // SAFETY: `for_groups` hands out `src` with 64 readable bytes and `i` with 8 values
        // left in `body`; AVX-512 F/VBMI (caller).
        unsafe {
            let x = _mm512_loadu_si512(src.cast());
            let mut r = _mm512_srlv_epi64(_mm512_permutexvar_epi8(c.idx_a, x), c.shift);
            if c.two {
                let b = _mm512_permutexvar_epi8(c.idx_b, x);
                r = _mm512_or_si512(r, _mm512_sllv_epi64(b, c.back));
            }
            _mm512_storeu_si512(dst.add(i).cast(), _mm512_and_si512(r, c.mask));
        }
    });
    let tail = body.get_mut(done..).unwrap_or_default();
    scalar::unpack_u64(bytes, width, first + done, tail);
}
