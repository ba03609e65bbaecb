//! The `lakecore scan` CLI, run as a process (feature `cli`), against the library planner.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use lakecore::paimon::{ScanPlan, ScanQuery, Table};
use lakecore_testkit::hex::hex;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const WAREHOUSE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse");

fn lakecore(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lakecore"))
        .args(args)
        .output()
        .unwrap()
}

fn table(name: &str) -> PathBuf {
    Path::new(WAREHOUSE).join(name)
}

/// The documented document, built from the library's plan.
fn expected(plan: &ScanPlan) -> String {
    let files: Vec<String> = plan
        .files
        .iter()
        .map(|f| {
            format!(
                "{{\"partition_hex\":\"{}\",\"bucket\":{},\"file_name\":\"{}\"}}",
                hex(&f.partition),
                f.bucket,
                f.file_name
            )
        })
        .collect();
    let s = plan.stats;
    format!(
        "{{\"files\":[{}],\"manifests\":{},\"manifests_with_sidecar\":{},\"blocks_total\":{},\"blocks_read\":{},\"manifest_bytes_total\":{},\"manifest_bytes_read\":{}}}\n",
        files.join(","),
        s.manifests,
        s.manifests_with_sidecar,
        s.blocks_total,
        s.blocks_read,
        s.manifest_bytes_total,
        s.manifest_bytes_read
    )
}

struct Case {
    table: &'static str,
    args: &'static [&'static str],
    query: ScanQuery,
}

fn cases() -> Vec<Case> {
    let part = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Vec<_>>()
    };
    vec![
        Case {
            table: "sc.db/part_append_rs",
            args: &[],
            query: ScanQuery::default(),
        },
        Case {
            table: "sc.db/part_append_rs",
            args: &["--partition", "dt=2024-01-02,hr=3"],
            query: ScanQuery {
                partition: part(&[("dt", "2024-01-02"), ("hr", "3")]),
                ..ScanQuery::default()
            },
        },
        Case {
            table: "sc.db/part_append_rs",
            args: &["--partition", "hr=__DEFAULT_PARTITION__", "--snapshot", "2"],
            query: ScanQuery {
                partition: part(&[("hr", "__DEFAULT_PARTITION__")]),
                ..ScanQuery::default()
            },
        },
        Case {
            table: "sc.db/bucket4_rs",
            args: &["--bucket", "1/4,3"],
            query: ScanQuery {
                buckets: Some(vec![(1, Some(4)), (3, None)]),
                ..ScanQuery::default()
            },
        },
        Case {
            table: "sc.db/de_rs",
            args: &["--rows", "0-3,40-45"],
            query: ScanQuery {
                rows: Some(vec![(0, 3), (40, 45)]),
                ..ScanQuery::default()
            },
        },
        Case {
            table: "sc.db/codec_snappy_rs",
            args: &["--partition", "p=1", "--bucket", "0"],
            query: ScanQuery {
                buckets: Some(vec![(0, None)]),
                partition: part(&[("p", "1")]),
                ..ScanQuery::default()
            },
        },
        Case {
            table: "blob.db/py_blob",
            args: &["--rows", "2-3"],
            query: ScanQuery {
                rows: Some(vec![(2, 3)]),
                ..ScanQuery::default()
            },
        },
    ]
}

#[test]
fn json_equals_the_library_plan() {
    let mut nonempty = 0;
    for case in cases() {
        let dir = table(case.table);
        let mut args = vec!["scan", dir.to_str().unwrap(), "--json"];
        args.extend_from_slice(case.args);
        let out = lakecore(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stderr.is_empty(), "no progress bar in --json mode");
        let text = String::from_utf8(out.stdout).unwrap();
        let snapshot = case
            .args
            .iter()
            .position(|a| *a == "--snapshot")
            .map(|i| case.args[i + 1].parse().unwrap());
        let plan = Table::open(&dir)
            .unwrap()
            .plan(snapshot, &case.query)
            .unwrap();
        assert_eq!(text, expected(&plan), "{args:?}");
        // And it is JSON with the documented fields.
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let files: BTreeSet<(String, i64, String)> = v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                assert_eq!(f.as_object().unwrap().len(), 3);
                (
                    f["partition_hex"].as_str().unwrap().to_string(),
                    f["bucket"].as_i64().unwrap(),
                    f["file_name"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(files.len(), plan.files.len());
        assert_eq!(v.as_object().unwrap().len(), 7);
        assert!(v["blocks_read"].as_u64().unwrap() <= v["blocks_total"].as_u64().unwrap());
        nonempty += usize::from(!files.is_empty());
    }
    assert!(nonempty >= 5, "{nonempty}");
}

#[test]
fn no_sidecars_reads_everything_and_finds_the_same_files() {
    for case in cases() {
        let dir = table(case.table);
        let mut args = vec!["scan", dir.to_str().unwrap(), "--json"];
        args.extend_from_slice(case.args);
        let pruned = lakecore(&args);
        // Sidecars against the full read: every manifest opened in both.
        args.push("--no-manifest-pruning");
        let with = lakecore(&args);
        args.push("--no-sidecars");
        let without = lakecore(&args);
        assert!(pruned.status.success(), "{args:?}");
        let pruned: serde_json::Value = serde_json::from_slice(&pruned.stdout).unwrap();
        assert!(
            with.status.success() && without.status.success(),
            "{args:?}"
        );
        let with: serde_json::Value = serde_json::from_slice(&with.stdout).unwrap();
        let without: serde_json::Value = serde_json::from_slice(&without.stdout).unwrap();
        let set = |v: &serde_json::Value| {
            v["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.to_string())
                .collect::<BTreeSet<_>>()
        };
        assert_eq!(set(&with), set(&without), "{args:?}");
        assert_eq!(set(&pruned), set(&without), "{args:?}");
        assert_eq!(pruned["manifests"], without["manifests"]);
        assert_eq!(without["manifests_with_sidecar"], 0);
        assert_eq!(without["blocks_read"], without["blocks_total"]);
        assert_eq!(
            without["manifest_bytes_read"],
            without["manifest_bytes_total"]
        );
        assert_eq!(with["blocks_total"], without["blocks_total"]);
    }
}

#[test]
fn report_names_the_counts() {
    let dir = table("sc.db/bucket4_rs");
    let out = lakecore(&["scan", dir.to_str().unwrap(), "--bucket", "2/4"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let plan = Table::open(&dir)
        .unwrap()
        .plan(
            None,
            &ScanQuery {
                buckets: Some(vec![(2, Some(4))]),
                ..ScanQuery::default()
            },
        )
        .unwrap();
    assert!(text.contains(&format!(
        "live data files that can match: {}",
        plan.files.len()
    )));
    for f in &plan.files {
        assert!(text.contains(&*f.file_name));
    }
    let s = plan.stats;
    assert!(text.contains(&format!(
        "with sidecars: {} of {} blocks, {} of {} manifest bytes",
        s.blocks_read, s.blocks_total, s.manifest_bytes_read, s.manifest_bytes_total
    )));
}

fn one_line_error(args: &[&str], statuses: &[i32]) -> String {
    let out = lakecore(args);
    let code = out.status.code().unwrap();
    assert!(statuses.contains(&code), "{args:?}: status {code}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
    err
}

#[test]
fn invalid_tables_and_queries_fail_with_one_line() {
    let missing = table("sc.db/no_such_table");
    one_line_error(&["scan", missing.to_str().unwrap()], &[1]);
    // Not a table directory: a usage error.
    one_line_error(&["scan", WAREHOUSE, "--json"], &[3]);
    let t = table("sc.db/part_append_rs");
    let t = t.to_str().unwrap();
    one_line_error(&["scan", t, "--partition", "nope=1"], &[3]);
    one_line_error(&["scan", t, "--partition", "hr=seven"], &[3]);
    one_line_error(&["scan", t, "--rows", "9-1"], &[3]);
    one_line_error(&["scan", t, "--bucket", "x/4"], &[3]);
    one_line_error(&["scan", t, "--snapshot", "99"], &[1]);

    // A truncated manifest: invalid input, exit status 2, file named.
    let tmp = std::env::temp_dir().join(format!("lakecore-scan-cli-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(tmp.join("manifest")).unwrap();
    let src = table("sc.db/codec_snappy_rs");
    for sub in ["snapshot", "schema", "manifest"] {
        fs::create_dir_all(tmp.join(sub)).unwrap();
        for e in fs::read_dir(src.join(sub)).unwrap() {
            let e = e.unwrap();
            fs::copy(e.path(), tmp.join(sub).join(e.file_name())).unwrap();
        }
    }
    let prepared = Table::open(&tmp)
        .unwrap()
        .prepare(None, &ScanQuery::default())
        .unwrap();
    let victim = prepared.manifests()[0].file_name.clone();
    let path = tmp.join("manifest").join(&victim);
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..40]).unwrap();
    let err = one_line_error(&["scan", tmp.to_str().unwrap(), "--json"], &[2]);
    assert!(err.contains(&victim), "{err}");
    assert!(err.contains("invalid input"), "{err}");
    fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn demo_scans_a_generated_table_and_keeps_it_on_request() {
    let keep = std::env::temp_dir().join(format!("lakecore-demo-keep-{}", std::process::id()));
    let _ = fs::remove_dir_all(&keep);
    let out = lakecore(&[
        "demo",
        "--values",
        "1000",
        "--manifests",
        "20",
        "--keep",
        keep.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("== table scan: a generated Paimon table with 20 manifests"));
    assert_eq!(
        text.matches("(same as full read: true)").count(),
        5,
        "{text}"
    );
    assert!(text.contains("== summary"));
    // The kept table is a table `lakecore scan` reads, with every manifest's sidecar.
    let scan = lakecore(&["scan", keep.to_str().unwrap(), "--json"]);
    assert!(scan.status.success());
    let v: serde_json::Value = serde_json::from_slice(&scan.stdout).unwrap();
    assert_eq!(v["manifests"], 20);
    assert_eq!(v["manifests_with_sidecar"], 20);
    let plan = Table::open(&keep)
        .unwrap()
        .plan(None, &ScanQuery::default())
        .unwrap();
    assert_eq!(String::from_utf8(scan.stdout).unwrap(), expected(&plan));
    // An existing directory is refused rather than overwritten.
    let again = lakecore(&["demo", "--manifests", "1", "--keep", keep.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(3), "a usage error");
    // The table was built beside DIR and renamed into place: no temporary sibling is left.
    let name = keep.file_name().unwrap().to_str().unwrap().to_string();
    let leftovers: Vec<_> = fs::read_dir(keep.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&format!(".{name}.lakecore-tmp-")))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    fs::remove_dir_all(&keep).unwrap();
    // A demo that fails leaves nothing at DIR (here: its parent is a file).
    fs::write(&keep, b"not a directory").unwrap();
    let orphan = keep.join("table");
    let failed = lakecore(&[
        "demo",
        "--manifests",
        "1",
        "--keep",
        orphan.to_str().unwrap(),
    ]);
    assert!(!failed.status.success());
    assert!(!orphan.exists());
    fs::remove_file(&keep).unwrap();
}

/// `--splits` groups the `--json` files by partition and bucket, with typed partitions and
/// paths under the table; `--where`, `--column`, `--tag` and `--as-of` take the documented
/// forms and refuse others with one line and status 2.
#[test]
fn splits_filters_and_snapshot_selection() {
    let t = table("sc.db/part_append_rs");
    let t = t.to_str().unwrap();
    let out = lakecore(&["scan", t, "--splits"]);
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let plain: serde_json::Value =
        serde_json::from_slice(&lakecore(&["scan", t, "--json"]).stdout).unwrap();
    let want: BTreeSet<String> = plain["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file_name"].as_str().unwrap().to_string())
        .collect();
    let mut got = BTreeSet::new();
    let mut keys = BTreeSet::new();
    for s in doc["splits"].as_array().unwrap() {
        assert!(keys.insert((s["partition_hex"].to_string(), s["bucket"].to_string())));
        let dt = &s["partition"]["dt"];
        let hr = &s["partition"]["hr"];
        let files = s["files"].as_array().unwrap();
        assert!(!files.is_empty());
        let rows: i64 = files.iter().map(|f| f["row_count"].as_i64().unwrap()).sum();
        assert_eq!(s["row_count"].as_i64(), Some(rows));
        for f in files {
            let name = f["file_name"].as_str().unwrap();
            let dt = dt.as_str().unwrap_or("__DEFAULT_PARTITION__");
            let hr = if hr.is_null() {
                "__DEFAULT_PARTITION__".into()
            } else {
                hr.to_string()
            };
            let path = format!("{t}/dt={dt}/hr={hr}/bucket-{}/{name}", s["bucket"]);
            assert_eq!(f["path"].as_str(), Some(path.as_str()));
            got.insert(name.to_string());
        }
    }
    assert_eq!(got, want);

    // --where equals the same conditions given as --partition.
    let files = |args: &[&str]| -> BTreeSet<String> {
        let mut a = vec!["scan", t, "--json"];
        a.extend_from_slice(args);
        let out = lakecore(&a);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["file_name"].as_str().unwrap().to_string())
            .collect()
    };
    let by_partition = files(&["--partition", "dt=2024-01-02,hr=4"]);
    assert!(!by_partition.is_empty());
    assert_eq!(
        files(&["--where", "dt = '2024-01-02' AND hr = 4"]),
        by_partition
    );
    let either = files(&["--where", "hr IN (4, 5) OR hr IS NULL"]);
    let (h4, h5, null) = (
        files(&["--partition", "hr=4"]),
        files(&["--partition", "hr=5"]),
        files(&["--partition", "hr=__DEFAULT_PARTITION__"]),
    );
    assert_eq!(either, &(&h4 | &h5) | &null);
    assert_eq!(
        files(&["--where", "hr >= 4 AND hr <= 4"]),
        h4,
        "a range of one value is that value"
    );
    // Snapshots by time: the first snapshot's own time plans the first snapshot.
    let first = Table::open(t).unwrap().snapshot(1).unwrap();
    let at = first.time_millis.unwrap().to_string();
    assert_eq!(files(&["--as-of", &at]), files(&["--snapshot", "1"]));

    let e = one_line_error(&["scan", t, "--where", "hr >= "], &[3]);
    assert!(e.contains("character"), "{e}");
    one_line_error(&["scan", t, "--where", "nope = 1"], &[3]);
    one_line_error(&["scan", t, "--where", "hr = 'seven'"], &[3]);
    one_line_error(&["scan", t, "--as-of", "2024-02-30"], &[3]);
    one_line_error(&["scan", t, "--tag", "nope"], &[3]);
    one_line_error(&["scan", t, "--rows", "1-2"], &[3]);
    one_line_error(&["scan", t, "--column", "dt=2024-01-02"], &[3]);
}

/// `scan --arrow PATH` writes an IPC file and `--arrow -` an IPC stream with one row per
/// live file of the library's plan, in plan order, fields equal to the plan's; a filter
/// narrows the rows as it narrows the plan.
#[test]
fn arrow_output_is_the_plan_row_by_row() {
    use arrow_array::{Array, Int32Array, Int64Array, RecordBatch, StringArray, StructArray};
    let dir = table("sc.db/part_append_rs");
    let t = Table::open(&dir).unwrap();
    let plan = t.plan(None, &ScanQuery::default()).unwrap();
    let tmp = std::env::temp_dir().join(format!("lakecore-arrow-{}", std::process::id()));
    fs::create_dir_all(&tmp).unwrap();
    let out = tmp.join("plan.arrow");
    let o = lakecore(&[
        "scan",
        dir.to_str().unwrap(),
        "--arrow",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let file = fs::File::open(&out).unwrap();
    let batches: Vec<RecordBatch> = arrow_ipc::reader::FileReader::try_new(file, None)
        .unwrap()
        .map(|b| b.unwrap())
        .collect();
    let o = lakecore(&["scan", dir.to_str().unwrap(), "--arrow", "-"]);
    assert!(o.status.success());
    let streamed: Vec<RecordBatch> =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(o.stdout), None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    assert_eq!(batches, streamed);
    let b = &batches[0];
    assert_eq!(batches.len(), 1);
    assert_eq!(b.num_rows(), plan.files.len());
    assert!(b.num_rows() > 100);
    let col = |name: &str| b.column_by_name(name).unwrap().clone();
    let names = col("file_name");
    let names = names.as_any().downcast_ref::<StringArray>().unwrap();
    let sizes = col("file_size");
    let sizes = sizes.as_any().downcast_ref::<Int64Array>().unwrap();
    let buckets = col("bucket");
    let buckets = buckets.as_any().downcast_ref::<Int32Array>().unwrap();
    let part = col("partition");
    let part = part.as_any().downcast_ref::<StructArray>().unwrap();
    let schema = t.schema(0).unwrap();
    for (i, f) in plan.files.iter().enumerate() {
        assert_eq!(names.value(i), &*f.file_name);
        assert_eq!(sizes.value(i), f.file_size);
        assert_eq!(buckets.value(i), f.bucket);
        // The typed partition: the same values the schema decodes, as text.
        let values = schema.partition_values(&f.partition).unwrap();
        for (k, (name, v)) in values.iter().enumerate() {
            let child = part.column_by_name(name).unwrap();
            let shown = match child.as_any().downcast_ref::<StringArray>() {
                Some(s) => s.value(i).to_string(),
                None => child
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .value(i)
                    .to_string(),
            };
            match v {
                lakecore::paimon::PartitionValue::Null => assert!(child.is_null(i), "{k}"),
                v => assert_eq!(shown, v.to_string(), "file {i} key {name}"),
            }
        }
    }
    // A filter narrows the rows exactly as it narrows the plan.
    let o = lakecore(&[
        "scan",
        dir.to_str().unwrap(),
        "--where",
        "hr = 1",
        "--arrow",
        "-",
    ]);
    assert!(o.status.success());
    let narrowed: Vec<RecordBatch> =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(o.stdout), None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    let q = ScanQuery {
        filter: Some("hr = 1".parse().unwrap()),
        ..ScanQuery::default()
    };
    let want = t.plan(None, &q).unwrap().files.len();
    assert!(want > 0 && want < plan.files.len());
    assert_eq!(
        narrowed.iter().map(RecordBatch::num_rows).sum::<usize>(),
        want
    );
    fs::remove_dir_all(&tmp).unwrap();
}

const DV_TABLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/paimon/dv_warehouse/dvtab.db/dv"
);

/// `--splits` on a table with deletion vectors (written by pypaimon 2.1.0): each file's
/// `deletion_file` is the one pypaimon's splits carry (recorded next to the table), the merge
/// groups cover the files; a corrupt deletion vector fails `blob read` with status 2 and a
/// message naming the index file and the byte.
#[test]
fn splits_carry_deletion_files_and_bad_vectors_exit_2() {
    let out = lakecore(&["scan", DV_TABLE, "--splits"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let oracle: serde_json::Value = serde_json::from_slice(
        &fs::read(Path::new(DV_TABLE).with_extension("expected.json")).unwrap(),
    )
    .unwrap();
    let mut want = std::collections::BTreeMap::new();
    for s in oracle["splits"].as_array().unwrap() {
        for (name, d) in s["files"].as_object().unwrap() {
            want.insert(name.clone(), d.clone());
        }
    }
    let mut got = std::collections::BTreeMap::new();
    let mut with_dv = 0;
    for s in doc["splits"].as_array().unwrap() {
        let files = s["files"].as_array().unwrap();
        let covered: u64 = s["merge_groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g[1].as_u64().unwrap() - g[0].as_u64().unwrap())
            .sum();
        assert_eq!(covered, files.len() as u64);
        for f in files {
            let d = &f["deletion_file"];
            let d = if d.is_null() {
                serde_json::Value::Null
            } else {
                with_dv += 1;
                let rel = d["path"]
                    .as_str()
                    .unwrap()
                    .strip_prefix(&format!("{DV_TABLE}/"))
                    .unwrap();
                serde_json::json!({"index_file": rel, "offset": d["offset"],
                    "length": d["length"], "cardinality": d["cardinality"]})
            };
            got.insert(f["file_name"].as_str().unwrap().to_string(), d);
        }
    }
    assert_eq!(got, want);
    assert!(with_dv > 0);

    // A copy whose index files are corrupt: exit 2, the index file and byte named.
    let copy = std::env::temp_dir().join(format!("lakecore-dv-{}", std::process::id()));
    let _ = fs::remove_dir_all(&copy);
    let status = Command::new("cp")
        .args(["-r", DV_TABLE, copy.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    for e in fs::read_dir(copy.join("index")).unwrap() {
        let p = e.unwrap().path();
        let mut bytes = fs::read(&p).unwrap();
        bytes[5] ^= 0xff; // the first vector's magic
        fs::write(&p, bytes).unwrap();
    }
    let out = lakecore(&["blob", "read", copy.to_str().unwrap(), "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/index/index-") && err.contains("byte 5"),
        "{err}"
    );
    fs::remove_dir_all(&copy).unwrap();
}
