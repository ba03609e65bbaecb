#!/usr/bin/env python3
"""Writes a data-evolution BLOB table with deletion vectors with pypaimon 2.1.0 and records
pypaimon's own answers next to it (`<table>.expected.json`), for lakecore's tests.

    python make_dv_table.py WAREHOUSE [--seed N] [--rows N]

Table `dvtab.dv` (row tracking, data evolution, deletion vectors on; partitioned by `dt`,
rolling `.blob` files): two writes per partition, a partial update of the BLOB column by row
ID, then two deletes by row ID (the second one replaces the first one's deletion-vector
index file of a partition: the index manifest then lists only the live index files).

The expected file holds:
- `splits`: pypaimon's splits (`plan().splits()`): partition, bucket, and per data file its
  deletion file (index file path relative to the table, offset, length, cardinality) or null;
- `deletion_vectors`: per data file with a deletion file, the row positions its deletion
  vector holds (read with pypaimon's `DeletionVector.read`);
- `deleted_row_ids`: the row IDs deleted, in order;
- `rows`: pypaimon's read of `b` (`_ROW_ID`, null, length, SHA-256), deleted rows absent.
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

DB = "dvtab"
NAME = "dv"


def value(rng, tag, i):
    n = rng.randrange(0, 120)
    return f"{tag}:{i}:".encode() + bytes(rng.randrange(256) for _ in range(n))


def arrow_schema(table):
    from pypaimon.schema.data_types import PyarrowFieldParser
    return PyarrowFieldParser.from_paimon_schema(table.fields)


def write(table, columns):
    wb = table.new_batch_write_builder()
    w = wb.new_write()
    w.write_arrow(pa.Table.from_pydict(columns, schema=arrow_schema(table)))
    wb.new_commit().commit(w.prepare_commit())
    w.close()


def update_blob(table, row_ids, values):
    wb = table.new_batch_write_builder()
    upd = wb.new_update().with_update_type(["b"])
    data = pa.Table.from_pydict(
        {"_ROW_ID": pa.array(row_ids, pa.int64()), "b": pa.array(values, pa.large_binary())}
    )
    wb.new_commit().commit(upd.update_by_arrow_with_row_id(data))


def delete(table, row_ids):
    wb = table.new_batch_write_builder()
    msgs = wb.new_update().delete_by_row_id(row_ids)
    wb.new_commit().commit(msgs)


def row_ids_by_dt(table):
    rb = table.new_read_builder().with_projection(["_ROW_ID", "dt"])
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    out = {}
    for r in rows:
        out.setdefault(r["dt"], []).append(r["_ROW_ID"])
    return {k: sorted(v) for k, v in out.items()}


def splits_oracle(table, table_dir):
    from pypaimon.deletionvectors.deletion_vector import DeletionVector
    splits = []
    vectors = {}
    for s in table.new_read_builder().new_scan().plan().splits():
        dfs = s.data_deletion_files or [None] * len(s.files)
        files = {}
        for f, d in zip(s.files, dfs):
            if d is None:
                files[f.file_name] = None
                continue
            files[f.file_name] = {
                "index_file": os.path.relpath(d.dv_index_path.removeprefix("file://"), table_dir),
                "offset": d.offset,
                "length": d.length,
                "cardinality": d.cardinality,
            }
            dv = DeletionVector.read(table.file_io, d)
            vectors[f.file_name] = sorted(dv.bit_map())
        splits.append({
            "partition": dict(zip(table.partition_keys, s.partition.values)),
            "bucket": s.bucket,
            "files": files,
        })
    return splits, vectors


def read_rows(table):
    rb = table.new_read_builder().with_projection(["b", "_ROW_ID"])
    rows = []
    for r in rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist():
        b = r["b"]
        rows.append({"row_id": r["_ROW_ID"], "null": b is None,
                     "length": None if b is None else len(b),
                     "sha256": None if b is None else hashlib.sha256(b).hexdigest()})
    return sorted(rows, key=lambda r: r["row_id"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("warehouse")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--rows", type=int, default=60)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    catalog, db_dir = fresh_catalog(args.warehouse, DB)
    fields = [("id", pa.int64()), ("name", pa.string()), ("dt", pa.string()),
              ("b", pa.large_binary())]
    options = {
        "row-tracking.enabled": "true",
        "data-evolution.enabled": "true",
        "deletion-vectors.enabled": "true",
        "blob.target-file-size": "1kb",
    }
    schema = Schema.from_pyarrow_schema(pa.schema(fields), partition_keys=["dt"],
                                        options=options)
    catalog.create_table(f"{DB}.{NAME}", schema, False)
    t = catalog.get_table(f"{DB}.{NAME}")
    n = args.rows
    for round_ in range(2):
        for dt in ("2024-01-01", "2024-01-02"):
            first = round_ * n
            write(t, {"id": list(range(first, first + n)),
                      "name": [f"n{i}" for i in range(first, first + n)],
                      "dt": [dt] * n,
                      "b": [None if i % 13 == 4 else value(rng, dt, i)
                            for i in range(first, first + n)]})
    ids = row_ids_by_dt(t)
    everything = sorted(i for v in ids.values() for i in v)
    upd = sorted(rng.sample(everything, len(everything) // 8))
    update_blob(t, upd, [value(rng, "u", i) for i in upd])
    # Deletes: rows of both partitions (some updated rows among them), then more rows of one
    # partition (its index file is replaced).
    first_delete = sorted(set(rng.sample(everything, 9)) | set(upd[:2]))
    delete(t, first_delete)
    second_delete = sorted(set(rng.sample(ids["2024-01-02"], 5)) - set(first_delete))
    delete(t, second_delete)

    t = catalog.get_table(f"{DB}.{NAME}")
    table_dir = os.path.join(db_dir, NAME)
    splits, vectors = splits_oracle(t, table_dir)
    rows = read_rows(t)
    with open(os.path.join(db_dir, f"{NAME}.expected.json"), "w") as f:
        json.dump({"writer": "pypaimon 2.1.0", "reader": "pypaimon 2.1.0",
                   "column": "b", "deleted_row_ids": first_delete + second_delete,
                   "splits": splits, "deletion_vectors": vectors, "rows": rows}, f, indent=0)
        f.write("\n")
    print(f"{NAME}: {len(rows)} rows, {len(vectors)} deletion vectors", file=sys.stderr)


if __name__ == "__main__":
    main()
