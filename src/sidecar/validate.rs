//! Validation of a sidecar, once, in place: `split` (layout, body, trailer), `structure`
//! (every container field and bound, the dictionary, the block tiling through the block
//! walker, payload framing), the duplicate-tuple checks (`check_unique_*`), and the checksum:
//! the CRC-32 first for the compact layout, the SHA-256 trailing the walk for the fixed one,
//! or on a second thread ([`Sidecar::parse_parallel`]).
//!
//! `FixedValidation`, a job for the `checksum::WithSha256` trait, is the one place where format
//! code runs under an ISA context: `codec::checksum` picks the SHA-256 engine (SHA-NI on x86_64
//! CPUs that have it, `sha2` otherwise) and runs the job with it, so the inlined walk is
//! compiled with that engine's target features. This module imports nothing from `arch`, holds
//! no ISA code of its own, and allocates only in the duplicate check of dictionaries of more
//! than 512 tuples (feature `alloc`). It builds the view; the accessors are in the parent.

use super::block::{Block, BlockWalker};
use super::dictionary::check_partition_tuple;
use super::layout::{
    Fields, Layout, AVRO_MAGIC, COMPACT_MIN_LEN, COMPACT_TRAILER_LEN, FIXED_TRAILER_LEN,
    FORMAT_VERSION, MAX_LONG, MIN_AVRO_HEADER_LEN, MIN_PARTITION_LEN,
};
use super::select::{Query, SelectedBlock};
use super::{ManifestFacts, Sidecar, SidecarHead};
use crate::codec::checksum;
use crate::codec::varint::VarintFormat;
use crate::cursor::Cursor;
use crate::error::{off, Error, ErrorKind, Result};

/// Told the body position after each block a validation pass has checked and, when
/// [`BLOCKS`](Walked::BLOCKS) is set, handed each checked block (the fused selection).
pub(super) trait Walked {
    /// Whether [`block`](Walked::block) wants the blocks (a constant: the walk for a plain
    /// validation builds none).
    const BLOCKS: bool = false;

    fn walked(&mut self, pos: usize);

    /// A block that passed every check of its own (the walk's later checks may still fail).
    #[inline(always)]
    fn block(&mut self, _block: &Block<'_>) -> Result<()> {
        Ok(())
    }
}

/// The fused selection's hook: the query decides on each block as soon as it is checked.
struct Selecting<'q, F> {
    query: &'q Query<'q>,
    keep: F,
}

impl<F: FnMut(SelectedBlock)> Walked for Selecting<'_, F> {
    const BLOCKS: bool = true;

    #[inline(always)]
    fn walked(&mut self, _: usize) {}

    #[inline(always)]
    fn block(&mut self, block: &Block<'_>) -> Result<()> {
        if self.query.keeps(block)? {
            (self.keep)(SelectedBlock::of(block));
        }
        Ok(())
    }
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

/// `found`, unless the caller (or the stored header) knew a different value: then
/// [`ErrorKind::Mismatch`] at `at`.
fn agree(known: Option<u64>, found: u64, at: u64) -> Result<u64> {
    match known {
        Some(known) if known != found => Err(Error::new(ErrorKind::Mismatch, at)),
        _ => Ok(found),
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

impl<'a> Sidecar<'a> {
    /// [`parse_with`](Self::parse_with) with the checksum computed on a second
    /// thread while the structure is walked on the caller's (for large sidecars the walk then
    /// costs no wall time next to the hash). Results and error precedence are those of
    /// `parse_with`: a checksum mismatch wins over any structural error.
    ///
    /// ```
    /// use lakecore::sidecar::{ManifestFacts, Sidecar, SidecarOptions};
    /// use lakecore::ErrorKind;
    /// # let hex = include_str!("../../tests/data/golden/compact-v1.hex");
    /// # let bytes: Vec<u8> = (0..hex.trim().len()).step_by(2)
    /// #     .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    /// let options = SidecarOptions { facts: Some(ManifestFacts { length: 457, entries: 7 }) };
    /// let view = Sidecar::parse_parallel(&bytes, &options)?;
    /// assert_eq!(view.block_count(), 3);
    /// let mut bad = bytes.clone();
    /// bad[100] ^= 1;
    /// let e = Sidecar::parse_parallel(&bad, &options).unwrap_err();
    /// assert_eq!((e.kind, e.offset), (ErrorKind::ChecksumMismatch, bytes.len() as u64 - 4));
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    #[cfg(feature = "std")]
    pub fn parse_parallel(bytes: &'a [u8], options: &super::SidecarOptions) -> Result<Self> {
        let (layout, body, stored) = Self::split(bytes)?;
        std::thread::scope(|scope| {
            let sum = scope.spawn(|| checksum_ok(layout, body, stored));
            let structure = Self::structure(bytes, layout, body, options.facts, &mut ());
            if !sum.join().unwrap_or(false) {
                return Err(checksum_mismatch(body));
            }
            structure
        })
    }

    /// Opens `bytes` for validation fused with selection: checks magic, layout, size and
    /// the checksum (whole, first, for both layouts), then everything before the blocks
    /// (version, stored facts, Avro header, dictionary framing, block count). The partition
    /// dictionary is then readable (to build a [`Query`]'s partition mask) and
    /// [`SidecarHead::select_into`] walks the blocks once, checking and selecting each.
    ///
    /// Use this when a sidecar is selected once (a scan planner); keep the view of
    /// [`parse_with`](Self::parse_with) for selecting many times.
    pub fn parse_head(bytes: &'a [u8], options: &super::SidecarOptions) -> Result<SidecarHead<'a>> {
        let (layout, body, stored) = Self::split(bytes)?;
        if !checksum_ok(layout, body, stored) {
            return Err(checksum_mismatch(body));
        }
        Self::head(bytes, layout, body, options.facts)
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

    /// The checks of [`Sidecar::parse_with`]: with `facts` known, or (`None`) derived as
    /// [`Sidecar::parse`] does.
    pub(super) fn validate_inner(bytes: &'a [u8], facts: Option<ManifestFacts>) -> Result<Self> {
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
        Self::head(bytes, layout, body, facts)?.walk(walked)
    }

    /// Everything before the blocks: version, the fixed layout's stored facts, the Avro
    /// header, the partition dictionary's framing and the block count.
    #[inline(always)]
    fn head(
        bytes: &'a [u8],
        layout: Layout,
        body: &'a [u8],
        facts: Option<ManifestFacts>,
    ) -> Result<SidecarHead<'a>> {
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
            manifest_length = Some(agree(manifest_length, f.cur.len_i64_be()?, at)?);
            let at = f.cur.position();
            entry_count = Some(agree(entry_count, f.cur.len_i64_be()?, at)?);
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
        let walker = BlockWalker::new(
            f,
            block_count,
            header_len,
            entry_count.unwrap_or(MAX_LONG),
            partition_count,
        );
        let blocks = body.get(blocks_index..).unwrap_or_default();
        Ok(SidecarHead {
            // Length and count are provisional (the walk settles them); nothing reads them
            // before `walk` returns the view.
            sidecar: Sidecar {
                bytes,
                layout,
                manifest_length: manifest_length.unwrap_or(0),
                entry_count: entry_count.unwrap_or(0),
                header,
                dictionary,
                dictionary_at,
                partition_count,
                uniform_stride: stride.flatten(),
                blocks,
                blocks_at,
                block_count,
            },
            walker,
            manifest_length,
            entry_count,
            end_at: off(body_len),
        })
    }
}

impl<'a> SidecarHead<'a> {
    /// The rest of the checks: every block (told to `walked`), the tiling and record count
    /// against the facts, and the dictionary's unique tuples. Returns the validated view.
    #[inline(always)]
    pub(super) fn walk(self, walked: &mut impl Walked) -> Result<Sidecar<'a>> {
        let SidecarHead {
            mut sidecar,
            mut walker,
            manifest_length,
            entry_count,
            end_at,
        } = self;
        // One loop per layout: with the layout a constant in each, the inlined field readers
        // and payload frames lose their per-field layout branches.
        match sidecar.layout {
            Layout::Fixed => walker.validate_all(Layout::Fixed, walked)?,
            Layout::Compact => walker.validate_all(Layout::Compact, walked)?,
        }
        let (tiled_end, records) = walker.finish()?;
        sidecar.manifest_length = agree(manifest_length, tiled_end, end_at)?;
        sidecar.entry_count = agree(entry_count, records, end_at)?;
        sidecar.check_unique_partitions()?;
        Ok(sidecar)
    }

    /// Validates the blocks and selects them in the same walk: every block `query` keeps is
    /// handed to `keep` (in file order) as soon as it is checked, and the validated view is
    /// returned once every check has passed.
    ///
    /// The checksum was checked whole by [`Sidecar::parse_head`], before any block reaches
    /// `keep`. A later block, the tiling, the record count or the dictionary can still fail:
    /// on `Err`, the blocks `keep` was given are not a selection and must be dropped (the
    /// error is the first one met, which may differ from [`Sidecar::parse_with`]'s when a
    /// delta stream the query decodes is malformed before a structural error later on).
    ///
    /// Allocation-free; [`select_vec`](Self::select_vec) collects into a `Vec` instead.
    ///
    /// ```
    /// use lakecore::sidecar::{Query, Sidecar, SidecarOptions};
    /// # let hex = include_str!("../../tests/data/golden/compact-v1.hex");
    /// # let bytes: Vec<u8> = (0..hex.trim().len()).step_by(2)
    /// #     .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    /// let head = Sidecar::parse_head(&bytes, &SidecarOptions::default())?;
    /// let mut mask = vec![false; head.partition_count() as usize];
    /// let mask = head.partition_mask(&mut mask, |tuple| tuple.len() > 8)?;
    /// let query = Query::new().partitions(mask);
    /// let mut spans = [(0u64, 0u64); 8];
    /// let mut n = 0;
    /// let view = head.select_into(&query, |b| {
    ///     spans[n] = b.span();
    ///     n += 1;
    /// })?;
    /// // The same blocks as validating first and selecting after.
    /// let two_pass: Vec<_> = view.select(&query).map(|b| b.map(|b| b.span())).collect::<Result<_, _>>()?;
    /// assert_eq!(&spans[..n], &two_pass[..]);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn select_into(
        self,
        query: &Query<'_>,
        keep: impl FnMut(SelectedBlock),
    ) -> Result<Sidecar<'a>> {
        self.walk(&mut Selecting { query, keep })
    }

    /// [`select_into`](Self::select_into) collected: the validated view and the selected
    /// blocks, or the first error (and no blocks).
    #[cfg(feature = "alloc")]
    pub fn select_vec(
        self,
        query: &Query<'_>,
    ) -> Result<(Sidecar<'a>, alloc::vec::Vec<SelectedBlock>)> {
        let mut out = alloc::vec::Vec::new();
        let view = self.select_into(query, |b| out.push(b))?;
        Ok((view, out))
    }

    /// [`select_vec`](Self::select_vec) with the filters in their owned forms, the one way
    /// a planner, the command line and the Python package build a query: `rows` (sorted and
    /// merged here), a predicate over the dictionary's partition tuples (called once per
    /// tuple) and a predicate over `(bucket, totalBuckets)` pairs ([`bucket_in`](super::bucket_in) for a
    /// `B[/T]` list). `None` leaves a dimension unfiltered.
    ///
    /// ```
    /// use lakecore::sidecar::{bucket_in, RowRange, Sidecar, SidecarOptions};
    /// # let hex = include_str!("../../tests/data/golden/compact-v1.hex");
    /// # let bytes: Vec<u8> = (0..hex.trim().len()).step_by(2)
    /// #     .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    /// let wanted = [(1, None)];
    /// let head = Sidecar::parse_head(&bytes, &SidecarOptions::default())?;
    /// let mut rows = [RowRange::new(20, 20)];
    /// let (_, blocks) = head.select_filtered(Some(&mut rows), None, Some(&|b, t| bucket_in(&wanted, b, t)))?;
    /// assert_eq!(blocks.iter().map(|b| b.id).collect::<Vec<_>>(), [0]);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    #[cfg(feature = "alloc")]
    pub fn select_filtered(
        self,
        rows: Option<&mut [crate::select::RowRange]>,
        partitions: Option<&mut dyn FnMut(&'a [u8]) -> bool>,
        buckets: Option<&dyn Fn(i32, i32) -> bool>,
    ) -> Result<(Sidecar<'a>, alloc::vec::Vec<SelectedBlock>)> {
        let mask = partitions.map(|p| self.partition_mask_vec(p));
        let mut query = Query::new();
        if let Some(rows) = rows {
            query = query.rows(crate::select::RowRanges::normalize(rows));
        }
        if let Some(mask) = &mask {
            query = query.partitions(super::PartitionMask::new(mask));
        }
        if let Some(buckets) = buckets {
            query = query.buckets(buckets);
        }
        self.select_vec(&query)
    }

    /// Validates the blocks without selecting: the view [`Sidecar::parse_with`] returns.
    pub fn finish(self) -> Result<Sidecar<'a>> {
        self.walk(&mut ())
    }
}

/// The hash of a partition tuple for the duplicate checks, eight bytes a step (a tuple is a
/// `BinaryRow` of 8-byte slots), finished with a full avalanche so that both the low bits
/// (a table index or a filter bit) and the high bits (a table tag) depend on every byte.
#[inline]
fn tuple_hash(tuple: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let (words, tail) = tuple.as_chunks::<8>();
    // The multiplies are off the dependency chain (a rotate and a xor a word).
    let mut h = off(tuple.len());
    for w in words {
        h = h.rotate_left(19) ^ u64::from_le_bytes(*w).wrapping_mul(K);
    }
    // The tail: the tuple's last eight bytes in one load (overlapping the last word; a
    // copy into a buffer cost a store-forwarding stall a tuple), or for a short tuple the
    // bytes one by one.
    let last = match tuple.last_chunk::<8>() {
        Some(end) if !tail.is_empty() => u64::from_le_bytes(*end),
        Some(_) => 0,
        None => tail
            .iter()
            .rev()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b)),
    };
    h = h.rotate_left(19) ^ last;
    // MurmurHash3's 64-bit finaliser.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// `bytes[start..start + len]`, if in bounds.
#[inline]
fn start_len(bytes: &[u8], start: u32, len: u32) -> Option<&[u8]> {
    let start = usize::try_from(start).ok()?;
    bytes.get(start..start.checked_add(usize::try_from(len).ok()?)?)
}

/// A slot of the exact duplicate table: the tuple's hash tag (`0` = empty) and where its
/// bytes are in the dictionary (12 bytes).
#[derive(Clone, Copy, Default)]
struct Slot {
    tag: u32,
    len: u32,
    start: u32,
}

/// Dictionaries up to this size are checked in a table on the stack (twice as many slots,
/// 12 KiB); larger ones in one on the heap (feature `alloc`) or by the filter.
const STACK_TABLE_TUPLES: u32 = 512;

impl<'a> Sidecar<'a> {
    /// No tuple appears twice: [`ErrorKind::Duplicate`] at the lowest-indexed tuple equal to
    /// an earlier one. Allocation-free up to 512 tuples, and without feature `alloc`.
    ///
    /// The check is an open-addressing table of the tuples' hashes, at least twice as many
    /// slots as tuples; only tuples whose hash tags agree are compared byte for byte, so it
    /// is linear. Up to 512 tuples (every real sidecar seen so far) the table is on the
    /// stack, in three sizes (16, 128 and 1,024 slots); above, with feature `alloc`, on the
    /// heap ([`ErrorKind::LimitExceeded`] at the dictionary when it cannot be had).
    ///
    /// Without `alloc`, larger dictionaries go to a 16 Kibit filter of tuple hashes that
    /// sends possible repeats to an exact comparison with the earlier tuples
    /// ([`check_unique_filter`](Self::check_unique_filter)): quadratic once the filter fills
    /// (4,096 tuples took 4.3 ms that way, against 0.3 ms for 5,000 sorted, when the filter
    /// still served 513 to 4,096 tuples with `alloc`). A dictionary of 4 GiB or more, whose
    /// tuples the table cannot address, is sorted instead
    /// ([`check_unique_sorted`](Self::check_unique_sorted)).
    fn check_unique_partitions(&self) -> Result<()> {
        let n = self.partition_count;
        // Tuple spans are kept as 32-bit offsets into the dictionary.
        let small = u32::try_from(self.dictionary.len()).is_ok();
        match n {
            0..=8 if small => return self.check_unique_in::<16>(),
            9..=64 if small => return self.check_unique_in::<128>(),
            65..=STACK_TABLE_TUPLES if small => return self.check_unique_in::<1024>(),
            _ => {}
        }
        #[cfg(feature = "alloc")]
        return match small {
            true => self.check_unique_on_heap(),
            false => self.check_unique_sorted(),
        };
        #[cfg(not(feature = "alloc"))]
        self.check_unique_filter()
    }

    /// The table check with a table on the heap of the next power of two at or above twice
    /// the tuple count (12 bytes a slot).
    #[cfg(feature = "alloc")]
    fn check_unique_on_heap(&self) -> Result<()> {
        let limit = || Error::new(ErrorKind::LimitExceeded, self.dictionary_at);
        let slots = usize::try_from(self.partition_count)
            .ok()
            .and_then(|n| n.checked_mul(2))
            .and_then(usize::checked_next_power_of_two)
            .ok_or_else(limit)?;
        let mut table: alloc::vec::Vec<Slot> = alloc::vec::Vec::new();
        table.try_reserve_exact(slots).map_err(|_| limit())?;
        table.resize(slots, Slot::default());
        self.check_unique_table(&mut table)
    }

    /// The table check in a stack table of `N` slots (its own frame, so that the larger
    /// tables are not reserved by every caller).
    #[inline(never)]
    fn check_unique_in<const N: usize>(&self) -> Result<()> {
        self.check_unique_table(&mut [Slot::default(); N])
    }

    /// The table check over `slots` (a power of two, at least twice the tuple count).
    fn check_unique_table(&self, slots: &mut [Slot]) -> Result<()> {
        let mask = slots.len().wrapping_sub(1);
        let base = self.dictionary.as_ptr() as usize;
        let too_large = |at| Error::new(ErrorKind::LimitExceeded, at);
        for (at, tuple) in self.partitions_with_offsets() {
            let h = tuple_hash(tuple);
            // The tag is never 0 (the empty slot's).
            let tag = ((h >> 32) as u32) | 1;
            let start = u32::try_from((tuple.as_ptr() as usize).wrapping_sub(base))
                .map_err(|_| too_large(at))?;
            let len = u32::try_from(tuple.len()).map_err(|_| too_large(at))?;
            let mut i = (h as usize) & mask;
            // At most one pass over the table: a full table (more tuples than slots, which
            // no caller passes) is an error, not an endless probe.
            let mut placed = false;
            for _ in 0..slots.len() {
                let Some(slot) = slots.get_mut(i) else {
                    break;
                };
                if slot.tag == 0 {
                    *slot = Slot { tag, len, start };
                    placed = true;
                    break;
                }
                if slot.tag == tag && slot.len == len {
                    let earlier = start_len(self.dictionary, slot.start, slot.len);
                    if earlier == Some(tuple) {
                        return Err(Error::new(ErrorKind::Duplicate, at));
                    }
                }
                i = (i + 1) & mask;
            }
            if !placed {
                return Err(too_large(at));
            }
        }
        Ok(())
    }

    /// The allocation-free check for dictionaries above the stack table's size: a 16 Kibit
    /// filter of tuple hashes sends possible repeats to an exact comparison with the earlier
    /// tuples (quadratic once the filter fills).
    #[cfg(any(not(feature = "alloc"), test))]
    fn check_unique_filter(&self) -> Result<()> {
        const WORDS: usize = 256;
        let mut seen = [0u64; WORDS];
        for (index, (at, tuple)) in self.partitions_with_offsets().enumerate() {
            let h = tuple_hash(tuple);
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

    /// The duplicate check for dictionaries the table cannot address (4 GiB or more): sorts
    /// `(tuple, index)` (32 bytes a tuple, reserved with `try_reserve_exact`:
    /// [`ErrorKind::LimitExceeded`] at the dictionary when that fails) and compares
    /// neighbours, in O(n log n). Reports the same error as the table: [`ErrorKind::Duplicate`]
    /// at the lowest-indexed tuple equal to an earlier one.
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
}

#[cfg(all(test, feature = "std"))]
mod tests {
    extern crate std;
    use super::*;
    use crate::sidecar::SidecarOptions;
    use alloc::vec::Vec;
    use lakecore_testkit::rng::Rng;

    /// Random dictionaries (up to 600 tuples, so every size class of the table is used,
    /// the heap's too) with random repeats written into them: the table (sized as the
    /// dispatch sizes it, and larger, on the stack and on the heap), the allocation-free
    /// filter and the sort all give what a naive scan for the first tuple equal to an
    /// earlier one gives.
    #[test]
    fn duplicate_checks_agree_with_a_naive_scan() {
        let mut rng = Rng::new(0x0d0b);
        let mut repeated = 0;
        for case in 0..300u32 {
            let n = 1 + rng.next_u64() % 600;
            // One tuple length per case (repeats are written by copying bytes).
            let words = 1 + rng.next_u64() % 3;
            let tuples: Vec<Vec<u8>> = (0..n)
                .map(|i| {
                    let mut t = lakecore_testkit::sidecar::long_tuple(i);
                    for _ in 1..words {
                        t.extend_from_slice(&rng.next_u64().to_le_bytes());
                    }
                    t
                })
                .collect();
            let bytes = lakecore_testkit::sidecar::dictionary_sidecar(case % 2 == 1, &tuples);
            let options = SidecarOptions {
                facts: Some(crate::sidecar::ManifestFacts {
                    length: 40,
                    entries: n,
                }),
            };
            let valid = Sidecar::parse_with(&bytes, &options).unwrap();
            // Where each tuple's bytes are in `bytes`, and its reported offset.
            let spans: Vec<(usize, u64)> = valid
                .partitions_with_offsets()
                .map(|(at, t)| (t.as_ptr() as usize - bytes.as_ptr() as usize, at))
                .collect();
            let len = tuples[0].len();
            let mut copy = bytes.clone();
            let mut now = tuples.clone();
            for _ in 0..rng.next_u64() % 4 {
                let (i, j) = (rng.next_u64() % n, rng.next_u64() % n);
                let (src, dst) = (spans[i as usize].0, spans[j as usize].0);
                let t = copy[src..src + len].to_vec();
                copy[dst..dst + len].copy_from_slice(&t);
                now[j as usize] = now[i as usize].clone();
            }
            let first_repeat = (1..now.len()).find(|&j| now[..j].iter().any(|t| *t == now[j]));
            let want = first_repeat.map(|j| (ErrorKind::Duplicate, spans[j].1));
            repeated += usize::from(want.is_some());
            let dict_start = valid.dictionary.as_ptr() as usize - bytes.as_ptr() as usize;
            let mut view = valid;
            view.dictionary = &copy[dict_start..dict_start + valid.dictionary.len()];
            let got = |r: Result<()>| r.err().map(|e| (e.kind, e.offset));
            let slots = (2 * n as usize).next_power_of_two();
            assert_eq!(got(view.check_unique_partitions()), want, "case {case}");
            assert_eq!(
                got(view.check_unique_table(&mut alloc::vec![Slot::default(); slots])),
                want,
                "table, case {case}"
            );
            assert_eq!(
                got(view.check_unique_table(&mut alloc::vec![Slot::default(); 4 * slots])),
                want,
                "large table, case {case}"
            );
            assert_eq!(got(view.check_unique_filter()), want, "filter, case {case}");
            assert_eq!(got(view.check_unique_on_heap()), want, "heap, case {case}");
            if n > 4 && want.is_none() {
                // A table with fewer slots than tuples: an error, not an endless probe.
                let e = view
                    .check_unique_table(&mut [Slot::default(); 4])
                    .unwrap_err();
                assert_eq!(e.kind, ErrorKind::LimitExceeded, "case {case}");
            }
            assert_eq!(got(view.check_unique_sorted()), want, "sort, case {case}");
        }
        assert!(repeated > 100, "{repeated} of 300 cases with a repeat");
    }
}
