//! Mutation tests (never a panic) and one test per error kind at a precise offset.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "std")]

use lakecore::sidecar::{
    ManifestFacts, PartitionMask, Query, RowRange, RowRanges, Sidecar, SidecarOptions,
};
use lakecore::{Error, ErrorKind};
use lakecore_testkit::data::{data, golden};
use lakecore_testkit::sidecar::*;

fn real_sidecars() -> Vec<Vec<u8>> {
    let root = data("paimon/warehouse/sc.db");
    let mut out = Vec::new();
    for table in ["de_rs", "bucket4_rs", "part_append_rs", "codec_snappy_rs"] {
        let dir = format!("{root}/{table}/manifest");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_str().unwrap().ends_with(".avro.sidecar"))
            .collect();
        names.sort();
        out.push(std::fs::read(&names[0]).unwrap());
    }
    out
}

#[test]
fn resealed_single_byte_mutations_never_panic() {
    let mut inputs: Vec<Vec<u8>> = [
        "compact-v1.hex",
        "fixed-v1.hex",
        "compact-v1-no-rowid-no-bucket.hex",
        "fixed-v1-no-rowid-no-bucket.hex",
    ]
    .iter()
    .map(|n| golden(n))
    .collect();
    inputs.extend(real_sidecars());
    let (mut valid, mut invalid) = (0u64, 0u64);
    for input in &inputs {
        let trailer = if input[4] == 0 { 32 } else { 4 };
        // The embedded Avro header is copied verbatim (only its magic is checked): mutate its
        // first bytes, skip the rest of it.
        let header_at = input.windows(4).position(|w| w == b"Obj\x01").unwrap();
        let header_len = lakecore::codec::avro::Container::parse(&input[header_at..])
            .unwrap()
            .header_len() as usize;
        for i in
            (0..input.len() - trailer).filter(|&i| i < header_at + 8 || i >= header_at + header_len)
        {
            let b = input[i];
            for v in [b ^ 0x01, b ^ 0x80, 0x00, 0xff] {
                if v == b {
                    continue;
                }
                let mut m = input.clone();
                m[i] = v;
                reseal(&mut m);
                if drive(&m) {
                    valid += 1;
                } else {
                    invalid += 1;
                }
            }
        }
        // Truncated bodies with a fresh trailer.
        for n in 5..input.len() {
            let mut m = input[..n].to_vec();
            reseal(&mut m);
            assert!(
                !drive(&m) || n == input.len(),
                "a resealed truncation to {n} validated"
            );
        }
    }
    // Delta contents are checked lazily, so many payload mutations validate; both outcomes occur.
    assert!(
        invalid > 1000 && valid > 1000,
        "{valid} valid, {invalid} invalid"
    );
}

fn compact() -> Vec<u8> {
    golden("compact-v1.hex")
}

fn with(mut bytes: Vec<u8>, at: usize, v: u8) -> Vec<u8> {
    bytes[at] = v;
    reseal(&mut bytes);
    bytes
}

const FACTS: ManifestFacts = ManifestFacts {
    length: 457,
    entries: 7,
};
/// The options that check a sidecar against [`FACTS`].
const OPTIONS: SidecarOptions = SidecarOptions { facts: Some(FACTS) };

fn err(bytes: &[u8]) -> (ErrorKind, u64) {
    let e: Error = Sidecar::parse_with(bytes, &OPTIONS).unwrap_err();
    (e.kind, e.offset)
}

// Offsets in compact-v1: 5 header length, 6 header, 63 partition count, 64/93 tuple lengths,
// 122 block count, 123.. block 0 (offset, length, records, partition frame at 126, row frame
// at 131, bucket frame at 152).
#[test]
fn each_error_kind_at_its_offset() {
    assert_eq!(err(&with(compact(), 0, b'X')), (ErrorKind::BadMagic, 0));
    assert_eq!(
        err(&with(compact(), 4, 2)),
        (ErrorKind::UnsupportedVersion, 4)
    );
    let mut flipped = compact();
    flipped[100] ^= 1;
    assert_eq!(err(&flipped), (ErrorKind::ChecksumMismatch, 251));
    assert_eq!(err(&compact()[..20]), (ErrorKind::Truncated, 20));
    assert_eq!(
        err(&with(compact(), 5, 0x10)),
        (ErrorKind::InvalidLength, 5)
    );
    assert_eq!(err(&with(compact(), 6, b'o')), (ErrorKind::BadMagic, 6));
    assert_eq!(
        err(&with(compact(), 63, 0x7f)),
        (ErrorKind::InvalidLength, 63)
    );
    assert_eq!(
        err(&with(compact(), 64, 0x0b)),
        (ErrorKind::InvalidLength, 64)
    );
    // Tuple b made equal to tuple a is a duplicate, reported at its second occurrence.
    let mut dup = compact();
    let a = dup[65..93].to_vec();
    dup[94..122].copy_from_slice(&a);
    reseal(&mut dup);
    assert_eq!(err(&dup), (ErrorKind::Duplicate, 94));
    assert_eq!(
        err(&with(compact(), 122, 0x7f)),
        (ErrorKind::InvalidLength, 122)
    );
    assert_eq!(err(&with(compact(), 123, 0x38)), (ErrorKind::Mismatch, 123));
    assert_eq!(
        err(&with(compact(), 125, 0)),
        (ErrorKind::InvalidLength, 125)
    );
    assert_eq!(
        err(&with(compact(), 128, 3)),
        (ErrorKind::InvalidLength, 128)
    );
    assert_eq!(
        err(&with(compact(), 149, 3)),
        (ErrorKind::InvalidLength, 149)
    );
    assert_eq!(
        err(&with(with(compact(), 5, 0xb9), 6, 0)),
        (ErrorKind::VarintNonCanonical, 5)
    );
    // A wrong tiling end and entry count are mismatches against the caller's facts.
    let e = Sidecar::parse_with(
        &compact(),
        &SidecarOptions {
            facts: Some(ManifestFacts {
                length: 456,
                entries: 7,
            }),
        },
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Mismatch);
}

#[test]
fn malformed_delta_streams_fail_lazily_during_selection() {
    // Partition delta 1 -> 0: a repeated ID; validation passes (framing only).
    let bad = with(compact(), 130, 0);
    let s = Sidecar::parse_with(&bad, &OPTIONS).unwrap();
    let ids: Vec<_> = s
        .blocks()
        .next()
        .unwrap()
        .partition_ids()
        .unwrap()
        .collect();
    assert_eq!(ids[1], Err(Error::new(ErrorKind::NotSorted, 130)));
    let only_b = [false, true];
    let q = Query::new().partitions(PartitionMask::new(&only_b));
    let first = s.select(&q).next().unwrap();
    assert_eq!(first, Err(Error::new(ErrorKind::NotSorted, 130)));
    // Row interior endpoint start1 = end0: not strictly increasing.
    let bad = with(compact(), 151, 0);
    let s = Sidecar::parse_with(&bad, &OPTIONS).unwrap();
    let mut r = [RowRange::single(21)];
    let q = Query::new().rows(RowRanges::normalize(&mut r));
    assert_eq!(
        s.select(&q).next().unwrap(),
        Err(Error::new(ErrorKind::NotSorted, 151))
    );
    // A query outside the envelope never touches the stream.
    let mut r = [RowRange::single(1000)];
    let q = Query::new().rows(RowRanges::normalize(&mut r));
    let got: Vec<_> = s.select(&q).map(|b| b.unwrap().id).collect();
    assert_eq!(got, [1, 2].map(|i| i as u32)[..0]);
    // An out-of-envelope delta.
    let bad = with(compact(), 150, 0x7f);
    let s = Sidecar::parse_with(&bad, &OPTIONS).unwrap();
    let rows: Vec<_> = s.blocks().next().unwrap().row_ids().unwrap().collect();
    assert_eq!(rows[0], Err(Error::new(ErrorKind::OutOfBounds, 150)));
}

#[test]
fn unknown_encodings_are_skipped_per_dimension() {
    // Row frame encoding 1 -> 7: the payload is skipped and only that dimension is unavailable.
    let odd = with(compact(), 131, 7);
    let s = Sidecar::parse_with(&odd, &OPTIONS).unwrap();
    let b0 = s.blocks().next().unwrap();
    assert_eq!(b0.encodings(), [1, 7, 1]);
    assert!(b0.row_ids().is_none());
    assert!(b0.partition_ids().is_some() && b0.buckets().is_some());
    let mut r = [RowRange::single(16)];
    let q = Query::new().rows(RowRanges::normalize(&mut r));
    let got: Vec<u32> = s.select(&q).map(|b| b.unwrap().id).collect();
    assert_eq!(
        got,
        [0],
        "block 0 passes (no row coverage), blocks 1 and 2 miss row 16"
    );
}

#[test]
fn large_dictionaries_validate_and_duplicates_anywhere_are_found() {
    use lakecore::sidecar::Layout;
    // Every size class of the duplicate check: the three stack tables (up to 8, 64 and 512
    // tuples) and the table on the heap above them.
    for n in [2u64, 8, 9, 64, 65, 512, 513, 2000, 4096, 4097] {
        for layout in [Layout::Fixed, Layout::Compact] {
            let tuples: Vec<Vec<u8>> = (0..n).map(long_tuple).collect();
            let bytes = dictionary_sidecar(layout == Layout::Compact, &tuples);
            let facts = ManifestFacts {
                length: 40,
                entries: n,
            };
            let s = Sidecar::parse_with(&bytes, &SidecarOptions { facts: Some(facts) }).unwrap();
            assert_eq!(s.partition_count() as u64, n);
            let offset_of = |i: u64| {
                let t = long_tuple(i);
                bytes.windows(t.len()).position(|w| w == &t[..]).unwrap()
            };
            // (earlier, later): tuple `later` overwritten with tuple `earlier` (the value
            // field's bytes) is reported at `later`; with two repeats, the first one's.
            for (earlier, later) in [(0, 1), (0, n - 1), (n / 2 - 1, n / 2), (1, n - 1)] {
                if earlier >= later {
                    continue;
                }
                let at = offset_of(later);
                let mut dup = bytes.clone();
                dup[at..at + long_tuple(0).len()].copy_from_slice(&long_tuple(earlier));
                if later + 1 < n {
                    // A second repeat after the first: not the one reported.
                    let at2 = offset_of(n - 1);
                    if at2 != at {
                        dup[at2..at2 + long_tuple(0).len()].copy_from_slice(&long_tuple(later - 1));
                    }
                }
                reseal(&mut dup);
                let e =
                    Sidecar::parse_with(&dup, &SidecarOptions { facts: Some(facts) }).unwrap_err();
                assert_eq!(
                    (e.kind, e.offset),
                    (ErrorKind::Duplicate, at as u64),
                    "n={n} {layout:?} tuple {later} = tuple {earlier}"
                );
            }
        }
    }
}
