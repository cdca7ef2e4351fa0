"""TWIRLSConv: an MLP, the TWIRLS propagation (:class:`TWIRLSUnfoldingAndAttention`) and another
MLP, from Yang et al., "Graph Neural Networks Inspired by Classical Iterative Algorithms" (ICML
2021), DGL's ``TWIRLSConv``."""

from __future__ import annotations

from typing import Any

from nodeweave.graph.transforms import add_self_loop, remove_self_loop

from .._ns import nn, F
from .._utils import check_feat, check_homogeneous
from .._checks import positive_int
from .twirls_unfolding import TWIRLSUnfoldingAndAttention
from nodeweave import errors as nwerr

__all__ = ["TWIRLSConv"]

_NORMS = ("none", "batch", "layer")


class _MLP(nn.Module):
    """``num_layers`` Linear layers (``layers.i``); between them (and first, with ``init_activate``)
    ``norms.j`` (when ``norm`` is not 'none'), ReLU and dropout. DGL's TWIRLS MLP: the same
    ``state_dict`` layout. Zero layers is the identity (after the initial activation)."""

    def __init__(self, input_d: int, hidden_d: int, output_d: int, num_layers: int, dropout: float, norm: str,
                 init_activate: bool) -> None:
        super().__init__()
        self.init_activate = init_activate
        self.norm = norm
        self.dropout = dropout
        sizes = [input_d] + [hidden_d] * (num_layers - 1) + [output_d] if num_layers > 0 else []
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])
        n_norms = max(num_layers - 1 + int(init_activate), 0)
        if norm == "batch":
            self.norms = nn.ModuleList([nn.BatchNorm1d(hidden_d) for _ in range(n_norms)])
        elif norm == "layer":
            self.norms = nn.ModuleList([nn.LayerNorm(hidden_d) for _ in range(n_norms)])
        self.reset_params()

    def reset_params(self) -> None:
        """Xavier-normal weights, zero biases."""
        for layer in self.layers:
            nn.init.xavier_normal_(layer.weight)
            nn.init.zeros_(layer.bias)

    def forward(self, x: Any) -> Any:
        step = 0

        def activate(h: Any) -> Any:
            nonlocal step
            if self.norm != "none":
                h = self.norms[step](h)
                step += 1
            return F.dropout(F.relu(h), self.dropout, self.training)

        if self.init_activate:
            x = activate(x)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i != len(self.layers) - 1:
                x = activate(x)
        return x


class TWIRLSConv(nn.Module):
    r"""TWIRLS: ``mlp_aft(unfolding(g', mlp_bef(dropout(feat))))`` with ``g'`` the graph with exactly
    one self-loop per node (existing self-loops are replaced) and ``unfolding`` a
    :class:`TWIRLSUnfoldingAndAttention` of ``prop_step`` steps (see there for the propagation and
    the attention); with ``attention=True`` the edges are reweighted after ``prop_step // 2`` steps
    (and before the first with ``attn_bef``).

    Parameters (DGL's names and defaults)
    ----------
    input_d, output_d, hidden_d : int
    prop_step : int
    num_mlp_before, num_mlp_after : int
        Linear layers before and after the propagation (default 1 each).
    norm : str
        ``'none'``, ``'batch'`` or ``'layer'`` normalization inside the MLPs.
    precond : bool
        Preconditioned propagation (eq. 28) or the normalized-Laplacian one (eq. 30).
    alp, lam : float
        Step size :math:`\alpha` (0: :math:`1/(1+\lambda)`) and smoothing weight :math:`\lambda`.
    attention : bool
    tau, T, p : float
        Attention's lower clip, upper clip (:math:`T \le 0`: none) and :math:`p`.
    use_eta : bool
        Learn a per-dimension weight ``unfolding.etas`` of the attention distance.
    attn_bef : bool
    dropout, attn_dropout, inp_dropout : float
        In the MLPs, on the attention weights, on the input.

    ``forward(graph, feat)``: ``feat`` ``(N, input_d)``; returns ``(N, output_d)``. Without any
    parameter before the propagation (``num_mlp_before=0``, no attention, no input dropout) the
    propagated features are cached, as in DGL, but only reused for the same graph and feature
    objects (DGL reuses them whatever is passed next); a ``feat`` that requires grad is never
    cached.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import TWIRLSConv
    >>> g = nw.graph(([0, 1, 2, 3, 2, 5], [1, 2, 3, 4, 0, 3]))
    >>> conv = TWIRLSConv(10, 2, 16, prop_step=8)
    >>> tuple(conv(g, nc.ones(6, 10)).shape)
    (6, 2)
    """

    def __init__(self, input_d: int, output_d: int, hidden_d: int, prop_step: int, num_mlp_before: int = 1,
                 num_mlp_after: int = 1, norm: str = "none", precond: bool = True, alp: float = 0, lam: float = 1,
                 attention: bool = False, tau: float = 0.2, T: float = -1, p: float = 1, use_eta: bool = False,
                 attn_bef: bool = False, dropout: float = 0.0, attn_dropout: float = 0.0,
                 inp_dropout: float = 0.0) -> None:
        super().__init__()
        name = "TWIRLSConv"
        self.input_d = positive_int(input_d, "input_d", name)
        self.output_d = positive_int(output_d, "output_d", name)
        self.hidden_d = positive_int(hidden_d, "hidden_d", name)
        self.prop_step = positive_int(prop_step, "prop_step", name, allow_zero=True)
        self.num_mlp_before = positive_int(num_mlp_before, "num_mlp_before", name, allow_zero=True)
        self.num_mlp_after = positive_int(num_mlp_after, "num_mlp_after", name, allow_zero=True)
        if norm not in _NORMS:
            raise nwerr.ValueError(f"{name}: norm must be 'none', 'batch' or 'layer', got {norm!r}")
        if num_mlp_before == 0 and num_mlp_after == 0 and input_d != output_d:
            raise nwerr.ValueError(f"{name}: without MLP layers (num_mlp_before = num_mlp_after = 0) the output is the "
                                   f"propagated input, so output_d ({output_d}) must equal input_d ({input_d})")
        self.norm = norm
        self.precond = precond
        self.attention = attention
        self.alp, self.lam, self.tau, self.T, self.p = alp, lam, tau, T, p
        self.use_eta = use_eta
        self.init_att = attn_bef
        self.dropout, self.attn_dropout, self.inp_dropout = dropout, attn_dropout, inp_dropout
        self.attn_aft = prop_step // 2 if attention else -1
        self.cacheable = not attention and num_mlp_before == 0 and inp_dropout <= 0
        self._cache: Any = None
        # Widths around the propagation: a missing MLP passes its input through.
        size_bef_unf = output_d if num_mlp_after == 0 else hidden_d
        prop_d = size_bef_unf if num_mlp_before > 0 else input_d
        self.mlp_bef = _MLP(input_d, hidden_d, size_bef_unf, num_mlp_before, dropout, norm, init_activate=False)
        self.unfolding = TWIRLSUnfoldingAndAttention(prop_d, alp, lam, prop_step, self.attn_aft, tau, T, p, use_eta,
                                                     attn_bef, attn_dropout, precond)
        self.mlp_aft = _MLP(prop_d, hidden_d, output_d, num_mlp_after, dropout, norm,
                            init_activate=num_mlp_before > 0 and num_mlp_after > 0)

    def forward(self, graph: Any, feat: Any) -> Any:
        name = type(self).__name__
        check_homogeneous(name, graph)
        check_feat(name, "feat", feat, graph.num_nodes(), "nodes", self.input_d, "input_d")
        if self.cacheable:
            return self.mlp_aft(self._propagated(graph, feat))
        x = F.dropout(feat, self.inp_dropout, self.training) if self.inp_dropout > 0 else feat
        return self.mlp_aft(self.unfolding(_with_self_loops(graph), self.mlp_bef(x)))

    def _propagated(self, graph: Any, feat: Any) -> Any:
        """The propagation of ``feat`` (no parameter before it), reused for the same graph and
        features."""
        if feat.requires_grad:
            return self.unfolding(_with_self_loops(graph), feat)
        c = self._cache
        if c is None or c[0] is not graph or c[1] is not feat:
            self._cache = c = (graph, feat, self.unfolding(_with_self_loops(graph), feat).detach())
        return c[2]


def _with_self_loops(graph: Any) -> Any:
    """``graph`` with exactly one self-loop per node, appended after the other edges."""
    return add_self_loop(remove_self_loop(graph))
