//! `lakecore.footer`: Parquet columns read through a modular footer with arrow-rs, from a
//! local file (mapped) or an object-store URL (the tail, then only the projected chunks, by
//! ranged GETs), handed to pyarrow as one Arrow IPC stream.
//!
//! Why IPC and not the C data interface: the batches are written once into one buffer that
//! pyarrow reads in place (`pa.ipc.open_stream` over a foreign buffer: no second copy), with
//! no `unsafe` FFI code here and no coupling of this crate's PyO3 version to arrow-rs's
//! `pyarrow` feature; the one copy is small next to decoding the Parquet pages.

use super::{percent_decode, raise, Fail, Owned};
#[cfg(feature = "object-store")]
use futures::StreamExt as _;
#[cfg(feature = "object-store")]
use lakecore::footer::arrow::ModularAsyncReader;
use lakecore::footer::arrow::{
    projected_metadata, reader_builder, ColumnSelector, ProjectedMetadata, Projection,
    ProjectionError,
};
#[cfg(feature = "object-store")]
use lakecore::footer::FooterOptions;
use lakecore::footer::ModularFooter;
#[cfg(feature = "object-store")]
use lakecore::io::Stored;
use lakecore::io::{LocalFs, Storage};
use parquet::errors::ParquetError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use std::path::PathBuf;

/// A location: a local path (`file://` URLs decoded to one) or an object-store URL.
enum Location {
    Local(PathBuf),
    #[cfg(feature = "object-store")]
    Remote(String),
}

fn locate(location: &str) -> Result<Location, Fail> {
    if let Some(rest) = location.strip_prefix("file://") {
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        if !rest.starts_with('/') {
            return Err(Fail::Value(format!(
                "{location:?}: a file:// URL needs an absolute path (file:///dir/file.parquet)"
            )));
        }
        return Ok(Location::Local(PathBuf::from(percent_decode(rest)?)));
    }
    if let Some((scheme, _)) = location.split_once("://") {
        #[cfg(feature = "object-store")]
        {
            if !matches!(
                scheme,
                "s3" | "s3a" | "gs" | "az" | "azure" | "abfs" | "abfss" | "memory"
            ) {
                return Err(Fail::Value(format!(
                    "{location:?}: unsupported scheme {scheme:?} (a path, file://, s3://, gs://, \
                     az:// or memory://)"
                )));
            }
            return Ok(Location::Remote(location.to_string()));
        }
        #[cfg(not(feature = "object-store"))]
        return Err(Fail::Value(format!(
            "{location:?}: {scheme}:// needs the package built with its `object-store` feature"
        )));
    }
    Ok(Location::Local(PathBuf::from(location)))
}

fn io_fail(path: &str, e: std::io::Error) -> Fail {
    Fail::Io {
        message: format!("{path}: {e}"),
        kind: e.kind().to_string(),
        path: Some(path.to_string()),
    }
}

fn projection_fail(path: &str, e: ProjectionError) -> Fail {
    match e {
        ProjectionError::Footer(e) => Fail::invalid(Some(path.to_string()), path, e),
        ProjectionError::Parquet(e) => parquet_fail(path, e),
        other => Fail::Value(format!("{path}: {other}")),
    }
}

/// An object store's I/O error (it names the URL) is an `IoError`; anything else the
/// `parquet` crate reports about the bytes is `InvalidData`.
fn parquet_fail(path: &str, e: ParquetError) -> Fail {
    if let ParquetError::External(inner) = &e {
        if let Some(io) = inner.downcast_ref::<std::io::Error>() {
            return Fail::Io {
                message: io.to_string(),
                kind: io.kind().to_string(),
                path: Some(path.to_string()),
            };
        }
    }
    Fail::Invalid {
        message: format!("{path}: reading column data: {e}"),
        kind: "parquet".into(),
        offset: None,
        path: Some(path.to_string()),
    }
}

fn projection(columns: Option<Vec<String>>, row_groups: Option<Vec<usize>>) -> Projection {
    Projection {
        columns: columns.map(|c| c.iter().map(|s| ColumnSelector::parse(s)).collect()),
        row_groups,
        ..Projection::default()
    }
}

fn schema_of(
    parquet_schema: &parquet::schema::types::SchemaDescriptor,
    projected: &ProjectedMetadata,
    kv: Option<&Vec<parquet::file::metadata::KeyValue>>,
) -> Result<arrow_schema::SchemaRef, ParquetError> {
    parquet::arrow::parquet_to_arrow_schema_by_columns(parquet_schema, projected.mask.clone(), kv)
        .map(std::sync::Arc::new)
}

/// Reads the projection into an Arrow IPC stream.
fn read_ipc(location: &str, projection: &Projection) -> Result<Vec<u8>, Fail> {
    let (schema, batches) = match locate(location)? {
        Location::Local(path) => {
            let bytes = LocalFs.read(&path).map_err(|e| io_fail(location, e))?;
            ModularFooter::parse(&bytes)
                .map_err(|e| Fail::invalid(Some(location.into()), location, e))?;
            let (builder, projected) = reader_builder(bytes::Bytes::from_owner(bytes), projection)
                .map_err(|e| match e {
                    ParquetError::General(m) => Fail::Value(format!("{location}: {m}")),
                    e => parquet_fail(location, e),
                })?;
            let schema = schema_of(
                builder.parquet_schema(),
                &projected,
                builder.metadata().file_metadata().key_value_metadata(),
            )
            .map_err(|e| parquet_fail(location, e))?;
            let reader = builder.build().map_err(|e| parquet_fail(location, e))?;
            let mut batches = Vec::new();
            for b in reader {
                batches.push(b.map_err(|e| match e {
                    arrow_schema::ArrowError::ExternalError(inner) => {
                        match inner.downcast::<ParquetError>() {
                            Ok(p) => parquet_fail(location, *p),
                            Err(other) => parquet_fail(location, ParquetError::External(other)),
                        }
                    }
                    other => parquet_fail(location, ParquetError::ArrowError(other.to_string())),
                })?);
            }
            (schema, batches)
        }
        #[cfg(feature = "object-store")]
        Location::Remote(url) => {
            let (storage, path) =
                lakecore::io::ObjectStorage::open(&url, &[]).map_err(|e| io_fail(&url, e))?;
            let reader = storage.file_reader(&path).map_err(|e| io_fail(&url, e))?;
            let len = reader.len();
            // The footer's tail first, to tell bad bytes (InvalidData) from I/O.
            let (window, origin) = remote_tail(&storage, &path, &url, len, projection)?;
            let footer = ModularFooter::parse_with(
                &window,
                &FooterOptions {
                    origin,
                    ..Default::default()
                },
            )
            .map_err(|e| Fail::invalid(Some(url.clone()), &url, e))?;
            let projected =
                projected_metadata(&footer, projection).map_err(|e| projection_fail(&url, e))?;
            let mask = projected.mask.clone();
            let reader = ModularAsyncReader::from_projected(reader, projected.clone());
            storage.block_on(async {
                let builder = parquet::arrow::ParquetRecordBatchStreamBuilder::new(reader)
                    .await
                    .map_err(|e| parquet_fail(&url, e))?
                    .with_projection(mask);
                let schema = schema_of(
                    builder.parquet_schema(),
                    &projected,
                    builder.metadata().file_metadata().key_value_metadata(),
                )
                .map_err(|e| parquet_fail(&url, e))?;
                let mut stream = builder.build().map_err(|e| parquet_fail(&url, e))?;
                let mut batches = Vec::new();
                while let Some(b) = stream.next().await {
                    batches.push(b.map_err(|e| parquet_fail(&url, e))?);
                }
                Ok::<_, Fail>((schema, batches))
            })?
        }
    };
    let mut out = Vec::new();
    let ipc = |e: arrow_schema::ArrowError| Fail::Value(format!("{location}: IPC: {e}"));
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &schema).map_err(ipc)?;
    for b in &batches {
        w.write(b).map_err(ipc)?;
    }
    w.finish().map_err(ipc)?;
    drop(w);
    Ok(out)
}

/// The tail of a remote file holding its modular footer (and, for `projection`, the page
/// indexes it reads): the last 64 KiB, then from where the footer says it starts.
#[cfg(feature = "object-store")]
fn remote_tail(
    storage: &lakecore::io::ObjectStorage,
    path: &std::path::Path,
    url: &str,
    len: u64,
    projection: &Projection,
) -> Result<(bytes::Bytes, u64), Fail> {
    use lakecore::ErrorKind;
    if len < 8 {
        return Err(Fail::invalid(
            Some(url.into()),
            url,
            lakecore::Error::new(ErrorKind::Truncated, len),
        ));
    }
    let mut start = len.saturating_sub(64 << 10);
    // Each round fetches only the bytes before the window that the footer asks for.
    let mut window = bytes::Bytes::new();
    let mut end = len;
    loop {
        let fetched = match storage.read_ranges(path, &[(start, end - start)]) {
            Ok(mut parts) => parts.pop(),
            Err(e) => return Err(io_fail(url, e)),
        };
        window = match fetched {
            Some(Stored::Bytes(b)) if window.is_empty() => b,
            Some(part) => [&part[..], &window[..]].concat().into(),
            None => window,
        };
        end = start;
        let options = FooterOptions {
            origin: start,
            ..Default::default()
        };
        let needs = |e: &lakecore::Error| {
            matches!(e.kind, ErrorKind::NeedsBytes { .. }) && e.offset < start
        };
        let next = match ModularFooter::parse_with(&window, &options) {
            Ok(f) => match projected_metadata(&f, projection) {
                Err(ProjectionError::Footer(e)) if needs(&e) => {
                    Some(e.offset.min(f.metadata_start()))
                }
                // Projection errors are reported by the caller, which projects again.
                _ => None,
            },
            Err(e) if needs(&e) => Some(e.offset),
            Err(e) => return Err(Fail::invalid(Some(url.into()), url, e)),
        };
        match next {
            None => return Ok((window, start)),
            Some(s) => start = s,
        }
    }
}

/// Reads columns of a modular-footer Parquet file: the Arrow IPC stream of the projection,
/// lent as `(owner, address, length)` (the Python layer reads it with pyarrow in place).
#[pyfunction]
#[pyo3(signature = (location, columns=None, row_groups=None))]
pub fn footer_read<'py>(
    py: Python<'py>,
    location: String,
    columns: Option<Vec<String>>,
    row_groups: Option<Vec<usize>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let projection = projection(columns, row_groups);
    let ipc = py
        .detach(|| read_ipc(&location, &projection))
        .map_err(|e| raise(py, e))?;
    Owned::wrap(py, ipc)
}

/// The footer's summary as JSON text (see `lakecore.footer.inspect`).
fn inspect_json(location: &str) -> Result<String, Fail> {
    let all = Projection::all().without_page_index();
    let describe = |f: &ModularFooter<'_>| -> Result<String, Fail> {
        let p = projected_metadata(f, &all).map_err(|e| projection_fail(location, e))?;
        let descr = p.metadata.file_metadata().schema_descr();
        let columns: Vec<serde_json::Value> = (0..descr.num_columns())
            .map(|i| {
                let c = descr.column(i);
                serde_json::json!({
                    "leaf": i,
                    "path": c.path().string(),
                    "physical_type": c.physical_type().to_string(),
                    "logical_type": c.logical_type_ref().map(|l| format!("{l:?}")),
                })
            })
            .collect();
        let modules: Vec<serde_json::Value> = f
            .modules()
            .map(|m| {
                serde_json::json!({
                    "module": m.module.name(),
                    "offset": m.offset,
                    "length": m.length,
                })
            })
            .collect();
        Ok(serde_json::json!({
            "num_row_groups": f.num_row_groups(),
            "num_columns": f.num_columns(),
            "num_rows": f.num_rows(),
            "metadata_bytes": f.file_len() - f.metadata_start(),
            "modules": modules,
            "columns": columns,
        })
        .to_string())
    };
    match locate(location)? {
        Location::Local(path) => {
            let bytes = LocalFs.read(&path).map_err(|e| io_fail(location, e))?;
            let f = ModularFooter::parse(&bytes)
                .map_err(|e| Fail::invalid(Some(location.into()), location, e))?;
            describe(&f)
        }
        #[cfg(feature = "object-store")]
        Location::Remote(url) => {
            let (storage, path) =
                lakecore::io::ObjectStorage::open(&url, &[]).map_err(|e| io_fail(&url, e))?;
            let len = storage.size(&path).map_err(|e| io_fail(&url, e))?;
            let (window, origin) = remote_tail(&storage, &path, &url, len, &all)?;
            let f = ModularFooter::parse_with(
                &window,
                &FooterOptions {
                    origin,
                    ..Default::default()
                },
            )
            .map_err(|e| Fail::invalid(Some(url.clone()), &url, e))?;
            describe(&f)
        }
    }
}

/// The footer's summary (counts, modules, leaf columns) as JSON text.
#[pyfunction]
pub fn footer_inspect(py: Python<'_>, location: String) -> PyResult<String> {
    py.detach(|| inspect_json(&location))
        .map_err(|e| raise(py, e))
}

/// Rewrites a standard Parquet file's bytes with a modular footer (data pages unchanged).
#[pyfunction]
pub fn footer_convert<'py>(py: Python<'py>, data: Vec<u8>) -> PyResult<Bound<'py, PyBytes>> {
    let out = py
        .detach(|| {
            lakecore::footer::convert(&data)
                .map_err(|e| Fail::invalid(None, "converting a standard Parquet file", e))
        })
        .map_err(|e| raise(py, e))?;
    Ok(PyBytes::new(py, &out))
}
