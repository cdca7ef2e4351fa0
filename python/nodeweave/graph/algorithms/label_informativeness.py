r"""Label informativeness (Platonov et al., 2023; DGL's ``dgl.label_informativeness``): how much
the class of one end of a random edge tells about the class of the other, as the mutual information
of the two classes normalized by the entropy of one:
:math:`\mathrm{LI} = I(y_\xi, y_\eta) / H(y_\xi)`, 1 when a neighbour's class determines a node's,
0 when it says nothing.

Two ways to draw the edge ``(xi, eta)``: uniformly among edges (:func:`edge_label_informativeness`,
weighting nodes by degree), or a uniform node then a uniform edge of it
(:func:`node_label_informativeness`). Both count on the graph made undirected and simple (each joined
pair once per direction, a self-loop once, as DGL's ``to_bidirected``), take integer labels ``y``
(a tensor of either backend, a NumPy array or a list) and return a Python float computed in float64.
``eps`` is added to every cell of the joint class distribution, as in DGL, so that empty cells
have a logarithm.

>>> import nodeweave as nw
>>> g = nw.graph(([0, 1, 2, 2, 3, 4], [1, 2, 0, 3, 4, 5]))
>>> y = [0, 0, 0, 0, 1, 1]
>>> round(nw.edge_label_informativeness(g, y), 6), round(nw.node_label_informativeness(g, y), 6)
(0.251776, 0.338187)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave.graph.algorithms._labels import labelled_edges, symmetric_pairs
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave import errors as nwerr

__all__ = ["edge_label_informativeness", "node_label_informativeness"]


def _plogp(p: np.ndarray) -> float:
    """:math:`\\sum p \\log p` with :math:`0 \\log 0 = 0`."""
    q = p[p > 0]
    return float(np.sum(q * np.log(q)))


def _prepare(graph: HeteroGraph, y: Any, eps: Any, fn: str):
    """Labels renumbered to the classes present, the symmetric pairs, their in-degrees."""
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, (int, float, np.integer, np.floating)) \
            or not 0 <= eps < 1:
        raise nwerr.ValueError(f"{fn}: eps must be a number in [0, 1), got {eps!r}")
    src, dst, y = labelled_edges(graph, y, fn)
    n = len(y)
    # Classes no node has change no probability; dropping them keeps their empty cells out of the
    # logarithms (DGL's formula then gives nan).
    _, y = np.unique(y, return_inverse=True)
    u, v = symmetric_pairs(src, dst, n)
    if len(u) == 0:
        raise nwerr.ValueError(f"{fn}: the graph has no edges")
    classes = int(y.max()) + 1
    deg = np.bincount(v, minlength=n).astype(np.float64)
    degree_share = np.bincount(y, weights=deg, minlength=classes) / deg.sum()
    if np.count_nonzero(degree_share) < 2:
        raise nwerr.ValueError(f"{fn}: the nodes with edges all have one class, so the class entropy is 0 and "
                               "label informativeness is undefined")
    return y, u, v, deg, degree_share, classes, float(eps)


def edge_label_informativeness(graph: HeteroGraph, y: Any, eps: float = 1e-8) -> float:
    r"""Edge label informativeness: the edge is drawn uniformly, so with the joint class
    distribution :math:`p(c_1, c_2)` of the two ends and its marginal :math:`\bar p` (the
    degree-weighted class distribution),

    .. math:: \mathrm{LI}_{edge} = 2 - \frac{\sum_{c_1, c_2} p(c_1, c_2) \log p(c_1, c_2)}
       {\sum_c \bar p(c) \log \bar p(c)}.

    Raises ValueError without edges, or when the nodes with edges all share one class.
    """
    y, u, v, _, degree_share, classes, eps = _prepare(graph, y, eps, "edge_label_informativeness")
    joint = np.zeros((classes, classes))
    np.add.at(joint, (y[u], y[v]), 1.0)
    joint = joint / joint.sum() + eps
    return 2.0 - _plogp(joint) / _plogp(degree_share)


def node_label_informativeness(graph: HeteroGraph, y: Any, eps: float = 1e-8) -> float:
    r"""Node label informativeness: a node is drawn uniformly among those with edges, then one of
    its edges, giving the joint distribution :math:`p(c_1, c_2)` of (node class, neighbour class);
    with the class distribution of nodes :math:`p(c)` and the degree-weighted one :math:`\bar p(c)`,

    .. math:: \mathrm{LI}_{node} = -\frac{\sum_{c_1, c_2} p(c_1, c_2)
       \log \frac{p(c_1, c_2)}{p(c_1) \bar p(c_2)}}{\sum_c p(c) \log p(c)}.

    Raises ValueError without edges, or when the nodes with edges all share one class.
    """
    y, u, v, deg, degree_share, classes, eps = _prepare(graph, y, eps, "node_label_informativeness")
    node_share = np.bincount(y, minlength=classes) / len(y)
    joint = np.zeros((classes, classes))
    np.add.at(joint, (y[u], y[v]), 1.0 / (np.count_nonzero(deg) * deg[u]))
    joint += eps
    outer = node_share[:, None] * degree_share[None, :]
    ok = outer > 0
    mutual = float(np.sum(joint[ok] * np.log(joint[ok] / outer[ok])))
    return -mutual / _plogp(node_share)
