#!/usr/bin/env python3
"""Writes data-evolution BLOB tables with pypaimon 2.1.0 and records pypaimon's own read of
each BLOB column next to the table (`<table>.expected.json`), for lakecore's tests.

    python make_blob_tables.py WAREHOUSE [--seed N]

Tables (database `blobtab`):
- `layers`: one write of 300 rows in rolling blob files (`blob.target-file-size` 2kb), NULLs,
  then partial updates by row ID of the BLOB column only (placeholders for untouched rows,
  a NULL over bytes, bytes over a NULL), the last one over rows of several base files, so that
  every layer holds placeholders.
- `rolled`: the lint's situation: rolling base files, then one partial update touching rows of
  every base file. The rolling writer gives later base files higher sequence numbers than the
  update (pypaimon's reader then returns the old bytes for those rows).
- `parted`: partitioned by `dt`, two partitions, a partial update in one.

The expected file holds, per table, pypaimon's rows of `b` with `_ROW_ID` and
`_SEQUENCE_NUMBER` (as pypaimon reports it), the value's length and SHA-256, or null; and
`updates`: the SHA-256 (or null) of the last value each partial update wrote per row ID.
"""
import argparse
import hashlib
import json
import os
import random
import sys

import pyarrow as pa
from pypaimon import Schema

from pypaimon_tables import fresh_catalog

DB = "blobtab"


def value(rng, tag, i):
    n = rng.randrange(0, 200)
    return (f"{tag}:{i}:".encode() + bytes(rng.randrange(256) for _ in range(n)))


def create(catalog, name, options, partitioned=False):
    fields = [("id", pa.int64()), ("name", pa.string())]
    if partitioned:
        fields.append(("dt", pa.string()))
    fields.append(("b", pa.large_binary()))
    opts = {
        "row-tracking.enabled": "true",
        "data-evolution.enabled": "true",
        "manifest.sidecar.enabled": "true",
    }
    opts.update(options)
    schema = Schema.from_pyarrow_schema(
        pa.schema(fields), partition_keys=["dt"] if partitioned else None, options=opts
    )
    catalog.create_table(f"{DB}.{name}", schema, False)
    return catalog.get_table(f"{DB}.{name}")


def write(table, columns):
    wb = table.new_batch_write_builder()
    w = wb.new_write()
    w.write_arrow(pa.Table.from_pydict(columns, schema=table_schema(table)))
    wb.new_commit().commit(w.prepare_commit())
    w.close()


def table_schema(table):
    from pypaimon.schema.data_types import PyarrowFieldParser
    return PyarrowFieldParser.from_paimon_schema(table.fields)


UPDATES = {}


def update_blob(table, row_ids, values):
    """Partial update of `b` by row ID; the values written are recorded per table (the last
    update of a row wins in time)."""
    per_table = UPDATES.setdefault(table.identifier.get_object_name(), {})
    for i, v in zip(row_ids, values):
        per_table[str(i)] = None if v is None else hashlib.sha256(v).hexdigest()
    wb = table.new_batch_write_builder()
    upd = wb.new_update().with_update_type(["b"])
    data = pa.Table.from_pydict(
        {"_ROW_ID": pa.array(row_ids, pa.int64()), "b": pa.array(values, pa.large_binary())}
    )
    msgs = upd.update_by_arrow_with_row_id(data)
    wb.new_commit().commit(msgs)


def read_expected(table):
    rb = table.new_read_builder().with_projection(["b", "_ROW_ID", "_SEQUENCE_NUMBER"])
    arrow = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    rows = []
    for r in arrow.to_pylist():
        b = r["b"]
        rows.append({
            "row_id": r["_ROW_ID"],
            "pypaimon_sequence_number": r["_SEQUENCE_NUMBER"],
            "null": b is None,
            "length": None if b is None else len(b),
            "sha256": None if b is None else hashlib.sha256(b).hexdigest(),
        })
    rows.sort(key=lambda r: r["row_id"])
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("warehouse")
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--rows", type=int, default=300)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    catalog, db_dir = fresh_catalog(args.warehouse, DB)
    n = args.rows

    # layers
    t = create(catalog, "layers", {"blob.target-file-size": "2kb"})
    vals = [None if i % 17 == 5 else value(rng, "base", i) for i in range(n)]
    write(t, {"id": list(range(n)), "name": [f"n{i}" for i in range(n)], "b": vals})
    ids = sorted(rng.sample(range(n), n // 10)) + [5]  # row 5 was NULL: bytes over NULL
    ids = sorted(set(ids))
    update_blob(t, ids, [None if i == ids[0] else value(rng, "u1", i) for i in ids])
    ids2 = sorted(set(rng.sample(range(n), n // 15)) | {ids[1]})
    update_blob(t, ids2, [None if i % 3 == 0 else value(rng, "u2", i) for i in ids2])

    # rolled
    t = create(catalog, "rolled", {"blob.target-file-size": "1kb"})
    vals = [value(rng, "base", i) for i in range(n)]
    write(t, {"id": list(range(n)), "name": [f"n{i}" for i in range(n)], "b": vals})
    ids = list(range(0, n, 7))
    update_blob(t, ids, [value(rng, "upd", i) for i in ids])

    # parted
    t = create(catalog, "parted", {}, partitioned=True)
    for dt in ("2024-01-01", "2024-01-02"):
        m = n // 3
        write(t, {"id": list(range(m)), "name": [f"n{i}" for i in range(m)],
                  "dt": [dt] * m,
                  "b": [None if i % 11 == 0 else value(rng, dt, i) for i in range(m)]})
    rb = t.new_read_builder().with_projection(["_ROW_ID", "dt"])
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    second = sorted(r["_ROW_ID"] for r in rows if r["dt"] == "2024-01-02")
    ids = second[::4]
    update_blob(t, ids, [value(rng, "p", i) for i in ids])

    expected = {}
    for name in ("layers", "rolled", "parted"):
        expected[name] = read_expected(catalog.get_table(f"{DB}.{name}"))
    for name, rows in expected.items():
        with open(os.path.join(db_dir, f"{name}.expected.json"), "w") as f:
            json.dump({"writer": "pypaimon 2.1.0", "reader": "pypaimon 2.1.0 to_arrow",
                       "column": "b", "rows": rows,
                       "updates": UPDATES.get(name, {})}, f, indent=0)
            f.write("\n")
        print(f"{name}: {len(rows)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
