//! Standard Parquet file -> the same file with a modular footer (feature `parquet`).
//!
//! The classic footer (`...[FileMetaData][len LE]PAR1`) and every chunk's `ColumnIndex` /
//! `OffsetIndex` are read with the `parquet` crate ([`ParquetMetaDataReader`]); its
//! [`ParquetMetaData`] is mapped to a [`FooterInput`], and the data pages are written
//! unchanged followed by a modular footer.
//!
//! Mapping decisions (also in `docs/FORMATS.md`):
//! - min/max are the `parquet` crate's `Statistics::min_bytes_opt/max_bytes_opt` (it reads
//!   `min_value`/`max_value` and falls back to the deprecated `min`/`max` only when both are
//!   absent); exactness is its `min_is_exact`/`max_is_exact`.
//! - `IS_FULLY_DICTIONARY_ENCODED` is true iff `encoding_stats` is present and every data page
//!   entry (DATA_PAGE, DATA_PAGE_V2) with a non-zero count uses PLAIN_DICTIONARY or
//!   RLE_DICTIONARY; without `encoding_stats` it is false (unknown).
//! - A chunk has zero or one dictionary page (`dictionary_page_offset`).
//! - Column-index values are re-encoded from the crate's typed values to their PLAIN bytes
//!   (little-endian numbers, one byte per boolean, INT96 as 12 bytes, byte arrays as is);
//!   null pages carry no min/max.
//! - The schema elements, column orders and key/value metadata are copied verbatim (the raw
//!   Compact-Thrift values of `FileMetaData` fields 2, 7 and 5): the `parquet` crate keeps no
//!   Thrift form of them, and copying keeps every field it does not model.
//! - The data region kept is `[0, d)` with `d` the lowest of the footer start and every page
//!   index offset; bytes after it (old page indexes, bloom filters) are dropped.
//! - Encrypted footers (`PARE` magic, or `encryption_algorithm` in a plaintext footer) are
//!   [`ErrorKind::UnsupportedVersion`].
//! - Errors the `parquet` crate reports carry no offset: they are reported at the footer's
//!   start, [`ErrorKind::Truncated`] for end-of-input, [`ErrorKind::InvalidValue`] otherwise.

use super::writer::{
    ChunkMeta, ColumnIndexInput, FooterInput, MinMax, PageLocationInput, PageStatsInput, StatsInput,
};
use crate::codec::thrift::{FieldType, Reader, Writer};
use crate::error::{off, Error, ErrorKind, Result};
use alloc::format;
use alloc::vec::Vec;
use bytes::Bytes;
use parquet::basic::{Encoding, PageType, Type as PhysicalType};
use parquet::errors::ParquetError;
use parquet::file::metadata::{
    ColumnChunkMetaData, PageIndexPolicy, ParquetMetaData, ParquetMetaDataOptions,
    ParquetMetaDataReader,
};
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::page_index::offset_index::PageLocation;
use parquet::file::reader::{ChunkReader, Length};
use parquet::file::statistics::Statistics;

/// Converts a standard Parquet file to the same file with a modular footer.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let original = std::fs::read("table.parquet")?;
/// let modular = lakecore::footer::convert(&original)?;
/// let footer = lakecore::footer::ModularFooter::parse(&modular)?;
/// println!("{} columns", footer.num_columns());
/// # Ok(()) }
/// ```
///
/// ```
/// use lakecore::footer::{convert, synthetic_standard_file};
/// use lakecore::footer::ModularFooter;
/// let standard = synthetic_standard_file(3, 2, 42); // 3 columns, 2 row groups
/// let modular = convert(&standard)?;
/// let footer = ModularFooter::parse(&modular)?;
/// assert_eq!((footer.num_columns(), footer.num_row_groups()), (3, 2));
/// footer.validate()?;
/// # Ok::<(), lakecore::Error>(())
/// ```
pub fn convert(file: &[u8]) -> Result<Vec<u8>> {
    let (input, data_end) = read_standard(file)?;
    let mut out = Vec::with_capacity(data_end + data_end / 8 + 1024);
    out.extend_from_slice(file.get(..data_end).unwrap_or_default());
    input.write(&mut out)?;
    Ok(out)
}

/// Where the classic footer lies: `(offset, length)` of the `FileMetaData` struct.
///
/// Errors: [`ErrorKind::Truncated`] (under 12 bytes), [`ErrorKind::UnsupportedVersion`]
/// (`PARE`, an encrypted footer), [`ErrorKind::BadMagic`], [`ErrorKind::InvalidLength`]
/// (footer length past the leading magic).
pub fn standard_footer_range(file: &[u8]) -> Result<(usize, usize)> {
    let n = file.len();
    if n < 12 {
        return Err(Error::new(ErrorKind::Truncated, off(n)));
    }
    let magic = file.get(n - 4..).unwrap_or_default();
    if magic == b"PARE" {
        return Err(Error::new(ErrorKind::UnsupportedVersion, off(n - 4)));
    }
    if magic != b"PAR1" || file.get(..4) != Some(&b"PAR1"[..]) {
        return Err(Error::new(ErrorKind::BadMagic, off(n - 4)));
    }
    let mut lb = [0u8; 4];
    lb.copy_from_slice(file.get(n - 8..n - 4).unwrap_or(&[0; 4]));
    let len = u32::from_le_bytes(lb) as usize;
    let start = (n - 8)
        .checked_sub(len)
        .filter(|&s| s >= 4)
        .ok_or(Error::new(ErrorKind::InvalidLength, off(n - 8)))?;
    Ok((start, len))
}

/// A borrowed file as the `parquet` crate's [`ChunkReader`]: it copies only the ranges it
/// asks for (the footer and the page indexes), never the data pages.
struct SliceReader<'a>(&'a [u8]);

impl Length for SliceReader<'_> {
    fn len(&self) -> u64 {
        off(self.0.len())
    }
}

impl<'a> ChunkReader for SliceReader<'a> {
    type T = &'a [u8];

    fn get_read(&self, start: u64) -> parquet::errors::Result<&'a [u8]> {
        usize::try_from(start)
            .ok()
            .and_then(|s| self.0.get(s..))
            .ok_or_else(|| ParquetError::EOF(format!("read at {start} past the end")))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        usize::try_from(start)
            .ok()
            .and_then(|s| self.0.get(s..s.checked_add(length)?))
            .map(Bytes::copy_from_slice)
            .ok_or_else(|| ParquetError::EOF(format!("range {start}+{length} past the end")))
    }
}

/// Reads the standard footer and page indexes with the `parquet` crate and maps them to the
/// writer's input, plus the length of the data region to keep.
pub fn read_standard(file: &[u8]) -> Result<(FooterInput, usize)> {
    let (start, len) = standard_footer_range(file)?;
    let at = off(start);
    let raw = raw_modules(file.get(start..start + len).unwrap_or_default(), at)?;
    let md = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Optional)
        .with_metadata_options(Some(
            ParquetMetaDataOptions::new().with_encoding_stats_as_mask(false),
        ))
        .parse_and_finish(&SliceReader(file))
        .map_err(|e| parquet_error(&e, at))?;
    let (input, data_end) = map_metadata(&md, raw, start)?;
    Ok((input, data_end))
}

fn parquet_error(e: &ParquetError, at: u64) -> Error {
    let kind = match e {
        ParquetError::EOF(_) | ParquetError::NeedMoreData(_) => ErrorKind::Truncated,
        _ => ErrorKind::InvalidValue,
    };
    Error::new(kind, at)
}

/// The verbatim THRIFT-module values of a `FileMetaData`: schema elements (field 2), key/value
/// metadata (5) and column orders (7), each a raw `list` value with its header.
#[derive(Default)]
struct RawModules {
    schema: Vec<u8>,
    schema_at: u64,
    key_value_metadata: Option<Vec<u8>>,
    column_orders: Option<Vec<u8>>,
    version: Option<i32>,
    /// Each `RowGroup` struct re-encoded without `columns` (field 1).
    row_groups: Vec<Vec<u8>>,
}

/// Copies fields 2, 5 and 7 of the `FileMetaData` struct (every other field is skipped),
/// checking them with the same walks the modular reader applies to its THRIFT modules, so
/// whatever converts also validates; `encryption_algorithm` (field 8) is
/// [`ErrorKind::UnsupportedVersion`]. Values are not interpreted here: the `parquet` crate
/// decodes the same bytes.
fn raw_modules(footer: &[u8], origin: u64) -> Result<RawModules> {
    let mut r = Reader::new(footer, origin);
    let mut st = r.enter_struct()?;
    let mut out = RawModules::default();
    let mut schema = None;
    while let Some(f) = r.next_field(&mut st)? {
        match f.id {
            1 => out.version = Some(r.field_i32(f)?),
            4 => {
                let h = r.field_list(f, FieldType::Struct)?;
                for _ in 0..h.len {
                    out.row_groups.push(row_group_without_columns(&mut r)?);
                }
            }
            2 => {
                out.schema_at = r.position();
                let raw = raw_struct_list(&mut r, f, |r| r.skip_struct())?;
                schema = Some(raw.to_vec());
            }
            5 => {
                let raw =
                    raw_struct_list(&mut r, f, |r| super::schema::parse_key_value(r).map(|_| ()))?;
                out.key_value_metadata = Some(raw.to_vec());
            }
            7 => {
                let raw = raw_struct_list(&mut r, f, |r| r.skip_struct())?;
                out.column_orders = Some(raw.to_vec());
            }
            8 => return Err(Error::new(ErrorKind::UnsupportedVersion, f.offset)),
            _ => r.skip_field(f)?,
        }
    }
    out.schema = crate::codec::thrift::required(schema, &st)?;
    Ok(out)
}

/// One `RowGroup` struct re-encoded without field 1 (`columns`): every other field is copied
/// verbatim (its value bytes; headers re-encoded, since their id deltas change).
fn row_group_without_columns(r: &mut Reader<'_>) -> Result<Vec<u8>> {
    let at = r.position();
    let mut st = r.enter_struct()?;
    let mut w = Writer::new();
    w.struct_begin();
    while let Some(f) = r.next_field(&mut st)? {
        if f.id == 1 {
            r.skip_field(f)?;
            continue;
        }
        super::standard::copy_field(r, &mut w, f)?;
    }
    w.struct_end();
    let bytes = w.into_bytes();
    // The fields the ROW_GROUPS module knows must have their types (the modular reader
    // checks them); an error names the original struct's first byte.
    let mut check = Reader::new(&bytes, at).with_max_depth(r.max_depth());
    super::extras::RowGroupInfo::parse(&mut check).map_err(|e| Error::new(e.kind, at))?;
    Ok(bytes)
}

/// The raw bytes of a `list<struct>` field value, each element checked by `check`.
fn raw_struct_list<'a>(
    r: &mut Reader<'a>,
    f: crate::codec::thrift::Field,
    check: impl Fn(&mut Reader<'a>) -> Result<()>,
) -> Result<&'a [u8]> {
    let before = *r;
    let h = r.field_list(f, FieldType::Struct)?;
    for _ in 0..h.len {
        check(r)?;
    }
    let used = r.index() - before.index();
    before
        .rest()
        .get(..used)
        .ok_or(Error::new(ErrorKind::Truncated, r.position()))
}

/// Checks the copied schema elements with the modular reader's schema walk: its leaves must
/// be the `parquet` crate's columns, with the same physical types.
fn check_schema(raw: &[u8], at: u64, physical_types: &[u8]) -> Result<()> {
    let schema =
        super::schema::Schema::from_element_list(raw, at, crate::codec::thrift::DEFAULT_MAX_DEPTH)?;
    let mut n = 0usize;
    for leaf in schema.leaves() {
        let leaf = leaf?;
        let t = leaf.element.physical_type;
        let want = physical_types.get(n).map(|&t| i32::from(t));
        if t.is_none() || t != want {
            return Err(Error::new(ErrorKind::Mismatch, at));
        }
        n += 1;
    }
    if n != physical_types.len() {
        return Err(Error::new(ErrorKind::Mismatch, at));
    }
    Ok(())
}

fn nonneg(v: i64, at: u64) -> Result<u64> {
    u64::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidLength, at))
}

fn type_code(t: PhysicalType) -> u8 {
    match t {
        PhysicalType::BOOLEAN => 0,
        PhysicalType::INT32 => 1,
        PhysicalType::INT64 => 2,
        PhysicalType::INT96 => 3,
        PhysicalType::FLOAT => 4,
        PhysicalType::DOUBLE => 5,
        PhysicalType::BYTE_ARRAY => 6,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => 7,
    }
}

fn map_metadata(
    md: &ParquetMetaData,
    raw: RawModules,
    start: usize,
) -> Result<(FooterInput, usize)> {
    let at = off(start);
    let fm = md.file_metadata();
    let schema = fm.schema_descr();
    let c = schema.num_columns();
    let g = md.num_row_groups();
    let mut input = FooterInput {
        num_columns: u32::try_from(c).map_err(|_| Error::new(ErrorKind::LimitExceeded, at))?,
        physical_types: schema
            .columns()
            .iter()
            .map(|col| type_code(col.physical_type()))
            .collect(),
        schema_elements: Vec::new(),
        column_orders: raw.column_orders,
        key_value_metadata: raw.key_value_metadata,
        created_by: fm.created_by().map(|s| s.as_bytes().to_vec()),
        version: raw.version,
        row_groups: raw.row_groups,
        ..FooterInput::default()
    };
    if !input.row_groups.is_empty() && input.row_groups.len() != g {
        return Err(Error::new(ErrorKind::Mismatch, at));
    }
    check_schema(&raw.schema, raw.schema_at, &input.physical_types)?;
    input.schema_elements = raw.schema;
    let mut rows = Vec::with_capacity(g);
    for rg in md.row_groups() {
        // Every row group must have C chunks before C * G sizes anything.
        if rg.num_columns() != c {
            return Err(Error::new(ErrorKind::Mismatch, at));
        }
        rows.push(nonneg(rg.num_rows(), at)?);
    }
    input.row_group_num_rows = rows;
    let mut data_end = start;
    let mut bloom_end = 0u64;
    let mut chunks: Vec<ChunkMeta> = Vec::with_capacity(c.saturating_mul(g));
    for col in 0..c {
        for (gi, rg) in md.row_groups().iter().enumerate() {
            let cc = rg
                .columns()
                .get(col)
                .ok_or(Error::new(ErrorKind::Mismatch, at))?;
            let mut m = chunk_meta(cc, at)?;
            if let (Some(o), Some(l)) = (cc.bloom_filter_offset(), cc.bloom_filter_length()) {
                bloom_end = bloom_end.max(nonneg(o, at)?.saturating_add(nonneg(l.into(), at)?));
            }
            let pi = md.page_index_for_row_group(gi);
            if let Some(oi) = pi.offset_index(col) {
                let o = cc
                    .offset_index_offset()
                    .ok_or(Error::new(ErrorKind::Mismatch, at))?;
                data_end = data_end.min(usize::try_from(nonneg(o, at)?).unwrap_or(usize::MAX));
                m.offset_index = Some(
                    oi.page_locations()
                        .iter()
                        .map(|l| page_location(l, at))
                        .collect::<Result<_>>()?,
                );
                if let Some(ub) = oi.unencoded_byte_array_data_bytes() {
                    m.offset_index_unencoded_bytes =
                        Some(ub.iter().map(|&v| nonneg(v, at)).collect::<Result<_>>()?);
                }
            }
            if let Some(ci) = pi.column_index(col) {
                let o = cc
                    .column_index_offset()
                    .ok_or(Error::new(ErrorKind::Mismatch, at))?;
                data_end = data_end.min(usize::try_from(nonneg(o, at)?).unwrap_or(usize::MAX));
                m.column_index = Some(column_index(ci, at)?);
            }
            chunks.push(m);
        }
    }
    input.chunks = chunks;
    // A Bloom filter after the first page index keeps the whole region before the footer
    // (old page indexes included): the data region must keep every byte a kept offset names.
    if bloom_end > off(data_end) {
        data_end = start;
    }
    Ok((input, data_end))
}

fn chunk_meta(cc: &ColumnChunkMetaData, at: u64) -> Result<ChunkMeta> {
    // A chunk stored in another file (`file_path`) has no data pages here to keep.
    if cc.file_path().is_some() {
        return Err(Error::new(ErrorKind::UnsupportedVersion, at));
    }
    let is_dict = |e: Encoding| e == Encoding::PLAIN_DICTIONARY || e == Encoding::RLE_DICTIONARY;
    let is_fully_dictionary_encoded = cc.page_encoding_stats().is_some_and(|stats| {
        stats.iter().all(|s| {
            let data_page =
                s.page_type == PageType::DATA_PAGE || s.page_type == PageType::DATA_PAGE_V2;
            !data_page || s.count <= 0 || is_dict(s.encoding)
        })
    });
    Ok(ChunkMeta {
        data_page_offset: nonneg(cc.data_page_offset(), at)?,
        dictionary_page_offsets: match cc.dictionary_page_offset() {
            Some(d) => alloc::vec![nonneg(d, at)?],
            None => Vec::new(),
        },
        total_compressed_size: nonneg(cc.compressed_size(), at)?,
        total_uncompressed_size: nonneg(cc.uncompressed_size(), at)?,
        num_values: nonneg(cc.num_values(), at)?,
        codec: cc.compression_codec() as u8,
        is_fully_dictionary_encoded,
        statistics: cc.statistics().map(statistics),
        offset_index: None,
        column_index: None,
        offset_index_unencoded_bytes: None,
        encodings: cc.encodings_mask().as_i32() as u32,
        encoding_stats: cc.page_encoding_stats().map(|v| {
            let mut w = Writer::new();
            w.list_header(FieldType::Struct, v.len());
            for s in v {
                w.struct_begin();
                w.field_i32(1, s.page_type as i32);
                w.field_i32(2, s.encoding as i32);
                w.field_i32(3, s.count);
                w.struct_end();
            }
            w.into_bytes()
        }),
        bloom_filter_offset: cc
            .bloom_filter_offset()
            .map(|v| nonneg(v, at))
            .transpose()?,
        bloom_filter_length: cc
            .bloom_filter_length()
            .map(|v| u32::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidLength, at)))
            .transpose()?,
        file_offset: (cc.file_offset() != 0)
            .then(|| nonneg(cc.file_offset(), at))
            .transpose()?,
        size_statistics: size_statistics(cc),
        distinct_count: cc.statistics().and_then(Statistics::distinct_count_opt),
    })
}

/// The chunk's `SizeStatistics` re-encoded from the `parquet` crate's fields, if any is set.
fn size_statistics(cc: &ColumnChunkMetaData) -> Option<Vec<u8>> {
    let ub = cc.unencoded_byte_array_data_bytes();
    let rep = cc.repetition_level_histogram();
    let def = cc.definition_level_histogram();
    if ub.is_none() && rep.is_none() && def.is_none() {
        return None;
    }
    let mut w = Writer::new();
    w.struct_begin();
    if let Some(v) = ub {
        w.field_i64(1, v);
    }
    for (id, h) in [(2, rep), (3, def)] {
        if let Some(h) = h {
            w.field_list(id, FieldType::I64, h.values().len());
            for &v in h.values() {
                w.i64(v);
            }
        }
    }
    w.struct_end();
    Some(w.into_bytes())
}

fn statistics(s: &Statistics) -> StatsInput {
    StatsInput {
        null_count: s.null_count_opt(),
        nan_count: s.nan_count_opt(),
        min_max: match (s.min_bytes_opt(), s.max_bytes_opt()) {
            (Some(min), Some(max)) => Some(MinMax {
                min: min.to_vec(),
                max: max.to_vec(),
                min_exact: s.min_is_exact(),
                max_exact: s.max_is_exact(),
            }),
            _ => None,
        },
    }
}

fn page_location(l: &PageLocation, at: u64) -> Result<PageLocationInput> {
    Ok(PageLocationInput {
        offset: nonneg(l.offset, at)?,
        compressed_size: u32::try_from(l.compressed_page_size)
            .map_err(|_| Error::new(ErrorKind::InvalidLength, at))?,
        first_row_index: nonneg(l.first_row_index, at)?,
    })
}

/// The PLAIN bytes of page `i`'s min (or max) of a column index, `None` on a null page.
fn plain_bound(ci: &ColumnIndexMetaData, i: usize, max: bool) -> Option<Vec<u8>> {
    macro_rules! pick {
        ($x:expr, $enc:expr) => {
            if max {
                $x.max_value(i).map($enc)
            } else {
                $x.min_value(i).map($enc)
            }
        };
    }
    match ci {
        ColumnIndexMetaData::BOOLEAN(x) => pick!(x, |v: &bool| alloc::vec![u8::from(*v)]),
        ColumnIndexMetaData::INT32(x) => pick!(x, |v: &i32| v.to_le_bytes().to_vec()),
        ColumnIndexMetaData::INT64(x) => pick!(x, |v: &i64| v.to_le_bytes().to_vec()),
        ColumnIndexMetaData::INT96(x) => pick!(x, |v: &parquet::data_type::Int96| {
            v.data().iter().flat_map(|w| w.to_le_bytes()).collect()
        }),
        ColumnIndexMetaData::FLOAT(x) => pick!(x, |v: &f32| v.to_le_bytes().to_vec()),
        ColumnIndexMetaData::DOUBLE(x) => pick!(x, |v: &f64| v.to_le_bytes().to_vec()),
        ColumnIndexMetaData::BYTE_ARRAY(x) | ColumnIndexMetaData::FIXED_LEN_BYTE_ARRAY(x) => {
            pick!(x, |v: &[u8]| v.to_vec())
        }
    }
}

fn column_index(ci: &ColumnIndexMetaData, at: u64) -> Result<ColumnIndexInput> {
    let n =
        usize::try_from(ci.num_pages()).map_err(|_| Error::new(ErrorKind::LimitExceeded, at))?;
    // The per-page count lists are read as whole vectors with checked lengths: the `parquet`
    // crate checks `null_counts` against the page count but not `nan_counts`, and its
    // per-page `nan_count(i)` indexes without a check.
    let counts = |v: Option<&Vec<i64>>| -> Result<Option<Vec<u64>>> {
        let Some(v) = v else { return Ok(None) };
        if v.len() != n {
            return Err(Error::new(ErrorKind::Mismatch, at));
        }
        v.iter()
            .map(|&x| nonneg(x, at))
            .collect::<Result<_>>()
            .map(Some)
    };
    let nulls = counts(ci.null_counts())?;
    let nans = counts(ci.nan_counts())?;
    let mut pages = Vec::with_capacity(n);
    for i in 0..n {
        let null_page = ci.is_null_page(i);
        pages.push(PageStatsInput {
            null_page,
            stats: StatsInput {
                null_count: nulls.as_ref().and_then(|c| c.get(i).copied()),
                nan_count: nans.as_ref().and_then(|c| c.get(i).copied()),
                min_max: (!null_page).then(|| MinMax {
                    min: plain_bound(ci, i, false).unwrap_or_default(),
                    max: plain_bound(ci, i, true).unwrap_or_default(),
                    min_exact: true,
                    max_exact: true,
                }),
            },
        });
    }
    let boundary_order = ci.get_boundary_order().map_or(0, |b| b as u8);
    fn hist<'c>(
        n: usize,
        at: u64,
        get: impl Fn(usize) -> Option<&'c [i64]>,
    ) -> Result<Option<Vec<u64>>> {
        if n == 0 || get(0).is_none() {
            return Ok(None);
        }
        let mut all = Vec::new();
        for i in 0..n {
            let h = get(i).ok_or(Error::new(ErrorKind::Mismatch, at))?;
            for &v in h {
                all.push(nonneg(v, at)?);
            }
        }
        Ok(Some(all))
    }
    Ok(ColumnIndexInput {
        boundary_order,
        pages,
        repetition_level_histograms: hist(n, at, |i| ci.repetition_level_histogram(i))?,
        definition_level_histograms: hist(n, at, |i| ci.definition_level_histogram(i))?,
    })
}

/// A synthetic standard Parquet file: `PAR1`, `columns * row_groups` fake 64-byte chunks,
/// and a classic `FileMetaData` footer (INT64 leaves with statistics, every third chunk with
/// a dictionary page) written with the crate's Thrift writer — evaluation data for demos and
/// benchmarks (the `parquet` crate decodes it). Data generation only, not part of the
/// conversion: it stays hand-written because it is about 15x faster than writing the same
/// shape through the `parquet` crate (see `docs/FORMATS.md`).
///
/// ```
/// let file = lakecore::footer::synthetic_standard_file(10, 2, 1);
/// let modular = lakecore::footer::convert(&file).unwrap();
/// let f = lakecore::footer::ModularFooter::parse(&modular).unwrap();
/// assert_eq!((f.num_columns(), f.num_row_groups()), (10, 2));
/// ```
pub fn synthetic_standard_file(columns: usize, row_groups: usize, seed: u64) -> Vec<u8> {
    const CHUNK: usize = 64;
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut file = b"PAR1".to_vec();
    file.resize(4 + columns * row_groups * CHUNK, 0);
    let rows = 1000i64;
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, 2);
    w.field_list(2, FieldType::Struct, columns + 1);
    w.struct_begin();
    w.field_binary(4, b"schema");
    w.field_i32(5, columns as i32);
    w.struct_end();
    for c in 0..columns {
        w.struct_begin();
        w.field_i32(1, 2);
        w.field_i32(3, 1);
        w.field_binary(4, format!("c{c}").as_bytes());
        w.struct_end();
    }
    w.field_i64(3, rows * row_groups as i64);
    w.field_list(4, FieldType::Struct, row_groups);
    for g in 0..row_groups {
        w.struct_begin();
        w.field_list(1, FieldType::Struct, columns);
        for c in 0..columns {
            let start = (4 + (g * columns + c) * CHUNK) as i64;
            let dict = c % 3 == 0;
            w.struct_begin();
            w.field_i64(2, start);
            w.field_struct(3);
            w.field_i32(1, 2);
            w.field_list(2, FieldType::I32, 2);
            w.i32(0);
            w.i32(3);
            w.field_list(3, FieldType::Binary, 1);
            w.binary(format!("c{c}").as_bytes());
            w.field_i32(4, 0);
            w.field_i64(5, rows);
            w.field_i64(6, CHUNK as i64 + (next() % 100) as i64);
            w.field_i64(7, CHUNK as i64);
            w.field_i64(9, if dict { start + 16 } else { start });
            if dict {
                w.field_i64(11, start);
            }
            w.field_struct(12);
            w.field_i64(3, (next() % 10) as i64);
            let lo = (next() % 1_000_000) as i64;
            w.field_binary(5, &(lo + 999).to_le_bytes());
            w.field_binary(6, &lo.to_le_bytes());
            w.struct_end();
            w.struct_end();
            w.struct_end();
        }
        w.field_i64(2, (columns * CHUNK) as i64);
        w.field_i64(3, rows);
        w.struct_end();
    }
    w.field_binary(6, b"lakecore demo");
    w.struct_end();
    let footer = w.into_bytes();
    file.extend_from_slice(&footer);
    file.extend_from_slice(&(footer.len() as u32).to_le_bytes());
    file.extend_from_slice(b"PAR1");
    file
}
