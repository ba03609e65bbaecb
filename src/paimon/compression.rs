//! The block codecs of Avro files Paimon writes (feature `paimon`), decompressing into one
//! reused buffer per reader and stopping at a size limit, so a small hostile block cannot
//! claim gigabytes.

use crate::error::{off, Error, ErrorKind, Result};
use alloc::vec::Vec;

/// The largest decompressed Avro block accepted: 64 MiB ([`ErrorKind::LimitExceeded`] at
/// the block's data beyond it). Writers flush blocks far below this (Java's Avro at ~64 KB,
/// fastavro at ~16 KB), but a few KB of deflate or zstandard can claim gigabytes.
pub const MAX_BLOCK_BYTES: usize = 64 << 20;

/// The xz decoder's memory limit in KiB: a dictionary of at most [`MAX_BLOCK_BYTES`] plus
/// the decoder's 40 KiB of state (`lzma_rust2`'s accounting), so every preset up to
/// `xz -9` (64 MiB) decodes.
const XZ_MEM_LIMIT_KIB: u32 = (MAX_BLOCK_BYTES >> 10) as u32 + 40;

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
    /// `bzip2`: one or more bzip2 streams (Python's `bz2`, Java's commons-compress).
    Bzip2,
    /// `xz`: one or more xz streams (LZMA2, any integrity check; Python's `lzma`, Java's
    /// commons-compress).
    Xz,
}

impl Codec {
    /// The codec named `name` ([`ErrorKind::UnsupportedVersion`] at `at` for others).
    pub fn from_name(name: &[u8], at: u64) -> Result<Self> {
        Ok(match name {
            b"null" => Codec::Null,
            b"deflate" => Codec::Deflate,
            b"snappy" => Codec::Snappy,
            b"zstandard" | b"zstd" => Codec::Zstandard,
            b"bzip2" => Codec::Bzip2,
            b"xz" => Codec::Xz,
            _ => return Err(Error::new(ErrorKind::UnsupportedVersion, at)),
        })
    }
}

/// The output offered to a streaming decoder at a time: at least 4 KiB (or four times the
/// input), then as much again as is already out, so the buffer grows geometrically, never
/// past `MAX_BLOCK_BYTES` in all. `len` is below `MAX_BLOCK_BYTES`.
fn next_room(len: usize, input: usize) -> usize {
    input
        .saturating_mul(4)
        .max(len)
        .max(4096)
        .min(MAX_BLOCK_BYTES - len)
}

/// One call of a streaming decoder: `(input consumed, output produced, stream complete)`, or
/// `Err` for a stream it rejects.
type Step = core::result::Result<(usize, usize, bool), ()>;

/// Runs a streaming decoder `step` over `data` into `buf` (cleared first), offering output in
/// [`next_room`] steps; once `MAX_BLOCK_BYTES` are out it offers a one-byte probe instead of
/// growing, so `buf`'s capacity never passes the limit (it keeps what earlier blocks grew).
/// Errors at `at`: [`ErrorKind::LimitExceeded`] when the stream has more output than
/// [`MAX_BLOCK_BYTES`], [`ErrorKind::InvalidValue`] when `step` fails or stalls,
/// [`ErrorKind::Truncated`] (at the data's end) when the input ends before the stream does.
fn stream_into(
    buf: &mut Vec<u8>,
    data: &[u8],
    at: u64,
    mut step: impl FnMut(&[u8], &mut [u8]) -> Step,
) -> Result<()> {
    let invalid = Error::new(ErrorKind::InvalidValue, at);
    buf.clear();
    let mut input = data;
    let mut probe = [0u8; 1];
    loop {
        let len = buf.len();
        let full = len >= MAX_BLOCK_BYTES;
        let out: &mut [u8] = if full {
            &mut probe
        } else {
            let room = next_room(len, input.len());
            // Exact: `resize` alone would double the capacity, past the limit.
            buf.reserve_exact(room);
            buf.resize(len + room, 0);
            buf.get_mut(len..).unwrap_or_default()
        };
        let room = out.len();
        let (consumed, produced, done) = step(input, out).map_err(|()| invalid)?;
        // A decoder claiming more than it was given is broken: invalid, not a panic.
        let rest = input.get(consumed..).ok_or(invalid)?;
        if produced > room {
            return Err(invalid);
        }
        if full {
            if produced > 0 {
                return Err(Error::new(ErrorKind::LimitExceeded, at));
            }
        } else {
            buf.truncate(len + produced);
        }
        if done {
            return Ok(());
        }
        if produced < room {
            if rest.is_empty() {
                // Input used up, output not full, stream not complete.
                return Err(Error::new(ErrorKind::Truncated, at + off(data.len())));
            }
            if consumed == 0 && produced == 0 {
                // No progress with input and output space left: the decoder is stuck.
                return Err(invalid);
            }
        }
        input = rest;
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

    /// Bytes the output buffer holds reserved (what keeping the decompressor keeps).
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Switches to `codec`, keeping the buffers.
    pub fn set_codec(&mut self, codec: Codec) {
        self.codec = codec;
    }

    /// The block `data` (at absolute offset `at`) decompressed, at most [`MAX_BLOCK_BYTES`].
    /// Errors point at `at`: [`ErrorKind::LimitExceeded`] past the limit,
    /// [`ErrorKind::InvalidLength`] for a snappy length claim snappy cannot reach,
    /// [`ErrorKind::ChecksumMismatch`] for snappy's CRC-32, [`ErrorKind::InvalidValue`] for a
    /// stream the codec rejects (bzip2's and xz's own checksums included; an xz dictionary
    /// larger than the limit too), [`ErrorKind::Truncated`] at the data's end for a zstandard
    /// or bzip2 stream cut short (xz reports most cuts as [`ErrorKind::InvalidValue`]).
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
            Codec::Bzip2 => {
                // One decoder per stream; a stream that ends before the data does is
                // followed by another (as Python's `bz2.decompress` reads them).
                let mut dec = bzip2::Decompress::new(false);
                stream_into(&mut self.buf, data, at, |input, out| {
                    let (in0, out0) = (dec.total_in(), dec.total_out());
                    let status = dec.decompress(input, out).map_err(|_| ())?;
                    let consumed = usize::try_from(dec.total_in() - in0).map_err(|_| ())?;
                    let produced = usize::try_from(dec.total_out() - out0).map_err(|_| ())?;
                    let mut done = false;
                    if status == bzip2::Status::StreamEnd {
                        if consumed == input.len() {
                            done = true;
                        } else {
                            dec = bzip2::Decompress::new(false);
                        }
                    }
                    Ok((consumed, produced, done))
                })?;
                Ok(&self.buf)
            }
            Codec::Xz => {
                use lzma_rust2::{Action, Status, XzStream};
                // Concatenated streams and stream padding allowed, as xz and Python's
                // `lzma.decompress` read them. The window grows with the output (up to
                // the declared dictionary size); a dictionary above the block limit
                // (beyond `xz -9`'s 64 MiB) is refused like a too-large zstandard window.
                let mut dec = XzStream::new_mem_limit(true, XZ_MEM_LIMIT_KIB);
                stream_into(&mut self.buf, data, at, |input, out| {
                    let r = dec.process(input, out, Action::Finish).map_err(|_| ())?;
                    Ok((
                        r.bytes_consumed,
                        r.bytes_produced,
                        r.status == Status::StreamEnd,
                    ))
                })?;
                Ok(&self.buf)
            }
        }
    }
}

/// Output buffers a thread's kept decompressor may hold (larger ones are dropped).
const KEEP_DECOMPRESSOR_BYTES: usize = 8 << 20;

std::thread_local! {
    /// Each planning thread's decompressor, kept across manifests (a zstandard context
    /// costs more to create than a small manifest costs to decode).
    static DECOMPRESSOR: core::cell::RefCell<Option<Decompressor>> =
        const { core::cell::RefCell::new(None) };
}

/// Runs `f` with this thread's decompressor, set to `codec`.
pub(super) fn with_decompressor<R>(codec: Codec, f: impl FnOnce(&mut Decompressor) -> R) -> R {
    let mut dec = DECOMPRESSOR
        .with(|d| d.take())
        .unwrap_or_else(|| Decompressor::new(codec));
    dec.set_codec(codec);
    let out = f(&mut dec);
    if dec.capacity() <= KEEP_DECOMPRESSOR_BYTES {
        DECOMPRESSOR.with(|d| d.replace(Some(dec)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::avro::Container;
    use alloc::format;
    use std::io::Write;

    const CODECS_DB: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/paimon/warehouse/codecs.db"
    );

    /// `(data, data offset)` of every block of every manifest and manifest list pypaimon
    /// wrote for table `table` (its `manifest.compression`), checking the header's codec.
    fn pypaimon_blocks(table: &str, codec: Codec) -> Vec<(Vec<u8>, u64)> {
        let dir = format!("{CODECS_DB}/{table}/manifest");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        let mut out = Vec::new();
        for path in names {
            let bytes = std::fs::read(&path).unwrap();
            let c = Container::parse(&bytes).unwrap();
            assert_eq!(Codec::from_name(c.codec(), 4).unwrap(), codec, "{path:?}");
            for b in c.blocks() {
                let b = b.unwrap();
                out.push((b.data.to_vec(), b.data_offset));
            }
        }
        // 4 manifests, 8 manifest lists (an empty one has no block).
        assert!(out.len() >= 10, "{}", out.len());
        out
    }

    fn bzip2(plain: &[u8]) -> Vec<u8> {
        let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
        e.write_all(plain).unwrap();
        e.finish().unwrap()
    }

    fn xz(plain: &[u8]) -> Vec<u8> {
        let mut w =
            lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(6)).unwrap();
        w.write_all(plain).unwrap();
        w.finish().unwrap()
    }

    /// Some Avro-like bytes: varints and repeated strings.
    fn sample(n: usize) -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..n {
            v.extend_from_slice(format!("data-{:08x}-0.parquet", i * 7919).as_bytes());
            v.extend_from_slice(&(i as u32).to_le_bytes());
        }
        v
    }

    #[test]
    fn codec_names() {
        assert_eq!(Codec::from_name(b"bzip2", 4), Ok(Codec::Bzip2));
        assert_eq!(Codec::from_name(b"xz", 4), Ok(Codec::Xz));
        assert_eq!(
            Codec::from_name(b"lz4", 4),
            Err(Error::new(ErrorKind::UnsupportedVersion, 4))
        );
    }

    #[test]
    fn bzip2_and_xz_round_trip_in_one_or_more_streams() {
        let plain = sample(3000);
        let (a, b) = plain.split_at(1234);
        for (codec, one, two) in [
            (Codec::Bzip2, bzip2(&plain), [bzip2(a), bzip2(b)].concat()),
            (Codec::Xz, xz(&plain), [xz(a), xz(b)].concat()),
        ] {
            let mut d = Decompressor::new(codec);
            assert_eq!(d.block(&one, 100).unwrap(), plain, "{codec:?}");
            assert_eq!(d.last_len(), plain.len());
            // Concatenated streams, as Python's `bz2`/`lzma.decompress` read them.
            assert_eq!(d.block(&two, 100).unwrap(), plain, "{codec:?}");
            // The buffer is reused: a short block after a long one.
            assert_eq!(d.block(&xz_or_bz(codec, b"x"), 7).unwrap(), b"x");
            // Empty output.
            assert_eq!(d.block(&xz_or_bz(codec, b""), 7).unwrap(), b"");
            // Trailing bytes that are no stream.
            let mut junk = one.clone();
            junk.extend_from_slice(b"junk");
            assert_eq!(
                d.block(&junk, 100).unwrap_err(),
                Error::new(ErrorKind::InvalidValue, 100),
                "{codec:?}"
            );
            // No data at all.
            assert!(d.block(&[], 100).is_err());
        }
    }

    fn xz_or_bz(codec: Codec, plain: &[u8]) -> Vec<u8> {
        match codec {
            Codec::Xz => xz(plain),
            _ => bzip2(plain),
        }
    }

    #[test]
    fn xz_checks_other_than_crc64_decode() {
        // Python's `lzma` writes CRC-64 by default, but the check is the writer's choice.
        let plain = sample(500);
        for check in [
            lzma_rust2::CheckType::None,
            lzma_rust2::CheckType::Crc32,
            lzma_rust2::CheckType::Crc64,
            lzma_rust2::CheckType::Sha256,
        ] {
            let mut o = lzma_rust2::XzOptions::with_preset(1);
            o.set_check_sum_type(check);
            let mut w = lzma_rust2::XzWriter::new(Vec::new(), o).unwrap();
            w.write_all(&plain).unwrap();
            let z = w.finish().unwrap();
            let mut d = Decompressor::new(Codec::Xz);
            assert_eq!(d.block(&z, 0).unwrap(), plain, "{check:?}");
        }
    }

    #[test]
    fn pypaimon_bzip2_and_xz_blocks_decode() {
        for (table, codec) in [("bzip2", Codec::Bzip2), ("xz", Codec::Xz)] {
            let mut d = Decompressor::new(codec);
            for (data, at) in pypaimon_blocks(table, codec) {
                let out = d.block(&data, at).unwrap().to_vec();
                // The same records as the stored (null codec) table's are hundreds of bytes.
                assert!(out.len() > data.len(), "{table} at {at}");
            }
        }
    }

    /// Every single-byte change and every truncation of a pypaimon block is an error at the
    /// block (or, truncated, at its end) or, where the change is one the format ignores,
    /// the same output: never a panic, never other bytes.
    #[test]
    fn corrupted_or_truncated_pypaimon_blocks_are_errors_never_panics() {
        for (table, codec) in [("bzip2", Codec::Bzip2), ("xz", Codec::Xz)] {
            let blocks = pypaimon_blocks(table, codec);
            // A manifest's block and a manifest list's block.
            for (data, at) in [&blocks[0], &blocks[blocks.len() - 1]] {
                let mut d = Decompressor::new(codec);
                let plain = d.block(data, *at).unwrap().to_vec();
                let end = *at + data.len() as u64;
                let check = |r: Result<&[u8]>, what: &str| match r {
                    Ok(out) => assert_eq!(out, plain, "{table} {what}: other bytes"),
                    Err(e) => assert!(
                        matches!(
                            (e.kind, e.offset),
                            (ErrorKind::InvalidValue | ErrorKind::ChecksumMismatch, o) if o == *at
                        ) || e == Error::new(ErrorKind::Truncated, end),
                        "{table} {what}: {e:?}"
                    ),
                };
                let mut bad = data.clone();
                for i in 0..data.len() {
                    for mask in [0x01, 0x80, 0xff] {
                        bad[i] ^= mask;
                        check(d.block(&bad, *at), &format!("byte {i} ^ {mask:#x}"));
                        bad[i] ^= mask;
                    }
                }
                for len in 0..data.len() {
                    let r = d.block(&data[..len], *at);
                    assert!(r.is_err(), "{table}: a {len}-byte prefix decoded");
                    let e = r.unwrap_err();
                    assert!(
                        e == Error::new(ErrorKind::Truncated, *at + len as u64)
                            || e == Error::new(ErrorKind::InvalidValue, *at),
                        "{table} prefix {len}: {e:?}"
                    );
                }
            }
        }
    }
}
