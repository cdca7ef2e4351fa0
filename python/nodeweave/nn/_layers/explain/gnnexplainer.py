"""GNNExplainer (Ying et al., "GNNExplainer: Generating Explanations for Graph Neural Networks",
NeurIPS 2019), DGL's ``GNNExplainer`` and ``HeteroGNNExplainer``: learn soft masks over the edges
and the feature columns that keep a trained model's prediction."""

from __future__ import annotations

import contextlib
import math
import numbers
from typing import Any, Callable, Dict, Iterator, List, Sequence, Tuple

from .._ns import T, nn
from .._utils import graph_tensor
from nodeweave import errors as nwerr
from nodeweave.graph.transforms import EID, NID, khop_in_subgraph

__all__ = ["GNNExplainer", "HeteroGNNExplainer"]

_EPS = 1e-15   # inside the entropies' logs, as DGL


def _number(value: Any, name: str, cls: str, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
            or (positive and value <= 0) or value < 0:
        raise nwerr.ValueError(f"{cls}: {name} must be a {'positive' if positive else 'non-negative'} number, "
                               f"got {value!r}")
    return float(value)


def _entropy(m: Any) -> Any:
    return -m * T.log(m + _EPS) - (1 - m) * T.log(1 - m + _EPS)


def _edge_mask_std(num_src: int, num_dst: int) -> float:
    """DGL's initial spread of an edge mask: ReLU's gain times sqrt(2 / (source + destination nodes))."""
    gain = nn.init.calculate_gain("relu")
    return gain * math.sqrt(2.0 / (num_src + num_dst)) if num_src + num_dst > 0 else gain


def _check_feat(cls: str, name: str, feat: Any, rows: int) -> None:
    if not isinstance(feat, T.Tensor) or feat.dim() != 2 or not feat.is_floating_point():
        got = f"shape {tuple(feat.shape)}, dtype {feat.dtype}" if isinstance(feat, T.Tensor) else type(feat).__name__
        raise nwerr.ValueError(f"{cls}: {name} must be a floating point (num_nodes, D) tensor, got {got}")
    if feat.shape[0] != rows:
        raise nwerr.ValueError(f"{cls}: {name} has {feat.shape[0]} rows but the graph has {rows} such nodes")


def _node_id(cls: str, node_id: Any, count: int) -> int:
    if isinstance(node_id, T.Tensor):
        if node_id.numel() != 1:
            raise nwerr.ValueError(f"{cls}: node_id must be one node, got {node_id.numel()} ids")
        node_id = node_id.reshape(-1)[0].item()
    if isinstance(node_id, bool) or not isinstance(node_id, numbers.Integral) or not 0 <= node_id < count:
        raise nwerr.ValueError(f"{cls}: node_id must be a node of the graph (0..{count - 1}), got {node_id!r}")
    return int(node_id)


def _check_logits(cls: str, logits: Any) -> None:
    if not isinstance(logits, T.Tensor) or logits.dim() != 2:
        got = tuple(logits.shape) if isinstance(logits, T.Tensor) else type(logits).__name__
        raise nwerr.ValueError(f"{cls}: the model must return 2-D logits (one row per node or graph), got {got}")


@contextlib.contextmanager
def _eval_mode(model: Any) -> Iterator[None]:
    """The model in eval mode for the explanation, back in its former mode afterwards."""
    was_training = bool(getattr(model, "training", False))
    if hasattr(model, "eval"):
        model.eval()
    try:
        yield
    finally:
        if hasattr(model, "train"):
            model.train(was_training)


class _Bar:
    """A tqdm progress bar over the epochs when ``log`` and tqdm is installed (it is optional)."""

    def __init__(self, total: int, desc: str, log: bool) -> None:
        self.bar = None
        if log:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                return
            self.bar = tqdm(total=total, desc=desc, leave=False)

    def update(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _Explainer(nn.Module):
    """What both explainers share: their settings, DGL's regulariser and the Adam loop."""

    def __init__(self, model: Any, num_hops: int, lr: float, num_epochs: int, alpha1: float, alpha2: float,
                 beta1: float, beta2: float, log: bool) -> None:
        super().__init__()
        cls = type(self).__name__
        if not callable(model):
            raise nwerr.TypeError(f"{cls}: model must be a callable module, got {type(model).__name__}")
        for name, value in (("num_hops", num_hops), ("num_epochs", num_epochs)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise nwerr.ValueError(f"{cls}: {name} must be a non-negative int, got {value!r}")
        self.model = model
        self.num_hops, self.num_epochs = int(num_hops), int(num_epochs)
        self.lr = _number(lr, "lr", cls, positive=True)
        self.alpha1, self.alpha2 = _number(alpha1, "alpha1", cls), _number(alpha2, "alpha2", cls)
        self.beta1, self.beta2 = _number(beta1, "beta1", cls), _number(beta2, "beta2", cls)
        self.log = bool(log)

    def _regularize(self, loss: Any, feat_masks: Sequence[Any], edge_masks: Sequence[Any]) -> Any:
        for logits in edge_masks:
            m = T.sigmoid(logits)
            loss = loss + self.alpha1 * m.sum()
            if m.numel():                     # the mean over no edges would be NaN
                loss = loss + self.alpha2 * _entropy(m).mean()
        for logits in feat_masks:
            f = T.sigmoid(logits)
            loss = loss + self.beta1 * f.mean() + self.beta2 * _entropy(f).mean()
        return loss

    def _optimise(self, masks: List[Any], loss_of: Callable[[], Any], desc: str) -> None:
        """``num_epochs`` Adam steps on ``masks`` (Parameters) minimising ``loss_of()``. Gradients are
        taken for the masks only, so the model's own ``.grad`` stay as they were."""
        opt = T.optim.Adam(masks, lr=self.lr)
        bar = _Bar(self.num_epochs, desc, self.log)
        for _ in range(self.num_epochs):
            grads = T.autograd.grad(loss_of(), masks, allow_unused=True)
            for p, g in zip(masks, grads):
                p.grad = T.zeros_like(p) if g is None else g
            opt.step()
            bar.update()
        bar.close()


def _prediction_nll(logits: Any, rows: Any, target: Any) -> Any:
    """The negative log-likelihood of the classes ``target`` in the logit rows ``rows``."""
    return -T.log_softmax(logits, dim=-1).index_select(0, rows).gather(1, target).sum()


def _predicted(logits: Any, rows: Any) -> Any:
    return logits.argmax(dim=-1).index_select(0, rows).unsqueeze(1)


def _all_rows(logits: Any) -> Any:
    return T.arange(logits.shape[0], device=logits.device)


class GNNExplainer(_Explainer):
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
        edge_mask = T.randn(graph.num_edges(), dtype=feat.dtype, device=feat.device) * _edge_mask_std(n, n)
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
        _check_feat(cls, "feat", feat, graph.num_nodes())

    def _explain(self, graph: Any, feat: Any, rows: Any, kwargs: Dict[str, Any], desc: str) -> Tuple[Any, Any]:
        """Masks keeping the model's predictions in the logit rows ``rows`` (None: every row):
        the feature mask ``(D,)`` and the edge mask ``(E,)``, in (0, 1)."""
        with _eval_mode(self.model):
            with T.no_grad():
                logits = self.model(graph=graph, feat=feat, **kwargs)
            _check_logits(type(self).__name__, logits)
            rows = _all_rows(logits) if rows is None else rows
            target = _predicted(logits, rows)
            init_feat, init_edge = self._init_masks(graph, feat)
            feat_mask, edge_mask = nn.Parameter(init_feat.detach().clone()), nn.Parameter(init_edge.detach().clone())

            def loss_of() -> Any:
                out = self.model(graph=graph, feat=feat * T.sigmoid(feat_mask), eweight=T.sigmoid(edge_mask), **kwargs)
                return self._loss_regularize(_prediction_nll(out, rows, target), feat_mask, edge_mask)

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
        node_id = _node_id(type(self).__name__, node_id, graph.num_nodes())
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


class HeteroGNNExplainer(_Explainer):
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
                      * _edge_mask_std(graph.num_nodes(ct[0]), graph.num_nodes(ct[2])) for ct in graph.canonical_etypes}
        return feat_masks, edge_masks

    def _loss_regularize(self, loss: Any, feat_masks: Dict[str, Any], edge_masks: Dict[Any, Any]) -> Any:
        """``loss`` plus the size and entropy terms of every mask (given as logits)."""
        return self._regularize(loss, list(feat_masks.values()), list(edge_masks.values()))

    def _check(self, graph: Any, feat: Any) -> None:
        cls = type(self).__name__
        if not isinstance(feat, dict):
            raise nwerr.TypeError(f"{cls}: feat must be a dict {{node type: features}}, got {type(feat).__name__}")
        missing = [nt for nt in graph.ntypes if nt not in feat]
        if missing:
            raise nwerr.ValueError(f"{cls}: feat has no features for the node types {missing}")
        for nt in graph.ntypes:
            _check_feat(cls, f"feat[{nt!r}]", feat[nt], graph.num_nodes(nt))

    def _explain(self, graph: Any, feat: Dict[str, Any], pick: Callable[[Any], Any], rows: Any,
                 kwargs: Dict[str, Any], desc: str) -> Tuple[Dict[str, Any], Dict[Any, Any]]:
        """Masks keeping the model's predictions in the rows ``rows`` (None: every row) of the
        logits ``pick(model output)``."""
        with _eval_mode(self.model):
            with T.no_grad():
                logits = pick(self.model(graph=graph, feat=feat, **kwargs))
            _check_logits(type(self).__name__, logits)
            rows = _all_rows(logits) if rows is None else rows
            target = _predicted(logits, rows)
            init_feat, init_edge = self._init_masks(graph, feat)
            feat_masks = {k: nn.Parameter(v.detach().clone()) for k, v in init_feat.items()}
            edge_masks = {k: nn.Parameter(v.detach().clone()) for k, v in init_edge.items()}

            def loss_of() -> Any:
                h = {nt: f * T.sigmoid(feat_masks[nt]) for nt, f in feat.items()}
                w = {ct: T.sigmoid(m) for ct, m in edge_masks.items()}
                out = pick(self.model(graph=graph, feat=h, eweight=w, **kwargs))
                return self._loss_regularize(_prediction_nll(out, rows, target), feat_masks, edge_masks)

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
        node_id = _node_id(cls, node_id, graph.num_nodes(ntype))
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
