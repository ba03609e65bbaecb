//! Thrift compact protocol: an allocation-free, zero-copy reader (core) and a writer (`alloc`).
//!
//! The reader is a cursor with struct bookkeeping, not a code generator: a decoder calls
//! [`Reader::enter_struct`], loops over [`Reader::next_field`], reads the fields it knows with
//! the typed `field_*` methods (which check the wire type) and hands every other field to
//! [`Reader::skip_field`]. Binary values are borrowed sub-slices of the input. The module owns
//! the wire format only; it knows no Parquet structure.
//!
//! Rules enforced here (the profile's Thrift rules):
//! - unknown fields of any type are skipped, containers nested at most [`Reader::max_depth`]
//!   deep ([`ErrorKind::DepthLimit`]);
//! - a field id seen twice in one struct is [`ErrorKind::ThriftDuplicateField`] (ids 0..=63 are
//!   tracked, which covers every field this crate knows);
//! - a known field read with the wrong wire type is [`ErrorKind::ThriftWireType`];
//! - [`required`] turns a missing field into [`ErrorKind::ThriftMissingField`] at the struct's
//!   first byte; unions are checked with [`StructState::union_member`];
//! - varints are canonical LEB128 and ZigZag; an `i32` that does not fit is
//!   [`ErrorKind::VarintOverflow`]; list sizes larger than the remaining bytes are
//!   [`ErrorKind::Truncated`] before any element is touched.
//!
//! ```
//! use lakecore::codec::thrift::{required, Reader};
//! // struct { 1: i32 = 1, 5: binary = "ab" }
//! let bytes = [0x15, 0x02, 0x48, 0x02, b'a', b'b', 0x00];
//! let mut r = Reader::new(&bytes, 0);
//! let mut st = r.enter_struct().unwrap();
//! let (mut version, mut name) = (None, None);
//! while let Some(f) = r.next_field(&mut st).unwrap() {
//!     match f.id {
//!         1 => version = Some(r.field_i32(f).unwrap()),
//!         5 => name = Some(r.field_binary(f).unwrap()),
//!         _ => r.skip_field(f).unwrap(),
//!     }
//! }
//! assert_eq!(required(version, &st).unwrap(), 1);
//! assert_eq!(name, Some(&b"ab"[..]));
//! ```

use crate::codec::varint::VarintFormat;
use crate::cursor::Cursor;
use crate::error::{Error, ErrorKind, Result};

/// The default container nesting limit.
pub const DEFAULT_MAX_DEPTH: u32 = 64;

/// A compact-protocol value type (the type nibble of field headers and list headers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// `bool` (field headers carry the value: 1 true, 2 false).
    Bool,
    /// `i8` / `byte`: one raw byte.
    I8,
    /// `i16`: ZigZag varint.
    I16,
    /// `i32` (and enums): ZigZag varint.
    I32,
    /// `i64`: ZigZag varint.
    I64,
    /// `double`: 8 bytes little-endian.
    Double,
    /// `binary` / `string`: varint length, then the bytes.
    Binary,
    /// `list<T>`.
    List,
    /// `set<T>` (same layout as a list).
    Set,
    /// `map<K, V>`.
    Map,
    /// A nested struct (or union), ended by a STOP byte.
    Struct,
    /// `uuid`: 16 raw bytes.
    Uuid,
}

impl FieldType {
    /// The type from its 4-bit code (1..=13), or `None`.
    pub const fn from_code(code: u8) -> Option<FieldType> {
        Some(match code {
            1 | 2 => FieldType::Bool,
            3 => FieldType::I8,
            4 => FieldType::I16,
            5 => FieldType::I32,
            6 => FieldType::I64,
            7 => FieldType::Double,
            8 => FieldType::Binary,
            9 => FieldType::List,
            10 => FieldType::Set,
            11 => FieldType::Map,
            12 => FieldType::Struct,
            13 => FieldType::Uuid,
            _ => return None,
        })
    }

    /// The 4-bit code written for this type (booleans: 1, the list-element code).
    pub const fn code(self) -> u8 {
        match self {
            FieldType::Bool => 1,
            FieldType::I8 => 3,
            FieldType::I16 => 4,
            FieldType::I32 => 5,
            FieldType::I64 => 6,
            FieldType::Double => 7,
            FieldType::Binary => 8,
            FieldType::List => 9,
            FieldType::Set => 10,
            FieldType::Map => 11,
            FieldType::Struct => 12,
            FieldType::Uuid => 13,
        }
    }
}

/// One field header: its id, wire type, and where it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// The field id.
    pub id: i16,
    /// The wire type.
    pub ty: FieldType,
    /// For [`FieldType::Bool`] fields, the value carried in the header.
    pub bool_value: bool,
    /// Absolute offset of the field header's first byte.
    pub offset: u64,
}

/// Per-struct bookkeeping between [`Reader::enter_struct`] and the STOP byte.
#[derive(Clone, Copy, Debug)]
pub struct StructState {
    last_id: i16,
    seen: u64,
    members: u32,
    start: u64,
}

impl StructState {
    /// Absolute offset of the struct's first byte (where missing-field errors point).
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Whether field `id` (0..=63) has been seen.
    pub fn has(&self, id: i16) -> bool {
        (0..64).contains(&id) && self.seen & (1u64 << id) != 0
    }

    /// Counts a union member; call once per member field read.
    pub fn union_member(&mut self) {
        self.members = self.members.saturating_add(1);
    }

    /// For a union: fails with [`ErrorKind::ThriftUnion`] (at the union's start) unless
    /// exactly one member was counted with [`StructState::union_member`].
    pub fn check_union(&self) -> Result<()> {
        if self.members == 1 {
            Ok(())
        } else {
            Err(Error::new(ErrorKind::ThriftUnion, self.start))
        }
    }
}

/// A required field's value, or [`ErrorKind::ThriftMissingField`] at the struct's start.
pub fn required<T>(value: Option<T>, st: &StructState) -> Result<T> {
    value.ok_or(Error::new(ErrorKind::ThriftMissingField, st.start))
}

/// A list (or set) header: element type, element count, and where it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListHeader {
    /// The element type.
    pub elem: FieldType,
    /// The number of elements.
    pub len: u32,
    /// Absolute offset of the header's first byte.
    pub offset: u64,
}

/// A compact-protocol reader over borrowed bytes that reports absolute offsets.
#[derive(Clone, Copy, Debug)]
pub struct Reader<'a> {
    cur: Cursor<'a>,
    depth: u32,
    max_depth: u32,
}

const TYPE_MASK: u8 = 0x0f;

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`, which begin at absolute offset `origin`.
    pub const fn new(bytes: &'a [u8], origin: u64) -> Self {
        Reader {
            cur: Cursor::with_origin(bytes, origin),
            depth: 0,
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }

    /// The same reader with another nesting limit.
    ///
    /// ```
    /// use lakecore::codec::thrift::Reader;
    /// use lakecore::ErrorKind;
    /// // struct { 1: struct { 1: struct {} } }: three levels.
    /// let bytes = [0x1c, 0x1c, 0x00, 0x00, 0x00];
    /// assert!(Reader::new(&bytes, 0).with_max_depth(3).skip_struct().is_ok());
    /// let e = Reader::new(&bytes, 0).with_max_depth(2).skip_struct().unwrap_err();
    /// assert_eq!((e.kind, e.offset), (ErrorKind::DepthLimit, 2)); // where level 3 starts
    /// ```
    #[must_use]
    pub const fn with_max_depth(mut self, max_depth: u32) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// The nesting limit.
    pub fn max_depth(&self) -> u32 {
        self.max_depth
    }

    /// Absolute offset of the next byte.
    pub fn position(&self) -> u64 {
        self.cur.position()
    }

    /// Position relative to the start of the input.
    pub fn index(&self) -> usize {
        self.cur.index()
    }

    /// The unread bytes.
    pub fn rest(&self) -> &'a [u8] {
        self.cur.rest()
    }

    /// Fails with [`ErrorKind::TrailingBytes`] unless every byte was read.
    pub fn expect_end(&self) -> Result<()> {
        self.cur.expect_end()
    }

    fn enter(&mut self) -> Result<()> {
        if self.depth >= self.max_depth {
            return Err(self.cur.error(ErrorKind::DepthLimit));
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn varint(&mut self) -> Result<u64> {
        self.cur.uvarint(VarintFormat::U64)
    }

    fn zigzag_bounded(&mut self, max_raw: u64) -> Result<i64> {
        let at = self.position();
        let raw = self.varint()?;
        if raw > max_raw {
            return Err(Error::new(ErrorKind::VarintOverflow, at));
        }
        Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
    }

    /// Reads an `i8` (one raw byte).
    pub fn i8(&mut self) -> Result<i8> {
        self.cur.u8().map(|b| b as i8)
    }

    /// Reads an `i16` (ZigZag varint).
    pub fn i16(&mut self) -> Result<i16> {
        self.zigzag_bounded(u64::from(u16::MAX)).map(|v| v as i16)
    }

    /// Reads an `i32` (ZigZag varint).
    pub fn i32(&mut self) -> Result<i32> {
        self.zigzag_bounded(u64::from(u32::MAX)).map(|v| v as i32)
    }

    /// Reads an `i64` (ZigZag varint).
    pub fn i64(&mut self) -> Result<i64> {
        self.zigzag_bounded(u64::MAX)
    }

    /// Reads a `double` (8 bytes little-endian).
    pub fn double(&mut self) -> Result<f64> {
        self.cur.u64_le().map(f64::from_bits)
    }

    /// Reads a `binary`: a varint length and that many borrowed bytes.
    pub fn binary(&mut self) -> Result<&'a [u8]> {
        let n = self.varint()?;
        self.cur.bytes_u64(n)
    }

    /// Reads a list element of type bool (1 = true, 0 or 2 = false).
    pub fn bool_element(&mut self) -> Result<bool> {
        let at = self.position();
        match self.cur.u8()? {
            1 => Ok(true),
            0 | 2 => Ok(false),
            _ => Err(Error::new(ErrorKind::InvalidValue, at)),
        }
    }

    /// Reads a list or set header. The element count must not exceed the remaining bytes
    /// (every element takes at least one byte).
    pub fn list_header(&mut self) -> Result<ListHeader> {
        let offset = self.position();
        let b = self.cur.u8()?;
        let elem = FieldType::from_code(b & TYPE_MASK)
            .ok_or(Error::new(ErrorKind::ThriftWireType, offset))?;
        let short = u64::from(b >> 4);
        let len = if short == 15 {
            let at = self.position();
            let n = self.varint()?;
            u32::try_from(n).map_err(|_| Error::new(ErrorKind::VarintOverflow, at))?
        } else {
            short as u32
        };
        if u64::from(len) > self.cur.remaining() as u64 {
            return Err(Error::new(
                ErrorKind::Truncated,
                self.position().saturating_add(self.cur.remaining() as u64),
            ));
        }
        Ok(ListHeader { elem, len, offset })
    }

    /// Starts reading a struct (counts one nesting level).
    pub fn enter_struct(&mut self) -> Result<StructState> {
        let start = self.position();
        self.enter()?;
        Ok(StructState {
            last_id: 0,
            seen: 0,
            members: 0,
            start,
        })
    }

    /// The next field header of the current struct, or `None` at its STOP byte (which ends
    /// the struct). Duplicate ids are rejected here.
    pub fn next_field(&mut self, st: &mut StructState) -> Result<Option<Field>> {
        let offset = self.position();
        let b = self.cur.u8()?;
        if b == 0 {
            self.leave();
            return Ok(None);
        }
        let code = b & TYPE_MASK;
        let ty = FieldType::from_code(code).ok_or(Error::new(ErrorKind::ThriftWireType, offset))?;
        let delta = b >> 4;
        let id = if delta == 0 {
            self.i16()?
        } else {
            st.last_id
                .checked_add(i16::from(delta))
                .ok_or(Error::new(ErrorKind::InvalidValue, offset))?
        };
        if (0..64).contains(&id) {
            let bit = 1u64 << id;
            if st.seen & bit != 0 {
                return Err(Error::new(ErrorKind::ThriftDuplicateField, offset));
            }
            st.seen |= bit;
        }
        st.last_id = id;
        Ok(Some(Field {
            id,
            ty,
            bool_value: code == 1,
            offset,
        }))
    }

    fn expect(f: Field, ty: FieldType) -> Result<()> {
        if f.ty == ty {
            Ok(())
        } else {
            Err(Error::new(ErrorKind::ThriftWireType, f.offset))
        }
    }

    /// The value of a `bool` field.
    pub fn field_bool(&mut self, f: Field) -> Result<bool> {
        Self::expect(f, FieldType::Bool)?;
        Ok(f.bool_value)
    }

    /// The value of an `i8` field.
    pub fn field_i8(&mut self, f: Field) -> Result<i8> {
        Self::expect(f, FieldType::I8)?;
        self.i8()
    }

    /// The value of an `i16` field.
    pub fn field_i16(&mut self, f: Field) -> Result<i16> {
        Self::expect(f, FieldType::I16)?;
        self.i16()
    }

    /// The value of an `i32` (or enum) field.
    pub fn field_i32(&mut self, f: Field) -> Result<i32> {
        Self::expect(f, FieldType::I32)?;
        self.i32()
    }

    /// The value of an `i64` field.
    pub fn field_i64(&mut self, f: Field) -> Result<i64> {
        Self::expect(f, FieldType::I64)?;
        self.i64()
    }

    /// The value of a `double` field.
    pub fn field_double(&mut self, f: Field) -> Result<f64> {
        Self::expect(f, FieldType::Double)?;
        self.double()
    }

    /// The borrowed value of a `binary`/`string` field.
    pub fn field_binary(&mut self, f: Field) -> Result<&'a [u8]> {
        Self::expect(f, FieldType::Binary)?;
        self.binary()
    }

    /// The header of a `list` field whose elements must be of type `elem`.
    pub fn field_list(&mut self, f: Field, elem: FieldType) -> Result<ListHeader> {
        Self::expect(f, FieldType::List)?;
        let h = self.list_header()?;
        // An empty list may declare any element type.
        if h.elem != elem && h.len != 0 {
            return Err(Error::new(ErrorKind::ThriftWireType, h.offset));
        }
        Ok(h)
    }

    /// Checks that `f` is a struct field without entering it (for a nested parser that
    /// enters itself).
    pub fn check_struct(f: Field) -> Result<()> {
        Self::expect(f, FieldType::Struct)
    }

    /// Checks that `f` is a struct field and enters it.
    pub fn field_struct(&mut self, f: Field) -> Result<StructState> {
        Self::expect(f, FieldType::Struct)?;
        self.enter_struct()
    }

    /// Skips the value of field `f` (any type).
    pub fn skip_field(&mut self, f: Field) -> Result<()> {
        if f.ty == FieldType::Bool {
            return Ok(());
        }
        self.skip(f.ty)
    }

    /// Skips the value of field `f` and returns its raw bytes (for verbatim copies).
    pub fn field_raw(&mut self, f: Field) -> Result<&'a [u8]> {
        let rest = self.rest();
        let start = self.index();
        self.skip_field(f)?;
        let used = self.index().saturating_sub(start);
        rest.get(..used)
            .ok_or(Error::new(ErrorKind::Truncated, self.position()))
    }

    /// Skips one value of type `ty` as it appears inside a container (booleans take a byte).
    pub fn skip(&mut self, ty: FieldType) -> Result<()> {
        match ty {
            FieldType::Bool => self.bool_element().map(|_| ()),
            FieldType::I8 => self.cur.skip(1),
            FieldType::I16 => self.i16().map(|_| ()),
            FieldType::I32 => self.i32().map(|_| ()),
            FieldType::I64 => self.i64().map(|_| ()),
            FieldType::Double => self.cur.skip(8),
            FieldType::Uuid => self.cur.skip(16),
            FieldType::Binary => self.binary().map(|_| ()),
            FieldType::List | FieldType::Set => {
                self.enter()?;
                let h = self.list_header()?;
                for _ in 0..h.len {
                    self.skip(h.elem)?;
                }
                self.leave();
                Ok(())
            }
            FieldType::Map => {
                self.enter()?;
                let at = self.position();
                let n = self.varint()?;
                if n > 0 {
                    let n =
                        u32::try_from(n).map_err(|_| Error::new(ErrorKind::VarintOverflow, at))?;
                    let kt = self.position();
                    let types = self.cur.u8()?;
                    let k = FieldType::from_code(types >> 4)
                        .ok_or(Error::new(ErrorKind::ThriftWireType, kt))?;
                    let v = FieldType::from_code(types & TYPE_MASK)
                        .ok_or(Error::new(ErrorKind::ThriftWireType, kt))?;
                    if u64::from(n) > self.cur.remaining() as u64 {
                        return Err(Error::new(
                            ErrorKind::Truncated,
                            self.position().saturating_add(self.cur.remaining() as u64),
                        ));
                    }
                    for _ in 0..n {
                        self.skip(k)?;
                        self.skip(v)?;
                    }
                }
                self.leave();
                Ok(())
            }
            FieldType::Struct => {
                let mut st = self.enter_struct()?;
                while let Some(f) = self.next_field(&mut st)? {
                    self.skip_field(f)?;
                }
                Ok(())
            }
        }
    }

    /// Skips one whole struct (from its first field header through its STOP byte).
    pub fn skip_struct(&mut self) -> Result<()> {
        self.skip(FieldType::Struct)
    }
}

/// A compact-protocol writer into a growing buffer.
///
/// ```
/// use lakecore::codec::thrift::{FieldType, Writer};
/// let mut w = Writer::new();
/// w.struct_begin();
/// w.field_i32(1, 1);
/// w.field_binary(5, b"ab");
/// w.struct_end();
/// assert_eq!(w.into_bytes(), [0x15, 0x02, 0x48, 0x02, b'a', b'b', 0x00]);
/// ```
#[cfg(feature = "alloc")]
#[derive(Clone, Debug, Default)]
pub struct Writer {
    buf: alloc::vec::Vec<u8>,
    stack: alloc::vec::Vec<i16>,
    last: i16,
}

#[cfg(feature = "alloc")]
impl Writer {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The number of bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The written bytes.
    pub fn into_bytes(self) -> alloc::vec::Vec<u8> {
        self.buf
    }

    fn varint(&mut self, v: u64) {
        crate::codec::varint::push_u64(&mut self.buf, v);
    }

    fn zigzag(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }

    /// Starts a struct (top-level or after [`Writer::field_begin`] with `Struct`).
    pub fn struct_begin(&mut self) {
        self.stack.push(self.last);
        self.last = 0;
    }

    /// Ends a struct with its STOP byte.
    pub fn struct_end(&mut self) {
        self.buf.push(0);
        self.last = self.stack.pop().unwrap_or(0);
    }

    fn header(&mut self, id: i16, code: u8) {
        let delta = i32::from(id) - i32::from(self.last);
        if (1..=15).contains(&delta) {
            self.buf.push(((delta as u8) << 4) | code);
        } else {
            self.buf.push(code);
            self.zigzag(i64::from(id));
        }
        self.last = id;
    }

    /// Writes a field header of type `ty` (not for booleans: use [`Writer::field_bool`]).
    pub fn field_begin(&mut self, id: i16, ty: FieldType) {
        self.header(id, ty.code());
    }

    /// A `bool` field.
    pub fn field_bool(&mut self, id: i16, v: bool) {
        self.header(id, if v { 1 } else { 2 });
    }

    /// An `i8` field.
    pub fn field_i8(&mut self, id: i16, v: i8) {
        self.field_begin(id, FieldType::I8);
        self.i8(v);
    }

    /// An `i16` field.
    pub fn field_i16(&mut self, id: i16, v: i16) {
        self.field_begin(id, FieldType::I16);
        self.i16(v);
    }

    /// An `i32` field.
    pub fn field_i32(&mut self, id: i16, v: i32) {
        self.field_begin(id, FieldType::I32);
        self.i32(v);
    }

    /// An `i64` field.
    pub fn field_i64(&mut self, id: i16, v: i64) {
        self.field_begin(id, FieldType::I64);
        self.i64(v);
    }

    /// A `double` field.
    pub fn field_double(&mut self, id: i16, v: f64) {
        self.field_begin(id, FieldType::Double);
        self.double(v);
    }

    /// A `binary` field.
    pub fn field_binary(&mut self, id: i16, v: &[u8]) {
        self.field_begin(id, FieldType::Binary);
        self.binary(v);
    }

    /// A `list` field header followed by its list header; write `len` elements next.
    pub fn field_list(&mut self, id: i16, elem: FieldType, len: usize) {
        self.field_begin(id, FieldType::List);
        self.list_header(elem, len);
    }

    /// A struct field header; the struct has begun (end it with [`Writer::struct_end`]).
    pub fn field_struct(&mut self, id: i16) {
        self.field_begin(id, FieldType::Struct);
        self.struct_begin();
    }

    /// A list (or set) header.
    pub fn list_header(&mut self, elem: FieldType, len: usize) {
        if len < 15 {
            self.buf.push(((len as u8) << 4) | elem.code());
        } else {
            self.buf.push(0xf0 | elem.code());
            self.varint(len as u64);
        }
    }

    /// An `i8` value.
    pub fn i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }

    /// An `i16` value.
    pub fn i16(&mut self, v: i16) {
        self.zigzag(i64::from(v));
    }

    /// An `i32` value.
    pub fn i32(&mut self, v: i32) {
        self.zigzag(i64::from(v));
    }

    /// An `i64` value.
    pub fn i64(&mut self, v: i64) {
        self.zigzag(v);
    }

    /// A `double` value.
    pub fn double(&mut self, v: f64) {
        self.buf.extend_from_slice(&v.to_bits().to_le_bytes());
    }

    /// A `binary` value.
    pub fn binary(&mut self, v: &[u8]) {
        self.varint(v.len() as u64);
        self.buf.extend_from_slice(v);
    }

    /// A `bool` list element.
    pub fn bool_element(&mut self, v: bool) {
        self.buf.push(if v { 1 } else { 2 });
    }

    /// Raw bytes (a value copied verbatim with [`Reader::field_raw`]).
    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_limit_applies_to_skips() {
        // struct { 1: struct { 1: struct { ... } } } nested 3 deep with limit 2.
        let bytes = [0x1c, 0x1c, 0x1c, 0x00, 0x00, 0x00, 0x00];
        let mut r = Reader::new(&bytes, 0).with_max_depth(2);
        let e = r.skip_struct().unwrap_err();
        assert_eq!(e.kind, ErrorKind::DepthLimit);
        let mut r = Reader::new(&bytes, 0).with_max_depth(4);
        r.skip_struct().unwrap();
        r.expect_end().unwrap();
    }
}
