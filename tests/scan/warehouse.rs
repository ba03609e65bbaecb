//! Scan planning against an independent full read: every manifest decoded with
//! `apache-avro` directly, ADD/DELETE reconciled, then filtered with a reference predicate.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::type_complexity
)]

use apache_avro::types::Value;
use lakecore::paimon::{ManifestRead, ScanOptions, ScanPlan, ScanQuery, Table};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use lakecore_testkit::rng::Rng;

const WAREHOUSE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse");

fn tables() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for db in ["sc.db", "blob.db"] {
        for t in fs::read_dir(Path::new(WAREHOUSE).join(db)).unwrap() {
            let p = t.unwrap().path();
            if p.join("snapshot").is_dir() {
                out.push(p);
            }
        }
    }
    out.sort();
    assert_eq!(out.len(), 5, "{out:?}");
    out
}

// ---------------------------------------------------------------- reference full read

#[derive(Clone, Debug)]
struct RefEntry {
    add: bool,
    partition: Vec<u8>,
    bucket: i32,
    total: i32,
    name: String,
    first: Option<i64>,
    count: i64,
}

fn record(v: &Value) -> &[(String, Value)] {
    match v {
        Value::Union(_, inner) => record(inner),
        Value::Record(f) => f,
        other => panic!("not a record: {other:?}"),
    }
}

fn get<'v>(r: &'v [(String, Value)], name: &str) -> Option<&'v Value> {
    r.iter().find(|(k, _)| k == name).map(|(_, v)| match v {
        Value::Union(_, inner) => &**inner,
        v => v,
    })
}

fn read_avro(path: &Path) -> Vec<Value> {
    let file = fs::File::open(path).unwrap();
    apache_avro::Reader::new(file)
        .unwrap()
        .map(|v| v.unwrap())
        .collect()
}

pub(super) fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// Manifest file names of snapshot `id` (base list then delta list).
fn ref_manifests(dir: &Path, id: u64) -> Vec<String> {
    let snap = json(&dir.join(format!("snapshot/snapshot-{id}")));
    let mut out = Vec::new();
    for key in ["baseManifestList", "deltaManifestList"] {
        let list = dir.join("manifest").join(snap[key].as_str().unwrap());
        for v in read_avro(&list) {
            match get(record(&v), "_FILE_NAME") {
                Some(Value::String(s)) => out.push(s.clone()),
                other => panic!("{other:?}"),
            }
        }
    }
    out
}

fn ref_entries(dir: &Path, manifest: &str) -> Vec<RefEntry> {
    read_avro(&dir.join("manifest").join(manifest))
        .iter()
        .map(|v| {
            let r = record(v);
            let file = record(get(r, "_FILE").unwrap());
            let int = |v: Option<&Value>| match v {
                Some(Value::Int(x)) => *x,
                other => panic!("{other:?}"),
            };
            RefEntry {
                add: int(get(r, "_KIND")) == 0,
                partition: match get(r, "_PARTITION") {
                    Some(Value::Bytes(b)) => b.clone(),
                    other => panic!("{other:?}"),
                },
                bucket: int(get(r, "_BUCKET")),
                total: int(get(r, "_TOTAL_BUCKETS")),
                name: match get(file, "_FILE_NAME") {
                    Some(Value::String(s)) => s.clone(),
                    other => panic!("{other:?}"),
                },
                first: match get(file, "_FIRST_ROW_ID") {
                    Some(Value::Long(x)) => Some(*x),
                    _ => None,
                },
                count: match get(file, "_ROW_COUNT") {
                    Some(Value::Long(x)) => *x,
                    other => panic!("{other:?}"),
                },
            }
        })
        .collect()
}

type Key = (Vec<u8>, i32, String);

/// One snapshot of one test table, with the reference's view of it.
struct SnapshotCase {
    dir: PathBuf,
    table: Table,
    keys: Vec<String>,
    types: Vec<String>,
    id: u64,
    /// The live files, reconciled by the reference.
    live: BTreeMap<Key, RefEntry>,
    /// Every entry (ADD and DELETE) of the snapshot's manifests, in order.
    all: Vec<RefEntry>,
}

/// Every snapshot of every test table.
fn snapshot_cases() -> Vec<SnapshotCase> {
    let mut out = Vec::new();
    for dir in tables() {
        let (keys, types) = partition_schema(&dir);
        for id in snapshot_ids(&dir) {
            out.push(SnapshotCase {
                table: Table::open(&dir).unwrap(),
                keys: keys.clone(),
                types: types.clone(),
                id,
                live: ref_live(&dir, id),
                all: ref_manifests(&dir, id)
                    .iter()
                    .flat_map(|m| ref_entries(&dir, m))
                    .collect(),
                dir: dir.clone(),
            });
        }
    }
    out
}

fn ref_live(dir: &Path, id: u64) -> BTreeMap<Key, RefEntry> {
    let mut live = BTreeMap::new();
    for m in ref_manifests(dir, id) {
        for e in ref_entries(dir, &m) {
            let key = (e.partition.clone(), e.bucket, e.name.clone());
            if e.add {
                live.insert(key, e);
            } else {
                live.remove(&key);
            }
        }
    }
    live
}

/// Partition field values as text (INT and STRING keys; null as Paimon's default name).
pub(super) fn partition_values(bytes: &[u8], types: &[&str]) -> Vec<String> {
    let arity = i32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
    assert_eq!(arity, types.len());
    let row = &bytes[4..];
    let null_len = (arity + 63 + 8) / 64 * 8;
    (0..arity)
        .map(|i| {
            if row[(i + 8) / 8] & (1 << ((i + 8) % 8)) != 0 {
                return "__DEFAULT_PARTITION__".to_string();
            }
            let slot: [u8; 8] = row[null_len + 8 * i..null_len + 8 * i + 8]
                .try_into()
                .unwrap();
            match types[i] {
                "INT" => i32::from_le_bytes(slot[..4].try_into().unwrap()).to_string(),
                "STRING" => {
                    let b = if slot[7] & 0x80 != 0 {
                        slot[..usize::from(slot[7] & 0x7f)].to_vec()
                    } else {
                        let raw = u64::from_le_bytes(slot);
                        let (off, len) = ((raw >> 32) as usize, (raw & 0xffff_ffff) as usize);
                        row[off..off + len].to_vec()
                    };
                    String::from_utf8(b).unwrap()
                }
                t => panic!("type {t} not in the test tables"),
            }
        })
        .collect()
}

/// `(partition key names, their type strings)` from the schema JSON.
fn partition_schema(dir: &Path) -> (Vec<String>, Vec<String>) {
    let schema = json(&dir.join("schema/schema-0"));
    let keys: Vec<String> = schema["partitionKeys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    let types = keys
        .iter()
        .map(|k| {
            let f = schema["fields"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["name"] == k.as_str())
                .unwrap();
            f["type"].as_str().unwrap().to_string()
        })
        .collect();
    (keys, types)
}

fn ref_matches(e: &RefEntry, q: &ScanQuery, keys: &[String], types: &[String]) -> bool {
    if let (Some(ranges), Some(first)) = (&q.rows, e.first) {
        if first >= 0 && e.count >= 1 {
            let last = first as i128 + e.count as i128 - 1;
            if !ranges
                .iter()
                .any(|&(a, b)| (a as i128) <= last && (first as i128) <= b as i128)
            {
                return false;
            }
        }
    }
    if let Some(buckets) = &q.buckets {
        if !buckets
            .iter()
            .any(|&(b, t)| b == e.bucket && t.is_none_or(|t| t == e.total))
        {
            return false;
        }
    }
    if !q.partition.is_empty() {
        let types: Vec<&str> = types.iter().map(String::as_str).collect();
        let values = partition_values(&e.partition, &types);
        for (k, v) in &q.partition {
            let i = keys.iter().position(|x| x == k).unwrap();
            let same = match types[i] {
                "INT" => {
                    v.parse::<i32>().ok().map(|x| x.to_string()) == Some(values[i].clone())
                        || *v == values[i]
                }
                _ => *v == values[i],
            };
            if !same {
                return false;
            }
        }
    }
    true
}

fn plan_set(plan: &ScanPlan) -> BTreeSet<Key> {
    plan.files
        .iter()
        .map(|f| (f.partition.to_vec(), f.bucket, f.file_name.to_string()))
        .collect()
}

fn ref_set(
    live: &BTreeMap<Key, RefEntry>,
    q: &ScanQuery,
    keys: &[String],
    types: &[String],
) -> BTreeSet<Key> {
    live.iter()
        .filter(|(_, e)| ref_matches(e, q, keys, types))
        .map(|(k, _)| k.clone())
        .collect()
}

fn snapshot_ids(dir: &Path) -> Vec<u64> {
    let mut ids: Vec<u64> = fs::read_dir(dir.join("snapshot"))
        .unwrap()
        .filter_map(|e| {
            e.unwrap()
                .file_name()
                .to_str()
                .unwrap()
                .strip_prefix("snapshot-")
                .map(|n| n.parse().unwrap())
        })
        .collect();
    ids.sort();
    ids
}

fn latest(dir: &Path) -> u64 {
    fs::read_to_string(dir.join("snapshot/LATEST"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

// ---------------------------------------------------------------- tests

#[test]
fn unfiltered_plan_equals_full_read_on_every_snapshot() {
    let mut checked = 0;
    for dir in tables() {
        let table = Table::open(&dir).unwrap();
        for id in snapshot_ids(&dir) {
            let plan = table.plan(Some(id), &ScanQuery::default()).unwrap();
            let live = ref_live(&dir, id);
            let want: BTreeSet<Key> = live.keys().cloned().collect();
            assert_eq!(plan_set(&plan), want, "{} snapshot {id}", dir.display());
            assert_eq!(plan.snapshot, Some(id));
            assert_eq!(plan.files.len(), want.len(), "no duplicates");
            checked += 1;
        }
        // Latest by default.
        let plan = table.plan(None, &ScanQuery::default()).unwrap();
        assert_eq!(plan.snapshot, Some(latest(&dir)));
    }
    assert!(checked >= 25, "{checked}");
}

#[test]
fn stats_match_the_files() {
    for dir in tables() {
        let table = Table::open(&dir).unwrap();
        let id = latest(&dir);
        let manifests = ref_manifests(&dir, id);
        let plan = table.plan(None, &ScanQuery::default()).unwrap();
        let s = plan.stats;
        assert_eq!(s.manifests, manifests.len() as u64);
        let bytes: u64 = manifests
            .iter()
            .map(|m| fs::metadata(dir.join("manifest").join(m)).unwrap().len())
            .sum();
        assert_eq!(s.manifest_bytes_total, bytes);
        // Block counts from the corpus oracles (written by the reference tooling).
        let blocks: u64 = manifests
            .iter()
            .map(|m| {
                let o = json(&dir.join("manifest").join(format!("{m}.oracle.json")));
                o["avro_blocks"].as_array().unwrap().len() as u64
            })
            .sum();
        assert_eq!(s.blocks_total, blocks, "{}", dir.display());
        let with_sidecar = manifests
            .iter()
            .filter(|m| {
                dir.join("manifest")
                    .join(format!("{m}.avro.sidecar"))
                    .exists()
            })
            .count() as u64;
        assert_eq!(s.manifests_with_sidecar, with_sidecar, "{}", dir.display());
        assert_eq!(s.manifests_sidecar_invalid, 0);
        // No filter: every block is read.
        assert_eq!(s.blocks_read, s.blocks_total);
        if with_sidecar == 0 {
            assert_eq!(s.manifest_bytes_read, s.manifest_bytes_total);
            assert_eq!(s.sidecar_bytes_read, 0);
        } else {
            assert!(s.sidecar_bytes_read > 0);
            assert!(s.manifest_bytes_read <= s.manifest_bytes_total);
        }
    }
}

fn random_query(
    rng: &mut Rng,
    live: &BTreeMap<Key, RefEntry>,
    all: &[RefEntry],
    keys: &[String],
    types: &[String],
) -> ScanQuery {
    let mut q = ScanQuery::default();
    let pick = |rng: &mut Rng| &all[rng.below(all.len() as u64) as usize];
    let _ = live;
    if rng.below(2) == 0 {
        let max_row = all
            .iter()
            .filter_map(|e| e.first.map(|f| f + e.count))
            .max()
            .unwrap_or(100)
            .max(1) as u64;
        let n = 1 + rng.below(3);
        q.rows = Some(
            (0..n)
                .map(|_| {
                    let a = rng.below(max_row + 5);
                    (a, a + rng.below(max_row / 3 + 2))
                })
                .collect(),
        );
    }
    if rng.below(2) == 0 {
        let n = 1 + rng.below(2);
        q.buckets = Some(
            (0..n)
                .map(|_| {
                    let e = pick(rng);
                    match rng.below(4) {
                        0 => (e.bucket + 1, None),
                        1 => (e.bucket, Some(e.total)),
                        2 => (e.bucket, Some(e.total + 1)),
                        _ => (e.bucket, None),
                    }
                })
                .collect(),
        );
    }
    if !keys.is_empty() && rng.below(3) != 0 {
        let e = pick(rng);
        let types_s: Vec<&str> = types.iter().map(String::as_str).collect();
        let values = partition_values(&e.partition, &types_s);
        for (i, k) in keys.iter().enumerate() {
            if keys.len() > 1 && rng.below(2) == 0 {
                continue;
            }
            let v = if rng.below(6) == 0 {
                match types[i].as_str() {
                    "INT" => "987654".to_string(),
                    _ => "no-such-value".to_string(),
                }
            } else {
                values[i].clone()
            };
            q.partition.push((k.clone(), v));
        }
    }
    q
}

#[test]
fn random_queries_equal_filtered_full_read() {
    let mut rng = Rng::xorshift(0x9e37_79b9_7f4a_7c15);
    let mut nonempty = 0;
    let mut pruned = 0;
    let mut total = 0;
    for c in snapshot_cases() {
        if c.all.is_empty() {
            continue;
        }
        let (table, id) = (&c.table, c.id);
        for _ in 0..40 {
            let q = random_query(&mut rng, &c.live, &c.all, &c.keys, &c.types);
            let q = rows_if_tracked(table, Some(id), q);
            let plan = table.plan(Some(id), &q).unwrap();
            let want = ref_set(&c.live, &q, &c.keys, &c.types);
            assert_eq!(
                plan_set(&plan),
                want,
                "{} snapshot {id} {q:?}",
                c.dir.display()
            );
            let s = plan.stats;
            assert!(s.blocks_read <= s.blocks_total);
            assert!(s.manifest_bytes_read <= s.manifest_bytes_total);
            assert!(s.manifests_with_sidecar <= s.manifests);
            total += 1;
            nonempty += usize::from(!want.is_empty());
            pruned += usize::from(s.blocks_read < s.blocks_total);
        }
    }
    // The queries exercise both outcomes and the sidecars actually prune.
    assert!(total >= 1000, "{total}");
    assert!(nonempty > total / 5, "{nonempty}/{total}");
    assert!(pruned > total / 10, "{pruned}/{total}");
}

#[test]
fn typed_partition_values_and_null() {
    let dir = Path::new(WAREHOUSE).join("sc.db/part_append_rs");
    let table = Table::open(&dir).unwrap();
    let (keys, types) = partition_schema(&dir);
    let live = ref_live(&dir, latest(&dir));
    // `hr=07` is the INT 7, typed through the schema.
    let q = |pairs: &[(&str, &str)]| ScanQuery {
        partition: pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..ScanQuery::default()
    };
    for e in live.values() {
        let types_s: Vec<&str> = types.iter().map(String::as_str).collect();
        let values = partition_values(&e.partition, &types_s);
        let query = q(&[("dt", &values[0]), ("hr", &values[1])]);
        let plan = table.plan(None, &query).unwrap();
        assert!(plan_set(&plan).contains(&(e.partition.clone(), e.bucket, e.name.clone())));
        assert_eq!(plan_set(&plan), ref_set(&live, &query, &keys, &types));
        if let Ok(hr) = values[1].parse::<i32>() {
            let padded = q(&[("hr", &format!("+{hr}"))]);
            assert_eq!(
                plan_set(&table.plan(None, &padded).unwrap()),
                ref_set(&live, &q(&[("hr", &values[1])]), &keys, &types)
            );
        }
    }
    // The table has null partition values (corpus README); they are selectable.
    let nulls = q(&[("hr", "__DEFAULT_PARTITION__")]);
    let want = ref_set(&live, &nulls, &keys, &types);
    assert_eq!(plan_set(&table.plan(None, &nulls).unwrap()), want);
    // Errors: unknown key, untypable value.
    assert!(table.plan(None, &q(&[("nope", "1")])).is_err());
    assert!(table.plan(None, &q(&[("hr", "seven")])).is_err());
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A fresh copy of the warehouse table `name` in the temporary directory (`tag` keeps
/// tests apart): (the original, the copy).
fn scratch_copy(name: &str, tag: &str) -> (PathBuf, PathBuf) {
    let src = Path::new(WAREHOUSE).join(name);
    let tmp = std::env::temp_dir().join(format!("lakecore-scan-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    copy_dir(&src, &tmp);
    (src, tmp)
}

#[test]
fn corrupted_sidecar_falls_back_to_full_read() {
    let mut rng = Rng::xorshift(42);
    for name in ["sc.db/part_append_rs", "sc.db/bucket4_rs", "sc.db/de_rs"] {
        let src = Path::new(WAREHOUSE).join(name);
        let tmp = std::env::temp_dir().join(format!(
            "lakecore-scan-{}-{}",
            std::process::id(),
            name.replace('/', "-")
        ));
        let _ = fs::remove_dir_all(&tmp);
        copy_dir(&src, &tmp);
        let original = Table::open(&src).unwrap();
        let table = Table::open(&tmp).unwrap();
        // Flip one byte in the middle of the first sidecar of the latest snapshot.
        let prepared = table.prepare(None, &ScanQuery::default()).unwrap();
        let sidecar = prepared
            .manifests()
            .iter()
            .find_map(|m| m.extra_files.iter().find(|f| f.ends_with(".avro.sidecar")))
            .unwrap()
            .clone();
        let path = tmp.join("manifest").join(&sidecar);
        let mut bytes = fs::read(&path).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x40;
        fs::write(&path, bytes).unwrap();

        let (keys, types) = partition_schema(&src);
        let live = ref_live(&src, latest(&src));
        let all: Vec<RefEntry> = live.values().cloned().collect();
        for i in 0..30 {
            let q = if i == 0 {
                ScanQuery::default()
            } else {
                rows_if_tracked(
                    &table,
                    None,
                    random_query(&mut rng, &live, &all, &keys, &types),
                )
            };
            // Every manifest opened, so the corrupted sidecar is met by every query.
            let all = ScanOptions {
                prune_manifests: false,
                ..ScanOptions::default()
            };
            let good = original.plan_with(None, &q, all).unwrap();
            let bad = table.plan_with(None, &q, all).unwrap();
            assert_eq!(plan_set(&table.plan(None, &q).unwrap()), plan_set(&bad));
            assert_eq!(plan_set(&bad), plan_set(&good), "{name} {q:?}");
            assert_eq!(plan_set(&bad), ref_set(&live, &q, &keys, &types));
            assert_eq!(bad.stats.manifests_sidecar_invalid, 1);
            assert_eq!(
                bad.stats.manifests_with_sidecar + 1,
                good.stats.manifests_with_sidecar
            );
            assert!(bad.stats.blocks_read >= good.stats.blocks_read);
            assert!(bad.stats.manifest_bytes_read >= good.stats.manifest_bytes_read);
        }
        let prepared = table.prepare(None, &ScanQuery::default()).unwrap();
        let reads: Vec<ManifestRead> = prepared
            .manifests()
            .iter()
            .map(|m| prepared.scan_manifest(m).unwrap().read)
            .collect();
        assert_eq!(
            reads
                .iter()
                .filter(|r| matches!(r, ManifestRead::SidecarInvalid(_)))
                .count(),
            1
        );
        fs::remove_dir_all(&tmp).unwrap();
    }
}

#[test]
fn invalid_table_dirs_are_errors() {
    assert!(Table::open(Path::new(WAREHOUSE).join("no-such-table")).is_err());
    assert!(Table::open(Path::new(WAREHOUSE)).is_err());
    // A corrupted manifest list is an error naming the file, never a panic.
    let (_, tmp) = scratch_copy("sc.db/codec_snappy_rs", "badlist");
    let table = Table::open(&tmp).unwrap();
    let snap = table.snapshot(latest(&tmp)).unwrap();
    let list = tmp.join("manifest").join(&snap.base_manifest_list);
    let bytes = fs::read(&list).unwrap();
    fs::write(&list, &bytes[..bytes.len() / 2]).unwrap();
    let err = table.plan(None, &ScanQuery::default()).unwrap_err();
    assert!(err.to_string().contains(&snap.base_manifest_list), "{err}");
    fs::remove_dir_all(&tmp).unwrap();
}

/// A snapshot's delta list corrupted, or one of its manifests gone: an error naming that
/// file, for a full plan and for a selective one that opens every manifest.
#[test]
fn missing_manifest_and_corrupt_delta_list_name_the_file() {
    let (src, tmp) = scratch_copy("sc.db/part_append_rs", "missing");
    let table = Table::open(&tmp).unwrap();
    let snap = table.snapshot(latest(&tmp)).unwrap();
    let prepared = table.prepare(None, &ScanQuery::default()).unwrap();
    let victim = prepared.manifests()[0].file_name.clone();
    let (keys, types) = partition_schema(&src);
    let live = ref_live(&src, latest(&src));
    let all: Vec<RefEntry> = live.values().cloned().collect();
    let mut rng = Rng::xorshift(7);
    let selective = random_query(&mut rng, &live, &all, &keys, &types);
    let every = ScanOptions {
        prune_manifests: false,
        ..ScanOptions::default()
    };
    fs::remove_file(tmp.join("manifest").join(&victim)).unwrap();
    for q in [ScanQuery::default(), selective] {
        let err = table.plan_with(None, &q, every).unwrap_err();
        assert!(err.to_string().contains(&victim), "{q:?}: {err}");
    }
    let delta = tmp.join("manifest").join(&snap.delta_manifest_list);
    let bytes = fs::read(&delta).unwrap();
    fs::write(&delta, &bytes[..bytes.len() - 7]).unwrap();
    let err = table.plan(None, &ScanQuery::default()).unwrap_err();
    assert!(err.to_string().contains(&snap.delta_manifest_list), "{err}");
    fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn mutated_metadata_never_panics() {
    let (src, tmp) = scratch_copy("sc.db/bucket4_rs", "mut");
    let table = Table::open(&tmp).unwrap();
    let snap = table.snapshot(latest(&tmp)).unwrap();
    let prepared = table.prepare(None, &ScanQuery::default()).unwrap();
    let manifest = &prepared.manifests()[0];
    let sidecar = manifest.extra_files[0].clone();
    let victims = [
        tmp.join("manifest").join(&snap.base_manifest_list),
        tmp.join("manifest").join(&manifest.file_name),
        tmp.join("manifest").join(&sidecar),
        tmp.join("snapshot").join(format!("snapshot-{}", snap.id)),
        tmp.join("schema/schema-0"),
    ];
    let query = ScanQuery {
        buckets: Some(vec![(1, None)]),
        partition: vec![("p".into(), "1".into())],
        ..ScanQuery::default()
    };
    let reference = ref_set(
        &ref_live(&src, snap.id),
        &query,
        &partition_schema(&src).0,
        &partition_schema(&src).1,
    );
    let mut rng = Rng::xorshift(7);
    let (mut ok, mut err) = (0, 0);
    for victim in &victims {
        let original = fs::read(victim).unwrap();
        for i in 0..60 {
            let mut bytes = original.clone();
            if i % 10 == 9 {
                bytes.truncate(rng.below(bytes.len() as u64) as usize);
            } else {
                let at = rng.below(bytes.len() as u64) as usize;
                bytes[at] ^= 1 << rng.below(8);
            }
            fs::write(victim, &bytes).unwrap();
            match Table::open(&tmp).and_then(|t| t.plan(None, &query)) {
                Ok(plan) => {
                    ok += 1;
                    // A flipped sidecar byte is always caught by its checksum.
                    if victim.ends_with(&sidecar) {
                        assert_eq!(plan_set(&plan), reference);
                        assert_eq!(plan.stats.manifests_sidecar_invalid, 1);
                    }
                }
                Err(e) => {
                    err += 1;
                    assert!(!e.to_string().is_empty());
                }
            }
        }
        fs::write(victim, &original).unwrap();
    }
    assert!(ok > 0 && err > 0, "{ok} {err}");
    fs::remove_dir_all(&tmp).unwrap();
}

/// `q` as the table answers it: row-ID ranges on a table without row tracking are refused
/// with a query error (as pypaimon refuses them), so the rest of `q` is planned without them.
fn rows_if_tracked(table: &Table, snapshot: Option<u64>, mut q: ScanQuery) -> ScanQuery {
    let tracked = table
        .schema(
            table
                .snapshot(snapshot.unwrap_or_else(|| table.latest_snapshot_id().unwrap().unwrap()))
                .unwrap()
                .schema_id,
        )
        .unwrap()
        .row_tracking;
    if q.rows.is_some() && !tracked {
        match table.plan(snapshot, &q) {
            Err(lakecore::paimon::ScanError::Query(m)) => {
                assert!(m.contains("row tracking"), "{m}")
            }
            other => panic!("rows on an untracked table: {other:?}"),
        }
        q.rows = None;
    }
    q
}

/// Tags plan the snapshot they copy, also after that snapshot expired; `AsOf` picks the last
/// snapshot committed at or before the time (checked against every snapshot's own time).
#[test]
fn tags_and_time_travel_plan_the_right_snapshot() {
    use lakecore::paimon::SnapshotSpec;
    let src = Path::new(WAREHOUSE).join("sc.db/part_append_rs");
    let tmp = std::env::temp_dir().join(format!("lakecore-tag-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    copy_dir(&src, &tmp);
    let table = Table::open(&tmp).unwrap();
    let ids = snapshot_ids(&tmp);
    assert!(ids.len() >= 3);
    let q = ScanQuery::default();
    let plans: Vec<_> = ids
        .iter()
        .map(|&id| plan_set(&table.plan(Some(id), &q).unwrap()))
        .collect();
    // Every snapshot by its own commit time, and a millisecond before it.
    for (i, &id) in ids.iter().enumerate() {
        let t = table.snapshot(id).unwrap().time_millis.unwrap();
        let at = table.resolve(&SnapshotSpec::AsOf(t)).unwrap().unwrap();
        assert_eq!(at.id, id);
        let before = table.resolve(&SnapshotSpec::AsOf(t - 1)).unwrap();
        assert_eq!(before.map(|s| s.id), i.checked_sub(1).map(|j| ids[j]));
        let p = table
            .prepare_snapshot(&SnapshotSpec::AsOf(t), &q, ScanOptions::default())
            .unwrap();
        assert_eq!(plan_set(&p.finish(scan_all(&p))), plans[i]);
    }
    // A tag of snapshot 2, then snapshot 2 expires: the tag still plans it.
    fs::create_dir_all(tmp.join("tag")).unwrap();
    let snap2 = tmp.join("snapshot").join(format!("snapshot-{}", ids[1]));
    fs::copy(&snap2, tmp.join("tag").join("tag-v2")).unwrap();
    fs::remove_file(&snap2).unwrap();
    let p = table
        .prepare_snapshot(&SnapshotSpec::Tag("v2".into()), &q, ScanOptions::default())
        .unwrap();
    assert_eq!(p.snapshot().map(|s| s.id), Some(ids[1]));
    assert_eq!(plan_set(&p.finish(scan_all(&p))), plans[1]);
    match table.prepare_snapshot(
        &SnapshotSpec::Tag("nope".into()),
        &q,
        ScanOptions::default(),
    ) {
        Err(lakecore::paimon::ScanError::Query(m)) => {
            assert!(m.contains("no tag \"nope\"") && m.contains("v2"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    assert!(table
        .prepare_snapshot(&SnapshotSpec::AsOf(0), &q, ScanOptions::default())
        .is_err());
    fs::remove_dir_all(&tmp).unwrap();
}

fn scan_all(p: &lakecore::paimon::PreparedScan) -> Vec<lakecore::paimon::ManifestScan> {
    p.manifests()
        .iter()
        .map(|m| p.scan_manifest(m).unwrap())
        .collect()
}

/// On a real partitioned table, a partition query prunes manifests by the manifest list's
/// statistics without changing the plan, and never prunes for an unfiltered query.
#[test]
fn manifest_statistics_prune_without_changing_plans() {
    for name in [
        "sc.db/part_append_rs",
        "sc.db/codec_snappy_rs",
        "sc.db/bucket4_rs",
    ] {
        let dir = Path::new(WAREHOUSE).join(name);
        let table = Table::open(&dir).unwrap();
        let all = ScanOptions {
            prune_manifests: false,
            ..ScanOptions::default()
        };
        assert_eq!(
            table
                .plan(None, &ScanQuery::default())
                .unwrap()
                .stats
                .manifests_pruned,
            0
        );
        let (keys, types) = partition_schema(&dir);
        let live = ref_live(&dir, latest(&dir));
        let mut pruned_total = 0;
        for e in live.values() {
            let mut q = ScanQuery::default();
            if !keys.is_empty() {
                let types: Vec<&str> = types.iter().map(String::as_str).collect();
                q.partition = keys
                    .iter()
                    .cloned()
                    .zip(partition_values(&e.partition, &types))
                    .collect();
            } else {
                q.buckets = Some(vec![(e.bucket, None)]);
            }
            let pruned = table.plan(None, &q).unwrap();
            let full = table.plan_with(None, &q, all).unwrap();
            assert_eq!(pruned.files, full.files, "{name} {q:?}");
            assert_eq!(full.stats.manifests_pruned, 0);
            pruned_total += pruned.stats.manifests_pruned;
        }
        assert!(pruned_total > 0, "{name}: nothing pruned");
    }
}

/// A [`ManifestScanner`](lakecore::paimon::ManifestScanner) compiles the manifest schema
/// once for every manifest it scans. Scanning from two threads, it must give each manifest's
/// result exactly as `scan_manifest` (a compile per call) does, on every table and snapshot
/// with a spread of queries. A manifest written with another schema (pypaimon's plain
/// record after paimon-rust's `["null", record]`) must be compiled on its own, not decoded
/// with the first one's.
#[test]
fn manifest_scanner_equals_scan_manifest() {
    let mut rng = Rng::xorshift(0x5eed_0f5c_a22e_2026);
    let mut compared = 0usize;
    for c in snapshot_cases() {
        let (table, id) = (&c.table, c.id);
        let mut queries = vec![ScanQuery::default()];
        if !c.all.is_empty() {
            queries
                .extend((0..3).map(|_| random_query(&mut rng, &c.live, &c.all, &c.keys, &c.types)));
        }
        for q in queries {
            let q = rows_if_tracked(table, Some(id), q);
            let p = table.prepare(Some(id), &q).unwrap();
            let want: Vec<_> = p
                .manifests()
                .iter()
                .map(|m| p.scan_manifest(m).unwrap())
                .collect();
            let (front, back) = p.manifests().split_at(p.manifests().len() / 2);
            let got = p.with_scanner(|scanner| {
                std::thread::scope(|s| {
                    let back = s.spawn(|| {
                        back.iter()
                            .map(|m| scanner.scan(m).unwrap())
                            .collect::<Vec<_>>()
                    });
                    let mut got: Vec<_> = front.iter().map(|m| scanner.scan(m).unwrap()).collect();
                    got.extend(back.join().unwrap());
                    got
                })
            });
            assert_eq!(got, want, "{} snapshot {id} {q:?}", c.dir.display());
            compared += want.len();
        }
    }
    assert!(compared >= 100, "{compared} manifest scans compared");

    // Two writers' schemas in one table: a pypaimon manifest next to paimon-rust's.
    let tmp = std::env::temp_dir().join(format!("lakecore-scanner-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    copy_dir(&Path::new(WAREHOUSE).join("sc.db/bucket4_rs"), &tmp);
    let foreign_dir = Path::new(WAREHOUSE).join("codecs.db/null/manifest");
    let foreign = fs::read_dir(&foreign_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("manifest-") && !n.starts_with("manifest-list"))
        .filter(|n| !n.contains('.'))
        .min()
        .unwrap();
    let bytes = fs::read(foreign_dir.join(&foreign)).unwrap();
    fs::write(tmp.join("manifest").join(&foreign), &bytes).unwrap();
    let p = Table::open(&tmp)
        .unwrap()
        .prepare(None, &ScanQuery::default())
        .unwrap();
    let native = p.manifests()[0].clone();
    let mut other = native.clone();
    other.file_name = foreign;
    other.file_size = bytes.len() as i64;
    other.extra_files.clear();
    let alone = p.scan_manifest(&other).unwrap();
    assert!(!alone.entries.is_empty());
    assert_eq!(alone.read, ManifestRead::NoSidecar);
    p.with_scanner(|scanner| {
        for meta in [&native, &other, &native, &other] {
            assert_eq!(scanner.scan(meta).unwrap(), p.scan_manifest(meta).unwrap());
        }
    });
    fs::remove_dir_all(&tmp).unwrap();
}
