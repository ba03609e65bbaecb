//! AVX-512 varint kernels (F/BW/VL + AVX2 + BMI2): one 64-byte load and three mask compares
//! per varint block, 8-value `zmm` prefix sums for runs of one-byte deltas.
//!
//! With VBMI2, varint streams also run through a stream loop ([`stream`], with [`Wide3`]
//! for 1..=3-byte varints, [`Wide9`] for longer ones): 64-byte chunks at fixed strides, so
//! the next chunk's load and masks never wait on where the current varints end. Each chunk
//! compresses its varint starts (`vpcompressb`), gathers their bytes from this chunk and the
//! next (`vpermt2b`), cuts each varint after its first byte with the top bit clear (the
//! gathered bytes as read, so no varint end is looked up first), and joins the 7-bit groups
//! with multiply-adds (`vpmaddubsw`, `vpmaddwd`).
//! The whole-block decoders [`short3`] / [`short9`] share those group decoders and serve
//! the blocks where a stream loop stops (near the end of the input, before an error).
//!
//! Every `unsafe fn` here requires AVX-512 F/BW/VL, AVX2 and BMI2 on the running CPU, plus
//! VBMI and VBMI2 where its name or contract says so.

use super::load64;
use crate::arch::wire::{DeltaMode, VarintFormat};
use crate::arch::x86_64::avx2::varint::{prefix8, Avx2};
use crate::arch::x86_64::varint::{self, fits_short3, Block, Masks, SHORT3_MARGIN};
use crate::error::Result;
use core::arch::x86_64::*;

/// The AVX-512 block reader without VBMI2: its whole-block paths are the AVX2 tier's.
pub(super) struct Avx512<const PEXT: bool>;

impl<const PEXT: bool> Block for Avx512<PEXT> {
    const HAS_SHORT: bool = <Avx2<PEXT> as Block>::HAS_SHORT;
    const SHORT_REJECTS_LONG: bool = <Avx2<PEXT> as Block>::SHORT_REJECTS_LONG;

    #[inline(always)]
    unsafe fn masks(p: *const u8) -> Masks {
        // SAFETY: the caller guarantees 64 readable bytes at `p` and AVX-512BW.
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
        unsafe { ones_of::<M>(p, groups, prev, min, max, out) }
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
        // SAFETY: forwarded contract (AVX-512 implies the AVX2 tier's features).
        unsafe { <Avx2<PEXT> as Block>::short::<M>(p, cont, last, count, prev, min, max, out) }
    }
}

/// [`ones`] for `M`'s deltas.
///
/// # Safety
/// As [`Block::ones`]; AVX-512F and AVX2 present.
#[inline(always)]
unsafe fn ones_of<M: DeltaMode>(
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

/// The AVX-512 block reader with VBMI/VBMI2 (`vpermt2b`, `vpcompressb`): adds whole-block
/// decoding of varints of up to 9 bytes.
pub(super) struct Avx512Vbmi2;

impl Block for Avx512Vbmi2 {
    const HAS_SHORT: bool = true;
    const SHORT_REJECTS_LONG: bool = true;
    const HAS_WIDE: bool = true;

    #[inline(always)]
    unsafe fn masks(p: *const u8) -> Masks {
        // SAFETY: forwarded contract.
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
        unsafe { ones_of::<M>(p, groups, prev, min, max, out) }
    }

    #[inline(always)]
    unsafe fn wide<M: DeltaMode>(
        p: *const u8,
        cont: u64,
        avail: usize,
        canonical: bool,
        prev: i64,
        min: i64,
        max: i64,
        out: *mut i64,
        room: usize,
    ) -> (usize, usize, i64) {
        let full = full_range::<M>(min, max);
        // SAFETY: forwarded contract (VBMI2: this type is only used after detecting it).
        unsafe {
            if M::SIGNED {
                wide::<true>(p, cont, avail, canonical, full, prev, min, max, out, room)
            } else {
                wide::<false>(p, cont, avail, canonical, full, prev, min, max, out, room)
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
        let full = full_range::<M>(min, max);
        // SAFETY: forwarded contract (VBMI2: this type is only used after detecting it).
        unsafe {
            if M::SIGNED {
                short_vbmi2::<true>(p, cont, last, count, full, prev, min, max, out)
            } else {
                short_vbmi2::<false>(p, cont, last, count, full, prev, min, max, out)
            }
        }
    }
}

/// Whether `[min, max]` (as `i64` bit patterns) is the whole range of `M`'s value type.
#[inline(always)]
fn full_range<M: DeltaMode>(min: i64, max: i64) -> bool {
    (min, max) == (M::to_bits(M::FULL_RANGE.0), M::to_bits(M::FULL_RANGE.1))
}

/// [`Block::short`] with VBMI2: [`short3`] for blocks of 1..=3-byte varints from a `prev`
/// with room for them, [`short9`] for the others, each compiled for whether bounds are
/// checked (`full`: the whole range of the type; only overflow can fail).
///
/// # Safety
/// The contract of [`Block::short`]; AVX-512 F/BW/VBMI/VBMI2 and AVX2 present.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn short_vbmi2<const SIGNED: bool>(
    p: *const u8,
    cont: u64,
    last: u32,
    count: usize,
    full: bool,
    prev: i64,
    min: i64,
    max: i64,
    out: *mut i64,
) -> Option<i64> {
    // Room for the block's values without overflow (ZigZag: within `prev ± margin`;
    // unsigned: in `prev .. prev + margin`), and whether all of them lie inside the bounds.
    let (room, inside) = if SIGNED {
        (
            (i64::MIN + SHORT3_MARGIN..=i64::MAX - SHORT3_MARGIN).contains(&prev),
            prev.wrapping_sub(SHORT3_MARGIN) >= min && prev.wrapping_add(SHORT3_MARGIN) <= max,
        )
    } else {
        let (prev, min, max) = (
            prev.cast_unsigned(),
            min.cast_unsigned(),
            max.cast_unsigned(),
        );
        let margin = SHORT3_MARGIN.cast_unsigned();
        (
            prev <= u64::MAX - margin,
            prev >= min && prev.saturating_add(margin) <= max,
        )
    };
    if fits_short3(cont, last) && room {
        return if inside {
            // SAFETY: forwarded contract; lengths and `prev` checked above.
            unsafe { short3::<SIGNED, false>(p, cont, last, count, prev, min, max, out) }
        } else {
            // SAFETY: forwarded contract; lengths and `prev` checked above.
            unsafe { short3::<SIGNED, true>(p, cont, last, count, prev, min, max, out) }
        };
    }
    if full {
        // SAFETY: forwarded contract.
        unsafe { short9::<SIGNED, false>(p, cont, last, count, prev, min, max, out) }
    } else {
        // SAFETY: forwarded contract.
        unsafe { short9::<SIGNED, true>(p, cont, last, count, prev, min, max, out) }
    }
}

/// The stream loops behind [`Block::wide`]: [`Wide3`] when
/// the first chunk's varints are all 1..=3 bytes, else [`Wide9`], each compiled for whether
/// bounds are checked (not for the full range of the type, `full`) and zero bytes matter.
///
/// # Safety
/// The contract of [`Block::wide`]; AVX-512 F/BW/VBMI/VBMI2 and AVX2 present.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn wide<const SIGNED: bool>(
    p: *const u8,
    cont: u64,
    avail: usize,
    canonical: bool,
    full: bool,
    prev: i64,
    min: i64,
    max: i64,
    out: *mut i64,
    room: usize,
) -> (usize, usize, i64) {
    macro_rules! run {
        ($decoder:expr) => {{
            let d = $decoder;
            if canonical {
                stream::<_, true>(&d, p, avail, prev, out, room)
            } else {
                stream::<_, false>(&d, p, avail, prev, out, room)
            }
        }};
    }
    // SAFETY: forwarded contract (every arm).
    unsafe {
        let k = Group9::new(min, max);
        match (fits_short3(cont, 63), full) {
            (true, true) => run!(Wide3::<SIGNED, false>::new(k)),
            (true, false) => run!(Wide3::<SIGNED, true>::new(k)),
            (false, true) => run!(Wide9::<SIGNED, false>::new(k)),
            (false, false) => run!(Wide9::<SIGNED, true>::new(k)),
        }
    }
}

/// `j + shift` for every byte lane `j`: past 63 it reads the next vector with `vpermt2b`,
/// and wraps with `vpermb` (which reads 6 index bits; those lanes are masked off).
#[allow(clippy::indexing_slicing)] // const evaluation: a bad index fails the build
const fn shifted_index(shift: u8) -> [u8; 64] {
    let mut idx = [0u8; 64];
    let mut j = 0;
    while j < 64 {
        idx[j] = j as u8 + shift;
        j += 1;
    }
    idx
}

static NEXT1: [u8; 64] = shifted_index(1);
static NEXT2: [u8; 64] = shifted_index(2);

/// Whole-block decode of varints of 1..=3 bytes: gather each varint's first, second and third
/// 7-bit groups into three byte vectors (`vpermb` + zero masks), compress them to the varint
/// starts (`vpcompressb`), widen 8 at a time to `u64` lanes, then prefix sums as in [`ones`].
///
/// `BOUNDED = false` skips the per-group `min`/`max` compare: the caller found every value the
/// block can produce (within [`SHORT3_MARGIN`] of `prev`) inside the bounds.
///
/// # Safety
/// The contract of [`Block::short`], with every varint 1..=3 bytes and `prev` at least
/// [`SHORT3_MARGIN`] from the limits (so the running sum cannot overflow); AVX-512
/// F/BW/VBMI/VBMI2 and AVX2 present.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
#[allow(clippy::too_many_arguments)]
unsafe fn short3<const SIGNED: bool, const BOUNDED: bool>(
    p: *const u8,
    cont: u64,
    last: u32,
    count: usize,
    prev: i64,
    min: i64,
    max: i64,
    out: *mut i64,
) -> Option<i64> {
    // SAFETY: 64 readable bytes at `p` (caller); the index tables are 64 bytes each.
    let (x, next1, next2) =
        unsafe { (_mm512_loadu_si512(p.cast()), load64(&NEXT1), load64(&NEXT2)) };
    let valid = u64::MAX >> (63 - last.min(63));
    let low7 = _mm512_and_si512(x, _mm512_set1_epi8(0x7f));
    // Second group of the varint starting at j: byte j+1, if byte j continues.
    let second = _mm512_maskz_permutexvar_epi8(cont, next1, low7);
    // Third group: byte j+2, if bytes j and j+1 continue.
    let third = _mm512_maskz_permutexvar_epi8(cont & (cont >> 1), next2, low7);
    let starts = !(cont << 1) & valid;
    let groups = Groups3 {
        firsts: _mm512_maskz_compress_epi8(starts, low7),
        seconds: _mm512_maskz_compress_epi8(starts, second),
        thirds: _mm512_maskz_compress_epi8(starts, third),
    };
    let k = Group9::new(min, max);
    // SAFETY: `out..out + count` writable (caller); `count` terminators end in the block,
    // the last at `last`: `1 <= count <= 64`.
    let run = unsafe { groups.store::<SIGNED, BOUNDED>(&k, count, _mm512_set1_epi64(prev), out)? };
    Some(_mm_cvtsi128_si64(_mm512_castsi512_si128(run)))
}

/// Byte `4i + b` of dword lane `i`: the index of varint `i` in the first groups (`b = 0`,
/// and `b = 2` for the third groups read alone), in the second groups (`b = 1`: 64 up, the
/// second table of `vpermt2b`); byte 3 is masked off.
#[allow(clippy::indexing_slicing)] // const evaluation: a bad index fails the build
const fn groups3_index() -> [u8; 64] {
    let mut idx = [0u8; 64];
    let mut i = 0;
    while i < 16 {
        idx[4 * i] = i as u8;
        idx[4 * i + 1] = 64 + i as u8;
        idx[4 * i + 2] = i as u8;
        i += 1;
    }
    idx
}

static GROUPS3_INDEX: [u8; 64] = groups3_index();

/// The first, second and third 7-bit groups of up to 64 varints of 1..=3 bytes, one byte
/// lane per varint (zero where a varint is shorter).
struct Groups3 {
    firsts: __m512i,
    seconds: __m512i,
    thirds: __m512i,
}

impl Groups3 {
    /// Decodes the `count` varints (`1 <= count <= 64`) 16 at a time from `prevv` into `out`,
    /// storing each group once it passed [`Groups3::decode`]; returns the last value (all
    /// lanes), or `None` at the first group that failed.
    ///
    /// # Safety
    /// `out..out + count` writable; AVX-512 F/BW/VBMI/VBMI2 and AVX2 present.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
    unsafe fn store<const SIGNED: bool, const BOUNDED: bool>(
        &self,
        k: &Group9,
        count: usize,
        prevv: __m512i,
        out: *mut i64,
    ) -> Option<__m512i> {
        // One bit per varint, 16 per group.
        let mut live = u64::MAX >> (64 - count);
        let mut run = prevv;
        let mut slot = out;
        let mut g = 0usize;
        loop {
            let lane_mask = live as u16;
            let (v_lo, v_hi, total) = self.decode::<SIGNED, BOUNDED>(k, g, lane_mask, run)?;
            // SAFETY: the lanes of `lane_mask` lie below `out + count` (writable, caller);
            // the high half's pointer may lie past the end only when its mask is zero.
            unsafe {
                _mm512_mask_storeu_epi64(slot.cast(), lane_mask as u8, v_lo);
                _mm512_mask_storeu_epi64(slot.wrapping_add(8).cast(), (lane_mask >> 8) as u8, v_hi);
            }
            run = total;
            live >>= 16;
            if live == 0 {
                return Some(run);
            }
            g += 1;
            slot = slot.wrapping_add(16);
        }
    }

    /// Decodes varints `16g .. 16g + 16` (those in `lane_mask`) from `prevv` (all lanes
    /// equal): the running values as two vectors of 8 and the last one in all lanes, or
    /// `None` when `BOUNDED` and a value falls outside `[min, max]`.
    ///
    /// Sixteen values per step in 32-bit lanes: a delta has at most 21 bits (ZigZag: at most
    /// 2^20 in magnitude), so a prefix sum of 16 fits an `i32` / `u32`; it is widened to two
    /// vectors of 8 `i64` before the running sum is added. Overflow is the caller's to rule
    /// out (`prevv` at least [`SHORT3_MARGIN`] from the limits).
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
    fn decode<const SIGNED: bool, const BOUNDED: bool>(
        &self,
        k: &Group9,
        g: usize,
        lane_mask: u16,
        prevv: __m512i,
    ) -> Option<(__m512i, __m512i, __m512i)> {
        let zero = _mm512_setzero_si512();
        let one = _mm512_set1_epi32(1);
        // Dword lane `i` gathers varint `16g + i`'s groups as bytes `[first, second, third, 0]`
        // (`vpermt2b` over the first and second groups, then the third merged into byte 2),
        // and two multiply-adds join them: `first + 128 * second` and `third` as 16-bit words
        // (`vpmaddubsw`: the 7-bit groups are non-negative `i8`, the factors unsigned), then
        // `low + 2^14 * high` (`vpmaddwd`).
        // SAFETY: `GROUPS3_INDEX` is 64 bytes; AVX-512F.
        let idx = _mm512_add_epi8(
            unsafe { load64(&GROUPS3_INDEX) },
            _mm512_set1_epi8((16 * g) as i8),
        );
        let pair =
            _mm512_maskz_permutex2var_epi8(0x3333_3333_3333_3333, self.firsts, idx, self.seconds);
        let bytes = _mm512_mask_permutexvar_epi8(pair, 0x4444_4444_4444_4444, idx, self.thirds);
        let words = _mm512_maddubs_epi16(_mm512_set1_epi32(0x0001_8001), bytes);
        let raw = _mm512_madd_epi16(words, _mm512_set1_epi32(0x4000_0001));
        let mut d = if SIGNED {
            let sign = _mm512_sub_epi32(zero, _mm512_and_si512(raw, one));
            _mm512_xor_si512(_mm512_srli_epi32::<1>(raw), sign)
        } else {
            raw
        };
        d = _mm512_add_epi32(d, _mm512_alignr_epi32::<15>(d, zero));
        d = _mm512_add_epi32(d, _mm512_alignr_epi32::<14>(d, zero));
        d = _mm512_add_epi32(d, _mm512_alignr_epi32::<12>(d, zero));
        d = _mm512_add_epi32(d, _mm512_alignr_epi32::<8>(d, zero));
        let (lo, hi) = (_mm512_castsi512_si256(d), _mm512_extracti64x4_epi64::<1>(d));
        let (lo, hi) = if SIGNED {
            (_mm512_cvtepi32_epi64(lo), _mm512_cvtepi32_epi64(hi))
        } else {
            (_mm512_cvtepu32_epi64(lo), _mm512_cvtepu32_epi64(hi))
        };
        let (v_lo, v_hi) = (_mm512_add_epi64(lo, prevv), _mm512_add_epi64(hi, prevv));
        if BOUNDED {
            let (mask_lo, mask_hi) = (lane_mask as u8, (lane_mask >> 8) as u8);
            let (minv, maxv) = (k.minv, k.maxv);
            let bad = if SIGNED {
                _mm512_mask_cmplt_epi64_mask(mask_lo, v_lo, minv)
                    | _mm512_mask_cmpgt_epi64_mask(mask_lo, v_lo, maxv)
                    | _mm512_mask_cmplt_epi64_mask(mask_hi, v_hi, minv)
                    | _mm512_mask_cmpgt_epi64_mask(mask_hi, v_hi, maxv)
            } else {
                _mm512_mask_cmplt_epu64_mask(mask_lo, v_lo, minv)
                    | _mm512_mask_cmpgt_epu64_mask(mask_lo, v_lo, maxv)
                    | _mm512_mask_cmplt_epu64_mask(mask_hi, v_hi, minv)
                    | _mm512_mask_cmpgt_epu64_mask(mask_hi, v_hi, maxv)
            };
            if bad != 0 {
                return None;
            }
        }
        // Lanes past the mask hold zero deltas, so lane 7 of the high half is the group's
        // last value.
        Some((v_lo, v_hi, _mm512_permutexvar_epi64(k.top, v_hi)))
    }
}

/// Byte lane numbers 0..64.
#[allow(clippy::indexing_slicing)] // const evaluation: a bad index fails the build
const fn iota() -> [u8; 64] {
    let mut idx = [0u8; 64];
    let mut j = 0;
    while j < 64 {
        idx[j] = j as u8;
        j += 1;
    }
    idx
}

static IOTA: [u8; 64] = iota();

/// Byte `8j + b` holds `j`: `vpermb` indices spreading byte `j` over qword `j`.
#[allow(clippy::indexing_slicing)] // const evaluation: a bad index fails the build
const fn lane_of_byte() -> [u8; 64] {
    let mut idx = [0u8; 64];
    let mut j = 0;
    while j < 64 {
        idx[j] = (j / 8) as u8;
        j += 1;
    }
    idx
}

static LANE_OF_BYTE: [u8; 64] = lane_of_byte();

/// Whole-block decode of varints of 1..=9 bytes, 8 at a time: the varint starts
/// (`vpcompressb` of the lane numbers under the start mask) go to
/// [`Group9::decode`]; a failed check there makes the block fall back to the exact
/// per-varint path.
///
/// # Safety
/// The contract of [`Block::short`]; AVX-512 F/BW/VBMI/VBMI2 and AVX2 present.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
#[allow(clippy::too_many_arguments)]
unsafe fn short9<const SIGNED: bool, const BOUNDED: bool>(
    p: *const u8,
    cont: u64,
    last: u32,
    count: usize,
    prev: i64,
    min: i64,
    max: i64,
    out: *mut i64,
) -> Option<i64> {
    // SAFETY: 128 readable bytes at `p` (caller); `IOTA` is 64 bytes.
    let (lo, hi, lanes) = unsafe {
        (
            _mm512_loadu_si512(p.cast()),
            _mm512_loadu_si512(p.add(64).cast()),
            load64(&IOTA),
        )
    };
    let k = Group9::new(min, max);
    let valid = u64::MAX >> (63 - last.min(63));
    let window = Window9 {
        lo,
        hi,
        starts: _mm512_maskz_compress_epi8(!(cont << 1) & valid, lanes),
    };
    // SAFETY: `LANE_OF_BYTE` is 64 bytes; `out..out + count` writable (caller); `count`
    // terminators end in the block, the last at `last`: `1 <= count <= 64`.
    let run = unsafe {
        let spread = load64(&LANE_OF_BYTE);
        k.store::<SIGNED, BOUNDED, true>(&window, spread, count, _mm512_set1_epi64(prev), out)?
    };
    Some(_mm_cvtsi128_si64(_mm512_castsi512_si128(run)))
}

/// The running values [`Group9::decode`] accepts for ZigZag deltas: `-2^62..2^62`. A ZigZag
/// delta of at most 9 bytes (63 bits) lies in `-2^62..2^62`, so a sum that overflows `i64`
/// wraps to `-2^63..-2^62 - 1` or `2^62..2^63`, outside this range, from any predecessor: a
/// group whose running values all lie in it had no overflow. A value outside it hands the
/// group over to the exact path, which reports the overflow or decodes it.
const ZIGZAG9_RANGE: core::ops::Range<i64> = -(1 << 62)..1 << 62;

/// The constants of [`Group9::decode`].
struct Group9 {
    step: __m512i,
    ninth_step: __m512i,
    eight: __m512i,
    seven_bits: __m512i,
    top_bits: __m512i,
    ninth_bits: __m512i,
    sign_bit: __m512i,
    range_shift: __m512i,
    no_stop: __m512i,
    minv: __m512i,
    maxv: __m512i,
    top: __m512i,
    one: __m512i,
}

/// The 128-byte window (`lo`, `hi`: the bytes as read) of up to 64 varints that start in its
/// first half, and their first byte numbers, one per byte lane.
#[derive(Clone, Copy)]
struct Window9 {
    lo: __m512i,
    hi: __m512i,
    starts: __m512i,
}

impl Group9 {
    /// Decodes the window's `count` varints (`1 <= count <= 64`) 8 at a time from `prevv`
    /// into `out`, storing each group once it passed [`Group9::decode`]; returns the last
    /// value (all lanes), or `None` at the first group that failed. `spread` is
    /// [`LANE_OF_BYTE`]; `LONG`: whether a varint longer than 9 bytes can be in the window
    /// (see [`Group9::decode`]).
    ///
    /// # Safety
    /// `out..out + count` writable; AVX-512 F/BW/VBMI/VBMI2 and AVX2 present.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
    unsafe fn store<const SIGNED: bool, const BOUNDED: bool, const LONG: bool>(
        &self,
        w: &Window9,
        spread: __m512i,
        count: usize,
        prevv: __m512i,
        out: *mut i64,
    ) -> Option<__m512i> {
        // One bit per varint, 8 per group.
        let mut live = u64::MAX >> (64 - count);
        let mut pick = spread;
        let mut run = prevv;
        let mut slot = out;
        loop {
            let lane_mask = live as u8;
            let (v, total) = self.decode::<SIGNED, BOUNDED, LONG>(w, pick, lane_mask, run)?;
            // SAFETY: the lanes of `lane_mask` lie below `out + count`: writable (caller).
            unsafe { _mm512_mask_storeu_epi64(slot.cast(), lane_mask, v) };
            run = total;
            live >>= 8;
            if live == 0 {
                return Some(run);
            }
            pick = _mm512_add_epi8(pick, self.eight);
            slot = slot.wrapping_add(8);
        }
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn new(min: i64, max: i64) -> Group9 {
        Group9 {
            step: _mm512_set1_epi64(0x0706_0504_0302_0100),
            // Byte 7 of every qword moved from `start + 7` to `start + 8`.
            ninth_step: _mm512_set1_epi64(0x0800_0000_0000_0000),
            eight: _mm512_set1_epi8(8),
            seven_bits: _mm512_set1_epi64(0x7f7f_7f7f_7f7f_7f7f),
            top_bits: _mm512_set1_epi64(0x8080_8080_8080_8080_u64 as i64),
            ninth_bits: _mm512_set1_epi64(0x7f00_0000_0000_0000),
            sign_bit: _mm512_set1_epi64(i64::MIN),
            // `v + 2^62` is non-negative exactly for `v` in `ZIGZAG9_RANGE`.
            range_shift: _mm512_set1_epi64(-ZIGZAG9_RANGE.start),
            no_stop: _mm512_set1_epi64(0x8080_8080_8080_807f_u64 as i64),
            minv: _mm512_set1_epi64(min),
            maxv: _mm512_set1_epi64(max),
            top: _mm512_set1_epi64(7),
            one: _mm512_set1_epi64(1),
        }
    }

    /// Decodes the (up to) 8 varints of `w` that `pick` selects: byte `8j + b` of `pick`
    /// holds the index into `w.starts` of lane `j`'s varint; lanes outside `lane_mask` take
    /// no part. Returns the running values (from `prevv`, all lanes equal) and the running
    /// value after the group in all lanes, or `None` when a lane's varint is longer than 9
    /// bytes (looked for only when `LONG`; otherwise the caller rules them out), or its value
    /// overflows (leaves [`ZIGZAG9_RANGE`] when `SIGNED`) or (`BOUNDED`) falls outside
    /// `[min, max]`.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
    fn decode<const SIGNED: bool, const BOUNDED: bool, const LONG: bool>(
        &self,
        w: &Window9,
        pick: __m512i,
        lane_mask: u8,
        prevv: __m512i,
    ) -> Option<(__m512i, __m512i)> {
        let Window9 { lo, hi, starts } = *w;
        let zero = _mm512_setzero_si512();
        // Every byte of qword `j` holds the first byte number of varint `8g + j`.
        let first = _mm512_permutexvar_epi8(pick, starts);
        // Bytes start..start + 8 in every qword (start <= 63: below 128), as read. The
        // varint ends at the first byte with its top bit clear: `t - 1` (`t` = the top bits
        // that are clear, `!raw & 0x80..80`) keeps every bit below the lowest of them, so the
        // bytes past the varint drop out with the top bits (table 0x80: `a & b & c`). No
        // terminator (`t = 0`): all 8 bytes.
        // `t - 1` is taken as `(top_bits - 1) - cont`, one step after the `cont` bits.
        let idx = _mm512_add_epi8(first, self.step);
        let raw = _mm512_permutex2var_epi8(lo, idx, hi);
        let cont = _mm512_and_si512(raw, self.top_bits);
        let below = _mm512_sub_epi64(self.no_stop, cont);
        let word = _mm512_ternarylogic_epi64::<0x80>(raw, below, self.seven_bits);
        // A ninth byte, in byte 7 of every qword; it counts where the first 8 all continue.
        // It must end the varint there (top bit clear), else the varint is longer than 9
        // bytes and the exact path reports it; its 7 bits land on value bits 56..62.
        let idx9 = _mm512_add_epi8(first, self.ninth_step);
        let ninth = _mm512_maskz_permutex2var_epi8(0x8080_8080_8080_8080, lo, idx9, hi);
        let nine = _mm512_cmpeq_epi64_mask(cont, self.top_bits);
        if LONG && _mm512_mask_test_epi64_mask(nine & lane_mask, ninth, self.sign_bit) != 0 {
            return None;
        }
        let high = _mm512_maskz_and_epi64(nine, ninth, self.ninth_bits);
        // Close the gaps pairwise: byte pairs into 14-bit words (`vpmaddubsw`: the 7-bit
        // groups, top bits cleared above, are non-negative `i8`, the factors 1 and 128
        // unsigned), word pairs into 28-bit dwords (`vpmaddwd`, factors 1 and 2^14), then the
        // high dword moves down 4 bits with a bit select (table 0xAC: `m ? x : shifted`; the
        // shifts bring in zeros).
        let x = _mm512_maddubs_epi16(_mm512_set1_epi16(0x8001_u16 as i16), word);
        let x = _mm512_madd_epi16(x, _mm512_set1_epi32(0x4000_0001));
        // Lanes outside the mask add nothing.
        let delta = if SIGNED {
            // ZigZag: `raw >> 1`, flipped when `raw` is odd. The shift is folded into the
            // select (bits 0..27 from `x >> 1`, the rest from `x >> 5`) and the ninth byte's
            // shift, and the sign (bit 0 of the first byte) is ready early; one table (0x56:
            // `(a | b) ^ c`) joins them.
            let half = _mm512_ternarylogic_epi64::<0xAC>(
                _mm512_set1_epi64(0x0000_0000_07ff_ffff),
                _mm512_srli_epi64::<5>(x),
                _mm512_srli_epi64::<1>(x),
            );
            let sign = _mm512_sub_epi64(zero, _mm512_and_si512(word, self.one));
            _mm512_maskz_ternarylogic_epi64::<0x56>(
                lane_mask,
                half,
                _mm512_srli_epi64::<1>(high),
                sign,
            )
        } else {
            let x = _mm512_ternarylogic_epi64::<0xAC>(
                _mm512_set1_epi64(0x0000_0000_0fff_ffff),
                _mm512_srli_epi64::<4>(x),
                x,
            );
            _mm512_maskz_or_epi64(lane_mask, x, high)
        };
        let mut sums = delta;
        sums = _mm512_add_epi64(sums, _mm512_alignr_epi64::<7>(sums, zero));
        sums = _mm512_add_epi64(sums, _mm512_alignr_epi64::<6>(sums, zero));
        sums = _mm512_add_epi64(sums, _mm512_alignr_epi64::<4>(sums, zero));
        let v = _mm512_add_epi64(sums, prevv);
        // Overflow of the running sum: exactly for unsigned deltas (the wrapped sum is below
        // the delta); for ZigZag deltas, no running value may leave `ZIGZAG9_RANGE` (then
        // none overflowed): `v + 2^62` has its sign bit clear.
        let m = lane_mask;
        let bad = if SIGNED {
            let shifted = _mm512_add_epi64(v, self.range_shift);
            let overflow = _mm512_mask_test_epi64_mask(m, shifted, self.sign_bit);
            if BOUNDED {
                overflow
                    | _mm512_mask_cmplt_epi64_mask(m, v, self.minv)
                    | _mm512_mask_cmpgt_epi64_mask(m, v, self.maxv)
            } else {
                overflow
            }
        } else if BOUNDED {
            _mm512_mask_cmplt_epu64_mask(m, v, delta)
                | _mm512_mask_cmplt_epu64_mask(m, v, self.minv)
                | _mm512_mask_cmpgt_epu64_mask(m, v, self.maxv)
        } else {
            _mm512_mask_cmplt_epu64_mask(m, v, delta)
        };
        if bad != 0 {
            return None;
        }
        // The running value after the group: lane 7 (masked lanes repeat the last value).
        Some((v, _mm512_permutexvar_epi64(self.top, v)))
    }
}

/// One chunk of a stream loop ([`stream`]): its 64 bytes (`lo`) and the next 64 (`hi`), both
/// with the top bits cleared and as read (`raw_*`), their continuation masks, and its varint
/// starts (`starts`, bit `j` = a varint starts at byte `j`; a varint carried in from the
/// previous chunk, whose end lies in this one's first bytes and was checked with that one, has
/// no start here).
struct Chunk {
    lo: __m512i,
    hi: __m512i,
    raw_lo: __m512i,
    raw_hi: __m512i,
    cont_lo: u64,
    cont_hi: u64,
    starts: u64,
    count: usize,
}

/// What a stream loop does per chunk.
trait ChunkDecoder {
    /// Whether the loop stops before `chunk`: a varint it cannot decode, or one the other
    /// loop suits better; `prev` is the running value.
    fn stop(&self, chunk: &Chunk, prev: i64) -> bool;

    /// Decodes the chunk's `count` varints from `prevv` into `out`, group by group; returns
    /// the last value (all lanes), or `None` when a check fails. Groups stored before the
    /// failing one hold the reference's values of varints before the first rejected one; the
    /// caller restarts at the chunk's first varint start and writes them again.
    ///
    /// # Safety
    /// `out..out + count` writable; the tier's features present.
    unsafe fn decode(&self, chunk: &Chunk, prevv: __m512i, out: *mut i64) -> Option<__m512i>;
}

/// The stream loop behind [`Block::wide`]: 64-byte chunks at
/// fixed strides from `p`, so the next chunk's load and masks never wait on where the current
/// varints end. A chunk owns the varints that start in it (the last may run into the next
/// chunk: both are passed on); one that starts inside a varint skips it by the carried
/// continuation bit. The loop stops before a chunk the decoder refuses or fails on, that has a
/// zero byte after a continuation byte (in it or in the next, when `CANONICAL`), or whose
/// values do not fit in `out`, and returns at that chunk's first varint start.
///
/// # Safety
/// The contract of [`Block::wide`]; AVX-512 F/BW/VBMI/VBMI2 and AVX2 present.
// Not inlined: inlined into the callers' loops, its constants spilled to the stack and
// `mixed_1_9` ran 6% slower (86 -> 92 us).
#[inline(never)]
#[target_feature(enable = "avx2,bmi1,popcnt,avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
unsafe fn stream<D: ChunkDecoder, const CANONICAL: bool>(
    d: &D,
    p: *const u8,
    avail: usize,
    prev: i64,
    out: *mut i64,
    room: usize,
) -> (usize, usize, i64) {
    if avail < 128 {
        return (0, 0, prev);
    }
    // SAFETY: 128 <= `avail` readable bytes at `p` (caller); AVX-512F/BW (caller).
    let mut raw_lo = unsafe { _mm512_loadu_si512(p.cast()) };
    let seven_bits = _mm512_set1_epi8(0x7f);
    let mut cont_lo = _mm512_movepi8_mask(raw_lo);
    let mut zero_lo = _mm512_testn_epi8_mask(raw_lo, raw_lo);
    let mut lo = _mm512_and_si512(raw_lo, seven_bits);
    let mut prevv = _mm512_set1_epi64(prev);
    // The chunk (`q`, while `q + 128 <= p + avail`: `last` is the last such start), whether it
    // starts inside a varint, the next output slot (`o`, `room - (o - out)` slots left).
    let last = p.wrapping_add(avail - 128);
    let mut q = p;
    let mut carry = 0u64;
    let mut o = out;
    // Slots left at `o`.
    let mut left = room;
    while q <= last {
        // SAFETY: `q + 128 <= p + avail` (loop condition).
        let hi = unsafe { _mm512_loadu_si512(q.add(64).cast()) };
        let cont_hi = _mm512_movepi8_mask(hi);
        let zero_hi = _mm512_testn_epi8_mask(hi, hi);
        let starts = !((cont_lo << 1) | carry);
        let chunk = Chunk {
            lo,
            hi: _mm512_and_si512(hi, seven_bits),
            raw_lo,
            raw_hi: hi,
            cont_lo,
            cont_hi,
            starts,
            count: starts.count_ones() as usize,
        };
        let non_canonical = CANONICAL
            && (zero_lo & ((cont_lo << 1) | carry) | zero_hi & ((cont_hi << 1) | (cont_lo >> 63)))
                != 0;
        let prev = _mm_cvtsi128_si64(_mm512_castsi512_si128(prevv));
        // `count == 0` or `count > left` in one compare.
        if non_canonical || chunk.count.wrapping_sub(1) >= left || d.stop(&chunk, prev) {
            break;
        }
        // SAFETY: `count <= left` slots at `o` are writable; features (caller).
        let Some(run) = (unsafe { d.decode(&chunk, prevv, o) }) else {
            break;
        };
        // SAFETY: as above.
        o = unsafe { o.add(chunk.count) };
        left -= chunk.count;
        prevv = run;
        carry = cont_lo >> 63;
        q = q.wrapping_add(64);
        lo = chunk.hi;
        raw_lo = hi;
        cont_lo = cont_hi;
        zero_lo = zero_hi;
    }
    // The varint boundary where the next chunk's values start: past the terminator of a
    // varint carried in (within that chunk's first bytes: its length was checked).
    let skip = if carry != 0 {
        (!cont_lo).trailing_zeros() as usize + 1
    } else {
        0
    };
    // `q` and `o` moved forward from `p` and `out`.
    let used = q.addr() - p.addr();
    let written = (o.addr() - out.addr()) / size_of::<i64>();
    (
        used + skip,
        written,
        _mm_cvtsi128_si64(_mm512_castsi512_si128(prevv)),
    )
}

/// [`stream`] for varints of 1..=3 bytes: the second and third groups are gathered from the
/// chunk and the next (`vpermt2b`: the last varints may run up to 2 bytes over), compressed
/// to the varint starts with the first groups, and decoded 16 at a time by
/// [`Groups3::decode`]. The loop stops before a chunk with a longer varint, or when `prev`
/// comes closer than [`SHORT3_MARGIN`] to the limits (`SIGNED`: of `i64`, else of `u64`), so no
/// running sum can overflow in a chunk.
struct Wide3<const SIGNED: bool, const BOUNDED: bool> {
    k: Group9,
    next1: __m512i,
    next2: __m512i,
}

impl<const SIGNED: bool, const BOUNDED: bool> ChunkDecoder for Wide3<SIGNED, BOUNDED> {
    #[inline(always)]
    fn stop(&self, chunk: &Chunk, prev: i64) -> bool {
        let safe = if SIGNED {
            (i64::MIN + SHORT3_MARGIN..=i64::MAX - SHORT3_MARGIN).contains(&prev)
        } else {
            prev as u64 <= u64::MAX - SHORT3_MARGIN as u64
        };
        // Three continuation bytes in a row (a varint of 4 bytes or more) in this chunk, or
        // running from its last two bytes into the next one.
        let (lo, hi) = (chunk.cont_lo, chunk.cont_hi);
        let c = (lo >> 62) | (hi << 2);
        let long = lo & (lo >> 1) & (lo >> 2) | c & (c >> 1) & (c >> 2) & 3;
        !safe || long != 0
    }

    /// # Safety
    /// As [`ChunkDecoder::decode`]; AVX-512 F/BW/VBMI/VBMI2 and AVX2 present.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
    unsafe fn decode(&self, c: &Chunk, prevv: __m512i, out: *mut i64) -> Option<__m512i> {
        // Second group of the varint starting at j: byte j+1, if byte j continues; third:
        // byte j+2, if bytes j and j+1 continue (bit 63 looks at the next chunk's first).
        let second = _mm512_maskz_permutex2var_epi8(c.cont_lo, c.lo, self.next1, c.hi);
        let both = c.cont_lo & ((c.cont_lo >> 1) | (c.cont_hi << 63));
        let third = _mm512_maskz_permutex2var_epi8(both, c.lo, self.next2, c.hi);
        let groups = Groups3 {
            firsts: _mm512_maskz_compress_epi8(c.starts, c.lo),
            seconds: _mm512_maskz_compress_epi8(c.starts, second),
            thirds: _mm512_maskz_compress_epi8(c.starts, third),
        };
        // SAFETY: `out..out + count` writable (caller); `1 <= count <= 64` (`stream`).
        unsafe { groups.store::<SIGNED, BOUNDED>(&self.k, c.count, prevv, out) }
    }
}

impl<const SIGNED: bool, const BOUNDED: bool> Wide3<SIGNED, BOUNDED> {
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn new(k: Group9) -> Self {
        // SAFETY: the tables are 64 bytes each; AVX-512F.
        let (next1, next2) = unsafe { (load64(&NEXT1), load64(&NEXT2)) };
        Wide3 { k, next1, next2 }
    }
}

/// [`stream`] for varints of 1..=9 bytes: the starts are compressed once per chunk (a varint
/// carried in is skipped) and feed [`Group9::decode`] with the bytes as read, as in [`short9`]
/// (the last varint may run into the next chunk: `Group9::decode` reads its bytes there).
/// The loop stops before a chunk where a varint of 10 bytes or more starts (looked for in the
/// continuation masks, so the group decoder need not check lengths), and before a chunk of
/// 1..=3-byte varints (for [`Wide3`]).
struct Wide9<const SIGNED: bool, const BOUNDED: bool> {
    k: Group9,
    lanes: __m512i,
    spread: __m512i,
}

impl<const SIGNED: bool, const BOUNDED: bool> ChunkDecoder for Wide9<SIGNED, BOUNDED> {
    #[inline(always)]
    fn stop(&self, chunk: &Chunk, _prev: i64) -> bool {
        // A varint of 10 bytes or more starting in this chunk: 9 continuation bytes in a row
        // from one of its first 64 bytes.
        let y = u128::from(chunk.cont_lo) | (u128::from(chunk.cont_hi) << 64);
        let a = y & (y >> 1);
        let b = a & (a >> 2);
        let long = (b & (b >> 4) & (y >> 8)) as u64;
        // A chunk of 1..=3-byte varints has at least 21 starts (the rest of its 64 bytes
        // after a varint carried in, 3 bytes each): the count only spares the run test.
        long != 0 || chunk.count >= 20 && fits_short3(chunk.cont_lo, 63)
    }

    /// # Safety
    /// As [`ChunkDecoder::decode`]; AVX-512 F/BW/VBMI/VBMI2 and AVX2 present.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
    unsafe fn decode(&self, c: &Chunk, prevv: __m512i, out: *mut i64) -> Option<__m512i> {
        let window = Window9 {
            lo: c.raw_lo,
            hi: c.raw_hi,
            starts: _mm512_maskz_compress_epi8(c.starts, self.lanes),
        };
        // SAFETY: `out..out + count` writable (caller); `1 <= count <= 64` (`stream`).
        unsafe {
            self.k
                .store::<SIGNED, BOUNDED, false>(&window, self.spread, c.count, prevv, out)
        }
    }
}

impl<const SIGNED: bool, const BOUNDED: bool> Wide9<SIGNED, BOUNDED> {
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn new(k: Group9) -> Self {
        // SAFETY: the tables are 64 bytes each; AVX-512F.
        let (lanes, spread) = unsafe { (load64(&IOTA), load64(&LANE_OF_BYTE)) };
        Wide9 { k, lanes, spread }
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
/// The contract of [`Block::ones`]; AVX-512F and AVX2 present.
#[inline]
#[target_feature(enable = "avx2,avx512f")]
unsafe fn ones<const SIGNED: bool>(
    p: *const u8,
    groups: usize,
    prev: i64,
    min: i64,
    max: i64,
    out: *mut i64,
) -> (usize, i64) {
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
            return (g, _mm_cvtsi128_si64(_mm512_castsi512_si128(prevv)));
        }
        // SAFETY: `8 * groups` writable slots at `out` (caller), `g < groups`.
        unsafe { _mm512_storeu_si512(out.add(8 * g).cast(), v) };
        prevv = _mm512_add_epi64(prevv, _mm512_permutexvar_epi64(last, x));
    }
    (groups, _mm_cvtsi128_si64(_mm512_castsi512_si128(prevv)))
}

/// AVX-512 [`scalar::delta_decode`](crate::arch::scalar::delta_decode) in mode `M`, without
/// VBMI2.
///
/// # Safety
/// AVX-512 F/BW/VL, AVX2, BMI1, BMI2 and POPCNT are present.
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt,avx512f,avx512bw,avx512vl")]
pub(super) unsafe fn delta_decode<M: DeltaMode>(
    bytes: &[u8],
    format: VarintFormat,
    prev: M::Value,
    min: M::Value,
    max: M::Value,
    out: &mut [M::Value],
) -> Result<usize> {
    // SAFETY: features (caller), BMI2 among them.
    unsafe { varint::delta::<Avx512<true>, M, true>(bytes, format, prev, min, max, out) }
}

/// [`delta_decode`] with the VBMI2 stream loops and whole-block gathers.
///
/// # Safety
/// AVX-512 F/BW/VL/VBMI/VBMI2, AVX2, BMI1, BMI2 and POPCNT are present.
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt,avx512f,avx512bw,avx512vl,avx512vbmi,avx512vbmi2")]
pub(super) unsafe fn delta_vbmi2<M: DeltaMode>(
    bytes: &[u8],
    format: VarintFormat,
    prev: M::Value,
    min: M::Value,
    max: M::Value,
    out: &mut [M::Value],
) -> Result<usize> {
    // SAFETY: features (caller), BMI2 among them.
    unsafe { varint::delta::<Avx512Vbmi2, M, true>(bytes, format, prev, min, max, out) }
}

/// AVX-512 [`scalar::count_uvarints`](crate::arch::scalar::count_uvarints).
///
/// # Safety
/// AVX-512 F/BW/VL, AVX2, BMI1, BMI2 and POPCNT are present.
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt,avx512f,avx512bw,avx512vl")]
pub(crate) unsafe fn count_uvarints(bytes: &[u8], format: VarintFormat) -> Result<usize> {
    // SAFETY: features (caller).
    unsafe { varint::count::<Avx512<false>>(bytes, format) }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::ZIGZAG9_RANGE;
    use crate::arch::scalar::zigzag_decode;
    use std::vec;

    /// The claim behind [`ZIGZAG9_RANGE`]: adding a 9-byte ZigZag delta to any `i64` either
    /// fits or wraps to a value outside the range. Checked at the edges of both operands and
    /// on a sweep between them.
    #[test]
    fn zigzag9_overflow_always_leaves_the_range() {
        let max_raw = (1u64 << 63) - 1; // the largest 9-byte varint
        let mut deltas = vec![zigzag_decode(max_raw), zigzag_decode(max_raw - 1), 0, 1, -1];
        let mut prevs = vec![
            i64::MIN,
            i64::MAX,
            0,
            ZIGZAG9_RANGE.start,
            ZIGZAG9_RANGE.end,
        ];
        for k in 0..62 {
            let x = 1i64 << k;
            deltas.extend([x, -x, x - 1, 1 - x]);
            prevs.extend([x, -x, x - 1, -x - 1, i64::MAX - x + 1, i64::MIN + x - 1]);
        }
        let mut checked = 0;
        for &d in &deltas {
            // Every 9-byte ZigZag delta lies in the range too.
            assert!(ZIGZAG9_RANGE.contains(&d), "{d}");
            for &prev in &prevs {
                if prev.checked_add(d).is_none() {
                    assert!(
                        !ZIGZAG9_RANGE.contains(&prev.wrapping_add(d)),
                        "{prev} + {d}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000, "{checked} overflowing sums");
    }
}
