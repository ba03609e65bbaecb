//! The blocks of a sidecar: [`Block`] (one manifest block and its three raw coverage frames),
//! the [`Blocks`] iterator, and `BlockWalker`, which parses and checks blocks one after another
//! for both validation and iteration. The walker has two hand-tuned fast paths,
//! `fixed_block_fast` and `compact_block_scan`, each accepting only what the checked
//! `next_block` accepts (the unit tests below and every debug build cross-check them).
//!
//! Decoding a frame's payload is `coverage`'s job; this module only checks payload framing
//! (through `coverage`'s `frame` functions) and knows nothing of the header, dictionary bytes
//! or checksum.

use super::coverage::{BucketPairs, PartitionIds, RowIdIntervals};
use super::layout::{Fields, Layout, ENCODING_UNAVAILABLE, ENCODING_V1, MAX_INT, MAX_LONG};
use super::validate::Walked;
use crate::codec::varint;
use crate::error::{off, Error, ErrorKind, Result};

/// A compact payload's `count` varint at `bytes[start..end]` (`1..=max`, `<= i32::MAX`, at
/// most one byte a value left after it): the count and the position after it.
#[inline(always)]
fn lead_within(bytes: &[u8], start: usize, end: usize, max: u64) -> Option<(u64, usize)> {
    let (n, q) = varint::decode_short_within(bytes, start, end)?;
    (n != 0 && n <= max && n <= MAX_INT && n <= off(end - q)).then_some((n, q))
}

/// One coverage dimension's raw frame.
#[derive(Clone, Copy, Debug)]
struct Frame<'a> {
    encoding: u8,
    payload: &'a [u8],
    at: u64,
}

/// One block of the manifest and its coverage, borrowed from a validated [`Sidecar`](super::Sidecar).
///
/// The block holds its three coverage frames; the iterators are built on demand.
#[derive(Clone, Copy, Debug)]
pub struct Block<'a> {
    /// Block ID (its position).
    pub id: u32,
    /// Offset of the block's object-count varint in the manifest.
    pub offset: u64,
    /// Length: count varint + size varint + data + 16-byte sync.
    pub length: u64,
    /// Ordinal of the block's first entry in the manifest.
    pub first_record: u64,
    /// Entries (ADD + DELETE) in the block.
    pub record_count: u64,
    layout: Layout,
    partition_count: u32,
    frames: [Frame<'a>; 3],
}

impl<'a> Block<'a> {
    /// Field-by-field equality (for the fast paths' debug cross-checks).
    #[cfg(any(test, debug_assertions))]
    fn same_as(&self, other: &Block<'_>) -> bool {
        let frames = self
            .frames
            .iter()
            .zip(&other.frames)
            .all(|(a, b)| a.encoding == b.encoding && a.payload == b.payload && a.at == b.at);
        (
            self.id,
            self.offset,
            self.length,
            self.first_record,
            self.record_count,
        ) == (
            other.id,
            other.offset,
            other.length,
            other.first_record,
            other.record_count,
        ) && self.layout == other.layout
            && self.partition_count == other.partition_count
            && frames
    }

    /// The encoding bytes of the partition, row-ID and bucket dimensions (0 = unavailable,
    /// 1 = payload, other = unknown and treated as unavailable).
    pub fn encodings(&self) -> [u8; 3] {
        self.frames.map(|f| f.encoding)
    }

    #[inline(always)]
    pub(super) fn try_partition_ids(&self) -> Result<Option<PartitionIds<'a>>> {
        let [f, _, _] = self.frames;
        if f.encoding != ENCODING_V1 {
            return Ok(None);
        }
        PartitionIds::frame(
            self.layout,
            f.payload,
            f.at,
            self.record_count,
            self.partition_count,
        )
        .map(Some)
    }

    #[inline(always)]
    pub(super) fn try_row_ids(&self) -> Result<Option<RowIdIntervals<'a>>> {
        let [_, f, _] = self.frames;
        if f.encoding != ENCODING_V1 {
            return Ok(None);
        }
        RowIdIntervals::frame(self.layout, f.payload, f.at, self.record_count).map(Some)
    }

    #[inline(always)]
    pub(super) fn try_buckets(&self) -> Result<Option<BucketPairs<'a>>> {
        let [_, _, f] = self.frames;
        if f.encoding != ENCODING_V1 {
            return Ok(None);
        }
        BucketPairs::frame(self.layout, f.payload, f.at, self.record_count).map(Some)
    }

    /// The partition IDs of the block's entries, or `None` when unavailable.
    ///
    /// ```
    /// use lakecore::sidecar::{ManifestFacts, Sidecar, SidecarOptions};
    /// # let hex = include_str!("../../tests/data/golden/compact-v1.hex");
    /// # let bytes: Vec<u8> = (0..hex.trim().len()).step_by(2)
    /// #     .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    /// let facts = ManifestFacts { length: 457, entries: 7 };
    /// let sidecar = Sidecar::parse_with(&bytes, &SidecarOptions { facts: Some(facts) })?;
    /// // Block 0: entries (rows 0..=9, a, 1/4), (rows 5..=9, a, 1/4), (rows 20..=24, b, 1/8).
    /// let block = sidecar.blocks().next().unwrap();
    /// let ids: Vec<u32> = block.partition_ids().unwrap().collect::<Result<_, _>>()?;
    /// assert_eq!(ids, [0, 1]);
    /// let rows: Vec<(u64, u64)> = block.row_ids().unwrap().collect::<Result<_, _>>()?;
    /// assert_eq!(rows, [(0, 9), (20, 24)]);
    /// let buckets: Vec<(i32, i32)> = block.buckets().unwrap().collect::<Result<_, _>>()?;
    /// assert_eq!(buckets, [(1, 4), (1, 8)]);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn partition_ids(&self) -> Option<PartitionIds<'a>> {
        self.try_partition_ids().ok().flatten()
    }

    /// The merged row-ID intervals of the block's entries, or `None` when unavailable.
    pub fn row_ids(&self) -> Option<RowIdIntervals<'a>> {
        self.try_row_ids().ok().flatten()
    }

    /// Whether the block has row-ID coverage.
    pub fn has_row_ids(&self) -> bool {
        self.frames[1].encoding == ENCODING_V1
    }

    /// The envelope `[min, max]` of the block's row IDs, read without decoding any delta;
    /// `None` when unavailable.
    ///
    /// ```
    /// use lakecore::sidecar::{ManifestFacts, Sidecar, SidecarOptions};
    /// # let hex = include_str!("../../tests/data/golden/compact-v1.hex");
    /// # let bytes: Vec<u8> = (0..hex.trim().len()).step_by(2)
    /// #     .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    /// let facts = ManifestFacts { length: 457, entries: 7 };
    /// let sidecar = Sidecar::parse_with(&bytes, &SidecarOptions { facts: Some(facts) })?;
    /// let envelopes: Vec<_> = sidecar.blocks().map(|b| b.row_id_envelope()).collect();
    /// assert_eq!(envelopes[0], Some((0, 24)));
    /// assert_eq!(envelopes[2], Some((20, i64::MAX as u64)));
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    #[inline]
    pub fn row_id_envelope(&self) -> Option<(u64, u64)> {
        let [_, f, _] = self.frames;
        if f.encoding != ENCODING_V1 {
            return None;
        }
        let word = |at: usize| -> Option<u64> {
            f.payload
                .get(at..)
                .and_then(|p| p.first_chunk::<8>())
                .map(|b| u64::from_be_bytes(*b))
        };
        match self.layout {
            Layout::Fixed => {
                let min = word(4)?;
                Some((min, min.checked_add(word(12)?)?))
            }
            Layout::Compact => Some((word(0)?, word(8)?)),
        }
    }

    /// The `(bucket, totalBuckets)` pairs of the block's entries, or `None` when
    /// unavailable.
    pub fn buckets(&self) -> Option<BucketPairs<'a>> {
        self.try_buckets().ok().flatten()
    }
}

/// Parses blocks one after another, checking each (shared by validation and walking).
#[derive(Clone, Debug)]
pub(super) struct BlockWalker<'a> {
    f: Fields<'a>,
    left: u32,
    next_id: u32,
    next_first_record: u64,
    next_offset: u64,
    entry_limit: u64,
    partition_count: u32,
}

impl<'a> BlockWalker<'a> {
    /// A walker over the `block_count` blocks `f` reads, the first at manifest offset
    /// `first_offset`, their record counts summing to at most `entry_limit`, their partition
    /// IDs below `partition_count`.
    #[inline(always)]
    pub(super) fn new(
        f: Fields<'a>,
        block_count: u32,
        first_offset: u64,
        entry_limit: u64,
        partition_count: u32,
    ) -> Self {
        BlockWalker {
            f,
            left: block_count,
            next_id: 0,
            next_first_record: 0,
            next_offset: first_offset,
            entry_limit,
            partition_count,
        }
    }

    /// After the last block: checks that nothing follows it and returns the manifest offset
    /// where the tiling ends and the number of records walked.
    #[inline(always)]
    pub(super) fn finish(self) -> Result<(u64, u64)> {
        self.f.cur.expect_end()?;
        Ok((self.next_offset, self.next_first_record))
    }

    #[inline(always)]
    fn frame(&mut self) -> Result<Frame<'a>> {
        let encoding = self.f.cur.u8()?;
        if encoding == ENCODING_UNAVAILABLE {
            return Ok(Frame {
                encoding,
                payload: &[],
                at: self.f.cur.position(),
            });
        }
        let len = self.f.count()?;
        let at = self.f.cur.position();
        let payload = self.f.cur.bytes_u64(len)?;
        Ok(Frame {
            encoding,
            payload,
            at,
        })
    }

    /// Checks every remaining block; `layout` is the walker's own, passed as a constant by
    /// the caller so that each call site compiles to a loop specialised for it.
    #[inline(always)]
    pub(super) fn validate_all<W: Walked>(&mut self, layout: Layout, walked: &mut W) -> Result<()> {
        while self.left > 0 {
            self.f.layout = layout;
            if W::BLOCKS {
                // The fused selection: the walk hands each checked block on. The compact fast
                // path builds the block from what its scan found; otherwise the checked path.
                #[cfg(debug_assertions)]
                let before = self.clone();
                let block = match layout {
                    Layout::Compact => self.compact_block_fast_block(),
                    Layout::Fixed => None,
                };
                #[cfg(debug_assertions)]
                if let Some(fast) = &block {
                    let mut slow = before;
                    let checked = slow.next_block(true);
                    debug_assert!(slow.state() == self.state());
                    debug_assert!(checked.is_ok_and(|b| b.same_as(fast)));
                }
                let block = match block {
                    Some(block) => block,
                    None => self.next_block(true)?,
                };
                walked.block(&block)?;
                walked.walked(self.f.cur.index());
                continue;
            }
            #[cfg(debug_assertions)]
            let before = self.clone();
            let fast = match layout {
                Layout::Fixed => self.fixed_block_fast(),
                Layout::Compact => self.compact_block_fast(),
            };
            // Debug builds (every test run) cross-check the fast paths against the checked
            // one on every block they accept.
            #[cfg(debug_assertions)]
            if fast {
                let mut slow = before;
                debug_assert!(slow.next_block(true).is_ok() && slow.state() == self.state());
            }
            if !fast {
                self.next_block(true)?;
            }
            walked.walked(self.f.cur.index());
        }
        Ok(())
    }

    /// Fixed layout: checks and consumes the next block with plain loads and no error
    /// plumbing when every check of [`next_block`](Self::next_block)`(true)` passes; returns
    /// `false`, consuming nothing, otherwise, and that path then reports the exact error. It
    /// accepts exactly what `next_block(true)` accepts (the sidecar tests run both: every
    /// valid block goes through here, every flipped or truncated one falls back).
    #[inline(always)]
    fn fixed_block_fast(&mut self) -> bool {
        let rest = self.f.cur.rest();
        let Some((head, mut tail)) = rest.split_first_chunk::<24>() else {
            return false;
        };
        let (words, _) = head.as_chunks::<8>();
        let &[offset, length, record_count] = words else {
            return false;
        };
        let (offset, length, record_count) = (
            u64::from_be_bytes(offset),
            u64::from_be_bytes(length),
            u64::from_be_bytes(record_count),
        );
        // Every `long` non-negative; `offset` is `next_offset` (itself <= MAX_LONG).
        let room = self.entry_limit.saturating_sub(self.next_first_record);
        // Both <= MAX_LONG: the sum cannot wrap.
        let end = offset.wrapping_add(length);
        if offset != self.next_offset
            || length == 0
            || length > MAX_LONG
            || end > MAX_LONG
            || record_count == 0
            || record_count > room
            || record_count > MAX_LONG
        {
            return false;
        }
        // The three frames: encoding byte, then (encoding != 0) `int` length and payload.
        let mut payloads: [(u8, &[u8]); 3] = [(0, &[]); 3];
        for slot in &mut payloads {
            let Some((&encoding, after)) = tail.split_first() else {
                return false;
            };
            tail = after;
            if encoding == ENCODING_UNAVAILABLE {
                *slot = (encoding, &[]);
                continue;
            }
            let Some((len, after)) = tail.split_first_chunk::<4>() else {
                return false;
            };
            let Ok(len) = usize::try_from(i32::from_be_bytes(*len)) else {
                return false;
            };
            let Some((payload, after)) = after.split_at_checked(len) else {
                return false;
            };
            *slot = (encoding, payload);
            tail = after;
        }
        let [(pe, partitions), (re, rows), (be, buckets)] = payloads;
        // `count int` (> 0, <= max, <= the bytes after it) leading a delta stream.
        let lead = |payload: &[u8], max: u64| -> bool {
            let Some((n, stream)) = payload.split_first_chunk::<4>() else {
                return false;
            };
            let Ok(n) = u64::try_from(i32::from_be_bytes(*n)) else {
                return false;
            };
            n != 0 && n <= max && n <= off(stream.len())
        };
        let max_ids = record_count.min(u64::from(self.partition_count));
        if pe == ENCODING_V1 && !lead(partitions, max_ids) {
            return false;
        }
        if be == ENCODING_V1 && !lead(buckets, record_count) {
            return false;
        }
        if re == ENCODING_V1 {
            // count int (1..=record_count) | min long | span long | 2(count - 1) deltas.
            let Some((prefix, deltas)) = rows.split_first_chunk::<20>() else {
                return false;
            };
            let (n, envelope) = prefix.split_at(4);
            let (min, span) = envelope.split_at(8);
            let (Ok(n), Ok(min), Ok(span)) = (
                <[u8; 4]>::try_from(n).map(i32::from_be_bytes),
                <[u8; 8]>::try_from(min).map(u64::from_be_bytes),
                <[u8; 8]>::try_from(span).map(u64::from_be_bytes),
            ) else {
                return false;
            };
            let Ok(n) = u64::try_from(n) else {
                return false;
            };
            let interior = n.wrapping_sub(1).wrapping_mul(2);
            if n == 0
                || n > record_count
                || min > MAX_LONG
                || span > MAX_LONG
                || min + span > MAX_LONG
                || interior > off(deltas.len())
                || (interior == 0 && !deltas.is_empty())
            {
                return false;
            }
        }
        if self.f.cur.skip(rest.len() - tail.len()).is_err() {
            return false;
        }
        self.advance(end, record_count);
        true
    }

    /// Compact layout: the counterpart of [`fixed_block_fast`](Self::fixed_block_fast).
    /// Varints are read by [`varint::decode_short_within`] (one byte, or one 8-byte load), so a block is
    /// declined (and left to the checked path) when a varint is longer than 8 bytes, or is
    /// longer than one byte and starts within 8 bytes of the body's end, as well as when any
    /// check fails.
    #[inline(always)]
    fn compact_block_fast(&mut self) -> bool {
        match self.compact_block_scan() {
            Some((used, end, record_count)) if self.f.cur.skip(used).is_ok() => {
                self.advance(end, record_count);
                true
            }
            _ => false,
        }
    }

    /// [`compact_block_fast`](Self::compact_block_fast) that also returns the block (built
    /// from the frames its scan found), for the fused selection.
    #[inline(always)]
    fn compact_block_fast_block(&mut self) -> Option<Block<'a>> {
        let rest = self.f.cur.rest();
        let origin = self.f.cur.position();
        let (used, end, record_count, frames) = self.compact_block_scan_frames()?;
        let frame = |(encoding, start, stop): (u8, usize, usize)| {
            Some(Frame {
                encoding,
                payload: rest.get(start..stop)?,
                at: origin.saturating_add(off(start)),
            })
        };
        let [p, r, b] = frames;
        let block = Block {
            id: self.next_id,
            offset: self.next_offset,
            length: end - self.next_offset,
            first_record: self.next_first_record,
            record_count,
            layout: self.f.layout,
            partition_count: self.partition_count,
            frames: [frame(p)?, frame(r)?, frame(b)?],
        };
        self.f.cur.skip(used).ok()?;
        self.advance(end, record_count);
        Some(block)
    }

    /// The checks of [`compact_block_fast`](Self::compact_block_fast), without consuming:
    /// the block's size in bytes, its manifest end offset and its record count.
    #[inline(always)]
    fn compact_block_scan(&self) -> Option<(usize, u64, u64)> {
        self.compact_block_scan_frames()
            .map(|(used, end, record_count, _)| (used, end, record_count))
    }

    /// [`compact_block_scan`](Self::compact_block_scan) with the three frames found:
    /// `(encoding, payload start, payload end)` within the cursor's rest.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    fn compact_block_scan_frames(&self) -> Option<(usize, u64, u64, [(u8, usize, usize); 3])> {
        let rest = self.f.cur.rest();
        let all = rest.len();
        let varint = |p: usize, limit: usize| varint::decode_short_within(rest, p, limit);
        let (offset, p) = varint(0, all)?;
        let (length, p) = varint(p, all)?;
        let (record_count, mut p) = varint(p, all)?;
        let room = self.entry_limit.saturating_sub(self.next_first_record);
        // Both below 2^56: the sum cannot wrap.
        let end = offset + length;
        if offset != self.next_offset
            || length == 0
            || end > MAX_LONG
            || record_count == 0
            || record_count > room
        {
            return None;
        }
        // The three frames: encoding byte, then (encoding != 0) length varint and payload.
        let mut frames = [(0u8, 0usize, 0usize); 3];
        for slot in &mut frames {
            let encoding = *rest.get(p)?;
            p += 1;
            if encoding == ENCODING_UNAVAILABLE {
                *slot = (encoding, p, p);
                continue;
            }
            let (len, q) = varint(p, all)?;
            let e = q.checked_add(usize::try_from(len).ok()?)?;
            if len > MAX_INT || e > all {
                return None;
            }
            *slot = (encoding, q, e);
            p = e;
        }
        let lead = |start: usize, end: usize, max: u64| lead_within(rest, start, end, max);
        let [(pe, ps, pend), (re, rs, rend), (be, bs, bend)] = frames;
        if pe == ENCODING_V1 {
            lead(ps, pend, record_count.min(u64::from(self.partition_count)))?;
        }
        if re == ENCODING_V1 {
            // min long BE | max long BE | interior count varint (even) | deltas.
            let (envelope, _) = rest.get(rs..rend)?.split_first_chunk::<16>()?;
            let (min, max) = envelope.split_at(8);
            let min = u64::from_be_bytes(min.try_into().ok()?);
            let max = u64::from_be_bytes(max.try_into().ok()?);
            let (interior, q) = varint(rs + 16, rend)?;
            if min > MAX_LONG
                || max > MAX_LONG
                || max < min
                || interior > MAX_INT
                || interior > off(rend - q)
                || interior % 2 != 0
                || interior / 2 + 1 > record_count
                || (interior == 0 && q != rend)
            {
                return None;
            }
        }
        if be == ENCODING_V1 {
            // Bucket stream, then a totals stream of the same count.
            let (n, q) = lead(bs, bend, record_count)?;
            let len = varint::nth_end(rest.get(q..bend)?, n)?;
            let (totals, _) = lead(q + len, bend, record_count)?;
            if totals != n {
                return None;
            }
        }
        Some((p, end, record_count, frames))
    }

    /// The walker's position and counters (for the fast paths' cross-checks).
    #[cfg(any(test, debug_assertions))]
    fn state(&self) -> (usize, u32, u32, u64, u64) {
        (
            self.f.cur.index(),
            self.left,
            self.next_id,
            self.next_offset,
            self.next_first_record,
        )
    }

    /// Counts a consumed block ending at manifest offset `end` with `record_count` entries.
    #[inline(always)]
    fn advance(&mut self, end: u64, record_count: u64) {
        self.left -= 1;
        self.next_id = self.next_id.saturating_add(1);
        self.next_offset = end;
        self.next_first_record = self.next_first_record.saturating_add(record_count);
    }

    #[inline(always)]
    fn next_block(&mut self, check: bool) -> Result<Block<'a>> {
        let at = self.f.cur.position();
        let offset = self.f.long()?;
        if offset != self.next_offset {
            return Err(Error::new(ErrorKind::Mismatch, at));
        }
        let at = self.f.cur.position();
        let length = self.f.long()?;
        if length == 0 {
            return Err(Error::new(ErrorKind::InvalidLength, at));
        }
        let end = offset
            .checked_add(length)
            .filter(|&e| e <= MAX_LONG)
            .ok_or(Error::new(ErrorKind::ArithmeticOverflow, at))?;
        let at = self.f.cur.position();
        let record_count = self.f.long()?;
        let room = self.entry_limit.saturating_sub(self.next_first_record);
        if record_count == 0 || record_count > room {
            return Err(Error::new(ErrorKind::InvalidLength, at));
        }
        let frames = [self.frame()?, self.frame()?, self.frame()?];
        let block = Block {
            id: self.next_id,
            offset,
            length,
            first_record: self.next_first_record,
            record_count,
            layout: self.f.layout,
            partition_count: self.partition_count,
            frames,
        };
        if check {
            // Framing of every payload (counts, lengths, envelopes), no delta decoding.
            block.try_partition_ids()?;
            block.try_row_ids()?;
            block.try_buckets()?;
        }
        self.advance(end, record_count);
        Ok(block)
    }
}

/// The blocks of a validated sidecar in file order; see [`Sidecar::blocks`](super::Sidecar::blocks).
#[derive(Clone, Debug)]
pub struct Blocks<'a> {
    walker: BlockWalker<'a>,
}

impl<'a> Blocks<'a> {
    /// The blocks `walker` has left.
    pub(super) fn new(walker: BlockWalker<'a>) -> Self {
        Blocks { walker }
    }
}

impl<'a> Iterator for Blocks<'a> {
    type Item = Block<'a>;

    #[inline]
    fn next(&mut self) -> Option<Block<'a>> {
        if self.walker.left == 0 {
            return None;
        }
        match self.walker.next_block(false) {
            Ok(b) => Some(b),
            Err(_) => {
                // Unreachable for a validated view; end the walk rather than panic.
                self.walker.left = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.walker.left).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

impl core::iter::FusedIterator for Blocks<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cursor::Cursor;
    use crate::sidecar::tests::xorshift;

    /// A block (either layout) or payload written field by field into a stack buffer.
    struct RawBlock {
        buf: [u8; 1024],
        len: usize,
    }

    impl RawBlock {
        fn new() -> Self {
            RawBlock {
                buf: [0; 1024],
                len: 0,
            }
        }

        fn put(&mut self, bytes: &[u8]) {
            let room = self.buf.len() - self.len;
            let n = bytes.len().min(room);
            self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
            self.len += n;
        }
    }

    /// Picks from `options` with `next`: the first option (a valid value) 7 times in 8 when
    /// `favour`, any option otherwise.
    fn pick_from(next: &mut impl FnMut() -> u64, favour: bool, options: &[u64]) -> u64 {
        let r = next();
        if favour && !r.is_multiple_of(8) {
            options[0]
        } else {
            options[(r >> 3) as usize % options.len()]
        }
    }

    /// A walker with one block left in `bytes`, its next offset, first record, entry limit
    /// and partition count as given.
    fn walker_at(bytes: &[u8], layout: Layout, at: (u64, u64, u64, u32)) -> BlockWalker<'_> {
        let (next_offset, next_first_record, entry_limit, partition_count) = at;
        BlockWalker {
            f: Fields {
                cur: Cursor::new(bytes),
                layout,
            },
            left: 1,
            next_id: 7,
            next_first_record,
            next_offset,
            entry_limit,
            partition_count,
        }
    }

    /// Runs a fast path and `next_block(true)` on copies of `walker` and asserts the walker
    /// states: the checked path's when the fast path accepts (which the checked path must
    /// too), the untouched `walker` when it declines. Returns both outcomes.
    fn fast_and_checked<'a>(
        walker: &BlockWalker<'a>,
        fast_path: impl FnOnce(&mut BlockWalker<'a>) -> bool,
    ) -> (bool, Result<Block<'a>>) {
        let (mut fast, mut slow) = (walker.clone(), walker.clone());
        let took = fast_path(&mut fast);
        let exact = slow.next_block(true);
        let bytes = walker.f.cur.rest();
        if took {
            assert!(exact.is_ok(), "{bytes:02x?}: {exact:?}");
            assert_eq!(fast.state(), slow.state(), "{bytes:02x?}");
        } else {
            assert_eq!(fast.state(), walker.state(), "{bytes:02x?}");
        }
        (took, exact)
    }

    /// `fixed_block_fast` accepts exactly the blocks `next_block(true)` accepts, and leaves
    /// the walker in the same state; it consumes nothing when it declines. Blocks are drawn
    /// around every bound the checks have (offsets, lengths, counts, envelopes, frame
    /// lengths, truncation).
    #[test]
    fn fixed_block_fast_path_accepts_exactly_what_next_block_accepts() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let (mut accepted, mut declined) = (0u32, 0u32);
        for _ in 0..300_000 {
            // Half the blocks favour each field's first option (a valid value), so that both
            // outcomes are common.
            let favour = next().is_multiple_of(2);
            let mut pick = |options: &[u64]| pick_from(&mut next, favour, options);
            let next_offset = pick(&[0, 100, MAX_LONG - 60, MAX_LONG]);
            let first_record = pick(&[0, 2, 5]);
            let entry_limit = pick(&[5, 100, MAX_LONG, u64::MAX]);
            let partition_count = pick(&[4, 0, 1, 1000]) as u32;
            let room = entry_limit.saturating_sub(first_record);
            let offset = pick(&[
                next_offset,
                next_offset,
                next_offset,
                next_offset + 1,
                1 << 63,
            ]);
            let length = pick(&[
                1,
                50,
                0,
                MAX_LONG - next_offset,
                MAX_LONG - next_offset + 1,
                1 << 63,
                u64::MAX,
            ]);
            let records = pick(&[1, 3, room, room.wrapping_add(1), 0, 1 << 63]);
            let mut b = RawBlock::new();
            b.put(&offset.to_be_bytes());
            b.put(&length.to_be_bytes());
            b.put(&records.to_be_bytes());
            for dim in 0..3 {
                let encoding = pick(&[1, 0, 2]) as u8;
                b.put(&[encoding]);
                if encoding == 0 {
                    continue;
                }
                let mut payload = RawBlock::new();
                let rc = records.min(1000);
                let count = pick(&[1, 2, 3, rc, rc + 1, 0, u32::MAX as u64, 1 << 31]) as u32;
                payload.put(&count.to_be_bytes());
                let deltas = if dim == 1 {
                    let min = pick(&[0, 5, MAX_LONG, 1 << 63]);
                    let edge = MAX_LONG - min.min(MAX_LONG);
                    let span = pick(&[0, 10, MAX_LONG, edge, edge + 1, 1 << 63, u64::MAX]);
                    payload.put(&min.to_be_bytes());
                    payload.put(&span.to_be_bytes());
                    let interior = u64::from(count).saturating_sub(1).saturating_mul(2);
                    pick(&[interior, interior + 1, interior.saturating_sub(1), 0, 1])
                } else {
                    pick(&[u64::from(count), u64::from(count) + 2, 0, 1])
                };
                payload.put(&[1u8; 64][..deltas.min(64) as usize]);
                let frame_len = pick(&[
                    payload.len as u64,
                    payload.len as u64,
                    payload.len as u64 + 1,
                    payload.len as u64 - 1,
                    u32::MAX as u64,
                ]) as u32;
                b.put(&frame_len.to_be_bytes());
                b.put(&payload.buf[..payload.len]);
            }
            let end = if next().is_multiple_of(4) {
                (next() % (b.len as u64 + 1)) as usize
            } else {
                b.len
            };
            let walker = walker_at(
                &b.buf[..end],
                Layout::Fixed,
                (next_offset, first_record, entry_limit, partition_count),
            );
            let (took, exact) = fast_and_checked(&walker, BlockWalker::fixed_block_fast);
            assert_eq!(took, exact.is_ok(), "{:02x?}: {exact:?}", &b.buf[..end]);
            if took {
                accepted += 1;
            } else {
                declined += 1;
            }
        }
        // The draw reaches both sides often.
        assert!(
            accepted > 10_000 && declined > 10_000,
            "{accepted} / {declined}"
        );
    }

    /// LEB128 of `v` (shortest form, or with one redundant `0x80 .. 0x00` byte when
    /// `padded`); returns the length written.
    fn put_uvarint(b: &mut RawBlock, v: u64, padded: bool) -> usize {
        use crate::codec::varint::{encode_u64, MAX_VARINT_LEN};
        let mut buf = [0u8; MAX_VARINT_LEN + 1];
        let mut len = encode_u64(v, (&mut buf[..MAX_VARINT_LEN]).try_into().unwrap());
        if padded {
            buf[len - 1] |= 0x80;
            len += 1; // the zero byte after it
        }
        b.put(&buf[..len]);
        len
    }

    /// `compact_block_fast` accepts only blocks `next_block(true)` accepts, leaving the walker
    /// in the same state (and consumes nothing when it declines); it accepts every such block
    /// whose varints are at most 8 bytes long with 8 bytes readable after the block. Blocks
    /// are drawn around every bound of the checks, with long, non-canonical and truncated
    /// varints and truncated blocks.
    #[test]
    fn compact_block_fast_path_accepts_what_next_block_accepts() {
        let mut next = xorshift(0x6a09_e667_f3bc_c909u64);
        let (mut accepted, mut declined, mut left_to_checked) = (0u32, 0u32, 0u32);
        for _ in 0..300_000 {
            let favour = next().is_multiple_of(2);
            let mut pick = |options: &[u64]| pick_from(&mut next, favour, options);
            let next_offset = pick(&[0, 100, 1 << 56, MAX_LONG - 60, MAX_LONG]);
            let first_record = pick(&[0, 2, 5]);
            let entry_limit = pick(&[5, 100, MAX_LONG, u64::MAX]);
            let partition_count = pick(&[4, 0, 1, 1000]) as u32;
            let room = entry_limit.saturating_sub(first_record);
            // Any varint longer than 8 bytes (or with a redundant byte) may be left to the
            // checked path.
            let mut long = false;
            let mut varint = |b: &mut RawBlock, v: u64, pick: &mut dyn FnMut(&[u64]) -> u64| {
                let padded = pick(&[0, 0, 0, 1]) == 1;
                long |= put_uvarint(b, v, padded) > 8 || padded;
            };
            let mut b = RawBlock::new();
            let offset = pick(&[next_offset, next_offset, next_offset + 1, 1 << 63]);
            varint(&mut b, offset, &mut pick);
            let length = pick(&[
                1,
                300,
                0,
                MAX_LONG - next_offset,
                MAX_LONG - next_offset + 1,
                1 << 63,
            ]);
            varint(&mut b, length, &mut pick);
            let records = pick(&[1, 3, 200, room, room.wrapping_add(1), 0, 1 << 63]);
            varint(&mut b, records, &mut pick);
            let rc = records.min(1000);
            for dim in 0..3 {
                let encoding = pick(&[1, 0, 2]) as u8;
                b.put(&[encoding]);
                if encoding == 0 {
                    continue;
                }
                let mut payload = RawBlock::new();
                // A stream of `n` values: one-byte values, or two-byte ones now and then.
                let stream = |payload: &mut RawBlock, n: u64, wide: bool| {
                    for _ in 0..n.min(40) {
                        payload.put(if wide { &[0x81, 0x01] } else { &[0x05] });
                    }
                };
                match dim {
                    1 => {
                        let min = pick(&[0, 5, MAX_LONG, 1 << 63]);
                        let max = pick(&[min, min + 10, MAX_LONG, min.wrapping_sub(1), 1 << 63]);
                        payload.put(&min.to_be_bytes());
                        payload.put(&max.to_be_bytes());
                        let intervals = pick(&[1, 2, rc, rc + 1]);
                        let interior = 2 * intervals.saturating_sub(1);
                        let count = pick(&[interior, interior + 1, 0, 2, 1 << 31]);
                        varint(&mut payload, count, &mut pick);
                        let values = pick(&[interior, interior + 1, interior.saturating_sub(1)]);
                        stream(&mut payload, values, pick(&[0, 1]) == 1);
                    }
                    _ => {
                        let cap = if dim == 0 {
                            rc.min(u64::from(partition_count))
                        } else {
                            rc
                        };
                        let count = pick(&[1, 2, cap, cap + 1, 0, 1 << 31]);
                        varint(&mut payload, count, &mut pick);
                        let wide = pick(&[0, 1]) == 1;
                        stream(
                            &mut payload,
                            pick(&[count, count + 1, count.saturating_sub(1)]),
                            wide,
                        );
                        if dim == 2 {
                            let totals = pick(&[count, count + 1, 0]);
                            varint(&mut payload, totals, &mut pick);
                            stream(
                                &mut payload,
                                pick(&[totals, totals.saturating_sub(1)]),
                                wide,
                            );
                        }
                    }
                }
                let frame_len = pick(&[
                    payload.len as u64,
                    payload.len as u64,
                    payload.len as u64 + 1,
                    payload.len as u64 - 1,
                    1 << 31,
                ]);
                varint(&mut b, frame_len, &mut pick);
                b.put(&payload.buf[..payload.len]);
            }
            let whole = b.len;
            // Eight readable bytes after the block, or none, or a truncated block.
            let end = match next() % 4 {
                0 => (next() % (whole as u64 + 1)) as usize,
                1 => whole,
                _ => {
                    b.put(&[0x7f; 8]);
                    b.len
                }
            };
            let walker = walker_at(
                &b.buf[..end],
                Layout::Compact,
                (next_offset, first_record, entry_limit, partition_count),
            );
            let (took, exact) = fast_and_checked(&walker, BlockWalker::compact_block_fast);
            if took {
                accepted += 1;
            } else {
                declined += 1;
                if exact.is_ok() {
                    assert!(long || end < whole + 8, "{:02x?}", &b.buf[..end]);
                    left_to_checked += 1;
                }
            }
            // The draw never runs out of room in the stack buffers.
            assert!(whole + 8 < b.buf.len());
        }
        assert!(
            accepted > 10_000 && declined > 10_000 && left_to_checked > 1_000,
            "{accepted} / {declined} / {left_to_checked}"
        );
    }
}
