#!/usr/bin/env bash
# footer read (feature arrow) against pyarrow: the rows `lakecore footer read` returns through
# the modular footer equal pyarrow's read of the original standard file (writer files from
# pyarrow and DuckDB). Uses the venv target/ci-venv-footer (pyarrow >= 22),
# made if missing; builds the CLI if needed. Fails loudly.
set -euo pipefail
cd "$(dirname "$0")/.."
# A venv of its own: the shared target/ci-venv holds pypaimon 2.1.0, which pins an older
# pyarrow (19) than the writer features these files use (Bloom filter options).
V=target/ci-venv-footer
if [ ! -x $V/bin/python ]; then
  python3 -m venv $V || { apt-get install -y python3-venv && python3 -m venv $V; }
fi
$V/bin/python -c 'import pyarrow, sys; sys.exit(int(pyarrow.__version__.split(".")[0]) < 22)' 2>/dev/null \
  || $V/bin/pip install --quiet --disable-pip-version-check 'pyarrow>=22'

cargo build --features cli
rm -rf target/ci-footer-read
$V/bin/python tests/clients/check_footer_read.py target/debug/lakecore \
  tests/data/footer/writers target/ci-footer-read
