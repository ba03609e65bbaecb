//! Avro object-container framing over borrowed bytes, and (feature `std`) the manifest-entry
//! decoding that builds sidecars from real Paimon manifests.
//!
//! The core part knows the container only: magic `Obj\x01`, the metadata map (`avro.schema`,
//! `avro.codec`, ...), the 16-byte sync marker, and the block list (object-count varint,
//! size varint, data, sync) with every length checked. It does not decode records; that is
//! [`build_from_manifest`]'s job: it decompresses each block itself (codecs null, deflate,
//! snappy with its CRC-32, zstandard; at most [`MAX_BLOCK_BYTES`] a block and
//! [`MAX_DECODED_BYTES`] a file, so a small hostile file cannot claim gigabytes) and decodes
//! the datums with the `apache-avro` crate.
//!
//! ```
//! use lakecore::avro::Container;
//! // Header: magic, a one-entry map {"avro.codec": "null"}, end of map, 16-byte sync.
//! let mut file = b"Obj\x01\x02\x14avro.codec\x08null\x00".to_vec();
//! file.extend_from_slice(&[7u8; 16]);
//! let header_len = file.len() as u64;
//! // One block: 2 objects, 3 data bytes, sync.
//! file.extend_from_slice(&[0x04, 0x06, 1, 2, 3]);
//! file.extend_from_slice(&[7u8; 16]);
//! let c = Container::parse(&file)?;
//! assert_eq!(c.header_len(), header_len);
//! assert_eq!(c.metadata("avro.codec"), Some(&b"null"[..]));
//! let blocks: Vec<_> = c.blocks().collect::<Result<_, _>>()?;
//! assert_eq!((blocks[0].offset, blocks[0].length, blocks[0].object_count), (header_len, 21, 2));
//! # Ok::<(), lakecore::Error>(())
//! ```

use crate::codec::varint::{zigzag_decode, VarintFormat};
use crate::cursor::Cursor;
use crate::error::{off, Error, ErrorKind, Result};

/// The object-container magic.
pub const MAGIC: [u8; 4] = *b"Obj\x01";
/// Sync marker length.
pub const SYNC_LEN: usize = 16;

/// Reads an Avro `long` (ZigZag varint, at most 10 bytes, shortest form).
fn long(c: &mut Cursor<'_>) -> Result<i64> {
    c.uvarint(VarintFormat::U64).map(zigzag_decode)
}

/// Reads a non-negative Avro `long` used as a length or count.
fn length(c: &mut Cursor<'_>) -> Result<u64> {
    let at = c.position();
    let v = long(c)?;
    u64::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidLength, at))
}

/// A parsed object-container header over borrowed bytes.
#[derive(Clone, Copy, Debug)]
pub struct Container<'a> {
    bytes: &'a [u8],
    header_len: usize,
    metadata: &'a [u8],
    metadata_at: u64,
    sync: &'a [u8; SYNC_LEN],
}

impl<'a> Container<'a> {
    /// Parses the header of the container file `bytes` (the whole file, or at least its
    /// header for [`header`](Self::header) and [`metadata`](Self::metadata)).
    ///
    /// ```
    /// use lakecore::avro::Container;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0");
    /// let manifest = std::fs::read(path).unwrap();
    /// let container = Container::parse(&manifest)?;
    /// assert_eq!((container.codec(), container.header_len()), (&b"zstandard"[..], 2269));
    /// assert!(container.metadata("avro.schema").is_some());
    /// let blocks = container.blocks().collect::<Result<Vec<_>, _>>()?;
    /// assert_eq!(blocks.len(), 6);
    /// assert_eq!(blocks[0].offset, 2269);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn parse(bytes: &'a [u8]) -> Result<Self> {
        let mut c = Cursor::new(bytes);
        if c.array::<4>()? != &MAGIC {
            return Err(Error::new(ErrorKind::BadMagic, 0));
        }
        let metadata_at = c.position();
        let start = c.index();
        loop {
            let at = c.position();
            let count = long(&mut c)?;
            if count == 0 {
                break;
            }
            if count < 0 {
                length(&mut c)?; // byte size of the map block, unused
            }
            let count = count.unsigned_abs();
            if count > off(c.remaining()) {
                return Err(Error::new(ErrorKind::InvalidLength, at));
            }
            for _ in 0..count {
                let n = length(&mut c)?;
                c.bytes_u64(n)?;
                let n = length(&mut c)?;
                c.bytes_u64(n)?;
            }
        }
        let metadata = bytes.get(start..c.index()).unwrap_or_default();
        let sync = c.array::<SYNC_LEN>()?;
        Ok(Container {
            bytes,
            header_len: c.index(),
            metadata,
            metadata_at,
            sync,
        })
    }

    /// Header length in bytes (magic + metadata + sync).
    pub fn header_len(&self) -> u64 {
        off(self.header_len)
    }

    /// The header bytes `[0, header_len)`.
    pub fn header(&self) -> &'a [u8] {
        self.bytes.get(..self.header_len).unwrap_or_default()
    }

    /// The sync marker.
    pub fn sync(&self) -> &'a [u8; SYNC_LEN] {
        self.sync
    }

    /// The metadata entries `(key, value)` in file order.
    pub fn metadata_entries(&self) -> MetadataEntries<'a> {
        MetadataEntries {
            c: Cursor::with_origin(self.metadata, self.metadata_at),
            left: 0,
        }
    }

    /// The value of metadata key `key` (first occurrence).
    pub fn metadata(&self, key: &str) -> Option<&'a [u8]> {
        self.metadata_entries()
            .find(|(k, _)| *k == key.as_bytes())
            .map(|(_, v)| v)
    }

    /// The codec name (`avro.codec`, `null` when absent).
    pub fn codec(&self) -> &'a [u8] {
        self.metadata("avro.codec").unwrap_or(b"null")
    }

    /// The data blocks after the header, each checked (lengths, sync marker).
    pub fn blocks(&self) -> AvroBlocks<'a> {
        AvroBlocks {
            c: Cursor::new(self.bytes),
            sync: self.sync,
            started: false,
            header_len: self.header_len,
            failed: false,
        }
    }
}

/// Metadata map entries; see [`Container::metadata_entries`].
#[derive(Clone, Debug)]
pub struct MetadataEntries<'a> {
    c: Cursor<'a>,
    left: u64,
}

impl<'a> Iterator for MetadataEntries<'a> {
    type Item = (&'a [u8], &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        // Already validated by `Container::parse`; any failure ends the walk.
        while self.left == 0 {
            let count = long(&mut self.c).ok()?;
            if count == 0 {
                return None;
            }
            if count < 0 {
                length(&mut self.c).ok()?;
            }
            self.left = count.unsigned_abs();
        }
        self.left -= 1;
        let n = length(&mut self.c).ok()?;
        let k = self.c.bytes_u64(n).ok()?;
        let n = length(&mut self.c).ok()?;
        let v = self.c.bytes_u64(n).ok()?;
        Some((k, v))
    }
}

/// One data block of a container file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AvroBlock<'a> {
    /// Offset of the block's object-count varint.
    pub offset: u64,
    /// Length: count varint + size varint + data + sync.
    pub length: u64,
    /// Objects (records) in the block.
    pub object_count: u64,
    /// The (possibly compressed) data.
    pub data: &'a [u8],
    /// Absolute offset of `data`.
    pub data_offset: u64,
}

/// The data blocks of a container; see [`Container::blocks`].
#[derive(Clone, Debug)]
pub struct AvroBlocks<'a> {
    c: Cursor<'a>,
    sync: &'a [u8; SYNC_LEN],
    started: bool,
    header_len: usize,
    failed: bool,
}

impl<'a> AvroBlocks<'a> {
    fn step(&mut self) -> Result<AvroBlock<'a>> {
        let offset = self.c.position();
        let object_count = length(&mut self.c)?;
        let size = length(&mut self.c)?;
        let data_offset = self.c.position();
        let data = self.c.bytes_u64(size)?;
        let sync_at = self.c.position();
        if self.c.array::<SYNC_LEN>()? != self.sync {
            return Err(Error::new(ErrorKind::Mismatch, sync_at));
        }
        Ok(AvroBlock {
            offset,
            length: self.c.position() - offset,
            object_count,
            data,
            data_offset,
        })
    }
}

impl<'a> Iterator for AvroBlocks<'a> {
    type Item = Result<AvroBlock<'a>>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if !self.started {
            self.started = true;
            if let Err(e) = self.c.skip(self.header_len) {
                self.failed = true;
                return Some(Err(e));
            }
        }
        if self.c.is_empty() {
            return None;
        }
        let r = self.step();
        self.failed = r.is_err();
        Some(r)
    }
}

impl core::iter::FusedIterator for AvroBlocks<'_> {}

#[cfg(feature = "std")]
pub use decode::{
    build_from_manifest, decode_entries, decode_manifest_list, ManifestEntry, ManifestFileMeta,
    MAX_BLOCK_BYTES, MAX_DECODED_BYTES,
};

#[cfg(feature = "std")]
mod decode {
    use super::{AvroBlock, Container};
    use crate::error::{off, Error, ErrorKind, Result};
    use crate::sidecar::{BuildSettings, EntryCoverage, SidecarBuilder};
    use alloc::borrow::Cow;
    use alloc::string::String;
    use alloc::vec::Vec;
    use apache_avro::types::Value;
    use apache_avro::{Codec, Schema};
    use core::str::FromStr;

    /// The manifest-entry fields a sidecar and a scan need, decoded by name.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct ManifestEntry {
        /// Ordinal of the block holding the entry.
        pub block: usize,
        /// `_KIND`: 0 = ADD, 1 = DELETE.
        pub kind: Option<i32>,
        /// `_FILE._FILE_NAME`.
        pub file_name: Option<String>,
        /// `_PARTITION` bytes.
        pub partition: Option<Vec<u8>>,
        /// `_BUCKET`.
        pub bucket: Option<i32>,
        /// `_TOTAL_BUCKETS`.
        pub total_buckets: Option<i32>,
        /// `_FILE._FIRST_ROW_ID`.
        pub first_row_id: Option<i64>,
        /// `_FILE._ROW_COUNT`.
        pub row_count: Option<i64>,
    }

    fn unwrap_union(v: &Value) -> &Value {
        match v {
            Value::Union(_, inner) => inner,
            other => other,
        }
    }

    fn field<'v>(record: &'v [(String, Value)], name: &str) -> Option<&'v Value> {
        record
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| unwrap_union(v))
    }

    fn as_i64(v: Option<&Value>) -> Option<i64> {
        match v? {
            Value::Long(x) => Some(*x),
            Value::Int(x) => Some(i64::from(*x)),
            _ => None,
        }
    }

    fn as_i32(v: Option<&Value>) -> Option<i32> {
        match v? {
            Value::Int(x) => Some(*x),
            Value::Long(x) => i32::try_from(*x).ok(),
            _ => None,
        }
    }

    fn as_string(v: Option<&Value>) -> Option<String> {
        match v? {
            Value::String(s) => Some(s.clone()),
            _ => None,
        }
    }

    /// One `ManifestFileMeta` record of a manifest list, the fields a scan needs.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct ManifestFileMeta {
        /// `_FILE_NAME`: the manifest's name in the table's `manifest/` directory.
        pub file_name: String,
        /// `_FILE_SIZE`.
        pub file_size: i64,
        /// `_NUM_ADDED_FILES`.
        pub num_added_files: i64,
        /// `_NUM_DELETED_FILES`.
        pub num_deleted_files: i64,
        /// `_EXTRA_FILES` (empty when null or absent from the schema).
        pub extra_files: Vec<String>,
    }

    fn meta_of(value: &Value, _block: usize, at: u64) -> Result<ManifestFileMeta> {
        let bad = Error::new(ErrorKind::InvalidValue, at);
        let Value::Record(fields) = unwrap_union(value) else {
            return Err(bad);
        };
        let extra_files = match field(fields, "_EXTRA_FILES") {
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match unwrap_union(v) {
                    Value::String(s) => Ok(s.clone()),
                    _ => Err(bad),
                })
                .collect::<Result<Vec<_>>>()?,
            _ => Vec::new(),
        };
        Ok(ManifestFileMeta {
            file_name: as_string(field(fields, "_FILE_NAME")).ok_or(bad)?,
            file_size: as_i64(field(fields, "_FILE_SIZE")).ok_or(bad)?,
            num_added_files: as_i64(field(fields, "_NUM_ADDED_FILES")).ok_or(bad)?,
            num_deleted_files: as_i64(field(fields, "_NUM_DELETED_FILES")).ok_or(bad)?,
            extra_files,
        })
    }

    /// Decodes every `ManifestFileMeta` record of the manifest-list container `bytes`
    /// (writer schema from the header, fields by name).
    pub fn decode_manifest_list(bytes: &[u8]) -> Result<Vec<ManifestFileMeta>> {
        let container = Container::parse(bytes)?;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            decode_records(container, meta_of)
        }))
        .unwrap_or(Err(Error::new(ErrorKind::InvalidValue, 4)))
        .map(|(_, _, records)| records)
    }

    fn entry_of(value: &Value, block: usize, at: u64) -> Result<ManifestEntry> {
        let Value::Record(fields) = unwrap_union(value) else {
            return Err(Error::new(ErrorKind::InvalidValue, at));
        };
        let partition = match field(fields, "_PARTITION") {
            Some(Value::Bytes(b)) => Some(b.clone()),
            _ => None,
        };
        let file = match field(fields, "_FILE") {
            Some(Value::Record(f)) => Some(f),
            _ => None,
        };
        Ok(ManifestEntry {
            block,
            kind: as_i32(field(fields, "_KIND")),
            file_name: file.and_then(|f| as_string(field(f, "_FILE_NAME"))),
            partition,
            bucket: as_i32(field(fields, "_BUCKET")),
            total_buckets: as_i32(field(fields, "_TOTAL_BUCKETS")),
            first_row_id: file.and_then(|f| as_i64(field(f, "_FIRST_ROW_ID"))),
            row_count: file.and_then(|f| as_i64(field(f, "_ROW_COUNT"))),
        })
    }

    /// Decodes every manifest entry of the container `bytes` (writer schema from the header,
    /// fields by name), with the block list. Errors point at the offending metadata value or
    /// block data.
    ///
    /// ```
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0");
    /// let manifest = std::fs::read(path).unwrap();
    /// let (_container, blocks, entries) = lakecore::avro::decode_entries(&manifest)?;
    /// assert_eq!((blocks.len(), entries.len()), (6, 364));
    /// assert!(entries.iter().all(|e| e.total_buckets == Some(4)));
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn decode_entries(
        bytes: &[u8],
    ) -> Result<(Container<'_>, Vec<AvroBlock<'_>>, Vec<ManifestEntry>)> {
        // `apache-avro` can panic on hostile schemas (e.g. an invalid record name reached
        // through an `unwrap`); such input is an error here, never a panic of the caller.
        let container = Container::parse(bytes)?;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            decode_records(container, entry_of)
        }))
        .unwrap_or(Err(Error::new(ErrorKind::InvalidValue, 4)))
    }

    /// The blocks of `container` and every record mapped through `record_of(value, block
    /// ordinal, block data offset)`.
    #[allow(clippy::type_complexity)]
    fn decode_records<T>(
        container: Container<'_>,
        record_of: impl Fn(&Value, usize, u64) -> Result<T>,
    ) -> Result<(Container<'_>, Vec<AvroBlock<'_>>, Vec<T>)> {
        let schema_json = container
            .metadata("avro.schema")
            .ok_or(Error::new(ErrorKind::InvalidValue, 4))?;
        let schema_text = core::str::from_utf8(schema_json)
            .map_err(|_| Error::new(ErrorKind::InvalidValue, 4))?;
        let schema =
            Schema::parse_str(schema_text).map_err(|_| Error::new(ErrorKind::InvalidValue, 4))?;
        let codec_name = core::str::from_utf8(container.codec())
            .map_err(|_| Error::new(ErrorKind::InvalidValue, 4))?;
        let codec = Codec::from_str(codec_name)
            .map_err(|_| Error::new(ErrorKind::UnsupportedVersion, 4))?;
        let mut blocks = Vec::new();
        let mut entries = Vec::new();
        let mut decoded = 0usize;
        for (index, block) in container.blocks().enumerate() {
            let block = block?;
            let data = decompress(codec, block.data, block.data_offset)?;
            decoded = decoded.saturating_add(data.len());
            if decoded > MAX_DECODED_BYTES {
                return Err(Error::new(ErrorKind::LimitExceeded, block.data_offset));
            }
            // Every manifest entry takes at least one byte: refuse counts the data cannot
            // hold before looping over them (degenerate schemas would otherwise spin).
            if block.object_count > off(data.len()) {
                return Err(Error::new(ErrorKind::InvalidLength, block.offset));
            }
            let mut reader: &[u8] = &data;
            for _ in 0..block.object_count {
                let value = apache_avro::from_avro_datum(&schema, &mut reader, None)
                    .map_err(|_| Error::new(ErrorKind::InvalidValue, block.data_offset))?;
                entries.push(record_of(&value, index, block.data_offset)?);
            }
            if !reader.is_empty() {
                return Err(Error::new(ErrorKind::TrailingBytes, block.data_offset));
            }
            blocks.push(block);
        }
        Ok((container, blocks, entries))
    }

    /// The largest decompressed Avro block [`decode_entries`] and [`decode_manifest_list`]
    /// accept: 64 MiB ([`ErrorKind::LimitExceeded`] at the block's data beyond it). Writers
    /// flush blocks far below this (Java's Avro at ~64 KB, fastavro at ~16 KB), but a few KB of
    /// deflate or zstandard can claim gigabytes.
    pub const MAX_BLOCK_BYTES: usize = 64 << 20;

    /// The largest decompressed size of all blocks of one container together: 1 GiB
    /// ([`ErrorKind::LimitExceeded`] at the data of the block that crosses it).
    pub const MAX_DECODED_BYTES: usize = 1 << 30;

    /// The block `data` decompressed with `codec`, stopping at [`MAX_BLOCK_BYTES`]. Errors
    /// point at `at`, the block's data: [`ErrorKind::LimitExceeded`] past the limit,
    /// [`ErrorKind::InvalidLength`] for a snappy length claim snappy cannot reach,
    /// [`ErrorKind::ChecksumMismatch`] for snappy's CRC-32, [`ErrorKind::InvalidValue`] for a
    /// stream the codec rejects, [`ErrorKind::UnsupportedVersion`] for other codecs.
    fn decompress(codec: Codec, data: &[u8], at: u64) -> Result<Cow<'_, [u8]>> {
        let limit = Error::new(ErrorKind::LimitExceeded, at);
        let invalid = Error::new(ErrorKind::InvalidValue, at);
        match codec {
            Codec::Null => Ok(Cow::Borrowed(data)),
            // Raw deflate (no zlib header), as Avro writes it.
            Codec::Deflate(_) => {
                miniz_oxide::inflate::decompress_to_vec_with_limit(data, MAX_BLOCK_BYTES)
                    .map(Cow::Owned)
                    .map_err(|e| match e.status {
                        miniz_oxide::inflate::TINFLStatus::HasMoreOutput => limit,
                        _ => invalid,
                    })
            }
            // Raw snappy, then the big-endian CRC-32 of the decompressed bytes.
            Codec::Snappy => {
                let (packed, crc) = data
                    .split_last_chunk::<4>()
                    .ok_or(Error::new(ErrorKind::Truncated, at + off(data.len())))?;
                let len = snap::raw::decompress_len(packed).map_err(|_| invalid)?;
                // Snappy expands its input at most about 21 times (a 3-byte copy yields at
                // most 64 bytes): refuse larger claims before reserving their size.
                if len > packed.len().saturating_mul(32) {
                    return Err(Error::new(ErrorKind::InvalidLength, at));
                }
                if len > MAX_BLOCK_BYTES {
                    return Err(limit);
                }
                let mut out = alloc::vec![0u8; len];
                let n = snap::raw::Decoder::new()
                    .decompress(packed, &mut out)
                    .map_err(|_| invalid)?;
                if n != len {
                    return Err(invalid);
                }
                if crc32fast::hash(&out) != u32::from_be_bytes(*crc) {
                    return Err(Error::new(
                        ErrorKind::ChecksumMismatch,
                        at + off(packed.len()),
                    ));
                }
                Ok(Cow::Owned(out))
            }
            Codec::Zstandard(_) => {
                use std::io::Read;
                let mut decoder =
                    zstd::stream::read::Decoder::with_buffer(data).map_err(|_| invalid)?;
                // A frame may declare a window of up to 2^27 bytes by default, which the
                // decoder allocates; no window larger than the output limit is needed.
                decoder
                    .window_log_max(MAX_BLOCK_BYTES.ilog2())
                    .map_err(|_| invalid)?;
                let mut out = Vec::new();
                // One byte past the limit tells a stream that reaches it from one that passes it.
                decoder
                    .take(MAX_BLOCK_BYTES as u64 + 1)
                    .read_to_end(&mut out)
                    .map_err(|_| invalid)?;
                if out.len() > MAX_BLOCK_BYTES {
                    return Err(limit);
                }
                Ok(Cow::Owned(out))
            }
            // Codecs behind `apache-avro` features this crate does not enable (bzip2, xz),
            // which another crate in the build may turn on.
            #[allow(unreachable_patterns)]
            _ => Err(Error::new(ErrorKind::UnsupportedVersion, 4)),
        }
    }

    /// Builds the sidecar of the completed manifest `bytes` (`None` when `settings.write` is
    /// off): scans the container, decodes each block's entries, pairs them with the block
    /// and serialises. Nothing is written or published.
    ///
    /// ```
    /// use lakecore::sidecar::{BuildSettings, Sidecar};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0");
    /// let manifest = std::fs::read(path).unwrap();
    /// let bytes = lakecore::avro::build_from_manifest(&manifest, BuildSettings::default())?
    ///     .expect("write is on");
    /// let sidecar = Sidecar::validate_self_described(&bytes)?;
    /// assert_eq!((sidecar.block_count(), sidecar.entry_count()), (6, 364));
    /// assert_eq!(sidecar.manifest_length(), manifest.len() as u64);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn build_from_manifest(bytes: &[u8], settings: BuildSettings) -> Result<Option<Vec<u8>>> {
        if !settings.write {
            return Ok(None);
        }
        let (container, blocks, entries) = decode_entries(bytes)?;
        let mut builder = SidecarBuilder::new(settings, container.header());
        let mut entries = entries.iter().peekable();
        for (index, block) in blocks.iter().enumerate() {
            builder.begin_block(block.offset, block.length)?;
            while let Some(e) = entries.next_if(|e| e.block == index) {
                builder.add(EntryCoverage {
                    partition: e.partition.as_deref(),
                    bucket: e.bucket,
                    total_buckets: e.total_buckets,
                    first_row_id: e.first_row_id,
                    row_count: e.row_count.unwrap_or(0),
                })?;
            }
            builder.end_block()?;
        }
        builder.finish(off(bytes.len()))
    }
}
