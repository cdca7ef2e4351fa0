"""Exceptions raised by the dataset loaders.

Every problem with a data file names the file, and for text formats the line (``path:line: message``,
as compilers do), so that a corrupt download or a hand-edited file can be found at once.

>>> from nodeweave.data.errors import DataFormatError
>>> e = DataFormatError("tu/MUTAG/MUTAG_A.txt", "expected 2 integers, got 3", line=12)
>>> str(e)
'tu/MUTAG/MUTAG_A.txt:12: expected 2 integers, got 3'
>>> isinstance(e, ValueError), e.line
(True, 12)
"""

from __future__ import annotations

import os
from typing import Any
from nodeweave import errors as nwerr

__all__ = ["DataFormatError", "ChecksumError", "ChecksumUnknownError", "DownloadError"]


class DataFormatError(nwerr.ValueError):
    """A data file does not have the expected format (malformed line, truncated file, bad value).

    Attributes
    ----------
    path : str
        The file.
    line : int or None
        1-based line number for text formats, else None.
    """

    def __init__(self, path: Any, message: str, line: int | None = None, column: int | None = None) -> None:
        self.path = os.fspath(path)
        self.line = line
        self.column = column
        where = self.path
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column}"
        super().__init__(f"{where}: {message}")


class ChecksumError(nwerr.ValueError):
    """A downloaded file's sha256 differs from the recorded one (the file was deleted)."""

    def __init__(self, path: Any, url: str, expected: str, actual: str) -> None:
        self.path, self.url, self.expected, self.actual = os.fspath(path), url, expected, actual
        super().__init__(f"sha256 mismatch for {self.path} (downloaded from {url}): expected {expected}, "
                         f"got {actual}; the downloaded file was deleted")


class ChecksumUnknownError(nwerr.RuntimeError):
    """A missing file has no recorded sha256, so a download could not be verified."""


class DownloadError(nwerr.OSError):
    """Fetching a URL failed (HTTP error, unreachable host, archive without the expected member).

    ``status`` is the HTTP status code when the server answered with an error, else None.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
