//! [`ModularFooter`]: the validated view over a byte window that ends at the end of the file.
//!
//! [`ModularFooter::parse`] reads the trailer, the root, the module directory, every descriptor
//! and the header of every FILE page (a fixed number: at most 15 + 8 + 5 + 14), and checks all
//! structural rules: counts, sums, unique module kinds, ranges inside the file and before the
//! root, no overlaps, value types, domains, required arrays, exact lengths. This work does
//! not grow with the number of columns (only the `row_group_num_rows` sum grows with the row
//! groups). Value-level rules that need a pass over whole arrays (sorted positions, CSR and
//! FIRST_PAGE monotonicity, enum ranges, schema leaf count, every chunk's page-index slice)
//! run in [`ModularFooter::validate`]; each accessor checks the values it reads, so an
//! unvalidated footer still never yields an out-of-range value or panics.
//!
//! Bytes outside the window are reported as [`ErrorKind::NeedsBytes`] `[a, b)`: fetch them
//! and retry with a larger window.
//!
//! This file holds the view, its [`Limits`], the placement accessors and `validate`; the
//! parsing of root, directory and descriptors is in `directory`, statistics in `stats`, the
//! per-chunk page indexes in `page_index`. It does no I/O and allocates nothing.

use super::directory::{ModuleLocation, Ranges};
use super::extras::ChunkExtras;
use super::page::ArrayPage;
use super::page_index::{
    check_csr, ColumnIndexArrays, DictionaryPages, HistogramArrays, OffsetIndexArrays,
};
use super::schema::{FileMetadata, Schema};
use super::stats::{StatArrays, Statistics};
use super::{Module, MAGIC, TRAILER_LEN};
use crate::codec::thrift::Reader;
use crate::error::{off, Error, ErrorKind, Result};

/// Limits checked before any work proportional to the declared sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most page locations in one descriptor, and most pages in one decrypted page group.
    pub max_pages: u32,
    /// Largest `num_values` of a page.
    pub max_num_values: u32,
    /// Largest `payload_length` of a page.
    pub max_payload_bytes: u32,
    /// Thrift nesting limit.
    pub max_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pages: 1 << 16,
            max_num_values: i32::MAX as u32,
            max_payload_bytes: i32::MAX as u32,
            max_depth: crate::codec::thrift::DEFAULT_MAX_DEPTH,
        }
    }
}

/// How [`ModularFooter::parse_with`] opens a footer. Build it with `..Default::default()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FooterOptions {
    /// The absolute file offset of the window's first byte (0: the window is the whole file).
    pub origin: u64,
    /// Limits checked before any work proportional to declared sizes.
    pub limits: Limits,
}

/// The nine placement arrays (all required), for bulk reads through the unpack kernels
/// ([`ArrayPage::unpack_u64`]); all are dense, chunk arrays over `K = C * G` (column-major),
/// `first_dictionary_page` over `K + 1`, `physical_type` over `C`.
#[derive(Clone, Copy, Debug)]
pub struct PlacementArrays<'a> {
    /// DATA_PAGE_OFFSET.
    pub data_page_offset: ArrayPage<'a>,
    /// FIRST_DICTIONARY_PAGE (CSR).
    pub first_dictionary_page: ArrayPage<'a>,
    /// DICTIONARY_PAGE_OFFSET.
    pub dictionary_page_offset: ArrayPage<'a>,
    /// TOTAL_COMPRESSED_SIZE.
    pub total_compressed_size: ArrayPage<'a>,
    /// TOTAL_UNCOMPRESSED_SIZE.
    pub total_uncompressed_size: ArrayPage<'a>,
    /// NUM_VALUES.
    pub num_values: ArrayPage<'a>,
    /// CODEC.
    pub codec: ArrayPage<'a>,
    /// PHYSICAL_TYPE.
    pub physical_type: ArrayPage<'a>,
    /// IS_FULLY_DICTIONARY_ENCODED.
    pub is_fully_dictionary_encoded: ArrayPage<'a>,
}

/// The placement of one column chunk.
#[derive(Clone, Copy, Debug)]
pub struct ChunkPlacement<'a> {
    /// Absolute offset of the first data page.
    pub data_page_offset: u64,
    /// The chunk's dictionary page offsets (a CSR slice).
    pub dictionary_pages: DictionaryPages<'a>,
    /// Compressed size.
    pub total_compressed_size: u64,
    /// Uncompressed size.
    pub total_uncompressed_size: u64,
    /// Number of values.
    pub num_values: u64,
    /// parquet.CompressionCodec.
    pub codec: u8,
    /// parquet.Type of the column.
    pub physical_type: u8,
    /// Whether every data page is dictionary-encoded.
    pub is_fully_dictionary_encoded: bool,
}

/// A validated modular footer over a byte window (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct ModularFooter<'a> {
    pub(super) window: &'a [u8],
    pub(super) origin: u64,
    pub(super) file_len: u64,
    pub(super) root_offset: u64,
    pub(super) limits: Limits,
    pub(super) num_row_groups: u32,
    pub(super) num_columns: u32,
    pub(super) num_rows: u64,
    /// Bytes of the `row_group_num_rows` list elements (varints), and the count.
    pub(super) rg_rows: (&'a [u8], u64),
    pub(super) modules: [Option<ModuleLocation>; 7],
    pub(super) extras: ChunkExtras<'a>,
    pub(super) placement: Option<PlacementArrays<'a>>,
    pub(super) stats: Option<StatArrays<'a>>,
    pub(super) offset_index: Option<OffsetIndexArrays<'a>>,
    pub(super) column_index: Option<ColumnIndexArrays<'a>>,
}

impl<'a> ModularFooter<'a> {
    /// Opens the footer of a file whose bytes are all of `window` (origin 0), with default
    /// [`Limits`]: [`parse_with`](Self::parse_with) with default options.
    ///
    /// ```
    /// use lakecore::footer::ModularFooter;
    /// use lakecore::ErrorKind;
    /// let e = ModularFooter::parse(b"PAR1....PAR1").unwrap_err();
    /// assert_eq!((e.kind, e.offset), (ErrorKind::BadMagic, 8));
    /// ```
    pub fn parse(window: &'a [u8]) -> Result<Self> {
        Self::parse_with(window, &FooterOptions::default())
    }

    /// Opens the footer in `window`, the last `window.len()` bytes of a file, which start at
    /// absolute offset `options.origin`, with `options.limits`. Bytes the footer needs before
    /// the window are [`ErrorKind::NeedsBytes`]; errors carry absolute offsets.
    ///
    /// ```
    /// use lakecore::footer::{FooterOptions, Limits, ModularFooter};
    /// use lakecore::ErrorKind;
    /// let options = FooterOptions { origin: 100, limits: Limits { max_depth: 8, ..Limits::default() } };
    /// let e = ModularFooter::parse_with(b"PAR1....PAR1", &options).unwrap_err();
    /// assert_eq!((e.kind, e.offset), (ErrorKind::BadMagic, 108));
    /// ```
    ///
    /// ```
    /// use lakecore::footer::{ChunkMeta, FooterInput};
    /// use lakecore::footer::{FooterOptions, Limits, ModularFooter};
    /// use lakecore::ErrorKind;
    /// let mut input = FooterInput::flat(&["id"], &[2], &[10]);
    /// input.chunks[0] = ChunkMeta { data_page_offset: 4, total_compressed_size: 90,
    ///     total_uncompressed_size: 90, num_values: 10, ..ChunkMeta::default() };
    /// let mut file = b"PAR1".to_vec();
    /// file.resize(94, 0);
    /// input.write(&mut file)?;
    /// assert!(ModularFooter::parse_with(&file, &FooterOptions::default()).is_ok());
    /// // The root is one Thrift level and its module directory another: depth 1 is too shallow.
    /// let limits = Limits { max_depth: 1, ..Limits::default() };
    /// let e = ModularFooter::parse_with(&file, &FooterOptions { origin: 0, limits }).unwrap_err();
    /// assert_eq!(e.kind, ErrorKind::DepthLimit);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn parse_with(window: &'a [u8], options: &FooterOptions) -> Result<Self> {
        let FooterOptions { origin, limits } = *options;
        let file_len = origin
            .checked_add(off(window.len()))
            .ok_or(Error::new(ErrorKind::ArithmeticOverflow, origin))?;
        let trailer_at = file_len.saturating_sub(off(TRAILER_LEN));
        if window.len() < TRAILER_LEN {
            return Err(if origin > 0 {
                Error::new(ErrorKind::NeedsBytes { end: file_len }, trailer_at)
            } else {
                Error::new(ErrorKind::Truncated, 0)
            });
        }
        let tail = window.get(window.len() - TRAILER_LEN..).unwrap_or_default();
        let (len_bytes, magic) = tail.split_at(4);
        if magic != MAGIC {
            return Err(Error::new(ErrorKind::BadMagic, trailer_at + 4));
        }
        let mut lb = [0u8; 4];
        lb.copy_from_slice(len_bytes);
        let root_len = u64::from(u32::from_le_bytes(lb));
        let root_offset = trailer_at
            .checked_sub(root_len)
            .filter(|&s| s >= off(super::LEADING_MAGIC.len()))
            .ok_or(Error::new(ErrorKind::InvalidLength, trailer_at))?;
        let mut footer = ModularFooter {
            window,
            origin,
            file_len,
            root_offset,
            limits,
            num_row_groups: 0,
            num_columns: 0,
            num_rows: 0,
            rg_rows: (&[], 0),
            modules: [None; 7],
            extras: ChunkExtras::default(),
            placement: None,
            stats: None,
            offset_index: None,
            column_index: None,
        };
        let root = footer.slice(root_offset, root_len)?;
        footer.parse_root(root)?;
        let mut ranges = Ranges::new();
        ranges.push(root_offset, trailer_at)?;
        for loc in footer.modules.into_iter().flatten() {
            ranges.push(loc.offset, loc.offset.saturating_add(loc.length))?;
            match loc.module {
                Module::Placement => footer.open_placement(loc, &mut ranges)?,
                Module::RowGroupStats => footer.open_stats(loc, &mut ranges)?,
                Module::OffsetIndex | Module::ColumnIndex => {
                    footer.open_page_index(loc, &mut ranges)?
                }
                Module::Schema | Module::FileMetadata | Module::RowGroups => {}
            }
        }
        ranges.check_disjoint()?;
        Ok(footer)
    }

    /// The bytes `[offset, offset + len)` of the file, or `NeedsBytes` when they are not in
    /// the window.
    pub(super) fn slice(&self, offset: u64, len: u64) -> Result<&'a [u8]> {
        let end = offset
            .checked_add(len)
            .ok_or(Error::new(ErrorKind::ArithmeticOverflow, offset))?;
        if end > self.file_len {
            return Err(Error::new(ErrorKind::OutOfBounds, offset));
        }
        if offset < self.origin {
            return Err(Error::new(ErrorKind::NeedsBytes { end }, offset));
        }
        let a = usize::try_from(offset - self.origin)
            .map_err(|_| Error::new(ErrorKind::OutOfBounds, offset))?;
        let b = usize::try_from(end - self.origin)
            .map_err(|_| Error::new(ErrorKind::OutOfBounds, offset))?;
        self.window
            .get(a..b)
            .ok_or(Error::new(ErrorKind::OutOfBounds, offset))
    }

    /// A Thrift reader over `bytes` (at absolute `origin`) with the footer's depth limit.
    pub(super) fn reader(&self, bytes: &'a [u8], origin: u64) -> Reader<'a> {
        Reader::new(bytes, origin).with_max_depth(self.limits.max_depth)
    }

    /// The number of chunks `K = C * G`.
    pub(super) fn chunks(&self) -> u32 {
        // Checked on open: K <= i32::MAX.
        self.num_columns * self.num_row_groups
    }

    /// `page` spans `n` positions (and is dense when `dense`).
    pub(super) fn expect_domain(page: &ArrayPage<'_>, n: u64, dense: bool) -> Result<()> {
        if off(page.len()) != n {
            return Err(Error::new(ErrorKind::Mismatch, page.offset()));
        }
        if dense && page.is_sparse() {
            return Err(Error::new(ErrorKind::Mismatch, page.offset()));
        }
        Ok(())
    }

    fn open_placement(&mut self, loc: ModuleLocation, ranges: &mut Ranges) -> Result<()> {
        let mut found: [Option<ArrayPage<'a>>; 9] = [None; 9];
        let mut extras = ChunkExtras::default();
        self.for_each_page(loc, ranges, |p| {
            let i = p.header().array as usize;
            if let Some(slot) = found.get_mut(i) {
                *slot = Some(p);
            } else if let Some(slot) = extras.slot_mut(p.header().array) {
                *slot = Some(p);
            }
            Ok(())
        })?;
        let k = u64::from(self.chunks());
        extras.check_shape(k)?;
        extras.distinct_count = self.extras.distinct_count;
        self.extras = extras;
        let missing = Error::new(ErrorKind::ThriftMissingField, loc.offset);
        let [Some(dpo), Some(fdp), Some(dict), Some(tcs), Some(tus), Some(nv), Some(codec), Some(pt), Some(dict_enc)] =
            found
        else {
            return Err(missing);
        };
        for p in [&dpo, &tcs, &tus, &nv, &codec, &dict_enc] {
            Self::expect_domain(p, k, true)?;
        }
        Self::expect_domain(&fdp, k + 1, true)?;
        Self::expect_domain(&pt, u64::from(self.num_columns), true)?;
        if dict.is_sparse() {
            return Err(Error::new(ErrorKind::Mismatch, dict.offset()));
        }
        // CSR ends: first 0, last = D.
        let first = fdp.get(0)?.unwrap_or(0);
        if first != 0 {
            return Err(Error::new(ErrorKind::InvalidValue, fdp.payload_offset()));
        }
        let last = fdp.get(k as usize)?.unwrap_or(0);
        if last != off(dict.len()) {
            return Err(Error::new(ErrorKind::Mismatch, fdp.payload_offset()));
        }
        self.placement = Some(PlacementArrays {
            data_page_offset: dpo,
            first_dictionary_page: fdp,
            dictionary_page_offset: dict,
            total_compressed_size: tcs,
            total_uncompressed_size: tus,
            num_values: nv,
            codec,
            physical_type: pt,
            is_fully_dictionary_encoded: dict_enc,
        });
        Ok(())
    }

    fn open_stats(&mut self, loc: ModuleLocation, ranges: &mut Ranges) -> Result<()> {
        let mut stats = StatArrays::default();
        let mut distinct = None;
        let k = u64::from(self.chunks());
        self.for_each_page(loc, ranges, |p| {
            Self::expect_domain(&p, k, false)?;
            if let Some(slot) = stats.slot_mut(p.header().array) {
                *slot = Some(p);
            } else if p.header().array == super::MetadataArray::DistinctCount {
                distinct = Some(p);
            }
            Ok(())
        })?;
        self.extras.distinct_count = distinct;
        stats.check_shape(loc.offset)?;
        self.stats = Some(stats);
        Ok(())
    }

    fn open_page_index(&mut self, loc: ModuleLocation, ranges: &mut Ranges) -> Result<()> {
        use super::MetadataArray as A;
        // Indexed by array value - 20 (arrays 20..=51).
        let mut found: [Option<ArrayPage<'a>>; 32] = [None; 32];
        self.for_each_page(loc, ranges, |p| {
            let i = (p.header().array as usize).wrapping_sub(20);
            if let Some(slot) = found.get_mut(i) {
                *slot = Some(p);
            }
            Ok(())
        })?;
        let get = |a: A| found.get((a as usize).wrapping_sub(20)).copied().flatten();
        let missing = Error::new(ErrorKind::ThriftMissingField, loc.offset);
        let k = self.chunks() as usize;
        let first_page = get(A::FirstPage).ok_or(missing)?;
        if loc.module == Module::OffsetIndex {
            let (po, cs, fr) = (
                get(A::PageOffset).ok_or(missing)?,
                get(A::CompressedPageSize).ok_or(missing)?,
                get(A::FirstRowIndex).ok_or(missing)?,
            );
            let p = off(po.len());
            for page in [&po, &cs, &fr] {
                Self::expect_domain(page, p, true)?;
            }
            let ub = get(A::UnencodedByteArrayDataBytes);
            if let Some(u) = &ub {
                Self::expect_domain(u, p, false)?;
            }
            check_csr(&first_page, k, po.len())?;
            self.offset_index = Some(OffsetIndexArrays {
                first_page,
                page_offset: po,
                compressed_page_size: cs,
                first_row_index: fr,
                unencoded_byte_array_data_bytes: ub,
            });
        } else {
            let np = get(A::NullPage).ok_or(missing)?;
            let bo = get(A::BoundaryOrder).ok_or(missing)?;
            Self::expect_domain(&np, off(np.len()), true)?;
            Self::expect_domain(&bo, off(k), true)?;
            check_csr(&first_page, k, np.len())?;
            let mut stats = StatArrays::default();
            for a in [
                A::NullCount,
                A::NanCount,
                A::MinValue,
                A::MaxValue,
                A::MinMaxPrefix,
                A::MinIsExact,
                A::MaxIsExact,
            ] {
                if let (Some(slot), Some(page)) = (stats.slot_mut(a), get(a)) {
                    Self::expect_domain(&page, off(np.len()), false)?;
                    *slot = Some(page);
                }
            }
            stats.check_shape(loc.offset)?;
            let mut hist = [None, None];
            for (out, (values, first)) in hist.iter_mut().zip([
                (
                    A::RepetitionLevelHistogram,
                    A::FirstRepetitionLevelHistogram,
                ),
                (
                    A::DefinitionLevelHistogram,
                    A::FirstDefinitionLevelHistogram,
                ),
            ]) {
                match (get(values), get(first)) {
                    (None, None) => {}
                    (Some(values), Some(first)) => {
                        Self::expect_domain(&values, off(values.len()), true)?;
                        check_csr(&first, k, values.len())?;
                        *out = Some(HistogramArrays { first, values });
                    }
                    _ => return Err(missing),
                }
            }
            self.column_index = Some(ColumnIndexArrays {
                first_page,
                boundary_order: bo,
                null_page: np,
                stats,
                repetition_level_histograms: hist[0],
                definition_level_histograms: hist[1],
            });
        }
        Ok(())
    }

    fn placement(&self) -> Result<&PlacementArrays<'a>> {
        self.placement
            .as_ref()
            .ok_or(Error::new(ErrorKind::ThriftMissingField, self.root_offset))
    }

    /// The placement arrays, for bulk reads (e.g. every chunk's data page offset with one
    /// [`ArrayPage::unpack_checked_u64`] call).
    pub fn placement_arrays(&self) -> Result<PlacementArrays<'a>> {
        self.placement().copied()
    }

    /// Number of row groups `G`.
    pub fn num_row_groups(&self) -> u32 {
        self.num_row_groups
    }

    /// Number of leaf columns `C`.
    pub fn num_columns(&self) -> u32 {
        self.num_columns
    }

    /// Total number of rows.
    pub fn num_rows(&self) -> u64 {
        self.num_rows
    }

    /// Absolute offset of the root struct.
    pub fn root_offset(&self) -> u64 {
        self.root_offset
    }

    /// The file length (end of the window).
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Bytes of footer metadata: from the lowest module offset to the end of the file.
    pub fn metadata_start(&self) -> u64 {
        let mut start = self.root_offset;
        for m in self.modules.iter().flatten() {
            start = start.min(m.offset);
        }
        let pages = [
            self.placement.map(|p| p.data_page_offset),
            self.offset_index.map(|p| p.first_page),
            self.column_index.map(|p| p.first_page),
        ];
        for p in pages.into_iter().flatten() {
            start = start.min(p.offset());
        }
        start
    }

    /// The known modules of the directory, in module order.
    pub fn modules(&self) -> impl Iterator<Item = ModuleLocation> + '_ {
        self.modules.iter().flatten().copied()
    }

    /// Row counts of each row group (a walk over `G` varints).
    pub fn row_group_num_rows(&self) -> impl Iterator<Item = u64> + 'a {
        let mut r = Reader::new(self.rg_rows.0, 0);
        (0..self.rg_rows.1).map(move |_| r.i64().map_or(0, |v| v as u64))
    }

    /// The chunk ordinal of (column, row group), column-major.
    pub(super) fn chunk_index(&self, column: u32, row_group: u32) -> Result<usize> {
        if column >= self.num_columns || row_group >= self.num_row_groups {
            return Err(Error::new(ErrorKind::OutOfBounds, self.root_offset));
        }
        Ok(column as usize * self.num_row_groups as usize + row_group as usize)
    }

    /// The placement of chunk (column, row group): O(1) bit reads (plus one CSR slice).
    pub fn chunk_placement(&self, column: u32, row_group: u32) -> Result<ChunkPlacement<'a>> {
        let k = self.chunk_index(column, row_group)?;
        let p = self.placement()?;
        let dense = |page: &ArrayPage<'a>, i: usize| page.get_dense(i);
        let start = dense(&p.first_dictionary_page, k)?;
        let end = dense(&p.first_dictionary_page, k + 1)?;
        if start > end || end > off(p.dictionary_page_offset.len()) {
            return Err(Error::new(
                ErrorKind::NotSorted,
                p.first_dictionary_page.payload_offset(),
            ));
        }
        Ok(ChunkPlacement {
            data_page_offset: dense(&p.data_page_offset, k)?,
            dictionary_pages: DictionaryPages::new(
                p.dictionary_page_offset,
                start as usize,
                end as usize,
            ),
            total_compressed_size: dense(&p.total_compressed_size, k)?,
            total_uncompressed_size: dense(&p.total_uncompressed_size, k)?,
            num_values: dense(&p.num_values, k)?,
            codec: dense(&p.codec, k)? as u8,
            physical_type: dense(&p.physical_type, column as usize)? as u8,
            is_fully_dictionary_encoded: dense(&p.is_fully_dictionary_encoded, k)? != 0,
        })
    }

    /// Unpacks `DATA_PAGE_OFFSET` of all row groups of `column` into `out` (length `G`)
    /// through the bit-unpack kernels: a column's chunks are contiguous.
    pub fn column_data_page_offsets(&self, column: u32, out: &mut [u64]) -> Result<()> {
        let k = self.chunk_index(column, 0).or_else(|e| {
            if self.num_row_groups == 0 && column < self.num_columns {
                Ok(0)
            } else {
                Err(e)
            }
        })?;
        self.placement()?.data_page_offset.unpack_u64(k, out)
    }

    /// Row-group statistics of the chunk, or `None` when the file has no ROW_GROUP_STATS.
    pub fn chunk_statistics(&self, column: u32, row_group: u32) -> Result<Option<Statistics<'a>>> {
        let k = self.chunk_index(column, row_group)?;
        match &self.stats {
            Some(s) => s.at(k).map(Some),
            None => Ok(None),
        }
    }

    /// The ROW_GROUP_STATS arrays, if present.
    pub fn statistics_arrays(&self) -> Option<&StatArrays<'a>> {
        self.stats.as_ref()
    }

    /// The location of `module`, if the directory has it.
    pub fn module(&self, module: Module) -> Option<ModuleLocation> {
        self.modules.get(module as usize).copied().flatten()
    }

    /// The SCHEMA module.
    ///
    /// ```
    /// use lakecore::footer::{ChunkMeta, FooterInput};
    /// use lakecore::footer::ModularFooter;
    /// let mut input = FooterInput::flat(&["id"], &[2], &[10]); // one INT64 column, one row group
    /// input.chunks[0] = ChunkMeta { data_page_offset: 4, total_compressed_size: 90,
    ///     total_uncompressed_size: 90, num_values: 10, ..ChunkMeta::default() };
    /// let mut file = b"PAR1".to_vec();
    /// file.resize(94, 0); // the data pages
    /// input.write(&mut file)?;
    /// let footer = ModularFooter::parse(&file)?;
    /// let schema = footer.schema()?;
    /// assert_eq!(schema.num_leaves()?, 1);
    /// let leaf = schema.leaves().next().unwrap()?;
    /// assert_eq!(leaf.path(), [&b"id"[..]]);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn schema(&self) -> Result<Schema<'a>> {
        let loc = self
            .module(Module::Schema)
            .ok_or(Error::new(ErrorKind::ThriftMissingField, self.root_offset))?;
        let bytes = self.slice(loc.offset, loc.length)?;
        Schema::parse(bytes, loc.offset, self.limits.max_depth)
    }

    /// The FILE_METADATA module, if present.
    pub fn file_metadata(&self) -> Result<Option<FileMetadata<'a>>> {
        let Some(loc) = self.module(Module::FileMetadata) else {
            return Ok(None);
        };
        let bytes = self.slice(loc.offset, loc.length)?;
        FileMetadata::parse(bytes, loc.offset, self.limits.max_depth).map(Some)
    }

    /// Every value-level rule: all pages' values, CSR and page-group monotonicity, statistic
    /// positions, every chunk's page-index slice, the schema (leaf count = `num_columns`) and
    /// the file metadata. O(size of the footer).
    ///
    /// ```
    /// use lakecore::footer::{ChunkMeta, FooterInput};
    /// use lakecore::footer::ModularFooter;
    /// let mut input = FooterInput::flat(&["id"], &[2], &[10]); // one INT64 column, one row group
    /// input.chunks[0] = ChunkMeta { data_page_offset: 4, total_compressed_size: 90,
    ///     total_uncompressed_size: 90, num_values: 10, ..ChunkMeta::default() };
    /// let mut file = b"PAR1".to_vec();
    /// file.resize(94, 0); // the data pages
    /// input.write(&mut file)?;
    /// let footer = ModularFooter::parse(&file)?;
    /// footer.validate()?; // every array's value-level rules
    /// assert_eq!(footer.chunk_placement(0, 0)?.total_compressed_size, 90);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn validate(&self) -> Result<()> {
        let p = self.placement()?;
        for page in [
            &p.data_page_offset,
            &p.first_dictionary_page,
            &p.dictionary_page_offset,
            &p.total_compressed_size,
            &p.total_uncompressed_size,
            &p.num_values,
            &p.codec,
            &p.physical_type,
            &p.is_fully_dictionary_encoded,
        ] {
            page.validate()?;
        }
        nondecreasing(&p.first_dictionary_page)?;
        if let Some(s) = &self.stats {
            s.validate()?;
        }
        let k = self.chunks() as usize;
        let g = self.num_row_groups as usize;
        if let Some(oi) = &self.offset_index {
            for page in [
                &oi.first_page,
                &oi.page_offset,
                &oi.compressed_page_size,
                &oi.first_row_index,
            ]
            .into_iter()
            .chain(&oi.unencoded_byte_array_data_bytes)
            {
                page.validate()?;
            }
            nondecreasing(&oi.first_page)?;
        }
        if let Some(ci) = &self.column_index {
            ci.first_page.validate()?;
            ci.boundary_order.validate()?;
            ci.null_page.validate()?;
            ci.stats.validate()?;
            nondecreasing(&ci.first_page)?;
            for h in [
                &ci.repetition_level_histograms,
                &ci.definition_level_histograms,
            ]
            .into_iter()
            .flatten()
            {
                h.first.validate()?;
                h.values.validate()?;
                nondecreasing(&h.first)?;
            }
        }
        for i in 0..k {
            let (c, r) = ((i / g) as u32, (i % g) as u32);
            self.offset_index(c, r)?;
            self.column_index(c, r)?;
        }
        let schema = self.schema()?;
        let leaves = schema.num_leaves()?;
        if leaves != off(self.num_columns as usize) {
            return Err(Error::new(ErrorKind::Mismatch, schema.offset()));
        }
        self.file_metadata()?;
        self.validate_extras()?;
        Ok(())
    }
}

fn nondecreasing(page: &ArrayPage<'_>) -> Result<()> {
    let mut prev = 0u64;
    for v in page.values().iter() {
        if v < prev {
            return Err(Error::new(ErrorKind::NotSorted, page.payload_offset()));
        }
        prev = v;
    }
    Ok(())
}

/// Accessors for the arrow-rs adapters (`footer::arrow`) and the CLI.
impl<'a> ModularFooter<'a> {
    /// The bytes of `module` (a THRIFT module's struct, or an ARRAY_PAGES module's
    /// descriptor), or `None` when the directory has no such module.
    pub fn module_bytes(&self, module: Module) -> Result<Option<&'a [u8]>> {
        match self.module(module) {
            Some(loc) => self.slice(loc.offset, loc.length).map(Some),
            None => Ok(None),
        }
    }

    /// The Thrift nesting limit the footer was opened with.
    pub fn max_depth(&self) -> u32 {
        self.limits.max_depth
    }
}
