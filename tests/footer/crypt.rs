#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::needless_range_loop
)]
#![cfg(feature = "encryption")]
//! Statistics encryption (`footer::crypt`): round trips against the writer's input (the naive
//! model), wrong and missing keys, every byte of every encrypted module flipped, modules
//! moved, key-less reads of plaintext columns, and the `parquet` crate's modular encryption
//! as the oracle of the module AAD and the AES-GCM framing.

use lakecore::footer::{
    decrypt_module, encrypt_module, module_aad, AadModule, ColumnEncryption, ColumnIndexInput,
    CryptErrorKind, EncryptionConfig, FooterInput, KeyRetriever, MinMax, ModularFooter, StaticKeys,
    Statistics, StatsInput,
};
use lakecore_testkit::footer::{check_against_input, random_input};
use lakecore_testkit::rng::Rng;

const FOOTER_KEY: [u8; 16] = *b"0123456789012345";

fn column_key(c: u32) -> Vec<u8> {
    // AES-256 for even columns, AES-128 for odd ones: both key sizes in every test.
    let n = if c % 2 == 0 { 32 } else { 16 };
    (0..n)
        .map(|i| (i as u8).wrapping_mul(7) ^ c as u8)
        .collect()
}

fn key_metadata(c: u32) -> Vec<u8> {
    format!("key-of-col-{c}").into_bytes()
}

/// Protects every column in `protect`: odd positions in the list use the footer key.
fn config(protect: &[u32], prefix: Option<&[u8]>) -> EncryptionConfig {
    EncryptionConfig {
        footer_key: Some(FOOTER_KEY.to_vec()),
        footer_key_metadata: Some(b"footer".to_vec()),
        aad_prefix: prefix.map(<[u8]>::to_vec),
        columns: protect
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                if i % 2 == 1 {
                    ColumnEncryption::with_footer_key(c)
                } else {
                    ColumnEncryption::with_key(c, column_key(c), key_metadata(c))
                }
            })
            .collect(),
    }
}

fn all_keys(c: u32) -> StaticKeys {
    let mut k = StaticKeys::new().with(b"footer", &FOOTER_KEY);
    for i in 0..c {
        k = k.with(&key_metadata(i), &column_key(i));
    }
    k
}

fn build_encrypted(input: &FooterInput, data_len: usize, config: &EncryptionConfig) -> Vec<u8> {
    let mut file = b"PAR1".to_vec();
    file.resize(data_len, 0);
    input.write_encrypted(&mut file, config).unwrap();
    file
}

/// The input as a key-less reader must see it: protected chunks without statistics or
/// column index.
fn masked(input: &FooterInput, protect: &[u32]) -> FooterInput {
    let mut m = input.clone();
    let g = input.row_group_num_rows.len();
    for &c in protect {
        for rg in 0..g {
            let chunk = &mut m.chunks[c as usize * g + rg];
            chunk.statistics = None;
            chunk.column_index = None;
        }
    }
    m
}

fn check_stats(got: &Statistics<'_>, want: &StatsInput) {
    assert_eq!(got.null_count, want.null_count);
    assert_eq!(got.nan_count, want.nan_count);
    match (&got.min, &got.max, &want.min_max) {
        (None, None, None) => {}
        (Some(min), Some(max), Some(mm)) => {
            assert!(min.eq_bytes(&mm.min), "{min:?} vs {:?}", mm.min);
            assert!(max.eq_bytes(&mm.max), "{max:?} vs {:?}", mm.max);
            assert_eq!((min.exact, max.exact), (mm.min_exact, mm.max_exact));
        }
        other => panic!("min/max presence differs: {other:?}"),
    }
}

fn check_column_index(
    footer: &ModularFooter<'_>,
    c: u32,
    rg: u32,
    want: Option<&ColumnIndexInput>,
    keys: &dyn KeyRetriever,
) {
    let got = footer.decrypt_column_index(c, rg, keys).unwrap();
    let Some(want) = want else {
        assert!(
            got.is_none(),
            "column {c} row group {rg}: unexpected column index"
        );
        return;
    };
    let got = got.unwrap();
    let ci = got.column_index().unwrap();
    assert_eq!(ci.boundary_order, want.boundary_order);
    assert_eq!(ci.len(), want.pages.len());
    for (i, p) in want.pages.iter().enumerate() {
        assert_eq!(ci.is_null_page(i).unwrap(), p.null_page);
        check_stats(&ci.page(i).unwrap(), &p.stats);
    }
}

/// Every protected chunk decrypts to the input's statistics and column index; unprotected
/// columns have nothing encrypted.
fn check_decrypted(
    footer: &ModularFooter<'_>,
    input: &FooterInput,
    protect: &[u32],
    keys: &dyn KeyRetriever,
) {
    let g = input.row_group_num_rows.len() as u32;
    for c in 0..input.num_columns {
        for rg in 0..g {
            let want = &input.chunks[(c * g + rg) as usize];
            if !protect.contains(&c) {
                assert!(footer.decrypt_statistics(c, rg, keys).unwrap().is_none());
                assert!(footer.decrypt_column_index(c, rg, keys).unwrap().is_none());
                continue;
            }
            let got = footer.decrypt_statistics(c, rg, keys).unwrap();
            let want_stats = want
                .statistics
                .clone()
                .filter(|s| *s != StatsInput::default());
            match (&got, &want_stats) {
                (Some(got), Some(w)) => check_stats(&got.statistics().unwrap(), w),
                (None, None) => {}
                other => panic!("column {c} row group {rg}: presence differs {other:?}"),
            }
            check_column_index(footer, c, rg, want.column_index.as_ref(), keys);
        }
    }
}

fn pick_columns(rng: &mut Rng, c: u32) -> Vec<u32> {
    (0..c).filter(|_| rng.percent(40)).collect()
}

#[test]
fn round_trip_decrypts_every_chunk_and_page_index() {
    let mut rng = Rng::xorshift(0xC0FFEE);
    let mut protected_chunks = 0;
    for (seed, c, g) in [
        (1, 1, 1),
        (2, 3, 2),
        (3, 10, 7),
        (4, 40, 3),
        (5, 2, 30),
        (6, 17, 17),
        (7, 5, 0),
    ] {
        for s in 0..4 {
            let (input, data_len) = random_input(seed * 100 + s, c, g);
            let mut protect = pick_columns(&mut rng, c);
            if s == 0 {
                protect = (0..c).collect(); // every column
            }
            let prefix = (s % 2 == 1).then_some(&b"table/part-0.parquet"[..]);
            let file = build_encrypted(&input, data_len, &config(&protect, prefix));
            let footer = ModularFooter::parse(&file).unwrap();
            // The plaintext view is exactly the input without the protected statistics.
            check_against_input(&footer, &masked(&input, &protect));
            let enc = footer.statistics_encryption().unwrap().unwrap();
            let listed: Vec<u32> = enc.columns().map(|c| c.unwrap().column).collect();
            assert_eq!(listed, protect);
            assert_eq!(enc.aad_prefix, prefix);
            check_decrypted(&footer, &input, &protect, &all_keys(c));
            protected_chunks += protect.len() * g as usize;
        }
    }
    assert!(protected_chunks > 300, "{protected_chunks}");
}

#[test]
fn without_encryption_there_is_no_module() {
    let (input, data_len) = random_input(9, 4, 3);
    let file = build_encrypted(&input, data_len, &EncryptionConfig::default());
    let footer = ModularFooter::parse(&file).unwrap();
    check_against_input(&footer, &input);
    // No protected column: the module is there but empty; a plain footer has none.
    assert_eq!(
        footer
            .statistics_encryption()
            .unwrap()
            .unwrap()
            .columns()
            .count(),
        0
    );
    let mut plain = b"PAR1".to_vec();
    plain.resize(data_len, 0);
    input.write(&mut plain).unwrap();
    let footer = ModularFooter::parse(&plain).unwrap();
    assert!(footer.statistics_encryption().unwrap().is_none());
    assert!(footer
        .decrypt_statistics(0, 0, &all_keys(4))
        .unwrap()
        .is_none());
}

#[test]
fn plaintext_projection_needs_no_key() {
    let (input, data_len) = random_input(11, 6, 4);
    let protect = [1, 4];
    let file = build_encrypted(&input, data_len, &config(&protect, None));
    let footer = ModularFooter::parse(&file).unwrap();
    footer.validate().unwrap();
    let no_keys = StaticKeys::new();
    for c in [0u32, 2, 3, 5] {
        for rg in 0..4 {
            let want = &input.chunks[(c * 4 + rg) as usize];
            assert_eq!(
                footer.chunk_placement(c, rg).unwrap().data_page_offset,
                want.data_page_offset
            );
            if let Some(w) = &want.statistics {
                check_stats(&footer.chunk_statistics(c, rg).unwrap().unwrap(), w);
            }
            assert_eq!(
                footer.column_index(c, rg).unwrap().is_some(),
                want.column_index.is_some()
            );
            // Nothing to decrypt for a plaintext column, so no key is asked for.
            assert!(footer
                .decrypt_statistics(c, rg, &no_keys)
                .unwrap()
                .is_none());
        }
    }
    // Protected chunks: placement and offset index plaintext, statistics hidden.
    for c in protect {
        for rg in 0..4 {
            let want = &input.chunks[(c * 4 + rg) as usize];
            assert_eq!(
                footer.chunk_placement(c, rg).unwrap().num_values,
                want.num_values
            );
            assert_eq!(
                footer.offset_index(c, rg).unwrap().is_some(),
                want.offset_index.is_some()
            );
            assert!(footer.column_index(c, rg).unwrap().is_none());
            if let Some(s) = footer.chunk_statistics(c, rg).unwrap() {
                assert_eq!((s.null_count, s.min, s.nan_count), (None, None, None));
            }
        }
    }
}

#[test]
fn wrong_or_missing_key_names_the_column() {
    let (input, data_len) = random_input(12, 5, 3);
    let protect = [0, 2, 3];
    let file = build_encrypted(&input, data_len, &config(&protect, None));
    let footer = ModularFooter::parse(&file).unwrap();
    let mut checked = 0;
    for &c in &protect {
        // Every key wrong: the column's own key (or the footer key) replaced by another.
        let wrong = StaticKeys::new()
            .with(b"footer", &column_key(1))
            .with(&key_metadata(c), &column_key(c + 10));
        let no_key = StaticKeys::new();
        let short_key = StaticKeys::new()
            .with(b"footer", &[1; 15])
            .with(&key_metadata(c), &[1; 15]);
        for rg in 0..3 {
            for (module, is_ci) in [
                (AadModule::ColumnMetaData, false),
                (AadModule::ColumnIndex, true),
            ] {
                let run = |keys: &dyn KeyRetriever| {
                    if is_ci {
                        footer
                            .decrypt_column_index(c, rg, keys)
                            .map(|d| d.is_some())
                    } else {
                        footer.decrypt_statistics(c, rg, keys).map(|d| d.is_some())
                    }
                };
                if !run(&all_keys(5)).unwrap() {
                    continue; // no module for this chunk
                }
                for (keys, kind) in [
                    (&wrong, CryptErrorKind::Authentication),
                    (&no_key, CryptErrorKind::NoKey),
                    (&short_key, CryptErrorKind::KeyLength),
                ] {
                    let e = run(keys).unwrap_err();
                    assert_eq!(
                        (e.column, e.row_group, e.module, e.kind),
                        (c, Some(rg), module, kind)
                    );
                    let text = e.to_string();
                    assert!(
                        text.starts_with(&format!("column {c}, row group {rg}: ")),
                        "{text}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 12, "{checked}");
}

/// The encrypted module ranges of a file: (column, row group, is column index, [a, b)).
fn module_ranges(footer: &ModularFooter<'_>) -> Vec<(u32, u32, bool, usize, usize)> {
    let enc = footer.statistics_encryption().unwrap().unwrap();
    let mut out = Vec::new();
    for col in enc.columns() {
        let col = col.unwrap();
        for rg in 0..footer.num_row_groups() {
            for ci in [false, true] {
                let (a, b) = if ci {
                    col.column_index_range(rg)
                } else {
                    col.statistics_range(rg)
                }
                .unwrap();
                if a < b {
                    out.push((col.column, rg, ci, a as usize, b as usize));
                }
            }
        }
    }
    out
}

#[test]
fn every_flipped_byte_of_every_module_is_detected() {
    let (input, data_len) = random_input(13, 3, 2);
    let protect = [0, 2];
    let file = build_encrypted(&input, data_len, &config(&protect, Some(b"p")));
    let footer = ModularFooter::parse(&file).unwrap();
    let ranges = module_ranges(&footer);
    assert!(ranges.len() >= 4, "{ranges:?}");
    let keys = all_keys(3);
    let mut flips = 0;
    for &(c, rg, ci, a, b) in &ranges {
        for i in a..b {
            for mask in [0x01u8, 0x80, 0xFF] {
                let mut bad = file.clone();
                bad[i] ^= mask;
                let f = ModularFooter::parse(&bad).unwrap();
                let e = if ci {
                    f.decrypt_column_index(c, rg, &keys).map(|_| ())
                } else {
                    f.decrypt_statistics(c, rg, &keys).map(|_| ())
                }
                .expect_err("a flipped byte went undetected");
                assert_eq!((e.column, e.row_group), (c, Some(rg)));
                let expected = if i < a + 4 {
                    matches!(e.kind, CryptErrorKind::Malformed(_))
                } else {
                    e.kind == CryptErrorKind::Authentication
                };
                assert!(expected, "byte {i} of [{a}, {b}): {e}");
                flips += 1;
            }
        }
    }
    assert!(flips > 3 * 4 * 50, "{flips}");
}

#[test]
fn a_module_moved_to_another_chunk_fails_authentication() {
    // Same-column chunks under one key: only the AAD's ordinals tell them apart.
    let (mut input, data_len) = random_input(14, 2, 3);
    for rg in 0..3u8 {
        // Equal shapes, different values: the modules have equal lengths.
        input.chunks[rg as usize].statistics = Some(StatsInput {
            null_count: Some(u64::from(rg) + 5),
            nan_count: None,
            min_max: Some(MinMax {
                min: vec![rg],
                max: vec![rg + 10],
                min_exact: true,
                max_exact: true,
            }),
        });
    }
    let file = build_encrypted(&input, data_len, &config(&[0], None));
    let footer = ModularFooter::parse(&file).unwrap();
    let stats: Vec<_> = module_ranges(&footer)
        .into_iter()
        .filter(|r| !r.2)
        .collect();
    let mut swapped = 0;
    for x in &stats {
        for y in &stats {
            if x.1 == y.1 || x.4 - x.3 != y.4 - y.3 {
                continue;
            }
            let mut bad = file.clone();
            bad[x.3..x.4].copy_from_slice(&file[y.3..y.4]);
            let f = ModularFooter::parse(&bad).unwrap();
            let e = f.decrypt_statistics(0, x.1, &all_keys(2)).unwrap_err();
            assert_eq!(e.kind, CryptErrorKind::Authentication);
            swapped += 1;
        }
    }
    // The framing alone, checked without the footer: a statistics module is not a column
    // index module of the same chunk, nor one of another file AAD.
    let (_, _, _, a, b) = stats[0];
    let enc = footer.statistics_encryption().unwrap().unwrap();
    let aad = module_aad(&enc.file_aad(), AadModule::ColumnMetaData, stats[0].1, 0).unwrap();
    assert!(decrypt_module(&column_key(0), &aad, &file[a..b]).is_ok());
    let ci_aad = module_aad(&enc.file_aad(), AadModule::ColumnIndex, stats[0].1, 0).unwrap();
    assert!(decrypt_module(&column_key(0), &ci_aad, &file[a..b]).is_err());
    let other = module_aad(b"another file", AadModule::ColumnMetaData, stats[0].1, 0).unwrap();
    assert!(decrypt_module(&column_key(0), &other, &file[a..b]).is_err());
    assert_eq!(swapped, 6);
}

#[test]
fn writer_refuses_bad_configs_naming_the_column() {
    use lakecore::error::Location;
    use lakecore::ErrorKind;
    let (input, data_len) = random_input(15, 3, 2);
    let mut file = b"PAR1".to_vec();
    file.resize(data_len, 0);
    let cases = [
        (
            vec![ColumnEncryption::with_key(3, vec![0; 16], vec![])],
            None,
            ErrorKind::OutOfBounds,
            3,
        ),
        (
            vec![
                ColumnEncryption::with_footer_key(1),
                ColumnEncryption::with_footer_key(1),
            ],
            Some(FOOTER_KEY.to_vec()),
            ErrorKind::Duplicate,
            1,
        ),
        (
            vec![ColumnEncryption::with_key(2, vec![0; 24], vec![])],
            None,
            ErrorKind::InvalidLength,
            2,
        ),
        (
            vec![ColumnEncryption::with_footer_key(0)],
            None,
            ErrorKind::ThriftMissingField,
            0,
        ),
    ];
    for (columns, footer_key, kind, column) in cases {
        let config = EncryptionConfig {
            footer_key,
            columns,
            ..EncryptionConfig::default()
        };
        let e = input
            .write_encrypted(&mut file.clone(), &config)
            .unwrap_err();
        assert_eq!((e.kind, e.at, e.offset), (kind, Location::Entry, column));
    }
}

#[test]
fn framing_is_length_nonce_ciphertext_tag() {
    let key = column_key(0);
    let nonce = [9u8; 12];
    let framed = encrypt_module(&key, b"aad", &nonce, b"hello").unwrap();
    assert_eq!(framed.len(), 4 + 12 + 5 + 16);
    assert_eq!(&framed[..4], &(12u32 + 5 + 16).to_le_bytes());
    assert_eq!(&framed[4..16], &nonce);
    assert_eq!(decrypt_module(&key, b"aad", &framed).unwrap(), b"hello");
    // Truncated or extended: the length prefix no longer matches.
    assert!(decrypt_module(&key, b"aad", &framed[..framed.len() - 1]).is_err());
    let mut longer = framed.clone();
    longer.push(0);
    assert!(decrypt_module(&key, b"aad", &longer).is_err());
}
