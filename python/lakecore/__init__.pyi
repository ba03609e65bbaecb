from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Mapping, NamedTuple

import pyarrow as pa

from ._errors import InvalidData as InvalidData
from ._errors import IoError as IoError
from ._errors import LakecoreError as LakecoreError
from . import footer as footer

_Conditions = Mapping[str, Any] | Iterable[tuple[str, Any]]
_Rows = Iterable[tuple[int, int]] | Iterable[int] | range
_Buckets = Iterable[int | tuple[int, int | None]]

@dataclass
class Split:
    partition: dict[str, Any]
    bucket: int
    total_buckets: int
    row_count: int
    files: list[dict[str, Any]]
    merged_row_count: int | None
    merge_groups: list[tuple[int, int]]
    @property
    def file_paths(self) -> list[str]: ...

class Table:
    def __init__(self, path_or_url: str | os.PathLike[str]) -> None: ...
    @property
    def path(self) -> str: ...
    def plan(
        self,
        filter: str | None = ...,
        *,
        snapshot: int | None = ...,
        tag: str | None = ...,
        as_of: int | None = ...,
        partitions: _Conditions | None = ...,
        columns: _Conditions | None = ...,
        buckets: _Buckets | None = ...,
        rows: _Rows | None = ...,
        sidecars: bool = ...,
    ) -> pa.Table: ...
    def splits(self, filter: str | None = ..., **kwargs: Any) -> list[Split]: ...
    def read_blob(
        self,
        column: str | None = ...,
        *,
        rows: _Rows | None = ...,
        snapshot: int | None = ...,
        tag: str | None = ...,
        as_of: int | None = ...,
        filter: str | None = ...,
        partitions: _Conditions | None = ...,
        buckets: _Buckets | None = ...,
        strict: bool = ...,
        copy: bool = ...,
        descriptors: Literal["bytes", "resolve", "decode"] = ...,
    ) -> pa.Table: ...

class Block(NamedTuple):
    id: int
    offset: int
    length: int
    first_record: int
    record_count: int

class Sidecar:
    layout: str
    manifest_length: int
    entry_count: int
    block_count: int
    partition_count: int
    def __init__(self, data: bytes | bytearray | memoryview) -> None: ...
    def partitions(self) -> list[bytes]: ...
    def select(
        self,
        rows: _Rows | None = ...,
        buckets: _Buckets | None = ...,
        partitions: Iterable[bytes] | None = ...,
    ) -> list[Block]: ...
