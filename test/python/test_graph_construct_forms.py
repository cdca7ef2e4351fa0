"""The forms edges may take (DGL's conventions) in nw.graph, nw.heterograph values and
nw.create_block, the node counts that go with them and the row_sorted / col_sorted hints, on both
backends. Built edges are compared with the expected id arrays written out by hand or computed with
NumPy from the input."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.backend as backend
import nodeweave.core as nc


@pytest.fixture(params=["native", "pytorch"])
def B(request):
    """The active backend module (the autouse fixture in conftest.py resets it to native)."""
    return nw.set_backend(request.param)


def _np(B, t) -> np.ndarray:
    assert backend.of(t) is B, "graph queries hand out the active backend's tensors"
    return B.to_numpy(t)


def _edges(B, g, etype=None) -> tuple[list, list]:
    u, v = g.edges(etype=etype)
    return _np(B, u).tolist(), _np(B, v).tolist()


def _t(B, values, dtype="int64"):
    return B.tensor(values, dtype=dtype)


# ----------------------------------------------------------------------------- the regression


def test_two_pairs_are_two_edges(B):
    """Issue 13: [(0, 1), (2, 3)] was read as (src, dst) = ([0, 1], [2, 3])."""
    g = nw.graph([(0, 1), (2, 3)])
    assert _edges(B, g) == ([0, 2], [1, 3])
    assert g.num_nodes() == 4
    assert bool(g.has_edges_between(0, 1)) and bool(g.has_edges_between(2, 3))
    assert not bool(g.has_edges_between(0, 2)) and not bool(g.has_edges_between(1, 3))


# ----------------------------------------------------------------------------- accepted forms

# (name, make(B) -> data, expected src, expected dst, expected num_nodes)
FORMS = [
    ("list of 2 tuples", lambda B: [(0, 1), (2, 3)], [0, 2], [1, 3], 4),
    ("list of 2 lists", lambda B: [[0, 1], [2, 3]], [0, 2], [1, 3], 4),
    ("list of 3 tuples", lambda B: [(0, 1), (2, 3), (4, 5)], [0, 2, 4], [1, 3, 5], 6),
    ("list of 1 pair", lambda B: [(3, 1)], [3], [1], 4),
    ("empty list", lambda B: [], [], [], 0),
    ("pairs of 0-d tensors", lambda B: [(_t(B, 4), _t(B, 0)), (_t(B, 1, "int32"), 2)], [4, 1], [0, 2], 5),
    ("pairs of numpy ints", lambda B: [(np.int32(2), np.uint8(5)), (np.int64(0), 1)], [2, 0], [5, 1], 6),
    ("3 length-2 arrays", lambda B: list(np.array([[5, 1], [2, 2], [0, 3]])), [5, 2, 0], [1, 2, 3], 6),
    ("3 length-2 tensors", lambda B: [_t(B, [5, 1]), _t(B, [2, 2]), _t(B, [0, 3])], [5, 2, 0], [1, 2, 3], 6),
    ("self loops and multi-edges", lambda B: [(1, 1), (1, 1), (0, 1)], [1, 1, 0], [1, 1, 1], 2),
    ("tuple of lists", lambda B: ([0, 1], [2, 3]), [0, 1], [2, 3], 4),
    ("tuple of tuples", lambda B: ((0, 1), (2, 3)), [0, 1], [2, 3], 4),
    ("tuple of 3-tuples", lambda B: ((0, 1, 4), (2, 3, 0)), [0, 1, 4], [2, 3, 0], 5),
    ("tuple of ranges", lambda B: (range(3), range(1, 4)), [0, 1, 2], [1, 2, 3], 4),
    ("tuple of empty lists", lambda B: ([], []), [], [], 0),
    ("tuple of uint8 arrays", lambda B: (np.array([2, 0], np.uint8), np.array([1, 1], np.uint8)), [2, 0], [1, 1], 3),
    ("tuple of int64 tensors", lambda B: (_t(B, [0, 3]), _t(B, [1, 1])), [0, 3], [1, 1], 4),
    ("tuple of int32 tensors", lambda B: (_t(B, [0, 3], "int32"), _t(B, [1, 1], "int32")), [0, 3], [1, 1], 4),
    ("tuple of other backend's tensors", lambda B: (nc.tensor([0, 2]), torch.tensor([1, 0])), [0, 2], [1, 0], 3),
    ("coo tuple", lambda B: ("coo", ([0, 1], [2, 3])), [0, 1], [2, 3], 4),
    ("coo list payload is (src, dst)", lambda B: ("coo", [[0, 1], [2, 3]]), [0, 1], [2, 3], 4),
    ("csr", lambda B: ("csr", ([0, 2, 3, 3], [1, 2, 0], [])), [0, 0, 1], [1, 2, 0], 3),
    ("csr tensors, list payload", lambda B: ("csr", [_t(B, [0, 2, 3, 3]), _t(B, [1, 2, 0])]), [0, 0, 1], [1, 2, 0], 3),
    ("csr with eids", lambda B: ("CSR", ([0, 2, 3, 3], [1, 2, 0], [2, 0, 1])), [0, 1, 0], [2, 0, 1], 3),
    ("csc", lambda B: ("csc", ([0, 1, 2, 3], [1, 0, 0], [])), [1, 0, 0], [0, 1, 2], 3),
]


@pytest.mark.parametrize("name,make,src,dst,n", FORMS, ids=[f[0] for f in FORMS])
def test_graph_forms(B, name, make, src, dst, n):
    g = nw.graph(make(B))
    assert _edges(B, g) == (src, dst)
    assert g.num_nodes() == n
    big = nw.graph(make(B), num_nodes=n + 3)
    assert _edges(B, big) == (src, dst) and big.num_nodes() == n + 3


def test_random_edge_lists_match_their_columns(B):
    """A list of pairs, its transpose as a (src, dst) tuple and NumPy's columns agree."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        m = int(rng.integers(0, 12))
        pairs = [tuple(int(x) for x in rng.integers(0, 9, 2)) for _ in range(m)]
        arr = np.array(pairs, dtype=np.int64).reshape(m, 2)
        g = nw.graph(pairs)
        assert _edges(B, g) == (arr[:, 0].tolist(), arr[:, 1].tolist())
        assert g.num_nodes() == (int(arr.max()) + 1 if m else 0)
        h = nw.graph((arr[:, 0], arr[:, 1]))
        assert _edges(B, h) == _edges(B, g)


def test_idtype_follows_the_ids(B):
    """As DGL: int32 tensors (as src and dst, or as every pair) give int32 graphs; lists and NumPy
    arrays give int64."""
    assert nw.graph((_t(B, [0], "int32"), _t(B, [1], "int32"))).idtype == B.dtype_from_name("int32")
    assert nw.graph((np.array([0], np.int32), np.array([1], np.int32))).idtype == B.dtype_from_name("int64")
    assert nw.graph([(0, 1)]).idtype == B.dtype_from_name("int64")
    assert nw.graph([]).idtype == B.dtype_from_name("int64")
    pairs32 = [_t(B, [0, 1], "int32"), _t(B, [2, 1], "int32"), _t(B, [1, 0], "int32")]
    assert nw.graph(pairs32).idtype == B.dtype_from_name("int32")
    assert nw.graph(pairs32[:2] + [_t(B, [1, 0])]).idtype == B.dtype_from_name("int64")
    assert nw.graph(("csr", (_t(B, [0, 1], "int32"), _t(B, [0], "int32")))).idtype == B.dtype_from_name("int32")
    assert nw.graph((_t(B, [0], "int32"), _t(B, [1], "int32")), idtype="int64").idtype == B.dtype_from_name("int64")


# ----------------------------------------------------------------------------- rejected forms

_FORMS_MSG = r"Accepted forms: a \(src, dst\) tuple"

BAD = [
    ("two python lists of 3", lambda B: [[0, 1, 2], [1, 2, 0]], ValueError, r"item 0 holds 3 values.*" + _FORMS_MSG),
    ("ragged pairs", lambda B: [(0, 1), (2, 3, 4)], ValueError, "item 1 holds 3 values"),
    ("empty pair", lambda B: [(0, 1), ()], ValueError, "item 1 holds 0 values"),
    ("flat list of ints", lambda B: [0, 1, 2], ValueError, "item 0 is int 0"),
    ("list of strings", lambda B: ["01", "12"], ValueError, "item 0 is str '01'"),
    ("list of [src, dst] tensors", lambda B: [_t(B, [0, 1]), _t(B, [1, 2])], ValueError, "ambiguous.*" + _FORMS_MSG),
    ("list of [src, dst] long tensors", lambda B: [_t(B, [0, 1, 2]), _t(B, [1, 2, 0])], ValueError, "ambiguous"),
    ("list of [src, dst] arrays", lambda B: [np.array([0, 1]), np.array([1, 2])], ValueError, "ambiguous"),
    ("list of 3 long tensors", lambda B: [_t(B, [0, 1, 2])] * 3, ValueError, "item 0 holds 3 values"),
    ("tuple of 3 pairs", lambda B: ((0, 1), (2, 3), (4, 5)), ValueError, r"tuple is read as \(src, dst\).*got 3 items"),
    ("empty tuple", lambda B: (), ValueError, r"tuple is read as \(src, dst\).*got 0 items"),
    ("1-tuple", lambda B: ([0, 1],), ValueError, "got 1 items"),
    ("2-D array", lambda B: np.array([[0, 1], [1, 2]]), TypeError, r"edge_index\[0\], edge_index\[1\]"),
    ("2-D tensor", lambda B: _t(B, [[0, 1], [1, 2]]), TypeError, r"edge_index\[0\], edge_index\[1\]"),
    ("1-D tensor", lambda B: _t(B, [0, 1]), TypeError, "data must be"),
    ("set of pairs", lambda B: {(0, 1)}, TypeError, "data must be.*got set"),
    ("string", lambda B: "0 1", TypeError, "data must be"),
    ("negative id in a pair", lambda B: [(0, 1), (2, -3)], ValueError, r"edge 1 = \(2, -3\) has a negative node id"),
    ("float in a pair", lambda B: [(0, 1), (2, 3.5)], TypeError, "edge list must hold integer node ids"),
    ("bool pair", lambda B: [(True, False)], TypeError, "integer node ids"),
    ("string pair", lambda B: [("a", "b")], TypeError, "integer node ids"),
    ("float tensor pairs", lambda B: [B.tensor([0.0, 1.0])] * 3, TypeError, "integer node ids"),
    ("pair lengths differ", lambda B: ([0, 1, 2], [1, 2]), ValueError, "same length, got 3 and 2"),
    ("coo with 3 arrays", lambda B: ("coo", ([0], [1], [2])), ValueError, r"expected \('coo', \(src, dst\)\), got 3"),
    ("coo payload not a sequence", lambda B: ("coo", 5), TypeError, r"expected \('coo', \(src, dst\)\)"),
    ("unknown format", lambda B: ("bsr", ([0], [1])), ValueError, "unknown sparse format 'bsr'"),
]


@pytest.mark.parametrize("name,make,exc,msg", BAD, ids=[b[0] for b in BAD])
def test_graph_rejects(B, name, make, exc, msg):
    with pytest.raises(exc, match=msg):
        nw.graph(make(B))


@pytest.mark.parametrize("name,make,exc,msg", BAD[:12], ids=[b[0] for b in BAD[:12]])
def test_heterograph_and_create_block_reject_the_same(B, name, make, exc, msg):
    with pytest.raises(exc, match=r"data_dict\[\('a', 'r', 'b'\)\]: .*" + msg):
        nw.heterograph({("a", "r", "b"): make(B)})
    with pytest.raises(exc, match=r"create_block: data_dict\[\('_N', '_E', '_N'\)\]: .*" + msg):
        nw.create_block(make(B))


# ----------------------------------------------------------------------------- num_nodes


@pytest.mark.parametrize("count", ["int", "numpy", "tensor", "other tensor"])
def test_num_nodes_spellings(B, count):
    make = {"int": lambda: 7, "numpy": lambda: np.int32(7), "tensor": lambda: _t(B, [2, 6]).max() + 1,
            "other tensor": lambda: torch.tensor(7) if B.name == "native" else nc.tensor(7)}[count]
    for data in ([(0, 1)], ([0], [1]), ("csr", ([0, 1], [1]))):
        g = nw.graph(data, num_nodes=make())
        assert g.num_nodes() == 7 and _edges(B, g) == ([0], [1])
    h = nw.heterograph({("a", "r", "b"): [(0, 1)]}, num_nodes_dict={"a": make(), "c": make()})
    assert (h.num_nodes("a"), h.num_nodes("b"), h.num_nodes("c")) == (7, 2, 7)
    blk = nw.create_block([(0, 1)], num_src_nodes=make(), num_dst_nodes=make())
    assert (blk.num_src_nodes(), blk.num_dst_nodes()) == (7, 7)


@pytest.mark.parametrize("make,exc,msg", [
    (lambda B: 2.0, TypeError, "num_nodes must be an int, got float"),
    (lambda B: True, TypeError, "num_nodes must be an int, got bool"),
    (lambda B: "3", TypeError, "num_nodes must be an int"),
    (lambda B: -1, ValueError, "num_nodes must be non-negative"),
    (lambda B: _t(B, [4]), TypeError, r"num_nodes must be an int, got a tensor of shape \(1,\)"),
    (lambda B: B.tensor(4.0), TypeError, r"num_nodes must be an int, got a tensor of shape \(\)"),
    (lambda B: 1, ValueError, "num_nodes=1 is too small: the edges use node id 3"),
])
def test_num_nodes_rejects(B, make, exc, msg):
    with pytest.raises(exc, match=msg):
        nw.graph([(0, 3)], num_nodes=make(B))


def test_empty_graphs(B):
    for g in (nw.graph([]), nw.graph(([], [])), nw.graph(("csr", ([0], [])))):
        assert g.num_nodes() == 0 and g.num_edges() == 0 and _edges(B, g) == ([], [])
    g = nw.graph([], num_nodes=3)
    assert g.num_nodes() == 3 and _np(B, g.in_degrees()).tolist() == [0, 0, 0]


# ----------------------------------------------------------------------------- heterograph


def test_heterograph_value_forms(B):
    g = nw.heterograph({
        ("user", "follows", "user"): [(0, 1), (2, 3)],
        ("user", "plays", "game"): (_t(B, [0, 3]), _t(B, [1, 0])),
        ("game", "rev", "user"): ("csr", ([0, 1, 2], [3, 0], [])),
        ("game", "csc", "user"): ("csc", ([0, 0, 2, 2, 2], [1, 0], [])),
        ("dev", "makes", "game"): [],
    })
    assert _edges(B, g, "follows") == ([0, 2], [1, 3])
    assert _edges(B, g, "plays") == ([0, 3], [1, 0])
    assert _edges(B, g, "rev") == ([0, 1], [3, 0])
    assert _edges(B, g, "csc") == ([1, 0], [1, 1])
    assert _edges(B, g, "makes") == ([], [])
    assert {nt: g.num_nodes(nt) for nt in g.ntypes} == {"dev": 0, "game": 2, "user": 4}


def test_heterograph_num_nodes_dict(B):
    """DGL's docs: a type left out of num_nodes_dict gets its largest id plus one; a value below the
    largest id raises."""
    data = {("a", "r", "b"): [(0, 4), (2, 1)], ("b", "s", "c"): ([1], [0])}
    g = nw.heterograph(data, num_nodes_dict={"a": 5})
    assert (g.num_nodes("a"), g.num_nodes("b"), g.num_nodes("c")) == (5, 5, 1)
    with pytest.raises(ValueError, match=r"num_nodes_dict\['b'\]=4 is too small"):
        nw.heterograph(data, num_nodes_dict={"b": 4})
    with pytest.raises(TypeError, match="num_nodes_dict must be a dict"):
        nw.heterograph(data, num_nodes_dict=[("a", 5)])
    with pytest.raises(TypeError, match=r"num_nodes_dict\['a'\] must be an int"):
        nw.heterograph(data, num_nodes_dict={"a": 5.0})


# ----------------------------------------------------------------------------- create_block


def test_create_block_forms(B):
    cases = [
        ([(0, 1), (2, 0)], [0, 2], [1, 0], 3, 2),
        (([0, 1], [2, 0]), [0, 1], [2, 0], 2, 3),
        (("csr", ([0, 2, 2], [0, 1], [])), [0, 0], [0, 1], 2, 2),  # rows are sources
        (("csc", ([0, 2, 2], [0, 1], [])), [0, 1], [0, 0], 2, 2),  # rows are destinations
        ([], [], [], 0, 0),
    ]
    for data, src, dst, ns, nd in cases:
        blk = nw.create_block(data)
        assert _edges(B, blk) == (src, dst)
        assert (blk.num_src_nodes(), blk.num_dst_nodes()) == (ns, nd)
    blk = nw.create_block({("a", "r", "b"): [(0, 1), (2, 0)], ("a", "s", "b"): ([1], [3])},
                          num_src_nodes={"a": 4})
    assert _edges(B, blk, "r") == ([0, 2], [1, 0]) and _edges(B, blk, "s") == ([1], [3])
    assert (blk.num_src_nodes("a"), blk.num_dst_nodes("b")) == (4, 4)
    with pytest.raises(ValueError, match="num_src_nodes=2 for node type '_N' is too small"):
        nw.create_block(([0, 3], [0, 1]), num_src_nodes=2, num_dst_nodes=2)
    with pytest.raises(TypeError, match="num_dst_nodes must be an int"):
        nw.create_block(([0], [0]), num_dst_nodes=1.5)


# ----------------------------------------------------------------------------- sortedness hints


def _by_csr_and_csc(B, g) -> tuple[list, list]:
    """Every edge (u, v, eid), read back through the out-edge CSR and the in-edge CSC."""
    n = g.num_nodes()
    outs = [_np(B, t).tolist() for t in g.out_edges(np.arange(n), form="all")]
    ins = [_np(B, t).tolist() for t in g.in_edges(np.arange(n), form="all")]
    return sorted(zip(*outs)), sorted(zip(*ins))


@pytest.mark.parametrize("sorted_input", [True, False])
def test_sorted_hints_never_change_the_graph(B, rng, sorted_input):
    """row_sorted / col_sorted are DGL's hints for COO input; a hint that is false must not give a
    wrong graph (nodeweave ignores them), so the graph built with them equals the one without."""
    src = rng.integers(0, 20, 60)
    dst = rng.integers(0, 20, 60)
    if sorted_input:
        order = np.lexsort((dst, src))
        src, dst = src[order], dst[order]
    expected = sorted(zip(src.tolist(), dst.tolist(), range(60)))
    for rs, cs in ((True, True), (True, False), (False, True), (np.bool_(True), False)):
        g = nw.graph((src, dst), num_nodes=20, row_sorted=rs, col_sorted=cs)
        assert _edges(B, g) == (src.tolist(), dst.tolist())
        by_csr, by_csc = _by_csr_and_csc(B, g)
        assert by_csr == expected and by_csc == expected
    for flag in ("row_sorted", "col_sorted"):
        with pytest.raises(TypeError, match=f"{flag} must be True or False, got 1"):
            nw.graph((src, dst), **{flag: 1})
