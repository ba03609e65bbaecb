"""Parquet files with a modular footer: read columns as a ``pyarrow.Table`` and inspect the
footer, from a local path, a ``file://`` URL or an object-store URL (``s3://``, ``gs://``,
``az://``, ``memory://``; configured from the environment as for :class:`lakecore.Table`).

Only the footer (the file's tail) and the projected column chunks are read: locally through
a memory map, remotely with ranged GETs (close ranges merged into one request). The work runs
in Rust (arrow-rs) with the GIL released; the batches reach pyarrow as one Arrow IPC stream
that pyarrow reads in place.

>>> from lakecore import footer
>>> t = footer.read("s3://bucket/events.parquet", columns=["id", "ts"])  # doctest: +SKIP
>>> footer.inspect("events.parquet")["num_rows"]                         # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable

import pyarrow as pa

from . import _lakecore

__all__ = ["read", "inspect", "convert"]


def _available() -> None:
    if not hasattr(_lakecore, "footer_read"):
        raise NotImplementedError(
            "lakecore.footer needs the package built with its `footer` feature")


def read(
    path_or_url: str | os.PathLike[str],
    columns: Iterable[str | int] | None = None,
    row_groups: Iterable[int] | None = None,
) -> pa.Table:
    """Reads columns of a Parquet file with a modular footer (``lakecore footer convert``).

    Args:
        path_or_url: a local path, ``file://`` URL or object-store URL.
        columns: top-level names (all their leaves), dotted names (one leaf or group) or leaf
            indexes; all columns when ``None``.
        row_groups: row-group indexes to read; all when ``None``.

    Returns:
        A ``pyarrow.Table`` of the projection, equal to what pyarrow reads from the standard
        file for the same columns and row groups.

    Raises:
        InvalidData: the file is not a valid modular-footer Parquet file (a standard Parquet
            file too: convert it first), or its column data is invalid.
        IoError: the file or object cannot be read (missing, truncated, permission).
        ValueError: a column the file does not have, or a row group out of range.
    """
    _available()
    cols = None if columns is None else [str(c) for c in columns]
    rgs = None if row_groups is None else [int(g) for g in row_groups]
    owner, address, length = _lakecore.footer_read(os.fspath(path_or_url), cols, rgs)
    buf = pa.foreign_buffer(address, length, base=owner)
    return pa.ipc.open_stream(buf).read_all()


def inspect(path_or_url: str | os.PathLike[str]) -> dict[str, Any]:
    """The modular footer's summary, reading only the file's tail.

    Returns:
        ``{"num_row_groups", "num_columns", "num_rows", "metadata_bytes", "modules":
        [{"module", "offset", "length"}], "columns": [{"leaf", "path", "physical_type",
        "logical_type"}]}``.

    Raises:
        InvalidData: not a valid modular footer. IoError: the file cannot be read.
    """
    _available()
    return json.loads(_lakecore.footer_inspect(os.fspath(path_or_url)))


def convert(standard: bytes | bytearray | memoryview) -> bytes:
    """A standard Parquet file's bytes rewritten with a modular footer (data pages unchanged),
    as ``lakecore footer convert`` writes it.

    Raises:
        InvalidData: the bytes are not a valid standard Parquet file.
    """
    _available()
    return _lakecore.footer_convert(bytes(standard))
