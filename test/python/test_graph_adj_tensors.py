"""``g.adj_tensors(fmt, etype)`` against NumPy references on both backends: COO in edge-id order,
CSR / CSC with rows in node order and each row's edges in increasing edge id (multi-edges, isolated
nodes, empty relations), the graph's id type and the backend's tensor type, every relation of a
heterograph and of a block, after a mutation, and bad arguments raising with their names."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
from conftest import np_of


def reference(fmt, src, dst, num_src, num_dst):
    """The three formats from the definition: rows by a stable sort on the row node."""
    if fmt == "coo":
        return [src, dst]
    rows, cols, n = (src, dst, num_src) if fmt == "csr" else (dst, src, num_dst)
    eids = np.argsort(rows, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
    return [indptr, cols[eids], eids]


def check(g, etype, src, dst, num_src, num_dst):
    for fmt in ("coo", "csr", "csc"):
        got = g.adj_tensors(fmt, etype) if etype is not None else g.adj_tensors(fmt)
        want = reference(fmt, np.asarray(src, np.int64), np.asarray(dst, np.int64), num_src, num_dst)
        assert isinstance(got, tuple) and len(got) == len(want), fmt
        for i, (t, w) in enumerate(zip(got, want)):
            B = nwb.current()
            assert B.is_tensor(t) and B.dtype_name(t) == str(g.idtype).rsplit(".", 1)[-1], (fmt, i)
            np.testing.assert_array_equal(np_of(t), w, err_msg=f"{fmt}[{i}]")


@pytest.mark.parametrize("idtype", ["int32", "int64"])
def test_homogeneous_with_multi_edges_and_isolated_nodes(backend_name, idtype):
    rng = np.random.default_rng(0)
    src, dst = rng.integers(0, 8, 40), rng.integers(0, 8, 40)
    src[:3], dst[:3] = 5, 2  # a triple edge; nodes 8 and 9 have none
    g = nw.graph((src, dst), num_nodes=10, idtype=idtype)
    check(g, None, src, dst, 10, 10)


def test_every_relation_of_a_heterograph(backend_name):
    data = {("user", "follows", "user"): ([0, 3, 1, 3], [2, 0, 2, 1]),
            ("user", "plays", "game"): ([2, 0, 2, 1, 0], [1, 1, 0, 1, 2]),
            ("game", "empty", "tag"): ([], [])}
    counts = {"user": 4, "game": 3, "tag": 2}
    g = nw.heterograph(data, counts)
    for ct, (s, d) in data.items():
        for key in (ct, ct[1]):
            check(g, key, s, d, counts[ct[0]], counts[ct[2]])


def test_block_rows_are_its_source_and_destination_nodes(backend_name):
    frontier = nw.graph(([0, 1, 2, 3, 0], [1, 2, 1, 2, 2]), num_nodes=5)
    block = nw.to_block(frontier, [1, 2])
    s, d = (np_of(t) for t in block.edges())
    check(block, None, s, d, block.num_src_nodes(), block.num_dst_nodes())
    # The destination nodes come first among the sources, as in every block.
    assert (block.num_src_nodes(), block.num_dst_nodes()) == (4, 2)


def test_follows_a_mutation_and_a_format_restriction(backend_name):
    g = nw.graph(([0, 1], [1, 2]))
    g.adj_tensors("csc")  # builds and caches CSC for the old structure
    g.add_edges([2, 0], [0, 2])
    check(g, None, [0, 1, 2, 0], [1, 2, 0, 2], 3, 3)
    g.remove_edges([1])
    check(g, None, [0, 2, 0], [1, 0, 2], 3, 3)
    # A graph restricted to one format still answers for the others (computed, not cached).
    only_coo = g.formats("coo")
    check(only_coo, None, [0, 2, 0], [1, 0, 2], 3, 3)
    assert only_coo.formats()["created"] == ["coo"]


def test_bad_arguments_raise():
    g = nw.heterograph({("user", "plays", "game"): ([0], [0]), ("user", "likes", "game"): ([0], [1])})
    for fmt in ("dense", "CSR", None, 3):
        with pytest.raises(ValueError, match="fmt must be 'coo', 'csr' or 'csc'"):
            g.adj_tensors(fmt, "plays")
    with pytest.raises((ValueError, KeyError), match="etype"):
        g.adj_tensors("coo")  # two edge types: etype is needed
    with pytest.raises((ValueError, KeyError), match="follows"):
        g.adj_tensors("coo", "follows")
