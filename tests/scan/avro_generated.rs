//! Generated-data oracle for lakecore's Avro decoder: schemas covering every Avro type (fixed
//! ones and random ones from the testkit RNG), random values written by `apache-avro` into
//! containers with the codecs null, deflate, snappy and zstandard, then decoded by lakecore
//! (`Container`, `Schema`, `Decompressor`) and compared with `apache-avro`'s decoded values
//! field by field: full projections, nested paths, random subsets, fields the writer never
//! wrote (`Value::Absent`), nested records re-read with their own schema, and datum lengths
//! (`read` and `skip_datum` step exactly over what `apache-avro` encoded).
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use apache_avro::types::Value as AV;
use apache_avro::{Codec, Decimal, DeflateSettings, Duration, Uuid, Writer, ZstandardSettings};
use lakecore::codec::avro::{Container, Schema, Type, Value};
use lakecore::cursor::Cursor;
use lakecore::paimon::compression::{Codec as LCodec, Decompressor};
use lakecore::ErrorKind;
use lakecore_testkit::rng::Rng;
use std::collections::{BTreeMap, HashMap, HashSet};

// ------------------------------------------------------------------ the schema model

/// A named type's name: namespace, short name, and how its definition spells them.
#[derive(Clone, Debug)]
struct Name {
    ns: String,
    short: String,
    /// 0: `"name": "ns.short"`; 1: `"name"` and `"namespace"`; 2: the short name alone
    /// (inheriting the enclosing namespace; spelt as 1 where that differs).
    style: u8,
}

impl Name {
    fn full(&self) -> String {
        format!("{}.{}", self.ns, self.short)
    }
}

/// An Avro type, as the tests write it.
/// Every logical type the generator writes, with the base type it annotates.
const LOGICAL: [(&str, T); 11] = [
    ("date", T::Int),
    ("time-millis", T::Int),
    ("time-micros", T::Long),
    ("timestamp-millis", T::Long),
    ("timestamp-micros", T::Long),
    ("timestamp-nanos", T::Long),
    ("local-timestamp-millis", T::Long),
    ("local-timestamp-micros", T::Long),
    ("local-timestamp-nanos", T::Long),
    ("uuid", T::Str),
    ("decimal", T::Bytes),
];

#[derive(Clone, Debug)]
enum T {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    Str,
    /// A primitive written as an object, `{"type": "long"}`.
    Obj(Box<T>),
    /// A primitive with a logical type (`date`, `timestamp-millis`, `uuid`, `decimal`, ...).
    Logical(&'static str, Box<T>),
    /// `fixed`, plain or with logical type `decimal` or `duration`.
    Fixed(Name, usize, Option<&'static str>),
    Enum(Name, Vec<String>),
    Array(Box<T>),
    Map(Box<T>),
    Union(Vec<T>),
    Record(Name, Vec<(String, T)>),
    /// A reference by full name to a record being defined around it (recursion).
    Ref(String),
}

impl T {
    fn name(&self) -> Option<&Name> {
        match self {
            T::Fixed(n, ..) | T::Enum(n, _) | T::Record(n, _) => Some(n),
            _ => None,
        }
    }
}

/// Named types by full name (first definition).
type Defs = HashMap<String, T>;

fn collect_defs(t: &T, defs: &mut Defs) {
    if let Some(n) = t.name() {
        if defs.contains_key(&n.full()) {
            return;
        }
        defs.insert(n.full(), t.clone());
    }
    match t {
        T::Obj(i) | T::Logical(_, i) | T::Array(i) | T::Map(i) => collect_defs(i, defs),
        T::Union(bs) => bs.iter().for_each(|b| collect_defs(b, defs)),
        T::Record(_, fs) => fs.iter().for_each(|(_, f)| collect_defs(f, defs)),
        _ => {}
    }
}

fn resolve<'t>(t: &'t T, defs: &'t Defs) -> &'t T {
    match t {
        T::Ref(n) => defs
            .get(n)
            .unwrap_or_else(|| panic!("no definition of {n}")),
        t => t,
    }
}

/// Schema JSON: a named type is defined where it first appears (in this text), named after.
struct Emit<'d> {
    defs: &'d Defs,
    seen: HashSet<String>,
    out: String,
}

fn json(t: &T, defs: &Defs) -> String {
    let mut e = Emit {
        defs,
        seen: HashSet::new(),
        out: String::new(),
    };
    e.ty(t, "");
    e.out
}

impl Emit<'_> {
    fn name_ref(&mut self, n: &Name, enclosing: &str) {
        if n.ns == enclosing && n.style != 0 {
            self.out += &format!("\"{}\"", n.short);
        } else {
            self.out += &format!("\"{}\"", n.full());
        }
    }

    fn name_def(&mut self, n: &Name, enclosing: &str) {
        match n.style {
            0 => self.out += &format!("\"name\": \"{}\"", n.full()),
            2 if n.ns == enclosing => self.out += &format!("\"name\": \"{}\"", n.short),
            _ => self.out += &format!("\"name\": \"{}\", \"namespace\": \"{}\"", n.short, n.ns),
        }
    }

    fn ty(&mut self, t: &T, enclosing: &str) {
        let prim = |t: &T| match t {
            T::Null => "null",
            T::Boolean => "boolean",
            T::Int => "int",
            T::Long => "long",
            T::Float => "float",
            T::Double => "double",
            T::Bytes => "bytes",
            T::Str => "string",
            other => panic!("not a primitive: {other:?}"),
        };
        if let Some(n) = t.name() {
            if !self.seen.insert(n.full()) {
                return self.name_ref(n, enclosing);
            }
        }
        match t {
            T::Null | T::Boolean | T::Int | T::Long | T::Float | T::Double | T::Bytes | T::Str => {
                self.out += &format!("\"{}\"", prim(t));
            }
            T::Obj(p) => self.out += &format!("{{\"type\": \"{}\"}}", prim(p)),
            T::Logical("decimal", p) => {
                self.out += &format!(
                    "{{\"type\": \"{}\", \"logicalType\": \"decimal\", \"precision\": 30, \"scale\": 2}}",
                    prim(p)
                );
            }
            T::Logical(l, p) => {
                self.out += &format!("{{\"type\": \"{}\", \"logicalType\": \"{l}\"}}", prim(p));
            }
            T::Fixed(n, size, logical) => {
                self.out += "{\"type\": \"fixed\", ";
                self.name_def(n, enclosing);
                self.out += &format!(", \"size\": {size}");
                match logical {
                    Some("decimal") => {
                        self.out += ", \"logicalType\": \"decimal\", \"precision\": 4, \"scale\": 1"
                    }
                    Some(l) => self.out += &format!(", \"logicalType\": \"{l}\""),
                    None => {}
                }
                self.out += "}";
            }
            T::Enum(n, symbols) => {
                self.out += "{\"type\": \"enum\", ";
                self.name_def(n, enclosing);
                let s: Vec<String> = symbols.iter().map(|s| format!("\"{s}\"")).collect();
                self.out += &format!(", \"symbols\": [{}]}}", s.join(", "));
            }
            T::Array(i) => {
                self.out += "{\"type\": \"array\", \"items\": ";
                self.ty(i, enclosing);
                self.out += "}";
            }
            T::Map(v) => {
                self.out += "{\"type\": \"map\", \"values\": ";
                self.ty(v, enclosing);
                self.out += "}";
            }
            T::Union(bs) => {
                self.out += "[";
                for (i, b) in bs.iter().enumerate() {
                    if i > 0 {
                        self.out += ", ";
                    }
                    self.ty(b, enclosing);
                }
                self.out += "]";
            }
            T::Record(n, fields) => {
                self.out += "{\"type\": \"record\", ";
                self.name_def(n, enclosing);
                self.out += ", \"doc\": \"a [record] {with} \\\"text\\\"\", \"fields\": [";
                for (i, (fname, ft)) in fields.iter().enumerate() {
                    if i > 0 {
                        self.out += ", ";
                    }
                    self.out += &format!("{{\"name\": \"{fname}\", \"type\": ");
                    self.ty(ft, &n.ns);
                    self.out += "}";
                }
                self.out += "]}";
            }
            T::Ref(full) => {
                let def = self.defs.get(full).unwrap().clone();
                self.ty(&def, enclosing);
            }
        }
    }
}

// ------------------------------------------------------------------ random schemas

struct Gen<'r> {
    rng: &'r mut Rng,
    next: usize,
    /// Completed named types (reusable by reference).
    named: Vec<T>,
    /// Full names of the records being defined (recursion targets).
    open: Vec<String>,
}

const NAMESPACES: [&str; 3] = ["a", "a.b", "org.apache.paimon"];

impl Gen<'_> {
    fn name(&mut self, prefix: &str) -> Name {
        self.next += 1;
        Name {
            ns: NAMESPACES[self.rng.below(3) as usize].to_string(),
            short: format!("{prefix}{}", self.next),
            style: self.rng.below(3) as u8,
        }
    }

    fn primitive(&mut self) -> T {
        match self.rng.below(14) {
            0 => T::Null,
            1 => T::Boolean,
            2 => T::Int,
            3 | 4 => T::Long,
            5 => T::Float,
            6 => T::Double,
            7 => T::Bytes,
            8 | 9 => T::Str,
            10 => T::Obj(Box::new(T::Long)),
            11 => T::Obj(Box::new(T::Str)),
            _ => self.logical(),
        }
    }

    fn logical(&mut self) -> T {
        let (l, base) = LOGICAL[self.rng.below(LOGICAL.len() as u64) as usize].clone();
        T::Logical(l, Box::new(base))
    }

    /// A type of at most `depth` more levels; `in_union` forbids unions.
    fn ty(&mut self, depth: usize, in_union: bool) -> T {
        let pick = if depth == 0 {
            self.rng.below(4)
        } else {
            self.rng.below(16)
        };
        match pick {
            0..=2 => self.primitive(),
            3 => match (self.named.is_empty(), self.rng.below(3)) {
                (false, 0) => {
                    let i = self.rng.below(self.named.len() as u64) as usize;
                    self.named[i].clone()
                }
                (_, 1) => self.enumeration(),
                _ => self.fixed(),
            },
            4 | 5 => T::Array(Box::new(self.ty(depth - 1, false))),
            6 => T::Map(Box::new(self.ty(depth - 1, false))),
            7..=9 if !in_union => self.union(depth),
            10 | 11 => self.record(depth - 1),
            12 if !self.open.is_empty() => {
                let target =
                    T::Ref(self.open[self.rng.below(self.open.len() as u64) as usize].clone());
                if in_union || self.rng.one_in(2) {
                    T::Array(Box::new(target))
                } else {
                    T::Union(vec![T::Null, target])
                }
            }
            _ => self.primitive(),
        }
    }

    fn enumeration(&mut self) -> T {
        let name = self.name("E");
        let n = 1 + self.rng.below(5) as usize;
        let t = T::Enum(name, (0..n).map(|i| format!("S{i}")).collect());
        self.named.push(t.clone());
        t
    }

    fn fixed(&mut self) -> T {
        let name = self.name("F");
        let t = match self.rng.below(4) {
            0 => T::Fixed(name, 12, Some("duration")),
            1 => T::Fixed(name, 2, Some("decimal")),
            _ => T::Fixed(name, self.rng.below(20) as usize, None),
        };
        // apache-avro cannot resolve references to fixed types with a logical type.
        if matches!(t, T::Fixed(_, _, None)) {
            self.named.push(t.clone());
        }
        t
    }

    fn union(&mut self, depth: usize) -> T {
        let mut kinds = HashSet::new();
        let mut branches = Vec::new();
        if self.rng.percent(60) {
            kinds.insert(union_kind(&T::Null));
            branches.push(T::Null);
        }
        for _ in 0..1 + self.rng.below(3) {
            let b = self.ty(depth.saturating_sub(1), true);
            let kind = union_kind(&b);
            if kinds.insert(kind) {
                branches.push(b);
            }
        }
        if branches.len() > 1 && self.rng.one_in(4) {
            branches.swap(0, 1); // null not first
        }
        T::Union(branches)
    }

    fn record(&mut self, depth: usize) -> T {
        let name = self.name("R");
        self.open.push(name.full());
        let n = self.rng.below(6) as usize;
        let fields = (0..n)
            .map(|i| (format!("f{i}"), self.ty(depth, false)))
            .collect();
        self.open.pop();
        let t = T::Record(name, fields);
        self.named.push(t.clone());
        t
    }
}

/// What makes union branches distinct (one of each unnamed kind, named types by name).
fn union_kind(t: &T) -> String {
    match t {
        T::Obj(p) | T::Logical(_, p) => union_kind(p),
        T::Ref(n) => n.clone(),
        t => match t.name() {
            Some(n) => n.full(),
            None => format!("{:?}", std::mem::discriminant(t)),
        },
    }
}

// ------------------------------------------------------------------ random values

struct Vals<'r> {
    rng: &'r mut Rng,
    defs: &'r Defs,
}

impl Vals<'_> {
    fn int(&mut self) -> i32 {
        match self.rng.below(6) {
            0 => 0,
            1 => [i32::MIN, i32::MAX, -1, 1][self.rng.below(4) as usize],
            2 => self.rng.below(200) as i32 - 100,
            _ => self.rng.next_u64() as i32 >> self.rng.below(32),
        }
    }

    fn long(&mut self) -> i64 {
        match self.rng.below(6) {
            0 => 0,
            1 => [i64::MIN, i64::MAX, -1, 1][self.rng.below(4) as usize],
            2 => self.rng.below(200) as i64 - 100,
            _ => self.rng.next_u64() as i64 >> self.rng.below(64),
        }
    }

    fn bytes(&mut self) -> Vec<u8> {
        let n = if self.rng.one_in(10) {
            self.rng.below(300)
        } else {
            self.rng.below(12)
        };
        self.rng.bytes(n as usize)
    }

    fn string(&mut self) -> String {
        let n = if self.rng.one_in(10) {
            self.rng.below(200)
        } else {
            self.rng.below(10)
        };
        let chars = ['a', 'Z', '0', ' ', '"', '\\', 'é', '中', '🦀', '\n'];
        (0..n)
            .map(|_| chars[self.rng.below(chars.len() as u64) as usize])
            .collect()
    }

    fn value(&mut self, t: &T, depth: usize) -> AV {
        match t {
            T::Null => AV::Null,
            T::Boolean => AV::Boolean(self.rng.one_in(2)),
            T::Int => AV::Int(self.int()),
            T::Long => AV::Long(self.long()),
            T::Float => AV::Float(f32::from_bits(self.rng.next_u64() as u32)),
            T::Double => AV::Double(f64::from_bits(self.rng.next_u64())),
            T::Bytes => AV::Bytes(self.bytes()),
            T::Str => AV::String(self.string()),
            T::Obj(p) => self.value(p, depth),
            T::Logical(l, _) => match *l {
                "date" => AV::Date(self.int()),
                "time-millis" => AV::TimeMillis(self.int()),
                "time-micros" => AV::TimeMicros(self.long()),
                "timestamp-millis" => AV::TimestampMillis(self.long()),
                "timestamp-micros" => AV::TimestampMicros(self.long()),
                "timestamp-nanos" => AV::TimestampNanos(self.long()),
                "local-timestamp-millis" => AV::LocalTimestampMillis(self.long()),
                "local-timestamp-micros" => AV::LocalTimestampMicros(self.long()),
                "local-timestamp-nanos" => AV::LocalTimestampNanos(self.long()),
                "uuid" => {
                    let b: [u8; 16] = self.rng.bytes(16).try_into().unwrap();
                    AV::Uuid(Uuid::from_bytes(b))
                }
                "decimal" => {
                    let n = 1 + self.rng.below(6) as usize;
                    AV::Decimal(Decimal::from(self.rng.bytes(n)))
                }
                other => panic!("{other}"),
            },
            T::Fixed(_, size, Some("duration")) => {
                assert_eq!(*size, 12);
                let b: [u8; 12] = self.rng.bytes(12).try_into().unwrap();
                AV::Duration(Duration::from(b))
            }
            T::Fixed(_, _, Some("decimal")) => {
                // Within precision 4: -9999..=9999 as two big-endian bytes.
                let v = (self.rng.below(19999) as i16) - 9999;
                AV::Decimal(Decimal::from(v.to_be_bytes().to_vec()))
            }
            T::Fixed(_, size, _) => AV::Fixed(*size, self.rng.bytes(*size)),
            T::Enum(_, symbols) => {
                let i = self.rng.below(symbols.len() as u64) as usize;
                AV::Enum(i as u32, symbols[i].clone())
            }
            T::Array(item) => {
                let n = if depth > 4 {
                    0
                } else if depth < 2 && self.rng.one_in(8) {
                    70 // a two-byte count
                } else {
                    self.rng.below(4)
                };
                AV::Array((0..n).map(|_| self.value(item, depth + 1)).collect())
            }
            T::Map(v) => {
                let n = if depth > 4 { 0 } else { self.rng.below(4) };
                let mut m = HashMap::new();
                for i in 0..n {
                    let k = format!("k{i}{}", self.string());
                    m.insert(k, self.value(v, depth + 1));
                }
                AV::Map(m)
            }
            T::Union(bs) => {
                let i = if depth > 4 && matches!(bs[0], T::Null) {
                    0
                } else {
                    self.rng.below(bs.len() as u64) as usize
                };
                AV::Union(i as u32, Box::new(self.value(&bs[i], depth + 1)))
            }
            T::Record(_, fields) => AV::Record(
                fields
                    .iter()
                    .map(|(n, ft)| (n.clone(), self.value(ft, depth + 1)))
                    .collect(),
            ),
            T::Ref(n) => {
                let t = self.defs.get(n).unwrap().clone();
                self.value(&t, depth + 1)
            }
        }
    }
}

// ------------------------------------------------------------------ comparison

/// Asserts that lakecore's `lv` (read with `schema`) is `apache-avro`'s decoded `dec` of type
/// `t`; `wr` is the value as written (it gives the encoded order of a map's entries).
fn check(schema: &Schema<'_>, lv: Value<'_>, dec: &AV, wr: &AV, t: &T, defs: &Defs, what: &str) {
    let t = resolve(t, defs);
    match (t, dec, wr) {
        (T::Obj(p), ..) => check(schema, lv, dec, wr, p, defs, what),
        (T::Union(bs), AV::Union(i, d), AV::Union(j, w)) => {
            assert_eq!(i, j, "{what}: union branch");
            check(schema, lv, d, w, &bs[*i as usize], defs, what);
        }
        (T::Record(..), AV::Record(dfs), AV::Record(wfs)) => {
            let Value::Record(bytes) = lv else {
                panic!("{what}: {lv:?} for a record")
            };
            // Re-read the record's bytes with its own schema, every field projected.
            let text = json(t, defs);
            let sub = Schema::parse(text.as_bytes(), 0)
                .unwrap_or_else(|e| panic!("{what}: {e:?} in {text}"));
            let T::Record(_, fields) = t else {
                unreachable!()
            };
            let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
            let p = sub.project(&names).unwrap();
            let mut out = vec![Value::Absent; names.len()];
            let mut c = Cursor::new(bytes);
            sub.read(&p, &mut c, &mut out).unwrap();
            assert!(c.is_empty(), "{what}: record bytes left over");
            for (k, (fname, ft)) in fields.iter().enumerate() {
                check(
                    &sub,
                    out[k],
                    &dfs[k].1,
                    &wfs[k].1,
                    ft,
                    defs,
                    &format!("{what}.{fname}"),
                );
            }
        }
        (T::Array(it), AV::Array(d), AV::Array(w)) => {
            let Value::Items(items) = lv else {
                panic!("{what}: {lv:?} for an array")
            };
            let got: Vec<Value<'_>> = schema.items(items).collect::<Result<_, _>>().unwrap();
            assert_eq!(got.len(), d.len(), "{what}: item count");
            for (i, g) in got.iter().enumerate() {
                check(schema, *g, &d[i], &w[i], it, defs, &format!("{what}[{i}]"));
            }
        }
        (T::Map(vt), AV::Map(d), AV::Map(w)) => {
            let Value::Items(items) = lv else {
                panic!("{what}: {lv:?} for a map")
            };
            let got: Vec<Value<'_>> = schema.items(items).collect::<Result<_, _>>().unwrap();
            assert_eq!(got.len(), d.len(), "{what}: entry count");
            // The writer encoded the entries in its map's iteration order.
            for (g, (k, wv)) in got.iter().zip(w.iter()) {
                check(schema, *g, &d[k], wv, vt, defs, &format!("{what}[{k:?}]"));
            }
        }
        (_, AV::Decimal(d), _) => {
            let expected: Vec<u8> = d.try_into().unwrap();
            assert_eq!(lv, Value::Bytes(&expected), "{what}");
        }
        (_, AV::Uuid(u), _) => assert_eq!(lv, Value::Str(u.to_string().as_bytes()), "{what}"),
        (_, AV::Duration(d), _) => {
            let expected: [u8; 12] = (*d).into();
            assert_eq!(lv, Value::Bytes(&expected), "{what}");
        }
        _ => crate::avro_oracle::assert_same(schema, lv, dec, &apache_schema_of_scalar(dec), what),
    }
}

/// A schema for `assert_same` on a scalar (its branch logic needs one; scalars ignore it).
fn apache_schema_of_scalar(_v: &AV) -> apache_avro::Schema {
    apache_avro::Schema::Null
}

/// The value at dotted `path` of a decoded record value, as lakecore's projection reads it:
/// through unions only by their first record branch; `None` for Absent.
fn at_path<'a>(
    mut dec: &'a AV,
    mut wr: &'a AV,
    mut t: &'a T,
    path: &str,
    defs: &'a Defs,
) -> Option<(&'a AV, &'a AV, &'a T)> {
    for part in path.split('.') {
        t = resolve(t, defs);
        if let T::Union(bs) = t {
            let first = bs
                .iter()
                .position(|b| matches!(resolve(b, defs), T::Record(..)))?;
            let (AV::Union(i, d), AV::Union(_, w)) = (dec, wr) else {
                panic!("not a union value")
            };
            if *i as usize != first {
                return None;
            }
            dec = d;
            wr = w;
            t = resolve(&bs[first], defs);
        }
        let T::Record(_, fields) = t else {
            return None;
        };
        let k = fields.iter().position(|(n, _)| n == part)?;
        let (AV::Record(d), AV::Record(w)) = (dec, wr) else {
            panic!("not a record value")
        };
        dec = &d[k].1;
        wr = &w[k].1;
        t = &fields[k].1;
    }
    Some((dec, wr, t))
}

/// The record type a path step descends into (through a union's first record branch).
fn record_of<'a>(t: &'a T, defs: &'a Defs) -> Option<&'a T> {
    match resolve(t, defs) {
        r @ T::Record(..) => Some(r),
        T::Union(bs) => bs
            .iter()
            .map(|b| resolve(b, defs))
            .find(|b| matches!(b, T::Record(..))),
        _ => None,
    }
}

/// Every path of two or more steps to a field that is not itself descended into, down to
/// `depth` steps.
fn nested_paths(t: &T, defs: &Defs, prefix: &str, depth: usize, out: &mut Vec<String>) {
    let Some(T::Record(_, fields)) = record_of(t, defs) else {
        return;
    };
    for (n, ft) in fields {
        let path = if prefix.is_empty() {
            n.clone()
        } else {
            format!("{prefix}.{n}")
        };
        if record_of(ft, defs).is_some() && depth > 1 {
            nested_paths(ft, defs, &path, depth - 1, out);
        } else if !prefix.is_empty() {
            out.push(path);
        }
    }
}

/// Whether projecting `paths` together is ambiguous, as lakecore defines it: fields are
/// marked per record type, so among the paths that resolve completely, no field may be both
/// read and descended into (or read twice), and no record type may be entered along two
/// routes (a named type used in two places, a recursive type).
fn ambiguous(t: &T, paths: &[String], defs: &Defs) -> bool {
    let root_rec = record_of(t, defs).unwrap();
    let root = root_rec.name().unwrap().full();
    let mut entered: BTreeMap<String, String> = BTreeMap::new();
    entered.insert(root.clone(), "<root>".into());
    // Field (record full name + field name) -> None: descended into; Some(k): read by path k.
    let mut claims: BTreeMap<String, Option<usize>> = BTreeMap::new();
    'paths: for (k, path) in paths.iter().enumerate() {
        let parts: Vec<&str> = path.split('.').collect();
        let mut cur = root_rec;
        let mut cur_name = root.clone();
        let mut steps = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let T::Record(_, fields) = cur else {
                unreachable!()
            };
            let Some((_, ft)) = fields.iter().find(|(n, _)| n == part) else {
                continue 'paths;
            };
            let link = format!("{cur_name}.{part}");
            if i + 1 == parts.len() {
                steps.push((link, None));
            } else {
                let Some(next) = record_of(ft, defs) else {
                    continue 'paths;
                };
                let next_name = next.name().unwrap().full();
                steps.push((link, Some(next_name.clone())));
                cur = next;
                cur_name = next_name;
            }
        }
        for (link, next) in steps {
            match next {
                None => {
                    if claims.insert(link, Some(k)).is_some() {
                        return true;
                    }
                }
                Some(next_name) => {
                    if let Some(Some(_)) = claims.insert(link.clone(), None) {
                        return true;
                    }
                    if entered.entry(next_name).or_insert(link.clone()) != &link {
                        return true;
                    }
                }
            }
        }
    }
    false
}

// ------------------------------------------------------------------ files

fn codecs() -> [Codec; 4] {
    [
        Codec::Null,
        Codec::Deflate(DeflateSettings::default()),
        Codec::Snappy,
        Codec::Zstandard(ZstandardSettings::default()),
    ]
}

/// Writes `values` of type `t` with every codec and checks lakecore's reading of each file
/// against `apache-avro`'s.
fn check_type(t: &T, values: &[AV], rng: &mut Rng, what: &str) {
    let mut defs = Defs::new();
    collect_defs(t, &mut defs);
    let text = json(t, &defs);
    // Shown only when the test fails.
    eprintln!("{what}: schema {text}");
    let aschema = apache_avro::Schema::parse_str(&text)
        .unwrap_or_else(|e| panic!("{what}: apache-avro rejects {text}: {e}"));
    let lengths: Vec<usize> = values
        .iter()
        .map(|v| {
            apache_avro::to_avro_datum(&aschema, v.clone())
                .unwrap()
                .len()
        })
        .collect();
    // The test's own schema text, compiled by lakecore (the file holds apache-avro's
    // rendering of it).
    let own = Schema::parse(text.as_bytes(), 0).unwrap_or_else(|e| panic!("{what}: {e:?} {text}"));
    let mut first: Option<Vec<Vec<u8>>> = None;
    for codec in codecs() {
        let what = format!("{what} {codec:?}");
        let mut w = Writer::with_codec(&aschema, Vec::new(), codec);
        for v in values {
            w.append(v.clone()).unwrap();
        }
        let file = w.into_inner().unwrap();
        let decoded: Vec<AV> = apache_avro::Reader::new(&file[..])
            .unwrap()
            .map(|v| v.unwrap())
            .collect();
        assert_eq!(decoded.len(), values.len());

        let container = Container::parse(&file).unwrap();
        let header_json = container.metadata("avro.schema").unwrap();
        let origin = (header_json.as_ptr() as usize - file.as_ptr() as usize) as u64;
        let from_file = Schema::parse(header_json, origin).unwrap();
        assert_eq!(from_file.root_type(), own.root_type());
        let mut dec = Decompressor::new(LCodec::from_name(container.codec(), 0).unwrap());
        // Every datum of every block, in order.
        let mut datums: Vec<Vec<u8>> = Vec::new();
        let mut blocks = 0;
        for block in container.blocks() {
            let block = block.unwrap();
            blocks += 1;
            let data = dec.block(block.data, block.data_offset).unwrap();
            let mut c = Cursor::new(data);
            for _ in 0..block.object_count {
                let start = c.index();
                from_file.skip_datum(&mut c).unwrap();
                datums.push(data[start..c.index()].to_vec());
            }
            assert!(c.is_empty(), "{what}: block bytes left over");
        }
        assert!(blocks >= 1);
        assert_eq!(datums.len(), values.len(), "{what}");
        for (i, d) in datums.iter().enumerate() {
            assert_eq!(d.len(), lengths[i], "{what} datum {i}: length");
        }
        // The values are the same in every file: compare them once, then the datums.
        match &first {
            Some(f) => assert!(*f == datums, "{what}: datums differ from the stored file's"),
            None => {
                for schema in [&from_file, &own] {
                    check_datums(schema, t, &defs, &datums, &decoded, values, rng, &what);
                }
                first = Some(datums);
            }
        }
    }
}

/// The projections of one schema over every datum.
#[allow(clippy::too_many_arguments)]
fn check_datums(
    schema: &Schema<'_>,
    t: &T,
    defs: &Defs,
    datums: &[Vec<u8>],
    decoded: &[AV],
    written: &[AV],
    rng: &mut Rng,
    what: &str,
) {
    let Some(T::Record(_, fields)) = record_of(t, defs) else {
        // Not a record: `read` with no paths steps over the datum exactly.
        let p = schema.project(&[]).unwrap();
        for d in datums {
            let mut c = Cursor::new(d);
            schema.read(&p, &mut c, &mut []).unwrap();
            assert!(c.is_empty(), "{what}");
        }
        return;
    };
    let top: Vec<String> = fields.iter().map(|(n, _)| n.clone()).collect();
    let mut nested = Vec::new();
    nested_paths(t, defs, "", 3, &mut nested);
    let mut subset: Vec<String> = top
        .iter()
        .filter(|_| rng.one_in(2))
        .cloned()
        .chain((0..3).map(|i| format!("absent{i}")))
        .collect();
    // Random order; names the writer does not have read as Absent.
    for i in (1..subset.len()).rev() {
        subset.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut with_absent = top.clone();
    with_absent.extend(["absent".into(), "f0.absent".into(), "absent.f0".into()]);
    for paths in [&top, &nested, &subset, &with_absent] {
        let strs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let p = match schema.project(&strs) {
            Ok(p) => {
                assert!(
                    !ambiguous(t, paths, defs),
                    "{what}: ambiguous {paths:?} accepted"
                );
                p
            }
            Err(e) => {
                assert!(ambiguous(t, paths, defs), "{what}: {paths:?}: {e:?}");
                assert_eq!(e.kind, ErrorKind::Duplicate, "{what}");
                continue;
            }
        };
        let mut out = vec![Value::Absent; strs.len()];
        for (i, d) in datums.iter().enumerate() {
            let mut c = Cursor::new(d);
            schema.read(&p, &mut c, &mut out).unwrap();
            assert!(c.is_empty(), "{what} datum {i}: bytes left over");
            for (k, path) in strs.iter().enumerate() {
                let what = format!("{what} datum {i} {path}");
                match at_path(&decoded[i], &written[i], t, path, defs) {
                    None => assert_eq!(out[k], Value::Absent, "{what}"),
                    Some((dv, wv, ft)) => check(schema, out[k], dv, wv, ft, defs, &what),
                }
            }
        }
    }
}

// ------------------------------------------------------------------ the tests

fn prim_record() -> T {
    let n = |s: &str| Name {
        ns: "t".into(),
        short: s.into(),
        style: 1,
    };
    T::Record(
        n("all"),
        vec![
            ("null".into(), T::Null),
            ("boolean".into(), T::Boolean),
            ("int".into(), T::Int),
            ("long".into(), T::Long),
            ("float".into(), T::Float),
            ("double".into(), T::Double),
            ("bytes".into(), T::Bytes),
            ("string".into(), T::Str),
            ("fixed".into(), T::Fixed(n("f16"), 16, None)),
            ("fixed0".into(), T::Fixed(n("f0"), 0, None)),
            (
                "enum".into(),
                T::Enum(n("e"), vec!["A".into(), "B".into(), "C".into()]),
            ),
            ("array".into(), T::Array(Box::new(T::Str))),
            ("map".into(), T::Map(Box::new(T::Long))),
            (
                "union".into(),
                T::Union(vec![T::Null, T::Int, T::Str, T::Array(Box::new(T::Long))]),
            ),
            (
                "nested".into(),
                T::Record(
                    n("inner"),
                    vec![
                        ("x".into(), T::Long),
                        (
                            "deeper".into(),
                            T::Union(vec![
                                T::Null,
                                T::Record(n("deepest"), vec![("y".into(), T::Str)]),
                            ]),
                        ),
                    ],
                ),
            ),
            (
                "array_of_records".into(),
                T::Array(Box::new(T::Record(
                    n("item"),
                    vec![("z".into(), T::Int), ("s".into(), T::Bytes)],
                ))),
            ),
            (
                "map_of_unions".into(),
                T::Map(Box::new(T::Union(vec![T::Str, T::Null]))),
            ),
            ("obj".into(), T::Obj(Box::new(T::Double))),
            ("tail".into(), T::Long),
        ],
    )
}

fn logical_record() -> T {
    let n = |s: &str| Name {
        ns: "l".into(),
        short: s.into(),
        style: 0,
    };
    let mut fields: Vec<(String, T)> = LOGICAL
        .into_iter()
        .map(|(l, b)| (l.replace('-', "_"), T::Logical(l, Box::new(b))))
        .collect();
    fields.push(("duration".into(), T::Fixed(n("dur"), 12, Some("duration"))));
    fields.push((
        "fixed_decimal".into(),
        T::Fixed(n("dec"), 2, Some("decimal")),
    ));
    fields.push((
        "maybe_time".into(),
        T::Union(vec![
            T::Null,
            T::Logical("timestamp-millis", Box::new(T::Long)),
        ]),
    ));
    T::Record(n("logical"), fields)
}

/// A linked list (recursive record), and named types used by reference.
fn named_record() -> T {
    let n = |ns: &str, s: &str, style| Name {
        ns: ns.into(),
        short: s.into(),
        style,
    };
    let point = T::Record(
        n("geo", "Point", 1),
        vec![("x".into(), T::Double), ("y".into(), T::Double)],
    );
    let color = T::Enum(n("geo", "Color", 2), vec!["RED".into(), "GREEN".into()]);
    let md5 = T::Fixed(n("hash", "MD5", 0), 16, None);
    T::Record(
        n("geo", "Shape", 1),
        vec![
            ("origin".into(), point.clone()),
            ("color".into(), color.clone()),
            ("hash".into(), md5.clone()),
            ("corners".into(), T::Array(Box::new(point.clone()))),
            ("fill".into(), T::Union(vec![T::Null, color])),
            ("hashes".into(), T::Map(Box::new(md5))),
            (
                "next".into(),
                T::Union(vec![T::Null, T::Ref("geo.Shape".into())]),
            ),
            ("center".into(), T::Union(vec![point, T::Null])),
        ],
    )
}

fn values_of(t: &T, rng: &mut Rng, n: usize) -> Vec<AV> {
    let mut defs = Defs::new();
    collect_defs(t, &mut defs);
    let mut v = Vals { rng, defs: &defs };
    (0..n).map(|_| v.value(t, 0)).collect()
}

#[test]
fn every_avro_type_matches_apache_avro() {
    let mut rng = Rng::new(0xa7c0);
    for (what, t) in [
        ("primitives", prim_record()),
        ("logical", logical_record()),
        ("named", named_record()),
    ] {
        // Enough records for several blocks (apache-avro flushes at ~16 KB).
        let values = values_of(&t, &mut rng, 600);
        check_type(&t, &values, &mut rng, what);
    }
}

#[test]
fn a_nullable_record_at_the_top_level_matches_apache_avro() {
    let mut rng = Rng::new(7);
    let rec = prim_record();
    for t in [
        T::Union(vec![T::Null, rec.clone()]),
        T::Union(vec![rec, T::Null]),
    ] {
        let values = values_of(&t, &mut rng, 200);
        assert!(values
            .iter()
            .any(|v| matches!(v, AV::Union(_, b) if **b == AV::Null)));
        check_type(&t, &values, &mut rng, "top-level union");
    }
}

#[test]
fn non_record_top_level_types_step_exactly() {
    let mut rng = Rng::new(8);
    let n = |s: &str| Name {
        ns: "x".into(),
        short: s.into(),
        style: 0,
    };
    for t in [
        T::Long,
        T::Str,
        T::Null,
        T::Array(Box::new(T::Union(vec![T::Null, T::Long]))),
        T::Map(Box::new(T::Array(Box::new(T::Bytes)))),
        T::Union(vec![T::Null, T::Int, T::Str]),
        T::Enum(n("e"), vec!["A".into(), "B".into()]),
        T::Fixed(n("f"), 5, None),
    ] {
        let values = values_of(&t, &mut rng, 100);
        check_type(&t, &values, &mut rng, &format!("{t:?}"));
    }
}

#[test]
fn random_schemas_match_apache_avro() {
    let mut checked = 0;
    for seed in 0..120u64 {
        let mut rng = Rng::new(seed);
        let mut g = Gen {
            rng: &mut rng,
            next: 0,
            named: Vec::new(),
            open: Vec::new(),
        };
        let t = g.record(4);
        let t = if seed % 5 == 0 {
            T::Union(vec![T::Null, t])
        } else {
            t
        };
        let values = values_of(&t, &mut rng, 40);
        check_type(&t, &values, &mut rng, &format!("seed {seed}"));
        checked += 1;
    }
    assert_eq!(checked, 120);
}

/// Types that share short names in different namespaces resolve by full name.
#[test]
fn same_short_names_in_different_namespaces() {
    let n = |ns: &str, style| Name {
        ns: ns.into(),
        short: "X".into(),
        style,
    };
    let a = T::Record(n("a", 1), vec![("v".into(), T::Long)]);
    let b = T::Record(
        n("b", 1),
        vec![("w".into(), T::Str), ("u".into(), T::Bytes)],
    );
    let root = Name {
        ns: "b".into(),
        short: "Root".into(),
        style: 1,
    };
    // Root's namespace is b: a reference to "X" inside it means b.X.
    let t = T::Record(
        root,
        vec![
            ("first".into(), a.clone()),
            ("second".into(), b.clone()),
            ("third".into(), T::Array(Box::new(a))),
            ("fourth".into(), T::Union(vec![T::Null, b])),
        ],
    );
    let mut defs = Defs::new();
    collect_defs(&t, &mut defs);
    let text = json(&t, &defs);
    assert!(text.contains("\"items\": \"a.X\""), "{text}");
    assert!(text.contains("[\"null\", \"X\"]"), "{text}");
    let mut rng = Rng::new(3);
    let values = values_of(&t, &mut rng, 50);
    check_type(&t, &values, &mut rng, "namespaces");
}

/// Arrays and maps written in blocks with negative counts (followed by the block's byte
/// size), which apache-avro reads but never writes: encoded by hand.
#[test]
fn negative_count_blocks_match_apache_avro() {
    let text = r#"{"type": "record", "name": "r", "fields": [
        {"name": "a", "type": {"type": "array", "items": "long"}},
        {"name": "m", "type": {"type": "map", "values": "string"}},
        {"name": "n", "type": {"type": "array", "items": "null"}},
        {"name": "tail", "type": "string"}]}"#;
    let zz = |v: i64| {
        let mut u = ((v << 1) ^ (v >> 63)) as u64;
        let mut out = Vec::new();
        loop {
            if u < 0x80 {
                out.push(u as u8);
                return out;
            }
            out.push((u as u8) | 0x80);
            u >>= 7;
        }
    };
    let block = |items: &[Vec<u8>], negative: bool| {
        let body: Vec<u8> = items.concat();
        let mut out = Vec::new();
        if negative {
            out.extend(zz(-(items.len() as i64)));
            out.extend(zz(body.len() as i64));
        } else {
            out.extend(zz(items.len() as i64));
        }
        out.extend(body);
        out
    };
    let s = |t: &str| [zz(t.len() as i64), t.as_bytes().to_vec()].concat();
    let mut datum = Vec::new();
    // a: [-3 (size), 5, -1, 300], [1, 7], [-2 (size), 0, 1], end
    datum.extend(block(&[zz(5), zz(-1), zz(300)], true));
    datum.extend(block(&[zz(7)], false));
    datum.extend(block(&[zz(0), zz(1)], true));
    datum.push(0);
    // m: {"k": "v"} negative, {"kk": "vv", "x": ""} positive
    datum.extend(block(&[[s("k"), s("v")].concat()], true));
    datum.extend(block(
        &[[s("kk"), s("vv")].concat(), [s("x"), s("")].concat()],
        false,
    ));
    datum.push(0);
    // n: 4 nulls in a negative block of size 0, 2 in a positive one
    datum.extend(block(&[vec![], vec![], vec![], vec![]], true));
    datum.extend(block(&[vec![], vec![]], false));
    datum.push(0);
    datum.extend(s("end"));

    let aschema = apache_avro::Schema::parse_str(text).unwrap();
    let expected = apache_avro::from_avro_datum(&aschema, &mut &datum[..], None).unwrap();
    let AV::Record(fields) = &expected else {
        panic!()
    };
    let schema = Schema::parse(text.as_bytes(), 0).unwrap();
    for paths in [&["a", "m", "n", "tail"][..], &["tail"], &["n", "a"]] {
        let p = schema.project(paths).unwrap();
        let mut out = vec![Value::Absent; paths.len()];
        let mut c = Cursor::new(&datum);
        schema.read(&p, &mut c, &mut out).unwrap();
        assert!(c.is_empty());
        let mut c = Cursor::new(&datum);
        schema.skip_datum(&mut c).unwrap();
        assert!(c.is_empty());
        for (k, path) in paths.iter().enumerate() {
            let av = &fields.iter().find(|(n, _)| n == path).unwrap().1;
            match (out[k], av) {
                (Value::Items(items), AV::Array(a)) => {
                    let got: Vec<Value<'_>> =
                        schema.items(items).collect::<Result<_, _>>().unwrap();
                    assert_eq!(got.len(), a.len(), "{path}");
                    for (g, e) in got.iter().zip(a) {
                        match e {
                            AV::Long(x) => assert_eq!(g.as_i64(), Some(*x)),
                            AV::Null => assert_eq!(*g, Value::Null),
                            other => panic!("{other:?}"),
                        }
                    }
                }
                (Value::Items(items), AV::Map(m)) => {
                    let got: Vec<&str> = schema
                        .items(items)
                        .map(|v| v.unwrap().as_str().unwrap())
                        .collect();
                    let mut want: Vec<&str> = m
                        .values()
                        .map(|v| match v {
                            AV::String(s) => s.as_str(),
                            other => panic!("{other:?}"),
                        })
                        .collect();
                    want.sort();
                    let mut got = got;
                    got.sort();
                    assert_eq!(got, want);
                }
                (Value::Str(s), AV::String(e)) => assert_eq!(s, e.as_bytes()),
                other => panic!("{other:?}"),
            }
        }
    }
}

/// Projection semantics: paths through a union's record branch, paths that stop at a
/// non-record, and projections lakecore cannot represent (a path and its own prefix, the
/// same path twice, one record type reached along two routes) refused with `Duplicate`.
#[test]
fn ambiguous_projections_are_refused() {
    let text = br#"{"type": "record", "name": "r", "fields": [
        {"name": "a", "type": {"type": "record", "name": "P", "fields": [{"name": "x", "type": "long"}]}},
        {"name": "b", "type": ["null", "P"]},
        {"name": "c", "type": {"type": "record", "name": "Q", "fields": [
            {"name": "y", "type": "long"},
            {"name": "next", "type": ["null", "Q"]}]}},
        {"name": "d", "type": "long"}]}"#;
    let schema = Schema::parse(text, 0).unwrap();
    assert_eq!(schema.root_type(), Type::Record);
    // Fine: one route to each record type.
    for ok in [
        &["a.x", "b", "c.y", "d"][..],
        &["b.x", "a", "c.next", "d.e"],
        &["a", "b", "c", "d"],
        &["c.y", "c.next"],
        &["a.x"],
    ] {
        assert!(schema.project(ok).is_ok(), "{ok:?}");
    }
    for bad in [
        &["a", "a"][..],
        &["a", "a.x"],
        &["a.x", "a"],
        &["a.x", "a.x"],
        &["a.x", "b.x"],
        &["c.next.y"],
        &["c.y", "c.next.next.y"],
    ] {
        let e = schema.project(bad).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Duplicate, "{bad:?}");
    }
    // P read through a and through b (null or not): both projected separately.
    // a = {x: 5}, b = [P {x: 6}], c = {y: 7, next: [Q {y: 8, next: null}]}, d = 9
    let datum = [10u8, 2, 12, 14, 2, 16, 0, 18];
    for (paths, want) in [
        (&["a.x", "d"][..], [Some(5), Some(9)]),
        (&["b.x", "c.y"], [Some(6), Some(7)]),
        (&["d", "nope"], [Some(9), None]),
    ] {
        let p = schema.project(paths).unwrap();
        let mut out = [Value::Absent; 2];
        let mut c = Cursor::new(&datum);
        schema.read(&p, &mut c, &mut out).unwrap();
        assert!(c.is_empty());
        assert_eq!([out[0].as_i64(), out[1].as_i64()], want, "{paths:?}");
    }
}
