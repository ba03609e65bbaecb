#!/usr/bin/env python3
"""Writes small real Parquet files from two independent writers (pyarrow and DuckDB) for the
modular-footer tests (`tests/footer/`), into `tests/data/footer/writers/` by default.

    python make_footer_files.py [OUT_DIR] [--seed N]

Needs pyarrow and duckdb (any recent version; the committed files' versions are recorded in
`OUT_DIR/README.md` and in each file's `created_by`). Data is deterministic for a seed, so a
rerun with the same library versions rewrites the same files.

Files:
- `pyarrow_page_index.parquet`: 4 row groups, page index, small pages (several per chunk),
  nested (struct, list<int32>), nullable, dictionary and plain columns, Bloom filters on two
  columns, `sorting_columns`, user key/value metadata, size statistics.
- `pyarrow_no_page_index.parquet`: the same table without page index, dictionary off, ZSTD,
  data page V2.
- `pyarrow_wide.parquet`: 120 int/float/string columns, 2 row groups, page index.
- `duckdb.parquet`: DuckDB's writer (`COPY ... (FORMAT parquet)`), 3 row groups, ZSTD, nested
  and nullable columns, key/value metadata.
- `duckdb_snappy.parquet`: DuckDB, SNAPPY, one wide-ish table with a decimal and a timestamp.
"""
import argparse
import os
import random
import sys

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq


def table(seed, rows):
    rnd = random.Random(seed)
    cities = ["Amsterdam", "Berlin", "Cairo", "Delhi", "Edinburgh", "Fez", "Genoa"]
    ids = list(range(rows))
    city = [rnd.choice(cities) if rnd.random() > 0.1 else None for _ in ids]
    score = [rnd.uniform(-1e3, 1e3) if rnd.random() > 0.05 else None for _ in ids]
    score[3] = float("nan")
    tags = [
        None if rnd.random() < 0.1 else [rnd.randrange(100) for _ in range(rnd.randrange(4))]
        for _ in ids
    ]
    point = [
        None if rnd.random() < 0.05 else {"x": rnd.randrange(-50, 50), "label": f"p{rnd.randrange(30)}"}
        for _ in ids
    ]
    note = [None if rnd.random() < 0.3 else "note-" + "x" * rnd.randrange(40) for _ in ids]
    flag = [rnd.random() < 0.5 for _ in ids]
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "city": pa.array(city, pa.string()),
            "score": pa.array(score, pa.float64()),
            "tags": pa.array(tags, pa.list_(pa.int32())),
            "point": pa.array(point, pa.struct([("x", pa.int32()), ("label", pa.string())])),
            "note": pa.array(note, pa.string()),
            "flag": pa.array(flag, pa.bool_()),
            "day": pa.array([i // 100 for i in ids], pa.int32()).cast(pa.date32()),
        }
    )


def write_pyarrow(out, seed):
    t = table(seed, 4000)
    meta = {b"writer.note": b"lakecore footer test", b"seed": str(seed).encode()}
    t = t.replace_schema_metadata({**(t.schema.metadata or {}), **meta})
    path = os.path.join(out, "pyarrow_page_index.parquet")
    with pq.ParquetWriter(
        path,
        t.schema,
        write_page_index=True,
        use_dictionary=["city", "point.label", "tags.list.element"],
        data_page_size=2048,
        sorting_columns=[pq.SortingColumn(0), pq.SortingColumn(7, descending=True, nulls_first=True)],
        bloom_filter_options={"id": {"ndv": 4000, "fpp": 0.05}, "city": True},
        compression="snappy",
    ) as w:
        w.write_table(t, row_group_size=1000)
    pq.write_table(
        t,
        os.path.join(out, "pyarrow_no_page_index.parquet"),
        use_dictionary=False,
        compression="zstd",
        data_page_version="2.0",
        row_group_size=1500,
    )
    rnd = random.Random(seed + 1)
    cols = {}
    for i in range(120):
        kind = i % 3
        if kind == 0:
            cols[f"i{i}"] = pa.array([rnd.randrange(1000) for _ in range(300)], pa.int32())
        elif kind == 1:
            cols[f"f{i}"] = pa.array([rnd.random() for _ in range(300)], pa.float32())
        else:
            cols[f"s{i}"] = pa.array([f"v{rnd.randrange(50)}" for _ in range(300)], pa.string())
    pq.write_table(
        pa.table(cols),
        os.path.join(out, "pyarrow_wide.parquet"),
        write_page_index=True,
        row_group_size=150,
    )


def write_duckdb(out, seed):
    con = duckdb.connect()
    con.execute(f"SELECT setseed({(seed % 1000) / 1000.0})")
    con.execute(
        """CREATE TABLE t AS SELECT
             i AS id,
             CASE WHEN i % 11 = 0 THEN NULL ELSE ['red','green','blue','teal'][1 + i % 4] END AS colour,
             (i * 37 % 1000)::DOUBLE / 7 AS x,
             CASE WHEN i % 5 = 0 THEN NULL ELSE [i % 7, i % 3] END AS pair,
             {'a': i % 13, 'b': 'k' || (i % 17)::VARCHAR} AS rec,
             'row-' || i::VARCHAR AS label
           FROM range(6000) r(i)"""
    )
    p = os.path.join(out, "duckdb.parquet")
    con.execute(
        f"COPY t TO '{p}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048, "
        "KV_METADATA {origin: 'lakecore footer test'})"
    )
    con.execute(
        """CREATE TABLE u AS SELECT
             i AS id, (i * 1.25)::DECIMAL(12,2) AS amount,
             TIMESTAMP '2024-01-01' + INTERVAL (i) MINUTE AS ts,
             i % 2 = 0 AS even, CASE WHEN i % 3 = 0 THEN NULL ELSE i * 3 END AS maybe
           FROM range(5000) r(i)"""
    )
    p = os.path.join(out, "duckdb_snappy.parquet")
    con.execute(f"COPY u TO '{p}' (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 2500)")
    con.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("out", nargs="?", default=os.path.join(here, "..", "data", "footer", "writers"))
    ap.add_argument("--seed", type=int, default=24)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    write_pyarrow(a.out, a.seed)
    write_duckdb(a.out, a.seed)
    for name in sorted(os.listdir(a.out)):
        if name.endswith(".parquet"):
            p = os.path.join(a.out, name)
            md = pq.ParquetFile(p).metadata
            print(f"{name}: {os.path.getsize(p)} bytes, {md.num_row_groups} row groups, "
                  f"{md.num_columns} columns, created_by {md.created_by!r}")
    print(f"pyarrow {pa.__version__}, duckdb {duckdb.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
