"""lakecore.footer against pyarrow (the oracle): columns read through the modular footer of a
converted file equal pyarrow's read of the standard file, for the repository's files from
three writers (pyarrow, DuckDB), projections and row-group selections; inspect agrees with
pyarrow's metadata; bad input raises the typed exceptions."""

from __future__ import annotations

import math
import random
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakecore
from lakecore import footer

REPO = Path(__file__).resolve().parents[2]
WRITERS = REPO / "tests/data/footer/writers"
FILES = sorted(p.name for p in WRITERS.glob("*.parquet"))

pytestmark = pytest.mark.skipif(not hasattr(lakecore._lakecore, "footer_read"),
                                reason="package built without its `footer` feature")


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("modular")
    paths = {}
    for name in FILES:
        p = out / name
        p.write_bytes(footer.convert((WRITERS / name).read_bytes()))
        paths[name] = p
    return paths


def _norm(v):
    """NaN made comparable (Arrow's equality, like IEEE, has NaN != NaN)."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, list):
        return [_norm(x) for x in v]
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, tuple):
        return tuple(_norm(x) for x in v)
    return v


def same(got: pa.Table, want: pa.Table) -> bool:
    """Equal types and values (schema metadata aside: pyarrow keeps the writer's key-value
    pairs, arrow-rs the Parquet ones; chunking aside; NaN equal to NaN)."""
    if got.schema.remove_metadata() != want.schema.remove_metadata():
        return False
    return all(_norm(got[n].to_pylist()) == _norm(want[n].to_pylist())
               for n in want.column_names)


def test_files_present():
    assert len(FILES) >= 4, FILES


@pytest.mark.parametrize("name", FILES)
def test_read_all_columns_equals_pyarrow(converted, name):
    want = pq.read_table(WRITERS / name)
    got = footer.read(converted[name])
    assert got.num_rows == want.num_rows > 0
    assert same(got, want)


@pytest.mark.parametrize("name", FILES)
def test_random_projections_and_row_groups_equal_pyarrow(converted, name):
    pf = pq.ParquetFile(WRITERS / name)
    names = pf.schema_arrow.names
    rng = random.Random(zlib.crc32(name.encode()))
    for _ in range(4):
        cols = rng.sample(names, min(len(names), rng.randint(1, 3)))
        groups = None
        if pf.num_row_groups > 1 and rng.random() < 0.6:
            groups = sorted(rng.sample(range(pf.num_row_groups),
                                       rng.randint(1, pf.num_row_groups)))
        if groups is None:
            want = pf.read(columns=cols)
        else:
            want = pf.read_row_groups(groups, columns=cols)
        got = footer.read(str(converted[name]), columns=cols, row_groups=groups)
        # Columns come in file order (arrow-rs's projection); pyarrow's in the order asked.
        assert sorted(got.column_names) == sorted(cols)
        assert same(got.select(cols), want), (cols, groups)


def test_leaf_indexes_and_file_urls(converted):
    name = FILES[0]
    pf = pq.ParquetFile(WRITERS / name)
    first = pf.schema_arrow.names[0]
    by_index = footer.read(converted[name], columns=[0])
    assert same(by_index, pf.read(columns=[first]))
    url = converted[name].resolve().as_uri()
    assert footer.read(url, columns=[first]).equals(footer.read(converted[name], columns=[first]))


@pytest.mark.parametrize("name", FILES)
def test_inspect_agrees_with_pyarrow_metadata(converted, name):
    md = pq.ParquetFile(WRITERS / name).metadata
    info = footer.inspect(converted[name])
    assert info["num_rows"] == md.num_rows
    assert info["num_row_groups"] == md.num_row_groups
    assert info["num_columns"] == md.num_columns
    assert [c["path"] for c in info["columns"]] == [
        md.schema.column(i).path for i in range(md.num_columns)]
    assert [c["physical_type"] for c in info["columns"]] == [
        md.schema.column(i).physical_type for i in range(md.num_columns)]
    assert {m["module"] for m in info["modules"]} >= {"SCHEMA", "PLACEMENT"}


def test_standard_file_raises_invalid_data():
    with pytest.raises(lakecore.InvalidData) as e:
        footer.read(WRITERS / FILES[0])
    assert e.value.offset is not None


def test_missing_file_raises_io_error(tmp_path):
    with pytest.raises(lakecore.IoError) as e:
        footer.read(tmp_path / "nope.parquet")
    assert "nope.parquet" in str(e.value)


def test_missing_object_raises_io_error_naming_the_url():
    with pytest.raises(lakecore.IoError) as e:
        footer.inspect("memory:///bucket/nope.parquet")
    assert "memory:///bucket/nope.parquet" in str(e.value)


def test_unknown_column_raises_value_error(converted):
    with pytest.raises(ValueError, match="nope"):
        footer.read(converted[FILES[0]], columns=["nope"])


def test_truncated_file_raises_invalid_data(converted, tmp_path):
    data = converted[FILES[0]].read_bytes()
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(data[: len(data) - 3])
    with pytest.raises(lakecore.InvalidData):
        footer.read(cut)


def test_convert_refuses_non_parquet():
    with pytest.raises(lakecore.InvalidData):
        footer.convert(b"not parquet at all")
