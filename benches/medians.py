#!/usr/bin/env python3
"""Prints every criterion benchmark's median (ns per iteration) and throughput from
target/criterion/*/new/{benchmark,estimates}.json, one line each, for BENCHMARKS.md."""
import json, os, sys

root = sys.argv[1] if len(sys.argv) > 1 else "target/criterion"
rows = []
for dirpath, _, files in os.walk(root):
    if os.path.basename(dirpath) != "new" or "estimates.json" not in files:
        continue
    bench = json.load(open(os.path.join(dirpath, "benchmark.json")))
    est = json.load(open(os.path.join(dirpath, "estimates.json")))
    median = est["median"]["point_estimate"]
    thr = bench.get("throughput") or {}
    rate = ""
    if "Elements" in thr:
        rate = f"{thr['Elements'] / median:.3f} G elem/s"
    elif "Bytes" in thr:
        rate = f"{thr['Bytes'] / median:.3f} GB/s"
    rows.append((bench["full_id"], median, rate))
for full_id, median, rate in sorted(rows):
    print(f"{full_id:60s} {median:14.1f} ns  {rate}")
