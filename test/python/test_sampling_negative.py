"""Negative sampling (nodeweave.sampling.global_uniform_negative_sampling and
nodeweave.dataloading.negative_sampler) against the graph's own edge list: global negatives are never
an edge nor (when excluded) a self-loop, never repeat without replacement; per-source negatives keep
the positive edge's source and are uniform over destinations (chi-square); results are identical at
1 and 2 threads and for a fixed seed; both backends return their own tensors; bad input raises the
named exception type."""

import numpy as np
import pytest
from scipy import stats

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.dataloading import negative_sampler
from transform_helpers import rand_edges

IDTYPES = ["int32", "int64"]


@pytest.fixture(params=["native", "pytorch"])
def backend_name(request):
    if request.param == "pytorch":
        pytest.importorskip("torch")
    nw.set_backend(request.param)
    return request.param


def to_np(t):
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


def check_tensor(t, backend_name, idtype):
    if backend_name == "pytorch":
        import torch

        assert isinstance(t, torch.Tensor) and t.dtype == getattr(torch, idtype)
    else:
        assert isinstance(t, nc.Tensor) and str(t.dtype).endswith(idtype)


def edge_set(g, etype=None):
    s, d = g.edges(etype=etype)
    return set(zip(to_np(s).tolist(), to_np(d).tolist()))


def at_threads(n, fn):
    before = nc.get_num_threads()
    nc.set_num_threads(n)
    try:
        return fn()
    finally:
        nc.set_num_threads(before)


@pytest.mark.parametrize("idtype", IDTYPES)
def test_global_negatives_are_non_edges_without_loops_or_repeats(rng, backend_name, idtype):
    s, d = rand_edges(rng, 60, 900)
    g = nw.graph((s, d), num_nodes=60, idtype=idtype)
    src, dst = nw.sampling.global_uniform_negative_sampling(g, 1500, random_seed=3)
    check_tensor(src, backend_name, idtype)
    check_tensor(dst, backend_name, idtype)
    pairs = list(zip(to_np(src).tolist(), to_np(dst).tolist()))
    assert len(pairs) == 1500
    assert not set(pairs) & edge_set(g)
    assert all(u != v for u, v in pairs)
    assert len(set(pairs)) == len(pairs)
    assert all(0 <= u < 60 and 0 <= v < 60 for u, v in pairs)


def test_global_negatives_with_replacement_and_loops(rng):
    g = nw.graph(([0, 1], [1, 2]), num_nodes=3)
    src, dst = nw.sampling.global_uniform_negative_sampling(g, 300, exclude_self_loops=False, replace=True,
                                                            random_seed=5)
    pairs = list(zip(to_np(src).tolist(), to_np(dst).tolist()))
    assert len(pairs) == 300 and not set(pairs) & {(0, 1), (1, 2)}
    # 7 non-edges, 3 of them loops: with replacement both repeats and loops must show up
    assert set(pairs) == {(0, 0), (0, 2), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)}
    # without replacement: each of the 7 once, fewer than asked (documented)
    src, dst = nw.sampling.global_uniform_negative_sampling(g, 300, exclude_self_loops=False, random_seed=5)
    assert sorted(zip(to_np(src).tolist(), to_np(dst).tolist())) == sorted(set(pairs))


def test_global_negatives_hetero_relation_keeps_cross_type_pairs(rng):
    # Self-loop exclusion only applies within one node type: user 1 -> item 1 is a valid negative.
    g = nw.heterograph({("user", "buys", "item"): ([0], [0]), ("user", "follows", "user"): ([0], [1])},
                       {"user": 2, "item": 2})
    src, dst = nw.sampling.global_uniform_negative_sampling(g, 10, etype="buys", random_seed=0)
    assert sorted(zip(to_np(src).tolist(), to_np(dst).tolist())) == [(0, 1), (1, 0), (1, 1)]
    src, dst = nw.sampling.global_uniform_negative_sampling(g, 10, etype="follows", random_seed=0)
    assert sorted(zip(to_np(src).tolist(), to_np(dst).tolist())) == [(1, 0)]


def test_global_negatives_dense_graph_returns_what_exists():
    n = 12
    u, v = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    keep = (u != v).ravel()
    keep[[1, 30, 77]] = False  # (0, 1), (2, 6), (6, 5) are the only non-edges besides loops
    g = nw.graph((u.ravel()[keep], v.ravel()[keep]), num_nodes=n)
    src, dst = nw.sampling.global_uniform_negative_sampling(g, 50, random_seed=2)
    assert sorted(zip(to_np(src).tolist(), to_np(dst).tolist())) == [(0, 1), (2, 6), (6, 5)]


def test_per_source_uniform_is_uniform_and_keeps_sources(rng, backend_name):
    s, d = rand_edges(rng, 30, 200)
    g = nw.graph((s, d), num_nodes=30)
    eids = rng.integers(0, 200, 400)
    k = 25
    src, dst = negative_sampler.Uniform(k)(g, eids, random_seed=11)
    check_tensor(src, backend_name, "int64")
    src, dst = to_np(src), to_np(dst)
    np.testing.assert_array_equal(src, np.repeat(s[eids], k))
    counts = np.bincount(dst, minlength=30)
    assert stats.chisquare(counts).pvalue > 1e-3
    assert negative_sampler.PerSourceUniform is negative_sampler.Uniform


@pytest.mark.parametrize("sampler", ["per_source", "global"])
def test_same_result_at_one_and_two_threads(rng, sampler):
    s, d = rand_edges(rng, 3000, 60000)
    g = nw.graph((s, d), num_nodes=3000)
    eids = np.arange(0, 60000, 2)
    f = negative_sampler.Uniform(5) if sampler == "per_source" else negative_sampler.GlobalUniform(1)
    one = at_threads(1, lambda: f(g, eids, random_seed=99))
    two = at_threads(2, lambda: f(g, eids, random_seed=99))
    for a, b in zip(one, two):
        np.testing.assert_array_equal(to_np(a), to_np(b))
    other = f(g, eids, random_seed=100)
    assert not np.array_equal(to_np(one[1]), to_np(other[1]))


def test_default_seed_follows_manual_seed(rng):
    g = nw.graph(([0, 1, 2], [1, 2, 3]))
    nc.manual_seed(7)
    a = nw.sampling.global_uniform_negative_sampling(g, 5)
    nc.manual_seed(7)
    b = nw.sampling.global_uniform_negative_sampling(g, 5)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(to_np(x), to_np(y))


@pytest.mark.parametrize("idtype", IDTYPES)
def test_samplers_on_heterograph_dict(rng, backend_name, idtype):
    g = nw.heterograph({("user", "buys", "item"): (rng.integers(0, 6, 20), rng.integers(0, 4, 20)),
                        ("user", "follows", "user"): rand_edges(rng, 6, 15)},
                       {"user": 6, "item": 4}, idtype=idtype)
    eids = {"buys": [0, 3, 5], ("user", "follows", "user"): np.array([1, 2])}
    out = negative_sampler.Uniform(2)(g, eids, random_seed=1)
    assert set(out) == {("user", "buys", "item"), ("user", "follows", "user")}
    bs, _ = g.edges(etype="buys")
    src, dst = out[("user", "buys", "item")]
    check_tensor(src, backend_name, idtype)
    np.testing.assert_array_equal(to_np(src), np.repeat(to_np(bs)[[0, 3, 5]], 2))
    assert to_np(dst).max() < 4
    out = negative_sampler.GlobalUniform(2)(g, eids, random_seed=1)
    for ct, (src, dst) in out.items():
        pairs = set(zip(to_np(src).tolist(), to_np(dst).tolist()))
        assert len(pairs) == len(to_np(src)) == 2 * len(eids["buys" if ct[1] == "buys" else ct])
        assert not pairs & edge_set(g, ct)
        if ct[0] == ct[2]:
            assert all(u != v for u, v in pairs)
    # each edge type draws from its own streams
    same = negative_sampler.GlobalUniform(2)(g, {"follows": [1, 2]}, random_seed=1)
    np.testing.assert_array_equal(to_np(same[("user", "follows", "user")][0]),
                                  to_np(out[("user", "follows", "user")][0]))


def test_bad_inputs_raise_named_errors(rng):
    g = nw.graph(([0, 1, 2], [1, 2, 3]))
    h = nw.heterograph({("a", "x", "a"): ([0], [0]), ("a", "y", "a"): ([0], [0])})
    with pytest.raises(ValueError, match="k must be"):
        negative_sampler.Uniform(0)
    with pytest.raises(TypeError, match="k must be"):
        negative_sampler.GlobalUniform(1.5)
    with pytest.raises(IndexError, match="eids"):
        negative_sampler.Uniform(1)(g, [0, 3])
    with pytest.raises(TypeError, match="eids"):
        negative_sampler.Uniform(1)(g, [0.5])
    with pytest.raises(ValueError, match="dict"):
        negative_sampler.GlobalUniform(1)(h, [0])
    with pytest.raises(ValueError, match="unknown edge type"):
        negative_sampler.Uniform(1)(h, {"z": [0]})
    with pytest.raises(TypeError, match="graph"):
        negative_sampler.Uniform(1)("g", [0])
    with pytest.raises(ValueError, match="random_seed"):
        negative_sampler.Uniform(1)(g, [0], random_seed=-1)
    f = nw.sampling.global_uniform_negative_sampling
    with pytest.raises(ValueError, match="num_samples"):
        f(g, -1)
    with pytest.raises(TypeError, match="num_samples"):
        f(g, "3")
    with pytest.raises(ValueError, match="redundancy"):
        f(g, 3, redundancy=-1.0)
    with pytest.raises(TypeError, match="redundancy"):
        f(g, 3, redundancy="lots")
    with pytest.raises(ValueError, match="etype"):
        f(h, 3)
    with pytest.raises(TypeError, match="graph"):
        f(None, 3)
    # the C++ entry points check on their own, naming the argument
    rel = g._host(g.canonical_etypes[0])
    with pytest.raises(ValueError, match="k "):
        nw._C.sampling.per_source_uniform_negatives(rel, np.array([0]), 0, 1)
    with pytest.raises(IndexError, match="eids\\[0\\] = 9"):
        nw._C.sampling.per_source_uniform_negatives(rel, np.array([9]), 1, 1)
    with pytest.raises(ValueError, match="num_samples"):
        nw._C.sampling.global_uniform_negatives(rel, -2, True, False, None, 1)
    with pytest.raises(ValueError, match="redundancy"):
        nw._C.sampling.global_uniform_negatives(rel, 2, True, False, float("nan"), 1)
