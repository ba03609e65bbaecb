//! Row selection shared by every format: [`RowRange`], one inclusive range of rows, and
//! [`RowRanges`], a checked, sorted list of them borrowed from caller memory.
//!
//! The sidecar's block selection ([`Query::rows`](crate::sidecar::Query::rows)), the BLOB
//! row selection ([`BlobFile::select`](crate::blob::BlobFile::select)), the BLOB merge
//! ([`MergeOptions`](crate::blob::MergeOptions)) and the Paimon planner speak this one
//! vocabulary. This module knows nothing of formats; it neither allocates nor needs `alloc`:
//! normalisation happens in place.
//!
//! ```
//! use lakecore::select::{RowRange, RowRanges};
//! // Whatever the caller has: any order, overlapping, adjacent.
//! let mut wanted = [RowRange::new(30, 40), RowRange::single(9), RowRange::new(35, 60)];
//! let ranges = RowRanges::normalize(&mut wanted);
//! assert_eq!(ranges.as_slice(), [RowRange::single(9), RowRange::new(30, 60)]);
//! ```

use crate::error::{off, Error, ErrorKind, Location, Result};

/// An inclusive range of rows: file-local row positions
/// ([`BlobFile::select`](crate::blob::BlobFile::select)) or row IDs (the sidecar's
/// [`Query`](crate::sidecar::Query), the BLOB merge). Ordered by `first`, then `last`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowRange {
    /// First row of the range.
    pub first: u64,
    /// Last row of the range (inclusive).
    pub last: u64,
}

impl RowRange {
    /// The rows `first..=last`.
    pub const fn new(first: u64, last: u64) -> Self {
        RowRange { first, last }
    }

    /// The single row `row`.
    pub const fn single(row: u64) -> Self {
        RowRange {
            first: row,
            last: row,
        }
    }

    /// Whether `row` lies in the range.
    ///
    /// ```
    /// use lakecore::select::RowRange;
    /// assert!(RowRange::new(3, 5).contains(5));
    /// assert!(!RowRange::new(3, 5).contains(6));
    /// ```
    pub const fn contains(&self, row: u64) -> bool {
        self.first <= row && row <= self.last
    }
}

/// Row ranges in selection order: sorted, each non-empty (`first <= last`) and each starting
/// after the previous one ends (disjoint). Borrowed from caller memory, so no allocation.
///
/// [`normalize`](Self::normalize) builds them from any list and also merges adjacent ranges,
/// so its result is the shortest list of the same rows. [`new`](Self::new) and
/// [`try_new`](Self::try_new) take a list that is already in order; adjacent ranges are
/// accepted there as they are (they select the same rows as their union).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RowRanges<'q>(&'q [RowRange]);

impl<'q> RowRanges<'q> {
    /// Normalises `ranges` in place (any order; ranges with `first > last` are dropped;
    /// overlapping or adjacent ranges are merged) and borrows the normalised prefix.
    ///
    /// ```
    /// use lakecore::select::{RowRange, RowRanges};
    /// let pairs = [(30, 40), (5, 9), (10, 12), (50, 1), (35, 60)];
    /// let mut r = pairs.map(|(first, last)| RowRange::new(first, last));
    /// assert_eq!(
    ///     RowRanges::normalize(&mut r).as_slice(),
    ///     [RowRange::new(5, 12), RowRange::new(30, 60)]
    /// );
    /// ```
    pub fn normalize(ranges: &'q mut [RowRange]) -> Self {
        ranges.sort_unstable();
        let mut kept = 0usize;
        for i in 0..ranges.len() {
            let Some(&r) = ranges.get(i) else { break };
            if r.first > r.last {
                continue;
            }
            if let Some(prev) = kept.checked_sub(1).and_then(|k| ranges.get_mut(k)) {
                if r.first <= prev.last.saturating_add(1) {
                    prev.last = prev.last.max(r.last);
                    continue;
                }
            }
            if let Some(slot) = ranges.get_mut(kept) {
                *slot = r;
            }
            kept += 1;
        }
        RowRanges(ranges.get(..kept).unwrap_or_default())
    }

    /// Borrows ranges that are already in order; `None` unless they are sorted, each `first
    /// <= last`, and each next `first` lies beyond the previous `last`.
    ///
    /// ```
    /// use lakecore::select::{RowRange, RowRanges};
    /// assert!(RowRanges::new(&[RowRange::new(0, 4), RowRange::new(5, 9)]).is_some());
    /// assert!(RowRanges::new(&[RowRange::new(0, 5), RowRange::new(5, 9)]).is_none());
    /// ```
    pub fn new(ranges: &'q [RowRange]) -> Option<Self> {
        Self::try_new(ranges).ok()
    }

    /// The checks of [`new`](Self::new), naming the first offending range by its index in
    /// `ranges` ([`Location::Range`]): [`ErrorKind::InvalidValue`] for `first > last`,
    /// [`ErrorKind::NotSorted`] for a range that starts at or before the previous one's end.
    ///
    /// ```
    /// use lakecore::error::{ErrorKind, Location};
    /// use lakecore::select::{RowRange, RowRanges};
    /// let e = RowRanges::try_new(&[RowRange::new(0, 5), RowRange::new(5, 9)]).unwrap_err();
    /// assert_eq!((e.kind, e.at, e.offset), (ErrorKind::NotSorted, Location::Range, 1));
    /// assert_eq!(e.to_string(), "not sorted at range 1");
    /// ```
    pub fn try_new(ranges: &'q [RowRange]) -> Result<Self> {
        let mut prev_last: Option<u64> = None;
        for (i, r) in ranges.iter().enumerate() {
            if r.first > r.last {
                return Err(Error::at_item(
                    ErrorKind::InvalidValue,
                    Location::Range,
                    off(i),
                ));
            }
            if prev_last.is_some_and(|p| p >= r.first) {
                return Err(Error::at_item(
                    ErrorKind::NotSorted,
                    Location::Range,
                    off(i),
                ));
            }
            prev_last = Some(r.last);
        }
        Ok(RowRanges(ranges))
    }

    /// The ranges, in order.
    pub fn as_slice(&self) -> &'q [RowRange] {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_sorts_drops_empty_and_merges_touching_ranges() {
        let mut r = [(9, 9), (30, 40), (8, 1), (10, 12), (35, 60), (62, 62)]
            .map(|(first, last)| RowRange::new(first, last));
        let n = RowRanges::normalize(&mut r);
        let want = [
            RowRange::new(9, 12),
            RowRange::new(30, 60),
            RowRange::single(62),
        ];
        assert_eq!(n.as_slice(), want);
        assert_eq!(RowRanges::try_new(n.as_slice()), Ok(n));
        let mut none: [RowRange; 0] = [];
        assert!(RowRanges::normalize(&mut none).as_slice().is_empty());
        let mut top = [
            RowRange::new(u64::MAX, u64::MAX),
            RowRange::new(0, u64::MAX),
        ];
        assert_eq!(
            RowRanges::normalize(&mut top).as_slice(),
            [RowRange::new(0, u64::MAX)]
        );
    }

    #[test]
    fn checked_constructors_agree_and_name_the_range() {
        let ok = [
            RowRange::new(0, 4),
            RowRange::new(5, 9),
            RowRange::single(20),
        ];
        assert_eq!(RowRanges::new(&ok).map(|r| r.as_slice()), Some(&ok[..]));
        let cases = [
            (
                [RowRange::new(0, 4), RowRange::new(4, 9)],
                ErrorKind::NotSorted,
                1,
            ),
            (
                [RowRange::new(5, 9), RowRange::new(0, 1)],
                ErrorKind::NotSorted,
                1,
            ),
            (
                [RowRange::new(5, 4), RowRange::new(6, 9)],
                ErrorKind::InvalidValue,
                0,
            ),
        ];
        for (ranges, kind, index) in cases {
            assert_eq!(RowRanges::new(&ranges), None);
            let e = RowRanges::try_new(&ranges).unwrap_err();
            assert_eq!(e, Error::at_item(kind, Location::Range, index));
        }
        assert!(RowRange::single(3).contains(3) && !RowRange::single(3).contains(4));
    }
}
