//! Golden vectors G1-G5, D1-D4 (`tests/data/golden/blob.md`): the writer reproduces them byte
//! for byte and the reader decodes them to the listed rows.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "std")]

use lakecore::blob::{BlobArray, BlobFile, BlobMap, BlobWriter, CrcCoverage, Row};
use lakecore_testkit::data::blob_vector;

#[derive(Debug, PartialEq)]
enum Want {
    Bytes(&'static [u8]),
    Null,
    Placeholder,
}

fn rows_of(bytes: &[u8]) -> Vec<Row<'_>> {
    let file = BlobFile::parse(bytes).unwrap();
    let rows: Vec<Row> = file.iter().collect();
    assert_eq!(rows.len() as u64, file.rows());
    rows
}

fn check_rows(bytes: &[u8], want: &[Want]) {
    let rows = rows_of(bytes);
    assert_eq!(rows.len(), want.len());
    for (row, want) in rows.iter().zip(want) {
        match (row, want) {
            (Row::Value(p), Want::Bytes(b)) => {
                assert_eq!(p.bytes, *b);
                assert_eq!(&bytes[p.offset as usize..][..b.len()], *b);
            }
            (Row::Null, Want::Null) | (Row::Placeholder, Want::Placeholder) => {}
            _ => panic!("row {row:?} != {want:?}"),
        }
    }
}

fn write(rows: &[Want]) -> Vec<u8> {
    let mut w = BlobWriter::new(Vec::new());
    for r in rows {
        match r {
            Want::Bytes(b) => {
                w.put_value(b).unwrap();
            }
            Want::Null => w.put_null().unwrap(),
            Want::Placeholder => w.put_placeholder().unwrap(),
        }
    }
    w.finish().unwrap()
}

fn flat_case(label: &str, rows: &[Want]) {
    let golden = blob_vector(label);
    check_rows(&golden, rows);
    assert_eq!(write(rows), golden, "{label} written");
}

#[test]
fn g1_inline_descriptor_null_placeholder() {
    use Want::*;
    flat_case(
        "G1",
        &[Bytes(b"inline"), Bytes(b"descriptor"), Null, Placeholder],
    );
}

#[test]
fn g2_inline_null_placeholder() {
    use Want::*;
    flat_case("G2", &[Bytes(b"inline"), Null, Placeholder]);
}

#[test]
fn g3_zero_length_value() {
    flat_case("G3", &[Want::Bytes(b"")]);
}

#[test]
fn d1_zero_rows() {
    flat_case("D1", &[]);
    assert_eq!(BlobFile::parse(&blob_vector("D1")).unwrap().rows(), 0);
}

#[test]
fn d2_one_null() {
    flat_case("D2", &[Want::Null]);
}

#[test]
fn d3_three_placeholders() {
    use Want::*;
    flat_case("D3", &[Placeholder, Placeholder, Placeholder]);
}

#[test]
fn d4_placeholder_then_value() {
    use Want::*;
    flat_case("D4", &[Placeholder, Bytes(b"updated-blob")]);
}

#[test]
fn golden_vectors_verify_with_full_crc() {
    for label in ["G1", "G2", "G3", "G4", "G5", "D4"] {
        let bytes = blob_vector(label);
        let report = BlobFile::parse(&bytes).unwrap().verify().unwrap();
        assert_eq!(report.coverage(), CrcCoverage::Full, "{label}");
    }
    for label in ["D1", "D2", "D3"] {
        let bytes = blob_vector(label);
        let report = BlobFile::parse(&bytes).unwrap().verify().unwrap();
        assert_eq!(report.coverage(), CrcCoverage::NoRecords, "{label}");
    }
}

#[test]
fn g4_array_rows() {
    let golden = blob_vector("G4");
    let rows = rows_of(&golden);
    assert_eq!(rows.len(), 4);
    let empty = BlobArray::from_payload(match rows[0] {
        Row::Value(p) => p,
        r => panic!("{r:?}"),
    })
    .unwrap();
    assert!(empty.is_empty());
    let array = BlobArray::from_payload(match rows[1] {
        Row::Value(p) => p,
        r => panic!("{r:?}"),
    })
    .unwrap();
    let elements: Vec<Option<&[u8]>> = array.iter().map(|e| e.map(|p| p.bytes)).collect();
    assert_eq!(
        elements,
        [
            Some(&b"inline"[..]),
            None,
            Some(&b""[..]),
            Some(&b"descriptor"[..])
        ]
    );
    for e in array.iter().flatten() {
        assert_eq!(&golden[e.offset as usize..][..e.bytes.len()], e.bytes);
    }
    assert_eq!(rows[2], Row::Null);
    assert_eq!(rows[3], Row::Placeholder);

    let mut w = BlobWriter::new(Vec::new());
    w.put_array([]).unwrap();
    w.put_array([Some(&b"inline"[..]), None, Some(b""), Some(b"descriptor")])
        .unwrap();
    w.put_null().unwrap();
    w.put_placeholder().unwrap();
    assert_eq!(w.finish().unwrap(), golden);
}

#[test]
fn g5_map_rows() {
    let golden = blob_vector("G5");
    let rows = rows_of(&golden);
    assert_eq!(rows.len(), 4);
    fn payload<'x>(r: &Row<'x>) -> lakecore::blob::Payload<'x> {
        match *r {
            Row::Value(p) => p,
            r => panic!("{r:?}"),
        }
    }
    assert!(BlobMap::from_payload(payload(&rows[0])).unwrap().is_empty());
    let map = BlobMap::from_payload(payload(&rows[1])).unwrap();
    type Entry<'x> = (Option<&'x [u8]>, Option<&'x [u8]>);
    let entries: Vec<Entry> = map
        .iter()
        .map(|(k, v)| (k.map(|p| p.bytes), v.map(|p| p.bytes)))
        .collect();
    let want: [Entry; 4] = [
        (None, None),
        (Some(b""), Some(b"")),
        (Some(b"inline"), Some(b"data")),
        (Some(b"descriptor"), Some(b"descriptor")),
    ];
    assert_eq!(entries, want);
    assert_eq!(
        map.get(Some(b"inline")).unwrap().unwrap().bytes,
        b"data".as_slice()
    );
    assert_eq!(map.get(None), Some(None));
    assert_eq!(map.get(Some(b"nope")), None);
    assert_eq!(rows[2], Row::Null);
    assert_eq!(rows[3], Row::Placeholder);

    let mut w = BlobWriter::new(Vec::new());
    w.put_map([]).unwrap();
    w.put_map(want).unwrap();
    w.put_null().unwrap();
    w.put_placeholder().unwrap();
    assert_eq!(w.finish().unwrap(), golden);
}

#[test]
fn user_bytes_equal_to_markers_are_stored_verbatim() {
    // Values that look like index markers, a record magic or a descriptor stay values.
    let odd: [&[u8]; 4] = [&[0x03], &[0x01], &[0xcf, 0x11, 0x4e, 0x58], &[0xfe; 8]];
    let mut w = BlobWriter::new(Vec::new());
    for v in odd {
        w.put_value(v).unwrap();
    }
    let bytes = w.finish().unwrap();
    let rows = rows_of(&bytes);
    assert_eq!(rows.len(), 4);
    for (row, v) in rows.iter().zip(odd) {
        assert_eq!(row.payload(), Some(v));
    }
}
