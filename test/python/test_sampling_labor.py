"""LABOR sampling against its definition: every seed expects min(fanout, degree) edges, an edge's
frequency is its inclusion probability min(1, c_s p_ts) (weighted: c_s solved by bisection here,
independently of the C++ solver), the weights are inverse inclusion probabilities so the weighted
mean is unbiased, importance sampling reaches fewer distinct nodes, and blocks, loaders and threads
behave as for neighbour sampling. Bad input raises naming the argument."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.dataloading import DataLoader, LaborSampler
from conftest import np_of


def random_graph(seed, n=400, e=6000):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, e)
    dst = np.where(rng.random(e) < 0.3, rng.integers(0, 8, e), rng.integers(0, n, e))
    return nw.graph((src, dst), num_nodes=n), src, dst


def solve_c(p, k):
    lo, hi = 0.0, 1e9
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.minimum(1, mid * p).sum() < k else (lo, mid)
    return (lo + hi) / 2


def test_expected_count_per_seed_is_the_fanout():
    g, src, dst = random_graph(1)
    seeds = np.arange(0, 8)  # the hubs
    deg = np.bincount(dst, minlength=400)[seeds]
    counts = np.zeros(len(seeds))
    trials = 400
    for t in range(trials):
        f, _ = nw.sampling.sample_labors(g, seeds, 10, random_seed=t)
        counts += np.bincount(np_of(f.edges()[1]), minlength=400)[seeds]
    np.testing.assert_allclose(counts / trials, np.minimum(10, deg), rtol=0.08)


def test_weighted_inclusion_frequencies_match_the_definition():
    w = np.array([0.5, 1.0, 1.0, 2.0, 4.0, 8.0, 0.0, 3.0])
    g = nw.graph((np.arange(1, 9), np.zeros(8, np.int64)), num_nodes=9)
    g.edata["p"] = nc.tensor(w)
    k = 3
    pos = w > 0
    incl = np.zeros(8)
    incl[pos] = np.minimum(1, solve_c(w[pos], k) * w[pos])
    counts = np.zeros(8)
    trials = 4000
    for t in range(trials):
        f, weights = nw.sampling.sample_labors(g, [0], k, prob="p", random_seed=t)
        e = np_of(f.edata[nw.EID])
        counts[e] += 1
        np.testing.assert_allclose(np_of(weights), 1 / incl[e], rtol=1e-5)
    assert counts[6] == 0
    z = (counts[pos] - trials * incl[pos]) / np.sqrt(trials * incl[pos] * (1 - incl[pos]) + 1e-12)
    assert np.all(np.abs(z[incl[pos] < 1]) < 4.5)
    assert np.all(counts[pos][incl[pos] == 1] == trials)


def test_weights_make_the_mean_unbiased():
    g, src, dst = random_graph(2)
    x = np.random.default_rng(0).standard_normal(400)
    seed = 3  # a hub
    nbrs = src[dst == seed]
    truth = x[nbrs].mean()
    est = []
    for t in range(3000):
        f, w = nw.sampling.sample_labors(g, [seed], 5, random_seed=t)
        s = np_of(f.edges()[0])
        est.append((np_of(w) * x[s]).sum() / len(nbrs))
    se = np.std(est) / np.sqrt(len(est))
    assert abs(np.mean(est) - truth) < 4 * se


def test_importance_sampling_reaches_fewer_nodes_at_the_same_expected_fanout():
    g, src, dst = random_graph(3, n=3000, e=60000)
    seeds = np.arange(0, 3000, 5)
    distinct = {}
    for rounds in (0, -1):
        d, e = [], []
        for t in range(20):
            f, _ = nw.sampling.sample_labors(g, seeds, 4, importance_sampling=rounds, random_seed=t)
            s = np_of(f.edges()[0])
            d.append(len(np.unique(s)))
            e.append(len(s))
        distinct[rounds] = np.mean(d)
        assert abs(np.mean(e) / len(seeds) - 4) < 0.25  # every seed still expects 4 edges
    assert distinct[-1] < 0.97 * distinct[0]


def test_labor_reaches_fewer_nodes_than_neighbor_sampling():
    g, _, _ = random_graph(4, n=3000, e=60000)
    seeds = np.arange(0, 3000, 5)
    nl = np.mean([len(np.unique(np_of(nw.sampling.sample_labors(g, seeds, 4, random_seed=t)[0].edges()[0])))
                  for t in range(10)])
    nn = np.mean([len(np.unique(np_of(nw.sampling.sample_neighbors(g, seeds, 4, random_seed=t).edges()[0])))
                  for t in range(10)])
    assert nl < nn


@pytest.mark.parametrize("backend_name", ["native", "pytorch"])
def test_sampler_blocks_threads_and_loader(backend_name):
    nw.set_backend(backend_name)
    try:
        g, src, dst = random_graph(5, n=2000, e=30000)
        sampler = LaborSampler([4, 4], importance_sampling=1)
        before = nc.get_num_threads()
        runs = []
        for n in (1, 2):
            nc.set_num_threads(n)
            _, _, blocks = sampler.sample(g, np.arange(0, 2000, 9), random_seed=7)
            runs.append([(np_of(b.edata[nw.EID]).copy(), np_of(b.edata["edge_weights"]).copy()) for b in blocks])
        nc.set_num_threads(before)
        for (ea, wa), (eb, wb) in zip(*runs):
            np.testing.assert_array_equal(ea, eb)
            np.testing.assert_array_equal(wa, wb)
        for b in blocks:
            bs, bd = (np_of(t) for t in b.edges())
            eid = np_of(b.edata[nw.EID])
            np.testing.assert_array_equal(src[eid], np_of(b.srcdata[nw.NID])[bs])
            np.testing.assert_array_equal(dst[eid], np_of(b.dstdata[nw.NID])[bd])
        # batch_dependency 2: batches 0 and 1 share variates, so the same seeds sample alike.
        dep = LaborSampler([4], batch_dependency=2)
        loader = DataLoader(g, np.tile(np.arange(50), 4), dep, batch_size=50, seed=1)
        eids = [np_of(blocks[0].edata[nw.EID]).copy() for _, _, blocks in loader]
        np.testing.assert_array_equal(eids[0], eids[1])
        np.testing.assert_array_equal(eids[2], eids[3])
        assert not np.array_equal(eids[0], eids[2])
        plain = [np_of(bl[0].edata[nw.EID]).copy()
                 for _, _, bl in DataLoader(g, np.tile(np.arange(50), 4), dep, batch_size=50, seed=1, num_workers=0)]
        for a, b in zip(eids, plain):
            np.testing.assert_array_equal(a, b)
    finally:
        nw.set_backend("native")


def test_bad_input():
    g, _, _ = random_graph(6, n=50, e=300)
    with pytest.raises(ValueError, match="importance_sampling"):
        nw.sampling.sample_labors(g, [0], 2, importance_sampling=-2)
    with pytest.raises(TypeError, match="importance_sampling"):
        LaborSampler([2], importance_sampling=0.5)
    with pytest.raises(ValueError, match="batch_dependency"):
        LaborSampler([2], batch_dependency=0)
    with pytest.raises(ValueError, match="fanout must be -1"):
        nw.sampling.sample_labors(g, [0], -4)
    with pytest.raises(IndexError, match="nodes"):
        nw.sampling.sample_labors(g, [50], 2)
    g.edata["p"] = nc.tensor(np.full(300, -1.0))
    with pytest.raises(ValueError, match="prob"):
        nw.sampling.sample_labors(g, [0], 2, prob="p")
