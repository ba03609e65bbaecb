//! The only module that knows about CPUs: kernel variants and their dispatch.
//!
//! Every kernel has a scalar reference in `scalar`; ISA variants (`x86_64`: AVX2, AVX-512;
//! `aarch64`: NEON) add faster versions that must agree with it on every input, including
//! the error kind and offset for bad input. Dispatch order:
//!
//! 1. `--cfg lakecore_backend="scalar"` (or the `simd` feature off): scalar only;
//! 2. target features enabled at compile time (`-C target-feature=+avx2`, NEON on aarch64);
//! 3. runtime detection, done once and cached in an atomic;
//! 4. scalar.
//!
//! Each concrete variant is one [`Kernels`] table (`kernels`); the best available one is
//! chosen once. Short inputs go straight to scalar: a SIMD kernel pays off only past a few
//! dozen bytes.
//!
//! This is the bottom layer: it uses only [`crate::error`] and knows slices and integers, no
//! codec or format. The codecs call it with plain slices (the BLOB merge kernels, masked
//! prefix sums over `i64` slots, are reached through `codec::slots`).

#![allow(unsafe_code)]

pub(crate) mod wire;

#[cfg(feature = "expose-kernels")]
pub mod fields;
#[cfg(not(feature = "expose-kernels"))]
pub(crate) mod fields;
#[cfg(feature = "expose-kernels")]
pub mod scalar;
#[cfg(not(feature = "expose-kernels"))]
pub(crate) mod scalar;

// `x86_simd` / `aarch64_simd` (set by `build.rs`): feature `simd` on, the architecture's SIMD
// kernels compiled in, not forced to scalar with `--cfg lakecore_backend="scalar"`.
#[cfg(all(lakecore_backend = "scalar", any(x86_simd, aarch64_simd)))]
compile_error!("build.rs missed `--cfg lakecore_backend=\"scalar\"`: pass it through RUSTFLAGS");

#[cfg(x86_simd)]
mod x86_64;

#[cfg(aarch64_simd)]
mod aarch64;

#[cfg(any(x86_simd, aarch64_simd))]
mod unpack;

use crate::arch::wire::{DeltaMode, VarintFormat};
use crate::error::Result;

#[cfg(feature = "expose-kernels")]
pub mod kernels;
#[cfg(not(feature = "expose-kernels"))]
pub(crate) mod kernels;

pub use kernels::Kernels;

/// The kernel table the dispatched codecs use: the best variant this machine runs, chosen on
/// first use and cached (its [`name`](Kernels::name) says which, e.g. `avx512-vbmi2`).
pub fn active_kernels() -> &'static Kernels {
    kernels::active()
}

// Dispatched entry points used by the codecs: the one place where short inputs go straight to
// scalar (a SIMD kernel pays off only past a few dozen bytes); everything else goes to the
// active table.

/// Varint streams shorter than this go straight to scalar (a block needs 80 bytes).
const SHORT_VARINT_BYTES: usize = 96;
/// Varint decodes of fewer values than this go straight to scalar.
const SHORT_VARINT_VALUES: usize = 8;
/// Unpack requests for fewer values than this go straight to scalar.
const SHORT_UNPACK_VALUES: usize = 16;

#[inline]
pub(crate) fn delta_decode<M: DeltaMode>(
    bytes: &[u8],
    format: VarintFormat,
    prev: M::Value,
    min: M::Value,
    max: M::Value,
    out: &mut [M::Value],
) -> Result<usize> {
    if bytes.len() < SHORT_VARINT_BYTES || out.len() < SHORT_VARINT_VALUES {
        return scalar::delta_decode::<M>(bytes, format, prev, min, max, out);
    }
    // SAFETY: `active` hands out only tables whose `available` returned true.
    unsafe { M::kernel(kernels::active())(bytes, format, prev, min, max, out) }
}

#[inline]
pub(crate) fn count_uvarints(bytes: &[u8], format: VarintFormat) -> Result<usize> {
    if bytes.len() < SHORT_VARINT_BYTES {
        return scalar::count_uvarints(bytes, format);
    }
    // SAFETY: `active` hands out only tables whose `available` returned true.
    unsafe { (kernels::active().count)(bytes, format) }
}

#[inline]
pub(crate) fn check_lengths(chunk: &[i64], min_real: i64, floor: i64) -> scalar::LengthCheck {
    // SAFETY: `active` hands out only tables whose `available` returned true.
    unsafe { (kernels::active().check_lengths)(chunk, min_real, floor) }
}

#[inline]
pub(crate) fn merge_layer(
    entries: &[i64],
    record: u64,
    tag: u64,
    slot_entries: &mut [i64],
    slot_offsets: &mut [u64],
    slot_tags: &mut [u64],
) -> scalar::LayerStep {
    let merge = kernels::active().merge_layer;
    // SAFETY: `active` hands out only tables whose `available` returned true.
    unsafe { merge(entries, record, tag, slot_entries, slot_offsets, slot_tags) }
}

#[inline]
pub(crate) fn unpack_u32(bytes: &[u8], width: u32, start: usize, out: &mut [u32]) {
    if out.len() < SHORT_UNPACK_VALUES {
        return scalar::unpack_u32(bytes, width, start, out);
    }
    // SAFETY: `active` hands out only tables whose `available` returned true.
    unsafe { (kernels::active().unpack_u32)(bytes, width, start, out) }
}

#[inline]
pub(crate) fn unpack_u64(bytes: &[u8], width: u32, start: usize, out: &mut [u64]) {
    if out.len() < SHORT_UNPACK_VALUES {
        return scalar::unpack_u64(bytes, width, start, out);
    }
    // SAFETY: `active` hands out only tables whose `available` returned true.
    unsafe { (kernels::active().unpack_u64)(bytes, width, start, out) }
}

/// SHA-256 block compression with the state kept between calls: the portable engine
/// ([`PortableSha256`], the `sha2` crate) or an ISA one (x86_64 SHA-NI), chosen by
/// [`with_sha256`].
pub(crate) trait Sha256Blocks {
    /// Compresses `blocks` into the state.
    fn compress(&mut self, blocks: &[[u8; 64]]);
    /// The state as the eight words A..H.
    fn words(&self) -> [u32; 8];
}

/// A job that hashes with whichever [`Sha256Blocks`] engine it is given.
pub(crate) trait WithSha256 {
    /// What the job returns.
    type Output;
    /// Runs the job; implementations should be `#[inline(always)]`, so that the job is compiled
    /// with the engine's target features and the engine's wrappers inline into it.
    fn run<E: Sha256Blocks>(self, engine: E) -> Self::Output;
}

/// `sha2`'s `compress256` (which picks SHA-NI or ARMv8 crypto at run time itself, but keeps
/// the state as eight words between calls).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortableSha256(pub(crate) [u32; 8]);

impl Sha256Blocks for PortableSha256 {
    #[inline]
    fn compress(&mut self, blocks: &[[u8; 64]]) {
        sha2::block_api::compress256(&mut self.0, blocks);
    }

    #[inline]
    fn words(&self) -> [u32; 8] {
        self.0
    }
}

/// Runs `job` with the fastest SHA-256 engine this machine has, started from `state`.
#[inline]
pub(crate) fn with_sha256<W: WithSha256>(state: [u32; 8], job: W) -> W::Output {
    #[cfg(x86_simd)]
    if x86_64::sha256::available() {
        // SAFETY: `available` checked that the CPU has the features `run` is compiled with.
        return unsafe { x86_64::sha256::run(state, job) };
    }
    job.run(PortableSha256(state))
}
