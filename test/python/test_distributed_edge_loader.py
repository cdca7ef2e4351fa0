"""DistEdgeDataLoader (link prediction over a partitioned graph) under mpirun and in process: every
rank's batches (pair graph, negative pair graph, blocks, prefetched features and labels) must be
exactly what the single-process edge-prediction sampler returns on the whole graph in the
partitioned numbering for the same edges and key, with the batch's edges and their reverses
excluded. Also DistGraph.find_edges against the graph itself, and bad input."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import nodeweave as nw
from nodeweave import errors as nwerr
from nodeweave.distributed import DistEdgeDataLoader, DistGraph, DistNeighborSampler, DistNodeDataLoader, \
    edge_split, partition_graph
from conftest import np_of
from test_distributed_mpi import MPIRUN, mpirun
from test_distributed_sampling import HELPERS, whole_graph_renumbered

CONFIGS = [dict(fanouts=[3, 2], exclude="reverse_id", k=2, batch=64, shuffle=True),
           dict(fanouts=[-1], exclude="self", k=0, batch=100, shuffle=False),
           dict(fanouts=[2, 2], exclude=None, k=1, batch=37, shuffle=True)]
BATCHES = 2

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import nodeweave as nw
    from nodeweave.distributed import DistEdgeDataLoader, DistGraph, DistNeighborSampler
    manifest, out = sys.argv[1], sys.argv[2]
    g = DistGraph(manifest)
    rev = np.load(manifest + ".rev.npy")
    rank, size = g.rank(), g.get_partition_book().num_partitions()
    rec = {}
    for c, cfg in enumerate(CONFIGS):
        eids = np.array_split(np.arange(g.num_edges()), size)[rank]
        rec.update(run_config(g, DistNeighborSampler(cfg["fanouts"]), cfg, eids, rev, f"c{c}"))
    np.savez(f"{out}.{rank}.npz", **rec)
""")

RUN = textwrap.dedent('''
    from nodeweave.distributed import DistEdgeDataLoader

    def run_config(g, inner, cfg, eids, rev, prefix):
        sampler = nw.dataloading.as_edge_prediction_sampler(
            inner, exclude=cfg["exclude"], reverse_eids=rev, prefetch_labels=["lab"],
            negative_sampler=nw.dataloading.negative_sampler.Uniform(cfg["k"]) if cfg["k"] else None)
        loader = DistEdgeDataLoader(g, eids, sampler, cfg["batch"], shuffle=cfg["shuffle"], seed=17,
                                    prefetch_node_feats=["x"], prefetch_labels=["y"])
        rec = {}
        for i, batch in zip(range(BATCHES), loader):
            rec.update(record(batch, f"{prefix}/b{i}"))
            rec[f"{prefix}/b{i}/key"] = np.array([loader.batch_key(0, i)], np.uint64)
        return rec

    def record(batch, prefix):
        B = nw.backend.current()
        input_nodes, pair, blocks = batch[0], batch[1], batch[-1]
        rec = {f"{prefix}/input": B.to_numpy(input_nodes)}
        for name, gr in [("pair", pair)] + ([("neg", batch[2])] if len(batch) == 4 else []):
            u, v = gr.edges(order="eid")
            rec[f"{prefix}/{name}/u"] = B.to_numpy(u).astype(np.int64)
            rec[f"{prefix}/{name}/v"] = B.to_numpy(v).astype(np.int64)
            rec[f"{prefix}/{name}/nid"] = B.to_numpy(gr.ndata[nw.NID]).astype(np.int64)
        rec[f"{prefix}/pair/eid"] = B.to_numpy(pair.edata[nw.EID]).astype(np.int64)
        rec[f"{prefix}/pair/lab"] = B.to_numpy(pair.edata["lab"])
        rec.update(flatten(blocks, prefix))
        if "x" in blocks[0].srcdata:
            rec[f"{prefix}/x"] = B.to_numpy(blocks[0].srcdata["x"])
            rec[f"{prefix}/y"] = B.to_numpy(blocks[-1].dstdata["y"])
        return rec
''')


def build(out, k, method="metis"):
    """A graph whose every edge has its reverse (edge i and i + m), with node features, node
    labels and an edge label; ``reverse_eids`` in the partitioned numbering next to the manifest."""
    rng = np.random.default_rng(5)
    n, m = 300, 900
    u, v = rng.integers(0, n, m), rng.integers(0, n, m)
    g = nw.graph((np.concatenate([u, v]), np.concatenate([v, u])), num_nodes=n)
    B = nw.backend.current()
    g.ndata["x"] = B.from_numpy(rng.standard_normal((n, 3)).astype(np.float32))
    g.ndata["y"] = B.from_numpy(rng.integers(0, 4, n))
    g.edata["lab"] = B.from_numpy(rng.standard_normal(2 * m))
    g.edata["train"] = B.from_numpy(rng.random(2 * m) < 0.3)
    rev_orig = np.concatenate([np.arange(m, 2 * m), np.arange(m)])
    nid_map, eid_map = partition_graph(g, k, str(out), graph_name="pairs", part_method=method, return_mapping=True)
    emap = np_of(eid_map)
    inv = np.empty_like(emap)
    inv[emap] = np.arange(len(emap))
    rev_new = inv[rev_orig[emap]]
    np.save(str(out / "pairs.json") + ".rev.npy", rev_new)
    whole, feats = whole_graph_renumbered(g, nid_map, eid_map)
    whole.ndata["x"] = B.from_numpy(feats[("_N", "x")])
    whole.ndata["y"] = B.from_numpy(feats[("_N", "y")])
    whole.edata["lab"] = B.from_numpy(np_of(g.edata["lab"])[emap])
    whole.edata["train"] = B.from_numpy(np_of(g.edata["train"])[emap])
    return whole, rev_new


def namespace():
    ns = {"BATCHES": BATCHES}
    exec(HELPERS + RUN, ns)
    return ns


def check(rec, whole, rev, rank):
    ns = namespace()
    B = nw.backend.current()
    for c, cfg in enumerate(CONFIGS):
        for i in range(BATCHES):
            prefix = f"c{c}/b{i}"
            eids = rec[f"{prefix}/pair/eid"]
            key = int(rec[f"{prefix}/key"][0])
            ref = nw.dataloading.as_edge_prediction_sampler(
                nw.dataloading.NeighborSampler(cfg["fanouts"], prefetch_node_feats=["x"], prefetch_labels=["y"]),
                exclude=cfg["exclude"], reverse_eids=rev, prefetch_labels=["lab"],
                negative_sampler=nw.dataloading.negative_sampler.Uniform(cfg["k"]) if cfg["k"] else None)
            want = ns["record"](ref.sample(whole, eids, random_seed=key), prefix)
            assert len(eids) > 0 and want[f"{prefix}/pair/eid"].tolist() == eids.tolist()
            for k, arr in want.items():
                assert k in rec, k
                np.testing.assert_array_equal(rec[k], arr, err_msg=f"rank {rank}: {k}")
            # Independently of the reference: the pair graph holds the batch's edges, and no
            # excluded edge was sampled into any block.
            u, v = (np_of(a).astype(np.int64) for a in whole.edges(order="eid"))
            nid = rec[f"{prefix}/pair/nid"]
            np.testing.assert_array_equal(nid[rec[f"{prefix}/pair/u"]], u[eids])
            np.testing.assert_array_equal(nid[rec[f"{prefix}/pair/v"]], v[eids])
            banned = {"self": eids, "reverse_id": np.concatenate([eids, rev[eids]]), None: np.zeros(0, np.int64)}
            for k in (k for k in rec if k.startswith(prefix + "/") and k.endswith("/eid") and "/pair/" not in k):
                assert not np.isin(rec[k], banned[cfg["exclude"]]).any(), k
            np.testing.assert_array_equal(rec[f"{prefix}/x"], np_of(whole.ndata["x"])[rec[f"{prefix}/input"]])
    del B


@pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed (scripts/setup.sh installs Open MPI)")
@pytest.mark.parametrize("n,method", [(2, "metis"), (3, "random")])
def test_edge_batches_equal_single_process(tmp_path, n, method):
    whole, rev = build(tmp_path, n, method)
    script = tmp_path / "worker.py"
    script.write_text(f"CONFIGS = {CONFIGS!r}\nBATCHES = {BATCHES}\n" + HELPERS + RUN + SCRIPT)
    out = mpirun(n, script, str(tmp_path / "pairs.json"), str(tmp_path / "rec"), timeout=300)
    assert out.returncode == 0, out.stderr[-4000:]
    for r in range(n):
        check(dict(np.load(tmp_path / f"rec.{r}.npz")), whole, rev, r)


def test_one_rank_in_process(tmp_path):
    whole, rev = build(tmp_path, 1)
    g = DistGraph(tmp_path / "pairs.json")
    ns = namespace()
    rec = {}
    for c, cfg in enumerate(CONFIGS):
        rec.update(ns["run_config"](g, DistNeighborSampler(cfg["fanouts"]), cfg, np.arange(g.num_edges()), rev,
                                    f"c{c}"))
    check(rec, whole, rev, 0)


def test_find_edges(tmp_path):
    whole, _ = build(tmp_path, 1)
    g = DistGraph(tmp_path / "pairs.json")
    ids = np.array([7, 0, 1799, 7, 400])
    src, dst = g.find_edges(ids)
    u, v = (np_of(a).astype(np.int64) for a in whole.edges(order="eid"))
    assert src.tolist() == u[ids].tolist() and dst.tolist() == v[ids].tolist()
    with pytest.raises(nwerr.IndexError, match="find_edges: eids: id 1800 at position 0 is out of range"):
        g.find_edges([1800])


def test_bad_input_names_the_problem(tmp_path):
    build(tmp_path, 1)
    g = DistGraph(tmp_path / "pairs.json")
    edge = nw.dataloading.as_edge_prediction_sampler(DistNeighborSampler([2]))
    with pytest.raises(nwerr.TypeError, match="graph_sampler must be as_edge_prediction_sampler"):
        DistEdgeDataLoader(g, [0], DistNeighborSampler([2]), 4)
    with pytest.raises(nwerr.TypeError, match="graph_sampler must be as_edge_prediction_sampler"):
        DistEdgeDataLoader(g, [0], nw.dataloading.as_edge_prediction_sampler(nw.dataloading.NeighborSampler([2])), 4)
    with pytest.raises(nwerr.ValueError, match="negative_sampler must be None or Uniform"):
        DistEdgeDataLoader(g, [0], nw.dataloading.as_edge_prediction_sampler(
            DistNeighborSampler([2]), negative_sampler=nw.dataloading.negative_sampler.GlobalUniform(1)), 4)
    with pytest.raises(nwerr.IndexError, match="DistEdgeDataLoader: edges: id 1800 at position 1 is out of range"):
        DistEdgeDataLoader(g, [0, 1800], edge, 4)
    with pytest.raises(nwerr.ValueError, match="batch_size must be a positive int"):
        DistEdgeDataLoader(g, [0], edge, 0)
    with pytest.raises(nwerr.KeyError, match="no feature 'nope'"):
        DistEdgeDataLoader(g, [0], edge, 4, prefetch_node_feats=["nope"])
    with pytest.raises(nwerr.ValueError, match=r"reverse_eids must hold one id per edge of the graph \(1800\)"):
        bad = nw.dataloading.as_edge_prediction_sampler(DistNeighborSampler([2]), exclude="reverse_id",
                                                        reverse_eids=np.arange(5))
        next(iter(DistEdgeDataLoader(g, [0], bad, 4)))
    with pytest.raises(nwerr.IndexError, match="DistNodeDataLoader: nodes: id 300"):
        DistNodeDataLoader(g, [300], DistNeighborSampler([2]), 4)


def test_drawn_seed_fits_the_exchange(tmp_path):
    """A drawn 64-bit seed uses the top bit half of the time; the loaders agree on it through an
    int64 reduction, so it is cut to 63 bits (it overflowed before)."""
    build(tmp_path, 1)
    g = DistGraph(tmp_path / "pairs.json")
    edge = nw.dataloading.as_edge_prediction_sampler(DistNeighborSampler([2]))
    seeds = [DistEdgeDataLoader(g, [0, 1], edge, 4).seed for _ in range(16)]
    seeds += [DistNodeDataLoader(g, [0, 1], DistNeighborSampler([2]), 4).seed for _ in range(16)]
    assert all(0 <= s < 2**63 for s in seeds) and len(set(seeds)) == 32


def test_edge_split(tmp_path):
    """Every rank's share, for 3 ranks over a 3-part book, partitions the set: even slices, or
    each rank's own edges; a bool DistTensor (a job of one) gives the set itself."""
    whole, _ = build(tmp_path / "three", 3, "random")
    book = nw.distributed.load_partition_book(tmp_path / "three" / "pairs.json", 0)[0]
    mask = np_of(whole.edata["train"])
    want = np.flatnonzero(mask)
    even = [edge_split(mask, book, rank=r) for r in range(3)]
    assert np.concatenate(even).tolist() == want.tolist() and max(map(len, even)) - min(map(len, even)) <= 1
    owned = [edge_split(mask, book, rank=r, force_even=False) for r in range(3)]
    assert np.concatenate(owned).tolist() == want.tolist()
    for r, ids in enumerate(owned):
        lo, hi = book.eid_range(r)
        assert ((ids >= lo) & (ids < hi)).all()
    build(tmp_path / "one", 1)
    g = DistGraph(tmp_path / "one" / "pairs.json")
    assert edge_split(g.edata["train"], graph=g).tolist() == np.flatnonzero(np_of(g.edata["train"].local)).tolist()
    with pytest.raises(nwerr.ValueError, match="edge_split: a mask must have one entry per edge"):
        edge_split(mask[:5], book, rank=0)
    with pytest.raises(nwerr.IndexError, match="edge_split: edge id 1800 is out of range"):
        edge_split([1800], book, rank=0)
    with pytest.raises(nwerr.ValueError, match="edge_split: edges hold repeated ids"):
        edge_split([1, 1], book, rank=0)
    with pytest.raises(nwerr.ValueError, match="edge_split: pass graph"):
        edge_split(g.edata["train"])


def test_node_split(tmp_path):
    """node_split, which edge_split shares its code with: the same partition properties."""
    whole, _ = build(tmp_path, 3, "random")
    book = nw.distributed.load_partition_book(tmp_path / "pairs.json", 0)[0]
    from nodeweave.distributed import node_split

    mask = np.arange(whole.num_nodes()) % 4 == 1
    want = np.flatnonzero(mask)
    even = [node_split(mask, book, rank=r) for r in range(3)]
    owned = [node_split(mask, book, rank=r, force_even=False) for r in range(3)]
    assert np.concatenate(even).tolist() == want.tolist() and max(map(len, even)) - min(map(len, even)) <= 1
    assert np.concatenate(owned).tolist() == want.tolist()
    assert all(((ids >= book.nid_range(r)[0]) & (ids < book.nid_range(r)[1])).all() for r, ids in enumerate(owned))
    with pytest.raises(nwerr.ValueError, match="node_split: rank must be in"):
        node_split(mask, book, rank=3)
