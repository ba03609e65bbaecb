# The extension module (private; use `lakecore`). Plans come back as record batches through
# the Arrow C data interface: (schema capsule, array capsule) pairs for
# pa.RecordBatch._import_from_c_capsule. BLOB columns come back as buffers lent as
# (owner, address, length): bytes the owner holds, for pa.foreign_buffer.
from typing import Any

class Owned:
    def __len__(self) -> int: ...

_Lent = tuple[Owned, int, int]

class RawTable:
    def __init__(self, location: str) -> None: ...
    def dir(self) -> str: ...
    def plan(
        self,
        snapshot: int | None = ...,
        tag: str | None = ...,
        as_of: int | None = ...,
        filter: str | None = ...,
        partitions: list[tuple[str, str | None]] = ...,
        columns: list[tuple[str, str]] = ...,
        buckets: list[tuple[int, int | None]] | None = ...,
        rows: list[tuple[int, int]] | None = ...,
        sidecars: bool = ...,
        splits: bool = ...,
    ) -> tuple[Any, ...]: ...
    def _plan_count(
        self,
        filter: str | None = ...,
        partitions: list[tuple[str, str | None]] = ...,
        buckets: list[tuple[int, int | None]] | None = ...,
        rows: list[tuple[int, int]] | None = ...,
        batches: bool = ...,
    ) -> tuple[int | None, int]: ...
    def read_blob(
        self,
        column: str | None = ...,
        snapshot: int | None = ...,
        tag: str | None = ...,
        as_of: int | None = ...,
        filter: str | None = ...,
        partitions: list[tuple[str, str | None]] = ...,
        columns: list[tuple[str, str]] = ...,
        buckets: list[tuple[int, int | None]] | None = ...,
        rows: list[tuple[int, int]] | None = ...,
        strict: bool = ...,
        descriptors: str = ...,
    ) -> tuple[int | None, str, int, _Lent, _Lent, _Lent | None, _Lent, list[tuple[str, int]] | list[_Lent]]: ...

class RawSidecar:
    def __init__(self, data: bytes) -> None: ...
    def info(self) -> tuple[str, int, int, int, int]: ...
    def partitions(self) -> list[bytes]: ...
    def select(
        self,
        rows: list[tuple[int, int]] | None = ...,
        buckets: list[tuple[int, int | None]] | None = ...,
        partitions: list[bytes] | None = ...,
    ) -> list[tuple[int, int, int, int, int]]: ...

def footer_read(
    location: str, columns: list[str] | None = ..., row_groups: list[int] | None = ...
) -> _Lent: ...
def footer_inspect(location: str) -> str: ...
def footer_convert(data: bytes) -> bytes: ...
