//! Kernel entry points taking an explicit tier; `None` when the tier cannot run here.
//!
//! A tier that has no kernel of its own for an operation runs the scalar one, so every
//! available tier answers every call. The dispatched codecs call these with
//! [`active_tier`](super::active_tier); tests and benches (feature `expose-kernels`) call them
//! with each tier.

use super::{scalar, Tier};
use crate::codec::varint::VarintFormat;
use crate::error::Result;

/// Tier-explicit [`scalar::delta_decode_u64`].
pub fn delta_decode_u64(
    tier: Tier,
    bytes: &[u8],
    format: VarintFormat,
    prev: u64,
    min: u64,
    max: u64,
    out: &mut [u64],
) -> Option<Result<usize>> {
    tier.is_available()
        .then(|| scalar::delta_decode_u64(bytes, format, prev, min, max, out))
}

/// Tier-explicit [`scalar::delta_decode_zigzag`].
pub fn delta_decode_zigzag(
    tier: Tier,
    bytes: &[u8],
    format: VarintFormat,
    prev: i64,
    min: i64,
    max: i64,
    out: &mut [i64],
) -> Option<Result<usize>> {
    tier.is_available()
        .then(|| scalar::delta_decode_zigzag(bytes, format, prev, min, max, out))
}

/// Tier-explicit [`scalar::count_uvarints`].
pub fn count_uvarints(tier: Tier, bytes: &[u8], format: VarintFormat) -> Option<Result<usize>> {
    tier.is_available()
        .then(|| scalar::count_uvarints(bytes, format))
}

/// Tier-explicit [`scalar::unpack_u32`]; returns `Some(())` when the tier ran.
pub fn unpack_u32(
    tier: Tier,
    bytes: &[u8],
    width: u32,
    start: usize,
    out: &mut [u32],
) -> Option<()> {
    tier.is_available()
        .then(|| scalar::unpack_u32(bytes, width, start, out))
}

/// Tier-explicit [`scalar::unpack_u64`]; returns `Some(())` when the tier ran.
pub fn unpack_u64(
    tier: Tier,
    bytes: &[u8],
    width: u32,
    start: usize,
    out: &mut [u64],
) -> Option<()> {
    tier.is_available()
        .then(|| scalar::unpack_u64(bytes, width, start, out))
}
