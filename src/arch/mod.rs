//! The only module that knows about CPUs: kernel tiers and their dispatch.
//!
//! Every kernel has a scalar reference in `scalar`; ISA tiers (`x86_64`: AVX2, AVX-512;
//! `aarch64`: NEON) add faster versions that must agree with it on every input, including
//! the error kind and offset for bad input. Dispatch order:
//!
//! 1. `--cfg lakecore_backend="scalar"` (or the `simd` feature off): scalar only;
//! 2. target features enabled at compile time (`-C target-feature=+avx2`, NEON on aarch64);
//! 3. runtime detection, done once and cached in an atomic;
//! 4. scalar.
//!
//! Short inputs go straight to scalar: a SIMD kernel pays off only past a few dozen bytes.
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

#[cfg(all(
    feature = "simd",
    not(lakecore_backend = "scalar"),
    target_arch = "x86_64"
))]
mod x86_64;

#[cfg(all(
    feature = "simd",
    not(lakecore_backend = "scalar"),
    target_arch = "aarch64",
    target_endian = "little"
))]
mod aarch64;

#[cfg(all(
    feature = "simd",
    not(lakecore_backend = "scalar"),
    any(
        target_arch = "x86_64",
        all(target_arch = "aarch64", target_endian = "little")
    )
))]
mod unpack;

use crate::arch::wire::VarintFormat;
use crate::error::Result;
use core::sync::atomic::{AtomicU8, Ordering};

/// A family of kernels, one per instruction-set level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Tier {
    /// Portable scalar code; always available.
    Scalar,
    /// x86_64 with AVX2, BMI1/2 and POPCNT.
    Avx2,
    /// x86_64 with AVX-512 F/BW/VL, AVX2, BMI1/2 and POPCNT (and VBMI/VBMI2 where present).
    Avx512,
    /// aarch64 with NEON (Advanced SIMD).
    Neon,
}

impl Tier {
    /// Every tier this crate knows, fastest last.
    pub const ALL: [Tier; 4] = [Tier::Scalar, Tier::Avx2, Tier::Avx512, Tier::Neon];

    /// The tier's lowercase name.
    pub const fn name(self) -> &'static str {
        match self {
            Tier::Scalar => "scalar",
            Tier::Avx2 => "avx2",
            Tier::Avx512 => "avx512",
            Tier::Neon => "neon",
        }
    }

    /// Whether this tier's kernels can run on this machine in this build.
    pub fn is_available(self) -> bool {
        match self {
            Tier::Scalar => true,
            other => simd_enabled() && detect::available(other),
        }
    }

    const fn code(self) -> u8 {
        match self {
            Tier::Scalar => 1,
            Tier::Avx2 => 2,
            Tier::Avx512 => 3,
            Tier::Neon => 4,
        }
    }

    const fn from_code(code: u8) -> Option<Tier> {
        match code {
            1 => Some(Tier::Scalar),
            2 => Some(Tier::Avx2),
            3 => Some(Tier::Avx512),
            4 => Some(Tier::Neon),
            _ => None,
        }
    }
}

/// Whether SIMD tiers are compiled in at all. Under Miri, which cannot execute `cpuid`, a
/// tier is available only when its target features are enabled at compile time (CI runs the
/// kernel tests under Miri with `-C target-feature=+avx2,...`, so the unsafe SIMD code is
/// checked too).
const fn simd_enabled() -> bool {
    cfg!(all(feature = "simd", not(lakecore_backend = "scalar")))
}

static ACTIVE: AtomicU8 = AtomicU8::new(0);

/// The tier dispatched kernels use: the best available one, detected once and cached.
pub fn active_tier() -> Tier {
    if let Some(tier) = Tier::from_code(ACTIVE.load(Ordering::Relaxed)) {
        return tier;
    }
    let best = Tier::ALL
        .into_iter()
        .rev()
        .find(|t| t.is_available())
        .unwrap_or(Tier::Scalar);
    ACTIVE.store(best.code(), Ordering::Relaxed);
    best
}

#[cfg(all(
    feature = "simd",
    not(lakecore_backend = "scalar"),
    target_arch = "x86_64"
))]
mod detect {
    use super::Tier;
    cpufeatures::new!(cpuid_avx2, "avx2", "bmi1", "bmi2", "popcnt");
    cpufeatures::new!(
        cpuid_avx512,
        "avx512f",
        "avx512bw",
        "avx512vl",
        "avx2",
        "bmi1",
        "bmi2",
        "popcnt"
    );

    /// Compile-time target features first; `cpufeatures` caches the runtime answer itself.
    pub(super) fn available(tier: Tier) -> bool {
        match tier {
            Tier::Scalar => true,
            Tier::Avx2 => {
                cfg!(all(
                    target_feature = "avx2",
                    target_feature = "bmi1",
                    target_feature = "bmi2",
                    target_feature = "popcnt"
                )) || (!cfg!(miri) && cpuid_avx2::get())
            }
            Tier::Avx512 => {
                cfg!(all(
                    target_feature = "avx512f",
                    target_feature = "avx512bw",
                    target_feature = "avx512vl",
                    target_feature = "avx2",
                    target_feature = "bmi1",
                    target_feature = "bmi2",
                    target_feature = "popcnt"
                )) || (!cfg!(miri) && cpuid_avx512::get())
            }
            Tier::Neon => false,
        }
    }
}

#[cfg(all(
    feature = "simd",
    not(lakecore_backend = "scalar"),
    target_arch = "aarch64"
))]
mod detect {
    use super::Tier;
    /// NEON is part of the aarch64 baseline; nothing to detect at run time.
    pub(super) fn available(tier: Tier) -> bool {
        matches!(tier, Tier::Scalar) || (tier == Tier::Neon && cfg!(target_feature = "neon"))
    }
}

#[cfg(not(all(
    feature = "simd",
    not(lakecore_backend = "scalar"),
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod detect {
    use super::Tier;
    pub(super) fn available(tier: Tier) -> bool {
        matches!(tier, Tier::Scalar)
    }
}

#[cfg(feature = "expose-kernels")]
pub mod kernels;
#[cfg(not(feature = "expose-kernels"))]
pub(crate) mod kernels;

// Dispatched entry points used by the codecs.

#[inline]
pub(crate) fn delta_decode_u64(
    bytes: &[u8],
    format: VarintFormat,
    prev: u64,
    min: u64,
    max: u64,
    out: &mut [u64],
) -> Result<usize> {
    match kernels::delta_decode_u64(active_tier(), bytes, format, prev, min, max, out) {
        Some(result) => result,
        None => scalar::delta_decode_u64(bytes, format, prev, min, max, out),
    }
}

#[inline]
pub(crate) fn delta_decode_zigzag(
    bytes: &[u8],
    format: VarintFormat,
    prev: i64,
    min: i64,
    max: i64,
    out: &mut [i64],
) -> Result<usize> {
    match kernels::delta_decode_zigzag(active_tier(), bytes, format, prev, min, max, out) {
        Some(result) => result,
        None => scalar::delta_decode_zigzag(bytes, format, prev, min, max, out),
    }
}

#[inline]
pub(crate) fn count_uvarints(bytes: &[u8], format: VarintFormat) -> Result<usize> {
    match kernels::count_uvarints(active_tier(), bytes, format) {
        Some(result) => result,
        None => scalar::count_uvarints(bytes, format),
    }
}

#[inline]
pub(crate) fn check_lengths(chunk: &[i64], min_real: i64, floor: i64) -> scalar::LengthCheck {
    kernels::check_lengths(active_tier(), chunk, min_real, floor)
        .unwrap_or_else(|| scalar::check_lengths(chunk, min_real, floor))
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
    match kernels::merge_layer(
        active_tier(),
        entries,
        record,
        tag,
        slot_entries,
        slot_offsets,
        slot_tags,
    ) {
        Some(r) => r,
        None => scalar::merge_layer(entries, record, tag, slot_entries, slot_offsets, slot_tags),
    }
}

#[inline]
pub(crate) fn unpack_u32(bytes: &[u8], width: u32, start: usize, out: &mut [u32]) {
    if kernels::unpack_u32(active_tier(), bytes, width, start, out).is_none() {
        scalar::unpack_u32(bytes, width, start, out);
    }
}

#[inline]
pub(crate) fn unpack_u64(bytes: &[u8], width: u32, start: usize, out: &mut [u64]) {
    if kernels::unpack_u64(active_tier(), bytes, width, start, out).is_none() {
        scalar::unpack_u64(bytes, width, start, out);
    }
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
    #[cfg(all(
        feature = "simd",
        not(lakecore_backend = "scalar"),
        target_arch = "x86_64"
    ))]
    if x86_64::sha256::available() {
        // SAFETY: `available` checked that the CPU has the features `run` is compiled with.
        return unsafe { x86_64::sha256::run(state, job) };
    }
    job.run(PortableSha256(state))
}
