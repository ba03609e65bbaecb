#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "parquet")]
//! Standard Parquet files written by the `parquet` crate (statistics, dictionaries, page
//! indexes, many columns and row groups, nulls, NaNs) are converted to modular footers; every
//! accessor must equal the metadata the `parquet` crate reads from the original file.

use bytes::Bytes;
use lakecore::footer::ModularFooter;
use lakecore::footer::{convert, Statistics};
use parquet::basic::{Compression, Encoding, Type as PhysicalType};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;
use std::sync::Arc;

/// Writes a file with `groups` column groups of 5 columns each (int64, double with NaNs,
/// string with a shared prefix, optional int32 all-null in some row groups, boolean), and
/// `row_groups` row groups of `rows` rows.
pub fn write_parquet(groups: usize, row_groups: usize, rows: usize) -> Vec<u8> {
    let mut fields = String::new();
    for i in 0..groups {
        fields.push_str(&format!(
            "required int64 id{i}; optional double d{i}; optional binary s{i} (UTF8); \
             optional int32 n{i}; optional boolean b{i}; "
        ));
    }
    let schema = Arc::new(parse_message_type(&format!("message m {{ {fields} }}")).unwrap());
    let mut props = WriterProperties::builder()
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_data_page_row_count_limit(64)
        .set_write_batch_size(32)
        .set_compression(Compression::UNCOMPRESSED)
        .set_statistics_truncate_length(Some(8))
        .set_created_by("lakecore footer test".into());
    for i in (0..groups).step_by(2) {
        props = props.set_column_dictionary_enabled(ColumnPath::from(format!("s{i}")), false);
    }
    let mut w = SerializedFileWriter::new(Vec::new(), schema, Arc::new(props.build())).unwrap();
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for g in 0..row_groups {
        let mut rg = w.next_row_group().unwrap();
        let mut col = 0usize;
        while let Some(mut cw) = rg.next_column().unwrap() {
            let kind = col % 5;
            let present: Vec<bool> = (0..rows)
                .map(|_| match kind {
                    0 => true,
                    3 if g % 2 == 1 => false,
                    _ => rnd() % 5 != 0,
                })
                .collect();
            let defs: Vec<i16> = present.iter().map(|&p| i16::from(p)).collect();
            let n = present.iter().filter(|&&p| p).count();
            match cw.untyped() {
                ColumnWriter::Int64ColumnWriter(t) => {
                    let v: Vec<i64> = (0..n).map(|i| (g * rows + i) as i64 * 3 - 500).collect();
                    t.write_batch(&v, None, None).unwrap();
                }
                ColumnWriter::DoubleColumnWriter(t) => {
                    let v: Vec<f64> = (0..n)
                        .map(|_| {
                            if rnd() % 7 == 0 {
                                f64::NAN
                            } else {
                                (rnd() % 1000) as f64 / 7.0
                            }
                        })
                        .collect();
                    t.write_batch(&v, Some(&defs), None).unwrap();
                }
                ColumnWriter::ByteArrayColumnWriter(t) => {
                    let v: Vec<ByteArray> = (0..n)
                        .map(|_| ByteArray::from(format!("prefix/{:03}", rnd() % 40).into_bytes()))
                        .collect();
                    t.write_batch(&v, Some(&defs), None).unwrap();
                }
                ColumnWriter::Int32ColumnWriter(t) => {
                    let v: Vec<i32> = (0..n).map(|_| (rnd() % 100) as i32).collect();
                    t.write_batch(&v, Some(&defs), None).unwrap();
                }
                ColumnWriter::BoolColumnWriter(t) => {
                    let v: Vec<bool> = (0..n).map(|_| rnd() % 2 == 0).collect();
                    t.write_batch(&v, Some(&defs), None).unwrap();
                }
                _ => unreachable!(),
            }
            cw.close().unwrap();
            col += 1;
        }
        rg.close().unwrap();
    }
    w.into_inner().unwrap()
}

pub fn oracle(file: &[u8]) -> ParquetMetaData {
    ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Required)
        .parse_and_finish(&Bytes::copy_from_slice(file))
        .unwrap()
}

fn type_code(t: PhysicalType) -> u8 {
    match t {
        PhysicalType::BOOLEAN => 0,
        PhysicalType::INT32 => 1,
        PhysicalType::INT64 => 2,
        PhysicalType::INT96 => 3,
        PhysicalType::FLOAT => 4,
        PhysicalType::DOUBLE => 5,
        PhysicalType::BYTE_ARRAY => 6,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => 7,
    }
}

fn le_bytes(ci: &ColumnIndexMetaData, i: usize, max: bool) -> Option<Vec<u8>> {
    macro_rules! prim {
        ($x:expr) => {
            if max {
                $x.max_value(i).map(|v| v.to_le_bytes().to_vec())
            } else {
                $x.min_value(i).map(|v| v.to_le_bytes().to_vec())
            }
        };
    }
    match ci {
        ColumnIndexMetaData::INT32(x) => prim!(x),
        ColumnIndexMetaData::INT64(x) => prim!(x),
        ColumnIndexMetaData::DOUBLE(x) => prim!(x),
        ColumnIndexMetaData::FLOAT(x) => prim!(x),
        ColumnIndexMetaData::BOOLEAN(x) => {
            let v = if max { x.max_value(i) } else { x.min_value(i) };
            v.map(|b| vec![u8::from(*b)])
        }
        ColumnIndexMetaData::BYTE_ARRAY(x) => {
            let v = if max { x.max_value(i) } else { x.min_value(i) };
            v.map(<[u8]>::to_vec)
        }
        other => panic!("unexpected index {other:?}"),
    }
}

fn concat(s: &Statistics<'_>, max: bool) -> Option<Vec<u8>> {
    let b = if max { s.max } else { s.min }?;
    Some([b.prefix, b.suffix].concat())
}

/// Compares every accessor of the converted footer with the parquet crate's view of the
/// original.
pub fn compare(original: &[u8], converted: &[u8]) {
    let md = oracle(original);
    let f = ModularFooter::parse(converted).unwrap();
    f.validate().unwrap();
    let fm = md.file_metadata();
    let schema = fm.schema_descr();
    assert_eq!(f.num_columns() as usize, schema.num_columns());
    assert_eq!(f.num_row_groups() as usize, md.num_row_groups());
    assert_eq!(f.num_rows() as i64, fm.num_rows());
    let rg_rows: Vec<i64> = md.row_groups().iter().map(|g| g.num_rows()).collect();
    assert_eq!(
        f.row_group_num_rows().map(|r| r as i64).collect::<Vec<_>>(),
        rg_rows
    );
    let s = f.schema().unwrap();
    for leaf in s.leaves() {
        let leaf = leaf.unwrap();
        let col = schema.column(leaf.index as usize);
        let path: Vec<String> = leaf
            .path()
            .iter()
            .map(|p| String::from_utf8(p.to_vec()).unwrap())
            .collect();
        assert_eq!(&path, col.path().parts());
        assert_eq!(
            leaf.element.physical_type,
            Some(i32::from(type_code(col.physical_type())))
        );
    }
    let meta = f.file_metadata().unwrap().unwrap();
    assert_eq!(meta.created_by, fm.created_by().map(str::as_bytes));
    for (g, rg) in md.row_groups().iter().enumerate() {
        let pi = md.page_index_for_row_group(g);
        for (c, cc) in rg.columns().iter().enumerate() {
            let (c32, g32) = (c as u32, g as u32);
            let p = f.chunk_placement(c32, g32).unwrap();
            assert_eq!(p.data_page_offset as i64, cc.data_page_offset());
            let dict: Vec<i64> = p
                .dictionary_pages
                .iter()
                .map(|d| d.unwrap() as i64)
                .collect();
            assert_eq!(
                dict,
                cc.dictionary_page_offset().into_iter().collect::<Vec<_>>()
            );
            assert_eq!(p.total_compressed_size as i64, cc.compressed_size());
            assert_eq!(p.total_uncompressed_size as i64, cc.uncompressed_size());
            assert_eq!(p.num_values as i64, cc.num_values());
            assert_eq!(cc.compression(), Compression::UNCOMPRESSED);
            assert_eq!(p.codec, 0);
            assert_eq!(p.physical_type, type_code(cc.column_type()));
            let mask = cc.page_encoding_stats_mask().unwrap();
            let fully = mask
                .encodings()
                .all(|e| e == Encoding::PLAIN_DICTIONARY || e == Encoding::RLE_DICTIONARY);
            assert_eq!(p.is_fully_dictionary_encoded, fully, "chunk ({c}, {g})");
            // Row-group statistics.
            let st = f.chunk_statistics(c32, g32).unwrap().unwrap();
            let os = cc.statistics().unwrap();
            assert_eq!(st.null_count, os.null_count_opt());
            assert_eq!(st.nan_count, os.nan_count_opt());
            assert_eq!(concat(&st, false).as_deref(), os.min_bytes_opt());
            assert_eq!(concat(&st, true).as_deref(), os.max_bytes_opt());
            if let (Some(min), Some(max)) = (st.min, st.max) {
                assert_eq!(min.exact, os.min_is_exact());
                assert_eq!(max.exact, os.max_is_exact());
            }
            // Offset index.
            let oi = f.offset_index(c32, g32).unwrap().unwrap();
            let locs = pi.page_locations(c).unwrap();
            assert_eq!(oi.len(), locs.len());
            for (i, l) in locs.iter().enumerate() {
                assert_eq!(
                    oi.page(i).unwrap(),
                    (
                        l.offset as u64,
                        l.compressed_page_size as u64,
                        l.first_row_index as u64
                    )
                );
            }
            // Column index.
            let ci = f.column_index(c32, g32).unwrap().unwrap();
            let oci = pi.column_index(c).unwrap();
            assert_eq!(ci.len() as u64, oci.num_pages());
            let bo = oci.get_boundary_order().unwrap();
            assert_eq!(i32::from(ci.boundary_order), bo as i32);
            for i in 0..ci.len() {
                assert_eq!(ci.is_null_page(i).unwrap(), oci.is_null_page(i));
                let ps = ci.page(i).unwrap();
                assert_eq!(ps.null_count, oci.null_count(i).map(|v| v as u64));
                assert_eq!(ps.nan_count, oci.nan_count(i).map(|v| v as u64));
                assert_eq!(concat(&ps, false), le_bytes(oci, i, false));
                assert_eq!(concat(&ps, true), le_bytes(oci, i, true));
            }
        }
    }
}

#[test]
fn converts_wide_file_and_every_value_matches() {
    let original = write_parquet(8, 5, 300);
    let converted = convert(&original).unwrap();
    compare(&original, &converted);
    // Data pages are unchanged.
    let f = ModularFooter::parse(&converted).unwrap();
    let p = f.chunk_placement(0, 0).unwrap();
    let a = p.data_page_offset as usize;
    assert_eq!(&converted[..a + 16], &original[..a + 16]);
    assert!(ModularFooter::parse(&original).is_err());
    // The file exercises what it claims: NaN counts, dictionaries (and chunks without),
    // fully and partly dictionary-encoded chunks, null pages, truncated-free exact bounds.
    let (mut nans, mut dicts, mut no_dicts, mut fully, mut null_pages, mut page_nans) =
        (0, 0, 0, 0, 0, 0);
    let mut inexact = 0;
    for c in 0..f.num_columns() {
        for g in 0..f.num_row_groups() {
            let p = f.chunk_placement(c, g).unwrap();
            if p.dictionary_pages.is_empty() {
                no_dicts += 1;
            } else {
                dicts += 1;
            }
            fully += usize::from(p.is_fully_dictionary_encoded);
            let s = f.chunk_statistics(c, g).unwrap().unwrap();
            nans += usize::from(s.nan_count.unwrap_or(0) > 0);
            inexact += usize::from(s.max.is_some_and(|m| !m.exact));
            let ci = f.column_index(c, g).unwrap().unwrap();
            for i in 0..ci.len() {
                null_pages += usize::from(ci.is_null_page(i).unwrap());
                page_nans += usize::from(ci.page(i).unwrap().nan_count.unwrap_or(0) > 0);
            }
        }
    }
    eprintln!("inexact max {inexact} nans {nans} dicts {dicts}/{no_dicts} fully {fully} null pages {null_pages} page nans {page_nans}");
    assert!(nans > 0 && dicts > 0 && no_dicts > 0 && fully > 0 && fully < dicts + no_dicts);
    assert!(null_pages > 0 && page_nans > 0 && inexact > 0);
    let (_, data_end) = lakecore::footer::read_standard(&original).unwrap();
    let modular_meta = converted.len() as u64 - f.metadata_start();
    eprintln!(
        "standard footer + page indexes {} B, modular metadata {} B (ratio {:.2})",
        original.len() - data_end,
        modular_meta,
        modular_meta as f64 / (original.len() - data_end) as f64
    );
}

#[test]
fn converts_single_row_group_file() {
    let original = write_parquet(1, 1, 10);
    compare(&original, &convert(&original).unwrap());
}

#[test]
fn rejects_non_parquet_and_encrypted_footers() {
    assert_eq!(
        convert(b"PAR1xxxxxxxxPAR2").unwrap_err().kind,
        lakecore::ErrorKind::BadMagic
    );
    let mut enc = write_parquet(1, 1, 4);
    let n = enc.len();
    enc[n - 4..].copy_from_slice(b"PARE");
    assert_eq!(
        convert(&enc).unwrap_err().kind,
        lakecore::ErrorKind::UnsupportedVersion
    );
}

#[test]
fn rejects_plaintext_footer_with_encryption_algorithm() {
    let original = write_parquet(1, 1, 4);
    let (start, len) = lakecore::footer::standard_footer_range(&original).unwrap();
    // FileMetaData with field 8 (encryption_algorithm, long-form header) before its STOP.
    let mut footer = original[start..start + len - 1].to_vec();
    footer.extend_from_slice(&[0x0c, 0x10, 0x00, 0x00]);
    let mut file = original[..start].to_vec();
    file.extend_from_slice(&footer);
    file.extend_from_slice(&(footer.len() as u32).to_le_bytes());
    file.extend_from_slice(b"PAR1");
    let e = convert(&file).unwrap_err();
    assert_eq!(e.kind, lakecore::ErrorKind::UnsupportedVersion);
    assert_eq!(e.offset, (start + len - 1) as u64);
}

#[test]
fn mutated_standard_footers_never_panic() {
    let original = write_parquet(1, 2, 20);
    let (start, len) = lakecore::footer::standard_footer_range(&original).unwrap();
    // Every byte of the footer and of the page indexes before it, several flips each.
    let (_, data_end) = lakecore::footer::read_standard(&original).unwrap();
    for i in data_end.min(start)..start + len {
        for flip in [1u8, 0x20, 0x80, 0xff] {
            let mut m = original.clone();
            m[i] ^= flip;
            if let Ok(out) = convert(&m) {
                // Whatever converts must open as a valid modular footer.
                let f = ModularFooter::parse(&out)
                    .unwrap_or_else(|e| panic!("byte {i} flip {flip}: open {e:?}"));
                if let Err(e) = f.validate() {
                    let mods: Vec<_> = f.modules().collect();
                    panic!("byte {i} flip {flip}: validate {e:?} {mods:?}");
                }
            }
        }
    }
}
