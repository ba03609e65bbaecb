"""The exceptions lakecore raises (re-exported by `lakecore`)."""

from __future__ import annotations


class LakecoreError(Exception):
    """Base class of lakecore's errors.

    Attributes:
        kind: what went wrong, a short stable name (e.g. ``"checksum mismatch"``,
            ``"truncated"``, ``"not found"``).
        offset: the byte offset in ``path`` where the problem was found, when known.
        path: the file (or, for a BLOB merge, the bunch) concerned, when known.
    """

    def __init__(self, message: str, *, kind: str | None = None, offset: int | None = None,
                 path: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.offset = offset
        self.path = path


class InvalidData(LakecoreError, ValueError):
    """Bytes or metadata that are not valid: a corrupt sidecar, manifest, snapshot or
    ``.blob`` file, or files that do not form valid BLOB bunches. ``offset`` is the byte
    where the problem was found (``None`` for JSON metadata)."""


class IoError(LakecoreError, OSError):
    """A file could not be opened or read (missing, unreadable). ``kind`` is the operating
    system's error kind (e.g. ``"entity not found"``); ``offset`` is ``None``."""
