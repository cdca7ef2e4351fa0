"""Mini-batches of small graphs, and stratified k-fold splits for graph classification.

:class:`GraphDataLoader` iterates over a dataset whose items are ``(graph, label)`` and yields
``(nw.batch(graphs), labels)`` with ``labels`` a tensor of the active backend. Shuffling draws a new
order every epoch from one NumPy generator seeded once, so a run is reproducible with ``seed=`` and
epochs still differ.

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
from typing import Any, Iterator

import numpy as np

from nodeweave.data.dataset import Subset, to_tensor

__all__ = ["GraphDataLoader", "kfold_split", "graph_labels_of"]


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
        raise ValueError(f"kfold_split needs one integer class label per item, got an array of shape "
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
            raise TypeError(f"kfold_split: {name} must be an int, got {type(v).__name__}")
    if k < 2:
        raise ValueError(f"kfold_split: k must be at least 2, got {k}")
    if not 0 <= fold < k:
        raise ValueError(f"kfold_split: fold must be in 0..{k - 1}, got {fold}")
    labels = graph_labels_of(dataset)
    if len(labels) < k:
        raise ValueError(f"kfold_split: {len(labels)} items cannot be split into k={k} folds")
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
    batch_size : int
    shuffle : bool
        A new random order every epoch.
    drop_last : bool
        Skip the last batch when it is smaller than ``batch_size``.
    seed : int, optional
        Seed of the shuffling generator (None: fresh entropy).
    """

    def __init__(self, dataset: Any, batch_size: int = 1, shuffle: bool = False, drop_last: bool = False,
                 seed: int | None = None) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"GraphDataLoader: batch_size must be a positive int, got {batch_size!r}")
        self.dataset, self.batch_size = dataset, int(batch_size)
        self.shuffle, self.drop_last = bool(shuffle), bool(drop_last)
        self._rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        import nodeweave as nw

        n = len(self.dataset)
        order = self._rng.permutation(n) if self.shuffle else np.arange(n)
        for b in range(len(self)):
            idx = order[b * self.batch_size:(b + 1) * self.batch_size]
            items = [self.dataset[int(i)] for i in idx]
            graphs = [it[0] for it in items]
            labels = np.stack([np.asarray(_label_value(it[1])) for it in items])
            yield nw.batch(graphs), to_tensor(labels)
