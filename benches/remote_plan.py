#!/usr/bin/env python3
"""Planning from S3: `lakecore scan s3://...` against pypaimon 2.1.0 (pure Python) and
pypaimon with `scan.native-plan.enabled` (paimon-rust through pypaimon-rust 0.4.0) on the same
local S3 server (moto_server on 127.0.0.1 behind the counting proxy of tests/remote/s3proxy.py).

    cargo build --release --features cli,object-store
    python3 benches/plan_peers.py --sizes 100k --tables pb --runs 1   # writes pb_100k once
    python3 benches/remote_plan.py --lakecore target/release/lakecore \\
        --python /work/venv/bin/python --moto-python /work/venv-remote/bin/python --runs 5

--python runs the peers (pypaimon 2.1.0 + pypaimon-rust 0.4.0 + pyarrow); --moto-python has
`moto[server]` and boto3 and runs the server and the upload; this script itself needs only the
standard library.

Per filter, --runs rounds alternate lakecore, pypaimon, pypaimon native (A B C A B C ...),
each a fresh process against the same server. Measured:
- GET bytes and requests the proxy served while the process ran (everything: snapshot,
  schema, manifest lists, sidecars, manifests);
- wall time: lakecore's whole process (spawn to exit); the peers' `plan()` in process (from
  `new_read_builder()` to the splits, catalog and table opened before the timer), so the
  peers are not charged their interpreter start and imports.
The peers' file sets must equal lakecore's (checked in every run), and the native peer must
really have planned natively (its `native_plan` entry point is wrapped and must return).
Prints a Markdown table: medians [min-max].
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "remote"))
from s3proxy import Proxy  # noqa: E402

PEER = r'''
import json, sys, time
import pypaimon.read.native_plan as npm
from pypaimon import CatalogFactory
native, endpoint, table_name, where = sys.argv[1] == "native", sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
ok = [0]
orig = npm.native_plan
def wrapped(*a, **k):
    r = orig(*a, **k)
    ok[0] += 1
    return r
npm.native_plan = wrapped
opts = {"warehouse": "s3://bench/warehouse", "fs.s3.endpoint": endpoint,
        "fs.s3.accessKeyId": "testing", "fs.s3.accessKeySecret": "testing",
        "fs.s3.region": "us-east-1", "s3.endpoint": endpoint, "s3.access-key-id": "testing",
        "s3.secret-access-key": "testing", "s3.region": "us-east-1",
        # paimon-rust's (OpenDAL's) keys: static credentials, path-style requests to 127.0.0.1.
        "s3.access-key": "testing", "s3.secret-key": "testing", "s3.path-style-access": "true"}
table = CatalogFactory.create(opts).get_table(table_name)
if native:
    table = table.copy({"scan.native-plan.enabled": "true"})
t0 = time.perf_counter()
rb = table.new_read_builder()
pb = rb.new_predicate_builder()
preds = [pb.equal(k, v) for k, v in where]
if preds:
    rb = rb.with_filter(pb.and_predicates(preds) if len(preds) > 1 else preds[0])
splits = rb.new_scan().plan().splits()
secs = time.perf_counter() - t0
files = sorted(f.file_name for s in splits for f in s.files)
print(json.dumps({"secs": secs, "files": files, "native_ok": ok[0]}))
'''

MOTO_UPLOAD = r'''
import boto3, os, sys
port, root, table = sys.argv[1], sys.argv[2], sys.argv[3]
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", aws_access_key_id="testing",
                  aws_secret_access_key="testing", region_name="us-east-1")
s3.create_bucket(Bucket="bench")
n = 0
for dp, _, fs in os.walk(os.path.join(root, table)):
    for f in fs:
        p = os.path.join(dp, f)
        s3.upload_file(p, "bench", "warehouse/" + os.path.relpath(p, root))
        n += 1
print(n)
'''


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def served(proxy):
    e = proxy.entries()
    gets = [x for x in e if x[0] == "GET"]
    return sum(x[4] for x in gets), len(gets)


def med(xs):
    return f"{statistics.median(xs):,.0f}" if xs and max(xs) > 100 else f"{statistics.median(xs):.3g}"


def spread(xs, fmt):
    return f"{fmt(statistics.median(xs))} [{fmt(min(xs))}-{fmt(max(xs))}]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lakecore", default="target/release/lakecore")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--moto-python", default=sys.executable)
    ap.add_argument("--table", default="/tmp/lakecore-plan-bench/warehouse/bench.db/pb_100k")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lakecore-args", default="", help="extra lakecore scan arguments")
    a = ap.parse_args()
    table_dir = os.path.abspath(a.table)
    warehouse = os.path.dirname(os.path.dirname(table_dir))
    rel = os.path.relpath(table_dir, warehouse)
    db, name = rel.split("/")
    port = free_port()
    moto = subprocess.Popen([os.path.join(os.path.dirname(a.moto_python), "moto_server"),
                             "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proxy = None
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        n = subprocess.run([a.moto_python, "-c", MOTO_UPLOAD, str(port), warehouse, rel],
                           check=True, capture_output=True, text=True).stdout.strip()
        proxy = Proxy(port)
        endpoint = f"http://127.0.0.1:{proxy.port}"
        print(f"uploaded {n} objects of {rel}; moto {port}, proxy {proxy.port}", file=sys.stderr)
        env = dict(os.environ, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                   AWS_REGION="us-east-1", AWS_ENDPOINT_URL=endpoint, AWS_ALLOW_HTTP="true")
        url = f"s3://bench/warehouse/{rel}"
        filters = [("partition p=42", ["--partition", "p=42"], [["p", 42]])]
        rows = []
        for label, lk_args, where in filters:
            res = {k: {"secs": [], "bytes": [], "gets": []} for k in ("lakecore", "pypaimon", "native")}
            for r in range(a.runs + 1):  # round 0: warm-up, not recorded
                proxy.reset()
                t0 = time.perf_counter()
                p = subprocess.run([a.lakecore, "scan", "--json", url, *lk_args, *a.lakecore_args.split()],
                                   capture_output=True, env=env)
                secs = time.perf_counter() - t0
                if p.returncode != 0:
                    sys.exit(f"lakecore failed: {p.stderr.decode()}")
                want = sorted(f["file_name"] for f in json.loads(p.stdout)["files"])
                b, g = served(proxy)
                if r:
                    res["lakecore"]["secs"].append(secs)
                    res["lakecore"]["bytes"].append(b)
                    res["lakecore"]["gets"].append(g)
                for peer in ("pypaimon", "native"):
                    proxy.reset()
                    p = subprocess.run([a.python, "-c", PEER, "native" if peer == "native" else "py",
                                        endpoint, f"{db[:-3]}.{name}", json.dumps(where)],
                                       capture_output=True, env=env, text=True)
                    if p.returncode != 0:
                        sys.exit(f"{peer} failed: {p.stderr[-2000:]}")
                    doc = json.loads(p.stdout.strip().splitlines()[-1])
                    if doc["files"] != want:
                        sys.exit(f"{peer}: {len(doc['files'])} files, lakecore {len(want)}: file sets differ")
                    if peer == "native" and doc["native_ok"] != 1:
                        sys.exit("the native peer did not plan natively")
                    b, g = served(proxy)
                    if r:
                        res[peer]["secs"].append(doc["secs"])
                        res[peer]["bytes"].append(b)
                        res[peer]["gets"].append(g)
            rows.append((label, len(want), res))
            print(json.dumps({"filter": label, "files": len(want), **res}), file=sys.stderr)
        print(f"| filter | files | lakecore whole process | pypaimon plan() | pypaimon native plan() | GET bytes lakecore / pypaimon / native | GETs lakecore / pypaimon / native | bytes ratio pypaimon/lakecore | time ratio native/lakecore |")
        print("|---|---|---|---|---|---|---|---|---|")
        ms = lambda s: f"{s * 1000:.0f} ms"
        for label, nfiles, res in rows:
            L, P, N = res["lakecore"], res["pypaimon"], res["native"]
            print(f"| {label} | {nfiles:,} | {spread(L['secs'], ms)} | {spread(P['secs'], ms)} | {spread(N['secs'], ms)} "
                  f"| {statistics.median(L['bytes']):,.0f} / {statistics.median(P['bytes']):,.0f} / {statistics.median(N['bytes']):,.0f} "
                  f"| {statistics.median(L['gets']):.0f} / {statistics.median(P['gets']):.0f} / {statistics.median(N['gets']):.0f} "
                  f"| {statistics.median(P['bytes']) / statistics.median(L['bytes']):.1f}x "
                  f"| {statistics.median(N['secs']) / statistics.median(L['secs']):.2f}x |")
    finally:
        if proxy:
            proxy.stop()
        moto.terminate()
        moto.wait(timeout=10)


if __name__ == "__main__":
    main()
