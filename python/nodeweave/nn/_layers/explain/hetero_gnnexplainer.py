"""HeteroGNNExplainer: :class:`GNNExplainer` on heterogeneous graphs, DGL's ``HeteroGNNExplainer``."""

from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

from .._ns import T, nn
from .._utils import graph_tensor
from ._common import (ExplainerBase, all_rows, check_hetero_feat, check_logits, checked_node_id, edge_mask_std,
                      eval_mode, predicted, prediction_nll)
from nodeweave import errors as nwerr
from nodeweave.graph.transforms import NID, khop_in_subgraph

__all__ = ["HeteroGNNExplainer"]


class HeteroGNNExplainer(ExplainerBase):
    r""":class:`GNNExplainer` on a heterogeneous graph: one feature mask per node type and one edge
    mask per canonical edge type, all in one loss (each mask's size and entropy terms added).
    The edge mask of relation :math:`(s, r, d)` starts at :math:`\mathcal N(0, (\sqrt 2 \cdot
    \sqrt{2 / (N_s + N_d)})^2)`, DGL's initialisation.

    The model is called as ``model(graph=g, feat={ntype: h}, eweight={canonical_etype: w},
    **kwargs)``. For :meth:`explain_node` it returns ``{ntype: logits}``; for :meth:`explain_graph`
    the ``(batch_size, C)`` logits. Parameters as :class:`GNNExplainer`.

    >>> import nodeweave as nw, nodeweave.core as nc, nodeweave.function as fn
    >>> from nodeweave.nn import HeteroGNNExplainer
    >>> g = nw.heterograph({("user", "plays", "game"): ([0, 1], [0, 0]), ("game", "by", "user"): ([0], [1])})
    >>> class Model(nc.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.lin = nc.nn.Linear(2, 3)
    ...     def forward(self, graph, feat, eweight=None):
    ...         with graph.local_scope():
    ...             funcs = {}
    ...             for ct in graph.canonical_etypes:
    ...                 graph.nodes[ct[0]].data["h"] = self.lin(feat[ct[0]])
    ...                 w = nc.ones(graph.num_edges(ct)) if eweight is None else eweight[ct]
    ...                 graph.edges[ct].data["w"] = w.reshape(-1, 1)
    ...                 funcs[ct] = (fn.u_mul_e("h", "w", "m"), fn.sum("m", "out"))
    ...             graph.multi_update_all(funcs, "sum")
    ...             return {nt: graph.nodes[nt].data["out"] for nt in graph.ntypes}
    >>> feat = {"user": nc.randn(2, 2), "game": nc.randn(1, 2)}
    >>> explainer = HeteroGNNExplainer(Model(), num_hops=1, num_epochs=3, log=False)
    >>> new_id, sg, feat_mask, edge_mask = explainer.explain_node("game", 0, g, feat)
    >>> new_id.tolist(), sorted(feat_mask), tuple(edge_mask[("user", "plays", "game")].shape)
    ([0], ['game', 'user'], (2,))
    """

    def __init__(self, model: Any, num_hops: int, lr: float = 0.01, num_epochs: int = 100, *, alpha1: float = 0.005,
                 alpha2: float = 1.0, beta1: float = 1.0, beta2: float = 0.1, log: bool = True) -> None:
        super().__init__(model, num_hops, lr, num_epochs, alpha1, alpha2, beta1, beta2, log)

    def _init_masks(self, graph: Any, feat: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[Tuple[str, str, str], Any]]:
        """Initial logits: ``{ntype: (1, D_t)}`` feature masks and ``{canonical_etype: (E_t,)}`` edge masks."""
        like = next(iter(feat.values()))
        feat_masks = {nt: T.randn(1, f.shape[1], dtype=f.dtype, device=f.device) * 0.1 for nt, f in feat.items()}
        edge_masks = {ct: T.randn(graph.num_edges(ct), dtype=like.dtype, device=like.device)
                      * edge_mask_std(graph.num_nodes(ct[0]), graph.num_nodes(ct[2])) for ct in graph.canonical_etypes}
        return feat_masks, edge_masks

    def _loss_regularize(self, loss: Any, feat_masks: Dict[str, Any], edge_masks: Dict[Any, Any]) -> Any:
        """``loss`` plus the size and entropy terms of every mask (given as logits)."""
        return self._regularize(loss, list(feat_masks.values()), list(edge_masks.values()))

    def _check(self, graph: Any, feat: Any) -> None:
        check_hetero_feat(type(self).__name__, graph, feat)

    def _explain(self, graph: Any, feat: Dict[str, Any], pick: Callable[[Any], Any], rows: Any,
                 kwargs: Dict[str, Any], desc: str) -> Tuple[Dict[str, Any], Dict[Any, Any]]:
        """Masks keeping the model's predictions in the rows ``rows`` (None: every row) of the
        logits ``pick(model output)``."""
        with eval_mode(self.model):
            with T.no_grad():
                logits = pick(self.model(graph=graph, feat=feat, **kwargs))
            check_logits(type(self).__name__, logits)
            rows = all_rows(logits) if rows is None else rows
            target = predicted(logits, rows)
            init_feat, init_edge = self._init_masks(graph, feat)
            feat_masks = {k: nn.Parameter(v.detach().clone()) for k, v in init_feat.items()}
            edge_masks = {k: nn.Parameter(v.detach().clone()) for k, v in init_edge.items()}

            def loss_of() -> Any:
                h = {nt: f * T.sigmoid(feat_masks[nt]) for nt, f in feat.items()}
                w = {ct: T.sigmoid(m) for ct, m in edge_masks.items()}
                out = pick(self.model(graph=graph, feat=h, eweight=w, **kwargs))
                return self._loss_regularize(prediction_nll(out, rows, target), feat_masks, edge_masks)

            self._optimise([*feat_masks.values(), *edge_masks.values()], loss_of, desc)
        return ({k: T.sigmoid(v.detach()).reshape(-1) for k, v in feat_masks.items()},
                {k: T.sigmoid(v.detach()) for k, v in edge_masks.items()})

    def explain_node(self, ntype: str, node_id: Any, graph: Any, feat: Dict[str, Any],
                     **kwargs: Any) -> Tuple[Any, Any, Dict[str, Any], Dict[Any, Any]]:
        """Explains the model's prediction for node ``node_id`` of type ``ntype`` on its
        ``num_hops`` in-neighbourhood (``kwargs`` go to the model unchanged). Returns
        ``(new_node_id, sg, feat_mask, edge_mask)``: the node's id among ``sg``'s ``ntype`` nodes,
        the subgraph, ``{ntype: (D_t,)}`` and ``{canonical_etype: (E_t,)}`` masks of ``sg``."""
        cls = type(self).__name__
        self._check(graph, feat)
        if ntype not in graph.ntypes:
            raise nwerr.ValueError(f"{cls}: ntype {ntype!r} is not a node type of the graph {graph.ntypes}")
        node_id = checked_node_id(cls, node_id, graph.num_nodes(ntype))
        sg, inverse = khop_in_subgraph(graph, {ntype: node_id}, self.num_hops)
        inverse = graph_tensor(inverse[ntype])
        ids = sg.ndata[NID]
        ids = ids if isinstance(ids, dict) else {sg.ntypes[0]: ids}
        sg_feat = {nt: feat[nt].index_select(0, graph_tensor(ids[nt]).long().to(feat[nt].device)) for nt in sg.ntypes}

        def pick(out: Any) -> Any:
            if not isinstance(out, dict) or ntype not in out:
                raise nwerr.ValueError(f"{cls}: for explain_node the model must return a dict {{node type: logits}} "
                                       f"with an entry for {ntype!r}, got {type(out).__name__}")
            return out[ntype]

        rows = inverse.long().to(sg_feat[ntype].device)
        feat_mask, edge_mask = self._explain(sg, sg_feat, pick, rows, kwargs,
                                             f"Explain node {node_id} with type {ntype}")
        return inverse, sg, feat_mask, edge_mask

    def explain_graph(self, graph: Any, feat: Dict[str, Any], **kwargs: Any) -> Tuple[Dict[str, Any], Dict[Any, Any]]:
        """Explains the model's graph prediction (every row of its logits). Returns
        ``({ntype: (D_t,)}, {canonical_etype: (E_t,)})`` masks, values in (0, 1)."""
        self._check(graph, feat)
        return self._explain(graph, dict(feat), lambda out: out, None, dict(kwargs), "Explain graph")
