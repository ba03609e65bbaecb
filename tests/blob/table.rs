//! BLOB columns read through the table (`lakecore::paimon::blob`) on tables written by
//! pypaimon 2.1.0, against pypaimon's own read recorded next to each table
//! (`tests/clients/make_blob_tables.py`): row IDs, NULLs, lengths and SHA-256 of the values;
//! row ranges and partition filters; the lost-update lint against the generator's known
//! update rows; bad input naming the file.

use lakecore::codec::checksum::sha256;
use lakecore::paimon::blob::{BlobColumnRead, BlobReadError, ReadOptions};
use lakecore::paimon::{ScanQuery, Table};
use serde_json::Value;
use std::path::{Path, PathBuf};

const WAREHOUSE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/paimon/blob_warehouse/blobtab.db"
);

/// `(row_id, null, length, sha256 hex)` per row.
type Cell = (u64, bool, Option<u64>, Option<String>);

fn table_dir(name: &str) -> PathBuf {
    Path::new(WAREHOUSE).join(name)
}

fn expected(name: &str) -> Vec<Cell> {
    let text = std::fs::read_to_string(Path::new(WAREHOUSE).join(format!("{name}.expected.json")))
        .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["rows"]
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
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn read(dir: &Path, query: &ScanQuery) -> Result<Vec<(Cell, i64)>, BlobReadError> {
    let plan = BlobColumnRead::plan(&Table::open(dir)?, None, query, Some("b"))?;
    let mut rows = Vec::new();
    plan.for_each_row(ReadOptions::default(), |r| {
        let cell = (
            r.row_id,
            r.value.is_none(),
            r.value.map(|v| v.len() as u64),
            r.value.map(|v| hex(&sha256(v))),
        );
        rows.push((cell, r.sequence_number));
        Ok::<(), ()>(())
    })?
    .unwrap();
    Ok(rows)
}

fn cells(rows: &[(Cell, i64)]) -> Vec<Cell> {
    rows.iter().map(|r| r.0.clone()).collect()
}

#[test]
fn every_table_reads_as_pypaimon_reads_it() {
    for name in ["layers", "rolled", "parted"] {
        let want = expected(name);
        assert!(want.len() >= 200, "{name}");
        let got = read(&table_dir(name), &ScanQuery::default()).unwrap();
        assert_eq!(cells(&got), want, "{name}");
        // Sequence numbers: a real file's for every row (no row of these tables is a
        // placeholder everywhere).
        assert!(got.iter().all(|r| r.1 >= 1), "{name}");
    }
    // The tables exercise what they claim: NULLs, several layers, rolled files.
    let plan = BlobColumnRead::plan(
        &Table::open(table_dir("layers")).unwrap(),
        None,
        &ScanQuery::default(),
        None,
    )
    .unwrap();
    assert_eq!(plan.column(), "b");
    assert!(expected("layers").iter().any(|c| c.1));
    assert!(plan.bunches().iter().any(|b| b.files.len() > 3));
}

#[test]
fn batches_equal_rows() {
    let plan = BlobColumnRead::plan(
        &Table::open(table_dir("layers")).unwrap(),
        None,
        &ScanQuery::default(),
        None,
    )
    .unwrap();
    let mut ids = Vec::new();
    plan.for_each_batch(ReadOptions::default(), |batch| {
        for row in batch.iter() {
            ids.push((row.row_id, row.value.map(|p| hex(&sha256(p.bytes)))));
        }
        Ok::<(), ()>(())
    })
    .unwrap()
    .unwrap();
    let want: Vec<_> = expected("layers").into_iter().map(|c| (c.0, c.3)).collect();
    assert_eq!(ids, want);
}

#[test]
fn row_ranges_select_the_same_rows_as_the_full_read() {
    let dir = table_dir("layers");
    let full = read(&dir, &ScanQuery::default()).unwrap();
    let ranges = vec![(250, 299), (3, 40), (100, 100), (38, 45)];
    let query = ScanQuery {
        rows: Some(ranges.clone()),
        ..ScanQuery::default()
    };
    let got = read(&dir, &query).unwrap();
    let want: Vec<_> = full
        .iter()
        .filter(|r| ranges.iter().any(|&(a, b)| (a..=b).contains(&r.0 .0)))
        .cloned()
        .collect();
    assert_eq!(got.len(), 50 + 43 + 1);
    // Values and sequence numbers as in the full read.
    assert_eq!(got, want);
    for id in [0u64, 5, 77, 299] {
        let one = ScanQuery {
            rows: Some(vec![(id, id)]),
            ..ScanQuery::default()
        };
        let got = read(&dir, &one).unwrap();
        assert_eq!(got.as_slice(), &full[id as usize..=id as usize], "row {id}");
    }
}

#[test]
fn partition_filter_reads_one_partition() {
    let dir = table_dir("parted");
    let want = expected("parted");
    let mut seen = 0;
    for dt in ["2024-01-01", "2024-01-02"] {
        let query = ScanQuery {
            partition: vec![("dt".into(), dt.into())],
            ..ScanQuery::default()
        };
        let got = cells(&read(&dir, &query).unwrap());
        assert_eq!(got.len(), 100, "{dt}");
        for c in &got {
            assert!(want.contains(c), "{dt} {c:?}");
        }
        seen += got.len();
    }
    assert_eq!(seen, want.len());
}

/// Row ID -> SHA-256 (or `None` for NULL) of the last value a partial update wrote, as the
/// generator recorded it.
fn updates(name: &str) -> Vec<(u64, Option<String>)> {
    let text = std::fs::read_to_string(Path::new(WAREHOUSE).join(format!("{name}.expected.json")))
        .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let mut out: Vec<_> = v["updates"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.parse().unwrap(), v.as_str().map(str::to_string)))
        .collect();
    out.sort();
    out
}

#[test]
fn lint_reports_exactly_the_updates_pypaimon_loses() {
    for name in ["layers", "rolled", "parted"] {
        let lost = BlobColumnRead::plan(
            &Table::open(table_dir(name)).unwrap(),
            None,
            &ScanQuery::default(),
            None,
        )
        .unwrap()
        .check()
        .unwrap();
        let mut flagged: Vec<u64> = lost.iter().map(|l| l.row_id).collect();
        flagged.dedup();
        for l in &lost {
            assert!(l.winner_sequence_number > l.update_sequence_number, "{l:?}");
            assert_ne!(l.winner, l.update);
        }
        // Independent of lakecore: rows whose last update pypaimon does not return.
        let read = expected(name);
        let ups = updates(name);
        let visibly_lost: Vec<u64> = ups
            .iter()
            .filter(|(id, sha)| read[*id as usize].3 != *sha)
            .map(|u| u.0)
            .collect();
        // Every visibly lost update is flagged; every flagged row was updated (a flagged
        // row not visibly lost had its update write what the base holds, e.g. NULL).
        assert!(visibly_lost.iter().all(|id| flagged.contains(id)), "{name}");
        assert!(
            flagged.iter().all(|id| ups.iter().any(|u| u.0 == *id)),
            "{name}"
        );
        match name {
            "rolled" => {
                assert!(flagged.len() > 10);
                assert_eq!(flagged, visibly_lost);
            }
            "parted" => assert!(flagged.is_empty() && visibly_lost.is_empty()),
            _ => assert!(flagged.len() > 10),
        }
    }
}

/// A copy of `layers` to damage.
fn scratch_copy(tag: &str) -> PathBuf {
    super::scratch_table(&table_dir("layers"), "blob_table", tag)
}

fn some_blob(dir: &Path) -> PathBuf {
    let mut blobs: Vec<PathBuf> = std::fs::read_dir(dir.join("bucket-0"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "blob"))
        .collect();
    blobs.sort();
    blobs.swap_remove(0)
}

#[test]
fn bad_files_are_named() {
    let dir = scratch_copy("missing");
    let victim = some_blob(&dir);
    std::fs::remove_file(&victim).unwrap();
    match read(&dir, &ScanQuery::default()) {
        Err(BlobReadError::Io { path, .. }) => assert_eq!(path, victim),
        other => panic!("{other:?}"),
    }
    let dir = scratch_copy("short");
    let victim = some_blob(&dir);
    let bytes = std::fs::read(&victim).unwrap();
    std::fs::write(&victim, &bytes[..bytes.len() - 1]).unwrap();
    let e = read(&dir, &ScanQuery::default()).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, BlobReadError::Invalid { .. }), "{e:?}");
    assert!(
        text.contains(victim.file_name().unwrap().to_str().unwrap()),
        "{text}"
    );
    assert!(
        text.contains(&format!("file_size {}", bytes.len())) && text.contains("mismatch"),
        "{text}"
    );
}

#[test]
fn queries_the_table_cannot_answer() {
    let table = Table::open(table_dir("layers")).unwrap();
    let e = BlobColumnRead::plan(&table, None, &ScanQuery::default(), Some("name")).unwrap_err();
    assert!(e.to_string().contains("no BLOB column \"name\""), "{e}");
    let plain = Table::open(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/paimon/warehouse/sc.db/part_append_rs"
    ))
    .unwrap();
    let e = BlobColumnRead::plan(&plain, None, &ScanQuery::default(), None).unwrap_err();
    assert!(e.to_string().contains("data-evolution.enabled"), "{e}");
}

#[test]
fn a_missing_index_manifest_is_an_error_naming_it() {
    // Deletion vectors live in the index manifest: a snapshot naming one that is not there
    // must fail rather than return deleted rows.
    let dir = scratch_copy("index_manifest");
    let latest = std::fs::read_to_string(dir.join("snapshot/LATEST")).unwrap();
    let path = dir.join(format!("snapshot/snapshot-{}", latest.trim()));
    let mut snap: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    snap["indexManifest"] = Value::from("index-manifest-0");
    std::fs::write(&path, serde_json::to_vec(&snap).unwrap()).unwrap();
    match read(&dir, &ScanQuery::default()) {
        Err(e @ BlobReadError::Scan(lakecore::paimon::ScanError::Io { .. })) => {
            assert!(e.to_string().contains("manifest/index-manifest-0"), "{e}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn descriptor_fields_have_no_bunches_and_are_refused() {
    let dir = scratch_copy("descriptor_field");
    let path = dir.join("schema/schema-0");
    let mut schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    schema["options"]["blob-descriptor-field"] = Value::from("b");
    std::fs::write(&path, serde_json::to_vec(&schema).unwrap()).unwrap();
    let table = Table::open(&dir).unwrap();
    match BlobColumnRead::plan(&table, None, &ScanQuery::default(), Some("b")) {
        Err(BlobReadError::Unsupported(m)) => assert!(m.contains("blob-descriptor-field"), "{m}"),
        other => panic!("{other:?}"),
    }
    // Without a column named: the table has no other BLOB column.
    let e = BlobColumnRead::plan(&table, None, &ScanQuery::default(), None).unwrap_err();
    assert!(e.to_string().contains("no BLOB column"), "{e}");
}
