#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "alloc")]
//! Fuzz harness for the Thrift compact reader: arbitrary bytes never panic, and a value tree
//! derived from the input round-trips through the independent encoder, the crate's writer
//! and the crate's reader.

use lakecore::codec::thrift::{FieldType, Reader, Writer};
use lakecore_testkit::thrift::{crate_read, crate_write, oracle_encode, V};

fn iterations() -> usize {
    if cfg!(miri) {
        4
    } else {
        2000
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    bolero::check!()
        .with_iterations(iterations())
        .for_each(|bytes: &[u8]| {
            let mut r = Reader::new(bytes, 0);
            let _ = r.skip_struct();
            let mut r = Reader::new(bytes, 0).with_max_depth(8);
            let _ = crate_read(&mut r, FieldType::Struct, 0);
        });
}

/// A value tree driven by the input bytes.
fn tree(bytes: &mut impl Iterator<Item = u8>, depth: u32) -> V {
    let mut fields = Vec::new();
    let mut id: i16 = 0;
    for _ in 0..bytes.next().unwrap_or(0) % 6 {
        let sel = bytes.next().unwrap_or(0);
        id = id.saturating_add(i16::from(sel >> 3) + 1);
        let x = i64::from_le_bytes([sel, bytes.next().unwrap_or(0), 0, 0, 0, 0, 0, sel >> 5]);
        let v = match sel % 9 {
            0 => V::Bool(x & 1 == 1),
            1 => V::I8(x as i8),
            2 => V::I16(x as i16),
            3 => V::I32(x as i32),
            4 => V::I64(x.wrapping_mul(0x9e37_79b9)),
            5 => V::Double(x as u64),
            6 => V::Bin(vec![sel; (x & 31) as usize]),
            7 => V::List(
                6,
                (0..(x & 31)).map(|i| V::I64(i.wrapping_mul(x))).collect(),
            ),
            _ if depth < 5 => V::Struct(match tree(bytes, depth + 1) {
                V::Struct(f) => f,
                _ => unreachable!(),
            }),
            _ => V::I32(0),
        };
        fields.push((id, v));
    }
    V::Struct(fields)
}

#[test]
fn derived_trees_round_trip() {
    bolero::check!()
        .with_iterations(iterations())
        .for_each(|bytes: &[u8]| {
            let v = tree(&mut bytes.iter().copied(), 0);
            let mut expected = Vec::new();
            oracle_encode(&v, &mut expected, false);
            let mut w = Writer::new();
            crate_write(&v, &mut w);
            assert_eq!(w.as_bytes(), &expected[..]);
            let mut r = Reader::new(&expected, 0);
            assert_eq!(crate_read(&mut r, FieldType::Struct, 0).unwrap(), v);
            r.expect_end().unwrap();
        });
}
