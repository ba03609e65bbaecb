//! Avro framing and `build_from_manifest` on manifests written here with every codec
//! (null, deflate, snappy, zstandard), with and without the `["null", record]` wrapper,
//! against the builder fed the same entries directly.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "paimon")]

use apache_avro::types::Value;
use apache_avro::{Codec, Schema, Writer};
use lakecore::codec::avro::Container;
use lakecore::paimon::manifest::{build_from_manifest, decode_entries};
use lakecore::sidecar::{BuildSettings, EntryCoverage, Layout, SidecarBuilder};
use lakecore::ErrorKind;
use lakecore_testkit::rng::Rng;
use lakecore_testkit::sidecar::*;

const ENTRY: &str = r#"{"type":"record","name":"entry","fields":[
    {"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},
    {"name":"_BUCKET","type":"int"},{"name":"_TOTAL_BUCKETS","type":"int"},
    {"name":"_FILE","type":{"type":"record","name":"file","fields":[
        {"name":"_ROW_COUNT","type":"long"},
        {"name":"_FIRST_ROW_ID","type":["null","long"],"default":null}]}}]}"#;

fn entry_value(e: &TestEntry, union: bool) -> Value {
    let first = match e.first_row_id {
        Some(f) => Value::Union(1, Box::new(Value::Long(f))),
        None => Value::Union(0, Box::new(Value::Null)),
    };
    let rec = Value::Record(vec![
        ("_KIND".into(), Value::Int(0)),
        ("_PARTITION".into(), Value::Bytes(e.partition.clone())),
        ("_BUCKET".into(), Value::Int(e.bucket.unwrap())),
        ("_TOTAL_BUCKETS".into(), Value::Int(e.total.unwrap())),
        (
            "_FILE".into(),
            Value::Record(vec![
                ("_ROW_COUNT".into(), Value::Long(e.row_count)),
                ("_FIRST_ROW_ID".into(), first),
            ]),
        ),
    ]);
    if union {
        Value::Union(1, Box::new(rec))
    } else {
        rec
    }
}

fn write_manifest(codec: Codec, union: bool, blocks: &[Vec<TestEntry>]) -> Vec<u8> {
    let text = if union {
        format!("[\"null\",{ENTRY}]")
    } else {
        ENTRY.to_string()
    };
    let schema = Schema::parse_str(&text).unwrap();
    let mut w = Writer::with_codec(&schema, Vec::new(), codec);
    for block in blocks {
        for e in block {
            w.append(entry_value(e, union)).unwrap();
        }
        w.flush().unwrap();
    }
    w.into_inner().unwrap()
}

fn random_blocks(rng: &mut Rng) -> Vec<Vec<TestEntry>> {
    let pool = [
        partition(1, Some("a")),
        partition(2, None),
        partition(3, Some("ccc")),
    ];
    (0..1 + rng.below(6))
        .map(|_| {
            (0..1 + rng.below(30))
                .map(|_| TestEntry {
                    first_row_id: if rng.one_in(10) {
                        None
                    } else {
                        Some(rng.below(1 << 40) as i64)
                    },
                    row_count: 1 + rng.below(1000) as i64,
                    partition: pool[rng.below(3) as usize].clone(),
                    bucket: Some(if rng.one_in(10) {
                        -1
                    } else {
                        rng.below(4) as i32
                    }),
                    total: Some(4),
                })
                .collect()
        })
        .collect()
}

#[test]
fn every_codec_and_wrapper_builds_what_the_entries_say() {
    let mut rng = Rng::star(77);
    let codecs = || {
        [
            Codec::Null,
            Codec::Deflate(Default::default()),
            Codec::Snappy,
            Codec::Zstandard(Default::default()),
        ]
    };
    for round in 0..6 {
        let blocks = random_blocks(&mut rng);
        for codec in codecs() {
            for union in [false, true] {
                let manifest = write_manifest(codec, union, &blocks);
                let c = Container::parse(&manifest).unwrap();
                let name: &str = codec.into();
                assert_eq!(c.codec(), name.as_bytes());
                let avro_blocks: Vec<_> = c.blocks().map(|b| b.unwrap()).collect();
                assert_eq!(avro_blocks.len(), blocks.len(), "round {round} {name}");
                let (_, _, decoded) = decode_entries(&manifest).unwrap();
                assert_eq!(decoded.len(), blocks.iter().map(Vec::len).sum::<usize>());
                for layout in [Layout::Fixed, Layout::Compact] {
                    let settings = BuildSettings {
                        layout,
                        ..BuildSettings::default()
                    };
                    let got = build_from_manifest(&manifest, settings).unwrap();
                    // Oracle: the builder fed the generated entries and the scanned block list.
                    let mut b = SidecarBuilder::new(settings, c.header());
                    for (ab, entries) in avro_blocks.iter().zip(&blocks) {
                        b.begin_block(ab.offset, ab.length).unwrap();
                        for e in entries {
                            b.add(EntryCoverage {
                                partition: Some(&e.partition),
                                bucket: e.bucket,
                                total_buckets: e.total,
                                first_row_id: e.first_row_id,
                                row_count: e.row_count,
                            })
                            .unwrap();
                        }
                        b.end_block().unwrap();
                    }
                    let want = b.finish(manifest.len() as u64).unwrap();
                    assert_eq!(got, want, "round {round} {name} union={union} {layout:?}");
                }
            }
        }
    }
}

#[test]
fn avro_framing_errors_are_located() {
    let blocks = random_blocks(&mut Rng::star(5));
    let manifest = write_manifest(Codec::Null, false, &blocks);
    let c = Container::parse(&manifest).unwrap();
    let first = c.blocks().next().unwrap().unwrap();
    // Bad magic.
    let mut m = manifest.clone();
    m[0] = b'X';
    assert_eq!(Container::parse(&m).unwrap_err().kind, ErrorKind::BadMagic);
    // A damaged sync marker after the first block.
    let mut m = manifest.clone();
    let sync_at = (first.offset + first.length - 16) as usize;
    m[sync_at] ^= 1;
    let e = Container::parse(&m)
        .unwrap()
        .blocks()
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::Mismatch, sync_at as u64));
    // Truncation anywhere: never a panic, always an error somewhere.
    for n in 0..manifest.len() {
        let t = &manifest[..n];
        let failed = match Container::parse(t) {
            Err(_) => true,
            Ok(c) => {
                c.blocks().any(|b| b.is_err())
                    || build_from_manifest(t, BuildSettings::default()).is_err()
            }
        };
        let complete_prefix = Container::parse(t).is_ok_and(|c| c.blocks().all(|b| b.is_ok()));
        assert!(failed || complete_prefix, "truncated to {n}");
    }
    // Not a sidecar-able manifest: a schema without the entry fields still decodes, but a
    // block whose record count disagrees with its data fails.
    let mut m = manifest.clone();
    m[first.offset as usize] = 0x7e; // object count 63
    assert!(build_from_manifest(&m, BuildSettings::default()).is_err());
}
