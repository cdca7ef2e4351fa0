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
``transform``
    A callable ``graph -> graph`` (e.g. a :mod:`nodeweave.transforms` object) applied to the graph
    on every access, ``ds[i]``, as DGL's ``transform=`` (default None). The stored graph is passed
    in: nodeweave's transforms return new graphs and leave it unchanged, so every access sees the
    same input (a transform that writes into its argument changes the stored graph, as in DGL).

Every dataset also takes ``reverse_edge`` (a bool): for the undirected sets (citation graphs,
graph classification sets, community graphs) True keeps both directions of every edge (the
default, as DGL's) and False each undirected edge once, from its smaller to its larger node id;
for the directed ones (knowledge graphs, AIFB) it is the name every dataset shares for their
``reverse`` / ``insert_reverse`` option: add a reverse edge for every edge.

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

With a transform (here on Cora's graph):

>>> import nodeweave as nw
>>> ds = nw.data.CoraGraphDataset(transform=nw.transforms.AddSelfLoop())
>>> ds[0].num_edges()          # 10556 edges, self-loops of 2708 nodes
13264
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from nodeweave.data.download import RemoteFile, data_dir, ensure_files, file_sha256, locate
from nodeweave.data.errors import ChecksumError
from nodeweave.transforms._checks import flag
from nodeweave import errors as nwerr

__all__ = ["Dataset", "Subset", "to_tensor", "reverse_option", "once_per_pair"]


def to_tensor(arr: np.ndarray) -> Any:
    """A tensor of the active backend holding ``arr`` (dtype kept), for graph features and labels."""
    from nodeweave import backend
    return backend.current().from_numpy(np.ascontiguousarray(arr))


def reverse_option(own: Any, own_name: str, reverse_edge: Any, owner: str, default: bool = True) -> bool:
    """A directed dataset's reverse-edge switch, given as its own option ``own_name`` (DGL's name for
    it) or as ``reverse_edge`` (the name shared by every dataset); None where not given. Giving
    both with different values raises ValueError."""
    given = {n: flag(v, n, owner) for n, v in ((own_name, own), ("reverse_edge", reverse_edge)) if v is not None}
    if len(set(given.values())) > 1:
        raise nwerr.ValueError(f"{owner}: {own_name}={given[own_name]} and reverse_edge={given['reverse_edge']} "
                               "contradict each other (they are the same option); give one")
    return next(iter(given.values()), default)


def once_per_pair(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Mask of the edges to keep so that an undirected edge listed in both directions appears once:
    ``u -> v`` with ``u <= v``, and ``u -> v`` with ``u > v`` only when ``v -> u`` is not listed.

    >>> once_per_pair(np.array([0, 1, 2, 3]), np.array([1, 0, 2, 1])).tolist()
    [True, False, True, True]
    """
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    if len(src) == 0:
        return np.zeros(0, dtype=bool)
    n = int(max(src.max(), dst.max())) + 1
    has_reverse = np.isin(src * n + dst, dst * n + src)
    return (src <= dst) | ~has_reverse


class Dataset:
    """Base of all datasets. Subclasses set :attr:`files` and implement ``_load``, ``__len__`` and
    ``__getitem__``."""

    #: The raw files the dataset needs (class attribute, or set in ``__init__`` before ``super().__init__``).
    files: Sequence[RemoteFile] = ()
    #: Short dataset name, for messages and ``repr``.
    name: str = ""

    def __init__(self, raw_dir: str | os.PathLike | None = None, *, download: bool = True,
                 mirror: str | None = None, verify: bool = True, progress: bool | None = None,
                 transform: Callable[[Any], Any] | None = None) -> None:
        if transform is not None and not callable(transform):
            raise nwerr.TypeError(f"{type(self).__name__}: transform must be a callable graph -> graph or None, "
                                  f"got {type(transform).__name__}")
        self.transform = transform
        self.raw_dir: Path = data_dir(raw_dir)
        ensure_files(self.files, self.raw_dir, download=download, mirror=mirror, verify=verify,
                     progress=progress, owner=type(self).__name__)
        self._load()

    def _load(self) -> None:
        raise nwerr.NotImplementedError

    def _transformed(self, g: Any) -> Any:
        """``g`` passed through :attr:`transform` (itself when there is none): what ``ds[i]`` returns."""
        return g if self.transform is None else self.transform(g)

    def raw_path(self, rel: str) -> Path:
        """The local path of the raw file ``rel`` (its ``.gz`` stand-in where that is what exists)."""
        for f in self.files:
            if f.path == rel:
                p = locate(self.raw_dir, f)
                if p is None:
                    raise nwerr.FileNotFoundError(f"{type(self).__name__}: {self.raw_dir / rel} is missing")
                return p
        raise nwerr.KeyError(f"{type(self).__name__} has no raw file {rel!r}")

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
        raise nwerr.NotImplementedError

    def __getitem__(self, idx: int) -> Any:
        raise nwerr.NotImplementedError

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, num_items={len(self)}, raw_dir={str(self.raw_dir)!r})"


def _single_index(idx: Any, owner: str) -> None:
    """Single-graph datasets accept index 0 (and -1) only."""
    if isinstance(idx, bool) or not isinstance(idx, (int, np.integer)):
        raise nwerr.TypeError(f"{owner} index must be an int, got {type(idx).__name__}")
    if idx not in (0, -1):
        raise nwerr.IndexError(f"{owner} holds one graph; index {idx} is out of range")


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
            raise nwerr.IndexError(f"Subset: index {bad} is out of range for a dataset of {n} items")
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
