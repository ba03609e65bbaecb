//! Real `.blob` files (pypaimon writer, `tests/data/paimon`) against their `.oracle.json`:
//! verify mode passes and every row's kind, payload offset, length and SHA-256 match.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "std")]

use lakecore::blob::{BlobFile, BlobOptions, CrcCoverage, FileFacts, Row, RowRange};
use lakecore::codec::checksum::sha256;
use lakecore_testkit::data::{blob_files, oracle};
use lakecore_testkit::hex::hex;

#[test]
fn every_real_file_matches_its_oracle() {
    let files = blob_files();
    assert!(files.len() >= 10, "found {} .blob files", files.len());
    let mut rows_checked = 0;
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let oracle = oracle(path);
        let row_count = oracle["row_count"].as_u64().unwrap();
        let expected = FileFacts {
            row_count: Some(row_count),
            file_size: Some(oracle["file_size"].as_u64().unwrap()),
        };
        let file = BlobFile::parse_with(&bytes, &BlobOptions { expected })
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            file.data_len(),
            oracle["records_region_end"].as_u64().unwrap()
        );
        assert_eq!(
            hex(file.index_bytes()),
            oracle["index_hex"].as_str().unwrap()
        );
        let counts = &oracle["counts"];
        assert_eq!(file.values(), counts["blob"].as_u64().unwrap());
        assert_eq!(file.nulls(), counts["null"].as_u64().unwrap());
        assert_eq!(file.placeholders(), counts["placeholder"].as_u64().unwrap());

        let report = file.verify().unwrap();
        let all_crc_ok = oracle["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["kind"] == "blob")
            .all(|r| r["crc32_ok"] == true);
        assert!(all_crc_ok);
        // FileFacts coverage from a naive per-record check in the test (the corpus README
        // says pypaimon hashes magic + payload only; these files all hash the length too).
        let (mut full, mut payload_only) = (0u64, 0u64);
        for r in oracle["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["kind"] == "blob")
        {
            let at = r["record_offset"].as_u64().unwrap() as usize;
            let len = r["bin_length"].as_u64().unwrap() as usize;
            let record = &bytes[at..at + len];
            let stored = u32::from_le_bytes(record[len - 4..].try_into().unwrap());
            assert_eq!(stored as u64, r["crc32_stored_le_u32"].as_u64().unwrap());
            if crc32fast::hash(&record[..len - 4]) == stored {
                full += 1;
            } else if crc32fast::hash(&record[..len - 12]) == stored {
                payload_only += 1;
            } else {
                panic!("record at {at}: no coverage matches");
            }
        }
        assert_eq!((report.full, report.payload_only), (full, payload_only));
        let want = match (full, payload_only) {
            (0, 0) => CrcCoverage::NoRecords,
            (_, 0) => CrcCoverage::Full,
            (0, _) => CrcCoverage::PayloadOnly,
            _ => CrcCoverage::Mixed,
        };
        assert_eq!(report.coverage(), want, "{}", path.display());

        let rows: Vec<Row> = file.iter().collect();
        let table = file.offsets_table().unwrap();
        let want_rows = oracle["rows"].as_array().unwrap();
        assert_eq!(rows.len(), want_rows.len());
        for (i, (row, want)) in rows.iter().zip(want_rows).enumerate() {
            assert_eq!(want["row"].as_u64().unwrap(), i as u64);
            assert_eq!(row.bin_length(), want["bin_length"].as_i64().unwrap());
            assert_eq!(table.get(i), Some(*row));
            let single: Vec<_> = file
                .select(&[RowRange::single(i as u64)])
                .unwrap()
                .collect();
            assert_eq!(single, [(i as u64, *row)]);
            match (want["kind"].as_str().unwrap(), row) {
                ("blob", Row::Value(p)) => {
                    assert_eq!(p.offset, want["payload_offset"].as_u64().unwrap());
                    assert_eq!(
                        p.bytes.len() as u64,
                        want["payload_length"].as_u64().unwrap()
                    );
                    assert_eq!(
                        hex(&sha256(p.bytes)),
                        want["payload_sha256"].as_str().unwrap()
                    );
                    assert!(hex(p.bytes).starts_with(want["payload_prefix_hex"].as_str().unwrap()));
                }
                ("null", Row::Null) | ("placeholder", Row::Placeholder) => {}
                (kind, row) => panic!("{} row {i}: oracle {kind}, got {row:?}", path.display()),
            }
            rows_checked += 1;
        }
    }
    assert!(rows_checked >= 100, "{rows_checked}");
}

#[test]
fn real_files_reject_wrong_expectations() {
    for path in blob_files() {
        let bytes = std::fs::read(&path).unwrap();
        let oracle = oracle(&path);
        let rows = oracle["row_count"].as_u64().unwrap();
        let e = BlobFile::parse_with(
            &bytes,
            &BlobOptions {
                expected: FileFacts {
                    row_count: Some(rows + 1),
                    file_size: None,
                },
            },
        )
        .unwrap_err();
        assert_eq!(e.kind, lakecore::ErrorKind::Mismatch);
        assert_eq!(
            e.offset,
            oracle["trailer"]["index_offset"].as_u64().unwrap()
        );
        let e = BlobFile::parse_with(
            &bytes,
            &BlobOptions {
                expected: FileFacts {
                    row_count: None,
                    file_size: Some(bytes.len() as u64 - 1),
                },
            },
        )
        .unwrap_err();
        assert_eq!(e.kind, lakecore::ErrorKind::Mismatch);
    }
}
