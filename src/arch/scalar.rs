//! Scalar kernels: the reference every SIMD tier is tested against, and the fallback for
//! short inputs, tails and CPUs without a faster tier.
//!
//! Every function here is total: it never reads outside its slices and never panics, whatever
//! the input. Preconditions the callers check (a packed stream covering the requested range)
//! only decide whether the *answer* is meaningful, never whether the code is safe.
//!
//! Error offsets are relative to the `bytes` argument; callers shift them to file offsets.

use crate::arch::wire::{DeltaMode, Unsigned, VarintFormat, ZigZag};
use crate::error::{off, Error, ErrorKind, Result};

/// Decodes one unsigned LEB128 varint at the start of `bytes` under `format`.
///
/// Returns the value and the number of bytes it took. Errors: [`ErrorKind::Truncated`] at
/// `bytes.len()` when the input ends inside the varint; [`ErrorKind::VarintOverflow`] at 0
/// when the varint is longer than `format` allows or its value does not fit;
/// [`ErrorKind::VarintNonCanonical`] at 0 when `format` is canonical and a multi-byte varint
/// ends in `0x00`.
#[inline]
pub fn decode_uvarint(bytes: &[u8], format: VarintFormat) -> Result<(u64, usize)> {
    // One-byte values dominate real streams: answer them without entering the loop.
    if let Some(&first) = bytes.first() {
        if first < 0x80 {
            return Ok((u64::from(first), 1));
        }
    }
    let max_len = usize::from(format.max_len());
    let mut value = 0u64;
    for (i, &byte) in bytes.iter().enumerate().take(max_len) {
        let group = u64::from(byte & 0x7f);
        if i == 9 && byte > 1 {
            // The 10th byte may only carry bit 63.
            return Err(Error::new(ErrorKind::VarintOverflow, 0));
        }
        value |= group << (7 * i);
        if byte < 0x80 {
            if byte == 0 && i > 0 && format.is_canonical() {
                return Err(Error::new(ErrorKind::VarintNonCanonical, 0));
            }
            return Ok((value, i + 1));
        }
    }
    if bytes.len() < max_len {
        Err(Error::new(ErrorKind::Truncated, off(bytes.len())))
    } else {
        Err(Error::new(ErrorKind::VarintOverflow, 0))
    }
}

/// Decodes `out.len()` deltas from `bytes` in mode `M` (unsigned: `v[i] = v[i-1] + d[i]`;
/// ZigZag: ZigZag-encoded signed deltas and `i64` values; the codec layer names the two
/// modes), reconstructing values from `prev` with checked addition, each checked against
/// `[min, max]`.
///
/// Returns the number of bytes consumed. Errors carry the offset of the offending varint
/// (overflow of the running sum: [`ErrorKind::ArithmeticOverflow`]; bounds:
/// [`ErrorKind::OutOfBounds`]). On error, `out` holds the values decoded before it.
#[inline]
pub fn delta_decode<M: DeltaMode>(
    bytes: &[u8],
    format: VarintFormat,
    mut prev: M::Value,
    min: M::Value,
    max: M::Value,
    out: &mut [M::Value],
) -> Result<usize> {
    let mut pos = 0usize;
    for slot in out.iter_mut() {
        let rest = bytes.get(pos..).unwrap_or_default();
        let (raw, used) = decode_uvarint(rest, format).map_err(|e| e.shifted(off(pos)))?;
        let value =
            M::step(prev, raw).ok_or(Error::new(ErrorKind::ArithmeticOverflow, off(pos)))?;
        if value < min || value > max {
            return Err(Error::new(ErrorKind::OutOfBounds, off(pos)));
        }
        *slot = value;
        prev = value;
        pos += used;
    }
    Ok(pos)
}

/// [`delta_decode`] of unsigned deltas (`u64` values).
pub fn delta_decode_u64(
    bytes: &[u8],
    format: VarintFormat,
    prev: u64,
    min: u64,
    max: u64,
    out: &mut [u64],
) -> Result<usize> {
    delta_decode::<Unsigned>(bytes, format, prev, min, max, out)
}

/// [`delta_decode`] of ZigZag deltas (`i64` values).
pub fn delta_decode_zigzag(
    bytes: &[u8],
    format: VarintFormat,
    prev: i64,
    min: i64,
    max: i64,
    out: &mut [i64],
) -> Result<usize> {
    delta_decode::<ZigZag>(bytes, format, prev, min, max, out)
}

/// Counts the varints in `bytes`, checking each under `format`; the stream must end exactly
/// after its last varint (otherwise [`ErrorKind::Truncated`] at `bytes.len()`).
pub fn count_uvarints(bytes: &[u8], format: VarintFormat) -> Result<usize> {
    let mut pos = 0usize;
    let mut count = 0usize;
    while let Some(rest) = bytes.get(pos..).filter(|r| !r.is_empty()) {
        let (_, used) = decode_uvarint(rest, format).map_err(|e| e.shifted(off(pos)))?;
        pos += used;
        count += 1;
    }
    Ok(count)
}

/// What `check_lengths` found in a chunk of decoded BLOB length-index entries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LengthCheck {
    /// Bit 52 or above set: some entry breaks the rules or is at least `2^52 - 2`.
    pub flags: u64,
    /// Wrapping sum of the non-negative entries.
    pub real: u64,
    /// Wrapping sum of all entries.
    pub total: u64,
    /// Number of negative entries.
    pub negatives: u64,
}

/// Checks a chunk of length-index entries with adds, shifts and bitwise operations only (no
/// compare, so it vectorises): per entry, `(v - min_real) & !v` (negative for a
/// non-negative entry below `min_real`) and `v + floor` (negative below the smallest allowed
/// negative entry `-floor`; `2^52` or more from `2^52 - floor`) are ORed into `flags`.
/// `floor` is 1 (NULL only) or 2 (NULL and placeholder).
///
/// For a chunk whose `flags` are below `2^52` and that holds fewer than `2^11` entries, the
/// sums are exact and `real - total = nulls + floor_weighted`, from which callers derive the
/// NULL and placeholder counts.
#[inline]
pub fn check_lengths(chunk: &[i64], min_real: i64, floor: i64) -> LengthCheck {
    check_lengths_body(chunk, min_real, floor)
}

/// The body of [`check_lengths`], inlined into each tier's `#[target_feature]` wrapper so
/// the compiler vectorises it with that tier's registers.
#[inline(always)]
pub(crate) fn check_lengths_body(chunk: &[i64], min_real: i64, floor: i64) -> LengthCheck {
    let mut flags = 0i64;
    let mut real = 0u64;
    let mut total = 0u64;
    let mut negatives = 0u64;
    for &v in chunk {
        let u = v.cast_unsigned();
        let sign = u >> 63;
        let keep = sign.wrapping_sub(1); // all ones for non-negative entries
        real = real.wrapping_add(u & keep);
        total = total.wrapping_add(u);
        negatives = negatives.wrapping_add(sign);
        flags |= (v.wrapping_sub(min_real) & !v) | v.wrapping_add(floor);
    }
    LengthCheck {
        flags: flags.cast_unsigned(),
        real,
        total,
        negatives,
    }
}

/// What `merge_layer` leaves behind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayerStep {
    /// The record offset after the walked entries: `record` plus their non-negative
    /// entries (wrapping).
    pub record: u64,
    /// Whether some walked slot is still unresolved (its entry below `-1`).
    pub unresolved: bool,
}

/// The slots a tier's [`merge_layer`] walks: the shortest of the four slices.
#[cfg(x86_simd)]
#[inline(always)]
pub(crate) fn merge_layer_len(
    entries: &[i64],
    slot_entries: &[i64],
    slot_offsets: &[u64],
    slot_tags: &[u64],
) -> usize {
    entries
        .len()
        .min(slot_entries.len())
        .min(slot_offsets.len())
        .min(slot_tags.len())
}

/// Finishes a tier's [`merge_layer`] after its vector loop stopped at slot `from` of `n`:
/// the reference does the rest from the running `record`; `open` says whether the vector
/// part left a slot unresolved.
#[cfg(x86_simd)]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge_layer_tail(
    entries: &[i64],
    record: u64,
    tag: u64,
    slot_entries: &mut [i64],
    slot_offsets: &mut [u64],
    slot_tags: &mut [u64],
    (from, n): (usize, usize),
    open: bool,
) -> LayerStep {
    let tail = merge_layer(
        entries.get(from..n).unwrap_or_default(),
        record,
        tag,
        slot_entries.get_mut(from..n).unwrap_or_default(),
        slot_offsets.get_mut(from..n).unwrap_or_default(),
        slot_tags.get_mut(from..n).unwrap_or_default(),
    );
    LayerStep {
        record: tail.record,
        unresolved: tail.unresolved || open,
    }
}

/// One layer's step of the BLOB fallback merge over a block of rows.
///
/// `entries` are the layer's index entries for the block's rows and `record` the offset of
/// the first row's record; row `i`'s record starts at `record` plus the non-negative entries
/// before it. Slot `i` is still unresolved when `slot_entries[i]` is below `-1` (a
/// placeholder or a gap so far); such a slot takes `entries[i]`, that record offset and
/// `tag`, every other slot keeps what a newer layer gave it. Walks the shortest of the four
/// slices.
///
/// Branch-free (which layer wins a row is data, so a branch would mispredict); the tiers
/// compute the offsets as vector prefix sums and update the slots with masked stores.
#[inline]
pub fn merge_layer(
    entries: &[i64],
    record: u64,
    tag: u64,
    slot_entries: &mut [i64],
    slot_offsets: &mut [u64],
    slot_tags: &mut [u64],
) -> LayerStep {
    let mut record = record;
    let mut unresolved = 0u64;
    let slots = slot_entries
        .iter_mut()
        .zip(slot_offsets.iter_mut())
        .zip(slot_tags.iter_mut());
    for (&e, ((se, so), st)) in entries.iter().zip(slots) {
        let take = 0u64.wrapping_sub(u64::from(*se < -1));
        let entry = (e.cast_unsigned() & take) | (se.cast_unsigned() & !take);
        *se = entry.cast_signed();
        *so = (record & take) | (*so & !take);
        *st = (tag & take) | (*st & !take);
        unresolved |= u64::from(entry.cast_signed() < -1);
        record = record.wrapping_add((e & !(e >> 63)).cast_unsigned());
    }
    LayerStep {
        record,
        unresolved: unresolved != 0,
    }
}

/// ZigZag decoding: `0, 1, 2, 3, ...` -> `0, -1, 1, -2, ...`.
#[inline]
pub const fn zigzag_decode(raw: u64) -> i64 {
    ((raw >> 1) as i64) ^ -((raw & 1) as i64)
}

/// ZigZag encoding, the inverse of [`zigzag_decode`].
#[inline]
pub const fn zigzag_encode(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// The mask of the low `width` bits (`width` 0..=64; larger widths give all ones).
#[inline]
pub const fn low_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// Reads the `width`-bit LSB-first field that starts at bit `bit` of `bytes`.
///
/// One unaligned little-endian load, a shift and a mask when eight bytes are available;
/// missing bytes past the slice end read as zero (callers check ranges beforehand).
#[inline]
pub fn read_bits(bytes: &[u8], bit: u64, width: u32) -> u64 {
    let Ok(byte) = usize::try_from(bit / 8) else {
        return 0;
    };
    let shift = (bit % 8) as u32;
    let word = match bytes.get(byte..).and_then(|r| r.first_chunk::<8>()) {
        Some(chunk) => u64::from_le_bytes(*chunk),
        None => load_le_partial(bytes.get(byte..).unwrap_or_default()),
    };
    let mut value = word >> shift;
    if shift + width > 64 {
        // Widths 57..=64 at a non-zero shift spill into a ninth byte.
        let ninth = bytes.get(byte.wrapping_add(8)).copied().unwrap_or(0);
        value |= u64::from(ninth) << (64 - shift);
    }
    value & low_mask(width)
}

/// Little-endian load of up to eight bytes, zero-filled.
#[inline]
fn load_le_partial(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .take(8)
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// Unpacks `out.len()` values of `width` bits (0..=32) starting at value index `start`.
pub fn unpack_u32(bytes: &[u8], width: u32, start: usize, out: &mut [u32]) {
    let (start, out) = if width == 32 {
        // Whole little-endian words: on little-endian targets a plain copy (`memcpy`); the
        // loop below reads what is left (the zero fill past the end).
        let src = start
            .checked_mul(4)
            .and_then(|at| bytes.get(at..))
            .unwrap_or_default();
        let n = out.len().min(src.len() / 4);
        let (words, rest) = out.split_at_mut(n);
        if cfg!(target_endian = "little") {
            let dst: &mut [u8] = bytemuck::cast_slice_mut(words);
            if let Some(src) = src.get(..dst.len()) {
                dst.copy_from_slice(src);
            }
        } else {
            for (slot, word) in words.iter_mut().zip(src.chunks_exact(4)) {
                *slot = word.try_into().map_or(0, u32::from_le_bytes);
            }
        }
        (start.saturating_add(n), rest)
    } else {
        (start, out)
    };
    let mut bit = off(start).saturating_mul(u64::from(width));
    for slot in out.iter_mut() {
        // Truncation is exact: `width <= 32` (callers check), so the field fits.
        *slot = read_bits(bytes, bit, width.min(32)) as u32;
        bit = bit.saturating_add(u64::from(width));
    }
}

/// Unpacks `out.len()` values of `width` bits (0..=64) starting at value index `start`.
pub fn unpack_u64(bytes: &[u8], width: u32, start: usize, out: &mut [u64]) {
    let mut bit = off(start).saturating_mul(u64::from(width));
    for slot in out.iter_mut() {
        *slot = read_bits(bytes, bit, width);
        bit = bit.saturating_add(u64::from(width));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_bits_at_the_slice_end_reads_zero_fill() {
        // 64-bit field at bit 4 spills into a ninth byte.
        let bytes = [0xf0u8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert_eq!(read_bits(&bytes, 4, 64), u64::MAX);
        assert_eq!(read_bits(&bytes, 68, 4), 0x0);
        assert_eq!(read_bits(&bytes, 64, 4), 0xf);
        // Past the end: zeros, no panic.
        assert_eq!(read_bits(&bytes, 1 << 40, 64), 0);
        assert_eq!(read_bits(&bytes, u64::MAX, 64), 0);
        assert_eq!(read_bits(&[], 0, 0), 0);
    }

    #[test]
    fn unpack_tolerates_short_input() {
        let mut out = [7u32; 4];
        unpack_u32(&[0xff], 8, 0, &mut out);
        assert_eq!(out, [0xff, 0, 0, 0]);
        let mut out = [7u64; 2];
        unpack_u64(&[0xff; 3], 64, usize::MAX, &mut out);
        assert_eq!(out, [0, 0]);
    }

    #[test]
    fn zigzag_is_a_bijection_at_the_ends() {
        for v in [0i64, -1, 1, i64::MIN, i64::MAX, -64, 63] {
            assert_eq!(zigzag_decode(zigzag_encode(v)), v);
        }
        assert_eq!(zigzag_encode(-1), 1);
        assert_eq!(zigzag_encode(i64::MAX), u64::MAX - 1);
    }
}
