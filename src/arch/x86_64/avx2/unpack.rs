//! AVX2 bit unpacking: `vpshufb` + `vpsrlvd`, 8 values per step.
//!
//! Every `unsafe fn` here requires AVX2, BMI1, BMI2 and POPCNT on the running CPU.

use crate::arch::scalar;
use crate::arch::unpack::{bit_range_fits, for_groups, lane1_base, U32X8, U32X8_SHIFT};
use core::arch::x86_64::*;

/// Bytes a group of 8 `u32` values of `width` bits reads from its first byte.
#[inline(always)]
pub(super) const fn group_read(width: usize) -> usize {
    lane1_base(width) + 16
}

/// Unpacks one group of 8 values of `width` (1..=32) bits from `p` into `out`.
///
/// # Safety
/// `p..p + group_read(width)` readable, `out..out + 8` writable; AVX2 present.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn group_u32(p: *const u8, width: usize, consts: &U32Consts, out: *mut u32) {
    // SAFETY: `group_read(width)` readable bytes at `p`, 8 writable `u32` at `out`, AVX2
    // (all the caller's contract).
    unsafe {
        let r = group_u32_vec(p, width, consts);
        _mm256_storeu_si256(out.cast::<__m256i>(), r);
    }
}

/// One group of 8 values as a vector (see [`group_u32`]).
///
/// # Safety
/// `p..p + group_read(width)` readable; AVX2 present.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn group_u32_vec(p: *const u8, width: usize, c: &U32Consts) -> __m256i {
    // SAFETY: both 16-byte loads end at or before `p + group_read(width)` (caller).
    let (lo, hi) = unsafe {
        (
            _mm_loadu_si128(p.cast::<__m128i>()),
            _mm_loadu_si128(p.add(lane1_base(width)).cast::<__m128i>()),
        )
    };
    let v = _mm256_set_m128i(hi, lo);
    let mut r = _mm256_srlv_epi32(_mm256_shuffle_epi8(v, c.shuf_a), c.shift);
    if c.two {
        let b = _mm256_shuffle_epi8(v, c.shuf_b);
        r = _mm256_or_si256(r, _mm256_sllv_epi32(b, c.back));
    }
    _mm256_and_si256(r, c.mask)
}

/// Per-width constants for the `u32` unpack loop.
pub(super) struct U32Consts {
    shuf_a: __m256i,
    shuf_b: __m256i,
    shift: __m256i,
    back: __m256i,
    mask: __m256i,
    two: bool,
}

impl U32Consts {
    /// # Safety
    /// AVX2 present; `width` 1..=32.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn new(width: usize) -> U32Consts {
        let [a, b] = U32X8.get(width).copied().unwrap_or([[0x80; 32]; 2]);
        let shifts = U32X8_SHIFT.get(width).copied().unwrap_or([0; 8]);
        // SAFETY: each load reads exactly one 32-byte array.
        let (shuf_a, shuf_b, shift) = unsafe {
            (
                _mm256_loadu_si256(a.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(b.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(shifts.as_ptr().cast::<__m256i>()),
            )
        };
        U32Consts {
            shuf_a,
            shuf_b,
            shift,
            back: _mm256_sub_epi32(_mm256_set1_epi32(8), shift),
            mask: _mm256_set1_epi32(scalar::low_mask(width as u32) as u32 as i32),
            two: width > 25,
        }
    }
}

/// AVX2 [`scalar::unpack_u32`].
///
/// # Safety
/// AVX2, BMI1, BMI2 and POPCNT are present.
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
pub(crate) unsafe fn unpack_u32(bytes: &[u8], width: u32, start: usize, out: &mut [u32]) {
    let w = width as usize;
    // Width 32 is a copy of little-endian words, which the reference does with `memcpy`.
    if w == 0 || w >= 32 || out.len() < 16 || !bit_range_fits(width, start, out.len()) {
        return scalar::unpack_u32(bytes, width, start, out);
    }
    let head = ((8 - start % 8) % 8).min(out.len());
    let (head_out, body) = out.split_at_mut(head);
    scalar::unpack_u32(bytes, width, start, head_out);
    let first = start + head;
    // SAFETY: AVX2 (caller), `w` in 1..=32.
    let consts = unsafe { U32Consts::new(w) };
    let dst = body.as_mut_ptr();
    let done = for_groups(bytes, w, first, body.len(), 8, group_read(w), |src, i| {
        // SAFETY: `for_groups` hands out `src` with `group_read(w)` readable bytes and an
        // index with 8 values left in `body`; AVX2 (caller).
        unsafe { group_u32(src, w, &consts, dst.add(i)) }
    });
    let tail = body.get_mut(done..).unwrap_or_default();
    scalar::unpack_u32(bytes, width, first + done, tail);
}

/// AVX2 [`scalar::unpack_u64`]: widths up to 32 through the `u32` groups, widened; wider ones
/// through the reference.
///
/// # Safety
/// AVX2, BMI1, BMI2 and POPCNT are present.
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
pub(crate) unsafe fn unpack_u64(bytes: &[u8], width: u32, start: usize, out: &mut [u64]) {
    let w = width as usize;
    if w == 0 || w > 32 || out.len() < 16 || !bit_range_fits(width, start, out.len()) {
        return scalar::unpack_u64(bytes, width, start, out);
    }
    let head = ((8 - start % 8) % 8).min(out.len());
    let (head_out, body) = out.split_at_mut(head);
    scalar::unpack_u64(bytes, width, start, head_out);
    let first = start + head;
    // SAFETY: AVX2 (caller), `w` in 1..=32.
    let consts = unsafe { U32Consts::new(w) };
    let dst = body.as_mut_ptr();
    let done = for_groups(bytes, w, first, body.len(), 8, group_read(w), |src, i| {
        // SAFETY: `src` has `group_read(w)` readable bytes, `dst + i` 8 writable `u64`
        // (`for_groups`); AVX2 (caller).
        unsafe {
            let r = group_u32_vec(src, w, &consts);
            let lo = _mm256_cvtepu32_epi64(_mm256_castsi256_si128(r));
            let hi = _mm256_cvtepu32_epi64(_mm256_extracti128_si256::<1>(r));
            _mm256_storeu_si256(dst.add(i).cast::<__m256i>(), lo);
            _mm256_storeu_si256(dst.add(i + 4).cast::<__m256i>(), hi);
        }
    });
    let tail = body.get_mut(done..).unwrap_or_default();
    scalar::unpack_u64(bytes, width, first + done, tail);
}
