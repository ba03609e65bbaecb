//! `lakecore footer read` and `footer inspect` (schema, codecs, statistics) run as a process,
//! checked against the `parquet` crate reading the same data through the standard footer;
//! the peak RSS of `footer inspect` on a sparse 1 GB file is `tests/footer_rss.rs`.

use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lakecore"))
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lakecore-footer-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn writer_file(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/data/footer/writers/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// `name` converted to a modular footer on disk; returns (standard bytes, modular path).
fn modular(name: &str) -> (Bytes, PathBuf) {
    let standard = writer_file(name);
    let path = tmp(&format!("{name}.modular.parquet"));
    std::fs::write(&path, lakecore::footer::convert(&standard).unwrap()).unwrap();
    (Bytes::from(standard), path)
}

fn standard_rows(
    file: &Bytes,
    leaves: &[usize],
    row_groups: Option<Vec<usize>>,
    limit: Option<usize>,
) -> arrow_array::RecordBatch {
    let b = ParquetRecordBatchReaderBuilder::try_new(file.clone()).unwrap();
    let mask = ProjectionMask::leaves(b.parquet_schema(), leaves.iter().copied());
    let mut b = b.with_projection(mask);
    if let Some(rg) = row_groups {
        b = b.with_row_groups(rg);
    }
    if let Some(n) = limit {
        b = b.with_limit(n);
    }
    let batches: Vec<_> = b.build().unwrap().collect::<Result<_, _>>().unwrap();
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap()
}

fn parquet_rows(path: &Path) -> arrow_array::RecordBatch {
    let bytes = Bytes::from(std::fs::read(path).unwrap());
    let batches: Vec<_> = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap()
}

#[test]
fn read_parquet_output_equals_the_standard_read() {
    for (name, columns, leaves, rgs, limit) in [
        // pyarrow: id is leaf 0; `address` a struct of two leaves (see the writers' README).
        (
            "pyarrow_page_index.parquet",
            "id,city",
            vec![0, 1],
            Some(vec![1, 3]),
            None,
        ),
        (
            "pyarrow_wide.parquet",
            "0,7,119",
            vec![0, 7, 119],
            None,
            Some(170),
        ),
        (
            "duckdb.parquet",
            "0,2",
            vec![0, 2],
            Some(vec![2]),
            Some(500),
        ),
    ] {
        let (standard, path) = modular(name);
        let out = tmp(&format!("{name}.read.parquet"));
        let mut cmd = bin();
        cmd.args(["footer", "read"])
            .arg(&path)
            .args(["--columns", columns, "--format", "parquet", "-o"])
            .arg(&out);
        if let Some(rg) = &rgs {
            let list: Vec<String> = rg.iter().map(|r| r.to_string()).collect();
            cmd.args(["--row-groups", &list.join(",")]);
        }
        if let Some(n) = limit {
            cmd.args(["--limit", &n.to_string()]);
        }
        let o = cmd.output().unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let expected = standard_rows(&standard, &leaves, rgs, limit);
        let got = parquet_rows(&out);
        assert_eq!(got.num_rows(), expected.num_rows(), "{name}");
        assert_eq!(got.columns(), expected.columns(), "{name}");
    }
}

#[test]
fn read_csv_and_json_match_the_standard_read() {
    let (standard, path) = modular("pyarrow_wide.parquet");
    let expected = standard_rows(&standard, &[0, 1], None, Some(20));
    let json = bin()
        .args(["footer", "read"])
        .arg(&path)
        .args(["--columns", "0,1", "--format", "json", "--limit", "20"])
        .output()
        .unwrap();
    assert!(
        json.status.success(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 20);
    let name0 = expected.schema().field(0).name().clone();
    let col0 = arrow_cast_values(expected.column(0));
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(
            row[&name0].to_string().trim_matches('"'),
            col0[i],
            "row {i}"
        );
    }
    let csv = bin()
        .args(["footer", "read"])
        .arg(&path)
        .args(["--columns", "0,1", "--limit", "20"])
        .output()
        .unwrap();
    assert!(csv.status.success());
    let text = String::from_utf8(csv.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 21, "header + 20 rows");
    assert!(lines[0].starts_with(&name0));
    for (i, line) in lines[1..].iter().enumerate() {
        assert_eq!(line.split(',').next().unwrap(), col0[i], "row {i}");
    }
}

/// The values of an integer or string column as text.
fn arrow_cast_values(a: &arrow_array::ArrayRef) -> Vec<String> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int32Type, Int64Type};
    use arrow_schema::DataType;
    (0..a.len())
        .map(|i| match a.data_type() {
            DataType::Int32 => a.as_primitive::<Int32Type>().value(i).to_string(),
            DataType::Int64 => a.as_primitive::<Int64Type>().value(i).to_string(),
            DataType::Utf8 => a.as_string::<i32>().value(i).to_string(),
            t => panic!("column type {t}"),
        })
        .collect()
}

#[test]
fn bad_inputs_exit_2_and_write_nothing() {
    let (_, path) = modular("duckdb_snappy.parquet");
    let out = tmp("never.csv");
    let o = bin()
        .args(["footer", "read"])
        .arg(&path)
        .args(["--columns", "no_such_column", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no_such_column"), "{err}");
    assert!(!out.exists());
    // A standard file: says so and names `footer convert`.
    let standard = tmp("standard.parquet");
    std::fs::write(&standard, writer_file("duckdb_snappy.parquet")).unwrap();
    for sub in ["read", "inspect"] {
        let o = bin().args(["footer", sub]).arg(&standard).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{sub}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("standard Parquet") && err.contains("footer convert"),
            "{err}"
        );
    }
    // -o equal to the input: refused, the input unchanged.
    let before = std::fs::read(&path).unwrap();
    let o = bin()
        .args(["footer", "read"])
        .arg(&path)
        .args(["--format", "parquet", "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn inspect_shows_types_codecs_and_statistics() {
    let (standard, path) = modular("pyarrow_page_index.parquet");
    let md = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&standard)
        .unwrap();
    let descr = md.file_metadata().schema_descr();
    for leaf in [0usize, 1, descr.num_columns() - 1] {
        let c = descr.column(leaf);
        let dotted = c.path().string();
        for selector in [leaf.to_string(), dotted.clone()] {
            let o = bin()
                .args(["footer", "inspect", "--json", "--column", &selector])
                .arg(&path)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let text = String::from_utf8(o.stdout).unwrap();
            let columns: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(columns["num_columns"], descr.num_columns());
            let col = &columns["columns"][0];
            assert_eq!(col["leaf"], leaf);
            assert_eq!(col["path"], dotted);
            assert_eq!(col["physical_type"], c.physical_type().to_string());
            for (g, rg) in md.row_groups().iter().enumerate() {
                let chunk = rg.column(leaf);
                let got = &col["row_groups"][g];
                let codec = format!("{:?}", chunk.compression());
                assert!(
                    codec.starts_with(got["codec"].as_str().unwrap()),
                    "{codec} {got}"
                );
                assert_eq!(got["num_values"], chunk.num_values());
                let stats = chunk.statistics().unwrap();
                assert_eq!(
                    got["statistics"].as_str().unwrap(),
                    stats.to_string(),
                    "leaf {leaf} row group {g}"
                );
            }
        }
    }
    let o = bin()
        .args(["footer", "inspect", "--column", "nope"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nope"));
}
