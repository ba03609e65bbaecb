#!/usr/bin/env bash
# Modular footer, lossless both ways: real files from pyarrow and DuckDB (the committed ones,
# and fresh ones written now by tests/clients/make_footer_files.py with the venv's versions)
# go through `lakecore footer convert` and `convert --to-standard`; pyarrow and DuckDB must
# read the result to the same table with the same footer metadata. Uses its own venv
# (target/ci-venv-footer) with pyarrow >= 22 and duckdb. Fails loudly.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# A venv of its own: the shared target/ci-venv holds pypaimon 2.1.0, which pins an older
# pyarrow (19) than the writer features these files use (Bloom filter options).
V=target/ci-venv-footer
if [ ! -x $V/bin/python ]; then
  python3 -m venv $V || { apt-get install -y python3-venv && python3 -m venv $V; }
fi
$V/bin/pip install --quiet --disable-pip-version-check 'pyarrow>=22' duckdb
cargo build --features cli
rm -rf target/ci-footer && mkdir -p target/ci-footer/fresh
$V/bin/python tests/clients/make_footer_files.py target/ci-footer/fresh > /dev/null
$V/bin/python tests/clients/check_footer_roundtrip.py target/debug/lakecore \
  tests/data/footer/writers target/ci-footer/fresh --work target/ci-footer/work
echo "footer-lossless: $(( $(date +%s) - start ))s"
