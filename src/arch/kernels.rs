//! Kernel entry points taking an explicit tier; `None` when the tier cannot run here.
//!
//! A tier that has no kernel of its own for an operation runs the scalar one, so every
//! available tier answers every call, with the scalar reference's results (values, error
//! kind and offset). Inputs too short for a SIMD kernel to pay off go straight to scalar. The
//! dispatched codecs call these with [`active_tier`](super::active_tier); tests and benches
//! (feature `expose-kernels`) call them with each tier.
//!
//! ```
//! # #[cfg(feature = "expose-kernels")]
//! # fn main() {
//! use lakecore::arch::{kernels, Tier};
//! use lakecore::codec::varint::VarintFormat;
//! let stream = [0x01u8, 0x02, 0xac, 0x02];
//! let mut out = [0u64; 3];
//! for tier in Tier::ALL {
//!     if let Some(result) = kernels::delta_decode_u64(
//!         tier, &stream, VarintFormat::SIDECAR, 10, 0, u64::MAX, &mut out,
//!     ) {
//!         assert_eq!(result.unwrap(), 4);
//!         assert_eq!(out, [11, 13, 313]);
//!     }
//! }
//! # }
//! # #[cfg(not(feature = "expose-kernels"))]
//! # fn main() {}
//! ```

use super::{scalar, Tier};
use crate::arch::wire::VarintFormat;
use crate::error::Result;

#[cfg(all(
    feature = "simd",
    not(lakecore_backend = "scalar"),
    target_arch = "x86_64"
))]
use super::x86_64::{avx2, avx512};

#[cfg(all(
    feature = "simd",
    not(lakecore_backend = "scalar"),
    target_arch = "aarch64",
    target_endian = "little"
))]
use super::aarch64 as neon;

/// Test hook: `true` makes the AVX-512 varint kernels take the paths they take on a CPU
/// without VBMI2 (e.g. Skylake-SP), `false` lets them use VBMI2 where present. Results never
/// depend on it, only speed; it has no effect when VBMI2 is enabled at compile time or
/// without x86_64 SIMD kernels.
#[cfg(feature = "expose-kernels")]
pub fn override_vbmi2(off: bool) {
    #[cfg(all(
        feature = "simd",
        not(lakecore_backend = "scalar"),
        target_arch = "x86_64"
    ))]
    super::x86_64::override_vbmi2(off);
    #[cfg(not(all(
        feature = "simd",
        not(lakecore_backend = "scalar"),
        target_arch = "x86_64"
    )))]
    let _ = off;
}

/// Test hook: `Some(false)` makes the x86_64 varint kernels gather value bits with shifts and
/// masks instead of PEXT (as they do on AMD Zen 1/2), `Some(true)` allows PEXT again where it
/// is fast, `None` re-detects. Results never depend on it, only speed; without x86_64 SIMD
/// kernels it does nothing.
#[cfg(feature = "expose-kernels")]
pub fn override_pext(fast: Option<bool>) {
    #[cfg(all(
        feature = "simd",
        not(lakecore_backend = "scalar"),
        target_arch = "x86_64"
    ))]
    super::x86_64::override_pext(fast);
    #[cfg(not(all(
        feature = "simd",
        not(lakecore_backend = "scalar"),
        target_arch = "x86_64"
    )))]
    let _ = fast;
}

/// Varint streams shorter than this go straight to scalar (a block needs 80 bytes).
const SHORT_VARINT_BYTES: usize = 96;
/// Unpack requests for fewer values than this go straight to scalar.
const SHORT_UNPACK_VALUES: usize = 16;

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
    if !tier.is_available() {
        return None;
    }
    if bytes.len() < SHORT_VARINT_BYTES || out.len() < 8 {
        return Some(scalar::delta_decode_u64(bytes, format, prev, min, max, out));
    }
    Some(match tier {
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX2 + BMI1/2 + POPCNT (at compile time or by CPUID).
        Tier::Avx2 => unsafe { avx2::delta_decode_u64(bytes, format, prev, min, max, out) },
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX-512 F/BW/VL + AVX2 + BMI1/2 + POPCNT.
        Tier::Avx512 => unsafe { avx512::delta_decode_u64(bytes, format, prev, min, max, out) },
        _ => scalar::delta_decode_u64(bytes, format, prev, min, max, out),
    })
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
    if !tier.is_available() {
        return None;
    }
    if bytes.len() < SHORT_VARINT_BYTES || out.len() < 8 {
        return Some(scalar::delta_decode_zigzag(
            bytes, format, prev, min, max, out,
        ));
    }
    Some(match tier {
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX2 + BMI1/2 + POPCNT.
        Tier::Avx2 => unsafe { avx2::delta_decode_zigzag(bytes, format, prev, min, max, out) },
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX-512 F/BW/VL + AVX2 + BMI1/2 + POPCNT.
        Tier::Avx512 => unsafe { avx512::delta_decode_zigzag(bytes, format, prev, min, max, out) },
        _ => scalar::delta_decode_zigzag(bytes, format, prev, min, max, out),
    })
}

/// Tier-explicit [`scalar::count_uvarints`].
pub fn count_uvarints(tier: Tier, bytes: &[u8], format: VarintFormat) -> Option<Result<usize>> {
    if !tier.is_available() {
        return None;
    }
    if bytes.len() < SHORT_VARINT_BYTES {
        return Some(scalar::count_uvarints(bytes, format));
    }
    Some(match tier {
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX2 + BMI1/2 + POPCNT.
        Tier::Avx2 => unsafe { avx2::count_uvarints(bytes, format) },
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX-512 F/BW/VL + AVX2 + BMI1/2 + POPCNT.
        Tier::Avx512 => unsafe { avx512::count_uvarints(bytes, format) },
        _ => scalar::count_uvarints(bytes, format),
    })
}

/// Tier-explicit [`scalar::check_lengths`].
pub fn check_lengths(
    tier: Tier,
    chunk: &[i64],
    min_real: i64,
    floor: i64,
) -> Option<scalar::LengthCheck> {
    if !tier.is_available() {
        return None;
    }
    Some(match tier {
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX2.
        Tier::Avx2 => unsafe { avx2::check_lengths(chunk, min_real, floor) },
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX-512 F/BW/VL + AVX2.
        Tier::Avx512 => unsafe { avx512::check_lengths(chunk, min_real, floor) },
        _ => scalar::check_lengths(chunk, min_real, floor),
    })
}

/// Tier-explicit [`scalar::merge_layer`].
pub fn merge_layer(
    tier: Tier,
    entries: &[i64],
    record: u64,
    tag: u64,
    slot_entries: &mut [i64],
    slot_offsets: &mut [u64],
    slot_tags: &mut [u64],
) -> Option<scalar::LayerStep> {
    if !tier.is_available() {
        return None;
    }
    Some(match tier {
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX2.
        Tier::Avx2 => unsafe {
            avx2::merge_layer(entries, record, tag, slot_entries, slot_offsets, slot_tags)
        },
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX-512 F/BW/VL + AVX2.
        Tier::Avx512 => unsafe {
            avx512::merge_layer(entries, record, tag, slot_entries, slot_offsets, slot_tags)
        },
        _ => scalar::merge_layer(entries, record, tag, slot_entries, slot_offsets, slot_tags),
    })
}

/// Tier-explicit [`scalar::unpack_u32`]; returns `Some(())` when the tier ran.
pub fn unpack_u32(
    tier: Tier,
    bytes: &[u8],
    width: u32,
    start: usize,
    out: &mut [u32],
) -> Option<()> {
    if !tier.is_available() {
        return None;
    }
    if out.len() < SHORT_UNPACK_VALUES {
        scalar::unpack_u32(bytes, width, start, out);
        return Some(());
    }
    match tier {
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX2 + BMI1/2 + POPCNT.
        Tier::Avx2 => unsafe { avx2::unpack_u32(bytes, width, start, out) },
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX-512 F/BW/VL + AVX2 + BMI1/2 + POPCNT.
        Tier::Avx512 => unsafe { avx512::unpack_u32(bytes, width, start, out) },
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "aarch64",
            target_endian = "little"
        ))]
        // SAFETY: `is_available` checked NEON.
        Tier::Neon => unsafe { neon::unpack_u32(bytes, width, start, out) },
        _ => scalar::unpack_u32(bytes, width, start, out),
    }
    Some(())
}

/// Tier-explicit [`scalar::unpack_u64`]; returns `Some(())` when the tier ran.
pub fn unpack_u64(
    tier: Tier,
    bytes: &[u8],
    width: u32,
    start: usize,
    out: &mut [u64],
) -> Option<()> {
    if !tier.is_available() {
        return None;
    }
    if out.len() < SHORT_UNPACK_VALUES {
        scalar::unpack_u64(bytes, width, start, out);
        return Some(());
    }
    match tier {
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX2 + BMI1/2 + POPCNT.
        Tier::Avx2 => unsafe { avx2::unpack_u64(bytes, width, start, out) },
        #[cfg(all(
            feature = "simd",
            not(lakecore_backend = "scalar"),
            target_arch = "x86_64"
        ))]
        // SAFETY: `is_available` checked AVX-512 F/BW/VL + AVX2 + BMI1/2 + POPCNT.
        Tier::Avx512 => unsafe { avx512::unpack_u64(bytes, width, start, out) },
        _ => scalar::unpack_u64(bytes, width, start, out),
    }
    Some(())
}
