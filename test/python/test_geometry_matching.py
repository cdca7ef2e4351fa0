"""``nodeweave.geometry.neighbor_matching`` on random bidirected graphs (self-loops and parallel edges
included), both backends and id types, with and without weights: every cluster has one or two
nodes, a pair is joined by an edge, the matching is maximal, labels are each cluster's smallest node
or their rank; with weights, every result is one the greedy heavy-edge rule gives for some visiting
order (all orders of a small graph enumerated in Python); the random choices follow ``nw.seed``;
bad input raising by name; ``from dgl.geometry import ...`` through the DGL alias."""

import itertools

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
from conftest import np_of
from nodeweave.geometry import neighbor_matching


def bidirected(n, pairs, rng):
    """A graph with `pairs` random undirected edges stored both ways (self-loops and repeats kept)."""
    u, v = rng.integers(0, n, pairs), rng.integers(0, n, pairs)
    return np.concatenate([u, v]), np.concatenate([v, u])


def check_matching(n, src, dst, labels):
    """Unrelabelled labels: smallest node of a cluster of one or two nodes, pairs adjacent, maximal."""
    edges = {(int(a), int(b)) for a, b in zip(src, dst) if a != b}
    clusters = {}
    for node, label in enumerate(labels.tolist()):
        clusters.setdefault(label, []).append(node)
    for label, members in clusters.items():
        assert len(members) <= 2 and members[0] == label
        if len(members) == 2:
            assert (members[0], members[1]) in edges
    alone = {m[0] for m in clusters.values() if len(m) == 1}
    assert not any(a in alone and b in alone for a, b in edges), "an edge joins two single nodes"


@pytest.mark.parametrize("idtype", ["int32", "int64"])
@pytest.mark.parametrize("weighted", [False, True])
def test_maximal_matching_of_one_or_two_node_clusters(backend_name, idtype, weighted):
    B = nwb.current()
    for seed in range(5):
        rng = np.random.default_rng(seed)
        n = 30
        src, dst = bidirected(n, 10 + 15 * seed, rng)
        g = nw.graph((src, dst), num_nodes=n, idtype=idtype)
        w = B.from_numpy(rng.integers(0, 4, len(src)).astype(np.float32)) if weighted else None
        nw.seed(seed)
        raw = neighbor_matching(g, w, relabel_idx=False)
        assert B.is_tensor(raw) and B.dtype_name(raw) == idtype and tuple(B.shape(raw)) == (n,)
        check_matching(n, src, dst, np_of(raw))
        nw.seed(seed)
        relabelled = np_of(neighbor_matching(g, w))                     # same draws: same matching
        _, rank = np.unique(np_of(raw), return_inverse=True)
        np.testing.assert_array_equal(relabelled, rank)


def greedy(n, src, dst, w, order):
    """Greedy heavy-edge matching for one visiting order, from the definition (ties: lowest edge id)."""
    label = [-1] * n
    for u in order:
        if label[u] >= 0:
            continue
        best = None
        for e in range(len(src)):
            v = dst[e]
            if src[e] != u or v == u or label[v] >= 0:
                continue
            if best is None or w[e] > w[best]:
                best = e
        if best is None:
            label[u] = u
        else:
            label[u] = label[dst[best]] = min(u, dst[best])
    return tuple(label)


@pytest.mark.parametrize("ties", [False, True])
def test_heavy_edges_are_preferred_as_some_visiting_order_gives(backend_name, ties):
    # 7 nodes, 11 random undirected edges stored both ways, each direction with its own weight
    # (distinct, or from {0, 1, 2} with many ties), and a heavy self-loop that must not count.
    # Matchings that ignore the weights or read them reversed fall outside the possible set for
    # about half of the seeds.
    rng = np.random.default_rng(0)
    pairs = set()
    while len(pairs) < 11:
        pairs.add(tuple(sorted(rng.choice(7, 2, replace=False).tolist())))
    values = rng.integers(0, 3, 22) if ties else rng.permutation(22) + 1
    src, dst, w = [], [], []
    for k, (a, b) in enumerate(sorted(pairs)):
        src += [a, b]
        dst += [b, a]
        w += [float(values[2 * k]), float(values[2 * k + 1])]
    src.append(2)
    dst.append(2)
    w.append(100.0)
    possible = {greedy(7, src, dst, w, order) for order in itertools.permutations(range(7))}
    g = nw.graph((src, dst), num_nodes=7)
    wt = nwb.current().from_numpy(np.array(w))
    seen = set()
    for s in range(100):
        nw.seed(s)
        got = tuple(np_of(neighbor_matching(g, wt, relabel_idx=False)).tolist())
        assert got in possible, s
        seen.add(got)
    assert len(seen) > 1


def test_unweighted_partner_is_random_and_follows_the_seed(backend_name):
    # A star: whoever is visited first, the centre's partner is one of the leaves, each as likely.
    leaves = np.arange(1, 7)
    g = nw.graph((np.concatenate([np.zeros(6, np.int64), leaves]), np.concatenate([leaves, np.zeros(6, np.int64)])))
    partners = []
    for s in range(120):
        nw.seed(s)
        labels = np_of(neighbor_matching(g, relabel_idx=False))
        assert (labels == 0).sum() == 2
        partners.append(int(np.flatnonzero(labels == 0)[1]))
    counts = np.bincount(partners, minlength=7)[1:]
    assert (counts > 5).all(), counts        # 120 draws over 6 leaves: about 20 each
    nw.seed(4)
    a = np_of(neighbor_matching(g))
    nw.seed(4)
    np.testing.assert_array_equal(np_of(neighbor_matching(g)), a)


def test_weights_of_any_backend_and_precision(backend_name):
    rng = np.random.default_rng(2)
    src, dst = bidirected(20, 40, rng)
    g = nw.graph((src, dst), num_nodes=20)
    w = rng.integers(0, 10, len(src)).astype(np.float64)          # exact in float16 and float32
    results = []
    for weights in (w, w.astype(np.float32), nwb.get("native").from_numpy(w),
                    nwb.current().tensor(w, dtype="float16")):
        nw.seed(1)
        results.append(np_of(neighbor_matching(g, weights)))
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


def test_special_graphs(backend_name):
    # No edges, self-loops only: every node alone. Parallel edges count once.
    assert np_of(neighbor_matching(nw.graph(([], []), num_nodes=3))).tolist() == [0, 1, 2]
    assert np_of(neighbor_matching(nw.graph(([0, 2], [0, 2]), num_nodes=3))).tolist() == [0, 1, 2]
    assert np_of(neighbor_matching(nw.graph(([2, 0, 0], [0, 2, 2])))).tolist() == [0, 1, 0]
    assert tuple(nwb.current().shape(neighbor_matching(nw.graph(([], []), num_nodes=0)))) == (0,)
    # One relation of a heterograph, from a node type to itself.
    h = nw.heterograph({("user", "knows", "user"): ([0, 1, 2, 3], [1, 0, 3, 2])})
    assert np_of(neighbor_matching(h)).tolist() == [0, 0, 1, 1]
    # DGL's documented example: the path 0 - 1 - 2 pairs the middle node with one end.
    out = np_of(neighbor_matching(nw.graph(([0, 1, 1, 2], [1, 0, 2, 1])))).tolist()
    assert out in ([0, 0, 1], [0, 1, 1])


def test_bad_input_raises_naming_the_argument(backend_name):
    g = nw.graph(([0, 1, 1, 2], [1, 0, 2, 1]))
    B = nwb.current()
    cases = [
        ((nw.graph(([0, 1, 2], [1, 0, 0])),), ValueError, r"bidirected .* edge 2 \(2 -> 0\) has no reverse"),
        ((nw.heterograph({("a", "r", "b"): ([0], [0])}),), ValueError, "must go from a node type to itself"),
        ((nw.heterograph({("a", "r", "a"): ([0], [0]), ("a", "s", "a"): ([0], [0])}),), ValueError,
         "exactly one edge type"),
        (("not a graph",), TypeError, "graph must be a nodeweave graph"),
        ((g, B.from_numpy(np.ones(3))), ValueError, r"e_weights must hold one value per edge, shape \[4\]"),
        ((g, B.from_numpy(np.array([1.0, -1.0, 1.0, 1.0]))), ValueError, r"non-negative, got e_weights\[1\] = -1"),
        ((g, B.from_numpy(np.array([1.0, np.nan, 1.0, 1.0]))), ValueError, "finite"),
        ((g, B.from_numpy(np.ones((4, 1)))), ValueError, "e_weights must hold one value per edge"),
        ((g, B.from_numpy(np.ones(4, dtype=np.int64))), TypeError, "e_weights must hold floating point"),
        ((g, [1.0, 1.0, 1.0, 1.0]), TypeError, "e_weights must be a tensor"),
        ((g, None, 1), TypeError, "relabel_idx must be True or False"),
    ]
    for args, exc, msg in cases:
        with pytest.raises(exc, match=msg) as info:
            neighbor_matching(*args)
        assert isinstance(info.value, nw.NodeweaveError) and "neighbor_matching" in str(info.value)


def test_dgl_geometry_alias():
    from nodeweave.compat import dgl as compat

    compat.install()
    try:
        import dgl
        from dgl.geometry import farthest_point_sampler, neighbor_matching as nm

        assert farthest_point_sampler is nw.geometry.farthest_point_sampler and nm is neighbor_matching
        assert dgl.geometry is nw.geometry
    finally:
        compat.uninstall()
        nw.set_backend("native")
