//! Validate, iterate, select, verify, nested views, descriptors and the fallback merge
//! allocate nothing (a counting global allocator, counted per thread).
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "std")]

use lakecore::blob::{
    BlobArray, BlobDescriptor, BlobFile, BlobMap, BlobWriter, FallbackMerge, LayerFile,
    MergeOptions, Row, RowRange,
};
use lakecore_testkit::counting;

fn allocations() -> u64 {
    counting::calls()
}

fn layer(rows: u64, seq: u64, placeholder_every: u64) -> Vec<u8> {
    let mut w = BlobWriter::new(Vec::new());
    for i in 0..rows {
        if i % placeholder_every == 0 {
            w.put_placeholder().unwrap();
        } else if i % 11 == 0 {
            w.put_null().unwrap();
        } else if i % 13 == 0 {
            w.put_array([Some(&b"ab"[..]), None]).unwrap();
        } else if i % 17 == 0 {
            w.put_map([(Some(&b"k"[..]), Some(&b"v"[..])), (None, None)])
                .unwrap();
        } else {
            w.put_value(&(i * seq).to_le_bytes()).unwrap();
        }
    }
    w.finish().unwrap()
}

#[test]
fn read_paths_do_not_allocate() {
    let a = layer(5000, 1, 1_000_000);
    let b = layer(5000, 2, 2);
    let c = layer(2000, 3, 3);
    let mut descriptor = Vec::new();
    BlobDescriptor {
        version: 2,
        uri: "mem://x",
        offset: 4,
        length: 8,
    }
    .encode(&mut descriptor)
    .unwrap();
    let ranges = [RowRange::new(3, 900), RowRange::new(1200, 4999)];
    let deleted = [5u64, 6, 7, 4000];

    let before = allocations();
    let mut checksum = 0u64;
    for bytes in [&a, &b, &c] {
        let file = BlobFile::parse(bytes).unwrap();
        for row in file.iter() {
            if let Row::Value(p) = row {
                checksum += p.bytes.len() as u64;
                if let Ok(array) = BlobArray::new(p.bytes, p.offset) {
                    checksum += array.iter().flatten().count() as u64;
                }
                if let Ok(map) = BlobMap::new(p.bytes, p.offset) {
                    checksum += map.iter().count() as u64;
                }
            }
        }
        let last = file.rows() - 1;
        checksum += file
            .select(&[RowRange::new(1, 10), RowRange::new(last, last)])
            .unwrap()
            .count() as u64;
        checksum += file.verify().unwrap().full;
    }
    checksum += BlobDescriptor::decode(&descriptor).unwrap().length as u64;
    let mut files = [
        LayerFile {
            file: BlobFile::parse(&a).unwrap(),
            first_row_id: 0,
            max_sequence_number: 1,
        },
        LayerFile {
            file: BlobFile::parse(&c).unwrap(),
            first_row_id: 1000,
            max_sequence_number: 3,
        },
        LayerFile {
            file: BlobFile::parse(&b).unwrap(),
            first_row_id: 0,
            max_sequence_number: 2,
        },
    ];
    let options = MergeOptions {
        ranges: Some(&ranges),
        deleted: &deleted,
        strict: false,
    };
    for row in FallbackMerge::new(&mut files, options).unwrap() {
        let row = row.unwrap();
        checksum += row.value.map_or(0, |p| p.bytes.len() as u64);
    }
    for row in FallbackMerge::new(&mut files, MergeOptions::default()).unwrap() {
        checksum += row.unwrap().row_id;
    }
    let mut merge = FallbackMerge::new(&mut files, options).unwrap();
    while let Some(batch) = merge.next_batch() {
        let batch = batch.unwrap();
        checksum += batch
            .entries()
            .iter()
            .map(|&e| e.max(0) as u64)
            .sum::<u64>();
        checksum += batch.iter().filter_map(|r| r.value).count() as u64;
    }
    let after = allocations();
    assert!(checksum > 0);
    assert_eq!(after - before, 0, "allocations on read paths");

    // The counter does see allocations (the test cannot pass vacuously).
    let v = vec![1u8; 3];
    assert!(allocations() > after);
    drop(v);
}

/// A table read allocates per bunch (maps, layer list), never per row: between two rows of
/// one bunch the counter does not move.
#[cfg(feature = "paimon")]
#[test]
fn table_read_allocates_nothing_per_row() {
    use lakecore::paimon::blob::{BlobColumnRead, ReadOptions};
    use lakecore::paimon::{ScanQuery, Table};
    use lakecore_testkit::counting::calls;
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/paimon/blob_warehouse/blobtab.db/layers"
    );
    let read = BlobColumnRead::plan(
        &Table::open(dir).unwrap(),
        None,
        &ScanQuery::default(),
        None,
    )
    .unwrap();
    let mut last = calls();
    let (mut rows, mut moved) = (0u64, 0u64);
    read.for_each_row(ReadOptions::default(), |row| {
        let now = calls();
        if now != last {
            moved += 1;
        }
        rows += 1;
        std::hint::black_box(row.value);
        last = calls();
        Ok::<(), ()>(())
    })
    .unwrap()
    .unwrap();
    assert_eq!(rows, 300);
    // Only the first row of each bunch follows allocations (its files were just mapped).
    assert!(
        moved <= read.bunches().len() as u64,
        "{moved} of {rows} rows"
    );
}
