"""Random walks, node2vec and PinSAGE checked against independent references: transition
frequencies against the edge weights and node2vec's formula (chi-square, fixed seeds), walk lengths
against the geometric law of restarts, PinSAGE's neighbours against a brute-force count over the
very traces random_walk returns; every step an edge of its type; the same output at 1 and 2
threads and on both backends; every bad input a named exception."""

from collections import Counter, defaultdict

import numpy as np
import pytest
from scipy import stats

import nodeweave as nw
import nodeweave.core as nc
import nodeweave.sampling  # noqa: F401  (nw.sampling)
from nodeweave import backend

P_MIN = 1e-3  # a fixed seed makes each test deterministic; this only says how unlucky it may be


def chi2_pvalue(observed, expected_weights):
    """p-value of a chi-square goodness-of-fit test of counts against unnormalized weights. Cells of
    zero weight must be empty; cells expecting fewer than 5 draws are pooled (with the smallest
    other cell when the pool itself stays below 5)."""
    obs = np.asarray(observed, dtype=np.float64)
    w = np.asarray(expected_weights, dtype=np.float64)
    assert np.all(obs[w == 0] == 0), (obs, w)
    obs, w = obs[w > 0], w[w > 0]
    exp = w / w.sum() * obs.sum()
    small = exp < 5
    if small.any():
        obs = np.append(obs[~small], obs[small].sum())
        exp = np.append(exp[~small], exp[small].sum())
        if exp[-1] < 5 and len(exp) > 1:
            j = int(np.argmin(exp[:-1]))
            obs[j] += obs[-1]
            exp[j] += exp[-1]
            obs, exp = obs[:-1], exp[:-1]
    assert exp.min() >= 5, "too few draws for a chi-square test"
    if len(obs) == 1:
        return 1.0
    chi = ((obs - exp) ** 2 / exp).sum()
    return float(stats.chi2.sf(chi, len(obs) - 1))


def np_(t):
    return backend.of(t).to_numpy(t)


def walk_graph():
    """Directed, with a multi-edge (0 -> 1 twice), a self-loop (3 -> 3) and a sink (5)."""
    src = np.array([0, 0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 3])
    dst = np.array([1, 2, 3, 1, 2, 0, 0, 3, 4, 4, 3, 0, 5, 0])
    return nw.graph((src, dst), num_nodes=6), src, dst


def check_steps_are_edges(traces, eids, src, dst):
    for tr, ei in zip(traces, eids):
        ended = False
        for k in range(len(ei)):
            if ended or tr[k + 1] == -1:
                ended = True
                assert tr[k + 1] == -1 and ei[k] == -1
                continue
            assert src[ei[k]] == tr[k] and dst[ei[k]] == tr[k + 1]


def transitions_by_node(traces, eids):
    """{node: Counter(eid)} over every step taken."""
    out = defaultdict(Counter)
    for tr, ei in zip(traces, eids):
        for k in range(len(ei)):
            if ei[k] == -1:
                break
            out[tr[k]][ei[k]] += 1
    return out


# ----------------------------------------------------------------------------- first-order walks


def test_uniform_transitions_match_the_out_edges():
    g, src, dst = walk_graph()
    starts = np.repeat(np.arange(5), 2000)
    traces, eids, types = nw.sampling.random_walk(g, starts, length=6, return_eids=True, random_seed=1)
    traces, eids = np_(traces), np_(eids)
    assert traces.shape == (10000, 7) and eids.shape == (10000, 6)
    assert np_(types).tolist() == [0] * 7
    check_steps_are_edges(traces, eids, src, dst)
    assert np.array_equal(traces[:, 0], starts)
    by_node = transitions_by_node(traces, eids)
    for v in range(5):
        out_eids = np.flatnonzero(src == v)
        counts = [by_node[v][e] for e in out_eids]
        assert chi2_pvalue(counts, np.ones(len(out_eids))) > P_MIN, (v, counts)
    # The sink ends walks, and only the sink does.
    stopped_at = traces[np.arange(len(traces)), (traces != -1).sum(1) - 1]
    assert set(stopped_at[(traces == -1).any(1)]) == {5}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weighted_transitions_match_the_weights(dtype):
    g, src, dst = walk_graph()
    w = np.array([1, 2, 3, 4, 1, 5, 2, 0, 7, 1, 3, 2, 1, 0.5], dtype=dtype)
    g.edata["w"] = nc.tensor(w)
    starts = np.repeat(np.arange(5), 3000)
    traces, eids, _ = nw.sampling.random_walk(g, starts, length=4, prob="w", return_eids=True,
                                              random_seed=2)
    traces, eids = np_(traces), np_(eids)
    check_steps_are_edges(traces, eids, src, dst)
    by_node = transitions_by_node(traces, eids)
    assert by_node[2][7] == 0  # weight 0 is never taken
    for v in range(5):
        out_eids = np.flatnonzero(src == v)
        counts = [by_node[v][e] for e in out_eids]
        assert chi2_pvalue(counts, w[out_eids]) > P_MIN, (v, counts, w[out_eids])


def test_a_node_whose_weights_are_all_zero_ends_the_walk():
    g, src, dst = walk_graph()
    w = np.ones(len(src))
    w[src == 1] = 0
    g.edata["w"] = nc.tensor(w)
    traces, _ = nw.sampling.random_walk(g, [1, 0, 0, 0], length=5, prob="w", random_seed=0)
    traces = np_(traces)
    assert traces[0].tolist() == [1, -1, -1, -1, -1, -1]
    for tr in traces:
        hits = np.flatnonzero(tr == 1)
        assert all(k + 1 > 5 or tr[k + 1] == -1 for k in hits)


def test_the_uniform_and_weighted_paths_differ_only_in_the_law():
    # Equal weights give the uniform law (though not the same draws: weighted picks read a double).
    g, src, dst = walk_graph()
    g.edata["w"] = nc.ones(len(src))
    traces, eids, _ = nw.sampling.random_walk(g, np.repeat([0], 8000), length=1, prob="w",
                                              return_eids=True, random_seed=3)
    counts = Counter(np_(eids)[:, 0].tolist())
    assert chi2_pvalue([counts[e] for e in range(4)], [1, 1, 1, 1]) > P_MIN


# ----------------------------------------------------------------------------- restart


def ring(n=7):
    return nw.graph((np.arange(n), (np.arange(n) + 1) % n))


def test_restart_gives_geometric_walk_lengths():
    r, L, n = 0.3, 12, 20000
    traces, _ = nw.sampling.random_walk(ring(), np.zeros(n, np.int64), length=L, restart_prob=r,
                                        random_seed=4)
    steps = (np_(traces) != -1).sum(1) - 1
    observed = np.bincount(steps, minlength=L + 1)
    law = np.array([(1 - r) ** k * r for k in range(L)] + [(1 - r) ** L])
    assert abs(law.sum() - 1) < 1e-12
    # Pool the sparse tail so every cell expects at least 5.
    cut = int(np.flatnonzero(law * n >= 5)[-1])
    obs = np.append(observed[:cut], observed[cut:].sum())
    exp = np.append(law[:cut], law[cut:].sum())
    assert chi2_pvalue(obs, exp) > P_MIN, (observed, law * n)


def test_per_step_restart_probabilities():
    restart = np.array([0.0, 0.5, 0.0, 1.0, 0.0])
    traces, eids, _ = nw.sampling.random_walk(ring(), np.zeros(4000, np.int64), length=5,
                                              restart_prob=restart, return_eids=True, random_seed=5)
    steps = (np_(traces) != -1).sum(1) - 1
    # Ends before step 1 with probability 1/2, else surely before step 3.
    assert set(steps.tolist()) == {1, 3}
    assert chi2_pvalue(np.bincount(steps)[[1, 3]], [1, 1]) > P_MIN
    assert ((np_(eids) == -1) == (np_(traces)[:, 1:] == -1)).all()
    # Backend tensors are accepted too.
    t2, _ = nw.sampling.random_walk(ring(), np.zeros(4000, np.int64), length=5,
                                    restart_prob=nc.tensor(restart), random_seed=5)
    assert np.array_equal(np_(t2), np_(traces))


def test_restart_probability_zero_and_one():
    t0, _ = nw.sampling.random_walk(ring(), [0, 3], length=4, restart_prob=0.0, random_seed=0)
    assert np_(t0).tolist() == [[0, 1, 2, 3, 4], [3, 4, 5, 6, 0]]
    t1, _ = nw.sampling.random_walk(ring(), [0, 3], length=4, restart_prob=1.0, random_seed=0)
    assert np_(t1).tolist() == [[0, -1, -1, -1, -1], [3, -1, -1, -1, -1]]


# ----------------------------------------------------------------------------- metapaths


def user_item_graph():
    rng = np.random.default_rng(0)
    u = rng.integers(0, 30, 200)
    i = rng.integers(0, 20, 200)
    g = nw.heterograph({("user", "buys", "item"): (u, i), ("item", "bought-by", "user"): (i, u),
                        ("item", "similar", "item"): (rng.integers(0, 20, 50), rng.integers(0, 20, 50))},
                       {"user": 30, "item": 20})
    return g, u, i


def test_metapath_walks_follow_the_types():
    g, u, i = user_item_graph()
    sim_src, sim_dst = (np_(x) for x in g.edges(etype="similar"))
    metapath = ["buys", "similar", "bought-by", "buys"]
    traces, eids, types = nw.sampling.random_walk(g, np.arange(30), metapath=metapath, return_eids=True,
                                                  random_seed=6)
    traces, eids = np_(traces), np_(eids)
    assert [g.ntypes[t] for t in np_(types)] == ["user", "item", "item", "user", "item"]
    ends = {"buys": (u, i), "similar": (sim_src, sim_dst), "bought-by": (i, u)}
    for tr, ei in zip(traces, eids):
        for k, et in enumerate(metapath):
            if ei[k] == -1:
                assert (tr[k + 1:] == -1).all() and (ei[k:] == -1).all()
                break
            s, d = ends[et]
            assert s[ei[k]] == tr[k] and d[ei[k]] == tr[k + 1], (k, et)
    assert (eids[:, 0] != -1).sum() > 20  # most users bought something


def test_metapath_prob_applies_to_the_types_that_have_it():
    g, u, i = user_item_graph()
    w = np.zeros(len(u))
    w[np.arange(len(u)) % 2 == 0] = 1.0  # only even 'buys' edges
    g.edges["buys"].data["w"] = nc.tensor(w)
    traces, eids, _ = nw.sampling.random_walk(g, np.repeat(np.arange(30), 20), metapath=["buys", "bought-by"],
                                              prob="w", return_eids=True, random_seed=7)
    eids = np_(eids)
    taken = eids[:, 0][eids[:, 0] >= 0]
    assert len(taken) and (taken % 2 == 0).all()
    # 'bought-by' has no 'w': uniform, so odd eids appear there.
    back = eids[:, 1][eids[:, 1] >= 0]
    assert (back % 2 == 1).any()


# ----------------------------------------------------------------------------- node2vec


def n2v_graph():
    """Undirected, with a triangle, a square and a pendant, and distinct weights."""
    und = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 4), (3, 4), (3, 5), (1, 6), (4, 0)]
    src = np.array([a for a, b in und] + [b for a, b in und])
    dst = np.array([b for a, b in und] + [a for a, b in und])
    return src, dst


def node2vec_expected(src, dst, w, p, q, t, v):
    """The unnormalized node2vec weights of v's out-edges having come from t (one per edge)."""
    out = np.flatnonzero(src == v)
    t_out = set(dst[src == t].tolist())
    alpha = np.array([1 / p if dst[e] == t else (1.0 if dst[e] in t_out else 1 / q) for e in out])
    return out, w[out] * alpha


@pytest.mark.parametrize("p,q,weighted", [(0.25, 4.0, False), (4.0, 0.25, False), (0.5, 2.0, True),
                                          (1.0, 1.0, False), (0.01, 100.0, False), (1000.0, 50.0, True)])
def test_node2vec_transitions_match_the_formula(p, q, weighted):
    # (1000, 50): at a node none of whose neighbours neighbours the previous one, a candidate is
    # accepted with probability <= 0.02, so most such steps fall back to the exact row draw.
    src, dst = n2v_graph()
    g = nw.graph((src, dst), num_nodes=7)
    w = np.ones(len(src))
    if weighted:
        w = np.random.default_rng(1).uniform(0.5, 3.0, len(src))
        g.edata["w"] = nc.tensor(w)
    starts = np.repeat(np.arange(7), 1500)
    traces, eids = nw.sampling.node2vec_random_walk(g, starts, p, q, walk_length=3, return_eids=True,
                                                    prob="w" if weighted else None, random_seed=8)
    traces, eids = np_(traces), np_(eids)
    check_steps_are_edges(traces, eids, src, dst)
    # First steps follow w alone.
    first = transitions_by_node(traces[:, :2], eids[:, :1])
    for v in range(7):
        out = np.flatnonzero(src == v)
        assert chi2_pvalue([first[v][e] for e in out], w[out]) > P_MIN
    # Later steps, grouped by (previous node, current node), follow w * alpha.
    by_pair = defaultdict(Counter)
    for tr, ei in zip(traces, eids):
        for k in range(1, 3):
            by_pair[(tr[k - 1], tr[k])][ei[k]] += 1
    tested = 0
    for (t, v), counts in by_pair.items():
        out, expected = node2vec_expected(src, dst, w, p, q, t, v)
        if sum(counts.values()) < 50:
            continue
        assert chi2_pvalue([counts[e] for e in out], expected) > P_MIN, ((t, v), counts, expected)
        tested += 1
    assert tested >= 10


def test_node2vec_neighbour_test_follows_edge_direction():
    # t=0 -> v=1 -> {0, 2, 3}; edges 0 -> 2 exists, 0 -> 3 does not (only 3 -> 0).
    src = np.array([0, 1, 1, 1, 0, 3, 2, 3, 2])
    dst = np.array([1, 0, 2, 3, 2, 0, 1, 1, 0])
    g = nw.graph((src, dst), num_nodes=4)
    p, q = 0.5, 4.0
    traces = np_(nw.sampling.node2vec_random_walk(g, np.zeros(40000, np.int64), p, q, 2, random_seed=9))
    assert set(traces[:, 1].tolist()) == {1, 2}
    c = Counter(traces[traces[:, 1] == 1, 2].tolist())
    # back to 0: 1/p = 2; 2 is 0's out-neighbour: 1; 3 is not: 1/q = 0.25
    assert chi2_pvalue([c[0], c[2], c[3]], [2.0, 1.0, 0.25]) > P_MIN, c


def test_node2vec_on_unsorted_rows_and_int32():
    # Edges listed with descending destinations: CSR rows unsorted, so the walker sorts a copy.
    src, dst = n2v_graph()
    order = np.lexsort((-dst, src))
    g = nw.graph((src[order], dst[order]), num_nodes=7, idtype="int32")
    t = nw.sampling.node2vec_random_walk(g, np.repeat(np.arange(7), 1500), 0.25, 4.0, 3, random_seed=8)
    assert t.dtype == nc.int32
    traces = np_(t)
    by_pair = defaultdict(Counter)
    for tr in traces:
        for k in range(1, 3):
            by_pair[(tr[k - 1], tr[k])][tr[k + 1]] += 1
    s2, d2 = src[order], dst[order]
    for (t_, v), counts in by_pair.items():
        out, expected = node2vec_expected(s2, d2, np.ones(len(s2)), 0.25, 4.0, t_, v)
        nbrs = d2[out]
        if sum(counts.values()) < 50:
            continue
        assert chi2_pvalue([counts[x] for x in nbrs], expected) > P_MIN


# ----------------------------------------------------------------------------- PinSAGE


def pinsage_graph():
    rng = np.random.default_rng(3)
    items = rng.integers(0, 40, 400)
    users = rng.integers(0, 60, 400)
    g = nw.heterograph({("item", "bought-by", "user"): (items, users),
                        ("user", "buys", "item"): (users, items)}, {"item": 40, "user": 60})
    return g


def brute_force_pinsage(traces, seeds, R, T, hops, k):
    """Counts and top-k over random_walk's traces: nodes ending each traversal, seed excluded."""
    src, dst, counts = [], [], []
    for i, s in enumerate(seeds):
        c = Counter()
        for tr in traces[i * R:(i + 1) * R]:
            for t in range(1, T + 1):
                v = tr[t * hops]
                if v != -1 and v != s:
                    c[v] += 1
        top = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        src += [v for v, _ in top]
        dst += [s] * len(top)
        counts += [n for _, n in top]
    return src, dst, counts


@pytest.mark.parametrize("T,term", [(3, 0.5), (2, 0.0), (4, 1.0)])
def test_pinsage_equals_brute_force_over_random_walk_traces(T, term):
    g = pinsage_graph()
    seeds = np.array([0, 5, 5, 17, 39, 3])
    R, k = 30, 4
    sampler = nw.sampling.PinSAGESampler(g, "item", "user", T, term, R, k)
    frontier = sampler(seeds, random_seed=11)
    restart = np.zeros(2 * T)
    restart[2::2] = term
    traces, _ = nw.sampling.random_walk(g, np.repeat(seeds, R), metapath=["bought-by", "buys"] * T,
                                        restart_prob=restart, random_seed=11)
    src, dst, counts = brute_force_pinsage(np_(traces), seeds, R, T, 2, k)
    fs, fd = frontier.edges()
    assert np_(fs).tolist() == src
    assert np_(fd).tolist() == dst
    assert np_(frontier.edata["weights"]).tolist() == counts
    assert frontier.ntypes == ["item"] and frontier.num_nodes() == 40
    if term == 1.0:  # one traversal only: at most R visits per seed
        assert all(c <= R for c in counts)


def test_pinsage_counts_on_a_forced_graph():
    # Seed item 7 is bought only by user 1, who bought items 0 and 7: one traversal from 7 ends at
    # 0 or at the seed (not counted), each with probability 1/2. Item 0 is a hub of user 0's items.
    items = np.array([0, 1, 2, 3, 4, 5, 6, 0, 7])
    users = np.array([0, 0, 0, 0, 0, 0, 0, 1, 1])
    g = nw.heterograph({("item", "ib", "user"): (items, users), ("user", "bi", "item"): (users, items)})
    f = nw.sampling.PinSAGESampler(g, "item", "user", 1, 0.0, 400, 3, weight_column="visits")([7], random_seed=0)
    assert np_(f.edges()[0]).tolist() == [0] and np_(f.edges()[1]).tolist() == [7]
    c = int(np_(f.edata["visits"])[0])
    assert stats.binomtest(c, 400, 0.5).pvalue > P_MIN
    # Two traversals from item 1: the first ends at items 0..6 (uniform over user 0's 7 items); item
    # 0 is also reached through user 1 in the second, so it must come out on top.
    f = nw.sampling.PinSAGESampler(g, "item", "user", 2, 0.0, 400, 2)([1], random_seed=0)
    assert np_(f.edges()[0]).tolist()[0] == 0


def test_pinsage_homogeneous_order_is_count_then_id():
    # A 6-cycle in both directions: one hop from 0 reaches 1 or 5.
    n = 6
    src = np.concatenate([np.arange(n), (np.arange(n) + 1) % n])
    dst = np.concatenate([(np.arange(n) + 1) % n, np.arange(n)])
    g = nw.graph((src, dst))
    f = nw.sampling.RandomWalkNeighborSampler(g, 1, 0.0, 400, 1)([0, 3], random_seed=1)
    s, d = np_(f.edges()[0]).tolist(), np_(f.edges()[1]).tolist()
    assert d == [0, 3] and s[0] in (1, 5) and s[1] in (2, 4)
    # Few walks make many ties: within each seed, counts descend and equal counts list ids upwards.
    # (Seeds alternate, so a change of dst marks the next seed's group.)
    f2 = nw.sampling.RandomWalkNeighborSampler(g, 3, 0.0, 2, 10)(np.tile(np.arange(6), 3), random_seed=2)
    e_src, e_dst, w = np_(f2.edges()[0]), np_(f2.edges()[1]), np_(f2.edata["weights"])
    ties = 0
    bounds = np.r_[0, np.flatnonzero(np.diff(e_dst) != 0) + 1, len(e_dst)]
    for b, e in zip(bounds[:-1], bounds[1:]):
        pairs = list(zip((-w[b:e]).tolist(), e_src[b:e].tolist()))
        assert pairs == sorted(pairs)
        ties += len(pairs) - len(set(w[b:e].tolist()))
    assert ties > 0


# ----------------------------------------------------------------------------- determinism


@pytest.fixture
def restore_threads():
    before = nc.get_num_threads()
    yield
    nc.set_num_threads(before)


def test_same_output_at_one_and_two_threads(restore_threads):
    g = nw.rmat_graph(scale=10, num_edges=20000, seed=1)
    g.edata["w"] = nc.tensor(np.random.default_rng(0).uniform(0, 1, 20000))
    starts = np.arange(1024).repeat(4)
    hg = pinsage_graph()
    calls = [
        lambda: nw.sampling.random_walk(g, starts, length=20, return_eids=True, random_seed=5),
        lambda: nw.sampling.random_walk(g, starts, length=20, prob="w", restart_prob=0.1, return_eids=True,
                                        random_seed=5),
        lambda: nw.sampling.node2vec_random_walk(g, starts, 0.5, 2.0, 20, return_eids=True, random_seed=5),
        lambda: nw.sampling.node2vec_random_walk(g, starts, 0.5, 2.0, 20, prob="w", random_seed=5),
        lambda: nw.sampling.PinSAGESampler(hg, "item", "user", 3, 0.3, 20, 5)(np.arange(40).repeat(10),
                                                                             random_seed=5).edges(),
    ]
    for call in calls:
        nc.set_num_threads(1)
        one = call()
        nc.set_num_threads(2)
        two = call()
        one = one if isinstance(one, tuple) else (one,)
        two = two if isinstance(two, tuple) else (two,)
        for a, b in zip(one, two):
            assert np.array_equal(np_(a), np_(b))
    # And another seed changes the walks.
    a = nw.sampling.random_walk(g, starts, length=20, random_seed=5)[0]
    b = nw.sampling.random_walk(g, starts, length=20, random_seed=6)[0]
    assert not np.array_equal(np_(a), np_(b))


def test_without_a_seed_the_default_generator_decides():
    g = ring()
    nc.manual_seed(3)
    a = np_(nw.sampling.random_walk(g, [0] * 50, length=5, restart_prob=0.5)[0])
    nc.manual_seed(3)
    b = np_(nw.sampling.random_walk(g, [0] * 50, length=5, restart_prob=0.5)[0])
    c = np_(nw.sampling.random_walk(g, [0] * 50, length=5, restart_prob=0.5)[0])
    assert np.array_equal(a, b) and not np.array_equal(a, c)


# ----------------------------------------------------------------------------- backends and dtypes


@pytest.mark.parametrize("idtype", ["int32", "int64"])
def test_pytorch_backend_returns_torch_tensors_of_the_same_walks(idtype):
    torch = pytest.importorskip("torch")
    src, dst = n2v_graph()
    starts = np.arange(7).repeat(3)
    g = nw.graph((src, dst), num_nodes=7, idtype=idtype)
    g.edata["w"] = nc.tensor(np.linspace(0.1, 2.0, len(src)))
    native = [nw.sampling.random_walk(g, starts, length=5, prob="w", return_eids=True, random_seed=3),
              (nw.sampling.node2vec_random_walk(g, starts, 2.0, 0.5, 5, random_seed=3),)]
    nw.set_backend("pytorch")
    gt = nw.graph((src, dst), num_nodes=7, idtype=idtype)
    gt.edata["w"] = torch.linspace(0.1, 2.0, len(src), dtype=torch.float64)
    torch_out = [nw.sampling.random_walk(gt, torch.tensor(starts), length=5, prob="w", return_eids=True,
                                         random_seed=3),
                 (nw.sampling.node2vec_random_walk(gt, starts, 2.0, 0.5, 5, random_seed=3),)]
    for n_res, t_res in zip(native, torch_out):
        for a, b in zip(n_res, t_res):
            assert isinstance(b, torch.Tensor)
            assert np.array_equal(np_(a), b.numpy())
    traces = torch_out[0][0]
    assert traces.dtype == getattr(torch, idtype) and torch_out[0][2].dtype == torch.int64
    f = nw.sampling.RandomWalkNeighborSampler(gt, 2, 0.2, 10, 2)(torch.tensor([0, 1]), random_seed=0)
    assert isinstance(f.edata["weights"], torch.Tensor) and f.edata["weights"].dtype == torch.int64


def test_length_zero_walks():
    g, src, dst = walk_graph()
    traces, eids, types = nw.sampling.random_walk(g, [3, 4], length=0, return_eids=True, random_seed=0)
    assert np_(traces).tolist() == [[3], [4]] and np_(eids).shape == (2, 0) and np_(types).tolist() == [0]
    t = nw.sampling.node2vec_random_walk(g, [1], 1.0, 1.0, 0)
    assert np_(t).tolist() == [[1]]
    empty, _ = nw.sampling.random_walk(g, np.array([], np.int64), length=3, random_seed=0)
    assert np_(empty).shape == (0, 4)


# ----------------------------------------------------------------------------- errors


def test_bad_inputs_raise_named_errors():
    g, src, dst = walk_graph()
    rw, n2v = nw.sampling.random_walk, nw.sampling.node2vec_random_walk
    with pytest.raises(IndexError, match=r"nodes\[1\] = 6 is out of range"):
        rw(g, [0, 6], length=2)
    with pytest.raises(IndexError, match=r"nodes\[0\] = -1"):
        n2v(g, [-1], 1.0, 1.0, 2)
    with pytest.raises(TypeError, match="nodes must hold integer ids"):
        rw(g, [0.5], length=2)
    with pytest.raises(ValueError, match="length must be >= 0, got -1"):
        rw(g, [0], length=-1)
    with pytest.raises(ValueError, match="walk_length must be >= 0, got -2"):
        n2v(g, [0], 1.0, 1.0, -2)
    with pytest.raises(ValueError, match="either metapath or length"):
        rw(g, [0])
    with pytest.raises(ValueError, match="exclusive"):
        rw(g, [0], metapath=["_E"], length=1)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="p must be a finite number > 0"):
            n2v(g, [0], bad, 1.0, 2)
        with pytest.raises(ValueError, match="q must be a finite number > 0"):
            n2v(g, [0], 1.0, bad, 2)
    with pytest.raises(TypeError, match="p must be a number"):
        n2v(g, [0], "1", 1.0, 2)
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="restart_prob must be in"):
            rw(g, [0], length=2, restart_prob=bad)
    with pytest.raises(ValueError, match=r"restart_prob\[1\] must be in \[0, 1\], got 2"):
        rw(g, [0], length=2, restart_prob=np.array([0.1, 2.0]))
    with pytest.raises(ValueError, match=r"one probability per step \(3\), got 2"):
        rw(g, [0], length=3, restart_prob=[0.1, 0.2])

    w = np.ones(len(src))
    w[3] = -1.0
    g.edata["neg"] = nc.tensor(w)
    w2 = np.ones(len(src))
    w2[5] = np.nan
    g.edata["nan"] = nc.tensor(w2)
    g.edata["int"] = nc.tensor(np.ones(len(src), np.int64))
    g.edata["wide"] = nc.tensor(np.ones((len(src), 2)))
    with pytest.raises(ValueError, match="finite non-negative probabilities, got -1 for edge 3"):
        rw(g, [0], length=2, prob="neg")
    with pytest.raises(ValueError, match="for edge 5"):
        n2v(g, [0], 1.0, 1.0, 2, prob="nan")
    with pytest.raises(TypeError, match="float32 or float64"):
        rw(g, [0], length=2, prob="int")
    with pytest.raises(ValueError, match=r"one value per edge \(shape \[14\]\), got shape \[14, 2\]"):
        rw(g, [0], length=2, prob="wide")
    with pytest.raises(ValueError, match="no edge type of the walk has a feature 'missing'"):
        rw(g, [0], length=2, prob="missing")
    with pytest.raises(TypeError, match="prob must be the name of an edge feature"):
        rw(g, [0], length=2, prob=np.ones(len(src)))

    hg, u, i = user_item_graph()
    with pytest.raises(ValueError, match="metapath must be given"):
        rw(hg, [0], length=2)
    with pytest.raises(ValueError, match=r"metapath\[1\] .*'bought-by'.* leaves from node type 0 but "
                                         r"metapath\[0\] .*'bought-by'.* arrives at node type 1"):
        rw(hg, [0], metapath=["bought-by", "bought-by"])
    with pytest.raises(ValueError, match="unknown edge type 'nope'"):
        rw(hg, [0], metapath=["buys", "nope"])
    with pytest.raises(IndexError, match=r"nodes\[0\] = 25 is out of range: there are 20 source nodes"):
        rw(hg, [25], metapath=["bought-by"])  # items: 20
    with pytest.raises(ValueError, match="one node type and one edge type"):
        n2v(hg, [0], 1.0, 1.0, 2)

    with pytest.raises(ValueError, match="end at the node type it starts from"):
        nw.sampling.RandomWalkNeighborSampler(hg, 1, 0.5, 1, 1, metapath=["buys"])
    with pytest.raises(ValueError, match="exactly one edge type 'user' -> 'game'"):
        nw.sampling.PinSAGESampler(hg, "user", "game", 1, 0.5, 1, 1)
    with pytest.raises(ValueError, match="termination_prob must be in"):
        nw.sampling.PinSAGESampler(pinsage_graph(), "item", "user", 1, 1.5, 1, 1)
    for name, args in (("num_traversals", (0, 0.5, 1, 1)), ("num_random_walks", (1, 0.5, 0, 1)),
                       ("num_neighbors", (1, 0.5, 1, 0))):
        with pytest.raises(ValueError, match=f"{name} must be >= 1"):
            nw.sampling.PinSAGESampler(pinsage_graph(), "item", "user", *args)
    with pytest.raises(TypeError, match="num_neighbors must be an int"):
        nw.sampling.PinSAGESampler(pinsage_graph(), "item", "user", 1, 0.5, 1, 2.5)
    sampler = nw.sampling.PinSAGESampler(pinsage_graph(), "item", "user", 1, 0.5, 1, 1)
    with pytest.raises(IndexError, match=r"seed_nodes\[1\] = 40 is out of range"):
        sampler([0, 40])
    with pytest.raises(ValueError, match="random_seed must be an int in"):
        sampler([0], random_seed=-1)
