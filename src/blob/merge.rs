//! The fallback merge: newest-wins across the partial-update layers of one BLOB field.
//!
//! Files are grouped into layers by `max_sequence_number` (newest first). For each output
//! row ID the newest layer that holds a value or an explicit NULL wins; placeholders and gaps
//! (row IDs a layer does not cover) fall through to older layers.
//!
//! Rows are resolved in blocks of 256 selected row IDs: each layer in turn (newest first)
//! advances one forward cursor over the file covering the block and fills in the entries of
//! rows still unresolved, without branching on the entries. A layer's index entries are
//! decoded once whether or not a newer layer already won the row (the index is a delta
//! stream and must be walked anyway), but a record is only ever turned into a payload slice
//! for the winner: payload bytes are never read or copied.
//!
//! Row ranges and deletions select row IDs before any layer is consulted, so every layer
//! sees the same rows in the same order by construction (the spec's "count mismatch" error
//! cannot arise).

use super::file::{row_at, RowCursor};
use super::{check_ranges, BlobFile, Payload, Row, RowRange};
use crate::error::{off, Error, ErrorKind, Result};

/// Layers a [`FallbackMerge::new`] merge can hold; use
/// [`FallbackMerge::with_max_layers`] for more.
pub const DEFAULT_MAX_LAYERS: usize = 8;

/// One input file of a merge and its `DataFileMeta` facts.
#[derive(Clone, Copy, Debug)]
pub struct LayerFile<'a> {
    /// The validated file (its row count is the file's `row_count`).
    pub file: BlobFile<'a>,
    /// Row ID of the file's first row.
    pub first_row_id: u64,
    /// The file's `max_sequence_number`: files with equal numbers form one layer.
    pub max_sequence_number: i64,
}

impl LayerFile<'_> {
    /// One past the last row ID (checked at merge construction).
    fn end(&self) -> u64 {
        self.first_row_id.saturating_add(self.file.rows())
    }
}

/// Which rows a merge yields.
#[derive(Clone, Copy, Debug, Default)]
pub struct MergeOptions<'f> {
    /// Inclusive row-ID ranges, sorted and non-overlapping; `None` = every row. Ranges may
    /// reach outside the files' row IDs.
    pub ranges: Option<&'f [RowRange]>,
    /// Deleted row IDs, strictly ascending; they are skipped.
    pub deleted: &'f [u64],
}

/// One merged row: `_ROW_ID`, `_SEQUENCE_NUMBER` and the winning value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergedRow<'a> {
    /// The row ID.
    pub row_id: u64,
    /// The winning file's `max_sequence_number`; `-1` when every layer had a placeholder or
    /// gap.
    pub sequence_number: i64,
    /// The payload, or `None` for NULL.
    pub value: Option<Payload<'a>>,
    /// Index of the winning file in [`FallbackMerge::files`] (`None` for an all-placeholder
    /// row).
    pub file: Option<usize>,
}

#[derive(Clone, Debug)]
struct Layer<'a> {
    /// Files `current..end` of the sorted slice are still ahead.
    end: usize,
    current: usize,
    /// Row IDs `first..last_end` of the current file, whose rows `cursor` walks; both 0
    /// when no file is open.
    first: u64,
    last_end: u64,
    cursor: Option<RowCursor<'a>>,
}

impl<'a> Layer<'a> {
    const EMPTY: Layer<'a> = Layer {
        end: 0,
        current: 0,
        first: 0,
        last_end: 0,
        cursor: None,
    };

    /// Row `id`'s index entry and record offset in this layer, `None` for a gap. Row IDs
    /// must not decrease between calls.
    #[inline]
    fn seek(&mut self, files: &[LayerFile<'a>], id: u64) -> Option<(i64, u64)> {
        if id < self.first || id >= self.last_end {
            self.open(files, id)?;
        }
        let cursor = self.cursor.as_mut()?;
        let local = id - self.first;
        let pos = cursor.position();
        if local != pos {
            if local < pos {
                return None;
            }
            cursor.skip(local - pos);
        }
        cursor.next_entry()
    }

    /// The entries of the consecutive row IDs `ids` when they all lie in one file of this
    /// layer: fills `lens` / `ats` and returns the file index; `None` (nothing consumed
    /// beyond skipping to `ids[0]`) otherwise.
    #[inline]
    fn entries(
        &mut self,
        files: &[LayerFile<'a>],
        ids: &[u64],
        lens: &mut [i64; BLOCK],
        ats: &mut [u64; BLOCK],
    ) -> Option<usize> {
        let (&first_id, &last_id) = (ids.first()?, ids.last()?);
        if first_id < self.first || first_id >= self.last_end {
            self.open(files, first_id)?;
        }
        if last_id >= self.last_end {
            return None;
        }
        let cursor = self.cursor.as_mut()?;
        let local = first_id - self.first;
        let pos = cursor.position();
        if local < pos {
            return None;
        }
        cursor.skip(local - pos);
        let n = ids.len();
        let got = cursor.next_entries(lens.get_mut(..n)?, ats.get_mut(..n)?);
        (got == n).then_some(self.current)
    }

    /// Opens the file covering `id`, if any (the cold path of [`seek`](Self::seek)).
    #[inline(never)]
    fn open(&mut self, files: &[LayerFile<'a>], id: u64) -> Option<()> {
        loop {
            if self.current >= self.end {
                self.cursor = None;
                return None;
            }
            let f = files.get(self.current)?;
            if f.end() <= id {
                self.current += 1;
                self.cursor = None;
                continue;
            }
            if f.first_row_id > id {
                return None;
            }
            if self.cursor.is_none() || self.first != f.first_row_id {
                self.cursor = Some(RowCursor::new(&f.file));
            }
            self.first = f.first_row_id;
            self.last_end = f.end();
            return Some(());
        }
    }
}

/// The streaming, allocation-free fallback merge; yields `Result<MergedRow>` per row ID.
///
/// Rules (see the BLOB spec): one layer when all files share a `max_sequence_number` (a
/// placeholder there is an error, and row IDs no file covers are not rows); otherwise the
/// overall range `[min first_row_id, max last row ID]` is merged newest layer first, gaps
/// count as placeholders, an explicit NULL wins over older bytes, and a row that is a
/// placeholder or gap everywhere becomes NULL with sequence number `-1`.
///
/// Errors at construction: [`ErrorKind::InvalidValue`] / [`ErrorKind::NotSorted`] for bad
/// ranges (offset = position in the slice) or unsorted deletions (same);
/// [`ErrorKind::ArithmeticOverflow`] when `first_row_id + rows` overflows and
/// [`ErrorKind::Duplicate`] when two files of one layer overlap (offset = the first_row_id
/// concerned); [`ErrorKind::LimitExceeded`] (offset = the limit) for more than `N` layers.
/// While iterating: [`ErrorKind::InvalidValue`] for a placeholder in a single-layer read,
/// whose offset is the **row ID** (no single file offset describes it). The iterator is
/// fused after an error.
///
/// ```
/// use lakecore::blob::{BlobFile, FallbackMerge, LayerFile, MergeOptions};
/// // seq 1: one NULL row at row ID 0; seq 2: one placeholder there (golden D2, D3-like).
/// let old = BlobFile::new(&[0x01, 0x01, 0, 0, 0, 0x01])?;
/// let new = BlobFile::new(&[0x03, 0x01, 0, 0, 0, 0x01])?;
/// let mut files = [
///     LayerFile { file: old, first_row_id: 0, max_sequence_number: 1 },
///     LayerFile { file: new, first_row_id: 0, max_sequence_number: 2 },
/// ];
/// let rows: Vec<_> = FallbackMerge::new(&mut files, MergeOptions::default())?
///     .collect::<Result<_, _>>()?;
/// assert_eq!((rows[0].row_id, rows[0].sequence_number, rows[0].value), (0, 1, None));
/// # Ok::<(), lakecore::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FallbackMerge<'f, 'a, const N: usize = DEFAULT_MAX_LAYERS> {
    files: &'f [LayerFile<'a>],
    layers: [Layer<'a>; N],
    layer_count: usize,
    single: bool,
    ranges: Option<&'f [RowRange]>,
    range_idx: usize,
    deleted: &'f [u64],
    next_id: u64,
    last_id: u64,
    /// No more row IDs to select.
    done: bool,
    /// An error was returned: the iterator is finished.
    failed: bool,
    block: Block,
}

/// Rows resolved per block: row IDs are selected first, then every layer (newest first)
/// fills in the entries of the rows still unresolved, branch-free, then rows are emitted.
const BLOCK: usize = 256;

/// Entry of a row no layer covers (yet).
const GAP: i64 = i64::MIN;

#[derive(Clone, Debug)]
struct Block {
    ids: [u64; BLOCK],
    /// Best entry so far: a value or NULL once resolved, `-2` (covered by placeholders
    /// only) or [`GAP`].
    lens: [i64; BLOCK],
    ats: [u64; BLOCK],
    files: [usize; BLOCK],
    len: usize,
    pos: usize,
}

impl Block {
    const EMPTY: Block = Block {
        ids: [0; BLOCK],
        lens: [GAP; BLOCK],
        ats: [0; BLOCK],
        files: [0; BLOCK],
        len: 0,
        pos: 0,
    };
}

impl<'f, 'a> FallbackMerge<'f, 'a, DEFAULT_MAX_LAYERS> {
    /// A merge of `files` (sorted in place: newest layer first, then by `first_row_id`) with
    /// up to [`DEFAULT_MAX_LAYERS`] layers.
    pub fn new(files: &'f mut [LayerFile<'a>], options: MergeOptions<'f>) -> Result<Self> {
        Self::with_max_layers(files, options)
    }
}

impl<'f, 'a, const N: usize> FallbackMerge<'f, 'a, N> {
    /// A merge of `files` (sorted in place) with up to `N` layers.
    pub fn with_max_layers(
        files: &'f mut [LayerFile<'a>],
        options: MergeOptions<'f>,
    ) -> Result<Self> {
        if let Some(ranges) = options.ranges {
            check_ranges(ranges)?;
        }
        for (i, pair) in options.deleted.windows(2).enumerate() {
            if let [a, b] = pair {
                if a >= b {
                    return Err(Error::new(ErrorKind::NotSorted, off(i + 1)));
                }
            }
        }
        files.sort_unstable_by(|a, b| {
            b.max_sequence_number
                .cmp(&a.max_sequence_number)
                .then(a.first_row_id.cmp(&b.first_row_id))
        });
        let files: &'f [LayerFile<'a>] = files;
        let mut first_id = u64::MAX;
        let mut end_id = 0u64;
        for f in files {
            let end = f
                .first_row_id
                .checked_add(f.file.rows())
                .ok_or(Error::new(ErrorKind::ArithmeticOverflow, f.first_row_id))?;
            if f.file.rows() > 0 {
                first_id = first_id.min(f.first_row_id);
                end_id = end_id.max(end);
            }
        }
        let mut layers: [Layer<'a>; N] = core::array::from_fn(|_| Layer::EMPTY);
        let mut layer_count = 0usize;
        let mut start = 0usize;
        while start < files.len() {
            let seq = files.get(start).map_or(0, |f| f.max_sequence_number);
            let mut end = start;
            let mut covered_to: Option<u64> = None;
            while let Some(f) = files.get(end).filter(|f| f.max_sequence_number == seq) {
                if f.file.rows() > 0 {
                    if covered_to.is_some_and(|c| c > f.first_row_id) {
                        return Err(Error::new(ErrorKind::Duplicate, f.first_row_id));
                    }
                    covered_to = Some(f.end());
                }
                end += 1;
            }
            let layer = layers
                .get_mut(layer_count)
                .ok_or(Error::new(ErrorKind::LimitExceeded, off(N)))?;
            *layer = Layer {
                end,
                current: start,
                ..Layer::EMPTY
            };
            layer_count += 1;
            start = end;
        }
        let empty = end_id == 0 || first_id >= end_id;
        Ok(FallbackMerge {
            files,
            layers,
            layer_count,
            single: layer_count == 1,
            ranges: options.ranges,
            range_idx: 0,
            deleted: options.deleted,
            next_id: if empty { 0 } else { first_id },
            last_id: end_id.saturating_sub(1),
            done: empty,
            failed: false,
            block: Block::EMPTY,
        })
    }

    /// The files, in the merge's order (newest layer first, then by `first_row_id`);
    /// [`MergedRow::file`] indexes this slice.
    pub fn files(&self) -> &'f [LayerFile<'a>] {
        self.files
    }

    /// Number of layers.
    pub fn layers(&self) -> usize {
        self.layer_count
    }

    /// Selects the next block of row IDs and resolves them in every layer; `false` when
    /// no rows are left.
    fn fill(&mut self) -> bool {
        let block = &mut self.block;
        let mut k = 0;
        if let Some(n) = plain_run(
            self.done,
            self.next_id,
            self.last_id,
            self.ranges,
            &mut self.deleted,
        ) {
            // Fast path: no ranges and no deletion in the next `n` row IDs.
            let first = self.next_id;
            for (slot, id) in block.ids.iter_mut().zip(first..).take(n) {
                *slot = id;
            }
            block.lens = [GAP; BLOCK];
            k = n;
            match first.checked_add(off(n)) {
                Some(next) => self.next_id = next,
                None => self.done = true,
            }
        }
        for (id_slot, len_slot) in block.ids.iter_mut().zip(block.lens.iter_mut()).skip(k) {
            let Some(id) = next_row_id(
                &mut self.done,
                &mut self.next_id,
                self.last_id,
                self.ranges,
                &mut self.range_idx,
                &mut self.deleted,
            ) else {
                break;
            };
            *id_slot = id;
            *len_slot = GAP;
            k += 1;
        }
        block.len = k;
        block.pos = 0;
        let files = self.files;
        let ids = block.ids.get(..k).unwrap_or_default();
        let contiguous = match (ids.first(), ids.last()) {
            (Some(&a), Some(&b)) => b - a == off(k) - 1,
            _ => false,
        };
        let mut lens = [0i64; BLOCK];
        let mut ats = [0u64; BLOCK];
        // Whether a selected row is still unresolved (a gap or placeholder so far).
        let mut pending = true;
        for layer in self.layers.iter_mut().take(self.layer_count) {
            // Fast path: the whole block is one run of rows of the layer's current file.
            if contiguous {
                if let Some(file) = layer.entries(files, ids, &mut lens, &mut ats) {
                    if !pending {
                        // Every row already won: this layer's cursor only had to advance.
                        continue;
                    }
                    let slots = block
                        .lens
                        .iter_mut()
                        .zip(block.ats.iter_mut())
                        .zip(block.files.iter_mut());
                    // All BLOCK slots (fixed length, so the loop vectorises); slots past `k`
                    // are never emitted.
                    for ((&len, &at), ((len_slot, at_slot), file_slot)) in
                        lens.iter().zip(ats.iter()).zip(slots)
                    {
                        // Branch-free select (winners are data-dependent, so a branch
                        // would mispredict): all ones where the slot is still unresolved.
                        let take = 0u64.wrapping_sub(u64::from(*len_slot < super::NULL_LENGTH));
                        let keep = !take;
                        *len_slot = ((len.cast_unsigned() & take)
                            | (len_slot.cast_unsigned() & keep))
                            .cast_signed();
                        *at_slot = (at & take) | (*at_slot & keep);
                        let take_file = usize::try_from(take & 1).unwrap_or(0).wrapping_neg();
                        *file_slot = (file & take_file) | (*file_slot & !take_file);
                    }
                    pending = block
                        .lens
                        .get(..k)
                        .unwrap_or_default()
                        .iter()
                        .any(|&l| l < super::NULL_LENGTH);
                    continue;
                }
            }
            let slots = block
                .lens
                .iter_mut()
                .zip(block.ats.iter_mut())
                .zip(block.files.iter_mut());
            for (&id, ((len_slot, at_slot), file_slot)) in ids.iter().zip(slots) {
                if let Some((len, at)) = layer.seek(files, id) {
                    // Unresolved (gap or placeholder so far): take this layer's entry.
                    let take = *len_slot < super::NULL_LENGTH;
                    *len_slot = if take { len } else { *len_slot };
                    *at_slot = if take { at } else { *at_slot };
                    *file_slot = if take { layer.current } else { *file_slot };
                }
            }
        }
        k > 0
    }
}

/// The next selected row ID (ranges, overall range, deletions), advancing the selection.
/// How many row IDs from `next_id` on can be taken as one contiguous run (at most
/// [`BLOCK`]): only without ranges and with no deletion among them. Drops deletions below
/// `next_id`. `None` when the slow path must decide.
#[inline]
fn plain_run(
    done: bool,
    next_id: u64,
    last_id: u64,
    ranges: Option<&[RowRange]>,
    deleted: &mut &[u64],
) -> Option<usize> {
    if done || ranges.is_some() || next_id > last_id {
        return None;
    }
    let n = usize::try_from(last_id - next_id)
        .unwrap_or(usize::MAX)
        .saturating_add(1)
        .min(BLOCK);
    while let Some((&d, rest)) = deleted.split_first() {
        if d >= next_id {
            break;
        }
        *deleted = rest;
    }
    let end = next_id.checked_add(off(n))?; // exclusive; n >= 1
    match deleted.first() {
        Some(&d) if d < end => None,
        _ => Some(n),
    }
}

#[inline]
fn next_row_id(
    done: &mut bool,
    next_id: &mut u64,
    last_id: u64,
    ranges: Option<&[RowRange]>,
    range_idx: &mut usize,
    deleted: &mut &[u64],
) -> Option<u64> {
    loop {
        if *done {
            return None;
        }
        let id = *next_id;
        if let Some(ranges) = ranges {
            let Some(r) = ranges.get(*range_idx) else {
                *done = true;
                return None;
            };
            if id > r.last {
                *range_idx += 1;
                continue;
            }
            if id < r.first {
                *next_id = r.first;
                continue;
            }
        }
        if id > last_id {
            *done = true;
            return None;
        }
        match id.checked_add(1) {
            Some(n) => *next_id = n,
            None => *done = true,
        }
        while let Some((&d, rest)) = deleted.split_first() {
            if d >= id {
                break;
            }
            *deleted = rest;
        }
        if deleted.first() == Some(&id) {
            continue;
        }
        return Some(id);
    }
}

impl<'a, const N: usize> Iterator for FallbackMerge<'_, 'a, N> {
    type Item = Result<MergedRow<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.failed {
                return None;
            }
            if self.block.pos >= self.block.len && !self.fill() {
                return None;
            }
            let i = self.block.pos;
            self.block.pos += 1;
            let (Some(&id), Some(&len), Some(&at), Some(&file)) = (
                self.block.ids.get(i),
                self.block.lens.get(i),
                self.block.ats.get(i),
                self.block.files.get(i),
            ) else {
                return None;
            };
            if len < super::NULL_LENGTH {
                if self.single {
                    if len == GAP {
                        continue; // a single layer's gaps are not rows
                    }
                    self.failed = true;
                    return Some(Err(Error::new(ErrorKind::InvalidValue, id)));
                }
                return Some(Ok(MergedRow {
                    row_id: id,
                    sequence_number: -1,
                    value: None,
                    file: None,
                }));
            }
            let f = self.files.get(file)?;
            let value = match row_at(f.file.bytes(), len, at) {
                Row::Value(p) => Some(p),
                _ => None,
            };
            return Some(Ok(MergedRow {
                row_id: id,
                sequence_number: f.max_sequence_number,
                value,
                file: Some(file),
            }));
        }
    }
}

impl<const N: usize> core::iter::FusedIterator for FallbackMerge<'_, '_, N> {}
