"""How much edges join nodes of the same class (DGL's ``dgl.homophily``): node, edge, LINKX and
adjusted homophily. Each takes a graph with one edge type from a node type to itself and one integer
class label per node (``y``: a tensor of either backend, a NumPy array or a list), and returns a
Python float computed in float64.

Neighbours are predecessors: node ``v`` looks at its in-edges, one per edge (parallel edges count
several times, a self-loop counts).

>>> import nodeweave as nw
>>> g = nw.graph(([1, 2, 0, 4], [0, 1, 2, 3]))
>>> y = [0, 0, 0, 0, 1]
>>> nw.edge_homophily(g, y), nw.node_homophily(g, y), round(nw.adjusted_homophily(g, y), 6)
(0.75, 0.6, -0.142857)
>>> round(nw.linkx_homophily(nw.graph(([0, 1, 2, 3], [1, 2, 0, 4])), y), 6)
0.2
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nodeweave.graph.algorithms._labels import labelled_edges, symmetric_pairs
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave import errors as nwerr

__all__ = ["node_homophily", "edge_homophily", "linkx_homophily", "adjusted_homophily"]


def node_homophily(graph: HeteroGraph, y: Any) -> float:
    r"""Node homophily (Pei et al., Geom-GCN, 2020; named so by Lim et al., 2021): the mean over
    all nodes of the fraction of a node's in-edges that come from its own class,

    .. math:: \frac{1}{|V|} \sum_{v \in V} \frac{|\{u \in N(v) : y_u = y_v\}|}{|N(v)|},

    where a node without in-edges counts as 0 (as in DGL).
    """
    src, dst, y = labelled_edges(graph, y, "node_homophily")
    n = len(y)
    if n == 0:
        raise nwerr.ValueError("node_homophily: the graph has no nodes")
    same = np.bincount(dst, weights=(y[src] == y[dst]).astype(np.float64), minlength=n)
    deg = np.bincount(dst, minlength=n).astype(np.float64)
    return float(np.mean(np.divide(same, deg, out=np.zeros(n), where=deg > 0)))


def edge_homophily(graph: HeteroGraph, y: Any) -> float:
    r"""Edge homophily (Zhu et al., 2020): the fraction of edges whose two ends share a class,
    :math:`|\{(u, v) \in E : y_u = y_v\}| / |E|`."""
    src, dst, y = labelled_edges(graph, y, "edge_homophily")
    if len(src) == 0:
        raise nwerr.ValueError("edge_homophily: the graph has no edges")
    return float(np.mean(y[src] == y[dst]))


def linkx_homophily(graph: HeteroGraph, y: Any) -> float:
    r"""Class-insensitive homophily (Lim et al., LINKX, 2021): over the :math:`C = \max(y) + 1`
    classes, the part of each class's same-class in-edge fraction above the class's share of nodes,

    .. math:: \frac{1}{C - 1} \sum_{k=0}^{C-1} \max\left(0, \frac{\sum_{v \in C_k}
       |\{u \in N(v) : y_u = y_v\}|}{\sum_{v \in C_k} |N(v)|} - \frac{|C_k|}{|V|}\right);

    a class whose nodes have no in-edges adds 0. Needs at least two classes (:math:`C \ge 2`).
    """
    src, dst, y = labelled_edges(graph, y, "linkx_homophily")
    n = len(y)
    classes = int(y.max()) + 1 if n else 0
    if classes < 2:
        raise nwerr.ValueError(f"linkx_homophily: y must name at least 2 classes (max(y) + 1 >= 2), got {classes}")
    same = np.bincount(y[dst], weights=(y[src] == y[dst]).astype(np.float64), minlength=classes)
    deg = np.bincount(y[dst], minlength=classes).astype(np.float64)
    size = np.bincount(y, minlength=classes) / n
    ratio = np.divide(same, deg, out=np.zeros(classes), where=deg > 0)
    gain = np.where(deg > 0, np.maximum(0.0, ratio - size), 0.0)
    return float(gain.sum() / (classes - 1))


def adjusted_homophily(graph: HeteroGraph, y: Any) -> float:
    r"""Adjusted homophily (Platonov et al., 2023): edge homophily corrected for the same-class
    edges expected from the class sizes and degrees alone,

    .. math:: \frac{h_{edge} - \sum_k \bar p_k^2}{1 - \sum_k \bar p_k^2}, \qquad
       \bar p_k = \frac{\sum_{v : y_v = k} d(v)}{2 |E|},

    on the graph made undirected and simple (each joined pair once per direction, a self-loop once,
    as DGL's ``to_bidirected``). 0 when edges ignore classes, negative when they avoid them.
    Undefined (ValueError) when every edge end has the same class.
    """
    fn = "adjusted_homophily"
    src, dst, y = labelled_edges(graph, y, fn)
    u, v = symmetric_pairs(src, dst, len(y))
    if len(u) == 0:
        raise nwerr.ValueError(f"{fn}: the graph has no edges")
    h_edge = float(np.mean(y[u] == y[v]))
    degree_share = np.bincount(y[v], minlength=int(y.max()) + 1) / len(u)   # in-degree mass per class
    adjust = float(np.sum(degree_share ** 2))
    if np.isclose(adjust, 1.0):
        raise nwerr.ValueError(f"{fn}: every edge joins nodes of class {int(y[v[0]])}, so the adjustment "
                               "1 - sum(p_k^2) is 0 and the measure is undefined")
    return (h_edge - adjust) / (1.0 - adjust)
