"""The C++ KGE training loop (nodeweave._C.kge.Trainer): one step against a float64 PyTorch
reference (loss, autograd gradients, the sparse optimizer's update), bit-identical resume,
the batches' draws, learning on a small graph, and bad settings."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nodeweave import _C
from nodeweave import errors as nwerr
from test_kge_kernels import reference_score  # the models' formulas, written once for the tests

K = _C.kge
DIM, GAMMA = 5, 4.0  # reference_score's hidden size and margin
NE, NR = 11, 3


def toy_triples(n: int = 24, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, NE, n), rng.integers(0, NR, n), rng.integers(0, NE, n)], 1)


def make_trainer(model="DistMult", *, loss="logsigmoid", optimizer="adagrad", lr=0.05, batch=8, k=4,
                 chunk=0, deg=False, adv=0.0, reg=0.0, norm=3, seed=7, threads=1, triples=None, state=None):
    tri = toy_triples() if triples is None else triples
    ew, rw = K.widths(model, DIM)
    rng = np.random.default_rng(1)
    if state is None:
        state = dict(entity=rng.uniform(-1, 1, (NE, ew)).astype(np.float32),
                     relation=rng.uniform(-1, 1, (NR, rw)).astype(np.float32))
    return K.Trainer(model, DIM, GAMMA, loss, 1.0, adv, optimizer, lr, batch, k, chunk, deg, reg, norm, seed,
                     threads, tri[:, 0], tri[:, 1], tri[:, 2], NE, NR, **state)


def reference_step(model, trainer, step, *, loss, optimizer, lr, adv, reg, norm):
    """Tables after `step`, from the trainer's own draws, in float64 PyTorch."""
    h, r, t, negs, side = trainer.batch(step)
    E = torch.tensor(np.asarray(trainer.entity), dtype=torch.float64, requires_grad=True)
    R = torch.tensor(np.asarray(trainer.relation), dtype=torch.float64, requires_grad=True)
    chunk = trainer.chunk_size
    neg = torch.from_numpy(negs[np.arange(len(h)) // chunk])
    h, r, t = (torch.from_numpy(x) for x in (h, r, t))
    pos = reference_score(model, E[h], R[r], E[t])
    if side == "head":
        ns = reference_score(model, E[neg], R[r][:, None], E[t][:, None])
    else:
        ns = reference_score(model, E[h][:, None], R[r][:, None], E[neg])
    w = torch.softmax(adv * ns, -1).detach() if adv > 0 else torch.full_like(ns, 1 / ns.shape[1])
    if loss == "hinge":
        lp, ln = torch.relu(1 - pos), torch.relu(1 + ns)
    else:
        lp, ln = -torch.nn.functional.logsigmoid(pos), -torch.nn.functional.logsigmoid(-ns)
    total = (lp + (w * ln).sum(-1)).mean() / 2
    touched_e = torch.unique(torch.cat([h, t, neg.reshape(-1)]))
    touched_r = torch.unique(r)
    if reg > 0:
        total = total + reg * (E[touched_e].abs() ** norm).sum() + reg * (R[touched_r].abs() ** norm).sum()
    total.backward()
    out = []
    for table, grad, rows, state in ((E, E.grad, touched_e, trainer.entity_opt),
                                     (R, R.grad, touched_r, trainer.relation_opt)):
        new = table.detach().clone()
        st = torch.tensor(np.asarray(state), dtype=torch.float64)
        for i in rows.tolist():
            g = grad[i]
            if optimizer == "adagrad":
                s = st[i, 0] + (g * g).mean()
                new[i] -= lr * g / (s.sqrt() + 1e-10)
            else:  # first step of Adam: m = 0.1 g, v = 0.001 g^2, bias-corrected to g and g^2
                m, v = 0.1 * g / (1 - 0.9), 0.001 * g * g / (1 - 0.999)
                new[i] -= lr * m / (v.sqrt() + 1e-8)
        out.append(new.numpy())
    return out, float(total.detach())


CASES = [
    ("DistMult", "logsigmoid", "adagrad", 0.0, 0.0, False),
    ("TransE_l2", "logsigmoid", "adagrad", 1.0, 0.0, True),
    ("RotatE", "logsigmoid", "adam", 1.0, 0.0, False),
    ("ComplEx", "hinge", "adagrad", 0.0, 1e-3, False),
    ("TransR", "logistic", "adam", 0.5, 1e-3, True),
    ("SimplE", "bce", "adagrad", 0.0, 0.0, False),
    ("PairRE", "logsigmoid", "adagrad", 1.0, 0.0, False),
    ("RESCAL", "hinge", "adam", 0.0, 1e-3, False),
]


@pytest.mark.parametrize("model,loss,optimizer,adv,reg,deg", CASES)
def test_first_steps_match_the_reference(model, loss, optimizer, adv, reg, deg):
    tr = make_trainer(model, loss=loss, optimizer=optimizer, adv=adv, reg=reg, deg=deg, chunk=4)
    steps = 2 if optimizer == "adagrad" else 1  # step 1 corrupts heads; the Adam reference is step 0's
    for s in range(steps):
        (want_e, want_r), want_loss = reference_step(model, tr, s, loss=loss, optimizer=optimizer, lr=0.05,
                                                     adv=adv, reg=reg, norm=3)
        got_loss = tr.run(1)
        np.testing.assert_allclose(got_loss[0], want_loss, rtol=2e-5)
        np.testing.assert_allclose(tr.entity, want_e, rtol=1e-4, atol=2e-5)
        np.testing.assert_allclose(tr.relation, want_r, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("optimizer", ["adagrad", "adam"])
def test_resuming_from_a_state_is_bit_identical_to_running_on(optimizer):
    straight = make_trainer("RotatE", optimizer=optimizer, adv=1.0, deg=True)
    straight.run(7)
    first = make_trainer("RotatE", optimizer=optimizer, adv=1.0, deg=True)
    first.run(3)
    state = {name: np.array(getattr(first, name)) for name in ("entity", "relation", "entity_opt", "relation_opt")}
    second = make_trainer("RotatE", optimizer=optimizer, adv=1.0, deg=True, state=state)
    # A new trainer starts at step 0 unless told: the draws depend on the step.
    second = K.Trainer("RotatE", DIM, GAMMA, "logsigmoid", 1.0, 1.0, optimizer, 0.05, 8, 4, 0, True, 0.0, 3, 7, 1,
                       *toy_triples().T, NE, NR, step=3, **state)
    second.run(4)
    assert second.step == straight.step == 7
    for name in ("entity", "relation", "entity_opt", "relation_opt"):
        assert np.array_equal(getattr(second, name), getattr(straight, name)), name


def test_same_seed_same_run_other_seed_other_run():
    a, b, c = make_trainer(seed=3), make_trainer(seed=3), make_trainer(seed=4)
    for x in (a, b, c):
        x.run(5)
    assert np.array_equal(a.entity, b.entity)
    assert not np.array_equal(a.entity, c.entity)


def test_batches_cover_each_epoch_and_draw_valid_negatives():
    tri = toy_triples(24)
    tr = make_trainer(triples=tri, batch=8, k=3, chunk=4, deg=True)
    assert tr.steps_per_epoch == 3 and tr.chunk_size == 4
    seen = []
    for s in range(3):
        h, r, t, negs, side = tr.batch(s)
        assert side == ("head" if s % 2 else "tail")
        assert negs.shape == (2, 6) and negs.min() >= 0 and negs.max() < NE
        # The degree-drawn half are endpoints of training triples.
        assert set(negs[:, 3:].ravel()) <= set(tri[:, 0]) | set(tri[:, 2])
        seen += list(zip(h, r, t))
    assert sorted(seen) == sorted(map(tuple, tri))  # the epoch visits every triple once
    assert sorted(zip(*tr.batch(3)[:3])) != sorted(zip(*tr.batch(0)[:3]))  # next epoch, new order


def test_training_learns_a_small_graph():
    # Relation r maps entity i to (i + r + 1) mod NE: a rotation by (r + 1) 2 pi / NE, which RotatE
    # can fit exactly (TransE cannot: a translation never comes back round a cycle).
    heads = np.repeat(np.arange(NE), NR)
    rels = np.tile(np.arange(NR), NE)
    tri = np.stack([heads, rels, (heads + rels + 1) % NE], 1)
    for threads in (1, 2):
        tr = make_trainer("RotatE", triples=tri, batch=11, k=10, chunk=11, lr=0.1, threads=threads, adv=1.0)
        losses = tr.run(300)
        assert losses[-20:].mean() < 0.8 * losses[:20].mean()
        head, tail = K.filtered_ranks("RotatE", DIM, GAMMA, tr.entity, tr.relation, *tri.T)
        mrr = np.mean(1 / np.concatenate([head, tail]))
        assert mrr > 0.8, threads


def test_bad_settings_name_the_problem():
    with pytest.raises(nwerr.ValueError, match="unknown loss 'l2'"):
        make_trainer(loss="l2")
    with pytest.raises(nwerr.ValueError, match="unknown optimizer 'sgd'"):
        make_trainer(optimizer="sgd")
    with pytest.raises(nwerr.ValueError, match="batch_size 8 must be a multiple of neg_chunk_size 3"):
        make_trainer(chunk=3)
    with pytest.raises(nwerr.ValueError, match="lr must be positive"):
        make_trainer(lr=0.0)
    with pytest.raises(nwerr.ValueError, match="the entity table must have 11 x 5 floats"):
        make_trainer(state=dict(entity=np.zeros((10, 5), np.float32), relation=np.zeros((NR, 5), np.float32)))
    with pytest.raises(nwerr.ValueError, match="optimizer state does not match"):
        make_trainer(state=dict(entity=np.zeros((NE, 5), np.float32), relation=np.zeros((NR, 5), np.float32),
                                entity_opt=np.zeros((NE, 10), np.float32)))
    with pytest.raises(nwerr.IndexError, match="out of range"):
        make_trainer(triples=np.array([[0, 0, NE]]))
    with pytest.raises(nwerr.ValueError, match="no training triples"):
        make_trainer(triples=np.zeros((0, 3), np.int64))
    with pytest.raises(nwerr.TypeError, match="entity must be a float32 array"):
        make_trainer(state=dict(entity=np.zeros((NE, 5)), relation=np.zeros((NR, 5), np.float32)))
