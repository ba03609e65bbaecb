//! A counting global allocator for the no-allocation and limit tests: it forwards to the
//! system allocator and counts, per thread, the calls, the bytes and the largest request, so
//! other test threads never disturb a measurement. A test binary installs it with
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: lakecore_testkit::counting::CountingAlloc = lakecore_testkit::counting::CountingAlloc;
//! ```
//!
//! and [`measure`] and [`calls`] panic when it is not installed (they would count nothing).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// The counting allocator; install it as the binary's `#[global_allocator]`.
#[derive(Debug)]
pub struct CountingAlloc;

/// Set by the first allocation through [`CountingAlloc`].
static INSTALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    static CALLS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
    static LARGEST: Cell<u64> = const { Cell::new(0) };
}

fn record(size: usize) {
    INSTALLED.store(true, Ordering::Relaxed);
    // `try_with`: the thread-local may already be gone while a thread shuts down.
    let _ = CALLS.try_with(|c| c.set(c.get() + 1));
    let _ = BYTES.try_with(|c| c.set(c.get() + size as u64));
    let _ = LARGEST.try_with(|c| c.set(c.get().max(size as u64)));
}

// SAFETY: every method forwards to the system allocator unchanged; the counters are an atomic
// flag and thread-local `Cell`s with const initialisers, none of which allocate.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Panics unless [`CountingAlloc`] is the global allocator (the test harness allocates before
/// any test runs, so an installed one has counted by now).
fn assert_installed() {
    assert!(
        INSTALLED.load(Ordering::Relaxed),
        "CountingAlloc is not this binary's #[global_allocator]: nothing would be counted"
    );
}

/// What one measured call allocated on this thread.
#[derive(Clone, Copy, Debug)]
pub struct Allocs {
    /// Allocation and reallocation calls.
    pub calls: u64,
    /// Bytes requested.
    pub bytes: u64,
    /// The largest single request.
    pub largest: u64,
}

/// Runs `f` and reports what it allocated on this thread.
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, Allocs) {
    assert_installed();
    let before = (CALLS.get(), BYTES.get());
    LARGEST.set(0);
    let r = f();
    let allocs = Allocs {
        calls: CALLS.get() - before.0,
        bytes: BYTES.get() - before.1,
        largest: LARGEST.get(),
    };
    (r, allocs)
}

/// Allocation calls made on this thread so far.
pub fn calls() -> u64 {
    assert_installed();
    CALLS.get()
}
