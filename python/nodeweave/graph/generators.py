"""Random graph generators: uniform (:func:`rand_graph`), uniform bipartite without repeated edges
(:func:`rand_bipartite`), R-MAT (:func:`rmat_graph`) and the stochastic block model (:func:`sbm_graph`).

All are vectorized NumPy, draw from ``numpy.random.default_rng(seed)`` and so give the same graph for
the same seed on every machine. Without ``seed`` the NumPy generator is seeded from nodeweave's
generator, so ``nw.seed(s)`` makes them repeatable too (as ``dgl.seed`` does for DGL's generators).

>>> import nodeweave as nw
>>> g = nw.rand_graph(100, 500, seed=0)
>>> g.num_nodes(), g.num_edges()
(100, 500)
>>> nw.rand_graph(100, 500, seed=0).edges()[0].tolist() == g.edges()[0].tolist()
True
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from nodeweave import _C
from nodeweave.graph.construct import graph, heterograph
from nodeweave.graph.edge_data import check_count
from nodeweave.graph.heterograph import HeteroGraph
from nodeweave import errors as nwerr

__all__ = ["rand_graph", "rand_bipartite", "rmat_graph", "sbm_graph"]


def _rng(seed: Any) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(_C.sampling.draw_seed() if seed is None else seed)


def rand_graph(num_nodes: int, num_edges: int, seed: Any = None, idtype: Any = None,
               device: Any = None) -> HeteroGraph:
    """A graph of ``num_edges`` edges whose endpoints are drawn uniformly from ``num_nodes`` nodes,
    independently (with replacement: self-loops and multi-edges can occur).

    Parameters
    ----------
    num_nodes, num_edges : int
    seed : int or numpy.random.Generator, optional
        Same seed, same graph.

    >>> import nodeweave as nw
    >>> nw.rand_graph(5, 0).num_edges()
    0
    """
    n = check_count(num_nodes, "num_nodes")
    m = check_count(num_edges, "num_edges")
    if n == 0 and m > 0:
        raise nwerr.ValueError(f"rand_graph: cannot place num_edges={m} edges on a graph with 0 nodes")
    rng = _rng(seed)
    src = rng.integers(0, max(n, 1), size=m, dtype=np.int64)
    dst = rng.integers(0, max(n, 1), size=m, dtype=np.int64)
    return graph((src, dst), num_nodes=n, idtype=idtype, device=device)


def rand_bipartite(utype: str, etype: str, vtype: str, num_src_nodes: int, num_dst_nodes: int,
                   num_edges: int, idtype: Any = None, device: Any = None, seed: Any = None) -> HeteroGraph:
    """A random bipartite graph: ``num_edges`` distinct pairs drawn uniformly, without replacement,
    from the ``num_src_nodes x num_dst_nodes`` possible edges ``utype -> vtype`` (so no multi-edges),
    as DGL's ``rand_bipartite``. Edges come in the order they were drawn.

    Parameters
    ----------
    utype, etype, vtype : str
        Source node type, edge type and destination node type.
    num_src_nodes, num_dst_nodes, num_edges : int
        ``num_edges`` is at most ``num_src_nodes * num_dst_nodes``.
    idtype, device
        As for :func:`nodeweave.graph`.
    seed : int or numpy.random.Generator, optional
        Same seed, same graph; without it, drawn from nodeweave's generator (``nw.seed``).

    >>> import nodeweave as nw
    >>> g = nw.rand_bipartite("user", "buys", "game", 50, 100, 10, seed=0)
    >>> g.canonical_etypes, g.num_nodes("user"), g.num_nodes("game"), g.num_edges()
    ([('user', 'buys', 'game')], 50, 100, 10)
    """
    for name, t in (("utype", utype), ("etype", etype), ("vtype", vtype)):
        if not isinstance(t, str):
            raise nwerr.TypeError(f"rand_bipartite: {name} must be a type name (str), got {t!r}")
    ns = check_count(num_src_nodes, "num_src_nodes")
    nd = check_count(num_dst_nodes, "num_dst_nodes")
    if utype == vtype and ns != nd:
        raise nwerr.ValueError(f"rand_bipartite: utype and vtype are both {utype!r}, so num_src_nodes={ns} and "
                               f"num_dst_nodes={nd} must be equal")
    m = check_count(num_edges, "num_edges")
    if m > ns * nd:
        raise nwerr.ValueError(f"rand_bipartite: num_edges={m} is more than the {ns} x {nd} = {ns * nd} distinct "
                               "edges there are (edges are drawn without replacement)")
    pairs = _rng(seed).choice(ns * nd, size=m, replace=False).astype(np.int64) if m else np.zeros(0, np.int64)
    return heterograph({(utype, etype, vtype): (pairs // max(nd, 1), pairs % max(nd, 1))},
                       {utype: ns, vtype: nd}, idtype=idtype, device=device)


def rmat_graph(num_nodes: int | None = None, num_edges: int = 0, a: float = 0.57, b: float = 0.19,
               c: float = 0.19, d: float = 0.05, noise: float = 0.0, seed: Any = None,
               scale: int | None = None, idtype: Any = None, device: Any = None) -> HeteroGraph:
    """An R-MAT graph (Chakrabarti, Zhan & Faloutsos 2004): each edge picks one quadrant of the
    adjacency matrix per level, top-left with probability ``a``, top-right ``b``, bottom-left ``c``,
    bottom-right ``d``, recursively down to a single cell. The defaults are Graph500's; they give the
    skewed, power-law-like degrees of real graphs.

    Parameters
    ----------
    num_nodes : int, optional
        Number of nodes. When it is not a power of two, edges are drawn on the next power of two and
        those that fall outside are drawn again. Give either ``num_nodes`` or ``scale``.
    num_edges : int
        Number of edges (self-loops and multi-edges are kept).
    a, b, c, d : float
        Quadrant probabilities: non-negative, summing to 1.
    noise : float in [0, 1)
        Per level, each probability is multiplied by ``1 + noise * U(-1, 1)`` and all are renormalized
        ("smoothed" R-MAT, which removes the staircase in the degree distribution).
    seed : int or numpy.random.Generator, optional
    scale : int, optional
        ``num_nodes = 2 ** scale``.

    >>> import nodeweave as nw
    >>> g = nw.rmat_graph(scale=10, num_edges=8192, seed=1)
    >>> g.num_nodes(), g.num_edges()
    (1024, 8192)
    >>> int(g.out_degrees().max()) > 10 * 8192 // 1024   # skewed: hubs far above the mean degree
    True
    """
    if (num_nodes is None) == (scale is None):
        raise nwerr.ValueError("rmat_graph: give exactly one of num_nodes and scale")
    if scale is not None:
        s = check_count(scale, "scale")
        if s > 62:
            raise nwerr.ValueError(f"rmat_graph: scale must be at most 62, got {s}")
        n = 1 << s
    else:
        n = check_count(num_nodes, "num_nodes")
        s = max(0, math.ceil(math.log2(n))) if n > 0 else 0
    m = check_count(num_edges, "num_edges")
    if n == 0 and m > 0:
        raise nwerr.ValueError(f"rmat_graph: cannot place num_edges={m} edges on a graph with 0 nodes")
    probs = np.array([a, b, c, d], dtype=np.float64)
    if not np.all(np.isfinite(probs)) or np.any(probs < 0):
        raise nwerr.ValueError(f"rmat_graph: a, b, c, d must be non-negative, got {a}, {b}, {c}, {d}")
    if abs(probs.sum() - 1.0) > 1e-6:
        raise nwerr.ValueError(f"rmat_graph: a + b + c + d must be 1, got {probs.sum():g}")
    if not 0.0 <= noise < 1.0:
        raise nwerr.ValueError(f"rmat_graph: noise must be in [0, 1), got {noise}")
    rng = _rng(seed)
    src = np.empty(0, np.int64)
    dst = np.empty(0, np.int64)
    while len(src) < m:
        k = m - len(src)
        # Draw a few extra when rejecting ids >= n, so one round usually suffices.
        draw = k if n == (1 << s) else int(k * (1 << s) / max(n, 1) * 1.1) + 16
        u = np.zeros(draw, np.int64)
        v = np.zeros(draw, np.int64)
        for level in range(s):
            p = probs
            if noise > 0:
                p = p * (1.0 + noise * rng.uniform(-1.0, 1.0, size=4))
                p = p / p.sum()
            r = rng.random(draw)
            down = r >= p[0] + p[1]                                 # quadrants c, d: row bit 1
            right = ((r >= p[0]) & ~down) | (r >= p[0] + p[1] + p[2])  # quadrants b, d: column bit 1
            bit = np.int64(1) << (s - 1 - level)
            u |= down * bit
            v |= right * bit
        keep = (u < n) & (v < n)
        src = np.concatenate([src, u[keep]])[:m]
        dst = np.concatenate([dst, v[keep]])[:m]
    return graph((src, dst), num_nodes=n, idtype=idtype, device=device)


def _triangle_pairs(k: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Decodes indexes ``k`` of the pairs ``i < j`` of ``size`` items, numbered row by row."""
    rows = np.arange(size, dtype=np.int64)
    starts = rows * (2 * size - rows - 1) // 2     # first index of row i
    i = np.searchsorted(starts, k, side="right") - 1
    j = i + 1 + (k - starts[i])
    return i, j


def sbm_graph(block_sizes: Sequence[int], p_matrix: Any, directed: bool = False, seed: Any = None,
              idtype: Any = None, device: Any = None) -> HeteroGraph:
    """A stochastic block model graph: nodes are split into consecutive blocks, and each pair of
    distinct nodes ``u`` in block ``i``, ``v`` in block ``j`` is joined independently with probability
    ``p_matrix[i][j]``. No self-loops, no multi-edges.

    For each block pair the number of edges is drawn from its binomial distribution, then that many
    distinct pairs are sampled without replacement, so the cost grows with the number of edges, not
    with the square of the number of nodes.

    Parameters
    ----------
    block_sizes : list of int
        Nodes per block; block ``i`` holds the ids after those of blocks ``0..i-1``.
    p_matrix : (k, k) array-like of probabilities in [0, 1]
        Symmetric unless ``directed``.
    directed : bool
        When False, each undirected edge is stored in both directions (``u -> v`` and ``v -> u``).
    seed : int or numpy.random.Generator, optional

    >>> import nodeweave as nw
    >>> g = nw.sbm_graph([50, 50], [[0.5, 0.01], [0.01, 0.5]], seed=0)
    >>> g.num_nodes()
    100
    """
    sizes = [check_count(x, f"block_sizes[{i}]") for i, x in enumerate(block_sizes)]
    k = len(sizes)
    try:
        p = np.asarray(p_matrix, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise nwerr.TypeError(f"sbm_graph: p_matrix must be a {k}x{k} array of probabilities ({e})") from None
    if p.shape != (k, k):
        raise nwerr.ValueError(f"sbm_graph: p_matrix must have shape ({k}, {k}) for {k} blocks, got {p.shape}")
    if not np.all(np.isfinite(p)) or p.min(initial=0) < 0 or p.max(initial=0) > 1:
        raise nwerr.ValueError("sbm_graph: p_matrix entries must be probabilities in [0, 1]")
    if not directed and not np.allclose(p, p.T):
        raise nwerr.ValueError("sbm_graph: p_matrix must be symmetric for an undirected graph (directed=False)")
    rng = _rng(seed)
    offsets = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))
    srcs, dsts = [], []
    for i in range(k):
        for j in range(k):
            if not directed and j < i:
                continue
            si, sj = sizes[i], sizes[j]
            if i == j:
                space = si * (si - 1) if directed else si * (si - 1) // 2
            else:
                space = si * sj
            if space == 0 or p[i, j] == 0:
                continue
            count = int(rng.binomial(space, p[i, j]))
            if count == 0:
                continue
            idx = rng.choice(space, size=count, replace=False).astype(np.int64)
            if i != j:
                u, v = idx // sj, idx % sj
            elif directed:  # ordered pairs u != v: skip the diagonal
                u, r = idx // (si - 1), idx % (si - 1)
                v = r + (r >= u)
            else:
                u, v = _triangle_pairs(idx, si)
            u = u + offsets[i]
            v = v + offsets[j]
            srcs.append(u)
            dsts.append(v)
            if not directed:
                srcs.append(v)
                dsts.append(u)
    src = np.concatenate(srcs) if srcs else np.zeros(0, np.int64)
    dst = np.concatenate(dsts) if dsts else np.zeros(0, np.int64)
    return graph((src, dst), num_nodes=int(offsets[-1]), idtype=idtype, device=device)
