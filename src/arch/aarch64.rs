//! aarch64 NEON kernels (little-endian only): bit unpacking to `u32` with `tbl` + `ushl`,
//! 8 values per step as two 128-bit halves, using the same gather tables as AVX2.
//!
//! Deliberately small: no aarch64 machine runs the tests here, so only the unpacker (whose
//! table logic is shared with, and tested through, the x86_64 kernels) has a NEON version;
//! every other kernel runs the scalar reference in this table.

use super::kernels::Kernels;
use super::scalar;
use super::unpack::{bit_range_fits, for_groups, lane1_base, U32X8, U32X8_SHIFT};
use core::arch::aarch64::*;

/// The NEON table: the NEON unpacker, the scalar reference for the rest.
pub(crate) static KERNELS: Kernels = Kernels {
    name: "neon",
    available: has_neon,
    delta_u64: scalar::delta_decode_u64,
    delta_zigzag: scalar::delta_decode_zigzag,
    count: scalar::count_uvarints,
    unpack_u32,
    unpack_u64: scalar::unpack_u64,
    check_lengths: scalar::check_lengths,
    merge_layer: scalar::merge_layer,
};

/// NEON is part of the aarch64 baseline; nothing to detect at run time.
fn has_neon() -> bool {
    cfg!(target_feature = "neon")
}

/// NEON [`scalar::unpack_u32`].
///
/// # Safety
/// NEON is present (always true on aarch64 targets with the `neon` feature).
#[target_feature(enable = "neon")]
pub(crate) unsafe fn unpack_u32(bytes: &[u8], width: u32, start: usize, out: &mut [u32]) {
    let w = width as usize;
    if w == 0 || w > 32 || out.len() < 16 || !bit_range_fits(width, start, out.len()) {
        return scalar::unpack_u32(bytes, width, start, out);
    }
    let head = ((8 - start % 8) % 8).min(out.len());
    let (head_out, body) = out.split_at_mut(head);
    scalar::unpack_u32(bytes, width, start, head_out);
    let first = start + head;

    let [a, b] = U32X8.get(w).copied().unwrap_or([[0x80; 32]; 2]);
    let shifts = U32X8_SHIFT.get(w).copied().unwrap_or([0; 8]);
    // Right shifts as negative left shifts; the back shifts of the "B" bytes are `8 - shift`.
    let mut right = [0i32; 8];
    let mut back = [0i32; 8];
    for ((r, k), &s) in right.iter_mut().zip(back.iter_mut()).zip(shifts.iter()) {
        *r = -(s as i32);
        *k = 8 - s as i32;
    }
    let half = lane1_base(w);
    let two = w > 25;
    let mask_bits = scalar::low_mask(width) as u32;
    // SAFETY: every load reads exactly 16 bytes of a local array of at least that size.
    let (a0, a1, b0, b1, r0, r1, k0, k1) = unsafe {
        (
            vld1q_u8(a.as_ptr()),
            vld1q_u8(a.as_ptr().add(16)),
            vld1q_u8(b.as_ptr()),
            vld1q_u8(b.as_ptr().add(16)),
            vld1q_s32(right.as_ptr()),
            vld1q_s32(right.as_ptr().add(4)),
            vld1q_s32(back.as_ptr()),
            vld1q_s32(back.as_ptr().add(4)),
        )
    };
    let dst = body.as_mut_ptr();
    let done = for_groups(bytes, w, first, body.len(), 8, half + 16, |src, i| {
        // SAFETY: `for_groups` hands out `src` with `half + 16` readable bytes and `i` with 8
        // values left in `body`; NEON (caller).
        unsafe {
            let mask = vdupq_n_u32(mask_bits);
            let lo = vld1q_u8(src);
            let hi = vld1q_u8(src.add(half));
            let mut v0 = vshlq_u32(vreinterpretq_u32_u8(vqtbl1q_u8(lo, a0)), r0);
            let mut v1 = vshlq_u32(vreinterpretq_u32_u8(vqtbl1q_u8(hi, a1)), r1);
            if two {
                let w0 = vshlq_u32(vreinterpretq_u32_u8(vqtbl1q_u8(lo, b0)), k0);
                let w1 = vshlq_u32(vreinterpretq_u32_u8(vqtbl1q_u8(hi, b1)), k1);
                v0 = vorrq_u32(v0, w0);
                v1 = vorrq_u32(v1, w1);
            }
            vst1q_u32(dst.add(i), vandq_u32(v0, mask));
            vst1q_u32(dst.add(i + 4), vandq_u32(v1, mask));
        }
    });
    let tail = body.get_mut(done..).unwrap_or_default();
    scalar::unpack_u32(bytes, width, first + done, tail);
}
