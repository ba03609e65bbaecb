//! Scan planning on tables pypaimon wrote with each manifest codec it offers (null, deflate,
//! snappy, zstd, bzip2, xz): `tests/data/paimon/warehouse/codecs.db`, written by
//! `tests/data/paimon/make_codec_tables.py`. The oracle is pypaimon's own plan of every
//! snapshot, unfiltered and filtered on a partition key (`<codec>.oracle.json`).
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use super::warehouse::{json, partition_values};
use lakecore::codec::avro::Container;
use lakecore::paimon::{ScanPlan, ScanQuery, Table};
use lakecore::sidecar::BuildSettings;
use lakecore_testkit::hex;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const DB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/paimon/warehouse/codecs.db"
);

/// `(table = manifest.compression value, avro.codec in the files)`.
const CODECS: [(&str, &str); 6] = [
    ("null", "null"),
    ("deflate", "deflate"),
    ("snappy", "snappy"),
    ("zstd", "zstandard"),
    ("bzip2", "bzip2"),
    ("xz", "xz"),
];

/// The partition key types of every codec table (`dt STRING, hr INT`).
const TYPES: [&str; 2] = ["STRING", "INT"];

/// `(partition bytes, bucket, file name, row count)`.
type Row = (Vec<u8>, i32, String, i64);

fn table_dir(codec: &str) -> PathBuf {
    Path::new(DB).join(codec)
}

fn oracle(codec: &str) -> serde_json::Value {
    json(&Path::new(DB).join(format!("{codec}.oracle.json")))
}

fn plan_rows(plan: &ScanPlan) -> BTreeSet<Row> {
    plan.files
        .iter()
        .map(|f| {
            (
                f.partition.to_vec(),
                f.bucket,
                f.file_name.to_string(),
                f.row_count,
            )
        })
        .collect()
}

/// The oracle's files as rows; checks that each file's partition bytes decode to the
/// partition values pypaimon reported.
fn oracle_rows<'a>(files: impl IntoIterator<Item = &'a serde_json::Value>) -> BTreeSet<Row> {
    files
        .into_iter()
        .map(|f| {
            let partition = hex::unhex(f["partition_hex"].as_str().unwrap());
            let values = partition_values(&partition, &TYPES);
            assert_eq!(values[0], f["partition"]["dt"].as_str().unwrap(), "{f}");
            assert_eq!(
                values[1],
                f["partition"]["hr"].as_i64().unwrap().to_string()
            );
            (
                partition,
                i32::try_from(f["bucket"].as_i64().unwrap()).unwrap(),
                f["file_name"].as_str().unwrap().to_string(),
                f["row_count"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn snapshots(oracle: &serde_json::Value) -> &[serde_json::Value] {
    oracle["snapshots"].as_array().unwrap()
}

fn files(snapshot: &serde_json::Value, key: &str) -> Vec<serde_json::Value> {
    snapshot[key].as_array().unwrap().clone()
}

fn query(conditions: &[(&str, &str)]) -> ScanQuery {
    ScanQuery {
        partition: conditions
            .iter()
            .map(|&(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..ScanQuery::default()
    }
}

#[test]
fn every_manifest_and_manifest_list_carries_its_codec_and_decodes() {
    for (table, avro) in CODECS {
        let oracle = oracle(table);
        let codecs = oracle["avro_codecs"].as_object().unwrap();
        let on_disk: BTreeSet<String> = fs::read_dir(table_dir(table).join("manifest"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(on_disk, codecs.keys().cloned().collect(), "{table}");
        let mut manifests = 0;
        for (name, written) in codecs {
            assert_eq!(written.as_str().unwrap(), avro, "{table}/{name}");
            let bytes = fs::read(table_dir(table).join("manifest").join(name)).unwrap();
            let container = Container::parse(&bytes).unwrap();
            assert_eq!(container.codec(), avro.as_bytes(), "{table}/{name}");
            if !name.starts_with("manifest-list-") {
                // Every block decompressed and every entry decoded (the sidecar builder's
                // front end reads the whole manifest).
                let built = lakecore::paimon::manifest::build_from_manifest(
                    &bytes,
                    BuildSettings::default(),
                )
                .unwrap_or_else(|e| panic!("{table}/{name}: {e:?}"));
                assert!(!built.is_empty());
                manifests += 1;
            }
        }
        // One manifest per commit (two appends, an overwrite, an append).
        assert_eq!(manifests, 4, "{table}");
    }
}

#[test]
fn every_snapshot_plans_the_live_files_pypaimon_plans() {
    for (table, _) in CODECS {
        let oracle = oracle(table);
        let t = Table::open(table_dir(table)).unwrap();
        let latest = oracle["latest"].as_u64().unwrap();
        assert_eq!(t.latest_snapshot_id().unwrap(), Some(latest));
        for snap in snapshots(&oracle) {
            let id = snap["id"].as_u64().unwrap();
            let plan = t.plan(Some(id), &ScanQuery::default()).unwrap();
            let want = oracle_rows(&files(snap, "files"));
            assert!(!want.is_empty());
            assert_eq!(plan_rows(&plan), want, "{table} snapshot {id}");
            assert_eq!(plan.files.len(), want.len(), "{table} snapshot {id}");
            assert!(plan.files.iter().all(|f| f.total_buckets == 2));
            assert!(plan.stats.manifests >= 1 && plan.stats.blocks_read >= 1);
        }
        // No snapshot given: the latest.
        let plan = t.plan(None, &ScanQuery::default()).unwrap();
        assert_eq!(plan.snapshot, Some(latest));
        let last = snapshots(&oracle).last().unwrap();
        assert_eq!(plan_rows(&plan), oracle_rows(&files(last, "files")));
    }
}

#[test]
fn partition_filtered_plans_equal_the_oracle_filtered() {
    let mut nonempty = 0;
    for (table, _) in CODECS {
        let oracle = oracle(table);
        let (key, value) = oracle["filter"].as_object().unwrap().iter().next().unwrap();
        let value = value.as_str().unwrap();
        let t = Table::open(table_dir(table)).unwrap();
        for snap in snapshots(&oracle) {
            let id = snap["id"].as_u64().unwrap();
            let all = files(snap, "files");
            // pypaimon's own filtered plan, and the same as its unfiltered plan filtered.
            let want = oracle_rows(&files(snap, "filtered_files"));
            assert_eq!(
                want,
                oracle_rows(all.iter().filter(|f| f["partition"][key] == value))
            );
            let plan = t.plan(Some(id), &query(&[(key, value)])).unwrap();
            assert_eq!(
                plan_rows(&plan),
                want,
                "{table} snapshot {id} {key}={value}"
            );
            nonempty += usize::from(!want.is_empty());

            // Each (dt, hr) partition live in the snapshot, and every hr alone.
            let partitions: BTreeSet<(String, i64)> = all
                .iter()
                .map(|f| {
                    let p = &f["partition"];
                    (
                        p["dt"].as_str().unwrap().to_string(),
                        p["hr"].as_i64().unwrap(),
                    )
                })
                .collect();
            for (dt, hr) in &partitions {
                let hr_s = hr.to_string();
                let q = query(&[("dt", dt), ("hr", &hr_s)]);
                let want = oracle_rows(all.iter().filter(|f| {
                    f["partition"]["dt"] == dt.as_str() && f["partition"]["hr"] == *hr
                }));
                assert!(!want.is_empty());
                assert_eq!(plan_rows(&t.plan(Some(id), &q).unwrap()), want, "{q:?}");
                let q = query(&[("hr", &hr_s)]);
                let want = oracle_rows(all.iter().filter(|f| f["partition"]["hr"] == *hr));
                assert_eq!(plan_rows(&t.plan(Some(id), &q).unwrap()), want, "{q:?}");
            }
        }
        // The overwrite of dt=2024-01-01 (snapshot 3) deleted partition hr=1: live before,
        // gone after.
        let q = query(&[("dt", "2024-01-01"), ("hr", "1")]);
        assert_eq!(t.plan(Some(2), &q).unwrap().files.len(), 1, "{table}");
        assert!(t.plan(Some(3), &q).unwrap().files.is_empty(), "{table}");
        assert!(t.plan(None, &q).unwrap().files.is_empty(), "{table}");
        // A value no partition has.
        let q = query(&[("dt", "1999-12-31")]);
        assert!(t.plan(None, &q).unwrap().files.is_empty(), "{table}");
    }
    assert!(nonempty >= CODECS.len() * 3, "{nonempty}");
}

/// `id IS NULL` on the bucket key (`bucket = 2`, `bucket-key = id`): the null key hashes to
/// one bucket, so only that bucket's files can hold a match. paimon-rust 0.4.0 plans exactly
/// bucket 0 for this query on these tables (6 of 10 files, recorded from
/// `pypaimon.read.native_plan`); pypaimon 2.1.0 does not prune buckets for `IS NULL` and
/// keeps all 10. With `AND` on a partition key the bucket still applies; `IS NOT NULL` and an
/// `OR` with a non-key test keep every bucket.
#[test]
fn is_null_on_the_bucket_key_keeps_the_null_bucket() {
    use lakecore::paimon::Filter;
    for codec in ["null", "deflate", "snappy", "zstd"] {
        let table = Table::open(table_dir(codec)).unwrap();
        let all = table.plan(None, &ScanQuery::default()).unwrap();
        let with = |text: &str| {
            let q = ScanQuery {
                filter: Some(Filter::parse(text).unwrap()),
                ..ScanQuery::default()
            };
            table.plan(None, &q).unwrap()
        };
        let null = with("id IS NULL");
        let buckets: BTreeSet<i32> = null.files.iter().map(|f| f.bucket).collect();
        assert_eq!(buckets, BTreeSet::from([0]), "{codec}");
        assert_eq!((null.files.len(), all.files.len()), (6, 10), "{codec}");
        let in_bucket0: BTreeSet<Row> = plan_rows(&all).into_iter().filter(|r| r.1 == 0).collect();
        assert_eq!(plan_rows(&null), in_bucket0, "{codec}");
        assert_eq!(with("id IS NOT NULL").files.len(), 10, "{codec}");
        assert_eq!(with("id IS NULL OR hr > 0").files.len(), 10, "{codec}");
        let and = with("id IS NULL AND hr <= 7");
        assert!(and.files.iter().all(|f| f.bucket == 0), "{codec}");
    }
}
