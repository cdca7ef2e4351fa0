"""User-defined message passing through degree buckets (``nodeweave.graph.degree_buckets``, the one
gather + ``split_rows`` layout, lazily gathered edge and node batches), on both backends:

- the bucket plan against a brute-force grouping of a random graph's in-edges;
- ``update_all`` with a message lambda and a mailbox max / a mailbox reduce reading ``nodes.data``:
  output and float64 gradients of the node and edge inputs against NumPy formulas, on a graph with
  many distinct in-degrees and nodes without in-edges;
- ``apply_edges`` reading ``edges.src`` / ``edges.dst`` (gathered by the gSDDMM copy kernel) and an
  integer node column (gathered by ``index_select``), values and gradients;
- ``split_rows``: views, one gradient for all pieces (float64 gradcheck), bad sizes raising by name.
"""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.backend as nwb
import nodeweave.core as nc
from conftest import np_of
from nodeweave.graph.degree_buckets import DegreeBuckets


def random_graph(rng, n=60, e=700):
    # Skewed in-degrees (many distinct values) and some nodes without in-edges.
    dst = (rng.pareto(1.2, e) * 3).astype(np.int64) % (n - 5)
    src = rng.integers(0, n, e)
    return src, dst, n


def leaf(arr):
    if nwb.current().name == "pytorch":
        import torch

        return torch.tensor(arr, requires_grad=True)
    return nc.tensor(arr, requires_grad=True)


def grad_of(t):
    return np_of(t.grad)


def test_plan_groups_every_in_edge_by_degree(rng):
    src, dst, n = random_graph(rng)
    order = np.argsort(dst, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(dst, minlength=n))])
    plan = DegreeBuckets(indptr, order)
    deg = np.bincount(dst, minlength=n)
    seen, at = [], 0
    for (d, nodes), count in zip(plan.buckets(), plan.edge_counts):
        assert count == d * len(nodes) and (deg[nodes] == d).all()
        assert (np.diff(nodes) > 0).all()  # ascending ids within a bucket
        rows = plan.edge_order[at:at + count].reshape(len(nodes), d)
        for v, eids in zip(nodes, rows):
            assert (dst[eids] == v).all() and sorted(eids) == sorted(np.flatnonzero(dst == v))
        seen += nodes.tolist()
        at += count
    assert sorted(seen) == np.flatnonzero(deg > 0).tolist()
    assert sorted(plan.edge_order.tolist()) == list(range(dst.size))
    assert len(plan) == len(np.unique(deg[deg > 0]))


def test_plan_of_a_graph_without_edges():
    plan = DegreeBuckets(np.zeros(4, np.int64), np.zeros(0, np.int64))
    assert len(plan) == 0 and list(plan.buckets()) == [] and plan.edge_order.size == 0


def test_update_all_mailbox_max_value_and_gradients(backend_name, rng):
    src, dst, n = random_graph(rng)
    h0 = rng.standard_normal((n, 3))
    w0 = rng.random((src.size, 1)) + 0.1
    r = rng.standard_normal((n, 3))  # weights of the loss, so every output row matters differently
    g = nw.graph((src, dst), num_nodes=n)
    h, w = leaf(h0), leaf(w0)
    g.ndata["h"], g.edata["w"] = h, w
    g.update_all(lambda e: {"m": e.src["h"] * e.data["w"]}, lambda nb: {"o": nb.mailbox["m"].amax(1)})
    out = g.ndata["o"]
    (out * nwb.of(out).from_numpy(r)).sum().backward()

    msg = h0[src] * w0
    want = np.zeros((n, 3))
    gh, gw = np.zeros_like(h0), np.zeros_like(w0)
    for v in np.unique(dst):
        eids = np.flatnonzero(dst == v)
        best = eids[np.argmax(msg[eids], axis=0)]  # per feature; random floats have no ties
        for j, e in enumerate(best):
            want[v, j] = msg[e, j]
            gh[src[e], j] += r[v, j] * w0[e, 0]
            gw[e, 0] += r[v, j] * h0[src[e], j]
    np.testing.assert_allclose(np_of(out), want, rtol=1e-12)  # no mail: zeros
    np.testing.assert_allclose(grad_of(h), gh, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad_of(w), gw, rtol=1e-10, atol=1e-12)


def test_mailbox_reduce_reads_node_data_and_3d_messages(backend_name, rng):
    src, dst, n = random_graph(rng, n=40, e=300)
    h0 = rng.standard_normal((n, 2, 3))
    b0 = rng.standard_normal((n, 2, 3))
    g = nw.graph((src, dst), num_nodes=n)
    h, bias = leaf(h0), leaf(b0)
    g.ndata["h"], g.ndata["bias"] = h, bias
    g.ndata["label"] = nwb.current().from_numpy(np.arange(n, dtype=np.int64))  # never read
    g.update_all(lambda e: {"m": e.src["h"] * 2.0},
                 lambda nb: {"o": (nb.mailbox["m"] ** 2).sum(1) + nb.data["bias"]})
    out = g.ndata["o"]
    out.sum().backward()

    want = np.zeros_like(h0)
    gh = np.zeros_like(h0)
    for v in np.unique(dst):
        eids = np.flatnonzero(dst == v)
        want[v] = (4 * h0[src[eids]] ** 2).sum(0) + b0[v]
        for e in eids:
            gh[src[e]] += 8 * h0[src[e]]
    got_b = np.zeros_like(b0)
    got_b[np.unique(dst)] = 1.0  # nodes without mail are not reduced: their bias is not read
    np.testing.assert_allclose(np_of(out), want, rtol=1e-12)
    np.testing.assert_allclose(grad_of(h), gh, rtol=1e-12)
    np.testing.assert_allclose(grad_of(bias), got_b)


def test_apply_edges_endpoints_and_integer_columns(backend_name, rng):
    src, dst, n = random_graph(rng, n=30, e=200)
    h0 = rng.standard_normal((n, 4))
    g = nw.graph((src, dst), num_nodes=n)
    h = leaf(h0)
    g.ndata["h"] = h
    g.ndata["id"] = nwb.current().from_numpy(np.arange(n, dtype=np.int64) * 10)
    g.apply_edges(lambda e: {"s": (e.src["h"] * e.dst["h"]).sum(-1), "pair": e.src["id"] + e.dst["id"]})
    s = g.edata["s"]
    s.sum().backward()
    np.testing.assert_allclose(np_of(s), (h0[src] * h0[dst]).sum(-1), rtol=1e-12)
    np.testing.assert_array_equal(np_of(g.edata["pair"]), 10 * (src + dst))
    gh = np.zeros_like(h0)
    np.add.at(gh, src, h0[dst])
    np.add.at(gh, dst, h0[src])
    np.testing.assert_allclose(grad_of(h), gh, rtol=1e-12)


def test_send_and_recv_subset_uses_the_edges_given(backend_name, rng):
    src, dst, n = random_graph(rng, n=30, e=200)
    h0 = rng.standard_normal((n, 2))
    g = nw.graph((src, dst), num_nodes=n)
    g.ndata["h"] = nwb.current().from_numpy(h0)
    eids = np.flatnonzero(np.arange(src.size) % 3 == 0)
    g.send_and_recv(eids, lambda e: {"m": e.src["h"] + 1.0}, lambda nb: {"o": nb.mailbox["m"].amax(1)})
    want = np.zeros((n, 2))
    for v in np.unique(dst[eids]):
        want[v] = (h0[src[eids][dst[eids] == v]] + 1).max(0)
    got = np_of(g.ndata["o"])
    np.testing.assert_allclose(got[np.unique(dst[eids])], want[np.unique(dst[eids])], rtol=1e-12)


def test_split_rows_views_and_one_gradient(rng):
    from nodeweave._C import split_rows

    x = nc.tensor(rng.standard_normal((7, 3)), requires_grad=True)
    parts = split_rows(x, [2, 0, 5])
    assert [tuple(p.shape) for p in parts] == [(2, 3), (0, 3), (5, 3)]
    np.testing.assert_array_equal(parts[2].detach().numpy(), x.detach().numpy()[2:])
    assert nc.autograd.gradcheck(lambda t: (split_rows(t, [3, 4])[1] ** 2).sum() + split_rows(t, [3, 4])[0].sum(), (x,))
    (parts[0] * 2).sum().backward()  # the other pieces got no gradient: zeros there
    np.testing.assert_array_equal(x.grad.numpy(), np.r_[np.full((2, 3), 2.0), np.zeros((5, 3))])


@pytest.mark.parametrize("sizes, words", [([2, 2], ["sum to 4", "7 rows"]), ([8, -1], ["non-negative", "-1"])])
def test_split_rows_bad_sizes(sizes, words):
    from nodeweave._C import split_rows

    with pytest.raises(ValueError) as e:
        split_rows(nc.ones(7, 3), sizes)
    assert all(w in str(e.value) for w in words)
