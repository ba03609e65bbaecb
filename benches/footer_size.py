#!/usr/bin/env python3
"""Modular footer size against the standard footer plus page index, on pyarrow files with a
page index: 10, 100, 1,000 and 10,000 columns (int64, double, string in turn; a few nulls),
2 row groups. Files go to target/footer-size/ (not committed); the byte accounting is the
Rust example `footer_size` (lakecore's converter; the `parquet` crate reads the standard
footer's page-index lengths). Prints a Markdown table for BENCHMARKS.md.

    python benches/footer_size.py [--columns 10,100,1000,10000] [--rows 200] [--row-groups 2]

Needs pyarrow. Sizes are deterministic for given versions: one run is the measurement.
"""
import argparse
import json
import os
import random
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(path, columns, rows, row_groups, seed=7):
    rnd = random.Random(seed + columns)
    cols = {}
    for i in range(columns):
        kind = i % 3
        if kind == 0:
            base = rnd.randrange(1 << 40)
            cols[f"i{i}"] = pa.array([base + r * 3 for r in range(rows)], pa.int64())
        elif kind == 1:
            cols[f"d{i}"] = pa.array(
                [None if rnd.random() < 0.05 else rnd.uniform(-1e6, 1e6) for _ in range(rows)],
                pa.float64(),
            )
        else:
            cols[f"s{i}"] = pa.array([f"value-{rnd.randrange(1000):04d}" for _ in range(rows)], pa.string())
    pq.write_table(pa.table(cols), path, write_page_index=True, row_group_size=rows // row_groups,
                   data_page_size=1024)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--columns", default="10,100,1000,10000")
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--row-groups", type=int, default=2)
    ap.add_argument("--files", nargs="*", default=[], help="measure these files too")
    a = ap.parse_args()
    out = os.path.join(ROOT, "target", "footer-size")
    os.makedirs(out, exist_ok=True)
    files = []
    for c in [int(x) for x in a.columns.split(",") if x]:
        p = os.path.join(out, f"pyarrow_{c}cols.parquet")
        if not os.path.exists(p):
            write(p, c, a.rows, a.row_groups)
        files.append(p)
    files += a.files
    subprocess.run(["nice", "-n", "10", "cargo", "build", "--release", "--quiet", "--features", "parquet", "--example", "footer_size"],
                   cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "release", "examples", "footer_size")
    res = subprocess.run([exe] + files, capture_output=True, text=True, check=True)
    print(f"pyarrow {pa.__version__}; {a.rows} rows in {a.row_groups} row groups, page index, 1 KiB data pages")
    print("| file | columns x row groups | standard footer | + page index (CI + OI) | modular | ratio | page headers (pages) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    for r in rows:
        std = r["standard_footer"] + r["column_index"] + r["offset_index"]
        print(f"| {os.path.basename(r['file'])} | {r['columns']} x {r['row_groups']} | {r['standard_footer']:,} | "
              f"{std:,} ({r['column_index']:,} + {r['offset_index']:,}) | {r['modular']:,} | {r['ratio']:.3f}x | "
              f"{r['page_headers']:,} ({r['pages']}) |")
    print()
    print("Where the bytes go (module = THRIFT struct or descriptor + its pages; the largest arrays, payload bytes):")
    print()
    for r in rows:
        mods = ", ".join(f"{k} {v:,}" for k, v in sorted(r["modules"].items(), key=lambda kv: -kv[1]))
        arrays = sorted(r["arrays"].items(), key=lambda kv: -kv[1][1])[:6]
        top = ", ".join(f"{k} {v[1]:,}" for k, v in arrays)
        print(f"- {os.path.basename(r['file'])}: root {r['root']}; {mods}. Largest arrays: {top}.")

if __name__ == "__main__":
    main()
