//! AVX-512 BLOB merge kernels: the length check and the merge-layer step with 512-bit
//! registers.
//!
//! Every `unsafe fn` here requires AVX-512 F/BW/VL and AVX2 on the running CPU.

use crate::arch::scalar;
use core::arch::x86_64::*;

/// [`scalar::check_lengths`] vectorised with 512-bit registers.
///
/// # Safety
/// AVX-512F is present.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
pub(crate) unsafe fn check_lengths(
    chunk: &[i64],
    min_real: i64,
    floor: i64,
) -> scalar::LengthCheck {
    scalar::check_lengths_body(chunk, min_real, floor)
}

/// [`scalar::merge_layer`] with 512-bit registers: eight offsets per step from an
/// in-register prefix sum (`valignq`), slots updated with masked stores.
///
/// # Safety
/// AVX-512 F is present.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
pub(crate) unsafe fn merge_layer(
    entries: &[i64],
    record: u64,
    tag: u64,
    slot_entries: &mut [i64],
    slot_offsets: &mut [u64],
    slot_tags: &mut [u64],
) -> scalar::LayerStep {
    let n = scalar::merge_layer_len(entries, slot_entries, slot_offsets, slot_tags);
    let zero = _mm512_setzero_si512();
    let minus_one = _mm512_set1_epi64(-1);
    let tags = _mm512_set1_epi64(tag.cast_signed());
    let top = _mm512_set1_epi64(7);
    let mut carry = _mm512_set1_epi64(record.cast_signed());
    let mut open: __mmask8 = 0;
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: `i + 8 <= n`, and `n` is at most every slice's length.
        unsafe {
            let e = _mm512_loadu_si512(entries.as_ptr().add(i).cast());
            let real = _mm512_max_epi64(e, zero);
            let mut sum = _mm512_add_epi64(real, _mm512_alignr_epi64::<7>(real, zero));
            sum = _mm512_add_epi64(sum, _mm512_alignr_epi64::<6>(sum, zero));
            sum = _mm512_add_epi64(sum, _mm512_alignr_epi64::<4>(sum, zero));
            let offsets = _mm512_add_epi64(carry, _mm512_sub_epi64(sum, real));
            carry = _mm512_add_epi64(carry, _mm512_permutexvar_epi64(top, sum));
            let se = slot_entries.as_mut_ptr().add(i);
            let old = _mm512_loadu_si512(se.cast());
            let take = _mm512_cmplt_epi64_mask(old, minus_one);
            _mm512_mask_storeu_epi64(se, take, e);
            _mm512_mask_storeu_epi64(slot_offsets.as_mut_ptr().add(i).cast(), take, offsets);
            _mm512_mask_storeu_epi64(slot_tags.as_mut_ptr().add(i).cast(), take, tags);
            let entry = _mm512_mask_blend_epi64(take, old, e);
            open |= _mm512_cmplt_epi64_mask(entry, minus_one);
        }
        i += 8;
    }
    let record = _mm_cvtsi128_si64(_mm512_castsi512_si128(carry)).cast_unsigned();
    scalar::merge_layer_tail(
        entries,
        record,
        tag,
        slot_entries,
        slot_offsets,
        slot_tags,
        (i, n),
        open != 0,
    )
}
