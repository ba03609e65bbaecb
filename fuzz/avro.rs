//! Bolero harnesses for the Avro container scanner, `build_from_manifest`, the datum decoder
//! (`Schema::parse`, `read`, `skip_datum`, `items` on arbitrary and mutated schema JSON and
//! datums) and the manifest decoders (`decode_manifest_list`, `decode_entries`,
//! `Manifest::entries` on mutated real manifests and lists): nothing panics, `read` and
//! `skip_datum` agree, items walks stay bounded.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "paimon")]

use lakecore::codec::avro::Container;
use lakecore::paimon::manifest::build_from_manifest;
use lakecore::sidecar::{BuildSettings, Layout, Sidecar};

fn scan(bytes: &[u8]) {
    if let Ok(c) = Container::parse(bytes) {
        let _ = c.metadata_entries().count();
        let _ = c.codec();
        for b in c.blocks() {
            if b.is_err() {
                break;
            }
        }
    }
    for layout in [Layout::Fixed, Layout::Compact] {
        let settings = BuildSettings {
            layout,
            ..BuildSettings::default()
        };
        if let Ok(sidecar) = build_from_manifest(bytes, settings) {
            // Whatever is built must validate against the manifest it came from.
            assert!(Sidecar::parse(&sidecar).is_ok());
        }
    }
}

fn iterations() -> usize {
    if cfg!(miri) {
        10
    } else {
        2000
    }
}

#[test]
fn avro_arbitrary_bytes() {
    bolero::check!()
        .with_iterations(iterations())
        .with_max_len(2048)
        .for_each(|bytes: &[u8]| scan(bytes));
}

#[test]
fn avro_mutated_real_manifests() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/paimon/warehouse/sc.db/codec_snappy_rs/manifest"
    );
    let seeds: Vec<Vec<u8>> = [
        "manifest-7cfc433b-123d-43f6-aa43-4deccc307082-0",
        "manifest-f8d56aa4-3f9a-4ba0-adc7-88f5795ac59b-0",
    ]
    .iter()
    .map(|n| std::fs::read(format!("{dir}/{n}")).unwrap())
    .collect();
    let de = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/paimon/warehouse/sc.db/de_rs/manifest/manifest-3ac6cef4-5147-484b-b123-dec1d9288f4f-0"
    );
    let mut seeds = seeds;
    seeds.push(std::fs::read(de).unwrap());
    bolero::check!()
        .with_iterations(iterations())
        .with_type::<(u8, Vec<(u16, u8)>)>()
        .for_each(|(seed, edits)| {
            let mut m = seeds[usize::from(*seed) % seeds.len()].clone();
            for &(at, v) in edits.iter().take(3) {
                // Aim at the blocks (after the ~2 KiB header) as often as at the header.
                let i = usize::from(at) % m.len();
                let i = if at % 2 == 0 {
                    m.len() - 1 - i % (m.len() / 4)
                } else {
                    i
                };
                m[i] = v;
            }
            scan(&m);
        });
}

// ----------------------------------------------------------------- schemas and datums

use lakecore::codec::avro::{Schema, Value, MAX_EMPTY_ITEMS};
use lakecore::cursor::Cursor;
use lakecore::paimon::manifest::{decode_entries, decode_manifest_list, Manifest};

/// Visits the items of every array and map value (and theirs, two levels down); each walk
/// yields at most one item per byte plus the zero-byte allowance.
fn visit(schema: &Schema<'_>, v: Value<'_>, level: usize) {
    let Value::Items(items) = v else {
        let _ = (v.as_i64(), v.as_bytes(), v.as_str(), v.is_null());
        return;
    };
    let bound = items.encoded_len() as u64 + MAX_EMPTY_ITEMS;
    let mut n = 0u64;
    for item in schema.items(items) {
        n += 1;
        assert!(n <= bound, "an items walk outran its bytes");
        match item {
            Ok(inner) if level < 2 => visit(schema, inner, level + 1),
            Ok(_) => {}
            Err(_) => break,
        }
    }
}

/// Reads `datums` one datum after another through `projection`'s flattened program
/// (`read`) and by the recursive walk alone (`read_walking`): both must return the same
/// values, or the same error, and stop at the same byte.
fn program_agrees(
    schema: &Schema<'_>,
    projection: &lakecore::codec::avro::Projection,
    datums: &[u8],
) {
    let n = projection.len();
    let mut a = vec![Value::Absent; n];
    let mut b = vec![Value::Absent; n];
    let mut ca = Cursor::new(datums);
    let mut cb = Cursor::new(datums);
    for _ in 0..32 {
        let start = ca.index();
        let ra = schema.read(projection, &mut ca, &mut a);
        let rb = schema.read_walking(projection, &mut cb, &mut b);
        assert_eq!(ra, rb, "program and walk disagree on the result");
        if ra.is_err() {
            break;
        }
        // Floats compared by their bits: a NaN read the same way by both is no disagreement.
        let bits = |v: &[Value<'_>]| -> Vec<String> {
            v.iter()
                .map(|v| match v {
                    Value::Float(f) => format!("f32 {:#x}", f.to_bits()),
                    Value::Double(d) => format!("f64 {:#x}", d.to_bits()),
                    other => format!("{other:?}"),
                })
                .collect()
        };
        assert_eq!(
            bits(&a),
            bits(&b),
            "program and walk disagree on the values"
        );
        assert_eq!(
            ca.index(),
            cb.index(),
            "program and walk disagree on the length"
        );
        if ca.is_empty() || ca.index() == start {
            break;
        }
    }
}

/// Paths into nested records that the seed schemas (and Paimon's manifests) have.
const NESTED_PATHS: &[&str] = &[
    "inner.z",
    "inner.e",
    "again.e",
    "again.z",
    "next",
    "v",
    "kids",
    "l",
    "u",
    "a",
    "n",
    "_KIND",
    "_PARTITION",
    "_FILE._FILE_NAME",
    "_FILE._KEY_STATS",
    "_FILE._VALUE_STATS",
    "_FILE._EXTRA_FILES",
    "_FILE._CREATION_TIME",
    "_FILE._FIRST_ROW_ID",
    "_FILE._WRITE_COLS",
    "_FILE._LEVEL",
    "_FILE._EMBEDDED_FILE_INDEX",
    "_FILE._EXTERNAL_PATH",
    "_FILE._FILE_SOURCE",
    "_FILE_NAME",
    "_NUM_ADDED_FILES",
    "_PARTITION_STATS",
    "_MIN_BUCKET",
    "_MIN_ROW_ID",
];

/// Compiles `json`; when it compiles, reads `datums` one datum after another with every
/// top-level field projected, and steps over each with `skip_datum`: a datum `read` accepts
/// is one `skip_datum` accepts, with the same length.
fn drive_schema(json: &[u8], datums: &[u8]) {
    let Ok(schema) = Schema::parse(json, 0) else {
        return;
    };
    let _ = (
        schema.root_type(),
        schema.datum_nonzero(),
        format!("{schema:?}"),
    );
    let mut names: Vec<&str> = schema
        .field_names()
        .filter_map(|n| std::str::from_utf8(n).ok())
        .collect();
    names.sort_unstable();
    names.dedup();
    let projection = schema.project(&names).unwrap();
    program_agrees(&schema, &projection, datums);
    // Nested paths, one projection per way of leaving out every third one.
    for skip in 0..3 {
        let paths: Vec<&str> = NESTED_PATHS
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 3 != skip)
            .map(|(_, p)| *p)
            .collect();
        if let Ok(p) = schema.project(&paths) {
            program_agrees(&schema, &p, datums);
        }
    }
    let mut out = vec![Value::Absent; names.len()];
    let mut c = Cursor::new(datums);
    for _ in 0..32 {
        let start = c.index();
        let read = schema.read(&projection, &mut c, &mut out);
        let mut s = Cursor::new(datums);
        s.skip(start).unwrap();
        let skip = schema.skip_datum(&mut s);
        match read {
            Ok(()) => {
                assert!(
                    skip.is_ok(),
                    "read accepted a datum skip_datum refuses: {skip:?}"
                );
                assert_eq!(
                    s.index(),
                    c.index(),
                    "read and skip_datum disagree on the length"
                );
                for v in &out {
                    visit(&schema, *v, 0);
                }
            }
            Err(_) => break,
        }
        if c.is_empty() || c.index() == start {
            break;
        }
    }
}

/// Arbitrary bytes: the first byte splits the input into schema JSON and datums.
#[test]
fn avro_schema_arbitrary_json_and_datums() {
    bolero::check!()
        .with_iterations(iterations() * 10)
        .with_max_len(1024)
        .for_each(|bytes: &[u8]| {
            let Some((&split, rest)) = bytes.split_first() else {
                return;
            };
            let (json, datums) = rest.split_at(usize::from(split).min(rest.len()));
            drive_schema(json, datums);
        });
}

/// Schema texts that compile, each with a valid datum of its type.
const SEEDS: &[(&str, &[u8])] = &[
    (
        r#"{"type": "record", "name": "r", "namespace": "a", "fields": [
        {"name": "n", "type": "null"}, {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"}, {"name": "l", "type": "long"},
        {"name": "f", "type": "float"}, {"name": "d", "type": "double"},
        {"name": "by", "type": "bytes"}, {"name": "s", "type": "string"},
        {"name": "fx", "type": {"type": "fixed", "name": "F", "size": 3}},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
        {"name": "a", "type": {"type": "array", "items": ["null", "long"]}},
        {"name": "m", "type": {"type": "map", "values": "F"}},
        {"name": "u", "type": ["null", "string", {"type": "array", "items": "E"}]},
        {"name": "t", "type": {"type": "long", "logicalType": "timestamp-millis"}}]}"#,
        &[
            1, 9, 0xd8, 0x04, 0, 0, 0x80, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0, 4, 1, 2, 6, b'a', b'b',
            b'c', 7, 8, 9, 2, 4, 0, 2, 6, 0, 2, 2, b'k', 1, 2, 3, 0, 4, 2, 0, 0, 0x80, 0x01,
        ],
    ),
    (
        r#"{"type": "record", "name": "L", "fields": [{"name": "v", "type": "long"},
        {"name": "next", "type": ["null", "L"]},
        {"name": "kids", "type": {"type": "array", "items": "L"}}]}"#,
        &[2, 2, 4, 0, 0, 2, 6, 0, 0, 0],
    ),
    (
        r#"["null", {"type": "record", "name": "x.R", "fields": [
        {"name": "inner", "type": {"type": "record", "name": "I", "fields": [
            {"name": "z", "type": {"type": "array", "items": "null"}},
            {"name": "e", "type": {"type": "record", "name": "Empty", "fields": []}}]}},
        {"name": "many", "type": {"type": "map", "values": {"type": "array", "items": "Empty"}}},
        {"name": "again", "type": "x.I"}]}]"#,
        &[2, 6, 0, 2, 2, b'k', 4, 0, 0, 0],
    ),
    (
        r#"["null", {"type": "record", "name": "E", "fields": [
        {"name": "_KIND", "type": "int"}, {"name": "_PARTITION", "type": "bytes"},
        {"name": "_FILE", "type": {"type": "record", "name": "F", "fields": [
            {"name": "_FILE_NAME", "type": "string"}, {"name": "_LEVEL", "type": "int"},
            {"name": "_KEY_STATS", "type": ["null", {"type": "record", "name": "S", "fields": [
                {"name": "_MIN_VALUES", "type": "bytes"},
                {"name": "_NULL_COUNTS", "type": ["null", {"type": "array", "items": ["null", "long"]}]}]}]},
            {"name": "_EXTRA_FILES", "type": {"type": "array", "items": "string"}},
            {"name": "_CREATION_TIME", "type": ["null", "long"]},
            {"name": "_FIRST_ROW_ID", "type": ["long", "null"]},
            {"name": "_FLAG", "type": "boolean"}, {"name": "_F", "type": "float"},
            {"name": "_D", "type": ["null", "double"]}]}}]}]"#,
        &[
            2, 2, 4, 1, 2, 2, b'a', 8, 2, 2, b'm', 2, 4, 0, 2, 4, 0, 2, 2, b'x', 0, 2, 0x54, 0,
            0x2a, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0,
        ],
    ),
    (
        r#"{"type": "array", "items": {"type": "map", "values": ["int", "null", "bytes"]}}"#,
        &[2, 4, 2, b'a', 0, 2, 2, b'b', 4, 2, 9, 0, 0],
    ),
];

/// The seed schemas mutated in up to three bytes, with their valid datums (three in a row)
/// mutated in up to three bytes, or with arbitrary datums.
#[test]
fn avro_schema_mutated_json_and_datums() {
    for (json, datum) in SEEDS {
        // The seeds are what they claim: each datum reads and fills every byte.
        let schema = Schema::parse(json.as_bytes(), 0).unwrap();
        let mut c = Cursor::new(datum);
        schema.skip_datum(&mut c).unwrap();
        assert!(c.is_empty(), "{json}");
    }
    bolero::check!()
        .with_iterations(iterations() * 10)
        .with_type::<(u8, Vec<(u16, u8)>, Vec<(u16, u8)>, Vec<u8>)>()
        .for_each(|(seed, json_edits, datum_edits, arbitrary)| {
            let (json, datum) = SEEDS[usize::from(*seed) % SEEDS.len()];
            let mut json = json.as_bytes().to_vec();
            for &(at, v) in json_edits.iter().take(usize::from(seed >> 4) % 4) {
                let i = usize::from(at) % json.len();
                json[i] = v;
            }
            let datums = if seed & 8 != 0 {
                arbitrary.clone()
            } else {
                let mut d = datum.repeat(3);
                for &(at, v) in datum_edits.iter().take(3) {
                    let i = usize::from(at) % d.len();
                    d[i] = v;
                }
                d
            };
            drive_schema(&json, &datums);
        });
}

// ----------------------------------------------------------------- manifest decoders

/// Every entry point over a manifest or manifest list: none may panic; whatever decodes must
/// decode the same way through each.
fn drive_manifest(bytes: &[u8]) {
    let _ = decode_manifest_list(bytes);
    let decoded = decode_entries(bytes);
    let Ok(m) = Manifest::parse(bytes) else {
        assert!(decoded.is_err());
        return;
    };
    let mut dec = m.decompressor();
    let mut n = 0usize;
    let mut all_ok = true;
    for block in m.container().blocks() {
        let Ok(block) = block else {
            all_ok = false;
            break;
        };
        if m.codec() == lakecore::paimon::compression::Codec::Null {
            if let Ok(p) = m.schema().project(NESTED_PATHS) {
                program_agrees(m.schema(), &p, block.data);
            }
        }
        let r = m.entries(&block, &mut dec, |e| {
            n += 1;
            let _ = (
                e.kind(),
                e.partition(),
                e.bucket(),
                e.total_buckets(),
                e.file_name(),
            );
            let _ = (
                e.file_size(),
                e.row_count(),
                e.min_key(),
                e.max_key(),
                e.key_stats(),
            );
            let _ = (
                e.value_stats(),
                e.min_sequence_number(),
                e.max_sequence_number(),
            );
            let _ = (
                e.schema_id(),
                e.level(),
                e.creation_time(),
                e.delete_row_count(),
            );
            let _ = (
                e.embedded_index(),
                e.file_source(),
                e.external_path(),
                e.first_row_id(),
            );
            let _ = e.has_write_cols();
            for strings in [m.extra_files(e), m.write_cols(e), m.value_stats_cols(e)] {
                for s in strings {
                    if s.is_err() {
                        break;
                    }
                }
            }
            Ok(())
        });
        if r.is_err() {
            all_ok = false;
            break;
        }
    }
    if all_ok {
        assert_eq!(decoded.map(|(_, _, e)| e.len()).ok(), Some(n));
    }
}

/// Real manifests and lists (snappy, zstandard, and a stored copy written with apache-avro
/// from a real manifest's records), mutated in up to four bytes or cut short.
#[test]
fn avro_manifest_decoders_mutated() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse");
    let read = |rel: &str| std::fs::read(format!("{data}/{rel}")).unwrap();
    let list_dir = format!("{data}/sc.db/part_append_rs/manifest");
    let list = std::fs::read_dir(&list_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("manifest-list-"))
        .min()
        .unwrap();
    let snappy_list_dir = format!("{data}/sc.db/codec_snappy_rs/manifest");
    let snappy_list = std::fs::read_dir(&snappy_list_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("manifest-list-"))
        .min()
        .unwrap();
    let zstd = read("sc.db/de_rs/manifest/manifest-3ac6cef4-5147-484b-b123-dec1d9288f4f-0");
    // 364 entries in 6 blocks, stored: mutations reach the datum walk directly.
    let stored = stored_copy(&read(
        "sc.db/bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0",
    ));
    assert!(Manifest::parse(&stored).is_ok());
    let seeds = [
        read("sc.db/codec_snappy_rs/manifest/manifest-7cfc433b-123d-43f6-aa43-4deccc307082-0"),
        zstd,
        stored.clone(),
        stored,
        std::fs::read(format!("{list_dir}/{list}")).unwrap(),
        std::fs::read(format!("{snappy_list_dir}/{snappy_list}")).unwrap(),
    ];
    bolero::check!()
        .with_iterations(iterations())
        .with_type::<(u8, Vec<(u32, u8)>, u32)>()
        .for_each(|(seed, edits, cut)| {
            let mut m = seeds[usize::from(*seed) % seeds.len()].clone();
            for &(at, v) in edits.iter().take(4) {
                let i = at as usize % m.len();
                m[i] = v;
            }
            if cut % 8 == 0 {
                m.truncate(*cut as usize / 8 % (m.len() + 1));
            }
            drive_manifest(&m);
        });
}

/// The manifest `bytes` rewritten by apache-avro with the null codec (stored blocks).
fn stored_copy(bytes: &[u8]) -> Vec<u8> {
    let reader = apache_avro::Reader::new(bytes).unwrap();
    let schema = reader.writer_schema().clone();
    let values: Vec<_> = reader.map(|v| v.unwrap()).collect();
    let mut w = apache_avro::Writer::with_codec(&schema, Vec::new(), apache_avro::Codec::Null);
    for v in values {
        w.append(v).unwrap();
    }
    w.into_inner().unwrap()
}
