//! Object stores as a [`Storage`] (feature `object-store`): `s3://`, `gs://`, `az://`,
//! `file://` and `memory://` URLs through the `object_store` crate, behind a blocking API
//! (a small tokio runtime inside).
//!
//! Clients are built by the crates' `from_env` builders, so the usual environment variables
//! work (for S3: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
//! `AWS_REGION`, `AWS_ENDPOINT` or `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`; `GOOGLE_*` and
//! `AZURE_*` likewise); explicit options override them. Timeouts are on (object_store's
//! defaults: 5 s to connect, 30 s per request), 5xx answers and dropped connections are
//! retried (object_store's `RetryConfig`, and a re-issued GET when a body breaks off), and a
//! range shorter than asked is an error, never short bytes.
//!
//! ```
//! use lakecore::io::{ObjectStorage, Storage};
//! use std::path::Path;
//! let (store, root) = ObjectStorage::open("memory:///warehouse/db.db/t", &[])?;
//! assert_eq!(root, Path::new("memory:///warehouse/db.db/t"));
//! store.put(&root.join("snapshot/LATEST"), b"1".to_vec())?;
//! assert_eq!(store.list(&root.join("snapshot"))?, ["LATEST"]);
//! assert_eq!(&store.read(&root.join("snapshot/LATEST"))?[..], b"1");
//! assert!(store.read(&root.join("snapshot/snapshot-1")).is_err());
//! # Ok::<(), std::io::Error>(())
//! ```

use super::storage::{RangeTuning, Storage, Stored};
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::time::Duration;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, RetryConfig};
use std::io;
use std::path::{Path, PathBuf};

/// An object store read through a blocking API; see the [module docs](self).
#[derive(Debug)]
pub struct ObjectStorage {
    store: Arc<dyn ObjectStore>,
    /// `scheme://authority` (no trailing slash): object `a/b` is `{base}/a/b`.
    base: String,
    runtime: tokio::runtime::Runtime,
    tuning: RangeTuning,
}

/// How often a GET whose body broke off is issued again (object_store retries failed
/// requests itself; a body cut short after the headers is not a failed request to it).
const BODY_ATTEMPTS: u32 = 3;

// The errors do not repeat the URL: the planner's and the CLI's errors name it already.
fn other(e: impl core::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

fn to_io(e: object_store::Error) -> io::Error {
    use object_store::Error as E;
    let kind = match &e {
        E::NotFound { .. } => io::ErrorKind::NotFound,
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => io::ErrorKind::PermissionDenied,
        E::InvalidPath { .. } => io::ErrorKind::InvalidInput,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, e.to_string())
}

/// Whether an error is worth a new GET (a broken body or connection), not a final answer.
fn retryable(e: &object_store::Error) -> bool {
    use object_store::Error as E;
    !matches!(
        e,
        E::NotFound { .. }
            | E::PermissionDenied { .. }
            | E::Unauthenticated { .. }
            | E::InvalidPath { .. }
            | E::NotSupported { .. }
            | E::NotImplemented { .. }
            | E::UnknownConfigurationKey { .. }
    )
}

/// The retry policy: a few quick retries within a minute (object_store's default waits up to
/// three minutes, too long for a planner that a user waits for).
fn retry_config() -> RetryConfig {
    RetryConfig {
        max_retries: 5,
        retry_timeout: Duration::from_secs(60),
        backoff: object_store::BackoffConfig {
            init_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
    }
}

fn bad_option(url: &str, key: &str, e: impl core::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        alloc::format!("{url}: option {key:?}: {e}"),
    )
}

impl ObjectStorage {
    /// Opens the store that `url` names and returns it with the URL as a path (trailing
    /// slashes removed) to join table paths to. `options` are the store's configuration
    /// keys (`aws_endpoint`, `aws_region`, `google_service_account`, `azure_storage_account_name`,
    /// `timeout`, `connect_timeout`, ...), applied over the environment's.
    ///
    /// Schemes: `s3`/`s3a`, `gs`, `az`/`azure`/`abfs`/`abfss`, `file` (absolute paths),
    /// `memory` (an empty store of this process, to fill with [`put`](Self::put)).
    pub fn open(url: &str, options: &[(&str, &str)]) -> io::Result<(Self, PathBuf)> {
        let url = url.trim_end_matches('/');
        let (scheme, rest) = url.split_once("://").ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                alloc::format!(
                    "{url}: not a URL (expected s3://, gs://, az://, file:// or memory://)"
                ),
            )
        })?;
        let authority = rest.split('/').next().unwrap_or_default();
        let base = match scheme {
            "file" | "memory" => alloc::format!("{scheme}://"),
            _ => alloc::format!("{scheme}://{authority}"),
        };
        let store: Arc<dyn ObjectStore> = match scheme {
            "s3" | "s3a" => {
                let mut b = object_store::aws::AmazonS3Builder::from_env().with_url(url);
                for (k, v) in options {
                    b = b.with_config(k.parse().map_err(|e| bad_option(url, k, e))?, *v);
                }
                Arc::new(b.with_retry(retry_config()).build().map_err(other)?)
            }
            "gs" => {
                let mut b = object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(url);
                for (k, v) in options {
                    b = b.with_config(k.parse().map_err(|e| bad_option(url, k, e))?, *v);
                }
                Arc::new(b.with_retry(retry_config()).build().map_err(other)?)
            }
            "az" | "azure" | "abfs" | "abfss" | "adl" => {
                let mut b = object_store::azure::MicrosoftAzureBuilder::from_env().with_url(url);
                for (k, v) in options {
                    b = b.with_config(k.parse().map_err(|e| bad_option(url, k, e))?, *v);
                }
                Arc::new(b.with_retry(retry_config()).build().map_err(other)?)
            }
            "file" => {
                if !rest.starts_with('/') {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        alloc::format!("{url}: a file:// URL needs an absolute path (file:///...)"),
                    ));
                }
                Arc::new(object_store::local::LocalFileSystem::new())
            }
            "memory" => Arc::new(object_store::memory::InMemory::new()),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    alloc::format!(
                        "{url}: unsupported scheme {scheme:?} (s3, gs, az, file or memory)"
                    ),
                ))
            }
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("lakecore-io")
            .enable_all()
            .build()
            .map_err(other)?;
        let storage = ObjectStorage {
            store,
            base,
            runtime,
            tuning: RangeTuning::default(),
        };
        Ok((storage, PathBuf::from(url)))
    }

    /// The same store with other range tuning (coalescing gap, fan-out, whole-GET share).
    #[must_use]
    pub fn with_tuning(mut self, tuning: RangeTuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// The object path of `path` (a URL under this store's base).
    fn object(&self, path: &Path) -> io::Result<ObjectPath> {
        let url = path.to_str().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "a URL must be valid UTF-8")
        })?;
        let rest = url.strip_prefix(self.base.as_str()).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                alloc::format!("{url} is not under {}", self.base),
            )
        })?;
        let object = ObjectPath::parse(rest.trim_start_matches('/')).map_err(|e| {
            io::Error::new(io::ErrorKind::InvalidInput, alloc::format!("{url}: {e}"))
        })?;
        Ok(object)
    }

    /// Writes `bytes` to the object at `path` (for tests and tools that fill a
    /// `memory://` store; the planner never writes).
    pub fn put(&self, path: &Path, bytes: Vec<u8>) -> io::Result<()> {
        let object = self.object(path)?;
        self.runtime
            .block_on(self.store.put(&object, bytes.into()))
            .map(|_| ())
            .map_err(to_io)
    }

    /// One GET of `range` (whole object when `None`), issued again when its body breaks off.
    async fn get(
        store: &dyn ObjectStore,
        object: &ObjectPath,
        range: Option<(u64, u64)>,
    ) -> io::Result<bytes::Bytes> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = match range {
                None => match store.get(object).await {
                    Ok(r) => r.bytes().await,
                    Err(e) => Err(e),
                },
                Some((offset, length)) => {
                    let end = offset.checked_add(length).ok_or_else(|| {
                        io::Error::new(io::ErrorKind::InvalidInput, "range overflows")
                    })?;
                    store.get_range(object, offset..end).await
                }
            };
            match result {
                Ok(b) => {
                    if let Some((offset, length)) = range {
                        if b.len() as u64 != length {
                            return Err(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                alloc::format!(
                                    "asked for {length} bytes at offset {offset}, got {}",
                                    b.len()
                                ),
                            ));
                        }
                    }
                    return Ok(b);
                }
                Err(e) if attempt < BODY_ATTEMPTS && retryable(&e) => {
                    tokio::time::sleep(Duration::from_millis(50 << attempt)).await;
                }
                Err(e) => return Err(to_io(e)),
            }
        }
    }
}

impl Storage for ObjectStorage {
    fn read(&self, path: &Path) -> io::Result<Stored> {
        let object = self.object(path)?;
        let bytes = self
            .runtime
            .block_on(Self::get(&*self.store, &object, None))?;
        Ok(Stored::Bytes(bytes))
    }

    fn read_ranges(&self, path: &Path, ranges: &[(u64, u64)]) -> io::Result<Vec<Stored>> {
        let object = self.object(path)?;
        let (store, object) = (&*self.store, &object);
        let fetch = futures::stream::iter(ranges.iter().copied())
            .map(|r| Self::get(store, object, Some(r)))
            .buffered(self.tuning.max_fan_out.max(1))
            .map_ok(Stored::Bytes)
            .try_collect::<Vec<_>>();
        self.runtime.block_on(fetch)
    }

    fn size(&self, path: &Path) -> io::Result<u64> {
        let object = self.object(path)?;
        let meta = self
            .runtime
            .block_on(self.store.head(&object))
            .map_err(to_io)?;
        Ok(meta.size)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let object = self.object(dir)?;
        let listing = self
            .runtime
            .block_on(self.store.list_with_delimiter(Some(&object)))
            .map_err(to_io)?;
        let mut out: Vec<String> = listing
            .objects
            .iter()
            .filter_map(|o| o.location.filename().map(String::from))
            .collect();
        out.extend(
            listing
                .common_prefixes
                .iter()
                .filter_map(|p| p.filename().map(String::from)),
        );
        if out.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no objects under this prefix",
            ));
        }
        Ok(out)
    }

    fn is_remote(&self) -> bool {
        true
    }

    fn tuning(&self) -> RangeTuning {
        self.tuning
    }
}

impl ObjectStorage {
    /// Runs `future` to completion on this store's runtime (the blocking API's own), e.g. an
    /// arrow-rs `ParquetRecordBatchStream` over an [`ObjectFileReader`].
    pub fn block_on<F: core::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}

/// One object read by ranges as an arrow-rs [`AsyncFileReader`] (features `object-store` and
/// `arrow`): `get_bytes` is one ranged GET (issued again when its body breaks off, an error
/// when the object is shorter than asked), `get_byte_ranges` merges ranges closer than the
/// store's [`RangeTuning::coalesce_gap`] and fetches the merged ones with at most
/// [`RangeTuning::max_fan_out`] GETs in flight. Errors name the object's URL.
///
/// It has no metadata of its own: wrap it in
/// [`ModularAsyncReader`](crate::footer::arrow::ModularAsyncReader), whose `get_metadata`
/// returns the projected metadata of the modular footer, fetched from the object's tail.
/// Drive its futures with [`ObjectStorage::block_on`] (or any tokio runtime).
///
/// ```
/// use lakecore::io::{ObjectStorage, Storage};
/// use parquet::arrow::async_reader::AsyncFileReader;
/// use std::path::Path;
/// let (store, root) = ObjectStorage::open("memory:///data", &[])?;
/// store.put(&root.join("f"), b"0123456789".to_vec())?;
/// let mut reader = store.file_reader(&root.join("f"))?;
/// assert_eq!(reader.len(), 10);
/// let parts = store.block_on(reader.get_byte_ranges(vec![6..8, 1..3]))?;
/// assert_eq!((&parts[0][..], &parts[1][..]), (&b"67"[..], &b"12"[..]));
/// assert!(store.block_on(reader.get_bytes(8..12)).is_err()); // past the end
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// [`AsyncFileReader`]: parquet::arrow::async_reader::AsyncFileReader
#[cfg(feature = "arrow")]
#[derive(Debug, Clone)]
pub struct ObjectFileReader {
    store: Arc<dyn ObjectStore>,
    object: ObjectPath,
    url: String,
    len: u64,
    tuning: RangeTuning,
}

#[cfg(feature = "arrow")]
impl ObjectStorage {
    /// A reader of the object at `path` (a URL under this store), for arrow-rs. One HEAD
    /// request learns its size.
    pub fn file_reader(&self, path: &Path) -> io::Result<ObjectFileReader> {
        let len = self.size(path)?;
        Ok(ObjectFileReader {
            store: Arc::clone(&self.store),
            object: self.object(path)?,
            url: path.display().to_string(),
            len,
            tuning: self.tuning,
        })
    }
}

#[cfg(feature = "arrow")]
impl ObjectFileReader {
    /// The object's size in bytes (from the HEAD request).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the object is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The object's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn error(&self, e: io::Error) -> parquet::errors::ParquetError {
        parquet::errors::ParquetError::External(alloc::boxed::Box::new(io::Error::new(
            e.kind(),
            alloc::format!("{}: {e}", self.url),
        )))
    }

    async fn fetch(&self, range: core::ops::Range<u64>) -> parquet::errors::Result<bytes::Bytes> {
        let length = range.end.checked_sub(range.start).ok_or_else(|| {
            parquet::errors::ParquetError::General(alloc::format!(
                "{}: range {range:?} ends before it starts",
                self.url
            ))
        })?;
        Self::get_checked(self, range.start, length).await
    }

    async fn get_checked(&self, offset: u64, length: u64) -> parquet::errors::Result<bytes::Bytes> {
        if offset.checked_add(length).is_none_or(|end| end > self.len) {
            return Err(self.error(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                alloc::format!(
                    "range of {length} bytes at offset {offset} ends past the end of the \
                     {}-byte object (truncated?)",
                    self.len
                ),
            )));
        }
        ObjectStorage::get(&*self.store, &self.object, Some((offset, length)))
            .await
            .map_err(|e| self.error(e))
    }
}

#[cfg(feature = "arrow")]
impl parquet::arrow::async_reader::AsyncFileReader for ObjectFileReader {
    fn get_bytes(
        &mut self,
        range: core::ops::Range<u64>,
    ) -> futures::future::BoxFuture<'_, parquet::errors::Result<bytes::Bytes>> {
        use futures::FutureExt;
        async move { self.fetch(range).await }.boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<core::ops::Range<u64>>,
    ) -> futures::future::BoxFuture<'_, parquet::errors::Result<Vec<bytes::Bytes>>> {
        use futures::FutureExt;
        async move {
            // Sorted by start, merged when closer than the gap (overlaps merge too).
            let mut sorted: Vec<&core::ops::Range<u64>> = ranges.iter().collect();
            sorted.sort_by_key(|r| r.start);
            let mut merged: Vec<(u64, u64)> = Vec::new();
            for r in sorted {
                if r.end < r.start {
                    return Err(parquet::errors::ParquetError::General(alloc::format!(
                        "{}: range {r:?} ends before it starts",
                        self.url
                    )));
                }
                match merged.last_mut() {
                    Some((_, end)) if r.start <= end.saturating_add(self.tuning.coalesce_gap) => {
                        *end = (*end).max(r.end);
                    }
                    _ => merged.push((r.start, r.end)),
                }
            }
            let this = &*self;
            let fetched: Vec<bytes::Bytes> = futures::stream::iter(merged.iter().copied())
                .map(|(start, end)| this.get_checked(start, end - start))
                .buffered(self.tuning.max_fan_out.max(1))
                .try_collect()
                .await?;
            let mut out = Vec::with_capacity(ranges.len());
            for r in &ranges {
                // The merged range holding r: the last one starting at or before it.
                let k = merged
                    .partition_point(|&(s, _)| s <= r.start)
                    .saturating_sub(1);
                let part = merged.get(k).zip(fetched.get(k)).and_then(|(&(s, _), b)| {
                    let from = usize::try_from(r.start - s).ok()?;
                    let to = usize::try_from(r.end - s).ok()?;
                    (from <= to && to <= b.len()).then(|| b.slice(from..to))
                });
                match part {
                    Some(p) => out.push(p),
                    None => {
                        return Err(self.error(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            alloc::format!("range {r:?} not inside the fetched bytes"),
                        )))
                    }
                }
            }
            Ok(out)
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        _options: Option<&'a parquet::arrow::arrow_reader::ArrowReaderOptions>,
    ) -> futures::future::BoxFuture<
        'a,
        parquet::errors::Result<Arc<parquet::file::metadata::ParquetMetaData>>,
    > {
        use futures::FutureExt;
        let url = self.url.clone();
        async move {
            Err(parquet::errors::ParquetError::General(alloc::format!(
                "{url}: ObjectFileReader has no metadata of its own: wrap it in \
                 footer::arrow::ModularAsyncReader"
            )))
        }
        .boxed()
    }
}
