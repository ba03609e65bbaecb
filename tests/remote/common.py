"""Helpers shared by the remote checks (check_remote.py against S3, check_emulators.py
against GCS and Azure emulators): the check counter, ports, processes, uploads of a local
tree, the committed tables, and the comparisons of remote reads with local ones.
"""
import os
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The queries each table is planned with, remote and local.
QUERIES = [[], ["--bucket", "1"], ["--bucket", "0,3"], ["--rows", "0-5,100-120"],
           ["--partition", "dt=2024-01-02"], ["--rows", "10-10", "--bucket", "2"]]

_passed = 0
_lock = threading.Lock()


def check(cond, what):
    """Counts a passed check; exits 1 naming `what` on a failed one (raised in a worker
    thread, the SystemExit reaches the caller through its future)."""
    global _passed
    if not cond:
        sys.exit(f"FAILED: {what}")
    with _lock:
        _passed += 1


def passed():
    """How many checks have passed so far."""
    return _passed


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(proc, port, name, seconds=30):
    """Waits until 127.0.0.1:`port` accepts connections; exits if `proc` ends first or the
    time runs out (killing it)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"{name} exited with status {proc.returncode} before listening on {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit(f"{name} did not listen on 127.0.0.1:{port} within {seconds} s")


def stop(proc, pidfile=None):
    """Terminates a server started by a check (killed after 10 s) and removes its pid file."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if pidfile and os.path.exists(pidfile):
        os.remove(pidfile)


def upload(put, local_dir, prefix):
    """Calls `put(key, local_path)` for every file under `local_dir`, keys `prefix/rel`;
    returns how many."""
    n = 0
    for dirpath, _, files in os.walk(local_dir):
        for f in files:
            p = os.path.join(dirpath, f)
            put(prefix + "/" + os.path.relpath(p, local_dir), p)
            n += 1
    return n


def tables_under(warehouse):
    """`db.db/table` for each table (a directory with `snapshot/`) of a warehouse."""
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
    """(exit code, stdout bytes, stderr text, seconds) of a command."""
    t = time.monotonic()
    p = subprocess.run(args, capture_output=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace"), time.monotonic() - t


_local_runs = {}


def run_local(args, env):
    """`run` of a command on local files, remembered: the local side of a comparison is the
    same for every backend."""
    key = tuple(args)
    with _lock:
        done = _local_runs.get(key)
    if done is None:
        done = run(args, env)
        with _lock:
            _local_runs[key] = done
    return done


def in_parallel(jobs, workers=4):
    """Runs the callables in `jobs` on `workers` threads (the commands they run wait on the
    network more than they compute); returns their results in order, re-raising the first
    failure."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(job) for job in jobs]
        return [f.result() for f in futures]


def make_wide_parquet(lakecore, work):
    """A wide standard Parquet file (pyarrow: 120 int64 columns, 2 row groups, page index)
    and its modular-footer conversion; returns (standard, modular) paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 10000
    cols = {f"c{c}": pa.array([(i * (c + 13) * 2654435761) % (1 << 40) for i in range(n)],
                              pa.int64()) for c in range(120)}
    std = os.path.join(work, "wide.parquet")
    pq.write_table(pa.table(cols), std, row_group_size=5000, write_page_index=True)
    mod = os.path.join(work, "wide.modular.parquet")
    subprocess.run([lakecore, "footer", "convert", std, "-o", mod], check=True,
                   stdout=subprocess.DEVNULL)
    return std, mod


def compare_scans(lakecore, env, local, url, queries=QUERIES, extra=()):
    """`lakecore scan --json` of `url` equals the local directory's for each query (exit code
    and output; no output on error). Returns the (query, remote stdout) pairs that planned."""
    out_plans = []
    for q in queries:
        lc, lout, lerr, _ = run_local([lakecore, "scan", "--json", local, *q], env)
        rc, out, err, _ = run([lakecore, "scan", "--json", url, *q, *extra], env)
        what = f"{url} {' '.join([*q, *extra])}"
        check(rc == lc, f"{what}: exit {rc} remote, {lc} local: {err}")
        if lc != 0:
            check(out == b"", f"{what}: output on error")
            continue
        check(out == lout, f"{what}: remote plan differs from local")
        out_plans.append((q, out))
    return out_plans


def compare_blob_reads(lakecore, env, local, url, queries=([], ["--rows", "3-40,250-260"])):
    """`lakecore blob read --json` of `url` equals the local read for each query."""
    for q in queries:
        lc, lout, lerr, _ = run_local([lakecore, "blob", "read", "--json", local, *q], env)
        rc, out, err, _ = run([lakecore, "blob", "read", "--json", url, *q], env)
        check(lc == 0 and rc == 0, f"blob read {url} {q}: exit {rc} / {lc}: {err}{lerr}")
        check(out == lout and len(out) > 0, f"blob read {url} {q}: rows differ")


def compare_footer_reads(lakecore, env, local, url, columns="c3,c50,c99"):
    """`lakecore footer read` (csv and json) and `footer inspect --json` of `url` equal the
    local file's."""
    proj = ["--columns", columns]
    for fmt in ("csv", "json"):
        lc, lout, lerr, _ = run_local([lakecore, "footer", "read", local, *proj, "--format", fmt],
                                      env)
        rc, out, err, _ = run([lakecore, "footer", "read", url, *proj, "--format", fmt], env)
        check(lc == 0 and rc == 0 and out == lout and len(out) > 0,
              f"footer read {url} {fmt}: exit {rc}/{lc}, equal {out == lout}: {err}{lerr}")
    lc, lout, _, _ = run_local([lakecore, "footer", "inspect", "--json", local], env)
    rc, out, err, _ = run([lakecore, "footer", "inspect", "--json", url], env)
    check(lc == 0 and rc == 0 and out == lout, f"footer inspect --json {url}: {err}")
