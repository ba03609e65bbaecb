//! AVX2 varint kernels: 2x32-byte block masks for the shared loops, 8-value SSE prefix sums
//! for runs of one-byte deltas, whole 64-byte blocks of varints (1..=3 bytes: per-byte group
//! shifts from a table, `u32` prefix sums, terminator lanes packed with `vpermd`; up to 9
//! bytes: one varint per terminator, checks folded into one flag).
//!
//! Every `unsafe fn` here requires AVX2, BMI1, BMI2 and POPCNT on the running CPU.

use crate::arch::scalar;
use crate::arch::wire::{DeltaMode, VarintFormat};
use crate::arch::x86_64::varint::{self, fits_short3, Block, Masks, SHORT3_MARGIN};
use crate::error::Result;
use core::arch::x86_64::*;

/// The AVX2 block reader.
pub(crate) struct Avx2<const PEXT: bool>;

/// Prefix sums of 8 one-byte deltas at `p` in `u16` lanes (plain bytes, or ZigZag-decoded to
/// `i16` when `ZIGZAG`).
///
/// # Safety
/// `p..p + 8` is readable; SSE4.1 (implied by AVX2) is present.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn prefix8<const ZIGZAG: bool>(p: *const u8) -> __m128i {
    // SAFETY: the caller guarantees 8 readable bytes at `p`; `_mm_loadl_epi64` reads 8.
    let raw = unsafe { _mm_loadl_epi64(p.cast::<__m128i>()) };
    let mut x = _mm_cvtepu8_epi16(raw);
    if ZIGZAG {
        let sign = _mm_sub_epi16(_mm_setzero_si128(), _mm_and_si128(x, _mm_set1_epi16(1)));
        x = _mm_xor_si128(_mm_srli_epi16::<1>(x), sign);
    }
    x = _mm_add_epi16(x, _mm_slli_si128::<2>(x));
    x = _mm_add_epi16(x, _mm_slli_si128::<4>(x));
    _mm_add_epi16(x, _mm_slli_si128::<8>(x))
}

impl<const PEXT: bool> Block for Avx2<PEXT> {
    const HAS_SHORT: bool = true;
    // `short` rejects a block with a varint over 9 bytes (`short9`).
    const SHORT_REJECTS_LONG: bool = true;

    #[inline(always)]
    unsafe fn masks(p: *const u8) -> Masks {
        // SAFETY: the caller guarantees 64 readable bytes at `p` and AVX2.
        unsafe { masks(p) }
    }

    #[inline(always)]
    unsafe fn ones<M: DeltaMode>(
        p: *const u8,
        groups: usize,
        prev: i64,
        min: i64,
        max: i64,
        out: *mut i64,
    ) -> (usize, i64) {
        // SAFETY: forwarded contract.
        unsafe {
            if M::SIGNED {
                ones::<true>(p, groups, prev, min, max, out)
            } else {
                ones::<false>(p, groups, prev, min, max, out)
            }
        }
    }

    #[inline(always)]
    unsafe fn short<M: DeltaMode>(
        p: *const u8,
        cont: u64,
        last: u32,
        count: usize,
        prev: i64,
        min: i64,
        max: i64,
        out: *mut i64,
    ) -> Option<i64> {
        // SAFETY: the caller's contract; AVX2, BMI1/2, POPCNT (and fast PEXT when `PEXT`):
        // this type is only used after detecting them.
        unsafe {
            if M::SIGNED {
                short::<true, PEXT>(p, cont, last, count, prev, min, max, out)
            } else {
                short::<false, PEXT>(p, cont, last, count, prev, min, max, out)
            }
        }
    }
}

/// [`Block::short`] (`SIGNED`: ZigZag deltas; otherwise unsigned ones, values and bounds as
/// `i64` bit patterns): [`short3`] for blocks of 1..=3-byte varints, [`short9`] for the
/// others.
///
/// `#[inline(always)]` without target features of its own (like the [`Block`] methods): it
/// must inline into the tier's loop, whose features its callees need.
///
/// # Safety
/// The contract of [`Block::short`]; AVX2, BMI1, BMI2 and POPCNT present (and fast PEXT
/// when `PEXT`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn short<const SIGNED: bool, const PEXT: bool>(
    p: *const u8,
    cont: u64,
    last: u32,
    count: usize,
    prev: i64,
    min: i64,
    max: i64,
    out: *mut i64,
) -> Option<i64> {
    let within = |v: i64| !outside::<SIGNED>(v, min, max);
    // Room for the block's values (ZigZag: within `prev ± margin`; unsigned: in `prev ..
    // prev + margin`) without overflow.
    let room = if SIGNED {
        (i64::MIN + SHORT3_MARGIN..=i64::MAX - SHORT3_MARGIN).contains(&prev)
    } else {
        prev.cast_unsigned() <= u64::MAX - SHORT3_MARGIN.cast_unsigned()
    };
    if !fits_short3(cont, last) || !room {
        // SAFETY: the caller's contract and features.
        return unsafe { short9::<SIGNED, PEXT>(p, cont, last, count, prev, min, max, out) };
    }
    let lowest = if SIGNED { prev - SHORT3_MARGIN } else { prev };
    if within(lowest) && within(prev.wrapping_add(SHORT3_MARGIN)) {
        // SAFETY: the caller's contract (64 readable bytes at `p`, `count` writable slots at
        // `out`, one per terminator up to `last`, AVX2); lengths and `prev` checked above.
        return Some(unsafe { short3::<SIGNED>(p, cont, last, count, prev, out) });
    }
    // Near a bound: decode into scratch and check every value first, so nothing reaches `out`
    // when one is out of bounds (the exact path then writes the values before it and stops).
    let mut values = [0i64; 64];
    let count = count.min(values.len());
    // SAFETY: as above, with `values` (64 slots) for `out`.
    let final_value = unsafe { short3::<SIGNED>(p, cont, last, count, prev, values.as_mut_ptr()) };
    if values
        .get(..count)
        .unwrap_or_default()
        .iter()
        .any(|&v| !within(v))
    {
        return None;
    }
    // SAFETY: `count` slots are writable at `out` (caller) and initialised in `values`.
    unsafe { core::ptr::copy_nonoverlapping(values.as_ptr(), out, count) };
    Some(final_value)
}

/// Shift (0, 7 or 14) of the 7-bit group of each of 8 bytes within its varint, indexed by the
/// continuation bits of bytes -2..=6 relative to the first of them (bit 0 = byte -2): a byte
/// after one continuation byte is its varint's second group, after two its third.
static GROUP_SHIFT: [[u8; 8]; 512] = group_shift();

#[allow(clippy::indexing_slicing)] // const evaluation: a bad index fails the build
const fn group_shift() -> [[u8; 8]; 512] {
    let mut table = [[0u8; 8]; 512];
    let mut i = 0;
    while i < 512 {
        let mut k = 0;
        while k < 8 {
            // Byte `k`'s predecessor is index bit `k + 1`, the one before that bit `k`.
            table[i][k] = match ((i >> (k + 1)) & 1, (i >> k) & 1) {
                (1, 1) => 14,
                (1, _) => 7,
                _ => 0,
            };
            k += 1;
        }
        i += 1;
    }
    table
}

/// `vpermd` indices moving the lanes whose bit is set in the index to the front, in order.
static LEFT_PACK: [[u8; 8]; 256] = left_pack();

#[allow(clippy::indexing_slicing)] // const evaluation: a bad index fails the build
const fn left_pack() -> [[u8; 8]; 256] {
    let mut table = [[0u8; 8]; 256];
    let mut m = 0;
    while m < 256 {
        let (mut lane, mut k) = (0, 0);
        while lane < 8 {
            if (m >> lane) & 1 == 1 {
                table[m][k] = lane as u8;
                k += 1;
            }
            lane += 1;
        }
        m += 1;
    }
    table
}

/// Decodes a block of varints of at most 3 bytes that starts on a varint boundary: writes the
/// `count` running values (one per terminator up to `last`) to `out` and returns the last.
/// `SIGNED`: ZigZag deltas and `i64` values; otherwise unsigned deltas and `u64` values (as
/// `i64` bit patterns).
///
/// Every byte's value bits are shifted to their place in its varint ([`GROUP_SHIFT`]) and
/// summed in `u32` lanes (at most `64 * (2^21 - 1)`): at a varint's last byte the running sum
/// is the sum of the block's raw varints up to and including that one. The lanes of
/// terminators are packed to the front ([`LEFT_PACK`]); unsigned deltas are then the values
/// less `prev`; for ZigZag ones each raw varint is the difference of neighbouring packed
/// lanes, ZigZag-decoded and prefix-summed again (`i32`, at most `2^20` in magnitude each).
/// Values are widened and stored 8 at a time.
///
/// # Safety
/// 64 readable bytes at `p`; `out..out + count` writable; `count` = the number of clear bits
/// of `cont` up to `last`, none of them ending a varint longer than 3 bytes; `prev` at least
/// [`SHORT3_MARGIN`] away from the limits of the value type (no overflow); AVX2 present.
#[inline]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn short3<const SIGNED: bool>(
    p: *const u8,
    cont: u64,
    last: u32,
    count: usize,
    prev: i64,
    out: *mut i64,
) -> i64 {
    let low7 = _mm256_set1_epi32(0x7f);
    let top = _mm256_set1_epi32(7);
    let zero = _mm256_setzero_si256();
    let one = _mm256_set1_epi32(1);
    // Lane `i` takes lane `i - 1` (lane 0 is replaced by the previous chunk's last sum).
    let up1 = _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6);
    let mut running = _mm256_set1_epi64x(prev);
    let mut carry = zero;
    // ZigZag: the running byte sum at the last terminator of the chunks so far (broadcast).
    let mut last_sum = zero;
    let ends = !cont & (u64::MAX >> (63 - last.min(63)));
    // Bit `8j + b` = the continuation bit of byte `8j + b - 2`.
    let before = u128::from(cont) << 2;
    let mut k = 0usize;
    for j in 0..8 {
        let index = (before >> (8 * j)) as usize & 0x1ff;
        let shifts = GROUP_SHIFT.get(index).copied().unwrap_or([0; 8]);
        let lanes = (ends >> (8 * j)) as u8;
        let n = lanes.count_ones() as usize;
        let pack = LEFT_PACK.get(usize::from(lanes)).copied().unwrap_or([0; 8]);
        // SAFETY: `8j + 8 <= 64` bytes at `p` are readable (caller); `shifts` and `pack` are
        // 8 bytes each.
        let packed = unsafe {
            let x = _mm256_cvtepu8_epi32(_mm_loadl_epi64(p.add(8 * j).cast()));
            let sh = _mm256_cvtepu8_epi32(_mm_loadl_epi64(shifts.as_ptr().cast()));
            let v = prefix_sum8(_mm256_sllv_epi32(_mm256_and_si256(x, low7), sh));
            let v = _mm256_add_epi32(v, carry);
            carry = _mm256_permutevar8x32_epi32(v, top);
            let order = _mm256_cvtepu8_epi32(_mm_loadl_epi64(pack.as_ptr().cast()));
            _mm256_permutevar8x32_epi32(v, order)
        };
        if n == 0 {
            continue;
        }
        // The `n` values of this chunk as 32-bit offsets from `running` (the lanes past `n`
        // hold junk, never kept: they are stored only where later chunks overwrite them).
        let offsets = if SIGNED {
            let earlier =
                _mm256_blend_epi32::<1>(_mm256_permutevar8x32_epi32(packed, up1), last_sum);
            let raw = _mm256_sub_epi32(packed, earlier);
            let delta = _mm256_xor_si256(
                _mm256_srli_epi32::<1>(raw),
                _mm256_sub_epi32(zero, _mm256_and_si256(raw, one)),
            );
            prefix_sum8(delta)
        } else {
            packed
        };
        // SAFETY: AVX2 (caller); the stores: see below.
        unsafe {
            let lo = _mm256_add_epi64(widen::<SIGNED>(_mm256_castsi256_si128(offsets)), running);
            let hi = _mm256_add_epi64(
                widen::<SIGNED>(_mm256_extracti128_si256::<1>(offsets)),
                running,
            );
            if k + 8 <= count {
                // `k + 8 <= count` slots at `out` are writable (caller); the lanes past `n`
                // are overwritten by the next chunks (or lie below `count`).
                _mm256_storeu_si256(out.add(k).cast(), lo);
                _mm256_storeu_si256(out.add(k + 4).cast(), hi);
            } else {
                let mut values = [0i64; 8];
                _mm256_storeu_si256(values.as_mut_ptr().cast(), lo);
                _mm256_storeu_si256(values.as_mut_ptr().add(4).cast(), hi);
                for (i, &v) in values.iter().enumerate().take(n.min(count - k.min(count))) {
                    // `k + i < count`: writable (caller).
                    *out.add(k + i) = v;
                }
            }
        }
        if SIGNED {
            let at_last = _mm256_set1_epi32(n as i32 - 1);
            last_sum = _mm256_permutevar8x32_epi32(packed, at_last);
            let total = _mm256_permutevar8x32_epi32(offsets, at_last);
            running = _mm256_add_epi64(running, widen::<true>(_mm256_castsi256_si128(total)));
        }
        k += n;
    }
    if SIGNED {
        _mm_cvtsi128_si64(_mm256_castsi256_si128(running))
    } else {
        // SAFETY: `count >= 1` (the block has a terminator: `last`): slot `count - 1` was
        // written above.
        unsafe { *out.add(count - 1) }
    }
}

/// Decodes a block of varints of 1..=9 bytes one at a time from its terminator mask, with
/// no branch per value: each is gathered from an 8-byte load (plus its ninth byte), and the
/// overflow and bounds checks of all of them fold into one flag. Values go to scratch first,
/// so `out` is written only when every one passed. `None` for a varint longer than 9 bytes or
/// a failed check (the exact path then finds which value failed). `SIGNED`: ZigZag deltas and
/// `i64` values and bounds; otherwise unsigned ones (as `i64` bit patterns).
///
/// # Safety
/// The contract of [`Block::short`]: 128 readable bytes at `p`, `count` writable slots at
/// `out`; AVX2, BMI1 and BMI2 present (and fast PEXT when `PEXT`).
#[inline]
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
#[allow(clippy::too_many_arguments)]
unsafe fn short9<const SIGNED: bool, const PEXT: bool>(
    p: *const u8,
    cont: u64,
    last: u32,
    count: usize,
    prev: i64,
    min: i64,
    max: i64,
    out: *mut i64,
) -> Option<i64> {
    let valid = u64::MAX >> (63 - last.min(63));
    if varint::runs(cont & valid, 9) != 0 {
        return None;
    }
    let mut values = [0i64; 64];
    let mut ends = !cont & valid;
    let mut start = 0usize;
    let mut running = prev;
    let mut bad = false;
    for slot in values.iter_mut() {
        if ends == 0 {
            break;
        }
        let end = ends.trailing_zeros() as usize;
        let len = end + 1 - start.min(end);
        // SAFETY: `start <= end < 64`, so the 9 bytes at `p + start` lie within the 128
        // readable bytes (caller); BMI2 (caller) when `PEXT`.
        let raw = unsafe { varint::value9::<PEXT>(p.add(start), len) };
        let (value, overflow) = if SIGNED {
            running.overflowing_add(scalar::zigzag_decode(raw))
        } else {
            let (v, o) = running.cast_unsigned().overflowing_add(raw);
            (v.cast_signed(), o)
        };
        bad |= overflow | outside::<SIGNED>(value, min, max);
        *slot = value;
        running = value;
        start = end + 1;
        ends &= ends - 1;
    }
    if bad || ends != 0 || count > values.len() {
        return None;
    }
    // SAFETY: `count` slots are writable at `out` (caller); the block has exactly `count`
    // terminators, so `values[..count]` was written above.
    unsafe { core::ptr::copy_nonoverlapping(values.as_ptr(), out, count) };
    Some(running)
}

/// Whether `v` lies outside `[min, max]`, compared as `i64` (`SIGNED`) or as `u64` bit
/// patterns; branch-free.
#[inline(always)]
fn outside<const SIGNED: bool>(v: i64, min: i64, max: i64) -> bool {
    if SIGNED {
        (v < min) | (v > max)
    } else {
        let (v, min, max) = (v.cast_unsigned(), min.cast_unsigned(), max.cast_unsigned());
        (v < min) | (v > max)
    }
}

/// Inclusive prefix sum of 8 `u32` / `i32` lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn prefix_sum8(v: __m256i) -> __m256i {
    // Inside each 128-bit half, then the low half's total into the high one.
    let v = _mm256_add_epi32(v, _mm256_slli_si256::<4>(v));
    let v = _mm256_add_epi32(v, _mm256_slli_si256::<8>(v));
    let low_total = _mm256_shuffle_epi32::<0xff>(v);
    _mm256_add_epi32(v, _mm256_permute2x128_si256::<0x08>(low_total, low_total))
}

/// Widens 4 `i32` (`SIGNED`) or `u32` lanes to 64 bits.
#[inline]
#[target_feature(enable = "avx2")]
fn widen<const SIGNED: bool>(v: __m128i) -> __m256i {
    if SIGNED {
        _mm256_cvtepi32_epi64(v)
    } else {
        _mm256_cvtepu32_epi64(v)
    }
}

/// # Safety
/// 64 readable bytes at `p`; AVX2 present.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn masks(p: *const u8) -> Masks {
    // SAFETY: 64 readable bytes at `p` (caller), two unaligned 32-byte loads.
    let (a, b) = unsafe {
        (
            _mm256_loadu_si256(p.cast::<__m256i>()),
            _mm256_loadu_si256(p.add(32).cast::<__m256i>()),
        )
    };
    let join = |lo: __m256i, hi: __m256i| {
        u64::from(_mm256_movemask_epi8(lo) as u32)
            | (u64::from(_mm256_movemask_epi8(hi) as u32) << 32)
    };
    let zero = _mm256_setzero_si256();
    let high7 = _mm256_set1_epi8(0xfe_u8 as i8);
    Masks {
        cont: join(a, b),
        zero: join(_mm256_cmpeq_epi8(a, zero), _mm256_cmpeq_epi8(b, zero)),
        gt1: !join(
            _mm256_cmpeq_epi8(_mm256_and_si256(a, high7), zero),
            _mm256_cmpeq_epi8(_mm256_and_si256(b, high7), zero),
        ),
    }
}

/// Runs of one-byte deltas; `SIGNED` = ZigZag deltas and signed bounds, otherwise unsigned
/// deltas (passed as `i64` bit patterns) and unsigned bounds.
///
/// # Safety
/// The contract of [`Block::ones`]; AVX2 present.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn ones<const SIGNED: bool>(
    p: *const u8,
    groups: usize,
    prev: i64,
    min: i64,
    max: i64,
    out: *mut i64,
) -> (usize, i64) {
    // Unsigned compares as signed ones after flipping the sign bit.
    let flip = if SIGNED {
        _mm256_setzero_si256()
    } else {
        _mm256_set1_epi64x(i64::MIN)
    };
    let minv = _mm256_xor_si256(_mm256_set1_epi64x(min), flip);
    let maxv = _mm256_xor_si256(_mm256_set1_epi64x(max), flip);
    let mut prevv = _mm256_set1_epi64x(prev);
    for g in 0..groups {
        // SAFETY: `8 * groups` readable bytes at `p` (caller).
        let sums = unsafe { prefix8::<SIGNED>(p.add(8 * g)) };
        let (lo, hi) = if SIGNED {
            (
                _mm256_cvtepi16_epi64(sums),
                _mm256_cvtepi16_epi64(_mm_srli_si128::<8>(sums)),
            )
        } else {
            (
                _mm256_cvtepu16_epi64(sums),
                _mm256_cvtepu16_epi64(_mm_srli_si128::<8>(sums)),
            )
        };
        let vlo = _mm256_add_epi64(lo, prevv);
        let vhi = _mm256_add_epi64(hi, prevv);
        let (flo, fhi) = (_mm256_xor_si256(vlo, flip), _mm256_xor_si256(vhi, flip));
        let bad = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpgt_epi64(minv, flo), _mm256_cmpgt_epi64(flo, maxv)),
            _mm256_or_si256(_mm256_cmpgt_epi64(minv, fhi), _mm256_cmpgt_epi64(fhi, maxv)),
        );
        if _mm256_testz_si256(bad, bad) == 0 {
            return (g, _mm_cvtsi128_si64(_mm256_castsi256_si128(prevv)));
        }
        // SAFETY: `8 * groups` writable slots at `out` (caller), `g < groups`.
        unsafe {
            _mm256_storeu_si256(out.add(8 * g).cast::<__m256i>(), vlo);
            _mm256_storeu_si256(out.add(8 * g + 4).cast::<__m256i>(), vhi);
        }
        prevv = _mm256_add_epi64(prevv, _mm256_permute4x64_epi64::<0xff>(hi));
    }
    (groups, _mm_cvtsi128_si64(_mm256_castsi256_si128(prevv)))
}

/// AVX2 [`scalar::delta_decode`] in mode `M`, gathering with PEXT when `PEXT`.
///
/// # Safety
/// AVX2, BMI1, BMI2 and POPCNT are present.
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
pub(crate) unsafe fn delta_decode<M: DeltaMode, const PEXT: bool>(
    bytes: &[u8],
    format: VarintFormat,
    prev: M::Value,
    min: M::Value,
    max: M::Value,
    out: &mut [M::Value],
) -> Result<usize> {
    // SAFETY: AVX2 + BMI2 (caller).
    unsafe { varint::delta::<Avx2<PEXT>, M, PEXT>(bytes, format, prev, min, max, out) }
}

/// AVX2 [`scalar::count_uvarints`].
///
/// # Safety
/// AVX2, BMI1, BMI2 and POPCNT are present.
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
pub(crate) unsafe fn count_uvarints(bytes: &[u8], format: VarintFormat) -> Result<usize> {
    // SAFETY: AVX2 (caller).
    unsafe { varint::count::<Avx2<false>>(bytes, format) }
}
