#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "paimon")]
//! Hostile counts and lengths are refused before any allocation.
//!
//! Every input here is built by hand (outside the measured region) to claim an absurd size:
//! 2^31 partitions or blocks, lengths near 2^60, a billion-cell footer, huge Thrift lists,
//! 10,000 nested Thrift structs. Each must fail with the expected error kind at the expected
//! absolute offset, and a counting global allocator (per-thread counters, so parallel tests do
//! not disturb each other) shows that the failing call allocated nothing — or, for the
//! builders that necessarily allocate (Avro schema parsing, the BLOB offsets table), only an
//! amount bounded by the input's size.

use lakecore_testkit::counting::{measure, CountingAlloc};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

use lakecore::blob::{BlobArray, BlobFile, BlobMap};
use lakecore::codec::checksum::{crc32, sha256};
use lakecore::codec::thrift::{FieldType, Reader, Writer};
use lakecore::footer::ModularFooter;
use lakecore::sidecar::{BuildSettings, ManifestFacts, Sidecar, SidecarOptions};
use lakecore::{Error, ErrorKind};

/// Runs `f`, which must fail with `kind` at `offset` and allocate nothing.
#[track_caller]
fn refused<T: std::fmt::Debug>(kind: ErrorKind, offset: u64, f: impl FnOnce() -> Result<T, Error>) {
    let (r, a) = measure(f);
    let e = r.expect_err("hostile input was accepted");
    assert_eq!((e.kind, e.offset), (kind, offset), "{e:?}");
    assert_eq!(a.calls, 0, "allocated before refusing: {a:?}");
}

#[test]
fn the_counter_sees_allocations() {
    let (v, a) = measure(|| std::hint::black_box(vec![0u8; 4096]));
    assert_eq!(v.len(), 4096);
    assert!(
        a.calls >= 1 && a.bytes >= 4096 && a.largest >= 4096,
        "{a:?}"
    );
    let (_, a) = measure(|| std::hint::black_box(1 + 1));
    assert_eq!(a.calls, 0);
}

// ---------------------------------------------------------------------------------------
// Sidecars
// ---------------------------------------------------------------------------------------

/// LEB128 (independent of the crate's encoder).
fn uvarint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The smallest valid Avro header: magic, empty metadata map, 16-byte sync.
fn avro_header() -> Vec<u8> {
    let mut h = b"Obj\x01".to_vec();
    h.push(0);
    h.extend_from_slice(&[0x5a; 16]);
    assert_eq!(h.len(), 21);
    h
}

/// Compact sidecar: `PMSC 01 | 21 | header | rest | padding | CRC`.
fn compact(rest: &[u8]) -> Vec<u8> {
    let mut b = b"PMSC".to_vec();
    uvarint(1, &mut b);
    uvarint(21, &mut b);
    b.extend_from_slice(&avro_header());
    b.extend_from_slice(rest);
    b.extend_from_slice(&[0; 8]); // room the hostile count claims to need
    let crc = crc32(&b);
    b.extend_from_slice(&crc.to_be_bytes());
    b
}

/// Offset of `rest` in [`compact`]: magic 4 + version 1 + header length 1 + header 21.
const COMPACT_REST: u64 = 27;

/// Fixed sidecar: `PMSC | 1 | manifestLength | entries | 21 | header | rest | padding | SHA`.
fn fixed(manifest_length: i64, entries: i64, rest: &[u8]) -> Vec<u8> {
    let mut b = b"PMSC".to_vec();
    b.extend_from_slice(&1i32.to_be_bytes());
    b.extend_from_slice(&manifest_length.to_be_bytes());
    b.extend_from_slice(&entries.to_be_bytes());
    b.extend_from_slice(&21i32.to_be_bytes());
    b.extend_from_slice(&avro_header());
    b.extend_from_slice(rest);
    b.extend_from_slice(&[0; 8]);
    let sum = sha256(&b);
    b.extend_from_slice(&sum);
    b
}

/// Offset of `rest` in [`fixed`]: 4 + 4 + 8 + 8 + 4 + 21.
const FIXED_REST: u64 = 49;

const FACTS: ManifestFacts = ManifestFacts {
    length: 1000,
    entries: 10,
};
/// The options that check a sidecar against [`FACTS`].
const OPTIONS: SidecarOptions = SidecarOptions { facts: Some(FACTS) };

fn varints(values: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    for &v in values {
        uvarint(v, &mut out);
    }
    out
}

#[test]
fn sidecar_compact_partition_count_of_2_pow_31() {
    // Above the i32 bound of every compact count.
    let b = compact(&varints(&[1 << 31]));
    refused(ErrorKind::OutOfBounds, COMPACT_REST, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    // Within the bound, but more than the remaining bytes can hold (13 bytes a tuple).
    let b = compact(&varints(&[(1 << 31) - 1]));
    refused(ErrorKind::InvalidLength, COMPACT_REST, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    refused(ErrorKind::InvalidLength, COMPACT_REST, || {
        Sidecar::parse(&b)
    });
}

#[test]
fn sidecar_compact_block_count_of_2_pow_31() {
    // No partitions, then the block count.
    let b = compact(&varints(&[0, 1 << 31]));
    refused(ErrorKind::OutOfBounds, COMPACT_REST + 1, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    let b = compact(&varints(&[0, (1 << 31) - 1]));
    refused(ErrorKind::InvalidLength, COMPACT_REST + 1, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
}

#[test]
fn sidecar_fixed_counts_of_2_pow_31() {
    let at = FIXED_REST;
    // 0x80000000 is a negative `int`: never a count.
    let b = fixed(1000, 10, &0x8000_0000u32.to_be_bytes());
    refused(ErrorKind::InvalidLength, at, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    let b = fixed(1000, 10, &i32::MAX.to_be_bytes());
    refused(ErrorKind::InvalidLength, at, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    // Zero partitions, then a block count of 2^31 - 1.
    let mut rest = 0i32.to_be_bytes().to_vec();
    rest.extend_from_slice(&i32::MAX.to_be_bytes());
    let b = fixed(1000, 10, &rest);
    refused(ErrorKind::InvalidLength, at + 4, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    // A fixed-layout header claiming 2^60 bytes of manifest and entries is checked against
    // the caller's facts before anything else is read.
    let b = fixed(1 << 60, 1 << 60, &[]);
    refused(ErrorKind::Mismatch, 8, || Sidecar::parse_with(&b, &OPTIONS));
}

/// One block of the fixed layout with no coverage: offset | length | recordCount | 0 0 0.
fn fixed_block(offset: i64, length: i64, records: i64) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [offset, length, records] {
        b.extend_from_slice(&v.to_be_bytes());
    }
    b.extend_from_slice(&[0, 0, 0]);
    b
}

#[test]
fn sidecar_fixed_lengths_of_2_pow_60() {
    let prefix = [0i32.to_be_bytes(), 1i32.to_be_bytes()].concat(); // 0 partitions, 1 block
    let block_at = FIXED_REST + 8;
    // offset + length past i64::MAX.
    let b = fixed(
        1000,
        10,
        &[prefix.clone(), fixed_block(21, i64::MAX - 10, 10)].concat(),
    );
    refused(ErrorKind::ArithmeticOverflow, block_at + 8, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    // A 2^60-byte block: structurally fine, but it does not tile the 1000-byte manifest.
    // The sidecar's body ends before the 8 padding bytes: trailing bytes first.
    let mut rest = [prefix.clone(), fixed_block(21, 1 << 60, 10)].concat();
    let b = fixed(1000, 10, &rest);
    let body_end = FIXED_REST + rest.len() as u64;
    refused(ErrorKind::TrailingBytes, body_end, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    // Without the padding the tiling end is compared with the manifest length.
    let mut exact = b"PMSC".to_vec();
    exact.extend_from_slice(&1i32.to_be_bytes());
    exact.extend_from_slice(&1000i64.to_be_bytes());
    exact.extend_from_slice(&10i64.to_be_bytes());
    exact.extend_from_slice(&21i32.to_be_bytes());
    exact.extend_from_slice(&avro_header());
    exact.append(&mut rest);
    let end = exact.len() as u64;
    let sum = sha256(&exact);
    exact.extend_from_slice(&sum);
    refused(ErrorKind::Mismatch, end, || {
        Sidecar::parse_with(&exact, &OPTIONS)
    });
    // A record count of 2^60 is more than the manifest's entries.
    let b = fixed(
        1000,
        10,
        &[prefix.clone(), fixed_block(21, 979, 1 << 60)].concat(),
    );
    refused(ErrorKind::InvalidLength, block_at + 16, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    // A negative `long` (2^63 as bits) is never a length.
    let b = fixed(1000, 10, &[prefix, fixed_block(21, i64::MIN, 10)].concat());
    refused(ErrorKind::InvalidLength, block_at + 8, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
}

#[test]
fn sidecar_compact_lengths_of_2_pow_60() {
    // A partition tuple length of 2^60.
    let b = compact(&varints(&[1, 1 << 60]));
    refused(ErrorKind::OutOfBounds, COMPACT_REST + 1, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    // Block: offset 21, length 2^60, 10 records, no coverage.
    let b = compact(&varints(&[0, 1, 21, 1 << 60, 10, 0, 0, 0]));
    let block_at = COMPACT_REST + 2;
    refused(ErrorKind::TrailingBytes, block_at + 1 + 9 + 1 + 3, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    // offset + length past i64::MAX.
    let b = compact(&varints(&[0, 1, 21, i64::MAX as u64, 10, 0, 0, 0]));
    refused(ErrorKind::ArithmeticOverflow, block_at + 1, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    // A record count of 2^60.
    let b = compact(&varints(&[0, 1, 21, 979, 1 << 60, 0, 0, 0]));
    refused(ErrorKind::InvalidLength, block_at + 3, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    // A coverage payload length of 2^60 (partition encoding 1).
    let b = compact(&varints(&[0, 1, 21, 979, 10, 1, 1 << 60]));
    refused(ErrorKind::OutOfBounds, block_at + 5, || {
        Sidecar::parse_with(&b, &OPTIONS)
    });
    // A varint longer than the sidecar format allows (10 bytes).
    let mut rest = varints(&[0, 1, 21]);
    rest.extend_from_slice(&[0xff; 9]);
    rest.push(0x01);
    let b = compact(&rest);
    let (r, a) = measure(|| Sidecar::parse_with(&b, &OPTIONS));
    let e = r.unwrap_err();
    assert_eq!(e.offset, block_at + 1, "{e:?}");
    assert!(
        matches!(e.kind, ErrorKind::VarintOverflow | ErrorKind::Truncated),
        "{e:?}"
    );
    assert_eq!(a.calls, 0);
}

#[test]
fn sidecar_coverage_counts_of_2_pow_31() {
    // Partition payload: count 2^31 - 1 in a 5-byte payload (one partition so IDs are legal).
    let mut tuple = 0i32.to_be_bytes().to_vec();
    tuple.extend_from_slice(&[0; 8]);
    let mut rest = varints(&[1, 12]);
    rest.extend_from_slice(&tuple);
    let block_at = COMPACT_REST + rest.len() as u64 + 1;
    let mut count = Vec::new();
    uvarint((1 << 31) - 1, &mut count);
    rest.extend_from_slice(&varints(&[1, 21, 979, 10, 1, count.len() as u64]));
    rest.extend_from_slice(&count);
    rest.extend_from_slice(&[0, 0]);
    let payload_at = block_at + 2 + 1 + 1 + 1 + 1;
    let b = compact(&rest);
    let (r, a) = measure(|| Sidecar::parse_with(&b, &OPTIONS));
    let e = r.unwrap_err();
    assert_eq!(e.offset, payload_at, "{e:?}");
    assert!(
        matches!(e.kind, ErrorKind::InvalidLength | ErrorKind::LimitExceeded),
        "{e:?}"
    );
    assert_eq!(a.calls, 0);
}

/// An Avro object container with a one-field manifest schema, the null codec and one block
/// of `object_count` objects over `data`.
fn avro_manifest(object_count: u64, data: &[u8]) -> (Vec<u8>, u64) {
    avro_manifest_with(b"null", object_count, data)
}

/// [`avro_manifest`] with the codec named `codec`.
fn avro_manifest_with(codec: &[u8], object_count: u64, data: &[u8]) -> (Vec<u8>, u64) {
    let schema = br#"{"type":"record","name":"entry","fields":[{"name":"_BUCKET","type":"int"}]}"#;
    let (f, starts) = avro_file(codec, schema, &[(object_count, data)]);
    (f, starts[0])
}

/// An Avro object container with `schema`, `codec` and one block per `(object count, data)`,
/// and the offset of each block.
fn avro_file(codec: &[u8], schema: &[u8], blocks: &[(u64, &[u8])]) -> (Vec<u8>, Vec<u64>) {
    fn long(v: i64, out: &mut Vec<u8>) {
        uvarint(((v << 1) ^ (v >> 63)) as u64, out);
    }
    fn bytes(b: &[u8], out: &mut Vec<u8>) {
        long(b.len() as i64, out);
        out.extend_from_slice(b);
    }
    let mut f = b"Obj\x01".to_vec();
    long(2, &mut f);
    bytes(b"avro.schema", &mut f);
    bytes(schema, &mut f);
    bytes(b"avro.codec", &mut f);
    bytes(codec, &mut f);
    long(0, &mut f);
    f.extend_from_slice(&[0x77; 16]);
    let mut starts = Vec::new();
    for &(object_count, data) in blocks {
        starts.push(f.len() as u64);
        long(object_count as i64, &mut f);
        bytes(data, &mut f);
        f.extend_from_slice(&[0x77; 16]);
    }
    (f, starts)
}

#[test]
fn build_from_manifest_refuses_2_pow_62_objects_before_reserving() {
    let settings = BuildSettings::default();
    // The oracle: a well-formed block of two objects builds.
    let (ok, _) = avro_manifest(2, &[0x02, 0x04]);
    lakecore::paimon::manifest::build_from_manifest(&ok, settings).unwrap();
    let (bad, block_at) = avro_manifest(1 << 62, &[0x02, 0x04]);
    let (r, a) = measure(|| lakecore::paimon::manifest::build_from_manifest(&bad, settings));
    let e = r.unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::InvalidLength, block_at));
    // Parsing the schema allocates a little; nothing proportional to the claimed count.
    assert!(a.largest < 4096 && a.bytes < 64 * 1024, "{a:?}");
    // The same through the entry decoder alone.
    let (r, a) = measure(|| lakecore::paimon::manifest::decode_entries(&bad).map(|_| ()));
    assert_eq!(r.unwrap_err().kind, ErrorKind::InvalidLength);
    assert!(a.largest < 4096 && a.bytes < 64 * 1024, "{a:?}");
}

// ---------------------------------------------------------------------------------------
// BLOB files
// ---------------------------------------------------------------------------------------

/// ZigZag + LEB128 of one index entry (independent of the crate).
fn zz(v: i64, out: &mut Vec<u8>) {
    uvarint(((v << 1) ^ (v >> 63)) as u64, out);
}

/// A BLOB file of `data` and the given raw index deltas, with a correct footer.
fn blob(data: &[u8], deltas: &[i64]) -> Vec<u8> {
    let mut f = data.to_vec();
    let mut index = Vec::new();
    for &d in deltas {
        zz(d, &mut index);
    }
    f.extend_from_slice(&index);
    f.extend_from_slice(&(index.len() as i32).to_le_bytes());
    f.push(1);
    f
}

#[test]
fn blob_index_len_near_i32_max_and_negative() {
    for index_len in [i32::MAX, i32::MIN, -1, 1 << 30] {
        let mut f = vec![0u8; 64];
        f.extend_from_slice(&index_len.to_le_bytes());
        f.push(1);
        refused(ErrorKind::InvalidLength, 64, || BlobFile::parse(&f));
    }
}

#[test]
fn blob_lengths_near_2_pow_60() {
    // One row of 2^60 bytes in a 2-byte data region.
    let f = blob(&[0, 0], &[1 << 60]);
    refused(ErrorKind::OutOfBounds, 2, || BlobFile::parse(&f));
    // Deltas whose running value passes i64::MAX: 2^62 then +2^62. The index is decoded in
    // chunks and the delta overflow is reported (at the second entry, after the first
    // entry's 10 varint bytes) before the chunk's lengths are checked against the data.
    let f = blob(&[], &[1 << 62, 1 << 62]);
    refused(ErrorKind::ArithmeticOverflow, 10, || BlobFile::parse(&f));
    // -1 (null), then a delta of i64::MAX: the entry i64::MAX - 1 runs past the data.
    let f = blob(&[], &[-1, i64::MAX]);
    refused(ErrorKind::OutOfBounds, 1, || BlobFile::parse(&f));
}

#[test]
fn blob_offsets_table_reserves_only_what_the_index_holds() {
    // A million placeholder rows (one index byte each): the table's reservation is bounded
    // by the index size, never by a claimed count.
    let rows = 1_000_000usize;
    let mut deltas = vec![0i64; rows];
    deltas[0] = -2;
    let f = blob(&[], &deltas);
    let file = BlobFile::parse(&f).unwrap();
    assert_eq!(file.rows(), rows as u64);
    let (table, a) = measure(|| file.offsets_table());
    let table = table.unwrap();
    assert_eq!(table.len(), rows);
    assert_eq!(a.calls, 1, "one exact reservation: {a:?}");
    assert!(a.bytes <= 16 * f.len() as u64, "{a:?}");
    // A file claiming billions of rows cannot get that far: its index would need billions
    // of bytes, so `new` refuses the footer (before any table exists).
    let mut f = vec![0x03u8; 16];
    f.extend_from_slice(&(3_000_000_000u32 as i32).to_le_bytes());
    f.push(1);
    refused(ErrorKind::InvalidLength, 16, || {
        BlobFile::parse(&f).and_then(|file| file.offsets_table().map(|t| t.len()))
    });
}

#[test]
fn blob_nested_counts_of_2_pow_31() {
    // ARRAY claiming i32::MAX elements with an empty index.
    let mut p = b"BCBA\x01".to_vec();
    p.extend_from_slice(&i32::MAX.to_le_bytes());
    p.extend_from_slice(&0i32.to_le_bytes());
    refused(ErrorKind::Mismatch, 9, || BlobArray::new(&p, 0));
    // A negative count.
    let mut p = b"BCBA\x01".to_vec();
    p.extend_from_slice(&i32::MIN.to_le_bytes());
    p.extend_from_slice(&0i32.to_le_bytes());
    refused(ErrorKind::InvalidLength, 5, || BlobArray::new(&p, 0));
    // Element index length near i32::MAX.
    let mut p = b"BCBA\x01".to_vec();
    p.extend_from_slice(&0i32.to_le_bytes());
    p.extend_from_slice(&i32::MAX.to_le_bytes());
    refused(ErrorKind::InvalidLength, 109, || BlobArray::new(&p, 100));
    // An element of 2^60 bytes.
    let mut p = b"BCBA\x01".to_vec();
    p.extend_from_slice(&1i32.to_le_bytes());
    let mut idx = Vec::new();
    zz(1 << 60, &mut idx);
    p.extend_from_slice(&idx);
    p.extend_from_slice(&(idx.len() as i32).to_le_bytes());
    refused(ErrorKind::OutOfBounds, 9, || BlobArray::new(&p, 0));
    // MAP claiming i32::MAX entries.
    let mut p = b"BCBM\x01".to_vec();
    p.extend_from_slice(&i32::MAX.to_le_bytes());
    p.extend_from_slice(&0i32.to_le_bytes());
    p.extend_from_slice(&0i32.to_le_bytes());
    refused(ErrorKind::Mismatch, 9, || BlobMap::new(&p, 0));
    // Key index length near i32::MAX.
    let mut p = b"BCBM\x01".to_vec();
    p.extend_from_slice(&0i32.to_le_bytes());
    p.extend_from_slice(&i32::MAX.to_le_bytes());
    p.extend_from_slice(&0i32.to_le_bytes());
    refused(ErrorKind::InvalidLength, 9, || BlobMap::new(&p, 0));
}

// ---------------------------------------------------------------------------------------
// Modular footers and Thrift
// ---------------------------------------------------------------------------------------

/// `PAR1 | root | root_len LE | PARM`; the root starts at 4.
fn footer_file(root: &[u8]) -> Vec<u8> {
    let mut f = b"PAR1".to_vec();
    f.extend_from_slice(root);
    f.extend_from_slice(&(root.len() as u32).to_le_bytes());
    f.extend_from_slice(b"PARM");
    f
}

/// A root struct: version 1, `g` row groups, `c` columns, 0 rows, no row-group sizes, no
/// modules.
fn root(g: i32, c: i32) -> Vec<u8> {
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, 1);
    w.field_i32(2, g);
    w.field_i32(3, c);
    w.field_i64(4, 0);
    w.field_list(5, FieldType::I64, 0);
    w.field_list(6, FieldType::Struct, 0);
    w.struct_end();
    w.into_bytes()
}

#[test]
fn footer_with_a_billion_cells() {
    let f = footer_file(&root(i32::MAX, i32::MAX));
    refused(ErrorKind::LimitExceeded, 4, || ModularFooter::parse(&f));
    // 65,536 x 65,536 = 2^32 chunks: still refused before anything proportional to it.
    let f = footer_file(&root(1 << 16, 1 << 16));
    refused(ErrorKind::LimitExceeded, 4, || ModularFooter::parse(&f));
    // Negative counts.
    let f = footer_file(&root(-1, 1));
    let (r, a) = measure(|| ModularFooter::parse(&f));
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidLength, "{e:?}");
    assert_eq!(a.calls, 0);
}

#[test]
fn footer_with_huge_list_sizes() {
    // Row-group sizes: a list header claiming 2^31 - 1 i64 values in a few bytes.
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, 1);
    w.field_i32(2, 1);
    w.field_i32(3, 1);
    w.field_i64(4, 0);
    w.field_list(5, FieldType::I64, i32::MAX as usize);
    let list_at = 4 + w.len() as u64;
    w.struct_end();
    let body = w.into_bytes();
    let f = footer_file(&body);
    let (r, a) = measure(|| ModularFooter::parse(&f));
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Truncated, "{e:?}");
    assert!(
        e.offset >= list_at && e.offset <= 4 + body.len() as u64,
        "{e:?}"
    );
    assert_eq!(a.calls, 0);
    // A module directory of 1,000 entries (the limit is 64).
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, 1);
    w.field_list(6, FieldType::Struct, 1000);
    let list_at = 4 + w.len() as u64 - 3; // header byte + 2-byte size varint
    for _ in 0..1000 {
        w.struct_begin();
        w.struct_end();
    }
    w.struct_end();
    let f = footer_file(&w.into_bytes());
    refused(ErrorKind::LimitExceeded, list_at, || {
        ModularFooter::parse(&f)
    });
    // A list size beyond u32 (2^40) in the raw reader.
    let mut bytes = vec![0xf6]; // list of i64, long form
    uvarint(1 << 40, &mut bytes);
    bytes.extend_from_slice(&[0; 8]);
    refused(ErrorKind::VarintOverflow, 1, || {
        Reader::new(&bytes, 0).list_header()
    });
}

/// `depth` nested structs, each the only field (id 1) of its parent, inside a top struct.
fn nested_structs(depth: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(2 * depth + 2);
    b.extend(std::iter::repeat_n(0x1c, depth)); // field 1, type struct
    b.extend(std::iter::repeat_n(0x00, depth + 1)); // STOPs
    b
}

#[test]
fn thrift_nesting_of_10_000_structs_and_lists() {
    let limit = lakecore::codec::thrift::DEFAULT_MAX_DEPTH as u64;
    // Structs: the top struct is level 1; entering level limit + 1 fails at its first byte,
    // which is after `limit` field headers.
    let b = nested_structs(10_000);
    refused(ErrorKind::DepthLimit, limit, || {
        Reader::new(&b, 0).skip_struct()
    });
    // At the limit exactly it is accepted.
    let ok = nested_structs(limit as usize - 1);
    let mut r = Reader::new(&ok, 0);
    r.skip_struct().unwrap();
    r.expect_end().unwrap();
    // Lists of lists: `19` = list of one list element.
    let mut b = vec![0x19; 10_000];
    b.push(0x09); // innermost: empty list of lists
    refused(ErrorKind::DepthLimit, limit, || {
        Reader::new(&b, 0).skip(FieldType::List)
    });
    // The same inside a footer root (an unknown field 7): refused with the file offset.
    let mut root = vec![0x15, 0x02, 0x7c]; // 1: i32 = 1, then 7: struct
    root.extend(nested_structs(10_000));
    root.push(0x00);
    let f = footer_file(&root);
    // Root = level 1 (byte 4), field 7's struct = level 2 (byte 7), level k at byte 5 + k.
    refused(ErrorKind::DepthLimit, 4 + 3 + (limit - 1), || {
        ModularFooter::parse(&f)
    });
}

/// A compact sidecar whose dictionary holds `tuples` (arity 1, 20 bytes each) and no blocks.
fn compact_dictionary(tuples: &[u64]) -> (Vec<u8>, Vec<u64>) {
    let mut b = b"PMSC".to_vec();
    uvarint(1, &mut b);
    uvarint(21, &mut b);
    b.extend_from_slice(&avro_header());
    uvarint(tuples.len() as u64, &mut b);
    let mut offsets = Vec::new();
    for &t in tuples {
        uvarint(20, &mut b);
        offsets.push(b.len() as u64);
        b.extend_from_slice(&1i32.to_be_bytes());
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&t.to_le_bytes());
    }
    uvarint(0, &mut b);
    let crc = crc32(&b);
    b.extend_from_slice(&crc.to_be_bytes());
    (b, offsets)
}

#[test]
fn sidecar_large_dictionary_duplicate_check_is_not_quadratic() {
    // Past the stack table's 512 tuples: 600 and 4,096 tuples (a filter once served these,
    // quadratic as it filled: 4.3 ms for 4,096) and 60,000 (the pairwise fallback took 3 s
    // in release for 50,000). In a hash table on the heap each is well under a millisecond.
    for n in [600u64, 4_096, 60_000] {
        let mut values: Vec<u64> = (0..n)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let (ok, _) = compact_dictionary(&values);
        let s = Sidecar::parse(&ok).unwrap();
        assert_eq!(u64::from(s.partition_count()), n);
        // Duplicates: tuple 3/4 n = tuple 7, tuple n/2 = the last tuple (a later original).
        let (third, half, last) = ((3 * n / 4) as usize, (n / 2) as usize, (n - 1) as usize);
        values[third] = values[7];
        values[half] = values[last];
        // Oracle: the lowest index whose tuple equals an earlier one (naive, on the values).
        let mut seen = std::collections::HashSet::new();
        let first_repeat = values.iter().position(|v| !seen.insert(*v)).unwrap();
        assert_eq!(first_repeat, third, "{n} tuples");
        let (dup, offsets) = compact_dictionary(&values);
        let e = Sidecar::parse(&dup).unwrap_err();
        assert_eq!(
            (e.kind, e.offset),
            (ErrorKind::Duplicate, offsets[first_repeat]),
            "{n} tuples"
        );
    }
}

#[test]
fn footer_schema_nested_10_000_groups_deep() {
    use lakecore::footer::Schema;
    // SchemaModule { 1: list<SchemaElement> }: a root and 10,000 groups each holding the
    // next, then one leaf.
    let depth = 10_000;
    let mut w = Writer::new();
    w.struct_begin();
    w.field_list(1, FieldType::Struct, depth + 2);
    for _ in 0..=depth {
        w.struct_begin();
        w.field_binary(4, b"g");
        w.field_i32(5, 1);
        w.struct_end();
    }
    w.struct_begin();
    w.field_i32(1, 2);
    w.field_binary(4, b"leaf");
    w.struct_end();
    w.struct_end();
    let bytes = w.into_bytes();
    let schema = Schema::parse(&bytes, 0, 64).unwrap(); // elements are decoded lazily
                                                        // Module header: struct field 1 (1 byte), list header (1 byte + 2-byte size); each
                                                        // element is 6 bytes (name "g", num_children 1, stop). Element k is nested k deep; the
                                                        // walk refuses the first element deeper than MAX_SCHEMA_DEPTH, at its first byte.
    let limit = lakecore::footer::MAX_SCHEMA_DEPTH as u64;
    let at = 4 + 6 * limit;
    refused(ErrorKind::DepthLimit, at, || schema.num_leaves());
    refused(ErrorKind::DepthLimit, at, || {
        schema.leaves().last().unwrap().map(|l| l.path().len())
    });
}

#[test]
fn blob_descriptor_uri_len_near_i32_max() {
    use lakecore::blob::BlobDescriptor;
    let mut d = vec![2u8];
    d.extend_from_slice(&lakecore::blob::DESCRIPTOR_MAGIC.to_le_bytes());
    d.extend_from_slice(&i32::MAX.to_le_bytes());
    d.extend_from_slice(b"s3://x");
    // The URI would need 2 GiB: truncated where the bytes end.
    let end = d.len() as u64;
    refused(ErrorKind::Truncated, end, || BlobDescriptor::decode(&d));
}

#[test]
fn blob_merge_with_more_layers_than_its_limit() {
    use lakecore::blob::{FallbackMerge, LayerFile, MergeOptions};
    let bytes = [0x01, 0x01, 0, 0, 0, 0x01]; // one NULL row
    let mut files: Vec<LayerFile> = (0..1000)
        .map(|seq| LayerFile {
            file: BlobFile::parse(&bytes).unwrap(),
            first_row_id: 0,
            max_sequence_number: seq,
        })
        .collect();
    // 1,000 layers against the default limit of 8: refused (offset = the limit), no allocation.
    let limit = lakecore::blob::DEFAULT_MAX_LAYERS as u64;
    refused(ErrorKind::LimitExceeded, limit, || {
        FallbackMerge::new(&mut files, MergeOptions::default()).map(|_| ())
    });
}

#[test]
fn avro_container_counts_and_sizes_of_2_pow_60() {
    use lakecore::codec::avro::Container;
    fn long(v: i64, out: &mut Vec<u8>) {
        uvarint(((v << 1) ^ (v >> 63)) as u64, out);
    }
    // A metadata map claiming 2^60 entries.
    let mut f = b"Obj\x01".to_vec();
    long(1 << 60, &mut f);
    f.extend_from_slice(&[0; 32]);
    refused(ErrorKind::InvalidLength, 4, || Container::parse(&f));
    // A negative count (with a block byte size) of -2^60.
    let mut f = b"Obj\x01".to_vec();
    long(-(1 << 60), &mut f);
    long(10, &mut f);
    f.extend_from_slice(&[0; 32]);
    refused(ErrorKind::InvalidLength, 4, || Container::parse(&f));
    // A block whose data size is 2^60: truncated where the bytes end, before any copy.
    let (mut f, block_at) = avro_manifest(1, &[]);
    f.truncate(block_at as usize);
    long(1, &mut f);
    long(1 << 60, &mut f);
    f.extend_from_slice(&[0; 40]);
    let end = f.len() as u64;
    let c = Container::parse(&f).unwrap();
    refused(ErrorKind::Truncated, end, || {
        c.blocks().collect::<Result<Vec<_>, _>>().map(|_| ())
    });
    let (r, a) =
        measure(|| lakecore::paimon::manifest::build_from_manifest(&f, BuildSettings::default()));
    assert_eq!(r.unwrap_err(), Error::new(ErrorKind::Truncated, end));
    assert!(a.largest < 4096 && a.bytes < 64 * 1024, "{a:?}");
}

#[test]
fn build_from_manifest_refuses_a_snappy_block_claiming_1_gib() {
    // Raw snappy: a varint of the decompressed length (2^30 here), no data, then the 4-byte
    // CRC Avro appends. Snappy expands at most ~21 times, so this cannot be valid.
    let data = [0x80, 0x80, 0x80, 0x80, 0x04, 0, 0, 0, 0];
    let (bad, block_at) = avro_manifest_with(b"snappy", 1, &data);
    let (r, a) =
        measure(|| lakecore::paimon::manifest::build_from_manifest(&bad, BuildSettings::default()));
    // Nothing near the claimed size was reserved (without the check, `apache-avro` reserved
    // the claimed 1 GiB for these 9 bytes).
    assert!(a.largest < 4096 && a.bytes < 64 * 1024, "{a:?}");
    // The block's data starts after its two one-byte varints (count 1, size 9).
    assert_eq!(
        r.unwrap_err(),
        Error::new(ErrorKind::InvalidLength, block_at + 2)
    );
}

/// A raw deflate stream (fixed Huffman codes, as RFC 1951 section 3.2.6 defines them) of one
/// zero literal followed by `copies` matches of length 258 at distance 1: `1 + 258 * copies`
/// zero bytes from ~`copies * 13 / 8` bytes.
fn deflate_zeros(copies: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut acc, mut n) = (0u64, 0u32);
    let mut put = |bits: u64, count: u32, out: &mut Vec<u8>| {
        acc |= bits << n;
        n += count;
        while n >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            n -= 8;
        }
    };
    // Huffman codes go most significant bit first: reverse them into the LSB-first stream.
    let code = |c: u64, len: u32| c.reverse_bits() >> (64 - len);
    put(0b1, 1, &mut out); // BFINAL
    put(0b01, 2, &mut out); // BTYPE = fixed Huffman
    put(code(0b0011_0000, 8), 8, &mut out); // literal 0
    for _ in 0..copies {
        put(code(0b1100_0101, 8), 8, &mut out); // length code 285 = 258
        put(code(0, 5), 5, &mut out); // distance code 0 = 1
    }
    put(code(0, 7), 7, &mut out); // end of block (256)
    put(0, 7, &mut out); // flush
    out
}

#[test]
fn deflate_zeros_is_a_valid_stream() {
    // The oracle for the generator: the codec inflates it to the promised zeros.
    let z = deflate_zeros(1000);
    let plain = miniz_oxide::inflate::decompress_to_vec(&z).unwrap();
    assert_eq!(plain.len(), 1 + 258 * 1000);
    assert!(plain.iter().all(|&b| b == 0));
}

#[test]
fn build_from_manifest_stops_a_deflate_bomb_at_the_block_limit() {
    use lakecore::paimon::manifest::MAX_BLOCK_BYTES;
    let settings = BuildSettings::default();
    // 420 KB inflating to 1 + 258 * 263,000 = 67.9 MB of zero bytes, each a valid record
    // `{_BUCKET: 0}` of the test schema: only the size limit can refuse it.
    let copies = 263_000;
    assert!(1 + 258 * copies > MAX_BLOCK_BYTES);
    let data = deflate_zeros(copies);
    let (bad, block_at) = avro_manifest_with(b"deflate", (1 + 258 * copies) as u64, &data);
    let (r, a) = measure(|| lakecore::paimon::manifest::build_from_manifest(&bad, settings));
    // Count 67,854,001 and size 420,xxx take 4 + 3 bytes of varints before the data.
    let data_at = block_at + 4 + 3;
    assert_eq!(
        r.unwrap_err(),
        Error::new(ErrorKind::LimitExceeded, data_at)
    );
    // Decompression stopped at the limit: nothing much larger than it was held.
    assert!(a.largest <= 2 * MAX_BLOCK_BYTES as u64, "{a:?}");
    // Below the limit the same construction builds (one record per zero byte).
    let copies = 2_000;
    let data = deflate_zeros(copies);
    let (ok, _) = avro_manifest_with(b"deflate", (1 + 258 * copies) as u64, &data);
    let built = lakecore::paimon::manifest::build_from_manifest(&ok, settings).unwrap();
    assert!(!built.is_empty());
}

#[test]
fn build_from_manifest_stops_a_zstandard_bomb_at_the_block_limit() {
    use lakecore::paimon::manifest::MAX_BLOCK_BYTES;
    let zeros = vec![0u8; MAX_BLOCK_BYTES + 1];
    let data = zstd::bulk::compress(&zeros, 1).unwrap();
    assert!(data.len() < 64 * 1024, "{}", data.len());
    let (bad, block_at) = avro_manifest_with(b"zstandard", zeros.len() as u64, &data);
    drop(zeros);
    let (r, a) =
        measure(|| lakecore::paimon::manifest::build_from_manifest(&bad, BuildSettings::default()));
    // Count 2^26 + 1 (4 bytes) and a size below 2^12 (2 bytes) before the data.
    assert!(data.len() < 1 << 12);
    assert_eq!(
        r.unwrap_err(),
        Error::new(ErrorKind::LimitExceeded, block_at + 4 + 2)
    );
    assert!(a.largest <= 2 * MAX_BLOCK_BYTES as u64 + 1024, "{a:?}");
}

#[test]
fn snappy_blocks_shorter_than_their_crc_or_with_a_wrong_crc_are_refused() {
    let settings = BuildSettings::default();
    // Three bytes cannot hold the 4-byte CRC Avro appends: truncated at the data's end.
    let (bad, block_at) = avro_manifest_with(b"snappy", 1, &[0x01, 0x00, 0x00]);
    assert_eq!(
        lakecore::paimon::manifest::build_from_manifest(&bad, settings).unwrap_err(),
        Error::new(ErrorKind::Truncated, block_at + 2 + 3)
    );
    // One record `{_BUCKET: 3}` (zigzag 6) in raw snappy: length 1, literal tag, the byte;
    // then its CRC-32, big-endian. The oracle: it builds; with the CRC changed it is refused
    // at the CRC.
    let mut data = vec![0x01, 0x00, 0x06];
    data.extend_from_slice(&crc32(&[0x06]).to_be_bytes());
    let (ok, _) = avro_manifest_with(b"snappy", 1, &data);
    assert!(
        !lakecore::paimon::manifest::build_from_manifest(&ok, settings)
            .unwrap()
            .is_empty()
    );
    *data.last_mut().unwrap() ^= 1;
    let (bad, block_at) = avro_manifest_with(b"snappy", 1, &data);
    assert_eq!(
        lakecore::paimon::manifest::build_from_manifest(&bad, settings).unwrap_err(),
        Error::new(ErrorKind::ChecksumMismatch, block_at + 2 + 3)
    );
}

#[test]
fn zstandard_frames_declaring_a_window_above_the_block_limit_are_refused() {
    // A zstandard frame (RFC 8878): magic, descriptor 0 (no content size, not single
    // segment), window descriptor `exponent << 3` (window 2^(10 + exponent)), then one last
    // raw block of one byte: the record `{_BUCKET: 0}`.
    let frame = |exponent: u8| vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, exponent << 3, 0x09, 0, 0, 0];
    let settings = BuildSettings::default();
    // 2^26 = MAX_BLOCK_BYTES: accepted (the oracle that the frame is well formed).
    let (ok, _) = avro_manifest_with(b"zstandard", 1, &frame(16));
    assert!(
        !lakecore::paimon::manifest::build_from_manifest(&ok, settings)
            .unwrap()
            .is_empty()
    );
    // 2^27 would make the decoder allocate a 128 MiB window for one byte of output.
    let (bad, block_at) = avro_manifest_with(b"zstandard", 1, &frame(17));
    assert_eq!(
        lakecore::paimon::manifest::build_from_manifest(&bad, settings).unwrap_err(),
        Error::new(ErrorKind::InvalidValue, block_at + 2)
    );
}

/// Bytes of the Avro `long` `v` (zigzag varint): block data starts after the count's and the
/// size's.
fn long_len(v: u64) -> u64 {
    let mut out = Vec::new();
    uvarint(v << 1, &mut out);
    out.len() as u64
}

/// xz as Python's `lzma.compress` writes it (one stream, LZMA2, CRC-64) at `preset`.
fn xz_of(plain: &[u8], preset: u32) -> Vec<u8> {
    use std::io::Write;
    let o = lzma_rust2::XzOptions::with_preset(preset);
    let mut w = lzma_rust2::XzWriter::new(Vec::new(), o).unwrap();
    w.write_all(plain).unwrap();
    w.finish().unwrap()
}

/// `n` zero bytes as Python compresses them for the codec `ext` (`bz2`, `xz`):
/// `tests/data/paimon/bombs/`, written by `make_bombs.py` (compressing 64 MiB in a debug
/// build here would take minutes).
fn python_zeros(n: usize, ext: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/data/paimon/bombs/zeros-{n}.{ext}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A bomb of `MAX_BLOCK_BYTES + 1` zero bytes (`{_BUCKET: 0}` records), compressed by
/// Python, must stop at the limit, `LimitExceeded` at the block's data, holding no more
/// than the limit at once; exactly `MAX_BLOCK_BYTES` decompresses.
fn refuses_bomb(codec: &[u8], ext: &str) {
    use lakecore::paimon::compression::{Codec, Decompressor};
    use lakecore::paimon::manifest::MAX_BLOCK_BYTES;
    let settings = BuildSettings::default();
    let n = MAX_BLOCK_BYTES + 1;
    let data = python_zeros(n, ext);
    assert!(data.len() < 64 * 1024, "{}", data.len());
    let (bad, block_at) = avro_manifest_with(codec, n as u64, &data);
    let data_at = block_at + long_len(n as u64) + long_len(data.len() as u64);
    let (r, a) = measure(|| lakecore::paimon::manifest::build_from_manifest(&bad, settings));
    assert_eq!(
        r.unwrap_err(),
        Error::new(ErrorKind::LimitExceeded, data_at)
    );
    // The output buffer grows geometrically to the limit and no further (the requests add
    // up to less than twice that, plus the last step); the decoders' own state (bzip2's
    // 3.6 MB block tables, xz's window of at most its 8 MiB dictionary) is smaller.
    let max = MAX_BLOCK_BYTES as u64;
    assert!(a.largest <= max, "{a:?}");
    assert!(a.bytes <= 3 * max, "{a:?}");
    // Exactly at the limit: decompressed in full (the oracle that such a stream is well
    // formed and that the limit is not one byte short), again within the limit.
    let data = python_zeros(MAX_BLOCK_BYTES, ext);
    let mut dec = Decompressor::new(Codec::from_name(codec, 4).unwrap());
    let (r, a) = measure(|| dec.block(&data, 0).map(|out| out.iter().all(|&b| b == 0)));
    assert_eq!(r, Ok(true));
    assert_eq!(dec.last_len(), MAX_BLOCK_BYTES);
    assert!(a.largest <= max, "{a:?}");
}

#[test]
fn build_from_manifest_stops_a_bzip2_bomb_at_the_block_limit() {
    refuses_bomb(b"bzip2", "bz2");
    // Below the limit the records build.
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    std::io::Write::write_all(&mut e, &[0; 1000]).unwrap();
    let (ok, _) = avro_manifest_with(b"bzip2", 1000, &e.finish().unwrap());
    let built = lakecore::paimon::manifest::build_from_manifest(&ok, BuildSettings::default());
    assert!(!built.unwrap().is_empty());
}

#[test]
fn build_from_manifest_stops_an_xz_bomb_at_the_block_limit() {
    refuses_bomb(b"xz", "xz");
    // Below the limit the records build.
    let (ok, _) = avro_manifest_with(b"xz", 1000, &xz_of(&[0; 1000], 6));
    let built = lakecore::paimon::manifest::build_from_manifest(&ok, BuildSettings::default());
    assert!(!built.unwrap().is_empty());
}

/// `xz` with the LZMA2 dictionary-size byte of its (first) block header set to `dict` and
/// the header's CRC-32 recomputed (xz file format 1.1.0, sections 3.1 and 5.3.1).
fn with_xz_dictionary(mut z: Vec<u8>, dict: u8) -> Vec<u8> {
    fn varint(b: &[u8], at: &mut usize) -> u64 {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let byte = b[*at];
            *at += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return v;
            }
            shift += 7;
        }
    }
    let start = 12; // after the stream header
    let size = (usize::from(z[start]) + 1) * 4;
    let flags = z[start + 1];
    assert_eq!(flags & 0x03, 0, "one filter");
    let mut at = start + 2;
    if flags & 0x40 != 0 {
        varint(&z, &mut at); // compressed size
    }
    if flags & 0x80 != 0 {
        varint(&z, &mut at); // uncompressed size
    }
    assert_eq!(varint(&z, &mut at), 0x21, "LZMA2");
    assert_eq!(varint(&z, &mut at), 1, "one property byte");
    z[at] = dict;
    let crc = crc32(&z[start..start + size - 4]);
    z[start + size - 4..start + size].copy_from_slice(&crc.to_le_bytes());
    z
}

#[test]
fn xz_dictionaries_above_the_block_limit_are_refused_and_the_window_follows_the_output() {
    // Ten `{_BUCKET: 0}` records, xz at preset 1 (1 MiB dictionary).
    let settings = BuildSettings::default();
    let z = xz_of(&[0u8; 10], 1);
    // Dictionary byte d stands for (2 | (d & 1)) << (d / 2 + 11) bytes: 28 is 64 MiB (xz -9,
    // = MAX_BLOCK_BYTES), 29 is 96 MiB, 40 is 4 GiB - 1.
    let (ok, _) = avro_manifest_with(b"xz", 10, &with_xz_dictionary(z.clone(), 28));
    let (r, a) = measure(|| lakecore::paimon::manifest::build_from_manifest(&ok, settings));
    assert!(!r.unwrap().is_empty());
    // The 64 MiB window is not allocated for ten bytes of output.
    assert!(a.largest <= 1 << 20, "{a:?}");
    for dict in [29, 40] {
        let data = with_xz_dictionary(z.clone(), dict);
        let (bad, block_at) = avro_manifest_with(b"xz", 10, &data);
        let (r, a) = measure(|| lakecore::paimon::manifest::build_from_manifest(&bad, settings));
        assert_eq!(
            r.unwrap_err(),
            Error::new(
                ErrorKind::InvalidValue,
                block_at + 1 + long_len(data.len() as u64)
            ),
            "dictionary byte {dict}"
        );
        assert!(a.largest <= 1 << 20, "{a:?}");
    }
}

#[test]
fn build_from_manifest_stops_at_the_file_limit_of_decompressed_bytes() {
    use lakecore::paimon::manifest::{MAX_BLOCK_BYTES, MAX_DECODED_BYTES};
    // Each block: one record `{_BUCKET: 0, pad: <63 MiB of zeros>}`, zstandard-compressed
    // to a few KB. 16 such blocks stay below the 1 GiB file limit, the 17th crosses it.
    let schema = br#"{"type":"record","name":"entry","fields":[{"name":"_BUCKET","type":"int"},{"name":"pad","type":"bytes"}]}"#;
    let pad = 63usize << 20;
    let mut record = vec![0x00];
    uvarint((pad as u64) << 1, &mut record);
    record.resize(record.len() + pad, 0);
    assert!(record.len() <= MAX_BLOCK_BYTES);
    assert!(16 * record.len() <= MAX_DECODED_BYTES && 17 * record.len() > MAX_DECODED_BYTES);
    let block = zstd::bulk::compress(&record, 1).unwrap();
    drop(record);
    let settings = BuildSettings::default();
    let (ok, _) = avro_file(b"zstandard", schema, &[(1, &block[..]); 16]);
    let built = lakecore::paimon::manifest::build_from_manifest(&ok, settings).unwrap();
    assert!(!built.is_empty());
    let (bad, starts) = avro_file(b"zstandard", schema, &[(1, &block[..]); 17]);
    // The 17th block's data follows its count (1 byte) and size (2 bytes) varints.
    assert!(block.len() >= 64 && block.len() < 8192, "{}", block.len());
    assert_eq!(
        lakecore::paimon::manifest::build_from_manifest(&bad, settings).unwrap_err(),
        Error::new(ErrorKind::LimitExceeded, starts[16] + 1 + 2)
    );
}
