"""ChebConv: Chebyshev spectral graph convolution of Defferrard et al., "Convolutional Neural
Networks on Graphs with Fast Localized Spectral Filtering" (NeurIPS 2016)."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

from nodeweave import function as fn

from .._ns import T, nn, F
from .._utils import check_feat, check_homogeneous, degree_norm, per_graph_to_nodes
from nodeweave import errors as nwerr

__all__ = ["ChebConv"]


class ChebConv(nn.Module):
    r"""Chebyshev convolution of order ``k``:

    .. math::
        H = \sigma\Big(\sum_{t=0}^{k-1} T_t(\tilde L) X \Theta_t + b\Big),\qquad
        \tilde L = \frac{2}{\lambda_{max}} L - I,\quad L = I - D^{-1/2} A D^{-1/2}

    with :math:`T_0 = X`, :math:`T_1 = \tilde L X`, :math:`T_t = 2 \tilde L T_{t-1} - T_{t-2}`
    (:math:`D` the in-degrees, clamped to 1). One linear layer maps the concatenated
    :math:`T_t` to the output.

    Parameters
    ----------
    in_feats, out_feats : int
    k : int
        Chebyshev order (number of terms).
    activation : callable, optional
        Default ReLU.
    bias : bool

    ``lambda_max`` (in :meth:`forward`): the largest eigenvalue of :math:`L` per graph of a batch
    — a number, a list with one per graph, or a tensor ``(B,)``/``(B, 1)``. None means 2 for
    every graph (with a warning), exact only for bipartite graphs. Homogeneous (and batched)
    graphs only.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import ChebConv
    >>> g = nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3)
    >>> ChebConv(4, 2, k=3)(g, nc.ones(3, 4), lambda_max=[1.5]).shape
    (3, 2)
    """

    def __init__(self, in_feats: int, out_feats: int, k: int,
                 activation: Optional[Callable[[Any], Any]] = F.relu, bias: bool = True) -> None:
        super().__init__()
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise nwerr.ValueError(f"ChebConv: k must be a positive int, got {k!r}")
        self._k = k
        self._in_feats = in_feats
        self._out_feats = out_feats
        self.activation = activation
        self.linear = nn.Linear(k * in_feats, out_feats, bias)

    def reset_parameters(self) -> None:
        """Re-initializes ``linear`` with Linear's default initialization."""
        self.linear.reset_parameters()

    def forward(self, graph: Any, feat: Any,
                lambda_max: Union[None, float, Sequence[float], Any] = None):
        """The Chebyshev filter of ``feat``."""
        name = type(self).__name__
        with graph.local_scope():
            check_homogeneous(name, graph)
            check_feat(name, "feat", feat, graph.num_nodes(), "nodes", self._in_feats)
            d_invsqrt = degree_norm(graph, "in", -0.5, feat)
            re_norm = self._rescale(graph, feat, lambda_max)

            def adj_norm(x):
                # D^-1/2 A D^-1/2 x; the Laplacian is x minus this.
                graph.ndata["h"] = x * d_invsqrt
                graph.update_all(fn.copy_u("h", "m"), fn.sum("m", "h"))
                return graph.ndata.pop("h") * d_invsqrt

            x_0 = feat
            xs = [x_0]
            if self._k > 1:
                x_1 = -re_norm * adj_norm(x_0) + x_0 * (re_norm - 1)
                xs.append(x_1)
                for _ in range(2, self._k):
                    x_i = -2 * re_norm * adj_norm(x_1) + x_1 * 2 * (re_norm - 1) - x_0
                    xs.append(x_i)
                    x_0, x_1 = x_1, x_i
            h = self.linear(T.cat(xs, dim=-1))
            if self.activation is not None:
                h = self.activation(h)
            return h

    def _rescale(self, graph: Any, feat: Any, lambda_max: Any):
        """``2 / lambda_max`` as a number or an ``(N, 1)`` tensor (one value per node)."""
        batch = graph.batch_size
        if lambda_max is None:
            nwerr.warn("ChebConv: lambda_max is not provided, using the default value 2 "
                       "(exact only for bipartite graphs).", stacklevel=3)
            return 1.0
        if isinstance(lambda_max, (int, float)):
            return 2.0 / float(lambda_max)
        if isinstance(lambda_max, (list, tuple)):
            if len(lambda_max) != batch:
                raise nwerr.ValueError(f"ChebConv: lambda_max has {len(lambda_max)} values but the graph "
                                       f"is a batch of {batch}")
            values = [float(v) for v in lambda_max]
            if len(set(values)) == 1:
                return 2.0 / values[0]
            lambda_max = T.tensor(values, dtype=feat.dtype, device=feat.device)
        if not isinstance(lambda_max, T.Tensor):
            raise nwerr.TypeError("ChebConv: lambda_max must be a number, a list or a tensor, got "
                                  f"{type(lambda_max).__name__}")
        lam = lambda_max.to(feat).reshape(-1, 1)
        if lam.shape[0] != batch:
            raise nwerr.ValueError(f"ChebConv: lambda_max has {lam.shape[0]} values but the graph is a "
                                   f"batch of {batch}")
        return 2.0 / per_graph_to_nodes(graph, lam)
