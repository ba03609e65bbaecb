//! Per-chunk page indexes and CSR slices: [`OffsetIndex`] and [`ColumnIndex`] (a chunk's
//! windows of the page-index modules' FILE pages), and [`DictionaryPages`] (a chunk's slice of
//! DICTIONARY_PAGE_OFFSET).
//!
//! The page-index arrays cover the concatenated page space of all chunks; a chunk's slice
//! `[f[k], f[k+1])` comes from the module's FIRST_PAGE CSR in O(1) and is checked in full when
//! it is read (O(pages of the chunk)); this module parses no root or descriptor.

use super::page::ArrayPage;
use super::stats::{StatArrays, Statistics};
use super::view::ModularFooter;
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

/// The FILE pages of an OFFSET_INDEX module, over the page space of all chunks.
#[derive(Clone, Copy, Debug)]
pub struct OffsetIndexArrays<'a> {
    /// FIRST_PAGE: K + 1 values, chunk k's pages are `[f[k], f[k+1])`.
    pub first_page: ArrayPage<'a>,
    /// PAGE_OFFSET over the page space (dense).
    pub page_offset: ArrayPage<'a>,
    /// COMPRESSED_PAGE_SIZE over the page space (dense).
    pub compressed_page_size: ArrayPage<'a>,
    /// FIRST_ROW_INDEX over the page space (dense).
    pub first_row_index: ArrayPage<'a>,
    /// UNENCODED_BYTE_ARRAY_DATA_BYTES over the page space (SPARSE when some chunks lack it).
    pub unencoded_byte_array_data_bytes: Option<ArrayPage<'a>>,
}

/// A level-histogram array of a COLUMN_INDEX module and its CSR over chunks.
#[derive(Clone, Copy, Debug)]
pub struct HistogramArrays<'a> {
    /// FIRST_*_LEVEL_HISTOGRAM: K + 1 values.
    pub first: ArrayPage<'a>,
    /// The histograms of all chunks' pages, concatenated (dense).
    pub values: ArrayPage<'a>,
}

/// The FILE pages of a COLUMN_INDEX module, over the page space of all chunks.
#[derive(Clone, Copy, Debug)]
pub struct ColumnIndexArrays<'a> {
    /// FIRST_PAGE: K + 1 values, chunk k's pages are `[f[k], f[k+1])`.
    pub first_page: ArrayPage<'a>,
    /// BOUNDARY_ORDER over chunks (K values, dense).
    pub boundary_order: ArrayPage<'a>,
    /// NULL_PAGE over the page space (dense).
    pub null_page: ArrayPage<'a>,
    /// The statistic arrays over the page space.
    pub stats: StatArrays<'a>,
    /// REPETITION_LEVEL_HISTOGRAM and its CSR, if recorded.
    pub repetition_level_histograms: Option<HistogramArrays<'a>>,
    /// DEFINITION_LEVEL_HISTOGRAM and its CSR, if recorded.
    pub definition_level_histograms: Option<HistogramArrays<'a>>,
}

/// Chunk `k`'s slice `[a, b)` of a CSR page over a domain of `n` positions, as `(a, b - a)`;
/// checks the two bounds it reads (`NotSorted`, `OutOfBounds`).
pub(super) fn csr_slice(first: &ArrayPage<'_>, k: usize, n: usize) -> Result<(usize, usize)> {
    let a = first.get_dense(k)?;
    let b = first.get_dense(k + 1)?;
    if a > b {
        return Err(Error::new(ErrorKind::NotSorted, first.payload_offset()));
    }
    if b > off(n) {
        return Err(Error::new(ErrorKind::OutOfBounds, first.payload_offset()));
    }
    // b <= n, a usize.
    Ok((a as usize, (b - a) as usize))
}

/// Opening checks of a CSR page: dense over `k + 1`, first value 0, last value `n`.
pub(super) fn check_csr(first: &ArrayPage<'_>, k: usize, n: usize) -> Result<()> {
    ModularFooter::expect_domain(first, off(k) + 1, true)?;
    if first.get_dense(0)? != 0 {
        return Err(Error::new(ErrorKind::InvalidValue, first.payload_offset()));
    }
    if first.get_dense(k)? != off(n) {
        return Err(Error::new(ErrorKind::Mismatch, first.payload_offset()));
    }
    Ok(())
}

/// A chunk's window of an optional page-space array: `None` when no position of the window
/// is present (the chunk has no such data).
fn window_of<'a>(p: &Option<ArrayPage<'a>>, a: usize, n: usize) -> Result<Option<ArrayPage<'a>>> {
    match p {
        Some(p) => {
            let w = p.window(a, n)?;
            Ok((w.num_present() > 0).then_some(w))
        }
        None => Ok(None),
    }
}

impl<'a> ModularFooter<'a> {
    /// The arrays of the OFFSET_INDEX module, if the footer has one.
    pub fn offset_index_arrays(&self) -> Option<&OffsetIndexArrays<'a>> {
        self.offset_index.as_ref()
    }

    /// The arrays of the COLUMN_INDEX module, if the footer has one.
    pub fn column_index_arrays(&self) -> Option<&ColumnIndexArrays<'a>> {
        self.column_index.as_ref()
    }

    /// The offset index of chunk (column, row group): `None` without an OFFSET_INDEX module
    /// or for a chunk without an index (an empty FIRST_PAGE slice). The arrays are windows
    /// of the module's FILE pages; the chunk's slice is validated (O(pages of the chunk)).
    pub fn offset_index(&self, column: u32, row_group: u32) -> Result<Option<OffsetIndex<'a>>> {
        let k = self.chunk_index(column, row_group)?;
        let Some(oi) = &self.offset_index else {
            return Ok(None);
        };
        let (a, n) = csr_slice(&oi.first_page, k, oi.page_offset.len())?;
        if n == 0 {
            return Ok(None);
        }
        let po = oi.page_offset.window(a, n)?;
        let cs = oi.compressed_page_size.window(a, n)?;
        let fr = oi.first_row_index.window(a, n)?;
        for p in [&po, &cs, &fr] {
            p.validate()?;
        }
        let ub = window_of(&oi.unencoded_byte_array_data_bytes, a, n)?;
        if let Some(u) = &ub {
            // All of the chunk's pages or none.
            if u.num_present() != n {
                return Err(Error::new(ErrorKind::Mismatch, u.offset()));
            }
            if u.window_values().any(|v| v > i64::MAX as u64) {
                return Err(Error::new(ErrorKind::InvalidValue, u.payload_offset()));
            }
            u.validate()?;
        }
        Ok(Some(OffsetIndex {
            page_offset: po,
            compressed_page_size: cs,
            first_row_index: fr,
            unencoded_byte_array_data_bytes: ub,
        }))
    }

    /// The column index of chunk (column, row group), like [`ModularFooter::offset_index`].
    /// A statistic array with no present position in the chunk's slice is `None`.
    pub fn column_index(&self, column: u32, row_group: u32) -> Result<Option<ColumnIndex<'a>>> {
        let k = self.chunk_index(column, row_group)?;
        let Some(ci) = &self.column_index else {
            return Ok(None);
        };
        let (a, n) = csr_slice(&ci.first_page, k, ci.null_page.len())?;
        if n == 0 {
            return Ok(None);
        }
        let np = ci.null_page.window(a, n)?;
        let mut stats = StatArrays::default();
        for (slot, page) in [
            (&mut stats.null_count, &ci.stats.null_count),
            (&mut stats.nan_count, &ci.stats.nan_count),
            (&mut stats.min_value, &ci.stats.min_value),
            (&mut stats.max_value, &ci.stats.max_value),
            (&mut stats.prefix, &ci.stats.prefix),
            (&mut stats.min_is_exact, &ci.stats.min_is_exact),
            (&mut stats.max_is_exact, &ci.stats.max_is_exact),
        ] {
            *slot = window_of(page, a, n)?;
        }
        stats.check_shape(np.offset())?;
        stats.validate()?;
        // MIN/MAX present positions are exactly the non-null pages.
        if let Some(min) = &stats.min_value {
            for i in 0..n {
                let null = np.get_dense(i)? != 0;
                if min.slot(i)?.is_some() == null {
                    return Err(Error::new(ErrorKind::Mismatch, min.offset()));
                }
            }
        }
        let hist = |h: &Option<HistogramArrays<'a>>| -> Result<Option<ArrayPage<'a>>> {
            let Some(h) = h else { return Ok(None) };
            let (s, len) = csr_slice(&h.first, k, h.values.len())?;
            if len == 0 {
                return Ok(None);
            }
            h.values.window(s, len).map(Some)
        };
        let rep = hist(&ci.repetition_level_histograms)?;
        let def = hist(&ci.definition_level_histograms)?;
        check_level_histograms([&rep, &def], &np)?;
        let boundary_order = ci.boundary_order.get_dense(k)? as u8;
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
        if h.window_values().any(|v| v > i64::MAX as u64) {
            return Err(Error::new(ErrorKind::InvalidValue, h.payload_offset()));
        }
    }
    Ok(())
}
