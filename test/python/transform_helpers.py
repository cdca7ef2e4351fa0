"""Shared helpers of the graph transform / batch / io tests: random graphs with the awkward cases
(isolated nodes, self-loops, multi-edges) and a structural + feature equality check."""

from __future__ import annotations

import numpy as np

import nodeweave as nw
import nodeweave.core as nc


def rand_edges(rng: np.random.Generator, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``m`` random edges over nodes ``0..n-1``, leaving the last two nodes isolated (when n > 3)
    and including self-loops and repeated edges."""
    if n == 0 or m == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    hi = n - 2 if n > 3 else n
    src = rng.integers(0, hi, m)
    dst = rng.integers(0, hi, m)
    if m >= 4:
        dst[0] = src[0]  # a self-loop
        src[1], dst[1] = src[2], dst[2]  # a parallel edge
    return src.astype(np.int64), dst.astype(np.int64)


def rand_graph(rng: np.random.Generator, n: int, m: int, idtype: str = "int64", feats: bool = True):
    src, dst = rand_edges(rng, n, m)
    g = nw.graph((src, dst), num_nodes=n, idtype=idtype)
    if feats:
        g.ndata["h"] = nc.tensor(rng.standard_normal((n, 3)).astype(np.float32))
        g.edata["w"] = nc.tensor(rng.standard_normal(m).astype(np.float32))
    return g


def rand_hetero(rng: np.random.Generator, idtype: str = "int64", empty_rel: bool = True):
    """user/item/tag heterograph with features on every type; ('tag', 'none', 'tag') has no edges."""
    nu, ni, nt = 6, 5, 3
    data = {("user", "follows", "user"): rand_edges(rng, nu, 9),
            ("user", "buys", "item"): (rng.integers(0, nu, 7), rng.integers(0, ni, 7)),
            ("item", "bought_by", "user"): (rng.integers(0, ni, 4), rng.integers(0, nu, 4))}
    if empty_rel:
        data[("tag", "none", "tag")] = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    g = nw.heterograph(data, {"user": nu, "item": ni, "tag": nt}, idtype=idtype)
    for t in g.ntypes:
        g.nodes[t].data["h"] = nc.tensor(rng.standard_normal((g.num_nodes(t), 2)).astype(np.float32))
    for ct in g.canonical_etypes:
        g.edges[ct].data["w"] = nc.tensor(rng.standard_normal(g.num_edges(ct)).astype(np.float64))
    return g


def edges_np(g, etype=None) -> tuple[np.ndarray, np.ndarray]:
    s, d = g.edges(etype=etype)
    return s.numpy().astype(np.int64), d.numpy().astype(np.int64)


def assert_graphs_equal(a, b, check_batch: bool = True) -> None:
    assert a.ntypes == b.ntypes
    assert a.canonical_etypes == b.canonical_etypes
    assert a.idtype == b.idtype
    for t in a.ntypes:
        assert a.num_nodes(t) == b.num_nodes(t), t
        assert set(a.nodes[t].data) == set(b.nodes[t].data), t
        for k in a.nodes[t].data:
            x, y = a.nodes[t].data[k], b.nodes[t].data[k]
            assert x.dtype == y.dtype, (t, k)
            np.testing.assert_array_equal(x.numpy(), y.numpy())
    for ct in a.canonical_etypes:
        for x, y in zip(edges_np(a, ct), edges_np(b, ct)):
            np.testing.assert_array_equal(x, y)
        assert set(a.edges[ct].data) == set(b.edges[ct].data), ct
        for k in a.edges[ct].data:
            x, y = a.edges[ct].data[k], b.edges[ct].data[k]
            assert x.dtype == y.dtype, (ct, k)
            np.testing.assert_array_equal(x.numpy(), y.numpy())
    if check_batch:
        assert a.batch_size == b.batch_size
        for t in a.ntypes:
            np.testing.assert_array_equal(a.batch_num_nodes(t).numpy(), b.batch_num_nodes(t).numpy())
        for ct in a.canonical_etypes:
            np.testing.assert_array_equal(a.batch_num_edges(ct).numpy(), b.batch_num_edges(ct).numpy())
