"""lakecore: Paimon scan planning through manifest sidecars, and zero-copy BLOB column reads,
as pyarrow tables.

The work runs in Rust (the ``lakecore`` crate) with the GIL released; this module turns its
buffers into pyarrow arrays without per-row Python objects.

>>> import lakecore
>>> t = lakecore.Table("tests/data/paimon/warehouse/sc.db/part_append_rs")  # doctest: +SKIP
>>> plan = t.plan(filter="dt >= '2024-01-02' AND hr IN (3, 4)")            # doctest: +SKIP
>>> plan.column("file_name")                                                 # doctest: +SKIP
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import pyarrow as pa

from . import _lakecore
from ._errors import InvalidData, IoError, LakecoreError
from . import footer

__all__ = [
    "footer",
    "Table",
    "Sidecar",
    "Block",
    "Split",
    "LakecoreError",
    "InvalidData",
    "IoError",
]

def _buffer(lent: tuple | None) -> pa.Buffer | None:
    """A buffer the extension lends as ``(owner, address, length)``: a pyarrow buffer over
    those bytes in place, keeping ``owner`` (which holds them) alive."""
    if lent is None:
        return None
    owner, address, length = lent
    if length == 0:
        return pa.py_buffer(b"")
    return pa.foreign_buffer(address, length, base=owner)


def _pairs(conditions: Mapping[str, Any] | Iterable[tuple[str, Any]] | None,
           what: str = "partitions") -> list[tuple[str, str | None]]:
    """``{key: value}`` or ``[(key, value)]`` -> text pairs as the planner types them;
    ``None`` is the null partition value (the table's ``partition.default-name``)."""
    if conditions is None:
        return []
    items = conditions.items() if isinstance(conditions, Mapping) else conditions
    out: list[tuple[str, str | None]] = []
    for k, v in items:
        if v is None:
            if what != "partitions":
                raise ValueError(f"{what}: {k!r} = None: only partition keys take a null value "
                                 "(use filter=\"... IS NULL\")")
            out.append((str(k), None))
        elif isinstance(v, bool):
            out.append((str(k), "true" if v else "false"))
        elif isinstance(v, (bytes, bytearray)):
            out.append((str(k), bytes(v).hex()))
        else:
            out.append((str(k), str(v)))
    return out


def _rows(rows: Iterable[tuple[int, int]] | Iterable[int] | None) -> list[tuple[int, int]] | None:
    """Row-ID ranges, inclusive: ``[(first, last), ...]``, a ``range``, or single row IDs."""
    if rows is None:
        return None
    if isinstance(rows, range):
        if rows.step != 1:
            raise ValueError("rows: a range must have step 1")
        return [] if len(rows) == 0 else [(rows.start, rows.stop - 1)]
    out = []
    for r in rows:
        if isinstance(r, int):
            out.append((r, r))
        else:
            first, last = r
            if first > last:
                raise ValueError(f"rows: range ({first}, {last}) has first after last")
            out.append((int(first), int(last)))
    return out


def _buckets(buckets: Iterable[int | tuple[int, int | None]] | None) -> list[tuple[int, int | None]] | None:
    if buckets is None:
        return None
    return [(b, None) if isinstance(b, int) else (int(b[0]), b[1]) for b in buckets]


@dataclass
class Split:
    """The files of one partition and bucket, in the shape of pypaimon's ``Split``:
    ``partition`` (``{key: value}``), ``bucket``, ``total_buckets``, ``row_count`` (sum over
    the files), ``files`` (one dict per data file: the plan table's columns and
    ``deletion_file``), ``merged_row_count`` (rows after merging and deletion vectors, when
    known) and ``merge_groups`` (data-evolution tables: ``(start, end)`` index ranges into
    ``files`` of the files whose row-ID ranges overlap)."""

    partition: dict[str, Any]
    bucket: int
    total_buckets: int
    row_count: int
    files: list[dict[str, Any]] = field(default_factory=list)
    merged_row_count: int | None = None
    merge_groups: list[tuple[int, int]] = field(default_factory=list)

    @property
    def file_paths(self) -> list[str]:
        """The files' paths."""
        return [f["path"] for f in self.files]


class Table:
    """A Paimon table: a directory ``<warehouse>/<db>.db/<table>``, a ``file://`` URL or an
    object-store URL (``s3://``, ``gs://``, ``az://``, ``memory://``; configured from the
    environment as the ``object_store`` crate reads it: ``AWS_ENDPOINT_URL``, ``AWS_REGION``,
    credentials, ``AWS_ALLOW_HTTP``, ...). Remote tables plan and read BLOB columns (fetching
    each ``.blob`` file's index and only the selected rows' bytes).

    Opening reads nothing but the directory's metadata; each call plans afresh.

    Raises:
        IoError: the directory does not exist or cannot be read.
        InvalidData: it is not a Paimon table directory.
        ValueError: a URL scheme this build does not read.
    """

    def __init__(self, path_or_url: str | os.PathLike[str]) -> None:
        self._raw = _lakecore.RawTable(os.fspath(path_or_url))

    @property
    def path(self) -> str:
        """The table directory."""
        return self._raw.dir()

    def __repr__(self) -> str:
        return f"lakecore.Table({self.path!r})"

    def plan(
        self,
        filter: str | None = None,
        *,
        snapshot: int | None = None,
        tag: str | None = None,
        as_of: int | None = None,
        partitions: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
        columns: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
        buckets: Iterable[int | tuple[int, int | None]] | None = None,
        rows: Iterable[tuple[int, int]] | range | None = None,
        sidecars: bool = True,
    ) -> pa.Table:
        """Plans a scan: the live data files that can match, one row per file.

        Args:
            filter: comparisons (``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``), ``IN (..)``,
                ``IS [NOT] NULL`` joined by ``AND``/``OR`` with parentheses, e.g.
                ``"dt >= '2024-01-02' AND hr IN (3, 4)"``. Exact on partition keys; on other
                columns, files whose statistics rule the filter out are dropped.
            snapshot: snapshot id (default: the latest). ``tag`` (a tag name) and ``as_of``
                (milliseconds since the epoch) choose it otherwise; give at most one.
            partitions: ``{key: value}`` equalities on partition keys (``None`` = null).
            columns: ``{column: value}`` equalities on other columns (bucket-key pruning and
                value statistics, as the Paimon clients plan).
            buckets: bucket numbers, or ``(bucket, total_buckets)`` pairs.
            rows: inclusive row-ID ranges ``[(first, last), ...]`` or a ``range`` (tables
                with row tracking).
            sidecars: read manifests through their sidecars (``False``: in full).

        Returns:
            A ``pyarrow.Table`` sorted by (partition, bucket, file name) with columns
            ``file_name``, ``path``, ``partition`` (a struct typed from the table schema),
            ``bucket``, ``total_buckets``, ``row_count``, ``file_size``, ``first_row_id``,
            ``min_sequence_number``, ``max_sequence_number``, ``schema_id``, ``level``,
            ``creation_time``, ``delete_row_count``, ``file_source``, ``external_path``,
            ``write_cols``, ``extra_files``. The schema metadata holds ``snapshot`` (empty for
            a table without snapshots) and the read statistics (``stats.*``).

        Raises:
            InvalidData: a manifest, manifest list, snapshot or schema is invalid
                (``kind``, ``offset``, ``path`` say where).
            IoError: a metadata file cannot be read.
            ValueError: a query the table does not accept (unknown key, bad filter).
        """
        return self._plan(filter, snapshot=snapshot, tag=tag, as_of=as_of,
                          partitions=partitions, columns=columns, buckets=buckets,
                          rows=rows, sidecars=sidecars)[0]

    def _plan(self, filter: str | None, splits: bool = False,
              **query: Any) -> tuple[pa.Table, Any]:
        """:meth:`plan`'s table and, with ``splits``, the raw split tuples of one planning;
        ``query`` holds :meth:`plan`'s keyword arguments (an unknown one is a ``TypeError``)."""
        known = {"snapshot", "tag", "as_of", "partitions", "columns", "buckets", "rows",
                 "sidecars"}
        unknown = sorted(set(query) - known)
        if unknown:
            raise TypeError(f"plan() got unexpected keyword arguments: {', '.join(unknown)}")
        got = self._raw.plan(
            snapshot=query.get("snapshot"),
            tag=query.get("tag"),
            as_of=query.get("as_of"),
            filter=filter,
            partitions=_pairs(query.get("partitions")),
            columns=_pairs(query.get("columns"), "columns"),
            buckets=_buckets(query.get("buckets")),
            rows=_rows(query.get("rows")),
            sidecars=query.get("sidecars", True),
            splits=splits,
        )
        snapshot_id, stats, exported = got[0], got[1], got[2]
        # Record batches through the Arrow C data interface: the buffers arrow-rs built,
        # owned by pyarrow from here on (no copy).
        batches = [pa.RecordBatch._import_from_c_capsule(s, a) for s, a in exported]
        metadata = {"snapshot": "" if snapshot_id is None else str(snapshot_id)}
        metadata.update({f"stats.{k}": str(v) for k, v in stats.items()})
        table = pa.Table.from_batches(batches).replace_schema_metadata(metadata)
        return table, (got[3] if splits else None)

    def splits(self, filter: str | None = None, **kwargs: Any) -> list[Split]:
        """:meth:`plan` as Paimon's splits (per partition and bucket, packed up to the table's
        ``source.split.target-size`` as the clients pack them, formed by the
        library), in the shape of pypaimon's ``Split``: each file dict has the plan table's
        columns and ``deletion_file`` (``{path, offset, length, cardinality}`` or ``None``:
        its deletion vector in the snapshot's index manifest); ``merge_groups`` are the
        data-evolution merge groups. Takes :meth:`plan`'s arguments."""
        table, grouped = self._plan(filter, splits=True, **kwargs)
        rows = table.to_pylist()
        out: list[Split] = []
        for bucket, total, row_count, merged, groups, index, deletions in grouped:
            files = []
            for i, d in zip(index, deletions):
                f = dict(rows[i])
                f["deletion_file"] = None if d is None else {
                    "path": d[0], "offset": d[1], "length": d[2], "cardinality": d[3]}
                files.append(f)
            partition = dict(files[0]["partition"]) if files else {}
            out.append(Split(partition, bucket, total, row_count, files,
                             merged_row_count=merged, merge_groups=list(groups)))
        return out

    def read_blob(
        self,
        column: str | None = None,
        *,
        rows: Iterable[tuple[int, int]] | range | None = None,
        snapshot: int | None = None,
        tag: str | None = None,
        as_of: int | None = None,
        filter: str | None = None,
        partitions: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
        buckets: Iterable[int | tuple[int, int | None]] | None = None,
        strict: bool = False,
        copy: bool = False,
        descriptors: str = "bytes",
    ) -> pa.Table:
        """Reads a BLOB column of a data-evolution table (row tracking on), merging the
        layers of partial updates as the Paimon clients do.

        A descriptor-mode field (table option ``blob-descriptor-field``) is read from the
        Parquet data files that carry it (the newest file that wrote the field, per row-ID
        group, as the clients' data-evolution merge does); its values are the serialized
        ``BlobDescriptor`` bytes, copied, and ``_SEQUENCE_NUMBER`` is the providing file's.

        Args:
            column: the BLOB column (default: the table's only one in ``.blob`` files, or its
                only descriptor field when it has no other).
            rows: inclusive row-ID ranges (or a ``range``); default: every row.
            snapshot, tag, as_of, filter, partitions, buckets: as in :meth:`plan`.
            strict: a placeholder no older layer resolves is an error instead of NULL.
            copy: read the values into memory instead of referencing the mapped files.
            descriptors: for a descriptor field: ``"bytes"`` (the descriptor bytes as
                stored), ``"resolve"`` (the payloads the descriptors point at, read through
                the table's storage) or ``"decode"`` (the column becomes a struct of
                ``uri`` string, ``offset`` and ``length`` int64). Other columns take only
                ``"bytes"``.

        Returns:
            A ``pyarrow.Table`` with ``_ROW_ID`` (int64), the column (``binary_view``) and
            ``_SEQUENCE_NUMBER`` (int64, the winning ``.blob`` file's sequence number, -1 for
            a row no layer holds), in row-ID order. Values longer than 12 bytes are views
            into the ``.blob`` files, memory-mapped read-only and kept mapped as long as any
            array references them: no copy. Where a file cannot be mapped, it is read. For
            a table in an object store, each ``.blob`` file's index (its tail) and then only
            the payloads of the selected rows are fetched (ranged GETs, close ranges merged),
            and the values are held in buffers of their own.

        Raises:
            InvalidData: a ``.blob`` file is invalid or disagrees with its manifest entry,
                or the files do not form valid bunches.
            IoError: a file cannot be opened.
            ValueError: no such BLOB column (neither in ``.blob`` files nor a descriptor
                field), a table without data evolution, or ``descriptors`` given for a
                column in ``.blob`` files.
            InvalidData: also a value of a descriptor field that is not a descriptor, or a
                descriptor pointing outside its file.
        """
        if descriptors not in ("bytes", "resolve", "decode"):
            raise ValueError(
                f"descriptors={descriptors!r}: expected 'bytes', 'resolve' or 'decode'")
        (snapshot_id, name, n, row_ids, seqs, validity, views, files) = self._raw.read_blob(
            column=column,
            snapshot=snapshot,
            tag=tag,
            as_of=as_of,
            filter=filter,
            partitions=_pairs(partitions),
            buckets=_buckets(buckets),
            rows=_rows(rows),
            strict=strict,
            descriptors=descriptors,
        )
        # Local tables: (path, base) per buffer, mapped here; remote ones: the fetched
        # values, lent by the extension.
        data = [_file_buffer(f[0], f[1], copy) if len(f) == 2 else _buffer(f) for f in files]
        values = pa.Array.from_buffers(
            pa.binary_view(),
            n,
            [_buffer(validity), _buffer(views), *data],
        )
        if descriptors == "decode":
            values = _decode_descriptors(values, name)
        metadata = {"snapshot": "" if snapshot_id is None else str(snapshot_id)}
        return pa.Table.from_arrays(
            [
                pa.Array.from_buffers(pa.int64(), n, [None, _buffer(row_ids)]),
                values,
                pa.Array.from_buffers(pa.int64(), n, [None, _buffer(seqs)]),
            ],
            names=["_ROW_ID", name, "_SEQUENCE_NUMBER"],
            metadata=metadata,
        )


_DESCRIPTOR_MAGIC = 0x424C4F4244455343  # "BLOBDESC", little-endian on the wire


def _decode_descriptors(values: pa.Array, column: str) -> pa.Array:
    """Serialized BlobDescriptors (v1: ``01 | uri_len i32 | uri | offset i64 | length i64``;
    v2: ``02 | magic i64 | ...``, little-endian) as a struct array of uri, offset, length."""
    uris, offsets, lengths, mask = [], [], [], []
    for i, v in enumerate(values.to_pylist()):
        mask.append(v is None)
        if v is None:
            uris.append(None)
            offsets.append(None)
            lengths.append(None)
            continue
        try:
            version = v[0]
            at = 1
            if version == 2:
                (magic,) = struct.unpack_from("<q", v, at)
                if magic != _DESCRIPTOR_MAGIC:
                    raise ValueError("bad magic")
                at += 8
            elif version != 1:
                raise ValueError(f"version {version}")
            (uri_len,) = struct.unpack_from("<i", v, at)
            at += 4
            if uri_len < 0 or at + uri_len + 16 != len(v):
                raise ValueError(f"uri length {uri_len} in {len(v)} bytes")
            uri = v[at:at + uri_len].decode("utf-8")
            offset, length = struct.unpack_from("<qq", v, at + uri_len)
        except (ValueError, IndexError, struct.error, UnicodeDecodeError) as e:
            raise InvalidData(f"column {column}: value {i} is not a BlobDescriptor: {e}",
                              kind="descriptor") from None
        uris.append(uri)
        offsets.append(offset)
        lengths.append(length)
    return pa.StructArray.from_arrays(
        [pa.array(uris, pa.string()), pa.array(offsets, pa.int64()),
         pa.array(lengths, pa.int64())],
        names=["uri", "offset", "length"],
        mask=pa.array(mask, pa.bool_()),
    )


def _file_buffer(path: str, base: int, copy: bool) -> pa.Buffer:
    """File ``path`` from byte ``base`` as a pyarrow buffer: a read-only memory map (the
    buffer keeps the ``mmap`` object, and so the mapping, alive), or the bytes read when
    ``copy`` is set or the file cannot be mapped."""
    with open(path, "rb") as f:
        if not copy:
            try:
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):
                pass
            else:
                buf = pa.py_buffer(mapped)
                return buf.slice(base) if base else buf
        f.seek(base)
        return pa.py_buffer(f.read())


class Block(NamedTuple):
    """A manifest block a scan must read (see :meth:`Sidecar.select`)."""

    id: int
    offset: int
    length: int
    first_record: int
    record_count: int


class Sidecar:
    """A Paimon manifest sidecar (``PMSC``): validated on construction (checksums and
    structure), then queried for the manifest blocks a scan must read.

    Raises:
        InvalidData: the bytes are not a valid sidecar (``kind`` and ``offset`` say where).
    """

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self._raw = _lakecore.RawSidecar(bytes(data))
        (self.layout, self.manifest_length, self.entry_count, self.block_count,
         self.partition_count) = self._raw.info()

    def __repr__(self) -> str:
        return (f"lakecore.Sidecar(layout={self.layout!r}, blocks={self.block_count}, "
                f"entries={self.entry_count}, partitions={self.partition_count})")

    def partitions(self) -> list[bytes]:
        """The partition dictionary: each tuple's ``_PARTITION`` bytes, by dictionary ID."""
        return self._raw.partitions()

    def select(
        self,
        rows: Iterable[tuple[int, int]] | range | None = None,
        buckets: Iterable[int | tuple[int, int | None]] | None = None,
        partitions: Iterable[bytes] | None = None,
    ) -> list[Block]:
        """The blocks that can hold matching entries, in file order.

        Args:
            rows: inclusive row-ID ranges, or a ``range``.
            buckets: bucket numbers, or ``(bucket, total_buckets)`` pairs.
            partitions: the ``_PARTITION`` tuples to keep (as :meth:`partitions` returns
                them).

        A block is kept when it may match every given dimension; dimensions a block does
        not record keep it.
        """
        keep = None if partitions is None else [bytes(p) for p in partitions]
        return [Block(*b) for b in self._raw.select(
            rows=_rows(rows), buckets=_buckets(buckets), partitions=keep)]
