"""The graph classification sets with the preprocessing of GIN (Xu et al., "How Powerful are Graph
Neural Networks?", ICLR 2019), DGL's ``GINDataset``, built from the TU Dortmund files that
:class:`~nodeweave.data.TUDataset` reads (the same raw files, checksums and data directory).

GIN's preprocessing, as its reference code (``util.load_data``) applies it:

- graph labels are numbered in order of first appearance (the first graph's label is class 0);
- node labels ("tags") are numbered in order of first appearance over the whole set;
  ``ndata['label']`` holds that number (int64) and ``ndata['attr']`` its one-hot (float32, one
  column per distinct tag); TU node attributes and edge labels are not used;
- ``degree_as_nlabel=True`` uses each node's degree in the undirected graph as its tag instead:
  ``ndata['label']`` is the degree, ``ndata['attr']`` the one-hot of its rank among the distinct
  degrees of the set (sorted);
- edges: both directions of every undirected edge, grouped by source node in file order, and with
  ``self_loop=True`` a self-loop after each node's edges.

Names: ``MUTAG``, ``PTC`` (TU's ``PTC_MR``), ``PROTEINS``, ``NCI1`` and ``NCI109``. GIN's social
sets (``COLLAB``, ``IMDBBINARY``, ``IMDBMULTI``, ``REDDITBINARY``, ``REDDITMULTI5K``) have no
recorded files here. Graphs are in the TU files' order, which is not the order of GIN's own
``dataset.zip`` (DGL's copy): the same index can name a different graph than in DGL.

>>> from nodeweave.data import GINDataset
>>> ds = GINDataset("MUTAG", self_loop=True)
>>> len(ds), ds.num_classes, ds.dim_nfeats
(188, 2, 7)
>>> g, label = ds[0]
>>> g.num_nodes(), g.num_edges(), sorted(g.ndata), int(label)
(17, 55, ['attr', 'label'], 0)
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

from nodeweave.data.dataset import once_per_pair, to_tensor
from nodeweave.data.tu import SHA256, TUDataset, _one_hot
from nodeweave.transforms._checks import flag
from nodeweave import errors as nwerr

__all__ = ["GINDataset"]

#: GIN's name of each set -> the TU set it is built from.
NAMES = {"MUTAG": "MUTAG", "PTC": "PTC_MR", "PTC_MR": "PTC_MR", "PROTEINS": "PROTEINS", "NCI1": "NCI1",
         "NCI109": "NCI109"}
#: GIN's sets whose files nodeweave has no record of.
UNAVAILABLE = ("COLLAB", "IMDBBINARY", "IMDBMULTI", "REDDITBINARY", "REDDITMULTI5K")


def first_appearance(values: np.ndarray) -> tuple[np.ndarray, dict[int, int]]:
    """Each value's number in order of first appearance, and the map ``value -> number``.

    >>> first_appearance(np.array([5, -1, 5, 3]))[0].tolist()
    [0, 1, 0, 2]
    """
    uniq, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(uniq))
    return rank[inverse.ravel()], {int(u): int(r) for u, r in zip(uniq, rank)}


class GINDataset(TUDataset):
    """A TU graph classification set with GIN's preprocessing (see the module docs);
    ``ds[i] -> (graph, label)`` with ``label`` a 0-d int64 tensor, as DGL's.

    Parameters
    ----------
    name : str
        ``'MUTAG'``, ``'PTC'``, ``'PROTEINS'``, ``'NCI1'`` or ``'NCI109'``.
    self_loop : bool
        Add a self-loop to every node.
    degree_as_nlabel : bool
        Node degrees as node labels and features (default False).
    raw_dir, download, mirror, verify, progress, transform
        See :class:`~nodeweave.data.Dataset`.
    reverse_edge : bool
        Both directions of every undirected edge (default True); False: each once, from the
        smaller node id to the larger.

    Attributes
    ----------
    num_classes, gclasses : int
        Number of graph classes.
    nclasses : int
        Number of distinct node labels (tags) in the files.
    dim_nfeats : int
        Width of ``ndata['attr']``.
    labels : tensor
        int64 class of every graph; also :attr:`graph_labels` as a NumPy array.
    glabel_dict, nlabel_dict : dict[int, int]
        Raw graph label / raw node label -> its number.
    N, n, m : int
        Graphs, nodes and edges (self-loops included) in the whole set.
    """

    def __init__(self, name: str, self_loop: bool, degree_as_nlabel: bool = False,
                 raw_dir: str | os.PathLike | None = None, *, download: bool = True, mirror: str | None = None,
                 verify: bool = True, progress: bool | None = None,
                 transform: Callable[[Any], Any] | None = None, reverse_edge: bool = True) -> None:
        if name in UNAVAILABLE:
            raise nwerr.ValueError(f"GINDataset: {name!r} is one of GIN's social sets, whose files nodeweave has no "
                                   f"record of; available: {sorted(NAMES)}")
        if name not in NAMES or NAMES[name] not in SHA256:
            raise nwerr.ValueError(f"GINDataset: name must be one of {sorted(NAMES)}, got {name!r}")
        self.self_loop = flag(self_loop, "self_loop", "GINDataset")
        self.degree_as_nlabel = flag(degree_as_nlabel, "degree_as_nlabel", "GINDataset")
        super().__init__(NAMES[name], raw_dir, download=download, mirror=mirror, verify=verify, progress=progress,
                         transform=transform, reverse_edge=reverse_edge)
        self.gin_name = name

    def _load(self) -> None:
        super()._load()
        raw_glabels = self.graph_label_values[self.graph_labels]
        self.graph_labels, self.glabel_dict = first_appearance(raw_glabels)
        self.num_classes = self.gclasses = len(self.glabel_dict)
        self.labels = to_tensor(self.graph_labels)

        tags, self.nlabel_dict = first_appearance(self._node_label + self._node_label_min)
        self.nclasses = len(self.nlabel_dict)
        if self.degree_as_nlabel:
            # The undirected degree, whichever directions are stored (a self-loop counts twice, as
            # in networkx, which GIN's code uses).
            once = once_per_pair(self._src, self._dst) if self.reverse_edge else np.ones(len(self._src), bool)
            n = len(self._node_label)
            degree = np.bincount(np.concatenate([self._src[once], self._dst[once]]), minlength=n).astype(np.int64)
            distinct = np.unique(degree)
            self._gin_label = degree
            self._gin_attr = _one_hot(np.searchsorted(distinct, degree), len(distinct))
        else:
            self._gin_label = tags
            self._gin_attr = _one_hot(tags, self.nclasses)
        self.dim_nfeats = self._gin_attr.shape[1]
        self.N = len(self.graph_labels)
        self.n = len(self._node_label)
        self.m = int(len(self._src) + (self.n if self.self_loop else 0))

    def _build(self, i: int) -> Any:
        import nodeweave as nw

        n0, n1 = self._node_off[i], self._node_off[i + 1]
        e0, e1 = self._edge_off[i], self._edge_off[i + 1]
        src, dst = self._src[e0:e1] - n0, self._dst[e0:e1] - n0
        loop = np.zeros(len(src), dtype=np.int64)
        if self.self_loop:
            nodes = np.arange(n1 - n0, dtype=np.int64)
            src, dst = np.concatenate([src, nodes]), np.concatenate([dst, nodes])
            loop = np.concatenate([loop, np.ones(len(nodes), np.int64)])
        # Each node's edges in file order, then its self-loop, as GIN's files are read.
        order = np.lexsort((loop, src))
        g = nw.graph((src[order], dst[order]), num_nodes=int(n1 - n0))
        g.ndata["label"] = to_tensor(self._gin_label[n0:n1])
        g.ndata["attr"] = to_tensor(self._gin_attr[n0:n1])
        return g

    def __getitem__(self, idx: int) -> tuple[Any, Any]:
        g, i = self._graph(idx)
        return self._transformed(g), self.labels[i]

    def __repr__(self) -> str:
        return (f"GINDataset(name={self.gin_name!r}, num_graphs={len(self)}, self_loop={self.self_loop}, "
                f"degree_as_nlabel={self.degree_as_nlabel})")
