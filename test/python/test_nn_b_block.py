"""Layers on a message-flow block: a graph marked ``is_block`` whose destination nodes are its first
source nodes. Until nodeweave has a block type, a bipartite graph carrying the mark stands in; a
single feature tensor on it must give what the explicit ``(feat, feat[:num_dst])`` pair gives."""

import numpy as np
import pytest

import nodeweave as nw
import nodeweave.core as nc
from nodeweave.nn import NNConv, RelGraphConv, SAGEConv

from nn_b_helpers import bipartite_graph


def _block(rng):
    g, src, dst = bipartite_graph(rng, n_src=7, n_dst=3, e=12, isolated=(2,))
    g.is_block = True
    return g, src, dst


def _same(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("agg", ["mean", "gcn", "pool", "lstm"])
@pytest.mark.parametrize("in_feats", [4, 2])  # fc_neigh before / after aggregation for mean and gcn
def test_sage_on_block(agg, in_feats):
    rng = np.random.default_rng(0)
    g, _, _ = _block(rng)
    conv = SAGEConv(in_feats, 3, agg).double()
    x = nc.tensor(rng.standard_normal((7, in_feats)), requires_grad=True)
    out = conv(g, x)
    assert tuple(out.shape) == (3, 3)
    _same(out, conv(g, (x, x[:3])))
    out.sum().backward()
    assert x.grad is not None and tuple(x.grad.shape) == (7, in_feats)


def test_nnconv_and_relgraphconv_on_block():
    rng = np.random.default_rng(1)
    g, src, _ = _block(rng)
    x = nc.tensor(rng.standard_normal((7, 4)))
    nn_conv = NNConv(4, 2, nc.nn.Linear(3, 8), "mean", residual=True).double()
    e = nc.tensor(rng.standard_normal((len(src), 3)))
    _same(nn_conv(g, x, e), nn_conv(g, (x, x[:3]), e))
    rel = RelGraphConv(4, 2, 3, "bdd", 2).double()
    et = nc.tensor(rng.integers(0, 3, len(src)))
    out = rel(g, x, et)
    _same(out, rel(g, (x, x[:3]), et))
    # The self loop reads the first num_dst rows, as DGL's feat[:g.num_dst_nodes()].
    no_loop = RelGraphConv(4, 2, 3, "bdd", 2, self_loop=False).double()
    no_loop.load_state_dict({k: v for k, v in rel.state_dict().items() if k != "loop_weight"})
    _same(out, no_loop(g, x, et) + x[:3] @ rel.loop_weight)


def test_block_feature_rows_are_checked_against_source_nodes():
    rng = np.random.default_rng(2)
    g, _, _ = _block(rng)
    with pytest.raises(ValueError, match="feat must have one row per source node"):
        SAGEConv(2, 2, "mean")(g, nc.zeros(3, 2))


def test_a_bipartite_graph_without_the_mark_needs_a_pair():
    rng = np.random.default_rng(3)
    g, _, _ = bipartite_graph(rng, n_src=7, n_dst=3)
    with pytest.raises(ValueError, match="pair"):
        SAGEConv(2, 2, "mean")(g, nc.zeros(7, 2))
    assert not getattr(nw.graph(([0], [1])), "is_block", False)
