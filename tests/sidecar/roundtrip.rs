//! Randomised round trips: random entries -> build (both layouts, every switch) -> validate
//! -> decode coverage and select with random queries == brute force over the entries.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "std")]

use lakecore::sidecar::{
    Layout, ManifestFacts, PartitionMask, Query, RowRange, RowRanges, Sidecar, SidecarOptions,
};
use lakecore_testkit::rng::Rng;
use lakecore_testkit::sidecar::*;
use std::collections::BTreeSet;

/// A pool of partition tuples: small and long strings (non-uniform dictionary stride), nulls.
fn tuple_pool(rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut pool = Vec::new();
    let n = 1 + rng.below(12);
    while (pool.len() as u64) < n {
        let t = match rng.below(3) {
            0 => partition(
                rng.below(50) as i32,
                Some(&"abcdefg"[..rng.below(8) as usize]),
            ),
            1 => partition(rng.below(50) as i32, None),
            _ => {
                // 1 field: a long string in the variable part.
                let len = 8 + rng.below(20) as usize;
                let s: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                let mut p = vec![0, 0, 0, 1];
                p.extend_from_slice(&[0u8; 8]);
                p.extend_from_slice(&((16u64 << 32) | len as u64).to_le_bytes());
                p.extend_from_slice(&s);
                while (p.len() - 4) % 8 != 0 {
                    p.push(0);
                }
                p
            }
        };
        if !pool.contains(&t) {
            pool.push(t);
        }
    }
    pool
}

fn random_entry(rng: &mut Rng, pool: &[Vec<u8>], wild: bool) -> TestEntry {
    let scale = [10u64, 1000, 1 << 40, i64::MAX as u64][rng.below(4) as usize];
    let mut first = rng.below(scale) as i64;
    let mut count = 1 + rng.below(20) as i64;
    if first.checked_add(count - 1).is_none() {
        first = i64::MAX - count + 1;
    }
    let (mut first_row_id, mut bucket, mut total) = (Some(first), Some(0), Some(1));
    let t = 1 + rng.below(16) as i32;
    bucket = bucket.map(|_| rng.below(t as u64) as i32);
    total = total.map(|_| t);
    if wild {
        match rng.below(8) {
            0 => first_row_id = None,
            1 => first_row_id = Some(-1),
            2 => count = 0,
            3 => bucket = Some(-1),
            4 => bucket = Some(-2),
            5 => total = Some(bucket.unwrap()),
            6 => total = None,
            _ => {}
        }
    }
    TestEntry {
        first_row_id,
        row_count: count,
        partition: pool[rng.below(pool.len() as u64) as usize].clone(),
        bucket,
        total,
    }
}

fn random_ranges(rng: &mut Rng) -> Vec<(u64, u64)> {
    let n = rng.below(4);
    (0..n)
        .map(|_| {
            let scale = [30u64, 2000, 1 << 41, u64::MAX >> 1][rng.below(4) as usize];
            let a = rng.below(scale);
            let width = [1u64, 10, 1000][rng.below(3) as usize];
            let b = a.saturating_add(rng.below(width));
            if rng.one_in(10) {
                (b, a) // inverted: dropped by normalisation
            } else {
                (a, b)
            }
        })
        .collect()
}

#[test]
fn random_builds_select_like_brute_force() {
    let mut rng = Rng::star(0x5eed_5eed_1234_5678);
    let mut checked = 0u64;
    for case in 0..400 {
        let pool = tuple_pool(&mut rng);
        let wild = case % 3 == 0;
        let header_len = 21 + rng.below(40);
        let mut header = b"Obj\x01".to_vec();
        header.resize(header_len as usize, 0x11);
        let mut blocks = Vec::new();
        let mut offset = header_len;
        for _ in 0..1 + rng.below(12) {
            let len = 1 + rng.below(500);
            let entries: Vec<TestEntry> = (0..1 + rng.below(10))
                .map(|_| random_entry(&mut rng, &pool, wild))
                .collect();
            blocks.push((offset, len, entries));
            offset += len;
        }
        let entries_total: u64 = blocks.iter().map(|b| b.2.len() as u64).sum();
        let facts = ManifestFacts {
            length: offset,
            entries: entries_total,
        };
        for layout in [Layout::Fixed, Layout::Compact] {
            for (rows_on, buckets_on) in
                [(true, true), (false, true), (true, false), (false, false)]
            {
                let bytes = build(
                    &header,
                    &blocks,
                    offset,
                    settings(layout, rows_on, buckets_on),
                );
                let s =
                    Sidecar::parse_with(&bytes, &SidecarOptions { facts: Some(facts) }).unwrap();
                assert_eq!(s.layout(), layout);
                // O(1) dictionary access (non-uniform tuple sizes included) == the walk.
                let mut scratch = vec![(0u32, 0u32); s.partition_count() as usize];
                let index = s.partition_index(&mut scratch).unwrap();
                for (id, t) in s.partitions().enumerate() {
                    assert_eq!(index.get(id as u32), Some(t));
                    assert_eq!(s.partition(id as u32), Some(t));
                }
                assert_eq!(index.get(s.partition_count()), None);
                assert!(s.partition_index(&mut []).is_err() || s.partition_count() == 0);
                // Coverage decodes to exactly what the entries say.
                for (b, (_, _, entries)) in s.blocks().zip(&blocks) {
                    let ids: BTreeSet<u32> =
                        b.partition_ids().unwrap().map(|r| r.unwrap()).collect();
                    let want: BTreeSet<u32> = entries
                        .iter()
                        .map(|e| s.partitions().position(|t| t == &e.partition[..]).unwrap() as u32)
                        .collect();
                    assert_eq!(ids, want);
                    if let Some(rows) = b.row_ids() {
                        let rows: Vec<(u64, u64)> = rows.map(|r| r.unwrap()).collect();
                        // Every entry row is covered; every covered row belongs to an entry.
                        for e in entries {
                            let f = e.first_row_id.unwrap() as u64;
                            let l = f + e.row_count as u64 - 1;
                            assert!(rows.iter().any(|&(a, z)| a <= f && l <= z));
                        }
                        for &(a, z) in &rows {
                            assert!(entries.iter().any(|e| e.first_row_id.unwrap() as u64 == a));
                            assert!(entries
                                .iter()
                                .any(|e| e.first_row_id.unwrap() as u64 + e.row_count as u64 - 1
                                    == z));
                        }
                        for w in rows.windows(2) {
                            assert!(w[1].0 > w[0].1 + 1, "merged when adjacent");
                        }
                    }
                    if let Some(pairs) = b.buckets() {
                        let pairs: BTreeSet<(i32, i32)> = pairs.map(|r| r.unwrap()).collect();
                        let want: BTreeSet<(i32, i32)> = entries
                            .iter()
                            .map(|e| (e.bucket.unwrap(), e.total.unwrap()))
                            .collect();
                        assert_eq!(pairs, want);
                    }
                }
                for _ in 0..8 {
                    let raw = random_ranges(&mut rng);
                    let use_rows = !rng.one_in(4);
                    let chosen: Vec<bool> = pool.iter().map(|_| rng.one_in(2)).collect();
                    let use_part = rng.one_in(2);
                    let bmod = 1 + rng.below(4) as i32;
                    let use_bucket = rng.one_in(2);
                    let part_pred = |t: &[u8]| chosen[pool.iter().position(|p| p == t).unwrap()];
                    let bucket_pred = move |b: i32, _t: i32| b % bmod == 0;
                    let mut ranges: Vec<RowRange> =
                        raw.iter().map(|&(a, b)| RowRange::new(a, b)).collect();
                    let mut q = Query::new();
                    if use_rows {
                        q = q.rows(RowRanges::normalize(&mut ranges));
                    }
                    let mask = s.partition_mask_vec(part_pred);
                    if use_part {
                        q = q.partitions(PartitionMask::new(&mask));
                    }
                    if use_bucket {
                        q = q.buckets(&bucket_pred);
                    }
                    let got: Vec<u32> = s.select(&q).map(|b| b.unwrap().id).collect();
                    let want: Vec<u32> = blocks
                        .iter()
                        .enumerate()
                        .filter(|(_, (_, _, entries))| {
                            brute_keeps(
                                entries,
                                use_rows.then_some(&raw[..]),
                                if use_part { Some(&part_pred) } else { None },
                                if use_bucket { Some(&bucket_pred) } else { None },
                                rows_on,
                                buckets_on,
                            )
                        })
                        .map(|(i, _)| i as u32)
                        .collect();
                    assert_eq!(
                        got, want,
                        "case {case} {layout:?} rows={rows_on} buckets={buckets_on} ranges={raw:?}"
                    );
                    // The fused walk (validation and selection in one pass) selects the same.
                    let head = Sidecar::parse_head(&bytes, &SidecarOptions { facts: Some(facts) })
                        .unwrap();
                    let (_, fused) = head.select_vec(&q).unwrap();
                    let fused: Vec<u32> = fused.iter().map(|b| b.id).collect();
                    assert_eq!(fused, want, "fused: case {case} {layout:?}");
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 400 * 2 * 4 * 8);
}

#[test]
fn normalisation_matches_a_naive_union() {
    let mut rng = Rng::star(99);
    for _ in 0..2000 {
        let raw: Vec<(u64, u64)> = (0..rng.below(6))
            .map(|_| {
                let a = rng.below(40);
                (a, a + rng.below(6)).min((a + 6, a)).max((a, a))
            })
            .collect();
        let raw: Vec<(u64, u64)> = raw
            .into_iter()
            .map(|(a, b)| if rng.one_in(5) { (b + 1, a) } else { (a, b) })
            .collect();
        let mut buf: Vec<RowRange> = raw.iter().map(|&(a, b)| RowRange::new(a, b)).collect();
        let norm = RowRanges::normalize(&mut buf).as_slice().to_vec();
        let naive: BTreeSet<u64> = raw
            .iter()
            .filter(|(a, b)| a <= b)
            .flat_map(|&(a, b)| a..=b)
            .collect();
        let got: BTreeSet<u64> = norm.iter().flat_map(|r| r.first..=r.last).collect();
        assert_eq!(got, naive);
        assert!(RowRanges::new(&norm).is_some());
        for w in norm.windows(2) {
            assert!(w[1].first > w[0].last + 1);
        }
    }
}
