#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
//! `lakecore footer convert --encrypt-columns ... --key-file K` and `footer inspect
//! --key-file K` as a process: the protected column's decrypted statistics equal the
//! `parquet` crate's statistics of the original file; wrong and missing keys fail naming the
//! column; failed conversions write nothing.

use bytes::Bytes;
use lakecore::footer::{ModularFooter, StaticKeys};
use parquet::data_type::Int64Type;
use parquet::file::metadata::ParquetMetaDataReader;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;

const FOOTER_KEY: &str = "000102030405060708090a0b0c0d0e0f";
const B_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

fn tmp(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("lakecore-footer-crypt-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lakecore"))
        .args(args)
        .output()
        .unwrap()
}

fn parquet_file() -> Vec<u8> {
    let schema = Arc::new(
        parse_message_type("message m { optional int64 a; optional int64 b; optional int64 c; }")
            .unwrap(),
    );
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(Vec::new(), schema, props).unwrap();
    for g in 0..3i64 {
        let mut rg = w.next_row_group().unwrap();
        while let Some(mut col) = rg.next_column().unwrap() {
            let v: Vec<i64> = (0..40).map(|i| (i % 9) * (g + 2) - 5).collect();
            let defs: Vec<i16> = (0..50).map(|i| i16::from(i % 5 != 0)).collect();
            col.typed::<Int64Type>()
                .write_batch(&v, Some(&defs), None)
                .unwrap();
            col.close().unwrap();
        }
        rg.close().unwrap();
    }
    w.into_inner().unwrap()
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn convert_with_encrypted_columns_and_inspect_with_keys() {
    let original = parquet_file();
    let md = ParquetMetaDataReader::new()
        .parse_and_finish(&Bytes::from(original.clone()))
        .unwrap();
    let input = tmp("in.parquet");
    let output = tmp("out.parquet");
    let keys = tmp("keys.txt");
    let wrong = tmp("wrong.txt");
    std::fs::write(&input, &original).unwrap();
    std::fs::write(
        &keys,
        format!("# test keys\nfooter={FOOTER_KEY}\nb={B_KEY}\n"),
    )
    .unwrap();
    std::fs::write(
        &wrong,
        format!("footer={FOOTER_KEY}\nb={}\n", B_KEY.replace('0', "1")),
    )
    .unwrap();

    let out = run(&[
        "footer".as_ref(),
        "convert".as_ref(),
        input.as_ref(),
        "-o".as_ref(),
        output.as_ref(),
        "--encrypt-columns".as_ref(),
        "b,c".as_ref(),
        "--key-file".as_ref(),
        keys.as_ref(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = std::fs::read(&output).unwrap();
    let f = ModularFooter::parse(&file).unwrap();
    f.validate().unwrap();
    let retriever = StaticKeys::new()
        .with(b"footer", &hex_bytes(FOOTER_KEY))
        .with(b"b", &hex_bytes(B_KEY));
    for g in 0..3u32 {
        let rg = md.row_group(g as usize);
        // Column a: plaintext, no key needed, equal to the parquet crate's statistics.
        let a = f.chunk_statistics(0, g).unwrap().unwrap();
        let want = rg.column(0).statistics().unwrap();
        assert!(a.min.unwrap().eq_bytes(want.min_bytes_opt().unwrap()));
        // Columns b (own key) and c (footer key): hidden in plaintext, equal once decrypted.
        for c in [1u32, 2] {
            let hidden = f.chunk_statistics(c, g).unwrap().unwrap();
            assert_eq!((hidden.min, hidden.null_count), (None, None));
            let want = rg.column(c as usize).statistics().unwrap();
            let d = f.decrypt_statistics(c, g, &retriever).unwrap().unwrap();
            let s = d.statistics().unwrap();
            assert!(s.min.unwrap().eq_bytes(want.min_bytes_opt().unwrap()));
            assert!(s.max.unwrap().eq_bytes(want.max_bytes_opt().unwrap()));
            assert_eq!(s.null_count, want.null_count_opt());
        }
    }

    let text = |o: &Output| String::from_utf8_lossy(&o.stdout).into_owned();
    let out = run(&["footer".as_ref(), "inspect".as_ref(), output.as_ref()]);
    assert!(out.status.success());
    assert!(
        text(&out).contains("column 1 'b': encrypted, key 'b'"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("column 2 'c': encrypted, key 'footer'"));
    // Without keys the encryption section lists the columns and decrypts nothing (the
    // schema section before it shows the plaintext columns' statistics).
    let t = text(&out);
    let section = &t[t.find("statistics encryption (module at byte").unwrap()..];
    assert!(!section.contains("row group 0:"), "{section}");
    let out = run(&[
        "footer".as_ref(),
        "inspect".as_ref(),
        output.as_ref(),
        "--key-file".as_ref(),
        keys.as_ref(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        text(&out).matches("    row group ").count(),
        6,
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("nulls 10"), "{}", text(&out));

    // A wrong key: exit 2, naming the column.
    let out = run(&[
        "footer".as_ref(),
        "inspect".as_ref(),
        output.as_ref(),
        "--key-file".as_ref(),
        wrong.as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("column 1 'b', row group 0") && err.contains("wrong key"),
        "{err}"
    );

    // No column of that name, or no key for it: nothing written.
    let missing = tmp("missing.parquet");
    let only_footer = tmp("only-b.txt");
    std::fs::write(&only_footer, format!("b={B_KEY}\n")).unwrap();
    for (cols, key_file) in [("zz", &keys), ("c", &only_footer)] {
        let out = run(&[
            "footer".as_ref(),
            "convert".as_ref(),
            input.as_ref(),
            "-o".as_ref(),
            missing.as_ref(),
            "--encrypt-columns".as_ref(),
            cols.as_ref(),
            "--key-file".as_ref(),
            key_file.as_ref(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("'{cols}'")));
        assert!(!missing.exists());
    }
    // --encrypt-columns without --key-file is a usage error from the parser (exit 3, the
    // CLI's code for usage errors).
    let out = run(&[
        "footer".as_ref(),
        "convert".as_ref(),
        input.as_ref(),
        "-o".as_ref(),
        missing.as_ref(),
        "--encrypt-columns".as_ref(),
        "b".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(!missing.exists());
}
