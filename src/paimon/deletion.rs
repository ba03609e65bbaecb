//! Deletion vectors (feature `paimon`): the snapshot's index manifest, the deletion files it
//! assigns to data files, and the deletion vectors themselves.
//!
//! A snapshot's `indexManifest` names an Avro file in `manifest/` of `IndexManifestEntry`
//! records (`_KIND`, `_PARTITION`, `_BUCKET`, `_INDEX_TYPE`, `_FILE_NAME`, `_FILE_SIZE`,
//! `_ROW_COUNT`, `_DELETIONS_VECTORS_RANGES`, `_EXTERNAL_PATH`, ...). An entry of index type
//! `DELETION_VECTORS` describes one index file of one partition and bucket and, per data file
//! with deleted rows, where its vector sits in that file (offset, length, cardinality): a
//! [`DeletionFile`]. It is read with the crate's own Avro decoder ([`decode_index_manifest`]):
//! the top-level fields through a projection of the writer schema, the per-file ranges by the
//! writer schema's field names.
//!
//! A deletion-vector index file is a version byte (1), then one vector per data file: a
//! big-endian `u32` size `n`, `n` bytes (a big-endian magic `1581511376` and a 32-bit
//! RoaringBitmap in the portable serialization), and a big-endian CRC-32 of those `n` bytes.
//! The index entry's offset points at the size, its length is `n`. The bitmap holds the
//! deleted row positions of the data file (0 = its first row). [`read_deletion_vector`]
//! checks all of it and decodes the bitmap with the `roaring` crate.
//!
//! In a data-evolution table a row lives in several files: the vector belongs to the merge
//! group's *anchor*, its oldest non-BLOB file (lowest `max_sequence_number`, then file name),
//! and position `p` is row ID `anchor.first_row_id + p` in every file of the group.
//!
//! ```
//! use lakecore::paimon::Table;
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/dv_warehouse/dvtab.db/dv");
//! let table = Table::open(dir)?;
//! let snapshot = table.snapshot(table.latest_snapshot_id()?.unwrap())?;
//! let schema = table.schema(snapshot.schema_id)?;
//! let index = table.deletion_index(&snapshot, &schema)?;
//! let mut deleted = 0;
//! for (_, _, files) in index.buckets() {
//!     for file in files.values() {
//!         let vector = table.read_deletion_vector(file)?;
//!         assert_eq!(Some(vector.len() as i64), file.cardinality);
//!         deleted += vector.len();
//!     }
//! }
//! assert!(deleted > 0);
//! # Ok::<(), lakecore::paimon::ScanError>(())
//! ```

use super::compression::Codec;
use super::error::*;
use super::table::{Snapshot, Table, TableSchema};
use crate::codec::avro::{read_long, Container, Schema, Value};
use crate::cursor::Cursor;
use crate::error::{off, Error, ErrorKind, Result};
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use roaring::RoaringBitmap;
use std::collections::HashMap;
use std::path::Path;

/// `_INDEX_TYPE` of deletion-vector index files.
pub const DELETION_VECTORS: &str = "DELETION_VECTORS";
/// The magic number before each serialized bitmap (big-endian), as Paimon's
/// `BitmapDeletionVector` writes it.
pub const DV_MAGIC: u32 = 1_581_511_376;
/// The version byte a deletion-vector index file starts with.
pub const DV_INDEX_VERSION: u8 = 1;
/// The largest serialized deletion vector read (magic + bitmap): 256 MiB
/// ([`ErrorKind::LimitExceeded`] at the vector's size field beyond).
pub const MAX_DV_BYTES: u64 = 1 << 28;
/// The most bitmap containers a deletion vector may declare: 16,384 containers cover row
/// positions below 2^30, and a container expands to at most 8 KiB, so a vector never takes
/// more than 128 MiB whatever its serialized size ([`ErrorKind::LimitExceeded`] at the
/// bitmap's header beyond).
pub const MAX_DV_CONTAINERS: u32 = 1 << 14;

/// Where the deletion vector of one data file is: Paimon's `DeletionFile`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeletionFile {
    /// The index file's full path (its external path, or under the table).
    pub path: String,
    /// Byte offset of the vector's size field in the index file.
    pub offset: u64,
    /// The vector's size (magic + bitmap, without the size field and the checksum).
    pub length: u64,
    /// Deleted rows, when the writer recorded it (`_CARDINALITY`).
    pub cardinality: Option<i64>,
}

/// One data file's range in a deletion-vector index file (`DeletionVectorMeta`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeletionVectorMeta {
    /// `f0`: the data file's name.
    pub data_file: String,
    /// `f1`: offset of the vector's size field.
    pub offset: i64,
    /// `f2`: the vector's size.
    pub length: i64,
    /// `_CARDINALITY`: deleted rows (`None` when null or absent).
    pub cardinality: Option<i64>,
}

/// One `IndexManifestEntry`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexManifestEntry {
    /// `_KIND`: 0 = ADD, 1 = DELETE.
    pub kind: i32,
    /// `_PARTITION`: BinaryRow with its 4-byte arity prefix.
    pub partition: Vec<u8>,
    /// `_BUCKET`.
    pub bucket: i32,
    /// `_INDEX_TYPE` (`DELETION_VECTORS`, `HASH`, global index types).
    pub index_type: String,
    /// `_FILE_NAME`.
    pub file_name: String,
    /// `_FILE_SIZE`.
    pub file_size: i64,
    /// `_ROW_COUNT` (for deletion vectors: the number of data files with a vector).
    pub row_count: i64,
    /// `_DELETIONS_VECTORS_RANGES` (empty when null).
    pub deletion_vectors: Vec<DeletionVectorMeta>,
    /// `_EXTERNAL_PATH`.
    pub external_path: Option<String>,
}

const PATHS: &[&str] = &[
    "_KIND",
    "_PARTITION",
    "_BUCKET",
    "_INDEX_TYPE",
    "_FILE_NAME",
    "_FILE_SIZE",
    "_ROW_COUNT",
    "_DELETIONS_VECTORS_RANGES",
    "_EXTERNAL_PATH",
];

/// The type of one field of the writer's `DeletionVectorMeta` record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Str,
    Long,
    NullableStr,
    NullableLong,
    /// `["T", "null"]` orders: the null branch is index 1.
    StrNullable,
    LongNullable,
}

/// The `DeletionVectorMeta` fields of the writer schema, in order, with the position of
/// `f0`, `f1`, `f2` and `_CARDINALITY` among them.
struct MetaLayout {
    slots: Vec<Slot>,
    /// Positions of f0, f1, f2, _CARDINALITY.
    at: [Option<usize>; 4],
}

fn slot_of(ty: &serde_json::Value) -> Option<Slot> {
    use serde_json::Value as J;
    let simple = |t: &J| match t.as_str() {
        Some("string") => Some(true),
        Some("int" | "long") => Some(false),
        _ => None,
    };
    match ty {
        J::String(_) => simple(ty).map(|s| if s { Slot::Str } else { Slot::Long }),
        J::Object(o) => o.get("type").and_then(slot_of),
        J::Array(branches) => match branches.as_slice() {
            [n, t] if n.as_str() == Some("null") => simple(t).map(|s| match s {
                true => Slot::NullableStr,
                false => Slot::NullableLong,
            }),
            [t, n] if n.as_str() == Some("null") => simple(t).map(|s| match s {
                true => Slot::StrNullable,
                false => Slot::LongNullable,
            }),
            _ => None,
        },
        _ => None,
    }
}

/// Finds `_DELETIONS_VECTORS_RANGES`'s item record in the writer schema JSON.
fn meta_layout(json: &[u8], at: u64) -> Result<Option<MetaLayout>> {
    let bad = Error::new(ErrorKind::InvalidValue, at);
    let v: serde_json::Value = serde_json::from_slice(json).map_err(|_| bad)?;
    let root = match &v {
        serde_json::Value::Array(branches) => branches
            .iter()
            .find(|b| b.get("type").and_then(|t| t.as_str()) == Some("record"))
            .ok_or(bad)?,
        other => other,
    };
    let Some(field) = root
        .get("fields")
        .and_then(|f| f.as_array())
        .ok_or(bad)?
        .iter()
        .find(|f| f.get("name").and_then(|n| n.as_str()) == Some("_DELETIONS_VECTORS_RANGES"))
    else {
        return Ok(None);
    };
    let mut ty = field.get("type").ok_or(bad)?;
    if let serde_json::Value::Array(branches) = ty {
        ty = branches
            .iter()
            .find(|b| b.as_str() != Some("null"))
            .ok_or(bad)?;
    }
    let record = ty.get("items").ok_or(bad)?;
    let fields = record.get("fields").and_then(|f| f.as_array()).ok_or(bad)?;
    let mut layout = MetaLayout {
        slots: Vec::with_capacity(fields.len()),
        at: [None; 4],
    };
    for (i, f) in fields.iter().enumerate() {
        let slot = slot_of(f.get("type").ok_or(bad)?).ok_or(bad)?;
        let which = match f.get("name").and_then(|n| n.as_str()) {
            Some("f0") => Some(0),
            Some("f1") => Some(1),
            Some("f2") => Some(2),
            Some("_CARDINALITY") => Some(3),
            _ => None,
        };
        if let Some(w) = which {
            if let Some(s) = layout.at.get_mut(w) {
                *s = Some(i);
            }
        }
        layout.slots.push(slot);
    }
    if layout.at.iter().take(3).any(Option::is_none) {
        return Err(bad);
    }
    Ok(Some(layout))
}

/// A decoded slot: a string, a number, or null.
#[derive(Clone, Copy)]
enum Field<'a> {
    Str(&'a [u8]),
    Long(i64),
    Null,
}

fn read_slot<'a>(c: &mut Cursor<'a>, slot: Slot) -> Result<Field<'a>> {
    let string = |c: &mut Cursor<'a>| -> Result<Field<'a>> {
        let at = c.position();
        let n =
            u64::try_from(read_long(c)?).map_err(|_| Error::new(ErrorKind::InvalidLength, at))?;
        Ok(Field::Str(c.bytes_u64(n)?))
    };
    let branch = |c: &mut Cursor<'a>, null: i64| -> Result<bool> {
        let at = c.position();
        match read_long(c)? {
            b if b == null => Ok(true),
            b if b == 1 - null => Ok(false),
            _ => Err(Error::new(ErrorKind::InvalidValue, at)),
        }
    };
    Ok(match slot {
        Slot::Str => string(c)?,
        Slot::Long => Field::Long(read_long(c)?),
        Slot::NullableStr | Slot::StrNullable => {
            let null = if slot == Slot::NullableStr { 0 } else { 1 };
            match branch(c, null)? {
                true => Field::Null,
                false => string(c)?,
            }
        }
        Slot::NullableLong | Slot::LongNullable => {
            let null = if slot == Slot::NullableLong { 0 } else { 1 };
            match branch(c, null)? {
                true => Field::Null,
                false => Field::Long(read_long(c)?),
            }
        }
    })
}

fn meta_record(record: &[u8], layout: &MetaLayout, at: u64) -> Result<DeletionVectorMeta> {
    let bad = Error::new(ErrorKind::InvalidValue, at);
    let mut c = Cursor::new(record);
    let mut got: [Field<'_>; 4] = [Field::Null; 4];
    for (i, slot) in layout.slots.iter().enumerate() {
        let v = read_slot(&mut c, *slot).map_err(|e| Error::new(e.kind, at))?;
        for (w, pos) in layout.at.iter().enumerate() {
            if *pos == Some(i) {
                if let Some(g) = got.get_mut(w) {
                    *g = v;
                }
            }
        }
    }
    if !c.is_empty() {
        return Err(Error::new(ErrorKind::TrailingBytes, at));
    }
    let [Field::Str(name), Field::Long(offset), Field::Long(length), card] = got else {
        return Err(bad);
    };
    if offset < 0 || length < 0 {
        return Err(bad);
    }
    Ok(DeletionVectorMeta {
        data_file: core::str::from_utf8(name).map_err(|_| bad)?.to_string(),
        offset,
        length,
        cardinality: match card {
            Field::Long(n) => Some(n),
            _ => None,
        },
    })
}

/// Decodes every `IndexManifestEntry` of the index-manifest container `bytes` (any of the
/// manifest codecs). Errors name the byte: the schema's, the block's data (compressed
/// blocks), or the record's (stored blocks); a `_KIND` other than ADD (0) or DELETE (1), a
/// missing required field and a negative vector offset or length are
/// [`ErrorKind::InvalidValue`].
///
/// ```
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/dv_warehouse/dvtab.db/dv/manifest");
/// let name = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap())
///     .filter(|n| n.starts_with("index-manifest-")).min().unwrap();
/// let entries = lakecore::paimon::deletion::decode_index_manifest(&std::fs::read(format!("{dir}/{name}")).unwrap())?;
/// assert!(entries.iter().all(|e| e.index_type == "DELETION_VECTORS" && e.kind == 0));
/// assert!(entries.iter().all(|e| e.deletion_vectors.len() as i64 == e.row_count));
/// # Ok::<(), lakecore::Error>(())
/// ```
pub fn decode_index_manifest(bytes: &[u8]) -> Result<Vec<IndexManifestEntry>> {
    let container = Container::parse(bytes)?;
    let json = container
        .metadata("avro.schema")
        .ok_or(Error::new(ErrorKind::InvalidValue, 4))?;
    let json_at = off((json.as_ptr() as usize).wrapping_sub(bytes.as_ptr() as usize));
    let schema = Schema::parse(json, json_at)?;
    let projection = schema.project(PATHS)?;
    let layout = meta_layout(json, json_at)?;
    let codec = Codec::from_name(container.codec(), 4)?;
    let stored = codec == Codec::Null;
    let mut out = Vec::new();
    super::manifest::each_decoded_block(&container, codec, |block, data| {
        let at = block.data_offset;
        let relocate = |e: Error| if stored { e } else { Error::new(e.kind, at) };
        // Every record takes at least one byte (`_VERSION`).
        if block.object_count > off(data.len()) {
            return Err(Error::new(ErrorKind::InvalidLength, block.offset));
        }
        let mut c = Cursor::with_origin(data, if stored { at } else { 0 });
        let mut v = [Value::Absent; 9];
        for _ in 0..block.object_count {
            let rec_at = if stored { c.position() } else { at };
            schema.read(&projection, &mut c, &mut v).map_err(relocate)?;
            let bad = Error::new(ErrorKind::InvalidValue, rec_at);
            let get = |i: usize| v.get(i).copied().unwrap_or(Value::Absent);
            let mut deletion_vectors = Vec::new();
            if let (Value::Items(items), Some(layout)) = (get(7), layout.as_ref()) {
                for item in schema.items(items) {
                    let Value::Record(record) = item.map_err(relocate)? else {
                        return Err(bad);
                    };
                    deletion_vectors.push(meta_record(record, layout, rec_at)?);
                }
            }
            out.push(IndexManifestEntry {
                kind: get(0).as_i32().filter(|k| matches!(k, 0 | 1)).ok_or(bad)?,
                partition: get(1).as_bytes().ok_or(bad)?.to_vec(),
                bucket: get(2).as_i32().ok_or(bad)?,
                index_type: get(3).as_str().ok_or(bad)?.to_string(),
                file_name: get(4).as_str().ok_or(bad)?.to_string(),
                file_size: get(5).as_i64().ok_or(bad)?,
                row_count: get(6).as_i64().ok_or(bad)?,
                deletion_vectors,
                external_path: get(8).as_str().map(str::to_string),
            });
        }
        if !c.is_empty() {
            return Err(relocate(c.error(ErrorKind::TrailingBytes)));
        }
        Ok(())
    })?;
    Ok(out)
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    let b: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_be_bytes(b))
}

/// Reads the deletion vector at `offset` of the deletion-vector index file `file` (all of
/// its bytes): the version byte, the size (equal to `length` when given), the magic, the
/// CRC-32 of magic and bitmap, then the portable RoaringBitmap, whose header must declare at
/// most [`MAX_DV_CONTAINERS`] containers and whose bytes must be used exactly.
///
/// Errors, at the absolute byte in `file`: [`ErrorKind::UnsupportedVersion`] (byte 0),
/// [`ErrorKind::Truncated`] (a vector past the end), [`ErrorKind::Mismatch`] (size not the
/// index entry's length, or cardinality not the entry's), [`ErrorKind::LimitExceeded`],
/// [`ErrorKind::BadMagic`], [`ErrorKind::ChecksumMismatch`] (at the checksum),
/// [`ErrorKind::InvalidValue`] (a bitmap the decoder rejects, at its first byte),
/// [`ErrorKind::TrailingBytes`] (bitmap bytes left over).
///
/// ```
/// use lakecore::paimon::deletion::{read_deletion_vector, DV_MAGIC};
/// // One vector deleting positions 3 and 5, written as Paimon does.
/// let mut bitmap = Vec::new();
/// [3u32, 5].into_iter().collect::<roaring::RoaringBitmap>().serialize_into(&mut bitmap).unwrap();
/// let mut body = DV_MAGIC.to_be_bytes().to_vec();
/// body.extend_from_slice(&bitmap);
/// let mut file = vec![1u8];
/// file.extend_from_slice(&(body.len() as u32).to_be_bytes());
/// file.extend_from_slice(&body);
/// file.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
/// let dv = read_deletion_vector(&file, 1, Some(body.len() as u64), Some(2))?;
/// assert_eq!(dv.iter().collect::<Vec<_>>(), [3, 5]);
/// file[6] ^= 1; // a magic byte
/// assert_eq!(read_deletion_vector(&file, 1, None, None).unwrap_err().offset, 5);
/// # Ok::<(), lakecore::Error>(())
/// ```
pub fn read_deletion_vector(
    file: &[u8],
    offset: u64,
    length: Option<u64>,
    cardinality: Option<i64>,
) -> Result<RoaringBitmap> {
    match file.first() {
        Some(&DV_INDEX_VERSION) => {}
        Some(_) => return Err(Error::new(ErrorKind::UnsupportedVersion, 0)),
        None => return Err(Error::new(ErrorKind::Truncated, 0)),
    }
    let end = off(file.len());
    let truncated = Error::new(ErrorKind::Truncated, end);
    if offset == 0 {
        return Err(Error::new(ErrorKind::OutOfBounds, 0));
    }
    let at = usize::try_from(offset).map_err(|_| truncated)?;
    let size = be32(file, at).ok_or(truncated)?;
    if length.is_some_and(|l| l != u64::from(size)) {
        return Err(Error::new(ErrorKind::Mismatch, offset));
    }
    if u64::from(size) > MAX_DV_BYTES {
        return Err(Error::new(ErrorKind::LimitExceeded, offset));
    }
    if size < 4 {
        return Err(Error::new(ErrorKind::InvalidLength, offset));
    }
    let body_at = at.checked_add(4).ok_or(truncated)?;
    let body_end = body_at
        .checked_add(usize::try_from(size).map_err(|_| truncated)?)
        .ok_or(truncated)?;
    let body = file.get(body_at..body_end).ok_or(truncated)?;
    let crc = be32(file, body_end).ok_or(truncated)?;
    if be32(body, 0) != Some(DV_MAGIC) {
        return Err(Error::new(ErrorKind::BadMagic, off(body_at)));
    }
    if crc32fast::hash(body) != crc {
        return Err(Error::new(ErrorKind::ChecksumMismatch, off(body_end)));
    }
    let bitmap = body.get(4..).unwrap_or_default();
    let bitmap_at = off(body_at).saturating_add(4);
    check_bitmap_header(bitmap, bitmap_at)?;
    let mut reader = std::io::Cursor::new(bitmap);
    let dv = RoaringBitmap::deserialize_from(&mut reader)
        .map_err(|_| Error::new(ErrorKind::InvalidValue, bitmap_at))?;
    let used = reader.position();
    if used != off(bitmap.len()) {
        return Err(Error::new(
            ErrorKind::TrailingBytes,
            bitmap_at.saturating_add(used),
        ));
    }
    if cardinality.is_some_and(|c| u64::try_from(c).ok() != Some(dv.len())) {
        return Err(Error::new(ErrorKind::Mismatch, offset));
    }
    Ok(dv)
}

/// Bounds the container count of a portable RoaringBitmap before the decoder allocates.
fn check_bitmap_header(bitmap: &[u8], at: u64) -> Result<()> {
    /// Cookies of the portable format: with run containers (low 16 bits; high 16 bits the
    /// container count - 1), and without (the count follows).
    const COOKIE_RUNS: u32 = 12347;
    const COOKIE_NO_RUNS: u32 = 12346;
    let le32 = |i: usize| -> Option<u32> {
        let b: [u8; 4] = bitmap.get(i..i.checked_add(4)?)?.try_into().ok()?;
        Some(u32::from_le_bytes(b))
    };
    let cookie = le32(0).ok_or(Error::new(ErrorKind::Truncated, at))?;
    let containers = if cookie & 0xFFFF == COOKIE_RUNS {
        (cookie >> 16) + 1
    } else if cookie == COOKIE_NO_RUNS {
        le32(4).ok_or(Error::new(ErrorKind::Truncated, at.saturating_add(4)))?
    } else {
        return Err(Error::new(ErrorKind::BadMagic, at));
    };
    if containers > MAX_DV_CONTAINERS {
        return Err(Error::new(ErrorKind::LimitExceeded, at));
    }
    Ok(())
}

/// The live deletion files of a snapshot, by partition and bucket: see
/// [`Table::deletion_index`].
#[derive(Clone, Debug, Default)]
pub struct DeletionIndex {
    buckets: HashMap<(Vec<u8>, i32), HashMap<String, DeletionFile>>,
    /// The same keys by typed partition (its values' debug text), for partitions a writer
    /// laid out in other bytes.
    typed: HashMap<(String, i32), Vec<u8>>,
}

/// A partition's typed values as one comparable text (`None` when the schema cannot type it).
fn typed_key(schema: &TableSchema, partition: &[u8]) -> Option<String> {
    schema
        .partition_values(partition)
        .ok()
        .map(|v| alloc::format!("{v:?}"))
}

impl DeletionIndex {
    /// Whether no data file has a deletion vector.
    pub fn is_empty(&self) -> bool {
        self.buckets.values().all(HashMap::is_empty)
    }

    /// Every `(partition bytes, bucket, data file name -> deletion file)`.
    pub fn buckets(&self) -> impl Iterator<Item = (&[u8], i32, &HashMap<String, DeletionFile>)> {
        self.buckets
            .iter()
            .map(|((p, b), files)| (p.as_slice(), *b, files))
    }

    /// The deletion files of one partition and bucket: the partition matched by its bytes,
    /// else by its typed values through `schema` (writers may lay out equal partitions
    /// differently).
    pub fn bucket(
        &self,
        schema: &TableSchema,
        partition: &[u8],
        bucket: i32,
    ) -> Option<&HashMap<String, DeletionFile>> {
        if self.buckets.is_empty() {
            return None;
        }
        if let Some(files) = self.buckets.get(&(partition.to_vec(), bucket)) {
            return Some(files);
        }
        let bytes = self.typed.get(&(typed_key(schema, partition)?, bucket))?;
        self.buckets.get(&(bytes.clone(), bucket))
    }

    /// The deletion file of data file `name` in one partition and bucket.
    pub fn get(
        &self,
        schema: &TableSchema,
        partition: &[u8],
        bucket: i32,
        name: &str,
    ) -> Option<&DeletionFile> {
        self.bucket(schema, partition, bucket)?.get(name)
    }
}

impl Table {
    /// The path of a bucket index file: its external path, else under
    /// `<table>/index/` (or the bucket's directory with `index-file-in-data-file-dir`).
    fn index_file_path(&self, schema: &TableSchema, entry: &IndexManifestEntry) -> Result<String> {
        if let Some(p) = &entry.external_path {
            return Ok(p.clone());
        }
        if schema.index_file_in_data_file_dir {
            return Ok(alloc::format!(
                "{}/{}bucket-{}/{}",
                self.dir.display(),
                schema.partition_path(&entry.partition)?,
                entry.bucket,
                entry.file_name
            ));
        }
        Ok(alloc::format!(
            "{}/index/{}",
            self.dir.display(),
            entry.file_name
        ))
    }

    /// Reads `snapshot`'s index manifest (none: an empty index) and keeps its live
    /// `DELETION_VECTORS` entries (an ADD, unless a later DELETE names the same file of the
    /// same partition and bucket), as the deletion files of their data files.
    ///
    /// Errors: the index manifest cannot be read ([`ScanError::Io`]) or is invalid
    /// ([`ScanError::Invalid`]: kind and byte; a `_KIND` other than 0 or 1 and a negative
    /// offset or length are [`ErrorKind::InvalidValue`] at the record).
    pub fn deletion_index(
        &self,
        snapshot: &Snapshot,
        schema: &TableSchema,
    ) -> core::result::Result<DeletionIndex, ScanError> {
        let Some(name) = &snapshot.index_manifest else {
            return Ok(DeletionIndex::default());
        };
        let path = self.dir.join("manifest").join(name);
        let bytes = self.storage.read(&path).map_err(io_err(&path))?;
        let entries = decode_index_manifest(&bytes).map_err(invalid(&path))?;
        // Live index files in manifest order: (partition, bucket, file name) -> entry.
        let mut live: Vec<&IndexManifestEntry> = Vec::new();
        for e in entries.iter().filter(|e| e.index_type == DELETION_VECTORS) {
            let same = |l: &&IndexManifestEntry| {
                l.partition == e.partition && l.bucket == e.bucket && l.file_name == e.file_name
            };
            live.retain(|l| !same(l));
            if e.kind == 0 {
                live.push(e);
            }
        }
        let mut index = DeletionIndex::default();
        for e in live {
            let file_path = self.index_file_path(schema, e).map_err(invalid(&path))?;
            if let Some(key) = typed_key(schema, &e.partition) {
                index.typed.insert((key, e.bucket), e.partition.clone());
            }
            let files = index
                .buckets
                .entry((e.partition.clone(), e.bucket))
                .or_default();
            for dv in &e.deletion_vectors {
                // Non-negative: checked by the decoder.
                let offset = u64::try_from(dv.offset).unwrap_or(u64::MAX);
                let length = u64::try_from(dv.length).unwrap_or(u64::MAX);
                files.insert(
                    dv.data_file.clone(),
                    DeletionFile {
                        path: file_path.clone(),
                        offset,
                        length,
                        cardinality: dv.cardinality,
                    },
                );
            }
        }
        Ok(index)
    }

    /// Reads one deletion vector: the index file from the table's storage, checked and
    /// decoded by [`read_deletion_vector`] (errors name the index file and the byte).
    pub fn read_deletion_vector(
        &self,
        file: &DeletionFile,
    ) -> core::result::Result<RoaringBitmap, ScanError> {
        let path = Path::new(&file.path);
        let bytes = self.storage.read(path).map_err(io_err(path))?;
        read_deletion_vector(&bytes, file.offset, Some(file.length), file.cardinality)
            .map_err(invalid(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deletion-vector index file holding one vector around `bitmap`, framed as Paimon's
    /// writers frame it (version, size, magic, bitmap, CRC-32).
    fn index_file(bitmap: &[u8]) -> Vec<u8> {
        let mut body = DV_MAGIC.to_be_bytes().to_vec();
        body.extend_from_slice(bitmap);
        let mut file = alloc::vec![DV_INDEX_VERSION];
        file.extend_from_slice(&(body.len() as u32).to_be_bytes());
        file.extend_from_slice(&body);
        file.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
        file
    }

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Run containers, as Java's `runOptimize` and pyroaring leave them: bytes written by
    /// pyroaring 1.2.0 (CRoaring) for `BitMap(range(100, 300) + [70000, 70001, 70002, 70010])`
    /// after `run_optimize()`.
    #[test]
    fn run_containers_from_croaring_decode() {
        let bitmap = hex("3b300100010000c7000100030001006400c7007011711172117a11");
        let file = index_file(&bitmap);
        let dv = read_deletion_vector(&file, 1, Some(4 + bitmap.len() as u64), Some(204)).unwrap();
        let want: Vec<u32> = (100..300).chain([70000, 70001, 70002, 70010]).collect();
        assert_eq!(dv.iter().collect::<Vec<_>>(), want);
        // A cardinality other than the entry's is a mismatch at the vector.
        let e = read_deletion_vector(&file, 1, None, Some(203)).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::Mismatch, 1));
        // Bytes left after the bitmap.
        let mut long = bitmap.clone();
        long.push(0);
        let e = read_deletion_vector(&index_file(&long), 1, None, None).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::TrailingBytes, 9 + 27));
    }

    #[test]
    fn container_counts_are_bounded_before_decoding() {
        // No-run cookie, 20,000 containers declared and nothing behind them.
        let mut bitmap = 12346u32.to_le_bytes().to_vec();
        bitmap.extend_from_slice(&20_000u32.to_le_bytes());
        let e = read_deletion_vector(&index_file(&bitmap), 1, None, None).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::LimitExceeded, 9));
        // A run cookie declaring 65,536 containers.
        let bitmap = (12347u32 | (0xFFFF << 16)).to_le_bytes();
        let e = read_deletion_vector(&index_file(&bitmap), 1, None, None).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::LimitExceeded, 9));
        // Within the limit but truncated: the decoder's error at the bitmap.
        let mut bitmap = 12346u32.to_le_bytes().to_vec();
        bitmap.extend_from_slice(&3u32.to_le_bytes());
        let e = read_deletion_vector(&index_file(&bitmap), 1, None, None).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::InvalidValue, 9));
        // An unknown cookie.
        let e = read_deletion_vector(&index_file(&[1, 2, 3, 4]), 1, None, None).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::BadMagic, 9));
        // A size beyond the limit is refused before the bytes are looked at.
        let mut file = alloc::vec![DV_INDEX_VERSION];
        file.extend_from_slice(&u32::MAX.to_be_bytes());
        let e = read_deletion_vector(&file, 1, None, None).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::LimitExceeded, 1));
    }
}
