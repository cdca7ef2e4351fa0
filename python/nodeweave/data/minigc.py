"""Synthetic graph classification with eight graph families (DGL's ``MiniGCDataset``): cycles,
stars, wheels, lollipops, hypercubes, grids, cliques and circular ladders, labelled 0 to 7 in that
order. Nothing is downloaded; the graphs are generated from ``seed``.

Every graph has ``num_v`` nodes drawn uniformly from ``[min_num_v, max_num_v)`` (a hypercube takes
the largest power of two not above it, a grid ``rows * (num_v // rows)`` nodes for a random
``rows >= 2``, a circular ladder ``2 * (num_v // 2)``), both directions of every undirected edge and a
self-loop on every node. The first seven families get ``num_graphs // 8`` graphs each, circular
ladders the rest, as in DGL.

>>> from nodeweave.data import MiniGCDataset
>>> ds = MiniGCDataset(16, 10, 20)
>>> len(ds), ds.num_classes, sorted(set(int(ds[i][1]) for i in range(16)))
(16, 8, [0, 1, 2, 3, 4, 5, 6, 7])
>>> g, label = ds[0]          # a cycle: two neighbours and a self-loop per node
>>> int(label), bool((g.in_degrees() == 3).all())
(0, True)
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from nodeweave.data.dataset import Dataset, to_tensor
from nodeweave.sampling._seed import numpy_generator
from nodeweave import errors as nwerr

__all__ = ["MiniGCDataset"]


def _cycle(n: int, rng: np.random.Generator) -> tuple[int, list]:
    return n, [(i, (i + 1) % n) for i in range(n)]


def _star(n: int, rng: np.random.Generator) -> tuple[int, list]:
    return n, [(0, i) for i in range(1, n)]


def _wheel(n: int, rng: np.random.Generator) -> tuple[int, list]:
    rim = n - 1  # a hub (node 0) joined to a cycle of the other nodes
    return n, [(0, i) for i in range(1, n)] + [(1 + i, 1 + (i + 1) % rim) for i in range(rim)]


def _lollipop(n: int, rng: np.random.Generator) -> tuple[int, list]:
    path = int(rng.integers(2, n // 2))        # a clique of n - path nodes with a path hanging off it
    m = n - path
    return n, _clique_edges(m) + [(i, i + 1) for i in range(m - 1, n - 1)]


def _hypercube(n: int, rng: np.random.Generator) -> tuple[int, list]:
    d = int(np.floor(np.log2(n)))
    return 1 << d, [(v, v ^ (1 << b)) for v in range(1 << d) for b in range(d) if v < v ^ (1 << b)]


def _grid(n: int, rng: np.random.Generator) -> tuple[int, list]:
    rows = int(rng.integers(2, n // 2))
    cols = n // rows
    edges = [(r * cols + c, r * cols + c + 1) for r in range(rows) for c in range(cols - 1)]
    edges += [(r * cols + c, (r + 1) * cols + c) for r in range(rows - 1) for c in range(cols)]
    return rows * cols, edges


def _clique_edges(n: int) -> list:
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def _clique(n: int, rng: np.random.Generator) -> tuple[int, list]:
    return n, _clique_edges(n)


def _circular_ladder(n: int, rng: np.random.Generator) -> tuple[int, list]:
    k = n // 2                                  # two k-cycles with rungs between them
    edges = [(i, (i + 1) % k) for i in range(k)] + [(k + i, k + (i + 1) % k) for i in range(k)]
    return 2 * k, edges + [(i, k + i) for i in range(k)]


_FAMILIES = (_cycle, _star, _wheel, _lollipop, _hypercube, _grid, _clique, _circular_ladder)


class MiniGCDataset(Dataset):
    """``num_graphs`` graphs of the eight families (see the module docstring); ``ds[i]`` is
    ``(graph, label)`` with an int64 label tensor.

    Parameters
    ----------
    num_graphs : int
        Number of graphs (with fewer than 8, all are circular ladders).
    min_num_v, max_num_v : int
        Node counts are drawn from ``[min_num_v, max_num_v)``; ``min_num_v >= 6`` (the smallest
        size every family can take).
    seed : int
        Seed of the generator (default 0: the same graphs every time).
    transform : callable, optional
        Applied to the graph on every access.
    """

    name = "minigc"

    def __init__(self, num_graphs: int, min_num_v: int, max_num_v: int, seed: int = 0, *,
                 transform: Callable[[Any], Any] | None = None) -> None:
        for arg, v, low in (("num_graphs", num_graphs, 1), ("min_num_v", min_num_v, 6)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise nwerr.ValueError(f"MiniGCDataset: {arg} must be an int >= {low}, got {v!r}")
        if isinstance(max_num_v, bool) or not isinstance(max_num_v, (int, np.integer)) or max_num_v <= min_num_v:
            raise nwerr.ValueError(f"MiniGCDataset: max_num_v must be an int above min_num_v ({min_num_v}), got "
                                   f"{max_num_v!r}")
        self.num_graphs, self.min_num_v, self.max_num_v, self.seed = int(num_graphs), int(min_num_v), \
            int(max_num_v), seed
        super().__init__(transform=transform)

    def _load(self) -> None:
        import nodeweave as nw

        rng = numpy_generator(self.seed)
        each = self.num_graphs // 8
        counts = [each] * 7 + [self.num_graphs - 7 * each]
        self.graphs, labels = [], []
        for label, (family, count) in enumerate(zip(_FAMILIES, counts)):
            for _ in range(count):
                n, edges = family(int(rng.integers(self.min_num_v, self.max_num_v)), rng)
                e = np.asarray(edges, np.int64).reshape(-1, 2)
                src = np.concatenate([e[:, 0], e[:, 1], np.arange(n)])
                dst = np.concatenate([e[:, 1], e[:, 0], np.arange(n)])
                self.graphs.append(nw.graph((src, dst), num_nodes=n))
                labels.append(label)
        self.labels = to_tensor(np.asarray(labels, np.int64))

    @property
    def num_classes(self) -> int:
        """The number of graph families, 8."""
        return 8

    def __len__(self) -> int:
        return len(self.graphs)

    def __getitem__(self, idx: Any) -> tuple[Any, Any]:
        if isinstance(idx, bool) or not isinstance(idx, (int, np.integer)):
            raise nwerr.TypeError(f"MiniGCDataset index must be an int, got {type(idx).__name__}")
        n = len(self)
        if not -n <= idx < n:
            raise nwerr.IndexError(f"MiniGCDataset: index {idx} out of range for {n} graphs")
        return self._transformed(self.graphs[int(idx) % n]), self.labels[int(idx) % n]
