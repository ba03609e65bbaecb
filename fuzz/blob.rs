//! bolero harnesses for the BLOB readers: the file view and descriptors (raw bytes), mutated
//! well-formed files, nested ARRAY/MAP payloads, and the fallback merge against the naive
//! model.
//!
//! Run briefly by `cargo test --test fuzz_blob`; longer with `cargo bolero test`. The oracle
//! functions live in `lakecore_testkit::blob` and are shared with the integration tests.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "std")]

use lakecore::blob::{
    encode_array, encode_map, BlobDescriptor, BlobWriter, MergeOptions, RowRange,
};
use lakecore_testkit::blob::{exercise, exercise_nested, merge, model, Spec};
use std::time::Duration;

const TIME: Duration = Duration::from_secs(1);

#[test]
fn view_raw_bytes() {
    if cfg!(miri) {
        return;
    }
    bolero::check!()
        .with_test_time(TIME)
        .for_each(|bytes: &[u8]| {
            let _ = exercise(bytes);
            // Descriptors: whatever decodes re-encodes to the same bytes.
            if let Ok(d) = BlobDescriptor::decode(bytes) {
                let mut out = Vec::new();
                d.encode(&mut out).unwrap();
                assert_eq!(out, bytes);
            }
        });
}

/// A well-formed file from `rows` (kind selector, payload), then byte flips and a truncation.
#[test]
fn view_mutated_files() {
    if cfg!(miri) {
        return;
    }
    bolero::check!()
        .with_type::<(Vec<(u8, Vec<u8>)>, Vec<(u16, u8)>, Option<u16>)>()
        .with_test_time(TIME)
        .for_each(|(rows, flips, cut)| {
            let mut w = BlobWriter::new(Vec::new());
            for (kind, payload) in rows {
                match kind % 4 {
                    0 => w.put_null().unwrap(),
                    1 => w.put_placeholder().unwrap(),
                    2 => {
                        w.put_array(payload.chunks(3).map(|c| (c[0] % 2 == 0).then_some(c)))
                            .unwrap();
                    }
                    _ => {
                        w.put_value(payload).unwrap();
                    }
                }
            }
            let mut bytes = w.finish().unwrap();
            exercise(&bytes).unwrap();
            for &(at, mask) in flips {
                if !bytes.is_empty() {
                    let i = usize::from(at) % bytes.len();
                    bytes[i] ^= mask;
                }
            }
            if let Some(cut) = cut {
                bytes.truncate(usize::from(*cut) % (bytes.len() + 1));
            }
            let _ = exercise(&bytes);
        });
}

#[test]
fn nested_payloads() {
    if cfg!(miri) {
        return;
    }
    bolero::check!()
        .with_test_time(TIME)
        .for_each(|bytes: &[u8]| exercise_nested(bytes, 7));
}

/// Well-formed nested payloads from structured input: what the writers encode, the views read
/// back. A test of its own: under libFuzzer (`cargo bolero test`) only the first `check!` of a
/// test runs.
#[test]
fn nested_payloads_round_trip() {
    if cfg!(miri) {
        return;
    }
    bolero::check!()
        .with_type::<(
            Vec<Option<Vec<u8>>>,
            Vec<(Option<Vec<u8>>, Option<Vec<u8>>)>,
        )>()
        .with_test_time(TIME)
        .for_each(|(elements, entries)| {
            let mut a = Vec::new();
            encode_array(elements.iter().map(|e| e.as_deref()), &mut a).unwrap();
            exercise_nested(&a, 0);
            let mut m = Vec::new();
            let pairs = entries.iter().map(|(k, v)| (k.as_deref(), v.as_deref()));
            if encode_map(pairs, &mut m).is_ok() {
                exercise_nested(&m, 0);
            }
        });
}

#[test]
fn merge_matches_model() {
    if cfg!(miri) {
        return;
    }
    bolero::check!()
        .with_type::<(Vec<(u8, u8, Vec<u8>)>, Vec<(u8, u8)>, Vec<u8>, bool)>()
        .with_test_time(TIME)
        .for_each(|(files, ranges, deleted, use_ranges)| {
            // Non-overlapping files per layer: each layer places its files left to right.
            let mut next = [0u64; 4];
            let specs: Vec<Spec> = files
                .iter()
                .take(12)
                .map(|(seq, gap, cells)| {
                    let layer = usize::from(seq % 4);
                    let first = next[layer] + u64::from(gap % 4);
                    let cells: Vec<String> = cells
                        .iter()
                        .take(16)
                        .map(|c| match c % 4 {
                            0 => "N".to_string(),
                            1 => "P".to_string(),
                            _ => format!("v{c}"),
                        })
                        .collect();
                    next[layer] = first + cells.len() as u64;
                    (layer as i64 * 10, first, cells)
                })
                .collect();
            let mut rr: Vec<RowRange> = Vec::new();
            let mut at = 0u64;
            for &(skip, len) in ranges.iter().take(8) {
                let first = at + u64::from(skip % 8);
                let last = first + u64::from(len % 8);
                rr.push(RowRange::new(first, last));
                at = last + 1;
            }
            let mut del: Vec<u64> = deleted.iter().map(|&d| u64::from(d % 64)).collect();
            del.sort_unstable();
            del.dedup();
            let ranges = use_ranges.then_some(&rr[..]);
            let got = merge(
                &specs,
                MergeOptions {
                    ranges,
                    deleted: &del,
                    strict: false,
                },
            )
            .map_err(|e| e.kind);
            assert_eq!(got, model(&specs, ranges, &del));
        });
}
