"""DistGraph and DistNeighborSampler under mpirun (2 and 4 ranks, oversubscribed): every rank
samples its own seeds over the parts and fetches feature rows from their owners; the test checks
each rank's blocks against the single-process NeighborSampler on the whole graph in the partitioned
numbering (the same seed must give exactly the same blocks: nodes, edges, edge ids, edge order),
and the fetched rows against the features themselves. A homogeneous graph and a heterograph with
four relations; METIS and random partitions."""

from __future__ import annotations

import os
import textwrap

import numpy as np
import pytest

import nodeweave as nw
from nodeweave import errors as nwerr
from nodeweave.distributed import DistGraph, DistNeighborSampler, partition_graph
from conftest import np_of
from test_distributed_mpi import MPIRUN, mpirun
from test_distributed_partition import hetero, homogeneous

FANOUTS = {"homo": [[3, 5], [-1, 2], [1, 1, 4]], "hetero": [[2, 3], [{"follows": 2, "buys": -1, "tagged": 0, "about": 3}, -1]]}
SEED = 1234

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import nodeweave as nw
    from nodeweave.distributed import DistGraph, DistNeighborSampler, comm_stats
    manifest, kind, out = sys.argv[1], sys.argv[2], sys.argv[3]
    FANOUTS = {fanouts!r}
    g = DistGraph(manifest)
    rank, size = g.rank(), g.get_partition_book().num_partitions()
    rec = {{}}
    for f, fanouts in enumerate(FANOUTS[kind]):
        seeds = seeds_of(g, rank, size, f)
        _, _, blocks = DistNeighborSampler(fanouts).sample_blocks(g, seeds, random_seed={seed} + f)
        rec.update(flatten(blocks, f"f{{f}}"))
    # Feature rows: every rank asks for a different mix of ids, repeats included.
    for nt in g.ntypes:
        for name in g.nodes[nt].data:
            n = g.num_nodes(nt)
            ids = (np.arange(0, 3 * n, 7 + rank) * (rank + 1)) % n
            rec[f"feat/{{nt}}/{{name}}"] = nw.backend.current().to_numpy(g.nodes[nt].data[name][ids])
            rec[f"ids/{{nt}}/{{name}}"] = ids
    rec["bytes"] = np.array([comm_stats()["all_to_all_bytes"]])
    np.savez(f"{{out}}.{{rank}}.npz", **rec)
""")

HELPERS = textwrap.dedent('''
    import numpy as np
    import nodeweave as nw

    def seeds_of(g, rank, size, f):
        """Rank r's seeds: a spread of ids over the whole graph (most owned by other ranks)."""
        out = {}
        for i, nt in enumerate(g.ntypes):
            n = g.num_nodes(nt)
            out[nt] = np.arange(rank + f + i, n, 3 * size + f)[::-1].copy()   # descending: order matters
        return out if len(g.ntypes) > 1 else out[g.ntypes[0]]

    def flatten(blocks, prefix):
        rec = {}
        for l, b in enumerate(blocks):
            for nt in b.srctypes:
                rec[f"{prefix}/{l}/src/{nt}"] = nw.backend.current().to_numpy(b.srcnodes[nt].data[nw.NID])
                rec[f"{prefix}/{l}/dst/{nt}"] = nw.backend.current().to_numpy(b.dstnodes[nt].data[nw.NID])
            for ct in b.canonical_etypes:
                u, v = b.edges(etype=ct, order="eid")
                key = f"{prefix}/{l}/{':'.join(ct)}"
                rec[key + "/u"] = nw.backend.current().to_numpy(u).astype(np.int64)
                rec[key + "/v"] = nw.backend.current().to_numpy(v).astype(np.int64)
                rec[key + "/eid"] = nw.backend.current().to_numpy(b.edges[ct].data[nw.EID]).astype(np.int64)
        return rec
''')


def whole_graph_renumbered(g, nid_map, eid_map):
    """``g`` in the partitioned numbering: node ``new`` is ``g``'s ``nid_map[new]``, edge ``new`` is
    ``g``'s ``eid_map[new]``, so the edges are listed in new-id order (per type for heterographs)."""
    single = len(g.ntypes) == 1
    nmap = {g.ntypes[0]: np_of(nid_map)} if single else {k: np_of(v) for k, v in nid_map.items()}
    emap = {g.canonical_etypes[0]: np_of(eid_map)} if single else {k: np_of(v) for k, v in eid_map.items()}
    inv = {}
    for nt, m in nmap.items():
        inv[nt] = np.empty(len(m), np.int64)
        inv[nt][m] = np.arange(len(m))
    data = {}
    for ct in g.canonical_etypes:
        u, v = (np_of(a).astype(np.int64) for a in g.edges(etype=ct))
        e = emap[ct if ct in emap else ct[1]]
        data[ct] = (inv[ct[0]][u[e]], inv[ct[2]][v[e]])
    num = {nt: g.num_nodes(nt) for nt in g.ntypes}
    whole = nw.heterograph(data, num_nodes_dict=num) if not single else \
        nw.graph(data[g.canonical_etypes[0]], num_nodes=num[g.ntypes[0]])
    feats = {}
    for nt in g.ntypes:
        for name, t in g.nodes[nt].data.items():
            feats[(nt, name)] = np_of(t)[nmap[nt]]
    return whole, feats


def build(kind, out, k, method):
    rng = np.random.default_rng(7)
    g = homogeneous(rng, n=400, m=2400) if kind == "homo" else hetero(rng)
    nid_map, eid_map = partition_graph(g, k, str(out), graph_name=kind, part_method=method,
                                       return_mapping=True)
    return whole_graph_renumbered(g, nid_map, eid_map)


def check_rank(rec, whole, feats, kind, rank, size):
    ns = {}
    exec(HELPERS, ns)
    for f, fanouts in enumerate(FANOUTS[kind]):
        seeds = ns["seeds_of"](whole, rank, size, f)
        _, _, blocks = nw.dataloading.NeighborSampler(fanouts).sample(whole, seeds, random_seed=SEED + f)
        want = ns["flatten"](blocks, f"f{f}")
        assert sum(len(v) for k, v in want.items() if k.endswith("/eid")) > 0
        for key, arr in want.items():
            assert key in rec, key
            np.testing.assert_array_equal(rec[key], arr, err_msg=f"rank {rank}: {key}")
    for (nt, name), x in feats.items():
        ids = rec[f"ids/{nt}/{name}"]
        np.testing.assert_array_equal(rec[f"feat/{nt}/{name}"], x[ids], err_msg=f"rank {rank}: {nt}/{name}")


@pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed (scripts/setup.sh installs Open MPI)")
@pytest.mark.parametrize("kind,n,method", [("homo", 2, "metis"), ("homo", 4, "metis"), ("homo", 3, "random"),
                                           ("hetero", 2, "metis"), ("hetero", 4, "random")])
def test_distributed_blocks_equal_single_process(tmp_path, kind, n, method):
    whole, feats = build(kind, tmp_path / "parts", n, method)
    script = tmp_path / "worker.py"
    script.write_text(HELPERS + SCRIPT.format(fanouts=FANOUTS, seed=SEED))
    out = mpirun(n, script, str(tmp_path / "parts" / f"{kind}.json"), kind, str(tmp_path / "rec"), timeout=300)
    assert out.returncode == 0, out.stderr[-4000:]
    total = 0
    for r in range(n):
        rec = dict(np.load(tmp_path / f"rec.{r}.npz"))
        check_rank(rec, whole, feats, kind, r, n)
        total += int(rec["bytes"][0])
    assert total > 0   # the ranks did talk to each other


def test_one_rank_job_in_process(tmp_path):
    """Without a launcher the process is a job of one, and its one part is the whole graph."""
    whole, feats = build("homo", tmp_path, 1, "metis")
    g = DistGraph(tmp_path / "homo.json")
    assert (g.num_nodes(), g.num_edges()) == (whole.num_nodes(), whole.num_edges())
    assert g.ndata["x"].shape == (400, 3) and len(g.ndata["x"]) == 400
    rec = {}
    ns = {}
    exec(HELPERS, ns)
    for f, fanouts in enumerate(FANOUTS["homo"]):
        _, _, blocks = DistNeighborSampler(fanouts).sample_blocks(g, ns["seeds_of"](g, 0, 1, f), random_seed=SEED + f)
        rec.update(ns["flatten"](blocks, f"f{f}"))
    ids = np.array([5, 0, 5, 399])
    rec["feat/_N/x"], rec["ids/_N/x"] = np_of(g.ndata["x"][ids]), ids
    feats = {k: v for k, v in feats.items() if k == ("_N", "x")}
    check_rank(rec, whole, feats, "homo", 0, 1)


def test_bad_input_names_the_problem(tmp_path):
    build("homo", tmp_path, 1, "random")
    g = DistGraph(tmp_path / "homo.json")
    with pytest.raises(nwerr.IndexError, match=r"x\[ids\]: id 400 at position 1 is out of range: there are 400"):
        g.ndata["x"][[0, 400]]
    with pytest.raises(nwerr.KeyError, match="no feature 'y'"):
        g.ndata["y"]
    s = DistNeighborSampler([2])
    with pytest.raises(nwerr.ValueError, match="repeated ids"):
        s.sample_blocks(g, [1, 1])
    with pytest.raises(nwerr.IndexError, match="out of range"):
        s.sample_blocks(g, [-1])
    with pytest.raises(nwerr.TypeError, match="samples a DistGraph"):
        s.sample_blocks(nw.graph(([0], [1])), [0])
    with pytest.raises(nwerr.ValueError, match="fanouts must name at least one layer"):
        DistNeighborSampler([])


def test_part_count_must_match_the_job(tmp_path):
    build("homo", tmp_path, 2, "random")
    with pytest.raises(nwerr.ValueError, match=r"has 2 parts but the job has 1 ranks.*mpirun -np 2"):
        DistGraph(tmp_path / "homo.json")
