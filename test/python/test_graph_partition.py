"""nodeweave.partition (DGL's dgl.partition): METIS assignments, partitions with HALO nodes checked
against a set-based reference of DGL's rules on random graphs, the reshuffled numbering, node
renumbering, reorder_graph's 'metis' option, and the errors. Both backends."""

import numpy as np
import pytest

import nodeweave as nw
from conftest import np_of


def _random_graph(rng, n=40, m=160):
    return nw.graph((rng.integers(0, n, m), rng.integers(0, n, m)), num_nodes=n)


def _reference(src, dst, inner, hops):
    """DGL's partition of `inner` as sets: nodes within `hops` in-edge hops plus the inner nodes'
    out-neighbours; edges into the first `hops` rings plus the inner nodes' out-edges."""
    inner = set(inner)
    rings, seen = [set(inner)], set(inner)
    for _ in range(hops):
        nxt = {int(s) for s, d in zip(src, dst) if d in rings[-1] and s not in seen}
        rings.append(nxt)
        seen |= nxt
    if hops == 0:
        edges = {e for e, (s, d) in enumerate(zip(src, dst)) if s in inner and d in inner}
        return inner, edges
    into = set().union(*rings[:hops])
    edges = {e for e, (s, d) in enumerate(zip(src, dst)) if d in into or s in inner}
    nodes = seen | {int(d) for s, d in zip(src, dst) if s in inner}
    return nodes, edges


@pytest.mark.parametrize("hops", [0, 1, 2])
def test_partitions_follow_the_halo_rules(backend_name, rng, hops):
    g = _random_graph(rng)
    src, dst = (np_of(t) for t in g.edges())
    part = rng.integers(0, 3, g.num_nodes())
    parts, nids, eids = nw.partition_graph_with_halo(g, part.tolist(), hops)
    assert nids is None and eids is None and sorted(parts) == sorted(set(part.tolist()))
    owner = np.zeros(g.num_edges(), int)
    for p, sg in parts.items():
        inner = np.flatnonzero(part == p)
        nodes, edges = _reference(src.tolist(), dst.tolist(), inner.tolist(), hops)
        nid, eid = np_of(sg.ndata[nw.NID]), np_of(sg.edata[nw.EID])
        assert set(nid.tolist()) == nodes and len(nid) == len(nodes)
        assert set(eid.tolist()) == edges and len(eid) == len(edges)
        np.testing.assert_array_equal(nid[:len(inner)], inner)          # inner nodes first
        np.testing.assert_array_equal(np_of(sg.ndata["inner_node"]), np.arange(len(nid)) < len(inner))
        np.testing.assert_array_equal(np_of(sg.ndata["part_id"]), part[nid])
        s, d = (np_of(t) for t in sg.edges())
        np.testing.assert_array_equal(nid[s], src[eid])
        np.testing.assert_array_equal(nid[d], dst[eid])
        inner_edge = np_of(sg.edata["inner_edge"])
        want = np.ones(len(eid), bool) if hops == 0 else part[dst[eid]] == p
        np.testing.assert_array_equal(inner_edge.astype(bool), want)
        owner[eid[inner_edge.astype(bool)]] += 1
    if hops:  # every edge belongs to the partition of its destination, once
        np.testing.assert_array_equal(owner, np.ones(g.num_edges(), int))


def test_reshuffle_makes_parts_contiguous(backend_name, rng):
    g = _random_graph(rng)
    src, dst = (np_of(t) for t in g.edges())
    part = rng.integers(0, 4, g.num_nodes())
    parts, nids, eids = nw.partition_graph_with_halo(g, part, 1, reshuffle=True)
    nids, eids = np_of(nids), np_of(eids)
    np.testing.assert_array_equal(np.sort(nids), np.arange(g.num_nodes()))
    np.testing.assert_array_equal(np.sort(eids), np.arange(g.num_edges()))
    np.testing.assert_array_equal(np.diff(part[nids]) >= 0, True)       # parts in increasing order
    new_of = np.empty_like(nids)
    new_of[nids] = np.arange(len(nids))
    np.testing.assert_array_equal(np.diff(part[dst[eids]]) >= 0, True)  # edges grouped by their dst's part
    for p, sg in parts.items():
        inner = int(np_of(sg.ndata["inner_node"]).sum())
        nid, orig = np_of(sg.ndata[nw.NID]), np_of(sg.ndata["orig_id"])
        np.testing.assert_array_equal(orig, nids[nid])
        assert sorted(orig[:inner].tolist()) == np.flatnonzero(part == p).tolist()
        np.testing.assert_array_equal(nid[:inner], np.arange(nid[0], nid[0] + inner))  # a contiguous range
        s, d = (np_of(t) for t in sg.edges())
        eorig = np_of(sg.edata["orig_id"])
        np.testing.assert_array_equal(orig[s], src[eorig])
        np.testing.assert_array_equal(orig[d], dst[eorig])
        ie = np_of(sg.edata["inner_edge"]).astype(bool)
        k = int(ie.sum())
        assert ie[:k].all() and not ie[k:].any()                          # own edges first
        assert (np.diff(np_of(sg.edata[nw.EID])[:k]) > 0).all()


def test_metis_assignment_and_partition(backend_name):
    # two triangles joined by one edge: METIS cuts that edge
    g = nw.graph(([0, 1, 2, 3, 4, 5, 2], [1, 2, 0, 4, 5, 3, 3]))
    part = np_of(nw.metis_partition_assignment(g, 2))
    assert part.dtype == np.int64 and len(part) == 6
    assert part[0] == part[1] == part[2] != part[3] == part[4] == part[5]
    r = np_of(nw.metis_partition_assignment(g, 2, mode="recursive", seed=3))
    assert r[0] == r[1] == r[2] != r[3] == r[4] == r[5]
    v = np_of(nw.metis_partition_assignment(g, 2, objtype="vol"))   # volume 2: nodes 2 and 3 send once
    assert v[0] == v[1] == v[2] != v[3] == v[4] == v[5]
    parts = nw.metis_partition(g, 2, extra_cached_hops=1, reshuffle=True)
    assert sorted(int(np_of(p.ndata["inner_node"]).sum()) for p in parts.values()) == [3, 3]
    for p, sg in parts.items():
        inner = np_of(sg.ndata["inner_node"]).astype(bool)
        np.testing.assert_array_equal(np_of(sg.ndata["part_id"])[inner], p)
    assert nw.partition.metis_partition_assignment is nw.metis_partition_assignment
    assert nw.transforms.partition_graph_with_halo is nw.partition_graph_with_halo


def test_metis_balances_node_types():
    # 8 nodes in a ring, types 0 0 0 0 1 1 1 1 along it: balancing types puts 2 of each in each part
    g = nw.graph((list(range(8)), [(i + 1) % 8 for i in range(8)]))
    types = [0, 0, 0, 0, 1, 1, 1, 1]
    part = np_of(nw.metis_partition_assignment(g, 2, balance_ntypes=types))
    for t in (0, 1):
        assert sorted(np.bincount(part[np.array(types) == t], minlength=2).tolist()) == [2, 2]


def test_reorder_nodes(backend_name, rng):
    g = _random_graph(rng, 10, 30)
    g.ndata["x"] = nw.backend.current().from_numpy(np.arange(10.0))
    new = rng.permutation(10)
    rg = nw.partition.reorder_nodes(g, new)
    src, dst = (np_of(t) for t in g.edges())
    rs, rd = (np_of(t) for t in rg.edges())
    np.testing.assert_array_equal(rs, new[src])
    np.testing.assert_array_equal(rd, new[dst])
    np.testing.assert_array_equal(new[np_of(rg.ndata["orig_id"])], np.arange(10))
    assert sorted(rg.ndata) == ["orig_id"]  # DGL's result carries no features of g


def test_reorder_graph_by_metis_groups_parts():
    g = nw.graph(([0, 3, 1, 4, 2, 5], [3, 0, 4, 1, 5, 2]))     # pairs (0,3) (1,4) (2,5)
    rg = nw.reorder_graph(g, "metis", permute_config={"k": 3})
    old = np_of(rg.ndata[nw.NID])
    part = np_of(nw.metis_partition_assignment(g, 3))
    assert (np.diff(part[old]) >= 0).all()
    with pytest.raises(nw.NodeweaveError, match=r"permute_config\['k'\]"):
        nw.reorder_graph(g, "metis")


def test_partition_errors():
    g = nw.graph(([0, 1], [1, 2]))
    with pytest.raises(ValueError, match="node_part must hold one part id per node"):
        nw.partition_graph_with_halo(g, [0, 1], 1)
    with pytest.raises(ValueError, match="part ids >= 0"):
        nw.partition_graph_with_halo(g, [0, -1, 0], 1)
    with pytest.raises(ValueError, match="extra_cached_hops"):
        nw.partition_graph_with_halo(g, [0, 0, 1], -1)
    with pytest.raises(ValueError, match=r"k \(the number of parts\)"):
        nw.metis_partition_assignment(g, 4)
    with pytest.raises(TypeError, match="k must be an int"):
        nw.metis_partition_assignment(g, 1.5)
    with pytest.raises(ValueError, match="mode"):
        nw.metis_partition_assignment(g, 2, mode="kway")
    with pytest.raises(ValueError, match="objtype"):
        nw.metis_partition_assignment(g, 2, objtype="volume")
    with pytest.raises(ValueError, match="objtype='vol' needs mode='k-way'"):
        nw.metis_partition_assignment(g, 2, mode="recursive", objtype="vol")
    with pytest.raises(ValueError, match="balance_ntypes"):
        nw.metis_partition_assignment(g, 2, balance_ntypes=[0, 1])
    with pytest.raises(ValueError, match="permutation"):
        nw.partition.reorder_nodes(g, [0, 0, 1])
    hg = nw.heterograph({("a", "r", "b"): ([0], [0])})
    with pytest.raises(ValueError, match="one node type and one edge type"):
        nw.partition_graph_with_halo(hg, [0], 1)
