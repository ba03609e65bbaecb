//! Scan planning on a generated Paimon table with many manifests (`lakecore::paimon::synth`,
//! the `lakecore demo` table generator): random queries planned in parallel through
//! the sidecars must give the same live files as full reads (sidecars switched off) and as
//! the generator's own model of what it wrote, filtered by a naive reference predicate.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    dead_code
)]

use lakecore_testkit::rng::Rng;

use lakecore::paimon::synth::{self, Entry, Generated, Key, Spec};
use lakecore::paimon::{ManifestRead, ScanOptions, ScanPlan, ScanQuery, Table};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// A small but many-manifest table: 120 manifests (12 of them compactions with DELETE
/// entries), 4 blocks per append manifest, 3 in the delta list.
fn spec() -> Spec {
    Spec {
        manifests: 120,
        days: 10,
        hours: vec![0, 12, 23],
        partitions_per_manifest: 2,
        buckets: 4,
        files_per_bucket: 8,
        entries_per_block: 16,
        compaction_every: 10,
        delta_manifests: 3,
        seed: 42,
    }
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "lakecore-scan-generated-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn generate(name: &str) -> (TempDir, Generated) {
    let dir = TempDir::new(name);
    let generated = synth::generate(&dir.0, &spec()).unwrap();
    (dir, generated)
}

// ------------------------------------------------------------- reference predicate

fn ref_matches(e: &Entry, q: &ScanQuery) -> bool {
    if let Some(ranges) = &q.rows {
        let last = e.first_row_id + e.row_count - 1;
        if !ranges
            .iter()
            .any(|&(a, b)| a as i64 <= last && e.first_row_id <= b as i64)
        {
            return false;
        }
    }
    if let Some(buckets) = &q.buckets {
        if !buckets
            .iter()
            .any(|&(b, t)| b == e.bucket && t.is_none_or(|t| t == e.total_buckets))
        {
            return false;
        }
    }
    q.partition.iter().all(|(k, v)| match k.as_str() {
        "dt" => *v == e.dt,
        "hr" => v.parse::<i32>() == Ok(e.hr),
        other => panic!("no key {other}"),
    })
}

fn model_set(g: &Generated, q: &ScanQuery) -> BTreeSet<Key> {
    g.live()
        .into_iter()
        .filter(|(_, e)| ref_matches(e, q))
        .map(|(k, _)| k)
        .collect()
}

fn plan_set(plan: &ScanPlan) -> BTreeSet<Key> {
    plan.files
        .iter()
        .map(|f| (f.partition.to_vec(), f.bucket, f.file_name.to_string()))
        .collect()
}

/// The manifests scanned by `threads` workers (interleaved), then reconciled in order.
fn parallel_plan(table: &Table, q: &ScanQuery, threads: usize) -> ScanPlan {
    let prepared = table.prepare(None, q).unwrap();
    let manifests = prepared.manifests();
    let mut slots: Vec<Option<_>> = vec![None; manifests.len()];
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let prepared = &prepared;
                s.spawn(move || {
                    manifests
                        .iter()
                        .enumerate()
                        .skip(t)
                        .step_by(threads)
                        .map(|(i, m)| (i, prepared.scan_manifest(m).unwrap()))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            for (i, scan) in h.join().unwrap() {
                slots[i] = Some(scan);
            }
        }
    });
    prepared.finish(slots.into_iter().map(Option::unwrap).collect())
}

fn random_query(rng: &mut Rng, g: &Generated, spec: &Spec) -> ScanQuery {
    let mut q = ScanQuery::default();
    if rng.below(2) == 0 {
        let rows = g.rows as u64;
        q.rows = Some(
            (0..1 + rng.below(3))
                .map(|_| {
                    let a = rng.below(rows + 10);
                    (a, a + rng.below(rows / 50 + 1))
                })
                .collect(),
        );
    }
    if rng.below(2) == 0 {
        q.buckets = Some(
            (0..1 + rng.below(2))
                .map(|_| {
                    let b = rng.below(spec.buckets as u64 + 1) as i32;
                    match rng.below(3) {
                        0 => (b, None),
                        1 => (b, Some(spec.buckets)),
                        _ => (b, Some(spec.buckets + 1)),
                    }
                })
                .collect(),
        );
    }
    match rng.below(4) {
        0 => {}
        1 => q.partition.push((
            "dt".into(),
            synth::day_text(rng.below(spec.days as u64 + 1) as usize),
        )),
        2 => q.partition.push((
            "hr".into(),
            [0, 12, 23, 5][rng.below(4) as usize].to_string(),
        )),
        _ => {
            q.partition.push((
                "hr".into(),
                spec.hours[rng.below(spec.hours.len() as u64) as usize].to_string(),
            ));
            q.partition.push((
                "dt".into(),
                synth::day_text(rng.below(spec.days as u64) as usize),
            ));
        }
    }
    q
}

// ------------------------------------------------------------------------- tests

#[test]
fn unfiltered_scan_equals_the_model() {
    let (dir, g) = generate("unfiltered");
    let spec = spec();
    let table = Table::open(&dir.0).unwrap();
    let plan = table.plan(None, &ScanQuery::default()).unwrap();
    let want = model_set(&g, &ScanQuery::default());
    assert_eq!(plan_set(&plan), want);
    assert_eq!(plan.files.len(), want.len());
    assert_eq!(plan.snapshot, Some(g.snapshot));
    let s = plan.stats;
    assert_eq!(s.manifests, spec.manifests as u64);
    assert_eq!(s.manifests_with_sidecar, s.manifests);
    assert_eq!(s.manifests_sidecar_invalid, 0);
    assert_eq!(s.blocks_total, g.blocks);
    assert_eq!(s.blocks_read, s.blocks_total);
    assert_eq!(s.manifest_bytes_total, g.manifest_bytes);
    assert_eq!(s.sidecar_bytes_read, g.sidecar_bytes);
    assert_eq!(s.entries_matched, g.entries.len() as u64);
    // The table has what it claims: DELETEs that remove files, several blocks per manifest.
    let deletes = g.entries.iter().filter(|e| e.delete).count();
    assert!(deletes > 0);
    assert_eq!(want.len(), g.entries.len() - 2 * deletes);
    assert!(g.blocks >= 3 * spec.manifests as u64);
    // Row IDs stay unique among live files (compaction keeps the merged range).
    let mut ranges: Vec<(i64, i64)> = plan
        .files
        .iter()
        .map(|f| (f.first_row_id.unwrap(), f.row_count))
        .collect();
    ranges.sort();
    for w in ranges.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "{w:?}");
    }
}

#[test]
fn random_queries_in_parallel_equal_full_reads_and_the_model() {
    let (dir, g) = generate("random");
    let spec = spec();
    let table = Table::open(&dir.0).unwrap();
    // The baseline opens every manifest in full: no sidecars, no manifest pruning.
    let off = ScanOptions {
        read_sidecars: false,
        prune_manifests: false,
    };
    let mut rng = Rng::xorshift(0x9e37_79b9_7f4a_7c15);
    let (mut nonempty, mut pruned) = (0, 0);
    for i in 0..40 {
        let q = random_query(&mut rng, &g, &spec);
        let want = model_set(&g, &q);
        let with = parallel_plan(&table, &q, 1 + i % 4);
        let full = table.plan_with(None, &q, off).unwrap();
        assert_eq!(plan_set(&with), want, "{q:?}");
        assert_eq!(plan_set(&full), want, "{q:?}");
        assert_eq!(with.files, full.files, "{q:?}");
        let (s, f) = (with.stats, full.stats);
        assert_eq!(s.manifests, spec.manifests as u64);
        assert_eq!(
            s.manifests_with_sidecar + s.manifests_pruned,
            spec.manifests as u64
        );
        assert_eq!(f.manifests_with_sidecar, 0);
        assert_eq!(f.manifests_pruned, 0);
        assert_eq!((f.blocks_read, f.blocks_total), (g.blocks, g.blocks));
        assert_eq!(f.manifest_bytes_read, g.manifest_bytes);
        assert_eq!(f.sidecar_bytes_read, 0);
        assert!(s.blocks_total <= g.blocks);
        assert!(s.blocks_read <= s.blocks_total);
        assert_eq!(s.manifest_bytes_total, g.manifest_bytes);
        assert!(s.manifest_bytes_read <= s.manifest_bytes_total);
        // Entries matched with sidecars are a subset of those of the full read.
        assert!(s.entries_matched <= f.entries_matched, "{q:?}");
        nonempty += usize::from(!want.is_empty());
        pruned += usize::from(s.blocks_read < s.blocks_total);
    }
    assert!(nonempty >= 15, "{nonempty}");
    assert!(pruned >= 20, "{pruned}");
}

#[test]
fn selective_queries_read_few_blocks() {
    let (dir, g) = generate("selective");
    let table = Table::open(&dir.0).unwrap();
    let one_partition = ScanQuery {
        partition: vec![
            ("dt".into(), synth::day_text(4)),
            ("hr".into(), "12".into()),
        ],
        ..ScanQuery::default()
    };
    let middle = g.rows as u64 / 2;
    let row_range = ScanQuery {
        rows: Some(vec![(middle, middle + 1000)]),
        ..ScanQuery::default()
    };
    for q in [one_partition, row_range] {
        let plan = parallel_plan(&table, &q, 2);
        assert_eq!(plan_set(&plan), model_set(&g, &q));
        assert!(!plan.files.is_empty(), "{q:?}");
        let s = plan.stats;
        assert!(s.blocks_read * 20 < g.blocks, "{q:?}: {s:?}");
        assert!(
            s.manifest_bytes_read * 20 < s.manifest_bytes_total,
            "{q:?}: {s:?}"
        );
    }
}

#[test]
fn damaged_or_missing_sidecars_fall_back_to_full_reads() {
    let (dir, g) = generate("damaged");
    let manifest_dir = dir.0.join("manifest");
    let mut sidecars: Vec<PathBuf> = std::fs::read_dir(&manifest_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(".avro.sidecar"))
        .collect();
    sidecars.sort();
    assert_eq!(sidecars.len(), spec().manifests);
    // Flip a byte in one, remove another.
    let mut bytes = std::fs::read(&sidecars[7]).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x40;
    std::fs::write(&sidecars[7], bytes).unwrap();
    std::fs::remove_file(&sidecars[30]).unwrap();
    let table = Table::open(&dir.0).unwrap();
    let q = ScanQuery {
        buckets: Some(vec![(2, None)]),
        ..ScanQuery::default()
    };
    let plan = parallel_plan(&table, &q, 3);
    assert_eq!(plan_set(&plan), model_set(&g, &q));
    let s = plan.stats;
    assert_eq!(s.manifests_sidecar_invalid, 2);
    assert_eq!(s.manifests_with_sidecar, spec().manifests as u64 - 2);
    // The two fall-backs are reported per manifest.
    let prepared = table.prepare(None, &q).unwrap();
    let reads: Vec<ManifestRead> = prepared
        .manifests()
        .iter()
        .map(|m| prepared.scan_manifest(m).unwrap().read)
        .collect();
    assert_eq!(
        reads
            .iter()
            .filter(|r| matches!(r, ManifestRead::SidecarInvalid(_)))
            .count(),
        1
    );
    assert_eq!(
        reads
            .iter()
            .filter(|r| **r == ManifestRead::SidecarUnreadable)
            .count(),
        1
    );
}
