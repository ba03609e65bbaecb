//! A checked view of Paimon `BinaryRow` partition tuples (`_PARTITION` bytes).
//!
//! Layout: 4-byte big-endian arity, then the row: a null-bit region of
//! `((arity + 63 + 8) / 64) * 8` bytes (byte 0 holds the row kind; field `i`'s null bit is bit
//! `i + 8`, LSB first), one 8-byte little-endian slot per field, then a variable-length part.
//! Strings and binaries of at most 7 bytes live inline in their slot with `0x80 | len` in the
//! slot's highest byte; longer ones store `offset << 32 | len`, offset from the row start.

use crate::cursor::Cursor;
use crate::error::{off, Error, ErrorKind, Result};

/// Size of the null-bit region plus the fixed slots for `arity` fields.
pub(crate) fn fixed_part_len(arity: u64) -> Option<u64> {
    let null_words = arity.checked_add(71)? / 64;
    null_words
        .checked_mul(8)?
        .checked_add(arity.checked_mul(8)?)
}

/// A validated view of one partition tuple.
///
/// ```
/// use lakecore::sidecar::BinaryRow;
/// // (7, "left") as written by Paimon: arity 2, null bits, slot 0 = 7, slot 1 = inline "left".
/// let bytes = [
///     0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, b'l', b'e', b'f', b't', 0,
///     0, 0, 0x84,
/// ];
/// let row = BinaryRow::from_partition(&bytes, 0).unwrap();
/// assert_eq!(row.arity(), 2);
/// assert_eq!(row.get_i32(0).unwrap(), Some(7));
/// assert_eq!(row.get_str(1).unwrap(), Some("left"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct BinaryRow<'a> {
    row: &'a [u8],
    arity: u32,
    null_len: usize,
    origin: u64,
}

impl<'a> BinaryRow<'a> {
    /// A view of `_PARTITION` bytes (arity prefix + row) located at absolute offset `origin`.
    ///
    /// ```
    /// use lakecore::sidecar::BinaryRow;
    /// // (7, null) as a 2-field BinaryRow with its arity prefix.
    /// let mut bytes = vec![0, 0, 0, 2]; // arity 2
    /// bytes.extend_from_slice(&[0, 0b10, 0, 0, 0, 0, 0, 0]); // row kind; null bit of field 1 (bit 9)
    /// bytes.extend_from_slice(&7i64.to_le_bytes()); // field 0: INT 7
    /// bytes.extend_from_slice(&[0; 8]); // field 1
    /// let row = BinaryRow::from_partition(&bytes, 0)?;
    /// assert_eq!(row.arity(), 2);
    /// assert_eq!(row.get_i32(0)?, Some(7));
    /// assert_eq!(row.get_i32(1)?, None);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn from_partition(bytes: &'a [u8], origin: u64) -> Result<Self> {
        let mut c = Cursor::with_origin(bytes, origin);
        let arity_at = c.position();
        let arity = c.i32_be()?;
        let arity =
            u32::try_from(arity).map_err(|_| Error::new(ErrorKind::InvalidValue, arity_at))?;
        Self::new(c.rest(), arity, c.position())
    }

    /// A view of a row (without arity prefix) of `arity` fields at absolute offset `origin`.
    pub fn new(row: &'a [u8], arity: u32, origin: u64) -> Result<Self> {
        let need = fixed_part_len(u64::from(arity))
            .ok_or(Error::new(ErrorKind::ArithmeticOverflow, origin))?;
        if need > off(row.len()) {
            return Err(Error::new(
                ErrorKind::Truncated,
                origin.saturating_add(off(row.len())),
            ));
        }
        let null_len = usize::try_from((u64::from(arity) + 71) / 64 * 8)
            .map_err(|_| Error::new(ErrorKind::LimitExceeded, origin))?;
        Ok(BinaryRow {
            row,
            arity,
            null_len,
            origin,
        })
    }

    /// Number of fields.
    pub fn arity(&self) -> u32 {
        self.arity
    }

    /// The row-kind byte (byte 0 of the null-bit region).
    pub fn row_kind(&self) -> u8 {
        self.row.first().copied().unwrap_or(0)
    }

    fn field_check(&self, i: u32) -> Result<()> {
        if i >= self.arity {
            return Err(Error::new(ErrorKind::OutOfBounds, self.origin));
        }
        Ok(())
    }

    /// Whether field `i` is null.
    pub fn is_null(&self, i: u32) -> Result<bool> {
        self.field_check(i)?;
        let bit = u64::from(i) + 8;
        let byte = usize::try_from(bit / 8).unwrap_or(usize::MAX);
        let b = self
            .row
            .get(byte)
            .ok_or(Error::new(ErrorKind::Truncated, self.origin))?;
        Ok(b & (1 << (bit % 8)) != 0)
    }

    fn slot_index(&self, i: u32) -> Result<usize> {
        self.field_check(i)?;
        usize::try_from(i)
            .ok()
            .and_then(|i| i.checked_mul(8))
            .and_then(|s| s.checked_add(self.null_len))
            .ok_or(Error::new(ErrorKind::ArithmeticOverflow, self.origin))
    }

    fn slot(&self, i: u32) -> Result<Option<[u8; 8]>> {
        if self.is_null(i)? {
            return Ok(None);
        }
        let at = self.slot_index(i)?;
        let s = self
            .row
            .get(at..)
            .and_then(|r| r.first_chunk::<8>())
            .ok_or(Error::new(ErrorKind::Truncated, self.origin))?;
        Ok(Some(*s))
    }

    /// BOOLEAN field `i` (`None` when null).
    pub fn get_bool(&self, i: u32) -> Result<Option<bool>> {
        Ok(self.slot(i)?.map(|s| s[0] != 0))
    }

    /// TINYINT field `i`.
    pub fn get_i8(&self, i: u32) -> Result<Option<i8>> {
        Ok(self.slot(i)?.map(|s| i8::from_le_bytes([s[0]])))
    }

    /// SMALLINT field `i`.
    pub fn get_i16(&self, i: u32) -> Result<Option<i16>> {
        Ok(self.slot(i)?.map(|s| i16::from_le_bytes([s[0], s[1]])))
    }

    /// INT field `i`.
    pub fn get_i32(&self, i: u32) -> Result<Option<i32>> {
        Ok(self
            .slot(i)?
            .map(|s| i32::from_le_bytes([s[0], s[1], s[2], s[3]])))
    }

    /// BIGINT field `i`.
    pub fn get_i64(&self, i: u32) -> Result<Option<i64>> {
        Ok(self.slot(i)?.map(i64::from_le_bytes))
    }

    /// FLOAT field `i`.
    pub fn get_f32(&self, i: u32) -> Result<Option<f32>> {
        Ok(self
            .slot(i)?
            .map(|s| f32::from_le_bytes([s[0], s[1], s[2], s[3]])))
    }

    /// DOUBLE field `i`.
    pub fn get_f64(&self, i: u32) -> Result<Option<f64>> {
        Ok(self.slot(i)?.map(f64::from_le_bytes))
    }

    /// DATE field `i`: days since 1970-01-01.
    pub fn get_date(&self, i: u32) -> Result<Option<i32>> {
        self.get_i32(i)
    }

    /// Compact DECIMAL field `i` (precision <= 18): the unscaled value.
    pub fn get_decimal_compact(&self, i: u32) -> Result<Option<i64>> {
        self.get_i64(i)
    }

    /// BINARY/VARBINARY field `i`, borrowed from the row.
    pub fn get_bytes(&self, i: u32) -> Result<Option<&'a [u8]>> {
        let Some(slot) = self.slot(i)? else {
            return Ok(None);
        };
        let slot_at = self.slot_index(i)?;
        let raw = u64::from_le_bytes(slot);
        if raw & (1 << 63) != 0 {
            let len = usize::from(slot[7] & 0x7f);
            if len > 7 {
                return Err(Error::new(
                    ErrorKind::InvalidLength,
                    self.origin.saturating_add(off(slot_at) + 7),
                ));
            }
            return self
                .row
                .get(slot_at..slot_at + len)
                .map(Some)
                .ok_or(Error::new(ErrorKind::Truncated, self.origin));
        }
        let start = raw >> 32;
        let len = raw & 0xffff_ffff;
        let end = start + len;
        if end > off(self.row.len()) {
            return Err(Error::new(
                ErrorKind::OutOfBounds,
                self.origin.saturating_add(off(slot_at)),
            ));
        }
        let s = usize::try_from(start).unwrap_or(usize::MAX);
        let e = usize::try_from(end).unwrap_or(usize::MAX);
        Ok(self.row.get(s..e))
    }

    /// STRING/VARCHAR/CHAR field `i` (UTF-8 checked: [`ErrorKind::InvalidValue`] otherwise).
    pub fn get_str(&self, i: u32) -> Result<Option<&'a str>> {
        let Some(b) = self.get_bytes(i)? else {
            return Ok(None);
        };
        core::str::from_utf8(b)
            .map(Some)
            .map_err(|_| Error::new(ErrorKind::InvalidValue, self.origin))
    }
}
