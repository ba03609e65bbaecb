//! `lakecore footer`: convert standard Parquet footers to modular footers, inspect them, and
//! read one column's placement.

use crate::footer_crypt;
use crate::util::outln;
use crate::util::{read, refuse_output_over_input, write_atomic, CliResult, Failure};
use lakecore::footer::arrow::{
    projected_metadata, reader_builder, ColumnSelector, ProjectedMetadata, Projection,
    ProjectionError,
};
use lakecore::footer::{convert, to_standard, ModularFooter, ModuleEncoding};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Options of `lakecore footer`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Rewrite a standard Parquet file with a modular footer (data pages unchanged), or with
    /// `--to-standard` a modular-footer file back to a standard Parquet file.
    Convert {
        /// The standard Parquet file (with `--to-standard`: the file with a modular footer).
        input: PathBuf,
        /// Where to write the converted file.
        #[arg(short, long)]
        output: PathBuf,
        /// Convert a modular-footer file back to a standard Parquet file (page indexes and a
        /// Thrift `FileMetaData` footer rebuilt, data pages and Bloom filters unchanged).
        #[arg(long, conflicts_with_all = ["encrypt_columns", "key_file"])]
        to_standard: bool,
        /// Encrypt the statistics and column indexes of these columns (leaf names, dotted,
        /// or indexes; needs --key-file).
        #[arg(long, value_delimiter = ',', requires = "key_file")]
        encrypt_columns: Vec<String>,
        /// Keys for --encrypt-columns: `ID=HEX` per line; a column uses the key named like
        /// it, else the key `footer`.
        #[arg(long)]
        key_file: Option<PathBuf>,
    },
    /// Print the root counts, the module directory and the schema (names, physical and
    /// logical types) with each column's codecs and statistics per row group.
    Inspect {
        /// A file with a modular footer.
        file: PathBuf,
        /// Only this column: a dotted name (`address.city`) or a leaf index.
        #[arg(long)]
        column: Option<String>,
        /// Print JSON.
        #[arg(long, conflicts_with = "key_file")]
        json: bool,
        /// Decrypt and print the statistics of encrypted columns with these keys (`ID=HEX`
        /// per line; text output).
        #[arg(long)]
        key_file: Option<PathBuf>,
    },
    /// Read columns through the modular footer (only the footer and the projected chunks are
    /// touched) and write them as CSV, JSON or a standard Parquet file.
    Read {
        /// A file with a modular footer.
        file: PathBuf,
        /// Columns: top-level names (all their leaves), dotted names (one leaf or group) or
        /// leaf indexes, comma-separated; all when absent.
        #[arg(long, value_delimiter = ',')]
        columns: Vec<String>,
        /// Row groups (indexes, comma-separated); all when absent.
        #[arg(long, value_delimiter = ',')]
        row_groups: Vec<usize>,
        /// At most this many rows.
        #[arg(long)]
        limit: Option<usize>,
        /// Output format (`parquet` needs `-o`).
        #[arg(long, value_enum, default_value = "csv")]
        format: ReadFormat,
        /// Write here (atomically) instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Print the placement of one column in every row group.
    Placement {
        /// A file with a modular footer.
        file: PathBuf,
        /// The leaf column index.
        #[arg(long)]
        column: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `footer read --format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ReadFormat {
    /// CSV with a header line.
    Csv,
    /// A JSON array of row objects.
    Json,
    /// A standard Parquet file of the projection.
    Parquet,
}

/// Maps `file` (the footer commands touch only the tail and the ranges they need).
fn map(file: &Path) -> Result<lakecore::io::FileBytes, Failure> {
    #[allow(unsafe_code)]
    // SAFETY: map_file's contract: the CLI does not modify the file while it is mapped, and
    // Parquet files are written once; files up to io::READ_BELOW are read, not mapped.
    let bytes = unsafe { lakecore::io::map_file(file) };
    bytes.map_err(|e| Failure::io(file.display(), e))
}

/// Whether a command-line path is a URL (`s3://...`, `file:///...`): read from an object
/// store then.
fn is_url(file: &Path) -> bool {
    file.to_str().is_some_and(|s| s.contains("://"))
}

/// The bytes a footer command parses: the mapped local file, or the tail of an object
/// (from where the footer's metadata, and the page indexes the projection needs, start).
enum Source {
    /// The local file, mapped.
    Local(lakecore::io::FileBytes),
    /// The tail of an object fetched with ranged GETs; `origin` is its first byte's offset.
    #[cfg(feature = "object-store")]
    Remote { window: bytes::Bytes, origin: u64 },
}

impl Source {
    fn footer(&self) -> lakecore::Result<ModularFooter<'_>> {
        match self {
            Source::Local(bytes) => ModularFooter::parse(bytes),
            #[cfg(feature = "object-store")]
            Source::Remote { window, origin } => ModularFooter::parse_with(
                window,
                &lakecore::footer::FooterOptions {
                    origin: *origin,
                    ..Default::default()
                },
            ),
        }
    }
}

/// Where a remote file's column data is read from.
#[cfg(feature = "object-store")]
struct Remote {
    storage: lakecore::io::ObjectStorage,
    path: PathBuf,
}

/// Without the `object-store` feature there is no remote file.
#[cfg(not(feature = "object-store"))]
enum Remote {}

/// Opens `file` for the footer commands: maps a local path; for a URL fetches the object's
/// tail (the last 64 KiB, then from where the footer or the projection's page indexes
/// start) with ranged GETs and returns the store to read column chunks from.
fn open_source(file: &Path, projection: &Projection) -> Result<(Source, Option<Remote>), Failure> {
    if !is_url(file) {
        return Ok((Source::Local(map(file)?), None));
    }
    #[cfg(feature = "object-store")]
    {
        use lakecore::io::Storage as _;
        use lakecore::ErrorKind;
        let url = file.display().to_string();
        let (storage, path) =
            lakecore::io::ObjectStorage::open(&url, &[]).map_err(|e| Failure::io(&url, e))?;
        let len = storage.size(&path).map_err(|e| Failure::io(&url, e))?;
        if len < 8 {
            return Err(Failure::invalid(
                &url,
                lakecore::Error::new(ErrorKind::Truncated, len),
            ));
        }
        let mut start = len.saturating_sub(64 << 10);
        // Each round fetches only the bytes before the window that the footer asks for.
        let mut window = bytes::Bytes::new();
        let mut end = len;
        loop {
            let fetched = match storage.read_ranges(&path, &[(start, end - start)]) {
                Ok(mut parts) => parts.pop(),
                Err(e) => return Err(Failure::io(&url, e)),
            };
            window = match fetched {
                Some(lakecore::io::Stored::Bytes(b)) if window.is_empty() => b,
                Some(part) => [&part[..], &window[..]].concat().into(),
                None => window,
            };
            end = start;
            let source = Source::Remote {
                window: window.clone(),
                origin: start,
            };
            let needs = |e: &lakecore::Error| {
                matches!(e.kind, ErrorKind::NeedsBytes { .. }) && e.offset < start
            };
            let next = match source.footer() {
                Ok(f) => match projected_metadata(&f, projection) {
                    Ok(_) => None,
                    Err(ProjectionError::Footer(e)) if needs(&e) => {
                        Some(e.offset.min(f.metadata_start()))
                    }
                    Err(e) => return Err(rejected(file, e)),
                },
                Err(e) if needs(&e) => Some(e.offset),
                Err(e) => return Err(Failure::invalid(&url, e)),
            };
            match next {
                None => return Ok((source, Some(Remote { storage, path }))),
                Some(s) => start = s,
            }
        }
    }
    #[cfg(not(feature = "object-store"))]
    {
        let _ = projection;
        Err(Failure::Usage(format!(
            "{}: object-store URLs need lakecore built with the `object-store` feature \
             (cargo install lakecore --features cli,object-store)",
            file.display()
        )))
    }
}

/// The batches of a `footer read`, local or remote.
type Batches = Box<dyn Iterator<Item = Result<arrow_array::RecordBatch, Failure>>>;

/// A `parquet` error while reading column data: an object store's I/O error (it names the
/// URL) is an I/O failure (exit 1), anything else invalid data (exit 2).
fn parquet_failure(file: &Path, e: parquet::errors::ParquetError) -> Failure {
    if let parquet::errors::ParquetError::External(inner) = &e {
        if let Some(io) = inner.downcast_ref::<std::io::Error>() {
            return Failure::io(
                "reading column data",
                std::io::Error::new(io.kind(), io.to_string()),
            );
        }
    }
    Failure::Rejected(format!("{}: reading column data: {e}", file.display()))
}

fn rejected(file: &Path, e: ProjectionError) -> Failure {
    match e {
        ProjectionError::Footer(e) => Failure::invalid(file.display(), e),
        other => Failure::Rejected(format!("{}: {other}", file.display())),
    }
}

/// The format the subcommand reads: standard Parquet for `convert`, modular for the others.
pub fn expected_format(args: &Args) -> lakecore::sniff::Format {
    match args.command {
        Command::Convert {
            to_standard: true, ..
        } => lakecore::sniff::Format::ModularParquet,
        Command::Convert { .. } => lakecore::sniff::Format::StandardParquet,
        _ => lakecore::sniff::Format::ModularParquet,
    }
}

/// The context of a `convert` error: the path, so the error line names what the file is and
/// which command reads it (`util::Failure`: a modular file given to `convert`, a standard one
/// given to `--to-standard`); for a file that starts like Parquet but has no footer magic at
/// its end, the path plus that it looks truncated (the generic hint would only say "no format
/// lakecore knows").
fn convert_context(input: &std::path::Path, bytes: &[u8]) -> String {
    let file = input.display();
    if lakecore::sniff::sniff(bytes) == lakecore::sniff::Format::Unknown
        && bytes.starts_with(b"PAR1")
    {
        return format!(
            "{file}: starts like Parquet (PAR1) but ends in no footer magic ({} bytes): \
             truncated or still being written? Convert the complete file",
            bytes.len()
        );
    }
    file.to_string()
}

/// Runs a `footer` subcommand.
pub fn run(args: &Args) -> CliResult {
    match &args.command {
        Command::Convert {
            input,
            output,
            to_standard: true,
            ..
        } => {
            refuse_output_over_input(output, &[input])?;
            let bytes = read(input)?;
            let standard = to_standard(&bytes)
                .map_err(|e| Failure::invalid(convert_context(input, &bytes), e))?;
            write_atomic(output, &standard)?;
            outln!(
                "{} -> {}: standard Parquet footer, {} bytes of metadata",
                input.display(),
                output.display(),
                lakecore::footer::standard_footer_range(&standard)
                    .map_or(0, |(start, _)| standard.len() - start)
            );
            Ok(())
        }
        Command::Convert {
            input,
            output,
            encrypt_columns,
            key_file,
            ..
        } => {
            refuse_output_over_input(output, &[input])?;
            let bytes = read(input)?;
            let converted = match key_file {
                Some(keys) if !encrypt_columns.is_empty() => {
                    footer_crypt::convert_encrypted(input, &bytes, encrypt_columns, keys)?
                }
                _ => convert(&bytes)
                    .map_err(|e| Failure::invalid(convert_context(input, &bytes), e))?,
            };
            write_atomic(output, &converted)?;
            let footer = ModularFooter::parse(&converted)
                .map_err(|e| Failure::invalid(output.display(), e))?;
            outln!(
                "{} -> {}: {} columns, {} row groups, {} bytes of modular metadata",
                input.display(),
                output.display(),
                footer.num_columns(),
                footer.num_row_groups(),
                footer.file_len() - footer.metadata_start()
            );
            Ok(())
        }
        Command::Inspect {
            file,
            column,
            json,
            key_file,
        } => {
            let projection = match column {
                Some(c) => Projection {
                    columns: Some(vec![ColumnSelector::parse(c)]),
                    ..Projection::default()
                },
                None => Projection::all(),
            };
            let (source, _) = open_source(file, &projection)?;
            let f = source
                .footer()
                .map_err(|e| Failure::invalid(file.display(), e))?;
            let encryption = footer_crypt::inspect_encryption(file, &f, key_file.as_deref())?;
            let p = projected_metadata(&f, &projection).map_err(|e| rejected(file, e))?;
            let mut text = inspect(&f, *json);
            if *json {
                // One document: the directory object gains `"columns":[...]`.
                text.pop();
                let _ = write!(text, ",\"columns\":{}}}", columns(&p, true));
            } else {
                text.push('\n');
                text.push_str(&columns(&p, false));
            }
            outln!("{text}");
            if !*json && !encryption.is_empty() {
                outln!("{encryption}");
            }
            Ok(())
        }
        Command::Read {
            file,
            columns,
            row_groups,
            limit,
            format,
            output,
        } => read_columns(
            file,
            columns,
            row_groups,
            *limit,
            *format,
            output.as_deref(),
        ),
        Command::Placement { file, column, json } => {
            let bytes = map(file)?;
            let f =
                ModularFooter::parse(&bytes).map_err(|e| Failure::invalid(file.display(), e))?;
            if *column >= f.num_columns() {
                return Err(Failure::Usage(format!(
                    "column {column} out of range: the file has {} columns",
                    f.num_columns()
                )));
            }
            let text =
                placement(&f, *column, *json).map_err(|e| Failure::invalid(file.display(), e))?;
            outln!("{text}");
            Ok(())
        }
    }
}

fn encoding_name(e: ModuleEncoding) -> &'static str {
    match e {
        ModuleEncoding::Thrift => "THRIFT",
        ModuleEncoding::ArrayPages => "ARRAY_PAGES",
    }
}

/// `inspect` output: `{"num_row_groups":G,"num_columns":C,"num_rows":N,"metadata_bytes":B,
/// "modules":[{"module":"PLACEMENT","encoding":"ARRAY_PAGES","offset":O,"length":L}]}`.
pub fn inspect(f: &ModularFooter<'_>, json: bool) -> String {
    let mut s = String::new();
    let meta = f.file_len() - f.metadata_start();
    if json {
        let _ = write!(
            s,
            "{{\"num_row_groups\":{},\"num_columns\":{},\"num_rows\":{},\"metadata_bytes\":{},\"modules\":[",
            f.num_row_groups(),
            f.num_columns(),
            f.num_rows(),
            meta
        );
        for (i, m) in f.modules().enumerate() {
            let _ = write!(
                s,
                "{}{{\"module\":\"{}\",\"encoding\":\"{}\",\"offset\":{},\"length\":{}}}",
                if i > 0 { "," } else { "" },
                m.module.name(),
                encoding_name(m.encoding),
                m.offset,
                m.length
            );
        }
        s.push_str("]}");
    } else {
        let _ = writeln!(
            s,
            "{} row groups, {} columns, {} rows, {} bytes of modular metadata",
            f.num_row_groups(),
            f.num_columns(),
            f.num_rows(),
            meta
        );
        for m in f.modules() {
            let _ = writeln!(
                s,
                "  {:<16} {:<11} offset {:>12} length {:>10}",
                m.module.name(),
                encoding_name(m.encoding),
                m.offset,
                m.length
            );
        }
        s.pop();
    }
    s
}

/// `placement` output (see the issue for the JSON shape).
pub fn placement(f: &ModularFooter<'_>, column: u32, json: bool) -> lakecore::Result<String> {
    let mut s = String::new();
    if json {
        let _ = write!(s, "{{\"column\":{column},\"chunks\":[");
    } else {
        let _ = writeln!(s, "column {column}");
    }
    for g in 0..f.num_row_groups() {
        let p = f.chunk_placement(column, g)?;
        let mut dict = String::new();
        for (i, d) in p.dictionary_pages.iter().enumerate() {
            let _ = write!(dict, "{}{}", if i > 0 { "," } else { "" }, d?);
        }
        if json {
            let _ = write!(
                s,
                "{}{{\"row_group\":{g},\"data_page_offset\":{},\"dictionary_page_offsets\":[{dict}],\"total_compressed_size\":{},\"total_uncompressed_size\":{},\"num_values\":{},\"codec\":{}}}",
                if g > 0 { "," } else { "" },
                p.data_page_offset,
                p.total_compressed_size,
                p.total_uncompressed_size,
                p.num_values,
                p.codec
            );
        } else {
            let _ = writeln!(
                s,
                "  row group {g}: data page {} dictionary [{dict}] compressed {} uncompressed {} values {} codec {}",
                p.data_page_offset,
                p.total_compressed_size,
                p.total_uncompressed_size,
                p.num_values,
                p.codec
            );
        }
    }
    if json {
        s.push_str("]}");
    } else {
        s.pop();
    }
    Ok(s)
}

/// `footer read`: the projection through the modular footer, written as CSV, JSON or Parquet.
fn read_columns(
    file: &Path,
    columns: &[String],
    row_groups: &[usize],
    limit: Option<usize>,
    format: ReadFormat,
    output: Option<&Path>,
) -> CliResult {
    if let Some(out) = output {
        refuse_output_over_input(out, &[file])?;
    }
    if format == ReadFormat::Parquet && output.is_none() {
        return Err(Failure::Usage(
            "--format parquet writes a file: give it with -o OUT.parquet".into(),
        ));
    }
    let projection = Projection {
        columns: (!columns.is_empty())
            .then(|| columns.iter().map(|c| ColumnSelector::parse(c)).collect()),
        row_groups: (!row_groups.is_empty()).then(|| row_groups.to_vec()),
        ..Projection::default()
    };
    let parquet_err = |e: parquet::errors::ParquetError| parquet_failure(file, e);
    let (source, remote) = open_source(file, &projection)?;
    // Sniff before building the reader so a standard file gets the usual hint.
    source
        .footer()
        .map_err(|e| Failure::invalid(file.display(), e))?;
    let (schema, reader): (arrow_schema::SchemaRef, Batches) = match (source, remote) {
        #[cfg(feature = "object-store")]
        (source, Some(remote)) => {
            let f = source
                .footer()
                .map_err(|e| Failure::invalid(file.display(), e))?;
            let projected = projected_metadata(&f, &projection).map_err(|e| rejected(file, e))?;
            read_remote(file, remote, projected, limit)?
        }
        (Source::Local(bytes), _) => {
            let data = bytes::Bytes::from_owner(bytes);
            let (mut builder, projected) = match reader_builder(data, &projection) {
                Ok(b) => b,
                Err(parquet::errors::ParquetError::General(m)) => {
                    return Err(Failure::Rejected(format!("{}: {m}", file.display())))
                }
                Err(e) => return Err(parquet_err(e)),
            };
            if let Some(n) = limit {
                builder = builder.with_limit(n);
            }
            let schema = std::sync::Arc::new(
                parquet::arrow::parquet_to_arrow_schema_by_columns(
                    builder.parquet_schema(),
                    projected.mask.clone(),
                    builder.metadata().file_metadata().key_value_metadata(),
                )
                .map_err(parquet_err)?,
            );
            let reader = builder.build().map_err(parquet_err)?;
            let what = file.display().to_string();
            let batches = reader.map(move |b| {
                b.map_err(|e| match e {
                    arrow_schema::ArrowError::ExternalError(inner) => {
                        match inner.downcast::<parquet::errors::ParquetError>() {
                            Ok(p) => parquet_failure(Path::new(&what), *p),
                            Err(other) => Failure::Rejected(format!("{what}: {other}")),
                        }
                    }
                    other => Failure::Rejected(format!("{what}: {other}")),
                })
            });
            (schema, Box::new(batches))
        }
        #[cfg(feature = "object-store")]
        (Source::Remote { .. }, None) => {
            return Err(Failure::Rejected(format!(
                "{}: remote bytes without a store",
                file.display()
            )))
        }
    };
    let mut out = Vec::new();
    let arrow_err =
        |e: arrow_schema::ArrowError| Failure::Rejected(format!("{}: {e}", file.display()));
    match format {
        ReadFormat::Csv => {
            let mut w = arrow_csv::Writer::new(&mut out);
            for batch in reader {
                w.write(&batch?).map_err(arrow_err)?;
            }
        }
        ReadFormat::Json => {
            let mut w = arrow_json::ArrayWriter::new(&mut out);
            for batch in reader {
                w.write(&batch?).map_err(arrow_err)?;
            }
            w.finish().map_err(arrow_err)?;
        }
        ReadFormat::Parquet => {
            let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, schema, None)
                .map_err(parquet_err)?;
            for batch in reader {
                w.write(&batch?).map_err(parquet_err)?;
            }
            w.close().map_err(parquet_err)?;
        }
    }
    match output {
        Some(path) => write_atomic(path, &out),
        None => {
            use std::io::Write as _;
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(&out)
                .and_then(|()| stdout.flush())
                .map_err(|e| Failure::io("stdout", e))
        }
    }
}

/// The projection of a remote file as a stream of batches: arrow-rs's async reader over the
/// object ([`lakecore::io::ObjectFileReader`]: ranged GETs of the projected chunks only, merged
/// when close), its metadata the projected metadata already built from the fetched tail.
#[cfg(feature = "object-store")]
fn read_remote(
    file: &Path,
    remote: Remote,
    projected: ProjectedMetadata,
    limit: Option<usize>,
) -> Result<(arrow_schema::SchemaRef, Batches), Failure> {
    use futures::StreamExt as _;
    let url = file.display().to_string();
    let Remote { storage, path } = remote;
    let reader = storage
        .file_reader(&path)
        .map_err(|e| Failure::io(&url, e))?;
    let mask = projected.mask.clone();
    let reader = lakecore::footer::arrow::ModularAsyncReader::from_projected(reader, projected);
    let mut builder = storage
        .block_on(parquet::arrow::ParquetRecordBatchStreamBuilder::new(reader))
        .map_err(|e| parquet_failure(file, e))?
        .with_projection(mask.clone());
    if let Some(n) = limit {
        builder = builder.with_limit(n);
    }
    let schema = std::sync::Arc::new(
        parquet::arrow::parquet_to_arrow_schema_by_columns(
            builder.parquet_schema(),
            mask,
            builder.metadata().file_metadata().key_value_metadata(),
        )
        .map_err(|e| parquet_failure(file, e))?,
    );
    let mut stream = builder.build().map_err(|e| parquet_failure(file, e))?;
    let file = file.to_path_buf();
    let batches = std::iter::from_fn(move || {
        storage
            .block_on(stream.next())
            .map(|b| b.map_err(|e| parquet_failure(&file, e)))
    });
    Ok((schema, Box::new(batches)))
}

/// The schema part of `inspect`: each projected leaf's path, physical and logical type, and
/// per row group its codec and statistics. JSON: `[{"leaf":i,"path":"a.b",
/// "physical_type":"INT64","logical_type":"..."|null,"row_groups":[{"row_group":g,
/// "codec":"SNAPPY","statistics":"..."|null}]}]` (the array only; `inspect --json` puts it
/// into its object as `"columns"`).
pub fn columns(p: &ProjectedMetadata, json: bool) -> String {
    let md = &p.metadata;
    let descr = md.file_metadata().schema_descr();
    // The selected leaves' positions in the projected schema, with their file indexes.
    let mut positions = Vec::new();
    let mut it = p.leaves.iter();
    for i in 0..descr.num_columns() {
        if p.mask.leaf_included(i) {
            if let Some(&leaf) = it.next() {
                positions.push((i, leaf));
            }
        }
    }
    let mut cols = Vec::new();
    let mut text = String::new();
    for (i, leaf) in positions {
        let c = descr.column(i);
        let logical =
            c.logical_type_ref()
                .map(|l| format!("{l:?}"))
                .or_else(|| match c.converted_type() {
                    parquet::basic::ConvertedType::NONE => None,
                    t => Some(t.to_string()),
                });
        let path = c.path().string();
        let _ = writeln!(
            text,
            "column {leaf} {path}: {} {}",
            c.physical_type(),
            logical.as_deref().unwrap_or("(no logical type)")
        );
        let mut groups = Vec::new();
        for (k, rg) in md.row_groups().iter().enumerate() {
            let g = p.row_groups.get(k).copied().unwrap_or(k);
            let chunk = rg.column(i);
            let stats = chunk.statistics().map(|s| s.to_string());
            let _ = writeln!(
                text,
                "  row group {g}: {} values, codec {}, {} bytes, statistics {}",
                chunk.num_values(),
                codec_name(chunk.compression()),
                chunk.compressed_size(),
                stats.as_deref().unwrap_or("none")
            );
            groups.push(serde_json::json!({
                "row_group": g,
                "num_values": chunk.num_values(),
                "codec": codec_name(chunk.compression()),
                "compressed_size": chunk.compressed_size(),
                "statistics": stats,
            }));
        }
        cols.push(serde_json::json!({
            "leaf": leaf,
            "path": path,
            "physical_type": c.physical_type().to_string(),
            "logical_type": logical,
            "row_groups": groups,
        }));
    }
    if json {
        serde_json::Value::Array(cols).to_string()
    } else {
        text.pop();
        text
    }
}

/// The codec's Parquet name (without the writer-side level the `parquet` crate attaches).
fn codec_name(c: parquet::basic::Compression) -> &'static str {
    use parquet::basic::Compression as C;
    match c {
        C::UNCOMPRESSED => "UNCOMPRESSED",
        C::SNAPPY => "SNAPPY",
        C::GZIP(_) => "GZIP",
        C::LZO => "LZO",
        C::BROTLI(_) => "BROTLI",
        C::LZ4 => "LZ4",
        C::ZSTD(_) => "ZSTD",
        C::LZ4_RAW => "LZ4_RAW",
    }
}
