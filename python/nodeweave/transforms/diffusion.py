"""Graph diffusion (Gasteiger et al., "Diffusion Improves Graph Learning"): replace the graph by a
dense diffusion matrix ``S`` computed from its weighted adjacency, then sparsify it back into a
graph (DGL's ``PPR``, ``HeatKernel`` and ``GDC``).

All three use ``A[v, u]`` = the weight of the edges ``u -> v`` (``edata[eweight_name]``, 1 per edge
when absent; parallel edges add up), compute ``S`` densely in float64 with NumPy/SciPy (``O(N^2)``
memory, ``O(N^3)`` time: for graphs of thousands of nodes), and keep an edge ``u -> v`` of weight
``S[v, u]`` for every entry ``S[v, u] >= eps``. Without ``eps`` the threshold is the
``avg_degree * N``-th largest entry, so about ``avg_degree`` edges per node remain (ties at the
threshold are all kept; with ``avg_degree > N`` every entry is kept). Result edges are sorted by
destination, then source; their weights are float32 in ``edata[eweight_name]``; node features
are kept, edge features dropped.

On a heterograph every edge type whose source and destination node types are the same is
diffused on its own (as a homogeneous graph over the nodes of that type); the other edge types
are kept with their features (DGL accepts only homogeneous graphs here).

>>> import nodeweave as nw
>>> from nodeweave.transforms import PPR
>>> g = PPR(alpha=0.5, eps=0.1)(nw.graph(([0, 1], [1, 0])))
>>> [t.tolist() for t in g.edges()], [round(w, 4) for w in g.edata["w"].tolist()]
([[0, 1, 0, 1], [0, 0, 1, 1]], [0.6667, 0.3333, 0.3333, 0.6667])
"""

from __future__ import annotations

import abc
from typing import Any, Sequence

import numpy as np

from nodeweave import backend
from nodeweave.graph.transforms._common import _coo, _edge_weights
from nodeweave.transforms._checks import graph, number, positive_int
from nodeweave.transforms._rebuild import with_edges
from nodeweave.transforms.base import BaseTransform
from nodeweave import errors as nwerr

__all__ = ["PPR", "HeatKernel", "GDC"]


class _Diffusion(BaseTransform):
    """Shared by the diffusion transforms: the weighted adjacency, sparsification, the result."""

    def __init__(self, eweight_name: str, eps: float | None, avg_degree: int) -> None:
        cls = type(self).__name__
        if not isinstance(eweight_name, str):
            raise nwerr.TypeError(f"{cls}: eweight_name must be a feature name (str), got {eweight_name!r}")
        self.eweight_name = eweight_name
        self.eps = None if eps is None else number(eps, "eps", cls)
        self.avg_degree = positive_int(avg_degree, "avg_degree", cls)

    @abc.abstractmethod
    def _matrix(self, g: Any, a: np.ndarray) -> np.ndarray:
        """The dense diffusion matrix ``S`` (float64) of the weighted adjacency ``a``."""

    def __call__(self, g: Any) -> Any:
        graph(g, type(self).__name__)
        edges, edata, weights = {}, {}, {}
        for ct in g.canonical_etypes:
            if ct[0] != ct[2]:
                edges[ct], edata[ct] = _coo(g, ct), dict(g.edges[ct].data)
                continue
            src, dst = _coo(g, ct)
            n = g.num_nodes(ct[0])
            a = np.zeros((n, n))
            weighted = self.eweight_name in g.edges[ct].data
            np.add.at(a, (dst, src), _edge_weights(g, ct, self.eweight_name, type(self).__name__) if weighted
                      else np.ones(len(src)))
            s = self._matrix(g, a)
            vd, vs = np.nonzero(s >= self._threshold(s))  # row-major: sorted by destination, then source
            edges[ct] = (vs, vd)
            weights[ct] = s[vd, vs].astype(np.float32)
        out = with_edges(g, edges, edata)
        B = backend.current()
        for ct, w in weights.items():
            out.edges[ct].data[self.eweight_name] = B.from_numpy(w, B.canonical_device(g.device))
        return out

    def _threshold(self, s: np.ndarray) -> float:
        if self.eps is not None:
            return self.eps
        n = s.shape[0]
        if self.avg_degree > n:
            return -np.inf
        flat = s.ravel()
        return float(np.partition(flat, flat.size - self.avg_degree * n)[flat.size - self.avg_degree * n])


class PPR(_Diffusion):
    """Personalized PageRank diffusion (Page et al. 1999): ``S = alpha (I - (1 - alpha) A)^-1``.

    Parameters
    ----------
    alpha : float
        Restart probability, in ``(0, 1]`` (commonly 0.05 to 0.2).
    eweight_name : str
        Edge weights to read (1 when absent) and to write the result to.
    eps : float, optional
        Keep entries ``>= eps``.
    avg_degree : int
        Without ``eps``: keep about this many edges per node.

    >>> import nodeweave as nw
    >>> g = PPR(avg_degree=2)(nw.graph(([0, 1, 2], [1, 2, 0])))
    >>> g.num_edges()
    6
    """

    _repr_args = ("alpha", "eweight_name", "eps", "avg_degree")

    def __init__(self, alpha: float = 0.15, eweight_name: str = "w", eps: float | None = None,
                 avg_degree: int = 5) -> None:
        self.alpha = number(alpha, "alpha", "PPR")
        if not 0.0 < self.alpha <= 1.0:
            raise nwerr.ValueError(f"PPR: alpha must be in (0, 1], got {alpha!r}")
        super().__init__(eweight_name, eps, avg_degree)

    def _matrix(self, g: Any, a: np.ndarray) -> np.ndarray:
        m = np.eye(a.shape[0]) - (1.0 - self.alpha) * a
        try:
            return self.alpha * np.linalg.inv(m)
        except np.linalg.LinAlgError:
            raise nwerr.ValueError(f"PPR: I - (1 - alpha) A is singular for alpha={self.alpha} and these edge "
                                   "weights; normalize the weights (e.g. GCNNorm) or raise alpha") from None


class HeatKernel(_Diffusion):
    """Heat kernel diffusion (Kondor & Lafferty 2002): ``S = exp(t (A - I))`` (a matrix
    exponential).

    Parameters
    ----------
    t : float
        Diffusion time (commonly 2 to 10).
    eweight_name, eps, avg_degree
        As :class:`PPR`.

    >>> import nodeweave as nw
    >>> g = HeatKernel(t=1.0, eps=0.3)(nw.graph(([0, 1], [1, 0])))
    >>> [round(w, 4) for w in g.edata["w"].tolist()]
    [0.5677, 0.4323, 0.4323, 0.5677]
    """

    _repr_args = ("t", "eweight_name", "eps", "avg_degree")

    def __init__(self, t: float = 2.0, eweight_name: str = "w", eps: float | None = None,
                 avg_degree: int = 5) -> None:
        self.t = number(t, "t", "HeatKernel")
        super().__init__(eweight_name, eps, avg_degree)

    def _matrix(self, g: Any, a: np.ndarray) -> np.ndarray:
        from scipy.linalg import expm

        return expm(self.t * (a - np.eye(a.shape[0])))


class GDC(_Diffusion):
    """Generalized graph diffusion: ``S = sum_k coefs[k] A^k`` (``A^0 = I``).

    Parameters
    ----------
    coefs : list of float
        The coefficients ``theta_0, theta_1, ...``.
    eweight_name, eps, avg_degree
        As :class:`PPR`.

    >>> import nodeweave as nw
    >>> g = GDC([0.3, 0.2, 0.1], eps=0.15)(nw.graph(([0, 1, 2], [1, 2, 0])))
    >>> [t.tolist() for t in g.edges()], [round(w, 4) for w in g.edata["w"].tolist()]
    ([[0, 2, 0, 1, 1, 2], [0, 0, 1, 1, 2, 2]], [0.3, 0.2, 0.2, 0.3, 0.2, 0.3])
    """

    _repr_args = ("coefs", "eweight_name", "eps", "avg_degree")

    def __init__(self, coefs: Sequence[float], eweight_name: str = "w", eps: float | None = None,
                 avg_degree: int = 5) -> None:
        if isinstance(coefs, (str, bytes)) or not isinstance(coefs, Sequence) or len(coefs) == 0:
            raise nwerr.TypeError(f"GDC: coefs must be a non-empty list of numbers, got {coefs!r}")
        self.coefs = [number(c, f"coefs[{i}]", "GDC") for i, c in enumerate(coefs)]
        super().__init__(eweight_name, eps, avg_degree)

    def _matrix(self, g: Any, a: np.ndarray) -> np.ndarray:
        power = np.eye(a.shape[0])
        s = self.coefs[0] * power
        for c in self.coefs[1:]:
            power = power @ a
            s = s + c * power
        return s
