//! AVX-512 kernels, one file per algorithm: [`varint`] (block masks, one-byte runs, and with
//! VBMI2 the stream loops and whole-block gathers), [`unpack`] (VBMI bit unpacking) and
//! [`merge`] (the BLOB length check and merge layer with 512-bit registers).
//!
//! Three tables: [`KERNELS`] (`avx512`: Skylake-SP, Cascade Lake; the unpackers are the AVX2
//! ones), [`KERNELS_VBMI`] (`avx512-vbmi`: adds the VBMI unpackers) and [`KERNELS_VBMI2`]
//! (`avx512-vbmi2`: adds the VBMI2 varint decoders; Ice Lake and later, AMD Zen 4). All gather
//! varint bits with PEXT, so they count as available only where it is fast (every AVX-512 CPU
//! so far). Every `unsafe fn` here requires AVX-512 F/BW/VL, AVX2 and BMI2 on the running CPU
//! (checked by the table's [`available`](crate::arch::Kernels::available) before any call),
//! plus VBMI or VBMI2 where its name says so.

pub(super) mod merge;
pub(super) mod unpack;
pub(super) mod varint;

use super::avx2;
use crate::arch::kernels::Kernels;
use crate::arch::wire::{Unsigned, ZigZag};
use core::arch::x86_64::{__m512i, _mm512_loadu_si512};
use merge::{check_lengths, merge_layer};
use unpack::{unpack_u32_vbmi, unpack_u64_vbmi};
use varint::{count_uvarints, delta_decode, delta_vbmi2};

/// The AVX-512 table without VBMI: AVX-512 block masks and one-byte runs, the AVX2 tier's
/// whole-block paths and unpackers.
pub(crate) static KERNELS: Kernels = AVX512;

const AVX512: Kernels = Kernels {
    name: "avx512",
    available: has_avx512_pext,
    delta_u64: delta_decode::<Unsigned>,
    delta_zigzag: delta_decode::<ZigZag>,
    count: count_uvarints,
    unpack_u32: avx2::unpack::unpack_u32,
    unpack_u64: avx2::unpack::unpack_u64,
    check_lengths,
    merge_layer,
};

/// [`KERNELS`] with the VBMI (`vpermb`) unpackers.
pub(crate) static KERNELS_VBMI: Kernels = VBMI;

const VBMI: Kernels = Kernels {
    name: "avx512-vbmi",
    available: has_vbmi_pext,
    unpack_u32: unpack_u32_vbmi,
    unpack_u64: unpack_u64_vbmi,
    ..AVX512
};

/// [`KERNELS_VBMI`] with the VBMI2 varint decoders (stream loops and whole-block gathers).
pub(crate) static KERNELS_VBMI2: Kernels = Kernels {
    name: "avx512-vbmi2",
    available: has_vbmi2_pext,
    delta_u64: delta_vbmi2::<Unsigned>,
    delta_zigzag: delta_vbmi2::<ZigZag>,
    ..VBMI
};

fn has_avx512_pext() -> bool {
    super::has_avx512() && super::pext_is_fast()
}

fn has_vbmi_pext() -> bool {
    super::has_avx512_vbmi() && super::pext_is_fast()
}

fn has_vbmi2_pext() -> bool {
    super::has_avx512_vbmi2() && super::pext_is_fast()
}

/// Loads a 64-byte table row.
///
/// # Safety
/// AVX-512F present.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn load64(row: &[u8; 64]) -> __m512i {
    // SAFETY: `row` is exactly 64 readable bytes.
    unsafe { _mm512_loadu_si512(row.as_ptr().cast()) }
}
