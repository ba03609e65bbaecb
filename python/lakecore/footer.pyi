import os
from typing import Any, Iterable

import pyarrow as pa

def read(
    path_or_url: str | os.PathLike[str],
    columns: Iterable[str | int] | None = ...,
    row_groups: Iterable[int] | None = ...,
) -> pa.Table: ...
def inspect(path_or_url: str | os.PathLike[str]) -> dict[str, Any]: ...
def convert(standard: bytes | bytearray | memoryview) -> bytes: ...
