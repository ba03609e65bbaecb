#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "alloc")]
//! Thrift compact protocol: round trips against an independent encoder written here, and one
//! test per error rule.

use lakecore::codec::thrift::{required, FieldType, Reader, Writer};
use lakecore::ErrorKind;
use lakecore_testkit::thrift::{crate_read, crate_write, oracle_encode, sample, V};

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
