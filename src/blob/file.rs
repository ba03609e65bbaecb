//! The validated view of a whole `.blob` file, its row iterator, selection and verify mode.

use super::index::{self, Lengths, Rules};
use super::{Payload, Row, FOOTER_LEN, FORMAT_VERSION, RECORD_MAGIC};
use crate::codec::checksum::Crc32;
use crate::error::{off, Error, ErrorKind, Location, Result};
use crate::select::{RowRange, RowRanges};

const FILE_RULES: Rules = Rules {
    min_real: super::RECORD_OVERHEAD as i64,
    placeholder: true,
};

/// What the caller knows about a file from elsewhere (e.g. Paimon's `DataFileMeta`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileFacts {
    /// `DataFileMeta.row_count`: the index must hold exactly this many rows.
    pub row_count: Option<u64>,
    /// `DataFileMeta.file_size`: the bytes must be exactly this long.
    pub file_size: Option<u64>,
}

/// How [`BlobFile::parse_with`] opens a file. Build it with `..Default::default()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlobOptions {
    /// What the caller knows about the file; the default checks nothing extra.
    pub expected: FileFacts,
}

/// A validated BLOB file over borrowed bytes.
///
/// Construction checks the footer, decodes the whole index to its exact end and checks that
/// every entry is `-1`, `-2` or `>= 16` and that the record lengths tile the data region
/// exactly. It does not read records: [`verify`](Self::verify) does (magic, trailing length,
/// CRC). Nothing allocates.
///
/// ```
/// use lakecore::blob::{BlobFile, BlobOptions, FileFacts};
/// use lakecore::ErrorKind;
/// // Golden vector D3: three placeholder rows.
/// let bytes = [0x03, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01];
/// let file = BlobFile::parse(&bytes)?;
/// assert_eq!((file.rows(), file.placeholders()), (3, 3));
/// let expected = FileFacts { row_count: Some(4), file_size: None };
/// let e = BlobFile::parse_with(&bytes, &BlobOptions { expected }).unwrap_err();
/// assert_eq!((e.kind, e.offset), (ErrorKind::Mismatch, 0));
/// # Ok::<(), lakecore::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct BlobFile<'a> {
    bytes: &'a [u8],
    index_start: usize,
    index_end: usize,
    rows: u64,
    nulls: u64,
    placeholders: u64,
}

impl<'a> BlobFile<'a> {
    /// Opens `bytes` as a whole `.blob` file: the checks of [`parse_with`](Self::parse_with)
    /// with nothing known about the file. Records are not read; [`verify`](Self::verify) is
    /// the CRC pass.
    ///
    /// ```
    /// use lakecore::blob::BlobFile;
    /// // Golden vector D3: three placeholder rows.
    /// let file = BlobFile::parse(&[0x03, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01])?;
    /// assert_eq!(file.rows(), 3);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn parse(bytes: &'a [u8]) -> Result<Self> {
        Self::parse_with(bytes, &BlobOptions::default())
    }

    /// Opens `bytes` as a whole `.blob` file and checks what `options` says is known about it.
    ///
    /// Errors (offsets are file offsets): [`ErrorKind::Mismatch`] at the file size (checked
    /// first) or at the index start (row count) when the file is not what
    /// `options.expected` says; [`ErrorKind::Truncated`] at the file size when it is shorter
    /// than the 5-byte footer; [`ErrorKind::UnsupportedVersion`] at the last byte;
    /// [`ErrorKind::InvalidLength`] at the footer when `index_len` is negative or larger than
    /// the bytes before the footer; varint errors inside the index;
    /// [`ErrorKind::ArithmeticOverflow`] when a delta overflows; [`ErrorKind::InvalidValue`]
    /// at an entry that is not `-1`, `-2` or `>= 16`; [`ErrorKind::OutOfBounds`] at the entry
    /// whose record runs past the data region; [`ErrorKind::TrailingBytes`] at the end of the
    /// last record when records do not reach the index.
    ///
    /// ```
    /// use lakecore::blob::{BlobFile, BlobOptions, FileFacts};
    /// use lakecore::ErrorKind;
    /// let bytes = [0x03, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01];
    /// let expected = FileFacts { row_count: Some(4), file_size: None };
    /// let e = BlobFile::parse_with(&bytes, &BlobOptions { expected }).unwrap_err();
    /// assert_eq!((e.kind, e.offset), (ErrorKind::Mismatch, 0));
    /// ```
    pub fn parse_with(bytes: &'a [u8], options: &BlobOptions) -> Result<Self> {
        let expected = options.expected;
        let size = bytes.len();
        if expected.file_size.is_some_and(|s| s != off(size)) {
            return Err(Error::new(ErrorKind::Mismatch, off(size)));
        }
        let Some(footer_at) = size.checked_sub(FOOTER_LEN) else {
            return Err(Error::new(ErrorKind::Truncated, off(size)));
        };
        let footer = bytes
            .get(footer_at..)
            .and_then(|f| <&[u8; FOOTER_LEN]>::try_from(f).ok())
            .ok_or(Error::new(ErrorKind::Truncated, off(size)))?;
        let [l0, l1, l2, l3, version] = *footer;
        if version != FORMAT_VERSION {
            return Err(Error::new(ErrorKind::UnsupportedVersion, off(size - 1)));
        }
        let index_len = i32::from_le_bytes([l0, l1, l2, l3]);
        let index_start = usize::try_from(index_len)
            .ok()
            .and_then(|n| footer_at.checked_sub(n))
            .ok_or(Error::new(ErrorKind::InvalidLength, off(footer_at)))?;
        let index = bytes.get(index_start..footer_at).unwrap_or_default();
        let origin = off(index_start);
        let rows = crate::codec::varint::count_terminators(index);
        if expected.row_count.is_some_and(|r| r != rows) {
            return Err(Error::new(ErrorKind::Mismatch, origin));
        }
        let scan = index::scan(index, origin, rows, origin, FILE_RULES)?;
        if scan.sum != origin {
            return Err(Error::new(ErrorKind::TrailingBytes, scan.sum));
        }
        Ok(BlobFile {
            bytes,
            index_start,
            index_end: footer_at,
            rows,
            nulls: scan.nulls,
            placeholders: scan.placeholders,
        })
    }

    /// The whole file.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Number of rows (index entries).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Number of NULL rows.
    pub fn nulls(&self) -> u64 {
        self.nulls
    }

    /// Number of PLACEHOLDER rows.
    pub fn placeholders(&self) -> u64 {
        self.placeholders
    }

    /// Number of value rows (records).
    pub fn values(&self) -> u64 {
        self.rows - self.nulls - self.placeholders
    }

    /// Length of the data region (all records); the index starts here.
    pub fn data_len(&self) -> u64 {
        off(self.index_start)
    }

    /// The index bytes.
    pub fn index_bytes(&self) -> &'a [u8] {
        self.bytes
            .get(self.index_start..self.index_end)
            .unwrap_or_default()
    }

    /// Every row in order.
    pub fn iter(&self) -> Rows<'a> {
        Rows {
            cursor: RowCursor::new(self),
        }
    }

    /// The rows of `ranges` (file-local positions, inclusive, sorted, non-overlapping) with
    /// their positions. Skipped rows cost one index entry each; their payloads are never
    /// touched.
    ///
    /// Errors name the range by its position in `ranges` ([`Location::Range`]): the checks of
    /// [`RowRanges::try_new`] ([`ErrorKind::InvalidValue`] for `first > last`,
    /// [`ErrorKind::NotSorted`] for unsorted or overlapping ranges), then
    /// [`ErrorKind::OutOfBounds`] for a range reaching past the last row.
    ///
    /// ```
    /// use lakecore::blob::{BlobFile, Row, RowRange};
    /// let bytes = [0x03, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01]; // D3
    /// let file = BlobFile::parse(&bytes)?;
    /// let picked: Vec<(u64, Row)> = file.select(&[RowRange::single(2)])?.collect();
    /// assert_eq!(picked, [(2, Row::Placeholder)]);
    /// assert!(file.select(&[RowRange::new(1, 3)]).is_err());
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn select<'r>(&self, ranges: &'r [RowRange]) -> Result<RowSelection<'a, 'r>> {
        RowRanges::try_new(ranges)?;
        if let Some((i, _)) = ranges.iter().enumerate().find(|(_, r)| r.last >= self.rows) {
            return Err(Error::at_item(
                ErrorKind::OutOfBounds,
                Location::Range,
                off(i),
            ));
        }
        Ok(RowSelection {
            cursor: RowCursor::new(self),
            ranges,
        })
    }

    /// Verify mode: checks every record's magic ([`ErrorKind::BadMagic`] at the record),
    /// trailing `bin_length` against the index ([`ErrorKind::Mismatch`] at the field) and
    /// CRC-32 ([`ErrorKind::ChecksumMismatch`] at the CRC when it matches neither coverage),
    /// and reports which CRC coverage the records use.
    ///
    /// ```
    /// use lakecore::blob::{BlobFile, CrcCoverage};
    /// // Golden vector G3: one zero-length value, CRC over magic, payload and length.
    /// let bytes = [0xcf, 0x11, 0x4e, 0x58, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x53, 0x7f, 0xdf, 0x03,
    ///              0x20, 0x01, 0, 0, 0, 0x01];
    /// let report = BlobFile::parse(&bytes)?.verify()?;
    /// assert_eq!(report.coverage(), CrcCoverage::Full);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn verify(&self) -> Result<VerifyReport> {
        let mut report = VerifyReport::default();
        let mut cursor = RowCursor::new(self);
        while let Some((len, at)) = cursor.next_entry() {
            if len < 0 {
                continue;
            }
            let record =
                record_bytes(self.bytes, at, len).ok_or(Error::new(ErrorKind::OutOfBounds, at))?;
            if let Some(coverage) = check_record(record, at, len)? {
                match coverage {
                    CrcCoverage::Full => report.full += 1,
                    _ => report.payload_only += 1,
                }
            }
        }
        Ok(report)
    }
}

impl<'a> IntoIterator for &BlobFile<'a> {
    type Item = Row<'a>;
    type IntoIter = Rows<'a>;
    fn into_iter(self) -> Rows<'a> {
        self.iter()
    }
}

fn record_bytes(bytes: &[u8], at: u64, len: i64) -> Option<&[u8]> {
    let start = usize::try_from(at).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    bytes.get(start..end)
}

/// Checks one record (`magic | payload | bin_length | crc`) at absolute `at`.
fn check_record(record: &[u8], at: u64, len: i64) -> Result<Option<CrcCoverage>> {
    let n = record.len();
    let (Some(magic), Some(body), Some(len_field), Some(crc_field)) = (
        record.get(..4),
        record.get(..n.saturating_sub(12)),
        record.get(n.saturating_sub(12)..n.saturating_sub(4)),
        record.get(n.saturating_sub(4)..),
    ) else {
        return Err(Error::new(ErrorKind::Truncated, at));
    };
    if magic != RECORD_MAGIC {
        return Err(Error::new(ErrorKind::BadMagic, at));
    }
    let len_at = at.saturating_add(off(n.saturating_sub(12)));
    let stored_len = i64::from_le_bytes(
        len_field
            .try_into()
            .map_err(|_| Error::new(ErrorKind::Truncated, len_at))?,
    );
    if stored_len != len {
        return Err(Error::new(ErrorKind::Mismatch, len_at));
    }
    let crc_at = len_at.saturating_add(8);
    let stored_crc = u32::from_le_bytes(
        crc_field
            .try_into()
            .map_err(|_| Error::new(ErrorKind::Truncated, crc_at))?,
    );
    let mut hasher = Crc32::new();
    hasher.update(body);
    let payload_only = hasher.clone().finalize();
    hasher.update(len_field);
    if hasher.finalize() == stored_crc {
        Ok(Some(CrcCoverage::Full))
    } else if payload_only == stored_crc {
        Ok(Some(CrcCoverage::PayloadOnly))
    } else {
        Err(Error::new(ErrorKind::ChecksumMismatch, crc_at))
    }
}

/// Which bytes a file's record CRCs cover.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CrcCoverage {
    /// `magic ‖ payload ‖ bin_length` (Java, C++, paimon-rust).
    Full,
    /// `magic ‖ payload` (pypaimon).
    PayloadOnly,
    /// Some records one way, some the other.
    Mixed,
    /// The file has no records, so nothing was checked.
    NoRecords,
}

impl CrcCoverage {
    /// A short name: `full`, `payload-only`, `mixed`, `unchecked` (no records).
    pub const fn name(self) -> &'static str {
        match self {
            CrcCoverage::Full => "full",
            CrcCoverage::PayloadOnly => "payload-only",
            CrcCoverage::Mixed => "mixed",
            CrcCoverage::NoRecords => "unchecked",
        }
    }
}

/// What [`BlobFile::verify`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Records whose CRC covers `magic ‖ payload ‖ bin_length`.
    pub full: u64,
    /// Records whose CRC covers `magic ‖ payload` only.
    pub payload_only: u64,
}

impl VerifyReport {
    /// The file's coverage.
    pub fn coverage(&self) -> CrcCoverage {
        match (self.full, self.payload_only) {
            (0, 0) => CrcCoverage::NoRecords,
            (_, 0) => CrcCoverage::Full,
            (0, _) => CrcCoverage::PayloadOnly,
            _ => CrcCoverage::Mixed,
        }
    }
}

/// A forward cursor over a validated file's rows: index entries and record offsets.
#[derive(Clone, Debug)]
pub(crate) struct RowCursor<'a> {
    bytes: &'a [u8],
    lengths: Lengths<'a>,
    /// Position of the next row.
    row: u64,
    rows: u64,
    /// Offset of the next record.
    record: u64,
}

impl<'a> RowCursor<'a> {
    pub(crate) fn new(file: &BlobFile<'a>) -> Self {
        RowCursor {
            bytes: file.bytes,
            lengths: Lengths::new(file.index_bytes(), file.rows),
            row: 0,
            rows: file.rows,
            record: 0,
        }
    }

    /// Position of the next row.
    #[inline]
    pub(crate) fn position(&self) -> u64 {
        self.row
    }

    /// The next row's index entry and record offset.
    #[inline]
    pub(crate) fn next_entry(&mut self) -> Option<(i64, u64)> {
        if self.row >= self.rows {
            return None;
        }
        let len = self.lengths.next_len()?;
        let at = self.record;
        self.row += 1;
        // Branch-free: NULL and placeholder rows (negative entries) add nothing.
        self.record = self.record.saturating_add(len.max(0).unsigned_abs());
        Some((len, at))
    }

    /// The next row.
    #[inline]
    pub(crate) fn next_row(&mut self) -> Option<Row<'a>> {
        let (len, at) = self.next_entry()?;
        Some(self.row_of(len, at))
    }

    /// Merges the next `scratch.len()` rows into a block of merge slots (see
    /// [`merge_layer`](crate::codec::slots::merge_layer)): their entries are decoded into
    /// `scratch`, and every unresolved slot takes its row's entry, record offset and `tag`.
    /// Returns whether a slot is still unresolved, or `None` (rows consumed) when fewer
    /// rows are left.
    #[inline]
    pub(crate) fn merge_next(
        &mut self,
        scratch: &mut [i64],
        tag: u64,
        slot_entries: &mut [i64],
        slot_offsets: &mut [u64],
        slot_tags: &mut [u64],
    ) -> Option<bool> {
        let n = self.lengths.take_into(scratch);
        self.row += off(n);
        // A validated index's real lengths sum to at most the file size: nothing wraps.
        let step = crate::codec::slots::merge_layer(
            scratch.get(..n)?,
            self.record,
            tag,
            slot_entries,
            slot_offsets,
            slot_tags,
        );
        self.record = step.record;
        (n == scratch.len()).then_some(step.unresolved)
    }

    /// Skips `n` rows without touching their records; returns how many were skipped.
    #[inline]
    pub(crate) fn skip(&mut self, n: u64) -> u64 {
        let mut done = 0;
        while done < n && self.next_entry().is_some() {
            done += 1;
        }
        done
    }

    /// The row an entry stands for.
    #[inline]
    pub(crate) fn row_of(&self, len: i64, at: u64) -> Row<'a> {
        row_at(self.bytes, len, at)
    }
}

/// The row of index entry `len` whose record starts at `at` in a validated file's `bytes`.
#[inline]
pub(crate) fn row_at(bytes: &[u8], len: i64, at: u64) -> Row<'_> {
    match len {
        -1 => Row::Null,
        -2 => Row::Placeholder,
        _ => {
            let payload = at.saturating_add(4);
            let slice = usize::try_from(payload)
                .ok()
                .zip(usize::try_from(len.unsigned_abs().saturating_sub(16)).ok())
                .and_then(|(s, n)| bytes.get(s..s.checked_add(n)?))
                .unwrap_or_default();
            Row::Value(Payload {
                bytes: slice,
                offset: payload,
            })
        }
    }
}

/// Every row of a [`BlobFile`], in order; allocation-free.
#[derive(Clone, Debug)]
pub struct Rows<'a> {
    cursor: RowCursor<'a>,
}

impl<'a> Rows<'a> {
    /// Position of the next row.
    pub fn position(&self) -> u64 {
        self.cursor.position()
    }
}

impl<'a> Iterator for Rows<'a> {
    type Item = Row<'a>;

    #[inline]
    fn next(&mut self) -> Option<Row<'a>> {
        self.cursor.next_row()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.cursor.rows - self.cursor.row).unwrap_or(usize::MAX);
        (n, Some(n))
    }

    fn nth(&mut self, n: usize) -> Option<Row<'a>> {
        self.cursor.skip(off(n));
        self.cursor.next_row()
    }
}

impl core::iter::FusedIterator for Rows<'_> {}

/// The selected rows of a [`BlobFile`] with their positions; see [`BlobFile::select`].
#[derive(Clone, Debug)]
pub struct RowSelection<'a, 'r> {
    cursor: RowCursor<'a>,
    ranges: &'r [RowRange],
}

impl<'a> Iterator for RowSelection<'a, '_> {
    type Item = (u64, Row<'a>);

    #[inline]
    fn next(&mut self) -> Option<(u64, Row<'a>)> {
        loop {
            let range = self.ranges.first()?;
            let mut pos = self.cursor.position();
            if pos > range.last {
                self.ranges = self.ranges.get(1..).unwrap_or_default();
                continue;
            }
            if pos < range.first {
                let want = range.first - pos;
                if self.cursor.skip(want) < want {
                    self.ranges = &[];
                    return None;
                }
                pos = range.first;
            }
            let Some(row) = self.cursor.next_row() else {
                self.ranges = &[];
                return None;
            };
            return Some((pos, row));
        }
    }
}

impl core::iter::FusedIterator for RowSelection<'_, '_> {}
