"""The propagation of TWIRLS (Yang et al., "Graph Neural Networks Inspired by Classical Iterative
Algorithms", ICML 2021): unfolded gradient steps of a graph-regularized least squares, with an
optional reweighting of the edges ("attention") by iteratively reweighted least squares. DGL's
``TWIRLSUnfoldingAndAttention``; :class:`TWIRLSConv` wraps it between two MLPs."""

from __future__ import annotations

from typing import Any, Optional, Tuple

from nodeweave import ops

from .._ns import T, nn, F
from .._utils import check_feat, check_homogeneous, graph_tensor
from .._checks import positive_int
from nodeweave import errors as nwerr

__all__ = ["TWIRLSUnfoldingAndAttention"]


def _ones(d: int) -> Any:
    """``T.ones(d)`` for ``__init__``, whose argument ``T`` (DGL's name for the upper clip) hides the
    tensor module there."""
    return T.ones(d)


class TWIRLSUnfoldingAndAttention(nn.Module):
    r"""``prop_step`` propagation steps on features ``Y`` from ``Y^{(0)} = X``.

    With edge weights :math:`w` (1 until an attention step) and weighted in-degrees :math:`D`,
    ``precond=True`` (preconditioned, the paper's eq. 28) takes, with
    :math:`\tilde D = \lambda D + (1 - \lambda) I`,

    .. math::
        Y^{(k+1)} = (1 - \alpha) Y^{(k)} + \alpha\lambda\, \tilde D^{-1/2} A_w \tilde D^{-1/2} Y^{(k)}
                    + \alpha \tilde D^{-1} X

    and ``precond=False`` (eq. 30)
    :math:`Y^{(k+1)} = (1 - \alpha\lambda - \alpha) Y^{(k)} + \alpha\lambda D^{-1/2} A_w D^{-1/2} Y^{(k)}
    + \alpha X`. ``alp=0`` picks :math:`\alpha = 1 / (1 + \lambda)`.

    An attention step (after step ``attn_aft``, and before the first step with ``init_att``)
    reweights each edge from the distance of its ends' features :math:`\eta \odot y`:
    :math:`w_{uv} = 1 / \mathrm{clip}\big((\|\eta \odot (y_u - y_v)\|^2 + 10^{-7})^{1 - p/2}\big) + 10^{-9}`,
    where the clip raises values below :math:`\tau` to :math:`\tau` and, when :math:`T > 0`, sends
    values above :math:`T` to infinity (weight 0); :math:`D` becomes the weighted in-degrees, then
    ``attn_dropout`` drops weights (training only). :math:`\eta` (``etas``, ones) is learnable with
    ``use_eta``; it is the module's only parameter.

    ``forward(g, X)``: a homogeneous graph in which every node has an in-edge (add self-loops, as
    :class:`TWIRLSConv` does), ``X`` ``(N, d)``.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import TWIRLSUnfoldingAndAttention
    >>> g = nw.add_self_loop(nw.graph(([0, 1, 2, 3, 2, 5], [1, 2, 3, 4, 0, 3])))
    >>> prop = TWIRLSUnfoldingAndAttention(10, 1, 1, prop_step=3)
    >>> [round(v, 4) for v in prop(g, nc.ones(6, 5))[:, 0].tolist()]
    [2.5, 2.5, 2.5, 3.7656, 2.5217, 4.0]
    """

    def __init__(self, d: int, alp: float, lam: float, prop_step: int, attn_aft: int = -1, tau: float = 0.2,
                 T: float = -1, p: float = 1, use_eta: bool = False, init_att: bool = False,
                 attn_dropout: float = 0.0, precond: bool = True) -> None:
        super().__init__()
        name = "TWIRLSUnfoldingAndAttention"
        self.d = positive_int(d, "d", name)
        self.prop_step = positive_int(prop_step, "prop_step", name, allow_zero=True)
        self.alp = alp if alp > 0 else 1 / (lam + 1)
        self.lam = lam
        self.tau = tau
        self.T = T
        self.p = p
        self.attn_aft = attn_aft
        self.use_eta = use_eta
        self.init_att = init_att
        self.attn_dropout = attn_dropout
        self.precond = precond
        if use_eta:
            self.etas = nn.Parameter(_ones(d))
        else:
            self.register_parameter("etas", None)

    def forward(self, g: Any, X: Any) -> Any:
        name = type(self).__name__
        check_homogeneous(name, g)
        check_feat(name, "X", X, g.num_nodes(), "nodes", self.d if self.use_eta else None, "d")
        deg = graph_tensor(g.in_degrees()).to(X)
        if bool((deg == 0).any()):
            raise nwerr.ValueError(f"{name}: every node needs an in-edge (the propagation divides by degrees); add "
                                   "self-loops with nodeweave.add_self_loop(g), as TWIRLSConv does")
        w: Optional[Any] = None
        if self.init_att:
            w, deg = self._attention(g, X)
        Y = X
        for k in range(self.prop_step):
            Y = self._propagate(g, Y, X, w, deg)
            if k == self.attn_aft - 1:
                w, deg = self._attention(g, Y)
        return Y

    def _propagate(self, g: Any, Y: Any, X: Any, w: Optional[Any], deg: Any) -> Any:
        alp, lam = self.alp, self.lam
        dl = (lam * deg + (1 - lam)) if self.precond else deg
        d_isqrt = dl.pow(-0.5).unsqueeze(-1)
        h = Y * d_isqrt
        ay = (ops.copy_u_sum(g, h) if w is None else ops.u_mul_e_sum(g, h, w.unsqueeze(-1))) * d_isqrt
        if self.precond:
            return (1 - alp) * Y + (alp * lam) * ay + alp * X / dl.unsqueeze(-1)
        return (1 - alp * lam - alp) * Y + (alp * lam) * ay + alp * X

    def _attention(self, g: Any, Y: Any) -> Tuple[Any, Any]:
        """New edge weights ``(E,)`` (after dropout) and weighted in-degrees ``(N,)`` (before it)."""
        if self.etas is not None:
            Y = Y * self.etas
        sq = (Y * Y).sum(-1, keepdim=True)
        dist = (ops.u_add_v(g, sq, sq) - 2 * ops.u_dot_v(g, Y, Y)).reshape(-1)
        # relu: rounding can make the squared distance slightly negative.
        w = (F.relu(dist) + 1e-7).pow(1 - 0.5 * self.p)
        w = T.where(w < self.tau, T.full_like(w, self.tau), w)
        inv = 1.0 / w
        if self.T > 0:
            inv = T.where(w > self.T, T.zeros_like(inv), inv)
        w = inv + 1e-9
        deg = ops.copy_e_sum(g, w.unsqueeze(-1)).reshape(-1)
        if self.attn_dropout > 0:
            w = F.dropout(w, self.attn_dropout, self.training)
        return w, deg

    def extra_repr(self) -> str:
        return (f"d={self.d}, prop_step={self.prop_step}, alp={self.alp}, lam={self.lam}, "
                f"precond={self.precond}, attn_aft={self.attn_aft}")
