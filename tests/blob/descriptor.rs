//! Descriptor-mode BLOB fields read through the table (`lakecore::paimon::blob::descriptor`)
//! on a table written by pypaimon 2.1.0 (`tests/clients/make_descriptor_table.py`), against
//! pypaimon's own reads recorded next to it: with `blob-as-descriptor=true` (the descriptor
//! bytes, and their uri / offset / length as pypaimon parses them) and its default read (the
//! payloads). The table has a partial update of the descriptor column, deleted rows (deletion
//! vectors) and a `.blob` column beside it.

use lakecore::codec::checksum::sha256;
use lakecore::io::LocalFs;
use lakecore::paimon::blob::descriptor::{decode, read_payload, DescriptorColumnRead};
use lakecore::paimon::blob::{column_kind, BlobColumnRead, BlobReadError, ColumnKind};
use lakecore::paimon::{ScanQuery, Table};
use serde_json::Value;
use std::path::{Path, PathBuf};

const DB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/paimon/blob_warehouse/desctab.db"
);

fn table() -> Table {
    Table::open(Path::new(DB).join("desc")).unwrap()
}

fn expected() -> Value {
    let text = std::fs::read_to_string(Path::new(DB).join("desc.expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `(row_id, null, length, sha256)` of a JSON row.
fn cell(r: &Value) -> (u64, bool, Option<u64>, Option<String>) {
    (
        r["row_id"].as_u64().unwrap(),
        r["null"].as_bool().unwrap(),
        r["length"].as_u64(),
        r["sha256"].as_str().map(str::to_string),
    )
}

/// `(row_id, descriptor bytes or None)` of every row lakecore reads with `query`.
fn rows(query: &ScanQuery) -> Vec<(u64, Option<Vec<u8>>)> {
    let read = DescriptorColumnRead::plan(&table(), None, query, Some("d")).unwrap();
    assert_eq!(read.column(), "d");
    let mut out = Vec::new();
    read.for_each_row(|r| {
        assert!(
            r.sequence_number > 0,
            "row {} has a providing file",
            r.row_id
        );
        out.push((r.row_id, r.value.map(<[u8]>::to_vec)));
        Ok::<(), ()>(())
    })
    .unwrap()
    .unwrap();
    out
}

#[test]
fn descriptor_bytes_and_fields_equal_pypaimons_blob_as_descriptor_read() {
    let want = expected();
    let want = want["descriptors"].as_array().unwrap();
    let got = rows(&ScanQuery::default());
    assert_eq!(got.len(), want.len());
    assert!(got.iter().any(|(_, v)| v.is_none()), "the table has NULLs");
    for ((row_id, value), w) in got.iter().zip(want) {
        let c = (
            *row_id,
            value.is_none(),
            value.as_ref().map(|v| v.len() as u64),
            value.as_ref().map(|v| hex(&sha256(v))),
        );
        assert_eq!(c, cell(w), "row {row_id}");
        if let Some(v) = value {
            let d = decode(v).unwrap();
            assert_eq!(d.uri, w["uri"].as_str().unwrap(), "row {row_id}");
            assert_eq!(d.offset, w["offset"].as_i64().unwrap());
            assert_eq!(d.length, w["descriptor_length"].as_i64().unwrap());
        }
    }
}

#[test]
fn deleted_rows_are_absent_and_row_ranges_select() {
    let want = expected();
    let deleted: Vec<u64> = want["deleted_row_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert!(!deleted.is_empty());
    let all = rows(&ScanQuery::default());
    for d in &deleted {
        assert!(
            all.iter().all(|(id, _)| id != d),
            "deleted row {d} returned"
        );
    }
    let query = ScanQuery {
        rows: Some(vec![(50, 60), (3, 17)]),
        ..ScanQuery::default()
    };
    let some = rows(&query);
    let picked: Vec<_> = all
        .into_iter()
        .filter(|(id, _)| (3..=17).contains(id) || (50..=60).contains(id))
        .collect();
    assert!(!picked.is_empty());
    assert_eq!(some, picked);
}

/// The committed descriptors name the directory the generator wrote the table in: each URI's
/// `desc/payloads/<file>` tail is mapped onto the committed copy, then read with
/// `read_payload`, as `DescriptorColumnRead::resolve` reads a URI in place.
fn committed_payload(uri: &str) -> PathBuf {
    let tail = uri.rsplit_once("/payloads/").unwrap().1;
    Path::new(DB).join("desc/payloads").join(tail)
}

#[test]
fn resolved_payloads_equal_pypaimons_default_read() {
    let want = expected();
    let want = want["payloads"].as_array().unwrap();
    let got = rows(&ScanQuery::default());
    assert_eq!(got.len(), want.len());
    let mut resolved = 0;
    for ((row_id, value), w) in got.iter().zip(want) {
        let payload = value.as_ref().map(|v| {
            let d = decode(v).unwrap();
            read_payload(&LocalFs, &committed_payload(d.uri), &d).unwrap()
        });
        let c = (
            *row_id,
            payload.is_none(),
            payload.as_ref().map(|p| p.len() as u64),
            payload.as_ref().map(|p| hex(&sha256(p))),
        );
        assert_eq!(c, cell(w), "row {row_id}");
        resolved += usize::from(payload.is_some());
    }
    assert!(resolved > 50, "{resolved}");
}

#[test]
fn resolve_reads_a_descriptor_uri_in_place() {
    let read =
        DescriptorColumnRead::plan(&table(), None, &ScanQuery::default(), Some("d")).unwrap();
    assert_eq!(read.column(), "d");
    let file = Path::new(DB).join("desc/payloads/p-1.bin");
    let bytes = std::fs::read(&file).unwrap();
    let uri = format!("file://{}", file.display());
    let d = lakecore::blob::BlobDescriptor {
        version: 2,
        uri: &uri,
        offset: 10,
        length: 25,
    };
    assert_eq!(&*read.resolve(&d).unwrap(), &bytes[10..35]);
    // A plain path too, and an empty payload.
    let plain = file.to_str().unwrap();
    let empty = lakecore::blob::BlobDescriptor {
        uri: plain,
        length: 0,
        ..d
    };
    assert!(read.resolve(&empty).unwrap().is_empty());
}

#[test]
fn bad_descriptors_name_the_file_and_the_numbers() {
    let read =
        DescriptorColumnRead::plan(&table(), None, &ScanQuery::default(), Some("d")).unwrap();
    let file = Path::new(DB).join("desc/payloads/p-1.bin");
    let size = std::fs::metadata(&file).unwrap().len() as i64;
    let uri = format!("file://{}", file.display());
    let past = lakecore::blob::BlobDescriptor {
        version: 2,
        uri: &uri,
        offset: size - 4,
        length: 5,
    };
    match read.resolve(&past) {
        Err(e @ BlobReadError::Descriptor { .. }) => {
            let m = e.to_string();
            assert!(m.contains("p-1.bin"), "{m}");
            assert!(m.contains("points outside its file"), "{m}");
            assert!(m.contains(&format!("offset {} length 5", size - 4)), "{m}");
            assert!(m.contains(&format!("{size} bytes")), "{m}");
        }
        other => panic!("{other:?}"),
    }
    let huge = lakecore::blob::BlobDescriptor {
        offset: i64::MAX,
        length: i64::MAX,
        ..past
    };
    assert!(matches!(
        read.resolve(&huge),
        Err(BlobReadError::Descriptor { .. })
    ));
    let missing = format!(
        "file://{}",
        Path::new(DB).join("desc/payloads/gone.bin").display()
    );
    let gone = lakecore::blob::BlobDescriptor {
        uri: &missing,
        offset: 0,
        length: 1,
        ..past
    };
    match read.resolve(&gone) {
        Err(BlobReadError::Io { path, error }) => {
            assert!(path.ends_with("gone.bin"));
            assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
    let remote = lakecore::blob::BlobDescriptor {
        uri: "s3://bucket/p.bin",
        ..gone
    };
    let e = read.resolve(&remote).unwrap_err();
    assert!(e.to_string().contains("s3://"), "{e}");
}

#[test]
fn columns_are_told_apart() {
    let t = table();
    assert_eq!(
        column_kind(&t, None, Some("d")).unwrap(),
        ("d".to_string(), ColumnKind::Descriptor)
    );
    // Without a name: the only column in .blob files.
    assert_eq!(
        column_kind(&t, None, None).unwrap(),
        ("b".to_string(), ColumnKind::BlobFiles)
    );
    match column_kind(&t, None, Some("name")) {
        Err(BlobReadError::Query(m)) => {
            assert!(m.contains("neither"), "{m}");
            assert!(m.contains("[\"b\"]") && m.contains("[\"d\"]"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    // Each read refuses the other kind.
    let q = ScanQuery::default();
    assert!(matches!(
        BlobColumnRead::plan(&t, None, &q, Some("d")),
        Err(BlobReadError::Unsupported(_))
    ));
    assert!(matches!(
        DescriptorColumnRead::plan(&t, None, &q, Some("b")),
        Err(BlobReadError::Query(_))
    ));
    // The .blob column of the same table still reads: one row per live row.
    let blob = BlobColumnRead::plan(&t, None, &q, Some("b")).unwrap();
    let mut n = 0;
    blob.for_each_row(Default::default(), |_| {
        n += 1;
        Ok::<(), ()>(())
    })
    .unwrap()
    .unwrap();
    assert_eq!(n, expected()["payloads"].as_array().unwrap().len());
}

/// The same rows through the object-store storage (a `file://` URL): the data files are read
/// through `Storage::read`.
#[cfg(feature = "object-store")]
#[test]
fn object_store_reads_the_same_rows() {
    let url = format!("file://{DB}/desc");
    let remote = Table::open_url(&url, &[]).unwrap();
    let read = DescriptorColumnRead::plan(&remote, None, &ScanQuery::default(), Some("d")).unwrap();
    let mut got = Vec::new();
    read.for_each_row(|r| {
        got.push((r.row_id, r.value.map(<[u8]>::to_vec)));
        Ok::<(), ()>(())
    })
    .unwrap()
    .unwrap();
    assert_eq!(got, rows(&ScanQuery::default()));
    // A file:// descriptor resolves through the store.
    let file = Path::new(DB).join("desc/payloads/p-0.bin");
    let uri = format!("file://{}", file.display());
    let d = lakecore::blob::BlobDescriptor {
        version: 2,
        uri: &uri,
        offset: 100,
        length: 40,
    };
    assert_eq!(
        &*read.resolve(&d).unwrap(),
        &std::fs::read(&file).unwrap()[100..140]
    );
}

#[test]
fn a_missing_data_file_is_an_io_error_naming_it() {
    let dir = super::scratch_table(&Path::new(DB).join("desc"), "descriptor", "missing");
    let read = DescriptorColumnRead::plan(
        &Table::open(&dir).unwrap(),
        None,
        &ScanQuery::default(),
        Some("d"),
    )
    .unwrap();
    let (path, _) = read.groups()[0].file.clone().unwrap();
    std::fs::remove_file(&path).unwrap();
    match read.for_each_row(|_| Ok::<(), ()>(())) {
        Err(BlobReadError::Io { path: p, error }) => {
            assert_eq!(p, path);
            assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
}
