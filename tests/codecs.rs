//! Property tests of the foundation codecs against the naive references in `lakecore_testkit::oracle`.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use lakecore::codec::bitpack::{self, BitPackWriter, BitPacked};
use lakecore::codec::checksum::{crc32, sha256, Crc32, Sha256};
use lakecore::codec::varint::{self, DeltaIter, VarintFormat, ZigZagDeltaIter};
use lakecore::cursor::Cursor;
use lakecore::{Error, ErrorKind};
use lakecore_testkit::oracle;
use lakecore_testkit::rng::Rng;

/// Scales iteration counts down under miri, which is ~1000x slower.
fn scale(n: usize) -> usize {
    if cfg!(miri) {
        (n / 1000).max(2)
    } else {
        n
    }
}

fn kind_offset(e: Error) -> (ErrorKind, u64) {
    (e.kind, e.offset)
}

fn all_formats() -> Vec<VarintFormat> {
    let mut v = Vec::new();
    for len in 1..=10u8 {
        for canonical in [true, false] {
            v.push(VarintFormat::new(len, canonical).unwrap());
        }
    }
    v
}

#[test]
fn varint_format_constants() {
    assert_eq!(VarintFormat::SIDECAR.max_len(), 9);
    assert_eq!(VarintFormat::SIDECAR.max_value(), i64::MAX as u64);
    assert_eq!(VarintFormat::U64.max_value(), u64::MAX);
    assert!(VarintFormat::new(0, true).is_none());
    assert!(VarintFormat::new(11, true).is_none());
    assert_eq!(VarintFormat::new(1, true).unwrap().max_value(), 127);
}

#[test]
fn varint_round_trip_every_length() {
    let mut rng = Rng::new(1);
    for len in 1..=10u32 {
        let mut samples = vec![oracle::value_of_len(&mut rng, len)];
        // Both ends of the length class.
        samples.push(if len == 1 { 0 } else { 1u64 << (7 * (len - 1)) });
        samples.push(if len == 10 {
            u64::MAX
        } else {
            (1u64 << (7 * len)) - 1
        });
        for _ in 0..scale(200) {
            samples.push(oracle::value_of_len(&mut rng, len));
        }
        for v in samples {
            let mut buf = [0u8; 10];
            let n = varint::encode_u64(v, &mut buf);
            assert_eq!(n, len as usize, "value {v}");
            assert_eq!(varint::encoded_len(v), n);
            assert_eq!(&buf[..n], oracle::encode(v).as_slice());
            assert_eq!(
                varint::decode_u64(&buf[..n], VarintFormat::U64).unwrap(),
                (v, n)
            );
            let sidecar = varint::decode_u64(&buf[..n], VarintFormat::SIDECAR);
            if len <= 9 {
                assert_eq!(sidecar.unwrap(), (v, n));
            } else {
                assert_eq!(sidecar.unwrap_err().kind, ErrorKind::VarintOverflow);
            }
        }
    }
}

#[test]
fn varint_random_bytes_match_naive_decoder() {
    let mut rng = Rng::new(2);
    for _ in 0..scale(20_000) {
        let len = rng.below(12) as usize;
        // Bias towards continuation bits so long varints are common.
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                if rng.below(3) > 0 {
                    rng.next_u64() as u8 | 0x80
                } else {
                    rng.next_u64() as u8
                }
            })
            .collect();
        for format in all_formats() {
            let ours = varint::decode_u64(&bytes, format).map_err(kind_offset);
            let naive = oracle::decode(&bytes, format.max_len().into(), format.is_canonical());
            assert_eq!(ours, naive, "{bytes:02x?} {format:?}");
        }
    }
}

#[test]
fn varint_non_canonical_every_length() {
    for len in 2..=10usize {
        let mut bytes = vec![0x80u8; len];
        bytes[len - 1] = 0x00;
        let strict = VarintFormat::new(len as u8, true).unwrap();
        let lenient = VarintFormat::new(len as u8, false).unwrap();
        assert_eq!(
            kind_offset(varint::decode_u64(&bytes, strict).unwrap_err()),
            (ErrorKind::VarintNonCanonical, 0)
        );
        assert_eq!(varint::decode_u64(&bytes, lenient).unwrap(), (0, len));
    }
    // A single zero byte is the canonical form of 0.
    assert_eq!(
        varint::decode_u64(&[0], VarintFormat::SIDECAR).unwrap(),
        (0, 1)
    );
}

#[test]
fn varint_overflow_at_ninth_and_tenth_byte() {
    // SIDECAR: the 9th byte may not continue; all 63 value bits are fine.
    let mut max9 = vec![0xffu8; 8];
    max9.push(0x7f);
    assert_eq!(
        varint::decode_u64(&max9, VarintFormat::SIDECAR).unwrap(),
        (i64::MAX as u64, 9)
    );
    let mut cont9 = vec![0xffu8; 9];
    cont9.push(0x01);
    assert_eq!(
        kind_offset(varint::decode_u64(&cont9, VarintFormat::SIDECAR).unwrap_err()),
        (ErrorKind::VarintOverflow, 0)
    );
    // U64: the 10th byte carries only bit 63.
    let mut max10 = vec![0xffu8; 9];
    max10.push(0x01);
    assert_eq!(
        varint::decode_u64(&max10, VarintFormat::U64).unwrap(),
        (u64::MAX, 10)
    );
    for tenth in [0x02u8, 0x7f, 0x80, 0x81, 0xff] {
        let mut bad = vec![0xffu8; 9];
        bad.push(tenth);
        bad.push(0x00);
        assert_eq!(
            kind_offset(varint::decode_u64(&bad, VarintFormat::U64).unwrap_err()),
            (ErrorKind::VarintOverflow, 0),
            "tenth byte {tenth:#x}"
        );
    }
}

#[test]
fn varint_truncation_at_every_byte() {
    let mut rng = Rng::new(3);
    for len in 1..=10u32 {
        let v = oracle::value_of_len(&mut rng, len);
        let enc = oracle::encode(v);
        for cut in 0..enc.len() {
            let e = varint::decode_u64(&enc[..cut], VarintFormat::U64).unwrap_err();
            assert_eq!(kind_offset(e), (ErrorKind::Truncated, cut as u64));
        }
    }
}

fn random_sorted(rng: &mut Rng, n: usize, max_len: u32) -> Vec<u64> {
    let mut v = 0u64;
    (0..n)
        .map(|_| {
            let len = 1 + rng.below(u64::from(max_len)) as u32;
            let d = oracle::value_of_len(rng, len) >> 8; // keep the sum far from overflow
            v = v.saturating_add(d % (1 << 40));
            v
        })
        .collect()
}

#[test]
fn delta_stream_round_trip_lazy_and_bulk() {
    let mut rng = Rng::new(4);
    for round in 0..scale(300) {
        let n = rng.below(200) as usize;
        let base = rng.below(1000);
        let values: Vec<u64> = random_sorted(&mut rng, n, 9)
            .into_iter()
            .map(|v| v + base)
            .collect();
        let mut bytes = Vec::new();
        varint::push_deltas(&mut bytes, base, &values).unwrap();

        // Lazy, with count.
        let mut it = DeltaIter::new(&bytes, base, VarintFormat::SIDECAR).with_count(n as u64);
        let lazy: Vec<u64> = it.by_ref().map(Result::unwrap).collect();
        assert_eq!(lazy, values);
        it.finish().unwrap();
        // Lazy, to the end of the bytes.
        let lazy: Vec<u64> = DeltaIter::new(&bytes, base, VarintFormat::SIDECAR)
            .map(Result::unwrap)
            .collect();
        assert_eq!(lazy, values);
        // Bulk, in chunks of a random size.
        let chunk = 1 + (round % 17);
        let mut it = DeltaIter::new(&bytes, base, VarintFormat::SIDECAR).with_count(n as u64);
        let mut got = Vec::new();
        let mut buf = vec![0u64; chunk];
        loop {
            let k = it.decode_into(&mut buf).unwrap();
            if k == 0 {
                break;
            }
            got.extend_from_slice(&buf[..k]);
        }
        assert_eq!(got, values);
        assert_eq!(it.remaining(), Some(0));
        it.finish().unwrap();
        // Against the naive reference.
        let naive = oracle::decode_deltas(&bytes, 9, true, base, 0, u64::MAX, n).unwrap();
        assert_eq!((naive.0, naive.1), (values.clone(), bytes.len()));
    }
}

#[test]
fn delta_stream_errors_match_naive_on_random_bytes() {
    let mut rng = Rng::new(5);
    for _ in 0..scale(5_000) {
        let len = rng.below(40) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                if rng.below(4) == 0 {
                    rng.next_u64() as u8 | 0x80
                } else {
                    rng.next_u64() as u8 & 0x7f
                }
            })
            .collect();
        let count = rng.below(30) as usize;
        let base = if rng.below(4) == 0 {
            u64::MAX - rng.below(300)
        } else {
            rng.below(300)
        };
        let (min, max) = (rng.below(200), 200 + rng.below(5000));
        for format in [
            VarintFormat::SIDECAR,
            VarintFormat::U64,
            VarintFormat::U64_LENIENT,
        ] {
            let naive = oracle::decode_deltas(
                &bytes,
                format.max_len().into(),
                format.is_canonical(),
                base,
                min,
                max,
                count,
            );
            // Bulk.
            let mut out = vec![0u64; count];
            let mut it = DeltaIter::new(&bytes, base, format)
                .with_count(count as u64)
                .with_bounds(min, max)
                .with_origin(1000);
            let bulk = it.decode_into(&mut out);
            // Lazy.
            let lazy: Result<Vec<u64>, Error> = DeltaIter::new(&bytes, base, format)
                .with_count(count as u64)
                .with_bounds(min, max)
                .with_origin(1000)
                .collect();
            match &naive {
                Ok((values, used)) => {
                    assert_eq!(bulk.unwrap(), count);
                    assert_eq!(&out, values);
                    assert_eq!(it.position(), 1000 + *used as u64);
                    assert_eq!(&lazy.unwrap(), values);
                }
                Err((kind, offset)) => {
                    assert_eq!(
                        kind_offset(bulk.unwrap_err()),
                        (*kind, offset + 1000),
                        "{bytes:02x?}"
                    );
                    assert_eq!(kind_offset(lazy.unwrap_err()), (*kind, offset + 1000));
                }
            }
        }
    }
}

#[test]
fn zigzag_stream_round_trip_and_naive() {
    let mut rng = Rng::new(6);
    for _ in 0..scale(300) {
        let n = rng.below(150) as usize;
        let mut v = 0i64;
        let values: Vec<i64> = (0..n)
            .map(|_| {
                let len = 1 + rng.below(9) as u32;
                let d = (oracle::value_of_len(&mut rng, len) >> 4) as i64 % (1 << 50);
                v = if rng.below(2) == 0 {
                    v.saturating_add(d)
                } else {
                    v.saturating_sub(d)
                };
                v
            })
            .collect();
        let mut bytes = Vec::new();
        varint::push_zigzag_deltas(&mut bytes, 0, &values).unwrap();
        let lazy: Vec<i64> = ZigZagDeltaIter::zigzag(&bytes, 0, VarintFormat::U64)
            .map(Result::unwrap)
            .collect();
        assert_eq!(lazy, values);
        let mut out = vec![0i64; n];
        let mut it = ZigZagDeltaIter::zigzag(&bytes, 0, VarintFormat::U64).with_count(n as u64);
        assert_eq!(it.decode_into(&mut out).unwrap(), n);
        assert_eq!(out, values);
        it.finish().unwrap();
        let naive =
            oracle::decode_zigzag_deltas(&bytes, 10, true, 0, i64::MIN, i64::MAX, n).unwrap();
        assert_eq!(naive.0, values);
    }
    // Random bytes: errors and values as the naive decoder.
    for _ in 0..scale(5_000) {
        let len = rng.below(40) as usize;
        let bytes = rng.bytes(len);
        let count = rng.below(20) as usize;
        let base = [0, i64::MAX - 5, i64::MIN + 5][rng.below(3) as usize];
        let naive =
            oracle::decode_zigzag_deltas(&bytes, 10, true, base, -1_000_000, i64::MAX, count);
        let mut out = vec![0i64; count];
        let mut it = ZigZagDeltaIter::zigzag(&bytes, base, VarintFormat::U64)
            .with_count(count as u64)
            .with_bounds(-1_000_000, i64::MAX);
        match naive {
            Ok((values, _)) => {
                it.decode_into(&mut out).unwrap();
                assert_eq!(out, values);
            }
            Err(e) => assert_eq!(kind_offset(it.decode_into(&mut out).unwrap_err()), e),
        }
    }
}

#[test]
fn zigzag_examples_from_the_blob_spec() {
    // -2 -> 03, -1 -> 01, 0 -> 00, 1 -> 02, 22 -> 2c, 64 -> 80 01, -65 -> 81 01.
    for (v, enc) in [
        (-2i64, &[0x03u8][..]),
        (-1, &[0x01]),
        (0, &[0x00]),
        (1, &[0x02]),
        (22, &[0x2c]),
        (64, &[0x80, 0x01]),
        (-65, &[0x81, 0x01]),
    ] {
        let mut buf = [0u8; 10];
        let n = varint::encode_u64(varint::zigzag_encode(v), &mut buf);
        assert_eq!(&buf[..n], enc);
        assert_eq!(
            varint::zigzag_decode(varint::decode_u64(enc, VarintFormat::U64).unwrap().0),
            v
        );
    }
    assert_eq!(varint::zigzag_encode(i64::MIN), u64::MAX);
    assert_eq!(varint::zigzag_decode(u64::MAX), i64::MIN);
}

#[test]
fn delta_iter_early_stop_finish_and_fuse() {
    let bytes = [1u8, 1, 1, 1, 7];
    // Early stop: take two, drop.
    let first_two: Vec<u64> = DeltaIter::new(&bytes, 0, VarintFormat::SIDECAR)
        .take(2)
        .map(Result::unwrap)
        .collect();
    assert_eq!(first_two, [1, 2]);
    // finish() validates what was not consumed.
    let mut it = DeltaIter::new(&bytes, 0, VarintFormat::SIDECAR)
        .with_count(5)
        .with_bounds(0, 5);
    assert_eq!(it.next().unwrap().unwrap(), 1);
    assert_eq!(
        kind_offset(it.finish().unwrap_err()),
        (ErrorKind::OutOfBounds, 4)
    );
    // Trailing bytes after the declared count.
    let it = DeltaIter::new(&bytes, 0, VarintFormat::SIDECAR).with_count(4);
    assert_eq!(
        kind_offset(it.finish().unwrap_err()),
        (ErrorKind::TrailingBytes, 4)
    );
    // Count larger than the bytes: truncated where the next varint should start.
    let it = DeltaIter::new(&bytes, 0, VarintFormat::SIDECAR)
        .with_count(6)
        .with_origin(50);
    assert_eq!(
        kind_offset(it.finish().unwrap_err()),
        (ErrorKind::Truncated, 55)
    );
    // Fused after an error.
    let mut it = DeltaIter::new(&[0x80u8, 0x00, 0x01], 0, VarintFormat::SIDECAR);
    assert_eq!(
        it.next().unwrap().unwrap_err().kind,
        ErrorKind::VarintNonCanonical
    );
    assert!(it.next().is_none());
    assert!(it.error().is_some());
    // Sum overflow.
    let mut it = DeltaIter::new(&[0x02u8], u64::MAX - 1, VarintFormat::U64);
    assert_eq!(
        kind_offset(it.next().unwrap().unwrap_err()),
        (ErrorKind::ArithmeticOverflow, 0)
    );
}

#[test]
fn push_deltas_rejects_unsorted() {
    let mut out = Vec::new();
    assert_eq!(
        kind_offset(varint::push_deltas(&mut out, 5, &[5, 6, 4]).unwrap_err()),
        (ErrorKind::NotSorted, 2)
    );
    assert_eq!(
        kind_offset(varint::push_deltas(&mut out, 5, &[4]).unwrap_err()),
        (ErrorKind::NotSorted, 0)
    );
}

#[test]
fn count_matches_naive() {
    let mut rng = Rng::new(7);
    for _ in 0..scale(10_000) {
        let len = rng.below(64) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                if rng.below(3) == 0 {
                    rng.next_u64() as u8 | 0x80
                } else {
                    rng.next_u64() as u8
                }
            })
            .collect();
        for format in all_formats() {
            let ours = varint::count(&bytes, format).map_err(kind_offset);
            assert_eq!(
                ours,
                oracle::count(&bytes, format.max_len().into(), format.is_canonical())
            );
        }
    }
}

#[test]
fn bitpack_every_width_matches_naive() {
    let mut rng = Rng::new(8);
    for width in 0..=64u32 {
        for _ in 0..scale(40) {
            let n = rng.below(100) as usize;
            let values: Vec<u64> = (0..n)
                .map(|_| rng.next_u64() & oracle::mask(width))
                .collect();
            let packed = bitpack::pack(&values, width as u8).unwrap();
            assert_eq!(packed, oracle::pack(&values, width), "width {width}");
            assert_eq!(packed.len(), bitpack::packed_len(width as u8, n).unwrap());
            let view = BitPacked::new(&packed, width as u8, n).unwrap();
            for (i, &v) in values.iter().enumerate() {
                assert_eq!(view.get(i), Some(v));
                assert_eq!(oracle::get(&packed, width, i as u64), v);
            }
            assert_eq!(view.get(n), None);
            assert_eq!(view.iter().collect::<Vec<_>>(), values);
            // Range unpack at a random start.
            let start = if n == 0 {
                0
            } else {
                rng.below(n as u64) as usize
            };
            let count = n - start;
            let mut out64 = vec![0u64; count];
            view.unpack_u64(start, &mut out64).unwrap();
            assert_eq!(out64, values[start..]);
            if width <= 32 {
                let mut out32 = vec![0u32; count];
                view.unpack_u32(start, &mut out32).unwrap();
                assert_eq!(
                    out32.iter().map(|&x| u64::from(x)).collect::<Vec<_>>(),
                    values[start..]
                );
            } else {
                let mut out32 = vec![0u32; count];
                assert_eq!(
                    view.unpack_u32(start, &mut out32).unwrap_err().kind,
                    ErrorKind::InvalidBitWidth
                );
            }
            // Past the end.
            let mut one = [0u64; 1];
            assert_eq!(
                kind_offset(view.unpack_u64(n, &mut one).unwrap_err()),
                (ErrorKind::OutOfBounds, n as u64)
            );
        }
    }
}

#[test]
fn bitpack_view_rejects_bad_framing() {
    // 3 values of width 3 = 9 bits = 2 bytes; the top 7 bits of byte 1 are padding.
    let good = bitpack::pack(&[1, 2, 3], 3).unwrap();
    assert!(BitPacked::new(&good, 3, 3).is_ok());
    for bit in 1..8 {
        let mut bad = good.clone();
        bad[1] |= 1 << bit;
        assert_eq!(
            kind_offset(BitPacked::new(&bad, 3, 3).unwrap_err()),
            (ErrorKind::NonZeroPadding, 1)
        );
    }
    assert_eq!(
        kind_offset(BitPacked::new(&good[..1], 3, 3).unwrap_err()),
        (ErrorKind::Truncated, 1)
    );
    let mut long = good.clone();
    long.push(0);
    assert_eq!(
        kind_offset(BitPacked::new(&long, 3, 3).unwrap_err()),
        (ErrorKind::TrailingBytes, 2)
    );
    let (view, rest) = BitPacked::from_prefix(&long, 3, 3).unwrap();
    assert_eq!((view.len(), rest), (3, &[0u8][..]));
    assert_eq!(
        BitPacked::new(&good, 65, 1).unwrap_err().kind,
        ErrorKind::InvalidBitWidth
    );
    assert_eq!(
        bitpack::pack(&[8], 3).unwrap_err().kind,
        ErrorKind::OutOfBounds
    );
    assert!(BitPackWriter::new(65).is_err());
    // Width 0: no bytes, every value 0.
    let zero = BitPacked::new(&[], 0, 1000).unwrap();
    assert_eq!(zero.get(999), Some(0));
    assert_eq!(bitpack::width_for(0), 0);
    assert_eq!(bitpack::width_for(255), 8);
    assert_eq!(bitpack::width_for(u64::MAX), 64);
    assert_eq!(bitpack::packed_len(64, usize::MAX), None);
}

#[test]
fn cursor_fixed_ints_match_std() {
    let mut rng = Rng::new(9);
    for _ in 0..scale(500) {
        let bytes = rng.bytes(8);
        let arr: [u8; 8] = bytes.clone().try_into().unwrap();
        let mut c = Cursor::new(&bytes);
        assert_eq!(c.u64_be().unwrap(), u64::from_be_bytes(arr));
        let mut c = Cursor::new(&bytes);
        assert_eq!(c.u64_le().unwrap(), u64::from_le_bytes(arr));
        let mut c = Cursor::new(&bytes);
        assert_eq!(c.i64_be().unwrap(), i64::from_be_bytes(arr));
        let mut c = Cursor::new(&bytes);
        assert_eq!(c.i64_le().unwrap(), i64::from_le_bytes(arr));
        let mut c = Cursor::new(&bytes);
        let a4: [u8; 4] = arr[..4].try_into().unwrap();
        let b4: [u8; 4] = arr[4..].try_into().unwrap();
        assert_eq!(c.u32_be().unwrap(), u32::from_be_bytes(a4));
        assert_eq!(c.i32_le().unwrap(), i32::from_le_bytes(b4));
        let mut c = Cursor::new(&bytes);
        assert_eq!(c.i32_be().unwrap(), i32::from_be_bytes(a4));
        assert_eq!(c.u32_le().unwrap(), u32::from_le_bytes(b4));
        let mut c = Cursor::new(&bytes);
        assert_eq!(c.u16_be().unwrap(), u16::from_be_bytes([arr[0], arr[1]]));
        assert_eq!(c.u16_le().unwrap(), u16::from_le_bytes([arr[2], arr[3]]));
        assert_eq!(c.u8().unwrap(), arr[4]);
        assert_eq!(c.array::<3>().unwrap(), &[arr[5], arr[6], arr[7]]);
        assert!(c.is_empty());
        c.expect_end().unwrap();
    }
}

#[test]
fn cursor_truncation_at_every_length_keeps_position() {
    let data: Vec<u8> = (0u8..16).collect();
    for len in 0..8 {
        let mut c = Cursor::with_origin(&data[..len], 100);
        let e = c.u64_be().unwrap_err();
        assert_eq!(kind_offset(e), (ErrorKind::Truncated, 100 + len as u64));
        assert_eq!(c.position(), 100, "a failed read does not advance");
        assert_eq!(c.remaining(), len);
    }
    let mut c = Cursor::with_origin(&data, 7);
    c.skip(3).unwrap();
    assert_eq!(c.position(), 10);
    assert_eq!(c.index(), 3);
    assert_eq!(
        kind_offset(c.bytes(14).unwrap_err()),
        (ErrorKind::Truncated, 23)
    );
    assert_eq!(
        kind_offset(c.bytes_u64(u64::MAX).unwrap_err()),
        (ErrorKind::Truncated, 23)
    );
    assert_eq!(c.bytes(13).unwrap(), &data[3..]);
    assert_eq!(kind_offset(c.u8().unwrap_err()), (ErrorKind::Truncated, 23));
    let c = Cursor::with_origin(&data, 7);
    assert_eq!(
        kind_offset(c.expect_end().unwrap_err()),
        (ErrorKind::TrailingBytes, 7)
    );
}

#[test]
fn cursor_lengths_and_varints() {
    let mut c = Cursor::with_origin(&[0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 5], 40);
    assert_eq!(
        kind_offset(c.len_i32_be().unwrap_err()),
        (ErrorKind::InvalidLength, 40)
    );
    assert_eq!(c.len_i32_be().unwrap(), 5);
    let mut c = Cursor::with_origin(&[0x80, 0x80, 0x00, 0x05, 0x96, 0x01], 10);
    assert_eq!(
        kind_offset(c.uvarint(VarintFormat::SIDECAR).unwrap_err()),
        (ErrorKind::VarintNonCanonical, 10)
    );
    c.skip(3).unwrap();
    assert_eq!(c.uvarint(VarintFormat::SIDECAR).unwrap(), 5);
    assert_eq!(
        kind_offset(c.uvarint_max(VarintFormat::SIDECAR, 149).unwrap_err()),
        (ErrorKind::OutOfBounds, 14)
    );
    assert_eq!(c.position(), 14, "a rejected varint does not advance");
    assert_eq!(c.uvarint_max(VarintFormat::SIDECAR, 150).unwrap(), 150);
    let mut c = Cursor::with_origin(&[0x80], 3);
    assert_eq!(
        kind_offset(c.uvarint(VarintFormat::U64).unwrap_err()),
        (ErrorKind::Truncated, 4)
    );
}

#[test]
fn cursor_reads_zerocopy_structs_in_place() {
    use zerocopy::byteorder::big_endian::{I64, U32};
    use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};
    #[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
    #[repr(C)]
    struct Head {
        magic: [u8; 4],
        version: U32,
        length: I64,
    }
    let mut bytes = b"PMSC".to_vec();
    bytes.extend_from_slice(&1u32.to_be_bytes());
    bytes.extend_from_slice(&457i64.to_be_bytes());
    bytes.push(9);
    let mut c = Cursor::new(&bytes[..15]);
    assert_eq!(
        c.reference::<Head>().err().map(|e| e.kind),
        Some(ErrorKind::Truncated)
    );
    let mut c = Cursor::new(&bytes);
    let head = c.reference::<Head>().unwrap();
    assert_eq!(
        (&head.magic, head.version.get(), head.length.get()),
        (b"PMSC", 1, 457)
    );
    assert_eq!(c.u8().unwrap(), 9);
}

#[test]
fn checksums_known_vectors() {
    assert_eq!(crc32(b""), 0);
    assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    let hex = |d: [u8; 32]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
    assert_eq!(
        hex(sha256(b"")),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        hex(sha256(b"abc")),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    let mut rng = Rng::new(10);
    let data = rng.bytes(scale(10_000));
    let (mut s, mut c) = (Sha256::new(), Crc32::new());
    for part in data.chunks(333) {
        s.update(part);
        c.update(part);
    }
    assert_eq!(s.finalize(), sha256(&data));
    assert_eq!(c.finalize(), crc32(&data));
}

#[test]
fn errors_display_kind_and_offset() {
    assert_eq!(
        Error::new(ErrorKind::ChecksumMismatch, 5).to_string(),
        "checksum mismatch at byte 5"
    );
    assert_eq!(
        Error::new(ErrorKind::NeedsBytes { end: 20 }, 10).to_string(),
        "needs bytes [10, 20)"
    );
    assert_eq!(
        Error::new(ErrorKind::Truncated, u64::MAX).shifted(1).offset,
        u64::MAX
    );
    fn is_error<E: core::error::Error + Copy + Send + Sync + 'static>() {}
    is_error::<Error>();
    // The kind (16 bytes: `NeedsBytes` carries a u64), the offset (8) and the one-byte
    // location, padded to the u64 alignment: 32. Still small enough to return by value.
    assert!(core::mem::size_of::<Error>() <= 32);
}

#[test]
fn errors_display_their_location() {
    use lakecore::error::Location;
    let cases = [
        (Location::Byte, "not sorted at byte 3"),
        (Location::Entry, "not sorted at entry 3"),
        (Location::Row, "not sorted at row 3"),
        (Location::Range, "not sorted at range 3"),
        (Location::Layer, "not sorted at layer 3"),
        (Location::Whole, "not sorted"),
    ];
    for (at, text) in cases {
        let e = Error::at_item(ErrorKind::NotSorted, at, 3);
        assert_eq!((e.kind, e.at, e.offset), (ErrorKind::NotSorted, at, 3));
        assert_eq!(e.to_string(), text);
        // Only byte offsets move when an error is placed in a file.
        let moved = if at == Location::Byte { 103 } else { 3 };
        assert_eq!(
            e.shifted(100),
            Error::at_item(ErrorKind::NotSorted, at, moved)
        );
    }
    assert_eq!(
        Error::at_item(ErrorKind::Truncated, Location::Byte, 12),
        Error::new(ErrorKind::Truncated, 12)
    );
    assert_eq!(Error::new(ErrorKind::Truncated, 12).at, Location::Byte);
}
