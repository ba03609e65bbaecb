//! # lakecore
//!
//! Zero-copy readers for lakehouse metadata straight out of memory-mapped files: Apache
//! Paimon manifest sidecars, Parquet modular-footer metadata pages and Paimon BLOB files.
//! Views validate borrowed bytes once, in place, then decode their varint and bit-packed
//! arrays lazily (SIMD kernels with scalar fallbacks) and select exactly the byte ranges a
//! scan needs — without allocating on those paths.
//!
//! The core is `#![no_std]`; feature `alloc` adds builders and writers, `std` (default) adds
//! file I/O (memory mapping, nothing else), `simd` (default) the SIMD kernels, `paimon` the
//! Paimon manifests, tables and scan planner (Avro decoding, codecs, JSON), `parquet` the
//! standard-Parquet-to-modular-footer converter (read with the `parquet` crate), `cli` the
//! `lakecore` tool.
//!
//! Layers, bottom to top: [`error`] and [`arch`] (CPU-specific kernels and their dispatch;
//! it knows slices and integers only); [`cursor`] (the checked cursor), [`codec`] (varints,
//! bit packing, checksums, Thrift, Avro framing) and [`select`] (the row ranges every format
//! selects by); the formats, which never import each other: [`sidecar`] (Paimon manifest
//! sidecars), [`blob`] (Paimon BLOB files), [`footer`] (Parquet modular footers);
//! [`sniff`] (which of these a file's magic numbers say it is); `io`
//! (feature `std`: mapping, span reads, caches); and `paimon` (feature `paimon`: manifests,
//! tables, scan planning).
//!
//! ```
//! use lakecore::codec::varint::{ZigZagDeltaIter, VarintFormat};
//! // BLOB index lengths [22, -1, 22] as ZigZag deltas: 22, -23, +23.
//! let index = [0x2c, 0x2d, 0x2e];
//! let lengths: Vec<i64> = ZigZagDeltaIter::zigzag(&index, 0, VarintFormat::U64)
//!     .collect::<Result<_, _>>()
//!     .unwrap();
//! assert_eq!(lengths, [22, -1, 22]);
//! ```

#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod arch;
pub mod blob;
pub mod codec;
pub mod cursor;
pub mod error;
pub mod footer;
#[cfg(feature = "std")]
pub mod io;
#[cfg(feature = "paimon")]
pub mod paimon;
pub mod select;
pub mod sidecar;
pub mod sniff;

pub use error::{Error, ErrorKind, Location, Result};

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
