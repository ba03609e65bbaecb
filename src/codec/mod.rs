//! Layout-free primitives every format is built from: varints and delta streams, bit-packed
//! streams, checksums, the Thrift compact protocol.
//!
//! Codecs know nothing about files; they take slices and report slice-relative offsets that
//! the formats shift to file offsets. Hot loops call [`crate::arch`] for their kernels.

pub mod bitpack;
pub mod checksum;
pub mod thrift;
pub mod varint;
