"""nw.add_nodes / add_edges / remove_nodes / remove_edges (DGL's functional forms): the result equals
the in-place method applied to a copy, structure and features, on homogeneous graphs and
heterographs, both backends; the argument graph keeps its structure and features; bad input raises
as the methods do."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
from conftest import np_of


def _hetero(T):
    g = nw.heterograph({("u", "follows", "u"): ([0, 1, 2], [1, 2, 0]), ("u", "plays", "game"): ([0, 2], [1, 0])})
    g.nodes["u"].data["h"] = T.from_numpy(np.arange(6, dtype=np.float32).reshape(3, 2))
    g.edges["plays"].data["w"] = T.from_numpy(np.array([1.0, 2.0], np.float32))
    return g


def _snapshot(g):
    out = {}
    for ct in g.canonical_etypes:
        s, d = g.edges(etype=ct)
        out[ct] = (np_of(s).tolist(), np_of(d).tolist(), {k: np_of(v).tolist() for k, v in g.edges[ct].data.items()})
    for nt in g.ntypes:
        out[nt] = (g.num_nodes(nt), {k: np_of(v).tolist() for k, v in g.nodes[nt].data.items()})
    return out


EDITS = {
    "add_nodes": (lambda g, T: nw.add_nodes(g, 2, {"h": T.from_numpy(np.ones((2, 2), np.float32))}, ntype="u"),
                  lambda g, T: g.add_nodes(2, {"h": T.from_numpy(np.ones((2, 2), np.float32))}, ntype="u")),
    "add_edges": (lambda g, T: nw.add_edges(g, [1, 4], [0, 1], {"w": T.from_numpy(np.array([5.0, 6.0], np.float32))},
                                            etype="plays"),
                  lambda g, T: g.add_edges([1, 4], [0, 1], {"w": T.from_numpy(np.array([5.0, 6.0], np.float32))},
                                           etype="plays")),
    "remove_edges": (lambda g, T: nw.remove_edges(g, [0], etype="plays", store_ids=True),
                     lambda g, T: g.remove_edges([0], etype="plays", store_ids=True)),
    "remove_nodes": (lambda g, T: nw.remove_nodes(g, [1], ntype="u"),
                     lambda g, T: g.remove_nodes([1], ntype="u")),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_copy_equals_in_place_and_leaves_the_argument(backend_name, edit):
    T = nwb.current()
    functional, in_place = EDITS[edit]
    g = _hetero(T)
    before = _snapshot(g)
    got = functional(g, T)
    assert got is not g
    assert _snapshot(g) == before
    want = _hetero(T)
    assert in_place(want, T) is None
    assert _snapshot(got) == _snapshot(want)


def test_homogeneous_and_bad_input(backend_name):
    g = nw.graph(([0, 1], [1, 2]))
    h = nw.add_edges(g, [2], [0])
    assert np_of(h.edges()[0]).tolist() == [0, 1, 2] and g.num_edges() == 2
    assert nw.remove_edges(h, [0, 2]).num_edges() == 1 and h.num_edges() == 3
    with pytest.raises(nw.NodeweaveError):
        nw.remove_nodes(g, [7])
    with pytest.raises(nw.NodeweaveError):
        nw.add_nodes(g, -1)
    assert g.num_nodes() == 3
