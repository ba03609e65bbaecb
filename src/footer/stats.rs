//! Statistics over one domain (chunks for ROW_GROUP_STATS, page ordinals for a column index):
//! [`StatArrays`], their O(1) shape rules and O(n) value rules, and the borrowed per-position
//! [`Statistics`] with its [`Bound`]s.
//!
//! This module reads pages it is handed; it parses no descriptor or page group (the
//! directory and page-index code find the pages) and copies no bound.

use super::page::ArrayPage;
use super::MetadataArray;
use crate::error::{Error, ErrorKind, Result};

/// Statistic arrays over one domain (chunks or page ordinals).
#[derive(Clone, Copy, Debug, Default)]
pub struct StatArrays<'a> {
    /// NULL_COUNT.
    pub null_count: Option<ArrayPage<'a>>,
    /// NAN_COUNT.
    pub nan_count: Option<ArrayPage<'a>>,
    /// MIN_VALUE.
    pub min_value: Option<ArrayPage<'a>>,
    /// MAX_VALUE.
    pub max_value: Option<ArrayPage<'a>>,
    /// MIN_MAX_PREFIX.
    pub prefix: Option<ArrayPage<'a>>,
    /// MIN_IS_EXACT.
    pub min_is_exact: Option<ArrayPage<'a>>,
    /// MAX_IS_EXACT.
    pub max_is_exact: Option<ArrayPage<'a>>,
}

impl<'a> StatArrays<'a> {
    /// The slot of statistic array `a`, or `None` for any other array.
    pub(super) fn slot_mut(&mut self, a: MetadataArray) -> Option<&mut Option<ArrayPage<'a>>> {
        Some(match a {
            MetadataArray::NullCount => &mut self.null_count,
            MetadataArray::NanCount => &mut self.nan_count,
            MetadataArray::MinValue => &mut self.min_value,
            MetadataArray::MaxValue => &mut self.max_value,
            MetadataArray::MinMaxPrefix => &mut self.prefix,
            MetadataArray::MinIsExact => &mut self.min_is_exact,
            MetadataArray::MaxIsExact => &mut self.max_is_exact,
            _ => return None,
        })
    }

    /// Cross-array rules checkable in O(1): MIN and MAX together with the same encoding and
    /// present count; PREFIX and exactness pages match them.
    pub(super) fn check_shape(&self, at: u64) -> Result<()> {
        let mismatch = Err(Error::new(ErrorKind::Mismatch, at));
        let same = |a: &ArrayPage<'_>, b: &ArrayPage<'_>| {
            a.is_sparse() == b.is_sparse() && a.num_present() == b.num_present()
        };
        match (&self.min_value, &self.max_value) {
            (None, None) => {
                if self.prefix.is_some()
                    || self.min_is_exact.is_some()
                    || self.max_is_exact.is_some()
                {
                    return mismatch;
                }
            }
            (Some(min), Some(max)) => {
                if !same(min, max) {
                    return mismatch;
                }
                if let Some(p) = &self.prefix {
                    if !same(p, min) {
                        return mismatch;
                    }
                }
                for e in [&self.min_is_exact, &self.max_is_exact]
                    .into_iter()
                    .flatten()
                {
                    if e.is_sparse() && !same(e, min) {
                        return mismatch;
                    }
                }
            }
            _ => return mismatch,
        }
        Ok(())
    }

    /// O(n) rules: every page's values, and identical present positions of MIN, MAX, PREFIX
    /// and sparse exactness pages.
    pub(super) fn validate(&self) -> Result<()> {
        for p in self.all().into_iter().flatten() {
            p.validate()?;
        }
        if let Some(min) = &self.min_value {
            let others = [
                &self.max_value,
                &self.prefix,
                &self.min_is_exact,
                &self.max_is_exact,
            ];
            for o in others.into_iter().flatten() {
                if o.is_sparse() {
                    same_positions(min, o)?;
                }
            }
        }
        Ok(())
    }

    /// The seven arrays, in array order.
    pub(super) fn all(&self) -> [Option<ArrayPage<'a>>; 7] {
        [
            self.null_count,
            self.nan_count,
            self.min_value,
            self.max_value,
            self.prefix,
            self.min_is_exact,
            self.max_is_exact,
        ]
    }

    /// The statistics of position `i`.
    pub fn at(&self, i: usize) -> Result<Statistics<'a>> {
        let get = |p: &Option<ArrayPage<'a>>| -> Result<Option<u64>> {
            match p {
                Some(p) => p.get(i),
                None => Ok(None),
            }
        };
        let (mut min, mut max) = (None, None);
        if let (Some(minp), Some(maxp)) = (&self.min_value, &self.max_value) {
            if let Some(slot) = minp.slot(i)? {
                let prefix = match &self.prefix {
                    Some(p) => p.bytes_at_slot(slot)?,
                    None => &[][..],
                };
                let exact = |e: &Option<ArrayPage<'a>>| -> Result<bool> {
                    Ok(match e {
                        None => true,
                        Some(e) if e.is_sparse() => e.value_at_slot(slot)? != 0,
                        Some(e) => e.get(i)?.unwrap_or(1) != 0,
                    })
                };
                min = Some(Bound {
                    prefix,
                    suffix: minp.bytes_at_slot(slot)?,
                    exact: exact(&self.min_is_exact)?,
                });
                let max_slot = maxp
                    .slot(i)?
                    .ok_or(Error::new(ErrorKind::Mismatch, maxp.offset()))?;
                max = Some(Bound {
                    prefix,
                    suffix: maxp.bytes_at_slot(max_slot)?,
                    exact: exact(&self.max_is_exact)?,
                });
            }
        }
        Ok(Statistics {
            null_count: get(&self.null_count)?,
            nan_count: get(&self.nan_count)?,
            min,
            max,
        })
    }
}

/// `a` and `b` (views over the same positions) hold the same present positions in the same
/// slots, so a slot found in one is the same entry in the other.
fn same_positions(a: &ArrayPage<'_>, b: &ArrayPage<'_>) -> Result<()> {
    let bad = Err(Error::new(ErrorKind::Mismatch, b.offset()));
    match (a.positions(), b.positions()) {
        (Some(pa), Some(pb)) => {
            let (ra, rb) = (a.slot_range(), b.slot_range());
            if ra != rb || (ra.0..ra.1).any(|s| pa.get(s) != pb.get(s)) {
                return bad;
            }
        }
        (None, None) => {}
        _ => return bad,
    }
    Ok(())
}

/// A min or max bound: `prefix ‖ suffix`, borrowed without copying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound<'a> {
    /// The common prefix of min and max (empty when the footer has no prefix array).
    pub prefix: &'a [u8],
    /// The rest of the bound.
    pub suffix: &'a [u8],
    /// False when the bound is truncated (min: a lower bound, max: an upper bound).
    pub exact: bool,
}

impl Bound<'_> {
    /// The bound's length in bytes.
    pub fn len(&self) -> usize {
        self.prefix.len() + self.suffix.len()
    }

    /// Whether the bound is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the bound equals `bytes`.
    pub fn eq_bytes(&self, bytes: &[u8]) -> bool {
        bytes.len() == self.len()
            && bytes.get(..self.prefix.len()) == Some(self.prefix)
            && bytes.get(self.prefix.len()..) == Some(self.suffix)
    }
}

/// Statistics of one chunk (row-group statistics) or one page (column index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Statistics<'a> {
    /// Null count, if recorded.
    pub null_count: Option<u64>,
    /// NaN count, if recorded.
    pub nan_count: Option<u64>,
    /// Min bound, if recorded.
    pub min: Option<Bound<'a>>,
    /// Max bound, if recorded (present exactly when `min` is).
    pub max: Option<Bound<'a>>,
}
