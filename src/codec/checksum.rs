//! Checksums: SHA-256 (fixed-layout sidecars) and CRC-32/IEEE (compact sidecars, BLOB records).
//!
//! Thin wrappers over `sha2` (no default features; it picks SHA-NI / ARMv8 crypto at run time
//! itself) and `crc32fast` (PCLMULQDQ / ARMv8 CRC), so formats depend on one small API.
//!
//! ```
//! use lakecore::codec::checksum::{crc32, sha256};
//! assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
//! assert_eq!(sha256(b"abc")[..4], [0xba, 0x78, 0x16, 0xbf]);
//! ```

use sha2::Digest as _;

/// SHA-256 digest length in bytes.
pub const SHA256_LEN: usize = 32;

/// The SHA-256 digest of `bytes`.
#[inline]
pub fn sha256(bytes: &[u8]) -> [u8; SHA256_LEN] {
    sha2::Sha256::digest(bytes).into()
}

/// An incremental SHA-256.
///
/// ```
/// use lakecore::codec::checksum::{sha256, Sha256};
/// let mut h = Sha256::new();
/// h.update(b"ab");
/// h.update(b"c");
/// assert_eq!(h.finalize(), sha256(b"abc"));
/// ```
#[derive(Clone, Default)]
pub struct Sha256(sha2::Sha256);

impl Sha256 {
    /// A fresh hasher.
    pub fn new() -> Self {
        Self::default()
    }
    /// Feeds bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    /// The digest of everything fed.
    pub fn finalize(self) -> [u8; SHA256_LEN] {
        self.0.finalize().into()
    }
}

impl core::fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Sha256")
    }
}

/// The CRC-32 (IEEE 802.3, as zlib) of `bytes`.
#[inline]
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// An incremental CRC-32/IEEE.
///
/// ```
/// use lakecore::codec::checksum::{crc32, Crc32};
/// let mut h = Crc32::new();
/// h.update(b"1234");
/// h.update(b"56789");
/// assert_eq!(h.finalize(), crc32(b"123456789"));
/// ```
#[derive(Clone, Default, Debug)]
pub struct Crc32(crc32fast::Hasher);

impl Crc32 {
    /// A fresh hasher.
    pub fn new() -> Self {
        Self::default()
    }
    /// Feeds bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    /// The CRC of everything fed.
    pub fn finalize(self) -> u32 {
        self.0.finalize()
    }
}
