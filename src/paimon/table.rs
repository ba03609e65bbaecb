//! A Paimon table directory: its snapshots (`snapshot/LATEST` or a given id), schemas and
//! manifest lists, read from JSON and Avro (feature `paimon`).

use super::error::*;
use super::manifest::{decode_list, ManifestFileMeta};
use super::predicate::*;
use crate::io::{LocalFs, Storage};
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use std::io;
use std::path::{Path, PathBuf};

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
    /// `timeMillis`: the commit time, milliseconds since the epoch.
    pub time_millis: Option<i64>,
    /// `indexManifest`: the index manifest's file name in `manifest/` (deletion-vector and
    /// other index files), `None` when the snapshot has none.
    pub index_manifest: Option<String>,
}

/// Which snapshot to plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SnapshotSpec {
    /// The latest (`snapshot/LATEST`, else the highest id).
    #[default]
    Latest,
    /// Snapshot `id`.
    Id(u64),
    /// The snapshot a tag points at (`tag/tag-NAME`, a copy of the snapshot that outlives
    /// the snapshot's own expiry).
    Tag(String),
    /// The latest snapshot committed at or before this time (milliseconds since the epoch),
    /// as the clients' `scan.timestamp-millis` time travel chooses.
    AsOf(i64),
}

/// The partition keys of a table schema, in partition-row order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSchema {
    /// Schema id.
    pub id: u64,
    /// `(name, type)` of each partition key.
    pub partition_keys: Vec<(String, PartitionType)>,
    /// Whether the table tracks row IDs (`row-tracking.enabled`), so row-ID ranges can be
    /// queried.
    pub row_tracking: bool,
    /// `(name, type)` of every field, in schema order (value-statistics order).
    pub fields: Vec<(String, PartitionType)>,
    /// The `bucket` option: the fixed bucket count, or -1 (dynamic) / -2 (postpone).
    pub bucket: i32,
    /// The bucket key (`bucket-key`, else the primary key without the partition keys).
    pub bucket_keys: Vec<String>,
    /// The primary key without the partition keys (empty for an append table): the fields
    /// of a file's `_KEY_STATS`.
    pub trimmed_primary_keys: Vec<String>,
    /// Whether the table is a data-evolution table (`data-evolution.enabled`): a row's
    /// columns may live in several files, so no single file's statistics can drop it.
    pub data_evolution: bool,
    /// The name standing for a null partition value (`partition.default-name`).
    pub default_partition_name: String,
    /// `index-file-in-data-file-dir`: bucket index files (deletion vectors) live in the
    /// bucket's directory instead of `<table>/index/`.
    pub index_file_in_data_file_dir: bool,
    /// `source.split.target-size` in bytes (default 128 MiB): the weight a split is packed up
    /// to (see [`Table::splits`]).
    pub split_target_size: u64,
    /// `source.split.open-file-cost` in bytes (default 4 MiB): the least weight of a file
    /// (of a data-evolution merge group) when splits are packed.
    pub split_open_file_cost: u64,
    /// `deletion-vectors.enabled`.
    pub deletion_vectors: bool,
    /// `merge-engine` is `first-row`.
    pub first_row_merge: bool,
}

/// A Paimon memory size option (`MemorySize`): digits, then an optional unit `b`/`bytes`,
/// `k`/`kb`/`kibibytes`, `m`/`mb`/`mebibytes`, `g`/`gb`/`gibibytes`, `t`/`tb`/`tebibytes`
/// (powers of 1024, any case, spaces around), e.g. `128 mb`.
///
/// ```
/// use lakecore::paimon::parse_memory_size;
/// assert_eq!(parse_memory_size(" 128 MB"), Some(128 << 20));
/// assert_eq!(parse_memory_size("4096"), Some(4096));
/// assert_eq!(parse_memory_size("1.5 gb"), None);
/// ```
pub fn parse_memory_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = t.split_at_checked(digits)?;
    let value: u64 = number.parse().ok()?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" | "bytes" => 0,
        "k" | "kb" | "kibibytes" => 10,
        "m" | "mb" | "mebibytes" => 20,
        "g" | "gb" | "gibibytes" => 30,
        "t" | "tb" | "tebibytes" => 40,
        _ => return None,
    };
    let bytes = value.checked_mul(1u64 << shift)?;
    // Paimon's sizes are Java longs.
    (bytes <= i64::MAX as u64).then_some(bytes)
}

/// A Paimon table directory, local ([`Table::open`]) or in an object store
/// ([`Table::open_url`], feature `object-store`; or any [`Storage`] with
/// [`Table::open_in`]).
#[derive(Clone, Debug)]
pub struct Table {
    pub(super) dir: PathBuf,
    /// Where the table's files are read from.
    pub(super) storage: Arc<dyn Storage>,
    /// Validated sidecar bytes shared between plans (and threads); `None`: read each time.
    pub(super) sidecar_cache: Option<alloc::sync::Arc<crate::io::ByteCache>>,
}

pub(super) fn read_json(
    storage: &dyn Storage,
    path: &Path,
) -> Result<serde_json::Value, ScanError> {
    let text = storage.read(path).map_err(io_err(path))?;
    serde_json::from_slice(&text).map_err(|e| json_err(path, e.to_string()))
}

pub(super) fn json_u64(v: &serde_json::Value, key: &str, path: &Path) -> Result<u64, ScanError> {
    v.get(key)
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| json_err(path, alloc::format!("missing or bad field {key:?}")))
}

pub(super) fn json_str(v: &serde_json::Value, key: &str, path: &Path) -> Result<String, ScanError> {
    v.get(key)
        .and_then(serde_json::Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| json_err(path, alloc::format!("missing or bad field {key:?}")))
}

fn read_snapshot(storage: &dyn Storage, path: &Path) -> Result<Snapshot, ScanError> {
    let v = read_json(storage, path)?;
    Ok(Snapshot {
        id: json_u64(&v, "id", path)?,
        schema_id: json_u64(&v, "schemaId", path)?,
        base_manifest_list: json_str(&v, "baseManifestList", path)?,
        delta_manifest_list: json_str(&v, "deltaManifestList", path)?,
        time_millis: v.get("timeMillis").and_then(serde_json::Value::as_i64),
        index_manifest: v
            .get("indexManifest")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string),
    })
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
            storage: Arc::new(LocalFs),
            sidecar_cache: None,
        })
    }

    /// Opens the table at `dir` in `storage` (a path or URL that storage understands): it
    /// must have a `snapshot/` or `schema/` directory (prefix). Nothing else is read yet.
    ///
    /// ```
    /// use lakecore::io::LocalFs;
    /// use lakecore::paimon::{ScanQuery, Table};
    /// use std::sync::Arc;
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs");
    /// let table = Table::open_in(Arc::new(LocalFs), dir)?;
    /// let q = ScanQuery::default();
    /// assert_eq!(table.plan(None, &q)?.files, Table::open(dir)?.plan(None, &q)?.files);
    /// # Ok::<(), lakecore::paimon::ScanError>(())
    /// ```
    pub fn open_in(storage: Arc<dyn Storage>, dir: impl AsRef<Path>) -> Result<Self, ScanError> {
        let dir = dir.as_ref();
        let mut listed = None;
        // What the store said was missing (an object store's reason: an empty prefix, or a
        // bucket or container that does not exist, with what to check).
        let mut missing = None;
        for sub in ["snapshot", "schema"] {
            match storage.list(&dir.join(sub)) {
                Ok(names) if !names.is_empty() => {
                    listed = Some(Ok(()));
                    break;
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    missing.get_or_insert(e);
                }
                Err(e) => listed = Some(Err(io_err(&dir.join(sub))(e))),
            }
        }
        match listed {
            Some(Ok(())) => Ok(Table {
                dir: dir.to_path_buf(),
                storage,
                sidecar_cache: None,
            }),
            Some(Err(e)) => Err(e),
            // Object stores cannot tell a missing table from an empty prefix: not found.
            None => Err(ScanError::Io {
                path: dir.to_path_buf(),
                error: io::Error::new(
                    io::ErrorKind::NotFound,
                    match missing {
                        Some(e) if storage.is_remote() => alloc::format!(
                            "no Paimon table here (nothing under snapshot/ or schema/); {e}"
                        ),
                        _ => "no Paimon table here (nothing under snapshot/ or schema/)".into(),
                    },
                ),
            }),
        }
    }

    /// Opens the table at `url` in an object store (feature `object-store`): `s3://bucket/
    /// warehouse/db.db/table`, `gs://...`, `az://...`, `file:///...`, `memory:///...`.
    /// `options` configure the store over the environment's (see
    /// [`ObjectStorage::open`](crate::io::ObjectStorage::open)); plans then fetch sidecars
    /// whole and only the selected spans of manifests.
    ///
    /// ```
    /// use lakecore::paimon::{ScanQuery, Table};
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs");
    /// let url = format!("file://{dir}");
    /// let q = ScanQuery { buckets: Some(vec![(1, Some(4))]), ..ScanQuery::default() };
    /// let remote = Table::open_url(&url, &[])?.plan(None, &q)?;
    /// assert_eq!(remote.files, Table::open(dir)?.plan(None, &q)?.files);
    /// # Ok::<(), lakecore::paimon::ScanError>(())
    /// ```
    #[cfg(feature = "object-store")]
    pub fn open_url(url: &str, options: &[(&str, &str)]) -> Result<Self, ScanError> {
        let (storage, dir) =
            crate::io::ObjectStorage::open(url, options).map_err(io_err(Path::new(url)))?;
        Self::open_in(Arc::new(storage), dir)
    }

    /// Where the table's files are read from.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// Plans of this table (and of its clones) keep the sidecars they validated in `cache`
    /// and take them from there next time, re-validated against the manifest's facts (one
    /// checksum and structure pass, no read). One cache may serve many tables and threads.
    ///
    /// ```
    /// use lakecore::io::ByteCache;
    /// use lakecore::paimon::{ScanQuery, Table};
    /// use std::sync::Arc;
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs");
    /// let cache = Arc::new(ByteCache::new(64 << 20));
    /// let table = Table::open(dir)?.with_sidecar_cache(Arc::clone(&cache));
    /// let first = table.plan(None, &ScanQuery::default())?;
    /// let cached = cache.len();
    /// assert!(cached > 0);
    /// let again = table.plan(None, &ScanQuery::default())?;
    /// assert_eq!((first.files, cache.len()), (again.files, cached));
    /// # Ok::<(), lakecore::paimon::ScanError>(())
    /// ```
    #[must_use]
    pub fn with_sidecar_cache(mut self, cache: alloc::sync::Arc<crate::io::ByteCache>) -> Self {
        self.sidecar_cache = Some(cache);
        self
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
        if let Ok(bytes) = self.storage.read(&latest) {
            let id = core::str::from_utf8(&bytes)
                .map_err(|_| json_err(&latest, "not a snapshot id"))?
                .trim()
                .parse()
                .map_err(|_| json_err(&latest, "not a snapshot id"))?;
            return Ok(Some(id));
        }
        let entries = match self.storage.list(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&dir)(e)),
        };
        let mut max = None;
        for name in entries {
            if let Some(id) = name
                .strip_prefix("snapshot-")
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
        read_snapshot(&*self.storage, &path)
    }

    /// Reads the snapshot of tag `name` (`tag/tag-NAME`).
    pub fn tag(&self, name: &str) -> Result<Snapshot, ScanError> {
        if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
            return Err(ScanError::Query(alloc::format!(
                "{name:?} is not a tag name"
            )));
        }
        let path = self.dir.join("tag").join(alloc::format!("tag-{name}"));
        let read = match read_snapshot(&*self.storage, &path) {
            Err(ScanError::Io { error, .. }) if error.kind() == io::ErrorKind::NotFound => None,
            other => Some(other),
        };
        if let Some(read) = read {
            return read;
        }
        let mut tags: Vec<String> = self
            .storage
            .list(&self.dir.join("tag"))
            .into_iter()
            .flatten()
            .filter_map(|n| n.strip_prefix("tag-").map(String::from))
            .collect();
        tags.sort();
        Err(ScanError::Query(alloc::format!(
            "no tag {name:?} in {} (tags: {tags:?})",
            self.dir.display()
        )))
    }

    /// The ids of the snapshots present in `snapshot/`, ascending.
    pub fn snapshot_ids(&self) -> Result<Vec<u64>, ScanError> {
        let dir = self.dir.join("snapshot");
        let entries = match self.storage.list(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(&dir)(e)),
        };
        let mut ids = Vec::new();
        for name in entries {
            if let Some(id) = name
                .strip_prefix("snapshot-")
                .and_then(|n| n.parse::<u64>().ok())
            {
                ids.push(id);
            }
        }
        ids.sort_unstable();
        Ok(ids)
    }

    /// The snapshot `spec` names; `None` for [`SnapshotSpec::Latest`] on a table without
    /// snapshots and for [`SnapshotSpec::AsOf`] before the first snapshot.
    ///
    /// ```
    /// use lakecore::paimon::{SnapshotSpec, Table};
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/part_append_rs");
    /// let table = Table::open(dir)?;
    /// let third = table.resolve(&SnapshotSpec::Id(3))?.unwrap();
    /// let t = third.time_millis.unwrap();
    /// assert_eq!(table.resolve(&SnapshotSpec::AsOf(t))?.unwrap().id, 3);
    /// assert!(table.resolve(&SnapshotSpec::AsOf(t - 1))?.unwrap().id < 3);
    /// assert_eq!(table.resolve(&SnapshotSpec::AsOf(0))?, None);
    /// # Ok::<(), lakecore::paimon::ScanError>(())
    /// ```
    pub fn resolve(&self, spec: &SnapshotSpec) -> Result<Option<Snapshot>, ScanError> {
        match spec {
            SnapshotSpec::Latest => match self.latest_snapshot_id()? {
                Some(id) => self.snapshot(id).map(Some),
                None => Ok(None),
            },
            SnapshotSpec::Id(id) => self.snapshot(*id).map(Some),
            SnapshotSpec::Tag(name) => self.tag(name).map(Some),
            SnapshotSpec::AsOf(millis) => {
                // Commit times grow with ids: binary search for the last one <= millis.
                let ids = self.snapshot_ids()?;
                let (mut lo, mut hi) = (0usize, ids.len());
                let mut found = None;
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    let Some(&id) = ids.get(mid) else { break };
                    let snap = self.snapshot(id)?;
                    let path = self
                        .dir
                        .join("snapshot")
                        .join(alloc::format!("snapshot-{id}"));
                    let time = snap
                        .time_millis
                        .ok_or_else(|| json_err(&path, "missing field \"timeMillis\""))?;
                    if time <= *millis {
                        found = Some(snap);
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                Ok(found)
            }
        }
    }

    /// Reads schema `id`: partition keys with their types, and the null partition name.
    pub fn schema(&self, id: u64) -> Result<TableSchema, ScanError> {
        let path = self.dir.join("schema").join(alloc::format!("schema-{id}"));
        let v = read_json(&*self.storage, &path)?;
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
        let option = |key: &str| {
            v.get("options")
                .and_then(|o| o.get(key))
                .and_then(serde_json::Value::as_str)
        };
        let row_tracking = option("row-tracking.enabled").is_some_and(|t| t == "true");
        let size = |key: &str, default: u64| match option(key) {
            None => Ok(default),
            Some(text) => parse_memory_size(text).ok_or_else(|| {
                json_err(
                    &path,
                    alloc::format!(
                        "option {key:?} = {text:?} is not a memory size (digits and a unit \
                         such as b, kb, mb, gb, tb)"
                    ),
                )
            }),
        };
        let bucket = option("bucket")
            .map_or(Ok(-1), |b| b.trim().parse::<i32>())
            .map_err(|_| json_err(&path, "option \"bucket\" is not an integer"))?;
        let names = |key: &str| -> Vec<String> {
            v.get(key)
                .and_then(serde_json::Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|k| k.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let trimmed_primary_keys: Vec<String> = names("primaryKeys")
            .into_iter()
            .filter(|k| !keys.iter().any(|p| p.as_str() == Some(k)))
            .collect();
        let data_evolution = option("data-evolution.enabled").is_some_and(|t| t == "true");
        let bucket_keys = match option("bucket-key") {
            Some(k) if !k.trim().is_empty() => k.split(',').map(|k| k.trim().to_string()).collect(),
            _ => names("primaryKeys")
                .into_iter()
                .filter(|k| !keys.iter().any(|p| p.as_str() == Some(k)))
                .collect(),
        };
        let all_fields = fields
            .iter()
            .filter_map(|f| {
                let name = f.get("name")?.as_str()?.to_string();
                let ty = f
                    .get("type")
                    .and_then(serde_json::Value::as_str)
                    .map_or(PartitionType::Unsupported, PartitionType::parse);
                Some((name, ty))
            })
            .collect();
        let default_partition_name = v
            .get("options")
            .and_then(|o| o.get("partition.default-name"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or(DEFAULT_PARTITION_NAME)
            .to_string();
        Ok(TableSchema {
            id,
            partition_keys,
            row_tracking,
            fields: all_fields,
            bucket,
            bucket_keys,
            trimmed_primary_keys,
            data_evolution,
            default_partition_name,
            index_file_in_data_file_dir: option("index-file-in-data-file-dir")
                .is_some_and(|t| t == "true"),
            split_target_size: size("source.split.target-size", 128 << 20)?,
            split_open_file_cost: size("source.split.open-file-cost", 4 << 20)?,
            deletion_vectors: option("deletion-vectors.enabled").is_some_and(|t| t == "true"),
            first_row_merge: option("merge-engine").is_some_and(|t| t == "first-row"),
        })
    }

    /// The manifests of `snapshot`: its base list, then its delta list, in list order.
    pub fn manifests(&self, snapshot: &Snapshot) -> Result<Vec<ManifestFileMeta>, ScanError> {
        let dir = self.dir.join("manifest");
        let (base, delta) = (
            dir.join(&snapshot.base_manifest_list),
            dir.join(&snapshot.delta_manifest_list),
        );
        let base_bytes = self.storage.read(&base).map_err(io_err(&base))?;
        let (mut all, compiled) = decode_list(&base_bytes, None).map_err(invalid(&base))?;
        // The two lists normally share their writer schema: compiled once.
        let delta_bytes = self.storage.read(&delta).map_err(io_err(&delta))?;
        let (more, _) = decode_list(&delta_bytes, compiled.as_ref()).map_err(invalid(&delta))?;
        all.extend(more);
        Ok(all)
    }
}

/// A typed partition value as the clients print it and put it in paths.
#[derive(Clone, Debug, PartialEq)]
pub enum PartitionValue {
    /// Null (written as the table's `partition.default-name`).
    Null,
    /// BOOLEAN.
    Bool(bool),
    /// TINYINT .. BIGINT.
    Int(i64),
    /// FLOAT, DOUBLE.
    Float(f64),
    /// Text: CHAR/VARCHAR/STRING, a DATE as `YYYY-MM-DD`, a DECIMAL as `1.50`, BINARY as hex.
    Text(String),
}

impl core::fmt::Display for PartitionValue {
    /// The value in the form `--partition` and `--where` accept back.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PartitionValue::Null => f.write_str("NULL"),
            PartitionValue::Bool(b) => write!(f, "{b}"),
            PartitionValue::Int(v) => write!(f, "{v}"),
            PartitionValue::Float(v) if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 => {
                write!(f, "{v:.1}")
            }
            PartitionValue::Float(v) => write!(f, "{v}"),
            PartitionValue::Text(t) => f.write_str(t),
        }
    }
}

/// `YYYY-MM-DD` of a day number (days since 1970-01-01).
pub fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    alloc::format!("{y:04}-{m:02}-{d:02}")
}

fn decimal_text(unscaled: i64, scale: u32) -> String {
    if scale == 0 {
        return unscaled.to_string();
    }
    let digits = unscaled.unsigned_abs().to_string();
    let scale = usize::try_from(scale).unwrap_or(0);
    let padded = alloc::format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    alloc::format!("{}{int}.{frac}", if unscaled < 0 { "-" } else { "" })
}

impl TableSchema {
    /// Whether the `_PARTITION` bytes `tuple` hold every `key=value` of `conditions` (as
    /// [`parse_conditions`](super::parse_conditions) reads them; `key=<default partition
    /// name>` is a null value), each value typed by its key's type exactly as `scan
    /// --partition` types it. The error names an unknown key or a value its type refuses.
    ///
    /// ```
    /// use lakecore::paimon::Table;
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/part_append_rs");
    /// let table = Table::open(dir)?;
    /// let schema = table.schema(0)?;
    /// let plan = table.plan(None, &Default::default())?;
    /// let tuple = &plan.files[0].partition;
    /// let values = schema.partition_values(tuple).unwrap();
    /// let (key, value) = (&values[0].0, values[0].1.to_string());
    /// assert_eq!(schema.partition_matches(&[(key.clone(), value)], tuple), Ok(true));
    /// assert_eq!(schema.partition_matches(&[("hr".into(), "-1".into())], tuple), Ok(false));
    /// assert!(schema.partition_matches(&[("hr".into(), "x".into())], tuple).is_err());
    /// # Ok::<(), lakecore::paimon::ScanError>(())
    /// ```
    pub fn partition_matches(
        &self,
        conditions: &[(String, String)],
        tuple: &[u8],
    ) -> Result<bool, String> {
        let row = crate::sidecar::BinaryRow::from_partition(tuple, 0)
            .map_err(|e| alloc::format!("partition bytes: {e}"))?;
        for (key, text) in conditions {
            let Some((i, ty)) = self
                .partition_keys
                .iter()
                .zip(0u32..)
                .find(|((k, _), _)| k == key)
                .map(|((_, ty), i)| (i, *ty))
            else {
                let keys: Vec<&str> = self
                    .partition_keys
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect();
                return Err(alloc::format!(
                    "{key:?} is not a partition key (partition keys: {keys:?})"
                ));
            };
            let have =
                read_field(&row, i, ty).map_err(|e| alloc::format!("partition bytes: {e}"))?;
            let matches = if *text == self.default_partition_name {
                have.is_none()
            } else {
                have == Some(typed_value(ty, text, key)?)
            };
            if !matches {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The partition values of `_PARTITION` bytes, typed through the schema, in key order.
    ///
    /// ```
    /// use lakecore::paimon::{PartitionValue, Table};
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/part_append_rs");
    /// let table = Table::open(dir)?;
    /// let schema = table.schema(0)?;
    /// let plan = table.plan(None, &Default::default())?;
    /// let values = schema.partition_values(&plan.files[0].partition).unwrap();
    /// assert_eq!(values[0].0, "dt");
    /// assert!(matches!(values[0].1, PartitionValue::Text(_) | PartitionValue::Null));
    /// # Ok::<(), lakecore::paimon::ScanError>(())
    /// ```
    pub fn partition_values(&self, bytes: &[u8]) -> crate::Result<Vec<(String, PartitionValue)>> {
        let row = crate::sidecar::BinaryRow::from_partition(bytes, 0)?;
        let mut out = Vec::with_capacity(self.partition_keys.len());
        for ((name, ty), i) in self.partition_keys.iter().zip(0u32..) {
            let v = if row.is_null(i)? {
                PartitionValue::Null
            } else {
                let some = |v: Option<PartitionValue>| v.unwrap_or(PartitionValue::Null);
                some(match ty {
                    PartitionType::Boolean => row.get_bool(i)?.map(PartitionValue::Bool),
                    PartitionType::TinyInt => row.get_i8(i)?.map(|v| PartitionValue::Int(v.into())),
                    PartitionType::SmallInt => {
                        row.get_i16(i)?.map(|v| PartitionValue::Int(v.into()))
                    }
                    PartitionType::Int => row.get_i32(i)?.map(|v| PartitionValue::Int(v.into())),
                    PartitionType::BigInt => row.get_i64(i)?.map(PartitionValue::Int),
                    PartitionType::Float => {
                        row.get_f32(i)?.map(|v| PartitionValue::Float(v.into()))
                    }
                    PartitionType::Double => row.get_f64(i)?.map(PartitionValue::Float),
                    PartitionType::Date => row
                        .get_date(i)?
                        .map(|d| PartitionValue::Text(civil_date(d.into()))),
                    PartitionType::Decimal { scale } => row
                        .get_decimal_compact(i)?
                        .map(|v| PartitionValue::Text(decimal_text(v, *scale))),
                    PartitionType::String => {
                        row.get_str(i)?.map(|s| PartitionValue::Text(s.to_string()))
                    }
                    PartitionType::Binary => row.get_bytes(i)?.map(|b| {
                        PartitionValue::Text(b.iter().map(|x| alloc::format!("{x:02x}")).collect())
                    }),
                    PartitionType::Unsupported => None,
                })
            };
            out.push((name.clone(), v));
        }
        Ok(out)
    }

    /// The directory of a partition under the table: `key=value/...` with Paimon's path
    /// escaping (`%XX` for `/`, `=`, `:`, `%`, quotes and the other reserved characters),
    /// the null partition as `partition.default-name`.
    pub fn partition_path(&self, bytes: &[u8]) -> crate::Result<String> {
        let mut out = String::new();
        for (name, value) in self.partition_values(bytes)? {
            let text = match value {
                PartitionValue::Null => self.default_partition_name.clone(),
                v => v.to_string(),
            };
            escape_path(&mut out, &name);
            out.push('=');
            escape_path(&mut out, &text);
            out.push('/');
        }
        Ok(out)
    }
}

/// Paimon's `PartitionPathUtils.escapePathName`.
fn escape_path(out: &mut String, text: &str) {
    for c in text.chars() {
        let reserved = (c as u32) < 0x20
            || matches!(
                c,
                '"' | '#'
                    | '%'
                    | '\''
                    | '*'
                    | '/'
                    | ':'
                    | '='
                    | '?'
                    | '\\'
                    | '\u{7f}'
                    | '{'
                    | '['
                    | ']'
                    | '^'
            );
        if reserved {
            out.push_str(&alloc::format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
}

impl Table {
    /// Where data file `file` lives: its external path when it has one, else
    /// `<table>/<partition path>/bucket-<n>/<file name>`.
    pub fn data_file_path(
        &self,
        schema: &TableSchema,
        file: &super::DataFile,
    ) -> crate::Result<String> {
        if let Some(p) = &file.external_path {
            return Ok(p.to_string());
        }
        let mut path = self.bucket_dir(schema, &file.partition, file.bucket)?;
        path.push_str(&file.file_name);
        Ok(path)
    }

    /// The directory of a bucket's data files, with its trailing `/`:
    /// `<table>/<partition path>bucket-<n>/`.
    pub fn bucket_dir(
        &self,
        schema: &TableSchema,
        partition: &[u8],
        bucket: i32,
    ) -> crate::Result<String> {
        Ok(alloc::format!(
            "{}/{}bucket-{}/",
            self.dir.display(),
            schema.partition_path(partition)?,
            bucket
        ))
    }
}
