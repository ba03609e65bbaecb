//! The sidecar builder (feature `alloc`): begin a sidecar with the manifest's Avro header,
//! add each block's entries, end each block, then serialise in either layout.

use super::dictionary::check_partition_tuple;
use super::layout::MAX_LONG;
use super::{Layout, ManifestFacts, Sidecar, SidecarOptions, MAGIC};
use crate::codec::checksum;
use crate::codec::varint::{push_deltas, push_u64, push_zigzag_deltas};
use crate::error::{off, Error, ErrorKind, Location, Result};
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

/// Builder switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildSettings {
    /// Container layout (fixed by default).
    pub layout: Layout,
    /// Generate row-ID coverage.
    pub row_ids: bool,
    /// Generate bucket coverage.
    pub buckets: bool,
}

impl Default for BuildSettings {
    fn default() -> Self {
        BuildSettings {
            layout: Layout::Fixed,
            row_ids: true,
            buckets: true,
        }
    }
}

/// The fields of one manifest entry the sidecar uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryCoverage<'e> {
    /// `_PARTITION` bytes (arity prefix + BinaryRow); `None` when unavailable.
    pub partition: Option<&'e [u8]>,
    /// `_BUCKET`.
    pub bucket: Option<i32>,
    /// `_TOTAL_BUCKETS`.
    pub total_buckets: Option<i32>,
    /// `_FILE._FIRST_ROW_ID`.
    pub first_row_id: Option<i64>,
    /// `_FILE._ROW_COUNT`.
    pub row_count: i64,
}

#[derive(Clone, Debug, Default)]
struct BlockAcc {
    offset: u64,
    length: u64,
    records: u64,
    partitions: Option<Vec<u32>>,
    rows: Option<Vec<(u64, u64)>>,
    buckets: Option<Vec<(i32, i32)>>,
}

/// Builds a sidecar block by block.
///
/// ```
/// use lakecore::sidecar::{
///     BuildSettings, EntryCoverage, Layout, ManifestFacts, Sidecar, SidecarBuilder,
///     SidecarOptions,
/// };
/// let header = b"Obj\x01\x00................................";
/// let part = [0u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
/// let mut b = SidecarBuilder::new(BuildSettings::default(), header);
/// b.begin_block(header.len() as u64, 100)?;
/// b.add(EntryCoverage { partition: Some(&part), bucket: Some(0), total_buckets: Some(2),
///                       first_row_id: Some(0), row_count: 10 })?;
/// b.end_block()?;
/// let bytes = b.finish(header.len() as u64 + 100)?;
/// let facts = ManifestFacts { length: 137, entries: 1 };
/// let s = Sidecar::parse_with(&bytes, &SidecarOptions { facts: Some(facts) })?;
/// assert_eq!(s.layout(), Layout::Fixed);
/// # Ok::<(), lakecore::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct SidecarBuilder {
    settings: BuildSettings,
    header: Vec<u8>,
    dictionary: Vec<Vec<u8>>,
    ids: BTreeMap<Vec<u8>, u32>,
    blocks: Vec<BlockAcc>,
    current: Option<BlockAcc>,
    entries: u64,
}

impl SidecarBuilder {
    /// Begins a sidecar for a manifest whose Avro header is `avro_header`.
    ///
    /// ```
    /// use lakecore::sidecar::{
    ///     BuildSettings, EntryCoverage, ManifestFacts, Query, RowRange, RowRanges, Sidecar,
    ///     SidecarBuilder, SidecarOptions,
    /// };
    /// let mut header = b"Obj\x01".to_vec();
    /// header.resize(21, 0); // the manifest's Avro header
    /// let unpartitioned = [0u8; 12];
    /// let mut b = SidecarBuilder::new(BuildSettings::default(), &header);
    /// // Two blocks: [21, 121) holds rows 0..=19, [121, 221) rows 100..=119.
    /// for (offset, first_row) in [(21, 0), (121, 100)] {
    ///     b.begin_block(offset, 100)?;
    ///     for first in [first_row, first_row + 10] {
    ///         b.add(EntryCoverage {
    ///             partition: Some(&unpartitioned),
    ///             bucket: Some(0),
    ///             total_buckets: Some(1),
    ///             first_row_id: Some(first),
    ///             row_count: 10,
    ///         })?;
    ///     }
    ///     b.end_block()?;
    /// }
    /// let bytes = b.finish(221)?;
    /// let facts = ManifestFacts { length: 221, entries: 4 };
    /// let sidecar = Sidecar::parse_with(&bytes, &SidecarOptions { facts: Some(facts) })?;
    /// let mut rows = [RowRange::single(105)];
    /// let query = Query::new().rows(RowRanges::normalize(&mut rows));
    /// let picked: Vec<u32> = sidecar.select(&query).map(|b| b.map(|b| b.id)).collect::<Result<_, _>>()?;
    /// assert_eq!(picked, [1]);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn new(settings: BuildSettings, avro_header: &[u8]) -> Self {
        SidecarBuilder {
            settings,
            header: avro_header.to_vec(),
            dictionary: Vec::new(),
            ids: BTreeMap::new(),
            blocks: Vec::new(),
            current: None,
            entries: 0,
        }
    }

    /// The settings in use.
    pub fn settings(&self) -> BuildSettings {
        self.settings
    }

    /// Starts the block at manifest `offset` of `length` bytes; [`ErrorKind::InvalidValue`]
    /// at byte `offset` (of the manifest) while another block is open.
    pub fn begin_block(&mut self, offset: u64, length: u64) -> Result<()> {
        if self.current.is_some() {
            return Err(Error::new(ErrorKind::InvalidValue, offset));
        }
        self.current = Some(BlockAcc {
            offset,
            length,
            records: 0,
            partitions: Some(Vec::new()),
            rows: Some(Vec::new()),
            buckets: Some(Vec::new()),
        });
        Ok(())
    }

    /// Adds one entry (ADD or DELETE) to the current block. Errors name the entry by its
    /// ordinal in the manifest ([`Location::Entry`]): [`ErrorKind::InvalidValue`] when no
    /// block is open, the partition tuple's framing error, [`ErrorKind::LimitExceeded`] when
    /// the dictionary is full.
    pub fn add(&mut self, entry: EntryCoverage<'_>) -> Result<()> {
        let ordinal = self.entries;
        let at_entry = |kind| Error::at_item(kind, Location::Entry, ordinal);
        let block = self
            .current
            .as_mut()
            .ok_or(at_entry(ErrorKind::InvalidValue))?;
        match entry.partition {
            // Like Apache Paimon's builder: once a block's partition coverage is unavailable,
            // its later tuples are not added to the dictionary.
            Some(_) if block.partitions.is_none() => {}
            Some(tuple) => {
                check_partition_tuple(tuple, 0).map_err(|e| at_entry(e.kind))?;
                let next = u32::try_from(self.dictionary.len())
                    .map_err(|_| at_entry(ErrorKind::LimitExceeded))?;
                let id = *self.ids.entry(tuple.to_vec()).or_insert_with(|| {
                    self.dictionary.push(tuple.to_vec());
                    next
                });
                if let Some(p) = block.partitions.as_mut() {
                    p.push(id);
                }
            }
            None => block.partitions = None,
        }
        let rows = match (entry.first_row_id, entry.row_count) {
            (Some(first), count) if first >= 0 && count > 0 => {
                let first = first.unsigned_abs();
                first
                    .checked_add(count.unsigned_abs() - 1)
                    .filter(|&last| last <= MAX_LONG)
                    .map(|last| (first, last))
            }
            _ => None,
        };
        match (rows, block.rows.as_mut()) {
            (Some(r), Some(v)) => v.push(r),
            (None, _) => block.rows = None,
            _ => {}
        }
        match (entry.bucket, entry.total_buckets, block.buckets.as_mut()) {
            (Some(b), Some(t), Some(v)) if b >= 0 && t > b => v.push((b, t)),
            (Some(b), Some(t), None) if b >= 0 && t > b => {}
            _ => block.buckets = None,
        }
        block.records += 1;
        self.entries += 1;
        Ok(())
    }

    /// Ends the current block (it must have at least one entry): [`ErrorKind::InvalidValue`]
    /// at the next entry's ordinal when no block is open, [`ErrorKind::InvalidLength`] at the
    /// empty block's manifest offset (a byte).
    pub fn end_block(&mut self) -> Result<()> {
        let block = self.current.take().ok_or(Error::at_item(
            ErrorKind::InvalidValue,
            Location::Entry,
            self.entries,
        ))?;
        if block.records == 0 {
            return Err(Error::new(ErrorKind::InvalidLength, block.offset));
        }
        self.blocks.push(block);
        Ok(())
    }

    /// Serialises like [`finish`](Self::finish), also checking the caller's entry count
    /// (`numAddedFiles + numDeletedFiles`) against the entries added:
    /// [`ErrorKind::Mismatch`] otherwise, at the first entry ordinal the two disagree on
    /// (the smaller count).
    pub fn serialize(self, manifest_length: u64, entry_count: u64) -> Result<Vec<u8>> {
        if entry_count != self.entries {
            let first_disputed = entry_count.min(self.entries);
            return Err(Error::at_item(
                ErrorKind::Mismatch,
                Location::Entry,
                first_disputed,
            ));
        }
        self.finish(manifest_length)
    }

    /// Serialises the sidecar of a manifest of `manifest_length` bytes. The result is
    /// validated before it is returned. (Whether to build one at all, Paimon's write switch,
    /// is the caller's decision.) A block still open is [`ErrorKind::InvalidValue`] at the
    /// next entry's ordinal; a count or value too large for the layout is refused
    /// ([`ErrorKind::LimitExceeded`], [`ErrorKind::OutOfBounds`]).
    pub fn finish(self, manifest_length: u64) -> Result<Vec<u8>> {
        if self.current.is_some() {
            return Err(Error::at_item(
                ErrorKind::InvalidValue,
                Location::Entry,
                self.entries,
            ));
        }
        let mut w = Writer {
            out: Vec::new(),
            layout: self.settings.layout,
        };
        w.out.extend_from_slice(&MAGIC);
        match w.layout {
            Layout::Fixed => {
                w.out.extend_from_slice(&1u32.to_be_bytes());
                w.long(manifest_length)?;
                w.long(self.entries)?;
            }
            Layout::Compact => push_u64(&mut w.out, 1),
        }
        w.count(off(self.header.len()))?;
        w.out.extend_from_slice(&self.header);
        w.count(off(self.dictionary.len()))?;
        for tuple in &self.dictionary {
            w.count(off(tuple.len()))?;
            w.out.extend_from_slice(tuple);
        }
        w.count(off(self.blocks.len()))?;
        let mut payload = Vec::new();
        for block in &self.blocks {
            w.long(block.offset)?;
            w.long(block.length)?;
            w.long(block.records)?;
            // Partition coverage (always generated).
            payload.clear();
            let ids = block.partitions.as_ref().map(|ids| {
                let mut ids = ids.clone();
                ids.sort_unstable();
                ids.dedup();
                ids
            });
            match ids {
                Some(ids) => {
                    w.count_into(&mut payload, off(ids.len()))?;
                    let ids: Vec<u64> = ids.into_iter().map(u64::from).collect();
                    push_deltas(&mut payload, 0, &ids)?;
                    w.frame(&payload)?;
                }
                None => w.out.push(0),
            }
            // Row-ID coverage.
            payload.clear();
            match block.rows.as_ref().filter(|_| self.settings.row_ids) {
                Some(rows) => {
                    let merged = merge_intervals(rows);
                    w.rows_payload(&mut payload, &merged)?;
                    w.frame(&payload)?;
                }
                None => w.out.push(0),
            }
            // Bucket coverage.
            payload.clear();
            match block.buckets.as_ref().filter(|_| self.settings.buckets) {
                Some(pairs) => {
                    let mut pairs = pairs.clone();
                    pairs.sort_unstable();
                    pairs.dedup();
                    w.buckets_payload(&mut payload, &pairs)?;
                    w.frame(&payload)?;
                }
                None => w.out.push(0),
            }
        }
        match w.layout {
            Layout::Fixed => {
                let sum = checksum::sha256(&w.out);
                w.out.extend_from_slice(&sum);
            }
            Layout::Compact => {
                let sum = checksum::crc32(&w.out);
                w.out.extend_from_slice(&sum.to_be_bytes());
            }
        }
        let facts = ManifestFacts {
            length: manifest_length,
            entries: self.entries,
        };
        Sidecar::parse_with(&w.out, &SidecarOptions { facts: Some(facts) })?;
        Ok(w.out)
    }
}

/// Sorts and merges overlapping or adjacent inclusive intervals.
fn merge_intervals(rows: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut sorted = rows.to_vec();
    sorted.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(sorted.len());
    for (a, b) in sorted {
        match merged.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

struct Writer {
    out: Vec<u8>,
    layout: Layout,
}

impl Writer {
    fn count_into(&self, out: &mut Vec<u8>, n: u64) -> Result<()> {
        let v = u32::try_from(n)
            .ok()
            .filter(|&v| v <= i32::MAX as u32)
            .ok_or(Error::new(ErrorKind::LimitExceeded, off(out.len())))?;
        match self.layout {
            Layout::Fixed => out.extend_from_slice(&v.to_be_bytes()),
            Layout::Compact => push_u64(out, n),
        }
        Ok(())
    }

    fn count(&mut self, n: u64) -> Result<()> {
        let mut out = core::mem::take(&mut self.out);
        let r = self.count_into(&mut out, n);
        self.out = out;
        r
    }

    fn long(&mut self, n: u64) -> Result<()> {
        if n > MAX_LONG {
            return Err(Error::new(ErrorKind::OutOfBounds, off(self.out.len())));
        }
        match self.layout {
            Layout::Fixed => self.out.extend_from_slice(&n.to_be_bytes()),
            Layout::Compact => push_u64(&mut self.out, n),
        }
        Ok(())
    }

    fn frame(&mut self, payload: &[u8]) -> Result<()> {
        self.out.push(1);
        self.count(off(payload.len()))?;
        self.out.extend_from_slice(payload);
        Ok(())
    }

    fn rows_payload(&self, out: &mut Vec<u8>, merged: &[(u64, u64)]) -> Result<()> {
        let (Some(&(min, _)), Some(&(_, max))) = (merged.first(), merged.last()) else {
            return Err(Error::at_item(ErrorKind::InvalidLength, Location::Whole, 0));
        };
        let mut interior = Vec::with_capacity(merged.len().saturating_sub(1) * 2);
        for pair in merged.windows(2) {
            if let [(_, end), (start, _)] = pair {
                interior.push(*end);
                interior.push(*start);
            }
        }
        match self.layout {
            Layout::Fixed => {
                self.count_into(out, off(merged.len()))?;
                out.extend_from_slice(&min.to_be_bytes());
                out.extend_from_slice(&(max - min).to_be_bytes());
            }
            Layout::Compact => {
                out.extend_from_slice(&min.to_be_bytes());
                out.extend_from_slice(&max.to_be_bytes());
                self.count_into(out, off(interior.len()))?;
            }
        }
        push_deltas(out, min, &interior)
    }

    fn buckets_payload(&self, out: &mut Vec<u8>, pairs: &[(i32, i32)]) -> Result<()> {
        self.count_into(out, off(pairs.len()))?;
        match self.layout {
            Layout::Fixed => {
                let packed: Vec<u64> = pairs
                    .iter()
                    .map(|&(b, t)| {
                        (u64::from(b.unsigned_abs()) << 32) | u64::from(t.unsigned_abs())
                    })
                    .collect();
                push_deltas(out, 0, &packed)
            }
            Layout::Compact => {
                let buckets: Vec<u64> = pairs
                    .iter()
                    .map(|&(b, _)| u64::from(b.unsigned_abs()))
                    .collect();
                push_deltas(out, 0, &buckets)?;
                self.count_into(out, off(pairs.len()))?;
                let totals: Vec<i64> = pairs.iter().map(|&(_, t)| i64::from(t)).collect();
                push_zigzag_deltas(out, 0, &totals)
            }
        }
    }
}
