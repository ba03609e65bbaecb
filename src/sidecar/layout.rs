//! The container layout of a sidecar: the format's constants, [`Layout`] (fixed-width
//! big-endian or compact LEB128, told apart by byte 4) and `Fields`, the reader of the
//! layout's container integers (counts, lengths, offsets).
//!
//! Every other part of `sidecar` reads container integers through `Fields`. This module knows
//! no sidecar structure (header, dictionary, blocks, checksum) and checks nothing beyond one
//! integer's bounds; the varint decoders it calls live in `codec::varint`.

use crate::codec::varint::{self, VarintFormat};
use crate::cursor::Cursor;
use crate::error::Result;

/// The four magic bytes at the start of every sidecar.
pub const MAGIC: [u8; 4] = *b"PMSC";
/// The only format version this crate reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// Trailer size of the fixed layout (SHA-256).
pub const FIXED_TRAILER_LEN: usize = 32;
/// Trailer size of the compact layout (big-endian CRC-32).
pub const COMPACT_TRAILER_LEN: usize = 4;
/// The smallest compact sidecar Apache Paimon accepts.
pub const COMPACT_MIN_LEN: usize = 33;
/// The smallest Avro header a sidecar may carry.
pub const MIN_AVRO_HEADER_LEN: u64 = 21;
/// The smallest partition tuple: arity prefix + 8-byte null region (arity 0).
pub const MIN_PARTITION_LEN: u64 = 12;
/// The Avro object-container magic the embedded header starts with.
pub const AVRO_MAGIC: [u8; 4] = crate::codec::avro::MAGIC;
/// Coverage encoding byte: no coverage (nothing follows).
pub const ENCODING_UNAVAILABLE: u8 = 0;
/// Coverage encoding byte: a payload of this format version follows.
pub const ENCODING_V1: u8 = 1;

/// Bound on counts and lengths (`int` fields; compact counts are bounded likewise).
pub(super) const MAX_INT: u64 = i32::MAX as u64;
/// Bound on offsets, lengths and record counts (`long` fields).
pub(super) const MAX_LONG: u64 = i64::MAX as u64;

/// The container layout of a sidecar (told apart by byte 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Fixed-width big-endian integers, SHA-256 trailer.
    Fixed,
    /// Canonical LEB128 varints, CRC-32 trailer (Apache Paimon's layout).
    Compact,
}

impl Layout {
    /// `"fixed"` or `"compact"`.
    pub const fn name(self) -> &'static str {
        match self {
            Layout::Fixed => "fixed",
            Layout::Compact => "compact",
        }
    }

    /// Smallest encoding of one dictionary record (length field + 12-byte tuple).
    pub(super) const fn min_partition_record(self) -> u64 {
        match self {
            Layout::Fixed => 4 + MIN_PARTITION_LEN,
            Layout::Compact => 1 + MIN_PARTITION_LEN,
        }
    }

    /// Smallest encoding of one block (three integers + three encoding bytes).
    pub(super) const fn min_block_record(self) -> u64 {
        match self {
            Layout::Fixed => 24 + 3,
            Layout::Compact => 6,
        }
    }
}

/// Reads the layout's container integers.
#[derive(Clone, Copy, Debug)]
pub(super) struct Fields<'a> {
    pub(super) cur: Cursor<'a>,
    pub(super) layout: Layout,
}

impl<'a> Fields<'a> {
    /// A reader at the start of `bytes`, which begin at absolute offset `origin`.
    #[inline(always)]
    pub(super) const fn with_origin(bytes: &'a [u8], origin: u64, layout: Layout) -> Self {
        Fields {
            cur: Cursor::with_origin(bytes, origin),
            layout,
        }
    }

    /// A count or length: `int` (fixed) or varint `<= i32::MAX` (compact); never negative.
    #[inline(always)]
    pub(super) fn count(&mut self) -> Result<u64> {
        match self.layout {
            Layout::Fixed => self.cur.len_i32_be().map(u64::from),
            Layout::Compact => match self.one_byte() {
                Some(v) => Ok(v),
                None => self.cur.uvarint_max(VarintFormat::SIDECAR, MAX_INT),
            },
        }
    }

    /// An offset, length or record count: `long` (fixed) or varint `<= i64::MAX`.
    #[inline(always)]
    pub(super) fn long(&mut self) -> Result<u64> {
        match self.layout {
            Layout::Fixed => self.cur.len_i64_be(),
            Layout::Compact => match self.short_varint() {
                Some(v) => Ok(v),
                None => self.cur.uvarint(VarintFormat::SIDECAR),
            },
        }
    }

    /// Branch-free decode of a canonical varint of 1..=8 bytes when 8 bytes are readable
    /// (offsets and lengths in compact sidecars); `None` sends every other case (longer,
    /// non-canonical, near the end) to the checked decoder, which also reports errors.
    #[inline(always)]
    fn short_varint(&mut self) -> Option<u64> {
        let (v, len) = varint::decode_short(self.cur.rest())?;
        self.cur.skip(len).ok()?;
        Some(v)
    }

    /// Fast path for the one-byte varints that dominate compact sidecars.
    #[inline(always)]
    fn one_byte(&mut self) -> Option<u64> {
        let b = self.cur.peek_u8()?;
        if b < 0x80 && self.cur.skip(1).is_ok() {
            return Some(u64::from(b));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sidecar::tests::xorshift;

    /// The branch-free short-varint path agrees with the checked decoder on every input
    /// shape: value, bytes consumed, and errors (which it leaves to the checked path).
    #[test]
    fn short_varint_fast_path_matches_the_checked_decoder() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        for _ in 0..200_000 {
            let mut buf = [0u8; 12];
            let r = next();
            for (i, b) in buf.iter_mut().enumerate() {
                let x = (next() >> 8) as u8;
                // Mostly continuation bytes for the first (r % 10) bytes, then a stop byte.
                *b = if (i as u64) < r % 10 {
                    x | 0x80
                } else {
                    x & 0x7f
                };
                if r.is_multiple_of(7) && (i as u64) == r % 10 {
                    *b = 0; // a non-canonical ending now and then
                }
            }
            let len = 1 + (r >> 40) as usize % 12;
            let bytes = &buf[..len];
            let mut fast = Fields {
                cur: Cursor::new(bytes),
                layout: Layout::Compact,
            };
            let mut slow = Cursor::new(bytes);
            let a = fast.long();
            let b = slow.uvarint(VarintFormat::SIDECAR);
            assert_eq!(a, b, "{bytes:02x?}");
            if a.is_ok() {
                assert_eq!(fast.cur.index(), slow.index());
            }
        }
    }
}
