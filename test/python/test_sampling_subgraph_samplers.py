"""Subgraph samplers (Cluster-GCN, GraphSAINT, ShaDow-KHop) checked against NumPy: METIS parts cover
every node once, are balanced and cut far fewer edges than a random assignment on an SBM graph;
the partition cache round-trips, is written atomically and is recomputed for another graph; every
batch is exactly the induced subgraph of its node set; GraphSAINT's draws follow the stated
probabilities (chi-square, fixed seeds) and its normalization equals a direct count; ShaDow puts
the seeds first and stays within k hops; the same seed gives the same batches at 1 and 2 threads on
both backends; the loader runs an epoch of each; bad input raises the named exception."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

import nodeweave as nw
import nodeweave.backend as nwb
import nodeweave.core as nc
from nodeweave import _C
from nodeweave.dataloading import ClusterGCNSampler, DataLoader, SAINTSampler, ShaDowKHopSampler
from nodeweave.dataloading import cluster_gcn as cluster_gcn_module
from conftest import np_of

BACKENDS = ["native", "pytorch"]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def threads():
    before = nc.get_num_threads()
    yield
    nc.set_num_threads(before)


def sbm(k=8, size=150, p_in=0.08, p_out=0.002, seed=0):
    p = np.full((k, k), p_out)
    np.fill_diagonal(p, p_in)
    return nw.sbm_graph([size] * k, p, seed=seed)


def edges_np(g):
    return tuple(np_of(t).astype(np.int64) for t in g.edges())


def check_induced(g, sg, nodes):
    """``sg`` is the subgraph of ``g`` induced by ``nodes`` (node i = nodes[i]), edges in id order."""
    src, dst = edges_np(g)
    nodes = np.asarray(nodes, np.int64)
    pos = np.full(g.num_nodes(), -1)
    pos[nodes] = np.arange(len(nodes))
    keep = np.flatnonzero((pos[src] >= 0) & (pos[dst] >= 0))
    np.testing.assert_array_equal(np_of(sg.ndata[nw.NID]), nodes)
    np.testing.assert_array_equal(np_of(sg.edata[nw.EID]), keep)
    s, d = edges_np(sg)
    np.testing.assert_array_equal(s, pos[src[keep]])
    np.testing.assert_array_equal(d, pos[dst[keep]])


def parts_of(sampler, n):
    part = np.full(n, -1)
    for p in range(sampler.k):
        part[sampler.part_nodes(p)] = p
    return part


# ----------------------------------------------------------------------------- METIS / Cluster-GCN


def test_metis_parts_cover_every_node_once_balanced_with_a_small_cut(tmp_path):
    g = sbm()
    n, k = g.num_nodes(), 8
    s = ClusterGCNSampler(g, k, cache_path=str(tmp_path / "c.npz"))
    ids = s.partition_node_ids
    np.testing.assert_array_equal(np.sort(ids), np.arange(n))  # every node exactly once
    assert len(s.partition_offset) == k + 1 and s.partition_offset[-1] == n
    sizes = np.diff(s.partition_offset)
    assert sizes.max() <= int(1.03 * n / k) + 1  # METIS' default k-way imbalance
    part = parts_of(s, n)
    src, dst = edges_np(g)
    cut = np.mean(part[src] != part[dst])
    random_cut = np.mean(np.random.default_rng(0).integers(0, k, n)[src] != np.random.default_rng(0).integers(0, k, n)[dst])
    assert cut < random_cut / 4, (cut, random_cut)
    for p in range(k):
        assert np.all(np.diff(s.part_nodes(p)) > 0)  # increasing ids within a part


def test_metis_balances_training_nodes_and_recursive_mode(tmp_path):
    g = sbm(k=4, size=100)
    train = np.zeros(400, np.int64)
    train[:60] = 1  # all in community 0: unbalanced unless METIS is told
    s = ClusterGCNSampler(g, 4, cache_path=None, balance_ntypes=train, balance_edges=True)
    per_part = [train[s.part_nodes(p)].sum() for p in range(4)]
    assert max(per_part) - min(per_part) <= 6, per_part
    r = ClusterGCNSampler(g, 4, cache_path=None, mode="recursive")
    assert np.diff(r.partition_offset).max() <= 101


def test_metis_same_parts_at_one_and_two_threads(threads):
    g = sbm(seed=3)
    out = []
    for t in (1, 2):
        nc.set_num_threads(t)
        out.append(ClusterGCNSampler(g, 6, cache_path=None, seed=5).partition_node_ids.copy())
    np.testing.assert_array_equal(out[0], out[1])


def test_cluster_gcn_batch_is_the_induced_subgraph_of_the_union(backend_name, rng, tmp_path):
    g = sbm(k=5, size=60)
    T = nwb.get(backend_name)
    g.ndata["feat"] = T.from_numpy(rng.standard_normal((300, 3)).astype(np.float32))
    g.ndata["other"] = T.from_numpy(np.arange(300))
    g.edata["w"] = T.from_numpy(rng.random(g.num_edges()))
    s = ClusterGCNSampler(g, 5, cache_path=str(tmp_path / "c.npz"))
    sg = s.sample(g, np.array([3, 0]))
    nodes = np.concatenate([s.part_nodes(3), s.part_nodes(0)])
    check_induced(g, sg, nodes)
    np.testing.assert_array_equal(np_of(sg.ndata["feat"]), np_of(g.ndata["feat"])[nodes])
    np.testing.assert_array_equal(np_of(sg.edata["w"]), np_of(g.edata["w"])[np_of(sg.edata[nw.EID])])
    assert "other" in sg.ndata  # prefetch None: every feature
    only = ClusterGCNSampler(g, 5, cache_path=str(tmp_path / "c.npz"), prefetch_ndata=["feat"], prefetch_edata=[])
    sg2 = only.sample(g, [3, 0])
    assert sorted(sg2.ndata) == ["_ID", "feat"] and sorted(sg2.edata) == ["_ID"]


def test_cluster_gcn_cache_round_trip_and_recompute_on_another_graph(tmp_path):
    path = str(tmp_path / "cluster_gcn.pkl")
    g = sbm(k=4, size=50, seed=1)
    a = ClusterGCNSampler(g, 4, cache_path=path)
    assert not a.loaded_from_cache and os.path.exists(path)
    b = ClusterGCNSampler(g, 4, cache_path=path)
    assert b.loaded_from_cache
    np.testing.assert_array_equal(a.partition_node_ids, b.partition_node_ids)
    np.testing.assert_array_equal(a.partition_offset, b.partition_offset)
    # Same node and edge counts, one edge moved: the edge hash catches it.
    src, dst = edges_np(g)
    dst2 = dst.copy()
    dst2[0] = (dst2[0] + 1) % 200 if (dst2[0] + 1) % 200 != src[0] else (dst2[0] + 2) % 200
    g2 = nw.graph((src, dst2), num_nodes=200)
    c = ClusterGCNSampler(g2, 4, cache_path=path)
    assert not c.loaded_from_cache
    assert ClusterGCNSampler(g2, 4, cache_path=path).loaded_from_cache  # the file now holds g2's
    assert not ClusterGCNSampler(g2, 2, cache_path=path).loaded_from_cache  # another k
    assert not ClusterGCNSampler(g2, 2, cache_path=path, seed=9).loaded_from_cache  # another seed
    with open(path, "wb") as f:  # a corrupt file is recomputed and replaced
        f.write(b"PK\x03\x04 not a zip")
    assert not ClusterGCNSampler(g2, 2, cache_path=path).loaded_from_cache
    assert ClusterGCNSampler(g2, 2, cache_path=path).loaded_from_cache


def test_cluster_gcn_cache_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "parts.npz"
    g = sbm(k=3, size=40, seed=2)

    def failing_savez(f, **arrays):
        f.write(b"partial bytes")
        raise OSError("disk full")

    monkeypatch.setattr(cluster_gcn_module.np, "savez", failing_savez)
    with pytest.raises(OSError, match="disk full"):
        ClusterGCNSampler(g, 3, cache_path=str(path))
    assert list(tmp_path.iterdir()) == []  # neither the cache nor a temporary file
    monkeypatch.undo()
    ClusterGCNSampler(g, 3, cache_path=str(path))
    before = path.read_bytes()
    monkeypatch.setattr(cluster_gcn_module.np, "savez", failing_savez)
    with pytest.raises(OSError):
        ClusterGCNSampler(g, 2, cache_path=str(path))  # a recompute that fails to write ...
    assert path.read_bytes() == before  # ... leaves the old cache whole
    assert [p.name for p in tmp_path.iterdir()] == ["parts.npz"]


# ----------------------------------------------------------------------------- GraphSAINT


def forward_graph(n, e, seed):
    """Edges only from lower to higher id, no repeats: a sampled edge's two endpoints name it."""
    rng = np.random.default_rng(seed)
    pairs = set()
    while len(pairs) < e:
        a, b = sorted(rng.integers(0, n, 2).tolist())
        if a != b:
            pairs.add((a, b))
    src, dst = np.array(sorted(pairs)).T
    return nw.graph((src, dst), num_nodes=n), src, dst


def test_saint_node_draws_follow_out_degree():
    g, src, dst = forward_graph(30, 100, 0)
    s = SAINTSampler("node", 1)
    counts = np.zeros(30)
    for t in range(20000):
        (v,) = s.sample_nodes(g, random_seed=t)
        counts[v] += 1
    w = np.maximum(np.bincount(src, minlength=30), 1)
    _, p = scipy.stats.chisquare(counts, counts.sum() * w / w.sum())
    assert p > 1e-3


def test_saint_node_inclusion_with_a_budget():
    # With b draws, P(v in the set) = 1 - (1 - q_v)^b: compare per node, within 5 binomial sigmas.
    g, src, dst = forward_graph(40, 160, 1)
    b, trials = 12, 4000
    s = SAINTSampler("node", b)
    hits = np.zeros(40)
    for t in range(trials):
        hits[s.sample_nodes(g, random_seed=t)] += 1
    q = np.maximum(np.bincount(src, minlength=40), 1).astype(float)
    p = 1 - (1 - q / q.sum()) ** b
    assert np.all(np.abs(hits - trials * p) <= 5 * np.sqrt(trials * p * (1 - p)) + 1)


def test_saint_edge_draws_follow_inverse_degrees():
    g, src, dst = forward_graph(25, 70, 2)
    s = SAINTSampler("edge", 1)
    index = {(a, b): i for i, (a, b) in enumerate(zip(src.tolist(), dst.tolist()))}
    counts = np.zeros(len(src))
    for t in range(30000):
        a, b = s.sample_nodes(g, random_seed=t)
        counts[index[(a, b)]] += 1
    w = 1 / np.maximum(np.bincount(dst, minlength=25), 1)[dst] + 1 / np.maximum(np.bincount(src, minlength=25), 1)[src]
    _, p = scipy.stats.chisquare(counts, counts.sum() * w / w.sum())
    assert p > 1e-3


def test_saint_walk_steps_are_uniform_out_edges():
    g, src, dst = forward_graph(15, 40, 3)
    s = SAINTSampler("walk", (1, 1))
    out = np.bincount(src, minlength=15)
    cells = {(a, b): i for i, (a, b) in enumerate(zip(src.tolist(), dst.tolist()))}
    dead = [v for v in range(15) if out[v] == 0]
    for v in dead:
        cells[(v,)] = len(cells)
    counts = np.zeros(len(cells))
    trials = 30000
    for t in range(trials):
        counts[cells[tuple(s.sample_nodes(g, random_seed=t).tolist())]] += 1
    expect = np.concatenate([1 / 15 / out[src], np.full(len(dead), 1 / 15)]) * trials
    _, p = scipy.stats.chisquare(counts, expect)
    assert p > 1e-3


@pytest.mark.parametrize("mode,budget", [("node", 40), ("edge", 30), ("walk", (6, 3))])
def test_saint_batch_is_the_induced_subgraph_and_normalization_is_a_direct_count(backend_name, mode, budget):
    g, src, dst = forward_graph(60, 300, 4)
    g = nw.add_reverse_edges(g)  # both directions: walks go anywhere
    src, dst = edges_np(g)
    T = nwb.get(backend_name)
    g.ndata["x"] = T.from_numpy(np.arange(60, dtype=np.float32))
    N = 30
    s = SAINTSampler(mode, budget, num_norm_samples=N, norm_seed=7)
    cv, ce = np.zeros(60, np.int64), np.zeros(len(src), np.int64)
    for i in range(N):
        nodes = s.sample_nodes(g, random_seed=_C.sampling.derive_key(7, i))
        m = np.zeros(60, bool)
        m[nodes] = True
        cv += m
        ce += m[src] & m[dst]
    norm = s.normalization(g)
    np.testing.assert_array_equal(norm["node_count"], cv)
    np.testing.assert_array_equal(norm["edge_count"], ce)
    np.testing.assert_allclose(norm["loss_norm"], N / (np.maximum(cv, 1) * 60), rtol=1e-6)
    np.testing.assert_allclose(norm["aggr_norm"], np.maximum(cv, 1)[dst] / np.maximum(ce, 1), rtol=1e-6)
    sg = s.sample(g, 0, random_seed=123)
    nodes = s.sample_nodes(g, random_seed=123)
    check_induced(g, sg, nodes)
    np.testing.assert_array_equal(np_of(sg.ndata["x"]), nodes.astype(np.float32))
    np.testing.assert_allclose(np_of(sg.ndata["loss_norm"]), norm["loss_norm"][nodes])
    np.testing.assert_allclose(np_of(sg.edata["aggr_norm"]), norm["aggr_norm"][np_of(sg.edata[nw.EID])])
    assert nwb.of(sg.ndata["loss_norm"]).name == backend_name


def test_saint_cache_false_rebuilds_for_a_changed_graph():
    g1, _, _ = forward_graph(20, 40, 5)
    g2, _, _ = forward_graph(20, 40, 6)
    for cache in (True, False):
        s = SAINTSampler("edge", 5, cache=cache)
        a = s.sample_nodes(g1, random_seed=1)
        b = s.sample_nodes(g2, random_seed=1)  # another graph object: never the first one's sums
        np.testing.assert_array_equal(b, SAINTSampler("edge", 5).sample_nodes(g2, random_seed=1))
        np.testing.assert_array_equal(a, SAINTSampler("edge", 5).sample_nodes(g1, random_seed=1))


# ----------------------------------------------------------------------------- ShaDow


def test_shadow_subgraph_is_induced_on_the_sampled_hops_with_seeds_first(backend_name):
    rng = np.random.default_rng(7)
    n = 400
    src, dst = rng.integers(0, n, 3000), rng.integers(0, n, 3000)
    g = nw.graph((src, dst), num_nodes=n)
    T = nwb.get(backend_name)
    g.ndata["h"] = T.from_numpy(rng.standard_normal((n, 2)))
    seeds = np.array([17, 3, 250])
    s = ShaDowKHopSampler([3, 2])
    input_nodes, output_nodes, sg = s.sample(g, seeds, random_seed=9)
    inp = np_of(input_nodes)
    np.testing.assert_array_equal(np_of(output_nodes), seeds)
    np.testing.assert_array_equal(inp[:3], seeds)  # seeds are the subgraph's first nodes
    assert len(np.unique(inp)) == len(inp)
    check_induced(g, sg, inp)
    np.testing.assert_array_equal(np_of(sg.ndata["h"]), np_of(g.ndata["h"])[inp])
    # Every sampled node reaches a seed in at most 2 hops, and hop sizes respect the fanouts.
    hop1 = set(seeds.tolist())
    for v in seeds:
        hop1 |= set(src[dst == v].tolist())
    hop2 = set(hop1)
    for v in hop1:
        hop2 |= set(src[dst == v].tolist())
    assert set(inp.tolist()) <= hop2
    assert len(inp) <= 3 + 3 * 2 + (3 + 3 * 2) * 3


def test_shadow_prob_zero_edges_are_never_followed():
    # Seed 0's in-neighbours 1..6; only 1..3 may be sampled. Nodes 4..6 have no other path to 0.
    g = nw.graph(([1, 2, 3, 4, 5, 6, 7], [0, 0, 0, 0, 0, 0, 4]), num_nodes=8)
    g.edata["p"] = nc.tensor(np.array([1.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0]))
    for seed in range(20):
        inp, _, _ = ShaDowKHopSampler([2], prob="p").sample(g, [0], random_seed=seed)
        nodes = set(np_of(inp).tolist())
        assert len(nodes) == 3 and nodes <= {0, 1, 2, 3}
        inp, _, _ = ShaDowKHopSampler([-1, 2], prob="p").sample(g, [0], random_seed=seed)
        assert set(np_of(inp).tolist()) == {0, 1, 2, 3}  # the second hop takes every weighted edge


def test_shadow_excluded_edges_are_neither_sampled_nor_kept():
    g = nw.graph(([1, 2, 3, 2, 1], [0, 0, 1, 1, 2]), num_nodes=4)
    _, _, sg = ShaDowKHopSampler([-1, -1]).sample(g, [0], exclude_eids=[3], random_seed=0)
    assert 3 not in np_of(sg.edata[nw.EID]).tolist()
    inp, _, sg_all = ShaDowKHopSampler([-1, -1]).sample(g, [0], random_seed=0)
    assert sorted(np_of(sg_all.edata[nw.EID]).tolist()) == [0, 1, 2, 3, 4]


# ----------------------------------------------------------------------------- determinism, loader


def _epoch_nodes(loader, pick):
    return [np_of(pick(b)).copy() for b in loader]


def _loaders(g, k_path):
    return {
        "cluster": (DataLoader(g, np.arange(8), ClusterGCNSampler(g, 8, cache_path=k_path), batch_size=2,
                               shuffle=True, seed=3), lambda sg: sg.ndata[nw.NID]),
        "saint": (DataLoader(g, np.arange(6), SAINTSampler("walk", (50, 3), num_norm_samples=10), seed=3),
                  lambda sg: sg.edata["aggr_norm"]),
        "shadow": (DataLoader(g, np.arange(0, 1200, 3), ShaDowKHopSampler([5, 5]), batch_size=64, shuffle=True,
                              seed=3), lambda b: b[2].edata[nw.EID]),
    }


@pytest.mark.parametrize("num_workers", [0, 2])
def test_batches_are_the_same_at_one_and_two_threads(backend_name, threads, tmp_path, num_workers):
    g = sbm()
    runs = []
    for t in (1, 2):
        nc.set_num_threads(t)
        out = {}
        for name, (loader, pick) in _loaders(g, str(tmp_path / f"c{t}.npz")).items():
            loader.num_workers = num_workers
            out[name] = (_epoch_nodes(loader, pick), _epoch_nodes(loader, pick))
        runs.append(out)
    for name in runs[0]:
        for e in (0, 1):
            a, b = runs[0][name][e], runs[1][name][e]
            assert len(a) == len(b)
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)
        # A new epoch draws anew (Cluster-GCN: a new shuffle of the parts).
        assert any(not np.array_equal(x, y) for x, y in zip(runs[0][name][0], runs[0][name][1]))


def test_loader_epoch_of_cluster_batches_covers_every_node_once(tmp_path):
    g = sbm(k=4, size=50)
    loader = DataLoader(g, np.arange(10), ClusterGCNSampler(g, 10, cache_path=str(tmp_path / "c.npz")),
                        batch_size=3, shuffle=True, seed=0, num_workers=2)
    seen = np.concatenate([np_of(sg.ndata[nw.NID]) for sg in loader])
    np.testing.assert_array_equal(np.sort(seen), np.arange(200))


# ----------------------------------------------------------------------------- bad input


def test_bad_input_raises_the_named_exception(tmp_path):
    g = sbm(k=2, size=20)
    path = str(tmp_path / "c.npz")
    with pytest.raises(ValueError, match=r"k \(the number of parts\) must be >= 1"):
        ClusterGCNSampler(g, 0, cache_path=path)
    with pytest.raises(ValueError, match="at most the number of nodes, 40, got 41"):
        ClusterGCNSampler(g, 41, cache_path=path)
    with pytest.raises(TypeError, match="k must be an int"):
        ClusterGCNSampler(g, 2.0, cache_path=path)
    with pytest.raises(ValueError, match="mode must be 'k-way' or 'recursive'"):
        ClusterGCNSampler(g, 2, cache_path=path, mode="kway")
    with pytest.raises(ValueError, match="balance_ntypes must hold one value per node"):
        ClusterGCNSampler(g, 2, cache_path=path, balance_ntypes=np.zeros(3))
    hg = nw.heterograph({("a", "r", "b"): ([0], [0])})
    with pytest.raises(ValueError, match="one node type and one edge type"):
        ClusterGCNSampler(hg, 1, cache_path=path)
    s = ClusterGCNSampler(g, 2, cache_path=path)
    with pytest.raises(IndexError, match=r"partition_ids must be in \[0, 2\), got 2"):
        s.sample(g, [0, 2])
    with pytest.raises(ValueError, match="partition_ids must be distinct"):
        s.sample(g, [1, 1])
    with pytest.raises(KeyError, match="no node feature 'nope'"):
        ClusterGCNSampler(g, 2, cache_path=path, prefetch_ndata=["nope"]).sample(g, [0])

    with pytest.raises(ValueError, match="budget must be positive, got 0"):
        SAINTSampler("node", 0)
    with pytest.raises(ValueError, match="budget must be positive, got -3"):
        SAINTSampler("edge", -3)
    with pytest.raises(ValueError, match=r"budget\[1\] \(walk_length\) must be positive"):
        SAINTSampler("walk", (3, 0))
    with pytest.raises(TypeError, match=r"budget must be \(num_roots, walk_length\)"):
        SAINTSampler("walk", 3)
    with pytest.raises(ValueError, match="mode must be 'node', 'edge' or 'walk'"):
        SAINTSampler("nodes", 3)
    with pytest.raises(ValueError, match="num_norm_samples"):
        SAINTSampler("node", 3, num_norm_samples=-1)
    with pytest.raises(ValueError, match="has no edges to sample"):
        SAINTSampler("edge", 3).sample(nw.graph(([], []), num_nodes=3))
    with pytest.raises(ValueError, match="built with num_norm_samples=0"):
        SAINTSampler("node", 3).normalization(g)

    with pytest.raises(ValueError, match=r"fanouts\[1\] must be -1"):
        ShaDowKHopSampler([2, -2])
    with pytest.raises(ValueError, match="fanouts must name at least one layer"):
        ShaDowKHopSampler([])
    with pytest.raises(IndexError, match="seed_nodes"):
        ShaDowKHopSampler([2]).sample(g, [40])
    with pytest.raises(ValueError, match="random_seed"):
        ShaDowKHopSampler([2]).sample(g, [0], random_seed=-1)


# ----------------------------------------------------------------------------- examples


def _run_example(name, *args):
    env = {k: v for k, v in os.environ.items() if k != "NODEWEAVE_BACKEND"}
    env["PYTHONPATH"] = str(ROOT / "python")
    out = subprocess.run([sys.executable, str(ROOT / "examples" / name), *args], env=env, check=True,
                         capture_output=True, text=True, timeout=600).stdout
    last = out.strip().splitlines()[-1]
    m = re.fullmatch(r"Test (?:accuracy|micro-F1): (\d\.\d{4})( ± \d\.\d{4})?", last)
    assert m, f"last line was {last!r}"
    return float(m.group(1))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("script", ["cluster_gcn.py", "graphsaint.py"])
def test_examples_learn_cora_in_short_mode(backend, script, tmp_path):
    # Cora: 7 classes, the largest holds about 30% of the test nodes.
    extra = ["--cache-dir", str(tmp_path)] if script == "cluster_gcn.py" else []
    acc = _run_example(script, "--dataset", "cora", "--epochs", "30", "--quiet", "--backend", backend, *extra)
    assert acc > 0.65
