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

use super::compression::with_decompressor;
use super::error::*;
use super::manifest::{KnownSchema, Manifest, ManifestEntry, ManifestFileMeta};
use super::predicate::*;
use super::sidecar::{fetch_sidecar_with, FetchedSidecar, NoSidecar};
use super::table::*;
use crate::io::map_file;
use crate::sidecar::{ManifestFacts, SelectedBlock};
use crate::{Error, ErrorKind};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use std::sync::OnceLock;

/// The last partition a partition-only filter judged in one manifest scan, and its
/// verdict: a manifest's entries come in runs of one partition, and the filter's answer
/// depends on the partition bytes alone. Partitions of up to 64 bytes are remembered
/// (inline: no allocation).
struct PartitionMemo {
    enabled: bool,
    len: usize,
    bytes: [u8; 64],
    passes: bool,
}

impl PartitionMemo {
    /// `enabled`: the query's filter reads the partition only
    /// ([`Compiled::partition_only`]).
    fn new(enabled: bool) -> Self {
        PartitionMemo {
            enabled,
            len: usize::MAX,
            bytes: [0; 64],
            passes: false,
        }
    }

    /// The verdict for `partition`, if it is the one remembered.
    fn get(&self, partition: &[u8]) -> Option<bool> {
        let held = self.bytes.get(..self.len)?;
        (self.enabled && held == partition).then_some(self.passes)
    }

    fn set(&mut self, partition: &[u8], passes: bool) {
        match self.bytes.get_mut(..partition.len()) {
            Some(to) if self.enabled => {
                to.copy_from_slice(partition);
                self.len = partition.len();
                self.passes = passes;
            }
            _ => self.len = usize::MAX,
        }
    }
}

/// Most entries a filtered scan of one manifest reserves room for up front (the filter may
/// keep few of the records it decodes).
const FILTERED_RESERVE: u64 = 1 << 12;

/// How a scan reads manifests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanOptions {
    /// The sidecar `read` switch (on by default). Off: every manifest is read in full and
    /// no sidecar is opened ([`ManifestRead::SidecarsOff`]); the live files are the same.
    pub read_sidecars: bool,
    /// Skip manifests whose manifest-list statistics (partition min/max and null counts,
    /// bucket range, row-ID range) rule the query out, before opening them (on by default,
    /// as Java, paimon-rust and pypaimon do); counted in [`ScanStats::manifests_pruned`].
    pub prune_manifests: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            read_sidecars: true,
            prune_manifests: true,
        }
    }
}

/// Resolves a column name to its filter target and type.
type TargetOf<'a> = dyn Fn(&str) -> Result<(Target, PartitionType), ScanError> + 'a;
/// Hashes typed bucket-key values.
type HashOf<'a> = dyn Fn(&[(PartitionType, &Value)]) -> Option<u32> + 'a;

/// Types the query's conditions through `schema` into one filter tree, and derives the
/// bucket-key hashes it allows.
pub(super) fn compile(
    query: &ScanQuery,
    schema: &TableSchema,
    schema_id: u64,
) -> Result<Compiled, ScanError> {
    use super::filter::{CmpOp, Filter, Node, Test};
    let mut parts: Vec<Filter> = Vec::new();
    for (key, text) in &query.partition {
        parts.push(if *text == schema.default_partition_name {
            Filter::IsNull(key.clone())
        } else {
            Filter::Compare {
                column: key.clone(),
                op: CmpOp::Eq,
                value: text.clone(),
            }
        });
    }
    for (column, text) in &query.columns {
        if schema.partition_keys.iter().any(|(k, _)| k == column) {
            return Err(ScanError::Query(alloc::format!(
                "{column:?} is a partition key: filter it as a partition value"
            )));
        }
        parts.push(Filter::Compare {
            column: column.clone(),
            op: CmpOp::Eq,
            value: text.clone(),
        });
    }
    parts.extend(query.filter.clone());
    let target = |column: &str| -> Result<(Target, PartitionType), ScanError> {
        if let Some((i, (_, ty))) = schema
            .partition_keys
            .iter()
            .enumerate()
            .find(|(_, (k, _))| k == column)
        {
            return Ok((Target::Partition(u32::try_from(i).unwrap_or(u32::MAX)), *ty));
        }
        if let Some((i, (_, ty))) = schema
            .fields
            .iter()
            .enumerate()
            .find(|(_, (n, _))| n == column)
        {
            return Ok((
                Target::Column {
                    name: column.into(),
                    index: u32::try_from(i).unwrap_or(u32::MAX),
                },
                *ty,
            ));
        }
        let names: Vec<&str> = schema.fields.iter().map(|(n, _)| n.as_str()).collect();
        Err(ScanError::Query(alloc::format!(
            "{column:?} is not a column of the table (columns: {names:?})"
        )))
    };
    fn build(f: &Filter, target: &TargetOf<'_>) -> Result<Node<Leaf>, ScanError> {
        let typed =
            |ty, text: &str, column: &str| typed_value(ty, text, column).map_err(ScanError::Query);
        Ok(match f {
            Filter::Compare { column, op, value } => {
                let (t, ty) = target(column)?;
                Node::Leaf(Leaf {
                    target: t,
                    ty,
                    test: Test::Cmp(*op, typed(ty, value, column)?),
                })
            }
            Filter::In { column, values } => {
                let (t, ty) = target(column)?;
                let values = values
                    .iter()
                    .map(|v| typed(ty, v, column))
                    .collect::<Result<Vec<_>, _>>()?;
                Node::Leaf(Leaf {
                    target: t,
                    ty,
                    test: Test::In(values),
                })
            }
            Filter::IsNull(column) => {
                let (t, ty) = target(column)?;
                Node::Leaf(Leaf {
                    target: t,
                    ty,
                    test: Test::IsNull,
                })
            }
            Filter::IsNotNull(column) => {
                let (t, ty) = target(column)?;
                Node::Leaf(Leaf {
                    target: t,
                    ty,
                    test: Test::IsNotNull,
                })
            }
            Filter::And(items) => Node::And(
                items
                    .iter()
                    .map(|i| build(i, target))
                    .collect::<Result<_, _>>()?,
            ),
            Filter::Or(items) => Node::Or(
                items
                    .iter()
                    .map(|i| build(i, target))
                    .collect::<Result<_, _>>()?,
            ),
        })
    }
    let filter = match Filter::all(parts) {
        Some(f) => Some(build(&f, &target)?),
        None => None,
    };
    let key_hashes = match (&filter, schema.bucket > 0) {
        (Some(f), true) => key_hashes(f, schema),
        _ => None,
    };
    let stats_rule = if schema.data_evolution {
        StatsRule::None
    } else if !schema.trimmed_primary_keys.is_empty() {
        StatsRule::Keys(schema.trimmed_primary_keys.clone())
    } else {
        StatsRule::Values
    };
    Ok(Compiled {
        rows: query.rows.clone(),
        buckets: query.buckets.clone(),
        filter,
        key_hashes,
        schema_id,
        stats_rule,
    })
}

/// The bucket-key hashes a filter allows, `None` when it allows every bucket. A one-field
/// bucket key follows `=`, `IN` and `IS NULL` through `AND` (intersection) and `OR` (union);
/// a several-field key needs `=` or `IS NULL` on every field in the top-level `AND`. A null
/// key is a row with that field's null bit set and a zero slot, hashed like any other (the
/// writers put every null-keyed row in that one bucket; paimon-rust prunes the same way).
fn key_hashes(filter: &super::filter::Node<Leaf>, schema: &TableSchema) -> Option<Vec<u32>> {
    use super::bucket::{binary_row, hash_bytes_by_words};
    use super::filter::{CmpOp, Node, Test};
    let keys = &schema.bucket_keys;
    let is_key = |l: &Leaf, k: &str| matches!(&l.target, Target::Column { name, .. } if name == k);
    let hash =
        |values: &[(PartitionType, &Value)]| binary_row(values).map(|r| hash_bytes_by_words(&r));
    if let [key] = keys.as_slice() {
        fn walk(
            n: &Node<Leaf>,
            key: &str,
            is_key: &dyn Fn(&Leaf, &str) -> bool,
            hash: &HashOf<'_>,
        ) -> Option<Vec<u32>> {
            match n {
                Node::Leaf(l) if is_key(l, key) => match &l.test {
                    Test::Cmp(CmpOp::Eq, v) => Some(alloc::vec![hash(&[(l.ty, v)])?]),
                    Test::In(vs) => vs.iter().map(|v| hash(&[(l.ty, v)])).collect(),
                    Test::IsNull => Some(alloc::vec![hash(&[(l.ty, &Value::Null)])?]),
                    _ => None,
                },
                Node::Leaf(_) => None,
                Node::And(items) => {
                    let mut out: Option<Vec<u32>> = None;
                    for i in items {
                        if let Some(h) = walk(i, key, is_key, hash) {
                            out = Some(match out {
                                None => h,
                                Some(prev) => prev.into_iter().filter(|x| h.contains(x)).collect(),
                            });
                        }
                    }
                    out
                }
                Node::Or(items) => {
                    let mut out = Vec::new();
                    for i in items {
                        out.extend(walk(i, key, is_key, hash)?);
                    }
                    Some(out)
                }
            }
        }
        return walk(filter, key, &is_key, &hash);
    }
    let conj: Vec<&Leaf> = match filter {
        Node::And(items) => items
            .iter()
            .filter_map(|i| match i {
                Node::Leaf(l) => Some(l),
                _ => None,
            })
            .collect(),
        Node::Leaf(l) => alloc::vec![l],
        Node::Or(_) => return None,
    };
    let null = Value::Null;
    let values = keys
        .iter()
        .map(|k| {
            conj.iter().find_map(|l| match &l.test {
                Test::Cmp(CmpOp::Eq, v) if is_key(l, k) => Some((l.ty, v)),
                Test::IsNull if is_key(l, k) => Some((l.ty, &null)),
                _ => None,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(alloc::vec![hash(&values)?])
}

impl Table {
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
    /// let off = ScanOptions { read_sidecars: false, ..ScanOptions::default() };
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
        let spec = snapshot.map_or(SnapshotSpec::Latest, SnapshotSpec::Id);
        self.prepare_snapshot(&spec, query, options)
    }

    /// [`prepare_with`](Self::prepare_with) for any [`SnapshotSpec`]: an id, the latest, a
    /// tag or a point in time.
    ///
    /// ```
    /// use lakecore::paimon::{ScanOptions, ScanQuery, SnapshotSpec, Table};
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/part_append_rs");
    /// let table = Table::open(dir)?;
    /// let time = table.snapshot(2)?.time_millis.unwrap();
    /// let q = ScanQuery::default();
    /// let at = table.prepare_snapshot(&SnapshotSpec::AsOf(time), &q, ScanOptions::default())?;
    /// assert_eq!(at.snapshot().map(|s| s.id), Some(2));
    /// # Ok::<(), lakecore::paimon::ScanError>(())
    /// ```
    pub fn prepare_snapshot(
        &self,
        spec: &SnapshotSpec,
        query: &ScanQuery,
        options: ScanOptions,
    ) -> Result<PreparedScan, ScanError> {
        let Some(snap) = self.resolve(spec)? else {
            if let SnapshotSpec::AsOf(t) = spec {
                return Err(ScanError::Query(alloc::format!(
                    "no snapshot of {} was committed at or before {t} ms since the epoch",
                    self.dir.display()
                )));
            }
            return Ok(PreparedScan {
                table: self.clone(),
                snapshot: None,
                schema: None,
                manifests: Vec::new(),
                pruned: 0,
                pruned_bytes: 0,
                query: Compiled::default(),
                options,
            });
        };
        let schema = self.schema(snap.schema_id)?;
        if query.rows.is_some() && !schema.row_tracking {
            return Err(ScanError::Query(alloc::format!(
                "row-ID ranges need row tracking, and table {} does not track row IDs \
                 (table option 'row-tracking.enabled' is not 'true')",
                self.dir.display()
            )));
        }
        let compiled = compile(query, &schema, snap.schema_id)?;
        let mut manifests = self.manifests(&snap)?;
        for (m, i) in manifests.iter_mut().zip(0u32..) {
            m.position = i;
        }
        let listed = manifests.len();
        let mut pruned_bytes = 0u64;
        if options.prune_manifests {
            manifests.retain(|m| {
                let keep = compiled.manifest_may_match(m);
                if !keep {
                    pruned_bytes += u64::try_from(m.file_size).unwrap_or(0);
                }
                keep
            });
        }
        Ok(PreparedScan {
            table: self.clone(),
            snapshot: Some(snap),
            schema: Some(schema),
            pruned: crate::error::off(listed - manifests.len()),
            pruned_bytes,
            manifests,
            query: compiled,
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
    /// assert_eq!(plan.stats.manifests, plan.stats.manifests_with_sidecar + plan.stats.manifests_pruned);
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
        self.prepare_with(snapshot, query, options)?.run(|_, _| {})
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
    /// The data file the entry adds or deletes.
    pub file: DataFile,
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
    /// Manifests of the snapshot (scanned or pruned).
    pub manifests: u64,
    /// Manifests skipped by their manifest-list statistics, never opened
    /// ([`ScanOptions::prune_manifests`]).
    pub manifests_pruned: u64,
    /// Manifests read through a valid sidecar.
    pub manifests_with_sidecar: u64,
    /// Manifests read in full because their sidecar was invalid or unreadable.
    pub manifests_sidecar_invalid: u64,
    /// Avro blocks in the manifests scanned (pruned manifests are never opened).
    pub blocks_total: u64,
    /// Avro blocks read.
    pub blocks_read: u64,
    /// Bytes of all manifests of the snapshot (pruned ones included).
    pub manifest_bytes_total: u64,
    /// Manifest bytes read.
    pub manifest_bytes_read: u64,
    /// Sidecar bytes read.
    pub sidecar_bytes_read: u64,
    /// Entries (ADD + DELETE) that passed the query.
    pub entries_matched: u64,
}

/// The position of a manifest entry in a snapshot: manifest (base list, then delta list),
/// Avro block (its data offset in the manifest), record in the block. The same whichever
/// blocks a query reads, so it orders entries as a full read meets them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryPosition {
    /// [`ManifestFileMeta::position`].
    pub manifest: u32,
    /// The block's data offset in the manifest.
    pub block: u64,
    /// The record's index in its block.
    pub entry: u32,
}

/// A live data file.
///
/// A plan holds one per live file, millions of them for large tables, and reconciling moves
/// them: the names and lists are boxed slices (`Box<str>`, `Box<[String]>`), with no spare
/// capacity to carry, which keeps a file at 208 bytes on 64-bit targets.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DataFile {
    /// `_PARTITION` bytes (4-byte arity + BinaryRow), shared by the files of a manifest
    /// that have the same partition (one allocation per run of them, not per file).
    pub partition: Arc<[u8]>,
    /// Bucket.
    pub bucket: i32,
    /// File name.
    pub file_name: Box<str>,
    /// Total buckets.
    pub total_buckets: i32,
    /// First row ID, if any.
    pub first_row_id: Option<i64>,
    /// Row count.
    pub row_count: i64,
    /// `_FILE_SIZE` in bytes.
    pub file_size: i64,
    /// `_MIN_SEQUENCE_NUMBER`.
    pub min_sequence_number: i64,
    /// `_MAX_SEQUENCE_NUMBER`.
    pub max_sequence_number: i64,
    /// `_SCHEMA_ID`: the schema the file was written with.
    pub schema_id: i64,
    /// `_LEVEL` (LSM level; 0 for append tables).
    pub level: i32,
    /// `_CREATION_TIME`, milliseconds since the epoch.
    pub creation_time: Option<i64>,
    /// `_DELETE_ROW_COUNT`.
    pub delete_row_count: Option<i64>,
    /// `_FILE_SOURCE`: 0 = APPEND, 1 = COMPACT.
    pub file_source: Option<i32>,
    /// `_EXTERNAL_PATH`: where the file lives when outside the table directory.
    pub external_path: Option<Box<str>>,
    /// `_WRITE_COLS`: the columns a data-evolution file holds (`None`: all).
    pub write_cols: Option<Box<[String]>>,
    /// `_EXTRA_FILES` (e.g. file indexes).
    pub extra_files: Box<[String]>,
    /// Where the file's ADD entry sits in the snapshot's manifests: the order in which the
    /// clients list a bucket's files (and pack them into splits).
    pub position: EntryPosition,
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
    schema: Option<TableSchema>,
    manifests: Vec<ManifestFileMeta>,
    pruned: u64,
    pruned_bytes: u64,
    query: Compiled,
    options: ScanOptions,
}

impl PreparedScan {
    /// The snapshot (`None` for a table without snapshots).
    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.snapshot.as_ref()
    }

    /// The snapshot's table schema, read once when the scan was prepared (`None` without a
    /// snapshot): what [`arrow::plan_batch`](super::arrow::plan_batch) and
    /// [`Table::data_file_path`] take, without reading the schema file again.
    pub fn schema(&self) -> Option<&TableSchema> {
        self.schema.as_ref()
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
    ///
    /// From remote storage ([`Storage::is_remote`](crate::io::Storage::is_remote)): the
    /// sidecar is fetched whole, then only the selected blocks, with coalesced ranged GETs
    /// (or one whole GET when they would cover most of the manifest); a manifest without a
    /// usable sidecar is fetched whole.
    ///
    /// Each call compiles the manifest's Avro schema anew. To scan many manifests, scan them
    /// through [`with_scanner`](Self::with_scanner), which compiles it once for all of them.
    pub fn scan_manifest(&self, meta: &ManifestFileMeta) -> Result<ManifestScan, ScanError> {
        self.with_scanner(|scanner| scanner.scan(meta))
    }

    /// Runs `f` with a [`ManifestScanner`]: [`scan_manifest`](Self::scan_manifest) for
    /// any number of manifests, from any number of threads, with the manifest schema
    /// compiled once and shared (the manifests of a table normally carry one schema; a
    /// manifest with another is compiled on its own). [`run`](Self::run) scans this way.
    ///
    /// ```
    /// use lakecore::paimon::{ScanQuery, Table};
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs");
    /// let prepared = Table::open(dir)?.prepare(None, &ScanQuery::default())?;
    /// let scans = prepared.with_scanner(|scanner| {
    ///     std::thread::scope(|s| {
    ///         let (front, back) = prepared.manifests().split_at(prepared.manifests().len() / 2);
    ///         let back = s.spawn(|| back.iter().map(|m| scanner.scan(m)).collect::<Vec<_>>());
    ///         let mut all: Vec<_> = front.iter().map(|m| scanner.scan(m)).collect();
    ///         all.extend(back.join().unwrap());
    ///         all.into_iter().collect::<Result<Vec<_>, _>>()
    ///     })
    /// })?;
    /// let plan = prepared.finish(scans);
    /// assert_eq!(plan.files, prepared.run(|_, _| {})?.files);
    /// # Ok::<(), lakecore::paimon::ScanError>(())
    /// ```
    pub fn with_scanner<R>(&self, f: impl for<'c> FnOnce(&ManifestScanner<'c>) -> R) -> R {
        let (json, known) = (OnceLock::new(), OnceLock::new());
        f(&ManifestScanner {
            prepared: self,
            memo: SchemaMemo::new(&json, &known),
        })
    }

    fn scan_manifest_with(
        &self,
        meta: &ManifestFileMeta,
        memo: &SchemaMemo<'_>,
    ) -> Result<ManifestScan, ScanError> {
        let mut scan = self.scan_manifest_entries(meta, memo)?;
        for e in &mut scan.entries {
            e.file.position.manifest = meta.position;
        }
        Ok(scan)
    }

    fn scan_manifest_entries(
        &self,
        meta: &ManifestFileMeta,
        memo: &SchemaMemo<'_>,
    ) -> Result<ManifestScan, ScanError> {
        if self.table.storage.is_remote() {
            return self.scan_remote_manifest(meta, memo);
        }
        let dir = self.table.dir.join("manifest");
        let path = dir.join(&meta.file_name);
        // The planner's one unsafe call (the I/O layer's `map_file` hands memmap2's contract on).
        // SAFETY: Paimon manifests are written once and never modified in place; the map
        // lives only for this call.
        #[allow(unsafe_code)]
        let map = unsafe { map_file(&path) }.map_err(io_err(&path))?;
        let manifest: &[u8] = &map;
        let facts = Self::facts(meta);
        let read = match fetch_sidecar_with(
            &dir,
            &meta.extra_files,
            facts,
            self.options.read_sidecars,
            self.table.sidecar_cache.as_deref(),
            |p| std::fs::read(p),
        ) {
            Err(e) => return Err(io_err(&path)(e)),
            Ok(Err(NoSidecar::Disabled)) => ManifestRead::SidecarsOff,
            Ok(Err(NoSidecar::Absent)) => ManifestRead::NoSidecar,
            Ok(Err(NoSidecar::Io(_))) => ManifestRead::SidecarUnreadable,
            Ok(Err(NoSidecar::Invalid(e))) => ManifestRead::SidecarInvalid(e),
            Ok(Ok(sidecar)) => match self.through_sidecar(manifest, &sidecar, memo) {
                Ok(scan) => {
                    return Ok(ManifestScan {
                        file_name: meta.file_name.clone(),
                        ..scan
                    })
                }
                Err(e) => ManifestRead::SidecarInvalid(e),
            },
        };
        self.full_scan(meta, &path, manifest, read, memo)
    }

    /// Room to reserve for the entries of `records` decoded records: all of them when
    /// nothing filters entries (no regrowth copies of the vector), else as many up to
    /// [`FILTERED_RESERVE`]. (Grown by doubling from nothing, a selective plan's thousand
    /// entries took four allocations, whose release the allocator then gave back to the
    /// system and faulted in again on the next plan: 0.75 ms a plan against 0.61 ms.)
    fn expected_entries(&self, records: u64) -> usize {
        let q = &self.query;
        let cap = match q.rows.is_none() && q.buckets.is_none() && q.filter.is_none() {
            true => 1 << 22,
            false => FILTERED_RESERVE,
        };
        usize::try_from(records.min(cap)).unwrap_or(0)
    }

    /// The manifest's facts from its manifest-list entry (what its sidecar must agree with).
    fn facts(meta: &ManifestFileMeta) -> ManifestFacts {
        ManifestFacts {
            length: u64::try_from(meta.file_size).unwrap_or(u64::MAX),
            entries: u64::try_from(meta.num_added_files)
                .ok()
                .zip(u64::try_from(meta.num_deleted_files).ok())
                .and_then(|(a, d)| a.checked_add(d))
                .unwrap_or(u64::MAX),
        }
    }

    /// Decodes every block of the whole `manifest`.
    fn full_scan(
        &self,
        meta: &ManifestFileMeta,
        path: &std::path::Path,
        manifest: &[u8],
        read: ManifestRead,
        memo: &SchemaMemo<'_>,
    ) -> Result<ManifestScan, ScanError> {
        let full = || -> crate::Result<(u64, Vec<ScanEntry>)> {
            let m = memo.open(manifest)?;
            let mut entries = Vec::with_capacity(self.expected_entries(Self::facts(meta).entries));
            let mut blocks = 0u64;
            let mut verdicts = PartitionMemo::new(self.query.partition_only());
            with_decompressor(m.codec(), |dec| {
                for block in m.container().blocks() {
                    let block = block?;
                    blocks += 1;
                    m.entries(&block, dec, |e| {
                        self.keep(&m, e, &mut verdicts, &mut entries)
                    })?;
                }
                Ok(())
            })?;
            Ok((blocks, entries))
        };
        let (blocks, entries) = full().map_err(invalid(path))?;
        Ok(ManifestScan {
            file_name: meta.file_name.clone(),
            read,
            blocks_total: blocks,
            blocks_read: blocks,
            bytes_total: crate::error::off(manifest.len()),
            bytes_read: crate::error::off(manifest.len()),
            sidecar_bytes: 0,
            entries,
        })
    }

    /// The sidecar path of a manifest: select, decode the selected blocks in place, filter.
    /// Any error means the sidecar cannot be trusted for this manifest.
    fn through_sidecar(
        &self,
        manifest: &[u8],
        sidecar: &FetchedSidecar<'_>,
        memo: &SchemaMemo<'_>,
    ) -> crate::Result<ManifestScan> {
        // Validation fused into the selection: one walk over the sidecar's blocks.
        let (view, selected) = self.select_fused(sidecar)?;
        let header = view.avro_header();
        if manifest.get(..header.len()) != Some(header) {
            return Err(Error::new(ErrorKind::Mismatch, 0));
        }
        let records: u64 = selected.iter().map(|b| b.record_count).sum();
        let mut entries = Vec::with_capacity(self.expected_entries(records));
        let mut bytes_read = 0u64;
        let mut blocks_read = 0u64;
        if !selected.is_empty() {
            let m = memo.open(manifest)?;
            bytes_read = crate::error::off(header.len());
            let mut verdicts = PartitionMemo::new(self.query.partition_only());
            with_decompressor(m.codec(), |dec| {
                for selected in selected {
                    let block = m.container().block_at(selected.offset)?;
                    if block.length != selected.length
                        || block.object_count != selected.record_count
                    {
                        return Err(Error::new(ErrorKind::Mismatch, selected.offset));
                    }
                    m.entries(&block, dec, |e| {
                        self.keep(&m, e, &mut verdicts, &mut entries)
                    })?;
                    bytes_read += block.length;
                    blocks_read += 1;
                }
                Ok(())
            })?;
        }
        Ok(ManifestScan {
            file_name: String::new(),
            read: ManifestRead::Sidecar,
            blocks_total: u64::from(view.block_count()),
            blocks_read,
            bytes_total: crate::error::off(manifest.len()),
            bytes_read,
            sidecar_bytes: crate::error::off(sidecar.bytes().len()),
            entries,
        })
    }

    /// [`scan_manifest`](Self::scan_manifest) from remote storage.
    fn scan_remote_manifest(
        &self,
        meta: &ManifestFileMeta,
        memo: &SchemaMemo<'_>,
    ) -> Result<ManifestScan, ScanError> {
        let storage = &*self.table.storage;
        let dir = self.table.dir.join("manifest");
        let path = dir.join(&meta.file_name);
        let facts = Self::facts(meta);
        let read = match fetch_sidecar_with(
            &dir,
            &meta.extra_files,
            facts,
            self.options.read_sidecars,
            self.table.sidecar_cache.as_deref(),
            |p| storage.read(p).map(|b| b.to_vec()),
        ) {
            Err(e) => return Err(io_err(&path)(e)),
            Ok(Err(NoSidecar::Disabled)) => ManifestRead::SidecarsOff,
            Ok(Err(NoSidecar::Absent)) => ManifestRead::NoSidecar,
            Ok(Err(NoSidecar::Io(_))) => ManifestRead::SidecarUnreadable,
            Ok(Err(NoSidecar::Invalid(e))) => ManifestRead::SidecarInvalid(e),
            Ok(Ok(sidecar)) => {
                match self.remote_through_sidecar(&path, facts.length, &sidecar, memo) {
                    Err(e) => return Err(io_err(&path)(e)),
                    Ok(Ok(scan)) => {
                        return Ok(ManifestScan {
                            file_name: meta.file_name.clone(),
                            ..scan
                        })
                    }
                    Ok(Err(e)) => ManifestRead::SidecarInvalid(e),
                }
            }
        };
        let whole = storage.read(&path).map_err(io_err(&path))?;
        self.full_scan(meta, &path, &whole, read, memo)
    }

    /// Validates `sidecar` and selects its blocks for the query in one walk (the query's
    /// partition mask built from the head's dictionary); the sidecar goes into the cache
    /// only when the whole walk passed.
    fn select_fused<'s>(
        &self,
        sidecar: &'s FetchedSidecar<'_>,
    ) -> crate::Result<(crate::sidecar::Sidecar<'s>, Vec<SelectedBlock>)> {
        let head = sidecar.head()?;
        let q = &self.query;
        let mut rows: Option<Vec<crate::select::RowRange>> = q.rows.as_ref().map(|r| {
            r.iter()
                .map(|&(first, last)| crate::select::RowRange::new(first, last))
                .collect()
        });
        let mut partition = |tuple: &[u8]| q.partition_passes(tuple).unwrap_or(true);
        let bucket_pred = |b: i32, t: i32| q.bucket_passes(b, t);
        let out = head.select_filtered(
            rows.as_deref_mut(),
            match q.filters_partitions() {
                true => Some(&mut partition),
                false => None,
            },
            match q.buckets.is_some() {
                true => Some(&bucket_pred),
                false => None,
            },
        )?;
        sidecar.passed();
        Ok(out)
    }

    /// The remote sidecar path: select, fetch the selected blocks' bytes (coalesced ranged
    /// GETs, or the whole manifest when they would cover most of it), decode them in place.
    /// `Err`: the fetch failed; `Ok(Err)`: the sidecar cannot be trusted for this manifest.
    ///
    /// The manifest's own header is not fetched: the sidecar carries it, and every fetched
    /// block must end with that header's 16-byte sync marker (random per file), so blocks
    /// of another file do not pass.
    fn remote_through_sidecar(
        &self,
        path: &std::path::Path,
        length: u64,
        sidecar: &FetchedSidecar<'_>,
        memo: &SchemaMemo<'_>,
    ) -> std::io::Result<crate::Result<ManifestScan>> {
        let storage = &*self.table.storage;
        let (view, selected) = match self.select_fused(sidecar) {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        let header = view.avro_header();
        let mut scan = ManifestScan {
            file_name: String::new(),
            read: ManifestRead::Sidecar,
            blocks_total: u64::from(view.block_count()),
            blocks_read: 0,
            bytes_total: length,
            bytes_read: 0,
            sidecar_bytes: crate::error::off(sidecar.bytes().len()),
            entries: Vec::new(),
        };
        if selected.is_empty() {
            return Ok(Ok(scan));
        }
        let tuning = storage.tuning();
        let spans: Vec<(u64, u64)> = selected.iter().map(SelectedBlock::span).collect();
        let ranges = crate::io::coalesce_with_gap(&spans, tuning.coalesce_gap);
        let fetched: u64 = ranges.iter().map(|r| r.1).sum();
        let whole = fetched.saturating_mul(1000)
            >= length.saturating_mul(u64::from(tuning.whole_above_per_mille));
        let parts: Vec<(u64, crate::io::Stored)> = if whole {
            let bytes = storage.read(path)?;
            if bytes.get(..header.len()) != Some(header) {
                return Ok(Err(Error::new(ErrorKind::Mismatch, 0)));
            }
            alloc::vec![(0, bytes)]
        } else {
            let got = storage.read_ranges(path, &ranges)?;
            ranges.iter().map(|r| r.0).zip(got).collect()
        };
        let mut decode = || -> crate::Result<()> {
            let m = memo.open(header)?;
            let mut verdicts = PartitionMemo::new(self.query.partition_only());
            with_decompressor(m.codec(), |dec| {
                let mut part = parts.iter().peekable();
                for &SelectedBlock {
                    offset,
                    length: len,
                    record_count: count,
                    ..
                } in &selected
                {
                    // Parts and blocks are both in file order: advance to the part holding it.
                    let bytes = loop {
                        let Some((start, bytes)) = part.peek() else {
                            return Err(Error::new(ErrorKind::OutOfBounds, offset));
                        };
                        let part_end = start.saturating_add(crate::error::off(bytes.len()));
                        let inside = offset
                            .checked_sub(*start)
                            .and_then(|at| usize::try_from(at).ok())
                            .and_then(|at| bytes.get(at..))
                            .filter(|_| offset.checked_add(len).is_some_and(|end| end <= part_end));
                        match inside {
                            Some(b) => break b,
                            None => {
                                part.next();
                            }
                        }
                    };
                    let block = m.container().block_in(bytes, offset)?;
                    if block.length != len || block.object_count != count {
                        return Err(Error::new(ErrorKind::Mismatch, offset));
                    }
                    m.entries(&block, dec, |e| {
                        self.keep(&m, e, &mut verdicts, &mut scan.entries)
                    })?;
                    scan.bytes_read += len;
                    scan.blocks_read += 1;
                }
                Ok(())
            })
        };
        if let Err(e) = decode() {
            return Ok(Err(e));
        }
        scan.bytes_read += crate::error::off(header.len());
        Ok(Ok(scan))
    }

    /// Whether the filter can hold for the entry: partition leaves exactly on its partition,
    /// column leaves on its value statistics (entries without usable statistics can).
    fn filter_passes(&self, e: &ManifestEntry<'_>, partition: &[u8]) -> crate::Result<bool> {
        let q = &self.query;
        let Some(filter) = &q.filter else {
            return Ok(true);
        };
        let row = crate::sidecar::BinaryRow::from_partition(partition, e.block_offset)?;
        // The statistics' bounds are read for the first column leaf only (a partition
        // filter, the usual selective plan, never needs them).
        let stats_bounds = || {
            let stats = match &q.stats_rule {
                StatsRule::Values => e.value_stats(),
                StatsRule::Keys(_) => e.key_stats(),
                StatsRule::None => None,
            };
            stats.and_then(|r| super::manifest::stats_bounds(r).map(|(lo, hi)| (r, lo, hi)))
        };
        let mut bounds = None;
        let same_schema = e.schema_id() == i64::try_from(q.schema_id).ok();
        let stats_cols = e.value_stats_cols();
        let write_cols = e.write_cols_list();
        let mut failed = None;
        let t = filter.eval(&mut |leaf| match &leaf.target {
            Target::Partition(i) => match read_field(&row, *i, leaf.ty) {
                Ok(v) => super::filter::Tri::exact(leaf.test.on_value(v.as_ref())),
                Err(err) => {
                    failed = Some(err);
                    super::filter::Tri::Maybe
                }
            },
            Target::Column { name, index } => {
                let Some((record, lo, hi)) = *bounds.get_or_insert_with(stats_bounds) else {
                    return super::filter::Tri::Maybe;
                };
                // The column's position in the statistics: by `_VALUE_STATS_COLS` when the
                // writer listed them, else by `_WRITE_COLS`, else by the file's schema.
                if let StatsRule::Keys(keys) = &q.stats_rule {
                    // Key statistics cover the trimmed primary key, in key order.
                    let Some(at) = keys.iter().position(|k| k == name) else {
                        return super::filter::Tri::Maybe;
                    };
                    let at = u32::try_from(at).unwrap_or(u32::MAX);
                    return leaf.on_stats(
                        at,
                        lo,
                        hi,
                        super::manifest::stats_null_count(record, at),
                        e.row_count(),
                    );
                }
                let at = match (&stats_cols, &write_cols) {
                    (Some(cols), _) => cols.position(name),
                    // A file written for some columns only (data evolution): its statistics
                    // cover those columns, in that order.
                    (None, Some(cols)) => cols.position(name),
                    (None, None) if same_schema => Some(*index),
                    (None, None) => None,
                };
                match at {
                    Some(at) => leaf.on_stats(
                        at,
                        lo,
                        hi,
                        super::manifest::stats_null_count(record, at),
                        e.row_count(),
                    ),
                    None => super::filter::Tri::Maybe,
                }
            }
        });
        match failed {
            Some(err) => Err(err),
            None => Ok(t.possible()),
        }
    }

    /// Appends `e` to `out` when it passes the query (the only allocation per entry, and
    /// only for entries kept).
    fn keep(
        &self,
        manifest: &Manifest<'_>,
        e: &ManifestEntry<'_>,
        memo: &mut PartitionMemo,
        out: &mut Vec<ScanEntry>,
    ) -> crate::Result<()> {
        let bad = Error::new(ErrorKind::InvalidValue, e.block_offset);
        let (Some(kind), Some(partition), Some(bucket), Some(total)) =
            (e.kind(), e.partition(), e.bucket(), e.total_buckets())
        else {
            return Err(bad);
        };
        let delete = match kind {
            0 => false,
            1 => true,
            _ => return Err(bad),
        };
        let row_count = e.row_count().unwrap_or(0);
        let first_row_id = e.first_row_id();
        let q = &self.query;
        let mut filter_passes = |e: &ManifestEntry<'_>| match memo.get(partition) {
            Some(passes) => Ok(passes),
            None => {
                let passes = self.filter_passes(e, partition).map_err(|_| bad)?;
                memo.set(partition, passes);
                Ok(passes)
            }
        };
        if q.rows_pass(first_row_id, row_count)
            && q.bucket_passes(bucket, total)
            && q.key_bucket_passes(bucket, total)
            && filter_passes(e)?
        {
            // The name is read (and checked as UTF-8) for the entries kept only.
            let name = e.file_name().ok_or(bad)?;
            let strings = |it: super::manifest::Strings<'_, '_>| {
                it.map(|r| r.map(String::from))
                    .collect::<crate::Result<Box<[String]>>>()
            };
            // Entries of a manifest mostly come in runs of one partition: share its bytes.
            let partition = match out.last() {
                Some(last) if *last.file.partition == *partition => last.file.partition.clone(),
                _ => Arc::from(partition),
            };
            out.push(ScanEntry {
                delete,
                file: DataFile {
                    partition,
                    bucket,
                    file_name: name.into(),
                    total_buckets: total,
                    first_row_id,
                    row_count,
                    file_size: e.file_size().unwrap_or(0),
                    min_sequence_number: e.min_sequence_number().unwrap_or(0),
                    max_sequence_number: e.max_sequence_number().unwrap_or(0),
                    schema_id: e.schema_id().unwrap_or(0),
                    level: e.level().unwrap_or(0),
                    creation_time: e.creation_time(),
                    delete_row_count: e.delete_row_count(),
                    file_source: e.file_source(),
                    external_path: e.external_path().map(Box::from),
                    write_cols: match e.has_write_cols() {
                        true => Some(strings(manifest.write_cols(e)).map_err(|_| bad)?),
                        false => None,
                    },
                    extra_files: strings(manifest.extra_files(e)).map_err(|_| bad)?,
                    position: EntryPosition {
                        manifest: 0, // set by scan_manifest

                        block: e.block_offset,
                        entry: e.index,
                    },
                },
            });
        }
        Ok(())
    }

    /// Reconciles the per-manifest results (in manifest order): an ADD makes a file live, a
    /// DELETE of the same `(partition, bucket, file name)` removes it.
    pub fn finish(&self, scans: Vec<ManifestScan>) -> ScanPlan {
        let mut r = self.reconciler();
        for scan in scans {
            r.add(scan);
        }
        r.finish()
    }

    /// Scans every manifest, in parallel (rayon's pool) a window of them at a time, and
    /// reconciles each window in manifest order as it completes: memory follows the live
    /// files, not the entries of every manifest. `progress(done, total)` is called after
    /// each window (e.g. to drive a progress bar).
    ///
    /// ```
    /// use lakecore::paimon::{ScanQuery, Table};
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs");
    /// let prepared = Table::open(dir)?.prepare(None, &ScanQuery::default())?;
    /// let mut calls = 0;
    /// let plan = prepared.run(|done, total| { calls += 1; assert!(done <= total); })?;
    /// assert_eq!(plan.files.len(), 444);
    /// assert!(calls >= 1);
    /// # Ok::<(), lakecore::paimon::ScanError>(())
    /// ```
    pub fn run(&self, mut progress: impl FnMut(u64, u64)) -> Result<ScanPlan, ScanError> {
        use rayon::prelude::*;
        let total = crate::error::off(self.manifests.len());
        let remote = self.table.storage.is_remote();
        let in_flight = self.table.storage.tuning().manifests_in_flight.max(1);
        let window = match remote {
            false => 8 * rayon::current_num_threads().max(1),
            true => 4 * in_flight,
        };
        let mut reconciler = self.reconciler();
        let mut done = 0u64;
        self.with_scanner(|scanner| {
            // A window's results are reconciled (on one thread) while the next window is
            // scanned, so that no core waits for the other.
            let mut pending: Vec<ManifestScan> = Vec::new();
            for chunk in self.manifests.chunks(window) {
                let previous = core::mem::take(&mut pending);
                let reconcile = || previous.into_iter().for_each(|scan| reconciler.add(scan));
                let scans = match (remote, chunk) {
                    // One manifest (a selective plan's usual case): on this thread, without
                    // handing work to the pool and waiting for it.
                    (false, [only]) => {
                        reconcile();
                        let scan = scanner.scan(only)?;
                        reconciler.add_scanned_here(scan);
                        Vec::new()
                    }
                    (false, _) => {
                        let (scans, ()) = rayon::join(
                            || {
                                chunk
                                    .par_iter()
                                    .map(|m| scanner.scan(m))
                                    .collect::<Result<Vec<_>, _>>()
                            },
                            reconcile,
                        );
                        scans?
                    }
                    (true, _) => {
                        reconcile();
                        Self::scan_waiting(scanner, chunk, in_flight)?
                    }
                };
                pending = scans;
                done += crate::error::off(chunk.len());
                progress(done, total);
            }
            for scan in pending {
                reconciler.add(scan);
            }
            Ok(reconciler.finish())
        })
    }

    /// Scans `chunk` on `threads` threads that mostly wait for the network (remote storage:
    /// rayon's CPU-sized pool would keep only a few requests in flight). Each thread holds
    /// one manifest's fetched bytes at a time.
    fn scan_waiting(
        scanner: &ManifestScanner<'_>,
        chunk: &[ManifestFileMeta],
        threads: usize,
    ) -> Result<Vec<ManifestScan>, ScanError> {
        use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let slots: Vec<std::sync::Mutex<Option<Result<ManifestScan, ScanError>>>> =
            chunk.iter().map(|_| std::sync::Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for _ in 0..threads.min(chunk.len()) {
                s.spawn(|| {
                    while !failed.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let (Some(meta), Some(slot)) = (chunk.get(i), slots.get(i)) else {
                            break;
                        };
                        let result = scanner.scan(meta);
                        if result.is_err() {
                            failed.store(true, Ordering::Relaxed);
                        }
                        if let Ok(mut g) = slot.lock() {
                            *g = Some(result);
                        }
                    }
                });
            }
        });
        let mut out = Vec::with_capacity(chunk.len());
        let mut first_error = None;
        for slot in slots {
            match slot.into_inner().ok().flatten() {
                Some(Ok(scan)) => out.push(scan),
                Some(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                None => {}
            }
        }
        match first_error {
            Some(e) => Err(e),
            None if out.len() == chunk.len() => Ok(out),
            None => Err(ScanError::Query(alloc::format!(
                "internal: {} of {} manifests were not scanned",
                chunk.len() - out.len(),
                chunk.len()
            ))),
        }
    }

    /// An incremental [`finish`](Self::finish): feed the manifest results in manifest order
    /// as they arrive and drop them, so memory follows the live files rather than every
    /// entry of the snapshot.
    pub fn reconciler(&self) -> Reconciler {
        // The manifest list's counts are claims: summed without overflow, whatever they say.
        let (adds, deletes) = self.manifests.iter().fold((0i64, 0i64), |(a, d), m| {
            (
                a.saturating_add(m.num_added_files.max(0)),
                d.saturating_add(m.num_deleted_files.max(0)),
            )
        });
        // Unfiltered, every live file is kept: size for them up front (no regrowth copies),
        // with room for the ADDs pending DELETEs will remove (see `Reconciler::add`). Only
        // the part used is ever touched.
        let q = &self.query;
        let unfiltered = q.rows.is_none() && q.buckets.is_none() && q.filter.is_none();
        let live = adds.saturating_sub(deletes).clamp(0, 1 << 26);
        let expect = match unfiltered {
            true => usize::try_from(adds.clamp(0, live + live / 3 + (1 << 16))).unwrap_or(0),
            false => 0,
        };
        Reconciler {
            snapshot: self.snapshot.as_ref().map(|s| s.id),
            stats: ScanStats {
                manifests: self.pruned,
                manifests_pruned: self.pruned,
                manifest_bytes_total: self.pruned_bytes,
                ..ScanStats::default()
            },
            files: Vec::with_capacity(expect),
            deletes: Vec::new(),
            resolve_min: RESOLVE_MIN_DELETES,
        }
    }
}

/// Scans the manifests of a [`PreparedScan`] with one compiled manifest schema; see
/// [`PreparedScan::with_scanner`]. It is `Sync`: share it between threads.
pub struct ManifestScanner<'c> {
    prepared: &'c PreparedScan,
    memo: SchemaMemo<'c>,
}

impl ManifestScanner<'_> {
    /// [`PreparedScan::scan_manifest`], reusing the schema compiled for an earlier manifest
    /// when this one's schema JSON is the same, byte for byte.
    pub fn scan(&self, meta: &ManifestFileMeta) -> Result<ManifestScan, ScanError> {
        self.prepared.scan_manifest_with(meta, &self.memo)
    }
}

impl core::fmt::Debug for ManifestScanner<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ManifestScanner")
            .field("manifests", &self.prepared.manifests.len())
            .field(
                "schema_compiled",
                &self.memo.known.get().is_some_and(Option::is_some),
            )
            .finish()
    }
}

/// The manifest schema of a scan, compiled from the first manifest opened and reused for
/// every manifest with the same schema JSON (see [`KnownSchema`]).
struct SchemaMemo<'c> {
    json: &'c OnceLock<Vec<u8>>,
    known: &'c OnceLock<Option<KnownSchema<'c>>>,
}

impl<'c> SchemaMemo<'c> {
    fn new(json: &'c OnceLock<Vec<u8>>, known: &'c OnceLock<Option<KnownSchema<'c>>>) -> Self {
        SchemaMemo { json, known }
    }

    /// Opens a manifest, compiling its schema only when it is not the memo's.
    fn open<'f>(&self, bytes: &'f [u8]) -> crate::Result<Manifest<'f>>
    where
        'c: 'f,
    {
        if self.known.get().is_none() {
            // The first manifest: its schema is compiled into the memo, and opened from
            // there (compiling it for the manifest too doubled a one-manifest plan's
            // schema work).
            let json = super::manifest::header_schema_json(bytes)?;
            let json = self.json.get_or_init(|| json.to_vec());
            self.known.get_or_init(|| KnownSchema::parse(json).ok());
        }
        Manifest::parse_known(bytes, self.known.get().and_then(Option::as_ref))
    }
}

/// A file or a DELETE in the reconciliation, by index: `at` counts the files, then the
/// DELETEs after them (see [`Held::get`]). `prefix` is 16 bytes of its file name from the
/// end of the prefix all the names compared share ([`Held::slots`]), big-endian and
/// zero-padded: it orders names that differ there without reading them.
#[derive(Clone, Copy, Debug)]
struct Slot {
    prefix: u128,
    at: usize,
}

impl Slot {
    /// The slot of `file`, its prefix taken from byte `skip` of its name (a prefix every
    /// name compared with it shares).
    fn new(at: usize, file: &DataFile, skip: usize) -> Self {
        let mut head = [0u8; 16];
        let name = file.file_name.as_bytes().get(skip..).unwrap_or_default();
        let n = name.len().min(16);
        if let (Some(to), Some(from)) = (head.get_mut(..n), name.get(..n)) {
            to.copy_from_slice(from);
        }
        Slot {
            prefix: u128::from_be_bytes(head),
            at,
        }
    }
}

/// How many leading bytes `a` and `b` share, up to `max`: eight bytes a step.
fn common_prefix(a: &[u8], b: &[u8], max: usize) -> usize {
    let limit = max.min(a.len()).min(b.len());
    let (a, b) = (
        a.get(..limit).unwrap_or_default(),
        b.get(..limit).unwrap_or_default(),
    );
    let (wa, _) = a.as_chunks::<8>();
    let (wb, _) = b.as_chunks::<8>();
    let mut at = 0usize;
    for (x, y) in wa.iter().zip(wb) {
        let diff = u64::from_le_bytes(*x) ^ u64::from_le_bytes(*y);
        if diff != 0 {
            return at + (diff.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + a
        .get(at..)
        .unwrap_or_default()
        .iter()
        .zip(b.get(at..).unwrap_or_default())
        .take_while(|(x, y)| x == y)
        .count()
}

/// The files and DELETEs being reconciled, read through [`Slot`]s.
#[derive(Clone, Copy)]
struct Held<'f> {
    files: &'f [DataFile],
    deletes: &'f [DataFile],
}

impl<'f> Held<'f> {
    /// A slot per file and per DELETE, in their order. The prefixes start after the bytes
    /// all the names share: one writer's files differ only after `data-`, its UUID and a
    /// dash (a selective plan's thousand files often come from one writer), and prefixes
    /// that all began with those bytes would tie on every comparison.
    fn slots(&self) -> (Vec<Slot>, Vec<Slot>) {
        let n = self.files.len();
        let skip = self.shared_name_prefix();
        let slots = |from: &[DataFile], first: usize| -> Vec<Slot> {
            from.iter()
                .enumerate()
                .map(|(i, f)| Slot::new(first + i, f, skip))
                .collect()
        };
        (slots(self.files, 0), slots(self.deletes, n))
    }

    /// The length of the prefix every file name and DELETE name shares.
    fn shared_name_prefix(&self) -> usize {
        let mut names = self
            .files
            .iter()
            .chain(self.deletes)
            .map(|f| f.file_name.as_bytes());
        let Some(first) = names.next() else {
            return 0;
        };
        let mut shared = first.len();
        for name in names {
            shared = common_prefix(first, name, shared);
            if shared == 0 {
                break;
            }
        }
        shared
    }

    fn get(&self, s: &Slot) -> Option<&'f DataFile> {
        match s.at.checked_sub(self.files.len()) {
            None => self.files.get(s.at),
            Some(d) => self.deletes.get(d),
        }
    }

    /// The order of two entries of one `(partition, bucket)` group: file name (the prefixes
    /// first; a zero-padded prefix orders as the name does wherever two prefixes differ).
    fn name_order(&self, a: &Slot, b: &Slot) -> core::cmp::Ordering {
        a.prefix
            .cmp(&b.prefix)
            .then_with(|| match (self.get(a), self.get(b)) {
                (Some(x), Some(y)) => x.file_name.cmp(&y.file_name),
                _ => core::cmp::Ordering::Equal,
            })
    }

    /// The order of two entries' `(partition, bucket)` groups.
    fn group_order(&self, a: &Slot, b: &Slot) -> core::cmp::Ordering {
        match (self.get(a), self.get(b)) {
            (Some(x), Some(y)) => group_order(x, y),
            _ => core::cmp::Ordering::Equal,
        }
    }

    /// The whole key ([`key_order`]), for entries of any groups.
    fn key_order(&self, a: &Slot, b: &Slot) -> core::cmp::Ordering {
        match (self.get(a), self.get(b)) {
            (Some(x), Some(y)) => key_order(x, y),
            _ => core::cmp::Ordering::Equal,
        }
    }

    fn position_order(&self, a: &Slot, b: &Slot) -> core::cmp::Ordering {
        let position = |s: &Slot| self.get(s).map(|f| f.position);
        position(a).cmp(&position(b))
    }
}

/// The order of a plan's files: partition bytes, bucket, file name.
fn key_order(a: &DataFile, b: &DataFile) -> core::cmp::Ordering {
    group_order(a, b).then_with(|| a.file_name.cmp(&b.file_name))
}

/// The order of the files' `(partition, bucket)` groups: partition bytes, then bucket.
fn group_order(a: &DataFile, b: &DataFile) -> core::cmp::Ordering {
    let partition = match Arc::ptr_eq(&a.partition, &b.partition) {
        true => core::cmp::Ordering::Equal,
        false => a.partition.cmp(&b.partition),
    };
    partition.then(a.bucket.cmp(&b.bucket))
}

/// [`key_order`], then the entries' positions in the snapshot (the order they were written).
fn key_then_position(a: &DataFile, b: &DataFile) -> core::cmp::Ordering {
    key_order(a, b).then(a.position.cmp(&b.position))
}

/// The reconciliation walk over the files `adds` lists and the DELETEs `deletes` lists,
/// both sorted by `same` (a file's identity) then position: per file, the last ADD wins
/// unless a later DELETE of the same file follows it. Moves the slots of the files kept to
/// the front of `adds`, in order, and returns how many they are.
fn apply_deletes(
    held: &Held<'_>,
    adds: &mut [Slot],
    deletes: &[Slot],
    same: impl Fn(&Slot, &Slot) -> core::cmp::Ordering,
) -> usize {
    let mut kept = 0usize;
    let mut next_delete = 0usize;
    let mut at = 0usize;
    while let Some(first) = adds.get(at).copied() {
        // The run of ADDs of one file: the last one (the latest position) wins.
        let mut end = at + 1;
        while adds.get(end).is_some_and(|f| same(f, &first).is_eq()) {
            end += 1;
        }
        let Some(winner) = adds.get(end - 1).copied() else {
            break;
        };
        while deletes
            .get(next_delete)
            .is_some_and(|d| same(d, &winner).is_lt())
        {
            next_delete += 1;
        }
        let mut last_delete = None;
        while let Some(d) = deletes
            .get(next_delete)
            .filter(|d| same(d, &winner).is_eq())
        {
            last_delete = held.get(d).map(|d| d.position);
            next_delete += 1;
        }
        let position = held.get(&winner).map(|w| w.position);
        if last_delete.is_none_or(|d| Some(d) < position) {
            adds.swap(kept, end - 1);
            kept += 1;
        }
        at = end;
    }
    kept
}

/// Moves the files whose indices `kept` lists to the front of `files`, in that order, and
/// returns how many they are (the others follow, in no order). Each file moves at most
/// once, by a swap along the permutation's cycles: the sorts sort [`Slot`]s, never the
/// 208-byte files. For a slice that fits in cache (one group): across a whole plan the
/// swaps would miss the cache at both ends.
fn gather(files: &mut [DataFile], kept: impl IntoIterator<Item = usize>) -> usize {
    let n = files.len();
    let mut dest = alloc::vec![usize::MAX; n];
    let mut next = 0usize;
    for at in kept {
        if let Some(d) = dest.get_mut(at).filter(|d| **d == usize::MAX) {
            *d = next;
            next += 1;
        }
    }
    let live = next;
    for d in dest.iter_mut().filter(|d| **d == usize::MAX) {
        *d = next;
        next += 1;
    }
    // `dest` is a permutation: every swap puts one file in its place, so there are at most
    // `n` of them (the budget only bounds the loop on principle).
    let mut budget = n;
    for i in 0..n {
        while let Some(&d) = dest.get(i).filter(|&&d| d != i && d < n) {
            if budget == 0 {
                break;
            }
            budget -= 1;
            files.swap(i, d);
            dest.swap(i, d);
        }
    }
    live
}

/// Makes neighbouring files of one partition share one allocation of its bytes (a
/// manifest's run shares one already; the plan's neighbours come from many manifests), so
/// whoever compares them next (the next resolve, the Arrow batches, the splits) compares
/// pointers.
fn share_partitions(files: &mut [DataFile]) {
    for i in 1..files.len() {
        if let Some([prev, cur]) = files.get_mut(i - 1..=i) {
            if !Arc::ptr_eq(&prev.partition, &cur.partition) && prev.partition == cur.partition {
                cur.partition = Arc::clone(&prev.partition);
            }
        }
    }
}

/// [`Reconciler::resolve`] by sorting every file and DELETE by its whole key (plans too
/// small, or with too many groups, for [`resolve_by_group`]).
fn resolve_whole(files: &mut Vec<DataFile>, deletes: &mut [DataFile]) {
    use rayon::slice::ParallelSliceMut;
    if files.len() < GROUP_MIN_FILES {
        return resolve_small(files, deletes);
    }
    files.par_sort_unstable_by(key_then_position);
    deletes.par_sort_unstable_by(key_then_position);
    let n = files.len();
    let held = Held { files, deletes };
    let (mut adds, dels) = held.slots();
    let kept = apply_deletes(&held, &mut adds, &dels, |a, b| held.key_order(a, b));
    // The files kept are in order already: close the gaps.
    let mut keep = alloc::vec![false; n];
    for s in adds.iter().take(kept) {
        if let Some(k) = keep.get_mut(s.at) {
            *k = true;
        }
    }
    let mut at = 0usize;
    files.retain(|_| {
        at += 1;
        keep.get(at - 1).copied().unwrap_or(false)
    });
    share_partitions(files);
}

/// [`resolve_whole`] for a plan that fits in cache, on the calling thread: the [`Slot`]s
/// are sorted, not the 208-byte files (a selective plan's thousand files cost about ten
/// times more to sort whole, and a parallel sort of them more to schedule than to run), and
/// the files kept then move to the front once each ([`gather`]).
fn resolve_small(files: &mut Vec<DataFile>, deletes: &mut [DataFile]) {
    let kept = resolve_slots(files, deletes, |held, a, b| {
        held.group_order(a, b).then_with(|| held.name_order(a, b))
    });
    files.truncate(kept);
    share_partitions(files);
}

/// Reconciles `files` and `deletes` through their [`Slot`]s: both sorted by `same` (a file's
/// identity) then position, walked ([`apply_deletes`]), and the files kept moved to the
/// front of `files` in order, each once ([`gather`]); returns how many they are.
fn resolve_slots(
    files: &mut [DataFile],
    deletes: &[DataFile],
    same: impl Fn(&Held<'_>, &Slot, &Slot) -> core::cmp::Ordering,
) -> usize {
    let held = Held { files, deletes };
    let (mut adds, mut dels) = held.slots();
    let order = |a: &Slot, b: &Slot| same(&held, a, b).then_with(|| held.position_order(a, b));
    adds.sort_unstable_by(order);
    dels.sort_unstable_by(order);
    let kept = apply_deletes(&held, &mut adds, &dels, |a, b| same(&held, a, b));
    gather(files, adds.iter().take(kept).map(|s| s.at))
}

/// Plans with fewer files than this are sorted whole.
const GROUP_MIN_FILES: usize = 1 << 12;
/// Reconciling by group pays while groups hold at least this many files on average.
const GROUP_MIN_AVERAGE: usize = 16;

/// [`Reconciler::resolve`] one `(partition, bucket)` group at a time; `false` (nothing
/// changed) when the plan is small or has too many groups for that to pay.
///
/// A plan has far fewer groups than files. Sorting all files by their whole key compares
/// partition bytes behind two pointers on every comparison and moves 208-byte files across
/// the whole plan on every pass. Here the files (and the DELETEs) are first moved into
/// their group's range in place: one distributing pass, the first digit of an MSD radix
/// sort, whose moves stream through memory group by group. Each group is then reconciled
/// alone, in parallel, while it fits in cache: a [`Slot`] per file is sorted by name (most
/// names compare by their prefixes alone), the walk keeps the winners, and they move to the
/// group's front once each ([`gather`]), sharing one allocation of the partition bytes.
/// Last, the files kept move to the front, group after group.
fn resolve_by_group(files: &mut Vec<DataFile>, deletes: &mut Vec<DataFile>) -> bool {
    use rayon::prelude::*;
    type FxHashMap<K, V> = std::collections::HashMap<K, V, rustc_hash::FxBuildHasher>;
    if files.len() < GROUP_MIN_FILES {
        return false;
    }
    // Each file's group, numbered as first met; each DELETE's (`u32::MAX`: no file of
    // its group is held, so it deletes nothing, now or later).
    let mut ids: FxHashMap<(&[u8], i32), u32> = FxHashMap::default();
    // Each group's partition bytes, as its first file holds them.
    let mut shared: Vec<Arc<[u8]>> = Vec::new();
    let mut group = Vec::with_capacity(files.len());
    let mut last: Option<(*const u8, i32, u32)> = None;
    for f in files.iter() {
        let ptr = f.partition.as_ptr();
        let g = match last {
            // The files of a manifest's run share one allocation of their partition bytes.
            Some((p, b, g)) if p == ptr && b == f.bucket => g,
            _ => {
                let next = u32::try_from(ids.len()).unwrap_or(u32::MAX);
                *ids.entry((&f.partition[..], f.bucket)).or_insert_with(|| {
                    shared.push(Arc::clone(&f.partition));
                    next
                })
            }
        };
        last = Some((ptr, f.bucket, g));
        group.push(g);
    }
    let groups = ids.len();
    if groups.saturating_mul(GROUP_MIN_AVERAGE) > files.len() || groups >= u32::MAX as usize {
        return false;
    }
    let mut dgroup: Vec<u32> = deletes
        .iter()
        .map(|d| {
            ids.get(&(&d.partition[..], d.bucket))
                .copied()
                .unwrap_or(u32::MAX)
        })
        .collect();
    // Groups in key order: `rank[id]` is the group's place in the plan, and the groups of
    // one partition (its buckets) share one allocation of its bytes, `partition[rank]`.
    let mut keys: Vec<((&[u8], i32), u32)> = ids.into_iter().collect();
    keys.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut rank = alloc::vec![0u32; groups];
    let mut partition: Vec<Arc<[u8]>> = Vec::with_capacity(groups);
    let mut prev: Option<&[u8]> = None;
    for (r, ((bytes, _), id)) in keys.iter().enumerate() {
        if let Some(slot) = rank.get_mut(*id as usize) {
            *slot = u32::try_from(r).unwrap_or(u32::MAX);
        }
        let same = match (prev, partition.last()) {
            (Some(p), Some(last)) if p == *bytes => Some(Arc::clone(last)),
            _ => None,
        };
        if let Some(own) = same.or_else(|| shared.get(*id as usize).cloned()) {
            partition.push(own);
        }
        prev = Some(bytes);
    }
    drop((keys, shared));
    let to_rank = |g: &mut u32| *g = rank.get(*g as usize).copied().unwrap_or(groups as u32);
    group.iter_mut().for_each(to_rank);
    dgroup.iter_mut().for_each(to_rank);
    let fends = distribute(files, &mut group, groups);
    // The DELETEs of no group held sort last (group `groups`) and go.
    let dends = distribute(deletes, &mut dgroup, groups + 1);
    drop((group, dgroup));
    deletes.truncate(dends.get(groups.wrapping_sub(1)).copied().unwrap_or(0));
    // Each group: its files and its DELETEs.
    let mut work = Vec::with_capacity(groups);
    let (mut frest, mut drest): (&mut [DataFile], &mut [DataFile]) = (files, deletes);
    let (mut fstart, mut dstart) = (0usize, 0usize);
    for ((&fe, &de), shared) in fends.iter().zip(&dends).zip(&partition) {
        let (f, ft) = core::mem::take(&mut frest).split_at_mut(fe - fstart);
        let (d, dt) = core::mem::take(&mut drest).split_at_mut(de - dstart);
        (frest, drest, fstart, dstart) = (ft, dt, fe, de);
        work.push((f, d, shared));
    }
    let kept: Vec<usize> = work
        .into_par_iter()
        .map(|(f, d, shared)| {
            // One partition and one bucket here: the name decides. The group's slots are
            // sorted and walked, then its files kept move to its front.
            let kept = resolve_slots(f, d, |held, a, b| held.name_order(a, b));
            for x in f.iter_mut().take(kept) {
                if !Arc::ptr_eq(&x.partition, shared) {
                    x.partition = Arc::clone(shared);
                }
            }
            kept
        })
        .collect();
    // Each group holds its kept files first: close the gaps behind them (`retain` visits
    // the files in order, and moves each kept one once).
    let (mut at, mut g, mut start) = (0usize, 0usize, 0usize);
    files.retain(|_| {
        while fends.get(g).is_some_and(|&end| at >= end) {
            start = fends.get(g).copied().unwrap_or(start);
            g += 1;
        }
        let keep = kept.get(g).is_some_and(|&n| at - start < n);
        at += 1;
        keep
    });
    true
}

/// Moves each item to its group's range, in place (groups `0..groups`, `group[i]` the
/// group of `items[i]`, moved along); returns each group's end.
fn distribute<T>(items: &mut [T], group: &mut [u32], groups: usize) -> Vec<usize> {
    let mut end = alloc::vec![0usize; groups];
    for &g in group.iter() {
        if let Some(e) = end.get_mut(g as usize) {
            *e += 1;
        }
    }
    let mut sum = 0usize;
    for e in end.iter_mut() {
        sum += *e;
        *e = sum;
    }
    // `next[g]`: the first place of group g's range not yet holding one of its own.
    let mut next: Vec<usize> = core::iter::once(0)
        .chain(end.iter().copied())
        .take(groups)
        .collect();
    for g in 0..groups {
        let Some(&stop) = end.get(g) else { break };
        while let Some(&at) = next.get(g).filter(|&&at| at < stop) {
            // Swap the item here to its own group's next place until one of group g's
            // arrives.
            while let Some(&home) = group.get(at).filter(|&&h| h as usize != g) {
                let Some(dest) = next.get_mut(home as usize) else {
                    break;
                };
                let to = *dest;
                *dest += 1;
                items.swap(at, to);
                group.swap(at, to);
            }
            if let Some(n) = next.get_mut(g) {
                *n += 1;
            }
        }
    }
    end
}

/// Pending DELETEs that make the reconciler resolve: below this many, never.
const RESOLVE_MIN_DELETES: usize = 1 << 16;

/// Reconciles manifest results in manifest order; see [`PreparedScan::reconciler`].
///
/// Each entry carries its [`EntryPosition`], a total order over the snapshot's entries, so
/// the reconciler need not replay them one by one against a table of live files: ADDs are
/// appended as they come, DELETEs are set aside, and resolving sorts both by
/// `(partition, bucket, file name, position)` and keeps, per file, the last ADD unless a
/// later DELETE of the same file follows it — what replaying them in order would leave.
/// The plan's sort and the reconciliation are then one sort and one linear walk: per
/// `(partition, bucket)` group, in parallel, after one pass that moves each file into its
/// group's range (or, for plans with a group per few files, one parallel sort of them all).
/// Resolving also happens whenever the pending DELETEs reach a quarter of the ADDs held (and
/// at least 65,536), so memory stays proportional to the live files.
#[derive(Debug)]
pub struct Reconciler {
    snapshot: Option<u64>,
    stats: ScanStats,
    /// ADDs not yet known to be dead.
    files: Vec<DataFile>,
    /// DELETEs not yet applied to `files`.
    deletes: Vec<DataFile>,
    /// [`RESOLVE_MIN_DELETES`] (smaller in tests).
    resolve_min: usize,
}

impl Reconciler {
    /// Applies every pending DELETE to `files`, drops files an ADD of the same key replaced,
    /// and leaves `files` sorted by [`key_order`] with one file per key.
    fn resolve(&mut self) {
        if !resolve_by_group(&mut self.files, &mut self.deletes) {
            resolve_whole(&mut self.files, &mut self.deletes);
        }
        self.deletes.clear();
    }

    /// Applies the next manifest's result (entries moved, not copied).
    pub fn add(&mut self, scan: ManifestScan) {
        self.add_inner(scan, false)
    }

    /// [`add`](Self::add) for a result scanned on this thread: when nothing is held yet
    /// (a filtered plan, whose buffer is not sized up front), its files stay in the
    /// result's allocation, collected in place, instead of being copied into a new one
    /// grown by doubling. A plan of one manifest then allocates its files once. (Results
    /// scanned on the pool are copied: adopting their allocations, made in the pool
    /// threads' heaps, measured slower.)
    fn add_scanned_here(&mut self, scan: ManifestScan) {
        self.add_inner(scan, true)
    }

    fn add_inner(&mut self, scan: ManifestScan, adopt: bool) {
        let stats = &mut self.stats;
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
        stats.manifest_bytes_total = stats.manifest_bytes_total.saturating_add(scan.bytes_total);
        stats.manifest_bytes_read = stats.manifest_bytes_read.saturating_add(scan.bytes_read);
        stats.sidecar_bytes_read = stats.sidecar_bytes_read.saturating_add(scan.sidecar_bytes);
        stats.entries_matched = stats
            .entries_matched
            .saturating_add(crate::error::off(scan.entries.len()));
        if adopt && self.files.capacity() == 0 {
            let deletes = &mut self.deletes;
            self.files = scan
                .entries
                .into_iter()
                .filter_map(|e| match e.delete {
                    true => {
                        deletes.push(e.file);
                        None
                    }
                    false => Some(e.file),
                })
                .collect();
        } else {
            for e in scan.entries {
                match e.delete {
                    true => self.deletes.push(e.file),
                    false => self.files.push(e.file),
                }
            }
        }
        let pending = self.deletes.len();
        if pending >= self.resolve_min && pending.saturating_mul(4) > self.files.len() {
            self.resolve();
        }
    }

    /// Files held so far: the live files, and until the pending DELETEs are applied, the
    /// files they will remove.
    pub fn live_files(&self) -> usize {
        self.files.len()
    }

    /// The plan: live files sorted by (partition, bucket, file name), and the totals.
    pub fn finish(mut self) -> ScanPlan {
        self.resolve();
        let files = self.files;
        ScanPlan {
            snapshot: self.snapshot,
            files,
            stats: self.stats,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;
    use lakecore_testkit::rng::Rng;

    fn scan(entries: Vec<ScanEntry>) -> ManifestScan {
        ManifestScan {
            file_name: String::new(),
            read: ManifestRead::NoSidecar,
            blocks_total: 1,
            blocks_read: 1,
            bytes_total: 0,
            bytes_read: 0,
            sidecar_bytes: 0,
            entries,
        }
    }

    /// The size a plan pays per live file (and moves while reconciling): a field that grows
    /// it shows here first.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn data_file_is_208_bytes() {
        assert_eq!(core::mem::size_of::<DataFile>(), 208);
    }

    /// Random ADD/DELETE sequences over few keys (so files are re-added, added twice,
    /// deleted before and after), fed in manifests: the reconciler must leave what replaying
    /// the entries one by one into a map leaves, with or without resolving on the way.
    #[test]
    fn reconciler_matches_an_in_order_replay() {
        let mut rng = Rng::new(22);
        for case in 0..400u32 {
            let keys = 1 + rng.next_u64() % 40;
            let manifests = 1 + rng.next_u64() % 12;
            let resolve_min = [1usize, 3, 1 << 20][case as usize % 3];
            replay_case(&mut rng, case, keys, manifests, 30, (3, 2), resolve_min);
        }
    }

    /// Plans large enough to be reconciled by group ([`resolve_by_group`]), and some with
    /// too many groups for it, against the in-order replay.
    #[test]
    fn reconciler_by_group_matches_an_in_order_replay() {
        let mut rng = Rng::new(23);
        for case in 0..12u32 {
            let keys = 2_000 + rng.next_u64() % 8_000;
            let groups = match case % 4 {
                0 => (1, 1),
                1 => (7, 3),
                2 => (40, 8),
                _ => (1_500, 4), // more groups than a sixteenth of the files
            };
            let resolve_min = [1usize, 2_000, 1 << 20][case as usize % 3];
            replay_case(&mut rng, case, keys, 6, 3_000, groups, resolve_min);
        }
    }

    /// One random plan: `manifests` manifests of up to `per_manifest` entries over `keys`
    /// files in `groups.0` partitions x `groups.1` buckets, a third of them DELETEs,
    /// reconciled and compared with replaying the entries in order.
    fn replay_case(
        rng: &mut Rng,
        case: u32,
        keys: u64,
        manifests: u64,
        per_manifest: u64,
        groups: (u64, u64),
        resolve_min: usize,
    ) {
        {
            let mut model: BTreeMap<(Vec<u8>, i32, String), DataFile> = BTreeMap::new();
            let mut r = Reconciler {
                snapshot: None,
                stats: ScanStats::default(),
                files: Vec::new(),
                deletes: Vec::new(),
                resolve_min,
            };
            for m in 0..manifests {
                let mut entries = Vec::new();
                for i in 0..rng.next_u64() % per_manifest {
                    let k = rng.next_u64() % keys;
                    let part = (k % groups.0) as u16;
                    let file = DataFile {
                        partition: Arc::from(&[0, 0, 0, 1, (part >> 8) as u8, part as u8][..]),
                        bucket: ((k / groups.0) % groups.1) as i32,
                        // Names repeat across partitions and buckets: a file is its
                        // (partition, bucket, name).
                        file_name: alloc::format!("data-{}.parquet", k / 4).into(),
                        row_count: (m * 100_000 + i) as i64,
                        position: EntryPosition {
                            manifest: m as u32,
                            block: 0,
                            entry: i as u32,
                        },
                        ..DataFile::default()
                    };
                    let delete = rng.next_u64().is_multiple_of(3);
                    let key = (
                        file.partition.to_vec(),
                        file.bucket,
                        String::from(&*file.file_name),
                    );
                    match delete {
                        true => {
                            model.remove(&key);
                        }
                        false => {
                            model.insert(key, file.clone());
                        }
                    }
                    entries.push(ScanEntry { delete, file });
                }
                // Odd cases: the first result adopted in place (a plan's only manifest,
                // scanned on the calling thread), its DELETEs set aside.
                match (m, case % 2) {
                    (0, 1) => r.add_scanned_here(scan(entries)),
                    _ => r.add(scan(entries)),
                }
            }
            let plan = r.finish();
            let expected: Vec<DataFile> = model.into_values().collect();
            assert_eq!(plan.files.len(), expected.len(), "case {case}");
            assert!(plan.files == expected, "case {case}");
            // Neighbours of one partition share its bytes' allocation.
            for pair in plan.files.windows(2) {
                if pair[0].partition == pair[1].partition {
                    assert!(
                        Arc::ptr_eq(&pair[0].partition, &pair[1].partition),
                        "case {case}"
                    );
                }
            }
        }
    }

    /// The memo answers for the partition it holds only, forgets on a partition too long
    /// to hold, and never answers when disabled.
    #[test]
    fn partition_memo_answers_for_the_partition_it_holds() {
        let mut m = PartitionMemo::new(true);
        assert_eq!(m.get(b""), None, "empty at first");
        m.set(b"\0\0\0\x01ab", true);
        assert_eq!(m.get(b"\0\0\0\x01ab"), Some(true));
        assert_eq!(m.get(b"\0\0\0\x01a"), None);
        assert_eq!(m.get(b"\0\0\0\x01ac"), None);
        m.set(b"\0\0\0\x01ac", false);
        assert_eq!(m.get(b"\0\0\0\x01ac"), Some(false));
        assert_eq!(m.get(b"\0\0\0\x01ab"), None);
        let long = [7u8; 65];
        m.set(&long, true);
        assert_eq!(m.get(&long), None, "too long to hold");
        assert_eq!(
            m.get(b"\0\0\0\x01ac"),
            None,
            "and the last one is forgotten"
        );
        m.set(&long[..64], true);
        assert_eq!(m.get(&long[..64]), Some(true));
        let mut off = PartitionMemo::new(false);
        off.set(b"\0\0\0\x01ab", true);
        assert_eq!(off.get(b"\0\0\0\x01ab"), None);
    }

    /// The shared-prefix length against a byte-by-byte count, around the 8-byte steps.
    #[test]
    fn common_prefix_counts_the_shared_bytes() {
        let mut rng = Rng::new(7);
        for _ in 0..5_000 {
            let len = (rng.next_u64() % 40) as usize;
            let a: Vec<u8> = (0..len)
                .map(|_| b'a' + (rng.next_u64() % 3) as u8)
                .collect();
            let mut b = a.clone();
            b.truncate((rng.next_u64() % 41) as usize);
            if let Some(x) = b.get_mut((rng.next_u64() % 41) as usize) {
                *x = b'a' + (rng.next_u64() % 3) as u8;
            }
            let max = (rng.next_u64() % 45) as usize;
            let naive = a
                .iter()
                .zip(&b)
                .take(max)
                .take_while(|(x, y)| x == y)
                .count();
            assert_eq!(common_prefix(&a, &b, max), naive, "{a:?} {b:?} {max}");
        }
    }

    /// The grouped reconciliation takes the plans it is meant for, declines the others, and
    /// leaves what the whole sort and walk leave.
    #[test]
    fn resolve_by_group_equals_the_whole_sort() {
        let mut rng = Rng::new(24);
        // One writer's names share everything up to a counter: the slots' prefixes start
        // after the bytes all names share.
        let writer = "data-fac35c97-f93e-4d22-b2b1-5213db3e1c7c-";
        for (case, (files_n, parts, buckets, taken, stem)) in [
            (5_000u64, 10u64, 4u64, true, "f"),
            (20_000, 1, 1, true, "f"),
            (9_000, 2_000, 1, false, "f"), // a group per few files
            (4_000, 3, 3, false, "f"),     // too small
            (5_000, 10, 4, true, writer),
            (4_000, 3, 3, false, writer),
            (300, 1, 1, false, writer),
        ]
        .into_iter()
        .enumerate()
        {
            // DELETEs also name partitions no ADD has (`parts..2 * parts`): they delete
            // nothing.
            let mut make = |n: u64, manifest: u32, parts_named: u64| -> Vec<DataFile> {
                (0..n)
                    .map(|i| {
                        let k = rng.next_u64() % (files_n * 2 / 3);
                        let part = (k / 7 + rng.next_u64()) % parts_named;
                        DataFile {
                            partition: Arc::from(&[part as u8, (part >> 8) as u8][..]),
                            bucket: ((k / parts) % buckets) as i32,
                            file_name: alloc::format!("{stem}{}", k / 3).into(),
                            position: EntryPosition {
                                manifest,
                                block: 0,
                                entry: i as u32,
                            },
                            ..DataFile::default()
                        }
                    })
                    .collect()
            };
            let files = make(files_n, 0, parts);
            let deletes = make(files_n / 4, 1, 2 * parts);
            let (mut f1, mut d1) = (files.clone(), deletes.clone());
            assert_eq!(resolve_by_group(&mut f1, &mut d1), taken, "case {case}");
            let (mut f2, mut d2) = (files.clone(), deletes.clone());
            resolve_whole(&mut f2, &mut d2);
            // The model: per key, the ADD of the latest position, unless a DELETE of a later
            // position follows it.
            let mut model: BTreeMap<(Vec<u8>, i32, String), DataFile> = BTreeMap::new();
            let key = |f: &DataFile| (f.partition.to_vec(), f.bucket, String::from(&*f.file_name));
            for f in files {
                let k = key(&f);
                if model.get(&k).is_none_or(|m| m.position < f.position) {
                    model.insert(k, f);
                }
            }
            for d in &deletes {
                if model.get(&key(d)).is_some_and(|m| m.position < d.position) {
                    model.remove(&key(d));
                }
            }
            let expected: Vec<DataFile> = model.into_values().collect();
            assert!(f2 == expected, "case {case}");
            let kept = expected.len();
            if taken {
                assert!(kept > 0 && kept < files_n as usize, "case {case}");
                assert_eq!(f1, f2, "case {case}");
            }
        }
    }
}
