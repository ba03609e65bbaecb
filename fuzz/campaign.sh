#!/usr/bin/env bash
# Runs every bolero harness under libFuzzer (`cargo bolero test`, nightly, AddressSanitizer)
# for a fixed time each, JOBS at a time, and prints one summary line per harness. Keep one
# `check!` per test: under libFuzzer only the first `check!` of a test runs.
#
#   fuzz/campaign.sh [SECONDS_PER_HARNESS=600] [JOBS=2] [NAME_REGEX=.]
#
# NAME_REGEX picks harnesses by name (e.g. '^(avro|table_json)_' for the Avro and table
# JSON ones).
#
# Corpora and crash inputs land in fuzz/__fuzz__/<harness>/{corpus,crashes}; `cargo test`
# replays every committed crash input as a regression case. Logs: target/fuzz-logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
jobs=${2:-2}
pick=${3:-.}
features="std simd expose-kernels encryption"
harnesses=(
  sidecar_arbitrary_bytes sidecar_resealed_golden_mutations
  view_raw_bytes view_mutated_files nested_payloads nested_payloads_round_trip merge_matches_model
  arbitrary_pages_and_windows_never_panic generated_footers_round_trip_and_mutations_never_panic
  arbitrary_modules_never_authenticate mutated_encrypted_footers_decrypt_to_the_original_or_fail
  hostile_plaintext_under_a_valid_key_never_panics
  avro_arbitrary_bytes avro_mutated_real_manifests avro_schema_arbitrary_json_and_datums
  avro_schema_mutated_json_and_datums avro_manifest_decoders_mutated
  table_json_arbitrary_bytes table_json_mutated_fields
  arbitrary_bytes_never_panic derived_trees_round_trip
  varint_kernels_match_scalar unpack_kernels_match_scalar merge_layer_kernels_match_scalar
  varint_decode_matches_naive delta_stream_matches_naive zigzag_stream_matches_naive
  encode_then_decode_round_trips
  pack_then_read_round_trips arbitrary_bytes_never_panic_and_read_like_naive
  read_sequences_are_checked
)
mapfile -t harnesses < <(printf '%s\n' "${harnesses[@]}" | grep -E "$pick")
[ "${#harnesses[@]}" -gt 0 ] || { echo "no harness matches $pick"; exit 2; }
rustup toolchain install nightly --profile minimal --component rust-src >/dev/null
command -v cargo-bolero >/dev/null || cargo install cargo-bolero --locked
mkdir -p target/fuzz-logs
# Build once (every harness shares the features, so the build is shared too).
cargo bolero test "${harnesses[0]}" --features "$features" --toolchain nightly -T 1s \
  >target/fuzz-logs/build.log 2>&1
run() {
  local h=$1 log=target/fuzz-logs/$1.log
  if cargo bolero test "$h" --features "$features" --toolchain nightly -T "${secs}s" >"$log" 2>&1; then
    status=ok
  else
    status=FAILED
  fi
  printf '%-58s %-6s %s\n' "$h" "$status" "$(grep -E '^Done [0-9]+ runs' "$log" | tail -1)"
}
export -f run
export secs features
printf '%s\n' "${harnesses[@]}" | xargs -P "$jobs" -I{} bash -c 'run {}'
