"""Shallow node embeddings learned from random walks with negative sampling: DeepWalk (Perozzi et
al., 2014) and metapath2vec (Dong et al., 2017), DGL's ``dgl.nn.DeepWalk`` and
``dgl.nn.MetaPath2Vec``.

Both keep two tables, ``node_embed`` (a node as the centre of a window; the embedding to use
afterwards) and ``context_embed`` (a node as context), initialised as DGL's: ``node_embed``
uniform in ``[-1/emb_dim, 1/emb_dim]``, ``context_embed`` zero. ``sample`` draws the walks (and,
for MetaPath2Vec, the pairs and negatives) from nodeweave's generator (:func:`nodeweave.seed`) and
is meant as a data loader's ``collate_fn``; ``forward`` returns the loss.
"""

from __future__ import annotations

from typing import Any, List

import numpy as np

from ._ns import T, nn, F
from ._checks import positive_int
from nodeweave import backend as _backend
from nodeweave import errors as nwerr

__all__ = ["DeepWalk", "MetaPath2Vec"]


def _start_ids(indices: Any, cls: str) -> np.ndarray:
    """Start nodes as int64 NumPy: a tensor of any backend, an array, or a list of ints or 0-d
    tensors (what a data loader hands its ``collate_fn``)."""
    B = _backend.of(indices)
    if B is not None:
        arr = np.asarray(B.to_numpy(indices))
    elif isinstance(indices, (list, tuple)):
        arr = np.asarray([int(_backend.of(i).to_numpy(i)) if _backend.of(i) is not None else i for i in indices])
    else:
        arr = np.asarray(indices)
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise nwerr.ValueError(f"{cls}.sample: indices must be a 1-D sequence of node ids, got dtype {arr.dtype} "
                               f"and shape {arr.shape}")
    return arr.astype(np.int64, copy=False)


def _numpy(t: Any) -> np.ndarray:
    return np.asarray(_backend.of(t).to_numpy(t))


def _rng() -> np.random.Generator:
    from nodeweave.sampling._seed import numpy_generator

    return numpy_generator()


def _walk_traces(g: Any, starts: np.ndarray, **kw) -> np.ndarray:
    from nodeweave.sampling import random_walk

    traces = random_walk(g, starts, **kw)[0]
    return _numpy(traces).astype(np.int64, copy=False).reshape(len(starts), -1)


def _init_tables(module: Any) -> None:
    bound = 1.0 / module.emb_dim
    with T.no_grad():
        nn.init.uniform_(module.node_embed.weight, -bound, bound)
        nn.init.constant_(module.context_embed.weight, 0.0)


class DeepWalk(nn.Module):
    r"""DeepWalk: node embeddings that make nodes close on random walks similar (Perozzi et al.,
    2014), DGL's ``DeepWalk``.

    Walks of ``walk_length`` nodes (``walk_length - 1`` uniform steps along out-edges; a walk
    that reaches a node without out-edges ends, its remaining positions ``-1``). In a walk ``w``,
    each pair ``(w[j], w[i])`` with ``0 < |i - j| <= window_size`` is a positive pair (centre
    ``w[j]`` from ``node_embed``, context ``w[i]`` from ``context_embed``); each positive pair
    gets ``negative_size`` negative pairs with centre ``w[i]`` and a random context: another
    position of the batch's walks when ``fast_neg`` (drawn as DGL draws them), else a node drawn
    with probability proportional to ``out_degree ** 0.75`` (``neg_prob``). The loss is
    :math:`\operatorname{mean}(-\log\sigma(s^+)) + \text{negative\_size}\cdot\text{neg\_weight}
    \cdot\operatorname{mean}(-\log\sigma(-s^-))`, the scores :math:`s` (dot products) clipped to
    ``[-6, 6]``.

    Parameters as DGL's: ``g`` (one node type), ``emb_dim=128``, ``walk_length=40``,
    ``window_size=5`` (``walk_length >= window_size + 1``), ``neg_weight=1``, ``negative_size=5``,
    ``fast_neg=True``, ``sparse=True`` (sparse gradients of the tables, for ``SparseAdam``).

    ``sample(indices)``: one walk from each start node, an int64 ``(len(indices), walk_length)``
    tensor; ``forward(batch_walk)``: the loss of a batch of walks. A walk cut short by a node
    without out-edges cannot be scored (DGL fails on its ``-1`` too): ValueError.

    >>> import nodeweave as nw, nodeweave.core as nc
    >>> from nodeweave.nn import DeepWalk
    >>> g = nw.graph(([0, 1, 2, 1, 2, 0], [1, 2, 0, 0, 1, 2]))
    >>> model = DeepWalk(g, emb_dim=8, walk_length=3, window_size=1)
    >>> walks = model.sample(nc.arange(3))
    >>> tuple(walks.shape), tuple(model.node_embed.weight.shape)
    ((3, 3), (3, 8))
    >>> loss = model(walks)
    >>> loss.backward()
    """

    def __init__(self, g: Any, emb_dim: int = 128, walk_length: int = 40, window_size: int = 5,
                 neg_weight: float = 1, negative_size: int = 5, fast_neg: bool = True, sparse: bool = True) -> None:
        super().__init__()
        cls = "DeepWalk"
        if len(g.ntypes) != 1 or len(g.canonical_etypes) != 1:
            raise nwerr.ValueError(f"{cls}: g must have one node type and one edge type, got node types "
                                   f"{g.ntypes} and edge types {g.canonical_etypes}")
        self.emb_dim = positive_int(emb_dim, "emb_dim", cls)
        self.walk_length = positive_int(walk_length, "walk_length", cls)
        self.window_size = positive_int(window_size, "window_size", cls)
        self.negative_size = positive_int(negative_size, "negative_size", cls)
        if self.walk_length < self.window_size + 1:
            raise nwerr.ValueError(f"{cls}: walk_length must be at least window_size + 1, got walk_length="
                                   f"{walk_length} and window_size={window_size}")
        self.g = g
        self.neg_weight = neg_weight
        self.fast_neg = bool(fast_neg)
        n = g.num_nodes()
        if n == 0:
            raise nwerr.ValueError(f"{cls}: g has no nodes")
        self.node_embed = nn.Embedding(n, self.emb_dim, sparse=sparse)
        self.context_embed = nn.Embedding(n, self.emb_dim, sparse=sparse)
        self.reset_parameters()
        if not self.fast_neg:
            w = _numpy(g.out_degrees()).astype(np.float64) ** 0.75
            if not w.sum() > 0:
                raise nwerr.ValueError(f"{cls}: fast_neg=False draws negatives by out-degree, but g has no edges")
            self.neg_prob = T.from_numpy((w / w.sum()).astype(np.float32))
        # Position pairs of one walk: (j, i) for every j within window_size of i, j != i.
        src: List[int] = []
        dst: List[int] = []
        for i in range(self.walk_length):
            for j in range(max(0, i - self.window_size), min(self.walk_length, i + self.window_size + 1)):
                if j != i:
                    src.append(j)
                    dst.append(i)
        self.idx_list_src = T.from_numpy(np.asarray(src, np.int64))
        self.idx_list_dst = T.from_numpy(np.asarray(dst, np.int64))

    def reset_parameters(self) -> None:
        """``node_embed`` uniform in ``[-1/emb_dim, 1/emb_dim]``, ``context_embed`` zero."""
        _init_tables(self)

    def sample(self, indices: Any) -> Any:
        """One random walk of ``walk_length`` nodes from each of ``indices``."""
        traces = _walk_traces(self.g, _start_ids(indices, "DeepWalk"), length=self.walk_length - 1)
        return T.from_numpy(np.ascontiguousarray(traces))

    def forward(self, batch_walk: Any) -> Any:
        if not isinstance(batch_walk, T.Tensor) or batch_walk.dim() != 2 or batch_walk.shape[1] != self.walk_length:
            got = tuple(batch_walk.shape) if isinstance(batch_walk, T.Tensor) else type(batch_walk).__name__
            raise nwerr.ValueError(f"DeepWalk: batch_walk must be a (batch_size, {self.walk_length}) tensor of "
                                   f"walks, got {got}")
        if bool((batch_walk < 0).any()):
            raise nwerr.ValueError("DeepWalk: a walk was cut short at a node without out-edges (its positions "
                                   "after it are -1); give every node an out-edge, e.g. nodeweave.add_self_loop")
        b, dev = batch_walk.shape[0], batch_walk.device
        centre = self.node_embed(batch_walk).reshape(-1, self.emb_dim)
        context = self.context_embed(batch_walk).reshape(-1, self.emb_dim)
        offset = (np.arange(b, dtype=np.int64) * self.walk_length)[:, None]
        src_np = (offset + _numpy(self.idx_list_src)[None, :]).reshape(-1)
        dst_np = (offset + _numpy(self.idx_list_dst)[None, :]).reshape(-1)
        pos_src, pos_dst = (T.from_numpy(a).to(dev) for a in (src_np, dst_np))
        neg_src = T.from_numpy(np.repeat(dst_np, self.negative_size)).to(dev)
        count = len(dst_np) * self.negative_size
        rng = _rng()
        if self.fast_neg:
            # DGL shuffles all batch positions, repeated negative_size * 2 * window_size times, and
            # takes the first ones: draws without replacement from that multiset.
            pool = b * self.walk_length
            picked = rng.choice(pool * self.negative_size * 2 * self.window_size, count, replace=False) % pool
            neg_ctx = context[T.from_numpy(picked.astype(np.int64)).to(dev)]
        else:
            p = _numpy(self.neg_prob).astype(np.float64)
            picked = rng.choice(len(p), count, replace=True, p=p / p.sum())
            neg_ctx = self.context_embed(T.from_numpy(picked.astype(np.int64)).to(dev))
        pos = T.clamp((centre[pos_src] * context[pos_dst]).sum(dim=1), min=-6, max=6)
        neg = T.clamp((centre[neg_src] * neg_ctx).sum(dim=1), min=-6, max=6)
        pos_loss = (-F.logsigmoid(pos)).mean()
        neg_loss = (-F.logsigmoid(-neg)).mean() * (self.negative_size * self.neg_weight)
        return pos_loss + neg_loss

    def extra_repr(self) -> str:
        return (f"emb_dim={self.emb_dim}, walk_length={self.walk_length}, window_size={self.window_size}, "
                f"negative_size={self.negative_size}, fast_neg={self.fast_neg}")


class MetaPath2Vec(nn.Module):
    r"""metapath2vec: embeddings of the nodes of a heterogeneous graph from walks that follow a
    meta-path (Dong et al., 2017), DGL's ``MetaPath2Vec``.

    All node types share one table, in the order of ``g.ntypes``: node ``v`` of type ``t`` is row
    ``local_to_global_nid[t][v]`` (the numbering of :func:`nodeweave.to_homogeneous`).

    ``sample(indices)`` walks once along ``metapath`` (edge types; the walk starts at its first
    edge type's source type) from each of ``indices`` and returns ``(pos_u, pos_v, neg_v)``: every
    pair of walk positions ``i != j`` with ``|i - j| <= window_size`` as centre ``pos_u`` and context
    ``pos_v`` (global rows), and for each pair ``negative_size`` negative contexts ``neg_v`` drawn
    with probability proportional to ``frequency ** 0.75``, the frequency of each node on one walk
    from every node of the start type drawn at construction. Positions after a dead end are left
    out. ``forward(pos_u, pos_v, neg_v)`` returns
    :math:`\operatorname{mean}(-\log\sigma(s^+) - \sum\log\sigma(-s^-))`, scores clipped to
    ``[-10, 10]``.

    Differences from DGL 2.1: DGL's window pairs a centre with positions ``i - window_size`` to
    ``i + window_size - 1`` and skips the wrong position when ``i > window_size`` (it compares
    ``i`` with the index into the window); here the window is symmetric and skips the centre.
    DGL maps a dead end's ``-1`` to the type's last node; here it is left out.

    Parameters as DGL's: ``g``, ``metapath`` (edge type names, ``len(metapath) + 1 >=
    window_size``), ``window_size``, ``emb_dim=128``, ``negative_size=5``, ``sparse=True``.

    >>> import nodeweave as nw
    >>> from nodeweave.nn import MetaPath2Vec
    >>> g = nw.heterograph({("user", "uc", "company"): ([0, 0, 2, 1], [1, 2, 1, 0]),
    ...                     ("company", "cu", "user"): ([1, 2, 1, 0], [0, 0, 2, 1])})
    >>> model = MetaPath2Vec(g, ["uc", "cu"], window_size=1, emb_dim=4)
    >>> model.local_to_global_nid["user"], tuple(model.node_embed.weight.shape)
    ([3, 4, 5], (6, 4))
    >>> pos_u, pos_v, neg_v = model.sample([0, 2])
    >>> tuple(neg_v.shape) == (len(pos_u), 5)
    True
    >>> model(pos_u, pos_v, neg_v).backward()
    """

    def __init__(self, g: Any, metapath: List[str], window_size: int, emb_dim: int = 128, negative_size: int = 5,
                 sparse: bool = True) -> None:
        super().__init__()
        cls = "MetaPath2Vec"
        if isinstance(metapath, (str, tuple)) or not len(metapath):
            raise nwerr.ValueError(f"{cls}: metapath must be a non-empty list of edge types, got {metapath!r}")
        self.window_size = positive_int(window_size, "window_size", cls)
        if len(metapath) + 1 < self.window_size:
            raise nwerr.ValueError(f"{cls}: window_size ({window_size}) must be at most len(metapath) + 1 "
                                   f"({len(metapath) + 1})")
        self.emb_dim = positive_int(emb_dim, "emb_dim", cls)
        self.negative_size = positive_int(negative_size, "negative_size", cls)
        self.hg = g
        self.metapath = list(metapath)
        cets = [g.to_canonical_etype(e) for e in self.metapath]
        for a, b in zip(cets, cets[1:]):
            if a[2] != b[0]:
                raise nwerr.ValueError(f"{cls}: metapath does not chain: {a} ends at {a[2]!r} but {b} starts at "
                                       f"{b[0]!r}")
        self.node_metapath = [cets[0][0]] + [c[2] for c in cets]
        offsets, total = {}, 0
        for t in g.ntypes:
            offsets[t] = total
            total += g.num_nodes(t)
        self._offsets = offsets
        self.local_to_global_nid = {t: list(range(offsets[t], offsets[t] + g.num_nodes(t))) for t in g.ntypes}
        freq = np.zeros(total, np.float64)
        start = g.num_nodes(self.node_metapath[0])
        if start == 0:
            raise nwerr.ValueError(f"{cls}: the start node type {self.node_metapath[0]!r} has no nodes")
        rows, valid = self._global_rows(_walk_traces(g, np.arange(start, dtype=np.int64), metapath=self.metapath))
        np.add.at(freq, rows[valid], 1.0)
        w = freq ** 0.75
        self.neg_prob = T.from_numpy((w / w.sum()).astype(np.float32))
        self.node_embed = nn.Embedding(total, self.emb_dim, sparse=sparse)
        self.context_embed = nn.Embedding(total, self.emb_dim, sparse=sparse)
        self.reset_parameters()

    def _global_rows(self, traces: np.ndarray):
        """Global table rows of walk positions, and which positions hold a node (not ``-1``)."""
        off = np.asarray([self._offsets[t] for t in self.node_metapath], np.int64)
        valid = traces >= 0
        return np.where(valid, traces + off[None, :], -1), valid

    def reset_parameters(self) -> None:
        """``node_embed`` uniform in ``[-1/emb_dim, 1/emb_dim]``, ``context_embed`` zero."""
        _init_tables(self)

    def sample(self, indices: Any):
        """``(pos_u, pos_v, neg_v)`` from one walk per start node in ``indices``."""
        rows, valid = self._global_rows(_walk_traces(self.hg, _start_ids(indices, "MetaPath2Vec"),
                                                     metapath=self.metapath))
        length = rows.shape[1]
        us, vs, walks = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        for i in range(length):
            for j in range(max(0, i - self.window_size), min(length, i + self.window_size + 1)):
                if j != i:
                    keep = np.nonzero(valid[:, i] & valid[:, j])[0]
                    us.append(rows[keep, i])
                    vs.append(rows[keep, j])
                    walks.append(keep)
        order = np.argsort(np.concatenate(walks), kind="stable")  # walk-major, as DGL lists the pairs
        u, v = np.concatenate(us)[order], np.concatenate(vs)[order]
        p = _numpy(self.neg_prob).astype(np.float64)
        neg = _rng().choice(len(p), len(u) * self.negative_size, replace=True, p=p / p.sum())
        return (T.from_numpy(u.astype(np.int64)), T.from_numpy(v.astype(np.int64)),
                T.from_numpy(neg.astype(np.int64).reshape(len(u), self.negative_size)))

    def forward(self, pos_u: Any, pos_v: Any, neg_v: Any) -> Any:
        emb_u = self.node_embed(pos_u)
        emb_v = self.context_embed(pos_v)
        emb_neg = self.context_embed(neg_v)
        pos = T.clamp((emb_u * emb_v).sum(dim=1), min=-10, max=10)
        neg = T.clamp(T.bmm(emb_neg, emb_u.unsqueeze(2)).squeeze(2), min=-10, max=10)
        return (-F.logsigmoid(pos) - F.logsigmoid(-neg).sum(dim=1)).mean()

    def extra_repr(self) -> str:
        return (f"metapath={self.metapath}, window_size={self.window_size}, emb_dim={self.emb_dim}, "
                f"negative_size={self.negative_size}")
