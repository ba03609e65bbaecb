//! Paimon BLOB data files (`.blob`): validated view, rows, selection, descriptors, nested
//! ARRAY/MAP payloads, writer and the fallback merge across partial-update layers.
//!
//! A `.blob` file is a run of records (`magic | payload | bin_length i64 | crc32`), then an
//! index of every row's `bin_length` as ZigZag deltas in LEB128, then a 5-byte footer
//! (`index_len i32 LE | version 1`). Rows whose length is `-1` are NULL, `-2` PLACEHOLDER
//! ("not touched by this partial update"); neither has a record.
//!
//! This module owns the format's layout and rules. It borrows the bytes it is given and never
//! copies payloads: [`BlobFile`] validates once, in place, without allocating; [`Rows`],
//! [`RowSelection`] and [`FallbackMerge`] hand out sub-slices ([`Payload`]) of the input. Only
//! the writer ([`BlobWriter`]), the offsets table ([`OffsetsTable`]) and the nested-payload
//! encoders need the `alloc` feature. It does no I/O.
//!
//! ```
//! use lakecore::blob::{BlobFile, Row};
//! // Golden vector G2: rows "inline", NULL, PLACEHOLDER.
//! let bytes = [
//!     0xcf, 0x11, 0x4e, 0x58, b'i', b'n', b'l', b'i', b'n', b'e', 0x16, 0, 0, 0, 0, 0, 0, 0,
//!     0x29, 0x60, 0xc8, 0xe9, 0x2c, 0x2d, 0x01, 0x03, 0, 0, 0, 0x01,
//! ];
//! let file = BlobFile::parse(&bytes)?;
//! assert_eq!(file.rows(), 3);
//! let rows: Vec<Row> = file.iter().collect();
//! assert_eq!(rows[0].payload(), Some(&b"inline"[..]));
//! assert_eq!(rows[1], Row::Null);
//! assert_eq!(rows[2], Row::Placeholder);
//! # Ok::<(), lakecore::Error>(())
//! ```

mod descriptor;
mod file;
mod index;
mod merge;
mod nested;
#[cfg(feature = "alloc")]
mod table;
#[cfg(feature = "alloc")]
mod writer;

pub use descriptor::{BlobDescriptor, DESCRIPTOR_MAGIC};
pub use file::{BlobFile, BlobOptions, CrcCoverage, FileFacts, RowSelection, Rows, VerifyReport};
pub use merge::{
    FallbackMerge, LayerFile, MergeOptions, MergedBatch, MergedRow, DEFAULT_MAX_LAYERS,
};
#[cfg(feature = "alloc")]
pub use nested::{encode_array, encode_map};
pub use nested::{
    ArrayElements, BlobArray, BlobMap, KeyType, KeyValue, MapEntries, MAX_KEY_LEN, PAIRWISE_KEYS,
};
#[cfg(feature = "alloc")]
pub use table::OffsetsTable;
#[cfg(feature = "std")]
pub use writer::IoSink;
#[cfg(feature = "alloc")]
pub use writer::{BlobSink, BlobWriter, CrcMode, WriteError};
// The crate's shared row ranges, for `BlobFile::select` and `MergeOptions` (also at their old
// path here).
pub use crate::select::{RowRange, RowRanges};

/// The 4 bytes that start every record (`i32` 1481511375, little-endian).
pub const RECORD_MAGIC: [u8; 4] = [0xcf, 0x11, 0x4e, 0x58];
/// The only file format version (the footer's last byte).
pub const FORMAT_VERSION: u8 = 1;
/// Footer length: `index_len: i32 LE` and `version: u8`.
pub const FOOTER_LEN: usize = 5;
/// Record bytes besides the payload: magic (4), `bin_length` (8), CRC-32 (4).
pub const RECORD_OVERHEAD: usize = 16;
/// Index entry of a NULL row.
pub const NULL_LENGTH: i64 = -1;
/// Index entry of a PLACEHOLDER row.
pub const PLACEHOLDER_LENGTH: i64 = -2;
/// Magic of a nested `ARRAY<BLOB>` payload (`"BCBA"`).
pub const ARRAY_MAGIC: [u8; 4] = *b"BCBA";
/// Magic of a nested `MAP<K, BLOB>` payload (`"BCBM"`).
pub const MAP_MAGIC: [u8; 4] = *b"BCBM";
/// Version byte of nested payloads.
pub const NESTED_VERSION: u8 = 1;

/// A borrowed payload and the absolute offset of its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Payload<'a> {
    /// The payload bytes (a sub-slice of the input).
    pub bytes: &'a [u8],
    /// Offset of `bytes[0]` in the file (or in the buffer the view was given).
    pub offset: u64,
}

/// One row of a BLOB file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Row<'a> {
    /// An explicit NULL (`-1`).
    Null,
    /// A placeholder (`-2`): the row was not written by this partial update.
    Placeholder,
    /// A record's payload.
    Value(Payload<'a>),
}

impl<'a> Row<'a> {
    /// The payload bytes of a value row.
    pub fn payload(&self) -> Option<&'a [u8]> {
        match self {
            Row::Value(p) => Some(p.bytes),
            _ => None,
        }
    }

    /// The index entry this row is stored as (`-1`, `-2` or payload length + 16).
    pub fn bin_length(&self) -> i64 {
        match self {
            Row::Null => NULL_LENGTH,
            Row::Placeholder => PLACEHOLDER_LENGTH,
            Row::Value(p) => i64::try_from(p.bytes.len())
                .unwrap_or(i64::MAX)
                .saturating_add(RECORD_OVERHEAD as i64),
        }
    }
}
