//! Validation, coverage walks and selection allocate nothing (counting global allocator).
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "std")]

use lakecore::sidecar::{
    BinaryRow, ManifestFacts, Query, RowRange, RowRanges, Sidecar, SidecarOptions,
};
use lakecore_testkit::counting;
use lakecore_testkit::data::{data, golden};
use lakecore_testkit::sidecar::{dictionary_sidecar, long_tuple};

/// Everything a scan does with a sidecar, on stack memory only; returns a checksum of the
/// results so nothing is optimised away.
fn scan(bytes: &[u8], facts: ManifestFacts) -> u64 {
    let s = Sidecar::parse_with(bytes, &SidecarOptions { facts: Some(facts) }).unwrap();
    let mut acc = 0u64;
    for b in s.blocks() {
        for id in b.partition_ids().into_iter().flatten() {
            acc += u64::from(id.unwrap());
        }
        for r in b.row_ids().into_iter().flatten() {
            acc ^= r.unwrap().1;
        }
        for p in b.buckets().into_iter().flatten() {
            acc += p.unwrap().0 as u64;
        }
    }
    let mut spans = [(0u32, 0u32); 512];
    let index = s.partition_index(&mut spans).unwrap();
    for id in 0..s.partition_count() {
        acc += index.get(id).unwrap().len() as u64;
    }
    let mut scratch = [false; 512];
    let mask = s
        .partition_mask(&mut scratch, |t| {
            BinaryRow::from_partition(t, 0)
                .unwrap()
                .get_i32(0)
                .ok()
                .flatten()
                .unwrap_or(0)
                % 2
                == 0
        })
        .unwrap();
    let mut ranges = [
        RowRange::single(20),
        RowRange::new(2800, 2900),
        RowRange::new(0, 5),
    ];
    let even = |b: i32, _: i32| b % 2 == 0;
    let q = Query::new()
        .rows(RowRanges::normalize(&mut ranges))
        .partitions(mask)
        .buckets(&even);
    for sel in s.select(&q) {
        acc += sel.unwrap().offset;
    }
    acc + s.select(&Query::new()).count() as u64
}

#[test]
fn validate_walk_and_select_allocate_nothing() {
    let mut inputs = vec![
        (
            golden("compact-v1.hex"),
            ManifestFacts {
                length: 457,
                entries: 7,
            },
        ),
        (
            golden("fixed-v1.hex"),
            ManifestFacts {
                length: 457,
                entries: 7,
            },
        ),
    ];
    let dir = data("paimon/warehouse/sc.db/de_rs/manifest");
    let name = "manifest-c5c04dad-eb69-480a-ae2d-b899f2d43363-0";
    let sidecar = std::fs::read(format!("{dir}/{name}.avro.sidecar")).unwrap();
    let size = std::fs::metadata(format!("{dir}/{name}")).unwrap().len();
    inputs.push((
        sidecar,
        ManifestFacts {
            length: size,
            entries: 250,
        },
    ));
    let mut total = 0;
    for (bytes, facts) in &inputs {
        let before = counting::calls();
        total += scan(bytes, *facts);
        let after = counting::calls();
        assert_eq!(after - before, 0, "allocations during a scan");
    }
    assert!(total > 0);
}

/// The duplicate-tuple check of validation uses a table on the stack up to 512 tuples, in
/// three sizes (8, 64 and 512 tuples at most): no allocation at any of them; above, one
/// allocation (its table on the heap) per validation, whatever the size.
#[test]
fn duplicate_check_allocates_only_above_512_tuples() {
    for n in [1u64, 8, 9, 40, 64, 65, 300, 512, 513, 4_000] {
        let tuples: Vec<Vec<u8>> = (0..n).map(long_tuple).collect();
        for compact in [true, false] {
            let bytes = dictionary_sidecar(compact, &tuples);
            let options = SidecarOptions {
                facts: Some(ManifestFacts {
                    length: 40,
                    entries: n,
                }),
            };
            let before = counting::calls();
            let count = Sidecar::parse_with(&bytes, &options)
                .map(|s| s.partition_count())
                .unwrap();
            let calls = counting::calls() - before;
            assert_eq!(u64::from(count), n);
            assert_eq!(calls, u64::from(n > 512), "{n} tuples, compact {compact}");
        }
    }
}
