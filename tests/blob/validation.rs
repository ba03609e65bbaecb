//! One test per BLOB validation rule (exact error kind and offset), verify-mode coverage,
//! selection, descriptors, nested payload checks, and mutation tests (flip / truncate every
//! byte: never a panic; a flipped record byte never passes verify mode).
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::type_complexity
)]
#![cfg(feature = "std")]

use lakecore::blob::{
    encode_array, encode_map, BlobArray, BlobDescriptor, BlobFile, BlobMap, BlobWriter,
    CrcCoverage, CrcMode, IoSink, Row, RowRange, DESCRIPTOR_MAGIC,
};
use lakecore::{Error, ErrorKind, Location};

use lakecore_testkit::blob::exercise;

/// G2: "inline" (record 0..22), NULL, PLACEHOLDER; index 22..25, footer 25..30.
const G2: [u8; 30] = [
    0xcf, 0x11, 0x4e, 0x58, b'i', b'n', b'l', b'i', b'n', b'e', 0x16, 0, 0, 0, 0, 0, 0, 0, 0x29,
    0x60, 0xc8, 0xe9, 0x2c, 0x2d, 0x01, 0x03, 0, 0, 0, 0x01,
];

fn err(bytes: &[u8]) -> (ErrorKind, u64) {
    let e = BlobFile::parse(bytes).unwrap_err();
    (e.kind, e.offset)
}

/// A file from raw data bytes and raw index bytes.
fn file_of(data: &[u8], index: &[u8]) -> Vec<u8> {
    let mut v = data.to_vec();
    v.extend_from_slice(index);
    v.extend_from_slice(&(index.len() as i32).to_le_bytes());
    v.push(1);
    v
}

#[test]
fn rule1_shorter_than_footer() {
    for n in 0..5 {
        let short = vec![0u8; n];
        assert_eq!(err(&short), (ErrorKind::Truncated, n as u64));
    }
}

#[test]
fn rule1_version() {
    let mut b = G2;
    b[29] = 2;
    assert_eq!(err(&b), (ErrorKind::UnsupportedVersion, 29));
    b[29] = 0;
    assert_eq!(err(&b), (ErrorKind::UnsupportedVersion, 29));
}

#[test]
fn rule1_index_len_negative_or_too_large() {
    let mut b = G2;
    b[25..29].copy_from_slice(&(-1i32).to_le_bytes());
    assert_eq!(err(&b), (ErrorKind::InvalidLength, 25));
    b[25..29].copy_from_slice(&26i32.to_le_bytes());
    assert_eq!(err(&b), (ErrorKind::InvalidLength, 25));
    // 25 (= everything before the footer) is in range: the record bytes become index bytes.
    b[25..29].copy_from_slice(&25i32.to_le_bytes());
    assert_ne!(err(&b).0, ErrorKind::InvalidLength);
}

#[test]
fn rule2_truncated_varint() {
    // Index `01 80`: NULL, then a varint with no last byte; more bytes were needed at 2.
    assert_eq!(err(&file_of(&[], &[0x01, 0x80])), (ErrorKind::Truncated, 2));
    // Nine continuation bytes at the end: still short of the 10-byte limit, so truncated.
    let mut index = vec![0x01];
    index.extend([0xff; 9]);
    assert_eq!(err(&file_of(&[], &index)), (ErrorKind::Truncated, 10));
    // Ten continuation bytes: overlong, reported at the varint's first byte.
    index.push(0xff);
    assert_eq!(err(&file_of(&[], &index)), (ErrorKind::VarintOverflow, 1));
}

#[test]
fn rule2_overlong_and_non_canonical_varints() {
    assert_eq!(
        err(&file_of(
            &[],
            &[0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]
        )),
        (ErrorKind::VarintOverflow, 1)
    );
    assert_eq!(
        err(&file_of(&[], &[0x03, 0x81, 0x00])),
        (ErrorKind::VarintNonCanonical, 1)
    );
}

#[test]
fn rule2_prefix_sum_overflow() {
    // i64::MAX (ZigZag 0xffff_ffff_ffff_fffe), then +1 overflows at the second varint.
    let mut index = vec![0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
    index.push(0x02);
    assert_eq!(
        err(&file_of(&[], &index)),
        (ErrorKind::ArithmeticOverflow, 10)
    );
}

#[test]
fn rule3_entries_must_be_null_placeholder_or_at_least_16() {
    // 15 (ZigZag 30 = 0x1e) after a NULL.
    assert_eq!(
        err(&file_of(&[], &[0x01, 0x20])),
        (ErrorKind::InvalidValue, 1)
    );
    for (index, at) in [
        (&[0x00][..], 0),             // 0
        (&[0x1e][..], 0),             // 15
        (&[0x05][..], 0),             // -3
        (&[0x03, 0x03][..], 1),       // -2 then -4
        (&[0x01, 0x01, 0x01][..], 2), // -1, -2, -3
    ] {
        assert_eq!(
            err(&file_of(&[], index)),
            (ErrorKind::InvalidValue, at),
            "{index:?}"
        );
    }
}

#[test]
fn rule3_entry_must_fit_in_data_region() {
    // Data region of 22 bytes (G2's record), index: 22 then +1 -> 23 (runs past the data).
    let data = &G2[..22];
    assert_eq!(err(&file_of(data, &[0x2e])), (ErrorKind::OutOfBounds, 22));
    // Two records of 22 bytes claimed over one: the second runs past.
    assert_eq!(
        err(&file_of(data, &[0x2c, 0x00])),
        (ErrorKind::OutOfBounds, 23)
    );
}

#[test]
fn rule4_lengths_tile_the_data_region() {
    // One NULL row over 22 bytes of data: nothing accounts for them.
    assert_eq!(
        err(&file_of(&G2[..22], &[0x01])),
        (ErrorKind::TrailingBytes, 0)
    );
    // A 16-byte record claimed over 22 bytes: 6 trailing bytes at 16.
    assert_eq!(
        err(&file_of(&G2[..22], &[0x20])),
        (ErrorKind::TrailingBytes, 16)
    );
    // An empty index over data.
    assert_eq!(err(&file_of(&G2[..22], &[])), (ErrorKind::TrailingBytes, 0));
}

#[test]
fn rule5_expected_row_count_and_size() {
    use lakecore::blob::{BlobOptions, FileFacts};
    let ok = FileFacts {
        row_count: Some(3),
        file_size: Some(30),
    };
    assert!(BlobFile::parse_with(&G2, &BlobOptions { expected: ok }).is_ok());
    let e = BlobFile::parse_with(
        &G2,
        &BlobOptions {
            expected: FileFacts {
                row_count: Some(2),
                ..ok
            },
        },
    )
    .unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::Mismatch, 22));
    let e = BlobFile::parse_with(
        &G2,
        &BlobOptions {
            expected: FileFacts {
                file_size: Some(31),
                ..ok
            },
        },
    )
    .unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::Mismatch, 30));
}

fn verify_err(bytes: &[u8]) -> (ErrorKind, u64) {
    let e = BlobFile::parse(bytes).unwrap().verify().unwrap_err();
    (e.kind, e.offset)
}

#[test]
fn rule6_verify_magic_length_crc() {
    let mut b = G2;
    b[1] ^= 1;
    assert_eq!(verify_err(&b), (ErrorKind::BadMagic, 0));
    let mut b = G2;
    b[10] = 0x17;
    assert_eq!(verify_err(&b), (ErrorKind::Mismatch, 10));
    let mut b = G2;
    b[19] ^= 0x40;
    assert_eq!(verify_err(&b), (ErrorKind::ChecksumMismatch, 18));
    let mut b = G2;
    b[5] = b'N';
    assert_eq!(verify_err(&b), (ErrorKind::ChecksumMismatch, 18));
}

#[test]
fn verify_reports_payload_only_and_mixed_coverage() {
    let mut w = BlobWriter::with_crc(Vec::new(), CrcMode::PayloadOnly);
    w.put_value(b"abc").unwrap();
    w.put_value(b"").unwrap();
    let bytes = w.finish().unwrap();
    let report = BlobFile::parse(&bytes).unwrap().verify().unwrap();
    assert_eq!((report.full, report.payload_only), (0, 2));
    assert_eq!(report.coverage(), CrcCoverage::PayloadOnly);
    // Independent check of the payload-only CRC of the first record.
    assert_eq!(
        u32::from_le_bytes(bytes[15..19].try_into().unwrap()),
        crc32fast::hash(&bytes[..7])
    );

    // Mixed: a full-coverage record followed by a payload-only one.
    let full = &G2[..22];
    let mut data = full.to_vec();
    data.extend_from_slice(&bytes[..19]);
    let mixed = file_of(&data, &[0x2c, 0x05]); // 22, then 22 - 3 = 19
    let report = BlobFile::parse(&mixed).unwrap().verify().unwrap();
    assert_eq!((report.full, report.payload_only), (1, 1));
    assert_eq!(report.coverage(), CrcCoverage::Mixed);
    assert_eq!(CrcCoverage::Mixed.name(), "mixed");
}

#[test]
fn selection_checks_and_skips() {
    let file = BlobFile::parse(&G2).unwrap();
    let e = file.select(&[RowRange::new(2, 1)]).unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::InvalidValue, 0));
    let e = file
        .select(&[RowRange::new(1, 1), RowRange::new(0, 0)])
        .unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::NotSorted, 1));
    let e = file
        .select(&[RowRange::new(0, 1), RowRange::new(1, 2)])
        .unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::NotSorted, 1));
    let e = file
        .select(&[RowRange::new(0, 0), RowRange::new(2, 3)])
        .unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::OutOfBounds, 1));
    let picked: Vec<(u64, Row)> = file
        .select(&[RowRange::single(0), RowRange::single(2)])
        .unwrap()
        .collect();
    assert_eq!(picked.len(), 2);
    assert_eq!(picked[0].1.payload(), Some(&b"inline"[..]));
    assert_eq!(picked[1], (2, Row::Placeholder));
    assert_eq!(file.select(&[]).unwrap().count(), 0);
}

#[test]
fn selection_errors_name_the_range_not_a_byte() {
    use lakecore::select::RowRanges;
    let file = BlobFile::parse(&G2).unwrap();
    let e = file
        .select(&[RowRange::new(0, 0), RowRange::new(2, 3)])
        .unwrap_err();
    assert_eq!(
        (e.kind, e.at, e.offset),
        (ErrorKind::OutOfBounds, Location::Range, 1)
    );
    assert_eq!(e.to_string(), "value out of bounds at range 1");
    let unsorted = [RowRange::new(1, 1), RowRange::new(0, 0)];
    let e = file.select(&unsorted).unwrap_err();
    assert_eq!(e.to_string(), "not sorted at range 1");
    // The shared checker says the same, and the view's own check agrees with it.
    assert_eq!(RowRanges::try_new(&unsorted).unwrap_err(), e);
    assert_eq!(RowRanges::new(&unsorted), None);
    let e = RowRanges::try_new(&[RowRange::new(2, 1)]).unwrap_err();
    assert_eq!(
        (e.kind, e.at, e.offset),
        (ErrorKind::InvalidValue, Location::Range, 0)
    );
    assert_eq!(e.to_string(), "invalid value at range 0");
    // Normalised ranges always pass: the same rows, in selection order.
    let mut any = [
        RowRange::new(2, 2),
        RowRange::new(0, 1),
        RowRange::new(1, 0),
    ];
    let rows: Vec<u64> = file
        .select(RowRanges::normalize(&mut any).as_slice())
        .unwrap()
        .map(|(row, _)| row)
        .collect();
    assert_eq!(rows, [0, 1, 2]);
}

#[test]
fn selection_matches_naive_filter_on_a_larger_file() {
    let mut w = BlobWriter::new(Vec::new());
    for i in 0..500u32 {
        match i % 7 {
            0 => w.put_null().unwrap(),
            3 => w.put_placeholder().unwrap(),
            _ => {
                w.put_value(&i.to_le_bytes().repeat((i % 5) as usize))
                    .unwrap();
            }
        }
    }
    let bytes = w.finish().unwrap();
    let file = BlobFile::parse(&bytes).unwrap();
    let all: Vec<Row> = file.iter().collect();
    let ranges = [
        RowRange::new(0, 0),
        RowRange::new(5, 70),
        RowRange::new(71, 71),
        RowRange::new(200, 260),
        RowRange::new(499, 499),
    ];
    let got: Vec<(u64, Row)> = file.select(&ranges).unwrap().collect();
    let want: Vec<(u64, Row)> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| ranges.iter().any(|r| r.contains(*i as u64)))
        .map(|(i, r)| (i as u64, *r))
        .collect();
    assert_eq!(got, want);
    let table = file.offsets_table().unwrap();
    assert_eq!(table.len(), 500);
    for (i, r) in all.iter().enumerate() {
        assert_eq!(table.get(i), Some(*r));
        assert_eq!(file.iter().nth(i), Some(*r));
    }
}

#[test]
fn writer_reports_positions_and_streams_to_io() {
    let mut w = BlobWriter::new(IoSink(Vec::new()));
    assert_eq!(w.put_value(b"inline").unwrap(), 4);
    assert_eq!(w.position(), 22);
    w.put_null().unwrap();
    w.put_placeholder().unwrap();
    assert_eq!(w.rows(), 3);
    assert_eq!(w.projected_size(), 30);
    let IoSink(bytes) = w.finish().unwrap();
    assert_eq!(bytes, G2);
}

#[test]
fn descriptors_round_trip_and_check() {
    let file = BlobFile::parse(&G2).unwrap();
    let Some(Row::Value(p)) = file.iter().next() else {
        panic!()
    };
    let d = BlobDescriptor::for_payload("file:///t/x.blob", &p);
    assert_eq!((d.offset, d.length), (4, 6));
    let mut v2 = Vec::new();
    d.encode(&mut v2).unwrap();
    assert_eq!(v2.len(), 29 + 16);
    assert_eq!(v2[0], 2);
    assert_eq!(&v2[1..9], &DESCRIPTOR_MAGIC.to_le_bytes());
    assert_eq!(&v2[1..9], b"CSEDBOLB");
    assert_eq!(BlobDescriptor::decode(&v2).unwrap(), d);
    let v1d = BlobDescriptor { version: 1, ..d };
    let mut v1 = Vec::new();
    v1d.encode(&mut v1).unwrap();
    assert_eq!(v1.len(), 21 + 16);
    assert_eq!(&v1[1..5], &16i32.to_le_bytes());
    assert_eq!(BlobDescriptor::decode(&v1).unwrap(), v1d);
    // The descriptor points at the payload.
    let (o, l) = (d.offset as usize, d.length as usize);
    assert_eq!(&G2[o..o + l], b"inline");

    let kind = |b: &[u8]| {
        let e = BlobDescriptor::decode(b).unwrap_err();
        (e.kind, e.offset)
    };
    let mut b = v2.clone();
    b[0] = 3;
    assert_eq!(kind(&b), (ErrorKind::UnsupportedVersion, 0));
    let mut b = v2.clone();
    b[3] ^= 1;
    assert_eq!(kind(&b), (ErrorKind::BadMagic, 1));
    let mut b = v2.clone();
    b[9..13].copy_from_slice(&(-1i32).to_le_bytes());
    assert_eq!(kind(&b), (ErrorKind::InvalidLength, 9));
    let mut b = v2.clone();
    b[14] = 0xff;
    assert_eq!(kind(&b), (ErrorKind::InvalidValue, 14));
    let mut b = v2.clone();
    b[29 + 16 - 1] = 0x80; // length negative
    assert_eq!(kind(&b), (ErrorKind::InvalidValue, 29 + 16 - 8));
    let mut b = v2.clone();
    b.push(0);
    assert_eq!(kind(&b), (ErrorKind::TrailingBytes, 45));
    assert_eq!(kind(&v2[..44]).0, ErrorKind::Truncated);
    let mut small = [0u8; 10];
    assert_eq!(
        d.encode_into(&mut small).unwrap_err().kind,
        ErrorKind::Truncated
    );
}

fn array_err(p: &[u8]) -> (ErrorKind, u64) {
    let e = BlobArray::new(p, 100).unwrap_err();
    (e.kind, e.offset)
}

#[test]
fn nested_array_checks() {
    let mut good = Vec::new();
    encode_array([Some(&b"ab"[..]), None, Some(b"")], &mut good).unwrap();
    // BCBA 01 03000000 "ab" | 04 05 01 | 03000000
    assert_eq!(good.len(), 9 + 2 + 3 + 4);
    assert!(BlobArray::new(&good, 100).is_ok());
    assert_eq!(array_err(&good[..12]), (ErrorKind::Truncated, 112));
    let mut b = good.clone();
    b[3] = b'X';
    assert_eq!(array_err(&b), (ErrorKind::BadMagic, 100));
    let mut b = good.clone();
    b[4] = 2;
    assert_eq!(array_err(&b), (ErrorKind::UnsupportedVersion, 104));
    let mut b = good.clone();
    b[5..9].copy_from_slice(&(-1i32).to_le_bytes());
    assert_eq!(array_err(&b), (ErrorKind::InvalidLength, 105));
    let mut b = good.clone();
    b[14..18].copy_from_slice(&6i32.to_le_bytes()); // > 18 - 13
    assert_eq!(array_err(&b), (ErrorKind::InvalidLength, 114));
    let mut b = good.clone();
    b[5] = 4; // count 4, index holds 3
    assert_eq!(array_err(&b), (ErrorKind::Mismatch, 111));
    let mut b = good.clone();
    b[12] = 0x07; // 2 then -4 -> -2: not allowed in a nested index
    assert_eq!(array_err(&b), (ErrorKind::InvalidValue, 112));
    let mut b = good.clone();
    b[11] = 0x06; // first element 3 bytes: past the 2 element bytes
    assert_eq!(array_err(&b), (ErrorKind::OutOfBounds, 111));
    let mut b = good.clone();
    b[11..14].copy_from_slice(&[0x02, 0x03, 0x02]); // 1, -1, 0: one element byte unused
    assert_eq!(array_err(&b), (ErrorKind::TrailingBytes, 110));
    // Empty array vs NULL row: an empty array is a value.
    let mut empty = Vec::new();
    encode_array([], &mut empty).unwrap();
    assert_eq!(empty.len(), 13);
    assert!(BlobArray::new(&empty, 0).unwrap().is_empty());
}

fn map_err(p: &[u8]) -> (ErrorKind, u64) {
    let e = BlobMap::new(p, 1000).unwrap_err();
    (e.kind, e.offset)
}

#[test]
fn nested_map_checks() {
    let mut good = Vec::new();
    encode_map(
        [
            (Some(&b"k1"[..]), Some(&b"v"[..])),
            (None, None),
            (Some(b"k2"), Some(b"")),
        ],
        &mut good,
    )
    .unwrap();
    // BCBM 01 03000000 | k1 k2 | v | keys 04 05 06 | values 02 03 01 | 3 | 3
    assert_eq!(good.len(), 9 + 4 + 1 + 3 + 3 + 8);
    let map = BlobMap::new(&good, 1000).unwrap();
    assert_eq!(map.len(), 3);
    assert_eq!(map.get(Some(b"k2")).unwrap().unwrap().bytes, b"");
    assert_eq!(map.get(Some(b"k2")).unwrap().unwrap().offset, 1000 + 14);
    assert_eq!(map_err(&good[..16]), (ErrorKind::Truncated, 1016));
    let mut b = good.clone();
    b[0] = b'x';
    assert_eq!(map_err(&b), (ErrorKind::BadMagic, 1000));
    let n = good.len();
    let mut b = good.clone();
    b[n - 8..n - 4].copy_from_slice(&(-2i32).to_le_bytes());
    assert_eq!(map_err(&b), (ErrorKind::InvalidLength, 1000 + n as u64 - 8));
    let mut b = good.clone();
    b[n - 4..].copy_from_slice(&((n - 17 - 3 + 1) as i32).to_le_bytes());
    assert_eq!(map_err(&b), (ErrorKind::InvalidLength, 1000 + n as u64 - 4));
    // Duplicate keys: "k1" twice.
    let mut b = good.clone();
    b[12] = b'1';
    assert_eq!(map_err(&b), (ErrorKind::Duplicate, 1011));
    // Two null keys.
    let mut dup = Vec::new();
    assert_eq!(
        encode_map(
            [
                (None, Some(&b"a"[..])),
                (Some(&b"x"[..]), None),
                (None, None)
            ],
            &mut dup
        )
        .unwrap_err(),
        Error::at_item(ErrorKind::Duplicate, Location::Entry, 2)
    );
}

#[test]
fn nested_map_duplicates_in_large_maps() {
    // Above the pairwise threshold the check sorts; both paths report the first duplicate.
    let keys: Vec<[u8; 4]> = (0..200u32).map(|i| i.to_le_bytes()).collect();
    let mut entries: Vec<(Option<&[u8]>, Option<&[u8]>)> = keys
        .iter()
        .map(|k| (Some(&k[..]), Some(&b"v"[..])))
        .collect();
    let mut out = Vec::new();
    encode_map(entries.clone(), &mut out).unwrap();
    assert_eq!(BlobMap::new(&out, 0).unwrap().iter().count(), 200);
    // Make key 150 equal key 20 by patching the bytes in place.
    let at = 9 + 150 * 4;
    out[at..at + 4].copy_from_slice(&20u32.to_le_bytes());
    let e = BlobMap::new(&out, 0).unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::Duplicate, at as u64));
    entries[150].0 = Some(&keys[20]);
    assert_eq!(
        encode_map(entries, &mut Vec::new()).unwrap_err(),
        Error::at_item(ErrorKind::Duplicate, Location::Entry, 150)
    );
}

fn mutate_all(bytes: &[u8], records_end: usize) {
    for i in 0..bytes.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.to_vec();
            b[i] ^= mask;
            let r = exercise(&b);
            if i < records_end {
                assert!(r.is_err(), "flip {mask:#x} at {i} passed verify");
            }
        }
    }
    for n in 0..bytes.len() {
        let _ = exercise(&bytes[..n]);
    }
}

#[test]
fn mutation_golden_and_nested() {
    mutate_all(&G2, 22);
    let mut w = BlobWriter::new(Vec::new());
    w.put_array([Some(&b"inline"[..]), None, Some(b"")])
        .unwrap();
    w.put_map([(Some(&b"k"[..]), Some(&b"v"[..])), (None, None)])
        .unwrap();
    w.put_placeholder().unwrap();
    let data_end = w.position() as usize;
    let bytes = w.finish().unwrap();
    mutate_all(&bytes, data_end);
}

#[test]
fn mutation_nested_payloads_alone() {
    let mut a = Vec::new();
    encode_array([Some(&b"xy"[..]), None, Some(b""), Some(b"z")], &mut a).unwrap();
    let mut m = Vec::new();
    encode_map(
        [(Some(&b"k"[..]), Some(&b"v"[..])), (None, Some(b"w"))],
        &mut m,
    )
    .unwrap();
    for p in [&a, &m] {
        for i in 0..p.len() {
            for mask in [0x01u8, 0x80, 0xff] {
                let mut b = p.clone();
                b[i] ^= mask;
                let _ = BlobArray::new(&b, 0).map(|x| x.iter().count());
                let _ = BlobMap::new(&b, 0).map(|x| x.iter().count());
            }
        }
        for n in 0..p.len() {
            let _ = BlobArray::new(&p[..n], 0).map(|x| x.iter().count());
            let _ = BlobMap::new(&p[..n], 0).map(|x| x.iter().count());
        }
    }
}

#[test]
fn mutation_small_real_files() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/paimon/derived_blob"
    );
    for name in [
        "single_empty_payload.blob",
        "leading_trailing_placeholders.blob",
        "placeholder_null_value_mix.blob",
    ] {
        let bytes = std::fs::read(format!("{dir}/{name}")).unwrap();
        let data_end = BlobFile::parse(&bytes).unwrap().data_len() as usize;
        mutate_all(&bytes, data_end);
    }
}

#[test]
fn map_key_encodings_round_trip_against_naive_reference() {
    use lakecore::blob::{KeyType, KeyValue};
    let mut buf = [0u8; 16];
    // Fixed-width integers: little-endian, exactly the type's width.
    for (ty, width) in [
        (KeyType::TinyInt, 1usize),
        (KeyType::SmallInt, 2),
        (KeyType::Int, 4),
        (KeyType::Date, 4),
        (KeyType::Time, 4),
        (KeyType::BigInt, 8),
    ] {
        let bits = 8 * width as u32;
        let (min, max) = if bits == 64 {
            (i64::MIN, i64::MAX)
        } else {
            (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
        };
        for v in [min, min + 1, -1, 0, 1, 7, max - 1, max] {
            let key = ty.encode(KeyValue::Int(v), &mut buf).unwrap().to_vec();
            assert_eq!(key, v.to_le_bytes()[..width].to_vec());
            assert_eq!(ty.decode(&key).unwrap(), KeyValue::Int(v));
        }
        if bits < 64 {
            assert_eq!(
                ty.encode(KeyValue::Int(max + 1), &mut buf)
                    .unwrap_err()
                    .kind,
                ErrorKind::OutOfBounds
            );
        }
        assert_eq!(
            ty.decode(&[0; 9][..width + 1]).unwrap_err().kind,
            ErrorKind::InvalidLength
        );
    }
    assert_eq!(
        KeyType::Boolean
            .encode(KeyValue::Boolean(true), &mut buf)
            .unwrap(),
        [1]
    );
    assert_eq!(
        KeyType::Boolean.decode(&[0]).unwrap(),
        KeyValue::Boolean(false)
    );
    assert_eq!(
        KeyType::Boolean.decode(&[2]).unwrap_err().kind,
        ErrorKind::InvalidValue
    );
    assert_eq!(
        KeyType::Int
            .encode(KeyValue::Boolean(true), &mut buf)
            .unwrap_err()
            .kind,
        ErrorKind::Mismatch
    );
    assert_eq!(
        KeyType::String.decode(b"ok").unwrap(),
        KeyValue::String("ok")
    );
    let e = KeyType::String.decode(b"a\xffb").unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::InvalidValue, 1));
    assert_eq!(
        KeyType::Binary.decode(b"\xff").unwrap(),
        KeyValue::Binary(b"\xff")
    );

    // Decimals: p <= 18 as i64 LE; p > 18 as minimal big-endian two's complement.
    let naive_min_be = |v: i128| -> Vec<u8> {
        let n = (1..=16)
            .find(|&n| {
                let bits = 8 * n as u32;
                bits == 128 || (v >= -(1i128 << (bits - 1)) && v < (1i128 << (bits - 1)))
            })
            .unwrap();
        v.to_be_bytes()[16 - n..].to_vec()
    };
    let limit38 = 10i128.pow(38) - 1;
    let mut x = 0x1234_5678_9abc_def0_u64 as i128;
    let mut values = vec![
        0i128, 1, -1, 127, 128, -128, -129, 255, 256, limit38, -limit38,
    ];
    for _ in 0..200 {
        x = (x.wrapping_mul(6364136223846793005) + 1442695040888963407) % limit38;
        values.push(x);
        values.push(-x / 3);
    }
    for v in values {
        let ty = KeyType::Decimal { precision: 38 };
        let key = ty.encode(KeyValue::Decimal(v), &mut buf).unwrap().to_vec();
        assert_eq!(key, naive_min_be(v), "{v}");
        assert_eq!(ty.decode(&key).unwrap(), KeyValue::Decimal(v));
        if v.unsigned_abs() < 10u128.pow(18) {
            let small = KeyType::Decimal { precision: 18 };
            let key = small
                .encode(KeyValue::Decimal(v), &mut buf)
                .unwrap()
                .to_vec();
            assert_eq!(key, (v as i64).to_le_bytes());
            assert_eq!(small.decode(&key).unwrap(), KeyValue::Decimal(v));
        }
    }
    let d5 = KeyType::Decimal { precision: 5 };
    assert_eq!(
        d5.encode(KeyValue::Decimal(100_000), &mut buf)
            .unwrap_err()
            .kind,
        ErrorKind::OutOfBounds
    );
    assert_eq!(
        d5.decode(&100_000i64.to_le_bytes()).unwrap_err().kind,
        ErrorKind::InvalidValue
    );
    let d20 = KeyType::Decimal { precision: 20 };
    assert_eq!(
        d20.decode(&[0x00, 0x01]).unwrap_err().kind,
        ErrorKind::InvalidValue
    );
    assert_eq!(d20.decode(&[]).unwrap_err().kind, ErrorKind::InvalidLength);
    assert_eq!(
        KeyType::Decimal { precision: 39 }
            .decode(&[1])
            .unwrap_err()
            .kind,
        ErrorKind::InvalidBitWidth
    );
    // Encoded keys drive the duplicate check: 1 as DECIMAL(20) has one encoding.
    let one = d20.encode(KeyValue::Decimal(1), &mut buf).unwrap().to_vec();
    let e = encode_map(
        [(Some(&one[..]), None), (Some(&[0x01][..]), None)],
        &mut Vec::new(),
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Duplicate);
}
