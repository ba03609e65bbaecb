#!/usr/bin/env python3
"""Asserts that `lakecore blob read --json` equals pypaimon's own read of the same BLOB column,
row by row (row ID, NULL, length, SHA-256).

    python check_blob_read.py LAKECORE TABLE_DIR [TABLE_DIR...]        # against <table>.expected.json
    python check_blob_read.py LAKECORE --live WAREHOUSE DB TABLE [...] # against pypaimon, now

`<table>.expected.json` sits next to the table directory and is written by
make_blob_tables.py from pypaimon's reader. With --live the script reads the table with
pypaimon itself (needs pypaimon 2.1.0). `_SEQUENCE_NUMBER` is not compared: pypaimon reports
the data files' sequence number for the row, lakecore the winning `.blob` file's (the spec's
rule 7); the values are what both agree on.
"""
import json
import os
import subprocess
import sys


def lakecore_rows(lakecore, table_dir, extra=()):
    out = subprocess.run([lakecore, "blob", "read", table_dir, "--json", *extra],
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line]


def compare(name, got, want):
    key = lambda r: (r["row_id"], r["null"], r["length"], r["sha256"])
    got_k = [key(r) for r in got]
    want_k = [key(r) for r in want]
    if got_k != want_k:
        for i, (g, w) in enumerate(zip(got_k, want_k)):
            if g != w:
                sys.exit(f"{name}: row {i} differs: lakecore {g} pypaimon {w}")
        sys.exit(f"{name}: {len(got_k)} rows from lakecore, {len(want_k)} from pypaimon")
    print(f"{name}: {len(got_k)} rows equal ({sum(1 for r in got if r['null'])} null)")


def live(warehouse, db, table):
    import hashlib
    from pypaimon import CatalogFactory
    t = CatalogFactory.create({"warehouse": warehouse}).get_table(f"{db}.{table}")
    rb = t.new_read_builder().with_projection(["b", "_ROW_ID"])
    rows = []
    for r in rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist():
        b = r["b"]
        rows.append({"row_id": r["_ROW_ID"], "null": b is None,
                     "length": None if b is None else len(b),
                     "sha256": None if b is None else hashlib.sha256(b).hexdigest()})
    return sorted(rows, key=lambda r: r["row_id"])


def main():
    lakecore, rest = sys.argv[1], sys.argv[2:]
    if rest and rest[0] == "--live":
        warehouse, db = rest[1], rest[2]
        for table in rest[3:]:
            d = os.path.join(warehouse, f"{db}.db", table)
            compare(f"{db}.{table} (live)", lakecore_rows(lakecore, d), live(warehouse, db, table))
        return
    for d in rest:
        d = d.rstrip("/")
        with open(d + ".expected.json") as f:
            want = json.load(f)["rows"]
        compare(os.path.basename(d), lakecore_rows(lakecore, d), want)


if __name__ == "__main__":
    main()
