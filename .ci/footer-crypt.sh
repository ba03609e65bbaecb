#!/usr/bin/env bash
# Statistics encryption (footer::crypt, feature `encryption`). Its tests (round trips, wrong
# keys, byte flips, the parquet-crate oracle) and its fuzz harness run in `cargo test
# --all-features`; this step adds what that cannot show: the decrypting reader builds for a
# bare-metal target, without std (no_std + alloc, no OS randomness).
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add thumbv7em-none-eabi >/dev/null 2>&1 || true
echo "footer-crypt: no_std + alloc reader (thumbv7em-none-eabi, features encryption)"
cargo build --no-default-features --features encryption --target thumbv7em-none-eabi
echo "footer-crypt: ok"
