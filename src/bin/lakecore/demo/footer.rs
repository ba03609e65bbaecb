//! Demo section: modular footers written, validated and queried.

use super::Summary;
use crate::util::outln;
use crate::util::{CliResult, Failure};
use lakecore::footer::{convert, ModularFooter};

/// Demo section: convert a generated wide file, then read one column's placement from the
/// modular footer and from a full decode of the standard footer by the `parquet` crate.
pub(super) fn run(summary: &mut Summary) -> CliResult {
    use std::hint::black_box;
    use std::time::Instant;
    let (columns, row_groups) = (5_000usize, 10usize);
    outln!("\n== Parquet modular footer: {columns} columns x {row_groups} row groups");
    let standard = lakecore::footer::synthetic_standard_file(columns, row_groups, 7);
    let (start, len) = lakecore::footer::standard_footer_range(&standard)
        .map_err(|e| Failure::invalid("demo", e))?;
    let modular = convert(&standard).map_err(|e| Failure::invalid("demo", e))?;
    let footer = ModularFooter::parse(&modular).map_err(|e| Failure::invalid("demo", e))?;
    let meta = footer.file_len() - footer.metadata_start();
    outln!(
        "standard footer {len} B, modular footer {meta} B ({:.2}x), data region {start} B unchanged",
        meta as f64 / len as f64
    );
    let column = (columns / 2) as u32;
    let reps = 20;
    let t = Instant::now();
    let mut sum = 0u64;
    let standard_footer = standard.get(start..start + len).unwrap_or_default();
    for _ in 0..reps {
        let md = parquet::file::metadata::ParquetMetaDataReader::decode_metadata(black_box(
            standard_footer,
        ))
        .map_err(|e| Failure::Usage(format!("demo: parquet crate: {e}")))?;
        for rg in md.row_groups() {
            let c = rg
                .columns()
                .get(column as usize)
                .ok_or_else(|| Failure::Usage("demo: missing column".into()))?;
            sum = sum.wrapping_add(c.data_page_offset() as u64);
        }
    }
    let full = t.elapsed().as_secs_f64() / reps as f64;
    let reps_m = 2000;
    let t = Instant::now();
    let mut sum_m = 0u64;
    for _ in 0..reps_m {
        let f =
            ModularFooter::parse(black_box(&modular)).map_err(|e| Failure::invalid("demo", e))?;
        for g in 0..row_groups as u32 {
            let p = f
                .chunk_placement(column, g)
                .map_err(|e| Failure::invalid("demo", e))?;
            sum_m = sum_m.wrapping_add(p.data_page_offset);
        }
    }
    let projected = t.elapsed().as_secs_f64() / reps_m as f64;
    if sum / reps as u64 != sum_m / reps_m as u64 {
        return Err(Failure::Usage("demo: placements disagree".into()));
    }
    outln!(
        "column {column} placement: parquet crate standard footer decode {:.1} us, modular open + projected read {:.2} us ({:.0}x)",
        full * 1e6,
        projected * 1e6,
        full / projected.max(1e-12)
    );
    let (mut first, mut last, mut compressed) = (u64::MAX, 0u64, 0u64);
    for g in 0..footer.num_row_groups() {
        let p = footer
            .chunk_placement(column, g)
            .map_err(|e| Failure::invalid("demo", e))?;
        first = first.min(p.data_page_offset);
        last = last.max(p.data_page_offset);
        compressed += p.total_compressed_size;
    }
    outln!(
        "column {column}: {} chunks, data pages at bytes {first}..={last}, {compressed} compressed bytes (`lakecore footer` prints them all)",
        footer.num_row_groups()
    );
    summary.push(format!(
        "footer: one column's placement {:.2} us from the modular footer vs {:.0} us decoding the standard one ({:.0}x), footer {:.2}x the size",
        projected * 1e6,
        full * 1e6,
        full / projected.max(1e-12),
        meta as f64 / len as f64
    ));
    Ok(())
}
