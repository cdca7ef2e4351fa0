"""Random augmentations for graph contrastive learning (You et al., "Graph Contrastive Learning with
Augmentations"; Rong et al., "DropEdge"): drop nodes or edges, add random edges, mask feature
columns, shuffle node features (DGL's ``DropNode``, ``DropEdge``, ``AddEdge``, ``FeatMask``,
``NodeShuffle``).

Each call draws a fresh seed from nodeweave's default generator, so ``nodeweave.core.manual_seed``
(``nw.seed``) before a run makes the augmentations repeatable, on either backend.

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.transforms import DropEdge
>>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
>>> nc.manual_seed(0); a = DropEdge(0.5)(g)
>>> nc.manual_seed(0); b = DropEdge(0.5)(g)
>>> a.edges()[0].tolist() == b.edges()[0].tolist()
True
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave import backend
from nodeweave.graph import transforms as F
from nodeweave.graph.transforms._common import _coo
from nodeweave.sampling._seed import numpy_generator
from nodeweave.transforms._checks import feature_names, number, probability
from nodeweave.transforms._rebuild import with_edges
from nodeweave.transforms.base import BaseTransform
from nodeweave.transforms.normalization import map_features
from nodeweave import errors as nwerr

__all__ = ["DropNode", "DropEdge", "AddEdge", "FeatMask", "NodeShuffle"]


def _segment_of(counts: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def _np(t: Any) -> np.ndarray:
    return backend.of(t).to_numpy(t)


class DropNode(BaseTransform):
    """Drops each node independently with probability ``p`` (every node type), with its edges.
    Remaining nodes and edges keep their order and features; a batched graph keeps its per-graph
    counts. No ``'_ID'`` features are added.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1, 2], [1, 2, 0]))
    >>> DropNode(0.0)(g).num_nodes(), DropNode(1.0)(g).num_nodes()
    (3, 0)
    """

    _repr_args = ("p",)

    def __init__(self, p: float = 0.5) -> None:
        self.p = probability(p, "p", type(self).__name__)

    def __call__(self, g: Any) -> Any:
        if self.p == 0:
            return g.clone()
        rng = numpy_generator()
        keep = {nt: np.flatnonzero(rng.random(g.num_nodes(nt)) >= self.p) for nt in g.ntypes}
        out = F.node_subgraph(g, keep, store_ids=False)
        if g.batch_size > 1:
            bnn = {nt: np.bincount(_segment_of(_np(g.batch_num_nodes(nt)))[keep[nt]], minlength=g.batch_size)
                   for nt in g.ntypes}
            out.set_batch_num_nodes(bnn)
            out.set_batch_num_edges({ct: _edge_counts(out, ct, bnn[ct[0]]) for ct in out.canonical_etypes})
        return out


def _edge_counts(g: Any, ct: tuple, src_counts: np.ndarray) -> np.ndarray:
    """Per batched graph, the edges of ``ct`` whose source lies in it (``src_counts`` nodes each)."""
    src, _ = _coo(g, ct)
    return np.bincount(_segment_of(src_counts)[src], minlength=len(src_counts)).astype(np.int64)


class DropEdge(BaseTransform):
    """Drops each edge independently with probability ``p`` (every edge type). Nodes and the
    remaining edges keep their order and features; a batched graph keeps its per-graph counts.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2], [1, 2, 0]))
    >>> DropEdge(1.0)(g).num_edges(), DropEdge(1.0)(g).num_nodes()
    (0, 3)
    """

    _repr_args = ("p",)

    def __init__(self, p: float = 0.5) -> None:
        self.p = probability(p, "p", type(self).__name__)

    def __call__(self, g: Any) -> Any:
        if self.p == 0:
            return g.clone()
        rng = numpy_generator()
        keep = {ct: np.flatnonzero(rng.random(g.num_edges(ct)) >= self.p) for ct in g.canonical_etypes}
        out = F.edge_subgraph(g, keep, relabel_nodes=False, store_ids=False)
        if g.batch_size > 1:
            out.set_batch_num_nodes({nt: g.batch_num_nodes(nt) for nt in g.ntypes})
            out.set_batch_num_edges({ct: _edge_counts(out, ct, _np(g.batch_num_nodes(ct[0])))
                                     for ct in out.canonical_etypes})
        return out


class AddEdge(BaseTransform):
    """Adds ``int(ratio * E)`` edges with uniformly random endpoints to every edge type (``E``: its
    edge count), after the existing ones; their features are zeros. The result is one graph (a
    random edge may join two graphs of a batch, so batch information is not kept).

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2, 3, 4], [1, 2, 3, 4, 0]))
    >>> AddEdge(0.4)(g).num_edges()
    7
    """

    _repr_args = ("ratio",)

    def __init__(self, ratio: float = 0.2) -> None:
        self.ratio = number(ratio, "ratio", type(self).__name__, low=0.0)

    def __call__(self, g: Any) -> Any:
        if self.ratio == 0:
            return g.clone()
        rng = numpy_generator()
        edges, edata = {}, {}
        for ct in g.canonical_etypes:
            src, dst = _coo(g, ct)
            k = int(len(src) * self.ratio)
            new_src = rng.integers(0, g.num_nodes(ct[0]), k) if k else np.zeros(0, np.int64)
            new_dst = rng.integers(0, g.num_nodes(ct[2]), k) if k else np.zeros(0, np.int64)
            edges[ct] = (np.concatenate([src, new_src]), np.concatenate([dst, new_dst]))
            edata[ct] = {}
            for key, feat in g.edges[ct].data.items():
                B = backend.of(feat)
                pad = B.zeros((k,) + B.shape(feat)[1:], B.dtype_of(feat), B.device_str(feat))
                edata[ct][key] = B.cat([feat, pad], 0)
        return with_edges(g, edges, edata)


class FeatMask(BaseTransform):
    """Sets randomly chosen feature columns to zero: for each named feature (and each type holding
    it), every column of its last dimension is masked with probability ``p``, the same columns for
    every node / edge.

    Parameters
    ----------
    p : float
        Probability of masking a column.
    node_feat_names, edge_feat_names : list of str
        Features to mask (default: none). A name no type holds raises KeyError; features must
        have at least two dimensions (rows and columns).

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0], [1]))
    >>> g.ndata["x"] = nc.ones(2, 4)
    >>> FeatMask(p=1.0, node_feat_names=["x"])(g).ndata["x"].tolist()
    [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    """

    _repr_args = ("p", "node_feat_names", "edge_feat_names")

    def __init__(self, p: float = 0.5, node_feat_names: Sequence[str] | None = None,
                 edge_feat_names: Sequence[str] | None = None) -> None:
        cls = type(self).__name__
        self.p = probability(p, "p", cls)
        self.node_feat_names = feature_names(node_feat_names, "node_feat_names", cls)
        self.edge_feat_names = feature_names(edge_feat_names, "edge_feat_names", cls)

    def __call__(self, g: Any) -> Any:
        if self.p == 0:
            return g.clone()
        rng = numpy_generator()

        def mask(feat: Any, where: str) -> Any:
            B = backend.of(feat)
            shape = B.shape(feat)
            if len(shape) < 2:
                raise nwerr.ValueError(f"FeatMask: {where} has shape {shape}; masking columns needs at least "
                                       "two dimensions")
            cols = rng.random(shape[-1]) < self.p
            return feat.masked_fill(B.from_numpy(cols, B.device_str(feat)), 0)

        return map_features(g, self.node_feat_names, self.edge_feat_names, mask, type(self).__name__)


class NodeShuffle(BaseTransform):
    """Randomly permutes the rows of every node feature (one permutation per node type, shared by
    all its features); the structure is unchanged. Used to build corrupted graphs (Deep Graph
    Infomax).

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1], [1, 2]))
    >>> g.ndata["h"] = nc.tensor([1.0, 2.0, 3.0])
    >>> sorted(NodeShuffle()(g).ndata["h"].tolist())
    [1.0, 2.0, 3.0]
    """

    def __call__(self, g: Any) -> Any:
        rng = numpy_generator()
        out = g.clone()
        for nt in g.ntypes:
            perm = rng.permutation(g.num_nodes(nt))
            for key, feat in g.nodes[nt].data.items():
                out.nodes[nt].data[key] = backend.of(feat).index_select(feat, perm)
        return out
