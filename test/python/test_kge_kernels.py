"""The KGE kernels (sparse/kge, bound as nodeweave._C.kge): every model's scores against an
independent float64 PyTorch formula, its hand-written gradients against PyTorch's autograd of that
formula, the chunked negatives, and the filtered ranker against a brute-force NumPy ranker."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nodeweave import _C
from nodeweave import errors as nwerr

K = _C.kge
MODELS = list(K.model_names())
DIM, NE, NR, GAMMA = 5, 9, 4, 4.0


def reference_score(model: str, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """Scores of rows h, r, t (broadcasting over leading dims), written from the papers' formulas."""
    d = DIM
    if model in ("TransE_l1", "TransE_l2"):
        return GAMMA - torch.linalg.vector_norm(h + r - t, ord=1 if model.endswith("1") else 2, dim=-1)
    if model == "TransR":
        m = r[..., d:].reshape(*r.shape[:-1], d, d)
        proj = lambda e: (m @ e.unsqueeze(-1)).squeeze(-1)  # noqa: E731
        return GAMMA - (proj(h) + r[..., :d] - proj(t)).abs().sum(-1)
    if model == "RESCAL":
        m = r.reshape(*r.shape[:-1], d, d)
        return (h.unsqueeze(-2) @ m @ t.unsqueeze(-1)).squeeze(-1).squeeze(-1)
    if model == "DistMult":
        return (h * r * t).sum(-1)
    as_complex = lambda x: torch.complex(x[..., :d], x[..., d:])  # noqa: E731
    if model == "ComplEx":
        return (as_complex(h) * as_complex(r) * as_complex(t).conj()).real.sum(-1)
    if model == "RotatE":
        rot = torch.polar(torch.ones_like(r), r)
        return GAMMA - (as_complex(h) * rot - as_complex(t)).abs().sum(-1)
    if model == "SimplE":
        raw = ((h[..., :d] * r[..., :d] * t[..., d:]).sum(-1) + (t[..., :d] * r[..., d:] * h[..., d:]).sum(-1)) / 2
        return raw.clamp(-20, 20)
    if model == "PairRE":
        unit = lambda x: x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)  # noqa: E731
        return GAMMA - (unit(h) * r[..., :d] - unit(t) * r[..., d:]).abs().sum(-1)
    raise AssertionError(model)


def tables(model: str, dtype=np.float64, seed: int = 0):
    ew, rw = K.widths(model, DIM)
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (NE, ew)).astype(dtype), rng.uniform(-1, 1, (NR, rw)).astype(dtype)


TRIPLES = (np.array([0, 1, 2, 3, 4, 5]), np.array([0, 1, 2, 3, 1, 0]), np.array([6, 7, 8, 0, 2, 1]))
NEGATIVES = np.array([[1, 5, 8, 2], [0, 3, 3, 7], [4, 6, 2, 1]])  # 3 chunks of 2 triples, k = 4


def test_widths_follow_the_row_layouts():
    assert K.widths("TransR", 3) == (3, 12)
    assert K.widths("ComplEx", 3) == (6, 6)
    assert K.widths("RotatE", 3) == (6, 3)
    assert K.widths("transe", 3) == (3, 3)


@pytest.mark.parametrize("model", MODELS)
def test_scores_match_the_formula(model):
    e, r = tables(model)
    h, rel, t = TRIPLES
    got = K.score(model, DIM, GAMMA, e, r, h, rel, t)
    E, R = torch.from_numpy(e), torch.from_numpy(r)
    want = reference_score(model, E[h], R[rel], E[t]).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    got32 = K.score(model, DIM, GAMMA, e.astype(np.float32), r.astype(np.float32), h, rel, t)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("corrupt", ["head", "tail"])
@pytest.mark.parametrize("model", MODELS)
def test_chunked_negatives_match_the_formula(model, corrupt):
    e, r = tables(model, seed=1)
    h, rel, t = TRIPLES
    got = K.score_negatives(model, DIM, GAMMA, e, r, h, rel, t, NEGATIVES, 2, corrupt)
    E, R = torch.from_numpy(e), torch.from_numpy(r)
    negs = torch.from_numpy(NEGATIVES[np.arange(6) // 2])  # (6, 4): each triple's chunk
    if corrupt == "head":
        want = reference_score(model, E[negs], R[rel][:, None], E[t][:, None])
    else:
        want = reference_score(model, E[h][:, None], R[rel][:, None], E[negs])
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("corrupt", ["head", "tail"])
@pytest.mark.parametrize("model", MODELS)
def test_gradients_match_autograd(model, corrupt):
    e, r = tables(model, seed=2)
    h, rel, t = TRIPLES
    rng = np.random.default_rng(3)
    gp, gn = rng.normal(size=6), rng.normal(size=(6, 4))
    de, dr = K.backward(model, DIM, GAMMA, e, r, h, rel, t, gp, NEGATIVES, 2, corrupt, gn)
    E = torch.from_numpy(e).requires_grad_()
    R = torch.from_numpy(r).requires_grad_()
    negs = torch.from_numpy(NEGATIVES[np.arange(6) // 2])
    pos = reference_score(model, E[h], R[rel], E[t])
    if corrupt == "head":
        neg = reference_score(model, E[negs], R[rel][:, None], E[t][:, None])
    else:
        neg = reference_score(model, E[h][:, None], R[rel][:, None], E[negs])
    ((pos * torch.from_numpy(gp)).sum() + (neg * torch.from_numpy(gn)).sum()).backward()
    np.testing.assert_allclose(de, E.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dr, R.grad.numpy(), rtol=1e-10, atol=1e-10)


def brute_force_ranks(scores_tail, scores_head, triples, known):
    """Ranks from full (n, num_entities) score matrices: filtered entities dropped, ties counted half."""
    h, r, t = triples
    out = []
    for scores, side in ((scores_head, "head"), (scores_tail, "tail")):
        ranks = []
        for i in range(len(h)):
            target = h[i] if side == "head" else t[i]
            keep = np.ones(scores.shape[1], bool)
            for kh, kr, kt in known:
                if side == "tail" and kh == h[i] and kr == r[i] and kt != target:
                    keep[kt] = False
                if side == "head" and kr == r[i] and kt == t[i] and kh != target:
                    keep[kh] = False
            s = scores[i, target]
            others = np.delete(np.arange(scores.shape[1]), target)
            others = others[keep[others]]
            ranks.append(1 + np.sum(scores[i, others] > s) + 0.5 * np.sum(scores[i, others] == s))
        out.append(np.array(ranks, float))
    return out


@pytest.mark.parametrize("model", ["DistMult", "TransE_l1", "RotatE", "TransR"])
def test_filtered_ranks_match_a_brute_force_ranker_with_ties(model):
    rng = np.random.default_rng(4)
    ew, rw = K.widths(model, DIM)
    # Small integers make many exact ties.
    e = rng.integers(-1, 2, (NE, ew)).astype(np.float64)
    e[3] = e[5]  # two identical entities: always tied
    r = rng.integers(-1, 2, (NR, rw)).astype(np.float64)
    test = (np.array([0, 3, 5, 2]), np.array([1, 0, 2, 1]), np.array([4, 1, 5, 8]))
    train = [(0, 1, 7), (0, 1, 5), (3, 0, 2), (6, 2, 5), (0, 1, 4), (2, 1, 8), (2, 1, 8)]
    known = train + list(zip(*test))
    kh, kr, kt = (np.array(c) for c in zip(*known))
    head, tail = K.filtered_ranks(model, DIM, GAMMA, e, r, *test, kh, kr, kt)
    E, R = torch.from_numpy(e), torch.from_numpy(r)
    all_e = torch.arange(NE)
    th, tr, tt = (torch.from_numpy(x) for x in test)
    st = reference_score(model, E[th][:, None], R[tr][:, None], E[all_e][None]).numpy()
    sh = reference_score(model, E[all_e][None], R[tr][:, None], E[tt][:, None]).numpy()
    want_head, want_tail = brute_force_ranks(st, sh, test, known)
    np.testing.assert_array_equal(head, want_head)
    np.testing.assert_array_equal(tail, want_tail)
    raw_head, raw_tail = K.filtered_ranks(model, DIM, GAMMA, e, r, *test)
    want_raw = brute_force_ranks(st, sh, test, [])
    np.testing.assert_array_equal(raw_head, want_raw[0])
    np.testing.assert_array_equal(raw_tail, want_raw[1])


def test_all_tied_scores_rank_in_the_middle():
    e, r = np.zeros((NE, DIM)), np.zeros((NR, DIM))
    head, tail = K.filtered_ranks("DistMult", DIM, 0.0, e, r, [0], [0], [1])
    assert head[0] == tail[0] == 1 + (NE - 1) / 2


def test_bad_inputs_name_the_argument():
    e, r = tables("DistMult")
    h, rel, t = TRIPLES
    with pytest.raises(nwerr.ValueError, match="unknown model 'TransQ'"):
        K.score("TransQ", DIM, GAMMA, e, r, h, rel, t)
    with pytest.raises(nwerr.ValueError, match=r"entity must have shape \(rows, 5\)"):
        K.score("DistMult", DIM, GAMMA, e[:, :4], r, h, rel, t)
    with pytest.raises(nwerr.IndexError, match=r"head\[0\] = 9 is out of range for 9 entities"):
        K.score("DistMult", DIM, GAMMA, e, r, [9], [0], [0])
    with pytest.raises(nwerr.IndexError, match="relation"):
        K.score("DistMult", DIM, GAMMA, e, r, [0], [-1], [0])
    with pytest.raises(nwerr.TypeError, match="head must be an array of integer ids"):
        K.score("DistMult", DIM, GAMMA, e, r, np.array([0.5]), [0], [0])
    with pytest.raises(nwerr.ValueError, match="one id per triple"):
        K.score("DistMult", DIM, GAMMA, e, r, [0, 1], [0], [0])
    with pytest.raises(nwerr.TypeError, match="relation must have the entity table's dtype"):
        K.score("DistMult", DIM, GAMMA, e, r.astype(np.float32), h, rel, t)
    with pytest.raises(nwerr.ValueError, match="chunk_size 4 must divide the number of triples 6"):
        K.score_negatives("DistMult", DIM, GAMMA, e, r, h, rel, t, NEGATIVES, 4, "tail")
    with pytest.raises(nwerr.ValueError, match="corrupt must be 'head' or 'tail'"):
        K.score_negatives("DistMult", DIM, GAMMA, e, r, h, rel, t, NEGATIVES, 2, "both")
    with pytest.raises(nwerr.IndexError, match="known triple 0"):
        K.filtered_ranks("DistMult", DIM, GAMMA, e, r, h, rel, t, [0], [0], [99])
    with pytest.raises(nwerr.ValueError, match="dim must be positive"):
        K.score("DistMult", 0, GAMMA, e, r, h, rel, t)
