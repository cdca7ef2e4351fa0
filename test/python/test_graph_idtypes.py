"""Id types: every spelling (each backend's dtype, NumPy dtypes, strings, a graph's own ``g.idtype``)
at every entry point that takes one (``idtype=`` of the builders, generators and create_block,
``g.astype``), on both backends; unknown spellings raise TypeError naming the argument and the
accepted values."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import torch

import nodeweave as nw
import nodeweave.backend as backend
import nodeweave.core as nc


@pytest.fixture(params=["native", "pytorch"])
def B(request):
    return nw.set_backend(request.param)


def _graph_idtype(name: str):
    """A graph's own idtype on the active backend, built without naming a dtype object."""
    return nw.graph(([0], [1]), idtype=name).idtype


SPELLINGS = {
    "int32": ["int32", np.int32, np.intc, np.dtype("int32"), np.dtype("<i4"), nc.int32, torch.int32,
              torch.int, "g.idtype"],
    "int64": ["int64", np.int64, np.dtype("int64"), np.dtype("<i8"), nc.int64, torch.int64, torch.long,
              "g.idtype"],
}
CASES = [(name, spelling) for name, spellings in SPELLINGS.items() for spelling in spellings]


def _edge_file(tmp_path):
    path = tmp_path / "edges.txt"
    path.write_text("0 1\n2 0\n")
    return path


# Each entry point builds (or converts to) a graph with the given idtype, and the edges it must have.
ENTRY_POINTS = {
    "graph (src, dst)": (lambda d, p: nw.graph(([0, 2], [1, 0]), idtype=d), ([0, 2], [1, 0])),
    "graph int tensors": (lambda d, p: nw.graph((backend.current().tensor([0, 2], dtype="int32"),
                                                  backend.current().tensor([1, 0], dtype="int32")), idtype=d),
                          ([0, 2], [1, 0])),
    "graph edge list": (lambda d, p: nw.graph([(0, 1), (2, 0)], idtype=d), ([0, 2], [1, 0])),
    "graph empty": (lambda d, p: nw.graph([], num_nodes=2, idtype=d), ([], [])),
    "graph csr": (lambda d, p: nw.graph(("csr", ([0, 1, 1, 2], [1, 0])), idtype=d), ([0, 2], [1, 0])),
    "graph scipy": (lambda d, p: nw.graph(sp.coo_matrix(([1, 1], ([0, 2], [1, 0])), shape=(3, 3)), idtype=d),
                    ([0, 2], [1, 0])),
    "from_scipy": (lambda d, p: nw.from_scipy(sp.coo_matrix(([1, 1], ([0, 2], [1, 0])), shape=(3, 3)),
                                              idtype=d), ([0, 2], [1, 0])),
    "from_networkx": (lambda d, p: nw.from_networkx(nx.DiGraph([(0, 1), (2, 0)]), idtype=d), ([0, 2], [1, 0])),
    "graph networkx": (lambda d, p: nw.graph(nx.DiGraph([(0, 1), (2, 0)]), idtype=d), ([0, 2], [1, 0])),
    "read_edge_list": (lambda d, p: nw.read_edge_list(_edge_file(p), idtype=d), ([0, 2], [1, 0])),
    "heterograph": (lambda d, p: nw.heterograph({("a", "r", "b"): [(0, 1), (2, 0)]}, idtype=d), ([0, 2], [1, 0])),
    "create_block": (lambda d, p: nw.create_block([(0, 1), (2, 0)], idtype=d), ([0, 2], [1, 0])),
    "rand_graph": (lambda d, p: nw.rand_graph(5, 7, seed=0, idtype=d), None),
    "rmat_graph": (lambda d, p: nw.rmat_graph(8, 9, seed=0, idtype=d), None),
    "sbm_graph": (lambda d, p: nw.sbm_graph([3, 3], [[1.0, 0.0], [0.0, 1.0]], seed=0, idtype=d), None),
    "astype from int32": (lambda d, p: nw.graph([(0, 1), (2, 0)], idtype="int32").astype(d), ([0, 2], [1, 0])),
    "astype from int64": (lambda d, p: nw.graph([(0, 1), (2, 0)], idtype="int64").astype(d), ([0, 2], [1, 0])),
    "heterograph astype": (lambda d, p: nw.heterograph({("a", "r", "b"): [(0, 1), (2, 0)],
                                                        ("b", "s", "a"): ([1], [2])}).astype(d), ([0, 2], [1, 0])),
    "block astype": (lambda d, p: nw.create_block([(0, 1), (2, 0)], idtype="int32").astype(d), ([0, 2], [1, 0])),
}


def _check(B, g, name, expected_edges, etype=None):
    assert g.idtype == B.dtype_from_name(name)
    if B.name == "pytorch":
        assert isinstance(g.idtype, torch.dtype)  # as DGL: g.idtype is the framework's dtype
    for t in g.edges(etype=etype):
        assert backend.of(t) is B and B.dtype_name(t) == name
    if expected_edges is not None:
        u, v = g.edges(etype=etype)
        assert (B.to_numpy(u).tolist(), B.to_numpy(v).tolist()) == expected_edges


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("name,spelling", CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_every_spelling_at_every_entry_point(B, tmp_path, entry, name, spelling):
    make, expected = ENTRY_POINTS[entry]
    d = _graph_idtype(name) if isinstance(spelling, str) and spelling == "g.idtype" else spelling
    g = make(d, tmp_path)
    _check(B, g, name, expected, etype=g.canonical_etypes[0])


BAD = ["int16", "float32", "torch.int32", "", "int", np.float64, np.dtype("uint32"), np.int8,
       torch.float32, torch.int16, nc.float32, nc.int8, int, float, object(), 32, True]


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("bad", BAD, ids=[repr(b) for b in BAD])
def test_unknown_idtypes_raise(B, tmp_path, entry, bad):
    make, _ = ENTRY_POINTS[entry]
    with pytest.raises(TypeError, match=r"idtype must be int32 or int64, as a backend dtype \(nodeweave\.core"
                                        r"\.int32/int64, torch\.int32/int64\), a NumPy dtype \(np\.int32, "
                                        r"np\.dtype\('int64'\)\) or a string \('int32', 'int64'\); got "):
        make(bad, tmp_path)


def test_astype_needs_an_idtype(B):
    with pytest.raises(TypeError, match="astype: idtype must be given"):
        nw.graph([(0, 1)]).astype(None)


def test_int_and_long(B):
    g = nw.graph([(0, 1), (2, 0)])
    _check(B, g.int(), "int32", ([0, 2], [1, 0]))
    _check(B, g.int().long(), "int64", ([0, 2], [1, 0]))
    assert g.long() is g and g.int().int().idtype == B.dtype_from_name("int32")


def test_idtype_round_trips_across_backends():
    """A graph's idtype from one backend is accepted by the other (a script may switch)."""
    for first, second in (("native", "pytorch"), ("pytorch", "native")):
        for name in ("int32", "int64"):
            nw.set_backend(first)
            d = nw.graph([(0, 1)], idtype=name).idtype
            B = nw.set_backend(second)
            g = nw.graph([(0, 1)], idtype=d)
            assert g.idtype == B.dtype_from_name(name) and B.dtype_name(g.edges()[0]) == name
            assert nw.graph([(0, 1)]).astype(d).idtype == B.dtype_from_name(name)


def test_pytorch_idtype_is_a_torch_dtype():
    nw.set_backend("pytorch")
    g = nw.graph(([0, 1], [1, 2]))
    assert g.idtype is torch.int64 and g.int().idtype is torch.int32
    assert nw.graph((torch.tensor([0], dtype=torch.int32), torch.tensor([1], dtype=torch.int32))).idtype is torch.int32


@pytest.mark.parametrize("spelling,name", [(np.float32, "float32"), (np.int32, "int32"), (np.float64, "float64"),
                                           (np.dtype("int64"), "int64"), ("float16", "float16"),
                                           (torch.float64, "float64"), (nc.bfloat16, "bfloat16")])
def test_native_tensor_dtype_spellings(spelling, name):
    """Feature dtype arguments of the native engine take NumPy scalar types too (np.float32)."""
    assert nc.tensor([1, 2], dtype=spelling).dtype == getattr(nc, name)
    assert nc.zeros(3, dtype=spelling).dtype == getattr(nc, name)
    assert nc.ones(2).to(spelling).dtype == getattr(nc, name)
