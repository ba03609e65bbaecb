//! Proves the decode paths of the foundation codecs allocate nothing: a counting global
//! allocator wraps the system one, and each path runs between two readings of the counter.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use lakecore::codec::bitpack::{self, BitPacked};
use lakecore::codec::checksum::{crc32, sha256};
use lakecore::codec::varint::{self, DeltaIter, VarintFormat, ZigZagDeltaIter};
use lakecore::cursor::Cursor;
use lakecore_testkit::counting;

/// Runs `f` and returns how many allocations it made on this thread.
fn allocations<R>(f: impl FnOnce() -> R) -> (u64, R) {
    let (r, a) = counting::measure(f);
    (a.calls, r)
}

#[test]
fn counter_sees_allocations() {
    let (n, v) = allocations(|| vec![1u8; 100]);
    assert!(
        n >= 1,
        "the counting allocator must observe a Vec allocation"
    );
    drop(v);
}

#[test]
fn varint_paths_allocate_nothing() {
    let values: Vec<u64> = (0..10_000u64).map(|i| i * i).collect();
    let mut stream = Vec::new();
    varint::push_deltas(&mut stream, 0, &values).unwrap();
    let signed: Vec<i64> = (0..10_000i64)
        .map(|i| if i % 3 == 0 { -1 } else { i })
        .collect();
    let mut zz = Vec::new();
    varint::push_zigzag_deltas(&mut zz, 0, &signed).unwrap();
    let mut out = vec![0u64; 777];
    let mut out_signed = vec![0i64; 10_000];

    let (n, sum) = allocations(|| {
        let mut sum = 0u64;
        for v in DeltaIter::new(&stream, 0, VarintFormat::SIDECAR)
            .with_count(10_000)
            .with_bounds(0, u64::MAX)
        {
            sum = sum.wrapping_add(v.unwrap());
        }
        let mut it = DeltaIter::new(&stream, 0, VarintFormat::SIDECAR).with_count(10_000);
        while let Ok(k) = it.decode_into(&mut out) {
            if k == 0 {
                break;
            }
            sum = sum.wrapping_add(out[k - 1]);
        }
        it.finish().unwrap();
        ZigZagDeltaIter::zigzag(&zz, 0, VarintFormat::U64)
            .with_count(10_000)
            .decode_into(&mut out_signed)
            .unwrap();
        sum = sum.wrapping_add(varint::count(&stream, VarintFormat::SIDECAR).unwrap() as u64);
        // Error paths too.
        let bad = DeltaIter::new(&[0x80, 0x00], 0, VarintFormat::SIDECAR).finish();
        assert!(bad.is_err());
        sum
    });
    assert_eq!(n, 0, "varint decode allocated");
    assert!(sum > 0);
    assert_eq!(out_signed, signed);
}

#[test]
fn bitpack_cursor_checksum_paths_allocate_nothing() {
    let values: Vec<u64> = (0..5_000u64).map(|i| i % 1000).collect();
    let packed = bitpack::pack(&values, 10).unwrap();
    let mut out32 = vec![0u32; 4_000];
    let mut out64 = vec![0u64; 4_000];
    let (n, acc) = allocations(|| {
        let view = BitPacked::new(&packed, 10, 5_000).unwrap();
        let mut acc = 0u64;
        for i in 0..5_000 {
            acc += view.get(i).unwrap();
        }
        view.unpack_u32(1_000, &mut out32).unwrap();
        view.unpack_u64(999, &mut out64).unwrap();
        acc += view.iter().sum::<u64>();
        let mut c = Cursor::with_origin(&packed, 10);
        acc += u64::from(c.u32_be().unwrap())
            + c.u64_le().unwrap()
            + c.uvarint(VarintFormat::U64_LENIENT).unwrap_or(0);
        assert!(c.bytes(1 << 20).is_err());
        acc += u64::from(crc32(&packed)) + u64::from(sha256(&packed)[0]);
        acc
    });
    assert_eq!(n, 0, "bit unpack / cursor / checksum allocated");
    assert!(acc > 0);
    assert_eq!(out32[0], 0);
    assert_eq!(out64[1], 0);
}
