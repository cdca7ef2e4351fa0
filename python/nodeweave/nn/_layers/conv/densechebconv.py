"""DenseChebConv: Chebyshev spectral graph convolution (Defferrard et al., NeurIPS 2016) on a dense
adjacency matrix (DGL's ``DenseChebConv``)."""

from __future__ import annotations

import numbers
from typing import Any, Union

import numpy as np

from .._ns import B, T, nn
from .._checks import positive_int
from ._dense import dense_adj
from nodeweave import errors as nwerr

__all__ = ["DenseChebConv"]


class DenseChebConv(nn.Module):
    r"""Chebyshev convolution of order ``k`` on a dense square adjacency ``adj``:

    .. math::
        H = \sum_{t=0}^{k-1} T_t(\tilde L) X W_t + b,\qquad
        \tilde L = \frac{2}{\lambda_{max}} L - I,\quad L = I - D^{-1/2} A D^{-1/2}

    with :math:`D` the row sums of ``adj`` (weighted in-degrees, clamped to 1),
    :math:`T_0 = I`, :math:`T_1 = \tilde L`, :math:`T_t = 2 \tilde L T_{t-1} - T_{t-2}`. No
    activation (as DGL). It equals :class:`ChebConv` with ``activation=None`` when ``W_t`` are the
    blocks of ``ChebConv``'s linear weight.

    Parameters
    ----------
    in_feats, out_feats : int
    k : int
        Number of Chebyshev terms.
    bias : bool

    ``forward(adj, feat, lambda_max=None)``: ``adj`` ``(N, N)``, ``feat`` ``(N, in_feats)``;
    ``lambda_max`` is the largest eigenvalue of :math:`L` (a number or a one-element tensor); None
    computes it (with NumPy, as a constant: no gradient flows through it). ``W`` is
    ``(k, in_feats, out_feats)``, each slice Xavier-normal with the ReLU gain; ``bias`` starts at 0.

    >>> import nodeweave.core as nc
    >>> from nodeweave.nn import DenseChebConv
    >>> adj = nc.tensor([[0.0, 1.0], [1.0, 0.0]])
    >>> conv = DenseChebConv(3, 2, k=2)
    >>> tuple(conv(adj, nc.ones(2, 3), lambda_max=2.0).shape)
    (2, 2)
    """

    def __init__(self, in_feats: int, out_feats: int, k: int, bias: bool = True) -> None:
        super().__init__()
        self._in_feats = positive_int(in_feats, "in_feats", "DenseChebConv")
        self._out_feats = positive_int(out_feats, "out_feats", "DenseChebConv")
        self._k = positive_int(k, "k", "DenseChebConv")
        self.W = nn.Parameter(T.empty(k, in_feats, out_feats))
        if bias:
            self.bias = nn.Parameter(T.empty(out_feats))
        else:
            self.register_buffer("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Each ``W[t]`` Xavier-normal (ReLU gain); zero ``bias``."""
        if self.bias is not None:
            nn.init.zeros_(self.bias)
        gain = nn.init.calculate_gain("relu")
        for t in range(self._k):  # per slice: the fans are those of one (in, out) matrix
            nn.init.xavier_normal_(self.W[t], gain=gain)

    def forward(self, adj: Any, feat: Any, lambda_max: Union[None, float, Any] = None) -> Any:
        name = "DenseChebConv"
        adj = dense_adj(name, adj, feat, square=True)
        if feat.shape[1] != self._in_feats:
            raise nwerr.ValueError(f"{name}: feat has {feat.shape[1]} features, expected in_feats={self._in_feats}")
        n = adj.shape[0]
        d_invsqrt = adj.sum(1).clamp(min=1).pow(-0.5)
        eye = T.eye(n, dtype=feat.dtype, device=feat.device)
        lap = eye - d_invsqrt.unsqueeze(1) * adj * d_invsqrt.unsqueeze(0)
        lam = self._lambda_max(lap, lambda_max)
        l_hat = lap * (2.0 / lam) - eye
        # T_t(L~) X by the recurrence on X (as ChebConv), not on matrices: k matrix-vector products.
        x_prev, x_cur = feat, l_hat @ feat
        rst = feat @ self.W[0]
        if self._k > 1:
            rst = rst + x_cur @ self.W[1]
        for t in range(2, self._k):
            x_prev, x_cur = x_cur, 2 * (l_hat @ x_cur) - x_prev
            rst = rst + x_cur @ self.W[t]
        if self.bias is not None:
            rst = rst + self.bias
        return rst

    @staticmethod
    def _lambda_max(lap: Any, lambda_max: Any) -> Any:
        """``lambda_max`` as a number or a 0-d tensor; its largest eigenvalue's real part when None."""
        if lambda_max is None:
            vals = np.linalg.eigvals(B.to_numpy(lap.detach()).astype(np.float64))
            return float(vals.real.max())
        if isinstance(lambda_max, T.Tensor):
            if lambda_max.numel() != 1:
                raise nwerr.ValueError(f"DenseChebConv: lambda_max must be one number, got a tensor of shape "
                                       f"{tuple(lambda_max.shape)}")
            return lambda_max.reshape(()).to(lap)
        if isinstance(lambda_max, (list, tuple)) and len(lambda_max) == 1:
            lambda_max = lambda_max[0]
        if isinstance(lambda_max, bool) or not isinstance(lambda_max, numbers.Real):
            raise nwerr.TypeError(f"DenseChebConv: lambda_max must be a number, a one-element tensor or None, got "
                                  f"{type(lambda_max).__name__}")
        return float(lambda_max)
