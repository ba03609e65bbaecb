//! Where the bytes of a modular footer go, against the standard footer plus page index of
//! the same file (`benches/footer_size.py` drives it on pyarrow files; feature `parquet`).
//!
//! ```sh
//! cargo run --release --features parquet --example footer_size -- FILE.parquet...
//! ```
//!
//! Prints one JSON object per file: the standard footer, its page index (the `parquet`
//! crate's column/offset index lengths), the modular metadata, the bytes of each module
//! (THRIFT struct, or ARRAY_PAGES descriptor plus its pages), and of each array page
//! (header and payload apart).

use lakecore::footer::{convert, standard_footer_range, ArrayPage, ModularFooter, StatArrays};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};

type Pages<'a> = Vec<(&'static str, Option<ArrayPage<'a>>)>;

fn stats<'a>(s: &StatArrays<'a>) -> Pages<'a> {
    vec![
        ("NULL_COUNT", s.null_count),
        ("NAN_COUNT", s.nan_count),
        ("MIN_VALUE", s.min_value),
        ("MAX_VALUE", s.max_value),
        ("MIN_MAX_PREFIX", s.prefix),
        ("MIN_IS_EXACT", s.min_is_exact),
        ("MAX_IS_EXACT", s.max_is_exact),
    ]
}

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
        let p = f.placement_arrays()?;
        let x = f.chunk_extras();
        let mut modules: Vec<(&str, Pages<'_>)> = vec![(
            "PLACEMENT",
            vec![
                ("DATA_PAGE_OFFSET", Some(p.data_page_offset)),
                ("FIRST_DICTIONARY_PAGE", Some(p.first_dictionary_page)),
                ("DICTIONARY_PAGE_OFFSET", Some(p.dictionary_page_offset)),
                ("TOTAL_COMPRESSED_SIZE", Some(p.total_compressed_size)),
                ("TOTAL_UNCOMPRESSED_SIZE", Some(p.total_uncompressed_size)),
                ("NUM_VALUES", Some(p.num_values)),
                ("CODEC", Some(p.codec)),
                ("PHYSICAL_TYPE", Some(p.physical_type)),
                (
                    "IS_FULLY_DICTIONARY_ENCODED",
                    Some(p.is_fully_dictionary_encoded),
                ),
                ("ENCODINGS", x.encodings),
                ("ENCODING_STATS", x.encoding_stats),
                ("BLOOM_FILTER_OFFSET", x.bloom_filter_offset),
                ("BLOOM_FILTER_LENGTH", x.bloom_filter_length),
                ("CHUNK_FILE_OFFSET", x.chunk_file_offset),
                ("SIZE_STATISTICS", x.size_statistics),
                ("ENCODING_STATS_INDEX", x.encoding_stats_index),
            ],
        )];
        if let Some(s) = f.statistics_arrays() {
            let mut pages = stats(s);
            pages.push(("DISTINCT_COUNT", x.distinct_count));
            modules.push(("ROW_GROUP_STATS", pages));
        }
        if let Some(o) = f.offset_index_arrays() {
            modules.push((
                "OFFSET_INDEX",
                vec![
                    ("PAGE_OFFSET", Some(o.page_offset)),
                    ("COMPRESSED_PAGE_SIZE", Some(o.compressed_page_size)),
                    ("FIRST_ROW_INDEX", Some(o.first_row_index)),
                    (
                        "UNENCODED_BYTE_ARRAY_DATA_BYTES",
                        o.unencoded_byte_array_data_bytes,
                    ),
                    ("FIRST_PAGE", Some(o.first_page)),
                ],
            ));
        }
        if let Some(c) = f.column_index_arrays() {
            let mut pages = stats(&c.stats);
            let (r, d) = (c.repetition_level_histograms, c.definition_level_histograms);
            pages.extend([
                ("NULL_PAGE", Some(c.null_page)),
                ("BOUNDARY_ORDER", Some(c.boundary_order)),
                ("REPETITION_LEVEL_HISTOGRAM", r.map(|h| h.values)),
                ("DEFINITION_LEVEL_HISTOGRAM", d.map(|h| h.values)),
                ("FIRST_PAGE", Some(c.first_page)),
                ("FIRST_REPETITION_LEVEL_HISTOGRAM", r.map(|h| h.first)),
                ("FIRST_DEFINITION_LEVEL_HISTOGRAM", d.map(|h| h.first)),
            ]);
            modules.push(("COLUMN_INDEX", pages));
        }
        let mut module_json = Vec::new();
        let mut array_json = Vec::new();
        let (mut headers, mut page_count) = (0u64, 0u64);
        for m in f.modules() {
            let name = format!("{:?}", m.module);
            let upper: String = name
                .chars()
                .flat_map(|c| {
                    let sep = c.is_uppercase().then_some('_');
                    sep.into_iter().chain(c.to_uppercase())
                })
                .skip(1)
                .collect();
            let mut bytes = m.length;
            if let Some((_, pages)) = modules.iter().find(|(n, _)| *n == upper) {
                for (a, page) in pages {
                    let Some(page) = page else { continue };
                    let h = u64::from(page.header().header_len);
                    let pl = u64::from(page.header().payload_length);
                    bytes += h + pl;
                    headers += h;
                    page_count += 1;
                    array_json.push(format!("\"{upper}.{a}\":[{h},{pl}]"));
                }
            }
            module_json.push(format!("\"{upper}\":{bytes}"));
        }
        let root = f.file_len() - f.root_offset();
        println!(
            "{{\"file\":\"{path}\",\"columns\":{},\"row_groups\":{},\"standard_footer\":{standard_footer},\
             \"column_index\":{ci},\"offset_index\":{oi},\"modular\":{total},\"ratio\":{:.3},\
             \"root\":{root},\"modules\":{{{}}},\"arrays\":{{{}}},\"page_headers\":{headers},\"pages\":{page_count}}}",
            f.num_columns(),
            f.num_row_groups(),
            total as f64 / (standard_footer + ci + oi) as f64,
            module_json.join(","),
            array_json.join(","),
        );
    }
    Ok(())
}
