#!/usr/bin/env python3
"""Round-trips Parquet files through `lakecore footer convert` and `convert --to-standard`
and checks that pyarrow (and DuckDB, when installed) read the result to the same table as the
original, and that pyarrow's view of the footer (row groups, column chunk metadata,
statistics, page index presence, key/value metadata) is unchanged.

    python check_footer_roundtrip.py LAKECORE FILE_OR_DIR... [--work DIR]
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import pyarrow
import pyarrow.parquet as pq

try:
    import duckdb
except ImportError:  # DuckDB is optional
    duckdb = None


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")


def same_table(a, b):
    """Equal schemas and values, NaN equal to NaN (pyarrow's `equals` says NaN != NaN)."""
    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False

    def norm(v):
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    return norm(a.to_pylist()) == norm(b.to_pylist())


def chunk_view(md):
    out = []
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        row = [rg.num_rows, rg.total_byte_size, tuple(rg.sorting_columns)]
        for c in range(rg.num_columns):
            d = rg.column(c).to_dict()
            # `encodings` is a set in the Parquet spec; the modular footer keeps it as a bit
            # set and writes it back in ascending order.
            d["encodings"] = tuple(sorted(d["encodings"]))
            row.append(d)
        out.append(row)
    return out


def check(lakecore, path, work):
    name = os.path.basename(path)
    modular = os.path.join(work, name + ".modular")
    back = os.path.join(work, name + ".back.parquet")
    run([lakecore, "footer", "convert", path, "-o", modular])
    run([lakecore, "footer", "convert", "--to-standard", modular, "-o", back])
    a, b = pq.ParquetFile(path), pq.ParquetFile(back)
    ta, tb = a.read(), b.read()
    if not same_table(ta, tb):
        sys.exit(f"FAIL {name}: pyarrow reads a different table back")
    ma, mb = a.metadata, b.metadata
    if ma.metadata != mb.metadata or ma.created_by != mb.created_by:
        sys.exit(f"FAIL {name}: key/value metadata or created_by differ")
    if ma.schema.to_arrow_schema() != mb.schema.to_arrow_schema():
        sys.exit(f"FAIL {name}: schema differs")
    va, vb = chunk_view(ma), chunk_view(mb)
    if va != vb:
        for ra, rb in zip(va, vb):
            if ra != rb:
                sys.exit(f"FAIL {name}: row group metadata differs:\n{ra}\n{rb}")
    # Reads through the page index (a filter on the first column) agree too.
    first = ta.schema.names[0]
    col = ta.column(first)
    if col.null_count < len(col) and ta.schema.field(first).type.num_fields == 0:
        pivot = col.drop_null()[len(col.drop_null()) // 2]
        fa = pq.read_table(path, filters=[(first, ">=", pivot)])
        fb = pq.read_table(back, filters=[(first, ">=", pivot)])
        if not same_table(fa, fb):
            sys.exit(f"FAIL {name}: filtered reads differ")
    msg = f"ok {name}: {ta.num_rows} rows x {ta.num_columns} columns, {ma.num_row_groups} row groups"
    if duckdb is not None:
        q = "SELECT * FROM read_parquet('{}') EXCEPT ALL SELECT * FROM read_parquet('{}')"
        con = duckdb.connect()
        for x, y in [(path, back), (back, path)]:
            n = con.execute(f"SELECT count(*) FROM ({q.format(x, y)})").fetchone()[0]
            if n != 0:
                sys.exit(f"FAIL {name}: DuckDB finds {n} rows in one and not the other")
        con.close()
        msg += "; DuckDB agrees"
    print(msg)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("lakecore")
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--work")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="lakecore-footer-rt-")
    os.makedirs(work, exist_ok=True)
    files = []
    for p in a.inputs:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".parquet"))
        else:
            files.append(p)
    if not files:
        sys.exit("FAIL: no Parquet files given")
    for f in files:
        check(a.lakecore, f, work)
    print(f"{len(files)} files round-trip to the same table (pyarrow {pyarrow.__version__}"
          + (f", DuckDB {duckdb.__version__})" if duckdb else ")"))


if __name__ == "__main__":
    main()
