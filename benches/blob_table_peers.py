#!/usr/bin/env python3
"""BLOB column table read: lakecore vs pypaimon 2.1.0 on the same table.

    python benches/blob_table_peers.py make DIR [--rows N]   # write the table with pypaimon
    python benches/blob_table_peers.py time DIR LAKECORE [--rounds R]

`make` writes `DIR/bench.db/blob3` with pypaimon 2.1.0: a data-evolution table (`id BIGINT`,
`b BLOB`), N rows (default 1,000,000) of 16-byte values in one write, then two partial updates
of `b` by row ID (every 3rd row, then every 5th row), so the column has 3 layers, each in one
`.blob` file, with placeholders in both update layers. `benches/blob_table.rs` (criterion)
reads the same table.

`time` alternates rounds of pypaimon's `to_arrow` on `b` (plan + read, in process, the column
only) and `lakecore blob read --json` is not used (it hashes every value): the lakecore side is
criterion's; this script prints pypaimon's seconds per round and rows/s (median, min, max).
"""
import argparse
import os
import shutil
import statistics
import sys
import time

import pyarrow as pa
from pypaimon import CatalogFactory, Schema


def make(root, n):
    db = os.path.join(root, "bench.db")
    if os.path.exists(db):
        shutil.rmtree(db)
    cat = CatalogFactory.create({"warehouse": root})
    cat.create_database("bench", True)
    schema = Schema.from_pyarrow_schema(
        pa.schema([("id", pa.int64()), ("b", pa.large_binary())]),
        options={"row-tracking.enabled": "true", "data-evolution.enabled": "true"},
    )
    cat.create_table("bench.blob3", schema, False)
    t = cat.get_table("bench.blob3")
    vals = pa.array([i.to_bytes(8, "little") * 2 for i in range(n)], pa.large_binary())
    wb = t.new_batch_write_builder()
    w = wb.new_write()
    w.write_arrow(pa.table({"id": pa.array(range(n), pa.int64()), "b": vals}))
    wb.new_commit().commit(w.prepare_commit())
    w.close()
    for step, tag in ((3, b"u3"), (5, b"u5")):
        ids = list(range(0, n, step))
        wb = t.new_batch_write_builder()
        upd = wb.new_update().with_update_type(["b"])
        data = pa.table({
            "_ROW_ID": pa.array(ids, pa.int64()),
            "b": pa.array([tag + i.to_bytes(8, "little") + b"\0" * 6 for i in ids],
                          pa.large_binary()),
        })
        wb.new_commit().commit(upd.update_by_arrow_with_row_id(data))
    print(f"wrote {n} rows, 3 layers: {os.path.join(db, 'blob3')}", file=sys.stderr)


def time_pypaimon(root, rounds):
    cat = CatalogFactory.create({"warehouse": root})
    t = cat.get_table("bench.blob3")
    secs = []
    rows = 0
    for _ in range(rounds):
        t0 = time.perf_counter()
        rb = t.new_read_builder().with_projection(["b"])
        arrow = rb.new_read().to_arrow(rb.new_scan().plan().splits())
        secs.append(time.perf_counter() - t0)
        rows = arrow.num_rows
    med = statistics.median(secs)
    print(f"pypaimon 2.1.0 to_arrow(b): {rows} rows, median {med:.3f} s "
          f"(min {min(secs):.3f}, max {max(secs):.3f}, {rounds} rounds) = "
          f"{rows / med / 1e6:.2f} M rows/s")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("dir")
    m.add_argument("--rows", type=int, default=1_000_000)
    t = sub.add_parser("time")
    t.add_argument("dir")
    t.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    if a.cmd == "make":
        make(a.dir, a.rows)
    else:
        time_pypaimon(a.dir, a.rounds)


if __name__ == "__main__":
    main()
