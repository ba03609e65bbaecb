//! A Paimon table directory: its snapshots (`snapshot/LATEST` or a given id), schemas and
//! manifest lists, read from JSON and Avro (feature `paimon`).

use super::error::*;
use super::manifest::{decode_manifest_list, ManifestFileMeta};
use super::predicate::*;
use alloc::string::{String, ToString};
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
}

/// A Paimon table directory.
#[derive(Clone, Debug)]
pub struct Table {
    pub(super) dir: PathBuf,
}

pub(super) fn read_json(path: &Path) -> Result<serde_json::Value, ScanError> {
    let text = std::fs::read(path).map_err(io_err(path))?;
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

fn read_snapshot(path: &Path) -> Result<Snapshot, ScanError> {
    let v = read_json(path)?;
    Ok(Snapshot {
        id: json_u64(&v, "id", path)?,
        schema_id: json_u64(&v, "schemaId", path)?,
        base_manifest_list: json_str(&v, "baseManifestList", path)?,
        delta_manifest_list: json_str(&v, "deltaManifestList", path)?,
        time_millis: v.get("timeMillis").and_then(serde_json::Value::as_i64),
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
        read_snapshot(&path)
    }

    /// Reads the snapshot of tag `name` (`tag/tag-NAME`).
    pub fn tag(&self, name: &str) -> Result<Snapshot, ScanError> {
        if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
            return Err(ScanError::Query(alloc::format!(
                "{name:?} is not a tag name"
            )));
        }
        let path = self.dir.join("tag").join(alloc::format!("tag-{name}"));
        if !path.exists() {
            let mut tags: Vec<String> = std::fs::read_dir(self.dir.join("tag"))
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_str()?
                        .strip_prefix("tag-")
                        .map(String::from)
                })
                .collect();
            tags.sort();
            return Err(ScanError::Query(alloc::format!(
                "no tag {name:?} in {} (tags: {tags:?})",
                self.dir.display()
            )));
        }
        read_snapshot(&path)
    }

    /// The ids of the snapshots present in `snapshot/`, ascending.
    pub fn snapshot_ids(&self) -> Result<Vec<u64>, ScanError> {
        let dir = self.dir.join("snapshot");
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(&dir)(e)),
        };
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_err(&dir))?;
            if let Some(id) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("snapshot-"))
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
        let option = |key: &str| {
            v.get("options")
                .and_then(|o| o.get(key))
                .and_then(serde_json::Value::as_str)
        };
        let row_tracking = option("row-tracking.enabled").is_some_and(|t| t == "true");
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
}
