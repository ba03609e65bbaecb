//! Block selection: a [`Query`] of up to three filters and the allocation-free
//! [`BlockSelection`] iterator that applies it block by block in the spec's order (row ID,
//! partition, bucket). Row ranges are the crate's shared [`RowRanges`].

use super::{Block, Blocks};
use crate::error::Result;
use crate::select::{RowRange, RowRanges};

/// The partition predicate evaluated once per dictionary entry: `mask[id]` says whether
/// tuple `id` passes. IDs beyond the mask do not pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionMask<'q>(&'q [bool]);

impl<'q> PartitionMask<'q> {
    /// A mask over dictionary IDs (from [`super::Sidecar::partition_mask`] or built by hand).
    pub fn new(mask: &'q [bool]) -> Self {
        PartitionMask(mask)
    }

    #[inline]
    fn passes(&self, id: u32) -> bool {
        usize::try_from(id)
            .ok()
            .and_then(|i| self.0.get(i))
            .copied()
            .unwrap_or(false)
    }
}

/// Whether `(bucket, total)` is in `list` of `(B, T)` pairs, where `T = None` accepts any
/// total (the `B[/T][,..]` lists of the command line and the Python package).
pub fn bucket_in(list: &[(i32, Option<i32>)], bucket: i32, total: i32) -> bool {
    list.iter()
        .any(|&(b, t)| b == bucket && t.is_none_or(|t| t == total))
}

/// Up to three optional filters; a missing filter passes every block.
///
/// ```
/// use lakecore::sidecar::{PartitionMask, Query, RowRange, RowRanges};
/// let mut rows = [RowRange::new(0, 99)];
/// let mask = [true, false];
/// let even = |bucket: i32, _total: i32| bucket % 2 == 0;
/// let q = Query::new()
///     .rows(RowRanges::normalize(&mut rows))
///     .partitions(PartitionMask::new(&mask))
///     .buckets(&even);
/// # let _ = q;
/// ```
#[derive(Clone, Copy, Default)]
pub struct Query<'q> {
    rows: Option<RowRanges<'q>>,
    partitions: Option<PartitionMask<'q>>,
    buckets: Option<&'q dyn Fn(i32, i32) -> bool>,
}

impl core::fmt::Debug for Query<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Query")
            .field("rows", &self.rows)
            .field("partitions", &self.partitions)
            .field("buckets", &self.buckets.is_some())
            .finish()
    }
}

impl<'q> Query<'q> {
    /// The query without filters: selects every block.
    pub fn new() -> Self {
        Query::default()
    }

    /// Keeps blocks whose row-ID coverage (if available) meets one of `ranges`; an empty
    /// list rejects every block that has row coverage.
    #[must_use]
    pub fn rows(mut self, ranges: RowRanges<'q>) -> Self {
        self.rows = Some(ranges);
        self
    }

    /// Keeps blocks with (if available) at least one passing partition ID.
    #[must_use]
    pub fn partitions(mut self, mask: PartitionMask<'q>) -> Self {
        self.partitions = Some(mask);
        self
    }

    /// Keeps blocks with (if available) at least one `(bucket, totalBuckets)` pair for which
    /// `predicate` holds.
    #[must_use]
    pub fn buckets(mut self, predicate: &'q dyn Fn(i32, i32) -> bool) -> Self {
        self.buckets = Some(predicate);
        self
    }

    /// Whether the query has no filter (every block is kept).
    #[inline(always)]
    pub(super) fn selects_all(&self) -> bool {
        self.rows.is_none() && self.partitions.is_none() && self.buckets.is_none()
    }

    /// Whether `block` must be read. Dimensions are tested in the order row ID, partition,
    /// bucket; the first rejection ends the evaluation. A malformed delta stream met on the
    /// way is an error.
    #[inline(always)]
    pub fn keeps(&self, block: &Block<'_>) -> Result<bool> {
        // Inline: the common outcomes (no filter; a row envelope that meets no range).
        if let (Some(ranges), Some(envelope)) = (self.rows, block.row_id_envelope()) {
            if first_meeting(ranges.as_slice(), envelope).is_none() {
                return Ok(false);
            }
        } else if self.selects_all() {
            return Ok(true);
        }
        self.keeps_decoding(block)
    }

    /// [`keeps`](Self::keeps) past its inline checks: the row intervals, partition IDs and
    /// bucket pairs as far as needed.
    #[inline(never)]
    fn keeps_decoding(&self, block: &Block<'_>) -> Result<bool> {
        if let (Some(ranges), Some(envelope)) = (self.rows, block.row_id_envelope()) {
            if !rows_hit(ranges.as_slice(), envelope, block)? {
                return Ok(false);
            }
        }
        // A dimension's frame is opened only when the query filters on it (a validated
        // block's framing is known good; opening it costs a varint walk).
        if let Some((mask, ids)) = match self.partitions {
            Some(mask) => block.try_partition_ids()?.map(|ids| (mask, ids)),
            None => None,
        } {
            let mut hit = false;
            for id in ids {
                if mask.passes(id?) {
                    hit = true;
                    break;
                }
            }
            if !hit {
                return Ok(false);
            }
        }
        if let Some((pred, pairs)) = match self.buckets {
            Some(pred) => block.try_buckets()?.map(|pairs| (pred, pairs)),
            None => None,
        } {
            let mut hit = false;
            for pair in pairs {
                let (b, t) = pair?;
                if pred(b, t) {
                    hit = true;
                    break;
                }
            }
            if !hit {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The first of the sorted, disjoint `ranges` that can meet the envelope `[min, max]` (the
/// first not ending before `min`), or `None` when no range meets it.
#[inline(always)]
fn first_meeting(ranges: &[RowRange], (min, max): (u64, u64)) -> Option<usize> {
    let i = ranges.partition_point(|r| r.last < min);
    ranges.get(i).filter(|r| r.first <= max).map(|_| i)
}

/// Envelope first, then intervals until the first hit (merge walk over sorted ranges).
#[inline]
fn rows_hit(ranges: &[RowRange], envelope: (u64, u64), block: &Block<'_>) -> Result<bool> {
    let Some(mut i) = first_meeting(ranges, envelope) else {
        return Ok(false);
    };
    let Some(intervals) = block.try_row_ids()? else {
        return Ok(true);
    };
    for interval in intervals {
        let (s, e) = interval?;
        while let Some(r) = ranges.get(i) {
            if r.last < s {
                i += 1;
            } else {
                break;
            }
        }
        match ranges.get(i) {
            Some(r) if r.first <= e => return Ok(true),
            Some(_) => {}
            None => return Ok(false),
        }
    }
    Ok(false)
}

/// A block a scan must read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SelectedBlock {
    /// Block ID.
    pub id: u32,
    /// Offset of the block in the manifest.
    pub offset: u64,
    /// Length of the block in bytes.
    pub length: u64,
    /// Ordinal of the block's first entry.
    pub first_record: u64,
    /// Entries in the block.
    pub record_count: u64,
}

impl SelectedBlock {
    /// The selection's record of `block`.
    pub(super) fn of(block: &Block<'_>) -> Self {
        SelectedBlock {
            id: block.id,
            offset: block.offset,
            length: block.length,
            first_record: block.first_record,
            record_count: block.record_count,
        }
    }

    /// The block's byte span in the manifest, `(offset, length)`.
    pub const fn span(&self) -> (u64, u64) {
        (self.offset, self.length)
    }
}

/// The selected blocks in file order; yields an error (then stops) when a malformed delta
/// stream is met. See [`super::Sidecar::select`].
#[derive(Clone, Debug)]
pub struct BlockSelection<'a, 'q> {
    blocks: Blocks<'a>,
    query: &'q Query<'q>,
    failed: bool,
}

impl<'a, 'q> BlockSelection<'a, 'q> {
    pub(super) fn new(blocks: Blocks<'a>, query: &'q Query<'q>) -> Self {
        BlockSelection {
            blocks,
            query,
            failed: false,
        }
    }
}

impl Iterator for BlockSelection<'_, '_> {
    type Item = Result<SelectedBlock>;

    fn next(&mut self) -> Option<Result<SelectedBlock>> {
        if self.failed {
            return None;
        }
        for block in self.blocks.by_ref() {
            match self.query.keeps(&block) {
                Ok(true) => return Some(Ok(SelectedBlock::of(&block))),
                Ok(false) => {}
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

impl core::iter::FusedIterator for BlockSelection<'_, '_> {}
