//! File I/O (feature `std`): memory mapping, coalesced span reads, a byte-bounded cache of
//! whole files' bytes, and where files are read from ([`Storage`]: the local file system, or
//! an object store through `ObjectStorage` with feature
//! `object-store`).
//!
//! This module is format-neutral: it owns files, spans and caches and parses nothing. The
//! Paimon sidecar lookup and its fallback rules built on it live in `paimon::sidecar`
//! (feature `paimon`). Mapping is the one `unsafe` operation and is an `unsafe fn` that hands
//! memmap2's contract to the caller; files up to [`READ_BELOW`] bytes are read, not mapped.
//!
//! ```
//! use lakecore::io::coalesce;
//! let spans = coalesce([(57, 100), (157, 200), (500, 10)]);
//! assert_eq!(spans, [(57, 300), (500, 10)]);
//! ```

// The one unsafe operation of the crate's I/O: mapping a file (see `map_file`).
#![allow(unsafe_code)]

use crate::Error;
use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use memmap2::Mmap;

mod storage;
pub use storage::{coalesce_with_gap, LocalFs, RangeTuning, Storage, Stored};

#[cfg(feature = "object-store")]
pub mod object;
#[cfg(all(feature = "object-store", feature = "arrow"))]
pub use object::ObjectFileReader;
#[cfg(feature = "object-store")]
pub use object::ObjectStorage;

/// Files up to this many bytes are read into memory by [`map_file`] instead of mapped.
///
/// Paimon manifests, manifest lists and sidecars are far smaller (manifests target 8 MiB), so
/// the planner and the CLI never map them: a metadata file truncated or rewritten by another
/// process while it is being read then yields stale or short bytes (which validation
/// rejects), never a SIGBUS that ends the process. Mapping pays off only for larger files.
pub const READ_BELOW: u64 = 16 << 20;

/// A whole file's bytes: read into memory (files up to [`READ_BELOW`] bytes) or mapped.
#[derive(Debug)]
pub enum FileBytes {
    /// Read into a buffer the process owns: later changes to the file cannot affect it.
    Read(Vec<u8>),
    /// Mapped read-only (larger files), under [`map_file`]'s contract.
    Mapped(Mmap),
}

impl core::ops::Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Read(v) => v,
            FileBytes::Mapped(m) => m,
        }
    }
}

impl AsRef<[u8]> for FileBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// Opens `path`'s bytes: reads files of up to [`READ_BELOW`] bytes into memory and maps
/// larger ones read-only (then checks that the file did not shrink while it was mapped).
///
/// # Safety
///
/// For a mapped file (over [`READ_BELOW`] bytes) memmap2's contract passes to the caller: the
/// file must not be modified, truncated or replaced in place by this or another process
/// while the map (or any slice borrowed from it) is alive; otherwise reads are undefined
/// behaviour (a truncated page faults with SIGBUS). Paimon metadata files are written once
/// and never modified, which is what makes mapping them sound in practice; files read into
/// memory carry no such requirement.
pub unsafe fn map_file(path: &Path) -> io::Result<FileBytes> {
    // SAFETY: the caller's contract, passed on.
    unsafe { open_bytes(path, READ_BELOW) }
}

/// Files up to this many bytes are read by [`map_data_file`] instead of mapped.
pub const DATA_READ_BELOW: u64 = 64 << 10;

/// [`map_file`] for data files whose bytes are handed out in place (BLOB values): mapped from
/// [`DATA_READ_BELOW`] bytes up, so that reading a value does not first copy the whole file
/// (which [`map_file`]'s 16 MiB threshold, chosen for metadata, would do: a 12 MB BLOB file
/// was read with `read(2)`, 24% of a table read's time).
///
/// # Safety
///
/// As [`map_file`]: the file must not be modified, truncated or replaced in place while the
/// map (or any slice borrowed from it) is alive. Paimon data files are written once.
pub unsafe fn map_data_file(path: &Path) -> io::Result<FileBytes> {
    // SAFETY: the caller's contract, passed on.
    unsafe { open_bytes(path, DATA_READ_BELOW) }
}

/// Reads files of up to `read_below` bytes and maps larger ones (see [`map_file`]).
///
/// # Safety
///
/// [`map_file`]'s contract for the mapped files.
unsafe fn open_bytes(path: &Path, read_below: u64) -> io::Result<FileBytes> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    if len <= read_below {
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        file.read_to_end(&mut bytes)?;
        return Ok(FileBytes::Read(bytes));
    }
    // SAFETY: the caller guarantees the file is not modified while mapped (see `# Safety`),
    // which is `Mmap::map`'s only requirement.
    let map = unsafe { Mmap::map(&file) }?;
    if file.metadata()?.len() < map.len() as u64 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the file shrank while it was being mapped",
        ));
    }
    Ok(FileBytes::Mapped(map))
}

/// A cache of whole files' bytes keyed by path, bounded in bytes (oldest entries are evicted
/// first). It stores what it is given; callers cache only bytes they have validated (the
/// Paimon planner caches sidecars this way).
#[derive(Debug)]
pub struct ByteCache {
    max_bytes: usize,
    inner: Mutex<CacheInner>,
}

#[derive(Debug, Default)]
struct CacheInner {
    map: HashMap<PathBuf, Arc<[u8]>>,
    order: VecDeque<PathBuf>,
    used: usize,
}

impl ByteCache {
    /// A cache holding at most `max_bytes` bytes.
    ///
    /// ```
    /// use lakecore::io::ByteCache;
    /// use std::path::Path;
    /// use std::sync::Arc;
    /// let cache = ByteCache::new(100);
    /// cache.insert(Path::new("a.avro.sidecar"), Arc::from(&[0u8; 60][..]));
    /// cache.insert(Path::new("b.avro.sidecar"), Arc::from(&[0u8; 60][..])); // evicts the oldest
    /// assert!(cache.get(Path::new("a.avro.sidecar")).is_none());
    /// assert_eq!((cache.len(), cache.used_bytes()), (1, 60));
    /// ```
    pub fn new(max_bytes: usize) -> Self {
        ByteCache {
            max_bytes,
            inner: Mutex::new(CacheInner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CacheInner> {
        match self.inner.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The cached bytes of `path`, if any.
    pub fn get(&self, path: &Path) -> Option<Arc<[u8]>> {
        self.lock().map.get(path).cloned()
    }

    /// Caches `bytes` for `path` (skipped when larger than the whole budget).
    pub fn insert(&self, path: &Path, bytes: Arc<[u8]>) {
        if bytes.len() > self.max_bytes {
            return;
        }
        let mut g = self.lock();
        if let Some(old) = g.map.remove(path) {
            g.used -= old.len();
            g.order.retain(|p| p != path);
        }
        while g.used + bytes.len() > self.max_bytes {
            let Some(oldest) = g.order.pop_front() else {
                break;
            };
            if let Some(old) = g.map.remove(&oldest) {
                g.used -= old.len();
            }
        }
        g.used += bytes.len();
        g.order.push_back(path.to_path_buf());
        g.map.insert(path.to_path_buf(), bytes);
    }

    /// Bytes currently held.
    pub fn used_bytes(&self) -> usize {
        self.lock().used
    }

    /// Number of cached files.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Merges `(offset, length)` spans given in file order; adjacent spans become one.
///
/// ```
/// assert_eq!(lakecore::io::coalesce([(57, 100), (157, 200), (500, 10)]), [(57, 300), (500, 10)]);
/// ```
pub fn coalesce(spans: impl IntoIterator<Item = (u64, u64)>) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (offset, length) in spans {
        match out.last_mut() {
            Some((start, len)) if start.checked_add(*len) == Some(offset) => {
                *len = len.saturating_add(length);
            }
            _ => out.push((offset, length)),
        }
    }
    out
}

/// Borrows the header and each span from a mapped (or fully read) manifest: the pieces of a
/// valid Avro file, zero-copy. Fails with [`crate::ErrorKind::OutOfBounds`] when a span
/// lies outside `manifest`.
///
/// ```
/// use lakecore::io::span_slices;
/// let manifest = b"HEADERaaaabbbbcccc";
/// let parts = span_slices(manifest, 6, &[(6, 4), (14, 4)])?;
/// assert_eq!(parts, [&b"HEADER"[..], b"aaaa", b"cccc"]);
/// # Ok::<(), lakecore::Error>(())
/// ```
pub fn span_slices<'m>(
    manifest: &'m [u8],
    header_len: u64,
    spans: &[(u64, u64)],
) -> crate::Result<Vec<&'m [u8]>> {
    let slice = |offset: u64, len: u64| -> crate::Result<&'m [u8]> {
        let bad = Error::new(crate::ErrorKind::OutOfBounds, offset);
        let start = usize::try_from(offset).map_err(|_| bad)?;
        let end = offset
            .checked_add(len)
            .and_then(|e| usize::try_from(e).ok())
            .ok_or(bad)?;
        manifest.get(start..end).ok_or(bad)
    };
    let mut out = Vec::with_capacity(spans.len() + 1);
    out.push(slice(0, header_len)?);
    for &(offset, len) in spans {
        out.push(slice(offset, len)?);
    }
    Ok(out)
}

/// Reads the header and the selected spans from `reader` (one read per span) into one
/// buffer: the header + blocks, again a valid Avro container file.
pub fn read_spans<R: Read + Seek>(
    reader: &mut R,
    header_len: u64,
    spans: &[(u64, u64)],
) -> io::Result<Vec<u8>> {
    let total = spans
        .iter()
        .try_fold(header_len, |acc, &(_, len)| acc.checked_add(len))
        .and_then(|t| usize::try_from(t).ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "span sizes overflow"))?;
    let mut out = Vec::with_capacity(total);
    for &(offset, len) in core::iter::once(&(0, header_len)).chain(spans) {
        reader.seek(SeekFrom::Start(offset))?;
        let before = out.len();
        reader.by_ref().take(len).read_to_end(&mut out)?;
        if (out.len() - before) as u64 != len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "manifest shorter than the sidecar says",
            ));
        }
    }
    Ok(out)
}
