//! arrow-rs adapters (feature `arrow`): a modular footer and a projection become the
//! projected [`ParquetMetaData`] arrow-rs reads column data with.
//!
//! [`projected_metadata`] builds, with the `parquet` crate's own builders, metadata that holds
//! only what the projection needs: the schema of the selected top-level fields (a partial
//! selection inside a struct keeps the whole top-level field in the schema and narrows the
//! [`ProjectionMask`] instead, as arrow-rs does), the chunk metadata of those leaves in the
//! selected row groups, their statistics, offset index and column index, and the
//! `ARROW:schema` hint pruned to the same fields (arrow-rs pairs it with the schema's fields
//! by position). The work grows with the projection, not with the table width: the schema
//! elements are walked once (a Thrift skip per element), every other array is read at the
//! selected positions only.
//!
//! Two ways to read with it:
//! - [`ModularAsyncReader`]: an [`AsyncFileReader`] over any other one; [`ModularAsyncReader::open`]
//!   fetches the file's tail (growing it while the footer asks for earlier bytes), builds the
//!   metadata, and [`get_metadata`](AsyncFileReader::get_metadata) returns it, so
//!   [`ParquetRecordBatchStreamBuilder`] fetches nothing but the projected chunks.
//! - [`reader_builder`]: the blocking [`ParquetRecordBatchReaderBuilder`] over a
//!   [`ChunkReader`] (e.g. [`Bytes`] of a mapped file), through
//!   [`ParquetRecordBatchReaderBuilder::new_with_metadata`].
//!
//! [`ParquetRecordBatchStreamBuilder`]: parquet::arrow::ParquetRecordBatchStreamBuilder

use super::{ModularFooter, Module, TRAILER_LEN};
use crate::codec::thrift::{FieldType, Reader, Writer};
use crate::error::{Error, ErrorKind};
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use arrow_schema::Schema as ArrowSchema;
use base64::Engine as _;
use bytes::Bytes;
use core::fmt;
use core::ops::Range;
use futures::future::{BoxFuture, FutureExt};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::arrow::ProjectionMask;
use parquet::basic::{BoundaryOrder, Compression, Type as PhysicalType};
use parquet::data_type::{ByteArray, FixedLenByteArray, Int96};
use parquet::errors::ParquetError;
use parquet::file::metadata::page_index::{PageIndexBuilder, PageIndexProvider};
use parquet::file::metadata::{
    ColumnChunkMetaData, ColumnIndexBuilder, OffsetIndexBuilder, ParquetMetaData,
    ParquetMetaDataBuilder, ParquetMetaDataReader, RowGroupMetaData,
};
use parquet::file::reader::ChunkReader;
use parquet::file::statistics::{Statistics as ParquetStatistics, ValueStatistics};

/// The key of the arrow schema hint in the key/value metadata.
const ARROW_SCHEMA_KEY: &str = "ARROW:schema";

/// One column of a projection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ColumnSelector {
    /// A top-level name (all its leaves), a dotted path to a group (all leaves under it) or a
    /// dotted path to one leaf.
    Name(String),
    /// A leaf index (schema order).
    Leaf(usize),
}

impl ColumnSelector {
    /// `"3"` is leaf 3, anything else a name.
    pub fn parse(text: &str) -> Self {
        match text.parse::<usize>() {
            Ok(i) => ColumnSelector::Leaf(i),
            Err(_) => ColumnSelector::Name(text.to_string()),
        }
    }
}

impl fmt::Display for ColumnSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColumnSelector::Name(n) => write!(f, "column `{n}`"),
            ColumnSelector::Leaf(i) => write!(f, "leaf column {i}"),
        }
    }
}

/// What to read: columns (all when `None`) and row groups (all when `None`).
///
/// ```
/// use lakecore::footer::arrow::{ColumnSelector, Projection};
/// let p = Projection::columns(["id", "address.city"]).with_row_groups([0, 2]);
/// assert_eq!(p.columns.as_ref().unwrap()[1], ColumnSelector::Name("address.city".into()));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Projection {
    /// The selected columns, in any order (duplicates are harmless); `None`: all.
    pub columns: Option<Vec<ColumnSelector>>,
    /// The selected row groups, in file order once resolved; `None`: all.
    pub row_groups: Option<Vec<usize>>,
    /// Leave the offset and column indexes out of the metadata (as arrow-rs's readers do
    /// unless asked with `ArrowReaderOptions::with_page_index`): less work per chunk when
    /// the reader will not skip pages.
    pub skip_page_index: bool,
}

impl Projection {
    /// Every column of every row group.
    pub fn all() -> Self {
        Self::default()
    }

    /// The columns named (see [`ColumnSelector::Name`]).
    pub fn columns<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Self {
        Projection {
            columns: Some(
                names
                    .into_iter()
                    .map(|s| ColumnSelector::Name(s.as_ref().to_string()))
                    .collect(),
            ),
            row_groups: None,
            skip_page_index: false,
        }
    }

    /// The leaf columns with these indexes.
    pub fn leaves(indexes: impl IntoIterator<Item = usize>) -> Self {
        Projection {
            columns: Some(indexes.into_iter().map(ColumnSelector::Leaf).collect()),
            row_groups: None,
            skip_page_index: false,
        }
    }

    /// Leaves the page indexes out (see [`Projection::skip_page_index`]).
    pub fn without_page_index(mut self) -> Self {
        self.skip_page_index = true;
        self
    }

    /// Restricts to these row groups.
    pub fn with_row_groups(mut self, row_groups: impl IntoIterator<Item = usize>) -> Self {
        self.row_groups = Some(row_groups.into_iter().collect());
        self
    }
}

/// Why the projected metadata could not be built.
#[derive(Debug)]
pub enum ProjectionError {
    /// The footer is invalid (or needs bytes outside the window given).
    Footer(Error),
    /// A selector names no column of the file.
    UnknownColumn(ColumnSelector),
    /// A row group index past the file's row groups.
    RowGroupOutOfRange {
        /// The index asked for.
        row_group: usize,
        /// The file's row-group count.
        num_row_groups: u32,
    },
    /// The `parquet` crate refused what the footer holds.
    Parquet(ParquetError),
}

impl fmt::Display for ProjectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProjectionError::Footer(e) => write!(f, "modular footer: {e}"),
            ProjectionError::UnknownColumn(c) => {
                write!(
                    f,
                    "{c} does not exist in the file (see `lakecore footer inspect`)"
                )
            }
            ProjectionError::RowGroupOutOfRange {
                row_group,
                num_row_groups,
            } => write!(
                f,
                "row group {row_group} out of range: the file has {num_row_groups} row groups"
            ),
            ProjectionError::Parquet(e) => write!(f, "parquet: {e}"),
        }
    }
}

impl std::error::Error for ProjectionError {}

impl From<Error> for ProjectionError {
    fn from(e: Error) -> Self {
        ProjectionError::Footer(e)
    }
}

impl From<ParquetError> for ProjectionError {
    fn from(e: ParquetError) -> Self {
        ProjectionError::Parquet(e)
    }
}

impl From<ProjectionError> for ParquetError {
    fn from(e: ProjectionError) -> Self {
        match e {
            ProjectionError::Parquet(p) => p,
            other => ParquetError::General(other.to_string()),
        }
    }
}

/// The projected metadata and what it selects.
#[derive(Clone, Debug)]
pub struct ProjectedMetadata {
    /// Schema of the selected top-level fields, their chunks in the selected row groups,
    /// statistics and page indexes.
    pub metadata: Arc<ParquetMetaData>,
    /// The selected leaves within `metadata`'s schema (pass it to `with_projection`).
    pub mask: ProjectionMask,
    /// The selected leaves as indexes of the file's schema, ascending.
    pub leaves: Vec<usize>,
    /// The file's row groups kept, ascending (row group `i` of `metadata` is `row_groups[i]`).
    pub row_groups: Vec<usize>,
}

/// A schema element's raw bytes and shape, from one walk over the SCHEMA module.
struct Element<'a> {
    raw: &'a [u8],
    name: &'a [u8],
    num_children: usize,
}

/// The SCHEMA module split into raw elements and raw column orders.
struct RawSchema<'a> {
    elements: Vec<Element<'a>>,
    column_orders: Vec<&'a [u8]>,
}

fn raw_schema<'a>(footer: &ModularFooter<'a>) -> Result<RawSchema<'a>, Error> {
    let loc = footer.module(Module::Schema).ok_or(Error::new(
        ErrorKind::ThriftMissingField,
        footer.root_offset(),
    ))?;
    let bytes = footer.module_bytes(Module::Schema)?.unwrap_or_default();
    let mut r = Reader::new(bytes, loc.offset).with_max_depth(footer.max_depth());
    let mut st = r.enter_struct()?;
    let mut out = RawSchema {
        elements: Vec::new(),
        column_orders: Vec::new(),
    };
    while let Some(f) = r.next_field(&mut st)? {
        match f.id {
            1 | 2 => {
                let h = r.field_list(f, FieldType::Struct)?;
                for _ in 0..h.len {
                    let start = r.index();
                    if f.id == 1 {
                        let e = super::SchemaElement::parse(&mut r)?;
                        let raw = bytes.get(start..r.index()).unwrap_or_default();
                        let num_children = usize::try_from(e.num_children.unwrap_or(0))
                            .map_err(|_| Error::new(ErrorKind::InvalidValue, r.position()))?;
                        out.elements.push(Element {
                            raw,
                            name: e.name,
                            num_children,
                        });
                    } else {
                        r.skip_struct()?;
                        out.column_orders
                            .push(bytes.get(start..r.index()).unwrap_or_default());
                    }
                }
            }
            _ => r.skip_field(f)?,
        }
    }
    if out.elements.is_empty() {
        return Err(Error::new(ErrorKind::ThriftMissingField, loc.offset));
    }
    Ok(out)
}

/// A top-level field: its elements `[first, end)` and leaves `[first_leaf, end_leaf)`.
struct TopField<'a> {
    elements: Range<usize>,
    leaves: Range<usize>,
    name: &'a [u8],
}

/// Splits the elements after the root into top-level subtrees, and calls `leaf` with each
/// leaf's index and path.
fn walk<'a>(
    schema: &RawSchema<'a>,
    at: u64,
    mut leaf: impl FnMut(usize, &[&'a [u8]]),
) -> Result<Vec<TopField<'a>>, Error> {
    let bad = Error::new(ErrorKind::Mismatch, at);
    let root_children = schema.elements.first().map_or(0, |e| e.num_children);
    let mut tops = Vec::with_capacity(root_children);
    let mut i = 1usize;
    let mut leaves = 0usize;
    // Stack of (remaining children, name) of the open groups.
    let mut stack: Vec<(usize, &'a [u8])> = Vec::new();
    let mut path: Vec<&'a [u8]> = Vec::new();
    for _ in 0..root_children {
        let first = i;
        let first_leaf = leaves;
        let top_name = schema.elements.get(i).ok_or(bad)?.name;
        loop {
            let e = schema.elements.get(i).ok_or(bad)?;
            i += 1;
            path.push(e.name);
            if e.num_children == 0 {
                leaf(leaves, &path);
                leaves += 1;
                path.pop();
                // Close finished groups.
                loop {
                    match stack.last_mut() {
                        Some((remaining, _)) if *remaining > 1 => {
                            *remaining -= 1;
                            break;
                        }
                        Some(_) => {
                            stack.pop();
                            path.pop();
                        }
                        None => break,
                    }
                }
            } else {
                if stack.len() >= super::MAX_SCHEMA_DEPTH {
                    return Err(Error::new(ErrorKind::DepthLimit, at));
                }
                stack.push((e.num_children, e.name));
            }
            if stack.is_empty() {
                break;
            }
        }
        tops.push(TopField {
            elements: first..i,
            leaves: first_leaf..leaves,
            name: top_name,
        });
    }
    if i != schema.elements.len() {
        return Err(bad);
    }
    Ok(tops)
}

/// Builds the projected [`ParquetMetaData`] of `footer` (see the module docs).
///
/// ```
/// use lakecore::footer::arrow::{projected_metadata, Projection};
/// use lakecore::footer::{convert, synthetic_standard_file, ModularFooter};
/// let modular = convert(&synthetic_standard_file(5, 3, 7))?; // 5 columns, 3 row groups
/// let footer = ModularFooter::parse(&modular)?;
/// let p = projected_metadata(&footer, &Projection::leaves([1, 3]).with_row_groups([2]))?;
/// assert_eq!(p.metadata.file_metadata().schema_descr().num_columns(), 2);
/// assert_eq!(p.metadata.num_row_groups(), 1);
/// assert_eq!(p.metadata.row_group(0).ordinal(), Some(2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn projected_metadata(
    footer: &ModularFooter<'_>,
    projection: &Projection,
) -> Result<ProjectedMetadata, ProjectionError> {
    let schema = raw_schema(footer)?;
    let at = footer.root_offset();
    // Resolve the selectors to leaves while walking the schema.
    let selectors = projection.columns.as_deref();
    let mut found = alloc::vec![false; selectors.map_or(0, <[ColumnSelector]>::len)];
    let mut selected: Vec<usize> = Vec::new();
    let names: Vec<Option<Vec<&[u8]>>> = selectors
        .unwrap_or_default()
        .iter()
        .map(|s| match s {
            ColumnSelector::Name(n) => Some(n.split('.').map(str::as_bytes).collect()),
            ColumnSelector::Leaf(_) => None,
        })
        .collect();
    let tops = walk(&schema, at, |leaf, path| {
        let Some(sel) = selectors else {
            selected.push(leaf);
            return;
        };
        let mut hit = false;
        for (k, s) in sel.iter().enumerate() {
            let m = match (s, names.get(k).and_then(Option::as_ref)) {
                (ColumnSelector::Leaf(i), _) => *i == leaf,
                (ColumnSelector::Name(_), Some(parts)) => {
                    parts.len() <= path.len() && path.get(..parts.len()) == Some(&parts[..])
                }
                _ => false,
            };
            if m {
                if let Some(f) = found.get_mut(k) {
                    *f = true;
                }
                hit = true;
            }
        }
        if hit {
            selected.push(leaf);
        }
    })?;
    let num_leaves = tops.last().map_or(0, |t| t.leaves.end);
    if num_leaves != footer.num_columns() as usize {
        return Err(Error::new(ErrorKind::Mismatch, at).into());
    }
    if let Some(sel) = selectors {
        if let Some(k) = found.iter().position(|f| !f) {
            return Err(ProjectionError::UnknownColumn(
                sel.get(k).cloned().unwrap_or(ColumnSelector::Leaf(0)),
            ));
        }
    }
    // Row groups.
    let g = footer.num_row_groups();
    let row_groups: Vec<usize> = match &projection.row_groups {
        None => (0..g as usize).collect(),
        Some(list) => {
            let mut v = list.clone();
            v.sort_unstable();
            v.dedup();
            if let Some(&bad) = v.iter().find(|&&r| r >= g as usize) {
                return Err(ProjectionError::RowGroupOutOfRange {
                    row_group: bad,
                    num_row_groups: g,
                });
            }
            v
        }
    };
    // Top-level fields that hold a selected leaf, and the kept leaves (all of theirs).
    let mut kept_tops: Vec<usize> = Vec::new();
    let mut kept_leaves: Vec<usize> = Vec::new();
    let mut mask_leaves: Vec<usize> = Vec::new();
    let mut s = selected.iter().peekable();
    for (t, top) in tops.iter().enumerate() {
        let mut any = false;
        while let Some(&&l) = s.peek() {
            if l >= top.leaves.end {
                break;
            }
            if !any {
                any = true;
                kept_tops.push(t);
            }
            mask_leaves.push(kept_leaves.len() + (l - top.leaves.start));
            s.next();
        }
        if any {
            kept_leaves.extend(top.leaves.clone());
        }
    }
    let file_meta = footer.file_metadata()?;
    // The file-level metadata, decoded by the `parquet` crate from a Thrift `FileMetaData`
    // with the kept schema elements and column orders and no row groups.
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, 2);
    w.field_list(2, FieldType::Struct, 1 + tops_elements(&tops, &kept_tops));
    write_root(&mut w, &schema, kept_tops.len());
    for &t in &kept_tops {
        if let Some(top) = tops.get(t) {
            for e in schema
                .elements
                .get(top.elements.clone())
                .unwrap_or_default()
            {
                w.raw(e.raw);
            }
        }
    }
    w.field_i64(3, footer.num_rows() as i64);
    w.field_list(4, FieldType::Struct, 0);
    let mut kvs: Vec<(&[u8], Option<&[u8]>)> = Vec::new();
    let mut created_by = None;
    if let Some(fm) = &file_meta {
        created_by = fm.created_by;
        for kv in fm.key_values() {
            kvs.push(kv?);
        }
    }
    if !kvs.is_empty() {
        w.field_list(5, FieldType::Struct, kvs.len());
        for (k, v) in &kvs {
            w.struct_begin();
            w.field_binary(1, k);
            if let Some(v) = v {
                if *k == ARROW_SCHEMA_KEY.as_bytes() {
                    let hint = project_arrow_hint(v, &tops, &kept_tops)?;
                    w.field_binary(2, hint.as_bytes());
                } else {
                    w.field_binary(2, v);
                }
            }
            w.struct_end();
        }
    }
    if let Some(c) = created_by {
        w.field_binary(6, c);
    }
    if schema.column_orders.len() == num_leaves && num_leaves > 0 {
        w.field_list(7, FieldType::Struct, kept_leaves.len());
        for &l in &kept_leaves {
            w.raw(schema.column_orders.get(l).copied().unwrap_or_default());
        }
    }
    w.struct_end();
    let base = ParquetMetaDataReader::decode_metadata(w.as_bytes())?;
    let descr = base.file_metadata().schema_descr_ptr();

    // Row groups: chunk metadata, statistics, page indexes of the kept leaves.
    let rows: Vec<u64> = footer.row_group_num_rows().collect();
    let mut groups = Vec::with_capacity(row_groups.len());
    let mut page_index = PageIndexBuilder::new(row_groups.len(), kept_leaves.len());
    for (gi, &rg) in row_groups.iter().enumerate() {
        let r = rg as u32;
        let mut columns = Vec::with_capacity(kept_leaves.len());
        let mut total_uncompressed = 0i64;
        let mut first_offset = None;
        for (ci, &leaf) in kept_leaves.iter().enumerate() {
            let c = leaf as u32;
            let col = descr.column(ci);
            let p = footer.chunk_placement(c, r)?;
            let dict = p.dictionary_pages.get(0)?;
            let start = dict.unwrap_or(p.data_page_offset);
            first_offset = Some(first_offset.map_or(start, |f: u64| f.min(start)));
            total_uncompressed =
                total_uncompressed.saturating_add(p.total_uncompressed_size as i64);
            let mut b = ColumnChunkMetaData::builder(col.clone())
                .set_compression(codec(p.codec))
                .set_num_values(p.num_values as i64)
                .set_total_compressed_size(p.total_compressed_size as i64)
                .set_total_uncompressed_size(p.total_uncompressed_size as i64)
                .set_data_page_offset(p.data_page_offset as i64)
                .set_dictionary_page_offset(dict.map(|d| d as i64));
            if let Some(st) = footer.chunk_statistics(c, r)? {
                if let Some(ps) = statistics(col.physical_type(), &st)? {
                    b = b.set_statistics(ps);
                }
            }
            columns.push(b.build()?);
            if projection.skip_page_index {
                continue;
            }
            if let Some(oi) = footer.offset_index(c, r)? {
                let mut ob = OffsetIndexBuilder::new();
                let n = oi.len();
                for i in 0..n {
                    let (offset, size, first) = oi.page(i)?;
                    let next = if i + 1 < n {
                        oi.page(i + 1)?.2
                    } else {
                        rows.get(rg).copied().unwrap_or(0)
                    };
                    ob.append_offset_and_size(offset as i64, size as i32);
                    ob.append_row_count(next.saturating_sub(first) as i64);
                }
                page_index.put_offset_index(ob.build(), gi, ci);
            }
            if let Some(ci_) = footer.column_index(c, r)? {
                let mut cb = ColumnIndexBuilder::new(col.physical_type());
                for i in 0..ci_.len() {
                    let null_page = ci_.is_null_page(i)?;
                    let st = ci_.page(i)?;
                    let min = st.min.map(|b| bound_bytes(&b)).unwrap_or_default();
                    let max = st.max.map(|b| bound_bytes(&b)).unwrap_or_default();
                    let nulls = st.null_count.unwrap_or(0) as i64;
                    cb.append(null_page, min, max, nulls, st.nan_count.map(|n| n as i64));
                }
                cb.set_boundary_order(match ci_.boundary_order {
                    1 => BoundaryOrder::ASCENDING,
                    2 => BoundaryOrder::DESCENDING,
                    _ => BoundaryOrder::UNORDERED,
                });
                page_index.put_column_index(cb.build()?, gi, ci);
            }
        }
        let mut rb = RowGroupMetaData::builder(descr.clone())
            .set_num_rows(rows.get(rg).copied().unwrap_or(0) as i64)
            .set_total_byte_size(total_uncompressed)
            .set_column_metadata(columns);
        // The Thrift ordinal is an i16: larger row-group indexes have none.
        if let Ok(ordinal) = i16::try_from(rg) {
            rb = rb.set_ordinal(i32::from(ordinal));
        }
        if let Some(f) = first_offset {
            rb = rb.set_file_offset(f as i64);
        }
        groups.push(rb.build()?);
    }
    let index = page_index.build();
    let has_index = index.has_offset_indexes() || index.has_column_indexes();
    let metadata = ParquetMetaDataBuilder::new_from_metadata(base)
        .set_row_groups(groups)
        .set_page_index(if has_index {
            Some(Arc::new(index))
        } else {
            None
        })
        .build();
    let mask = ProjectionMask::leaves(&descr, mask_leaves);
    Ok(ProjectedMetadata {
        metadata: Arc::new(metadata),
        mask,
        leaves: selected,
        row_groups,
    })
}

fn tops_elements(tops: &[TopField<'_>], kept: &[usize]) -> usize {
    kept.iter()
        .filter_map(|&t| tops.get(t))
        .map(|t| t.elements.len())
        .sum()
}

/// The root element with `children` children (name and repetition as in the file).
fn write_root(w: &mut Writer, schema: &RawSchema<'_>, children: usize) {
    let name = schema.elements.first().map_or(&b"schema"[..], |e| e.name);
    w.struct_begin();
    w.field_binary(4, name);
    w.field_i32(5, children as i32);
    w.struct_end();
}

fn bound_bytes(b: &super::Bound<'_>) -> Vec<u8> {
    let mut v = Vec::with_capacity(b.len());
    v.extend_from_slice(b.prefix);
    v.extend_from_slice(b.suffix);
    v
}

fn codec(c: u8) -> Compression {
    use parquet::basic::{BrotliLevel, GzipLevel, ZstdLevel};
    match c {
        1 => Compression::SNAPPY,
        2 => Compression::GZIP(GzipLevel::default()),
        3 => Compression::LZO,
        4 => Compression::BROTLI(BrotliLevel::default()),
        5 => Compression::LZ4,
        6 => Compression::ZSTD(ZstdLevel::default()),
        7 => Compression::LZ4_RAW,
        _ => Compression::UNCOMPRESSED,
    }
}

/// The PLAIN bytes of a bound as the typed statistics of `ty` (`None`: a bound of the wrong
/// width, which the `parquet` crate also drops).
fn statistics(
    ty: PhysicalType,
    st: &super::Statistics<'_>,
) -> Result<Option<ParquetStatistics>, Error> {
    let min = st.min.map(|b| bound_bytes(&b));
    let max = st.max.map(|b| bound_bytes(&b));
    fn fixed<const N: usize>(v: &Option<Vec<u8>>) -> Option<[u8; N]> {
        v.as_deref().and_then(|b| <[u8; N]>::try_from(b).ok())
    }
    // (A macro: the `parquet` crate's value-type trait is not public.)
    macro_rules! typed {
        ($min:expr, $max:expr, $st:expr $(,)?) => {{
            let st: &super::Statistics<'_> = $st;
            let mut v = ValueStatistics::new($min, $max, None, st.null_count, false)
                .with_nan_count(st.nan_count);
            if let (Some(a), Some(b)) = (st.min, st.max) {
                v = v.with_min_is_exact(a.exact).with_max_is_exact(b.exact);
            }
            ParquetStatistics::from(v)
        }};
    }
    let int96 = |b: [u8; 12]| {
        let w = |i: usize| {
            let mut x = [0u8; 4];
            x.copy_from_slice(b.get(i * 4..i * 4 + 4).unwrap_or(&[0; 4]));
            u32::from_le_bytes(x)
        };
        let mut v = Int96::new();
        v.set_data(w(0), w(1), w(2));
        v
    };
    let flba = |v: Vec<u8>| FixedLenByteArray::from(ByteArray::from(v));
    Ok(Some(match ty {
        PhysicalType::BOOLEAN => typed!(
            min.as_deref().and_then(<[u8]>::first).map(|&b| b != 0),
            max.as_deref().and_then(<[u8]>::first).map(|&b| b != 0),
            st,
        ),
        PhysicalType::INT32 => typed!(
            fixed::<4>(&min).map(i32::from_le_bytes),
            fixed::<4>(&max).map(i32::from_le_bytes),
            st,
        ),
        PhysicalType::INT64 => typed!(
            fixed::<8>(&min).map(i64::from_le_bytes),
            fixed::<8>(&max).map(i64::from_le_bytes),
            st,
        ),
        PhysicalType::INT96 => typed!(
            fixed::<12>(&min).map(int96),
            fixed::<12>(&max).map(int96),
            st
        ),
        PhysicalType::FLOAT => typed!(
            fixed::<4>(&min).map(f32::from_le_bytes),
            fixed::<4>(&max).map(f32::from_le_bytes),
            st,
        ),
        PhysicalType::DOUBLE => typed!(
            fixed::<8>(&min).map(f64::from_le_bytes),
            fixed::<8>(&max).map(f64::from_le_bytes),
            st,
        ),
        PhysicalType::BYTE_ARRAY => typed!(min.map(ByteArray::from), max.map(ByteArray::from), st),
        PhysicalType::FIXED_LEN_BYTE_ARRAY => typed!(min.map(flba), max.map(flba), st),
    }))
}

/// The `ARROW:schema` hint pruned to the kept top-level fields (arrow-rs pairs hint fields
/// with the schema's by position); a hint that does not decode, or whose field count or kept
/// fields' names do not match the file's top-level fields, is passed on unchanged (arrow-rs
/// then ignores or reports it as it would for the standard footer).
///
/// Only the kept fields are verified and converted: the hint's `fields` vector is cut down
/// in the decoded buffer before the flatbuffer verifier runs (see [`prune_hint_fields`]), so
/// a 10,000-field hint costs its base64 decoding and the kept fields, not 10,000 conversions.
fn project_arrow_hint(
    value: &[u8],
    tops: &[TopField<'_>],
    kept: &[usize],
) -> Result<String, Error> {
    let unchanged = || String::from_utf8_lossy(value).into_owned();
    let Some(schema) = decode_arrow_schema(value, kept, tops.len()) else {
        return Ok(unchanged());
    };
    if schema.fields().len() != kept.len()
        || schema
            .fields()
            .iter()
            .zip(kept)
            .any(|(f, &t)| tops.get(t).is_none_or(|t| f.name().as_bytes() != t.name))
    {
        return Ok(unchanged());
    }
    Ok(parquet::arrow::encode_arrow_schema(&schema))
}

/// Decodes the hint `value` (base64 of an IPC schema message), keeping only the top-level
/// fields `kept` of a `fields` vector that must hold `expected` fields.
fn decode_arrow_schema(value: &[u8], kept: &[usize], expected: usize) -> Option<ArrowSchema> {
    let mut bytes = base64::engine::general_purpose::STANDARD
        .decode(value)
        .ok()?;
    let slice = match bytes.get(..4) {
        Some([255, 255, 255, 255]) => bytes.get_mut(8..)?,
        _ => &mut bytes[..],
    };
    prune_hint_fields(slice, kept, expected)?;
    let message = arrow_ipc::root_as_message(slice).ok()?;
    let fb = message.header_as_schema()?;
    arrow_ipc::convert::try_fb_to_schema(fb).ok()
}

/// Rewrites the `fields` vector of the Schema message in `buf` in place so that it holds
/// only the elements `kept` (in that order): element `j` is pointed at the table that
/// element `kept[j]` pointed at, and the length becomes `kept.len()`. The other field tables
/// stay in the buffer, unreachable, so the verifier that runs afterwards never visits them.
///
/// Every read here is bounds-checked and nothing is trusted: when the buffer does not have
/// the expected shape (`None`), or the rewrite is wrong in any way, the full flatbuffer
/// verification of the rewritten buffer rejects it and the hint passes on unchanged.
/// Flatbuffer offsets are unsigned and point forward; since `j <= kept[j]` whenever `kept`
/// ascends, the rewritten offsets stay forward, and a `kept` that does not ascend is refused.
fn prune_hint_fields(buf: &mut [u8], kept: &[usize], expected: usize) -> Option<()> {
    fn bytes<const N: usize>(buf: &[u8], pos: usize) -> Option<[u8; N]> {
        buf.get(pos..pos.checked_add(N)?)?.try_into().ok()
    }
    fn u32_at(buf: &[u8], pos: usize) -> Option<usize> {
        usize::try_from(u32::from_le_bytes(bytes(buf, pos)?)).ok()
    }
    fn u16_at(buf: &[u8], pos: usize) -> Option<u16> {
        Some(u16::from_le_bytes(bytes(buf, pos)?))
    }
    // The position of the value of field `slot` (a vtable byte offset) of the table at `t`.
    fn field(buf: &[u8], t: usize, slot: u16) -> Option<usize> {
        let soffset = i64::from(i32::from_le_bytes(bytes(buf, t)?));
        let vtable = usize::try_from(i64::try_from(t).ok()?.checked_sub(soffset)?).ok()?;
        if slot.checked_add(2)? > u16_at(buf, vtable)? {
            return None;
        }
        match u16_at(buf, vtable.checked_add(usize::from(slot))?)? {
            0 => None,
            o => t.checked_add(usize::from(o)),
        }
    }
    // The target of the offset stored at `pos`.
    fn follow(buf: &[u8], pos: usize) -> Option<usize> {
        pos.checked_add(u32_at(buf, pos)?)
    }
    if !kept.is_sorted_by(|a, b| a < b) {
        return None;
    }
    let message = follow(buf, 0)?;
    let header_type = field(buf, message, arrow_ipc::Message::VT_HEADER_TYPE)?;
    if *buf.get(header_type)? != arrow_ipc::MessageHeader::Schema.0 {
        return None;
    }
    let schema = follow(buf, field(buf, message, arrow_ipc::Message::VT_HEADER)?)?;
    let vector = follow(buf, field(buf, schema, arrow_ipc::Schema::VT_FIELDS)?)?;
    if u32_at(buf, vector)? != expected {
        return None;
    }
    let element = |i: usize| vector.checked_add(4)?.checked_add(i.checked_mul(4)?);
    for (j, &i) in kept.iter().enumerate() {
        if i >= expected {
            return None;
        }
        let target = follow(buf, element(i)?)?;
        let new_at = element(j)?;
        let offset = u32::try_from(target.checked_sub(new_at)?).ok()?;
        buf.get_mut(new_at..new_at.checked_add(4)?)?
            .copy_from_slice(&offset.to_le_bytes());
    }
    let len = u32::try_from(kept.len()).ok()?;
    buf.get_mut(vector..vector.checked_add(4)?)?
        .copy_from_slice(&len.to_le_bytes());
    Some(())
}

/// Opens the footer in `window` and builds the projected metadata; also returns where the
/// footer's metadata starts (modules and page indexes; `u64::MAX` when the footer did not
/// open), so a retry after [`ErrorKind::NeedsBytes`] fetches all of it at once instead of
/// one range further each time.
fn build(
    window: &[u8],
    options: &super::FooterOptions,
    projection: &Projection,
) -> (Result<ProjectedMetadata, ProjectionError>, u64) {
    match ModularFooter::parse_with(window, options) {
        Ok(f) => (projected_metadata(&f, projection), f.metadata_start()),
        Err(e) => (Err(ProjectionError::Footer(e)), u64::MAX),
    }
}

/// Opens the modular footer at the end of a file of `file_len` bytes, reading through
/// `fetch(range)`: first the last 64 KiB (or the whole file when smaller), then, while the
/// footer or a page index asks for earlier bytes, from there to the end. Returns the
/// projected metadata.
///
/// Each round fetches its whole window, `start..file_len`, again: a [`ChunkReader`] over
/// memory (`Bytes`, a mapped file) slices it without copying, and a file re-reads at most
/// the previous 64 KiB tail from the page cache. Joining the new bytes to the old window
/// instead cost a fresh multi-megabyte buffer per open (3.5 ms of 8.8 ms on a 10,000-column
/// footer, mostly page faults).
fn open_with<E>(
    file_len: u64,
    projection: &Projection,
    mut fetch: impl FnMut(Range<u64>) -> Result<Bytes, E>,
) -> Result<Result<ProjectedMetadata, ProjectionError>, E> {
    let mut start = file_len.saturating_sub(64 * 1024);
    loop {
        let window = fetch(start..file_len)?;
        let options = super::FooterOptions {
            origin: start,
            ..Default::default()
        };
        let (result, metadata_start) = build(&window, &options, projection);
        match result {
            Err(ProjectionError::Footer(e)) => match e.kind {
                ErrorKind::NeedsBytes { .. } if e.offset < start => {
                    start = e.offset.min(metadata_start)
                }
                _ => return Ok(Err(ProjectionError::Footer(e))),
            },
            other => return Ok(other),
        }
    }
}

/// `part` followed by `window` (the bytes fetched before it): one buffer, copied only when
/// both hold bytes.
fn prepend(part: Bytes, window: Bytes) -> Bytes {
    if window.is_empty() {
        part
    } else {
        let mut joined = Vec::with_capacity(part.len().saturating_add(window.len()));
        joined.extend_from_slice(&part);
        joined.extend_from_slice(&window);
        Bytes::from(joined)
    }
}

/// An [`AsyncFileReader`] whose metadata is the projected metadata of a modular footer; data
/// reads go to the inner reader.
///
/// ```no_run
/// use futures::TryStreamExt;
/// use lakecore::footer::arrow::{ModularAsyncReader, Projection};
/// use parquet::arrow::async_reader::AsyncFileReader;
/// use parquet::arrow::ParquetRecordBatchStreamBuilder;
/// // `file`: any AsyncFileReader (a tokio file, an object-store reader) of `len` bytes.
/// async fn first_column<R: AsyncFileReader + Unpin + Send + 'static>(
///     file: R,
///     len: u64,
/// ) -> Result<usize, parquet::errors::ParquetError> {
///     let reader = ModularAsyncReader::open(file, len, &Projection::columns(["id"])).await?;
///     let mask = reader.projected().mask.clone();
///     let stream = ParquetRecordBatchStreamBuilder::new(reader).await?
///         .with_projection(mask)
///         .build()?;
///     let batches: Vec<_> = stream.try_collect().await?;
///     Ok(batches.iter().map(|b| b.num_rows()).sum())
/// }
/// ```
#[derive(Debug)]
pub struct ModularAsyncReader<R> {
    inner: R,
    projected: ProjectedMetadata,
}

impl<R: AsyncFileReader> ModularAsyncReader<R> {
    /// Reads the footer of a file of `file_len` bytes through `inner` (its tail only) and
    /// builds the projected metadata.
    pub async fn open(
        mut inner: R,
        file_len: u64,
        projection: &Projection,
    ) -> Result<Self, ParquetError> {
        if file_len < off_len(TRAILER_LEN) {
            return Err(ParquetError::EOF(alloc::format!(
                "file of {file_len} bytes is shorter than a modular footer trailer"
            )));
        }
        let mut start = file_len.saturating_sub(64 * 1024);
        // Each round fetches only the bytes before the window that the footer asks for.
        let mut window = Bytes::new();
        let mut end = file_len;
        loop {
            let part = inner.get_bytes(start..end).await?;
            window = prepend(part, window);
            end = start;
            let options = super::FooterOptions {
                origin: start,
                ..Default::default()
            };
            let (result, metadata_start) = build(&window, &options, projection);
            match result {
                Ok(projected) => return Ok(ModularAsyncReader { inner, projected }),
                Err(ProjectionError::Footer(e))
                    if matches!(e.kind, ErrorKind::NeedsBytes { .. }) && e.offset < start =>
                {
                    start = e.offset.min(metadata_start);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Wraps `inner` with metadata already projected from its footer (e.g. by a caller that
    /// fetched the footer itself to inspect it too): nothing is fetched here.
    pub fn from_projected(inner: R, projected: ProjectedMetadata) -> Self {
        ModularAsyncReader { inner, projected }
    }

    /// The projected metadata and mask.
    pub fn projected(&self) -> &ProjectedMetadata {
        &self.projected
    }

    /// The inner reader.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

fn off_len(n: usize) -> u64 {
    n as u64
}

impl<R: AsyncFileReader> AsyncFileReader for ModularAsyncReader<R> {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        self.inner.get_bytes(range)
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        self.inner.get_byte_ranges(ranges)
    }

    fn get_metadata<'a>(
        &'a mut self,
        _options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        let metadata = self.projected.metadata.clone();
        async move { Ok(metadata) }.boxed()
    }
}

/// The blocking reader: reads the footer of `reader` (its tail only), builds the projected
/// metadata and returns a [`ParquetRecordBatchReaderBuilder`] over it with the projection's
/// mask applied, plus the projected metadata.
///
/// ```
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch};
/// use bytes::Bytes;
/// use lakecore::footer::arrow::{reader_builder, Projection};
/// use lakecore::footer::convert;
/// use std::sync::Arc;
/// let ids: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
/// let values: ArrayRef = Arc::new(Int64Array::from(vec![10, 20, 30]));
/// let batch = RecordBatch::try_from_iter([("id", ids), ("v", values.clone())])?;
/// let mut standard = Vec::new();
/// let mut w = parquet::arrow::ArrowWriter::try_new(&mut standard, batch.schema(), None)?;
/// w.write(&batch)?;
/// w.close()?;
/// let modular = Bytes::from(convert(&standard)?);
/// let (builder, _) = reader_builder(modular, &Projection::columns(["v"]))?;
/// let batches = builder.build()?.collect::<Result<Vec<_>, _>>()?;
/// assert_eq!(batches[0].columns(), [values]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn reader_builder<T: ChunkReader + 'static>(
    reader: T,
    projection: &Projection,
) -> Result<(ParquetRecordBatchReaderBuilder<T>, ProjectedMetadata), ParquetError> {
    let len = reader.len();
    if len < off_len(TRAILER_LEN) {
        return Err(ParquetError::EOF(alloc::format!(
            "file of {len} bytes is shorter than a modular footer trailer"
        )));
    }
    let projected = open_with(len, projection, |r| {
        let n = usize::try_from(r.end - r.start)
            .map_err(|_| ParquetError::General("footer window too large".into()))?;
        reader.get_bytes(r.start, n)
    })??;
    let meta = ArrowReaderMetadata::try_new(projected.metadata.clone(), Default::default())?;
    let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(reader, meta)
        .with_projection(projected.mask.clone());
    Ok((builder, projected))
}

#[cfg(test)]
mod hint_tests {
    use super::*;
    use alloc::boxed::Box;
    use alloc::vec;
    use arrow_schema::{DataType, Field, Fields, TimeUnit};
    use std::collections::HashMap;

    fn schema() -> ArrowSchema {
        let meta = |k: &str| HashMap::from([(k.to_string(), "v".to_string())]);
        let fields: Vec<Field> = vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true).with_metadata(meta("doc")),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some("+01:00".into())),
                true,
            ),
            Field::new(
                "tags",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                true,
            ),
            Field::new(
                "point",
                DataType::Struct(Fields::from(vec![
                    Field::new("x", DataType::Float64, false),
                    Field::new("y", DataType::LargeUtf8, true),
                ])),
                true,
            ),
            Field::new_list("xs", Field::new_list_field(DataType::Int16, true), true),
            Field::new("d", DataType::Decimal128(20, 3), true),
            Field::new("b", DataType::LargeBinary, true),
        ];
        ArrowSchema::new_with_metadata(Fields::from(fields), meta("owner"))
    }

    fn full_decode(value: &[u8]) -> ArrowSchema {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(value)
            .unwrap();
        let message = arrow_ipc::root_as_message(&bytes[8..]).unwrap();
        arrow_ipc::convert::try_fb_to_schema(message.header_as_schema().unwrap()).unwrap()
    }

    /// Every subset of the eight fields: the pruned decode equals the full decode projected.
    #[test]
    fn pruned_hint_equals_the_full_decode_projected() {
        let schema = schema();
        let value = parquet::arrow::encode_arrow_schema(&schema);
        let full = full_decode(value.as_bytes());
        assert_eq!(full, schema);
        let n = schema.fields().len();
        for mask in 0u32..(1 << n) {
            let kept: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
            let got = decode_arrow_schema(value.as_bytes(), &kept, n).unwrap();
            let want = full.project(&kept).unwrap();
            assert_eq!(got, want, "kept {kept:?}");
        }
        // A field count that does not match, an index past the end, or a kept list that does
        // not ascend: nothing is pruned or decoded.
        assert!(decode_arrow_schema(value.as_bytes(), &[0], n + 1).is_none());
        assert!(decode_arrow_schema(value.as_bytes(), &[0, n], n).is_none());
        assert!(decode_arrow_schema(value.as_bytes(), &[2, 1], n).is_none());
    }

    /// Every single-byte change of the decoded message (each bit flipped, and 0x00 / 0xff)
    /// is pruned and decoded without a panic; whatever decodes has the kept field count.
    #[test]
    fn a_corrupt_hint_never_panics() {
        let value = parquet::arrow::encode_arrow_schema(&schema());
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(value.as_bytes())
            .unwrap();
        let n = schema().fields().len();
        let kept = [1usize, 4, 7];
        let (mut decoded, mut refused) = (0, 0);
        for pos in 0..bytes.len() {
            let mut variants: Vec<u8> = (0..8).map(|b| bytes[pos] ^ (1 << b)).collect();
            variants.extend([0x00, 0xff]);
            for v in variants {
                let mut changed = bytes.clone();
                changed[pos] = v;
                let encoded = base64::engine::general_purpose::STANDARD.encode(&changed);
                match decode_arrow_schema(encoded.as_bytes(), &kept, n) {
                    Some(s) => {
                        assert_eq!(s.fields().len(), kept.len());
                        decoded += 1;
                    }
                    None => refused += 1,
                }
            }
        }
        // Both outcomes occur: the check is not vacuous either way.
        assert!(
            decoded > 0 && refused > 0,
            "{decoded} decoded, {refused} refused"
        );
    }
}
