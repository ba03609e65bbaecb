//! The flattened datum program against the recursive walk it replaces, on every real
//! manifest and manifest list of `tests/data/paimon/warehouse` (six codecs, written by
//! pypaimon and paimon-rust): the same values, errors and lengths on every record, and on
//! thousands of mutated copies of the decompressed blocks. Paimon's manifest projection compiles to a
//! program with no step left to the walk.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use lakecore::codec::avro::{Container, Projection, Schema, Value};
use lakecore::cursor::Cursor;
use lakecore::paimon::compression::{Codec, Decompressor};
use lakecore::Error;
use lakecore_testkit::rng::Rng;

/// The fields the planner reads from a manifest entry (`paimon::manifest`'s projection).
const ENTRY: &[&str] = &[
    "_KIND",
    "_PARTITION",
    "_BUCKET",
    "_TOTAL_BUCKETS",
    "_FILE._FILE_NAME",
    "_FILE._FILE_SIZE",
    "_FILE._ROW_COUNT",
    "_FILE._MIN_KEY",
    "_FILE._MAX_KEY",
    "_FILE._KEY_STATS",
    "_FILE._VALUE_STATS",
    "_FILE._MIN_SEQUENCE_NUMBER",
    "_FILE._MAX_SEQUENCE_NUMBER",
    "_FILE._SCHEMA_ID",
    "_FILE._LEVEL",
    "_FILE._EXTRA_FILES",
    "_FILE._CREATION_TIME",
    "_FILE._DELETE_ROW_COUNT",
    "_FILE._EMBEDDED_FILE_INDEX",
    "_FILE._FILE_SOURCE",
    "_FILE._VALUE_STATS_COLS",
    "_FILE._EXTERNAL_PATH",
    "_FILE._FIRST_ROW_ID",
    "_FILE._WRITE_COLS",
];

/// Every manifest and manifest list under the test warehouses.
fn metadata_files() -> Vec<std::path::PathBuf> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse");
    let mut out = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(root)];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                dirs.push(p);
            } else if name.starts_with("manifest-") && !name.contains('.') {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Reads up to 64 datums of `data` both ways; both must agree on each result, value and
/// length. Returns how many datums both read.
fn agree(schema: &Schema<'_>, p: &Projection, data: &[u8]) -> usize {
    let n = p.len();
    let (mut a, mut b) = (vec![Value::Absent; n], vec![Value::Absent; n]);
    let (mut ca, mut cb) = (Cursor::new(data), Cursor::new(data));
    let mut read = 0;
    for _ in 0..64 {
        let ra: Result<(), Error> = schema.read(p, &mut ca, &mut a);
        let rb = schema.read_walking(p, &mut cb, &mut b);
        assert_eq!(ra, rb);
        if ra.is_err() {
            break;
        }
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert_eq!(ca.index(), cb.index());
        read += 1;
        if ca.is_empty() {
            break;
        }
    }
    read
}

#[test]
fn program_reads_real_manifests_as_the_walk_does() {
    let files = metadata_files();
    assert!(files.len() >= 40, "{} files", files.len());
    let mut rng = Rng::new(61);
    let (mut datums, mut mutated, mut manifests) = (0usize, 0usize, 0usize);
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let container = Container::parse(&bytes).unwrap();
        let json = container.metadata("avro.schema").unwrap();
        let schema = Schema::parse(json, 0).unwrap();
        let list = schema.field_names().any(|f| f == b"_NUM_ADDED_FILES");
        let top: Vec<&str> = schema
            .field_names()
            .map(|f| std::str::from_utf8(f).unwrap())
            .collect();
        let projections: Vec<Projection> = match list {
            // Every field of a list; of a manifest, the planner's fields and a few alone.
            true => vec![schema.project(&top).unwrap()],
            false => {
                manifests += 1;
                let p = schema.project(ENTRY).unwrap();
                assert_eq!(p.walked_steps(), Some(0), "{}", path.display());
                vec![
                    p,
                    schema.project(&["_FILE._KEY_STATS"]).unwrap(),
                    schema.project(&["_FILE._WRITE_COLS", "_KIND"]).unwrap(),
                    schema.project(&["_VERSION"]).unwrap(),
                ]
            }
        };
        let codec = Codec::from_name(container.codec(), 0).unwrap();
        let mut dec = Decompressor::new(codec);
        for block in container.blocks() {
            let block = block.unwrap();
            let data = dec.block(block.data, block.offset).unwrap().to_vec();
            for p in &projections {
                datums += agree(&schema, p, &data);
                // Mutated copies: a byte or two changed, or the block cut short.
                for _ in 0..24 {
                    let mut m = data.clone();
                    for _ in 0..1 + rng.next_u64() % 2 {
                        let at = (rng.next_u64() % m.len() as u64) as usize;
                        m[at] = rng.next_u64() as u8;
                    }
                    if rng.next_u64().is_multiple_of(4) {
                        m.truncate((rng.next_u64() % m.len() as u64) as usize);
                    }
                    agree(&schema, p, &m);
                    mutated += 1;
                }
            }
        }
    }
    assert!(manifests >= 20, "{manifests} manifests");
    assert!(datums >= 1_000, "{datums} datums");
    assert!(mutated >= 2_000, "{mutated} mutated blocks");
}

/// A record whose every field is `["null", itself]`: the program's compile stops at its
/// budget instead of re-exploring the nesting for every field (287 ms for 160 fields
/// without it, 0.25 ms with it, in a release build), and the program it keeps still reads
/// as the walk does.
#[test]
fn self_nesting_records_read_as_the_walk_does() {
    for fields in [3usize, 40, 160] {
        let list: Vec<String> = (0..fields)
            .map(|i| format!(r#"{{"name": "f{i}", "type": ["null", "R"]}}"#))
            .collect();
        let json = format!(
            r#"{{"type": "record", "name": "R", "fields": [{}]}}"#,
            list.join(", ")
        );
        let schema = Schema::parse(json.as_bytes(), 0).unwrap();
        let p = schema.project(&["f0", "f1"]).unwrap();
        // Datums: f0 present once (then all null), f1 null; and garbage.
        let mut datum = vec![2u8];
        datum.extend(std::iter::repeat_n(0u8, fields)); // the inner R: all null
        datum.extend(std::iter::repeat_n(0u8, fields - 1)); // the outer R's other fields
        assert_eq!(agree(&schema, &p, &datum), 1);
        let mut rng = Rng::new(fields as u64);
        for _ in 0..200 {
            let mut m = datum.clone();
            let at = (rng.next_u64() % m.len() as u64) as usize;
            m[at] = (rng.next_u64() % 5) as u8;
            agree(&schema, &p, &m);
        }
    }
}

/// A list nested deeper than the walk's depth limit, under records the program inlines:
/// the step that hands the list to the walk must carry the walk's depth, so that both
/// stop with `DepthLimit` at the same byte.
#[test]
fn deep_nesting_fails_where_the_walk_fails() {
    let json = r#"{"type": "record", "name": "R", "fields": [
        {"name": "v", "type": "long"},
        {"name": "a", "type": {"type": "record", "name": "A", "fields": [
            {"name": "b", "type": {"type": "record", "name": "B", "fields": [
                {"name": "next", "type": ["null", {"type": "record", "name": "L", "fields": [
                    {"name": "w", "type": "long"},
                    {"name": "next", "type": ["null", "L"]}]}]}]}}]}}]}"#;
    let schema = Schema::parse(json.as_bytes(), 0).unwrap();
    let p = schema.project(&["v"]).unwrap();
    for depth in [0usize, 3, 10, 14, 15, 16, 17, 30, 40] {
        // v, then `depth` list nodes (branch 1, w), then null.
        let mut datum = vec![2u8];
        for _ in 0..depth {
            datum.extend([2u8, 4]);
        }
        datum.push(0);
        let (mut a, mut b) = (vec![Value::Absent; 1], vec![Value::Absent; 1]);
        let ra = schema.read(&p, &mut Cursor::new(&datum), &mut a);
        let rb = schema.read_walking(&p, &mut Cursor::new(&datum), &mut b);
        assert_eq!(ra, rb, "list of {depth}");
        assert_eq!(ra.is_err(), depth >= 15, "list of {depth}: {ra:?}");
    }
}

/// Unions with `null` in either order (`[T, "null"]` as well as `["null", T]`) of a
/// primitive, an array and a record are all stepped by the program itself, none left to the
/// walk, and read as the walk reads them, null or not, valid or mutated.
#[test]
fn null_unions_in_either_order_are_inlined() {
    let json = br#"{"type": "record", "name": "r", "fields": [
        {"name": "a", "type": ["long", "null"]},
        {"name": "b", "type": ["string", "null"]},
        {"name": "c", "type": [{"type": "array", "items": "string"}, "null"]},
        {"name": "d", "type": [{"type": "record", "name": "s", "fields": [
            {"name": "x", "type": "int"}, {"name": "y", "type": ["null", "bytes"]}]}, "null"]},
        {"name": "e", "type": ["null", "long"]}]}"#;
    let schema = Schema::parse(json, 0).unwrap();
    let p = schema.project(&["a", "b", "c", "d", "e"]).unwrap();
    assert_eq!(p.walked_steps(), Some(0));
    // a = 21, b = "hi", c = ["z"], d = {x: 3, y: b"\xff"}, e = 5; then every field null.
    let mut data = vec![
        0, 0x2a, 0, 4, b'h', b'i', 0, 2, 2, b'z', 0, 0, 6, 2, 2, 0xff, 2, 0x0a,
    ];
    data.extend([2, 2, 2, 2, 0]);
    assert_eq!(agree(&schema, &p, &data), 2);
    let mut out = vec![Value::Absent; 5];
    let mut c = Cursor::new(&data);
    schema.read(&p, &mut c, &mut out).unwrap();
    assert_eq!(out[0].as_i64(), Some(21));
    assert_eq!(out[1].as_str(), Some("hi"));
    assert!(matches!(out[2], Value::Items(_)));
    assert!(matches!(out[3], Value::Record(r) if r == [6, 2, 2, 0xff]));
    assert_eq!(out[4].as_i64(), Some(5));
    schema.read(&p, &mut c, &mut out).unwrap();
    assert!(out.iter().all(|v| *v == Value::Null), "{out:?}");
    let mut rng = Rng::new(0x4e55);
    for _ in 0..500 {
        let mut m = data.clone();
        let at = (rng.next_u64() % m.len() as u64) as usize;
        m[at] = (rng.next_u64() % 6) as u8;
        agree(&schema, &p, &m);
    }
}
