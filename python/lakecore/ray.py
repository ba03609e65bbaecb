"""A Ray Data datasource over a Paimon table: the driver plans with lakecore (manifest
sidecars, no data read); workers read Parquet column projections with pyarrow and BLOB
columns with lakecore (memory-mapped ``.blob`` files, layers merged).

>>> import ray, lakecore.ray                                       # doctest: +SKIP
>>> ds = lakecore.ray.read_paimon("/warehouse/db.db/t", columns=["id"], blob_column="b")  # doctest: +SKIP
>>> ds.take(1)                                                        # doctest: +SKIP

Each read task covers whole Parquet data files (one row-ID range each). On tables with row
tracking the rows carry ``_ROW_ID`` and the BLOB column of the same rows; without row tracking
(plain append tables) only Parquet projections are read. Tables whose Parquet files must be
merged (primary-key tables, data-evolution updates of a Parquet column) are refused on the
driver: this datasource does not merge them.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import pyarrow as pa
import pyarrow.parquet as pq
from ray.data import Datasource, ReadTask, read_datasource
from ray.data.block import BlockMetadata

import lakecore


def _clip(first: int, last: int, rows: list[tuple[int, int]] | None) -> list[tuple[int, int]]:
    """The parts of ``first..=last`` inside ``rows`` (all of it without ``rows``)."""
    if rows is None:
        return [(first, last)]
    return [(max(first, a), min(last, b)) for a, b in rows if a <= last and b >= first]


def _read_unit(table_path: str, snapshot: int | None, unit: dict, columns: list[str] | None,
               blob_column: str | None) -> pa.Table:
    """One Parquet file's rows (clipped to the requested row ranges): its projected columns,
    ``_ROW_ID`` and the BLOB column when the table tracks row IDs."""
    parts = []
    data = pq.ParquetFile(unit["path"]).read(columns=columns) if columns else None
    for a, b in unit["ranges"]:
        cols: dict[str, pa.Array | pa.ChunkedArray] = {}
        if unit["first_row_id"] is not None:
            start = a - unit["first_row_id"]
            n = b - a + 1
            cols["_ROW_ID"] = pa.array(range(a, b + 1), pa.int64())
        else:
            start, n = 0, unit["row_count"]
        if data is not None:
            for name in data.column_names:
                cols[name] = data.column(name).slice(start, n)
        if blob_column is not None:
            blobs = lakecore.Table(table_path).read_blob(blob_column, rows=[(a, b)],
                                                         snapshot=snapshot)
            if blobs.column("_ROW_ID").to_pylist() != list(range(a, b + 1)):
                raise lakecore.InvalidData(
                    f"{unit['path']}: the BLOB column {blob_column!r} of rows {a}..{b} does not "
                    f"cover exactly those rows", kind="mismatch", path=unit["path"])
            # Plain binary for the object store (views into a worker's mapped files do not
            # leave the worker).
            cols[blobs.column_names[1]] = blobs.column(1).cast(pa.large_binary())
        parts.append(pa.table(cols))
    return pa.concat_tables(parts) if parts else pa.table({})


class PaimonDatasource(Datasource):
    """Ray Data datasource of a Paimon table (see the module documentation).

    Args:
        table: the table directory (or ``file://`` URL).
        columns: Parquet columns to read (``None``: every column the data files hold; ``[]``:
            none, e.g. only the BLOB column).
        blob_column: a BLOB column to read with the rows (tables with row tracking and data
            evolution).
        filter, partitions, buckets, rows, snapshot: as in :meth:`lakecore.Table.plan`.
    """

    def __init__(self, table: str, *, columns: list[str] | None = None,
                 blob_column: str | None = None, filter: str | None = None,
                 partitions: Mapping[str, Any] | None = None,
                 buckets: Iterable[int] | None = None,
                 rows: Iterable[tuple[int, int]] | None = None,
                 snapshot: int | None = None) -> None:
        self._table = str(table)
        self._columns = columns
        self._blob = blob_column
        self._rows = None if rows is None else sorted((int(a), int(b)) for a, b in rows)
        plan = lakecore.Table(self._table).plan(filter, snapshot=snapshot, partitions=partitions,
                                                buckets=buckets, rows=self._rows)
        meta = plan.schema.metadata or {}
        self._snapshot = int(meta[b"snapshot"]) if meta.get(b"snapshot") else None
        files = [f for f in plan.to_pylist() if not f["file_name"].endswith(".blob")]
        if any(f["level"] > 0 for f in files):
            raise NotImplementedError(
                f"{self._table}: files above level 0 (a primary-key table): their rows must be "
                "merged, which this datasource does not do")
        spans: list[tuple[int, int, str]] = sorted(
            (f["first_row_id"], f["first_row_id"] + f["row_count"] - 1, f["file_name"])
            for f in files if f["first_row_id"] is not None)
        for (a0, b0, n0), (a1, b1, n1) in zip(spans, spans[1:]):
            if a1 <= b0:
                raise NotImplementedError(
                    f"{self._table}: Parquet files {n0} (rows {a0}..{b0}) and {n1} (rows "
                    f"{a1}..{b1}) overlap: a data-evolution update of Parquet columns, which "
                    "this datasource does not merge")
        if blob_column is not None and any(f["first_row_id"] is None for f in files):
            raise ValueError(f"{self._table}: a BLOB column needs a table with row tracking")
        self._units = []
        for f in files:
            ranges = ([(0, f["row_count"] - 1)] if f["first_row_id"] is None else
                      _clip(f["first_row_id"], f["first_row_id"] + f["row_count"] - 1,
                            self._rows))
            if ranges:
                self._units.append({"path": f["path"], "first_row_id": f["first_row_id"],
                                    "row_count": f["row_count"], "file_size": f["file_size"],
                                    "ranges": ranges})

    def estimate_inmemory_data_size(self) -> int | None:
        return sum(u["file_size"] for u in self._units) or None

    def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None,
                       data_context: Any = None) -> list[ReadTask]:
        n = max(1, min(parallelism, len(self._units)))
        groups = [self._units[i::n] for i in range(n)]
        tasks = []
        for group in groups:
            if not group:
                continue
            rows = sum(b - a + 1 for u in group for a, b in u["ranges"])
            meta = BlockMetadata(num_rows=rows, size_bytes=sum(u["file_size"] for u in group),
                                 input_files=[u["path"] for u in group], exec_stats=None)
            args = (self._table, self._snapshot, group, self._columns, self._blob)

            def read(args=args):
                table, snapshot, group, columns, blob = args
                return [_read_unit(table, snapshot, u, columns, blob) for u in group]

            tasks.append(ReadTask(read, meta, per_task_row_limit=per_task_row_limit))
        return tasks

    def get_name(self) -> str:
        return "Paimon(lakecore)"


def read_paimon(table: str, *, parallelism: int = -1, **kwargs: Any):
    """A ``ray.data.Dataset`` of a Paimon table: planned here, read on the workers. Takes
    :class:`PaimonDatasource`'s arguments."""
    return read_datasource(PaimonDatasource(table, **kwargs), override_num_blocks=None
                           if parallelism < 0 else parallelism)
