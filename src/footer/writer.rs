//! Builds a complete modular footer (`alloc`): every module, minimal bit widths, SPARSE pages
//! where a statistic is not present everywhere, a min/max common-prefix array when it saves
//! bytes, and canonical order (modules in module order, pages in array order, each
//! descriptor after its pages; the page indexes as FILE pages over the page space of all
//! chunks, with FIRST_PAGE CSRs).

use super::{
    value_type_of, ArrayEncoding, MetadataArray, Module, ModuleEncoding, PageScope, ValueType,
    MAGIC,
};
use crate::codec::bitpack::{width_for, BitPackWriter};
use crate::codec::thrift::{FieldType, Writer};
use crate::error::{off, Error, ErrorKind, Location, Result};
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

/// A min/max pair with exactness flags.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MinMax {
    /// The min bound.
    pub min: Vec<u8>,
    /// The max bound.
    pub max: Vec<u8>,
    /// Whether `min` is exact (false: truncated lower bound).
    pub min_exact: bool,
    /// Whether `max` is exact (false: truncated upper bound).
    pub max_exact: bool,
}

/// Statistics of one chunk or one page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatsInput {
    /// Null count.
    pub null_count: Option<u64>,
    /// NaN count.
    pub nan_count: Option<u64>,
    /// Min and max.
    pub min_max: Option<MinMax>,
}

/// One data page of an offset index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageLocationInput {
    /// Absolute offset.
    pub offset: u64,
    /// Compressed size (header included).
    pub compressed_size: u32,
    /// Index of the page's first row in the row group.
    pub first_row_index: u64,
}

/// One page of a column index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageStatsInput {
    /// Whether the page holds only nulls (then `stats.min_max` must be `None`).
    pub null_page: bool,
    /// The page's statistics.
    pub stats: StatsInput,
}

/// A chunk's column index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ColumnIndexInput {
    /// parquet.BoundaryOrder (0..=2).
    pub boundary_order: u8,
    /// Per-page entries.
    pub pages: Vec<PageStatsInput>,
    /// The pages' repetition-level histograms, concatenated (`pages.len() * (max level + 1)`
    /// values), if recorded.
    pub repetition_level_histograms: Option<Vec<u64>>,
    /// The pages' definition-level histograms, concatenated, if recorded.
    pub definition_level_histograms: Option<Vec<u64>>,
}

/// Everything the footer records about one column chunk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChunkMeta {
    /// Absolute offset of the first data page.
    pub data_page_offset: u64,
    /// Absolute offsets of dictionary pages.
    pub dictionary_page_offsets: Vec<u64>,
    /// Compressed size.
    pub total_compressed_size: u64,
    /// Uncompressed size.
    pub total_uncompressed_size: u64,
    /// Number of values.
    pub num_values: u64,
    /// parquet.CompressionCodec.
    pub codec: u8,
    /// Whether every data page is dictionary-encoded.
    pub is_fully_dictionary_encoded: bool,
    /// Row-group statistics.
    pub statistics: Option<StatsInput>,
    /// Offset index.
    pub offset_index: Option<Vec<PageLocationInput>>,
    /// Column index.
    pub column_index: Option<ColumnIndexInput>,
    /// The offset index's `unencoded_byte_array_data_bytes` (one per page), if recorded.
    pub offset_index_unencoded_bytes: Option<Vec<u64>>,
    /// The chunk's `encodings` as a bit set (bit e set: parquet.Encoding e is listed).
    pub encodings: u32,
    /// The raw Compact-Thrift value of the chunk's `list<parquet.PageEncodingStats>` (list
    /// header included), if recorded.
    pub encoding_stats: Option<Vec<u8>>,
    /// Absolute offset of the chunk's Bloom filter.
    pub bloom_filter_offset: Option<u64>,
    /// Length of the chunk's Bloom filter.
    pub bloom_filter_length: Option<u32>,
    /// `ColumnChunk.file_offset` when it is not 0 (pyarrow, DuckDB and the `parquet` crate
    /// write 0; the field is deprecated); `None` for 0.
    pub file_offset: Option<u64>,
    /// The raw Compact-Thrift `parquet.SizeStatistics` struct of the chunk, if recorded.
    pub size_statistics: Option<Vec<u8>>,
    /// `Statistics.distinct_count` of the chunk, if recorded.
    pub distinct_count: Option<u64>,
}

/// The input of the writer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FooterInput {
    /// Number of leaf columns.
    pub num_columns: u32,
    /// Rows of each row group.
    pub row_group_num_rows: Vec<u64>,
    /// parquet.Type of each column.
    pub physical_types: Vec<u8>,
    /// Column-major chunks: chunk (c, g) at `c * G + g`.
    pub chunks: Vec<ChunkMeta>,
    /// The raw Compact-Thrift value of `list<parquet.SchemaElement>` (list header included).
    pub schema_elements: Vec<u8>,
    /// The raw value of `list<parquet.ColumnOrder>`, if any.
    pub column_orders: Option<Vec<u8>>,
    /// `created_by`.
    pub created_by: Option<Vec<u8>>,
    /// The raw value of `list<parquet.KeyValue>`, if any.
    pub key_value_metadata: Option<Vec<u8>>,
    /// `FileMetaData.version` of the standard footer, if known.
    pub version: Option<i32>,
    /// One raw Compact-Thrift `parquet.RowGroup` struct per row group without its `columns`
    /// (field 1), or empty for no ROW_GROUPS module.
    pub row_groups: Vec<Vec<u8>>,
}

impl FooterInput {
    /// A flat schema (root `schema` + one OPTIONAL leaf per name) with default chunks.
    pub fn flat(names: &[&str], physical_types: &[u8], row_group_num_rows: &[u64]) -> Self {
        let mut w = Writer::new();
        w.list_header(FieldType::Struct, names.len() + 1);
        w.struct_begin();
        w.field_binary(4, b"schema");
        w.field_i32(5, names.len() as i32);
        w.struct_end();
        for (name, &t) in names.iter().zip(physical_types) {
            w.struct_begin();
            w.field_i32(1, i32::from(t));
            w.field_i32(3, 1);
            w.field_binary(4, name.as_bytes());
            w.struct_end();
        }
        let k = names.len() * row_group_num_rows.len();
        FooterInput {
            num_columns: names.len() as u32,
            row_group_num_rows: row_group_num_rows.to_vec(),
            physical_types: physical_types.to_vec(),
            chunks: alloc::vec![ChunkMeta::default(); k],
            schema_elements: w.into_bytes(),
            ..FooterInput::default()
        }
    }

    /// Appends the modular footer (modules, root, trailer) to `out`, which holds the file so
    /// far (`PAR1` + data pages); offsets are positions in `out`.
    ///
    /// Errors name no byte (the output is not input): [`ErrorKind::Mismatch`] for the input
    /// as a whole ([`Location::Whole`]) when `chunks`/`physical_types` do not match the
    /// counts, or at the chunk ([`Location::Entry`], its index in `chunks`) whose column-index
    /// page has min/max on a null page; [`ErrorKind::LimitExceeded`] ([`Location::Whole`])
    /// when a count or length does not fit the format's fields.
    pub fn write(&self, out: &mut Vec<u8>) -> Result<()> {
        let g = self.row_group_num_rows.len();
        let c = self.num_columns as usize;
        let k = c.checked_mul(g).ok_or(limit())?;
        if k > i32::MAX as usize || g > i32::MAX as usize || c > i32::MAX as usize {
            return Err(limit());
        }
        if self.chunks.len() != k || self.physical_types.len() != c {
            return Err(Error::at_item(ErrorKind::Mismatch, Location::Whole, 0));
        }
        let mut dir: Vec<(Module, ModuleEncoding, u64, u64)> = Vec::new();

        // SCHEMA
        let start = off(out.len());
        let mut w = Writer::new();
        w.struct_begin();
        w.field_begin(1, FieldType::List);
        w.raw(&self.schema_elements);
        if let Some(co) = &self.column_orders {
            w.field_begin(2, FieldType::List);
            w.raw(co);
        }
        w.struct_end();
        out.extend_from_slice(w.as_bytes());
        dir.push((Module::Schema, ModuleEncoding::Thrift, start, off(w.len())));

        // PLACEMENT
        let mut pages = Vec::new();
        let ch = &self.chunks;
        let dense = |f: &dyn Fn(&ChunkMeta) -> u64| -> Vec<Option<u64>> {
            ch.iter().map(|m| Some(f(m))).collect()
        };
        let mut csr = Vec::with_capacity(k + 1);
        let mut dict = Vec::new();
        csr.push(Some(0));
        for m in ch {
            dict.extend(m.dictionary_page_offsets.iter().map(|&v| Some(v)));
            csr.push(Some(off(dict.len())));
        }
        let pt: Vec<Option<u64>> = self
            .physical_types
            .iter()
            .map(|&t| Some(u64::from(t)))
            .collect();
        let placement: [(MetadataArray, Vec<Option<u64>>); 9] = [
            (
                MetadataArray::DataPageOffset,
                dense(&|m| m.data_page_offset),
            ),
            (MetadataArray::FirstDictionaryPage, csr),
            (MetadataArray::DictionaryPageOffset, dict),
            (
                MetadataArray::TotalCompressedSize,
                dense(&|m| m.total_compressed_size),
            ),
            (
                MetadataArray::TotalUncompressedSize,
                dense(&|m| m.total_uncompressed_size),
            ),
            (MetadataArray::NumValues, dense(&|m| m.num_values)),
            (MetadataArray::Codec, dense(&|m| u64::from(m.codec))),
            (MetadataArray::PhysicalType, pt),
            (
                MetadataArray::IsFullyDictionaryEncoded,
                dense(&|m| u64::from(m.is_fully_dictionary_encoded)),
            ),
        ];
        for (array, values) in &placement {
            let at = off(out.len());
            let page = encode_page(Module::Placement, *array, &Values::Ints(values), None, true)?;
            out.extend_from_slice(&page);
            pages.push((*array, at, page.len()));
        }
        for (array, page) in self.optional_placement_pages()? {
            let at = off(out.len());
            out.extend_from_slice(&page);
            pages.push((array, at, page.len()));
        }
        write_descriptor(out, &mut dir, Module::Placement, &pages)?;

        // ROW_GROUP_STATS
        let stats: Vec<Option<&StatsInput>> = ch.iter().map(|m| m.statistics.as_ref()).collect();
        let distinct: Vec<Option<u64>> = ch.iter().map(|m| m.distinct_count).collect();
        let any_distinct = distinct.iter().any(Option::is_some);
        if stats.iter().any(Option::is_some) || any_distinct {
            pages.clear();
            let mut arrays = stat_pages(Module::RowGroupStats, &stats, None)?;
            if any_distinct {
                let array = MetadataArray::DistinctCount;
                let page = encode_page(
                    Module::RowGroupStats,
                    array,
                    &Values::Ints(&distinct),
                    None,
                    false,
                )?;
                arrays.push((array, page));
            }
            for (array, page) in arrays {
                let at = off(out.len());
                out.extend_from_slice(&page);
                pages.push((array, at, page.len()));
            }
            write_descriptor(out, &mut dir, Module::RowGroupStats, &pages)?;
        }

        // OFFSET_INDEX and COLUMN_INDEX: FILE pages over the concatenated page space.
        if ch.iter().any(|m| m.offset_index.is_some()) {
            pages.clear();
            for (array, page) in offset_index_pages(ch)? {
                let at = off(out.len());
                out.extend_from_slice(&page);
                pages.push((array, at, page.len()));
            }
            write_descriptor(out, &mut dir, Module::OffsetIndex, &pages)?;
        }
        if ch.iter().any(|m| m.column_index.is_some()) {
            pages.clear();
            for (array, page) in column_index_pages(ch)? {
                let at = off(out.len());
                out.extend_from_slice(&page);
                pages.push((array, at, page.len()));
            }
            write_descriptor(out, &mut dir, Module::ColumnIndex, &pages)?;
        }

        // FILE_METADATA
        if self.created_by.is_some() || self.key_value_metadata.is_some() || self.version.is_some()
        {
            let start = off(out.len());
            let mut w = Writer::new();
            w.struct_begin();
            if let Some(cb) = &self.created_by {
                w.field_binary(1, cb);
            }
            if let Some(kv) = &self.key_value_metadata {
                w.field_begin(2, FieldType::List);
                w.raw(kv);
            }
            if let Some(v) = self.version {
                w.field_i32(3, v);
            }
            w.struct_end();
            out.extend_from_slice(w.as_bytes());
            dir.push((
                Module::FileMetadata,
                ModuleEncoding::Thrift,
                start,
                off(w.len()),
            ));
        }

        // ROW_GROUPS
        if !self.row_groups.is_empty() {
            if self.row_groups.len() != g {
                return Err(Error::at_item(ErrorKind::Mismatch, Location::Whole, 0));
            }
            let start = off(out.len());
            let mut w = Writer::new();
            w.struct_begin();
            w.field_list(1, FieldType::Struct, g);
            for rg in &self.row_groups {
                w.raw(rg);
            }
            w.struct_end();
            out.extend_from_slice(w.as_bytes());
            dir.push((
                Module::RowGroups,
                ModuleEncoding::Thrift,
                start,
                off(w.len()),
            ));
        }

        // Root + trailer.
        let mut w = Writer::new();
        w.struct_begin();
        w.field_i32(1, 1);
        w.field_i32(2, g as i32);
        w.field_i32(3, c as i32);
        let mut rows: u64 = 0;
        for &r in &self.row_group_num_rows {
            rows = rows.checked_add(r).ok_or(limit())?;
        }
        w.field_i64(4, i64::try_from(rows).map_err(|_| limit())?);
        w.field_list(5, FieldType::I64, g);
        for &r in &self.row_group_num_rows {
            w.i64(i64::try_from(r).map_err(|_| limit())?);
        }
        w.field_list(6, FieldType::Struct, dir.len());
        for (module, enc, offset, length) in &dir {
            w.struct_begin();
            w.field_i32(1, module.value());
            w.field_i32(2, enc.value());
            w.field_i64(3, i64::try_from(*offset).map_err(|_| limit())?);
            w.field_i64(4, i64::try_from(*length).map_err(|_| limit())?);
            w.struct_end();
        }
        w.struct_end();
        let root_len = u32::try_from(w.len()).map_err(|_| limit())?;
        out.extend_from_slice(w.as_bytes());
        out.extend_from_slice(&root_len.to_le_bytes());
        out.extend_from_slice(&MAGIC);
        Ok(())
    }
}

impl FooterInput {
    /// The optional PLACEMENT arrays (9..=14), each only when some chunk has a value.
    fn optional_placement_pages(&self) -> Result<Vec<(MetadataArray, Vec<u8>)>> {
        let ch = &self.chunks;
        let mut index_page = None;
        let mut pages = Vec::new();
        let mut ints = |array: MetadataArray, v: Vec<Option<u64>>| -> Result<()> {
            if v.iter().any(Option::is_some) {
                let page = encode_page(Module::Placement, array, &Values::Ints(&v), None, false)?;
                pages.push((array, page));
            }
            Ok(())
        };
        if ch.iter().any(|m| m.encodings != 0) {
            ints(
                MetadataArray::Encodings,
                ch.iter().map(|m| Some(u64::from(m.encodings))).collect(),
            )?;
        }
        let bytes_page = |array: MetadataArray,
                          get: &dyn Fn(&ChunkMeta) -> Option<&[u8]>|
         -> Result<Option<(MetadataArray, Vec<u8>)>> {
            let v: Vec<Option<&[u8]>> = ch.iter().map(get).collect();
            if v.iter().all(Option::is_none) {
                return Ok(None);
            }
            let page = encode_page(Module::Placement, array, &Values::Bytes(&v), None, false)?;
            Ok(Some((array, page)))
        };
        // ENCODING_STATS as a table of the distinct lists (first-seen order) and a per-chunk
        // index into it: writers repeat a handful of lists over every chunk.
        let mut table: Vec<&[u8]> = Vec::new();
        let mut seen: BTreeMap<&[u8], u64> = BTreeMap::new();
        let mut index: Vec<Option<u64>> = Vec::with_capacity(ch.len());
        for m in ch {
            index.push(m.encoding_stats.as_deref().map(|b| {
                *seen.entry(b).or_insert_with(|| {
                    table.push(b);
                    off(table.len() - 1)
                })
            }));
        }
        let mut encoding_stats = Vec::new();
        if !table.is_empty() {
            let t: Vec<Option<&[u8]>> = table.iter().map(|&b| Some(b)).collect();
            let (array, ia) = (
                MetadataArray::EncodingStats,
                MetadataArray::EncodingStatsIndex,
            );
            encoding_stats.push((
                array,
                encode_page(Module::Placement, array, &Values::Bytes(&t), None, true)?,
            ));
            index_page = Some((
                ia,
                encode_page(Module::Placement, ia, &Values::Ints(&index), None, false)?,
            ));
        }
        let size_statistics = bytes_page(MetadataArray::SizeStatistics, &|m| {
            m.size_statistics.as_deref()
        })?;
        let mut out: Vec<(MetadataArray, Vec<u8>)> = pages;
        out.extend(encoding_stats);
        let mut more = Vec::new();
        for (array, v) in [
            (
                MetadataArray::BloomFilterOffset,
                ch.iter().map(|m| m.bloom_filter_offset).collect::<Vec<_>>(),
            ),
            (
                MetadataArray::BloomFilterLength,
                ch.iter()
                    .map(|m| m.bloom_filter_length.map(u64::from))
                    .collect(),
            ),
            (
                MetadataArray::ChunkFileOffset,
                ch.iter().map(|m| m.file_offset).collect(),
            ),
        ] {
            if v.iter().any(Option::is_some) {
                more.push((
                    array,
                    encode_page(Module::Placement, array, &Values::Ints(&v), None, false)?,
                ));
            }
        }
        out.extend(more);
        out.extend(size_statistics);
        out.extend(index_page);
        Ok(out)
    }
}

/// A count or length too large for the format's fields: no item or byte to name.
fn limit() -> Error {
    Error::at_item(ErrorKind::LimitExceeded, Location::Whole, 0)
}

/// Values of one array: integers/booleans or byte strings; `None` = absent.
pub enum Values<'x> {
    /// Integers or booleans.
    Ints(&'x [Option<u64>]),
    /// Byte strings.
    Bytes(&'x [Option<&'x [u8]>]),
}

impl Values<'_> {
    fn len(&self) -> usize {
        match self {
            Values::Ints(v) => v.len(),
            Values::Bytes(v) => v.len(),
        }
    }

    fn present(&self, i: usize) -> bool {
        match self {
            Values::Ints(v) => v.get(i).is_some_and(Option::is_some),
            Values::Bytes(v) => v.get(i).is_some_and(Option::is_some),
        }
    }
}

fn pack(values: impl Iterator<Item = u64> + Clone, width: u8, out: &mut Vec<u8>) -> Result<()> {
    let mut w = BitPackWriter::new(width)?;
    for v in values {
        w.push(v)?;
    }
    out.extend_from_slice(&w.finish());
    Ok(())
}

/// Encodes one page (header + payload). `force_dense` requires every value present
/// ([`ErrorKind::Mismatch`] at the first absent one, [`Location::Entry`], otherwise); counts
/// too large for the header are [`ErrorKind::LimitExceeded`].
pub fn encode_page(
    module: Module,
    array: MetadataArray,
    values: &Values<'_>,
    ordinals: Option<(u32, u32)>,
    force_dense: bool,
) -> Result<Vec<u8>> {
    let n = values.len();
    let vt = value_type_of(array);
    if force_dense {
        if let Some(absent) = (0..n).find(|&i| !values.present(i)) {
            return Err(Error::at_item(
                ErrorKind::Mismatch,
                Location::Entry,
                off(absent),
            ));
        }
    }
    let present: Vec<usize> = (0..n).filter(|&i| values.present(i)).collect();
    let sparse = present.len() != n;
    let mut payload = Vec::new();
    let mut pos_width = 0u8;
    if sparse {
        // Positions are packed at the width of the domain's largest index, num_values - 1.
        pos_width = width_for(off(n.saturating_sub(1)));
        pack(present.iter().map(|&p| off(p)), pos_width, &mut payload)?;
    }
    let value_width = match values {
        Values::Ints(v) => {
            let vals = present
                .iter()
                .map(|&i| v.get(i).copied().flatten().unwrap_or(0));
            let w = if vt == ValueType::Boolean {
                1
            } else {
                width_for(vals.clone().max().unwrap_or(0))
            };
            pack(vals, w, &mut payload)?;
            w
        }
        Values::Bytes(v) => {
            let items: Vec<&[u8]> = present
                .iter()
                .map(|&i| v.get(i).copied().flatten().unwrap_or_default())
                .collect();
            let mut offsets = Vec::with_capacity(items.len() + 1);
            let mut total = 0u64;
            offsets.push(0);
            for it in &items {
                total += off(it.len());
                offsets.push(total);
            }
            let w = width_for(total);
            pack(offsets.into_iter(), w, &mut payload)?;
            for it in items {
                payload.extend_from_slice(it);
            }
            w
        }
    };
    let i32_of = |v: usize| i32::try_from(v).map_err(|_| limit());
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, module.value());
    w.field_i32(2, array.value());
    w.field_i32(3, vt.value());
    let enc = if sparse {
        ArrayEncoding::Sparse
    } else {
        ArrayEncoding::BitPacked
    };
    w.field_i32(4, enc.value());
    w.field_i32(5, i32_of(n)?);
    w.field_i32(6, i32_of(payload.len())?);
    w.field_struct(7);
    if sparse {
        w.field_struct(2);
        w.field_i32(1, i32_of(present.len())?);
        w.field_i8(2, pos_width as i8);
        w.field_i8(3, value_width as i8);
    } else {
        w.field_struct(1);
        w.field_i8(1, value_width as i8);
    }
    w.struct_end();
    w.struct_end();
    match ordinals {
        None => w.field_i32(8, PageScope::File.value()),
        Some((c, g)) => {
            w.field_i32(8, PageScope::ColumnChunk.value());
            w.field_i32(9, c as i32);
            w.field_i32(10, g as i32);
        }
    }
    w.struct_end();
    let mut page = w.into_bytes();
    page.extend_from_slice(&payload);
    Ok(page)
}

/// The pages of one chunk's column index as a COLUMN_CHUNK page group, in array order: the
/// statistics, NULL_PAGE, BOUNDARY_ORDER and the level histograms. The plaintext
/// COLUMN_INDEX module no longer uses groups (its pages are FILE pages over all chunks); the
/// encrypting writer seals one such group per protected chunk. `i` is the chunk's index, for
/// errors.
#[cfg(feature = "encryption")]
pub(super) fn column_index_group(
    ci: &ColumnIndexInput,
    ords: Option<(u32, u32)>,
    i: usize,
) -> Result<Vec<(MetadataArray, Vec<u8>)>> {
    check_column_index(ci, i)?;
    let ps: Vec<Option<&StatsInput>> = ci.pages.iter().map(|p| Some(&p.stats)).collect();
    let mut group = stat_pages(Module::ColumnIndex, &ps, ords)?;
    let np: Vec<_> = ci
        .pages
        .iter()
        .map(|p| Some(u64::from(p.null_page)))
        .collect();
    group.push((
        MetadataArray::NullPage,
        encode_page(
            Module::ColumnIndex,
            MetadataArray::NullPage,
            &Values::Ints(&np),
            ords,
            true,
        )?,
    ));
    group.push((
        MetadataArray::BoundaryOrder,
        encode_page(
            Module::ColumnIndex,
            MetadataArray::BoundaryOrder,
            &Values::Ints(&[Some(u64::from(ci.boundary_order))]),
            ords,
            true,
        )?,
    ));
    for (array, hist) in [
        (
            MetadataArray::RepetitionLevelHistogram,
            &ci.repetition_level_histograms,
        ),
        (
            MetadataArray::DefinitionLevelHistogram,
            &ci.definition_level_histograms,
        ),
    ] {
        let Some(h) = hist else { continue };
        let v: Vec<Option<u64>> = h.iter().map(|&x| Some(x)).collect();
        group.push((
            array,
            encode_page(Module::ColumnIndex, array, &Values::Ints(&v), ords, true)?,
        ));
    }
    Ok(group)
}

/// The statistic pages of a domain, in ascending array order.
pub(super) fn stat_pages(
    module: Module,
    stats: &[Option<&StatsInput>],
    ords: Option<(u32, u32)>,
) -> Result<Vec<(MetadataArray, Vec<u8>)>> {
    let mut pages = Vec::new();
    let nulls: Vec<Option<u64>> = stats.iter().map(|s| s.and_then(|s| s.null_count)).collect();
    if nulls.iter().any(Option::is_some) {
        pages.push((
            MetadataArray::NullCount,
            encode_page(
                module,
                MetadataArray::NullCount,
                &Values::Ints(&nulls),
                ords,
                false,
            )?,
        ));
    }
    let mm: Vec<Option<&MinMax>> = stats
        .iter()
        .map(|s| s.and_then(|s| s.min_max.as_ref()))
        .collect();
    // The common prefixes of min and max, when they are stored (pushed after the NaN counts).
    let mut prefixes: Option<Vec<Option<&[u8]>>> = None;
    if mm.iter().any(Option::is_some) {
        let prefix_len = |m: &MinMax| m.min.iter().zip(&m.max).take_while(|(a, b)| a == b).count();
        let use_prefix = mm.iter().flatten().any(|m| prefix_len(m) > 0);
        let cut = |m: &MinMax| if use_prefix { prefix_len(m) } else { 0 };
        let mins: Vec<Option<&[u8]>> = mm
            .iter()
            .map(|m| m.map(|m| m.min.get(cut(m)..).unwrap_or_default()))
            .collect();
        let maxs: Vec<Option<&[u8]>> = mm
            .iter()
            .map(|m| m.map(|m| m.max.get(cut(m)..).unwrap_or_default()))
            .collect();
        pages.push((
            MetadataArray::MinValue,
            encode_page(
                module,
                MetadataArray::MinValue,
                &Values::Bytes(&mins),
                ords,
                false,
            )?,
        ));
        pages.push((
            MetadataArray::MaxValue,
            encode_page(
                module,
                MetadataArray::MaxValue,
                &Values::Bytes(&maxs),
                ords,
                false,
            )?,
        ));
        for (array, get) in [
            (
                MetadataArray::MinIsExact,
                (|m: &MinMax| m.min_exact) as fn(&MinMax) -> bool,
            ),
            (MetadataArray::MaxIsExact, |m: &MinMax| m.max_exact),
        ] {
            if mm.iter().flatten().all(|m| get(m)) {
                continue;
            }
            let v: Vec<Option<u64>> = mm.iter().map(|m| m.map(|m| u64::from(get(m)))).collect();
            pages.push((
                array,
                encode_page(module, array, &Values::Ints(&v), ords, false)?,
            ));
        }
        if use_prefix {
            prefixes = Some(
                mm.iter()
                    .map(|m| m.map(|m| m.min.get(..cut(m)).unwrap_or_default()))
                    .collect(),
            );
        }
    }
    // NaN counts (array 25) sit between the exact flags and the prefix (26).
    let nans: Vec<Option<u64>> = stats.iter().map(|s| s.and_then(|s| s.nan_count)).collect();
    if nans.iter().any(Option::is_some) {
        pages.push((
            MetadataArray::NanCount,
            encode_page(
                module,
                MetadataArray::NanCount,
                &Values::Ints(&nans),
                ords,
                false,
            )?,
        ));
    }
    if let Some(pre) = prefixes {
        pages.push((
            MetadataArray::MinMaxPrefix,
            encode_page(
                module,
                MetadataArray::MinMaxPrefix,
                &Values::Bytes(&pre),
                ords,
                false,
            )?,
        ));
    }
    Ok(pages)
}

fn write_descriptor(
    out: &mut Vec<u8>,
    dir: &mut Vec<(Module, ModuleEncoding, u64, u64)>,
    module: Module,
    pages: &[(MetadataArray, u64, usize)],
) -> Result<()> {
    let start = off(out.len());
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, module.value());
    w.field_i32(2, 1);
    w.field_list(3, FieldType::Struct, pages.len());
    for (array, offset, len) in pages {
        w.struct_begin();
        w.field_i32(1, array.value());
        w.field_i32(2, PageScope::File.value());
        w.field_i64(5, i64::try_from(*offset).map_err(|_| limit())?);
        w.field_i32(6, i32::try_from(*len).map_err(|_| limit())?);
        w.struct_end();
    }
    w.struct_end();
    out.extend_from_slice(w.as_bytes());
    dir.push((module, ModuleEncoding::ArrayPages, start, off(w.len())));
    Ok(())
}

/// The FILE pages of the OFFSET_INDEX module, in array order: PAGE_OFFSET,
/// COMPRESSED_PAGE_SIZE, FIRST_ROW_INDEX and UNENCODED_BYTE_ARRAY_DATA_BYTES over the pages
/// of all chunks (chunk order), then the FIRST_PAGE CSR over chunks.
fn offset_index_pages(ch: &[ChunkMeta]) -> Result<Vec<(MetadataArray, Vec<u8>)>> {
    let mut first = Vec::with_capacity(ch.len() + 1);
    let (mut po, mut cs, mut fr, mut ub) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    first.push(Some(0));
    for (i, m) in ch.iter().enumerate() {
        if let Some(locs) = &m.offset_index {
            po.extend(locs.iter().map(|p| Some(p.offset)));
            cs.extend(locs.iter().map(|p| Some(u64::from(p.compressed_size))));
            fr.extend(locs.iter().map(|p| Some(p.first_row_index)));
            match &m.offset_index_unencoded_bytes {
                Some(u) if u.len() != locs.len() => {
                    return Err(Error::at_item(ErrorKind::Mismatch, Location::Entry, off(i)));
                }
                Some(u) => ub.extend(u.iter().map(|&v| Some(v))),
                None => ub.extend(locs.iter().map(|_| None)),
            }
        }
        first.push(Some(off(po.len())));
    }
    let mut arrays = alloc::vec![
        (MetadataArray::PageOffset, po),
        (MetadataArray::CompressedPageSize, cs),
        (MetadataArray::FirstRowIndex, fr),
    ];
    if ub.iter().any(Option::is_some) {
        arrays.push((MetadataArray::UnencodedByteArrayDataBytes, ub));
    }
    arrays.push((MetadataArray::FirstPage, first));
    arrays
        .into_iter()
        .map(|(array, v)| {
            let dense = array != MetadataArray::UnencodedByteArrayDataBytes;
            let page = encode_page(Module::OffsetIndex, array, &Values::Ints(&v), None, dense)?;
            Ok((array, page))
        })
        .collect()
}

/// A level-histogram array under construction: the values, their CSR over chunks, and
/// whether any chunk has one.
type Histograms = (Vec<Option<u64>>, Vec<Option<u64>>, bool);

/// The FILE pages of the COLUMN_INDEX module, in array order: the statistics over the pages
/// of all chunks, NULL_PAGE, BOUNDARY_ORDER over chunks, the level histograms, the FIRST_PAGE
/// CSR and the histograms' CSRs.
fn column_index_pages(ch: &[ChunkMeta]) -> Result<Vec<(MetadataArray, Vec<u8>)>> {
    let n = ch.len();
    let mut first = Vec::with_capacity(n + 1);
    let mut ps: Vec<Option<&StatsInput>> = Vec::new();
    let (mut np, mut bo) = (Vec::new(), Vec::with_capacity(n));
    let mut hists: [Histograms; 2] = Default::default();
    first.push(Some(0));
    for h in &mut hists {
        h.1.push(Some(0));
    }
    for (i, m) in ch.iter().enumerate() {
        bo.push(Some(
            m.column_index
                .as_ref()
                .map_or(0, |c| u64::from(c.boundary_order)),
        ));
        if let Some(ci) = &m.column_index {
            check_column_index(ci, i)?;
            ps.extend(ci.pages.iter().map(|p| Some(&p.stats)));
            np.extend(ci.pages.iter().map(|p| Some(u64::from(p.null_page))));
            for (h, src) in hists.iter_mut().zip([
                &ci.repetition_level_histograms,
                &ci.definition_level_histograms,
            ]) {
                if let Some(v) = src {
                    h.0.extend(v.iter().map(|&x| Some(x)));
                    h.2 = true;
                }
            }
        }
        first.push(Some(off(np.len())));
        for h in &mut hists {
            h.1.push(Some(off(h.0.len())));
        }
    }
    let module = Module::ColumnIndex;
    let mut pages = stat_pages(module, &ps, None)?;
    let dense = |array: MetadataArray, v: &[Option<u64>]| -> Result<(MetadataArray, Vec<u8>)> {
        Ok((
            array,
            encode_page(module, array, &Values::Ints(v), None, true)?,
        ))
    };
    pages.push(dense(MetadataArray::NullPage, &np)?);
    pages.push(dense(MetadataArray::BoundaryOrder, &bo)?);
    let [rep, def] = &hists;
    if rep.2 {
        pages.push(dense(MetadataArray::RepetitionLevelHistogram, &rep.0)?);
    }
    if def.2 {
        pages.push(dense(MetadataArray::DefinitionLevelHistogram, &def.0)?);
    }
    pages.push(dense(MetadataArray::FirstPage, &first)?);
    if rep.2 {
        pages.push(dense(MetadataArray::FirstRepetitionLevelHistogram, &rep.1)?);
    }
    if def.2 {
        pages.push(dense(MetadataArray::FirstDefinitionLevelHistogram, &def.1)?);
    }
    Ok(pages)
}

/// The writer's rules for one chunk's column index (`i`: the chunk, for errors): no min/max
/// on a null page, histograms of `pages.len() * (L + 1)` values.
fn check_column_index(ci: &ColumnIndexInput, i: usize) -> Result<()> {
    let bad = Err(Error::at_item(ErrorKind::Mismatch, Location::Entry, off(i)));
    if ci
        .pages
        .iter()
        .any(|p| p.null_page && p.stats.min_max.is_some())
    {
        return bad;
    }
    let p = ci.pages.len();
    for h in [
        &ci.repetition_level_histograms,
        &ci.definition_level_histograms,
    ]
    .into_iter()
    .flatten()
    {
        if (p == 0 && !h.is_empty()) || (p > 0 && (h.is_empty() || h.len() % p != 0)) {
            return bad;
        }
    }
    Ok(())
}
