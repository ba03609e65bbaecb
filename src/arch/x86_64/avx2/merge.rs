//! AVX2 BLOB merge kernels: the length check and the merge-layer step with 256-bit registers.
//!
//! Every `unsafe fn` here requires AVX2 on the running CPU.

use crate::arch::scalar;
use core::arch::x86_64::*;

/// [`scalar::check_lengths`] vectorised with 256-bit registers.
///
/// # Safety
/// AVX2 is present.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn check_lengths(
    chunk: &[i64],
    min_real: i64,
    floor: i64,
) -> scalar::LengthCheck {
    scalar::check_lengths_body(chunk, min_real, floor)
}

/// [`scalar::merge_layer`] with 256-bit registers: four offsets per step from an in-register
/// prefix sum of the non-negative entries, slots blended with the `slot < -1` mask.
///
/// # Safety
/// AVX2 is present.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn merge_layer(
    entries: &[i64],
    record: u64,
    tag: u64,
    slot_entries: &mut [i64],
    slot_offsets: &mut [u64],
    slot_tags: &mut [u64],
) -> scalar::LayerStep {
    let n = scalar::merge_layer_len(entries, slot_entries, slot_offsets, slot_tags);
    let zero = _mm256_setzero_si256();
    let minus_one = _mm256_set1_epi64x(-1);
    let tags = _mm256_set1_epi64x(tag.cast_signed());
    let mut carry = _mm256_set1_epi64x(record.cast_signed());
    let mut open = zero;
    let mut i = 0;
    while i + 4 <= n {
        // SAFETY: `i + 4 <= n`, and `n` is at most every slice's length.
        unsafe {
            let e = _mm256_loadu_si256(entries.as_ptr().add(i).cast());
            let real = _mm256_andnot_si256(_mm256_cmpgt_epi64(zero, e), e);
            // Inclusive prefix sum: add the vector shifted up one lane, then two lanes.
            let up1 = _mm256_blend_epi32::<0b0000_0011>(
                _mm256_permute4x64_epi64::<0b10_01_00_11>(real),
                zero,
            );
            let sum = _mm256_add_epi64(real, up1);
            let up2 = _mm256_blend_epi32::<0b0000_1111>(
                _mm256_permute4x64_epi64::<0b01_00_00_00>(sum),
                zero,
            );
            let sum = _mm256_add_epi64(sum, up2);
            let offsets = _mm256_add_epi64(carry, _mm256_sub_epi64(sum, real));
            carry = _mm256_add_epi64(carry, _mm256_permute4x64_epi64::<0b11_11_11_11>(sum));
            let se = slot_entries.as_mut_ptr().add(i).cast::<__m256i>();
            let so = slot_offsets.as_mut_ptr().add(i).cast::<__m256i>();
            let st = slot_tags.as_mut_ptr().add(i).cast::<__m256i>();
            let old = _mm256_loadu_si256(se);
            let take = _mm256_cmpgt_epi64(minus_one, old);
            let blend = |new: __m256i, old: __m256i| {
                _mm256_or_si256(_mm256_and_si256(take, new), _mm256_andnot_si256(take, old))
            };
            let entry = blend(e, old);
            _mm256_storeu_si256(se, entry);
            _mm256_storeu_si256(so, blend(offsets, _mm256_loadu_si256(so)));
            _mm256_storeu_si256(st, blend(tags, _mm256_loadu_si256(st)));
            open = _mm256_or_si256(open, _mm256_cmpgt_epi64(minus_one, entry));
        }
        i += 4;
    }
    let mut lanes = [0i64; 4];
    // SAFETY: `lanes` is 32 writable bytes.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), carry) };
    let mut opens = [0i64; 4];
    // SAFETY: as above.
    unsafe { _mm256_storeu_si256(opens.as_mut_ptr().cast(), open) };
    scalar::merge_layer_tail(
        entries,
        lanes[0].cast_unsigned(),
        tag,
        slot_entries,
        slot_offsets,
        slot_tags,
        (i, n),
        opens.iter().any(|&m| m != 0),
    )
}
