//! Naive varint and bit-packing reference implementations shared by the property tests
//! (`tests/`) and the bolero harnesses (`fuzz/`). Written for obviousness, bit by bit,
//! independently of lakecore's `src/`.

use crate::rng::Rng;
use lakecore::ErrorKind;

/// A value whose shortest varint takes exactly `len` bytes (1..=10).
pub fn value_of_len(rng: &mut Rng, len: u32) -> u64 {
    let lo = if len == 1 {
        0
    } else {
        1u128 << (7 * (len - 1))
    };
    let hi = if len >= 10 {
        1u128 << 64
    } else {
        1u128 << (7 * len)
    };
    (lo + u128::from(rng.next_u64()) % (hi - lo)) as u64
}

/// Shortest LEB128 encoding, by repeated division.
pub fn encode(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let group = (v % 128) as u8;
        v /= 128;
        if v == 0 {
            out.push(group);
            return out;
        }
        out.push(group + 128);
    }
}

/// Naive varint decode: collect the bytes of one varint, accumulate in `u128`, then judge.
/// Errors as `(kind, offset relative to bytes)`.
pub fn decode(
    bytes: &[u8],
    max_len: usize,
    canonical: bool,
) -> Result<(u64, usize), (ErrorKind, u64)> {
    let mut taken = Vec::new();
    for &b in bytes.iter().take(max_len) {
        taken.push(b);
        if b & 0x80 == 0 {
            break;
        }
    }
    let terminated = taken.last().is_some_and(|b| b & 0x80 == 0);
    if !terminated {
        return if taken.len() == max_len {
            Err((ErrorKind::VarintOverflow, 0))
        } else {
            Err((ErrorKind::Truncated, bytes.len() as u64))
        };
    }
    let mut value: u128 = 0;
    for (i, b) in taken.iter().enumerate() {
        value += u128::from(b & 0x7f) << (7 * i);
    }
    let max_value: u128 = if max_len >= 10 {
        u128::from(u64::MAX)
    } else {
        (1u128 << (7 * max_len)) - 1
    };
    if value > max_value {
        return Err((ErrorKind::VarintOverflow, 0));
    }
    if canonical && taken.len() > 1 && *taken.last().unwrap() == 0 {
        return Err((ErrorKind::VarintNonCanonical, 0));
    }
    Ok((value as u64, taken.len()))
}

/// Naive unsigned delta decode of `count` values: values, bytes used, or the first error.
pub fn decode_deltas(
    bytes: &[u8],
    max_len: usize,
    canonical: bool,
    base: u64,
    min: u64,
    max: u64,
    count: usize,
) -> Result<(Vec<u64>, usize), (ErrorKind, u64)> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut prev = base as u128;
    for _ in 0..count {
        let (d, used) =
            decode(&bytes[pos..], max_len, canonical).map_err(|(k, o)| (k, o + pos as u64))?;
        let v = prev + u128::from(d);
        if v > u128::from(u64::MAX) {
            return Err((ErrorKind::ArithmeticOverflow, pos as u64));
        }
        if (v as u64) < min || (v as u64) > max {
            return Err((ErrorKind::OutOfBounds, pos as u64));
        }
        out.push(v as u64);
        prev = v;
        pos += used;
    }
    Ok((out, pos))
}

/// Naive ZigZag delta decode of `count` values.
pub fn decode_zigzag_deltas(
    bytes: &[u8],
    max_len: usize,
    canonical: bool,
    base: i64,
    min: i64,
    max: i64,
    count: usize,
) -> Result<(Vec<i64>, usize), (ErrorKind, u64)> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut prev = i128::from(base);
    for _ in 0..count {
        let (raw, used) =
            decode(&bytes[pos..], max_len, canonical).map_err(|(k, o)| (k, o + pos as u64))?;
        let d: i128 = if raw % 2 == 0 {
            i128::from(raw / 2)
        } else {
            -i128::from(raw / 2) - 1
        };
        let v = prev + d;
        if v > i128::from(i64::MAX) || v < i128::from(i64::MIN) {
            return Err((ErrorKind::ArithmeticOverflow, pos as u64));
        }
        if (v as i64) < min || (v as i64) > max {
            return Err((ErrorKind::OutOfBounds, pos as u64));
        }
        out.push(v as i64);
        prev = v;
        pos += used;
    }
    Ok((out, pos))
}

/// Naive count of a whole stream: number of varints or the first error.
pub fn count(bytes: &[u8], max_len: usize, canonical: bool) -> Result<usize, (ErrorKind, u64)> {
    let mut pos = 0;
    let mut n = 0;
    while pos < bytes.len() {
        let (_, used) =
            decode(&bytes[pos..], max_len, canonical).map_err(|(k, o)| (k, o + pos as u64))?;
        pos += used;
        n += 1;
    }
    Ok(n)
}

/// Bit `i` of an LSB-first stream.
pub fn bit(bytes: &[u8], i: u64) -> u64 {
    u64::from(bytes.get((i / 8) as usize).copied().unwrap_or(0) >> (i % 8) & 1)
}

/// Value `index` of width `width`, bit by bit.
pub fn get(bytes: &[u8], width: u32, index: u64) -> u64 {
    (0..u64::from(width))
        .map(|b| bit(bytes, index * u64::from(width) + b) << b)
        .sum()
}

/// Packs values bit by bit (values are masked to `width`).
pub fn pack(values: &[u64], width: u32) -> Vec<u8> {
    let total = values.len() as u64 * u64::from(width);
    let mut out = vec![0u8; total.div_ceil(8) as usize];
    for (i, &v) in values.iter().enumerate() {
        for b in 0..u64::from(width) {
            if (v >> b) & 1 == 1 {
                let at = i as u64 * u64::from(width) + b;
                out[(at / 8) as usize] |= 1 << (at % 8);
            }
        }
    }
    out
}

/// The mask of `width` low bits.
pub fn mask(width: u32) -> u64 {
    if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}
