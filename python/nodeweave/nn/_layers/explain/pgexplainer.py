"""PGExplainer (Luo et al., "Parameterized Explainer for Graph Neural Network", NeurIPS 2020),
DGL's ``PGExplainer``: a small network that maps the model's embeddings of an edge's two ends to
the edge's importance, trained once over many graphs or nodes and then applied to any of them."""

from __future__ import annotations

import math
import numbers
from typing import Any, List, Optional, Tuple

import numpy as np

from .._ns import T, nn, F
from .._utils import graph_tensor
from ._common import check_feat
from nodeweave import errors as nwerr
from nodeweave.graph.transforms import NID, khop_in_subgraph

__all__ = ["PGExplainer", "reverse_edge_ids", "node_id_list"]

_HIDDEN = 64          # width of the explanation network's hidden layer, as DGL
_PROB_EPS = 1e-6      # added to the target probability inside the log, as DGL
_ENT_SCALE = 0.99     # the mask is squeezed into [0.01, 0.99] before its entropy, as DGL


def reverse_edge_ids(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """For each edge ``u -> v``, the id of an edge ``v -> u`` (the first one, when repeated), or
    the edge's own id when there is none.

    >>> reverse_edge_ids(np.array([0, 1, 1]), np.array([1, 0, 2])).tolist()
    [1, 0, 2]
    """
    n = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
    keys = src.astype(np.int64) * n + dst
    order = np.argsort(keys, kind="stable")
    want = dst.astype(np.int64) * n + src
    pos = np.searchsorted(keys[order], want)
    pos = np.minimum(pos, max(len(keys) - 1, 0))
    found = keys[order][pos] == want if len(keys) else np.zeros(0, bool)
    return np.where(found, order[pos] if len(keys) else 0, np.arange(len(src)))


def node_id_list(cls: str, nodes: Any, count: int, what: str = "nodes") -> List[int]:
    """``nodes`` (an int, a sequence of ints, or an int tensor of any backend) as a list of distinct
    node ids below ``count``."""
    if isinstance(nodes, numbers.Integral) and not isinstance(nodes, bool):
        ids = [int(nodes)]
    else:
        arr = graph_tensor(nodes).detach().cpu().numpy() if hasattr(nodes, "shape") and not isinstance(
            nodes, np.ndarray) else np.asarray(nodes)
        if arr.dtype.kind not in "iu" and arr.size:
            raise nwerr.ValueError(f"{cls}: {what} must be node ids (ints), got dtype {arr.dtype}")
        ids = [int(v) for v in arr.reshape(-1)]
    if not ids:
        raise nwerr.ValueError(f"{cls}: {what} must hold at least one node")
    bad = [v for v in ids if not 0 <= v < count]
    if bad:
        raise nwerr.ValueError(f"{cls}: {what} must be nodes of the graph (0..{count - 1}), got {bad[:5]}")
    if len(set(ids)) != len(ids):
        raise nwerr.ValueError(f"{cls}: {what} must not repeat a node, got {ids}")
    return ids


def _real(value: Any, name: str, cls: str, lo: float = -math.inf, hi: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not lo <= value < hi:
        raise nwerr.ValueError(f"{cls}: {name} must be a number in [{lo}, {hi}), got {value!r}")
    return float(value)


class PGExplainer(nn.Module):
    r"""Explains a trained model's predictions with an explanation network :math:`g_\psi` (DGL's
    ``PGExplainer``): edge :math:`u \to v` gets the logit :math:`w_e = g_\psi([z_u \Vert z_v])`
    (graph explanation) or :math:`g_\psi([z_u \Vert z_v \Vert z_c])` (node explanation, :math:`c`
    the explained node), :math:`z` the model's node embeddings; :math:`g_\psi` is ``Linear(k *
    num_features, 64)``, ReLU, ``Linear(64, 1)`` (``elayers``). The edge's weight is
    :math:`\sigma(w_e)`, or in training a relaxed Bernoulli (concrete) sample
    :math:`\sigma((\log u - \log(1 - u) + w_e) / \tau)`, :math:`u` uniform in ``[sample_bias, 1 -
    sample_bias]`` and :math:`\tau` the temperature; the mask averages the weights of ``u -> v`` and
    ``v -> u`` (an edge without a reverse keeps its own).

    The loss (:meth:`loss`) is DGL's: :math:`-\overline{\log(p_{\hat y} + 10^{-6})}` of the model's
    prediction :math:`\hat y` on the masked graph, plus ``coff_budget * relu(sum of weights -
    coff_budget)`` (``coff_budget * sum`` when ``coff_budget <= 0``), plus ``coff_connect`` times the
    mean entropy of the mask squeezed into ``[0.01, 0.99]``.

    Parameters (DGL's)
    ----------
    model : module
        Called as ``model(graph, feat, embed=True)`` for the node embeddings (``num_features``
        columns), ``model(graph, feat)`` for the logits (one row per graph, or per node for node
        explanations) and ``model(graph, feat, edge_weight=w)``, which must scale each edge's
        message by ``w``. Extra keyword arguments of the methods go to every call.
    num_features : int
        Width of the model's embeddings.
    num_hops : int, optional
        Message-passing depth of the model; needed for node explanations, which work on each
        node's ``num_hops`` in-neighbourhood.
    explain_graph : bool
        Graph (True) or node (False) explanations.
    coff_budget, coff_connect, sample_bias : float

    Differences from DGL 2.1: the prediction term of the training loss keeps its gradient (DGL
    detaches the masked prediction, so only the size and entropy terms train its explanation
    network); ``loss.backward()`` therefore also reaches the model's parameters, which an optimiser
    over :meth:`parameters` (only ``elayers``', as DGL) leaves unchanged. An edge without a reverse
    edge keeps its own weight (DGL fails).

    >>> import nodeweave as nw, nodeweave.core as nc, nodeweave.function as fn
    >>> from nodeweave.nn import PGExplainer
    >>> class Model(nc.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.lin, self.out = nc.nn.Linear(3, 4), nc.nn.Linear(4, 2)
    ...     def forward(self, g, h, embed=False, edge_weight=None):
    ...         with g.local_scope():
    ...             g.ndata["h"] = self.lin(h)
    ...             g.edata["w"] = nc.ones(g.num_edges(), 1) if edge_weight is None else edge_weight.reshape(-1, 1)
    ...             g.update_all(fn.u_mul_e("h", "w", "m"), fn.sum("m", "h"))
    ...             return g.ndata["h"] if embed else self.out(g.ndata["h"].mean(0, keepdim=True))
    >>> g = nw.graph(([0, 1, 1, 2], [1, 0, 2, 1]))
    >>> explainer = PGExplainer(Model(), num_features=4)
    >>> loss = explainer.train_step(g, nc.randn(3, 3), temperature=5.0)
    >>> loss.backward()
    >>> probs, edge_mask = explainer.explain_graph(g, nc.randn(3, 3))
    >>> tuple(probs.shape), tuple(edge_mask.shape)
    ((1, 2), (4,))
    """

    def __init__(self, model: Any, num_features: int, num_hops: Optional[int] = None, explain_graph: bool = True,
                 coff_budget: float = 0.01, coff_connect: float = 5e-4, sample_bias: float = 0.0) -> None:
        super().__init__()
        cls = type(self).__name__
        if not callable(model):
            raise nwerr.TypeError(f"{cls}: model must be a callable module, got {type(model).__name__}")
        if isinstance(num_features, bool) or not isinstance(num_features, numbers.Integral) or num_features < 1:
            raise nwerr.ValueError(f"{cls}: num_features must be a positive int, got {num_features!r}")
        if num_hops is not None and (isinstance(num_hops, bool) or not isinstance(num_hops, numbers.Integral)
                                     or num_hops < 0):
            raise nwerr.ValueError(f"{cls}: num_hops must be a non-negative int or None, got {num_hops!r}")
        self.model = model
        self.graph_explanation = bool(explain_graph)
        self.num_features = int(num_features) * (2 if self.graph_explanation else 3)
        self.num_hops = None if num_hops is None else int(num_hops)
        self.coff_budget = _real(coff_budget, "coff_budget", cls)
        self.coff_connect = _real(coff_connect, "coff_connect", cls, lo=0.0)
        self.sample_bias = _real(sample_bias, "sample_bias", cls, lo=0.0, hi=0.5 + 1e-12)
        self.elayers = nn.Sequential(nn.Linear(self.num_features, _HIDDEN), nn.ReLU(), nn.Linear(_HIDDEN, 1))
        self.edge_mask: Any = None
        self.sparse_mask_values: Any = None

    def parameters(self, recurse: bool = True):
        """The explanation network's parameters only (as DGL): what an optimiser of the explainer
        should update."""
        return self.elayers.parameters(recurse)

    # ------------------------------------------------------------------ masks and sampling
    def set_masks(self, graph: Any, edge_mask: Any = None) -> None:
        """Sets ``edge_mask``: the given ``(E,)`` weights, or random logits with DGL's spread
        (ReLU gain times ``sqrt(2 / (2N))``)."""
        if edge_mask is None:
            n = graph.num_nodes()
            std = nn.init.calculate_gain("relu") * math.sqrt(2.0 / (2 * n)) if n else 1.0
            edge_mask = T.randn(graph.num_edges()) * std
        self.edge_mask = edge_mask

    def clear_masks(self) -> None:
        """Forgets the mask of the last explanation."""
        self.edge_mask = None

    def concrete_sample(self, w: Any, beta: float = 1.0, training: bool = True) -> Any:
        """Edge weights from the logits ``w``: ``sigmoid(w)``, or in training the relaxed Bernoulli
        sample ``sigmoid((log u - log(1 - u) + w) / beta)``, ``u`` uniform in ``[sample_bias, 1 -
        sample_bias]``."""
        if not training:
            return T.sigmoid(w)
        if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not beta > 0:
            raise nwerr.ValueError(f"{type(self).__name__}: the temperature must be a positive number, got {beta!r}")
        u = T.rand(*tuple(w.shape), dtype=w.dtype, device=w.device)
        u = self.sample_bias + (1 - 2 * self.sample_bias) * u
        return T.sigmoid((T.log(u) - T.log(1 - u) + w) / beta)

    def loss(self, prob: Any, ori_pred: Any) -> Any:
        """DGL's training loss of the last explanation's masks, given the masked prediction's
        probabilities ``prob`` ``(B, C)`` and the unmasked predicted classes ``ori_pred`` ``(B,)``."""
        if self.sparse_mask_values is None or self.edge_mask is None:
            raise nwerr.RuntimeError(f"{type(self).__name__}.loss: no masks yet; call train_step / train_step_node "
                                     "(or explain_* with training=True) first")
        target = prob.gather(-1, ori_pred.reshape(-1, 1).long()) + _PROB_EPS
        pred_loss = (-T.log(target)).mean()
        total = self.sparse_mask_values.sum()
        if self.coff_budget <= 0:
            size_loss = self.coff_budget * total
        else:
            size_loss = self.coff_budget * F.relu(total - self.coff_budget)
        m = self.edge_mask * (2 * _ENT_SCALE - 1.0) + (1.0 - _ENT_SCALE)
        ent = -m * T.log(m) - (1 - m) * T.log(1 - m)
        ent_loss = self.coff_connect * ent.mean() if ent.numel() else 0.0 * total
        return pred_loss + size_loss + ent_loss

    # ------------------------------------------------------------------ shared steps
    def _need(self, graph_mode: bool, what: str) -> None:
        cls = type(self).__name__
        if self.graph_explanation != graph_mode:
            raise nwerr.ValueError(f"{cls}.{what}: the explainer was built with explain_graph="
                                   f"{self.graph_explanation}; {what} needs explain_graph={graph_mode}")
        if not graph_mode and self.num_hops is None:
            raise nwerr.ValueError(f"{cls}.{what}: node explanations need num_hops (the model's depth)")

    def _check_embed(self, embed: Any, rows: int, parts: int, what: str) -> None:
        cls = type(self).__name__
        width = self.num_features // parts
        if not isinstance(embed, T.Tensor) or embed.dim() != 2 or embed.shape[0] != rows or embed.shape[1] != width:
            got = tuple(embed.shape) if isinstance(embed, T.Tensor) else type(embed).__name__
            raise nwerr.ValueError(f"{cls}: model(graph, feat, embed=True) must return ({rows}, num_features="
                                   f"{width}) embeddings of {what}, got {got}")

    def _edge_logits(self, embed: Any, src: np.ndarray, dst: np.ndarray, centre: Optional[np.ndarray]) -> Any:
        """``elayers`` over the rows ``[z_src || z_dst (|| z_centre)]``, one per edge."""
        def rows(ids: np.ndarray) -> Any:
            return embed.index_select(0, T.from_numpy(np.ascontiguousarray(ids, np.int64)).to(embed.device))

        parts = [rows(src), rows(dst)] + ([] if centre is None else [rows(centre)])
        return self.elayers(T.cat(parts, dim=-1)).reshape(-1)

    def _mask(self, values: Any, src: np.ndarray, dst: np.ndarray, temperature: float, training: bool) -> Any:
        values = self.concrete_sample(values, beta=temperature, training=training)
        rev = T.from_numpy(reverse_edge_ids(src, dst)).to(values.device)
        self.sparse_mask_values = values
        self.edge_mask = (values + values.index_select(0, rev)) / 2
        return self.edge_mask

    def _finish(self, training: bool) -> None:
        if not training:
            self.clear_masks()

    # ------------------------------------------------------------------ graph explanations
    def _check_graph(self, graph: Any, feat: Any) -> None:
        cls = type(self).__name__
        if len(graph.ntypes) != 1 or len(graph.canonical_etypes) != 1:
            raise nwerr.ValueError(f"{cls}: the graph must be homogeneous (HeteroPGExplainer takes the others), "
                                   f"got node types {graph.ntypes} and edge types {graph.canonical_etypes}")
        check_feat(cls, "feat", feat, graph.num_nodes())

    def explain_graph(self, graph: Any, feat: Any, temperature: float = 1.0, training: bool = False,
                      **kwargs: Any) -> Tuple[Any, Any]:
        """The model's class probabilities on ``graph`` with its edges weighted by the explanation
        mask, and the mask: ``(probs (B, C), edge_mask (E,))``, mask values in (0, 1)."""
        self._need(True, "explain_graph")
        self._check_graph(graph, feat)
        embed = self.model(graph, feat, embed=True, **kwargs)
        self._check_embed(embed, graph.num_nodes(), 2, "the nodes")
        src, dst = (graph_tensor(t).cpu().numpy() for t in graph.edges())
        mask = self._mask(self._edge_logits(embed.detach(), src, dst, None), src, dst, temperature, training)
        probs = F.softmax(self.model(graph, feat, edge_weight=mask, **kwargs), dim=-1)
        self._finish(training)
        return probs, mask

    def train_step(self, graph: Any, feat: Any, temperature: float, **kwargs: Any) -> Any:
        """The training loss on (a batch of) graphs: the masked prediction should keep the model's
        own prediction."""
        self._need(True, "train_step")
        with T.no_grad():
            pred = self.model(graph, feat, **kwargs).argmax(-1)
        probs, _ = self.explain_graph(graph, feat, temperature, training=True, **kwargs)
        return self.loss(probs, pred)

    # ------------------------------------------------------------------ node explanations
    def explain_node(self, nodes: Any, graph: Any, feat: Any, temperature: float = 1.0, training: bool = False,
                     **kwargs: Any) -> Tuple[Any, Any, Any, Any]:
        """Explains the predictions for ``nodes`` (an id, ids or an id tensor; no repeats), each on
        its ``num_hops`` in-neighbourhood. Returns ``(probs, edge_mask, bg, inverse)``: ``bg`` the
        neighbourhoods batched (original ids in ``bg.ndata[nw.NID]``), ``probs`` the masked
        prediction for each of its nodes ``(N_bg, C)``, ``edge_mask`` ``(E_bg,)`` and ``inverse`` the
        explained nodes' ids in ``bg``."""
        from nodeweave.graph.batch import batch

        self._need(False, "explain_node")
        self._check_graph(graph, feat)
        ids = node_id_list(type(self).__name__, nodes, graph.num_nodes())
        subgraphs, feats, logits, offset, inverse = [], [], [], 0, []
        all_src, all_dst = [], []
        for node in ids:
            sg, inv = khop_in_subgraph(graph, node, self.num_hops)
            sfeat = feat.index_select(0, graph_tensor(sg.ndata[NID]).long().to(feat.device))
            embed = self.model(sg, sfeat, embed=True, **kwargs)
            self._check_embed(embed, sg.num_nodes(), 3, f"the neighbourhood of node {node}")
            src, dst = (graph_tensor(t).cpu().numpy() for t in sg.edges())
            centre = int(graph_tensor(inv).reshape(-1)[0].item())
            logits.append(self._edge_logits(embed.detach(), src, dst, np.full(len(src), centre)))
            subgraphs.append(sg)
            feats.append(sfeat)
            all_src.append(src + offset)
            all_dst.append(dst + offset)
            inverse.append(offset + centre)
            offset += sg.num_nodes()
        bg = batch(subgraphs)
        bfeat = T.cat(feats, dim=0)
        src, dst = np.concatenate(all_src), np.concatenate(all_dst)
        mask = self._mask(T.cat(logits, dim=0), src, dst, temperature, training)
        probs = F.softmax(self.model(bg, bfeat, edge_weight=mask, **kwargs), dim=-1)
        if training:
            self.batched_feats = bfeat
        self._finish(training)
        return probs, mask, bg, T.from_numpy(np.asarray(inverse, np.int64)).to(probs.device)

    def train_step_node(self, nodes: Any, graph: Any, feat: Any, temperature: float, **kwargs: Any) -> Any:
        """The training loss over the explanations of ``nodes``."""
        self._need(False, "train_step_node")
        probs, _, bg, inverse = self.explain_node(nodes, graph, feat, temperature, training=True, **kwargs)
        with T.no_grad():
            pred = self.model(bg, self.batched_feats, **kwargs).argmax(-1)
        return self.loss(probs.index_select(0, inverse), pred.index_select(0, inverse.to(pred.device)))
