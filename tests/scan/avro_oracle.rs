//! lakecore's Avro decoder against `apache-avro` on every real manifest and manifest list
//! of the test warehouse: `Manifest::entries` (every accessor), `decode_entries`,
//! `decode_manifest_list`, and a generic walk that projects every top-level field and every
//! nested `_FILE.*` / stats field by name. Every value must equal what `apache-avro` decodes.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use apache_avro::types::Value as AV;
use apache_avro::Schema as AS;
use lakecore::codec::avro::{Container, Schema, Value};
use lakecore::cursor::Cursor;
use lakecore::paimon::compression::{Codec, Decompressor};
use lakecore::paimon::manifest::{
    decode_entries, decode_manifest_list, Manifest, ManifestEntry, RowStats,
};
use std::path::{Path, PathBuf};

const WAREHOUSE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse");

/// Every Avro object container under the warehouse (found by its magic), sorted.
pub fn avro_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                if name != "snapshot" && name != "schema" {
                    walk(&path, out);
                }
                continue;
            }
            let skip = [".sidecar", ".json", ".parquet", ".blob"];
            if skip.iter().any(|s| name.ends_with(s)) {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            if bytes.starts_with(b"Obj\x01") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(Path::new(WAREHOUSE), &mut out);
    out.sort();
    out
}

fn is_list(path: &Path) -> bool {
    path.file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("manifest-list-")
}

/// The file's records as `apache-avro` decodes them, with its writer schema.
pub fn apache_read(bytes: &[u8]) -> (AS, Vec<AV>) {
    let reader = apache_avro::Reader::new(bytes).unwrap();
    let schema = reader.writer_schema().clone();
    let values = reader.map(|v| v.unwrap()).collect();
    (schema, values)
}

/// The value inside any unions, with the schema of the branch it took.
fn branch<'a>(v: &'a AV, s: &'a AS) -> (&'a AV, &'a AS) {
    match (v, s) {
        (AV::Union(i, inner), AS::Union(u)) => branch(inner, &u.variants()[*i as usize]),
        (AV::Union(_, _), other) => panic!("union value for schema {other:?}"),
        _ => (v, s),
    }
}

/// Field `name` of a record value (through unions) with its schema; `None` when the record
/// schema has no such field or the value is null.
fn field<'a>(v: &'a AV, s: &'a AS, name: &str) -> Option<(&'a AV, &'a AS)> {
    let (v, s) = branch(v, s);
    let (AV::Record(fields), AS::Record(rs)) = (v, s) else {
        return None;
    };
    let i = rs.fields.iter().position(|f| f.name == name)?;
    assert_eq!(fields[i].0, name);
    Some(branch(&fields[i].1, &rs.fields[i].schema))
}

/// The value at a dotted `path` (record fields through unions), as lakecore's projection
/// defines it: `None` (Absent) when a step is missing or not a record.
fn at_path<'a>(v: &'a AV, s: &'a AS, path: &str) -> Option<(&'a AV, &'a AS)> {
    let mut cur = (v, s);
    for part in path.split('.') {
        cur = field(cur.0, cur.1, part)?;
    }
    Some(cur)
}

/// Asserts that lakecore's `lv` (read with `schema`) equals `apache-avro`'s `av` of schema
/// `asch`: scalars by value, arrays item by item, records by their exact encoding.
pub fn assert_same(schema: &Schema<'_>, lv: Value<'_>, av: &AV, asch: &AS, what: &str) {
    let (av, asch) = branch(av, asch);
    match (lv, av) {
        (Value::Null, AV::Null) => {}
        (Value::Boolean(a), AV::Boolean(b)) => assert_eq!(a, *b, "{what}"),
        (Value::Long(a), AV::Int(b) | AV::Date(b) | AV::TimeMillis(b)) => {
            assert_eq!(a, i64::from(*b), "{what}")
        }
        (
            Value::Long(a),
            AV::Long(b)
            | AV::TimeMicros(b)
            | AV::TimestampMillis(b)
            | AV::TimestampMicros(b)
            | AV::TimestampNanos(b)
            | AV::LocalTimestampMillis(b)
            | AV::LocalTimestampMicros(b)
            | AV::LocalTimestampNanos(b),
        ) => assert_eq!(a, *b, "{what}"),
        (Value::Float(a), AV::Float(b)) => assert_eq!(a.to_bits(), b.to_bits(), "{what}"),
        (Value::Double(a), AV::Double(b)) => assert_eq!(a.to_bits(), b.to_bits(), "{what}"),
        (Value::Bytes(a), AV::Bytes(b) | AV::Fixed(_, b)) => assert_eq!(a, &b[..], "{what}"),
        (Value::Str(a), AV::String(b)) => assert_eq!(a, b.as_bytes(), "{what}"),
        (Value::Enum(a), AV::Enum(b, _)) => assert_eq!(a, *b, "{what}"),
        (Value::Items(items), AV::Array(expected)) => {
            let AS::Array(a) = asch else {
                panic!("{what}: array value for {asch:?}")
            };
            let got: Vec<Value<'_>> = schema
                .items(items)
                .collect::<Result<_, _>>()
                .unwrap_or_else(|e| panic!("{what}: items: {e:?}"));
            assert_eq!(got.len(), expected.len(), "{what}: item count");
            for (i, (g, e)) in got.iter().zip(expected).enumerate() {
                assert_same(schema, *g, e, &a.items, &format!("{what}[{i}]"));
            }
        }
        (Value::Record(bytes), AV::Record(_)) => {
            let encoded = apache_avro::to_avro_datum(asch, av.clone()).unwrap();
            assert_eq!(bytes, &encoded[..], "{what}: record encoding");
        }
        (l, a) => panic!("{what}: lakecore {l:?} vs apache-avro {a:?}"),
    }
}

/// `Some(integer)` of an int/long/timestamp value, `None` for null.
fn opt_i64(v: Option<(&AV, &AS)>) -> Option<i64> {
    match v?.0 {
        AV::Null => None,
        AV::Int(x) => Some(i64::from(*x)),
        AV::Long(x) | AV::TimestampMillis(x) => Some(*x),
        other => panic!("not an integer: {other:?}"),
    }
}

fn opt_i32(v: Option<(&AV, &AS)>) -> Option<i32> {
    opt_i64(v).map(|x| i32::try_from(x).unwrap())
}

fn opt_bytes(v: Option<(&AV, &AS)>) -> Option<Vec<u8>> {
    match v?.0 {
        AV::Null => None,
        AV::Bytes(b) => Some(b.clone()),
        AV::String(s) => Some(s.as_bytes().to_vec()),
        other => panic!("not bytes: {other:?}"),
    }
}

fn opt_string(v: Option<(&AV, &AS)>) -> Option<String> {
    opt_bytes(v).map(|b| String::from_utf8(b).unwrap())
}

fn strings(v: Option<(&AV, &AS)>) -> Vec<String> {
    match v.map(|v| v.0) {
        None | Some(AV::Null) => Vec::new(),
        Some(AV::Array(items)) => items
            .iter()
            .map(|s| match s {
                AV::String(s) => s.clone(),
                other => panic!("not a string: {other:?}"),
            })
            .collect(),
        Some(other) => panic!("not an array: {other:?}"),
    }
}

/// The exact encoding of a stats record (`None` when null or absent).
fn record_encoding(v: Option<(&AV, &AS)>) -> Option<Vec<u8>> {
    let (v, s) = v?;
    match v {
        AV::Null => None,
        AV::Record(_) => Some(apache_avro::to_avro_datum(s, v.clone()).unwrap()),
        other => panic!("not a record: {other:?}"),
    }
}

fn row_stats(v: Option<(&AV, &AS)>) -> Option<RowStats> {
    let (rv, rs) = v?;
    if matches!(rv, AV::Null) {
        return None;
    }
    let null_counts = match field(rv, rs, "_NULL_COUNTS").map(|v| v.0) {
        None | Some(AV::Null) => Vec::new(),
        Some(AV::Array(items)) => items
            .iter()
            .map(|n| match n {
                AV::Union(_, b) => match &**b {
                    AV::Null => None,
                    AV::Long(x) => Some(*x),
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            })
            .collect(),
        Some(other) => panic!("{other:?}"),
    };
    Some(RowStats {
        min: opt_bytes(field(rv, rs, "_MIN_VALUES")).unwrap(),
        max: opt_bytes(field(rv, rs, "_MAX_VALUES")).unwrap(),
        null_counts,
    })
}

/// Every accessor of one entry against the record `apache-avro` decoded.
fn check_entry(m: &Manifest<'_>, e: &ManifestEntry<'_>, rec: &AV, s: &AS, what: &str) {
    let top = |n: &str| field(rec, s, n);
    let file = |n: &str| at_path(rec, s, &format!("_FILE.{n}"));
    assert_eq!(e.kind(), opt_i32(top("_KIND")), "{what} kind");
    assert_eq!(
        e.partition().map(<[u8]>::to_vec),
        opt_bytes(top("_PARTITION")),
        "{what} partition"
    );
    assert_eq!(e.bucket(), opt_i32(top("_BUCKET")), "{what} bucket");
    assert_eq!(
        e.total_buckets(),
        opt_i32(top("_TOTAL_BUCKETS")),
        "{what} total buckets"
    );
    assert_eq!(
        e.file_name().map(String::from),
        opt_string(file("_FILE_NAME")),
        "{what} file name"
    );
    assert_eq!(e.file_size(), opt_i64(file("_FILE_SIZE")), "{what}");
    assert_eq!(e.row_count(), opt_i64(file("_ROW_COUNT")), "{what}");
    assert_eq!(
        e.min_key().map(<[u8]>::to_vec),
        opt_bytes(file("_MIN_KEY")),
        "{what}"
    );
    assert_eq!(
        e.max_key().map(<[u8]>::to_vec),
        opt_bytes(file("_MAX_KEY")),
        "{what}"
    );
    assert_eq!(
        e.key_stats().map(<[u8]>::to_vec),
        record_encoding(file("_KEY_STATS")),
        "{what} key stats"
    );
    assert_eq!(
        e.value_stats().map(<[u8]>::to_vec),
        record_encoding(file("_VALUE_STATS")),
        "{what} value stats"
    );
    assert_eq!(
        e.min_sequence_number(),
        opt_i64(file("_MIN_SEQUENCE_NUMBER")),
        "{what}"
    );
    assert_eq!(
        e.max_sequence_number(),
        opt_i64(file("_MAX_SEQUENCE_NUMBER")),
        "{what}"
    );
    assert_eq!(e.schema_id(), opt_i64(file("_SCHEMA_ID")), "{what}");
    assert_eq!(e.level(), opt_i32(file("_LEVEL")), "{what}");
    assert_eq!(e.creation_time(), opt_i64(file("_CREATION_TIME")), "{what}");
    assert_eq!(
        e.delete_row_count(),
        opt_i64(file("_DELETE_ROW_COUNT")),
        "{what}"
    );
    assert_eq!(
        e.embedded_index().map(<[u8]>::to_vec),
        opt_bytes(file("_EMBEDDED_FILE_INDEX")),
        "{what}"
    );
    assert_eq!(e.file_source(), opt_i32(file("_FILE_SOURCE")), "{what}");
    assert_eq!(
        e.external_path().map(String::from),
        opt_string(file("_EXTERNAL_PATH")),
        "{what}"
    );
    assert_eq!(e.first_row_id(), opt_i64(file("_FIRST_ROW_ID")), "{what}");
    assert_eq!(
        e.has_write_cols(),
        matches!(file("_WRITE_COLS"), Some((AV::Array(_), _))),
        "{what}"
    );
    let got = |it: lakecore::paimon::manifest::Strings<'_, '_>| -> Vec<String> {
        it.map(|s| s.unwrap().to_string()).collect()
    };
    assert_eq!(
        got(m.extra_files(e)),
        strings(file("_EXTRA_FILES")),
        "{what} extra files"
    );
    assert_eq!(
        got(m.write_cols(e)),
        strings(file("_WRITE_COLS")),
        "{what} write cols"
    );
    assert_eq!(
        got(m.value_stats_cols(e)),
        strings(file("_VALUE_STATS_COLS")),
        "{what} value stats cols"
    );
}

/// The records of a container decoded with lakecore's generic reader: each projection of
/// `projections` is applied to every record, the values handed to `f` with the record's
/// ordinal.
fn walk(bytes: &[u8], paths: &[&str], mut f: impl FnMut(usize, &Schema<'_>, &[Value<'_>])) {
    let container = Container::parse(bytes).unwrap();
    let json = container.metadata("avro.schema").unwrap();
    let schema = Schema::parse(json, 0).unwrap();
    let projection = schema.project(paths).unwrap();
    let mut dec = Decompressor::new(Codec::from_name(container.codec(), 0).unwrap());
    let mut n = 0;
    for block in container.blocks() {
        let block = block.unwrap();
        let data = dec.block(block.data, block.data_offset).unwrap();
        let mut out = vec![Value::Absent; paths.len()];
        let mut c = Cursor::new(data);
        for _ in 0..block.object_count {
            let start = c.position();
            schema.read(&projection, &mut c, &mut out).unwrap();
            // Stepping over the same datum consumes exactly the same bytes.
            let mut s = Cursor::new(data);
            s.skip(usize::try_from(start).unwrap()).unwrap();
            schema.skip_datum(&mut s).unwrap();
            assert_eq!(s.position(), c.position());
            f(n, &schema, &out);
            n += 1;
        }
        assert!(c.is_empty(), "bytes after the last record of a block");
    }
}

/// Every field name of the record type at `path` (empty: the top level) of the schema.
fn names_at(s: &AS, path: &[&str]) -> Vec<String> {
    let mut s = s;
    for part in path {
        s = record_branch(s)
            .fields
            .iter()
            .find(|f| f.name == *part)
            .map(|f| &f.schema)
            .unwrap();
    }
    record_branch(s)
        .fields
        .iter()
        .map(|f| f.name.clone())
        .collect()
}

fn record_branch(s: &AS) -> &apache_avro::schema::RecordSchema {
    match s {
        AS::Record(r) => r,
        AS::Union(u) => u
            .variants()
            .iter()
            .find_map(|v| match v {
                AS::Record(r) => Some(r),
                _ => None,
            })
            .unwrap(),
        other => panic!("not a record: {other:?}"),
    }
}

/// Projects `paths` (plus names the writer never wrote) over every record and compares each
/// value with `apache-avro`'s.
fn generic_walk(bytes: &[u8], s: &AS, records: &[AV], paths: &[String], what: &str) {
    let mut all: Vec<&str> = paths.iter().map(String::as_str).collect();
    all.extend(["_NO_SUCH_FIELD", "_FILE._NO_SUCH_FIELD", "_VERSION.x"]);
    let mut seen = 0;
    walk(bytes, &all, |n, schema, values| {
        seen += 1;
        for (path, v) in all.iter().zip(values) {
            let what = format!("{what} record {n} {path}");
            match at_path(&records[n], s, path) {
                None => assert_eq!(*v, Value::Absent, "{what}"),
                Some((av, asch)) => assert_same(schema, *v, av, asch, &what),
            }
        }
    });
    assert_eq!(seen, records.len(), "{what}: record count");
}

#[test]
fn the_warehouse_has_manifests_and_lists_of_each_codec() {
    let files = avro_files();
    let lists = files.iter().filter(|p| is_list(p)).count();
    assert_eq!((files.len(), lists), (147, 98));
    let mut codecs: Vec<String> = files
        .iter()
        .map(|p| {
            let bytes = std::fs::read(p).unwrap();
            String::from_utf8(Container::parse(&bytes).unwrap().codec().to_vec()).unwrap()
        })
        .collect();
    codecs.sort();
    codecs.dedup();
    assert_eq!(
        codecs,
        ["bzip2", "deflate", "null", "snappy", "xz", "zstandard"]
    );
}

#[test]
fn manifests_match_apache_avro() {
    let mut entries = 0;
    for path in avro_files().into_iter().filter(|p| !is_list(p)) {
        let what = path.strip_prefix(WAREHOUSE).unwrap().display().to_string();
        let bytes = std::fs::read(&path).unwrap();
        let (s, records) = apache_read(&bytes);
        assert!(!records.is_empty(), "{what}");

        // Manifest::entries, every accessor.
        let m = Manifest::parse(&bytes).unwrap();
        let mut dec = m.decompressor();
        let mut n = 0;
        for block in m.container().blocks() {
            m.entries(&block.unwrap(), &mut dec, |e| {
                check_entry(&m, e, &records[n], &s, &format!("{what} entry {n}"));
                n += 1;
                Ok(())
            })
            .unwrap();
        }
        assert_eq!(n, records.len(), "{what}");
        entries += n;

        // decode_entries.
        let (_, blocks, decoded) = decode_entries(&bytes).unwrap();
        assert_eq!(decoded.len(), records.len(), "{what}");
        let counts: u64 = blocks.iter().map(|b| b.object_count).sum();
        assert_eq!(counts, records.len() as u64);
        for (i, (d, rec)) in decoded.iter().zip(&records).enumerate() {
            let what = format!("{what} decoded {i}");
            assert_eq!(d.kind, opt_i32(field(rec, &s, "_KIND")), "{what}");
            assert_eq!(
                d.partition,
                opt_bytes(field(rec, &s, "_PARTITION")),
                "{what}"
            );
            assert_eq!(d.bucket, opt_i32(field(rec, &s, "_BUCKET")), "{what}");
            assert_eq!(
                d.total_buckets,
                opt_i32(field(rec, &s, "_TOTAL_BUCKETS")),
                "{what}"
            );
            assert_eq!(
                d.file_name,
                opt_string(at_path(rec, &s, "_FILE._FILE_NAME")),
                "{what}"
            );
            assert_eq!(
                d.first_row_id,
                opt_i64(at_path(rec, &s, "_FILE._FIRST_ROW_ID")),
                "{what}"
            );
            assert_eq!(
                d.row_count,
                opt_i64(at_path(rec, &s, "_FILE._ROW_COUNT")),
                "{what}"
            );
            assert!(d.block < blocks.len());
        }

        // The generic walk: every top-level field; every `_FILE` field; every field of
        // both stats records (separate projections: a path and its prefix are not read
        // together).
        let top = names_at(&s, &[]);
        generic_walk(&bytes, &s, &records, &top, &what);
        let file: Vec<String> = names_at(&s, &["_FILE"])
            .iter()
            .map(|n| format!("_FILE.{n}"))
            .collect();
        assert!(file.len() >= 15, "{what}: {file:?}");
        generic_walk(&bytes, &s, &records, &file, &what);
        let mut stats = Vec::new();
        for st in ["_KEY_STATS", "_VALUE_STATS"] {
            for n in names_at(&s, &["_FILE", st]) {
                stats.push(format!("_FILE.{st}.{n}"));
            }
        }
        assert_eq!(stats.len(), 6, "{what}");
        generic_walk(&bytes, &s, &records, &stats, &what);
    }
    assert!(entries > 1000, "{entries}");
}

#[test]
fn manifest_lists_match_apache_avro() {
    let mut metas = 0;
    for path in avro_files().into_iter().filter(|p| is_list(p)) {
        let what = path.strip_prefix(WAREHOUSE).unwrap().display().to_string();
        let bytes = std::fs::read(&path).unwrap();
        let (s, records) = apache_read(&bytes);
        let list = decode_manifest_list(&bytes).unwrap();
        assert_eq!(list.len(), records.len(), "{what}");
        metas += list.len();
        for (i, (m, rec)) in list.iter().zip(&records).enumerate() {
            let what = format!("{what} record {i}");
            let f = |n: &str| field(rec, &s, n);
            assert_eq!(
                Some(m.file_name.clone()),
                opt_string(f("_FILE_NAME")),
                "{what}"
            );
            assert_eq!(Some(m.file_size), opt_i64(f("_FILE_SIZE")), "{what}");
            assert_eq!(
                Some(m.num_added_files),
                opt_i64(f("_NUM_ADDED_FILES")),
                "{what}"
            );
            assert_eq!(
                Some(m.num_deleted_files),
                opt_i64(f("_NUM_DELETED_FILES")),
                "{what}"
            );
            assert_eq!(
                m.partition_stats,
                row_stats(f("_PARTITION_STATS")),
                "{what}"
            );
            assert_eq!(m.schema_id, opt_i64(f("_SCHEMA_ID")), "{what}");
            let pair32 = |a: &str, b: &str| opt_i32(f(a)).zip(opt_i32(f(b)));
            assert_eq!(
                m.bucket_range,
                pair32("_MIN_BUCKET", "_MAX_BUCKET"),
                "{what}"
            );
            assert_eq!(m.level_range, pair32("_MIN_LEVEL", "_MAX_LEVEL"), "{what}");
            assert_eq!(
                m.row_id_range,
                opt_i64(f("_MIN_ROW_ID")).zip(opt_i64(f("_MAX_ROW_ID"))),
                "{what}"
            );
            assert_eq!(m.total_buckets, opt_i32(f("_TOTAL_BUCKETS")), "{what}");
            assert_eq!(m.extra_files, strings(f("_EXTRA_FILES")), "{what}");
        }
        let top = names_at(&s, &[]);
        generic_walk(&bytes, &s, &records, &top, &what);
        let stats: Vec<String> = names_at(&s, &["_PARTITION_STATS"])
            .iter()
            .map(|n| format!("_PARTITION_STATS.{n}"))
            .collect();
        generic_walk(&bytes, &s, &records, &stats, &what);
    }
    assert!(metas > 50, "{metas}");
}

/// The null counts of `_NULL_COUNTS` (items `["null", "long"]`) come back item by item,
/// nulls included, equal to apache-avro's in every stats record of every manifest.
#[test]
fn stats_null_counts_match_apache_avro() {
    let mut items = 0;
    for path in avro_files().into_iter().filter(|p| !is_list(p)) {
        let bytes = std::fs::read(&path).unwrap();
        let (s, records) = apache_read(&bytes);
        let paths = [
            "_FILE._KEY_STATS._NULL_COUNTS",
            "_FILE._VALUE_STATS._NULL_COUNTS",
        ];
        walk(&bytes, &paths, |n, schema, values| {
            for (path, v) in paths.iter().zip(values) {
                let expected = match at_path(&records[n], &s, path).map(|v| v.0) {
                    Some(AV::Array(a)) => a
                        .iter()
                        .map(|x| match x {
                            AV::Union(_, b) => match &**b {
                                AV::Long(x) => Some(*x),
                                _ => None,
                            },
                            other => panic!("{other:?}"),
                        })
                        .collect::<Vec<_>>(),
                    _ => {
                        assert!(v.is_null(), "{path}: {v:?}");
                        continue;
                    }
                };
                let Value::Items(it) = v else {
                    panic!("{path}: {v:?}")
                };
                let got: Vec<Option<i64>> =
                    schema.items(*it).map(|x| x.unwrap().as_i64()).collect();
                items += got.len();
                assert_eq!(got, expected, "{path}");
            }
        });
    }
    assert!(items > 100, "{items}");
}
