#!/usr/bin/env python3
"""Cross-client plan check: `lakecore scan --json` against pypaimon's own planner.

For every table of a local warehouse, plans with pypaimon (the public Python client, pure
Python planner) and with the lakecore binary, for: no filter; equality on every partition
tuple the table holds; equality on the bucket key of fixed-bucket tables (a range of values);
and equality on a value column. Asserts the data-file name sets are equal and prints one line
per table. Exit status 1 on any difference, with the query and both sets' differences.

Usage: check_plans.py LAKECORE_BINARY WAREHOUSE_DIR
(needs pypaimon==2.1.0 in the running interpreter; `.ci/run` makes a venv for it)
"""

import json
import os
import subprocess
import sys

from pypaimon import CatalogFactory


def lakecore_files(binary, table_dir, args):
    out = subprocess.run(
        [binary, "scan", table_dir, "--json", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted(f["file_name"] for f in json.loads(out)["files"])


def pypaimon_files(table, predicate=None):
    rb = table.new_read_builder()
    if predicate is not None:
        rb = rb.with_filter(predicate)
    return sorted(f.file_name for s in rb.new_scan().plan().splits() for f in s.files)


def text(value):
    if value is None:
        return "__DEFAULT_PARTITION__"
    return str(value)


def checkable(value):
    # The CLI's value grammar cannot yet carry commas in a value.
    return value is None or (isinstance(value, (int, str)) and "," not in str(value))


def main():
    binary, warehouse = sys.argv[1], os.path.abspath(sys.argv[2])
    catalog = CatalogFactory.create({"warehouse": warehouse})
    failures = 0
    checked = 0
    for db in sorted(d for d in os.listdir(warehouse) if d.endswith(".db")):
        for name in sorted(os.listdir(os.path.join(warehouse, db))):
            table_dir = os.path.join(warehouse, db, name)
            if not os.path.isdir(os.path.join(table_dir, "snapshot")):
                continue
            table = catalog.get_table(f"{db[:-3]}.{name}")
            schema = table.table_schema
            fields = {f.name: str(f.type) for f in schema.fields}
            pb = table.new_read_builder().new_predicate_builder()
            queries = [([], None, "no filter")]
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
                queries.append((["--partition", arg], pred, f"partition {arg}"))
            options = schema.options
            bucket_key = options.get("bucket-key")
            if int(options.get("bucket", "-1")) > 0 and bucket_key and "," not in bucket_key:
                if fields.get(bucket_key) in ("INT", "BIGINT", "SMALLINT", "TINYINT"):
                    for v in list(range(0, 24)) + [4242, -1]:
                        queries.append(
                            (["--column", f"{bucket_key}={v}"], pb.equal(bucket_key, v),
                             f"bucket key {bucket_key}={v}")
                        )
            for args, pred, what in queries:
                want = pypaimon_files(table, pred)
                got = lakecore_files(binary, table_dir, args)
                checked += 1
                if want != got:
                    failures += 1
                    print(f"DIFF {db}/{name} {what}: pypaimon {len(want)} files, lakecore {len(got)}")
                    print(f"  only pypaimon: {sorted(set(want) - set(got))[:5]}")
                    print(f"  only lakecore: {sorted(set(got) - set(want))[:5]}")
            print(f"{db}/{name}: {len(queries)} queries compared")
    print(f"{checked} plans compared with pypaimon, {failures} differ")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
