//! File I/O for manifest sidecars (feature `std`): memory mapping, the `read` fallback rules,
//! the `_EXTRA_FILES` lookup, coalesced reads of selected manifest blocks, and a byte-bounded
//! cache of validated sidecar bytes.
//!
//! This module owns files and caches only; it parses nothing itself (it calls
//! [`crate::sidecar::Sidecar::validate`]). Its [`scan`] submodule plans scans of whole
//! table directories on top (snapshot, manifest lists, manifests, sidecars). Mapping is the one `unsafe` operation and is an
//! `unsafe fn` that hands memmap2's contract to the caller.
//!
//! ```
//! use lakecore::io::{coalesce, sidecar_reference};
//! use lakecore::sidecar::SelectedBlock;
//! let extra = ["x.index", "manifest-1.avro.sidecar", "other.avro.sidecar"];
//! assert_eq!(sidecar_reference(&extra), Some("manifest-1.avro.sidecar"));
//! let b = |id, offset, length| SelectedBlock { id, offset, length, first_record: 0, record_count: 1 };
//! let spans = coalesce(&[b(0, 57, 100), b(1, 157, 200), b(3, 500, 10)]);
//! assert_eq!(spans, [(57, 300), (500, 10)]);
//! ```

// The one unsafe operation of the crate's I/O: mapping a file (see `map_file`).
#![allow(unsafe_code)]

use crate::sidecar::{ManifestFacts, SelectedBlock, Sidecar};
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

pub mod scan;

/// The suffix that marks the sidecar in a manifest's `_EXTRA_FILES`.
pub const SIDECAR_SUFFIX: &str = ".avro.sidecar";

/// Maps `path` read-only.
///
/// # Safety
///
/// memmap2's contract passes to the caller: the file must not be modified, truncated or
/// replaced in place by this or another process while the map (or any slice borrowed from
/// it) is alive; otherwise reads are undefined behaviour. Paimon metadata files are written
/// once and never modified, which is what makes mapping them sound in practice.
pub unsafe fn map_file(path: &Path) -> io::Result<Mmap> {
    let file = File::open(path)?;
    // SAFETY: the caller guarantees the file is not modified while mapped (see `# Safety`),
    // which is `Mmap::map`'s only requirement.
    unsafe { Mmap::map(&file) }
}

/// The first `_EXTRA_FILES` entry naming a sidecar (readers never probe a derived name).
pub fn sidecar_reference<S: AsRef<str>>(extra_files: &[S]) -> Option<&str> {
    extra_files
        .iter()
        .map(AsRef::as_ref)
        .find(|name| name.ends_with(SIDECAR_SUFFIX))
}

/// Why [`read_sidecar`] returned no sidecar (the caller reads the whole manifest).
#[derive(Debug)]
pub enum NoSidecar {
    /// The `read` switch is off.
    Disabled,
    /// The manifest metadata names no sidecar.
    Absent,
    /// Reading the sidecar failed (other than an interruption).
    Io(io::Error),
    /// The sidecar is invalid.
    Invalid(Error),
}

/// Validated sidecar bytes, shared with the cache.
#[derive(Clone, Debug)]
pub struct SidecarBytes {
    bytes: Arc<[u8]>,
    facts: ManifestFacts,
}

impl SidecarBytes {
    /// The raw bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The validated view (validation is repeated; it costs one checksum pass).
    pub fn view(&self) -> crate::Result<Sidecar<'_>> {
        Sidecar::validate(&self.bytes, self.facts)
    }
}

/// A cache of complete, validated sidecar bytes keyed by path, bounded in bytes (oldest
/// entries are evicted first). Query results are never cached.
#[derive(Debug)]
pub struct SidecarCache {
    max_bytes: usize,
    inner: Mutex<CacheInner>,
}

#[derive(Debug, Default)]
struct CacheInner {
    map: HashMap<PathBuf, Arc<[u8]>>,
    order: VecDeque<PathBuf>,
    used: usize,
}

impl SidecarCache {
    /// A cache holding at most `max_bytes` bytes of sidecars.
    ///
    /// ```
    /// use lakecore::io::SidecarCache;
    /// use std::path::Path;
    /// use std::sync::Arc;
    /// let cache = SidecarCache::new(100);
    /// cache.insert(Path::new("a.avro.sidecar"), Arc::from(&[0u8; 60][..]));
    /// cache.insert(Path::new("b.avro.sidecar"), Arc::from(&[0u8; 60][..])); // evicts the oldest
    /// assert!(cache.get(Path::new("a.avro.sidecar")).is_none());
    /// assert_eq!((cache.len(), cache.used_bytes()), (1, 60));
    /// ```
    pub fn new(max_bytes: usize) -> Self {
        SidecarCache {
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

    /// Number of cached sidecars.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Reads and validates the sidecar of the manifest in `manifest_dir` described by `facts`,
/// found through its `extra_files`.
///
/// Returns `Ok(Err(reason))` when the scan must read the whole manifest: the `read` switch
/// is off, no sidecar is referenced, the read failed, or the sidecar is invalid. An
/// interrupted read ([`io::ErrorKind::Interrupted`]) is propagated as `Err`. Only successful
/// reads populate `cache`; a cached sidecar is re-validated against `facts`.
///
/// ```
/// use lakecore::io::{read_sidecar, SidecarCache};
/// use lakecore::sidecar::ManifestFacts;
/// use std::path::Path;
/// let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs/manifest"));
/// let name = "manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0";
/// let extra_files = [format!("{name}.avro.sidecar")];
/// let facts = ManifestFacts { length: 16886, entries: 364 };
/// let cache = SidecarCache::new(1 << 20);
/// let sidecar = read_sidecar(dir, &extra_files, facts, true, Some(&cache))?.expect("valid");
/// assert_eq!(sidecar.view()?.block_count(), 6);
/// assert_eq!(cache.len(), 1);
/// // Facts that do not match: no sidecar, the scan reads the whole manifest.
/// let wrong = ManifestFacts { length: 16887, entries: 364 };
/// assert!(read_sidecar(dir, &extra_files, wrong, true, None)?.is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_sidecar<S: AsRef<str>>(
    manifest_dir: &Path,
    extra_files: &[S],
    facts: ManifestFacts,
    read: bool,
    cache: Option<&SidecarCache>,
) -> io::Result<Result<SidecarBytes, NoSidecar>> {
    read_sidecar_with(manifest_dir, extra_files, facts, read, cache, |p| {
        std::fs::read(p)
    })
}

/// [`read_sidecar`] with the file fetch supplied by the caller (an object store client, a
/// test double).
pub fn read_sidecar_with<S: AsRef<str>>(
    manifest_dir: &Path,
    extra_files: &[S],
    facts: ManifestFacts,
    read: bool,
    cache: Option<&SidecarCache>,
    fetch: impl FnOnce(&Path) -> io::Result<Vec<u8>>,
) -> io::Result<Result<SidecarBytes, NoSidecar>> {
    if !read {
        return Ok(Err(NoSidecar::Disabled));
    }
    let Some(name) = sidecar_reference(extra_files) else {
        return Ok(Err(NoSidecar::Absent));
    };
    let path = manifest_dir.join(name);
    let (bytes, from_cache) = match cache.and_then(|c| c.get(&path)) {
        Some(b) => (b, true),
        None => match fetch(&path) {
            Ok(v) => (Arc::from(v), false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(e),
            Err(e) => return Ok(Err(NoSidecar::Io(e))),
        },
    };
    if let Err(e) = Sidecar::validate(&bytes, facts) {
        return Ok(Err(NoSidecar::Invalid(e)));
    }
    if let (Some(c), false) = (cache, from_cache) {
        c.insert(&path, Arc::clone(&bytes));
    }
    Ok(Ok(SidecarBytes { bytes, facts }))
}

/// Merges selected blocks (in file order) into `(offset, length)` spans; adjacent blocks
/// become one span.
pub fn coalesce(blocks: &[SelectedBlock]) -> Vec<(u64, u64)> {
    let mut spans: Vec<(u64, u64)> = Vec::new();
    for b in blocks {
        match spans.last_mut() {
            Some((start, len)) if start.checked_add(*len) == Some(b.offset) => {
                *len = len.saturating_add(b.length);
            }
            _ => spans.push((b.offset, b.length)),
        }
    }
    spans
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
