//! Branch-free kernels over arrays of `i64` slots: a checked, masked sum over a chunk of
//! length entries and one layer's step of a fallback merge (a masked prefix sum that fills
//! unresolved slots). The BLOB reader uses them for its length index and its layer merge;
//! they know slices and integers only, and are dispatched to the fastest [`crate::arch`] tier.

use crate::arch;

pub use crate::arch::scalar::{LayerStep, LengthCheck};

/// Checks a chunk of length entries (see [`LengthCheck`]): each entry must be at least
/// `min_real` or one of the allowed negative markers `-1..=-floor`; returns the flags and the
/// sums callers derive their counts from.
#[inline]
pub fn check_lengths(chunk: &[i64], min_real: i64, floor: i64) -> LengthCheck {
    arch::check_lengths(chunk, min_real, floor)
}

/// One layer's step of a fallback merge over slots: for each entry, a slot still unresolved
/// (its entry below `-1`) takes this layer's entry, its record offset (`record` plus the
/// non-negative entries before it) and `tag`. Returns the record offset after the walked
/// entries and whether a walked slot is still unresolved.
#[inline]
pub fn merge_layer(
    entries: &[i64],
    record: u64,
    tag: u64,
    slot_entries: &mut [i64],
    slot_offsets: &mut [u64],
    slot_tags: &mut [u64],
) -> LayerStep {
    arch::merge_layer(entries, record, tag, slot_entries, slot_offsets, slot_tags)
}
