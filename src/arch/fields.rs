//! Random access to the fields of a bit-packed stream with one 8-byte load each.
//!
//! [`FieldReader::new`] works out, once, how many leading fields can be read with an 8-byte
//! load that stays inside the slice; [`FieldReader::get`] then needs one compare (the index
//! against that count) before its unchecked load, instead of the index check plus a slice
//! range check. The load is unaligned and little-endian; the field is a shift and a mask.

/// The leading fields of a packed stream that one in-bounds 8-byte load can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldReader<'a> {
    bytes: &'a [u8],
    width: usize,
    /// Fields `0..fast_len` start at byte `b` with `b + 8 <= bytes.len()` and end within
    /// those 8 bytes (`width <= 57`, shift <= 7).
    fast_len: usize,
    mask: u64,
}

impl<'a> FieldReader<'a> {
    /// A reader of `len` fields of `width` bits (LSB first) packed in `bytes`.
    pub fn new(bytes: &'a [u8], width: u8, len: usize) -> Self {
        FieldReader {
            bytes,
            width: usize::from(width),
            fast_len: fast_len(bytes.len(), width, len),
            mask: crate::arch::scalar::low_mask(u32::from(width)),
        }
    }

    /// How many leading fields [`get`](Self::get) reads (the others are `None`).
    #[cfg(any(test, feature = "expose-kernels"))]
    pub fn fast_len(&self) -> usize {
        self.fast_len
    }

    /// Field `index`, when `index < fast_len()`.
    #[inline(always)]
    pub fn get(&self, index: usize) -> Option<u64> {
        if index >= self.fast_len {
            return None;
        }
        // `index < fast_len` bounds `index * width` below `8 * (bytes.len() - 7)`: no overflow.
        let bit = index.wrapping_mul(self.width);
        let byte = bit >> 3;
        // SAFETY: `fast_len` (see `fast_len()`) guarantees `byte + 8 <= bytes.len()` for every
        // `index < fast_len`, so the 8 bytes read lie inside `bytes`; `read_unaligned` has no
        // alignment requirement.
        let word = unsafe { self.bytes.as_ptr().add(byte).cast::<u64>().read_unaligned() };
        Some((u64::from_le(word) >> (bit & 7)) & self.mask)
    }
}

/// The number of leading fields (at most `len`) whose 8-byte load ends within `bytes` bytes
/// and holds the whole field.
fn fast_len(bytes: usize, width: u8, len: usize) -> usize {
    if width > 57 || bytes < 8 {
        return 0;
    }
    if width == 0 {
        return len;
    }
    // Field `i` starts at byte `i * width / 8`; it needs `i * width / 8 + 8 <= bytes`, i.e.
    // `i * width < (bytes - 7) * 8`. A field of width <= 57 at shift <= 7 ends within the load.
    let limit_bits = (bytes - 7) as u128 * 8;
    let n = limit_bits.div_ceil(u128::from(width));
    usize::try_from(n).unwrap_or(usize::MAX).min(len)
}

#[cfg(test)]
mod tests {
    use super::FieldReader;
    use crate::arch::scalar::read_bits;

    /// Every field the reader answers equals the scalar bit reader's, the reader answers at
    /// least every field but the last 8 bytes' worth, and never reads past the slice (Miri
    /// runs this: the slices are exactly `packed_len` long).
    #[test]
    fn get_matches_read_bits_up_to_the_fast_length() {
        let mut data = [0u8; 96];
        for (i, b) in data.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(73).wrapping_add(19);
        }
        let widths: &[u8] = if cfg!(miri) {
            &[0, 1, 7, 13, 57, 58, 64]
        } else {
            &[0, 1, 2, 3, 5, 7, 8, 9, 13, 31, 32, 33, 56, 57, 58, 63, 64]
        };
        for &width in widths {
            for bytes in 0..=data.len() {
                if cfg!(miri) && ![0, 7, 8, 9, 16, 17, 95, 96].contains(&bytes) {
                    continue;
                }
                let len = if width == 0 {
                    bytes
                } else {
                    bytes * 8 / usize::from(width)
                };
                let slice = &data[..bytes];
                let reader = FieldReader::new(slice, width, len);
                let fast = reader.fast_len();
                assert!(fast <= len);
                if (1..=57).contains(&width) && bytes >= 8 {
                    // Fields starting at byte <= bytes - 8 are all answered.
                    let answered = ((bytes - 8) * 8) / usize::from(width) + 1;
                    assert!(fast >= answered.min(len), "width {width} bytes {bytes}");
                }
                for index in 0..len + 2 {
                    let got = reader.get(index);
                    if index < fast {
                        // The invariant `get`'s unchecked load relies on.
                        assert!(index * usize::from(width) / 8 + 8 <= bytes);
                        let want =
                            read_bits(slice, (index * usize::from(width)) as u64, u32::from(width));
                        assert_eq!(got, Some(want), "width {width} bytes {bytes} index {index}");
                    } else {
                        assert_eq!(got, None);
                    }
                }
            }
        }
    }
}
