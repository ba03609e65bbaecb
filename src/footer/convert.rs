//! Standard Parquet footer -> modular footer (`alloc`).
//!
//! Reads the classic `FileMetaData` (`...[footer][len LE]PAR1`) and every chunk's
//! `ColumnIndex`/`OffsetIndex` with this crate's Compact-Thrift reader (so the converter is
//! independent of the `parquet` crate, which the tests use as the oracle), maps them to a
//! [`FooterInput`], and writes the data pages unchanged followed by a modular footer.
//!
//! Mapping decisions (also in `docs/FORMATS.md`):
//! - min/max come from `Statistics.min_value/max_value` (fields 6/5); the deprecated
//!   `min`/`max` (fields 2/1) are ignored because their sort order is ambiguous;
//!   `is_min_value_exact`/`is_max_value_exact` absent = exact.
//! - `IS_FULLY_DICTIONARY_ENCODED` is true iff `encoding_stats` is present and every data page
//!   entry (DATA_PAGE, DATA_PAGE_V2) with a non-zero count uses PLAIN_DICTIONARY or
//!   RLE_DICTIONARY; without `encoding_stats` it is false (unknown).
//! - A chunk has zero or one dictionary page (`dictionary_page_offset`).
//! - Column-index null pages carry no min/max; NaN counts come from `Statistics.nan_count`
//!   (field 9) and `ColumnIndex.nan_counts` (field 8) when the writer recorded them.
//! - The data region kept is `[0, d)` with `d` the lowest of the footer start and every page
//!   index offset; bytes after it (old page indexes, bloom filters) are dropped.
//! - Encrypted footers (`PARE`, or `encryption_algorithm` set) are
//!   [`ErrorKind::UnsupportedVersion`].

use super::writer::{
    ChunkMeta, ColumnIndexInput, FooterInput, MinMax, PageLocationInput, PageStatsInput, StatsInput,
};
use crate::codec::thrift::{required, FieldType, Reader, Writer};
use crate::error::{off, Error, ErrorKind, Result};
use alloc::format;
use alloc::vec::Vec;

/// Converts a standard Parquet file to the same file with a modular footer.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let original = std::fs::read("table.parquet")?;
/// let modular = lakecore::footer::convert::convert(&original)?;
/// let footer = lakecore::footer::ModularFooter::new(&modular, 0)?;
/// println!("{} columns", footer.num_columns());
/// # Ok(()) }
/// ```
pub fn convert(file: &[u8]) -> Result<Vec<u8>> {
    let (input, data_end) = read_standard(file)?;
    let mut out = Vec::with_capacity(data_end + data_end / 8 + 1024);
    out.extend_from_slice(file.get(..data_end).unwrap_or_default());
    input.write(&mut out)?;
    Ok(out)
}

/// Where the classic footer lies: `(offset, length)` of the `FileMetaData` struct.
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

fn nonneg_i64(v: i64, at: u64) -> Result<u64> {
    u64::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidLength, at))
}

fn small_enum(v: i32, max: i32, at: u64) -> Result<u8> {
    if (0..=max).contains(&v) {
        Ok(v as u8)
    } else {
        Err(Error::new(ErrorKind::InvalidValue, at))
    }
}

/// Parses the standard footer (and page indexes) into writer input, plus the length of the
/// data region to keep.
pub fn read_standard(file: &[u8]) -> Result<(FooterInput, usize)> {
    let (start, len) = standard_footer_range(file)?;
    let bytes = file.get(start..start + len).unwrap_or_default();
    let mut r = Reader::new(bytes, off(start));
    let mut st = r.enter_struct()?;
    let mut schema = None;
    let mut leaves: Vec<u8> = Vec::new();
    let mut row_groups = None;
    let mut input = FooterInput::default();
    let mut data_end = start;
    while let Some(f) = r.next_field(&mut st)? {
        match f.id {
            2 => {
                let raw = r.field_raw(f)?;
                leaves = leaf_types(raw, f.offset)?;
                schema = Some(raw.to_vec());
            }
            4 => {
                let h = r.field_list(f, FieldType::Struct)?;
                let mut rgs = Vec::new();
                for _ in 0..h.len {
                    rgs.push(parse_row_group(&mut r)?);
                }
                row_groups = Some(rgs);
            }
            5 => {
                let raw =
                    raw_struct_list(&mut r, f, |r| super::schema::parse_key_value(r).map(|_| ()))?;
                input.key_value_metadata = Some(raw.to_vec());
            }
            6 => input.created_by = Some(r.field_binary(f)?.to_vec()),
            7 => {
                let raw = raw_struct_list(&mut r, f, |r| r.skip_struct())?;
                input.column_orders = Some(raw.to_vec());
            }
            8 => return Err(Error::new(ErrorKind::UnsupportedVersion, f.offset)),
            _ => r.skip_field(f)?,
        }
    }
    input.schema_elements = required(schema, &st)?;
    let rgs = required(row_groups, &st)?;
    let c = leaves.len();
    let g = rgs.len();
    input.num_columns = u32::try_from(c).map_err(|_| Error::new(ErrorKind::LimitExceeded, 0))?;
    input.physical_types = leaves;
    input.row_group_num_rows = rgs.iter().map(|rg| rg.num_rows).collect();
    // Every row group must have C chunks before C * G sizes anything.
    for rg in &rgs {
        if rg.columns.len() != c {
            return Err(Error::new(ErrorKind::Mismatch, rg.offset));
        }
    }
    let mut chunks: Vec<ChunkMeta> = Vec::with_capacity(c.saturating_mul(g));
    for col in 0..c {
        for rg in &rgs {
            let raw = rg
                .columns
                .get(col)
                .ok_or(Error::new(ErrorKind::Mismatch, rg.offset))?;
            let mut m = raw.meta.clone();
            if let Some((o, l)) = raw.offset_index {
                data_end = data_end.min(usize::try_from(o).unwrap_or(usize::MAX));
                m.offset_index = Some(parse_offset_index(slice(file, o, l)?, o)?);
            }
            if let Some((o, l)) = raw.column_index {
                data_end = data_end.min(usize::try_from(o).unwrap_or(usize::MAX));
                m.column_index = Some(parse_column_index(slice(file, o, l)?, o)?);
            }
            chunks.push(m);
        }
    }
    input.chunks = chunks;
    Ok((input, data_end))
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

fn slice(file: &[u8], offset: u64, len: u64) -> Result<&[u8]> {
    let a = usize::try_from(offset).map_err(|_| Error::new(ErrorKind::OutOfBounds, offset))?;
    let b = usize::try_from(offset.saturating_add(len))
        .map_err(|_| Error::new(ErrorKind::OutOfBounds, offset))?;
    file.get(a..b)
        .ok_or(Error::new(ErrorKind::OutOfBounds, offset))
}

/// Physical types of the leaves of a raw `list<SchemaElement>` value (the tree must be
/// consistent: the same walk the modular reader does).
fn leaf_types(raw: &[u8], origin: u64) -> Result<Vec<u8>> {
    let schema = super::schema::Schema::from_element_list(
        raw,
        origin,
        crate::codec::thrift::DEFAULT_MAX_DEPTH,
    )?;
    let mut out = Vec::new();
    for leaf in schema.leaves() {
        let leaf = leaf?;
        let t = leaf
            .element
            .physical_type
            .ok_or(Error::new(ErrorKind::ThriftMissingField, origin))?;
        out.push(small_enum(t, 7, origin)?);
    }
    Ok(out)
}

struct RawChunk {
    meta: ChunkMeta,
    offset_index: Option<(u64, u64)>,
    column_index: Option<(u64, u64)>,
}

struct RawRowGroup {
    offset: u64,
    num_rows: u64,
    columns: Vec<RawChunk>,
}

fn parse_row_group(r: &mut Reader<'_>) -> Result<RawRowGroup> {
    let offset = r.position();
    let mut st = r.enter_struct()?;
    let (mut columns, mut rows) = (None, None);
    while let Some(f) = r.next_field(&mut st)? {
        match f.id {
            1 => {
                let h = r.field_list(f, FieldType::Struct)?;
                let mut cols = Vec::new();
                for _ in 0..h.len {
                    cols.push(parse_column_chunk(r)?);
                }
                columns = Some(cols);
            }
            3 => rows = Some(nonneg_i64(r.field_i64(f)?, f.offset)?),
            _ => r.skip_field(f)?,
        }
    }
    Ok(RawRowGroup {
        offset,
        num_rows: required(rows, &st)?,
        columns: required(columns, &st)?,
    })
}

fn parse_column_chunk(r: &mut Reader<'_>) -> Result<RawChunk> {
    let mut st = r.enter_struct()?;
    let mut meta = None;
    let (mut oio, mut oil, mut cio, mut cil) = (None, None, None, None);
    while let Some(f) = r.next_field(&mut st)? {
        let at = f.offset;
        match f.id {
            3 => {
                Reader::check_struct(f)?;
                meta = Some(parse_column_meta(r)?);
            }
            4 => oio = Some(nonneg_i64(r.field_i64(f)?, at)?),
            5 => oil = Some(nonneg_i64(i64::from(r.field_i32(f)?), at)?),
            6 => cio = Some(nonneg_i64(r.field_i64(f)?, at)?),
            7 => cil = Some(nonneg_i64(i64::from(r.field_i32(f)?), at)?),
            8 | 9 => return Err(Error::new(ErrorKind::UnsupportedVersion, at)),
            _ => r.skip_field(f)?,
        }
    }
    Ok(RawChunk {
        meta: required(meta, &st)?,
        offset_index: oio.zip(oil),
        column_index: cio.zip(cil),
    })
}

fn parse_column_meta(r: &mut Reader<'_>) -> Result<ChunkMeta> {
    let mut st = r.enter_struct()?;
    let mut m = ChunkMeta::default();
    let (mut codec, mut nv, mut tus, mut tcs, mut dpo) = (None, None, None, None, None);
    let mut fully_dict = false;
    while let Some(f) = r.next_field(&mut st)? {
        let at = f.offset;
        match f.id {
            4 => codec = Some(small_enum(r.field_i32(f)?, 7, at)?),
            5 => nv = Some(nonneg_i64(r.field_i64(f)?, at)?),
            6 => tus = Some(nonneg_i64(r.field_i64(f)?, at)?),
            7 => tcs = Some(nonneg_i64(r.field_i64(f)?, at)?),
            9 => dpo = Some(nonneg_i64(r.field_i64(f)?, at)?),
            11 => m.dictionary_page_offsets = alloc::vec![nonneg_i64(r.field_i64(f)?, at)?],
            12 => {
                Reader::check_struct(f)?;
                m.statistics = Some(parse_statistics(r)?);
            }
            13 => {
                let h = r.field_list(f, FieldType::Struct)?;
                fully_dict = true;
                for _ in 0..h.len {
                    let (page_type, encoding, count) = parse_encoding_stats(r)?;
                    let data_page = page_type == 0 || page_type == 3;
                    if data_page && count > 0 && encoding != 2 && encoding != 8 {
                        fully_dict = false;
                    }
                }
            }
            _ => r.skip_field(f)?,
        }
    }
    m.codec = required(codec, &st)?;
    m.num_values = required(nv, &st)?;
    m.total_uncompressed_size = required(tus, &st)?;
    m.total_compressed_size = required(tcs, &st)?;
    m.data_page_offset = required(dpo, &st)?;
    m.is_fully_dictionary_encoded = fully_dict;
    Ok(m)
}

fn parse_encoding_stats(r: &mut Reader<'_>) -> Result<(i32, i32, i32)> {
    let mut st = r.enter_struct()?;
    let (mut t, mut e, mut c) = (None, None, None);
    while let Some(f) = r.next_field(&mut st)? {
        match f.id {
            1 => t = Some(r.field_i32(f)?),
            2 => e = Some(r.field_i32(f)?),
            3 => c = Some(r.field_i32(f)?),
            _ => r.skip_field(f)?,
        }
    }
    Ok((required(t, &st)?, required(e, &st)?, required(c, &st)?))
}

fn parse_statistics(r: &mut Reader<'_>) -> Result<StatsInput> {
    let mut st = r.enter_struct()?;
    let mut s = StatsInput::default();
    let (mut min, mut max, mut min_exact, mut max_exact) = (None, None, true, true);
    while let Some(f) = r.next_field(&mut st)? {
        match f.id {
            3 => s.null_count = Some(nonneg_i64(r.field_i64(f)?, f.offset)?),
            5 => max = Some(r.field_binary(f)?),
            6 => min = Some(r.field_binary(f)?),
            7 => max_exact = r.field_bool(f)?,
            8 => min_exact = r.field_bool(f)?,
            9 => s.nan_count = Some(nonneg_i64(r.field_i64(f)?, f.offset)?),
            _ => r.skip_field(f)?,
        }
    }
    if let (Some(min), Some(max)) = (min, max) {
        s.min_max = Some(MinMax {
            min: min.to_vec(),
            max: max.to_vec(),
            min_exact,
            max_exact,
        });
    }
    Ok(s)
}

fn parse_offset_index(bytes: &[u8], origin: u64) -> Result<Vec<PageLocationInput>> {
    let mut r = Reader::new(bytes, origin);
    let mut st = r.enter_struct()?;
    let mut pages = None;
    while let Some(f) = r.next_field(&mut st)? {
        match f.id {
            1 => {
                let h = r.field_list(f, FieldType::Struct)?;
                let mut v = Vec::new();
                for _ in 0..h.len {
                    let mut ps = r.enter_struct()?;
                    let (mut o, mut s, mut fr) = (None, None, None);
                    while let Some(pf) = r.next_field(&mut ps)? {
                        let at = pf.offset;
                        match pf.id {
                            1 => o = Some(nonneg_i64(r.field_i64(pf)?, at)?),
                            2 => {
                                let x = r.field_i32(pf)?;
                                s = Some(
                                    u32::try_from(x)
                                        .map_err(|_| Error::new(ErrorKind::InvalidLength, at))?,
                                );
                            }
                            3 => fr = Some(nonneg_i64(r.field_i64(pf)?, at)?),
                            _ => r.skip_field(pf)?,
                        }
                    }
                    v.push(PageLocationInput {
                        offset: required(o, &ps)?,
                        compressed_size: required(s, &ps)?,
                        first_row_index: required(fr, &ps)?,
                    });
                }
                pages = Some(v);
            }
            _ => r.skip_field(f)?,
        }
    }
    required(pages, &st)
}

fn parse_column_index(bytes: &[u8], origin: u64) -> Result<ColumnIndexInput> {
    let mut r = Reader::new(bytes, origin);
    let mut st = r.enter_struct()?;
    let (mut nulls, mut mins, mut maxs, mut bo) = (None, None, None, None);
    let (mut counts, mut nans) = (None, None);
    while let Some(f) = r.next_field(&mut st)? {
        let at = f.offset;
        match f.id {
            1 => {
                let h = r.field_list(f, FieldType::Bool)?;
                let mut v = Vec::new();
                for _ in 0..h.len {
                    v.push(r.bool_element()?);
                }
                nulls = Some(v);
            }
            2 | 3 => {
                let h = r.field_list(f, FieldType::Binary)?;
                let mut v = Vec::new();
                for _ in 0..h.len {
                    v.push(r.binary()?);
                }
                if f.id == 2 {
                    mins = Some(v);
                } else {
                    maxs = Some(v);
                }
            }
            4 => bo = Some(small_enum(r.field_i32(f)?, 2, at)?),
            5 | 8 => {
                let h = r.field_list(f, FieldType::I64)?;
                let mut v = Vec::new();
                for _ in 0..h.len {
                    let at = r.position();
                    v.push(nonneg_i64(r.i64()?, at)?);
                }
                if f.id == 5 {
                    counts = Some(v);
                } else {
                    nans = Some(v);
                }
            }
            _ => r.skip_field(f)?,
        }
    }
    let nulls = required(nulls, &st)?;
    let mins = required(mins, &st)?;
    let maxs = required(maxs, &st)?;
    let n = nulls.len();
    let wrong = |c: &Option<Vec<u64>>| c.as_ref().is_some_and(|c| c.len() != n);
    if mins.len() != n || maxs.len() != n || wrong(&counts) || wrong(&nans) {
        return Err(Error::new(ErrorKind::Mismatch, origin));
    }
    let pages = (0..n)
        .map(|i| {
            let null_page = nulls.get(i).copied().unwrap_or(false);
            PageStatsInput {
                null_page,
                stats: StatsInput {
                    null_count: counts.as_ref().and_then(|c| c.get(i).copied()),
                    nan_count: nans.as_ref().and_then(|c| c.get(i).copied()),
                    min_max: (!null_page).then(|| MinMax {
                        min: mins.get(i).copied().unwrap_or_default().to_vec(),
                        max: maxs.get(i).copied().unwrap_or_default().to_vec(),
                        min_exact: true,
                        max_exact: true,
                    }),
                },
            }
        })
        .collect();
    Ok(ColumnIndexInput {
        boundary_order: required(bo, &st)?,
        pages,
    })
}

/// A synthetic standard Parquet file: `PAR1`, `columns * row_groups` fake 64-byte chunks,
/// and a classic `FileMetaData` footer (INT64 leaves with statistics, every third chunk with
/// a dictionary page) written with the crate's Thrift writer — evaluation data for demos and
/// benchmarks (the `parquet` crate decodes it).
///
/// ```
/// let file = lakecore::footer::convert::synthetic_standard_file(10, 2, 1);
/// let modular = lakecore::footer::convert::convert(&file).unwrap();
/// let f = lakecore::footer::ModularFooter::new(&modular, 0).unwrap();
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
