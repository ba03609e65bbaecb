#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "alloc")]
//! No allocation on the footer's validate and access paths (counting global allocator).

use lakecore::footer::ModularFooter;
use lakecore_testkit::counting;
use lakecore_testkit::footer::{build, random_input};

fn allocations() -> u64 {
    counting::calls()
}

#[test]
fn open_validate_and_access_do_not_allocate() {
    let (input, data_len) = random_input(99, 12, 5);
    let file = build(&input, data_len);
    let mut sink = 0u64;
    let before = allocations();
    let f = ModularFooter::parse(&file).unwrap();
    f.validate().unwrap();
    for c in 0..f.num_columns() {
        for g in 0..f.num_row_groups() {
            let p = f.chunk_placement(c, g).unwrap();
            sink += p.data_page_offset + p.dictionary_pages.iter().map(Result::unwrap).sum::<u64>();
            if let Some(s) = f.chunk_statistics(c, g).unwrap() {
                sink += s.min.map_or(0, |m| m.len() as u64);
            }
            if let Some(oi) = f.offset_index(c, g).unwrap() {
                for i in 0..oi.len() {
                    sink += oi.page(i).unwrap().0;
                }
            }
            if let Some(ci) = f.column_index(c, g).unwrap() {
                for i in 0..ci.len() {
                    sink += ci.page(i).unwrap().null_count.unwrap_or(0);
                }
            }
        }
    }
    let mut out = [0u64; 5];
    f.column_data_page_offsets(3, &mut out).unwrap();
    sink += out.iter().sum::<u64>();
    let schema = f.schema().unwrap();
    for leaf in schema.leaves() {
        sink += leaf.unwrap().path().len() as u64;
    }
    if let Some(m) = f.file_metadata().unwrap() {
        sink += m.created_by.map_or(0, |b| b.len() as u64);
    }
    let after = allocations();
    assert_eq!(after - before, 0, "allocations on the read path");
    assert!(sink > 0);
}
