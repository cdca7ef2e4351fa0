"""TU graph classification sets, stratified k-fold splits and GraphDataLoader."""

from __future__ import annotations

import shutil
from collections import Counter

import numpy as np
import pytest

import nodeweave as nw
from nodeweave.data import DataFormatError, GraphDataLoader, Subset, TUDataset, kfold_split
from nodeweave.data.tu import tu_files

from test_data_support import shared, shared_data_dir  # noqa: F401

# name: graphs, nodes, undirected edges, classes, feat width (README table; widths = label range + attrs)
COUNTS = {
    "MUTAG": (188, 3371, 3721, 2, 7),
    "PTC_MR": (344, 4915, 5054, 2, 18),
    "PROTEINS": (1113, 43471, 81044, 2, 4),
    "NCI1": (4110, 122747, 132753, 2, 37),
    "NCI109": (4127, 122494, 132604, 2, 38),
}
_CACHE: dict = {}


def load(name: str) -> TUDataset:
    if name not in _CACHE:
        _CACHE[name] = TUDataset(name, raw_dir=shared_data_dir(), download=False)
    return _CACHE[name]


@pytest.mark.parametrize("name", list(COUNTS))
def test_published_counts(shared, name):
    ds = load(name)
    graphs, nodes, und, classes, width = COUNTS[name]
    assert (len(ds), ds.num_classes) == (graphs, classes)
    assert int(ds.num_nodes_per_graph.sum()) == nodes and int(ds.num_edges_per_graph.sum()) == 2 * und
    assert ds.graph_labels.dtype == np.int64 and set(np.unique(ds.graph_labels)) == set(range(classes))
    g, label = ds[len(ds) - 1]
    assert g.ndata["feat"].shape[1] == width and g.ndata["feat"].dtype.name == "float32"
    assert isinstance(label, np.int64)
    assert (g.num_nodes(), g.num_edges()) == (ds.num_nodes_per_graph[-1], ds.num_edges_per_graph[-1])
    ds.verify_files()


def test_mutag_against_plain_python_reference(shared):
    folder = shared / "tu/MUTAG"
    read = lambda kind: [line.strip() for line in (folder / f"MUTAG_{kind}.txt").read_text().split("\n") if line.strip()]
    indicator = [int(x) for x in read("graph_indicator")]
    node_labels = [int(x) for x in read("node_labels")]
    edges = [tuple(int(v) for v in x.split(",")) for x in read("A")]
    edge_labels = [int(x) for x in read("edge_labels")]
    graph_labels = [int(x) for x in read("graph_labels")]
    assert Counter(graph_labels) == {1: 125, -1: 63}
    ds = load("MUTAG")
    for gi in (0, 1, 100, 187):
        nodes = [i + 1 for i, g in enumerate(indicator) if g == gi + 1]
        first = nodes[0]
        expect = [(u - first, v - first, lab) for (u, v), lab in zip(edges, edge_labels) if indicator[u - 1] == gi + 1]
        g, label = ds[gi]
        src, dst = (t.numpy().tolist() for t in g.edges())
        assert list(zip(src, dst, g.edata["edge_label"].numpy().tolist())) == expect
        feat = g.ndata["feat"].numpy()
        assert feat.argmax(1).tolist() == [node_labels[n - 1] for n in nodes] and (feat.sum(1) == 1).all()
        np.testing.assert_array_equal(g.edata["feat"].numpy().argmax(1), g.edata["edge_label"].numpy())
        assert int(label) == (1 if graph_labels[gi] == 1 else 0)  # sorted raw labels -1, 1 -> 0, 1


@pytest.mark.parametrize("name", ["MUTAG", "PROTEINS"])
def test_edges_come_in_both_directions(shared, name):
    ds = load(name)
    for i in range(0, len(ds), 37):
        src, dst = (t.numpy() for t in ds[i][0].edges())
        assert Counter(zip(src.tolist(), dst.tolist())) == Counter(zip(dst.tolist(), src.tolist()))


def test_proteins_attributes_follow_one_hot(shared):
    ds = load("PROTEINS")
    attr = np.array([float(x) for x in (shared / "tu/PROTEINS/PROTEINS_node_attributes.txt").read_text().split()])
    feat = np.concatenate([ds[i][0].ndata["feat"].numpy() for i in range(3)])
    np.testing.assert_allclose(feat[:, 3], attr[:len(feat)], rtol=1e-6)
    assert (feat[:, :3].sum(1) == 1).all()


def test_indexing(shared):
    ds = load("MUTAG")
    assert ds[-1][0] is ds[187][0]
    with pytest.raises(IndexError, match="out of range for 188 graphs"):
        ds[188]
    with pytest.raises(TypeError):
        ds[1.0]
    with pytest.raises(ValueError, match="must be one of"):
        TUDataset("ENZYMES")


def _mutag_copy(shared, tmp_path):
    root = tmp_path / "data"
    for f in tu_files("MUTAG"):
        (root / f.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared / f.path, root / f.path)
    return root


def _edit(path, lineno, text):
    lines = path.read_text().split("\n")
    lines[lineno - 1] = text
    path.write_text("\n".join(lines))


@pytest.mark.parametrize("kind, lineno, text, msg", [
    ("A", 12, "3, x", r"MUTAG_A\.txt:12: 'x' is not an integer"),
    ("A", 12, "3, 4, 5", r"MUTAG_A\.txt:12: expected 2 numbers, got 3"),
    ("A", 12, "", r"MUTAG_A\.txt:12: empty line inside the table"),
    ("A", 12, "3, 99999", r"MUTAG_A\.txt:12: node id outside 1\.\.3371"),
    ("A", 12, "1, 3371", r"MUTAG_A\.txt:12: edge \[1, 3371\] joins graphs 1 and 188"),
    ("A", 12, "1, 99999999999999999999", r"MUTAG_A\.txt:12: '99999999999999999999' is outside the int64 range"),
    ("graph_indicator", 30, "5", r"MUTAG_graph_indicator\.txt:30: graph id 5 breaks the order"),
    ("node_labels", 3, "1.5", r"MUTAG_node_labels\.txt:3: '1\.5' is not an integer"),
    ("edge_labels", 7, "", r"MUTAG_edge_labels\.txt:7: empty line"),
])
def test_malformed_lines_name_file_and_line(shared, tmp_path, kind, lineno, text, msg):
    root = _mutag_copy(shared, tmp_path)
    _edit(root / f"tu/MUTAG/MUTAG_{kind}.txt", lineno, text)
    with pytest.raises(DataFormatError, match=msg):
        TUDataset("MUTAG", raw_dir=root, download=False)


def test_truncated_and_mismatched_files(shared, tmp_path):
    root = _mutag_copy(shared, tmp_path)
    labels = root / "tu/MUTAG/MUTAG_node_labels.txt"
    labels.write_text("\n".join(labels.read_text().split("\n")[:100]))
    with pytest.raises(DataFormatError, match=r"MUTAG_node_labels\.txt: has 100 lines, MUTAG_graph_indicator\.txt has 3371"):
        TUDataset("MUTAG", raw_dir=root, download=False)
    shutil.copyfile(shared / "tu/MUTAG/MUTAG_node_labels.txt", labels)
    graph_labels = root / "tu/MUTAG/MUTAG_graph_labels.txt"
    graph_labels.write_text("1\n" * 187)
    with pytest.raises(DataFormatError, match=r"names 188 graphs but MUTAG_graph_labels\.txt has 187 labels"):
        TUDataset("MUTAG", raw_dir=root, download=False)


# --------------------------------------------------------------------------------------- k-fold


@pytest.mark.parametrize("name", ["MUTAG", "PROTEINS"])
def test_kfold_is_a_stratified_partition(shared, name):
    ds = load(name)
    tests = [kfold_split(ds, k=10, fold=f, seed=7) for f in range(10)]
    allt = np.concatenate([t.indices for _, t in tests])
    assert sorted(allt.tolist()) == list(range(len(ds)))
    sizes = [len(t) for _, t in tests]
    assert max(sizes) - min(sizes) <= 1
    for c in range(ds.num_classes):
        per_fold = [int((ds.graph_labels[t.indices] == c).sum()) for _, t in tests]
        assert max(per_fold) - min(per_fold) <= 1
    train, test = tests[3]
    assert not set(train.indices) & set(test.indices) and len(train) + len(test) == len(ds)
    assert train.num_classes == ds.num_classes


def test_kfold_seeds_and_arguments(shared):
    ds = load("MUTAG")
    a = kfold_split(ds, 5, 0, seed=1)[1].indices
    np.testing.assert_array_equal(a, kfold_split(ds, 5, 0, seed=1)[1].indices)
    assert not np.array_equal(a, kfold_split(ds, 5, 0, seed=2)[1].indices)
    for k, fold, err in ((1, 0, "at least 2"), (5, 5, "fold must be in 0..4"), (5, -1, "fold must be in")):
        with pytest.raises(ValueError, match=err):
            kfold_split(ds, k, fold)
    with pytest.raises(ValueError, match="cannot be split"):
        kfold_split(Subset(ds, [0, 1, 2]), k=4)
    # a nested subset maps its labels through the indices
    sub = Subset(ds, np.arange(0, 188, 2))
    tr, te = kfold_split(sub, k=2, fold=0)
    assert len(tr) + len(te) == 94


# --------------------------------------------------------------------------------------- loader


def test_loader_batches_graphs_and_labels(shared):
    ds = load("MUTAG")
    loader = GraphDataLoader(ds, batch_size=50)
    assert len(loader) == 4
    seen = 0
    for bg, labels in loader:
        n = labels.shape[0]
        assert bg.batch_size == n and labels.dtype.name == "int64"
        np.testing.assert_array_equal(labels.numpy(), ds.graph_labels[seen:seen + n])
        assert bg.num_nodes() == int(ds.num_nodes_per_graph[seen:seen + n].sum())
        np.testing.assert_array_equal(bg.batch_num_nodes().numpy(), ds.num_nodes_per_graph[seen:seen + n])
        seen += n
    assert seen == 188
    parts = nw.unbatch(next(iter(loader))[0])
    np.testing.assert_array_equal(parts[3].ndata["feat"].numpy(), ds[3][0].ndata["feat"].numpy())


def test_loader_shuffle_and_drop_last(shared):
    ds = load("PTC_MR")
    loader = GraphDataLoader(ds, batch_size=100, shuffle=True, drop_last=True, seed=3)
    assert len(loader) == 3
    epoch1 = [labels.numpy() for _, labels in loader]
    epoch2 = [labels.numpy() for _, labels in loader]
    assert len(epoch1) == 3 and all(len(x) == 100 for x in epoch1)
    again = [labels.numpy() for _, labels in GraphDataLoader(ds, 100, shuffle=True, drop_last=True, seed=3)]
    assert all(np.array_equal(a, b) for a, b in zip(epoch1, again))  # same seed, same first epoch
    assert not all(np.array_equal(a, b) for a, b in zip(epoch1, epoch2))  # a new order each epoch
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        GraphDataLoader(ds, batch_size=0)


def test_loader_over_a_fold(shared):
    ds = load("NCI1")
    train, test = kfold_split(ds, k=10, fold=2, seed=0)
    total = 0
    for bg, labels in GraphDataLoader(test, batch_size=128):
        total += labels.shape[0]
    assert total == len(test) == 411
