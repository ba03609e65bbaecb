//! Where a table's files are read from: the [`Storage`] trait (list a directory, read a whole
//! object, read byte ranges, size) and its local file-system implementation [`LocalFs`]
//! (what the planner always did: small files read, large ones mapped). The object-store
//! implementation is `io::ObjectStorage` (feature `object-store`).
//!
//! Paths are [`Path`]s in both: a local path, or for an object store the object's URL
//! (`s3://bucket/warehouse/db.db/t/manifest/manifest-0`), so errors name what a user typed.
//!
//! ```
//! use lakecore::io::{LocalFs, Storage};
//! use std::path::Path;
//! let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs"));
//! let names = LocalFs.list(&dir.join("snapshot"))?;
//! assert!(names.iter().any(|n| n == "LATEST"));
//! let latest = LocalFs.read(&dir.join("snapshot/LATEST"))?;
//! let parts = LocalFs.read_ranges(&dir.join("snapshot/LATEST"), &[(0, 1)])?;
//! assert_eq!(&parts[0][..], &latest[..1]);
//! # Ok::<(), std::io::Error>(())
//! ```

use super::{map_file, FileBytes};
use alloc::string::String;
use alloc::vec::Vec;
use std::fs::File;
use std::io;
use std::path::Path;

/// Bytes read from a [`Storage`]: a local file's (read or mapped), a buffer, or an object
/// store's `Bytes` (feature `object-store`), viewed in place as `&[u8]`.
#[derive(Debug)]
pub enum Stored {
    /// A local file, read or mapped by [`map_file`].
    File(FileBytes),
    /// A buffer the process owns.
    Vec(Vec<u8>),
    /// An object store's response body (reference-counted, not copied).
    #[cfg(feature = "object-store")]
    Bytes(bytes::Bytes),
}

impl core::ops::Deref for Stored {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Stored::File(f) => f,
            Stored::Vec(v) => v,
            #[cfg(feature = "object-store")]
            Stored::Bytes(b) => b,
        }
    }
}

impl AsRef<[u8]> for Stored {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// How a remote planner fetches the selected spans of a manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeTuning {
    /// Spans closer than this many bytes are fetched with one ranged GET (the gap is read
    /// and dropped): fewer requests for a little more bytes.
    pub coalesce_gap: u64,
    /// At most this many ranged GETs of one manifest are in flight at once.
    pub max_fan_out: usize,
    /// When the coalesced ranges would read at least this share of the manifest (per
    /// mille), the manifest is fetched whole with one GET instead.
    pub whole_above_per_mille: u32,
    /// Manifests fetched at once by a plan (each bounded by its own size, so this bounds
    /// the memory of fetched bytes to this many manifests).
    pub manifests_in_flight: usize,
}

impl Default for RangeTuning {
    /// The defaults measured against a local S3 server (moto behind a counting proxy; see
    /// BENCHMARKS.md, "Planning from S3"): 64 KiB gap, 8 GETs per manifest, one whole GET
    /// from 90% of a manifest, 16 manifests in flight.
    fn default() -> Self {
        RangeTuning {
            coalesce_gap: 64 << 10,
            max_fan_out: 8,
            whole_above_per_mille: 900,
            manifests_in_flight: 16,
        }
    }
}

/// Merges `(offset, length)` spans in file order into ranges, joining spans that are at
/// most `gap` bytes apart (the gap is read too). Spans must be sorted and disjoint.
///
/// ```
/// use lakecore::io::coalesce_with_gap;
/// assert_eq!(coalesce_with_gap(&[(0, 10), (15, 5), (100, 1)], 5), [(0, 20), (100, 1)]);
/// assert_eq!(coalesce_with_gap(&[(0, 10), (15, 5)], 4), [(0, 10), (15, 5)]);
/// ```
pub fn coalesce_with_gap(spans: &[(u64, u64)], gap: u64) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &(offset, length) in spans {
        if let Some((start, len)) = out.last_mut() {
            let end = start.saturating_add(*len);
            if offset >= end && offset - end <= gap {
                *len = offset.saturating_add(length) - *start;
                continue;
            }
        }
        out.push((offset, length));
    }
    out
}

/// A place a table's files are read from.
pub trait Storage: Send + Sync + core::fmt::Debug {
    /// The whole file at `path`.
    fn read(&self, path: &Path) -> io::Result<Stored>;

    /// The `(offset, length)` ranges of the file at `path`, one buffer per range in order;
    /// [`io::ErrorKind::UnexpectedEof`] when a range ends past the end of the file.
    fn read_ranges(&self, path: &Path, ranges: &[(u64, u64)]) -> io::Result<Vec<Stored>>;

    /// The whole data file at `path`, for reads that hand slices of it out in place (BLOB
    /// values). By default [`read`](Self::read); [`LocalFs`] maps it from
    /// [`DATA_READ_BELOW`](super::DATA_READ_BELOW) bytes up, where `read` copies files of up
    /// to 16 MiB.
    fn read_data(&self, path: &Path) -> io::Result<Stored> {
        self.read(path)
    }

    /// The size of the file at `path` in bytes.
    fn size(&self, path: &Path) -> io::Result<u64>;

    /// The names of the entries directly under directory `dir` (unordered);
    /// [`io::ErrorKind::NotFound`] when there is no such directory. Object stores have no
    /// directories: there, a prefix without objects is not found.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;

    /// Whether reads go over a network: the planner then fetches only the selected spans
    /// of manifests with [`read_ranges`](Self::read_ranges), tuned by
    /// [`tuning`](Self::tuning), instead of reading them whole.
    fn is_remote(&self) -> bool {
        false
    }

    /// How selected spans are fetched (remote storage only).
    fn tuning(&self) -> RangeTuning {
        RangeTuning::default()
    }
}

/// The local file system: whole reads through [`map_file`] (read up to
/// [`READ_BELOW`](super::READ_BELOW) bytes, mapped above), ranges with positioned reads.
///
/// Mapping relies on the files being written once and never modified in place, as Paimon
/// data and metadata files are (see [`map_file`]'s contract); use it for such files only.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalFs;

impl Storage for LocalFs {
    fn read(&self, path: &Path) -> io::Result<Stored> {
        // SAFETY: `LocalFs` is documented to be used for write-once files only (Paimon's
        // data and metadata files), which is `map_file`'s contract; files up to READ_BELOW
        // bytes are read, not mapped.
        #[allow(unsafe_code)]
        let bytes = unsafe { map_file(path) }?;
        Ok(Stored::File(bytes))
    }

    fn read_data(&self, path: &Path) -> io::Result<Stored> {
        // SAFETY: as in `read`: write-once files only, `map_data_file`'s contract.
        #[allow(unsafe_code)]
        let bytes = unsafe { super::map_data_file(path) }?;
        Ok(Stored::File(bytes))
    }

    fn read_ranges(&self, path: &Path, ranges: &[(u64, u64)]) -> io::Result<Vec<Stored>> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = File::open(path)?;
        let mut out = Vec::with_capacity(ranges.len());
        for &(offset, length) in ranges {
            let len = usize::try_from(length)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "range too long"))?;
            let mut buf = alloc::vec![0u8; len];
            file.seek(SeekFrom::Start(offset))?;
            file.read_exact(&mut buf)?;
            out.push(Stored::Vec(buf));
        }
        Ok(out)
    }

    fn size(&self, path: &Path) -> io::Result<u64> {
        Ok(std::fs::metadata(path)?.len())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            if let Some(name) = entry?.file_name().to_str() {
                out.push(name.into());
            }
        }
        Ok(out)
    }
}
