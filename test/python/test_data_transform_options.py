"""The options every dataset takes: ``transform=`` (applied to the graph on every access, the stored
graph left as it was) and ``reverse_edge=`` (both directions of undirected edges, or each once; for
directed sets, the same switch as their ``reverse`` / ``insert_reverse``)."""

from __future__ import annotations

import numpy as np
import pytest

import nodeweave as nw
from nodeweave.data import (AIFBDataset, CiteseerGraphDataset, CoraGraphDataset, GINDataset, KinshipDataset,
                            NationsDataset, PPINode2VecDataset, Subset, TUDataset)
from nodeweave.transforms import AddSelfLoop, Compose, RemoveSelfLoop

from test_data_support import shared  # noqa: F401

# name -> (constructor, how to get the graph out of ds[0])
DATASETS = {
    "Cora": (lambda **kw: CoraGraphDataset(**kw), lambda item: item),
    "Citeseer": (lambda **kw: CiteseerGraphDataset(**kw), lambda item: item),
    "Kinship": (lambda **kw: KinshipDataset(**kw), lambda item: item),
    "AIFB": (lambda **kw: AIFBDataset(**kw), lambda item: item),
    "MUTAG": (lambda **kw: TUDataset("MUTAG", **kw), lambda item: item[0]),
    "GIN-PTC": (lambda **kw: GINDataset("PTC", self_loop=False, **kw), lambda item: item[0]),
    "PPI": (lambda **kw: PPINode2VecDataset(**kw), lambda item: item),
}


class Counting:
    """A transform that counts its calls and adds a node feature, leaving its input unchanged."""

    def __init__(self):
        self.calls = 0

    def __call__(self, g):
        self.calls += 1
        out = AddSelfLoop()(g) if len(g.canonical_etypes) == 1 else g.clone()
        for nt in out.ntypes:
            out.nodes[nt].data["seen"] = nw.backend.current().from_numpy(np.full(out.num_nodes(nt), self.calls))
        return out


@pytest.mark.parametrize("name", list(DATASETS))
def test_transform_applies_on_every_access(shared, name):
    make, graph_of = DATASETS[name]
    t = Counting()
    ds = make(raw_dir=shared, transform=t)
    plain = graph_of(make(raw_dir=shared)[0])
    first, second = graph_of(ds[0]), graph_of(ds[0])
    assert t.calls == 2 and ds.transform is t
    nt = first.ntypes[0]
    assert first.nodes[nt].data["seen"].tolist()[:1] == [1] and second.nodes[nt].data["seen"].tolist()[:1] == [2]
    if len(plain.canonical_etypes) == 1:
        assert first.num_edges() == RemoveSelfLoop()(plain).num_edges() + plain.num_nodes()
    ds.transform = None  # what is stored: the transform changed none of it
    stored = graph_of(ds[0])
    assert "seen" not in stored.nodes[nt].data and stored.num_edges() == plain.num_edges()
    with pytest.raises(TypeError, match="transform must be a callable"):
        make(raw_dir=shared, transform="AddSelfLoop")


def test_transform_reaches_subsets_and_loaders(shared):
    ds = TUDataset("MUTAG", raw_dir=shared, transform=Compose([RemoveSelfLoop(), AddSelfLoop()]))
    sub = Subset(ds, [4, 2])
    g, _ = sub[0]
    assert g.num_edges() == int(ds.num_edges_per_graph[4]) + int(ds.num_nodes_per_graph[4])
    bg, _ = next(iter(nw.data.GraphDataLoader(sub, batch_size=2)))
    assert bg.num_edges() == int(ds.num_edges_per_graph[[4, 2]].sum() + ds.num_nodes_per_graph[[4, 2]].sum())


def pairs(g, etype=None):
    s, d = g.edges(etype=etype)
    return list(zip(s.numpy().tolist(), d.numpy().tolist()))


@pytest.mark.parametrize("name", ["Cora", "Citeseer", "MUTAG", "GIN-PTC", "PPI"])
def test_reverse_edge_false_keeps_each_undirected_edge_once(shared, name):
    make, graph_of = DATASETS[name]
    both = make(raw_dir=shared)
    once = make(raw_dir=shared, reverse_edge=False)
    assert both.reverse_edge is True and once.reverse_edge is False
    indices = [0] if name in ("Cora", "Citeseer", "PPI") else [0, 7, len(both) - 1]
    for i in indices:
        gb, go = graph_of(both[i]), graph_of(once[i])
        pb, po = pairs(gb), pairs(go)
        assert all(u <= v for u, v in po) and len(set(po)) == len(po)
        assert sorted(po) == sorted({(min(u, v), max(u, v)) for u, v in pb})
        for nt in gb.ntypes:  # node features unchanged
            for k in gb.nodes[nt].data:
                np.testing.assert_array_equal(gb.nodes[nt].data[k].numpy(), go.nodes[nt].data[k].numpy())
    with pytest.raises(TypeError, match="reverse_edge must be True or False"):
        make(raw_dir=shared, reverse_edge="no")


def test_reverse_edge_keeps_edge_labels_aligned(shared):
    both = TUDataset("MUTAG", raw_dir=shared)
    once = TUDataset("MUTAG", raw_dir=shared, reverse_edge=False)
    assert int(once.num_edges_per_graph.sum()) == 3721
    gb, go = both[11][0], once[11][0]
    label_of = dict(zip(pairs(gb), gb.edata["edge_label"].numpy().tolist()))
    assert [label_of[p] for p in pairs(go)] == go.edata["edge_label"].numpy().tolist()
    assert go.edata["feat"].shape[1] == gb.edata["feat"].shape[1]


def test_directed_sets_take_reverse_edge_as_their_reverse_option(shared):
    fwd = NationsDataset(raw_dir=shared, reverse_edge=False)
    assert fwd.reverse is False and fwd[0].num_edges() == len(fwd.train) + len(fwd.valid) + len(fwd.test)
    assert NationsDataset(raw_dir=shared, reverse=False)[0].num_edges() == fwd[0].num_edges()
    assert NationsDataset(raw_dir=shared)[0].num_edges() == 2 * fwd[0].num_edges()
    assert NationsDataset(raw_dir=shared, reverse=True, reverse_edge=True).reverse is True
    with pytest.raises(ValueError, match="contradict"):
        NationsDataset(raw_dir=shared, reverse=True, reverse_edge=False)
    aifb = AIFBDataset(raw_dir=shared, reverse_edge=False)
    assert aifb.insert_reverse is False and not any(et.startswith("rev-") for et in aifb[0].etypes)
    assert any(et.startswith("rev-") for et in AIFBDataset(raw_dir=shared)[0].etypes)
    with pytest.raises(ValueError, match="insert_reverse=False and reverse_edge=True contradict"):
        AIFBDataset(raw_dir=shared, insert_reverse=False, reverse_edge=True)
    with pytest.raises(TypeError, match="reverse_edge must be True or False"):
        AIFBDataset(raw_dir=shared, reverse_edge=1)
