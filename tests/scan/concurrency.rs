//! Many threads planning the same table through one shared sidecar cache: every plan equals
//! the one planned alone, before the threads start (the reconciliation, the cache's eviction
//! under contention and the planner's own rayon pool all run at once).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use lakecore::io::ByteCache;
use lakecore::paimon::{Filter, ScanQuery, Table};
use std::sync::Arc;

const TABLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/paimon/warehouse/sc.db/bucket4_rs"
);

#[test]
fn eight_threads_plan_500_times_each_through_one_cache() {
    const THREADS: usize = 8;
    const PLANS: usize = 500;
    let queries = [
        ScanQuery::default(),
        ScanQuery {
            filter: Some(Filter::parse("p IN (1, 3) OR p >= 7").unwrap()),
            ..ScanQuery::default()
        },
        ScanQuery {
            buckets: Some(vec![(2, Some(4))]),
            ..ScanQuery::default()
        },
    ];
    let alone = Table::open(TABLE).unwrap();
    let want: Vec<_> = queries
        .iter()
        .map(|q| alone.plan(None, q).unwrap().files)
        .collect();
    assert!(want.iter().all(|files| !files.is_empty()));
    assert!(want[1].len() < want[0].len() && want[2].len() < want[0].len());
    // Small enough that the six sidecars do not all fit: threads evict each other's entries.
    let cache = Arc::new(ByteCache::new(4096));
    let table = Table::open(TABLE)
        .unwrap()
        .with_sidecar_cache(Arc::clone(&cache));
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (table, queries, want) = (&table, &queries, &want);
            s.spawn(move || {
                for i in 0..PLANS {
                    let k = (t + i) % queries.len();
                    let plan = table.plan(None, &queries[k]).unwrap();
                    assert_eq!(plan.files, want[k], "thread {t} plan {i} query {k}");
                }
            });
        }
    });
    assert!(!cache.is_empty(), "the cache was used");
}
