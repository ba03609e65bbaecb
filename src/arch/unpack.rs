//! Shared by the SIMD bit unpackers: byte-gather tables built at compile time for every
//! width, and the group loop that keeps every load inside the slice.
//!
//! A group of `n` values of width `w` starting at a value index that is a multiple of 8 starts
//! on a byte boundary. Value `i` of the group starts at bit `i*w`: byte `(i*w)/8`, shift
//! `(i*w)%8`. Its lane is filled with the bytes from that byte on ("A") and, for values that
//! straddle one more byte than the lane holds, the bytes from the next byte on ("B", shifted
//! left by `8 - shift` and OR-ed in). Bytes a value does not need land at bit positions at or
//! above `w` and are masked off, so the tables never have to be exact about them.
//!
//! The AVX2 and NEON tables (`u32` output) work on 128-bit lanes: values 0..4 of a group of 8
//! gather from the 16 bytes at the group start, values 4..8 from the 16 bytes at
//! `lane1_base(w) = (4*w)/8`; the needed bytes of either half always fit those 16 bytes
//! (`ceil(4w/8) <= 16` and `w - floor(w/2) <= 16`). Index `0x80` yields a zero byte.

// Every index below is evaluated in const context (the tables are `static`s built by `const
// fn`s): an out-of-range index fails the build, it cannot panic at run time.
#![allow(clippy::indexing_slicing)]

/// The byte where the second half (values 4..8) of a group of 8 `u32` values starts.
pub(crate) const fn lane1_base(width: usize) -> usize {
    (4 * width) / 8
}

/// AVX2/NEON gather indices for 8 `u32` values of each width 0..=32: `[A | B]`, 32 bytes
/// each, lane-relative (values 0..4 in bytes 0..16, values 4..8 in bytes 16..32).
pub(crate) static U32X8: [[[u8; 32]; 2]; 33] = build_u32x8();
/// Right shifts of the 8 values of a group, per width.
pub(crate) static U32X8_SHIFT: [[u32; 8]; 33] = build_shifts::<8>(0);

/// AVX-512 VBMI gather indices for 16 `u32` values of each width 0..=32 (`vpermb` over the 64
/// bytes at the group start): `[A, B]`.
#[cfg(target_arch = "x86_64")]
pub(crate) static U32X16: [[[u8; 64]; 2]; 33] = build_u32x16();
/// Right shifts of the 16 values of a group, per width.
#[cfg(target_arch = "x86_64")]
pub(crate) static U32X16_SHIFT: [[u32; 16]; 33] = build_shifts::<16>(0);

/// AVX-512 VBMI tables for 16 `u32` values per step with one gather and a bit-field select,
/// for the widths where [`pair_fits`] holds: `[vpermb indices, vpmultishiftqb controls]`. Qword
/// `q` of the gather holds the 8 bytes from the first byte of value `2q` on; the controls take
/// bytes 0..4 of the result from bit `s` on and bytes 4..8 from bit `s + w` on, where `s` is
/// value `2q`'s bit offset in its first byte (`vpmultishiftqb` wraps within the qword; the
/// wrapped bits land at or above bit `w` and are masked off).
#[cfg(target_arch = "x86_64")]
pub(crate) static U32X16_PAIRS: [[[u8; 64]; 2]; 33] = build_u32x16_pairs();

/// Whether both values of every pair of a 16-value group lie in the 8 bytes from the first
/// value's first byte (`s + 2w <= 64` for every pair), so [`U32X16_PAIRS`] applies: widths
/// up to 30 (the even values' bit offsets are even, at most 6, and 4 at width 30).
#[cfg(target_arch = "x86_64")]
pub(crate) const fn pair_fits(w: usize) -> bool {
    if w > 32 {
        return false;
    }
    let mut q = 0;
    while q < 8 {
        if (2 * q * w) % 8 + 2 * w > 64 {
            return false;
        }
        q += 1;
    }
    true
}

#[cfg(target_arch = "x86_64")]
const fn build_u32x16_pairs() -> [[[u8; 64]; 2]; 33] {
    let mut out = [[[0u8; 64]; 2]; 33];
    let mut w = 0;
    while w <= 32 {
        let mut q = 0;
        while q < 8 {
            let start = (2 * q * w) / 8;
            let s = (2 * q * w) % 8;
            let mut j = 0;
            while j < 8 {
                out[w][0][q * 8 + j] = ((start + j) % 64) as u8;
                j += 1;
            }
            j = 0;
            while j < 4 {
                out[w][1][q * 8 + j] = ((s + 8 * j) % 64) as u8;
                out[w][1][q * 8 + 4 + j] = ((s + w + 8 * j) % 64) as u8;
                j += 1;
            }
            q += 1;
        }
        w += 1;
    }
    out
}

/// AVX-512 VBMI gather indices for 8 `u64` values of each width 0..=64 (`vpermb` over the 64
/// bytes at the group start): `[A, B]`.
#[cfg(target_arch = "x86_64")]
pub(crate) static U64X8: [[[u8; 64]; 2]; 65] = build_u64x8();
/// Right shifts of the 8 values of a group, per width.
#[cfg(target_arch = "x86_64")]
pub(crate) static U64X8_SHIFT: [[u64; 8]; 65] = build_shifts64();

const fn build_shifts<const N: usize>(_unused: u8) -> [[u32; N]; 33] {
    let mut out = [[0u32; N]; 33];
    let mut w = 0;
    while w <= 32 {
        let mut i = 0;
        while i < N {
            out[w][i] = ((i * w) % 8) as u32;
            i += 1;
        }
        w += 1;
    }
    out
}

#[cfg(target_arch = "x86_64")]
const fn build_shifts64() -> [[u64; 8]; 65] {
    let mut out = [[0u64; 8]; 65];
    let mut w = 0;
    while w <= 64 {
        let mut i = 0;
        while i < 8 {
            out[w][i] = ((i * w) % 8) as u64;
            i += 1;
        }
        w += 1;
    }
    out
}

const fn build_u32x8() -> [[[u8; 32]; 2]; 33] {
    let mut out = [[[0x80u8; 32]; 2]; 33];
    let mut w = 0;
    while w <= 32 {
        let mut i = 0;
        while i < 8 {
            let start = (i * w) / 8;
            let base = if i < 4 { 0 } else { lane1_base(w) };
            let rel = start - base;
            let mut j = 0;
            while j < 4 {
                if rel + j < 16 {
                    out[w][0][i * 4 + j] = (rel + j) as u8;
                }
                if rel + 1 + j < 16 {
                    out[w][1][i * 4 + j] = (rel + 1 + j) as u8;
                }
                j += 1;
            }
            i += 1;
        }
        w += 1;
    }
    out
}

#[cfg(target_arch = "x86_64")]
const fn build_u32x16() -> [[[u8; 64]; 2]; 33] {
    let mut out = [[[0u8; 64]; 2]; 33];
    let mut w = 0;
    while w <= 32 {
        let mut i = 0;
        while i < 16 {
            let start = (i * w) / 8;
            let mut j = 0;
            while j < 4 {
                out[w][0][i * 4 + j] = ((start + j) % 64) as u8;
                out[w][1][i * 4 + j] = ((start + 1 + j) % 64) as u8;
                j += 1;
            }
            i += 1;
        }
        w += 1;
    }
    out
}

#[cfg(target_arch = "x86_64")]
const fn build_u64x8() -> [[[u8; 64]; 2]; 65] {
    let mut out = [[[0u8; 64]; 2]; 65];
    let mut w = 0;
    while w <= 64 {
        let mut i = 0;
        while i < 8 {
            let start = (i * w) / 8;
            let mut j = 0;
            while j < 8 {
                out[w][0][i * 8 + j] = ((start + j) % 64) as u8;
                out[w][1][i * 8 + j] = ((start + 1 + j) % 64) as u8;
                j += 1;
            }
            i += 1;
        }
        w += 1;
    }
    out
}

/// Whether the bit offsets of values `start..start + count` fit in `usize` without wrapping
/// (the reference wraps them; the SIMD paths only run where it does not).
#[inline]
pub(crate) fn bit_range_fits(width: u32, start: usize, count: usize) -> bool {
    start
        .checked_add(count)
        .and_then(|end| end.checked_mul(width as usize))
        .and_then(|bits| bits.checked_add(64))
        .is_some()
}

/// Runs `group(src, dst_index)` over groups of `group_values` values (each
/// `width * group_values / 8` bytes, reading `read` bytes from `src`) for the values
/// `first..first + values` (`first` a multiple of 8), `dst_index` counting from 0:
/// straight from `bytes` while whole reads fit, then from a zero-padded copy of the last
/// bytes (the reference reads missing bytes as zero too). Returns how many values were done.
#[inline(always)]
pub(crate) fn for_groups(
    bytes: &[u8],
    width: usize,
    first: usize,
    values: usize,
    group_values: usize,
    read: usize,
    mut group: impl FnMut(*const u8, usize),
) -> usize {
    let Some(mut at) = (first / 8).checked_mul(width) else {
        return 0;
    };
    let group_bytes = width * group_values / 8;
    if group_bytes == 0 {
        return 0;
    }
    // Groups whose whole read lies inside `bytes`, counted up front: a plain counted loop.
    let direct = match at.checked_add(read) {
        Some(end) if end <= bytes.len() => (bytes.len() - end) / group_bytes + 1,
        _ => 0,
    };
    let direct = direct.min(values / group_values);
    let base = bytes.as_ptr().wrapping_add(at);
    for i in 0..direct {
        group(base.wrapping_add(i * group_bytes), i * group_values);
    }
    let mut done = direct * group_values;
    at += direct * group_bytes;
    // Tail: copy what is left (zero-padded) and keep going from the copy.
    let mut buf = [0u8; 256];
    while done + group_values <= values && at < bytes.len() {
        let rest = bytes.get(at..).unwrap_or_default();
        let take = rest.len().min(buf.len());
        buf = [0u8; 256];
        if let (Some(dst), Some(src)) = (buf.get_mut(..take), rest.get(..take)) {
            dst.copy_from_slice(src);
        }
        let mut local = 0usize;
        while done + group_values <= values && local + read <= buf.len() {
            group(buf.as_ptr().wrapping_add(local), done);
            done += group_values;
            local += group_bytes;
        }
        at += local;
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte a value needs is gathered into the right place of its lane.
    #[test]
    fn u32x8_tables_cover_needed_bytes() {
        for (w, table) in U32X8.iter().enumerate().skip(1) {
            for i in 0..8 {
                let bit = i * w;
                let (start, shift) = (bit / 8, bit % 8);
                let needed = (shift + w).div_ceil(8);
                let base = if i < 4 { 0 } else { lane1_base(w) };
                for j in 0..needed.min(4) {
                    assert_eq!(usize::from(table[0][i * 4 + j]), start - base + j);
                }
                if needed == 5 {
                    for j in 0..4 {
                        assert_eq!(usize::from(table[1][i * 4 + j]), start - base + 1 + j);
                    }
                }
            }
        }
    }

    /// The pair tables, modelled bit by bit: for every width they claim, selecting the
    /// controls' bit fields from the gathered qwords yields each value of a random group.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn u32x16_pairs_select_every_value() {
        for w in 1..=32 {
            assert_eq!(pair_fits(w), w <= 30 || w == 32, "width {w}");
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let bytes: [u8; 64] = core::array::from_fn(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        });
        let field = |bit: usize, w: usize| -> u64 {
            (0..w).fold(0, |v, k| {
                v | u64::from(bytes[(bit + k) / 8] >> ((bit + k) % 8) & 1) << k
            })
        };
        for w in (1..=32).filter(|&w| pair_fits(w)) {
            let [idx, ctrl] = U32X16_PAIRS[w];
            for q in 0..8 {
                let qword = u64::from_le_bytes(core::array::from_fn(|j| {
                    bytes[usize::from(idx[q * 8 + j])]
                }));
                let out: [u8; 8] = core::array::from_fn(|j| {
                    qword.rotate_right(u32::from(ctrl[q * 8 + j] % 64)) as u8
                });
                let lo = u64::from(u32::from_le_bytes([out[0], out[1], out[2], out[3]]));
                let hi = u64::from(u32::from_le_bytes([out[4], out[5], out[6], out[7]]));
                let mask = if w == 32 {
                    u64::from(u32::MAX)
                } else {
                    (1 << w) - 1
                };
                assert_eq!(lo & mask, field(2 * q * w, w), "width {w} value {}", 2 * q);
                assert_eq!(
                    hi & mask,
                    field((2 * q + 1) * w, w),
                    "width {w} value {}",
                    2 * q + 1
                );
            }
        }
    }
}
