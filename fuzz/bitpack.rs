//! Bolero harnesses for bit-packed streams, checked against the bit-by-bit reference in
//! `lakecore_testkit::oracle`.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use lakecore_testkit::oracle;

use bolero::check;
use lakecore::codec::bitpack::{self, BitPacked};

#[test]
fn pack_then_read_round_trips() {
    check!()
        .with_type::<(u8, u16, Vec<u64>)>()
        .with_iterations(10_000)
        .for_each(|(width, start, raw)| {
            let width = u32::from(*width % 65);
            let values: Vec<u64> = raw.iter().map(|v| v & oracle::mask(width)).collect();
            let packed = bitpack::pack(&values, width as u8).unwrap();
            assert_eq!(packed, oracle::pack(&values, width));
            let view = BitPacked::new(&packed, width as u8, values.len()).unwrap();
            for (i, v) in values.iter().enumerate() {
                assert_eq!(view.get(i), Some(*v));
            }
            let start = usize::from(*start) % (values.len() + 1);
            let mut out = vec![0u64; values.len() - start];
            view.unpack_u64(start, &mut out).unwrap();
            assert_eq!(out, values[start..]);
            if width <= 32 {
                let mut out = vec![0u32; values.len() - start];
                view.unpack_u32(start, &mut out).unwrap();
                assert!(out
                    .iter()
                    .zip(&values[start..])
                    .all(|(a, b)| u64::from(*a) == *b));
            }
        });
}

#[test]
fn arbitrary_bytes_never_panic_and_read_like_naive() {
    check!()
        .with_type::<(u8, u16, u16, u16, Vec<u8>)>()
        .with_iterations(10_000)
        .for_each(|(width, len, start, count, bytes)| {
            let (len, start, count) = (
                usize::from(*len),
                usize::from(*start),
                usize::from(*count % 128),
            );
            match BitPacked::from_prefix(bytes, *width, len) {
                Ok((view, _)) => {
                    let w = u32::from(*width);
                    for i in 0..len.min(64) {
                        assert_eq!(view.get(i), Some(oracle::get(bytes, w, i as u64)));
                    }
                    let mut out = vec![0u64; count];
                    match view.unpack_u64(start, &mut out) {
                        Ok(()) => {
                            for (k, v) in out.iter().enumerate() {
                                assert_eq!(*v, oracle::get(bytes, w, (start + k) as u64));
                            }
                        }
                        Err(e) => assert!(start + count > len, "{e}"),
                    }
                }
                Err(e) => assert!(
                    *width > 64
                        || bytes.len() < bitpack::packed_len(*width, len).unwrap()
                        || e.kind == lakecore::ErrorKind::NonZeroPadding
                ),
            }
        });
}
