//! Footer fixtures shared by the footer tests and fuzz harnesses: a seeded generator of writer
//! inputs and the oracle that compares every accessor of an opened footer with the input it
//! was built from.

use crate::rng::Rng;
use lakecore::footer::{
    ChunkMeta, ColumnIndexInput, FooterInput, MinMax, ModularFooter, PageLocationInput,
    PageStatsInput, Statistics, StatsInput,
};

/// `prefix` and then up to `max - 1` random lowercase letters.
fn letters(rng: &mut Rng, prefix: &[u8], max: u64) -> Vec<u8> {
    let mut v = prefix.to_vec();
    for _ in 0..rng.below(max) {
        v.push(b'a' + rng.below(26) as u8);
    }
    v
}

fn stats(rng: &mut Rng, all_present: bool) -> StatsInput {
    let prefix = if rng.percent(50) {
        &b"common-"[..]
    } else {
        b""
    };
    let min_max = (all_present || rng.percent(70)).then(|| {
        let a = letters(rng, prefix, 6);
        let b = letters(rng, prefix, 6);
        let (min, max) = if a <= b { (a, b) } else { (b, a) };
        MinMax {
            min,
            max,
            min_exact: !rng.percent(10),
            max_exact: !rng.percent(10),
        }
    });
    StatsInput {
        null_count: (all_present || rng.percent(80)).then(|| rng.below(1000)),
        nan_count: rng.percent(30).then(|| rng.below(5)),
        min_max,
    }
}

/// A seeded footer input for `c` columns and `g` row groups, plus the data region length.
pub fn random_input(seed: u64, c: u32, g: u32) -> (FooterInput, usize) {
    let mut rng = Rng::xorshift(seed | 1);
    let names: Vec<String> = (0..c).map(|i| format!("col_{i}")).collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let types: Vec<u8> = (0..c).map(|_| rng.below(8) as u8).collect();
    let rows: Vec<u64> = (0..g).map(|_| rng.below(10_000)).collect();
    let mut input = FooterInput::flat(&name_refs, &types, &rows);
    let data_len = 4 + (c as usize * g as usize) * 100 + 64;
    let with_stats = rng.percent(80);
    let with_oi = rng.percent(70);
    let with_ci = rng.percent(70);
    let mut pos = 4u64;
    for chunk in input.chunks.iter_mut() {
        let ndict = rng.below(3) as usize;
        let dict: Vec<u64> = (0..ndict).map(|i| pos + i as u64 * 10).collect();
        let data = pos + ndict as u64 * 10;
        let npages = rng.below(4) as usize;
        // Per-page extras of the page indexes (their own CSRs / SPARSE presence over the
        // page space): two definition levels per page, unencoded byte-array sizes.
        let hist = rng.percent(40).then(|| {
            (0..npages * 2)
                .map(|_| rng.below(1000))
                .collect::<Vec<u64>>()
        });
        // One of three encoding-stats lists (ENCODING_STATS is a table of distinct lists).
        let encoding_stats = rng.percent(70).then(|| {
            let mut w = lakecore::codec::thrift::Writer::new();
            w.list_header(lakecore::codec::thrift::FieldType::Struct, 1);
            w.struct_begin();
            w.field_i32(1, 0);
            w.field_i32(2, 8);
            w.field_i32(3, rng.below(3) as i32 + 1);
            w.struct_end();
            w.into_bytes()
        });
        let unencoded = rng.percent(40).then(|| {
            (0..npages)
                .map(|_| rng.below(1 << 30))
                .collect::<Vec<u64>>()
        });
        *chunk = ChunkMeta {
            data_page_offset: data,
            dictionary_page_offsets: dict,
            total_compressed_size: 100,
            total_uncompressed_size: 100 + rng.below(1 << 40),
            num_values: rng.below(1 << 20),
            codec: rng.below(8) as u8,
            is_fully_dictionary_encoded: rng.percent(50),
            statistics: (with_stats && rng.percent(90)).then(|| stats(&mut rng, false)),
            offset_index: (with_oi && rng.percent(90)).then(|| {
                (0..npages)
                    .map(|i| PageLocationInput {
                        offset: data + i as u64 * 5,
                        compressed_size: 5,
                        first_row_index: i as u64 * 100,
                    })
                    .collect()
            }),
            column_index: (with_ci && rng.percent(90)).then(|| ColumnIndexInput {
                boundary_order: rng.below(3) as u8,
                pages: (0..npages)
                    .map(|_| {
                        let null_page = rng.percent(20);
                        let mut s = stats(&mut rng, !null_page);
                        if null_page {
                            s.min_max = None;
                        }
                        PageStatsInput {
                            null_page,
                            stats: s,
                        }
                    })
                    .collect(),
                definition_level_histograms: hist,
                ..ColumnIndexInput::default()
            }),
            offset_index_unencoded_bytes: unencoded,
            encoding_stats,
            encodings: rng.below(1 << 10) as u32,
            bloom_filter_offset: rng.percent(30).then_some(pos + 1),
            bloom_filter_length: rng.percent(30).then_some(3),
            ..ChunkMeta::default()
        };
        pos += 100;
    }
    if rng.percent(50) {
        input.created_by = Some(b"lakecore test".to_vec());
    }
    (input, data_len)
}

/// Builds the file: `PAR1`, zero data bytes, the modular footer.
pub fn build(input: &FooterInput, data_len: usize) -> Vec<u8> {
    let mut file = b"PAR1".to_vec();
    file.resize(data_len, 0);
    input.write(&mut file).unwrap();
    file
}

fn check_stats(got: &Statistics<'_>, want: Option<&StatsInput>) {
    let want = want.cloned().unwrap_or_default();
    assert_eq!(got.null_count, want.null_count);
    assert_eq!(got.nan_count, want.nan_count);
    match (&got.min, &got.max, &want.min_max) {
        (None, None, None) => {}
        (Some(min), Some(max), Some(mm)) => {
            assert!(min.eq_bytes(&mm.min), "{min:?} vs {:?}", mm.min);
            assert!(max.eq_bytes(&mm.max));
            assert_eq!(min.exact, mm.min_exact);
            assert_eq!(max.exact, mm.max_exact);
        }
        other => panic!("min/max presence differs: {other:?}"),
    }
}

/// Compares every accessor with the input.
pub fn check_against_input(footer: &ModularFooter<'_>, input: &FooterInput) {
    footer.validate().unwrap();
    let g = input.row_group_num_rows.len() as u32;
    assert_eq!(footer.num_row_groups(), g);
    assert_eq!(footer.num_columns(), input.num_columns);
    assert_eq!(
        footer.num_rows(),
        input.row_group_num_rows.iter().sum::<u64>()
    );
    assert_eq!(
        footer.row_group_num_rows().collect::<Vec<_>>(),
        input.row_group_num_rows
    );
    let schema = footer.schema().unwrap();
    assert_eq!(schema.num_leaves().unwrap(), u64::from(input.num_columns));
    for (i, leaf) in schema.leaves().enumerate() {
        let leaf = leaf.unwrap();
        assert_eq!(leaf.path(), &[format!("col_{i}").as_bytes()]);
        assert_eq!(
            leaf.element.physical_type,
            Some(i32::from(input.physical_types[i]))
        );
    }
    let fm = footer.file_metadata().unwrap();
    assert_eq!(fm.and_then(|m| m.created_by), input.created_by.as_deref());
    for c in 0..input.num_columns {
        for rg in 0..g {
            let k = (c * g + rg) as usize;
            let want = &input.chunks[k];
            let p = footer.chunk_placement(c, rg).unwrap();
            assert_eq!(p.data_page_offset, want.data_page_offset);
            let dict: Vec<u64> = p.dictionary_pages.iter().map(Result::unwrap).collect();
            assert_eq!(dict, want.dictionary_page_offsets);
            assert_eq!(p.total_compressed_size, want.total_compressed_size);
            assert_eq!(p.total_uncompressed_size, want.total_uncompressed_size);
            assert_eq!(p.num_values, want.num_values);
            assert_eq!(p.codec, want.codec);
            assert_eq!(p.physical_type, input.physical_types[c as usize]);
            assert_eq!(
                p.is_fully_dictionary_encoded,
                want.is_fully_dictionary_encoded
            );
            let d = footer.chunk_details(c, rg).unwrap();
            assert_eq!(d.encoding_stats, want.encoding_stats.as_deref());
            match footer.chunk_statistics(c, rg).unwrap() {
                Some(s) => check_stats(&s, want.statistics.as_ref()),
                None => assert!(input.chunks.iter().all(|m| m.statistics.is_none())),
            }
            match footer.offset_index(c, rg).unwrap() {
                Some(oi) => {
                    let pages = want.offset_index.as_ref().unwrap();
                    assert_eq!(oi.len(), pages.len());
                    for (i, p) in pages.iter().enumerate() {
                        assert_eq!(
                            oi.page(i).unwrap(),
                            (p.offset, u64::from(p.compressed_size), p.first_row_index)
                        );
                    }
                    let ub = oi.unencoded_byte_array_data_bytes;
                    assert_eq!(
                        ub.map(|u| u.window_values().collect::<Vec<_>>()),
                        want.offset_index_unencoded_bytes.clone()
                    );
                }
                None => assert!(want.offset_index.as_ref().is_none_or(Vec::is_empty)),
            }
            match footer.column_index(c, rg).unwrap() {
                Some(ci) => {
                    let w = want.column_index.as_ref().unwrap();
                    assert_eq!(ci.boundary_order, w.boundary_order);
                    assert_eq!(ci.len(), w.pages.len());
                    for (i, p) in w.pages.iter().enumerate() {
                        assert_eq!(ci.is_null_page(i).unwrap(), p.null_page);
                        check_stats(&ci.page(i).unwrap(), Some(&p.stats));
                    }
                    let h = ci.definition_level_histograms;
                    assert_eq!(
                        h.map(|h| h.window_values().collect::<Vec<_>>()),
                        w.definition_level_histograms.clone()
                    );
                }
                // A zero-page column index is no index (an empty FIRST_PAGE slice).
                None => assert!(want
                    .column_index
                    .as_ref()
                    .is_none_or(|c| c.pages.is_empty())),
            }
        }
    }
}
