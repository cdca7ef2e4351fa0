"""DataLoader's use_ddp split of the seeds (DGL's rule, per rank), edge exclusion ignoring ids with
no edge behind them, ShaDow-KHop subgraphs of heterographs, and nodeweave.utils (dgl.utils)."""

import numpy as np
import pytest

import nodeweave as nw
from conftest import np_of


class _FakeDist:
    """torch.distributed as a rank of a `world`-process job sees it."""

    def __init__(self, rank, world):
        self.rank, self.world = rank, world

    def patch(self, monkeypatch):
        import torch.distributed as dist

        monkeypatch.setattr(dist, "is_available", lambda: True)
        monkeypatch.setattr(dist, "is_initialized", lambda: True)
        monkeypatch.setattr(dist, "get_rank", lambda: self.rank)
        monkeypatch.setattr(dist, "get_world_size", lambda: self.world)


def _seeds_seen(loader):
    out = []
    for _, output_nodes, _ in loader:
        out += np_of(output_nodes).tolist()
    return out


@pytest.mark.parametrize("drop_last", [False, True])
def test_ddp_ranks_take_contiguous_shares(monkeypatch, drop_last):
    pytest.importorskip("torch")
    g = nw.graph((np.arange(9), (np.arange(9) + 1) % 10), num_nodes=10)
    sampler = nw.dataloading.MultiLayerFullNeighborSampler(1)
    world, n = 4, 10
    shares = []
    for rank in range(world):
        _FakeDist(rank, world).patch(monkeypatch)
        loader = nw.dataloading.DataLoader(g, np.arange(n), sampler, batch_size=2, use_ddp=True, drop_last=drop_last,
                                           num_workers=0)
        shares.append(_seeds_seen(loader))
    if drop_last:   # n // world = 2 each, the last n % world seeds to nobody
        assert shares == [[0, 1], [2, 3], [4, 5], [6, 7]]
    else:           # ceil(n / world) = 3 each; the last rank tops up from the start of the list
        assert shares == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 0, 1]]
    assert len({len(s) for s in shares}) == 1


def test_ddp_needs_an_initialized_process_group(monkeypatch):
    pytest.importorskip("torch")
    import torch.distributed as dist

    monkeypatch.setattr(dist, "is_initialized", lambda: False)
    g = nw.graph(([0], [1]))
    with pytest.raises(ValueError, match="init_process_group"):
        nw.dataloading.DataLoader(g, [0, 1], nw.dataloading.NeighborSampler([1]), use_ddp=True)


def test_ddp_with_a_real_gloo_group_of_one():
    torch = pytest.importorskip("torch")
    import torch.distributed as dist

    dist.init_process_group("gloo", "tcp://127.0.0.1:29517", world_size=1, rank=0)
    try:
        g = nw.graph(([1, 2, 3], [0, 0, 1]))
        loader = nw.dataloading.DataLoader(g, torch.arange(4), nw.dataloading.NeighborSampler([2]),
                                           batch_size=4, use_ddp=True, num_workers=0)
        assert sorted(_seeds_seen(loader)) == [0, 1, 2, 3]
    finally:
        dist.destroy_process_group()


def test_exclusion_ignores_ids_without_an_edge():
    g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
    reverse = np.array([4, 5, 6, 7])          # the reverse edges are not in this graph
    sampler = nw.dataloading.as_edge_prediction_sampler(nw.dataloading.NeighborSampler([-1]),
                                                        exclude="reverse_id", reverse_eids=reverse)
    _, pair, blocks = sampler.sample(g, [0, 1], random_seed=0)
    assert not np.isin([0, 1], np_of(blocks[0].edata[nw.EID])).any()     # the batch's own edges still go
    callable_excl = nw.dataloading.as_edge_prediction_sampler(
        nw.dataloading.NeighborSampler([-1]), exclude=lambda eids: np.r_[np_of(eids), 100])
    _, _, blocks = callable_excl.sample(g, [2], random_seed=0)
    assert 2 not in np_of(blocks[0].edata[nw.EID]).tolist()


def test_shadow_on_a_heterograph(backend_name):
    g = nw.heterograph({("A", "AA", "A"): ([0, 1, 2], [1, 2, 0]), ("A", "AB", "B"): ([0, 1, 2], [0, 0, 1]),
                        ("B", "BA", "A"): ([0, 1], [2, 1])})
    g.nodes["A"].data["x"] = nw.backend.current().from_numpy(np.arange(3, dtype=np.float32))
    sampler = nw.dataloading.ShaDowKHopSampler([-1, -1])
    input_nodes, output_nodes, sg = sampler.sample(g, {"B": [0]}, {"BA": [0]}, random_seed=0)
    assert np_of(output_nodes["B"]).tolist() == [0]
    for nt in sg.ntypes:
        np.testing.assert_array_equal(np_of(sg.nodes[nt].data[nw.NID]), np_of(input_nodes[nt]))
    np.testing.assert_array_equal(np_of(sg.nodes["A"].data["x"]), np_of(input_nodes["A"]).astype(np.float32))
    assert 0 not in np_of(sg.edges["BA"].data[nw.EID]).tolist()           # the excluded edge
    for ct in sg.canonical_etypes:                                          # induced: every edge among them
        src, dst = (np_of(t) for t in g.edges(etype=ct))
        keep = np.isin(src, np_of(input_nodes[ct[0]])) & np.isin(dst, np_of(input_nodes[ct[2]]))
        want = set(np.flatnonzero(keep).tolist()) - ({0} if ct[1] == "BA" else set())
        assert set(np_of(sg.edges[ct].data[nw.EID]).tolist()) == want


def test_utils(backend_name):
    B = nw.backend.current()
    nested = {"a": [B.from_numpy(np.array([1, 2])), (B.from_numpy(np.array([3])),)], "b": "keep"}
    out = nw.utils.recursive_apply(nested, lambda x, k: x * k if not isinstance(x, str) else x, 3)
    assert np_of(out["a"][0]).tolist() == [3, 6] and np_of(out["a"][1][0]).tolist() == [9]
    assert isinstance(out["a"][1], tuple) and out["b"] == "keep"
    assert nw.utils.is_sorted_srcdst([0, 0, 1, 2], [1, 3, 0, 0]) == (True, True)
    assert nw.utils.is_sorted_srcdst([0, 0, 1], [3, 1, 0]) == (True, False)
    assert nw.utils.is_sorted_srcdst([1, 0], [0, 1]) == (False, False)
    with pytest.raises(ValueError, match="same length"):
        nw.utils.is_sorted_srcdst([0], [1, 2])
    f = nw.utils.Filter(B.from_numpy(np.array([0, 1, 9, 4, 6, 5, 7], np.int32)))
    q = B.from_numpy(np.array([0, 19, 0, 28, 3, 9, 11, 4, 5], np.int32))
    inc, exc = f.find_included_indices(q), f.find_excluded_indices(q)
    assert np_of(inc).tolist() == [0, 2, 5, 7, 8] and np_of(exc).tolist() == [1, 3, 4, 6]
    assert B.dtype_name(inc) == "int32"
