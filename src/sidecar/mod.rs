//! Paimon manifest sidecars (`PMSC`): validate in place, walk coverage, select blocks, build.
//!
//! A sidecar describes, for every physical Avro block of one manifest, which partitions,
//! row-ID intervals and `(bucket, totalBuckets)` pairs the block's entries cover. This module
//! owns the two container layouts of format version 1 (told apart by byte 4):
//!
//! * [`Layout::Fixed`]: fixed-width big-endian integers, SHA-256 trailer (the default for
//!   building);
//! * [`Layout::Compact`]: LEB128 varints, CRC-32 trailer (what Apache Paimon ships).
//!
//! [`Sidecar::validate`] checks everything once (checksum, every container field and bound,
//! block tiling, entry count, payload framing) without decoding delta streams and without
//! allocating; the view then hands out borrowed sub-slices and lazy, checked iterators
//! ([`PartitionIds`], [`RowIdIntervals`], [`BucketPairs`]). [`Query`] + [`Sidecar::select`]
//! pick the blocks a scan must read. [`BinaryRow`] reads typed partition values so predicates
//! can be written on values. [`SidecarBuilder`] (feature `alloc`) writes either layout.
//!
//! This module knows nothing of files: the `io` module maps and reads them.
//!
//! ```
//! use lakecore::sidecar::{Layout, ManifestFacts, Query, RowRanges, Sidecar};
//! # let hex = include_str!("../../tests/data/golden/compact-v1.hex");
//! # let bytes: Vec<u8> = (0..hex.trim().len()).step_by(2)
//! #     .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
//! let sidecar = Sidecar::validate(&bytes, ManifestFacts { length: 457, entries: 7 })?;
//! assert_eq!(sidecar.layout(), Layout::Compact);
//! let mut rows = [(20, 20)];
//! let query = Query::new().rows(RowRanges::normalize(&mut rows));
//! let firsts: Vec<u64> = sidecar
//!     .select(&query)
//!     .map(|b| b.map(|b| b.first_record))
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(firsts, [0, 5]);
//! # Ok::<(), lakecore::Error>(())
//! ```

mod binary_row;
#[cfg(feature = "alloc")]
mod build;
mod coverage;
mod select;

pub use binary_row::BinaryRow;
#[cfg(feature = "alloc")]
pub use build::{BuildSettings, EntryCoverage, SidecarBuilder};
pub use coverage::{BucketPairs, PartitionIds, RowIdIntervals};
pub use select::{PartitionMask, Query, RowRanges, SelectedBlock, Selection};

use crate::codec::checksum;
use crate::codec::varint::{self, VarintFormat};
use crate::cursor::Cursor;
use crate::error::{off, Error, ErrorKind, Result};

/// The four magic bytes at the start of every sidecar.
pub const MAGIC: [u8; 4] = *b"PMSC";
/// The only format version this crate reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// Trailer size of the fixed layout (SHA-256).
pub const FIXED_TRAILER_LEN: usize = 32;
/// Trailer size of the compact layout (big-endian CRC-32).
pub const COMPACT_TRAILER_LEN: usize = 4;
/// The smallest compact sidecar Apache Paimon accepts.
pub const COMPACT_MIN_LEN: usize = 33;
/// The smallest Avro header a sidecar may carry.
pub const MIN_AVRO_HEADER_LEN: u64 = 21;
/// The smallest partition tuple: arity prefix + 8-byte null region (arity 0).
pub const MIN_PARTITION_LEN: u64 = 12;
/// The Avro object-container magic the embedded header starts with.
pub const AVRO_MAGIC: [u8; 4] = *b"Obj\x01";
/// Coverage encoding byte: no coverage (nothing follows).
pub const ENCODING_UNAVAILABLE: u8 = 0;
/// Coverage encoding byte: a payload of this format version follows.
pub const ENCODING_V1: u8 = 1;

/// Bound on counts and lengths (`int` fields; compact counts are bounded likewise).
const MAX_INT: u64 = i32::MAX as u64;
/// Bound on offsets, lengths and record counts (`long` fields).
const MAX_LONG: u64 = i64::MAX as u64;
/// Dictionaries larger than this are checked for duplicates by sorting (feature `alloc`).
#[cfg(feature = "alloc")]
const SORTED_UNIQUE_CHECK_ABOVE: u32 = 4096;

/// The container layout of a sidecar (told apart by byte 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Fixed-width big-endian integers, SHA-256 trailer.
    Fixed,
    /// Canonical LEB128 varints, CRC-32 trailer (Apache Paimon's layout).
    Compact,
}

impl Layout {
    /// `"fixed"` or `"compact"`.
    pub const fn name(self) -> &'static str {
        match self {
            Layout::Fixed => "fixed",
            Layout::Compact => "compact",
        }
    }

    /// Smallest encoding of one dictionary record (length field + 12-byte tuple).
    const fn min_partition_record(self) -> u64 {
        match self {
            Layout::Fixed => 4 + MIN_PARTITION_LEN,
            Layout::Compact => 1 + MIN_PARTITION_LEN,
        }
    }

    /// Smallest encoding of one block (three integers + three encoding bytes).
    const fn min_block_record(self) -> u64 {
        match self {
            Layout::Fixed => 24 + 3,
            Layout::Compact => 6,
        }
    }
}

/// What the caller knows of the manifest the sidecar describes (from its
/// `ManifestFileMeta`): `fileSize` and `numAddedFiles + numDeletedFiles`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ManifestFacts {
    /// The manifest's size in bytes.
    pub length: u64,
    /// The manifest's entry count (ADD + DELETE).
    pub entries: u64,
}

/// Reads the layout's container integers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fields<'a> {
    pub(crate) cur: Cursor<'a>,
    pub(crate) layout: Layout,
}

impl<'a> Fields<'a> {
    /// A count or length: `int` (fixed) or varint `<= i32::MAX` (compact); never negative.
    #[inline(always)]
    pub(crate) fn count(&mut self) -> Result<u64> {
        match self.layout {
            Layout::Fixed => self.cur.len_i32_be().map(u64::from),
            Layout::Compact => match self.one_byte() {
                Some(v) => Ok(v),
                None => self.cur.uvarint_max(VarintFormat::SIDECAR, MAX_INT),
            },
        }
    }

    /// An offset, length or record count: `long` (fixed) or varint `<= i64::MAX`.
    #[inline(always)]
    pub(crate) fn long(&mut self) -> Result<u64> {
        match self.layout {
            Layout::Fixed => self.cur.len_i64_be(),
            Layout::Compact => match self.short_varint() {
                Some(v) => Ok(v),
                None => self.cur.uvarint(VarintFormat::SIDECAR),
            },
        }
    }

    /// Branch-free decode of a canonical varint of 1..=8 bytes when 8 bytes are readable
    /// (offsets and lengths in compact sidecars); `None` sends every other case (longer,
    /// non-canonical, near the end) to the checked decoder, which also reports errors.
    #[inline(always)]
    fn short_varint(&mut self) -> Option<u64> {
        let (v, len) = varint::decode_short(self.cur.rest())?;
        self.cur.skip(len).ok()?;
        Some(v)
    }

    /// Fast path for the one-byte varints that dominate compact sidecars.
    #[inline(always)]
    fn one_byte(&mut self) -> Option<u64> {
        let b = self.cur.peek_u8()?;
        if b < 0x80 && self.cur.skip(1).is_ok() {
            return Some(u64::from(b));
        }
        None
    }
}

/// A compact payload's `count` varint at `bytes[start..end]` (`1..=max`, `<= i32::MAX`, at
/// most one byte a value left after it): the count and the position after it.
#[inline(always)]
fn lead_within(bytes: &[u8], start: usize, end: usize, max: u64) -> Option<(u64, usize)> {
    let (n, q) = varint::decode_short_within(bytes, start, end)?;
    (n != 0 && n <= max && n <= MAX_INT && n <= off(end - q)).then_some((n, q))
}

/// Checks the framing of one `_PARTITION` tuple (arity prefix + BinaryRow) at `at`.
pub(crate) fn check_partition_tuple(tuple: &[u8], at: u64) -> Result<()> {
    let len = off(tuple.len());
    if len < MIN_PARTITION_LEN {
        return Err(Error::new(ErrorKind::InvalidLength, at));
    }
    let mut c = Cursor::with_origin(tuple, at);
    let arity = c.i32_be()?;
    let arity = u64::try_from(arity).map_err(|_| Error::new(ErrorKind::InvalidValue, at))?;
    let need = binary_row::fixed_part_len(arity)
        .and_then(|n| n.checked_add(4))
        .ok_or(Error::new(ErrorKind::ArithmeticOverflow, at))?;
    if need > len {
        return Err(Error::new(ErrorKind::InvalidLength, at));
    }
    Ok(())
}

/// Told the body position after each block a validation pass has checked.
trait Walked {
    fn walked(&mut self, pos: usize);
}

/// Nothing to do per block (the checksum is checked on its own).
impl Walked for () {
    #[inline(always)]
    fn walked(&mut self, _: usize) {}
}

/// The SHA-256 that trails the walk. A trait method, not a closure, so that it is always
/// inlined into the walk (a closure was left out of line), with the engine's wrapper; the
/// engine's rounds are one call per step (see [`FixedValidation`]).
impl<E: checksum::Sha256Blocks> Walked for checksum::Trailing<'_, E> {
    #[inline(always)]
    fn walked(&mut self, pos: usize) {
        self.advance_to(pos);
    }
}

/// Fixed-layout validation as a job for [`checksum::with_sha256`]: the block walk with the
/// SHA-256 of the body trailing it, compiled with the engine's target features.
struct FixedValidation<'a> {
    bytes: &'a [u8],
    body: &'a [u8],
    stored: &'a [u8],
    facts: Option<ManifestFacts>,
}

impl<'a> checksum::WithSha256 for FixedValidation<'a> {
    type Output = Result<Sidecar<'a>>;

    /// The SHA-256 rounds are latency-bound: hashing in steps that trail the block walk lets
    /// the CPU run both at once. A mismatch still wins over any structural error.
    #[inline(always)]
    fn run<E: checksum::Sha256Blocks>(self, engine: E) -> Result<Sidecar<'a>> {
        let FixedValidation {
            bytes,
            body,
            stored,
            facts,
        } = self;
        let mut hash = checksum::Trailing::new(body, engine);
        let structure = Sidecar::structure(bytes, Layout::Fixed, body, facts, &mut hash);
        if hash.finish().as_slice() != stored {
            return Err(checksum_mismatch(body));
        }
        structure
    }
}

/// The error for a checksum that does not match `body`: at the trailer's first byte.
fn checksum_mismatch(body: &[u8]) -> Error {
    Error::new(ErrorKind::ChecksumMismatch, off(body.len()))
}

/// Whether `stored` is the layout's checksum of `body`.
fn checksum_ok(layout: Layout, body: &[u8], stored: &[u8]) -> bool {
    match layout {
        Layout::Fixed => checksum::sha256(body).as_slice() == stored,
        Layout::Compact => checksum::crc32(body).to_be_bytes().as_slice() == stored,
    }
}

/// A validated sidecar: borrowed bytes whose every container field, bound and payload frame
/// has been checked once. Accessors never fail; coverage iterators check delta streams as
/// they decode them.
#[derive(Clone, Copy, Debug)]
pub struct Sidecar<'a> {
    bytes: &'a [u8],
    layout: Layout,
    manifest_length: u64,
    entry_count: u64,
    header: &'a [u8],
    dictionary: &'a [u8],
    dictionary_at: u64,
    partition_count: u32,
    uniform_stride: Option<usize>,
    blocks: &'a [u8],
    blocks_at: u64,
    block_count: u32,
}

impl<'a> Sidecar<'a> {
    /// Validates `bytes` as a sidecar of the manifest described by `facts`.
    ///
    /// Checks, in order: magic, layout (byte 4), size, checksum, version, the stored
    /// manifest length and entry count (fixed layout) against `facts`, the Avro header, the
    /// partition dictionary (framing, no duplicate tuples), every block (tiling from the
    /// header's end to `facts.length`, record counts summing to `facts.entries`) and the
    /// framing of every coverage payload. Delta streams are not decoded here.
    ///
    /// The reported error follows that order: a checksum mismatch wins over any structural
    /// error. (The fixed layout's SHA-256 is computed in steps that trail the block walk, so
    /// the CPU overlaps the hash rounds with the walk; the result is the same.)
    ///
    /// Errors carry absolute file offsets. The duplicate-tuple check allocates nothing for
    /// dictionaries of up to 4096 tuples (a stack hash filter, about linear); larger ones are
    /// sorted (feature `alloc`: 32 bytes a tuple, O(n log n)) or, without `alloc`, compared
    /// pairwise (quadratic).
    pub fn validate(bytes: &'a [u8], facts: ManifestFacts) -> Result<Self> {
        Self::validate_inner(bytes, Some(facts))
    }

    /// Validates `bytes` without outside knowledge of the manifest: the fixed layout's stored
    /// length and entry count are trusted; for the compact layout they are derived from the
    /// blocks (tiling end, record-count sum). Use [`validate`](Self::validate) when the
    /// manifest's metadata is at hand.
    pub fn validate_self_described(bytes: &'a [u8]) -> Result<Self> {
        Self::validate_inner(bytes, None)
    }

    /// The layout of `bytes` (from magic and byte 4), without validating anything else.
    ///
    /// ```
    /// use lakecore::sidecar::{Layout, Sidecar};
    /// use lakecore::ErrorKind;
    /// assert_eq!(Sidecar::detect_layout(b"PMSC\x01...")?, Layout::Compact);
    /// assert_eq!(Sidecar::detect_layout(b"PMSC\x00\x00\x00\x01")?, Layout::Fixed);
    /// assert_eq!(Sidecar::detect_layout(b"PMS").unwrap_err().kind, ErrorKind::Truncated);
    /// assert_eq!(Sidecar::detect_layout(b"AVRO\x01").unwrap_err().kind, ErrorKind::BadMagic);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn detect_layout(bytes: &[u8]) -> Result<Layout> {
        let magic = bytes
            .first_chunk::<4>()
            .ok_or(Error::new(ErrorKind::Truncated, off(bytes.len())))?;
        if *magic != MAGIC {
            return Err(Error::new(ErrorKind::BadMagic, 0));
        }
        match bytes.get(4) {
            None => Err(Error::new(ErrorKind::Truncated, off(bytes.len()))),
            Some(0) => Ok(Layout::Fixed),
            Some(1) => Ok(Layout::Compact),
            Some(_) => Err(Error::new(ErrorKind::UnsupportedVersion, 4)),
        }
    }

    /// [`validate`](Self::validate) with the checksum computed on a second thread while the
    /// structure is walked on the caller's (for large sidecars the walk then costs no wall
    /// time next to the hash). Results and error precedence are those of `validate`: a
    /// checksum mismatch wins over any structural error.
    ///
    /// ```
    /// use lakecore::sidecar::{ManifestFacts, Sidecar};
    /// use lakecore::ErrorKind;
    /// # let hex = include_str!("../../tests/data/golden/compact-v1.hex");
    /// # let bytes: Vec<u8> = (0..hex.trim().len()).step_by(2)
    /// #     .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    /// let facts = ManifestFacts { length: 457, entries: 7 };
    /// let view = Sidecar::validate_parallel(&bytes, facts)?;
    /// assert_eq!(view.block_count(), 3);
    /// let mut bad = bytes.clone();
    /// bad[100] ^= 1;
    /// let e = Sidecar::validate_parallel(&bad, facts).unwrap_err();
    /// assert_eq!((e.kind, e.offset), (ErrorKind::ChecksumMismatch, bytes.len() as u64 - 4));
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    #[cfg(feature = "std")]
    pub fn validate_parallel(bytes: &'a [u8], facts: ManifestFacts) -> Result<Self> {
        let (layout, body, stored) = Self::split(bytes)?;
        std::thread::scope(|scope| {
            let sum = scope.spawn(|| checksum_ok(layout, body, stored));
            let structure = Self::structure(bytes, layout, body, Some(facts), &mut ());
            if !sum.join().unwrap_or(false) {
                return Err(checksum_mismatch(body));
            }
            structure
        })
    }

    /// Layout, body and stored trailer, after the size checks.
    fn split(bytes: &'a [u8]) -> Result<(Layout, &'a [u8], &'a [u8])> {
        let layout = Self::detect_layout(bytes)?;
        let (trailer, min_len) = match layout {
            Layout::Fixed => (FIXED_TRAILER_LEN, 8 + FIXED_TRAILER_LEN),
            Layout::Compact => (COMPACT_TRAILER_LEN, COMPACT_MIN_LEN),
        };
        if bytes.len() < min_len {
            return Err(Error::new(ErrorKind::Truncated, off(bytes.len())));
        }
        let (body, stored) = bytes
            .split_at_checked(bytes.len() - trailer)
            .ok_or(Error::new(ErrorKind::Truncated, off(bytes.len())))?;
        Ok((layout, body, stored))
    }

    fn validate_inner(bytes: &'a [u8], facts: Option<ManifestFacts>) -> Result<Self> {
        let (layout, body, stored) = Self::split(bytes)?;
        match layout {
            // See `FixedValidation`: the hash trails the walk.
            Layout::Fixed => checksum::with_sha256(FixedValidation {
                bytes,
                body,
                stored,
                facts,
            }),
            // CRC-32 runs at tens of GB/s: check it first, whole.
            Layout::Compact => {
                if !checksum_ok(layout, body, stored) {
                    return Err(checksum_mismatch(body));
                }
                Self::structure(bytes, layout, body, facts, &mut ())
            }
        }
    }

    /// Every check but the checksum; `walked` is told the body position after each block.
    /// Inlined into its callers, so that the fixed-layout walk is compiled together with the
    /// SHA-256 engine that trails it (see [`FixedValidation`]).
    #[inline(always)]
    fn structure(
        bytes: &'a [u8],
        layout: Layout,
        body: &'a [u8],
        facts: Option<ManifestFacts>,
        walked: &mut impl Walked,
    ) -> Result<Self> {
        let body_len = body.len();
        let mut f = Fields {
            cur: Cursor::new(body),
            layout,
        };
        f.cur.skip(4)?;
        let version_at = f.cur.position();
        let version = match layout {
            Layout::Fixed => u64::from(f.cur.u32_be()?),
            Layout::Compact => f.cur.uvarint(VarintFormat::SIDECAR)?,
        };
        if version != u64::from(FORMAT_VERSION) {
            return Err(Error::new(ErrorKind::UnsupportedVersion, version_at));
        }

        // Fixed layout: stored manifest length and entry count, checked against the caller's.
        let (mut manifest_length, mut entry_count) =
            (facts.map(|m| m.length), facts.map(|m| m.entries));
        if layout == Layout::Fixed {
            let at = f.cur.position();
            let stored_len = f.cur.len_i64_be()?;
            match manifest_length {
                Some(known) if known != stored_len => {
                    return Err(Error::new(ErrorKind::Mismatch, at))
                }
                _ => manifest_length = Some(stored_len),
            }
            let at = f.cur.position();
            let stored_entries = f.cur.len_i64_be()?;
            match entry_count {
                Some(known) if known != stored_entries => {
                    return Err(Error::new(ErrorKind::Mismatch, at))
                }
                _ => entry_count = Some(stored_entries),
            }
        }

        // Avro header.
        let at = f.cur.position();
        let header_len = f.count()?;
        let room = off(f.cur.remaining()).saturating_sub(2);
        if header_len < MIN_AVRO_HEADER_LEN
            || header_len > room
            || manifest_length.is_some_and(|m| header_len > m)
        {
            return Err(Error::new(ErrorKind::InvalidLength, at));
        }
        let header_at = f.cur.position();
        let header = f.cur.bytes_u64(header_len)?;
        if !header.starts_with(&AVRO_MAGIC) {
            return Err(Error::new(ErrorKind::BadMagic, header_at));
        }

        // Partition dictionary.
        let at = f.cur.position();
        let partition_count = f.count()?;
        if partition_count > off(f.cur.remaining()) / layout.min_partition_record() {
            return Err(Error::new(ErrorKind::InvalidLength, at));
        }
        let dictionary_index = f.cur.index();
        let dictionary_at = f.cur.position();
        let mut stride: Option<Option<usize>> = None;
        for _ in 0..partition_count {
            let record_start = f.cur.index();
            let at = f.cur.position();
            let len = f.count()?;
            if len < MIN_PARTITION_LEN {
                return Err(Error::new(ErrorKind::InvalidLength, at));
            }
            let tuple_at = f.cur.position();
            let tuple = f.cur.bytes_u64(len)?;
            check_partition_tuple(tuple, tuple_at)?;
            let size = f.cur.index() - record_start;
            stride = Some(match stride {
                None => Some(size),
                Some(Some(s)) if s == size => Some(s),
                Some(_) => None,
            });
        }
        let dictionary = body
            .get(dictionary_index..f.cur.index())
            .unwrap_or_default();
        let partition_count =
            u32::try_from(partition_count).map_err(|_| Error::new(ErrorKind::InvalidLength, at))?;

        // Blocks.
        let at = f.cur.position();
        let block_count = f.count()?;
        if block_count > off(f.cur.remaining()) / layout.min_block_record() {
            return Err(Error::new(ErrorKind::InvalidLength, at));
        }
        let block_count =
            u32::try_from(block_count).map_err(|_| Error::new(ErrorKind::InvalidLength, at))?;
        let blocks_index = f.cur.index();
        let blocks_at = f.cur.position();
        let mut walker = BlockWalker {
            f,
            left: block_count,
            next_id: 0,
            next_first_record: 0,
            next_offset: header_len,
            entry_limit: entry_count.unwrap_or(MAX_LONG),
            partition_count,
        };
        // One loop per layout: with the layout a constant in each, the inlined field readers
        // and payload frames lose their per-field layout branches.
        match layout {
            Layout::Fixed => walker.validate_all(Layout::Fixed, walked)?,
            Layout::Compact => walker.validate_all(Layout::Compact, walked)?,
        }
        let f = walker.f;
        f.cur.expect_end()?;
        let end_at = off(body_len);
        let tiled_end = walker.next_offset;
        match manifest_length {
            Some(m) if m != tiled_end => return Err(Error::new(ErrorKind::Mismatch, end_at)),
            _ => manifest_length = Some(tiled_end),
        }
        let records = walker.next_first_record;
        match entry_count {
            Some(n) if n != records => return Err(Error::new(ErrorKind::Mismatch, end_at)),
            _ => entry_count = Some(records),
        }
        let blocks = body.get(blocks_index..).unwrap_or_default();

        let sidecar = Sidecar {
            bytes,
            layout,
            manifest_length: manifest_length.unwrap_or(tiled_end),
            entry_count: entry_count.unwrap_or(records),
            header,
            dictionary,
            dictionary_at,
            partition_count,
            uniform_stride: stride.flatten(),
            blocks,
            blocks_at,
            block_count,
        };
        sidecar.check_unique_partitions()?;
        Ok(sidecar)
    }

    /// No tuple appears twice. A 16 Kibit stack filter of tuple hashes sends only possible
    /// repeats to an exact comparison with the earlier tuples, so typical dictionaries (up to
    /// a few thousand tuples) are checked in about linear time without allocating. Larger
    /// dictionaries saturate the filter and would make this quadratic (100,000 tuples took
    /// 18 s): with feature `alloc` they are checked by sorting instead
    /// ([`check_unique_sorted`](Self::check_unique_sorted)).
    fn check_unique_partitions(&self) -> Result<()> {
        #[cfg(feature = "alloc")]
        if self.partition_count > SORTED_UNIQUE_CHECK_ABOVE {
            return self.check_unique_sorted();
        }
        const WORDS: usize = 256;
        let mut seen = [0u64; WORDS];
        for (index, (at, tuple)) in self.partitions_with_offsets().enumerate() {
            let h = tuple.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
            let bit = usize::try_from(h % (64 * WORDS as u64)).unwrap_or(0);
            let (word, mask) = (bit / 64, 1u64 << (bit % 64));
            let Some(slot) = seen.get_mut(word) else {
                continue;
            };
            if *slot & mask != 0
                && self
                    .partitions()
                    .take(index)
                    .any(|earlier| earlier == tuple)
            {
                return Err(Error::new(ErrorKind::Duplicate, at));
            }
            *slot |= mask;
        }
        Ok(())
    }

    /// The large-dictionary duplicate check: sorts `(tuple, index)` (32 bytes a tuple,
    /// reserved with `try_reserve_exact`: [`ErrorKind::LimitExceeded`] at the dictionary when
    /// that fails) and compares neighbours, in O(n log n). Reports the same error as the
    /// filter path: [`ErrorKind::Duplicate`] at the lowest-indexed tuple equal to an earlier one.
    #[cfg(feature = "alloc")]
    fn check_unique_sorted(&self) -> Result<()> {
        let n = usize::try_from(self.partition_count)
            .map_err(|_| Error::new(ErrorKind::LimitExceeded, self.dictionary_at))?;
        let mut tuples: alloc::vec::Vec<(&'a [u8], u32, u64)> = alloc::vec::Vec::new();
        tuples
            .try_reserve_exact(n)
            .map_err(|_| Error::new(ErrorKind::LimitExceeded, self.dictionary_at))?;
        for (index, (at, tuple)) in (0u32..).zip(self.partitions_with_offsets()) {
            tuples.push((tuple, index, at));
        }
        tuples.sort_unstable_by(|a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)));
        let first_repeat = tuples
            .windows(2)
            .filter_map(|w| match w {
                [a, b] if a.0 == b.0 => Some((b.1, b.2)),
                _ => None,
            })
            .min();
        match first_repeat {
            Some((_, at)) => Err(Error::new(ErrorKind::Duplicate, at)),
            None => Ok(()),
        }
    }

    /// The whole sidecar file, trailer included.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The container layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The manifest's length in bytes (stored, given, or the end of the block tiling).
    pub fn manifest_length(&self) -> u64 {
        self.manifest_length
    }

    /// The manifest's entry count (ADD + DELETE).
    pub fn entry_count(&self) -> u64 {
        self.entry_count
    }

    /// The manifest's Avro header (`[0, avro_header_len)` of the manifest), verbatim.
    pub fn avro_header(&self) -> &'a [u8] {
        self.header
    }

    /// How many distinct partition tuples the dictionary holds.
    pub fn partition_count(&self) -> u32 {
        self.partition_count
    }

    /// How many Avro blocks the manifest has.
    pub fn block_count(&self) -> u32 {
        self.block_count
    }

    /// The dictionary's tuples in ID order (exact `_PARTITION` bytes).
    pub fn partitions(&self) -> Partitions<'a> {
        Partitions {
            inner: self.partitions_with_offsets(),
        }
    }

    fn partitions_with_offsets(&self) -> PartitionsAt<'a> {
        PartitionsAt {
            f: Fields {
                cur: Cursor::with_origin(self.dictionary, self.dictionary_at),
                layout: self.layout,
            },
        }
    }

    /// The tuple with dictionary ID `id`: O(1) when every dictionary record has the same
    /// size (the common case of fixed-width partition keys), a walk otherwise.
    pub fn partition(&self, id: u32) -> Option<&'a [u8]> {
        if id >= self.partition_count {
            return None;
        }
        let id = usize::try_from(id).ok()?;
        if let Some(stride) = self.uniform_stride {
            let start = stride.checked_mul(id)?;
            let record = self.dictionary.get(start..start.checked_add(stride)?)?;
            let mut f = Fields {
                cur: Cursor::new(record),
                layout: self.layout,
            };
            let len = f.count().ok()?;
            return f.cur.bytes_u64(len).ok();
        }
        self.partitions().nth(id)
    }

    /// An O(1) index of the dictionary for any tuple sizes: the start of every tuple is
    /// recorded in `scratch` (at least [`partition_count`](Self::partition_count) long;
    /// [`ErrorKind::LimitExceeded`] otherwise).
    ///
    /// ```
    /// use lakecore::sidecar::{ManifestFacts, Sidecar};
    /// # let hex = include_str!("../../tests/data/golden/compact-v1.hex");
    /// # let bytes: Vec<u8> = (0..hex.trim().len()).step_by(2)
    /// #     .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    /// let sidecar = Sidecar::validate(&bytes, ManifestFacts { length: 457, entries: 7 })?;
    /// let mut scratch = [(0u32, 0u32); 16]; // caller memory: no allocation
    /// let index = sidecar.partition_index(&mut scratch)?;
    /// assert_eq!(index.len(), 2);
    /// assert_eq!(index.get(1), sidecar.partition(1));
    /// assert_eq!(index.get(2), None);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn partition_index<'s>(
        &self,
        scratch: &'s mut [(u32, u32)],
    ) -> Result<PartitionIndex<'a, 's>> {
        let n = usize::try_from(self.partition_count)
            .map_err(|_| Error::new(ErrorKind::LimitExceeded, 0))?;
        let slots = scratch
            .get_mut(..n)
            .ok_or(Error::new(ErrorKind::LimitExceeded, 0))?;
        for (slot, (at, tuple)) in slots.iter_mut().zip(self.partitions_with_offsets()) {
            let start = at.saturating_sub(self.dictionary_at);
            *slot = (
                u32::try_from(start).map_err(|_| Error::new(ErrorKind::LimitExceeded, at))?,
                u32::try_from(tuple.len()).map_err(|_| Error::new(ErrorKind::LimitExceeded, at))?,
            );
        }
        Ok(PartitionIndex {
            dictionary: self.dictionary,
            spans: slots,
        })
    }

    /// The blocks in file order.
    pub fn blocks(&self) -> Blocks<'a> {
        Blocks {
            walker: BlockWalker {
                f: Fields {
                    cur: Cursor::with_origin(self.blocks, self.blocks_at),
                    layout: self.layout,
                },
                left: self.block_count,
                next_id: 0,
                next_first_record: 0,
                next_offset: off(self.header.len()),
                entry_limit: self.entry_count,
                partition_count: self.partition_count,
            },
        }
    }

    /// The blocks a scan with `query` must read, in file order (see [`Query`]).
    pub fn select<'q>(&self, query: &'q Query<'q>) -> Selection<'a, 'q> {
        Selection::new(self.blocks(), query)
    }

    /// Evaluates `predicate` once per dictionary tuple into `scratch` (at least
    /// [`partition_count`](Self::partition_count) long) and returns the mask for
    /// [`Query::partitions`]. Fails with [`ErrorKind::LimitExceeded`] when `scratch` is short.
    pub fn partition_mask<'s>(
        &self,
        scratch: &'s mut [bool],
        mut predicate: impl FnMut(&'a [u8]) -> bool,
    ) -> Result<PartitionMask<'s>> {
        let n = usize::try_from(self.partition_count)
            .map_err(|_| Error::new(ErrorKind::LimitExceeded, 0))?;
        let slots = scratch
            .get_mut(..n)
            .ok_or(Error::new(ErrorKind::LimitExceeded, 0))?;
        for (slot, tuple) in slots.iter_mut().zip(self.partitions()) {
            *slot = predicate(tuple);
        }
        Ok(PartitionMask::new(slots))
    }

    /// [`partition_mask`](Self::partition_mask) into a new vector.
    #[cfg(feature = "alloc")]
    pub fn partition_mask_vec(
        &self,
        mut predicate: impl FnMut(&'a [u8]) -> bool,
    ) -> alloc::vec::Vec<bool> {
        self.partitions().map(&mut predicate).collect()
    }
}

/// Iterator over dictionary tuples with their absolute offsets.
#[derive(Clone, Debug)]
struct PartitionsAt<'a> {
    f: Fields<'a>,
}

impl<'a> Iterator for PartitionsAt<'a> {
    type Item = (u64, &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        if self.f.cur.is_empty() {
            return None;
        }
        let len = self.f.count().ok()?;
        let at = self.f.cur.position();
        let tuple = self.f.cur.bytes_u64(len).ok()?;
        Some((at, tuple))
    }
}

/// O(1) access to dictionary tuples by ID; see [`Sidecar::partition_index`].
#[derive(Debug)]
pub struct PartitionIndex<'a, 's> {
    dictionary: &'a [u8],
    spans: &'s [(u32, u32)],
}

impl<'a> PartitionIndex<'a, '_> {
    /// The tuple with dictionary ID `id`.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&'a [u8]> {
        let &(start, len) = self.spans.get(usize::try_from(id).ok()?)?;
        let start = usize::try_from(start).ok()?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        self.dictionary.get(start..end)
    }

    /// Number of tuples.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether the dictionary is empty.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// The dictionary's tuples in ID order; see [`Sidecar::partitions`].
#[derive(Clone, Debug)]
pub struct Partitions<'a> {
    inner: PartitionsAt<'a>,
}

impl<'a> Iterator for Partitions<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        self.inner.next().map(|(_, t)| t)
    }
}

/// One coverage dimension's raw frame.
#[derive(Clone, Copy, Debug)]
struct Frame<'a> {
    encoding: u8,
    payload: &'a [u8],
    at: u64,
}

/// One block of the manifest and its coverage, borrowed from a validated [`Sidecar`].
///
/// The block holds its three coverage frames; the iterators are built on demand.
#[derive(Clone, Copy, Debug)]
pub struct Block<'a> {
    /// Block ID (its position).
    pub id: u32,
    /// Offset of the block's object-count varint in the manifest.
    pub offset: u64,
    /// Length: count varint + size varint + data + 16-byte sync.
    pub length: u64,
    /// Ordinal of the block's first entry in the manifest.
    pub first_record: u64,
    /// Entries (ADD + DELETE) in the block.
    pub record_count: u64,
    layout: Layout,
    partition_count: u32,
    frames: [Frame<'a>; 3],
}

impl<'a> Block<'a> {
    /// The encoding bytes of the partition, row-ID and bucket dimensions (0 = unavailable,
    /// 1 = payload, other = unknown and treated as unavailable).
    pub fn encodings(&self) -> [u8; 3] {
        self.frames.map(|f| f.encoding)
    }

    #[inline(always)]
    pub(crate) fn try_partition_ids(&self) -> Result<Option<PartitionIds<'a>>> {
        let [f, _, _] = self.frames;
        if f.encoding != ENCODING_V1 {
            return Ok(None);
        }
        PartitionIds::frame(
            self.layout,
            f.payload,
            f.at,
            self.record_count,
            self.partition_count,
        )
        .map(Some)
    }

    #[inline(always)]
    pub(crate) fn try_row_ids(&self) -> Result<Option<RowIdIntervals<'a>>> {
        let [_, f, _] = self.frames;
        if f.encoding != ENCODING_V1 {
            return Ok(None);
        }
        RowIdIntervals::frame(self.layout, f.payload, f.at, self.record_count).map(Some)
    }

    #[inline(always)]
    pub(crate) fn try_buckets(&self) -> Result<Option<BucketPairs<'a>>> {
        let [_, _, f] = self.frames;
        if f.encoding != ENCODING_V1 {
            return Ok(None);
        }
        BucketPairs::frame(self.layout, f.payload, f.at, self.record_count).map(Some)
    }

    /// The partition IDs of the block's entries, or `None` when unavailable.
    ///
    /// ```
    /// use lakecore::sidecar::{ManifestFacts, Sidecar};
    /// # let hex = include_str!("../../tests/data/golden/compact-v1.hex");
    /// # let bytes: Vec<u8> = (0..hex.trim().len()).step_by(2)
    /// #     .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    /// let sidecar = Sidecar::validate(&bytes, ManifestFacts { length: 457, entries: 7 })?;
    /// // Block 0: entries (rows 0..=9, a, 1/4), (rows 5..=9, a, 1/4), (rows 20..=24, b, 1/8).
    /// let block = sidecar.blocks().next().unwrap();
    /// let ids: Vec<u32> = block.partition_ids().unwrap().collect::<Result<_, _>>()?;
    /// assert_eq!(ids, [0, 1]);
    /// let rows: Vec<(u64, u64)> = block.row_ids().unwrap().collect::<Result<_, _>>()?;
    /// assert_eq!(rows, [(0, 9), (20, 24)]);
    /// let buckets: Vec<(i32, i32)> = block.buckets().unwrap().collect::<Result<_, _>>()?;
    /// assert_eq!(buckets, [(1, 4), (1, 8)]);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn partition_ids(&self) -> Option<PartitionIds<'a>> {
        self.try_partition_ids().ok().flatten()
    }

    /// The merged row-ID intervals of the block's entries, or `None` when unavailable.
    pub fn row_ids(&self) -> Option<RowIdIntervals<'a>> {
        self.try_row_ids().ok().flatten()
    }

    /// Whether the block has row-ID coverage.
    pub fn has_row_ids(&self) -> bool {
        self.frames[1].encoding == ENCODING_V1
    }

    /// The envelope `[min, max]` of the block's row IDs, read without decoding any delta;
    /// `None` when unavailable.
    ///
    /// ```
    /// use lakecore::sidecar::{ManifestFacts, Sidecar};
    /// # let hex = include_str!("../../tests/data/golden/compact-v1.hex");
    /// # let bytes: Vec<u8> = (0..hex.trim().len()).step_by(2)
    /// #     .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    /// let sidecar = Sidecar::validate(&bytes, ManifestFacts { length: 457, entries: 7 })?;
    /// let envelopes: Vec<_> = sidecar.blocks().map(|b| b.row_id_envelope()).collect();
    /// assert_eq!(envelopes[0], Some((0, 24)));
    /// assert_eq!(envelopes[2], Some((20, i64::MAX as u64)));
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    #[inline]
    pub fn row_id_envelope(&self) -> Option<(u64, u64)> {
        let [_, f, _] = self.frames;
        if f.encoding != ENCODING_V1 {
            return None;
        }
        let word = |at: usize| -> Option<u64> {
            f.payload
                .get(at..)
                .and_then(|p| p.first_chunk::<8>())
                .map(|b| u64::from_be_bytes(*b))
        };
        match self.layout {
            Layout::Fixed => {
                let min = word(4)?;
                Some((min, min.checked_add(word(12)?)?))
            }
            Layout::Compact => Some((word(0)?, word(8)?)),
        }
    }

    /// The `(bucket, totalBuckets)` pairs of the block's entries, or `None` when
    /// unavailable.
    pub fn buckets(&self) -> Option<BucketPairs<'a>> {
        self.try_buckets().ok().flatten()
    }
}

/// Parses blocks one after another, checking each (shared by validation and walking).
#[derive(Clone, Debug)]
struct BlockWalker<'a> {
    f: Fields<'a>,
    left: u32,
    next_id: u32,
    next_first_record: u64,
    next_offset: u64,
    entry_limit: u64,
    partition_count: u32,
}

impl<'a> BlockWalker<'a> {
    #[inline(always)]
    fn frame(&mut self) -> Result<Frame<'a>> {
        let encoding = self.f.cur.u8()?;
        if encoding == ENCODING_UNAVAILABLE {
            return Ok(Frame {
                encoding,
                payload: &[],
                at: self.f.cur.position(),
            });
        }
        let len = self.f.count()?;
        let at = self.f.cur.position();
        let payload = self.f.cur.bytes_u64(len)?;
        Ok(Frame {
            encoding,
            payload,
            at,
        })
    }

    /// Checks every remaining block; `layout` is the walker's own, passed as a constant by
    /// the caller so that each call site compiles to a loop specialised for it.
    #[inline(always)]
    fn validate_all(&mut self, layout: Layout, walked: &mut impl Walked) -> Result<()> {
        while self.left > 0 {
            self.f.layout = layout;
            #[cfg(debug_assertions)]
            let before = self.clone();
            let fast = match layout {
                Layout::Fixed => self.fixed_block_fast(),
                Layout::Compact => self.compact_block_fast(),
            };
            // Debug builds (every test run) cross-check the fast paths against the checked
            // one on every block they accept.
            #[cfg(debug_assertions)]
            if fast {
                let mut slow = before;
                debug_assert!(slow.next_block(true).is_ok() && slow.state() == self.state());
            }
            if !fast {
                self.next_block(true)?;
            }
            walked.walked(self.f.cur.index());
        }
        Ok(())
    }

    /// Fixed layout: checks and consumes the next block with plain loads and no error
    /// plumbing when every check of [`next_block`](Self::next_block)`(true)` passes; returns
    /// `false`, consuming nothing, otherwise, and that path then reports the exact error. It
    /// accepts exactly what `next_block(true)` accepts (the sidecar tests run both: every
    /// valid block goes through here, every flipped or truncated one falls back).
    #[inline(always)]
    fn fixed_block_fast(&mut self) -> bool {
        let rest = self.f.cur.rest();
        let Some((head, mut tail)) = rest.split_first_chunk::<24>() else {
            return false;
        };
        let (words, _) = head.as_chunks::<8>();
        let &[offset, length, record_count] = words else {
            return false;
        };
        let (offset, length, record_count) = (
            u64::from_be_bytes(offset),
            u64::from_be_bytes(length),
            u64::from_be_bytes(record_count),
        );
        // Every `long` non-negative; `offset` is `next_offset` (itself <= MAX_LONG).
        let room = self.entry_limit.saturating_sub(self.next_first_record);
        // Both <= MAX_LONG: the sum cannot wrap.
        let end = offset.wrapping_add(length);
        if offset != self.next_offset
            || length == 0
            || length > MAX_LONG
            || end > MAX_LONG
            || record_count == 0
            || record_count > room
            || record_count > MAX_LONG
        {
            return false;
        }
        // The three frames: encoding byte, then (encoding != 0) `int` length and payload.
        let mut payloads: [(u8, &[u8]); 3] = [(0, &[]); 3];
        for slot in &mut payloads {
            let Some((&encoding, after)) = tail.split_first() else {
                return false;
            };
            tail = after;
            if encoding == ENCODING_UNAVAILABLE {
                *slot = (encoding, &[]);
                continue;
            }
            let Some((len, after)) = tail.split_first_chunk::<4>() else {
                return false;
            };
            let Ok(len) = usize::try_from(i32::from_be_bytes(*len)) else {
                return false;
            };
            let Some((payload, after)) = after.split_at_checked(len) else {
                return false;
            };
            *slot = (encoding, payload);
            tail = after;
        }
        let [(pe, partitions), (re, rows), (be, buckets)] = payloads;
        // `count int` (> 0, <= max, <= the bytes after it) leading a delta stream.
        let lead = |payload: &[u8], max: u64| -> bool {
            let Some((n, stream)) = payload.split_first_chunk::<4>() else {
                return false;
            };
            let Ok(n) = u64::try_from(i32::from_be_bytes(*n)) else {
                return false;
            };
            n != 0 && n <= max && n <= off(stream.len())
        };
        let max_ids = record_count.min(u64::from(self.partition_count));
        if pe == ENCODING_V1 && !lead(partitions, max_ids) {
            return false;
        }
        if be == ENCODING_V1 && !lead(buckets, record_count) {
            return false;
        }
        if re == ENCODING_V1 {
            // count int (1..=record_count) | min long | span long | 2(count - 1) deltas.
            let Some((prefix, deltas)) = rows.split_first_chunk::<20>() else {
                return false;
            };
            let (n, envelope) = prefix.split_at(4);
            let (min, span) = envelope.split_at(8);
            let (Ok(n), Ok(min), Ok(span)) = (
                <[u8; 4]>::try_from(n).map(i32::from_be_bytes),
                <[u8; 8]>::try_from(min).map(u64::from_be_bytes),
                <[u8; 8]>::try_from(span).map(u64::from_be_bytes),
            ) else {
                return false;
            };
            let Ok(n) = u64::try_from(n) else {
                return false;
            };
            let interior = n.wrapping_sub(1).wrapping_mul(2);
            if n == 0
                || n > record_count
                || min > MAX_LONG
                || span > MAX_LONG
                || min + span > MAX_LONG
                || interior > off(deltas.len())
                || (interior == 0 && !deltas.is_empty())
            {
                return false;
            }
        }
        if self.f.cur.skip(rest.len() - tail.len()).is_err() {
            return false;
        }
        self.advance(end, record_count);
        true
    }

    /// Compact layout: the counterpart of [`fixed_block_fast`](Self::fixed_block_fast).
    /// Varints are read by [`varint::decode_short_within`] (one byte, or one 8-byte load), so a block is
    /// declined (and left to the checked path) when a varint is longer than 8 bytes, or is
    /// longer than one byte and starts within 8 bytes of the body's end, as well as when any
    /// check fails.
    #[inline(always)]
    fn compact_block_fast(&mut self) -> bool {
        match self.compact_block_scan() {
            Some((used, end, record_count)) if self.f.cur.skip(used).is_ok() => {
                self.advance(end, record_count);
                true
            }
            _ => false,
        }
    }

    /// The checks of [`compact_block_fast`](Self::compact_block_fast), without consuming:
    /// the block's size in bytes, its manifest end offset and its record count.
    #[inline(always)]
    fn compact_block_scan(&self) -> Option<(usize, u64, u64)> {
        let rest = self.f.cur.rest();
        let all = rest.len();
        let varint = |p: usize, limit: usize| varint::decode_short_within(rest, p, limit);
        let (offset, p) = varint(0, all)?;
        let (length, p) = varint(p, all)?;
        let (record_count, mut p) = varint(p, all)?;
        let room = self.entry_limit.saturating_sub(self.next_first_record);
        // Both below 2^56: the sum cannot wrap.
        let end = offset + length;
        if offset != self.next_offset
            || length == 0
            || end > MAX_LONG
            || record_count == 0
            || record_count > room
        {
            return None;
        }
        // The three frames: encoding byte, then (encoding != 0) length varint and payload.
        let mut frames = [(0u8, 0usize, 0usize); 3];
        for slot in &mut frames {
            let encoding = *rest.get(p)?;
            p += 1;
            if encoding == ENCODING_UNAVAILABLE {
                *slot = (encoding, p, p);
                continue;
            }
            let (len, q) = varint(p, all)?;
            let e = q.checked_add(usize::try_from(len).ok()?)?;
            if len > MAX_INT || e > all {
                return None;
            }
            *slot = (encoding, q, e);
            p = e;
        }
        let lead = |start: usize, end: usize, max: u64| lead_within(rest, start, end, max);
        let [(pe, ps, pend), (re, rs, rend), (be, bs, bend)] = frames;
        if pe == ENCODING_V1 {
            lead(ps, pend, record_count.min(u64::from(self.partition_count)))?;
        }
        if re == ENCODING_V1 {
            // min long BE | max long BE | interior count varint (even) | deltas.
            let (envelope, _) = rest.get(rs..rend)?.split_first_chunk::<16>()?;
            let (min, max) = envelope.split_at(8);
            let min = u64::from_be_bytes(min.try_into().ok()?);
            let max = u64::from_be_bytes(max.try_into().ok()?);
            let (interior, q) = varint(rs + 16, rend)?;
            if min > MAX_LONG
                || max > MAX_LONG
                || max < min
                || interior > MAX_INT
                || interior > off(rend - q)
                || interior % 2 != 0
                || interior / 2 + 1 > record_count
                || (interior == 0 && q != rend)
            {
                return None;
            }
        }
        if be == ENCODING_V1 {
            // Bucket stream, then a totals stream of the same count.
            let (n, q) = lead(bs, bend, record_count)?;
            let len = varint::nth_end(rest.get(q..bend)?, n)?;
            let (totals, _) = lead(q + len, bend, record_count)?;
            if totals != n {
                return None;
            }
        }
        Some((p, end, record_count))
    }

    /// The walker's position and counters (for the fast paths' cross-checks).
    #[cfg(any(test, debug_assertions))]
    fn state(&self) -> (usize, u32, u32, u64, u64) {
        (
            self.f.cur.index(),
            self.left,
            self.next_id,
            self.next_offset,
            self.next_first_record,
        )
    }

    /// Counts a consumed block ending at manifest offset `end` with `record_count` entries.
    #[inline(always)]
    fn advance(&mut self, end: u64, record_count: u64) {
        self.left -= 1;
        self.next_id = self.next_id.saturating_add(1);
        self.next_offset = end;
        self.next_first_record = self.next_first_record.saturating_add(record_count);
    }

    #[inline(always)]
    fn next_block(&mut self, check: bool) -> Result<Block<'a>> {
        let at = self.f.cur.position();
        let offset = self.f.long()?;
        if offset != self.next_offset {
            return Err(Error::new(ErrorKind::Mismatch, at));
        }
        let at = self.f.cur.position();
        let length = self.f.long()?;
        if length == 0 {
            return Err(Error::new(ErrorKind::InvalidLength, at));
        }
        let end = offset
            .checked_add(length)
            .filter(|&e| e <= MAX_LONG)
            .ok_or(Error::new(ErrorKind::ArithmeticOverflow, at))?;
        let at = self.f.cur.position();
        let record_count = self.f.long()?;
        let room = self.entry_limit.saturating_sub(self.next_first_record);
        if record_count == 0 || record_count > room {
            return Err(Error::new(ErrorKind::InvalidLength, at));
        }
        let frames = [self.frame()?, self.frame()?, self.frame()?];
        let block = Block {
            id: self.next_id,
            offset,
            length,
            first_record: self.next_first_record,
            record_count,
            layout: self.f.layout,
            partition_count: self.partition_count,
            frames,
        };
        if check {
            // Framing of every payload (counts, lengths, envelopes), no delta decoding.
            block.try_partition_ids()?;
            block.try_row_ids()?;
            block.try_buckets()?;
        }
        self.advance(end, record_count);
        Ok(block)
    }
}

/// The blocks of a validated sidecar in file order; see [`Sidecar::blocks`].
#[derive(Clone, Debug)]
pub struct Blocks<'a> {
    walker: BlockWalker<'a>,
}

impl<'a> Iterator for Blocks<'a> {
    type Item = Block<'a>;

    #[inline]
    fn next(&mut self) -> Option<Block<'a>> {
        if self.walker.left == 0 {
            return None;
        }
        match self.walker.next_block(false) {
            Ok(b) => Some(b),
            Err(_) => {
                // Unreachable for a validated view; end the walk rather than panic.
                self.walker.left = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.walker.left).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

impl core::iter::FusedIterator for Blocks<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A xorshift64 generator from `state` (non-zero).
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// The branch-free short-varint path agrees with the checked decoder on every input
    /// shape: value, bytes consumed, and errors (which it leaves to the checked path).
    #[test]
    fn short_varint_fast_path_matches_the_checked_decoder() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        for _ in 0..200_000 {
            let mut buf = [0u8; 12];
            let r = next();
            for (i, b) in buf.iter_mut().enumerate() {
                let x = (next() >> 8) as u8;
                // Mostly continuation bytes for the first (r % 10) bytes, then a stop byte.
                *b = if (i as u64) < r % 10 {
                    x | 0x80
                } else {
                    x & 0x7f
                };
                if r.is_multiple_of(7) && (i as u64) == r % 10 {
                    *b = 0; // a non-canonical ending now and then
                }
            }
            let len = 1 + (r >> 40) as usize % 12;
            let bytes = &buf[..len];
            let mut fast = Fields {
                cur: Cursor::new(bytes),
                layout: Layout::Compact,
            };
            let mut slow = Cursor::new(bytes);
            let a = fast.long();
            let b = slow.uvarint(VarintFormat::SIDECAR);
            assert_eq!(a, b, "{bytes:02x?}");
            if a.is_ok() {
                assert_eq!(fast.cur.index(), slow.index());
            }
        }
    }

    /// A block (either layout) or payload written field by field into a stack buffer.
    struct RawBlock {
        buf: [u8; 1024],
        len: usize,
    }

    impl RawBlock {
        fn new() -> Self {
            RawBlock {
                buf: [0; 1024],
                len: 0,
            }
        }

        fn put(&mut self, bytes: &[u8]) {
            let room = self.buf.len() - self.len;
            let n = bytes.len().min(room);
            self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
            self.len += n;
        }
    }

    /// Picks from `options` with `next`: the first option (a valid value) 7 times in 8 when
    /// `favour`, any option otherwise.
    fn pick_from(next: &mut impl FnMut() -> u64, favour: bool, options: &[u64]) -> u64 {
        let r = next();
        if favour && !r.is_multiple_of(8) {
            options[0]
        } else {
            options[(r >> 3) as usize % options.len()]
        }
    }

    /// A walker with one block left in `bytes`, its next offset, first record, entry limit
    /// and partition count as given.
    fn walker_at(bytes: &[u8], layout: Layout, at: (u64, u64, u64, u32)) -> BlockWalker<'_> {
        let (next_offset, next_first_record, entry_limit, partition_count) = at;
        BlockWalker {
            f: Fields {
                cur: Cursor::new(bytes),
                layout,
            },
            left: 1,
            next_id: 7,
            next_first_record,
            next_offset,
            entry_limit,
            partition_count,
        }
    }

    /// Runs a fast path and `next_block(true)` on copies of `walker` and asserts the walker
    /// states: the checked path's when the fast path accepts (which the checked path must
    /// too), the untouched `walker` when it declines. Returns both outcomes.
    fn fast_and_checked<'a>(
        walker: &BlockWalker<'a>,
        fast_path: impl FnOnce(&mut BlockWalker<'a>) -> bool,
    ) -> (bool, Result<Block<'a>>) {
        let (mut fast, mut slow) = (walker.clone(), walker.clone());
        let took = fast_path(&mut fast);
        let exact = slow.next_block(true);
        let bytes = walker.f.cur.rest();
        if took {
            assert!(exact.is_ok(), "{bytes:02x?}: {exact:?}");
            assert_eq!(fast.state(), slow.state(), "{bytes:02x?}");
        } else {
            assert_eq!(fast.state(), walker.state(), "{bytes:02x?}");
        }
        (took, exact)
    }

    /// `fixed_block_fast` accepts exactly the blocks `next_block(true)` accepts, and leaves
    /// the walker in the same state; it consumes nothing when it declines. Blocks are drawn
    /// around every bound the checks have (offsets, lengths, counts, envelopes, frame
    /// lengths, truncation).
    #[test]
    fn fixed_block_fast_path_accepts_exactly_what_next_block_accepts() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let (mut accepted, mut declined) = (0u32, 0u32);
        for _ in 0..300_000 {
            // Half the blocks favour each field's first option (a valid value), so that both
            // outcomes are common.
            let favour = next().is_multiple_of(2);
            let mut pick = |options: &[u64]| pick_from(&mut next, favour, options);
            let next_offset = pick(&[0, 100, MAX_LONG - 60, MAX_LONG]);
            let first_record = pick(&[0, 2, 5]);
            let entry_limit = pick(&[5, 100, MAX_LONG, u64::MAX]);
            let partition_count = pick(&[4, 0, 1, 1000]) as u32;
            let room = entry_limit.saturating_sub(first_record);
            let offset = pick(&[
                next_offset,
                next_offset,
                next_offset,
                next_offset + 1,
                1 << 63,
            ]);
            let length = pick(&[
                1,
                50,
                0,
                MAX_LONG - next_offset,
                MAX_LONG - next_offset + 1,
                1 << 63,
                u64::MAX,
            ]);
            let records = pick(&[1, 3, room, room.wrapping_add(1), 0, 1 << 63]);
            let mut b = RawBlock::new();
            b.put(&offset.to_be_bytes());
            b.put(&length.to_be_bytes());
            b.put(&records.to_be_bytes());
            for dim in 0..3 {
                let encoding = pick(&[1, 0, 2]) as u8;
                b.put(&[encoding]);
                if encoding == 0 {
                    continue;
                }
                let mut payload = RawBlock::new();
                let rc = records.min(1000);
                let count = pick(&[1, 2, 3, rc, rc + 1, 0, u32::MAX as u64, 1 << 31]) as u32;
                payload.put(&count.to_be_bytes());
                let deltas = if dim == 1 {
                    let min = pick(&[0, 5, MAX_LONG, 1 << 63]);
                    let edge = MAX_LONG - min.min(MAX_LONG);
                    let span = pick(&[0, 10, MAX_LONG, edge, edge + 1, 1 << 63, u64::MAX]);
                    payload.put(&min.to_be_bytes());
                    payload.put(&span.to_be_bytes());
                    let interior = u64::from(count).saturating_sub(1).saturating_mul(2);
                    pick(&[interior, interior + 1, interior.saturating_sub(1), 0, 1])
                } else {
                    pick(&[u64::from(count), u64::from(count) + 2, 0, 1])
                };
                payload.put(&[1u8; 64][..deltas.min(64) as usize]);
                let frame_len = pick(&[
                    payload.len as u64,
                    payload.len as u64,
                    payload.len as u64 + 1,
                    payload.len as u64 - 1,
                    u32::MAX as u64,
                ]) as u32;
                b.put(&frame_len.to_be_bytes());
                b.put(&payload.buf[..payload.len]);
            }
            let end = if next().is_multiple_of(4) {
                (next() % (b.len as u64 + 1)) as usize
            } else {
                b.len
            };
            let walker = walker_at(
                &b.buf[..end],
                Layout::Fixed,
                (next_offset, first_record, entry_limit, partition_count),
            );
            let (took, exact) = fast_and_checked(&walker, BlockWalker::fixed_block_fast);
            assert_eq!(took, exact.is_ok(), "{:02x?}: {exact:?}", &b.buf[..end]);
            if took {
                accepted += 1;
            } else {
                declined += 1;
            }
        }
        // The draw reaches both sides often.
        assert!(
            accepted > 10_000 && declined > 10_000,
            "{accepted} / {declined}"
        );
    }

    /// LEB128 of `v` (shortest form, or with one redundant `0x80 .. 0x00` byte when
    /// `padded`); returns the length written.
    fn put_uvarint(b: &mut RawBlock, v: u64, padded: bool) -> usize {
        use crate::codec::varint::{encode_u64, MAX_VARINT_LEN};
        let mut buf = [0u8; MAX_VARINT_LEN + 1];
        let mut len = encode_u64(v, (&mut buf[..MAX_VARINT_LEN]).try_into().unwrap());
        if padded {
            buf[len - 1] |= 0x80;
            len += 1; // the zero byte after it
        }
        b.put(&buf[..len]);
        len
    }

    /// `compact_block_fast` accepts only blocks `next_block(true)` accepts, leaving the walker
    /// in the same state (and consumes nothing when it declines); it accepts every such block
    /// whose varints are at most 8 bytes long with 8 bytes readable after the block. Blocks
    /// are drawn around every bound of the checks, with long, non-canonical and truncated
    /// varints and truncated blocks.
    #[test]
    fn compact_block_fast_path_accepts_what_next_block_accepts() {
        let mut next = xorshift(0x6a09_e667_f3bc_c909u64);
        let (mut accepted, mut declined, mut left_to_checked) = (0u32, 0u32, 0u32);
        for _ in 0..300_000 {
            let favour = next().is_multiple_of(2);
            let mut pick = |options: &[u64]| pick_from(&mut next, favour, options);
            let next_offset = pick(&[0, 100, 1 << 56, MAX_LONG - 60, MAX_LONG]);
            let first_record = pick(&[0, 2, 5]);
            let entry_limit = pick(&[5, 100, MAX_LONG, u64::MAX]);
            let partition_count = pick(&[4, 0, 1, 1000]) as u32;
            let room = entry_limit.saturating_sub(first_record);
            // Any varint longer than 8 bytes (or with a redundant byte) may be left to the
            // checked path.
            let mut long = false;
            let mut varint = |b: &mut RawBlock, v: u64, pick: &mut dyn FnMut(&[u64]) -> u64| {
                let padded = pick(&[0, 0, 0, 1]) == 1;
                long |= put_uvarint(b, v, padded) > 8 || padded;
            };
            let mut b = RawBlock::new();
            let offset = pick(&[next_offset, next_offset, next_offset + 1, 1 << 63]);
            varint(&mut b, offset, &mut pick);
            let length = pick(&[
                1,
                300,
                0,
                MAX_LONG - next_offset,
                MAX_LONG - next_offset + 1,
                1 << 63,
            ]);
            varint(&mut b, length, &mut pick);
            let records = pick(&[1, 3, 200, room, room.wrapping_add(1), 0, 1 << 63]);
            varint(&mut b, records, &mut pick);
            let rc = records.min(1000);
            for dim in 0..3 {
                let encoding = pick(&[1, 0, 2]) as u8;
                b.put(&[encoding]);
                if encoding == 0 {
                    continue;
                }
                let mut payload = RawBlock::new();
                // A stream of `n` values: one-byte values, or two-byte ones now and then.
                let stream = |payload: &mut RawBlock, n: u64, wide: bool| {
                    for _ in 0..n.min(40) {
                        payload.put(if wide { &[0x81, 0x01] } else { &[0x05] });
                    }
                };
                match dim {
                    1 => {
                        let min = pick(&[0, 5, MAX_LONG, 1 << 63]);
                        let max = pick(&[min, min + 10, MAX_LONG, min.wrapping_sub(1), 1 << 63]);
                        payload.put(&min.to_be_bytes());
                        payload.put(&max.to_be_bytes());
                        let intervals = pick(&[1, 2, rc, rc + 1]);
                        let interior = 2 * intervals.saturating_sub(1);
                        let count = pick(&[interior, interior + 1, 0, 2, 1 << 31]);
                        varint(&mut payload, count, &mut pick);
                        let values = pick(&[interior, interior + 1, interior.saturating_sub(1)]);
                        stream(&mut payload, values, pick(&[0, 1]) == 1);
                    }
                    _ => {
                        let cap = if dim == 0 {
                            rc.min(u64::from(partition_count))
                        } else {
                            rc
                        };
                        let count = pick(&[1, 2, cap, cap + 1, 0, 1 << 31]);
                        varint(&mut payload, count, &mut pick);
                        let wide = pick(&[0, 1]) == 1;
                        stream(
                            &mut payload,
                            pick(&[count, count + 1, count.saturating_sub(1)]),
                            wide,
                        );
                        if dim == 2 {
                            let totals = pick(&[count, count + 1, 0]);
                            varint(&mut payload, totals, &mut pick);
                            stream(
                                &mut payload,
                                pick(&[totals, totals.saturating_sub(1)]),
                                wide,
                            );
                        }
                    }
                }
                let frame_len = pick(&[
                    payload.len as u64,
                    payload.len as u64,
                    payload.len as u64 + 1,
                    payload.len as u64 - 1,
                    1 << 31,
                ]);
                varint(&mut b, frame_len, &mut pick);
                b.put(&payload.buf[..payload.len]);
            }
            let whole = b.len;
            // Eight readable bytes after the block, or none, or a truncated block.
            let end = match next() % 4 {
                0 => (next() % (whole as u64 + 1)) as usize,
                1 => whole,
                _ => {
                    b.put(&[0x7f; 8]);
                    b.len
                }
            };
            let walker = walker_at(
                &b.buf[..end],
                Layout::Compact,
                (next_offset, first_record, entry_limit, partition_count),
            );
            let (took, exact) = fast_and_checked(&walker, BlockWalker::compact_block_fast);
            if took {
                accepted += 1;
            } else {
                declined += 1;
                if exact.is_ok() {
                    assert!(long || end < whole + 8, "{:02x?}", &b.buf[..end]);
                    left_to_checked += 1;
                }
            }
            // The draw never runs out of room in the stack buffers.
            assert!(whole + 8 < b.buf.len());
        }
        assert!(
            accepted > 10_000 && declined > 10_000 && left_to_checked > 1_000,
            "{accepted} / {declined} / {left_to_checked}"
        );
    }
}
