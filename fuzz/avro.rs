//! Bolero harnesses for the Avro container scanner and `build_from_manifest`: arbitrary bytes
//! and mutated real Paimon manifests never panic.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "paimon")]

use lakecore::codec::avro::Container;
use lakecore::paimon::manifest::build_from_manifest;
use lakecore::sidecar::{BuildSettings, Layout, Sidecar};

fn scan(bytes: &[u8]) {
    if let Ok(c) = Container::parse(bytes) {
        let _ = c.metadata_entries().count();
        let _ = c.codec();
        for b in c.blocks() {
            if b.is_err() {
                break;
            }
        }
    }
    for layout in [Layout::Fixed, Layout::Compact] {
        let settings = BuildSettings {
            layout,
            ..BuildSettings::default()
        };
        if let Ok(sidecar) = build_from_manifest(bytes, settings) {
            // Whatever is built must validate against the manifest it came from.
            assert!(Sidecar::parse(&sidecar).is_ok());
        }
    }
}

fn iterations() -> usize {
    if cfg!(miri) {
        10
    } else {
        2000
    }
}

#[test]
fn avro_arbitrary_bytes() {
    bolero::check!()
        .with_iterations(iterations())
        .with_max_len(2048)
        .for_each(|bytes: &[u8]| scan(bytes));
}

#[test]
fn avro_mutated_real_manifests() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/paimon/warehouse/sc.db/codec_snappy_rs/manifest"
    );
    let seeds: Vec<Vec<u8>> = [
        "manifest-7cfc433b-123d-43f6-aa43-4deccc307082-0",
        "manifest-f8d56aa4-3f9a-4ba0-adc7-88f5795ac59b-0",
    ]
    .iter()
    .map(|n| std::fs::read(format!("{dir}/{n}")).unwrap())
    .collect();
    let de = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/paimon/warehouse/sc.db/de_rs/manifest/manifest-3ac6cef4-5147-484b-b123-dec1d9288f4f-0"
    );
    let mut seeds = seeds;
    seeds.push(std::fs::read(de).unwrap());
    bolero::check!()
        .with_iterations(iterations())
        .with_type::<(u8, Vec<(u16, u8)>)>()
        .for_each(|(seed, edits)| {
            let mut m = seeds[usize::from(*seed) % seeds.len()].clone();
            for &(at, v) in edits.iter().take(3) {
                // Aim at the blocks (after the ~2 KiB header) as often as at the header.
                let i = usize::from(at) % m.len();
                let i = if at % 2 == 0 {
                    m.len() - 1 - i % (m.len() / 4)
                } else {
                    i
                };
                m[i] = v;
            }
            scan(&m);
        });
}
