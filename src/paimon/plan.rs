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

use super::error::*;
use super::manifest::{decode_entries, ManifestEntry, ManifestFileMeta};
use super::predicate::*;
use super::sidecar::{read_sidecar, NoSidecar, SidecarBytes};
use super::table::*;
use crate::io::{map_file, span_slices};
use crate::sidecar::{ManifestFacts, PartitionMask, Query, RowRanges, SelectedBlock};
use crate::{Error, ErrorKind};
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

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
        let mut rows: Vec<crate::select::RowRange> = q
            .rows
            .iter()
            .flatten()
            .map(|&(first, last)| crate::select::RowRange::new(first, last))
            .collect();
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
