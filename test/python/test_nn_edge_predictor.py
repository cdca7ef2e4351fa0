"""EdgePredictor on both backends: each op against its formula in torch float64, with and without
the output projection (values and the gradients of both inputs and the parameters), finite
differences, zero rows under 'cos', and bad input."""

import numpy as np
import pytest
import torch

from layer_ref_helpers import BACKENDS, check_layer, fd_check, lin, side, to_numpy


def combine(op, hu, hv):
    if op == "dot":
        return torch.einsum("ed,ed->e", hu, hv)[:, None]
    if op == "cos":
        nu = torch.linalg.vector_norm(hu, dim=1).clamp(min=1e-8)
        nv = torch.linalg.vector_norm(hv, dim=1).clamp(min=1e-8)
        return (torch.einsum("ed,ed->e", hu, hv) / (nu * nv))[:, None]
    if op == "ele":
        return hu * hv
    return torch.cat([hu, hv], dim=1)


def pairs(rng, e=6, d=4):
    return {"hu": rng.standard_normal((e, d)), "hv": rng.standard_normal((e, d))}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["dot", "cos", "ele", "cat"])
def test_ops_without_projection(backend, op):
    rng = np.random.default_rng(1)
    m = check_layer(backend, lambda ns: ns.nn.EdgePredictor(op), lambda m, t: m(t["hu"], t["hv"]),
                    lambda p, b, t: combine(op, t["hu"], t["hv"]), pairs(rng), rng)
    assert list(m.parameters()) == []


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op,width", [("dot", 1), ("cos", 1), ("ele", 4), ("cat", 8)])
@pytest.mark.parametrize("bias", [False, True])
def test_ops_with_projection(backend, op, width, bias):
    rng = np.random.default_rng(2)
    m = check_layer(backend, lambda ns: ns.nn.EdgePredictor(op, 4, 3, bias=bias), lambda m, t: m(t["hu"], t["hv"]),
                    lambda p, b, t: lin(p, "linear", combine(op, t["hu"], t["hv"])), pairs(rng), rng)
    assert tuple(m.linear.weight.shape) == (3, width)
    assert (m.linear.bias is not None) == bias


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["dot", "cos", "ele", "cat"])
def test_gradients_match_finite_differences(backend, op):
    rng = np.random.default_rng(3)
    fd_check(backend, lambda ns: ns.nn.EdgePredictor(op, 4, 2, bias=True), lambda m, t: m(t["hu"], t["hv"]),
             pairs(rng), rng)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cos_of_a_zero_row_is_zero_with_finite_gradients(backend):
    ns = side(backend)
    hu = ns.T.tensor([[0.0, 0.0], [3.0, 4.0]], dtype=ns.T.float64, requires_grad=True)
    hv = ns.T.tensor([[1.0, 2.0], [6.0, 8.0]], dtype=ns.T.float64, requires_grad=True)
    out = ns.nn.EdgePredictor("cos")(hu, hv)
    np.testing.assert_allclose(to_numpy(out), [[0.0], [1.0]], atol=1e-15)
    out.sum().backward()
    assert np.isfinite(to_numpy(hu.grad)).all() and np.isfinite(to_numpy(hv.grad)).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_only_in_or_out_feats_means_no_projection(backend):
    ns = side(backend)
    assert ns.nn.EdgePredictor("ele", in_feats=4).linear is None
    assert ns.nn.EdgePredictor("ele", out_feats=4).linear is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_inputs(backend):
    ns = side(backend)
    P = ns.nn.EdgePredictor
    ones = ns.T.ones
    cases = [
        (lambda: P("sum"), ValueError, "op must be 'dot', 'cos', 'ele' or 'cat', got 'sum'"),
        (lambda: P("dot", 0, 2), ValueError, "in_feats must be a positive int"),
        (lambda: P("dot", 2, 1.5), ValueError, "out_feats must be a positive int"),
        (lambda: P("dot")([[1.0]], ones(1, 1)), TypeError, "h_src must be a tensor"),
        (lambda: P("dot")(ones(2, 3), ones(3)), ValueError, r"h_dst must have shape \(num_pairs, D\)"),
        (lambda: P("dot")(ones(2, 3), ones(3, 3)), ValueError, "must have the same shape"),
        (lambda: P("cat", 4, 2)(ones(2, 3), ones(2, 3)), ValueError, "in_feats=4 columns"),
    ]
    for call, err, msg in cases:
        with pytest.raises(err, match=msg):
            call()
