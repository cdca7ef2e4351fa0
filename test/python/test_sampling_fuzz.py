"""Fuzzing the sampler entry points (scripts/test.sh also runs this file against the AddressSanitizer
+ UBSan build of ``_C``): random graphs, random and malformed arguments. Every call either returns
well-formed output or raises TypeError / ValueError / IndexError / KeyError / NotImplementedError,
never crashes, hangs or reads out of bounds. No torch here: the sanitizer run loads only NumPy."""

import numpy as np
import pytest

import nodeweave as nw
from nodeweave import _C

EXPECTED = (TypeError, ValueError, IndexError, KeyError, NotImplementedError, OverflowError)


def random_graph(rng, idtype):
    n = int(rng.integers(1, 40))
    e = int(rng.integers(0, 200))
    return nw.graph((rng.integers(0, n, e), rng.integers(0, n, e)), num_nodes=n, idtype=idtype)


def junk(rng, n):
    """An argument that may be fine or broken in many ways."""
    choice = int(rng.integers(0, 12))
    return [
        lambda: rng.integers(0, max(n, 1), int(rng.integers(0, 8))),
        lambda: rng.integers(-5, n + 5, int(rng.integers(0, 8))),
        lambda: rng.random(3),
        lambda: np.array([], dtype=np.int64),
        lambda: np.array([[0, 1]]),
        lambda: np.array([2**62, -2**62]),
        lambda: "nodes",
        lambda: None,
        lambda: [0, 0, 0],
        lambda: np.array([True, False]),
        lambda: np.arange(n, dtype=np.uint64),
        lambda: np.array([0], dtype=np.int32),
    ][choice]()


def weights(rng, e):
    choice = int(rng.integers(0, 7))
    return [
        lambda: None,
        lambda: rng.random(e),
        lambda: rng.random(e).astype(np.float32),
        lambda: rng.random(e) < 0.5,
        lambda: np.where(rng.random(e) < 0.3, -1.0, 1.0),
        lambda: np.full(e, np.nan),
        lambda: rng.random(e + 1),
    ][choice]()


@pytest.mark.parametrize("idtype", ["int32", "int64"])
def test_fuzz_single_relation_samplers(idtype):
    rng = np.random.default_rng(0 if idtype == "int32" else 1)
    for _ in range(300):
        g = random_graph(rng, idtype)
        rel = g._rels[g.canonical_etypes[0]]
        n, e = g.num_nodes(), g.num_edges()
        nodes = junk(rng, n)
        fanout = int(rng.integers(-3, 6))
        w = weights(rng, e)
        try:
            pos, nbr, eid = _C.sampling.sample_neighbors(rel, nodes, fanout, bool(rng.integers(2)),
                                                         bool(rng.integers(2)), w, junk(rng, e) if rng.random() < 0.3 else None,
                                                         int(rng.integers(0, 2**63)))
            assert len(pos) == len(nbr) == len(eid)
            assert ((eid >= 0) & (eid < e)).all()
        except EXPECTED:
            pass
        try:
            out = _C.sampling.sample_labors(rel, nodes, fanout, bool(rng.integers(2)), w,
                                            int(rng.integers(-2, 3)), int(rng.integers(0, 2**63)))
            assert ((out[2] >= 0) & (out[2] < e)).all() and (out[3] >= 1).all()
        except EXPECTED:
            pass


def test_fuzz_block_sampler_loader_and_to_block():
    rng = np.random.default_rng(2)
    for _ in range(200):
        g = random_graph(rng, "int64")
        rel = g._rels[g.canonical_etypes[0]]
        n, e = g.num_nodes(), g.num_edges()
        fanouts = [[int(rng.integers(-2, 4))] for _ in range(int(rng.integers(0, 3)))]
        kind = ["neighbor", "labor", "bogus"][int(rng.integers(3))]
        try:
            bs = _C.sampling.BlockSampler([n], [(0, 0, rel, weights(rng, e))], fanouts, bool(rng.integers(2)),
                                          bool(rng.integers(2)), kind, int(rng.integers(-2, 2)), bool(rng.integers(2)))
        except EXPECTED:
            continue
        try:
            blocks = bs.sample([junk(rng, n)], int(rng.integers(0, 2**63)), [junk(rng, e)], "int64")
            for src_nodes, dst_nodes, graphs, eids, _ in blocks:
                assert src_nodes[0][:len(dst_nodes[0])].tolist() == dst_nodes[0].tolist()
                assert graphs[0].num_src == len(src_nodes[0]) and graphs[0].num_edges == len(eids[0])
        except EXPECTED:
            pass
        try:
            ids = junk(rng, n)
            loader = _C.sampling.Loader(bs, np.zeros(len(ids) if hasattr(ids, "__len__") else 1, np.int64), ids,
                                        int(rng.integers(-1, 4)), bool(rng.integers(2)), 7,
                                        [(0, False, rng.random((n, 2)))], int(rng.integers(0, 3)),
                                        int(rng.integers(0, 3)), 1, "int64", int(rng.integers(0, 3)))
            while loader.next() is not None:
                pass
            loader.close()
        except EXPECTED:
            pass
        try:
            src_nodes, src_local, dst_local = _C.sampling.to_block(
                [junk(rng, n)], [(int(rng.integers(-1, 2)), 0, junk(rng, n), junk(rng, n))], bool(rng.integers(2)))
        except EXPECTED:
            pass


def test_fuzz_walks_and_negatives():
    rng = np.random.default_rng(3)
    for _ in range(200):
        g = random_graph(rng, "int64")
        n, e = g.num_nodes(), g.num_edges()
        if rng.random() < 0.5:
            g.edata["w"] = nw.core.tensor(np.abs(rng.standard_normal(e)))
        try:
            traces, _ = nw.sampling.random_walk(g, junk(rng, n), length=int(rng.integers(-1, 5)),
                                                prob="w" if "w" in g.edata else None,
                                                restart_prob=float(rng.random() * 1.5), random_seed=1)
            t = traces.numpy()
            assert ((t >= -1) & (t < n)).all()
        except EXPECTED:
            pass
        try:
            nw.sampling.node2vec_random_walk(g, junk(rng, n), float(rng.random() * 2 - 0.2),
                                             float(rng.random() * 2), int(rng.integers(-1, 5)), random_seed=2)
        except EXPECTED:
            pass
        try:
            s, d = nw.sampling.global_uniform_negative_sampling(g, int(rng.integers(-2, 50)), random_seed=3)
            assert len(s) == len(d)
        except EXPECTED:
            pass
        try:
            nw.dataloading.negative_sampler.Uniform(int(rng.integers(-1, 3)))(g, junk(rng, e), random_seed=4)
        except EXPECTED:
            pass
