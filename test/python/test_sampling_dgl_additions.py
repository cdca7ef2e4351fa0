"""DGL's sampling functions that nodeweave adds on its samplers: sample_neighbors_fused (a block),
sample_etype_neighbors (per edge type of a homogenized graph), select_topk (checked against a
brute-force per-node sort), pack_traces, the uniform sampling of edge types without the prob
feature, and the graph pinning queries. Both backends."""

import collections

import numpy as np
import pytest

import nodeweave as nw
from conftest import np_of


def _in_edges(g, seeds):
    src, dst = (np_of(t) for t in g.edges())
    return {(int(s), int(d)) for s, d in zip(src, dst) if d in set(seeds)}


def test_fused_sampling_is_a_block_of_the_sampled_edges(backend_name, rng):
    g = nw.graph((rng.integers(0, 30, 200), rng.integers(0, 30, 200)), num_nodes=30)
    B = nw.backend.current()
    g.ndata["x"] = B.from_numpy(np.arange(30, dtype=np.float32))
    g.edata["w"] = B.from_numpy(np.arange(200, dtype=np.float32))
    seeds = [7, 3, 7, 11]
    b = nw.sampling.sample_neighbors_fused(g, seeds, -1, random_seed=0)
    assert b.is_block
    dst_ids, src_ids = np_of(b.dstdata[nw.NID]), np_of(b.srcdata[nw.NID])
    assert dst_ids.tolist() == [7, 3, 11]                        # a repeated seed once, in order
    np.testing.assert_array_equal(src_ids[:3], dst_ids)           # seeds lead the sources
    s, d = (np_of(t) for t in b.edges())
    assert {(int(src_ids[u]), int(dst_ids[v])) for u, v in zip(s, d)} == _in_edges(g, seeds)
    eid = np_of(b.edata[nw.EID])
    gs, gd = (np_of(t) for t in g.edges())
    np.testing.assert_array_equal(gs[eid], src_ids[s])
    np.testing.assert_array_equal(np_of(b.edata["w"]), eid.astype(np.float32))
    np.testing.assert_array_equal(np_of(b.srcdata["x"]), src_ids.astype(np.float32))
    np.testing.assert_array_equal(np_of(b.dstdata["x"]), dst_ids.astype(np.float32))
    two = nw.sampling.sample_neighbors_fused(g, seeds, 2, random_seed=1)
    assert (np.bincount(np_of(two.edges()[1]), minlength=3) <= 2).all()
    with pytest.raises(ValueError, match="edge_dir must be 'in'"):
        nw.sampling.sample_neighbors_fused(g, seeds, 2, edge_dir="out")


def test_an_edge_type_without_prob_is_sampled_uniformly(backend_name):
    g = nw.heterograph({("u", "a", "v"): ([0, 1, 2], [0, 0, 0]), ("u", "b", "v"): ([0, 1, 2], [0, 0, 0])})
    g.edges["a"].data["p"] = nw.backend.current().from_numpy(np.array([0.0, 1.0, 0.0], np.float32))
    seen = collections.Counter()
    for seed in range(30):
        f = nw.sampling.sample_neighbors(g, {"v": [0]}, 1, prob="p", random_seed=seed)
        assert np_of(f.edges["a"].data[nw.EID]).tolist() == [1]   # weights hold where given
        seen.update(np_of(f.edges["b"].data[nw.EID]).tolist())
    assert set(seen) == {0, 1, 2}                                   # uniform where not
    with pytest.raises(KeyError, match="no edge feature 'q' on any edge type"):
        nw.sampling.sample_neighbors(g, {"v": [0]}, 1, prob="q")


def test_etype_neighbors_counts_per_type(backend_name, rng):
    n = 20
    src, dst = rng.integers(0, n, 300), rng.integers(0, n, 300)
    etype = rng.integers(0, 3, 300)
    order = np.argsort(etype, kind="stable")               # to_homogeneous's layout: ids grouped by type
    src, dst, etype = src[order], dst[order], etype[order]
    g = nw.graph((src, dst), num_nodes=n)
    B = nw.backend.current()
    g.edata[nw.ETYPE] = B.from_numpy(etype)
    offset = np.r_[0, np.cumsum(np.bincount(etype, minlength=3))].tolist()
    fanout = [2, 0, -1]
    seeds = np.arange(0, n, 2)
    for replace in (False, True):
        f = nw.sampling.sample_etype_neighbors(g, seeds, offset, B.from_numpy(np.array(fanout)), replace=replace,
                                               random_seed=5)
        eid = np_of(f.edata[nw.EID])
        np.testing.assert_array_equal(np_of(f.edata[nw.ETYPE]), etype[eid])
        np.testing.assert_array_equal(np_of(f.edges()[1]), dst[eid])
        if not replace:
            assert len(set(eid.tolist())) == len(eid)
        for v in seeds:
            for t in range(3):
                deg = int(((dst == v) & (etype == t)).sum())
                got = int(((dst[eid] == v) & (etype[eid] == t)).sum())
                want = deg if fanout[t] == -1 else (0 if deg == 0 else fanout[t]) if replace else min(fanout[t], deg)
                assert got == want, (v, t, replace)
    # prob per type, indexed from the type's offset: weight-0 edges are never drawn
    p = [B.from_numpy((np.arange(offset[t + 1] - offset[t]) % 2).astype(np.float32)) for t in range(3)]
    f = nw.sampling.sample_etype_neighbors(g, seeds, offset, [5, 5, 5], prob=p, random_seed=2)
    eid = np_of(f.edata[nw.EID])
    assert ((eid - np.array(offset)[etype[eid]]) % 2 == 1).all()
    with pytest.raises(ValueError, match="one count per edge type"):
        nw.sampling.sample_etype_neighbors(g, seeds, offset, [1, 1])
    with pytest.raises(KeyError, match="ETYPE"):
        nw.sampling.sample_etype_neighbors(nw.graph(([0], [1])), [1], [0, 1], [1])


def test_select_topk_matches_a_sort(backend_name, rng):
    n, m = 15, 120
    g = nw.heterograph({("a", "r", "b"): (rng.integers(0, n, m), rng.integers(0, n, m)),
                        ("b", "s", "a"): (rng.integers(0, n, m), rng.integers(0, n, m))},
                       num_nodes_dict={"a": n, "b": n})
    B = nw.backend.current()
    for ct in g.canonical_etypes:
        g.edges[ct].data["w"] = B.from_numpy(rng.integers(0, 5, m).astype(np.float32))  # ties on purpose
    for edge_dir, ascending in (("in", False), ("out", True)):
        f = nw.sampling.select_topk(g, {"r": 3, "s": -1}, "w", {"a": [0, 1, 2], "b": [4, 5]}, edge_dir=edge_dir,
                                    ascending=ascending)
        for ct, k in ((("a", "r", "b"), 3), (("b", "s", "a"), -1)):
            src, dst = (np_of(t) for t in g.edges(etype=ct))
            w = np_of(g.edges[ct].data["w"])
            key, seeds = (src, {"a": [0, 1, 2], "b": [4, 5]}[ct[0]]) if edge_dir == "out" else \
                (dst, {"a": [0, 1, 2], "b": [4, 5]}[ct[2]])
            want = []
            for v in seeds:
                e = np.flatnonzero(key == v)
                e = e[np.lexsort((e, w[e] if ascending else -w[e]))]
                want += (e if k == -1 else e[:k]).tolist()
            assert sorted(np_of(f.edges[ct].data[nw.EID]).tolist()) == sorted(want)


def test_pack_traces(backend_name):
    B = nw.backend.current()
    traces = B.from_numpy(np.array([[0, 1, -1, -1], [2, 3, 4, 5], [-1, -1, -1, -1]]))
    types = B.from_numpy(np.array([0, 1, 0, 1]))
    vids, vtypes, lengths, offsets = (np_of(t).tolist() for t in nw.sampling.pack_traces(traces, types))
    assert vids == [0, 1, 2, 3, 4, 5] and vtypes == [0, 1, 0, 1, 0, 1]
    assert lengths == [2, 4, 0] and offsets == [0, 2, 6]
    with pytest.raises(ValueError, match="one type per step"):
        nw.sampling.pack_traces(traces, B.from_numpy(np.array([0, 1])))


def test_graphs_are_never_pinned():
    g = nw.graph(([0], [1]))
    assert g.is_pinned() is False and g.unpin_memory_() is g
