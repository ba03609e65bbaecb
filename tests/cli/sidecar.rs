//! The `lakecore sidecar` CLI, run as a process (feature `cli`).
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use lakecore_testkit::sidecar::*;
use lakecore_testkit::{
    data::{data, golden},
    hex::hex,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lakecore(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lakecore"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lakecore-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn expected_json(layout: &str, blocks: &Value) -> String {
    let items: Vec<String> = blocks
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            format!(
                "{{\"offset\":{},\"length\":{},\"first_record\":{},\"record_count\":{}}}",
                b["offset"], b["length"], b["first_record"], b["record_count"]
            )
        })
        .collect();
    format!(
        "{{\"layout\":\"{layout}\",\"blocks\":[{}]}}\n",
        items.join(",")
    )
}

struct Case {
    dir: PathBuf,
    manifest: String,
    oracle: Value,
}

fn cases() -> Vec<Case> {
    let root = PathBuf::from(data("paimon/warehouse/sc.db"));
    let mut out = Vec::new();
    for t in ["de_rs", "bucket4_rs", "part_append_rs", "codec_snappy_rs"] {
        let dir = root.join(t).join("manifest");
        for f in std::fs::read_dir(&dir).unwrap() {
            let name = f.unwrap().file_name().into_string().unwrap();
            if let Some(m) = name.strip_suffix(".oracle.json") {
                let oracle: Value =
                    serde_json::from_str(&std::fs::read_to_string(dir.join(&name)).unwrap())
                        .unwrap();
                out.push(Case {
                    dir: dir.clone(),
                    manifest: m.to_string(),
                    oracle,
                });
            }
        }
    }
    out
}

/// The `--partition` hex list equivalent to an oracle's single-field `equal` filter.
fn partition_hexes(o: &Value, f: &Value) -> Option<Vec<String>> {
    if f["op"] != "equal" {
        return None;
    }
    let fields = o["table_partition_fields"].as_array().unwrap();
    let i = fields.iter().position(|x| x["name"] == f["field"]).unwrap();
    let mut out: Vec<String> = o["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["partition_values"][i] == f["value"])
        .map(|e| e["partition_hex"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out.dedup();
    Some(out)
}

#[test]
fn select_json_matches_every_expressible_oracle_selection() {
    let mut ran = 0;
    for c in cases() {
        let o = &c.oracle;
        let sidecar = c.dir.join(format!("{}.avro.sidecar", c.manifest));
        let size = o["manifest_file_size"].to_string();
        let entries = o["entry_count"]["total"].to_string();
        for sel in o["selections"].as_array().unwrap() {
            let mut args: Vec<String> = vec![
                "sidecar".into(),
                "select".into(),
                sidecar.to_str().unwrap().into(),
                "--manifest-size".into(),
                size.clone(),
                "--entries".into(),
                entries.clone(),
                "--json".into(),
            ];
            if let Some(r) = sel["row_ranges"].as_array() {
                let list: Vec<String> = r.iter().map(|p| format!("{}-{}", p[0], p[1])).collect();
                args.push(format!("--rows={}", list.join(",")));
            }
            if let Some(b) = sel["bucket_filter"].as_str() {
                match b.strip_prefix("bucket == ") {
                    Some(n) => args.push(format!("--bucket={n}")),
                    None => args.push("--bucket=".into()),
                }
            }
            if let Some(f) = sel.get("partition_filter") {
                let Some(hexes) = partition_hexes(o, f) else {
                    continue;
                };
                args.push(format!("--partition={}", hexes.join(",")));
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = stdout(&lakecore(&args));
            assert_eq!(
                out,
                expected_json("compact", &sel["selected_blocks"]),
                "{} {}",
                c.manifest,
                sel["name"]
            );
            ran += 1;
        }
    }
    assert!(ran > 200, "{ran}");
}

#[test]
fn golden_select_inspect_and_exact_shape() {
    let path = tmp("fixed-v1.sidecar");
    std::fs::write(&path, golden("fixed-v1.hex")).unwrap();
    let p = path.to_str().unwrap();
    let base = [
        "sidecar",
        "select",
        p,
        "--manifest-size",
        "457",
        "--entries",
        "7",
        "--json",
    ];
    let run = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        stdout(&lakecore(&a))
    };
    assert_eq!(
        run(&["--rows", "20-20"]),
        "{\"layout\":\"fixed\",\"blocks\":[{\"offset\":57,\"length\":100,\"first_record\":0,\"record_count\":3},{\"offset\":357,\"length\":100,\"first_record\":5,\"record_count\":2}]}\n"
    );
    assert_eq!(run(&["--rows="]), "{\"layout\":\"fixed\",\"blocks\":[]}\n");
    assert_eq!(
        run(&["--rows", "10-19,25-40"]),
        "{\"layout\":\"fixed\",\"blocks\":[]}\n"
    );
    let all = run(&[]);
    let v: Value = serde_json::from_str(&all).unwrap();
    assert_eq!(v["blocks"].as_array().unwrap().len(), 3);
    // Bucket B/T vs B.
    let firsts = |s: String| -> Vec<u64> {
        let v: Value = serde_json::from_str(&s).unwrap();
        v["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["first_record"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(firsts(run(&["--bucket", "1/8"])), [0]);
    assert_eq!(firsts(run(&["--bucket", "2"])), [3]);
    assert_eq!(firsts(run(&["--bucket", "3/8,0/1"])), [5]);
    assert_eq!(firsts(run(&["--bucket="])), Vec::<u64>::new());
    // Partition hex: b = (9, null) is in every block; an unknown tuple in none.
    let b = hex(&partition(9, None));
    assert_eq!(firsts(run(&["--partition", &b])), [0, 3, 5]);
    assert_eq!(
        firsts(run(&["--partition", &hex(&partition(1, None))])),
        Vec::<u64>::new()
    );
    assert_eq!(firsts(run(&["--partition="])), Vec::<u64>::new());
    // Inspect, text and JSON.
    let text = stdout(&lakecore(&["sidecar", "inspect", p]));
    assert!(text.contains("fixed layout"));
    let v: Value = serde_json::from_str(&stdout(&lakecore(&[
        "sidecar",
        "inspect",
        p,
        "--json",
        "--manifest-size",
        "457",
        "--entries",
        "7",
    ])))
    .unwrap();
    assert_eq!(v["layout"], "fixed");
    assert_eq!(
        v["blocks"][0]["row_ranges"],
        serde_json::json!([[0, 9], [20, 24]])
    );
}

#[test]
fn invalid_input_exits_2_with_one_line_naming_kind_and_offset() {
    let mut bytes = golden("compact-v1.hex");
    bytes[100] ^= 1;
    let path = tmp("bad.sidecar");
    std::fs::write(&path, &bytes).unwrap();
    let p = path.to_str().unwrap();
    for args in [
        vec!["sidecar", "inspect", p],
        vec![
            "sidecar",
            "select",
            p,
            "--manifest-size",
            "457",
            "--entries",
            "7",
            "--json",
        ],
    ] {
        let o = lakecore(&args);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("checksum mismatch at byte 251"), "{err}");
        assert!(o.stdout.is_empty());
    }
    // Facts that disagree with the sidecar.
    let good = tmp("good.sidecar");
    std::fs::write(&good, golden("compact-v1.hex")).unwrap();
    let o = lakecore(&[
        "sidecar",
        "select",
        good.to_str().unwrap(),
        "--manifest-size",
        "999",
        "--entries",
        "7",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("mismatch at byte"));
    // A manifest that is not Avro.
    let o = lakecore(&[
        "sidecar",
        "build",
        good.to_str().unwrap(),
        "-o",
        tmp("x").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("bad magic at byte 0"));
}

#[test]
fn build_reproduces_published_sidecars_and_fixed_selects_the_same() {
    for c in cases() {
        let o = &c.oracle;
        let manifest = c.dir.join(&c.manifest);
        let st = &o["pypaimon_sidecar_settings"];
        let out = tmp(&format!("{}.compact", c.manifest));
        let mut args = vec![
            "sidecar",
            "build",
            manifest.to_str().unwrap(),
            "--layout",
            "compact",
            "-o",
            out.to_str().unwrap(),
        ];
        if st["row_id_enabled"] == false {
            args.push("--no-row-ids");
        }
        if st["bucket_enabled"] == false {
            args.push("--no-buckets");
        }
        stdout(&lakecore(&args));
        let published = std::fs::read(c.dir.join(format!("{}.avro.sidecar", c.manifest))).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), published, "{}", c.manifest);
        // The default layout is compact (what the clients read); fixed on request.
        let default = tmp(&format!("{}.default", c.manifest));
        stdout(&lakecore(&[
            "sidecar",
            "build",
            manifest.to_str().unwrap(),
            "-o",
            default.to_str().unwrap(),
        ]));
        let v: Value = serde_json::from_str(&stdout(&lakecore(&[
            "sidecar",
            "inspect",
            default.to_str().unwrap(),
            "--json",
        ])))
        .unwrap();
        assert_eq!(v["layout"], "compact");
        let fixed = tmp(&format!("{}.fixed", c.manifest));
        stdout(&lakecore(&[
            "sidecar",
            "build",
            manifest.to_str().unwrap(),
            "--layout",
            "fixed",
            "-o",
            fixed.to_str().unwrap(),
        ]));
        let v: Value = serde_json::from_str(&stdout(&lakecore(&[
            "sidecar",
            "inspect",
            fixed.to_str().unwrap(),
            "--json",
        ])))
        .unwrap();
        assert_eq!(v["layout"], "fixed");
        let select = |p: &Path, layout: &str| {
            let s = stdout(&lakecore(&[
                "sidecar",
                "select",
                p.to_str().unwrap(),
                "--manifest-size",
                &o["manifest_file_size"].to_string(),
                "--entries",
                &o["entry_count"]["total"].to_string(),
                "--rows",
                "0-10",
                "--json",
            ]));
            s.replace(&format!("\"layout\":\"{layout}\""), "")
        };
        assert_eq!(select(&out, "compact"), select(&fixed, "fixed"));
    }
}

#[test]
fn demo_runs_the_sidecar_section() {
    let out = stdout(&lakecore(&[
        "demo",
        "--values",
        "1000",
        "--manifests",
        "20",
    ]));
    assert!(out.contains("== sidecar"));
    assert!(out.contains("select row id point"));
}

/// A sidecar over 1 MiB, which `sidecar select` reads into a populated anonymous mapping
/// rather than a vector: the blocks it selects are those the brute-force oracle keeps, for
/// row ranges across the file; a copy cut short is rejected (exit 2), as a small one is.
#[test]
fn select_reads_a_sidecar_over_a_mib_like_a_small_one() {
    use lakecore::sidecar::Layout;
    let a = partition(1, Some("a"));
    let b = partition(2, None);
    let header = golden_header();
    let (mut offset, mut row) = (header.len() as u64, 0i64);
    let blocks: Vec<(u64, u64, Vec<TestEntry>)> = (0..60_000u64)
        .map(|i| {
            let entries: Vec<TestEntry> = (0..3)
                .map(|j| {
                    let count = 1 + ((i * 7 + j) % 90) as i64;
                    let e = TestEntry {
                        first_row_id: Some(row),
                        row_count: count,
                        partition: if (i + j) % 3 == 0 {
                            a.clone()
                        } else {
                            b.clone()
                        },
                        bucket: Some((i % 4) as i32),
                        total: Some(4),
                    };
                    row += count + (i % 5) as i64;
                    e
                })
                .collect();
            let len = 1000 + i % 700;
            offset += len;
            (offset - len, len, entries)
        })
        .collect();
    let entries = (blocks.len() * 3).to_string();
    let bytes = build(
        &header,
        &blocks,
        offset,
        settings(Layout::Compact, true, true),
    );
    assert!(bytes.len() > 1 << 20, "{} bytes", bytes.len());
    let path = tmp("large.compact.sidecar");
    std::fs::write(&path, &bytes).unwrap();
    let size = offset.to_string();
    let select = |file: &Path, rows: &str| {
        lakecore(&[
            "sidecar",
            "select",
            file.to_str().unwrap(),
            "--manifest-size",
            &size,
            "--entries",
            &entries,
            "--rows",
            rows,
            "--json",
        ])
    };
    let last = u64::try_from(row).unwrap();
    for (lo, hi) in [
        (0, 0),
        (last / 2, last / 2 + 300),
        (last - 5, last + 5),
        (17, last / 3),
    ] {
        let got: Value =
            serde_json::from_str(&stdout(&select(&path, &format!("{lo}-{hi}")))).unwrap();
        let got: Vec<u64> = got["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["offset"].as_u64().unwrap())
            .collect();
        let want: Vec<u64> = blocks
            .iter()
            .filter(|(_, _, e)| brute_keeps(e, Some(&[(lo, hi)]), None, None, true, true))
            .map(|(o, _, _)| *o)
            .collect();
        assert!(!want.is_empty(), "{lo}-{hi}");
        assert_eq!(got, want, "rows {lo}-{hi}");
    }
    let cut = tmp("large-cut.compact.sidecar");
    std::fs::write(&cut, &bytes[..bytes.len() - 1000]).unwrap();
    let o = select(&cut, "0-10");
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("large-cut.compact.sidecar"));
}
