#!/usr/bin/env python3
"""Asserts that `lakecore blob read --column d` equals pypaimon's reads of a descriptor-mode
BLOB field recorded by make_descriptor_table.py (`<table>.expected.json`), row by row:

- `--descriptors bytes` (the default) against pypaimon with `blob-as-descriptor=true`: row ID,
  null, length and SHA-256 of the descriptor bytes;
- `--descriptors decode` against the same read parsed by pypaimon's `BlobDescriptor`: uri,
  offset, length;
- `--descriptors resolve` against pypaimon's default read (payloads resolved): row ID, null,
  length, SHA-256 of the payload. Skipped with --no-resolve (a committed table whose
  descriptors name the machine it was written on).

    python check_descriptor_read.py LAKECORE TABLE_DIR [--no-resolve]
"""
import json
import subprocess
import sys


def lakecore_rows(lakecore, table_dir, column, mode, extra=()):
    out = subprocess.run([lakecore, "blob", "read", table_dir, "--column", column, "--json",
                          "--descriptors", mode, *extra],
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line]


def compare(name, got, want, key_got, key_want):
    g = [key_got(r) for r in got]
    w = [key_want(r) for r in want]
    if g != w:
        for i, (a, b) in enumerate(zip(g, w)):
            if a != b:
                sys.exit(f"{name}: row {i} differs: lakecore {a} pypaimon {b}")
        sys.exit(f"{name}: {len(g)} rows from lakecore, {len(w)} from pypaimon")
    print(f"{name}: {len(g)} rows equal ({sum(1 for r in want if r['null'])} null)")


def main():
    lakecore, table_dir = sys.argv[1], sys.argv[2].rstrip("/")
    resolve = "--no-resolve" not in sys.argv[3:]
    with open(table_dir + ".expected.json") as f:
        want = json.load(f)
    column = want["column"]
    plain = lambda r: (r["row_id"], r["null"], r["length"], r["sha256"])
    compare(f"{table_dir} {column} descriptor bytes",
            lakecore_rows(lakecore, table_dir, column, "bytes"), want["descriptors"],
            plain, plain)
    compare(f"{table_dir} {column} decoded",
            lakecore_rows(lakecore, table_dir, column, "decode"), want["descriptors"],
            lambda r: (r["row_id"], r["null"], r["uri"], r["offset"], r["length"]),
            lambda r: (r["row_id"], r["null"], r["uri"], r["offset"], r["descriptor_length"]))
    # Row ranges: the planner's pruning and the per-row filter.
    picked = lambda r: 3 <= r["row_id"] <= 17 or 50 <= r["row_id"] <= 60
    compare(f"{table_dir} {column} descriptor bytes, rows 3-17,50-60",
            lakecore_rows(lakecore, table_dir, column, "bytes", ["--rows", "50-60,3-17"]),
            [r for r in want["descriptors"] if picked(r)], plain, plain)
    deleted = set(want["deleted_row_ids"])
    if any(r["row_id"] in deleted for r in want["payloads"]):
        sys.exit("pypaimon returned a deleted row: the oracle is wrong")
    if resolve:
        compare(f"{table_dir} {column} payloads",
                lakecore_rows(lakecore, table_dir, column, "resolve"), want["payloads"],
                plain, plain)


if __name__ == "__main__":
    main()
