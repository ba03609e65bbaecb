//! The footer's directory: the root struct (counts, row-group row counts, the module
//! directory of [`ModuleLocation`]s), each ARRAY_PAGES module's descriptor (its list of
//! `MetadataPageLocation`s, walked by `for_each_page`) and the FILE page headers it points at,
//! with the byte-range bookkeeping (`Ranges`) that proves nothing overlaps.
//!
//! Locating a page: descriptors are Thrift lists of `MetadataPageLocation`, which have no
//! random access; the profile forces a list walk, but each list has at most nine entries
//! (FILE pages only), so the walk is a constant-cost step done once on open.
//!
//! This module parses and checks structure only: it reads no array values (the statistics
//! and page-index views do) and keeps no state of its own beyond the footer's fields.

use super::page::{ArrayPage, MetadataPageHeader};
use super::view::ModularFooter;
use super::{
    allowed_in_descriptor, value_type_of, MetadataArray, Module, ModuleEncoding, PageScope,
    LEADING_MAGIC,
};
use crate::codec::thrift::{required, FieldType, Reader};
use crate::error::{off, Error, ErrorKind, Result};

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

/// Most claimed ranges: the root, the modules and their FILE pages (at most 15 + 8 + 5 + 15).
const MAX_RANGES: usize = 64;

/// Fixed-capacity set of claimed byte ranges for the overlap check.
pub(super) struct Ranges {
    items: [(u64, u64); MAX_RANGES],
    n: usize,
}

impl Ranges {
    /// No range claimed yet.
    pub(super) fn new() -> Self {
        Ranges {
            items: [(0, 0); MAX_RANGES],
            n: 0,
        }
    }

    /// Claims `[start, end)`; [`ErrorKind::LimitExceeded`] past `MAX_RANGES`.
    pub(super) fn push(&mut self, start: u64, end: u64) -> Result<()> {
        let slot = self
            .items
            .get_mut(self.n)
            .ok_or(Error::new(ErrorKind::LimitExceeded, start))?;
        *slot = (start, end);
        self.n += 1;
        Ok(())
    }

    /// No two non-empty claimed ranges overlap.
    pub(super) fn check_disjoint(&mut self) -> Result<()> {
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

impl<'a> ModularFooter<'a> {
    /// Parses and checks the root struct and its module directory.
    pub(super) fn parse_root(&mut self, root: &'a [u8]) -> Result<()> {
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
    pub(super) fn check_location(&self, offset: u64, length: u64, at: u64) -> Result<()> {
        let end = offset.checked_add(length);
        match end {
            Some(end) if offset >= off(LEADING_MAGIC.len()) && end <= self.root_offset => Ok(()),
            _ => Err(Error::new(ErrorKind::OutOfBounds, at)),
        }
    }

    /// Parses a descriptor and calls `page` for each FILE page it lists.
    pub(super) fn for_each_page(
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
    pub(super) fn parse_page(&self, bytes: &'a [u8], offset: u64) -> Result<ArrayPage<'a>> {
        let h = MetadataPageHeader::parse(bytes, offset)?;
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
}

fn nonneg32(v: i32, at: u64) -> Result<u32> {
    u32::try_from(v).map_err(|_| len_err(at))
}

fn len_err(at: u64) -> Error {
    Error::new(ErrorKind::InvalidLength, at)
}
