#!/usr/bin/env python3
"""Cross-client plan check: `lakecore scan --json` against pypaimon's and paimon-rust's planners.

For every table of a local warehouse, plans with pypaimon (the public Python client, pure
Python planner), with paimon-rust (through pypaimon-rust, the native planner pypaimon itself
calls: `pypaimon.read.native_plan`) and with the lakecore binary, for: no filter; equality on
every partition tuple the table holds; equality on the bucket key of fixed-bucket tables (a
range of values); random filter trees on partition keys and value columns; row-ID ranges on
tables with row tracking. Asserts the data-file name sets are equal (or ordered, where the
clients' rules are known to differ, see below) and prints one line per table. Exit status 1
on any difference, with the query, the client and both sets' differences.

Usage: check_plans.py LAKECORE_BINARY WAREHOUSE_DIR
(needs pypaimon==2.1.0 and pypaimon-rust==0.4.0 in the running interpreter; `.ci/run` makes a
venv for them)
"""

import json
import os
import random
import zlib
import subprocess
import sys

from pypaimon import CatalogFactory
from pypaimon.read.native_plan import native_plan
from pypaimon.utils.range import Range


def lakecore_files(binary, table_dir, args):
    out = subprocess.run(
        [binary, "scan", table_dir, "--json", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted(f["file_name"] for f in json.loads(out)["files"])


def pypaimon_files(table, predicate=None, rows=None):
    rb = table.new_read_builder()
    if predicate is not None:
        rb = rb.with_filter(predicate)
    scan = rb.new_scan()
    if rows is not None:
        scan = scan.with_row_ranges([Range(*rows)])
    return sorted(f.file_name for s in scan.plan().splits() for f in s.files)


def paimon_rust_files(table, predicate=None, rows=None):
    """paimon-rust's plan (pypaimon-rust 0.4.0), its splits decoded by pypaimon."""
    plan = native_plan(table, predicate, row_ranges=None if rows is None else [rows])
    return sorted(f.file_name for s in plan.splits() for f in s.files)


def check_splits(binary, table, table_dir, warehouse, db, name):
    """`lakecore scan --splits`: every file's DataFileMeta fields, path and deletion file
    (deletion vectors of the index manifest) equal pypaimon's."""
    out = subprocess.run([binary, "scan", table_dir, "--splits"], check=True,
                         capture_output=True, text=True).stdout
    ours = {f["file_name"]: (s, f) for s in json.loads(out)["splits"] for f in s["files"]}
    bad = 0
    for split in table.new_read_builder().new_scan().plan().splits():
        deletions = split.data_deletion_files or [None] * len(split.files)
        for f, d in zip(split.files, deletions):
            s, mine = ours[f.file_name]
            # The deletion vector pypaimon's split carries for the file (index manifest).
            want_dv = None if d is None else (
                os.path.normpath(d.dv_index_path.removeprefix("file://")), d.offset, d.length,
                d.cardinality)
            got_dv = mine.get("deletion_file")
            got_dv = None if got_dv is None else (
                os.path.normpath(os.path.abspath(got_dv["path"])), got_dv["offset"],
                got_dv["length"], got_dv["cardinality"])
            if want_dv is not None:
                want_dv = (os.path.abspath(want_dv[0]),) + want_dv[1:]
            if got_dv != want_dv:
                bad += 1
                print(f"DIFF deletion file {db}/{name} {f.file_name}: {got_dv} != {want_dv}")
            want = {
                "file_size": f.file_size, "row_count": f.row_count,
                "min_sequence_number": f.min_sequence_number,
                "max_sequence_number": f.max_sequence_number, "schema_id": f.schema_id,
                "level": f.level, "first_row_id": f.first_row_id,
                "delete_row_count": f.delete_row_count, "file_source": f.file_source,
                "write_cols": f.write_cols, "extra_files": list(f.extra_files or []),
            }
            got = {k: mine[k] for k in want}
            path_ok = os.path.normpath(mine["path"]).endswith(
                os.path.normpath(f.file_path).split(f"{db}/{name}/", 1)[-1])
            if got != want or not path_ok or s["bucket"] != split.bucket:
                bad += 1
                if bad <= 3:
                    print(f"DIFF splits {db}/{name} {f.file_name}: {got} != {want} "
                          f"(path {mine['path']} vs {f.file_path})")
    return bad


def split_membership(binary, table, table_dir):
    """The splits of lakecore (`scan --splits`) and of pypaimon as comparable values: per
    split its bucket and its files, in order for an append table (both list a bucket's files
    in ADD order), as a set for a data-evolution table (lakecore orders a merge group's files
    by name). Sorted, so that the order of the splits themselves does not count."""
    ordered = not table.options.data_evolution_enabled(False)
    shape = (lambda names: tuple(names)) if ordered else (lambda names: tuple(sorted(names)))
    out = subprocess.run([binary, "scan", table_dir, "--splits"], check=True,
                         capture_output=True, text=True).stdout
    ours = sorted((s["bucket"], shape([f["file_name"] for f in s["files"]]))
                  for s in json.loads(out)["splits"])
    theirs = sorted((s.bucket, shape([f.file_name for f in s.files]))
                    for s in table.new_read_builder().new_scan().plan().splits())
    return ours, theirs


def check_split_packing(binary, table, table_dir, db, name):
    """Split packing equals pypaimon's: with the table's own options, and on a copy whose
    schema sets `source.split.target-size` to 9 mb, so that the 4 mb open-file cost puts at
    most two small files (or merge groups) in a split and most buckets pack into several.
    Primary-key tables are compared when every bucket's files need no merging (pypaimon's
    "optimized path", which packs files like an append table's); otherwise lakecore keeps a
    bucket whole where pypaimon cuts it by key ranges (see `Table::splits`), and the table is
    skipped. Returns (differences, splits compared)."""
    import shutil
    import tempfile
    if table.table_schema.primary_keys:
        opts = table.options.options
        dv = str(opts.get("deletion-vectors.enabled", "false")).lower() == "true"
        first_row = str(opts.get("merge-engine", "")) == "first-row"
        buckets = {}
        for s in table.new_read_builder().new_scan().plan().splits():
            buckets.setdefault((repr(tuple(s.partition.values)), s.bucket), []).extend(s.files)
        for files in buckets.values():
            raw = all(f.level != 0 and not f.delete_row_count for f in files)
            if not (raw and (dv or first_row or len({f.level for f in files}) == 1)):
                return 0, 0
    bad, compared = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, db, name)
        shutil.copytree(table_dir, copy)
        schema_dir = os.path.join(copy, "schema")
        for f in os.listdir(schema_dir):
            path = os.path.join(schema_dir, f)
            with open(path) as fh:
                doc = json.load(fh)
            doc.setdefault("options", {})["source.split.target-size"] = "9 mb"
            with open(path, "w") as fh:
                json.dump(doc, fh)
        small = CatalogFactory.create({"warehouse": tmp}).get_table(f"{db[:-3]}.{name}")
        for what, t, d in (("default target", table, table_dir), ("9 mb target", small, copy)):
            ours, theirs = split_membership(binary, t, d)
            compared += len(theirs)
            if ours != theirs:
                bad += 1
                print(f"DIFF split packing {db}/{name} ({what}): lakecore {len(ours)} splits, "
                      f"pypaimon {len(theirs)}; first difference: "
                      f"{next((a, b) for a, b in zip(ours + [None], theirs + [None]) if a != b)}")
    return bad, compared


def check_arrow(binary, table, table_dir, db, name):
    """`lakecore scan --arrow -`: one row per file pypaimon plans, its fields and typed
    partition equal pypaimon's (read back with pyarrow's IPC stream reader)."""
    import pyarrow.ipc
    out = subprocess.run([binary, "scan", table_dir, "--arrow", "-"], check=True,
                         capture_output=True).stdout
    rows = pyarrow.ipc.open_stream(out).read_all().to_pylist()
    ours = {r["file_name"]: r for r in rows}
    bad = 0 if len(ours) == len(rows) else 1
    want_files = 0
    for split in table.new_read_builder().new_scan().plan().splits():
        values = list(split.partition.values) if split.partition is not None else []
        for f in split.files:
            want_files += 1
            mine = ours.get(f.file_name)
            want = {
                "file_size": f.file_size, "row_count": f.row_count,
                "min_sequence_number": f.min_sequence_number,
                "max_sequence_number": f.max_sequence_number, "schema_id": f.schema_id,
                "level": f.level, "first_row_id": f.first_row_id, "bucket": split.bucket,
                "write_cols": f.write_cols, "extra_files": list(f.extra_files or []),
                "partition": [text(v) for v in values],
            }
            got = None if mine is None else {k: mine[k] for k in want if k != "partition"}
            if got is not None:
                got["partition"] = [text(v) for v in mine["partition"].values()]
            if got != want:
                bad += 1
                if bad <= 3:
                    print(f"DIFF arrow {db}/{name} {f.file_name}: {got} != {want}")
    if want_files != len(rows):
        bad += 1
        print(f"DIFF arrow {db}/{name}: {len(rows)} rows, pypaimon plans {want_files} files")
    return bad


def text(value):
    if value is None:
        return "__DEFAULT_PARTITION__"
    return str(value)


def checkable(value):
    # The CLI's value grammar cannot yet carry commas in a value.
    return value is None or (isinstance(value, (int, str)) and "," not in str(value))


def literal(v):
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return str(v)


def random_filter(rng, pb, cols, values, depth):
    """A random filter as (--where text, pypaimon predicate, columns, has a cross-column OR)."""
    if depth > 0 and rng.random() < 0.4:
        parts = [random_filter(rng, pb, cols, values, depth - 1) for _ in range(rng.randint(2, 3))]
        columns = set().union(*(c for _, _, c, _ in parts))
        cross = any(x for _, _, _, x in parts)
        if rng.random() < 0.5:
            return (" AND ".join(f"({t})" for t, _, _, _ in parts),
                    pb.and_predicates([p for _, p, _, _ in parts]), columns, cross)
        return (" OR ".join(f"({t})" for t, _, _, _ in parts),
                pb.or_predicates([p for _, p, _, _ in parts]), columns,
                cross or len(columns) > 1)
    text, pred = random_leaf(rng, pb, cols, values)
    return text, pred, {text.split(" ")[0]}, False


def random_leaf(rng, pb, cols, values):
    col = rng.choice(cols)
    v = rng.choice(values[col])
    op = rng.choice(["=", "!=", "<", "<=", ">", ">=", "IN", "IS NULL", "IS NOT NULL"])
    if op == "IS NULL":
        return f"{col} IS NULL", pb.is_null(col)
    if op == "IS NOT NULL":
        return f"{col} IS NOT NULL", pb.is_not_null(col)
    if op == "IN":
        vs = sorted({rng.choice(values[col]) for _ in range(rng.randint(1, 3))}, key=repr)
        return f"{col} IN ({', '.join(literal(x) for x in vs)})", pb.is_in(col, vs)
    make = {"=": pb.equal, "!=": pb.not_equal, "<": pb.less_than, "<=": pb.less_or_equal,
            ">": pb.greater_than, ">=": pb.greater_or_equal}[op]
    return f"{col} {op} {literal(v)}", make(col, v)


def main():
    binary, warehouse = sys.argv[1], os.path.abspath(sys.argv[2])
    catalog = CatalogFactory.create({"warehouse": warehouse})
    failures = 0
    checked = 0
    relaxed = {}
    skipped = []
    packed_total = 0
    for db in sorted(d for d in os.listdir(warehouse) if d.endswith(".db")):
        for name in sorted(os.listdir(os.path.join(warehouse, db))):
            table_dir = os.path.join(warehouse, db, name)
            if not os.path.isdir(os.path.join(table_dir, "snapshot")):
                continue
            table = catalog.get_table(f"{db[:-3]}.{name}")
            schema = table.table_schema
            fields = {f.name: str(f.type) for f in schema.fields}
            pb = table.new_read_builder().new_predicate_builder()
            queries = [([], None, "no filter", False)]
            splits = table.new_read_builder().new_scan().plan().splits()
            keys = schema.partition_keys
            tuples = sorted({tuple(s.partition.values) for s in splits}, key=repr)
            for values in tuples[:12]:
                if not all(checkable(v) for v in values):
                    continue
                preds = [
                    pb.is_null(k) if v is None else pb.equal(k, v) for k, v in zip(keys, values)
                ]
                pred = preds[0] if len(preds) == 1 else pb.and_predicates(preds)
                arg = ",".join(f"{k}={text(v)}" for k, v in zip(keys, values))
                queries.append((["--partition", arg], pred, f"partition {arg}", False))
            options = schema.options
            bucket_key = options.get("bucket-key")
            if int(options.get("bucket", "-1")) > 0 and bucket_key and "," not in bucket_key:
                if fields.get(bucket_key) in ("INT", "BIGINT", "SMALLINT", "TINYINT"):
                    for v in list(range(0, 24)) + [4242, -1]:
                        queries.append(
                            (["--column", f"{bucket_key}={v}"], pb.equal(bucket_key, v),
                             f"bucket key {bucket_key}={v}", False)
                        )
            # Random filter trees (--where) on partition keys and value columns.
            rng = random.Random(zlib.crc32(name.encode()))
            values = {k: sorted({s.partition.values[i] for s in splits} - {None}, key=repr)
                      for i, k in enumerate(keys)}
            for col, ty in fields.items():
                if col not in values and ty in ("INT", "BIGINT"):
                    values[col] = list(range(-2, 60, 3))
            cols = [c for c in values if values[c] and fields.get(c) in ("INT", "BIGINT", "STRING")]
            if cols:
                for _ in range(30):
                    where, pred, _, cross = random_filter(rng, pb, cols, values, 2)
                    queries.append((["--where", where], pred, f"where {where}", cross))
            evolution = options.get("data-evolution.enabled") == "true"
            # Both clients take row ranges on data-evolution tables only.
            if evolution and options.get("row-tracking.enabled") == "true":
                first = [f.first_row_id for s in splits for f in s.files
                         if f.first_row_id is not None]
                if first:
                    top = max(f.first_row_id + f.row_count - 1 for s in splits for f in s.files
                              if f.first_row_id is not None)
                    for a, b in [(0, 0), (top // 2, top // 2 + 3), (top, top + 10),
                                 (top + 100, top + 200), (0, top)]:
                        queries.append((["--rows", f"{a}-{b}"], None, f"rows {a}-{b}", False,
                                        (a, b)))
            clients = [("pypaimon", pypaimon_files), ("paimon-rust", paimon_rust_files)]
            try:
                paimon_rust_files(table)
            except Exception as e:  # noqa: BLE001 - the peer's own limits, reported
                # paimon-rust 0.4.0 reads no bzip2 or xz manifests ("unsupported codec");
                # lakecore and pypaimon still plan these tables.
                print(f"{db}/{name}: paimon-rust cannot plan this table ({e}); pypaimon only")
                skipped.append(f"{db}/{name}")
                clients = clients[:1]
            for query in queries:
                args, pred, what = query[:3]
                cross = len(query) > 3 and query[3]
                rows = query[4] if len(query) > 4 else None
                got = lakecore_files(binary, table_dir, args)
                plans = {client: plan(table, pred, rows) for client, plan in clients}
                for client, want in plans.items():
                    checked += 1
                    # Where the clients' rules differ from lakecore's, the files kept must still
                    # be ordered the right way (never fewer files than a proof allows):
                    # - data-evolution tables: pypaimon also drops whole row-ID groups by their
                    #   merged statistics, which lakecore does not do (yet): lakecore keeps a
                    #   superset;
                    # - an OR across columns: pypaimon prunes through it by neither statistics
                    #   nor (for non-key branches) buckets the way lakecore does leaf by leaf;
                    #   the two plans are both supersets of the matching files but neither
                    #   contains the other in general: counted, not compared.
                    if evolution and pred is not None and args[:1] == ["--where"]:
                        relation, ok = "superset", set(got) >= set(want)
                    elif cross:
                        relation, ok = "cross-column OR (not compared)", True
                    elif want != got and any(o == got and set(o) <= set(want)
                                             for c, o in plans.items() if c != client):
                        # The two clients disagree and lakecore equals the one that prunes
                        # more (e.g. `k IS NULL` on a bucket key: paimon-rust keeps only the
                        # bucket null keys hash to, pypaimon keeps every bucket).
                        relation, ok = "superset of lakecore = the other client", True
                    else:
                        relation, ok = "equal", want == got
                    key = f"{client}: {relation}"
                    relaxed[key] = relaxed.get(key, 0) + 1
                    if not ok:
                        failures += 1
                        print(f"DIFF ({relation} expected) {db}/{name} {what} vs {client}: "
                              f"{client} {len(want)} files, lakecore {len(got)}")
                        print(f"  only {client}: {sorted(set(want) - set(got))[:5]}")
                        print(f"  only lakecore: {sorted(set(got) - set(want))[:5]}")
            split_diffs = check_splits(binary, table, table_dir, warehouse, db, name)
            packing_diffs, packed = check_split_packing(binary, table, table_dir, db, name)
            split_diffs += packing_diffs
            packed_total += packed
            failures += split_diffs
            arrow_diffs = check_arrow(binary, table, table_dir, db, name)
            failures += arrow_diffs
            split_diffs += arrow_diffs
            print(f"{db}/{name}: {len(queries)} queries compared, split fields "
                  f"{'equal' if not split_diffs else f'differ for {split_diffs} files'}")
    print(f"{packed_total} pypaimon splits compared by membership (split packing)")
    print(f"{checked} plans compared with pypaimon and paimon-rust ({relaxed}), {failures} differ;"
          f" paimon-rust could not plan {len(skipped)} tables: {skipped}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
