//! The THRIFT modules: `SchemaModule { 1: list<parquet.SchemaElement>, 2: optional
//! list<parquet.ColumnOrder> }` and `FileMetadataModule { 1: optional string created_by,
//! 2: optional list<parquet.KeyValue> }`, read lazily and without copying.
//!
//! A leaf is a schema element other than the root whose `num_children` is absent or 0;
//! leaves are numbered in schema (depth-first) order, which is the column order.

use crate::codec::thrift::{required, FieldType, ListHeader, Reader};
use crate::error::{Error, ErrorKind, Result};

/// Deepest schema nesting [`Schema::leaves`] follows.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// One `parquet.SchemaElement` (fields this crate reads; the logical type stays raw).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchemaElement<'a> {
    /// parquet.Type (leaves).
    pub physical_type: Option<i32>,
    /// Length of FIXED_LEN_BYTE_ARRAY values.
    pub type_length: Option<i32>,
    /// parquet.FieldRepetitionType.
    pub repetition_type: Option<i32>,
    /// The name.
    pub name: &'a [u8],
    /// Number of children (groups).
    pub num_children: Option<i32>,
    /// parquet.ConvertedType.
    pub converted_type: Option<i32>,
    /// Decimal scale.
    pub scale: Option<i32>,
    /// Decimal precision.
    pub precision: Option<i32>,
    /// Field id.
    pub field_id: Option<i32>,
    /// The raw Compact-Thrift bytes of the `LogicalType` union, if present.
    pub logical_type: Option<&'a [u8]>,
}

impl<'a> SchemaElement<'a> {
    /// Parses one element from `r`.
    pub fn parse(r: &mut Reader<'a>) -> Result<Self> {
        let mut st = r.enter_struct()?;
        let mut e = SchemaElement {
            physical_type: None,
            type_length: None,
            repetition_type: None,
            name: &[],
            num_children: None,
            converted_type: None,
            scale: None,
            precision: None,
            field_id: None,
            logical_type: None,
        };
        let mut name = None;
        while let Some(f) = r.next_field(&mut st)? {
            match f.id {
                1 => e.physical_type = Some(r.field_i32(f)?),
                2 => e.type_length = Some(r.field_i32(f)?),
                3 => e.repetition_type = Some(r.field_i32(f)?),
                4 => name = Some(r.field_binary(f)?),
                5 => e.num_children = Some(r.field_i32(f)?),
                6 => e.converted_type = Some(r.field_i32(f)?),
                7 => e.scale = Some(r.field_i32(f)?),
                8 => e.precision = Some(r.field_i32(f)?),
                9 => e.field_id = Some(r.field_i32(f)?),
                10 => {
                    Reader::check_struct(f)?;
                    e.logical_type = Some(r.field_raw(f)?);
                }
                _ => r.skip_field(f)?,
            }
        }
        e.name = required(name, &st)?;
        Ok(e)
    }

    /// Whether the element is a leaf (no children) — meaningful for non-root elements.
    pub fn is_leaf(&self) -> bool {
        matches!(self.num_children, None | Some(0))
    }
}

/// The SCHEMA module.
#[derive(Clone, Copy, Debug)]
pub struct Schema<'a> {
    offset: u64,
    elements: Reader<'a>,
    len: u32,
    column_orders: Option<(Reader<'a>, ListHeader)>,
}

/// A leaf column: its index, element and path of names (root excluded).
#[derive(Clone, Copy, Debug)]
pub struct Leaf<'a> {
    /// Leaf (column) index.
    pub index: u32,
    /// The leaf's schema element.
    pub element: SchemaElement<'a>,
    path: [&'a [u8]; MAX_SCHEMA_DEPTH],
    depth: usize,
}

impl<'a> Leaf<'a> {
    /// The names from the root's child down to the leaf.
    pub fn path(&self) -> &[&'a [u8]] {
        self.path.get(..self.depth).unwrap_or_default()
    }
}

impl<'a> Schema<'a> {
    /// Parses the module struct (`bytes` exactly), checking its shape; elements are decoded
    /// lazily.
    pub fn parse(bytes: &'a [u8], origin: u64, max_depth: u32) -> Result<Self> {
        let mut r = Reader::new(bytes, origin).with_max_depth(max_depth);
        let mut st = r.enter_struct()?;
        let (mut elements, mut orders) = (None, None);
        while let Some(f) = r.next_field(&mut st)? {
            match f.id {
                1 => {
                    let h = r.field_list(f, FieldType::Struct)?;
                    let start = r;
                    for _ in 0..h.len {
                        SchemaElement::parse(&mut r)?;
                    }
                    elements = Some((start, h.len));
                }
                2 => {
                    let h = r.field_list(f, FieldType::Struct)?;
                    let start = r;
                    for _ in 0..h.len {
                        r.skip_struct()?;
                    }
                    orders = Some((start, h));
                }
                _ => r.skip_field(f)?,
            }
        }
        r.expect_end()?;
        let (elements, len) = required(elements, &st)?;
        if len == 0 {
            return Err(Error::new(ErrorKind::InvalidLength, origin));
        }
        Ok(Schema {
            offset: origin,
            elements,
            len,
            column_orders: orders,
        })
    }

    /// A schema over a raw `list<SchemaElement>` value (list header included), as found in a
    /// standard `FileMetaData`; `bytes` must hold exactly the list.
    pub fn from_element_list(bytes: &'a [u8], origin: u64, max_depth: u32) -> Result<Self> {
        let mut r = Reader::new(bytes, origin).with_max_depth(max_depth);
        let h = r.list_header()?;
        if h.elem != FieldType::Struct && h.len != 0 {
            return Err(Error::new(ErrorKind::ThriftWireType, h.offset));
        }
        let start = r;
        for _ in 0..h.len {
            SchemaElement::parse(&mut r)?;
        }
        r.expect_end()?;
        if h.len == 0 {
            return Err(Error::new(ErrorKind::InvalidLength, origin));
        }
        Ok(Schema {
            offset: origin,
            elements: start,
            len: h.len,
            column_orders: None,
        })
    }

    /// Absolute offset of the module.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Number of schema elements (root included).
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there is no element (never true for a parsed schema).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Iterates the elements in order.
    pub fn elements(&self) -> impl Iterator<Item = Result<SchemaElement<'a>>> + 'a {
        let mut r = self.elements;
        (0..self.len).map(move |_| SchemaElement::parse(&mut r))
    }

    /// Number of `ColumnOrder` entries (0 when absent).
    pub fn num_column_orders(&self) -> usize {
        self.column_orders.map_or(0, |(_, h)| h.len as usize)
    }

    /// Whether column order `i` is `TYPE_DEFINED_ORDER` (union member 1).
    pub fn column_order_is_type_defined(&self, i: usize) -> Result<Option<bool>> {
        let Some((mut r, h)) = self.column_orders else {
            return Ok(None);
        };
        if i >= h.len as usize {
            return Ok(None);
        }
        for _ in 0..i {
            r.skip_struct()?;
        }
        let mut st = r.enter_struct()?;
        let mut member = None;
        while let Some(f) = r.next_field(&mut st)? {
            st.union_member();
            member = Some(f.id);
            r.skip_field(f)?;
        }
        st.check_union()?;
        Ok(Some(member == Some(1)))
    }

    /// Number of leaves.
    pub fn num_leaves(&self) -> Result<u64> {
        let mut n = 0u64;
        let mut it = self.leaves();
        for leaf in &mut it {
            leaf?;
            n += 1;
        }
        Ok(n)
    }

    /// Iterates the leaves with their paths (a depth-first walk with a fixed stack; deeper
    /// than [`MAX_SCHEMA_DEPTH`] is [`ErrorKind::DepthLimit`], children counts that do not
    /// match the element count are [`ErrorKind::Mismatch`]).
    pub fn leaves(&self) -> Leaves<'a> {
        Leaves {
            r: self.elements,
            remaining_elements: self.len,
            stack: [0; MAX_SCHEMA_DEPTH],
            names: [&[]; MAX_SCHEMA_DEPTH],
            depth: 0,
            next_leaf: 0,
            started: false,
            failed: false,
            offset: self.offset,
        }
    }
}

/// Iterator over a schema's leaves.
#[derive(Clone, Debug)]
pub struct Leaves<'a> {
    r: Reader<'a>,
    remaining_elements: u32,
    stack: [u32; MAX_SCHEMA_DEPTH],
    names: [&'a [u8]; MAX_SCHEMA_DEPTH],
    depth: usize,
    next_leaf: u32,
    started: bool,
    failed: bool,
    offset: u64,
}

impl<'a> Leaves<'a> {
    fn step(&mut self) -> Result<Option<Leaf<'a>>> {
        if !self.started {
            self.started = true;
            let root = SchemaElement::parse(&mut self.r)?;
            self.remaining_elements -= 1;
            let n = nonneg(root.num_children.unwrap_or(0), self.offset)?;
            // stack[d] = children still expected at depth d (0 = the root's children).
            if let Some(s) = self.stack.first_mut() {
                *s = n;
            }
            self.depth = 0;
        }
        loop {
            // Pop finished levels.
            while self.stack.get(self.depth).copied() == Some(0) {
                if self.depth == 0 {
                    if self.remaining_elements != 0 {
                        return Err(Error::new(ErrorKind::Mismatch, self.r.position()));
                    }
                    return Ok(None);
                }
                self.depth -= 1;
            }
            if self.remaining_elements == 0 {
                return Err(Error::new(ErrorKind::Mismatch, self.r.position()));
            }
            let at = self.r.position();
            let e = SchemaElement::parse(&mut self.r)?;
            self.remaining_elements -= 1;
            if let Some(s) = self.stack.get_mut(self.depth) {
                *s -= 1;
            }
            if let Some(slot) = self.names.get_mut(self.depth) {
                *slot = e.name;
            }
            if e.is_leaf() {
                let index = self.next_leaf;
                self.next_leaf += 1;
                return Ok(Some(Leaf {
                    index,
                    element: e,
                    path: self.names,
                    depth: self.depth + 1,
                }));
            }
            let n = nonneg(e.num_children.unwrap_or(0), at)?;
            self.depth += 1;
            match self.stack.get_mut(self.depth) {
                Some(s) => *s = n,
                None => return Err(Error::new(ErrorKind::DepthLimit, at)),
            }
        }
    }
}

fn nonneg(v: i32, at: u64) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidLength, at))
}

impl<'a> Iterator for Leaves<'a> {
    type Item = Result<Leaf<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.step() {
            Ok(v) => v.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// The FILE_METADATA module.
#[derive(Clone, Copy, Debug)]
pub struct FileMetadata<'a> {
    /// `created_by`, if present.
    pub created_by: Option<&'a [u8]>,
    /// `FileMetaData.version` of the standard footer, if recorded.
    pub version: Option<i32>,
    key_values: Option<(Reader<'a>, u32)>,
    key_values_raw: Option<&'a [u8]>,
}

impl<'a> FileMetadata<'a> {
    /// Parses the module struct (`bytes` exactly).
    pub fn parse(bytes: &'a [u8], origin: u64, max_depth: u32) -> Result<Self> {
        let mut r = Reader::new(bytes, origin).with_max_depth(max_depth);
        let mut st = r.enter_struct()?;
        let mut out = FileMetadata {
            created_by: None,
            version: None,
            key_values: None,
            key_values_raw: None,
        };
        while let Some(f) = r.next_field(&mut st)? {
            match f.id {
                1 => out.created_by = Some(r.field_binary(f)?),
                2 => {
                    let before = r;
                    let h = r.field_list(f, FieldType::Struct)?;
                    let start = r;
                    for _ in 0..h.len {
                        parse_key_value(&mut r)?;
                    }
                    out.key_values = Some((start, h.len));
                    out.key_values_raw = before.rest().get(..r.index() - before.index());
                }
                3 => out.version = Some(r.field_i32(f)?),
                _ => r.skip_field(f)?,
            }
        }
        r.expect_end()?;
        Ok(out)
    }

    /// The raw Compact-Thrift `list<parquet.KeyValue>` value (list header included), if
    /// present.
    pub fn key_values_raw(&self) -> Option<&'a [u8]> {
        self.key_values_raw
    }

    /// The number of key/value entries.
    pub fn num_key_values(&self) -> usize {
        self.key_values.map_or(0, |(_, n)| n as usize)
    }

    /// Iterates `(key, value)` pairs.
    pub fn key_values(&self) -> impl Iterator<Item = Result<(&'a [u8], Option<&'a [u8]>)>> + 'a {
        let (mut r, n) = self.key_values.unwrap_or((Reader::new(&[], 0), 0));
        (0..n).map(move |_| parse_key_value(&mut r))
    }
}

/// Parses one `parquet.KeyValue`.
pub(crate) fn parse_key_value<'a>(r: &mut Reader<'a>) -> Result<(&'a [u8], Option<&'a [u8]>)> {
    let mut st = r.enter_struct()?;
    let (mut k, mut v) = (None, None);
    while let Some(f) = r.next_field(&mut st)? {
        match f.id {
            1 => k = Some(r.field_binary(f)?),
            2 => v = Some(r.field_binary(f)?),
            _ => r.skip_field(f)?,
        }
    }
    Ok((required(k, &st)?, v))
}
