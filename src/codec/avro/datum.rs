//! Walking Avro datums in place: the wanted fields of a [`Projection`] come back as borrowed
//! [`Value`]s, every other field is stepped over by its length prefixes without being
//! decoded. No allocation; recursion is bounded by [`MAX_DEPTH`].

use super::schema::{Node, Projection, Schema, Type, DESCEND, MAX_DEPTH, SKIP};
use crate::codec::varint::{decode_short, decode_u64, zigzag_decode, VarintFormat};
use crate::cursor::Cursor;
use crate::error::{off, Error, ErrorKind, Result};

/// Most zero-byte items (`null`, empty records, `fixed` of size 0) the arrays and maps of one
/// datum may hold together, and one walk of [`Schema::items`] may yield: such items cannot be
/// bounded by the bytes left, and a few bytes per block could otherwise claim billions.
pub const MAX_EMPTY_ITEMS: u64 = 1 << 16;

/// One decoded value, borrowing from the datum bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    /// The field is not in the writer schema (or the projection could not reach it).
    Absent,
    /// `null` (also a union's null branch).
    Null,
    /// `boolean`.
    Boolean(bool),
    /// `int` or `long`.
    Long(i64),
    /// `float`.
    Float(f32),
    /// `double`.
    Double(f64),
    /// `bytes` or `fixed`.
    Bytes(&'a [u8]),
    /// `string`, as its UTF-8 bytes (checked by [`Value::as_str`]).
    Str(&'a [u8]),
    /// `enum`: the symbol index.
    Enum(u32),
    /// `array` or `map`: the encoded items, iterated with [`Schema::items`].
    Items(Items<'a>),
    /// `record`: its encoded fields.
    Record(&'a [u8]),
}

impl<'a> Value<'a> {
    /// The integer of an `int` or `long`.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Long(v) => Some(v),
            _ => None,
        }
    }

    /// The integer of an `int` or `long` that fits in `i32`.
    pub fn as_i32(&self) -> Option<i32> {
        self.as_i64().and_then(|v| i32::try_from(v).ok())
    }

    /// The bytes of a `bytes`, `fixed` or `string`.
    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        match *self {
            Value::Bytes(b) | Value::Str(b) => Some(b),
            _ => None,
        }
    }

    /// The text of a `string` (UTF-8 checked).
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            Value::Str(b) => core::str::from_utf8(b).ok(),
            _ => None,
        }
    }

    /// Whether the value is `null` or absent.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null | Value::Absent)
    }
}

/// The encoded items of an array or map value; see [`Schema::items`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Items<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) origin: u64,
    pub(super) node: u16,
    pub(super) map: bool,
}

impl Items<'_> {
    /// The encoded size in bytes.
    pub fn encoded_len(&self) -> usize {
        self.bytes.len()
    }

    /// The encoded items (the array's or map's blocks and the terminating zero count).
    pub fn bytes(&self) -> &[u8] {
        self.bytes
    }
}

/// Reads an Avro `long` (ZigZag varint, at most 10 bytes, shortest form) at `c`.
#[inline(always)]
pub fn long(c: &mut Cursor<'_>) -> Result<i64> {
    let rest = c.rest();
    let (raw, n) = match rest.first() {
        Some(&b) if b < 0x80 => (u64::from(b), 1),
        _ => match decode_short(rest) {
            Some(v) => v,
            None => decode_u64(rest, VarintFormat::U64).map_err(|e| e.shifted(c.position()))?,
        },
    };
    c.skip(n)?;
    Ok(zigzag_decode(raw))
}

/// Reads a non-negative Avro `long` used as a length or count ([`ErrorKind::InvalidLength`]
/// at its first byte when negative).
#[inline(always)]
pub fn length(c: &mut Cursor<'_>) -> Result<u64> {
    let at = c.position();
    let v = long(c)?;
    u64::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidLength, at))
}

impl<'s> Schema<'s> {
    /// Reads one datum of the top-level type at `c`, filling `out[i]` with the field of the
    /// projection's path `i` ([`Value::Absent`] when not present) and stepping over the
    /// rest. `out` must hold at least [`Projection::len`] values.
    ///
    /// ```
    /// use lakecore::codec::avro::{Schema, Value};
    /// use lakecore::cursor::Cursor;
    /// let json = br#"{"type": "record", "name": "e", "fields": [
    ///     {"name": "stats", "type": {"type": "record", "name": "s", "fields": [
    ///         {"name": "min", "type": "bytes"}, {"name": "n", "type": "long"}]}},
    ///     {"name": "file", "type": {"type": "record", "name": "f", "fields": [
    ///         {"name": "name", "type": "string"}, {"name": "rows", "type": ["null", "long"]}]}}]}"#;
    /// let schema = Schema::parse(json, 0)?;
    /// let projection = schema.project(&["file.name", "file.rows", "file.gone"])?;
    /// // stats = {min: b"xy", n: 3}, file = {name: "a.parquet", rows: 42}
    /// let datum = b"\x04xy\x06\x12a.parquet\x02\x54";
    /// let mut out = [Value::Absent; 3];
    /// schema.read(&projection, &mut Cursor::new(datum), &mut out)?;
    /// assert_eq!(out[0].as_str(), Some("a.parquet"));
    /// assert_eq!(out[1].as_i64(), Some(42));
    /// assert_eq!(out[2], Value::Absent);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    #[inline]
    pub fn read<'a>(
        &self,
        projection: &Projection,
        c: &mut Cursor<'a>,
        out: &mut [Value<'a>],
    ) -> Result<()> {
        for v in out.iter_mut().take(projection.slots) {
            *v = Value::Absent;
        }
        let mut empty = MAX_EMPTY_ITEMS;
        if projection.program.is_compiled() {
            return self.run(projection, c, out, &mut empty);
        }
        self.descend(projection, self.root, c, out, 0, &mut empty)
    }

    /// [`Schema::read`] by the recursive walk over the type graph alone, never through the
    /// projection's flattened program (the reference the program is tested against).
    #[doc(hidden)]
    pub fn read_walking<'a>(
        &self,
        projection: &Projection,
        c: &mut Cursor<'a>,
        out: &mut [Value<'a>],
    ) -> Result<()> {
        for v in out.iter_mut().take(projection.slots) {
            *v = Value::Absent;
        }
        let mut empty = MAX_EMPTY_ITEMS;
        self.descend(projection, self.root, c, out, 0, &mut empty)
    }

    /// Steps over one datum of the top-level type.
    pub fn skip_datum(&self, c: &mut Cursor<'_>) -> Result<()> {
        let mut empty = MAX_EMPTY_ITEMS;
        self.skip(self.root, c, 0, &mut empty)
    }

    /// Whether every datum of the top-level type takes at least one byte (so a block's
    /// object count can be bounded by its size).
    pub fn datum_nonzero(&self) -> bool {
        self.node(self.root).nonzero
    }

    pub(super) fn descend<'a>(
        &self,
        p: &Projection,
        node: u16,
        c: &mut Cursor<'a>,
        out: &mut [Value<'a>],
        depth: usize,
        empty: &mut u64,
    ) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(c.error(ErrorKind::DepthLimit));
        }
        let n = self.node(node);
        match n.ty {
            Type::Record => {
                let first = usize::from(n.a);
                for i in first..first + usize::from(n.b) {
                    let link = self.link(i);
                    match p.marks.get(i).copied().unwrap_or(SKIP) {
                        SKIP => self.skip(link.node, c, depth + 1, empty)?,
                        DESCEND => self.descend(p, link.node, c, out, depth + 1, empty)?,
                        slot => {
                            let v = self.value(link.node, c, depth + 1, empty)?;
                            if let Some(o) = out.get_mut(usize::from(slot - 1)) {
                                *o = v;
                            }
                        }
                    }
                }
                Ok(())
            }
            Type::Union => {
                let branch = self.branch(n, c)?;
                self.descend(p, branch, c, out, depth + 1, empty)
            }
            _ => self.skip(node, c, depth + 1, empty),
        }
    }

    #[inline]
    fn branch(&self, n: Node, c: &mut Cursor<'_>) -> Result<u16> {
        let at = c.position();
        let i = long(c)?;
        if i < 0 || i >= i64::from(n.b) {
            return Err(Error::new(ErrorKind::InvalidValue, at));
        }
        Ok(self
            .link(usize::from(n.a) + usize::try_from(i).unwrap_or(0))
            .node)
    }

    /// Reads one value of `node`; `empty` is what is left of [`MAX_EMPTY_ITEMS`].
    pub(super) fn value<'a>(
        &self,
        node: u16,
        c: &mut Cursor<'a>,
        depth: usize,
        empty: &mut u64,
    ) -> Result<Value<'a>> {
        if depth > MAX_DEPTH {
            return Err(c.error(ErrorKind::DepthLimit));
        }
        let n = self.node(node);
        Ok(match n.ty {
            Type::Null => Value::Null,
            Type::Boolean => {
                let at = c.position();
                match c.u8()? {
                    0 => Value::Boolean(false),
                    1 => Value::Boolean(true),
                    _ => return Err(Error::new(ErrorKind::InvalidValue, at)),
                }
            }
            Type::Int => {
                let at = c.position();
                let v = long(c)?;
                if i32::try_from(v).is_err() {
                    return Err(Error::new(ErrorKind::OutOfBounds, at));
                }
                Value::Long(v)
            }
            Type::Long => Value::Long(long(c)?),
            Type::Float => Value::Float(f32::from_le_bytes(*c.array::<4>()?)),
            Type::Double => Value::Double(f64::from_le_bytes(*c.array::<8>()?)),
            Type::Bytes => {
                let len = length(c)?;
                Value::Bytes(c.bytes_u64(len)?)
            }
            Type::String => {
                let len = length(c)?;
                Value::Str(c.bytes_u64(len)?)
            }
            Type::Fixed => Value::Bytes(c.bytes_u64(u64::from(n.size))?),
            Type::Enum => {
                let at = c.position();
                let i = long(c)?;
                match u32::try_from(i) {
                    Ok(i) if i < n.size => Value::Enum(i),
                    _ => return Err(Error::new(ErrorKind::InvalidValue, at)),
                }
            }
            Type::Union => {
                let branch = self.branch(n, c)?;
                self.value(branch, c, depth + 1, empty)?
            }
            Type::Array | Type::Map => {
                let start = *c;
                let origin = c.position();
                self.skip(node, c, depth, empty)?;
                let used = usize::try_from(c.position() - origin).unwrap_or(0);
                Value::Items(Items {
                    bytes: start.rest().get(..used).unwrap_or_default(),
                    origin,
                    node: n.a,
                    map: n.ty == Type::Map,
                })
            }
            Type::Record => {
                let start = *c;
                let origin = c.position();
                self.skip(node, c, depth, empty)?;
                let used = usize::try_from(c.position() - origin).unwrap_or(0);
                Value::Record(start.rest().get(..used).unwrap_or_default())
            }
        })
    }

    /// Steps over one value of `node` without decoding it; `empty` is what is left of
    /// [`MAX_EMPTY_ITEMS`] for the datum.
    pub(super) fn skip(
        &self,
        node: u16,
        c: &mut Cursor<'_>,
        depth: usize,
        empty: &mut u64,
    ) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(c.error(ErrorKind::DepthLimit));
        }
        let n = self.node(node);
        match n.ty {
            Type::Union => {
                let branch = self.branch(n, c)?;
                self.skip(branch, c, depth + 1, empty)
            }
            Type::Record => {
                let first = usize::from(n.a);
                for i in first..first + usize::from(n.b) {
                    self.skip(self.link(i).node, c, depth + 1, empty)?;
                }
                Ok(())
            }
            Type::Array | Type::Map => {
                let item = n.a;
                let map = n.ty == Type::Map;
                // Items of a primitive type (or a union of null and one) are stepped over
                // inline, with the recursive walk's checks, when its depth limit cannot bite.
                let simple = match depth + 2 <= MAX_DEPTH {
                    true => self.simple(item),
                    false => None,
                };
                let nonzero = map || self.node(item).nonzero;
                skip_blocks(c, map, nonzero, empty, |c, empty| match simple {
                    Some(s) => s.skip(c),
                    None => self.skip(item, c, depth + 1, empty),
                })
            }
            ty => skip_primitive(ty, n.size, c),
        }
    }

    /// How to step over a value of `node` without the recursive walk: a primitive type, or a
    /// two-branch union of `null` and a primitive type.
    pub(super) fn simple(&self, node: u16) -> Option<Simple> {
        let n = self.node(node);
        let prim = |ty: Type| match ty {
            Type::Null
            | Type::Boolean
            | Type::Int
            | Type::Long
            | Type::Enum
            | Type::Float
            | Type::Double
            | Type::Bytes
            | Type::String => Some(ty),
            _ => None,
        };
        match self.null_union(node) {
            Some((union, other)) => prim(self.node(other).ty).map(|ty| Simple { ty, union }),
            None if n.ty == Type::Union => None,
            None => prim(n.ty).map(|ty| Simple { ty, union: 0 }),
        }
    }

    /// A two-branch union with `null`: which branch is the null one, as [`null_branch`]
    /// takes it (1: `["null", T]`, 2: `[T, "null"]`), and T's node. `None` for any other
    /// type. The walk's inline steps and the flattened program recognise such unions here.
    pub(super) fn null_union(&self, node: u16) -> Option<(u8, u16)> {
        let n = self.node(node);
        if n.ty != Type::Union || n.b != 2 {
            return None;
        }
        let a = self.link(usize::from(n.a)).node;
        let b = self.link(usize::from(n.a) + 1).node;
        match (self.node(a).ty, self.node(b).ty) {
            (Type::Null, _) => Some((1, b)),
            (_, Type::Null) => Some((2, a)),
            _ => None,
        }
    }

    /// The values of an array (of a map: its values, keys dropped) in order.
    ///
    /// ```
    /// use lakecore::codec::avro::{Schema, Value};
    /// use lakecore::cursor::Cursor;
    /// let json = br#"{"type": "record", "name": "r", "fields": [
    ///     {"name": "files", "type": {"type": "array", "items": "string"}}]}"#;
    /// let schema = Schema::parse(json, 0)?;
    /// let p = schema.project(&["files"])?;
    /// let mut out = [Value::Absent];
    /// schema.read(&p, &mut Cursor::new(b"\x04\x02a\x04bc\x00"), &mut out)?;
    /// let Value::Items(items) = out[0] else { panic!() };
    /// let names: Vec<_> = schema.items(items).map(|v| v.map(|v| v.as_str())).collect::<Result<_, _>>()?;
    /// assert_eq!(names, [Some("a"), Some("bc")]);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn items<'a>(&'a self, items: Items<'a>) -> ItemIter<'a, 's> {
        ItemIter {
            schema: self,
            c: Cursor::with_origin(items.bytes, items.origin),
            node: items.node,
            map: items.map,
            left: 0,
            end: None,
            empty: MAX_EMPTY_ITEMS,
            done: false,
        }
    }
}

/// A value stepped over inline (see `Schema::simple`): a primitive type, in a two-branch
/// union with `null` when `union` is 1 (`["null", T]`) or 2 (`[T, "null"]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Simple {
    pub(super) ty: Type,
    pub(super) union: u8,
}

impl Simple {
    #[inline(always)]
    pub(super) fn skip(self, c: &mut Cursor<'_>) -> Result<()> {
        if self.union != 0 && null_branch(c, self.union)? {
            return Ok(());
        }
        skip_primitive(self.ty, 0, c)
    }
}

/// Reads the branch index of a union with `null` whose null branch is `union` (1 or 2, see
/// [`Schema::null_union`]): whether the value is null. Any other index is
/// [`ErrorKind::InvalidValue`] at the index.
#[inline(always)]
pub(super) fn null_branch(c: &mut Cursor<'_>, union: u8) -> Result<bool> {
    let at = c.position();
    match (long(c)?, union) {
        (0, 1) | (1, 2) => Ok(true),
        (1, 1) | (0, 2) => Ok(false),
        _ => Err(Error::new(ErrorKind::InvalidValue, at)),
    }
}

/// Steps over the blocks of an array (`map`: of a map, each item after its key), each of
/// whose items `item` steps over; `nonzero` when every item takes at least one byte (else
/// the items draw on `empty`, what is left of [`MAX_EMPTY_ITEMS`]). The recursive walk and
/// the flattened program both step over items through here.
#[inline(always)]
pub(super) fn skip_blocks<'a>(
    c: &mut Cursor<'a>,
    map: bool,
    nonzero: bool,
    empty: &mut u64,
    mut item: impl FnMut(&mut Cursor<'a>, &mut u64) -> Result<()>,
) -> Result<()> {
    loop {
        let at = c.position();
        let count = long(c)?;
        if count == 0 {
            return Ok(());
        }
        if count < 0 {
            // A negative count is followed by the block's size in bytes.
            let size = length(c)?;
            c.bytes_u64(size)?;
            continue;
        }
        let count = count.unsigned_abs();
        // Zero-byte items draw on the datum's allowance, not on the bytes left.
        let bound = if nonzero { off(c.remaining()) } else { *empty };
        if count > bound {
            return Err(Error::new(ErrorKind::InvalidLength, at));
        }
        if !nonzero {
            *empty -= count;
        }
        for _ in 0..count {
            if map {
                let len = length(c)?;
                c.bytes_u64(len)?;
            }
            item(c, empty)?;
        }
    }
}

/// Steps over a value of a primitive type (`Fixed`: `size` bytes); the compound types, which
/// the callers handle themselves, step over nothing here.
#[inline(always)]
fn skip_primitive(ty: Type, size: u32, c: &mut Cursor<'_>) -> Result<()> {
    match ty {
        Type::Boolean => c.skip(1),
        Type::Int | Type::Long | Type::Enum => long(c).map(|_| ()),
        Type::Float => c.skip(4),
        Type::Double => c.skip(8),
        Type::Bytes | Type::String => {
            let len = length(c)?;
            c.bytes_u64(len).map(|_| ())
        }
        Type::Fixed => c.bytes_u64(u64::from(size)).map(|_| ()),
        Type::Null | Type::Union | Type::Record | Type::Array | Type::Map => Ok(()),
    }
}

/// The values of an array or map; see [`Schema::items`].
#[derive(Clone, Debug)]
pub struct ItemIter<'a, 's> {
    schema: &'a Schema<'s>,
    c: Cursor<'a>,
    node: u16,
    map: bool,
    left: u64,
    /// Where the current block ends, for a block with a negative count (and a byte size).
    end: Option<u64>,
    /// What is left of [`MAX_EMPTY_ITEMS`].
    empty: u64,
    done: bool,
}

impl<'a> ItemIter<'a, '_> {
    fn step(&mut self) -> Result<Option<Value<'a>>> {
        while self.left == 0 {
            // The walk that found these items stepped over a block with a negative count by
            // its byte size alone: its items must fill exactly that size.
            if let Some(end) = self.end.take() {
                if self.c.position() != end {
                    return Err(self.c.error(ErrorKind::InvalidLength));
                }
            }
            let at = self.c.position();
            let count = long(&mut self.c)?;
            if count == 0 {
                return Ok(None);
            }
            let nonzero = self.map || self.schema.node(self.node).nonzero;
            let room = if count < 0 {
                let size = length(&mut self.c)?;
                self.end = Some(self.c.position().saturating_add(size));
                size
            } else {
                off(self.c.remaining())
            };
            let count = count.unsigned_abs();
            if count > if nonzero { room } else { self.empty } {
                return Err(Error::new(ErrorKind::InvalidLength, at));
            }
            if !nonzero {
                self.empty -= count;
            }
            self.left = count;
        }
        self.left -= 1;
        if self.map {
            let len = length(&mut self.c)?;
            self.c.bytes_u64(len)?;
        }
        self.schema
            .value(self.node, &mut self.c, 1, &mut self.empty)
            .map(Some)
    }
}

impl<'a> Iterator for ItemIter<'a, '_> {
    type Item = Result<Value<'a>>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.step();
        self.done = !matches!(r, Ok(Some(_)));
        r.transpose()
    }
}
