"""AtomicConv: the atomic convolution of Gomes et al., "Atomic Convolutional Networks for
Predicting Protein-Ligand Binding Affinity" (2017), DGL's ``AtomicConv``."""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from nodeweave import ops

from .._ns import T, nn
from .._utils import check_feat
from nodeweave import errors as nwerr

__all__ = ["AtomicConv"]


def _vector(values: Any, name: str) -> Any:
    """A 1-D floating tensor of ``values`` (a tensor of this backend, a NumPy array or a sequence)."""
    t = values.detach().clone() if isinstance(values, T.Tensor) else T.from_numpy(
        np.ascontiguousarray(np.asarray(values, dtype=np.float32)))
    if not t.is_floating_point():
        t = t.float()
    if t.dim() != 1 or t.shape[0] == 0:
        raise nwerr.ValueError(f"AtomicConv: {name} must be a non-empty 1-D sequence of numbers, got shape "
                               f"{tuple(t.shape)}")
    return t


class RadialPooling(nn.Module):
    r"""Radial filters of the distances: for filter :math:`k`,
    :math:`e^k_{ij} = \exp(-\gamma_k (r_{ij} - r_k)^2)\cdot f^k_{ij}` with the cutoff
    :math:`f^k_{ij} = \tfrac12 (\cos(\pi r_{ij} / c_k) + 1)` where :math:`r_{ij} \le c_k`, else 0.
    ``forward(distances)`` maps ``(E, 1)`` to ``(K, E, 1)``. Parameters are stored ``(K, 1, 1)``."""

    def __init__(self, interaction_cutoffs: Any, rbf_kernel_means: Any, rbf_kernel_scaling: Any) -> None:
        super().__init__()
        c = _vector(interaction_cutoffs, "interaction_cutoffs")
        r = _vector(rbf_kernel_means, "rbf_kernel_means")
        g = _vector(rbf_kernel_scaling, "rbf_kernel_scaling")
        if not c.shape[0] == r.shape[0] == g.shape[0]:
            raise nwerr.ValueError("AtomicConv: interaction_cutoffs, rbf_kernel_means and rbf_kernel_scaling must have "
                                   f"one value per radial filter, got {c.shape[0]}, {r.shape[0]} and {g.shape[0]}")
        self.interaction_cutoffs = nn.Parameter(c.reshape(-1, 1, 1))
        self.rbf_kernel_means = nn.Parameter(r.reshape(-1, 1, 1))
        self.rbf_kernel_scaling = nn.Parameter(g.reshape(-1, 1, 1))

    def forward(self, distances: Any) -> Any:
        rbf = T.exp(-self.rbf_kernel_scaling * (distances - self.rbf_kernel_means) ** 2)
        cos = 0.5 * (T.cos(math.pi * distances / self.interaction_cutoffs) + 1)
        cutoff = T.where(distances <= self.interaction_cutoffs, cos, T.zeros_like(cos))
        return rbf * cutoff


class AtomicConv(nn.Module):
    r"""Atomic convolution: radial filters of each edge's length, summed per neighbour type.

    With :math:`e^k_{ij}` the :class:`RadialPooling` filters of the distance of edge
    :math:`j \to i` and :math:`z_j` the feature (atomic number) of atom :math:`j`:

    .. math::
        p_{i,t,k} = \sum_{j \in N(i)} e^k_{ij}\, [z_j = t] \qquad
        \text{(or } \textstyle\sum_j e^k_{ij} z_j \text{ without } ``features\_to\_use``\text{)}

    flattened to ``(N_dst, T * K)`` with index ``t * K + k`` (DGL's layout). The paper's formula
    differs; this follows its authors' code, as DGL does.

    Parameters
    ----------
    interaction_cutoffs, rbf_kernel_means, rbf_kernel_scaling : tensor or sequence of K numbers
        Initial :math:`c_k`, :math:`r_k`, :math:`\gamma_k`; all three are learnable
        (``radial_pooling.*``).
    features_to_use : tensor or sequence of T numbers, optional
        The atom types to count (a parameter that does not require grad, as DGL). Without it
        ``feat`` itself weights the filters (T = 1).

    ``forward(graph, feat, distances)``: ``feat`` ``(N_src, 1)``, ``distances`` ``(E, 1)``. One
    fused ``u_mul_e`` / sum gSpMM builds the output; no per-edge ``T * K`` tensor.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import AtomicConv
    >>> g = nw.graph(([0, 1, 2, 3, 2, 5], [1, 2, 3, 4, 0, 3]))
    >>> conv = AtomicConv([2.0, 2.0, 2.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    >>> [round(v, 4) for v in conv(g, nc.ones(6, 1), nc.ones(6, 1))[3].tolist()]   # node 3: two in-edges
    [1.0, 1.0, 1.0]
    """

    def __init__(self, interaction_cutoffs: Any, rbf_kernel_means: Any, rbf_kernel_scaling: Any,
                 features_to_use: Optional[Any] = None) -> None:
        super().__init__()
        self.radial_pooling = RadialPooling(interaction_cutoffs, rbf_kernel_means, rbf_kernel_scaling)
        if features_to_use is None:
            self.num_channels = 1
            self.features_to_use = None
        else:
            types = _vector(features_to_use, "features_to_use")
            self.num_channels = types.shape[0]
            self.features_to_use = nn.Parameter(types, requires_grad=False)

    def forward(self, graph: Any, feat: Any, distances: Any) -> Any:
        name = "AtomicConv"
        check_feat(name, "feat", feat, graph.num_src_nodes(), "source nodes", 1, "feature size")
        check_feat(name, "distances", distances, graph.num_edges(), "edges", 1, "feature size")
        he = self.radial_pooling(distances).to(feat)                  # (K, E, 1)
        he = he.squeeze(-1).transpose(0, 1)                           # (E, K)
        if self.features_to_use is not None:
            feat = (feat == self.features_to_use.to(feat)).to(feat)  # (N, T) one-hot atom types
        # out[v, t, k] = sum over in-edges (u -> v) of feat[u, t] * he[e, k]: one broadcast gSpMM.
        out = ops.u_mul_e_sum(graph, feat.unsqueeze(-1), he.unsqueeze(1))
        return out.reshape(graph.num_dst_nodes(), -1)
