"""Edge batches for link prediction: the pair graph holds exactly the seed edges, negatives come from
the negative sampler, the blocks compute every pair-graph node, and excluded edges ('self',
'reverse_id', 'reverse_types', a callable) never appear in a block, with neighbour and LABOR
sampling, through the DataLoader, deterministic across threads. Bad input raises."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
import nodeweave.core as nc
from nodeweave.dataloading import (DataLoader, LaborSampler, NeighborSampler, as_edge_prediction_sampler,
                                   negative_sampler)
from conftest import np_of


def bidirected(seed=0, n=300, e=3000):
    """A graph with every edge i's reverse at i + e (the layout DGL's reverse_eids examples use)."""
    rng = np.random.default_rng(seed)
    s, d = rng.integers(0, n, e), rng.integers(0, n, e)
    g = nw.graph((np.concatenate([s, d]), np.concatenate([d, s])), num_nodes=n)
    rev = np.concatenate([np.arange(e, 2 * e), np.arange(e)])
    return g, rev


def block_eids(blocks):
    return np.concatenate([np_of(b.edata[nw.EID]) for b in blocks])


@pytest.mark.parametrize("base", ["neighbor", "labor"])
def test_pairs_negatives_blocks_and_reverse_exclusion(base):
    g, rev = bidirected()
    inner = NeighborSampler([-1, -1]) if base == "neighbor" else LaborSampler([50, 50])
    sampler = as_edge_prediction_sampler(inner, exclude="reverse_id", reverse_eids=rev,
                                         negative_sampler=negative_sampler.GlobalUniform(2))
    seeds = np.arange(0, 6000, 37)
    input_nodes, pair, neg, blocks = sampler.sample(g, seeds, random_seed=1)
    src, dst = (np_of(t) for t in g.edges())
    nid = np_of(pair.ndata[nw.NID])
    ps, pd = (np_of(t) for t in pair.edges())
    np.testing.assert_array_equal(np_of(pair.edata[nw.EID]), seeds)
    np.testing.assert_array_equal(nid[ps], src[seeds])
    np.testing.assert_array_equal(nid[pd], dst[seeds])
    ns, nd = (nid[np_of(t)] for t in neg.edges())
    assert len(ns) == 2 * len(seeds)
    existing = set(zip(src.tolist(), dst.tolist()))
    assert not any((u, v) in existing for u, v in zip(ns.tolist(), nd.tolist()))
    np.testing.assert_array_equal(np.sort(np_of(blocks[-1].dstdata[nw.NID])), np.sort(nid))
    used = block_eids(blocks)
    assert not np.isin(used, seeds).any() and not np.isin(used, rev[seeds]).any()
    # Only the excluded ones are missing with every neighbour taken.
    if base == "neighbor":
        into = np.isin(dst, np_of(blocks[-1].dstdata[nw.NID]))
        want = np.flatnonzero(into & ~np.isin(np.arange(6000), np.concatenate([seeds, rev[seeds]])))
        np.testing.assert_array_equal(np.sort(np_of(blocks[-1].edata[nw.EID])), want)


def test_self_and_callable_exclusion_and_no_negatives():
    g, rev = bidirected(1)
    seeds = np.arange(0, 6000, 11)
    _, pair, blocks = as_edge_prediction_sampler(NeighborSampler([-1]), exclude="self").sample(g, seeds, random_seed=0)
    used = block_eids(blocks)
    assert not np.isin(used, seeds).any() and np.isin(used, rev[seeds]).any()
    _, _, blocks = as_edge_prediction_sampler(NeighborSampler([-1]),
                                              exclude=lambda e: np.asarray(np_of(e)) + 1).sample(g, seeds)
    assert not np.isin(block_eids(blocks), seeds + 1).any()


def test_reverse_types_on_a_heterograph():
    rng = np.random.default_rng(2)
    u, i = rng.integers(0, 40, 300), rng.integers(0, 30, 300)
    g = nw.heterograph({("user", "clicks", "item"): (u, i), ("item", "clicked-by", "user"): (i, u)})
    sampler = as_edge_prediction_sampler(NeighborSampler([-1, -1]), exclude="reverse_types",
                                         reverse_etypes={"clicks": "clicked-by", "clicked-by": "clicks"},
                                         negative_sampler=negative_sampler.Uniform(1))
    seeds = {"clicks": np.arange(0, 300, 7)}
    _, pair, neg, blocks = sampler.sample(g, seeds, random_seed=3)
    assert pair.num_edges("clicks") == len(seeds["clicks"]) and pair.num_edges("clicked-by") == 0
    assert neg.num_edges("clicks") == len(seeds["clicks"])
    for b in blocks:
        for ct in b.canonical_etypes:
            assert not np.isin(np_of(b.edges[ct].data[nw.EID]), seeds["clicks"]).any()


@pytest.mark.parametrize("backend_name", ["native", "pytorch"])
def test_edge_loader_is_deterministic(backend_name):
    nw.set_backend(backend_name)
    try:
        g, rev = bidirected(4, n=1000, e=8000)
        sampler = as_edge_prediction_sampler(NeighborSampler([5, 5]), exclude="reverse_id", reverse_eids=rev,
                                             negative_sampler=negative_sampler.Uniform(3))
        before = nc.get_num_threads()
        runs = []
        for n in (1, 2):
            nc.set_num_threads(n)
            loader = DataLoader(g, np.arange(16000), sampler, batch_size=2048, shuffle=True, seed=9)
            runs.append([(np_of(p.edata[nw.EID]).copy(), np_of(q.edges()[1]).copy(), block_eids(b).copy())
                         for _, p, q, b in loader])
        nc.set_num_threads(before)
        assert len(runs[0]) == 8
        for a, b in zip(*runs):
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)
    finally:
        nw.set_backend("native")


def test_bad_input():
    g, rev = bidirected(5, n=50, e=200)
    with pytest.raises(ValueError, match="exclude must be"):
        as_edge_prediction_sampler(NeighborSampler([2]), exclude="everything")
    with pytest.raises(ValueError, match="reverse_eids"):
        as_edge_prediction_sampler(NeighborSampler([2]), exclude="reverse_id")
    with pytest.raises(ValueError, match="reverse_etypes"):
        as_edge_prediction_sampler(NeighborSampler([2]), exclude="reverse_types")
    with pytest.raises(TypeError, match="sampler must have"):
        as_edge_prediction_sampler(object())
    s = as_edge_prediction_sampler(NeighborSampler([2]))
    with pytest.raises(IndexError, match="seed_edges"):
        s.sample(g, [400])
    with pytest.raises(ValueError, match="must not be empty"):
        s.sample(g, [])
