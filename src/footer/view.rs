//! [`ModularFooter`]: the validated view over a byte window that ends at the end of the file.
//!
//! [`ModularFooter::new`] reads the trailer, the root, the module directory, every descriptor
//! and the header of every FILE page (a fixed number: at most 9 + 7 + 1 + 1), and checks all
//! structural rules: counts, sums, unique module kinds, ranges inside the file and before the
//! root, no overlaps, value types, domains, required arrays, exact lengths. This work does
//! not grow with the number of columns (only the `row_group_num_rows` sum grows with the row
//! groups). Value-level rules that need a pass over whole arrays (sorted positions, CSR and
//! page-group monotonicity, enum ranges, schema leaf count, every chunk's page-index group)
//! run in [`ModularFooter::validate`]; each accessor checks the values it reads, so an
//! unvalidated footer still never yields an out-of-range value or panics.
//!
//! Bytes outside the window are reported as [`ErrorKind::NeedsBytes`] `[a, b)`: fetch them
//! and retry with a larger window.
//!
//! Locating a page: descriptors are Thrift lists of `MetadataPageLocation`, which have no
//! random access; the profile forces a list walk, but each list has at most nine entries
//! (FILE pages only), so the walk is a constant-cost step done once on open.

use super::page::ArrayPage;
use super::schema::{FileMetadata, Schema};
use super::{
    allowed_in_descriptor, value_type_of, ArrayEncoding, MetadataArray, Module, ModuleEncoding,
    PageScope, MAGIC, TRAILER_LEN,
};
use crate::codec::thrift::{required, FieldType, Reader};
use crate::error::{off, Error, ErrorKind, Result};

/// Limits checked before any work proportional to the declared sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most page locations in one descriptor, and most pages in one page-index group.
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

/// One entry of the root's module directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModuleLocation {
    /// The module.
    pub module: Module,
    /// Its encoding.
    pub encoding: ModuleEncoding,
    /// Absolute offset.
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
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

/// Statistic arrays over one domain (chunks or page ordinals).
#[derive(Clone, Copy, Debug, Default)]
pub struct StatArrays<'a> {
    /// NULL_COUNT.
    pub null_count: Option<ArrayPage<'a>>,
    /// NAN_COUNT.
    pub nan_count: Option<ArrayPage<'a>>,
    /// MIN_VALUE.
    pub min_value: Option<ArrayPage<'a>>,
    /// MAX_VALUE.
    pub max_value: Option<ArrayPage<'a>>,
    /// MIN_MAX_PREFIX.
    pub prefix: Option<ArrayPage<'a>>,
    /// MIN_IS_EXACT.
    pub min_is_exact: Option<ArrayPage<'a>>,
    /// MAX_IS_EXACT.
    pub max_is_exact: Option<ArrayPage<'a>>,
}

impl<'a> StatArrays<'a> {
    fn slot_mut(&mut self, a: MetadataArray) -> Option<&mut Option<ArrayPage<'a>>> {
        Some(match a {
            MetadataArray::NullCount => &mut self.null_count,
            MetadataArray::NanCount => &mut self.nan_count,
            MetadataArray::MinValue => &mut self.min_value,
            MetadataArray::MaxValue => &mut self.max_value,
            MetadataArray::MinMaxPrefix => &mut self.prefix,
            MetadataArray::MinIsExact => &mut self.min_is_exact,
            MetadataArray::MaxIsExact => &mut self.max_is_exact,
            _ => return None,
        })
    }

    /// Cross-array rules checkable in O(1): MIN and MAX together with the same encoding and
    /// present count; PREFIX and exactness pages match them.
    fn check_shape(&self, at: u64) -> Result<()> {
        let mismatch = Err(Error::new(ErrorKind::Mismatch, at));
        let same = |a: &ArrayPage<'_>, b: &ArrayPage<'_>| {
            a.is_sparse() == b.is_sparse() && a.num_present() == b.num_present()
        };
        match (&self.min_value, &self.max_value) {
            (None, None) => {
                if self.prefix.is_some()
                    || self.min_is_exact.is_some()
                    || self.max_is_exact.is_some()
                {
                    return mismatch;
                }
            }
            (Some(min), Some(max)) => {
                if !same(min, max) {
                    return mismatch;
                }
                if let Some(p) = &self.prefix {
                    if !same(p, min) {
                        return mismatch;
                    }
                }
                for e in [&self.min_is_exact, &self.max_is_exact]
                    .into_iter()
                    .flatten()
                {
                    if e.is_sparse() && !same(e, min) {
                        return mismatch;
                    }
                }
            }
            _ => return mismatch,
        }
        Ok(())
    }

    /// O(n) rules: every page's values, and identical present positions of MIN, MAX, PREFIX
    /// and sparse exactness pages.
    fn validate(&self) -> Result<()> {
        for p in self.all().into_iter().flatten() {
            p.validate()?;
        }
        if let Some(min) = &self.min_value {
            let others = [
                &self.max_value,
                &self.prefix,
                &self.min_is_exact,
                &self.max_is_exact,
            ];
            for o in others.into_iter().flatten() {
                if o.is_sparse() {
                    same_positions(min, o)?;
                }
            }
        }
        Ok(())
    }

    fn all(&self) -> [Option<ArrayPage<'a>>; 7] {
        [
            self.null_count,
            self.nan_count,
            self.min_value,
            self.max_value,
            self.prefix,
            self.min_is_exact,
            self.max_is_exact,
        ]
    }

    /// The statistics of position `i`.
    pub fn at(&self, i: usize) -> Result<Statistics<'a>> {
        let get = |p: &Option<ArrayPage<'a>>| -> Result<Option<u64>> {
            match p {
                Some(p) => p.get(i),
                None => Ok(None),
            }
        };
        let (mut min, mut max) = (None, None);
        if let (Some(minp), Some(maxp)) = (&self.min_value, &self.max_value) {
            if let Some(slot) = minp.slot(i)? {
                let prefix = match &self.prefix {
                    Some(p) => p.bytes_at_slot(slot)?,
                    None => &[][..],
                };
                let exact = |e: &Option<ArrayPage<'a>>| -> Result<bool> {
                    Ok(match e {
                        None => true,
                        Some(e) if e.is_sparse() => e.value_at_slot(slot)? != 0,
                        Some(e) => e.get(i)?.unwrap_or(1) != 0,
                    })
                };
                min = Some(Bound {
                    prefix,
                    suffix: minp.bytes_at_slot(slot)?,
                    exact: exact(&self.min_is_exact)?,
                });
                let max_slot = maxp
                    .slot(i)?
                    .ok_or(Error::new(ErrorKind::Mismatch, maxp.offset()))?;
                max = Some(Bound {
                    prefix,
                    suffix: maxp.bytes_at_slot(max_slot)?,
                    exact: exact(&self.max_is_exact)?,
                });
            }
        }
        Ok(Statistics {
            null_count: get(&self.null_count)?,
            nan_count: get(&self.nan_count)?,
            min,
            max,
        })
    }
}

fn same_positions(a: &ArrayPage<'_>, b: &ArrayPage<'_>) -> Result<()> {
    let bad = Err(Error::new(ErrorKind::Mismatch, b.offset()));
    match (a.positions(), b.positions()) {
        (Some(pa), Some(pb)) => {
            if pa.len() != pb.len() || !pa.iter().eq(pb.iter()) {
                return bad;
            }
        }
        (None, None) => {}
        _ => return bad,
    }
    Ok(())
}

/// A min or max bound: `prefix ‖ suffix`, borrowed without copying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound<'a> {
    /// The common prefix of min and max (empty when the footer has no prefix array).
    pub prefix: &'a [u8],
    /// The rest of the bound.
    pub suffix: &'a [u8],
    /// False when the bound is truncated (min: a lower bound, max: an upper bound).
    pub exact: bool,
}

impl Bound<'_> {
    /// The bound's length in bytes.
    pub fn len(&self) -> usize {
        self.prefix.len() + self.suffix.len()
    }

    /// Whether the bound is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the bound equals `bytes`.
    pub fn eq_bytes(&self, bytes: &[u8]) -> bool {
        bytes.len() == self.len()
            && bytes.get(..self.prefix.len()) == Some(self.prefix)
            && bytes.get(self.prefix.len()..) == Some(self.suffix)
    }
}

/// Statistics of one chunk (row-group statistics) or one page (column index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Statistics<'a> {
    /// Null count, if recorded.
    pub null_count: Option<u64>,
    /// NaN count, if recorded.
    pub nan_count: Option<u64>,
    /// Min bound, if recorded.
    pub min: Option<Bound<'a>>,
    /// Max bound, if recorded (present exactly when `min` is).
    pub max: Option<Bound<'a>>,
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

/// A chunk's dictionary page offsets: `DICTIONARY_PAGE_OFFSET[start..end]`.
#[derive(Clone, Copy, Debug)]
pub struct DictionaryPages<'a> {
    page: ArrayPage<'a>,
    start: usize,
    end: usize,
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

const MAX_RANGES: usize = 40;

/// Fixed-capacity set of claimed byte ranges for the overlap check.
struct Ranges {
    items: [(u64, u64); MAX_RANGES],
    n: usize,
}

impl Ranges {
    fn push(&mut self, start: u64, end: u64) -> Result<()> {
        let slot = self
            .items
            .get_mut(self.n)
            .ok_or(Error::new(ErrorKind::LimitExceeded, start))?;
        *slot = (start, end);
        self.n += 1;
        Ok(())
    }

    fn check_disjoint(&mut self) -> Result<()> {
        let items = self.items.get_mut(..self.n).unwrap_or_default();
        items.sort_unstable();
        let mut end_so_far = 0u64;
        for &(a, b) in items.iter().filter(|r| r.0 < r.1) {
            if a < end_so_far {
                return Err(Error::new(ErrorKind::Mismatch, a));
            }
            end_so_far = b;
        }
        Ok(())
    }
}

/// A validated modular footer over a byte window (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct ModularFooter<'a> {
    window: &'a [u8],
    origin: u64,
    file_len: u64,
    root_offset: u64,
    limits: Limits,
    num_row_groups: u32,
    num_columns: u32,
    num_rows: u64,
    /// Bytes of the `row_group_num_rows` list elements (varints), and the count.
    rg_rows: (&'a [u8], u64),
    modules: [Option<ModuleLocation>; 6],
    placement: Option<PlacementArrays<'a>>,
    stats: Option<StatArrays<'a>>,
    offset_index: Option<ArrayPage<'a>>,
    column_index: Option<ArrayPage<'a>>,
}

impl<'a> ModularFooter<'a> {
    /// Opens the footer of a file whose last `window.len()` bytes are `window`, which starts
    /// at absolute offset `origin`, with default [`Limits`].
    ///
    /// ```
    /// use lakecore::footer::ModularFooter;
    /// use lakecore::ErrorKind;
    /// let e = ModularFooter::new(b"PAR1....PAR1", 0).unwrap_err();
    /// assert_eq!((e.kind, e.offset), (ErrorKind::BadMagic, 8));
    /// ```
    pub fn new(window: &'a [u8], origin: u64) -> Result<Self> {
        Self::with_limits(window, origin, Limits::default())
    }

    /// [`ModularFooter::new`] with explicit limits.
    ///
    /// ```
    /// use lakecore::footer::{ChunkMeta, FooterInput};
    /// use lakecore::footer::{Limits, ModularFooter};
    /// use lakecore::ErrorKind;
    /// let mut input = FooterInput::flat(&["id"], &[2], &[10]);
    /// input.chunks[0] = ChunkMeta { data_page_offset: 4, total_compressed_size: 90,
    ///     total_uncompressed_size: 90, num_values: 10, ..ChunkMeta::default() };
    /// let mut file = b"PAR1".to_vec();
    /// file.resize(94, 0);
    /// input.write(&mut file)?;
    /// assert!(ModularFooter::with_limits(&file, 0, Limits::default()).is_ok());
    /// // The root is one Thrift level and its module directory another: depth 1 is too shallow.
    /// let shallow = Limits { max_depth: 1, ..Limits::default() };
    /// let e = ModularFooter::with_limits(&file, 0, shallow).unwrap_err();
    /// assert_eq!(e.kind, ErrorKind::DepthLimit);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn with_limits(window: &'a [u8], origin: u64, limits: Limits) -> Result<Self> {
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
            modules: [None; 6],
            placement: None,
            stats: None,
            offset_index: None,
            column_index: None,
        };
        let root = footer.slice(root_offset, root_len)?;
        footer.parse_root(root)?;
        let mut ranges = Ranges {
            items: [(0, 0); MAX_RANGES],
            n: 0,
        };
        ranges.push(root_offset, trailer_at)?;
        for loc in footer.modules.into_iter().flatten() {
            ranges.push(loc.offset, loc.offset.saturating_add(loc.length))?;
            match loc.module {
                Module::Placement => footer.open_placement(loc, &mut ranges)?,
                Module::RowGroupStats => footer.open_stats(loc, &mut ranges)?,
                Module::OffsetIndex | Module::ColumnIndex => {
                    footer.open_page_index(loc, &mut ranges)?
                }
                Module::Schema | Module::FileMetadata => {}
            }
        }
        ranges.check_disjoint()?;
        Ok(footer)
    }

    /// The bytes `[offset, offset + len)` of the file, or `NeedsBytes` when they are not in
    /// the window.
    fn slice(&self, offset: u64, len: u64) -> Result<&'a [u8]> {
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

    fn reader(&self, bytes: &'a [u8], origin: u64) -> Reader<'a> {
        Reader::new(bytes, origin).with_max_depth(self.limits.max_depth)
    }

    fn parse_root(&mut self, root: &'a [u8]) -> Result<()> {
        let mut r = self.reader(root, self.root_offset);
        let mut st = r.enter_struct()?;
        let (mut version, mut g, mut c, mut rows, mut rg, mut modules) =
            (None, None, None, None, None, None);
        while let Some(f) = r.next_field(&mut st)? {
            let at = f.offset;
            match f.id {
                1 => {
                    let v = r.field_i32(f)?;
                    if v != 1 {
                        return Err(Error::new(ErrorKind::UnsupportedVersion, at));
                    }
                    version = Some(v);
                }
                2 => g = Some(nonneg32(r.field_i32(f)?, at)?),
                3 => c = Some(nonneg32(r.field_i32(f)?, at)?),
                4 => {
                    let v = r.field_i64(f)?;
                    rows = Some(u64::try_from(v).map_err(|_| len_err(at))?);
                }
                5 => {
                    let h = r.field_list(f, FieldType::I64)?;
                    let start = r.index();
                    let start_pos = r.position();
                    for _ in 0..h.len {
                        r.skip(FieldType::I64)?;
                    }
                    let bytes = root.get(start..r.index()).unwrap_or_default();
                    rg = Some((bytes, u64::from(h.len), start_pos, at));
                }
                6 => {
                    let h = r.field_list(f, FieldType::Struct)?;
                    if h.len > 64 {
                        return Err(Error::new(ErrorKind::LimitExceeded, h.offset));
                    }
                    for _ in 0..h.len {
                        self.parse_module_location(&mut r)?;
                    }
                    modules = Some(());
                }
                _ => r.skip_field(f)?,
            }
        }
        r.expect_end()?;
        required(version, &st)?;
        let g = required(g, &st)?;
        let c = required(c, &st)?;
        let rows = required(rows, &st)?;
        let (rg_bytes, rg_count, rg_pos, rg_at) = required(rg, &st)?;
        required(modules, &st)?;
        if u64::from(g) * u64::from(c) > i32::MAX as u64 {
            return Err(Error::new(ErrorKind::LimitExceeded, self.root_offset));
        }
        if rg_count != u64::from(g) {
            return Err(Error::new(ErrorKind::Mismatch, rg_at));
        }
        let mut sum: u64 = 0;
        let mut rr = self.reader(rg_bytes, rg_pos);
        for _ in 0..rg_count {
            let at = rr.position();
            let n = u64::try_from(rr.i64()?).map_err(|_| len_err(at))?;
            sum = sum
                .checked_add(n)
                .ok_or(Error::new(ErrorKind::ArithmeticOverflow, at))?;
        }
        if sum != rows {
            return Err(Error::new(ErrorKind::Mismatch, rg_at));
        }
        self.num_row_groups = g;
        self.num_columns = c;
        self.num_rows = rows;
        self.rg_rows = (rg_bytes, rg_count);
        // SCHEMA and PLACEMENT are required.
        for m in [Module::Schema, Module::Placement] {
            if self.modules.get(m as usize).copied().flatten().is_none() {
                return Err(Error::new(ErrorKind::ThriftMissingField, self.root_offset));
            }
        }
        Ok(())
    }

    fn parse_module_location(&mut self, r: &mut Reader<'a>) -> Result<()> {
        let mut st = r.enter_struct()?;
        let (mut module, mut enc, mut offset, mut length) = (None, None, None, None);
        while let Some(f) = r.next_field(&mut st)? {
            let at = f.offset;
            match f.id {
                1 => module = Some((r.field_i32(f)?, at)),
                2 => enc = Some((r.field_i32(f)?, at)),
                3 => offset = Some(u64::try_from(r.field_i64(f)?).map_err(|_| len_err(at))?),
                4 => length = Some(u64::try_from(r.field_i64(f)?).map_err(|_| len_err(at))?),
                _ => r.skip_field(f)?,
            }
        }
        let (module, m_at) = required(module, &st)?;
        let (enc, e_at) = required(enc, &st)?;
        let offset = required(offset, &st)?;
        let length = required(length, &st)?;
        // Unknown module kinds are skipped.
        let Some(module) = Module::from_i32(module) else {
            return Ok(());
        };
        let encoding =
            ModuleEncoding::from_i32(enc).ok_or(Error::new(ErrorKind::InvalidValue, e_at))?;
        if encoding != module.required_encoding() {
            return Err(Error::new(ErrorKind::Mismatch, e_at));
        }
        self.check_location(offset, length, st.start())?;
        let slot = self
            .modules
            .get_mut(module as usize)
            .ok_or(Error::new(ErrorKind::InvalidValue, m_at))?;
        if slot.is_some() {
            return Err(Error::new(ErrorKind::Duplicate, m_at));
        }
        *slot = Some(ModuleLocation {
            module,
            encoding,
            offset,
            length,
        });
        Ok(())
    }

    /// A location must lie after the leading magic and end before the root.
    fn check_location(&self, offset: u64, length: u64, at: u64) -> Result<()> {
        let end = offset.checked_add(length);
        match end {
            Some(end) if offset >= off(super::LEADING_MAGIC.len()) && end <= self.root_offset => {
                Ok(())
            }
            _ => Err(Error::new(ErrorKind::OutOfBounds, at)),
        }
    }

    /// Parses a descriptor and calls `page` for each FILE page it lists.
    fn for_each_page(
        &self,
        loc: ModuleLocation,
        ranges: &mut Ranges,
        mut page: impl FnMut(ArrayPage<'a>) -> Result<()>,
    ) -> Result<()> {
        let bytes = self.slice(loc.offset, loc.length)?;
        let mut r = self.reader(bytes, loc.offset);
        let mut st = r.enter_struct()?;
        let (mut module, mut version, mut pages) = (None, None, None);
        while let Some(f) = r.next_field(&mut st)? {
            let at = f.offset;
            match f.id {
                1 => {
                    let m = r.field_i32(f)?;
                    if m != loc.module.value() {
                        return Err(Error::new(ErrorKind::Mismatch, at));
                    }
                    module = Some(());
                }
                2 => {
                    if r.field_i32(f)? != 1 {
                        return Err(Error::new(ErrorKind::UnsupportedVersion, at));
                    }
                    version = Some(());
                }
                3 => {
                    let h = r.field_list(f, FieldType::Struct)?;
                    if h.len > self.limits.max_pages {
                        return Err(Error::new(ErrorKind::LimitExceeded, h.offset));
                    }
                    let mut seen: u64 = 0;
                    for _ in 0..h.len {
                        let p = self.parse_page_location(&mut r, loc.module, &mut seen)?;
                        let end = p
                            .offset()
                            .saturating_add(u64::from(p.header().header_len))
                            .saturating_add(u64::from(p.header().payload_length));
                        ranges.push(p.offset(), end)?;
                        page(p)?;
                    }
                    pages = Some(());
                }
                _ => r.skip_field(f)?,
            }
        }
        r.expect_end()?;
        required(module, &st)?;
        required(version, &st)?;
        required(pages, &st)?;
        Ok(())
    }

    fn parse_page_location(
        &self,
        r: &mut Reader<'a>,
        module: Module,
        seen: &mut u64,
    ) -> Result<ArrayPage<'a>> {
        let mut st = r.enter_struct()?;
        let (mut array, mut scope, mut col, mut rg, mut offset, mut length) =
            (None, None, None, None, None, None);
        while let Some(f) = r.next_field(&mut st)? {
            let at = f.offset;
            match f.id {
                1 => {
                    let v = r.field_i32(f)?;
                    array = Some((
                        MetadataArray::from_i32(v)
                            .ok_or(Error::new(ErrorKind::InvalidValue, at))?,
                        at,
                    ));
                }
                2 => {
                    let v = r.field_i32(f)?;
                    scope = Some((
                        PageScope::from_i32(v).ok_or(Error::new(ErrorKind::InvalidValue, at))?,
                        at,
                    ));
                }
                3 => col = Some(nonneg32(r.field_i32(f)?, at)?),
                4 => rg = Some(nonneg32(r.field_i32(f)?, at)?),
                5 => offset = Some(u64::try_from(r.field_i64(f)?).map_err(|_| len_err(at))?),
                6 => length = Some(u64::from(nonneg32(r.field_i32(f)?, at)?)),
                _ => r.skip_field(f)?,
            }
        }
        let (array, a_at) = required(array, &st)?;
        let (scope, s_at) = required(scope, &st)?;
        let offset = required(offset, &st)?;
        let length = required(length, &st)?;
        if !allowed_in_descriptor(module, array) {
            return Err(Error::new(ErrorKind::InvalidValue, a_at));
        }
        if scope != PageScope::File || col.is_some() || rg.is_some() {
            return Err(Error::new(ErrorKind::Mismatch, s_at));
        }
        let bit = 1u64 << (array as u8 % 64);
        if *seen & bit != 0 {
            return Err(Error::new(ErrorKind::Duplicate, a_at));
        }
        *seen |= bit;
        self.check_location(offset, length, st.start())?;
        let bytes = self.slice(offset, length)?;
        let page = self.parse_page(bytes, offset)?;
        let h = page.header();
        if h.module != module || h.array != array || h.scope != scope {
            return Err(Error::new(ErrorKind::Mismatch, offset));
        }
        Ok(page)
    }

    /// Parses one page after checking the limits on its header.
    fn parse_page(&self, bytes: &'a [u8], offset: u64) -> Result<ArrayPage<'a>> {
        let h = super::page::MetadataPageHeader::parse(bytes, offset)?;
        if h.num_values > self.limits.max_num_values
            || h.payload_length > self.limits.max_payload_bytes
        {
            return Err(Error::new(ErrorKind::LimitExceeded, offset));
        }
        let total = u64::from(h.header_len) + u64::from(h.payload_length);
        if total != off(bytes.len()) {
            return Err(Error::new(ErrorKind::Mismatch, offset));
        }
        let page = ArrayPage::with_header(h, bytes, offset)?;
        if page.header().value_type != value_type_of(h.array) {
            return Err(Error::new(ErrorKind::Mismatch, offset));
        }
        Ok(page)
    }

    fn chunks(&self) -> u32 {
        // Checked on open: K <= i32::MAX.
        self.num_columns * self.num_row_groups
    }

    fn expect_domain(page: &ArrayPage<'_>, n: u64, dense: bool) -> Result<()> {
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
        self.for_each_page(loc, ranges, |p| {
            let i = p.header().array as usize;
            if let Some(slot) = found.get_mut(i) {
                *slot = Some(p);
            }
            Ok(())
        })?;
        let k = u64::from(self.chunks());
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
        let k = u64::from(self.chunks());
        self.for_each_page(loc, ranges, |p| {
            Self::expect_domain(&p, k, false)?;
            if let Some(slot) = stats.slot_mut(p.header().array) {
                *slot = Some(p);
            }
            Ok(())
        })?;
        stats.check_shape(loc.offset)?;
        self.stats = Some(stats);
        Ok(())
    }

    fn open_page_index(&mut self, loc: ModuleLocation, ranges: &mut Ranges) -> Result<()> {
        let mut pgo = None;
        self.for_each_page(loc, ranges, |p| {
            pgo = Some(p);
            Ok(())
        })?;
        let pgo = pgo.ok_or(Error::new(ErrorKind::ThriftMissingField, loc.offset))?;
        let k = self.chunks() as usize;
        Self::expect_domain(&pgo, off(k) + 1, true)?;
        let start = pgo.get(0)?.unwrap_or(0);
        let end = pgo.get(k)?.unwrap_or(0);
        if start > end {
            return Err(Error::new(ErrorKind::NotSorted, pgo.payload_offset()));
        }
        if start != end {
            self.check_location(start, end - start, pgo.payload_offset())?;
            ranges.push(start, end)?;
        }
        if loc.module == Module::OffsetIndex {
            self.offset_index = Some(pgo);
        } else {
            self.column_index = Some(pgo);
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
        for p in [self.offset_index, self.column_index].into_iter().flatten() {
            if let Ok(Some(v)) = p.get(0) {
                start = start.min(v);
            }
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

    fn chunk_index(&self, column: u32, row_group: u32) -> Result<usize> {
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
            dictionary_pages: DictionaryPages {
                page: p.dictionary_page_offset,
                start: start as usize,
                end: end as usize,
            },
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
            let h = super::page::MetadataPageHeader::parse(rest, at)?;
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
        let (mut po, mut cs, mut fr) = (None, None, None);
        let any = self.walk_group(Module::OffsetIndex, &pgo, k, |p| {
            match p.header().array {
                MetadataArray::PageOffset => po = Some(p),
                MetadataArray::CompressedPageSize => cs = Some(p),
                MetadataArray::FirstRowIndex => fr = Some(p),
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
        Ok(Some(OffsetIndex {
            page_offset: po,
            compressed_page_size: cs,
            first_row_index: fr,
        }))
    }

    /// The column index of chunk (column, row group), like [`ModularFooter::offset_index`].
    pub fn column_index(&self, column: u32, row_group: u32) -> Result<Option<ColumnIndex<'a>>> {
        let k = self.chunk_index(column, row_group)?;
        let Some(pgo) = self.column_index else {
            return Ok(None);
        };
        let (mut bo, mut np) = (None, None);
        let mut stats = StatArrays::default();
        let any = self.walk_group(Module::ColumnIndex, &pgo, k, |p| {
            let a = p.header().array;
            match a {
                MetadataArray::BoundaryOrder => bo = Some(p),
                MetadataArray::NullPage => np = Some(p),
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
        let boundary_order = bo.get(0)?.unwrap_or(0) as u8;
        Ok(Some(ColumnIndex {
            boundary_order,
            null_pages: np,
            stats,
        }))
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
    /// let footer = ModularFooter::new(&file, 0)?;
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
    /// positions, every chunk's page-index group, the schema (leaf count = `num_columns`) and
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
    /// let footer = ModularFooter::new(&file, 0)?;
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
        for (pgo, module) in [
            (self.offset_index, Module::OffsetIndex),
            (self.column_index, Module::ColumnIndex),
        ] {
            let Some(pgo) = pgo else { continue };
            pgo.validate()?;
            nondecreasing(&pgo)?;
            let g = self.num_row_groups as usize;
            for i in 0..k {
                let (c, r) = ((i / g) as u32, (i % g) as u32);
                if module == Module::OffsetIndex {
                    self.offset_index(c, r)?;
                } else {
                    self.column_index(c, r)?;
                }
            }
        }
        let schema = self.schema()?;
        let leaves = schema.num_leaves()?;
        if leaves != off(self.num_columns as usize) {
            return Err(Error::new(ErrorKind::Mismatch, schema.offset()));
        }
        self.file_metadata()?;
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

fn nonneg32(v: i32, at: u64) -> Result<u32> {
    u32::try_from(v).map_err(|_| len_err(at))
}

fn len_err(at: u64) -> Error {
    Error::new(ErrorKind::InvalidLength, at)
}
