"""edge_softmax over an edge subset (DGL's ``eids=``) and through ``nodeweave.nn.functional``: the
softmax over only the listed edges, in the listed order, against NumPy; ``ALL``/None mean every
edge; on a relation of a heterograph; both backends."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
from nodeweave.nn.functional import edge_softmax


@pytest.fixture(params=["native", "pytorch"])
def T(request):
    nw.set_backend(request.param)
    yield nwb.current()
    nw.set_backend("native")


def _ref(dst, logits, n):
    out = np.empty_like(logits)
    for v in range(n):
        m = dst == v
        if m.any():
            e = np.exp(logits[m] - logits[m].max(0))
            out[m] = e / e.sum(0)
    return out


def test_subset_in_listed_order(T):
    rng = np.random.default_rng(0)
    src, dst = rng.integers(0, 6, 30), rng.integers(0, 6, 30)
    g = nw.graph((src, dst), num_nodes=6)
    eids = rng.permutation(30)[:17]
    logits = rng.standard_normal((17, 2))
    got = edge_softmax(g, T.from_numpy(logits), eids=T.from_numpy(eids))
    np.testing.assert_allclose(T.to_numpy(got), _ref(dst[eids], logits, 6), rtol=1e-12)
    full = rng.standard_normal((30, 2))
    for every in (None, nw.ALL):
        np.testing.assert_allclose(T.to_numpy(edge_softmax(g, T.from_numpy(full), every)), _ref(dst, full, 6),
                                   rtol=1e-12)
    by_src = edge_softmax(g, T.from_numpy(logits), eids=T.from_numpy(eids), norm_by="src")
    np.testing.assert_allclose(T.to_numpy(by_src), _ref(src[eids], logits, 6), rtol=1e-12)


def test_subset_of_one_relation(T):
    g = nw.heterograph({("a", "r", "b"): ([0, 1, 2, 3], [1, 1, 0, 1]), ("b", "s", "a"): ([0], [3])},
                       num_nodes_dict={"a": 4, "b": 2})
    logits = np.array([[0.0], [2.0], [5.0]])
    got = edge_softmax(g, T.from_numpy(logits), eids=[3, 0, 2], etype="r")
    np.testing.assert_allclose(T.to_numpy(got), _ref(np.array([1, 1, 0]), logits, 2), rtol=1e-12)


def test_bad_eids_raise(T):
    g = nw.graph(([0, 1], [1, 0]))
    with pytest.raises((ValueError, IndexError)):
        edge_softmax(g, T.from_numpy(np.zeros((1, 1))), eids=[5])
