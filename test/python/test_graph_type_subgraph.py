"""nw.node_type_subgraph / edge_type_subgraph (DGL's): the kept types and relations, edges with
their ids and order, feature tables shared with the graph (as DGL: setting a feature on either shows
in the other), batch counts kept; both backends; bad types raise naming the argument."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
from conftest import np_of


def _graph(T):
    g = nw.heterograph({("user", "follows", "user"): ([0, 1, 2], [1, 2, 0]),
                        ("user", "plays", "game"): ([0, 2, 2], [1, 0, 1]),
                        ("game", "made_by", "studio"): ([0, 1], [0, 0])},
                       num_nodes_dict={"user": 3, "game": 2, "studio": 1})
    g.nodes["user"].data["h"] = T.from_numpy(np.arange(3, dtype=np.float32))
    g.edges["plays"].data["w"] = T.from_numpy(np.array([0.5, 1.5, 2.5], np.float32))
    return g


def _edges(g, ct):
    s, d = g.edges(etype=ct)
    return np_of(s).tolist(), np_of(d).tolist()


def test_node_type_subgraph(backend_name):
    T = nwb.current()
    g = _graph(T)
    sub = nw.node_type_subgraph(g, ["game", "user"])
    assert sub.ntypes == ["game", "user"]
    assert sub.canonical_etypes == [("user", "follows", "user"), ("user", "plays", "game")]
    for ct in sub.canonical_etypes:
        assert _edges(sub, ct) == _edges(g, ct)
    assert np_of(sub.edges["plays"].data["w"]).tolist() == [0.5, 1.5, 2.5]
    sub.nodes["user"].data["h"] = T.from_numpy(np.zeros(3, np.float32))
    assert np_of(g.nodes["user"].data["h"]).tolist() == [0.0, 0.0, 0.0]
    g.edges["plays"].data["w2"] = T.from_numpy(np.ones(3, np.float32))
    assert np_of(sub.edges["plays"].data["w2"]).tolist() == [1.0, 1.0, 1.0]
    del g.edges["plays"].data["w2"]
    assert "w2" not in sub.edges["plays"].data
    only_users = nw.node_type_subgraph(g, ["user"])
    assert only_users.canonical_etypes == [("user", "follows", "user")]


def test_edge_type_subgraph(backend_name):
    T = nwb.current()
    g = _graph(T)
    sub = nw.edge_type_subgraph(g, ["plays", ("game", "made_by", "studio")])
    assert sub.ntypes == ["game", "studio", "user"]
    assert sub.canonical_etypes == [("game", "made_by", "studio"), ("user", "plays", "game")]
    assert sub.num_nodes("user") == 3 and _edges(sub, "plays") == _edges(g, "plays")
    assert np_of(sub.nodes["user"].data["h"]).tolist() == [0.0, 1.0, 2.0]


def test_batch_counts_are_kept():
    a, b = _graph(nwb.current()), _graph(nwb.current())
    bg = nw.batch([a, b])
    sub = nw.edge_type_subgraph(bg, ["follows"])
    assert np_of(sub.batch_num_nodes("user")).tolist() == [3, 3]
    assert np_of(sub.batch_num_edges("follows")).tolist() == [3, 3]


def test_bad_types_raise():
    g = _graph(nwb.current())
    with pytest.raises(nw.NodeweaveError, match="no node type 'shop'"):
        nw.node_type_subgraph(g, ["shop"])
    with pytest.raises(TypeError, match="wrap one type in a list"):
        nw.node_type_subgraph(g, "user")
    with pytest.raises(ValueError, match="at least one"):
        nw.edge_type_subgraph(g, [])
    with pytest.raises(nw.NodeweaveError):
        nw.edge_type_subgraph(g, ["sells"])
