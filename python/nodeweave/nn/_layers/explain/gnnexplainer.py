"""GNNExplainer (Ying et al., "GNNExplainer: Generating Explanations for Graph Neural Networks",
NeurIPS 2019), DGL's ``GNNExplainer``: learns soft masks over the edges and the feature columns
that keep a trained model's prediction."""

from __future__ import annotations

from typing import Any, Dict, Tuple

from .._ns import T, nn
from .._utils import graph_tensor
from ._common import (ExplainerBase, all_rows, check_feat, check_logits, checked_node_id, edge_mask_std, eval_mode,
                      predicted, prediction_nll)
from nodeweave import errors as nwerr
from nodeweave.graph.transforms import EID, NID, khop_in_subgraph

__all__ = ["GNNExplainer"]


class GNNExplainer(ExplainerBase):
    r"""Learns an edge mask :math:`M` (one logit per edge) and a feature mask :math:`F` (one logit
    per feature column) minimising

    .. math::
        -\log p_{\hat y}(\text{masked input}) + \alpha_1 \sum_e \sigma(M_e) + \alpha_2
        \overline{H(\sigma(M))} + \beta_1 \overline{\sigma(F)} + \beta_2 \overline{H(\sigma(F))}

    with :math:`\hat y` the model's own prediction on the unmasked input, :math:`H(m) = -m\log(m +
    \epsilon) - (1 - m)\log(1 - m + \epsilon)`, :math:`\epsilon = 10^{-15}` and bars for means. The
    masked input is ``feat * sigmoid(F)`` with ``eweight = sigmoid(M)``. Adam (``lr``) runs
    ``num_epochs`` steps from :math:`F \sim \mathcal N(0, 0.1^2)` and :math:`M \sim \mathcal N(0,
    (\sqrt 2 \cdot \sqrt{2 / 2N})^2)` (``N`` nodes), DGL's initialisation (``_init_masks``).

    Parameters (DGL's)
    ----------
    model : module
        Called as ``model(graph=g, feat=h, eweight=w, **kwargs)``; ``eweight`` (one weight per edge)
        must scale the messages. Returns logits: one row per node (:meth:`explain_node`) or per graph
        (:meth:`explain_graph`).
    num_hops : int
        Message-passing depth of the model: :meth:`explain_node` works on the ``num_hops``
        in-neighbourhood.
    lr : float
    num_epochs : int
    alpha1, alpha2, beta1, beta2 : float
        Weights of the edge mask's size and entropy and the feature mask's mean and entropy.
    log : bool
        Show a progress bar (tqdm, when installed).

    Only the masks are optimised: the model's parameters receive no gradient, and the model is
    put in eval mode for the explanation and back in its former mode afterwards.

    >>> import nodeweave as nw, nodeweave.core as nc, nodeweave.function as fn
    >>> from nodeweave.nn import GNNExplainer
    >>> class Model(nc.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.lin = nc.nn.Linear(3, 2)
    ...     def forward(self, graph, feat, eweight=None):
    ...         with graph.local_scope():
    ...             graph.ndata["h"] = self.lin(feat)
    ...             graph.edata["w"] = nc.ones(graph.num_edges(), 1) if eweight is None else eweight.reshape(-1, 1)
    ...             graph.update_all(fn.u_mul_e("h", "w", "m"), fn.sum("m", "h"))
    ...             return graph.ndata["h"]
    >>> g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
    >>> explainer = GNNExplainer(Model(), num_hops=1, num_epochs=5, log=False)
    >>> new_id, sg, feat_mask, edge_mask = explainer.explain_node(2, g, nc.randn(4, 3))
    >>> new_id.tolist(), sg.num_nodes(), tuple(feat_mask.shape), tuple(edge_mask.shape)
    ([1], 2, (3,), (1,))
    """

    def __init__(self, model: Any, num_hops: int, lr: float = 0.01, num_epochs: int = 100, *, alpha1: float = 0.005,
                 alpha2: float = 1.0, beta1: float = 1.0, beta2: float = 0.1, log: bool = True) -> None:
        super().__init__(model, num_hops, lr, num_epochs, alpha1, alpha2, beta1, beta2, log)

    def _init_masks(self, graph: Any, feat: Any) -> Tuple[Any, Any]:
        """Initial logits: the feature mask ``(1, D)`` and the edge mask ``(E,)``, in ``feat``'s dtype."""
        n = graph.num_nodes()
        feat_mask = T.randn(1, feat.shape[1], dtype=feat.dtype, device=feat.device) * 0.1
        edge_mask = T.randn(graph.num_edges(), dtype=feat.dtype, device=feat.device) * edge_mask_std(n, n)
        return feat_mask, edge_mask

    def _loss_regularize(self, loss: Any, feat_mask: Any, edge_mask: Any) -> Any:
        """``loss`` plus the size and entropy terms of both masks (given as logits)."""
        return self._regularize(loss, [feat_mask], [edge_mask])

    def _check(self, graph: Any, feat: Any) -> None:
        cls = type(self).__name__
        if not graph.is_homogeneous:
            raise nwerr.ValueError(f"{cls}: the graph must be homogeneous (one node type and one edge type; "
                                   f"HeteroGNNExplainer takes the others), got node types {graph.ntypes} and "
                                   f"edge types {graph.canonical_etypes}")
        check_feat(cls, "feat", feat, graph.num_nodes())

    def _explain(self, graph: Any, feat: Any, rows: Any, kwargs: Dict[str, Any], desc: str) -> Tuple[Any, Any]:
        """Masks keeping the model's predictions in the logit rows ``rows`` (None: every row):
        the feature mask ``(D,)`` and the edge mask ``(E,)``, in (0, 1)."""
        with eval_mode(self.model):
            with T.no_grad():
                logits = self.model(graph=graph, feat=feat, **kwargs)
            check_logits(type(self).__name__, logits)
            rows = all_rows(logits) if rows is None else rows
            target = predicted(logits, rows)
            init_feat, init_edge = self._init_masks(graph, feat)
            feat_mask, edge_mask = nn.Parameter(init_feat.detach().clone()), nn.Parameter(init_edge.detach().clone())

            def loss_of() -> Any:
                out = self.model(graph=graph, feat=feat * T.sigmoid(feat_mask), eweight=T.sigmoid(edge_mask), **kwargs)
                return self._loss_regularize(prediction_nll(out, rows, target), feat_mask, edge_mask)

            self._optimise([feat_mask, edge_mask], loss_of, desc)
        return T.sigmoid(feat_mask.detach()).reshape(-1), T.sigmoid(edge_mask.detach())

    def explain_node(self, node_id: Any, graph: Any, feat: Any, **kwargs: Any) -> Tuple[Any, Any, Any, Any]:
        """Explains the model's prediction for node ``node_id`` on its ``num_hops`` in-neighbourhood.

        ``kwargs`` go to the model; those tensors with one row per node or per edge of ``graph``
        (nodes checked first) are sliced to the neighbourhood. Returns ``(new_node_id, sg,
        feat_mask, edge_mask)``: the node's id in ``sg`` (a 1-element id tensor), the subgraph (with
        the original ids in ``sg.ndata[nw.NID]`` / ``sg.edata[nw.EID]``), the feature mask ``(D,)``
        and the mask of ``sg``'s edges ``(E_sg,)``, values in (0, 1), higher for more important.
        """
        self._check(graph, feat)
        node_id = checked_node_id(type(self).__name__, node_id, graph.num_nodes())
        num_nodes, num_edges = graph.num_nodes(), graph.num_edges()
        sg, inverse = khop_in_subgraph(graph, node_id, self.num_hops)
        nodes = graph_tensor(sg.ndata[NID]).long().to(feat.device)
        edges = graph_tensor(sg.edata[EID]).long().to(feat.device)
        for key, item in kwargs.items():
            if isinstance(item, T.Tensor) and item.dim() > 0 and item.shape[0] == num_nodes:
                kwargs[key] = item.index_select(0, nodes.to(item.device))
            elif isinstance(item, T.Tensor) and item.dim() > 0 and item.shape[0] == num_edges:
                kwargs[key] = item.index_select(0, edges.to(item.device))
        inverse = graph_tensor(inverse)
        feat_mask, edge_mask = self._explain(sg, feat.index_select(0, nodes), inverse.long().to(feat.device), kwargs,
                                             f"Explain node {node_id}")
        return inverse, sg, feat_mask, edge_mask

    def explain_graph(self, graph: Any, feat: Any, **kwargs: Any) -> Tuple[Any, Any]:
        """Explains the model's prediction for ``graph`` (every row of its logits: one per graph of a
        batch). Returns ``(feat_mask, edge_mask)``: ``(D,)`` and ``(E,)``, values in (0, 1)."""
        self._check(graph, feat)
        return self._explain(graph, feat, None, dict(kwargs), "Explain graph")
