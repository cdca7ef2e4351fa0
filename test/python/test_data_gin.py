"""GINDataset (the TU sets with GIN's preprocessing) against an independent reference: the raw TU
files read with plain Python, GIN's relabelling rules applied with dicts and networkx, as GIN's
util.load_data does; and GraphDataLoader's sampler=, pin_memory= and collate_fn= options."""

from __future__ import annotations

import warnings
from collections import defaultdict

import networkx as nx
import numpy as np
import pytest

import nodeweave as nw
from nodeweave.data import GINDataset, GraphDataLoader, TUDataset, kfold_split
from nodeweave.data import dataloader as loader_module

from test_data_support import shared, shared_data_dir  # noqa: F401

_CACHE: dict = {}


def reference(name: str) -> dict:
    """Per graph: node count, undirected edge set, first-appearance node tags, degrees, label."""
    if name in _CACHE:
        return _CACHE[name]
    root = shared_data_dir() / "tu" / name
    read = lambda kind: (root / f"{name}_{kind}.txt").read_text().split("\n")  # noqa: E731
    indicator = [int(x) for x in read("graph_indicator") if x.strip()]
    glabels = [int(x) for x in read("graph_labels") if x.strip()]
    nlabels = [int(x) for x in read("node_labels") if x.strip()]
    graphs = [nx.Graph() for _ in glabels]
    first = {}
    for v, gi in enumerate(indicator):
        first.setdefault(gi - 1, v)
        graphs[gi - 1].add_node(v - first[gi - 1])
    lists = defaultdict(list)
    for line in read("A"):
        if line.strip():
            u, v = (int(x) - 1 for x in line.split(","))
            gi = indicator[u] - 1
            graphs[gi].add_edge(u - first[gi], v - first[gi])
            lists[gi].append((u - first[gi], v - first[gi]))
    gmap, nmap = {}, {}
    for lab in glabels:
        gmap.setdefault(lab, len(gmap))
    for lab in nlabels:
        nmap.setdefault(lab, len(nmap))
    out = {"glabel": [gmap[x] for x in glabels], "gmap": gmap, "nmap": nmap, "graphs": graphs, "lists": lists,
           "tags": [nmap[x] for x in nlabels], "first": first}
    _CACHE[name] = out
    return out


@pytest.mark.parametrize("name,tu", [("MUTAG", "MUTAG"), ("PTC", "PTC_MR"), ("PROTEINS", "PROTEINS")])
def test_matches_gin_preprocessing(shared, name, tu):
    ref = reference(tu)
    ds = GINDataset(name, self_loop=False, raw_dir=shared, download=False)
    assert len(ds) == len(ref["glabel"]) and ds.num_classes == ds.gclasses == len(ref["gmap"])
    assert ds.glabel_dict == ref["gmap"] and ds.nlabel_dict == ref["nmap"]
    assert ds.nclasses == ds.dim_nfeats == len(ref["nmap"])
    np.testing.assert_array_equal(ds.graph_labels, ref["glabel"])
    for i in list(range(0, len(ds), max(1, len(ds) // 25))) + [len(ds) - 1]:
        g, label = ds[i]
        assert int(label) == ref["glabel"][i] and label.dtype == nw.core.int64
        rg = ref["graphs"][i]
        assert g.num_nodes() == rg.number_of_nodes()
        s, d = (x.numpy().tolist() for x in g.edges())
        # the listed edges, grouped by source node in file order
        listed = sorted(ref["lists"][i], key=lambda e: e[0])
        assert list(zip(s, d)) == listed
        tags = ref["tags"][ref["first"][i]:ref["first"][i] + g.num_nodes()]
        np.testing.assert_array_equal(g.ndata["label"].numpy(), tags)
        want = np.zeros((g.num_nodes(), ds.dim_nfeats), np.float32)
        want[np.arange(g.num_nodes()), tags] = 1
        np.testing.assert_array_equal(g.ndata["attr"].numpy(), want)
        assert g.ndata["attr"].dtype == nw.core.float32 and not g.edata


def test_self_loop_degree_and_reverse_edge_options(shared):
    ref = reference("MUTAG")
    loops = GINDataset("MUTAG", self_loop=True, degree_as_nlabel=True, raw_dir=shared, download=False)
    plain = GINDataset("MUTAG", self_loop=False, raw_dir=shared, download=False)
    once = GINDataset("MUTAG", self_loop=False, raw_dir=shared, download=False, reverse_edge=False)
    degrees = sorted({d for rg in ref["graphs"] for _, d in rg.degree()})
    assert loops.dim_nfeats == len(degrees)
    assert loops.m == plain.m + plain.n and once.m == plain.m // 2
    for i in (0, 57, 187):
        rg = ref["graphs"][i]
        g, _ = loops[i]
        s, d = (x.numpy() for x in g.edges())
        assert len(s) == len(ref["lists"][i]) + g.num_nodes()
        # each node's listed edges, in file order, then its self-loop
        for v in range(g.num_nodes()):
            mine = [(int(a), int(b)) for a, b in zip(s, d) if a == v]
            assert mine == [e for e in ref["lists"][i] if e[0] == v] + [(v, v)]
        deg = np.array([rg.degree(v) for v in range(rg.number_of_nodes())])
        np.testing.assert_array_equal(g.ndata["label"].numpy(), deg)
        want = np.zeros((len(deg), len(degrees)), np.float32)
        want[np.arange(len(deg)), [degrees.index(x) for x in deg]] = 1
        np.testing.assert_array_equal(g.ndata["attr"].numpy(), want)
        go, _ = once[i]
        pairs = sorted(zip(*(x.numpy().tolist() for x in go.edges())))
        assert pairs == sorted((min(a, b), max(a, b)) for a, b in rg.edges())
    deg_once = GINDataset("MUTAG", self_loop=False, degree_as_nlabel=True, raw_dir=shared, download=False,
                          reverse_edge=False)
    np.testing.assert_array_equal(deg_once[5][0].ndata["label"].numpy(), loops[5][0].ndata["label"].numpy())


def test_names_and_arguments(shared):
    with pytest.raises(ValueError, match="social sets.*available"):
        GINDataset("COLLAB", self_loop=False, raw_dir=shared)
    with pytest.raises(ValueError, match="name must be one of"):
        GINDataset("mutag", self_loop=False, raw_dir=shared)
    with pytest.raises(TypeError, match="self_loop must be True or False"):
        GINDataset("MUTAG", self_loop="yes", raw_dir=shared)
    with pytest.raises(TypeError, match="reverse_edge must be True or False"):
        GINDataset("MUTAG", self_loop=False, raw_dir=shared, reverse_edge=None)
    ds = GINDataset("NCI1", True, raw_dir=shared, download=False)
    assert (ds.N, ds.n) == (4110, 122747) and "self_loop=True" in repr(ds)
    train, test = kfold_split(ds, k=10, fold=0)
    assert len(train) + len(test) == 4110


def test_transform_applies_on_access(shared):
    calls = []

    def count_nodes(g):
        calls.append(g.num_nodes())
        return nw.add_self_loop(g)

    ds = GINDataset("MUTAG", self_loop=False, raw_dir=shared, transform=count_nodes)
    g, _ = ds[3]
    g2, _ = ds[3]
    assert calls == [g.num_nodes(), g.num_nodes()] and g.num_edges() == g2.num_edges()
    plain, _ = GINDataset("MUTAG", self_loop=False, raw_dir=shared)[3]
    assert g.num_edges() == plain.num_edges() + plain.num_nodes()


# ----------------------------------------------------------------------------- GraphDataLoader options


def test_loader_sampler(shared):
    ds = TUDataset("MUTAG", raw_dir=shared, download=False)
    order = [9, 3, 3, 150, 0, 77, 12]
    loader = GraphDataLoader(ds, batch_size=3, sampler=order)
    assert len(loader) == 3
    seen = []
    for bg, labels in loader:
        sizes = bg.batch_num_nodes().numpy().tolist()
        seen.extend(zip(sizes, labels.numpy().tolist()))
    assert seen == [(int(ds.num_nodes_per_graph[i]), int(ds.graph_labels[i])) for i in order]
    assert len(GraphDataLoader(ds, batch_size=3, sampler=order, drop_last=True)) == 2
    assert sum(1 for _ in GraphDataLoader(ds, batch_size=3, sampler=order, drop_last=True)) == 2
    gen = GraphDataLoader(ds, batch_size=2, sampler=(i for i in [1, 2, 3]))  # no len: iteration still works
    assert [lb.numpy().tolist() for _, lb in gen] == [ds.graph_labels[[1, 2]].tolist(), ds.graph_labels[[3]].tolist()]
    with pytest.raises(TypeError, match="needs a sampler with a length"):
        len(GraphDataLoader(ds, sampler=(i for i in [1])))
    with pytest.raises(ValueError, match="sampler and shuffle=True"):
        GraphDataLoader(ds, sampler=order, shuffle=True)
    with pytest.raises(TypeError, match="sampler must be an iterable"):
        GraphDataLoader(ds, sampler=5)
    with pytest.raises(TypeError, match="must yield int indices"):
        list(GraphDataLoader(ds, sampler=[0.5]))


def test_loader_takes_torch_samplers(shared):
    torch = pytest.importorskip("torch")
    from torch.utils.data import SubsetRandomSampler

    ds = TUDataset("MUTAG", raw_dir=shared, download=False)
    train, _ = kfold_split(ds, k=10, fold=0)
    torch.manual_seed(0)
    sampler = SubsetRandomSampler(train.indices.tolist())
    loader = GraphDataLoader(ds, batch_size=32, sampler=sampler)
    labels = np.concatenate([lb.numpy() for _, lb in loader])
    assert len(loader) == 6 and len(labels) == len(train)
    assert sorted(labels.tolist()) == sorted(ds.graph_labels[train.indices].tolist())
    second = np.concatenate([lb.numpy() for _, lb in loader])
    assert sorted(second.tolist()) == sorted(labels.tolist())  # a fresh order each epoch, same items


def test_pin_memory_warns_where_it_cannot_pin(shared):
    ds = TUDataset("MUTAG", raw_dir=shared, download=False)
    loader = GraphDataLoader(ds, batch_size=4, pin_memory=True)
    with pytest.warns(UserWarning, match="native backend has no page-locked host memory"):
        batches = [next(iter(loader)) for _ in range(2)]  # warned once per loader
    plain = next(iter(GraphDataLoader(ds, batch_size=4)))
    np.testing.assert_array_equal(batches[0][1].numpy(), plain[1].numpy())
    with pytest.raises(TypeError, match="pin_memory must be True or False"):
        GraphDataLoader(ds, pin_memory="yes")


def test_pin_memory_pins_labels_and_every_feature(shared, monkeypatch):
    torch = pytest.importorskip("torch")
    nw.set_backend("pytorch")
    ds = TUDataset("MUTAG", raw_dir=shared, download=False)
    pinned = []

    def fake_pin(t):  # stands in for Tensor.pin_memory, which needs a CUDA driver
        assert t.device.type == "cpu"
        pinned.append(t.clone())
        return pinned[-1]

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(loader_module, "pin_tensor", fake_pin)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bg, labels = next(iter(GraphDataLoader(ds, batch_size=5, pin_memory=True)))
    # ndata feat and node_label, edata edge_label and feat, and the labels: each replaced by its pinned copy
    assert len(pinned) == 5 and labels is pinned[-1]
    held = [bg.ndata[k] for k in bg.ndata] + [bg.edata[k] for k in bg.edata]
    assert sorted(bg.ndata) == ["feat", "node_label"] and sorted(bg.edata) == ["edge_label", "feat"]
    assert all(any(t is p for p in pinned) for t in held)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.warns(UserWarning, match="there is no CUDA device"):
        next(iter(GraphDataLoader(ds, batch_size=5, pin_memory=True)))


@pytest.mark.skipif(not nw.core.cuda_device_count(), reason="no CUDA device")
def test_pin_memory_on_cuda(shared):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    nw.set_backend("pytorch")
    ds = TUDataset("MUTAG", raw_dir=shared, download=False)
    bg, labels = next(iter(GraphDataLoader(ds, batch_size=8, pin_memory=True)))
    assert labels.is_pinned() and bg.ndata["feat"].is_pinned() and bg.edata["feat"].is_pinned()


def test_collate_fn_batches_items_of_any_kind(shared, monkeypatch):
    # DGL's R-GCN link example: a dataset of prepared (graph, ids, edges, labels) tuples, batch_size=1,
    # collate_fn picking the one item.
    ds = TUDataset("MUTAG", raw_dir=shared, download=False)
    seen = []

    def first(items):
        seen.append(len(items))
        return items[0]

    loader = GraphDataLoader(ds, batch_size=1, collate_fn=first, sampler=[4, 2])
    out = list(loader)
    assert seen == [1, 1] and [o[1] for o in out] == [ds[4][1], ds[2][1]] and out[0][0] is ds[4][0]
    words = GraphDataLoader(["ab", "c", "de", "f", "g"], batch_size=2, drop_last=True, collate_fn="+".join)
    assert list(words) == ["ab+c", "de+f"] and len(words) == 2
    with pytest.raises(TypeError, match="collate_fn must be a callable"):
        GraphDataLoader(ds, collate_fn="stack")
    # pin_memory pins what a custom batch holds, tensors and graphs inside tuples, lists and dicts
    torch = pytest.importorskip("torch")
    nw.set_backend("pytorch")
    ds = TUDataset("MUTAG", raw_dir=shared, download=False)
    pinned = []

    def fake_pin(t):
        pinned.append(t.clone())
        return pinned[-1]

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(loader_module, "pin_tensor", fake_pin)
    batch = next(iter(GraphDataLoader(ds, batch_size=2, pin_memory=True,
                                      collate_fn=lambda items: {"g": items[0][0], "y": [torch.tensor([1]), "x"]})))
    assert batch["y"][0] is pinned[-1] and batch["y"][1] == "x"
    assert all(any(batch["g"].ndata[k] is p for p in pinned) for k in batch["g"].ndata)
