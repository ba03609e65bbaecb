//! SHA-256 block compression with the x86 SHA extensions (SHA-NI), its state kept in the
//! instruction's own order between calls.
//!
//! `sha2`'s `compress256` takes the state as eight words: every call loads them, reorders
//! them into the two register halves the `sha256rnds2` instruction works on, and reorders and
//! stores them back. A caller that compresses one or two blocks at a time between other work
//! (the fixed-layout sidecar validation hashes behind its block walk) pays that on the rounds'
//! dependency chain each time. [`ShaNi`] keeps the state as those two halves for the whole
//! job, so a call only loads and stores them. [`run`] compiles the caller's job with the SHA
//! features; the rounds themselves stay one out-of-line call per step (measured faster than
//! inlining them into the walk).
//!
//! Reference for the arithmetic: FIPS 180-4, section 6.2; the instruction semantics: Intel SDM,
//! `SHA256RNDS2`, `SHA256MSG1`, `SHA256MSG2`.

use super::super::{Sha256Blocks, WithSha256};
use core::arch::x86_64::{
    __m128i, _mm_add_epi32, _mm_alignr_epi8, _mm_blend_epi16, _mm_loadu_si128, _mm_set_epi64x,
    _mm_sha256msg1_epu32, _mm_sha256msg2_epu32, _mm_sha256rnds2_epu32, _mm_shuffle_epi32,
    _mm_shuffle_epi8, _mm_storeu_si128,
};

cpufeatures::new!(cpuid_sha, "sha", "sse2", "ssse3", "sse4.1");

/// Whether the SHA extensions (and SSSE3 / SSE4.1, which the byte swaps, the message schedule
/// and the state shuffles use) are present:
/// at compile time, or at run time (`cpufeatures` caches the answer).
pub(crate) fn available() -> bool {
    cfg!(all(
        target_feature = "sha",
        target_feature = "ssse3",
        target_feature = "sse4.1"
    )) || (!cfg!(miri) && cpuid_sha::get())
}

/// Runs `job` with a SHA-NI engine started from `state`, the job compiled with the features.
///
/// # Safety
/// The CPU must have SHA, SSE2, SSSE3 and SSE4.1 ([`available`]).
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
pub(crate) unsafe fn run<W: WithSha256>(state: [u32; 8], job: W) -> W::Output {
    job.run(ShaNi::new(state))
}

/// SHA-256 state as `sha256rnds2` wants it: lanes (low to high) F, E, B, A and H, G, D, C.
///
/// Invariant (its safe methods rely on it): a `ShaNi` exists only on a CPU with SHA, SSE2,
/// SSSE3 and SSE4.1. Only `new`, a `#[target_feature]` function reached only through [`run`],
/// makes one; do not add another constructor (`Default`, a public `new`, zeroed values).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShaNi {
    abef: __m128i,
    cdgh: __m128i,
}

/// The round constants K0..K63 (FIPS 180-4, 4.2.2).
const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// [`K`] as four groups of sixteen little-endian words, loaded like a message block.
// Evaluated at compile time: an index out of range would fail the build, not a run.
#[allow(clippy::indexing_slicing)]
static K_GROUPS: [[u8; 64]; 4] = {
    let mut groups = [[0u8; 64]; 4];
    let mut i = 0;
    while i < 64 {
        let word = K[i].to_le_bytes();
        let mut j = 0;
        while j < 4 {
            groups[i / 16][i % 16 * 4 + j] = word[j];
            j += 1;
        }
        i += 1;
    }
    groups
};

/// The four 16-byte lanes of `bytes`.
#[target_feature(enable = "sse2")]
#[inline]
fn quads(bytes: &[u8; 64]) -> [__m128i; 4] {
    let p = bytes.as_ptr();
    // SAFETY: the loads read bytes 0..16, 16..32, 32..48 and 48..64 of the 64; no alignment
    // needed.
    unsafe {
        [
            _mm_loadu_si128(p.cast()),
            _mm_loadu_si128(p.add(16).cast()),
            _mm_loadu_si128(p.add(32).cast()),
            _mm_loadu_si128(p.add(48).cast()),
        ]
    }
}

impl ShaNi {
    /// Reorders the eight words A..H into the two instruction-order halves.
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    fn new(state: [u32; 8]) -> Self {
        let words = state.as_ptr();
        // SAFETY: the loads read words 0..4 and 4..8 of the eight; no alignment needed.
        let (abcd, efgh) = unsafe {
            (
                _mm_loadu_si128(words.cast()),
                _mm_loadu_si128(words.add(4).cast()),
            )
        };
        let badc = _mm_shuffle_epi32::<0xb1>(abcd);
        let hgfe = _mm_shuffle_epi32::<0x1b>(efgh);
        ShaNi {
            abef: _mm_alignr_epi8::<8>(badc, hgfe),
            cdgh: _mm_blend_epi16::<0xf0>(hgfe, badc),
        }
    }

    /// The eight words A..H.
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    fn to_words(self) -> [u32; 8] {
        let abef = _mm_shuffle_epi32::<0x1b>(self.abef);
        let ghcd = _mm_shuffle_epi32::<0xb1>(self.cdgh);
        let mut out = [0u32; 8];
        let words = out.as_mut_ptr();
        // SAFETY: the stores write words 0..4 and 4..8 of the eight; no alignment needed.
        unsafe {
            _mm_storeu_si128(words.cast(), _mm_blend_epi16::<0xf0>(abef, ghcd));
            _mm_storeu_si128(words.add(4).cast(), _mm_alignr_epi8::<8>(ghcd, abef));
        }
        out
    }

    /// Four rounds: `k_plus_w` holds K[t..t+4] + W[t..t+4].
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    #[inline]
    fn four_rounds(abef: &mut __m128i, cdgh: &mut __m128i, k_plus_w: __m128i) {
        // Two rounds at a time; after each pair, the old A, B, E, F are the new C, D, G, H, so
        // the two registers trade roles and are back in place after the second pair.
        *cdgh = _mm_sha256rnds2_epu32(*cdgh, *abef, k_plus_w);
        *abef = _mm_sha256rnds2_epu32(*abef, *cdgh, _mm_shuffle_epi32::<0x0e>(k_plus_w));
    }

    /// Message words W[t..t+4] from `old` = W[t-16..t-12], `next` = W[t-12..t-8], `prev2` =
    /// W[t-8..t-4] and `prev` = W[t-4..t].
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    #[inline]
    fn schedule(old: __m128i, next: __m128i, prev2: __m128i, prev: __m128i) -> __m128i {
        let partial = _mm_add_epi32(
            _mm_sha256msg1_epu32(old, next),
            _mm_alignr_epi8::<4>(prev, prev2),
        );
        _mm_sha256msg2_epu32(partial, prev)
    }

    /// Compresses `blocks` into the state.
    ///
    /// Kept out of line: with the 64 rounds inlined into the sidecar walk, validation took
    /// 9.9-10.3 ms on the 16 MiB benchmark against 9.6-9.7 ms with this call (the state then
    /// goes through memory, but without `sha2`'s per-call reordering of it).
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    #[inline(never)]
    fn compress_blocks(&mut self, blocks: &[[u8; 64]]) {
        // Message words are big-endian: reverse the bytes of each 32-bit lane.
        let byte_swap = _mm_set_epi64x(0x0c0d_0e0f_0809_0a0b, 0x0405_0607_0001_0203);
        for block in blocks {
            let (abef_in, cdgh_in) = (self.abef, self.cdgh);
            let (mut abef, mut cdgh) = (self.abef, self.cdgh);
            let [w0, w1, w2, w3] = quads(block);
            let mut w0 = _mm_shuffle_epi8(w0, byte_swap);
            let mut w1 = _mm_shuffle_epi8(w1, byte_swap);
            let mut w2 = _mm_shuffle_epi8(w2, byte_swap);
            let mut w3 = _mm_shuffle_epi8(w3, byte_swap);
            // Sixteen rounds per group, four groups; w0..w3 hold the group's 16 message words.
            for (group, k) in K_GROUPS.iter().enumerate() {
                if group > 0 {
                    w0 = Self::schedule(w0, w1, w2, w3);
                    w1 = Self::schedule(w1, w2, w3, w0);
                    w2 = Self::schedule(w2, w3, w0, w1);
                    w3 = Self::schedule(w3, w0, w1, w2);
                }
                let [k0, k1, k2, k3] = quads(k);
                Self::four_rounds(&mut abef, &mut cdgh, _mm_add_epi32(w0, k0));
                Self::four_rounds(&mut abef, &mut cdgh, _mm_add_epi32(w1, k1));
                Self::four_rounds(&mut abef, &mut cdgh, _mm_add_epi32(w2, k2));
                Self::four_rounds(&mut abef, &mut cdgh, _mm_add_epi32(w3, k3));
            }
            self.abef = _mm_add_epi32(abef, abef_in);
            self.cdgh = _mm_add_epi32(cdgh, cdgh_in);
        }
    }
}

impl Sha256Blocks for ShaNi {
    #[inline(always)]
    fn compress(&mut self, blocks: &[[u8; 64]]) {
        // SAFETY: a `ShaNi` is made only by `new`, which runs only inside `run`, whose caller
        // checked that the CPU has the features.
        unsafe { self.compress_blocks(blocks) }
    }

    #[inline(always)]
    fn words(&self) -> [u32; 8] {
        // SAFETY: as in `compress`.
        unsafe { self.to_words() }
    }
}

#[cfg(test)]
mod tests {
    use super::{available, run};
    use crate::arch::{PortableSha256, Sha256Blocks, WithSha256};

    /// Compresses `blocks` from the engine's state and returns the state.
    struct Compress<'a>(&'a [[u8; 64]]);

    impl WithSha256 for Compress<'_> {
        type Output = [u32; 8];
        #[inline(always)]
        fn run<E: Sha256Blocks>(self, mut engine: E) -> [u32; 8] {
            engine.compress(self.0);
            engine.words()
        }
    }

    /// From random states, 0..=5 random blocks at a time, the SHA-NI engine ends in the same
    /// state as `sha2`'s `compress256`. On a CPU without SHA-NI (or under Miri without the
    /// features enabled at compile time) only the detection is checked; CI runs this under Miri
    /// with them enabled.
    #[test]
    fn sha_ni_compress_matches_sha2() {
        // Detection agrees with the standard library's (so a CPU with SHA-NI runs the test).
        #[cfg(feature = "std")]
        if !cfg!(miri) {
            let has = std::is_x86_feature_detected!("sha")
                && std::is_x86_feature_detected!("ssse3")
                && std::is_x86_feature_detected!("sse4.1");
            assert_eq!(available(), has);
        }
        if !available() {
            return;
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let rounds = if cfg!(miri) { 6 } else { 3000 };
        for round in 0..rounds {
            let state: [u32; 8] = core::array::from_fn(|_| next() as u32);
            let mut blocks = [[0u8; 64]; 5];
            for byte in blocks.as_flattened_mut() {
                *byte = next() as u8;
            }
            let used = &blocks[..round % 6];
            let mut expected = PortableSha256(state);
            expected.compress(used);
            // SAFETY: `available()` returned true.
            let got = unsafe { run(state, Compress(used)) };
            assert_eq!(got, expected.words(), "round {round}");
        }
    }
}
