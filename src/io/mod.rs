//! File I/O for sidecars (feature `std`): mapping, the `read` fallback rules, span reads and
//! a byte-bounded cache.
