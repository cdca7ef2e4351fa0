"""GroupRevRes: grouped reversible residual connections for deep GNNs (Li et al., "Training Graph
Neural Networks with 1000 Layers", ICML 2021), DGL's ``GroupRevRes``."""

from __future__ import annotations

import copy
from typing import Any, List

from .._ns import T, nn
from .._checks import positive_int
from nodeweave import errors as nwerr

__all__ = ["GroupRevRes"]


class GroupRevRes(nn.Module):
    r"""Splits the features into ``groups`` equal parts :math:`X_1, \dots, X_C` along the last
    dimension and runs one copy :math:`f_i` of ``gnn_module`` per group:

    .. math::
        X_0' = \sum_{i=2}^{C} X_i,\qquad X_i' = f_i(g, X_{i-1}', U_i) + X_i,\qquad
        X' = X_1' \Vert \dots \Vert X_C'

    with :math:`U_i` the ``i``-th part of each extra argument (also split along its last
    dimension). The block is invertible (:meth:`inverse`), which is what lets the paper train
    1000-layer networks. ``gnn_module`` must map ``(graph, (N, D / C) features, *extra)`` to
    ``(N, D / C)``; the first copy is the module given, the others are deep copies (independent
    parameters, ``gnn_modules.i``).

    ``forward(g, x, *args)`` returns ``(N, D)``. Unlike DGL, the backward pass keeps the
    activations instead of recomputing them from the output (nodeweave's engine has no custom
    autograd functions), so memory grows with depth as for an ordinary residual network; in
    exchange ``x`` stays usable after the call (DGL releases its storage).

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import GraphConv, GroupRevRes
    >>> g = nw.add_self_loop(nw.graph(([0, 1, 2], [1, 2, 0])))
    >>> block = GroupRevRes(GraphConv(4, 4), groups=2)
    >>> x = nc.randn(3, 8)
    >>> y = block(g, x)
    >>> tuple(y.shape), bool((block.inverse(g, y) - x).abs().max().item() < 1e-5)
    ((3, 8), True)
    """

    def __init__(self, gnn_module: Any, groups: int = 2) -> None:
        super().__init__()
        self.groups = positive_int(groups, "groups", "GroupRevRes")
        if groups < 2:
            raise nwerr.ValueError(f"GroupRevRes: groups must be at least 2 (the residual of one group is the sum of "
                                   f"the others), got {groups}")
        if not isinstance(gnn_module, nn.Module):
            raise nwerr.TypeError(f"GroupRevRes: gnn_module must be a {nn.Module.__module__}.Module, got "
                                  f"{type(gnn_module).__name__}")
        self.gnn_modules = nn.ModuleList([gnn_module] + [copy.deepcopy(gnn_module) for _ in range(groups - 1)])

    def _split(self, t: Any, name: str) -> List[Any]:
        if not isinstance(t, T.Tensor) or t.dim() == 0:
            raise nwerr.TypeError(f"GroupRevRes: {name} must be a tensor with a feature dimension to split into "
                                  f"{self.groups} groups, got {type(t).__name__ if not isinstance(t, T.Tensor) else 'a scalar'}")
        if t.shape[-1] % self.groups:
            raise nwerr.ValueError(f"GroupRevRes: the last dimension of {name} ({t.shape[-1]}) must be divisible by "
                                   f"groups={self.groups}")
        return list(t.chunk(self.groups, -1))

    def _args(self, args: Any) -> List[tuple]:
        parts = [self._split(a, f"args[{j}]") for j, a in enumerate(args)]
        return [tuple(p[i] for p in parts) for i in range(self.groups)]

    def forward(self, g: Any, x: Any, *args: Any) -> Any:
        xs = self._split(x, "x")
        extra = self._args(args)
        y = xs[1]
        for part in xs[2:]:
            y = y + part
        ys = []
        for i, f in enumerate(self.gnn_modules):
            y = xs[i] + f(g, y, *extra[i])
            ys.append(y)
        return T.cat(ys, -1)

    def inverse(self, g: Any, y: Any, *args: Any) -> Any:
        """The input ``x`` with ``forward(g, x, *args) == y`` (the modules in their current mode):
        :math:`X_i = X_i' - f_i(g, X_{i-1}', U_i)` from the last group down, with
        :math:`X_0' = \\sum_{i \\ge 2} X_i`."""
        ys = self._split(y, "y")
        extra = self._args(args)
        xs: List[Any] = [None] * self.groups
        for i in range(self.groups - 1, 0, -1):
            xs[i] = ys[i] - self.gnn_modules[i](g, ys[i - 1], *extra[i])
        y0 = xs[1]
        for part in xs[2:]:
            y0 = y0 + part
        xs[0] = ys[0] - self.gnn_modules[0](g, y0, *extra[0])
        return T.cat(xs, -1)
