//! The Paimon data model and scan planning (feature `paimon`): manifests and manifest lists
//! ([`manifest`]), a manifest's sidecar lookup and fallback rules ([`sidecar`]), tables,
//! snapshots, partition predicates and the planner ([`Table`], [`Table::plan`]), and
//! synthetic tables for demos, tests and benchmarks ([`synth`]).
//!
//! This layer sits on the formats (the sidecar views), the codecs (Avro framing) and `io`
//! (mapping, span reads, caches); nothing below it knows Paimon's tables.

pub mod manifest;
mod plan;
pub mod sidecar;
pub mod synth;

pub use plan::*;
