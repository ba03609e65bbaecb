//! Checksums: SHA-256 (fixed-layout sidecars) and CRC-32/IEEE (compact sidecars, BLOB records).
//!
//! Thin wrappers over `sha2` (no default features; it picks SHA-NI / ARMv8 crypto at run time
//! itself) and `crc32fast` (PCLMULQDQ / ARMv8 CRC), so formats depend on one small API. One
//! exception: the SHA-256 that trails the fixed-layout sidecar walk runs through
//! `with_sha256`, which on x86_64 CPUs with SHA-NI compiles the walk with an engine of
//! `arch` that keeps the hash state in the instruction's order between calls (`sha2`'s
//! `compress256` reorders it twice on every call, a measurable cost when called once per
//! ~150-byte block).
//!
//! ```
//! use lakecore::codec::checksum::{crc32, sha256};
//! assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
//! assert_eq!(sha256(b"abc")[..4], [0xba, 0x78, 0x16, 0xbf]);
//! ```

use crate::arch::PortableSha256;
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

/// SHA-256's initial hash value (FIPS 180-4, 5.3.3).
const SHA256_IV: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// SHA-256 of a borrowed slice, hashed in short steps that follow a reader through it.
///
/// A validation pass that walks a structure calls [`advance_to`](Self::advance_to) with its
/// position after each record; the whole 64-byte blocks behind that position are compressed
/// in place (no copy), a few at a time, so the hash and the walk are interleaved finely enough
/// for the CPU to run them side by side (the hash waits on its rounds' latency, the walk on
/// loads and compares). [`finish`](Self::finish) hashes what is left and pads.
///
/// ```
/// use lakecore::codec::checksum::{sha256, Sha256Over};
/// let bytes = [7u8; 300];
/// let mut h = Sha256Over::new(&bytes);
/// for pos in (0..300).step_by(37) {
///     h.advance_to(pos);
/// }
/// assert_eq!(h.finish(), sha256(&bytes));
/// ```
#[derive(Clone, Debug)]
pub struct Sha256Over<'a>(Trailing<'a, PortableSha256>);

impl<'a> Sha256Over<'a> {
    /// A hasher over `bytes`, nothing hashed yet.
    pub fn new(bytes: &'a [u8]) -> Self {
        Sha256Over(Trailing::new(bytes, PortableSha256(SHA256_IV)))
    }

    /// Compresses the whole 64-byte blocks before `pos` once at least one block is waiting.
    #[inline(always)]
    pub fn advance_to(&mut self, pos: usize) {
        self.0.advance_to(pos);
    }

    /// The digest of the whole slice.
    pub fn finish(self) -> [u8; SHA256_LEN] {
        self.0.finish()
    }
}

pub(crate) use crate::arch::{Sha256Blocks, WithSha256};

/// Runs `job` with the fastest SHA-256 engine of this machine (x86_64 with the `simd` feature:
/// SHA-NI with its state kept in the instruction's order, when present; otherwise `sha2`),
/// started from the initial hash value.
/// The job builds a [`Trailing`] hasher over its bytes with the engine it is given.
#[inline]
pub(crate) fn with_sha256<W: WithSha256>(job: W) -> W::Output {
    crate::arch::with_sha256(SHA256_IV, job)
}

/// [`Sha256Over`] over any [`Sha256Blocks`] engine (an engine fresh from [`with_sha256`] or
/// at the initial hash value).
#[derive(Clone, Debug)]
pub(crate) struct Trailing<'a, E> {
    bytes: &'a [u8],
    engine: E,
    hashed: usize,
}

impl<'a, E: Sha256Blocks> Trailing<'a, E> {
    /// Bytes gathered before a step compresses them: one block (64 B measured fastest; steps
    /// of 512 B and 2048 B left less of the hash overlapped with the walk).
    const STEP: usize = 64;

    /// A hasher over `bytes`, nothing hashed yet; `engine` holds the initial hash value.
    #[inline(always)]
    pub(crate) fn new(bytes: &'a [u8], engine: E) -> Self {
        Trailing {
            bytes,
            engine,
            hashed: 0,
        }
    }

    /// Compresses the whole 64-byte blocks before `pos` once at least one block is waiting.
    #[inline(always)]
    pub(crate) fn advance_to(&mut self, pos: usize) {
        if pos >= self.hashed.saturating_add(Self::STEP) {
            self.compress_below(pos);
        }
    }

    #[inline(always)]
    fn compress_below(&mut self, pos: usize) {
        let end = pos.min(self.bytes.len()) & !63;
        if let Some(pending) = self.bytes.get(self.hashed..end) {
            let (blocks, _) = pending.as_chunks::<64>();
            self.engine.compress(blocks);
            self.hashed = end;
        }
    }

    /// The digest of the whole slice.
    #[inline(always)]
    pub(crate) fn finish(mut self) -> [u8; SHA256_LEN] {
        self.compress_below(self.bytes.len());
        let tail = self.bytes.get(self.hashed..).unwrap_or_default();
        // The tail (< 64 bytes), the 0x80 marker, zeros, and the bit length: one or two blocks.
        let mut last = [[0u8; 64]; 2];
        let used = if tail.len() < 56 { 1 } else { 2 };
        let flat = last.as_flattened_mut();
        if let Some(dst) = flat.get_mut(..tail.len()) {
            dst.copy_from_slice(tail);
        }
        if let Some(marker) = flat.get_mut(tail.len()) {
            *marker = 0x80;
        }
        let bits = (self.bytes.len() as u64).wrapping_mul(8).to_be_bytes();
        if let Some(dst) = flat.get_mut(used * 64 - 8..used * 64) {
            dst.copy_from_slice(&bits);
        }
        self.engine.compress(last.get(..used).unwrap_or_default());
        let mut out = [0u8; SHA256_LEN];
        for (dst, word) in out.chunks_exact_mut(4).zip(self.engine.words()) {
            dst.copy_from_slice(&word.to_be_bytes());
        }
        out
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

#[cfg(test)]
mod tests {
    use super::{sha256, with_sha256, Sha256Blocks, Sha256Over, Trailing, WithSha256};

    /// Hashes `data` with the engine `with_sha256` picks, advancing every `step` bytes.
    struct Stepped<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl WithSha256 for Stepped<'_> {
        type Output = [u8; 32];
        #[inline(always)]
        fn run<E: Sha256Blocks>(self, engine: E) -> [u8; 32] {
            let mut h = Trailing::new(self.data, engine);
            let mut pos = 0;
            while pos <= self.data.len() + self.step {
                h.advance_to(pos);
                pos += self.step;
            }
            h.finish()
        }
    }

    /// Every length 0..=300 (around every padding boundary) and several step patterns agree
    /// with the one-shot `sha2` digest, with the portable engine ([`Sha256Over`]) and with the
    /// one [`with_sha256`] dispatches to (SHA-NI on x86_64 CPUs that have it).
    #[test]
    fn trailing_sha256_matches_one_shot_digest() {
        let mut bytes = [0u8; 300];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(151).wrapping_add(7);
        }
        // Under Miri (SHA-256 without the SHA intrinsics takes ~0.2 s a block there) only the
        // padding boundaries, two step patterns.
        let miri_lengths = [0usize, 55, 56, 64, 120, 129];
        let steps: &[usize] = if cfg!(miri) {
            &[13, 400]
        } else {
            &[1, 13, 64, 100, 129, 400]
        };
        for len in 0..=bytes.len() {
            if cfg!(miri) && !miri_lengths.contains(&len) {
                continue;
            }
            let data = &bytes[..len];
            let expected = sha256(data);
            for &step in steps {
                let mut h = Sha256Over::new(data);
                let mut pos = 0;
                while pos <= len + step {
                    h.advance_to(pos);
                    pos += step;
                }
                assert_eq!(h.finish(), expected, "len {len} step {step}");
                assert_eq!(
                    with_sha256(Stepped { data, step }),
                    expected,
                    "dispatched engine, len {len} step {step}"
                );
            }
            assert_eq!(Sha256Over::new(data).finish(), expected, "len {len}");
        }
    }

    /// The FIPS 180-4 example digests (independent of `sha2`), with both engines: "abc", the
    /// 56-byte two-block message, and (not under Miri) one million 'a's advanced every 155
    /// bytes, which carries the state across thousands of compress calls.
    #[test]
    fn both_engines_give_the_fips_example_digests() {
        let unhex = |text: &str| -> [u8; 32] {
            let mut out = [0u8; 32];
            for (byte, pair) in out.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
                let digit = |c: u8| (c as char).to_digit(16).unwrap() as u8;
                *byte = digit(pair[0]) << 4 | digit(pair[1]);
            }
            out
        };
        static MILLION: [u8; 1_000_000] = [b'a'; 1_000_000];
        let examples: [(&[u8], &str); 3] = [
            (
                b"abc",
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
            (
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
            ),
            (
                &MILLION,
                "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
            ),
        ];
        let runs = if cfg!(miri) { 2 } else { examples.len() };
        for (data, hex) in &examples[..runs] {
            let expected = unhex(hex);
            let step = 155;
            assert_eq!(with_sha256(Stepped { data, step }), expected, "{hex}");
            let mut portable = Sha256Over::new(data);
            for pos in (0..=data.len()).step_by(step) {
                portable.advance_to(pos);
            }
            assert_eq!(portable.finish(), expected, "{hex}");
        }
    }
}
