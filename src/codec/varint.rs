//! Unsigned LEB128 varints, ZigZag, and delta streams built from them.
//!
//! A varint stores 7 value bits per byte, low group first; the high bit says "more bytes
//! follow". Formats differ in how long a varint may be and whether the shortest form is
//! required, so every decoder takes a [`VarintFormat`]:
//!
//! * [`VarintFormat::SIDECAR`]: at most 9 bytes (values up to `i64::MAX`), shortest form;
//! * [`VarintFormat::U64`]: at most 10 bytes (any `u64`), shortest form;
//! * [`VarintFormat::U64_LENIENT`]: at most 10 bytes, padding (`0x80 0x00`) accepted.
//!
//! Sorted sequences are stored as delta streams: each varint is the difference from the
//! previous value (the first from a stated base). [`DeltaIter`] decodes them lazily with
//! overflow and bounds checks; [`DeltaIter::decode_into`] is the bulk path that the SIMD
//! kernels in [`crate::arch`] accelerate. Signed streams ([`ZigZagDeltaIter`]) carry ZigZag
//! deltas. Nothing here allocates except the `alloc` encoders.
//!
//! ```
//! use lakecore::codec::varint::{DeltaIter, VarintFormat};
//! // IDs [0, 1, 2, 3, 4] as deltas from base 0.
//! let stream = [0x00, 0x01, 0x01, 0x01, 0x01];
//! let mut it = DeltaIter::new(&stream, 0, VarintFormat::SIDECAR).with_count(5);
//! let ids: Result<Vec<u64>, _> = it.by_ref().collect();
//! assert_eq!(ids.unwrap(), [0, 1, 2, 3, 4]);
//! assert!(it.finish().is_ok());
//! ```

use crate::arch;
use crate::error::{off, Error, ErrorKind, Result};
use core::marker::PhantomData;

pub use crate::arch::scalar::{zigzag_decode, zigzag_encode};
pub use crate::arch::wire::{DeltaMode, Unsigned, VarintFormat, ZigZag, MAX_VARINT_LEN};

/// The encoded length of `value` in bytes (1..=10).
#[inline]
pub const fn encoded_len(value: u64) -> usize {
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Encodes `value` in its shortest form into `buf`; returns the number of bytes used.
///
/// ```
/// let mut buf = [0u8; 10];
/// let n = lakecore::codec::varint::encode_u64(300, &mut buf);
/// assert_eq!(&buf[..n], &[0xac, 0x02]);
/// ```
#[inline]
pub fn encode_u64(mut value: u64, buf: &mut [u8; MAX_VARINT_LEN]) -> usize {
    let mut len = 0;
    for slot in buf.iter_mut() {
        len += 1;
        if value < 0x80 {
            *slot = value as u8;
            break;
        }
        *slot = (value as u8) | 0x80;
        value >>= 7;
    }
    len
}

/// Appends the shortest encoding of `value` to `out`.
#[cfg(feature = "alloc")]
#[inline]
pub fn push_u64(out: &mut alloc::vec::Vec<u8>, value: u64) {
    let mut buf = [0u8; MAX_VARINT_LEN];
    let n = encode_u64(value, &mut buf);
    out.extend_from_slice(buf.get(..n).unwrap_or_default());
}

/// Appends an unsigned delta stream of `values` (non-decreasing, all `>= base`) to `out`.
///
/// Fails with [`ErrorKind::NotSorted`] (offset = index of the offending value) when a value is
/// smaller than its predecessor.
///
/// ```
/// use lakecore::codec::varint::{push_deltas, push_zigzag_deltas};
/// let mut out = Vec::new();
/// push_deltas(&mut out, 0, &[0, 1, 2, 300])?;
/// assert_eq!(out, [0x00, 0x01, 0x01, 0xaa, 0x02]);
/// out.clear();
/// push_zigzag_deltas(&mut out, 0, &[22, -1, 22])?;
/// assert_eq!(out, [0x2c, 0x2d, 0x2e]);
/// # Ok::<(), lakecore::Error>(())
/// ```
#[cfg(feature = "alloc")]
pub fn push_deltas(out: &mut alloc::vec::Vec<u8>, base: u64, values: &[u64]) -> Result<()> {
    let mut prev = base;
    for (i, &v) in values.iter().enumerate() {
        let d = v
            .checked_sub(prev)
            .ok_or(Error::new(ErrorKind::NotSorted, off(i)))?;
        push_u64(out, d);
        prev = v;
    }
    Ok(())
}

/// Appends a ZigZag delta stream of `values` starting from `base` to `out`.
///
/// Fails with [`ErrorKind::ArithmeticOverflow`] (offset = index) when a difference does not
/// fit in an `i64`.
#[cfg(feature = "alloc")]
pub fn push_zigzag_deltas(out: &mut alloc::vec::Vec<u8>, base: i64, values: &[i64]) -> Result<()> {
    let mut prev = base;
    for (i, &v) in values.iter().enumerate() {
        let d = v
            .checked_sub(prev)
            .ok_or(Error::new(ErrorKind::ArithmeticOverflow, off(i)))?;
        push_u64(out, zigzag_encode(d));
        prev = v;
    }
    Ok(())
}

/// Decodes one varint at the start of `bytes`: `(value, bytes used)`.
///
/// Error offsets are relative to `bytes`: the varint's first byte for overflow and
/// non-canonical form, `bytes.len()` for truncation.
///
/// ```
/// use lakecore::codec::varint::{decode_u64, VarintFormat};
/// use lakecore::ErrorKind;
/// assert_eq!(decode_u64(&[0xac, 0x02, 0xff], VarintFormat::SIDECAR).unwrap(), (300, 2));
/// let e = decode_u64(&[0x80, 0x00], VarintFormat::SIDECAR).unwrap_err();
/// assert_eq!(e.kind, ErrorKind::VarintNonCanonical);
/// ```
#[inline]
pub fn decode_u64(bytes: &[u8], format: VarintFormat) -> Result<(u64, usize)> {
    arch::scalar::decode_uvarint(bytes, format)
}

/// Counts the varints of a stream that must end exactly after its last varint, checking each
/// one under `format` without producing values (the validation pass).
///
/// ```
/// use lakecore::codec::varint::{count, VarintFormat};
/// use lakecore::ErrorKind;
/// assert_eq!(count(&[0x01, 0xac, 0x02, 0x00], VarintFormat::SIDECAR)?, 3);
/// let e = count(&[0x01, 0xac], VarintFormat::SIDECAR).unwrap_err();
/// assert_eq!(e.kind, ErrorKind::Truncated);
/// # Ok::<(), lakecore::Error>(())
/// ```
pub fn count(bytes: &[u8], format: VarintFormat) -> Result<usize> {
    arch::count_uvarints(bytes, format)
}

/// A lazy, checked decoder of a delta stream over borrowed bytes.
///
/// Yields `Result<value>`; after the first error it yields nothing more (it is fused). The
/// stream either has a declared count ([`with_count`](Self::with_count)) or runs to the end
/// of its bytes. Stop early by dropping it; call [`finish`](Self::finish) to check the rest
/// of the stream and that it ends exactly after its last value.
#[derive(Clone, Debug)]
pub struct DeltaIter<'a, M: DeltaMode = Unsigned> {
    bytes: &'a [u8],
    pos: usize,
    origin: u64,
    prev: M::Value,
    remaining: Option<u64>,
    min: M::Value,
    max: M::Value,
    format: VarintFormat,
    error: Option<Error>,
    _mode: PhantomData<M>,
}

/// A lazy decoder of ZigZag signed delta streams (`i64` values).
pub type ZigZagDeltaIter<'a> = DeltaIter<'a, ZigZag>;

impl<'a> DeltaIter<'a, Unsigned> {
    /// A decoder of unsigned deltas in `bytes` whose first delta is taken from `base`; it
    /// runs to the end of `bytes` unless a count is set, and accepts every value until bounds
    /// are set.
    pub fn new(bytes: &'a [u8], base: u64, format: VarintFormat) -> Self {
        Self::with_mode(bytes, base, format)
    }
}

impl<'a> DeltaIter<'a, ZigZag> {
    /// A decoder of ZigZag deltas in `bytes` whose first delta is taken from `base`; it runs
    /// to the end of `bytes` unless a count is set, and accepts every value until bounds are
    /// set.
    pub fn zigzag(bytes: &'a [u8], base: i64, format: VarintFormat) -> Self {
        Self::with_mode(bytes, base, format)
    }
}

impl<'a, M: DeltaMode> DeltaIter<'a, M> {
    fn with_mode(bytes: &'a [u8], base: M::Value, format: VarintFormat) -> Self {
        DeltaIter {
            bytes,
            pos: 0,
            origin: 0,
            prev: base,
            remaining: None,
            min: M::FULL_RANGE.0,
            max: M::FULL_RANGE.1,
            format,
            error: None,
            _mode: PhantomData,
        }
    }

    /// Expects exactly `count` values.
    #[must_use]
    pub fn with_count(mut self, count: u64) -> Self {
        self.remaining = Some(count);
        self
    }

    /// Requires every value to lie in `[min, max]` ([`ErrorKind::OutOfBounds`] otherwise).
    ///
    /// ```
    /// use lakecore::codec::varint::{DeltaIter, VarintFormat};
    /// use lakecore::ErrorKind;
    /// // IDs must stay below 3: the third value (1 + 1 + 2 = 4) fails, at its varint.
    /// let mut it = DeltaIter::new(&[1, 1, 2], 0, VarintFormat::SIDECAR)
    ///     .with_bounds(0, 2)
    ///     .with_origin(100);
    /// assert_eq!(it.next(), Some(Ok(1)));
    /// assert_eq!(it.next(), Some(Ok(2)));
    /// let e = it.next().unwrap().unwrap_err();
    /// assert_eq!((e.kind, e.offset), (ErrorKind::OutOfBounds, 102));
    /// assert_eq!(it.next(), None); // fused after the error
    /// ```
    #[must_use]
    pub fn with_bounds(mut self, min: M::Value, max: M::Value) -> Self {
        self.min = min;
        self.max = max;
        self
    }

    /// Reports error offsets as `origin + position in bytes` (e.g. a file offset).
    #[must_use]
    pub fn with_origin(mut self, origin: u64) -> Self {
        self.origin = origin;
        self
    }

    /// The absolute offset of the next varint.
    pub fn position(&self) -> u64 {
        self.origin.saturating_add(off(self.pos))
    }

    /// The last value produced (the base before the first).
    pub fn last_value(&self) -> M::Value {
        self.prev
    }

    /// How many values are left, when a count was set.
    pub fn remaining(&self) -> Option<u64> {
        self.remaining
    }

    fn done(&self) -> bool {
        self.error.is_some()
            || match self.remaining {
                Some(n) => n == 0,
                None => self.pos >= self.bytes.len(),
            }
    }

    fn fail(&mut self, e: Error) -> Error {
        let e = e.shifted(self.origin);
        self.error = Some(e);
        e
    }

    /// Decodes up to `out.len()` values (fewer when the stream's count or bytes end first)
    /// into `out` through the bulk kernels; returns how many were written.
    ///
    /// ```
    /// use lakecore::codec::varint::{DeltaIter, VarintFormat};
    /// let mut out = [0u64; 8];
    /// let mut it = DeltaIter::new(&[5, 1, 0x80, 0x01], 10, VarintFormat::U64).with_count(3);
    /// assert_eq!(it.decode_into(&mut out).unwrap(), 3);
    /// assert_eq!(&out[..3], &[15, 16, 144]);
    /// ```
    pub fn decode_into(&mut self, out: &mut [M::Value]) -> Result<usize> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let Some(limit) = self.remaining else {
            // Unknown count: decode one at a time to the end of the bytes.
            let mut n = 0;
            for slot in out.iter_mut() {
                match self.next() {
                    Some(Ok(v)) => *slot = v,
                    Some(Err(e)) => return Err(e),
                    None => break,
                }
                n += 1;
            }
            return Ok(n);
        };
        let n = usize::try_from(limit).unwrap_or(usize::MAX).min(out.len());
        let dst = out.get_mut(..n).unwrap_or_default();
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        match arch::delta_decode::<M>(rest, self.format, self.prev, self.min, self.max, dst) {
            Ok(used) => {
                self.pos += used;
                if let Some(&last) = dst.last() {
                    self.prev = last;
                }
                self.remaining = Some(limit - off(n));
                Ok(n)
            }
            Err(e) => {
                let e = e.shifted(off(self.pos));
                Err(self.fail(e))
            }
        }
    }

    /// The error that stopped the stream, if any.
    pub fn error(&self) -> Option<Error> {
        self.error
    }

    /// Checks the rest of the stream (every remaining value decoded and checked) and that the
    /// bytes end exactly after the last value ([`ErrorKind::TrailingBytes`] otherwise).
    ///
    /// ```
    /// use lakecore::codec::varint::{DeltaIter, VarintFormat};
    /// use lakecore::ErrorKind;
    /// // Two values declared, three varints stored.
    /// let it = DeltaIter::new(&[1, 1, 1], 0, VarintFormat::SIDECAR).with_count(2);
    /// let e = it.finish().unwrap_err();
    /// assert_eq!((e.kind, e.offset), (ErrorKind::TrailingBytes, 2));
    /// ```
    pub fn finish(mut self) -> Result<()> {
        if let Some(e) = self.error {
            return Err(e);
        }
        for item in self.by_ref() {
            item?;
        }
        if self.pos < self.bytes.len() {
            return Err(Error::new(ErrorKind::TrailingBytes, self.position()));
        }
        Ok(())
    }
}

impl<M: DeltaMode> Iterator for DeltaIter<'_, M> {
    type Item = Result<M::Value>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done() {
            return None;
        }
        let at = self.pos;
        let rest = self.bytes.get(at..).unwrap_or_default();
        let (raw, used) = match arch::scalar::decode_uvarint(rest, self.format) {
            Ok(x) => x,
            Err(e) => return Some(Err(self.fail(e.shifted(off(at))))),
        };
        let Some(value) = M::step(self.prev, raw) else {
            return Some(Err(
                self.fail(Error::new(ErrorKind::ArithmeticOverflow, off(at)))
            ));
        };
        if value < self.min || value > self.max {
            return Some(Err(self.fail(Error::new(ErrorKind::OutOfBounds, off(at)))));
        }
        self.pos = at + used;
        self.prev = value;
        if let Some(n) = self.remaining.as_mut() {
            *n -= 1;
        }
        Some(Ok(value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.remaining {
            _ if self.error.is_some() => (0, Some(0)),
            Some(n) => (0, usize::try_from(n).ok()),
            None => (0, Some(self.bytes.len().saturating_sub(self.pos))),
        }
    }
}

impl<M: DeltaMode> core::iter::FusedIterator for DeltaIter<'_, M> {}

// Word-at-a-time (SWAR) helpers for framing and short varints. Each reads eight bytes a step
// with no branch per byte; the checked decoders above stay the reference for every error.

/// The number of bytes below `0x80` in `bytes`: for a well-formed stream, the number of
/// varints (each ends in exactly one such byte). Malformed varints are the caller's to find
/// by decoding that many entries and requiring the stream to end.
///
/// ```
/// use lakecore::codec::varint::count_terminators;
/// // 1, 300, 2: three varints in four bytes.
/// assert_eq!(count_terminators(&[0x01, 0xac, 0x02, 0x02]), 3);
/// ```
pub fn count_terminators(bytes: &[u8]) -> u64 {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const PAIRS: u64 = 0x00ff_00ff_00ff_00ff;
    // Eight bytes per word: `!w >> 7 & LOW` has a 1 in each byte lane whose byte is below
    // 0x80. Lanes are summed over at most 255 words (no lane overflows), then folded.
    let mut total = 0u64;
    for block in bytes.chunks(8 * 255) {
        let mut words = block.chunks_exact(8);
        let mut lanes = 0u64;
        for w in &mut words {
            let w = <[u8; 8]>::try_from(w).map_or(0, u64::from_le_bytes);
            lanes += (!w >> 7) & LOW;
        }
        let pairs = (lanes & PAIRS) + ((lanes >> 8) & PAIRS);
        total += pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48;
        total += off(words.remainder().iter().filter(|&&b| b < 0x80).count());
    }
    total
}

/// The length of the first `count` varints of `bytes` (through the `count`-th terminator,
/// a byte with its high bit clear), or `None` when `bytes` holds fewer terminators. Framing
/// only: the varints are not decoded. One multiply per word gives the per-byte prefix counts
/// of its terminators; the top byte is the word's total and the rest locate the last one.
///
/// ```
/// use lakecore::codec::varint::nth_end;
/// let bytes = [0x01, 0xac, 0x02, 0x02];
/// assert_eq!(nth_end(&bytes, 2), Some(3));
/// assert_eq!(nth_end(&bytes, 4), None);
/// ```
#[inline(always)]
pub fn nth_end(bytes: &[u8], count: u64) -> Option<usize> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    if count == 0 {
        return Some(0);
    }
    let mut left = count;
    let mut words = bytes.chunks_exact(8);
    let mut done = 0usize;
    for chunk in words.by_ref() {
        let word = u64::from_le_bytes(chunk.try_into().ok()?);
        // Byte i of `stops` is 1 when byte i ends a varint. Byte i of `prefix` counts the
        // terminators in bytes 0..=i (at most 8), so its top byte is the word's count: one
        // multiply (`count_ones` is a dozen instructions on x86-64 builds without `popcnt`).
        let stops = (!word & HIGH) >> 7;
        let prefix = stops.wrapping_mul(0x0101_0101_0101_0101);
        let here = prefix >> 56;
        if here >= left {
            // Adding 0x80 - left sets a byte's high bit exactly when its count reaches `left`.
            let reached =
                prefix.wrapping_add((0x80 - left).wrapping_mul(0x0101_0101_0101_0101)) & HIGH;
            let last = usize::try_from(reached.trailing_zeros() / 8).ok()?;
            return Some(done + last + 1);
        }
        left -= here;
        done += 8;
    }
    for (i, &b) in words.remainder().iter().enumerate() {
        if b & 0x80 == 0 {
            left -= 1;
            if left == 0 {
                return Some(done + i + 1);
            }
        }
    }
    None
}

/// The canonical varint of 1..=8 bytes at the start of `bytes` and its length, decoded from
/// one 8-byte load; `None` when fewer than 8 bytes are readable or the varint is longer or
/// not in shortest form (the checked [`decode_u64`] handles, and reports, those cases).
///
/// ```
/// use lakecore::codec::varint::decode_short;
/// assert_eq!(decode_short(&[0xac, 0x02, 0, 0, 0, 0, 0, 0]), Some((300, 2)));
/// assert_eq!(decode_short(&[0xac, 0x02]), None); // fewer than 8 bytes readable
/// ```
#[inline(always)]
pub fn decode_short(bytes: &[u8]) -> Option<(u64, usize)> {
    let word = u64::from_le_bytes(*bytes.first_chunk::<8>()?);
    let stops = !word & 0x8080_8080_8080_8080;
    if stops == 0 {
        return None;
    }
    let t = stops.trailing_zeros(); // the stop byte's high bit: 7, 15, ..., 63
    let len = t / 8 + 1;
    let x = if t >= 63 {
        word
    } else {
        word & ((1u64 << (t + 1)) - 1)
    };
    if len > 1 && (x >> (8 * (len - 1))) & 0x7f == 0 {
        return None; // non-canonical: let the checked path report it
    }
    // Drop the continuation bits, then close the gaps in three rounds: 7-bit groups
    // into 14-bit pairs, pairs into 28-bit quads, quads into the 56-bit value.
    let x = x & 0x7f7f_7f7f_7f7f_7f7f;
    let x = (x & 0x007f_007f_007f_007f) | ((x >> 1) & 0x3f80_3f80_3f80_3f80);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x >> 2) & 0x0fff_c000_0fff_c000);
    let v = (x & 0x0000_0000_0fff_ffff) | ((x >> 4) & 0x00ff_ffff_f000_0000);
    Some((v, usize::try_from(len).ok()?))
}

/// The short varint ([`decode_short`]; a one-byte varint needs only one readable byte) at
/// `bytes[p..]` when it ends by `limit`: its value and the position after it.
///
/// ```
/// use lakecore::codec::varint::decode_short_within;
/// assert_eq!(decode_short_within(&[9, 0x05], 1, 2), Some((5, 2)));
/// assert_eq!(decode_short_within(&[9, 0x05], 1, 1), None); // ends past the limit
/// ```
#[inline(always)]
pub fn decode_short_within(bytes: &[u8], p: usize, limit: usize) -> Option<(u64, usize)> {
    let rest = bytes.get(p..)?;
    // One-byte varints (most counts and lengths) skip the 8-byte decode.
    let (v, len) = match rest.first() {
        Some(&b) if b < 0x80 => (u64::from(b), 1),
        _ => decode_short(rest)?,
    };
    let q = p + len;
    (q <= limit).then_some((v, q))
}

#[cfg(test)]
mod swar_tests {
    use super::*;

    /// A xorshift64 step.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// The word-wise terminator count against a per-byte count, across block boundaries.
    #[test]
    fn count_terminators_matches_bytes() {
        let mut x = 7u64;
        let bytes: [u8; 5000] = core::array::from_fn(|_| next(&mut x) as u8);
        for len in [0, 1, 7, 8, 9, 2039, 2040, 2041, 4081, 5000] {
            let b = &bytes[..len];
            let naive = b.iter().filter(|&&v| v < 0x80).count() as u64;
            assert_eq!(count_terminators(b), naive, "{len}");
            assert_eq!(count_terminators(&[0u8; 5000][..len]), len as u64);
            assert_eq!(count_terminators(&[0x80u8; 5000][..len]), 0);
        }
    }

    /// The byte-at-a-time definition `nth_end` must agree with.
    fn naive_end(bytes: &[u8], count: u64) -> Option<usize> {
        let mut seen = 0u64;
        for (i, &b) in bytes.iter().enumerate() {
            if seen == count {
                return Some(i);
            }
            if b & 0x80 == 0 {
                seen += 1;
            }
        }
        (seen == count).then_some(bytes.len())
    }

    #[test]
    fn nth_end_matches_the_byte_loop() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        // Miri interprets every step: fewer rounds there, same shapes.
        let rounds = if cfg!(miri) { 4 } else { 200 };
        for len in 0..=40usize {
            for round in 0..rounds {
                // Mostly continuation bytes in some rounds, mostly terminators in others.
                let bias = round % 4;
                let mut buf = [0u8; 40];
                for b in buf.iter_mut().take(len) {
                    next(&mut state);
                    let byte = (state >> 24) as u8;
                    let stop = bias != 0 && (state >> 40) % 4 < bias;
                    *b = if stop { byte & 0x7f } else { byte | 0x80 };
                }
                let bytes = &buf[..len];
                for count in 0..=(len as u64 + 2) {
                    assert_eq!(
                        nth_end(bytes, count),
                        naive_end(bytes, count),
                        "{bytes:02x?} {count}"
                    );
                }
            }
        }
    }

    /// `decode_short` agrees with the checked decoder whenever it answers, and answers for
    /// every canonical varint of 1..=8 bytes with 8 bytes readable.
    #[test]
    fn decode_short_matches_the_checked_decoder() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let draws = if cfg!(miri) { 2_000 } else { 200_000 };
        for _ in 0..draws {
            let r = next(&mut state);
            let mut buf = [0u8; 12];
            for (i, b) in buf.iter_mut().enumerate() {
                let x = (next(&mut state) >> 8) as u8;
                *b = if (i as u64) < r % 10 {
                    x | 0x80
                } else {
                    x & 0x7f
                };
                if r.is_multiple_of(7) && (i as u64) == r % 10 {
                    *b = 0; // a non-canonical ending now and then
                }
            }
            let len = 1 + (r >> 40) as usize % 12;
            let bytes = &buf[..len];
            let checked = decode_u64(bytes, VarintFormat::U64);
            match decode_short(bytes) {
                Some(got) => assert_eq!(Ok(got), checked, "{bytes:02x?}"),
                None => {
                    let short_ok = matches!(checked, Ok((_, n)) if n <= 8);
                    assert!(!(short_ok && len >= 8), "missed {bytes:02x?}");
                }
            }
        }
    }
}
