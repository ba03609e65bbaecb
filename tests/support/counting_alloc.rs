//! A counting global allocator shared by the no-allocation tests: it forwards to the system
//! allocator and counts, per thread, the calls, the bytes and the largest request, so other
//! test threads never disturb a measurement. Include with
//! `#[path = "support/counting_alloc.rs"] mod counting_alloc;`.
#![allow(dead_code, unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static CALLS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
    static LARGEST: Cell<u64> = const { Cell::new(0) };
}

fn record(size: usize) {
    // `try_with`: the thread-local may already be gone while a thread shuts down.
    let _ = CALLS.try_with(|c| c.set(c.get() + 1));
    let _ = BYTES.try_with(|c| c.set(c.get() + size as u64));
    let _ = LARGEST.try_with(|c| c.set(c.get().max(size as u64)));
}

// SAFETY: every method forwards to the system allocator unchanged; the counters are
// thread-local `Cell`s with const initialisers, which never allocate.
unsafe impl GlobalAlloc for Counting {
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

#[global_allocator]
static GLOBAL: Counting = Counting;

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
    CALLS.get()
}
