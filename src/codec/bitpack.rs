//! LSB-first bit-packed integer streams, widths 0..=64.
//!
//! Value `i` of width `w` occupies bits `[i*w, (i+1)*w)` of the stream, bit 0 being the least
//! significant bit of byte 0; values are stored low bit first. A stream of `n` values takes
//! exactly `ceil(n*w / 8)` bytes and the unused high bits of its last byte must be zero.
//!
//! [`BitPacked`] is a validated view with O(1) [`get`](BitPacked::get) (one unaligned load, a
//! shift and a mask) and range unpacking into `u32`/`u64` through the dispatched kernels.
//! Writers ([`pack`], [`BitPackWriter`]) need `alloc`.
//!
//! ```
//! use lakecore::codec::bitpack::BitPacked;
//! // 3-bit values 1, 2, 3, 4 = 0b100_011_010_001 -> bytes d1 08.
//! let view = BitPacked::new(&[0xd1, 0x08], 3, 4).unwrap();
//! assert_eq!(view.get(2), Some(3));
//! let mut out = [0u32; 3];
//! view.unpack_u32(1, &mut out).unwrap();
//! assert_eq!(out, [2, 3, 4]);
//! ```

use crate::arch;
use crate::arch::fields::FieldReader;
use crate::error::{off, Error, ErrorKind, Result};

/// The largest bit width.
pub const MAX_WIDTH: u8 = 64;

/// The number of bytes `count` values of `width` bits take, or `None` if it does not fit in
/// `usize` (or `width > 64`).
#[inline]
pub const fn packed_len(width: u8, count: usize) -> Option<usize> {
    if width > MAX_WIDTH {
        return None;
    }
    let bits = (count as u128) * (width as u128);
    let bytes = bits.div_ceil(8);
    if bytes > usize::MAX as u128 {
        None
    } else {
        Some(bytes as usize)
    }
}

/// The smallest width that holds `max` (0 for 0).
#[inline]
pub const fn width_for(max: u64) -> u8 {
    (64 - max.leading_zeros()) as u8
}

/// A validated, borrowed bit-packed stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitPacked<'a> {
    bytes: &'a [u8],
    width: u8,
    len: usize,
    /// One-load access to the leading values (all but about the last 8 bytes' worth).
    fields: FieldReader<'a>,
}

impl<'a> BitPacked<'a> {
    /// A view of `len` values of `width` bits that must fill `bytes` exactly, with zero
    /// padding after the last value.
    ///
    /// Errors (offsets relative to `bytes`): [`ErrorKind::InvalidBitWidth`] for `width > 64`,
    /// [`ErrorKind::Truncated`] when `bytes` is too short, [`ErrorKind::TrailingBytes`] when it
    /// is too long, [`ErrorKind::NonZeroPadding`] at the last byte.
    ///
    /// ```
    /// use lakecore::codec::bitpack::BitPacked;
    /// use lakecore::ErrorKind;
    /// // [1, 2, 3, 4, 5] at 3 bits: 15 bits, LSB first, in 2 bytes.
    /// let bytes = [0xd1, 0x58];
    /// let view = BitPacked::new(&bytes, 3, 5)?;
    /// assert_eq!(view.get(4), Some(5));
    /// let mut out = [0u32; 3];
    /// view.unpack_u32(1, &mut out)?;
    /// assert_eq!(out, [2, 3, 4]);
    /// let e = BitPacked::new(&bytes, 3, 6).unwrap_err(); // 18 bits need 3 bytes
    /// assert_eq!(e.kind, ErrorKind::Truncated);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn new(bytes: &'a [u8], width: u8, len: usize) -> Result<Self> {
        let (view, rest) = Self::from_prefix(bytes, width, len)?;
        if !rest.is_empty() {
            return Err(Error::new(ErrorKind::TrailingBytes, off(view.bytes.len())));
        }
        Ok(view)
    }

    /// A view of the first `packed_len(width, len)` bytes of `bytes`, and the bytes after it.
    pub fn from_prefix(bytes: &'a [u8], width: u8, len: usize) -> Result<(Self, &'a [u8])> {
        let need = packed_len(width, len).ok_or(Error::new(ErrorKind::InvalidBitWidth, 0))?;
        let (packed, rest) = bytes
            .split_at_checked(need)
            .ok_or(Error::new(ErrorKind::Truncated, off(bytes.len())))?;
        let used_bits = (len as u128 * u128::from(width)) % 8;
        if let Some(&last) = packed.last() {
            if used_bits != 0 && last >> used_bits != 0 {
                return Err(Error::new(ErrorKind::NonZeroPadding, off(need - 1)));
            }
        }
        Ok((
            BitPacked {
                bytes: packed,
                width,
                len,
                fields: FieldReader::new(packed, width, len),
            },
            rest,
        ))
    }

    /// The packed bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Bits per value.
    pub fn width(&self) -> u8 {
        self.width
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Value `index`, or `None` past the end. O(1).
    #[inline]
    pub fn get(&self, index: usize) -> Option<u64> {
        match self.fields.get(index) {
            Some(v) => Some(v),
            None => self.get_cold(index),
        }
    }

    #[cold]
    #[inline(never)]
    fn get_cold(&self, index: usize) -> Option<u64> {
        if index >= self.len {
            return None;
        }
        let bit = off(index) * u64::from(self.width);
        Some(arch::scalar::read_bits(
            self.bytes,
            bit,
            u32::from(self.width),
        ))
    }

    fn check_range(&self, start: usize, count: usize) -> Result<()> {
        match start.checked_add(count) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(Error::new(ErrorKind::OutOfBounds, off(start))),
        }
    }

    /// Unpacks values `start..start + out.len()` into `out`; the width must be at most 32.
    ///
    /// Errors: [`ErrorKind::InvalidBitWidth`] for widths above 32, [`ErrorKind::OutOfBounds`]
    /// (offset = `start`) for a range past the end.
    pub fn unpack_u32(&self, start: usize, out: &mut [u32]) -> Result<()> {
        if self.width > 32 {
            return Err(Error::new(ErrorKind::InvalidBitWidth, 0));
        }
        self.check_range(start, out.len())?;
        arch::unpack_u32(self.bytes, u32::from(self.width), start, out);
        Ok(())
    }

    /// Unpacks values `start..start + out.len()` into `out`.
    pub fn unpack_u64(&self, start: usize, out: &mut [u64]) -> Result<()> {
        self.check_range(start, out.len())?;
        arch::unpack_u64(self.bytes, u32::from(self.width), start, out);
        Ok(())
    }

    /// Iterates over every value.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        let view = *self;
        (0..self.len).map(move |i| view.get(i).unwrap_or(0))
    }
}

/// Packs `values` at `width` bits each.
///
/// Fails with [`ErrorKind::InvalidBitWidth`] for `width > 64` and with
/// [`ErrorKind::OutOfBounds`] (offset = index) for a value that does not fit.
///
/// ```
/// use lakecore::codec::bitpack::{pack, BitPackWriter};
/// assert_eq!(pack(&[1, 2, 3, 4, 5], 3)?, [0xd1, 0x58]);
/// let mut w = BitPackWriter::new(3)?;
/// for v in [1, 2, 3, 4, 5] {
///     w.push(v)?;
/// }
/// assert_eq!(w.finish(), [0xd1, 0x58]);
/// # Ok::<(), lakecore::Error>(())
/// ```
#[cfg(feature = "alloc")]
pub fn pack(values: &[u64], width: u8) -> Result<alloc::vec::Vec<u8>> {
    let mut w = BitPackWriter::new(width)?;
    for &v in values {
        w.push(v)?;
    }
    Ok(w.finish())
}

/// An incremental LSB-first bit packer.
#[cfg(feature = "alloc")]
#[derive(Clone, Debug)]
pub struct BitPackWriter {
    out: alloc::vec::Vec<u8>,
    acc: u128,
    acc_bits: u32,
    width: u8,
    count: usize,
}

#[cfg(feature = "alloc")]
impl BitPackWriter {
    /// A writer of `width`-bit values (0..=64).
    pub fn new(width: u8) -> Result<Self> {
        if width > MAX_WIDTH {
            return Err(Error::new(ErrorKind::InvalidBitWidth, 0));
        }
        Ok(BitPackWriter {
            out: alloc::vec::Vec::new(),
            acc: 0,
            acc_bits: 0,
            width,
            count: 0,
        })
    }

    /// Appends one value; it must fit in the width.
    pub fn push(&mut self, value: u64) -> Result<()> {
        if value & !arch::scalar::low_mask(u32::from(self.width)) != 0 {
            return Err(Error::new(ErrorKind::OutOfBounds, off(self.count)));
        }
        self.acc |= u128::from(value) << self.acc_bits;
        self.acc_bits += u32::from(self.width);
        while self.acc_bits >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.acc_bits -= 8;
        }
        self.count += 1;
        Ok(())
    }

    /// The number of values pushed.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no value was pushed.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The packed bytes, zero-padded to a whole byte.
    pub fn finish(mut self) -> alloc::vec::Vec<u8> {
        if self.acc_bits > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}
