//! The small deterministic generator shared by the tests, the fuzz harnesses' helpers and the
//! benches.
//!
//! Two algorithms, because the tests and benches were written against both and their data
//! (expected values, golden checks, bench inputs) must stay exactly as it was:
//!
//! - [`Rng::xorshift`]: Marsaglia's xorshift64 (shifts 13, 7, 17), the state itself is the
//!   output. Used by the BLOB, footer and scan tests and the BLOB and kernel benches.
//! - [`Rng::star`]: xorshift64* (shifts 12, 25, 27, then a multiply by
//!   `0x2545_f491_4f6c_dd1d`). Used by the sidecar tests and the codec and sidecar benches.
//! - [`Rng::new`]: xorshift64* from a seed spread by the golden ratio
//!   (`seed * 0x9e37_79b9_7f4a_7c15 | 1`), so small seeds give unrelated streams. Used by the
//!   codec and kernel property tests (and their fuzz harnesses).
//!
//! The state must not be zero (a zero state stays zero); the constructors take it as given.

#[derive(Clone, Copy, Debug)]
enum Algorithm {
    XorShift64,
    XorShift64Star,
}

/// A deterministic pseudo-random generator (see the module docs for the two algorithms).
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
    algorithm: Algorithm,
}

impl Rng {
    /// xorshift64* seeded through the golden ratio: `state = seed * 0x9e37_79b9_7f4a_7c15 | 1`.
    pub fn new(seed: u64) -> Self {
        Self::star(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// xorshift64* from this exact (non-zero) state.
    pub fn star(state: u64) -> Self {
        Rng {
            state,
            algorithm: Algorithm::XorShift64Star,
        }
    }

    /// Plain xorshift64 (13, 7, 17) from this exact (non-zero) state.
    pub fn xorshift(state: u64) -> Self {
        Rng {
            state,
            algorithm: Algorithm::XorShift64,
        }
    }

    /// The next pseudo-random value.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        match self.algorithm {
            Algorithm::XorShift64 => {
                *s ^= *s << 13;
                *s ^= *s >> 7;
                *s ^= *s << 17;
                *s
            }
            Algorithm::XorShift64Star => {
                *s ^= *s >> 12;
                *s ^= *s << 25;
                *s ^= *s >> 27;
                s.wrapping_mul(0x2545_f491_4f6c_dd1d)
            }
        }
    }

    /// In `0..n` (by remainder); `n == 0` is taken as 1, so it gives 0 and still draws.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True `pct` times in 100.
    pub fn percent(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    /// True once in `n` (always when `n` is 0 or 1).
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    /// `n` bytes, the low byte of one draw each.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}
