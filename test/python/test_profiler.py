"""The op profiler: counts and times dispatched ops, counts nested ops once, and resets."""

import pytest

import nodeweave as nw
import nodeweave.core as nc


def test_profile_counts_forward_backward_and_inplace_ops():
    x = nc.randn(32, 16, requires_grad=True)
    w = nc.randn(16, 8, requires_grad=True)
    with nc.profiler.profile() as prof:
        y = (x @ w).relu().sum()
        y.backward()
        with nc.no_grad():
            w.sub_(w.grad * 0.1)
    t = prof.table()
    assert t["mm"].calls >= 3  # forward, and the two input gradients
    assert t["relu"].calls == 1
    assert t["sub"].calls == 1  # the in-place update counts under its op
    assert all(s.seconds >= 0 for s in t.values())
    assert prof.total() == pytest.approx(sum(s.seconds for s in t.values()))
    assert prof.total(["mm"]) == pytest.approx(t["mm"].seconds)
    assert "mm" in str(prof)


def test_profile_graph_kernels_and_reset():
    g = nw.graph(([0, 1, 2], [1, 2, 0]))
    x = nc.randn(3, 4, requires_grad=True)
    with nc.profiler.profile() as prof:
        nw.ops.copy_u_sum(g, x).sum().backward()
    assert prof.table()["gspmm"].calls >= 2  # forward, and backward on the reversed graph
    with nc.profiler.profile() as again:
        x + 1
    assert "gspmm" not in again.table() and again.table()["add"].calls == 1
    # outside a block nothing is recorded
    x * 2
    assert nc._C._profiler_table() == []


def test_profile_blocks_do_not_nest():
    with nc.profiler.profile():
        with pytest.raises(RuntimeError, match="do not nest"):
            with nc.profiler.profile():
                pass
    assert not nc._C._profiler_enabled()
