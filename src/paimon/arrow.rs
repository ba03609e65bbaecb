//! A scan plan as Arrow (features `paimon` and `arrow`): one row per live data file, with
//! the typed partition as a struct column, written as an Arrow IPC file or stream
//! (`lakecore scan --arrow`). The columns and their names are those of the Python
//! package's `Table.plan()`.
//!
//! ```
//! use lakecore::paimon::{arrow::plan_batch, ScanQuery, Table};
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs");
//! let table = Table::open(dir)?;
//! let plan = table.plan(None, &ScanQuery::default())?;
//! let schema = plan.snapshot.map(|id| table.snapshot(id)).transpose()?
//!     .map(|s| table.schema(s.schema_id)).transpose()?;
//! let batch = plan_batch(&table, schema.as_ref(), &plan)?;
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
                    .with_precision_and_scale(18, s)
                    .map_err(|e| query(e.to_string()))?;
                Key::Decimal(b)
            }
            PartitionType::String | PartitionType::Unsupported => Key::Str(StringBuilder::new()),
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
        }
    }
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
    let mut last: Option<(&[u8], crate::sidecar::BinaryRow<'_>)> = None;
    for f in files {
        let bad = |e: crate::Error| {
            query(alloc::format!(
                "data file {}: its partition bytes are invalid ({e})",
                f.file_name
            ))
        };
        let row = match &last {
            Some((bytes, row)) if *bytes == &*f.partition => row,
            _ => {
                let row =
                    crate::sidecar::BinaryRow::from_partition(&f.partition, 0).map_err(bad)?;
                &last.insert((&*f.partition, row)).1
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

/// The plan as one record batch, a row per live file in plan order: `file_name`, `path`
/// (the full path, `None` without a schema), `partition` (struct, typed through `schema`),
/// `bucket`, `total_buckets`, `row_count`, `file_size`, `first_row_id`,
/// `min_sequence_number`, `max_sequence_number`, `schema_id`, `level`, `creation_time`
/// (timestamp, ms), `delete_row_count`, `file_source`, `external_path`, `write_cols`,
/// `extra_files` (lists of strings). Errors: a partition that does not decode through the
/// schema ([`ScanError::Query`], naming the file).
pub fn plan_batch(
    table: &Table,
    schema: Option<&TableSchema>,
    plan: &ScanPlan,
) -> Result<RecordBatch, ScanError> {
    let files = &plan.files;
    let n = files.len();
    let mut file_name = StringBuilder::with_capacity(n, n * 48);
    // Files of one bucket share their directory (and the plan lists them together).
    let mut dir: Option<(&[u8], i32, String)> = None;
    let mut full = String::new();
    let path_bytes = match (schema, files.first()) {
        (Some(s), Some(f)) => table.data_file_path(s, f).map_or(96, |p| p.len() + 8),
        _ => 0,
    };
    let mut path = StringBuilder::with_capacity(n, n * path_bytes);
    let mut i32s: [Int32Builder; 4] = core::array::from_fn(|_| Int32Builder::with_capacity(n));
    let mut i64s: [Int64Builder; 7] = core::array::from_fn(|_| Int64Builder::with_capacity(n));
    let mut creation_time = TimestampMillisecondBuilder::with_capacity(n);
    let mut external_path = StringBuilder::with_capacity(n, 0);
    let mut write_cols = ListBuilder::with_capacity(StringBuilder::new(), n);
    let mut extra_files = ListBuilder::with_capacity(StringBuilder::new(), n);
    for f in files {
        file_name.append_value(&f.file_name);
        match (schema, &f.external_path) {
            (None, _) => path.append_null(),
            (Some(_), Some(external)) => path.append_value(external),
            (Some(s), None) => {
                let d = match &dir {
                    Some((p, b, d)) if *p == &*f.partition && *b == f.bucket => d,
                    _ => {
                        let d = table.bucket_dir(s, &f.partition, f.bucket).map_err(|e| {
                            query(alloc::format!(
                                "data file {}: its partition is invalid ({e})",
                                f.file_name
                            ))
                        })?;
                        &dir.insert((&*f.partition, f.bucket, d)).2
                    }
                };
                full.clear();
                full.push_str(d);
                full.push_str(&f.file_name);
                path.append_value(&full);
            }
        }
        let [bucket, total, level, source] = &mut i32s;
        bucket.append_value(f.bucket);
        total.append_value(f.total_buckets);
        level.append_value(f.level);
        source.append_option(f.file_source);
        let [rows, size, first, min_seq, max_seq, schema_id, deleted] = &mut i64s;
        rows.append_value(f.row_count);
        size.append_value(f.file_size);
        first.append_option(f.first_row_id);
        min_seq.append_value(f.min_sequence_number);
        max_seq.append_value(f.max_sequence_number);
        schema_id.append_value(f.schema_id);
        deleted.append_option(f.delete_row_count);
        creation_time.append_option(f.creation_time);
        external_path.append_option(f.external_path.as_deref());
        strings(&mut write_cols, f.write_cols.as_ref().map(|c| c.iter()));
        strings(&mut extra_files, Some(f.extra_files.iter()));
    }
    let [mut bucket, mut total, mut level, mut source] = i32s;
    let [mut rows, mut size, mut first, mut min_seq, mut max_seq, mut schema_id, mut deleted] =
        i64s;
    let columns: Vec<(&str, ArrayRef)> = alloc::vec![
        ("file_name", Arc::new(file_name.finish()) as ArrayRef),
        ("path", Arc::new(path.finish())),
        ("partition", partition_column(schema, files)?),
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
    if let Some(id) = plan.snapshot {
        meta.insert("lakecore.snapshot".to_string(), id.to_string());
    }
    let schema = Arc::new(Schema::new_with_metadata(fields, meta));
    RecordBatch::try_new(schema, columns.into_iter().map(|(_, a)| a).collect())
        .map_err(|e| query(e.to_string()))
}

/// Writes `batch` as an Arrow IPC file (`stream == false`: the random-access format with
/// its footer, what `pyarrow.ipc.open_file` reads) or stream (`stream == true`: what
/// `pyarrow.ipc.open_stream` reads, e.g. from a pipe) to `out`.
pub fn write_ipc(
    batch: &RecordBatch,
    out: impl std::io::Write,
    stream: bool,
) -> Result<(), arrow_schema::ArrowError> {
    let schema = batch.schema();
    if stream {
        let mut w = arrow_ipc::writer::StreamWriter::try_new(out, &schema)?;
        w.write(batch)?;
        w.finish()
    } else {
        let mut w = arrow_ipc::writer::FileWriter::try_new(out, &schema)?;
        w.write(batch)?;
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

    /// The batch's `path` and `partition` columns (built with a directory and a parsed
    /// partition reused across the files of a bucket) equal what each file gives alone.
    #[test]
    fn paths_and_partitions_equal_the_per_file_forms() {
        for table in ["part_append_rs", "bucket4_rs"] {
            let dir = std::format!(
                "{}/tests/data/paimon/warehouse/sc.db/{table}",
                env!("CARGO_MANIFEST_DIR")
            );
            let t = Table::open(&dir).unwrap();
            let plan = t.plan(None, &super::super::ScanQuery::default()).unwrap();
            let snapshot = t.snapshot(plan.snapshot.unwrap()).unwrap();
            let schema = t.schema(snapshot.schema_id).unwrap();
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
}
