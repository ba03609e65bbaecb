//! Lazy, checked coverage iterators over one block's payloads.
//!
//! `frame` functions check a payload's framing (counts, lengths, envelopes) during
//! validation without decoding its delta stream; the iterators decode and check the stream
//! (canonical varints, bounds, strict order, exact end) as they are driven, so a scan can stop
//! at the first hit.

use super::layout::{Fields, Layout, MAX_INT, MAX_LONG};
use crate::codec::varint::{self, DeltaIter, VarintFormat, ZigZagDeltaIter};
use crate::error::{off, Error, ErrorKind, Result};

const FMT: VarintFormat = VarintFormat::SIDECAR;

/// Reads a payload's leading count (`int` or varint), checking `0 < count <= max` and that the
/// rest of the payload has at least one byte per value.
#[inline(always)]
fn lead_count(f: &mut Fields<'_>, max: u64, allow_zero: bool) -> Result<u64> {
    let at = f.cur.position();
    let n = f.count()?;
    if (!allow_zero && n == 0) || n > max || n > off(f.cur.remaining()) {
        return Err(Error::new(ErrorKind::InvalidLength, at));
    }
    Ok(n)
}

/// Fused end-of-stream check shared by the iterators.
fn trailing(stream_end: u64, position: u64) -> Option<Error> {
    (position != stream_end).then(|| Error::new(ErrorKind::TrailingBytes, position))
}

/// The sorted, distinct partition IDs of one block (lazy; see [`super::Block::partition_ids`]).
#[derive(Clone, Debug)]
pub struct PartitionIds<'a> {
    deltas: DeltaIter<'a>,
    count: u64,
    end: u64,
    yielded: u64,
    done: bool,
}

impl<'a> PartitionIds<'a> {
    #[inline(always)]
    pub(super) fn frame(
        layout: Layout,
        payload: &'a [u8],
        at: u64,
        record_count: u64,
        partition_count: u32,
    ) -> Result<Self> {
        let mut f = Fields::with_origin(payload, at, layout);
        let max = record_count.min(u64::from(partition_count));
        let count = lead_count(&mut f, max, false)?;
        let stream_at = f.cur.position();
        let deltas = DeltaIter::new(f.cur.rest(), 0, FMT)
            .with_count(count)
            .with_bounds(0, u64::from(partition_count).saturating_sub(1))
            .with_origin(stream_at);
        Ok(PartitionIds {
            deltas,
            count,
            end: at.saturating_add(off(payload.len())),
            yielded: 0,
            done: false,
        })
    }

    /// How many IDs the block lists.
    pub fn count(&self) -> u64 {
        self.count
    }
}

impl Iterator for PartitionIds<'_> {
    type Item = Result<u32>;

    #[inline]
    fn next(&mut self) -> Option<Result<u32>> {
        if self.done {
            return None;
        }
        let at = self.deltas.position();
        let prev = self.deltas.last_value();
        match self.deltas.next() {
            Some(Ok(v)) => {
                if self.yielded > 0 && v == prev {
                    self.done = true;
                    return Some(Err(Error::new(ErrorKind::NotSorted, at)));
                }
                self.yielded += 1;
                // Bounded by partition_count (a u32) in `frame`.
                Some(Ok(u32::try_from(v).unwrap_or(u32::MAX)))
            }
            Some(Err(e)) => {
                self.done = true;
                Some(Err(e))
            }
            None => {
                self.done = true;
                trailing(self.end, self.deltas.position()).map(Err)
            }
        }
    }
}

impl core::iter::FusedIterator for PartitionIds<'_> {}

/// The merged row-ID intervals `(first, last)` (inclusive) of one block, lazily decoded.
#[derive(Clone, Debug)]
pub struct RowIdIntervals<'a> {
    deltas: DeltaIter<'a>,
    min: u64,
    max: u64,
    intervals: u64,
    yielded: u64,
    prev_end: u64,
    end: u64,
    done: bool,
}

impl<'a> RowIdIntervals<'a> {
    #[inline(always)]
    pub(super) fn frame(
        layout: Layout,
        payload: &'a [u8],
        at: u64,
        record_count: u64,
    ) -> Result<Self> {
        let mut f = Fields::with_origin(payload, at, layout);
        let (min, max, intervals, interior) = match layout {
            Layout::Fixed => {
                let n = lead_count_fixed_rows(&mut f, record_count)?;
                let min_at = f.cur.position();
                let min = f.cur.len_i64_be()?;
                let span_at = f.cur.position();
                let span = f.cur.len_i64_be()?;
                let _ = min_at;
                let max = min
                    .checked_add(span)
                    .filter(|&m| m <= MAX_LONG)
                    .ok_or(Error::new(ErrorKind::OutOfBounds, span_at))?;
                let interior = n
                    .checked_sub(1)
                    .and_then(|k| k.checked_mul(2))
                    .ok_or(Error::new(ErrorKind::InvalidLength, at))?;
                if interior > off(f.cur.remaining()) {
                    return Err(Error::new(ErrorKind::InvalidLength, at));
                }
                (min, max, n, interior)
            }
            Layout::Compact => {
                let min = f.cur.len_i64_be()?;
                let max_at = f.cur.position();
                let max = f.cur.len_i64_be()?;
                if max < min {
                    return Err(Error::new(ErrorKind::OutOfBounds, max_at));
                }
                let count_at = f.cur.position();
                let interior = lead_count(&mut f, MAX_INT, true)?;
                let n = (interior / 2).saturating_add(1);
                if interior % 2 != 0 || n > record_count {
                    return Err(Error::new(ErrorKind::InvalidLength, count_at));
                }
                (min, max, n, interior)
            }
        };
        if interior == 0 && !f.cur.is_empty() {
            return Err(f.cur.error(ErrorKind::TrailingBytes));
        }
        let stream_at = f.cur.position();
        let deltas = DeltaIter::new(f.cur.rest(), min, FMT)
            .with_count(interior)
            .with_bounds(min, max)
            .with_origin(stream_at);
        Ok(RowIdIntervals {
            deltas,
            min,
            max,
            intervals,
            yielded: 0,
            prev_end: 0,
            end: at.saturating_add(off(payload.len())),
            done: false,
        })
    }

    /// The envelope `[min, max]`: the first interval's start and the last one's end.
    pub fn envelope(&self) -> (u64, u64) {
        (self.min, self.max)
    }

    /// How many intervals the block has.
    pub fn interval_count(&self) -> u64 {
        self.intervals
    }

    #[inline]
    fn fail(&mut self, e: Error) -> Option<Result<(u64, u64)>> {
        self.done = true;
        Some(Err(e))
    }

    #[inline]
    fn endpoint(&mut self) -> core::result::Result<(u64, u64), Error> {
        let at = self.deltas.position();
        match self.deltas.next() {
            Some(Ok(v)) => Ok((v, at)),
            Some(Err(e)) => Err(e),
            None => Err(Error::new(ErrorKind::Truncated, at)),
        }
    }
}

#[inline(always)]
fn lead_count_fixed_rows(f: &mut Fields<'_>, record_count: u64) -> Result<u64> {
    let at = f.cur.position();
    let n = f.count()?;
    if n == 0 || n > record_count {
        return Err(Error::new(ErrorKind::InvalidLength, at));
    }
    Ok(n)
}

impl Iterator for RowIdIntervals<'_> {
    type Item = Result<(u64, u64)>;

    #[inline]
    fn next(&mut self) -> Option<Result<(u64, u64)>> {
        if self.done {
            return None;
        }
        if self.yielded == self.intervals {
            self.done = true;
            return trailing(self.end, self.deltas.position()).map(Err);
        }
        let start = if self.yielded == 0 {
            self.min
        } else {
            match self.endpoint() {
                Ok((s, at)) if s <= self.prev_end => {
                    return self.fail(Error::new(ErrorKind::NotSorted, at))
                }
                Ok((s, _)) => s,
                Err(e) => return self.fail(e),
            }
        };
        let end = if self.yielded + 1 == self.intervals {
            self.max
        } else {
            match self.endpoint() {
                Ok((e, _)) => e,
                Err(e) => return self.fail(e),
            }
        };
        self.yielded += 1;
        self.prev_end = end;
        Some(Ok((start, end)))
    }
}

impl core::iter::FusedIterator for RowIdIntervals<'_> {}

#[derive(Clone, Debug)]
enum BucketStreams<'a> {
    Fixed(DeltaIter<'a>),
    Compact {
        buckets: DeltaIter<'a>,
        totals: ZigZagDeltaIter<'a>,
        buckets_end: u64,
    },
}

/// The distinct `(bucket, totalBuckets)` pairs of one block, sorted, lazily decoded.
#[derive(Clone, Debug)]
pub struct BucketPairs<'a> {
    streams: BucketStreams<'a>,
    count: u64,
    yielded: u64,
    prev: (u64, u64),
    end: u64,
    done: bool,
}

impl<'a> BucketPairs<'a> {
    #[inline(always)]
    pub(super) fn frame(
        layout: Layout,
        payload: &'a [u8],
        at: u64,
        record_count: u64,
    ) -> Result<Self> {
        let mut f = Fields::with_origin(payload, at, layout);
        let count = lead_count(&mut f, record_count, false)?;
        let stream_at = f.cur.position();
        let streams = match layout {
            Layout::Fixed => {
                let packed_max = (MAX_INT - 1) << 32 | MAX_INT;
                BucketStreams::Fixed(
                    DeltaIter::new(f.cur.rest(), 0, FMT)
                        .with_count(count)
                        .with_bounds(1, packed_max)
                        .with_origin(stream_at),
                )
            }
            Layout::Compact => {
                // Find the end of the bucket stream by its varint terminators (framing only).
                let Some(len) = varint::nth_end(f.cur.rest(), count) else {
                    return Err(f.cur.error_at(ErrorKind::Truncated, payload.len()));
                };
                let buckets_bytes = f.cur.bytes(len)?;
                let buckets_end = f.cur.position();
                let count2_at = f.cur.position();
                let count2 = lead_count(&mut f, record_count, false)?;
                if count2 != count {
                    return Err(Error::new(ErrorKind::Mismatch, count2_at));
                }
                let totals_at = f.cur.position();
                BucketStreams::Compact {
                    buckets: DeltaIter::new(buckets_bytes, 0, FMT)
                        .with_count(count)
                        .with_bounds(0, MAX_INT - 1)
                        .with_origin(stream_at),
                    totals: ZigZagDeltaIter::zigzag(f.cur.rest(), 0, FMT)
                        .with_count(count)
                        .with_bounds(1, i32::MAX.into())
                        .with_origin(totals_at),
                    buckets_end,
                }
            }
        };
        Ok(BucketPairs {
            streams,
            count,
            yielded: 0,
            prev: (0, 0),
            end: at.saturating_add(off(payload.len())),
            done: false,
        })
    }

    /// How many pairs the block lists.
    pub fn count(&self) -> u64 {
        self.count
    }

    fn fail(&mut self, e: Error) -> Option<Result<(i32, i32)>> {
        self.done = true;
        Some(Err(e))
    }
}

fn step<I: Iterator<Item = Result<T>>, T>(it: &mut I, at: u64) -> Result<T> {
    match it.next() {
        Some(r) => r,
        None => Err(Error::new(ErrorKind::Truncated, at)),
    }
}

impl Iterator for BucketPairs<'_> {
    type Item = Result<(i32, i32)>;

    fn next(&mut self) -> Option<Result<(i32, i32)>> {
        if self.done {
            return None;
        }
        if self.yielded == self.count {
            self.done = true;
            let pos = match &self.streams {
                BucketStreams::Fixed(d) => d.position(),
                BucketStreams::Compact {
                    buckets,
                    totals,
                    buckets_end,
                } => {
                    if buckets.position() != *buckets_end {
                        return Some(Err(Error::new(
                            ErrorKind::TrailingBytes,
                            buckets.position(),
                        )));
                    }
                    totals.position()
                }
            };
            return trailing(self.end, pos).map(Err);
        }
        let (pair, at) = match &mut self.streams {
            BucketStreams::Fixed(d) => {
                let at = DeltaIter::position(d);
                match step(d, at) {
                    Ok(v) => ((v >> 32, v & 0xffff_ffff), at),
                    Err(e) => return self.fail(e),
                }
            }
            BucketStreams::Compact {
                buckets, totals, ..
            } => {
                let at = DeltaIter::position(buckets);
                let b = match step(buckets, at) {
                    Ok(b) => b,
                    Err(e) => return self.fail(e),
                };
                let t_at = ZigZagDeltaIter::position(totals);
                let t = match step(totals, t_at) {
                    // Bounded to 1..=i32::MAX above.
                    Ok(t) => t.unsigned_abs(),
                    Err(e) => return self.fail(e),
                };
                ((b, t), t_at)
            }
        };
        let (bucket, total) = pair;
        if total == 0 || total > MAX_INT || bucket >= total {
            return self.fail(Error::new(ErrorKind::OutOfBounds, at));
        }
        if self.yielded > 0 && pair <= self.prev {
            return self.fail(Error::new(ErrorKind::NotSorted, at));
        }
        self.prev = pair;
        self.yielded += 1;
        let b = i32::try_from(bucket).unwrap_or(i32::MAX);
        let t = i32::try_from(total).unwrap_or(i32::MAX);
        Some(Ok((b, t)))
    }
}

impl core::iter::FusedIterator for BucketPairs<'_> {}
