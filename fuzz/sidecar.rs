//! Bolero harnesses for the sidecar validator and every iterator over a validated view.
//!
//! `cargo test --test fuzz_sidecar` runs a short bounded pass; `cargo bolero test` runs the
//! same targets under a fuzzing engine.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "std")]

use lakecore_testkit::data::golden;
use lakecore_testkit::sidecar::{drive, reseal};

fn iterations() -> usize {
    if cfg!(miri) {
        20
    } else {
        20000
    }
}

/// Arbitrary bytes: validation never panics; valid inputs are driven completely.
#[test]
fn sidecar_arbitrary_bytes() {
    bolero::check!()
        .with_iterations(iterations())
        .with_max_len(4096)
        .for_each(|bytes: &[u8]| {
            drive(bytes);
        });
}

/// Structured mutations of the golden files with a resealed checksum, so the mutation
/// reaches the container fields and payloads behind the trailer check.
#[test]
fn sidecar_resealed_golden_mutations() {
    let seeds = [
        golden("compact-v1.hex"),
        golden("fixed-v1.hex"),
        golden("compact-v1-no-rowid-no-bucket.hex"),
        golden("fixed-v1-no-rowid-no-bucket.hex"),
    ];
    bolero::check!()
        .with_iterations(iterations())
        .with_type::<(u8, Vec<(u16, u8)>, u16)>()
        .for_each(|(seed, edits, cut)| {
            let mut m = seeds[usize::from(*seed) % seeds.len()].clone();
            for &(at, v) in edits.iter().take(4) {
                let i = usize::from(at) % m.len();
                m[i] = v;
            }
            // Occasionally cut the body short (keeping a resealed trailer).
            let cut = usize::from(*cut);
            if cut % 4 == 0 && m.len() > 40 {
                let keep = 5 + cut % (m.len() - 5);
                m.truncate(keep);
            }
            reseal(&mut m);
            drive(&m);
        });
}
