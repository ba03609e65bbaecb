//! The fields of a standard `FileMetaData` that placement, statistics and page indexes do not
//! carry, kept so that a modular footer converts back to the same standard footer:
//!
//! - optional PLACEMENT arrays and ROW_GROUP_STATS's DISTINCT_COUNT over the chunk space
//!   ([`ChunkExtras`], per chunk
//!   [`ChunkDetails`]): encodings (bit set), raw `PageEncodingStats` lists, Bloom filter
//!   offset and length, `ColumnChunk.file_offset` where it is not 0, raw
//!   `SizeStatistics` structs;
//! - the ROW_GROUPS module ([`RowGroups`], [`RowGroupInfo`]): each `parquet.RowGroup` without
//!   its columns (total byte size, sorting columns, file offset, total compressed size,
//!   ordinal).
//!
//! Per-page size statistics (offset index `unencoded_byte_array_data_bytes`, column index
//! level histograms) live in the page-index modules (`page_index`).

use super::page::ArrayPage;
use super::view::ModularFooter;
use super::{MetadataArray, Module};
use crate::codec::thrift::{FieldType, Reader};
use crate::error::{off, Error, ErrorKind, Result};

/// The optional PLACEMENT arrays and ROW_GROUP_STATS's DISTINCT_COUNT, each over the chunk
/// space `K` (column-major), `None` when the footer does not carry it. `encodings` is dense;
/// the others may be SPARSE.
#[derive(Clone, Copy, Debug, Default)]
pub struct ChunkExtras<'a> {
    /// ENCODINGS: bit e set iff parquet.Encoding e is in the chunk's `encodings` list.
    pub encodings: Option<ArrayPage<'a>>,
    /// ENCODING_STATS: the distinct raw Compact-Thrift `list<parquet.PageEncodingStats>`
    /// values (a table, dense over its own domain).
    pub encoding_stats: Option<ArrayPage<'a>>,
    /// ENCODING_STATS_INDEX: per chunk, its entry of `encoding_stats` (SPARSE: absent = none).
    pub encoding_stats_index: Option<ArrayPage<'a>>,
    /// BLOOM_FILTER_OFFSET.
    pub bloom_filter_offset: Option<ArrayPage<'a>>,
    /// BLOOM_FILTER_LENGTH.
    pub bloom_filter_length: Option<ArrayPage<'a>>,
    /// CHUNK_FILE_OFFSET: present only where `file_offset` is not 0.
    pub chunk_file_offset: Option<ArrayPage<'a>>,
    /// SIZE_STATISTICS: the raw Compact-Thrift `parquet.SizeStatistics` struct.
    pub size_statistics: Option<ArrayPage<'a>>,
    /// DISTINCT_COUNT (in ROW_GROUP_STATS): `Statistics.distinct_count`.
    pub distinct_count: Option<ArrayPage<'a>>,
}

impl<'a> ChunkExtras<'a> {
    /// The slot of an optional placement array, `None` for any other array.
    pub(super) fn slot_mut(&mut self, a: MetadataArray) -> Option<&mut Option<ArrayPage<'a>>> {
        Some(match a {
            MetadataArray::Encodings => &mut self.encodings,
            MetadataArray::EncodingStats => &mut self.encoding_stats,
            MetadataArray::BloomFilterOffset => &mut self.bloom_filter_offset,
            MetadataArray::BloomFilterLength => &mut self.bloom_filter_length,
            MetadataArray::ChunkFileOffset => &mut self.chunk_file_offset,
            MetadataArray::SizeStatistics => &mut self.size_statistics,
            MetadataArray::EncodingStatsIndex => &mut self.encoding_stats_index,
            _ => return None,
        })
    }

    fn all(&self) -> [Option<ArrayPage<'a>>; 8] {
        [
            self.distinct_count,
            self.encodings,
            self.encoding_stats,
            self.encoding_stats_index,
            self.bloom_filter_offset,
            self.bloom_filter_length,
            self.chunk_file_offset,
            self.size_statistics,
        ]
    }

    /// Domains on open: every array spans `k` positions, ENCODINGS densely; ENCODING_STATS
    /// is a dense table over its own domain and comes with ENCODING_STATS_INDEX (and only
    /// with it: `ThriftMissingField` / `Mismatch` at the page present).
    pub(super) fn check_shape(&self, k: u64) -> Result<()> {
        for p in self.all().iter().flatten() {
            if p.header().array != MetadataArray::EncodingStats {
                ModularFooter::expect_domain(p, k, false)?;
            }
        }
        match (&self.encoding_stats, &self.encoding_stats_index) {
            (None, None) => {}
            (Some(t), Some(_)) => ModularFooter::expect_domain(t, off(t.len()), true)?,
            (Some(t), None) => return Err(Error::new(ErrorKind::ThriftMissingField, t.offset())),
            (None, Some(i)) => return Err(Error::new(ErrorKind::Mismatch, i.offset())),
        }
        if let Some(e) = &self.encodings {
            ModularFooter::expect_domain(e, k, true)?;
        }
        Ok(())
    }
}

/// The extra fields of one column chunk ([`ModularFooter::chunk_details`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkDetails<'a> {
    /// The `encodings` bit set (bit e = parquet.Encoding e), `None` when not recorded.
    pub encodings: Option<u32>,
    /// The raw Compact-Thrift `list<parquet.PageEncodingStats>` value (list header
    /// included), when recorded.
    pub encoding_stats: Option<&'a [u8]>,
    /// Absolute offset of the chunk's Bloom filter.
    pub bloom_filter_offset: Option<u64>,
    /// Length of the chunk's Bloom filter.
    pub bloom_filter_length: Option<u32>,
    /// `ColumnChunk.file_offset`: the recorded value, else 0.
    pub file_offset: u64,
    /// The raw Compact-Thrift `parquet.SizeStatistics` struct, when recorded.
    pub size_statistics: Option<&'a [u8]>,
    /// `Statistics.distinct_count`, when recorded.
    pub distinct_count: Option<u64>,
}

/// One `parquet.SortingColumn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortingColumn {
    /// Leaf column index.
    pub column_idx: i32,
    /// Descending order.
    pub descending: bool,
    /// Nulls before values.
    pub nulls_first: bool,
}

/// One row group's own fields (a `parquet.RowGroup` without `columns`).
#[derive(Clone, Copy, Debug)]
pub struct RowGroupInfo<'a> {
    /// The struct's raw Compact-Thrift bytes (STOP byte included).
    pub raw: &'a [u8],
    /// Absolute offset of `raw`.
    pub offset: u64,
    /// `total_byte_size` (field 2).
    pub total_byte_size: Option<i64>,
    /// `num_rows` (field 3).
    pub num_rows: Option<i64>,
    /// `file_offset` (field 5).
    pub file_offset: Option<i64>,
    /// `total_compressed_size` (field 6).
    pub total_compressed_size: Option<i64>,
    /// `ordinal` (field 7).
    pub ordinal: Option<i16>,
    sorting: Option<(Reader<'a>, u32)>,
}

impl<'a> RowGroupInfo<'a> {
    /// Parses one struct at `r`, checking every field it knows; `columns` (field 1) must be
    /// absent ([`ErrorKind::Mismatch`]).
    pub(super) fn parse(r: &mut Reader<'a>) -> Result<Self> {
        let start = *r;
        let mut st = r.enter_struct()?;
        let mut out = RowGroupInfo {
            raw: &[],
            offset: r.position(),
            total_byte_size: None,
            num_rows: None,
            file_offset: None,
            total_compressed_size: None,
            ordinal: None,
            sorting: None,
        };
        while let Some(f) = r.next_field(&mut st)? {
            match f.id {
                1 => return Err(Error::new(ErrorKind::Mismatch, f.offset)),
                2 => out.total_byte_size = Some(r.field_i64(f)?),
                3 => out.num_rows = Some(r.field_i64(f)?),
                4 => {
                    let h = r.field_list(f, FieldType::Struct)?;
                    let at = *r;
                    for _ in 0..h.len {
                        parse_sorting_column(r)?;
                    }
                    out.sorting = Some((at, h.len));
                }
                5 => out.file_offset = Some(r.field_i64(f)?),
                6 => out.total_compressed_size = Some(r.field_i64(f)?),
                7 => out.ordinal = Some(r.field_i16(f)?),
                _ => r.skip_field(f)?,
            }
        }
        let used = r.index() - start.index();
        out.raw = start
            .rest()
            .get(..used)
            .ok_or(Error::new(ErrorKind::Truncated, r.position()))?;
        Ok(out)
    }

    /// The sorting columns, `None` when the field is absent.
    pub fn sorting_columns(&self) -> Option<impl Iterator<Item = Result<SortingColumn>> + 'a> {
        let (mut r, n) = self.sorting?;
        Some((0..n).map(move |_| parse_sorting_column(&mut r)))
    }
}

fn parse_sorting_column(r: &mut Reader<'_>) -> Result<SortingColumn> {
    let mut st = r.enter_struct()?;
    let (mut c, mut d, mut n) = (None, None, None);
    while let Some(f) = r.next_field(&mut st)? {
        match f.id {
            1 => c = Some(r.field_i32(f)?),
            2 => d = Some(r.field_bool(f)?),
            3 => n = Some(r.field_bool(f)?),
            _ => r.skip_field(f)?,
        }
    }
    Ok(SortingColumn {
        column_idx: crate::codec::thrift::required(c, &st)?,
        descending: crate::codec::thrift::required(d, &st)?,
        nulls_first: crate::codec::thrift::required(n, &st)?,
    })
}

/// The ROW_GROUPS module: one [`RowGroupInfo`] per row group.
#[derive(Clone, Copy, Debug)]
pub struct RowGroups<'a> {
    list: Reader<'a>,
    len: u32,
}

impl<'a> RowGroups<'a> {
    /// Parses the module struct (`bytes` exactly) and checks every entry.
    pub fn parse(bytes: &'a [u8], origin: u64, max_depth: u32) -> Result<Self> {
        let mut r = Reader::new(bytes, origin).with_max_depth(max_depth);
        let mut st = r.enter_struct()?;
        let mut out = None;
        while let Some(f) = r.next_field(&mut st)? {
            match f.id {
                1 => {
                    let h = r.field_list(f, FieldType::Struct)?;
                    let list = r;
                    for _ in 0..h.len {
                        RowGroupInfo::parse(&mut r)?;
                    }
                    out = Some(RowGroups { list, len: h.len });
                }
                _ => r.skip_field(f)?,
            }
        }
        r.expect_end()?;
        crate::codec::thrift::required(out, &st)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries in row-group order.
    pub fn iter(&self) -> impl Iterator<Item = Result<RowGroupInfo<'a>>> + 'a {
        let mut r = self.list;
        (0..self.len).map(move |_| RowGroupInfo::parse(&mut r))
    }
}

impl<'a> ModularFooter<'a> {
    /// The optional PLACEMENT arrays (all `None` when the footer has none).
    pub fn chunk_extras(&self) -> &ChunkExtras<'a> {
        &self.extras
    }

    /// The extra fields of chunk (column, row group): O(1) bit reads, O(log K) for a SPARSE
    /// array.
    pub fn chunk_details(&self, column: u32, row_group: u32) -> Result<ChunkDetails<'a>> {
        let k = self.chunk_index(column, row_group)?;
        let e = &self.extras;
        let int = |p: &Option<ArrayPage<'a>>| -> Result<Option<u64>> {
            match p {
                Some(p) => p.get(k),
                None => Ok(None),
            }
        };
        let bytes = |p: &Option<ArrayPage<'a>>| -> Result<Option<&'a [u8]>> {
            match p {
                Some(p) => p.get_bytes(k),
                None => Ok(None),
            }
        };
        let narrow = |v: Option<u64>, p: &Option<ArrayPage<'a>>| -> Result<Option<u32>> {
            v.map(|v| {
                u32::try_from(v).map_err(|_| {
                    Error::new(
                        ErrorKind::InvalidValue,
                        p.map_or(self.root_offset(), |p| p.payload_offset()),
                    )
                })
            })
            .transpose()
        };
        let file_offset = int(&e.chunk_file_offset)?.unwrap_or(0);
        Ok(ChunkDetails {
            encodings: narrow(int(&e.encodings)?, &e.encodings)?,
            encoding_stats: match (&e.encoding_stats, int(&e.encoding_stats_index)?) {
                (Some(t), Some(i)) => {
                    let bad = Error::new(ErrorKind::OutOfBounds, t.payload_offset());
                    let i = usize::try_from(i).map_err(|_| bad)?;
                    if i >= t.len() {
                        return Err(bad);
                    }
                    t.get_bytes(i)?
                }
                _ => None,
            },
            bloom_filter_offset: int(&e.bloom_filter_offset)?,
            bloom_filter_length: narrow(int(&e.bloom_filter_length)?, &e.bloom_filter_length)?,
            file_offset,
            size_statistics: bytes(&e.size_statistics)?,
            distinct_count: int(&e.distinct_count)?,
        })
    }

    /// The ROW_GROUPS module, if present; its entry count must be `num_row_groups`.
    pub fn row_groups(&self) -> Result<Option<RowGroups<'a>>> {
        let Some(loc) = self.module(Module::RowGroups) else {
            return Ok(None);
        };
        let bytes = self.slice(loc.offset, loc.length)?;
        let rg = RowGroups::parse(bytes, loc.offset, self.limits.max_depth)?;
        if rg.len() != self.num_row_groups() as usize {
            return Err(Error::new(ErrorKind::Mismatch, loc.offset));
        }
        Ok(Some(rg))
    }

    /// Value-level rules of the extras: every page's values; encodings within 32 bits;
    /// every raw encoding-stats list and size-statistics struct parses; Bloom filters lie
    /// inside the data region; the ROW_GROUPS module.
    pub(super) fn validate_extras(&self) -> Result<()> {
        let e = &self.extras;
        for p in e.all().iter().flatten() {
            p.validate()?;
        }
        for (p, max) in [
            (&e.encodings, u64::from(u32::MAX)),
            (&e.bloom_filter_length, i32::MAX as u64),
            (&e.bloom_filter_offset, i64::MAX as u64),
            (&e.chunk_file_offset, i64::MAX as u64),
            (&e.distinct_count, i64::MAX as u64),
        ] {
            if let Some(p) = p {
                if p.values().iter().any(|v| v > max) {
                    return Err(Error::new(ErrorKind::InvalidValue, p.payload_offset()));
                }
            }
        }
        if let (Some(t), Some(i)) = (&e.encoding_stats, &e.encoding_stats_index) {
            if i.values().iter().any(|v| v >= off(t.len())) {
                return Err(Error::new(ErrorKind::OutOfBounds, i.payload_offset()));
            }
        }
        let depth = self.limits.max_depth;
        if let Some(p) = &e.encoding_stats {
            for s in 0..p.num_present() {
                let b = p.bytes_at_slot(s)?;
                let mut r = Reader::new(b, p.payload_offset()).with_max_depth(depth);
                let h = r.list_header()?;
                if h.elem != FieldType::Struct {
                    return Err(Error::new(ErrorKind::ThriftWireType, p.payload_offset()));
                }
                for _ in 0..h.len {
                    r.skip_struct()?;
                }
                r.expect_end()?;
            }
        }
        if let Some(p) = &e.size_statistics {
            for s in 0..p.num_present() {
                let b = p.bytes_at_slot(s)?;
                let mut r = Reader::new(b, p.payload_offset()).with_max_depth(depth);
                r.skip_struct()?;
                r.expect_end()?;
            }
        }
        if let Some(o) = &e.bloom_filter_offset {
            let data_end = self.metadata_start();
            for v in o.values().iter() {
                if v >= data_end {
                    return Err(Error::new(ErrorKind::OutOfBounds, o.payload_offset()));
                }
            }
        }
        if let Some(rg) = self.row_groups()? {
            for r in rg.iter() {
                r?;
            }
        }
        Ok(())
    }
}
