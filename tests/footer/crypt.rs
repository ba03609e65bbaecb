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
    let n = if c.is_multiple_of(2) { 32 } else { 16 };
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
                if !i.is_multiple_of(2) {
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
            // The same through a column looked up once.
            let enc = footer.statistics_encryption().unwrap().unwrap();
            let col = enc.encrypted_column(c).unwrap().unwrap();
            let resolved = footer
                .decrypt_column_statistics(&enc, &col, rg, keys)
                .unwrap();
            assert_eq!(resolved, got);
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
            // A zero-page index is no index (an empty FIRST_PAGE slice).
            assert_eq!(
                footer.column_index(c, rg).unwrap().is_some(),
                want.column_index
                    .as_ref()
                    .is_some_and(|c| !c.pages.is_empty())
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
                want.offset_index.as_ref().is_some_and(|o| !o.is_empty())
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

/// The `parquet` crate's modular encryption as the oracle: a file it encrypts (footer key +
/// a column key) and the same file unencrypted, written from the same data.
mod parquet_oracle {
    use super::{decrypt_module, encrypt_module, module_aad, AadModule};
    use bytes::Bytes;
    use lakecore::codec::thrift::{FieldType, Reader};
    use parquet::column::writer::ColumnWriter;
    use parquet::data_type::ByteArray;
    use parquet::encryption::decrypt::FileDecryptionProperties;
    use parquet::encryption::encrypt::FileEncryptionProperties;
    use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use std::sync::Arc;

    const FOOTER_KEY: &[u8] = b"0123456789012345";
    const KEY_B: &[u8] = b"1234567890123450abcdefghijklmnop"; // AES-256
    const PREFIX: &[u8] = b"table/part-0";

    fn write(encrypt: bool) -> Vec<u8> {
        let schema = Arc::new(
            parse_message_type("message m { required int64 a; optional binary b (UTF8); }")
                .unwrap(),
        );
        let mut props = WriterProperties::builder()
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_data_page_row_count_limit(16)
            .set_write_batch_size(8)
            .set_created_by("lakecore crypt oracle".into());
        if encrypt {
            let enc = FileEncryptionProperties::builder(FOOTER_KEY.to_vec())
                .with_column_key("b", KEY_B.to_vec())
                .with_aad_prefix(PREFIX.to_vec())
                .build()
                .unwrap();
            props = props.with_file_encryption_properties(enc);
        }
        let mut w = SerializedFileWriter::new(Vec::new(), schema, Arc::new(props.build())).unwrap();
        for g in 0..3i64 {
            let mut rg = w.next_row_group().unwrap();
            while let Some(mut cw) = rg.next_column().unwrap() {
                match cw.untyped() {
                    ColumnWriter::Int64ColumnWriter(t) => {
                        let v: Vec<i64> = (0..50).map(|i| g * 1000 + i * 7).collect();
                        t.write_batch(&v, None, None).unwrap();
                    }
                    ColumnWriter::ByteArrayColumnWriter(t) => {
                        let defs: Vec<i16> = (0..50).map(|i| i16::from(i % 4 != 0)).collect();
                        let n = defs.iter().filter(|&&d| d == 1).count();
                        let v: Vec<ByteArray> = (0..n)
                            .map(|i| ByteArray::from(format!("v{g}-{:03}", i * 3).into_bytes()))
                            .collect();
                        t.write_batch(&v, Some(&defs), None).unwrap();
                    }
                    _ => unreachable!(),
                }
                cw.close().unwrap();
            }
            rg.close().unwrap();
        }
        w.into_inner().unwrap()
    }

    fn decryption() -> Arc<FileDecryptionProperties> {
        FileDecryptionProperties::builder(FOOTER_KEY.to_vec())
            .with_column_key("b", KEY_B.to_vec())
            .with_aad_prefix(PREFIX.to_vec())
            .build()
            .unwrap()
    }

    fn read(file: &[u8], decrypt: bool) -> parquet::errors::Result<ParquetMetaData> {
        let mut reader =
            ParquetMetaDataReader::new().with_page_index_policy(PageIndexPolicy::Required);
        if decrypt {
            reader = reader.with_decryption_properties(Some(decryption()));
        }
        reader.parse_and_finish(&Bytes::copy_from_slice(file))
    }

    /// The file AAD (`aad_prefix ‖ aad_file_unique`) and the framed footer module of an
    /// encrypted-footer file: `FileCryptoMetaData ‖ footer module ‖ len ‖ "PARE"`.
    fn file_aad_and_footer(file: &[u8]) -> (Vec<u8>, &[u8]) {
        assert_eq!(&file[file.len() - 4..], b"PARE");
        let len = u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into().unwrap());
        let start = file.len() - 8 - len as usize;
        let tail = &file[start..file.len() - 8];
        let mut r = Reader::new(tail, start as u64);
        let mut unique = None;
        let mut st = r.enter_struct().unwrap();
        while let Some(f) = r.next_field(&mut st).unwrap() {
            if f.id != 1 {
                r.skip_field(f).unwrap();
                continue;
            }
            let mut alg = r.field_struct(f).unwrap(); // union EncryptionAlgorithm
            while let Some(af) = r.next_field(&mut alg).unwrap() {
                assert_eq!(af.id, 1, "AES_GCM_V1");
                let mut gcm = r.field_struct(af).unwrap();
                while let Some(gf) = r.next_field(&mut gcm).unwrap() {
                    match gf.id {
                        2 => unique = Some(r.field_binary(gf).unwrap().to_vec()),
                        _ => r.skip_field(gf).unwrap(),
                    }
                }
            }
        }
        let mut aad = PREFIX.to_vec(); // not stored: the reader supplies it
        aad.extend_from_slice(&unique.unwrap());
        (aad, &tail[r.index()..])
    }

    /// `row_groups[g].columns[c]` field `id` of a decrypted or plaintext FileMetaData.
    fn column_chunk_field(meta: &[u8], g: usize, c: usize, id: i16) -> Vec<u8> {
        let mut r = Reader::new(meta, 0);
        let mut st = r.enter_struct().unwrap();
        while let Some(f) = r.next_field(&mut st).unwrap() {
            if f.id != 4 {
                r.skip_field(f).unwrap();
                continue;
            }
            let groups = r.field_list(f, FieldType::Struct).unwrap();
            for gi in 0..groups.len as usize {
                let mut rgs = r.enter_struct().unwrap();
                if gi != g {
                    while let Some(x) = r.next_field(&mut rgs).unwrap() {
                        r.skip_field(x).unwrap();
                    }
                    continue;
                }
                while let Some(rf) = r.next_field(&mut rgs).unwrap() {
                    if rf.id != 1 {
                        r.skip_field(rf).unwrap();
                        continue;
                    }
                    let cols = r.field_list(rf, FieldType::Struct).unwrap();
                    for ci in 0..cols.len as usize {
                        let mut cs = r.enter_struct().unwrap();
                        while let Some(cf) = r.next_field(&mut cs).unwrap() {
                            if ci == c && cf.id == id {
                                return r.field_raw(cf).unwrap().to_vec();
                            }
                            r.skip_field(cf).unwrap();
                        }
                    }
                }
            }
        }
        panic!("row group {g} column {c} has no field {id}");
    }

    /// The top-level i64 fields of a ColumnMetaData struct.
    fn i64_fields(meta: &[u8]) -> std::collections::HashMap<i16, i64> {
        let mut r = Reader::new(meta, 0);
        let mut st = r.enter_struct().unwrap();
        let mut out = std::collections::HashMap::new();
        while let Some(f) = r.next_field(&mut st).unwrap() {
            if f.ty == FieldType::I64 {
                out.insert(f.id, r.field_i64(f).unwrap());
            } else {
                r.skip_field(f).unwrap();
            }
        }
        r.expect_end().unwrap();
        out
    }

    #[test]
    fn aad_and_framing_coincide_with_the_parquet_crate() {
        let enc = write(true);
        let plain = write(false);
        let (file_aad, footer_module) = file_aad_and_footer(&enc);

        // Footer module (type 0): decrypted with our framing and AAD, it is the FileMetaData
        // the parquet crate decoded.
        let aad = module_aad(&file_aad, AadModule::Footer, 0, 0).unwrap();
        let footer_len = 4 + u32::from_le_bytes(footer_module[..4].try_into().unwrap()) as usize;
        assert_eq!(footer_len, footer_module.len());
        let meta = decrypt_module(FOOTER_KEY, &aad, footer_module).unwrap();
        let wrong_prefix = module_aad(&file_aad[1..], AadModule::Footer, 0, 0).unwrap();
        assert!(decrypt_module(FOOTER_KEY, &wrong_prefix, footer_module).is_err());

        let enc_meta = read(&enc, true).unwrap();
        let plain_meta = read(&plain, false).unwrap();
        assert!(read(&enc, false).is_err(), "the oracle must need the keys");
        let plain_len =
            u32::from_le_bytes(plain[plain.len() - 8..plain.len() - 4].try_into().unwrap());
        let plain_footer = &plain[plain.len() - 8 - plain_len as usize..plain.len() - 8];
        let mut modules = 0;
        for g in 0..3usize {
            // ColumnMetaData module (type 1, what our statistics modules use): column b's
            // metadata, under its own key, is the plaintext file's ColumnChunk.meta_data.
            let framed = column_chunk_field(&meta, g, 1, 9); // encrypted_column_metadata
            let mut r = Reader::new(&framed, 0);
            let framed = r.binary().unwrap();
            let aad = module_aad(&file_aad, AadModule::ColumnMetaData, g as u32, 1).unwrap();
            let column_meta = decrypt_module(KEY_B, &aad, framed).unwrap();
            // Equal to the plaintext file's but for the sizes and offsets (encrypted pages
            // are longer), and to what the parquet crate decrypted itself.
            let fields = i64_fields(&column_meta);
            let plain_fields = i64_fields(&column_chunk_field(plain_footer, g, 1, 3));
            let cc = enc_meta.row_group(g).column(1);
            assert_eq!(fields[&5], cc.num_values());
            assert_eq!(fields[&5], plain_fields[&5]);
            assert_eq!(fields[&6], cc.uncompressed_size());
            assert_eq!(fields[&7], cc.compressed_size());
            assert_eq!(fields[&9], cc.data_page_offset());
            let other_rg =
                module_aad(&file_aad, AadModule::ColumnMetaData, g as u32 + 1, 1).unwrap();
            assert!(decrypt_module(KEY_B, &other_rg, framed).is_err());

            // ColumnIndex module (type 6): decrypts to the plaintext file's column index, and
            // our re-encryption of that plaintext is accepted by the parquet crate.
            let range = enc_meta
                .row_group(g)
                .column(1)
                .column_index_range()
                .unwrap();
            let (a, b) = (range.start as usize, range.end as usize);
            let prange = plain_meta
                .row_group(g)
                .column(1)
                .column_index_range()
                .unwrap();
            let plain_ci = &plain[prange.start as usize..prange.end as usize];
            let aad = module_aad(&file_aad, AadModule::ColumnIndex, g as u32, 1).unwrap();
            assert_eq!(decrypt_module(KEY_B, &aad, &enc[a..b]).unwrap(), plain_ci);
            let ours = encrypt_module(KEY_B, &aad, &[g as u8 + 1; 12], plain_ci).unwrap();
            assert_eq!(ours.len(), b - a);
            let mut spliced = enc.clone();
            spliced[a..b].copy_from_slice(&ours);
            assert_ne!(spliced, enc);
            let reread = read(&spliced, true).unwrap();
            assert_eq!(
                format!(
                    "{:?}",
                    reread.page_index_for_row_group(g).column_index(1).unwrap()
                ),
                format!(
                    "{:?}",
                    enc_meta
                        .page_index_for_row_group(g)
                        .column_index(1)
                        .unwrap()
                )
            );
            // The same bytes under a wrong ordinal in the AAD: the parquet crate refuses them.
            let wrong = module_aad(&file_aad, AadModule::ColumnIndex, g as u32, 0).unwrap();
            let ours = encrypt_module(KEY_B, &wrong, &[7; 12], plain_ci).unwrap();
            spliced[a..b].copy_from_slice(&ours);
            assert!(read(&spliced, true).is_err());
            modules += 3;
        }
        assert_eq!(modules, 9);
    }
}

/// Real files (pyarrow with a page index, DuckDB) read losslessly, then encrypted whole: every
/// decrypted column index equals the plaintext conversion's, level histograms included.
#[cfg(feature = "parquet")]
#[test]
fn real_files_with_level_histograms_decrypt_to_the_plaintext_column_index() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/footer/writers");
    let mut histograms = 0usize;
    for name in ["pyarrow_page_index.parquet", "duckdb.parquet"] {
        let file = std::fs::read(format!("{dir}/{name}")).unwrap();
        let (input, data_end) = lakecore::footer::read_standard(&file).unwrap();
        let c = input.num_columns;
        let protect: Vec<u32> = (0..c).collect();
        let mut plain = file[..data_end].to_vec();
        input.write(&mut plain).unwrap();
        let mut encrypted = file[..data_end].to_vec();
        input
            .write_encrypted(&mut encrypted, &config(&protect, None))
            .unwrap();
        let p = ModularFooter::parse(&plain).unwrap();
        let e = ModularFooter::parse(&encrypted).unwrap();
        let keys = all_keys(c);
        for col in 0..c {
            for rg in 0..p.num_row_groups() {
                let want = p.column_index(col, rg).unwrap();
                let got = e.decrypt_column_index(col, rg, &keys).unwrap();
                let (Some(want), Some(got)) = (want, got) else {
                    continue;
                };
                let got = got.column_index().unwrap();
                let values = |h: Option<lakecore::footer::ArrayPage<'_>>| {
                    h.map(|h| h.window_values().collect::<Vec<u64>>())
                };
                assert_eq!(got.len(), want.len(), "{name} column {col} row group {rg}");
                for i in 0..want.len() {
                    assert_eq!(got.is_null_page(i).unwrap(), want.is_null_page(i).unwrap());
                }
                let h = values(want.definition_level_histograms);
                histograms += usize::from(h.is_some());
                assert_eq!(values(got.definition_level_histograms), h);
                assert_eq!(
                    values(got.repetition_level_histograms),
                    values(want.repetition_level_histograms)
                );
            }
        }
    }
    assert!(
        histograms > 0,
        "no level histogram met: the test proves nothing"
    );
}
