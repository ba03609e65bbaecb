//! Synthetic Paimon tables with many manifests (feature `paimon`), for `lakecore demo`, the
//! planner tests and benchmarks: real manifests, manifest lists, snapshots and sidecars
//! written with `apache-avro`, and the expected scan results to check a planner against.
//!
//! The table: schema `(id BIGINT, dt STRING, hr INT, v STRING)` partitioned by `(dt, hr)`,
//! fixed buckets, row tracking on. One snapshot whose base and delta manifest lists name
//! every manifest, each with its sidecar published through `_EXTRA_FILES`. Manifests are
//! real Paimon manifests (the full entry schema, zstandard codec, several Avro blocks).
//! Append manifests add files for a sliding window of partitions, entries ordered by
//! `(partition, bucket)` as writers emit them, row IDs assigned in write order; every
//! `compaction_every`-th manifest compacts the previous one: it DELETEs the files of half of
//! its buckets and ADDs one merged file per bucket that keeps their row-ID range.
//!
//! Trusted, generated input only: it writes files, it does not read untrusted ones.

use super::manifest::build_from_manifest;
use crate::sidecar::BuildSettings;
use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use alloc::{format, vec};
use apache_avro::types::Value;
use apache_avro::{Codec, Schema, Writer, ZstandardSettings};
use std::collections::BTreeMap;
use std::path::Path;

/// The shape of the generated table.
#[derive(Clone, Debug)]
pub struct Spec {
    /// Manifests in the snapshot.
    pub manifests: usize,
    /// Days of the `dt` partition key (from 2024-01-01).
    pub days: usize,
    /// Values of the `hr` partition key.
    pub hours: Vec<i32>,
    /// Partitions an append manifest writes (a sliding window over `(dt, hr)`).
    pub partitions_per_manifest: usize,
    /// Fixed bucket count.
    pub buckets: i32,
    /// Data files per bucket and partition in an append manifest.
    pub files_per_bucket: usize,
    /// Manifest entries per Avro block.
    pub entries_per_block: usize,
    /// Every this many manifests, one compacts the previous (0: never).
    pub compaction_every: usize,
    /// Manifests in the delta manifest list (the rest are in the base list).
    pub delta_manifests: usize,
    /// Seed of the row counts and names.
    pub seed: u64,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            manifests: 300,
            days: 30,
            hours: vec![0, 6, 12, 18],
            partitions_per_manifest: 2,
            buckets: 8,
            files_per_bucket: 24,
            entries_per_block: 64,
            compaction_every: 10,
            delta_manifests: 3,
            seed: 0x5eed,
        }
    }
}

/// One manifest entry as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Ordinal of the manifest holding it.
    pub manifest: usize,
    /// DELETE (`true`) or ADD.
    pub delete: bool,
    /// `dt` value.
    pub dt: String,
    /// `hr` value.
    pub hr: i32,
    /// `_PARTITION` bytes.
    pub partition: Vec<u8>,
    /// `_BUCKET`.
    pub bucket: i32,
    /// `_TOTAL_BUCKETS`.
    pub total_buckets: i32,
    /// `_FILE._FILE_NAME`.
    pub file_name: String,
    /// `_FILE._FIRST_ROW_ID`.
    pub first_row_id: i64,
    /// `_FILE._ROW_COUNT`.
    pub row_count: i64,
}

/// What was written.
#[derive(Clone, Debug, Default)]
pub struct Generated {
    /// Every entry, in manifest order then file order.
    pub entries: Vec<Entry>,
    /// Manifests written.
    pub manifests: usize,
    /// Avro blocks over all manifests.
    pub blocks: u64,
    /// Bytes of all manifests.
    pub manifest_bytes: u64,
    /// Bytes of all sidecars.
    pub sidecar_bytes: u64,
    /// Rows (row IDs `0..rows` are assigned).
    pub rows: i64,
    /// The snapshot id written.
    pub snapshot: u64,
}

/// A live-file key: `(partition, bucket, file name)`.
pub type Key = (Vec<u8>, i32, String);

impl Generated {
    /// The live files (ADD/DELETE reconciled in manifest order).
    pub fn live(&self) -> BTreeMap<Key, &Entry> {
        let mut live = BTreeMap::new();
        for e in &self.entries {
            let key = (e.partition.clone(), e.bucket, e.file_name.clone());
            if e.delete {
                live.remove(&key);
            } else {
                live.insert(key, e);
            }
        }
        live
    }
}

/// The `dt` text of day `day` (2024-01-01 + day, any `day < 366`).
pub fn day_text(day: usize) -> String {
    const MONTHS: [usize; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let mut d = day % 366;
    let mut month = 1;
    for len in MONTHS {
        if d < len {
            break;
        }
        d -= len;
        month += 1;
    }
    format!("2024-{month:02}-{:02}", d + 1)
}

/// `_PARTITION` bytes of `(dt STRING, hr INT)`: 4-byte big-endian arity, then the
/// BinaryRow (8-byte null bitset word, two 8-byte slots, the string in the variable part
/// unless it fits in 7 bytes).
pub fn partition_bytes(dt: &str, hr: i32) -> Vec<u8> {
    let mut out = vec![0, 0, 0, 2];
    out.extend_from_slice(&[0u8; 8]);
    let s = dt.as_bytes();
    if s.len() <= 7 {
        let mut slot = [0u8; 8];
        for (d, &b) in slot.iter_mut().zip(s) {
            *d = b;
        }
        slot[7] = 0x80 | s.len() as u8;
        out.extend_from_slice(&slot);
    } else {
        let offset = 8u64 + 16;
        out.extend_from_slice(&((offset << 32) | s.len() as u64).to_le_bytes());
    }
    let mut slot = [0u8; 8];
    slot[..4].copy_from_slice(&hr.to_le_bytes());
    out.extend_from_slice(&slot);
    if s.len() > 7 {
        out.extend_from_slice(s);
        out.resize(out.len() + (8 - s.len() % 8) % 8, 0);
    }
    out
}

/// Paimon's manifest-entry schema (format version 2 with row tracking).
const ENTRY_SCHEMA: &str = r#"{"type":"record","namespace":"org.apache.paimon.avro.generated","name":"record","fields":[
{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},
{"name":"_BUCKET","type":"int"},{"name":"_TOTAL_BUCKETS","type":"int"},
{"name":"_FILE","type":{"type":"record","namespace":"org.apache.paimon.avro.generated","name":"record__FILE","fields":[
 {"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},
 {"name":"_MIN_KEY","type":"bytes"},{"name":"_MAX_KEY","type":"bytes"},
 {"name":"_KEY_STATS","type":["null",{"type":"record","namespace":"org.apache.paimon.avro.generated","name":"record__FILE__KEY_STATS","fields":[
  {"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},
  {"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}],"default":null},
 {"name":"_VALUE_STATS","type":["null",{"type":"record","namespace":"org.apache.paimon.avro.generated","name":"record__FILE__VALUE_STATS","fields":[
  {"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},
  {"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}],"default":null},
 {"name":"_MIN_SEQUENCE_NUMBER","type":"long"},{"name":"_MAX_SEQUENCE_NUMBER","type":"long"},
 {"name":"_SCHEMA_ID","type":"long"},{"name":"_LEVEL","type":"int"},
 {"name":"_EXTRA_FILES","type":{"type":"array","items":"string"}},
 {"name":"_CREATION_TIME","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null},
 {"name":"_DELETE_ROW_COUNT","type":["null","long"],"default":null},
 {"name":"_EMBEDDED_FILE_INDEX","type":["null","bytes"],"default":null},
 {"name":"_FILE_SOURCE","type":["null","int"],"default":null},
 {"name":"_VALUE_STATS_COLS","type":["null",{"type":"array","items":"string"}],"default":null},
 {"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},
 {"name":"_FIRST_ROW_ID","type":["null","long"],"default":null},
 {"name":"_WRITE_COLS","type":["null",{"type":"array","items":"string"}],"default":null},
 {"name":"_WRITE_COLS_SEQUENCES","type":["null",{"type":"array","items":"long"}],"default":null}]}}]}"#;

/// Paimon's manifest-list schema.
const LIST_SCHEMA: &str = r#"{"type":"record","namespace":"org.apache.paimon.avro.generated","name":"record","fields":[
{"name":"_VERSION","type":"int"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},
{"name":"_NUM_ADDED_FILES","type":"long"},{"name":"_NUM_DELETED_FILES","type":"long"},
{"name":"_PARTITION_STATS","type":["null",{"type":"record","namespace":"org.apache.paimon.avro.generated","name":"record__PARTITION_STATS","fields":[
 {"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},
 {"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}],"default":null},
{"name":"_SCHEMA_ID","type":"long"},
{"name":"_MIN_BUCKET","type":["null","int"],"default":null},{"name":"_MAX_BUCKET","type":["null","int"],"default":null},
{"name":"_MIN_LEVEL","type":["null","int"],"default":null},{"name":"_MAX_LEVEL","type":["null","int"],"default":null},
{"name":"_MIN_ROW_ID","type":["null","long"],"default":null},{"name":"_MAX_ROW_ID","type":["null","long"],"default":null},
{"name":"_TOTAL_BUCKETS","type":["null","int"],"default":null},
{"name":"_EXTRA_FILES","type":["null",{"type":"array","items":"string"}],"default":null}]}"#;

/// xorshift64*: a small deterministic generator (names and row counts here, the demo's
/// synthetic data), so runs are repeatable.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (made odd, so never the zero state).
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }
    /// The next pseudo-random value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn uuid(&mut self) -> String {
        let (a, b) = (self.next_u64(), self.next_u64());
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            b >> 52,
            b & 0xffff_ffff_ffff
        )
    }
}

fn some(v: Value) -> Value {
    Value::Union(1, Box::new(v))
}

fn null() -> Value {
    Value::Union(0, Box::new(Value::Null))
}

fn stats(min: Vec<u8>, max: Vec<u8>, nulls: usize) -> Value {
    some(Value::Record(vec![
        ("_MIN_VALUES".into(), Value::Bytes(min)),
        ("_MAX_VALUES".into(), Value::Bytes(max)),
        (
            "_NULL_COUNTS".into(),
            some(Value::Array(vec![some(Value::Long(0)); nulls])),
        ),
    ]))
}

fn entry_value(e: &Entry, seq: i64) -> Value {
    // Value stats over the four columns (id, dt, hr, v), as BinaryRows with their arity
    // prefix: id = the file's row IDs, dt/hr = its partition, v = "xyz".
    let row = |id: i64| {
        let dt = e.dt.as_bytes();
        let mut r = vec![0, 0, 0, 4];
        r.extend_from_slice(&[0u8; 8]); // header: row kind, no nulls
        r.extend_from_slice(&id.to_le_bytes());
        let mut var = Vec::new();
        if dt.len() <= 7 {
            let mut slot = [0u8; 8];
            for (d, &b) in slot.iter_mut().zip(dt) {
                *d = b;
            }
            if let Some(last) = slot.last_mut() {
                *last = 0x80 | dt.len() as u8;
            }
            r.extend_from_slice(&slot);
        } else {
            let offset = 8u64 + 4 * 8;
            r.extend_from_slice(&((offset << 32) | dt.len() as u64).to_le_bytes());
            var.extend_from_slice(dt);
            var.resize(dt.len().div_ceil(8) * 8, 0);
        }
        r.extend_from_slice(&e.hr.to_le_bytes());
        r.extend_from_slice(&[0u8; 4]); // an INT fills the low half of its slot
        r.extend_from_slice(&((0x80u64 | 3) << 56 | 0x7a_79_78).to_le_bytes());
        r.extend_from_slice(&var);
        r
    };
    // An empty key (append table): arity 0 and the 8-byte header, as the writers store it.
    let empty_row = vec![0u8; 12];
    let file = Value::Record(vec![
        ("_FILE_NAME".into(), Value::String(e.file_name.clone())),
        ("_FILE_SIZE".into(), Value::Long(1024 + e.row_count * 24)),
        ("_ROW_COUNT".into(), Value::Long(e.row_count)),
        ("_MIN_KEY".into(), Value::Bytes(empty_row.clone())),
        ("_MAX_KEY".into(), Value::Bytes(empty_row.clone())),
        ("_KEY_STATS".into(), stats(empty_row.clone(), empty_row, 0)),
        (
            "_VALUE_STATS".into(),
            stats(
                row(e.first_row_id),
                row(e.first_row_id + e.row_count - 1),
                4,
            ),
        ),
        ("_MIN_SEQUENCE_NUMBER".into(), Value::Long(seq)),
        (
            "_MAX_SEQUENCE_NUMBER".into(),
            Value::Long(seq + e.row_count),
        ),
        ("_SCHEMA_ID".into(), Value::Long(0)),
        ("_LEVEL".into(), Value::Int(0)),
        ("_EXTRA_FILES".into(), Value::Array(Vec::new())),
        (
            "_CREATION_TIME".into(),
            some(Value::TimestampMillis(1_704_067_200_000 + seq)),
        ),
        ("_DELETE_ROW_COUNT".into(), some(Value::Long(0))),
        ("_EMBEDDED_FILE_INDEX".into(), null()),
        ("_FILE_SOURCE".into(), some(Value::Int(i32::from(e.delete)))),
        ("_VALUE_STATS_COLS".into(), null()),
        ("_EXTERNAL_PATH".into(), null()),
        ("_FIRST_ROW_ID".into(), some(Value::Long(e.first_row_id))),
        ("_WRITE_COLS".into(), null()),
        ("_WRITE_COLS_SEQUENCES".into(), null()),
    ]);
    Value::Record(vec![
        ("_VERSION".into(), Value::Int(2)),
        ("_KIND".into(), Value::Int(i32::from(e.delete))),
        ("_PARTITION".into(), Value::Bytes(e.partition.clone())),
        ("_BUCKET".into(), Value::Int(e.bucket)),
        ("_TOTAL_BUCKETS".into(), Value::Int(e.total_buckets)),
        ("_FILE".into(), file),
    ])
}

fn err(what: &str) -> impl Fn(apache_avro::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{}: {e}", path.display())
}

/// Writes one manifest (zstandard, `per_block` entries per block) and its sidecar.
fn write_manifest(
    dir: &Path,
    name: &str,
    entries: &[Entry],
    per_block: usize,
    seq: &mut i64,
    schema: &Schema,
    marker: [u8; 16],
) -> Result<(u64, u64, u64), String> {
    let mut writer = Writer::builder()
        .schema(schema)
        .writer(Vec::new())
        .codec(Codec::Zstandard(ZstandardSettings::new(1)))
        .block_size(1 << 20)
        .marker(marker)
        .build();
    let mut blocks = 0u64;
    for (i, e) in entries.iter().enumerate() {
        writer.append(entry_value(e, *seq)).map_err(err(name))?;
        *seq += e.row_count;
        if (i + 1) % per_block.max(1) == 0 || i + 1 == entries.len() {
            writer.flush().map_err(err(name))?;
            blocks += 1;
        }
    }
    let bytes = writer.into_inner().map_err(err(name))?;
    let sidecar = build_from_manifest(&bytes, BuildSettings::default())
        .map_err(|e| format!("{name}: sidecar: {} at byte {}", e.kind.name(), e.offset))?;
    let path = dir.join(name);
    std::fs::write(&path, &bytes).map_err(io(&path))?;
    let path = dir.join(format!("{name}.avro.sidecar"));
    std::fs::write(&path, &sidecar).map_err(io(&path))?;
    Ok((bytes.len() as u64, sidecar.len() as u64, blocks))
}

/// Writes the table into `table_dir` (created; must not hold another table).
pub fn generate(table_dir: &Path, spec: &Spec) -> Result<Generated, String> {
    let manifest_dir = table_dir.join("manifest");
    for sub in ["manifest", "schema", "snapshot"] {
        let p = table_dir.join(sub);
        std::fs::create_dir_all(&p).map_err(io(&p))?;
    }
    let entry_schema = Schema::parse_str(ENTRY_SCHEMA).map_err(err("entry schema"))?;
    let list_schema = Schema::parse_str(LIST_SCHEMA).map_err(err("list schema"))?;
    let mut rng = Rng::new(spec.seed);
    let partitions: Vec<(String, i32)> = (0..spec.days)
        .flat_map(|d| spec.hours.iter().map(move |&h| (day_text(d), h)))
        .collect();
    let every = spec.compaction_every;
    let appends = spec.manifests - spec.manifests.checked_div(every).unwrap_or(0);
    let mut out = Generated {
        manifests: spec.manifests,
        snapshot: spec.manifests as u64,
        ..Generated::default()
    };
    let mut list_records = Vec::new();
    let mut previous: Vec<Entry> = Vec::new();
    let mut append_no = 0usize;
    let (mut next_row, mut seq) = (0i64, 0i64);
    let marker = |rng: &mut Rng| {
        let mut m = [0u8; 16];
        m[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
        m[8..].copy_from_slice(&rng.next_u64().to_le_bytes());
        m
    };
    for m in 0..spec.manifests {
        let mut entries = Vec::new();
        if every != 0 && m % every == every - 1 {
            // Compaction of the previous manifest: half of its buckets merged.
            let mut runs: BTreeMap<(Vec<u8>, i32), Vec<&Entry>> = BTreeMap::new();
            for e in previous.iter().filter(|e| !e.delete && e.bucket % 2 == 0) {
                runs.entry((e.partition.clone(), e.bucket))
                    .or_default()
                    .push(e);
            }
            for files in runs.values() {
                let (Some(first), Some(last)) = (files.first(), files.last()) else {
                    continue;
                };
                for f in files {
                    entries.push(Entry {
                        manifest: m,
                        delete: true,
                        ..(*f).clone()
                    });
                }
                entries.push(Entry {
                    manifest: m,
                    delete: false,
                    file_name: format!("data-{}-0.parquet", rng.uuid()),
                    first_row_id: first.first_row_id,
                    row_count: last.first_row_id + last.row_count - first.first_row_id,
                    ..(*first).clone()
                });
            }
        } else {
            let start = append_no * partitions.len() / appends.max(1);
            append_no += 1;
            for k in 0..spec.partitions_per_manifest {
                let Some((dt, hr)) = partitions.get((start + k) % partitions.len().max(1)) else {
                    continue;
                };
                let partition = partition_bytes(dt, *hr);
                for bucket in 0..spec.buckets {
                    for _ in 0..spec.files_per_bucket {
                        let row_count = 1 + (rng.next_u64() % 20_000) as i64;
                        entries.push(Entry {
                            manifest: m,
                            delete: false,
                            dt: dt.clone(),
                            hr: *hr,
                            partition: partition.clone(),
                            bucket,
                            total_buckets: spec.buckets,
                            file_name: format!("data-{}-0.parquet", rng.uuid()),
                            first_row_id: next_row,
                            row_count,
                        });
                        next_row += row_count;
                    }
                }
            }
        }
        let name = format!("manifest-{}-0", rng.uuid());
        let mk = marker(&mut rng);
        let (bytes, sidecar, blocks) = write_manifest(
            &manifest_dir,
            &name,
            &entries,
            spec.entries_per_block,
            &mut seq,
            &entry_schema,
            mk,
        )?;
        out.manifest_bytes += bytes;
        out.sidecar_bytes += sidecar;
        out.blocks += blocks;
        let deleted = entries.iter().filter(|e| e.delete).count() as i64;
        let min_row = entries.iter().map(|e| e.first_row_id).min();
        let max_row = entries
            .iter()
            .map(|e| e.first_row_id + e.row_count - 1)
            .max();
        let opt_long = |v: Option<i64>| v.map_or_else(null, |v| some(Value::Long(v)));
        // Per-field min/max of the partitions (dt, hr) the manifest holds, no nulls.
        let dt = (
            entries.iter().map(|e| e.dt.as_str()).min(),
            entries.iter().map(|e| e.dt.as_str()).max(),
        );
        let hr = (
            entries.iter().map(|e| e.hr).min(),
            entries.iter().map(|e| e.hr).max(),
        );
        let partition_stats = match (dt, hr) {
            ((Some(dt_min), Some(dt_max)), (Some(hr_min), Some(hr_max))) => stats(
                partition_bytes(dt_min, hr_min),
                partition_bytes(dt_max, hr_max),
                2,
            ),
            _ => null(),
        };
        list_records.push(Value::Record(vec![
            ("_VERSION".into(), Value::Int(2)),
            ("_FILE_NAME".into(), Value::String(name.clone())),
            ("_FILE_SIZE".into(), Value::Long(bytes as i64)),
            (
                "_NUM_ADDED_FILES".into(),
                Value::Long(entries.len() as i64 - deleted),
            ),
            ("_NUM_DELETED_FILES".into(), Value::Long(deleted)),
            ("_PARTITION_STATS".into(), partition_stats),
            ("_SCHEMA_ID".into(), Value::Long(0)),
            ("_MIN_BUCKET".into(), some(Value::Int(0))),
            ("_MAX_BUCKET".into(), some(Value::Int(spec.buckets - 1))),
            ("_MIN_LEVEL".into(), some(Value::Int(0))),
            ("_MAX_LEVEL".into(), some(Value::Int(0))),
            ("_MIN_ROW_ID".into(), opt_long(min_row)),
            ("_MAX_ROW_ID".into(), opt_long(max_row)),
            ("_TOTAL_BUCKETS".into(), some(Value::Int(spec.buckets))),
            (
                "_EXTRA_FILES".into(),
                some(Value::Array(vec![Value::String(format!(
                    "{name}.avro.sidecar"
                ))])),
            ),
        ]));
        out.entries.extend(entries.iter().cloned());
        if entries.iter().any(|e| !e.delete) && !(every != 0 && m % every == every - 1) {
            previous = entries;
        }
    }
    out.rows = next_row;

    // Manifest lists: base = all but the last `delta_manifests`, delta = the rest.
    let split = list_records.len().saturating_sub(spec.delta_manifests);
    let delta = list_records.split_off(split);
    let list_name = format!("manifest-list-{}", rng.uuid());
    for (suffix, records) in [("0", list_records), ("1", delta)] {
        let mut writer = Writer::builder()
            .schema(&list_schema)
            .writer(Vec::new())
            .codec(Codec::Zstandard(ZstandardSettings::new(1)))
            .marker(marker(&mut rng))
            .build();
        for r in records {
            writer.append(r).map_err(err("manifest list"))?;
        }
        let bytes = writer.into_inner().map_err(err("manifest list"))?;
        let path = manifest_dir.join(format!("{list_name}-{suffix}"));
        std::fs::write(&path, bytes).map_err(io(&path))?;
    }

    let schema = serde_json::json!({
        "version": 3, "id": 0,
        "fields": [
            {"id": 0, "name": "id", "type": "BIGINT"},
            {"id": 1, "name": "dt", "type": "STRING"},
            {"id": 2, "name": "hr", "type": "INT"},
            {"id": 3, "name": "v", "type": "STRING"}
        ],
        "highestFieldId": 3,
        "partitionKeys": ["dt", "hr"],
        "primaryKeys": [],
        "options": {
            "bucket": spec.buckets.to_string(),
            "bucket-key": "id",
            "row-tracking.enabled": "true",
            "manifest.sidecar.enabled": "true"
        },
        "comment": null,
        "timeMillis": 1_704_067_200_000u64
    });
    // Rows the delta manifests add (the last commits), as the clients require in a snapshot.
    let first_delta = out.manifests.saturating_sub(spec.delta_manifests);
    let delta_rows: i64 = out
        .entries
        .iter()
        .filter(|e| e.manifest >= first_delta && !e.delete)
        .map(|e| e.row_count)
        .sum();
    let snapshot = serde_json::json!({
        "version": 3,
        "id": out.snapshot,
        "schemaId": 0,
        "baseManifestList": format!("{list_name}-0"),
        "deltaManifestList": format!("{list_name}-1"),
        "commitUser": "lakecore-demo",
        "commitIdentifier": out.snapshot,
        "commitKind": "APPEND",
        "timeMillis": 1_704_067_200_000u64,
        "totalRecordCount": out.rows,
        "deltaRecordCount": delta_rows,
        "nextRowId": out.rows
    });
    for (path, text) in [
        (table_dir.join("schema/schema-0"), schema.to_string()),
        (
            table_dir.join(format!("snapshot/snapshot-{}", out.snapshot)),
            snapshot.to_string(),
        ),
        (table_dir.join("snapshot/LATEST"), out.snapshot.to_string()),
    ] {
        std::fs::write(&path, text).map_err(io(&path))?;
    }
    Ok(out)
}
