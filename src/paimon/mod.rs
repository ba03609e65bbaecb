//! The Paimon data model and scan planning (feature `paimon`): manifests and manifest lists
//! ([`manifest`]), deletion vectors ([`deletion`]), a manifest's sidecar lookup and fallback rules ([`sidecar`]), tables,
//! snapshots, partition predicates and the planner ([`Table`], [`Table::plan`]), splits ([`Table::splits`]), and
//! synthetic tables for demos, tests and benchmarks ([`synth`]).
//!
//! This layer sits on the formats (the sidecar views), the codecs (Avro framing) and `io`
//! (mapping, span reads, caches); nothing below it knows Paimon's tables.

#[cfg(feature = "arrow")]
pub mod arrow;
pub mod blob;
pub mod bucket;
pub mod compression;
pub mod deletion;
mod error;
mod filter;
pub mod manifest;
mod plan;
mod predicate;
pub mod sidecar;
mod split;
pub mod synth;
mod table;

pub use deletion::{DeletionFile, DeletionIndex};
pub use error::ScanError;
pub use filter::{condition_text, parse_conditions, CmpOp, Filter};
pub use plan::{
    DataFile, EntryPosition, ManifestRead, ManifestScan, ManifestScanner, PreparedScan, Reconciler,
    ScanEntry, ScanOptions, ScanPlan, ScanStats,
};
pub use predicate::{
    parse_timestamp_millis, PartitionPredicate, PartitionType, ScanQuery, DEFAULT_PARTITION_NAME,
};
pub use split::{anchor_file, Split, SplitFile};
pub use table::{
    civil_date, parse_memory_size, PartitionValue, Snapshot, SnapshotSpec, Table, TableSchema,
};
