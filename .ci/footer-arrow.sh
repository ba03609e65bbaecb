#!/usr/bin/env bash
# footer read (feature arrow) against pyarrow: the rows `lakecore footer read` returns through
# the modular footer equal pyarrow's read of the original standard file (writer files from
# pyarrow and DuckDB). Uses the venv .ci/run creates (target/ci-venv), installing pyarrow
# there if it is missing; builds the CLI if needed. Fails loudly.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x target/ci-venv/bin/python ]; then
  python3 -m venv target/ci-venv || { apt-get install -y python3-venv && python3 -m venv target/ci-venv; }
fi
target/ci-venv/bin/python -c 'import pyarrow' 2>/dev/null \
  || target/ci-venv/bin/pip install --quiet --disable-pip-version-check pyarrow
cargo build --features cli
rm -rf target/ci-footer-read
target/ci-venv/bin/python tests/clients/check_footer_read.py target/debug/lakecore \
  tests/data/footer/writers target/ci-footer-read
