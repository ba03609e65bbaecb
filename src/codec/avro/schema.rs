//! An Avro writer schema compiled once into a flat decode program (`no_std`, no allocation),
//! and projections that name the fields a caller wants by path.

use super::json::Span;
use super::program::Program;
use crate::error::{Error, ErrorKind, Result};

/// Most types (nodes) a schema may have.
pub const MAX_NODES: usize = 384;
/// Most record fields and union branches, together, a schema may have.
pub const MAX_LINKS: usize = 512;
/// Most named types (records, enums, fixed) a schema may define.
pub const MAX_NAMED: usize = 96;
/// Deepest type nesting of a schema, and of a datum walk.
pub const MAX_DEPTH: usize = 32;

/// The kind of an Avro type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// `null`: no bytes.
    Null,
    /// `boolean`: one byte.
    Boolean,
    /// `int`: a ZigZag varint.
    Int,
    /// `long`: a ZigZag varint.
    Long,
    /// `float`: 4 bytes little-endian.
    Float,
    /// `double`: 8 bytes little-endian.
    Double,
    /// `bytes`: a length, then the bytes.
    Bytes,
    /// `string`: a length, then UTF-8.
    String,
    /// `fixed`: a set number of bytes.
    Fixed,
    /// `enum`: a symbol index.
    Enum,
    /// `array`: blocks of items.
    Array,
    /// `map`: blocks of string keys and values.
    Map,
    /// A union: a branch index, then the branch.
    Union,
    /// `record`: its fields in order.
    Record,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    pub ty: Type,
    /// Record/union: first link; array: item node; map: value node.
    pub a: u16,
    /// Record/union: link count.
    pub b: u16,
    /// Fixed: size; enum: symbol count.
    pub size: u32,
    /// Whether every value of this type takes at least one byte.
    pub nonzero: bool,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Link<'s> {
    /// Field name (empty for union branches).
    pub name: &'s [u8],
    pub node: u16,
}

const EMPTY_NODE: Node = Node {
    ty: Type::Null,
    a: 0,
    b: 0,
    size: 0,
    nonzero: false,
};

/// A writer schema compiled from its JSON: a flat table of types, record fields and union
/// branches borrowing their names from the JSON text. Parsed once per file; reads datums in
/// place through a [`Projection`].
///
/// ```
/// use lakecore::codec::avro::{Schema, Type};
/// let json = br#"{"type": "record", "name": "e", "fields": [
///     {"name": "id", "type": "long"},
///     {"name": "tag", "type": ["null", "string"]}]}"#;
/// let schema = Schema::parse(json, 0)?;
/// assert_eq!(schema.root_type(), Type::Record);
/// assert_eq!(schema.field_names().collect::<Vec<_>>(), [&b"id"[..], b"tag"]);
/// # Ok::<(), lakecore::Error>(())
/// ```
#[derive(Clone)]
pub struct Schema<'s> {
    pub(super) nodes: [Node; MAX_NODES],
    pub(super) node_count: u16,
    pub(super) links: [Link<'s>; MAX_LINKS],
    pub(super) link_count: u16,
    /// Named types: namespace, short name, node.
    named: [(&'s [u8], &'s [u8], u16); MAX_NAMED],
    named_count: u16,
    pub(super) root: u16,
}

impl core::fmt::Debug for Schema<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Schema")
            .field("nodes", &self.node_count)
            .field("links", &self.link_count)
            .field("root", &self.root_type())
            .finish()
    }
}

/// `(namespace, short name)` of the type name `name`: a dotted name is a full name;
/// otherwise the namespace is `ns` (the `namespace` attribute, or the enclosing one).
fn split_name<'n>(name: &'n [u8], ns: &'n [u8]) -> (&'n [u8], &'n [u8]) {
    match name.iter().rposition(|&c| c == b'.') {
        Some(i) => (
            name.get(..i).unwrap_or_default(),
            name.get(i + 1..).unwrap_or_default(),
        ),
        None => (ns, name),
    }
}

impl<'s> Schema<'s> {
    /// Compiles the schema JSON `json`, which starts at absolute offset `origin` (errors
    /// name the byte of the offending JSON value): [`ErrorKind::InvalidValue`] for JSON or
    /// a type this reader does not know, [`ErrorKind::LimitExceeded`] past [`MAX_NODES`],
    /// [`MAX_LINKS`] or [`MAX_NAMED`], [`ErrorKind::DepthLimit`] past [`MAX_DEPTH`].
    pub fn parse(json: &'s [u8], origin: u64) -> Result<Self> {
        let mut s = Schema {
            nodes: [EMPTY_NODE; MAX_NODES],
            node_count: 0,
            links: [Link { name: &[], node: 0 }; MAX_LINKS],
            link_count: 0,
            named: [(&[][..], &[][..], 0); MAX_NAMED],
            named_count: 0,
            root: 0,
        };
        let span = Span::parse(json, origin)?;
        s.root = s.ty(span, 0, &[])?;
        Ok(s)
    }

    /// The kind of the top-level type.
    pub fn root_type(&self) -> Type {
        self.node(self.root).ty
    }

    /// The field names of the top-level record (of the record branch of a top-level
    /// union), in writer order.
    pub fn field_names(&self) -> impl Iterator<Item = &'s [u8]> + '_ {
        let rec = self.record_of(self.root);
        self.fields(rec).map(|l| l.name)
    }

    pub(super) fn node(&self, i: u16) -> Node {
        self.nodes
            .get(usize::from(i))
            .copied()
            .unwrap_or(EMPTY_NODE)
    }

    pub(super) fn link(&self, i: usize) -> Link<'s> {
        self.links
            .get(i)
            .copied()
            .unwrap_or(Link { name: &[], node: 0 })
    }

    /// The links of a record or union node.
    pub(super) fn fields(&self, node: Option<u16>) -> impl Iterator<Item = Link<'s>> + '_ {
        let (a, b) = match node.map(|n| self.node(n)) {
            Some(n) if matches!(n.ty, Type::Record | Type::Union) => {
                (usize::from(n.a), usize::from(n.b))
            }
            _ => (0, 0),
        };
        (a..a + b).map(|i| self.link(i))
    }

    /// `node` if it is a record, else the first record branch of a union.
    pub(super) fn record_of(&self, node: u16) -> Option<u16> {
        let n = self.node(node);
        match n.ty {
            Type::Record => Some(node),
            Type::Union => self
                .fields(Some(node))
                .map(|l| l.node)
                .find(|&b| self.node(b).ty == Type::Record),
            _ => None,
        }
    }

    fn push_node(&mut self, node: Node, at: u64) -> Result<u16> {
        let i = self.node_count;
        let slot = self
            .nodes
            .get_mut(usize::from(i))
            .ok_or(Error::new(ErrorKind::LimitExceeded, at))?;
        *slot = node;
        self.node_count += 1;
        Ok(i)
    }

    fn reserve_links(&mut self, n: usize, at: u64) -> Result<u16> {
        let first = usize::from(self.link_count);
        if first + n > MAX_LINKS {
            return Err(Error::new(ErrorKind::LimitExceeded, at));
        }
        self.link_count = u16::try_from(first + n).unwrap_or(u16::MAX);
        Ok(u16::try_from(first).unwrap_or(u16::MAX))
    }

    fn set_link(&mut self, i: usize, link: Link<'s>) {
        if let Some(slot) = self.links.get_mut(i) {
            *slot = link;
        }
    }

    fn define(&mut self, (ns, name): (&'s [u8], &'s [u8]), node: u16, at: u64) -> Result<()> {
        let slot = self
            .named
            .get_mut(usize::from(self.named_count))
            .ok_or(Error::new(ErrorKind::LimitExceeded, at))?;
        *slot = (ns, name, node);
        self.named_count += 1;
        Ok(())
    }

    /// The named type `name` referenced inside namespace `ns`: by full name, else (leniently)
    /// the first one with the same short name.
    fn lookup(&self, name: &[u8], ns: &[u8]) -> Option<u16> {
        let named = self
            .named
            .get(..usize::from(self.named_count))
            .unwrap_or_default();
        let (ns, short) = split_name(name, ns);
        named
            .iter()
            .find(|(n, s, _)| *n == ns && *s == short)
            .or_else(|| named.iter().find(|(_, s, _)| *s == short))
            .map(|&(_, _, i)| i)
    }

    fn primitive(name: &[u8]) -> Option<(Type, bool)> {
        Some(match name {
            b"null" => (Type::Null, false),
            b"boolean" => (Type::Boolean, true),
            b"int" => (Type::Int, true),
            b"long" => (Type::Long, true),
            b"float" => (Type::Float, true),
            b"double" => (Type::Double, true),
            b"bytes" => (Type::Bytes, true),
            b"string" => (Type::String, true),
            _ => return None,
        })
    }

    /// Compiles the type `span` (a name, an object or a union array) inside namespace `ns`.
    fn ty(&mut self, span: Span<'s>, depth: usize, ns: &'s [u8]) -> Result<u16> {
        let bad = Error::new(ErrorKind::InvalidValue, span.at);
        if depth > MAX_DEPTH {
            return Err(Error::new(ErrorKind::DepthLimit, span.at));
        }
        if let Some(name) = span.as_str() {
            if let Some((ty, nonzero)) = Self::primitive(name) {
                return self.push_node(
                    Node {
                        ty,
                        nonzero,
                        ..EMPTY_NODE
                    },
                    span.at,
                );
            }
            return self.lookup(name, ns).ok_or(bad);
        }
        if span.is_array() {
            let count = span.elements().try_fold(0usize, |n, e| e.map(|_| n + 1))?;
            if count == 0 {
                return Err(bad);
            }
            let first = self.reserve_links(count, span.at)?;
            let node = self.push_node(
                Node {
                    ty: Type::Union,
                    a: first,
                    b: u16::try_from(count).map_err(|_| bad)?,
                    nonzero: true,
                    ..EMPTY_NODE
                },
                span.at,
            )?;
            for (i, e) in span.elements().enumerate() {
                let branch = self.ty(e?, depth + 1, ns)?;
                self.set_link(
                    usize::from(first) + i,
                    Link {
                        name: &[],
                        node: branch,
                    },
                );
            }
            return Ok(node);
        }
        if !span.is_object() {
            return Err(bad);
        }
        let type_name = span.member(b"type")?.ok_or(bad)?;
        let Some(kind) = type_name.as_str() else {
            // {"type": {...}} or {"type": [...]}: the inner type, attributes ignored.
            return self.ty(type_name, depth + 1, ns);
        };
        if let Some((ty, nonzero)) = Self::primitive(kind) {
            // A primitive with attributes (logical types): the encoding is the primitive's.
            return self.push_node(
                Node {
                    ty,
                    nonzero,
                    ..EMPTY_NODE
                },
                span.at,
            );
        }
        // `(namespace, short name)` of a named type defined here.
        let full_name = |s: &Self| -> Result<(&'s [u8], &'s [u8])> {
            let _ = s;
            let name = span.member(b"name")?.and_then(|n| n.as_str()).ok_or(bad)?;
            let own = span.member(b"namespace")?.and_then(|n| n.as_str());
            Ok(split_name(name, own.unwrap_or(ns)))
        };
        match kind {
            b"record" | b"error" => {
                let name = full_name(self)?;
                let fields = span.member(b"fields")?.ok_or(bad)?;
                if !fields.is_array() {
                    return Err(bad);
                }
                let count = fields
                    .elements()
                    .try_fold(0usize, |n, e| e.map(|_| n + 1))?;
                let first = self.reserve_links(count, fields.at)?;
                let node = self.push_node(
                    Node {
                        ty: Type::Record,
                        a: first,
                        b: u16::try_from(count).map_err(|_| bad)?,
                        ..EMPTY_NODE
                    },
                    span.at,
                )?;
                self.define(name, node, span.at)?;
                let mut nonzero = false;
                for (i, f) in fields.elements().enumerate() {
                    let f = f?;
                    let fbad = Error::new(ErrorKind::InvalidValue, f.at);
                    let fname = f.member(b"name")?.and_then(|n| n.as_str()).ok_or(fbad)?;
                    let fty = f.member(b"type")?.ok_or(fbad)?;
                    let child = self.ty(fty, depth + 1, name.0)?;
                    nonzero |= self.node(child).nonzero;
                    self.set_link(
                        usize::from(first) + i,
                        Link {
                            name: fname,
                            node: child,
                        },
                    );
                }
                if let Some(n) = self.nodes.get_mut(usize::from(node)) {
                    n.nonzero = nonzero;
                }
                Ok(node)
            }
            b"enum" => {
                let name = full_name(self)?;
                let symbols = span.member(b"symbols")?.ok_or(bad)?;
                let count = symbols
                    .elements()
                    .try_fold(0usize, |n, e| e.map(|_| n + 1))?;
                let node = self.push_node(
                    Node {
                        ty: Type::Enum,
                        size: u32::try_from(count).map_err(|_| bad)?,
                        nonzero: true,
                        ..EMPTY_NODE
                    },
                    span.at,
                )?;
                self.define(name, node, span.at)?;
                Ok(node)
            }
            b"fixed" => {
                let name = full_name(self)?;
                let size = span
                    .member(b"size")?
                    .and_then(|n| n.as_u64())
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or(bad)?;
                let node = self.push_node(
                    Node {
                        ty: Type::Fixed,
                        size,
                        nonzero: size > 0,
                        ..EMPTY_NODE
                    },
                    span.at,
                )?;
                self.define(name, node, span.at)?;
                Ok(node)
            }
            b"array" | b"map" => {
                let (ty, key) = if kind == b"array" {
                    (Type::Array, &b"items"[..])
                } else {
                    (Type::Map, &b"values"[..])
                };
                let inner = span.member(key)?.ok_or(bad)?;
                let node = self.push_node(
                    Node {
                        ty,
                        nonzero: true,
                        ..EMPTY_NODE
                    },
                    span.at,
                )?;
                let child = self.ty(inner, depth + 1, ns)?;
                if let Some(n) = self.nodes.get_mut(usize::from(node)) {
                    n.a = child;
                }
                Ok(node)
            }
            other => self.lookup(other, ns).ok_or(bad),
        }
    }

    /// Resolves field `paths` (`"a"`, `"a.b"`: record fields by name, through unions that
    /// hold a record) into a projection: value `i` of [`Schema::read`]'s output is the field
    /// named by `paths[i]`, or [`Value::Absent`](super::Value::Absent) when the writer
    /// schema has no such field (schema evolution by name; a path that does not resolve
    /// completely reads nothing). At most 254 paths ([`ErrorKind::LimitExceeded`] at 0
    /// beyond). Fields are marked per record type, so [`ErrorKind::Duplicate`] at 0 refuses
    /// what one walk cannot answer: a field named twice, a path together with a path through
    /// it (`"a"` and `"a.b"`), or paths that enter one record type along two routes (a named
    /// type used by two fields, a recursive type).
    pub fn project(&self, paths: &[&str]) -> Result<Projection> {
        /// `entered` of a record type no path enters, and of the top-level record.
        const NONE: u16 = u16::MAX;
        const ROOT: u16 = u16::MAX - 1;
        let mut p = Projection {
            marks: [SKIP; MAX_LINKS],
            slots: 0,
            program: Program::NONE,
        };
        if paths.len() >= usize::from(DESCEND) {
            return Err(Error::new(ErrorKind::LimitExceeded, 0));
        }
        p.slots = paths.len();
        let dup = Error::new(ErrorKind::Duplicate, 0);
        // The field (link) through which each record node is entered.
        let mut entered = [NONE; MAX_NODES];
        let Some(root) = self.record_of(self.root) else {
            return Ok(p);
        };
        if let Some(e) = entered.get_mut(usize::from(root)) {
            *e = ROOT;
        }
        for (slot, path) in paths.iter().enumerate() {
            // Resolve every step first: (field, record it belongs to). A path that does not
            // resolve marks nothing.
            let mut steps = [(0u16, 0u16); MAX_DEPTH + 1];
            let mut n = 0;
            let mut rec = Some(root);
            for part in path.split('.') {
                let (Some(r), Some(step)) = (rec, steps.get_mut(n)) else {
                    n = 0;
                    break;
                };
                let node = self.node(r);
                let (a, b) = (usize::from(node.a), usize::from(node.b));
                let Some(i) = (a..a + b).find(|&i| self.link(i).name == part.as_bytes()) else {
                    n = 0;
                    break;
                };
                *step = (u16::try_from(i).unwrap_or(u16::MAX), r);
                n += 1;
                rec = self.record_of(self.link(i).node);
            }
            let steps = steps.get(..n).unwrap_or_default();
            let mut via = ROOT;
            for (k, &(link, r)) in steps.iter().enumerate() {
                let e = entered.get_mut(usize::from(r)).ok_or(dup)?;
                if *e == NONE {
                    *e = via;
                } else if *e != via {
                    return Err(dup);
                }
                let mark = p.marks.get_mut(usize::from(link)).ok_or(dup)?;
                if k + 1 == steps.len() {
                    if *mark != SKIP {
                        return Err(dup);
                    }
                    *mark = u8::try_from(slot + 1).map_err(|_| dup)?;
                } else {
                    if *mark != SKIP && *mark != DESCEND {
                        return Err(dup);
                    }
                    *mark = DESCEND;
                }
                via = link;
            }
        }
        p.program = Program::compile(self, &p.marks);
        Ok(p)
    }
}

pub(super) const SKIP: u8 = 0;
pub(super) const DESCEND: u8 = 255;

/// Which fields a read returns, and where: built by [`Schema::project`] for one schema.
#[derive(Clone)]
pub struct Projection {
    pub(super) marks: [u8; MAX_LINKS],
    pub(super) slots: usize,
    pub(super) program: Program,
}

impl core::fmt::Debug for Projection {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Projection")
            .field("slots", &self.slots)
            .finish()
    }
}

impl Projection {
    /// How many values a read fills.
    pub fn len(&self) -> usize {
        self.slots
    }

    /// Whether the projection names no field.
    pub fn is_empty(&self) -> bool {
        self.slots == 0
    }

    /// How many steps of the flattened program hand their value to the recursive walk
    /// (`None`: no program, the walk reads every datum). For tests and benches.
    #[doc(hidden)]
    pub fn walked_steps(&self) -> Option<usize> {
        self.program.walked_steps()
    }
}
