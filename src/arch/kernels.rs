//! Kernel dispatch: one [`Kernels`] table of function pointers per concrete variant (scalar,
//! AVX2 with and without PEXT, AVX-512 without VBMI, with VBMI, with VBMI2, NEON), the best
//! available one chosen once.
//!
//! Every table answers every operation with the scalar reference's results (values, error
//! kind and offset); a variant without a kernel of its own for an operation carries the scalar
//! one. The codecs reach the chosen table through the crate's dispatched entry points (which
//! send short inputs straight to scalar); tests and benches (feature `expose-kernels`) run
//! every table compiled in through [`all`], each call through the safe methods, which check
//! [`Kernels::available`] first. Nothing here is a process-wide switch.
//!
//! ```
//! # #[cfg(feature = "expose-kernels")]
//! # fn main() {
//! use lakecore::arch::kernels;
//! use lakecore::codec::varint::VarintFormat;
//! let stream = [0x01u8, 0x02, 0xac, 0x02];
//! let mut out = [0u64; 3];
//! for k in kernels::all().filter(|k| (k.available)()) {
//!     let used = k.delta_decode_u64(&stream, VarintFormat::SIDECAR, 10, 0, u64::MAX, &mut out);
//!     assert_eq!(used, Some(Ok(4)), "{}", k.name);
//!     assert_eq!(out, [11, 13, 313]);
//! }
//! # }
//! # #[cfg(not(feature = "expose-kernels"))]
//! # fn main() {}
//! ```

use super::scalar::{self, LayerStep, LengthCheck};
use crate::arch::wire::VarintFormat;
use crate::error::Result;
use core::sync::atomic::{AtomicU8, Ordering};

/// One concrete kernel variant: a name, its availability check, and one function per
/// operation, each compiled for the variant's target features.
///
/// The functions are `unsafe`: calling one is sound only after [`available`](Self::available)
/// returned `true` on this machine. The safe methods check it; the crate's dispatched entry
/// points call through the table [`active_kernels`](crate::arch::active_kernels) returns,
/// which is always an available one.
pub struct Kernels {
    /// The variant's lowercase name: `scalar`, `avx2`, `avx2-nopext`, `avx512`,
    /// `avx512-vbmi`, `avx512-vbmi2` or `neon`.
    pub name: &'static str,
    /// Whether the variant can run on this machine in this build (compile-time target
    /// features first, then run-time detection, cached). The PEXT variants count as
    /// available only where PEXT is fast.
    pub available: fn() -> bool,
    pub(crate) delta_u64: DeltaFn<u64>,
    pub(crate) delta_zigzag: DeltaFn<i64>,
    pub(crate) count: unsafe fn(&[u8], VarintFormat) -> Result<usize>,
    pub(crate) unpack_u32: unsafe fn(&[u8], u32, usize, &mut [u32]),
    pub(crate) unpack_u64: unsafe fn(&[u8], u32, usize, &mut [u64]),
    pub(crate) check_lengths: unsafe fn(&[i64], i64, i64) -> LengthCheck,
    pub(crate) merge_layer: MergeFn,
}

/// A delta decoder: `(bytes, format, prev, min, max, out) -> bytes consumed`.
pub(crate) type DeltaFn<T> = unsafe fn(&[u8], VarintFormat, T, T, T, &mut [T]) -> Result<usize>;
/// A merge-layer step: `(entries, record, tag, slot entries, slot offsets, slot tags)`.
type MergeFn = unsafe fn(&[i64], u64, u64, &mut [i64], &mut [u64], &mut [u64]) -> LayerStep;

impl core::fmt::Debug for Kernels {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name)
    }
}

/// The scalar reference as a table; always available.
pub(crate) static SCALAR: Kernels = Kernels {
    name: "scalar",
    available: always,
    delta_u64: scalar::delta_decode_u64,
    delta_zigzag: scalar::delta_decode_zigzag,
    count: scalar::count_uvarints,
    unpack_u32: scalar::unpack_u32,
    unpack_u64: scalar::unpack_u64,
    check_lengths: scalar::check_lengths,
    merge_layer: scalar::merge_layer,
};

fn always() -> bool {
    true
}

/// Every table compiled in, in order of preference: scalar first, the fastest last.
static ALL: &[&Kernels] = &[
    &SCALAR,
    #[cfg(aarch64_simd)]
    &super::aarch64::KERNELS,
    #[cfg(x86_simd)]
    &super::x86_64::avx2::KERNELS_NOPEXT,
    #[cfg(x86_simd)]
    &super::x86_64::avx2::KERNELS,
    #[cfg(x86_simd)]
    &super::x86_64::avx512::KERNELS,
    #[cfg(x86_simd)]
    &super::x86_64::avx512::KERNELS_VBMI,
    #[cfg(x86_simd)]
    &super::x86_64::avx512::KERNELS_VBMI2,
];

/// Every table compiled into this build, scalar first, the fastest last; filter with
/// [`Kernels::available`] for the ones this machine runs.
#[cfg(feature = "expose-kernels")]
pub fn all() -> impl Iterator<Item = &'static Kernels> {
    ALL.iter().copied()
}

/// The index in `ALL` of the chosen table; `u8::MAX` until the first call chose it.
static ACTIVE: AtomicU8 = AtomicU8::new(u8::MAX);

/// The table the dispatched kernels use: the last available one of `ALL`, chosen once and
/// cached. Only available tables come out of here.
#[inline]
pub(crate) fn active() -> &'static Kernels {
    match ALL.get(usize::from(ACTIVE.load(Ordering::Relaxed))) {
        Some(kernels) => kernels,
        None => choose(),
    }
}

#[cold]
#[inline(never)]
fn choose() -> &'static Kernels {
    let (index, kernels) = ALL
        .iter()
        .enumerate()
        .rev()
        .find(|(_, k)| (k.available)())
        .map_or((0, &SCALAR), |(i, k)| (i, *k));
    ACTIVE.store(u8::try_from(index).unwrap_or(0), Ordering::Relaxed);
    kernels
}

// Each method checks `available` and then calls the table's kernel. `None`: the variant
// cannot run here.
#[cfg(feature = "expose-kernels")]
impl Kernels {
    /// [`scalar::delta_decode_u64`] with this variant's kernel.
    pub fn delta_decode_u64(
        &self,
        bytes: &[u8],
        format: VarintFormat,
        prev: u64,
        min: u64,
        max: u64,
        out: &mut [u64],
    ) -> Option<Result<usize>> {
        // SAFETY: `available` returned true just before.
        (self.available)().then(|| unsafe { (self.delta_u64)(bytes, format, prev, min, max, out) })
    }

    /// [`scalar::delta_decode_zigzag`] with this variant's kernel.
    pub fn delta_decode_zigzag(
        &self,
        bytes: &[u8],
        format: VarintFormat,
        prev: i64,
        min: i64,
        max: i64,
        out: &mut [i64],
    ) -> Option<Result<usize>> {
        // SAFETY: `available` returned true just before.
        (self.available)()
            .then(|| unsafe { (self.delta_zigzag)(bytes, format, prev, min, max, out) })
    }

    /// [`scalar::count_uvarints`] with this variant's kernel.
    pub fn count_uvarints(&self, bytes: &[u8], format: VarintFormat) -> Option<Result<usize>> {
        // SAFETY: `available` returned true just before.
        (self.available)().then(|| unsafe { (self.count)(bytes, format) })
    }

    /// [`scalar::unpack_u32`] with this variant's kernel; `Some(())` when it ran.
    pub fn unpack_u32(
        &self,
        bytes: &[u8],
        width: u32,
        start: usize,
        out: &mut [u32],
    ) -> Option<()> {
        // SAFETY: `available` returned true just before.
        (self.available)().then(|| unsafe { (self.unpack_u32)(bytes, width, start, out) })
    }

    /// [`scalar::unpack_u64`] with this variant's kernel; `Some(())` when it ran.
    pub fn unpack_u64(
        &self,
        bytes: &[u8],
        width: u32,
        start: usize,
        out: &mut [u64],
    ) -> Option<()> {
        // SAFETY: `available` returned true just before.
        (self.available)().then(|| unsafe { (self.unpack_u64)(bytes, width, start, out) })
    }

    /// [`scalar::check_lengths`] with this variant's kernel.
    pub fn check_lengths(&self, chunk: &[i64], min_real: i64, floor: i64) -> Option<LengthCheck> {
        // SAFETY: `available` returned true just before.
        (self.available)().then(|| unsafe { (self.check_lengths)(chunk, min_real, floor) })
    }

    /// [`scalar::merge_layer`] with this variant's kernel.
    pub fn merge_layer(
        &self,
        entries: &[i64],
        record: u64,
        tag: u64,
        slot_entries: &mut [i64],
        slot_offsets: &mut [u64],
        slot_tags: &mut [u64],
    ) -> Option<LayerStep> {
        // SAFETY: `available` returned true just before.
        (self.available)().then(|| unsafe {
            (self.merge_layer)(entries, record, tag, slot_entries, slot_offsets, slot_tags)
        })
    }
}
