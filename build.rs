//! Build script: one cfg alias per SIMD family, so the sources say `cfg(x86_simd)` or
//! `cfg(aarch64_simd)` instead of repeating "feature `simd`, this architecture, and not forced
//! to scalar with `--cfg lakecore_backend=\"scalar\"`".

use std::env;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(x86_simd)");
    println!("cargo::rustc-check-cfg=cfg(aarch64_simd)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=RUSTFLAGS");
    println!("cargo::rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    println!("cargo::rerun-if-env-changed=CARGO_BUILD_RUSTFLAGS");

    let simd = env::var_os("CARGO_FEATURE_SIMD").is_some() && !forced_scalar();
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let endian = env::var("CARGO_CFG_TARGET_ENDIAN").unwrap_or_default();
    if simd && arch == "x86_64" {
        println!("cargo::rustc-cfg=x86_simd");
    }
    if simd && arch == "aarch64" && endian == "little" {
        println!("cargo::rustc-cfg=aarch64_simd");
    }
}

/// Whether the crate is compiled with `--cfg lakecore_backend="scalar"` (CI's forced-scalar
/// run sets it through `RUSTFLAGS`, which Cargo hands on as `CARGO_ENCODED_RUSTFLAGS`).
fn forced_scalar() -> bool {
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let mut previous_was_cfg = false;
    for flag in flags.split('\x1f') {
        let cfg = if previous_was_cfg {
            Some(flag)
        } else {
            flag.strip_prefix("--cfg=")
        };
        if cfg.is_some_and(|c| c.replace(' ', "") == "lakecore_backend=\"scalar\"") {
            return true;
        }
        previous_was_cfg = flag == "--cfg";
    }
    false
}
