//! Splits in Paimon's shape (feature `paimon`): a plan's live files grouped per partition and
//! bucket and packed up to a target size, each file with its full path and its deletion file from the snapshot's index
//! manifest, and for data-evolution tables the merge groups (files whose row-ID ranges
//! overlap: a base file and the files of its partial updates), as the clients' split
//! generation forms them.
//!
//! ```
//! use lakecore::paimon::{ScanQuery, Table};
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/dv_warehouse/dvtab.db/dv");
//! let table = Table::open(dir)?;
//! let plan = table.plan(None, &ScanQuery::default())?;
//! let splits = table.splits(&plan)?;
//! assert_eq!(splits.len(), 2); // two partitions, one bucket each
//! for split in &splits {
//!     assert_eq!(split.files.iter().map(|f| f.file.row_count).sum::<i64>(), split.row_count);
//!     // Each merge group's deletion vector sits on its anchor, the oldest data file.
//!     for group in split.merge_groups() {
//!         assert!(group.iter().filter(|f| f.deletion_file.is_some()).count() <= 1);
//!     }
//! }
//! assert!(splits.iter().flat_map(|s| &s.files).any(|f| f.deletion_file.is_some()));
//! # Ok::<(), lakecore::paimon::ScanError>(())
//! ```

use super::deletion::{DeletionFile, DeletionIndex};
use super::error::*;
use super::plan::{DataFile, ScanPlan};
use super::table::{PartitionValue, Table, TableSchema};
use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;

/// One file of a [`Split`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitFile {
    /// The manifest entry's file facts.
    pub file: DataFile,
    /// The file's full path (its external path, or under the table).
    pub path: String,
    /// Where its deletion vector is, if it has one.
    pub deletion_file: Option<DeletionFile>,
}

/// The files of one partition and bucket: Paimon's `DataSplit`.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    /// The snapshot planned.
    pub snapshot: u64,
    /// `_PARTITION` bytes (4-byte arity + BinaryRow).
    pub partition: Vec<u8>,
    /// The partition typed through the table schema: `(key, value)` in key order.
    pub partition_values: Vec<(String, PartitionValue)>,
    /// Bucket.
    pub bucket: i32,
    /// Total buckets.
    pub total_buckets: i32,
    /// The files: an append table's in the order of their ADD entries (as the clients list
    /// them), a data-evolution table's merge group by merge group in row-ID order (each
    /// group's files by file name), a primary-key bucket kept whole (see [`Table::splits`]) by
    /// file name.
    pub files: Vec<SplitFile>,
    /// Data-evolution tables: the merge groups as index ranges into `files`, in row-ID
    /// order. Empty for other tables.
    pub groups: Vec<Range<usize>>,
    /// Sum of the files' row counts (as the clients' `row_count`).
    pub row_count: i64,
    /// Rows left after merging and deletions, when known: for a data-evolution table the
    /// merge groups' row-ID spans, else the files' rows; less each deletion vector's
    /// cardinality (`None` when a deletion file has no cardinality).
    pub merged_row_count: Option<i64>,
}

impl Split {
    /// The merge groups' files (data-evolution tables; none otherwise).
    pub fn merge_groups(&self) -> impl Iterator<Item = &[SplitFile]> {
        self.groups
            .iter()
            .map(|r| self.files.get(r.clone()).unwrap_or_default())
    }
}

/// Whether a file holds a BLOB or vector column only (never a merge group's anchor).
fn is_side_file(name: &str) -> bool {
    name.ends_with(".blob") || name.ends_with(".vector")
}

/// The anchor of a merge group: its oldest normal file (lowest `max_sequence_number`, then
/// file name), the file a data-evolution deletion vector belongs to.
pub fn anchor_file<'a>(group: impl IntoIterator<Item = &'a DataFile>) -> Option<&'a DataFile> {
    group
        .into_iter()
        .filter(|f| !is_side_file(&f.file_name))
        .min_by(|a, b| {
            (a.max_sequence_number, &a.file_name).cmp(&(b.max_sequence_number, &b.file_name))
        })
}

/// Groups files (of one partition and bucket) whose row-ID ranges overlap; files without a
/// first row ID or with no rows each form their own group. Returns the files' positions in
/// group order (each group's in the given order) and the groups as ranges of that order.
fn merge_groups(files: &[DataFile]) -> (Vec<usize>, Vec<Range<usize>>) {
    let mut order: Vec<(i64, i64, usize)> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (a, b) = f.first_row_id.map_or((i64::MAX, i64::MAX), |a| {
                (a, a.saturating_add(f.row_count.max(0)))
            });
            (a, b, i)
        })
        .collect();
    order.sort_unstable();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut end = i64::MIN;
    for (a, b, i) in order {
        let joins = a < end && a != i64::MAX;
        match (joins, groups.last_mut()) {
            (true, Some(g)) => g.push(i),
            _ => groups.push(alloc::vec![i]),
        }
        end = if joins { end.max(b) } else { b };
    }
    let mut out = Vec::with_capacity(files.len());
    let mut ranges = Vec::with_capacity(groups.len());
    for mut g in groups {
        g.sort_unstable();
        let start = out.len();
        out.extend(g);
        ranges.push(start..out.len());
    }
    (out, ranges)
}

impl Table {
    /// The plan's files as splits, with their paths, deletion files and, for a
    /// data-evolution table, merge groups. Reads the snapshot, its schema and its index
    /// manifest; a plan of a table without snapshots has no splits.
    ///
    /// Each partition and bucket's files are packed as the clients pack them: units (an
    /// append table's files in ADD order, a data-evolution table's merge groups in row-ID
    /// order) join a split while its weight stays within the table's
    /// `source.split.target-size` (128 MiB), each unit weighing at least
    /// `source.split.open-file-cost` (4 MiB). A primary-key bucket is packed so when its
    /// files need no merging (none at level 0 or with deleted rows; deletion vectors on, the
    /// first-row merge engine, or one level), as the clients do; otherwise it stays one
    /// split (the clients cut it into key-range sections, which need the files' keys).
    ///
    /// Errors: the snapshot, schema or index manifest cannot be read or is invalid; a
    /// partition the schema cannot type.
    pub fn splits(&self, plan: &ScanPlan) -> Result<Vec<Split>, ScanError> {
        let Some(id) = plan.snapshot else {
            return Ok(Vec::new());
        };
        let snapshot = self.snapshot(id)?;
        let schema = self.schema(snapshot.schema_id)?;
        let index = self.deletion_index(&snapshot, &schema)?;
        self.splits_with(id, &schema, &index, &plan.files)
    }

    /// [`splits`](Self::splits) that consumes the plan: its files move into the splits
    /// instead of being copied (half the memory of a large plan).
    pub fn into_splits(&self, plan: ScanPlan) -> Result<Vec<Split>, ScanError> {
        let Some(id) = plan.snapshot else {
            return Ok(Vec::new());
        };
        let snapshot = self.snapshot(id)?;
        let schema = self.schema(snapshot.schema_id)?;
        let index = self.deletion_index(&snapshot, &schema)?;
        let (mut splits, sources) = self.layout(id, &schema, &index, &plan.files)?;
        let mut files: Vec<Option<DataFile>> = plan.files.into_iter().map(Some).collect();
        for (split, from) in splits.iter_mut().zip(sources) {
            for (f, i) in split.files.iter_mut().zip(from) {
                if let Some(file) = files.get_mut(i).and_then(Option::take) {
                    f.file = file;
                }
            }
            split.count_rows();
        }
        Ok(splits)
    }

    /// [`splits`](Self::splits) over `files` (sorted by partition and bucket, as a plan's
    /// are) with a schema and deletion index already read.
    pub fn splits_with(
        &self,
        snapshot: u64,
        schema: &TableSchema,
        index: &DeletionIndex,
        files: &[DataFile],
    ) -> Result<Vec<Split>, ScanError> {
        let (mut splits, sources) = self.layout(snapshot, schema, index, files)?;
        for (split, from) in splits.iter_mut().zip(sources) {
            for (f, i) in split.files.iter_mut().zip(from) {
                if let Some(file) = files.get(i) {
                    f.file = file.clone();
                }
            }
            split.count_rows();
        }
        Ok(splits)
    }

    /// The splits of `files` with every field but the files' facts (left default), and for
    /// each split the positions in `files` its files come from, in order.
    fn layout(
        &self,
        snapshot: u64,
        schema: &TableSchema,
        index: &DeletionIndex,
        files: &[DataFile],
    ) -> Result<(Vec<Split>, Vec<Vec<usize>>), ScanError> {
        let dir = alloc::format!("{}", self.dir.display());
        let mut out = Vec::new();
        let mut sources = Vec::new();
        let mut start = 0usize;
        for run in files.chunk_by(|a, b| a.partition == b.partition && a.bucket == b.bucket) {
            let base = start;
            start += run.len();
            let Some(head) = run.first() else { continue };
            let partition_values = schema
                .partition_values(&head.partition)
                .map_err(invalid(&self.dir))?;
            let prefix = alloc::format!(
                "{dir}/{}bucket-{}/",
                schema
                    .partition_path(&head.partition)
                    .map_err(invalid(&self.dir))?,
                head.bucket
            );
            let deletions = index.bucket(schema, &head.partition, head.bucket);
            let merge_free = schema.deletion_vectors || schema.first_row_merge;
            let whole = !schema.trimmed_primary_keys.is_empty() && !raw_files(merge_free, run);
            let (order, units) = units(schema.data_evolution, whole, run);
            let target = (schema.split_target_size, schema.split_open_file_cost);
            for (pack, groups) in pack(run, &order, &units, target, schema.data_evolution) {
                let mut split_files = Vec::with_capacity(pack.len());
                let mut from = Vec::with_capacity(pack.len());
                for &i in pack {
                    let Some(f) = run.get(i) else { continue };
                    split_files.push(SplitFile {
                        path: match &f.external_path {
                            Some(p) => String::from(&**p),
                            None => alloc::format!("{prefix}{}", f.file_name),
                        },
                        deletion_file: deletions.and_then(|d| d.get(&*f.file_name)).cloned(),
                        file: DataFile::default(),
                    });
                    from.push(base + i);
                }
                out.push(Split {
                    snapshot,
                    partition: head.partition.to_vec(),
                    partition_values: partition_values.clone(),
                    bucket: head.bucket,
                    total_buckets: head.total_buckets,
                    files: split_files,
                    groups,
                    row_count: 0,
                    merged_row_count: None,
                });
                sources.push(from);
            }
        }
        Ok((out, sources))
    }
}

/// Whether a primary-key bucket's files can be read one by one without merging, so that the
/// clients pack them like an append table's: no file at level 0 or with deleted rows, and
/// `merge_free` (deletion vectors on, or the first-row merge engine) or all files at one
/// level.
fn raw_files(merge_free: bool, run: &[DataFile]) -> bool {
    let raw = run
        .iter()
        .all(|f| f.level != 0 && f.delete_row_count.unwrap_or(0) == 0);
    let one_level = run
        .windows(2)
        .all(|w| matches!(w, [a, b] if a.level == b.level));
    raw && (merge_free || one_level)
}

/// The files of one partition and bucket in split order (positions in `run`) and the units
/// that packing never cuts, as ranges of that order: a data-evolution table's merge groups
/// (row-ID order); the files one by one, in the order of their ADD entries (as the clients
/// list them); with `whole`, the whole bucket (a primary-key bucket that must be merged: the
/// clients cut it into key-range sections, which a plan does not have the keys for).
fn units(data_evolution: bool, whole: bool, run: &[DataFile]) -> (Vec<usize>, Vec<Range<usize>>) {
    if data_evolution {
        return merge_groups(run);
    }
    let mut order: Vec<usize> = (0..run.len()).collect();
    if whole {
        let all = 0..order.len();
        return (order, alloc::vec![all]);
    }
    order.sort_by_key(|&i| run.get(i).map(|f| f.position));
    let units = (0..order.len()).map(|i| i..i + 1).collect();
    (order, units)
}

/// Packs `units` (ranges of `order`), in order, into splits as the clients do: a split takes
/// units while its weight stays within `target` (`source.split.target-size`), a unit weighing
/// its files' sizes but at least `open_cost` (`source.split.open-file-cost`); a unit heavier
/// than the target gets a split of its own. Returns each split's files (positions in `run`)
/// and, with `keep_groups` (data-evolution tables), its merge groups as ranges of those files.
fn pack<'o>(
    run: &[DataFile],
    order: &'o [usize],
    units: &[Range<usize>],
    (target, open_cost): (u64, u64),
    keep_groups: bool,
) -> Vec<(&'o [usize], Vec<Range<usize>>)> {
    let weight = |u: &Range<usize>| {
        let size: u64 = order
            .get(u.clone())
            .unwrap_or_default()
            .iter()
            .filter_map(|&i| run.get(i))
            .map(|f| u64::try_from(f.file_size).unwrap_or(0))
            .fold(0u64, u64::saturating_add);
        size.max(open_cost)
    };
    let mut out = Vec::new();
    let mut bin: Option<Range<usize>> = None;
    let mut groups: Vec<Range<usize>> = Vec::new();
    let mut filled = 0u64;
    let mut close = |bin: Range<usize>, groups: &mut Vec<Range<usize>>| {
        out.push((order.get(bin).unwrap_or_default(), core::mem::take(groups)));
    };
    for u in units {
        let w = weight(u);
        if let Some(b) = bin.take_if(|_| filled.saturating_add(w) > target) {
            close(b, &mut groups);
            filled = 0;
        }
        let b = bin.get_or_insert(u.start..u.start);
        b.end = u.end;
        if keep_groups {
            groups.push(u.start - b.start..u.end - b.start);
        }
        filled = filled.saturating_add(w);
    }
    if let Some(b) = bin {
        close(b, &mut groups);
    }
    out
}

impl Split {
    /// Sets `row_count` and `merged_row_count` from the files.
    fn count_rows(&mut self) {
        self.row_count = self.files.iter().map(|f| f.file.row_count).sum();
        self.merged_row_count = merged_rows(&self.files, &self.groups);
    }
}

fn merged_rows(files: &[SplitFile], groups: &[Range<usize>]) -> Option<i64> {
    let deleted = |f: &SplitFile| match &f.deletion_file {
        None => Some(0),
        Some(d) => d.cardinality,
    };
    if groups.is_empty() {
        let mut n = 0i64;
        for f in files {
            n = n.saturating_add(f.file.row_count.saturating_sub(deleted(f)?));
        }
        return Some(n);
    }
    let mut n = 0i64;
    for g in groups {
        let group = files.get(g.clone())?;
        let first = group.iter().filter_map(|f| f.file.first_row_id).min()?;
        let end = group
            .iter()
            .filter_map(|f| {
                f.file
                    .first_row_id
                    .map(|a| a.saturating_add(f.file.row_count))
            })
            .max()?;
        let mut dels = 0i64;
        for f in group {
            dels = dels.saturating_add(deleted(f)?);
        }
        n = n.saturating_add(end.saturating_sub(first).saturating_sub(dels));
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, first: Option<i64>, rows: i64, seq: i64) -> DataFile {
        DataFile {
            file_name: name.into(),
            first_row_id: first,
            row_count: rows,
            max_sequence_number: seq,
            ..DataFile::default()
        }
    }

    #[test]
    fn overlapping_ranges_group_and_touching_ones_do_not() {
        let files = [
            file("a.parquet", Some(0), 10, 1),
            file("b.blob", Some(0), 4, 1),
            file("c.blob", Some(4), 6, 1),
            file("d.parquet", Some(10), 5, 2),
            file("e.blob", Some(12), 1, 3),
            file("f.parquet", None, 3, 4),
        ];
        let (order, groups) = merge_groups(&files);
        let names: Vec<Vec<&str>> = groups
            .iter()
            .map(|g| {
                order[g.clone()]
                    .iter()
                    .map(|&i| &*files[i].file_name)
                    .collect()
            })
            .collect();
        assert_eq!(
            names,
            [
                alloc::vec!["a.parquet", "b.blob", "c.blob"],
                alloc::vec!["d.parquet", "e.blob"],
                alloc::vec!["f.parquet"]
            ]
        );
    }

    /// pypaimon's `_pack_for_ordered`, written out plainly: the model `pack` must match.
    fn model(weights: &[u64], target: u64) -> Vec<Vec<usize>> {
        let mut packed = Vec::new();
        let (mut bin, mut w) = (Vec::new(), 0u64);
        for (i, &x) in weights.iter().enumerate() {
            if w + x > target && !bin.is_empty() {
                packed.push(core::mem::take(&mut bin));
                w = 0;
            }
            w += x;
            bin.push(i);
        }
        if !bin.is_empty() {
            packed.push(bin);
        }
        packed
    }

    #[test]
    fn packing_matches_the_clients_rule() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for round in 0..300 {
            let n = next(40) as usize;
            let (target, open) = (100 + next(200), 1 + next(60));
            // Append table: one unit per file, in ADD order (positions shuffled against the
            // names, so the order must come from the positions).
            let mut files: Vec<DataFile> = (0..n)
                .map(|i| {
                    let mut f = file(&alloc::format!("f{i:03}"), None, 1, 1);
                    f.file_size = next(250) as i64;
                    f.position.entry = next(1000) as u32;
                    f.position.block = i as u64;
                    f
                })
                .collect();
            let (order, units) = super::units(false, false, &files);
            let mut by_add: Vec<usize> = (0..n).collect();
            by_add.sort_by_key(|&i| files[i].position);
            assert_eq!(order, by_add);
            let got: Vec<Vec<usize>> = pack(&files, &order, &units, (target, open), false)
                .into_iter()
                .map(|(p, g)| {
                    assert!(g.is_empty());
                    p.to_vec()
                })
                .collect();
            let weights: Vec<u64> = by_add
                .iter()
                .map(|&i| (files[i].file_size as u64).max(open))
                .collect();
            let want: Vec<Vec<usize>> = model(&weights, target)
                .into_iter()
                .map(|b| b.into_iter().map(|k| by_add[k]).collect())
                .collect();
            assert_eq!(got, want, "round {round}");

            // Data-evolution table: merge groups are the units, weighed by their sum.
            for (i, f) in files.iter_mut().enumerate() {
                f.first_row_id = Some((i / 3 * 10) as i64);
                f.row_count = 10;
            }
            let (order, units) = super::units(true, false, &files);
            let packs = pack(&files, &order, &units, (target, open), true);
            let weights: Vec<u64> = units
                .iter()
                .map(|u| {
                    let s: u64 = order[u.clone()]
                        .iter()
                        .map(|&i| files[i].file_size as u64)
                        .sum();
                    s.max(open)
                })
                .collect();
            let want = model(&weights, target);
            assert_eq!(packs.len(), want.len(), "round {round}");
            for ((files_of, groups), unit_ids) in packs.iter().zip(&want) {
                let expect: Vec<usize> = unit_ids
                    .iter()
                    .flat_map(|&u| order[units[u].clone()].iter().copied())
                    .collect();
                assert_eq!(files_of.to_vec(), expect, "round {round}");
                let sizes: Vec<usize> = groups.iter().map(|g| g.len()).collect();
                let want_sizes: Vec<usize> = unit_ids.iter().map(|&u| units[u].len()).collect();
                assert_eq!(sizes, want_sizes, "round {round}");
            }
        }
        // A primary-key bucket is read file by file (and packed like an append table's) only
        // without level-0 files or deleted rows, and with deletion vectors, the first-row
        // engine or a single level.
        let at = |level: i32, deleted: Option<i64>| DataFile {
            level,
            delete_row_count: deleted,
            ..DataFile::default()
        };
        assert!(raw_files(false, &[at(1, None), at(1, Some(0))]));
        assert!(!raw_files(false, &[at(1, None), at(2, None)]));
        assert!(raw_files(true, &[at(1, None), at(2, None)]));
        assert!(!raw_files(true, &[at(0, None), at(2, None)]));
        assert!(!raw_files(true, &[at(1, Some(3)), at(2, None)]));
        // A primary-key bucket that must be merged stays whole.
        let files: Vec<DataFile> = (0..5)
            .map(|i| file(&alloc::format!("k{i}"), None, 1, 1))
            .collect();
        let (order, units) = super::units(false, true, &files);
        assert_eq!(pack(&files, &order, &units, (1, 1), false).len(), 1);
    }

    #[test]
    fn the_anchor_is_the_oldest_normal_file() {
        let files = [
            file("z.parquet", Some(0), 10, 3),
            file("old.blob", Some(0), 10, 1),
            file("y.parquet", Some(0), 10, 2),
            file("x.parquet", Some(0), 10, 2),
        ];
        assert_eq!(
            anchor_file(&files).map(|f| &*f.file_name),
            Some("x.parquet")
        );
        assert!(anchor_file(&files[1..2]).is_none());
    }
}
