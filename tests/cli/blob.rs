//! `lakecore blob inspect` / `blob merge` run as a binary: exact JSON shapes checked against
//! the real files' oracles and the spec's worked example; invalid input exits 2 with one line.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use lakecore_testkit::blob;
use lakecore_testkit::data::{blob_files, oracle};

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_lakecore");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "status {:?}, stderr {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(text.lines().count(), 1, "one JSON line");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn inspect_matches_oracles() {
    let files = blob_files();
    assert!(files.len() >= 10);
    for path in &files {
        let oracle = oracle(path);
        let want_rows: Vec<Value> = oracle["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| match r["kind"].as_str().unwrap() {
                "blob" => json!({
                    "row": r["row"], "kind": "value",
                    "offset": r["payload_offset"], "length": r["payload_length"],
                }),
                kind => json!({"row": r["row"], "kind": kind}),
            })
            .collect();
        let p = path.to_str().unwrap();
        let plain = json_of(&run(&["blob", "inspect", p, "--json"]));
        assert_eq!(plain, json!({"rows": want_rows, "crc": "unchecked"}));
        let verified = json_of(&run(&["blob", "inspect", p, "--verify", "--json"]));
        let any_value = oracle["counts"]["blob"].as_u64().unwrap() > 0;
        // Every record of these files hashes magic, payload and length (checked
        // independently in tests/blob/real.rs).
        let crc = if any_value { "full" } else { "unchecked" };
        assert_eq!(verified, json!({"rows": want_rows, "crc": crc}));
    }
}

fn tmp(name: &str, bytes: &[u8]) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("blob_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

fn sha_hex(bytes: &[u8]) -> String {
    lakecore::codec::checksum::sha256(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn merge_worked_example() {
    let layout: [(i64, u64, &[&str]); 9] = [
        (1, 0, &["b0", "b1", "b2"]),
        (1, 3, &["b3", "b4"]),
        (2, 0, &["u20", "P"]),
        (2, 2, &["P", "u23"]),
        (2, 4, &["u24"]),
        (3, 5, &["b5", "b6", "b7", "b8", "b9"]),
        (4, 5, &["P", "u46", "P"]),
        (4, 8, &["u48", "P"]),
        (
            6,
            0,
            &["P", "u61", "P", "P", "P", "P", "P", "P", "P", "u69"],
        ),
    ];
    let mut args: Vec<String> = vec!["blob".into(), "merge".into()];
    for (i, (seq, first, cells)) in layout.iter().enumerate() {
        let path = tmp(&format!("we{i}.blob"), &blob::write(cells));
        args.push("--file".into());
        args.push(format!("{seq}:{first}:{path}"));
    }
    args.push("--json".into());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let got = json_of(&run(&argv));
    let values = [
        "u20", "u61", "b2", "u23", "u24", "b5", "u46", "b7", "u48", "u69",
    ];
    let seqs = [2, 6, 1, 2, 2, 3, 4, 3, 4, 6];
    let want: Vec<Value> = (0..10)
        .map(|i| {
            json!({"row_id": i, "seq": seqs[i], "kind": "value",
                   "length": values[i].len(), "sha256": sha_hex(values[i].as_bytes())})
        })
        .collect();
    assert_eq!(got, json!({ "rows": want }));

    // Row ranges, and every single row.
    let mut ranged = argv.clone();
    ranged.extend(["--rows", "7-8,1-1,2-2,8-8"]);
    let got = json_of(&run(&ranged));
    assert_eq!(
        got,
        json!({"rows": [want[1].clone(), want[2].clone(), want[7].clone(), want[8].clone()]})
    );
    for (i, row) in want.iter().enumerate() {
        let r = format!("{i}-{i}");
        let mut one = argv.clone();
        one.extend(["--rows", r.as_str()]);
        assert_eq!(json_of(&run(&one)), json!({ "rows": [row] }));
    }
}

#[test]
fn merge_nulls_and_all_placeholder_rows() {
    let old = tmp("old.blob", &blob::write(&["o0", "o1", "o2"]));
    let new = tmp("new.blob", &blob::write(&["N", "P"]));
    let got = json_of(&run(&[
        "blob",
        "merge",
        "--file",
        &format!("1:0:{old}"),
        "--file",
        &format!("2:0:{new}"),
        "--file",
        &format!("2:4:{new}"),
        "--json",
    ]));
    assert_eq!(
        got,
        json!({"rows": [
            {"row_id": 0, "seq": 2, "kind": "null"},
            {"row_id": 1, "seq": 1, "kind": "value", "length": 2, "sha256": sha_hex(b"o1")},
            {"row_id": 2, "seq": 1, "kind": "value", "length": 2, "sha256": sha_hex(b"o2")},
            {"row_id": 3, "seq": -1, "kind": "null"},
            {"row_id": 4, "seq": 2, "kind": "null"},
            {"row_id": 5, "seq": -1, "kind": "null"},
        ]})
    );
}

fn assert_invalid(out: &Output, needle: &str) {
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(needle), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn invalid_input_exits_2_with_one_line() {
    let good = blob::write(&["abc", "N"]);
    let cut = tmp("cut.blob", &good[..good.len() - 1]);
    assert_invalid(
        &run(&["blob", "inspect", &cut, "--json"]),
        &format!(
            "invalid input: unsupported version at byte {}",
            good.len() - 2
        ),
    );
    let mut bad_crc = good.clone();
    bad_crc[5] ^= 1;
    let bad = tmp("badcrc.blob", &bad_crc);
    // Structure is fine; only verify mode sees the flipped payload byte.
    assert!(run(&["blob", "inspect", &bad, "--json"]).status.success());
    assert_invalid(
        &run(&["blob", "inspect", &bad, "--verify", "--json"]),
        "invalid input: checksum mismatch at byte 15",
    );
    assert_invalid(
        &run(&["blob", "merge", "--file", &format!("1:0:{cut}"), "--json"]),
        "unsupported version",
    );
    let p = tmp("ph.blob", &blob::write(&["a", "P"]));
    assert_invalid(
        &run(&[
            "blob",
            "merge",
            "--file",
            &format!("1:0:{p}"),
            "--strict",
            "--json",
        ]),
        "invalid value at row 1",
    );
    // Without --strict the lone placeholder is NULL with sequence number -1.
    let lone = run(&["blob", "merge", "--file", &format!("1:0:{p}"), "--json"]);
    assert!(lone.status.success());
    assert!(String::from_utf8_lossy(&lone.stdout)
        .contains("{\"row_id\":1,\"seq\":-1,\"kind\":\"null\"}"));
    // A malformed argument is a usage error: status 3.
    let usage = run(&["blob", "merge", "--file", "x:0:/nonexistent", "--json"]);
    assert_eq!(usage.status.code(), Some(3), "{usage:?}");
    assert!(String::from_utf8_lossy(&usage.stderr).contains("SEQ:FIRST_ROW_ID:PATH"));
    let missing = run(&["blob", "inspect", "/nonexistent/file.blob", "--json"]);
    assert_eq!(missing.status.code(), Some(1));
}

#[test]
fn demo_prints_the_blob_section() {
    let out = run(&["demo", "--values", "1000", "--manifests", "20"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("== blob: three partial-update layers of 1000000 rows"));
    let line = text.lines().find(|l| l.contains("winners seq1")).unwrap();
    // Every row has a winner (seq 1 writes them all): the three counts add up to 1M.
    let after = line.split("winners ").nth(1).unwrap();
    let total: u64 = after
        .split(['/', ','])
        .take(3)
        .map(|part| {
            part.split_whitespace()
                .nth(1)
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(total, 1_000_000, "{line}");
    assert!(line.contains("rows/s"));
}

const BLOB_TABLES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/paimon/blob_warehouse/blobtab.db"
);

/// pypaimon's recorded read of a table: `(row_id, null, length, sha256)` per row.
fn pypaimon_read(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{BLOB_TABLES}/{name}.expected.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!([r["row_id"], r["null"], r["length"], r["sha256"]]))
        .collect()
}

fn json_lines(out: &Output) -> Vec<Value> {
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn read_table_json_equals_pypaimon() {
    for name in ["layers", "rolled", "parted"] {
        let dir = format!("{BLOB_TABLES}/{name}");
        let rows = json_lines(&run(&["blob", "read", &dir, "--json"]));
        let got: Vec<Value> = rows
            .iter()
            .map(|r| json!([r["row_id"], r["null"], r["length"], r["sha256"]]))
            .collect();
        assert_eq!(got, pypaimon_read(name), "{name}");
        let keys: Vec<&String> = rows[0].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["length", "null", "row_id", "sequence_number", "sha256"],
            "{name}"
        );
    }
    // Filters: rows and partition.
    let dir = format!("{BLOB_TABLES}/layers");
    let some = json_lines(&run(&["blob", "read", &dir, "--rows", "7,3-5", "--json"]));
    let ids: Vec<u64> = some.iter().map(|r| r["row_id"].as_u64().unwrap()).collect();
    assert_eq!(ids, [3, 4, 5, 7]);
    let dir = format!("{BLOB_TABLES}/parted");
    let one = json_lines(&run(&[
        "blob",
        "read",
        &dir,
        "--partition",
        "dt=2024-01-02",
        "--column",
        "b",
        "--json",
    ]));
    assert_eq!(one.len(), 100);
    // The same grammar as `scan --partition`: a quoted value is the same condition, and the
    // bucket filter takes `B/T` (every file of these tables is in bucket 0 of -1, unaware).
    let quoted = json_lines(&run(&[
        "blob",
        "read",
        &dir,
        "--partition",
        "dt='2024-01-02'",
        "--bucket",
        "0/-1",
        "--json",
    ]));
    assert_eq!(quoted, one);
    // `--where`, the grammar of `scan --where`: exact on the partition key; a condition on
    // another column keeps every file (all layers of a row are read).
    let wher =
        |filter: &str| json_lines(&run(&["blob", "read", &dir, "--where", filter, "--json"]));
    assert_eq!(wher("dt = '2024-01-02'"), one);
    let all = json_lines(&run(&["blob", "read", &dir, "--json"]));
    assert!(all.len() > one.len());
    assert_eq!(wher("dt IN ('2024-01-01', '2024-01-02')"), all);
    assert_eq!(wher("dt = '2024-01-02' AND id > 1000000"), one);
    assert_eq!(wher("dt = '2024-01-02' OR name = 'x'"), all);
    assert!(wher("dt > '2024-01-02'").is_empty());
    let bad = run(&["blob", "read", &dir, "--where", "dt = = 1", "--json"]);
    assert_eq!(bad.status.code(), Some(3), "{bad:?}");
}

#[test]
fn read_table_out_writes_each_value() {
    let dir = format!("{BLOB_TABLES}/layers");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("blob_read_out");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let status = run(&["blob", "read", &dir, "--out", out.to_str().unwrap()]);
    assert!(status.status.success(), "{status:?}");
    let want = pypaimon_read("layers");
    let mut files = 0;
    for r in &want {
        let path = out.join(r[0].to_string());
        if r[1] == json!(true) {
            assert!(!path.exists());
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(json!(bytes.len()), r[2]);
        assert_eq!(json!(sha_hex(&bytes)), r[3]);
        files += 1;
    }
    // Nothing else in the directory: no temporary file left behind.
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), files);
    // A directory that cannot be written: I/O error, exit status 1.
    let bad = run(&["blob", "read", &dir, "--out", "/nonexistent/dir"]);
    assert_eq!(bad.status.code(), Some(1), "{bad:?}");
}

#[test]
fn check_exits_one_when_an_update_loses() {
    let rolled = run(&["blob", "check", &format!("{BLOB_TABLES}/rolled"), "--json"]);
    assert_eq!(rolled.status.code(), Some(1), "{rolled:?}");
    let v: Value = serde_json::from_slice(&rolled.stdout).unwrap();
    let lost = v["lost_updates"].as_array().unwrap();
    assert!(lost.len() > 10);
    for l in lost {
        assert!(l["winner_sequence_number"].as_i64() > l["update_sequence_number"].as_i64());
        assert!(l["winner"].as_str().unwrap().ends_with(".blob"));
        assert!(l["update"].as_str().unwrap().ends_with(".blob"));
    }
    let text = run(&["blob", "check", &format!("{BLOB_TABLES}/rolled")]);
    assert_eq!(text.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&text.stdout).contains("loses to data-"));
    let parted = run(&["blob", "check", &format!("{BLOB_TABLES}/parted"), "--json"]);
    assert!(parted.status.success(), "{parted:?}");
    assert_eq!(json_of(&parted), json!({"lost_updates": []}));
}

#[test]
fn read_table_bad_input() {
    // Not a BLOB column; not a data-evolution table: the arguments are wrong, not the
    // bytes (status 3, usage).
    let dir = format!("{BLOB_TABLES}/layers");
    let e = run(&["blob", "read", &dir, "--column", "name", "--json"]);
    assert_eq!(e.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&e.stderr).contains("no BLOB column \"name\""));
    let plain = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/paimon/warehouse/sc.db/part_append_rs"
    );
    let e = run(&["blob", "read", plain, "--json"]);
    assert_eq!(e.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&e.stderr).contains("data-evolution.enabled"));
    // A .blob file shorter than its manifest's file_size: exit 2, file named.
    let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join("blob_read_short");
    let _ = std::fs::remove_dir_all(&copy);
    copy_dir(Path::new(&dir), &copy);
    let mut blobs: Vec<_> = std::fs::read_dir(copy.join("bucket-0"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "blob"))
        .collect();
    blobs.sort();
    let victim = &blobs[0];
    let bytes = std::fs::read(victim).unwrap();
    std::fs::write(victim, &bytes[..bytes.len() - 3]).unwrap();
    let name = victim.file_name().unwrap().to_str().unwrap();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("blob_read_short_out");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let e = run(&[
        "blob",
        "read",
        copy.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(e.status.code(), Some(2), "{e:?}");
    let err = String::from_utf8_lossy(&e.stderr);
    assert!(err.contains(name) && err.contains("mismatch"), "{err}");
    // No partial (temporary) file in the output directory.
    assert!(std::fs::read_dir(&out).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_str()
        .unwrap()
        .starts_with('.')));
    // A missing .blob file: I/O, exit 1, file named.
    std::fs::remove_file(victim).unwrap();
    let e = run(&["blob", "read", copy.to_str().unwrap(), "--json"]);
    assert_eq!(e.status.code(), Some(1), "{e:?}");
    assert!(String::from_utf8_lossy(&e.stderr).contains(name));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

const DESC_TABLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/paimon/blob_warehouse/desctab.db/desc"
);

/// `blob read --column d` on a descriptor field against pypaimon's `blob-as-descriptor=true`
/// read (`tests/clients/make_descriptor_table.py`): the descriptor bytes, then
/// `--descriptors decode`'s uri / offset / length; usage errors exit 3.
#[test]
fn read_descriptor_field_equals_pypaimon() {
    let text = std::fs::read_to_string(format!("{DESC_TABLE}.expected.json")).unwrap();
    let want: Value = serde_json::from_str(&text).unwrap();
    let want = want["descriptors"].as_array().unwrap();
    let rows = json_lines(&run(&[
        "blob", "read", DESC_TABLE, "--column", "d", "--json",
    ]));
    let got: Vec<Value> = rows
        .iter()
        .map(|r| json!([r["row_id"], r["null"], r["length"], r["sha256"]]))
        .collect();
    let expected: Vec<Value> = want
        .iter()
        .map(|r| json!([r["row_id"], r["null"], r["length"], r["sha256"]]))
        .collect();
    assert_eq!(got, expected);
    let decoded = json_lines(&run(&[
        "blob",
        "read",
        DESC_TABLE,
        "--column",
        "d",
        "--descriptors",
        "decode",
        "--json",
    ]));
    let got: Vec<Value> = decoded
        .iter()
        .map(|r| json!([r["row_id"], r["uri"], r["offset"], r["length"]]))
        .collect();
    let expected: Vec<Value> = want
        .iter()
        .map(|r| json!([r["row_id"], r["uri"], r["offset"], r["descriptor_length"]]))
        .collect();
    assert_eq!(got, expected);
    for args in [
        &["--column", "name"][..],
        &["--column", "b", "--descriptors", "resolve"],
        &["--column", "d", "--descriptors", "decode", "--out", "/tmp"],
    ] {
        let out = run(&[&["blob", "read", DESC_TABLE][..], args].concat());
        assert_eq!(out.status.code(), Some(3), "{args:?}: {out:?}");
    }
}
