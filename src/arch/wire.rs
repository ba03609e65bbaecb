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
