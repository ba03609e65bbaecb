//! Demo section: BLOB partial-update layers, validated and merged.

use super::Summary;
use crate::util::outln;
use crate::util::{rate, CliResult, Failure};
use lakecore::blob::{
    BlobFile, BlobWriter, FallbackMerge, LayerFile, MergeOptions, RECORD_OVERHEAD,
};
use std::time::Instant;

/// Demo section: three partial-update layers of `rows` rows, validated and merged.
pub(super) fn run(rows: u64, summary: &mut Summary) -> CliResult {
    outln!("\n== blob: three partial-update layers of {rows} rows, fallback merge");
    let mut rng = lakecore::paimon::synth::Rng::new(7);
    let start = Instant::now();
    let mut layers = Vec::new();
    // seq 1 writes every row; seq 2 rewrites ~1/4 of them; seq 3 nulls or rewrites ~1/16.
    for (seq, keep_one_in) in [(1i64, 1u64), (2, 4), (3, 16)] {
        let mut w = BlobWriter::new(Vec::new());
        for i in 0..rows {
            let r = rng.next_u64();
            let result = if !r.is_multiple_of(keep_one_in) {
                w.put_placeholder().map(|()| 0)
            } else if seq == 3 && r & 0x100 != 0 {
                w.put_null().map(|()| 0)
            } else {
                w.put_value(&(i ^ ((seq as u64) << 56)).to_le_bytes())
            };
            result.map_err(|e| Failure::Usage(format!("demo writer: {e}")))?;
        }
        layers.push((
            seq,
            w.finish()
                .map_err(|e| Failure::Usage(format!("demo writer: {e}")))?,
        ));
    }
    let write = start.elapsed().as_secs_f64();
    let bytes: usize = layers.iter().map(|(_, b)| b.len()).sum();
    outln!(
        "wrote 3 layers, {bytes} bytes: {}",
        rate(3 * rows, write, " rows")
    );

    let start = Instant::now();
    let mut files = Vec::new();
    for (seq, b) in &layers {
        let file = BlobFile::parse(b).map_err(|e| Failure::invalid("demo", e))?;
        files.push(LayerFile {
            file,
            first_row_id: 0,
            max_sequence_number: *seq,
        });
    }
    let validate = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let (mut nulls, mut by_seq) = (0u64, [0u64; 4]);
    let mut payload_bytes = 0usize;
    for row in FallbackMerge::new(&mut files, MergeOptions::default())
        .map_err(|e| Failure::invalid("demo", e))?
    {
        let row = row.map_err(|e| Failure::invalid("demo", e))?;
        match row.value {
            None => nulls += 1,
            Some(p) => payload_bytes += p.bytes.len(),
        }
        if let Some(n) = usize::try_from(row.sequence_number)
            .ok()
            .and_then(|s| by_seq.get_mut(s))
        {
            *n += 1;
        }
    }
    let merge = start.elapsed().as_secs_f64();
    outln!(
        "validate 3 files: {}  |  merge: {}  (winners seq1 {} / seq2 {} / seq3 {}, {nulls} null, {payload_bytes} payload bytes borrowed, none copied)",
        rate(3 * rows, validate, " rows"),
        rate(rows, merge, " rows"),
        by_seq[1],
        by_seq[2],
        by_seq[3]
    );

    // The columnar form: the same merge as batches of (entry, file, record offset).
    let start = Instant::now();
    let (mut batch_rows, mut batch_payload) = (0u64, 0u64);
    let mut merged = FallbackMerge::new(&mut files, MergeOptions::default())
        .map_err(|e| Failure::invalid("demo", e))?;
    while let Some(batch) = merged.next_batch() {
        let batch = batch.map_err(|e| Failure::invalid("demo", e))?;
        batch_rows += batch.len() as u64;
        batch_payload += batch
            .entries()
            .iter()
            .map(|&e| u64::try_from(e - RECORD_OVERHEAD as i64).unwrap_or(0))
            .sum::<u64>();
    }
    let batched = start.elapsed().as_secs_f64();
    if batch_rows != rows || batch_payload != payload_bytes as u64 {
        return Err(Failure::Usage(format!(
            "demo: batch merge disagrees ({batch_rows} rows, {batch_payload} payload bytes)"
        )));
    }
    outln!("merge as batches: {}", rate(rows, batched, " rows"));
    summary.push(format!(
        "blob: validate {}, three-layer merge {} per row, {} as batches (payloads borrowed, none copied)",
        rate(3 * rows, validate, " rows"),
        rate(rows, merge, " rows"),
        rate(rows, batched, " rows")
    ));
    Ok(())
}
