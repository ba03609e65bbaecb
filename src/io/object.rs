//! Object stores as a [`Storage`] (feature `object-store`): `s3://`, `gs://`, `az://`,
//! `file://` and `memory://` URLs through the `object_store` crate, behind a blocking API
//! (a small tokio runtime inside).
//!
//! Clients are built by the crates' `from_env` builders, so the usual environment variables
//! work (for S3: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
//! `AWS_REGION`, `AWS_ENDPOINT` or `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`; `GOOGLE_*` and
//! `AZURE_*` likewise, e.g. `AZURE_STORAGE_USE_EMULATOR=true` and `AZURITE_BLOB_STORAGE_URL`
//! for Azurite); explicit options override them. For `gs://`, `STORAGE_EMULATOR_HOST` (the
//! variable Google's client libraries read, which object_store does not) points the client at
//! a GCS emulator without OAuth, unless a base URL or credentials are configured. Errors a
//! user can fix say what to check: refused credentials (401/403) name the store's credential
//! variables, a missing object or bucket (404) says to check that it exists, a client that
//! cannot be built says what to set. Timeouts are on (object_store's
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
    backend: Backend,
}

/// Which kind of store a URL names: what its errors tell the user to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    S3,
    Gcs,
    Azure,
    Local,
}

impl Backend {
    /// What to check when the store refuses the credentials.
    fn credentials_hint(self) -> &'static str {
        match self {
            Backend::S3 => {
                "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for \
                 temporary credentials) or the `aws_*` options"
            }
            Backend::Gcs => {
                "check GOOGLE_SERVICE_ACCOUNT (a key file), GOOGLE_SERVICE_ACCOUNT_KEY or \
                 GOOGLE_APPLICATION_CREDENTIALS, or the `google_*` options"
            }
            Backend::Azure => {
                "check AZURE_STORAGE_ACCOUNT_NAME and AZURE_STORAGE_ACCOUNT_KEY (or \
                 AZURE_STORAGE_SAS_KEY), or the `azure_*` options"
            }
            Backend::Local => "check the file's permissions",
        }
    }

    /// What to check when an object is missing.
    fn not_found_hint(self) -> &'static str {
        match self {
            Backend::S3 | Backend::Gcs => {
                "check that the bucket exists and the path is right (and, for an emulator or \
                 another endpoint, that the endpoint is the one holding it)"
            }
            Backend::Azure => {
                "check that the container exists in the storage account and the path is \
                 right (and, for Azurite, that AZURITE_BLOB_STORAGE_URL names the one holding it)"
            }
            Backend::Local => "check the path",
        }
    }

    /// A client that could not be built (a missing account, an unreadable key): what to set.
    fn config_error(self, e: object_store::Error) -> io::Error {
        let hint = match self {
            Backend::S3 => {
                "set AWS_REGION and the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), \
                 and AWS_ENDPOINT_URL for another endpoint"
            }
            Backend::Gcs => {
                "set GOOGLE_SERVICE_ACCOUNT (a key file) or GOOGLE_SERVICE_ACCOUNT_KEY (its \
                 JSON), or STORAGE_EMULATOR_HOST for an emulator"
            }
            Backend::Azure => {
                "set AZURE_STORAGE_ACCOUNT_NAME and AZURE_STORAGE_ACCOUNT_KEY (or \
                 AZURE_STORAGE_SAS_KEY), or AZURE_STORAGE_USE_EMULATOR=true for Azurite"
            }
            Backend::Local => "",
        };
        io::Error::new(
            io::ErrorKind::InvalidInput,
            alloc::format!("cannot configure the client: {e} ({hint})"),
        )
    }

    /// `e` as an I/O error of the same kind, with what to check for the kinds a user can fix.
    fn error(self, e: object_store::Error) -> io::Error {
        let mut e = to_io(e);
        if e.kind() == io::ErrorKind::Other {
            // object_store reports a failed list request as a generic error whose text alone
            // holds the status (`... non-2xx status code: 403 Forbidden ...`).
            let kind = match reported_status(&e.to_string()) {
                Some(401 | 403) => io::ErrorKind::PermissionDenied,
                Some(404) => io::ErrorKind::NotFound,
                _ => io::ErrorKind::Other,
            };
            e = io::Error::new(kind, e.to_string());
        }
        let hint = match e.kind() {
            io::ErrorKind::PermissionDenied => self.credentials_hint(),
            io::ErrorKind::NotFound => self.not_found_hint(),
            _ => return e,
        };
        io::Error::new(e.kind(), alloc::format!("{e} ({hint})"))
    }
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

/// The HTTP status an object_store error's text reports (`status code: NNN`), if any.
fn reported_status(text: &str) -> Option<u16> {
    const MARK: &str = "status code: ";
    let at = text.find(MARK)?;
    let digits = text.get(at + MARK.len()..)?;
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits.get(..end)?.parse().ok()
}

/// The service-account key that turns OAuth off (object_store's own switch for emulators):
/// requests carry no token and are not signed.
const EMULATOR_KEY: &str =
    r#"{"private_key":"","private_key_id":"","client_email":"","disable_oauth":true}"#;

/// Honors `STORAGE_EMULATOR_HOST` (`host:port` or a URL), the variable by which Google's
/// client libraries and the GCS emulators (fake-gcs-server, gcp-storage-emulator) meet, and
/// which object_store does not read: requests go to that host (`http://` unless it names a
/// scheme) without OAuth. A base URL (`GOOGLE_BASE_URL`, option `google_base_url`) or
/// credentials configured explicitly (a service account or its key, a bearer token) win.
fn gcs_emulator(
    mut b: object_store::gcp::GoogleCloudStorageBuilder,
    host: Option<&str>,
) -> object_store::gcp::GoogleCloudStorageBuilder {
    use object_store::gcp::GoogleConfigKey as K;
    let Some(host) = host.map(str::trim).filter(|h| !h.is_empty()) else {
        return b;
    };
    if b.get_config_value(&K::BaseUrl).is_none() {
        let host = host.trim_end_matches('/');
        let base = if host.contains("://") {
            host.to_string()
        } else {
            alloc::format!("http://{host}")
        };
        b = b.with_base_url(&base);
    }
    let configured = [K::ServiceAccount, K::ServiceAccountKey, K::BearerToken]
        .iter()
        .any(|k| b.get_config_value(k).is_some());
    if !configured {
        b = b.with_service_account_key(EMULATOR_KEY);
    }
    b
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
        let backend = match scheme {
            "s3" | "s3a" => Backend::S3,
            "gs" => Backend::Gcs,
            "az" | "azure" | "abfs" | "abfss" | "adl" => Backend::Azure,
            _ => Backend::Local,
        };
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
                let store = b.with_retry(retry_config()).build();
                Arc::new(store.map_err(|e| Backend::S3.config_error(e))?)
            }
            "gs" => {
                let mut b = object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(url);
                for (k, v) in options {
                    b = b.with_config(k.parse().map_err(|e| bad_option(url, k, e))?, *v);
                }
                let host = std::env::var("STORAGE_EMULATOR_HOST").ok();
                let b = gcs_emulator(b, host.as_deref());
                let store = b.with_retry(retry_config()).build();
                Arc::new(store.map_err(|e| Backend::Gcs.config_error(e))?)
            }
            "az" | "azure" | "abfs" | "abfss" | "adl" => {
                let mut b = object_store::azure::MicrosoftAzureBuilder::from_env().with_url(url);
                for (k, v) in options {
                    b = b.with_config(k.parse().map_err(|e| bad_option(url, k, e))?, *v);
                }
                let store = b.with_retry(retry_config()).build();
                Arc::new(store.map_err(|e| Backend::Azure.config_error(e))?)
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
            backend,
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
            .map_err(|e| self.backend.error(e))
    }

    /// One GET of `range` (whole object when `None`), issued again when its body breaks off.
    async fn get(
        backend: Backend,
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
                Err(e) => return Err(backend.error(e)),
            }
        }
    }
}

impl Storage for ObjectStorage {
    fn read(&self, path: &Path) -> io::Result<Stored> {
        let object = self.object(path)?;
        let bytes = self
            .runtime
            .block_on(Self::get(self.backend, &*self.store, &object, None))?;
        Ok(Stored::Bytes(bytes))
    }

    fn read_ranges(&self, path: &Path, ranges: &[(u64, u64)]) -> io::Result<Vec<Stored>> {
        let object = self.object(path)?;
        let (store, object, backend) = (&*self.store, &object, self.backend);
        let fetch = futures::stream::iter(ranges.iter().copied())
            .map(|r| Self::get(backend, store, object, Some(r)))
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
            .map_err(|e| self.backend.error(e))?;
        Ok(meta.size)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let object = self.object(dir)?;
        let listing = self
            .runtime
            .block_on(self.store.list_with_delimiter(Some(&object)))
            .map_err(|e| self.backend.error(e))?;
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
                alloc::format!(
                    "no objects under this prefix ({})",
                    self.backend.not_found_hint()
                ),
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
    backend: Backend,
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
            backend: self.backend,
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
        ObjectStorage::get(
            self.backend,
            &*self.store,
            &self.object,
            Some((offset, length)),
        )
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

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey as K};

    fn gcs(host: Option<&str>, b: GoogleCloudStorageBuilder) -> (Option<String>, Option<String>) {
        let b = gcs_emulator(b.with_url("gs://bucket/warehouse"), host);
        (
            b.get_config_value(&K::BaseUrl),
            b.get_config_value(&K::ServiceAccountKey),
        )
    }

    #[test]
    fn storage_emulator_host_points_gcs_at_the_emulator_without_oauth() {
        let fresh = GoogleCloudStorageBuilder::new;
        // Unset or blank: nothing changes.
        assert_eq!(gcs(None, fresh()), (None, None));
        assert_eq!(gcs(Some("  "), fresh()), (None, None));
        // host:port is reached over http; a URL keeps its scheme, less a trailing slash.
        let key = Some(EMULATOR_KEY.to_string());
        assert_eq!(
            gcs(Some("127.0.0.1:4443"), fresh()),
            (Some("http://127.0.0.1:4443".into()), key.clone())
        );
        assert_eq!(
            gcs(Some("https://emulator:9023/"), fresh()),
            (Some("https://emulator:9023".into()), key.clone())
        );
        // An explicit base URL, service-account key or file, or bearer token wins.
        let (base, k) = gcs(Some("h:1"), fresh().with_base_url("http://other:2"));
        assert_eq!((base.as_deref(), k), (Some("http://other:2"), key));
        let (base, k) = gcs(Some("h:1"), fresh().with_service_account_key("{}"));
        assert_eq!(
            (base.as_deref(), k.as_deref()),
            (Some("http://h:1"), Some("{}"))
        );
        let b = gcs_emulator(fresh().with_service_account_path("/k.json"), Some("h:1"));
        assert_eq!(b.get_config_value(&K::ServiceAccountKey), None);
        let b = gcs_emulator(fresh().with_config(K::BearerToken, "t"), Some("h:1"));
        assert_eq!(b.get_config_value(&K::ServiceAccountKey), None);
        // The emulator key is one object_store accepts: the client builds (no request made).
        let b = gcs_emulator(fresh().with_url("gs://bucket"), Some("127.0.0.1:9"));
        assert!(b.build().is_ok());
    }

    #[test]
    fn errors_say_what_to_check() {
        let missing = || object_store::Error::NotFound {
            path: "warehouse/t/snapshot/LATEST".into(),
            source: "404".into(),
        };
        let refused = || object_store::Error::PermissionDenied {
            path: "warehouse/t".into(),
            source: "403 AuthorizationFailure".into(),
        };
        let e = Backend::Azure.error(missing());
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let text = e.to_string();
        assert!(text.contains("snapshot/LATEST") && text.contains("container exists"));
        let e = Backend::Gcs.error(refused());
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(e.to_string().contains("GOOGLE_SERVICE_ACCOUNT"), "{e}");
        assert!(Backend::Azure
            .error(refused())
            .to_string()
            .contains("AZURE_STORAGE_ACCOUNT_KEY"));
        assert!(Backend::S3
            .error(refused())
            .to_string()
            .contains("AWS_SECRET_ACCESS_KEY"));
        // A list request's failure carries its status in the text only.
        let listed = |status: &str| object_store::Error::Generic {
            store: "GCS",
            source: alloc::format!(
                "Error performing list request: Error performing GET http://h/b?list-type=2 \
                 - Server returned non-2xx status code: {status}: <Error/>"
            )
            .into(),
        };
        let e = Backend::Gcs.error(listed("403 Forbidden"));
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(e.to_string().contains("GOOGLE_SERVICE_ACCOUNT"), "{e}");
        let e = Backend::Gcs.error(listed("404 Not Found"));
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("bucket exists"), "{e}");
        let e = Backend::Gcs.error(listed("500 Internal Server Error"));
        assert_eq!(e.kind(), io::ErrorKind::Other);
        assert_eq!(reported_status("status code: 4"), Some(4));
        assert_eq!(reported_status("status code: x"), None);
        assert_eq!(reported_status("status code: "), None);
        assert_eq!(reported_status("no status"), None);
        // Other errors are passed on as they are.
        let generic = object_store::Error::Generic {
            store: "S3",
            source: "connection reset".into(),
        };
        let e = Backend::S3.error(generic);
        assert_eq!(
            (e.kind(), e.to_string().contains("check")),
            (io::ErrorKind::Other, false)
        );
        // A client that cannot be built names what to set.
        let e = object_store::azure::MicrosoftAzureBuilder::new()
            .with_url("az://container/t")
            .build()
            .expect_err("no account");
        let e = Backend::Azure.config_error(e);
        assert!(e.to_string().contains("AZURE_STORAGE_USE_EMULATOR"), "{e}");
    }
}
