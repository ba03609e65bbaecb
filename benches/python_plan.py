#!/usr/bin/env python3
"""The Python package's planning cost, in one process, alternated per round:

- A  `lakecore.Table(dir).plan(...)`: the Python API, up to the finished `pyarrow.Table`.
- B  the same plan through the extension's `RawTable._plan_count` (the Rust call alone: the
     same `prepare_snapshot` + parallel `run`, no columns built): A/B - 1 is the binding's
     overhead (goal: < 10% on a 100k-entry plan).
- B' the same plus the plan's Arrow batches (`_plan_count(batches=True)`: the Rust call that
     gives what A gives, `paimon::arrow::plan_batches`, then dropped): A/B' - 1 is what the
     hand-over to pyarrow alone costs.
- C  paimon-rust's native planner through pypaimon-rust 0.4.0 (`PaimonCatalog ...
     new_scan().plan().splits()`, what pypaimon calls with `scan.native-plan.enabled`).
- D  pypaimon 2.1.0's pure-Python `plan()` (slow: at most --pypaimon-runs timed runs).

Tables: those `benches/plan_peers.py` writes (pypaimon-rust, sidecars on) under --work:
`pb_100k` (100 partitions x 8 buckets) and `de_100k` (data evolution, row tracking). Filters as
there: none, `p = 42`, bucket 3 (`k = <its key>` for the peers), a 1% row-ID range.

Each (table, filter): one untimed warm-up of every engine, whose file sets must be equal
(stops otherwise), then --runs rounds of A B C [D], each engine's table opened anew outside the
timer. Prints a Markdown table: median [min-max] per engine, A/B - 1 from the medians and the
median of the per-round ratios A_i/B_i - 1.

    target/ci-venv/bin/python benches/python_plan.py --work /tmp/lakecore-plan-bench --runs 15
(the venv needs lakecore (`maturin develop --release` in python/), pypaimon==2.1.0 and
pypaimon-rust==0.4.0.)
"""

import argparse
import json
import os
import statistics
import sys
import time

import lakecore

DB = "bench"


def filters(kind, entries, bucket_keys):
    if kind == "pb":
        return [("none", {}), ("partition p=42", {"partition": 42}),
                ("bucket 3", {"bucket": 3, "bucket_key": bucket_keys["3"]})]
    lo = entries // 2
    hi = lo + max(1, entries // 100) - 1
    return [("none", {}), (f"rows {lo}-{hi}", {"rows": [lo, hi]})]


def engines(warehouse, name, spec):
    from pypaimon import CatalogFactory
    from pypaimon.utils.range import Range
    from pypaimon_rust.datafusion import PaimonCatalog

    table_dir = os.path.join(warehouse, f"{DB}.db", name)
    kwargs = {}
    if "partition" in spec:
        kwargs["partitions"] = {"p": spec["partition"]}
    if "bucket" in spec:
        kwargs["buckets"] = [spec["bucket"]]
    if "rows" in spec:
        kwargs["rows"] = [tuple(spec["rows"])]

    def lakecore_python():
        t = lakecore.Table(table_dir)
        t0 = time.perf_counter()
        plan = t.plan(**kwargs)
        return time.perf_counter() - t0, plan

    raw_kwargs = {"partitions": [(k, str(v)) for k, v in kwargs.get("partitions", {}).items()],
                  "buckets": [(b, None) for b in kwargs["buckets"]] if "buckets" in kwargs
                  else None,
                  "rows": kwargs.get("rows")}

    def lakecore_rust():
        raw = lakecore._lakecore.RawTable(table_dir)
        t0 = time.perf_counter()
        out = raw._plan_count(**raw_kwargs)
        return time.perf_counter() - t0, out

    def lakecore_rust_batches():
        raw = lakecore._lakecore.RawTable(table_dir)
        t0 = time.perf_counter()
        out = raw._plan_count(**raw_kwargs, batches=True)
        return time.perf_counter() - t0, out

    def paimon_rust():
        table = PaimonCatalog({"warehouse": warehouse}).get_table((DB, name))
        t0 = time.perf_counter()
        rb = table.new_read_builder()
        if "partition" in spec:
            rb = rb.with_filter({"method": "equal", "field": "p", "literals": [spec["partition"]]})
        if "bucket_key" in spec:
            rb = rb.with_filter({"method": "equal", "field": "k", "literals": [spec["bucket_key"]]})
        if "rows" in spec:
            rb = rb.with_row_ranges([tuple(spec["rows"])])
        splits = rb.new_scan().plan().splits()
        return time.perf_counter() - t0, splits

    def pypaimon():
        table = CatalogFactory.create({"warehouse": warehouse}).get_table(f"{DB}.{name}")
        t0 = time.perf_counter()
        rb = table.new_read_builder()
        pb = rb.new_predicate_builder()
        if "partition" in spec:
            rb = rb.with_filter(pb.equal("p", spec["partition"]))
        if "bucket_key" in spec:
            rb = rb.with_filter(pb.equal("k", spec["bucket_key"]))
        scan = rb.new_scan()
        if "rows" in spec:
            scan = scan.with_row_ranges([Range(*spec["rows"])])
        splits = scan.plan().splits()
        return time.perf_counter() - t0, splits

    return {"A lakecore Python": lakecore_python, "B lakecore Rust call": lakecore_rust,
            "B' lakecore Rust call + batches": lakecore_rust_batches,
            "C paimon-rust": paimon_rust, "D pypaimon": pypaimon}


def paimon_rust_names(warehouse, name, splits):
    from pypaimon import CatalogFactory
    from pypaimon.read.native_plan import _partition_fields
    from pypaimon.read.split_serializer import deserialize_split_v1
    pt = CatalogFactory.create({"warehouse": warehouse}).get_table(f"{DB}.{name}")
    pf, kf = _partition_fields(pt), pt.trimmed_primary_keys_fields
    return sorted(f.file_name for s in splits for f in deserialize_split_v1(s.serialize(), pf, kf).files)


def fmt(ts):
    ms = [t * 1000 for t in ts]
    return f"{statistics.median(ms):.1f} ms [{min(ms):.1f}-{max(ms):.1f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default="/tmp/lakecore-plan-bench")
    ap.add_argument("--tables", default="pb_100k,de_100k")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--pypaimon-runs", type=int, default=3)
    ap.add_argument("--no-peers", action="store_true",
                    help="time A and B only (the binding's overhead), skip paimon-rust and pypaimon")
    ap.add_argument("--json", help="write every raw time here")
    a = ap.parse_args()
    warehouse = os.path.join(a.work, "warehouse")
    rows, raw = [], {}
    for name in a.tables.split(","):
        info = json.load(open(os.path.join(a.work, f"{name}.written.json")))
        for label, spec in filters(info["kind"], info["entries"], info.get("bucket_keys")):
            es = engines(warehouse, name, spec)
            # Warm-up and correctness: every engine's file set equals lakecore's.
            _, plan = es["A lakecore Python"]()
            want = sorted(plan.column("file_name").to_pylist())
            _, (_, n) = es["B lakecore Rust call"]()
            if a.no_peers:
                del es["C paimon-rust"], es["D pypaimon"]
                c_names = d_names = want
            else:
                c_names = paimon_rust_names(warehouse, name, es["C paimon-rust"]()[1])
                d_names = sorted(f.file_name for s in es["D pypaimon"]()[1] for f in s.files)
            if n != len(want) or c_names != want or d_names != want:
                sys.exit(f"{name} {label}: file sets differ: lakecore {len(want)}, rust call {n}, "
                         f"paimon-rust {len(c_names)}, pypaimon {len(d_names)}")
            times = {k: [] for k in es}
            for i in range(a.runs):
                for k, run in es.items():
                    if k.startswith("D") and i >= a.pypaimon_runs:
                        continue
                    times[k].append(run()[0])
            A, B = times["A lakecore Python"], times["B lakecore Rust call"]
            B2 = times["B' lakecore Rust call + batches"]
            overhead = statistics.median(A) / statistics.median(B) - 1
            paired = statistics.median(x / y for x, y in zip(A, B)) - 1
            paired2 = statistics.median(x / y for x, y in zip(A, B2)) - 1
            C, D = times.get("C paimon-rust"), times.get("D pypaimon")
            rows.append((name, label, len(want), fmt(A), fmt(B), f"{overhead * 100:+.1f}%",
                         f"{paired * 100:+.1f}%", fmt(B2), f"{paired2 * 100:+.1f}%",
                         fmt(C) if C else "-", fmt(D) if D else "-",
                         f"{statistics.median(C) / statistics.median(A):.1f}x" if C else "-",
                         f"{statistics.median(D) / statistics.median(A):.0f}x" if D else "-"))
            raw[f"{name} {label}"] = times
            print(" | ".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    print("| table | filter | files | A lakecore `Table.plan()` | B Rust call alone | A/B - 1 "
          "(medians) | A_i/B_i - 1 (median) | B' Rust call + Arrow batches | A_i/B'_i - 1 "
          "(median) | C paimon-rust native | D pypaimon | C/A | D/A |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(map(str, r)) + " |")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(raw, fh)


if __name__ == "__main__":
    main()
