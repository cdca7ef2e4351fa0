"""LabelPropagation: spreading known labels over the graph, from Zhu & Ghahramani, "Learning from
Labeled and Unlabeled Data with Label Propagation" (CMU-CALD-02-107, 2002)."""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave import function as fn

from ._ns import F, T, nn
from ._checks import positive_int
from ._utils import check_homogeneous, degree_norm
from nodeweave import errors as nwerr

__all__ = ["LabelPropagation"]

_NORMS = ("sym", "row")


class LabelPropagation(nn.Module):
    r"""``k`` steps of

    .. math::
        Y^{(t+1)} = \alpha \tilde A Y^{(t)} + (1 - \alpha) Y^{(0)}

    where :math:`Y^{(0)}` holds the known labels (one-hot) and zeros for the other nodes, and
    :math:`\tilde A = D_{in}^{-1/2} A D_{out}^{-1/2}` (``norm_type='sym'``) or
    :math:`D_{in}^{-1} A` (``'row'``), degrees clamped to at least 1. After each step, optionally:
    clamp to :math:`[0, 1]` (``clamp``), divide each row by its L1 norm (``normalize``), put the
    known labels back (``reset``). No parameters.

    Parameters
    ----------
    k : int
        Number of steps.
    alpha : float
        Weight of the propagated labels against the initial ones, in :math:`[0, 1]`.
    norm_type : str
        ``'sym'`` (default) or ``'row'``.
    clamp, normalize, reset : bool
        Defaults True, False, False (DGL's).

    ``forward(g, labels, mask=None)``: ``labels`` is either class ids, an integer tensor ``(N,)``
    or ``(N, 1)`` (one-hot encoded over ``max + 1`` classes), or an ``(N, C)`` tensor of one-hot
    or multi-label indicators (integer or floating). ``mask`` selects the known nodes: a boolean
    ``(N,)`` tensor or a tensor of node ids; None means every node. Returns ``(N, C)`` floats:
    float32 from integer labels (as DGL), the labels' own dtype from floating ones. Homogeneous
    graphs (and batches) only.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import LabelPropagation
    >>> g = nw.graph(([0, 1, 1, 2], [1, 0, 2, 1]), num_nodes=3)          # a path 0 - 1 - 2
    >>> lp = LabelPropagation(k=1, alpha=1.0, norm_type="row", clamp=False)
    >>> lp(g, nc.tensor([0, 0, 1]), mask=nc.tensor([True, False, True])).tolist()
    [[0.0, 0.0], [0.5, 0.5], [0.0, 0.0]]
    """

    def __init__(self, k: int, alpha: float, norm_type: str = "sym", clamp: bool = True,
                 normalize: bool = False, reset: bool = False) -> None:
        super().__init__()
        name = type(self).__name__
        self.k = positive_int(k, "k", name, allow_zero=True)
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 <= alpha <= 1.0:
            raise nwerr.ValueError(f"{name}: alpha must be a number in [0, 1], got {alpha!r}")
        if norm_type not in _NORMS:
            raise nwerr.ValueError(f"{name}: norm_type must be 'sym' or 'row', got {norm_type!r}")
        self.alpha = float(alpha)
        self.norm_type = norm_type
        self.clamp = clamp
        self.normalize = normalize
        self.reset = reset

    def _targets(self, labels: Any):
        """The label matrix ``(N, C)`` as floats."""
        name = type(self).__name__
        if not isinstance(labels, T.Tensor):
            raise nwerr.TypeError(f"{name}: labels must be a tensor, got {type(labels).__name__}")
        if labels.dim() == 2 and labels.shape[1] > 1:
            return labels if labels.is_floating_point() else labels.to(T.float32)
        if labels.dim() not in (1, 2) or labels.is_floating_point() or labels.dtype == T.bool:
            raise nwerr.TypeError(f"{name}: labels must be integer class ids of shape (N,) or (N, 1), or an (N, C) "
                                  f"indicator matrix; got dtype {labels.dtype} and shape {tuple(labels.shape)}")
        ids = labels.reshape(-1).to(T.int64)
        if ids.numel() and int(ids.min()) < 0:
            raise nwerr.ValueError(f"{name}: class ids must be non-negative, got {int(ids.min())}")
        return F.one_hot(ids).to(T.float32)

    def _known(self, mask: Any, n: int, like: Any):
        """A ``(N, 1)`` boolean tensor: the nodes whose labels are known."""
        name = type(self).__name__
        if mask is None:
            known = np.ones(n, dtype=bool)
        else:
            arr = mask.detach().cpu().numpy() if isinstance(mask, T.Tensor) else np.asarray(mask)
            if arr.dtype == bool:
                if arr.shape != (n,):
                    raise nwerr.ValueError(f"{name}: a boolean mask must have shape ({n},) (one entry per node), got "
                                           f"{arr.shape}")
                known = arr
            elif arr.dtype.kind in "iu":
                ids = arr.reshape(-1)
                if ids.size and (ids.min() < 0 or ids.max() >= n):
                    raise nwerr.ValueError(f"{name}: mask node ids must be in [0, {n}), got {ids.min()}..{ids.max()}")
                known = np.zeros(n, dtype=bool)
                known[ids] = True
            else:
                raise nwerr.TypeError(f"{name}: mask must be a boolean tensor or node ids, got dtype {arr.dtype}")
        return T.from_numpy(known.reshape(n, 1).copy()).to(like.device)

    def forward(self, g: Any, labels: Any, mask: Any = None):
        """The propagated label scores ``(N, C)``."""
        name = type(self).__name__
        check_homogeneous(name, g)
        n = g.num_nodes()
        y0 = self._targets(labels)
        if y0.shape[0] != n:
            raise nwerr.ValueError(f"{name}: labels has {y0.shape[0]} rows but the graph has {n} nodes")
        known = self._known(mask, n, y0)
        zero = T.zeros_like(y0)
        y = T.where(known, y0, zero)
        init = (1 - self.alpha) * y
        dst_norm = degree_norm(g, "in", -0.5 if self.norm_type == "sym" else -1.0, y)
        src_norm = degree_norm(g, "out", -0.5, y) if self.norm_type == "sym" else None
        with g.local_scope():
            for _ in range(self.k):
                g.ndata["h"] = y * src_norm if src_norm is not None else y
                g.update_all(fn.copy_u("h", "m"), fn.sum("m", "h"))
                y = init + self.alpha * g.ndata.pop("h") * dst_norm
                if self.clamp:
                    y = y.clamp(0.0, 1.0)
                if self.normalize:
                    y = F.normalize(y, p=1.0, dim=1)
                if self.reset:
                    y = T.where(known, y0, y)
        return y

    def extra_repr(self) -> str:
        return (f"k={self.k}, alpha={self.alpha}, norm_type={self.norm_type!r}, clamp={self.clamp}, "
                f"normalize={self.normalize}, reset={self.reset}")
