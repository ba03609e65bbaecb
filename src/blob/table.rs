//! The offsets table (`alloc`): O(1) random access to a validated file's rows.

use super::file::{BlobFile, RowCursor};
use super::Row;
use crate::error::{Error, ErrorKind, Result};
use alloc::vec::Vec;

/// Every row's index entry and record offset, decoded once (16 bytes per row).
///
/// ```
/// use lakecore::blob::{BlobFile, Row};
/// let bytes = [0x01, 0x01, 0x00, 0x00, 0x00, 0x01]; // D2: one NULL row
/// let file = BlobFile::parse(&bytes)?;
/// let table = file.offsets_table()?;
/// assert_eq!(table.get(0), Some(Row::Null));
/// assert_eq!(table.get(1), None);
/// # Ok::<(), lakecore::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OffsetsTable<'a> {
    cursor: RowCursor<'a>,
    entries: Vec<(i64, u64)>,
}

impl<'a> BlobFile<'a> {
    /// Builds the [`OffsetsTable`]; [`ErrorKind::LimitExceeded`] if its memory cannot be
    /// reserved (the row count is bounded by the index size, so it never exceeds the input).
    ///
    /// ```
    /// use lakecore::blob::BlobFile;
    /// let bytes = [0x03, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01]; // D3: three placeholders
    /// let table = BlobFile::parse(&bytes)?.offsets_table()?;
    /// assert_eq!(table.len(), 3);
    /// assert_eq!(table.entry(2), Some((-2, 0))); // (bin_length, record offset)
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn offsets_table(&self) -> Result<OffsetsTable<'a>> {
        let rows = usize::try_from(self.rows())
            .map_err(|_| Error::new(ErrorKind::LimitExceeded, self.data_len()))?;
        let mut entries = Vec::new();
        entries
            .try_reserve_exact(rows)
            .map_err(|_| Error::new(ErrorKind::LimitExceeded, self.data_len()))?;
        let mut cursor = RowCursor::new(self);
        let start = cursor.clone();
        while let Some(entry) = cursor.next_entry() {
            entries.push(entry);
        }
        Ok(OffsetsTable {
            cursor: start,
            entries,
        })
    }
}

impl<'a> OffsetsTable<'a> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the file has no rows.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Row `i`, or `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<Row<'a>> {
        let &(len, at) = self.entries.get(i)?;
        Some(self.cursor.row_of(len, at))
    }

    /// Row `i`'s index entry (`-1`, `-2`, or the record length) and record offset.
    pub fn entry(&self, i: usize) -> Option<(i64, u64)> {
        self.entries.get(i).copied()
    }
}
