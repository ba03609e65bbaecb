//! Descriptor-mode BLOB fields read through the table (features `paimon` and `arrow`).
//!
//! A BLOB field named in the table option `blob-descriptor-field` (comma-separated; Java's
//! fallback key `blob.stored-descriptor-fields` when that key is absent) is not written to
//! `.blob` files: the normal data files (Parquet) store per row the serialized
//! [`BlobDescriptor`] (URI, offset, length) of a payload that lives elsewhere.
//! [`DescriptorColumnRead`] plans the table with the planner's filters, groups each split's
//! files as the `.blob` read does ([`group_split`]), and per merge group
//! takes the column from the data file that provides it in the clients' data-evolution merge:
//! among the group's data files (not `.blob`/`.vector` files) the one with the highest
//! `max_sequence_number` whose `_WRITE_COLS` name the field (or, with `_WRITE_COLS` null,
//! whose schema has it). Its rows get row IDs `first_row_id + position`; row ranges and the
//! group's deletion vector are applied; rows are [`BlobRow`]s whose value is the descriptor
//! bytes (or NULL) and whose sequence number is the providing file's `max_sequence_number`.
//!
//! [`decode`] parses a value; [`DescriptorColumnRead::resolve`] reads the payload a
//! descriptor points at through the table's storage (local files, or the object store the
//! table was opened in), checking it lies inside the file.
//!
//! A separate type from [`BlobColumnRead`](super::BlobColumnRead), with the same row shape:
//! there are no layers to merge (one file provides each row), the values come out of Parquet
//! column chunks decoded by arrow-rs rather than out of mapped `.blob` files, and the batch
//! form of the `.blob` read ([`MergedBatch`](crate::blob::MergedBatch)) is the merge's own.
//!
//! ```
//! use lakecore::paimon::blob::descriptor::{decode, DescriptorColumnRead};
//! use lakecore::paimon::{ScanQuery, Table};
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/blob_warehouse/desctab.db/desc");
//! let read = DescriptorColumnRead::plan(&Table::open(dir)?, None, &ScanQuery::default(), Some("d"))?;
//! let mut rows = 0;
//! read.for_each_row(|row| {
//!     if let Some(bytes) = row.value {
//!         assert!(decode(bytes).is_ok());
//!     }
//!     rows += 1;
//!     Ok::<(), std::convert::Infallible>(())
//! })??;
//! assert!(rows > 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::{
    column_kind, group_deletions, group_split, row_span, schema_json, BlobReadError, BlobRow,
    ColumnKind,
};
use crate::blob::BlobDescriptor;
use crate::io::{Storage, Stored};
use crate::paimon::{DataFile, ScanQuery, Table};
use crate::select::{RowRange, RowRanges};
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use std::path::{Path, PathBuf};

/// Parses a descriptor value read from a descriptor field ([`BlobDescriptor::decode`]).
///
/// ```
/// use lakecore::blob::BlobDescriptor;
/// use lakecore::paimon::blob::descriptor::decode;
/// let mut bytes = Vec::new();
/// BlobDescriptor { version: 2, uri: "file:///data/p.bin", offset: 8, length: 3 }.encode(&mut bytes)?;
/// assert_eq!(decode(&bytes)?.offset, 8);
/// # Ok::<(), lakecore::Error>(())
/// ```
pub fn decode(bytes: &[u8]) -> crate::Result<BlobDescriptor<'_>> {
    BlobDescriptor::decode(bytes)
}

/// One merge group of a [`DescriptorColumnRead`]: the data file that provides the field (if
/// any) and the group's deletions.
#[derive(Clone, Debug)]
pub struct DescriptorGroup {
    /// Partition and bucket, as `partition path + bucket-N: ` (for messages).
    pub split: String,
    /// The providing data file (path, manifest entry); `None` when no file of the group has
    /// the field (a field added after the group was written): every row is NULL with sequence
    /// number -1.
    pub file: Option<(PathBuf, DataFile)>,
    /// First row ID of the group.
    pub first_row_id: u64,
    /// One past the last row ID of the group.
    pub end_row_id: u64,
    /// Row IDs deleted by the group's deletion vector, ascending.
    pub deleted: Vec<u64>,
}

/// A planned read of one descriptor-mode BLOB field of a data-evolution table.
#[derive(Clone, Debug)]
pub struct DescriptorColumnRead {
    storage: Arc<dyn Storage>,
    snapshot: Option<u64>,
    column: String,
    ranges: Option<Vec<RowRange>>,
    groups: Vec<DescriptorGroup>,
}

/// The schema field names of schema `id`, cached per id.
fn has_field(
    table: &Table,
    cache: &mut Vec<(i64, Vec<String>)>,
    id: i64,
    field: &str,
) -> Result<bool, BlobReadError> {
    if let Some((_, names)) = cache.iter().find(|(i, _)| *i == id) {
        return Ok(names.iter().any(|n| n == field));
    }
    let schema_id = u64::try_from(id)
        .map_err(|_| BlobReadError::Query(alloc::format!("negative _SCHEMA_ID {id}")))?;
    let v = schema_json(table, schema_id)?;
    let names: Vec<String> = v
        .get("fields")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| f.get("name").and_then(|n| n.as_str()).map(str::to_string))
        .collect();
    let found = names.iter().any(|n| n == field);
    cache.push((id, names));
    Ok(found)
}

impl DescriptorColumnRead {
    /// Plans `table` at `snapshot` (latest when `None`) with `query`'s filters and finds, per
    /// merge group, the data file providing descriptor field `column` (when `None`: the
    /// column [`column_kind`] picks, which must be a descriptor field).
    ///
    /// Errors: planning ([`BlobReadError::Scan`]); a table without row tracking and data
    /// evolution, a column that is not a descriptor field ([`BlobReadError::Query`]); files
    /// that do not group ([`BlobReadError::Grouping`]); deletion vectors that cannot be read.
    pub fn plan(
        table: &Table,
        snapshot: Option<u64>,
        query: &ScanQuery,
        column: Option<&str>,
    ) -> Result<Self, BlobReadError> {
        let plan = table.plan(snapshot, query)?;
        let Some(snapshot_id) = plan.snapshot else {
            return Ok(DescriptorColumnRead {
                storage: Arc::clone(table.storage()),
                snapshot: None,
                column: column.unwrap_or_default().to_string(),
                ranges: None,
                groups: Vec::new(),
            });
        };
        let (column, kind) = column_kind(table, Some(snapshot_id), column)?;
        if kind != ColumnKind::Descriptor {
            return Err(BlobReadError::Query(alloc::format!(
                "BLOB column {column:?} is stored in .blob files, not a blob-descriptor-field: \
                 read it with BlobColumnRead"
            )));
        }
        let snap = table.snapshot(snapshot_id)?;
        let schema = table.schema(snap.schema_id)?;
        if !(schema.row_tracking && schema.data_evolution) {
            return Err(BlobReadError::Query(
                "descriptor fields are read from data-evolution tables: the table needs \
                 row-tracking.enabled and data-evolution.enabled"
                    .into(),
            ));
        }
        let deletions = table.deletion_index(&snap, &schema)?;
        let ranges = query.rows.as_ref().map(|rows| {
            let mut r: Vec<RowRange> = rows.iter().map(|&(a, b)| RowRange::new(a, b)).collect();
            let n = RowRanges::normalize(&mut r).as_slice().len();
            r.truncate(n);
            r
        });
        let mut schema_names = Vec::new();
        let mut sorted: Vec<&DataFile> = plan.files.iter().collect();
        sorted.sort_by(|x, y| x.partition.cmp(&y.partition).then(x.bucket.cmp(&y.bucket)));
        let mut groups = Vec::new();
        for split in sorted.chunk_by(|x, y| x.partition == y.partition && x.bucket == y.bucket) {
            let Some(head) = split.first() else { continue };
            let label = alloc::format!(
                "{}bucket-{}: ",
                schema.partition_path(&head.partition).unwrap_or_default(),
                head.bucket
            );
            for group in group_split(split, ranges.is_some())? {
                let mut candidates: Vec<&DataFile> = group
                    .data_files
                    .iter()
                    .copied()
                    .filter(|f| {
                        !(f.file_name.ends_with(".blob") || f.file_name.ends_with(".vector"))
                    })
                    .collect();
                if candidates.is_empty() {
                    continue;
                }
                // Newest first, as the clients' data-evolution merge takes a field from the
                // first file (by `max_sequence_number` descending) that wrote it.
                candidates.sort_by_key(|f| core::cmp::Reverse(f.max_sequence_number));
                let mut provider = None;
                for f in candidates {
                    let writes = match &f.write_cols {
                        Some(cols) => cols.contains(&column),
                        None => has_field(table, &mut schema_names, f.schema_id, &column)?,
                    };
                    if writes {
                        provider = Some(f);
                        break;
                    }
                }
                let deleted = group_deletions(table, &schema, &deletions, &group)?;
                let file = match provider {
                    Some(f) => {
                        let path = table.data_file_path(&schema, f).map_err(|e| {
                            BlobReadError::Invalid {
                                context: f.file_name.to_string(),
                                error: e,
                            }
                        })?;
                        Some((PathBuf::from(path), f.clone()))
                    }
                    None => None,
                };
                groups.push(DescriptorGroup {
                    split: label.clone(),
                    file,
                    first_row_id: group.first_row_id,
                    end_row_id: group.end_row_id,
                    deleted,
                });
            }
        }
        groups.sort_by_key(|g| g.first_row_id);
        Ok(DescriptorColumnRead {
            storage: Arc::clone(table.storage()),
            snapshot: Some(snapshot_id),
            column,
            ranges,
            groups,
        })
    }

    /// The snapshot read (`None` for a table without snapshots).
    pub fn snapshot(&self) -> Option<u64> {
        self.snapshot
    }

    /// The descriptor field read.
    pub fn column(&self) -> &str {
        &self.column
    }

    /// The merge groups, by first row ID.
    pub fn groups(&self) -> &[DescriptorGroup] {
        &self.groups
    }

    /// The normalized row ranges of the query, if any.
    pub fn ranges(&self) -> Option<&[RowRange]> {
        self.ranges.as_deref()
    }

    fn selected(&self, row_id: u64, deleted: &[u64]) -> bool {
        let in_ranges = match &self.ranges {
            None => true,
            Some(r) => {
                let i = r.partition_point(|x| x.last < row_id);
                r.get(i).is_some_and(|x| x.first <= row_id)
            }
        };
        in_ranges && deleted.binary_search(&row_id).is_err()
    }

    /// Reads every selected row in row-ID order of the groups, calling `f` per row with the
    /// descriptor bytes (borrowed from the decoded column) or `None` for NULL; `f`'s error
    /// stops the read and is returned as `Ok(Err(_))`.
    ///
    /// Errors: a data file that cannot be read ([`BlobReadError::Io`]), that is not Parquet
    /// or lacks the column or whose row count disagrees with its manifest entry
    /// ([`BlobReadError::Descriptor`]).
    pub fn for_each_row<E>(
        &self,
        mut f: impl FnMut(BlobRow<'_>) -> Result<(), E>,
    ) -> Result<Result<(), E>, BlobReadError> {
        for group in &self.groups {
            let Some((path, meta)) = &group.file else {
                for row_id in group.first_row_id..group.end_row_id {
                    if !self.selected(row_id, &group.deleted) {
                        continue;
                    }
                    let row = BlobRow {
                        row_id,
                        sequence_number: -1,
                        value: None,
                        file: None,
                    };
                    if let Err(e) = f(row) {
                        return Ok(Err(e));
                    }
                }
                continue;
            };
            let (first, end) = row_span(meta)?;
            if let Err(e) = self.read_file(path, meta, first, end, &group.deleted, &mut f)? {
                return Ok(Err(e));
            }
        }
        Ok(Ok(()))
    }

    fn read_file<E>(
        &self,
        path: &Path,
        meta: &DataFile,
        first: u64,
        end: u64,
        deleted: &[u64],
        f: &mut impl FnMut(BlobRow<'_>) -> Result<(), E>,
    ) -> Result<Result<(), E>, BlobReadError> {
        use arrow_array::{Array, BinaryArray, BinaryViewArray, LargeBinaryArray};
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        use parquet::arrow::ProjectionMask;
        let bad = |message: String| BlobReadError::Descriptor {
            context: alloc::format!("{} (column {:?})", path.display(), self.column),
            message,
        };
        if !meta.file_name.ends_with(".parquet") {
            return Err(bad(alloc::format!(
                "data file format not read by lakecore's descriptor read (Parquet only): {}",
                meta.file_name
            )));
        }
        let stored = self.storage.read(path).map_err(|error| BlobReadError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        let bytes = bytes::Bytes::from_owner(stored);
        let builder = ParquetRecordBatchReaderBuilder::try_new(bytes)
            .map_err(|e| bad(alloc::format!("not a readable Parquet file: {e}")))?;
        let rows = builder.metadata().file_metadata().num_rows();
        if rows != meta.row_count {
            return Err(bad(alloc::format!(
                "the file has {rows} rows, its manifest entry says _ROW_COUNT {}",
                meta.row_count
            )));
        }
        let root = builder
            .parquet_schema()
            .root_schema()
            .get_fields()
            .iter()
            .position(|t| t.name() == self.column)
            .ok_or_else(|| {
                bad(alloc::format!(
                    "the file has no column {:?} although its _WRITE_COLS name it",
                    self.column
                ))
            })?;
        let mask = ProjectionMask::roots(builder.parquet_schema(), [root]);
        let reader = builder
            .with_projection(mask)
            .with_batch_size(4096)
            .build()
            .map_err(|e| bad(e.to_string()))?;
        let mut row_id = first;
        let name = &*meta.file_name;
        for batch in reader {
            let batch = batch.map_err(|e| bad(alloc::format!("near row {row_id}: {e}")))?;
            let column = batch.column(0);
            let any = column.as_any();
            let values = if let Some(a) = any.downcast_ref::<LargeBinaryArray>() {
                Values::Large(a)
            } else if let Some(a) = any.downcast_ref::<BinaryArray>() {
                Values::Binary(a)
            } else if let Some(a) = any.downcast_ref::<BinaryViewArray>() {
                Values::View(a)
            } else {
                return Err(bad(alloc::format!(
                    "the column is {}, not binary",
                    column.data_type()
                )));
            };
            for i in 0..column.len() {
                let id = row_id;
                row_id += 1;
                if id >= end {
                    return Err(bad(alloc::format!(
                        "more rows than _ROW_COUNT {}",
                        end - first
                    )));
                }
                if !self.selected(id, deleted) {
                    continue;
                }
                let row = BlobRow {
                    row_id: id,
                    sequence_number: meta.max_sequence_number,
                    value: (!column.is_null(i)).then(|| values.get(i)),
                    file: Some(name),
                };
                if let Err(e) = f(row) {
                    return Ok(Err(e));
                }
            }
        }
        Ok(Ok(()))
    }

    /// Reads the payload `descriptor` points at, through the table's storage: a `file://` URI
    /// or a plain path on local storage, any URI the object store understands when the table
    /// was opened in one. The payload must lie inside the file.
    ///
    /// Errors: the file cannot be read ([`BlobReadError::Io`], naming it); the range runs
    /// past the file's end, or the URI's scheme cannot be read from this table's storage
    /// ([`BlobReadError::Descriptor`]).
    pub fn resolve(&self, descriptor: &BlobDescriptor<'_>) -> Result<Stored, BlobReadError> {
        let path = descriptor_path(self.storage.as_ref(), descriptor.uri)?;
        read_payload(self.storage.as_ref(), &path, descriptor)
    }
}

/// A binary column of a decoded batch, whatever its arrow type.
enum Values<'a> {
    Large(&'a arrow_array::LargeBinaryArray),
    Binary(&'a arrow_array::BinaryArray),
    View(&'a arrow_array::BinaryViewArray),
}

impl<'a> Values<'a> {
    fn get(&self, i: usize) -> &'a [u8] {
        match self {
            Values::Large(a) => a.value(i),
            Values::Binary(a) => a.value(i),
            Values::View(a) => a.value(i),
        }
    }
}

/// Where `uri` is in `storage`: on local storage a `file://` URI's path or a plain path; on
/// an object store the URI itself (the store resolves its scheme).
fn descriptor_path(storage: &dyn Storage, uri: &str) -> Result<PathBuf, BlobReadError> {
    if storage.is_remote() {
        return Ok(PathBuf::from(uri));
    }
    match uri.split_once("://") {
        None => Ok(PathBuf::from(uri)),
        Some(("file", rest)) => Ok(PathBuf::from(rest)),
        Some((scheme, _)) => Err(BlobReadError::Descriptor {
            context: uri.to_string(),
            message: alloc::format!(
                "a {scheme}:// descriptor cannot be read through local storage: open the table \
                 by its object-store URL (feature object-store)"
            ),
        }),
    }
}

/// Reads the `descriptor.offset`, `descriptor.length` range of the file at `path` in
/// `storage` (the file the descriptor's URI names), after checking the range lies inside
/// the file. Useful when the files have moved since the descriptors were written: pass the
/// file's new path.
///
/// Errors: the file's size or bytes cannot be read ([`BlobReadError::Io`]); the range runs
/// past the end of the file ([`BlobReadError::Descriptor`], with both numbers).
pub fn read_payload(
    storage: &dyn Storage,
    path: &Path,
    descriptor: &BlobDescriptor<'_>,
) -> Result<Stored, BlobReadError> {
    let io = |error| BlobReadError::Io {
        path: path.to_path_buf(),
        error,
    };
    let size = storage.size(path).map_err(io)?;
    let offset = u64::try_from(descriptor.offset).ok();
    let length = u64::try_from(descriptor.length).ok();
    let (Some(offset), Some(length)) = (offset, length) else {
        return Err(BlobReadError::Descriptor {
            context: descriptor.uri.to_string(),
            message: alloc::format!(
                "negative offset {} or length {}",
                descriptor.offset,
                descriptor.length
            ),
        });
    };
    if offset.checked_add(length).is_none_or(|e| e > size) {
        return Err(BlobReadError::Descriptor {
            context: descriptor.uri.to_string(),
            message: alloc::format!(
                "the descriptor points outside its file: offset {offset} length {length} runs \
                 past the file's {size} bytes"
            ),
        });
    }
    if length == 0 {
        return Ok(Stored::Vec(Vec::new()));
    }
    let mut parts = storage.read_ranges(path, &[(offset, length)]).map_err(io)?;
    match parts.pop() {
        Some(p) if parts.is_empty() && p.len() as u64 == length => Ok(p),
        _ => Err(io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            alloc::format!("short read of {length} bytes at offset {offset}"),
        ))),
    }
}
