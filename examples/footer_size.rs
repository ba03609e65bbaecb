//! Where the bytes of a modular footer go, against the standard footer plus page index of
//! the same file (`benches/footer_size.py` drives it on pyarrow files; feature `parquet`).
//!
//! ```sh
//! cargo run --release --features parquet --example footer_size -- FILE.parquet...
//! ```
//!
//! Prints one JSON object per file: the standard footer, its page index (the `parquet`
//! crate's column/offset index lengths), the modular metadata, and the modular bytes by
//! module, with page headers and payloads of the per-chunk page-index pages apart.

use lakecore::footer::{convert, standard_footer_range, ModularFooter};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for path in std::env::args().skip(1) {
        let file = std::fs::read(&path)?;
        let (_, len) = standard_footer_range(&file)?;
        let md = ParquetMetaDataReader::new()
            .with_page_index_policy(PageIndexPolicy::Skip)
            .parse_and_finish(&bytes::Bytes::copy_from_slice(&file))?;
        let (mut ci, mut oi) = (0u64, 0u64);
        for rg in md.row_groups() {
            for cc in rg.columns() {
                ci += cc.column_index_length().unwrap_or(0) as u64;
                oi += cc.offset_index_length().unwrap_or(0) as u64;
            }
        }
        let standard_footer = len as u64 + 8;
        let modular = convert(&file)?;
        let f = ModularFooter::parse(&modular)?;
        let total = f.file_len() - f.metadata_start();
        let mut parts = Vec::new();
        for m in f.modules() {
            parts.push((format!("{:?}", m.module), m.length));
        }
        // Page-index groups: header and payload bytes of every per-chunk page.
        let (mut oi_h, mut oi_p, mut ci_h, mut ci_p, mut pages) = (0u64, 0u64, 0u64, 0u64, 0u64);
        for c in 0..f.num_columns() {
            for g in 0..f.num_row_groups() {
                if let Some(o) = f.offset_index(c, g)? {
                    let arrays = [
                        Some(o.page_offset),
                        Some(o.compressed_page_size),
                        Some(o.first_row_index),
                        o.unencoded_byte_array_data_bytes,
                    ];
                    for p in arrays.into_iter().flatten() {
                        oi_h += u64::from(p.header().header_len);
                        oi_p += u64::from(p.header().payload_length);
                        pages += 1;
                    }
                }
                if let Some(x) = f.column_index(c, g)? {
                    let s = x.stats;
                    let arrays = [
                        Some(x.null_pages),
                        s.null_count,
                        s.nan_count,
                        s.min_value,
                        s.max_value,
                        s.prefix,
                        s.min_is_exact,
                        s.max_is_exact,
                        x.repetition_level_histograms,
                        x.definition_level_histograms,
                    ];
                    for p in arrays.into_iter().flatten() {
                        ci_h += u64::from(p.header().header_len);
                        ci_p += u64::from(p.header().payload_length);
                        pages += 1;
                    }
                }
            }
        }
        let root = f.file_len() - f.root_offset();
        let module_bytes: u64 = parts.iter().map(|p| p.1).sum();
        let groups = total - module_bytes - root;
        println!(
            "{{\"file\":\"{path}\",\"columns\":{},\"row_groups\":{},\"standard_footer\":{standard_footer},\
             \"column_index\":{ci},\"offset_index\":{oi},\"modular\":{total},\"ratio\":{:.3},\
             \"root\":{root},\"modules\":{{{}}},\"page_index_groups\":{groups},\"group_pages\":{pages},\
             \"oi_headers\":{oi_h},\"oi_payload\":{oi_p},\"ci_headers\":{ci_h},\"ci_payload\":{ci_p}}}",
            f.num_columns(),
            f.num_row_groups(),
            total as f64 / (standard_footer + ci + oi) as f64,
            parts.iter().map(|(n, l)| format!("\"{n}\":{l}")).collect::<Vec<_>>().join(","),
        );
    }
    Ok(())
}
