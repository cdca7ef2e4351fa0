"""Positional-encoding transforms: store :func:`nodeweave.lap_pe`, :func:`nodeweave.random_walk_pe`
or :func:`nodeweave.svd_pe` as a node feature (DGL's ``LapPE`` / ``LaplacianPE``, ``RandomWalkPE``,
``SVDPE``).

On a heterograph the encoding is that of the homogeneous view (every node and edge type as one
graph, :func:`nodeweave.to_homogeneous`), stored under ``feat_name`` on every node type: a node's
position in the whole graph, whatever its type (DGL accepts only homogeneous graphs here).

>>> import nodeweave as nw
>>> from nodeweave.transforms import RandomWalkPE
>>> RandomWalkPE(k=2)(nw.graph(([0, 1, 1], [1, 1, 0]))).ndata["PE"].tolist()
[[0.0, 0.5], [0.5, 0.75]]
"""

from __future__ import annotations

from typing import Any

from nodeweave.graph import transforms as F
from nodeweave.transforms._checks import flag, name_or_none, positive_int
from nodeweave.transforms._views import node_outputs
from nodeweave.transforms.base import BaseTransform
from nodeweave import errors as nwerr

__all__ = ["LapPE", "LaplacianPE", "RandomWalkPE", "SVDPE"]


def _name(value: Any, arg: str, cls: str) -> str:
    if not isinstance(value, str):
        raise nwerr.TypeError(f"{cls}: {arg} must be a feature name (str), got {value!r}")
    return value


def _stored(g: Any, compute: Any, cls: str, edata: tuple = ()) -> Any:
    """A clone of ``g`` holding the node features ``compute`` returns for its homogeneous view."""
    out = g.clone()
    for nt, feats in node_outputs(g, compute, cls, edata=edata).items():
        for key, value in feats.items():
            out.nodes[nt].data[key] = value
    return out


class RandomWalkPE(BaseTransform):
    """Stores the random-walk encoding (:func:`nodeweave.random_walk_pe`), ``(N, k)`` float32, in
    ``ndata[feat_name]``.

    Parameters
    ----------
    k : int
        Walk lengths 1 to ``k``.
    feat_name : str
    eweight_name : str, optional
        Edge weights for the walk's transition probabilities (None: edge counts).
    """

    _repr_args = ("k", "feat_name", "eweight_name")

    def __init__(self, k: int, feat_name: str = "PE", eweight_name: str | None = None) -> None:
        cls = type(self).__name__
        self.k = positive_int(k, "k", cls)
        self.feat_name = _name(feat_name, "feat_name", cls)
        self.eweight_name = name_or_none(eweight_name, "eweight_name", cls)

    def __call__(self, g: Any) -> Any:
        weights = () if self.eweight_name is None else (self.eweight_name,)
        return _stored(g, lambda h: {self.feat_name: F.random_walk_pe(h, self.k, eweight_name=self.eweight_name)},
                       type(self).__name__, weights)


class LapPE(BaseTransform):
    """Stores the Laplacian encoding (:func:`nodeweave.lap_pe`: eigenvectors of the ``k`` smallest
    non-trivial eigenvalues of the normalized Laplacian, random signs), ``(N, k)`` float32, in
    ``ndata[feat_name]``. On a directed graph, the real parts of the eigenvectors, as DGL (see
    :func:`nodeweave.lap_pe`).

    Parameters
    ----------
    k : int
    feat_name : str
    eigval_name : str, optional
        Also store the ``k`` eigenvalues, repeated for every node (``(N, k)``), under this name.
    padding : bool
        Pad with zeros (eigenvalues: NaN) when ``k >= N`` instead of raising ValueError.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2, 3, 1, 2, 3, 0], [1, 2, 3, 0, 0, 1, 2, 3]))
    >>> out = LapPE(k=5, eigval_name="eigval", padding=True)(g)
    >>> tuple(out.ndata["PE"].shape), [round(v, 4) for v in out.ndata["eigval"][0].tolist()[:3]]
    ((4, 5), [1.0, 1.0, 2.0])
    """

    _repr_args = ("k", "feat_name", "eigval_name", "padding")

    def __init__(self, k: int, feat_name: str = "PE", eigval_name: str | None = None,
                 padding: bool = False) -> None:
        cls = type(self).__name__
        self.k = positive_int(k, "k", cls)
        self.feat_name = _name(feat_name, "feat_name", cls)
        self.eigval_name = name_or_none(eigval_name, "eigval_name", cls)
        self.padding = flag(padding, "padding", cls)

    def __call__(self, g: Any) -> Any:
        return _stored(g, self._encode, type(self).__name__)

    def _encode(self, h: Any) -> dict[str, Any]:
        if self.eigval_name is None:
            return {self.feat_name: F.lap_pe(h, self.k, padding=self.padding)}
        pe, eigval = F.lap_pe(h, self.k, padding=self.padding, return_eigval=True)
        return {self.feat_name: pe,
                self.eigval_name: eigval.reshape(1, -1).expand(h.num_nodes(), self.k).contiguous()}


class LaplacianPE(LapPE):
    """The same as :class:`LapPE` (DGL's older name)."""


class SVDPE(BaseTransform):
    """Stores the SVD encoding (:func:`nodeweave.svd_pe`), ``(N, 2k)`` float32, in
    ``ndata[feat_name]``.

    Parameters
    ----------
    k : int
    feat_name : str
    padding : bool
        Pad with zeros when ``k > N`` instead of raising ValueError.
    random_flip : bool
        Flip each node's row by a random sign.

    >>> import nodeweave as nw
    >>> g = nw.graph(([0, 1, 2, 3, 4, 2, 3, 1, 4, 0], [2, 3, 1, 4, 0, 0, 1, 2, 3, 4]))
    >>> tuple(SVDPE(k=2)(g).ndata["svd_pe"].shape)
    (5, 4)
    """

    _repr_args = ("k", "feat_name", "padding", "random_flip")

    def __init__(self, k: int, feat_name: str = "svd_pe", padding: bool = False, random_flip: bool = True) -> None:
        cls = type(self).__name__
        self.k = positive_int(k, "k", cls)
        self.feat_name = _name(feat_name, "feat_name", cls)
        self.padding = flag(padding, "padding", cls)
        self.random_flip = flag(random_flip, "random_flip", cls)

    def __call__(self, g: Any) -> Any:
        return _stored(g, lambda h: {self.feat_name: F.svd_pe(h, self.k, padding=self.padding,
                                                                random_flip=self.random_flip)},
                       type(self).__name__)
