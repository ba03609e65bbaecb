#!/usr/bin/env bash
# lakecore against a real S3 server: moto_server (moto[server] from PyPI, in the CI venv)
# on 127.0.0.1, behind a counting and fault-injecting proxy (tests/remote/s3proxy.py). Uploads
# the committed tables and BLOB tables written now by pypaimon 2.1.0, then checks that
# remote plans and BLOB reads equal the local ones, that the GETs are what the plan says, and
# that 503s and dropped connections give a retried read or a clear error
# (tests/remote/check_remote.py). The server is stopped at the end, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
if [ ! -x target/ci-venv/bin/python ]; then
  python3 -m venv target/ci-venv || { apt-get install -y python3-venv && python3 -m venv target/ci-venv; }
fi
target/ci-venv/bin/pip install --quiet --disable-pip-version-check 'moto[server]>=5,<6' boto3 pypaimon==2.1.0 pyarrow
cargo build --features cli,object-store
# check_remote.py starts moto_server itself (pid in target/ci-remote/moto.pid) and stops it
# in a `finally`; the trap covers a kill of the script.
trap 'if [ -f target/ci-remote/moto.pid ]; then kill "$(cat target/ci-remote/moto.pid)" 2>/dev/null || true; fi' EXIT
target/ci-venv/bin/python tests/remote/check_remote.py target/debug/lakecore target/ci-remote
echo "remote step: $(( $(date +%s) - start )) s"
