//! Statistics encryption: the cost of reading a protected chunk's statistics against the
//! plaintext path over the same footer shape (same run, ratios).
//!
//! - `plaintext_chunk_statistics/40x8`: `chunk_statistics(c, g)` of every chunk of a footer
//!   written without encryption (zero-copy).
//! - `decrypt_chunk_statistics/40x8`: `decrypt_statistics(c, g, &keys)` + `statistics()` of
//!   every chunk of the same input with every column protected (AES-256-GCM).
//! - `decrypt_column_statistics/40x8`: the same, each column looked up once
//!   (`statistics_encryption().columns()` + `decrypt_column_statistics`).
//! - `decrypt_module_only/40x8`: only the AES-GCM opening of the same statistics modules
//!   (keys and AADs prepared), to split crypto from lookup and parsing.
//! - `decrypt_column_index/40x8`: `decrypt_column_index` + `column_index()` of every chunk.
//! - `write_plain/40x8` vs `write_encrypted/40x8`: the writer.
//!
//! Footer sizes (plain vs encrypted) are printed once at start-up.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use criterion::{criterion_group, criterion_main, Criterion};
use lakecore::footer::{
    decrypt_module, module_aad, AadModule, ColumnEncryption, EncryptionConfig, FooterInput,
    ModularFooter, StaticKeys,
};
use lakecore_testkit::footer::random_input;
use std::hint::black_box;
use std::time::Duration;

const C: u32 = 40;
const G: u32 = 8;

fn config() -> EncryptionConfig {
    EncryptionConfig {
        columns: (0..C)
            .map(|c| ColumnEncryption::with_key(c, vec![c as u8; 32], vec![c as u8]))
            .collect(),
        ..EncryptionConfig::default()
    }
}

fn keys() -> StaticKeys {
    (0..C).fold(StaticKeys::new(), |k, c| k.with(&[c as u8], &[c as u8; 32]))
}

fn files(input: &FooterInput, data_len: usize) -> (Vec<u8>, Vec<u8>) {
    let mut plain = b"PAR1".to_vec();
    plain.resize(data_len, 0);
    let mut enc = plain.clone();
    input.write(&mut plain).unwrap();
    input.write_encrypted(&mut enc, &config()).unwrap();
    (plain, enc)
}

fn bench(c: &mut Criterion) {
    let (input, data_len) = random_input(2026, C, G);
    let (plain, enc) = files(&input, data_len);
    println!(
        "footer bytes, {C} columns x {G} row groups: plain {}, every column encrypted {} ({:.2}x)",
        plain.len() - data_len,
        enc.len() - data_len,
        (enc.len() - data_len) as f64 / (plain.len() - data_len) as f64
    );
    let keys = keys();
    let mut g = c.benchmark_group("footer_crypt");
    g.measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500));
    let id = format!("{C}x{G}");
    g.bench_function(format!("plaintext_chunk_statistics/{id}"), |b| {
        let f = ModularFooter::parse(&plain).unwrap();
        b.iter(|| {
            let mut n = 0u64;
            for col in 0..C {
                for rg in 0..G {
                    if let Some(s) = f.chunk_statistics(col, rg).unwrap() {
                        n += s.null_count.unwrap_or(0) + s.min.map_or(0, |m| m.len() as u64);
                    }
                }
            }
            black_box(n)
        });
    });
    g.bench_function(format!("decrypt_chunk_statistics/{id}"), |b| {
        let f = ModularFooter::parse(&enc).unwrap();
        b.iter(|| {
            let mut n = 0u64;
            for col in 0..C {
                for rg in 0..G {
                    if let Some(d) = f.decrypt_statistics(col, rg, &keys).unwrap() {
                        let s = d.statistics().unwrap();
                        n += s.null_count.unwrap_or(0) + s.min.map_or(0, |m| m.len() as u64);
                    }
                }
            }
            black_box(n)
        });
    });
    g.bench_function(format!("decrypt_column_statistics/{id}"), |b| {
        let f = ModularFooter::parse(&enc).unwrap();
        b.iter(|| {
            let mut n = 0u64;
            let e = f.statistics_encryption().unwrap().unwrap();
            for col in e.columns() {
                let col = col.unwrap();
                for rg in 0..G {
                    if let Some(d) = f.decrypt_column_statistics(&e, &col, rg, &keys).unwrap() {
                        let s = d.statistics().unwrap();
                        n += s.null_count.unwrap_or(0) + s.min.map_or(0, |m| m.len() as u64);
                    }
                }
            }
            black_box(n)
        });
    });
    g.bench_function(format!("decrypt_module_only/{id}"), |b| {
        // The AES-GCM work alone: every statistics module, AADs and keys prepared.
        let f = ModularFooter::parse(&enc).unwrap();
        let e = f.statistics_encryption().unwrap().unwrap();
        let file_aad = e.file_aad();
        let mut modules = Vec::new();
        for col in e.columns() {
            let col = col.unwrap();
            for rg in 0..G {
                let (a, z) = col.statistics_range(rg).unwrap();
                if a < z {
                    let aad =
                        module_aad(&file_aad, AadModule::ColumnMetaData, rg, col.column).unwrap();
                    modules.push((vec![col.column as u8; 32], aad, a as usize..z as usize));
                }
            }
        }
        b.iter(|| {
            let mut n = 0usize;
            for (key, aad, r) in &modules {
                n += decrypt_module(key, aad, &enc[r.clone()]).unwrap().len();
            }
            black_box(n)
        });
    });
    g.bench_function(format!("decrypt_column_index/{id}"), |b| {
        let f = ModularFooter::parse(&enc).unwrap();
        b.iter(|| {
            let mut n = 0usize;
            for col in 0..C {
                for rg in 0..G {
                    if let Some(d) = f.decrypt_column_index(col, rg, &keys).unwrap() {
                        n += d.column_index().unwrap().len();
                    }
                }
            }
            black_box(n)
        });
    });
    g.bench_function(format!("write_plain/{id}"), |b| {
        b.iter(|| {
            let mut out = plain[..data_len].to_vec();
            input.write(&mut out).unwrap();
            black_box(out.len())
        });
    });
    g.bench_function(format!("write_encrypted/{id}"), |b| {
        let config = config();
        b.iter(|| {
            let mut out = plain[..data_len].to_vec();
            input.write_encrypted(&mut out, &config).unwrap();
            black_box(out.len())
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
