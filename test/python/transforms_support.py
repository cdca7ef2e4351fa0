"""Shared helpers of the transform-object tests: both backends, random homogeneous graphs and
heterographs with features, NumPy views of graphs, and a snapshot to check an input is unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import nodeweave as nw
from nodeweave import backend

BACKENDS = ["native", "pytorch"]


@pytest.fixture(params=BACKENDS)
def bk(request):
    """Runs a test once per backend (conftest resets to native afterwards)."""
    if request.param == "pytorch":
        pytest.importorskip("torch")
    nw.set_backend(request.param)
    return request.param


def T(arr) -> object:
    """A tensor of the active backend holding ``arr`` (dtype kept)."""
    return backend.current().from_numpy(np.ascontiguousarray(arr))


def N(t) -> np.ndarray:
    """A tensor of either backend as a NumPy array."""
    return backend.of(t).to_numpy(t)


def E(g, etype=None) -> tuple[np.ndarray, np.ndarray]:
    s, d = g.edges(etype=etype)
    return N(s).astype(np.int64), N(d).astype(np.int64)


def homo(rng: np.random.Generator, n: int = 9, m: int = 24, simple: bool = False):
    """A graph over ``n`` nodes (the last one isolated) with self-loops and parallel edges unless
    ``simple``; float32 ``ndata['feat']`` (n, 3) and positive ``edata['w']`` (m,)."""
    if simple:
        pairs = sorted({(int(a), int(b)) for a, b in zip(rng.integers(0, n - 1, 3 * m), rng.integers(0, n - 1, 3 * m))
                        if a != b})[:m]
        pairs = [pairs[i] for i in rng.permutation(len(pairs))]
        src, dst = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    else:
        src, dst = rng.integers(0, n - 1, m), rng.integers(0, n - 1, m)
        dst[0] = src[0]
        src[1], dst[1] = src[2], dst[2]
    g = nw.graph((src, dst), num_nodes=n)
    g.ndata["feat"] = T(rng.random((n, 3)).astype(np.float32))
    g.edata["w"] = T((rng.random(len(src)) + 0.1).astype(np.float32))
    return g


def hetero(rng: np.random.Generator):
    """user/game heterograph: ('user', 'follows', 'user') with a self-loop and a parallel edge,
    ('user', 'plays', 'game') and ('game', 'played_by', 'user'); 'feat' on both node types and
    'w' on every edge type."""
    follows = (np.array([0, 1, 2, 2, 3, 1, 4]), np.array([1, 2, 2, 0, 1, 2, 3]))
    plays = (np.array([0, 1, 1, 3, 4]), np.array([0, 1, 2, 2, 0]))
    played_by = (np.array([0, 2, 1]), np.array([4, 3, 1]))
    g = nw.heterograph({("user", "follows", "user"): follows, ("user", "plays", "game"): plays,
                        ("game", "played_by", "user"): played_by}, {"user": 6, "game": 3})
    for nt in g.ntypes:
        g.nodes[nt].data["feat"] = T(rng.random((g.num_nodes(nt), 3)).astype(np.float32))
    for ct in g.canonical_etypes:
        g.edges[ct].data["w"] = T((rng.random(g.num_edges(ct)) + 0.1).astype(np.float32))
    return g


def snapshot(g) -> dict:
    """Everything observable about ``g``: structure, feature names and values."""
    return {"nodes": {nt: g.num_nodes(nt) for nt in g.ntypes},
            "edges": {ct: tuple(x.tolist() for x in E(g, ct)) for ct in g.canonical_etypes},
            "ndata": {nt: {k: N(v).tolist() for k, v in g.nodes[nt].data.items()} for nt in g.ntypes},
            "edata": {ct: {k: N(v).tolist() for k, v in g.edges[ct].data.items()} for ct in g.canonical_etypes}}


def dense_in(g, etype=None, weight: str | None = None) -> np.ndarray:
    """``M[v, u]``: the number (or summed weights) of edges ``u -> v``, float64."""
    ct = g.to_canonical_etype(etype) if etype is not None else g.canonical_etypes[0]
    s, d = E(g, ct)
    m = np.zeros((g.num_nodes(ct[2]), g.num_nodes(ct[0])))
    w = np.ones(len(s)) if weight is None else N(g.edges[ct].data[weight]).astype(np.float64).reshape(-1)
    np.add.at(m, (d, s), w)
    return m
