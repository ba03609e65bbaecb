//! Sidecar fixtures shared by the sidecar tests and the fuzz harness: the golden inputs of
//! `tests/data/README.md`, a builder from test entries, a brute-force selection oracle, a
//! trailer re-sealer for mutated files and the driver that exercises every accessor.

use lakecore::sidecar::{BuildSettings, EntryCoverage, Layout, SidecarBuilder};

/// The Avro header of the golden inputs (tests/data/README.md).
pub fn golden_header() -> Vec<u8> {
    let mut h = b"Obj\x01".to_vec();
    h.push(0x04);
    h.push(0x14);
    h.extend_from_slice(b"avro.codec");
    h.push(0x08);
    h.extend_from_slice(b"null");
    h.push(0x16);
    h.extend_from_slice(b"avro.schema");
    h.push(0x0c);
    h.extend_from_slice(b"\"long\"");
    h.push(0x00);
    h.extend_from_slice(&[0u8; 16]);
    assert_eq!(h.len(), 57);
    h
}

/// A sidecar of one manifest block with one entry per tuple of `tuples` (the dictionary
/// holds them in this order; no row or bucket coverage), over a 40-byte manifest whose Avro
/// header is 30 bytes. Fixed layout, or compact when `compact`.
pub fn dictionary_sidecar(compact: bool, tuples: &[Vec<u8>]) -> Vec<u8> {
    let mut header = b"Obj\x01".to_vec();
    header.resize(30, 0);
    let layout = if compact {
        Layout::Compact
    } else {
        Layout::Fixed
    };
    let settings = BuildSettings {
        layout,
        ..BuildSettings::default()
    };
    let mut b = SidecarBuilder::new(settings, &header);
    b.begin_block(30, 10).unwrap();
    for t in tuples {
        b.add(EntryCoverage {
            partition: Some(t),
            bucket: None,
            total_buckets: None,
            first_row_id: None,
            row_count: 1,
        })
        .unwrap();
    }
    b.end_block().unwrap();
    b.finish(40).unwrap()
}

/// A 1-field BinaryRow whose fixed-length slot holds `value` (little-endian), with its
/// arity prefix: 20 bytes, distinct for distinct values (the dictionaries of the
/// duplicate-check tests and the sidecar benches).
pub fn long_tuple(value: u64) -> Vec<u8> {
    let mut p = vec![0, 0, 0, 1];
    p.extend_from_slice(&[0u8; 8]);
    p.extend_from_slice(&value.to_le_bytes());
    p
}

/// A 2-field BinaryRow `(int, string-or-null)` with its arity prefix, built independently.
pub fn partition(int: i32, s: Option<&str>) -> Vec<u8> {
    let mut p = vec![0, 0, 0, 2];
    let mut nulls = [0u8; 8];
    let mut slot1 = [0u8; 8];
    match s {
        Some(s) => {
            assert!(s.len() <= 7);
            slot1[..s.len()].copy_from_slice(s.as_bytes());
            slot1[7] = 0x80 | s.len() as u8;
        }
        None => nulls[1] |= 0x02,
    }
    p.extend_from_slice(&nulls);
    p.extend_from_slice(&(int as i64).to_le_bytes());
    p.extend_from_slice(&slot1);
    p
}

/// One test entry `(firstRowId, rowCount, partition, bucket, totalBuckets)`.
#[derive(Clone, Debug)]
pub struct TestEntry {
    /// `_FIRST_ROW_ID`.
    pub first_row_id: Option<i64>,
    /// `_ROW_COUNT`.
    pub row_count: i64,
    /// The serialized partition (a BinaryRow with its arity prefix).
    pub partition: Vec<u8>,
    /// `_BUCKET`.
    pub bucket: Option<i32>,
    /// `_TOTAL_BUCKETS`.
    pub total: Option<i32>,
}

/// The golden blocks: (offset, length, entries).
pub fn golden_blocks() -> Vec<(u64, u64, Vec<TestEntry>)> {
    let a = partition(7, Some("left"));
    let b = partition(9, None);
    let e = |f: i64, n: i64, p: &Vec<u8>, bk: i32, t: i32| TestEntry {
        first_row_id: Some(f),
        row_count: n,
        partition: p.clone(),
        bucket: Some(bk),
        total: Some(t),
    };
    vec![
        (
            57,
            100,
            vec![e(0, 10, &a, 1, 4), e(5, 5, &a, 1, 4), e(20, 5, &b, 1, 8)],
        ),
        (
            157,
            200,
            vec![e((1 << 32) - 2, 5, &b, 2, 4), e(8254058425445, 1, &a, 2, 8)],
        ),
        (357, 100, vec![e(20, 5, &a, 0, 1), e(i64::MAX, 1, &b, 3, 4)]),
    ]
}

/// Builds a sidecar for a manifest with `header`, these blocks and length, or `None` when the
/// builder decides no sidecar is worth writing.
pub fn build(
    header: &[u8],
    blocks: &[(u64, u64, Vec<TestEntry>)],
    manifest_length: u64,
    settings: BuildSettings,
) -> Vec<u8> {
    let mut b = SidecarBuilder::new(settings, header);
    for (offset, length, entries) in blocks {
        b.begin_block(*offset, *length).unwrap();
        for e in entries {
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
    b.finish(manifest_length).unwrap()
}

/// Build settings that write: `layout`, with or without the row-ID and bucket dimensions.
pub fn settings(layout: Layout, rows: bool, buckets: bool) -> BuildSettings {
    BuildSettings {
        layout,
        row_ids: rows,
        buckets,
    }
}

/// A partition predicate over serialized partitions.
pub type PartPred<'p> = &'p dyn Fn(&[u8]) -> bool;
/// A bucket predicate over `(bucket, total_buckets)`.
pub type BucketPred<'p> = &'p dyn Fn(i32, i32) -> bool;

/// Brute force: does block `entries` pass a query, per the spec's semantics, given which
/// dimensions are available (computed here independently from the entries)?
pub fn brute_keeps(
    entries: &[TestEntry],
    rows: Option<&[(u64, u64)]>,
    part: Option<PartPred<'_>>,
    bucket: Option<BucketPred<'_>>,
    row_enabled: bool,
    bucket_enabled: bool,
) -> bool {
    let rows_available = row_enabled
        && entries.iter().all(|e| {
            e.first_row_id.is_some_and(|f| f >= 0)
                && e.row_count > 0
                && (e.first_row_id.unwrap() as i128 + e.row_count as i128 - 1) <= i64::MAX as i128
        });
    if let (Some(ranges), true) = (rows, rows_available) {
        let hit = entries.iter().any(|e| {
            let f = e.first_row_id.unwrap() as u64;
            let l = f + (e.row_count as u64 - 1);
            ranges.iter().any(|&(a, b)| a <= b && a <= l && f <= b)
        });
        if !hit {
            return false;
        }
    }
    if let Some(p) = part {
        if !entries.iter().any(|e| p(&e.partition)) {
            return false;
        }
    }
    let buckets_available = bucket_enabled
        && entries.iter().all(|e| match (e.bucket, e.total) {
            (Some(b), Some(t)) => b >= 0 && t > b,
            _ => false,
        });
    if let (Some(p), true) = (bucket, buckets_available) {
        if !entries
            .iter()
            .any(|e| p(e.bucket.unwrap(), e.total.unwrap()))
        {
            return false;
        }
    }
    true
}

/// Recomputes the trailer of a (mutated) sidecar so validation gets past the checksum.
pub fn reseal(bytes: &mut [u8]) {
    use lakecore::codec::checksum;
    if bytes.len() < 5 {
        return;
    }
    if bytes[4] == 0 && bytes.len() >= 32 {
        let n = bytes.len() - 32;
        let sum = checksum::sha256(&bytes[..n]);
        bytes[n..].copy_from_slice(&sum);
    } else if bytes.len() >= 4 {
        let n = bytes.len() - 4;
        let sum = checksum::crc32(&bytes[..n]);
        bytes[n..].copy_from_slice(&sum.to_be_bytes());
    }
}

/// The shared fuzz/mutation oracle: validates `bytes` (self-described), and when valid drives
/// every accessor and iterator and a few selections. Must never panic; returns whether the
/// input validated.
pub fn drive(bytes: &[u8]) -> bool {
    use lakecore::sidecar::{
        BinaryRow, PartitionMask, Query, RowRange, RowRanges, Sidecar, SidecarOptions,
    };
    let Ok(s) = Sidecar::parse(bytes) else {
        // The fused walk rejects what validation rejects.
        let head = Sidecar::parse_head(bytes, &SidecarOptions::default());
        assert!(head.clone().and_then(|h| h.finish()).is_err());
        assert!(head.and_then(|h| h.select_vec(&Query::new())).is_err());
        return false;
    };
    // Validation with the derived facts must agree.
    let facts = lakecore::sidecar::ManifestFacts {
        length: s.manifest_length(),
        entries: s.entry_count(),
    };
    assert!(Sidecar::parse_with(bytes, &SidecarOptions { facts: Some(facts) }).is_ok());
    let mut n = 0u32;
    let mut scratch = vec![(0u32, 0u32); s.partition_count() as usize];
    let index = s.partition_index(&mut scratch).unwrap();
    assert_eq!(index.len(), s.partition_count() as usize);
    for t in s.partitions() {
        assert_eq!(s.partition(n), Some(t));
        assert_eq!(index.get(n), Some(t));
        n += 1;
        let row = BinaryRow::from_partition(t, 0).unwrap();
        for i in 0..row.arity().min(64) {
            let _ = row.is_null(i);
            let _ = row.get_i64(i);
            let _ = row.get_str(i);
            let _ = row.get_bytes(i);
        }
    }
    assert_eq!(n, s.partition_count());
    let mut blocks = 0u32;
    let mut first = 0u64;
    for b in s.blocks() {
        assert_eq!(b.first_record, first);
        first += b.record_count;
        blocks += 1;
        if let Some(ids) = b.partition_ids() {
            for id in ids {
                match id {
                    Ok(id) => assert!(id < s.partition_count()),
                    Err(_) => break,
                }
            }
        }
        if let Some(rows) = b.row_ids() {
            let (min, max) = rows.envelope();
            for r in rows {
                match r {
                    Ok((a, z)) => assert!(min <= a && a <= z && z <= max),
                    Err(_) => break,
                }
            }
        }
        if let Some(pairs) = b.buckets() {
            for p in pairs {
                match p {
                    Ok((bk, t)) => assert!(0 <= bk && bk < t),
                    Err(_) => break,
                }
            }
        }
    }
    assert_eq!(blocks, s.block_count());
    assert_eq!(first, s.entry_count());
    let mask: Vec<bool> = (0..s.partition_count()).map(|i| i % 2 == 0).collect();
    let odd = |b: i32, _t: i32| b % 2 == 1;
    let mut ranges = [RowRange::new(0, 100), RowRange::new(1 << 32, u64::MAX >> 1)];
    let q = Query::new()
        .rows(RowRanges::normalize(&mut ranges))
        .partitions(PartitionMask::new(&mask))
        .buckets(&odd);
    for q in [Query::new(), q] {
        let mut two_pass = Vec::new();
        let mut failed = false;
        for sel in s.select(&q) {
            match sel {
                Ok(b) => two_pass.push(b),
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
        // Validation fused into selection: the same blocks when both passes succeed, an
        // error when the selection meets one.
        let fused =
            Sidecar::parse_head(bytes, &SidecarOptions::default()).and_then(|h| h.select_vec(&q));
        match fused {
            Ok((view, blocks)) => {
                assert!(!failed, "fused selection accepted what select rejects");
                assert_eq!(blocks, two_pass);
                assert_eq!(view.as_bytes(), s.as_bytes());
                assert_eq!(
                    (
                        view.manifest_length(),
                        view.entry_count(),
                        view.block_count()
                    ),
                    (s.manifest_length(), s.entry_count(), s.block_count())
                );
            }
            Err(e) => assert!(
                failed,
                "fused selection failed ({e}) where both passes succeed"
            ),
        }
    }
    true
}
