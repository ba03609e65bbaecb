//! The independent Thrift compact encoder used as the oracle by the Thrift tests and the
//! fuzz harness, plus generic read/write through the crate.

use lakecore::codec::thrift::{FieldType, Reader, Writer};

/// A generic Thrift value tree (the oracle's data model).
#[derive(Clone, Debug, PartialEq)]
pub enum V {
    /// A bool.
    Bool(bool),
    /// An i8 (`byte`).
    I8(i8),
    /// An i16.
    I16(i16),
    /// An i32.
    I32(i32),
    /// An i64.
    I64(i64),
    /// A double, as its bits.
    Double(u64),
    /// A binary (or string).
    Bin(Vec<u8>),
    /// A list: type code (1..=12) and elements.
    List(u8, Vec<V>),
    /// A struct: field IDs and values.
    Struct(Vec<(i16, V)>),
}

fn code(v: &V) -> u8 {
    match v {
        V::Bool(true) => 1,
        V::Bool(false) => 2,
        V::I8(_) => 3,
        V::I16(_) => 4,
        V::I32(_) => 5,
        V::I64(_) => 6,
        V::Double(_) => 7,
        V::Bin(_) => 8,
        V::List(..) => 9,
        V::Struct(_) => 12,
    }
}

/// Independent encoder: LEB128 + ZigZag written from the protocol description.
pub fn oracle_encode(v: &V, out: &mut Vec<u8>, in_container: bool) {
    fn uv(mut x: u64, out: &mut Vec<u8>) {
        loop {
            let b = (x & 0x7f) as u8;
            x >>= 7;
            if x == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
    }
    fn zz(x: i64) -> u64 {
        ((x << 1) ^ (x >> 63)) as u64
    }
    match v {
        V::Bool(b) => {
            if in_container {
                out.push(if *b { 1 } else { 2 })
            }
        }
        V::I8(x) => out.push(*x as u8),
        V::I16(x) => uv(zz(i64::from(*x)), out),
        V::I32(x) => uv(zz(i64::from(*x)), out),
        V::I64(x) => uv(zz(*x), out),
        V::Double(bits) => out.extend_from_slice(&bits.to_le_bytes()),
        V::Bin(b) => {
            uv(b.len() as u64, out);
            out.extend_from_slice(b);
        }
        V::List(elem, items) => {
            if items.len() < 15 {
                out.push(((items.len() as u8) << 4) | elem);
            } else {
                out.push(0xf0 | elem);
                uv(items.len() as u64, out);
            }
            for it in items {
                oracle_encode(it, out, true);
            }
        }
        V::Struct(fields) => {
            let mut last = 0i16;
            for (id, fv) in fields {
                let d = i32::from(*id) - i32::from(last);
                if (1..=15).contains(&d) {
                    out.push(((d as u8) << 4) | code(fv));
                } else {
                    out.push(code(fv));
                    uv(zz(i64::from(*id)), out);
                }
                last = *id;
                oracle_encode(fv, out, false);
            }
            out.push(0);
        }
    }
}

/// Writes `v` with the crate's writer.
pub fn crate_write(v: &V, w: &mut Writer) {
    match v {
        V::Bool(b) => w.bool_element(*b),
        V::I8(x) => w.i8(*x),
        V::I16(x) => w.i16(*x),
        V::I32(x) => w.i32(*x),
        V::I64(x) => w.i64(*x),
        V::Double(bits) => w.double(f64::from_bits(*bits)),
        V::Bin(b) => w.binary(b),
        V::List(elem, items) => {
            w.list_header(FieldType::from_code(*elem).unwrap(), items.len());
            for it in items {
                crate_write(it, w);
            }
        }
        V::Struct(fields) => {
            w.struct_begin();
            for (id, fv) in fields {
                match fv {
                    V::Bool(b) => w.field_bool(*id, *b),
                    V::I8(x) => w.field_i8(*id, *x),
                    V::I16(x) => w.field_i16(*id, *x),
                    V::I32(x) => w.field_i32(*id, *x),
                    V::I64(x) => w.field_i64(*id, *x),
                    V::Double(bits) => w.field_double(*id, f64::from_bits(*bits)),
                    V::Bin(b) => w.field_binary(*id, b),
                    V::List(elem, items) => {
                        w.field_list(*id, FieldType::from_code(*elem).unwrap(), items.len());
                        for it in items {
                            crate_write(it, w);
                        }
                    }
                    V::Struct(_) => {
                        w.field_begin(*id, FieldType::Struct);
                        crate_write(fv, w);
                    }
                }
            }
            w.struct_end();
        }
    }
}

/// Decodes a generic value of type `ty` with the crate's reader.
pub fn crate_read(r: &mut Reader<'_>, ty: FieldType, elem_code: u8) -> lakecore::Result<V> {
    Ok(match ty {
        FieldType::Bool => V::Bool(r.bool_element()?),
        FieldType::I8 => V::I8(r.i8()?),
        FieldType::I16 => V::I16(r.i16()?),
        FieldType::I32 => V::I32(r.i32()?),
        FieldType::I64 => V::I64(r.i64()?),
        FieldType::Double => V::Double(r.double()?.to_bits()),
        FieldType::Binary => V::Bin(r.binary()?.to_vec()),
        FieldType::List => {
            let h = r.list_header()?;
            let mut items = Vec::new();
            for _ in 0..h.len {
                items.push(crate_read(r, h.elem, 0)?);
            }
            // The element type is on the wire even for empty lists (booleans: code 1).
            let _ = elem_code;
            V::List(h.elem.code(), items)
        }
        FieldType::Struct => {
            let mut st = r.enter_struct()?;
            let mut fields = Vec::new();
            while let Some(f) = r.next_field(&mut st)? {
                let v = match f.ty {
                    FieldType::Bool => V::Bool(r.field_bool(f)?),
                    other => crate_read(r, other, 0)?,
                };
                fields.push((f.id, v));
            }
            V::Struct(fields)
        }
        other => {
            // Sets, maps and uuids are not generated; mutated inputs may contain them.
            r.skip(other)?;
            V::Bin(Vec::new())
        }
    })
}

/// A struct with every value type, nested lists and structs, and large field-ID jumps.
pub fn sample() -> V {
    V::Struct(vec![
        (1, V::I32(1)),
        (2, V::Bool(true)),
        (3, V::Bool(false)),
        (4, V::I8(-5)),
        (5, V::I16(-300)),
        (6, V::I64(i64::MIN)),
        (7, V::I64(i64::MAX)),
        (8, V::Double(1.5f64.to_bits())),
        (9, V::Bin(b"hello".to_vec())),
        (
            10,
            V::List(5, (0..40).map(|i| V::I32(i * 1000 - 7)).collect()),
        ),
        (11, V::List(1, vec![V::Bool(true), V::Bool(false)])),
        (
            12,
            V::List(
                12,
                vec![
                    V::Struct(vec![(1, V::Bin(b"a".to_vec()))]),
                    V::Struct(vec![]),
                ],
            ),
        ),
        (
            40,
            V::Struct(vec![(1, V::Struct(vec![(300, V::I32(i32::MIN))]))]),
        ),
        (-2, V::I32(i32::MAX)),
    ])
}
