#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "encryption")]
//! Fuzz harness for the decrypting path of `footer::crypt`: arbitrary framed modules never
//! authenticate; mutated encrypted footers never panic and never decrypt to anything but
//! the original plaintext; hostile plaintext under a valid key (a malicious key holder)
//! never panics the page readers.

use lakecore::codec::thrift::{FieldType, Writer};
use lakecore::footer::{
    decrypt_module, encrypt_module, module_aad, AadModule, ColumnEncryption, EncryptionConfig,
    FooterInput, ModularFooter, StaticKeys, STATISTICS_ENCRYPTION_MODULE,
};
use lakecore_testkit::footer::random_input;

const KEY: [u8; 16] = *b"fuzz-key-0123456";

fn iterations(n: usize) -> usize {
    if cfg!(miri) {
        2
    } else {
        n
    }
}

fn keys() -> StaticKeys {
    StaticKeys::new().with(b"k", &KEY)
}

#[test]
fn arbitrary_modules_never_authenticate() {
    bolero::check!()
        .with_iterations(iterations(3000))
        .for_each(|bytes: &[u8]| {
            let aad = module_aad(b"file", AadModule::ColumnIndex, 0, 0).unwrap();
            assert!(decrypt_module(&KEY, &aad, bytes).is_err());
        });
}

#[test]
fn mutated_encrypted_footers_decrypt_to_the_original_or_fail() {
    bolero::check!()
        .with_type::<(u64, u8, u8, Vec<(u16, u8)>)>()
        .with_iterations(iterations(200))
        .for_each(|(seed, c, g, flips)| {
            let (c, g) = (u32::from(*c % 5) + 1, u32::from(*g % 4));
            let (input, data_len) = random_input(*seed, c, g);
            let config = EncryptionConfig {
                columns: (0..c)
                    .step_by(2)
                    .map(|i| ColumnEncryption::with_key(i, KEY.to_vec(), b"k".to_vec()))
                    .collect(),
                ..EncryptionConfig::default()
            };
            let mut file = b"PAR1".to_vec();
            file.resize(data_len, 0);
            input.write_encrypted(&mut file, &config).unwrap();
            let original = ModularFooter::parse(&file).unwrap();
            let mut m = file.clone();
            let meta = file.len() - data_len;
            for &(at, x) in flips {
                m[data_len + usize::from(at) % meta] ^= x;
            }
            let Ok(f) = ModularFooter::parse(&m) else {
                return;
            };
            for col in 0..c {
                for rg in 0..g {
                    if let Ok(Some(d)) = f.decrypt_statistics(col, rg, &keys()) {
                        let want = original.decrypt_statistics(col, rg, &keys()).unwrap();
                        assert_eq!(d.plaintext(), want.unwrap().plaintext());
                        let _ = d.statistics();
                    }
                    if let Ok(Some(d)) = f.decrypt_column_index(col, rg, &keys()) {
                        let want = original.decrypt_column_index(col, rg, &keys()).unwrap();
                        assert_eq!(d.plaintext(), want.unwrap().plaintext());
                        let _ = d
                            .column_index()
                            .map(|ci| (0..ci.len()).all(|i| ci.page(i).is_ok()));
                    }
                }
            }
        });
}

/// A one-column, one-row-group file whose encrypted statistics and column index hold
/// `plain` (authentic: encrypted under the right key and AAD).
fn file_with_plaintext(plain: &[u8]) -> Vec<u8> {
    let mut input = FooterInput::flat(&["a"], &[2], &[10]);
    input.chunks[0].num_values = 10;
    let mut file = b"PAR1".to_vec();
    file.resize(64, 0);
    input.write(&mut file).unwrap();
    let f = ModularFooter::parse(&file).unwrap();
    let modules: Vec<_> = f.modules().collect();
    let root = f.root_offset() as usize;
    file.truncate(root);
    let unique = b"12345678";
    let mut offsets = vec![file.len() as i64];
    for module in [AadModule::ColumnMetaData, AadModule::ColumnIndex] {
        let aad = module_aad(unique, module, 0, 0).unwrap();
        file.extend_from_slice(&encrypt_module(&KEY, &aad, &[3; 12], plain).unwrap());
        offsets.push(file.len() as i64);
    }
    let at = file.len() as i64;
    let mut w = Writer::new();
    w.struct_begin();
    w.field_binary(1, unique);
    w.field_list(4, FieldType::Struct, 1);
    w.struct_begin();
    w.field_i32(1, 0);
    w.field_binary(2, b"k");
    w.field_list(3, FieldType::I64, 2);
    w.i64(offsets[0]);
    w.i64(offsets[1]);
    w.field_list(4, FieldType::I64, 2);
    w.i64(offsets[1]);
    w.i64(offsets[2]);
    w.struct_end();
    w.struct_end();
    file.extend_from_slice(w.as_bytes());
    let len = w.len() as i64;
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, 1);
    w.field_i32(2, 1);
    w.field_i32(3, 1);
    w.field_i64(4, 10);
    w.field_list(5, FieldType::I64, 1);
    w.i64(10);
    w.field_list(6, FieldType::Struct, modules.len() + 1);
    let all = modules
        .iter()
        .map(|m| {
            (
                m.module.value(),
                m.encoding.value(),
                m.offset as i64,
                m.length as i64,
            )
        })
        .chain([(STATISTICS_ENCRYPTION_MODULE, 0, at, len)]);
    for (module, enc, offset, length) in all {
        w.struct_begin();
        w.field_i32(1, module);
        w.field_i32(2, enc);
        w.field_i64(3, offset);
        w.field_i64(4, length);
        w.struct_end();
    }
    w.struct_end();
    file.extend_from_slice(w.as_bytes());
    file.extend_from_slice(&(w.len() as u32).to_le_bytes());
    file.extend_from_slice(b"PARM");
    file
}

#[test]
fn hostile_plaintext_under_a_valid_key_never_panics() {
    // The harness's own file decrypts (so the hostile bytes do reach the page readers).
    let file = file_with_plaintext(b"");
    let f = ModularFooter::parse(&file).unwrap();
    assert!(f.decrypt_statistics(0, 0, &keys()).unwrap().is_some());
    bolero::check!()
        .with_iterations(iterations(2000))
        .for_each(|plain: &[u8]| {
            let file = file_with_plaintext(plain);
            let f = ModularFooter::parse(&file).unwrap();
            let s = f.decrypt_statistics(0, 0, &keys()).unwrap().unwrap();
            assert_eq!(s.plaintext(), plain);
            let _ = s.statistics();
            let ci = f.decrypt_column_index(0, 0, &keys()).unwrap().unwrap();
            let _ = ci
                .column_index()
                .map(|ci| (0..ci.len().min(64)).all(|i| ci.page(i).is_ok()));
        });
}
