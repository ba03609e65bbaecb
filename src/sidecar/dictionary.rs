//! The partition dictionary: the framing check of one `_PARTITION` tuple, and the borrowed
//! views over the dictionary's tuples in ID order ([`Partitions`]) and by ID
//! ([`PartitionIndex`], an O(1) index in caller memory).
//!
//! The dictionary's bytes were validated with the sidecar (see `validate`), so these views do
//! not fail. This module decodes no partition values (that is [`BinaryRow`](super::BinaryRow))
//! and knows nothing of blocks.

use super::binary_row;
use super::layout::{Fields, Layout, MIN_PARTITION_LEN};
use crate::cursor::Cursor;
use crate::error::{off, Error, ErrorKind, Result};

/// Checks the framing of one `_PARTITION` tuple (arity prefix + BinaryRow) at `at`.
pub(super) fn check_partition_tuple(tuple: &[u8], at: u64) -> Result<()> {
    let len = off(tuple.len());
    if len < MIN_PARTITION_LEN {
        return Err(Error::new(ErrorKind::InvalidLength, at));
    }
    let mut c = Cursor::with_origin(tuple, at);
    let arity = c.i32_be()?;
    let arity = u64::try_from(arity).map_err(|_| Error::new(ErrorKind::InvalidValue, at))?;
    let need = binary_row::fixed_part_len(arity)
        .and_then(|n| n.checked_add(4))
        .ok_or(Error::new(ErrorKind::ArithmeticOverflow, at))?;
    if need > len {
        return Err(Error::new(ErrorKind::InvalidLength, at));
    }
    Ok(())
}

/// Iterator over dictionary tuples with their absolute offsets.
#[derive(Clone, Debug)]
pub(super) struct PartitionsAt<'a> {
    f: Fields<'a>,
}

impl<'a> PartitionsAt<'a> {
    /// The tuples of `dictionary`, which starts at absolute offset `at`.
    pub(super) fn new(dictionary: &'a [u8], at: u64, layout: Layout) -> Self {
        PartitionsAt {
            f: Fields::with_origin(dictionary, at, layout),
        }
    }
}

impl<'a> Iterator for PartitionsAt<'a> {
    type Item = (u64, &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        if self.f.cur.is_empty() {
            return None;
        }
        let len = self.f.count().ok()?;
        let at = self.f.cur.position();
        let tuple = self.f.cur.bytes_u64(len).ok()?;
        Some((at, tuple))
    }
}

/// O(1) access to dictionary tuples by ID; see [`Sidecar::partition_index`](super::Sidecar::partition_index).
#[derive(Debug)]
pub struct PartitionIndex<'a, 's> {
    dictionary: &'a [u8],
    spans: &'s [(u32, u32)],
}

impl<'a, 's> PartitionIndex<'a, 's> {
    /// The index of `dictionary` from each tuple's `(start, len)` in it.
    pub(super) fn new(dictionary: &'a [u8], spans: &'s [(u32, u32)]) -> Self {
        PartitionIndex { dictionary, spans }
    }
}

impl<'a> PartitionIndex<'a, '_> {
    /// The tuple with dictionary ID `id`.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&'a [u8]> {
        let &(start, len) = self.spans.get(usize::try_from(id).ok()?)?;
        let start = usize::try_from(start).ok()?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        self.dictionary.get(start..end)
    }

    /// Number of tuples.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether the dictionary is empty.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// The dictionary's tuples in ID order; see [`Sidecar::partitions`](super::Sidecar::partitions).
#[derive(Clone, Debug)]
pub struct Partitions<'a> {
    inner: PartitionsAt<'a>,
}

impl<'a> Partitions<'a> {
    /// The tuples of `inner`, without their offsets.
    pub(super) fn new(inner: PartitionsAt<'a>) -> Self {
        Partitions { inner }
    }
}

impl<'a> Iterator for Partitions<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        self.inner.next().map(|(_, t)| t)
    }
}
