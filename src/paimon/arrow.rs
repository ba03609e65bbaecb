//! A scan plan as Arrow (features `paimon` and `arrow`): one row per live data file, with
//! the typed partition as a struct column, written as an Arrow IPC file or stream
//! (`lakecore scan --arrow`). The columns and their names are those of the Python
//! package's `Table.plan()`.
//!
//! ```
//! use lakecore::paimon::{arrow::plan_batch, ScanOptions, ScanQuery, SnapshotSpec, Table};
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs");
//! let table = Table::open(dir)?;
//! let query = ScanQuery::default();
//! let prepared = table.prepare_snapshot(&SnapshotSpec::Latest, &query, ScanOptions::default())?;
//! let plan = prepared.run(|_, _| {})?;
//! // The schema types the partition column and makes the paths.
//! let batch = plan_batch(&table, prepared.schema(), &plan)?;
//! assert_eq!(batch.num_rows(), plan.files.len());
//! assert_eq!(batch.schema().field(0).name(), "file_name");
//! # Ok::<(), lakecore::paimon::ScanError>(())
//! ```

use super::{DataFile, PartitionType, ScanError, ScanPlan, Table, TableSchema};
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Float32Builder,
    Float64Builder, Int16Builder, Int32Builder, Int64Builder, Int8Builder, ListBuilder,
    StringBuilder, TimestampMillisecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};

fn query(message: impl Into<String>) -> ScanError {
    ScanError::Query(message.into())
}

/// One builder per partition key type.
enum Key {
    Bool(BooleanBuilder),
    I8(Int8Builder),
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    F32(Float32Builder),
    F64(Float64Builder),
    Date(Date32Builder),
    Decimal(Decimal128Builder),
    Str(StringBuilder),
    Bin(BinaryBuilder),
    /// A key of a type lakecore does not decode: null, as in `TableSchema::partition_values`.
    Unsupported(StringBuilder),
}

impl Key {
    fn new(ty: PartitionType) -> Result<Key, ScanError> {
        Ok(match ty {
            PartitionType::Boolean => Key::Bool(BooleanBuilder::new()),
            PartitionType::TinyInt => Key::I8(Int8Builder::new()),
            PartitionType::SmallInt => Key::I16(Int16Builder::new()),
            PartitionType::Int => Key::I32(Int32Builder::new()),
            PartitionType::BigInt => Key::I64(Int64Builder::new()),
            PartitionType::Float => Key::F32(Float32Builder::new()),
            PartitionType::Double => Key::F64(Float64Builder::new()),
            PartitionType::Date => Key::Date(Date32Builder::new()),
            PartitionType::Decimal { scale } => {
                let s = i8::try_from(scale).map_err(|_| query("decimal scale above 18"))?;
                let b = Decimal128Builder::new()
                    .with_precision_and_scale(38, s)
                    .map_err(|e| query(e.to_string()))?;
                Key::Decimal(b)
            }
            PartitionType::String => Key::Str(StringBuilder::new()),
            PartitionType::Unsupported => Key::Unsupported(StringBuilder::new()),
            PartitionType::Binary => Key::Bin(BinaryBuilder::new()),
        })
    }

    /// Appends field `i` of `row` (null when the row says so, or for a type read as text
    /// that cannot be).
    fn push(&mut self, row: &crate::sidecar::BinaryRow<'_>, i: u32) -> crate::Result<()> {
        let null = row.is_null(i)?;
        match self {
            Key::Bool(b) => b.append_option(if null { None } else { row.get_bool(i)? }),
            Key::I8(b) => b.append_option(if null { None } else { row.get_i8(i)? }),
            Key::I16(b) => b.append_option(if null { None } else { row.get_i16(i)? }),
            Key::I32(b) => b.append_option(if null { None } else { row.get_i32(i)? }),
            Key::I64(b) => b.append_option(if null { None } else { row.get_i64(i)? }),
            Key::F32(b) => b.append_option(if null { None } else { row.get_f32(i)? }),
            Key::F64(b) => b.append_option(if null { None } else { row.get_f64(i)? }),
            Key::Date(b) => b.append_option(if null { None } else { row.get_date(i)? }),
            Key::Decimal(b) => b.append_option(if null {
                None
            } else {
                row.get_decimal_compact(i)?.map(i128::from)
            }),
            Key::Str(b) => b.append_option(if null { None } else { row.get_str(i)? }),
            Key::Bin(b) => b.append_option(if null { None } else { row.get_bytes(i)? }),
            Key::Unsupported(b) => b.append_null(),
        }
        Ok(())
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Key::Bool(b) => Arc::new(b.finish()),
            Key::I8(b) => Arc::new(b.finish()),
            Key::I16(b) => Arc::new(b.finish()),
            Key::I32(b) => Arc::new(b.finish()),
            Key::I64(b) => Arc::new(b.finish()),
            Key::F32(b) => Arc::new(b.finish()),
            Key::F64(b) => Arc::new(b.finish()),
            Key::Date(b) => Arc::new(b.finish()),
            Key::Decimal(b) => Arc::new(b.finish()),
            Key::Str(b) => Arc::new(b.finish()),
            Key::Bin(b) => Arc::new(b.finish()),
            Key::Unsupported(b) => Arc::new(b.finish()),
        }
    }
}

/// Whether two files have the same partition: the same allocation (the files of a
/// manifest's run share one) or equal bytes.
fn same_partition(a: &Arc<[u8]>, b: &Arc<[u8]>) -> bool {
    Arc::ptr_eq(a, b) || a == b
}

/// The `partition` column: a struct of the partition keys, typed through `schema` (an
/// empty struct without a schema).
fn partition_column(
    schema: Option<&TableSchema>,
    files: &[DataFile],
) -> Result<ArrayRef, ScanError> {
    let keys: &[(String, PartitionType)] = schema.map_or(&[], |s| s.partition_keys.as_slice());
    let mut builders = keys
        .iter()
        .map(|(_, ty)| Key::new(*ty))
        .collect::<Result<Vec<_>, _>>()?;
    if builders.is_empty() {
        return Ok(Arc::new(StructArray::new_empty_fields(files.len(), None)));
    }
    // Files of one partition come together in a plan: parse each partition once.
    let mut last: Option<(&Arc<[u8]>, crate::sidecar::BinaryRow<'_>)> = None;
    for f in files {
        let bad = |e: crate::Error| {
            query(alloc::format!(
                "data file {}: its partition bytes are invalid ({e})",
                f.file_name
            ))
        };
        let row = match &last {
            Some((bytes, row)) if same_partition(bytes, &f.partition) => row,
            _ => {
                let row =
                    crate::sidecar::BinaryRow::from_partition(&f.partition, 0).map_err(bad)?;
                &last.insert((&f.partition, row)).1
            }
        };
        for (b, i) in builders.iter_mut().zip(0u32..) {
            b.push(row, i).map_err(bad)?;
        }
    }
    let arrays: Vec<ArrayRef> = builders.iter_mut().map(Key::finish).collect();
    let fields: Fields = keys
        .iter()
        .zip(&arrays)
        .map(|((name, _), a)| Field::new(name, a.data_type().clone(), true))
        .collect();
    Ok(match arrays.is_empty() {
        true => Arc::new(StructArray::new_empty_fields(files.len(), None)),
        false => {
            Arc::new(StructArray::try_new(fields, arrays, None).map_err(|e| query(e.to_string()))?)
        }
    })
}

fn strings<'a>(
    b: &mut ListBuilder<StringBuilder>,
    items: Option<impl Iterator<Item = &'a String>>,
) {
    match items {
        Some(items) => {
            for s in items {
                b.values().append_value(s);
            }
            b.append(true);
        }
        None => b.append(false),
    }
}

/// The most string bytes one batch holds: Arrow's `string` columns address their data with
/// 32-bit offsets, so a plan whose names and paths pass 2 GiB (some 20 M files) needs
/// several batches. Half the limit, for a margin no single file can exceed.
const BATCH_STRING_BYTES: usize = 1 << 30;

/// Plans with at least this many files build their batches on the planner's rayon pool,
/// one contiguous share of the files per thread (fewer: waking a thread costs more).
const PARALLEL_FILES: usize = 16_384;

/// The plan as one record batch, a row per live file in plan order: `file_name`, `path`
/// (the full path, `None` without a schema), `partition` (struct, typed through `schema`),
/// `bucket`, `total_buckets`, `row_count`, `file_size`, `first_row_id`,
/// `min_sequence_number`, `max_sequence_number`, `schema_id`, `level`, `creation_time`
/// (timestamp, ms), `delete_row_count`, `file_source`, `external_path`, `write_cols`,
/// `extra_files` (lists of strings). Errors: a partition that does not decode through the
/// schema ([`ScanError::Query`], naming the file); a plan with more than 1 GiB of names
/// and paths, which one batch cannot address (use [`plan_batches`]).
pub fn plan_batch(
    table: &Table,
    schema: Option<&TableSchema>,
    plan: &ScanPlan,
) -> Result<RecordBatch, ScanError> {
    let mut batches = Batches::new(table, schema, plan.snapshot).build(&plan.files)?;
    match batches.len() {
        1 => Ok(batches.remove(0)),
        n => Err(query(alloc::format!(
            "the plan's {} files have more than 1 GiB of names and paths, which one Arrow batch \
             cannot address; build it as {n} batches with plan_batches",
            plan.files.len()
        ))),
    }
}

/// The plan as record batches of [`plan_batch`]'s columns, in plan order: built in
/// parallel, one share of the files per thread of the planner's pool for plans of 16,384
/// files or more, and cut wherever a batch would pass 1 GiB of strings. Always at least one
/// batch (empty for an empty plan), so the schema is there. Errors as [`plan_batch`]'s.
///
/// ```
/// use lakecore::paimon::{arrow::plan_batches, ScanQuery, Table};
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs");
/// let table = Table::open(dir)?;
/// let plan = table.plan(None, &ScanQuery::default())?;
/// let batches = plan_batches(&table, None, &plan)?;
/// let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
/// assert_eq!(rows, plan.files.len());
/// # Ok::<(), lakecore::paimon::ScanError>(())
/// ```
pub fn plan_batches(
    table: &Table,
    schema: Option<&TableSchema>,
    plan: &ScanPlan,
) -> Result<Vec<RecordBatch>, ScanError> {
    use rayon::prelude::*;
    let files = &plan.files;
    let shares = match files.len() >= PARALLEL_FILES {
        true => rayon::current_num_threads().max(1),
        false => 1,
    };
    let each = files.len().div_ceil(shares).max(1);
    let built: Vec<Result<Vec<RecordBatch>, ScanError>> = files
        .par_chunks(each)
        .map(|share| Batches::new(table, schema, plan.snapshot).build(share))
        .collect();
    let mut out = Vec::new();
    for share in built {
        out.extend(share?);
    }
    if out.is_empty() {
        out = Batches::new(table, schema, plan.snapshot).build(&[])?;
    }
    Ok(out)
}

/// The column builders of one batch, and what they share across batches.
struct Batches<'t> {
    table: &'t Table,
    schema: Option<&'t TableSchema>,
    snapshot: Option<u64>,
    /// The most string bytes in a batch ([`BATCH_STRING_BYTES`]; less in tests).
    budget: usize,
}

/// One batch's builders.
struct Builders {
    file_name: StringBuilder,
    path: StringBuilder,
    i32s: [Int32Builder; 4],
    i64s: [Int64Builder; 7],
    creation_time: TimestampMillisecondBuilder,
    external_path: StringBuilder,
    write_cols: ListBuilder<StringBuilder>,
    extra_files: ListBuilder<StringBuilder>,
}

impl Builders {
    fn new(n: usize, name_bytes: usize, path_bytes: usize) -> Builders {
        Builders {
            file_name: StringBuilder::with_capacity(n, name_bytes),
            path: StringBuilder::with_capacity(n, path_bytes),
            i32s: core::array::from_fn(|_| Int32Builder::with_capacity(n)),
            i64s: core::array::from_fn(|_| Int64Builder::with_capacity(n)),
            creation_time: TimestampMillisecondBuilder::with_capacity(n),
            external_path: StringBuilder::with_capacity(n, 0),
            write_cols: ListBuilder::with_capacity(StringBuilder::new(), n),
            extra_files: ListBuilder::with_capacity(StringBuilder::new(), n),
        }
    }

    /// Appends every column but `path` and `partition`.
    fn push(&mut self, f: &DataFile) {
        self.file_name.append_value(&f.file_name);
        let [bucket, total, level, source] = &mut self.i32s;
        bucket.append_value(f.bucket);
        total.append_value(f.total_buckets);
        level.append_value(f.level);
        source.append_option(f.file_source);
        let [rows, size, first, min_seq, max_seq, schema_id, deleted] = &mut self.i64s;
        rows.append_value(f.row_count);
        size.append_value(f.file_size);
        first.append_option(f.first_row_id);
        min_seq.append_value(f.min_sequence_number);
        max_seq.append_value(f.max_sequence_number);
        schema_id.append_value(f.schema_id);
        deleted.append_option(f.delete_row_count);
        self.creation_time.append_option(f.creation_time);
        self.external_path.append_option(f.external_path.as_deref());
        strings(
            &mut self.write_cols,
            f.write_cols.as_ref().map(|c| c.iter()),
        );
        strings(&mut self.extra_files, Some(f.extra_files.iter()));
    }
}

/// The string bytes `f` adds to a batch, besides its path's directory: its name (twice:
/// `file_name` and `path`), external path, list items and partition bytes (which hold any
/// string partition value).
fn string_bytes(f: &DataFile) -> usize {
    let lists: usize = f
        .write_cols
        .iter()
        .flatten()
        .map(String::len)
        .sum::<usize>()
        + f.extra_files.iter().map(String::len).sum::<usize>();
    2 * f.file_name.len()
        + f.external_path.as_ref().map_or(0, |p| p.len())
        + lists
        + f.partition.len()
}

impl<'t> Batches<'t> {
    fn new(table: &'t Table, schema: Option<&'t TableSchema>, snapshot: Option<u64>) -> Self {
        Batches {
            table,
            schema,
            snapshot,
            budget: BATCH_STRING_BYTES,
        }
    }

    /// `files` as one batch, or several where one would pass [`BATCH_STRING_BYTES`].
    fn build(&self, files: &[DataFile]) -> Result<Vec<RecordBatch>, ScanError> {
        let n = files.len();
        let names: usize = files.iter().map(|f| f.file_name.len()).sum();
        // Files of one bucket share their directory (and the plan lists them together). The
        // first file's also sizes the path column; a partition that fails here fails again,
        // with its error, in the loop.
        let mut dir: Option<(&Arc<[u8]>, i32, String)> = match (self.schema, files.first()) {
            (Some(s), Some(f)) => (self.table.bucket_dir(s, &f.partition, f.bucket).ok())
                .map(|d| (&f.partition, f.bucket, d)),
            _ => None,
        };
        let dir_bytes = match (&dir, self.schema.is_some() && n > 0) {
            (Some((_, _, d)), _) => d.len() + 8,
            (None, true) => 64,
            (None, false) => 0,
        };
        let room = |names: usize| names.min(self.budget);
        let mut b = Builders::new(n, room(names), room(names + n * dir_bytes));
        let mut out = Vec::new();
        let (mut start, mut used) = (0, 0usize);
        for (i, f) in files.iter().enumerate() {
            let d = match (self.schema, &f.external_path) {
                (Some(s), None) => Some(match &dir {
                    Some((p, b, d)) if *b == f.bucket && same_partition(p, &f.partition) => {
                        d.as_str()
                    }
                    _ => {
                        let d = self
                            .table
                            .bucket_dir(s, &f.partition, f.bucket)
                            .map_err(|e| {
                                query(alloc::format!(
                                    "data file {}: its partition is invalid ({e})",
                                    f.file_name
                                ))
                            })?;
                        dir.insert((&f.partition, f.bucket, d)).2.as_str()
                    }
                }),
                _ => None,
            };
            let adds = string_bytes(f).saturating_add(d.map_or(0, str::len));
            if adds > self.budget {
                return Err(query(alloc::format!(
                    "data file {}: its names and paths take {adds} bytes, more than an Arrow \
                     batch addresses",
                    f.file_name
                )));
            }
            if used + adds > self.budget {
                let rest = n - i;
                let full_batch = core::mem::replace(&mut b, Builders::new(rest, 0, 0));
                out.push(self.finish(full_batch, files.get(start..i).unwrap_or_default())?);
                (start, used) = (i, 0);
            }
            used += adds;
            b.push(f);
            match (self.schema, &f.external_path, d) {
                (None, _, _) => b.path.append_null(),
                (Some(_), Some(external), _) => b.path.append_value(external),
                (Some(_), None, d) => {
                    // Directory and name written straight into the column's data, then the
                    // row closed: no intermediate string.
                    use core::fmt::Write;
                    let _ = b.path.write_str(d.unwrap_or_default());
                    let _ = b.path.write_str(&f.file_name);
                    b.path.append_value("");
                }
            }
        }
        if start < n || out.is_empty() {
            out.push(self.finish(b, files.get(start..).unwrap_or_default())?);
        }
        Ok(out)
    }

    /// The batch of `files` from their builders.
    fn finish(&self, b: Builders, files: &[DataFile]) -> Result<RecordBatch, ScanError> {
        let Builders {
            mut file_name,
            mut path,
            i32s,
            i64s,
            mut creation_time,
            mut external_path,
            mut write_cols,
            mut extra_files,
        } = b;
        let [mut bucket, mut total, mut level, mut source] = i32s;
        let [mut rows, mut size, mut first, mut min_seq, mut max_seq, mut schema_id, mut deleted] =
            i64s;
        let columns: Vec<(&str, ArrayRef)> = alloc::vec![
            ("file_name", Arc::new(file_name.finish()) as ArrayRef),
            ("path", Arc::new(path.finish())),
            ("partition", partition_column(self.schema, files)?),
            ("bucket", Arc::new(bucket.finish())),
            ("total_buckets", Arc::new(total.finish())),
            ("row_count", Arc::new(rows.finish())),
            ("file_size", Arc::new(size.finish())),
            ("first_row_id", Arc::new(first.finish())),
            ("min_sequence_number", Arc::new(min_seq.finish())),
            ("max_sequence_number", Arc::new(max_seq.finish())),
            ("schema_id", Arc::new(schema_id.finish())),
            ("level", Arc::new(level.finish())),
            ("creation_time", Arc::new(creation_time.finish())),
            ("delete_row_count", Arc::new(deleted.finish())),
            ("file_source", Arc::new(source.finish())),
            ("external_path", Arc::new(external_path.finish())),
            ("write_cols", Arc::new(write_cols.finish())),
            ("extra_files", Arc::new(extra_files.finish())),
        ];
        let fields: Vec<Field> = columns
            .iter()
            .map(|(name, a)| {
                let nullable = !matches!(
                    *name,
                    "file_name" | "bucket" | "total_buckets" | "row_count" | "file_size"
                );
                Field::new(*name, a.data_type().clone(), nullable)
            })
            .collect();
        let mut meta = std::collections::HashMap::new();
        if let Some(id) = self.snapshot {
            meta.insert("lakecore.snapshot".to_string(), id.to_string());
        }
        let schema = Arc::new(Schema::new_with_metadata(fields, meta));
        RecordBatch::try_new(schema, columns.into_iter().map(|(_, a)| a).collect())
            .map_err(|e| query(e.to_string()))
    }
}

/// Writes `batches` (one schema) as an Arrow IPC file (`stream == false`: the random-access
/// format with its footer, what `pyarrow.ipc.open_file` reads) or stream (`stream == true`:
/// what `pyarrow.ipc.open_stream` reads, e.g. from a pipe) to `out`. Nothing is written for
/// no batches (there is no schema).
pub fn write_ipc(
    batches: &[RecordBatch],
    out: impl std::io::Write,
    stream: bool,
) -> Result<(), arrow_schema::ArrowError> {
    let Some(first) = batches.first() else {
        return Ok(());
    };
    let schema = first.schema();
    if stream {
        let mut w = arrow_ipc::writer::StreamWriter::try_new(out, &schema)?;
        for b in batches {
            w.write(b)?;
        }
        w.finish()
    } else {
        let mut w = arrow_ipc::writer::FileWriter::try_new(out, &schema)?;
        for b in batches {
            w.write(b)?;
        }
        w.finish()
    }
}

/// The [`DataType`] of the `partition` column for `schema` (a struct of its keys).
pub fn partition_type(schema: &TableSchema) -> Result<DataType, ScanError> {
    let col = partition_column(Some(schema), &[])?;
    Ok(col.data_type().clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, StringArray};

    /// Test table `name` of `sc.db`, its full plan and the plan's schema.
    fn planned(name: &str) -> (Table, ScanPlan, TableSchema) {
        let dir = std::format!(
            "{}/tests/data/paimon/warehouse/sc.db/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let t = Table::open(&dir).unwrap();
        let plan = t.plan(None, &super::super::ScanQuery::default()).unwrap();
        let snapshot = t.snapshot(plan.snapshot.unwrap()).unwrap();
        let schema = t.schema(snapshot.schema_id).unwrap();
        (t, plan, schema)
    }

    /// The batch's `path` and `partition` columns (built with a directory and a parsed
    /// partition reused across the files of a bucket) equal what each file gives alone.
    #[test]
    fn paths_and_partitions_equal_the_per_file_forms() {
        for table in ["part_append_rs", "bucket4_rs"] {
            let (t, plan, schema) = planned(table);
            let batch = plan_batch(&t, Some(&schema), &plan).unwrap();
            let paths = batch
                .column_by_name("path")
                .unwrap()
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            assert!(plan.files.len() > 10, "{table}");
            let mut dirs = std::collections::BTreeSet::new();
            for (i, f) in plan.files.iter().enumerate() {
                let alone = t.data_file_path(&schema, f).unwrap();
                assert_eq!(paths.value(i), alone, "{table} file {i}");
                dirs.insert(alone.rsplit_once('/').unwrap().0.to_string());
            }
            assert!(dirs.len() > 1, "{table}: one directory only");
            let partition = batch.column_by_name("partition").unwrap();
            let one_by_one: Vec<ArrayRef> = plan
                .files
                .iter()
                .map(|f| {
                    let single = ScanPlan {
                        snapshot: plan.snapshot,
                        files: alloc::vec![f.clone()],
                        stats: plan.stats,
                    };
                    let b = plan_batch(&t, Some(&schema), &single).unwrap();
                    b.column_by_name("partition").unwrap().clone()
                })
                .collect();
            for (i, single) in one_by_one.iter().enumerate() {
                assert_eq!(&partition.slice(i, 1), single, "{table} file {i}");
            }
        }
    }

    /// Batches cut by the string budget, and the parallel shares of a large plan, hold the
    /// rows of the one batch, in order; a file above the budget is an error, not a panic.
    #[test]
    fn batches_split_by_budget_and_share_equal_one_batch() {
        use arrow_array::cast::AsArray;
        let (t, plan, schema) = planned("part_append_rs");
        let whole = plan_batch(&t, Some(&schema), &plan).unwrap();
        let concat = |batches: &[RecordBatch]| {
            arrow_select::concat::concat_batches(&whole.schema(), batches).unwrap()
        };
        let string_bytes = |b: &RecordBatch| -> usize {
            ["file_name", "path"]
                .iter()
                .map(|c| {
                    b.column_by_name(c)
                        .unwrap()
                        .as_string::<i32>()
                        .values()
                        .len()
                })
                .sum()
        };
        for budget in [600, 2_000, 50_000] {
            let mut cut = Batches::new(&t, Some(&schema), plan.snapshot);
            cut.budget = budget;
            let batches = cut.build(&plan.files).unwrap();
            assert!(batches.len() > 1 || budget == 50_000, "budget {budget}");
            for b in &batches {
                assert!(
                    b.num_rows() > 0 && string_bytes(b) <= budget,
                    "budget {budget}"
                );
            }
            assert_eq!(concat(&batches), whole, "budget {budget}");
        }
        let mut tiny = Batches::new(&t, Some(&schema), plan.snapshot);
        tiny.budget = 40;
        let e = tiny.build(&plan.files).unwrap_err();
        assert!(e.to_string().contains(&*plan.files[0].file_name), "{e}");
        // Above PARALLEL_FILES: one share per pool thread, same rows as one batch.
        let mut many = plan.files.clone();
        while many.len() < PARALLEL_FILES + 3 {
            let more: Vec<DataFile> = plan
                .files
                .iter()
                .cloned()
                .map(|mut f| {
                    f.file_name = std::format!("{}-{}", many.len(), f.file_name).into();
                    f
                })
                .collect();
            many.extend(more);
        }
        let big = ScanPlan {
            snapshot: plan.snapshot,
            files: many,
            stats: plan.stats,
        };
        let one = plan_batch(&t, Some(&schema), &big).unwrap();
        let shares = plan_batches(&t, Some(&schema), &big).unwrap();
        assert_eq!(shares.len(), rayon::current_num_threads().max(1));
        assert_eq!(
            arrow_select::concat::concat_batches(&one.schema(), &shares).unwrap(),
            one
        );
        // An empty plan: one empty batch with the schema.
        let empty = ScanPlan {
            snapshot: plan.snapshot,
            files: Vec::new(),
            stats: plan.stats,
        };
        let none = plan_batches(&t, Some(&schema), &empty).unwrap();
        assert_eq!((none.len(), none[0].num_rows()), (1, 0));
        assert_eq!(none[0].schema(), whole.schema());
    }
}
