#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "alloc")]
//! Thrift compact protocol: round trips against an independent encoder written here, and one
//! test per error rule.

use lakecore::codec::thrift::{required, FieldType, Reader, Writer};
use lakecore::ErrorKind;

/// A generic Thrift value tree (the oracle's data model).
#[derive(Clone, Debug, PartialEq)]
pub enum V {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    Double(u64),
    Bin(Vec<u8>),
    /// element type code (1..=12) and elements.
    List(u8, Vec<V>),
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
            let c = if h.len == 0 { elem_code } else { h.elem.code() };
            // Booleans in lists are encoded with code 1 by both writers.
            V::List(c, items)
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

#[test]
fn writer_matches_oracle_and_reader_round_trips() {
    let v = sample();
    let mut expected = Vec::new();
    oracle_encode(&v, &mut expected, false);
    let mut w = Writer::new();
    crate_write(&v, &mut w);
    assert_eq!(w.as_bytes(), &expected[..]);
    let mut r = Reader::new(&expected, 100);
    let back = crate_read(&mut r, FieldType::Struct, 0).unwrap();
    r.expect_end().unwrap();
    assert_eq!(back, v);
    // Skipping the whole value consumes exactly its bytes.
    let mut r = Reader::new(&expected, 0);
    r.skip_struct().unwrap();
    r.expect_end().unwrap();
}

#[test]
fn binary_is_borrowed() {
    let bytes = [0x18, 0x03, b'x', b'y', b'z', 0x00];
    let mut r = Reader::new(&bytes, 0);
    let mut st = r.enter_struct().unwrap();
    let f = r.next_field(&mut st).unwrap().unwrap();
    let b = r.field_binary(f).unwrap();
    assert_eq!(b.as_ptr(), bytes[2..].as_ptr());
}

fn first_field_err(bytes: &[u8]) -> lakecore::Error {
    let mut r = Reader::new(bytes, 1000);
    let mut st = r.enter_struct().unwrap();
    loop {
        match r.next_field(&mut st) {
            Err(e) => return e,
            Ok(None) => panic!("no error"),
            Ok(Some(f)) => {
                if f.id == 1 {
                    if let Err(e) = r.field_i32(f) {
                        return e;
                    }
                } else if let Err(e) = r.skip_field(f) {
                    return e;
                }
            }
        }
    }
}

#[test]
fn duplicate_field_is_rejected() {
    // 1: i32 = 1, then long-form header for id 1 again.
    let e = first_field_err(&[0x15, 0x02, 0x05, 0x02, 0x02, 0x00]);
    assert_eq!((e.kind, e.offset), (ErrorKind::ThriftDuplicateField, 1002));
}

#[test]
fn wrong_wire_type_is_rejected() {
    // field 1 declared as i64.
    let e = first_field_err(&[0x16, 0x02, 0x00]);
    assert_eq!((e.kind, e.offset), (ErrorKind::ThriftWireType, 1000));
    // unknown type nibble 14.
    let e = first_field_err(&[0x1e, 0x00]);
    assert_eq!((e.kind, e.offset), (ErrorKind::ThriftWireType, 1000));
}

#[test]
fn missing_required_field_is_reported_at_struct_start() {
    let bytes = [0x25, 0x02, 0x00];
    let mut r = Reader::new(&bytes, 50);
    let mut st = r.enter_struct().unwrap();
    let mut one = None;
    while let Some(f) = r.next_field(&mut st).unwrap() {
        if f.id == 1 {
            one = Some(r.field_i32(f).unwrap());
        } else {
            r.skip_field(f).unwrap();
        }
    }
    let e = required(one, &st).unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::ThriftMissingField, 50));
}

#[test]
fn union_needs_exactly_one_member() {
    for (bytes, ok) in [
        (&[0x00][..], false),
        (&[0x15, 0x02, 0x00][..], true),
        (&[0x15, 0x02, 0x15, 0x02, 0x00][..], false),
    ] {
        let mut r = Reader::new(bytes, 7);
        let mut st = r.enter_struct().unwrap();
        while let Some(f) = r.next_field(&mut st).unwrap() {
            st.union_member();
            r.skip_field(f).unwrap();
        }
        let res = st.check_union();
        if ok {
            res.unwrap();
        } else {
            let e = res.unwrap_err();
            assert_eq!((e.kind, e.offset), (ErrorKind::ThriftUnion, 7));
        }
    }
}

#[test]
fn unknown_fields_of_every_type_are_skipped() {
    let v = sample();
    let inner = match &v {
        V::Struct(f) => f.clone(),
        _ => unreachable!(),
    };
    // Wrap: { 1: i32 = 9, <every sample field renumbered 2..> }
    let mut fields = vec![(1i16, V::I32(9))];
    for (i, (_, fv)) in inner.into_iter().enumerate() {
        fields.push((i as i16 + 2, fv));
    }
    let mut bytes = Vec::new();
    oracle_encode(&V::Struct(fields), &mut bytes, false);
    let mut r = Reader::new(&bytes, 0);
    let mut st = r.enter_struct().unwrap();
    let mut one = None;
    while let Some(f) = r.next_field(&mut st).unwrap() {
        if f.id == 1 {
            one = Some(r.field_i32(f).unwrap());
        } else {
            r.skip_field(f).unwrap();
        }
    }
    r.expect_end().unwrap();
    assert_eq!(one, Some(9));
}

#[test]
fn depth_limit_is_enforced() {
    // 70 nested lists of lists: 0x19 (one element of type list) ... then an empty list.
    let mut bytes = vec![0x19u8; 70];
    bytes.push(0x09);
    let mut r = Reader::new(&bytes, 0);
    let e = r.skip(FieldType::List).unwrap_err();
    assert_eq!(e.kind, ErrorKind::DepthLimit);
    assert_eq!(e.offset, 64);
    let mut r = Reader::new(&bytes, 0).with_max_depth(80);
    r.skip(FieldType::List).unwrap();
    r.expect_end().unwrap();
}

#[test]
fn i32_overflow_truncation_and_sizes() {
    // i32 field with a 33-bit zigzag value.
    let e = first_field_err(&[0x15, 0x80, 0x80, 0x80, 0x80, 0x10, 0x00]);
    assert_eq!((e.kind, e.offset), (ErrorKind::VarintOverflow, 1001));
    // Truncated binary.
    let e = first_field_err(&[0x28, 0x05, b'a', b'b']);
    assert_eq!((e.kind, e.offset), (ErrorKind::Truncated, 1004));
    // List declaring more elements than bytes left: refused before iterating.
    let e = first_field_err(&[0x29, 0xf5, 0xff, 0xff, 0xff, 0x0f, 0x00]);
    assert_eq!(e.kind, ErrorKind::Truncated);
    // Non-canonical varint (trailing 0x00 continuation byte).
    let e = first_field_err(&[0x15, 0x82, 0x00, 0x00]);
    assert_eq!((e.kind, e.offset), (ErrorKind::VarintNonCanonical, 1001));
    // Missing STOP.
    let e = first_field_err(&[0x15, 0x02]);
    assert_eq!((e.kind, e.offset), (ErrorKind::Truncated, 1002));
}

#[test]
fn mutations_never_panic() {
    let v = sample();
    let mut bytes = Vec::new();
    oracle_encode(&v, &mut bytes, false);
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x10, 0x80, 0xff] {
            let mut m = bytes.clone();
            m[i] ^= flip;
            let mut r = Reader::new(&m, 0);
            let _ = crate_read(&mut r, FieldType::Struct, 0);
            let mut r = Reader::new(&m, 0);
            let _ = r.skip_struct();
        }
        let mut r = Reader::new(&bytes[..i], 0);
        assert!(r.skip_struct().is_err());
    }
}
