//! Paimon manifest sidecars (`PMSC`): validate in place, walk coverage, select blocks, build.
//!
//! A sidecar describes, for every physical Avro block of one manifest, which partitions,
//! row-ID intervals and `(bucket, totalBuckets)` pairs the block's entries cover. This module
//! owns the two container layouts of format version 1 (told apart by byte 4):
//!
//! * [`Layout::Fixed`]: fixed-width big-endian integers, SHA-256 trailer (the default for
//!   building);
//! * [`Layout::Compact`]: LEB128 varints, CRC-32 trailer (what Apache Paimon ships).
//!
//! [`Sidecar::parse_with`] checks everything once (checksum, every container field and bound,
//! block tiling, entry count, payload framing) without decoding delta streams and without
//! allocating; the view then hands out borrowed sub-slices and lazy, checked iterators
//! ([`PartitionIds`], [`RowIdIntervals`], [`BucketPairs`]). [`Query`] + [`Sidecar::select`]
//! pick the blocks a scan must read. [`BinaryRow`] reads typed partition values so predicates
//! can be written on values. [`SidecarBuilder`] (feature `alloc`) writes either layout.
//!
//! This module knows nothing of files: the `io` module maps and reads them. One file per
//! concept: `layout` (constants, [`Layout`], the container-integer reader), `validate` (the
//! one-time checks and the checksum), `dictionary` (partition tuples), `block` (blocks and
//! the block walker), `coverage` (the payload iterators), `select`, `binary_row` and `build`.
//! This file holds [`Sidecar`] and its accessors.
//!
//! ```
//! use lakecore::sidecar::{
//!     Layout, ManifestFacts, Query, RowRange, RowRanges, Sidecar, SidecarOptions,
//! };
//! # let hex = include_str!("../../tests/data/golden/compact-v1.hex");
//! # let bytes: Vec<u8> = (0..hex.trim().len()).step_by(2)
//! #     .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
//! let facts = ManifestFacts { length: 457, entries: 7 };
//! let sidecar = Sidecar::parse_with(&bytes, &SidecarOptions { facts: Some(facts) })?;
//! assert_eq!(sidecar.layout(), Layout::Compact);
//! let mut rows = [RowRange::single(20)];
//! let query = Query::new().rows(RowRanges::normalize(&mut rows));
//! let firsts: Vec<u64> = sidecar
//!     .select(&query)
//!     .map(|b| b.map(|b| b.first_record))
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(firsts, [0, 5]);
//! # Ok::<(), lakecore::Error>(())
//! ```

mod binary_row;
mod block;
#[cfg(feature = "alloc")]
mod build;
mod coverage;
mod dictionary;
mod layout;
mod select;
mod validate;

pub use binary_row::BinaryRow;
pub use block::{Block, Blocks};
#[cfg(feature = "alloc")]
pub use build::{BuildSettings, EntryCoverage, SidecarBuilder};
pub use coverage::{BucketPairs, PartitionIds, RowIdIntervals};
pub use dictionary::{PartitionIndex, Partitions};
pub use layout::{
    Layout, AVRO_MAGIC, COMPACT_MIN_LEN, COMPACT_TRAILER_LEN, ENCODING_UNAVAILABLE, ENCODING_V1,
    FIXED_TRAILER_LEN, FORMAT_VERSION, MAGIC, MIN_AVRO_HEADER_LEN, MIN_PARTITION_LEN,
};
pub use select::{bucket_in, BlockSelection, PartitionMask, Query, SelectedBlock};
// The crate's shared row ranges, for `Query::rows` (also at their old path here).
pub use crate::select::{RowRange, RowRanges};

use crate::error::{off, Error, ErrorKind, Result};
use block::BlockWalker;
use dictionary::PartitionsAt;
use layout::Fields;

/// What the caller knows of the manifest the sidecar describes (from its
/// `ManifestFileMeta`): `fileSize` and `numAddedFiles + numDeletedFiles`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ManifestFacts {
    /// The manifest's size in bytes.
    pub length: u64,
    /// The manifest's entry count (ADD + DELETE).
    pub entries: u64,
}

/// How [`Sidecar::parse_with`] opens a sidecar. Build it with `..Default::default()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SidecarOptions {
    /// What the caller knows about the manifest; `None` trusts the sidecar's own description.
    pub facts: Option<ManifestFacts>,
}

/// A validated sidecar: borrowed bytes whose every container field, bound and payload frame
/// has been checked once. Accessors never fail; coverage iterators check delta streams as
/// they decode them.
#[derive(Clone, Copy, Debug)]
pub struct Sidecar<'a> {
    bytes: &'a [u8],
    layout: Layout,
    manifest_length: u64,
    entry_count: u64,
    header: &'a [u8],
    dictionary: &'a [u8],
    dictionary_at: u64,
    partition_count: u32,
    uniform_stride: Option<usize>,
    blocks: &'a [u8],
    blocks_at: u64,
    block_count: u32,
}

/// A sidecar whose checksum and everything before its blocks are validated, its blocks not
/// yet walked: from [`Sidecar::parse_head`]. Gives the partition dictionary (to build a
/// query) and validates the blocks with [`select_into`](Self::select_into) (selecting in the
/// same walk) or [`finish`](Self::finish).
#[derive(Clone, Debug)]
pub struct SidecarHead<'a> {
    sidecar: Sidecar<'a>,
    walker: block::BlockWalker<'a>,
    manifest_length: Option<u64>,
    entry_count: Option<u64>,
    end_at: u64,
}

impl<'a> SidecarHead<'a> {
    /// The layout.
    pub fn layout(&self) -> Layout {
        self.sidecar.layout
    }

    /// The manifest's Avro header as stored (checked: starts with the Avro magic).
    pub fn avro_header(&self) -> &'a [u8] {
        self.sidecar.header
    }

    /// Number of partition tuples in the dictionary.
    pub fn partition_count(&self) -> u32 {
        self.sidecar.partition_count
    }

    /// Number of blocks (not yet validated).
    pub fn block_count(&self) -> u32 {
        self.sidecar.block_count
    }

    /// The partition tuples in ID order (framing checked; uniqueness is checked by the walk).
    pub fn partitions(&self) -> Partitions<'a> {
        self.sidecar.partitions()
    }

    /// [`Sidecar::partition_mask`] over this dictionary.
    pub fn partition_mask<'s>(
        &self,
        scratch: &'s mut [bool],
        predicate: impl FnMut(&'a [u8]) -> bool,
    ) -> Result<PartitionMask<'s>> {
        self.sidecar.partition_mask(scratch, predicate)
    }

    /// [`Sidecar::partition_mask_vec`] over this dictionary.
    #[cfg(feature = "alloc")]
    pub fn partition_mask_vec(
        &self,
        predicate: impl FnMut(&'a [u8]) -> bool,
    ) -> alloc::vec::Vec<bool> {
        self.sidecar.partition_mask_vec(predicate)
    }
}

impl<'a> Sidecar<'a> {
    /// Opens `bytes` as a self-described sidecar: the checks of
    /// [`parse_with`](Self::parse_with) without outside knowledge of the manifest, so the
    /// fixed layout's stored length and entry count are trusted and the compact layout's are
    /// derived from the blocks (tiling end, record-count sum). When the manifest's metadata
    /// is at hand, pass it to [`parse_with`](Self::parse_with) as [`ManifestFacts`].
    ///
    /// ```
    /// use lakecore::sidecar::Sidecar;
    /// use lakecore::ErrorKind;
    /// assert_eq!(Sidecar::parse(b"AVRO").unwrap_err().kind, ErrorKind::BadMagic);
    /// ```
    pub fn parse(bytes: &'a [u8]) -> Result<Self> {
        Self::validate_inner(bytes, None)
    }

    /// Opens `bytes` as a sidecar with `options`: of the manifest `options.facts` describes,
    /// or (`None`) self-described as in [`parse`](Self::parse).
    ///
    /// Checks, in order: magic, layout (byte 4), size, checksum, version, the stored
    /// manifest length and entry count (fixed layout) against the facts, the Avro header, the
    /// partition dictionary (framing, no duplicate tuples), every block (tiling from the
    /// header's end to the manifest length, record counts summing to the entry count) and the
    /// framing of every coverage payload. Delta streams are not decoded here.
    ///
    /// The reported error follows that order: a checksum mismatch wins over any structural
    /// error. (The fixed layout's SHA-256 is computed in steps that trail the block walk, so
    /// the CPU overlaps the hash rounds with the walk; the result is the same.)
    ///
    /// Errors carry absolute file offsets. The duplicate-tuple check is a hash table of the
    /// tuples, linear: on the stack for dictionaries of up to 512 tuples (no allocation),
    /// on the heap for larger ones (feature `alloc`: 24 to 48 bytes a tuple). Without
    /// `alloc`, larger dictionaries go through a hash filter whose possible repeats are
    /// compared with the earlier tuples (quadratic as it fills).
    ///
    /// ```
    /// use lakecore::sidecar::{ManifestFacts, Sidecar, SidecarOptions};
    /// use lakecore::ErrorKind;
    /// let facts = ManifestFacts { length: 100, entries: 1 };
    /// let options = SidecarOptions { facts: Some(facts), ..Default::default() };
    /// assert_eq!(Sidecar::parse_with(b"AVRO", &options).unwrap_err().kind, ErrorKind::BadMagic);
    /// ```
    pub fn parse_with(bytes: &'a [u8], options: &SidecarOptions) -> Result<Self> {
        Self::validate_inner(bytes, options.facts)
    }

    /// The layout of `bytes` (from magic and byte 4), without validating anything else.
    ///
    /// ```
    /// use lakecore::sidecar::{Layout, Sidecar};
    /// use lakecore::ErrorKind;
    /// assert_eq!(Sidecar::detect_layout(b"PMSC\x01...")?, Layout::Compact);
    /// assert_eq!(Sidecar::detect_layout(b"PMSC\x00\x00\x00\x01")?, Layout::Fixed);
    /// assert_eq!(Sidecar::detect_layout(b"PMS").unwrap_err().kind, ErrorKind::Truncated);
    /// assert_eq!(Sidecar::detect_layout(b"AVRO\x01").unwrap_err().kind, ErrorKind::BadMagic);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn detect_layout(bytes: &[u8]) -> Result<Layout> {
        let magic = bytes
            .first_chunk::<4>()
            .ok_or(Error::new(ErrorKind::Truncated, off(bytes.len())))?;
        if *magic != MAGIC {
            return Err(Error::new(ErrorKind::BadMagic, 0));
        }
        match bytes.get(4) {
            None => Err(Error::new(ErrorKind::Truncated, off(bytes.len()))),
            Some(0) => Ok(Layout::Fixed),
            Some(1) => Ok(Layout::Compact),
            Some(_) => Err(Error::new(ErrorKind::UnsupportedVersion, 4)),
        }
    }

    /// The whole sidecar file, trailer included.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The container layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The manifest's length in bytes (stored, given, or the end of the block tiling).
    pub fn manifest_length(&self) -> u64 {
        self.manifest_length
    }

    /// The manifest's entry count (ADD + DELETE).
    pub fn entry_count(&self) -> u64 {
        self.entry_count
    }

    /// The manifest's Avro header (`[0, avro_header_len)` of the manifest), verbatim.
    pub fn avro_header(&self) -> &'a [u8] {
        self.header
    }

    /// How many distinct partition tuples the dictionary holds.
    pub fn partition_count(&self) -> u32 {
        self.partition_count
    }

    /// How many Avro blocks the manifest has.
    pub fn block_count(&self) -> u32 {
        self.block_count
    }

    /// The dictionary's tuples in ID order (exact `_PARTITION` bytes).
    pub fn partitions(&self) -> Partitions<'a> {
        Partitions::new(self.partitions_with_offsets())
    }

    fn partitions_with_offsets(&self) -> PartitionsAt<'a> {
        PartitionsAt::new(self.dictionary, self.dictionary_at, self.layout)
    }

    /// The tuple with dictionary ID `id`: O(1) when every dictionary record has the same
    /// size (the common case of fixed-width partition keys), a walk otherwise.
    pub fn partition(&self, id: u32) -> Option<&'a [u8]> {
        if id >= self.partition_count {
            return None;
        }
        let id = usize::try_from(id).ok()?;
        if let Some(stride) = self.uniform_stride {
            let start = stride.checked_mul(id)?;
            let record = self.dictionary.get(start..start.checked_add(stride)?)?;
            let mut f = Fields::with_origin(record, 0, self.layout);
            let len = f.count().ok()?;
            return f.cur.bytes_u64(len).ok();
        }
        self.partitions().nth(id)
    }

    /// An O(1) index of the dictionary for any tuple sizes: the start of every tuple is
    /// recorded in `scratch` (at least [`partition_count`](Self::partition_count) long;
    /// [`ErrorKind::LimitExceeded`] otherwise).
    ///
    /// ```
    /// use lakecore::sidecar::{ManifestFacts, Sidecar, SidecarOptions};
    /// # let hex = include_str!("../../tests/data/golden/compact-v1.hex");
    /// # let bytes: Vec<u8> = (0..hex.trim().len()).step_by(2)
    /// #     .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    /// let facts = ManifestFacts { length: 457, entries: 7 };
    /// let sidecar = Sidecar::parse_with(&bytes, &SidecarOptions { facts: Some(facts) })?;
    /// let mut scratch = [(0u32, 0u32); 16]; // caller memory: no allocation
    /// let index = sidecar.partition_index(&mut scratch)?;
    /// assert_eq!(index.len(), 2);
    /// assert_eq!(index.get(1), sidecar.partition(1));
    /// assert_eq!(index.get(2), None);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn partition_index<'s>(
        &self,
        scratch: &'s mut [(u32, u32)],
    ) -> Result<PartitionIndex<'a, 's>> {
        let n = usize::try_from(self.partition_count)
            .map_err(|_| Error::new(ErrorKind::LimitExceeded, 0))?;
        let slots = scratch
            .get_mut(..n)
            .ok_or(Error::new(ErrorKind::LimitExceeded, 0))?;
        for (slot, (at, tuple)) in slots.iter_mut().zip(self.partitions_with_offsets()) {
            let start = at.saturating_sub(self.dictionary_at);
            *slot = (
                u32::try_from(start).map_err(|_| Error::new(ErrorKind::LimitExceeded, at))?,
                u32::try_from(tuple.len()).map_err(|_| Error::new(ErrorKind::LimitExceeded, at))?,
            );
        }
        Ok(PartitionIndex::new(self.dictionary, slots))
    }

    /// The blocks in file order.
    pub fn blocks(&self) -> Blocks<'a> {
        Blocks::new(BlockWalker::new(
            Fields::with_origin(self.blocks, self.blocks_at, self.layout),
            self.block_count,
            off(self.header.len()),
            self.entry_count,
            self.partition_count,
        ))
    }

    /// The blocks a scan with `query` must read, in file order (see [`Query`]).
    pub fn select<'q>(&self, query: &'q Query<'q>) -> BlockSelection<'a, 'q> {
        BlockSelection::new(self.blocks(), query)
    }

    /// Evaluates `predicate` once per dictionary tuple into `scratch` (at least
    /// [`partition_count`](Self::partition_count) long) and returns the mask for
    /// [`Query::partitions`]. Fails with [`ErrorKind::LimitExceeded`] when `scratch` is short.
    pub fn partition_mask<'s>(
        &self,
        scratch: &'s mut [bool],
        mut predicate: impl FnMut(&'a [u8]) -> bool,
    ) -> Result<PartitionMask<'s>> {
        let n = usize::try_from(self.partition_count)
            .map_err(|_| Error::new(ErrorKind::LimitExceeded, 0))?;
        let slots = scratch
            .get_mut(..n)
            .ok_or(Error::new(ErrorKind::LimitExceeded, 0))?;
        for (slot, tuple) in slots.iter_mut().zip(self.partitions()) {
            *slot = predicate(tuple);
        }
        Ok(PartitionMask::new(slots))
    }

    /// [`partition_mask`](Self::partition_mask) into a new vector.
    #[cfg(feature = "alloc")]
    pub fn partition_mask_vec(
        &self,
        mut predicate: impl FnMut(&'a [u8]) -> bool,
    ) -> alloc::vec::Vec<bool> {
        self.partitions().map(&mut predicate).collect()
    }
}

#[cfg(test)]
mod tests {
    /// A xorshift64 generator from `state` (non-zero).
    pub(super) fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }
}
