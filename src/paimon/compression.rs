//! The block codecs of Avro files Paimon writes (feature `paimon`), decompressing into one
//! reused buffer per reader and stopping at a size limit, so a small hostile block cannot
//! claim gigabytes.

use crate::error::{off, Error, ErrorKind, Result};
use alloc::vec::Vec;

/// The largest decompressed Avro block accepted: 64 MiB ([`ErrorKind::LimitExceeded`] at
/// the block's data beyond it). Writers flush blocks far below this (Java's Avro at ~64 KB,
/// fastavro at ~16 KB), but a few KB of deflate or zstandard can claim gigabytes.
pub const MAX_BLOCK_BYTES: usize = 64 << 20;

/// An Avro block codec (`avro.codec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// `null`: stored.
    Null,
    /// `deflate`: raw deflate (no zlib header).
    Deflate,
    /// `snappy`: raw snappy, then the big-endian CRC-32 of the decompressed bytes.
    Snappy,
    /// `zstandard`.
    Zstandard,
}

impl Codec {
    /// The codec named `name` ([`ErrorKind::UnsupportedVersion`] at `at` for others).
    pub fn from_name(name: &[u8], at: u64) -> Result<Self> {
        Ok(match name {
            b"null" => Codec::Null,
            b"deflate" => Codec::Deflate,
            b"snappy" => Codec::Snappy,
            b"zstandard" | b"zstd" => Codec::Zstandard,
            _ => return Err(Error::new(ErrorKind::UnsupportedVersion, at)),
        })
    }
}

/// Decompresses the blocks of one file in turn into a buffer it reuses (and, for
/// zstandard, one decoder context).
pub struct Decompressor {
    codec: Codec,
    buf: Vec<u8>,
    zstd: Option<zstd::stream::raw::Decoder<'static>>,
}

impl core::fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Decompressor")
            .field("codec", &self.codec)
            .field("buffer", &self.buf.capacity())
            .finish()
    }
}

impl Decompressor {
    /// A decompressor for `codec`.
    pub fn new(codec: Codec) -> Self {
        Decompressor {
            codec,
            buf: Vec::new(),
            zstd: None,
        }
    }

    /// The codec.
    pub fn codec(&self) -> Codec {
        self.codec
    }

    /// The decompressed length of the last block (0 for stored blocks).
    pub fn last_len(&self) -> usize {
        if self.codec == Codec::Null {
            0
        } else {
            self.buf.len()
        }
    }

    /// Switches to `codec`, keeping the buffers.
    pub fn set_codec(&mut self, codec: Codec) {
        self.codec = codec;
    }

    /// The block `data` (at absolute offset `at`) decompressed, at most [`MAX_BLOCK_BYTES`].
    /// Errors point at `at`: [`ErrorKind::LimitExceeded`] past the limit,
    /// [`ErrorKind::InvalidLength`] for a snappy length claim snappy cannot reach,
    /// [`ErrorKind::ChecksumMismatch`] for snappy's CRC-32, [`ErrorKind::InvalidValue`] for a
    /// stream the codec rejects.
    pub fn block<'d>(&'d mut self, data: &'d [u8], at: u64) -> Result<&'d [u8]> {
        let limit = Error::new(ErrorKind::LimitExceeded, at);
        let invalid = Error::new(ErrorKind::InvalidValue, at);
        match self.codec {
            Codec::Null => Ok(data),
            Codec::Deflate => {
                let out = miniz_oxide::inflate::decompress_to_vec_with_limit(data, MAX_BLOCK_BYTES)
                    .map_err(|e| match e.status {
                        miniz_oxide::inflate::TINFLStatus::HasMoreOutput => limit,
                        _ => invalid,
                    })?;
                self.buf = out;
                Ok(&self.buf)
            }
            Codec::Snappy => {
                let (packed, crc) = data
                    .split_last_chunk::<4>()
                    .ok_or(Error::new(ErrorKind::Truncated, at + off(data.len())))?;
                let len = snap::raw::decompress_len(packed).map_err(|_| invalid)?;
                // Snappy expands its input at most about 21 times (a 3-byte copy yields at
                // most 64 bytes): refuse larger claims before reserving their size.
                if len > packed.len().saturating_mul(32) {
                    return Err(Error::new(ErrorKind::InvalidLength, at));
                }
                if len > MAX_BLOCK_BYTES {
                    return Err(limit);
                }
                self.buf.clear();
                self.buf.resize(len, 0);
                let n = snap::raw::Decoder::new()
                    .decompress(packed, &mut self.buf)
                    .map_err(|_| invalid)?;
                if n != len {
                    return Err(invalid);
                }
                if crc32fast::hash(&self.buf) != u32::from_be_bytes(*crc) {
                    return Err(Error::new(
                        ErrorKind::ChecksumMismatch,
                        at + off(packed.len()),
                    ));
                }
                Ok(&self.buf)
            }
            Codec::Zstandard => {
                use zstd::stream::raw::{DParameter, Decoder, InBuffer, Operation, OutBuffer};
                let dec = match &mut self.zstd {
                    Some(d) => {
                        d.reinit().map_err(|_| invalid)?;
                        d
                    }
                    slot => {
                        let mut d = Decoder::new().map_err(|_| invalid)?;
                        // A frame may declare a window of up to 2^27 bytes by default, which
                        // the decoder allocates; no window larger than the output limit is
                        // needed.
                        d.set_parameter(DParameter::WindowLogMax(MAX_BLOCK_BYTES.ilog2()))
                            .map_err(|_| invalid)?;
                        slot.insert(d)
                    }
                };
                self.buf.clear();
                let mut input = InBuffer::around(data);
                loop {
                    if self.buf.len() == self.buf.capacity() {
                        if self.buf.len() > MAX_BLOCK_BYTES {
                            return Err(limit);
                        }
                        let grow = (data.len() * 4).clamp(4096, MAX_BLOCK_BYTES + 1);
                        self.buf.reserve(grow);
                    }
                    let pos = self.buf.len();
                    let mut output = OutBuffer::around_pos(&mut self.buf, pos);
                    let hint = dec.run(&mut input, &mut output).map_err(|_| invalid)?;
                    let filled = output.pos();
                    if self.buf.len() > MAX_BLOCK_BYTES {
                        return Err(limit);
                    }
                    if hint == 0 {
                        // A frame is complete: done, or the next frame follows.
                        if input.pos() == data.len() {
                            break;
                        }
                        dec.reinit().map_err(|_| invalid)?;
                        continue;
                    }
                    if input.pos() == data.len() && filled < self.buf.capacity() {
                        // Input used up, output not full, frame not complete.
                        return Err(Error::new(ErrorKind::Truncated, at + off(data.len())));
                    }
                }
                Ok(&self.buf)
            }
        }
    }
}
