"""Sequential: a chain of graph modules that all take the graph first, DGL's ``nn.Sequential``."""

from __future__ import annotations

from typing import Any

from ._ns import nn
from nodeweave import errors as nwerr
from nodeweave.graph.heterograph import HeteroGraph

__all__ = ["Sequential"]


class Sequential(nn.Sequential):
    """Calls its modules in turn as ``module(graph, *feats)``, each one's output (a tuple is spread
    over several arguments) the next one's features:

    - ``forward(graph, *feats)`` with one graph runs every module on it;
    - ``forward([g1, g2, ...], *feats)`` runs module ``i`` on graph ``i`` (e.g. the blocks of a
      sampled mini-batch, or a graph hierarchy); it needs one graph per module.

    Returns the last module's output. Built like the tensor library's ``Sequential`` (modules, or an
    ``OrderedDict`` of named modules), whose indexing and ``append`` it keeps.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import Sequential, GraphConv
    >>> net = Sequential(GraphConv(4, 8), GraphConv(8, 2))
    >>> g = nw.add_self_loop(nw.graph(([0, 1], [1, 2])))
    >>> tuple(net(g, nc.randn(3, 4)).shape)
    (3, 2)
    >>> tuple(net([g, g], nc.randn(3, 4)).shape)
    (3, 2)
    """

    def forward(self, graph: Any, *feats: Any) -> Any:
        modules = list(self)
        if isinstance(graph, (list, tuple)):
            if len(graph) != len(modules):
                raise nwerr.ValueError(f"Sequential: graph is a list of {len(graph)} graphs for {len(modules)} "
                                       "modules; pass one graph per module (or a single graph for all)")
            graphs = list(graph)
        elif isinstance(graph, HeteroGraph):
            graphs = [graph] * len(modules)
        else:
            raise nwerr.TypeError(f"Sequential: graph must be a graph or a list of graphs (one per module), "
                                  f"got {type(graph).__name__}")
        out: Any = feats
        for g, module in zip(graphs, modules):
            out = module(g, *(out if isinstance(out, tuple) else (out,)))
        return out
