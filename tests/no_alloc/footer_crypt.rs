#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(all(feature = "encryption", feature = "std"))]
//! A footer with encrypted columns: the plaintext path (open, validate, every accessor) and
//! the key-less look at the STATISTICS_ENCRYPTION module allocate nothing; only decryption
//! does (decrypted bytes must live somewhere).

use lakecore::footer::{ColumnEncryption, EncryptionConfig, ModularFooter, StaticKeys};
use lakecore_testkit::counting;
use lakecore_testkit::footer::random_input;

#[test]
fn plaintext_path_of_an_encrypted_footer_does_not_allocate() {
    let (input, data_len) = random_input(98, 8, 4);
    let config = EncryptionConfig {
        footer_key: Some(vec![5; 32]),
        columns: vec![
            ColumnEncryption::with_footer_key(2),
            ColumnEncryption::with_key(5, vec![6; 16], b"k5".to_vec()),
        ],
        ..EncryptionConfig::default()
    };
    let mut file = b"PAR1".to_vec();
    file.resize(data_len, 0);
    input.write_encrypted(&mut file, &config).unwrap();
    let keys = StaticKeys::new().with(b"", &[5; 32]).with(b"k5", &[6; 16]);

    let mut sink = 0u64;
    let before = counting::calls();
    let f = ModularFooter::parse(&file).unwrap();
    f.validate().unwrap();
    let enc = f.statistics_encryption().unwrap().unwrap();
    for col in enc.columns() {
        let col = col.unwrap();
        sink += u64::from(col.column);
        for g in 0..f.num_row_groups() {
            sink += col.statistics_range(g).unwrap().1;
        }
    }
    for c in 0..f.num_columns() {
        sink += u64::from(enc.encrypted_column(c).unwrap().is_some());
        for g in 0..f.num_row_groups() {
            sink += f.chunk_placement(c, g).unwrap().data_page_offset;
            if let Some(s) = f.chunk_statistics(c, g).unwrap() {
                sink += s.null_count.unwrap_or(0);
            }
            if let Some(ci) = f.column_index(c, g).unwrap() {
                sink += ci.len() as u64;
            }
        }
    }
    assert_eq!(
        counting::calls() - before,
        0,
        "allocations on the plaintext path"
    );
    assert!(sink > 0);

    // Decryption allocates (and works on the same footer).
    let before = counting::calls();
    let d = f.decrypt_statistics(5, 0, &keys).unwrap();
    let d2 = f.decrypt_column_index(2, 1, &keys).unwrap();
    if d.is_some() || d2.is_some() {
        assert!(counting::calls() > before);
    }
}
