"""HeteroPGExplainer: :class:`PGExplainer` on heterogeneous graphs, DGL's ``HeteroPGExplainer``."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

from .._ns import T, F
from .._utils import graph_tensor
from ._common import check_hetero_feat
from .pgexplainer import PGExplainer, node_id_list
from nodeweave import errors as nwerr
from nodeweave.graph.transforms import NID, khop_in_subgraph

__all__ = ["HeteroPGExplainer"]


class _Flat:
    """A heterograph's nodes and edges numbered as :func:`nodeweave.to_homogeneous` numbers them:
    nodes type by type in ``ntypes`` order, edges relation by relation in ``canonical_etypes``
    order."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.node_offset: Dict[str, int] = {}
        n = 0
        for nt in graph.ntypes:
            self.node_offset[nt] = n
            n += graph.num_nodes(nt)
        self.num_nodes = n
        src, dst, self.edge_slices = [], [], {}
        e = 0
        for ct in graph.canonical_etypes:
            s, d = (graph_tensor(t).cpu().numpy().astype(np.int64) for t in graph.edges(etype=ct))
            src.append(s + self.node_offset[ct[0]])
            dst.append(d + self.node_offset[ct[2]])
            self.edge_slices[ct] = (e, e + len(s))
            e += len(s)
        self.src = np.concatenate(src) if src else np.zeros(0, np.int64)
        self.dst = np.concatenate(dst) if dst else np.zeros(0, np.int64)

    def embeddings(self, embed: Any, cls: str, width: int) -> Any:
        """The model's ``{ntype: (N_t, width)}`` embeddings stacked in this numbering."""
        if not isinstance(embed, dict):
            raise nwerr.ValueError(f"{cls}: model(graph, feat, embed=True) must return a dict {{node type: "
                                   f"embeddings}}, got {type(embed).__name__}")
        parts = []
        for nt in self.graph.ntypes:
            e = embed.get(nt)
            rows = self.graph.num_nodes(nt)
            if not isinstance(e, T.Tensor) or e.dim() != 2 or e.shape[0] != rows or e.shape[1] != width:
                got = tuple(e.shape) if isinstance(e, T.Tensor) else ("nothing" if e is None else type(e).__name__)
                raise nwerr.ValueError(f"{cls}: the embeddings of node type {nt!r} must be ({rows}, num_features="
                                       f"{width}), got {got}")
            parts.append(e.detach())
        return T.cat(parts, dim=0)


class HeteroPGExplainer(PGExplainer):
    r""":class:`PGExplainer` on a heterogeneous graph (DGL's ``HeteroPGExplainer``). The graph's
    nodes and edges are numbered as :func:`nodeweave.to_homogeneous` numbers them; edge ``u -> v``
    of any type gets its weight from the model's embeddings of ``u`` and ``v`` (and of the explained
    node), averaged with an edge ``v -> u`` of any type when there is one. ``feat``, the model's
    embeddings (``embed=True``) and, for node explanations, its logits are dicts by node type; the
    model receives ``edge_weight`` as a dict ``{canonical edge type: (E_t,) weights}``. Parameters,
    loss and differences from DGL as :class:`PGExplainer`.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import HeteroPGExplainer, HeteroGraphConv, GraphConv
    >>> class Model(nc.nn.Module):
    ...     def __init__(self, rels):
    ...         super().__init__()
    ...         self.conv = HeteroGraphConv({r: GraphConv(3, 4) for r in rels})
    ...         self.out = nc.nn.Linear(4, 2)
    ...     def forward(self, g, h, embed=False, edge_weight=None):
    ...         kw = {} if edge_weight is None else {"mod_kwargs": {r: {"edge_weight": w} for r, w in edge_weight.items()}}
    ...         h = self.conv(g, h, **kw)
    ...         return h if embed else self.out(sum(v.mean(0, keepdim=True) for v in h.values()))
    >>> g = nw.heterograph({("user", "plays", "game"): ([0, 1, 2], [0, 0, 1]),
    ...                     ("game", "played-by", "user"): ([0, 0, 1], [0, 1, 2])})
    >>> feat = {"user": nc.randn(3, 3), "game": nc.randn(2, 3)}
    >>> explainer = HeteroPGExplainer(Model(g.canonical_etypes), num_features=4)
    >>> explainer.train_step(g, feat, temperature=5.0).backward()
    >>> probs, edge_mask = explainer.explain_graph(g, feat)
    >>> tuple(probs.shape), {ct[1]: tuple(m.shape) for ct, m in edge_mask.items()}
    ((1, 2), {'played-by': (3,), 'plays': (3,)})
    """

    def _check_graph(self, graph: Any, feat: Any) -> None:
        check_hetero_feat(type(self).__name__, graph, feat)

    @staticmethod
    def _split(mask: Any, slices: Dict[Any, Tuple[Any, ...]]) -> Dict[Any, Any]:
        return {ct: mask.index_select(0, T.from_numpy(np.ascontiguousarray(idx, np.int64)).to(mask.device))
                for ct, idx in slices.items()}

    def explain_graph(self, graph: Any, feat: Dict[str, Any], temperature: float = 1.0, training: bool = False,
                      **kwargs: Any) -> Tuple[Any, Dict[Any, Any]]:
        """``(probs (B, C), {canonical edge type: (E_t,) mask})`` for (a batch of) graphs."""
        self._need(True, "explain_graph")
        self._check_graph(graph, feat)
        flat = _Flat(graph)
        embed = flat.embeddings(self.model(graph, feat, embed=True, **kwargs), type(self).__name__,
                                self.num_features // 2)
        mask = self._mask(self._edge_logits(embed, flat.src, flat.dst, None), flat.src, flat.dst, temperature,
                          training)
        hetero_mask = self._split(mask, {ct: np.arange(a, b) for ct, (a, b) in flat.edge_slices.items()})
        probs = F.softmax(self.model(graph, feat, edge_weight=hetero_mask, **kwargs), dim=-1)
        self._finish(training)
        return probs, hetero_mask

    def _node_list(self, nodes: Any, graph: Any) -> List[Tuple[str, int]]:
        cls = type(self).__name__
        if not isinstance(nodes, dict):
            raise nwerr.TypeError(f"{cls}: nodes must be a dict {{node type: node ids}}, got {type(nodes).__name__}")
        out = []
        for nt, ids in nodes.items():
            if nt not in graph.ntypes:
                raise nwerr.ValueError(f"{cls}: {nt!r} is not a node type of the graph {graph.ntypes}")
            out += [(nt, i) for i in node_id_list(cls, ids, graph.num_nodes(nt), f"nodes[{nt!r}]")]
        if not out:
            raise nwerr.ValueError(f"{cls}: nodes must name at least one node")
        return out

    def explain_node(self, nodes: Dict[str, Any], graph: Any, feat: Dict[str, Any], temperature: float = 1.0,
                     training: bool = False, **kwargs: Any) -> Tuple[Dict[str, Any], Dict[Any, Any], Any, Dict[str, Any]]:
        """Explains the predictions for ``nodes`` (``{node type: ids}``), each on its ``num_hops``
        in-neighbourhood. Returns ``(probs, edge_mask, bg, inverse)``: ``bg`` the neighbourhoods
        batched, ``probs`` ``{node type: (N_t, C)}`` masked predictions for ``bg``'s nodes,
        ``edge_mask`` ``{canonical edge type: (E_t,)}`` and ``inverse`` ``{node type: ids in bg}`` of
        the explained nodes."""
        from nodeweave.graph.batch import batch

        cls = type(self).__name__
        self._need(False, "explain_node")
        self._check_graph(graph, feat)
        targets = self._node_list(nodes, graph)
        subgraphs, logits, all_src, all_dst = [], [], [], []
        per_type = {ct: [] for ct in graph.canonical_etypes}
        node_base = {nt: 0 for nt in graph.ntypes}
        inverse: Dict[str, List[int]] = {nt: [] for nt in graph.ntypes}
        feats: Dict[str, List[Any]] = {nt: [] for nt in graph.ntypes}
        flat_nodes = flat_edges = 0
        for nt, node in targets:
            sg, inv = khop_in_subgraph(graph, {nt: node}, self.num_hops)
            ids = sg.ndata[NID]
            ids = ids if isinstance(ids, dict) else {sg.ntypes[0]: ids}
            sfeat = {t: feat[t].index_select(0, graph_tensor(ids[t]).long().to(feat[t].device)) for t in sg.ntypes}
            flat = _Flat(sg)
            embed = flat.embeddings(self.model(sg, sfeat, embed=True, **kwargs), cls, self.num_features // 3)
            centre = flat.node_offset[nt] + int(graph_tensor(inv[nt]).reshape(-1)[0].item())
            logits.append(self._edge_logits(embed, flat.src, flat.dst, np.full(len(flat.src), centre)))
            all_src.append(flat.src + flat_nodes)
            all_dst.append(flat.dst + flat_nodes)
            for ct, (a, b) in flat.edge_slices.items():
                per_type[ct].append(np.arange(a, b) + flat_edges)
            inverse[nt].append(node_base[nt] + centre - flat.node_offset[nt])
            for t in sg.ntypes:
                feats[t].append(sfeat[t])
                node_base[t] += sg.num_nodes(t)
            flat_nodes += flat.num_nodes
            flat_edges += len(flat.src)
            subgraphs.append(sg)
        bg = batch(subgraphs)
        bfeat = {t: T.cat(f, dim=0) for t, f in feats.items()}
        src, dst = np.concatenate(all_src), np.concatenate(all_dst)
        mask = self._mask(T.cat(logits, dim=0), src, dst, temperature, training)
        hetero_mask = self._split(mask, {ct: np.concatenate(v) if v else np.zeros(0, np.int64)
                                         for ct, v in per_type.items()})
        out = self.model(bg, bfeat, edge_weight=hetero_mask, **kwargs)
        if not isinstance(out, dict):
            raise nwerr.ValueError(f"{cls}: for node explanations the model must return a dict {{node type: "
                                   f"logits}}, got {type(out).__name__}")
        probs = {t: F.softmax(v, dim=-1) for t, v in out.items()}
        if training:
            self.batched_feats = bfeat
        self._finish(training)
        dev = mask.device
        return probs, hetero_mask, bg, {t: T.from_numpy(np.asarray(v, np.int64)).to(dev) for t, v in inverse.items()}

    def train_step_node(self, nodes: Dict[str, Any], graph: Any, feat: Dict[str, Any], temperature: float,
                        **kwargs: Any) -> Any:
        """The training loss over the explanations of ``nodes`` (``{node type: ids}``)."""
        self._need(False, "train_step_node")
        probs, _, bg, inverse = self.explain_node(nodes, graph, feat, temperature, training=True, **kwargs)
        with T.no_grad():
            pred = self.model(bg, self.batched_feats, **kwargs)
        types = [t for t, ids in inverse.items() if ids.numel()]
        missing = [t for t in types if t not in probs]
        if missing:
            raise nwerr.ValueError(f"{type(self).__name__}: the model returned no logits for the node types {missing}")
        return self.loss(T.cat([probs[t].index_select(0, inverse[t]) for t in types], dim=0),
                         T.cat([pred[t].argmax(-1).index_select(0, inverse[t]) for t in types], dim=0))
