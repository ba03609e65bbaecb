//! BLOB columns read through the table (feature `paimon`): from a planned data-evolution table
//! to merge groups and per-field bunches of `.blob` files, then the fallback merge per bunch.
//!
//! The grouping ([`group_split`]) is a pure function over [`DataFile`]s, as the spec's "From a
//! table to bunches" describes it (and as Java's `DataEvolutionSplitRead`, paimon-cpp's
//! `BlobBunch` and pypaimon's data-evolution read do it): within one split (partition and
//! bucket), files sorted by `first_row_id` ascending then `max_sequence_number` descending,
//! files whose row ranges overlap form one merge group; the `.blob` files of one blob field in a
//! group are that field's bunch. [`BlobColumnRead`] plans a table with the planner's filters,
//! builds the bunches of one blob column, maps each bunch's files and runs
//! [`FallbackMerge`] over them; rows borrow the mapped bytes and nothing is allocated per row.
//!
//! Deletion vectors from the snapshot's index manifest are applied as the clients' readers
//! apply them: the vector of a merge group's anchor (its oldest data file, see
//! [`anchor_file`](super::anchor_file)) deletes row IDs `anchor.first_row_id + position` from
//! every layer of every bunch of the group alike, so deleted rows are not returned.
//!
//! Descriptor-mode fields (`blob-descriptor-field`) keep serialized descriptors inline in the
//! data files, not in `.blob` files: [`column_kind`] tells the two apart and the submodule
//! `descriptor` (feature `arrow`: the values are in Parquet) reads them with the same row
//! shape. `blob-view-field`s are not read.
//!
//! ```
//! use lakecore::paimon::blob::{BlobColumnRead, ReadOptions};
//! use lakecore::paimon::{ScanQuery, Table};
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/blob.db/py_blob");
//! let read = BlobColumnRead::plan(&Table::open(dir)?, None, &ScanQuery::default(), None)?;
//! assert_eq!(read.column(), "b");
//! let mut rows = 0;
//! read.for_each_row(ReadOptions::default(), |row| {
//!     assert!(row.sequence_number >= -1);
//!     rows += 1;
//!     Ok::<(), std::convert::Infallible>(())
//! })?;
//! assert_eq!(rows, read.bunches().iter().map(|b| b.row_count()).sum::<u64>());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "arrow")]
pub mod descriptor;

use super::{DataFile, ScanError, ScanQuery, Table};
use crate::blob::{
    BlobFile, BlobOptions, FallbackMerge, FileFacts, LayerFile, MergeOptions, MergedBatch,
};
use crate::select::{RowRange, RowRanges};
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use std::path::PathBuf;

/// Layers one bunch may have (distinct `max_sequence_number`s among its files).
pub const MAX_LAYERS: usize = 64;

/// Why a bunch could not be formed or read. Every variant names the file (or files) and what
/// disagrees.
#[derive(Debug)]
pub enum BlobReadError {
    /// Planning failed (snapshot, schema, manifests).
    Scan(ScanError),
    /// A `.blob` file could not be opened or mapped.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// A `.blob` file's bytes are invalid, or disagree with its manifest entry (size, row
    /// count), or the merge of its bunch failed.
    Invalid {
        /// The file, or the bunch (`field` rows `a-b` of partition/bucket) when no single file
        /// is to blame.
        context: String,
        /// Kind and location.
        error: crate::Error,
    },
    /// The manifest's files do not form valid bunches: a `.blob` file with other than one
    /// write column, a file without `_FIRST_ROW_ID`, overlap inside a layer, a bunch whose
    /// range does not match its data files.
    Grouping {
        /// The file(s) concerned.
        files: String,
        /// What disagrees.
        message: String,
    },
    /// The table or the query does not allow a BLOB read (no data evolution, unknown or
    /// ambiguous column).
    Query(String),
    /// The table uses something this reader does not read (`blob-view-field`s; descriptor
    /// fields asked of the `.blob` read).
    Unsupported(String),
    /// A descriptor field's data file or a descriptor's payload is wrong: not Parquet, no
    /// such column, a row count that disagrees with the manifest, a descriptor pointing
    /// outside its file.
    Descriptor {
        /// The data file (and column), or the descriptor's URI.
        context: String,
        /// What disagrees, with the numbers.
        message: String,
    },
}

impl fmt::Display for BlobReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlobReadError::Scan(e) => write!(f, "{e}"),
            BlobReadError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            BlobReadError::Invalid { context, error } => {
                write!(f, "{context}: invalid input: {error}")
            }
            BlobReadError::Grouping { files, message } => write!(f, "{files}: {message}"),
            BlobReadError::Query(m) => f.write_str(m),
            BlobReadError::Unsupported(m) => write!(f, "unsupported: {m}"),
            BlobReadError::Descriptor { context, message } => {
                write!(f, "{context}: invalid descriptor data: {message}")
            }
        }
    }
}

impl std::error::Error for BlobReadError {}

impl From<ScanError> for BlobReadError {
    fn from(e: ScanError) -> Self {
        BlobReadError::Scan(e)
    }
}

fn grouping(files: impl Into<String>, message: impl Into<String>) -> BlobReadError {
    BlobReadError::Grouping {
        files: files.into(),
        message: message.into(),
    }
}

/// Whether `file` is a BLOB file (its name ends in `.blob`).
pub fn is_blob_file(file: &DataFile) -> bool {
    file.file_name.ends_with(".blob")
}

/// A file's inclusive row-ID range `[first_row_id, first_row_id + row_count - 1]` as
/// `(first, end)` with `end` exclusive; an error names the file when it has no
/// `_FIRST_ROW_ID`, a negative one or a negative row count.
fn row_span(file: &DataFile) -> Result<(u64, u64), BlobReadError> {
    let first = file.first_row_id.ok_or_else(|| {
        grouping(
            &*file.file_name,
            "no _FIRST_ROW_ID in a data-evolution table",
        )
    })?;
    let first = u64::try_from(first).map_err(|_| {
        grouping(
            &*file.file_name,
            alloc::format!("negative _FIRST_ROW_ID {first}"),
        )
    })?;
    let rows = u64::try_from(file.row_count).map_err(|_| {
        grouping(
            &*file.file_name,
            alloc::format!("negative _ROW_COUNT {}", file.row_count),
        )
    })?;
    // Row IDs are i64 in Paimon: the last one must fit.
    let end = first
        .checked_add(rows)
        .filter(|&end| end <= 1u64 << 63)
        .ok_or_else(|| grouping(&*file.file_name, "_FIRST_ROW_ID + _ROW_COUNT overflows"))?;
    Ok((first, end))
}

/// The `.blob` files of one blob field in one merge group.
#[derive(Clone, Debug)]
pub struct Bunch<'p> {
    /// The blob field (the files' single write column).
    pub field: &'p str,
    /// The files, sorted as the merge layers them: `max_sequence_number` descending, then
    /// `first_row_id` ascending.
    pub files: Vec<&'p DataFile>,
    /// First row ID of the bunch's merged range.
    pub first_row_id: u64,
    /// One past the last row ID of the merged range.
    pub end_row_id: u64,
}

impl Bunch<'_> {
    /// Rows of the merged range (before row ranges are applied).
    pub fn row_count(&self) -> u64 {
        self.end_row_id - self.first_row_id
    }

    /// Distinct `max_sequence_number`s: 1 is the single-layer fast path.
    pub fn layers(&self) -> usize {
        let mut n = 0;
        let mut last = None;
        for f in &self.files {
            if last != Some(f.max_sequence_number) {
                n += 1;
                last = Some(f.max_sequence_number);
            }
        }
        n
    }
}

/// Files of one split whose row ranges overlap: the data files and each blob field's bunch.
#[derive(Clone, Debug)]
pub struct MergeGroup<'p> {
    /// First row ID covered by any file of the group.
    pub first_row_id: u64,
    /// One past the last row ID covered by any file of the group.
    pub end_row_id: u64,
    /// The non-blob files (Parquet, ORC, ...), in `first_row_id` then newest-first order.
    pub data_files: Vec<&'p DataFile>,
    /// One bunch per blob field present in the group, in order of first appearance.
    pub bunches: Vec<Bunch<'p>>,
}

/// Groups the live files of one data-evolution split (one partition, one bucket) into merge
/// groups and bunches. No I/O.
///
/// `row_ranges_pushed` says whether the plan was filtered by row ranges: without them each
/// bunch's range must be contiguous (no row ID that no layer covers) and equal to the range of
/// the group's data files; with them, files outside the ranges were pruned and the check would
/// reject valid plans.
///
/// Errors ([`BlobReadError::Grouping`], naming the files): a file without `_FIRST_ROW_ID`; a
/// `.blob` file whose `_WRITE_COLS` is not exactly one name; two files of one layer that
/// overlap; a bunch with a hole or whose range differs from its data files'.
///
/// ```
/// use lakecore::paimon::blob::group_split;
/// use lakecore::paimon::DataFile;
/// let file = |name: &str, first: i64, rows: i64, seq: i64, cols: &[&str]| DataFile {
///     file_name: name.into(),
///     first_row_id: Some(first),
///     row_count: rows,
///     max_sequence_number: seq,
///     write_cols: Some(cols.iter().map(|c| c.to_string()).collect()),
///     ..DataFile::default()
/// };
/// let files = [
///     file("base.parquet", 0, 4, 1, &["id"]),
///     file("a.blob", 0, 4, 1, &["b"]),
///     file("update.blob", 1, 2, 2, &["b"]),
///     file("next.parquet", 4, 2, 3, &["id"]),
///     file("c.blob", 4, 2, 3, &["b"]),
/// ];
/// let refs: Vec<&DataFile> = files.iter().collect();
/// let groups = group_split(&refs, false)?;
/// assert_eq!(groups.len(), 2);
/// assert_eq!(groups[0].bunches[0].layers(), 2);
/// assert_eq!(&*groups[0].bunches[0].files[0].file_name, "update.blob");
/// assert_eq!((groups[1].first_row_id, groups[1].end_row_id), (4, 6));
/// # Ok::<(), lakecore::paimon::blob::BlobReadError>(())
/// ```
pub fn group_split<'p>(
    files: &[&'p DataFile],
    row_ranges_pushed: bool,
) -> Result<Vec<MergeGroup<'p>>, BlobReadError> {
    let mut sorted: Vec<(u64, u64, &'p DataFile)> = Vec::with_capacity(files.len());
    for &f in files {
        let (first, end) = row_span(f)?;
        sorted.push((first, end, f));
    }
    sorted.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(b.2.max_sequence_number.cmp(&a.2.max_sequence_number))
            .then(a.2.file_name.cmp(&b.2.file_name))
    });
    let mut groups: Vec<MergeGroup<'p>> = Vec::new();
    for (first, end, f) in sorted {
        // Overlap (not mere touching) joins the current group.
        let joins = groups
            .last()
            .is_some_and(|g| first < g.end_row_id && first >= g.first_row_id);
        if !joins {
            groups.push(MergeGroup {
                first_row_id: first,
                end_row_id: end,
                data_files: Vec::new(),
                bunches: Vec::new(),
            });
        }
        let Some(group) = groups.last_mut() else {
            continue;
        };
        group.end_row_id = group.end_row_id.max(end);
        if !is_blob_file(f) {
            group.data_files.push(f);
            continue;
        }
        let field = match f.write_cols.as_deref() {
            Some([one]) => one.as_str(),
            other => {
                return Err(grouping(
                    &*f.file_name,
                    alloc::format!(
                        "blob file only has one blob field, but _WRITE_COLS is {}",
                        match other {
                            None => "null".to_string(),
                            Some(cols) => alloc::format!("{cols:?}"),
                        }
                    ),
                ))
            }
        };
        match group.bunches.iter_mut().find(|b| b.field == field) {
            Some(b) => {
                b.first_row_id = b.first_row_id.min(first);
                b.end_row_id = b.end_row_id.max(end);
                b.files.push(f);
            }
            None => group.bunches.push(Bunch {
                field,
                files: alloc::vec![f],
                first_row_id: first,
                end_row_id: end,
            }),
        }
    }
    for group in &mut groups {
        let data_range = group.data_files.iter().try_fold(None, |acc, f| {
            let (a, b) = row_span(f)?;
            Ok::<_, BlobReadError>(Some(match acc {
                None => (a, b),
                Some((x, y)) => (a.min(x), b.max(y)),
            }))
        })?;
        for bunch in &mut group.bunches {
            check_bunch(bunch, data_range, row_ranges_pushed)?;
        }
    }
    Ok(groups)
}

/// Layers a bunch (newest first, then by `first_row_id`), rejects overlap inside a layer and,
/// without row ranges, a hole or a range that differs from the data files'.
fn check_bunch(
    bunch: &mut Bunch<'_>,
    data_range: Option<(u64, u64)>,
    row_ranges_pushed: bool,
) -> Result<(), BlobReadError> {
    bunch.files.sort_by(|a, b| {
        b.max_sequence_number
            .cmp(&a.max_sequence_number)
            .then(a.first_row_id.cmp(&b.first_row_id))
    });
    for pair in bunch.files.windows(2) {
        if let [a, b] = pair {
            if a.max_sequence_number == b.max_sequence_number && a.row_count > 0 {
                let (_, a_end) = row_span(a)?;
                let (b_first, _) = row_span(b)?;
                if b_first < a_end {
                    return Err(grouping(
                        alloc::format!("{} and {}", a.file_name, b.file_name),
                        alloc::format!(
                            "overlap inside layer max_sequence_number {} of blob field {:?} \
                             (rows {}..{} and {}..)",
                            a.max_sequence_number,
                            bunch.field,
                            row_span(a)?.0,
                            a_end,
                            b_first
                        ),
                    ));
                }
            }
        }
    }
    if row_ranges_pushed {
        return Ok(());
    }
    // Contiguity: the union of all files' ranges has no hole.
    let mut spans: Vec<(u64, u64)> = bunch
        .files
        .iter()
        .map(|f| row_span(f))
        .collect::<Result<_, _>>()?;
    spans.sort_unstable();
    let mut covered = bunch.first_row_id;
    for (a, b) in spans {
        if a > covered {
            return Err(grouping(
                names(&bunch.files),
                alloc::format!(
                    "blob field {:?}: no file covers rows {covered}..{a} of the bunch's range \
                     {}..{}",
                    bunch.field,
                    bunch.first_row_id,
                    bunch.end_row_id
                ),
            ));
        }
        covered = covered.max(b);
    }
    if let Some((a, b)) = data_range {
        if (a, b) != (bunch.first_row_id, bunch.end_row_id) {
            return Err(grouping(
                names(&bunch.files),
                alloc::format!(
                    "blob field {:?} covers rows {}..{} ({} rows) but the data files cover \
                     {a}..{b} ({} rows)",
                    bunch.field,
                    bunch.first_row_id,
                    bunch.end_row_id,
                    bunch.end_row_id - bunch.first_row_id,
                    b - a
                ),
            ));
        }
    }
    Ok(())
}

fn names(files: &[&DataFile]) -> String {
    let mut s = String::new();
    for (i, f) in files.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&f.file_name);
    }
    s
}

/// Copies `bytes` into `buf` at `offset`; an error when they do not fit (a range that
/// came back longer than asked, or a file larger than its manifest entry says).
fn copy_at(buf: &mut [u8], offset: u64, bytes: &[u8]) -> std::io::Result<()> {
    let at = usize::try_from(offset).ok();
    let slot = at
        .and_then(|a| Some(a..a.checked_add(bytes.len())?))
        .and_then(|r| buf.get_mut(r));
    match slot {
        Some(slot) => {
            slot.copy_from_slice(bytes);
            Ok(())
        }
        None => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            alloc::format!(
                "{} bytes at offset {offset} run past the file's end",
                bytes.len()
            ),
        )),
    }
}

/// An owned bunch of a [`BlobColumnRead`]: where its files are and their manifest facts.
#[derive(Clone, Debug)]
pub struct PlannedBunch {
    /// Partition and bucket, as `partition path + bucket-N` (for messages).
    pub split: String,
    /// The files: path, manifest entry.
    pub files: Vec<(PathBuf, DataFile)>,
    /// First row ID of the merged range.
    pub first_row_id: u64,
    /// One past the last row ID.
    pub end_row_id: u64,
    /// Row IDs deleted by the merge group's deletion vector, strictly ascending (applied to
    /// every layer alike).
    pub deleted: Vec<u64>,
}

impl PlannedBunch {
    /// Rows of the merged range (before row ranges are applied).
    pub fn row_count(&self) -> u64 {
        self.end_row_id - self.first_row_id
    }

    fn context(&self, field: &str) -> String {
        alloc::format!(
            "{}blob field {field:?} rows {}..{}",
            self.split,
            self.first_row_id,
            self.end_row_id
        )
    }
}

/// How [`BlobColumnRead`] reads rows.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions {
    /// A placeholder no older layer resolves is an error instead of NULL with sequence
    /// number -1 (see [`MergeOptions::strict`]).
    pub strict: bool,
}

/// One row of a BLOB column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlobRow<'a> {
    /// `_ROW_ID`.
    pub row_id: u64,
    /// `_SEQUENCE_NUMBER`: the winning file's `max_sequence_number`, `-1` for a row that is a
    /// placeholder in every layer.
    pub sequence_number: i64,
    /// The blob bytes (borrowed from the mapped file), `None` for NULL.
    pub value: Option<&'a [u8]>,
    /// The winning file's name, `None` for an all-placeholder row.
    pub file: Option<&'a str>,
}

/// A planned read of one BLOB column of a data-evolution table: its bunches, ready to be
/// mapped and merged one at a time.
#[derive(Clone, Debug)]
pub struct BlobColumnRead {
    /// The table's storage: the `.blob` files are read from there.
    storage: alloc::sync::Arc<dyn crate::io::Storage>,
    snapshot: Option<u64>,
    column: String,
    ranges: Option<Vec<RowRange>>,
    bunches: Vec<PlannedBunch>,
}

impl BlobColumnRead {
    /// Plans `table` at `snapshot` (latest when `None`) with `query`'s filters (partition,
    /// bucket, row ranges, column filters) and builds the bunches of blob column `column`
    /// (when `None`: the table's only BLOB field).
    ///
    /// Errors: planning ([`BlobReadError::Scan`]); a table without row tracking and data
    /// evolution, an unknown, non-BLOB or ambiguous column ([`BlobReadError::Query`]); an
    /// index manifest or deletion vector that cannot be read or is invalid
    /// ([`BlobReadError::Scan`], naming the file and byte); files that do not form bunches
    /// ([`BlobReadError::Grouping`], see [`group_split`]).
    pub fn plan(
        table: &Table,
        snapshot: Option<u64>,
        query: &ScanQuery,
        column: Option<&str>,
    ) -> Result<Self, BlobReadError> {
        let plan = table.plan(snapshot, query)?;
        let Some(snapshot_id) = plan.snapshot else {
            return Ok(BlobColumnRead {
                storage: alloc::sync::Arc::clone(table.storage()),
                snapshot: None,
                column: column.unwrap_or_default().to_string(),
                ranges: None,
                bunches: Vec::new(),
            });
        };
        let snap = table.snapshot(snapshot_id)?;
        let schema = table.schema(snap.schema_id)?;
        let deletions = table.deletion_index(&snap, &schema)?;
        if !(schema.row_tracking && schema.data_evolution) {
            return Err(BlobReadError::Query(
                "the table has no BLOB bunches: it needs row-tracking.enabled and \
                 data-evolution.enabled"
                    .into(),
            ));
        }
        let blob_fields = blob_fields(table, snap.schema_id)?;
        let inline = inline_blob_fields(table, snap.schema_id)?;
        if let Some(c) = column.filter(|c| inline.iter().any(|f| f == c)) {
            return Err(BlobReadError::Unsupported(alloc::format!(
                "BLOB column {c:?} is a blob-descriptor-field or blob-view-field: its values are \
                 stored inline in the data files, not in .blob files (read a descriptor field \
                 with DescriptorColumnRead, feature arrow)"
            )));
        }
        let blob_fields: Vec<String> = blob_fields
            .into_iter()
            .filter(|f| !inline.contains(f))
            .collect();
        let column = match column {
            Some(c) if blob_fields.iter().any(|f| f == c) => c.to_string(),
            Some(c) => {
                return Err(BlobReadError::Query(alloc::format!(
                    "no BLOB column {c:?} in the table (BLOB columns: {blob_fields:?})"
                )))
            }
            None => match blob_fields.as_slice() {
                [one] => one.clone(),
                [] => return Err(BlobReadError::Query("the table has no BLOB column".into())),
                many => {
                    return Err(BlobReadError::Query(alloc::format!(
                        "the table has several BLOB columns {many:?}: name one"
                    )))
                }
            },
        };
        let ranges = query.rows.as_ref().map(|rows| {
            let mut r: Vec<RowRange> = rows.iter().map(|&(a, b)| RowRange::new(a, b)).collect();
            let n = RowRanges::normalize(&mut r).as_slice().len();
            r.truncate(n);
            r
        });
        // Splits: one partition, one bucket.
        let mut sorted: Vec<&DataFile> = plan.files.iter().collect();
        sorted.sort_by(|x, y| x.partition.cmp(&y.partition).then(x.bucket.cmp(&y.bucket)));
        let mut bunches = Vec::new();
        for split in sorted.chunk_by(|x, y| x.partition == y.partition && x.bucket == y.bucket) {
            let Some(head) = split.first() else { continue };
            let label = alloc::format!(
                "{}bucket-{}: ",
                schema.partition_path(&head.partition).unwrap_or_default(),
                head.bucket
            );
            for group in group_split(split, ranges.is_some())? {
                let deleted = group_deletions(table, &schema, &deletions, &group)?;
                for bunch in group.bunches.into_iter().filter(|b| b.field == column) {
                    let mut files = Vec::with_capacity(bunch.files.len());
                    for f in bunch.files {
                        let path = table.data_file_path(&schema, f).map_err(|e| {
                            BlobReadError::Invalid {
                                context: f.file_name.to_string(),
                                error: e,
                            }
                        })?;
                        files.push((PathBuf::from(path), f.clone()));
                    }
                    bunches.push(PlannedBunch {
                        split: label.clone(),
                        files,
                        first_row_id: bunch.first_row_id,
                        end_row_id: bunch.end_row_id,
                        deleted: deleted.clone(),
                    });
                }
            }
        }
        bunches.sort_by_key(|b| b.first_row_id);
        Ok(BlobColumnRead {
            storage: alloc::sync::Arc::clone(table.storage()),
            snapshot: Some(snapshot_id),
            column,
            ranges,
            bunches,
        })
    }

    /// The snapshot read (`None` for a table without snapshots).
    pub fn snapshot(&self) -> Option<u64> {
        self.snapshot
    }

    /// The BLOB column read.
    pub fn column(&self) -> &str {
        &self.column
    }

    /// The bunches, by first row ID.
    pub fn bunches(&self) -> &[PlannedBunch] {
        &self.bunches
    }

    /// The normalized row ranges of the query, if any.
    pub fn ranges(&self) -> Option<&[RowRange]> {
        self.ranges.as_deref()
    }

    /// Reads bunch `index`'s files (mapped when local and large; from an object store only
    /// their indexes and the selected rows' payloads, see `fetch_sparse`), validates them against their manifest entries (file size,
    /// row count) and hands the merge to `f`. The files stay mapped while `f` runs.
    pub fn with_bunch<R>(
        &self,
        index: usize,
        options: ReadOptions,
        f: impl FnOnce(&mut FallbackMerge<'_, '_, MAX_LAYERS>, &PlannedBunch) -> R,
    ) -> Result<R, BlobReadError> {
        let bunch = self
            .bunches
            .get(index)
            .ok_or_else(|| BlobReadError::Query(alloc::format!("no bunch {index}")))?;
        let maps = if self.storage.is_remote() {
            self.fetch_sparse(bunch, options)?
        } else {
            let mut maps = Vec::with_capacity(bunch.files.len());
            for (path, _) in &bunch.files {
                // Local storage maps (Paimon data files are written once, `LocalFs`'s contract).
                let map = self
                    .storage
                    .read_data(path)
                    .map_err(|error| BlobReadError::Io {
                        path: path.clone(),
                        error,
                    })?;
                maps.push(map);
            }
            maps
        };
        let mut layer_files = Vec::with_capacity(maps.len());
        for ((path, meta), map) in bunch.files.iter().zip(&maps) {
            let facts = FileFacts {
                row_count: u64::try_from(meta.row_count).ok(),
                file_size: u64::try_from(meta.file_size).ok(),
            };
            let file =
                BlobFile::parse_with(map, &BlobOptions { expected: facts }).map_err(|error| {
                    BlobReadError::Invalid {
                        context: alloc::format!(
                            "{} (manifest: file_size {}, row_count {})",
                            path.display(),
                            meta.file_size,
                            meta.row_count
                        ),
                        error,
                    }
                })?;
            layer_files.push(LayerFile {
                file,
                first_row_id: row_span(meta)?.0,
                max_sequence_number: meta.max_sequence_number,
            });
        }
        let merge_options = MergeOptions {
            ranges: self.ranges.as_deref(),
            deleted: &bunch.deleted,
            strict: options.strict,
        };
        let mut merge =
            FallbackMerge::with_max_layers(&mut layer_files, merge_options).map_err(|error| {
                BlobReadError::Invalid {
                    context: bunch.context(&self.column),
                    error,
                }
            })?;
        Ok(f(&mut merge, bunch))
    }

    /// The files of `bunch` from remote storage, fetching only what the read needs: each
    /// file's size (HEAD) and tail (the index; the last 64 KiB, then the rest of the index
    /// when it is longer), then, after a dry run of the merge over the indexes, the payloads
    /// of the rows the merge selects and each file wins, coalesced per file with the
    /// storage's [`RangeTuning`](crate::io::RangeTuning) gap (the whole data region in one
    /// GET when the ranges would cover `whole_above_per_mille` of it). Each file becomes a
    /// zero-filled buffer of its size holding the fetched bytes where they belong, so the
    /// views and the merge run unchanged; the zero pages of bytes never fetched are not
    /// touched (a large zeroed allocation is typically fresh zero pages, e.g. `calloc` over
    /// a new mapping on Linux, so resident memory follows the fetched bytes).
    fn fetch_sparse(
        &self,
        bunch: &PlannedBunch,
        options: ReadOptions,
    ) -> Result<Vec<crate::io::Stored>, BlobReadError> {
        const TAIL: u64 = 64 << 10;
        let io = |path: &PathBuf| {
            let path = path.clone();
            move |error| BlobReadError::Io { path, error }
        };
        let short =
            |what: &str| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, what.to_string());
        let mut bufs: Vec<Vec<u8>> = Vec::with_capacity(bunch.files.len());
        // Per file: where the bytes fetched with the tail start (payloads after it are there).
        let mut fetched_from: Vec<u64> = Vec::with_capacity(bunch.files.len());
        for (path, meta) in &bunch.files {
            let size = self.storage.size(path).map_err(io(path))?;
            if u64::try_from(meta.file_size).ok() != Some(size) {
                return Err(BlobReadError::Invalid {
                    context: alloc::format!(
                        "{} (manifest: file_size {}, the object has {size} bytes)",
                        path.display(),
                        meta.file_size
                    ),
                    error: crate::Error::new(crate::ErrorKind::Mismatch, size),
                });
            }
            let len = usize::try_from(size).map_err(|_| {
                io(path)(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "file too large for this platform",
                ))
            })?;
            let mut buf = alloc::vec![0u8; len];
            let mut tail_start = size.saturating_sub(TAIL);
            let mut got = self
                .storage
                .read_ranges(path, &[(tail_start, size - tail_start)])
                .map_err(io(path))?;
            let tail = got.pop().ok_or_else(|| io(path)(short("no bytes")))?;
            copy_at(&mut buf, tail_start, &tail).map_err(io(path))?;
            // The index may be longer than the tail fetched: fetch the rest of it.
            if let Some(footer) = buf.len().checked_sub(crate::blob::FOOTER_LEN) {
                let index_len = buf
                    .get(footer..footer + 4)
                    .and_then(|b| <[u8; 4]>::try_from(b).ok())
                    .map_or(0, i32::from_le_bytes);
                let index_start = u64::try_from(index_len)
                    .ok()
                    .and_then(|n| (footer as u64).checked_sub(n));
                if let Some(start) = index_start.filter(|&s| s < tail_start) {
                    let rest = self
                        .storage
                        .read_ranges(path, &[(start, tail_start - start)])
                        .map_err(io(path))?;
                    for part in &rest {
                        copy_at(&mut buf, start, part).map_err(io(path))?;
                    }
                    tail_start = start;
                }
            }
            bufs.push(buf);
            fetched_from.push(tail_start);
        }
        // Dry run: the merge over the indexes says which payloads of which file it returns.
        let mut wanted: Vec<Vec<(u64, u64)>> = alloc::vec![Vec::new(); bufs.len()];
        {
            let mut layer_files = Vec::with_capacity(bufs.len());
            for ((_, meta), buf) in bunch.files.iter().zip(&bufs) {
                let facts = FileFacts {
                    row_count: u64::try_from(meta.row_count).ok(),
                    file_size: u64::try_from(meta.file_size).ok(),
                };
                // Invalid files are reported by the real pass below, with their context.
                let Ok(file) = BlobFile::parse_with(buf, &BlobOptions { expected: facts }) else {
                    return Ok(bufs.into_iter().map(crate::io::Stored::Vec).collect());
                };
                layer_files.push(LayerFile {
                    file,
                    first_row_id: row_span(meta)?.0,
                    max_sequence_number: meta.max_sequence_number,
                });
            }
            let merge_options = MergeOptions {
                ranges: self.ranges.as_deref(),
                deleted: &[],
                strict: options.strict,
            };
            if let Ok(mut merge) = FallbackMerge::<'_, '_, MAX_LAYERS>::with_max_layers(
                &mut layer_files,
                merge_options,
            ) {
                let owner: Vec<Option<usize>> = merge
                    .files()
                    .iter()
                    .map(|lf| {
                        bufs.iter()
                            .position(|b| core::ptr::eq(b.as_ptr(), lf.file.bytes().as_ptr()))
                    })
                    .collect();
                for row in merge.by_ref() {
                    let Ok(row) = row else { break };
                    if let (Some(p), Some(Some(k))) =
                        (row.value, row.file.and_then(|i| owner.get(i).copied()))
                    {
                        if let Some(w) = wanted.get_mut(k).filter(|_| !p.bytes.is_empty()) {
                            w.push((p.offset, p.bytes.len() as u64));
                        }
                    }
                }
            }
        }
        let tuning = self.storage.tuning();
        for ((((path, _), buf), mut spans), &from) in bunch
            .files
            .iter()
            .zip(&mut bufs)
            .zip(wanted)
            .zip(&fetched_from)
        {
            spans.retain(|&(offset, _)| offset < from);
            if spans.is_empty() {
                continue;
            }
            spans.sort_unstable();
            spans.dedup();
            let mut ranges = crate::io::coalesce_with_gap(&spans, tuning.coalesce_gap);
            let data_end = spans.last().map_or(0, |&(o, l)| o.saturating_add(l));
            let covered: u64 = ranges.iter().map(|&(_, l)| l).sum();
            if data_end > 0
                && covered.saturating_mul(1000)
                    >= data_end.saturating_mul(u64::from(tuning.whole_above_per_mille))
            {
                ranges = alloc::vec![(0, data_end)];
            }
            let parts = self.storage.read_ranges(path, &ranges).map_err(io(path))?;
            for (&(offset, _), part) in ranges.iter().zip(&parts) {
                copy_at(buf, offset, part).map_err(io(path))?;
            }
        }
        Ok(bufs.into_iter().map(crate::io::Stored::Vec).collect())
    }

    /// Reads every row of the column in row-ID order of the bunches, calling `f` per row;
    /// `f`'s error stops the read and is returned as `Ok(Err(_))`.
    pub fn for_each_row<E>(
        &self,
        options: ReadOptions,
        mut f: impl FnMut(BlobRow<'_>) -> Result<(), E>,
    ) -> Result<Result<(), E>, BlobReadError> {
        for index in 0..self.bunches.len() {
            let outcome = self.with_bunch(
                index,
                options,
                |merge, bunch| -> Result<Result<(), E>, BlobReadError> {
                    let files = merge.files();
                    let names: Vec<&str> = files.iter().map(|lf| file_name_of(bunch, lf)).collect();
                    // Rows from the merge's batches: the per-row iterator's state checks
                    // are made once per batch of up to 1024 rows.
                    while let Some(batch) = merge.next_batch() {
                        let batch = batch.map_err(|error| BlobReadError::Invalid {
                            context: bunch.context(&self.column),
                            error,
                        })?;
                        for row in batch.iter() {
                            let out = BlobRow {
                                row_id: row.row_id,
                                sequence_number: row.sequence_number,
                                value: row.value.map(|p| p.bytes),
                                file: row.file.and_then(|i| names.get(i).copied()),
                            };
                            if let Err(e) = f(out) {
                                return Ok(Err(e));
                            }
                        }
                    }
                    Ok(Ok(()))
                },
            )??;
            if outcome.is_err() {
                return Ok(outcome);
            }
        }
        Ok(Ok(()))
    }

    /// The columnar form of [`for_each_row`](Self::for_each_row): `f` gets each batch of up
    /// to 1024 merged rows (see [`MergedBatch`]).
    pub fn for_each_batch<E>(
        &self,
        options: ReadOptions,
        mut f: impl FnMut(&MergedBatch<'_, '_>) -> Result<(), E>,
    ) -> Result<Result<(), E>, BlobReadError> {
        for index in 0..self.bunches.len() {
            let outcome = self.with_bunch(
                index,
                options,
                |merge, bunch| -> Result<Result<(), E>, BlobReadError> {
                    while let Some(batch) = merge.next_batch() {
                        let batch = batch.map_err(|error| BlobReadError::Invalid {
                            context: bunch.context(&self.column),
                            error,
                        })?;
                        if let Err(e) = f(&batch) {
                            return Ok(Err(e));
                        }
                    }
                    Ok(Ok(()))
                },
            )??;
            if outcome.is_err() {
                return Ok(outcome);
            }
        }
        Ok(Ok(()))
    }

    /// The lint of a partial update that loses to an older layer: every row where a
    /// placeholder-bearing file (a partial update) holds a value or NULL, but the row's winner
    /// is a file without placeholders (a base file) with a higher `max_sequence_number`. A
    /// writer that rolls base files can give a later base file a sequence number above a
    /// partial update written after it; the merge then returns the old bytes. The result
    /// does not change what a read returns (the clients do the same); it reports it.
    pub fn check(&self) -> Result<Vec<LostUpdate>, BlobReadError> {
        let mut found = Vec::new();
        for index in 0..self.bunches.len() {
            self.with_bunch(
                index,
                ReadOptions::default(),
                |merge, bunch| -> Result<(), BlobReadError> {
                    let files = merge.files();
                    let mut seqs = files.iter().map(|f| f.max_sequence_number);
                    let first_seq = seqs.next();
                    if seqs.all(|s| Some(s) == first_seq) {
                        return Ok(());
                    }
                    // Per file: whether it is a partial update (has placeholders), and a forward
                    // cursor over its rows with the position it is at.
                    let mut state: Vec<(bool, crate::blob::Rows<'_>, u64)> = files
                        .iter()
                        .map(|f| (f.file.placeholders() > 0, f.file.iter(), 0))
                        .collect();
                    for row in merge.by_ref() {
                        let row = row.map_err(|error| BlobReadError::Invalid {
                            context: bunch.context(&self.column),
                            error,
                        })?;
                        let Some(winner) = row.file.and_then(|w| files.get(w)) else {
                            continue;
                        };
                        if winner.file.placeholders() > 0 {
                            continue;
                        }
                        for (f, (partial, cursor, pos)) in files.iter().zip(state.iter_mut()) {
                            if !*partial
                                || f.max_sequence_number >= winner.max_sequence_number
                                || row.row_id < f.first_row_id
                                || row.row_id - f.first_row_id >= f.file.rows()
                            {
                                continue;
                            }
                            let local = row.row_id - f.first_row_id;
                            // Row IDs ascend within a bunch: walk the file forward to `local`.
                            let mut entry = None;
                            while *pos <= local {
                                entry = cursor.next();
                                *pos += 1;
                            }
                            if matches!(entry, Some(r) if r != crate::blob::Row::Placeholder) {
                                found.push(LostUpdate {
                                    row_id: row.row_id,
                                    winner: file_name_of(bunch, winner).to_string(),
                                    winner_sequence_number: winner.max_sequence_number,
                                    update: file_name_of(bunch, f).to_string(),
                                    update_sequence_number: f.max_sequence_number,
                                });
                            }
                        }
                    }
                    Ok(())
                },
            )??;
        }
        Ok(found)
    }
}

/// A row whose partial update loses to a base file with a higher sequence number (see
/// [`BlobColumnRead::check`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LostUpdate {
    /// The row.
    pub row_id: u64,
    /// The file whose bytes a read returns.
    pub winner: String,
    /// Its `max_sequence_number`.
    pub winner_sequence_number: i64,
    /// The partial-update file whose value loses.
    pub update: String,
    /// Its `max_sequence_number`.
    pub update_sequence_number: i64,
}

/// The manifest name of a merge's file (matched by first row ID and sequence number, which
/// identify a file inside a bunch since a layer's files do not overlap).
fn file_name_of<'b>(bunch: &'b PlannedBunch, file: &LayerFile<'_>) -> &'b str {
    bunch
        .files
        .iter()
        .find(|(_, m)| {
            m.max_sequence_number == file.max_sequence_number
                && m.first_row_id == i64::try_from(file.first_row_id).ok()
                && u64::try_from(m.row_count).ok() == Some(file.file.rows())
        })
        .map_or("", |(_, m)| &*m.file_name)
}

/// The table's BLOB fields (schema type `BLOB`), in schema order.
fn blob_fields(table: &Table, schema_id: u64) -> Result<Vec<String>, BlobReadError> {
    let path = table
        .dir()
        .join("schema")
        .join(alloc::format!("schema-{schema_id}"));
    let v = read_json(table, &path)?;
    let mut out = Vec::new();
    for field in v
        .get("fields")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
    {
        let is_blob = field
            .get("type")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|t| t.trim_end_matches(" NOT NULL").eq_ignore_ascii_case("BLOB"));
        if let (true, Some(name)) = (is_blob, field.get("name").and_then(|n| n.as_str())) {
            out.push(name.to_string());
        }
    }
    Ok(out)
}

/// The comma-separated field names of option `key` in a schema's JSON (trimmed, empty names
/// dropped); `None` when the option is absent.
fn option_fields(schema: &serde_json::Value, key: &str) -> Option<Vec<String>> {
    let list = schema
        .get("options")
        .and_then(|o| o.get(key))
        .and_then(serde_json::Value::as_str)?;
    Some(
        list.split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// Descriptor-mode BLOB fields of a schema: option `blob-descriptor-field`, or, only when that
/// key is absent, Java's fallback key `blob.stored-descriptor-fields` (as pypaimon 2.1 and
/// Java read them).
fn descriptor_fields_of(schema: &serde_json::Value) -> Vec<String> {
    option_fields(schema, "blob-descriptor-field")
        .or_else(|| option_fields(schema, "blob.stored-descriptor-fields"))
        .unwrap_or_default()
}

/// The JSON of schema `schema_id` of `table`.
fn schema_json(table: &Table, schema_id: u64) -> Result<serde_json::Value, BlobReadError> {
    let path = table
        .dir()
        .join("schema")
        .join(alloc::format!("schema-{schema_id}"));
    read_json(table, &path)
}

/// BLOB fields whose values live inline in the data files (descriptor fields and
/// `blob-view-field`s): they have no bunches.
fn inline_blob_fields(table: &Table, schema_id: u64) -> Result<Vec<String>, BlobReadError> {
    let v = schema_json(table, schema_id)?;
    let mut out = descriptor_fields_of(&v);
    out.extend(option_fields(&v, "blob-view-field").unwrap_or_default());
    Ok(out)
}

/// Where a BLOB column's values are stored (see [`column_kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    /// In `.blob` files: read with [`BlobColumnRead`].
    BlobFiles,
    /// As serialized `BlobDescriptor` bytes in the data files (a `blob-descriptor-field`):
    /// read with [`DescriptorColumnRead`](descriptor::DescriptorColumnRead) (feature `arrow`).
    Descriptor,
}

/// Which BLOB column a read of `column` at `snapshot` (latest when `None`) means, and where
/// its values are stored. Without a name: the table's only BLOB column stored in `.blob`
/// files, or, when it has none, its only descriptor field.
///
/// A table without snapshots answers `(column or "", BlobFiles)`: it has no rows.
///
/// Errors ([`BlobReadError::Query`]): a table without row tracking and data evolution; a
/// column that is neither a `.blob` field nor a
/// descriptor field (naming both lists), several candidates without a name, none at all;
/// [`BlobReadError::Unsupported`] for a `blob-view-field`.
///
/// ```
/// use lakecore::paimon::blob::{column_kind, ColumnKind};
/// use lakecore::paimon::Table;
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/blob.db/py_blob");
/// let (name, kind) = column_kind(&Table::open(dir)?, None, None)?;
/// assert_eq!((name.as_str(), kind), ("b", ColumnKind::BlobFiles));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn column_kind(
    table: &Table,
    snapshot: Option<u64>,
    column: Option<&str>,
) -> Result<(String, ColumnKind), BlobReadError> {
    let snapshot = match snapshot {
        Some(id) => Some(id),
        None => table.latest_snapshot_id()?,
    };
    let Some(snapshot) = snapshot else {
        // An empty table: nothing to read, whatever the column.
        return Ok((
            column.unwrap_or_default().to_string(),
            ColumnKind::BlobFiles,
        ));
    };
    let schema_id = table.snapshot(snapshot)?.schema_id;
    let schema = table.schema(schema_id)?;
    if !(schema.row_tracking && schema.data_evolution) {
        return Err(BlobReadError::Query(
            "the table has no BLOB columns to read: it needs row-tracking.enabled and \
             data-evolution.enabled"
                .into(),
        ));
    }
    let v = schema_json(table, schema_id)?;
    let blob = blob_fields(table, schema_id)?;
    let descriptors: Vec<String> = descriptor_fields_of(&v)
        .into_iter()
        .filter(|d| blob.contains(d))
        .collect();
    let views = option_fields(&v, "blob-view-field").unwrap_or_default();
    let files: Vec<&String> = blob
        .iter()
        .filter(|f| !descriptors.contains(f) && !views.contains(f))
        .collect();
    match column {
        Some(c) if descriptors.iter().any(|d| d == c) => {
            Ok((c.to_string(), ColumnKind::Descriptor))
        }
        Some(c) if files.iter().any(|f| *f == c) => Ok((c.to_string(), ColumnKind::BlobFiles)),
        Some(c) if views.iter().any(|f| f == c) => Err(BlobReadError::Unsupported(alloc::format!(
            "BLOB column {c:?} is a blob-view-field (a reference into another table's BLOB \
             column): not read by lakecore"
        ))),
        Some(c) => Err(BlobReadError::Query(alloc::format!(
            "no BLOB column {c:?}: it is neither a BLOB field stored in .blob files \
             ({files:?}) nor a blob-descriptor-field ({descriptors:?})"
        ))),
        None => match (files.as_slice(), descriptors.as_slice()) {
            ([one], _) => Ok(((*one).clone(), ColumnKind::BlobFiles)),
            ([], [one]) => Ok((one.clone(), ColumnKind::Descriptor)),
            ([], []) => Err(BlobReadError::Query("the table has no BLOB column".into())),
            _ => Err(BlobReadError::Query(alloc::format!(
                "the table has several BLOB columns (in .blob files {files:?}, descriptor \
                 fields {descriptors:?}): name one"
            ))),
        },
    }
}

fn read_json(table: &Table, path: &std::path::Path) -> Result<serde_json::Value, BlobReadError> {
    let text = table.storage().read(path).map_err(|error| {
        BlobReadError::Scan(ScanError::Io {
            path: path.to_path_buf(),
            error,
        })
    })?;
    serde_json::from_slice(&text).map_err(|e| {
        BlobReadError::Scan(ScanError::Metadata {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    })
}

/// The row IDs a merge group's deletion vector deletes: the vector of its anchor (oldest
/// data file), position `p` being row ID `anchor.first_row_id + p`; empty without one.
fn group_deletions(
    table: &Table,
    schema: &super::TableSchema,
    index: &super::DeletionIndex,
    group: &MergeGroup<'_>,
) -> Result<Vec<u64>, BlobReadError> {
    if index.is_empty() {
        return Ok(Vec::new());
    }
    let Some(anchor) = super::anchor_file(group.data_files.iter().copied()) else {
        return Ok(Vec::new());
    };
    let Some(file) = index.get(schema, &anchor.partition, anchor.bucket, &anchor.file_name) else {
        return Ok(Vec::new());
    };
    let vector = table.read_deletion_vector(file)?;
    let (first, end) = row_span(anchor)?;
    let mut out = Vec::with_capacity(usize::try_from(vector.len()).unwrap_or(0));
    for position in vector {
        let row = first.saturating_add(u64::from(position));
        if row >= end {
            return Err(grouping(
                &*anchor.file_name,
                alloc::format!(
                    "deletion vector in {} (offset {}) deletes position {position}, past the \
                     file's {} rows",
                    file.path,
                    file.offset,
                    end - first
                ),
            ));
        }
        out.push(row);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, first: i64, rows: i64, seq: i64, cols: &[&str]) -> DataFile {
        DataFile {
            file_name: name.into(),
            first_row_id: Some(first),
            row_count: rows,
            max_sequence_number: seq,
            write_cols: Some(cols.iter().map(|c| c.to_string()).collect()),
            ..DataFile::default()
        }
    }

    fn names<'a>(files: &[&'a DataFile]) -> Vec<&'a str> {
        files.iter().map(|f| &*f.file_name).collect()
    }

    fn group(files: &[DataFile], pushed: bool) -> Result<Vec<MergeGroup<'_>>, BlobReadError> {
        let refs: Vec<&DataFile> = files.iter().collect();
        group_split(&refs, pushed)
    }

    /// The spec's worked example as manifest entries, with a base data file over rows 0..9
    /// and a second blob field: one merge group, one bunch per field, layered newest first.
    #[test]
    fn worked_example_forms_one_group_and_layers() {
        let files = [
            file("d.parquet", 0, 10, 1, &["id", "name"]),
            file("s1a.blob", 0, 3, 1, &["b"]),
            file("s1b.blob", 3, 2, 1, &["b"]),
            file("s2a.blob", 0, 2, 2, &["b"]),
            file("s2b.blob", 2, 2, 2, &["b"]),
            file("s2c.blob", 4, 1, 2, &["b"]),
            file("s3.blob", 5, 5, 3, &["b"]),
            file("s4a.blob", 5, 3, 4, &["b"]),
            file("s4b.blob", 8, 2, 4, &["b"]),
            file("s6.blob", 0, 10, 6, &["b"]),
            file("c.blob", 0, 10, 1, &["c"]),
        ];
        let groups = group(&files, false).unwrap();
        assert_eq!(groups.len(), 1);
        let g = &groups[0];
        assert_eq!((g.first_row_id, g.end_row_id), (0, 10));
        assert_eq!(names(&g.data_files), ["d.parquet"]);
        assert_eq!(g.bunches.len(), 2);
        let b = &g.bunches[0];
        assert_eq!(b.field, "b");
        assert_eq!(b.layers(), 5);
        assert_eq!(
            names(&b.files),
            [
                "s6.blob", "s4a.blob", "s4b.blob", "s3.blob", "s2a.blob", "s2b.blob", "s2c.blob",
                "s1a.blob", "s1b.blob"
            ]
        );
        assert_eq!((b.field, b.row_count()), ("b", 10));
        assert_eq!((g.bunches[1].field, g.bunches[1].layers()), ("c", 1));
    }

    #[test]
    fn touching_ranges_do_not_merge() {
        let files = [
            file("d1.parquet", 0, 5, 1, &["id"]),
            file("b1.blob", 0, 5, 1, &["b"]),
            file("d2.parquet", 5, 5, 2, &["id"]),
            file("b2.blob", 5, 3, 2, &["b"]),
            file("b3.blob", 8, 2, 3, &["b"]),
        ];
        let groups = group(&files, false).unwrap();
        let ranges: Vec<_> = groups
            .iter()
            .map(|g| (g.first_row_id, g.end_row_id))
            .collect();
        assert_eq!(ranges, [(0, 5), (5, 10)]);
        // Rolled files of one field with different sequence numbers: two layers, no overlap.
        assert_eq!(names(&groups[1].bunches[0].files), ["b3.blob", "b2.blob"]);
        assert_eq!(groups[1].bunches[0].layers(), 2);
    }

    fn grouping_error(files: &[DataFile], pushed: bool) -> (String, String) {
        match group(files, pushed) {
            Err(BlobReadError::Grouping { files, message }) => (files, message),
            other => panic!("expected a grouping error, got {other:?}"),
        }
    }

    #[test]
    fn a_blob_file_has_exactly_one_write_column() {
        let files = [
            file("d.parquet", 0, 2, 1, &["id"]),
            file("two.blob", 0, 2, 1, &["b", "c"]),
        ];
        let (f, m) = grouping_error(&files, false);
        assert_eq!(f, "two.blob");
        assert!(m.contains("blob file only has one blob field"), "{m}");
        assert!(m.contains("[\"b\", \"c\"]"), "{m}");
        let mut none = file("none.blob", 0, 2, 1, &[]);
        none.write_cols = None;
        let (f, m) = grouping_error(&[none], false);
        assert_eq!((f.as_str(), m.ends_with("is null")), ("none.blob", true));
        let (f, _) = grouping_error(&[file("zero.blob", 0, 2, 1, &[])], false);
        assert_eq!(f, "zero.blob");
    }

    #[test]
    fn overlap_inside_a_layer_is_an_error() {
        let files = [
            file("d.parquet", 0, 6, 1, &["id"]),
            file("a.blob", 0, 4, 1, &["b"]),
            file("b.blob", 3, 3, 1, &["b"]),
        ];
        let (f, m) = grouping_error(&files, false);
        assert_eq!(f, "a.blob and b.blob");
        assert!(
            m.contains("overlap inside layer max_sequence_number 1"),
            "{m}"
        );
        // With row ranges pushed down too: overlap is never allowed.
        assert_eq!(grouping_error(&files, true).0, "a.blob and b.blob");
    }

    #[test]
    fn bunch_range_must_match_the_data_files() {
        let short = [
            file("d.parquet", 0, 6, 1, &["id"]),
            file("a.blob", 0, 5, 1, &["b"]),
        ];
        let (f, m) = grouping_error(&short, false);
        assert_eq!(f, "a.blob");
        assert!(
            m.contains("covers rows 0..5 (5 rows) but the data files cover 0..6 (6 rows)"),
            "{m}"
        );
        // Pushed-down row ranges prune files: the check is off.
        assert_eq!(group(&short, true).unwrap().len(), 1);
        let hole = [
            file("d.parquet", 0, 6, 1, &["id"]),
            file("a.blob", 0, 2, 1, &["b"]),
            file("b.blob", 1, 5, 2, &["b"]),
            file("c.blob", 0, 1, 3, &["b"]),
            file("e.blob", 4, 2, 3, &["b"]),
        ];
        assert!(group(&hole, false).is_ok());
        let hole = [
            file("d.parquet", 0, 6, 1, &["id"]),
            file("a.blob", 0, 2, 1, &["b"]),
            file("b.blob", 1, 2, 2, &["b"]),
            file("e.blob", 4, 2, 2, &["b"]),
        ];
        // a and b overlap, so they group; e only touches row 4 of d: one group over d's range
        // with rows 3..4 in no blob file.
        let (_, m) = grouping_error(&hole, false);
        assert!(m.contains("no file covers rows 3..4"), "{m}");
    }

    #[test]
    fn missing_or_bad_row_ids_name_the_file() {
        let mut f = file("x.blob", 0, 2, 1, &["b"]);
        f.first_row_id = None;
        let (name, m) = grouping_error(&[f], false);
        assert_eq!(
            (name.as_str(), m.contains("_FIRST_ROW_ID")),
            ("x.blob", true)
        );
        let (_, m) = grouping_error(&[file("y.blob", -3, 2, 1, &["b"])], false);
        assert!(m.contains("negative _FIRST_ROW_ID -3"), "{m}");
        let (_, m) = grouping_error(&[file("z.blob", i64::MAX, i64::MAX, 1, &["b"])], false);
        assert!(m.contains("overflows"), "{m}");
    }

    #[test]
    fn a_group_without_data_files_checks_only_contiguity() {
        let files = [
            file("a.blob", 0, 2, 1, &["b"]),
            file("b.blob", 2, 2, 1, &["b"]),
        ];
        // Touching files: two groups of one file each.
        assert_eq!(group(&files, false).unwrap().len(), 2);
    }
}
