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
import subprocess
import sys

import boto3

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (ROOT, QUERIES, check, compare_blob_reads, free_port,  # noqa: E402
                    make_wide_parquet, passed, run, stop, tables_under, upload, wait_port)
from s3proxy import Proxy  # noqa: E402

BUCKET = "lake"
GAP_DEFAULT = 64 << 10


def start_moto(work):
    port = free_port()
    exe = os.path.join(os.path.dirname(sys.executable), "moto_server")
    proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(work, "moto.pid"), "w") as f:
        f.write(str(proc.pid))
    wait_port(proc, port, "moto_server")
    return proc, port


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


def make_big_blob_table(warehouse):
    """A BLOB table with one large `.blob` file per layer (400 rows of 16 KiB, then a partial
    update of a few rows), written by pypaimon: its tail is a small part of the file, so a
    `--rows` read must fetch far less than the file."""
    sys.path.insert(0, os.path.join(ROOT, "tests/clients"))
    import random

    import make_blob_tables as mk
    from pypaimon import CatalogFactory

    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database(mk.DB, True)
    t = mk.create(catalog, "big", {"blob.target-file-size": "64mb"})
    rng = random.Random(5)
    n = 400
    vals = [None if i % 50 == 7 else rng.randbytes(16384) for i in range(n)]
    mk.write(t, {"id": list(range(n)), "name": [f"n{i}" for i in range(n)], "b": vals})
    ids = list(range(0, n, 9))
    mk.update_blob(t, ids, [rng.randbytes(8000) for _ in ids])
    return f"{mk.DB}.db/big"


def served_bytes(log, suffix):
    """Bytes served by GETs of objects whose path ends with `suffix` (a repeated GET of the
    same range counts once, as in manifest_gets)."""
    seen, total, gets = set(), 0, 0
    for method, path, rng, status, n in log:
        if method == "GET" and path.endswith(suffix) and (path, rng) not in seen:
            seen.add((path, rng))
            total += n
            gets += 1
    return total, gets


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
        bigwh = os.path.join(work, "bigblob")
        if os.path.exists(bigwh):
            import shutil
            shutil.rmtree(bigwh)
        big_table = make_big_blob_table(bigwh)
        warehouses["bigblob"] = bigwh
        wide_std, wide_mod = make_wide_parquet(lakecore, work)
        s3.upload_file(wide_mod, BUCKET, "files/wide.modular.parquet")
        s3.upload_file(wide_std, BUCKET, "files/wide.parquet")
        put = lambda key, path: s3.upload_file(path, BUCKET, key)  # noqa: E731
        uploaded = sum(upload(put, d, name) for name, d in warehouses.items())
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
        print(f"plans: {passed()} checks ({ranged_seen} ranged GETs)")

        # 2. BLOB reads: remote rows == local rows.
        blob_tables = [("blob_warehouse", t) for t in tables_under(warehouses["blob_warehouse"])]
        blob_tables += [("pypaimon", t) for t in tables_under(pywh)]
        for name, table in blob_tables:
            local = os.path.join(warehouses[name], table)
            compare_blob_reads(lakecore, env, local, f"s3://{BUCKET}/{name}/{table}")

        # 2b. BLOB bytes: a --rows read of a table with large .blob files fetches each file's
        # index (tail) and the selected payloads, not the files.
        local = os.path.join(bigwh, big_table)
        url = f"s3://{BUCKET}/bigblob/{big_table}"
        q = ["--rows", "10-19,300-304"]
        lc, lout, lerr, _ = run([lakecore, "blob", "read", "--json", local, *q], env)
        proxy.reset()
        rc, out, err, _ = run([lakecore, "blob", "read", "--json", url, *q], env)
        check(lc == 0 and rc == 0 and out == lout, f"blob read {url} {q}: exit {rc}/{lc}, equal {out == lout}: {err}{lerr}")
        rows = [json.loads(line) for line in lout.splitlines() if line.strip()]
        payload = sum(r["length"] or 0 for r in rows)
        blob_files = []
        for dirpath, _, files in os.walk(local):
            blob_files += [os.path.join(dirpath, f) for f in files if f.endswith(".blob")]
        total = sum(os.path.getsize(f) for f in blob_files)
        got, gets = served_bytes(proxy.entries(), ".blob")
        # Per file: its tail (<= 64 KiB here: the indexes are small) and the coalesced
        # payload ranges, each at most one 64 KiB gap longer than what it joins.
        bound = len(blob_files) * (64 << 10) + payload + gets * GAP_DEFAULT
        check(len(rows) == 15 and payload > 0, f"blob rows {len(rows)}, payload {payload}")
        check(got <= bound and got * 10 <= total,
              f"blob read {q}: {got} bytes served of {total}, bound {bound}")
        print(f"blob --rows read: {got} bytes served in {gets} GETs of {total} in {len(blob_files)} "
              f".blob files ({payload} payload bytes)")
        proxy.reset()
        rc, out, err, _ = run([lakecore, "blob", "read", "--json", url], env)
        lc, lout, lerr, _ = run([lakecore, "blob", "read", "--json", local], env)
        check(rc == 0 and out == lout, f"blob read {url}: whole column differs: {err}")

        # 2c. Modular footers: footer read / inspect of s3:// and file:// equal the local
        # ones, and a 3-column projection fetches the tail and those chunks only.
        import pyarrow.parquet as pq
        furl = f"s3://{BUCKET}/files/wide.modular.parquet"
        fsize = os.path.getsize(wide_mod)
        proj = ["--columns", "c3,c50,c99"]
        for fmt in ("csv", "json"):
            lc, lout, lerr, _ = run([lakecore, "footer", "read", wide_mod, *proj, "--format", fmt], env)
            for src in (furl, "file://" + os.path.abspath(wide_mod)):
                proxy.reset()
                rc, out, err, _ = run([lakecore, "footer", "read", src, *proj, "--format", fmt], env)
                check(lc == 0 and rc == 0 and out == lout and len(out) > 0,
                      f"footer read {src} {fmt}: exit {rc}/{lc}, equal {out == lout}: {err}{lerr}")
                if src == furl and fmt == "csv":
                    md = pq.ParquetFile(wide_std).metadata
                    names = [md.schema.column(i).name for i in range(md.num_columns)]
                    chunks = sum(md.row_group(g).column(names.index(c)).total_compressed_size
                                 for g in range(md.num_row_groups) for c in ("c3", "c50", "c99"))
                    meta = json.loads(run([lakecore, "footer", "inspect", "--json", wide_mod], env)[1])
                    got, gets = served_bytes(proxy.entries(), "wide.modular.parquet")
                    # The tail (64 KiB, or the footer's metadata when longer: fetched once,
                    # each round only the bytes before what it has), then the 6 chunks, any
                    # two merged across a gap shorter than the coalescing gap.
                    bound = max(64 << 10, meta["metadata_bytes"]) + chunks + 5 * GAP_DEFAULT
                    check(got <= bound and got * 20 <= fsize,
                          f"footer read 3 columns: {got} bytes served of {fsize}, bound {bound}")
                    print(f"footer read of 3 of 120 columns: {got} bytes served in {gets} GETs "
                          f"of a {fsize}-byte file ({chunks} bytes of chunks)")
        lc, lout, _, _ = run([lakecore, "footer", "read", wide_mod, *proj, "--row-groups", "1", "--limit", "7"], env)
        rc, out, err, _ = run([lakecore, "footer", "read", furl, *proj, "--row-groups", "1", "--limit", "7"], env)
        check(rc == 0 and out == lout, f"footer read --row-groups 1 --limit 7: {err}")
        for args in (["--json"], ["--column", "c7"]):
            lc, lout, _, _ = run([lakecore, "footer", "inspect", *args, wide_mod], env)
            rc, out, err, _ = run([lakecore, "footer", "inspect", *args, furl], env)
            check(lc == 0 and rc == 0 and out == lout, f"footer inspect {args} {furl}: {err}")
        # Errors: a missing object (exit 1, the URL named), a standard file (exit 2), a
        # column the file does not have (exit 2).
        missing = f"s3://{BUCKET}/files/nope.parquet"
        rc, out, err, _ = run([lakecore, "footer", "read", missing], env)
        check(rc == 1 and out == b"" and missing in err, f"missing object: exit {rc}: {err}")
        rc, out, err, _ = run([lakecore, "footer", "inspect", f"s3://{BUCKET}/files/wide.parquet"], env)
        check(rc == 2 and out == b"", f"standard file: exit {rc}: {err}")
        rc, out, err, _ = run([lakecore, "footer", "read", furl, "--columns", "nope"], env)
        check(rc == 2 and out == b"" and "nope" in err, f"unknown column: exit {rc}: {err}")
        # Ranges cut short on every attempt (the connection dropped mid-body), 503s that do
        # not end, refused credentials (403): an I/O error naming the URL, exit 1, no output.
        for kind, match, cmd in (("drop_mid_body", "wide.modular.parquet", ["footer", "read", furl, *proj]),
                                 ("fail_503", "wide.modular.parquet", ["footer", "inspect", furl]),
                                 ("drop_mid_body", ".blob", ["blob", "read", "--json", url, *q]),
                                 ("fail_403", "wide.modular.parquet", ["footer", "read", furl, *proj]),
                                 ("fail_403", ".blob", ["blob", "read", "--json", url, *q])):
            proxy.reset()
            setattr(proxy, kind, 10**6)
            proxy.fault_match = match
            rc, out, err, secs = run([lakecore, *cmd], env)
            named = furl if match.endswith(".parquet") else f"s3://{BUCKET}/bigblob/"
            check(rc == 1 and out == b"" and named in err,
                  f"persistent {kind} on {match}: exit {rc}, {len(out)} bytes out: {err}")
            print(f"persistent {kind} on {match}: exit 1 after {secs:.1f} s: {err.strip()[:140]}")
        proxy.reset()
        print(f"footer: remote reads equal local ones ({passed()} checks so far)")

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
                local = os.path.join(bigwh, big_table)
                for rows in (None, [(10, 19), (300, 304)]):
                    want = lcpy.Table(local).read_blob(rows=rows)
                    got = lcpy.Table(f"s3://{BUCKET}/bigblob/{big_table}").read_blob(rows=rows)
                    check(got.equals(want), f"python read_blob of s3 rows={rows} differs")
                if hasattr(lcpy, "footer"):
                    cols = ["c3", "c50", "c99"]
                    want = pq.read_table(wide_std, columns=cols)
                    got = lcpy.footer.read(furl, columns=cols)
                    check(got.equals(want), "python footer.read of s3 differs from pyarrow")
                    check(lcpy.footer.inspect(furl) == lcpy.footer.inspect(wide_mod),
                          "python footer.inspect of s3 differs from local")
                    try:
                        lcpy.footer.read(f"s3://{BUCKET}/files/nope.parquet")
                        check(False, "python footer.read of a missing object did not raise")
                    except lcpy.IoError as e:
                        check("nope.parquet" in str(e), f"python IoError does not name the URL: {e}")
                print("python: remote read_blob and footer.read equal the local reads")
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
        stop(moto, os.path.join(work, "moto.pid"))
    print(f"remote: {passed()} passed, 0 failed")


if __name__ == "__main__":
    main()
