//! Bolero harnesses for a table's JSON metadata: snapshot files, `snapshot/LATEST`, tags and
//! schema files, arbitrary and mutated (by field, with hostile values: wrong types, huge and
//! negative numbers, deep nesting, removed fields), under a copy of a real table written by
//! pypaimon-rust. Opening, resolving, reading the schema and planning (with and without a
//! filter) never panic; whatever plans must agree with itself when planned again.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "paimon")]

use lakecore::paimon::{Filter, ScanQuery, SnapshotSpec, Table};
use serde_json::Value;
use std::path::{Path, PathBuf};

const TABLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/paimon/warehouse/sc.db/part_append_rs"
);

/// Each case plans a real table (several manifests) twice, so `cargo test` runs a few
/// hundred; the libFuzzer campaign (`fuzz/campaign.sh`) runs them for minutes.
fn iterations() -> usize {
    if cfg!(miri) {
        5
    } else {
        300
    }
}

/// A private copy of the real table (each harness its own, as tests run in parallel).
fn copy_table(tag: &str) -> PathBuf {
    let dst =
        std::env::temp_dir().join(format!("lakecore-fuzz-table-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dst);
    for sub in ["manifest", "schema", "snapshot"] {
        std::fs::create_dir_all(dst.join(sub)).unwrap();
        for e in std::fs::read_dir(Path::new(TABLE).join(sub)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), dst.join(sub).join(e.file_name())).unwrap();
        }
    }
    std::fs::create_dir_all(dst.join("tag")).unwrap();
    std::fs::copy(dst.join("snapshot/snapshot-3"), dst.join("tag/tag-t1")).unwrap();
    dst
}

/// The files a case rewrites, with their original bytes.
fn targets(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    [
        "snapshot/snapshot-4",
        "schema/schema-0",
        "snapshot/LATEST",
        "tag/tag-t1",
    ]
    .iter()
    .map(|f| {
        let p = dir.join(f);
        let bytes = std::fs::read(&p).unwrap();
        (p, bytes)
    })
    .collect()
}

/// Everything a reader does with a table's JSON: nothing may panic. A successful plan must
/// be deterministic.
fn exercise(dir: &Path) {
    let Ok(table) = Table::open(dir) else {
        return;
    };
    let _ = table.latest_snapshot_id();
    let _ = table.snapshot_ids();
    let _ = table.tag("t1");
    for spec in [
        SnapshotSpec::Latest,
        SnapshotSpec::Id(4),
        SnapshotSpec::Tag("t1".into()),
    ] {
        let _ = table.resolve(&spec);
    }
    if let Ok(schema) = table.schema(0) {
        let _ = schema.partition_path(&[0u8; 16]);
    }
    let filtered = ScanQuery {
        filter: Filter::parse("dt >= '2024-01-02' AND hr IN (3, 4)").ok(),
        ..ScanQuery::default()
    };
    for query in [ScanQuery::default(), filtered] {
        if let Ok(plan) = table.plan(None, &query) {
            let again = table.plan(None, &query).unwrap();
            assert_eq!(plan.files.len(), again.files.len());
        }
    }
}

/// Hostile replacements for a JSON value.
fn hostile(pick: u8, depth: u8) -> Value {
    match pick % 16 {
        0 => Value::Null,
        1 => Value::Bool(true),
        2 => (-1i64).into(),
        3 => 0.into(),
        4 => i64::MAX.into(),
        5 => u64::MAX.into(),
        6 => i64::MIN.into(),
        7 => serde_json::json!(1e308),
        8 => "".into(),
        9 => "\u{1F600}é\u{0}".into(),
        10 => "9".repeat(64).into(),
        11 => Value::Array(vec![]),
        12 => Value::Object(Default::default()),
        13 => {
            // Deep nesting.
            let mut v = Value::Null;
            for _ in 0..(usize::from(depth) * 4) {
                v = Value::Array(vec![v]);
            }
            v
        }
        14 => "x".repeat(usize::from(depth) * 256).into(),
        _ => serde_json::json!(-0.5),
    }
}

/// Every value's JSON pointer, depth first.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                pointers(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        _ => {}
    }
}

/// Replaces (or, for `op` odd, removes) the value at the `which`-th pointer.
fn mutate_json(bytes: &[u8], which: u16, op: u8, depth: u8) -> Vec<u8> {
    let Ok(mut v) = serde_json::from_slice::<Value>(bytes) else {
        return bytes.to_vec();
    };
    let mut ptrs = Vec::new();
    pointers(&v, String::new(), &mut ptrs);
    let ptr = &ptrs[usize::from(which) % ptrs.len()];
    if op % 2 == 1 && !ptr.is_empty() {
        let (parent, key) = ptr.rsplit_once('/').unwrap();
        match v.pointer_mut(parent) {
            Some(Value::Object(o)) => {
                o.remove(&key.replace("~1", "/").replace("~0", "~"));
            }
            Some(Value::Array(a)) => {
                if let Ok(i) = key.parse::<usize>() {
                    if i < a.len() {
                        a.remove(i);
                    }
                }
            }
            _ => {}
        }
    } else if let Some(slot) = v.pointer_mut(ptr) {
        *slot = hostile(op / 2, depth);
    }
    serde_json::to_vec(&v).unwrap()
}

/// Arbitrary bytes in place of one of the JSON files.
#[test]
fn table_json_arbitrary_bytes() {
    let dir = copy_table("arbitrary");
    let files = targets(&dir);
    bolero::check!()
        .with_iterations(iterations())
        .with_max_len(2048)
        .with_type::<(u8, Vec<u8>)>()
        .for_each(|(which, bytes)| {
            let (path, original) = &files[usize::from(*which) % files.len()];
            std::fs::write(path, bytes).unwrap();
            exercise(&dir);
            std::fs::write(path, original).unwrap();
        });
    let _ = std::fs::remove_dir_all(&dir);
}

/// Field-level mutations of the real snapshot, schema and tag files (up to three each), then
/// a few raw byte edits.
#[test]
fn table_json_mutated_fields() {
    let dir = copy_table("mutated");
    let files = targets(&dir);
    bolero::check!()
        .with_iterations(iterations())
        .with_type::<(u8, Vec<(u16, u8, u8)>, Vec<(u16, u8)>)>()
        .for_each(|(which, edits, raw)| {
            let (path, original) = &files[usize::from(*which) % files.len()];
            let mut bytes = original.clone();
            for &(ptr, op, depth) in edits.iter().take(3) {
                bytes = mutate_json(&bytes, ptr, op, depth);
            }
            for &(at, b) in raw.iter().take(2) {
                if !bytes.is_empty() {
                    let i = usize::from(at) % bytes.len();
                    bytes[i] = b;
                }
            }
            std::fs::write(path, &bytes).unwrap();
            exercise(&dir);
            std::fs::write(path, original).unwrap();
        });
    let _ = std::fs::remove_dir_all(&dir);
}
