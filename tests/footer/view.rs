#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::needless_range_loop
)]
#![cfg(feature = "alloc")]
//! The footer view: writer round trips against the writer's input, and one test per
//! validation rule (a footer assembled here that violates exactly that rule).

use lakecore::codec::thrift::{FieldType, Writer};
use lakecore::footer::{
    encode_page, FooterInput, FooterOptions, Limits, MetadataArray as A, ModularFooter, Module,
    Values,
};
use lakecore::{Error, ErrorKind};
use lakecore_testkit::footer::{build, check_against_input, random_input};

#[test]
fn round_trips_random_footers() {
    for (seed, c, g) in [
        (1, 1, 1),
        (2, 3, 2),
        (3, 10, 7),
        (4, 40, 3),
        (5, 1, 30),
        (6, 0, 4),
        (7, 5, 0),
        (8, 17, 17),
    ] {
        for s in 0..4 {
            let (input, data_len) = random_input(seed * 100 + s, c, g);
            let file = build(&input, data_len);
            let footer = ModularFooter::parse(&file).unwrap();
            check_against_input(&footer, &input);
            // The same through a fetched tail that starts at the metadata.
            let start = footer.metadata_start() as usize;
            let tail = open_tail(&file[start..], start as u64).unwrap();
            check_against_input(&tail, &input);
        }
    }
}

#[test]
fn tail_too_short_asks_for_exact_bytes() {
    let (input, data_len) = random_input(42, 4, 3);
    let file = build(&input, data_len);
    let footer = ModularFooter::parse(&file).unwrap();
    let root = footer.root_offset() as usize;
    // Only the root and trailer: the descriptors are needed.
    let e = open_tail(&file[root..], root as u64).unwrap_err();
    match e.kind {
        ErrorKind::NeedsBytes { end } => {
            assert!(e.offset < root as u64 && end <= root as u64);
            let lo = e.offset as usize;
            // Fetching from the asked offset makes progress (eventually succeeds).
            let mut start = lo;
            loop {
                match open_tail(&file[start..], start as u64) {
                    Ok(_) => break,
                    Err(Error {
                        kind: ErrorKind::NeedsBytes { .. },
                        offset,
                        ..
                    }) => {
                        assert!((offset as usize) < start);
                        start = offset as usize;
                    }
                    Err(other) => panic!("{other}"),
                }
            }
        }
        other => panic!("{other:?}"),
    }
    // Trailer only.
    let n = file.len();
    let e = open_tail(&file[n - 3..], n as u64 - 3).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::NeedsBytes { .. }));
}

// ---------------------------------------------------------------------------------------
// Assembler: builds footers piece by piece so a test can break exactly one rule.

const C: u32 = 2;
const G: u32 = 3;
const K: usize = (C * G) as usize;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum T {
    None,
    Version2,
    NegativeRowGroups,
    RowCountSum,
    RowGroupListLen,
    DuplicateModule,
    MissingSchema,
    MissingPlacement,
    ModuleWrongEncoding,
    ModuleAfterRoot,
    UnknownModuleSkipped,
    OverlapModules,
    TrailingRootBytes,
    BadMagic,
    RootLenTooLarge,
    DescriptorModuleMismatch,
    DescriptorVersion,
    DescriptorTrailing,
    MissingPlacementArray,
    DuplicatePlacementArray,
    ForeignArrayInDescriptor,
    PageHeaderArrayMismatch,
    LocationLengthMismatch,
    PlacementDomain,
    PlacementSparse,
    CsrFirstNonZero,
    CsrLastMismatch,
    CsrDecreasing,
    CodecOutOfRange,
    ValueAboveI64Max,
    StatsMinWithoutMax,
    StatsPrefixCount,
    StatsMinMaxPositions,
    StatsExactWithoutMin,
    EncodingStatsWithoutIndex,
    EncodingStatsIndexOutside,
    FirstPageFirstNonZero,
    FirstPageLastMismatch,
    FirstPageDecreasing,
    PageIndexMissingArray,
    PageIndexDomain,
    PageOffsetSparse,
    PageIndexForeignArray,
    UnencodedPartialChunk,
    HistogramWithoutCsr,
    HistogramNotMultiple,
    BoundaryOrderDomain,
    ColumnIndexMinOnNullPage,
    SchemaLeafCount,
}

struct Asm {
    out: Vec<u8>,
    dir: Vec<(i32, i32, i64, i64)>,
}

impl Asm {
    fn put(&mut self, bytes: &[u8]) -> (i64, i32) {
        let at = self.out.len() as i64;
        self.out.extend_from_slice(bytes);
        (at, bytes.len() as i32)
    }

    fn descriptor(&mut self, module: i32, version: i32, pages: &[(i32, i64, i32)], trailing: bool) {
        let mut w = Writer::new();
        w.struct_begin();
        w.field_i32(1, module);
        w.field_i32(2, version);
        w.field_list(3, FieldType::Struct, pages.len());
        for &(array, offset, len) in pages {
            w.struct_begin();
            w.field_i32(1, array);
            w.field_i32(2, 0);
            w.field_i64(5, offset);
            w.field_i32(6, len);
            w.struct_end();
        }
        w.struct_end();
        let mut bytes = w.into_bytes();
        if trailing {
            bytes.push(0);
        }
        let (at, len) = self.put(&bytes);
        self.dir.push((module, 1, at, i64::from(len)));
    }
}

fn ints(v: &[u64]) -> Vec<Option<u64>> {
    v.iter().copied().map(Some).collect()
}

fn page(module: Module, array: A, vals: &[Option<u64>], ords: Option<(u32, u32)>) -> Vec<u8> {
    encode_page(module, array, &Values::Ints(vals), ords, false).unwrap()
}

fn bytes_page(
    module: Module,
    array: A,
    vals: &[Option<&[u8]>],
    ords: Option<(u32, u32)>,
) -> Vec<u8> {
    encode_page(module, array, &Values::Bytes(vals), ords, false).unwrap()
}

fn assemble(t: T) -> Vec<u8> {
    let mut a = Asm {
        out: b"PAR1".to_vec(),
        dir: Vec::new(),
    };
    a.out.resize(1000, 0);
    let k = K;
    // SCHEMA
    let names: &[&str] = if t == T::SchemaLeafCount {
        &["a", "b", "c"]
    } else {
        &["a", "b"]
    };
    let types: &[u8] = &[1, 6, 6][..names.len()];
    let flat = FooterInput::flat(names, types, &[1]);
    let mut w = Writer::new();
    w.struct_begin();
    w.field_begin(1, FieldType::List);
    w.raw(&flat.schema_elements);
    w.struct_end();
    let (schema_at, schema_len) = a.put(w.as_bytes());
    if t != T::MissingSchema {
        a.dir.push((
            0,
            if t == T::ModuleWrongEncoding { 1 } else { 0 },
            schema_at,
            i64::from(schema_len),
        ));
    }
    // PLACEMENT
    let dpo: Vec<u64> = (0..k as u64).map(|i| 4 + i * 100).collect();
    let mut csr = vec![0u64, 1, 1, 2, 2, 2, 3];
    if t == T::CsrFirstNonZero {
        csr = vec![1, 1, 1, 2, 2, 2, 3];
    }
    if t == T::CsrLastMismatch {
        csr[6] = 2;
    }
    if t == T::CsrDecreasing {
        csr = vec![0, 2, 1, 2, 2, 2, 3];
    }
    let dict = [10u64, 310, 420];
    let mut codec = vec![0u64, 1, 2, 3, 4, 5];
    if t == T::CodecOutOfRange {
        codec[3] = 9;
    }
    let mut tcs = vec![100u64; k];
    if t == T::ValueAboveI64Max {
        tcs[2] = u64::MAX;
    }
    let mut nv = vec![7u64; k];
    if t == T::PlacementDomain {
        nv.pop();
    }
    let mut placement: Vec<(A, Vec<Option<u64>>)> = vec![
        (A::DataPageOffset, ints(&dpo)),
        (A::FirstDictionaryPage, ints(&csr)),
        (A::DictionaryPageOffset, ints(&dict)),
        (A::TotalCompressedSize, ints(&tcs)),
        (A::TotalUncompressedSize, ints(&[200; K])),
        (A::NumValues, ints(&nv)),
        (A::Codec, ints(&codec)),
        (A::PhysicalType, ints(&[1, 6])),
        (A::IsFullyDictionaryEncoded, ints(&[1, 0, 1, 0, 1, 0])),
    ];
    if t == T::PlacementSparse {
        placement[5].1[2] = None;
    }
    let mut locs = Vec::new();
    for (array, vals) in &placement {
        if t == T::MissingPlacementArray && *array == A::Codec {
            continue;
        }
        let mut module = Module::Placement;
        if t == T::PageHeaderArrayMismatch && *array == A::Codec {
            // The page says it is CODEC of ROW_GROUP_STATS.
            module = Module::RowGroupStats;
        }
        let (at, mut len) = a.put(&page(module, *array, vals, None));
        if t == T::LocationLengthMismatch && *array == A::Codec {
            len += 1;
        }
        locs.push((*array as i32, at, len));
    }
    if t == T::DuplicatePlacementArray {
        locs.push(locs[0]);
    }
    // ENCODING_STATS: a table of two distinct lists (empty Thrift lists of structs), and
    // each chunk's index into it (chunk 4 has none).
    let table: Vec<Option<&[u8]>> = vec![Some(&[0x0c][..]), Some(&[0x1c, 0x00][..])];
    let mut index = vec![Some(0), Some(1), Some(1), Some(0), None, Some(1)];
    if t == T::EncodingStatsIndexOutside {
        index[3] = Some(2);
    }
    if t != T::EncodingStatsWithoutIndex {
        let (at, len) = a.put(&page(
            Module::Placement,
            A::EncodingStatsIndex,
            &index,
            None,
        ));
        locs.push((A::EncodingStatsIndex as i32, at, len));
    }
    let (at, len) = a.put(&bytes_page(
        Module::Placement,
        A::EncodingStats,
        &table,
        None,
    ));
    locs.push((A::EncodingStats as i32, at, len));
    if t == T::ForeignArrayInDescriptor {
        let (at, len) = a.put(&page(Module::Placement, A::NullCount, &ints(&[0; K]), None));
        locs.push((A::NullCount as i32, at, len));
    }
    let pmod = if t == T::DescriptorModuleMismatch {
        2
    } else {
        1
    };
    if t != T::MissingPlacement {
        a.descriptor(
            1,
            if t == T::DescriptorVersion { 2 } else { 1 },
            &locs,
            t == T::DescriptorTrailing,
        );
        a.dir.last_mut().unwrap().0 = 1;
        if pmod == 2 {
            // Rewrite: directory says PLACEMENT, the descriptor says ROW_GROUP_STATS.
            let (_, _, at, _) = *a.dir.last().unwrap();
            // Field 1 of the descriptor is the first i32: byte at+1 holds zigzag(1) = 2.
            assert_eq!(a.out[at as usize + 1], 2);
            a.out[at as usize + 1] = 4;
        }
    }
    // ROW_GROUP_STATS: NULL_COUNT dense; MIN/MAX/PREFIX sparse at chunks 0, 2, 3, 5.
    let present = [true, false, true, true, false, true];
    let mins: Vec<Option<&[u8]>> = present.iter().map(|&p| p.then_some(&b"a"[..])).collect();
    let mut maxs: Vec<Option<&[u8]>> = present.iter().map(|&p| p.then_some(&b"z"[..])).collect();
    if t == T::StatsMinMaxPositions {
        maxs[2] = None;
        maxs[1] = Some(b"z");
    }
    let mut pre = mins.clone();
    if t == T::StatsPrefixCount {
        pre[0] = None;
    }
    let mut locs = Vec::new();
    let (at, len) = a.put(&page(
        Module::RowGroupStats,
        A::NullCount,
        &ints(&[1, 2, 3, 4, 5, 6]),
        None,
    ));
    locs.push((A::NullCount as i32, at, len));
    let (at, len) = a.put(&bytes_page(Module::RowGroupStats, A::MinValue, &mins, None));
    locs.push((A::MinValue as i32, at, len));
    if t != T::StatsMinWithoutMax {
        let (at, len) = a.put(&bytes_page(Module::RowGroupStats, A::MaxValue, &maxs, None));
        locs.push((A::MaxValue as i32, at, len));
    }
    let (at, len) = a.put(&bytes_page(
        Module::RowGroupStats,
        A::MinMaxPrefix,
        &pre,
        None,
    ));
    locs.push((A::MinMaxPrefix as i32, at, len));
    if t == T::StatsExactWithoutMin {
        locs.retain(|l| {
            l.0 != A::MinValue as i32 && l.0 != A::MaxValue as i32 && l.0 != A::MinMaxPrefix as i32
        });
        let (at, len) = a.put(&page(
            Module::RowGroupStats,
            A::MinIsExact,
            &ints(&[1; K]),
            None,
        ));
        locs.push((A::MinIsExact as i32, at, len));
    }
    a.descriptor(2, 1, &locs, false);
    // OFFSET_INDEX: FILE pages over the page space; chunk 1 has no index, the others two
    // pages each; chunk 0 alone has unencoded byte-array sizes (a SPARSE page).
    let (mut po, mut cs, mut fr, mut ub) = (vec![], vec![], vec![], vec![]);
    let mut first = vec![0u64];
    for kk in 0..K {
        if kk != 1 {
            po.extend([Some(dpo[kk]), Some(dpo[kk] + 50)]);
            cs.extend([Some(50), Some(50)]);
            fr.extend([Some(0), Some(3)]);
            if kk == 0 {
                ub.extend([Some(7), Some(8)]);
            } else if kk == 3 && t == T::UnencodedPartialChunk {
                ub.extend([Some(9), None]);
            } else {
                ub.extend([None, None]);
            }
        }
        first.push(po.len() as u64);
    }
    if t == T::PageOffsetSparse {
        po[3] = None;
    }
    if t == T::PageIndexDomain {
        cs.pop();
    }
    if t == T::FirstPageFirstNonZero {
        first[0] = 1;
    }
    if t == T::FirstPageLastMismatch {
        first[K] += 1;
    }
    if t == T::FirstPageDecreasing {
        first.swap(2, 3);
    }
    let mut oi = vec![
        (A::PageOffset, po),
        (A::CompressedPageSize, cs),
        (A::FirstRowIndex, fr),
        (A::UnencodedByteArrayDataBytes, ub),
        (A::FirstPage, first.iter().copied().map(Some).collect()),
    ];
    if t == T::PageIndexMissingArray {
        oi.remove(2);
    }
    let mut locs = Vec::new();
    for (array, v) in &oi {
        let (at, len) = a.put(&page(Module::OffsetIndex, *array, v, None));
        locs.push((*array as i32, at, len));
    }
    if t == T::PageIndexForeignArray {
        let (at, len) = a.put(&page(Module::OffsetIndex, A::NullPage, &ints(&[0]), None));
        locs.push((A::NullPage as i32, at, len));
    }
    a.descriptor(3, 1, &locs, false);
    // COLUMN_INDEX: every chunk two pages, page 1 of chunk 2 is a null page; chunk 3 has
    // definition-level histograms (two levels per page).
    let (mut mins, mut nulls, mut hist) = (Vec::new(), Vec::new(), Vec::new());
    let (mut first, mut hist_first) = (vec![0u64], vec![0u64]);
    for kk in 0..K {
        let null = kk == 2;
        nulls.extend([Some(0), Some(u64::from(null))]);
        mins.push(Some(&b"b"[..]));
        if null && t != T::ColumnIndexMinOnNullPage {
            mins.push(None);
        } else {
            mins.push(Some(&b"c"[..]));
        }
        if kk == 3 {
            hist.extend(ints(&[1, 2, 3, 4]));
            if t == T::HistogramNotMultiple {
                hist.pop();
            }
        }
        first.push(nulls.len() as u64);
        hist_first.push(hist.len() as u64);
    }
    let bo = if t == T::BoundaryOrderDomain {
        ints(&[1])
    } else {
        ints(&[1; K])
    };
    let maxs = mins.clone();
    let mut ci = vec![
        (
            A::MinValue,
            bytes_page(Module::ColumnIndex, A::MinValue, &mins, None),
        ),
        (
            A::MaxValue,
            bytes_page(Module::ColumnIndex, A::MaxValue, &maxs, None),
        ),
        (
            A::NullPage,
            page(Module::ColumnIndex, A::NullPage, &nulls, None),
        ),
        (
            A::BoundaryOrder,
            page(Module::ColumnIndex, A::BoundaryOrder, &bo, None),
        ),
        (
            A::DefinitionLevelHistogram,
            page(
                Module::ColumnIndex,
                A::DefinitionLevelHistogram,
                &hist,
                None,
            ),
        ),
        (
            A::FirstPage,
            page(Module::ColumnIndex, A::FirstPage, &ints(&first), None),
        ),
        (
            A::FirstDefinitionLevelHistogram,
            page(
                Module::ColumnIndex,
                A::FirstDefinitionLevelHistogram,
                &ints(&hist_first),
                None,
            ),
        ),
    ];
    if t == T::HistogramWithoutCsr {
        ci.pop();
    }
    let mut locs = Vec::new();
    for (array, p) in &ci {
        let (at, len) = a.put(p);
        locs.push((*array as i32, at, len));
    }
    a.descriptor(4, 1, &locs, false);
    // FILE_METADATA
    let mut w = Writer::new();
    w.struct_begin();
    w.field_binary(1, b"assembler");
    w.struct_end();
    let (fm_at, fm_len) = a.put(w.as_bytes());
    if t == T::OverlapModules {
        a.dir.push((5, 0, schema_at, i64::from(schema_len)));
    } else {
        a.dir.push((5, 0, fm_at, i64::from(fm_len)));
    }
    if t == T::DuplicateModule {
        a.dir.push((5, 0, fm_at, i64::from(fm_len)));
    }
    if t == T::UnknownModuleSkipped {
        a.dir.push((77, 3, 4, 1));
    }
    // ROOT
    let root_at = a.out.len() as i64;
    if t == T::ModuleAfterRoot {
        a.dir.last_mut().unwrap().2 = root_at;
    }
    let mut rows = vec![10i64, 20, 30];
    if t == T::RowGroupListLen {
        rows.pop();
    }
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, if t == T::Version2 { 2 } else { 1 });
    w.field_i32(
        2,
        if t == T::NegativeRowGroups {
            -3
        } else {
            G as i32
        },
    );
    w.field_i32(3, C as i32);
    w.field_i64(4, if t == T::RowCountSum { 61 } else { 60 });
    w.field_list(5, FieldType::I64, rows.len());
    for r in rows {
        w.i64(r);
    }
    w.field_list(6, FieldType::Struct, a.dir.len());
    for &(m, e, o, l) in &a.dir {
        w.struct_begin();
        w.field_i32(1, m);
        w.field_i32(2, e);
        w.field_i64(3, o);
        w.field_i64(4, l);
        w.struct_end();
    }
    w.struct_end();
    let mut root = w.into_bytes();
    if t == T::TrailingRootBytes {
        root.push(0);
    }
    a.out.extend_from_slice(&root);
    let mut rl = root.len() as u32;
    if t == T::RootLenTooLarge {
        rl = a.out.len() as u32;
    }
    a.out.extend_from_slice(&rl.to_le_bytes());
    a.out
        .extend_from_slice(if t == T::BadMagic { b"PAR1" } else { b"PARM" });
    a.out
}

/// Opens the footer in `window`, the tail of a file from offset `origin` on.
fn open_tail(window: &[u8], origin: u64) -> Result<ModularFooter<'_>, Error> {
    let options = FooterOptions {
        origin,
        ..FooterOptions::default()
    };
    ModularFooter::parse_with(window, &options)
}

/// Opens and fully validates (every accessor of every chunk) the assembled footer.
fn open_all(file: &[u8], limits: Limits) -> Result<(), Error> {
    let f = ModularFooter::parse_with(file, &FooterOptions { origin: 0, limits })?;
    f.validate()?;
    for c in 0..f.num_columns() {
        for g in 0..f.num_row_groups() {
            f.chunk_placement(c, g)?;
            f.chunk_statistics(c, g)?;
            f.offset_index(c, g)?;
            f.column_index(c, g)?;
        }
    }
    Ok(())
}

fn kind(t: T) -> ErrorKind {
    open_all(&assemble(t), Limits::default()).unwrap_err().kind
}

#[test]
fn assembled_baseline_is_valid_and_reads_back() {
    let file = assemble(T::None);
    open_all(&file, Limits::default()).unwrap();
    let f = ModularFooter::parse(&file).unwrap();
    let p = f.chunk_placement(1, 2).unwrap();
    assert_eq!(p.data_page_offset, 504);
    let d: Vec<u64> = p.dictionary_pages.iter().map(Result::unwrap).collect();
    assert_eq!(d, [420]);
    assert_eq!(
        (p.codec, p.physical_type, p.is_fully_dictionary_encoded),
        (5, 6, false)
    );
    assert!(f.chunk_placement(1, 0).unwrap().dictionary_pages.is_empty());
    let s = f.chunk_statistics(0, 1).unwrap().unwrap();
    assert_eq!((s.null_count, s.min), (Some(2), None));
    let s = f.chunk_statistics(0, 2).unwrap().unwrap();
    let min = s.min.unwrap();
    assert_eq!(
        (min.prefix, min.suffix, min.exact),
        (&b"a"[..], &b"a"[..], true)
    );
    assert!(s.max.unwrap().eq_bytes(b"az"));
    assert!(f.offset_index(0, 1).unwrap().is_none());
    let es = |c, g| f.chunk_details(c, g).unwrap().encoding_stats;
    assert_eq!(
        (es(0, 0), es(0, 1), es(1, 0), es(1, 1)),
        (
            Some(&[0x0c][..]),
            Some(&[0x1c, 0x00][..]),
            Some(&[0x0c][..]),
            None
        )
    );
    assert_eq!(
        f.offset_index(1, 2).unwrap().unwrap().page(1).unwrap(),
        (554, 50, 3)
    );
    let ci = f.column_index(0, 2).unwrap().unwrap();
    assert!(ci.is_null_page(1).unwrap());
    assert_eq!(ci.page(1).unwrap().min, None);
    assert_eq!(ci.boundary_order, 1);
    assert!(ci.definition_level_histograms.is_none());
    let h = f.column_index(1, 0).unwrap().unwrap();
    let h = h.definition_level_histograms.unwrap();
    assert_eq!(h.window_values().collect::<Vec<_>>(), [1, 2, 3, 4]);
    let oi = f.offset_index(0, 0).unwrap().unwrap();
    let ub = oi.unencoded_byte_array_data_bytes.unwrap();
    assert_eq!((ub.get(0).unwrap(), ub.get(1).unwrap()), (Some(7), Some(8)));
    assert!(f
        .offset_index(0, 2)
        .unwrap()
        .unwrap()
        .unencoded_byte_array_data_bytes
        .is_none());
    assert_eq!(
        open_all(&assemble(T::UnknownModuleSkipped), Limits::default()),
        Ok(())
    );
}

macro_rules! rule {
    ($name:ident, $t:expr, $kind:pat) => {
        #[test]
        fn $name() {
            let k = kind($t);
            assert!(matches!(k, $kind), "{:?} gave {:?}", $t, k);
        }
    };
}

rule!(
    root_version_must_be_1,
    T::Version2,
    ErrorKind::UnsupportedVersion
);
rule!(
    root_counts_non_negative,
    T::NegativeRowGroups,
    ErrorKind::InvalidLength
);
rule!(
    root_row_counts_sum_to_num_rows,
    T::RowCountSum,
    ErrorKind::Mismatch
);
rule!(
    root_row_group_list_length,
    T::RowGroupListLen,
    ErrorKind::Mismatch
);
rule!(
    root_module_kinds_unique,
    T::DuplicateModule,
    ErrorKind::Duplicate
);
rule!(
    root_schema_required,
    T::MissingSchema,
    ErrorKind::ThriftMissingField
);
rule!(
    root_placement_required,
    T::MissingPlacement,
    ErrorKind::ThriftMissingField
);
rule!(
    root_module_encoding,
    T::ModuleWrongEncoding,
    ErrorKind::Mismatch
);
rule!(
    root_locations_before_root,
    T::ModuleAfterRoot,
    ErrorKind::OutOfBounds
);
rule!(ranges_never_overlap, T::OverlapModules, ErrorKind::Mismatch);
rule!(
    root_exact_length,
    T::TrailingRootBytes,
    ErrorKind::TrailingBytes
);
rule!(trailer_magic, T::BadMagic, ErrorKind::BadMagic);
rule!(
    trailer_root_length,
    T::RootLenTooLarge,
    ErrorKind::InvalidLength
);
rule!(
    descriptor_module_matches,
    T::DescriptorModuleMismatch,
    ErrorKind::Mismatch
);
rule!(
    descriptor_version,
    T::DescriptorVersion,
    ErrorKind::UnsupportedVersion
);
rule!(
    descriptor_exact_length,
    T::DescriptorTrailing,
    ErrorKind::TrailingBytes
);
rule!(
    placement_arrays_required,
    T::MissingPlacementArray,
    ErrorKind::ThriftMissingField
);
rule!(
    placement_arrays_once,
    T::DuplicatePlacementArray,
    ErrorKind::Duplicate
);
rule!(
    descriptor_arrays_belong_to_module,
    T::ForeignArrayInDescriptor,
    ErrorKind::InvalidValue
);
rule!(
    page_header_matches_location,
    T::PageHeaderArrayMismatch,
    ErrorKind::Mismatch
);
rule!(
    location_length_is_header_plus_payload,
    T::LocationLengthMismatch,
    ErrorKind::Mismatch
);
rule!(placement_domains, T::PlacementDomain, ErrorKind::Mismatch);
rule!(
    placement_is_bit_packed,
    T::PlacementSparse,
    ErrorKind::Mismatch
);
rule!(
    csr_starts_at_zero,
    T::CsrFirstNonZero,
    ErrorKind::InvalidValue
);
rule!(
    csr_ends_at_dictionary_count,
    T::CsrLastMismatch,
    ErrorKind::Mismatch
);
rule!(csr_nondecreasing, T::CsrDecreasing, ErrorKind::NotSorted);
rule!(codec_in_range, T::CodecOutOfRange, ErrorKind::InvalidValue);
rule!(
    uint64_at_most_i64_max,
    T::ValueAboveI64Max,
    ErrorKind::OutOfBounds
);
rule!(
    stats_min_and_max_together,
    T::StatsMinWithoutMax,
    ErrorKind::Mismatch
);
rule!(
    stats_prefix_matches_min,
    T::StatsPrefixCount,
    ErrorKind::Mismatch
);
rule!(
    stats_min_max_same_positions,
    T::StatsMinMaxPositions,
    ErrorKind::Mismatch
);
rule!(
    stats_exactness_needs_bounds,
    T::StatsExactWithoutMin,
    ErrorKind::Mismatch
);
rule!(
    encoding_stats_table_needs_its_index,
    T::EncodingStatsWithoutIndex,
    ErrorKind::ThriftMissingField
);
rule!(
    encoding_stats_index_inside_the_table,
    T::EncodingStatsIndexOutside,
    ErrorKind::OutOfBounds
);
rule!(
    first_page_starts_at_zero,
    T::FirstPageFirstNonZero,
    ErrorKind::InvalidValue
);
rule!(
    first_page_ends_at_page_count,
    T::FirstPageLastMismatch,
    ErrorKind::Mismatch
);
rule!(
    first_page_nondecreasing,
    T::FirstPageDecreasing,
    ErrorKind::NotSorted
);
rule!(
    page_index_required_arrays,
    T::PageIndexMissingArray,
    ErrorKind::ThriftMissingField
);
rule!(
    page_index_arrays_span_the_page_space,
    T::PageIndexDomain,
    ErrorKind::Mismatch
);
rule!(page_offsets_dense, T::PageOffsetSparse, ErrorKind::Mismatch);
rule!(
    page_index_foreign_array,
    T::PageIndexForeignArray,
    ErrorKind::InvalidValue
);
rule!(
    unencoded_sizes_all_pages_of_a_chunk_or_none,
    T::UnencodedPartialChunk,
    ErrorKind::Mismatch
);
rule!(
    histogram_needs_its_csr,
    T::HistogramWithoutCsr,
    ErrorKind::ThriftMissingField
);
rule!(
    histogram_multiple_of_pages,
    T::HistogramNotMultiple,
    ErrorKind::Mismatch
);
rule!(
    boundary_order_over_chunks,
    T::BoundaryOrderDomain,
    ErrorKind::Mismatch
);
rule!(
    column_index_bounds_only_on_non_null_pages,
    T::ColumnIndexMinOnNullPage,
    ErrorKind::Mismatch
);
rule!(
    schema_leaf_count_is_num_columns,
    T::SchemaLeafCount,
    ErrorKind::Mismatch
);

#[test]
fn limits_are_checked() {
    let file = assemble(T::None);
    let e = open_all(
        &file,
        Limits {
            max_pages: 3,
            ..Limits::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::LimitExceeded);
    let e = open_all(
        &file,
        Limits {
            max_num_values: 5,
            ..Limits::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::LimitExceeded);
    let e = open_all(
        &file,
        Limits {
            max_payload_bytes: 1,
            ..Limits::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::LimitExceeded);
    let e = open_all(
        &file,
        Limits {
            max_depth: 1,
            ..Limits::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::DepthLimit);
}

#[test]
fn mutated_footers_never_panic() {
    let (input, data_len) = random_input(77, 3, 2);
    let file = build(&input, data_len);
    let f = ModularFooter::parse(&file).unwrap();
    let start = f.metadata_start() as usize;
    for i in start..file.len() {
        for flip in [1u8, 0x40, 0xff] {
            let mut m = file.clone();
            m[i] ^= flip;
            let _ = open_all(&m, Limits::default());
        }
    }
    for cut in start..file.len() {
        let _ = ModularFooter::parse(&file[..cut]);
        let _ = open_tail(&file[cut..], cut as u64);
    }
}

#[test]
fn writer_errors_name_no_byte() {
    use lakecore::error::Location;
    // Chunks that do not match the column and row-group counts: the input as a whole.
    let mut input = FooterInput::flat(&["id"], &[2], &[10]);
    input.chunks.clear();
    let e = input.write(&mut b"PAR1".to_vec()).unwrap_err();
    assert_eq!(
        (e.kind, e.at, e.offset),
        (ErrorKind::Mismatch, Location::Whole, 0)
    );
    assert_eq!(e.to_string(), "mismatch");
    // A dense page with a value missing: the first missing value.
    let values = [Some(4), Some(5), None, None];
    let e = encode_page(
        Module::Placement,
        A::DataPageOffset,
        &Values::Ints(&values),
        None,
        true,
    )
    .unwrap_err();
    assert_eq!(
        (e.kind, e.at, e.offset),
        (ErrorKind::Mismatch, Location::Entry, 2)
    );
    assert_eq!(e.to_string(), "mismatch at entry 2");
}
