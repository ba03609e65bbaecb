//! AVX2 + BMI1/2 + POPCNT kernels, one file per algorithm: [`varint`] (block masks, one-byte
//! runs, whole-block decoders), [`unpack`] (`vpshufb` + `vpsrlvd` bit unpacking, 8 values per
//! step) and [`merge`] (the BLOB length check and merge layer).
//!
//! Two tables: [`KERNELS`] (`avx2`) gathers varint bits with PEXT, [`KERNELS_NOPEXT`]
//! (`avx2-nopext`, for AMD Zen 1/2 where PEXT is microcoded) with shifts and masks; the rest
//! is shared. Every `unsafe fn` here requires AVX2, BMI1, BMI2 and POPCNT on the running CPU
//! (checked by the table's [`available`](crate::arch::Kernels::available) before any call).

pub(super) mod merge;
pub(super) mod unpack;
pub(super) mod varint;

use crate::arch::kernels::Kernels;
use crate::arch::wire::{Unsigned, ZigZag};
use merge::{check_lengths, merge_layer};
use unpack::{unpack_u32, unpack_u64};
use varint::{count_uvarints, delta_decode};

/// The AVX2 table with PEXT (Intel since Haswell, AMD since Zen 3).
pub(crate) static KERNELS: Kernels = Kernels {
    name: "avx2",
    available: has_avx2_pext,
    delta_u64: delta_decode::<Unsigned, true>,
    delta_zigzag: delta_decode::<ZigZag, true>,
    ..NOPEXT
};

/// The AVX2 table without PEXT: varint bits gathered with shifts and masks (AMD Zen 1/2).
pub(crate) static KERNELS_NOPEXT: Kernels = NOPEXT;

const NOPEXT: Kernels = Kernels {
    name: "avx2-nopext",
    available: crate::arch::x86_64::has_avx2,
    delta_u64: delta_decode::<Unsigned, false>,
    delta_zigzag: delta_decode::<ZigZag, false>,
    count: count_uvarints,
    unpack_u32,
    unpack_u64,
    check_lengths,
    merge_layer,
};

fn has_avx2_pext() -> bool {
    crate::arch::x86_64::has_avx2() && crate::arch::x86_64::pext_is_fast()
}
