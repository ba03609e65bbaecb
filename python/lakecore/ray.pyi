from typing import Any, Iterable, Mapping

from ray.data import Dataset, Datasource, ReadTask

class PaimonDatasource(Datasource):
    def __init__(
        self,
        table: str,
        *,
        columns: list[str] | None = ...,
        blob_column: str | None = ...,
        filter: str | None = ...,
        partitions: Mapping[str, Any] | None = ...,
        buckets: Iterable[int] | None = ...,
        rows: Iterable[tuple[int, int]] | None = ...,
        snapshot: int | None = ...,
    ) -> None: ...
    def estimate_inmemory_data_size(self) -> int | None: ...
    def get_read_tasks(
        self, parallelism: int, per_task_row_limit: int | None = ..., data_context: Any = ...
    ) -> list[ReadTask]: ...

def read_paimon(table: str, *, parallelism: int = ..., **kwargs: Any) -> Dataset: ...
