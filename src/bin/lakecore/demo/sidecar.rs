//! Demo section: one generated manifest and its sidecar in both layouts.

use super::Summary;
use crate::util::outln;
use crate::util::{CliResult, Failure};
use lakecore::codec::avro::Container;
use lakecore::paimon::manifest::build_from_manifest;
use lakecore::sidecar::{
    BuildSettings, Layout, ManifestFacts, PartitionMask, Query, RowRange, RowRanges, Sidecar,
    SidecarOptions,
};
use std::time::Instant;

/// The demo section: a synthetic manifest (real Avro, many blocks), its sidecars in both
/// layouts, mapped from disk, and timed selections.
pub(super) fn run(entries: usize, per_block: usize, summary: &mut Summary) -> CliResult {
    use apache_avro::types::Value;
    use lakecore::paimon::synth::Rng;
    outln!("\n== sidecar: synthetic manifest, {entries} entries, {per_block} per block");
    let schema_text = r#"{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[
        {"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},
        {"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},
        {"name":"_TOTAL_BUCKETS","type":"int"},
        {"name":"_FILE","type":{"type":"record","name":"file","fields":[
            {"name":"_FILE_NAME","type":"string"},{"name":"_ROW_COUNT","type":"long"},
            {"name":"_FIRST_ROW_ID","type":["null","long"],"default":null}]}}]}"#;
    let fail = |what: &str| Failure::Usage(format!("demo: {what}"));
    let schema = apache_avro::Schema::parse_str(schema_text).map_err(|_| fail("schema"))?;
    let mut writer = apache_avro::Writer::with_codec(&schema, Vec::new(), apache_avro::Codec::Null);
    let mut rng = Rng::new(7);
    let mut next_row = 0i64;
    let t0 = Instant::now();
    for i in 0..entries {
        // 28 date partitions, entries grouped by date as writers produce them; the date is
        // one 10-byte string field (in the row's variable part).
        let day = format!("2024-03-{:02}", 1 + i * 28 / entries.max(1));
        let mut partition = vec![0, 0, 0, 1];
        partition.extend_from_slice(&[0u8; 8]);
        partition.extend_from_slice(&((16u64 << 32) | 10).to_le_bytes());
        partition.extend_from_slice(day.as_bytes());
        partition.extend_from_slice(&[0u8; 6]);
        let rows = 1 + (rng.next_u64() % 5000) as i64;
        let record = Value::Record(vec![
            ("_VERSION".into(), Value::Int(2)),
            ("_KIND".into(), Value::Int(0)),
            ("_PARTITION".into(), Value::Bytes(partition)),
            ("_BUCKET".into(), Value::Int((rng.next_u64() % 16) as i32)),
            ("_TOTAL_BUCKETS".into(), Value::Int(16)),
            (
                "_FILE".into(),
                Value::Record(vec![
                    (
                        "_FILE_NAME".into(),
                        Value::String(format!("data-{i}.parquet")),
                    ),
                    ("_ROW_COUNT".into(), Value::Long(rows)),
                    (
                        "_FIRST_ROW_ID".into(),
                        Value::Union(1, Box::new(Value::Long(next_row))),
                    ),
                ]),
            ),
        ]);
        next_row += rows;
        writer.append(record).map_err(|_| fail("append"))?;
        if (i + 1) % per_block.max(1) == 0 {
            writer.flush().map_err(|_| fail("flush"))?;
        }
    }
    let manifest = writer.into_inner().map_err(|_| fail("finish"))?;
    let container =
        Container::parse(&manifest).map_err(|e| Failure::invalid("demo manifest", e))?;
    let blocks = container.blocks().count();
    outln!(
        "manifest: {} bytes, {} Avro blocks, {} rows, written in {:.1} ms",
        manifest.len(),
        blocks,
        next_row,
        t0.elapsed().as_secs_f64() * 1e3
    );
    let dir = std::env::temp_dir().join(format!("lakecore-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Failure::io(dir.display(), e))?;
    let facts = ManifestFacts {
        length: manifest.len() as u64,
        entries: entries as u64,
    };
    for layout in [Layout::Fixed, Layout::Compact] {
        let settings = BuildSettings {
            layout,
            ..BuildSettings::default()
        };
        let t = Instant::now();
        let bytes = build_from_manifest(&manifest, settings)
            .map_err(|e| Failure::invalid("demo manifest", e))?;
        let build_ms = t.elapsed().as_secs_f64() * 1e3;
        let path = dir.join(format!("manifest-demo.{}.avro.sidecar", layout.name()));
        crate::util::write_atomic(&path, &bytes)?;
        // SAFETY: the file was just written by this process and nobody modifies it while
        // mapped (it is removed after the map is dropped).
        #[allow(unsafe_code)]
        let map =
            unsafe { lakecore::io::map_file(&path) }.map_err(|e| Failure::io(path.display(), e))?;
        let t = Instant::now();
        let options = SidecarOptions { facts: Some(facts) };
        let s =
            Sidecar::parse_with(&map, &options).map_err(|e| Failure::invalid(path.display(), e))?;
        let validate_us = t.elapsed().as_secs_f64() * 1e6;
        if layout == Layout::Compact {
            summary.push(format!(
                "sidecar: {} layout {:.1}% of a {} kB manifest, mapped + validated in {validate_us:.0} µs",
                layout.name(),
                100.0 * map.len() as f64 / manifest.len() as f64,
                manifest.len() / 1024
            ));
        }
        outln!(
            "{:>7} sidecar: {} bytes ({:.1}% of the manifest), built in {:.1} ms, mapped + validated in {:.0} µs",
            layout.name(),
            map.len(),
            100.0 * map.len() as f64 / manifest.len() as f64,
            build_ms,
            validate_us
        );
        let probe = (next_row / 3) as u64;
        let mut ranges = [RowRange::single(probe)];
        let mask = s.partition_mask_vec(|t| {
            lakecore::sidecar::BinaryRow::from_partition(t, 0)
                .and_then(|row| row.get_str(0))
                .is_ok_and(|day| day == Some("2024-03-07"))
        });
        let bucket5 = |b: i32, _t: i32| b == 5;
        let queries: [(&str, Query<'_>); 3] = [
            (
                "row id point",
                Query::new().rows(RowRanges::normalize(&mut ranges)),
            ),
            (
                "partition dt=2024-03-07",
                Query::new().partitions(PartitionMask::new(&mask)),
            ),
            ("bucket 5", Query::new().buckets(&bucket5)),
        ];
        for (name, q) in &queries {
            let t = Instant::now();
            let mut kept = 0usize;
            let mut bytes_kept = 0u64;
            for b in s.select(q) {
                let b = b.map_err(|e| Failure::invalid(path.display(), e))?;
                kept += 1;
                bytes_kept += b.length;
            }
            outln!(
                "    select {:<24} {:>5}/{} blocks, {:>9} manifest bytes to read, {:.1} µs",
                name,
                kept,
                s.block_count(),
                bytes_kept,
                t.elapsed().as_secs_f64() * 1e6
            );
        }
        drop(map);
        let _ = std::fs::remove_file(&path);
    }
    let _ = std::fs::remove_dir(&dir);
    Ok(())
}
