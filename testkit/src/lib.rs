//! # lakecore-testkit
//!
//! What lakecore's tests (`tests/`), fuzz harnesses (`fuzz/`) and benches (`benches/`) share,
//! as one unpublished workspace member instead of `#[path]` includes:
//!
//! - [`rng`]: the deterministic generator every test and bench draws from;
//! - [`counting`]: the per-thread counting allocator of the no-allocation and limit tests;
//! - [`hex`] and [`data`]: hex text, and the golden vectors, real files and their oracles
//!   under `tests/data/`;
//! - [`oracle`]: naive varint and bit-packing reference implementations;
//! - [`sidecar`], [`blob`], [`footer`] and [`thrift`]: per-format fixtures and oracles (they
//!   build files with lakecore's writers, so they come with the features `alloc`/`std`,
//!   which lakecore's own `alloc`/`std` features switch on in its test builds).
//!
//! Test code: it panics on bad input instead of returning errors.

#[cfg(feature = "std")]
pub mod blob;
pub mod counting;
pub mod data;
#[cfg(feature = "alloc")]
pub mod footer;
pub mod hex;
pub mod oracle;
pub mod rng;
#[cfg(feature = "std")]
pub mod sidecar;
#[cfg(feature = "alloc")]
pub mod thrift;
