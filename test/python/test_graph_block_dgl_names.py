"""Blocks as DGL names and fills them: node sets named 'SRC/t' / 'DST/t', num_nodes(t) counting the
source side of a type, to_block gathering node features onto both sides, and a dst_nodes dict that
leaves a type out dropping the edges into it. Both backends."""

import numpy as np
import pytest

import nodeweave as nw
from conftest import np_of


def _features(g, rng):
    B = nw.backend.current()
    for nt in g.ntypes:
        g.nodes[nt].data["x"] = B.from_numpy(rng.standard_normal((g.num_nodes(nt), 3)).astype(np.float32))
    for ct in g.canonical_etypes:
        g.edges[ct].data["w"] = B.from_numpy(rng.standard_normal(g.num_edges(ct)).astype(np.float32))
    return g


def test_side_names_and_type_counts(backend_name):
    b = nw.to_block(nw.graph(([1, 2], [2, 3])), [3, 2])
    assert (b.num_src_nodes(), b.num_dst_nodes()) == (3, 2)
    assert b.num_nodes() == 5                       # both sides, as DGL
    assert b.num_nodes("_N") == 3                   # a plain type name: its source side, as DGL
    assert (b.num_nodes("SRC/_N"), b.num_nodes("DST/_N")) == (3, 2)
    assert np_of(b.nodes("DST/_N")).tolist() == [0, 1]
    assert np_of(b.nodes["DST/_N"].data[nw.NID]).tolist() == [3, 2]
    assert np_of(b.nodes["SRC/_N"].data[nw.NID]).tolist() == [3, 2, 1]
    assert np_of(b.srcnodes["SRC/_N"].data[nw.NID]).tolist() == [3, 2, 1]
    with pytest.raises(ValueError, match="not a dst node type"):
        b.dstnodes["SRC/_N"]
    with pytest.raises(ValueError, match="unknown node type 'DST/x'.*also named"):
        b.num_nodes("DST/x")

    hb = nw.to_block(nw.heterograph({("A", "AB", "B"): ([0, 1], [1, 2])}), {"B": [1, 2]})
    assert hb.num_nodes("A") == hb.num_nodes("SRC/A") == 2
    assert hb.num_nodes("DST/A") == 0 and hb.num_nodes("DST/B") == 2


def test_to_block_gathers_node_features(backend_name, rng):
    g = _features(nw.heterograph({("A", "AA", "A"): ([0, 2, 1, 3], [1, 3, 2, 4]),
                                  ("A", "AB", "B"): ([0, 1, 3, 1], [1, 3, 5, 6])}), rng)
    b = nw.to_block(g, {"A": [4, 3, 2, 1], "B": [5, 6, 3, 1]})
    for nt in ("A", "B"):
        x = np_of(g.nodes[nt].data["x"])
        for side in (b.srcnodes, b.dstnodes):
            data = side[nt].data
            np.testing.assert_array_equal(np_of(data["x"]), x[np_of(data[nw.NID])])
    for ct in g.canonical_etypes:
        np.testing.assert_array_equal(np_of(b.edges[ct].data["w"]),
                                      np_of(g.edges[ct].data["w"])[np_of(b.edges[ct].data[nw.EID])])


def test_a_type_left_out_of_dst_nodes_keeps_no_edges(backend_name, rng):
    g = _features(nw.heterograph({("A", "AA", "A"): ([0, 2, 1, 3], [1, 3, 2, 4]),
                                  ("A", "AB", "B"): ([0, 1, 3, 1], [1, 3, 5, 6]),
                                  ("B", "BA", "A"): ([2, 3], [3, 2])}), rng)
    b = nw.to_block(g, {"B": [5, 6, 3, 1]})
    assert b.num_nodes("DST/A") == 0
    assert b.num_edges("AA") == b.num_edges("BA") == 0 and b.num_edges("AB") == 4
    assert np_of(b.edges["AA"].data["w"]).shape == (0,)
    src, dst = (np_of(t) for t in b.edges(etype="AB"))
    gs, gd = (np_of(t) for t in g.edges(etype="AB"))
    eid = np_of(b.edges["AB"].data[nw.EID])
    np.testing.assert_array_equal(np_of(b.srcnodes["A"].data[nw.NID])[src], gs[eid])
    np.testing.assert_array_equal(np_of(b.dstnodes["B"].data[nw.NID])[dst], gd[eid])
    with pytest.raises(ValueError, match="not among dst_nodes"):   # a listed type must cover its edges
        nw.to_block(g, {"A": [1], "B": [5, 6, 3, 1]})
