"""SIGN's precomputed feature diffusion (Frasca et al., "SIGN: Scalable Inception Graph Neural
Networks"), DGL's ``SIGNDiffusion``: ``T X, T^2 X, ..., T^k X`` for a diffusion operator ``T``,
stored as node features.

On a heterograph the diffusion runs on the homogeneous view (every node and edge type as one
graph): a node gathers from its in-neighbours of every edge type, as DGL's ``update_all`` with a
cross-type sum does; every node type needs the input feature (same row shape).

>>> import nodeweave as nw, nodeweave.core as nc
>>> from nodeweave.transforms import SIGNDiffusion
>>> g = nw.graph(([0, 1], [1, 2]))
>>> g.ndata["feat"] = nc.tensor([[1.0], [2.0], [4.0]])
>>> out = SIGNDiffusion(k=2)(g)
>>> out.ndata["out_feat_1"].tolist(), out.ndata["out_feat_2"].tolist()
([[0.0], [1.0], [2.0]], [[0.0], [0.0], [1.0]])
"""

from __future__ import annotations

from typing import Any

from nodeweave import function as fn
from nodeweave.transforms._checks import name_or_none, number, positive_int
from nodeweave.transforms._views import node_outputs, relation_graph
from nodeweave.transforms.base import BaseTransform
from nodeweave.transforms.normalization import GCNNorm
from nodeweave import errors as nwerr

__all__ = ["SIGNDiffusion"]

OPS = ("raw", "rw", "gcn", "ppr")


class SIGNDiffusion(BaseTransform):
    """Diffuses node features ``k`` times; ``ndata[f'{out_feat_name}_{i}']`` holds ``T^i X``.

    Messages flow along the edges (``u -> v`` sends ``u``'s features to ``v``). The operators:

    - ``'raw'``: ``h_v = sum_{u -> v} w_uv h_u`` (``w_uv = 1`` without edge weights);
    - ``'rw'``: the weighted mean over in-edges, ``sum w_uv h_u / sum w_uv`` (a node without
      in-edges gets 0);
    - ``'gcn'``: ``raw`` with :class:`GCNNorm`'s weights ``w_uv / sqrt(d_u d_v)``;
    - ``'ppr'``: ``h <- (1 - alpha) T_gcn h + alpha X`` (APPNP's approximate personalized PageRank).

    Parameters
    ----------
    k : int
        Number of diffusion steps (outputs ``_1`` to ``_k``).
    in_feat_name, out_feat_name : str
    eweight_name : str, optional
        Edge weights; None treats the graph as unweighted (for ``'gcn'``/``'ppr'``: unit weights
        before normalization, even if the graph has a feature ``'w'``).
    diffuse_op : 'raw', 'rw', 'gcn' or 'ppr'
    alpha : float
        Restart probability of ``'ppr'``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> g = nw.graph(([0, 1, 2], [2, 2, 0]))
    >>> g.ndata["feat"] = nc.tensor([[1.0], [3.0], [5.0]])
    >>> SIGNDiffusion(k=1, diffuse_op="rw")(g).ndata["out_feat_1"].tolist()
    [[5.0], [0.0], [2.0]]
    """

    _repr_args = ("k", "in_feat_name", "out_feat_name", "eweight_name", "diffuse_op", "alpha")

    def __init__(self, k: int, in_feat_name: str = "feat", out_feat_name: str = "out_feat",
                 eweight_name: str | None = None, diffuse_op: str = "raw", alpha: float = 0.2) -> None:
        cls = type(self).__name__
        self.k = positive_int(k, "k", cls)
        for arg, v in (("in_feat_name", in_feat_name), ("out_feat_name", out_feat_name)):
            if not isinstance(v, str):
                raise nwerr.TypeError(f"{cls}: {arg} must be a feature name (str), got {v!r}")
        self.in_feat_name, self.out_feat_name = in_feat_name, out_feat_name
        self.eweight_name = name_or_none(eweight_name, "eweight_name", cls)
        if diffuse_op not in OPS:
            raise nwerr.ValueError(f"{cls}: diffuse_op must be one of {', '.join(OPS)}, got {diffuse_op!r}")
        self.diffuse_op = diffuse_op
        self.alpha = number(alpha, "alpha", cls)

    def __call__(self, g: Any) -> Any:
        cls = type(self).__name__
        if not any(self.in_feat_name in g.nodes[nt].data for nt in g.ntypes):
            raise nwerr.KeyError(f"{cls}: the graph has no node feature {self.in_feat_name!r}")
        weighted = self.eweight_name is not None and any(self.eweight_name in g.edges[ct].data
                                                          for ct in g.canonical_etypes)
        out = g.clone()
        feats = node_outputs(g, lambda h: self._diffuse(h, weighted), cls, ndata=(self.in_feat_name,),
                             edata=(self.eweight_name,) if weighted else ())
        for nt, per_type in feats.items():
            for key, value in per_type.items():
                out.nodes[nt].data[key] = value
        return out

    def _diffuse(self, g: Any, weighted: bool) -> dict[str, Any]:
        """``{out_feat_name_i: T^i X}`` on the homogeneous graph ``g``."""
        x = g.ndata[self.in_feat_name]
        # A bare copy of the structure: the diffusion's scratch features and GCN weights stay off
        # the caller's graph.
        work = relation_graph(g, g.canonical_etypes[0], (self.eweight_name,) if weighted else ())
        if self.diffuse_op in ("gcn", "ppr"):
            name = self.eweight_name or "w"
            work = GCNNorm(name)(work)
            weighted, wname = True, name
        else:
            wname = self.eweight_name
        if self.diffuse_op == "rw" and weighted:
            work.update_all(fn.copy_e(wname, "_m"), fn.sum("_m", "_z"))
            z = work.ndata["_z"]
            z = z.masked_fill(z == 0, 1.0).reshape((-1,) + (1,) * (x.dim() - 1))
        message = fn.u_mul_e("_h", wname, "_m") if weighted else fn.copy_u("_h", "_m")
        reduce = fn.mean("_m", "_h") if self.diffuse_op == "rw" and not weighted else fn.sum("_m", "_h")
        outs = {}
        h = x
        for i in range(1, self.k + 1):
            work.ndata["_h"] = h
            work.update_all(message, reduce)
            h = work.ndata["_h"]
            if self.diffuse_op == "rw" and weighted:
                h = h / z
            elif self.diffuse_op == "ppr":
                h = (1.0 - self.alpha) * h + self.alpha * x
            outs[f"{self.out_feat_name}_{i}"] = h
        return outs
