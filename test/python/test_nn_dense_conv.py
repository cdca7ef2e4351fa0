"""DenseGraphConv, DenseSAGEConv and DenseChebConv against their formulas written in torch float64
(weighted and 0/1 adjacencies, square and bipartite), values and the gradients of every input and
parameter; their equality with the sparse layers (GraphConv, SAGEConv 'gcn', ChebConv) on the
adjacency of a graph; lambda_max found by an eigensolver; bad inputs."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import ChebConv, DenseChebConv, DenseGraphConv, DenseSAGEConv, GraphConv, SAGEConv

from nn_check import check, fd_check, randomize

TF = torch.float64


def rand_adj(rng, nd, ns, weighted=True, p=0.45):
    a = (rng.random((nd, ns)) < p).astype(float)
    a[rng.integers(nd), :] = 0.0  # a destination without in-edges
    return a * rng.uniform(0.2, 2.0, a.shape) if weighted else a


def graph_of(a):
    dst, src = np.nonzero(a)
    return nw.graph((src, dst), num_nodes=a.shape[0])


# ----------------------------------------------------------------------------- DenseGraphConv


def ref_dense_gcn(p, A, x, norm):
    deg_dst = A.sum(1).clamp(min=1)
    deg_src = A.sum(0).clamp(min=1)
    if norm == "both":
        S = deg_dst.pow(-0.5)[:, None] * A * deg_src.pow(-0.5)[None, :]
    elif norm == "right":
        S = A / deg_dst[:, None]
    else:
        S = A
    out = S @ x @ p["weight"]
    return out + p["bias"] if "bias" in p else out


@pytest.mark.parametrize("norm", ["both", "right", "none"])
@pytest.mark.parametrize("sizes", [(5, 3), (3, 5)], ids=["project-first", "aggregate-first"])
@pytest.mark.parametrize("shape", [(7, 7), (4, 7)], ids=["square", "bipartite"])
def test_dense_graph_conv(rng, norm, sizes, shape):
    conv = randomize(DenseGraphConv(*sizes, norm=norm), rng)
    inputs = {"adj": rand_adj(rng, *shape), "x": rng.standard_normal((shape[1], sizes[0]))}
    check(conv, lambda m, adj, x: m(adj, x), lambda p, adj, x: ref_dense_gcn(p, adj, x, norm), inputs, rng)


def test_dense_graph_conv_no_bias_activation_and_integer_adjacency(rng):
    conv = randomize(DenseGraphConv(4, 3, bias=False, activation=nc.tanh), rng)
    assert conv.bias is None and [n for n, _ in conv.named_parameters()] == ["weight"]
    a = rand_adj(rng, 6, 6, weighted=False)
    x = rng.standard_normal((6, 4))
    for adj in (nc.tensor(a.astype(np.int64)), nc.tensor(a.astype(bool))):
        got = conv(adj, nc.tensor(x)).detach().numpy()
        want = torch.tanh(ref_dense_gcn({"weight": torch.tensor(conv.weight.detach().numpy())},
                                        torch.tensor(a), torch.tensor(x), "both"))
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm", ["both", "right", "none"])
def test_dense_graph_conv_equals_graph_conv(rng, norm):
    a = rand_adj(rng, 7, 7, weighted=False)
    sparse = randomize(GraphConv(4, 3, norm=norm, allow_zero_in_degree=True), rng)
    dense = DenseGraphConv(4, 3, norm=norm).double()
    dense.load_state_dict(sparse.state_dict())
    x = nc.tensor(rng.standard_normal((7, 4)))
    np.testing.assert_allclose(dense(nc.tensor(a), x).detach().numpy(),
                               sparse(graph_of(a), x).detach().numpy(), rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- DenseSAGEConv


def ref_dense_sage(p, A, xs, xd):
    h = (A @ xs + xd) / (A.sum(1, keepdim=True) + 1)
    out = h @ p["fc.weight"].T
    return out + p["fc.bias"] if "fc.bias" in p else out


@pytest.mark.parametrize("bias", [True, False])
def test_dense_sage_conv_square(rng, bias):
    conv = randomize(DenseSAGEConv(5, 3, bias=bias), rng)
    inputs = {"adj": rand_adj(rng, 7, 7), "x": rng.standard_normal((7, 5))}
    check(conv, lambda m, adj, x: m(adj, x), lambda p, adj, x: ref_dense_sage(p, adj, x, x), inputs, rng)


def test_dense_sage_conv_pair_activation_and_norm(rng):
    ln = nc.nn.LayerNorm(3)
    conv = randomize(DenseSAGEConv(4, 3, activation=nc.relu, norm=ln, feat_drop=0.5), rng).eval()
    inputs = {"adj": rand_adj(rng, 4, 6), "xs": rng.standard_normal((6, 4)), "xd": rng.standard_normal((4, 4))}

    def ref(p, adj, xs, xd):
        h = torch.relu(ref_dense_sage(p, adj, xs, xd))
        return torch.nn.functional.layer_norm(h, (3,), p["_norm.weight"], p["_norm.bias"])

    check(conv, lambda m, adj, xs, xd: m(adj, (xs, xd)), ref, inputs, rng)
    conv.train()
    x = nc.tensor(inputs["xs"])
    assert not np.allclose(conv(nc.tensor(inputs["adj"]), (x, x[:4])).detach().numpy(),
                           conv.eval()(nc.tensor(inputs["adj"]), (x, x[:4])).detach().numpy())


def test_dense_sage_conv_equals_sage_conv_gcn(rng):
    a = rand_adj(rng, 6, 6, weighted=False)
    sparse = randomize(SAGEConv(4, 2, "gcn"), rng)
    dense = DenseSAGEConv(4, 2).double()
    with nc.no_grad():
        dense.fc.weight.copy_(sparse.fc_neigh.weight)
        dense.fc.bias.copy_(sparse.bias)
    x = nc.tensor(rng.standard_normal((6, 4)))
    np.testing.assert_allclose(dense(nc.tensor(a), x).detach().numpy(), sparse(graph_of(a), x).detach().numpy(),
                               rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- DenseChebConv


def ref_dense_cheb(p, A, x, k, lam):
    n = A.shape[0]
    d = A.sum(1).clamp(min=1).pow(-0.5)
    L = torch.eye(n, dtype=TF) - d[:, None] * A * d[None, :]
    Lh = 2.0 * L / lam - torch.eye(n, dtype=TF)
    Ts = [torch.eye(n, dtype=TF), Lh]  # Chebyshev polynomials of the matrix itself
    while len(Ts) < k:
        Ts.append(2 * Lh @ Ts[-1] - Ts[-2])
    out = sum(Ts[t] @ x @ p["W"][t] for t in range(k))
    return out + p["bias"] if "bias" in p else out


@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("bias", [True, False])
def test_dense_cheb_conv(rng, k, bias):
    conv = randomize(DenseChebConv(3, 2, k, bias=bias), rng)
    a = rand_adj(rng, 6, 6)
    inputs = {"adj": a + a.T, "x": rng.standard_normal((6, 3))}
    check(conv, lambda m, adj, x: m(adj, x, lambda_max=1.7), lambda p, adj, x: ref_dense_cheb(p, adj, x, k, 1.7),
          inputs, rng)


def test_dense_cheb_conv_lambda_max_forms_and_eigensolver(rng):
    conv = randomize(DenseChebConv(3, 2, 3), rng)
    a = rand_adj(rng, 6, 6)
    a = a + a.T
    x = rng.standard_normal((6, 3))
    p = {k: torch.tensor(v.detach().numpy()) for k, v in conv.named_parameters()}
    d = np.maximum(a.sum(1), 1) ** -0.5
    lam = np.linalg.eigvalsh(np.eye(6) - d[:, None] * a * d[None, :]).max()
    want = ref_dense_cheb(p, torch.tensor(a), torch.tensor(x), 3, lam).numpy()
    for given in (None, float(lam), [float(lam)], nc.tensor(np.array([lam]))):
        got = conv(nc.tensor(a), nc.tensor(x), lambda_max=given).detach().numpy()
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_dense_cheb_conv_equals_cheb_conv(rng):
    a = rand_adj(rng, 7, 7, weighted=False)
    a = np.maximum(a, a.T)
    sparse = randomize(ChebConv(3, 2, 3, activation=None), rng)
    dense = DenseChebConv(3, 2, 3).double()
    with nc.no_grad():  # ChebConv's one Linear holds the k blocks side by side
        dense.W.copy_(sparse.linear.weight.transpose(0, 1).reshape(3, 3, 2))
        dense.bias.copy_(sparse.linear.bias)
    x = nc.tensor(rng.standard_normal((7, 3)))
    np.testing.assert_allclose(dense(nc.tensor(a), x, 1.5).detach().numpy(),
                               sparse(graph_of(a), x, lambda_max=[1.5]).detach().numpy(), rtol=1e-10, atol=1e-12)


def test_dense_init():
    cheb = DenseChebConv(30, 20, 3)
    w = cheb.W.detach().numpy()
    assert w.shape == (3, 30, 20) and float(cheb.bias.abs().max().item()) == 0.0
    # each slice Xavier-normal with the ReLU gain: std sqrt(2) * sqrt(2 / 50)
    assert 0.7 < w.std() / np.sqrt(2 * 2 / 50) < 1.3
    gcn = DenseGraphConv(20, 10)
    assert float(gcn.weight.abs().max().item()) <= np.sqrt(6 / 30) and float(gcn.bias.abs().max().item()) == 0.0


FD_CASES = {
    "DenseGraphConv": (lambda: DenseGraphConv(3, 2), lambda m, adj, x: m(adj, x)),
    "DenseSAGEConv": (lambda: DenseSAGEConv(3, 2), lambda m, adj, x: m(adj, x)),
    "DenseChebConv": (lambda: DenseChebConv(3, 2, 3), lambda m, adj, x: m(adj, x, 1.3)),
}


@pytest.mark.parametrize("name", sorted(FD_CASES))
def test_dense_gradients_match_finite_differences(rng, name):
    make, run = FD_CASES[name]
    module = randomize(make(), rng, scale=0.8)
    a = rand_adj(rng, 5, 5)
    fd_check(module, run, {"adj": a + a.T, "x": rng.standard_normal((5, 3))}, rng)


def test_dense_bad_inputs_name_the_argument():
    x = nc.ones(3, 4)
    with pytest.raises(ValueError, match="norm must be 'both', 'right' or 'none', got 'left'"):
        DenseGraphConv(4, 2, norm="left")
    with pytest.raises(ValueError, match=r"adj has 2 columns \(source nodes\) but feat has 3 rows"):
        DenseGraphConv(4, 2)(nc.ones(3, 2), x)
    with pytest.raises(ValueError, match="adj must be a 2-D"):
        DenseGraphConv(4, 2)(nc.ones(3), x)
    with pytest.raises(TypeError, match="adj must be a dense"):
        DenseGraphConv(4, 2)([[1]], x)
    with pytest.raises(ValueError, match="feat has 4 features, expected in_feats=5"):
        DenseGraphConv(5, 2)(nc.ones(3, 3), x)
    with pytest.raises(TypeError, match="feat must be a floating point tensor"):
        DenseGraphConv(4, 2)(nc.ones(3, 3), nc.ones(3, 4, dtype=nc.int64))
    with pytest.raises(ValueError, match=r"adj must be square \(N, N\) when feat is one tensor"):
        DenseSAGEConv(4, 2)(nc.ones(2, 3), x)
    with pytest.raises(ValueError, match=r"adj has 2 rows \(destination nodes\) but feat\[1\] has 3 rows"):
        DenseSAGEConv(4, 2)(nc.ones(2, 3), (x, x))
    with pytest.raises(ValueError, match="adj must be square"):
        DenseChebConv(4, 2, 2)(nc.ones(2, 3), x)
    with pytest.raises(ValueError, match="k must be a positive int, got 0"):
        DenseChebConv(4, 2, 0)
    with pytest.raises(ValueError, match="lambda_max must be one number"):
        DenseChebConv(4, 2, 2)(nc.ones(3, 3), x, lambda_max=nc.ones(2))
    with pytest.raises(TypeError, match="lambda_max must be a number"):
        DenseChebConv(4, 2, 2)(nc.ones(3, 3), x, lambda_max="2")
