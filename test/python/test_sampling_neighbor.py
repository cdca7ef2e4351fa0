"""Neighbour sampling, blocks and the mini-batch loader, checked against the graph itself and against
full-graph computation: sampled edges exist and point at their seeds, counts are min(fanout, degree)
without replacement, weighted frequencies follow the weights (chi-square, fixed seed), exclusions
hold, a layer on full-neighbour blocks equals the full-graph layer at the seeds, and the same seed
gives the same batches at 1 and 2 threads on both backends. Bad input raises naming the argument."""

import numpy as np
import pytest
import scipy.stats

import nodeweave as nw
import nodeweave.backend as nwb
import nodeweave.core as nc
from nodeweave.dataloading import DataLoader, MultiLayerFullNeighborSampler, NeighborSampler
from conftest import np_of


def random_graph(rng, n=300, e=4000, idtype="int64"):
    src = rng.integers(0, n, e)
    dst = np.where(rng.random(e) < 0.25, rng.integers(0, 5, e), rng.integers(0, n, e))  # a few hubs
    return nw.graph((src, dst), num_nodes=n, idtype=idtype), src, dst


@pytest.fixture
def threads():
    before = nc.get_num_threads()
    yield
    nc.set_num_threads(before)


# ----------------------------------------------------------------------------- sample_neighbors


@pytest.mark.parametrize("idtype", ["int32", "int64"])
@pytest.mark.parametrize("fanout", [0, 1, 4, 50, -1])
def test_uniform_without_replacement_takes_min_fanout_degree_distinct_edges(backend_name, idtype, fanout):
    rng = np.random.default_rng(1)
    g, src, dst = random_graph(rng, idtype=idtype)
    seeds = np.arange(0, 300, 7)
    f = nw.sampling.sample_neighbors(g, seeds, fanout, random_seed=5)
    assert f.num_nodes() == g.num_nodes()
    fs, fd = (np_of(t) for t in f.edges())
    eid = np_of(f.edata[nw.EID])
    assert str(f.idtype).endswith(idtype)
    np.testing.assert_array_equal(src[eid], fs)  # every sampled edge is an edge of g ...
    np.testing.assert_array_equal(dst[eid], fd)
    assert set(fd.tolist()) <= set(seeds.tolist())  # ... into a seed
    assert len(np.unique(eid)) == len(eid)
    deg = np.bincount(dst, minlength=300)
    got = np.bincount(fd, minlength=300)
    for v in seeds:
        assert got[v] == (deg[v] if fanout < 0 else min(fanout, deg[v]))


def test_out_edges_and_replacement(backend_name):
    rng = np.random.default_rng(2)
    g, src, dst = random_graph(rng)
    seeds = np.arange(0, 300, 11)
    f = nw.sampling.sample_neighbors(g, seeds, 6, edge_dir="out", replace=True, random_seed=1)
    eid = np_of(f.edata[nw.EID])
    fs, fd = (np_of(t) for t in f.edges())
    np.testing.assert_array_equal(src[eid], fs)
    np.testing.assert_array_equal(dst[eid], fd)
    outdeg = np.bincount(src, minlength=300)
    got = np.bincount(fs, minlength=300)
    for v in seeds:
        assert got[v] == (6 if outdeg[v] else 0)


@pytest.mark.parametrize("replace", [False, True])
def test_weighted_frequencies_follow_the_weights(replace):
    w = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 10.0])
    g = nw.graph((np.arange(1, 7), np.zeros(6, np.int64)), num_nodes=7)
    g.edata["p"] = nc.tensor(w)
    counts = np.zeros(6)
    for t in range(6000):
        f = nw.sampling.sample_neighbors(g, [0], 1, prob="p", replace=replace, random_seed=t)
        counts[np_of(f.edata[nw.EID])] += 1
    assert counts[0] == 0
    _, p = scipy.stats.chisquare(counts[1:], counts[1:].sum() * w[1:] / w[1:].sum())
    assert p > 1e-3


def test_weighted_without_replacement_second_pick_frequencies():
    # Successive sampling: P(first = i, second = j) = w_i / W * w_j / (W - w_i). Check the
    # marginal inclusion probabilities of a 2-of-4 draw against that formula.
    w = np.array([1.0, 2.0, 3.0, 4.0])
    W = w.sum()
    incl = np.zeros(4)
    for i in range(4):
        for j in range(4):
            if i != j:
                p = w[i] / W * w[j] / (W - w[i])
                incl[i] += p
                incl[j] += p
    g = nw.graph((np.arange(1, 5), np.zeros(4, np.int64)), num_nodes=5)
    g.edata["p"] = nc.tensor(w)
    counts = np.zeros(4)
    trials = 5000
    for t in range(trials):
        f = nw.sampling.sample_neighbors(g, [0], 2, prob="p", random_seed=t)
        e = np_of(f.edata[nw.EID])
        assert len(set(e.tolist())) == 2
        counts[e] += 1
    _, p = scipy.stats.chisquare(counts, trials * incl)
    assert p > 1e-3


@pytest.mark.parametrize("replace", [False, True])
def test_block_sampler_weighted_frequencies_follow_the_weights(backend_name, replace):
    # The block sampler reads its own packed copy of the adjacency and alias tables
    # (sampling/packed_rows.h): 400 seeds, each with six in-edges weighted 0, 1, 2, 3, 4, 10.
    w = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 10.0])
    seeds = np.arange(400)
    src = 400 + np.arange(6 * 400)
    dst = np.repeat(seeds, 6)
    g = nw.graph((src, dst), num_nodes=400 + 6 * 400)
    g.edata["p"] = nwb.current().from_numpy(np.tile(w, 400))
    sampler = NeighborSampler([1], prob="p", replace=replace)
    counts = np.zeros(6)
    for t in range(10):
        _, _, (block,) = sampler.sample(g, seeds, random_seed=t)
        assert block.num_edges() == 400
        counts += np.bincount(np_of(block.edata[nw.EID]) % 6, minlength=6)
    assert counts[0] == 0
    _, p = scipy.stats.chisquare(counts[1:], counts[1:].sum() * w[1:] / w[1:].sum())
    assert p > 1e-3


def test_mask_and_exclusion_are_never_sampled():
    rng = np.random.default_rng(3)
    g, src, dst = random_graph(rng)
    mask = rng.random(g.num_edges()) < 0.5
    g.edata["m"] = nc.tensor(mask)
    f = nw.sampling.sample_neighbors(g, np.arange(300), -1, mask="m", random_seed=0)
    assert np_of(f.edata["m"]).all() and f.num_edges() == mask.sum()
    excl = np.flatnonzero(mask)
    f = nw.sampling.sample_neighbors(g, np.arange(300), 3, exclude_edges=excl, random_seed=0)
    assert not np.isin(np_of(f.edata[nw.EID]), excl).any()


def test_heterograph_per_etype_fanout():
    g = nw.heterograph({("user", "follows", "user"): ([0, 1, 2, 3], [1, 1, 1, 0]),
                        ("game", "played-by", "user"): ([0, 1, 2, 0], [1, 1, 0, 0])})
    f = nw.sampling.sample_neighbors(g, {"user": [1]}, {"follows": 2, "played-by": -1}, random_seed=0)
    assert f.num_edges("follows") == 2 and f.num_edges("played-by") == 2
    assert f.num_nodes("game") == 3
    with pytest.raises(ValueError, match="fanout must give a value for every edge type"):
        nw.sampling.sample_neighbors(g, {"user": [1]}, {"follows": 2})
    with pytest.raises(ValueError, match="unknown edge type"):
        nw.sampling.sample_neighbors(g, {"user": [1]}, {"follows": 2, "nope": 1})


def test_same_sample_at_one_and_two_threads(backend_name, threads):
    rng = np.random.default_rng(4)
    g, _, _ = random_graph(rng, n=20000, e=300000)
    g.edata["p"] = nc.tensor(rng.random(g.num_edges()))
    seeds = np.arange(0, 20000, 3)
    out = []
    for n in (1, 2):
        nc.set_num_threads(n)
        f = nw.sampling.sample_neighbors(g, seeds, 5, random_seed=42)
        fw = nw.sampling.sample_neighbors(g, seeds, 5, prob="p", random_seed=42)
        out.append((np_of(f.edata[nw.EID]), np_of(fw.edata[nw.EID])))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    other = nw.sampling.sample_neighbors(g, seeds, 5, random_seed=43)
    assert not np.array_equal(np_of(other.edata[nw.EID]), out[0][0])


def test_default_generator_makes_runs_repeatable():
    g, _, _ = random_graph(np.random.default_rng(5))
    nc.manual_seed(7)
    a = np_of(nw.sampling.sample_neighbors(g, [0, 1, 2], 2).edata[nw.EID])
    nc.manual_seed(7)
    b = np_of(nw.sampling.sample_neighbors(g, [0, 1, 2], 2).edata[nw.EID])
    np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------- bad input


def test_bad_input_names_the_argument():
    g, _, _ = random_graph(np.random.default_rng(6), n=50, e=200)
    g.edata["p"] = nc.tensor(np.ones(200))
    s = nw.sampling.sample_neighbors
    with pytest.raises(ValueError, match="fanout must be -1"):
        s(g, [0], -2)
    with pytest.raises(TypeError, match="fanout must be an int"):
        s(g, [0], 2.5)
    with pytest.raises(IndexError, match="nodes"):
        s(g, [0, 50], 2)
    with pytest.raises(IndexError, match="nodes"):
        s(g, [-1], 2)
    with pytest.raises(TypeError, match="nodes must hold integer ids"):
        s(g, np.array([0.5]), 2)
    with pytest.raises(KeyError, match="no edge feature 'q'"):
        s(g, [0], 2, prob="q")
    for bad, what in ((-1.0, "non-negative"), (np.nan, "non-negative")):
        w = np.ones(200)
        w[7] = bad
        g.edata["p"] = nc.tensor(w)
        with pytest.raises(ValueError, match=f"prob.*{what}"):
            s(g, [0], 2, prob="p")
    g.edata["p2"] = nc.tensor(np.ones((200, 2)))
    with pytest.raises(ValueError, match="one value per edge"):
        s(g, [0], 2, prob="p2")
    with pytest.raises(ValueError, match="edge_dir"):
        s(g, [0], 2, edge_dir="both")
    with pytest.raises(IndexError, match="exclude_edges"):
        s(g, [0], 2, exclude_edges=[200])
    with pytest.raises(ValueError, match="random_seed"):
        s(g, [0], 2, random_seed=-3)


def test_sampler_and_loader_bad_input():
    g, _, _ = random_graph(np.random.default_rng(7), n=50, e=200)
    with pytest.raises(ValueError, match="fanouts must name at least one layer"):
        NeighborSampler([])
    with pytest.raises(ValueError, match=r"fanouts\[1\] must be -1"):
        NeighborSampler([5, -3])
    with pytest.raises(TypeError, match="fanouts must be a list"):
        NeighborSampler(5)
    with pytest.raises(ValueError, match="indices must not be empty"):
        DataLoader(g, [], NeighborSampler([2]))
    with pytest.raises(IndexError, match="seed_nodes"):
        NeighborSampler([2]).sample(g, [51])
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(g, [1], NeighborSampler([2]), batch_size=0)
    with pytest.raises(TypeError, match="graph_sampler"):
        DataLoader(g, [1], object())
    with pytest.raises(ValueError, match="dst_nodes must be unique"):
        NeighborSampler([2]).sample(g, [3, 3])
    hg = nw.heterograph({("a", "r", "b"): ([0], [0]), ("b", "s", "a"): ([0], [0])})
    with pytest.raises(ValueError, match="fanouts must give a value for every edge type"):
        NeighborSampler([{"r": 1}]).sample(hg, {"a": [0]})


# ----------------------------------------------------------------------------- blocks


def test_to_block_relabels_destinations_first_and_maps_back():
    rng = np.random.default_rng(8)
    g, src, dst = random_graph(rng, n=40, e=150)
    g.edata["w"] = nc.tensor(rng.random(150))
    seeds = np.array([5, 3, 17, 0])
    f = nw.sampling.sample_neighbors(g, seeds, 3, random_seed=0)
    b = nw.to_block(f, seeds)
    assert b.is_block and b.num_dst_nodes() == 4
    src_ids = np_of(b.srcdata[nw.NID])
    np.testing.assert_array_equal(src_ids[:4], seeds)
    np.testing.assert_array_equal(np_of(b.dstdata[nw.NID]), seeds)
    assert len(np.unique(src_ids)) == len(src_ids)
    bs, bd = (np_of(t) for t in b.edges())
    eid = np_of(b.edata[nw.EID])
    np.testing.assert_array_equal(src[eid], src_ids[bs])
    np.testing.assert_array_equal(dst[eid], seeds[bd])
    np.testing.assert_allclose(np_of(b.edata["w"]), np_of(g.edata["w"])[eid])
    with pytest.raises(ValueError, match="not among dst_nodes"):
        nw.to_block(f, seeds[:2])


def test_create_block_and_relation_slicing():
    b = nw.create_block({("a", "r", "b"): ([0, 1], [0, 0]), ("b", "s", "b"): ([0, 2], [1, 0])},
                        num_src_nodes={"a": 2, "b": 3}, num_dst_nodes={"b": 2})
    assert b.srctypes == ["a", "b"] and b.dsttypes == ["b"]
    assert b.num_src_nodes("b") == 3 and b.num_dst_nodes("b") == 2
    assert b.num_nodes() == 2 + 3 + 2
    b.srcnodes["b"].data["x"] = nc.ones(3, 2)
    b.dstnodes["b"].data["x"] = nc.zeros(2, 2)
    assert tuple(b.srcdata["x"]["b"].shape) == (3, 2) and tuple(b.dstdata["x"].shape) == (2, 2)
    sub = b["s"]
    assert sub.num_src_nodes() == 3 and sub.num_dst_nodes() == 2 and sub.num_edges() == 2
    sub.update_all(nw.function.copy_u("x", "m"), nw.function.sum("m", "y"))
    assert sub.dstdata["y"].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert b.in_degrees(etype="s").tolist() == [1, 1]
    with pytest.raises(IndexError, match="destination nodes"):
        b.in_degrees(2, etype="s")


def _full_layer_check(backend_name, layer_cls, make):
    """A two-layer stack on MultiLayerFullNeighborSampler blocks equals the full-graph stack at the
    seeds, exactly (the same sums in the same order: block rows keep the graph's edge order)."""
    rng = np.random.default_rng(9)
    g, _, _ = random_graph(rng, n=120, e=900)
    g = nw.add_self_loop(nw.remove_self_loop(g))
    x_np = rng.standard_normal((120, 5))
    T = nwb.get(backend_name)
    x = T.from_numpy(x_np)
    l1, l2 = make(5, 4), make(4, 3)
    if backend_name == "native":
        l1, l2 = l1.double(), l2.double()
    else:
        l1, l2 = l1.double(), l2.double()
    full = l2(g, l1(g, x))
    seeds = np.array([3, 0, 77, 41, 119])
    input_nodes, output_nodes, blocks = MultiLayerFullNeighborSampler(2).sample(g, seeds, random_seed=0)
    h = T.index_select(x, T.int_tensor(np_of(input_nodes), "cpu", "int64"))
    h = l2(blocks[1], l1(blocks[0], h))
    np.testing.assert_array_equal(np_of(output_nodes), seeds)
    np.testing.assert_allclose(np_of(h), np_of(full)[seeds], rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("layer", ["GraphConv", "SAGEConv", "GATConv", "GINConv"])
def test_layer_on_full_neighbour_blocks_equals_full_graph(backend_name, layer):
    import nodeweave.nn.native as nn_native

    if backend_name == "pytorch":
        import nodeweave.nn.pytorch as nn_mod
    else:
        nn_mod = nn_native
    makers = {
        # norm='right' only: 'both' scales by the out-degree in the block, which differs from the
        # graph's (as in DGL), so it is not the full-graph layer.
        "GraphConv": lambda i, o: nn_mod.GraphConv(i, o, norm="right"),
        "SAGEConv": lambda i, o: nn_mod.SAGEConv(i, o, "mean"),
        "GATConv": lambda i, o: _GatFlat(nn_mod.GATConv(i, o, 2)),
        "GINConv": lambda i, o: nn_mod.GINConv(_linear(backend_name, i, o), "sum"),
    }
    _full_layer_check(backend_name, layer, makers[layer])


def _linear(backend_name, i, o):
    if backend_name == "pytorch":
        import torch

        return torch.nn.Linear(i, o)
    return nc.nn.Linear(i, o)


class _GatFlat:
    """GATConv with its heads averaged, so that layers stack."""

    def __init__(self, conv):
        self.conv = conv

    def double(self):
        self.conv = self.conv.double()
        return self

    def __call__(self, g, x):
        return self.conv(g, x).mean(1)


# ----------------------------------------------------------------------------- the loader


def _epoch(loader):
    out = []
    for input_nodes, output_nodes, blocks in loader:
        out.append((np_of(input_nodes).copy(), np_of(output_nodes).copy(),
                    [np_of(b.edata[nw.EID]).copy() for b in blocks]))
    return out


def _same_epochs(a, b):
    assert len(a) == len(b)
    for (ia, oa, ea), (ib, ob, eb) in zip(a, b):
        np.testing.assert_array_equal(ia, ib)
        np.testing.assert_array_equal(oa, ob)
        for x, y in zip(ea, eb):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("num_workers", [0, 1, 2])
def test_loader_is_deterministic_across_threads_and_workers(backend_name, threads, num_workers):
    rng = np.random.default_rng(10)
    g, _, _ = random_graph(rng, n=3000, e=40000)
    sampler = NeighborSampler([5, 3])
    runs = []
    for n in (1, 2):
        nc.set_num_threads(n)
        loader = DataLoader(g, np.arange(0, 3000, 2), sampler, batch_size=256, shuffle=True, seed=11,
                            num_workers=num_workers)
        runs.append((_epoch(loader), _epoch(loader)))
    _same_epochs(runs[0][0], runs[1][0])
    _same_epochs(runs[0][1], runs[1][1])
    assert not np.array_equal(runs[0][0][0][1], runs[0][1][0][1])  # a new epoch shuffles anew
    seen = np.concatenate([o for _, o, _ in runs[0][0]])
    np.testing.assert_array_equal(np.sort(seen), np.arange(0, 3000, 2))


def test_loader_prefetches_features_and_labels(backend_name):
    rng = np.random.default_rng(12)
    g, _, _ = random_graph(rng, n=500, e=5000)
    T = nwb.get(backend_name)
    g.ndata["feat"] = T.from_numpy(rng.standard_normal((500, 3)).astype(np.float32))
    g.ndata["label"] = T.from_numpy(rng.integers(0, 4, 500))
    sampler = NeighborSampler([4, 4], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = DataLoader(g, np.arange(100), sampler, batch_size=32, drop_last=True)
    assert len(loader) == 3
    for input_nodes, output_nodes, blocks in loader:
        np.testing.assert_array_equal(np_of(blocks[0].srcdata["feat"]), np_of(g.ndata["feat"])[np_of(input_nodes)])
        np.testing.assert_array_equal(np_of(blocks[-1].dstdata["label"]), np_of(g.ndata["label"])[np_of(output_nodes)])


def _os_threads() -> int:
    """Threads of this process as the OS sees them: Python threads and the C++ loader's alike."""
    import os

    return len(os.listdir("/proc/self/task"))


@pytest.mark.parametrize("native", [True, False])
def test_loader_stops_its_workers_on_break_and_on_error(native):
    import gc

    g, _, _ = random_graph(np.random.default_rng(13), n=500, e=4000)
    g.in_degrees()  # the OpenMP pool exists before the count
    before = _os_threads()

    class Custom(NeighborSampler):  # a Python override: Python worker threads
        def sample_blocks(self, g, seeds, exclude_eids=None, *, random_seed=None):
            return super().sample_blocks(g, seeds, exclude_eids, random_seed=random_seed)

    cls = NeighborSampler if native else Custom
    loader = DataLoader(g, np.arange(500), cls([3]), batch_size=10, num_workers=2)
    for i, _ in enumerate(loader):
        assert _os_threads() > before  # the workers run
        if i == 2:
            break
    gc.collect()
    assert _os_threads() == before

    class Failing(cls):
        def sample_blocks(self, g, seeds, exclude_eids=None, *, random_seed=None):
            raise RuntimeError("sampler failed")

    # The native loader calls no Python: its worker fails on batch 3, whose seeds repeat a node.
    bad = np.arange(500) if not native else np.concatenate([np.arange(30), [5, 5], np.arange(40, 100)])
    with pytest.raises((RuntimeError, ValueError), match="sampler failed|must be unique"):
        for _ in DataLoader(g, bad, Failing([3]) if not native else NeighborSampler([3]), batch_size=10,
                            num_workers=2):
            pass
    gc.collect()
    assert _os_threads() == before


def test_heterograph_blocks():
    rng = np.random.default_rng(14)
    g = nw.heterograph({("user", "follows", "user"): (rng.integers(0, 30, 100), rng.integers(0, 30, 100)),
                        ("game", "played-by", "user"): (rng.integers(0, 10, 60), rng.integers(0, 30, 60)),
                        ("user", "plays", "game"): (rng.integers(0, 30, 60), rng.integers(0, 10, 60))})
    sampler = NeighborSampler([{"follows": 2, "played-by": 1, "plays": 3}] * 2)
    input_nodes, output_nodes, blocks = sampler.sample(g, {"user": [0, 1, 2]}, random_seed=0)
    assert set(output_nodes) == {"user", "game"}
    np.testing.assert_array_equal(np_of(output_nodes["user"]), [0, 1, 2])
    for b in blocks:
        for ct in b.canonical_etypes:
            st, _, dt = ct
            s_ids = np_of(b.srcnodes[st].data[nw.NID])
            d_ids = np_of(b.dstnodes[dt].data[nw.NID])
            np.testing.assert_array_equal(s_ids[:len(np_of(b.dstnodes[st].data[nw.NID]))] if st in b.dsttypes else s_ids[:0],
                                          np_of(b.dstnodes[st].data[nw.NID]) if st in b.dsttypes else s_ids[:0])
            bs, bd = (np_of(t) for t in b.edges(etype=ct))
            gs, gd = (np_of(t) for t in g.edges(etype=ct))
            eid = np_of(b.edges[ct].data[nw.EID])
            np.testing.assert_array_equal(gs[eid], s_ids[bs])
            np.testing.assert_array_equal(gd[eid], d_ids[bd])
    assert np.bincount(np_of(blocks[1].edges(etype="follows")[1]), minlength=3).max() <= 2


def test_native_loader_gives_the_batches_of_the_plain_path(backend_name):
    """The C++ loader (num_workers >= 1) and sampling in the calling thread (num_workers=0) derive
    the same keys, so they yield the same batches; a subclass that overrides sampling falls back to
    Python workers."""
    from nodeweave.dataloading.dataloader import _NativeIterator, _PrefetchIterator

    rng = np.random.default_rng(15)
    g, _, _ = random_graph(rng, n=2000, e=20000)
    T = nwb.get(backend_name)
    g.ndata["x"] = T.from_numpy(rng.standard_normal((2000, 2)))
    sampler = NeighborSampler([4, 2], prefetch_node_feats=["x"])
    runs = {}
    for workers in (0, 1, 3):
        loader = DataLoader(g, np.arange(2000), sampler, batch_size=300, shuffle=True, seed=5,
                            num_workers=workers)
        it = iter(loader)
        if workers:
            assert isinstance(it, _NativeIterator)
        else:
            assert not isinstance(it, (_NativeIterator, _PrefetchIterator))
        runs[workers] = []
        for input_nodes, output_nodes, blocks in it:
            np.testing.assert_array_equal(np_of(blocks[0].srcdata["x"]), np_of(g.ndata["x"])[np_of(input_nodes)])
            runs[workers].append((np_of(input_nodes).copy(), np_of(output_nodes).copy(),
                                  [np_of(b.edata[nw.EID]).copy() for b in blocks]))
    _same_epochs(runs[0], runs[1])
    _same_epochs(runs[0], runs[3])

    class Custom(NeighborSampler):
        def sample_blocks(self, g, seeds, exclude_eids=None, *, random_seed=None):
            return super().sample_blocks(g, seeds, exclude_eids, random_seed=random_seed)

    it = iter(DataLoader(g, np.arange(2000), Custom([4, 2]), batch_size=300, shuffle=True, seed=5, num_workers=1))
    assert isinstance(it, _PrefetchIterator)
    _same_epochs(runs[0], [(np_of(i).copy(), np_of(o).copy(), [np_of(b.edata[nw.EID]).copy() for b in bl])
                           for i, o, bl in it])


@pytest.mark.parametrize("layer", ["SAGEConv-pool", "SAGEConv-lstm", "SAGEConv-gcn", "GATv2Conv", "EdgeConv",
                                   "GINEConv", "NNConv", "RelGraphConv", "GraphConv-none"])
def test_more_layers_on_full_neighbour_blocks(layer):
    """One layer on a full-neighbour block equals the full-graph layer at the seeds (native engine,
    float64; rtol 1e-12: max/LSTM aggregations see the same neighbours in the same order)."""
    import nodeweave.nn.native as nn_mod

    rng = np.random.default_rng(16)
    g, _, _ = random_graph(rng, n=80, e=600)
    g = nw.add_self_loop(nw.remove_self_loop(g))
    e = g.num_edges()
    x = nc.tensor(rng.standard_normal((80, 4)))
    ef = nc.tensor(rng.standard_normal((e, 4)))
    et = nc.tensor(rng.integers(0, 3, e))
    nc.manual_seed(0)
    make, extra = {
        "SAGEConv-pool": (lambda: nn_mod.SAGEConv(4, 3, "pool"), None),
        "SAGEConv-lstm": (lambda: nn_mod.SAGEConv(4, 3, "lstm"), None),
        "SAGEConv-gcn": (lambda: nn_mod.SAGEConv(4, 3, "gcn"), None),
        "GATv2Conv": (lambda: nn_mod.GATv2Conv(4, 3, 2), None),
        "EdgeConv": (lambda: nn_mod.EdgeConv(4, 3), None),
        "GINEConv": (lambda: nn_mod.GINEConv(nc.nn.Linear(4, 3)), ef),
        "NNConv": (lambda: nn_mod.NNConv(4, 3, nc.nn.Linear(4, 12), "mean"), ef),
        "RelGraphConv": (lambda: nn_mod.RelGraphConv(4, 3, 3, "basis", 2), et),
        "GraphConv-none": (lambda: nn_mod.GraphConv(4, 3, norm="none"), None),
    }[layer]
    m = make().double()
    full = m(g, x) if extra is None else m(g, x, extra)
    seeds = np.array([5, 0, 79, 33])
    input_nodes, _, blocks = MultiLayerFullNeighborSampler(1).sample(g, seeds, random_seed=0)
    b = blocks[0]
    h = x.index_select(0, nc.tensor(np_of(input_nodes)))
    if extra is None:
        out = m(b, h)
    else:
        out = m(b, h, extra.index_select(0, nc.tensor(np_of(b.edata[nw.EID]))))
    np.testing.assert_allclose(np_of(out), np_of(full)[seeds], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["SGConv", "TAGConv", "APPNPConv", "ChebConv", "GCN2Conv"])
def test_multi_hop_layers_refuse_blocks_clearly(name):
    import nodeweave.nn.native as nn_mod

    g, _, _ = random_graph(np.random.default_rng(17), n=40, e=300)
    _, _, blocks = MultiLayerFullNeighborSampler(1).sample(g, [0, 1], random_seed=0)
    m = {"SGConv": lambda: nn_mod.SGConv(4, 3, k=2), "TAGConv": lambda: nn_mod.TAGConv(4, 3, k=2),
         "APPNPConv": lambda: nn_mod.APPNPConv(2, 0.1), "ChebConv": lambda: nn_mod.ChebConv(4, 3, 2),
         "GCN2Conv": lambda: nn_mod.GCN2Conv(4, 1)}[name]()
    x = nc.randn(blocks[0].num_src_nodes(), 4)
    with pytest.raises(ValueError, match="cannot run on a block"):
        m(blocks[0], x, x) if name == "GCN2Conv" else m(blocks[0], x)


_CTRL_C_SCRIPT = r"""
import os, sys, time
import numpy as np
import nodeweave as nw
from nodeweave.dataloading import DataLoader, NeighborSampler
g = nw.rand_graph(200000, 4000000, seed=0)
g.in_degrees()  # the OpenMP pool exists before the count below
tasks = len(os.listdir("/proc/self/task"))  # OS threads, the C++ workers included
loader = DataLoader(g, np.arange(200000), NeighborSampler([-1, -1]), batch_size=50000, num_workers=2,
                    prefetch_depth=1, seed=0)
print("iterating", flush=True)
try:
    for _ in loader:
        if sys.argv[1] == "consumer":
            time.sleep(60)  # Ctrl-C lands in the training loop
except KeyboardInterrupt:
    print("interrupted", flush=True)
    # A joined thread can stay listed for a moment: pthread_join returns when the kernel clears the
    # thread's id, a little before it drops the task. A worker left running would stay for good.
    deadline = time.monotonic() + 5
    while len(os.listdir("/proc/self/task")) > tasks and time.monotonic() < deadline:
        time.sleep(0.01)
    print("extra threads", len(os.listdir("/proc/self/task")) - tasks, flush=True)
"""


@pytest.mark.parametrize("where", ["consumer", "waiting"])
def test_ctrl_c_stops_the_loader(tmp_path, where):
    """SIGINT while the training loop runs, or while it waits in the C++ loader for a batch that
    takes seconds to sample, raises KeyboardInterrupt promptly and leaves no worker behind."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "ctrl_c.py"
    script.write_text(_CTRL_C_SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.Popen([sys.executable, str(script), where], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    assert p.stdout.readline().strip() == "iterating"
    time.sleep(1.5 if where == "consumer" else 0.3)
    t0 = time.perf_counter()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert "interrupted" in out, err
    assert "extra threads 0" in out  # the C++ workers were joined
    assert p.returncode == 0
    assert time.perf_counter() - t0 < 30
