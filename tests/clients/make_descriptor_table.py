#!/usr/bin/env python3
"""Writes a data-evolution table with a descriptor-mode BLOB field with pypaimon 2.1.0 and
records pypaimon's own reads of it next to the table (`<table>.expected.json`), for lakecore's
tests.

    python make_descriptor_table.py WAREHOUSE [--seed N] [--rows N]

Table `desctab.desc` (row tracking, data evolution, deletion vectors on): fields `id`, `name`,
`d` (BLOB, named in `blob-descriptor-field`, so the Parquet data files hold serialized
`BlobDescriptor` bytes) and `b` (BLOB in `.blob` files, to have both kinds in one table). The
payloads live in files the script writes under `<table>/payloads/` (`p-0.bin`, `p-1.bin`), and
the descriptors point into them (v2 wire form, `file://` URIs). Two writes (two row-ID groups),
NULL descriptors, a partial update of `d` by row ID (bytes over NULL, NULL over bytes, new
descriptors into the second payload file), then a delete by row ID (deletion vectors).

The expected file holds, sorted by row ID (deleted rows absent):
- `descriptors`: pypaimon's read with `blob-as-descriptor=true`: row ID, null, the descriptor
  bytes' length and SHA-256, and uri / offset / length as pypaimon's `BlobDescriptor` parses
  them;
- `payloads`: pypaimon's default read (descriptors resolved): row ID, null, length, SHA-256;
- `deleted_row_ids`.
"""
import argparse
import hashlib
import json
import os
import random
import struct
import sys

import pyarrow as pa
from pypaimon import Schema

from pypaimon_tables import fresh_catalog

DB = "desctab"
NAME = "desc"
MAGIC = 0x424C4F4244455343  # "BLOBDESC"


def descriptor(uri, offset, length):
    """A v2 BlobDescriptor: version, magic, uri_len, uri, offset, length (little-endian)."""
    u = uri.encode()
    return (struct.pack("<B", 2) + struct.pack("<Q", MAGIC) + struct.pack("<i", len(u)) + u
            + struct.pack("<q", offset) + struct.pack("<q", length))


def arrow_schema(table):
    from pypaimon.schema.data_types import PyarrowFieldParser
    return PyarrowFieldParser.from_paimon_schema(table.fields)


def write(table, columns):
    wb = table.new_batch_write_builder()
    w = wb.new_write()
    w.write_arrow(pa.Table.from_pydict(columns, schema=arrow_schema(table)))
    wb.new_commit().commit(w.prepare_commit())
    w.close()


class Payloads:
    """A payload file: random bytes; descriptors name ranges of it."""

    def __init__(self, rng, path, size):
        self.rng, self.path = rng, os.path.abspath(path)
        self.size = size
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with open(self.path, "wb") as f:
            f.write(bytes(rng.randrange(256) for _ in range(size)))

    def pick(self):
        length = self.rng.randrange(0, 300)
        offset = self.rng.randrange(0, self.size - length + 1)
        return descriptor("file://" + self.path, offset, length)


def read(table, column, as_descriptor):
    from pypaimon.table.row.blob import BlobDescriptor
    if as_descriptor:
        table = table.copy({"blob-as-descriptor": "true"})
    rb = table.new_read_builder().with_projection([column, "_ROW_ID"])
    rows = []
    for r in rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist():
        v = r[column]
        row = {"row_id": r["_ROW_ID"], "null": v is None,
               "length": None if v is None else len(v),
               "sha256": None if v is None else hashlib.sha256(v).hexdigest()}
        if as_descriptor:
            d = None if v is None else BlobDescriptor.deserialize(v)
            row["uri"] = None if d is None else d.uri
            row["offset"] = None if d is None else d.offset
            row["descriptor_length"] = None if d is None else d.length
        rows.append(row)
    return sorted(rows, key=lambda r: r["row_id"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("warehouse")
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--rows", type=int, default=40)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    catalog, db_dir = fresh_catalog(args.warehouse, DB)
    fields = [("id", pa.int64()), ("name", pa.string()), ("d", pa.large_binary()),
              ("b", pa.large_binary())]
    options = {
        "row-tracking.enabled": "true",
        "data-evolution.enabled": "true",
        "deletion-vectors.enabled": "true",
        "blob-descriptor-field": "d",
    }
    schema = Schema.from_pyarrow_schema(pa.schema(fields), options=options)
    catalog.create_table(f"{DB}.{NAME}", schema, False)
    t = catalog.get_table(f"{DB}.{NAME}")
    table_dir = os.path.join(db_dir, NAME)
    first = Payloads(rng, os.path.join(table_dir, "payloads", "p-0.bin"), 6000)
    second = Payloads(rng, os.path.join(table_dir, "payloads", "p-1.bin"), 3000)
    n = args.rows
    for round_ in range(2):
        ids = range(round_ * n, (round_ + 1) * n)
        write(t, {"id": list(ids), "name": [f"n{i}" for i in ids],
                  "d": [None if i % 9 == 4 else first.pick() for i in ids],
                  "b": [None if i % 7 == 3 else f"b{i}".encode() * (i % 5) for i in ids]})
    # Partial update of `d` in the first group: bytes over a NULL (row 4), NULL over bytes,
    # new descriptors into the second payload file.
    upd = sorted(set(rng.sample(range(n), n // 4)) | {4})
    data = pa.Table.from_pydict({
        "_ROW_ID": pa.array(upd, pa.int64()),
        "d": pa.array([None if i % 5 == 0 and i != 4 else second.pick() for i in upd],
                      pa.large_binary()),
    })
    wb = t.new_batch_write_builder()
    wb.new_commit().commit(wb.new_update().with_update_type(["d"])
                           .update_by_arrow_with_row_id(data))
    # Deletes in both groups, an updated row among them.
    deleted = sorted(set(rng.sample(range(2 * n), 5)) | {upd[-1]})
    wb = t.new_batch_write_builder()
    wb.new_commit().commit(wb.new_update().delete_by_row_id(deleted))

    t = catalog.get_table(f"{DB}.{NAME}")
    expected = {"writer": "pypaimon 2.1.0", "reader": "pypaimon 2.1.0 to_arrow", "column": "d",
                "deleted_row_ids": deleted,
                "descriptors": read(t, "d", True), "payloads": read(t, "d", False)}
    with open(os.path.join(db_dir, f"{NAME}.expected.json"), "w") as f:
        json.dump(expected, f, indent=0)
        f.write("\n")
    print(f"{NAME}: {len(expected['payloads'])} rows, {len(upd)} updated, "
          f"{len(deleted)} deleted", file=sys.stderr)


if __name__ == "__main__":
    main()
