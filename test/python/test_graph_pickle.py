"""Pickling graphs and native tensors: round trips through ``pickle`` (every protocol that supports
``__slots__``), ``copy.deepcopy``, ``torch.save`` / ``torch.load`` and a spawned worker process keep
structure (compared as arrays with the original's), the formats a relation may build, features
(values, dtypes, ``requires_grad``), stored ids, types, id type and batch counts, on both backends.
Damaged payloads raise instead of building a broken graph."""

import copy
import io
import multiprocessing
import pickle

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.backend as nwb
import nodeweave.core as nc
from nodeweave.core import pickling as core_pickling
from nodeweave.graph import pickling as graph_pickling
from conftest import np_of

PROTOCOLS = list(range(2, pickle.HIGHEST_PROTOCOL + 1))
HAS_GPU = nc.cuda_device_count() > 0


def feat(arr):
    return nwb.current().from_numpy(np.ascontiguousarray(arr))


def snapshot(g):
    """Everything a round trip must keep, as plain Python / NumPy values."""
    out = {"type": type(g).__name__, "ntypes": g.ntypes, "etypes": g.canonical_etypes,
           "idtype": str(g.idtype), "batch_size": g.batch_size, "nodes": {}, "edges": {}}
    for nt in g.ntypes:
        sides = ("src", "dst") if g.is_block else ("all",)
        for side in sides:
            view = {"src": g.srcnodes, "dst": g.dstnodes, "all": g.nodes}[side]
            if nt not in ({"src": g.srctypes, "dst": g.dsttypes, "all": g.ntypes}[side]):
                continue
            data = view[nt].data
            out["nodes"][(side, nt)] = (
                {"src": g.num_src_nodes, "dst": g.num_dst_nodes, "all": g.num_nodes}[side](nt),
                {k: (nwb.of(v).dtype_name(v), np_of(v)) for k, v in data.items()})
        if not g.is_block:
            out["nodes"][("bnn", nt)] = np_of(g.batch_num_nodes(nt))
    for ct in g.canonical_etypes:
        s, d = g.edges(etype=ct)
        out["edges"][ct] = (np_of(s), np_of(d),
                            {k: (nwb.of(v).dtype_name(v), np_of(v)) for k, v in g.edges[ct].data.items()},
                            np_of(g.batch_num_edges(ct)) if not g.is_block else None)
    return out


def assert_same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if k in ("nodes", "edges"):
            assert a[k].keys() == b[k].keys()
            for key in a[k]:
                _assert_nested(a[k][key], b[k][key], (k, key))
        else:
            assert a[k] == b[k], k


def _assert_nested(x, y, where):
    if isinstance(x, dict):
        assert x.keys() == y.keys(), where
        for k in x:
            _assert_nested(x[k], y[k], (where, k))
    elif isinstance(x, (tuple, list)):
        assert len(x) == len(y), where
        for i, (p, q) in enumerate(zip(x, y)):
            _assert_nested(p, q, (where, i))
    elif isinstance(x, np.ndarray):
        assert x.dtype == y.dtype and x.shape == y.shape, where
        np.testing.assert_array_equal(x, y, err_msg=str(where))
    else:
        assert x == y, where


def homogeneous(rng, idtype="int64", n=9, m=20):
    src, dst = rng.integers(0, n - 2, m), rng.integers(0, n - 2, m)
    src[1], dst[1] = src[2], dst[2]  # a multi-edge; nodes n-2, n-1 are isolated
    g = nw.graph((src, dst), num_nodes=n, idtype=idtype)
    g.ndata["h"] = feat(rng.standard_normal((n, 3)).astype(np.float32))
    g.ndata["label"] = feat(rng.integers(0, 5, n))
    g.edata["w"] = feat(rng.standard_normal((m, 2, 2)))
    return g


def hetero(rng, idtype="int64"):
    g = nw.heterograph({("user", "follows", "user"): (rng.integers(0, 4, 6), rng.integers(0, 4, 6)),
                        ("user", "plays", "game"): (rng.integers(0, 4, 5), rng.integers(0, 3, 5)),
                        ("game", "none", "game"): ([], [])},
                       {"user": 4, "game": 3}, idtype=idtype)
    g.nodes["user"].data["h"] = feat(rng.standard_normal((4, 2)).astype(np.float32))
    g.nodes["game"].data["x"] = feat(np.arange(3, dtype=np.int32))
    g.edges["plays"].data["w"] = feat(rng.standard_normal(5))
    return g


# ----------------------------------------------------------------------------- pickle / deepcopy


@pytest.mark.parametrize("idtype", ["int32", "int64"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_homogeneous_round_trip(backend_name, idtype, protocol):
    g = homogeneous(np.random.default_rng(0), idtype)
    h = pickle.loads(pickle.dumps(g, protocol=protocol))
    assert_same(snapshot(g), snapshot(h))
    assert type(nwb.of(h.ndata["h"])).__name__ == type(nwb.of(g.ndata["h"])).__name__
    # The loaded graph computes: in-degrees and a message passing step against NumPy.
    s, d = (np_of(t) for t in g.edges())
    np.testing.assert_array_equal(np_of(h.in_degrees()), np.bincount(d, minlength=9))
    h.update_all(nw.function.copy_u("h", "m"), nw.function.sum("m", "agg"))
    want = np.zeros((9, 3), np.float32)
    np.add.at(want, d, np_of(g.ndata["h"])[s])
    np.testing.assert_allclose(np_of(h.ndata["agg"]), want, rtol=1e-6, atol=1e-6)


def test_heterograph_subgraph_ids_and_batch_round_trip(backend_name):
    rng = np.random.default_rng(1)
    parts = [hetero(rng) for _ in range(3)]
    bg = nw.batch(parts)
    h = pickle.loads(pickle.dumps(bg))
    assert_same(snapshot(bg), snapshot(h))
    for a, b in zip(nw.unbatch(h), parts):
        assert_same(snapshot(a), snapshot(b))
    sub = nw.node_subgraph(homogeneous(rng), [5, 1, 2, 7])  # NID / EID stored
    back = pickle.loads(pickle.dumps(sub))
    assert_same(snapshot(sub), snapshot(back))
    np.testing.assert_array_equal(np_of(back.ndata[nw.NID]), [5, 1, 2, 7])


def test_block_round_trip(backend_name):
    frontier = nw.graph(([0, 1, 2, 3, 4], [1, 2, 1, 1, 2]), num_nodes=6)
    frontier.edata["w"] = feat(np.arange(5, dtype=np.float32))
    block = nw.to_block(frontier, [1, 2])
    block.srcdata["h"] = feat(np.arange(block.num_src_nodes(), dtype=np.float64))
    back = pickle.loads(pickle.dumps(block))
    assert back.is_block and type(back) is nw.Block
    assert (back.num_src_nodes(), back.num_dst_nodes()) == (block.num_src_nodes(), block.num_dst_nodes())
    assert_same(snapshot(block), snapshot(back))
    np.testing.assert_array_equal(np_of(back.dstdata[nw.NID]), [1, 2])


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc"])
def test_relation_pickles_through_its_materialized_format(fmt):
    g = homogeneous(np.random.default_rng(2), "int32").formats(fmt)
    rel = g._rels[g.canonical_etypes[0]]
    assert rel.created_formats == [fmt]  # only the one the restricted graph may hold
    back = pickle.loads(pickle.dumps(rel))
    assert back.allowed_formats == [fmt] and back.created_formats == [fmt]
    assert (back.num_src, back.num_dst, back.num_edges, back.idtype) == (9, 9, 20, "int32")
    for x, y in zip(getattr(rel, fmt)(), getattr(back, fmt)()):
        assert x.dtype == y.dtype == np.int32
        np.testing.assert_array_equal(x, y)
    h = pickle.loads(pickle.dumps(g))
    assert h.formats() == {"created": [fmt], "not created": []}
    for x, y in zip(g.edges(), h.edges()):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_relation_keeps_formats_it_had_not_built_yet():
    rel = nw._C.RelationGraph.from_coo(3, 2, np.array([0, 2]), np.array([1, 1]))
    assert rel.created_formats == ["coo"]
    back = pickle.loads(pickle.dumps(rel))
    assert back.allowed_formats == ["coo", "csr", "csc"] and back.created_formats == ["coo"]
    indptr, indices, eids = back.csc()
    np.testing.assert_array_equal(indptr, [0, 0, 2])
    np.testing.assert_array_equal(indices, [0, 2])


@pytest.mark.parametrize("build", [["csr"], ["csc"], ["csr", "csc"]])
def test_built_formats_are_built_again_after_loading(build):
    """As DGL's pickles: what was built before pickling is built after loading (so that
    create_formats_() before handing a graph to workers spares each worker the work), from the
    one stored format; the arrays equal the originals."""
    g = homogeneous(np.random.default_rng(4))
    rel = g._rels[g.canonical_etypes[0]]
    for f in build:
        getattr(rel, f)()
    back = pickle.loads(pickle.dumps(rel))
    assert back.created_formats == rel.created_formats == ["coo"] + build
    for f in ["coo"] + build:
        for x, y in zip(getattr(rel, f)(), getattr(back, f)()):
            np.testing.assert_array_equal(x, y)
    only = g.formats(build[-1])._rels[g.canonical_etypes[0]]   # a relation that may hold one format
    assert pickle.loads(pickle.dumps(only)).created_formats == [build[-1]]


def _created_formats(g):
    return g.formats()["created"]


def test_created_formats_reach_a_spawned_worker():
    g = homogeneous(np.random.default_rng(5))
    g.create_formats_()
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(_created_formats, (g,)) == ["coo", "csr", "csc"]


def test_deepcopy_is_independent():
    g = homogeneous(np.random.default_rng(3))
    h = copy.deepcopy(g)
    assert_same(snapshot(g), snapshot(h))
    h.ndata["h"][0] = 100.0  # in place: the copy has its own storage
    h.add_edges([0], [1])
    assert float(g.ndata["h"][0, 0]) != 100.0 and g.num_edges() == 20


def test_damaged_payloads_raise():
    good = (np.array([0, 1]), np.array([1, 0]))
    with pytest.raises((ValueError, IndexError)):
        graph_pickling._rebuild_relation(2, 2, "int64", "coo", (np.array([0, 5]), good[1]), ["coo"], "cpu")
    with pytest.raises(ValueError, match="unknown format 'dense'"):
        graph_pickling._rebuild_relation(2, 2, "int64", "dense", good, ["coo"], "cpu")
    data = pickle.dumps(nc.tensor([1.0, 2.0, 3.0]))
    # Flip a byte of a pickled tensor's data: the CRC check of nodeweave.core.load catches it.
    _, (payload, device) = core_pickling._reduce_tensor(nc.tensor([1.0, 2.0, 3.0]))
    bad = bytearray(payload)
    bad[-40] ^= 0xFF
    with pytest.raises(ValueError, match="corrupted"):
        core_pickling._rebuild_tensor(bytes(bad), device)
    assert pickle.loads(data).tolist() == [1.0, 2.0, 3.0]


# ----------------------------------------------------------------------------- native tensors


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16",
                                   "float32", "float64"])
def test_native_tensor_round_trip_every_dtype(dtype):
    rng = np.random.default_rng(4)
    t = nc.tensor(rng.standard_normal((3, 4)) * 10, dtype=getattr(nc, dtype))
    back = pickle.loads(pickle.dumps(t))
    assert back.dtype == t.dtype and tuple(back.shape) == (3, 4)
    np.testing.assert_array_equal(back._cast("float64").numpy(), t._cast("float64").numpy())


def test_native_tensor_views_scalars_grad_and_shared_objects():
    base = nc.tensor(np.arange(12.0).reshape(3, 4))
    view = base.transpose(0, 1)
    assert not view.is_contiguous()
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(view)).numpy(), np.arange(12.0).reshape(3, 4).T)
    assert pickle.loads(pickle.dumps(nc.tensor(2.5))).tolist() == 2.5
    assert tuple(pickle.loads(pickle.dumps(nc.zeros((0, 3)))).shape) == (0, 3)
    leaf = nc.tensor([1.0, 2.0], requires_grad=True)
    for t in (leaf, leaf * 3):  # like torch: requires_grad survives, history does not
        back = pickle.loads(pickle.dumps(t))
        assert back.requires_grad and back.is_leaf
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(leaf * 3)).detach().numpy(), [3.0, 6.0])
    a, b = pickle.loads(pickle.dumps([leaf, leaf]))
    assert a is b  # pickle's memo: one object stays one object
    assert pickle.loads(pickle.dumps(nc.device("cpu"))) == nc.device("cpu")


def test_native_module_round_trip_keeps_parameters_and_output():
    nc.manual_seed(0)
    model = nc.nn.Sequential(nc.nn.Linear(3, 4), nc.nn.ReLU(), nc.nn.Linear(4, 2))
    back = pickle.loads(pickle.dumps(model))
    assert all(type(p).__name__ == "Parameter" and p.requires_grad for p in back.parameters())
    x = nc.tensor(np.random.default_rng(5).standard_normal((5, 3)).astype(np.float32))
    np.testing.assert_array_equal(back(x).detach().numpy(), model(x).detach().numpy())


# ----------------------------------------------------------------------------- torch.save / workers


def test_torch_save_and_load(backend_name):
    g = hetero(np.random.default_rng(6), "int32")
    buf = io.BytesIO()
    torch.save(g, buf)
    buf.seek(0)
    # A graph is a Python object, not only tensors: torch >= 2.6 loads it with weights_only=False.
    h = torch.load(buf, weights_only=False)
    assert_same(snapshot(g), snapshot(h))


def _worker_summary(g, backend_name):
    """Runs in a spawned process: what it sees of the graph it was sent, and one computation."""
    nw.set_backend(backend_name)
    s, d = (np_of(t) for t in g.edges(etype="plays"))
    g["plays"].update_all(nw.function.copy_u("h", "m"), nw.function.sum("m", "agg"))
    return {"snapshot": snapshot(g), "plays": (s, d), "agg": np_of(g.nodes["game"].data["agg"]),
            "backend": type(g.nodes["user"].data["h"]).__module__}


def test_graph_loads_in_a_spawned_worker(backend_name):
    g = nw.batch([hetero(np.random.default_rng(7)), hetero(np.random.default_rng(8))])
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        got = pool.apply(_worker_summary, (g, backend_name))
    want = snapshot(g)
    got_snapshot = got["snapshot"]
    # The worker also stored 'agg' on the game nodes; everything else is what was sent.
    agg = got_snapshot["nodes"][("all", "game")][1].pop("agg")
    assert_same(want, got_snapshot)
    s, d = (np_of(t) for t in g.edges(etype="plays"))
    want_agg = np.zeros((g.num_nodes("game"), 2), np.float32)
    np.add.at(want_agg, d, np_of(g.nodes["user"].data["h"])[s])
    np.testing.assert_allclose(got["agg"], want_agg, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(agg[1], got["agg"])
    assert got["backend"].startswith("torch" if backend_name == "pytorch" else "nodeweave")


@pytest.mark.skipif(not HAS_GPU, reason="no CUDA device")
def test_cuda_graph_round_trip_stays_on_the_device():
    g = homogeneous(np.random.default_rng(9)).to("cuda:0")
    h = pickle.loads(pickle.dumps(g))
    assert str(h.device) == "cuda:0" and h._rels[h.canonical_etypes[0]].device == "cuda:0"
    assert h.ndata["h"].device == nc.device("cuda:0")
    assert_same(snapshot(g.cpu()), snapshot(h.cpu()))


class _GraphList(torch.utils.data.Dataset):
    """Small graphs with features, made in the worker from their index (so only the batches travel)."""

    def __init__(self, backend_name):
        self.backend_name = backend_name

    def __len__(self):
        return 6

    def __getitem__(self, i):
        nw.set_backend(self.backend_name)
        return hetero(np.random.default_rng(100 + i), "int32")


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_torch_dataloader_workers_send_batched_graphs_back(backend_name, context):
    """What DGL's GraphDataLoader does with num_workers > 0: worker processes build the batches and
    send them to the main process through pickling queues."""
    loader = torch.utils.data.DataLoader(_GraphList(backend_name), batch_size=3, num_workers=2,
                                         collate_fn=nw.batch, multiprocessing_context=context)
    got = list(loader)
    assert len(got) == 2
    for k, bg in enumerate(got):
        want = nw.batch([hetero(np.random.default_rng(100 + 3 * k + j), "int32") for j in range(3)])
        assert_same(snapshot(want), snapshot(bg))
