//! Bolero harnesses for the varint codec, checked against the naive decoder in
//! `lakecore_testkit::oracle`. `cargo test` runs each briefly with random inputs;
//! `cargo bolero test --test fuzz_varint <name>` fuzzes one with libFuzzer.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use lakecore_testkit::oracle;

use bolero::check;
use lakecore::codec::varint::{self, DeltaIter, VarintFormat, ZigZagDeltaIter};

const FORMATS: [VarintFormat; 3] = [
    VarintFormat::SIDECAR,
    VarintFormat::U64,
    VarintFormat::U64_LENIENT,
];

#[test]
fn varint_decode_matches_naive() {
    check!().with_iterations(20_000).for_each(|bytes: &[u8]| {
        for len in 1..=10u8 {
            for canonical in [true, false] {
                let format = VarintFormat::new(len, canonical).unwrap();
                let ours = varint::decode_u64(bytes, format).map_err(|e| (e.kind, e.offset));
                assert_eq!(ours, oracle::decode(bytes, len.into(), canonical));
            }
        }
        for format in FORMATS {
            let ours = varint::count(bytes, format).map_err(|e| (e.kind, e.offset));
            assert_eq!(
                ours,
                oracle::count(bytes, format.max_len().into(), format.is_canonical())
            );
        }
    });
}

#[test]
fn delta_stream_matches_naive() {
    check!()
        .with_type::<(u64, u8, u64, u64, u8, Vec<u8>)>()
        .with_iterations(20_000)
        .for_each(|(base, count, min, max, which, bytes)| {
            let format = FORMATS[usize::from(*which % 3)];
            let count = usize::from(*count % 64);
            let naive = oracle::decode_deltas(
                bytes,
                format.max_len().into(),
                format.is_canonical(),
                *base,
                *min,
                *max,
                count,
            );
            let mut out = vec![0u64; count];
            let mut bulk = DeltaIter::new(bytes, *base, format)
                .with_count(count as u64)
                .with_bounds(*min, *max);
            let got = bulk.decode_into(&mut out);
            let lazy: Result<Vec<u64>, _> = DeltaIter::new(bytes, *base, format)
                .with_count(count as u64)
                .with_bounds(*min, *max)
                .collect();
            match naive {
                Ok((values, _)) => {
                    assert_eq!(got.unwrap(), count);
                    assert_eq!(out, values);
                    assert_eq!(lazy.unwrap(), values);
                }
                Err(e) => {
                    assert_eq!(got.map_err(|e| (e.kind, e.offset)).unwrap_err(), e);
                    assert_eq!(lazy.map_err(|e| (e.kind, e.offset)).unwrap_err(), e);
                }
            }
        });
}

#[test]
fn zigzag_stream_matches_naive() {
    check!()
        .with_type::<(i64, u8, Vec<u8>)>()
        .with_iterations(20_000)
        .for_each(|(base, count, bytes)| {
            let count = usize::from(*count % 64);
            let naive =
                oracle::decode_zigzag_deltas(bytes, 10, true, *base, i64::MIN, i64::MAX, count);
            let mut out = vec![0i64; count];
            let got = ZigZagDeltaIter::zigzag(bytes, *base, VarintFormat::U64)
                .with_count(count as u64)
                .decode_into(&mut out);
            match naive {
                Ok((values, _)) => {
                    assert_eq!(got.unwrap(), count);
                    assert_eq!(out, values);
                }
                Err(e) => assert_eq!(got.map_err(|e| (e.kind, e.offset)).unwrap_err(), e),
            }
        });
}

#[test]
fn encode_then_decode_round_trips() {
    check!()
        .with_type::<(u64, Vec<u64>)>()
        .with_iterations(20_000)
        .for_each(|(base, deltas)| {
            let mut values = Vec::new();
            let mut v = *base;
            for d in deltas {
                v = v.saturating_add(*d >> (d % 64));
                values.push(v);
            }
            let mut bytes = Vec::new();
            varint::push_deltas(&mut bytes, *base, &values).unwrap();
            let mut it =
                DeltaIter::new(&bytes, *base, VarintFormat::U64).with_count(values.len() as u64);
            let decoded: Vec<u64> = it.by_ref().map(Result::unwrap).collect();
            assert_eq!(decoded, values);
            it.finish().unwrap();
            let signed: Vec<i64> = values.iter().map(|&v| v as i64 >> 1).collect();
            let mut bytes = Vec::new();
            varint::push_zigzag_deltas(&mut bytes, 0, &signed).unwrap();
            let decoded: Vec<i64> = ZigZagDeltaIter::zigzag(&bytes, 0, VarintFormat::U64)
                .map(Result::unwrap)
                .collect();
            assert_eq!(decoded, signed);
        });
}
