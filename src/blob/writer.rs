//! The BLOB file writer (`alloc`): records streamed to a sink, index kept in memory.

use super::{
    encode_array, encode_map, FORMAT_VERSION, NULL_LENGTH, PLACEHOLDER_LENGTH, RECORD_MAGIC,
    RECORD_OVERHEAD,
};
use crate::codec::checksum::Crc32;
use crate::codec::varint;
use crate::error::{Error, ErrorKind, Location, Result};
use alloc::vec::Vec;
use core::fmt;

/// Where a [`BlobWriter`] puts its bytes.
pub trait BlobSink {
    /// The sink's own failure (`Infallible` for a `Vec`).
    type Error;
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]) -> Result<(), Self::Error>;
}

impl BlobSink for Vec<u8> {
    type Error = core::convert::Infallible;
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        self.extend_from_slice(bytes);
        Ok(())
    }
}

/// A sink over any [`std::io::Write`] (wrap it in a `BufWriter` for small records).
#[cfg(feature = "std")]
#[derive(Debug)]
pub struct IoSink<W>(pub W);

#[cfg(feature = "std")]
impl<W: std::io::Write> BlobSink for IoSink<W> {
    type Error = std::io::Error;
    fn put(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        self.0.write_all(bytes)
    }
}

/// A writer failure: the values cannot be stored, or the sink failed.
#[derive(Debug, PartialEq, Eq)]
pub enum WriteError<E> {
    /// The values break a format limit: at the row being written ([`Location::Row`]), or
    /// (the index too long) at the byte where the index would start.
    Invalid(Error),
    /// The sink failed.
    Sink(E),
}

impl<E: fmt::Display> fmt::Display for WriteError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Invalid(e) => write!(f, "invalid blob data: {e}"),
            WriteError::Sink(e) => write!(f, "blob sink: {e}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for WriteError<E> {}

impl<E> From<Error> for WriteError<E> {
    fn from(e: Error) -> Self {
        WriteError::Invalid(e)
    }
}

/// Which bytes the writer's record CRCs cover.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CrcMode {
    /// `magic ‖ payload ‖ bin_length`, as Java, C++ and paimon-rust write.
    #[default]
    Full,
    /// `magic ‖ payload`, as pypaimon writes.
    PayloadOnly,
}

/// Writes a `.blob` file: one call per row (value, null or placeholder), then
/// [`finish`](Self::finish). Payloads go straight to the sink; only the index is buffered.
///
/// A value is always stored verbatim, whatever its bytes: placeholders come only from
/// [`put_placeholder`](Self::put_placeholder). After a [`WriteError::Sink`] the sink may
/// hold part of a record: discard the writer and its output.
///
/// ```
/// use lakecore::blob::{BlobFile, BlobWriter, Row};
/// let mut w = BlobWriter::new(Vec::new());
/// w.put_value(b"inline")?;
/// w.put_null()?;
/// w.put_placeholder()?;
/// assert_eq!(w.position(), 22); // bytes of records so far
/// let bytes = w.finish()?;
/// let file = BlobFile::parse(&bytes)?;
/// assert_eq!(file.iter().nth(2), Some(Row::Placeholder));
/// # Ok::<(), lakecore::blob::WriteError<core::convert::Infallible>>(())
/// ```
#[derive(Debug)]
pub struct BlobWriter<S: BlobSink> {
    sink: S,
    crc: CrcMode,
    index: Vec<u8>,
    prev: i64,
    rows: u64,
    data_len: u64,
    scratch: Vec<u8>,
}

impl<S: BlobSink> BlobWriter<S> {
    /// A writer into `sink` with full CRC coverage.
    ///
    /// ```
    /// use lakecore::blob::{BlobFile, BlobWriter, Row};
    /// let mut w = BlobWriter::new(Vec::new());
    /// w.put_value(b"inline")?;
    /// w.put_null()?;
    /// w.put_placeholder()?;
    /// let bytes = w.finish()?;
    /// // Golden vector G2: record, then index 22, -1, -2 and the footer.
    /// assert_eq!(bytes, [
    ///     0xcf, 0x11, 0x4e, 0x58, b'i', b'n', b'l', b'i', b'n', b'e', 0x16, 0, 0, 0, 0, 0, 0, 0,
    ///     0x29, 0x60, 0xc8, 0xe9, 0x2c, 0x2d, 0x01, 0x03, 0, 0, 0, 0x01,
    /// ]);
    /// let rows: Vec<Row> = BlobFile::parse(&bytes)?.iter().collect();
    /// assert_eq!(rows[1], Row::Null);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(sink: S) -> Self {
        Self::with_crc(sink, CrcMode::Full)
    }

    /// A writer into `sink` with the given CRC coverage.
    pub fn with_crc(sink: S, crc: CrcMode) -> Self {
        BlobWriter {
            sink,
            crc,
            index: Vec::new(),
            prev: 0,
            rows: 0,
            data_len: 0,
            scratch: Vec::new(),
        }
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Bytes of records written so far (the offset the next record will start at).
    pub fn position(&self) -> u64 {
        self.data_len
    }

    /// The file size if it were finished now (records + index + footer), for rolling.
    pub fn projected_size(&self) -> u64 {
        self.data_len
            .saturating_add(self.index.len() as u64)
            .saturating_add(super::FOOTER_LEN as u64)
    }

    fn push_entry(&mut self, len: i64) -> Result<()> {
        let delta = len.checked_sub(self.prev).ok_or(Error::at_item(
            ErrorKind::ArithmeticOverflow,
            Location::Row,
            self.rows,
        ))?;
        varint::push_u64(&mut self.index, varint::zigzag_encode(delta));
        self.prev = len;
        self.rows += 1;
        Ok(())
    }

    /// Writes a value row; returns the payload's offset in the file.
    pub fn put_value(&mut self, payload: &[u8]) -> Result<u64, WriteError<S::Error>> {
        let too_large = Error::at_item(ErrorKind::LimitExceeded, Location::Row, self.rows);
        let len = i64::try_from(payload.len())
            .ok()
            .and_then(|n| n.checked_add(RECORD_OVERHEAD as i64))
            .ok_or(too_large)?;
        let end = self
            .data_len
            .checked_add(len.unsigned_abs())
            .filter(|&e| e <= i64::MAX as u64)
            .ok_or(too_large)?;
        let len_bytes = len.to_le_bytes();
        let mut crc = Crc32::new();
        crc.update(&RECORD_MAGIC);
        crc.update(payload);
        if self.crc == CrcMode::Full {
            crc.update(&len_bytes);
        }
        let crc = crc.finalize().to_le_bytes();
        self.sink.put(&RECORD_MAGIC).map_err(WriteError::Sink)?;
        self.sink.put(payload).map_err(WriteError::Sink)?;
        self.sink.put(&len_bytes).map_err(WriteError::Sink)?;
        self.sink.put(&crc).map_err(WriteError::Sink)?;
        let at = self.data_len + 4;
        self.push_entry(len)?;
        self.data_len = end;
        Ok(at)
    }

    /// Writes a NULL row.
    pub fn put_null(&mut self) -> Result<(), WriteError<S::Error>> {
        Ok(self.push_entry(NULL_LENGTH)?)
    }

    /// Writes a PLACEHOLDER row (this partial update does not touch the row).
    pub fn put_placeholder(&mut self) -> Result<(), WriteError<S::Error>> {
        Ok(self.push_entry(PLACEHOLDER_LENGTH)?)
    }

    /// Writes a row holding an `ARRAY<BLOB>` payload; returns the payload's offset.
    pub fn put_array<'e>(
        &mut self,
        elements: impl IntoIterator<Item = Option<&'e [u8]>>,
    ) -> Result<u64, WriteError<S::Error>> {
        let mut scratch = core::mem::take(&mut self.scratch);
        scratch.clear();
        let result = encode_array(elements, &mut scratch)
            .map_err(WriteError::Invalid)
            .and_then(|()| self.put_value(&scratch));
        self.scratch = scratch;
        result
    }

    /// Writes a row holding a `MAP<K, BLOB>` payload; returns the payload's offset.
    pub fn put_map<'e>(
        &mut self,
        entries: impl IntoIterator<Item = (Option<&'e [u8]>, Option<&'e [u8]>)>,
    ) -> Result<u64, WriteError<S::Error>> {
        let mut scratch = core::mem::take(&mut self.scratch);
        scratch.clear();
        let result = encode_map(entries, &mut scratch)
            .map_err(WriteError::Invalid)
            .and_then(|()| self.put_value(&scratch));
        self.scratch = scratch;
        result
    }

    /// Writes the index and footer and returns the sink.
    pub fn finish(mut self) -> Result<S, WriteError<S::Error>> {
        let index_len = i32::try_from(self.index.len())
            .map_err(|_| Error::new(ErrorKind::LimitExceeded, self.data_len))?;
        self.sink.put(&self.index).map_err(WriteError::Sink)?;
        self.sink
            .put(&index_len.to_le_bytes())
            .map_err(WriteError::Sink)?;
        self.sink.put(&[FORMAT_VERSION]).map_err(WriteError::Sink)?;
        Ok(self.sink)
    }
}
