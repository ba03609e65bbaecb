//! A bounds-checked, never-panicking cursor over untrusted bytes.
//!
//! [`Cursor`] reads fixed-width big- and little-endian integers through `zerocopy`'s unaligned
//! byte-order types, borrowed sub-slices, and varints under a [`VarintFormat`]. Every read
//! either succeeds and advances, or fails with an [`Error`] at the absolute offset where it
//! happened and leaves the cursor where it was. The cursor knows no format.
//!
//! ```
//! use lakecore::cursor::Cursor;
//! use lakecore::codec::varint::VarintFormat;
//! use lakecore::ErrorKind;
//! let data = [b'P', b'M', b'S', b'C', 0, 0, 0, 1, 0xac, 0x02];
//! let mut c = Cursor::with_origin(&data, 1000);
//! assert_eq!(c.bytes(4).unwrap(), b"PMSC");
//! assert_eq!(c.u32_be().unwrap(), 1);
//! assert_eq!(c.uvarint(VarintFormat::SIDECAR).unwrap(), 300);
//! let e = c.u8().unwrap_err();
//! assert_eq!((e.kind, e.offset), (ErrorKind::Truncated, 1010));
//! ```

use crate::codec::varint::{self, VarintFormat};
use crate::error::{off, Error, ErrorKind, Result};
use zerocopy::byteorder::{big_endian, little_endian};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// A read position in a borrowed byte slice that reports absolute offsets.
#[derive(Clone, Copy, Debug)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    origin: u64,
}

macro_rules! fixed_int {
    ($($(#[$doc:meta])* $name:ident: $ty:ty => $wire:ty;)*) => {$(
        $(#[$doc])*
        #[inline]
        pub fn $name(&mut self) -> Result<$ty> {
            self.read::<$wire>().map(<$wire>::get)
        }
    )*};
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`; offsets are relative to `bytes`.
    pub const fn new(bytes: &'a [u8]) -> Self {
        Cursor {
            bytes,
            pos: 0,
            origin: 0,
        }
    }

    /// A cursor at the start of `bytes`, which begin at absolute offset `origin`.
    ///
    /// ```
    /// use lakecore::cursor::Cursor;
    /// use lakecore::ErrorKind;
    /// // A window that starts at byte 1000 of a file reports file offsets.
    /// let mut c = Cursor::with_origin(&[0, 0, 0, 7, 0xff], 1000);
    /// assert_eq!(c.u32_be()?, 7);
    /// assert_eq!(c.position(), 1004);
    /// let e = c.u16_le().unwrap_err();
    /// assert_eq!((e.kind, e.offset), (ErrorKind::Truncated, 1005));
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub const fn with_origin(bytes: &'a [u8], origin: u64) -> Self {
        Cursor {
            bytes,
            pos: 0,
            origin,
        }
    }

    /// The absolute offset of the next byte.
    #[inline]
    pub fn position(&self) -> u64 {
        self.origin.saturating_add(off(self.pos))
    }

    /// The position relative to the start of the slice.
    #[inline]
    pub fn index(&self) -> usize {
        self.pos
    }

    /// The absolute offset of the slice's first byte.
    #[inline]
    pub fn origin(&self) -> u64 {
        self.origin
    }

    /// Bytes left to read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// Whether every byte has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The unread bytes (without advancing).
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.pos..).unwrap_or_default()
    }

    /// An error of `kind` at the current position.
    #[inline]
    pub fn error(&self, kind: ErrorKind) -> Error {
        Error::new(kind, self.position())
    }

    /// An error of `kind` at the absolute offset of relative index `index`.
    #[inline]
    pub fn error_at(&self, kind: ErrorKind, index: usize) -> Error {
        Error::new(kind, self.origin.saturating_add(off(index)))
    }

    /// The truncation error: more bytes were needed at the end of the input.
    #[inline]
    fn truncated(&self) -> Error {
        self.error_at(ErrorKind::Truncated, self.bytes.len())
    }

    /// Fails with [`ErrorKind::TrailingBytes`] unless every byte has been read.
    pub fn expect_end(&self) -> Result<()> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self.error(ErrorKind::TrailingBytes))
        }
    }

    /// Borrows the next `n` bytes.
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let (head, _) = self
            .rest()
            .split_at_checked(n)
            .ok_or_else(|| self.truncated())?;
        self.pos += n;
        Ok(head)
    }

    /// Borrows the next `n` bytes, `n` given as a `u64` from the input.
    #[inline]
    pub fn bytes_u64(&mut self, n: u64) -> Result<&'a [u8]> {
        match usize::try_from(n) {
            Ok(n) => self.bytes(n),
            Err(_) => Err(self.truncated()),
        }
    }

    /// Borrows the next `N` bytes as an array.
    #[inline]
    pub fn array<const N: usize>(&mut self) -> Result<&'a [u8; N]> {
        let head = self
            .rest()
            .first_chunk::<N>()
            .ok_or_else(|| self.truncated())?;
        self.pos += N;
        Ok(head)
    }

    /// Skips `n` bytes.
    #[inline]
    pub fn skip(&mut self, n: usize) -> Result<()> {
        self.bytes(n).map(|_| ())
    }

    /// Looks at the next byte without advancing.
    #[inline]
    pub fn peek_u8(&self) -> Option<u8> {
        self.rest().first().copied()
    }

    /// Reads a value of an unaligned on-disk type (e.g. `zerocopy::big_endian::U32` or a
    /// `#[derive(FromBytes, Unaligned)]` struct) by copy.
    #[inline]
    pub fn read<T: FromBytes + KnownLayout + Immutable + Unaligned>(&mut self) -> Result<T> {
        let (value, _) = T::read_from_prefix(self.rest()).map_err(|_| self.truncated())?;
        self.pos += core::mem::size_of::<T>();
        Ok(value)
    }

    /// Borrows a reference to an unaligned on-disk type in place (zero-copy).
    #[inline]
    pub fn reference<T: FromBytes + KnownLayout + Immutable + Unaligned>(
        &mut self,
    ) -> Result<&'a T> {
        let (value, _) = T::ref_from_prefix(self.rest()).map_err(|_| self.truncated())?;
        self.pos += core::mem::size_of::<T>();
        Ok(value)
    }

    /// Reads one byte.
    #[inline]
    pub fn u8(&mut self) -> Result<u8> {
        let b = self.peek_u8().ok_or_else(|| self.truncated())?;
        self.pos += 1;
        Ok(b)
    }

    fixed_int! {
        /// Reads a big-endian `u16`.
        u16_be: u16 => big_endian::U16;
        /// Reads a big-endian `u32`.
        u32_be: u32 => big_endian::U32;
        /// Reads a big-endian `u64`.
        u64_be: u64 => big_endian::U64;
        /// Reads a big-endian `i32`.
        i32_be: i32 => big_endian::I32;
        /// Reads a big-endian `i64`.
        i64_be: i64 => big_endian::I64;
        /// Reads a little-endian `u16`.
        u16_le: u16 => little_endian::U16;
        /// Reads a little-endian `u32`.
        u32_le: u32 => little_endian::U32;
        /// Reads a little-endian `u64`.
        u64_le: u64 => little_endian::U64;
        /// Reads a little-endian `i32`.
        i32_le: i32 => little_endian::I32;
        /// Reads a little-endian `i64`.
        i64_le: i64 => little_endian::I64;
    }

    /// Reads a big-endian `i32` that must be non-negative ([`ErrorKind::InvalidLength`] at its
    /// first byte otherwise).
    ///
    /// ```
    /// use lakecore::cursor::Cursor;
    /// use lakecore::ErrorKind;
    /// let mut c = Cursor::new(&[0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff]);
    /// assert_eq!(c.len_i32_be()?, 5);
    /// let e = c.len_i32_be().unwrap_err(); // -1 is never a length
    /// assert_eq!((e.kind, e.offset), (ErrorKind::InvalidLength, 4));
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    #[inline]
    pub fn len_i32_be(&mut self) -> Result<u32> {
        let at = self.position();
        let v = self.i32_be()?;
        u32::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidLength, at))
    }

    /// Reads a big-endian `i64` that must be non-negative ([`ErrorKind::InvalidLength`] at its
    /// first byte otherwise).
    #[inline]
    pub fn len_i64_be(&mut self) -> Result<u64> {
        let at = self.position();
        let v = self.i64_be()?;
        u64::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidLength, at))
    }

    /// Reads an unsigned LEB128 varint under `format`.
    #[inline]
    pub fn uvarint(&mut self, format: VarintFormat) -> Result<u64> {
        let (value, used) =
            varint::decode_u64(self.rest(), format).map_err(|e| e.shifted(self.position()))?;
        self.pos += used;
        Ok(value)
    }

    /// Reads an unsigned varint that must not exceed `max` ([`ErrorKind::OutOfBounds`] at its
    /// first byte otherwise; the cursor does not advance).
    ///
    /// ```
    /// use lakecore::cursor::Cursor;
    /// use lakecore::codec::varint::VarintFormat;
    /// use lakecore::ErrorKind;
    /// let mut c = Cursor::new(&[0xac, 0x02, 0x05]);
    /// assert_eq!(c.uvarint_max(VarintFormat::SIDECAR, 1000)?, 300);
    /// let e = c.uvarint_max(VarintFormat::SIDECAR, 4).unwrap_err();
    /// assert_eq!((e.kind, e.offset), (ErrorKind::OutOfBounds, 2));
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    #[inline]
    pub fn uvarint_max(&mut self, format: VarintFormat, max: u64) -> Result<u64> {
        let at = self.position();
        let mut probe = *self;
        let v = probe.uvarint(format)?;
        if v > max {
            return Err(Error::new(ErrorKind::OutOfBounds, at));
        }
        *self = probe;
        Ok(v)
    }
}
