#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "parquet")]
//! Issue 24, item 2: on pyarrow files with a page index, the modular footer is no larger than
//! the standard footer plus its page index. Byte counts are deterministic, so this is a test:
//! the standard side is measured with the `parquet` crate (footer length from the trailer,
//! column/offset index lengths from the chunk metadata), the modular side is every byte the
//! converter appends after the data region both files share.

use bytes::Bytes;
use lakecore::footer::{convert, ModularFooter};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/footer/writers");

/// (standard footer + page index, modular metadata) of a committed file.
fn sizes(name: &str) -> (u64, u64) {
    let file = std::fs::read(format!("{DIR}/{name}")).unwrap();
    let n = file.len();
    let footer_len = u32::from_le_bytes(file[n - 8..n - 4].try_into().unwrap()) as u64;
    let md = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Skip)
        .parse_and_finish(&Bytes::from(file.clone()))
        .unwrap();
    let (mut page_index, mut first) = (0u64, n as u64 - footer_len - 8);
    for rg in md.row_groups() {
        for cc in rg.columns() {
            for (o, l) in [
                (cc.column_index_offset(), cc.column_index_length()),
                (cc.offset_index_offset(), cc.offset_index_length()),
            ] {
                if let (Some(o), Some(l)) = (o, l) {
                    page_index += l as u64;
                    first = first.min(o as u64);
                }
            }
        }
    }
    assert!(
        page_index > 0,
        "{name}: no page index, the test proves nothing"
    );
    let modular = convert(&file).unwrap();
    // The shared data region [0, first) is unchanged; everything after it is footer.
    let d = first as usize;
    assert_eq!(modular[..d], file[..d], "{name}: data region changed");
    let f = ModularFooter::parse(&modular).unwrap();
    f.validate().unwrap();
    assert!(f.offset_index(0, 0).unwrap().is_some());
    (footer_len + 8 + page_index, (modular.len() - d) as u64)
}

#[test]
fn modular_footer_is_no_larger_than_standard_footer_plus_page_index() {
    for name in ["pyarrow_page_index.parquet", "pyarrow_wide.parquet"] {
        let (standard, modular) = sizes(name);
        let ratio = modular as f64 / standard as f64;
        eprintln!("{name}: standard + page index {standard} B, modular {modular} B, {ratio:.3}x");
        assert!(
            modular <= standard,
            "{name}: modular footer {modular} B > standard footer + page index {standard} B"
        );
        // Issue 24's goal for wide tables (120 columns here): at most 0.6x.
        if name == "pyarrow_wide.parquet" {
            assert!(
                modular * 10 <= standard * 6,
                "{name}: {ratio:.3}x, above the 0.6x goal for wide tables"
            );
        }
    }
}
