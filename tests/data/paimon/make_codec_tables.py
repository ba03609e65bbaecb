"""Writes warehouse/codecs.db: one small Paimon table per manifest codec, with pypaimon.

Run from anywhere with the pypaimon 2.1.0 environment (pyarrow, fastavro):

    python tests/data/paimon/make_codec_tables.py

It deletes and rewrites warehouse/codecs.db/ beside this script. Each table `<codec>` is an
append table partitioned by (dt STRING, hr INT) with 2 fixed buckets (bucket-key id) and the
table option `manifest.compression = <codec>`, for each value pypaimon 2.1.0 accepts:
null, deflate, snappy, zstd, bzip2, xz (its `manifest.avro_codec` maps zstd to fastavro's
`zstandard`; the others keep their name). Four commits: two appends, an overwrite of
partition dt=2024-01-01 (DELETE entries for that partition's files), one more append, so
the latest snapshot reads several manifests and manifest lists, all with the codec.

Beside each table, `<codec>.oracle.json` (not a Paimon file) holds pypaimon's own plan of
every snapshot (`table.copy({"scan.snapshot-id": id})`): every data file of
`new_read_builder().new_scan().plan().splits()` (partition values, partition BinaryRow bytes
in hex with the 4-byte arity prefix, as the manifest stores them, bucket, file name, row
count), the same for a plan filtered with `predicate_builder.equal("dt", "2024-01-02")`, and
the `avro.codec` read back from the header of every manifest and manifest list.
"""

import json
import os
import shutil
import sys

import fastavro
import pyarrow as pa

from pypaimon import CatalogFactory, Schema
from pypaimon.table.row.generic_row import GenericRowSerializer

HERE = os.path.dirname(os.path.abspath(__file__))
WAREHOUSE = os.path.join(HERE, "warehouse")
DB = "codecs"
CODECS = ["null", "deflate", "snappy", "zstd", "bzip2", "xz"]
FILTER = ("dt", "2024-01-02")

PA_SCHEMA = pa.schema([
    ("id", pa.int32()),
    ("dt", pa.string()),
    ("hr", pa.int32()),
    ("v", pa.string()),
])


def batch(rows):
    cols = list(zip(*rows))
    return pa.Table.from_arrays(
        [pa.array(c, type=f.type) for c, f in zip(cols, PA_SCHEMA)], schema=PA_SCHEMA)


def commit(table, rows, overwrite=None):
    builder = table.new_batch_write_builder()
    if overwrite is not None:
        builder = builder.overwrite(overwrite)
    write = builder.new_write()
    write.write_arrow(batch(rows))
    messages = write.prepare_commit()
    builder.new_commit().commit(messages)
    write.close()


def files_of(splits, partition_keys):
    out = []
    for split in splits:
        part = split.partition
        values = dict(zip(partition_keys, part.values))
        for f in split.files:
            out.append({
                "partition": values,
                "partition_hex": GenericRowSerializer.to_bytes(part).hex(),
                "bucket": split.bucket,
                "file_name": f.file_name,
                "row_count": f.row_count,
            })
    out.sort(key=lambda e: (e["partition"]["dt"], e["partition"]["hr"], e["bucket"],
                            e["file_name"]))
    return out


def header_codecs(table_dir):
    codecs = {}
    manifest_dir = os.path.join(table_dir, "manifest")
    for name in sorted(os.listdir(manifest_dir)):
        with open(os.path.join(manifest_dir, name), "rb") as fo:
            meta = fastavro.reader(fo).metadata
        codecs[name] = meta.get("avro.codec", "null")
    return codecs


def make(catalog, codec):
    ident = f"{DB}.{codec}"
    catalog.create_table(ident, Schema.from_pyarrow_schema(
        PA_SCHEMA, partition_keys=["dt", "hr"], options={
            "bucket": "2",
            "bucket-key": "id",
            "manifest.compression": codec,
            # Overwrite replaces the whole static partition given (dt), not only the
            # (dt, hr) partitions the new rows fall in.
            "dynamic-partition-overwrite": "false",
        }), False)
    table = catalog.get_table(ident)
    commit(table, [(1, "2024-01-01", 0, "a"), (2, "2024-01-01", 0, "b"),
                   (3, "2024-01-01", 1, "c"), (4, "2024-01-02", 0, "d")])
    commit(table, [(5, "2024-01-02", 0, "e"), (6, "2024-01-02", 7, "f"),
                   (7, "2024-01-03", 0, "g"), (8, "2024-01-03", 23, "h")])
    # Replaces every file of dt=2024-01-01: the commit writes DELETE entries for them.
    commit(table, [(9, "2024-01-01", 0, "i"), (10, "2024-01-01", 5, "j")],
           overwrite={"dt": "2024-01-01"})
    commit(table, [(11, "2024-01-02", 7, "k"), (12, "2024-01-04", 0, "l"),
                   (13, "2024-01-04", 0, "m")])

    table = catalog.get_table(ident)
    keys = table.partition_keys
    table_dir = os.path.join(WAREHOUSE, f"{DB}.db", codec)
    with open(os.path.join(table_dir, "snapshot", "LATEST")) as fo:
        latest = int(fo.read().strip())
    snapshots = []
    for sid in range(1, latest + 1):
        at = table.copy({"scan.snapshot-id": str(sid)})
        files = files_of(at.new_read_builder().new_scan().plan().splits(), keys)
        rb = at.new_read_builder()
        rb = rb.with_filter(rb.new_predicate_builder().equal(*FILTER))
        filtered = files_of(rb.new_scan().plan().splits(), keys)
        assert all(e["partition"][FILTER[0]] == FILTER[1] for e in filtered)
        assert filtered == [e for e in files if e["partition"][FILTER[0]] == FILTER[1]]
        snapshots.append({"id": sid, "files": files, "filtered_files": filtered})
    assert 0 < len(snapshots[-1]["filtered_files"]) < len(snapshots[-1]["files"])

    oracle = {
        "manifest.compression": codec,
        "avro_codecs": header_codecs(table_dir),
        "partition_keys": keys,
        "filter": {FILTER[0]: FILTER[1]},
        "latest": latest,
        "snapshots": snapshots,
    }
    with open(os.path.join(WAREHOUSE, f"{DB}.db", f"{codec}.oracle.json"), "w") as fo:
        json.dump(oracle, fo, indent=1, sort_keys=True)
        fo.write("\n")
    print(codec, "snapshots", latest, "live files", [len(x["files"]) for x in snapshots],
          "codecs", sorted(set(oracle["avro_codecs"].values())))


def main():
    shutil.rmtree(os.path.join(WAREHOUSE, f"{DB}.db"), ignore_errors=True)
    catalog = CatalogFactory.create({"warehouse": WAREHOUSE})
    catalog.create_database(DB, False)
    for codec in CODECS:
        make(catalog, codec)


if __name__ == "__main__":
    sys.exit(main())
