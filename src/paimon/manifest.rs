//! Paimon manifests and manifest lists (feature `paimon`): the manifest-entry and
//! manifest-file fields a scan and a sidecar need, decoded by name with the writer schema
//! from the container header, and the sidecar builder's front end ([`build_from_manifest`]).
//!
//! Blocks are decompressed here (codecs null, deflate, snappy with its CRC-32, zstandard; at
//! most [`MAX_BLOCK_BYTES`] a block and [`MAX_DECODED_BYTES`] a file, so a small hostile file
//! cannot claim gigabytes) and the datums decoded with the `apache-avro` crate. The
//! container framing itself is [`crate::codec::avro`].

use crate::codec::avro::{AvroBlock, Container};
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
/// let (_container, blocks, entries) = lakecore::paimon::manifest::decode_entries(&manifest)?;
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
    let schema_text =
        core::str::from_utf8(schema_json).map_err(|_| Error::new(ErrorKind::InvalidValue, 4))?;
    let schema =
        Schema::parse_str(schema_text).map_err(|_| Error::new(ErrorKind::InvalidValue, 4))?;
    let codec_name = core::str::from_utf8(container.codec())
        .map_err(|_| Error::new(ErrorKind::InvalidValue, 4))?;
    let codec =
        Codec::from_str(codec_name).map_err(|_| Error::new(ErrorKind::UnsupportedVersion, 4))?;
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

/// Builds the sidecar of the completed manifest `bytes`: scans the container, decodes each block's entries, pairs them with the block
/// and serialises. Nothing is written or published.
///
/// ```
/// use lakecore::sidecar::{BuildSettings, Sidecar};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0");
/// let manifest = std::fs::read(path).unwrap();
/// let bytes = lakecore::paimon::manifest::build_from_manifest(&manifest, BuildSettings::default())?
///     ;
/// let sidecar = Sidecar::parse(&bytes)?;
/// assert_eq!((sidecar.block_count(), sidecar.entry_count()), (6, 364));
/// assert_eq!(sidecar.manifest_length(), manifest.len() as u64);
/// # Ok::<(), lakecore::Error>(())
/// ```
pub fn build_from_manifest(bytes: &[u8], settings: BuildSettings) -> Result<Vec<u8>> {
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
