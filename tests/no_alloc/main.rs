//! The read paths allocate nothing: foundation codecs, sidecars, BLOB files, footers and
//! manifest entries, each run between two readings of a counting global allocator. It counts
//! per thread, so one allocator serves every test of this binary while they run in parallel.

use lakecore_testkit::counting::CountingAlloc;

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

mod blob;
mod codecs;
mod footer;
mod footer_crypt;
mod manifest;
mod sidecar;
