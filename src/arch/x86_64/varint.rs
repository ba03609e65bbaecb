//! LEB128 loops shared by the AVX2 and AVX-512 tiers, generic over how a tier turns 64 bytes
//! into per-byte bit masks ([`Block`]).
//!
//! Strategy: walk the stream in 64-byte blocks that start on a varint boundary. A block with
//! no continuation bit is 64 one-byte deltas: SIMD prefix sums (the tier's `ones_*`). A block
//! whose varints are all 1..=9 bytes (and canonical, where required) goes whole through the
//! tier's `short_*` path when it has one (AVX2: `u32` prefix sums of shifted 7-bit groups for
//! 1..=3-byte varints, else one varint per terminator with the checks folded into one flag;
//! AVX-512 VBMI2: byte gathers); it returns `None` on any failed check and the block is
//! decoded again exactly. A tier with a stream path (`wide_*`, AVX-512 VBMI2) takes over at
//! a block the one-byte path did not take, for 9- and 10-byte formats, while 128 bytes
//! remain: it walks 64-byte chunks at fixed strides (so the next load never waits on the
//! current lengths) until a check fails or the varint lengths call for its other loop, and
//! returns at a varint boundary. Other blocks walk their
//! terminator mask (`t &= t - 1`), gather each
//! value of up to 9 bytes with PEXT (or a shift/mask compression where PEXT is slow) and check
//! it exactly as the scalar reference does. Anything unusual (a varint of 10 bytes or longer than
//! the format allows, a non-canonical zero byte, no terminator in a block) hands over to the
//! scalar reference at the current varint boundary, so the values, error kinds and offsets
//! are the reference's own. The last `BLOCK_READ` bytes always go to the scalar reference.
//!
//! Every function here is `#[inline(always)]` and must only be called from a function
//! compiled with the tier's target features (it inlines into it).

use crate::arch::scalar;
use crate::arch::wire::{DeltaMode, VarintFormat};
use crate::error::{off, Error, ErrorKind, Result};

/// Bytes examined per block.
const BLOCK: usize = 64;
/// Bytes that must be readable from a block start: the block, plus the 9-byte value load of a
/// varint that starts at its last byte.
const BLOCK_READ: usize = BLOCK + 16;

/// Largest `prev` for which 64 one-byte unsigned deltas cannot overflow.
const ONES_U64_PREV_MAX: u64 = u64::MAX - 64 * 127;
/// `|zigzag_decode(b)| <= 64` for one-byte `b`: 64 of them move the sum by at most 4096.
const ONES_ZIGZAG_MARGIN: i64 = 64 * 64;

/// Bytes the whole-block path reads from a block start (the block and the next one, for
/// varints that start in the block and end past it).
const WIDE_READ: usize = 2 * BLOCK;

/// The block's complete varints: `(last terminator, count)`, when none is longer than
/// `fast_len` bytes (checked only with `check_runs`).
#[inline(always)]
fn whole_block(cont: u64, fast_len: usize, check_runs: bool) -> Option<(u32, usize)> {
    let ends = !cont;
    if ends == 0 {
        return None;
    }
    let last = 63 - ends.leading_zeros();
    let c = cont & (u64::MAX >> (63 - last));
    // A run of `fast_len` continuation bytes: a varint longer than `fast_len`.
    if check_runs && runs(c, fast_len) != 0 {
        return None;
    }
    Some((last, ends.count_ones() as usize))
}

/// 64 deltas of at most 3 bytes (21 bits) move a running sum by less than this.
pub(super) const SHORT3_MARGIN: i64 = 1 << 28;

/// Whether no varint ending at or before `last` is longer than 3 bytes.
#[inline(always)]
pub(super) fn fits_short3(cont: u64, last: u32) -> bool {
    let c = cont & (u64::MAX >> (63 - last.min(63)));
    c & (c >> 1) & (c >> 2) == 0
}

/// The one-byte varints from block byte `start` on (at most 8, within the block): how many
/// (at least 1 when the caller saw byte `start`'s continuation bit clear), and the 8 bytes at
/// `p + start` with the bytes past them zeroed.
///
/// # Safety
/// `start < BLOCK` and `p..p + BLOCK_READ` is readable.
#[inline(always)]
unsafe fn ones_at(p: *const u8, cont: u64, start: usize) -> (usize, [u8; 8]) {
    let run = ((cont >> start).trailing_zeros() as usize)
        .min(BLOCK - start)
        .min(8);
    // SAFETY: `start + 8 <= BLOCK + 8 <= BLOCK_READ` bytes at `p` are readable (caller).
    let word = u64::from_le(unsafe { p.add(start).cast::<u64>().read_unaligned() });
    let keep = if run >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * run)) - 1
    };
    (run, (word & keep).to_le_bytes())
}

/// One bit per byte of a 64-byte block (bit `i` = byte `i`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Masks {
    /// The byte has its continuation (high) bit set.
    pub(super) cont: u64,
    /// The byte is `0x00`.
    pub(super) zero: u64,
    /// The byte is greater than 1.
    pub(super) gt1: u64,
}

/// What a tier supplies to the shared loops. Values and bounds travel as `i64` bit patterns
/// (unsigned ones reinterpreted), so that one method serves both modes: a tier picks its
/// signed or unsigned code with `M::SIGNED`, which folds at compile time.
pub(super) trait Block {
    /// `short` can decode a block (otherwise it always returns `None` and the loops do not
    /// look for whole blocks).
    const HAS_SHORT: bool = false;
    /// `short` returns `None` for a block holding a varint longer than 9 bytes itself, so for
    /// 9- and 10-byte formats the loops need not look for one first.
    const SHORT_REJECTS_LONG: bool = false;
    /// Whether `wide` can decode a stream run (otherwise it always returns no progress).
    const HAS_WIDE: bool = false;

    /// The masks of the 64 bytes at `p`.
    ///
    /// # Safety
    /// `p..p + 64` is readable and the tier's target features are present.
    unsafe fn masks(p: *const u8) -> Masks;

    /// Writes `8 * groups` values `prev + prefix_sum(deltas)` for the one-byte deltas at `p`
    /// (unsigned, or ZigZag when `M::SIGNED`), group by group (8 values each), stopping before
    /// the first group that has a value outside `[min, max]`. Returns the number of groups
    /// written and the last value written (`prev` when none).
    ///
    /// # Safety
    /// `p..p + 8 * groups` is readable and holds bytes below `0x80`; `out..out + 8 * groups`
    /// is writable; `prev` passes `ones_fit`; the tier's target features are present.
    unsafe fn ones<M: DeltaMode>(
        p: *const u8,
        groups: usize,
        prev: i64,
        min: i64,
        max: i64,
        out: *mut i64,
    ) -> (usize, i64);

    /// Decodes the `count` varints that end in the 64-byte block at `p` (`last` = the block
    /// index of the last terminator; every one 1..=9 bytes, or any length with
    /// [`Block::SHORT_REJECTS_LONG`]; none non-canonical when that matters), writing the running
    /// values to `out..out + count`; returns the last one. Returns `None` (values may have been
    /// written, to be overwritten by the caller's exact path) when a running value overflows
    /// or falls outside `[min, max]`, when a varint is longer than 9 bytes
    /// ([`Block::SHORT_REJECTS_LONG`]), or when the tier has no such path. A tier may also
    /// return `None` for valid blocks it does not take (the AVX-512 ZigZag decoder for running
    /// values outside `-2^62..2^62`, where it cannot rule out an overflow cheaply).
    ///
    /// # Safety
    /// `p..p + 128` readable; `out..out + count` writable; the varints are as described
    /// (`cont` is the block's continuation mask); the tier's features are present.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn short<M: DeltaMode>(
        _p: *const u8,
        _cont: u64,
        _last: u32,
        _count: usize,
        _prev: i64,
        _min: i64,
        _max: i64,
        _out: *mut i64,
    ) -> Option<i64> {
        None
    }

    /// Decodes whole 64-byte chunks at fixed strides from `p` (a varint boundary; `cont` is
    /// the continuation mask of its first 64 bytes) while every check passes: each chunk's
    /// varints (those starting in it, ending up to 8 bytes into the next) are 1..=9 bytes,
    /// canonical when `canonical`, and their running values in `[min, max]` without overflow
    /// (a tier may stop earlier: the AVX-512 ZigZag loop at running values outside
    /// `-2^62..2^62`). A tier may run separate loops for short and long varints, each ending
    /// the run at a chunk that suits the other. Returns `(bytes, values, last value)`: the
    /// bytes consumed up to the varint boundary where it stopped, the values of the varints
    /// before it (written to `out`), and the last one (`prev` when none); `(0, 0, prev)` when
    /// the first chunk already fails. Slots past `values` may hold values of later varints
    /// too, but only the reference's values of varints before the first one it rejects: the
    /// caller decodes from the boundary again and overwrites them.
    ///
    /// # Safety
    /// `p..p + avail` readable; `out..out + room` writable; the tier's features are present.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn wide<M: DeltaMode>(
        _p: *const u8,
        _cont: u64,
        _avail: usize,
        _canonical: bool,
        prev: i64,
        _min: i64,
        _max: i64,
        _out: *mut i64,
        _room: usize,
    ) -> (usize, usize, i64) {
        (0, 0, prev)
    }
}

/// [`Block::ones`] in `M`'s value type.
///
/// # Safety
/// As [`Block::ones`].
#[inline(always)]
unsafe fn ones<B: Block, M: DeltaMode>(
    p: *const u8,
    groups: usize,
    prev: M::Value,
    min: M::Value,
    max: M::Value,
    out: *mut M::Value,
) -> (usize, M::Value) {
    let (prev, min, max) = (M::to_bits(prev), M::to_bits(min), M::to_bits(max));
    // SAFETY: the caller's contract; `M::Value` is `u64` or `i64`, laid out as `i64`.
    let (done, last) = unsafe { B::ones::<M>(p, groups, prev, min, max, out.cast()) };
    (done, M::from_bits(last))
}

/// [`Block::short`] in `M`'s value type.
///
/// # Safety
/// As [`Block::short`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn short<B: Block, M: DeltaMode>(
    p: *const u8,
    cont: u64,
    last: u32,
    count: usize,
    prev: M::Value,
    min: M::Value,
    max: M::Value,
    out: *mut M::Value,
) -> Option<M::Value> {
    let (prev, min, max) = (M::to_bits(prev), M::to_bits(min), M::to_bits(max));
    // SAFETY: the caller's contract; `M::Value` is `u64` or `i64`, laid out as `i64`.
    unsafe { B::short::<M>(p, cont, last, count, prev, min, max, out.cast()) }.map(M::from_bits)
}

/// [`Block::wide`] in `M`'s value type.
///
/// # Safety
/// As [`Block::wide`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn wide<B: Block, M: DeltaMode>(
    p: *const u8,
    cont: u64,
    avail: usize,
    canonical: bool,
    prev: M::Value,
    min: M::Value,
    max: M::Value,
    out: *mut M::Value,
    room: usize,
) -> (usize, usize, M::Value) {
    let (prev, min, max) = (M::to_bits(prev), M::to_bits(min), M::to_bits(max));
    // SAFETY: the caller's contract; `M::Value` is `u64` or `i64`, laid out as `i64`.
    let (used, count, last) =
        unsafe { B::wide::<M>(p, cont, avail, canonical, prev, min, max, out.cast(), room) };
    (used, count, M::from_bits(last))
}

/// PEXT of `word` under `mask`.
///
/// # Safety
/// BMI2 is present.
#[inline]
#[target_feature(enable = "bmi2")]
unsafe fn pext(word: u64, mask: u64) -> u64 {
    core::arch::x86_64::_pext_u64(word, mask)
}

/// The value bits of a varint of `len` (1..=8) bytes held in the low bytes of `word`.
#[inline(always)]
fn gather<const PEXT: bool>(word: u64, len: usize) -> u64 {
    // Keep the low `8 * len` bits (`len` is 1..=8, so the shift is 0..=56).
    let keep = u64::MAX >> (64 - 8 * len.clamp(1, 8));
    let bits = 0x7f7f_7f7f_7f7f_7f7f & keep;
    if PEXT {
        // SAFETY: `PEXT` is true only in code paths chosen after BMI2 was detected (the AVX2
        // and AVX-512 tiers both require it) and PEXT was found fast.
        unsafe { pext(word, bits) }
    } else {
        // Compress 7-bit groups pairwise: 8x7 -> 4x14 -> 2x28 -> 1x56.
        let x = word & bits;
        let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
        let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
        (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4)
    }
}

/// The value of the varint of `len` (1..=9) bytes at `q`: an 8-byte load, gathered, plus the
/// ninth byte for 9-byte varints.
///
/// # Safety
/// 9 bytes at `q` are readable; BMI2 is present when `PEXT`.
#[inline(always)]
pub(super) unsafe fn value9<const PEXT: bool>(q: *const u8, len: usize) -> u64 {
    // SAFETY: 9 readable bytes at `q` (caller).
    let (lo, ninth) = unsafe { (q.cast::<u64>().read_unaligned(), *q.add(8)) };
    // Branch-free on the length (mixed streams would mispredict): a ninth byte only counts for
    // 9-byte varints.
    let ninth = if len > 8 { u64::from(ninth) } else { 0 };
    gather::<PEXT>(u64::from_le(lo), len.min(8)) | (ninth << 56)
}

/// Decodes the varint of `len` bytes (its terminator found by the mask) at `at`, or lets the
/// scalar reference decide when it is longer than `fast_len`.
///
/// # Safety
/// `at + 16 <= bytes.len()` when `len <= fast_len`, and `fast_len <= 9`.
#[inline(always)]
unsafe fn varint_at<const PEXT: bool>(
    bytes: &[u8],
    at: usize,
    len: usize,
    fast_len: usize,
    format: VarintFormat,
) -> Result<u64> {
    if len <= fast_len {
        // SAFETY: the caller guarantees `at + 16 <= bytes.len()`: 9 bytes at `at` are readable.
        Ok(unsafe { value9::<PEXT>(bytes.as_ptr().add(at), len) })
    } else {
        scalar::decode_uvarint(bytes.get(at..).unwrap_or_default(), format)
            .map(|(value, _)| value)
            .map_err(|e| e.shifted(off(at)))
    }
}

/// Whether a run of 64 one-byte deltas from `prev` cannot overflow (unsigned: `prev` at most
/// `ONES_U64_PREV_MAX`; ZigZag: at least `ONES_ZIGZAG_MARGIN` from the `i64` limits).
#[inline(always)]
fn ones_fit<M: DeltaMode>(prev: M::Value) -> bool {
    let bits = M::to_bits(prev);
    if M::SIGNED {
        (i64::MIN + ONES_ZIGZAG_MARGIN..=i64::MAX - ONES_ZIGZAG_MARGIN).contains(&bits)
    } else {
        bits.cast_unsigned() <= ONES_U64_PREV_MAX
    }
}

/// Bulk delta decode in mode `M`; same contract and results as [`scalar::delta_decode`].
///
/// # Safety
/// The tier's target features are present (and BMI2 when `PEXT`).
#[inline(always)]
pub(super) unsafe fn delta<B: Block, M: DeltaMode, const PEXT: bool>(
    bytes: &[u8],
    format: VarintFormat,
    prev: M::Value,
    min: M::Value,
    max: M::Value,
    out: &mut [M::Value],
) -> Result<usize> {
    let fast_len = usize::from(format.max_len()).min(9);
    if fast_len == 9 {
        // Every format of 9 or 10 bytes (all the crate uses): a copy where the per-block
        // length check folds to constants.
        // SAFETY: the caller's contract.
        unsafe { delta_with::<B, M, PEXT>(bytes, format, 9, prev, min, max, out) }
    } else {
        // SAFETY: the caller's contract.
        unsafe { delta_with::<B, M, PEXT>(bytes, format, fast_len, prev, min, max, out) }
    }
}

/// [`delta`] with `fast_len` (the format's `max_len`, at most 9) as an argument; inlined,
/// so a constant folds.
///
/// # Safety
/// As [`delta`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn delta_with<B: Block, M: DeltaMode, const PEXT: bool>(
    bytes: &[u8],
    format: VarintFormat,
    fast_len: usize,
    mut prev: M::Value,
    min: M::Value,
    max: M::Value,
    out: &mut [M::Value],
) -> Result<usize> {
    let len = bytes.len();
    let n = out.len();
    let canonical = format.is_canonical();
    let mut pos = 0usize;
    let mut k = 0usize;
    while k < n && len - pos >= BLOCK_READ {
        // SAFETY: `pos + BLOCK_READ <= len` (loop condition); features: the caller's contract.
        let p = unsafe { bytes.as_ptr().add(pos) };
        // SAFETY: as above, the 64 bytes at `p` are in bounds.
        let m = unsafe { B::masks(p) };
        if m.cont == 0 && ones_fit::<M>(prev) {
            let groups = ((n - k) / 8).min(BLOCK / 8);
            if groups > 0 {
                // SAFETY: `8 * groups <= 64` bytes at `p` are in bounds and below 0x80
                // (`cont == 0`); `k + 8 * groups <= n` slots of `out` are writable; `prev`
                // is checked just above.
                let (done, last_value) =
                    unsafe { ones::<B, M>(p, groups, prev, min, max, out.as_mut_ptr().add(k)) };
                if done > 0 {
                    k += 8 * done;
                    pos += 8 * done;
                    prev = last_value;
                    continue;
                }
            }
        }
        if canonical && m.zero & (m.cont << 1) != 0 {
            // A zero byte ends a multi-byte varint: let the reference report it.
            break;
        }
        if B::HAS_WIDE && fast_len == 9 && len - pos >= WIDE_READ {
            // SAFETY: `pos + WIDE_READ <= len`: the `len - pos` bytes at `p` are in bounds;
            // `n - k` slots of `out` from `k` are writable.
            let (used, count, last_value) = unsafe {
                wide::<B, M>(
                    p,
                    m.cont,
                    len - pos,
                    canonical,
                    prev,
                    min,
                    max,
                    out.as_mut_ptr().add(k),
                    n - k,
                )
            };
            if used > 0 {
                pos += used;
                k += count;
                prev = last_value;
                continue;
            }
        }
        let whole = if B::HAS_SHORT && len - pos >= WIDE_READ {
            whole_block(m.cont, fast_len, !(B::SHORT_REJECTS_LONG && fast_len == 9))
        } else {
            None
        };
        if let Some((last, count)) = whole {
            if count <= n - k {
                // SAFETY: `pos + WIDE_READ <= len`: the 128 bytes at `p` are in bounds;
                // `k + count <= n` slots of `out` are writable; `whole_block` checked the
                // lengths (or the tier rejects long varints), the canonical check above the
                // zero bytes.
                let stored = unsafe {
                    short::<B, M>(
                        p,
                        m.cont,
                        last,
                        count,
                        prev,
                        min,
                        max,
                        out.as_mut_ptr().add(k),
                    )
                };
                if let Some(last_value) = stored {
                    k += count;
                    pos += last as usize + 1;
                    prev = last_value;
                    continue;
                }
            }
        }
        let mut ends = !m.cont;
        let mut start = 0usize;
        while ends != 0 && k < n {
            // Two to eight one-byte varints in a row (one, at the block's last byte): one SIMD
            // prefix-sum group.
            if (m.cont >> start) & 3 == 0 && n - k >= 8 && ones_fit::<M>(prev) {
                // SAFETY: `start < 64`, so the 8 bytes at `p + start` are in bounds.
                let (run, group) = unsafe { ones_at(p, m.cont, start) };
                // Decoded into a scratch group: only the run's values reach `out` (nothing
                // past a later error may be written).
                let mut values = [M::Value::default(); 8];
                // SAFETY: the 8 bytes of `group` are below 0x80 (the run, then zeros: zero
                // deltas, so the lanes past the run repeat its last value and pass the same
                // bounds); `values` has 8 slots; `prev` is checked just above.
                let (done, last_value) =
                    unsafe { ones::<B, M>(group.as_ptr(), 1, prev, min, max, values.as_mut_ptr()) };
                if done == 1 {
                    for (i, &v) in values.iter().enumerate().take(run) {
                        // SAFETY: `k + i < k + run <= k + 8 <= n = out.len()`.
                        unsafe { *out.as_mut_ptr().add(k + i) = v };
                    }
                    k += run;
                    prev = last_value;
                    ends &= !(((1u64 << run) - 1) << start);
                    start += run;
                    continue;
                }
            }
            let end = ends.trailing_zeros() as usize;
            let at = pos + start;
            // SAFETY: `at < pos + 64` so `at + 16 <= pos + BLOCK_READ <= len`; `fast_len <= 9`.
            let raw = unsafe { varint_at::<PEXT>(bytes, at, end + 1 - start, fast_len, format)? };
            let value =
                M::step(prev, raw).ok_or(Error::new(ErrorKind::ArithmeticOverflow, off(at)))?;
            if value < min || value > max {
                return Err(Error::new(ErrorKind::OutOfBounds, off(at)));
            }
            // SAFETY: `k < n = out.len()` (loop condition).
            unsafe { *out.as_mut_ptr().add(k) = value };
            k += 1;
            prev = value;
            start = end + 1;
            ends &= ends - 1;
        }
        if start == 0 {
            // No varint ends in this block: far too long; the reference reports it.
            break;
        }
        pos += start;
    }
    let rest = bytes.get(pos..).unwrap_or_default();
    let tail = out.get_mut(k..).unwrap_or_default();
    match scalar::delta_decode::<M>(rest, format, prev, min, max, tail) {
        Ok(used) => Ok(pos + used),
        Err(e) => Err(e.shifted(off(pos))),
    }
}

/// Bit `j` is set when the `k` (1..=10) bytes ending at byte `j` of the block all have their
/// continuation bit (`c` = the block's continuation mask; runs do not reach into the previous
/// block: the callers check the run across the boundary separately).
///
/// Runs of 2, 4 and 8 by doubling, then `k`'s binary digits combined; stops as soon as no run
/// of the length reached so far is left (the common case: short varints). 64-bit words only:
/// a few single-cycle operations per block.
#[inline(always)]
pub(super) fn runs(c: u64, k: usize) -> u64 {
    let r2 = c & (c << 1);
    if k >= 2 && r2 == 0 {
        return 0;
    }
    let r4 = r2 & (r2 << 2);
    if k >= 4 && r4 == 0 {
        return 0;
    }
    let r8 = r4 & (r4 << 4);
    let mut result = u64::MAX;
    let mut offset = 0u32;
    for (bit, r) in [(8usize, r8), (4, r4), (2, r2), (1, c)] {
        if k & bit != 0 {
            result &= r << offset;
            offset += bit as u32;
        }
    }
    result
}

/// Validate and count; same contract and results as [`scalar::count_uvarints`].
///
/// Per block: a run of `max_len` continuation bytes (too long), a zero byte after a
/// continuation byte (non-canonical, when required) or a tenth byte above 1 (10-byte formats)
/// hands over to the reference at the last varint boundary; otherwise the count grows by the
/// popcount of the terminators.
///
/// # Safety
/// The tier's target features are present.
#[inline(always)]
pub(super) unsafe fn count<B: Block>(bytes: &[u8], format: VarintFormat) -> Result<usize> {
    // Copies for the common formats, where the run and canonical checks fold to a few
    // operations on constants (with a runtime `max_len` they were half the loop).
    match (format.max_len(), format.is_canonical()) {
        // SAFETY: the caller's contract.
        (9, true) => unsafe { count_with::<B>(bytes, format, 9, true) },
        // SAFETY: the caller's contract.
        (10, true) => unsafe { count_with::<B>(bytes, format, 10, true) },
        // SAFETY: the caller's contract.
        (max_len, canonical) => unsafe {
            count_with::<B>(bytes, format, usize::from(max_len), canonical)
        },
    }
}

/// [`count`] with the format's facts as arguments (`max_len` and `canonical` must be
/// `format`'s); inlined, so constants fold.
///
/// # Safety
/// As [`count`].
#[inline(always)]
unsafe fn count_with<B: Block>(
    bytes: &[u8],
    format: VarintFormat,
    max_len: usize,
    canonical: bool,
) -> Result<usize> {
    let len = bytes.len();
    let mut pos = 0usize;
    let mut count = 0usize;
    let mut boundary = 0usize;
    // How many continuation bytes end the previous block (a varint running into this one;
    // the previous block's last byte continues iff this is non-zero).
    let mut prev_run = 0u32;
    while len - pos >= BLOCK {
        // SAFETY: `pos + 64 <= len` (loop condition); features: the caller's contract.
        let m = unsafe { B::masks(bytes.as_ptr().add(pos)) };
        let c = m.cont;
        let ends = !c;
        // Continuation bytes that open the block: they extend the previous block's run.
        let lead = ends.trailing_zeros();
        let mut bad = runs(c, max_len) | u64::from(prev_run + lead >= max_len as u32);
        if canonical {
            bad |= m.zero & ((c << 1) | u64::from(prev_run != 0));
        }
        if max_len >= 10 {
            // A tenth byte above 1: inside the block, or the block's first terminator when
            // the run across the boundary is exactly nine bytes.
            bad |= m.gt1 & (runs(c, 9) << 1);
            bad |= u64::from(prev_run + lead == 9) & (m.gt1 >> (lead & 63));
        }
        if bad != 0 {
            break;
        }
        count += ends.count_ones() as usize;
        if ends != 0 {
            boundary = pos + BLOCK - ends.leading_zeros() as usize;
        }
        prev_run = ends.leading_zeros();
        pos += BLOCK;
    }
    let rest = bytes.get(boundary..).unwrap_or_default();
    match scalar::count_uvarints(rest, format) {
        Ok(more) => Ok(count + more),
        Err(e) => Err(e.shifted(off(boundary))),
    }
}
