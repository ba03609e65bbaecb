//! BLOB fixtures shared by the BLOB and CLI tests and the fuzz harness: a file builder from
//! row cells, the merge driver, the naive per-row model of the fallback merge, and the reader
//! exerciser.

use lakecore::blob::{
    BlobFile, BlobWriter, FallbackMerge, LayerFile, MergeOptions, MergedRow, RowRange,
};
use lakecore::ErrorKind;

/// Row cells: "P" placeholder, "N" null, anything else the value bytes.
pub fn write(cells: &[&str]) -> Vec<u8> {
    let mut w = BlobWriter::new(Vec::new());
    for c in cells {
        match *c {
            "P" => w.put_placeholder().unwrap(),
            "N" => w.put_null().unwrap(),
            v => {
                w.put_value(v.as_bytes()).unwrap();
            }
        }
    }
    w.finish().unwrap()
}

/// A test input: (seq, first_row_id, cells).
pub type Spec = (i64, u64, Vec<String>);

/// A [`Spec`] from borrowed cells.
pub fn spec(seq: i64, first: u64, cells: &[&str]) -> Spec {
    (seq, first, cells.iter().map(|s| s.to_string()).collect())
}

/// (row_id, seq, value) with value `None` for NULL.
pub type Out = (u64, i64, Option<String>);

/// Merges the files of `specs` (newest sequence number wins) and returns the rows, checking
/// on the way that the per-row iterator and the batch form agree.
pub fn merge(specs: &[Spec], options: MergeOptions<'_>) -> Result<Vec<Out>, lakecore::Error> {
    let bytes: Vec<Vec<u8>> = specs
        .iter()
        .map(|(_, _, cells)| write(&cells.iter().map(String::as_str).collect::<Vec<_>>()))
        .collect();
    let mut files: Vec<LayerFile> = specs
        .iter()
        .zip(&bytes)
        .map(|((seq, first, _), b)| LayerFile {
            file: BlobFile::parse(b).unwrap(),
            first_row_id: *first,
            max_sequence_number: *seq,
        })
        .collect();
    // The per-row iterator and the batch form must yield the same rows and the same error
    // after them.
    let mut by_batch: Vec<MergedRow> = Vec::new();
    let batch_error = {
        let mut merge = FallbackMerge::new(&mut files, options)?;
        loop {
            match merge.next_batch() {
                None => break None,
                Some(Err(e)) => break Some(e),
                Some(Ok(batch)) => {
                    assert!(!batch.is_empty());
                    for (i, row) in batch.iter().enumerate() {
                        assert_eq!(Some(row), batch.row(i));
                        assert_eq!(batch.row_ids()[i], row.row_id);
                        let entry = batch.entries()[i];
                        match row.value {
                            Some(p) => {
                                assert_eq!(entry, p.bytes.len() as i64 + 16);
                                assert_eq!(batch.record_offsets()[i] + 4, p.offset);
                            }
                            None => assert!(entry == -1 || entry == -2),
                        }
                        let file = batch.file_indexes()[i];
                        assert_eq!(row.file, (file != u64::MAX).then_some(file as usize));
                        assert_eq!(entry == -2, row.sequence_number == -1);
                        by_batch.push(row);
                    }
                }
            }
        }
    };
    let merge = FallbackMerge::new(&mut files, options)?;
    let sorted = merge.files();
    let mut out = Vec::new();
    let mut by_row: Vec<MergedRow> = Vec::new();
    let mut row_error = None;
    for row in merge {
        let row = match row {
            Ok(row) => row,
            Err(e) => {
                row_error = Some(e);
                break;
            }
        };
        by_row.push(row);
        let MergedRow {
            row_id,
            sequence_number,
            value,
            file,
        } = row;
        if let Some(p) = value {
            // The payload is a slice of the winning file at the stated offset.
            let f = sorted[file.unwrap()].file.bytes();
            assert_eq!(&f[p.offset as usize..][..p.bytes.len()], p.bytes);
            assert_eq!(sorted[file.unwrap()].max_sequence_number, sequence_number);
        }
        out.push((
            row_id,
            sequence_number,
            value.map(|p| String::from_utf8(p.bytes.to_vec()).unwrap()),
        ));
    }
    assert_eq!(by_batch, by_row);
    assert_eq!(batch_error, row_error);
    if let Some(e) = row_error {
        return Err(e);
    }
    Ok(out)
}

/// The naive model: per row ID, newest layer first, first non-placeholder wins; a row that is
/// a placeholder everywhere (one layer or several) is NULL with sequence number -1 (the
/// non-strict default).
pub fn model(
    specs: &[Spec],
    ranges: Option<&[RowRange]>,
    deleted: &[u64],
) -> Result<Vec<Out>, ErrorKind> {
    let mut seqs: Vec<i64> = specs.iter().map(|s| s.0).collect();
    seqs.sort_unstable_by(|a, b| b.cmp(a));
    seqs.dedup();
    let cell = |id: u64, seq: i64| -> Option<&str> {
        specs
            .iter()
            .filter(|s| s.0 == seq)
            .find(|s| s.1 <= id && id < s.1 + s.2.len() as u64)
            .map(|s| s.2[(id - s.1) as usize].as_str())
    };
    let nonempty = specs.iter().filter(|s| !s.2.is_empty());
    let Some(lo) = nonempty.clone().map(|s| s.1).min() else {
        return Ok(vec![]);
    };
    let hi = nonempty.map(|s| s.1 + s.2.len() as u64 - 1).max().unwrap();
    let mut out = Vec::new();
    for id in lo..=hi {
        if ranges.is_some_and(|r| !r.iter().any(|r| r.contains(id))) || deleted.contains(&id) {
            continue;
        }
        if seqs.len() == 1 {
            match cell(id, seqs[0]) {
                None => continue,
                Some("P") => out.push((id, -1, None)),
                Some("N") => out.push((id, seqs[0], None)),
                Some(v) => out.push((id, seqs[0], Some(v.to_string()))),
            }
            continue;
        }
        let mut row = (id, -1, None);
        for &seq in &seqs {
            match cell(id, seq) {
                None | Some("P") => continue,
                Some("N") => row = (id, seq, None),
                Some(v) => row = (id, seq, Some(v.to_string())),
            }
            break;
        }
        out.push(row);
    }
    Ok(out)
}

/// Runs every reader over `bytes` and checks the invariants an accepted file must keep:
/// row counts agree across the iterator, a full selection and the offsets table; a file
/// whose records all use one CRC coverage is reproduced byte for byte by the writer; nested
/// payloads that validate are reproduced by their encoders. Must never panic.
pub fn exercise(bytes: &[u8]) -> Result<(), lakecore::Error> {
    use lakecore::blob::{BlobArray, BlobMap, CrcCoverage, CrcMode, Row};
    let file = BlobFile::parse(bytes)?;
    let rows: Vec<Row> = file.iter().collect();
    assert_eq!(rows.len() as u64, file.rows());
    for row in &rows {
        if let Row::Value(p) = row {
            exercise_nested(p.bytes, p.offset);
        }
    }
    if file.rows() > 0 {
        let all: Vec<Row> = file
            .select(&[RowRange::new(0, file.rows() - 1)])?
            .map(|(_, r)| r)
            .collect();
        assert_eq!(all, rows);
    }
    let table = file.offsets_table()?;
    assert_eq!(table.len(), rows.len());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(table.get(i), Some(*r));
    }
    let report = file.verify()?;
    let mode = match report.coverage() {
        CrcCoverage::Full | CrcCoverage::NoRecords => Some(CrcMode::Full),
        CrcCoverage::PayloadOnly => Some(CrcMode::PayloadOnly),
        _ => None,
    };
    if let Some(mode) = mode {
        let mut w = BlobWriter::with_crc(Vec::new(), mode);
        for r in &rows {
            match r {
                Row::Null => w.put_null().unwrap(),
                Row::Placeholder => w.put_placeholder().unwrap(),
                Row::Value(p) => {
                    w.put_value(p.bytes).unwrap();
                }
            }
        }
        assert_eq!(w.finish().unwrap(), bytes);
    }
    let _ = (BlobArray::new(bytes, 0), BlobMap::new(bytes, 0));
    Ok(())
}

/// Nested views over `payload`; accepted payloads must round-trip through the encoders.
pub fn exercise_nested(payload: &[u8], origin: u64) {
    use lakecore::blob::{encode_array, encode_map, BlobArray, BlobMap};
    if let Ok(array) = BlobArray::new(payload, origin) {
        let elements: Vec<Option<&[u8]>> = array.iter().map(|e| e.map(|p| p.bytes)).collect();
        assert_eq!(elements.len(), array.len() as usize);
        let mut out = Vec::new();
        encode_array(elements, &mut out).unwrap();
        assert_eq!(out, payload);
    }
    if let Ok(map) = BlobMap::new(payload, origin) {
        let entries: Vec<_> = map
            .iter()
            .map(|(k, v)| (k.map(|p| p.bytes), v.map(|p| p.bytes)))
            .collect();
        assert_eq!(entries.len(), map.len() as usize);
        let mut out = Vec::new();
        encode_map(entries, &mut out).unwrap();
        assert_eq!(out, payload);
    }
}
