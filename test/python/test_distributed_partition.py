"""nodeweave.distributed.partition_graph / load_partition: every node owned by exactly one part in
one contiguous id range per type; the HALO of every part checked against an independent SciPy
BFS (and against nodeweave.partition_graph_with_halo, the in-memory version of the same rules);
the parts reassembled give back the graph, its ids and its features (homogeneous and heterograph,
both backends); the random method and vertex-weight balancing are balanced; the partition book's
lookups agree with the parts."""

from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.sparse as sp

import nodeweave as nw
from nodeweave.distributed import RangePartitionBook, load_partition, load_partition_book, partition_graph
from conftest import np_of


# ----------------------------------------------------------------------------- graphs
def homogeneous(rng, n=300, m=1500, feats=True):
    g = nw.graph((rng.integers(0, n, m), rng.integers(0, n, m)), num_nodes=n)
    if feats:
        B = nw.backend.current()
        g.ndata["x"] = B.from_numpy(rng.standard_normal((n, 3)).astype(np.float32))
        g.ndata["train_mask"] = B.from_numpy(rng.random(n) < 0.2)
        g.edata["w"] = B.from_numpy(rng.standard_normal(m))
    return g


def hetero(rng, idtype="int64"):
    """users, items, tags; users follow users, buy items, items get tagged, tags point at users."""
    nu, ni, nt = 80, 50, 10
    spec = {("user", "follows", "user"): (nu, nu, 300), ("user", "buys", "item"): (nu, ni, 250),
            ("item", "tagged", "tag"): (ni, nt, 60), ("tag", "about", "user"): (nt, nu, 40)}
    g = nw.heterograph({ct: (rng.integers(0, a, m), rng.integers(0, b, m)) for ct, (a, b, m) in spec.items()},
                       num_nodes_dict={"user": nu, "item": ni, "tag": nt}, idtype=idtype)
    B = nw.backend.current()
    g.nodes["user"].data["x"] = B.from_numpy(rng.standard_normal((nu, 4)).astype(np.float32))
    g.nodes["item"].data["y"] = B.from_numpy(rng.integers(0, 9, ni))
    g.nodes["user"].data["train_mask"] = B.from_numpy(rng.random(nu) < 0.3)
    g.edges["buys"].data["rating"] = B.from_numpy(rng.standard_normal((250, 2)))
    return g


def load_all(out, name, k):
    manifest = os.path.join(out, f"{name}.json")
    return [load_partition(manifest, p) for p in range(k)]


def typed_edges(g):
    """{canonical etype: (src, dst)} as int64 NumPy arrays, in edge-id order."""
    out = {}
    for ct in g.canonical_etypes:
        s, d = g.edges(etype=ct)
        out[ct] = (np_of(s).astype(np.int64), np_of(d).astype(np.int64))
    return out


# ----------------------------------------------------------------------------- ownership
@pytest.mark.parametrize("method", ["metis", "random"])
@pytest.mark.parametrize("kind", ["homogeneous", "hetero"])
def test_every_node_and_edge_is_owned_by_exactly_one_part(tmp_path, rng, method, kind):
    g = homogeneous(rng) if kind == "homogeneous" else hetero(rng)
    k = 4
    orig_nids, orig_eids = partition_graph(g, k, tmp_path, graph_name="g", part_method=method, return_mapping=True)
    if kind == "homogeneous":
        orig_nids, orig_eids = {"_N": orig_nids}, {g.canonical_etypes[0]: orig_eids}
    parts = load_all(tmp_path, "g", k)
    book = parts[0][3]
    assert book.num_partitions() == k and book.ntypes == g.ntypes and book.canonical_etypes == g.canonical_etypes
    for nt in g.ntypes:
        owners = np.zeros(g.num_nodes(nt), int)
        ranges = book.node_ranges(nt)
        assert ranges[0] == 0 and ranges[-1] == g.num_nodes(nt) and (np.diff(ranges) >= 0).all()
        for p, (pg, *_rest) in enumerate(parts):
            inner = np_of(pg.nodes[nt].data["inner_node"])
            nid, orig = np_of(pg.nodes[nt].data[nw.NID]), np_of(pg.nodes[nt].data["orig_id"])
            assert inner.dtype == np.bool_
            n_in = int(inner.sum())
            assert inner[:n_in].all() and not inner[n_in:].any()                 # own nodes first
            np.testing.assert_array_equal(nid[:n_in], np.arange(ranges[p], ranges[p + 1]))  # one contiguous range
            assert (np.diff(nid[n_in:]) > 0).all()                                # HALO ascending by new id
            np.testing.assert_array_equal(orig, np_of(orig_nids[nt])[nid])       # return_mapping agrees
            np.testing.assert_array_equal(np_of(book.nid2partid(nid[n_in:], nt)) != p, True)
            owners[orig[:n_in]] += 1
        np.testing.assert_array_equal(owners, 1)
        np.testing.assert_array_equal(np.sort(np_of(orig_nids[nt])), np.arange(g.num_nodes(nt)))
    edges = typed_edges(g)
    for ct in g.canonical_etypes:
        owners = np.zeros(g.num_edges(ct), int)
        ranges = book.edge_ranges(ct)
        for p, (pg, *_rest) in enumerate(parts):
            data = pg.edges[ct].data
            inner, eid, orig = np_of(data["inner_edge"]), np_of(data[nw.EID]), np_of(data["orig_id"])
            n_in = int(inner.sum())
            np.testing.assert_array_equal(eid[:n_in], np.arange(ranges[p], ranges[p + 1]))
            np.testing.assert_array_equal(orig, np_of(orig_eids[ct])[eid])
            # an edge belongs to its destination's part
            dst_orig = np_of(pg.nodes[ct[2]].data["orig_id"])[np_of(pg.edges(etype=ct)[1])]
            np.testing.assert_array_equal(dst_orig, edges[ct][1][orig])
            np.testing.assert_array_equal(inner, np_of(pg.nodes[ct[2]].data["inner_node"])[np_of(pg.edges(etype=ct)[1])])
            owners[orig[:n_in]] += 1
        np.testing.assert_array_equal(owners, 1)


# ----------------------------------------------------------------------------- HALO vs BFS
def _homogeneous_view(g):
    """Node offsets per type and the edge list of all types in one id space, as DGL's to_homogeneous."""
    off = dict(zip(g.ntypes, np.concatenate([[0], np.cumsum([g.num_nodes(nt) for nt in g.ntypes])])))
    src, dst, key = [], [], []
    for ct, (s, d) in typed_edges(g).items():
        src.append(s + off[ct[0]])
        dst.append(d + off[ct[2]])
        key += [(ct, e) for e in range(len(s))]
    n = sum(g.num_nodes(nt) for nt in g.ntypes)
    return off, n, np.concatenate(src), np.concatenate(dst), key


def _bfs_reference(n, src, dst, inner, hops):
    """(nodes, edges) by the HALO rules, with sparse matrix products: rings of in-edge sources out
    to `hops`, the in-edges of rings 0 .. hops-1, and the inner nodes' out-edges and out-neighbours."""
    A = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))   # A[u, v]: an edge u -> v
    reach = np.zeros(n, bool)
    reach[inner] = True
    rings_below = reach.copy()                                          # rings 0 .. hops-1
    for h in range(hops):
        if h:
            rings_below |= reach
        reach = reach | (A @ reach.astype(float) > 0)                   # every u with an edge into reach
    is_inner = np.zeros(n, bool)
    is_inner[inner] = True
    out_nb = (A.T @ is_inner.astype(float)) > 0
    nodes = reach | out_nb
    edges = rings_below[dst] | is_inner[src]
    return set(np.flatnonzero(nodes).tolist()), set(np.flatnonzero(edges).tolist())


@pytest.mark.parametrize("hops", [1, 2, 3])
@pytest.mark.parametrize("kind", ["homogeneous", "hetero"])
def test_halo_holds_every_neighbour_within_num_hops(tmp_path, rng, hops, kind):
    g = homogeneous(rng, n=200, m=500) if kind == "homogeneous" else hetero(rng)
    k = 3
    partition_graph(g, k, tmp_path, graph_name="g", num_hops=hops, part_method="random", seed=5)
    off, n, src, dst, key = _homogeneous_view(g)
    index = {kv: i for i, kv in enumerate(key)}
    for p, (pg, *_rest) in enumerate(load_all(tmp_path, "g", k)):
        got_nodes, inner = set(), []
        for nt in g.ntypes:
            orig = np_of(pg.nodes[nt].data["orig_id"]) + off[nt]
            inner += orig[np_of(pg.nodes[nt].data["inner_node"])].tolist()
            got_nodes |= set(orig.tolist())
        got_edges = {index[(ct, int(e))] for ct in g.canonical_etypes for e in np_of(pg.edges[ct].data["orig_id"])}
        want_nodes, want_edges = _bfs_reference(n, src, dst, np.array(inner, np.int64), hops)
        assert got_nodes == want_nodes, f"part {p}"
        assert got_edges == want_edges, f"part {p}"
        assert sum(pg.num_nodes(nt) for nt in g.ntypes) == len(want_nodes)     # no node twice


def test_halo_matches_partition_graph_with_halo(tmp_path, rng):
    g = homogeneous(rng, n=120, m=400, feats=False)
    for hops in (1, 2):
        partition_graph(g, 4, tmp_path, graph_name="g", num_hops=hops, seed=1)
        parts = load_all(tmp_path, "g", 4)
        owner = np.zeros(g.num_nodes(), np.int64)
        for p, (pg, *_rest) in enumerate(parts):
            owner[np_of(pg.ndata["orig_id"])[np_of(pg.ndata["inner_node"])]] = p
        ref, _, _ = nw.partition_graph_with_halo(g, owner, hops)
        for p, (pg, *_rest) in enumerate(parts):
            assert set(np_of(pg.ndata["orig_id"]).tolist()) == set(np_of(ref[p].ndata[nw.NID]).tolist())
            assert set(np_of(pg.edata["orig_id"]).tolist()) == set(np_of(ref[p].edata[nw.EID]).tolist())


# ----------------------------------------------------------------------------- reassembly
def _reassemble(g, parts):
    """Edges (src, dst by input ids, indexed by input edge id) and features, from the parts' own
    nodes and edges only."""
    edges = {ct: (np.full(g.num_edges(ct), -1), np.full(g.num_edges(ct), -1)) for ct in g.canonical_etypes}
    nfeat, efeat = {}, {}
    for pg, nf, ef, book, *_ in parts:
        for ct in g.canonical_etypes:
            inner = np_of(pg.edges[ct].data["inner_edge"])
            s, d = (np_of(t) for t in pg.edges(etype=ct))
            orig = np_of(pg.edges[ct].data["orig_id"])[inner]
            edges[ct][0][orig] = np_of(pg.nodes[ct[0]].data["orig_id"])[s[inner]]
            edges[ct][1][orig] = np_of(pg.nodes[ct[2]].data["orig_id"])[d[inner]]
        for key, val in nf.items():
            nt, name = key.split("/", 1)
            orig = np_of(pg.nodes[nt].data["orig_id"])[np_of(pg.nodes[nt].data["inner_node"])]
            full = nfeat.setdefault((nt, name), np.zeros((g.num_nodes(nt),) + np_of(val).shape[1:], np_of(val).dtype))
            full[orig] = np_of(val)
        for key, val in ef.items():
            ckey, name = key.rsplit("/", 1)
            ct = tuple(ckey.split(":"))
            orig = np_of(pg.edges[ct].data["orig_id"])[np_of(pg.edges[ct].data["inner_edge"])]
            full = efeat.setdefault((ct, name), np.zeros((g.num_edges(ct),) + np_of(val).shape[1:], np_of(val).dtype))
            full[orig] = np_of(val)
    return edges, nfeat, efeat


@pytest.mark.parametrize("kind", ["homogeneous", "hetero", "hetero_int32"])
def test_reassembling_the_parts_gives_back_the_graph(tmp_path, rng, backend_name, kind):
    g = homogeneous(rng) if kind == "homogeneous" else hetero(rng, "int32" if kind == "hetero_int32" else "int64")
    k = 3
    partition_graph(g, k, tmp_path, graph_name="g", num_hops=2, balance_edges=True)
    parts = load_all(tmp_path, "g", k)
    B = nw.backend.current()
    pg, nf = parts[0][0], parts[0][1]
    assert nw.backend.of(next(iter(nf.values()))) is B and nw.backend.of(pg.ndata[nw.NID] if kind == "homogeneous"
                                                                           else pg.nodes["user"].data[nw.NID]) is B
    assert pg.idtype == g.idtype
    edges, nfeat, efeat = _reassemble(g, parts)
    for ct, (s, d) in typed_edges(g).items():
        np.testing.assert_array_equal(edges[ct][0], s)
        np.testing.assert_array_equal(edges[ct][1], d)
    want_n = {(nt, name): np_of(v) for nt in g.ntypes for name, v in g.nodes[nt].data.items()}
    want_e = {(ct, name): np_of(v) for ct in g.canonical_etypes for name, v in g.edges[ct].data.items()}
    assert set(nfeat) == set(want_n) and set(efeat) == set(want_e)
    for key, v in list(want_n.items()) + list(want_e.items()):
        got = nfeat[key] if key in nfeat else efeat[key]
        assert got.dtype == v.dtype
        np.testing.assert_array_equal(got, v)


def test_one_part_holds_the_whole_graph(tmp_path, rng):
    g = homogeneous(rng, n=50, m=120)
    partition_graph(g, 1, tmp_path, graph_name="one")
    pg, nf, ef, book, name, ntypes, etypes = load_partition(tmp_path / "one.json", 0)
    assert (name, ntypes, etypes) == ("one", ["_N"], [("_N", "_E", "_N")])
    np.testing.assert_array_equal(np_of(pg.ndata["orig_id"]), np.arange(50))
    np.testing.assert_array_equal(np_of(pg.edata["orig_id"]), np.arange(120))
    assert np_of(pg.ndata["inner_node"]).all() and np_of(pg.edata["inner_edge"]).all()
    np.testing.assert_array_equal(np_of(nf["_N/x"]), np_of(g.ndata["x"]))


# ----------------------------------------------------------------------------- balance
def _owned_counts(parts, nt, mask=None):
    counts = []
    for pg, nf, *_ in parts:
        inner = np_of(pg.nodes[nt].data["inner_node"])
        counts.append(int(inner.sum()) if mask is None else int(mask[np_of(pg.nodes[nt].data["orig_id"])[inner]].sum()))
    return np.array(counts)


def test_random_method_is_balanced(tmp_path, rng):
    g = hetero(rng)
    train = np_of(g.nodes["user"].data["train_mask"])
    k = 3
    partition_graph(g, k, tmp_path, graph_name="g", part_method="random", seed=7,
                    balance_ntypes={"user": g.nodes["user"].data["train_mask"]})
    parts = load_all(tmp_path, "g", k)
    for nt in g.ntypes:
        c = _owned_counts(parts, nt)
        assert c.sum() == g.num_nodes(nt) and c.max() - c.min() <= 1, (nt, c)
    for mask in (train, ~train):  # each class of the balanced field is split evenly too
        c = _owned_counts(parts, "user", mask)
        assert c.max() - c.min() <= 1, c
    # another seed, another assignment
    partition_graph(g, k, tmp_path, graph_name="h", part_method="random", seed=8)
    other = load_all(tmp_path, "h", k)
    assert any(not np.array_equal(np_of(a[0].nodes["user"].data["orig_id"]), np_of(b[0].nodes["user"].data["orig_id"]))
               for a, b in zip(parts, other))


def _clustered_train_graph(seed=0):
    """An SBM graph of 4 communities whose training nodes all lie in the first one: METIS on the
    structure alone puts nearly all of them into one part."""
    k, size = 4, 150
    p = np.full((k, k), 0.004)
    np.fill_diagonal(p, 0.08)
    g = nw.sbm_graph([size] * k, p, seed=seed)
    train = np.zeros(k * size, bool)
    train[:100] = True
    g.ndata["train_mask"] = nw.backend.current().from_numpy(train)
    return g, train


def test_metis_balances_the_chosen_node_set(tmp_path):
    g, train = _clustered_train_graph()
    partition_graph(g, 4, tmp_path, graph_name="plain")
    plain = _owned_counts(load_all(tmp_path, "plain", 4), "_N", train)
    assert plain.max() >= 75, plain                       # unbalanced without the constraint
    partition_graph(g, 4, tmp_path, graph_name="bal", balance_ntypes=g.ndata["train_mask"])
    parts = load_all(tmp_path, "bal", 4)
    bal = _owned_counts(parts, "_N", train)
    assert bal.sum() == 100 and bal.max() <= 25 * 1.1, bal   # METIS' default tolerance is a few per cent
    sizes = _owned_counts(parts, "_N")
    assert sizes.max() <= 150 * 1.1, sizes


def test_metis_balances_edges(tmp_path, rng):
    # hubs: nodes 0..9 receive most edges; without balance_edges their part gets most edges
    n = 400
    dst = np.concatenate([rng.integers(0, 10, 3000), rng.integers(0, n, 1000)])
    src = rng.integers(0, n, len(dst))
    g = nw.graph((src, dst), num_nodes=n)
    partition_graph(g, 4, tmp_path, graph_name="e", balance_edges=True)
    book = load_partition_book(tmp_path / "e.json", 0)[0]
    owned = np.array([m["num_edges"] for m in book.metadata()])
    assert owned.max() <= owned.mean() * 1.15, owned


# ----------------------------------------------------------------------------- partition book
def test_partition_book_lookups(backend_name):
    book = RangePartitionBook(1, {"a": [0, 3, 3, 7], "b": [0, 1, 2, 4]},
                              {("a", "r", "b"): [0, 5, 6, 6], ("b", "s", "a"): [0, 0, 2, 3]})
    assert book.partid == 1 and book.num_partitions() == 3 and book.etypes == ["r", "s"]
    np.testing.assert_array_equal(np_of(book.nid2partid([0, 2, 3, 6], "a")), [0, 0, 2, 2])  # part 1 owns no a
    np.testing.assert_array_equal(np_of(book.partid2nids(2, "b")), [2, 3])
    np.testing.assert_array_equal(np_of(book.nid2localnid([3, 6], 2, "a")), [0, 3])
    np.testing.assert_array_equal(np_of(book.eid2partid([4, 5], "r")), [0, 1])
    np.testing.assert_array_equal(np_of(book.eid2localeid([1], 1, ("b", "s", "a"))), [1])
    assert book.nid_range(2, "a") == (3, 7) and book.eid_range(0, "s") == (0, 0)
    assert book.metadata() == [{"machine_id": 0, "num_nodes": 4, "num_edges": 5},
                               {"machine_id": 1, "num_nodes": 1, "num_edges": 3},
                               {"machine_id": 2, "num_nodes": 6, "num_edges": 1}]
    # homogeneous ids: part 0 = a0 a1 a2 b0 | part 1 = b1 | part 2 = a3..a6 b2 b3
    np.testing.assert_array_equal(np_of(book.map_to_homo_nid([0, 2, 3, 6], "a")), [0, 2, 5, 8])
    np.testing.assert_array_equal(np_of(book.map_to_homo_nid([0, 1, 3], "b")), [3, 4, 10])
    t, i = book.map_to_per_ntype(np.arange(11))
    np.testing.assert_array_equal(np_of(t), [0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1])
    np.testing.assert_array_equal(np_of(i), [0, 1, 2, 0, 1, 3, 4, 5, 6, 2, 3])
    assert nw.backend.of(book.nid2partid([0], "a")) is nw.backend.current()
    with pytest.raises(ValueError, match="ntype must be given"):
        book.nid2partid([0])
    with pytest.raises(ValueError, match="not owned by part 1"):
        book.nid2localnid([0], 1, "a")
    with pytest.raises(IndexError, match=r"nids\[1\] = 7 is out of range"):
        book.nid2partid([0, 7], "a")
    with pytest.raises(IndexError, match="partid 3"):
        book.partid2nids(3, "a")
    with pytest.raises(TypeError, match="integer ids"):
        book.nid2partid([0.5], "a")
    with pytest.raises(ValueError, match="etype 'x'"):
        book.eid2partid([0], "x")
    with pytest.raises(ValueError, match="num_parts \\+ 1"):
        RangePartitionBook(0, {"a": [0, 1]}, {("a", "r", "a"): [0, 1, 1]})
    with pytest.raises(ValueError, match="never decrease"):
        RangePartitionBook(0, {"a": [0, 2, 1]}, {})


def test_book_agrees_with_the_parts(tmp_path, rng):
    g = hetero(rng)
    partition_graph(g, 3, tmp_path, graph_name="g")
    for p, (pg, _, _, book, *_rest) in enumerate(load_all(tmp_path, "g", 3)):
        assert book.partid == p
        for nt in g.ntypes:
            nid = np_of(pg.nodes[nt].data[nw.NID])
            inner = np_of(pg.nodes[nt].data["inner_node"])
            np.testing.assert_array_equal(np_of(book.nid2partid(nid, nt)) == p, inner)
            np.testing.assert_array_equal(np_of(book.nid2localnid(nid[inner], p, nt)), np.flatnonzero(inner))
        for ct in g.canonical_etypes:
            eid = np_of(pg.edges[ct].data[nw.EID])
            inner = np_of(pg.edges[ct].data["inner_edge"])
            np.testing.assert_array_equal(np_of(book.eid2partid(eid, ct)) == p, inner)
            np.testing.assert_array_equal(np_of(book.eid2localeid(eid[inner], p, ct)), np.flatnonzero(inner))


def test_edge_cases(tmp_path):
    # an edgeless graph balancing edges (nothing to balance: the constraint is left out), a node type
    # without nodes, an edge type without edges, an empty graph
    partition_graph(nw.graph(([], []), num_nodes=10), 3, tmp_path, graph_name="a", balance_edges=True)
    sizes = sorted(m["num_nodes"] for m in load_partition_book(tmp_path / "a.json", 0)[0].metadata())
    assert sum(sizes) == 10 and sizes[-1] - sizes[0] <= 1
    hg = nw.heterograph({("a", "r", "b"): ([0, 1], [0, 0]), ("c", "s", "a"): ([], [])},
                        num_nodes_dict={"a": 4, "b": 3, "c": 0})
    partition_graph(hg, 2, tmp_path, graph_name="h", balance_edges=True)
    pg, *_ = load_partition(tmp_path / "h.json", 1)
    assert pg.num_nodes("c") == 0 and pg.num_edges(("c", "s", "a")) == 0
    partition_graph(nw.graph(([], []), num_nodes=0), 1, tmp_path, graph_name="e")
    assert load_partition(tmp_path / "e.json", 0)[0].num_nodes() == 0
