//! A `no_std`, `no_main` program for a Cortex-M4 (`thumbv7em-none-eabi`) that validates an
//! embedded compact-layout Paimon sidecar and selects the manifest blocks holding row 20,
//! without an allocator. It shows the core fits a microcontroller: `.ci/platforms.sh`
//! links it with `examples/embedded/link.x` and reports its `.text` size (in the README).
//!
//! ```text
//! cargo rustc --release --no-default-features --example embedded_sidecar \
//!     --target thumbv7em-none-eabi -- -C link-arg=-Texamples/embedded/link.x
//! ```
//!
//! The sidecar is `tests/data/golden/compact-v1.hex` (Apache Paimon's own golden file),
//! decoded from hex at compile time. On a hosted target the same check runs as an ordinary
//! program (`cargo run --example embedded_sidecar`), so host builds and clippy cover it.

#![cfg_attr(target_os = "none", no_std, no_main)]

use lakecore::sidecar::{ManifestFacts, Query, RowRange, RowRanges, Sidecar, SidecarOptions};

const HEX: &str = include_str!("../tests/data/golden/compact-v1.hex");
const LEN: usize = hex_digits(HEX.as_bytes()) / 2;
/// The sidecar bytes, decoded from the golden hex file by the compiler.
static SIDECAR: [u8; LEN] = unhex(HEX.as_bytes());
/// What the manifest list says of the manifest the golden sidecar describes.
const FACTS: ManifestFacts = ManifestFacts {
    length: 457,
    entries: 7,
};

const fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

const fn hex_digits(text: &[u8]) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < text.len() {
        if nibble(text[i]).is_some() {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn unhex<const N: usize>(text: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    let (mut i, mut n) = (0, 0);
    while i < text.len() {
        if let Some(v) = nibble(text[i]) {
            out[n / 2] = (out[n / 2] << 4) | v;
            n += 1;
        }
        i += 1;
    }
    out
}

/// Validates the sidecar against the manifest facts and selects the blocks that hold row 20.
/// Returns the number of selected blocks and the sum of their first entry ordinals
/// (Paimon's golden file: blocks 0 and 5, so `(2, 5)`), or `None` if anything failed.
fn run() -> Option<(u32, u64)> {
    let options = SidecarOptions { facts: Some(FACTS) };
    let sidecar = Sidecar::parse_with(&SIDECAR, &options).ok()?;
    let rows = [RowRange::single(20)];
    let query = Query::new().rows(RowRanges::new(&rows)?);
    let (mut count, mut first_records) = (0u32, 0u64);
    for block in sidecar.select(&query) {
        let block = block.ok()?;
        count += 1;
        first_records += block.first_record;
    }
    Some((count, first_records))
}

// `no_mangle` (the entry point and the result a debugger reads) counts as unsafe code.
#[cfg(target_os = "none")]
#[allow(unsafe_code)]
mod bare_metal {
    /// The result for a debugger to read: 1 when the selection was the expected one, 2 when
    /// not (0 until `_start` has run).
    #[no_mangle]
    static mut RESULT: u32 = 0;

    /// The entry point (`ENTRY(_start)` in `examples/embedded/link.x`).
    #[no_mangle]
    pub extern "C" fn _start() -> ! {
        let ok = super::run() == Some((2, 5));
        let code = if ok { 1 } else { 2 };
        // SAFETY: single-threaded bare metal; nothing else touches `RESULT`, and the raw
        // pointer avoids a reference to a `static mut`.
        unsafe { core::ptr::write_volatile(&raw mut RESULT, code) };
        loop {
            core::hint::spin_loop();
        }
    }

    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
        loop {
            core::hint::spin_loop();
        }
    }
}

#[cfg(not(target_os = "none"))]
fn main() {
    assert_eq!(run(), Some((2, 5)), "validation or selection failed");
    println!("compact sidecar ({LEN} bytes) valid; row 20 is in 2 blocks (first entries 0 and 5)");
}
