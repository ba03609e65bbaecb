//! Layout-free primitives every format is built from: varints and delta streams, bit-packed
//! streams, checksums, the Thrift compact protocol, Avro container framing, and branch-free kernels over `i64` slots.
//!
//! Codecs know nothing about files; they take slices and report slice-relative offsets that
//! the formats shift to file offsets. Hot loops call [`crate::arch`] for their kernels.

pub mod avro;
pub mod bitpack;
pub mod checksum;
pub mod slots;
pub mod thrift;
pub mod varint;
