//! x86_64 kernels: AVX2 (+BMI2) in [`avx2`], AVX-512 (F/BW/VL, VBMI where present) in
//! [`avx512`], and the parts both share: the block-mask driven varint loops ([`varint`]), the
//! unpack shuffle tables ([`unpack`](crate::arch::unpack)) and CPU quirk detection (is PEXT
//! fast here?); and, apart from the tiers, the SHA-NI SHA-256 engine ([`sha256`]) with its
//! own feature check.
//!
//! Nothing here is reachable without the caller having checked the tier's features; every
//! `unsafe fn` states that contract. The SHA-NI engine's safe methods rely on a type
//! invariant instead (a `ShaNi` is only made after the check; see its docs).

pub(crate) mod avx2;
pub(crate) mod avx512;
pub(crate) mod sha256;
mod varint;

use core::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// 0 = unknown, 1 = slow (microcoded PEXT: AMD before Zen 3), 2 = fast.
static PEXT_FAST: AtomicU8 = AtomicU8::new(0);

/// Whether `pext` is a fast (single-uop) instruction on this CPU.
///
/// AMD family 0x15..=0x18 (Excavator, Zen 1/Zen+/Zen 2, Hygon Dhyana) implement PEXT/PDEP in
/// microcode with data-dependent latency (up to hundreds of cycles); everything Intel with
/// BMI2 and AMD Zen 3 onwards (family 0x19+) runs it in 3 cycles. Detected once, cached.
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

/// Overrides the PEXT choice (`Some(false)`: use the shift/mask gather as on AMD Zen 1/2;
/// `None`: detect again). Results never depend on it; only speed does.
#[cfg(feature = "expose-kernels")]
pub(crate) fn override_pext(fast: Option<bool>) {
    let code = match fast {
        Some(false) => 1,
        Some(true) if detect_pext_fast() => 2,
        Some(true) => 1,
        None => 0,
    };
    PEXT_FAST.store(code, Ordering::Relaxed);
}

fn detect_pext_fast() -> bool {
    use core::arch::x86_64::__cpuid;
    if cfg!(miri) {
        return true; // Miri has no `cpuid`; tests still force the other gather.
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

cpufeatures::new!(cpuid_vbmi, "avx512f", "avx512bw", "avx512vl", "avx512vbmi");

/// Whether AVX-512 VBMI (`vpermb`) is present, at compile time or run time (cached).
pub(crate) fn has_vbmi() -> bool {
    cfg!(target_feature = "avx512vbmi") || cpuid_vbmi::get()
}

cpufeatures::new!(
    cpuid_vbmi2,
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512vbmi",
    "avx512vbmi2"
);

/// Set by [`override_vbmi2`]: the AVX-512 varint kernels act as on a CPU without VBMI2.
static VBMI2_OFF: AtomicBool = AtomicBool::new(false);

/// Whether AVX-512 VBMI and VBMI2 (`vpcompressb`) are present (cached) and not switched off
/// by [`override_vbmi2`].
pub(crate) fn has_vbmi2() -> bool {
    cfg!(all(
        target_feature = "avx512vbmi",
        target_feature = "avx512vbmi2"
    )) || (cpuid_vbmi2::get() && !VBMI2_OFF.load(Ordering::Relaxed))
}

/// `true`: the AVX-512 varint kernels take the paths of a CPU without VBMI2 (Skylake-SP and
/// Cascade Lake); `false`: they use it where present. Has no effect when VBMI2 is enabled at
/// compile time.
#[cfg(feature = "expose-kernels")]
pub(crate) fn override_vbmi2(off: bool) {
    VBMI2_OFF.store(off, Ordering::Relaxed);
}
