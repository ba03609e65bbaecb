//! Nested payloads: `ARRAY<BLOB>` (`"BCBA"`) and `MAP<K, BLOB>` (`"BCBM"`) views, and their
//! encoders under `alloc`.
//!
//! Both carry their own length indexes (ZigZag deltas, `-1` = null, `0` = empty). The views
//! validate everything once and then hand out sub-slices; they never allocate, except that
//! the duplicate-key check of maps larger than [`PAIRWISE_KEYS`] sorts a scratch vector
//! under `alloc` (without `alloc` it compares pairwise).

use super::index::{self, Lengths, Rules};
use super::{Payload, ARRAY_MAGIC, MAP_MAGIC, NESTED_VERSION};
use crate::error::{off, Error, ErrorKind, Result};

const NESTED_RULES: Rules = Rules {
    min_real: 0,
    placeholder: false,
};

/// Maps with at most this many keys are checked for duplicates pairwise.
pub const PAIRWISE_KEYS: u64 = 64;

/// Reads the common head `magic | version u8 | count i32`; returns the count.
fn head(payload: &[u8], origin: u64, magic: [u8; 4], min_len: usize) -> Result<u32> {
    if payload.len() < min_len {
        return Err(Error::new(
            ErrorKind::Truncated,
            origin.saturating_add(off(payload.len())),
        ));
    }
    let mut c = crate::cursor::Cursor::with_origin(payload, origin);
    if c.array::<4>()? != &magic {
        return Err(Error::new(ErrorKind::BadMagic, origin));
    }
    if c.u8()? != NESTED_VERSION {
        return Err(Error::new(
            ErrorKind::UnsupportedVersion,
            origin.saturating_add(4),
        ));
    }
    u32::try_from(c.i32_le()?)
        .map_err(|_| Error::new(ErrorKind::InvalidLength, origin.saturating_add(5)))
}

/// Reads a non-negative `i32` LE length at `at` of `payload`.
fn len_at(payload: &[u8], origin: u64, at: usize) -> Result<usize> {
    let abs = origin.saturating_add(off(at));
    let raw = payload
        .get(at..at.saturating_add(4))
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .ok_or(Error::new(ErrorKind::Truncated, abs))?;
    usize::try_from(i32::from_le_bytes(raw)).map_err(|_| Error::new(ErrorKind::InvalidLength, abs))
}

/// Checks an index holds exactly `count` entries ([`ErrorKind::Mismatch`] at its start),
/// each `-1` or `>= 0`, summing to at most `limit`; returns the sum.
fn check_index(index: &[u8], origin: u64, count: u32, limit: u64) -> Result<u64> {
    let n = crate::codec::varint::count_terminators(index);
    if n != u64::from(count) {
        return Err(Error::new(ErrorKind::Mismatch, origin));
    }
    Ok(index::scan(index, origin, n, limit, NESTED_RULES)?.sum)
}

/// A validated `ARRAY<BLOB>` payload:
/// `"BCBA" | 01 | count i32 | element bytes | element index | element_index_len i32`.
///
/// ```
/// use lakecore::blob::BlobArray;
/// // ["inline", null, "", "descriptor"] from golden vector G4.
/// let mut p = b"BCBA\x01\x04\x00\x00\x00inlinedescriptor".to_vec();
/// p.extend_from_slice(&[0x0c, 0x0d, 0x02, 0x14, 4, 0, 0, 0]);
/// let array = BlobArray::new(&p, 0)?;
/// let elements: Vec<Option<&[u8]>> = array.iter().map(|e| e.map(|p| p.bytes)).collect();
/// assert_eq!(elements, [Some(&b"inline"[..]), None, Some(&b""[..]), Some(&b"descriptor"[..])]);
/// # Ok::<(), lakecore::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct BlobArray<'a> {
    data: &'a [u8],
    data_origin: u64,
    index: &'a [u8],
    count: u32,
}

impl<'a> BlobArray<'a> {
    /// Validates `payload`, which starts at absolute offset `origin`.
    ///
    /// Errors: [`ErrorKind::Truncated`] under 13 bytes; [`ErrorKind::BadMagic`];
    /// [`ErrorKind::UnsupportedVersion`]; [`ErrorKind::InvalidLength`] at a negative count or
    /// at an index length outside `0..=len-13`; varint errors; [`ErrorKind::Mismatch`] at the
    /// index when it holds another number of entries than `count`;
    /// [`ErrorKind::InvalidValue`] at an entry below `-1`; [`ErrorKind::OutOfBounds`] at the
    /// entry that runs past the element bytes; [`ErrorKind::TrailingBytes`] where unused
    /// element bytes start.
    pub fn new(payload: &'a [u8], origin: u64) -> Result<Self> {
        let count = head(payload, origin, ARRAY_MAGIC, 13)?;
        let tail = payload.len() - 4;
        let idx_len = len_at(payload, origin, tail)?;
        if idx_len > payload.len() - 13 {
            return Err(Error::new(
                ErrorKind::InvalidLength,
                origin.saturating_add(off(tail)),
            ));
        }
        let index_start = tail - idx_len;
        let data = payload.get(9..index_start).unwrap_or_default();
        let index = payload.get(index_start..tail).unwrap_or_default();
        let data_origin = origin.saturating_add(9);
        let sum = check_index(
            index,
            origin.saturating_add(off(index_start)),
            count,
            off(data.len()),
        )?;
        if sum != off(data.len()) {
            return Err(Error::new(
                ErrorKind::TrailingBytes,
                data_origin.saturating_add(sum),
            ));
        }
        Ok(BlobArray {
            data,
            data_origin,
            index,
            count,
        })
    }

    /// A view of a row's payload.
    pub fn from_payload(payload: Payload<'a>) -> Result<Self> {
        Self::new(payload.bytes, payload.offset)
    }

    /// Number of elements (nulls included).
    pub fn len(&self) -> u32 {
        self.count
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The elements in order: `None` for a null element.
    pub fn iter(&self) -> ArrayElements<'a> {
        ArrayElements {
            parts: Parts::new(self.data, self.data_origin, self.index, self.count),
        }
    }
}

/// A walk over one index and its data: yields `None` for null entries.
#[derive(Clone, Debug)]
struct Parts<'a> {
    data: &'a [u8],
    origin: u64,
    lengths: Lengths<'a>,
    pos: usize,
    left: u32,
}

impl<'a> Parts<'a> {
    fn new(data: &'a [u8], origin: u64, index: &'a [u8], count: u32) -> Self {
        Parts {
            data,
            origin,
            lengths: Lengths::new(index, u64::from(count)),
            pos: 0,
            left: count,
        }
    }

    #[inline]
    fn next_part(&mut self) -> Option<Option<Payload<'a>>> {
        if self.left == 0 {
            return None;
        }
        let len = self.lengths.next_len()?;
        self.left -= 1;
        let Ok(n) = usize::try_from(len) else {
            return Some(None);
        };
        let start = self.pos;
        let end = start.checked_add(n)?;
        let bytes = self.data.get(start..end)?;
        self.pos = end;
        Some(Some(Payload {
            bytes,
            offset: self.origin.saturating_add(off(start)),
        }))
    }
}

/// The elements of a [`BlobArray`].
#[derive(Clone, Debug)]
pub struct ArrayElements<'a> {
    parts: Parts<'a>,
}

impl<'a> Iterator for ArrayElements<'a> {
    type Item = Option<Payload<'a>>;
    fn next(&mut self) -> Option<Self::Item> {
        self.parts.next_part()
    }
}

/// A validated `MAP<K, BLOB>` payload: `"BCBM" | 01 | count i32 | key bytes | value bytes |
/// key index | value index | key_index_len i32 | value_index_len i32`.
///
/// Keys are raw bytes in the key type's encoding (fixed-width integers LE, BOOLEAN one byte,
/// DECIMAL p <= 18 as i64 LE unscaled, p > 18 minimal big-endian two's complement, DATE/TIME
/// i32 LE, strings and binaries raw); every encoding is canonical, so equal keys have equal
/// bytes and duplicates are found bytewise.
///
/// ```
/// use lakecore::blob::BlobMap;
/// let mut p = b"BCBM\x01\x01\x00\x00\x00kv".to_vec();
/// p.extend_from_slice(&[0x02, 0x02, 1, 0, 0, 0, 1, 0, 0, 0]);
/// let map = BlobMap::new(&p, 0)?;
/// let (k, v) = map.iter().next().unwrap();
/// assert_eq!((k.unwrap().bytes, v.unwrap().bytes), (&b"k"[..], &b"v"[..]));
/// # Ok::<(), lakecore::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct BlobMap<'a> {
    keys: &'a [u8],
    keys_origin: u64,
    values: &'a [u8],
    values_origin: u64,
    key_index: &'a [u8],
    value_index: &'a [u8],
    count: u32,
}

impl<'a> BlobMap<'a> {
    /// Validates `payload`, which starts at absolute offset `origin`.
    ///
    /// Errors as for [`BlobArray::new`] (minimum 17 bytes, both indexes checked, keys first),
    /// plus [`ErrorKind::Duplicate`] at the second of two equal keys (the offset of its bytes;
    /// the key index's start for a second null key).
    pub fn new(payload: &'a [u8], origin: u64) -> Result<Self> {
        let count = head(payload, origin, MAP_MAGIC, 17)?;
        let n = payload.len();
        let kil = len_at(payload, origin, n - 8)?;
        let vil = len_at(payload, origin, n - 4)?;
        if kil > n - 17 {
            return Err(Error::new(
                ErrorKind::InvalidLength,
                origin.saturating_add(off(n - 8)),
            ));
        }
        if vil > n - 17 - kil {
            return Err(Error::new(
                ErrorKind::InvalidLength,
                origin.saturating_add(off(n - 4)),
            ));
        }
        let value_index_start = n - 8 - vil;
        let key_index_start = value_index_start - kil;
        let data = payload.get(9..key_index_start).unwrap_or_default();
        let data_len = off(data.len());
        let key_index = payload
            .get(key_index_start..value_index_start)
            .unwrap_or_default();
        let value_index = payload.get(value_index_start..n - 8).unwrap_or_default();
        let key_sum = check_index(
            key_index,
            origin.saturating_add(off(key_index_start)),
            count,
            data_len,
        )?;
        let value_sum = check_index(
            value_index,
            origin.saturating_add(off(value_index_start)),
            count,
            data_len - key_sum,
        )?;
        let used = key_sum + value_sum;
        if used != data_len {
            return Err(Error::new(
                ErrorKind::TrailingBytes,
                origin.saturating_add(9).saturating_add(used),
            ));
        }
        let split = usize::try_from(key_sum).unwrap_or(usize::MAX);
        let (keys, values) = data.split_at_checked(split).unwrap_or((data, &[]));
        let map = BlobMap {
            keys,
            keys_origin: origin.saturating_add(9),
            values,
            values_origin: origin.saturating_add(9).saturating_add(key_sum),
            key_index,
            value_index,
            count,
        };
        map.check_duplicates(origin.saturating_add(off(key_index_start)))?;
        Ok(map)
    }

    /// A view of a row's payload.
    pub fn from_payload(payload: Payload<'a>) -> Result<Self> {
        Self::new(payload.bytes, payload.offset)
    }

    /// Number of entries.
    pub fn len(&self) -> u32 {
        self.count
    }

    /// Whether the map has no entries.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The entries in stored order: `(key, value)`, `None` for null.
    pub fn iter(&self) -> MapEntries<'a> {
        MapEntries {
            keys: self.key_parts(),
            values: Parts::new(
                self.values,
                self.values_origin,
                self.value_index,
                self.count,
            ),
        }
    }

    /// The value of the first entry whose key bytes equal `key` (`None` = the null key);
    /// `Some(None)` for a null value, `None` when absent.
    pub fn get(&self, key: Option<&[u8]>) -> Option<Option<Payload<'a>>> {
        self.iter()
            .find(|(k, _)| k.map(|p| p.bytes) == key)
            .map(|(_, v)| v)
    }

    fn key_parts(&self) -> Parts<'a> {
        Parts::new(self.keys, self.keys_origin, self.key_index, self.count)
    }

    fn check_duplicates(&self, key_index_origin: u64) -> Result<()> {
        #[cfg(feature = "alloc")]
        if u64::from(self.count) > PAIRWISE_KEYS {
            return self.check_duplicates_sorted(key_index_origin);
        }
        self.check_duplicates_pairwise(key_index_origin)
    }

    fn check_duplicates_pairwise(&self, key_index_origin: u64) -> Result<()> {
        let mut outer = self.key_parts();
        let mut i = 0u32;
        while let Some(key) = outer.next_part() {
            let bytes = key.map(|k| k.bytes);
            let mut inner = self.key_parts();
            for _ in 0..i {
                if inner.next_part().map(|p| p.map(|k| k.bytes)) == Some(bytes) {
                    return Err(duplicate_at(key, key_index_origin, i));
                }
            }
            i += 1;
        }
        Ok(())
    }

    #[cfg(feature = "alloc")]
    fn check_duplicates_sorted(&self, key_index_origin: u64) -> Result<()> {
        use alloc::vec::Vec;
        let mut keys: Vec<(u32, Option<Payload<'a>>)> = Vec::new();
        keys.try_reserve_exact(usize::try_from(self.count).unwrap_or(usize::MAX))
            .map_err(|_| Error::new(ErrorKind::LimitExceeded, key_index_origin))?;
        let mut parts = self.key_parts();
        let mut i = 0u32;
        while let Some(key) = parts.next_part() {
            keys.push((i, key));
            i += 1;
        }
        let bytes = |k: &(u32, Option<Payload<'a>>)| k.1.map(|p| p.bytes);
        keys.sort_unstable_by(|a, b| bytes(a).cmp(&bytes(b)).then(a.0.cmp(&b.0)));
        // Report the duplicate that comes first in stored order.
        let mut worst: Option<(u32, Option<Payload<'a>>)> = None;
        for pair in keys.windows(2) {
            if let [a, b] = pair {
                if bytes(a) == bytes(b) && worst.is_none_or(|(w, _)| b.0 < w) {
                    worst = Some(*b);
                }
            }
        }
        match worst {
            Some((i, key)) => Err(duplicate_at(key, key_index_origin, i)),
            None => Ok(()),
        }
    }
}

fn duplicate_at(key: Option<Payload<'_>>, key_index_origin: u64, _i: u32) -> Error {
    let at = match key {
        Some(k) => k.offset,
        None => key_index_origin,
    };
    Error::new(ErrorKind::Duplicate, at)
}

/// The entries of a [`BlobMap`].
#[derive(Clone, Debug)]
pub struct MapEntries<'a> {
    keys: Parts<'a>,
    values: Parts<'a>,
}

impl<'a> Iterator for MapEntries<'a> {
    type Item = (Option<Payload<'a>>, Option<Payload<'a>>);
    fn next(&mut self) -> Option<Self::Item> {
        Some((self.keys.next_part()?, self.values.next_part()?))
    }
}

/// A map entry to encode: key and value bytes, `None` for null.
#[cfg(feature = "alloc")]
type MapEntry<'e> = (Option<&'e [u8]>, Option<&'e [u8]>);

/// Appends one length index (ZigZag deltas of `lengths`) to `out`.
#[cfg(feature = "alloc")]
fn push_index(out: &mut alloc::vec::Vec<u8>, lengths: &[i64]) -> Result<()> {
    crate::codec::varint::push_zigzag_deltas(out, 0, lengths)
}

#[cfg(feature = "alloc")]
fn count_i32(n: usize) -> Result<[u8; 4]> {
    i32::try_from(n)
        .map(i32::to_le_bytes)
        .map_err(|_| Error::new(ErrorKind::LimitExceeded, off(n)))
}

/// Encodes an `ARRAY<BLOB>` payload of `elements` (`None` = null element) into `out`.
///
/// ```
/// let mut out = Vec::new();
/// lakecore::blob::encode_array([Some(&b"ab"[..]), None], &mut out)?;
/// let array = lakecore::blob::BlobArray::new(&out, 0)?;
/// assert_eq!(array.len(), 2);
/// # Ok::<(), lakecore::Error>(())
/// ```
#[cfg(feature = "alloc")]
pub fn encode_array<'e>(
    elements: impl IntoIterator<Item = Option<&'e [u8]>>,
    out: &mut alloc::vec::Vec<u8>,
) -> Result<()> {
    let start = out.len();
    out.extend_from_slice(&ARRAY_MAGIC);
    out.push(NESTED_VERSION);
    out.extend_from_slice(&[0; 4]);
    let mut lengths = alloc::vec::Vec::new();
    for e in elements {
        match e {
            Some(bytes) => {
                out.extend_from_slice(bytes);
                lengths.push(i64::try_from(bytes.len()).unwrap_or(i64::MAX));
            }
            None => lengths.push(-1),
        }
    }
    let count = count_i32(lengths.len())?;
    if let Some(slot) = out.get_mut(start + 5..start + 9) {
        slot.copy_from_slice(&count);
    }
    let index_start = out.len();
    push_index(out, &lengths)?;
    let idx_len = count_i32(out.len() - index_start)?;
    out.extend_from_slice(&idx_len);
    Ok(())
}

/// Encodes a `MAP<K, BLOB>` payload of `entries` (`None` = null key / value, keys already in
/// their type's encoding) into `out`. Two equal keys are refused with
/// [`ErrorKind::Duplicate`] at the index of the first entry whose key repeats an earlier one
/// ([`Location::Entry`]).
///
/// [`Location::Entry`]: crate::error::Location::Entry
///
/// ```
/// let mut out = Vec::new();
/// lakecore::blob::encode_map([(Some(&b"k"[..]), Some(&b"v"[..]))], &mut out)?;
/// assert_eq!(lakecore::blob::BlobMap::new(&out, 0)?.len(), 1);
/// let dup = [(None, None), (None, Some(&b"x"[..]))];
/// assert!(lakecore::blob::encode_map(dup, &mut Vec::new()).is_err());
/// # Ok::<(), lakecore::Error>(())
/// ```
#[cfg(feature = "alloc")]
pub fn encode_map<'e>(
    entries: impl IntoIterator<Item = (Option<&'e [u8]>, Option<&'e [u8]>)>,
    out: &mut alloc::vec::Vec<u8>,
) -> Result<()> {
    use alloc::vec::Vec;
    let entries: Vec<MapEntry<'e>> = entries.into_iter().collect();
    let mut sorted: Vec<(Option<&[u8]>, usize)> =
        entries.iter().enumerate().map(|(i, e)| (e.0, i)).collect();
    sorted.sort_unstable();
    let mut dup: Option<usize> = None;
    for pair in sorted.windows(2) {
        if let [a, b] = pair {
            if a.0 == b.0 {
                dup = Some(dup.map_or(b.1, |d| d.min(b.1)));
            }
        }
    }
    if let Some(i) = dup {
        return Err(Error::at_item(
            ErrorKind::Duplicate,
            crate::error::Location::Entry,
            off(i),
        ));
    }
    let len_of = |x: &Option<&[u8]>| x.map_or(-1, |b| i64::try_from(b.len()).unwrap_or(i64::MAX));
    let key_lengths: Vec<i64> = entries.iter().map(|e| len_of(&e.0)).collect();
    let value_lengths: Vec<i64> = entries.iter().map(|e| len_of(&e.1)).collect();
    out.extend_from_slice(&MAP_MAGIC);
    out.push(NESTED_VERSION);
    out.extend_from_slice(&count_i32(entries.len())?);
    for (k, _) in &entries {
        out.extend_from_slice(k.unwrap_or_default());
    }
    for (_, v) in &entries {
        out.extend_from_slice(v.unwrap_or_default());
    }
    let key_start = out.len();
    push_index(out, &key_lengths)?;
    let value_start = out.len();
    push_index(out, &value_lengths)?;
    let end = out.len();
    out.extend_from_slice(&count_i32(value_start - key_start)?);
    out.extend_from_slice(&count_i32(end - value_start)?);
    Ok(())
}

/// The Paimon type of a MAP's keys, which fixes how key bytes are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyType {
    /// One byte, 0 or 1.
    Boolean,
    /// `i8`, 1 byte.
    TinyInt,
    /// `i16` LE.
    SmallInt,
    /// `i32` LE.
    Int,
    /// `i64` LE.
    BigInt,
    /// Days since the epoch, `i32` LE.
    Date,
    /// Milliseconds of the day, `i32` LE.
    Time,
    /// `DECIMAL(precision, _)`: the unscaled value as `i64` LE when `precision <= 18`, else
    /// minimal big-endian two's complement (1..=16 bytes).
    Decimal {
        /// Total digits, 1..=38.
        precision: u8,
    },
    /// UTF-8 bytes, raw.
    String,
    /// Raw bytes.
    Binary,
}

/// A decoded MAP key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyValue<'k> {
    /// A BOOLEAN key.
    Boolean(bool),
    /// An integer, DATE or TIME key.
    Int(i64),
    /// A DECIMAL key's unscaled value.
    Decimal(i128),
    /// A STRING key.
    String(&'k str),
    /// A BINARY key.
    Binary(&'k [u8]),
}

/// The longest fixed or decimal key encoding.
pub const MAX_KEY_LEN: usize = 16;

impl KeyType {
    /// Decodes key `bytes` of this type. [`ErrorKind::InvalidLength`] (offset 0) for the
    /// wrong width; [`ErrorKind::InvalidValue`] for a BOOLEAN other than 0/1, a non-minimal
    /// big decimal, a decimal beyond its precision's range or invalid UTF-8 (offset = first
    /// bad byte); [`ErrorKind::InvalidBitWidth`] for a precision outside 1..=38.
    ///
    /// ```
    /// use lakecore::blob::{KeyType, KeyValue};
    /// assert_eq!(KeyType::Int.decode(&[7, 0, 0, 0])?, KeyValue::Int(7));
    /// assert_eq!(KeyType::Decimal { precision: 30 }.decode(&[0xff, 0x7f])?, KeyValue::Decimal(-129));
    /// assert!(KeyType::Decimal { precision: 30 }.decode(&[0xff, 0xff]).is_err()); // not minimal
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn decode(self, bytes: &[u8]) -> Result<KeyValue<'_>> {
        let width = |n: usize| {
            if bytes.len() == n {
                Ok(())
            } else {
                Err(Error::new(ErrorKind::InvalidLength, 0))
            }
        };
        let mut buf = [0u8; 8];
        let le = |n: usize, buf: &mut [u8; 8]| -> Result<i64> {
            width(n)?;
            let sign = if bytes.last().is_some_and(|&b| b & 0x80 != 0) {
                0xff
            } else {
                0
            };
            *buf = [sign; 8];
            if let Some(dst) = buf.get_mut(..n) {
                dst.copy_from_slice(bytes);
            }
            Ok(i64::from_le_bytes(*buf))
        };
        Ok(match self {
            KeyType::Boolean => {
                width(1)?;
                match bytes {
                    [0] => KeyValue::Boolean(false),
                    [1] => KeyValue::Boolean(true),
                    _ => return Err(Error::new(ErrorKind::InvalidValue, 0)),
                }
            }
            KeyType::TinyInt => KeyValue::Int(le(1, &mut buf)?),
            KeyType::SmallInt => KeyValue::Int(le(2, &mut buf)?),
            KeyType::Int | KeyType::Date | KeyType::Time => KeyValue::Int(le(4, &mut buf)?),
            KeyType::BigInt => KeyValue::Int(le(8, &mut buf)?),
            KeyType::Decimal { precision } => {
                let limit = decimal_limit(precision)?;
                let v = if precision <= 18 {
                    i128::from(le(8, &mut buf)?)
                } else {
                    decode_be_minimal(bytes)?
                };
                if v.unsigned_abs() > limit {
                    return Err(Error::new(ErrorKind::InvalidValue, 0));
                }
                KeyValue::Decimal(v)
            }
            KeyType::String => KeyValue::String(
                core::str::from_utf8(bytes)
                    .map_err(|e| Error::new(ErrorKind::InvalidValue, off(e.valid_up_to())))?,
            ),
            KeyType::Binary => KeyValue::Binary(bytes),
        })
    }

    /// Encodes a fixed-width or decimal `value` of this type into `buf`; returns the bytes.
    /// STRING and BINARY keys are their own bytes (use them directly). Errors:
    /// [`ErrorKind::Mismatch`] for a value of another kind, [`ErrorKind::OutOfBounds`] for a
    /// value the type cannot hold, [`ErrorKind::InvalidBitWidth`] for a bad precision.
    ///
    /// ```
    /// use lakecore::blob::{KeyType, KeyValue};
    /// let mut buf = [0u8; 16];
    /// let key = KeyType::Decimal { precision: 20 }.encode(KeyValue::Decimal(-129), &mut buf)?;
    /// assert_eq!(key, [0xff, 0x7f]);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn encode<'b>(
        self,
        value: KeyValue<'_>,
        buf: &'b mut [u8; MAX_KEY_LEN],
    ) -> Result<&'b [u8]> {
        let fixed = |v: i64, n: usize, buf: &mut [u8; MAX_KEY_LEN]| -> Result<usize> {
            let bits = 8 * n as u32;
            let fits = bits == 64 || (v >> (bits - 1) == 0 || v >> (bits - 1) == -1);
            if !fits {
                return Err(Error::new(ErrorKind::OutOfBounds, 0));
            }
            if let (Some(dst), Some(src)) = (buf.get_mut(..n), v.to_le_bytes().get(..n)) {
                dst.copy_from_slice(src);
            }
            Ok(n)
        };
        let n = match (self, value) {
            (KeyType::Boolean, KeyValue::Boolean(b)) => {
                if let Some(slot) = buf.first_mut() {
                    *slot = u8::from(b);
                }
                1
            }
            (KeyType::TinyInt, KeyValue::Int(v)) => fixed(v, 1, buf)?,
            (KeyType::SmallInt, KeyValue::Int(v)) => fixed(v, 2, buf)?,
            (KeyType::Int | KeyType::Date | KeyType::Time, KeyValue::Int(v)) => fixed(v, 4, buf)?,
            (KeyType::BigInt, KeyValue::Int(v)) => fixed(v, 8, buf)?,
            (KeyType::Decimal { precision }, KeyValue::Decimal(v)) => {
                if v.unsigned_abs() > decimal_limit(precision)? {
                    return Err(Error::new(ErrorKind::OutOfBounds, 0));
                }
                if precision <= 18 {
                    fixed(i64::try_from(v).unwrap_or(i64::MAX), 8, buf)?
                } else {
                    let be = v.to_be_bytes();
                    let mut start = 0;
                    // Drop sign-extension bytes while the next byte keeps the sign.
                    while start < 15 {
                        match (be.get(start), be.get(start + 1)) {
                            (Some(0), Some(&next)) if next & 0x80 == 0 => start += 1,
                            (Some(0xff), Some(&next)) if next & 0x80 != 0 => start += 1,
                            _ => break,
                        }
                    }
                    let src = be.get(start..).unwrap_or_default();
                    if let Some(dst) = buf.get_mut(..src.len()) {
                        dst.copy_from_slice(src);
                    }
                    src.len()
                }
            }
            _ => return Err(Error::new(ErrorKind::Mismatch, 0)),
        };
        Ok(buf.get(..n).unwrap_or_default())
    }
}

/// `10^precision - 1`, the largest unscaled magnitude of a `DECIMAL(precision, _)`.
fn decimal_limit(precision: u8) -> Result<u128> {
    if !(1..=38).contains(&precision) {
        return Err(Error::new(ErrorKind::InvalidBitWidth, 0));
    }
    Ok(10u128.pow(u32::from(precision)) - 1)
}

/// A minimal big-endian two's complement integer of 1..=16 bytes.
fn decode_be_minimal(bytes: &[u8]) -> Result<i128> {
    if bytes.is_empty() || bytes.len() > 16 {
        return Err(Error::new(ErrorKind::InvalidLength, 0));
    }
    if let [first, second, ..] = bytes {
        let redundant =
            (*first == 0 && second & 0x80 == 0) || (*first == 0xff && second & 0x80 != 0);
        if redundant {
            return Err(Error::new(ErrorKind::InvalidValue, 0));
        }
    }
    let sign = if bytes.first().is_some_and(|&b| b & 0x80 != 0) {
        0xff
    } else {
        0
    };
    let mut be = [sign; 16];
    if let Some(dst) = be.get_mut(16 - bytes.len()..) {
        dst.copy_from_slice(bytes);
    }
    Ok(i128::from_be_bytes(be))
}
