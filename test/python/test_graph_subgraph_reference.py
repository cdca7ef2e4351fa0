"""The C++-backed subgraph transforms (node/edge/in/out/khop subgraphs, compact_graphs) against
straightforward NumPy references on random graphs: int32 and int64 ids, heterographs with an empty
edge type, features carried over, '_ID' stored; the same results whether the graph's CSR/CSC exist
(row walks) or not (edge scans), at 1 and 2 threads, and on the pytorch backend."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
from transform_helpers import assert_graphs_equal, edges_np, rand_graph, rand_hetero

IDTYPES = ["int32", "int64"]


def np_feat(x):
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


def ref_graph(g, nodes, eids, store_ids=True, copy=True):
    """The expected subgraph, built from NumPy arrays through nw.heterograph: ``nodes[nt]`` the kept
    nodes of each type in new-id order (None: all, ids kept), ``eids[ct]`` the kept edges in order."""
    data, num = {}, {}
    for nt in g.ntypes:
        num[nt] = g.num_nodes(nt) if nodes.get(nt) is None else len(nodes[nt])
    for ct in g.canonical_etypes:
        s, d = edges_np(g, ct)
        s, d = s[eids[ct]], d[eids[ct]]
        if nodes.get(ct[0]) is not None:
            s = np.searchsorted(np.sort(nodes[ct[0]]), s)
            s = np.argsort(nodes[ct[0]], kind="stable")[s]  # position in the given order
        if nodes.get(ct[2]) is not None:
            d = np.searchsorted(np.sort(nodes[ct[2]]), d)
            d = np.argsort(nodes[ct[2]], kind="stable")[d]
        data[ct] = (s, d)
    r = nw.heterograph(data, num, idtype=g.idtype)
    for nt in g.ntypes:
        ids = nodes.get(nt)
        if copy:
            for k, v in g.nodes[nt].data.items():
                r.nodes[nt].data[k] = v if ids is None else nc.tensor(np_feat(v)[ids])
        if store_ids and ids is not None:
            r.nodes[nt].data["_ID"] = nc.tensor(np.asarray(ids).astype(str(g.idtype).split(".")[-1]))
    for ct in g.canonical_etypes:
        for k, v in g.edges[ct].data.items():
            r.edges[ct].data[k] = nc.tensor(np_feat(v)[eids[ct]])
        if store_ids:
            r.edges[ct].data["_ID"] = nc.tensor(np.asarray(eids[ct]).astype(str(g.idtype).split(".")[-1]))
    return r


def graphs(rng, idtype):
    yield rand_graph(rng, 40, 300, idtype)
    yield rand_graph(rng, 7, 0, idtype)
    yield rand_hetero(rng, idtype)
    g = rand_graph(rng, 60, 500, idtype)
    g.create_formats_()  # CSR and CSC exist: small selections walk rows instead of scanning
    yield g


def pick_nodes(rng, g, frac):
    return {nt: rng.permutation(g.num_nodes(nt))[: int(g.num_nodes(nt) * frac)] for nt in g.ntypes}


def endpoints(g, eids):
    used = {nt: [] for nt in g.ntypes}
    for ct, e in eids.items():
        s, d = edges_np(g, ct)
        used[ct[0]].append(s[e])
        used[ct[2]].append(d[e])
    return {nt: np.unique(np.concatenate(v)) if v else np.zeros(0, np.int64) for nt, v in used.items()}


def arg(g, per_type):
    return per_type if len(per_type) > 1 or len(g.ntypes) > 1 else next(iter(per_type.values()))


@pytest.mark.parametrize("idtype", IDTYPES)
@pytest.mark.parametrize("frac", [0.05, 0.5, 1.0])
def test_node_subgraph_matches_reference(rng, idtype, frac):
    for g in graphs(rng, idtype):
        nodes = pick_nodes(rng, g, frac)
        eids = {}
        for ct in g.canonical_etypes:
            s, d = edges_np(g, ct)
            eids[ct] = np.flatnonzero(np.isin(s, nodes[ct[0]]) & np.isin(d, nodes[ct[2]]))
        assert_graphs_equal(nw.node_subgraph(g, arg(g, nodes)), ref_graph(g, nodes, eids), check_batch=False)
        assert_graphs_equal(nw.node_subgraph(g, arg(g, nodes), relabel_nodes=False, store_ids=False),
                            ref_graph(g, {}, eids, store_ids=False), check_batch=False)


@pytest.mark.parametrize("idtype", IDTYPES)
def test_edge_subgraph_matches_reference(rng, idtype):
    for g in graphs(rng, idtype):
        eids = {ct: rng.permutation(g.num_edges(ct))[: g.num_edges(ct) // 3] for ct in g.canonical_etypes}
        e_arg = eids if len(g.canonical_etypes) > 1 else eids[g.canonical_etypes[0]]
        assert_graphs_equal(nw.edge_subgraph(g, e_arg), ref_graph(g, endpoints(g, eids), eids),
                            check_batch=False)
        assert_graphs_equal(nw.edge_subgraph(g, e_arg, relabel_nodes=False), ref_graph(g, {}, eids),
                            check_batch=False)


@pytest.mark.parametrize("idtype", IDTYPES)
@pytest.mark.parametrize("inward", [True, False])
def test_in_out_subgraph_matches_reference(rng, idtype, inward):
    f = nw.in_subgraph if inward else nw.out_subgraph
    for g in graphs(rng, idtype):
        nodes = pick_nodes(rng, g, 0.3)
        eids = {}
        for ct in g.canonical_etypes:
            s, d = edges_np(g, ct)
            eids[ct] = np.flatnonzero(np.isin(d, nodes[ct[2]]) if inward else np.isin(s, nodes[ct[0]]))
        assert_graphs_equal(f(g, arg(g, nodes)), ref_graph(g, {}, eids), check_batch=False)
        assert_graphs_equal(f(g, arg(g, nodes), relabel_nodes=True), ref_graph(g, endpoints(g, eids), eids),
                            check_batch=False)


@pytest.mark.parametrize("idtype", IDTYPES)
def test_khop_matches_breadth_first_reference(rng, idtype):
    g = rand_hetero(rng, idtype)
    seeds = {"user": np.array([0, 3])}
    reached = {nt: set() for nt in g.ntypes}
    reached["user"] = {0, 3}
    frontier = {nt: set(v) for nt, v in reached.items()}
    for _ in range(2):  # predecessors, every edge type
        nxt = {nt: set() for nt in g.ntypes}
        for ct in g.canonical_etypes:
            s, d = edges_np(g, ct)
            nxt[ct[0]] |= {int(u) for u, v in zip(s, d) if int(v) in frontier[ct[2]]}
        frontier = {nt: nxt[nt] - reached[nt] for nt in g.ntypes}
        for nt in g.ntypes:
            reached[nt] |= frontier[nt]
    sg, inv = nw.khop_in_subgraph(g, seeds, 2)
    for nt in g.ntypes:
        assert sg.nodes[nt].data["_ID"].numpy().tolist() == sorted(reached[nt])
    assert sg.nodes["user"].data["_ID"].numpy()[inv["user"].numpy()].tolist() == [0, 3]


@pytest.mark.parametrize("idtype", IDTYPES)
def test_compact_graphs_matches_reference(rng, idtype):
    h1, h2 = rand_hetero(rng, idtype), rand_hetero(rng, idtype)
    keep = {"user": [5, 1, 5], "tag": [2]}
    c1, c2 = nw.compact_graphs([h1, h2], always_preserve=keep)
    used = {nt: set() for nt in h1.ntypes}
    for h in (h1, h2):
        for ct in h.canonical_etypes:
            s, d = edges_np(h, ct)
            used[ct[0]] |= set(s.tolist())
            used[ct[2]] |= set(d.tolist())
    for nt in h1.ntypes:
        first = list(dict.fromkeys(keep.get(nt, [])))
        want = np.array(first + sorted(used[nt] - set(first)), np.int64)
        for h, c in ((h1, c1), (h2, c2)):
            np.testing.assert_array_equal(c.nodes[nt].data["_ID"].numpy(), want)
            np.testing.assert_array_equal(c.nodes[nt].data["h"].numpy(), h.nodes[nt].data["h"].numpy()[want])
            assert c.idtype == h.idtype
    for h, c in ((h1, c1), (h2, c2)):
        for ct in h.canonical_etypes:
            cs, cd = edges_np(c, ct)
            gs, gd = edges_np(h, ct)
            np.testing.assert_array_equal(c.nodes[ct[0]].data["_ID"].numpy()[cs], gs)
            np.testing.assert_array_equal(c.nodes[ct[2]].data["_ID"].numpy()[cd], gd)
            np.testing.assert_array_equal(c.edges[ct].data["w"].numpy(), h.edges[ct].data["w"].numpy())


def test_compact_graphs_of_mixed_id_types(rng):
    a = nw.graph(([1, 4], [4, 2]), num_nodes=6, idtype="int32")
    b = nw.graph(([5], [1]), num_nodes=6, idtype="int64")
    ca, cb = nw.compact_graphs([a, b])
    assert ca.idtype == a.idtype and cb.idtype == b.idtype
    assert ca.ndata["_ID"].numpy().tolist() == [1, 2, 4, 5]
    assert edges_np(cb)[0].tolist() == [3] and edges_np(ca)[1].tolist() == [2, 1]


def test_scan_and_walk_and_threads_agree(rng):
    s = rng.integers(0, 20000, 200000)
    d = rng.integers(0, 20000, 200000)
    fresh = nw.graph((s, d), num_nodes=20000)
    built = nw.graph((s, d), num_nodes=20000)
    built.create_formats_()
    small = rng.permutation(20000)[:50]
    big = rng.permutation(20000)[:9000]
    before = nc.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            nc.set_num_threads(threads)
            for g in (fresh, built):
                results.append([nw.node_subgraph(g, small), nw.node_subgraph(g, big),
                                nw.in_subgraph(g, small, relabel_nodes=True),
                                nw.out_subgraph(g, big), nw.edge_subgraph(g, big)])
    finally:
        nc.set_num_threads(before)
    for other in results[1:]:
        for a, b in zip(results[0], other):
            assert_graphs_equal(a, b, check_batch=False)


def test_pytorch_backend_ids_and_features(rng):
    torch = pytest.importorskip("torch")
    nw.set_backend("pytorch")
    g = nw.graph(([0, 1, 2, 3], [1, 2, 3, 0]), num_nodes=5)
    g.ndata["h"] = torch.arange(5.0)
    g.edata["w"] = torch.arange(4.0)
    sg = nw.node_subgraph(g, torch.tensor([3, 0, 1]))
    assert isinstance(sg.ndata["_ID"], torch.Tensor) and sg.ndata["_ID"].tolist() == [3, 0, 1]
    assert sg.ndata["h"].tolist() == [3.0, 0.0, 1.0] and sg.edata["w"].tolist() == [0.0, 3.0]
    src, dst = sg.edges()
    assert isinstance(src, torch.Tensor) and (src.tolist(), dst.tolist()) == ([1, 0], [2, 1])
    c = nw.compact_graphs(nw.edge_subgraph(g, [1], relabel_nodes=False))
    assert c.ndata["_ID"].tolist() == [1, 2] and c.ndata["h"].tolist() == [1.0, 2.0]


def test_primitives_raise_named_errors():
    rel = nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=4)._host(("_N", "_E", "_N"))
    C = nw._C
    with pytest.raises(IndexError, match=r"src_nodes\[1\] = 4 is out of range"):
        C.induced_subgraph(rel, np.array([0, 4]), np.array([0]), True)
    with pytest.raises(ValueError, match="dst_nodes holds node 2 more than once"):
        C.induced_subgraph(rel, np.array([0]), np.array([2, 2]), True)
    with pytest.raises(TypeError, match="src_nodes must hold integers"):
        C.induced_subgraph(rel, np.array([0.5]), np.array([0]), True)
    with pytest.raises(IndexError, match=r"eids\[0\] = 3 is out of range"):
        C.edge_subgraph(rel, np.array([3]), "keep")
    with pytest.raises(ValueError, match="relabel must be"):
        C.in_subgraph(rel, np.array([0]), "sideways")
    with pytest.raises(IndexError, match=r"nodes\[0\] = -1"):
        C.out_subgraph(rel, np.array([-1]), "keep")
    with pytest.raises(ValueError, match=r"relations\[0\] names node type 1"):
        C.compact_relations([4], [(0, 1, rel)], None, "int64")
    with pytest.raises(ValueError, match=r"relations\[0\] has 4 source"):
        C.compact_relations([5], [(0, 0, rel)], None, "int64")
    with pytest.raises(IndexError, match=r"always_preserve\[0\]\[0\] = 9"):
        C.compact_relations([4], [(0, 0, rel)], [np.array([9])], "int64")
    with pytest.raises(TypeError, match="int32"):
        C.compact_relations([4], [(0, 0, rel)], None, "int32")
