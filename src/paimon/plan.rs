//! Scan planning over a Paimon table directory on the local file system (feature `paimon`).
//!
//! The walk: snapshot (`snapshot/LATEST` or a given id) -> its base and delta manifest lists
//! -> every manifest (memory-mapped) -> the sidecar named in its `_EXTRA_FILES` -> sidecar
//! block selection with the query -> only the selected blocks decoded (header + selected
//! blocks is a valid Avro file) -> entries filtered by the query -> ADD/DELETE reconciled in
//! manifest order by `(partition, bucket, file name)` -> the live data files that can match.
//!
//! A manifest without a sidecar reference, or whose sidecar cannot be read, is invalid, or
//! disagrees with the manifest, is read in full and counted as such in [`ScanStats`].
//!
//! The work is split so a caller can run manifests in parallel: [`Table::prepare`] reads the
//! snapshot, schema and manifest lists; [`PreparedScan::scan_manifest`] handles one manifest
//! (independent of the others, `Sync`); [`PreparedScan::finish`] reconciles the results in
//! manifest order. [`Table::plan`] does all three sequentially.
//!
//! ```
//! use lakecore::paimon::{ScanQuery, Table};
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs");
//! let table = Table::open(dir)?;
//! let all = table.plan(None, &ScanQuery::default())?;
//! let query = ScanQuery { buckets: Some(vec![(1, Some(4))]), ..ScanQuery::default() };
//! let plan = table.plan(None, &query)?;
//! assert!(plan.files.iter().all(|f| f.bucket == 1));
//! assert!(plan.files.len() < all.files.len());
//! assert!(plan.stats.blocks_read <= plan.stats.blocks_total);
//! # Ok::<(), lakecore::paimon::ScanError>(())
//! ```

use super::manifest::{decode_entries, decode_manifest_list, ManifestEntry, ManifestFileMeta};
use super::sidecar::{read_sidecar, NoSidecar, SidecarBytes};
use crate::io::{map_file, span_slices};
use crate::sidecar::{BinaryRow, ManifestFacts, PartitionMask, Query, RowRanges, SelectedBlock};
use crate::{Error, ErrorKind};
use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The partition value name Paimon uses for null unless the table option
/// `partition.default-name` says otherwise; `--partition key=__DEFAULT_PARTITION__` selects
/// null values.
pub const DEFAULT_PARTITION_NAME: &str = "__DEFAULT_PARTITION__";

/// Why a scan could not be planned.
#[derive(Debug)]
pub enum ScanError {
    /// A file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: io::Error,
    },
    /// A metadata file (manifest list, manifest) has invalid bytes.
    Invalid {
        /// The file.
        path: PathBuf,
        /// Kind and absolute offset.
        error: Error,
    },
    /// A JSON metadata file (snapshot, schema) is malformed or lacks a field, or the
    /// directory is not a table.
    Metadata {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The query does not fit the table (unknown partition key, untypable value).
    Query(String),
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScanError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            ScanError::Invalid { path, error } => write!(
                f,
                "{}: invalid input: {} at byte {}",
                path.display(),
                error.kind.name(),
                error.offset
            ),
            ScanError::Metadata { path, message } => write!(f, "{}: {message}", path.display()),
            ScanError::Query(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ScanError {}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> ScanError + '_ {
    move |error| ScanError::Io {
        path: path.to_path_buf(),
        error,
    }
}

fn invalid(path: &Path) -> impl FnOnce(Error) -> ScanError + '_ {
    move |error| ScanError::Invalid {
        path: path.to_path_buf(),
        error,
    }
}

fn json_err(path: &Path, message: impl Into<String>) -> ScanError {
    ScanError::Metadata {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// What to look for. Every filter is optional; a data file is kept when it can match all of
/// them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanQuery {
    /// Inclusive row-ID ranges, any order. A file without row IDs can match any range.
    pub rows: Option<Vec<(u64, u64)>>,
    /// `(bucket, totalBuckets)` alternatives; `None` as total accepts any total.
    pub buckets: Option<Vec<(i32, Option<i32>)>>,
    /// `key = value` conditions on partition keys (all must hold), values as text, typed
    /// through the table schema. The table's `partition.default-name` (default
    /// [`DEFAULT_PARTITION_NAME`]) stands for null.
    pub partition: Vec<(String, String)>,
}

/// How a scan reads manifests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanOptions {
    /// The sidecar `read` switch (on by default). Off: every manifest is read in full and
    /// no sidecar is opened ([`ManifestRead::SidecarsOff`]); the live files are the same.
    pub read_sidecars: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            read_sidecars: true,
        }
    }
}

/// The type of a partition key, from the schema's type string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionType {
    /// BOOLEAN.
    Boolean,
    /// TINYINT.
    TinyInt,
    /// SMALLINT.
    SmallInt,
    /// INT.
    Int,
    /// BIGINT.
    BigInt,
    /// FLOAT.
    Float,
    /// DOUBLE.
    Double,
    /// DATE (days since 1970-01-01; written `YYYY-MM-DD` or as a day number).
    Date,
    /// CHAR, VARCHAR, STRING.
    String,
    /// BINARY, VARBINARY, BYTES (written as hex).
    Binary,
    /// DECIMAL with precision <= 18, stored compact (the unscaled value).
    Decimal {
        /// Digits after the point.
        scale: u32,
    },
    /// Any other type: it cannot be filtered on.
    Unsupported,
}

impl PartitionType {
    /// Parses a Paimon type string such as `INT NOT NULL`, `VARCHAR(10)`, `DECIMAL(10, 2)`.
    pub fn parse(text: &str) -> Self {
        let upper = text.trim().to_ascii_uppercase();
        let upper = upper.strip_suffix("NOT NULL").unwrap_or(&upper).trim();
        let (name, args) = match upper.split_once('(') {
            Some((n, rest)) => (n.trim(), rest.trim_end_matches(')')),
            None => (upper, ""),
        };
        match name {
            "BOOLEAN" => PartitionType::Boolean,
            "TINYINT" => PartitionType::TinyInt,
            "SMALLINT" => PartitionType::SmallInt,
            "INT" | "INTEGER" => PartitionType::Int,
            "BIGINT" => PartitionType::BigInt,
            "FLOAT" => PartitionType::Float,
            "DOUBLE" => PartitionType::Double,
            "DATE" => PartitionType::Date,
            "CHAR" | "VARCHAR" | "STRING" => PartitionType::String,
            "BINARY" | "VARBINARY" | "BYTES" => PartitionType::Binary,
            "DECIMAL" | "NUMERIC" | "DEC" => {
                let mut parts = args.split(',').map(|p| p.trim().parse::<u32>().ok());
                let precision = parts.next().flatten().unwrap_or(10);
                let scale = parts.next().flatten().unwrap_or(0);
                if precision <= 18 && scale <= precision {
                    PartitionType::Decimal { scale }
                } else {
                    PartitionType::Unsupported
                }
            }
            _ => PartitionType::Unsupported,
        }
    }
}

/// A typed partition value to compare with.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Null,
    Bool(bool),
    Int(i64),
    F32(f32),
    F64(f64),
    Bytes(Vec<u8>),
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn parse_date(text: &str) -> Option<i64> {
    if let Ok(days) = text.parse::<i64>() {
        return Some(days);
    }
    let mut parts = text.splitn(3, '-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let d: i64 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || !(0..=9999).contains(&y) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

fn parse_decimal(text: &str, scale: u32) -> Option<i64> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let scale = usize::try_from(scale).ok()?;
    if frac.len() > scale || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int) || !all_digits(frac) {
        return None;
    }
    let mut unscaled: i64 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        unscaled = unscaled.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
    }
    for _ in frac.len()..scale {
        unscaled = unscaled.checked_mul(10)?;
    }
    Some(if neg { -unscaled } else { unscaled })
}

fn parse_hex(text: &str) -> Option<Vec<u8>> {
    let text = text.strip_prefix("0x").unwrap_or(text);
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

fn typed(ty: PartitionType, text: &str) -> Option<Value> {
    Some(match ty {
        PartitionType::Boolean => match text.to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return None,
        },
        PartitionType::TinyInt => Value::Int(i64::from(text.parse::<i8>().ok()?)),
        PartitionType::SmallInt => Value::Int(i64::from(text.parse::<i16>().ok()?)),
        PartitionType::Int => Value::Int(i64::from(text.parse::<i32>().ok()?)),
        PartitionType::BigInt => Value::Int(text.parse::<i64>().ok()?),
        PartitionType::Float => Value::F32(text.parse().ok()?),
        PartitionType::Double => Value::F64(text.parse().ok()?),
        PartitionType::Date => Value::Int(i64::from(i32::try_from(parse_date(text)?).ok()?)),
        PartitionType::String => Value::Bytes(text.as_bytes().to_vec()),
        PartitionType::Binary => Value::Bytes(parse_hex(text)?),
        PartitionType::Decimal { scale } => Value::Int(parse_decimal(text, scale)?),
        PartitionType::Unsupported => return None,
    })
}

/// One typed partition condition: field `index` of the partition row equals `value`.
#[derive(Clone, Debug, PartialEq)]
struct Condition {
    index: u32,
    ty: PartitionType,
    value: Value,
}

impl Condition {
    fn holds(&self, row: &BinaryRow<'_>) -> crate::Result<bool> {
        let i = self.index;
        if row.is_null(i)? {
            return Ok(self.value == Value::Null);
        }
        let actual = match self.ty {
            PartitionType::Boolean => row.get_bool(i)?.map(Value::Bool),
            PartitionType::TinyInt => row.get_i8(i)?.map(|v| Value::Int(v.into())),
            PartitionType::SmallInt => row.get_i16(i)?.map(|v| Value::Int(v.into())),
            PartitionType::Int | PartitionType::Date => {
                row.get_i32(i)?.map(|v| Value::Int(v.into()))
            }
            PartitionType::BigInt | PartitionType::Decimal { .. } => {
                row.get_i64(i)?.map(Value::Int)
            }
            PartitionType::Float => row.get_f32(i)?.map(Value::F32),
            PartitionType::Double => row.get_f64(i)?.map(Value::F64),
            PartitionType::String | PartitionType::Binary => {
                row.get_bytes(i)?.map(|b| Value::Bytes(b.to_vec()))
            }
            PartitionType::Unsupported => None,
        };
        Ok(actual.as_ref() == Some(&self.value))
    }
}

/// The query compiled against the table schema.
#[derive(Clone, Debug, Default, PartialEq)]
struct Compiled {
    rows: Option<Vec<(u64, u64)>>,
    buckets: Option<Vec<(i32, Option<i32>)>>,
    partition: Vec<Condition>,
}

impl Compiled {
    fn bucket_passes(&self, bucket: i32, total: i32) -> bool {
        self.buckets.as_ref().is_none_or(|alternatives| {
            alternatives
                .iter()
                .any(|&(b, t)| b == bucket && t.is_none_or(|t| t == total))
        })
    }

    /// Whether the `_PARTITION` bytes `tuple` pass every condition.
    fn partition_passes(&self, tuple: &[u8]) -> crate::Result<bool> {
        if self.partition.is_empty() {
            return Ok(true);
        }
        let row = BinaryRow::from_partition(tuple, 0)?;
        for c in &self.partition {
            if !c.holds(&row)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether entry rows `[first, first + count - 1]` meet a queried range; entries without
    /// usable row IDs can match.
    fn rows_pass(&self, first_row_id: Option<i64>, row_count: i64) -> bool {
        let Some(ranges) = &self.rows else {
            return true;
        };
        let (Some(first), Ok(count)) = (first_row_id, u64::try_from(row_count)) else {
            return true;
        };
        let Ok(first) = u64::try_from(first) else {
            return true;
        };
        let Some(last) = count.checked_sub(1).and_then(|c| first.checked_add(c)) else {
            return true;
        };
        ranges.iter().any(|&(a, b)| a <= last && first <= b)
    }
}

/// A snapshot: the fields a scan needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Snapshot id.
    pub id: u64,
    /// Schema id.
    pub schema_id: u64,
    /// Base manifest list file name.
    pub base_manifest_list: String,
    /// Delta manifest list file name.
    pub delta_manifest_list: String,
}

/// The partition keys of a table schema, in partition-row order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSchema {
    /// Schema id.
    pub id: u64,
    /// `(name, type)` of each partition key.
    pub partition_keys: Vec<(String, PartitionType)>,
    /// The name standing for a null partition value (`partition.default-name`).
    pub default_partition_name: String,
}

/// A Paimon table directory.
#[derive(Clone, Debug)]
pub struct Table {
    dir: PathBuf,
}

fn read_json(path: &Path) -> Result<serde_json::Value, ScanError> {
    let text = std::fs::read(path).map_err(io_err(path))?;
    serde_json::from_slice(&text).map_err(|e| json_err(path, e.to_string()))
}

fn json_u64(v: &serde_json::Value, key: &str, path: &Path) -> Result<u64, ScanError> {
    v.get(key)
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| json_err(path, alloc::format!("missing or bad field {key:?}")))
}

fn json_str(v: &serde_json::Value, key: &str, path: &Path) -> Result<String, ScanError> {
    v.get(key)
        .and_then(serde_json::Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| json_err(path, alloc::format!("missing or bad field {key:?}")))
}

impl Table {
    /// Opens the table at `dir`: it must be a directory with a `snapshot/` or `schema/`
    /// subdirectory. Nothing else is read yet.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, ScanError> {
        let dir = dir.as_ref();
        let meta = std::fs::metadata(dir).map_err(io_err(dir))?;
        if !meta.is_dir() || !(dir.join("snapshot").is_dir() || dir.join("schema").is_dir()) {
            return Err(json_err(
                dir,
                "not a Paimon table directory (no snapshot/ or schema/)",
            ));
        }
        Ok(Table {
            dir: dir.to_path_buf(),
        })
    }

    /// The table directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The latest snapshot id (`snapshot/LATEST`, else the highest `snapshot-N`), `None`
    /// for a table without snapshots.
    pub fn latest_snapshot_id(&self) -> Result<Option<u64>, ScanError> {
        let dir = self.dir.join("snapshot");
        let latest = dir.join("LATEST");
        if let Ok(text) = std::fs::read_to_string(&latest) {
            let id = text
                .trim()
                .parse()
                .map_err(|_| json_err(&latest, "not a snapshot id"))?;
            return Ok(Some(id));
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&dir)(e)),
        };
        let mut max = None;
        for entry in entries {
            let entry = entry.map_err(io_err(&dir))?;
            let name = entry.file_name();
            if let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_prefix("snapshot-"))
                .and_then(|n| n.parse::<u64>().ok())
            {
                max = max.max(Some(id));
            }
        }
        Ok(max)
    }

    /// Reads snapshot `id`.
    pub fn snapshot(&self, id: u64) -> Result<Snapshot, ScanError> {
        let path = self
            .dir
            .join("snapshot")
            .join(alloc::format!("snapshot-{id}"));
        let v = read_json(&path)?;
        Ok(Snapshot {
            id: json_u64(&v, "id", &path)?,
            schema_id: json_u64(&v, "schemaId", &path)?,
            base_manifest_list: json_str(&v, "baseManifestList", &path)?,
            delta_manifest_list: json_str(&v, "deltaManifestList", &path)?,
        })
    }

    /// Reads schema `id`: partition keys with their types, and the null partition name.
    pub fn schema(&self, id: u64) -> Result<TableSchema, ScanError> {
        let path = self.dir.join("schema").join(alloc::format!("schema-{id}"));
        let v = read_json(&path)?;
        let fields = v
            .get("fields")
            .and_then(serde_json::Value::as_array)
            .ok_or_else(|| json_err(&path, "missing field \"fields\""))?;
        let keys = match v.get("partitionKeys") {
            None | Some(serde_json::Value::Null) => Vec::new(),
            Some(k) => k
                .as_array()
                .ok_or_else(|| json_err(&path, "bad field \"partitionKeys\""))?
                .clone(),
        };
        let mut partition_keys = Vec::with_capacity(keys.len());
        for key in &keys {
            let name = key
                .as_str()
                .ok_or_else(|| json_err(&path, "bad partition key"))?;
            let field = fields
                .iter()
                .find(|f| f.get("name").and_then(serde_json::Value::as_str) == Some(name))
                .ok_or_else(|| {
                    json_err(&path, alloc::format!("partition key {name:?} has no field"))
                })?;
            let ty = field
                .get("type")
                .and_then(serde_json::Value::as_str)
                .map_or(PartitionType::Unsupported, PartitionType::parse);
            partition_keys.push((name.to_string(), ty));
        }
        let default_partition_name = v
            .get("options")
            .and_then(|o| o.get("partition.default-name"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or(DEFAULT_PARTITION_NAME)
            .to_string();
        Ok(TableSchema {
            id,
            partition_keys,
            default_partition_name,
        })
    }

    /// The manifests of `snapshot`: its base list, then its delta list, in list order.
    pub fn manifests(&self, snapshot: &Snapshot) -> Result<Vec<ManifestFileMeta>, ScanError> {
        let mut all = Vec::new();
        for list in [&snapshot.base_manifest_list, &snapshot.delta_manifest_list] {
            let path = self.dir.join("manifest").join(list);
            let bytes = std::fs::read(&path).map_err(io_err(&path))?;
            all.extend(decode_manifest_list(&bytes).map_err(invalid(&path))?);
        }
        Ok(all)
    }

    /// Reads snapshot `snapshot` (latest when `None`), its schema and manifest lists, and
    /// types `query` through the schema. A table without snapshots gives an empty scan.
    ///
    /// The manifests can then be scanned in any order or in parallel; `finish` wants the
    /// results in manifest order.
    ///
    /// ```
    /// use lakecore::paimon::{ScanQuery, Table};
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/de_rs");
    /// let query = ScanQuery { rows: Some(vec![(0, 3)]), ..ScanQuery::default() };
    /// let prepared = Table::open(dir)?.prepare(None, &query)?;
    /// let scans = std::thread::scope(|s| {
    ///     let handles: Vec<_> = prepared
    ///         .manifests()
    ///         .iter()
    ///         .map(|m| s.spawn(|| prepared.scan_manifest(m)))
    ///         .collect();
    ///     handles.into_iter().map(|h| h.join().unwrap()).collect::<Result<Vec<_>, _>>()
    /// })?;
    /// let plan = prepared.finish(scans);
    /// assert!(plan.files.iter().all(|f| f.first_row_id.is_some_and(|r| r <= 3)));
    /// assert!(plan.stats.blocks_read < plan.stats.blocks_total);
    /// # Ok::<(), lakecore::paimon::ScanError>(())
    /// ```
    pub fn prepare(
        &self,
        snapshot: Option<u64>,
        query: &ScanQuery,
    ) -> Result<PreparedScan, ScanError> {
        self.prepare_with(snapshot, query, ScanOptions::default())
    }

    /// [`prepare`](Self::prepare) with explicit [`ScanOptions`], e.g. sidecars switched
    /// off to compare with a full read.
    ///
    /// ```
    /// use lakecore::paimon::{ManifestRead, ScanOptions, ScanQuery, Table};
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs");
    /// let table = Table::open(dir)?;
    /// let query = ScanQuery { buckets: Some(vec![(1, Some(4))]), ..ScanQuery::default() };
    /// let off = ScanOptions { read_sidecars: false };
    /// let full = table.plan_with(None, &query, off)?;
    /// assert_eq!(full.files, table.plan(None, &query)?.files);
    /// assert_eq!(full.stats.manifests_with_sidecar, 0);
    /// assert_eq!(full.stats.blocks_read, full.stats.blocks_total);
    /// let prepared = table.prepare_with(None, &query, off)?;
    /// let first = prepared.scan_manifest(&prepared.manifests()[0])?;
    /// assert_eq!(first.read, ManifestRead::SidecarsOff);
    /// # Ok::<(), lakecore::paimon::ScanError>(())
    /// ```
    pub fn prepare_with(
        &self,
        snapshot: Option<u64>,
        query: &ScanQuery,
        options: ScanOptions,
    ) -> Result<PreparedScan, ScanError> {
        let id = match snapshot {
            Some(id) => Some(id),
            None => self.latest_snapshot_id()?,
        };
        let Some(id) = id else {
            return Ok(PreparedScan {
                table: self.clone(),
                snapshot: None,
                manifests: Vec::new(),
                query: Compiled::default(),
                options,
            });
        };
        let snap = self.snapshot(id)?;
        let schema = self.schema(snap.schema_id)?;
        let mut partition = Vec::with_capacity(query.partition.len());
        for (key, text) in &query.partition {
            let (index, ty) = schema
                .partition_keys
                .iter()
                .zip(0u32..)
                .find(|((name, _), _)| name == key)
                .map(|((_, ty), i)| (i, *ty))
                .ok_or_else(|| {
                    let names: Vec<&str> = schema
                        .partition_keys
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect();
                    ScanError::Query(alloc::format!(
                        "{key:?} is not a partition key (partition keys: {names:?})"
                    ))
                })?;
            let value = if *text == schema.default_partition_name {
                Value::Null
            } else {
                typed(ty, text).ok_or_else(|| {
                    ScanError::Query(alloc::format!(
                        "partition value {text:?} is not a valid {ty:?} for key {key:?}"
                    ))
                })?
            };
            partition.push(Condition { index, ty, value });
        }
        let manifests = self.manifests(&snap)?;
        Ok(PreparedScan {
            table: self.clone(),
            snapshot: Some(snap),
            manifests,
            query: Compiled {
                rows: query.rows.clone(),
                buckets: query.buckets.clone(),
                partition,
            },
            options,
        })
    }

    /// Plans a scan of snapshot `snapshot` (latest when `None`): [`prepare`](Self::prepare),
    /// every manifest in order, [`PreparedScan::finish`].
    ///
    /// ```
    /// use lakecore::paimon::{ScanQuery, Table};
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/part_append_rs");
    /// let query = ScanQuery {
    ///     partition: vec![("dt".into(), "2024-01-02".into()), ("hr".into(), "4".into())],
    ///     ..ScanQuery::default()
    /// };
    /// let plan = Table::open(dir)?.plan(Some(4), &query)?;
    /// assert_eq!(plan.snapshot, Some(4));
    /// assert_eq!(plan.files.len(), 1);
    /// assert_eq!(plan.stats.manifests, plan.stats.manifests_with_sidecar);
    /// # Ok::<(), lakecore::paimon::ScanError>(())
    /// ```
    pub fn plan(&self, snapshot: Option<u64>, query: &ScanQuery) -> Result<ScanPlan, ScanError> {
        self.plan_with(snapshot, query, ScanOptions::default())
    }

    /// [`plan`](Self::plan) with explicit [`ScanOptions`] (see
    /// [`prepare_with`](Self::prepare_with)).
    pub fn plan_with(
        &self,
        snapshot: Option<u64>,
        query: &ScanQuery,
        options: ScanOptions,
    ) -> Result<ScanPlan, ScanError> {
        let prepared = self.prepare_with(snapshot, query, options)?;
        let scans = prepared
            .manifests()
            .iter()
            .map(|m| prepared.scan_manifest(m))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(prepared.finish(scans))
    }
}

/// How a manifest was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManifestRead {
    /// Through its sidecar: header + selected blocks only.
    Sidecar,
    /// In full: no sidecar referenced.
    NoSidecar,
    /// In full: sidecars switched off ([`ScanOptions::read_sidecars`]).
    SidecarsOff,
    /// In full: the sidecar could not be read.
    SidecarUnreadable,
    /// In full: the sidecar is invalid (or disagrees with the manifest); the error found.
    SidecarInvalid(Error),
}

/// A manifest entry that passed the query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanEntry {
    /// ADD (`false`) or DELETE (`true`).
    pub delete: bool,
    /// `_PARTITION` bytes.
    pub partition: Vec<u8>,
    /// `_BUCKET`.
    pub bucket: i32,
    /// `_TOTAL_BUCKETS`.
    pub total_buckets: i32,
    /// `_FILE._FILE_NAME`.
    pub file_name: String,
    /// `_FILE._FIRST_ROW_ID`.
    pub first_row_id: Option<i64>,
    /// `_FILE._ROW_COUNT`.
    pub row_count: i64,
}

/// The result of one manifest: its matching entries in file order and what was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestScan {
    /// The manifest's file name.
    pub file_name: String,
    /// How it was read.
    pub read: ManifestRead,
    /// Avro blocks in the manifest.
    pub blocks_total: u64,
    /// Avro blocks read and decoded.
    pub blocks_read: u64,
    /// Manifest size in bytes.
    pub bytes_total: u64,
    /// Manifest bytes read (header + selected blocks, or everything).
    pub bytes_read: u64,
    /// Sidecar bytes read (0 without a usable sidecar).
    pub sidecar_bytes: u64,
    /// The entries that pass the query, in file order.
    pub entries: Vec<ScanEntry>,
}

/// Totals over the manifests of a scan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Manifests of the snapshot.
    pub manifests: u64,
    /// Manifests read through a valid sidecar.
    pub manifests_with_sidecar: u64,
    /// Manifests read in full because their sidecar was invalid or unreadable.
    pub manifests_sidecar_invalid: u64,
    /// Avro blocks in all manifests.
    pub blocks_total: u64,
    /// Avro blocks read.
    pub blocks_read: u64,
    /// Bytes of all manifests.
    pub manifest_bytes_total: u64,
    /// Manifest bytes read.
    pub manifest_bytes_read: u64,
    /// Sidecar bytes read.
    pub sidecar_bytes_read: u64,
    /// Entries (ADD + DELETE) that passed the query.
    pub entries_matched: u64,
}

/// A live data file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DataFile {
    /// `_PARTITION` bytes (4-byte arity + BinaryRow).
    pub partition: Vec<u8>,
    /// Bucket.
    pub bucket: i32,
    /// File name.
    pub file_name: String,
    /// Total buckets.
    pub total_buckets: i32,
    /// First row ID, if any.
    pub first_row_id: Option<i64>,
    /// Row count.
    pub row_count: i64,
}

/// The live data files that can match a query, and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanPlan {
    /// The snapshot scanned (`None` for a table without snapshots).
    pub snapshot: Option<u64>,
    /// Live matching files, sorted by (partition, bucket, file name).
    pub files: Vec<DataFile>,
    /// Totals.
    pub stats: ScanStats,
}

/// A scan ready to run: snapshot, manifests and the typed query. See [`Table::prepare`].
#[derive(Clone, Debug)]
pub struct PreparedScan {
    table: Table,
    snapshot: Option<Snapshot>,
    manifests: Vec<ManifestFileMeta>,
    query: Compiled,
    options: ScanOptions,
}

fn entry_error(blocks: &[SelectedBlock], e: &ManifestEntry) -> Error {
    let at = blocks.get(e.block).map_or(0, |b| b.offset);
    Error::new(ErrorKind::InvalidValue, at)
}

impl PreparedScan {
    /// The snapshot (`None` for a table without snapshots).
    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.snapshot.as_ref()
    }

    /// The options the scan was prepared with.
    pub fn options(&self) -> ScanOptions {
        self.options
    }

    /// The manifests to scan, in order.
    pub fn manifests(&self) -> &[ManifestFileMeta] {
        &self.manifests
    }

    /// Scans one manifest: maps it, selects blocks through its sidecar (or takes all of
    /// them), decodes the chosen blocks and keeps the entries that pass the query.
    pub fn scan_manifest(&self, meta: &ManifestFileMeta) -> Result<ManifestScan, ScanError> {
        let dir = self.table.dir.join("manifest");
        let path = dir.join(&meta.file_name);
        // The planner's one unsafe call (the I/O layer's `map_file` hands memmap2's contract on).
        // SAFETY: Paimon manifests are written once and never modified in place; the map
        // lives only for this call.
        #[allow(unsafe_code)]
        let map = unsafe { map_file(&path) }.map_err(io_err(&path))?;
        let manifest: &[u8] = &map;
        let facts = ManifestFacts {
            length: u64::try_from(meta.file_size).unwrap_or(u64::MAX),
            entries: u64::try_from(meta.num_added_files)
                .ok()
                .zip(u64::try_from(meta.num_deleted_files).ok())
                .and_then(|(a, d)| a.checked_add(d))
                .unwrap_or(u64::MAX),
        };
        let read = match read_sidecar(
            &dir,
            &meta.extra_files,
            facts,
            self.options.read_sidecars,
            None,
        ) {
            Err(e) => return Err(io_err(&path)(e)),
            Ok(Err(NoSidecar::Disabled)) => ManifestRead::SidecarsOff,
            Ok(Err(NoSidecar::Absent)) => ManifestRead::NoSidecar,
            Ok(Err(NoSidecar::Io(_))) => ManifestRead::SidecarUnreadable,
            Ok(Err(NoSidecar::Invalid(e))) => ManifestRead::SidecarInvalid(e),
            Ok(Ok(sidecar)) => match self.through_sidecar(manifest, &sidecar) {
                Ok(scan) => {
                    return Ok(ManifestScan {
                        file_name: meta.file_name.clone(),
                        ..scan
                    })
                }
                Err(e) => ManifestRead::SidecarInvalid(e),
            },
        };
        // Full read.
        let (_, blocks, entries) = decode_entries(manifest).map_err(invalid(&path))?;
        let spans: Vec<SelectedBlock> = blocks
            .iter()
            .map(|b| SelectedBlock {
                id: 0,
                offset: b.offset,
                length: b.length,
                first_record: 0,
                record_count: b.object_count,
            })
            .collect();
        Ok(ManifestScan {
            file_name: meta.file_name.clone(),
            read,
            blocks_total: crate::error::off(blocks.len()),
            blocks_read: crate::error::off(blocks.len()),
            bytes_total: crate::error::off(manifest.len()),
            bytes_read: crate::error::off(manifest.len()),
            sidecar_bytes: 0,
            entries: self.filter(&spans, entries).map_err(invalid(&path))?,
        })
    }

    /// The sidecar path of a manifest: select, decode header + selected blocks, filter.
    /// Any error means the sidecar cannot be trusted for this manifest.
    fn through_sidecar(
        &self,
        manifest: &[u8],
        sidecar: &SidecarBytes,
    ) -> crate::Result<ManifestScan> {
        let view = sidecar.view()?;
        let header = view.avro_header();
        if manifest.get(..header.len()) != Some(header) {
            return Err(Error::new(ErrorKind::Mismatch, 0));
        }
        let q = &self.query;
        let mut rows = q.rows.clone().unwrap_or_default();
        let mask = if q.partition.is_empty() {
            Vec::new()
        } else {
            view.partition_mask_vec(|tuple| q.partition_passes(tuple).unwrap_or(true))
        };
        let bucket_pred = |b: i32, t: i32| q.bucket_passes(b, t);
        let mut query = Query::new();
        if q.rows.is_some() {
            query = query.rows(RowRanges::normalize(&mut rows));
        }
        if !q.partition.is_empty() {
            query = query.partitions(PartitionMask::new(&mask));
        }
        if q.buckets.is_some() {
            query = query.buckets(&bucket_pred);
        }
        let selected = view
            .select(&query)
            .collect::<crate::Result<Vec<SelectedBlock>>>()?;
        let (bytes_read, entries) = if selected.is_empty() {
            (0, Vec::new())
        } else {
            let spans = crate::io::coalesce(selected.iter().map(SelectedBlock::span));
            let pieces = span_slices(manifest, crate::error::off(header.len()), &spans)?;
            let file: Vec<u8> = pieces.concat();
            let (_, blocks, entries) = decode_entries(&file)?;
            let expected: u64 = selected.iter().map(|b| b.record_count).sum();
            if blocks.len() != selected.len() || crate::error::off(entries.len()) != expected {
                return Err(Error::new(ErrorKind::Mismatch, 0));
            }
            (
                crate::error::off(file.len()),
                self.filter(&selected, entries)?,
            )
        };
        Ok(ManifestScan {
            file_name: String::new(),
            read: ManifestRead::Sidecar,
            blocks_total: u64::from(view.block_count()),
            blocks_read: crate::error::off(selected.len()),
            bytes_total: crate::error::off(manifest.len()),
            bytes_read,
            sidecar_bytes: crate::error::off(sidecar.bytes().len()),
            entries,
        })
    }

    /// Keeps the entries that pass the query; `blocks` locates errors.
    fn filter(
        &self,
        blocks: &[SelectedBlock],
        entries: Vec<ManifestEntry>,
    ) -> crate::Result<Vec<ScanEntry>> {
        let mut out = Vec::new();
        for e in entries {
            let bad = entry_error(blocks, &e);
            let (Some(kind), Some(partition), Some(bucket), Some(total), Some(name)) =
                (e.kind, e.partition, e.bucket, e.total_buckets, e.file_name)
            else {
                return Err(bad);
            };
            let delete = match kind {
                0 => false,
                1 => true,
                _ => return Err(bad),
            };
            let row_count = e.row_count.unwrap_or(0);
            let q = &self.query;
            if q.rows_pass(e.first_row_id, row_count)
                && q.bucket_passes(bucket, total)
                && q.partition_passes(&partition).map_err(|_| bad)?
            {
                out.push(ScanEntry {
                    delete,
                    partition,
                    bucket,
                    total_buckets: total,
                    file_name: name,
                    first_row_id: e.first_row_id,
                    row_count,
                });
            }
        }
        Ok(out)
    }

    /// Reconciles the per-manifest results (in manifest order): an ADD makes a file live, a
    /// DELETE of the same `(partition, bucket, file name)` removes it.
    pub fn finish(&self, scans: Vec<ManifestScan>) -> ScanPlan {
        let mut stats = ScanStats::default();
        let mut live: BTreeMap<(Vec<u8>, i32, String), DataFile> = BTreeMap::new();
        for scan in scans {
            stats.manifests += 1;
            match scan.read {
                ManifestRead::Sidecar => stats.manifests_with_sidecar += 1,
                ManifestRead::SidecarInvalid(_) | ManifestRead::SidecarUnreadable => {
                    stats.manifests_sidecar_invalid += 1
                }
                ManifestRead::NoSidecar | ManifestRead::SidecarsOff => {}
            }
            stats.blocks_total = stats.blocks_total.saturating_add(scan.blocks_total);
            stats.blocks_read = stats.blocks_read.saturating_add(scan.blocks_read);
            stats.manifest_bytes_total =
                stats.manifest_bytes_total.saturating_add(scan.bytes_total);
            stats.manifest_bytes_read = stats.manifest_bytes_read.saturating_add(scan.bytes_read);
            stats.sidecar_bytes_read = stats.sidecar_bytes_read.saturating_add(scan.sidecar_bytes);
            stats.entries_matched = stats
                .entries_matched
                .saturating_add(crate::error::off(scan.entries.len()));
            for e in scan.entries {
                let key = (e.partition, e.bucket, e.file_name);
                if e.delete {
                    live.remove(&key);
                } else {
                    let file = DataFile {
                        partition: key.0.clone(),
                        bucket: key.1,
                        file_name: key.2.clone(),
                        total_buckets: e.total_buckets,
                        first_row_id: e.first_row_id,
                        row_count: e.row_count,
                    };
                    live.insert(key, file);
                }
            }
        }
        ScanPlan {
            snapshot: self.snapshot.as_ref().map(|s| s.id),
            files: live.into_values().collect(),
            stats,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_decimals() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2024-01-02"), Some(19_724));
        assert_eq!(parse_date("1969-12-31"), Some(-1));
        assert_eq!(parse_decimal("12.5", 2), Some(1250));
        assert_eq!(parse_decimal("-0.01", 2), Some(-1));
        assert_eq!(parse_decimal("1.234", 2), None);
        assert_eq!(
            PartitionType::parse("DECIMAL(10, 2) NOT NULL"),
            PartitionType::Decimal { scale: 2 }
        );
        assert_eq!(PartitionType::parse("VARCHAR(3)"), PartitionType::String);
        assert_eq!(
            PartitionType::parse("TIMESTAMP(3)"),
            PartitionType::Unsupported
        );
    }
}
