"""Normalizing transforms: GCN edge weights (:class:`GCNNorm`) and row-normalized features
(:class:`RowFeatNormalizer`), as DGL's classes of the same names.

>>> import nodeweave as nw
>>> from nodeweave.transforms import GCNNorm
>>> [round(w, 4) for w in GCNNorm()(nw.graph(([0, 1, 2], [0, 0, 1]))).edata["w"].tolist()]
[0.5, 0.7071, 0.0]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from nodeweave import backend
from nodeweave import function as fn
from nodeweave.graph.transforms._common import _coo
from nodeweave.transforms._checks import feature_names, flag
from nodeweave.transforms.base import BaseTransform
from nodeweave import errors as nwerr

__all__ = ["GCNNorm", "RowFeatNormalizer"]


class GCNNorm(BaseTransform):
    """Symmetric GCN normalization (Kipf & Welling, ICLR 2017) stored as edge weights: edge
    ``u -> v`` gets ``w_uv / sqrt(d_u d_v)``, where ``d`` is a node's weighted in-degree (the sum of
    the weights of its in-edges) and ``w_uv`` the edge's weight, or ``1 / sqrt(d_u d_v)`` with
    plain in-degrees when the graph has no edge feature ``eweight_name``. A node of degree 0
    contributes a factor 0. Applies to every edge type whose source and destination types are the
    same; the weights are written to ``edata[eweight_name]`` (float32 when computed from degrees).

    Add self-loops first for the usual ``D^-1/2 (A + I) D^-1/2``. Weighted normalization stays
    differentiable with respect to the input weights.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1, 2], [0, 0, 1]))
    >>> g.edata["w"] = nc.tensor([1.0, 2.0, 3.0])
    >>> [round(x, 4) for x in GCNNorm()(g).edata["w"].tolist()]
    [0.3333, 0.6667, 0.0]
    """

    _repr_args = ("eweight_name",)

    def __init__(self, eweight_name: str = "w") -> None:
        if not isinstance(eweight_name, str):
            raise nwerr.TypeError(f"GCNNorm: eweight_name must be a feature name (str), got {eweight_name!r}")
        self.eweight_name = eweight_name

    def __call__(self, g: Any) -> Any:
        weights = {ct: self._weights(g, ct) for ct in g.canonical_etypes if ct[0] == ct[2]}
        g = g.clone()
        for ct, w in weights.items():
            g.edges[ct].data[self.eweight_name] = w
        return g

    def _weights(self, g: Any, ct: tuple) -> Any:
        nt = ct[0]
        data = g.edges[ct].data
        if self.eweight_name not in data:
            deg = backend.of(g.in_degrees(etype=ct)).to_numpy(g.in_degrees(etype=ct)).astype(np.float64)
            inv = np.divide(1.0, np.sqrt(deg), out=np.zeros_like(deg), where=deg > 0)
            src, dst = _coo(g, ct)
            w = (inv[src] * inv[dst]).astype(np.float32)
            return backend.current().from_numpy(w, backend.current().canonical_device(g.device))
        w = data[self.eweight_name]
        with g.local_scope():
            g.update_all(fn.copy_e(self.eweight_name, "_m"), fn.sum("_m", "_deg"), etype=ct)
            deg = g.nodes[nt].data["_deg"]
            inv = deg.pow(-0.5)
            inv = inv.masked_fill(deg == 0, 0.0)
            g.nodes[nt].data["_inv"] = inv
            # Endpoint factors shaped like the weights ((E,) or (E, 1)) so the product broadcasts
            # per edge instead of across edges.
            g.apply_edges(lambda e: {"_w": e.src["_inv"].reshape(e.data[self.eweight_name].shape)
                                     * e.data[self.eweight_name]
                                     * e.dst["_inv"].reshape(e.data[self.eweight_name].shape)},
                          etype=ct)
            return g.edges[ct].data["_w"]


class RowFeatNormalizer(BaseTransform):
    """Row-normalizes the named node and edge features: each row (the last dimension) is divided by
    its sum, ``x / max(sum(x), 1)`` exactly as DGL computes it (rows whose sum is below 1 are
    left as they are, which also keeps all-zero rows at zero).

    Parameters
    ----------
    subtract_min : bool
        First subtract the minimum of the whole feature tensor (making every value non-negative).
    node_feat_names, edge_feat_names : list of str
        Features to normalize (default: none). On a heterogeneous graph every type holding the
        feature is normalized; a name no type holds raises KeyError.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0], [1]))
    >>> g.ndata["x"] = nc.tensor([[1.0, 3.0], [0.2, 0.3]])
    >>> RowFeatNormalizer(node_feat_names=["x"])(g).ndata["x"].tolist()
    [[0.25, 0.75], [0.20000000298023224, 0.30000001192092896]]
    """

    _repr_args = ("subtract_min", "node_feat_names", "edge_feat_names")

    def __init__(self, subtract_min: bool = False, node_feat_names: Sequence[str] | None = None,
                 edge_feat_names: Sequence[str] | None = None) -> None:
        cls = type(self).__name__
        self.subtract_min = flag(subtract_min, "subtract_min", cls)
        self.node_feat_names = feature_names(node_feat_names, "node_feat_names", cls)
        self.edge_feat_names = feature_names(edge_feat_names, "edge_feat_names", cls)

    def _normalize(self, feat: Any) -> Any:
        if self.subtract_min:
            feat = feat - feat.min()
        return feat / feat.sum(-1, keepdim=True).clamp(min=1.0)

    def __call__(self, g: Any) -> Any:
        return map_features(g, self.node_feat_names, self.edge_feat_names,
                            lambda feat, where: self._normalize(feat), type(self).__name__)


def map_features(g: Any, node_names: Sequence[str], edge_names: Sequence[str], f: Any, cls: str) -> Any:
    """A clone of ``g`` whose features ``node_names`` / ``edge_names`` are replaced by
    ``f(feature, where)`` (``where`` names the feature for error messages), on every node / edge type
    that has them. KeyError for a name no type holds."""
    if not node_names and not edge_names:
        return g
    out = g.clone()
    for names, kind, types, view in ((node_names, "node", g.ntypes, out.nodes),
                                     (edge_names, "edge", g.canonical_etypes, out.edges)):
        for name in names:
            holders = [t for t in types if name in view[t].data]
            if not holders:
                raise nwerr.KeyError(f"{cls}: the graph has no {kind} feature {name!r}")
            for t in holders:
                where = f"{kind} feature {name!r}" + (f" of type {t!r}" if len(types) > 1 else "")
                view[t].data[name] = f(view[t].data[name], where)
    return out
