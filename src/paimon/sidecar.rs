//! Finding and reading a Paimon manifest's sidecar (feature `paimon`): the `_EXTRA_FILES`
//! lookup, the fallback rules (no, unreadable or invalid sidecar = read the whole manifest)
//! and caching of validated sidecar bytes in an [`io::ByteCache`](crate::io::ByteCache).
//!
//! ```
//! use lakecore::paimon::sidecar::sidecar_reference;
//! let extra = ["x.index", "manifest-1.avro.sidecar", "other.avro.sidecar"];
//! assert_eq!(sidecar_reference(&extra), Some("manifest-1.avro.sidecar"));
//! ```

use crate::io::ByteCache;
use crate::sidecar::{ManifestFacts, Sidecar, SidecarHead};
use crate::Error;
use alloc::sync::Arc;
use alloc::vec::Vec;
use std::io;
use std::path::Path;

/// The suffix that marks the sidecar in a manifest's `_EXTRA_FILES`.
pub const SIDECAR_SUFFIX: &str = ".avro.sidecar";

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
        Sidecar::parse_with(
            &self.bytes,
            &crate::sidecar::SidecarOptions {
                facts: Some(self.facts),
            },
        )
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
/// use lakecore::io::ByteCache;
/// use lakecore::paimon::sidecar::read_sidecar;
/// use lakecore::sidecar::ManifestFacts;
/// use std::path::Path;
/// let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs/manifest"));
/// let name = "manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0";
/// let extra_files = [format!("{name}.avro.sidecar")];
/// let facts = ManifestFacts { length: 16886, entries: 364 };
/// let cache = ByteCache::new(1 << 20);
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
    cache: Option<&ByteCache>,
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
    cache: Option<&ByteCache>,
    fetch: impl FnOnce(&Path) -> io::Result<Vec<u8>>,
) -> io::Result<Result<SidecarBytes, NoSidecar>> {
    let fetched = match fetch_sidecar_with(manifest_dir, extra_files, facts, read, cache, fetch)? {
        Ok(f) => f,
        Err(why) => return Ok(Err(why)),
    };
    if let Err(e) = fetched.validate() {
        return Ok(Err(NoSidecar::Invalid(e)));
    }
    Ok(Ok(fetched.bytes))
}

/// A sidecar's bytes as fetched (or found in the cache), not yet validated: the planner
/// validates them once with [`validate`](Self::validate) and selects with the same view,
/// instead of validating in [`read_sidecar`] and again in [`SidecarBytes::view`].
#[derive(Debug)]
pub struct FetchedSidecar<'c> {
    bytes: SidecarBytes,
    path: std::path::PathBuf,
    /// Where a successful validation is recorded; `None` when there is no cache or the
    /// bytes came from it.
    cache: Option<&'c ByteCache>,
}

impl FetchedSidecar<'_> {
    /// The raw bytes.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.bytes()
    }

    /// Validates the bytes against the manifest's facts (one pass) and, the first time they
    /// pass, puts them in the cache.
    pub fn validate(&self) -> crate::Result<Sidecar<'_>> {
        let view = self.bytes.view()?;
        self.passed();
        Ok(view)
    }

    /// The bytes opened for validation fused into selection ([`Sidecar::parse_head`] with
    /// the manifest's facts): checksum and everything before the blocks checked; the caller
    /// builds its query from the head's dictionary, walks the blocks once with
    /// [`SidecarHead::select_vec`] and, when that passes, calls [`passed`](Self::passed).
    pub fn head(&self) -> crate::Result<SidecarHead<'_>> {
        Sidecar::parse_head(
            &self.bytes.bytes,
            &crate::sidecar::SidecarOptions {
                facts: Some(self.bytes.facts),
            },
        )
    }

    /// Records a successful validation (of [`head`](Self::head)'s walk) in the cache.
    pub fn passed(&self) {
        if let Some(c) = self.cache {
            c.insert(&self.path, Arc::clone(&self.bytes.bytes));
        }
    }
}

/// The fetch half of [`read_sidecar_with`]: the switch, the `_EXTRA_FILES` lookup, the cache,
/// the read; validation is left to [`FetchedSidecar::validate`].
pub fn fetch_sidecar_with<'c, S: AsRef<str>>(
    manifest_dir: &Path,
    extra_files: &[S],
    facts: ManifestFacts,
    read: bool,
    cache: Option<&'c ByteCache>,
    fetch: impl FnOnce(&Path) -> io::Result<Vec<u8>>,
) -> io::Result<Result<FetchedSidecar<'c>, NoSidecar>> {
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
    Ok(Ok(FetchedSidecar {
        bytes: SidecarBytes { bytes, facts },
        path,
        cache: if from_cache { None } else { cache },
    }))
}
