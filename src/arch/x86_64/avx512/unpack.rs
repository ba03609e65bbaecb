//! AVX-512 VBMI bit unpacking: `vpermb` + `vpsrlvd`/`vpsrlvq`, 16 `u32` or 8 `u64` values per
//! step (the `avx512` table without VBMI uses the AVX2 unpackers).
//!
//! Every `unsafe fn` here requires AVX-512 F/BW/VL and VBMI on the running CPU.

use super::load64;
use crate::arch::scalar;
use crate::arch::unpack::{
    bit_range_fits, for_groups, pair_fits, U32X16, U32X16_PAIRS, U32X16_SHIFT, U64X8, U64X8_SHIFT,
};
use core::arch::x86_64::*;

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

/// AVX-512 VBMI [`scalar::unpack_u32`].
///
/// # Safety
/// AVX-512 F/BW/VL/VBMI present.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
pub(super) unsafe fn unpack_u32_vbmi(bytes: &[u8], width: u32, start: usize, out: &mut [u32]) {
    let w = width as usize;
    // Width 32 is a copy of little-endian words, which the reference does with `memcpy`.
    if w == 0 || w >= 32 || out.len() < 32 || !bit_range_fits(width, start, out.len()) {
        return scalar::unpack_u32(bytes, width, start, out);
    }
    let head = ((8 - start % 8) % 8).min(out.len());
    let (head_out, body) = out.split_at_mut(head);
    scalar::unpack_u32(bytes, width, start, head_out);
    let first = start + head;
    // SAFETY: AVX-512F (caller).
    let c = unsafe { Vbmi::u32x16(w) };
    let dst = body.as_mut_ptr();
    let done = if w <= 15 {
        // Small widths: several groups of 16 values (`2 * w` bytes each) per 64-byte load,
        // group `g`'s gather indices moved up by its `2 * g * w` bytes; the shifts repeat
        // because 16 values end on a byte boundary. Largest index: `2 * (k - 1) * w + 15 * w
        // / 8 + 3`, at most 34 (k = 4, w <= 4) or 61 (k = 2, w <= 15), so none wraps.
        if w <= 4 {
            // SAFETY: AVX-512 F/BW/VBMI (caller); `c` is `u32x16(w)` with one gather (w <= 25).
            unsafe { unpack_multi::<4>(bytes, w, first, body, &c) }
        } else {
            // SAFETY: AVX-512 F/BW/VBMI (caller); `c` is `u32x16(w)` with one gather (w <= 25).
            unsafe { unpack_multi::<2>(bytes, w, first, body, &c) }
        }
    } else if c.two && pair_fits(w) {
        // Widths 26..=30: one gather and a bit-field select per 16 values instead of two
        // gathers, two shifts and an OR.
        let [idx, ctrl] = U32X16_PAIRS.get(w).copied().unwrap_or([[0; 64]; 2]);
        // SAFETY: AVX-512F (caller); the tables are 64 bytes each.
        let (idx, ctrl) = unsafe { (load64(&idx), load64(&ctrl)) };
        for_groups(bytes, w, first, body.len(), 16, 64, |src, i| {
            // SAFETY: `for_groups` hands out `src` with 64 readable bytes and `i` with 16
            // values left in `body`; AVX-512 F/VBMI (caller).
            unsafe {
                let x = _mm512_loadu_si512(src.cast());
                let r = _mm512_multishift_epi64_epi8(ctrl, _mm512_permutexvar_epi8(idx, x));
                _mm512_storeu_si512(dst.add(i).cast(), _mm512_and_si512(r, c.mask));
            }
        })
    } else {
        for_groups(bytes, w, first, body.len(), 16, 64, |src, i| {
            // SAFETY: `for_groups` hands out `src` with 64 readable bytes and `i` with 16
            // values left in `body`; AVX-512 F/VBMI (caller).
            unsafe {
                let x = _mm512_loadu_si512(src.cast());
                let mut r = _mm512_srlv_epi32(_mm512_permutexvar_epi8(c.idx_a, x), c.shift);
                if c.two {
                    let b = _mm512_permutexvar_epi8(c.idx_b, x);
                    r = _mm512_or_si512(r, _mm512_sllv_epi32(b, c.back));
                }
                _mm512_storeu_si512(dst.add(i).cast(), _mm512_and_si512(r, c.mask));
            }
        })
    };
    let tail = body.get_mut(done..).unwrap_or_default();
    scalar::unpack_u32(bytes, width, first + done, tail);
}

/// Unpacks `K` groups of 16 `u32` values per 64-byte load into `body` (values from `first`,
/// a multiple of 8) for widths with one gather per value and `2 * (K - 1) * w + 15 * w / 8 + 3
/// < 64`; returns how many values were done (a multiple of `16 * K`).
///
/// # Safety
/// AVX-512 F/BW/VBMI present; `c` is `Vbmi::u32x16(w)` with `!c.two`.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
unsafe fn unpack_multi<const K: usize>(
    bytes: &[u8],
    w: usize,
    first: usize,
    body: &mut [u32],
    c: &Vbmi,
) -> usize {
    let mut idx = [c.idx_a; K];
    for (g, slot) in idx.iter_mut().enumerate() {
        *slot = _mm512_add_epi8(c.idx_a, _mm512_set1_epi8((2 * g * w) as i8));
    }
    let dst = body.as_mut_ptr();
    for_groups(bytes, w, first, body.len(), 16 * K, 64, |src, i| {
        // SAFETY: `for_groups` hands out `src` with 64 readable bytes and `i` with `16 * K`
        // values left in `body`; AVX-512 F/VBMI (caller).
        unsafe {
            let x = _mm512_loadu_si512(src.cast());
            for (g, &ix) in idx.iter().enumerate() {
                let r = _mm512_srlv_epi32(_mm512_permutexvar_epi8(ix, x), c.shift);
                _mm512_storeu_si512(dst.add(i + 16 * g).cast(), _mm512_and_si512(r, c.mask));
            }
        }
    })
}

/// AVX-512 VBMI [`scalar::unpack_u64`].
///
/// # Safety
/// AVX-512 F/BW/VL/VBMI present.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
pub(super) unsafe fn unpack_u64_vbmi(bytes: &[u8], width: u32, start: usize, out: &mut [u64]) {
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
