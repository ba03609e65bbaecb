#!/usr/bin/env python3
"""Scan planning against its peers: `lakecore scan` (whole process) vs paimon-rust's `plan()`
(in process, through pypaimon-rust) vs pypaimon's pure-Python `plan()` (in process).

Set up once (any folder; the script itself needs only the standard library, the peers and the
table writer run under the interpreter given by --python, default: this one):

    python3 -m venv .venv && .venv/bin/pip install pypaimon==2.1.0 pypaimon-rust==0.4.0 pyarrow
    cargo build --release --features cli
    .venv/bin/python benches/plan_peers.py --lakecore target/release/lakecore --sizes 100k --runs 5
    # or, with the system python: python3 benches/plan_peers.py --python .venv/bin/python ...

Tables (written once with pypaimon-rust, manifest sidecars on, under --work; reused when the
marker file `<work>/<table>.written.json` exists):

- `pb_<size>`: 100 partitions (p INT) x 8 fixed buckets (bucket-key k BIGINT), one row per data
  file. Every file of bucket b holds the same key (the smallest k that hashes to b), so a
  `k = that key` predicate selects bucket b in the peers and their value statistics cannot
  drop any file of it: the file set is exactly lakecore's `--bucket b`.
- `de_<size>`: data evolution + row tracking, unpartitioned, bucket-unaware, one row per data
  file (row IDs 0..size-1).

Each commit adds --files-per-commit files (one Avro manifest per commit plus its sidecar, as
paimon-rust writes them). The data files are deleted after each commit: planning never opens
them, only the snapshot, manifest lists, manifests and sidecars.

Filters: pb: none, one partition (`--partition p=42` / `p = 42`), one bucket (`--bucket 3` /
`k = <key of bucket 3>`); de: none, a row-ID range of 1% of the rows in the middle (`--rows
A-B` / paimon-rust `with_row_ranges([(A, B)])` / pypaimon `new_scan().with_row_ranges([Range(A,
B)])`).

Measurement, per (table, filter), page cache warm (one untimed `lakecore scan --json` first,
whose file list is also the reference): --runs rounds, each round running lakecore, then
paimon-rust, then pypaimon (A B C A B C ...), each in a fresh process:

- lakecore: `lakecore scan --json [filter] TABLE > /dev/null`, wall time of the whole process
  (posix_spawn to exit). Its peak RSS comes from a second, untimed run of the same command
  under `/usr/bin/time -f %M` (see rss_wrapper: spawned straight from this script, a child
  would report at least this script's own RSS, because Linux carries the peak across exec).
- peers: a fresh child python (started under the same wrapper) imports the library, opens
  catalog + table, plans --warmup times untimed, then --iters times timed: from
  `new_read_builder()` to the list of splits (paimon-rust: `...new_scan().plan().splits()`,
  the PyO3 Split objects; pypaimon: `...new_scan().plan().splits()`). Catalog and table are
  opened anew before every plan, outside the timer. Peak RSS is the child's own ru_maxrss
  after planning (the interpreter and imports included; the figure after the imports alone is
  printed in parentheses).

Correctness: in the first round every peer also returns its file set (partition bytes, bucket,
file name of every data file in its splits); each must equal lakecore's, or the script stops.

Output: a Markdown table (median [min-max] over all timed runs; ratio = lakecore's median /
the peer's median, below 1 means lakecore is faster) and, with --json, every raw figure.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

PARTITIONS = 100
BUCKETS = 8
DB = "bench"
PEERS = ("paimon-rust", "pypaimon")


# ----------------------------------------------------------------------------- helpers

def parse_size(text):
    t = text.strip().lower()
    mult = 1
    if t.endswith("k"):
        mult, t = 1000, t[:-1]
    elif t.endswith("m"):
        mult, t = 1000000, t[:-1]
    n = int(float(t) * mult)
    if n <= 0 or n % (PARTITIONS * BUCKETS):
        raise SystemExit(f"size {text!r}: must be a positive multiple of "
                         f"{PARTITIONS * BUCKETS} (partitions x buckets)")
    return n


def size_label(n):
    if n % 1000000 == 0:
        return f"{n // 1000000}m"
    if n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def fmt_time(ts):
    med, lo, hi = statistics.median(ts), min(ts), max(ts)
    if med >= 10:
        return f"{med:.1f} s [{lo:.1f}-{hi:.1f}]"
    if med >= 1:
        return f"{med:.2f} s [{lo:.2f}-{hi:.2f}]"
    if med >= 0.1:
        return f"{med * 1e3:.0f} ms [{lo * 1e3:.0f}-{hi * 1e3:.0f}]"
    return f"{med * 1e3:.1f} ms [{lo * 1e3:.1f}-{hi * 1e3:.1f}]"


def fmt_ratio(lk, peer):
    r = statistics.median(lk) / statistics.median(peer)
    return f"{r:.3f} (1/{1 / r:.1f})" if r < 1 else f"{r:.2f}"


def mb(kb):
    return f"{kb / 1024:.0f} MB"


def die(msg):
    print(f"\nplan_peers.py: {msg}", file=sys.stderr)
    sys.exit(1)


def files_of_lakecore_json(doc):
    return {(f["partition_hex"].lower(), int(f["bucket"]), f["file_name"]) for f in doc["files"]}


# ----------------------------------------------------------------------------- child: env

def child_env():
    from importlib.metadata import version
    out = {}
    for pkg in ("pypaimon", "pypaimon-rust", "pyarrow"):
        out[pkg] = version(pkg)
    import pypaimon  # noqa: F401  (fail here, not in the middle of a run)
    import pypaimon_rust.datafusion  # noqa: F401
    print(json.dumps(out))


# ----------------------------------------------------------------------------- child: write

def delete_data_files(table_dir):
    """Remove every file under the bucket-* directories (the data files); keep the dirs."""
    n = size = 0
    for root, _, files in os.walk(table_dir):
        if not os.path.basename(root).startswith("bucket-"):
            continue
        for name in files:
            path = os.path.join(root, name)
            size += os.path.getsize(path)
            os.remove(path)
            n += 1
    return n, size


def child_write(a):
    import pyarrow as pa
    from pypaimon import CatalogFactory, Schema
    from pypaimon_rust.datafusion import PaimonCatalog

    warehouse, name, kind, entries = a.warehouse, a.table, a.kind, a.entries
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database(DB, True)
    # target-file-row-num 1: paimon-rust rolls a writer's file at the end of a write_arrow
    # call once the target is met, so every batch that reaches a writer closes one file.
    opts = {"manifest.sidecar.enabled": "true", "target-file-row-num": "1"}
    if kind == "pb":
        schema = pa.schema([("k", pa.int64()), ("p", pa.int32()), ("v", pa.int64())])
        opts.update({"bucket": str(BUCKETS), "bucket-key": "k"})
        catalog.create_table(f"{DB}.{name}", Schema.from_pyarrow_schema(
            schema, partition_keys=["p"], options=opts), False)
    else:
        schema = pa.schema([("id", pa.int64()), ("v", pa.int64())])
        opts.update({"row-tracking.enabled": "true", "data-evolution.enabled": "true"})
        catalog.create_table(f"{DB}.{name}", Schema.from_pyarrow_schema(
            schema, partition_keys=[], options=opts), False)
    py_table = catalog.get_table(f"{DB}.{name}")
    table_dir = py_table.table_path

    bucket_keys = None
    if kind == "pb":
        # The smallest k of each bucket, by pypaimon's own bucket function (the one its
        # and paimon-rust's predicate-driven bucket pruning use).
        from pypaimon.write.row_key_extractor import FixedBucketRowKeyExtractor
        ks = list(range(1000))
        probe = pa.record_batch({"k": pa.array(ks, pa.int64()),
                                 "p": pa.array([0] * len(ks), pa.int32()),
                                 "v": pa.array([0] * len(ks), pa.int64())})
        got = FixedBucketRowKeyExtractor(py_table.table_schema)._extract_buckets_batch(probe)
        bucket_keys = {}
        for k, b in zip(ks, got):
            bucket_keys.setdefault(b, k)
        if sorted(bucket_keys) != list(range(BUCKETS)):
            raise SystemExit(f"could not find a key for every bucket: {bucket_keys}")
        n = PARTITIONS * BUCKETS
        batch = pa.record_batch({
            "k": pa.array([bucket_keys[b] for _ in range(PARTITIONS) for b in range(BUCKETS)],
                          pa.int64()),
            "p": pa.array([p for p in range(PARTITIONS) for _ in range(BUCKETS)], pa.int32()),
            "v": pa.array(list(range(n)), pa.int64())})
        files_per_batch = n
    else:
        batch = pa.record_batch({"id": pa.array([0], pa.int64()), "v": pa.array([0], pa.int64())})
        files_per_batch = 1
    batches = entries // files_per_batch
    per_commit = max(1, a.files_per_commit // files_per_batch)

    rust_table = PaimonCatalog({"warehouse": warehouse}).get_table((DB, name))
    t0 = time.perf_counter()
    done = commits = deleted = deleted_bytes = 0
    while done < batches:
        builder = rust_table.new_batch_write_builder()
        writer = builder.new_write()
        for _ in range(min(per_commit, batches - done)):
            writer.write_arrow(batch)
            done += 1
        messages = writer.prepare_commit()
        builder.new_commit().commit(messages)
        writer.close()
        commits += 1
        n, size = delete_data_files(table_dir)
        deleted += n
        deleted_bytes += size
        print(f"  {name}: commit {commits}, {done * files_per_batch} files, "
              f"{time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - t0
    if deleted != entries:
        raise SystemExit(f"{name}: wrote {deleted} data files, expected {entries}")
    manifest_dir = os.path.join(table_dir, "manifest")
    manifests = [f for f in os.listdir(manifest_dir)
                 if f.startswith("manifest-") and not f.startswith("manifest-list-")]
    print(json.dumps({
        "table": name, "kind": kind, "entries": entries, "table_dir": table_dir,
        "write_seconds": round(seconds, 1), "commits": commits,
        "files_per_commit": per_commit * files_per_batch,
        "data_files_deleted": deleted, "data_bytes_deleted": deleted_bytes,
        "manifest_files": len([f for f in manifests if not f.endswith(".sidecar")]),
        "sidecar_files": len([f for f in manifests if f.endswith(".sidecar")]),
        "manifest_bytes": sum(os.path.getsize(os.path.join(manifest_dir, f))
                              for f in manifests if not f.endswith(".sidecar")),
        "options": opts, "bucket_keys": bucket_keys,
        "written_at_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
    }))


# ----------------------------------------------------------------------------- child: plan

def child_plan(a):
    import resource
    spec = json.loads(a.spec)
    warehouse, name = a.warehouse, a.table

    if a.engine == "paimon-rust":
        from pypaimon_rust.datafusion import PaimonCatalog

        def open_table():
            return PaimonCatalog({"warehouse": warehouse}).get_table((DB, name))

        def plan(table):
            rb = table.new_read_builder()
            if "partition" in spec:
                rb = rb.with_filter({"method": "equal", "field": "p",
                                     "literals": [spec["partition"]]})
            if "bucket_key" in spec:
                rb = rb.with_filter({"method": "equal", "field": "k",
                                     "literals": [spec["bucket_key"]]})
            if "rows" in spec:
                rb = rb.with_row_ranges([tuple(spec["rows"])])
            return rb.new_scan().plan().splits()
    else:
        from pypaimon import CatalogFactory
        from pypaimon.utils.range import Range

        def open_table():
            return CatalogFactory.create({"warehouse": warehouse}).get_table(f"{DB}.{name}")

        def plan(table):
            rb = table.new_read_builder()
            pb = rb.new_predicate_builder()
            if "partition" in spec:
                rb = rb.with_filter(pb.equal("p", spec["partition"]))
            if "bucket_key" in spec:
                rb = rb.with_filter(pb.equal("k", spec["bucket_key"]))
            scan = rb.new_scan()
            if "rows" in spec:
                scan = scan.with_row_ranges([Range(*spec["rows"])])
            return scan.plan().splits()

    rss_import = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = []
    splits = None
    for i in range(a.warmup + a.iters):
        table = open_table()
        splits = None  # do not hold the previous plan while planning again
        t0 = time.perf_counter()
        splits = plan(table)
        t = time.perf_counter() - t0
        if i >= a.warmup:
            times.append(t)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = {"times": times, "maxrss_kb": rss, "maxrss_kb_after_import": rss_import,
           "splits": len(splits)}

    if a.dump:
        # Outside the timings and after the RSS reading: the file set of the last plan.
        from pypaimon.table.row.generic_row import GenericRowSerializer
        if a.engine == "paimon-rust":
            from pypaimon import CatalogFactory
            from pypaimon.read.native_plan import _partition_fields
            from pypaimon.read.split_serializer import deserialize_split_v1
            pt = CatalogFactory.create({"warehouse": warehouse}).get_table(f"{DB}.{name}")
            pfields = _partition_fields(pt)
            kfields = pt.trimmed_primary_keys_fields
            splits = [deserialize_split_v1(s.serialize(), pfields, kfields) for s in splits]
        files = []
        for s in splits:
            part = GenericRowSerializer.to_bytes(s.partition).hex()
            for f in s.files:
                files.append([part, int(s.bucket), f.file_name])
        with open(a.dump, "w") as fh:
            json.dump(files, fh)
        out["files"] = len(files)
    print(json.dumps(out))


# ----------------------------------------------------------------------------- peak RSS

RSS_MARK = "PLAN_PEERS_PEAK_RSS_KB="


def child_rss(cmd):
    """Fallback for a missing /usr/bin/time: fork (not vfork) from this small process, exec,
    and print the child's peak RSS from wait4() to stderr, as `time -f %M` would."""
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    print(f"{RSS_MARK}{ru.ru_maxrss}", file=sys.stderr)
    sys.exit(os.waitstatus_to_exitcode(status))


def rss_wrapper():
    """A command prefix that reports the wrapped process's peak RSS on stderr.

    Linux carries a process's peak RSS across execve() and starts a forked child's at the
    parent's current RSS (a vfork'd child, as posix_spawn and subprocess use, at the parent's
    peak). Spawned straight from this script, which holds the reference file lists, every
    child would report at least this script's RSS. So the measured process is forked from a
    small one: GNU time (floor about 1 MB), else a fresh python running child_rss (floor about
    9 MB)."""
    if os.access("/usr/bin/time", os.X_OK):
        return ["/usr/bin/time", "-f", RSS_MARK + "%M"]
    return [sys.executable, os.path.abspath(__file__), "_rss"]


def rss_of_stderr(text):
    for line in reversed(text.splitlines()):
        if line.startswith(RSS_MARK):
            return int(line[len(RSS_MARK):])
    return None


# ----------------------------------------------------------------------------- parent

def run_child(python, args, what, wrap=()):
    cmd = list(wrap) + [python, os.path.abspath(__file__)] + args
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        die(f"{what} failed (exit {p.returncode}):\n{p.stderr[-4000:]}")
    try:
        doc = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        die(f"{what}: no JSON result on stdout:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    doc["child_wall_seconds"] = wall
    doc["wrapper_maxrss_kb"] = rss_of_stderr(p.stderr)
    return doc


def run_lakecore_timed(cmd):
    """Whole process: spawn to exit, stdout and stderr to /dev/null."""
    actions = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    t0 = time.perf_counter()
    pid = os.posix_spawn(cmd[0], cmd, os.environ, file_actions=actions)
    _, status = os.waitpid(pid, 0)
    t = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        die(f"{' '.join(cmd)} failed (exit {os.waitstatus_to_exitcode(status)}):\n{p.stderr}")
    return t


def run_lakecore_rss(cmd):
    """The same command again, untimed, under the RSS wrapper: its peak RSS in KB."""
    p = subprocess.run(rss_wrapper() + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    rss = rss_of_stderr(p.stderr)
    if p.returncode != 0 or rss is None:
        die(f"{' '.join(cmd)} under {rss_wrapper()[0]} failed:\n{p.stderr[-4000:]}")
    return rss


def ensure_table(a, kind, entries):
    name = f"{kind}_{size_label(entries)}"
    warehouse = os.path.join(a.work, "warehouse")
    marker = os.path.join(a.work, f"{name}.written.json")
    table_dir = os.path.join(warehouse, f"{DB}.db", name)
    if os.path.exists(marker) and os.path.isdir(table_dir):
        info = json.load(open(marker))
        info["reused"] = True
        print(f"table {name}: reusing {table_dir} (written {info['written_at_utc']} UTC "
              f"in {info['write_seconds']} s)", file=sys.stderr)
        return info
    if os.path.exists(table_dir):
        print(f"table {name}: {table_dir} has no marker (interrupted write?), rewriting",
              file=sys.stderr)
        shutil.rmtree(table_dir)
    os.makedirs(warehouse, exist_ok=True)
    print(f"table {name}: writing {entries} entries with pypaimon-rust ...", file=sys.stderr)
    cmd = [a.python, os.path.abspath(__file__), "_write", "--warehouse", warehouse,
           "--table", name, "--kind", kind, "--entries", str(entries),
           "--files-per-commit", str(a.files_per_commit)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)  # progress on our stderr
    if p.returncode != 0:
        die(f"writing {name} failed (exit {p.returncode})")
    info = json.loads(p.stdout.strip().splitlines()[-1])
    with open(marker, "w") as fh:
        json.dump(info, fh, indent=1)
    info["reused"] = False
    print(f"table {name}: written in {info['write_seconds']} s, {info['commits']} commits, "
          f"{info['manifest_files']} manifests ({info['manifest_bytes'] / 1e6:.1f} MB), "
          f"{info['sidecar_files']} sidecars", file=sys.stderr)
    return info


def filters_for(info):
    n = info["entries"]
    if info["kind"] == "pb":
        b = 3
        return [("none", [], {}),
                ("partition p=42", ["--partition", "p=42"], {"partition": 42}),
                (f"bucket {b}", ["--bucket", str(b)],
                 {"bucket": b, "bucket_key": info["bucket_keys"][str(b)]})]
    lo = n // 2
    hi = lo + max(1, n // 100) - 1
    return [("none", [], {}),
            (f"rows {lo}-{hi}", ["--rows", f"{lo}-{hi}"], {"rows": [lo, hi]})]


def measure(a, lakecore, info, label, lk_args, spec, dump_dir):
    warehouse = os.path.join(a.work, "warehouse")
    table_dir = info["table_dir"]
    name = info["table"]
    lk_cmd = [lakecore, "scan", "--json"] + lk_args + [table_dir]
    # Untimed: warms the page cache and gives the reference file set.
    p = subprocess.run(lk_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        die(f"{' '.join(lk_cmd)} failed:\n{p.stderr.decode()[-4000:]}")
    doc = json.loads(p.stdout)
    reference = files_of_lakecore_json(doc)
    del p, doc
    row = {"table": name, "filter": label, "files": len(reference),
           "lakecore_cmd": " ".join(lk_cmd), "lakecore": {"times": [], "maxrss_kb": []},
           "peers": {peer: {"times": [], "maxrss_kb": [], "maxrss_kb_after_import": [],
                            "child_wall_seconds": [], "wrapper_maxrss_kb": []}
                     for peer in a.peers},
           "loadavg": [os.getloadavg()]}
    for r in range(a.runs):
        t = run_lakecore_timed(lk_cmd)
        row["lakecore"]["times"].append(t)
        row["lakecore"]["maxrss_kb"].append(run_lakecore_rss(lk_cmd))
        for peer in a.peers:
            args = ["_plan", "--engine", peer, "--warehouse", warehouse, "--table", name,
                    "--spec", json.dumps(spec), "--warmup", str(a.warmup),
                    "--iters", str(a.iters)]
            dump = None
            if r == 0:
                dump = os.path.join(dump_dir, f"{name}.{peer}.files.json")
                args += ["--dump", dump]
            res = run_child(a.python, args, f"{peer} plan of {name} [{label}]",
                            wrap=rss_wrapper())
            acc = row["peers"][peer]
            acc["times"] += res["times"]
            acc["maxrss_kb"].append(res["maxrss_kb"])
            acc["maxrss_kb_after_import"].append(res["maxrss_kb_after_import"])
            acc["child_wall_seconds"].append(res["child_wall_seconds"])
            acc["wrapper_maxrss_kb"].append(res["wrapper_maxrss_kb"])
            if dump:
                got = {tuple(x) for x in json.load(open(dump))}
                os.remove(dump)
                if got != reference:
                    only_lk = sorted(reference - got)[:5]
                    only_peer = sorted(got - reference)[:5]
                    die(f"file sets differ on {name} [{label}]: lakecore {len(reference)} "
                        f"files, {peer} {len(got)}.\n  only lakecore (first 5): {only_lk}\n"
                        f"  only {peer} (first 5): {only_peer}")
                acc["files_checked"] = len(got)
        print(f"  {name} [{label}] round {r + 1}/{a.runs}: lakecore {t * 1e3:.1f} ms"
              + "".join(f", {peer} {row['peers'][peer]['times'][-1] * 1e3:.1f} ms"
                        for peer in a.peers), file=sys.stderr, flush=True)
    row["loadavg"].append(os.getloadavg())
    return row


def markdown(rows, peers):
    head = ["table", "filter", "files", "lakecore scan, whole process", "lakecore peak RSS"]
    for peer in peers:
        head += [f"{peer} plan(), in process", f"{peer} peak RSS (imports only)"]
    head += [f"lakecore / {peer}" for peer in peers]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        lk = row["lakecore"]
        cells = [row["table"], row["filter"], str(row["files"]), fmt_time(lk["times"]),
                 mb(max(lk["maxrss_kb"]))]
        for peer in peers:
            p = row["peers"][peer]
            cells += [fmt_time(p["times"]),
                      f"{mb(max(p['maxrss_kb']))} ({mb(max(p['maxrss_kb_after_import']))})"]
        cells += [fmt_ratio(lk["times"], row["peers"][peer]["times"]) for peer in peers]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cpus": os.cpu_count(), "kernel": platform.release()}


def main():
    ap = argparse.ArgumentParser(
        description="lakecore scan vs paimon-rust plan() vs pypaimon plan() on generated "
                    "tables (see the module docstring)")
    sub = sys.argv[1] if len(sys.argv) > 1 else ""
    if sub == "_env":
        return child_env()
    if sub == "_rss":
        return child_rss(sys.argv[2:])
    if sub == "_write":
        w = argparse.ArgumentParser()
        w.add_argument("_write")
        w.add_argument("--warehouse", required=True)
        w.add_argument("--table", required=True)
        w.add_argument("--kind", choices=("pb", "de"), required=True)
        w.add_argument("--entries", type=int, required=True)
        w.add_argument("--files-per-commit", type=int, required=True)
        return child_write(w.parse_args())
    if sub == "_plan":
        w = argparse.ArgumentParser()
        w.add_argument("_plan")
        w.add_argument("--engine", choices=PEERS, required=True)
        w.add_argument("--warehouse", required=True)
        w.add_argument("--table", required=True)
        w.add_argument("--spec", required=True)
        w.add_argument("--warmup", type=int, default=1)
        w.add_argument("--iters", type=int, default=1)
        w.add_argument("--dump")
        return child_plan(w.parse_args())

    ap.add_argument("--lakecore", default="target/release/lakecore",
                    help="the lakecore binary (cargo build --release --features cli)")
    ap.add_argument("--sizes", default="100k",
                    help="comma-separated entry counts: 100k, 1m, or any multiple of 800")
    ap.add_argument("--runs", type=int, default=5,
                    help="rounds per (table, filter); each round runs every tool once, "
                         "in turn (default 5)")
    ap.add_argument("--warmup", type=int, default=1,
                    help="untimed plans in each peer process before the timed ones (default 1)")
    ap.add_argument("--iters", type=int, default=1,
                    help="timed plans in each peer process (default 1)")
    ap.add_argument("--peers", default=",".join(PEERS),
                    help=f"comma-separated subset of {','.join(PEERS)}")
    ap.add_argument("--tables", default="pb,de", help="comma-separated subset of pb,de")
    ap.add_argument("--work", default="/tmp/lakecore-plan-bench",
                    help="folder for the tables, reused across runs")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter with pypaimon==2.1.0, pypaimon-rust==0.4.0, pyarrow "
                         "(default: this one)")
    ap.add_argument("--files-per-commit", type=int, default=10000,
                    help="data files per commit when writing a table (default 10000)")
    ap.add_argument("--write-only", action="store_true", help="write the tables and stop")
    ap.add_argument("--json", help="write every raw figure to this file")
    a = ap.parse_args()
    a.peers = [p for p in a.peers.split(",") if p]
    for p in a.peers:
        if p not in PEERS:
            ap.error(f"unknown peer {p!r}")
    kinds = [k for k in a.tables.split(",") if k]
    for k in kinds:
        if k not in ("pb", "de"):
            ap.error(f"unknown table kind {k!r}")
    sizes = [parse_size(s) for s in a.sizes.split(",") if s]
    a.work = os.path.abspath(a.work)
    lakecore = shutil.which(a.lakecore) or a.lakecore
    lakecore = os.path.abspath(lakecore)
    if not a.write_only and not os.access(lakecore, os.X_OK):
        die(f"no lakecore binary at {lakecore}: cargo build --release --features cli")

    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    env = run_child(a.python, ["_env"], f"{a.python}: import pypaimon, pypaimon_rust, pyarrow")
    env.pop("child_wall_seconds", None)
    env.pop("wrapper_maxrss_kb", None)
    for pkg, want in (("pypaimon", "2.1.0"), ("pypaimon-rust", "0.4.0")):
        if env.get(pkg) != want:
            print(f"warning: {pkg} {env.get(pkg)} (the pinned version is {want})",
                  file=sys.stderr)
    lk_version = ""
    if os.access(lakecore, os.X_OK):
        lk_version = subprocess.run([lakecore, "--version"], stdout=subprocess.PIPE,
                                    text=True).stdout.strip()
    git_head = subprocess.run(["git", "-C", os.path.dirname(lakecore), "rev-parse", "--short",
                               "HEAD"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True).stdout.strip()
    if git_head and subprocess.run(
            ["git", "-C", os.path.dirname(lakecore), "status", "--porcelain", "-uno", "--",
             "src", "Cargo.toml", "Cargo.lock", "build.rs"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip():
        git_head += "+uncommitted changes in the tree"
    mach = machine()
    print(f"{started} UTC, {mach['cpu']}, {mach['cpus']} CPUs; {lk_version} ({git_head}); "
          + ", ".join(f"{k} {v}" for k, v in env.items()), file=sys.stderr)

    os.makedirs(a.work, exist_ok=True)
    tables = []
    for n in sizes:
        for kind in kinds:
            tables.append(ensure_table(a, kind, n))
    if a.write_only:
        return

    rows = []
    for info in tables:
        for label, lk_args, spec in filters_for(info):
            rows.append(measure(a, lakecore, info, label, lk_args, spec, a.work))

    print()
    print(f"Measured {started} UTC; {mach['cpu']}, {mach['cpus']} CPUs; {lk_version} "
          f"({git_head}); " + ", ".join(f"{k} {v}" for k, v in env.items())
          + f"; {a.runs} rounds x {a.iters} timed plan(s) per peer process after "
          f"{a.warmup} warm-up; load average {rows[0]['loadavg'][0][0]:.2f} at start, "
          f"{os.getloadavg()[0]:.2f} at end.")
    print()
    print("Tables: " + "; ".join(
        f"{t['table']} {t['entries']} entries, {t['manifest_files']} manifests "
        f"({t['manifest_bytes'] / 1e6:.1f} MB) + {t['sidecar_files']} sidecars, written in "
        f"{t['write_seconds']} s" + (" (reused)" if t["reused"] else "") for t in tables) + ".")
    print()
    print(markdown(rows, a.peers))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"started_utc": started, "machine": mach, "python_packages": env,
                       "lakecore": lakecore, "lakecore_version": lk_version,
                       "git_head": git_head, "runs": a.runs, "warmup": a.warmup,
                       "iters": a.iters, "tables": tables, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
