"""DeepWalk and MetaPath2Vec on both backends: the window pairs and walks against brute force on
graphs whose walks are fixed, the losses and gradients against their formulas in torch float64,
the negatives' distribution recovered exactly from the context table's gradient, the global
numbering of MetaPath2Vec, a training step with SparseAdam, and bad input."""

import numpy as np
import pytest
import torch

import nodeweave as nw
from layer_ref_helpers import BACKENDS, side, to_numpy

TF = torch.float64


def ring(n):
    """A directed cycle: every walk is fixed, ``v, v+1, ...`` (mod n)."""
    return nw.graph((list(range(n)), [(i + 1) % n for i in range(n)]))


def window_pairs(length, w):
    return [(j, i) for i in range(length) for j in range(length) if 0 < abs(i - j) <= w]


def set_tables(ns, model, centre, context):
    model.double()
    with ns.T.no_grad():
        model.node_embed.weight.copy_(ns.T.tensor(centre))
        model.context_embed.weight.copy_(ns.T.tensor(context))


# ---------------------------------------------------------------------------------- DeepWalk
@pytest.mark.parametrize("backend", BACKENDS)
def test_deepwalk_pairs_walks_and_init(backend):
    ns = side(backend)
    m = ns.nn.DeepWalk(ring(5), emb_dim=4, walk_length=4, window_size=2)
    assert list(zip(to_numpy(m.idx_list_src).tolist(), to_numpy(m.idx_list_dst).tolist())) == window_pairs(4, 2)
    w = to_numpy(m.node_embed.weight)
    assert w.shape == (5, 4) and np.abs(w).max() <= 0.25 and np.abs(w).std() > 0
    assert not to_numpy(m.context_embed.weight).any()
    want = [[(v + k) % 5 for k in range(4)] for v in (0, 3, 4)]
    for starts in (ns.T.tensor([0, 3, 4]), np.array([0, 3, 4]), [ns.T.tensor(0), ns.T.tensor(3), 4]):
        walks = m.sample(starts)
        assert isinstance(walks, ns.T.Tensor) and to_numpy(walks).tolist() == want


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fast_neg", [True, False])
def test_deepwalk_loss_and_gradients(backend, fast_neg):
    """All context rows equal (c): every negative then scores the same whichever node was drawn,
    so the loss, the centre table's gradient and the summed context gradient are exact."""
    ns = side(backend)
    rng = np.random.default_rng(0)
    n, d, length, w, k, nw_ = 6, 3, 5, 2, 3, 0.7
    m = ns.nn.DeepWalk(ring(n), emb_dim=d, walk_length=length, window_size=w, negative_size=k, neg_weight=nw_,
                       fast_neg=fast_neg, sparse=False)
    centre, c = rng.normal(0, 2.5, (n, d)), rng.normal(0, 2.5, d)   # large: some scores are clipped
    set_tables(ns, m, centre, np.tile(c, (n, 1)))
    walks = np.array([[(v + s) % n for s in range(length)] for v in (0, 2, 5, 2)])
    loss = m(ns.T.tensor(walks))
    loss.backward()

    tc, tcv = torch.tensor(centre, requires_grad=True), torch.tensor(c, requires_grad=True)
    pairs = window_pairs(length, w)
    pos = torch.stack([tc[row[j]] @ tcv for row in walks for j, i in pairs]).clamp(-6, 6)
    neg = torch.stack([tc[row[i]] @ tcv for row in walks for j, i in pairs for _ in range(k)]).clamp(-6, 6)
    ref = (-torch.nn.functional.logsigmoid(pos)).mean() + k * nw_ * (-torch.nn.functional.logsigmoid(-neg)).mean()
    ref.backward()
    assert abs(float(to_numpy(loss)) - ref.item()) < 1e-10
    np.testing.assert_allclose(to_numpy(m.node_embed.weight.grad), tc.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(to_numpy(m.context_embed.weight.grad).sum(0), tcv.grad.numpy(), atol=1e-10)


def picks_from_gradient(ns, m, walks, k, w):
    """Centre rows all ``e``, context rows 0: each score is 0, so the context gradient of row r is
    ``e/2 * (k * N_r / num_neg - P_r / num_pos)`` with P_r the positive pairs whose context is r
    (known) and N_r the times r was drawn as a negative (recovered)."""
    n, d = m.node_embed.weight.shape
    e = np.linspace(1.0, 2.0, d)
    set_tables(ns, m, np.tile(e, (n, 1)), np.zeros((n, d)))
    m(ns.T.tensor(walks)).backward()
    pairs = window_pairs(walks.shape[1], w)
    ctx = np.bincount([row[i] for row in walks for j, i in pairs], minlength=n)
    num_pos = len(walks) * len(pairs)
    g = to_numpy(m.context_embed.weight.grad)[:, 0] / e[0]
    return (g * 2 + ctx / num_pos) * (num_pos * k) / k


@pytest.mark.parametrize("backend", BACKENDS)
def test_deepwalk_negatives_by_degree(backend):
    ns = side(backend)
    nw.seed(3)
    # out-degrees 3, 1, 2, 1 and 0 for the isolated node 4 (never drawn)
    g = nw.graph(([0, 0, 0, 1, 2, 2, 3], [1, 2, 3, 2, 3, 0, 0]), num_nodes=5)
    k, w = 4, 1
    m = ns.nn.DeepWalk(g, emb_dim=2, walk_length=2, window_size=w, negative_size=k, fast_neg=False, sparse=False)
    deg = np.array([3, 1, 2, 1, 0.0]) ** 0.75
    np.testing.assert_allclose(to_numpy(m.neg_prob), deg / deg.sum(), rtol=1e-6)
    walks = to_numpy(m.sample(np.tile(np.arange(4), 1500)))
    got = picks_from_gradient(ns, m, walks, k, w)
    np.testing.assert_allclose(got, np.round(got), atol=1e-6)        # whole numbers of draws
    got = np.round(got)
    total = len(walks) * 2 * k
    assert got.sum() == total and got[4] == 0
    expect = total * deg / deg.sum()
    assert np.all(np.abs(got[:4] - expect[:4]) < 5 * np.sqrt(expect[:4]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_deepwalk_fast_negatives_come_from_the_batch(backend):
    ns = side(backend)
    nw.seed(4)
    g = nw.graph(([0, 1, 2, 3, 4], [1, 2, 0, 4, 3]))   # two cycles: {0, 1, 2} and {3, 4}
    k, w = 2, 1
    m = ns.nn.DeepWalk(g, emb_dim=2, walk_length=3, window_size=w, negative_size=k, fast_neg=True, sparse=False)
    walks = to_numpy(m.sample(np.zeros(400, np.int64)))            # walks 0, 1, 2 only
    got = np.round(picks_from_gradient(ns, m, walks, k, w))
    assert got.sum() == len(walks) * 4 * k and got[3] == got[4] == 0
    assert np.all(np.abs(got[:3] - got.sum() / 3) < 5 * np.sqrt(got.sum() / 3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_deepwalk_training_step(backend):
    ns = side(backend)
    nw.seed(5)
    m = ns.nn.DeepWalk(ring(4), emb_dim=8, walk_length=3, window_size=1, sparse=True)
    opt = ns.T.optim.SparseAdam(list(m.parameters()), lr=0.01)
    before = to_numpy(m.context_embed.weight).copy()   # zero: the first step moves only the contexts
    if backend == "pytorch":
        loader = torch.utils.data.DataLoader(torch.arange(4), batch_size=4, collate_fn=m.sample)
        walks = next(iter(loader))
    else:
        walks = m.sample(ns.T.arange(4))
    m(walks).backward()
    opt.step()
    assert not np.allclose(to_numpy(m.context_embed.weight), before)


@pytest.mark.parametrize("backend", BACKENDS)
def test_deepwalk_bad_input(backend):
    ns = side(backend)
    with pytest.raises(ValueError, match="walk_length must be at least window_size"):
        ns.nn.DeepWalk(ring(3), walk_length=3, window_size=3)
    with pytest.raises(ValueError, match="one node type"):
        ns.nn.DeepWalk(nw.heterograph({("a", "x", "b"): ([0], [0])}))
    with pytest.raises(ValueError, match="no edges"):
        ns.nn.DeepWalk(nw.graph(([], []), num_nodes=3), walk_length=2, window_size=1, fast_neg=False)
    m = ns.nn.DeepWalk(nw.graph(([0], [1])), walk_length=3, window_size=1)
    with pytest.raises(ValueError, match="batch_walk must be a"):
        m(ns.T.tensor([[0, 1]]))
    with pytest.raises(ValueError, match="without out-edges"):
        m(m.sample([0]))                                    # 0 -> 1, then 1 has no out-edge
    with pytest.raises(ValueError, match="indices must be a 1-D"):
        m.sample(np.array([0.5]))


# ------------------------------------------------------------------------------ MetaPath2Vec
def company_graph(dead_end=False):
    """Each user has one 'uc' out-edge and each company one 'cu' out-edge, so walks are fixed
    (user 3 has none when ``dead_end``)."""
    uc = ([0, 1, 2] + ([] if dead_end else [3]), [1, 0, 1] + ([] if dead_end else [0]))
    return nw.heterograph({("user", "uc", "company"): uc, ("company", "cu", "user"): ([0, 1], [2, 0])},
                          num_nodes_dict={"user": 4, "company": 2})


def fixed_walk(u, steps, dead_end):
    uc, cu = {0: 1, 1: 0, 2: 1, 3: None if dead_end else 0}, {0: 2, 1: 0}
    trace, types = [u], ["user"]
    for s in range(steps):
        nxt = (uc if types[-1] == "user" else cu)[trace[-1]] if trace[-1] is not None else None
        trace.append(nxt)
        types.append("company" if types[-1] == "user" else "user")
    return trace, types


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dead_end", [False, True])
def test_metapath2vec_numbering_pairs_and_frequencies(backend, dead_end):
    ns = side(backend)
    nw.seed(6)
    g = company_graph(dead_end)
    path, w, k = ["uc", "cu", "uc"], 2, 3
    m = ns.nn.MetaPath2Vec(g, path, window_size=w, emb_dim=4, negative_size=k)
    hom = nw.to_homogeneous(g)
    ntype, nid = to_numpy(hom.ndata[nw.NTYPE]), to_numpy(hom.ndata[nw.NID])
    for t, ti in (("company", g.ntypes.index("company")), ("user", g.ntypes.index("user"))):
        assert m.local_to_global_nid[t] == np.nonzero(ntype == ti)[0][np.argsort(nid[ntype == ti])].tolist()
    glob = {t: m.local_to_global_nid[t] for t in g.ntypes}
    walks = [fixed_walk(u, 3, dead_end) for u in range(4)]
    rows = [[glob[t][v] if v is not None else None for v, t in zip(tr, ty)] for tr, ty in walks]
    freq = np.zeros(6)
    for r in rows:
        for v in r:
            if v is not None:
                freq[v] += 1
    np.testing.assert_allclose(to_numpy(m.neg_prob), freq ** 0.75 / (freq ** 0.75).sum(), rtol=1e-6)
    starts = [3, 0, 2, 0]
    pos_u, pos_v, neg_v = m.sample(starts)
    want = [(rows[s][i], rows[s][j]) for s in starts for i in range(4) for j in range(4)
            if 0 < abs(i - j) <= w and rows[s][i] is not None and rows[s][j] is not None]
    assert list(zip(to_numpy(pos_u).tolist(), to_numpy(pos_v).tolist())) == want
    neg = to_numpy(neg_v)
    assert neg.shape == (len(want), k) and set(neg.ravel().tolist()) <= set(np.nonzero(freq)[0].tolist())


@pytest.mark.parametrize("backend", BACKENDS)
def test_metapath2vec_loss_and_gradients(backend):
    ns = side(backend)
    rng = np.random.default_rng(7)
    m = ns.nn.MetaPath2Vec(company_graph(), ["uc", "cu"], window_size=1, emb_dim=3, negative_size=2, sparse=False)
    centre, context = rng.normal(0, 3, (6, 3)), rng.normal(0, 3, (6, 3))   # some scores beyond +-10
    set_tables(ns, m, centre, context)
    u, v, neg = np.array([2, 3, 0, 5]), np.array([0, 1, 4, 1]), rng.integers(0, 6, (4, 2))
    loss = m(ns.T.tensor(u), ns.T.tensor(v), ns.T.tensor(neg))
    loss.backward()
    tc, tx = torch.tensor(centre, requires_grad=True), torch.tensor(context, requires_grad=True)
    s = (tc[u] * tx[v]).sum(1).clamp(-10, 10)
    sn = torch.einsum("ekd,ed->ek", tx[neg], tc[u]).clamp(-10, 10)
    lsig = torch.nn.functional.logsigmoid
    ref = (-lsig(s) - lsig(-sn).sum(1)).mean()
    ref.backward()
    assert abs(float(to_numpy(loss)) - ref.item()) < 1e-10
    np.testing.assert_allclose(to_numpy(m.node_embed.weight.grad), tc.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(to_numpy(m.context_embed.weight.grad), tx.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_metapath2vec_training_step_and_bad_input(backend):
    ns = side(backend)
    nw.seed(8)
    g = company_graph()
    m = ns.nn.MetaPath2Vec(g, ["uc", "cu"], window_size=1, emb_dim=4)
    opt = ns.T.optim.SparseAdam(list(m.parameters()), lr=0.05)
    before = to_numpy(m.context_embed.weight).copy()
    m(*m.sample(ns.T.tensor([0, 1, 2, 3]))).backward()
    opt.step()
    assert not np.allclose(to_numpy(m.context_embed.weight), before)
    with pytest.raises(ValueError, match="does not chain"):
        ns.nn.MetaPath2Vec(g, ["uc", "uc"], window_size=1)
    with pytest.raises(ValueError, match="window_size .* at most"):
        ns.nn.MetaPath2Vec(g, ["uc"], window_size=3)
    with pytest.raises(ValueError, match="non-empty list"):
        ns.nn.MetaPath2Vec(g, "uc", window_size=1)
