//! Modular footer -> standard Parquet footer ([`to_standard`], `alloc`): the inverse of
//! `convert`.
//!
//! The data region (every byte before the lowest module or page-index offset) is copied
//! unchanged; after it come every chunk's `ColumnIndex` (row group by row group, columns in
//! order), then every `OffsetIndex`, then the `FileMetaData`, its length and `PAR1` — the
//! order the `parquet` crate and Arrow C++ write. The Thrift structs are encoded here with
//! [`crate::codec::thrift::Writer`]; the schema, column orders, key/value metadata, encoding
//! statistics, size statistics and the row groups' own fields are the raw Compact-Thrift
//! values the modular footer keeps, copied verbatim.

use super::extras::RowGroupInfo;
use super::view::ModularFooter;
use super::{Bound, LEADING_MAGIC};
use crate::codec::thrift::{FieldType, Reader, Writer};
use crate::error::{off, Error, ErrorKind, Result};
use alloc::vec::Vec;

/// Rebuilds the standard Parquet file of a file with a modular footer: the data pages
/// unchanged, then column indexes, offset indexes and a classic `FileMetaData` footer.
///
/// The footer is validated in full first ([`ModularFooter::validate`]); a file that does not
/// end in `PARM` is [`ErrorKind::BadMagic`] (a standard Parquet file needs no conversion).
///
/// ```
/// use lakecore::footer::{convert, synthetic_standard_file, to_standard};
/// let standard = synthetic_standard_file(3, 2, 42);
/// let modular = convert(&standard)?;
/// let back = to_standard(&modular)?;
/// assert_eq!(&back[back.len() - 4..], b"PAR1");
/// assert_eq!(to_standard(&back).unwrap_err().kind, lakecore::ErrorKind::BadMagic);
/// # Ok::<(), lakecore::Error>(())
/// ```
pub fn to_standard(file: &[u8]) -> Result<Vec<u8>> {
    let footer = ModularFooter::parse(file)?;
    footer.validate()?;
    if file.get(..4) != Some(&LEADING_MAGIC[..]) {
        return Err(Error::new(ErrorKind::BadMagic, 0));
    }
    let data_end = usize::try_from(footer.metadata_start())
        .map_err(|_| Error::new(ErrorKind::OutOfBounds, footer.root_offset()))?;
    let mut out = Vec::with_capacity(file.len());
    out.extend_from_slice(
        file.get(..data_end)
            .ok_or(Error::new(ErrorKind::OutOfBounds, off(data_end)))?,
    );
    let c = footer.num_columns();
    let g = footer.num_row_groups();
    let k = c as usize * g as usize;
    // Per chunk (column-major): (offset, length) of its column index and offset index.
    let mut ci_loc: Vec<Option<(u64, usize)>> = alloc::vec![None; k];
    let mut oi_loc: Vec<Option<(u64, usize)>> = alloc::vec![None; k];
    for rg in 0..g {
        for col in 0..c {
            if let Some(bytes) = column_index_struct(&footer, col, rg)? {
                if let Some(slot) = ci_loc.get_mut((col * g + rg) as usize) {
                    *slot = Some((off(out.len()), bytes.len()));
                }
                out.extend_from_slice(&bytes);
            }
        }
    }
    for rg in 0..g {
        for col in 0..c {
            if let Some(bytes) = offset_index_struct(&footer, col, rg)? {
                if let Some(slot) = oi_loc.get_mut((col * g + rg) as usize) {
                    *slot = Some((off(out.len()), bytes.len()));
                }
                out.extend_from_slice(&bytes);
            }
        }
    }
    let meta = file_metadata(&footer, &ci_loc, &oi_loc)?;
    let len = u32::try_from(meta.len())
        .map_err(|_| Error::new(ErrorKind::LimitExceeded, footer.root_offset()))?;
    out.extend_from_slice(&meta);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&LEADING_MAGIC);
    Ok(out)
}

fn i64_of(v: u64, at: u64) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidValue, at))
}

fn i32_of(v: u64, at: u64) -> Result<i32> {
    i32::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidValue, at))
}

fn concat(b: &Bound<'_>) -> Vec<u8> {
    let mut v = Vec::with_capacity(b.len());
    v.extend_from_slice(b.prefix);
    v.extend_from_slice(b.suffix);
    v
}

/// `parquet.ColumnIndex` of a chunk.
fn column_index_struct(f: &ModularFooter<'_>, col: u32, rg: u32) -> Result<Option<Vec<u8>>> {
    let Some(ci) = f.column_index(col, rg)? else {
        return Ok(None);
    };
    let at = ci.null_pages.offset();
    let n = ci.len();
    let mut stats = Vec::with_capacity(n);
    for i in 0..n {
        stats.push(ci.page(i)?);
    }
    let mut w = Writer::new();
    w.struct_begin();
    w.field_list(1, FieldType::Bool, n);
    for i in 0..n {
        w.bool_element(ci.is_null_page(i)?);
    }
    for (id, max) in [(2, false), (3, true)] {
        w.field_list(id, FieldType::Binary, n);
        for s in &stats {
            let b = if max { s.max } else { s.min };
            w.binary(&b.as_ref().map(concat).unwrap_or_default());
        }
    }
    w.field_i32(4, i32::from(ci.boundary_order));
    let counts = |w: &mut Writer, id: i16, get: &dyn Fn(usize) -> Option<u64>| -> Result<()> {
        if (0..n).all(|i| get(i).is_none()) {
            return Ok(());
        }
        w.field_list(id, FieldType::I64, n);
        for i in 0..n {
            let v = get(i).ok_or(Error::new(ErrorKind::Mismatch, at))?;
            w.i64(i64_of(v, at)?);
        }
        Ok(())
    };
    counts(&mut w, 5, &|i| stats.get(i).and_then(|s| s.null_count))?;
    for (id, h) in [
        (6, ci.repetition_level_histograms),
        (7, ci.definition_level_histograms),
    ] {
        if let Some(h) = h {
            w.field_list(id, FieldType::I64, h.len());
            for v in h.window_values() {
                w.i64(i64_of(v, h.payload_offset())?);
            }
        }
    }
    counts(&mut w, 8, &|i| stats.get(i).and_then(|s| s.nan_count))?;
    w.struct_end();
    Ok(Some(w.into_bytes()))
}

/// `parquet.OffsetIndex` of a chunk.
fn offset_index_struct(f: &ModularFooter<'_>, col: u32, rg: u32) -> Result<Option<Vec<u8>>> {
    let Some(oi) = f.offset_index(col, rg)? else {
        return Ok(None);
    };
    let at = oi.page_offset.offset();
    let mut w = Writer::new();
    w.struct_begin();
    w.field_list(1, FieldType::Struct, oi.len());
    for i in 0..oi.len() {
        let (o, size, first) = oi.page(i)?;
        w.struct_begin();
        w.field_i64(1, i64_of(o, at)?);
        w.field_i32(2, i32_of(size, at)?);
        w.field_i64(3, i64_of(first, at)?);
        w.struct_end();
    }
    if let Some(u) = oi.unencoded_byte_array_data_bytes {
        w.field_list(2, FieldType::I64, u.len());
        for v in u.window_values() {
            w.i64(i64_of(v, u.payload_offset())?);
        }
    }
    w.struct_end();
    Ok(Some(w.into_bytes()))
}

/// The raw `list<SchemaElement>` and `list<ColumnOrder>` values of the SCHEMA module.
fn schema_lists<'a>(f: &ModularFooter<'a>) -> Result<(&'a [u8], Option<&'a [u8]>)> {
    let loc = f
        .module(super::Module::Schema)
        .ok_or(Error::new(ErrorKind::ThriftMissingField, f.root_offset()))?;
    let bytes = f.slice(loc.offset, loc.length)?;
    let mut r = Reader::new(bytes, loc.offset).with_max_depth(f.limits.max_depth);
    let mut st = r.enter_struct()?;
    let (mut elements, mut orders) = (None, None);
    while let Some(fl) = r.next_field(&mut st)? {
        match fl.id {
            1 => elements = Some(r.field_raw(fl)?),
            2 => orders = Some(r.field_raw(fl)?),
            _ => r.skip_field(fl)?,
        }
    }
    Ok((crate::codec::thrift::required(elements, &st)?, orders))
}

/// Copies field `f` (header read, value next in `r`) to `w`.
pub(super) fn copy_field(
    r: &mut Reader<'_>,
    w: &mut Writer,
    f: crate::codec::thrift::Field,
) -> Result<()> {
    if f.ty == FieldType::Bool {
        w.field_bool(f.id, f.bool_value);
        return Ok(());
    }
    let raw = r.field_raw(f)?;
    w.field_begin(f.id, f.ty);
    w.raw(raw);
    Ok(())
}

type Locs = [Option<(u64, usize)>];

/// The standard footer's `string` fields must be UTF-8 (the modular profile carries them as
/// bytes): schema names, `created_by`, key/value pairs. [`ErrorKind::InvalidValue`] at the
/// module that holds the bad string.
fn check_strings(f: &ModularFooter<'_>, fm: Option<&super::FileMetadata<'_>>) -> Result<()> {
    let utf8 = |b: &[u8], at: u64| {
        core::str::from_utf8(b)
            .map(|_| ())
            .map_err(|_| Error::new(ErrorKind::InvalidValue, at))
    };
    let schema = f.schema()?;
    for e in schema.elements() {
        utf8(e?.name, schema.offset())?;
    }
    if let (Some(m), Some(loc)) = (fm, f.module(super::Module::FileMetadata)) {
        if let Some(cb) = m.created_by {
            utf8(cb, loc.offset)?;
        }
        for kv in m.key_values() {
            let (k, v) = kv?;
            utf8(k, loc.offset)?;
            utf8(v.unwrap_or_default(), loc.offset)?;
        }
    }
    Ok(())
}

fn file_metadata(f: &ModularFooter<'_>, ci: &Locs, oi: &Locs) -> Result<Vec<u8>> {
    let at = f.root_offset();
    let (elements, orders) = schema_lists(f)?;
    let mut paths: Vec<Vec<&[u8]>> = Vec::new();
    for leaf in f.schema()?.leaves() {
        paths.push(leaf?.path().to_vec());
    }
    let fm = f.file_metadata()?;
    check_strings(f, fm.as_ref())?;
    let infos: Vec<RowGroupInfo<'_>> = match f.row_groups()? {
        Some(rg) => rg.iter().collect::<Result<_>>()?,
        None => Vec::new(),
    };
    let (c, g) = (f.num_columns(), f.num_row_groups());
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, fm.and_then(|m| m.version).unwrap_or(1));
    w.field_begin(2, FieldType::List);
    w.raw(elements);
    w.field_i64(3, i64_of(f.num_rows(), at)?);
    w.field_list(4, FieldType::Struct, g as usize);
    let rows: Vec<u64> = f.row_group_num_rows().collect();
    for rg in 0..g {
        w.struct_begin();
        w.field_list(1, FieldType::Struct, c as usize);
        let mut byte_size = 0u64;
        for col in 0..c {
            byte_size = byte_size.saturating_add(column_chunk(f, &mut w, col, rg, &paths, ci, oi)?);
        }
        let info = infos.get(rg as usize);
        let mut seen = (false, false);
        if let Some(info) = info {
            let mut r = Reader::new(info.raw, info.offset).with_max_depth(f.limits.max_depth);
            let mut st = r.enter_struct()?;
            while let Some(fl) = r.next_field(&mut st)? {
                seen.0 |= fl.id == 2;
                seen.1 |= fl.id == 3;
                copy_field(&mut r, &mut w, fl)?;
            }
        }
        if !seen.0 {
            w.field_i64(2, i64_of(byte_size, at)?);
        }
        if !seen.1 {
            let n = rows.get(rg as usize).copied().unwrap_or(0);
            w.field_i64(3, i64_of(n, at)?);
        }
        w.struct_end();
    }
    if let Some(m) = fm {
        if let Some(kv) = m.key_values_raw() {
            w.field_begin(5, FieldType::List);
            w.raw(kv);
        }
        if let Some(cb) = m.created_by {
            w.field_binary(6, cb);
        }
    }
    if let Some(o) = orders {
        w.field_begin(7, FieldType::List);
        w.raw(o);
    }
    w.struct_end();
    Ok(w.into_bytes())
}

/// Writes one `ColumnChunk` struct; returns its uncompressed size.
fn column_chunk(
    f: &ModularFooter<'_>,
    w: &mut Writer,
    col: u32,
    rg: u32,
    paths: &[Vec<&[u8]>],
    ci: &Locs,
    oi: &Locs,
) -> Result<u64> {
    let at = f.root_offset();
    let k = (col * f.num_row_groups() + rg) as usize;
    let p = f.chunk_placement(col, rg)?;
    let d = f.chunk_details(col, rg)?;
    w.struct_begin();
    w.field_i64(2, i64_of(d.file_offset, at)?);
    w.field_struct(3);
    w.field_i32(1, i32::from(p.physical_type));
    let enc = d.encodings.unwrap_or(0);
    w.field_list(2, FieldType::I32, enc.count_ones() as usize);
    for e in 0..32 {
        if enc & (1 << e) != 0 {
            w.i32(e);
        }
    }
    let path = paths
        .get(col as usize)
        .ok_or(Error::new(ErrorKind::Mismatch, at))?;
    w.field_list(3, FieldType::Binary, path.len());
    for part in path {
        w.binary(part);
    }
    w.field_i32(4, i32::from(p.codec));
    w.field_i64(5, i64_of(p.num_values, at)?);
    w.field_i64(6, i64_of(p.total_uncompressed_size, at)?);
    w.field_i64(7, i64_of(p.total_compressed_size, at)?);
    w.field_i64(9, i64_of(p.data_page_offset, at)?);
    if let Some(dict) = p.dictionary_pages.get(0)? {
        w.field_i64(11, i64_of(dict, at)?);
    }
    if let Some(s) = f.chunk_statistics(col, rg)? {
        let distinct = d.distinct_count;
        if s.null_count.is_some() || s.nan_count.is_some() || s.min.is_some() || distinct.is_some()
        {
            w.field_struct(12);
            if let Some(n) = s.null_count {
                w.field_i64(3, i64_of(n, at)?);
            }
            if let Some(n) = distinct {
                w.field_i64(4, i64_of(n, at)?);
            }
            if let (Some(min), Some(max)) = (&s.min, &s.max) {
                w.field_binary(5, &concat(max));
                w.field_binary(6, &concat(min));
                w.field_bool(7, max.exact);
                w.field_bool(8, min.exact);
            }
            if let Some(n) = s.nan_count {
                w.field_i64(9, i64_of(n, at)?);
            }
            w.struct_end();
        }
    }
    if let Some(es) = d.encoding_stats {
        w.field_begin(13, FieldType::List);
        w.raw(es);
    }
    if let Some(o) = d.bloom_filter_offset {
        w.field_i64(14, i64_of(o, at)?);
    }
    if let Some(l) = d.bloom_filter_length {
        w.field_i32(15, i32_of(u64::from(l), at)?);
    }
    if let Some(ss) = d.size_statistics {
        w.field_begin(16, FieldType::Struct);
        w.raw(ss);
    }
    w.struct_end();
    for (loc, off_id) in [
        (oi.get(k).copied().flatten(), 4),
        (ci.get(k).copied().flatten(), 6),
    ] {
        if let Some((o, len)) = loc {
            w.field_i64(off_id, i64_of(o, at)?);
            w.field_i32(off_id + 1, i32_of(off(len), at)?);
        }
    }
    w.struct_end();
    Ok(p.total_uncompressed_size)
}
