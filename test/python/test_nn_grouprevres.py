"""GroupRevRes against the grouped reversible residual written densely in torch float64 (mean
aggregation by an adjacency matrix, one weight per group): values and the gradients of the input
and every group's parameters; the inverse; extra arguments split per group; independent copies;
gradients by finite differences; bad inputs."""

import numpy as np
import pytest
import torch

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import GraphConv, GroupRevRes

from nn_check import check, fd_check, randomize

TF = torch.float64


def graph_and_mean_matrix(rng, n, p=0.4):
    m = rng.random((n, n)) < p
    np.fill_diagonal(m, True)        # every node has an in-edge
    dst, src = np.nonzero(m)
    return nw.graph((src, dst), num_nodes=n), torch.tensor(m / m.sum(1, keepdims=True))


def ref_revres(p, x, P, groups, scales=None):
    """X_0' = sum_{i >= 2} X_i; X_i' = X_i + f_i(X_{i-1}') with f_i(y) = (P y W_i + b_i) [* scale_i]."""
    xs = torch.chunk(x, groups, -1)
    y = sum(xs[1:])
    out = []
    for i in range(groups):
        f = P @ y @ p[f"gnn_modules.{i}.weight"] + p[f"gnn_modules.{i}.bias"]
        if scales is not None:
            f = f * torch.chunk(scales, groups, -1)[i]
        y = xs[i] + f
        out.append(y)
    return torch.cat(out, -1)


@pytest.mark.parametrize("groups", [2, 3])
def test_group_rev_res(rng, groups):
    g, P = graph_and_mean_matrix(rng, 7)
    block = randomize(GroupRevRes(GraphConv(2, 2, norm="right"), groups), rng)
    check(block, lambda m, x: m(g, x), lambda p, x: ref_revres(p, x, P, groups),
          {"x": rng.standard_normal((7, 2 * groups))}, rng)


class Scaled(nc.nn.Module):
    """A GNN module with an extra argument: GraphConv's output times a per-node scale."""

    def __init__(self):
        super().__init__()
        self.conv = GraphConv(2, 2, norm="right")

    def forward(self, g, x, scale):
        return self.conv(g, x) * scale


def test_group_rev_res_splits_extra_arguments(rng):
    g, P = graph_and_mean_matrix(rng, 6)
    block = randomize(GroupRevRes(Scaled(), 3), rng)
    inputs = {"x": rng.standard_normal((6, 6)), "s": rng.standard_normal((6, 6))}
    check(block, lambda m, x, s: m(g, x, s),
          lambda p, x, s: ref_revres({k.replace(".conv", ""): v for k, v in p.items()}, x, P, 3, s), inputs, rng)
    y = block(g, nc.tensor(inputs["x"]), nc.tensor(inputs["s"]))
    np.testing.assert_allclose(block.inverse(g, y, nc.tensor(inputs["s"])).detach().numpy(), inputs["x"],
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("groups", [2, 4])
def test_group_rev_res_inverse(rng, groups):
    g, _ = graph_and_mean_matrix(rng, 8)
    block = randomize(GroupRevRes(GraphConv(3, 3, activation=nc.tanh), groups), rng)
    x = rng.standard_normal((8, 3 * groups))
    y = block(g, nc.tensor(x))
    np.testing.assert_allclose(block.inverse(g, y).detach().numpy(), x, rtol=1e-12, atol=1e-12)
    x_t = nc.tensor(x)
    block(g, x_t)
    np.testing.assert_array_equal(x_t.numpy(), x)   # the input stays usable (DGL frees it)


def test_group_rev_res_copies_are_independent():
    conv = GraphConv(2, 2)
    block = GroupRevRes(conv, 3)
    assert block.gnn_modules[0] is conv
    assert [n for n, _ in block.named_parameters()] == [f"gnn_modules.{i}.{w}" for i in range(3)
                                                        for w in ("weight", "bias")]
    with nc.no_grad():
        block.gnn_modules[1].weight.fill_(5.0)
    assert float(conv.weight.max().item()) < 5.0 and float(block.gnn_modules[2].weight.max().item()) < 5.0


def test_group_rev_res_gradients_match_finite_differences(rng):
    g, _ = graph_and_mean_matrix(rng, 5)
    block = randomize(GroupRevRes(GraphConv(2, 2, activation=nc.tanh), 3), rng, scale=0.8)
    fd_check(block, lambda m, x: m(g, x), {"x": rng.standard_normal((5, 6))}, rng)


def test_group_rev_res_bad_inputs_name_the_argument():
    g = nw.graph(([0, 1], [1, 0]))
    with pytest.raises(ValueError, match="groups must be at least 2"):
        GroupRevRes(GraphConv(2, 2), 1)
    with pytest.raises(TypeError, match="gnn_module must be a .*Module, got function"):
        GroupRevRes(lambda g, x: x, 2)
    with pytest.raises(ValueError, match=r"the last dimension of x \(5\) must be divisible by groups=2"):
        GroupRevRes(GraphConv(2, 2), 2)(g, nc.ones(2, 5))
    with pytest.raises(ValueError, match=r"the last dimension of args\[0\] \(3\) must be divisible by groups=2"):
        GroupRevRes(Scaled(), 2)(g, nc.ones(2, 4), nc.ones(2, 3))
