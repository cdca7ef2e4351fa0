"""Traversal frontiers (``bfs_nodes_generator``, ``bfs_edges_generator``,
``topological_nodes_generator``, ``dfs_edges_generator``, ``dfs_labeled_edges_generator``) against
networkx on simple graphs (whose adjacency order is edge-id order, so the order inside a frontier is
checked too) and against brute force on multigraphs, forwards and backwards, on both backends and
both id types; several sources; a heterograph's single relation; bad input raising with the
argument's name."""

import networkx as nx
import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
from conftest import np_of

LABELS = {"forward": nw.graph.algorithms.traversal.FORWARD, "reverse": nw.graph.algorithms.traversal.REVERSE,
          "nontree": nw.graph.algorithms.traversal.NONTREE}


def simple_graph(n, m, seed, dag=False):
    """Random distinct pairs (self-loops allowed unless ``dag``), in random edge order."""
    rng = np.random.default_rng(seed)
    pairs = {(int(u), int(v)) for u, v in rng.integers(0, n, (m, 2)) if not dag or u < v}
    pairs = sorted(pairs)
    rng.shuffle(pairs)
    src = np.array([p[0] for p in pairs], np.int64)
    dst = np.array([p[1] for p in pairs], np.int64)
    return src, dst


def nx_digraph(n, src, dst, reverse=False):
    """networkx graph whose adjacency lists follow edge id (insertion order), with the edge ids."""
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    for e, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        a, b = (v, u) if reverse else (u, v)
        G.add_edge(a, b, id=e)
    return G


def as_lists(frontiers, dtype):
    B = nwb.current()
    out = []
    for f in frontiers:
        assert B.is_tensor(f) and B.dtype_name(f) == dtype
        out.append(np_of(f).tolist())
    return out


@pytest.mark.parametrize("idtype", ["int32", "int64"])
@pytest.mark.parametrize("reverse", [False, True])
def test_bfs_matches_networkx(backend_name, idtype, reverse):
    for seed in range(5):
        n = 30
        src, dst = simple_graph(n, 60, seed)
        g = nw.graph((src, dst), num_nodes=n, idtype=idtype)
        G = nx_digraph(n, src, dst, reverse)
        sources = [seed, (seed + 11) % n] if seed % 2 else [seed]
        want = [list(layer) for layer in nx.bfs_layers(G, sources)]
        assert as_lists(nw.bfs_nodes_generator(g, sources, reverse), idtype) == want
        if len(sources) == 1:
            # networkx lists the BFS tree edges in the order it meets them; group them by depth.
            depth = {v: i for i, layer in enumerate(want) for v in layer}
            edges = [[] for _ in range(len(want) - 1)]
            for u, v in nx.bfs_edges(G, sources[0]):
                edges[depth[v] - 1].append(G.edges[u, v]["id"])
            got = as_lists(nw.bfs_edges_generator(g, sources[0], reverse=reverse), idtype)
            assert got == [e for e in edges if e]


def brute_bfs(n, src, dst, sources):
    """Level by level over the edge list: each new node is reached by the edge with the smallest
    (position of its source in the level, edge id)."""
    seen = set(sources)
    level, nodes, edges = list(sources), [list(sources)], []
    while True:
        best = {}
        for pos, u in enumerate(level):
            for e in range(len(src)):
                if src[e] == u and dst[e] not in seen:
                    best[dst[e]] = min(best.get(dst[e], (pos, e)), (pos, e))
        if not best:
            return nodes, edges
        order = sorted(best, key=lambda v: best[v])
        seen.update(order)
        level = order
        nodes.append(order)
        edges.append([best[v][1] for v in order])


def test_bfs_on_a_multigraph_with_self_loops_matches_brute_force(backend_name):
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 12, 40), rng.integers(0, 12, 40)
    src[:4], dst[:4] = 2, 2                     # repeated self-loops
    src[4:7], dst[4:7] = 0, 5                   # a triple edge from the first source
    g = nw.graph((src, dst), num_nodes=14)
    nodes, edges = brute_bfs(14, src.tolist(), dst.tolist(), [0, 7])
    assert as_lists(nw.bfs_nodes_generator(g, nwb.current().int_tensor(np.array([0, 7]))), "int64") == nodes
    assert as_lists(nw.bfs_edges_generator(g, [0, 7]), "int64") == edges
    # A source with no edges out: one frontier of nodes, no edge frontier.
    assert as_lists(nw.bfs_nodes_generator(g, 13), "int64") == [[13]]
    assert nw.bfs_edges_generator(g, 13) == []


@pytest.mark.parametrize("reverse", [False, True])
def test_topological_layers_match_networkx_generations(backend_name, reverse):
    for seed in range(4):
        n = 40
        src, dst = simple_graph(n, 100, seed, dag=True)
        g = nw.graph((src, dst), num_nodes=n, idtype="int32")
        G = nx_digraph(n, src, dst, reverse)
        got = as_lists(nw.topological_nodes_generator(g, reverse=reverse), "int32")
        want = [sorted(gen) for gen in nx.topological_generations(G)]
        assert got[0] == want[0]                     # the first layer in increasing id
        assert [sorted(f) for f in got] == want


def test_topological_rejects_cycles_and_self_loops(backend_name):
    with pytest.raises(ValueError, match="cycle"):
        nw.topological_nodes_generator(nw.graph(([0, 1, 2, 3], [1, 2, 1, 4])))
    with pytest.raises(ValueError, match="cycle.*node 2"):
        nw.topological_nodes_generator(nw.graph(([0, 2], [1, 2])))
    assert nw.topological_nodes_generator(nw.graph(([], []), num_nodes=0)) == []


def nx_dfs(G, source, reverse_edges, nontree_edges):
    """networkx's labelled DFS as (edge id, label), without the (source, source) pairs it starts
    and ends with (the graphs here have no self-loops, so those are the only u == v pairs)."""
    keep = {"forward"} | ({"reverse"} if reverse_edges else set()) | ({"nontree"} if nontree_edges else set())
    return [(G.edges[u, v]["id"], LABELS[kind]) for u, v, kind in nx.dfs_labeled_edges(G, source)
            if u != v and kind in keep]


@pytest.mark.parametrize("idtype", ["int32", "int64"])
@pytest.mark.parametrize("reverse", [False, True])
def test_labelled_dfs_matches_networkx(backend_name, idtype, reverse):
    for seed in range(4):
        n = 25
        src, dst = simple_graph(n, 70, seed + 10)
        keep = src != dst                      # networkx's bookends would look like self-loops
        src, dst = src[keep], dst[keep]
        g = nw.graph((src, dst), num_nodes=n, idtype=idtype)
        G = nx_digraph(n, src, dst, reverse)
        sources = [seed, 20]
        for rev_e in (False, True):
            for non in (False, True):
                searches = [nx_dfs(G, s, rev_e, non) for s in sources]
                want_e = [[s[k][0] for s in searches if k < len(s)] for k in range(max(map(len, searches)))]
                want_l = [[s[k][1] for s in searches if k < len(s)] for k in range(max(map(len, searches)))]
                edges, labels = nw.dfs_labeled_edges_generator(g, sources, reverse, rev_e, non)
                assert as_lists(edges, idtype) == want_e
                assert as_lists(labels, "int64") == want_l
                assert as_lists(nw.dfs_labeled_edges_generator(g, sources, reverse, rev_e, non,
                                                               return_labels=False), idtype) == want_e
        forward = [e for e, _ in nx_dfs(G, sources[0], False, False)]
        assert [f[0] for f in as_lists(nw.dfs_edges_generator(g, sources[0], reverse), idtype)] == forward


def test_dfs_labels_on_dgl_documented_graph(backend_name):
    # DGL's test graph: 0 -> 1 -> 2, 0 -> 2 and 3 -> 4, 3 -> 5, searched from 0 and 3 at once.
    g = nw.graph(([0, 1, 0, 3, 3], [1, 2, 2, 4, 5]), num_nodes=6)
    edges, labels = nw.dfs_labeled_edges_generator(g, [0, 3], has_reverse_edge=True, has_nontree_edge=True)
    assert as_lists(edges, "int64") == [[0, 3], [1, 3], [1, 4], [0, 4], [2]]
    assert as_lists(labels, "int64") == [[0, 0], [0, 1], [1, 0], [1, 1], [2]]
    # A self-loop and parallel edges are non-tree edges.
    m = nw.graph(([0, 0, 1, 1, 2], [1, 1, 1, 0, 0]))
    edges, labels = nw.dfs_labeled_edges_generator(m, 0, has_reverse_edge=True, has_nontree_edge=True)
    assert as_lists(edges, "int64") == [[0], [2], [3], [0], [1]]
    assert as_lists(labels, "int64") == [[0], [2], [2], [1], [2]]
    assert nw.graph.algorithms.traversal.DFS_LABEL_NAMES[2] == "nontree"


def test_one_relation_of_a_heterograph(backend_name):
    hg = nw.heterograph({("user", "follows", "user"): ([0, 1, 1], [1, 2, 3])})
    assert as_lists(nw.bfs_nodes_generator(hg, 0), "int64") == [[0], [1], [2, 3]]
    two = nw.heterograph({("user", "follows", "user"): ([0], [1]), ("user", "plays", "game"): ([0], [0])})
    assert as_lists(nw.bfs_nodes_generator(two["follows"], 0), "int64") == [[0], [1]]
    with pytest.raises(ValueError, match="exactly one edge type"):
        nw.bfs_nodes_generator(two, 0)
    with pytest.raises(ValueError, match="from a node type to itself"):
        nw.dfs_edges_generator(two["plays"], 0)


def test_bad_input_names_the_argument(backend_name):
    g = nw.graph(([0, 1], [1, 2]))
    with pytest.raises(IndexError, match=r"source\[1\] = 3 is out of range"):
        nw.bfs_nodes_generator(g, [0, 3])
    with pytest.raises(IndexError, match="source"):
        nw.dfs_labeled_edges_generator(g, -1)
    with pytest.raises(TypeError, match="source"):
        nw.bfs_edges_generator(g, 1.5)
    with pytest.raises(TypeError, match="source"):
        nw.dfs_edges_generator(g, None)
    with pytest.raises(ValueError, match="source"):
        nw.bfs_nodes_generator(g, [[0, 1]])
    with pytest.raises(TypeError, match="reverse"):
        nw.bfs_nodes_generator(g, 0, reverse="yes")
    with pytest.raises(TypeError, match="has_nontree_edge"):
        nw.dfs_labeled_edges_generator(g, 0, has_nontree_edge=1)
    with pytest.raises(TypeError, match="return_labels"):
        nw.dfs_labeled_edges_generator(g, 0, return_labels=None)
    with pytest.raises(TypeError, match="graph must be a nodeweave graph"):
        nw.topological_nodes_generator("g")
