#!/usr/bin/env python3
"""A/B of two `lakecore` binaries on local scan planning, whole process, alternated
(A B A B ...), page cache warm: medians and [min-max] per (table, filter), and the ratio B/A.
Both binaries' JSON outputs must be identical.

    python3 benches/ab_scan.py A_BINARY B_BINARY --runs 15 TABLE_DIR[:ARGS] ...

e.g. `/tmp/lakecore-plan-bench/warehouse/bench.db/pb_100k:--partition p=42`.
"""
import argparse
import statistics
import subprocess
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    print("| table | filter | A median [min-max] | B median [min-max] | B/A |")
    print("|---|---|---|---|---|")
    for case in args.cases:
        table, _, extra = case.partition(":")
        extra = extra.split()
        times = {"a": [], "b": []}
        outs = {}
        for r in range(args.runs + 1):
            for k in ("a", "b"):
                t0 = time.perf_counter()
                p = subprocess.run([getattr(args, k), "scan", "--json", table, *extra],
                                   capture_output=True, check=True)
                dt = time.perf_counter() - t0
                outs[k] = p.stdout
                if r:
                    times[k].append(dt)
        if outs["a"] != outs["b"]:
            raise SystemExit(f"{case}: outputs differ")
        ma, mb = statistics.median(times["a"]), statistics.median(times["b"])
        f = lambda xs: f"{statistics.median(xs) * 1000:.1f} ms [{min(xs) * 1000:.1f}-{max(xs) * 1000:.1f}]"
        name = table.rstrip("/").rsplit("/", 1)[-1]
        print(f"| {name} | {' '.join(extra) or 'none'} | {f(times['a'])} | {f(times['b'])} | {mb / ma:.3f} |")


if __name__ == "__main__":
    main()
