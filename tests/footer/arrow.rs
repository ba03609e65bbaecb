//! `footer::arrow` (feature `arrow`): batches read through the modular footer (blocking and
//! async) equal those the `parquet` crate reads through the standard footer of the same
//! file, for random projections and row-group selections, on files from three writers
//! (the `parquet` crate's `ArrowWriter` here, pyarrow and DuckDB in `tests/data/footer/writers`).

use bytes::Bytes;
use futures::future::{BoxFuture, FutureExt};
use futures::TryStreamExt;
use lakecore::footer::arrow::{
    projected_metadata, reader_builder, ColumnSelector, ModularAsyncReader, Projection,
    ProjectionError,
};
use lakecore::footer::{convert, ModularFooter};
use lakecore_testkit::rng::Rng;
use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::arrow::{ArrowWriter, ParquetRecordBatchStreamBuilder, ProjectionMask};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::properties::WriterProperties;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// A file from the `parquet` crate's ArrowWriter: ints, strings, a nullable double, a struct
/// of two leaves, a list; 5 row groups; page index on (the writer's default).
fn arrow_writer_file() -> Vec<u8> {
    let mut rng = Rng::new(24);
    let n = 900usize;
    let ids: Vec<i64> = (0..n as i64).collect();
    let names: Vec<String> = (0..n)
        .map(|i| format!("name-{}", rng.below(50) + i as u64 % 3))
        .collect();
    let scores: Vec<Option<f64>> = (0..n)
        .map(|i| {
            if rng.one_in(5) {
                None
            } else {
                Some(i as f64 * 0.5)
            }
        })
        .collect();
    let city: Vec<Option<String>> = (0..n)
        .map(|i| {
            if i % 7 == 0 {
                None
            } else {
                Some(format!("c{}", i % 11))
            }
        })
        .collect();
    let zip: Vec<i32> = (0..n as i32).map(|i| 10_000 + i % 97).collect();
    let batch = parquet_batch(&ids, &names, &scores, &city, &zip);
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(180))
        .set_data_page_row_count_limit(40)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

fn parquet_batch(
    ids: &[i64],
    names: &[String],
    scores: &[Option<f64>],
    city: &[Option<String>],
    zip: &[i32],
) -> arrow_array::RecordBatch {
    use arrow_array::{
        ArrayRef, Float64Array, Int32Array, Int64Array, ListArray, StringArray, StructArray,
    };
    use arrow_schema::{DataType, Field};
    let addr = StructArray::from(vec![
        (
            Arc::new(Field::new("city", DataType::Utf8, true)),
            Arc::new(StringArray::from(city.to_vec())) as ArrayRef,
        ),
        (
            Arc::new(Field::new("zip", DataType::Int32, false)),
            Arc::new(Int32Array::from(zip.to_vec())) as ArrayRef,
        ),
    ]);
    let tags = ListArray::from_iter_primitive::<arrow_array::types::Int32Type, _, _>(
        ids.iter()
            .map(|&i| Some((0..(i % 4) as i32).map(Some).collect::<Vec<_>>())),
    );
    arrow_array::RecordBatch::try_from_iter(vec![
        ("id", Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef),
        (
            "name",
            Arc::new(StringArray::from(names.to_vec())) as ArrayRef,
        ),
        (
            "score",
            Arc::new(Float64Array::from(scores.to_vec())) as ArrayRef,
        ),
        ("address", Arc::new(addr) as ArrayRef),
        ("tags", Arc::new(tags) as ArrayRef),
    ])
    .unwrap()
}

fn writer_files() -> Vec<(String, Vec<u8>)> {
    let mut files = vec![("arrow-rs ArrowWriter".to_string(), arrow_writer_file())];
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/footer/writers");
    for name in [
        "pyarrow_page_index.parquet",
        "pyarrow_no_page_index.parquet",
        "pyarrow_wide.parquet",
        "duckdb.parquet",
        "duckdb_snappy.parquet",
    ] {
        let bytes = std::fs::read(format!("{dir}/{name}")).unwrap();
        files.push((name.to_string(), bytes));
    }
    files
}

fn standard_batches(
    file: &Bytes,
    leaves: &[usize],
    row_groups: &[usize],
) -> Vec<arrow_array::RecordBatch> {
    let b = ParquetRecordBatchReaderBuilder::try_new(file.clone()).unwrap();
    let mask = ProjectionMask::leaves(b.parquet_schema(), leaves.iter().copied());
    b.with_projection(mask)
        .with_row_groups(row_groups.to_vec())
        .with_batch_size(100)
        .build()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// An in-memory async reader that records every range it is asked for.
#[derive(Clone)]
struct Recording {
    bytes: Bytes,
    ranges: Arc<Mutex<Vec<Range<u64>>>>,
}

impl AsyncFileReader for Recording {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        self.ranges.lock().unwrap().push(range.clone());
        let b = self.bytes.slice(range.start as usize..range.end as usize);
        async move { Ok(b) }.boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        _options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        async move {
            Err(parquet::errors::ParquetError::General(
                "the test reader has no standard footer".into(),
            ))
        }
        .boxed()
    }
}

fn random_subset(rng: &mut Rng, n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).filter(|_| rng.percent(35)).collect();
    if v.is_empty() && n > 0 {
        v.push(rng.below(n as u64) as usize);
    }
    v
}

#[test]
fn batches_through_the_modular_footer_equal_the_standard_ones() {
    let mut rng = Rng::new(2024);
    let mut cases = 0;
    for (name, standard) in writer_files() {
        let modular = Bytes::from(convert(&standard).unwrap());
        let standard = Bytes::from(standard);
        let footer = ModularFooter::parse(&modular).unwrap();
        let (c, g) = (
            footer.num_columns() as usize,
            footer.num_row_groups() as usize,
        );
        for round in 0..8 {
            let leaves = if round == 0 {
                (0..c).collect()
            } else {
                random_subset(&mut rng, c)
            };
            let rgs = if round % 3 == 1 {
                (0..g).collect()
            } else {
                random_subset(&mut rng, g)
            };
            let expected = standard_batches(&standard, &leaves, &rgs);
            let mut projection = Projection::leaves(leaves.clone()).with_row_groups(rgs.clone());
            if round == 2 {
                projection = projection.without_page_index();
            }

            let (builder, projected) = reader_builder(modular.clone(), &projection).unwrap();
            assert_eq!(projected.leaves, leaves, "{name}");
            if round == 2 {
                assert!(projected.metadata.page_index().is_none(), "{name}");
            }
            let got: Vec<_> = builder
                .with_batch_size(100)
                .build()
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(
                got, expected,
                "{name}: blocking, leaves {leaves:?}, row groups {rgs:?}"
            );

            // Async: only the tail and the projected chunks are fetched.
            let reader = Recording {
                bytes: modular.clone(),
                ranges: Arc::default(),
            };
            let ranges = reader.ranges.clone();
            let got: Vec<_> = futures::executor::block_on(async {
                let r = ModularAsyncReader::open(reader, modular.len() as u64, &projection)
                    .await
                    .unwrap();
                let mask = r.projected().mask.clone();
                ParquetRecordBatchStreamBuilder::new(r)
                    .await
                    .unwrap()
                    .with_projection(mask)
                    .with_batch_size(100)
                    .build()
                    .unwrap()
                    .try_collect()
                    .await
                    .unwrap()
            });
            // The stream ends a batch at every row-group boundary: compare the rows.
            let concat = |b: &[arrow_array::RecordBatch]| {
                arrow_select::concat::concat_batches(&expected[0].schema(), b).unwrap()
            };
            let (got, expected) = (concat(&got), concat(&expected));
            assert_eq!(
                got, expected,
                "{name}: async, leaves {leaves:?}, row groups {rgs:?}"
            );
            let tail = footer
                .metadata_start()
                .min(modular.len() as u64 - 65536.min(modular.len() as u64));
            let projected = projected_metadata(&footer, &projection).unwrap();
            let mut allowed: Vec<Range<u64>> = Vec::new();
            allowed.push(tail..modular.len() as u64);
            for &l in &projected.leaves {
                for &r in &projected.row_groups {
                    let p = footer.chunk_placement(l as u32, r as u32).unwrap();
                    let start = p
                        .dictionary_pages
                        .get(0)
                        .unwrap()
                        .unwrap_or(p.data_page_offset);
                    allowed.push(start..start + p.total_compressed_size);
                }
            }
            for r in ranges.lock().unwrap().iter() {
                assert!(
                    allowed.iter().any(|a| a.start <= r.start && r.end <= a.end),
                    "{name}: fetched {r:?} outside the tail and the projected chunks"
                );
            }
            cases += 1;
        }
    }
    assert_eq!(cases, 6 * 8);
}

#[test]
fn names_select_leaves_and_unknown_names_are_errors() {
    let standard = arrow_writer_file();
    let modular = convert(&standard).unwrap();
    let footer = ModularFooter::parse(&modular).unwrap();
    // Leaves: id 0, name 1, score 2, address.city 3, address.zip 4, tags.list.element 5.
    let p = projected_metadata(&footer, &Projection::columns(["address", "id"])).unwrap();
    assert_eq!(p.leaves, [0, 3, 4]);
    let p = projected_metadata(&footer, &Projection::columns(["address.zip"])).unwrap();
    assert_eq!(p.leaves, [4]);
    // The schema keeps the whole top-level field; the mask narrows it.
    assert_eq!(p.metadata.file_metadata().schema_descr().num_columns(), 2);
    let e =
        projected_metadata(&footer, &Projection::columns(["id", "address.street"])).unwrap_err();
    assert!(
        matches!(&e, ProjectionError::UnknownColumn(ColumnSelector::Name(n)) if n == "address.street")
    );
    assert!(e.to_string().contains("address.street"), "{e}");
    let e = projected_metadata(&footer, &Projection::leaves([6])).unwrap_err();
    assert!(matches!(
        e,
        ProjectionError::UnknownColumn(ColumnSelector::Leaf(6))
    ));
    let e = projected_metadata(&footer, &Projection::all().with_row_groups([9])).unwrap_err();
    assert!(e.to_string().contains("row group 9"), "{e}");
    // The projected metadata decodes with arrow-rs's own reader metadata.
    let p = projected_metadata(&footer, &Projection::columns(["tags", "name"])).unwrap();
    let meta = ArrowReaderMetadata::try_new(p.metadata.clone(), Default::default()).unwrap();
    let fields: Vec<_> = meta
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(fields, ["name", "tags"]);
}
