//! `lakecore._lakecore`: the PyO3 extension module behind the Python package `lakecore`.
//!
//! The module does the work (planning, sidecar selection, BLOB merges) with the GIL released.
//! Plans come back as arrow-rs record batches through the Arrow C data interface (PyCapsules
//! pyarrow imports without a copy); BLOB columns as buffers lent in place, which the
//! pure-Python layer (`lakecore/__init__.py`) wraps with `Array.from_buffers` (no per-row
//! Python objects) next to the `.blob` files it maps itself. That layer also raises the
//! typed exceptions.
//! Users call the Python layer, not this module.

use arrow_array::{Array, RecordBatch, StructArray};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use lakecore::paimon::blob::descriptor::{decode, DescriptorColumnRead};
use lakecore::paimon::blob::{column_kind, BlobColumnRead, BlobReadError, ColumnKind, ReadOptions};
use lakecore::paimon::{
    Filter, ScanError, ScanOptions, ScanPlan, ScanQuery, SnapshotSpec, Table,
    DEFAULT_PARTITION_NAME,
};
use lakecore::select::RowRange;
use lakecore::sidecar::Sidecar;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyDict, PyList, PyTuple};
use std::collections::HashMap;
use std::path::PathBuf;

// ---------------------------------------------------------------------------------------
// Errors: built without the GIL, raised as `lakecore.InvalidData` / `lakecore.IoError` /
// `ValueError` by `raise`.

/// An error of a call, before it becomes a Python exception.
#[derive(Debug)]
enum Fail {
    /// Bytes or metadata that are not what the format says: `lakecore.InvalidData`.
    Invalid {
        message: String,
        kind: String,
        offset: Option<u64>,
        path: Option<String>,
    },
    /// A file that could not be read: `lakecore.IoError`.
    Io {
        message: String,
        kind: String,
        path: Option<String>,
    },
    /// A query or argument the table does not accept: `ValueError`.
    Value(String),
}

impl Fail {
    fn invalid(path: Option<String>, context: &str, e: lakecore::Error) -> Fail {
        Fail::Invalid {
            message: format!("{context}: invalid input: {e}"),
            kind: e.kind.name().to_string(),
            offset: Some(e.offset),
            path,
        }
    }
}

impl From<ScanError> for Fail {
    fn from(e: ScanError) -> Fail {
        let message = e.to_string();
        match e {
            ScanError::Io { path, error } => Fail::Io {
                message,
                kind: error.kind().to_string(),
                path: Some(path.display().to_string()),
            },
            ScanError::Invalid { path, error } => Fail::Invalid {
                message,
                kind: error.kind.name().to_string(),
                offset: Some(error.offset),
                path: Some(path.display().to_string()),
            },
            ScanError::Metadata { path, .. } => Fail::Invalid {
                message,
                kind: "metadata".into(),
                offset: None,
                path: Some(path.display().to_string()),
            },
            ScanError::Query(m) => Fail::Value(m),
        }
    }
}

impl From<BlobReadError> for Fail {
    fn from(e: BlobReadError) -> Fail {
        let message = e.to_string();
        match e {
            BlobReadError::Scan(e) => e.into(),
            BlobReadError::Io { path, error } => Fail::Io {
                message,
                kind: error.kind().to_string(),
                path: Some(path.display().to_string()),
            },
            BlobReadError::Invalid { context, error } => Fail::Invalid {
                message,
                kind: error.kind.name().to_string(),
                offset: Some(error.offset),
                path: Some(context),
            },
            BlobReadError::Grouping { files, .. } => Fail::Invalid {
                message,
                kind: "grouping".into(),
                offset: None,
                path: Some(files),
            },
            BlobReadError::Descriptor { context, .. } => Fail::Invalid {
                message,
                kind: "descriptor".into(),
                offset: None,
                path: Some(context),
            },
            BlobReadError::Query(_) | BlobReadError::Unsupported(_) => Fail::Value(message),
            // The enum may grow: anything else is invalid input described by its message.
            #[allow(unreachable_patterns)]
            _ => Fail::Invalid {
                message,
                kind: "blob".into(),
                offset: None,
                path: None,
            },
        }
    }
}

/// The Python exception of `fail`: `lakecore._errors.InvalidData` / `IoError` with `kind`,
/// `offset` and `path` attributes, or `ValueError`.
fn raise(py: Python<'_>, fail: Fail) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let errors = py.import("lakecore._errors")?;
        let kwargs = PyDict::new(py);
        let (class, message) = match fail {
            Fail::Value(m) => return Ok(pyo3::exceptions::PyValueError::new_err(m)),
            Fail::Invalid {
                message,
                kind,
                offset,
                path,
            } => {
                kwargs.set_item("kind", kind)?;
                kwargs.set_item("offset", offset)?;
                kwargs.set_item("path", path)?;
                ("InvalidData", message)
            }
            Fail::Io {
                message,
                kind,
                path,
            } => {
                kwargs.set_item("kind", kind)?;
                kwargs.set_item("offset", None::<u64>)?;
                kwargs.set_item("path", path)?;
                ("IoError", message)
            }
        };
        let value = errors.getattr(class)?.call((message,), Some(&kwargs))?;
        Ok(PyErr::from_value(value))
    };
    build().unwrap_or_else(|e| e)
}

// ---------------------------------------------------------------------------------------
// Arrow data handed to pyarrow: plans through the Arrow C data interface, BLOB columns as
// lent buffers.

/// A record batch as the Arrow C data interface's two PyCapsules (`arrow_schema`,
/// `arrow_array`), what `pyarrow.RecordBatch._import_from_c_capsule` takes. The buffers stay
/// where arrow-rs built them; pyarrow releases them through the interface's callback. A
/// capsule never imported releases its struct when Python frees it.
type Exported = (FFI_ArrowSchema, FFI_ArrowArray);

fn export(batch: RecordBatch) -> Result<Exported, Fail> {
    let schema = FFI_ArrowSchema::try_from(batch.schema().as_ref())
        .map_err(|e| Fail::Value(format!("internal: the plan's Arrow schema: {e}")))?;
    let array = FFI_ArrowArray::new(&StructArray::from(batch).into_data());
    Ok((schema, array))
}

fn capsules(py: Python<'_>, (schema, array): Exported) -> PyResult<Bound<'_, PyTuple>> {
    let schema = PyCapsule::new(py, schema, Some(c"arrow_schema".to_owned()))?;
    let array = PyCapsule::new(py, array, Some(c"arrow_array".to_owned()))?;
    (schema, array).into_pyobject(py)
}

/// Bytes built without the GIL and lent to pyarrow in place: Python gets the buffer's
/// address and length and keeps this object as the pyarrow buffer's `base`. The vector is
/// never touched again, so the address stays valid while the object lives.
#[pyclass(frozen, module = "lakecore._lakecore")]
struct Owned {
    data: Vec<u8>,
}

impl Owned {
    fn wrap(py: Python<'_>, data: Vec<u8>) -> PyResult<Bound<'_, PyTuple>> {
        let address = data.as_ptr() as usize;
        let len = data.len();
        let owner = Bound::new(py, Owned { data })?;
        (owner, address, len).into_pyobject(py)
    }
}

#[pymethods]
impl Owned {
    fn __len__(&self) -> usize {
        self.data.len()
    }
}

/// One split for Python: bucket, total buckets, row count, merged row count, merge groups,
/// the indexes of its files in the plan's columns, and each file's deletion file.
type SplitRow = (
    i32,
    i32,
    i64,
    Option<i64>,
    Vec<(usize, usize)>,
    Vec<usize>,
    Vec<Option<(String, u64, u64, Option<i64>)>>,
);

/// The library's splits of `plan`, files named by their position in the plan.
fn split_rows(table: &Table, plan: &ScanPlan) -> Result<Vec<SplitRow>, Fail> {
    let at: HashMap<(&[u8], i32, &str), usize> = plan
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| ((&*f.partition, f.bucket, &*f.file_name), i))
        .collect();
    let mut out = Vec::new();
    for s in table.splits(plan)? {
        let mut index = Vec::with_capacity(s.files.len());
        let mut deletions = Vec::with_capacity(s.files.len());
        for f in &s.files {
            let key = (&*f.file.partition, f.file.bucket, &*f.file.file_name);
            index.push(at.get(&key).copied().ok_or_else(|| {
                Fail::Value(format!(
                    "internal: split file {} is not in the plan",
                    f.file.file_name
                ))
            })?);
            deletions.push(
                f.deletion_file
                    .as_ref()
                    .map(|d| (d.path.clone(), d.offset, d.length, d.cardinality)),
            );
        }
        out.push((
            s.bucket,
            s.total_buckets,
            s.row_count,
            s.merged_row_count,
            s.groups.iter().map(|g| (g.start, g.end)).collect(),
            index,
            deletions,
        ));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Tables.

/// Opens a table by location: a local directory or a `file://` URL. Remote URLs go through
/// the `object-store` planner once it exists; this is the one place that will call it.
fn open_location(location: &str) -> Result<Table, Fail> {
    let path: PathBuf = if let Some(rest) = location.strip_prefix("file://") {
        // `file:///abs/path` (empty host) or `file://localhost/abs/path`.
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        if !rest.starts_with('/') {
            return Err(Fail::Value(format!(
                "{location:?}: a file:// URL needs an absolute path (file:///dir/table)"
            )));
        }
        PathBuf::from(percent_decode(rest)?)
    } else if let Some((scheme, _)) = location.split_once("://") {
        // Object stores, configured from the environment as object_store's builders read it
        // (AWS_ENDPOINT_URL, AWS_REGION, credentials, AWS_ALLOW_HTTP, GOOGLE_*, AZURE_*).
        #[cfg(feature = "object-store")]
        {
            if !matches!(scheme, "s3" | "gs" | "az" | "memory") {
                return Err(Fail::Value(format!(
                    "{location:?}: unsupported scheme {scheme:?} (a directory, file://, s3://, \
                     gs://, az:// or memory://)"
                )));
            }
            return Ok(Table::open_url(location, &[])?);
        }
        #[cfg(not(feature = "object-store"))]
        return Err(Fail::Value(format!(
            "{location:?}: {scheme}:// tables need the package built with its `object-store` \
             feature (local directories and file:// URLs only in this build)"
        )));
    } else {
        PathBuf::from(location)
    };
    Ok(Table::open(path)?)
}

fn percent_decode(text: &str) -> Result<String, Fail> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| Fail::Value(format!("{text:?}: bad %-escape at byte {i}")))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| Fail::Value(format!("{text:?}: not UTF-8 once decoded")))
}

/// What to plan, as the Python layer passes it.
#[derive(Clone, Debug, Default)]
struct Request {
    snapshot: Option<u64>,
    tag: Option<String>,
    as_of: Option<i64>,
    filter: Option<String>,
    /// `None`: the null partition value.
    partitions: Vec<(String, Option<String>)>,
    columns: Vec<(String, String)>,
    buckets: Option<Vec<(i32, Option<i32>)>>,
    rows: Option<Vec<(u64, u64)>>,
}

impl Request {
    fn spec(&self) -> SnapshotSpec {
        if let Some(id) = self.snapshot {
            SnapshotSpec::Id(id)
        } else if let Some(tag) = &self.tag {
            SnapshotSpec::Tag(tag.clone())
        } else if let Some(t) = self.as_of {
            SnapshotSpec::AsOf(t)
        } else {
            SnapshotSpec::Latest
        }
    }

    /// The planner's query; a null partition value becomes the table's
    /// `partition.default-name` (read from the schema of the snapshot planned).
    fn query(&self, table: &Table) -> Result<ScanQuery, Fail> {
        let default = if self.partitions.iter().any(|(_, v)| v.is_none()) {
            match table.resolve(&self.spec())? {
                Some(snap) => table.schema(snap.schema_id)?.default_partition_name,
                None => DEFAULT_PARTITION_NAME.to_string(),
            }
        } else {
            String::new()
        };
        let partition = self
            .partitions
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().unwrap_or_else(|| default.clone())))
            .collect();
        let filter = match &self.filter {
            Some(text) => Some(
                Filter::parse(text)
                    .map_err(|e| Fail::Value(format!("bad filter {text:?}: {e}")))?,
            ),
            None => None,
        };
        Ok(ScanQuery {
            rows: self.rows.clone(),
            buckets: self.buckets.clone(),
            partition,
            columns: self.columns.clone(),
            filter,
        })
    }
}

/// A Paimon table (the Python class `lakecore.Table` wraps it).
#[pyclass(frozen, module = "lakecore._lakecore")]
struct RawTable {
    table: Table,
}

type Pairs = Vec<(String, String)>;
/// Partition conditions: `None` is the null value.
type PartitionPairs = Vec<(String, Option<String>)>;

#[pymethods]
impl RawTable {
    /// Opens the table at `location` (a directory or `file://` URL). Reads only the
    /// directory's metadata.
    #[new]
    fn new(py: Python<'_>, location: String) -> PyResult<Self> {
        py.detach(|| open_location(&location))
            .map(|table| RawTable { table })
            .map_err(|e| raise(py, e))
    }

    /// The table directory.
    fn dir(&self) -> String {
        self.table.dir().display().to_string()
    }

    /// Plans a scan: `(snapshot or None, stats dict, [(schema, array) capsules of a record
    /// batch]`, the batches of `lakecore::paimon::arrow::plan_batches` in plan order); with `splits`, a
    /// fourth element: the library's splits ([`Table::splits`]) as `(bucket, total_buckets,
    /// row_count, merged_row_count, [(start, end)] merge groups, [file index into the
    /// columns], [deletion file (path, offset, length, cardinality) or None])`.
    #[pyo3(signature = (snapshot=None, tag=None, as_of=None, filter=None, partitions=Vec::new(), columns=Vec::new(), buckets=None, rows=None, sidecars=true, splits=false))]
    #[allow(clippy::too_many_arguments)]
    fn plan<'py>(
        &self,
        py: Python<'py>,
        snapshot: Option<u64>,
        tag: Option<String>,
        as_of: Option<i64>,
        filter: Option<String>,
        partitions: PartitionPairs,
        columns: Pairs,
        buckets: Option<Vec<(i32, Option<i32>)>>,
        rows: Option<Vec<(u64, u64)>>,
        sidecars: bool,
        splits: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let request = Request {
            snapshot,
            tag,
            as_of,
            filter,
            partitions,
            columns,
            buckets,
            rows,
        };
        let table = &self.table;
        let work = || -> Result<_, Fail> {
            let options = ScanOptions {
                read_sidecars: sidecars,
                ..ScanOptions::default()
            };
            let prepared =
                table.prepare_snapshot(&request.spec(), &request.query(table)?, options)?;
            let plan = prepared.run(|_, _| {})?;
            let cols = lakecore::paimon::arrow::plan_batches(table, prepared.schema(), &plan)?
                .into_iter()
                .map(export)
                .collect::<Result<Vec<_>, _>>()?;
            let grouped = match splits {
                true => Some(split_rows(table, &plan)?),
                false => None,
            };
            Ok((plan.snapshot, plan.stats, cols, grouped))
        };
        let (snapshot, s, cols, grouped) = py.detach(work).map_err(|e| raise(py, e))?;
        let stats = PyDict::new(py);
        for (k, v) in [
            ("manifests", s.manifests),
            ("manifests_pruned", s.manifests_pruned),
            ("manifests_with_sidecar", s.manifests_with_sidecar),
            ("manifests_sidecar_invalid", s.manifests_sidecar_invalid),
            ("blocks_total", s.blocks_total),
            ("blocks_read", s.blocks_read),
            ("manifest_bytes_total", s.manifest_bytes_total),
            ("manifest_bytes_read", s.manifest_bytes_read),
            ("sidecar_bytes_read", s.sidecar_bytes_read),
            ("entries_matched", s.entries_matched),
        ] {
            stats.set_item(k, v)?;
        }
        let list = PyList::empty(py);
        for batch in cols {
            list.append(capsules(py, batch)?)?;
        }
        match grouped {
            Some(g) => (snapshot, stats, list, g).into_pyobject(py),
            None => (snapshot, stats, list).into_pyobject(py),
        }
    }

    /// The Rust call alone, for `benches/python_plan.py`: plans exactly as [`plan`](Self::plan)
    /// (same query, options and parallel run) but returns only `(snapshot, number of
    /// files)`, so the difference is the binding's own cost. With `batches`, it also builds
    /// the plan's Arrow batches as `plan` does (`paimon::arrow::plan_batches`) and drops them:
    /// the Rust call that gives what `plan` gives, less the hand-over to pyarrow.
    #[pyo3(signature = (filter=None, partitions=Vec::new(), buckets=None, rows=None, batches=false))]
    fn _plan_count(
        &self,
        py: Python<'_>,
        filter: Option<String>,
        partitions: PartitionPairs,
        buckets: Option<Vec<(i32, Option<i32>)>>,
        rows: Option<Vec<(u64, u64)>>,
        batches: bool,
    ) -> PyResult<(Option<u64>, usize)> {
        let request = Request {
            filter,
            partitions,
            buckets,
            rows,
            ..Request::default()
        };
        let table = &self.table;
        py.detach(|| -> Result<_, Fail> {
            let prepared = table.prepare_snapshot(
                &request.spec(),
                &request.query(table)?,
                ScanOptions::default(),
            )?;
            let plan = prepared.run(|_, _| {})?;
            if batches {
                let built = lakecore::paimon::arrow::plan_batches(table, prepared.schema(), &plan)?;
                drop(std::hint::black_box(built));
            }
            Ok((plan.snapshot, plan.files.len()))
        })
        .map_err(|e| raise(py, e))
    }

    /// Reads a BLOB column: `(snapshot, column, n, row_ids, sequence_numbers, validity,
    /// views, buffers)`; for a local table the views reference buffer `i` = `(path, base)`:
    /// file `path` from byte `base`, which the Python layer maps; for a remote one buffer
    /// `i` is lent bytes `(owner, address, length)` holding the fetched values.
    ///
    /// A descriptor field (`blob-descriptor-field`) is read from the data files: its values
    /// (the descriptor bytes; with `descriptors="resolve"` the payloads they point at) are
    /// copied into buffers of their own, like a remote table's. `descriptors` other than
    /// `"bytes"` is refused for a column in `.blob` files (`"decode"` is the Python layer's).
    #[pyo3(signature = (column=None, snapshot=None, tag=None, as_of=None, filter=None, partitions=Vec::new(), columns=Vec::new(), buckets=None, rows=None, strict=false, descriptors="bytes"))]
    #[allow(clippy::too_many_arguments)]
    fn read_blob<'py>(
        &self,
        py: Python<'py>,
        column: Option<String>,
        snapshot: Option<u64>,
        tag: Option<String>,
        as_of: Option<i64>,
        filter: Option<String>,
        partitions: PartitionPairs,
        columns: Pairs,
        buckets: Option<Vec<(i32, Option<i32>)>>,
        rows: Option<Vec<(u64, u64)>>,
        strict: bool,
        descriptors: &str,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let request = Request {
            snapshot,
            tag,
            as_of,
            filter,
            partitions,
            columns,
            buckets,
            rows,
        };
        let table = &self.table;
        let out = py
            .detach(|| read_blob_views(table, &request, column.as_deref(), strict, descriptors))
            .map_err(|e| raise(py, e))?;
        // Local: `(path, base)` per buffer; remote: the buffers themselves, lent.
        let buffers = PyList::empty(py);
        if out.data.is_empty() {
            for b in &out.buffers {
                buffers.append(b.clone().into_pyobject(py)?)?;
            }
        } else {
            for d in out.data {
                buffers.append(Owned::wrap(py, d)?)?;
            }
        }
        let validity = if out.nulls > 0 {
            Some(Owned::wrap(py, out.validity)?)
        } else {
            None
        };
        (
            out.snapshot,
            out.column,
            out.n,
            Owned::wrap(py, out.row_ids)?,
            Owned::wrap(py, out.seqs)?,
            validity,
            Owned::wrap(py, out.views)?,
            buffers,
        )
            .into_pyobject(py)
    }
}

/// A BLOB column as Arrow `binary_view` parts.
#[derive(Default)]
struct BlobViews {
    snapshot: Option<u64>,
    column: String,
    n: usize,
    nulls: usize,
    row_ids: Vec<u8>,
    seqs: Vec<u8>,
    validity: Vec<u8>,
    views: Vec<u8>,
    /// Local tables: the views' buffers as `(path, base)`, mapped by the Python layer.
    buffers: Vec<(String, u64)>,
    /// Remote tables: the views' buffers, the values copied (each under 2 GiB).
    data: Vec<Vec<u8>>,
}

/// Views address a buffer by a 32-bit offset: each file is cut into buffers starting at
/// multiples of 2 GiB, so any value starts less than 2^31 bytes into its buffer.
const WINDOW: u64 = 1 << 31;

fn read_blob_views(
    table: &Table,
    request: &Request,
    column: Option<&str>,
    strict: bool,
    descriptors: &str,
) -> Result<BlobViews, Fail> {
    let snapshot = match request.spec() {
        SnapshotSpec::Latest => None,
        SnapshotSpec::Id(id) => Some(id),
        spec => Some(
            table
                .resolve(&spec)?
                .ok_or_else(|| Fail::Value(format!("no snapshot for {spec:?}")))?
                .id,
        ),
    };
    let (name, kind) = column_kind(table, snapshot, column)?;
    if kind == ColumnKind::Descriptor {
        let resolve = descriptors == "resolve";
        return read_descriptor_views(table, request, snapshot, &name, resolve);
    }
    if descriptors != "bytes" {
        return Err(Fail::Value(format!(
            "descriptors={descriptors:?}: column {name:?} is stored in .blob files, not a \
             blob-descriptor-field"
        )));
    }
    // Local `.blob` files are mapped by the Python layer and the views point into them;
    // remote values (only the selected rows' payloads were fetched) are copied into buffers
    // of their own.
    let remote = table.storage().is_remote();
    let read = BlobColumnRead::plan(table, snapshot, &request.query(table)?, column)?;
    let mut out = BlobViews {
        snapshot: read.snapshot(),
        column: read.column().to_string(),
        ..BlobViews::default()
    };
    let mut buffer_of: HashMap<(usize, usize, u64), u32> = HashMap::new();
    let mut valid = Vec::new();
    for index in 0..read.bunches().len() {
        read.with_bunch(index, ReadOptions { strict }, |merge, bunch| {
            // The merge's files in its own order -> the bunch's paths.
            let paths: Vec<Option<usize>> = merge
                .files()
                .iter()
                .map(|lf| {
                    bunch.files.iter().position(|(_, m)| {
                        m.max_sequence_number == lf.max_sequence_number
                            && m.first_row_id == i64::try_from(lf.first_row_id).ok()
                            && u64::try_from(m.row_count).ok() == Some(lf.file.rows())
                    })
                })
                .collect();
            for row in merge.by_ref() {
                let row = row.map_err(|e| {
                    Fail::invalid(Some(bunch.split.clone()), &bunch.split, e)
                })?;
                out.n += 1;
                out.row_ids.extend_from_slice(&row.row_id.to_le_bytes());
                out.seqs
                    .extend_from_slice(&row.sequence_number.to_le_bytes());
                let mut view = [0u8; 16];
                match row.value {
                    None => {
                        out.nulls += 1;
                        valid.push(false);
                    }
                    Some(p) => {
                        valid.push(true);
                        let len = u32::try_from(p.bytes.len()).map_err(|_| Fail::Value(format!(
                            "row {}: a {}-byte value does not fit an Arrow binary view (4 GiB at most)",
                            row.row_id,
                            p.bytes.len()
                        )))?;
                        view[..4].copy_from_slice(&len.to_le_bytes());
                        if len <= 12 {
                            view[4..4 + p.bytes.len()].copy_from_slice(p.bytes);
                        } else if remote {
                            let fits = out.data.last().is_some_and(|d| {
                                (d.len() + p.bytes.len()) as u64 <= WINDOW
                            });
                            if !fits {
                                out.data.push(Vec::new());
                            }
                            let id = u32::try_from(out.data.len() - 1).unwrap_or(u32::MAX);
                            let Some(buf) = out.data.last_mut() else {
                                return Err(Fail::Value("no value buffer".into()));
                            };
                            let rel = u32::try_from(buf.len()).unwrap_or(u32::MAX);
                            buf.extend_from_slice(p.bytes);
                            view[4..8].copy_from_slice(&p.bytes[..4]);
                            view[8..12].copy_from_slice(&id.to_le_bytes());
                            view[12..16].copy_from_slice(&rel.to_le_bytes());
                        } else {
                            let file = row
                                .file
                                .and_then(|i| paths.get(i).copied().flatten())
                                .ok_or_else(|| Fail::Invalid {
                                    message: format!(
                                        "{}: row {} has a value but no file of the bunch",
                                        bunch.split, row.row_id
                                    ),
                                    kind: "mismatch".into(),
                                    offset: None,
                                    path: Some(bunch.split.clone()),
                                })?;
                            let base = p.offset - p.offset % WINDOW;
                            let next = u32::try_from(out.buffers.len()).unwrap_or(u32::MAX);
                            let id = *buffer_of.entry((index, file, base)).or_insert_with(|| {
                                let path = bunch.files[file].0.display().to_string();
                                out.buffers.push((path, base));
                                next
                            });
                            view[4..8].copy_from_slice(&p.bytes[..4]);
                            view[8..12].copy_from_slice(&id.to_le_bytes());
                            let rel = u32::try_from(p.offset - base).unwrap_or(u32::MAX);
                            view[12..16].copy_from_slice(&rel.to_le_bytes());
                        }
                    }
                }
                out.views.extend_from_slice(&view);
            }
            Ok::<(), Fail>(())
        })??;
    }
    if out.nulls > 0 {
        out.validity = vec![0u8; out.n.div_ceil(8)];
        for (i, _) in valid.iter().enumerate().filter(|(_, v)| **v) {
            out.validity[i / 8] |= 1 << (i % 8);
        }
    }
    Ok(out)
}

/// Appends one value to `out` as a `binary_view`, copied into `out.data`.
fn push_copied(
    out: &mut BlobViews,
    valid: &mut Vec<bool>,
    row_id: u64,
    sequence_number: i64,
    value: Option<&[u8]>,
) -> Result<(), Fail> {
    out.n += 1;
    out.row_ids.extend_from_slice(&row_id.to_le_bytes());
    out.seqs.extend_from_slice(&sequence_number.to_le_bytes());
    let mut view = [0u8; 16];
    valid.push(value.is_some());
    match value {
        None => out.nulls += 1,
        Some(bytes) => {
            let len = u32::try_from(bytes.len())
                .ok()
                .filter(|&l| u64::from(l) <= WINDOW)
                .ok_or_else(|| {
                    Fail::Value(format!(
                        "row {row_id}: a {}-byte value does not fit an Arrow binary view",
                        bytes.len()
                    ))
                })?;
            view[..4].copy_from_slice(&len.to_le_bytes());
            if bytes.len() <= 12 {
                view[4..4 + bytes.len()].copy_from_slice(bytes);
            } else {
                view[4..8].copy_from_slice(&bytes[..4]);
            }
            if bytes.len() > 12 {
                let fits = out
                    .data
                    .last()
                    .is_some_and(|d| (d.len() + bytes.len()) as u64 <= WINDOW);
                if !fits {
                    out.data.push(Vec::new());
                }
                let id = u32::try_from(out.data.len() - 1).unwrap_or(u32::MAX);
                let Some(buf) = out.data.last_mut() else {
                    return Err(Fail::Value("no value buffer".into()));
                };
                let rel = u32::try_from(buf.len()).unwrap_or(u32::MAX);
                buf.extend_from_slice(bytes);
                view[8..12].copy_from_slice(&id.to_le_bytes());
                view[12..16].copy_from_slice(&rel.to_le_bytes());
            }
        }
    }
    out.views.extend_from_slice(&view);
    Ok(())
}

/// A descriptor field's rows: the descriptor bytes, or (`resolve`) the payloads they point
/// at, copied.
fn read_descriptor_views(
    table: &Table,
    request: &Request,
    snapshot: Option<u64>,
    column: &str,
    resolve: bool,
) -> Result<BlobViews, Fail> {
    let read = DescriptorColumnRead::plan(table, snapshot, &request.query(table)?, Some(column))?;
    let mut out = BlobViews {
        snapshot: read.snapshot(),
        column: read.column().to_string(),
        ..BlobViews::default()
    };
    let mut valid = Vec::new();
    read.for_each_row(|row| {
        let payload = match (resolve, row.value) {
            (true, Some(bytes)) => {
                let d = decode(bytes).map_err(|e| {
                    Fail::invalid(
                        row.file.map(str::to_string),
                        &format!("{} row {} descriptor", row.file.unwrap_or(""), row.row_id),
                        e,
                    )
                })?;
                Some(read.resolve(&d)?)
            }
            _ => None,
        };
        let value = payload.as_deref().or(row.value);
        push_copied(&mut out, &mut valid, row.row_id, row.sequence_number, value)
    })??;
    if out.nulls > 0 {
        out.validity = vec![0u8; out.n.div_ceil(8)];
        for (i, _) in valid.iter().enumerate().filter(|(_, v)| **v) {
            out.validity[i / 8] |= 1 << (i % 8);
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Sidecars.

/// A selected block: `(id, offset, length, first_record, record_count)`.
type BlockRow = (u32, u64, u64, u64, u64);

/// A validated manifest sidecar over its own copy of the bytes.
#[pyclass(frozen, module = "lakecore._lakecore")]
struct RawSidecar {
    bytes: Vec<u8>,
}

fn sidecar_fail(e: lakecore::Error) -> Fail {
    Fail::invalid(None, "sidecar", e)
}

#[pymethods]
impl RawSidecar {
    /// Validates `data` (checksums and structure) and keeps a copy.
    #[new]
    fn new(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        py.detach(|| Sidecar::parse(&data).map(|_| ()).map_err(sidecar_fail))
            .map_err(|e| raise(py, e))?;
        Ok(RawSidecar { bytes: data })
    }

    /// `(layout, manifest_length, entry_count, block_count, partition_count)`.
    fn info(&self, py: Python<'_>) -> PyResult<(String, u64, u64, u32, u32)> {
        let bytes = &self.bytes;
        py.detach(|| {
            let s = Sidecar::parse(bytes).map_err(sidecar_fail)?;
            Ok((
                s.layout().name().to_string(),
                s.manifest_length(),
                s.entry_count(),
                s.block_count(),
                s.partition_count(),
            ))
        })
        .map_err(|e| raise(py, e))
    }

    /// The partition dictionary's tuples (`_PARTITION` bytes), by dictionary ID.
    fn partitions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let bytes = &self.bytes;
        let tuples = py
            .detach(|| -> Result<Vec<Vec<u8>>, Fail> {
                let s = Sidecar::parse(bytes).map_err(sidecar_fail)?;
                Ok(s.partitions().map(<[u8]>::to_vec).collect())
            })
            .map_err(|e| raise(py, e))?;
        let list = PyList::empty(py);
        for t in &tuples {
            list.append(PyBytes::new(py, t))?;
        }
        Ok(list)
    }

    /// The blocks a scan must read: `[(id, offset, length, first_record, record_count)]`.
    #[pyo3(signature = (rows=None, buckets=None, partitions=None))]
    fn select(
        &self,
        py: Python<'_>,
        rows: Option<Vec<(u64, u64)>>,
        buckets: Option<Vec<(i32, Option<i32>)>>,
        partitions: Option<Vec<Vec<u8>>>,
    ) -> PyResult<Vec<BlockRow>> {
        let bytes = &self.bytes;
        py.detach(|| -> Result<_, Fail> {
            let mut ranges: Option<Vec<RowRange>> = rows.map(|r| {
                r.into_iter()
                    .map(|(first, last)| RowRange::new(first, last))
                    .collect()
            });
            if let Some(r) = &ranges {
                if let Some(bad) = r.iter().find(|r| r.first > r.last) {
                    return Err(Fail::Value(format!(
                        "row range ({}, {}): first is after last",
                        bad.first, bad.last
                    )));
                }
            }
            let mut keep: Vec<&[u8]> = partitions.iter().flatten().map(Vec::as_slice).collect();
            keep.sort_unstable();
            let mut by_partition = |t: &[u8]| keep.binary_search(&t).is_ok();
            let by_bucket = |b: i32, t: i32| {
                buckets
                    .as_deref()
                    .is_some_and(|l| lakecore::sidecar::bucket_in(l, b, t))
            };
            // One walk: validation fused into the selection.
            let head = Sidecar::parse_head(bytes, &lakecore::sidecar::SidecarOptions::default())
                .map_err(sidecar_fail)?;
            let (_, selected) = head
                .select_filtered(
                    ranges.as_deref_mut(),
                    match partitions.is_some() {
                        true => Some(&mut by_partition),
                        false => None,
                    },
                    match buckets.is_some() {
                        true => Some(&by_bucket),
                        false => None,
                    },
                )
                .map_err(sidecar_fail)?;
            Ok(selected
                .into_iter()
                .map(|b| (b.id, b.offset, b.length, b.first_record, b.record_count))
                .collect())
        })
        .map_err(|e| raise(py, e))
    }
}

// ---------------------------------------------------------------------------------------
// Parquet columns through the modular footer (feature `footer`).

#[cfg(feature = "footer")]
mod footer;

/// The extension module.
#[pymodule]
fn _lakecore(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RawTable>()?;
    m.add_class::<RawSidecar>()?;
    #[cfg(feature = "footer")]
    {
        m.add_function(wrap_pyfunction!(footer::footer_read, m)?)?;
        m.add_function(wrap_pyfunction!(footer::footer_inspect, m)?)?;
        m.add_function(wrap_pyfunction!(footer::footer_convert, m)?)?;
    }
    Ok(())
}
