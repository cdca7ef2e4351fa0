"""Building graphs: nw.graph / nw.heterograph input forms and validation, SciPy and networkx
conversion, edge-list files."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.graph import HeteroGraph


def _uv(g, etype=None):
    u, v = g.edges(etype=etype)
    return u.numpy().tolist(), v.numpy().tolist()


# ----------------------------------------------------------------------------- nw.graph


@pytest.mark.parametrize("kind", ["list", "int8", "uint16", "int32", "int64", "uint64", "tensor64", "tensor32"])
def test_graph_from_id_containers(kind):
    src, dst = [0, 2, 1, 3], [1, 1, 3, 0]
    if kind == "list":
        a, b = src, dst
    elif kind.startswith("tensor"):
        dt = nc.int64 if kind == "tensor64" else nc.int32
        a, b = nc.tensor(src, dtype=dt), nc.tensor(dst, dtype=dt)
    else:
        a, b = np.array(src, dtype=kind), np.array(dst, dtype=kind)
    g = nw.graph((a, b))
    assert _uv(g) == (src, dst)
    assert g.num_nodes() == 4
    assert g.idtype == (nc.int32 if kind == "tensor32" else nc.int64)


def test_graph_num_nodes_and_idtype():
    g = nw.graph(([0, 1], [1, 2]), num_nodes=10, idtype="int32")
    assert g.num_nodes() == 10 and g.idtype == nc.int32
    assert nw.graph(([0], [1]), idtype=nc.int32).idtype == nc.int32
    assert nw.graph(([0], [1]), idtype=np.int32).idtype == nc.int32
    assert nw.graph(([], [])).num_nodes() == 0
    assert nw.graph(([], []), num_nodes=5).num_edges() == 0
    assert nw.graph((np.array([], np.int64), np.array([], np.int64)), num_nodes=3).in_degrees().tolist() == [0, 0, 0]
    assert nw.graph(([0], [1]), device="cpu").device == "cpu"
    # A list is a list of (u, v) edges (as in DGL), not (src, dst): edges 0->3 and 1->2.
    assert [t.tolist() for t in nw.graph([[0, 3], [1, 2]]).edges()] == [[0, 1], [3, 2]]


@pytest.mark.parametrize("data,kwargs,exc,msg", [
    (([0, 5], [1, 2]), {"num_nodes": 3}, ValueError, "num_nodes=3 is too small: the edges use node id 5"),
    (([0, 1, 2], [1, 2]), {}, ValueError, "same length, got 3 and 2"),
    (([0.0, 1.0], [1, 2]), {}, TypeError, "src must hold integer node ids, got dtype float64"),
    (([0, 1], np.array([1, 2], np.float32)), {}, TypeError, "dst must hold integer node ids"),
    ((nc.tensor([0.0]), nc.tensor([1])), {}, TypeError, "src must hold integer"),
    (([0, -1], [1, 2]), {}, ValueError, r"src\[1\] = -1 is negative"),
    (([True, False], [1, 0]), {}, TypeError, "dtype bool"),
    ((["a", "b"], [1, 0]), {}, TypeError, "src must hold integer"),
    (([[0, 1]], [[1, 0]]), {}, ValueError, "one-dimensional"),
    (([0], [1]), {"num_nodes": -1}, ValueError, "num_nodes must be non-negative"),
    (([0], [1]), {"num_nodes": 2.0}, TypeError, "num_nodes must be an int"),
    (([0], [1]), {"idtype": "int16"}, TypeError, "idtype"),
    (([0], [1]), {"device": "tpu"}, ValueError, "device"),
    (([0], [1]), {"formats": "dense"}, ValueError, "unknown format 'dense'"),
    (([0], [1]), {"nodes": 3}, TypeError, "unexpected keyword"),
    ((np.array([2 ** 63 + 5], np.uint64), [1]), {}, ValueError, "int64 range"),
    ("edges", {}, TypeError, "data must be"),
    ((0, 1, 2), {}, ValueError, "pair"),
    (("bsr", ([0], [1])), {}, ValueError, "unknown sparse format 'bsr'"),
    (("csr", ([0, 1, 3], [1, 0])), {}, ValueError, r"indptr\[-1\] must equal len\(indices\)"),
    (("csr", ([0, 2, 1, 2], [1, 0])), {}, ValueError, "non-decreasing"),
    (("csr", ([0, 1, 2], [1, 0], [0])), {}, ValueError, "eids must have one id per entry"),
    (("csr", ([0, 1, 2], [1, 0])), {"num_nodes": 1}, ValueError, "num_nodes=1 is too small"),
])
def test_graph_bad_inputs(data, kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        nw.graph(data, **kwargs)


def test_int32_overflow_is_refused():
    with pytest.raises(ValueError, match="int32"):
        nw.graph(([0], [1]), num_nodes=2 ** 31 + 1, idtype="int32")


def test_sparse_forms_agree():
    src, dst = [0, 0, 1, 3, 3], [1, 2, 2, 0, 3]
    coo = nw.graph(("coo", (src, dst)))
    csr = nw.graph(("csr", ([0, 2, 3, 3, 5], [1, 2, 2, 0, 3], [0, 1, 2, 3, 4])))
    csr_noeid = nw.graph(("csr", ([0, 2, 3, 3, 5], [1, 2, 2, 0, 3])))
    assert _uv(coo) == _uv(csr) == _uv(csr_noeid) == (src, dst)
    # CSC: rows are destinations; edge ids given explicitly
    csc = nw.graph(("csc", ([0, 1, 2, 4, 5], [3, 0, 0, 1, 3], [3, 0, 1, 2, 4])))
    assert _uv(csc) == (src, dst)
    # explicit edge ids permute the edges
    perm = nw.graph(("csr", ([0, 2, 3, 3, 5], [1, 2, 2, 0, 3], [4, 3, 2, 1, 0])))
    assert _uv(perm) == (src[::-1], dst[::-1])
    # more nodes than CSR rows: padded with empty rows
    big = nw.graph(("csr", ([0, 1], [1])), num_nodes=4)
    assert big.num_nodes() == 4 and big.out_degrees().tolist() == [1, 0, 0, 0]


# ----------------------------------------------------------------------------- nw.heterograph


def test_heterograph_construction():
    g = nw.heterograph({
        ("user", "plays", "game"): (nc.tensor([0, 1]), nc.tensor([0, 3])),
        ("user", "follows", "user"): ([0], [2]),
    }, num_nodes_dict={"game": 6, "dev": 2})
    assert g.ntypes == ["dev", "game", "user"]
    assert g.canonical_etypes == [("user", "follows", "user"), ("user", "plays", "game")]
    assert g.num_nodes("game") == 6 and g.num_nodes("user") == 3 and g.num_nodes("dev") == 2
    assert _uv(g, "plays") == ([0, 1], [0, 3])
    h = nw.heterograph({"follows": ([0, 1], [1, 2])})
    assert h.canonical_etypes == [("_N", "follows", "_N")] and h.is_homogeneous
    k = nw.heterograph({("u", "r", "u"): ([0], [1]), "s": ([1], [0])})
    assert k.canonical_etypes == [("u", "r", "u"), ("u", "s", "u")]
    c = nw.heterograph({("a", "x", "b"): ("csr", ([0, 1, 1], [2]))})
    assert c.num_nodes("a") == 2 and c.num_nodes("b") == 3
    assert nw.heterograph({("a", "x", "b"): ([0], [0])}, idtype="int32").idtype == nc.int32


@pytest.mark.parametrize("data,kw,exc,msg", [
    ({}, {}, ValueError, "non-empty dict"),
    ({("a", "b"): ([0], [0])}, {}, ValueError, "tuples"),
    ({("a", "r", "b"): ([0, 3], [1, 1])}, {"num_nodes_dict": {"a": 2}}, ValueError,
     r"num_nodes_dict\['a'\]=2 is too small"),
    ({("a", "r", "b"): ([0], [1, 2])}, {}, ValueError, "same length"),
    ({("a", "r", "b"): ([0.5], [1])}, {}, TypeError, "integer"),
    ({("a", "r", "b"): ([0], [1])}, {"num_nodes_dict": {"a": "2"}}, TypeError, "must be an int"),
])
def test_heterograph_bad_inputs(data, kw, exc, msg):
    with pytest.raises(exc, match=msg):
        nw.heterograph(data, **kw)


def test_create_validates_the_contract():
    from nodeweave import _C

    r = _C.RelationGraph.from_coo(2, 3, np.array([0, 1]), np.array([2, 0]))
    g = HeteroGraph._create({"u": 2, "i": 3}, {("u", "buys", "i"): r},
                            node_data={"u": {"x": nc.ones(2)}}, edge_data={("u", "buys", "i"): {"w": nc.zeros(2)}})
    assert g.ntypes == ["u", "i"] and g.nodes["u"].data["x"].tolist() == [1.0, 1.0]
    assert g.edata["w"].tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="2 source and 3 destination nodes"):
        HeteroGraph._create({"u": 3, "i": 3}, {("u", "buys", "i"): r})
    with pytest.raises(ValueError, match="node type 'x' is not among"):
        HeteroGraph._create({"u": 2}, {("u", "buys", "x"): r})
    with pytest.raises(ValueError, match=r"nodes\['u'\].data\['x'\]: expected 2 rows|ndata\['x'\]"):
        HeteroGraph._create({"u": 2, "i": 3}, {("u", "buys", "i"): r}, node_data={"u": {"x": nc.ones(5)}})
    r32 = _C.RelationGraph.from_coo(2, 2, np.array([0]), np.array([1]), idtype="int32")
    with pytest.raises(ValueError, match="share one idtype"):
        HeteroGraph._create({"u": 2, "i": 3}, {("u", "buys", "i"): r, ("u", "f", "u"): r32})
    with pytest.raises(ValueError, match="unknown node type"):
        HeteroGraph._create({"u": 2, "i": 3}, {("u", "buys", "i"): r}, node_data={"z": {}})
    assert HeteroGraph._create({"a": 4}, {}).num_nodes() == 4


# ----------------------------------------------------------------------------- SciPy


def test_from_scipy_orders_and_weights():
    dense = np.array([[0, 2.0, 0], [0, 0, 3.0], [1.5, 0, 0.5]])
    for fmt in ("csr", "csc", "coo"):
        m = sp.csr_matrix(dense).asformat(fmt)
        g = nw.from_scipy(m, eweight_name="w")
        coo = m.tocoo()
        assert _uv(g) == (coo.row.tolist(), coo.col.tolist())
        np.testing.assert_allclose(g.edata["w"].numpy(), coo.data)
        np.testing.assert_array_equal(g.adj(scipy_fmt="csr").toarray(), (dense != 0).astype(np.float32))
    g = nw.graph(sp.coo_matrix(([1, 1], ([0, 0], [1, 1])), shape=(2, 2)))  # duplicates stay as multi-edges
    assert g.num_edges() == 2 and g.adj(scipy_fmt="csr").toarray()[0, 1] == 2
    with pytest.raises(ValueError, match="square"):
        nw.from_scipy(sp.csr_matrix((2, 3)))
    with pytest.raises(TypeError, match="SciPy sparse"):
        nw.from_scipy(dense)
    assert nw.from_scipy(sp.csr_matrix((4, 4)), idtype="int32").idtype == nc.int32


# ----------------------------------------------------------------------------- networkx


def test_from_networkx_directed_and_undirected():
    d = nx.DiGraph()
    d.add_edge(2, 0, w=0.5)
    d.add_edge(0, 1, w=2.0)
    d.nodes[0]["x"] = [1.0, 2.0]
    d.nodes[1]["x"] = [3.0, 4.0]
    d.nodes[2]["x"] = [5.0, 6.0]
    g = nw.from_networkx(d, node_attrs=["x"], edge_attrs=["w"])
    edges = sorted(zip(*_uv(g), g.edata["w"].tolist()))
    assert edges == [(0, 1, 2.0), (2, 0, 0.5)]
    assert g.ndata["x"].tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    u = nx.Graph([(0, 1), (1, 2), (2, 2)])
    h = nw.from_networkx(u)
    assert sorted(zip(*_uv(h))) == [(0, 1), (1, 0), (1, 2), (2, 1), (2, 2)]
    labels = nx.Graph([("b", "a"), ("a", "c")])
    k = nw.from_networkx(labels)  # labels sorted: a=0, b=1, c=2
    assert sorted(zip(*_uv(k))) == [(0, 1), (0, 2), (1, 0), (2, 0)]
    m = nx.MultiDiGraph([(0, 1), (0, 1)])
    assert nw.from_networkx(m).num_edges() == 2
    with pytest.raises(ValueError, match="node 1 has no attribute 'y'"):
        d.nodes[0]["y"] = 1
        nw.from_networkx(d, node_attrs=["y"])
    with pytest.raises(ValueError, match="has no attribute 'q'"):
        nw.from_networkx(d, edge_attrs=["q"])
    with pytest.raises(TypeError):
        nw.from_networkx([(0, 1)])
    assert nw.graph(nx.path_graph(4)).num_edges() == 6


def test_to_networkx_round_trip(rng):
    g = nw.rand_graph(20, 60, seed=3)
    g.ndata["h"] = nc.tensor(rng.standard_normal((20, 2)).astype(np.float32))
    g.edata["w"] = nc.arange(60.0)
    n = nw.to_networkx(g, node_attrs=["h"], edge_attrs=["w"])
    assert isinstance(n, nx.MultiDiGraph) and n.number_of_nodes() == 20 and n.number_of_edges() == 60
    src, dst = _uv(g)
    for u, v, data in n.edges(data=True):
        e = data["id"]
        assert (src[e], dst[e]) == (u, v) and data["w"] == float(e)
    np.testing.assert_array_equal(n.nodes[3]["h"], g.ndata["h"].numpy()[3])
    back = nw.from_networkx(n, edge_attrs=["id"])
    order = np.argsort(back.edata["id"].numpy())
    b_src, b_dst = (np.array(x)[order].tolist() for x in _uv(back))
    assert (b_src, b_dst) == (src, dst)
    # A heterograph is numbered as to_homogeneous numbers it, with its types as attributes
    h = nw.to_networkx(nw.heterograph({("a", "r", "b"): ([0], [0])}))
    assert sorted(h.nodes(data="ntype")) == [(0, "a"), (1, "b")]
    assert list(h.edges(data="etype")) == [(0, 1, ("a", "r", "b"))]


# ----------------------------------------------------------------------------- edge-list files


def _write(tmp_path, name, text, mode="w"):
    p = tmp_path / name
    if mode == "wb":
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


@pytest.mark.parametrize("name,text", [
    ("e.txt", "0 1\n1\t2\n\n  2   0  \n"),
    ("e.csv", "0,1\n1, 2\n2 ,0\n"),
    ("e.tsv", "0\t1\n1\t2\n2\t0\n"),
    ("e.txt", "# edges\n0 1 # first\n1 2\r\n2 0\r\n"),
    ("e.txt", "0 1 0.5 extra\n1 2 0.1 x\n2 0 0.3 y"),
])
def test_read_edge_list_formats(tmp_path, name, text):
    g = nw.read_edge_list(_write(tmp_path, name, text))
    assert _uv(g) == ([0, 1, 2], [1, 2, 0])


def test_read_edge_list_options(tmp_path):
    p = _write(tmp_path, "e.csv", "src,dst,w\n0,1,5\n3,2,6\n")
    assert _uv(nw.read_edge_list(p, header=True)) == ([0, 3], [1, 2])
    assert _uv(nw.read_edge_list(p, header=1, src_col=2, dst_col=0, num_nodes=8)) == ([5, 6], [0, 3])
    p2 = _write(tmp_path, "e.dat", "a;b\nx;y\n0;1\n")
    assert _uv(nw.read_edge_list(p2, delimiter=";", header=2)) == ([0], [1])
    p3 = _write(tmp_path, "names.txt", "alice bob\nbob carol\ncarol alice\n% note\n")
    g, labels = nw.read_edge_list(p3, relabel=True, comments="%")
    assert labels.tolist() == ["alice", "bob", "carol"] and _uv(g) == ([0, 1, 2], [1, 2, 0])
    empty = nw.read_edge_list(_write(tmp_path, "empty.txt", "# nothing\n"), num_nodes=4)
    assert empty.num_nodes() == 4 and empty.num_edges() == 0
    bom = nw.read_edge_list(_write(tmp_path, "bom.txt", "\ufeff0 1\n".encode(), "wb"))
    assert _uv(bom) == ([0], [1])
    assert nw.read_edge_list(p, header=True, idtype="int32").idtype == nc.int32


@pytest.mark.parametrize("text,msg", [
    ("0 1\n1\n", "line 2: expected at least 2 fields separated by whitespace, got 1: '1'"),
    ("0 1\n1 x\n", "line 2: column 1 holds 'x', not an integer node id"),
    ("0 1\n\n# c\n1 -2\n", "line 4: node id -2 in column 1 is negative"),
    ("0 1.5\n", "line 1: column 1 holds '1.5'"),
    ("0 99999999999999999999\n", "line 1: node id 99999999999999999999 in column 1 is too large"),
    ("0 ²\n", "line 1: column 1 holds '²'"),
])
def test_read_edge_list_malformed(tmp_path, text, msg):
    p = _write(tmp_path, "bad.txt", text)
    with pytest.raises(ValueError, match="bad.txt, " + msg.replace("(", r"\(").replace(".", r"\.")):
        nw.read_edge_list(p)


def test_read_edge_list_bad_arguments(tmp_path):
    p = _write(tmp_path, "e.txt", "0 1\n")
    with pytest.raises(ValueError, match="line 2: the file is not UTF-8"):
        nw.read_edge_list(_write(tmp_path, "bin.txt", b"0 1\n\xff\xfe 2\n", "wb"))
    with pytest.raises(ValueError, match="header"):
        nw.read_edge_list(p, header=-1)
    with pytest.raises(ValueError, match="src_col"):
        nw.read_edge_list(p, src_col=-1)
    with pytest.raises(ValueError, match="num_nodes=1 is too small"):
        nw.read_edge_list(p, num_nodes=1)
    with pytest.raises(FileNotFoundError):
        nw.read_edge_list(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="line 1: expected at least 4 fields"):
        nw.read_edge_list(p, dst_col=3)


def test_graph_package_is_callable_and_importable():
    import importlib

    transforms = importlib.import_module("nodeweave.graph.transforms")
    import nodeweave.graph.batch as batch_mod  # the package name is not shadowed by the function

    assert callable(nw.graph) and nw.graph.transforms is transforms and batch_mod.batch is nw.batch
    g = nw.graph(([0, 1], [1, 2]), num_nodes=4)
    assert g.num_nodes() == 4 and g.num_edges() == 2
