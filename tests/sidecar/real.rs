//! Real Apache Paimon manifests and their published compact sidecars (tests/data/paimon),
//! checked against the `.oracle.json` files written beside them.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "paimon")]

use lakecore::codec::avro::Container;
use lakecore::paimon::manifest::build_from_manifest;
use lakecore::sidecar::{
    BinaryRow, BuildSettings, Layout, ManifestFacts, PartitionMask, Query, RowRange, RowRanges,
    Sidecar, SidecarOptions,
};
use lakecore_testkit::{data::data, hex::hex};
use serde_json::Value;

struct Case {
    name: String,
    oracle: Value,
    manifest: Vec<u8>,
    sidecar: Vec<u8>,
}

fn cases() -> Vec<Case> {
    let root = data("paimon/warehouse/sc.db");
    let mut out = Vec::new();
    for table in std::fs::read_dir(&root).unwrap() {
        let dir = table.unwrap().path().join("manifest");
        for f in std::fs::read_dir(&dir).unwrap() {
            let p = f.unwrap().path();
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            let Some(manifest_name) = name.strip_suffix(".oracle.json") else {
                continue;
            };
            let oracle: Value =
                serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            let Some(sidecar_name) = oracle["sidecar"].as_str() else {
                continue;
            };
            out.push(Case {
                name: manifest_name.to_string(),
                manifest: std::fs::read(dir.join(manifest_name)).unwrap(),
                sidecar: std::fs::read(dir.join(sidecar_name)).unwrap(),
                oracle,
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(out.len(), 19, "every published sidecar in the corpus");
    out
}

fn facts(o: &Value) -> ManifestFacts {
    ManifestFacts {
        length: o["manifest_file_size"].as_u64().unwrap(),
        entries: o["entry_count"]["total"].as_u64().unwrap(),
    }
}

fn oracle_blocks(o: &Value) -> Vec<(u64, u64, u64, u64)> {
    o["avro_blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["offset"].as_u64().unwrap(),
                b["size"].as_u64().unwrap(),
                b["first_record"].as_u64().unwrap(),
                b["num_records"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_published_sidecar_validates_and_decodes_like_the_oracle() {
    for c in cases() {
        let o = &c.oracle;
        let s = Sidecar::parse_with(
            &c.sidecar,
            &SidecarOptions {
                facts: Some(facts(o)),
            },
        )
        .unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert_eq!(s.layout(), Layout::Compact);
        let d = &o["sidecar_decoded"];
        assert_eq!(
            s.avro_header().len() as u64,
            d["header_length"].as_u64().unwrap()
        );
        assert_eq!(s.avro_header(), &c.manifest[..s.avro_header().len()]);
        let dict: Vec<String> = s.partitions().map(hex).collect();
        let want: Vec<String> = d["partition_dictionary_hex"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(dict, want, "{}", c.name);
        let blocks: Vec<_> = s.blocks().collect();
        let shape: Vec<_> = blocks
            .iter()
            .map(|b| (b.offset, b.length, b.first_record, b.record_count))
            .collect();
        assert_eq!(shape, oracle_blocks(o), "{}", c.name);
        for (b, ob) in blocks.iter().zip(d["blocks"].as_array().unwrap()) {
            let ids: Option<Vec<u64>> = b
                .partition_ids()
                .map(|it| it.map(|r| u64::from(r.unwrap())).collect());
            let want_ids: Option<Vec<u64>> = ob["partition_ids"]
                .as_array()
                .map(|a| a.iter().map(|v| v.as_u64().unwrap()).collect());
            assert_eq!(ids, want_ids, "{}", c.name);
            let rows: Option<Vec<(u64, u64)>> =
                b.row_ids().map(|it| it.map(|r| r.unwrap()).collect());
            let want_rows: Option<Vec<(u64, u64)>> = ob["row_ranges"].as_array().map(|a| {
                a.iter()
                    .map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap()))
                    .collect()
            });
            assert_eq!(rows, want_rows, "{}", c.name);
            if let Some(min) = ob["row_min"].as_u64() {
                assert_eq!(
                    b.row_id_envelope(),
                    Some((min, ob["row_max"].as_u64().unwrap()))
                );
            }
            let buckets: Option<Vec<(i64, i64)>> = b.buckets().map(|it| {
                it.map(|r| r.unwrap())
                    .map(|(x, y)| (x as i64, y as i64))
                    .collect()
            });
            let want_buckets: Option<Vec<(i64, i64)>> = ob["bucket_pairs"].as_array().map(|a| {
                a.iter()
                    .map(|p| (p[0].as_i64().unwrap(), p[1].as_i64().unwrap()))
                    .collect()
            });
            assert_eq!(buckets, want_buckets, "{}", c.name);
        }
    }
}

/// The oracle's partition filter evaluated on typed values read through [`BinaryRow`].
fn partition_predicate(o: &Value, filter: &Value) -> impl Fn(&[u8]) -> bool {
    let fields: Vec<(String, String)> = o["table_partition_fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                f["type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let filter = filter.clone();
    move |tuple: &[u8]| {
        let row = BinaryRow::from_partition(tuple, 0).unwrap();
        let value_of = |name: &str| -> Value {
            let i = fields.iter().position(|(n, _)| n == name).unwrap() as u32;
            if row.is_null(i).unwrap() {
                return Value::Null;
            }
            match fields[i as usize].1.as_str() {
                "STRING" => Value::from(row.get_str(i).unwrap().unwrap()),
                "INT" => Value::from(row.get_i32(i).unwrap().unwrap()),
                t => panic!("type {t}"),
            }
        };
        let field = filter["field"].clone();
        match filter["op"].as_str().unwrap() {
            "equal" => {
                let v = value_of(field.as_str().unwrap());
                !v.is_null() && v == filter["value"]
            }
            "is_null" => value_of(field.as_str().unwrap()).is_null(),
            "and" => field.as_array().unwrap().iter().all(|pair| {
                let v = value_of(pair[0].as_str().unwrap());
                !v.is_null() && v == pair[1]
            }),
            op => panic!("op {op}"),
        }
    }
}

fn bucket_predicate(text: &str) -> Box<dyn Fn(i32, i32) -> bool> {
    if text == "always false" {
        return Box::new(|_, _| false);
    }
    let n: i32 = text.strip_prefix("bucket == ").unwrap().parse().unwrap();
    Box::new(move |b, _| b == n)
}

/// Runs every oracle selection on `s`, returning (name, selected blocks) pairs after
/// asserting each equals the oracle's.
fn check_selections(c: &Case, s: &Sidecar<'_>) -> usize {
    let o = &c.oracle;
    let mut n = 0;
    for sel in o["selections"].as_array().unwrap() {
        let mut ranges: Vec<RowRange> = sel["row_ranges"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| RowRange::new(p[0].as_u64().unwrap(), p[1].as_u64().unwrap()))
                    .collect()
            })
            .unwrap_or_default();
        let mut q = Query::new();
        if sel.get("row_ranges").is_some() {
            q = q.rows(RowRanges::normalize(&mut ranges));
        }
        let mask;
        if let Some(f) = sel.get("partition_filter") {
            mask = s.partition_mask_vec(partition_predicate(o, f));
            q = q.partitions(PartitionMask::new(&mask));
        }
        let bucket;
        if let Some(f) = sel.get("bucket_filter") {
            bucket = bucket_predicate(f.as_str().unwrap());
            q = q.buckets(&*bucket);
        }
        let got: Vec<(u64, u64, u64, u64)> = s
            .select(&q)
            .map(|b| b.unwrap())
            .map(|b| (b.offset, b.length, b.first_record, b.record_count))
            .collect();
        let want: Vec<(u64, u64, u64, u64)> = sel["selected_blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["offset"].as_u64().unwrap(),
                    b["length"].as_u64().unwrap(),
                    b["first_record"].as_u64().unwrap(),
                    b["record_count"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, want, "{} / {}", c.name, sel["name"]);
        // The same selection with validation fused into it (one walk).
        let options = SidecarOptions {
            facts: Some(facts(o)),
        };
        let head = Sidecar::parse_head(&c.sidecar, &options).unwrap();
        let fused_mask;
        let mut fq = Query::new();
        if sel.get("row_ranges").is_some() {
            fq = fq.rows(RowRanges::normalize(&mut ranges));
        }
        if let Some(f) = sel.get("partition_filter") {
            fused_mask = head.partition_mask_vec(partition_predicate(o, f));
            fq = fq.partitions(PartitionMask::new(&fused_mask));
        }
        let fused_bucket;
        if let Some(f) = sel.get("bucket_filter") {
            fused_bucket = bucket_predicate(f.as_str().unwrap());
            fq = fq.buckets(&*fused_bucket);
        }
        let mut fused = Vec::new();
        let view = head
            .select_into(&fq, |b| {
                fused.push((b.offset, b.length, b.first_record, b.record_count))
            })
            .unwrap();
        assert_eq!(fused, want, "fused: {} / {}", c.name, sel["name"]);
        assert_eq!(view.block_count(), s.block_count());
        n += 1;
    }
    n
}

#[test]
fn every_oracle_selection_is_reproduced() {
    let mut total = 0;
    for c in cases() {
        let s = Sidecar::parse_with(
            &c.sidecar,
            &SidecarOptions {
                facts: Some(facts(&c.oracle)),
            },
        )
        .unwrap();
        total += check_selections(&c, &s);
    }
    assert!(total > 200, "ran {total} selections");
}

#[test]
fn avro_scanner_matches_the_oracle_block_list() {
    for c in cases() {
        let container = Container::parse(&c.manifest).unwrap();
        assert_eq!(
            container.header_len(),
            c.oracle["avro_header_length"].as_u64().unwrap()
        );
        assert_eq!(
            container.codec(),
            c.oracle["avro_codec"].as_str().unwrap().as_bytes()
        );
        let mut first = 0;
        let blocks: Vec<_> = container
            .blocks()
            .map(|b| b.unwrap())
            .map(|b| {
                let r = (b.offset, b.length, first, b.object_count);
                first += b.object_count;
                r
            })
            .collect();
        assert_eq!(blocks, oracle_blocks(&c.oracle), "{}", c.name);
    }
}

fn oracle_settings(o: &Value, layout: Layout) -> BuildSettings {
    let st = &o["pypaimon_sidecar_settings"];
    BuildSettings {
        layout,
        row_ids: st["row_id_enabled"].as_bool().unwrap(),
        buckets: st["bucket_enabled"].as_bool().unwrap(),
    }
}

#[test]
fn building_from_the_manifest_reproduces_the_published_sidecar() {
    for c in cases() {
        let built = build_from_manifest(&c.manifest, oracle_settings(&c.oracle, Layout::Compact))
            .unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert_eq!(hex(&built), hex(&c.sidecar), "{}", c.name);
    }
}

#[test]
fn fixed_layout_built_from_the_manifest_selects_the_same_blocks() {
    for c in cases() {
        let built =
            build_from_manifest(&c.manifest, oracle_settings(&c.oracle, Layout::Fixed)).unwrap();
        let s = Sidecar::parse_with(
            &built,
            &SidecarOptions {
                facts: Some(facts(&c.oracle)),
            },
        )
        .unwrap();
        assert_eq!(s.layout(), Layout::Fixed);
        check_selections(&c, &s);
    }
}
