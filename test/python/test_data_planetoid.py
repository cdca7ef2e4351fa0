"""Planetoid loaders: published counts, DGL conventions, values against an independent reference
(stdlib pickle on the trusted shared files + networkx), and the whitelisting unpickler."""

from __future__ import annotations

import os
import pickle
import shutil
import warnings

import networkx as nx
import numpy as np
import pytest

from nodeweave.data import (CiteseerGraphDataset, CoraGraphDataset, DataFormatError, PlanetoidDataset,
                            PubmedGraphDataset)
from nodeweave.data.planetoid import EXTS
from nodeweave.data.safe_pickle import ForbiddenGlobalError, load_pickle

from test_data_support import offline, shared  # noqa: F401

# name: nodes, undirected edges (README), directed edges (DGL), features, classes, train, self-loops
COUNTS = {"cora": (2708, 5278, 10556, 1433, 7, 140, 0), "citeseer": (3327, 4552, 9228, 3703, 6, 120, 124)}


def reference(shared, name):
    """Trusted reference straight from the shared files (stdlib pickle is fine on them)."""
    raw = {}
    for ext in EXTS:
        path = shared / f"planetoid/raw/ind.{name}.{ext}"
        if ext == "test.index":
            raw[ext] = [int(line) for line in path.read_text().split()]
        else:
            with open(path, "rb") as fh, warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # scipy.sparse.csr, a Python-2-era name
                raw[ext] = pickle.load(fh, encoding="latin1")
    return raw


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_published_counts(shared, name):
    n, und, directed, feats, classes, train, loops = COUNTS[name]
    ds = PlanetoidDataset(name, raw_dir=shared, download=False)
    g = ds[0]
    assert (g.num_nodes(), g.num_edges(), ds.num_classes, len(ds)) == (n, directed, classes, 1)
    src, dst = (t.numpy() for t in g.edges())
    assert int((src == dst).sum()) == loops and int((src < dst).sum()) == und
    assert tuple(g.ndata["feat"].shape) == (n, feats) and g.ndata["feat"].dtype.name == "float32"
    assert g.ndata["label"].dtype.name == "int64"
    masks = {k: g.ndata[k].numpy() for k in ("train_mask", "val_mask", "test_mask")}
    assert all(m.dtype == bool for m in masks.values())
    assert [int(m.sum()) for m in masks.values()] == [train, 500, 1000]
    assert not (masks["train_mask"] & masks["val_mask"]).any() and not (masks["val_mask"] & masks["test_mask"]).any()
    np.testing.assert_array_equal(np.flatnonzero(masks["train_mask"]), np.arange(train))
    np.testing.assert_array_equal(np.flatnonzero(masks["val_mask"]), np.arange(train, train + 500))
    labels = g.ndata["label"].numpy()
    assert labels.min() == 0 and labels.max() == classes - 1


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_values_match_reference(shared, name):
    raw = reference(shared, name)
    g = PlanetoidDataset(name, raw_dir=shared, download=False, normalize_features=False)[0]
    n = g.num_nodes()
    # edges: networkx's undirected graph of the adjacency dict, in both directions
    ref = nx.Graph()
    ref.add_nodes_from(range(n))
    ref.add_edges_from((u, v) for u, vs in raw["graph"].items() for v in vs)
    expect = sorted(set(ref.to_directed().edges()))
    src, dst = (t.numpy() for t in g.edges())
    assert list(zip(src.tolist(), dst.tolist())) == expect
    # features and labels: allx/ally rows for the first nodes, tx/ty rows at the test.index ids
    feat, label = g.ndata["feat"].numpy(), g.ndata["label"].numpy()
    allx, tx = raw["allx"].toarray(), raw["tx"].toarray()
    np.testing.assert_array_equal(feat[:allx.shape[0]], allx)
    np.testing.assert_array_equal(feat[raw["test.index"]], tx)
    np.testing.assert_array_equal(label[:allx.shape[0]], raw["ally"].argmax(1))
    np.testing.assert_array_equal(label[raw["test.index"]], raw["ty"].argmax(1))
    assert set(np.unique(feat)) <= {0.0, 1.0}
    np.testing.assert_array_equal(np.flatnonzero(g.ndata["test_mask"].numpy()), np.sort(raw["test.index"]))


def test_features_row_normalized_by_default(shared):
    raw = CoraGraphDataset(raw_dir=shared, download=False, normalize_features=False)[0].ndata["feat"].numpy()
    feat = CoraGraphDataset(raw_dir=shared, download=False)[0].ndata["feat"].numpy()
    np.testing.assert_allclose(feat, raw / raw.sum(1, keepdims=True), rtol=1e-6)


def test_citeseer_missing_test_ids_are_zero_padded(shared):
    raw = reference(shared, "citeseer")
    g = CiteseerGraphDataset(raw_dir=shared, download=False)[0]
    ids = np.array(raw["test.index"])
    gaps = sorted(set(range(ids.min(), ids.max() + 1)) - set(ids.tolist()))
    assert len(gaps) == 15 and g.num_nodes() == ids.max() + 1
    feat = g.ndata["feat"].numpy()
    assert not feat[gaps].any() and feat[np.setdiff1d(np.arange(g.num_nodes()), gaps)].sum(1).min() > 0
    for k in ("train_mask", "val_mask", "test_mask"):
        assert not g.ndata[k].numpy()[gaps].any()
    assert (g.ndata["label"].numpy()[gaps] == 0).all()  # argmax of a zero row, as DGL


def test_names_and_indexing(shared):
    with pytest.raises(ValueError, match="must be one of"):
        PlanetoidDataset("coraa", raw_dir=shared)
    ds = PlanetoidDataset("CoRa", raw_dir=shared, download=False)
    assert ds.name == "cora" and ds[-1] is ds[0]
    with pytest.raises(IndexError, match="holds one graph"):
        ds[1]
    with pytest.raises(TypeError):
        ds["0"]
    assert "cora" in repr(ds)
    ds.verify_files()


def test_pubmed_absent_offline(tmp_path, offline):
    with pytest.raises(FileNotFoundError) as info:
        PubmedGraphDataset(raw_dir=tmp_path, download=False)
    msg = str(info.value)
    for ext in EXTS:
        assert f"ind.pubmed.{ext}" in msg
    assert "https://github.com/kimiyoung/planetoid/raw/master/data/ind.pubmed.x" in msg
    assert offline == []


def _cora_copy(shared, tmp_path):
    root = tmp_path / "data"
    (root / "planetoid/raw").mkdir(parents=True)
    for ext in EXTS:
        shutil.copyfile(shared / f"planetoid/raw/ind.cora.{ext}", root / f"planetoid/raw/ind.cora.{ext}")
    return root


class _Evil:
    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


def test_malicious_pickle_is_refused(shared, tmp_path):
    root = _cora_copy(shared, tmp_path)
    marker = tmp_path / "owned"
    target = root / "planetoid/raw/ind.cora.graph"
    with open(target, "wb") as fh:
        pickle.dump(_Evil(os.system, f"touch {marker}"), fh, protocol=2)
    with pytest.raises(pickle.UnpicklingError, match=r"refusing to load the global 'posix\.system'") as info:
        CoraGraphDataset(raw_dir=root, download=False)
    assert str(target) in str(info.value)
    assert not marker.exists()


@pytest.mark.parametrize("fn, args, name", [
    (eval, ("1+1",), r"(__builtin__|builtins)\.eval"),  # protocol 2 writes Python 2 module names
    (getattr, (object, "x"), r"(__builtin__|builtins)\.getattr"),
    (shutil.rmtree, ("/nonexistent",), r"shutil\.rmtree"),
])
def test_whitelist_refuses_other_globals(tmp_path, fn, args, name):
    path = tmp_path / "x.pkl"
    with open(path, "wb") as fh:
        pickle.dump(_Evil(fn, *args), fh, protocol=2)
    with pytest.raises(ForbiddenGlobalError, match=f"'{name}'"):
        load_pickle(path)


def test_nested_forbidden_global(tmp_path):
    # a forbidden callable hidden inside an allowed container is refused too
    path = tmp_path / "x.pkl"
    with open(path, "wb") as fh:
        pickle.dump({0: [1, _Evil(print, "hi")]}, fh, protocol=2)
    with pytest.raises(pickle.UnpicklingError, match=r"(__builtin__|builtins)\.print"):
        load_pickle(path)


@pytest.mark.parametrize("ext", ["x", "ally", "graph"])
def test_truncated_pickle(shared, tmp_path, ext):
    root = _cora_copy(shared, tmp_path)
    target = root / f"planetoid/raw/ind.cora.{ext}"
    data = target.read_bytes()
    target.write_bytes(data[:len(data) // 2])
    with pytest.raises(DataFormatError, match="truncated or corrupt pickle") as info:
        CoraGraphDataset(raw_dir=root, download=False)
    assert info.value.path == str(target)


def test_wrong_object_in_pickle(shared, tmp_path):
    root = _cora_copy(shared, tmp_path)
    target = root / "planetoid/raw/ind.cora.tx"
    with open(target, "wb") as fh:
        pickle.dump([1, 2, 3], fh, protocol=2)
    with pytest.raises(DataFormatError, match=r"ind\.cora\.tx: expected a pickled scipy\.sparse\.csr_matrix"):
        CoraGraphDataset(raw_dir=root, download=False)


def test_bad_test_index_line(shared, tmp_path):
    root = _cora_copy(shared, tmp_path)
    target = root / "planetoid/raw/ind.cora.test.index"
    lines = target.read_text().split("\n")
    lines[6] = "17x"
    target.write_text("\n".join(lines))
    with pytest.raises(DataFormatError, match=r"ind\.cora\.test\.index:7: '17x' is not an integer"):
        CoraGraphDataset(raw_dir=root, download=False)
