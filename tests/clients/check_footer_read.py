#!/usr/bin/env python3
"""`lakecore footer read` against pyarrow (an independent Parquet reader).

For each writer file in tests/data/footer/writers: convert it to a modular footer with
`lakecore footer convert`, read top-level columns and row groups through the modular footer
with `lakecore footer read --format parquet` and `--format json`, and compare the rows with
pyarrow reading the same columns and row groups of the original standard file.

usage: check_footer_read.py LAKECORE_BIN WRITERS_DIR WORK_DIR
"""
import json
import math
import os
import subprocess
import sys

import pyarrow.parquet as pq

CASES = {
    # file: [(top-level columns, row groups or None, limit or None)]
    "pyarrow_page_index.parquet": [(None, None, None), ([0, 2], [1, 3], None), ([1], [0], 10)],
    "pyarrow_no_page_index.parquet": [([0, 1], None, None), ([2], [2], None)],
    "pyarrow_wide.parquet": [([0, 60, 119], None, None), ([5], [1], 7)],
    "duckdb.parquet": [(None, None, None), ([1, 3], [0, 2], None)],
    "duckdb_snappy.parquet": [(None, [1], None), ([0], None, 100)],
}


def norm(v):
    """Rows with NaN made comparable (NaN != NaN in Python)."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    return v


def run(*args):
    p = subprocess.run(args, capture_output=True)
    if p.returncode != 0:
        sys.exit(f"FAILED: {' '.join(map(str, args))}\n{p.stderr.decode()}")
    return p.stdout


def main():
    lakecore, writers, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    passed = 0
    for name, cases in CASES.items():
        original = os.path.join(writers, name)
        modular = os.path.join(work, name + ".modular")
        run(lakecore, "footer", "convert", original, "-o", modular)
        pf = pq.ParquetFile(original)
        top = [f.name for f in pf.schema_arrow]
        for cols_idx, rgs, limit in cases:
            cols = [top[i] for i in cols_idx] if cols_idx is not None else top
            rg_list = rgs if rgs is not None else list(range(pf.num_row_groups))
            expected = pf.read_row_groups(rg_list, columns=cols)
            if limit is not None:
                expected = expected.slice(0, limit)
            args = [lakecore, "footer", "read", modular, "--columns", ",".join(cols)]
            if rgs is not None:
                args += ["--row-groups", ",".join(map(str, rgs))]
            if limit is not None:
                args += ["--limit", str(limit)]
            out = os.path.join(work, name + ".read.parquet")
            run(*args, "--format", "parquet", "-o", out)
            got = pq.read_table(out)
            if got.column_names != expected.column_names:
                sys.exit(f"FAILED {name} {cols}: columns {got.column_names} != {expected.column_names}")
            if norm(got.to_pylist()) != norm(expected.to_pylist()):
                sys.exit(f"FAILED {name} {cols} {rgs} {limit}: rows differ from pyarrow's")
            rows = json.loads(run(*args, "--format", "json"))
            if len(rows) != expected.num_rows:
                sys.exit(f"FAILED {name} {cols}: json has {len(rows)} rows, pyarrow {expected.num_rows}")
            passed += 1
    print(f"{passed} passed, 0 failed")


if __name__ == "__main__":
    main()
