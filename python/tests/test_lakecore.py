"""lakecore's Python package against pypaimon 2.1.0 (the oracle) on the repository's test
tables: the same live files, row counts, partitions and DataFileMeta fields for plans; the
same rows (row ID, NULL, bytes) for BLOB reads; typed exceptions on bad input."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import lakecore

REPO = Path(__file__).resolve().parents[2]
WAREHOUSE = REPO / "tests/data/paimon/warehouse"
BLOB_WAREHOUSE = REPO / "tests/data/paimon/blob_warehouse"
DV_WAREHOUSE = REPO / "tests/data/paimon/dv_warehouse"

PLAN_TABLES = sorted(
    f"{db.name[:-3]}.{t.name}"
    for db in WAREHOUSE.iterdir() if db.name.endswith(".db")
    for t in db.iterdir() if t.is_dir()
)
BLOB_TABLES = ["layers", "rolled", "parted"]


def pypaimon_table(warehouse: Path, name: str):
    from pypaimon import CatalogFactory
    return CatalogFactory.create({"warehouse": str(warehouse)}).get_table(name)


def table_dir(warehouse: Path, name: str) -> Path:
    db, t = name.split(".")
    return warehouse / f"{db}.db" / t


def pypaimon_files(table, predicate=None):
    rb = table.new_read_builder()
    if predicate is not None:
        rb = rb.with_filter(predicate)
    return {f.file_name: (s, f) for s in rb.new_scan().plan().splits() for f in s.files}


def partition_dict(table, split) -> dict:
    keys = table.partition_keys
    values = split.partition.values if hasattr(split.partition, "values") else list(split.partition)
    return dict(zip(keys, values))


@pytest.mark.parametrize("name", PLAN_TABLES)
def test_plan_equals_pypaimon(name):
    oracle = pypaimon_table(WAREHOUSE, name)
    want = pypaimon_files(oracle)
    plan = lakecore.Table(table_dir(WAREHOUSE, name)).plan()
    got = {r["file_name"]: r for r in plan.to_pylist()}
    assert sorted(got) == sorted(want)
    for file_name, (split, f) in want.items():
        r = got[file_name]
        assert (r["row_count"], r["file_size"], r["bucket"]) == (f.row_count, f.file_size, split.bucket)
        assert (r["min_sequence_number"], r["max_sequence_number"]) == (
            f.min_sequence_number, f.max_sequence_number)
        assert (r["first_row_id"], r["schema_id"], r["level"]) == (
            f.first_row_id, f.schema_id, f.level)
        assert r["write_cols"] == f.write_cols
        assert r["extra_files"] == list(f.extra_files or [])
        assert os.path.normpath(r["path"]).endswith(
            os.path.normpath(f.file_path).split(f"/{name.split('.')[1]}/", 1)[-1])
        assert r["partition"] == partition_dict(oracle, split)


def partition_tuples(name):
    plan = lakecore.Table(table_dir(WAREHOUSE, name)).plan()
    seen = []
    for p in plan.column("partition").to_pylist():
        if p and p not in seen:
            seen.append(p)
    return seen


@pytest.mark.parametrize("name", [n for n in PLAN_TABLES if partition_tuples(n)])
def test_partition_filter_equals_pypaimon(name):
    oracle = pypaimon_table(WAREHOUSE, name)
    t = lakecore.Table(table_dir(WAREHOUSE, name))
    for values in partition_tuples(name)[:6]:
        pb = oracle.new_read_builder().new_predicate_builder()
        preds = [pb.is_null(k) if v is None else pb.equal(k, v) for k, v in values.items()]
        want = pypaimon_files(oracle, pb.and_predicates(preds) if len(preds) > 1 else preds[0])
        got = t.plan(partitions=values)
        assert sorted(got.column("file_name").to_pylist()) == sorted(want)
        assert all(p == values for p in got.column("partition").to_pylist())
        # The same query as filter text gives the same files.
        text = " AND ".join(f"{k} IS NULL" if v is None else f"{k} = '{v}'" if isinstance(v, str)
                            else f"{k} = {v}" for k, v in values.items())
        assert t.plan(text).column("file_name").to_pylist() == got.column("file_name").to_pylist()


def test_plan_row_ranges_and_buckets():
    de = lakecore.Table(table_dir(WAREHOUSE, "sc.de_rs"))
    full = de.plan()
    some = de.plan(rows=[(0, 3)])
    assert 0 < some.num_rows <= full.num_rows
    for r in some.to_pylist():
        assert r["first_row_id"] is None or r["first_row_id"] <= 3
    b4 = lakecore.Table(table_dir(WAREHOUSE, "sc.bucket4_rs"))
    one = b4.plan(buckets=[(1, 4)])
    assert one.num_rows > 0 and set(one.column("bucket").to_pylist()) == {1}
    whole = b4.plan().to_pylist()
    assert one.column("file_name").to_pylist() == [r["file_name"] for r in whole if r["bucket"] == 1]
    assert one.column("file_name").to_pylist() == b4.plan(buckets=[1]).column("file_name").to_pylist()
    # Sidecars off gives the same files, reading every block.
    off = b4.plan(buckets=[1], sidecars=False)
    assert off.column("file_name").to_pylist() == one.column("file_name").to_pylist()
    meta = off.schema.metadata
    assert meta[b"stats.blocks_read"] == meta[b"stats.blocks_total"]


def test_plan_snapshots_and_splits():
    name = "sc.part_append_rs"
    oracle = pypaimon_table(WAREHOUSE, name)
    t = lakecore.Table(f"file://{table_dir(WAREHOUSE, name)}")
    latest = t.plan()
    assert latest.schema.metadata[b"snapshot"] == b"4"
    older = t.plan(snapshot=2)
    assert older.schema.metadata[b"snapshot"] == b"2"
    assert set(older.column("file_name").to_pylist()) != set(latest.column("file_name").to_pylist())
    splits = t.splits()
    want = oracle.new_read_builder().new_scan().plan().splits()
    # Split by split, packed the same way: the files of each in the same (ADD) order.
    got = sorted(((repr(tuple(s.partition.values())), s.bucket, s.row_count,
                   [f["file_name"] for f in s.files]) for s in splits))
    exp = sorted(((repr(tuple(partition_dict(oracle, s).values())), s.bucket, s.row_count,
                   [f.file_name for f in s.files]) for s in want))
    assert got == exp


def test_plan_typed_partitions():
    plan = lakecore.Table(table_dir(WAREHOUSE, "sc.part_append_rs")).plan()
    partition_type = plan.schema.field("partition").type
    assert pa.types.is_struct(partition_type)
    assert [partition_type.field(i).name for i in range(partition_type.num_fields)] == ["dt", "hr"]
    assert partition_type.field("hr").type == pa.int32()
    plan.validate(full=True)


def blob_rows(table: pa.Table, column: str):
    rows = []
    for rid, b in zip(table.column("_ROW_ID").to_pylist(), table.column(column).to_pylist()):
        rows.append({"row_id": rid, "null": b is None, "length": None if b is None else len(b),
                     "sha256": None if b is None else hashlib.sha256(b).hexdigest()})
    return rows


@pytest.mark.parametrize("name", BLOB_TABLES)
def test_blob_read_equals_recorded_pypaimon(name):
    d = BLOB_WAREHOUSE / "blobtab.db" / name
    want = json.loads((d.parent / f"{name}.expected.json").read_text())
    want = want["rows"] if isinstance(want, dict) else want
    got = lakecore.Table(d).read_blob("b")
    got.validate(full=True)
    assert got.schema.field("b").type == pa.binary_view()
    keys = ("row_id", "null", "length", "sha256")
    assert [tuple(r[k] for k in keys) for r in blob_rows(got, "b")] == [
        tuple(r[k] for k in keys) for r in want]
    assert got.column("b").to_pylist() == lakecore.Table(d).read_blob("b", copy=True).column("b").to_pylist()


@pytest.mark.parametrize("name", BLOB_TABLES)
def test_blob_read_equals_live_pypaimon(name):
    oracle = pypaimon_table(BLOB_WAREHOUSE, f"blobtab.{name}")
    rb = oracle.new_read_builder().with_projection(["b", "_ROW_ID"])
    want = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    want = sorted(zip(want.column("_ROW_ID").to_pylist(), want.column("b").to_pylist()))
    got = lakecore.Table(BLOB_WAREHOUSE / "blobtab.db" / name).read_blob()
    assert list(zip(got.column("_ROW_ID").to_pylist(), got.column("b").to_pylist())) == want


def test_splits_deletion_files_and_blob_read_with_deletion_vectors():
    # A data-evolution table pypaimon wrote and deleted rows from (deletion vectors).
    oracle = pypaimon_table(DV_WAREHOUSE, "dvtab.dv")
    d = DV_WAREHOUSE / "dvtab.db" / "dv"
    want = {}
    for s in oracle.new_read_builder().new_scan().plan().splits():
        for f, dv in zip(s.files, s.data_deletion_files or [None] * len(s.files)):
            want[f.file_name] = None if dv is None else (
                os.path.normpath(dv.dv_index_path.removeprefix("file://")), dv.offset,
                dv.length, dv.cardinality)
    splits = lakecore.Table(d).splits()
    got = {}
    for s in splits:
        assert sum(e - b for b, e in s.merge_groups) == len(s.files)
        for f in s.files:
            dv = f["deletion_file"]
            got[f["file_name"]] = None if dv is None else (
                os.path.normpath(dv["path"]), dv["offset"], dv["length"], dv["cardinality"])
    assert got == want and any(v is not None for v in got.values())
    rb = oracle.new_read_builder().with_projection(["b", "_ROW_ID"])
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    rows = sorted(zip(rows.column("_ROW_ID").to_pylist(), rows.column("b").to_pylist()))
    blob = lakecore.Table(d).read_blob("b")
    assert list(zip(blob.column("_ROW_ID").to_pylist(), blob.column("b").to_pylist())) == rows


def test_blob_read_rows_and_zero_copy():
    d = BLOB_WAREHOUSE / "blobtab.db" / "rolled"
    t = lakecore.Table(d)
    full = t.read_blob()
    ids = full.column("_ROW_ID").to_pylist()
    lo, hi = ids[len(ids) // 4], ids[len(ids) // 2]
    part = t.read_blob(rows=[(lo, hi)])
    assert part.column("_ROW_ID").to_pylist() == [i for i in ids if lo <= i <= hi]
    assert part.column("b").to_pylist() == [
        v for i, v in zip(ids, full.column("b").to_pylist()) if lo <= i <= hi]
    # Values over 12 bytes live in the mapped files: the array's data buffers are the
    # files' sizes, not a copy of the values.
    blob_sizes = sorted(os.path.getsize(p) for p in d.rglob("*.blob"))
    data_buffers = [b for b in full.column("b").chunk(0).buffers()[2:]]
    assert data_buffers and all(b.size in blob_sizes for b in data_buffers)


def test_sidecar_select():
    sidecars = sorted((WAREHOUSE / "sc.db/de_rs/manifest").glob("*.sidecar"))
    assert sidecars, "the test table has sidecars"
    s = lakecore.Sidecar(sidecars[0].read_bytes())
    everything = s.select()
    assert len(everything) == s.block_count > 0
    assert sum(b.record_count for b in everything) == s.entry_count
    first = everything[0]
    assert s.select(rows=[(0, 0)])[0] == first or first.first_record > 0
    assert s.select(partitions=[]) == [] or s.partition_count == 0
    assert s.select(partitions=s.partitions()) == everything
    # A bucketed table's sidecar: each bucket's blocks are a subset, all buckets together
    # are every block.
    b4 = sorted((WAREHOUSE / "sc.db/bucket4_rs/manifest").glob("*.sidecar"))
    s4 = lakecore.Sidecar(b4[-1].read_bytes())
    every = s4.select()
    union = set()
    for b in range(4):
        chosen = s4.select(buckets=[(b, 4)])
        assert set(chosen) <= set(every)
        union |= set(chosen)
    assert union == set(every)
    assert s4.select(buckets=[(0, 5)]) == [] or s4.block_count == 0


def test_sidecar_invalid_bytes_raise_invalid_data():
    with pytest.raises(lakecore.InvalidData) as e:
        lakecore.Sidecar(b"PMSC\x07" + b"\x00" * 64)
    assert e.value.kind and e.value.offset == 4
    assert isinstance(e.value, ValueError)


def test_missing_table_raises_io_error():
    with pytest.raises(lakecore.IoError) as e:
        lakecore.Table("/nonexistent/lakecore/table")
    assert e.value.kind and e.value.offset is None and "/nonexistent" in str(e.value)
    assert isinstance(e.value, OSError)


def test_not_a_table_raises_invalid_data(tmp_path):
    with pytest.raises(lakecore.InvalidData) as e:
        lakecore.Table(tmp_path)
    assert e.value.kind == "metadata"


def test_bad_query_raises_value_error():
    t = lakecore.Table(table_dir(WAREHOUSE, "sc.part_append_rs"))
    with pytest.raises(ValueError):
        t.plan("dt >= ")
    with pytest.raises(ValueError):
        t.plan(partitions={"nope": 1})
    with pytest.raises(ValueError):
        lakecore.Table("ftp://host/warehouse/db.db/t")
    with pytest.raises(ValueError):
        t.read_blob("b")


def test_corrupt_manifest_raises_invalid_data(tmp_path):
    src = table_dir(WAREHOUSE, "sc.part_append_rs")
    dst = tmp_path / "t"
    shutil.copytree(src, dst)
    manifests = sorted(p for p in (dst / "manifest").iterdir() if p.name.startswith("manifest-")
                       and "list" not in p.name and "." not in p.name)
    victim = max(manifests, key=lambda p: p.stat().st_size)
    data = bytearray(victim.read_bytes())
    data[len(data) // 2:] = b"\xff" * (len(data) - len(data) // 2)
    victim.write_bytes(bytes(data))
    with pytest.raises(lakecore.InvalidData) as e:
        lakecore.Table(dst).plan(sidecars=False)
    assert e.value.offset is not None and victim.name in (e.value.path or "")


def test_corrupt_blob_file_raises_invalid_data(tmp_path):
    src = BLOB_WAREHOUSE / "blobtab.db" / "layers"
    dst = tmp_path / "layers"
    shutil.copytree(src, dst)
    victim = max(dst.rglob("*.blob"), key=lambda p: p.stat().st_size)
    data = bytearray(victim.read_bytes())
    data[-8:] = b"\x00" * 8
    victim.write_bytes(bytes(data))
    with pytest.raises(lakecore.InvalidData) as e:
        lakecore.Table(dst).read_blob()
    assert e.value.kind and e.value.offset is not None


def test_missing_blob_file_raises_io_error(tmp_path):
    src = BLOB_WAREHOUSE / "blobtab.db" / "layers"
    dst = tmp_path / "layers"
    shutil.copytree(src, dst)
    next(dst.rglob("*.blob")).unlink()
    with pytest.raises(lakecore.IoError) as e:
        lakecore.Table(dst).read_blob()
    assert ".blob" in str(e.value)


@pytest.mark.parametrize("name", ["sc.part_append_rs", "sc.codec_snappy_rs"])
def test_null_partition_equals_pypaimon(name):
    """`None` is the null partition value (the table's partition.default-name)."""
    oracle = pypaimon_table(WAREHOUSE, name)
    t = lakecore.Table(table_dir(WAREHOUSE, name))
    with_null = [p for p in partition_tuples(name) if None in p.values()]
    assert with_null, "the table has a null partition value"
    for values in with_null[:3]:
        pb = oracle.new_read_builder().new_predicate_builder()
        preds = [pb.is_null(k) if v is None else pb.equal(k, v) for k, v in values.items()]
        want = pypaimon_files(oracle, pb.and_predicates(preds) if len(preds) > 1 else preds[0])
        got = t.plan(partitions=values)
        assert sorted(got.column("file_name").to_pylist()) == sorted(want)
        assert all(p == values for p in got.column("partition").to_pylist())
    with pytest.raises(ValueError):
        t.plan(columns={"x": None})


def test_memory_url_opens_through_the_object_store():
    # memory:// is an empty in-process store: opening goes through object_store and finds
    # no table, an I/O error naming the URL (not a refused scheme).
    with pytest.raises(lakecore.IoError) as e:
        lakecore.Table("memory:///warehouse/db.db/t").plan()
    assert "memory:///warehouse/db.db/t" in str(e.value)


@pytest.fixture(scope="module")
def descriptor_table(tmp_path_factory):
    """A data-evolution table with a descriptor field `d` written now by pypaimon through
    tests/clients/make_descriptor_table.py (payload files under the table, a partial update
    of `d`, deleted rows)."""
    import subprocess
    import sys
    warehouse = tmp_path_factory.mktemp("desc")
    subprocess.run([sys.executable, str(REPO / "tests/clients/make_descriptor_table.py"),
                    str(warehouse), "--seed", "3"], check=True)
    return warehouse


def test_descriptor_field_equals_live_pypaimon(descriptor_table):
    from pypaimon.table.row.blob import BlobDescriptor
    oracle = pypaimon_table(descriptor_table, "desctab.desc")
    d = descriptor_table / "desctab.db" / "desc"

    def pypaimon_rows(table):
        rb = table.new_read_builder().with_projection(["d", "_ROW_ID"])
        t = rb.new_read().to_arrow(rb.new_scan().plan().splits())
        return sorted(zip(t.column("_ROW_ID").to_pylist(), t.column("d").to_pylist()))

    def lakecore_rows(got):
        got.validate(full=True)
        return list(zip(got.column("_ROW_ID").to_pylist(), got.column("d").to_pylist()))

    table = lakecore.Table(d)
    # The descriptor bytes (pypaimon with blob-as-descriptor=true), then the payloads.
    want = pypaimon_rows(oracle.copy({"blob-as-descriptor": "true"}))
    got = table.read_blob("d")
    assert got.schema.field("d").type == pa.binary_view()
    assert lakecore_rows(got) == want
    assert any(v is None for _, v in want) and len(want) > 60
    assert lakecore_rows(table.read_blob("d", descriptors="resolve")) == pypaimon_rows(oracle)
    decoded = table.read_blob("d", descriptors="decode").column("d").to_pylist()
    assert decoded == [None if v is None else
                       {"uri": (p := BlobDescriptor.deserialize(v)).uri, "offset": p.offset,
                        "length": p.length} for _, v in want]
    some = table.read_blob("d", rows=[(3, 17)], descriptors="resolve")
    assert lakecore_rows(some) == [r for r in pypaimon_rows(oracle) if 3 <= r[0] <= 17]
    with pytest.raises(ValueError):
        table.read_blob("b", descriptors="resolve")
    with pytest.raises(ValueError):
        table.read_blob("name")
    with pytest.raises(ValueError):
        table.read_blob("d", descriptors="payload")
