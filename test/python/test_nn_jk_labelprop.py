"""JumpingKnowledge and LabelPropagation on both backends against independent references:
JumpingKnowledge's three modes against torch float64 formulas (the bidirectional LSTM written out
gate by gate, values and gradients of every input and parameter); LabelPropagation against its
iteration written with a dense NumPy float64 adjacency matrix (multi-edges counted), for both
normalizations, every post-step option, every label and mask form, and batches. Then their errors
for bad input."""

import numpy as np
import pytest
import torch

import nodeweave as nw

from layer_ref_helpers import BACKENDS, check_layer, side, tensor, to_numpy


# ---------------------------------------------------------------------------- JumpingKnowledge
def layer_feats(rng, n=5, d=4, layers=3):
    return {f"h{i}": rng.standard_normal((n, d)) for i in range(layers)}


def as_list(t):
    return [t[k] for k in sorted(t)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_jk_cat_and_max(backend):
    rng = np.random.default_rng(40)
    inputs = layer_feats(rng)
    check_layer(backend, lambda ns: ns.nn.JumpingKnowledge("cat"), lambda m, t: m(as_list(t)),
                lambda p, b, t: torch.cat(as_list(t), dim=1), inputs, rng)
    check_layer(backend, lambda ns: ns.nn.JumpingKnowledge("max"), lambda m, t: m(as_list(t)),
                lambda p, b, t: torch.stack(as_list(t)).amax(0), inputs, rng)


@pytest.mark.parametrize("backend", BACKENDS)
def test_jk_cat_keeps_different_widths_and_extra_dims(backend):
    rng = np.random.default_rng(41)
    inputs = {"h0": rng.standard_normal((3, 2, 4)), "h1": rng.standard_normal((3, 2, 1))}
    check_layer(backend, lambda ns: ns.nn.JumpingKnowledge(), lambda m, t: m(as_list(t)),
                lambda p, b, t: torch.cat(as_list(t), dim=-1), inputs, rng)


def lstm_direction(p, suffix, seq):
    """One direction of a one-layer LSTM over ``seq`` ``(L, N, D)`` (gates i, f, g, o), its
    hidden states ``(L, N, H)``."""
    w_ih, w_hh = p["lstm.weight_ih_l0" + suffix], p["lstm.weight_hh_l0" + suffix]
    bias = p["lstm.bias_ih_l0" + suffix] + p["lstm.bias_hh_l0" + suffix]
    hidden = w_hh.shape[1]
    h = torch.zeros(seq.shape[1], hidden, dtype=torch.float64)
    c = torch.zeros_like(h)
    states = []
    for x in seq:
        z = x @ w_ih.T + h @ w_hh.T + bias
        i, f, g, o = (z[:, k * hidden:(k + 1) * hidden] for k in range(4))
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        states.append(h)
    return torch.stack(states)


def ref_jk_lstm(p, feats):
    seq = torch.stack(feats)                                         # (L, N, D)
    fwd = lstm_direction(p, "", seq)
    bwd = lstm_direction(p, "_reverse", seq.flip(0)).flip(0)
    states = torch.cat([fwd, bwd], dim=-1)                           # (L, N, 2H)
    scores = (states @ p["att.weight"].T + p["att.bias"]).squeeze(-1)  # (L, N)
    alpha = torch.softmax(scores, dim=0)
    return (alpha.unsqueeze(-1) * seq).sum(0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layers,d", [(3, 4), (2, 1)])
def test_jk_lstm(backend, layers, d):
    rng = np.random.default_rng(42)
    inputs = layer_feats(rng, 6, d, layers)
    jk = check_layer(backend, lambda ns: ns.nn.JumpingKnowledge("lstm", in_feats=d, num_layers=layers),
                     lambda m, t: m(as_list(t)), lambda p, b, t: ref_jk_lstm(p, as_list(t)), inputs, rng)
    hidden = layers * d // 2
    assert tuple(jk.lstm.weight_hh_l0.shape) == (4 * hidden, hidden)
    assert tuple(jk.att.weight.shape) == (1, 2 * hidden)


def test_jk_has_parameters_only_for_lstm():
    ns = side("native")
    assert list(ns.nn.JumpingKnowledge("max").parameters()) == []
    assert list(ns.nn.JumpingKnowledge("cat", in_feats=3, num_layers=2).parameters()) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_jk_bad_inputs(backend):
    ns = side(backend)
    ones = ns.T.ones
    cases = [
        (lambda: ns.nn.JumpingKnowledge("sum"), ValueError, "mode must be 'cat', 'max' or 'lstm', got 'sum'"),
        (lambda: ns.nn.JumpingKnowledge("lstm", in_feats=4), ValueError, "needs in_feats and num_layers"),
        (lambda: ns.nn.JumpingKnowledge("lstm", in_feats=0, num_layers=2), ValueError,
         "in_feats must be a positive int"),
        (lambda: ns.nn.JumpingKnowledge("lstm", in_feats=1, num_layers=1), ValueError, "hidden size"),
        (lambda: ns.nn.JumpingKnowledge()(ones(3, 2)), TypeError, "feat_list must be a non-empty list"),
        (lambda: ns.nn.JumpingKnowledge()([]), TypeError, "feat_list must be a non-empty list"),
        (lambda: ns.nn.JumpingKnowledge()([ones(3, 2), [[1.0]]]), TypeError, r"feat_list\[1\] must be a tensor"),
        (lambda: ns.nn.JumpingKnowledge("max")([ones(3, 2), ones(3, 3)]), ValueError,
         r"feat_list\[1\] is \(3, 3\)"),
        (lambda: ns.nn.JumpingKnowledge("lstm", 2, 2)([ones(3, 3), ones(3, 3)]), ValueError,
         r"\(num_nodes, in_feats=2\)"),
    ]
    for call, err, msg in cases:
        with pytest.raises(err, match=msg):
            call()


# ---------------------------------------------------------------------------- LabelPropagation
def ref_label_prop(src, dst, n, y0, known, k, alpha, norm, clamp, normalize, reset):
    """The propagation with a dense adjacency ``A[v, u]`` = number of edges u -> v."""
    adj = np.zeros((n, n))
    np.add.at(adj, (dst, src), 1.0)
    d_in = np.maximum(adj.sum(1), 1.0)
    d_out = np.maximum(adj.sum(0), 1.0)
    if norm == "sym":
        a_hat = d_in[:, None] ** -0.5 * adj * d_out[None, :] ** -0.5
    else:
        a_hat = adj / d_in[:, None]
    y = np.where(known[:, None], y0, 0.0)
    init = (1 - alpha) * y
    for _ in range(k):
        y = init + alpha * a_hat @ y
        if clamp:
            y = np.clip(y, 0.0, 1.0)
        if normalize:
            y = y / np.maximum(np.abs(y).sum(1, keepdims=True), 1e-12)
        if reset:
            y = np.where(known[:, None], y0, y)
    return y


def random_graph(rng, n=9, ne=20):
    """Repeated edges and self-loops allowed; node 0 has no in-edges and node 1 no out-edges."""
    src = rng.integers(1, n, ne)
    src[src == 1] = 2
    dst = rng.integers(1, n, ne)
    return src.astype(np.int64), dst.astype(np.int64), n


OPTIONS = [(True, False, False), (False, True, False), (False, False, True), (True, True, True)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("norm", ["sym", "row"])
@pytest.mark.parametrize("clamp,normalize,reset", OPTIONS)
def test_label_prop_class_ids(backend, norm, clamp, normalize, reset):
    rng = np.random.default_rng(43)
    src, dst, n = random_graph(rng)
    ids = rng.integers(0, 4, n)
    ids[3] = 3  # every class present, so one-hot has 4 columns
    known = rng.random(n) < 0.5
    known[[0, 3]] = True
    ns = side(backend)
    lp = ns.nn.LabelPropagation(3, 0.7, norm, clamp, normalize, reset)
    got = lp(nw.graph((src, dst), num_nodes=n), tensor(ns, ids), mask=tensor(ns, known))
    assert got.dtype == ns.T.float32
    want = ref_label_prop(src, dst, n, np.eye(4)[ids], known, 3, 0.7, norm, clamp, normalize, reset)
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_label_prop_label_and_mask_forms_agree(backend):
    """(N,) and (N, 1) class ids and their one-hot matrix; a boolean mask and the same nodes as ids."""
    rng = np.random.default_rng(44)
    src, dst, n = random_graph(rng)
    g = nw.graph((src, dst), num_nodes=n)
    ids = rng.integers(0, 3, n)
    ids[:3] = [0, 1, 2]
    known = np.zeros(n, bool)
    known[[1, 4, 5]] = True
    ns = side(backend)
    lp = ns.nn.LabelPropagation(2, 0.5, "row")
    want = ref_label_prop(src, dst, n, np.eye(3)[ids], known, 2, 0.5, "row", True, False, False)
    for labels in (ids, ids.reshape(-1, 1), np.eye(3, dtype=np.int64)[ids]):
        for mask in (known, np.array([1, 4, 5]), np.array([[5], [4], [1]])):
            got = lp(g, tensor(ns, labels), mask=tensor(ns, mask))
            np.testing.assert_allclose(to_numpy(got), want, rtol=1e-6, atol=1e-7)
    everyone = ref_label_prop(src, dst, n, np.eye(3)[ids], np.ones(n, bool), 2, 0.5, "row", True, False, False)
    np.testing.assert_allclose(to_numpy(lp(g, tensor(ns, ids))), everyone, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_label_prop_float_multilabel_keeps_dtype_and_is_differentiable(backend):
    rng = np.random.default_rng(45)
    src, dst, n = random_graph(rng)
    y0 = (rng.random((n, 5)) < 0.4).astype(np.float64)
    known = rng.random(n) < 0.6
    ns = side(backend)
    labels = tensor(ns, y0, grad=True)
    got = ns.nn.LabelPropagation(4, 0.9, clamp=False, normalize=True)(nw.graph((src, dst), num_nodes=n), labels,
                                                                       mask=tensor(ns, known))
    assert got.dtype == ns.T.float64
    want = ref_label_prop(src, dst, n, y0, known, 4, 0.9, "sym", False, True, False)
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-12, atol=1e-14)
    got.sum().backward()
    assert labels.grad is not None and tuple(labels.grad.shape) == (n, 5)
    assert np.all(to_numpy(labels.grad)[~known] == 0)  # unknown rows never enter


@pytest.mark.parametrize("backend", BACKENDS)
def test_label_prop_on_a_batch_stays_within_each_graph(backend):
    rng = np.random.default_rng(46)
    parts = [random_graph(rng, 5, 8), random_graph(rng, 4, 6)]
    g = nw.batch([nw.graph((s, d), num_nodes=n) for s, d, n in parts])
    ids = np.array([0, 1, 1, 0, 1, 1, 0, 0, 1])
    known = np.array([1, 0, 0, 1, 0, 0, 1, 1, 0], bool)
    ns = side(backend)
    got = to_numpy(ns.nn.LabelPropagation(3, 0.8)(g, tensor(ns, ids), mask=tensor(ns, known)))
    off = 0
    for s, d, n in parts:
        want = ref_label_prop(s, d, n, np.eye(2)[ids[off:off + n]], known[off:off + n], 3, 0.8, "sym", True,
                              False, False)
        np.testing.assert_allclose(got[off:off + n], want, rtol=1e-6, atol=1e-7)
        off += n


def test_label_prop_zero_steps_and_alpha_extremes():
    ns = side("native")
    g = nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3)
    ids, mask = ns.T.tensor([0, 1, 0]), ns.T.tensor([True, False, True])
    assert ns.nn.LabelPropagation(0, 0.5)(g, ids, mask).tolist() == [[1.0, 0.0], [0.0, 0.0], [1.0, 0.0]]
    # alpha = 0 keeps the known labels and nothing else, alpha = 1 forgets them after one step
    assert ns.nn.LabelPropagation(2, 0.0)(g, ids, mask).tolist() == [[1.0, 0.0], [0.0, 0.0], [1.0, 0.0]]
    assert ns.nn.LabelPropagation(1, 1.0, "row")(g, ids, mask).tolist() == [[1.0, 0.0], [1.0, 0.0], [0.0, 0.0]]
    assert list(ns.nn.LabelPropagation(1, 0.5).parameters()) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_label_prop_bad_inputs(backend):
    ns = side(backend)
    t = ns.T.tensor
    g = nw.graph(([0, 1, 2], [1, 2, 0]), num_nodes=3)
    hg = nw.heterograph({("a", "r", "b"): ([0], [1])}, num_nodes_dict={"a": 1, "b": 2})
    lp = ns.nn.LabelPropagation(2, 0.5)
    cases = [
        (lambda: ns.nn.LabelPropagation(-1, 0.5), ValueError, "k must be a non-negative int"),
        (lambda: ns.nn.LabelPropagation(2, 1.5), ValueError, r"alpha must be a number in \[0, 1\]"),
        (lambda: ns.nn.LabelPropagation(2, 0.5, "col"), ValueError, "norm_type must be 'sym' or 'row'"),
        (lambda: lp(g, [0, 1, 0]), TypeError, "labels must be a tensor"),
        (lambda: lp(g, t([0.0, 1.0, 0.0])), TypeError, "labels must be integer class ids"),
        (lambda: lp(g, t([True, False, True])), TypeError, "labels must be integer class ids"),
        (lambda: lp(g, t([0, -1, 0])), ValueError, "class ids must be non-negative"),
        (lambda: lp(g, t([0, 1])), ValueError, "labels has 2 rows but the graph has 3 nodes"),
        (lambda: lp(g, t([0, 1, 0]), mask=t([True, False])), ValueError, r"boolean mask must have shape \(3,\)"),
        (lambda: lp(g, t([0, 1, 0]), mask=t([0, 3])), ValueError, r"mask node ids must be in \[0, 3\)"),
        (lambda: lp(g, t([0, 1, 0]), mask=t([0.0, 1.0])), TypeError, "mask must be a boolean tensor or node ids"),
        (lambda: lp(hg, t([0, 1])), ValueError, "LabelPropagation"),
    ]
    for call, err, msg in cases:
        with pytest.raises(err, match=msg):
            call()
