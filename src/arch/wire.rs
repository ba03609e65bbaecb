//! The wire vocabulary the kernels share with the codecs: how long a varint may be and
//! whether its shortest form is required. It lives here, at the bottom, so that `arch` needs
//! nothing from the layers above it; `codec::varint` re-exports it.

/// How long a varint may be and whether its shortest form is required.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VarintFormat {
    max_len: u8,
    canonical: bool,
}

impl VarintFormat {
    /// Sidecar varints: 1..=9 bytes (values `0..=i64::MAX`), shortest form only.
    pub const SIDECAR: VarintFormat = VarintFormat {
        max_len: 9,
        canonical: true,
    };
    /// Full `u64` varints: 1..=10 bytes, shortest form only.
    pub const U64: VarintFormat = VarintFormat {
        max_len: 10,
        canonical: true,
    };
    /// Full `u64` varints: 1..=10 bytes, non-shortest forms accepted.
    pub const U64_LENIENT: VarintFormat = VarintFormat {
        max_len: 10,
        canonical: false,
    };

    /// A format with at most `max_len` bytes (1..=10) per varint; `None` outside that range.
    pub const fn new(max_len: u8, canonical: bool) -> Option<VarintFormat> {
        if max_len >= 1 && max_len <= MAX_VARINT_LEN as u8 {
            Some(VarintFormat { max_len, canonical })
        } else {
            None
        }
    }

    /// The longest varint this format accepts, in bytes.
    pub const fn max_len(self) -> u8 {
        self.max_len
    }

    /// Whether non-shortest encodings are rejected.
    pub const fn is_canonical(self) -> bool {
        self.canonical
    }

    /// The largest value this format can carry (`2^(7 * max_len) - 1`, or `u64::MAX`).
    pub const fn max_value(self) -> u64 {
        super::scalar::low_mask(7 * self.max_len as u32)
    }
}

/// The longest LEB128 encoding of a `u64`.
pub const MAX_VARINT_LEN: usize = 10;

/// How a delta stream turns varints into values: [`Unsigned`] or [`ZigZag`]. The kernels are
/// written once over this and compiled once per mode.
pub trait DeltaMode: sealed::Sealed + Copy + 'static {
    /// The value type produced.
    type Value: Copy + Ord + Default + core::fmt::Debug;
    /// The smallest and largest value type values.
    const FULL_RANGE: (Self::Value, Self::Value);
    /// Applies one raw varint to the running value; `None` on overflow.
    fn step(prev: Self::Value, raw: u64) -> Option<Self::Value>;
}

/// Unsigned deltas: `v[i] = v[i-1] + d[i]` in `u64`.
#[derive(Clone, Copy, Debug)]
pub struct Unsigned;

/// ZigZag signed deltas: `v[i] = v[i-1] + zigzag_decode(d[i])` in `i64`.
#[derive(Clone, Copy, Debug)]
pub struct ZigZag;

impl DeltaMode for Unsigned {
    type Value = u64;
    const FULL_RANGE: (u64, u64) = (0, u64::MAX);
    #[inline(always)]
    fn step(prev: u64, raw: u64) -> Option<u64> {
        prev.checked_add(raw)
    }
}

impl DeltaMode for ZigZag {
    type Value = i64;
    const FULL_RANGE: (i64, i64) = (i64::MIN, i64::MAX);
    #[inline(always)]
    fn step(prev: i64, raw: u64) -> Option<i64> {
        prev.checked_add(super::scalar::zigzag_decode(raw))
    }
}

/// What the kernels need of a mode beyond [`DeltaMode`]; outside the crate it only keeps
/// [`DeltaMode`] closed.
pub(crate) mod sealed {
    use super::{DeltaMode, Unsigned, ZigZag};
    use crate::arch::kernels::{DeltaFn, Kernels};

    pub trait Sealed {
        /// ZigZag deltas and `i64` values (the SIMD kernels compute on `i64` bit patterns).
        const SIGNED: bool;
        /// The value as an `i64` bit pattern.
        fn to_bits(value: Self::Value) -> i64
        where
            Self: DeltaMode;
        /// The value from an `i64` bit pattern.
        fn from_bits(bits: i64) -> Self::Value
        where
            Self: DeltaMode;
        /// This mode's decoder in a kernel table.
        fn kernel(kernels: &Kernels) -> DeltaFn<Self::Value>
        where
            Self: DeltaMode;
    }

    impl Sealed for Unsigned {
        const SIGNED: bool = false;
        #[inline(always)]
        fn to_bits(value: u64) -> i64 {
            value.cast_signed()
        }
        #[inline(always)]
        fn from_bits(bits: i64) -> u64 {
            bits.cast_unsigned()
        }
        #[inline(always)]
        fn kernel(kernels: &Kernels) -> DeltaFn<u64> {
            kernels.delta_u64
        }
    }

    impl Sealed for ZigZag {
        const SIGNED: bool = true;
        #[inline(always)]
        fn to_bits(value: i64) -> i64 {
            value
        }
        #[inline(always)]
        fn from_bits(bits: i64) -> i64 {
            bits
        }
        #[inline(always)]
        fn kernel(kernels: &Kernels) -> DeltaFn<i64> {
            kernels.delta_zigzag
        }
    }
}
