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
