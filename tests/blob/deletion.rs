//! Deletion vectors on a data-evolution BLOB table written by pypaimon 2.1.0
//! (`tests/clients/make_dv_table.py`: partial updates, then deletes by row ID), against
//! pypaimon's own answers recorded next to it: the splits' deletion files, the positions each
//! vector holds, the row IDs deleted, and the BLOB column as pypaimon reads it. Bad input
//! (a corrupt index manifest, a corrupt deletion vector) names the file and the byte.

use lakecore::codec::checksum::sha256;
use lakecore::paimon::blob::{BlobColumnRead, BlobReadError, ReadOptions};
use lakecore::paimon::{anchor_file, ScanError, ScanQuery, Table};
use lakecore::ErrorKind;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const DB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/paimon/dv_warehouse/dvtab.db"
);

fn oracle() -> Value {
    let text = std::fs::read_to_string(Path::new(DB).join("dv.expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn table_dir() -> PathBuf {
    Path::new(DB).join("dv")
}

#[test]
fn split_deletion_files_equal_pypaimons() {
    let dir = table_dir();
    let table = Table::open(&dir).unwrap();
    let plan = table.plan(None, &ScanQuery::default()).unwrap();
    let splits = table.splits(&plan).unwrap();
    // The consuming form moves the same files into the same splits.
    assert_eq!(table.into_splits(plan.clone()).unwrap(), splits);
    let oracle = oracle();
    // (partition value, bucket) -> file name -> deletion file (or null), from pypaimon.
    let mut want: BTreeMap<(String, i64), BTreeMap<String, Value>> = BTreeMap::new();
    for s in oracle["splits"].as_array().unwrap() {
        let key = (
            s["partition"]["dt"].as_str().unwrap().to_string(),
            s["bucket"].as_i64().unwrap(),
        );
        let files = want.entry(key).or_default();
        for (name, d) in s["files"].as_object().unwrap() {
            files.insert(name.clone(), d.clone());
        }
    }
    let mut got: BTreeMap<(String, i64), BTreeMap<String, Value>> = BTreeMap::new();
    let prefix = format!("{}/", dir.display());
    for s in &splits {
        assert_eq!(s.partition_values.len(), 1);
        let key = (s.partition_values[0].1.to_string(), i64::from(s.bucket));
        let files = got.entry(key).or_default();
        for f in &s.files {
            let d = match &f.deletion_file {
                None => Value::Null,
                Some(d) => serde_json::json!({
                    "index_file": d.path.strip_prefix(&prefix).unwrap(),
                    "offset": d.offset,
                    "length": d.length,
                    "cardinality": d.cardinality,
                }),
            };
            files.insert(f.file.file_name.to_string(), d);
            let (key, value) = &s.partition_values[0];
            assert_eq!(
                f.path,
                format!("{prefix}{key}={value}/bucket-0/{}", f.file.file_name)
            );
        }
        // Merge groups cover every file once; the deletion file sits on the group's anchor.
        assert_eq!(
            s.groups.iter().map(|g| g.len()).sum::<usize>(),
            s.files.len()
        );
        for g in s.merge_groups() {
            let anchor = anchor_file(g.iter().map(|f| &f.file)).unwrap();
            for f in g {
                if f.deletion_file.is_some() {
                    assert_eq!(f.file.file_name, anchor.file_name);
                }
            }
        }
    }
    assert_eq!(got, want);
    assert!(got.values().flat_map(|m| m.values()).any(|d| !d.is_null()));
}

#[test]
fn deletion_vectors_decode_to_the_positions_pypaimon_deleted() {
    let dir = table_dir();
    let table = Table::open(&dir).unwrap();
    let plan = table.plan(None, &ScanQuery::default()).unwrap();
    let splits = table.splits(&plan).unwrap();
    let oracle = oracle();
    let want = oracle["deletion_vectors"].as_object().unwrap();
    let mut seen = 0;
    let mut deleted_ids = BTreeSet::new();
    for s in &splits {
        for g in s.merge_groups() {
            for f in g {
                let Some(d) = &f.deletion_file else { continue };
                let positions: Vec<u64> = table
                    .read_deletion_vector(d)
                    .unwrap()
                    .iter()
                    .map(u64::from)
                    .collect();
                let expect: Vec<u64> = want[&*f.file.file_name]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p.as_u64().unwrap())
                    .collect();
                assert_eq!(positions, expect, "{}", f.file.file_name);
                let first = f.file.first_row_id.unwrap() as u64;
                deleted_ids.extend(positions.iter().map(|p| first + p));
                seen += 1;
            }
        }
    }
    assert_eq!(seen, want.len());
    // Position p of the anchor is row ID first_row_id + p: the row IDs the generator deleted.
    let deleted: BTreeSet<u64> = oracle["deleted_row_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(deleted_ids, deleted);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

type Cell = (u64, bool, Option<u64>, Option<String>);

fn blob_rows(dir: &Path, query: &ScanQuery) -> Result<Vec<Cell>, BlobReadError> {
    let read = BlobColumnRead::plan(&Table::open(dir)?, None, query, Some("b"))?;
    let mut rows = Vec::new();
    read.for_each_row(ReadOptions::default(), |r| {
        rows.push((
            r.row_id,
            r.value.is_none(),
            r.value.map(|v| v.len() as u64),
            r.value.map(|v| hex(&sha256(v))),
        ));
        Ok::<(), ()>(())
    })?
    .unwrap();
    rows.sort();
    Ok(rows)
}

#[test]
fn blob_read_drops_deleted_rows_as_pypaimon_does() {
    let oracle = oracle();
    let want: Vec<Cell> = oracle["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["row_id"].as_u64().unwrap(),
                r["null"].as_bool().unwrap(),
                r["length"].as_u64(),
                r["sha256"].as_str().map(str::to_string),
            )
        })
        .collect();
    let got = blob_rows(&table_dir(), &ScanQuery::default()).unwrap();
    assert_eq!(got, want);
    let deleted: BTreeSet<u64> = oracle["deleted_row_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert!(!deleted.is_empty());
    assert!(got.iter().all(|r| !deleted.contains(&r.0)));
    // With row ranges: the same rows of the range, deleted ones still absent.
    let query = ScanQuery {
        rows: Some(vec![(10, 70)]),
        ..ScanQuery::default()
    };
    let ranged = blob_rows(&table_dir(), &query).unwrap();
    let expect: Vec<Cell> = want
        .iter()
        .filter(|r| (10..=70).contains(&r.0))
        .cloned()
        .collect();
    assert_eq!(ranged, expect);
}

fn scratch(tag: &str) -> PathBuf {
    super::scratch_table(&table_dir(), "dv_table", tag)
}

fn live_index_manifest(dir: &Path) -> PathBuf {
    let latest = std::fs::read_to_string(dir.join("snapshot/LATEST")).unwrap();
    let snap: Value = serde_json::from_slice(
        &std::fs::read(dir.join(format!("snapshot/snapshot-{}", latest.trim()))).unwrap(),
    )
    .unwrap();
    dir.join("manifest")
        .join(snap["indexManifest"].as_str().unwrap())
}

#[test]
fn a_corrupt_index_manifest_names_the_file_and_byte() {
    let dir = scratch("bad_index_manifest");
    let path = live_index_manifest(&dir);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.truncate(bytes.len() - 20);
    std::fs::write(&path, &bytes).unwrap();
    let table = Table::open(&dir).unwrap();
    let plan = table.plan(None, &ScanQuery::default()).unwrap();
    match table.splits(&plan) {
        Err(ScanError::Invalid { path: p, error }) => {
            assert_eq!(p, path);
            assert!(error.offset <= bytes.len() as u64, "{error:?}");
        }
        other => panic!("{other:?}"),
    }
    let e = blob_rows(&dir, &ScanQuery::default()).unwrap_err();
    assert!(e.to_string().contains("index-manifest-"), "{e}");
    assert!(e.to_string().contains("at byte"), "{e}");
}

#[test]
fn a_corrupt_deletion_vector_names_the_index_file_and_byte() {
    let dir = scratch("bad_dv");
    let table = Table::open(&dir).unwrap();
    let plan = table.plan(None, &ScanQuery::default()).unwrap();
    let splits = table.splits(&plan).unwrap();
    let d = splits
        .iter()
        .flat_map(|s| &s.files)
        .find_map(|f| f.deletion_file.clone())
        .unwrap();
    let clean = std::fs::read(&d.path).unwrap();
    let offset = d.offset as usize;
    // Each corruption: (byte flipped, expected kind, expected offset).
    let body_end = offset + 4 + d.length as usize;
    let cases = [
        (0, ErrorKind::UnsupportedVersion, 0),
        (offset, ErrorKind::Mismatch, offset),
        (offset + 5, ErrorKind::BadMagic, offset + 4),
        (offset + 10, ErrorKind::ChecksumMismatch, body_end),
        (body_end + 1, ErrorKind::ChecksumMismatch, body_end),
    ];
    for (at, kind, where_) in cases {
        let mut bytes = clean.clone();
        bytes[at] ^= 0x40;
        std::fs::write(&d.path, &bytes).unwrap();
        match table.read_deletion_vector(&d) {
            Err(ScanError::Invalid { path, error }) => {
                assert_eq!(path, Path::new(&d.path));
                assert_eq!(
                    (error.kind, error.offset),
                    (kind, where_ as u64),
                    "flip at {at}"
                );
            }
            other => panic!("flip at {at}: {other:?}"),
        }
    }
    // Truncated: the vector runs past the end.
    std::fs::write(&d.path, &clean[..body_end]).unwrap();
    let e = table.read_deletion_vector(&d).unwrap_err();
    assert!(
        matches!(&e, ScanError::Invalid { error, .. } if error.kind == ErrorKind::Truncated),
        "{e}"
    );
    // The BLOB read fails with the same error rather than returning deleted rows.
    let e = blob_rows(&dir, &ScanQuery::default()).unwrap_err();
    assert!(e.to_string().contains(&d.path), "{e}");
}

/// Every single-byte flip and every truncation of the index manifest and of a
/// deletion-vector index file: an error or a decode, never a panic; a flip inside a vector
/// (size, magic, bitmap or checksum) or a cut before its end is always caught, bytes of other
/// vectors change nothing.
#[test]
fn mutations_of_index_manifest_and_vectors_never_panic() {
    use lakecore::paimon::deletion::{decode_index_manifest, read_deletion_vector};
    let dir = table_dir();
    let manifest = std::fs::read(live_index_manifest(&dir)).unwrap();
    assert!(!decode_index_manifest(&manifest).unwrap().is_empty());
    for at in 0..manifest.len() {
        let mut m = manifest.clone();
        m[at] ^= 0x5a;
        let _ = decode_index_manifest(&m);
        let _ = decode_index_manifest(&manifest[..at]);
    }
    let table = Table::open(&dir).unwrap();
    let splits = table
        .splits(&table.plan(None, &ScanQuery::default()).unwrap())
        .unwrap();
    for d in splits
        .iter()
        .flat_map(|s| &s.files)
        .filter_map(|f| f.deletion_file.as_ref())
    {
        let file = std::fs::read(&d.path).unwrap();
        let want = read_deletion_vector(&file, d.offset, Some(d.length), d.cardinality).unwrap();
        let vector = d.offset as usize..(d.offset + 4 + d.length + 4) as usize;
        for at in 0..file.len() {
            let mut f = file.clone();
            f[at] ^= 0x5a;
            let got = read_deletion_vector(&f, d.offset, Some(d.length), d.cardinality);
            if at == 0 || vector.contains(&at) {
                assert!(got.is_err(), "flip at {at} of {}", d.path);
            } else {
                assert_eq!(got.unwrap(), want, "flip at {at} outside the vector");
            }
            // Truncated before the vector's end: an error; after it: the same vector.
            let cut = read_deletion_vector(&file[..at], d.offset, Some(d.length), None);
            match at < vector.end {
                true => assert!(cut.is_err(), "cut at {at}"),
                false => assert_eq!(cut.unwrap(), want, "cut at {at}"),
            }
        }
    }
}
