//! The crate's one error type: what went wrong ([`ErrorKind`]) and where ([`Location`]: a
//! byte offset for readers, an item index for builders and writers).
//!
//! This module owns error values only; it knows nothing of formats or I/O. Errors are `Copy`,
//! 32 bytes and never allocate, so validators can return them from `no_std` code and callers
//! can match on the kind without string parsing.
//!
//! ```
//! use lakecore::sidecar::Sidecar;
//! use lakecore::ErrorKind;
//! // Byte 4 of a sidecar names its layout; 7 is none of them.
//! let e = Sidecar::detect_layout(b"PMSC\x07").unwrap_err();
//! assert_eq!((e.kind, e.offset), (ErrorKind::UnsupportedVersion, 4));
//! assert_eq!(e.to_string(), "unsupported version at byte 4");
//! match e.kind {
//!     ErrorKind::Truncated | ErrorKind::NeedsBytes { .. } => unreachable!(),
//!     _ => {} // the set grows with the formats: keep a wildcard arm
//! }
//! ```

use core::fmt;

/// What went wrong while reading untrusted bytes.
///
/// The set grows with the formats; match with a wildcard arm.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The input ended before a complete field could be read; the offset is where more bytes
    /// were needed.
    Truncated,
    /// A magic number or marker did not match.
    BadMagic,
    /// A format version this crate does not read.
    UnsupportedVersion,
    /// A stored checksum (SHA-256, CRC-32) does not match the bytes it covers.
    ChecksumMismatch,
    /// A varint has more bytes than its format allows, or its value does not fit in 64 bits
    /// (or in the format's narrower bound, e.g. the 9th byte of a 9-byte varint has its
    /// continuation bit set).
    VarintOverflow,
    /// A multi-byte varint is not in its shortest form (it ends in a `0x00` byte).
    VarintNonCanonical,
    /// A decoded value lies outside the bounds the format or the caller set.
    OutOfBounds,
    /// Adding a delta to the running value overflowed.
    ArithmeticOverflow,
    /// A bit width outside the range the context allows.
    InvalidBitWidth,
    /// Bits that must be zero (padding after the last packed value) are not.
    NonZeroPadding,
    /// A count or size exceeds a configured limit; refused before any allocation.
    LimitExceeded,
    /// A stream or region has bytes left over after its last declared element.
    TrailingBytes,
    /// A length or count field is negative, zero where it must not be, or inconsistent.
    InvalidLength,
    /// Values that must be sorted (or strictly increasing) are not.
    NotSorted,
    /// A value that must be unique appears twice.
    Duplicate,
    /// A value differs from what the caller or another field says it must be.
    Mismatch,
    /// A field holds a value that is not allowed there.
    InvalidValue,
    /// Thrift: a field has a wire type other than its declared type.
    ThriftWireType,
    /// Thrift: a required field is missing.
    ThriftMissingField,
    /// Thrift: a field appears twice in one struct.
    ThriftDuplicateField,
    /// Thrift: a union has other than exactly one member set.
    ThriftUnion,
    /// Nesting is deeper than the configured limit.
    DepthLimit,
    /// The bytes needed lie outside the window the caller supplied; the error's offset is the
    /// first needed byte and `end` the exclusive end. Fetch them and retry.
    NeedsBytes {
        /// Exclusive end of the absolute byte range that is needed.
        end: u64,
    },
}

impl ErrorKind {
    /// A short, stable, lowercase name of the kind (used in CLI output and logs).
    ///
    /// ```
    /// use lakecore::ErrorKind;
    /// assert_eq!(ErrorKind::VarintNonCanonical.name(), "non-canonical varint");
    /// assert_eq!(ErrorKind::VarintNonCanonical.to_string(), "non-canonical varint");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::Truncated => "truncated",
            ErrorKind::BadMagic => "bad magic",
            ErrorKind::UnsupportedVersion => "unsupported version",
            ErrorKind::ChecksumMismatch => "checksum mismatch",
            ErrorKind::VarintOverflow => "varint overflow",
            ErrorKind::VarintNonCanonical => "non-canonical varint",
            ErrorKind::OutOfBounds => "value out of bounds",
            ErrorKind::ArithmeticOverflow => "arithmetic overflow",
            ErrorKind::InvalidBitWidth => "invalid bit width",
            ErrorKind::NonZeroPadding => "non-zero padding",
            ErrorKind::LimitExceeded => "limit exceeded",
            ErrorKind::TrailingBytes => "trailing bytes",
            ErrorKind::InvalidLength => "invalid length",
            ErrorKind::NotSorted => "not sorted",
            ErrorKind::Duplicate => "duplicate",
            ErrorKind::Mismatch => "mismatch",
            ErrorKind::InvalidValue => "invalid value",
            ErrorKind::ThriftWireType => "thrift wire type",
            ErrorKind::ThriftMissingField => "thrift missing field",
            ErrorKind::ThriftDuplicateField => "thrift duplicate field",
            ErrorKind::ThriftUnion => "thrift union",
            ErrorKind::DepthLimit => "depth limit",
            ErrorKind::NeedsBytes { .. } => "needs bytes",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What an [`Error`]'s `offset` counts.
///
/// Readers report bytes; builders and writers, which have no input bytes to point at, name
/// the item they were given (an entry, a row, a range, a layer).
///
/// ```
/// use lakecore::error::{Error, ErrorKind, Location};
/// let e = Error::at_item(ErrorKind::ArithmeticOverflow, Location::Row, 7);
/// assert_eq!(e.to_string(), "arithmetic overflow at row 7");
/// assert_eq!(e.shifted(100).offset, 7); // only byte offsets move
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Location {
    /// A byte offset: absolute in the file when the reader was told where its bytes start,
    /// otherwise relative to the slice it was given. Builders use it only for a byte of what
    /// they were told about (a block's offset in its manifest) or of what they wrote, as
    /// their docs say.
    #[default]
    Byte,
    /// The 0-based ordinal of an item in what the caller handed in: a manifest entry added to
    /// a sidecar builder, an entry of a map being encoded, a chunk of a footer's input, an
    /// element of a list such as the merge's deleted row IDs.
    Entry,
    /// A row: a row position in a file, or a row ID.
    Row,
    /// The 0-based index of a range in the caller's list of
    /// [`RowRange`](crate::select::RowRange)s.
    Range,
    /// The 0-based index of a partial-update layer of a BLOB merge.
    Layer,
    /// No position: the caller's input as a whole (`offset` is 0).
    Whole,
}

impl Location {
    /// The word printed before the offset (`"byte"`, `"entry"`, ...); empty for
    /// [`Location::Whole`].
    pub const fn name(self) -> &'static str {
        match self {
            Location::Byte => "byte",
            Location::Entry => "entry",
            Location::Row => "row",
            Location::Range => "range",
            Location::Layer => "layer",
            Location::Whole => "",
        }
    }
}

/// An error in untrusted input or in what a builder was given: its [`ErrorKind`] and where
/// it was found ([`Location`] and `offset`).
///
/// Readers report a byte offset, absolute when the reader was told where its bytes start (a
/// cursor over a window of a file reports file offsets), otherwise relative to the slice it
/// was given. Builders and writers name an item instead (`at` says which kind).
///
/// ```
/// use lakecore::error::{Error, ErrorKind, Location};
/// let e = Error::new(ErrorKind::Truncated, 12);
/// assert_eq!(e.to_string(), "truncated at byte 12");
/// assert_eq!(e.shifted(100).offset, 112);
/// let e = Error::at_item(ErrorKind::NotSorted, Location::Range, 1);
/// assert_eq!((e.kind, e.at, e.offset), (ErrorKind::NotSorted, Location::Range, 1));
/// assert_eq!(e.to_string(), "not sorted at range 1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// Where, counted in what [`at`](Self::at) says: for bytes, the offset of the offending
    /// element (for [`ErrorKind::Truncated`], where more bytes were needed); otherwise the
    /// item's index or row.
    pub offset: u64,
    /// What `offset` counts: bytes for readers, items for builders and writers.
    pub at: Location,
}

impl Error {
    /// An error of `kind` at byte `offset`.
    #[inline]
    pub const fn new(kind: ErrorKind, offset: u64) -> Self {
        Error {
            kind,
            offset,
            at: Location::Byte,
        }
    }

    /// An error of `kind` at item `index` of the kind `at` names (a row, an entry, a range,
    /// ...; [`Location::Byte`] gives the same as [`new`](Self::new)).
    #[inline]
    pub const fn at_item(kind: ErrorKind, at: Location, index: u64) -> Self {
        Error {
            kind,
            offset: index,
            at,
        }
    }

    /// The same error with a byte offset moved by `base` (to turn a slice-relative offset
    /// into a file offset); item locations are left as they are. Saturates instead of
    /// wrapping.
    #[inline]
    #[must_use]
    pub const fn shifted(self, base: u64) -> Self {
        match self.at {
            Location::Byte => Error {
                offset: self.offset.saturating_add(base),
                ..self
            },
            _ => self,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, self.at) {
            (ErrorKind::NeedsBytes { end }, Location::Byte) => {
                write!(f, "needs bytes [{}, {})", self.offset, end)
            }
            (kind, Location::Whole) => write!(f, "{kind}"),
            (kind, at) => write!(f, "{} at {} {}", kind, at.name(), self.offset),
        }
    }
}

impl core::error::Error for Error {}

/// Shorthand for results whose error is [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// Converts a slice length or index to a `u64` offset (lossless on every supported target).
#[inline]
pub(crate) const fn off(n: usize) -> u64 {
    n as u64
}
