"""Readouts and global pooling on batches of graphs of different sizes (one with a single node,
one without edges, one without nodes) against per-graph dense formulas evaluated with torch
float64 autograd: values and gradients of the features and every parameter."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import (AvgPooling, GlobalAttentionPooling, MaxPooling, Set2Set, SortPooling,
                          SumPooling)

from nn_b_helpers import batched_graph, compare, leaf, param_pairs, segments, torch_params

SIZES = (4, 1, 6, 3)


@pytest.fixture
def batch():
    rng = np.random.default_rng(0)
    bg, _, _ = batched_graph(rng, SIZES, (5, 0, 9, 2))
    return bg, rng


def _per_graph(x_th, fn, sizes=SIZES):
    return torch.stack([fn(x_th[s]) for s in segments(sizes)])


@pytest.mark.parametrize("pool,ref", [
    (SumPooling, lambda x: x.sum(0)),
    (AvgPooling, lambda x: x.mean(0)),
    (MaxPooling, lambda x: x.max(0).values),
])
def test_basic_pooling(batch, pool, ref):
    bg, rng = batch
    x_nw, x_th = leaf(rng.standard_normal((sum(SIZES), 3)))
    compare(pool()(bg, x_nw), _per_graph(x_th, ref), [("feat", x_nw, x_th)], rng)


def test_pooling_with_an_empty_graph_gives_zeros():
    rng = np.random.default_rng(1)
    bg, _, _ = batched_graph(rng, (2, 0, 3), (1, 0, 2))
    x = nc.tensor(rng.standard_normal((5, 2)))
    for pool in (SumPooling(), AvgPooling(), MaxPooling()):
        out = pool(bg, x).numpy()
        assert out.shape == (3, 2)
        np.testing.assert_array_equal(out[1], 0.0)


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("weighted", [False, True])
def test_readout_nodes_by_name_and_weight(batch, op, weighted):
    bg, rng = batch
    x_nw, x_th = leaf(rng.standard_normal((sum(SIZES), 2)))
    w_nw, w_th = leaf(rng.standard_normal((sum(SIZES), 1)))
    bg.ndata["x"] = x_nw
    bg.ndata["w"] = w_nw
    out = nw.readout_nodes(bg, "x", "w" if weighted else None, op=op)
    xw = x_th * w_th if weighted else x_th
    red = {"sum": lambda t: t.sum(0), "mean": lambda t: t.mean(0), "max": lambda t: t.max(0).values,
           "min": lambda t: t.min(0).values}[op]
    pairs = [("feat", x_nw, x_th)] + ([("weight", w_nw, w_th)] if weighted else [])
    compare(out, _per_graph(xw, red), pairs, rng)


def test_named_node_readouts_match_readout_nodes(batch):
    bg, rng = batch
    x = nc.tensor(rng.standard_normal((sum(SIZES), 2)))
    for fn, op in ((nw.sum_nodes, "sum"), (nw.mean_nodes, "mean"), (nw.max_nodes, "max")):
        np.testing.assert_array_equal(fn(bg, x).numpy(), nw.readout_nodes(bg, x, op=op).numpy())
    w1 = nc.tensor(rng.standard_normal(sum(SIZES)))
    np.testing.assert_allclose(nw.sum_nodes(bg, x, w1).numpy(),
                               nw.sum_nodes(bg, x, w1.reshape(-1, 1)).numpy())


def test_edge_readouts(batch):
    bg, rng = batch
    ecounts = bg.batch_num_edges().tolist()
    e_nw, e_th = leaf(rng.standard_normal((bg.num_edges(), 2)))
    ref = torch.stack([e_th[s].sum(0) if s.stop > s.start else torch.zeros(2, dtype=torch.float64)
                       for s in segments(ecounts)])
    compare(nw.sum_edges(bg, e_nw), ref, [("feat", e_nw, e_th)], rng)
    x = e_nw.detach()
    means = [x.numpy()[s].mean(0) if s.stop > s.start else np.zeros(2) for s in segments(ecounts)]
    np.testing.assert_allclose(nw.mean_edges(bg, x).numpy(), np.stack(means))
    maxes = [x.numpy()[s].max(0) if s.stop > s.start else np.zeros(2) for s in segments(ecounts)]
    np.testing.assert_allclose(nw.max_edges(bg, x).numpy(), np.stack(maxes))
    sm = nw.softmax_edges(bg, x).numpy()
    for s in segments(ecounts):
        v = x.numpy()[s]
        np.testing.assert_allclose(sm[s], np.exp(v) / np.exp(v).sum(0) if len(v) else v)
    b = nw.broadcast_edges(bg, nc.tensor(np.arange(4.0).reshape(4, 1))).numpy()
    np.testing.assert_array_equal(b[:, 0], np.repeat(np.arange(4.0), ecounts))


def test_softmax_and_broadcast_nodes(batch):
    bg, rng = batch
    x_nw, x_th = leaf(rng.standard_normal((sum(SIZES), 2)))
    compare(nw.softmax_nodes(bg, x_nw),
            torch.cat([torch.softmax(x_th[s], 0) for s in segments(SIZES)]), [("feat", x_nw, x_th)], rng)
    q_nw, q_th = leaf(rng.standard_normal((len(SIZES), 3)))
    compare(nw.broadcast_nodes(bg, q_nw),
            torch.cat([q_th[i].expand(n, 3) for i, n in enumerate(SIZES)]), [("graph_feat", q_nw, q_th)], rng)


@pytest.mark.parametrize("descending", [True, False])
def test_topk_nodes_per_column_and_sortby(batch, descending):
    bg, rng = batch
    x = rng.standard_normal((sum(SIZES), 3))
    k = 3
    vals, idx = nw.topk_nodes(bg, nc.tensor(x), k, descending=descending)
    vals_s, idx_s = nw.topk_nodes(bg, nc.tensor(x), k, descending=descending, sortby=1)
    assert tuple(vals.shape) == (4, k, 3) and tuple(idx.shape) == (4, k, 3) and tuple(idx_s.shape) == (4, k)
    for b, s in enumerate(segments(SIZES)):
        part = x[s]
        n = len(part)
        order = np.argsort(-part if descending else part, axis=0, kind="stable")[:k]
        want = np.zeros((k, 3))
        want[:min(n, k)] = np.take_along_axis(part, order, 0)
        np.testing.assert_allclose(vals.numpy()[b], want)
        np.testing.assert_array_equal(idx.numpy()[b][:min(n, k)], order)
        assert (idx.numpy()[b][n:] == -1).all()
        rows = np.argsort(-part[:, 1] if descending else part[:, 1], kind="stable")[:k]
        want_s = np.zeros((k, 3))
        want_s[:min(n, k)] = part[rows]
        np.testing.assert_allclose(vals_s.numpy()[b], want_s)
        np.testing.assert_array_equal(idx_s.numpy()[b][:min(n, k)], rows)


def test_sort_pooling(batch):
    bg, rng = batch
    k = 3
    x_nw, x_th = leaf(rng.standard_normal((sum(SIZES), 4)))
    out = SortPooling(k)(bg, x_nw)

    def ref(part):
        srt = torch.sort(part, -1).values
        order = torch.argsort(srt[:, -1], descending=True)[:k]
        top = srt[order]
        pad = torch.zeros(k - len(top), 4, dtype=torch.float64)
        return torch.cat([top, pad]).reshape(-1)

    compare(out, _per_graph(x_th, ref), [("feat", x_nw, x_th)], rng)


@pytest.mark.parametrize("with_feat_nn", [False, True])
def test_global_attention_pooling(batch, with_feat_nn):
    bg, rng = batch
    nc.manual_seed(0)
    gate = nc.nn.Linear(3, 1).double()
    feat_nn = nc.nn.Linear(3, 5).double() if with_feat_nn else None
    pool = GlobalAttentionPooling(gate, feat_nn)
    p = torch_params(pool)
    x_nw, x_th = leaf(rng.standard_normal((sum(SIZES), 3)))
    out, att = pool(bg, x_nw, get_attention=True)
    score = x_th @ p["gate_nn.weight"].T + p["gate_nn.bias"]
    val = x_th @ p["feat_nn.weight"].T + p["feat_nn.bias"] if with_feat_nn else x_th
    parts = []
    for s in segments(SIZES):
        a = torch.softmax(score[s], 0)
        parts.append((a * val[s]).sum(0))
    np.testing.assert_allclose(att.detach().numpy().sum(), len(SIZES))
    compare(out, torch.stack(parts), [("feat", x_nw, x_th)] + param_pairs(pool, p), rng)


@pytest.mark.parametrize("n_layers", [1, 2])
def test_set2set(batch, n_layers):
    bg, rng = batch
    nc.manual_seed(0)
    d = 3
    s2s = Set2Set(d, n_iters=3, n_layers=n_layers).double()
    ref_lstm = torch.nn.LSTM(2 * d, d, n_layers).double()
    ref_lstm.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in s2s.lstm.state_dict().items()})
    x_nw, x_th = leaf(rng.standard_normal((sum(SIZES), d)))
    B = len(SIZES)
    h = (torch.zeros(n_layers, B, d, dtype=torch.float64),) * 2
    q_star = torch.zeros(B, 2 * d, dtype=torch.float64)
    for _ in range(3):
        q, h = ref_lstm(q_star.unsqueeze(0), h)
        q = q.reshape(B, d)
        reads = []
        for b, s in enumerate(segments(SIZES)):
            a = torch.softmax((x_th[s] * q[b]).sum(-1, keepdim=True), 0)
            reads.append((a * x_th[s]).sum(0))
        q_star = torch.cat([q, torch.stack(reads)], -1)
    p_th = dict(ref_lstm.named_parameters())
    pairs = [("feat", x_nw, x_th)] + [(f"lstm.{k}", v, p_th[k]) for k, v in s2s.lstm.named_parameters()]
    compare(s2s(bg, x_nw), q_star, pairs, np.random.default_rng(3))


def test_unbatched_graph_is_a_batch_of_one():
    g = nw.graph(([0, 1], [1, 2]))
    x = nc.tensor([[1.0], [2.0], [6.0]])
    assert SumPooling()(g, x).tolist() == [[9.0]]
    assert tuple(Set2Set(1, 1, 1)(g, x).shape) == (1, 2)


def test_bad_inputs_name_the_argument(batch):
    bg, _ = batch
    n = sum(SIZES)
    with pytest.raises(ValueError, match="feat"):
        SumPooling()(bg, nc.zeros(n + 1, 2))
    with pytest.raises(ValueError, match="feat"):
        nw.sum_nodes(bg, nc.zeros(n - 1, 2))
    with pytest.raises(ValueError, match="weight"):
        nw.sum_nodes(bg, nc.zeros(n, 2), nc.zeros(3, 1))
    with pytest.raises(KeyError, match="nope"):
        nw.sum_nodes(bg, "nope")
    with pytest.raises(ValueError, match="graph_feat"):
        nw.broadcast_nodes(bg, nc.zeros(3, 2))
    with pytest.raises(ValueError, match="op"):
        nw.readout_nodes(bg, nc.zeros(n, 2), op="prod")
    with pytest.raises(ValueError, match="k"):
        SortPooling(0)
    with pytest.raises(ValueError, match="sortby"):
        nw.topk_nodes(bg, nc.zeros(n, 2), 2, sortby=5)
    with pytest.raises(ValueError, match="feat"):
        Set2Set(3, 1, 1)(bg, nc.zeros(n, 4))
    with pytest.raises(ValueError, match="gate_nn"):
        GlobalAttentionPooling(nc.nn.Linear(2, 2))(bg, nc.zeros(n, 2))
