//! Golden vectors: byte-exact builds, hit/miss queries, every flip and truncation rejected.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "std")]

use lakecore::sidecar::{
    BinaryRow, Layout, ManifestFacts, PartitionMask, Query, RowRange, RowRanges, Sidecar,
    SidecarOptions,
};
use lakecore::{ErrorKind, Location};
use lakecore_testkit::sidecar::*;
use lakecore_testkit::{data::golden, hex::hex};

const FACTS: ManifestFacts = ManifestFacts {
    length: 457,
    entries: 7,
};
/// The options that check a sidecar against [`FACTS`].
const OPTIONS: SidecarOptions = SidecarOptions { facts: Some(FACTS) };

const GOLDEN: [(&str, Layout, bool); 4] = [
    ("compact-v1.hex", Layout::Compact, true),
    ("fixed-v1.hex", Layout::Fixed, true),
    ("compact-v1-no-rowid-no-bucket.hex", Layout::Compact, false),
    ("fixed-v1-no-rowid-no-bucket.hex", Layout::Fixed, false),
];

#[test]
fn builder_reproduces_every_golden_file_byte_for_byte() {
    for (name, layout, cov) in GOLDEN {
        let expected = golden(name);
        let built = build(
            &golden_header(),
            &golden_blocks(),
            457,
            settings(layout, cov, cov),
        );
        assert_eq!(hex(&built), hex(&expected), "{name}");
    }
    assert_eq!(golden("compact-v1.hex").len(), 255);
    assert_eq!(&golden("compact-v1.hex")[251..], &[0xdf, 0x82, 0xcd, 0x30]);
}

#[test]
fn golden_views_expose_header_dictionary_blocks_and_coverage() {
    let a = partition(7, Some("left"));
    let b = partition(9, None);
    for (name, layout, cov) in GOLDEN {
        let bytes = golden(name);
        let s = Sidecar::parse_with(&bytes, &OPTIONS).unwrap();
        assert_eq!(s.layout(), layout);
        assert_eq!(s.avro_header(), &golden_header()[..]);
        assert_eq!(s.partitions().collect::<Vec<_>>(), vec![&a[..], &b[..]]);
        assert_eq!(s.partition(1), Some(&b[..]));
        assert_eq!(s.partition(2), None);
        let blocks: Vec<_> = s.blocks().collect();
        let shape: Vec<_> = blocks
            .iter()
            .map(|b| (b.offset, b.length, b.first_record, b.record_count))
            .collect();
        assert_eq!(shape, [(57, 100, 0, 3), (157, 200, 3, 2), (357, 100, 5, 2)]);
        let ids: Vec<Vec<u32>> = blocks
            .iter()
            .map(|b| {
                b.partition_ids()
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap()
            })
            .collect();
        assert_eq!(ids, [vec![0, 1], vec![0, 1], vec![0, 1]]);
        if cov {
            let rows: Vec<Vec<(u64, u64)>> = blocks
                .iter()
                .map(|b| b.row_ids().unwrap().collect::<Result<_, _>>().unwrap())
                .collect();
            let big = (1u64 << 32) - 2;
            assert_eq!(rows[0], [(0, 9), (20, 24)]);
            assert_eq!(rows[1], [(big, big + 4), (8254058425445, 8254058425445)]);
            assert_eq!(rows[2], [(20, 24), (i64::MAX as u64, i64::MAX as u64)]);
            let buckets: Vec<Vec<(i32, i32)>> = blocks
                .iter()
                .map(|b| b.buckets().unwrap().collect::<Result<_, _>>().unwrap())
                .collect();
            assert_eq!(
                buckets,
                [
                    vec![(1, 4), (1, 8)],
                    vec![(2, 4), (2, 8)],
                    vec![(0, 1), (3, 4)]
                ]
            );
        } else {
            assert!(blocks
                .iter()
                .all(|b| b.row_ids().is_none() && b.buckets().is_none()));
        }
        // The dictionary values through the BinaryRow view.
        let ra = BinaryRow::from_partition(s.partition(0).unwrap(), 0).unwrap();
        assert_eq!(
            (ra.get_i32(0).unwrap(), ra.get_str(1).unwrap()),
            (Some(7), Some("left"))
        );
        let rb = BinaryRow::from_partition(s.partition(1).unwrap(), 0).unwrap();
        assert_eq!(
            (rb.get_i32(0).unwrap(), rb.is_null(1).unwrap()),
            (Some(9), true)
        );
    }
}

fn select_rows(s: &Sidecar<'_>, ranges: &[(u64, u64)]) -> Vec<u64> {
    let mut ranges: Vec<RowRange> = ranges.iter().map(|&(a, b)| RowRange::new(a, b)).collect();
    let q = Query::new().rows(RowRanges::normalize(&mut ranges));
    s.select(&q).map(|b| b.unwrap().first_record).collect()
}

#[test]
fn golden_row_queries_hit_and_miss() {
    let max = i64::MAX as u64;
    let hits = [
        0,
        9,
        20,
        24,
        (1 << 32) - 2,
        1 << 32,
        (1 << 32) + 2,
        8254058425445,
        max,
    ];
    let misses = [
        10,
        19,
        25,
        (1 << 32) - 3,
        (1 << 32) + 3,
        8254058425444,
        max - 1,
    ];
    for name in ["compact-v1.hex", "fixed-v1.hex"] {
        let bytes = golden(name);
        let s = Sidecar::parse_with(&bytes, &OPTIONS).unwrap();
        for r in hits {
            assert!(
                !select_rows(&s, &[(r, r)]).is_empty(),
                "{name}: row {r} must hit"
            );
        }
        for r in misses {
            assert!(
                select_rows(&s, &[(r, r)]).is_empty(),
                "{name}: row {r} must miss"
            );
        }
        assert_eq!(select_rows(&s, &[(20, 20)]), [0, 5]);
        assert!(select_rows(&s, &[(16, 16)]).is_empty());
        assert!(select_rows(&s, &[(25, 40), (10, 19)]).is_empty());
        assert!(
            select_rows(&s, &[]).is_empty(),
            "empty list rejects covered blocks"
        );
        let all: Vec<u64> = s
            .select(&Query::new())
            .map(|b| b.unwrap().first_record)
            .collect();
        assert_eq!(all, [0, 3, 5]);
    }
    // Without row coverage every block passes any row filter, even the empty list.
    for name in [
        "compact-v1-no-rowid-no-bucket.hex",
        "fixed-v1-no-rowid-no-bucket.hex",
    ] {
        let bytes = golden(name);
        let s = Sidecar::parse_with(&bytes, &OPTIONS).unwrap();
        assert_eq!(select_rows(&s, &[(16, 16)]), [0, 3, 5]);
        assert_eq!(select_rows(&s, &[]), [0, 3, 5]);
    }
}

#[test]
fn golden_partition_and_bucket_queries() {
    for (name, _, cov) in GOLDEN {
        let bytes = golden(name);
        let s = Sidecar::parse_with(&bytes, &OPTIONS).unwrap();
        let mut calls = 0;
        let mut scratch = [false; 4];
        let mask = s
            .partition_mask(&mut scratch, |t| {
                calls += 1;
                BinaryRow::from_partition(t, 0).unwrap().get_i32(0).unwrap() == Some(42)
            })
            .unwrap();
        assert_eq!(calls, 2, "predicate runs once per dictionary entry");
        assert_eq!(s.select(&Query::new().partitions(mask)).count(), 0);
        let only_b = [false, true];
        assert_eq!(
            s.select(&Query::new().partitions(PartitionMask::new(&only_b)))
                .count(),
            3
        );
        let total8 = |_: i32, t: i32| t == 8;
        let got: Vec<u64> = s
            .select(&Query::new().buckets(&total8))
            .map(|b| b.unwrap().first_record)
            .collect();
        assert_eq!(got, if cov { vec![0, 3] } else { vec![0, 3, 5] });
        let bucket3 = |b: i32, _: i32| b == 3;
        let mut rows = [RowRange::new(0, 9)];
        let q = Query::new()
            .rows(RowRanges::normalize(&mut rows))
            .buckets(&bucket3);
        let got: Vec<u64> = s.select(&q).map(|b| b.unwrap().first_record).collect();
        // Row 0..9 only in block 0, which has no bucket 3.
        assert_eq!(got, if cov { vec![] } else { vec![0, 3, 5] });
    }
}

#[test]
fn every_byte_flip_and_truncation_is_rejected() {
    for (name, _, _) in GOLDEN {
        let bytes = golden(name);
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut m = bytes.clone();
                m[i] ^= 1 << bit;
                let e = Sidecar::parse_with(&m, &OPTIONS).unwrap_err();
                // Past the layout byte, a flip in the body is a checksum mismatch (the
                // checksum wins over any structural error, also where the fixed layout
                // hashes while it walks).
                let trailer = if bytes[4] == 0x01 { 4 } else { 32 };
                let body = bytes.len() - trailer;
                if (5..body).contains(&i) {
                    assert_eq!(
                        (e.kind, e.offset),
                        (ErrorKind::ChecksumMismatch, body as u64),
                        "{name}: flip byte {i} bit {bit}"
                    );
                }
            }
        }
        for n in 0..bytes.len() {
            assert!(
                Sidecar::parse_with(&bytes[..n], &OPTIONS).is_err(),
                "{name}: truncated to {n}"
            );
        }
    }
}

#[test]
fn caller_facts_must_match() {
    for (name, _, _) in GOLDEN {
        let bytes = golden(name);
        let e = Sidecar::parse_with(
            &bytes,
            &SidecarOptions {
                facts: Some(ManifestFacts {
                    length: 458,
                    entries: 7,
                }),
            },
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Mismatch, "{name}");
        let e = Sidecar::parse_with(
            &bytes,
            &SidecarOptions {
                facts: Some(ManifestFacts {
                    length: 457,
                    entries: 8,
                }),
            },
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Mismatch, "{name}");
        let s = Sidecar::parse(&bytes).unwrap();
        assert_eq!((s.manifest_length(), s.entry_count()), (457, 7));
    }
}

#[test]
fn parallel_validation_agrees_with_sequential() {
    for (name, _, _) in GOLDEN {
        let bytes = golden(name);
        let seq = Sidecar::parse_with(&bytes, &OPTIONS).unwrap();
        let par = Sidecar::parse_parallel(&bytes, &OPTIONS).unwrap();
        assert_eq!(seq.block_count(), par.block_count());
        for i in (0..bytes.len()).step_by(7) {
            let mut m = bytes.clone();
            m[i] ^= 0x10;
            assert_eq!(
                Sidecar::parse_with(&m, &OPTIONS).unwrap_err(),
                Sidecar::parse_parallel(&m, &OPTIONS).unwrap_err()
            );
            // With a resealed trailer the structural error must be the same too.
            reseal(&mut m);
            assert_eq!(
                Sidecar::parse_with(&m, &OPTIONS).err(),
                Sidecar::parse_parallel(&m, &OPTIONS).err(),
                "{name} byte {i}"
            );
        }
        for facts in [
            ManifestFacts {
                length: 1,
                entries: 7,
            },
            ManifestFacts {
                length: 457,
                entries: 6,
            },
        ] {
            let e = Sidecar::parse_parallel(&bytes, &SidecarOptions { facts: Some(facts) })
                .unwrap_err();
            assert_eq!(
                Some(e),
                Sidecar::parse_with(&bytes, &SidecarOptions { facts: Some(facts) }).err()
            );
        }
    }
}

#[test]
fn serialize_checks_the_entry_count() {
    use lakecore::sidecar::{EntryCoverage, SidecarBuilder};
    let make = || {
        let mut b = SidecarBuilder::new(settings(Layout::Compact, true, true), &golden_header());
        for (offset, length, entries) in golden_blocks() {
            b.begin_block(offset, length).unwrap();
            for e in &entries {
                b.add(EntryCoverage {
                    partition: Some(&e.partition),
                    bucket: e.bucket,
                    total_buckets: e.total,
                    first_row_id: e.first_row_id,
                    row_count: e.row_count,
                })
                .unwrap();
            }
            b.end_block().unwrap();
        }
        b
    };
    assert_eq!(make().serialize(457, 7).unwrap(), golden("compact-v1.hex"));
    assert_eq!(
        make().serialize(457, 8).unwrap_err().kind,
        ErrorKind::Mismatch
    );
    // The error names the first entry the counts disagree on, not a byte.
    let e = make().serialize(457, 8).unwrap_err();
    assert_eq!((e.at, e.offset), (Location::Entry, 7));
    assert_eq!(e.to_string(), "mismatch at entry 7");
    let e = make().serialize(457, 5).unwrap_err();
    assert_eq!(
        (e.kind, e.at, e.offset),
        (ErrorKind::Mismatch, Location::Entry, 5)
    );
    // A manifest length that the blocks do not tile is refused too.
    assert_eq!(
        make().serialize(458, 7).unwrap_err().kind,
        ErrorKind::Mismatch
    );
}

#[test]
fn builder_errors_name_the_entry_not_a_byte() {
    use lakecore::sidecar::{EntryCoverage, SidecarBuilder};
    let entry = |partition: &'static [u8]| EntryCoverage {
        partition: Some(partition),
        bucket: Some(0),
        total_buckets: Some(1),
        first_row_id: Some(0),
        row_count: 1,
    };
    const UNPARTITIONED: &[u8] = &[0; 12];
    let mut b = SidecarBuilder::new(settings(Layout::Compact, true, true), &golden_header());
    // No block open yet: entry 0 has nowhere to go.
    let e = b.add(entry(UNPARTITIONED)).unwrap_err();
    assert_eq!(
        (e.kind, e.at, e.offset),
        (ErrorKind::InvalidValue, Location::Entry, 0)
    );
    assert_eq!(e.to_string(), "invalid value at entry 0");
    b.begin_block(21, 100).unwrap();
    b.add(entry(UNPARTITIONED)).unwrap();
    b.add(entry(UNPARTITIONED)).unwrap();
    // A partition tuple shorter than its arity and null bits: entry 2, whatever the bytes.
    let e = b.add(entry(&[0, 0, 0, 1])).unwrap_err();
    assert_eq!(
        (e.kind, e.at, e.offset),
        (ErrorKind::InvalidLength, Location::Entry, 2)
    );
    assert_eq!(e.to_string(), "invalid length at entry 2");
    // Finishing with the block still open: the next entry would be 2.
    let e = b.finish(121).unwrap_err();
    assert_eq!((e.at, e.offset), (Location::Entry, 2));
    assert_eq!(e.to_string(), "invalid value at entry 2");
}
