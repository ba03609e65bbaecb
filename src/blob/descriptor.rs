//! `BlobDescriptor`: a serialized pointer (URI, offset, length) to a payload inside a file.

use super::Payload;
use crate::error::{off, Error, ErrorKind, Result};

/// The v2 descriptor magic, `"BLOBDESC"` read as a big-endian `i64`, stored little-endian.
pub const DESCRIPTOR_MAGIC: i64 = 0x424C_4F42_4445_5343;

/// A payload reference: `uri`, `offset` of the payload's first byte, `length` in bytes.
///
/// Wire form (little-endian): v2 `02 | magic i64 | uri_len i32 | uri | offset i64 |
/// length i64` (29 + uri_len bytes); v1 the same without the magic (21 + uri_len bytes).
///
/// ```
/// use lakecore::blob::BlobDescriptor;
/// let d = BlobDescriptor { version: 2, uri: "s3://b/t/x.blob", offset: 4, length: 6 };
/// let mut buf = [0u8; 64];
/// let n = d.encode_into(&mut buf)?;
/// assert_eq!(n, 29 + 15);
/// assert_eq!(BlobDescriptor::decode(&buf[..n])?, d);
/// # Ok::<(), lakecore::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlobDescriptor<'a> {
    /// Wire version: 1 (no magic) or 2.
    pub version: u8,
    /// Where the file lives (UTF-8).
    pub uri: &'a str,
    /// Offset of the payload in the file (record offset + 4).
    pub offset: i64,
    /// Payload length (`bin_length - 16`).
    pub length: i64,
}

impl<'a> BlobDescriptor<'a> {
    /// A v2 descriptor of `payload` in the file at `uri`.
    pub fn for_payload(uri: &'a str, payload: &Payload<'_>) -> Self {
        BlobDescriptor {
            version: 2,
            uri,
            offset: i64::try_from(payload.offset).unwrap_or(i64::MAX),
            length: i64::try_from(payload.bytes.len()).unwrap_or(i64::MAX),
        }
    }

    /// Encoded size in bytes.
    pub fn encoded_len(&self) -> usize {
        let head = if self.version == 1 { 21 } else { 29 };
        head + self.uri.len()
    }

    /// Decodes a whole descriptor (the bytes must end exactly after it).
    ///
    /// Errors: [`ErrorKind::UnsupportedVersion`] at 0 (not 1 or 2), [`ErrorKind::BadMagic`]
    /// at 1, [`ErrorKind::InvalidLength`] at a negative `uri_len`, [`ErrorKind::Truncated`],
    /// [`ErrorKind::InvalidValue`] at the first byte of invalid UTF-8 or at a negative offset
    /// or length, [`ErrorKind::TrailingBytes`].
    pub fn decode(bytes: &'a [u8]) -> Result<Self> {
        let mut c = crate::cursor::Cursor::new(bytes);
        let version = c.u8()?;
        if version != 1 && version != 2 {
            return Err(Error::new(ErrorKind::UnsupportedVersion, 0));
        }
        if version == 2 && c.i64_le()? != DESCRIPTOR_MAGIC {
            return Err(Error::new(ErrorKind::BadMagic, 1));
        }
        let len_at = c.position();
        let uri_len = usize::try_from(c.i32_le()?)
            .map_err(|_| Error::new(ErrorKind::InvalidLength, len_at))?;
        let uri_at = c.position();
        let uri = core::str::from_utf8(c.bytes(uri_len)?).map_err(|e| {
            Error::new(
                ErrorKind::InvalidValue,
                uri_at.saturating_add(off(e.valid_up_to())),
            )
        })?;
        let offset_at = c.position();
        let offset = c.i64_le()?;
        if offset < 0 {
            return Err(Error::new(ErrorKind::InvalidValue, offset_at));
        }
        let length_at = c.position();
        let length = c.i64_le()?;
        if length < 0 {
            return Err(Error::new(ErrorKind::InvalidValue, length_at));
        }
        c.expect_end()?;
        Ok(BlobDescriptor {
            version,
            uri,
            offset,
            length,
        })
    }

    /// Encodes into `out`; returns the bytes written. [`ErrorKind::UnsupportedVersion`] for a
    /// version other than 1 or 2, [`ErrorKind::LimitExceeded`] for a URI longer than
    /// `i32::MAX`, [`ErrorKind::Truncated`] (offset = bytes needed) when `out` is too short.
    pub fn encode_into(&self, out: &mut [u8]) -> Result<usize> {
        if self.version != 1 && self.version != 2 {
            return Err(Error::new(ErrorKind::UnsupportedVersion, 0));
        }
        let uri_len =
            i32::try_from(self.uri.len()).map_err(|_| Error::new(ErrorKind::LimitExceeded, 0))?;
        let need = self.encoded_len();
        let out = out
            .get_mut(..need)
            .ok_or(Error::new(ErrorKind::Truncated, off(need)))?;
        let mut w = Writer { out, pos: 0 };
        w.put(&[self.version]);
        if self.version == 2 {
            w.put(&DESCRIPTOR_MAGIC.to_le_bytes());
        }
        w.put(&uri_len.to_le_bytes());
        w.put(self.uri.as_bytes());
        w.put(&self.offset.to_le_bytes());
        w.put(&self.length.to_le_bytes());
        Ok(w.pos)
    }

    /// Appends the encoding to `out`.
    #[cfg(feature = "alloc")]
    pub fn encode(&self, out: &mut alloc::vec::Vec<u8>) -> Result<()> {
        let start = out.len();
        out.resize(start + self.encoded_len(), 0);
        let n = self.encode_into(out.get_mut(start..).unwrap_or_default())?;
        out.truncate(start + n);
        Ok(())
    }
}

struct Writer<'o> {
    out: &'o mut [u8],
    pos: usize,
}

impl Writer<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let end = self.pos + bytes.len();
        if let Some(dst) = self.out.get_mut(self.pos..end) {
            dst.copy_from_slice(bytes);
        }
        self.pos = end;
    }
}
