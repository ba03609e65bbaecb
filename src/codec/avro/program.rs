//! A projection flattened into a straight-line list of steps, so the common datum — records
//! of primitives, `["null", T]` unions, nested records the projection descends into — is
//! read by one loop instead of a recursive walk over the type graph. Whatever the flat form
//! cannot express (unions on the way to a projected field, arrays and maps, records taken
//! whole) is one step that hands its value to the recursive walker, so the two agree on
//! every datum, error and offset (the `avro` fuzz harness checks that they do).

use super::datum::{length, long, Value};
use super::schema::{Projection, Schema, Type, DESCEND, MAX_DEPTH, MAX_LINKS, SKIP};
use crate::cursor::Cursor;
use crate::error::{Error, ErrorKind, Result};

/// Deepest record nesting a program flattens (deeper projections keep the recursive walk).
const MAX_PROGRAM_DEPTH: u8 = 8;

/// What a step reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Prim {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    Str,
    /// Anything else: the recursive walker reads (or skips) the step's node.
    Walk,
}

/// One field of a flattened record.
#[derive(Clone, Copy, Debug)]
pub(super) struct Step {
    prim: Prim,
    /// Output slot + 1 (0: step over the value).
    slot: u8,
    /// 0: not a union; 1: `["null", T]`; 2: `[T, "null"]`.
    nullable: u8,
    /// Walk depth of the value (as the recursive walker counts it).
    depth: u8,
    /// The value's node (the union's node when `nullable` is set, for [`Prim::Walk`]).
    node: u16,
}

const EMPTY_STEP: Step = Step {
    prim: Prim::Null,
    slot: 0,
    nullable: 0,
    depth: 0,
    node: 0,
};

/// The flattened projection (see the module docs). `len == 0` with `ok == false`: not
/// compiled, the recursive walker reads every datum.
#[derive(Clone)]
pub(super) struct Program {
    steps: [Step; MAX_LINKS],
    len: u16,
    ok: bool,
    /// The top-level type is a union: its node and the branch holding the flattened record.
    root_union: Option<(u16, u16)>,
}

impl Program {
    pub(super) const NONE: Program = Program {
        steps: [EMPTY_STEP; MAX_LINKS],
        len: 0,
        ok: false,
        root_union: None,
    };

    /// Whether datums are read by the program.
    pub(super) fn is_compiled(&self) -> bool {
        self.ok
    }

    /// Flattens `marks` over `schema`; [`Program::NONE`] when the projection needs the
    /// recursive walker.
    pub(super) fn compile(schema: &Schema<'_>, marks: &[u8; MAX_LINKS]) -> Program {
        let mut p = Program::NONE;
        let root = schema.root;
        let n = schema.node(root);
        let (record, depth) = match n.ty {
            Type::Record => (root, 0u8),
            Type::Union => {
                // The walker enters the branch holding a record only when the projection
                // marks one of its fields; otherwise every branch is stepped over.
                let Some(rec) = schema.record_of(root) else {
                    return p;
                };
                p.root_union = Some((root, rec));
                (rec, 1u8)
            }
            _ => return p,
        };
        if p.flatten(schema, marks, record, depth) {
            p.ok = true;
            p
        } else {
            Program::NONE
        }
    }

    /// Appends the steps of `record` (walked at `depth`); `false` when it cannot be flat.
    fn flatten(
        &mut self,
        schema: &Schema<'_>,
        marks: &[u8; MAX_LINKS],
        record: u16,
        depth: u8,
    ) -> bool {
        if depth > MAX_PROGRAM_DEPTH || usize::from(depth) >= MAX_DEPTH {
            return false;
        }
        let n = schema.node(record);
        let first = usize::from(n.a);
        for i in first..first + usize::from(n.b) {
            let link = schema.link(i);
            let mark = marks.get(i).copied().unwrap_or(SKIP);
            if mark == DESCEND {
                // Only plain records are inlined; a union on the way keeps the walker.
                if schema.node(link.node).ty != Type::Record
                    || !self.flatten(schema, marks, link.node, depth + 1)
                {
                    return false;
                }
                continue;
            }
            let slot = if mark == SKIP { 0 } else { mark };
            let step = Self::step(schema, link.node, slot, depth + 1);
            let Some(s) = self.steps.get_mut(usize::from(self.len)) else {
                return false;
            };
            *s = step;
            self.len += 1;
        }
        true
    }

    fn prim(ty: Type) -> Prim {
        match ty {
            Type::Null => Prim::Null,
            Type::Boolean => Prim::Boolean,
            Type::Int => Prim::Int,
            Type::Long => Prim::Long,
            Type::Float => Prim::Float,
            Type::Double => Prim::Double,
            Type::Bytes => Prim::Bytes,
            Type::String => Prim::Str,
            _ => Prim::Walk,
        }
    }

    fn step(schema: &Schema<'_>, node: u16, slot: u8, depth: u8) -> Step {
        let n = schema.node(node);
        let walk = Step {
            prim: Prim::Walk,
            slot,
            nullable: 0,
            depth,
            node,
        };
        match n.ty {
            Type::Union if n.b == 2 => {
                let a = schema.node(schema.link(usize::from(n.a)).node).ty;
                let b = schema.node(schema.link(usize::from(n.a) + 1).node).ty;
                let (nullable, other) = match (a, b) {
                    (Type::Null, t) => (1, t),
                    (t, Type::Null) => (2, t),
                    _ => return walk,
                };
                match Self::prim(other) {
                    Prim::Walk | Prim::Null => walk,
                    prim => Step {
                        prim,
                        slot,
                        nullable,
                        depth,
                        node,
                    },
                }
            }
            ty => match Self::prim(ty) {
                Prim::Walk => walk,
                prim => Step {
                    prim,
                    slot,
                    nullable: 0,
                    depth,
                    node,
                },
            },
        }
    }
}

impl<'s> Schema<'s> {
    /// [`Schema::read`] through the projection's program (compiled by the caller's check).
    #[inline]
    pub(super) fn run<'a>(
        &self,
        p: &Projection,
        c: &mut Cursor<'a>,
        out: &mut [Value<'a>],
        empty: &mut u64,
    ) -> Result<()> {
        let prog = &p.program;
        if let Some((union, record)) = prog.root_union {
            let n = self.node(union);
            let at = c.position();
            let i = long(c)?;
            if i < 0 || i >= i64::from(n.b) {
                return Err(Error::new(ErrorKind::InvalidValue, at));
            }
            let branch = self
                .link(usize::from(n.a) + usize::try_from(i).unwrap_or(0))
                .node;
            if branch != record {
                // Another branch: walked as the recursive walker walks it.
                return self.descend(p, branch, c, out, 1, empty);
            }
        }
        let steps = prog.steps.get(..usize::from(prog.len)).unwrap_or_default();
        for s in steps {
            let v = match s.nullable {
                0 => self.prim_value(s, c, empty)?,
                null_first => {
                    let at = c.position();
                    let i = long(c)?;
                    match (i, null_first) {
                        (0, 1) | (1, 2) => Value::Null,
                        (1, 1) | (0, 2) => self.prim_value(s, c, empty)?,
                        _ => return Err(Error::new(ErrorKind::InvalidValue, at)),
                    }
                }
            };
            if s.slot != 0 {
                if let Some(o) = out.get_mut(usize::from(s.slot - 1)) {
                    *o = v;
                }
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn prim_value<'a>(&self, s: &Step, c: &mut Cursor<'a>, empty: &mut u64) -> Result<Value<'a>> {
        Ok(match s.prim {
            Prim::Null => Value::Null,
            // Stepped over, as the walker does: an `int` is not range-checked, a `boolean`
            // byte not read.
            Prim::Int | Prim::Long if s.slot == 0 => {
                long(c)?;
                Value::Absent
            }
            Prim::Boolean if s.slot == 0 => {
                c.skip(1)?;
                Value::Absent
            }
            Prim::Long => Value::Long(long(c)?),
            Prim::Int => {
                let at = c.position();
                let v = long(c)?;
                if i32::try_from(v).is_err() {
                    return Err(Error::new(ErrorKind::OutOfBounds, at));
                }
                Value::Long(v)
            }
            Prim::Bytes => {
                let len = length(c)?;
                Value::Bytes(c.bytes_u64(len)?)
            }
            Prim::Str => {
                let len = length(c)?;
                Value::Str(c.bytes_u64(len)?)
            }
            Prim::Boolean => {
                let at = c.position();
                match c.u8()? {
                    0 => Value::Boolean(false),
                    1 => Value::Boolean(true),
                    _ => return Err(Error::new(ErrorKind::InvalidValue, at)),
                }
            }
            Prim::Float => Value::Float(f32::from_le_bytes(*c.array::<4>()?)),
            Prim::Double => Value::Double(f64::from_le_bytes(*c.array::<8>()?)),
            Prim::Walk => {
                let depth = usize::from(s.depth);
                if s.slot == 0 {
                    self.skip(s.node, c, depth, empty)?;
                    Value::Absent
                } else {
                    self.value(s.node, c, depth, empty)?
                }
            }
        })
    }
}
