//! Length indexes: ZigZag delta LEB128 streams of `i64` lengths (a file's rows, the elements,
//! keys and values of nested payloads).
//!
//! Validation decodes in chunks through the bulk kernel ([`DeltaIter::decode_into`]) and
//! checks whole chunks at once; only when a chunk is bad does a cold scalar re-scan find the
//! exact entry and its offset. [`Lengths`] is the allocation-free buffered reader used after
//! validation.

use crate::codec::varint::{self, DeltaIter, VarintFormat, ZigZagDeltaIter};
use crate::error::{off, Error, ErrorKind, Result};

/// Entries decoded per bulk call by the buffered reader.
const CHUNK: usize = 128;

/// Entries decoded per bulk call by the validating scan (a stack buffer of 8 KiB).
const SCAN_CHUNK: usize = 1024;

/// The varint format of every BLOB length index.
pub(crate) const FORMAT: VarintFormat = VarintFormat::U64;

/// Which entries an index may hold besides real lengths.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rules {
    /// The smallest real length (16 for file rows: a record's overhead; 0 in nested indexes).
    pub min_real: i64,
    /// Whether `-2` (placeholder) is allowed.
    pub placeholder: bool,
}

impl Rules {
    #[inline]
    fn valid(self, v: i64) -> bool {
        v >= self.min_real || v == -1 || (self.placeholder && v == -2)
    }
}

/// What a scan found: sum of the real lengths, NULL and placeholder counts.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Scan {
    pub sum: u64,
    pub nulls: u64,
    pub placeholders: u64,
}

/// Decodes `count` entries of `index` (at absolute `origin`), checking each against `rules`
/// and that the running sum of real lengths never exceeds `limit`.
///
/// Errors: varint errors and [`ErrorKind::ArithmeticOverflow`] from the decoder;
/// [`ErrorKind::InvalidValue`] for an entry the rules forbid and [`ErrorKind::OutOfBounds`]
/// for the entry that runs past `limit`, both at that entry's varint.
pub(crate) fn scan(
    index: &[u8],
    origin: u64,
    count: u64,
    limit: u64,
    rules: Rules,
) -> Result<Scan> {
    let mut it = DeltaIter::zigzag(index, 0, FORMAT)
        .with_count(count)
        .with_origin(origin);
    let mut buf = [0i64; SCAN_CHUNK];
    let mut scan = Scan::default();
    // Below 2^51 the branch-free chunk check applies (its sum is exact and any entry above
    // the limit shows in it); the bound is checked once per chunk.
    let fast = limit < (1 << 51);
    loop {
        let n = it.decode_into(&mut buf)?;
        if n == 0 {
            break;
        }
        let chunk = buf.get(..n).unwrap_or_default();
        let (bad, sum, nulls, placeholders) = if fast {
            check_chunk(chunk, rules)
        } else {
            check_chunk_wide(chunk, rules)
        };
        scan.nulls += nulls;
        scan.placeholders += placeholders;
        scan.sum = scan.sum.saturating_add(sum);
        if bad || scan.sum > limit {
            return Err(locate(index, origin, limit, rules));
        }
    }
    if it.position() < origin.saturating_add(off(index.len())) {
        // Bytes after the last terminator: an unfinished (truncated or overlong) varint.
        let at = it.position();
        let rest = index.get(usize::try_from(at - origin).unwrap_or(usize::MAX)..);
        if let Err(e) = varint::decode_u64(rest.unwrap_or_default(), FORMAT) {
            return Err(e.shifted(at));
        }
    }
    it.finish()?;
    Ok(scan)
}

/// Checks one chunk through the dispatched [`check_lengths`](crate::codec::slots::check_lengths)
/// kernel (adds, shifts and bitwise operations only, vectorised per tier): whether an entry
/// breaks the rules or is at least 2^52 - 2 (above any fast-path limit, which is below
/// 2^51), the sum of the real lengths, NULL and placeholder counts.
///
/// * In a good chunk every entry is below 2^52 and there are at most [`SCAN_CHUNK`] of them,
///   so the plain sum of the real lengths (negative entries masked out) cannot wrap.
/// * For a good chunk the NULL and placeholder counts follow from the number `k` of negative
///   entries and the signed total `t = real - nulls - 2 * placeholders`.
#[inline]
fn check_chunk(chunk: &[i64], rules: Rules) -> (bool, u64, u64, u64) {
    let floor = if rules.placeholder { 2 } else { 1 };
    let c = crate::codec::slots::check_lengths(chunk, rules.min_real, floor);
    let bad = c.flags >> 52 != 0;
    // real - total = nulls + 2 * placeholders; negatives = nulls + placeholders.
    let weighted = c.real.wrapping_sub(c.total);
    let placeholders = weighted.wrapping_sub(c.negatives);
    let nulls = c.negatives.wrapping_sub(placeholders);
    (bad, c.real, nulls, placeholders)
}

/// [`check_chunk`] for a limit of 2^51 or more: saturating sum.
#[cold]
#[inline(never)]
fn check_chunk_wide(chunk: &[i64], rules: Rules) -> (bool, u64, u64, u64) {
    let mut bad = false;
    let mut sum = 0u64;
    let mut nulls = 0u64;
    let mut placeholders = 0u64;
    for &v in chunk {
        bad |= !rules.valid(v);
        nulls += u64::from(v == -1);
        placeholders += u64::from(v == -2);
        sum = sum.saturating_add(v.max(0).unsigned_abs());
    }
    (bad, sum, nulls, placeholders)
}

/// The cold path of [`scan`]: re-decodes one entry at a time to name the bad entry's offset.
#[cold]
#[inline(never)]
fn locate(index: &[u8], origin: u64, limit: u64, rules: Rules) -> Error {
    let mut it = DeltaIter::zigzag(index, 0, FORMAT).with_origin(origin);
    let mut sum = 0u64;
    loop {
        let at = it.position();
        match it.next() {
            None => break,
            Some(Err(e)) => return e,
            Some(Ok(v)) => {
                if !rules.valid(v) {
                    return Error::new(ErrorKind::InvalidValue, at);
                }
                sum = sum.saturating_add(v.max(0).unsigned_abs());
                if sum > limit {
                    return Error::new(ErrorKind::OutOfBounds, at);
                }
            }
        }
    }
    // Not reached for an index `scan` rejected; report the index start.
    Error::new(ErrorKind::InvalidValue, origin)
}

/// A buffered reader of an already validated index: yields its entries, stops at the end.
#[derive(Clone, Debug)]
pub(crate) struct Lengths<'a> {
    it: ZigZagDeltaIter<'a>,
    buf: [i64; CHUNK],
    pos: usize,
    len: usize,
}

impl<'a> Lengths<'a> {
    /// A reader of the `count` entries of `index`.
    pub(crate) fn new(index: &'a [u8], count: u64) -> Self {
        Lengths {
            it: DeltaIter::zigzag(index, 0, FORMAT).with_count(count),
            buf: [0; CHUNK],
            pos: 0,
            len: 0,
        }
    }

    /// The next entry, or `None` at the end (or, for an index that was not validated, at the
    /// first error).
    #[inline]
    pub(crate) fn next_len(&mut self) -> Option<i64> {
        if self.pos >= self.len {
            self.refill()?;
        }
        let v = self.buf.get(self.pos).copied();
        self.pos += 1;
        v
    }

    /// Fills `out` with the next `out.len()` entries; returns how many were available.
    #[inline]
    pub(crate) fn take_into(&mut self, out: &mut [i64]) -> usize {
        let mut filled = 0;
        while filled < out.len() {
            if self.pos >= self.len {
                let dst = out.get_mut(filled..).unwrap_or_default();
                if dst.len() >= CHUNK {
                    // Buffer drained and a large request: decode straight into `out`.
                    match self.it.decode_into(dst) {
                        Ok(n) if n > 0 => {
                            filled += n;
                            continue;
                        }
                        _ => break,
                    }
                }
                if self.refill().is_none() {
                    break;
                }
            }
            let avail = self.buf.get(self.pos..self.len).unwrap_or_default();
            let dst = out.get_mut(filled..).unwrap_or_default();
            let n = avail.len().min(dst.len());
            if let (Some(d), Some(s)) = (dst.get_mut(..n), avail.get(..n)) {
                d.copy_from_slice(s);
            }
            self.pos += n;
            filled += n;
        }
        filled
    }

    #[inline(never)]
    fn refill(&mut self) -> Option<()> {
        let n = self.it.decode_into(&mut self.buf).ok()?;
        if n == 0 {
            return None;
        }
        self.pos = 0;
        self.len = n;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: Rules = Rules {
        min_real: 16,
        placeholder: true,
    };

    /// The branch-free chunk check against a per-entry naive model.
    #[test]
    fn check_chunk_matches_naive() {
        let specials = [
            -3,
            -2,
            -1,
            0,
            1,
            15,
            16,
            17,
            1000,
            1 << 40,
            i64::MAX - 2,
            i64::MAX,
            i64::MIN,
        ];
        let nested = Rules {
            min_real: 0,
            placeholder: false,
        };
        for rules in [FILE, nested] {
            for &a in &specials {
                for &b in &specials {
                    let chunk = [a, 16, b, -1];
                    let naive_bad = !chunk.iter().all(|&v| rules.valid(v));
                    let (bad, sum, nulls, placeholders) = check_chunk(&chunk, rules);
                    let real: u128 = chunk.iter().map(|&v| v.max(0) as u128).sum();
                    if naive_bad {
                        // Either flagged, or (entries near i64::MAX) far above any limit.
                        assert!(bad || sum >= 1 << 52, "{a} {b}");
                        continue;
                    }
                    if chunk.iter().all(|&v| v < (1 << 52) - 2) {
                        assert!(!bad, "{a} {b}");
                        assert_eq!(u128::from(sum), real);
                        let n = chunk.iter().filter(|&&v| v == -1).count() as u64;
                        let p = chunk.iter().filter(|&&v| v == -2).count() as u64;
                        assert_eq!((nulls, placeholders), (n, p), "{a} {b}");
                    } else {
                        assert!(bad || sum >= 1 << 52, "{a} {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn scan_sums_and_counts() {
        // 22, -1, 22, -2
        let index = [0x2c, 0x2d, 0x2e, 0x2f];
        let s = scan(&index, 100, 4, 44, FILE).unwrap();
        assert_eq!((s.sum, s.nulls, s.placeholders), (44, 1, 1));
        let e = scan(&index, 100, 4, 43, FILE).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::OutOfBounds, 102));
    }

    #[test]
    fn scan_finds_invalid_entry_in_later_chunk() {
        // 16, then 199 zero deltas, then delta -16 (ZigZag 0x1f): the entry 0 is invalid.
        let mut index = [0u8; 201];
        index[0] = 0x20;
        index[200] = 0x1f;
        let e = scan(&index, 7, 201, u64::MAX, FILE).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::InvalidValue, 7 + 200));
    }
}
