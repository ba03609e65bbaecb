//! Hostile schemas and datums for lakecore's Avro decoder: every one is refused with an error
//! of the expected kind at the expected offset (schema errors at the absolute file offset of
//! the offending JSON byte), none panics, overflows the stack or walks for long.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use lakecore::codec::avro::{
    Schema, Value, MAX_DEPTH, MAX_EMPTY_ITEMS, MAX_JSON_DEPTH, MAX_LINKS, MAX_NAMED, MAX_NODES,
};
use lakecore::cursor::Cursor;
use lakecore::paimon::manifest::{decode_entries, decode_manifest_list, Manifest};
use lakecore::{Error, ErrorKind};

/// An Avro long (ZigZag varint).
fn zz(v: i64) -> Vec<u8> {
    let mut u = ((v << 1) ^ (v >> 63)) as u64;
    let mut out = Vec::new();
    while u >= 0x80 {
        out.push((u as u8) | 0x80);
        u >>= 7;
    }
    out.push(u as u8);
    out
}

fn avro_bytes(b: &[u8]) -> Vec<u8> {
    [zz(b.len() as i64), b.to_vec()].concat()
}

/// A container with the schema `json`, the null codec, and one block of `count` objects
/// `data`; returns it with the absolute offset of the schema text.
fn container(json: &[u8], count: i64, data: &[u8]) -> (Vec<u8>, u64) {
    let mut f = b"Obj\x01".to_vec();
    f.extend(zz(2));
    f.extend(avro_bytes(b"avro.codec"));
    f.extend(avro_bytes(b"null"));
    f.extend(avro_bytes(b"avro.schema"));
    f.extend(zz(json.len() as i64));
    let at = f.len() as u64;
    f.extend_from_slice(json);
    f.push(0);
    f.extend_from_slice(&[0x5a; 16]);
    f.extend(zz(count));
    f.extend(zz(data.len() as i64));
    f.extend_from_slice(data);
    f.extend_from_slice(&[0x5a; 16]);
    (f, at)
}

/// `Schema::parse` of `json` fails with `kind` at `origin + index`, and so do the manifest
/// and manifest-list decoders on a container holding it, at the file offset of that byte.
#[track_caller]
fn schema_refused(json: &[u8], kind: ErrorKind, index: usize) {
    let origin = 1000;
    let e = Schema::parse(json, origin).unwrap_err();
    assert_eq!((e.kind, e.offset), (kind, origin + index as u64), "{e:?}");
    let (file, at) = container(json, 1, &[0]);
    let want = (kind, at + index as u64);
    let e = Manifest::parse(&file).unwrap_err();
    assert_eq!((e.kind, e.offset), want, "Manifest::parse");
    let e = decode_entries(&file).unwrap_err();
    assert_eq!((e.kind, e.offset), want, "decode_entries");
    let e = decode_manifest_list(&file).unwrap_err();
    assert_eq!((e.kind, e.offset), want, "decode_manifest_list");
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len())
        .position(|w| w == needle)
        .unwrap_or_else(|| panic!("{:?} not found", String::from_utf8_lossy(needle)))
}

/// Reads one datum with every top-level field projected and steps over it; returns both
/// results.
fn read_and_skip(
    schema: &Schema<'_>,
    datum: &[u8],
    origin: u64,
) -> (Result<(), Error>, Result<(), Error>) {
    let names: Vec<&str> = schema
        .field_names()
        .map(|n| std::str::from_utf8(n).unwrap())
        .collect();
    let p = schema.project(&names).unwrap();
    let mut out = vec![Value::Absent; names.len()];
    let mut c = Cursor::with_origin(datum, origin);
    let read = schema.read(&p, &mut c, &mut out);
    let mut c = Cursor::with_origin(datum, origin);
    let skip = schema.skip_datum(&mut c);
    (read, skip)
}

#[track_caller]
fn datum_refused(schema: &Schema<'_>, datum: &[u8], kind: ErrorKind, index: usize) {
    let origin = 5000;
    let (read, skip) = read_and_skip(schema, datum, origin);
    for (what, r) in [("read", read), ("skip", skip)] {
        let e = r.expect_err(what);
        assert_eq!(
            (e.kind, e.offset),
            (kind, origin + index as u64),
            "{what}: {e:?}"
        );
    }
}

#[test]
fn json_nesting_deeper_than_the_limit() {
    let deep = MAX_JSON_DEPTH + 1;
    let json = format!("{}{}", "[".repeat(deep), "]".repeat(deep));
    schema_refused(json.as_bytes(), ErrorKind::DepthLimit, MAX_JSON_DEPTH);
    // Inside an object, past a string full of brackets (which do not count).
    let json = format!(
        "{{\"type\": \"record\", \"name\": \"[[[[{{{{\", \"fields\": {}{}}}",
        "[".repeat(deep),
        "]".repeat(deep)
    );
    let first = find(json.as_bytes(), b"\"fields\": [") + 10;
    schema_refused(
        json.as_bytes(),
        ErrorKind::DepthLimit,
        first + MAX_JSON_DEPTH - 1,
    );
}

#[test]
fn type_nesting_deeper_than_the_limit() {
    let nest = |levels: usize| {
        format!(
            "{}\"long\"{}",
            "{\"type\": \"array\", \"items\": ".repeat(levels),
            "}".repeat(levels)
        )
    };
    // MAX_DEPTH arrays: the long is at depth MAX_DEPTH, allowed; a datum of that depth reads.
    let json = nest(MAX_DEPTH);
    let schema = Schema::parse(json.as_bytes(), 0).unwrap();
    let mut datum = zz(1).repeat(MAX_DEPTH);
    datum.extend(zz(42));
    datum.extend(vec![0; MAX_DEPTH]);
    let mut c = Cursor::new(&datum);
    schema.skip_datum(&mut c).unwrap();
    assert!(c.is_empty());
    // One more: refused at the innermost type.
    let json = nest(MAX_DEPTH + 1);
    schema_refused(
        json.as_bytes(),
        ErrorKind::DepthLimit,
        find(json.as_bytes(), b"\"long\""),
    );
    // Records in records, and {"type": {"type": ...}} wrappers.
    let mut json = String::new();
    for i in 0..=MAX_DEPTH {
        json += &format!("{{\"type\": \"record\", \"name\": \"r{i}\", \"fields\": [{{\"name\": \"f\", \"type\": ");
    }
    json += "\"int\"";
    json += &"}]}".repeat(MAX_DEPTH + 1);
    // Three brackets a level: the JSON limit comes first, at the bracket past it.
    let bracket = json
        .bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'{' || b == b'[')
        .nth(MAX_JSON_DEPTH)
        .unwrap()
        .0;
    schema_refused(json.as_bytes(), ErrorKind::DepthLimit, bracket);
    // {"type": {"type": ... {"type": "int"}}}: MAX_DEPTH + 1 objects fit, the next is refused.
    let wrap = |n: usize| format!("{}\"int\"{}", "{\"type\": ".repeat(n), "}".repeat(n));
    assert!(Schema::parse(wrap(MAX_DEPTH + 1).as_bytes(), 0).is_ok());
    schema_refused(
        wrap(MAX_DEPTH + 2).as_bytes(),
        ErrorKind::DepthLimit,
        (MAX_DEPTH + 1) * "{\"type\": ".len(),
    );
}

#[test]
fn too_many_fields_types_and_names() {
    let record = |fields: Vec<String>| {
        format!(
            "{{\"type\": \"record\", \"name\": \"r\", \"fields\": [{}]}}",
            fields.join(", ")
        )
    };
    // More fields than links: refused at the field list, before any field is compiled.
    let json = record(
        (0..=MAX_LINKS)
            .map(|i| format!("{{\"name\": \"f{i}\", \"type\": \"null\"}}"))
            .collect(),
    );
    schema_refused(
        json.as_bytes(),
        ErrorKind::LimitExceeded,
        find(json.as_bytes(), b"["),
    );
    // More types than nodes: refused at the first type past the limit (node 0 is the record).
    let json = record(
        (0..MAX_NODES)
            .map(|i| format!("{{\"name\": \"f{i}\", \"type\": \"long\"}}"))
            .collect(),
    );
    let last = format!("\"f{}\", \"type\": ", MAX_NODES - 1);
    let at = find(json.as_bytes(), last.as_bytes()) + last.len();
    schema_refused(json.as_bytes(), ErrorKind::LimitExceeded, at);
    assert!(Schema::parse(
        record(
            (0..MAX_NODES - 1)
                .map(|i| format!("{{\"name\": \"f{i}\", \"type\": \"long\"}}"))
                .collect()
        )
        .as_bytes(),
        0
    )
    .is_ok());
    // More named types than the table holds.
    let json = record(
        (0..=MAX_NAMED)
            .map(|i| {
                format!("{{\"name\": \"f{i}\", \"type\": {{\"type\": \"enum\", \"name\": \"E{i}\", \"symbols\": [\"A\"]}}}}")
            })
            .collect(),
    );
    // The record is named too: the enum that makes MAX_NAMED + 1 names is refused.
    let last = format!("{{\"type\": \"enum\", \"name\": \"E{}\"", MAX_NAMED - 1);
    let at = find(json.as_bytes(), last.as_bytes());
    schema_refused(json.as_bytes(), ErrorKind::LimitExceeded, at);
    // A union with more branches than links.
    let json = format!(
        "[{}]",
        (0..=MAX_LINKS)
            .map(|i| format!("{{\"type\": \"fixed\", \"name\": \"x{i}\", \"size\": 1}}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    schema_refused(json.as_bytes(), ErrorKind::LimitExceeded, 0);
}

#[test]
fn unknown_and_malformed_types() {
    let json = br#"{"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": "foo"}]}"#;
    schema_refused(json, ErrorKind::InvalidValue, find(json, b"\"foo\""));
    let json =
        br#"{"type": "record", "name": "r", "fields": [{"name": "b", "type": {"type": "foo"}}]}"#;
    schema_refused(
        json,
        ErrorKind::InvalidValue,
        find(json, b"{\"type\": \"foo\""),
    );
    let json = br#"["null", "long", "nope"]"#;
    schema_refused(json, ErrorKind::InvalidValue, find(json, b"\"nope\""));
    // A reference to a type defined later (or never).
    let json = br#"{"type": "record", "name": "r", "fields": [{"name": "a", "type": "E"}, {"name": "b", "type": {"type": "enum", "name": "E", "symbols": ["X"]}}]}"#;
    schema_refused(json, ErrorKind::InvalidValue, find(json, b"\"E\""));
    // A field without a type, a record without fields, an empty union, a fixed without a size.
    let json = br#"{"type": "record", "name": "r", "fields": [{"name": "a"}]}"#;
    schema_refused(
        json,
        ErrorKind::InvalidValue,
        find(json, b"{\"name\": \"a\"}"),
    );
    schema_refused(
        br#"{"type": "record", "name": "r"}"#,
        ErrorKind::InvalidValue,
        0,
    );
    schema_refused(b"[]", ErrorKind::InvalidValue, 0);
    schema_refused(
        br#"{"type": "fixed", "name": "f", "size": -1}"#,
        ErrorKind::InvalidValue,
        0,
    );
    // Broken JSON.
    schema_refused(
        br#"{"type": "record", "name": "r", "fields": [}"#,
        ErrorKind::Truncated,
        44,
    );
    schema_refused(br#""long" x"#, ErrorKind::TrailingBytes, 7);
    schema_refused(br#"{"type" "long"}"#, ErrorKind::InvalidValue, 8);
    schema_refused(b"", ErrorKind::Truncated, 0);
    schema_refused(b"\"lo\nng\"", ErrorKind::InvalidValue, 3);
}

#[test]
fn self_referential_records_stop_at_the_depth_limit() {
    // Every value of L holds another L: no datum can end; every walk stops at the limit.
    let json = br#"{"type": "record", "name": "L", "fields": [{"name": "next", "type": "L"}]}"#;
    let schema = Schema::parse(json, 0).unwrap();
    for datum in [&b""[..], &[0u8; 100], &[0xff; 4096]] {
        let (read, skip) = read_and_skip(&schema, datum, 0);
        assert_eq!(read.unwrap_err().kind, ErrorKind::DepthLimit);
        assert_eq!(skip.unwrap_err().kind, ErrorKind::DepthLimit);
    }
    assert!(!schema.datum_nonzero());
    assert_eq!(
        schema.project(&["next.next"]).unwrap_err().kind,
        ErrorKind::Duplicate
    );
    // A linked list: short lists read, lists deeper than the walk allows are refused.
    let json = br#"{"type": "record", "name": "L", "fields": [{"name": "v", "type": "long"}, {"name": "next", "type": ["null", "L"]}]}"#;
    let schema = Schema::parse(json, 0).unwrap();
    let list = |n: usize| {
        let mut d = Vec::new();
        for i in 0..n {
            d.extend(zz(i as i64));
            d.extend(zz(if i + 1 < n { 1 } else { 0 }));
        }
        d
    };
    let (read, skip) = read_and_skip(&schema, &list(MAX_DEPTH / 2), 0);
    read.unwrap();
    skip.unwrap();
    for n in [MAX_DEPTH, 100_000] {
        let (read, skip) = read_and_skip(&schema, &list(n), 0);
        assert_eq!(read.unwrap_err().kind, ErrorKind::DepthLimit);
        assert_eq!(skip.unwrap_err().kind, ErrorKind::DepthLimit);
    }
}

#[test]
fn union_and_enum_indexes_out_of_range() {
    let json = br#"{"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"}, {"name": "u", "type": ["null", "long"]}]}"#;
    let schema = Schema::parse(json, 0).unwrap();
    datum_refused(&schema, &[2, 4], ErrorKind::InvalidValue, 1); // branch 2 of 2
    datum_refused(&schema, &[2, 1], ErrorKind::InvalidValue, 1); // branch -1
    datum_refused(
        &schema,
        &[2, 0x80, 0x80, 0x80, 0x80, 0x10],
        ErrorKind::InvalidValue,
        1,
    );
    let (read, skip) = read_and_skip(&schema, &[2, 2, 6], 0);
    read.unwrap();
    skip.unwrap();
    let json = br#"{"type": "record", "name": "r", "fields": [{"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}}]}"#;
    let schema = Schema::parse(json, 0).unwrap();
    let p = schema.project(&["e"]).unwrap();
    for bad in [4u8, 1] {
        let mut out = [Value::Absent];
        let e = schema
            .read(&p, &mut Cursor::with_origin(&[bad], 9), &mut out)
            .unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::InvalidValue, 9));
    }
}

#[test]
fn counts_and_lengths_larger_than_the_data() {
    let json = br#"{"type": "record", "name": "r", "fields": [
        {"name": "a", "type": {"type": "array", "items": "long"}},
        {"name": "m", "type": {"type": "map", "values": "null"}},
        {"name": "s", "type": "string"}]}"#;
    let schema = Schema::parse(json, 0).unwrap();
    // Array count 1000 with 3 bytes left.
    datum_refused(
        &schema,
        &[&zz(1000)[..], &[2, 4, 6]].concat(),
        ErrorKind::InvalidLength,
        0,
    );
    datum_refused(&schema, &zz(i64::MAX), ErrorKind::InvalidLength, 0);
    datum_refused(&schema, &zz(i64::MIN + 1), ErrorKind::Truncated, 10);
    // A map of nulls still needs a key byte per entry.
    datum_refused(
        &schema,
        &[&[0][..], &zz(50), &[0; 10]].concat(),
        ErrorKind::InvalidLength,
        1,
    );
    // Negative count whose byte size runs past the end.
    datum_refused(
        &schema,
        &[&zz(-2)[..], &zz(1 << 40), &[0; 8]].concat(),
        ErrorKind::Truncated,
        15,
    );
    // A negative length, a string longer than the data, a varint past 64 bits.
    datum_refused(&schema, &[0, 0, 1], ErrorKind::InvalidLength, 2);
    datum_refused(&schema, &[0, 0, 20, b'a'], ErrorKind::Truncated, 4);
    datum_refused(&schema, &[0xff; 11], ErrorKind::VarintOverflow, 0);
}

#[test]
fn huge_counts_of_zero_byte_items_are_refused() {
    let json = br#"{"type": "record", "name": "r", "fields": [
        {"name": "n", "type": {"type": "array", "items": "null"}},
        {"name": "nn", "type": {"type": "array", "items": {"type": "array", "items": "null"}}}]}"#;
    let schema = Schema::parse(json, 0).unwrap();
    let full = MAX_EMPTY_ITEMS as i64;
    // One block claiming more than the limit, or 2^62.
    datum_refused(
        &schema,
        &[&zz(full + 1)[..], &[0, 0]].concat(),
        ErrorKind::InvalidLength,
        0,
    );
    datum_refused(
        &schema,
        &[&zz(1 << 62)[..], &[0, 0]].concat(),
        ErrorKind::InvalidLength,
        0,
    );
    // At the limit: fine.
    let ok = [&zz(full)[..], &[0, 0]].concat();
    let (read, skip) = read_and_skip(&schema, &ok, 0);
    read.unwrap();
    skip.unwrap();
    // Many blocks at the limit each: 4 bytes claim 65536 items, so 64 KiB of them would
    // claim a billion steps. Refused at the first block past the limit for the datum.
    let block = zz(full);
    let mut many = block.repeat(1 << 14);
    many.extend([0, 0]);
    datum_refused(&schema, &many, ErrorKind::InvalidLength, block.len());
    // Arrays of arrays of nulls: each inner array is 4 bytes claiming 65536 items.
    let inner = [&zz(full)[..], &[0]].concat();
    let mut nested = vec![0];
    nested.extend(zz(1 << 14));
    let outer_at = nested.len();
    nested.extend(inner.repeat(1 << 14));
    nested.push(0);
    datum_refused(
        &schema,
        &nested,
        ErrorKind::InvalidLength,
        outer_at + inner.len(),
    );
    // A negative-count block of 2^62 nulls in a size of 0 bytes: the walk steps over its
    // (empty) bytes, and iterating the items fails at once instead of yielding 2^62 nulls.
    let datum = [&zz(-(1 << 62))[..], &zz(0), &[0, 0]].concat();
    let p = schema.project(&["n"]).unwrap();
    let mut out = [Value::Absent];
    let mut c = Cursor::new(&datum);
    if schema.read(&p, &mut c, &mut out).is_ok() {
        let Value::Items(items) = out[0] else {
            panic!("{:?}", out[0])
        };
        let mut it = schema.items(items);
        let e = it.next().unwrap().unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidLength);
        assert!(it.next().is_none());
    }
}

#[test]
fn negative_count_blocks_must_match_their_byte_size() {
    let json = br#"{"type": "record", "name": "r", "fields": [{"name": "a", "type": {"type": "array", "items": "long"}}]}"#;
    let schema = Schema::parse(json, 0).unwrap();
    let p = schema.project(&["a"]).unwrap();
    // Two one-byte longs, but a size of 4 (two bytes of something else follow).
    let datum = [&zz(-2)[..], &zz(4), &[2, 4, 6, 8], &[0]].concat();
    let mut out = [Value::Absent];
    let mut c = Cursor::new(&datum);
    schema.read(&p, &mut c, &mut out).unwrap();
    let Value::Items(items) = out[0] else {
        panic!()
    };
    let got: Vec<_> = schema.items(items).collect();
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got[0].unwrap().as_i64(), Some(1));
    assert_eq!(got[1].unwrap().as_i64(), Some(2));
    assert_eq!(got[2].unwrap_err().kind, ErrorKind::InvalidLength);
    // Counts larger than the block: refused before reading past it.
    let datum = [&zz(-1000)[..], &zz(2), &[2, 4], &[0]].concat();
    let mut c = Cursor::new(&datum);
    schema.read(&p, &mut c, &mut out).unwrap();
    let Value::Items(items) = out[0] else {
        panic!()
    };
    let first = schema.items(items).next().unwrap();
    assert_eq!(first.unwrap_err().kind, ErrorKind::InvalidLength);
}
