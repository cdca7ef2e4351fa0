"""RelGraphConv and TypedLinear against the dense per-relation sum ``sum_r A_r X W_r`` in torch
float64, with W_r built independently for each regularizer (plain, basis = coefficient-weighted
sum of bases, bdd = torch.block_diag of the blocks); edge types presorted and unsorted; forward
values and gradients of features, norms and every parameter; bad inputs."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import RelGraphConv, TypedLinear

from nn_b_helpers import (batched_graph, bipartite_graph, compare, dense_adj, leaf, param_pairs, rand_edges,
                          torch_params)

NUM_RELS = 3


def _rel_weights(p, prefix, regularizer, num_rels, in_f, out_f, num_bases):
    W = p[prefix + "W"]
    if regularizer is None:
        return [W[r] for r in range(num_rels)]
    if regularizer == "basis":
        coeff = p[prefix + "coeff"]
        return [sum(coeff[r, b] * W[b] for b in range(num_bases)) for r in range(num_rels)]
    si, so = in_f // num_bases, out_f // num_bases
    Q = W.reshape(num_rels, num_bases, si, so)
    return [torch.block_diag(*[Q[r, b] for b in range(num_bases)]) for r in range(num_rels)]


def _dense_rgcn(p, conv, x_src, x_dst, src, dst, etypes, n_dst, norm, num_bases):
    Ws = _rel_weights(p, "linear_r.", conv.linear_r.regularizer, NUM_RELS, conv.in_feat, conv.out_feat, num_bases)
    n_src = x_src.shape[0]
    h = torch.zeros(n_dst, conv.out_feat, dtype=torch.float64)
    for r in range(NUM_RELS):
        sel = np.flatnonzero(etypes == r)
        w = None if norm is None else norm.reshape(-1)[sel]
        h = h + dense_adj(src[sel], dst[sel], n_src, n_dst, w) @ x_src @ Ws[r]
    if conv.layer_norm:
        h = torch.nn.functional.layer_norm(h, (conv.out_feat,), p["layer_norm_weight.weight"],
                                           p["layer_norm_weight.bias"])
    if conv.bias:
        h = h + p["h_bias"]
    if conv.self_loop:
        h = h + x_dst @ p["loop_weight"]
    return h


def _graph(rng, n, e, presorted):
    src, dst = rand_edges(rng, n, n, e, isolated=(1,))
    et = rng.integers(0, NUM_RELS, e)
    if presorted:
        order = np.argsort(et, kind="stable")
        src, dst, et = src[order], dst[order], et[order]
    return nw.graph((src, dst), num_nodes=n), src, dst, et


def _check(conv, g, src, dst, et, x_pair, norm, rng, n_dst, presorted, num_bases, etypes_as=nc.tensor):
    with nc.no_grad():
        if conv.bias:
            conv.h_bias.copy_(nc.tensor(rng.standard_normal(conv.out_feat)))
    p = torch_params(conv)
    pairs = param_pairs(conv, p)
    if isinstance(x_pair[0], tuple):
        (xs_nw, xs_th), (xd_nw, xd_th) = x_pair
        feat = (xs_nw, xd_nw)
        pairs += [("feat_src", xs_nw, xs_th), ("feat_dst", xd_nw, xd_th)]
    else:
        xs_nw, xs_th = x_pair
        feat, xd_th = xs_nw, xs_th[:n_dst]
        pairs.append(("feat", xs_nw, xs_th))
    norm_nw, norm_th = (None, None) if norm is None else norm
    if norm is not None:
        pairs.append(("norm", norm_nw, norm_th))
    out = conv(g, feat, etypes_as(et), norm_nw, presorted=presorted)
    ref = _dense_rgcn(p, conv, xs_th, xd_th, src, dst, et, n_dst, norm_th, num_bases)
    compare(out, ref, pairs, rng)


@pytest.mark.parametrize("regularizer,num_bases", [(None, None), ("basis", 2), ("bdd", 2), ("basis", None)])
@pytest.mark.parametrize("presorted", [False, True])
@pytest.mark.parametrize("with_norm", [False, True])
def test_rgcn_homogeneous(regularizer, num_bases, presorted, with_norm):
    rng = np.random.default_rng(0)
    g, src, dst, et = _graph(rng, 8, 22, presorted)
    nc.manual_seed(0)
    conv = RelGraphConv(4, 6, NUM_RELS, regularizer, num_bases).double()
    nb = num_bases if num_bases is not None else NUM_RELS
    norm = leaf(rng.uniform(0.1, 1.0, (len(src), 1))) if with_norm else None
    _check(conv, g, src, dst, et, leaf(rng.standard_normal((8, 4))), norm, rng, 8, presorted, nb)


@pytest.mark.parametrize("regularizer", [None, "basis", "bdd"])
def test_rgcn_presorted_equals_unsorted(regularizer):
    rng = np.random.default_rng(1)
    g, src, dst, et = _graph(rng, 6, 15, presorted=True)
    conv = RelGraphConv(4, 4, NUM_RELS, regularizer, 2).double()
    x = nc.tensor(rng.standard_normal((6, 4)))
    a = conv(g, x, nc.tensor(et), presorted=True).detach().numpy()
    b = conv(g, x, nc.tensor(et), presorted=False).detach().numpy()
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("regularizer", [None, "bdd"])
def test_rgcn_options_layer_norm_no_bias_no_self_loop_and_list_etypes(regularizer):
    rng = np.random.default_rng(2)
    g, src, dst, et = _graph(rng, 7, 16, presorted=False)
    conv = RelGraphConv(4, 4, NUM_RELS, regularizer, 2, bias=False, self_loop=False, layer_norm=True).double()
    _check(conv, g, src, dst, et, leaf(rng.standard_normal((7, 4))), None, rng, 7, False, 2,
           etypes_as=lambda a: [int(v) for v in a])


def test_rgcn_activation_and_dropout_eval():
    rng = np.random.default_rng(3)
    g, src, dst, et = _graph(rng, 5, 10, presorted=False)
    conv = RelGraphConv(3, 2, NUM_RELS, activation=nc.relu, dropout=0.5).double().eval()
    x = nc.tensor(rng.standard_normal((5, 3)))
    p = {k: torch.tensor(v.detach().numpy()) for k, v in conv.named_parameters()}
    ref = torch.relu(_dense_rgcn(p, conv, torch.tensor(x.numpy()), torch.tensor(x.numpy()), src, dst, et, 5,
                                 None, None))
    np.testing.assert_allclose(conv(g, x, nc.tensor(et)).detach().numpy(), ref.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("regularizer", [None, "basis", "bdd"])
@pytest.mark.parametrize("presorted", [False, True])
def test_rgcn_batched(regularizer, presorted):
    rng = np.random.default_rng(4)
    bg, src, dst = batched_graph(rng, (4, 1, 6), (8, 0, 12))
    et = rng.integers(0, NUM_RELS, len(src))
    if presorted:  # batching keeps edge order, so sort within a fresh batched graph
        order = np.argsort(et, kind="stable")
        src, dst, et = src[order], dst[order], et[order]
        bg = nw.graph((src, dst), num_nodes=11)
        bg.set_batch_num_nodes([4, 1, 6])
    conv = RelGraphConv(4, 4, NUM_RELS, regularizer, 2).double()
    _check(conv, bg, src, dst, et, leaf(rng.standard_normal((11, 4))), None, rng, 11, presorted, 2)


@pytest.mark.parametrize("regularizer", [None, "basis", "bdd"])
def test_rgcn_bipartite_pair(regularizer):
    rng = np.random.default_rng(5)
    g, src, dst = bipartite_graph(rng, n_src=6, n_dst=4, e=14, isolated=(3,))
    et = rng.integers(0, NUM_RELS, len(src))
    conv = RelGraphConv(4, 6, NUM_RELS, regularizer, 2).double()
    pair = (leaf(rng.standard_normal((6, 4))), leaf(rng.standard_normal((4, 4))))
    norm = leaf(rng.uniform(0.1, 1.0, len(src)))  # 1-D norm is accepted too
    _check(conv, g, src, dst, et, pair, norm, rng, 4, False, 2)


def _one_hot(ids, n):
    return torch.nn.functional.one_hot(torch.tensor(ids), n).double()


@pytest.mark.parametrize("regularizer,num_bases", [(None, None), ("basis", 2), ("basis", None)])
@pytest.mark.parametrize("presorted", [False, True])
@pytest.mark.parametrize("with_norm", [False, True])
def test_rgcn_node_id_input_is_one_hot(regularizer, num_bases, presorted, with_norm):
    """Integer node ids (featureless input) equal the dense one-hot rows: values and the gradients
    of every parameter and the norm. Ids repeat and skip categories (9 categories, 8 nodes)."""
    rng = np.random.default_rng(7)
    g, src, dst, et = _graph(rng, 8, 22, presorted)
    conv = RelGraphConv(9, 5, NUM_RELS, regularizer, num_bases).double()
    with nc.no_grad():
        conv.h_bias.copy_(nc.tensor(rng.standard_normal(5)))
    ids = np.array([8, 0, 3, 3, 5, 1, 8, 2])
    p = torch_params(conv)
    pairs = param_pairs(conv, p)
    norm_nw, norm_th = leaf(rng.uniform(0.1, 1.0, (len(src), 1))) if with_norm else (None, None)
    if with_norm:
        pairs.append(("norm", norm_nw, norm_th))
    out = conv(g, nc.tensor(ids), nc.tensor(et), norm_nw, presorted=presorted)
    x = _one_hot(ids, 9)
    nb = num_bases if num_bases is not None else NUM_RELS
    compare(out, _dense_rgcn(p, conv, x, x, src, dst, et, 8, norm_th, nb), pairs, rng)


@pytest.mark.parametrize("regularizer", [None, "basis"])
def test_rgcn_node_id_pair_on_bipartite_graph_and_block(regularizer):
    rng = np.random.default_rng(8)
    g, src, dst = bipartite_graph(rng, n_src=6, n_dst=4, e=14, isolated=(3,))
    et = rng.integers(0, NUM_RELS, len(src))
    conv = RelGraphConv(7, 3, NUM_RELS, regularizer, 2).double()
    ids_src, ids_dst = np.array([6, 0, 1, 2, 4, 5]), np.array([3, 3, 0, 6])
    p = torch_params(conv)
    out = conv(g, (nc.tensor(ids_src), nc.tensor(ids_dst)), nc.tensor(et))
    ref = _dense_rgcn(p, conv, _one_hot(ids_src, 7), _one_hot(ids_dst, 7), src, dst, et, 4, None, 2)
    compare(out, ref, param_pairs(conv, p), rng)
    # A block: the destination ids are the first num_dst_nodes source ids.
    g.is_block = True  # a bipartite graph with the mark stands in for a block (see test_nn_b_block)
    ids = np.array([2, 6, 0, 1, 5, 4])
    conv.zero_grad()
    p = torch_params(conv)
    out = conv(g, nc.tensor(ids), nc.tensor(et))
    x = _one_hot(ids, 7)
    ref = _dense_rgcn(p, conv, x, x[:4], src, dst, et, 4, None, 2)
    compare(out, ref, param_pairs(conv, p), rng)


def test_rgcn_node_id_input_bad_values_and_bdd():
    rng = np.random.default_rng(9)
    g, src, dst, et = _graph(rng, 6, 12, presorted=False)
    conv = RelGraphConv(6, 2, NUM_RELS)
    with pytest.raises(ValueError, match=r"feat holds node ids .* must be in \[0, 6\) \(in_feat\), got values 1\.\.6"):
        conv(g, nc.tensor(np.arange(1, 7)), nc.tensor(et))
    with pytest.raises(ValueError, match=r"feat holds node ids .*got values -1\.\.4"):
        conv(g, nc.tensor(np.arange(-1, 5)), nc.tensor(et))
    with pytest.raises(ValueError, match="feat must have one row per source node"):
        conv(g, nc.tensor(np.arange(5)), nc.tensor(et))
    with pytest.raises(ValueError, match="bdd.*node-id"):
        RelGraphConv(6, 2, NUM_RELS, "bdd", 2)(g, nc.tensor(np.arange(6)), nc.tensor(et))
    with pytest.raises(ValueError, match="feat"):  # booleans are not ids
        conv(g, nc.tensor(np.ones(6, bool)), nc.tensor(et))


def test_rgcn_graph_without_edges():
    g = nw.graph(([], []), num_nodes=3)
    conv = RelGraphConv(2, 2, NUM_RELS, "basis", 2).double()
    x = nc.tensor(np.ones((3, 2)))
    for presorted in (False, True):
        out = conv(g, x, nc.tensor(np.zeros(0, np.int64)), presorted=presorted).detach().numpy()
        np.testing.assert_allclose(out, x.numpy() @ conv.loop_weight.detach().numpy(), atol=1e-12)


def test_rgcn_parameters_and_init():
    conv = RelGraphConv(8, 6, 4, "basis")
    names = dict(conv.named_parameters())
    assert tuple(names["linear_r.W"].shape) == (4, 8, 6)  # num_bases defaults to num_rels
    assert tuple(names["linear_r.coeff"].shape) == (4, 4)
    assert (names["h_bias"].detach().numpy() == 0).all()
    assert np.abs(names["linear_r.W"].detach().numpy()).max() <= 1 / np.sqrt(8)
    bdd = RelGraphConv(8, 6, 4, "bdd", 2)
    w = bdd.linear_r.W.detach().numpy()
    assert w.shape == (4, 2 * 4 * 3) and np.abs(w).max() <= 1 / np.sqrt(4)
    assert sorted(dict(RelGraphConv(2, 2, 2, self_loop=False, bias=False).named_parameters())) == ["linear_r.W"]


def test_rgcn_bad_inputs_name_the_argument():
    rng = np.random.default_rng(6)
    g, src, dst, et = _graph(rng, 6, 12, presorted=False)
    conv = RelGraphConv(3, 2, NUM_RELS)
    x = nc.ones(6, 3)
    with pytest.raises(ValueError, match=r"etypes must have one entry per edge \(12\), got 11"):
        conv(g, x, nc.tensor(et[:-1]))
    with pytest.raises(ValueError, match=r"num_rels=3.*etypes must be in \[0, 3\)"):
        conv(g, x, nc.tensor(np.full(12, 3)))
    with pytest.raises(ValueError, match="etypes"):
        conv(g, x, nc.tensor(-np.ones(12, np.int64)))
    with pytest.raises(TypeError, match="etypes"):
        conv(g, x, nc.ones(12))
    with pytest.raises(ValueError, match="presorted=True but etypes is not sorted"):
        conv(g, x, nc.tensor(np.array([0, 2, 1] * 4)), presorted=True)
    with pytest.raises(ValueError, match="feat must have one row per source node"):
        conv(g, nc.ones(5, 3), nc.tensor(et))
    with pytest.raises(ValueError, match="feat"):
        conv(g, nc.ones(6, 4), nc.tensor(et))
    with pytest.raises(ValueError, match="norm"):
        conv(g, x, nc.tensor(et), nc.ones(11, 1))
    with pytest.raises(ValueError, match="num_rels"):
        RelGraphConv(3, 2, 0)
    with pytest.raises(ValueError, match="regularizer"):
        RelGraphConv(3, 2, 2, "lowrank")
    with pytest.raises(ValueError, match="num_bases"):
        RelGraphConv(3, 4, 2, "bdd", 2)


# ---------------------------------------------------------------- TypedLinear on its own
@pytest.mark.parametrize("regularizer", [None, "basis", "bdd"])
@pytest.mark.parametrize("sorted_by_type", [False, True])
def test_typed_linear(regularizer, sorted_by_type):
    rng = np.random.default_rng(7)
    lin = TypedLinear(4, 6, 3, regularizer, 2).double()
    types = rng.integers(0, 3, 9)
    if sorted_by_type:
        types = np.sort(types)
    x_nw, x_th = leaf(rng.standard_normal((9, 4)))
    p = torch_params(lin)
    Ws = _rel_weights(p, "", regularizer, 3, 4, 6, 2)
    ref = torch.stack([x_th[i] @ Ws[types[i]] for i in range(9)])
    compare(lin(x_nw, nc.tensor(types), sorted_by_type=sorted_by_type), ref,
            [("x", x_nw, x_th)] + param_pairs(lin, p), rng)
    dense = lin.dense_weight().detach().numpy()
    np.testing.assert_allclose(dense, torch.stack(Ws).detach().numpy(), rtol=1e-12)
