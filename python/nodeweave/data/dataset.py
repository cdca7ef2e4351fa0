"""The dataset base class: raw files located (or downloaded) on construction, then parsed.

Every dataset takes the same keyword arguments:

``raw_dir``
    Data directory (default ``$NODEWEAVE_DATA_DIR``, else ``~/.nodeweave/data``); see
    :mod:`nodeweave.data.download` for the layout inside.
``download``
    Fetch missing files (default True). With False a missing file raises FileNotFoundError naming
    the file and its download URL.
``mirror``
    Base URL serving the data-directory layout, used instead of the canonical sources (default
    ``$NODEWEAVE_DATA_MIRROR``).
``verify``
    Refuse to download a file whose sha256 is not recorded (default True).
``progress``
    Show download progress bars: True, False, or None for "on a terminal only" (default).

Nothing is cached besides the raw files: parsing is fast enough to redo on every construction, and
no processed file can go stale or be written into a read-only shared directory.

>>> from nodeweave.data import Dataset
>>> class Tiny(Dataset):
...     files = ()
...     def _load(self):
...         self.values = [3, 1, 2]
...     def __len__(self):
...         return len(self.values)
...     def __getitem__(self, i):
...         return self.values[i]
>>> ds = Tiny(raw_dir="/nonexistent")
>>> len(ds), ds[2]
(3, 2)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from nodeweave.data.download import RemoteFile, data_dir, ensure_files, file_sha256, locate
from nodeweave.data.errors import ChecksumError

__all__ = ["Dataset", "Subset", "to_tensor"]


def to_tensor(arr: np.ndarray) -> Any:
    """A tensor of the active backend holding ``arr`` (dtype kept), for graph features and labels."""
    from nodeweave import backend
    return backend.current().from_numpy(np.ascontiguousarray(arr))


class Dataset:
    """Base of all datasets. Subclasses set :attr:`files` and implement ``_load``, ``__len__`` and
    ``__getitem__``."""

    #: The raw files the dataset needs (class attribute, or set in ``__init__`` before ``super().__init__``).
    files: Sequence[RemoteFile] = ()
    #: Short dataset name, for messages and ``repr``.
    name: str = ""

    def __init__(self, raw_dir: str | os.PathLike | None = None, *, download: bool = True,
                 mirror: str | None = None, verify: bool = True, progress: bool | None = None) -> None:
        self.raw_dir: Path = data_dir(raw_dir)
        ensure_files(self.files, self.raw_dir, download=download, mirror=mirror, verify=verify,
                     progress=progress, owner=type(self).__name__)
        self._load()

    def _load(self) -> None:
        raise NotImplementedError

    def raw_path(self, rel: str) -> Path:
        """The local path of the raw file ``rel`` (its ``.gz`` stand-in where that is what exists)."""
        for f in self.files:
            if f.path == rel:
                p = locate(self.raw_dir, f)
                if p is None:
                    raise FileNotFoundError(f"{type(self).__name__}: {self.raw_dir / rel} is missing")
                return p
        raise KeyError(f"{type(self).__name__} has no raw file {rel!r}")

    def verify_files(self) -> None:
        """Checks every raw file against its recorded sha256 (files without one are skipped).

        Raises :class:`~nodeweave.data.errors.ChecksumError` for the first mismatch.
        """
        for f in self.files:
            if f.sha256 is None:
                continue
            p = self.raw_path(f.path)
            actual = file_sha256(p, gunzip=p.name.endswith(".gz") and not f.path.endswith(".gz"))
            if actual != f.sha256:
                raise ChecksumError(p, f.source(), f.sha256, actual)

    def __len__(self) -> int:
        raise NotImplementedError

    def __getitem__(self, idx: int) -> Any:
        raise NotImplementedError

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, num_items={len(self)}, raw_dir={str(self.raw_dir)!r})"


def _single_index(idx: Any, owner: str) -> None:
    """Single-graph datasets accept index 0 (and -1) only."""
    if isinstance(idx, bool) or not isinstance(idx, (int, np.integer)):
        raise TypeError(f"{owner} index must be an int, got {type(idx).__name__}")
    if idx not in (0, -1):
        raise IndexError(f"{owner} holds one graph; index {idx} is out of range")


class Subset:
    """The items ``indices`` of ``dataset`` (``len``, indexing, ``num_classes`` passed through).

    >>> from nodeweave.data import Subset
    >>> s = Subset(["a", "b", "c", "d"], [3, 1])
    >>> len(s), s[0], list(s)
    (2, 'd', ['d', 'b'])
    """

    def __init__(self, dataset: Any, indices: Sequence[int] | np.ndarray) -> None:
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        n = len(dataset)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            bad = int(idx[(idx < 0) | (idx >= n)][0])
            raise IndexError(f"Subset: index {bad} is out of range for a dataset of {n} items")
        self.dataset, self.indices = dataset, idx

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, i: int) -> Any:
        return self.dataset[int(self.indices[i])]

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    @property
    def num_classes(self) -> int:
        """The underlying dataset's ``num_classes``."""
        return self.dataset.num_classes

    def __repr__(self) -> str:
        return f"Subset({len(self)} of {len(self.dataset)} items)"
