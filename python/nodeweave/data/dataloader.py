"""Mini-batches of small graphs, and stratified k-fold splits for graph classification.

:class:`GraphDataLoader` iterates over a dataset whose items are ``(graph, label)`` and yields
``(nw.batch(graphs), labels)`` with ``labels`` a tensor of the active backend (``collate_fn=``
makes batches of any other items, as ``torch.utils.data.DataLoader``'s). Shuffling draws a new
order every epoch from one NumPy generator seeded once, so a run is reproducible with ``seed=`` and
epochs still differ. ``sampler=`` gives the order instead (any iterable of indices, e.g. a
``torch.utils.data`` sampler), and ``pin_memory=True`` puts batches in page-locked memory for
fast copies to a GPU.

:func:`kfold_split` gives fold ``fold`` of a stratified ``k``-fold cross-validation: within every
class the items are shuffled (``seed``) and dealt round-robin to the folds, continuing the deal
across classes, so each fold holds each class in proportion and fold sizes differ by at most one.

>>> from nodeweave.data import TUDataset, GraphDataLoader, kfold_split
>>> ds = TUDataset("MUTAG")
>>> train, test = kfold_split(ds, k=10, fold=0, seed=0)
>>> len(train), len(test)
(169, 19)
>>> loader = GraphDataLoader(train, batch_size=32, shuffle=True, seed=0)
>>> bg, labels = next(iter(loader))
>>> bg.batch_size, tuple(labels.shape), len(loader)
(32, (32,), 6)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sized
from typing import Any, Callable, Iterator

import numpy as np

from nodeweave.data.dataset import Subset, to_tensor
from nodeweave.transforms._checks import flag
from nodeweave import errors as nwerr

__all__ = ["GraphDataLoader", "kfold_split", "graph_labels_of", "pinning_unavailable", "pin_tensor"]


def graph_labels_of(dataset: Any) -> np.ndarray:
    """int64 labels of a ``(graph, label)`` dataset: its ``graph_labels`` attribute (a
    :class:`Subset` maps through its indices), else read item by item."""
    if isinstance(dataset, Subset):
        return graph_labels_of(dataset.dataset)[dataset.indices]
    labels = getattr(dataset, "graph_labels", None)
    if labels is None:
        labels = [_label_value(dataset[i][1]) for i in range(len(dataset))]
    arr = np.asarray(labels)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise nwerr.ValueError(f"kfold_split needs one integer class label per item, got an array of shape "
                               f"{arr.shape} and dtype {arr.dtype}")
    return arr.astype(np.int64)


def _label_value(label: Any) -> Any:
    from nodeweave import backend
    B = backend.of(label)
    return B.to_numpy(label) if B is not None else label


def kfold_split(dataset: Any, k: int = 10, fold: int = 0, seed: int | None = 0) -> tuple[Subset, Subset]:
    """``(train, test)`` subsets for fold ``fold`` of a stratified ``k``-fold split of ``dataset``.

    The ``k`` test sets of ``fold = 0..k-1`` (same ``seed``) partition the dataset.

    Raises
    ------
    ValueError
        ``k < 2``, ``fold`` outside ``0..k-1``, or fewer items than folds.
    """
    for name, v in (("k", k), ("fold", fold)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise nwerr.TypeError(f"kfold_split: {name} must be an int, got {type(v).__name__}")
    if k < 2:
        raise nwerr.ValueError(f"kfold_split: k must be at least 2, got {k}")
    if not 0 <= fold < k:
        raise nwerr.ValueError(f"kfold_split: fold must be in 0..{k - 1}, got {fold}")
    labels = graph_labels_of(dataset)
    if len(labels) < k:
        raise nwerr.ValueError(f"kfold_split: {len(labels)} items cannot be split into k={k} folds")
    rng = np.random.default_rng(seed)
    fold_of = np.empty(len(labels), dtype=np.int64)
    dealt = 0
    for c in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == c))
        fold_of[members] = (dealt + np.arange(len(members))) % k
        dealt += len(members)
    test = np.flatnonzero(fold_of == fold)
    train = np.flatnonzero(fold_of != fold)
    return Subset(dataset, train), Subset(dataset, test)


class GraphDataLoader:
    """Batches of ``(graph, label)`` items as ``(nw.batch(graphs), labels_tensor)``.

    Parameters
    ----------
    dataset
        Anything with ``len`` and integer indexing returning ``(graph, label)``.
    batch_size : int or None
        Graphs per batch; None yields the items one by one, unbatched, each label a 0-d tensor
        (``torch.utils.data.DataLoader``'s ``batch_size=None``).
    shuffle : bool
        A new random order every epoch.
    drop_last : bool
        Skip the last batch when it is smaller than ``batch_size``.
    seed : int, optional
        Seed of the shuffling generator (None: fresh entropy).
    sampler : iterable of int, optional
        The order of the items instead of ``0..len-1`` or ``shuffle``: any iterable of dataset
        indices, iterated afresh every epoch, e.g. ``torch.utils.data.SubsetRandomSampler`` (as
        ``torch.utils.data.DataLoader``'s ``sampler=``, exclusive with ``shuffle=True``).
        ``len(loader)`` needs ``len(sampler)``.
    pin_memory : bool
        Put every batch's labels and features in page-locked host memory, from which copies to a
        CUDA device are faster and can be asynchronous (default False). That memory comes from
        PyTorch: on the pytorch backend with a CUDA device; elsewhere (no CUDA device, or the
        native backend, whose engine has no page-locked allocator) the batches stay in ordinary
        memory and a warning says so once per loader.
    collate_fn : callable, optional
        ``collate_fn(list of items) -> batch``, replacing the ``(graph, label)`` batching: the
        loader then takes items of any kind (as DGL's ``GraphDataLoader``, which hands it to
        ``torch.utils.data.DataLoader``). With ``pin_memory``, the tensors and graphs the batch
        holds (also inside tuples, lists and dicts) are pinned.

    >>> from nodeweave.data import TUDataset, GraphDataLoader
    >>> ds = TUDataset("MUTAG")
    >>> loader = GraphDataLoader(ds, batch_size=4, sampler=[5, 0, 7, 2, 9])
    >>> [int(bg.batch_size) for bg, _ in loader], len(loader)
    ([4, 1], 2)
    >>> [len(b) for b in GraphDataLoader(["a", "b", "c"], batch_size=2, collate_fn="".join)]
    [2, 1]
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool = False, drop_last: bool = False,
                 seed: int | None = None, sampler: Iterable[int] | None = None, pin_memory: bool = False,
                 collate_fn: Callable[[list], Any] | None = None) -> None:
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer))
                                       or batch_size < 1):
            raise nwerr.ValueError(f"GraphDataLoader: batch_size must be a positive int or None, got {batch_size!r}")
        if sampler is not None:
            if isinstance(sampler, (str, bytes, dict)) or not isinstance(sampler, Iterable):
                raise nwerr.TypeError(f"GraphDataLoader: sampler must be an iterable of dataset indices, got "
                                      f"{type(sampler).__name__}")
            if shuffle:
                raise nwerr.ValueError("GraphDataLoader: sampler and shuffle=True both set the order; give one")
        if collate_fn is not None and not callable(collate_fn):
            raise nwerr.TypeError(f"GraphDataLoader: collate_fn must be a callable list of items -> batch, got "
                                  f"{type(collate_fn).__name__}")
        self.collate_fn = collate_fn
        self.dataset, self.batch_size = dataset, None if batch_size is None else int(batch_size)
        self.shuffle, self.drop_last = bool(shuffle), bool(drop_last)
        self.sampler, self.pin_memory = sampler, flag(pin_memory, "pin_memory", "GraphDataLoader")
        self._rng = np.random.default_rng(seed)
        self._warned = False

    def __len__(self) -> int:
        if self.sampler is None:
            n = len(self.dataset)
        elif isinstance(self.sampler, Sized):
            n = len(self.sampler)
        else:
            raise nwerr.TypeError(f"GraphDataLoader: len() needs a sampler with a length, got "
                                  f"{type(self.sampler).__name__}")
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def _indices(self) -> Iterator[int]:
        if self.sampler is None:
            n = len(self.dataset)
            yield from (self._rng.permutation(n) if self.shuffle else range(n))
            return
        for i in self.sampler:
            idx = _label_value(i)
            if isinstance(idx, np.ndarray):
                if idx.ndim != 0:
                    raise nwerr.TypeError(f"GraphDataLoader: the sampler must yield single indices, got an array of "
                                          f"shape {idx.shape}")
                idx = idx.item()
            if isinstance(idx, (bool, np.bool_)) or not isinstance(idx, (int, np.integer)):
                raise nwerr.TypeError(f"GraphDataLoader: the sampler must yield int indices, got {i!r}")
            yield int(idx)

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        if self.batch_size is None:  # no batching (torch's batch_size=None): one (graph, label) per item
            from nodeweave import backend

            for i in self._indices():
                if self.collate_fn is not None:  # as torch: collate_fn sees each item alone
                    out = self.collate_fn(self.dataset[i])
                else:
                    g, label = self.dataset[i]
                    value = np.array(_label_value(label))  # 0-d stays 0-d (to_tensor would make it 1-d)
                    out = g, backend.current().from_numpy(value)
                yield self._pinned(out) if self.pin_memory else out
            return
        chunk: list[int] = []
        for i in self._indices():
            chunk.append(i)
            if len(chunk) == self.batch_size:
                yield self._collate(chunk)
                chunk = []
        if chunk and not self.drop_last:
            yield self._collate(chunk)

    def _collate(self, idx: list[int]) -> Any:
        import nodeweave as nw

        items = [self.dataset[i] for i in idx]
        if self.collate_fn is not None:
            out = self.collate_fn(items)
        else:
            labels = np.stack([np.asarray(_label_value(it[1])) for it in items])
            out = nw.batch([it[0] for it in items]), to_tensor(labels)
        if self.pin_memory:
            out = self._pinned(out)
        return out

    def _pinned(self, batch: Any) -> Any:
        """``batch`` with its tensors and its graphs' features in page-locked memory, where there is
        a way to."""
        reason = pinning_unavailable()
        if reason is not None:
            if not self._warned:
                self._warned = True
                nwerr.warn(f"GraphDataLoader: pin_memory=True, but {reason}; batches stay in ordinary "
                           "memory", stacklevel=3)
            return batch
        return _pin_all(batch)


def _pin_all(x: Any) -> Any:
    """``x`` with every CPU tensor in it pinned: a tensor, a graph's features (in place), or the
    items of a tuple, list or dict; anything else as it is."""
    from nodeweave import backend
    from nodeweave.graph.heterograph import HeteroGraph

    if isinstance(x, HeteroGraph):
        for views, types in ((x.nodes, x.ntypes), (x.edges, x.canonical_etypes)):
            for t in types:
                frame = views[t].data
                for key in list(frame.keys()):
                    frame[key] = _pin_all(frame[key])
        return x
    if isinstance(x, (tuple, list)):
        return type(x)(_pin_all(v) for v in x)
    if isinstance(x, dict):
        return {k: _pin_all(v) for k, v in x.items()}
    B = backend.of(x)
    if B is not None and B.name == "pytorch" and B.device_str(x) == "cpu":
        return pin_tensor(x)
    return x


def pinning_unavailable() -> str | None:
    """Why batches cannot be put in page-locked memory now, or None when they can: that needs the
    pytorch backend (nodeweave's native engine has no page-locked allocator) and a CUDA device."""
    from nodeweave import backend

    if backend.current().name != "pytorch":
        return "the native backend has no page-locked host memory (use nw.set_backend('pytorch'))"
    import torch

    if not torch.cuda.is_available():
        return "there is no CUDA device"
    return None


def pin_tensor(t: Any) -> Any:
    """``t`` in page-locked memory (a torch tensor on the CPU)."""
    return t.pin_memory()
