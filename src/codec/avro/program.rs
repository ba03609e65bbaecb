//! A projection flattened into a list of steps, so the common datum — records of
//! primitives, `["null", T]` unions, nested records the projection descends into or steps
//! over, arrays and maps of primitives, records, arrays and maps read whole — is read by one
//! loop instead of a recursive walk over the type graph (a `["null", T]` of a compound `T`
//! is a step that jumps over `T`'s steps when the value is null). Whatever the flat form
//! cannot express (unions on the way to a projected field, unions of more than null and one
//! type, arrays of compound items, nesting past `MAX_PROGRAM_DEPTH`) is one step that hands
//! its value to the recursive walker, so the two agree on every datum, error and offset (the
//! `avro` fuzz harness and `tests/scan/avro_program.rs` check that they do).

use super::datum::{length, long, null_branch, skip_blocks, Items, Simple, Value};
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
    /// An array or map of [`Simple`] items, stepped over inline (read: its encoded items).
    Items,
    /// A two-branch union of `null` and a compound type whose steps follow (`len` of them,
    /// jumped over when the value is `null`).
    Optional,
    /// A record read whole: where it starts; its fields are stepped over by the steps that
    /// follow, up to its [`Prim::End`].
    Record,
    /// The end of a [`Prim::Record`]: its encoded fields are the value.
    End,
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
    /// [`Prim::Optional`]: the steps of its non-null branch, which follow it.
    len: u16,
    /// [`Prim::Items`]: how each item is stepped over, whether the value is a map, and
    /// whether every item takes a byte (see [`skip_blocks`]).
    item: Simple,
    map: bool,
    nonzero: bool,
}

const EMPTY_STEP: Step = Step {
    prim: Prim::Null,
    slot: 0,
    nullable: 0,
    depth: 0,
    node: 0,
    len: 0,
    item: Simple {
        ty: Type::Null,
        union: 0,
    },
    map: false,
    nonzero: false,
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
    /// What is left of [`INLINE_BUDGET`] while compiling.
    budget: u16,
}

/// Most types [`Program::inline`] looks at for one program: a schema whose records nest
/// themselves many times over (each try rolled back when the steps run out) would
/// otherwise be explored at a cost far beyond its size (287 ms for a record of 160 fields
/// of `["null", itself]`, against 0.25 ms within the budget). Past it, values go to the
/// walker.
const INLINE_BUDGET: u16 = 4 * MAX_LINKS as u16;

impl Program {
    pub(super) const NONE: Program = Program {
        steps: [EMPTY_STEP; MAX_LINKS],
        len: 0,
        ok: false,
        root_union: None,
        budget: INLINE_BUDGET,
    };

    /// Whether datums are read by the program.
    pub(super) fn is_compiled(&self) -> bool {
        self.ok
    }

    /// See [`Projection::walked_steps`](super::Projection::walked_steps).
    pub(super) fn walked_steps(&self) -> Option<usize> {
        let steps = self.steps.get(..usize::from(self.len)).unwrap_or_default();
        self.ok
            .then(|| steps.iter().filter(|s| s.prim == Prim::Walk).count())
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
            if !self.inline(schema, link.node, slot, depth + 1)
                && !self.push(Self::step(schema, link.node, slot, depth + 1))
            {
                return false;
            }
        }
        true
    }

    fn push(&mut self, step: Step) -> bool {
        let Some(s) = self.steps.get_mut(usize::from(self.len)) else {
            return false;
        };
        *s = step;
        self.len += 1;
        true
    }

    /// Appends steps that read a value of `node` (walked at `depth`) into `slot`, or step
    /// over it (`slot` 0), without the recursive walker: a primitive or `["null", T]` of
    /// one, a record (its fields stepped over one by one), an array or map of [`Simple`]
    /// items, and
    /// `["null", T]` of any of these (read into a slot: of an array, a map or a record).
    /// `false`,
    /// with nothing appended, for anything else: the caller appends a [`Prim::Walk`] step.
    fn inline(&mut self, schema: &Schema<'_>, node: u16, slot: u8, depth: u8) -> bool {
        if depth > MAX_PROGRAM_DEPTH || self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        let start = self.len;
        let n = schema.node(node);
        let done = match n.ty {
            Type::Record => {
                // Read whole: its start, its fields stepped over, its end with the slot.
                let head = |prim| Step {
                    prim,
                    depth,
                    node,
                    ..EMPTY_STEP
                };
                let first = usize::from(n.a);
                (slot == 0 || self.push(head(Prim::Record)))
                    && (first..first + usize::from(n.b)).all(|i| {
                        let field = schema.link(i).node;
                        self.inline(schema, field, 0, depth + 1)
                            || self.push(Self::step(schema, field, 0, depth + 1))
                    })
                    && (slot == 0
                        || self.push(Step {
                            slot,
                            ..head(Prim::End)
                        }))
            }
            Type::Array | Type::Map => match schema.simple(n.a) {
                Some(item) => self.push(Step {
                    prim: Prim::Items,
                    slot,
                    depth,
                    node,
                    item,
                    map: n.ty == Type::Map,
                    nonzero: n.ty == Type::Map || schema.node(n.a).nonzero,
                    ..EMPTY_STEP
                }),
                None => false,
            },
            Type::Union if n.b == 2 => {
                let Some((nullable, other)) = schema.null_union(node) else {
                    return false;
                };
                let step = Self::step(schema, node, slot, depth);
                match step.prim {
                    Prim::Walk => {
                        let at = usize::from(self.len);
                        let head = self.push(Step {
                            prim: Prim::Optional,
                            slot,
                            nullable,
                            depth,
                            node,
                            ..EMPTY_STEP
                        });
                        let body = head && self.inline(schema, other, slot, depth + 1);
                        // The steps after the head (none if the head did not fit).
                        let len = self.len.saturating_sub(start + 1);
                        // Read into a slot, the non-null branch must be one value that
                        // writes it (an array or map, or a record read whole).
                        let one = slot == 0
                            || self
                                .steps
                                .get(at + 1)
                                .is_some_and(|s| matches!(s.prim, Prim::Items | Prim::Record));
                        match self.steps.get_mut(at) {
                            Some(h) if body && one => {
                                h.len = len;
                                true
                            }
                            _ => false,
                        }
                    }
                    _ => self.push(step),
                }
            }
            _ => {
                let step = Self::step(schema, node, slot, depth);
                step.prim != Prim::Walk && self.push(step)
            }
        };
        if !done {
            self.len = start;
        }
        done
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
            ..EMPTY_STEP
        };
        match n.ty {
            Type::Union if n.b == 2 => {
                let Some((nullable, other)) = schema.null_union(node) else {
                    return walk;
                };
                match Self::prim(schema.node(other).ty) {
                    Prim::Walk | Prim::Null => walk,
                    prim => Step {
                        prim,
                        slot,
                        nullable,
                        depth,
                        node,
                        ..EMPTY_STEP
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
                    ..EMPTY_STEP
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
        let mut next = 0usize;
        // Where the record being read whole started (records read whole do not nest).
        let mut open = (*c, c.position());
        while let Some(s) = steps.get(next) {
            next += 1;
            let v = match s.nullable {
                0 => match s.prim {
                    Prim::Record => {
                        open = (*c, c.position());
                        continue;
                    }
                    Prim::End => {
                        let (start, origin) = open;
                        let used = usize::try_from(c.position() - origin).unwrap_or(0);
                        Value::Record(start.rest().get(..used).unwrap_or_default())
                    }
                    _ => self.prim_value(s, c, empty)?,
                },
                null_first => match (null_branch(c, null_first)?, s.prim) {
                    (true, Prim::Optional) => {
                        next += usize::from(s.len);
                        Value::Null
                    }
                    (true, _) => Value::Null,
                    // The non-null branch of an `Optional`: its steps follow.
                    (false, Prim::Optional) => continue,
                    (false, _) => self.prim_value(s, c, empty)?,
                },
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
            Prim::Items => {
                let (start, origin) = (*c, c.position());
                let item = s.item;
                skip_blocks(c, s.map, s.nonzero, empty, |c, _| item.skip(c))?;
                match s.slot {
                    0 => Value::Absent,
                    _ => {
                        let used = usize::try_from(c.position() - origin).unwrap_or(0);
                        Value::Items(Items {
                            bytes: start.rest().get(..used).unwrap_or_default(),
                            origin,
                            node: self.node(s.node).a,
                            map: s.map,
                        })
                    }
                }
            }
            // Handled by the run loop; never reached.
            Prim::Optional | Prim::Record | Prim::End => Value::Absent,
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
