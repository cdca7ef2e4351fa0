"""Random augmentations (DropNode, DropEdge, AddEdge, FeatMask, NodeShuffle) on homogeneous, batched
and heterogeneous graphs, on both backends: what survives is exactly a subgraph of the input (found
through id features), rates match p within binomial bounds, and nodeweave.core.manual_seed makes
every draw repeatable."""

from __future__ import annotations

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.transforms import AddEdge, DropEdge, DropNode, FeatMask, NodeShuffle

from transforms_support import E, N, T, bk, hetero, homo, snapshot  # noqa: F401


def with_ids(g):
    """``g`` with ``ndata['nid']`` / ``edata['eid']`` holding each node's / edge's original id."""
    for nt in g.ntypes:
        g.nodes[nt].data["nid"] = T(np.arange(g.num_nodes(nt), dtype=np.int64))
    for ct in g.canonical_etypes:
        g.edges[ct].data["eid"] = T(np.arange(g.num_edges(ct), dtype=np.int64))
    return g


def big(rng, n=400, m=2000):
    g = nw.graph((rng.integers(0, n, m), rng.integers(0, n, m)), num_nodes=n)
    g.ndata["feat"] = T(rng.random((n, 4)).astype(np.float32))
    return with_ids(g)


def within_binomial(count, n, p):
    sd = np.sqrt(n * p * (1 - p))
    return abs(count - n * p) <= 5 * sd + 1


def test_drop_node(bk, rng):
    g = big(rng)
    before = snapshot(g)
    out = DropNode(p=0.3)(g)
    kept = N(out.ndata["nid"])
    assert np.all(np.diff(kept) > 0) and within_binomial(g.num_nodes() - len(kept), g.num_nodes(), 0.3)
    np.testing.assert_array_equal(N(out.ndata["feat"]), N(g.ndata["feat"])[kept])
    # the surviving edges are exactly those with both ends kept, in order, relabelled
    s, d = E(g)
    alive = np.isin(s, kept) & np.isin(d, kept)
    np.testing.assert_array_equal(N(out.edata["eid"]), np.flatnonzero(alive))
    os_, od = E(out)
    np.testing.assert_array_equal(kept[os_], s[alive])
    np.testing.assert_array_equal(kept[od], d[alive])
    assert "_ID" not in out.ndata and snapshot(g) == before
    assert DropNode(0.0)(g).num_nodes() == g.num_nodes() and DropNode(1.0)(g).num_nodes() == 0


def test_drop_edge(bk, rng):
    g = big(rng)
    out = DropEdge(p=0.4)(g)
    kept = N(out.edata["eid"])
    assert np.all(np.diff(kept) > 0) and within_binomial(g.num_edges() - len(kept), g.num_edges(), 0.4)
    s, d = E(g)
    np.testing.assert_array_equal(np.stack(E(out)), np.stack([s[kept], d[kept]]))
    assert out.num_nodes() == g.num_nodes()
    np.testing.assert_array_equal(N(out.ndata["feat"]), N(g.ndata["feat"]))


def test_drops_on_heterograph_and_batch(bk, rng):
    g = with_ids(hetero(rng))
    out = DropEdge(p=0.5)(g)
    for ct in g.canonical_etypes:
        kept = N(out.edges[ct].data["eid"])
        s, d = E(g, ct)
        np.testing.assert_array_equal(np.stack(E(out, ct)), np.stack([s[kept], d[kept]]))
    nodes = DropNode(p=0.5)(g)
    for ct in g.canonical_etypes:
        ks, kd = N(nodes.nodes[ct[0]].data["nid"]), N(nodes.nodes[ct[2]].data["nid"])
        s, d = E(g, ct)
        alive = np.isin(s, ks) & np.isin(d, kd)
        np.testing.assert_array_equal(N(nodes.edges[ct].data["eid"]), np.flatnonzero(alive))
    parts = [big(rng, 30, 80) for _ in range(3)]
    bg = nw.batch(parts)
    for t in (DropNode(0.5), DropEdge(0.5)):
        out = t(bg)
        assert out.batch_size == 3
        pieces = nw.unbatch(out)
        nid = N(out.ndata["nid"])
        bnn = N(out.batch_num_nodes())
        for i, piece in enumerate(pieces):
            # each piece holds the survivors of part i only: its edges join its own nodes
            np.testing.assert_array_equal(N(piece.ndata["nid"]), nid[bnn[:i].sum():bnn[:i + 1].sum()])
            s, d = E(parts[i])
            ps, pd = E(piece)
            eid = N(piece.edata["eid"])
            np.testing.assert_array_equal(N(piece.ndata["nid"])[ps], s[eid])
            np.testing.assert_array_equal(N(piece.ndata["nid"])[pd], d[eid])


def test_add_edge(bk, rng):
    g = homo(rng)
    m = g.num_edges()
    out = AddEdge(ratio=0.5)(g)
    assert out.num_edges() == m + int(0.5 * m)
    s, d = E(g)
    os_, od = E(out)
    np.testing.assert_array_equal(os_[:m], s)
    np.testing.assert_array_equal(od[:m], d)
    assert os_[m:].max() < g.num_nodes() and od[m:].max() < g.num_nodes()
    w = N(out.edata["w"])
    np.testing.assert_array_equal(w[:m], N(g.edata["w"]))
    np.testing.assert_array_equal(w[m:], 0.0)
    h = hetero(rng)
    ho = AddEdge(ratio=1.0)(h)
    for ct in h.canonical_etypes:
        assert ho.num_edges(ct) == 2 * h.num_edges(ct)
        s, d = E(ho, ct)
        assert s.max() < h.num_nodes(ct[0]) and d.max() < h.num_nodes(ct[2])
    with pytest.raises(ValueError, match="AddEdge: ratio must be at least 0"):
        AddEdge(ratio=-0.1)


def test_feat_mask(bk, rng):
    g = hetero(rng)
    g.nodes["user"].data["wide"] = T(rng.random((6, 500)).astype(np.float32) + 1)
    g.nodes["game"].data["wide"] = T(rng.random((3, 500)).astype(np.float32) + 1)
    out = FeatMask(p=0.3, node_feat_names=["wide"])(g)
    for nt in g.ntypes:
        x, y = N(g.nodes[nt].data["wide"]), N(out.nodes[nt].data["wide"])
        masked = (y == 0).all(0)
        assert ((y == 0) == masked[None, :]).all()  # whole columns, the same for every row
        np.testing.assert_array_equal(y[:, ~masked], x[:, ~masked])
        assert within_binomial(masked.sum(), 500, 0.3)
    np.testing.assert_array_equal(N(out.nodes["user"].data["feat"]), N(g.nodes["user"].data["feat"]))
    with pytest.raises(KeyError, match="no edge feature 'nope'"):
        FeatMask(edge_feat_names=["nope"])(g)
    with pytest.raises(ValueError, match="at least two dimensions"):
        FeatMask(p=0.5, edge_feat_names=["w"])(g)


def test_node_shuffle(bk, rng):
    g = hetero(rng)
    g.nodes["user"].data["id"] = T(np.arange(6, dtype=np.int64))
    out = NodeShuffle()(g)
    perm = N(out.nodes["user"].data["id"])
    assert sorted(perm.tolist()) == list(range(6))
    np.testing.assert_array_equal(N(out.nodes["user"].data["feat"]), N(g.nodes["user"].data["feat"])[perm])
    assert snapshot(out)["edges"] == snapshot(g)["edges"]
    assert sorted(map(tuple, N(out.nodes["game"].data["feat"]).tolist())) == \
        sorted(map(tuple, N(g.nodes["game"].data["feat"]).tolist()))


@pytest.mark.parametrize("make", [lambda: DropNode(0.5), lambda: DropEdge(0.5), lambda: AddEdge(0.5),
                                  lambda: FeatMask(0.5, node_feat_names=["feat"]), lambda: NodeShuffle()],
                         ids=["DropNode", "DropEdge", "AddEdge", "FeatMask", "NodeShuffle"])
def test_seed_makes_augmentations_repeatable(bk, rng, make):
    g = big(rng, 50, 200)
    t = make()
    nc.manual_seed(11)
    a = snapshot(t(g))
    b = snapshot(t(g))
    nc.manual_seed(11)
    assert snapshot(t(g)) == a and a != b  # same seed, same draw; the next call draws anew


def test_probability_arguments():
    for cls in (DropNode, DropEdge, FeatMask):
        with pytest.raises(ValueError, match=f"{cls.__name__}: p must be a probability"):
            cls(p=1.5)
        with pytest.raises(TypeError, match=f"{cls.__name__}: p must be a finite number"):
            cls(p="0.5")


def test_clone(bk, rng):
    g = homo(rng)
    c = g.clone()
    assert c is not g and snapshot(c) == snapshot(g)
    c.ndata["new"] = T(np.zeros(g.num_nodes(), np.float32))
    del c.edata["w"]
    assert "new" not in g.ndata and "w" in g.edata
