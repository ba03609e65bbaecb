#!/usr/bin/env bash
# lakecore CI, the platforms step (issue 26): the code that differs by platform, run there.
#   aarch64-unknown-linux-gnu under qemu-user: the NEON kernel table against scalar;
#   s390x-unknown-linux-gnu (big-endian) under qemu-user: the same suites, scalar paths;
#   wasm32-unknown-unknown: the no_std core builds; wasm32-wasip1: its tests under Node's WASI;
#   thumbv7em-none-eabi: a linked no_std example that validates a sidecar and selects blocks,
#   with its .text size.
# The suites: the lib unit tests of arch::, codec:: and cursor::, tests/kernels.rs (every
# tier against scalar) and tests/codecs.rs. `--cfg lakecore_lean_tests` drops the heavy
# dev-dependencies (see Cargo.toml), which these suites do not use. Debug assertions and
# overflow checks stay on; opt-level 2 because the kernel suite takes minutes unoptimised
# under qemu. Installs what it needs and fails loudly when it cannot.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
export CARGO_INCREMENTAL=0
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}/platforms"

start=$(date +%s)
step() { printf '\n==> [%ss] platforms: %s\n' "$(( $(date +%s) - start ))" "$*"; }

step "toolchain: rustup targets, cross gcc, qemu-user"
rustup target add aarch64-unknown-linux-gnu s390x-unknown-linux-gnu wasm32-unknown-unknown \
  wasm32-wasip1 thumbv7em-none-eabi
need=()
command -v qemu-aarch64 > /dev/null && command -v qemu-s390x > /dev/null || need+=(qemu-user)
command -v aarch64-linux-gnu-gcc > /dev/null || need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
command -v s390x-linux-gnu-gcc > /dev/null || need+=(gcc-s390x-linux-gnu libc6-dev-s390x-cross)
if [ ${#need[@]} -gt 0 ]; then
  apt-get install -y "${need[@]}" || { apt-get update && apt-get install -y "${need[@]}"; }
fi
command -v node > /dev/null || { echo "platforms: node (for node:wasi) is missing" >&2; exit 1; }
command -v llvm-size > /dev/null || command -v size > /dev/null \
  || { echo "platforms: no llvm-size or size" >&2; exit 1; }

export RUSTFLAGS='--cfg lakecore_lean_tests'
export CARGO_PROFILE_DEV_OPT_LEVEL=2 CARGO_PROFILE_DEV_DEBUG=0
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
export CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_LINKER=s390x-linux-gnu-gcc
export CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_RUNNER="qemu-s390x -L /usr/s390x-linux-gnu"
export CARGO_TARGET_WASM32_WASIP1_RUNNER="node --no-warnings $PWD/.ci/wasi-run.mjs"

# The kernel suites on one target: lib unit tests (filtered), then kernels and codecs whole.
suites() {
  local target=$1 features=$2
  cargo test --target "$target" --no-default-features --features "$features" --lib \
    -- arch:: codec:: cursor::
  cargo test --target "$target" --no-default-features --features "$features" \
    --test kernels --test codecs
}

step "aarch64-unknown-linux-gnu under qemu-aarch64: NEON tier against scalar"
# tests/kernels.rs asserts the "neon" table is compiled in and available on aarch64.
suites aarch64-unknown-linux-gnu alloc,simd,expose-kernels
cargo test --target aarch64-unknown-linux-gnu --no-default-features \
  --features alloc,simd,expose-kernels --test kernels -- tiers_report --nocapture \
  | grep -E 'kernel tables|test result'

step "s390x-unknown-linux-gnu (big-endian) under qemu-s390x: scalar kernels and codecs"
suites s390x-unknown-linux-gnu alloc,simd,expose-kernels

step "wasm32-unknown-unknown: the no_std core (then with alloc)"
cargo build --target wasm32-unknown-unknown --no-default-features
cargo build --target wasm32-unknown-unknown --no-default-features --features alloc

step "wasm32-wasip1 under node:wasi: kernels and codecs"
suites wasm32-wasip1 alloc,expose-kernels

step "thumbv7em-none-eabi: linked no_std example (validate a compact sidecar, select by row ID)"
# Size-optimised as firmware would be (opt-level s, fat LTO, one codegen unit), linked with
# a minimal memory map; the README quotes the .text size.
unset RUSTFLAGS
CARGO_PROFILE_RELEASE_OPT_LEVEL=s CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
  cargo rustc --release --no-default-features --example embedded_sidecar \
  --target thumbv7em-none-eabi -- -C "link-arg=-T$PWD/examples/embedded/link.x"
elf="$CARGO_TARGET_DIR/thumbv7em-none-eabi/release/examples/embedded_sidecar"
if command -v llvm-size > /dev/null; then llvm-size -A "$elf"; else size -A "$elf"; fi
text=$( (command -v llvm-size > /dev/null && llvm-size -A "$elf" || size -A "$elf") \
  | awk '$1 == ".text" { print $2 }')
echo "embedded_sidecar .text: $text bytes (goal <= 32768)"
[ "$text" -le 32768 ] || { echo "platforms: .text over 32 KiB" >&2; exit 1; }

echo
echo "platforms passed in $(( $(date +%s) - start )) s"
