#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
//! `lakecore footer ...` run as a process, checked against the `parquet` crate's metadata.

use bytes::Bytes;
use parquet::data_type::Int64Type;
use parquet::file::metadata::ParquetMetaDataReader;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lakecore"))
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lakecore-footer-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn small_parquet() -> Vec<u8> {
    let schema = Arc::new(
        parse_message_type("message m { required int64 a; optional int64 b; required int64 c; }")
            .unwrap(),
    );
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(Vec::new(), schema, props).unwrap();
    for g in 0..3i64 {
        let mut rg = w.next_row_group().unwrap();
        while let Some(mut col) = rg.next_column().unwrap() {
            let v: Vec<i64> = (0..50).map(|i| (i % 7) * (g + 1)).collect();
            let defs = vec![1i16; 50];
            col.typed::<Int64Type>()
                .write_batch(&v, Some(&defs), None)
                .unwrap();
            col.close().unwrap();
        }
        rg.close().unwrap();
    }
    w.into_inner().unwrap()
}

#[test]
fn convert_inspect_placement_and_errors() {
    let original = small_parquet();
    let md = ParquetMetaDataReader::new()
        .parse_and_finish(&Bytes::from(original.clone()))
        .unwrap();
    let input = tmp("in.parquet");
    let output = tmp("out.parquet");
    std::fs::write(&input, &original).unwrap();

    let out = bin()
        .args(["footer", "convert"])
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = bin()
        .args(["footer", "inspect"])
        .arg(&output)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["num_row_groups"], 3);
    assert_eq!(v["num_columns"], 3);
    assert_eq!(v["num_rows"], md.file_metadata().num_rows());
    let modules: Vec<&str> = v["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["module"].as_str().unwrap())
        .collect();
    assert_eq!(
        modules,
        [
            "SCHEMA",
            "PLACEMENT",
            "ROW_GROUP_STATS",
            "OFFSET_INDEX",
            "COLUMN_INDEX",
            "FILE_METADATA",
            "ROW_GROUPS"
        ]
    );

    let out = bin()
        .args(["footer", "placement"])
        .arg(&output)
        .args(["--column", "1", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("{\"column\":1,\"chunks\":[{\"row_group\":0,\"data_page_offset\":"));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let chunks = v["chunks"].as_array().unwrap();
    assert_eq!(chunks.len(), 3);
    for (g, ch) in chunks.iter().enumerate() {
        let cc = md.row_group(g).column(1);
        let keys: Vec<&String> = ch.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 7);
        assert_eq!(ch["row_group"], g);
        assert_eq!(ch["data_page_offset"], cc.data_page_offset());
        let dict: Vec<i64> = cc.dictionary_page_offset().into_iter().collect();
        assert_eq!(ch["dictionary_page_offsets"], serde_json::json!(dict));
        assert_eq!(ch["total_compressed_size"], cc.compressed_size());
        assert_eq!(ch["total_uncompressed_size"], cc.uncompressed_size());
        assert_eq!(ch["num_values"], cc.num_values());
        assert_eq!(ch["codec"], 0);
    }

    // Invalid input: the original standard file has no modular footer.
    let out = bin()
        .args(["footer", "inspect"])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    let want = format!("invalid input: bad magic at byte {}", original.len() - 4);
    assert!(err.starts_with("error: ") && err.contains(&want), "{err}");
    assert_eq!(err.lines().count(), 1);
    // It says what the file is and the command that takes it.
    assert!(err.contains(&input.display().to_string()), "{err}");
    assert!(
        err.contains("the bytes look like a standard Parquet file"),
        "{err}"
    );
    assert!(
        err.contains(&format!("`lakecore footer convert {} -o ", input.display())),
        "{err}"
    );

    // Truncated modular footer.
    let bytes = std::fs::read(&output).unwrap();
    let cut = tmp("cut.parquet");
    let mut broken = bytes.clone();
    let n = broken.len();
    broken[n - 6] = 0xff; // root length far too large
    std::fs::write(&cut, &broken).unwrap();
    let out = bin()
        .args(["footer", "placement"])
        .arg(&cut)
        .args(["--column", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("invalid input: invalid length at byte"));

    // Column out of range.
    let out = bin()
        .args(["footer", "placement"])
        .arg(&output)
        .args(["--column", "3", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "a usage error");

    // Converting a non-Parquet file.
    let out = bin()
        .args(["footer", "convert"])
        .arg(&cut)
        .arg("-o")
        .arg(tmp("x"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(input.parent().unwrap());
}

/// `footer convert --to-standard` round trip through the binary on a real pyarrow file, and
/// the bad inputs of both directions: exit 2, an error saying what the file is and what to
/// do, nothing written.
#[test]
fn convert_to_standard_and_bad_inputs() {
    // Its own directory: the test above removes the shared one when it ends.
    let dir = std::env::temp_dir().join(format!("lakecore-footer-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mine = |name: &str| dir.join(name);
    let writers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/footer/writers");
    let original_path = writers.join("pyarrow_page_index.parquet");
    let original = std::fs::read(&original_path).unwrap();
    let modular = mine("rt-modular.parquet");
    let back = mine("rt-back.parquet");
    let run = |args: &[&std::ffi::OsStr]| {
        bin()
            .arg("footer")
            .arg("convert")
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&[
        original_path.as_os_str(),
        "-o".as_ref(),
        modular.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&[
        "--to-standard".as_ref(),
        modular.as_os_str(),
        "-o".as_ref(),
        back.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let back_bytes = std::fs::read(&back).unwrap();
    // The same bytes as the library's conversion, whose equality the footer tests check.
    let lib =
        lakecore::footer::to_standard(&lakecore::footer::convert(&original).unwrap()).unwrap();
    assert_eq!(back_bytes, lib);
    let md = ParquetMetaDataReader::new()
        .parse_and_finish(&Bytes::from(back_bytes))
        .unwrap();
    assert_eq!(md.num_row_groups(), 4);

    let nothing = mine("never-written.parquet");
    let truncated = mine("truncated.parquet");
    std::fs::write(&truncated, &original[..original.len() - 5]).unwrap();
    let text = mine("notes.txt");
    std::fs::write(&text, b"not parquet at all\n").unwrap();
    let cases: Vec<(Vec<&std::ffi::OsStr>, &str)> = vec![
        // Already modular.
        (
            vec![modular.as_os_str()],
            "the bytes look like a Parquet file with a modular footer",
        ),
        // Already standard, given to --to-standard.
        (
            vec!["--to-standard".as_ref(), original_path.as_os_str()],
            "the bytes look like a standard Parquet file (Thrift footer); convert it with",
        ),
        (vec![truncated.as_os_str()], "truncated"),
        (
            vec!["--to-standard".as_ref(), truncated.as_os_str()],
            "truncated",
        ),
        (vec![text.as_os_str()], "the bytes look like"),
    ];
    for (args, want) in cases {
        let mut all = args.clone();
        all.extend(["-o".as_ref(), nothing.as_os_str()]);
        let out = run(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!nothing.exists(), "{args:?} wrote its output");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
