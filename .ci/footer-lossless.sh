#!/usr/bin/env bash
# Modular footer, lossless both ways: real files from pyarrow and DuckDB (the committed ones,
# and fresh ones written now by tests/clients/make_footer_files.py with the venv's versions)
# go through `lakecore footer convert` and `convert --to-standard`; pyarrow and DuckDB must
# read the result to the same table with the same footer metadata. Uses the venv .ci/run
# creates (target/ci-venv) and installs pyarrow and duckdb into it. Fails loudly.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
if [ ! -x target/ci-venv/bin/python ]; then
  python3 -m venv target/ci-venv || { apt-get install -y python3-venv && python3 -m venv target/ci-venv; }
fi
target/ci-venv/bin/pip install --quiet --disable-pip-version-check pyarrow duckdb
cargo build --features cli
rm -rf target/ci-footer && mkdir -p target/ci-footer/fresh
target/ci-venv/bin/python tests/clients/make_footer_files.py target/ci-footer/fresh > /dev/null
target/ci-venv/bin/python tests/clients/check_footer_roundtrip.py target/debug/lakecore \
  tests/data/footer/writers target/ci-footer/fresh --work target/ci-footer/work
echo "footer-lossless: $(( $(date +%s) - start ))s"
