#!/usr/bin/env python3
"""Reads a Paimon BLOB table with Ray Data on a local Ray cluster of 2 workers: the driver
plans with lakecore, the workers read the Parquet columns (pyarrow) and the BLOB column
(lakecore, memory-mapped). Then checks the rows against a local read in this process:
lakecore's BLOB read joined to pyarrow's read of the same Parquet files. Exit 1 on any
difference.

    python examples/ray_blob.py [TABLE_DIR] [BLOB_COLUMN]

Default table: the repository's tests/data/paimon/blob_warehouse/blobtab.db/parted.
"""

import os
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import ray

import lakecore
from lakecore.ray import read_paimon

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "tests", "data", "paimon", "blob_warehouse",
                       "blobtab.db", "parted")


def local_read(table_dir, blob_column, columns):
    """The same rows without Ray: the plan's Parquet files read with pyarrow, the BLOB column
    with lakecore, joined on _ROW_ID."""
    t = lakecore.Table(table_dir)
    blobs = t.read_blob(blob_column)
    by_id = dict(zip(blobs.column("_ROW_ID").to_pylist(), blobs.column(1).to_pylist()))
    rows = []
    for f in t.plan().to_pylist():
        if f["file_name"].endswith(".blob"):
            continue
        data = pq.ParquetFile(f["path"]).read(columns=columns).to_pylist()
        for i, r in enumerate(data):
            rid = f["first_row_id"] + i
            rows.append({"_ROW_ID": rid, **r, blob_column: by_id[rid]})
    return sorted(rows, key=lambda r: r["_ROW_ID"])


def main():
    table_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else DEFAULT)
    blob_column = sys.argv[2] if len(sys.argv) > 2 else "b"
    columns = ["id", "name"]
    start = time.perf_counter()
    # A local cluster: this driver and 2 worker processes (one CPU each).
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    try:
        ds = read_paimon(table_dir, columns=columns, blob_column=blob_column,
                         parallelism=2).materialize()
        got = sorted(ds.take_all(), key=lambda r: r["_ROW_ID"])
        nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
        print(f"ray: {len(got)} rows in {ds.num_blocks()} blocks on {len(nodes)} node(s), "
              f"{ray.cluster_resources().get('CPU', 0):.0f} worker CPUs, "
              f"{time.perf_counter() - start:.1f} s")
    finally:
        ray.shutdown()
    want = local_read(table_dir, blob_column, columns)
    got = [{k: (bytes(v) if isinstance(v, (bytes, bytearray, memoryview)) else v)
            for k, v in r.items()} for r in got]
    if got != want:
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                sys.exit(f"row {i} differs: ray {g.get('_ROW_ID')} local {w.get('_ROW_ID')}")
        sys.exit(f"{len(got)} rows through Ray, {len(want)} read locally")
    nulls = sum(1 for r in want if r[blob_column] is None)
    print(f"equal to the local read: {len(want)} rows ({nulls} NULL {blob_column!r})")


if __name__ == "__main__":
    main()
