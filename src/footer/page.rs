//! Metadata pages: the Compact-Thrift `MetadataPageHeader` and a validated, borrowed view of
//! the raw payload that follows it.
//!
//! Structural checks happen in [`ArrayPage::parse`] in O(1): widths per value type, the exact
//! payload size, zero padding of every region, the first and last byte-array offsets.
//! Value-level checks that need a pass over the values (strictly increasing positions,
//! nondecreasing offsets, `UINT64 <= i64::MAX` at width 64, enum ranges) run in
//! [`ArrayPage::validate`]; the O(1) accessors check what they read.
//!
//! ```
//! use lakecore::footer::ArrayPage;
//! // Header {PLACEMENT, CODEC, UINT32, BIT_PACKED, 5 values, payload 2, width 3, FILE}
//! // then the worked payload D1 58 = [1, 2, 3, 4, 5].
//! let page = [0x15, 0x02, 0x15, 0x0c, 0x15, 0x02, 0x15, 0x00, 0x15, 0x0a, 0x15, 0x04,
//!             0x1c, 0x1c, 0x13, 0x03, 0x00, 0x00, 0x15, 0x00, 0x00, 0xd1, 0x58];
//! let view = ArrayPage::parse(&page, 0).unwrap();
//! assert_eq!(view.get(3).unwrap(), Some(4));
//! ```

use super::{ArrayEncoding, MetadataArray, Module, PageScope, ValueType};
use crate::codec::bitpack::{packed_len, BitPacked};
use crate::codec::thrift::{required, Reader};
use crate::error::{off, Error, ErrorKind, Result};

/// The payload layout parameters of a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodingHeader {
    /// Dense values (or byte-array offsets) at `bit_width`.
    BitPacked {
        /// Bits per value (or per offset).
        bit_width: u8,
    },
    /// Present positions, then their values.
    Sparse {
        /// Number of present positions.
        num_present: u32,
        /// Bits per position.
        position_bit_width: u8,
        /// Bits per value (or per offset).
        value_bit_width: u8,
    },
}

/// A parsed `MetadataPageHeader`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetadataPageHeader {
    /// The module the page belongs to.
    pub module: Module,
    /// The array it holds.
    pub array: MetadataArray,
    /// The value type.
    pub value_type: ValueType,
    /// Dense or sparse.
    pub encoding: ArrayEncoding,
    /// Logical domain size (absent positions included).
    pub num_values: u32,
    /// Payload bytes right after the header.
    pub payload_length: u32,
    /// Layout parameters; the member matches `encoding`.
    pub encoding_header: EncodingHeader,
    /// FILE or COLUMN_CHUNK.
    pub scope: PageScope,
    /// Column ordinal (COLUMN_CHUNK scope only).
    pub column_ordinal: Option<u32>,
    /// Row-group ordinal (COLUMN_CHUNK scope only).
    pub row_group_ordinal: Option<u32>,
    /// Encoded header length in bytes (known only by parsing).
    pub header_len: u32,
}

fn non_negative(v: i32, at: u64) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidLength, at))
}

fn width(v: i8, at: u64) -> Result<u8> {
    u8::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidBitWidth, at))
}

fn enum_of<T>(v: i32, at: u64, f: fn(i32) -> Option<T>) -> Result<T> {
    f(v).ok_or(Error::new(ErrorKind::InvalidValue, at))
}

fn parse_bit_packed(r: &mut Reader<'_>) -> Result<u8> {
    let mut st = r.enter_struct()?;
    let mut w = None;
    while let Some(f) = r.next_field(&mut st)? {
        match f.id {
            1 => w = Some(width(r.field_i8(f)?, f.offset)?),
            _ => r.skip_field(f)?,
        }
    }
    required(w, &st)
}

fn parse_sparse(r: &mut Reader<'_>) -> Result<EncodingHeader> {
    let mut st = r.enter_struct()?;
    let (mut n, mut pw, mut vw) = (None, None, None);
    while let Some(f) = r.next_field(&mut st)? {
        match f.id {
            1 => n = Some(non_negative(r.field_i32(f)?, f.offset)?),
            2 => pw = Some(width(r.field_i8(f)?, f.offset)?),
            3 => vw = Some(width(r.field_i8(f)?, f.offset)?),
            _ => r.skip_field(f)?,
        }
    }
    Ok(EncodingHeader::Sparse {
        num_present: required(n, &st)?,
        position_bit_width: required(pw, &st)?,
        value_bit_width: required(vw, &st)?,
    })
}

fn parse_encoding_header(r: &mut Reader<'_>) -> Result<EncodingHeader> {
    let mut st = r.enter_struct()?;
    let mut out = None;
    while let Some(f) = r.next_field(&mut st)? {
        match f.id {
            1 => {
                st.union_member();
                Reader::check_struct(f)?;
                out = Some(EncodingHeader::BitPacked {
                    bit_width: parse_bit_packed(r)?,
                });
            }
            2 => {
                st.union_member();
                Reader::check_struct(f)?;
                out = Some(parse_sparse(r)?);
            }
            _ => {
                st.union_member();
                r.skip_field(f)?;
            }
        }
    }
    st.check_union()?;
    // A single unknown member leaves `out` empty: not a member this profile reads.
    out.ok_or(Error::new(ErrorKind::ThriftUnion, st.start()))
}

impl MetadataPageHeader {
    /// Parses a header from the start of `bytes` (which begin at absolute offset `origin`).
    ///
    /// Errors: Thrift errors; [`ErrorKind::InvalidValue`] for an enum value the profile does
    /// not know; [`ErrorKind::InvalidLength`] for negative counts;
    /// [`ErrorKind::InvalidBitWidth`] for negative widths; [`ErrorKind::Mismatch`] when the
    /// encoding header member disagrees with `encoding` or the ordinals disagree with the
    /// scope (present iff COLUMN_CHUNK).
    pub fn parse(bytes: &[u8], origin: u64) -> Result<Self> {
        let mut r = Reader::new(bytes, origin);
        let mut st = r.enter_struct()?;
        let (mut module, mut array, mut vt, mut enc) = (None, None, None, None);
        let (mut nv, mut pl, mut eh, mut scope, mut col, mut rg) =
            (None, None, None, None, None, None);
        while let Some(f) = r.next_field(&mut st)? {
            let at = f.offset;
            match f.id {
                1 => module = Some(enum_of(r.field_i32(f)?, at, Module::from_i32)?),
                2 => array = Some(enum_of(r.field_i32(f)?, at, MetadataArray::from_i32)?),
                3 => vt = Some(enum_of(r.field_i32(f)?, at, ValueType::from_i32)?),
                4 => enc = Some(enum_of(r.field_i32(f)?, at, ArrayEncoding::from_i32)?),
                5 => nv = Some(non_negative(r.field_i32(f)?, at)?),
                6 => pl = Some(non_negative(r.field_i32(f)?, at)?),
                7 => {
                    Reader::check_struct(f)?;
                    eh = Some((parse_encoding_header(&mut r)?, at));
                }
                8 => scope = Some(enum_of(r.field_i32(f)?, at, PageScope::from_i32)?),
                9 => col = Some((non_negative(r.field_i32(f)?, at)?, at)),
                10 => rg = Some((non_negative(r.field_i32(f)?, at)?, at)),
                _ => r.skip_field(f)?,
            }
        }
        let module = required(module, &st)?;
        let array = required(array, &st)?;
        let value_type = required(vt, &st)?;
        let encoding = required(enc, &st)?;
        let num_values = required(nv, &st)?;
        let payload_length = required(pl, &st)?;
        let (encoding_header, eh_at) = required(eh, &st)?;
        let scope = required(scope, &st)?;
        let matches = matches!(
            (encoding, encoding_header),
            (ArrayEncoding::BitPacked, EncodingHeader::BitPacked { .. })
                | (ArrayEncoding::Sparse, EncodingHeader::Sparse { .. })
        );
        if !matches {
            return Err(Error::new(ErrorKind::Mismatch, eh_at));
        }
        match scope {
            PageScope::File => {
                if let Some((_, at)) = col.or(rg) {
                    return Err(Error::new(ErrorKind::Mismatch, at));
                }
            }
            PageScope::ColumnChunk => {
                if col.is_none() || rg.is_none() {
                    return Err(Error::new(ErrorKind::ThriftMissingField, st.start()));
                }
            }
        }
        let header_len =
            u32::try_from(r.index()).map_err(|_| Error::new(ErrorKind::LimitExceeded, origin))?;
        Ok(MetadataPageHeader {
            module,
            array,
            value_type,
            encoding,
            num_values,
            payload_length,
            encoding_header,
            scope,
            column_ordinal: col.map(|c| c.0),
            row_group_ordinal: rg.map(|c| c.0),
            header_len,
        })
    }
}

/// A validated page: header plus borrowed payload regions.
#[derive(Clone, Copy, Debug)]
pub struct ArrayPage<'a> {
    header: MetadataPageHeader,
    /// Absolute offset of the header's first byte.
    offset: u64,
    /// Absolute offset of the payload's first byte.
    payload_offset: u64,
    /// SPARSE: the present positions.
    positions: Option<BitPacked<'a>>,
    /// Integer/boolean values, or byte-array offsets (`count + 1` of them).
    values: BitPacked<'a>,
    /// Byte-array data region (empty for other types).
    data: &'a [u8],
    /// Absolute offset of the data region's first byte.
    data_offset: u64,
    /// The window: first position of the page this view starts at.
    base: usize,
    /// The window's length (= `num_values` for a whole page).
    window: usize,
}

fn max_width(vt: ValueType) -> u8 {
    match vt {
        ValueType::Boolean => 1,
        ValueType::Uint32 => 32,
        ValueType::Uint64 | ValueType::ByteArray => 64,
    }
}

fn check_width(vt: ValueType, w: u8, at: u64) -> Result<()> {
    let ok = match vt {
        ValueType::Boolean => w == 1,
        _ => w <= max_width(vt),
    };
    if ok {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::InvalidBitWidth, at))
    }
}

impl<'a> ArrayPage<'a> {
    /// Parses `bytes` = exactly one header and its payload, starting at absolute `origin`.
    ///
    /// Errors (besides the header's): [`ErrorKind::InvalidBitWidth`] for a width the value
    /// type does not allow; [`ErrorKind::InvalidLength`] when `num_present > num_values` or
    /// `payload_length` differs from the size the header implies (offset: the payload);
    /// [`ErrorKind::Mismatch`] when `bytes` is not exactly header + payload;
    /// [`ErrorKind::NonZeroPadding`]; [`ErrorKind::InvalidValue`] when the first byte-array
    /// offset is not 0 or the last does not equal the byte region's length.
    pub fn parse(bytes: &'a [u8], origin: u64) -> Result<Self> {
        let header = MetadataPageHeader::parse(bytes, origin)?;
        Self::with_header(header, bytes, origin)
    }

    /// [`ArrayPage::parse`] with the header already parsed from the start of `bytes`.
    pub fn with_header(header: MetadataPageHeader, bytes: &'a [u8], origin: u64) -> Result<Self> {
        let hl = header.header_len as usize;
        let payload_offset = origin.saturating_add(off(hl));
        let payload = bytes.get(hl..).unwrap_or_default();
        if off(payload.len()) != u64::from(header.payload_length) {
            return Err(Error::new(ErrorKind::Mismatch, payload_offset));
        }
        Self::with_payload(header, payload, origin, payload_offset)
    }

    fn with_payload(
        header: MetadataPageHeader,
        payload: &'a [u8],
        offset: u64,
        payload_offset: u64,
    ) -> Result<Self> {
        let vt = header.value_type;
        let n = header.num_values as usize;
        let wrong_len = Error::new(ErrorKind::InvalidLength, payload_offset);
        let shift = |e: Error| e.shifted(payload_offset);
        let (positions, count, vw, rest) = match header.encoding_header {
            EncodingHeader::BitPacked { bit_width } => {
                check_width(vt, bit_width, offset)?;
                (None, n, bit_width, payload)
            }
            EncodingHeader::Sparse {
                num_present,
                position_bit_width,
                value_bit_width,
            } => {
                check_width(vt, value_bit_width, offset)?;
                if position_bit_width > 32 {
                    return Err(Error::new(ErrorKind::InvalidBitWidth, offset));
                }
                if num_present > header.num_values {
                    return Err(Error::new(ErrorKind::InvalidLength, offset));
                }
                let np = num_present as usize;
                let need = packed_len(position_bit_width, np).ok_or(wrong_len)?;
                if need > payload.len() {
                    return Err(wrong_len);
                }
                let (pos, rest) =
                    BitPacked::from_prefix(payload, position_bit_width, np).map_err(shift)?;
                (Some(pos), np, value_bit_width, rest)
            }
        };
        let rest_offset = payload_offset.saturating_add(off(payload.len() - rest.len()));
        let shift_rest = |e: Error| e.shifted(rest_offset);
        let (values, data, data_offset) = if vt == ValueType::ByteArray {
            let n_off = count.checked_add(1).ok_or(wrong_len)?;
            let need = packed_len(vw, n_off).ok_or(wrong_len)?;
            if need > rest.len() {
                return Err(wrong_len);
            }
            let (offs, data) = BitPacked::from_prefix(rest, vw, n_off).map_err(shift_rest)?;
            let first = offs.get(0).unwrap_or(0);
            let last = offs.get(count).unwrap_or(0);
            if first != 0 {
                return Err(Error::new(ErrorKind::InvalidValue, rest_offset));
            }
            if last != off(data.len()) {
                return Err(wrong_len);
            }
            (offs, data, rest_offset.saturating_add(off(need)))
        } else {
            let need = packed_len(vw, count).ok_or(wrong_len)?;
            if need != rest.len() {
                return Err(wrong_len);
            }
            let v = BitPacked::new(rest, vw, count).map_err(shift_rest)?;
            (v, &[][..], rest_offset.saturating_add(off(need)))
        };
        Ok(ArrayPage {
            header,
            offset,
            payload_offset,
            positions,
            values,
            data,
            data_offset,
            base: 0,
            window: n,
        })
    }

    /// The view of positions `start..start + len` of this view (a chunk's slice of a
    /// FILE-scope page-index array): position `i` of the result is position `start + i` of
    /// `self`. Slots ([`ArrayPage::slot`]) stay slots of the whole page.
    ///
    /// Fails with [`ErrorKind::OutOfBounds`] (at the payload) when the range is not inside.
    pub fn window(&self, start: usize, len: usize) -> Result<Self> {
        let bad = Error::new(ErrorKind::OutOfBounds, self.payload_offset);
        let end = start.checked_add(len).ok_or(bad)?;
        if end > self.window {
            return Err(bad);
        }
        let mut w = *self;
        w.base = self.base.checked_add(start).ok_or(bad)?;
        w.window = len;
        Ok(w)
    }

    /// The first position of the whole page this view starts at (0 unless a
    /// [`window`](Self::window)).
    pub fn base(&self) -> usize {
        self.base
    }

    /// Whether the view covers the whole page.
    fn is_whole(&self) -> bool {
        self.base == 0 && self.window == self.header.num_values as usize
    }

    /// SPARSE: the number of present positions below `p` (a binary search over the packed
    /// positions; never panics on unsorted input).
    fn rank(&self, pos: &BitPacked<'_>, p: usize) -> usize {
        let target = off(p);
        let (mut lo, mut hi) = (0usize, pos.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pos.get(mid).unwrap_or(u64::MAX) < target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The slots `[a, b)` of the view's present positions (dense: its positions).
    pub fn slot_range(&self) -> (usize, usize) {
        match &self.positions {
            None => (self.base, self.base + self.window),
            Some(_) if self.is_whole() => (0, self.positions.map_or(0, |p| p.len())),
            Some(p) => (
                self.rank(p, self.base),
                self.rank(p, self.base + self.window),
            ),
        }
    }

    /// The integer values of the view's present positions, in position order (no value
    /// checks; byte-array pages yield their offsets of those slots, without the last).
    pub fn window_values(&self) -> impl Iterator<Item = u64> + '_ {
        let (a, b) = self.slot_range();
        let v = self.values;
        (a..b).map(move |s| v.get(s).unwrap_or(0))
    }

    /// The header.
    pub fn header(&self) -> &MetadataPageHeader {
        &self.header
    }

    /// Absolute offset of the header's first byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Absolute offset of the payload.
    pub fn payload_offset(&self) -> u64 {
        self.payload_offset
    }

    /// The logical domain size (`num_values`).
    #[inline]
    pub fn len(&self) -> usize {
        self.window
    }

    /// Whether the domain is empty.
    pub fn is_empty(&self) -> bool {
        self.window == 0
    }

    /// Whether the page is SPARSE.
    pub fn is_sparse(&self) -> bool {
        self.positions.is_some()
    }

    /// The number of present positions (`len()` when dense). O(log n) on a sparse window.
    pub fn num_present(&self) -> usize {
        let (a, b) = self.slot_range();
        b.saturating_sub(a)
    }

    /// SPARSE: the packed positions of the whole page.
    pub fn positions(&self) -> Option<BitPacked<'a>> {
        self.positions
    }

    /// The packed values (integers, booleans) or byte-array offsets of the whole page (see
    /// [`window_values`](Self::window_values) for a window's).
    pub fn values(&self) -> BitPacked<'a> {
        self.values
    }

    /// The slot of position `i` in the values region: `i` when dense, its rank among the
    /// present positions when sparse (binary search, O(log n)), `None` when absent.
    ///
    /// Fails with [`ErrorKind::OutOfBounds`] (at the payload) when `i >= num_values`.
    #[inline]
    pub fn slot(&self, i: usize) -> Result<Option<usize>> {
        if i >= self.window {
            return Err(Error::new(ErrorKind::OutOfBounds, self.payload_offset));
        }
        let i = self.base + i;
        let Some(pos) = self.positions else {
            return Ok(Some(i));
        };
        let target = off(i);
        let (mut lo, mut hi) = (0usize, pos.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let p = pos.get(mid).unwrap_or(u64::MAX);
            if p == target {
                return Ok(Some(mid));
            }
            if p < target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(None)
    }

    #[inline]
    fn check_value(&self, v: u64) -> Result<u64> {
        let bad = Error::new(ErrorKind::OutOfBounds, self.payload_offset);
        if self.header.value_type == ValueType::Uint64 && v > i64::MAX as u64 {
            return Err(bad);
        }
        if let Some(max) = super::enum_max(self.header.array) {
            if v > max {
                return Err(Error::new(ErrorKind::InvalidValue, self.payload_offset));
            }
        }
        Ok(v)
    }

    /// Integer or boolean value at position `i` (`None` = absent). O(1) dense, O(log n)
    /// sparse. UINT64 values above `i64::MAX` and out-of-range enum values are errors.
    #[inline]
    pub fn get(&self, i: usize) -> Result<Option<u64>> {
        match self.slot(i)? {
            Some(s) => self.value_at_slot(s).map(Some),
            None => Ok(None),
        }
    }

    /// Value at position `i` of a page that must be dense (the O(1) fast path of
    /// [`ArrayPage::get`]); a sparse page or `i >= num_values` is an error.
    #[inline]
    pub fn get_dense(&self, i: usize) -> Result<u64> {
        if self.positions.is_some() {
            return Err(Error::new(ErrorKind::Mismatch, self.offset));
        }
        if i >= self.window {
            return Err(Error::new(ErrorKind::OutOfBounds, self.payload_offset));
        }
        let v = self
            .values
            .get(self.base + i)
            .ok_or(Error::new(ErrorKind::OutOfBounds, self.payload_offset))?;
        self.check_value(v)
    }

    /// Boolean value at position `i`.
    #[inline]
    pub fn get_bool(&self, i: usize) -> Result<Option<bool>> {
        Ok(self.get(i)?.map(|v| v != 0))
    }

    /// The integer value in slot `s` (see [`ArrayPage::slot`]).
    #[inline]
    pub fn value_at_slot(&self, s: usize) -> Result<u64> {
        let v = self
            .values
            .get(s)
            .ok_or(Error::new(ErrorKind::OutOfBounds, self.payload_offset))?;
        self.check_value(v)
    }

    /// Byte string at position `i` (`None` = absent), borrowed from the payload.
    #[inline]
    pub fn get_bytes(&self, i: usize) -> Result<Option<&'a [u8]>> {
        match self.slot(i)? {
            Some(s) => self.bytes_at_slot(s).map(Some),
            None => Ok(None),
        }
    }

    /// The byte string in slot `s`.
    #[inline]
    pub fn bytes_at_slot(&self, s: usize) -> Result<&'a [u8]> {
        let bad = Error::new(ErrorKind::OutOfBounds, self.payload_offset);
        let a = self.values.get(s).ok_or(bad)?;
        let b = self.values.get(s.checked_add(1).ok_or(bad)?).ok_or(bad)?;
        if a > b {
            return Err(Error::new(ErrorKind::NotSorted, self.data_offset));
        }
        let a = usize::try_from(a).map_err(|_| bad)?;
        let b = usize::try_from(b).map_err(|_| bad)?;
        self.data.get(a..b).ok_or(bad)
    }

    /// Unpacks dense values `start..start + out.len()` through the bit-unpack kernels (no
    /// value checks; see [`ArrayPage::validate`]). Sparse pages: [`ErrorKind::Mismatch`].
    pub fn unpack_u64(&self, start: usize, out: &mut [u64]) -> Result<()> {
        if self.positions.is_some() || self.header.value_type == ValueType::ByteArray {
            return Err(Error::new(ErrorKind::Mismatch, self.offset));
        }
        match start.checked_add(out.len()) {
            Some(end) if end <= self.window => {}
            _ => return Err(Error::new(ErrorKind::OutOfBounds, self.payload_offset)),
        }
        self.values
            .unpack_u64(self.base + start, out)
            .map_err(|e| Error::new(e.kind, self.payload_offset))
    }

    /// [`ArrayPage::unpack_u64`] followed by the value checks of [`ArrayPage::get`] (UINT64
    /// values `<= i64::MAX`, enum ranges) over the unpacked values.
    pub fn unpack_checked_u64(&self, start: usize, out: &mut [u64]) -> Result<()> {
        self.unpack_u64(start, out)?;
        let limit = match super::enum_max(self.header.array) {
            Some(max) => max,
            None if self.header.value_type == ValueType::Uint64 => i64::MAX as u64,
            None => u64::MAX,
        };
        let max = out.iter().copied().max().unwrap_or(0);
        if max > limit {
            let kind = if super::enum_max(self.header.array).is_some() {
                ErrorKind::InvalidValue
            } else {
                ErrorKind::OutOfBounds
            };
            return Err(Error::new(kind, self.payload_offset));
        }
        Ok(())
    }

    /// The value-level rules, O(n) over the view: positions strictly increasing and inside
    /// the view, byte-array offsets nondecreasing, UINT64 values `<= i64::MAX`, enum values
    /// in range.
    pub fn validate(&self) -> Result<()> {
        let (a, b) = self.slot_range();
        if a > b {
            // Only unsorted positions make the two binary searches cross.
            return Err(Error::new(ErrorKind::NotSorted, self.payload_offset));
        }
        if let Some(pos) = self.positions {
            let mut prev: Option<u64> = None;
            let (lo, hi) = (off(self.base), off(self.base + self.window));
            for s in a..b {
                let p = pos.get(s).unwrap_or(u64::MAX);
                if p < lo || p >= hi {
                    return Err(Error::new(ErrorKind::OutOfBounds, self.payload_offset));
                }
                if prev.is_some_and(|q| p <= q) {
                    return Err(Error::new(ErrorKind::NotSorted, self.payload_offset));
                }
                prev = Some(p);
            }
        }
        if self.header.value_type == ValueType::ByteArray {
            let mut prev = 0u64;
            // Offsets a..=b of the view's slots.
            for s in a..=b {
                let v = self.values.get(s).unwrap_or(0);
                if v < prev {
                    return Err(Error::new(ErrorKind::NotSorted, self.data_offset));
                }
                prev = v;
            }
        } else if self.values.width() == 64 || super::enum_max(self.header.array).is_some() {
            for s in a..b {
                self.check_value(self.values.get(s).unwrap_or(0))?;
            }
        }
        Ok(())
    }
}
