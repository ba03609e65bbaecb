#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "parquet")]
//! Lossless conversion both ways: real files from pyarrow and DuckDB
//! (`tests/data/footer/writers/`) and files the `parquet` crate writes here (Bloom filters,
//! sorting columns, key/value metadata, size statistics, page index) are converted to a
//! modular footer and back with `to_standard`; the `parquet` crate's decoded
//! `ParquetMetaData` of the result (file metadata, every row group and column chunk, every
//! column and offset index, full encoding statistics) must equal the original's, and the
//! data region and Bloom filters must be byte-identical.

use bytes::Bytes;
use lakecore::footer::{convert, standard_footer_range, to_standard, ModularFooter};
use lakecore::ErrorKind;
use parquet::basic::Compression;
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::metadata::{
    KeyValue, PageIndexPolicy, ParquetMetaData, ParquetMetaDataOptions, ParquetMetaDataReader,
    SortingColumn,
};
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::page_index::offset_index::OffsetIndexMetaData;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::path::PathBuf;
use std::sync::Arc;

fn writers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/footer/writers")
}

/// Every committed writer file (pyarrow and DuckDB).
fn writer_files() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(writers_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    assert!(
        out.len() >= 5,
        "tests/data/footer/writers holds the writer files"
    );
    out
}

/// A file from the `parquet` crate: nested and nullable columns, Bloom filters, sorting
/// columns, key/value metadata, page-level statistics (page index with level histograms and
/// size statistics), 3 row groups.
pub fn parquet_crate_file() -> Vec<u8> {
    let schema = Arc::new(
        parse_message_type(
            "message m { required int64 id; optional binary name (UTF8); \
             optional group tags (LIST) { repeated group list { optional int32 element; } } \
             optional double score; }",
        )
        .unwrap(),
    );
    let props = WriterProperties::builder()
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_bloom_filter_enabled(true)
        .set_data_page_row_count_limit(100)
        .set_write_batch_size(50)
        .set_compression(Compression::UNCOMPRESSED)
        .set_sorting_columns(Some(vec![SortingColumn {
            column_idx: 0,
            descending: false,
            nulls_first: true,
        }]))
        .set_key_value_metadata(Some(vec![KeyValue::new(
            "origin".into(),
            "lakecore lossless test".to_string(),
        )]))
        .build();
    let mut w = SerializedFileWriter::new(Vec::new(), schema, Arc::new(props)).unwrap();
    for g in 0..3i64 {
        let mut rg = w.next_row_group().unwrap();
        let mut col = 0;
        while let Some(mut cw) = rg.next_column().unwrap() {
            let n = 400usize;
            match cw.untyped() {
                ColumnWriter::Int64ColumnWriter(t) => {
                    let v: Vec<i64> = (0..n as i64).map(|i| g * 1000 + i).collect();
                    t.write_batch(&v, None, None).unwrap();
                }
                ColumnWriter::ByteArrayColumnWriter(t) => {
                    let defs: Vec<i16> = (0..n).map(|i| i16::from(i % 7 != 0)).collect();
                    let v: Vec<ByteArray> = (0..n)
                        .filter(|i| i % 7 != 0)
                        .map(|i| ByteArray::from(format!("name-{}", i % 37).into_bytes()))
                        .collect();
                    t.write_batch(&v, Some(&defs), None).unwrap();
                }
                ColumnWriter::Int32ColumnWriter(t) => {
                    // list<int32>: row i has i % 3 elements (0 = empty list), every 5th null.
                    let (mut defs, mut reps, mut vals) = (vec![], vec![], vec![]);
                    for i in 0..n {
                        if i % 5 == 0 {
                            defs.push(0);
                            reps.push(0);
                            continue;
                        }
                        let len = i % 3;
                        if len == 0 {
                            defs.push(1);
                            reps.push(0);
                        }
                        for j in 0..len {
                            defs.push(3);
                            reps.push(i16::from(j > 0));
                            vals.push((i * 10 + j) as i32);
                        }
                    }
                    t.write_batch(&vals, Some(&defs), Some(&reps)).unwrap();
                }
                ColumnWriter::DoubleColumnWriter(t) => {
                    let defs: Vec<i16> = (0..n).map(|i| i16::from(i % 4 != 0)).collect();
                    let v: Vec<f64> = (0..n)
                        .filter(|i| i % 4 != 0)
                        .map(|i| if i % 9 == 0 { f64::NAN } else { i as f64 / 3.0 })
                        .collect();
                    t.write_batch(&v, Some(&defs), None).unwrap();
                }
                _ => unreachable!(),
            }
            cw.close().unwrap();
            col += 1;
        }
        assert_eq!(col, 4);
        rg.close().unwrap();
    }
    w.into_inner().unwrap()
}

/// The `parquet` crate's reading: page indexes if present, full encoding statistics.
fn decode(file: &[u8]) -> ParquetMetaData {
    ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Optional)
        .with_metadata_options(Some(
            ParquetMetaDataOptions::new().with_encoding_stats_as_mask(false),
        ))
        .parse_and_finish(&Bytes::copy_from_slice(file))
        .unwrap()
}

type Indexes = (
    Vec<Option<ColumnIndexMetaData>>,
    Vec<Option<OffsetIndexMetaData>>,
);

/// Every chunk's column and offset index (row-group major), as the crate decodes them.
fn indexes(md: &ParquetMetaData) -> Indexes {
    let (mut ci, mut oi) = (Vec::new(), Vec::new());
    for g in 0..md.num_row_groups() {
        let pi = md.page_index_for_row_group(g);
        for c in 0..md.row_group(g).num_columns() {
            ci.push(pi.column_index(c).cloned());
            oi.push(pi.offset_index(c).cloned());
        }
    }
    (ci, oi)
}

fn has_indexes(md: &ParquetMetaData) -> (bool, bool) {
    let (ci, oi) = indexes(md);
    (
        ci.iter().any(Option::is_some),
        oi.iter().any(Option::is_some),
    )
}

/// Converts there and back and compares everything the `parquet` crate decodes.
fn round_trip(name: &str, original: &[u8]) {
    let modular = convert(original).unwrap();
    let footer = ModularFooter::parse(&modular).unwrap();
    footer.validate().unwrap();
    let back = to_standard(&modular).unwrap();
    let a = decode(original);
    let b = decode(&back);
    assert_eq!(
        a.file_metadata(),
        b.file_metadata(),
        "{name}: file metadata"
    );
    assert_eq!(a.num_row_groups(), b.num_row_groups(), "{name}");
    for (g, (ra, rb)) in a.row_groups().iter().zip(b.row_groups()).enumerate() {
        assert_eq!(ra.num_rows(), rb.num_rows(), "{name}: rg {g}");
        assert_eq!(ra.total_byte_size(), rb.total_byte_size(), "{name}: rg {g}");
        assert_eq!(ra.sorting_columns(), rb.sorting_columns(), "{name}: rg {g}");
        assert_eq!(ra.file_offset(), rb.file_offset(), "{name}: rg {g}");
        assert_eq!(ra.ordinal(), rb.ordinal(), "{name}: rg {g}");
        for (c, (ca, cb)) in ra.columns().iter().zip(rb.columns()).enumerate() {
            assert_eq!(ca, cb, "{name}: rg {g} column {c}");
        }
        assert_eq!(ra, rb, "{name}: rg {g}");
    }
    let ((ca, oa), (cb, ob)) = (indexes(&a), indexes(&b));
    for (i, (x, y)) in ca.iter().zip(&cb).enumerate() {
        assert_eq!(x, y, "{name}: column index of chunk {i} (row-group major)");
    }
    for (i, (x, y)) in oa.iter().zip(&ob).enumerate() {
        assert_eq!(x, y, "{name}: offset index of chunk {i} (row-group major)");
    }
    assert_eq!((ca.len(), oa.len()), (cb.len(), ob.len()));
    // The data region is copied unchanged, and so is every Bloom filter.
    let data_end = footer.metadata_start() as usize;
    assert_eq!(
        &back[..data_end],
        &original[..data_end],
        "{name}: data region"
    );
    for rg in a.row_groups() {
        for cc in rg.columns() {
            if let (Some(o), Some(l)) = (cc.bloom_filter_offset(), cc.bloom_filter_length()) {
                let r = o as usize..o as usize + l as usize;
                assert_eq!(&back[r.clone()], &original[r], "{name}: Bloom filter");
            }
        }
    }
    // And once more: standard -> modular -> standard is a fixed point.
    let again = to_standard(&convert(&back).unwrap()).unwrap();
    assert_eq!(again, back, "{name}: second round trip");
}

#[test]
fn writer_files_round_trip_losslessly() {
    for (name, bytes) in writer_files() {
        round_trip(&name, &bytes);
    }
}

#[test]
fn parquet_crate_file_round_trips_losslessly() {
    let file = parquet_crate_file();
    let md = decode(&file);
    // The fields this test is about are really there.
    let cc = md.row_group(0).column(1);
    assert!(cc.bloom_filter_offset().is_some() && cc.bloom_filter_length().is_some());
    assert!(cc.unencoded_byte_array_data_bytes().is_some());
    assert!(md
        .row_group(0)
        .column(2)
        .repetition_level_histogram()
        .is_some());
    assert!(md.row_group(0).sorting_columns().is_some());
    assert_eq!(has_indexes(&md), (true, true));
    round_trip("parquet crate", &file);
    round_trip(
        "parquet crate (wide)",
        &super::convert::write_parquet(12, 3, 300),
    );
}

#[test]
fn pyarrow_file_carries_what_the_test_claims() {
    let file = std::fs::read(writers_dir().join("pyarrow_page_index.parquet")).unwrap();
    let md = decode(&file);
    let rg = md.row_group(0);
    assert_eq!(md.num_row_groups(), 4);
    assert!(rg.sorting_columns().is_some_and(|s| s.len() == 2));
    assert!(rg
        .columns()
        .iter()
        .any(|c| c.bloom_filter_offset().is_some()));
    assert_eq!(has_indexes(&md), (true, true));
    assert!(md.file_metadata().key_value_metadata().is_some());
    // The modular footer exposes them through its own accessors.
    let modular = convert(&file).unwrap();
    let f = ModularFooter::parse(&modular).unwrap();
    let rgs = f.row_groups().unwrap().unwrap();
    let first = rgs.iter().next().unwrap().unwrap();
    let sorting: Vec<_> = first
        .sorting_columns()
        .unwrap()
        .map(|s| s.unwrap())
        .collect();
    assert_eq!(sorting.len(), 2);
    assert_eq!(
        (
            sorting[1].column_idx,
            sorting[1].descending,
            sorting[1].nulls_first
        ),
        (7, true, true)
    );
    assert_eq!(first.total_byte_size, Some(rg.total_byte_size()));
    for (c, cc) in rg.columns().iter().enumerate() {
        let d = f.chunk_details(c as u32, 0).unwrap();
        assert_eq!(
            d.bloom_filter_offset,
            cc.bloom_filter_offset().map(|v| v as u64)
        );
        assert_eq!(
            d.bloom_filter_length,
            cc.bloom_filter_length().map(|v| v as u32)
        );
        assert_eq!(d.file_offset, cc.file_offset() as u64);
        assert_eq!(d.encodings, Some(cc.encodings_mask().as_i32() as u32));
    }
    assert!(f.file_metadata().unwrap().unwrap().version.is_some());
}

#[test]
fn to_standard_refuses_what_is_not_modular() {
    let standard = parquet_crate_file();
    let e = to_standard(&standard).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BadMagic);
    let modular = convert(&standard).unwrap();
    // Every truncation of a modular file is an error, never a panic or a file.
    for cut in [1, 7, 8, 100, modular.len() / 2] {
        assert!(
            to_standard(&modular[..modular.len() - cut]).is_err(),
            "cut {cut}"
        );
    }
    // A modular file given to convert: no standard footer.
    assert_eq!(convert(&modular).unwrap_err().kind, ErrorKind::BadMagic);
    assert!(standard_footer_range(&modular).is_err());
}

#[test]
fn mutated_modular_footers_never_panic_to_standard() {
    let original = super::convert::write_parquet(1, 2, 20);
    let modular = convert(&original).unwrap();
    let f = ModularFooter::parse(&modular).unwrap();
    let start = f.metadata_start() as usize;
    let (mut ok, mut err) = (0, 0);
    for i in start..modular.len() {
        for flip in [1u8, 0x20, 0x80, 0xff] {
            let mut m = modular.clone();
            m[i] ^= flip;
            match to_standard(&m) {
                Ok(back) => {
                    ok += 1;
                    // The rebuilt footer is read again by our own converter (through the
                    // parquet crate): an error or a file, never a panic.
                    let _ = convert(&back);
                }
                Err(e) => {
                    err += 1;
                    assert!(e.offset <= m.len() as u64, "byte {i} flip {flip}: {e:?}");
                }
            }
        }
    }
    assert!(ok > 0 && err > 0, "{ok} converted, {err} refused");
}
