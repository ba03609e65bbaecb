//! The I/O layer: read fallback rules, `_EXTRA_FILES` lookup, cache bounds, coalesced span
//! reads producing a valid Avro file, mapping.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "paimon")]

use lakecore::io::{coalesce, map_file, read_spans, span_slices, ByteCache as SidecarCache};
use lakecore::paimon::manifest::decode_entries;
use lakecore::paimon::sidecar::{read_sidecar, read_sidecar_with, NoSidecar};
use lakecore::sidecar::{
    ManifestFacts, Query, RowRange, RowRanges, SelectedBlock, Sidecar, SidecarOptions,
};
use lakecore_testkit::data::data;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const DIR: &str = "paimon/warehouse/sc.db/de_rs/manifest";
const NAME: &str = "manifest-c5c04dad-eb69-480a-ae2d-b899f2d43363-0";

fn dir() -> PathBuf {
    PathBuf::from(data(DIR))
}

fn facts() -> ManifestFacts {
    let len = std::fs::metadata(dir().join(NAME)).unwrap().len();
    ManifestFacts {
        length: len,
        entries: 250,
    }
}

fn extra() -> Vec<String> {
    vec!["some.index".into(), format!("{NAME}.avro.sidecar")]
}

fn tmpdir(tag: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("lakecore-sidecar-io-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&p).unwrap();
    p
}

#[test]
fn read_follows_the_fallback_rules() {
    let ok = read_sidecar(&dir(), &extra(), facts(), true, None)
        .unwrap()
        .unwrap();
    assert_eq!(ok.view().unwrap().block_count(), 5);
    assert!(matches!(
        read_sidecar(&dir(), &extra(), facts(), false, None).unwrap(),
        Err(NoSidecar::Disabled)
    ));
    let none: [&str; 1] = ["data.parquet"];
    assert!(matches!(
        read_sidecar(&dir(), &none, facts(), true, None).unwrap(),
        Err(NoSidecar::Absent)
    ));
    let missing = ["missing.avro.sidecar"];
    assert!(matches!(
        read_sidecar(&dir(), &missing, facts(), true, None).unwrap(),
        Err(NoSidecar::Io(_))
    ));
    let wrong = ManifestFacts {
        length: 1,
        entries: 250,
    };
    assert!(matches!(
        read_sidecar(&dir(), &extra(), wrong, true, None).unwrap(),
        Err(NoSidecar::Invalid(_))
    ));
    // A corrupted copy is invalid -> no selection.
    let t = tmpdir("corrupt");
    let mut bytes = std::fs::read(dir().join(format!("{NAME}.avro.sidecar"))).unwrap();
    bytes[100] ^= 0x40;
    std::fs::write(t.join(format!("{NAME}.avro.sidecar")), &bytes).unwrap();
    assert!(matches!(
        read_sidecar(&t, &extra(), facts(), true, None).unwrap(),
        Err(NoSidecar::Invalid(_))
    ));
    // Interrupted is an error, not a fallback.
    let interrupted =
        |_: &Path| -> io::Result<Vec<u8>> { Err(io::Error::from(io::ErrorKind::Interrupted)) };
    let e = read_sidecar_with(&dir(), &extra(), facts(), true, None, interrupted).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::Interrupted);
    std::fs::remove_dir_all(&t).unwrap();
}

#[test]
fn cache_holds_only_successful_reads_and_serves_them() {
    let cache = SidecarCache::new(1 << 20);
    let t = tmpdir("cache");
    let src = std::fs::read(dir().join(format!("{NAME}.avro.sidecar"))).unwrap();
    let path = t.join(format!("{NAME}.avro.sidecar"));
    let mut bad = src.clone();
    bad[50] ^= 1;
    std::fs::write(&path, &bad).unwrap();
    assert!(read_sidecar(&t, &extra(), facts(), true, Some(&cache))
        .unwrap()
        .is_err());
    assert!(cache.is_empty(), "failed reads are not cached");
    std::fs::write(&path, &src).unwrap();
    assert!(read_sidecar(&t, &extra(), facts(), true, Some(&cache))
        .unwrap()
        .is_ok());
    assert_eq!((cache.len(), cache.used_bytes()), (1, src.len()));
    // Served from the cache once the file is gone.
    std::fs::remove_file(&path).unwrap();
    let again = read_sidecar(&t, &extra(), facts(), true, Some(&cache))
        .unwrap()
        .unwrap();
    assert_eq!(again.bytes(), &src[..]);
    // The read switch bypasses the cache too.
    assert!(read_sidecar(&t, &extra(), facts(), false, Some(&cache))
        .unwrap()
        .is_err());
    std::fs::remove_dir_all(&t).unwrap();
}

#[test]
fn cache_is_bounded_in_bytes() {
    let cache = SidecarCache::new(250);
    for i in 0..3 {
        cache.insert(Path::new(&format!("s{i}")), Arc::from(vec![i as u8; 100]));
    }
    assert_eq!((cache.len(), cache.used_bytes()), (2, 200));
    assert!(cache.get(Path::new("s0")).is_none(), "oldest evicted");
    assert!(cache.get(Path::new("s2")).is_some());
    cache.insert(Path::new("huge"), Arc::from(vec![0u8; 251]));
    assert!(cache.get(Path::new("huge")).is_none());
    assert!(cache.used_bytes() <= 250);
}

#[test]
fn selected_spans_form_a_valid_avro_file() {
    let manifest_path = dir().join(NAME);
    // SAFETY: test data is never modified while mapped.
    #[allow(unsafe_code)]
    let map = unsafe { map_file(&manifest_path) }.unwrap();
    let sc = std::fs::read(dir().join(format!("{NAME}.avro.sidecar"))).unwrap();
    let s = Sidecar::parse_with(
        &sc,
        &SidecarOptions {
            facts: Some(facts()),
        },
    )
    .unwrap();
    let all: Vec<SelectedBlock> = s.select(&Query::new()).map(|b| b.unwrap()).collect();
    assert_eq!(
        coalesce(all.iter().map(SelectedBlock::span)).len(),
        1,
        "adjacent blocks are one span"
    );
    for pick in [vec![0usize], vec![1, 2], vec![0, 2, 4], vec![3, 4], vec![]] {
        let chosen: Vec<SelectedBlock> = pick.iter().map(|&i| all[i]).collect();
        let spans = coalesce(chosen.iter().map(SelectedBlock::span));
        let header_len = s.avro_header().len() as u64;
        let mut file = std::fs::File::open(&manifest_path).unwrap();
        let read = read_spans(&mut file, header_len, &spans).unwrap();
        let sliced: Vec<u8> = span_slices(&map, header_len, &spans).unwrap().concat();
        assert_eq!(read, sliced);
        let (_, blocks, entries) = decode_entries(&read).unwrap();
        assert_eq!(blocks.len(), chosen.len());
        let want: u64 = chosen.iter().map(|b| b.record_count).sum();
        assert_eq!(entries.len() as u64, want);
    }
    // A row query through the real selection, read back and checked against the entries.
    let mut rows = [RowRange::new(1300, 1400)];
    let q = Query::new().rows(RowRanges::normalize(&mut rows));
    let chosen: Vec<SelectedBlock> = s.select(&q).map(|b| b.unwrap()).collect();
    let bytes = span_slices(
        &map,
        s.avro_header().len() as u64,
        &coalesce(chosen.iter().map(SelectedBlock::span)),
    )
    .unwrap()
    .concat();
    let (_, _, entries) = decode_entries(&bytes).unwrap();
    let (_, _, all_entries) = decode_entries(&map).unwrap();
    let hits = |es: &[lakecore::paimon::manifest::DecodedEntry]| {
        es.iter()
            .filter(|e| {
                let f = e.first_row_id.unwrap() as u64;
                f <= 1400 && 1300 < f + e.row_count.unwrap() as u64
            })
            .count()
    };
    assert!(hits(&all_entries) > 0);
    assert_eq!(
        hits(&entries),
        hits(&all_entries),
        "no matching entry is lost"
    );
    assert!(span_slices(&map, 10, &[(map.len() as u64, 1)]).is_err());
}

/// A metadata-sized file truncated by another writer while the planner holds its bytes: the
/// bytes stay whole (they were read, not mapped); a map would fault with SIGBUS here.
#[test]
fn a_small_file_truncated_while_open_cannot_crash_the_reader() {
    let d = std::env::temp_dir().join(format!("lakecore-truncate-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let path = d.join("manifest");
    let original: Vec<u8> = (0..256 * 1024u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &original).unwrap();
    // SAFETY: a file this small is read, not mapped, so the truncation below is allowed.
    #[allow(unsafe_code)]
    let bytes = unsafe { map_file(&path) }.unwrap();
    assert!(matches!(bytes, lakecore::io::FileBytes::Read(_)));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    assert_eq!(&bytes[..], &original[..]);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Data files whose bytes are handed out in place (BLOB values) are mapped from
/// `DATA_READ_BELOW` up, where metadata reads copy files of up to 16 MiB; both give the
/// file's bytes.
#[test]
fn data_files_are_mapped_where_metadata_files_are_read() {
    use lakecore::io::{FileBytes, LocalFs, Storage, Stored, DATA_READ_BELOW};
    let d = std::env::temp_dir().join(format!("lakecore-datamap-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let small = d.join("small.blob");
    let large = d.join("large.blob");
    let bytes = |n: u64| -> Vec<u8> { (0..n).map(|i| (i % 253) as u8).collect() };
    std::fs::write(&small, bytes(DATA_READ_BELOW)).unwrap();
    std::fs::write(&large, bytes(DATA_READ_BELOW + 1)).unwrap();
    let kind = |s: &Stored| match s {
        Stored::File(FileBytes::Mapped(_)) => "mapped",
        Stored::File(FileBytes::Read(_)) => "read",
        _ => "other",
    };
    let fs = LocalFs;
    let (a, b, c) = (
        fs.read_data(&small).unwrap(),
        fs.read_data(&large).unwrap(),
        fs.read(&large).unwrap(),
    );
    assert_eq!((kind(&a), kind(&b), kind(&c)), ("read", "mapped", "read"));
    assert_eq!(&b[..], &bytes(DATA_READ_BELOW + 1)[..]);
    assert_eq!(&a[..], &bytes(DATA_READ_BELOW)[..]);
    drop((a, b, c));
    std::fs::remove_dir_all(&d).unwrap();
}
