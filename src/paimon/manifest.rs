//! Paimon manifests and manifest lists (feature `paimon`) read in place: the writer schema
//! is compiled once per file ([`crate::codec::avro::Schema`]), every record is walked in the
//! decompressed block without allocation, and the fields come back as borrowed views
//! ([`ManifestEntry`]); statistics, keys and embedded indexes a caller does not ask for are
//! stepped over by their lengths. Blocks decompress into one reused buffer
//! ([`Decompressor`]). The sidecar builder's front end is [`build_from_manifest`].

use super::compression::{Codec, Decompressor};
use crate::codec::avro::read_long;
use crate::codec::avro::{AvroBlock, Container, ItemIter, Projection, Schema, Value};
use crate::cursor::Cursor;
use crate::error::{off, Error, ErrorKind, Result};
use crate::sidecar::{BuildSettings, EntryCoverage, SidecarBuilder};
use alloc::string::String;
use alloc::vec::Vec;

pub use super::compression::MAX_BLOCK_BYTES;

/// The largest decompressed size of all blocks of one container together: 1 GiB
/// ([`ErrorKind::LimitExceeded`] at the data of the block that crosses it).
pub const MAX_DECODED_BYTES: usize = 1 << 30;

macro_rules! fields {
    ($paths:ident, $count:ident; $($name:ident = $path:literal,)*) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms, clippy::enum_variant_names, dead_code)]
        #[derive(Clone, Copy)]
        pub(super) enum F { $($name,)* }
        const $paths: &[&str] = &[$($path,)*];
        const $count: usize = $paths.len();
    };
}

mod entry_fields {
    fields! { PATHS, COUNT;
        KIND = "_KIND",
        PARTITION = "_PARTITION",
        BUCKET = "_BUCKET",
        TOTAL_BUCKETS = "_TOTAL_BUCKETS",
        FILE_NAME = "_FILE._FILE_NAME",
        FILE_SIZE = "_FILE._FILE_SIZE",
        ROW_COUNT = "_FILE._ROW_COUNT",
        MIN_KEY = "_FILE._MIN_KEY",
        MAX_KEY = "_FILE._MAX_KEY",
        KEY_STATS = "_FILE._KEY_STATS",
        VALUE_STATS = "_FILE._VALUE_STATS",
        MIN_SEQ = "_FILE._MIN_SEQUENCE_NUMBER",
        MAX_SEQ = "_FILE._MAX_SEQUENCE_NUMBER",
        SCHEMA_ID = "_FILE._SCHEMA_ID",
        LEVEL = "_FILE._LEVEL",
        EXTRA_FILES = "_FILE._EXTRA_FILES",
        CREATION_TIME = "_FILE._CREATION_TIME",
        DELETE_ROW_COUNT = "_FILE._DELETE_ROW_COUNT",
        EMBEDDED_INDEX = "_FILE._EMBEDDED_FILE_INDEX",
        FILE_SOURCE = "_FILE._FILE_SOURCE",
        VALUE_STATS_COLS = "_FILE._VALUE_STATS_COLS",
        EXTERNAL_PATH = "_FILE._EXTERNAL_PATH",
        FIRST_ROW_ID = "_FILE._FIRST_ROW_ID",
        WRITE_COLS = "_FILE._WRITE_COLS",
    }
    pub(super) use F as Field;
    pub(super) const ENTRY_PATHS: &[&str] = PATHS;
    pub(super) const ENTRY_FIELDS: usize = COUNT;
}
use entry_fields::{Field as EF, ENTRY_FIELDS, ENTRY_PATHS};

/// One manifest entry, borrowed from its decompressed block: every accessor is O(1).
/// Fields the writer schema lacks read as `None`.
#[derive(Clone, Copy, Debug)]
pub struct ManifestEntry<'a> {
    values: [Value<'a>; ENTRY_FIELDS],
    /// Absolute offset of the block's data (where errors in this entry are reported).
    pub block_offset: u64,
    /// The entry's position in its block (0 = the block's first record).
    pub index: u32,
}

impl<'a> ManifestEntry<'a> {
    fn get(&self, f: EF) -> Value<'a> {
        self.values
            .get(f as usize)
            .copied()
            .unwrap_or(Value::Absent)
    }
    fn int(&self, f: EF) -> Option<i32> {
        self.get(f).as_i32()
    }
    fn long(&self, f: EF) -> Option<i64> {
        self.get(f).as_i64()
    }
    fn bytes(&self, f: EF) -> Option<&'a [u8]> {
        self.get(f).as_bytes()
    }

    /// `_KIND`: 0 = ADD, 1 = DELETE.
    pub fn kind(&self) -> Option<i32> {
        self.int(EF::KIND)
    }
    /// `_PARTITION`: the partition as a BinaryRow with its 4-byte arity prefix.
    pub fn partition(&self) -> Option<&'a [u8]> {
        self.bytes(EF::PARTITION)
    }
    /// `_BUCKET`.
    pub fn bucket(&self) -> Option<i32> {
        self.int(EF::BUCKET)
    }
    /// `_TOTAL_BUCKETS`.
    pub fn total_buckets(&self) -> Option<i32> {
        self.int(EF::TOTAL_BUCKETS)
    }
    /// `_FILE._FILE_NAME` (UTF-8 checked).
    pub fn file_name(&self) -> Option<&'a str> {
        self.get(EF::FILE_NAME).as_str()
    }
    /// `_FILE._FILE_SIZE`.
    pub fn file_size(&self) -> Option<i64> {
        self.long(EF::FILE_SIZE)
    }
    /// `_FILE._ROW_COUNT`.
    pub fn row_count(&self) -> Option<i64> {
        self.long(EF::ROW_COUNT)
    }
    /// `_FILE._MIN_KEY` (BinaryRow).
    pub fn min_key(&self) -> Option<&'a [u8]> {
        self.bytes(EF::MIN_KEY)
    }
    /// `_FILE._MAX_KEY` (BinaryRow).
    pub fn max_key(&self) -> Option<&'a [u8]> {
        self.bytes(EF::MAX_KEY)
    }
    /// `_FILE._KEY_STATS`: the encoded stats record (`_MIN_VALUES`, `_MAX_VALUES`,
    /// `_NULL_COUNTS`), `None` when null.
    pub fn key_stats(&self) -> Option<&'a [u8]> {
        match self.get(EF::KEY_STATS) {
            Value::Record(r) => Some(r),
            _ => None,
        }
    }
    /// `_FILE._VALUE_STATS`: the encoded stats record, `None` when null.
    pub fn value_stats(&self) -> Option<&'a [u8]> {
        match self.get(EF::VALUE_STATS) {
            Value::Record(r) => Some(r),
            _ => None,
        }
    }
    /// `_FILE._MIN_SEQUENCE_NUMBER`.
    pub fn min_sequence_number(&self) -> Option<i64> {
        self.long(EF::MIN_SEQ)
    }
    /// `_FILE._MAX_SEQUENCE_NUMBER`.
    pub fn max_sequence_number(&self) -> Option<i64> {
        self.long(EF::MAX_SEQ)
    }
    /// `_FILE._SCHEMA_ID`.
    pub fn schema_id(&self) -> Option<i64> {
        self.long(EF::SCHEMA_ID)
    }
    /// `_FILE._LEVEL`.
    pub fn level(&self) -> Option<i32> {
        self.int(EF::LEVEL)
    }
    /// `_FILE._CREATION_TIME` (milliseconds since the epoch).
    pub fn creation_time(&self) -> Option<i64> {
        self.long(EF::CREATION_TIME)
    }
    /// `_FILE._DELETE_ROW_COUNT`.
    pub fn delete_row_count(&self) -> Option<i64> {
        self.long(EF::DELETE_ROW_COUNT)
    }
    /// `_FILE._EMBEDDED_FILE_INDEX`.
    pub fn embedded_index(&self) -> Option<&'a [u8]> {
        self.bytes(EF::EMBEDDED_INDEX)
    }
    /// `_FILE._FILE_SOURCE` (0 = APPEND, 1 = COMPACT).
    pub fn file_source(&self) -> Option<i32> {
        self.int(EF::FILE_SOURCE)
    }
    /// `_FILE._EXTERNAL_PATH`.
    pub fn external_path(&self) -> Option<&'a str> {
        self.get(EF::EXTERNAL_PATH).as_str()
    }
    /// `_FILE._FIRST_ROW_ID`.
    pub fn first_row_id(&self) -> Option<i64> {
        self.long(EF::FIRST_ROW_ID)
    }
    /// `_FILE._VALUE_STATS_COLS`: the columns the value statistics cover, in order (`None`
    /// when null or absent: every column of the file's schema).
    pub fn value_stats_cols(&self) -> Option<StatsCols<'a>> {
        match self.get(EF::VALUE_STATS_COLS) {
            Value::Items(items) => Some(StatsCols(items)),
            _ => None,
        }
    }

    /// `_FILE._WRITE_COLS`: the columns a data-evolution file was written for (`None` when
    /// null or absent: every column).
    pub fn write_cols_list(&self) -> Option<StatsCols<'a>> {
        match self.get(EF::WRITE_COLS) {
            Value::Items(items) => Some(StatsCols(items)),
            _ => None,
        }
    }

    /// Whether the writer schema has `_FILE._WRITE_COLS` and it is not null.
    pub fn has_write_cols(&self) -> bool {
        matches!(self.get(EF::WRITE_COLS), Value::Items(_))
    }
}

/// Column names of `_VALUE_STATS_COLS` or `_WRITE_COLS` (an Avro `array<string>`, walked in
/// place).
#[derive(Clone, Copy, Debug)]
pub struct StatsCols<'a>(crate::codec::avro::Items<'a>);

impl StatsCols<'_> {
    /// The position of column `name`, `None` when absent or the array is malformed.
    pub fn position(&self, name: &str) -> Option<u32> {
        let mut c = Cursor::new(self.0.bytes());
        let mut i = 0u32;
        loop {
            let count = read_long(&mut c).ok()?;
            if count == 0 {
                return None;
            }
            if count < 0 {
                read_long(&mut c).ok()?;
            }
            for _ in 0..count.unsigned_abs() {
                if read_bytes(&mut c).ok()? == name.as_bytes() {
                    return Some(i);
                }
                i = i.checked_add(1)?;
            }
        }
    }
}

/// The `_MIN_VALUES` and `_MAX_VALUES` rows of an encoded stats record (see
/// [`ManifestEntry::value_stats`]); `None` when malformed.
pub fn stats_bounds(record: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut c = Cursor::new(record);
    let min = read_bytes(&mut c).ok()?;
    let max = read_bytes(&mut c).ok()?;
    Some((min, max))
}

/// The `_NULL_COUNTS` entry of field `index` in an encoded stats record (`None` when the
/// counts are null, absent, unknown for that field, or malformed).
pub fn stats_null_count(record: &[u8], index: u32) -> Option<i64> {
    let mut c = Cursor::new(record);
    read_bytes(&mut c).ok()?;
    read_bytes(&mut c).ok()?;
    if read_long(&mut c).ok()? != 1 {
        return None;
    }
    let mut i = 0u32;
    loop {
        let count = read_long(&mut c).ok()?;
        if count == 0 {
            return None;
        }
        if count < 0 {
            read_long(&mut c).ok()?;
        }
        for _ in 0..count.unsigned_abs() {
            let value = match read_long(&mut c).ok()? {
                0 => None,
                1 => Some(read_long(&mut c).ok()?),
                _ => return None,
            };
            if i == index {
                return value;
            }
            i = i.checked_add(1)?;
        }
    }
}

/// The strings of an array field (`_EXTRA_FILES`, `_WRITE_COLS`, ...); empty when the field
/// is null or absent. Items that are not valid strings end the iteration with an error.
pub struct Strings<'e, 'f>(Option<ItemIter<'e, 'f>>);

impl<'e> Iterator for Strings<'e, '_> {
    type Item = Result<&'e str>;
    fn next(&mut self) -> Option<Self::Item> {
        let v = self.0.as_mut()?.next()?;
        Some(v.and_then(|v| v.as_str().ok_or(Error::new(ErrorKind::InvalidValue, 0))))
    }
}

/// A manifest file opened in place: its container, its compiled writer schema and the entry
/// projection. Decode blocks with [`Manifest::entries`].
///
/// ```
/// use lakecore::paimon::manifest::Manifest;
/// use lakecore::paimon::compression::Decompressor;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0");
/// let bytes = std::fs::read(path).unwrap();
/// let manifest = Manifest::parse(&bytes)?;
/// let mut dec = manifest.decompressor();
/// let mut entries = 0;
/// for block in manifest.container().blocks() {
///     manifest.entries(&block?, &mut dec, |e| {
///         assert_eq!(e.total_buckets(), Some(4));
///         assert!(e.file_name().is_some_and(|n| n.ends_with(".parquet")));
///         entries += 1;
///         Ok(())
///     })?;
/// }
/// assert_eq!(entries, 364);
/// # Ok::<(), lakecore::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Manifest<'f> {
    container: Container<'f>,
    schema: Schema<'f>,
    projection: Projection,
    codec: Codec,
}

/// Where the schema JSON of `container` starts, for error offsets.
fn schema_json<'f>(container: &Container<'f>, file: &'f [u8]) -> Result<(&'f [u8], u64)> {
    let json = container
        .metadata("avro.schema")
        .ok_or(Error::new(ErrorKind::InvalidValue, 4))?;
    let at = (json.as_ptr() as usize).wrapping_sub(file.as_ptr() as usize);
    Ok((json, off(at)))
}

/// The writer schema JSON in the container header of `file` (the header parsed, nothing
/// compiled).
pub(super) fn header_schema_json(file: &[u8]) -> Result<&[u8]> {
    let container = Container::parse(file)?;
    schema_json(&container, file).map(|(json, _)| json)
}

fn codec_of(container: &Container<'_>) -> Result<Codec> {
    Codec::from_name(container.codec(), 4)
}

/// A manifest writer schema compiled once, with its entry projection, for the manifests
/// that carry the same schema JSON ([`Manifest::parse_known`]): the manifests of a table
/// normally share one, and compiling it costs more than decoding a small manifest.
#[derive(Clone, Debug)]
pub struct KnownSchema<'s> {
    compiled: CompiledSchema<'s>,
}

impl<'s> KnownSchema<'s> {
    /// Compiles the manifest schema `json` (a manifest's `avro.schema` metadata).
    pub fn parse(json: &'s [u8]) -> Result<Self> {
        CompiledSchema::compile(json, 0, ENTRY_PATHS).map(|compiled| KnownSchema { compiled })
    }

    /// The schema JSON it was compiled from.
    pub fn json(&self) -> &'s [u8] {
        self.compiled.json
    }
}

/// A writer schema compiled with its projection, and the JSON it was compiled from: what a
/// file of the same schema JSON reuses instead of compiling it again (a table's manifests
/// normally share one, and a snapshot's base and delta manifest lists another).
#[derive(Clone, Debug)]
pub(super) struct CompiledSchema<'s> {
    json: &'s [u8],
    schema: Schema<'s>,
    projection: Projection,
}

impl<'s> CompiledSchema<'s> {
    /// Compiles `json` (found at file offset `at`) and projects `paths`.
    fn compile(json: &'s [u8], at: u64, paths: &[&str]) -> Result<Self> {
        let schema = Schema::parse(json, at)?;
        let projection = schema.project(paths)?;
        Ok(CompiledSchema {
            json,
            schema,
            projection,
        })
    }
}

impl<'f> Manifest<'f> {
    /// Parses the container header of the manifest `bytes`, compiles its writer schema and
    /// resolves the entry fields by name.
    pub fn parse(bytes: &'f [u8]) -> Result<Self> {
        Self::parse_known(bytes, None)
    }

    /// [`parse`](Self::parse), taking the compiled schema from `known` when the manifest's
    /// schema JSON is byte for byte the one `known` was compiled from.
    ///
    /// ```
    /// use lakecore::paimon::manifest::{KnownSchema, Manifest};
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs/manifest");
    /// let first = std::fs::read(format!("{dir}/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0"))?;
    /// let second = std::fs::read(format!("{dir}/manifest-08ffec21-26cc-42f1-9642-a13ce7b1220a-0"))?;
    /// let json = Manifest::parse(&first)?.schema_json().to_vec();
    /// let known = KnownSchema::parse(&json)?;
    /// // The same writer schema: compiled once, for both.
    /// let manifest = Manifest::parse_known(&second, Some(&known))?;
    /// assert_eq!(manifest.schema_json(), known.json());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn parse_known(bytes: &'f [u8], known: Option<&KnownSchema<'f>>) -> Result<Self> {
        let container = Container::parse(bytes)?;
        let (json, at) = schema_json(&container, bytes)?;
        let CompiledSchema {
            schema, projection, ..
        } = match known.map(|k| &k.compiled).filter(|k| k.json == json) {
            Some(k) => k.clone(),
            None => CompiledSchema::compile(json, at, ENTRY_PATHS)?,
        };
        let codec = codec_of(&container)?;
        Ok(Manifest {
            container,
            schema,
            projection,
            codec,
        })
    }

    /// The writer schema's JSON (the `avro.schema` metadata).
    pub fn schema_json(&self) -> &'f [u8] {
        self.container.metadata("avro.schema").unwrap_or_default()
    }

    /// The container (header, metadata, blocks).
    pub fn container(&self) -> &Container<'f> {
        &self.container
    }

    /// The compiled writer schema.
    pub fn schema(&self) -> &Schema<'f> {
        &self.schema
    }

    /// The block codec.
    pub fn codec(&self) -> Codec {
        self.codec
    }

    /// A decompressor for this file's codec (reuse it across blocks and files).
    pub fn decompressor(&self) -> Decompressor {
        Decompressor::new(self.codec)
    }

    fn strings<'e>(&'e self, entry: &ManifestEntry<'e>, f: EF) -> Strings<'e, 'f> {
        Strings(match entry.get(f) {
            Value::Items(items) => Some(self.schema.items(items)),
            _ => None,
        })
    }

    /// The `_FILE._EXTRA_FILES` names of an entry read from this manifest.
    pub fn extra_files<'e>(&'e self, entry: &ManifestEntry<'e>) -> Strings<'e, 'f> {
        self.strings(entry, EF::EXTRA_FILES)
    }

    /// The `_FILE._WRITE_COLS` names of an entry (empty when null or absent).
    pub fn write_cols<'e>(&'e self, entry: &ManifestEntry<'e>) -> Strings<'e, 'f> {
        self.strings(entry, EF::WRITE_COLS)
    }

    /// The `_FILE._VALUE_STATS_COLS` names of an entry (empty when null or absent: all
    /// columns).
    pub fn value_stats_cols<'e>(&'e self, entry: &ManifestEntry<'e>) -> Strings<'e, 'f> {
        self.strings(entry, EF::VALUE_STATS_COLS)
    }

    /// Decodes the records of `block` (decompressed with `dec`) and hands each entry to `f`
    /// in order; no allocation per entry. Errors: the codec's, the datum walk's
    /// ([`ErrorKind::InvalidValue`], [`ErrorKind::Truncated`], ... at the block's data),
    /// [`ErrorKind::InvalidLength`] for an object count the data cannot hold,
    /// [`ErrorKind::TrailingBytes`] for data after the last record; and any error `f`
    /// returns.
    pub fn entries(
        &self,
        block: &AvroBlock<'f>,
        dec: &mut Decompressor,
        mut f: impl FnMut(&ManifestEntry<'_>) -> Result<()>,
    ) -> Result<()> {
        dec.set_codec(self.codec);
        let at = block.data_offset;
        let data = dec.block(block.data, at)?;
        let stored = self.codec == Codec::Null;
        // Offsets inside decompressed data are not file offsets: report the block's data.
        let relocate = |e: Error| if stored { e } else { Error::new(e.kind, at) };
        check_count(&self.schema, block, data.len())?;
        let mut c = Cursor::with_origin(data, if stored { at } else { 0 });
        let mut entry = ManifestEntry {
            values: [Value::Absent; ENTRY_FIELDS],
            block_offset: at,
            index: 0,
        };
        for i in 0..block.object_count {
            entry.index = u32::try_from(i).unwrap_or(u32::MAX);
            self.schema
                .read(&self.projection, &mut c, &mut entry.values)
                .map_err(relocate)?;
            f(&entry)?;
        }
        if !c.is_empty() {
            return Err(relocate(c.error(ErrorKind::TrailingBytes)));
        }
        Ok(())
    }
}

fn check_count(schema: &Schema<'_>, block: &AvroBlock<'_>, len: usize) -> Result<()> {
    let bound = if schema.datum_nonzero() {
        off(len)
    } else {
        crate::codec::avro::MAX_EMPTY_ITEMS
    };
    if block.object_count > bound {
        return Err(Error::new(ErrorKind::InvalidLength, block.offset));
    }
    Ok(())
}

/// The manifest-entry fields of one entry, owned (see [`decode_entries`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedEntry {
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

impl DecodedEntry {
    fn of(e: &ManifestEntry<'_>, block: usize) -> Self {
        DecodedEntry {
            block,
            kind: e.kind(),
            file_name: e.file_name().map(String::from),
            partition: e.partition().map(<[u8]>::to_vec),
            bucket: e.bucket(),
            total_buckets: e.total_buckets(),
            first_row_id: e.first_row_id(),
            row_count: e.row_count(),
        }
    }
}

/// Decodes every manifest entry of the container `bytes` into owned values (for callers
/// that keep them, e.g. the sidecar builder), with the block list. Errors point at the
/// offending schema byte or block data; [`MAX_DECODED_BYTES`] bounds the whole file.
///
/// ```
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0");
/// let manifest = std::fs::read(path).unwrap();
/// let (_container, blocks, entries) = lakecore::paimon::manifest::decode_entries(&manifest)?;
/// assert_eq!((blocks.len(), entries.len()), (6, 364));
/// assert!(entries.iter().all(|e| e.total_buckets == Some(4)));
/// # Ok::<(), lakecore::Error>(())
/// ```
#[allow(clippy::type_complexity)]
pub fn decode_entries(
    bytes: &[u8],
) -> Result<(Container<'_>, Vec<AvroBlock<'_>>, Vec<DecodedEntry>)> {
    let manifest = Manifest::parse(bytes)?;
    let mut dec = manifest.decompressor();
    let mut blocks = Vec::new();
    let mut entries = Vec::new();
    let mut decoded = 0usize;
    for (index, block) in manifest.container.blocks().enumerate() {
        let block = block?;
        manifest.entries(&block, &mut dec, |e| {
            entries.push(DecodedEntry::of(e, index));
            Ok(())
        })?;
        decoded = decoded.saturating_add(dec_len(&manifest, &block, &dec));
        if decoded > MAX_DECODED_BYTES {
            return Err(Error::new(ErrorKind::LimitExceeded, block.data_offset));
        }
        blocks.push(block);
    }
    Ok((manifest.container, blocks, entries))
}

fn dec_len(manifest: &Manifest<'_>, block: &AvroBlock<'_>, dec: &Decompressor) -> usize {
    if manifest.codec == Codec::Null {
        block.data.len()
    } else {
        dec.last_len()
    }
}

mod list_fields {
    fields! { PATHS, COUNT;
        FILE_NAME = "_FILE_NAME",
        FILE_SIZE = "_FILE_SIZE",
        NUM_ADDED = "_NUM_ADDED_FILES",
        NUM_DELETED = "_NUM_DELETED_FILES",
        PARTITION_STATS = "_PARTITION_STATS",
        SCHEMA_ID = "_SCHEMA_ID",
        MIN_BUCKET = "_MIN_BUCKET",
        MAX_BUCKET = "_MAX_BUCKET",
        MIN_LEVEL = "_MIN_LEVEL",
        MAX_LEVEL = "_MAX_LEVEL",
        MIN_ROW_ID = "_MIN_ROW_ID",
        MAX_ROW_ID = "_MAX_ROW_ID",
        TOTAL_BUCKETS = "_TOTAL_BUCKETS",
        EXTRA_FILES = "_EXTRA_FILES",
    }
    pub(super) use F as Field;
    pub(super) const LIST_PATHS: &[&str] = PATHS;
    pub(super) const LIST_FIELDS: usize = COUNT;
}
use list_fields::{Field as LF, LIST_FIELDS, LIST_PATHS};

/// Min/max statistics of a set of BinaryRows (`_PARTITION_STATS`, `_KEY_STATS`,
/// `_VALUE_STATS`): each a BinaryRow with its 4-byte arity prefix, and per-field null counts
/// (`None` where unknown).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowStats {
    /// `_MIN_VALUES`.
    pub min: Vec<u8>,
    /// `_MAX_VALUES`.
    pub max: Vec<u8>,
    /// `_NULL_COUNTS` (empty when null).
    pub null_counts: Vec<Option<i64>>,
}

/// One `ManifestFileMeta` record of a manifest list.
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
    /// `_PARTITION_STATS` (`None` when null or absent).
    pub partition_stats: Option<RowStats>,
    /// `_SCHEMA_ID`.
    pub schema_id: Option<i64>,
    /// `_MIN_BUCKET` / `_MAX_BUCKET`.
    pub bucket_range: Option<(i32, i32)>,
    /// `_MIN_LEVEL` / `_MAX_LEVEL`.
    pub level_range: Option<(i32, i32)>,
    /// `_MIN_ROW_ID` / `_MAX_ROW_ID`.
    pub row_id_range: Option<(i64, i64)>,
    /// `_TOTAL_BUCKETS`.
    pub total_buckets: Option<i32>,
    /// `_EXTRA_FILES` (empty when null or absent from the schema).
    pub extra_files: Vec<String>,
    /// The manifest's position in its list; the planner renumbers the snapshot's manifests
    /// (base list, then delta list) so that, with an entry's block and index, it orders the
    /// snapshot's entries as the clients read them.
    pub position: u32,
}

/// Decodes a stats record (`_MIN_VALUES: bytes`, `_MAX_VALUES: bytes`, `_NULL_COUNTS:
/// ["null", array<["null", long]>]`, the layout every Paimon writer uses).
fn row_stats(v: Value<'_>, at: u64) -> Result<Option<RowStats>> {
    let Value::Record(bytes) = v else {
        return Ok(None);
    };
    let bad = Error::new(ErrorKind::InvalidValue, at);
    // The record's own fields, read with a sub-schema walk: min, max, null counts.
    let mut c = Cursor::new(bytes);
    let min = read_bytes(&mut c).map_err(|_| bad)?;
    let max = read_bytes(&mut c).map_err(|_| bad)?;
    let mut null_counts = Vec::new();
    // ["null", array<["null", long]>]
    match read_long(&mut c).map_err(|_| bad)? {
        0 => {}
        1 => loop {
            let n = read_long(&mut c).map_err(|_| bad)?;
            if n == 0 {
                break;
            }
            if n < 0 {
                read_long(&mut c).map_err(|_| bad)?;
            }
            for _ in 0..n.unsigned_abs() {
                match read_long(&mut c).map_err(|_| bad)? {
                    0 => null_counts.push(None),
                    1 => null_counts.push(Some(read_long(&mut c).map_err(|_| bad)?)),
                    _ => return Err(bad),
                }
                if null_counts.len() > bytes.len() {
                    return Err(bad);
                }
            }
        },
        _ => return Err(bad),
    }
    Ok(Some(RowStats {
        min: min.to_vec(),
        max: max.to_vec(),
        null_counts,
    }))
}

fn read_bytes<'a>(c: &mut Cursor<'a>) -> Result<&'a [u8]> {
    let at = c.position();
    let n = read_long(c)?;
    let n = u64::try_from(n).map_err(|_| Error::new(ErrorKind::InvalidLength, at))?;
    c.bytes_u64(n)
}

/// Decodes every `ManifestFileMeta` record of the manifest-list container `bytes`.
///
/// ```
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/part_append_rs/manifest");
/// let name = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap())
///     .filter(|n| n.starts_with("manifest-list-")).min().unwrap();
/// let list = lakecore::paimon::manifest::decode_manifest_list(&std::fs::read(format!("{dir}/{name}")).unwrap())?;
/// assert!(list.iter().all(|m| m.file_name.starts_with("manifest-") && m.file_size > 0));
/// assert!(list.iter().all(|m| m.partition_stats.is_some()));
/// # Ok::<(), lakecore::Error>(())
/// ```
pub fn decode_manifest_list(bytes: &[u8]) -> Result<Vec<ManifestFileMeta>> {
    decode_list(bytes, None).map(|(list, _)| list)
}

/// [`decode_manifest_list`], with the schema `known` compiled when the list's schema JSON is
/// the same; otherwise compiled here and returned with the entries (a snapshot's base and
/// delta lists normally share one).
pub(super) fn decode_list<'s>(
    bytes: &'s [u8],
    known: Option<&CompiledSchema<'_>>,
) -> Result<(Vec<ManifestFileMeta>, Option<CompiledSchema<'s>>)> {
    let container = Container::parse(bytes)?;
    let (json, at) = schema_json(&container, bytes)?;
    let mut fresh = None;
    let CompiledSchema {
        schema, projection, ..
    } = match known.filter(|k| k.json == json) {
        Some(k) => k,
        None => &*fresh.insert(CompiledSchema::compile(json, at, LIST_PATHS)?),
    };
    let codec = codec_of(&container)?;
    let stored = codec == Codec::Null;
    let mut out = Vec::new();
    each_decoded_block(&container, codec, |block, data| {
        let at = block.data_offset;
        let relocate = |e: Error| if stored { e } else { Error::new(e.kind, at) };
        check_count(schema, block, data.len())?;
        let mut c = Cursor::with_origin(data, if stored { at } else { 0 });
        let mut v = [Value::Absent; LIST_FIELDS];
        for _ in 0..block.object_count {
            let rec_at = if stored { c.position() } else { at };
            schema.read(projection, &mut c, &mut v).map_err(relocate)?;
            let bad = Error::new(ErrorKind::InvalidValue, rec_at);
            let get = |f: LF| v.get(f as usize).copied().unwrap_or(Value::Absent);
            let pair_i32 = |a: LF, b: LF| get(a).as_i32().zip(get(b).as_i32());
            let extra_files = match get(LF::EXTRA_FILES) {
                Value::Items(items) => schema
                    .items(items)
                    .map(|s| {
                        s.map_err(relocate)
                            .and_then(|s| s.as_str().map(String::from).ok_or(bad))
                    })
                    .collect::<Result<Vec<_>>>()?,
                _ => Vec::new(),
            };
            out.push(ManifestFileMeta {
                file_name: get(LF::FILE_NAME).as_str().ok_or(bad)?.into(),
                file_size: get(LF::FILE_SIZE).as_i64().ok_or(bad)?,
                num_added_files: get(LF::NUM_ADDED).as_i64().ok_or(bad)?,
                num_deleted_files: get(LF::NUM_DELETED).as_i64().ok_or(bad)?,
                partition_stats: row_stats(get(LF::PARTITION_STATS), rec_at)?,
                schema_id: get(LF::SCHEMA_ID).as_i64(),
                bucket_range: pair_i32(LF::MIN_BUCKET, LF::MAX_BUCKET),
                level_range: pair_i32(LF::MIN_LEVEL, LF::MAX_LEVEL),
                row_id_range: get(LF::MIN_ROW_ID)
                    .as_i64()
                    .zip(get(LF::MAX_ROW_ID).as_i64()),
                total_buckets: get(LF::TOTAL_BUCKETS).as_i32(),
                extra_files,
                position: u32::try_from(out.len()).unwrap_or(u32::MAX),
            });
        }
        if !c.is_empty() {
            return Err(relocate(c.error(ErrorKind::TrailingBytes)));
        }
        Ok(())
    })?;
    Ok((out, fresh))
}

/// Hands `f` each block of `container` with its data, decompressed by the thread's
/// decompressor set to `codec` (a zstandard context costs more to create than a small
/// manifest list costs to decode), holding the data decoded from the file under
/// [`MAX_DECODED_BYTES`] ([`ErrorKind::LimitExceeded`] at the block that crosses it).
pub(super) fn each_decoded_block<'f>(
    container: &Container<'f>,
    codec: Codec,
    mut f: impl FnMut(&AvroBlock<'f>, &[u8]) -> Result<()>,
) -> Result<()> {
    let mut decoded = 0usize;
    super::compression::with_decompressor(codec, |dec| {
        for block in container.blocks() {
            let block = block?;
            let at = block.data_offset;
            let data = dec.block(block.data, at)?;
            decoded = decoded.saturating_add(data.len());
            if decoded > MAX_DECODED_BYTES {
                return Err(Error::new(ErrorKind::LimitExceeded, at));
            }
            f(&block, data)?;
        }
        Ok(())
    })
}

/// Builds the sidecar of the completed manifest `bytes`: scans the container, decodes each
/// block's entries, pairs them with the block and serialises. Nothing is written or
/// published.
///
/// ```
/// use lakecore::sidecar::{BuildSettings, Sidecar};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0");
/// let manifest = std::fs::read(path).unwrap();
/// let bytes = lakecore::paimon::manifest::build_from_manifest(&manifest, BuildSettings::default())?;
/// let sidecar = Sidecar::parse(&bytes)?;
/// assert_eq!((sidecar.block_count(), sidecar.entry_count()), (6, 364));
/// assert_eq!(sidecar.manifest_length(), manifest.len() as u64);
/// # Ok::<(), lakecore::Error>(())
/// ```
pub fn build_from_manifest(bytes: &[u8], settings: BuildSettings) -> Result<Vec<u8>> {
    let manifest = Manifest::parse(bytes)?;
    let mut dec = manifest.decompressor();
    let mut builder = SidecarBuilder::new(settings, manifest.container.header());
    let mut decoded = 0usize;
    for block in manifest.container.blocks() {
        let block = block?;
        builder.begin_block(block.offset, block.length)?;
        manifest.entries(&block, &mut dec, |e| {
            builder.add(EntryCoverage {
                partition: e.partition(),
                bucket: e.bucket(),
                total_buckets: e.total_buckets(),
                first_row_id: e.first_row_id(),
                row_count: e.row_count().unwrap_or(0),
            })
        })?;
        decoded = decoded.saturating_add(dec_len(&manifest, &block, &dec));
        if decoded > MAX_DECODED_BYTES {
            return Err(Error::new(ErrorKind::LimitExceeded, block.data_offset));
        }
        builder.end_block()?;
    }
    builder.finish(off(bytes.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists() -> Vec<Vec<u8>> {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/paimon/warehouse/sc.db/part_append_rs/manifest"
        );
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("manifest-list-"))
            .collect();
        names.sort();
        names
            .iter()
            .map(|n| std::fs::read(std::format!("{dir}/{n}")).unwrap())
            .collect()
    }

    /// A list decoded with another list's compiled schema reads as it reads alone, and
    /// compiles nothing; a known schema of other JSON is not used.
    #[test]
    fn list_schema_is_reused_only_for_the_same_json() {
        let lists = lists();
        assert!(lists.len() >= 2);
        let (first, compiled) = decode_list(&lists[0], None).unwrap();
        assert_eq!(first, decode_manifest_list(&lists[0]).unwrap());
        let compiled = compiled.expect("compiled for the first list");
        for bytes in &lists[1..] {
            let (entries, fresh) = decode_list(bytes, Some(&compiled)).unwrap();
            assert!(fresh.is_none(), "the same schema JSON: reused");
            assert_eq!(entries, decode_manifest_list(bytes).unwrap());
        }
        // A schema compiled from other JSON (a manifest's) is not taken for a list's.
        let manifest = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/paimon/warehouse/sc.db/part_append_rs/manifest/manifest-17fe0b1d-9a8f-4770-8b25-6274f809f953-0"
        ))
        .unwrap();
        let json = header_schema_json(&manifest).unwrap();
        let other = CompiledSchema::compile(json, 0, LIST_PATHS).unwrap();
        let (entries, fresh) = decode_list(&lists[1], Some(&other)).unwrap();
        assert!(fresh.is_some(), "other JSON: compiled anew");
        assert_eq!(entries, decode_manifest_list(&lists[1]).unwrap());
    }
}
