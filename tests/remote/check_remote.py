#!/usr/bin/env python3
"""lakecore against a real S3 server (moto_server on 127.0.0.1 behind a counting,
fault-injecting proxy): remote plans and BLOB reads equal the local ones, the requests are
what the plan implies, and injected faults give a retried read or a clear error.

    python check_remote.py LAKECORE WORKDIR

LAKECORE must be built with `--features cli,object-store`. WORKDIR receives the tables this
script writes with pypaimon. Prints `N passed, 0 failed` at the end; exits 1 on the first
failed check.
"""
import json
import os
import socket
import subprocess
import sys
import time

import boto3

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3proxy import Proxy  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUCKET = "lake"
GAP_DEFAULT = 64 << 10
passed = 0


def check(cond, what):
    global passed
    if not cond:
        sys.exit(f"FAILED: {what}")
    passed += 1


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_moto(work):
    port = free_port()
    exe = os.path.join(os.path.dirname(sys.executable), "moto_server")
    proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(work, "moto.pid"), "w") as f:
        f.write(str(proc.pid))
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("moto_server did not start")


def upload(s3, local_dir, prefix):
    n = 0
    for dirpath, _, files in os.walk(local_dir):
        for f in files:
            p = os.path.join(dirpath, f)
            key = prefix + "/" + os.path.relpath(p, local_dir)
            s3.upload_file(p, BUCKET, key)
            n += 1
    return n


def tables_under(warehouse):
    out = []
    for db in sorted(os.listdir(warehouse)):
        d = os.path.join(warehouse, db)
        if not db.endswith(".db") or not os.path.isdir(d):
            continue
        for t in sorted(os.listdir(d)):
            if os.path.isdir(os.path.join(d, t, "snapshot")):
                out.append(f"{db}/{t}")
    return out


def run(args, env, timeout=120):
    t = time.monotonic()
    p = subprocess.run(args, capture_output=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace"), time.monotonic() - t


QUERIES = [[], ["--bucket", "1"], ["--bucket", "0,3"], ["--rows", "0-5,100-120"],
           ["--partition", "dt=2024-01-02"], ["--rows", "10-10", "--bucket", "2"]]


def manifest_gets(log):
    """(sidecar GETs, manifest GETs) from the proxy log: (path, range, status, bytes).

    A request repeated with the same path and range is one request of the plan: the client
    re-sends a GET that timed out (a CI machine under load, with miri beside it, once took a
    retry of a manifest range here), and counting both would charge the plan for the network.
    """
    side, man = [], []
    seen = set()
    for method, path, rng, status, n in log:
        if method != "GET" or "/manifest/" not in path:
            continue
        if (path, rng) in seen:
            continue
        seen.add((path, rng))
        name = path.rsplit("/", 1)[-1]
        if name.endswith(".avro.sidecar"):
            side.append((path, rng, status, n))
        elif not name.startswith("manifest-list-"):
            man.append((path, rng, status, n))
    return side, man


def main():
    lakecore, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    moto, moto_port = start_moto(work)
    proxy = Proxy(moto_port)
    try:
        s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{moto_port}",
                          aws_access_key_id="testing", aws_secret_access_key="testing",
                          region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        # The committed tables, and BLOB tables written now by pypaimon 2.1.0.
        warehouses = {
            "warehouse": os.path.join(ROOT, "tests/data/paimon/warehouse"),
            "blob_warehouse": os.path.join(ROOT, "tests/data/paimon/blob_warehouse"),
        }
        pywh = os.path.join(work, "pypaimon")
        subprocess.run([sys.executable, os.path.join(ROOT, "tests/clients/make_blob_tables.py"),
                        pywh, "--seed", "11"], check=True, stdout=subprocess.DEVNULL)
        warehouses["pypaimon"] = pywh
        uploaded = sum(upload(s3, d, name) for name, d in warehouses.items())
        print(f"uploaded {uploaded} objects to moto on port {moto_port}; proxy on {proxy.port}")

        env = dict(os.environ, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                   AWS_REGION="us-east-1", AWS_ENDPOINT_URL=f"http://127.0.0.1:{proxy.port}",
                   AWS_ALLOW_HTTP="true")
        env.pop("AWS_ENDPOINT", None)

        # 1. Plans: remote JSON == local JSON, and the requests match the plan.
        ranged_seen = 0
        for name, wh in warehouses.items():
            for table in tables_under(wh):
                local = os.path.join(wh, table)
                url = f"s3://{BUCKET}/{name}/{table}"
                for q in QUERIES:
                    lc, lout, lerr, _ = run([lakecore, "scan", "--json", local, *q], env)
                    for gap in (None, 0):
                        extra = [] if gap is None else ["--coalesce-gap", str(gap)]
                        proxy.reset()
                        rc, out, err, _ = run([lakecore, "scan", "--json", url, *q, *extra], env)
                        what = f"{url} {' '.join(q + extra)}"
                        check(rc == lc, f"{what}: exit {rc} remote, {lc} local: {err}")
                        if lc != 0:
                            check(out == b"", f"{what}: output on error")
                            continue
                        check(out == lout, f"{what}: remote plan differs from local")
                        plan = json.loads(out)
                        side, man = manifest_gets(proxy.entries())
                        paths = [p for p, _, _, _ in side]
                        check(len(paths) == len(set(paths)), f"{what}: a sidecar fetched twice")
                        check(all(r is None for _, r, _, _ in side), f"{what}: ranged sidecar GET")
                        check(len(side) == plan["manifests_with_sidecar"],
                              f"{what}: {len(side)} sidecar GETs, {plan['manifests_with_sidecar']} sidecars used")
                        served = sum(n for _, _, _, n in man)
                        ranged = [r for r in man if r[1] is not None]
                        ranged_seen += len(ranged)
                        g = GAP_DEFAULT if gap is None else gap
                        # Whole GETs only where the coalesced ranges cover >= 90% of a manifest.
                        bound = (plan["manifest_bytes_read"] + g * plan["blocks_read"]) / 0.9
                        check(served <= bound, f"{what}: {served} manifest bytes served, bound {bound:.0f}")
                        if plan["blocks_read"] == 0:
                            check(not man, f"{what}: manifest GETs although no block was selected")
                        if gap == 0 and plan["manifests_with_sidecar"] == plan["manifests"] - plan.get("manifests_pruned", 0):
                            check(all(r is not None for r in man) and served <= plan["manifest_bytes_read"],
                                  f"{what}: gap 0 must fetch only the selected spans ({served} > {plan['manifest_bytes_read']})")
        check(ranged_seen > 0, "no ranged GET was issued at all")
        print(f"plans: {passed} checks ({ranged_seen} ranged GETs)")

        # 2. BLOB reads: remote rows == local rows.
        blob_tables = [("blob_warehouse", t) for t in tables_under(warehouses["blob_warehouse"])]
        blob_tables += [("pypaimon", t) for t in tables_under(pywh)]
        for name, table in blob_tables:
            local = os.path.join(warehouses[name], table)
            url = f"s3://{BUCKET}/{name}/{table}"
            for q in ([], ["--rows", "3-40,250-260"]):
                lc, lout, lerr, _ = run([lakecore, "blob", "read", "--json", local, *q], env)
                rc, out, err, _ = run([lakecore, "blob", "read", "--json", url, *q], env)
                check(lc == 0 and rc == 0, f"blob read {url} {q}: exit {rc} / {lc}: {err}{lerr}")
                check(out == lout and len(out) > 0, f"blob read {url} {q}: rows differ")

        # 3. Faults: 503s and connections dropped mid-body are retried; the plan is the same.
        url = f"s3://{BUCKET}/warehouse/sc.db/bucket4_rs"
        local = os.path.join(warehouses["warehouse"], "sc.db/bucket4_rs")
        q = ["--bucket", "1", "--coalesce-gap", "0"]
        _, want, _, _ = run([lakecore, "scan", "--json", local, *q], env)
        for kind, match in (("fail_503", "/manifest/manifest-"), ("drop_mid_body", ".avro.sidecar"),
                            ("drop_mid_body", "/manifest/manifest-"), ("fail_503", ".avro.sidecar")):
            proxy.reset()
            setattr(proxy, kind, 3)
            proxy.fault_match = match
            rc, out, err, secs = run([lakecore, "scan", "--json", url, *q], env)
            check(proxy.faults_done == 3, f"{kind} on {match}: {proxy.faults_done} faults injected")
            check(rc == 0 and out == want, f"{kind} on {match}: exit {rc}, plan equal {out == want}: {err}")
            print(f"fault {kind} x3 on {match}: retried, same plan ({secs:.1f} s)")
        # Faults that do not end: a clear error naming the URL, exit 1, no output.
        proxy.reset()
        proxy.fail_503 = 10**6
        proxy.fault_match = "/manifest/"
        rc, out, err, secs = run([lakecore, "scan", "--json", url, *q], env)
        check(rc == 1 and out == b"" and f"s3://{BUCKET}/" in err,
              f"persistent 503: exit {rc}, {len(out)} bytes out, stderr {err!r}")
        print(f"persistent 503: exit 1 after {secs:.1f} s: {err.strip()[:160]}")
        proxy.reset()

        # 3b. The Python package (when .ci/python.sh has installed it in this venv): the
        # plan of an s3:// table equals the local directory's, column by column but the paths.
        try:
            import lakecore as lcpy
        except ImportError:
            lcpy = None
            print("python package not installed in this venv: Table(s3://...) not checked")
        if lcpy is not None:
            saved = dict(os.environ)
            os.environ.update({k: v for k, v in env.items() if k.startswith("AWS_")})
            try:
                compared = 0
                for table in tables_under(warehouses["warehouse"]):
                    local = os.path.join(warehouses["warehouse"], table)
                    want = lcpy.Table(local).plan()
                    got = lcpy.Table(f"s3://{BUCKET}/warehouse/{table}").plan()
                    cols = [c for c in want.column_names if c != "path"]
                    check(got.select(cols).equals(want.select(cols)),
                          f"python plan of s3://{BUCKET}/warehouse/{table} differs from local")
                    compared += 1
                check(compared > 5, f"only {compared} python plans compared")
                print(f"python: {compared} remote plans equal the local ones")
            finally:
                os.environ.clear()
                os.environ.update(saved)

        # 4. Bad input: missing table, missing object, unreachable endpoint.
        rc, out, err, _ = run([lakecore, "scan", f"s3://{BUCKET}/warehouse/sc.db/nope"], env)
        check(rc == 1 and out == b"" and "s3://lake/warehouse/sc.db/nope" in err,
              f"missing table: exit {rc}: {err}")
        s3.delete_object(Bucket=BUCKET, Key="warehouse/sc.db/bucket4_rs/schema/schema-0")
        rc, out, err, _ = run([lakecore, "scan", url], env)
        check(rc == 1 and out == b"" and "schema-0" in err, f"missing object: exit {rc}: {err}")
        dead = dict(env, AWS_ENDPOINT_URL=f"http://127.0.0.1:{free_port()}")
        rc, out, err, secs = run([lakecore, "scan", url], dead, timeout=90)
        check(rc == 1 and out == b"" and "s3://lake/" in err, f"unreachable endpoint: exit {rc}: {err}")
        print(f"unreachable endpoint: exit 1 after {secs:.1f} s")
    finally:
        proxy.stop()
        moto.terminate()
        try:
            moto.wait(timeout=10)
        except subprocess.TimeoutExpired:
            moto.kill()
        os.remove(os.path.join(work, "moto.pid"))
    print(f"remote: {passed} passed, 0 failed")


if __name__ == "__main__":
    main()
