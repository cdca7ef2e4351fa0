"""Transforms that rewrite the edges: self-loops, reverse edges, merging parallel edges, line graphs,
k-hop graphs, metapath edges and Levi graphs (DGL's transform classes of the same names). Each is
a thin object over a function of :mod:`nodeweave.graph.transforms`.

>>> import nodeweave as nw
>>> from nodeweave.transforms import AddSelfLoop, RemoveSelfLoop
>>> g = nw.graph(([0, 1, 1], [1, 1, 2]))
>>> [t.tolist() for t in AddSelfLoop()(g).edges()]
[[0, 1, 0, 1, 2], [1, 2, 0, 1, 2]]
>>> [t.tolist() for t in RemoveSelfLoop()(g).edges()]
[[0, 1], [1, 2]]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave import backend
from nodeweave.graph import transforms as F
from nodeweave.graph.transforms._common import _coo
from nodeweave.transforms._checks import feature_names, flag, graph, homogeneous, name_or_none, positive_int
from nodeweave.transforms._rebuild import with_edges
from nodeweave.transforms._views import is_homogeneous, relation_graph
from nodeweave.transforms.base import BaseTransform
from nodeweave import errors as nwerr

__all__ = ["AddSelfLoop", "RemoveSelfLoop", "AddReverse", "ToSimple", "LineGraph", "KHopGraph",
           "AddMetaPaths", "ToLevi"]


class AddSelfLoop(BaseTransform):
    """Adds a self-loop to every node, for every edge type whose source and destination types are
    the same (other edge types are left alone).

    Parameters
    ----------
    allow_duplicate : bool
        Keep existing self-loops (a node may end up with two). By default they are removed first,
        so every node has exactly one.
    new_etypes : bool
        Also add an edge type ``(ntype, 'self', ntype)`` holding one self-loop per node, for every
        node type (the result then has several edge types; batch information is not kept).
    edge_feat_names, fill_data
        Features of the new self-loops, as :func:`nodeweave.add_self_loop`: ``fill_data`` (a
        number, or ``'sum'``, ``'mean'``, ``'max'``, ``'min'`` of the node's in-edges) for the
        features named in ``edge_feat_names`` (all when None), 0 for the others.

    >>> import nodeweave as nw
    >>> hg = nw.heterograph({("user", "follows", "user"): ([0, 1], [1, 1]),
    ...                      ("user", "plays", "game"): ([0, 1], [0, 0])})
    >>> out = AddSelfLoop(new_etypes=True)(hg)
    >>> out.canonical_etypes
    [('game', 'self', 'game'), ('user', 'follows', 'user'), ('user', 'plays', 'game'), ('user', 'self', 'user')]
    >>> [t.tolist() for t in out.edges(etype="follows")]
    [[0, 0, 1], [1, 0, 1]]
    """

    _repr_args = ("allow_duplicate", "new_etypes", "edge_feat_names", "fill_data")

    def __init__(self, allow_duplicate: bool = False, new_etypes: bool = False,
                 edge_feat_names: Sequence[str] | None = None, fill_data: float | str = 1.0) -> None:
        cls = type(self).__name__
        self.allow_duplicate = flag(allow_duplicate, "allow_duplicate", cls)
        self.new_etypes = flag(new_etypes, "new_etypes", cls)
        self.edge_feat_names = None if edge_feat_names is None else feature_names(edge_feat_names,
                                                                                  "edge_feat_names", cls)
        modes = ("sum", "mean", "max", "min")
        if isinstance(fill_data, str):
            if fill_data not in modes:
                raise nwerr.ValueError(f"{cls}: fill_data must be a number or one of {', '.join(modes)}, got "
                                       f"{fill_data!r}")
        elif isinstance(fill_data, bool) or not isinstance(fill_data, (int, float, np.integer, np.floating)):
            raise nwerr.TypeError(f"{cls}: fill_data must be a number or one of {', '.join(modes)}, got {fill_data!r}")
        self.fill_data = fill_data

    def __call__(self, g: Any) -> Any:
        for ct in g.canonical_etypes:
            if ct[0] != ct[2]:
                continue
            if not self.allow_duplicate:
                g = F.remove_self_loop(g, etype=ct)
            g = F.add_self_loop(g, edge_feat_names=self.edge_feat_names, fill_data=self.fill_data, etype=ct)
        if not self.new_etypes:
            return g
        edges = {ct: _coo(g, ct) for ct in g.canonical_etypes}
        for nt in g.ntypes:
            loops = np.arange(g.num_nodes(nt), dtype=np.int64)
            edges[(nt, "self", nt)] = (loops, loops)
        return with_edges(g, edges, {ct: dict(g.edges[ct].data) for ct in g.canonical_etypes})


class RemoveSelfLoop(BaseTransform):
    """Removes every self-loop of every edge type whose source and destination types are the same.

    >>> import nodeweave as nw
    >>> hg = nw.heterograph({("user", "follows", "user"): ([0, 1], [1, 1]),
    ...                      ("user", "plays", "game"): ([0, 1], [0, 1])})
    >>> out = RemoveSelfLoop()(hg)
    >>> out.num_edges("follows"), out.num_edges("plays")
    (1, 2)
    """

    def __call__(self, g: Any) -> Any:
        for ct in g.canonical_etypes:
            if ct[0] == ct[2]:
                g = F.remove_self_loop(g, etype=ct)
        return g


class AddReverse(BaseTransform):
    """Adds the reverse ``v -> u`` of every edge ``u -> v``.

    For an edge type ``(A, r, B)`` joining two node types (or any edge type with
    ``sym_new_etype=True``) the reverse edges form a new edge type ``(B, 'rev_r', A)``. For an
    edge type from a node type to itself they are appended to the same edge type: edges
    ``E .. 2E-1`` reverse edges ``0 .. E-1`` (self-loops too, so a self-loop appears twice).

    Parameters
    ----------
    copy_edata : bool
        Give each reverse edge the features of the edge it reverses. Otherwise reverse edges
        appended to an edge type get zeros, and a new reverse edge type gets no features.
    sym_new_etype : bool
        Put the reverse edges of an edge type from a node type to itself into a new type too.

    >>> import nodeweave as nw
    >>> hg = nw.heterograph({("user", "follows", "user"): ([1, 2], [2, 2]),
    ...                      ("user", "plays", "game"): ([0, 1], [1, 1])})
    >>> out = AddReverse()(hg)
    >>> out.canonical_etypes
    [('game', 'rev_plays', 'user'), ('user', 'follows', 'user'), ('user', 'plays', 'game')]
    >>> [t.tolist() for t in out.edges(etype="rev_plays")], [t.tolist() for t in out.edges(etype="follows")]
    ([[1, 1], [0, 1]], [[1, 2, 2, 2], [2, 2, 1, 2]])
    """

    _repr_args = ("copy_edata", "sym_new_etype")

    def __init__(self, copy_edata: bool = False, sym_new_etype: bool = False) -> None:
        cls = type(self).__name__
        self.copy_edata = flag(copy_edata, "copy_edata", cls)
        self.sym_new_etype = flag(sym_new_etype, "sym_new_etype", cls)

    def __call__(self, g: Any) -> Any:
        edges, edata = {}, {}
        for ct in g.canonical_etypes:
            src, dst = _coo(g, ct)
            feats = dict(g.edges[ct].data)
            if ct[0] == ct[2] and not self.sym_new_etype:
                edges[ct] = (np.concatenate([src, dst]), np.concatenate([dst, src]))
                edata[ct] = {k: _doubled(v, self.copy_edata) for k, v in feats.items()}
                continue
            rev = (ct[2], f"rev_{ct[1]}", ct[0])
            if rev in edges or rev in g.canonical_etypes:
                raise nwerr.ValueError(f"AddReverse: the reverse edge type {rev!r} of {ct!r} already exists")
            edges[ct], edata[ct] = (src, dst), feats
            edges[rev] = (dst, src)
            edata[rev] = dict(feats) if self.copy_edata else {}
        return with_edges(g, edges, edata)


def _doubled(feat: Any, copy: bool) -> Any:
    """``feat`` followed by itself (``copy``) or by zeros of the same shape."""
    B = backend.of(feat)
    second = feat if copy else B.zeros(B.shape(feat), B.dtype_of(feat), B.device_str(feat))
    return B.cat([feat, second], 0)


class ToSimple(BaseTransform):
    """Merges parallel edges (:func:`nodeweave.to_simple` with ``copy_edata=True``): one edge per
    distinct ``(u, v)`` of each edge type, sorted by ``(u, v)``.

    Parameters
    ----------
    return_counts : str or None
        Edge feature receiving each edge's multiplicity (None: none).
    aggregator : 'arbitrary', 'sum' or 'mean'
        How merged edges' features combine ('arbitrary' keeps those of the smallest-id edge).

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1, 1], [1, 2, 2]))
    >>> g.edata["w"] = nc.tensor([1.0, 2.0, 4.0])
    >>> sg = ToSimple(aggregator="sum")(g)
    >>> sg.edata["count"].tolist(), sg.edata["w"].tolist()
    ([1, 2], [1.0, 6.0])
    """

    _repr_args = ("return_counts", "aggregator")

    def __init__(self, return_counts: str | None = "count", aggregator: str = "arbitrary") -> None:
        cls = type(self).__name__
        self.return_counts = name_or_none(return_counts, "return_counts", cls)
        if aggregator not in ("arbitrary", "sum", "mean"):
            raise nwerr.ValueError(f"{cls}: aggregator must be 'arbitrary', 'sum' or 'mean', got {aggregator!r}")
        self.aggregator = aggregator

    def __call__(self, g: Any) -> Any:
        return F.to_simple(g, return_counts=self.return_counts, copy_edata=True, aggregator=self.aggregator)


class LineGraph(BaseTransform):
    """The line graph (:func:`nodeweave.line_graph` with ``shared=True``): one node per edge, whose
    features are the edge's features, and an edge ``(u, v) -> (v, w)`` wherever two edges meet.
    Graphs with one node type and one edge type only, as in DGL (for a heterograph, take
    :func:`nodeweave.to_homogeneous` first).

    Parameters
    ----------
    backtracking : bool
        Keep the pairs with ``w == u``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1, 1], [1, 0, 2]))
    >>> g.edata["w"] = nc.tensor([1.0, 2.0, 3.0])
    >>> lg = LineGraph(backtracking=False)(g)
    >>> [t.tolist() for t in lg.edges()], lg.ndata["w"].tolist()
    ([[0], [2]], [1.0, 2.0, 3.0])
    """

    _repr_args = ("backtracking",)

    def __init__(self, backtracking: bool = True) -> None:
        self.backtracking = flag(backtracking, "backtracking", type(self).__name__)

    def __call__(self, g: Any) -> Any:
        homogeneous(g, type(self).__name__)
        return F.line_graph(g, backtracking=self.backtracking, shared=True)


class KHopGraph(BaseTransform):
    """The ``k``-hop graph (:func:`nodeweave.khop_graph`): an edge ``u -> v`` per walk of length
    ``k`` from ``u`` to ``v``; node features are kept, edge features dropped.

    On a heterograph every edge type whose source and destination node types are the same is
    replaced by its own ``k``-hop graph; the other edge types are kept with their features (DGL
    accepts only homogeneous graphs here).

    >>> import nodeweave as nw
    >>> [t.tolist() for t in KHopGraph(2)(nw.graph(([0, 1], [1, 2]))).edges()]
    [[0], [2]]
    >>> hg = nw.heterograph({("user", "follows", "user"): ([0, 1], [1, 2]),
    ...                      ("user", "plays", "game"): ([0, 1], [0, 0])})
    >>> out = KHopGraph(2)(hg)
    >>> [t.tolist() for t in out.edges(etype="follows")], out.num_edges("plays")
    ([[0], [2]], 2)
    """

    _repr_args = ("k",)

    def __init__(self, k: int) -> None:
        self.k = positive_int(k, "k", type(self).__name__, allow_zero=True)

    def __call__(self, g: Any) -> Any:
        graph(g, type(self).__name__)
        if is_homogeneous(g):
            return F.khop_graph(g, self.k)
        edges, edata = {}, {}
        for ct in g.canonical_etypes:
            if ct[0] == ct[2]:
                kg = F.khop_graph(relation_graph(g, ct), self.k)
                edges[ct] = _coo(kg, kg.canonical_etypes[0])
            else:
                edges[ct], edata[ct] = _coo(g, ct), dict(g.edges[ct].data)
        return with_edges(g, edges, edata)


class AddMetaPaths(BaseTransform):
    """Adds an edge type per metapath (Wang et al., "Heterogeneous Graph Attention Network"):
    ``(first source type, name, last destination type)`` with an edge ``u -> v`` wherever a walk
    along the metapath joins them (:func:`nodeweave.metapath_reachable_graph`).

    Parameters
    ----------
    metapaths : dict
        ``{name: [etype, etype, ...]}``.
    keep_orig_edges : bool
        Keep the original edge types (with their features); otherwise the result has only the
        metapath edge types (and every node).

    >>> import nodeweave as nw
    >>> g = nw.heterograph({("person", "author", "paper"): ([0, 0, 1], [1, 2, 1]),
    ...                     ("paper", "authored by", "person"): ([1, 2, 1], [0, 0, 1])})
    >>> t = AddMetaPaths({"co-author": [("person", "author", "paper"),
    ...                                 ("paper", "authored by", "person")]}, keep_orig_edges=False)
    >>> out = t(g)
    >>> out.canonical_etypes, [x.tolist() for x in out.edges()]
    ([('person', 'co-author', 'person')], [[0, 0, 1, 1], [0, 1, 0, 1]])
    """

    _repr_args = ("metapaths", "keep_orig_edges")

    def __init__(self, metapaths: dict[str, Sequence[Any]], keep_orig_edges: bool = True) -> None:
        cls = type(self).__name__
        if not isinstance(metapaths, dict) or not metapaths:
            raise nwerr.TypeError(f"{cls}: metapaths must be a non-empty dict {{name: [etype, ...]}}, got {metapaths!r}")
        for name, path in metapaths.items():
            if not isinstance(name, str):
                raise nwerr.TypeError(f"{cls}: metapath names must be strings, got {name!r}")
            if isinstance(path, (str, tuple)) or not isinstance(path, Sequence) or not path:
                raise nwerr.ValueError(f"{cls}: metapaths[{name!r}] must be a non-empty list of edge types, got {path!r}")
        self.metapaths = {k: list(v) for k, v in metapaths.items()}
        self.keep_orig_edges = flag(keep_orig_edges, "keep_orig_edges", cls)

    def __call__(self, g: Any) -> Any:
        edges, edata = {}, {}
        for name, path in self.metapaths.items():
            mg = F.metapath_reachable_graph(g, path)
            (st, _, dt), = mg.canonical_etypes
            ct = (st, name, dt)
            if ct in g.canonical_etypes:
                raise nwerr.ValueError(f"AddMetaPaths: metapath {name!r} gives edge type {ct!r}, which the graph "
                                       "already has")
            edges[ct] = _coo(mg, mg.canonical_etypes[0])
        if self.keep_orig_edges:
            for ct in g.canonical_etypes:
                edges[ct] = _coo(g, ct)
                edata[ct] = dict(g.edges[ct].data)
        return with_edges(g, edges, edata)


class ToLevi(BaseTransform):
    """The Levi graph of a homogeneous graph: its nodes become node type ``'node'``, its edges node
    type ``'edge'``, and each edge ``e = (u, v)`` becomes two: ``u -> e`` of type
    ``('node', 'n2e', 'edge')`` and ``e -> v`` of type ``('edge', 'e2n', 'node')``. Node features
    go to ``'node'``, edge features to ``'edge'``; every node is kept, isolated ones included.
    Graphs with one node type and one edge type only, as in DGL.

    >>> import nodeweave as nw
    >>> levi = ToLevi()(nw.graph(([0, 1], [1, 2]), num_nodes=4))
    >>> levi.num_nodes("node"), levi.num_nodes("edge"), levi.canonical_etypes
    (4, 2, [('edge', 'e2n', 'node'), ('node', 'n2e', 'edge')])
    >>> [t.tolist() for t in levi.edges(etype="n2e")]
    [[0, 1], [0, 1]]
    """

    def __call__(self, g: Any) -> Any:
        import nodeweave as nw

        nt, ct = homogeneous(g, type(self).__name__)
        src, dst = _coo(g, ct)
        eids = np.arange(len(src), dtype=np.int64)
        levi = nw.heterograph({("node", "n2e", "edge"): (src, eids), ("edge", "e2n", "node"): (eids, dst)},
                              {"node": g.num_nodes(nt), "edge": len(src)}, idtype=g._idtype_name,
                              device=g.device)
        for key, value in g.nodes[nt].data.items():
            levi.nodes["node"].data[key] = value
        for key, value in g.edges[ct].data.items():
            levi.nodes["edge"].data[key] = value
        return levi
