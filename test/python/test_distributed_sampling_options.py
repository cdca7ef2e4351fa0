"""DistNeighborSampler's options under mpirun: ``prob`` and ``mask`` weights, ``edge_dir='out'``,
``replace`` and ``exclude_eids`` (each rank excluding edges of its own). Every rank's blocks must be
exactly the single-process NeighborSampler's on the whole graph in the partitioned numbering, for
the same seeds, options and seed; the test also checks directly that no weight-0, masked-out or
excluded edge was drawn."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import nodeweave as nw
from nodeweave import errors as nwerr
from nodeweave.distributed import DistGraph, DistNeighborSampler, partition_graph
from conftest import np_of
from test_distributed_mpi import MPIRUN, mpirun
from test_distributed_partition import hetero, homogeneous
from test_distributed_sampling import HELPERS, whole_graph_renumbered

SEED = 99
CONFIGS = {
    "homo": [dict(fanouts=[3, 2], prob="p"), dict(fanouts=[2, 2], mask="m"), dict(fanouts=[2, 3], edge_dir="out"),
             dict(fanouts=[3, -1], edge_dir="out", prob="p"), dict(fanouts=[4, 2], prob="p", replace=True),
             dict(fanouts=[-1, 3], exclude=True), dict(fanouts=[2, 2], edge_dir="out", mask="m", exclude=True)],
    "hetero": [dict(fanouts=[2, {"follows": 3, "buys": -1, "tagged": 1, "about": 2}], prob="p", exclude=True),
               dict(fanouts=[3, 2], mask="m")],
}

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from nodeweave.distributed import DistGraph, DistNeighborSampler
    manifest, kind, out = sys.argv[1], sys.argv[2], sys.argv[3]
    g = DistGraph(manifest)
    rank, size = g.rank(), g.get_partition_book().num_partitions()
    rec = {{}}
    for f, cfg in enumerate({configs!r}[kind]):
        cfg = dict(cfg)
        excl = exclusions(g, rank) if cfg.pop("exclude", False) else None
        fanouts = cfg.pop("fanouts")
        _, _, blocks = DistNeighborSampler(fanouts, **cfg).sample_blocks(g, seeds_of(g, rank, size, f), excl,
                                                                        random_seed={seed} + f)
        rec.update(flatten(blocks, f"f{{f}}"))
    np.savez(f"{{out}}.{{rank}}.npz", **rec)
""")

EXCLUSIONS = textwrap.dedent('''
    def exclusions(g, rank):
        """Rank r excludes its own third of the edges (of 'follows' on the heterograph)."""
        if len(g.canonical_etypes) == 1:
            return np.arange(rank % 3, g.num_edges(), 3)
        return {"follows": np.arange(rank % 3, g.num_edges("follows"), 3)}
''')


def build(kind, out, k, method):
    rng = np.random.default_rng(11)
    B = nw.backend.current()
    if kind == "homo":
        g = homogeneous(rng, n=400, m=2400)
        m = g.num_edges()
        g.edata["p"] = B.from_numpy(np.where(rng.random(m) < 0.3, 0.0, rng.random(m) * 2))
        g.edata["m"] = B.from_numpy(rng.random(m) < 0.6)
    else:
        g = hetero(rng)
        g.edges["buys"].data["p"] = B.from_numpy(np.where(rng.random(250) < 0.4, 0.0, rng.random(250)))
        for ct in g.canonical_etypes:
            g.edges[ct].data["m"] = B.from_numpy(rng.random(g.num_edges(ct)) < 0.5)
    nid_map, eid_map = partition_graph(g, k, str(out), graph_name=kind, part_method=method, return_mapping=True)
    whole, _ = whole_graph_renumbered(g, nid_map, eid_map)
    emap = {g.canonical_etypes[0]: np_of(eid_map)} if len(g.canonical_etypes) == 1 else \
        {ct: np_of(eid_map[ct]) for ct in g.canonical_etypes}
    for ct in g.canonical_etypes:
        for name, t in g.edges[ct].data.items():
            if name in ("p", "m"):
                whole.edges[ct].data[name] = B.from_numpy(np_of(t)[emap[ct]])
    return whole


def namespace():
    ns = {}
    exec(HELPERS + EXCLUSIONS, ns)
    return ns


def check_rank(rec, whole, kind, rank, size):
    ns = namespace()
    for f, cfg in enumerate(CONFIGS[kind]):
        cfg = dict(cfg)
        excl = ns["exclusions"](whole, rank) if cfg.pop("exclude", False) else None
        sampler = nw.dataloading.NeighborSampler(cfg.pop("fanouts"), **cfg)
        _, _, blocks = sampler.sample_blocks(whole, ns["seeds_of"](whole, rank, size, f), excl, random_seed=SEED + f)
        want = ns["flatten"](blocks, f"f{f}")
        assert sum(len(v) for k, v in want.items() if k.endswith("/eid")) > 0
        for key, arr in want.items():
            assert key in rec, key
            np.testing.assert_array_equal(rec[key], arr, err_msg=f"rank {rank}, config {f}: {key}")
        # What was drawn obeys the option, independently of the reference sampler.
        for key, eid in ((k, v) for k, v in rec.items() if k.startswith(f"f{f}/") and k.endswith("/eid")):
            ct = tuple(key.split("/")[2].split(":"))
            data = whole.edges[ct].data
            if cfg.get("prob") in data:
                assert (np_of(data["p"])[eid] > 0).all(), key
            if cfg.get("mask"):
                assert np_of(data["m"])[eid].all(), key
            if excl is not None and (len(whole.canonical_etypes) == 1 or ct[1] == "follows"):
                banned = excl if len(whole.canonical_etypes) == 1 else excl["follows"]
                assert not np.isin(eid, banned).any(), key


@pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed (scripts/setup.sh installs Open MPI)")
@pytest.mark.parametrize("kind,n,method", [("homo", 2, "metis"), ("homo", 3, "random"), ("hetero", 2, "metis")])
def test_options_give_the_single_process_blocks(tmp_path, kind, n, method):
    whole = build(kind, tmp_path / "parts", n, method)
    script = tmp_path / "worker.py"
    script.write_text(HELPERS + EXCLUSIONS + SCRIPT.format(configs=CONFIGS, seed=SEED))
    out = mpirun(n, script, str(tmp_path / "parts" / f"{kind}.json"), kind, str(tmp_path / "rec"), timeout=300)
    assert out.returncode == 0, out.stderr[-4000:]
    for r in range(n):
        check_rank(dict(np.load(tmp_path / f"rec.{r}.npz")), whole, kind, r, n)


def test_one_rank_job_with_options(tmp_path):
    """In process (a job of one): the same comparison, so a failure shows without mpirun."""
    whole = build("homo", tmp_path, 1, "metis")
    g = DistGraph(tmp_path / "homo.json")
    ns = namespace()
    rec = {}
    for f, cfg in enumerate(CONFIGS["homo"]):
        cfg = dict(cfg)
        excl = ns["exclusions"](g, 0) if cfg.pop("exclude", False) else None
        _, _, blocks = DistNeighborSampler(cfg.pop("fanouts"), **cfg).sample_blocks(
            g, ns["seeds_of"](g, 0, 1, f), excl, random_seed=SEED + f)
        rec.update(ns["flatten"](blocks, f"f{f}"))
    check_rank(rec, whole, "homo", 0, 1)


def test_bad_options_name_the_problem(tmp_path):
    build("homo", tmp_path / "h", 1, "random")
    build("hetero", tmp_path / "t", 1, "random")
    g = DistGraph(tmp_path / "h" / "homo.json")
    t = DistGraph(tmp_path / "t" / "hetero.json")
    with pytest.raises(nwerr.ValueError, match="edge_dir must be 'in' or 'out'"):
        DistNeighborSampler([2], edge_dir="both")
    with pytest.raises(nwerr.ValueError, match="either prob or mask"):
        DistNeighborSampler([2], prob="p", mask="m")
    with pytest.raises(nwerr.KeyError, match="prob: the graph has no edge feature 'q'"):
        DistNeighborSampler([2], prob="q").sample_blocks(g, [0])
    with pytest.raises(nwerr.TypeError, match="mask: edge feature 'p' must be bool"):
        DistNeighborSampler([2], mask="p").sample_blocks(g, [0])
    with pytest.raises(nwerr.ValueError, match="prob must be finite and non-negative"):
        DistNeighborSampler([2], prob="w").sample_blocks(g, np.arange(50))   # 'w' is standard normal
    with pytest.raises(nwerr.IndexError, match="exclude_eids.*out of range"):
        DistNeighborSampler([2]).sample_blocks(g, [0], [g.num_edges()])
    with pytest.raises(nwerr.ValueError, match="edge_dir='out' blocks are built on graphs with one edge type"):
        DistNeighborSampler([2], edge_dir="out").sample_blocks(t, {"user": [0]})
    with pytest.raises(nwerr.ValueError, match="exclude_eids must be a dict"):
        DistNeighborSampler([2]).sample_blocks(t, {"user": [0]}, [0])
