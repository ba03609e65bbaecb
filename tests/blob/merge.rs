//! The fallback merge: the spec's worked example (full read and every single-row read), its
//! two smaller cases, gaps, null-wins, all-placeholder rows, ranges, deletions, many layers,
//! errors, and a randomised comparison against a naive per-row model written here.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "std")]

use lakecore::blob::{BlobFile, FallbackMerge, LayerFile, MergeOptions, RowRange};
use lakecore::{ErrorKind, Location};

use lakecore_testkit::blob::{merge, model, spec, write, Out, Spec};

use lakecore_testkit::rng::Rng;

fn all(specs: &[Spec]) -> Vec<Out> {
    merge(specs, MergeOptions::default()).unwrap()
}

fn worked_example() -> Vec<Spec> {
    vec![
        spec(1, 0, &["b0", "b1", "b2"]),
        spec(1, 3, &["b3", "b4"]),
        spec(2, 0, &["u20", "P"]),
        spec(2, 2, &["P", "u23"]),
        spec(2, 4, &["u24"]),
        spec(3, 5, &["b5", "b6", "b7", "b8", "b9"]),
        spec(4, 5, &["P", "u46", "P"]),
        spec(4, 8, &["u48", "P"]),
        spec(
            6,
            0,
            &["P", "u61", "P", "P", "P", "P", "P", "P", "P", "u69"],
        ),
    ]
}

#[test]
fn worked_example_full_and_single_rows() {
    let specs = worked_example();
    let want_values = [
        "u20", "u61", "b2", "u23", "u24", "b5", "u46", "b7", "u48", "u69",
    ];
    let want_seqs = [2, 6, 1, 2, 2, 3, 4, 3, 4, 6];
    let got = all(&specs);
    assert_eq!(got.len(), 10);
    for (i, (row_id, seq, value)) in got.iter().enumerate() {
        assert_eq!(*row_id, i as u64);
        assert_eq!(*seq, want_seqs[i], "row {i}");
        assert_eq!(value.as_deref(), Some(want_values[i]), "row {i}");
    }
    assert_eq!(got, model(&specs, None, &[]).unwrap());
    for i in 0..10u64 {
        let ranges = [RowRange::single(i)];
        let one = merge(
            &specs,
            MergeOptions {
                ranges: Some(&ranges),
                deleted: &[],
                strict: false,
            },
        )
        .unwrap();
        assert_eq!(one, [got[i as usize].clone()], "row {i}");
    }
    // Input order does not matter.
    let mut reversed = specs.clone();
    reversed.reverse();
    assert_eq!(all(&reversed), got);
}

#[test]
fn smaller_cases_from_the_spec() {
    let a = all(&[
        spec(1, 0, &["a0", "a1", "a2", "a3", "a4"]),
        spec(2, 0, &["n0", "P", "n2"]),
    ]);
    assert_eq!(a.iter().map(|r| r.1).collect::<Vec<_>>(), [2, 1, 2, 1, 1]);
    let b = all(&[
        spec(1, 8, &["a8", "a9", "a10", "a11", "a12", "a13"]),
        spec(2, 10, &["P", "n11"]),
    ]);
    assert_eq!(
        b.iter().map(|r| r.1).collect::<Vec<_>>(),
        [1, 1, 1, 2, 1, 1]
    );
    assert_eq!(
        b.iter().map(|r| r.0).collect::<Vec<_>>(),
        [8, 9, 10, 11, 12, 13]
    );
    assert_eq!(b[3].2.as_deref(), Some("n11"));
}

#[test]
fn gaps_front_middle_back() {
    let old = spec(1, 0, &["o0", "o1", "o2", "o3", "o4", "o5"]);
    // Newest layer covers only the middle: front and back are gaps.
    let got = all(&[old.clone(), spec(2, 2, &["n2", "n3"])]);
    let seqs: Vec<i64> = got.iter().map(|r| r.1).collect();
    assert_eq!(seqs, [1, 1, 2, 2, 1, 1]);
    // Newest layer has a hole in the middle.
    let got = all(&[
        old.clone(),
        spec(2, 0, &["n0", "n1"]),
        spec(2, 4, &["n4", "n5"]),
    ]);
    let seqs: Vec<i64> = got.iter().map(|r| r.1).collect();
    assert_eq!(seqs, [2, 2, 1, 1, 2, 2]);
    // A row no layer covers: NULL with sequence number -1, row ID kept.
    let got = all(&[
        spec(1, 0, &["o0", "o1"]),
        spec(2, 3, &["n3"]),
        spec(1, 5, &["o5"]),
    ]);
    assert_eq!(
        got,
        [
            (0, 1, Some("o0".into())),
            (1, 1, Some("o1".into())),
            (2, -1, None),
            (3, 2, Some("n3".into())),
            (4, -1, None),
            (5, 1, Some("o5".into())),
        ]
    );
}

#[test]
fn null_wins_over_older_bytes_and_all_placeholders_become_null() {
    let got = all(&[
        spec(1, 0, &["o0", "o1", "P"]),
        spec(3, 0, &["N", "P", "P"]),
        spec(2, 0, &["m0", "P", "P"]),
    ]);
    assert_eq!(
        got,
        [(0, 3, None), (1, 1, Some("o1".into())), (2, -1, None)]
    );
}

#[test]
fn ranges_cross_gaps_and_deletions_skip_rows() {
    let specs = vec![
        spec(1, 0, &["o0", "o1", "o2"]),
        spec(1, 6, &["o6", "o7", "o8", "o9"]),
        spec(2, 2, &["n2", "P", "N", "n5", "P"]),
    ];
    let ranges = [
        RowRange::new(1, 3),
        RowRange::new(5, 8),
        RowRange::new(20, 30),
    ];
    let deleted = [0, 2, 7, 40];
    let got = merge(
        &specs,
        MergeOptions {
            ranges: Some(&ranges),
            deleted: &deleted,
            strict: false,
        },
    )
    .unwrap();
    assert_eq!(got, model(&specs, Some(&ranges), &deleted).unwrap());
    assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 3, 5, 6, 8]);
    assert_eq!(got[1], (3, -1, None)); // placeholder over a gap
    let got = merge(
        &specs,
        MergeOptions {
            ranges: None,
            deleted: &deleted,
            strict: false,
        },
    )
    .unwrap();
    assert_eq!(got, model(&specs, None, &deleted).unwrap());
    let empty = merge(
        &specs,
        MergeOptions {
            ranges: Some(&[]),
            deleted: &[],
            strict: false,
        },
    )
    .unwrap();
    assert!(empty.is_empty());
}

#[test]
fn single_layer_reads_files_in_order_and_strict_rejects_placeholders() {
    let specs = vec![spec(5, 5, &["c5", "N"]), spec(5, 0, &["c0", "c1"])];
    let got = all(&specs);
    assert_eq!(
        got,
        [
            (0, 5, Some("c0".into())),
            (1, 5, Some("c1".into())),
            (5, 5, Some("c5".into())),
            (6, 5, None),
        ]
    );
    let bad = vec![spec(5, 0, &["c0", "c1"]), spec(5, 10, &["c10", "P"])];
    // By default (pypaimon, paimon-rust) the unresolvable placeholder is NULL with
    // sequence number -1; the gap 2..=9 is not a row.
    assert_eq!(
        all(&bad),
        [
            (0, 5, Some("c0".into())),
            (1, 5, Some("c1".into())),
            (10, 5, Some("c10".into())),
            (11, -1, None),
        ]
    );
    let strict = MergeOptions {
        strict: true,
        ..MergeOptions::default()
    };
    let e = merge(&bad, strict).unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::InvalidValue, 11));
    // A range that avoids the placeholder reads fine.
    let r = [RowRange::new(0, 10)];
    assert_eq!(
        merge(
            &bad,
            MergeOptions {
                ranges: Some(&r),
                deleted: &[],
                strict: true,
            }
        )
        .unwrap()
        .len(),
        3
    );
}

#[test]
fn construction_errors() {
    // Overlapping files in one layer.
    let e = merge(
        &[
            spec(1, 0, &["a", "b", "c"]),
            spec(1, 2, &["d"]),
            spec(2, 0, &["x"]),
        ],
        MergeOptions::default(),
    )
    .unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::Duplicate, 2));
    let specs = worked_example();
    let bad_ranges = [RowRange::new(3, 4), RowRange::new(4, 5)];
    let e = merge(
        &specs,
        MergeOptions {
            ranges: Some(&bad_ranges),
            deleted: &[],
            strict: false,
        },
    )
    .unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::NotSorted, 1));
    let e = merge(
        &specs,
        MergeOptions {
            ranges: None,
            deleted: &[1, 3, 3],
            strict: false,
        },
    )
    .unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::NotSorted, 2));
    // More layers than the merge holds.
    let bytes: Vec<Vec<u8>> = specs.iter().map(|_| write(&["v"])).collect();
    let mut files: Vec<LayerFile> = bytes
        .iter()
        .enumerate()
        .map(|(i, b)| LayerFile {
            file: BlobFile::parse(b).unwrap(),
            first_row_id: 0,
            max_sequence_number: i as i64,
        })
        .collect();
    let e = FallbackMerge::<'_, '_, 4>::with_max_layers(&mut files, MergeOptions::default())
        .unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::LimitExceeded, 4));
    let m =
        FallbackMerge::<'_, '_, 16>::with_max_layers(&mut files, MergeOptions::default()).unwrap();
    assert_eq!(m.layers(), 9);
    let rows: Vec<_> = m.collect::<Result<_, _>>().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].sequence_number, 8);
    // No files: nothing.
    let mut none: [LayerFile; 0] = [];
    assert_eq!(
        FallbackMerge::new(&mut none, MergeOptions::default())
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn errors_name_rows_ranges_entries_and_layers_not_bytes() {
    // Each merge error says what its number counts, and `Display` says it too.
    let overlap = [
        spec(1, 0, &["a", "b", "c"]),
        spec(1, 2, &["d"]),
        spec(2, 0, &["x"]),
    ];
    let e = merge(&overlap, MergeOptions::default()).unwrap_err();
    assert_eq!(
        (e.kind, e.at, e.offset),
        (ErrorKind::Duplicate, Location::Row, 2)
    );
    assert_eq!(e.to_string(), "duplicate at row 2");
    let placeholder = [spec(5, 0, &["c0", "c1"]), spec(5, 10, &["c10", "P"])];
    let strict = MergeOptions {
        strict: true,
        ..MergeOptions::default()
    };
    let e = merge(&placeholder, strict).unwrap_err();
    assert_eq!(
        (e.kind, e.at, e.offset),
        (ErrorKind::InvalidValue, Location::Row, 11)
    );
    assert_eq!(e.to_string(), "invalid value at row 11");
    let specs = worked_example();
    let ranges = [RowRange::new(0, 1), RowRange::new(7, 5)];
    let options = MergeOptions {
        ranges: Some(&ranges),
        deleted: &[],
        strict: false,
    };
    let e = merge(&specs, options).unwrap_err();
    assert_eq!(
        (e.kind, e.at, e.offset),
        (ErrorKind::InvalidValue, Location::Range, 1)
    );
    assert_eq!(e.to_string(), "invalid value at range 1");
    let options = MergeOptions {
        ranges: None,
        deleted: &[1, 3, 3],
        strict: false,
    };
    let e = merge(&specs, options).unwrap_err();
    assert_eq!(
        (e.kind, e.at, e.offset),
        (ErrorKind::NotSorted, Location::Entry, 2)
    );
    assert_eq!(e.to_string(), "not sorted at entry 2");
    let bytes = write(&["v"]);
    let mut files: Vec<LayerFile> = (0..5)
        .map(|seq| LayerFile {
            file: BlobFile::parse(&bytes).unwrap(),
            first_row_id: 0,
            max_sequence_number: seq,
        })
        .collect();
    let e = FallbackMerge::<'_, '_, 4>::with_max_layers(&mut files, MergeOptions::default())
        .unwrap_err();
    assert_eq!(
        (e.kind, e.at, e.offset),
        (ErrorKind::LimitExceeded, Location::Layer, 4)
    );
    assert_eq!(e.to_string(), "limit exceeded at layer 4");
    // Item locations are not byte offsets: placing the error in a file leaves them alone.
    assert_eq!(e.shifted(1000), e);
}

#[test]
fn empty_files_are_ignored() {
    let got = all(&[
        spec(1, 3, &["a3", "a4"]),
        spec(2, 0, &[]),
        spec(2, 4, &["N"]),
    ]);
    assert_eq!(got, [(3, 1, Some("a3".into())), (4, 2, None)]);
}

fn random_specs(rng: &mut Rng) -> Vec<Spec> {
    let span = 1 + rng.below(60);
    let layers = 1 + rng.below(5);
    let mut specs = Vec::new();
    for l in 0..layers {
        let seq = l as i64 * 3 + 1 + rng.below(3) as i64;
        let mut id = rng.below(span / 2 + 1);
        while id < span {
            let len = 1 + rng.below(12);
            let cells: Vec<String> = (0..len)
                .map(|i| match rng.below(6) {
                    0 => "N".to_string(),
                    1 | 2 if layers > 1 => "P".to_string(),
                    _ => format!("L{l}r{}", id + i),
                })
                .collect();
            specs.push((seq, id, cells));
            id += len + rng.below(4); // sometimes a gap
        }
    }
    specs
}

#[test]
fn randomised_against_naive_model() {
    let mut rng = Rng::xorshift(0x9e37_79b9_7f4a_7c15);
    let iterations = if cfg!(miri) { 20 } else { 1500 };
    let (mut rows, mut errors) = (0usize, 0usize);
    for _ in 0..iterations {
        let specs = random_specs(&mut rng);
        let hi = specs
            .iter()
            .map(|s| s.1 + s.2.len() as u64)
            .max()
            .unwrap_or(1);
        let mut ranges = Vec::new();
        let mut at = rng.below(4);
        while at < hi && rng.below(4) != 0 {
            let len = rng.below(10);
            ranges.push(RowRange::new(at, at + len));
            at += len + 1 + rng.below(5);
        }
        let mut deleted: Vec<u64> = (0..hi).filter(|_| rng.below(7) == 0).collect();
        deleted.dedup();
        let use_ranges = rng.below(2) == 0;
        let ranges_opt = use_ranges.then_some(&ranges[..]);
        let got = merge(
            &specs,
            MergeOptions {
                ranges: ranges_opt,
                deleted: &deleted,
                strict: false,
            },
        )
        .map_err(|e| e.kind);
        let want = model(&specs, ranges_opt, &deleted);
        assert_eq!(
            got, want,
            "{specs:?} ranges {ranges_opt:?} deleted {deleted:?}"
        );
        match want {
            Ok(w) => rows += w.len(),
            Err(_) => errors += 1,
        }
    }
    if !cfg!(miri) {
        assert!(rows > 10_000 && errors == 0, "{rows} rows, {errors} errors");
    }
}

#[test]
fn randomised_large_files_against_naive_model() {
    // Long files so that whole 1024-row blocks fall inside one file (the bulk path), mixed
    // with file boundaries, gaps, ranges and deletions (the per-row path).
    let mut rng = Rng::xorshift(0x2545_f491_4f6c_dd1d);
    let iterations = if cfg!(miri) { 2 } else { 40 };
    for _ in 0..iterations {
        let layers = 2 + rng.below(3);
        let mut specs = Vec::new();
        for l in 0..layers {
            let mut id = rng.below(100);
            while id < 6000 {
                let len = 1 + rng.below(3000);
                let cells: Vec<String> = (0..len)
                    .map(|i| match rng.below(8) {
                        0 => "N".to_string(),
                        1..=4 => "P".to_string(),
                        _ => format!("L{l}r{}", id + i),
                    })
                    .collect();
                specs.push((l as i64 + 1, id, cells));
                id += len + rng.below(3) * rng.below(40);
            }
        }
        let ranges = [
            RowRange::new(10, 700),
            RowRange::new(701, 701),
            RowRange::new(900, 5000),
            RowRange::new(5002, 9000),
        ];
        let deleted: Vec<u64> = (0..6000).filter(|_| rng.below(200) == 0).collect();
        for (r, d) in [
            (None, &[][..]),
            (Some(&ranges[..]), &[][..]),
            (None, &deleted[..]),
            (Some(&ranges[..]), &deleted[..]),
        ] {
            let got = merge(
                &specs,
                MergeOptions {
                    ranges: r,
                    deleted: d,
                    strict: false,
                },
            )
            .unwrap();
            assert_eq!(got, model(&specs, r, d).unwrap());
        }
    }
}

/// The documented footprint ("about 40 KiB") holds: the merge's block is inline.
#[test]
fn merge_footprint_is_as_documented() {
    let size = std::mem::size_of::<FallbackMerge<'_, '_>>();
    assert!((32 << 10..=44 << 10).contains(&size), "{size}");
}
