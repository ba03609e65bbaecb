//! Manifest decoding allocates nothing per entry (counting global allocator): over stored
//! (codec null) blocks nothing at all; over snappy and zstandard blocks only the reused
//! decompression buffer grows, a bounded number of times per block on the first pass, and a
//! second pass with the same `Decompressor` allocates nothing. (zstd's own C allocations
//! inside its decoder context are not Rust allocations and are not counted here.)
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "paimon")]

use lakecore::paimon::compression::{Codec, Decompressor};
use lakecore::paimon::manifest::{Manifest, ManifestEntry};
use lakecore::Result;
use lakecore_testkit::counting::{measure, Allocs};
use lakecore_testkit::data::data;

fn manifest_file(rel: &str) -> Vec<u8> {
    std::fs::read(data(&format!("paimon/warehouse/sc.db/{rel}"))).unwrap()
}

/// The manifest `bytes` rewritten by apache-avro with the null codec (stored blocks),
/// flushing a block every `per_block` records.
fn stored_copy(bytes: &[u8], per_block: usize) -> Vec<u8> {
    copy_with(bytes, per_block, apache_avro::Codec::Null)
}

/// [`stored_copy`] with the codec `codec`.
fn copy_with(bytes: &[u8], per_block: usize, codec: apache_avro::Codec) -> Vec<u8> {
    let reader = apache_avro::Reader::new(bytes).unwrap();
    let schema = reader.writer_schema().clone();
    let values: Vec<_> = reader.map(|v| v.unwrap()).collect();
    // A block size past the data: blocks end where `per_block` says.
    let mut w = apache_avro::Writer::builder()
        .schema(&schema)
        .writer(Vec::new())
        .codec(codec)
        .block_size(1 << 26)
        .build();
    for (i, v) in values.into_iter().enumerate() {
        w.append(v).unwrap();
        if (i + 1) % per_block == 0 {
            w.flush().unwrap();
        }
    }
    w.into_inner().unwrap()
}

/// Everything a reader asks of an entry, folded into a checksum.
fn touch(m: &Manifest<'_>, e: &ManifestEntry<'_>) -> u64 {
    let len = |b: Option<&[u8]>| b.map_or(0, |b| b.len() as i64);
    let text = |s: Option<&str>| s.map_or(0, |s| s.len() as i64);
    let int = |v: Option<i32>| i64::from(v.unwrap_or(0));
    let long = |v: Option<i64>| v.unwrap_or(0);
    let mut acc = [
        int(e.kind()),
        len(e.partition()),
        int(e.bucket()),
        int(e.total_buckets()),
        text(e.file_name()),
        long(e.file_size()),
        long(e.row_count()),
        len(e.min_key()),
        len(e.max_key()),
        len(e.key_stats()),
        len(e.value_stats()),
        long(e.min_sequence_number()),
        long(e.max_sequence_number()),
        long(e.schema_id()),
        int(e.level()),
        long(e.creation_time()),
        long(e.delete_row_count()),
        len(e.embedded_index()),
        int(e.file_source()),
        text(e.external_path()),
        long(e.first_row_id()),
        i64::from(e.has_write_cols()),
    ]
    .iter()
    .fold(0u64, |a, &v| a.rotate_left(5) ^ v as u64);
    for s in m
        .extra_files(e)
        .chain(m.write_cols(e))
        .chain(m.value_stats_cols(e))
    {
        acc = acc.wrapping_add(s.unwrap().len() as u64);
    }
    acc
}

/// One pass over every block of `m` with `dec`: (entries, blocks, checksum).
fn pass(m: &Manifest<'_>, dec: &mut Decompressor) -> Result<(usize, usize, u64)> {
    let (mut entries, mut blocks, mut acc) = (0, 0, 0u64);
    for block in m.container().blocks() {
        blocks += 1;
        m.entries(&block?, dec, |e| {
            entries += 1;
            acc = acc.wrapping_add(touch(m, e));
            Ok(())
        })?;
    }
    Ok((entries, blocks, acc))
}

/// Two passes over `bytes` with one decompressor: what each allocated.
fn two_passes(bytes: &[u8]) -> (usize, usize, Allocs, Allocs) {
    let (m, parse) = measure(|| Manifest::parse(bytes).unwrap());
    assert_eq!(parse.calls, 0, "Manifest::parse allocated: {parse:?}");
    let mut dec = m.decompressor();
    let (first, a1) = measure(|| pass(&m, &mut dec).unwrap());
    let (second, a2) = measure(|| pass(&m, &mut dec).unwrap());
    assert_eq!(first, second);
    (first.0, first.1, a1, a2)
}

#[test]
fn stored_manifests_allocate_nothing_at_all() {
    let zstd = manifest_file("bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0");
    for per_block in [1, 7, 100, 1000] {
        let stored = stored_copy(&zstd, per_block);
        let m = Manifest::parse(&stored).unwrap();
        assert_eq!(m.codec(), Codec::Null);
        let (entries, blocks, a1, a2) = two_passes(&stored);
        assert_eq!(entries, 364);
        assert_eq!(blocks, 364usize.div_ceil(per_block));
        assert_eq!(
            a1.calls, 0,
            "first pass over {blocks} stored blocks: {a1:?}"
        );
        assert_eq!(a2.calls, 0, "second pass: {a2:?}");
    }
}

#[test]
fn compressed_manifests_allocate_per_block_at_most_and_not_again() {
    for (rel, codec) in [
        (
            "codec_snappy_rs/manifest/manifest-7cfc433b-123d-43f6-aa43-4deccc307082-0",
            Codec::Snappy,
        ),
        (
            "codec_snappy_rs/manifest/manifest-f8d56aa4-3f9a-4ba0-adc7-88f5795ac59b-0",
            Codec::Snappy,
        ),
        (
            "bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0",
            Codec::Zstandard,
        ),
        (
            "de_rs/manifest/manifest-3ac6cef4-5147-484b-b123-dec1d9288f4f-0",
            Codec::Zstandard,
        ),
    ] {
        let bytes = manifest_file(rel);
        assert_eq!(Manifest::parse(&bytes).unwrap().codec(), codec, "{rel}");
        let (entries, blocks, a1, a2) = two_passes(&bytes);
        // First pass: the buffer grows (zstd: a few reservations per block, no more).
        eprintln!("{rel}: {blocks} blocks, {entries} entries: first pass {a1:?}");
        assert!(a1.calls >= 1, "{rel}: the counter saw no buffer: {a1:?}");
        assert!(
            a1.calls <= 4 * blocks as u64 + 2,
            "{rel}: {a1:?} over {blocks} blocks, {entries} entries"
        );
        assert_eq!(
            a2.calls, 0,
            "{rel}: second pass with the same decompressor: {a2:?}"
        );
    }
}

/// Per block, not per entry: all 364 entries in one zstandard or snappy block allocate a
/// handful of times (the buffer growing), not once per entry.
#[test]
fn one_large_compressed_block_allocates_a_handful_of_times() {
    let zstd = manifest_file("bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0");
    for codec in [
        apache_avro::Codec::Snappy,
        apache_avro::Codec::Zstandard(apache_avro::ZstandardSettings::default()),
        apache_avro::Codec::Deflate(apache_avro::DeflateSettings::default()),
    ] {
        let one_block = copy_with(&zstd, 1000, codec);
        let (entries, blocks, a1, a2) = two_passes(&one_block);
        assert_eq!((entries, blocks), (364, 1), "{codec:?}");
        eprintln!("{codec:?}: one block of {entries} entries: first pass {a1:?}");
        assert!((1..=8).contains(&a1.calls), "{codec:?}: {a1:?}");
        if !matches!(codec, apache_avro::Codec::Deflate(_)) {
            assert_eq!(a2.calls, 0, "{codec:?}: second pass: {a2:?}");
        }
    }
}
