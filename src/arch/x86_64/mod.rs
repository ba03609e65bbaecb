//! x86_64 kernels: AVX2 (+BMI2) in [`avx2`], AVX-512 (F/BW/VL, VBMI and VBMI2 where present) in
//! [`avx512`], and the parts both share: the block-mask driven varint loops ([`varint`]), the
//! unpack shuffle tables ([`unpack`](crate::arch::unpack)) and CPU detection (which feature sets
//! are present, is PEXT fast here?); and, apart from the kernel tables, the SHA-NI SHA-256
//! engine ([`sha256`]) with its own feature check.
//!
//! Nothing here is reachable without the caller having checked the table's features; every
//! `unsafe fn` states that contract. The SHA-NI engine's safe methods rely on a type
//! invariant instead (a `ShaNi` is only made after the check; see its docs).

pub(crate) mod avx2;
pub(crate) mod avx512;
pub(crate) mod sha256;
mod varint;

use core::sync::atomic::{AtomicU8, Ordering};

/// Defines `$name() -> bool`: whether every feature of the list is present, enabled at compile
/// time or (outside Miri, which has no `cpuid`) detected at run time by `cpufeatures` (which
/// caches the answer). One list per feature set, so the compile-time and run-time checks
/// cannot drift apart.
macro_rules! feature_set {
    ($(#[$doc:meta])* $name:ident, $cpuid:ident: $($feature:tt),+) => {
        cpufeatures::new!($cpuid, $($feature),+);

        $(#[$doc])*
        pub(crate) fn $name() -> bool {
            cfg!(all($(target_feature = $feature),+)) || (!cfg!(miri) && $cpuid::get())
        }
    };
}

feature_set!(
    /// AVX2, BMI1, BMI2 and POPCNT: the [`avx2`] tables.
    has_avx2, cpuid_avx2: "avx2", "bmi1", "bmi2", "popcnt"
);
feature_set!(
    /// AVX-512 F/BW/VL with the AVX2 set: the [`avx512`] tables.
    has_avx512, cpuid_avx512:
        "avx512f", "avx512bw", "avx512vl", "avx2", "bmi1", "bmi2", "popcnt"
);
feature_set!(
    /// [`has_avx512`] plus VBMI (`vpermb`): the VBMI unpackers.
    has_avx512_vbmi, cpuid_avx512_vbmi:
        "avx512f", "avx512bw", "avx512vl", "avx512vbmi", "avx2", "bmi1", "bmi2", "popcnt"
);
feature_set!(
    /// [`has_avx512_vbmi`] plus VBMI2 (`vpcompressb`): the VBMI2 varint decoders.
    has_avx512_vbmi2, cpuid_avx512_vbmi2:
        "avx512f", "avx512bw", "avx512vl", "avx512vbmi", "avx512vbmi2", "avx2", "bmi1", "bmi2",
        "popcnt"
);

/// 0 = unknown, 1 = slow (microcoded PEXT: AMD before Zen 3), 2 = fast.
static PEXT_FAST: AtomicU8 = AtomicU8::new(0);

/// Whether `pext` is a fast (single-uop) instruction on this CPU.
///
/// AMD family 0x15..=0x18 (Excavator, Zen 1/Zen+/Zen 2, Hygon Dhyana) implement PEXT/PDEP in
/// microcode with data-dependent latency (up to hundreds of cycles); everything Intel with
/// BMI2 and AMD Zen 3 onwards (family 0x19+) runs it in 3 cycles. Detected once, cached. The
/// tables that gather varint bits with PEXT are available only where it is fast; the
/// `avx2-nopext` table serves the others.
pub(crate) fn pext_is_fast() -> bool {
    match PEXT_FAST.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let fast = detect_pext_fast();
            PEXT_FAST.store(if fast { 2 } else { 1 }, Ordering::Relaxed);
            fast
        }
    }
}

fn detect_pext_fast() -> bool {
    use core::arch::x86_64::__cpuid;
    if cfg!(miri) {
        return true; // Miri has no `cpuid`; the `avx2-nopext` table covers the other gather.
    }
    // `cpuid` is always available on x86_64; the intrinsic is safe on current toolchains and
    // an `unsafe fn` on older ones.
    #[allow(unused_unsafe)]
    // SAFETY: the CPUID instruction exists on every x86_64 CPU; leaves 0 and 1 always exist.
    let (vendor, signature) = unsafe {
        let leaf0 = __cpuid(0);
        let leaf1 = __cpuid(1);
        ((leaf0.ebx, leaf0.edx, leaf0.ecx), leaf1.eax)
    };
    // "AuthenticAMD" and "HygonGenuine" in EBX, EDX, ECX order.
    let amd = vendor == (0x6874_7541, 0x6974_6e65, 0x444d_4163);
    let hygon = vendor == (0x6f67_7948, 0x6e65_476e, 0x656e_6975);
    if !(amd || hygon) {
        return true;
    }
    let base_family = (signature >> 8) & 0xf;
    let family = if base_family == 0xf {
        base_family + ((signature >> 20) & 0xff)
    } else {
        base_family
    };
    family >= 0x19
}
