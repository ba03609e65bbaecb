//! Per-chunk page indexes and CSR slices: [`OffsetIndex`] and [`ColumnIndex`] (read from a
//! chunk's page group, walked and checked by `walk_group`), and [`DictionaryPages`] (a chunk's
//! slice of DICTIONARY_PAGE_OFFSET).
//!
//! A chunk's group is found through the module's PAGE_GROUP_OFFSET array and checked in full
//! when it is read (O(pages of the chunk)); this module parses no root or descriptor.

use super::page::{ArrayPage, MetadataPageHeader};
use super::stats::{StatArrays, Statistics};
use super::view::ModularFooter;
use super::{ArrayEncoding, MetadataArray, Module, PageScope};
use crate::error::{off, Error, ErrorKind, Result};

/// A chunk's dictionary page offsets: `DICTIONARY_PAGE_OFFSET[start..end]`.
#[derive(Clone, Copy, Debug)]
pub struct DictionaryPages<'a> {
    page: ArrayPage<'a>,
    start: usize,
    end: usize,
}

impl<'a> DictionaryPages<'a> {
    /// `page[start..end]`.
    pub(super) fn new(page: ArrayPage<'a>, start: usize, end: usize) -> Self {
        DictionaryPages { page, start, end }
    }
}

impl DictionaryPages<'_> {
    /// The number of dictionary pages.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether the chunk has no dictionary page.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Offset of dictionary page `i`.
    pub fn get(&self, i: usize) -> Result<Option<u64>> {
        if i >= self.len() {
            return Ok(None);
        }
        self.page.get(self.start + i)
    }

    /// Iterates the offsets.
    pub fn iter(&self) -> impl Iterator<Item = Result<u64>> + '_ {
        (self.start..self.end).map(|i| self.page.get(i).map(|v| v.unwrap_or(0)))
    }
}

/// The offset index of one chunk: three dense arrays over its pages.
#[derive(Clone, Copy, Debug)]
pub struct OffsetIndex<'a> {
    /// PAGE_OFFSET.
    pub page_offset: ArrayPage<'a>,
    /// COMPRESSED_PAGE_SIZE.
    pub compressed_page_size: ArrayPage<'a>,
    /// FIRST_ROW_INDEX.
    pub first_row_index: ArrayPage<'a>,
    /// UNENCODED_BYTE_ARRAY_DATA_BYTES over the pages, if recorded.
    pub unencoded_byte_array_data_bytes: Option<ArrayPage<'a>>,
}

impl OffsetIndex<'_> {
    /// The number of pages.
    pub fn len(&self) -> usize {
        self.page_offset.len()
    }

    /// Whether the chunk has no pages.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `(offset, compressed_size, first_row_index)` of page `i`.
    pub fn page(&self, i: usize) -> Result<(u64, u64, u64)> {
        let z = |v: Option<u64>| v.unwrap_or(0);
        Ok((
            z(self.page_offset.get(i)?),
            z(self.compressed_page_size.get(i)?),
            z(self.first_row_index.get(i)?),
        ))
    }
}

/// The column index of one chunk.
#[derive(Clone, Copy, Debug)]
pub struct ColumnIndex<'a> {
    /// parquet.BoundaryOrder.
    pub boundary_order: u8,
    /// NULL_PAGE over the chunk's pages.
    pub null_pages: ArrayPage<'a>,
    /// The statistic arrays over page ordinals.
    pub stats: StatArrays<'a>,
    /// REPETITION_LEVEL_HISTOGRAM: the pages' histograms concatenated (`len() * (L + 1)`
    /// values), if recorded.
    pub repetition_level_histograms: Option<ArrayPage<'a>>,
    /// DEFINITION_LEVEL_HISTOGRAM, like `repetition_level_histograms`.
    pub definition_level_histograms: Option<ArrayPage<'a>>,
}

impl<'a> ColumnIndex<'a> {
    /// The number of pages.
    pub fn len(&self) -> usize {
        self.null_pages.len()
    }

    /// Whether the chunk has no pages.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether page `i` holds only nulls.
    pub fn is_null_page(&self, i: usize) -> Result<bool> {
        Ok(self.null_pages.get(i)?.unwrap_or(0) != 0)
    }

    /// Statistics of page `i`.
    pub fn page(&self, i: usize) -> Result<Statistics<'a>> {
        self.stats.at(i)
    }
}

impl<'a> ModularFooter<'a> {
    /// The byte range of chunk `k`'s page group in a page-index module.
    fn group(&self, pgo: &ArrayPage<'a>, k: usize) -> Result<(u64, u64)> {
        let a = pgo.get(k)?.unwrap_or(0);
        let b = pgo.get(k + 1)?.unwrap_or(0);
        if a > b {
            return Err(Error::new(ErrorKind::NotSorted, pgo.payload_offset()));
        }
        self.check_location(a, b - a, pgo.payload_offset())?;
        Ok((a, b))
    }

    /// Walks chunk `k`'s page group: headers in ascending array order, each with the chunk's
    /// ordinals, ending exactly at the group end.
    fn walk_group(
        &self,
        module: Module,
        pgo: &ArrayPage<'a>,
        k: usize,
        mut each: impl FnMut(ArrayPage<'a>) -> Result<()>,
    ) -> Result<bool> {
        let (a, b) = self.group(pgo, k)?;
        if a == b {
            return Ok(false);
        }
        let bytes = self.slice(a, b - a)?;
        let g = self.num_row_groups as usize;
        let (col, rg) = (k / g, k % g);
        let mut pos = 0usize;
        let mut last: Option<MetadataArray> = None;
        let mut count = 0u32;
        while pos < bytes.len() {
            let at = a + off(pos);
            count += 1;
            if count > self.limits.max_pages {
                return Err(Error::new(ErrorKind::LimitExceeded, at));
            }
            let rest = bytes.get(pos..).unwrap_or_default();
            let h = MetadataPageHeader::parse(rest, at)?;
            let total = h.header_len as usize + h.payload_length as usize;
            let page_bytes = rest
                .get(..total)
                .ok_or(Error::new(ErrorKind::OutOfBounds, at))?;
            let page = self.parse_page(page_bytes, at)?;
            if h.module != module
                || h.scope != PageScope::ColumnChunk
                || h.column_ordinal != Some(col as u32)
                || h.row_group_ordinal != Some(rg as u32)
            {
                return Err(Error::new(ErrorKind::Mismatch, at));
            }
            if let Some(prev) = last {
                if h.array == prev {
                    return Err(Error::new(ErrorKind::Duplicate, at));
                }
                if h.array < prev {
                    return Err(Error::new(ErrorKind::NotSorted, at));
                }
            }
            last = Some(h.array);
            each(page)?;
            pos += total;
        }
        Ok(true)
    }

    /// The offset index of chunk (column, row group): `None` without an OFFSET_INDEX module
    /// or for a chunk without an index. Validates the chunk's group fully (O(pages)).
    pub fn offset_index(&self, column: u32, row_group: u32) -> Result<Option<OffsetIndex<'a>>> {
        let k = self.chunk_index(column, row_group)?;
        let Some(pgo) = self.offset_index else {
            return Ok(None);
        };
        let (mut po, mut cs, mut fr, mut ub) = (None, None, None, None);
        let any = self.walk_group(Module::OffsetIndex, &pgo, k, |p| {
            match p.header().array {
                MetadataArray::PageOffset => po = Some(p),
                MetadataArray::CompressedPageSize => cs = Some(p),
                MetadataArray::FirstRowIndex => fr = Some(p),
                MetadataArray::UnencodedByteArrayDataBytes => ub = Some(p),
                _ => return Err(Error::new(ErrorKind::InvalidValue, p.offset())),
            }
            if p.header().encoding != ArrayEncoding::BitPacked {
                return Err(Error::new(ErrorKind::Mismatch, p.offset()));
            }
            p.validate()
        })?;
        if !any {
            return Ok(None);
        }
        let at = pgo.payload_offset();
        let missing = Error::new(ErrorKind::ThriftMissingField, at);
        let (po, cs, fr) = (po.ok_or(missing)?, cs.ok_or(missing)?, fr.ok_or(missing)?);
        if cs.len() != po.len() || fr.len() != po.len() {
            return Err(Error::new(ErrorKind::Mismatch, cs.offset()));
        }
        if let Some(u) = &ub {
            if u.len() != po.len() {
                return Err(Error::new(ErrorKind::Mismatch, u.offset()));
            }
            if u.values().iter().any(|v| v > i64::MAX as u64) {
                return Err(Error::new(ErrorKind::InvalidValue, u.payload_offset()));
            }
        }
        Ok(Some(OffsetIndex {
            page_offset: po,
            compressed_page_size: cs,
            first_row_index: fr,
            unencoded_byte_array_data_bytes: ub,
        }))
    }

    /// The column index of chunk (column, row group), like [`ModularFooter::offset_index`].
    pub fn column_index(&self, column: u32, row_group: u32) -> Result<Option<ColumnIndex<'a>>> {
        let k = self.chunk_index(column, row_group)?;
        let Some(pgo) = self.column_index else {
            return Ok(None);
        };
        let (mut bo, mut np, mut rep, mut def) = (None, None, None, None);
        let mut stats = StatArrays::default();
        let any = self.walk_group(Module::ColumnIndex, &pgo, k, |p| {
            let a = p.header().array;
            match a {
                MetadataArray::BoundaryOrder => bo = Some(p),
                MetadataArray::NullPage => np = Some(p),
                MetadataArray::RepetitionLevelHistogram
                | MetadataArray::DefinitionLevelHistogram => {
                    if p.is_sparse() {
                        return Err(Error::new(ErrorKind::Mismatch, p.offset()));
                    }
                    if a == MetadataArray::RepetitionLevelHistogram {
                        rep = Some(p);
                    } else {
                        def = Some(p);
                    }
                }
                _ => match stats.slot_mut(a) {
                    Some(slot) => *slot = Some(p),
                    None => return Err(Error::new(ErrorKind::InvalidValue, p.offset())),
                },
            }
            p.validate()
        })?;
        if !any {
            return Ok(None);
        }
        let at = pgo.payload_offset();
        let missing = Error::new(ErrorKind::ThriftMissingField, at);
        let (bo, np) = (bo.ok_or(missing)?, np.ok_or(missing)?);
        Self::expect_domain(&bo, 1, true)?;
        Self::expect_domain(&np, off(np.len()), true)?;
        let p = np.len() as u64;
        for s in stats.all().into_iter().flatten() {
            Self::expect_domain(&s, p, false)?;
        }
        stats.check_shape(np.offset())?;
        stats.validate()?;
        // MIN/MAX present positions are exactly the non-null pages.
        if let Some(min) = &stats.min_value {
            for i in 0..np.len() {
                let null = np.get(i)?.unwrap_or(0) != 0;
                if min.slot(i)?.is_some() == null {
                    return Err(Error::new(ErrorKind::Mismatch, min.offset()));
                }
            }
        }
        check_level_histograms([&rep, &def], &np)?;
        let boundary_order = bo.get(0)?.unwrap_or(0) as u8;
        Ok(Some(ColumnIndex {
            boundary_order,
            null_pages: np,
            stats,
            repetition_level_histograms: rep,
            definition_level_histograms: def,
        }))
    }
}

/// The level-histogram rules of a column-index group (plaintext or decrypted): each
/// histogram dense, holding L + 1 >= 1 values per page of `null_pages`, every value an i64.
pub(super) fn check_level_histograms(
    histograms: [&Option<ArrayPage<'_>>; 2],
    null_pages: &ArrayPage<'_>,
) -> Result<()> {
    for h in histograms.into_iter().flatten() {
        let (n, p) = (h.len(), null_pages.len());
        if h.is_sparse() || (p == 0 && n != 0) || (p != 0 && (n == 0 || n % p != 0)) {
            return Err(Error::new(ErrorKind::Mismatch, h.offset()));
        }
        if h.values().iter().any(|v| v > i64::MAX as u64) {
            return Err(Error::new(ErrorKind::InvalidValue, h.payload_offset()));
        }
    }
    Ok(())
}
