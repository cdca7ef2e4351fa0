"""Shared helpers of the test_nn_b_* tests: random graphs, and comparing a nodeweave layer with a
torch float64 autograd evaluation of its dense formula (values, then gradients of every input and
parameter under one random cotangent)."""

import numpy as np
import torch

import nodeweave as nw
import nodeweave.core as nc

TOL = dict(rtol=1e-9, atol=1e-10)


def rand_edges(rng, n_src, n_dst, n_edges, isolated=()):
    """Random edges (with repeats) whose destinations avoid ``isolated``."""
    dst_pool = np.array([v for v in range(n_dst) if v not in set(isolated)])
    src = rng.integers(0, n_src, n_edges)
    dst = dst_pool[rng.integers(0, len(dst_pool), n_edges)]
    return src.astype(np.int64), dst.astype(np.int64)


def homo_graph(rng, n=7, e=16, isolated=(2,)):
    src, dst = rand_edges(rng, n, n, e, isolated)
    return nw.graph((src, dst), num_nodes=n), src, dst


def bipartite_graph(rng, n_src=6, n_dst=4, e=12, isolated=(1,)):
    src, dst = rand_edges(rng, n_src, n_dst, e, isolated)
    g = nw.heterograph({("_U", "_E", "_V"): (src, dst)}, num_nodes_dict={"_U": n_src, "_V": n_dst})
    return g, src, dst


def batched_graph(rng, sizes=(4, 1, 5), edges=(6, 0, 9)):
    graphs, srcs, dsts, off = [], [], [], 0
    for n, e in zip(sizes, edges):
        s, d = (rand_edges(rng, n, n, e) if e else (np.zeros(0, np.int64), np.zeros(0, np.int64)))
        graphs.append(nw.graph((s, d), num_nodes=n))
        srcs.append(s + off)
        dsts.append(d + off)
        off += n
    return nw.batch(graphs), np.concatenate(srcs), np.concatenate(dsts)


def dense_adj(src, dst, n_src, n_dst, w=None):
    """A[v, u] = sum of weights of edges u -> v (torch float64)."""
    A = torch.zeros(n_dst, n_src, dtype=torch.float64)
    vals = torch.ones(len(src), dtype=torch.float64) if w is None else w
    return A.index_put((torch.tensor(dst), torch.tensor(src)), vals, accumulate=True)


def leaf(a):
    """(nodeweave leaf, torch leaf) with the values of NumPy array ``a``, both requiring grad."""
    a = np.asarray(a, dtype=np.float64)
    return nc.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def torch_params(module):
    """Copies of ``module``'s parameters as torch float64 leaves, by name."""
    return {k: torch.tensor(p.detach().numpy(), requires_grad=True) for k, p in module.named_parameters()}


def compare(out_nw, out_th, pairs, rng, tol=TOL):
    """Asserts equal values, backprops one random cotangent through both and compares the
    gradients of every ``(name, nodeweave leaf, torch leaf)`` in ``pairs`` (a missing nodeweave
    gradient must be a zero torch gradient)."""
    out_th_d = out_th.detach().numpy()
    assert tuple(out_nw.shape) == out_th_d.shape, (out_nw.shape, out_th_d.shape)
    np.testing.assert_allclose(out_nw.detach().numpy(), out_th_d, **tol)
    cot = rng.standard_normal(out_th_d.shape)
    (out_nw * nc.tensor(cot)).sum().backward()
    (out_th * torch.tensor(cot)).sum().backward()
    for name, a, b in pairs:
        gb = b.grad.numpy() if b.grad is not None else np.zeros(tuple(b.shape))
        ga = a.grad.numpy() if a.grad is not None else np.zeros(tuple(a.shape))
        np.testing.assert_allclose(ga, gb, err_msg=f"gradient of {name}", **tol)


def param_pairs(module, th_params):
    ours = dict(module.named_parameters())
    assert set(ours) == set(th_params)
    return [(k, ours[k], th_params[k]) for k in sorted(ours)]


def segments(sizes):
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    return [slice(off[i], off[i + 1]) for i in range(len(sizes))]
