//! Planning and BLOB reads through object stores (`file://` and a `memory://` store filled
//! with the test tables) against the local planner on the same tables: equal plans, equal
//! rows, the requests the plan implies, and corrupted or truncated objects that give an error
//! or a fallback, never a different plan. The S3 server tests (moto, a counting and
//! fault-injecting proxy) are in `.ci/remote.sh`.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use lakecore::io::{ObjectStorage, RangeTuning, Storage, Stored};
use lakecore::paimon::blob::{BlobColumnRead, ReadOptions};
use lakecore::paimon::{ScanError, ScanPlan, ScanQuery, Table};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const WAREHOUSE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse");
const BLOBS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/paimon/blob_warehouse/blobtab.db"
);

fn tables() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for db in ["sc.db", "blob.db", "codecs.db"] {
        for t in std::fs::read_dir(Path::new(WAREHOUSE).join(db)).unwrap() {
            let p = t.unwrap().path();
            if p.join("snapshot").is_dir() {
                out.push(p);
            }
        }
    }
    for t in ["layers", "rolled", "parted"] {
        out.push(Path::new(BLOBS).join(t));
    }
    out.sort();
    assert!(out.len() >= 14, "{out:?}");
    out
}

fn queries() -> Vec<ScanQuery> {
    vec![
        ScanQuery::default(),
        ScanQuery {
            buckets: Some(vec![(1, None)]),
            ..ScanQuery::default()
        },
        ScanQuery {
            rows: Some(vec![(0, 5), (100, 120)]),
            ..ScanQuery::default()
        },
        ScanQuery {
            buckets: Some(vec![(0, None), (3, None)]),
            rows: Some(vec![(10, 10)]),
            ..ScanQuery::default()
        },
    ]
}

/// A plan or the error's text with the table's location as `<table>` (both sides must agree
/// on errors too).
fn outcome(r: Result<ScanPlan, ScanError>, table: &Table) -> Result<ScanPlan, String> {
    r.map_err(|e| match e {
        ScanError::Query(m) => m.replace(&*table.dir().to_string_lossy(), "<table>"),
        other => panic!("unexpected error {other}"),
    })
}

/// Every file of `dir` put into a fresh `memory://` store under `root`.
fn memory_copy(dir: &Path, root: &str) -> (Arc<ObjectStorage>, PathBuf) {
    let (store, base) = ObjectStorage::open(root, &[]).unwrap();
    fn walk(store: &ObjectStorage, dir: &Path, to: &Path) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let target = to.join(p.file_name().unwrap());
            if p.is_dir() {
                walk(store, &p, &target);
            } else {
                store.put(&target, std::fs::read(&p).unwrap()).unwrap();
            }
        }
    }
    walk(&store, dir, &base);
    (Arc::new(store), base)
}

fn same_plans(local: &Table, remote: &Table, what: &str) {
    for q in queries() {
        let want = outcome(local.plan(None, &q), local);
        let got = outcome(remote.plan(None, &q), remote);
        assert_eq!(got, want, "{what}: {q:?}");
    }
}

#[test]
fn file_urls_plan_as_local() {
    for dir in tables() {
        let local = Table::open(&dir).unwrap();
        let remote = Table::open_url(&format!("file://{}", dir.display()), &[]).unwrap();
        assert!(remote.storage().is_remote());
        same_plans(&local, &remote, &dir.display().to_string());
    }
}

#[test]
fn memory_store_plans_as_local_with_any_tuning() {
    let tunings = [
        RangeTuning::default(),
        // Every span its own GET, never whole.
        RangeTuning {
            coalesce_gap: 0,
            max_fan_out: 1,
            whole_above_per_mille: 1001,
            manifests_in_flight: 1,
        },
        // Always whole.
        RangeTuning {
            coalesce_gap: u64::MAX,
            max_fan_out: 64,
            whole_above_per_mille: 0,
            manifests_in_flight: 64,
        },
    ];
    for dir in tables() {
        let local = Table::open(&dir).unwrap();
        for (i, tuning) in tunings.iter().enumerate() {
            let (store, root) = memory_copy(&dir, "memory:///wh/db.db/t");
            let store = Arc::try_unwrap(store).unwrap().with_tuning(*tuning);
            let remote = Table::open_in(Arc::new(store), &root).unwrap();
            same_plans(&local, &remote, &format!("{} tuning {i}", dir.display()));
        }
    }
}

/// A storage that records what is read.
#[derive(Debug)]
struct Counting {
    inner: Arc<ObjectStorage>,
    whole: Mutex<Vec<PathBuf>>,
    ranges: Mutex<Vec<(PathBuf, u64, u64)>>,
}

impl Storage for Counting {
    fn read(&self, path: &Path) -> io::Result<Stored> {
        self.whole.lock().unwrap().push(path.to_path_buf());
        self.inner.read(path)
    }
    fn read_ranges(&self, path: &Path, ranges: &[(u64, u64)]) -> io::Result<Vec<Stored>> {
        for &(o, l) in ranges {
            self.ranges.lock().unwrap().push((path.to_path_buf(), o, l));
        }
        self.inner.read_ranges(path, ranges)
    }
    fn size(&self, path: &Path) -> io::Result<u64> {
        self.inner.size(path)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn is_remote(&self) -> bool {
        true
    }
    fn tuning(&self) -> RangeTuning {
        RangeTuning {
            coalesce_gap: 0,
            whole_above_per_mille: 1001,
            ..RangeTuning::default()
        }
    }
}

#[test]
fn reads_are_what_the_plan_says() {
    let dir = Path::new(WAREHOUSE).join("sc.db/de_rs");
    let (store, root) = memory_copy(&dir, "memory:///wh/sc.db/de_rs");
    let counting = Arc::new(Counting {
        inner: store,
        whole: Mutex::default(),
        ranges: Mutex::default(),
    });
    let table = Table::open_in(counting.clone(), &root).unwrap();
    let q = ScanQuery {
        rows: Some(vec![(0, 3)]),
        ..ScanQuery::default()
    };
    counting.whole.lock().unwrap().clear();
    let plan = table.plan(None, &q).unwrap();
    assert_eq!(
        plan.files,
        Table::open(&dir).unwrap().plan(None, &q).unwrap().files
    );
    let whole = counting.whole.lock().unwrap().clone();
    let ranges = counting.ranges.lock().unwrap().clone();
    let manifest_dir = root.join("manifest");
    // Every sidecar exactly once, whole; no manifest whole (all have sidecars).
    let sidecars: Vec<&PathBuf> = whole
        .iter()
        .filter(|p| p.to_str().unwrap().ends_with(".avro.sidecar"))
        .collect();
    assert_eq!(sidecars.len() as u64, plan.stats.manifests_with_sidecar);
    let mut unique = sidecars.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), sidecars.len(), "a sidecar read twice");
    assert!(whole
        .iter()
        .all(|p| p.to_str().unwrap().ends_with(".avro.sidecar")
            || !p.starts_with(&manifest_dir)
            || p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("manifest-list")));
    // Ranged bytes: the selected blocks exactly (the plan's bytes minus one header per
    // manifest with a selected block; the header comes with the sidecar).
    let ranged: u64 = ranges.iter().map(|r| r.2).sum();
    assert!(
        ranged > 0 && ranged < plan.stats.manifest_bytes_read,
        "{ranged} {:?}",
        plan.stats
    );
    assert!(plan.stats.blocks_read < plan.stats.blocks_total);
    let headers = plan.stats.manifest_bytes_read - ranged;
    let touched = {
        let mut m: Vec<&PathBuf> = ranges.iter().map(|r| &r.0).collect();
        m.dedup();
        m.len() as u64
    };
    assert_eq!(headers % touched, 0, "one header per manifest read");
}

/// Overwrites object `name` under `root` in `store` with `f` applied to its bytes.
fn corrupt(store: &ObjectStorage, path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = store.read(path).unwrap().to_vec();
    f(&mut bytes);
    store.put(path, bytes).unwrap();
}

/// A way to damage an object's bytes.
type Damage = Box<dyn Fn(&mut Vec<u8>)>;

fn manifests_with_sidecars(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir.join("manifest"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| {
            dir.join("manifest")
                .join(format!("{n}.avro.sidecar"))
                .exists()
        })
        .collect();
    out.sort();
    out
}

#[test]
fn damaged_objects_never_give_another_plan() {
    let dir = Path::new(WAREHOUSE).join("sc.db/bucket4_rs");
    let local = Table::open(&dir).unwrap();
    let q = ScanQuery {
        buckets: Some(vec![(2, Some(4))]),
        ..ScanQuery::default()
    };
    let want = local.plan(None, &q).unwrap();
    let names = manifests_with_sidecars(&dir);
    assert!(!names.is_empty());
    for name in &names {
        let path_of = |root: &Path| root.join("manifest").join(name);
        // A flipped byte in the last sync marker, a truncated manifest, a flipped sidecar byte.
        let damages: [(&str, Damage); 3] = [
            (
                "last byte",
                Box::new(|b: &mut Vec<u8>| *b.last_mut().unwrap() ^= 1),
            ),
            (
                "truncated",
                Box::new(|b: &mut Vec<u8>| b.truncate(b.len() - 20)),
            ),
            (
                "middle byte",
                Box::new(|b: &mut Vec<u8>| {
                    let mid = b.len() / 2;
                    b[mid] ^= 0x55;
                }),
            ),
        ];
        for (what, damage) in &damages {
            let (store, root) = memory_copy(&dir, "memory:///wh/t");
            corrupt(&store, &path_of(&root), damage);
            let remote = Table::open_in(store, &root).unwrap();
            if let Ok(plan) = remote.plan(None, &q) {
                assert_eq!(plan.files, want.files, "{name} {what}");
            }
            let (store, root) = memory_copy(&dir, "memory:///wh/t");
            let sidecar = root.join("manifest").join(format!("{name}.avro.sidecar"));
            corrupt(&store, &sidecar, damage);
            let remote = Table::open_in(store, &root).unwrap();
            // An invalid sidecar falls back to the whole manifest: the same plan.
            assert_eq!(
                remote.plan(None, &q).unwrap().files,
                want.files,
                "sidecar {what}"
            );
        }
    }
}

#[test]
fn missing_tables_and_objects_are_io_errors_naming_the_url() {
    let err = Table::open_url("memory:///no/such/table", &[]).unwrap_err();
    match &err {
        ScanError::Io { path, error } => {
            assert_eq!(error.kind(), io::ErrorKind::NotFound);
            assert_eq!(path, Path::new("memory:///no/such/table"));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string().starts_with("memory:///no/such/table"),
        "{err}"
    );
    // The store's reason comes along: here an empty prefix, and what to check.
    let text = err.to_string();
    assert!(
        text.contains("no Paimon table here") && text.contains("no objects under this prefix"),
        "{err}"
    );
    let err = Table::open_url("ftp://host/x", &[]).unwrap_err();
    assert!(err.to_string().contains("unsupported scheme"), "{err}");
    // A manifest list gone: an I/O error naming its URL.
    let dir = Path::new(WAREHOUSE).join("sc.db/bucket4_rs");
    let (store, root) = memory_copy(&dir, "memory:///wh/t");
    let table = Table::open_in(store.clone(), &root).unwrap();
    let snap = table
        .snapshot(table.latest_snapshot_id().unwrap().unwrap())
        .unwrap();
    let list = root.join("manifest").join(&snap.base_manifest_list);
    let (store2, root2) = memory_copy(&dir, "memory:///wh/t");
    let _ = (store, list);
    // Rebuild without the list: copy everything else.
    let (fresh, _) = ObjectStorage::open("memory:///wh/t", &[]).unwrap();
    for sub in ["snapshot", "schema", "manifest"] {
        for n in store2.list(&root2.join(sub)).unwrap() {
            if n == snap.base_manifest_list {
                continue;
            }
            let p = root2.join(sub).join(&n);
            fresh.put(&p, store2.read(&p).unwrap().to_vec()).unwrap();
        }
    }
    let table = Table::open_in(Arc::new(fresh), &root2).unwrap();
    match table.plan(None, &ScanQuery::default()).unwrap_err() {
        ScanError::Io { path, error } => {
            assert_eq!(error.kind(), io::ErrorKind::NotFound);
            assert!(path
                .to_str()
                .unwrap()
                .starts_with("memory:///wh/t/manifest/"));
        }
        other => panic!("{other:?}"),
    }
}

fn blob_rows(read: &BlobColumnRead) -> Vec<(u64, i64, Option<Vec<u8>>)> {
    let mut rows = Vec::new();
    read.for_each_row(ReadOptions::default(), |r| -> Result<(), ()> {
        rows.push((r.row_id, r.sequence_number, r.value.map(<[u8]>::to_vec)));
        Ok(())
    })
    .unwrap()
    .unwrap();
    rows
}

#[test]
fn blob_columns_read_from_a_store_as_local() {
    for t in ["layers", "rolled", "parted"] {
        let dir = Path::new(BLOBS).join(t);
        let local = Table::open(&dir).unwrap();
        let (store, root) = memory_copy(&dir, "memory:///wh/blobtab.db/t");
        let remote = Table::open_in(store, &root).unwrap();
        for q in [
            ScanQuery::default(),
            ScanQuery {
                rows: Some(vec![(3, 40), (250, 260)]),
                ..ScanQuery::default()
            },
        ] {
            let want = blob_rows(&BlobColumnRead::plan(&local, None, &q, None).unwrap());
            let got = blob_rows(&BlobColumnRead::plan(&remote, None, &q, None).unwrap());
            assert!(!want.is_empty());
            assert_eq!(got, want, "{t} {q:?}");
        }
    }
}

/// Record offsets of a `.blob` file by a naive decoder of its index (ZigZag LEB128 deltas of
/// the rows' lengths; `-1`/`-2` have no record): the model's oracle, independent of
/// `lakecore::blob`. Returns (row -> payload offset or None, index start).
fn naive_payload_offsets(bytes: &[u8]) -> (Vec<Option<u64>>, u64) {
    let n = bytes.len();
    let index_len = i32::from_le_bytes(bytes[n - 5..n - 1].try_into().unwrap()) as usize;
    let index = &bytes[n - 5 - index_len..n - 5];
    let (mut out, mut prev, mut at, mut pos) = (Vec::new(), 0i64, 0u64, 0usize);
    while pos < index.len() {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let b = index[pos];
            pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        let delta = (v >> 1) as i64 ^ -((v & 1) as i64);
        prev += delta;
        if prev >= 16 {
            out.push(Some(at + 4));
            at += prev as u64;
        } else {
            out.push(None);
        }
    }
    (out, (n - 5 - index_len) as u64)
}

/// The bytes a remote BLOB read fetches, against a naive model: per `.blob` file its tail
/// (the last 64 KiB, or the whole index when longer), plus exactly the payload bytes of the
/// rows the read returns that lie before that tail (the Counting tuning merges nothing and
/// never reads whole); no whole GET.
#[test]
fn blob_reads_fetch_the_index_and_the_selected_payloads_only() {
    for t in ["layers", "rolled", "parted"] {
        let dir = Path::new(BLOBS).join(t);
        let local = Table::open(&dir).unwrap();
        let (store, root) = memory_copy(&dir, "memory:///wh/blobtab.db/t");
        let counting = Arc::new(Counting {
            inner: store,
            whole: Mutex::default(),
            ranges: Mutex::default(),
        });
        let remote = Table::open_in(counting.clone(), &root).unwrap();
        let q = ScanQuery {
            rows: Some(vec![(3, 40), (250, 260)]),
            ..ScanQuery::default()
        };
        let read = BlobColumnRead::plan(&remote, None, &q, None).unwrap();
        counting.whole.lock().unwrap().clear();
        counting.ranges.lock().unwrap().clear();
        let got = blob_rows(&read);
        let local_read = BlobColumnRead::plan(&local, None, &q, None).unwrap();
        assert_eq!(got, blob_rows(&local_read), "{t}");
        assert!(
            counting.whole.lock().unwrap().is_empty(),
            "{t}: a whole GET"
        );
        // The model: per file (by name) its bytes, first row ID and tail start.
        let mut files = std::collections::HashMap::new();
        let mut tails = 0u64;
        for b in local_read.bunches() {
            for (path, meta) in &b.files {
                let bytes = std::fs::read(path).unwrap();
                let (offsets, index_start) = naive_payload_offsets(&bytes);
                let size = bytes.len() as u64;
                let from = size.saturating_sub(64 << 10).min(index_start);
                tails += size - from;
                files.insert(
                    meta.file_name.clone(),
                    (offsets, meta.first_row_id.unwrap() as u64, from),
                );
            }
        }
        let mut payloads = 0u64;
        let mut values = 0;
        local_read
            .for_each_row(ReadOptions::default(), |r| -> Result<(), ()> {
                if let (Some(v), Some(name)) = (r.value, r.file) {
                    let (offsets, first, from) = &files[name];
                    let offset = offsets[(r.row_id - first) as usize].unwrap();
                    values += 1;
                    if offset < *from && !v.is_empty() {
                        payloads += v.len() as u64;
                    }
                }
                Ok(())
            })
            .unwrap()
            .unwrap();
        let ranges = counting.ranges.lock().unwrap().clone();
        let fetched: u64 = ranges.iter().map(|r| r.2).sum();
        assert!(values > 0, "{t}");
        assert_eq!(fetched, tails + payloads, "{t}: {ranges:?}");
        let total: u64 = files.len() as u64;
        println!(
            "{t}: fetched {fetched} bytes from {total} files ({tails} tails, {payloads} payloads)"
        );
    }
}

/// A modular-footer file read from an object store through `ObjectFileReader` and
/// `ModularAsyncReader` (tail, then the projected chunks) equals the local blocking read of
/// the same bytes, for projections and row-group selections; a truncated object is an I/O
/// error naming the URL.
#[cfg(feature = "arrow")]
#[test]
fn footer_columns_read_from_a_store_as_local() {
    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use futures::TryStreamExt as _;
    use lakecore::footer::arrow::{reader_builder, ModularAsyncReader, Projection};
    use parquet::arrow::ParquetRecordBatchStreamBuilder;
    let n = 3000i64;
    let mut cols: Vec<(String, ArrayRef)> = Vec::new();
    for c in 0..12 {
        let a: ArrayRef = if c % 3 == 0 {
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|i| format!("v{}", i * (c + 7) % 911)),
            ))
        } else {
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i * c - 5)))
        };
        cols.push((format!("c{c}"), a));
    }
    let batch = RecordBatch::try_from_iter(cols).unwrap();
    let mut standard = Vec::new();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(700))
        .build();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(&mut standard, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let modular = lakecore::footer::convert(&standard).unwrap();
    let (store, root) = ObjectStorage::open("memory:///files", &[]).unwrap();
    let path = root.join("wide.parquet");
    store.put(&path, modular.clone()).unwrap();
    let projections = [
        Projection::columns(["c1", "c6", "c11"]),
        Projection::columns(["c0"]).with_row_groups([1, 3]),
        Projection::all(),
    ];
    for p in &projections {
        let (builder, _) = reader_builder(bytes::Bytes::from(modular.clone()), p).unwrap();
        let want: Vec<RecordBatch> = builder.build().unwrap().map(|b| b.unwrap()).collect();
        let reader = store.file_reader(&path).unwrap();
        let len = reader.len();
        let got: Vec<RecordBatch> = store
            .block_on(async {
                let r = ModularAsyncReader::open(reader, len, p).await?;
                let mask = r.projected().mask.clone();
                ParquetRecordBatchStreamBuilder::new(r)
                    .await?
                    .with_projection(mask)
                    .build()?
                    .try_collect()
                    .await
            })
            .unwrap();
        assert!(!want.is_empty());
        // Batch boundaries differ (the stream ends a batch at each row group): the rows
        // must not.
        let schema = want[0].schema();
        let want = arrow_select::concat::concat_batches(&schema, &want).unwrap();
        let got = arrow_select::concat::concat_batches(&schema, &got).unwrap();
        assert!(want.num_rows() > 0);
        assert_eq!(got, want, "{p:?}");
    }
    // Truncated after the size was learnt: the object ends before the ranges asked for, an
    // I/O error (not short bytes) naming the URL.
    let reader = store.file_reader(&path).unwrap();
    let len = reader.len();
    store
        .put(&path, modular[..modular.len() / 2].to_vec())
        .unwrap();
    let err = store
        .block_on(ModularAsyncReader::open(reader, len, &Projection::all()))
        .unwrap_err();
    match &err {
        parquet::errors::ParquetError::External(e) => {
            let io = e.downcast_ref::<io::Error>().expect("an io::Error");
            assert!(
                io.to_string().contains("memory:///files/wide.parquet"),
                "{io}"
            );
        }
        other => panic!("{other:?}"),
    }
}
