"""TransE and TransR on both backends: scores against their formulas in torch float64 (values and
the gradients of the head and tail representations and of the relation parameters) for the 1- and
2-norm, finite differences, and bad input."""

import numpy as np
import pytest
import torch

from layer_ref_helpers import BACKENDS, check_layer, fd_check, side


def triples(rng, e=7, d=4, num_rels=3):
    return {"h": rng.standard_normal((e, d)), "t": rng.standard_normal((e, d)),
            "r": rng.integers(0, num_rels, e).astype(np.int64)}


def transe_ref(p, b, t, order):
    return -torch.linalg.vector_norm(t["h"] + p["rel_emb.weight"][t["r"]] - t["t"], ord=order, dim=-1)


def transr_ref(p, b, t, order, nfeats, rfeats):
    proj = p["rel_project.weight"][t["r"]].reshape(-1, nfeats, rfeats)
    head = torch.einsum("en,enr->er", t["h"], proj)
    tail = torch.einsum("en,enr->er", t["t"], proj)
    return -torch.linalg.vector_norm(head + p["rel_emb.weight"][t["r"]] - tail, ord=order, dim=-1)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("order", [1, 2])
def test_transe(backend, order):
    rng = np.random.default_rng(1)
    m = check_layer(backend, lambda ns: ns.nn.TransE(num_rels=3, feats=4, p=order),
                    lambda m, t: m(t["h"], t["t"], t["r"]), lambda p, b, t: transe_ref(p, b, t, order),
                    triples(rng), rng)
    assert tuple(m.rel_emb.weight.shape) == (3, 4)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("order", [1, 2])
def test_transr(backend, order):
    rng = np.random.default_rng(2)
    m = check_layer(backend, lambda ns: ns.nn.TransR(num_rels=3, rfeats=2, nfeats=4, p=order),
                    lambda m, t: m(t["h"], t["t"], t["r"]), lambda p, b, t: transr_ref(p, b, t, order, 4, 2),
                    triples(rng), rng)
    assert tuple(m.rel_emb.weight.shape) == (3, 2) and tuple(m.rel_project.weight.shape) == (3, 8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_match_finite_differences(backend):
    rng = np.random.default_rng(3)
    fd_check(backend, lambda ns: ns.nn.TransE(3, 4, p=2), lambda m, t: m(t["h"], t["t"], t["r"]), triples(rng), rng)
    fd_check(backend, lambda ns: ns.nn.TransR(3, 3, 4, p=2), lambda m, t: m(t["h"], t["t"], t["r"]),
             triples(rng), rng)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reset_and_bad_input(backend):
    ns = side(backend)
    m = ns.nn.TransR(num_rels=2, rfeats=3, nfeats=4)
    before = [p.detach().clone() for p in m.parameters()]
    m.reset_parameters()
    assert any(not bool((a == p).all()) for a, p in zip(before, m.parameters()))
    h, r = ns.T.zeros(5, 4), ns.T.tensor([0, 1, 0, 1, 0])
    with pytest.raises(ValueError, match="h_head must have shape"):
        m(ns.T.zeros(5, 3), h, r)
    with pytest.raises(ValueError, match="one per triple"):
        m(h, h, ns.T.tensor([0, 1]))
    with pytest.raises(ValueError, match="num_rels"):
        ns.nn.TransE(0, 4)
    with pytest.raises(ValueError, match="p must be a positive number"):
        ns.nn.TransE(2, 4, p=0)
